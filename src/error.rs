//! Errors, grouped by who is at fault.

use alloc::{string::String, vec::Vec};
use core::fmt;

use crate::catalog::ToolRejection;
use crate::id::RequestId;
use crate::rpc_error::RpcError;
use crate::version::ProtocolVersion;

/// Everything that can go wrong, grouped by who is at fault.
///
/// - [`Error::Malformed`]: the peer's bytes are not one valid JSON text.
/// - [`Error::Protocol`]: the peer sent valid JSON that breaks JSON-RPC or MCP.
/// - [`Error::Incompatible`]: the peer is valid but cannot work with this client.
/// - [`Error::Rpc`]: the peer refused a request with a JSON-RPC error.
/// - [`Error::Http`]: over Streamable HTTP, the server's HTTP answer carried no answer to
///   the request (a status such as 401, a stream that broke, a session it ended).
/// - [`Error::Misuse`]: the application asked for something this crate refuses; nothing
///   was sent.
/// - [`Error::Timeout`]: an operation's deadline passed here.
/// - [`Error::Closed`]: the peer's output ended before the operation finished.
///
/// Every variant reads as one sentence through `Display`. A failed operation is never
/// turned into a result.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Error {
    /// The peer sent bytes that are not one valid, unambiguous JSON text.
    Malformed(JsonError),
    /// The peer sent valid JSON that breaks the protocol.
    Protocol(ProtocolViolation),
    /// The peer follows the protocol but cannot work with this client.
    Incompatible(Incompatible),
    /// The peer answered the request with a JSON-RPC error.
    Rpc(RpcError),
    /// Over Streamable HTTP, the server's HTTP answer carried no answer to the request.
    Http(HttpError),
    /// The application asked for something this crate refuses; nothing was sent.
    Misuse(Misuse),
    /// The operation's deadline passed before it finished.
    Timeout {
        /// What timed out, in the protocol's words (`initialize`, `tools/call`, ...).
        operation: &'static str,
    },
    /// The peer's output ended (the transport said so) before the operation finished.
    Closed,
    /// The application cancelled the operation.
    Cancelled,
    /// The application refused what the server asked of it in the middle of the operation
    /// (an elicitation or sampling request in a 2026-07-28 `input_required` result), with
    /// this error; the call was not sent again.
    Refused(RpcError),
}

impl Error {
    /// Whether the server refused the request for its HTTP headers (-32020, 2026-07-28).
    /// Over Streamable HTTP in that revision, a tool call so refused is sent once more after
    /// the tools are listed again: see
    /// [`HttpSession::lists_again_after`](crate::HttpSession::lists_again_after).
    pub fn is_header_mismatch(&self) -> bool {
        matches!(self, Error::Rpc(e) if e.code == crate::ErrorCode::HEADER_MISMATCH)
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Malformed(e) => write!(f, "the peer sent malformed JSON: {e}"),
            Error::Protocol(e) => write!(f, "the peer broke the protocol: {e}"),
            Error::Incompatible(e) => write!(f, "the peer is incompatible: {e}"),
            Error::Rpc(e) => write!(f, "the peer answered with error {}: {}", e.code, e.message),
            Error::Http(e) => write!(f, "the peer's HTTP answer carried no answer: {e}"),
            Error::Misuse(e) => write!(f, "the application's request was refused: {e}"),
            Error::Timeout { operation } => {
                write!(
                    f,
                    "the {operation} operation did not finish before its deadline"
                )
            }
            Error::Closed => {
                f.write_str("the peer closed its output before the operation finished")
            }
            Error::Cancelled => f.write_str("the application cancelled the operation"),
            Error::Refused(e) => {
                write!(
                    f,
                    "the application refused what the server asked: {}",
                    e.message
                )
            }
        }
    }
}

impl core::error::Error for Error {}

impl From<HttpError> for Error {
    fn from(e: HttpError) -> Self {
        Error::Http(e)
    }
}

