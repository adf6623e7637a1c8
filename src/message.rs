//! JSON-RPC messages as MCP uses them: parsed strictly from a frame, encoded compactly into one.

use alloc::borrow::Cow;
use alloc::{string::String, vec::Vec};
use core::ops::Range;

use crate::error::{Error, JsonError, Misuse, ProtocolViolation};
use crate::id::RequestId;
use crate::json::raw::compact;
use crate::json::scan::{decode_string, Scanner, Scratch};
use crate::json::write::{write_integer, write_string, ObjectWriter};
use crate::json::{RawJson, RawObject};
use crate::rpc_error::{ErrorCode, RpcError};
use crate::Limits;

/// One JSON-RPC 2.0 message.
///
/// A response holds a result or an error, never both, and a request id that is an integer or
/// a string; no other shape can be built. MCP allows no batches, so there is no array form.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Message {
    /// A request: it has an id, and exactly one response must answer it.
    Request(Request),
    /// A notification: it has no id, and nothing answers it.
    Notification(Notification),
    /// A response to the request with the same id.
    Response(Response),
    /// An error the peer could not tie to any request (its `id` was `null` or absent), for
    /// example its report that it could not parse what it was sent. It answers nothing.
    UnboundError(RpcError),
}

/// A request: a method, its params, and the id its answer must carry.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Request {
    /// The id the response must carry, exactly.
    pub id: RequestId,
    /// The method, such as `tools/call`.
    pub method: String,
    /// The params, when present; MCP requires an object.
    pub params: Option<RawObject>,
}

/// A notification: a method and its params, with no id and no answer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Notification {
    /// The method, such as `notifications/progress`.
    pub method: String,
    /// The params, when present; MCP requires an object.
    pub params: Option<RawObject>,
}

/// A response: the id of the request it answers, and its outcome.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Response {
    /// The id of the request this answers.
    pub id: RequestId,
    /// A result or an error, never both.
    pub outcome: Outcome,
}

/// What a response says: a result or an error.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// The request succeeded; MCP results are objects.
    Result(RawObject),
    /// The request failed.
    Error(RpcError),
}

/// Where each member of interest sits in a frame, and whether it held whitespace.
#[derive(Default)]
struct Members {
    jsonrpc: Option<Range<usize>>,
    id: Option<Range<usize>>,
    method: Option<Range<usize>>,
    params: Option<(Range<usize>, bool)>,
    result: Option<(Range<usize>, bool)>,
    error: Option<(Range<usize>, bool)>,
}

/// An error found in the peer's frame: a JSON error met while scanning it is the peer's
/// malformed JSON (the application's own JSON is refused as a [`Misuse`] elsewhere).
struct FromPeer(Error);

impl FromPeer {
    fn into_error(self) -> Error {
        self.0
    }
}

impl From<JsonError> for FromPeer {
    fn from(e: JsonError) -> Self {
        FromPeer(Error::Malformed(e))
    }
}

/// How an `id` member reads.
enum Id {
    Valid(RequestId),
    Null,
    Invalid,
}

/// Parses one frame (a line without its newline) into a [`Message`].
///
/// Strict: the frame must be valid UTF-8 holding exactly one JSON object, with no duplicate
/// key at any depth, no lone surrogate, no number beyond `f64`, nesting within
/// [`Limits::nesting_depth`], and `"jsonrpc": "2.0"`. An id must be an integer within `i64`
/// or a string; `params` and `result` must be objects; a response carries exactly one of
/// `result` and `error`. Members MCP does not define are checked as JSON and then ignored.
/// Payloads are kept as compact [`RawJson`] text, not parsed into a tree.
///
/// # Errors
/// [`Error::Malformed`] when the bytes are not one valid JSON text, [`Error::Protocol`] when
/// the JSON is not a JSON-RPC 2.0 message.
///
/// ```
/// use mcp_sansio::{parse_frame, Limits, Message, RequestId};
/// let limits = Limits::default();
/// let Ok(Message::Response(r)) = parse_frame(br#"{"jsonrpc":"2.0","id":1,"result":{}}"#, &limits)
/// else { panic!("not a response") };
/// assert_eq!(r.id, RequestId::from(1));
/// // `true` is not an id, so it cannot answer request 1.
/// assert!(parse_frame(br#"{"jsonrpc":"2.0","id":true,"result":{}}"#, &limits).is_err());
/// ```
pub fn parse_frame(frame: &[u8], limits: &Limits) -> Result<Message, Error> {
    parse_with(frame, limits, &mut Scratch::default()).map(Incoming::into_message)
}