/// Why an HTTP exchange with a Streamable HTTP server answered nothing. Every one is the
/// server's doing, or the network's: the request was sent as the protocol says.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum HttpError {
    /// 401: the server wants authorization the application did not give, or a token that
    /// is valid; with its `Bearer` challenge, if it sent one, where OAuth starts (see
    /// [`auth`](crate::auth)).
    Unauthorized(Option<crate::auth::Challenge>),
    /// 403: the server refused the request (its origin check, or the authorization given);
    /// with its `Bearer` challenge, if it sent one: `insufficient_scope` asks for a token
    /// with more scopes.
    Forbidden(Option<crate::auth::Challenge>),
    /// A redirect (3xx). It is not followed: the request, its session id and the
    /// application's headers go to the server's own address and nowhere else.
    Redirected {
        /// The status.
        status: u16,
    },
    /// Another status, with no JSON-RPC error in its body.
    Status {
        /// The status.
        status: u16,
    },
    /// A reply whose `Content-Type` is neither `application/json` nor `text/event-stream`.
    ContentType,
    /// The reply ended, or was a bare `202 Accepted`, without the request's answer.
    NoAnswer,
    /// The reply's stream broke before the answer came (the request may have run), and
    /// could not be resumed, nor the request sent again.
    StreamBroken,
    /// The server ended the session (404) while the request waited: the session was
    /// renewed, but a request the old one had accepted is not sent again (it may have run).
    SessionEnded,
    /// The server ended the session (404) again right after it was renewed.
    SessionRenewalFailed,
    /// The server gave a session id that is not 1 to
    /// [`Limits::session_id_bytes`](crate::Limits::session_id_bytes) visible ASCII
    /// characters.
    InvalidSessionId,
    /// A server of the 2024-11-05 transport (HTTP with server-sent events) named a message
    /// endpoint that is not a URL reference of at most
    /// [`Limits::session_id_bytes`](crate::Limits::session_id_bytes) visible ASCII
    /// characters on the session's own scheme, host and port. It is not followed: the
    /// application's headers go only where it sent them.
    MessageEndpoint,
    /// A server of the 2024-11-05 transport ended the event stream all its answers come on;
    /// that transport cannot resume it.
    EventStreamEnded,
}

impl fmt::Display for HttpError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            HttpError::Unauthorized(Some(challenge)) if !challenge.is_bare() => write!(
                f,
                "it answered 401, wanting authorization this client was not given ({challenge})"
            ),
            HttpError::Unauthorized(_) => {
                f.write_str("it answered 401, wanting authorization this client was not given")
            }
            HttpError::Forbidden(Some(challenge)) if !challenge.is_bare() => {
                write!(f, "it answered 403, refusing the request ({challenge})")
            }
            HttpError::Forbidden(_) => f.write_str("it answered 403, refusing the request"),
            HttpError::Redirected { status } => {
                write!(f, "it answered {status}, a redirect, which is not followed")
            }
            HttpError::Status { status } => {
                write!(f, "it answered {status} without a JSON-RPC error")
            }
            HttpError::ContentType => f.write_str(
                "its reply is neither application/json nor text/event-stream",
            ),
            HttpError::NoAnswer => f.write_str("its reply ended without the request's answer"),
            HttpError::StreamBroken => {
                f.write_str("its reply stream broke before the answer and could not be resumed")
            }
            HttpError::SessionEnded => f.write_str(
                "it ended the session (404) before answering; the request is not sent again, as it may have run",
            ),
            HttpError::SessionRenewalFailed => {
                f.write_str("it ended the session (404) again right after it was renewed")
            }
            HttpError::InvalidSessionId => {
                f.write_str("it gave a session id that is not short, visible ASCII")
            }
            HttpError::MessageEndpoint => f.write_str(
                "it named a message endpoint that is not a short URL on its own scheme, host and port",
            ),
            HttpError::EventStreamEnded => {
                f.write_str("it ended the event stream its answers come on, which cannot be resumed")
            }
        }
    }
}

impl core::error::Error for HttpError {}

impl From<ProtocolViolation> for Error {
    fn from(e: ProtocolViolation) -> Self {
        Error::Protocol(e)
    }
}

impl From<Incompatible> for Error {
    fn from(e: Incompatible) -> Self {
        Error::Incompatible(e)
    }
}

impl From<Misuse> for Error {
    fn from(e: Misuse) -> Self {
        Error::Misuse(e)
    }
}

/// Why a JSON text was refused, and the byte offset where that was found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct JsonError {
    offset: usize,
    kind: JsonErrorKind,
}

impl JsonError {
    pub(crate) const fn new(offset: usize, kind: JsonErrorKind) -> Self {
        JsonError { offset, kind }
    }

    /// The byte offset, from the start of the text, at which the problem was found.
    pub const fn offset(&self) -> usize {
        self.offset
    }

    /// What was wrong.
    pub const fn kind(&self) -> JsonErrorKind {
        self.kind
    }
}

impl fmt::Display for JsonError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} at byte {}", self.kind, self.offset)
    }
}

impl core::error::Error for JsonError {}

/// What made a JSON text unacceptable.
///
/// Besides plain syntax errors this covers everything two JSON parsers could read
/// differently: duplicate keys, lone UTF-16 surrogates, numbers too large for any float,
/// bytes after the value. Refusing them means what this crate reads is what any other
/// conforming parser reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum JsonErrorKind {
    /// The bytes are not valid UTF-8.
    InvalidUtf8,
    /// The text ended inside a value.
    UnexpectedEnd,
    /// A byte other than the one the grammar allows here; the field names what was expected.
    Expected(&'static str),
    /// A raw control character (below U+0020) inside a string.
    ControlCharacter,
    /// A backslash escape JSON does not define, or a `\u` without four hex digits.
    InvalidEscape,
    /// A `\u` escape for half of a UTF-16 surrogate pair without its other half.
    LoneSurrogate,
    /// A number whose magnitude no 64-bit float can hold.
    NumberOutOfRange,
    /// An object that names the same key twice (after decoding escapes).
    DuplicateKey,
    /// Arrays and objects nested deeper than the limit.
    TooDeep {
        /// The nesting limit in force.
        limit: usize,
    },
    /// Something other than whitespace after the value.
    TrailingData,
}

impl fmt::Display for JsonErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            JsonErrorKind::InvalidUtf8 => f.write_str("invalid UTF-8"),
            JsonErrorKind::UnexpectedEnd => f.write_str("the text ends inside a value"),
            JsonErrorKind::Expected(what) => write!(f, "expected {what}"),
            JsonErrorKind::ControlCharacter => f.write_str("a raw control character in a string"),
            JsonErrorKind::InvalidEscape => f.write_str("an invalid escape in a string"),
            JsonErrorKind::LoneSurrogate => f.write_str("a lone UTF-16 surrogate in a string"),
            JsonErrorKind::NumberOutOfRange => f.write_str("a number too large for any float"),
            JsonErrorKind::DuplicateKey => f.write_str("a key repeated in one object"),
            JsonErrorKind::TooDeep { limit } => {
                write!(f, "nesting deeper than the limit of {limit}")
            }
            JsonErrorKind::TrailingData => f.write_str("data after the JSON value"),
        }
    }
}

/// A well-formed message, or a frame, that breaks JSON-RPC 2.0 as MCP uses it.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ProtocolViolation {
    /// A line longer than the frame limit, newline included.
    FrameTooLong {
        /// The frame limit in force, in bytes.
        limit: usize,
    },
    /// The frame is JSON but not an object.
    NotAnObject,
    /// The `jsonrpc` member is missing or is not exactly `"2.0"`.
    NotJsonRpc2,
    /// An `id` that is not an integer within `i64` or a string.
    InvalidId,
    /// A `method` that is not a string.
    MethodNotString,
    /// `params` present but not an object.
    ParamsNotObject,
    /// A response whose `result` is not an object.
    ResultNotObject,
    /// An `error` member that is not `{code: integer, message: string, data?: any}`.
    InvalidErrorObject,
    /// A message that carries both `method` and `result` or `error`.
    RequestAndResponse,
    /// A response that carries both `result` and `error`.
    ResultAndError,
    /// A message with neither `method`, `result` nor `error`.
    NotAMessage,
    /// A `result` without an `id` to bind it to.
    ResultWithoutId,
    /// A response to an id this client never sent.
    UnknownResponseId {
        /// The id the response carried.
        id: RequestId,
    },
    /// A second response to a request that was already answered.
    DuplicateResponse {
        /// The id the response carried.
        id: RequestId,
    },
    /// More messages than the limit arrived while a request waited for its answer.
    TooManyNotifications {
        /// The limit in force ([`Limits::notifications_before_answer`](crate::Limits)).
        limit: usize,
    },
    /// The server did not read its input: more frames waited unsent than the limit allows,
    /// and the server sent requests (or the client needed to send more) all the same.
    NotReading {
        /// The limit in force ([`Limits::unsent_bytes`](crate::Limits)).
        limit: usize,
    },
    /// A request from the server where the revision in use allows none.
    UnexpectedRequest,
    /// A result that lacks what its method requires, or has it in the wrong type.
    InvalidResult {
        /// The request's method.
        method: &'static str,
        /// What is wrong, in a few words.
        problem: &'static str,
    },
    /// A `resultType` this client does not know.
    UnknownResultType,
    /// A tool in a catalog that breaks the rules (in the strict catalog policy).
    InvalidTool {
        /// The tool's position in the listing, counting from 0 across pages.
        index: usize,
        /// What is wrong with it.
        reason: ToolRejection,
    },
    /// A listing that sent the same cursor twice, which would loop forever.
    RepeatedCursor,
    /// A listing with more pages than the limit.
    TooManyPages {
        /// The limit in force.
        limit: usize,
    },
    /// A call whose server asked for input more times than the limit
    /// ([`Limits::input_rounds`](crate::Limits)).
    TooManyInputRounds {
        /// The limit in force.
        limit: usize,
    },
    /// A call whose server asked the application for more input at once than
    /// [`Limits::asks_waiting`](crate::Limits) lets wait.
    TooManyAsks {
        /// The limit in force.
        limit: usize,
    },
    /// A listing with more items than the limit.
    TooManyItems {
        /// The limit in force.
        limit: usize,
    },
    /// A `notifications/subscriptions/acknowledged` whose `notifications` is not an object.
    InvalidAcknowledgement,
}