/// Parses frames like [`parse_frame`], keeping its working memory between frames.
///
/// `parse_frame` sets up a little memory for each frame (the stack of open arrays and
/// objects, and the keys it compares); a `FrameParser` keeps it, so that reading a stream
/// allocates only for what the messages hold. The memory kept is bounded by the nesting
/// limit and the largest frame parsed.
#[derive(Debug)]
pub struct FrameParser {
    limits: Limits,
    scratch: Scratch,
}

impl FrameParser {
    /// A parser enforcing `limits`.
    pub fn new(limits: &Limits) -> Self {
        FrameParser {
            limits: *limits,
            scratch: Scratch::default(),
        }
    }

    /// Parses one frame; see [`parse_frame`].
    ///
    /// # Errors
    /// As [`parse_frame`].
    pub fn parse(&mut self, frame: &[u8]) -> Result<Message, Error> {
        self.parse_incoming(frame).map(Incoming::into_message)
    }
}

/// A frame as the client reads it: a response's result stays in the frame's text (compacted
/// only if it held whitespace) until the operation waiting for it reads it, so the per-call
/// path copies it nowhere.
pub(crate) enum Incoming<'a> {
    /// A response carrying a result, which is a validated, compact JSON object.
    Result {
        /// The id it answers.
        id: RequestId,
        /// The result's text.
        result: Cow<'a, str>,
    },
    /// Any other message.
    Other(Message),
}

impl Incoming<'_> {
    fn into_message(self) -> Message {
        match self {
            Incoming::Result { id, result } => {
                let result = RawObject::from_trusted_text(result.into_owned());
                Message::Response(Response {
                    id,
                    outcome: Outcome::Result(result),
                })
            }
            Incoming::Other(message) => message,
        }
    }
}

impl FrameParser {
    /// Parses one frame as [`parse`](Self::parse) does, leaving a result in the frame.
    pub(crate) fn parse_incoming<'a>(&mut self, frame: &'a [u8]) -> Result<Incoming<'a>, Error> {
        parse_with(frame, &self.limits, &mut self.scratch)
    }
}

fn parse_with<'a>(
    frame: &'a [u8],
    limits: &Limits,
    scratch: &mut Scratch,
) -> Result<Incoming<'a>, Error> {
    let mut scanner =
        Scanner::new(frame, limits.nesting_depth, scratch).map_err(Error::Malformed)?;
    let mut members = Members::default();
    let is_object = scanner
        .members(|key, span, spaced| {
            match key.as_ref() {
                "jsonrpc" => members.jsonrpc = Some(span),
                "id" => members.id = Some(span),
                "method" => members.method = Some(span),
                "params" => members.params = Some((span, spaced)),
                "result" => members.result = Some((span, spaced)),
                "error" => members.error = Some((span, spaced)),
                _ => {}
            }
            Ok::<(), FromPeer>(())
        })
        .map_err(FromPeer::into_error)?;
    scanner.finish().map_err(Error::Malformed)?;
    if !is_object {
        return Err(ProtocolViolation::NotAnObject.into());
    }
    let text = scanner.text();
    let version = members.jsonrpc.and_then(|span| string_at(text, span));
    if version.as_deref() != Some("2.0") {
        return Err(ProtocolViolation::NotJsonRpc2.into());
    }
    let id = members.id.map(|span| id_at(text, span));
    let object = |(span, spaced): (Range<usize>, bool), violation: ProtocolViolation| {
        RawObject::try_from(RawJson::from_span(text, span, spaced))
            .map_err(|_| Error::Protocol(violation))
    };

    if let Some(method) = members.method {
        if members.result.is_some() || members.error.is_some() {
            return Err(ProtocolViolation::RequestAndResponse.into());
        }
        let method = string_at(text, method).ok_or(ProtocolViolation::MethodNotString)?;
        let method = String::from(method);
        let params = members
            .params
            .map(|p| object(p, ProtocolViolation::ParamsNotObject))
            .transpose()?;
        return match id {
            None => Ok(Incoming::Other(Message::Notification(Notification {
                method,
                params,
            }))),
            Some(Id::Valid(id)) => Ok(Incoming::Other(Message::Request(Request {
                id,
                method,
                params,
            }))),
            Some(Id::Null | Id::Invalid) => Err(ProtocolViolation::InvalidId.into()),
        };
    }
    match (members.result, members.error) {
        (Some(_), Some(_)) => Err(ProtocolViolation::ResultAndError.into()),
        (Some(result), None) => {
            let id = match id {
                None => return Err(ProtocolViolation::ResultWithoutId.into()),
                Some(Id::Valid(id)) => id,
                Some(Id::Null | Id::Invalid) => return Err(ProtocolViolation::InvalidId.into()),
            };
            let (span, spaced) = result;
            let raw = text.get(span).unwrap_or_default();
            if !raw.starts_with('{') {
                return Err(ProtocolViolation::ResultNotObject.into());
            }
            let result = if spaced {
                Cow::Owned(compact(raw))
            } else {
                Cow::Borrowed(raw)
            };
            Ok(Incoming::Result { id, result })
        }
        (None, Some((span, _))) => {
            let error = rpc_error_at(text, span, limits, scratch)?;
            match id {
                None | Some(Id::Null) => Ok(Incoming::Other(Message::UnboundError(error))),
                Some(Id::Valid(id)) => Ok(Incoming::Other(Message::Response(Response {
                    id,
                    outcome: Outcome::Error(error),
                }))),
                Some(Id::Invalid) => Err(ProtocolViolation::InvalidId.into()),
            }
        }
        (None, None) => Err(ProtocolViolation::NotAMessage.into()),
    }
}