impl fmt::Display for ProtocolViolation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ProtocolViolation::FrameTooLong { limit } => {
                write!(f, "a frame exceeds the {limit}-byte limit")
            }
            ProtocolViolation::NotAnObject => f.write_str("a frame is JSON but not an object"),
            ProtocolViolation::NotJsonRpc2 => f.write_str("a message lacks \"jsonrpc\": \"2.0\""),
            ProtocolViolation::InvalidId => {
                f.write_str("an id is neither an integer within i64 nor a string")
            }
            ProtocolViolation::MethodNotString => f.write_str("a method is not a string"),
            ProtocolViolation::ParamsNotObject => f.write_str("params are not an object"),
            ProtocolViolation::ResultNotObject => f.write_str("a result is not an object"),
            ProtocolViolation::InvalidErrorObject => {
                f.write_str("an error is not {code: integer, message: string, data?: any}")
            }
            ProtocolViolation::RequestAndResponse => {
                f.write_str("a message is both a request and a response")
            }
            ProtocolViolation::ResultAndError => {
                f.write_str("a response carries both a result and an error")
            }
            ProtocolViolation::NotAMessage => {
                f.write_str("a message has neither a method, a result nor an error")
            }
            ProtocolViolation::ResultWithoutId => f.write_str("a result carries no id"),
            ProtocolViolation::UnknownResponseId { id } => {
                write!(f, "a response carries id {id}, which was never sent")
            }
            ProtocolViolation::DuplicateResponse { id } => {
                write!(f, "request {id} was answered twice")
            }
            ProtocolViolation::TooManyNotifications { limit } => {
                write!(f, "more than {limit} messages arrived before an answer")
            }
            ProtocolViolation::NotReading { limit } => write!(
                f,
                "it stopped reading its input: more than {limit} bytes wait unsent"
            ),
            ProtocolViolation::UnexpectedRequest => {
                f.write_str("it sent a request where the protocol revision allows none")
            }
            ProtocolViolation::InvalidResult { method, problem } => {
                write!(f, "its {method} result is invalid: {problem}")
            }
            ProtocolViolation::UnknownResultType => {
                f.write_str("a result has an unknown resultType")
            }
            ProtocolViolation::InvalidTool { index, reason } => {
                write!(f, "tool {index} of its catalog is invalid: {reason}")
            }
            ProtocolViolation::RepeatedCursor => {
                f.write_str("a listing repeated a cursor, which would never end")
            }
            ProtocolViolation::TooManyPages { limit } => {
                write!(f, "a listing ran past {limit} pages")
            }
            ProtocolViolation::TooManyInputRounds { limit } => {
                write!(f, "a call asked for input again after {limit} rounds")
            }
            ProtocolViolation::TooManyAsks { limit } => {
                write!(
                    f,
                    "a call asked the application for more than {limit} answers at once"
                )
            }
            ProtocolViolation::TooManyItems { limit } => {
                write!(f, "a listing ran past {limit} items")
            }
            ProtocolViolation::InvalidAcknowledgement => {
                f.write_str("it acknowledged a subscription without saying what it honours")
            }
        }
    }
}

impl core::error::Error for ProtocolViolation {}

/// A peer that follows the protocol but cannot work with this client.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Incompatible {
    /// The server chose a protocol version this client does not speak (or not the pinned one).
    UnsupportedVersion {
        /// The version the server chose.
        offered: String,
    },
    /// The server and this client share no protocol version.
    NoCommonVersion {
        /// The versions the server says it supports.
        supported: Vec<String>,
    },
    /// The server needs input from the client mid-request (`resultType: input_required`)
    /// that this client does not provide: roots when [`Config::roots`](crate::Config) gives
    /// none, an elicitation or sampling [`Config::asks`](crate::Config) does not declare, or
    /// any other request.
    InputRequired,
    /// Only the stateless revision was acceptable, and the server answered `server/discover`
    /// with an error outside that revision's range: it speaks only the handshake revisions.
    NotStateless {
        /// The server's answer to `server/discover`.
        error: RpcError,
    },
}

impl fmt::Display for Incompatible {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Incompatible::UnsupportedVersion { offered } => {
                write!(
                    f,
                    "it chose protocol version {offered:?}, which this client does not accept"
                )
            }
            Incompatible::NoCommonVersion { supported } => {
                write!(
                    f,
                    "it supports only {supported:?}, none of which this client speaks"
                )
            }
            Incompatible::InputRequired => f.write_str(
                "it asked for client input mid-request, which this client does not provide",
            ),
            Incompatible::NotStateless { error } => write!(
                f,
                "it does not speak the stateless revision (server/discover failed with error {}: {})",
                error.code, error.message
            ),
        }
    }
}

impl core::error::Error for Incompatible {}

/// A request of the application's that this crate refuses before anything is sent.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Misuse {
    /// JSON handed in by the application is not valid (see [`JsonError`]).
    InvalidJson(JsonError),
    /// A value handed in as params or a result is not a JSON object.
    NotAnObject,
    /// A value could not be serialized to JSON (for example a map with non-string keys).
    Unserializable,
    /// An outgoing message would not fit in one frame.
    FrameTooLong {
        /// The frame the message would need, newline included, in bytes.
        len: usize,
        /// The frame limit in force, in bytes.
        limit: usize,
    },
    /// The operation needs a connected client, and the handshake has not finished.
    NotConnected,
    /// The handshake was already started.
    AlreadyConnecting,
    /// The connection failed earlier (see the error that failed it); start a new one.
    ConnectionFailed,
    /// The tool is not in the application's allowlist.
    ToolNotAllowed {
        /// The tool's name.
        name: String,
    },
    /// The tool is not in the server's current catalog (list the tools first).
    ToolNotAdvertised {
        /// The tool's name.
        name: String,
    },
    /// A prompt's argument was given twice: the JSON object it would be sent as would repeat
    /// a key, which a strict reader (this crate's own) refuses and others read as they like.
    PromptArgumentRepeated {
        /// The argument's name.
        name: String,
    },
    /// A prompt was asked for without an argument its listing says it requires
    /// ([`Client::get_listed_prompt`](crate::Client::get_listed_prompt)).
    PromptArgumentMissing {
        /// The prompt's name.
        prompt: String,
        /// The required argument not given.
        argument: String,
    },
    /// The server did not declare the capability the operation needs.
    CapabilityNotOffered {
        /// The capability: `tools`, `resources`, `prompts`, `resources.subscribe` or
        /// `logging`.
        capability: &'static str,
    },
    /// As many requests are in flight as the limit allows.
    TooManyInFlight {
        /// The limit in force.
        limit: usize,
    },
    /// No operation with that id is in progress.
    UnknownOperation,
    /// Every request id this client can send has been used.
    IdsExhausted,
    /// A root must be a `file://` URI without control characters.
    InvalidRoot {
        /// The text given as the root's URI.
        uri: String,
    },
    /// Roots were given to a client whose [`Config::roots`](crate::Config) declared none:
    /// the capability is declared in the handshake, or never.
    RootsNotDeclared,
    /// An answer for a server request that does not wait for one: answered already,
    /// withdrawn by the server, or never asked of this client.
    NotAsked,
    /// A request the revision the session speaks does not have: `subscriptions/listen`
    /// before 2026-07-28, `resources/subscribe` and `resources/unsubscribe` in it.
    NotInRevision {
        /// The request's method.
        method: &'static str,
        /// The revision the session speaks.
        version: ProtocolVersion,
    },
}