/// The decoded string at a validated span, or `None` if the value there is not a string.
fn string_at(text: &str, span: Range<usize>) -> Option<alloc::borrow::Cow<'_, str>> {
    let raw = text.get(span.clone())?;
    if !raw.starts_with('"') {
        return None;
    }
    let inner = span.start + 1..span.end.saturating_sub(1);
    Some(decode_string(text, inner, raw.contains('\\')))
}

/// The integer at a validated span, if the value there is a JSON integer within `i64`.
///
/// `-0` is refused: some parsers read it as the integer 0, others as the float -0.0.
fn integer_at(text: &str, span: Range<usize>) -> Option<i64> {
    let raw = text.get(span)?.as_bytes();
    let (negative, digits) = match raw.split_first()? {
        (b'-', rest) => (true, rest),
        _ => (false, raw),
    };
    // Validated JSON: a number is digits with an optional fraction and exponent, so any
    // byte that is not a digit makes it a non-integer (and `-0` is no integer here).
    if digits.is_empty() || (negative && digits == b"0") {
        return None;
    }
    let mut n: i64 = 0;
    for &b in digits {
        let digit = i64::from(b.checked_sub(b'0').filter(|d| *d < 10)?);
        n = n.checked_mul(10)?;
        n = if negative {
            n.checked_sub(digit)?
        } else {
            n.checked_add(digit)?
        };
    }
    Some(n)
}

fn id_at(text: &str, span: Range<usize>) -> Id {
    if text.get(span.clone()) == Some("null") {
        return Id::Null;
    }
    if let Some(n) = integer_at(text, span.clone()) {
        return Id::Valid(RequestId::from(n));
    }
    match string_at(text, span) {
        Some(s) => Id::Valid(RequestId::from(String::from(s))),
        None => Id::Invalid,
    }
}

/// Reads the `error` member at a validated span.
fn rpc_error_at(
    text: &str,
    span: Range<usize>,
    limits: &Limits,
    scratch: &mut Scratch,
) -> Result<RpcError, Error> {
    let invalid = || Error::Protocol(ProtocolViolation::InvalidErrorObject);
    let body = text.get(span).ok_or_else(invalid)?;
    let mut scanner = Scanner::from_str(body, limits.nesting_depth, scratch);
    let (mut code, mut message, mut data) = (None, None, None);
    let is_object = scanner
        .members(|key, span, spaced| {
            match key.as_ref() {
                "code" => {
                    let n = integer_at(body, span).and_then(|n| i32::try_from(n).ok());
                    code = Some(n.ok_or_else(|| FromPeer(invalid()))?);
                }
                "message" => {
                    message = Some(string_at(body, span).ok_or_else(|| FromPeer(invalid()))?);
                }
                "data" => data = Some(RawJson::from_span(body, span, spaced)),
                _ => {}
            }
            Ok::<(), FromPeer>(())
        })
        .map_err(FromPeer::into_error)?;
    match (is_object, code, message) {
        (true, Some(code), Some(message)) => Ok(RpcError {
            code: ErrorCode(code),
            message: String::from(message),
            data,
        }),
        _ => Err(invalid()),
    }
}

/// Appends `message` to `out` as one frame: compact JSON, then exactly one newline.
///
/// The JSON holds no raw newline (payloads are compact and strings escape it), so the frame
/// is exactly one line. Members come in a fixed order: `jsonrpc`, `id`, `method`, `params`,
/// `result`, `error`. Parsing the frame with [`parse_frame`] gives back an equal message.
///
/// # Errors
/// [`Misuse::FrameTooLong`] when the frame, newline included, would exceed
/// [`Limits::frame_bytes`]; `out` is then left as it was. Encoding is the application's
/// act, so its only failure is the application's.
///
/// ```
/// use mcp_sansio::{encode_frame, Limits, Message, Notification};
/// let mut out = Vec::new();
/// let hello = Notification { method: "notifications/initialized".into(), params: None };
/// encode_frame(&Message::Notification(hello), &Limits::default(), &mut out)?;
/// assert_eq!(out, b"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n");
/// # Ok::<(), mcp_sansio::Misuse>(())
/// ```
pub fn encode_frame(message: &Message, limits: &Limits, out: &mut Vec<u8>) -> Result<(), Misuse> {
    write_frame(out, limits.frame_bytes, |out| match message {
        Message::Request(request) => {
            write_id(out, |out| request.id.write_json(out));
            write_call(out, &request.method, params_of(request.params.as_ref()));
        }
        Message::Notification(notification) => {
            write_call(
                out,
                &notification.method,
                params_of(notification.params.as_ref()),
            );
        }
        Message::Response(response) => {
            write_id(out, |out| response.id.write_json(out));
            match &response.outcome {
                Outcome::Result(result) => {
                    out.extend_from_slice(br#","result":"#);
                    out.extend_from_slice(result.as_str().as_bytes());
                }
                Outcome::Error(error) => write_error(out, error),
            }
        }
        Message::UnboundError(error) => {
            out.extend_from_slice(br#","id":null"#);
            write_error(out, error);
        }
    })
    .map(|_| ())
}

/// The one JSON-RPC envelope writer: appends `{"jsonrpc":"2.0"`, the members `body` writes
/// (each starting with a comma), `}` and the newline, then checks the frame against `limit`.
/// Every frame this crate sends is written here.
///
/// # Errors
/// [`Misuse::FrameTooLong`] when the frame, newline included, exceeds `limit`; `out` is then
/// left as it was. Returns the frame's length otherwise.
pub(crate) fn write_frame(
    out: &mut Vec<u8>,
    limit: usize,
    body: impl FnOnce(&mut Vec<u8>),
) -> Result<usize, Misuse> {
    let start = out.len();
    out.extend_from_slice(br#"{"jsonrpc":"2.0""#);
    body(out);
    out.extend_from_slice(b"}\n");
    let len = out.len() - start;
    if len > limit {
        out.truncate(start);
        return Err(Misuse::FrameTooLong { len, limit });
    }
    Ok(len)
}

/// Writes the `id` member; `id` writes its value.
pub(crate) fn write_id(out: &mut Vec<u8>, id: impl FnOnce(&mut Vec<u8>)) {
    out.extend_from_slice(br#","id":"#);
    id(out);
}

/// Writes an integer `id` member.
pub(crate) fn write_integer_id(out: &mut Vec<u8>, id: i64) {
    write_id(out, |out| write_integer(out, id));
}

/// Writes the `method` member and, if `params` is given, a `params` object whose members it
/// writes.
pub(crate) fn write_call(
    out: &mut Vec<u8>,
    method: &str,
    params: Option<impl FnOnce(&mut ObjectWriter<'_>)>,
) {
    out.extend_from_slice(br#","method":"#);
    write_string(out, method);
    if let Some(params) = params {
        out.extend_from_slice(br#","params":"#);
        let mut object = ObjectWriter::open(out);
        params(&mut object);
        object.close();
    }
}

/// The writer of a message's own `params`, if it has them.
fn params_of(params: Option<&RawObject>) -> Option<impl FnOnce(&mut ObjectWriter<'_>) + '_> {
    params.map(|given| move |object: &mut ObjectWriter<'_>| object.members_of(given))
}

fn write_error(out: &mut Vec<u8>, error: &RpcError) {
    out.extend_from_slice(br#","error":{"code":"#);
    write_integer(out, i64::from(error.code.0));
    out.extend_from_slice(br#","message":"#);
    write_string(out, &error.message);
    if let Some(data) = &error.data {
        out.extend_from_slice(br#","data":"#);
        out.extend_from_slice(data.as_str().as_bytes());
    }
    out.push(b'}');
}