impl fmt::Display for Misuse {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Misuse::InvalidJson(e) => write!(f, "its JSON is invalid: {e}"),
            Misuse::NotAnObject => f.write_str("a value that must be a JSON object is not one"),
            Misuse::Unserializable => f.write_str("a value cannot be serialized as JSON"),
            Misuse::FrameTooLong { len, limit } => {
                write!(
                    f,
                    "a {len}-byte message exceeds the {limit}-byte frame limit"
                )
            }
            Misuse::NotConnected => f.write_str("the client is not connected yet"),
            Misuse::AlreadyConnecting => f.write_str("the handshake was already started"),
            Misuse::ConnectionFailed => f.write_str("the connection has failed"),
            Misuse::ToolNotAllowed { name } => {
                write!(f, "tool {name:?} is not allowed by this application")
            }
            Misuse::ToolNotAdvertised { name } => {
                write!(f, "tool {name:?} is not in the server's catalog")
            }
            Misuse::PromptArgumentRepeated { name } => {
                write!(f, "prompt argument {name:?} is given more than once")
            }
            Misuse::PromptArgumentMissing { prompt, argument } => write!(
                f,
                "prompt {prompt:?} requires the argument {argument:?}, which is not given"
            ),
            Misuse::CapabilityNotOffered { capability } => {
                write!(f, "the server does not offer the {capability} capability")
            }
            Misuse::TooManyInFlight { limit } => {
                write!(f, "{limit} requests are already in flight")
            }
            Misuse::UnknownOperation => f.write_str("no such operation is in progress"),
            Misuse::IdsExhausted => f.write_str("every request id has been used"),
            Misuse::InvalidRoot { uri } => write!(f, "root {uri:?} is not a file:// URI"),
            Misuse::RootsNotDeclared => {
                f.write_str("this client declared no roots, so it cannot change them")
            }
            Misuse::NotAsked => f.write_str("no server request waits for this answer"),
            Misuse::NotInRevision { method, version } => write!(
                f,
                "{method} is not part of {}, the revision this session speaks",
                version.as_str()
            ),
        }
    }
}

impl core::error::Error for Misuse {}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::ToolRejection;
    use crate::rpc_error::ErrorCode;
    use alloc::string::ToString;
    use alloc::{vec, vec::Vec};

    /// One of every `Misuse`; the match makes a new variant a compile error until it is
    /// listed here.
    fn every_misuse() -> Vec<Misuse> {
        let all = vec![
            Misuse::InvalidJson(JsonError::new(3, JsonErrorKind::TrailingData)),
            Misuse::NotAnObject,
            Misuse::Unserializable,
            Misuse::FrameTooLong { len: 9, limit: 8 },
            Misuse::NotConnected,
            Misuse::AlreadyConnecting,
            Misuse::ConnectionFailed,
            Misuse::ToolNotAllowed { name: "rm".into() },
            Misuse::ToolNotAdvertised { name: "rm".into() },
            Misuse::PromptArgumentRepeated {
                name: "tone".into(),
            },
            Misuse::PromptArgumentMissing {
                prompt: "review".into(),
                argument: "code".into(),
            },
            Misuse::CapabilityNotOffered {
                capability: "tools",
            },
            Misuse::TooManyInFlight { limit: 4 },
            Misuse::UnknownOperation,
            Misuse::IdsExhausted,
            Misuse::InvalidRoot { uri: "/tmp".into() },
            Misuse::RootsNotDeclared,
            Misuse::NotAsked,
            Misuse::NotInRevision {
                method: "subscriptions/listen",
                version: ProtocolVersion::V2025_11_25,
            },
        ];
        for misuse in &all {
            match misuse {
                Misuse::InvalidJson(_)
                | Misuse::NotAnObject
                | Misuse::Unserializable
                | Misuse::FrameTooLong { .. }
                | Misuse::NotConnected
                | Misuse::AlreadyConnecting
                | Misuse::ConnectionFailed
                | Misuse::ToolNotAllowed { .. }
                | Misuse::ToolNotAdvertised { .. }
                | Misuse::PromptArgumentRepeated { .. }
                | Misuse::PromptArgumentMissing { .. }
                | Misuse::CapabilityNotOffered { .. }
                | Misuse::TooManyInFlight { .. }
                | Misuse::UnknownOperation
                | Misuse::IdsExhausted
                | Misuse::InvalidRoot { .. }
                | Misuse::RootsNotDeclared
                | Misuse::NotAsked
                | Misuse::NotInRevision { .. } => {}
            }
        }
        all
    }

    /// One of every `ProtocolViolation`, checked as `every_misuse` is.
    fn every_violation() -> Vec<ProtocolViolation> {
        use ProtocolViolation as P;
        let all = vec![
            P::FrameTooLong { limit: 8 },
            P::NotAnObject,
            P::NotJsonRpc2,
            P::InvalidId,
            P::MethodNotString,
            P::ParamsNotObject,
            P::ResultNotObject,
            P::InvalidErrorObject,
            P::RequestAndResponse,
            P::ResultAndError,
            P::NotAMessage,
            P::ResultWithoutId,
            P::UnknownResponseId { id: 7.into() },
            P::DuplicateResponse { id: "a".into() },
            P::TooManyNotifications { limit: 16 },
            P::NotReading { limit: 1024 },
            P::UnexpectedRequest,
            P::InvalidResult {
                method: "tools/call",
                problem: "content is not an array",
            },
            P::UnknownResultType,
            P::InvalidTool {
                index: 2,
                reason: ToolRejection::InvalidField("title"),
            },
            P::RepeatedCursor,
            P::TooManyPages { limit: 32 },
            P::TooManyInputRounds { limit: 4 },
            P::TooManyAsks { limit: 4 },
            P::TooManyItems { limit: 100 },
            P::InvalidAcknowledgement,
        ];
        for violation in &all {
            match violation {
                P::FrameTooLong { .. }
                | P::NotAnObject
                | P::NotJsonRpc2
                | P::InvalidId
                | P::MethodNotString
                | P::ParamsNotObject
                | P::ResultNotObject
                | P::InvalidErrorObject
                | P::RequestAndResponse
                | P::ResultAndError
                | P::NotAMessage
                | P::ResultWithoutId
                | P::UnknownResponseId { .. }
                | P::DuplicateResponse { .. }
                | P::TooManyNotifications { .. }
                | P::NotReading { .. }
                | P::UnexpectedRequest
                | P::InvalidResult { .. }
                | P::UnknownResultType
                | P::InvalidTool { .. }
                | P::RepeatedCursor
                | P::TooManyPages { .. }
                | P::TooManyInputRounds { .. }
                | P::TooManyAsks { .. }
                | P::TooManyItems { .. }
                | P::InvalidAcknowledgement => {}
            }
        }
        all
    }

    /// One of every `HttpError` (each with and without a challenge where it has one),
    /// checked the same way.
    fn every_http_error() -> Vec<HttpError> {
        let challenge = crate::auth::Challenge {
            scope: Some("files:read".into()),
            ..crate::auth::Challenge::default()
        };
        let all = vec![
            HttpError::Unauthorized(None),
            HttpError::Unauthorized(Some(challenge.clone())),
            HttpError::Forbidden(None),
            HttpError::Forbidden(Some(challenge)),
            HttpError::Redirected { status: 307 },
            HttpError::Status { status: 500 },
            HttpError::ContentType,
            HttpError::NoAnswer,
            HttpError::StreamBroken,
            HttpError::SessionEnded,
            HttpError::SessionRenewalFailed,
            HttpError::InvalidSessionId,
            HttpError::MessageEndpoint,
            HttpError::EventStreamEnded,
        ];
        for error in &all {
            match error {
                HttpError::Unauthorized(_)
                | HttpError::Forbidden(_)
                | HttpError::Redirected { .. }
                | HttpError::Status { .. }
                | HttpError::ContentType
                | HttpError::NoAnswer
                | HttpError::StreamBroken
                | HttpError::SessionEnded
                | HttpError::SessionRenewalFailed
                | HttpError::InvalidSessionId
                | HttpError::MessageEndpoint
                | HttpError::EventStreamEnded => {}
            }
        }
        all
    }

    /// One of every `Incompatible`, checked the same way.
    fn every_incompatibility() -> Vec<Incompatible> {
        let all = vec![
            Incompatible::UnsupportedVersion {
                offered: "2099-01-01".into(),
            },
            Incompatible::NoCommonVersion {
                supported: vec!["2024-11-05".into()],
            },
            Incompatible::InputRequired,
            Incompatible::NotStateless {
                error: RpcError::new(ErrorCode::INVALID_REQUEST, "Server not initialized"),
            },
        ];
        for incompatible in &all {
            match incompatible {
                Incompatible::UnsupportedVersion { .. }
                | Incompatible::NoCommonVersion { .. }
                | Incompatible::InputRequired
                | Incompatible::NotStateless { .. } => {}
            }
        }
        all
    }

    /// One of every `JsonErrorKind`, checked the same way.
    fn every_json_error() -> Vec<JsonErrorKind> {
        use JsonErrorKind as J;
        let all = vec![
            J::InvalidUtf8,
            J::UnexpectedEnd,
            J::Expected("a value"),
            J::ControlCharacter,
            J::InvalidEscape,
            J::LoneSurrogate,
            J::NumberOutOfRange,
            J::DuplicateKey,
            J::TooDeep { limit: 64 },
            J::TrailingData,
        ];
        for kind in &all {
            match kind {
                J::InvalidUtf8
                | J::UnexpectedEnd
                | J::Expected(_)
                | J::ControlCharacter
                | J::InvalidEscape
                | J::LoneSurrogate
                | J::NumberOutOfRange
                | J::DuplicateKey
                | J::TooDeep { .. }
                | J::TrailingData => {}
            }
        }
        all
    }

    /// Every error this crate gives, each inside an [`Error`].
    fn every_error() -> Vec<Error> {
        let rpc = RpcError::new(ErrorCode::METHOD_NOT_FOUND, "Method not found");
        let mut all = vec![
            Error::Rpc(rpc.clone()),
            Error::Timeout {
                operation: "tools/call",
            },
            Error::Closed,
            Error::Cancelled,
            Error::Refused(rpc),
        ];
        all.extend(
            every_json_error()
                .into_iter()
                .map(|kind| Error::Malformed(JsonError::new(0, kind))),
        );
        all.extend(every_violation().into_iter().map(Error::Protocol));
        all.extend(every_incompatibility().into_iter().map(Error::Incompatible));
        all.extend(every_http_error().into_iter().map(Error::Http));
        all.extend(every_misuse().into_iter().map(Error::Misuse));
        all
    }

    /// Who is at fault, as the sentence opens: the peer, the application, or the deadline.
    fn fault(error: &Error) -> &'static str {
        match error {
            Error::Malformed(_)
            | Error::Protocol(_)
            | Error::Incompatible(_)
            | Error::Rpc(_)
            | Error::Http(_)
            | Error::Closed => "the peer",
            Error::Misuse(_) | Error::Cancelled | Error::Refused(_) => "the application",
            Error::Timeout { .. } => "the tools/call operation did not finish",
        }
    }

    #[test]
    fn every_error_reads_as_one_sentence_opening_with_who_is_at_fault() {
        let mut sentences: Vec<String> = Vec::new();
        for error in &every_error() {
            let sentence = error.to_string();
            assert!(
                sentence.starts_with(fault(error)),
                "{error:?} reads {sentence:?}"
            );
            assert!(!sentence.contains('\n'), "{sentence:?} is not one line");
            assert!(
                !sentence.ends_with('.'),
                "{sentence:?} ends with a full stop, which a caller's sentence would repeat"
            );
            assert!(!sentences.contains(&sentence), "{sentence:?} is said twice");
            sentences.push(sentence);
        }
        assert_eq!(sentences.len(), 5 + 10 + 26 + 4 + 14 + 19);
    }

    #[test]
    fn the_parts_an_error_is_made_of_read_as_clauses() {
        // What follows "the peer broke the protocol: " and its kin opens in lower case, so
        // the whole reads as one sentence, and never says again who is at fault.
        let parts = every_violation()
            .iter()
            .map(ToString::to_string)
            .chain(every_misuse().iter().map(ToString::to_string))
            .chain(every_http_error().iter().map(ToString::to_string))
            .chain(every_incompatibility().iter().map(ToString::to_string))
            .chain(every_json_error().iter().map(ToString::to_string))
            .collect::<Vec<_>>();
        for part in &parts {
            let first = part.chars().next().unwrap_or(' ');
            assert!(!first.is_uppercase(), "{part:?} opens in upper case");
            assert!(!part.starts_with("the peer"), "{part:?} says again who");
        }
    }
}
