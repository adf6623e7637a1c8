//! The client session over Streamable HTTP, with no I/O: the core says which HTTP requests to
//! make and reads their replies; the transport only moves bytes.

use alloc::borrow::Cow;
use alloc::collections::VecDeque;
use alloc::{string::String, vec::Vec};

use crate::client::{Client, Config, Notice, Sent};
use crate::error::{Error, HttpError, ProtocolViolation};
use crate::event::Event;
use crate::json::view::JsonRef;
use crate::message::{parse_frame, Message, Outcome};
use crate::method::{CallKind, Method};
use crate::sse::{Sse, SseReader};
use crate::time::Instant;
use crate::version::{Era, ProtocolVersion};
use crate::Limits;

use super::auth::{Challenge, Token};
use super::endpoint::{resolve, Base};
use super::headers::header_value;

/// One HTTP request and its reply, as the transport performs it. Ids are never reused.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ExchangeId(u64);

/// The HTTP method of a request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum HttpMethod {
    /// A message to the server.
    Post,
    /// Resuming a reply stream (`Last-Event-ID`).
    Get,
    /// Ending the session.
    Delete,
}

/// An HTTP request for the transport to perform, to the server's one MCP endpoint (or, for a
/// server of the 2024-11-05 transport, to the [`path`](Self::path) it named on the same
/// origin), with exactly these headers (and the application's own, such as `Authorization`)
/// and this body.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HttpRequest {
    /// The exchange, named in every `handle_*` call about its reply.
    pub exchange: ExchangeId,
    /// The method.
    pub method: HttpMethod,
    /// The headers, names as the spec writes them (HTTP reads them ignoring case); names
    /// and values are borrowed where they are constants.
    pub headers: Vec<(Cow<'static, str>, Cow<'static, str>)>,
    /// The body: one JSON-RPC message, or empty for `GET` and `DELETE`.
    pub body: Vec<u8>,
    /// Where the request goes, when not to the URL itself: a path and query on the URL's
    /// own scheme, host and port. Only a server of the 2024-11-05 transport (HTTP with
    /// server-sent events) has one, the message endpoint its stream named, already checked
    /// to be on that origin.
    pub path: Option<String>,
    /// Whether the reply lasts as long as the session: the event stream of the 2024-11-05
    /// transport, which every answer comes on. Bound it by nothing but the session, which
    /// aborts it when it closes ([`close`](HttpSession::close)), that is by
    /// [`LASTING_BOUND`](Self::LASTING_BOUND); every other exchange is bounded as the run
    /// loop says.
    pub lasting: bool,
}

/// A request's headers; a value is borrowed where it is one of the session's constants.
type Headers = Vec<(Cow<'static, str>, Cow<'static, str>)>;

impl HttpRequest {
    /// What a transport bounds a [`lasting`](Self::lasting) exchange by, as its deadline
    /// must be some time: a year. The session aborts the exchange long before, when it
    /// closes or can no longer use it.
    pub const LASTING_BOUND: core::time::Duration =
        core::time::Duration::from_secs(365 * 24 * 60 * 60);

    /// The value of header `name`, ignoring case, if the request has it.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_ref())
    }
}

/// The start of a reply: its status and the headers the session reads
/// ([`HttpSession::REPLY_HEADERS`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ReplyHead<'a> {
    /// The status code.
    pub status: u16,
    /// `Content-Type`, if present.
    pub content_type: Option<&'a str>,
    /// `Mcp-Session-Id`, if present.
    pub session_id: Option<&'a str>,
    /// `WWW-Authenticate`, if present (several fields joined by `, `, as HTTP allows): read
    /// for its `Bearer` challenge when the status is 401 or 403.
    pub www_authenticate: Option<&'a str>,
}

/// What an exchange carried, and where its reply stands.
#[derive(Debug)]
struct Exchange {
    id: ExchangeId,
    sent: Sent,
    /// The body, kept while it may have to be sent again: in a session of the handshake
    /// revisions, while the server could still say the session expired before reading it (a
    /// request sent with a session id); in 2026-07-28, until the answer, as a reply stream
    /// that breaks loses its request (see [`Config::reissue_broken_calls`]).
    body: Option<Vec<u8>>,
    reply: Reply,
    /// A stream's reader, kept across resumptions for its last event id.
    stream: Option<SseReader>,
    /// How many times the reply stream was resumed, or (2026-07-28) its request sent again.
    resumes: usize,
}

#[derive(Debug)]
enum Reply {
    /// No status yet.
    Waiting,
    /// `application/json`: the body so far.
    Json(Vec<u8>),
    /// `text/event-stream`, read by the exchange's reader.
    Stream,
    /// An error status: the body so far (up to the frame limit), read at its end, and the
    /// `Bearer` challenge of a 401 or 403.
    Refused {
        status: u16,
        body: Vec<u8>,
        challenge: Option<Challenge>,
    },
    /// A reply whose body means nothing (to a notification, a response, a `DELETE`), or
    /// one already dealt with.
    Ignored,
}

/// A request to send once its time comes: a stream to resume after its `retry` time.
#[derive(Debug)]
struct Scheduled {
    at: Instant,
    request: HttpRequest,
}

/// The optional `GET` stream of a 2025-06-18 or 2025-11-25 session, on which the server sends
/// what belongs to no request (a `list_changed`, a ping).
#[derive(Debug)]
enum Listen {
    /// Not asked for yet: the session is not open.
    Idle,
    /// The `GET` was made; `open` once its reply is an event stream.
    Active { exchange: ExchangeId, open: bool },
    /// To be asked for again at `at`, after the stream ended or broke.
    Waiting { at: Instant },
    /// The server offers none (405, or any refusal), the stream failed too often, or the
    /// session ended: never asked for again.
    Off,
}

/// The 2024-11-05 transport (HTTP with server-sent events), which a server that refuses the
/// `initialize` POST may speak: one `GET` stream brings every message the server sends, and
/// the client's messages go as POSTs to the message endpoint that stream names first.
#[derive(Debug)]
struct OldSse {
    stage: Stage,
    reader: SseReader,
}

#[derive(Debug)]
enum Stage {
    /// Not in use; the `initialize` request last sent (its id and body) is kept, to send
    /// again over this transport if the server refuses it as a POST.
    Unused { initialize: Option<(i64, Vec<u8>)> },
    /// The stream was asked for: `initialize` (request `id` and its body) waits for the
    /// message endpoint, and fails by the POST's `status` if no stream comes.
    Asked {
        exchange: ExchangeId,
        open: bool,
        id: i64,
        body: Vec<u8>,
        status: u16,
    },
    /// Every message is POSTed to `path`; every answer comes on the stream.
    Open { exchange: ExchangeId, path: String },
    /// The stream ended or was refused, or the session was closed.
    Ended,
}

impl OldSse {
    /// The stream's exchange, while it is asked for or open.
    fn stream(&self) -> Option<ExchangeId> {
        match self.stage {
            Stage::Asked { exchange, .. } | Stage::Open { exchange, .. } => Some(exchange),
            Stage::Unused { .. } | Stage::Ended => None,
        }
    }

    /// The message endpoint, once the stream named it.
    fn path(&self) -> Option<&str> {
        match &self.stage {
            Stage::Open { path, .. } => Some(path),
            _ => None,
        }
    }

    /// The body of `initialize` request `id`, if it was the last sent and this transport
    /// was not tried yet.
    fn initialize(&mut self, id: i64) -> Option<Vec<u8>> {
        match &mut self.stage {
            Stage::Unused { initialize } if initialize.as_ref().is_some_and(|i| i.0 == id) => {
                initialize.take().map(|(_, body)| body)
            }
            _ => None,
        }
    }
}

/// Where an expired session's renewal stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Renewal {
    /// No session has expired since the last reply that was not a 404.
    Settled,
    /// `initialize` was sent again; messages other than the handshake's wait.
    Renewing,
    /// Renewed; a 404 before any other reply means the server cannot keep a session.
    Renewed,
}

/// The client side of an MCP session over Streamable HTTP, for every revision, as a state
/// machine with no I/O: it owns a [`Client`] and turns its messages into HTTP requests and
/// HTTP replies back into its input.
///
/// # The run loop
///
/// Start operations on [`client_mut`](Self::client_mut) as over any transport (its
/// `poll_transmit` and `handle_input` are this session's to call, not the application's).
/// Then, after every command and every `handle_*` call:
///
/// - perform every request [`poll_request`](Self::poll_request) gives: a POST (or GET,
///   DELETE) to the server's MCP endpoint, or to its [`path`](HttpRequest::path) on the same
///   origin, with exactly its headers, plus any the application adds (sent only there:
///   redirects are never followed);
/// - stop reading every exchange [`poll_abort`](Self::poll_abort) names (drop its stream);
/// - take every event [`poll_event`](Self::poll_event) gives;
/// - wait for reply bytes no longer than [`poll_timeout`](Self::poll_timeout), then call
///   [`handle_timeout`](Self::handle_timeout).
///
/// Each reply goes back as [`handle_head`](Self::handle_head) (status and the
/// [`REPLY_HEADERS`](Self::REPLY_HEADERS)), [`handle_body`](Self::handle_body) for its bytes
/// as they arrive, and [`handle_end`](Self::handle_end) when the body is complete, or
/// [`handle_broken`](Self::handle_broken) when the connection failed, before or after the
/// head. Every exchange performed ends with one of those two (bound each by the session's
/// [`poll_timeout`](Self::poll_timeout) at its start, or by
/// [`Limits::operation_timeout`](crate::Limits::operation_timeout) when nothing waits; a
/// [`lasting`](HttpRequest::lasting) one by the session alone), unless
/// [`poll_abort`](Self::poll_abort) named it first.
///
/// # What it does for each revision
///
/// - **Every revision:** `Accept: application/json, text/event-stream` and `Content-Type:
///   application/json` on every POST; a reply in JSON or as server-sent events, each message
///   bounded by [`Limits::frame_bytes`], each reply stream within its operation's deadline and
///   notification cap (a stream past its deadline is aborted). An error status whose body is
///   a JSON-RPC error answers the request with that error (so the 2026-07-28 status table
///   reads as over stdio); other statuses fail it with an [`HttpError`], 401 and 403 by name.
///   Redirects are refused.
/// - **2026-07-28:** `MCP-Protocol-Version`, `Mcp-Method`, and `Mcp-Name` (tool or prompt
///   name, resource URI) on every request, and `Mcp-Param-*` for arguments marked
///   `x-mcp-header` (tools whose markers break the rules are left out of the catalog).
///   Cancelling, or a deadline, aborts the reply stream: no notification is sent. A stream
///   that breaks or ends before the answer loses its request, which is sent again under a
///   new id, as the revision says, at most [`Limits::stream_resumes`] times within its
///   operation's deadline; except a tool call, which may have run before the stream broke:
///   it fails with [`HttpError::StreamBroken`] unless the application allows it to run twice
///   ([`Config::reissue_broken_calls`]).
/// - **2025-06-18 and 2025-11-25:** the session id from the `initialize` reply (refused
///   unless visible ASCII, at most [`Limits::session_id_bytes`]) and `MCP-Protocol-Version`
///   on every later request; a server's request on a reply stream answered by a POST (`ping`
///   with `{}`, anything else -32601); `notifications/cancelled` as a POST; a stream that
///   breaks or ends before the answer resumed with `GET` and `Last-Event-ID` after its
///   `retry` time, at most [`Limits::stream_resumes`] times; a 404 to a request that carried
///   the session id renews the session once (`initialize` again, then that request sent
///   again, since the server never took it; the old session's other requests fail, never
///   replayed), and a second 404 in a row fails the connection; [`close`](Self::close) sends
///   `DELETE`.
/// - **Finding the revision** ([`ProtocolChoice::Auto`](crate::ProtocolChoice::Auto)):
///   `server/discover` with `MCP-Protocol-Version: 2026-07-28` first; a 400, 404 or 405
///   without a 2026-07-28 error body, or a JSON-RPC error outside that revision's range, means
///   a server of the handshake revisions, and `initialize` follows.
///
/// - **The `GET` stream** (handshake revisions, once the session is open): what belongs to
///   no request (a `list_changed`, a ping) comes as events; a 405 or any refusal means none
///   is offered, and it is not asked for again; a stream that ends or breaks is asked for
///   again after its `retry` time (1 s by default) from its last event id, at most
///   [`Limits::stream_resumes`] times in a row without an event.
/// - **The 2024-11-05 transport** (HTTP with server-sent events, which servers built before
///   Streamable HTTP speak, at a URL such as `/sse`): when the `initialize` POST gets a 400,
///   404 or 405 without a JSON-RPC error, the session asks for an event stream with `GET` at
///   the same URL, as the spec's backwards-compatibility rule says. The stream's `endpoint`
///   event names where messages go ([`HttpRequest::path`]): a path, or a URL on the same
///   scheme, host and port as the session's ([`with_url`](Self::with_url)), at most
///   [`Limits::session_id_bytes`] long; anything else fails the handshake with
///   [`HttpError::MessageEndpoint`]. Then `initialize` and every later message are POSTed
///   there, their replies (`202 Accepted`) are not read, and every answer comes on the
///   stream, each within its operation's deadline. The stream cannot be resumed: when it
///   ends, every request waiting fails with [`HttpError::EventStreamEnded`], and so does the
///   connection. If the `GET` is refused too, `initialize` fails by the POST's status.
///
/// - **Authorization:** a 401, or a 403 with a `Bearer` challenge, fails the request with
///   [`HttpError::Unauthorized`] or [`HttpError::Forbidden`] and the challenge, which is where
///   OAuth starts ([`auth`](crate::auth)); [`set_authorization`](Self::set_authorization)
///   sends the token that ends with on every request.
#[derive(Debug)]
pub struct HttpSession {
    client: Client,
    limits: Limits,
    /// [`Config::reissue_broken_calls`].
    reissue_calls: bool,
    session_id: Option<String>,
    exchanges: Vec<Exchange>,
    next_exchange: u64,
    ready: VecDeque<HttpRequest>,
    /// Messages waiting for a renewed session, with what they carry.
    held: Vec<(Sent, Vec<u8>)>,
    scheduled: Vec<Scheduled>,
    aborts: VecDeque<ExchangeId>,
    renewal: Renewal,
    /// The POST of `notifications/initialized`, until the server acknowledged it: HTTP keeps
    /// no order between requests, so nothing else goes out before the session is open.
    opening: Option<ExchangeId>,
    listen: Listen,
    /// The `GET` stream's reader, kept across reconnections for its last event id.
    listen_reader: SseReader,
    /// How many times in a row the `GET` stream ended or broke without an event.
    listen_failures: usize,
    /// The URL requests go to, for the message endpoint of the 2024-11-05 transport.
    base: Option<Base>,
    sse: OldSse,
    frame: Vec<u8>,
    /// The `Authorization` header's value, sent with every request from now on.
    authorization: Option<String>,
}

impl HttpSession {
    /// The reply headers the session reads; a transport hands over these and no others.
    pub const REPLY_HEADERS: [&'static str; 3] =
        ["content-type", "mcp-session-id", "www-authenticate"];

    /// Whether a tool call over Streamable HTTP at `version` that failed with `error` is to
    /// be sent once more after the tools are listed again: the server refused it for its
    /// headers (-32020, [`Error::is_header_mismatch`]) in 2026-07-28. There the
    /// `Mcp-Param-*` headers come from the tool's declaration as listed, which the server may
    /// have changed since, and the revision says a client SHOULD list again and retry; the
    /// server refuses such a call before it runs, so sending it again cannot run it twice.
    /// No other revision sends these headers, so there a -32020 is the call's error. Both
    /// HTTP drivers' `call_tool` follow this, once per call.
    pub fn lists_again_after(version: ProtocolVersion, error: &Error) -> bool {
        version.era() == Era::Stateless && error.is_header_mismatch()
    }

    /// A session that has sent nothing yet; call `client_mut().connect(now)` first.
    #[must_use]
    pub fn new(config: Config) -> Self {
        let (limits, reissue_calls) = (config.limits, config.reissue_broken_calls);
        HttpSession {
            client: Client::over_http(config),
            limits,
            reissue_calls,
            session_id: None,
            exchanges: Vec::new(),
            next_exchange: 0,
            ready: VecDeque::new(),
            held: Vec::new(),
            scheduled: Vec::new(),
            aborts: VecDeque::new(),
            renewal: Renewal::Settled,
            opening: None,
            listen: Listen::Idle,
            listen_reader: SseReader::new(&limits),
            listen_failures: 0,
            base: None,
            sse: OldSse {
                stage: Stage::Unused { initialize: None },
                reader: SseReader::new(&limits),
            },
            frame: Vec::new(),
            authorization: None,
        }
    }

    /// The session, told the URL its requests go to (`http://` or `https://`), so that a
    /// server of the 2024-11-05 transport may name its message endpoint as a URL on that
    /// URL's origin, or as a path relative to it. Without it, only an endpoint given as a
    /// path from the root (`/messages?session_id=…`, as the official SDKs send) is followed.
    #[must_use]
    pub fn with_url(mut self, url: &str) -> Self {
        self.base = Base::parse(url);
        self
    }

    /// The client: what the session knows, and every command.
    pub fn client(&self) -> &Client {
        &self.client
    }

    /// The client, to start operations. Its `poll_transmit`, `handle_input`,
    /// `handle_message` and `handle_close` belong to this session: calling them directly
    /// takes messages from under it.
    pub fn client_mut(&mut self) -> &mut Client {
        &mut self.client
    }

    /// The session id the server gave (2025-06-18, 2025-11-25), if any.
    pub fn session_id(&self) -> Option<&str> {
        self.session_id.as_deref()
    }

    /// How many exchanges are open: performed or to perform, and not yet ended.
    pub fn open_exchanges(&self) -> usize {
        self.exchanges.len()
            + usize::from(matches!(self.listen, Listen::Active { .. }))
            + usize::from(self.sse.stream().is_some())
    }

    /// The next event, as [`Client::poll_event`].
    #[must_use = "events carry the ends of operations"]
    pub fn poll_event(&mut self) -> Option<Event> {
        self.client.poll_event()
    }

    /// The next exchange whose reply the transport must stop reading (its stream dropped,
    /// its connection not reused): cancelled, past its deadline, or no longer needed.
    #[must_use = "an aborted exchange must not be read further"]
    pub fn poll_abort(&mut self) -> Option<ExchangeId> {
        // A deadline or a cancel the client queued aborts its exchange.
        self.pump();
        self.aborts.pop_front()
    }

    /// When [`handle_timeout`](Self::handle_timeout) must be called next, if anything waits.
    #[must_use = "waiting past it leaves operations past their deadlines"]
    pub fn poll_timeout(&self) -> Option<Instant> {
        let listen = match self.listen {
            Listen::Waiting { at } => Some(at),
            _ => None,
        };
        [self.client.poll_timeout(), listen]
            .into_iter()
            .chain(self.scheduled.iter().map(|s| Some(s.at)))
            .flatten()
            .min()
    }

    /// Applies every deadline up to `now`, and releases resumptions that are due.
    pub fn handle_timeout(&mut self, now: Instant) {
        self.client.handle_timeout(now);
        let mut at = 0;
        while let Some(scheduled) = self.scheduled.get(at) {
            if scheduled.at <= now {
                let due = self.scheduled.swap_remove(at);
                self.ready.push_back(due.request);
            } else {
                at += 1;
            }
        }
        if matches!(self.listen, Listen::Waiting { at } if at <= now) {
            self.listen = Listen::Idle;
            self.start_listening();
        }
    }

    /// Ends the session: a 2025-06-18 or 2025-11-25 session with an id is ended on the
    /// server with `DELETE` (a 405 reply is fine). Perform the request, if one is given,
    /// and the session is done.
    pub fn close(&mut self) -> Option<HttpRequest> {
        if let Listen::Active { exchange, .. } = self.listen {
            self.aborts.push_back(exchange);
        }
        self.listen = Listen::Off;
        self.aborts.extend(self.sse.stream());
        self.sse.stage = Stage::Ended;
        let id = self.session_id.take()?;
        let exchange = self.new_exchange();
        self.exchanges.push(Exchange::new(
            exchange,
            Sent::Response,
            None,
            Reply::Ignored,
        ));
        let mut headers = Vec::new();
        session_headers(
            &mut headers,
            Some(id),
            self.client.connection().map(|c| c.version),
        );
        Some(self.authorized(HttpRequest {
            exchange,
            method: HttpMethod::Delete,
            headers,
            body: Vec::new(),
            path: None,
            lasting: false,
        }))
    }

    /// The next HTTP request to perform, if any.
    #[must_use = "a request the session made must be performed"]
    pub fn poll_request(&mut self) -> Option<HttpRequest> {
        self.pump();
        let request = self.ready.pop_front()?;
        Some(self.authorized(request))
    }

    /// `request` with the `Authorization` header, if the application gave a token.
    fn authorized(&self, mut request: HttpRequest) -> HttpRequest {
        if let Some(value) = &self.authorization {
            request
                .headers
                .push((Cow::Borrowed("Authorization"), Cow::Owned(value.clone())));
        }
        request
    }

    /// Sends `token` as `Authorization: Bearer …` with every request from now on (the spec
    /// asks for it on every request, each of a session included), or nothing with `None`.
    /// A token renewed mid-session
    /// ([`auth::TokenRequest::refresh`](crate::auth::TokenRequest::refresh)) replaces the old one
    /// for every request made after this call; requests already given out keep the header they had.
    /// A transport sends it instead of an `Authorization` header of the application's own, never
    /// beside it.
    pub fn set_authorization(&mut self, token: Option<&Token>) {
        self.authorization = token.map(Token::header_value);
    }

    /// Turns everything the client queued into requests (or aborts).
    fn pump(&mut self) {
        self.drop_unneeded_stream();
        loop {
            if self.releasing() {
                for (sent, body) in core::mem::take(&mut self.held) {
                    self.route(sent, body);
                }
            }
            // At least two, so that a table of no requests still lets the handshake out.
            if self.exchanges.len() >= self.limits.requests_in_flight.max(1).saturating_mul(2) {
                // What the client queued waits there, under `Limits::unsent_bytes`: a server
                // that takes POSTs and never ends them (answers to its own pings, say)
                // cannot make the session open exchanges without end.
                return;
            }
            self.frame.clear();
            let Some(sent) = self.client.poll_sent(&mut self.frame) else {
                return;
            };
            let mut body = core::mem::take(&mut self.frame);
            if body.last() == Some(&b'\n') {
                body.pop();
            }
            self.route(sent, body);
        }
    }

    /// What becomes of one message of the client's.
    fn route(&mut self, sent: Sent, body: Vec<u8>) {
        match sent {
            Sent::Notification(Notice::Cancelled { id }) => {
                // The reply stream is dropped either way; in 2026-07-28 that is the cancel.
                self.abort_request(id);
                if self.stateless(sent) {
                    return;
                }
            }
            Sent::Request {
                method: Method::Initialize,
                ..
            } if self.renewal == Renewal::Renewing => {
                self.post(sent, body);
                return;
            }
            // The level the session is to have goes first and alone, once the session is
            // open; what follows waits for its answer.
            Sent::Request { id, .. }
                if !self.opening_session() && self.client.leveling_request() == Some(id) =>
            {
                self.post(sent, body);
                return;
            }
            Sent::Notification(Notice::Initialized) => {
                // The session is open (again) once the server has taken this; what waits
                // goes out after that.
                if self.renewal == Renewal::Renewing {
                    self.renewal = Renewal::Renewed;
                }
                self.opening = Some(self.post(sent, body));
                return;
            }
            _ => {}
        }
        if self.holding() {
            self.held.push((sent, body));
        } else {
            self.post(sent, body);
        }
    }

    /// Whether messages wait: for a renewed session, for the server to take
    /// `notifications/initialized`, or for its answer to the `logging/setLevel` the client
    /// sent itself after the handshake.
    fn holding(&self) -> bool {
        self.opening_session() || self.client.leveling_request().is_some()
    }

    /// Whether messages wait for the session to be open: renewed, and its
    /// `notifications/initialized` taken.
    fn opening_session(&self) -> bool {
        self.renewal == Renewal::Renewing
            || self.opening.is_some()
            || matches!(self.sse.stage, Stage::Asked { .. })
    }

    /// Whether the messages held may go (or, the session open, the client's own
    /// `logging/setLevel` among them, the rest held again behind it).
    fn releasing(&self) -> bool {
        if self.held.is_empty() || self.opening_session() {
            return false;
        }
        let Some(leveling) = self.client.leveling_request() else {
            return true;
        };
        self.held
            .iter()
            .any(|(sent, _)| matches!(sent, Sent::Request { id, .. } if *id == leveling))
    }

    /// The revision `sent`'s headers name, if any.
    fn version_of(&self, sent: Sent) -> Option<ProtocolVersion> {
        match sent {
            Sent::Request { id, .. } => self.client.header_version(id),
            Sent::Notification(_) | Sent::Response => self.client.connection().map(|c| c.version),
        }
    }

    /// Whether `sent` goes out under 2026-07-28's rules.
    fn stateless(&self, sent: Sent) -> bool {
        self.version_of(sent)
            .is_some_and(|v| v.era() == Era::Stateless)
    }

    /// Makes the POST for one message.
    fn post(&mut self, sent: Sent, body: Vec<u8>) -> ExchangeId {
        let exchange = self.new_exchange();
        let mut headers: Headers = Vec::with_capacity(6);
        headers.push((
            Cow::Borrowed("Accept"),
            Cow::Borrowed("application/json, text/event-stream"),
        ));
        headers.push((
            Cow::Borrowed("Content-Type"),
            Cow::Borrowed("application/json"),
        ));
        let version = self.version_of(sent);
        let stateless = version.is_some_and(|v| v.era() == Era::Stateless);
        // 2026-07-28 has no sessions; its requests name what they do instead.
        let session = self.session_id.clone().filter(|_| !stateless);
        session_headers(&mut headers, session, version);
        if let (true, Sent::Request { method, .. }) = (stateless, sent) {
            self.routing_headers(method, &body, &mut headers);
        }
        let keep = match sent {
            Sent::Request { .. } if self.session_id.is_some() && !stateless => Some(body.clone()),
            Sent::Request { method, .. } if stateless && self.reissues(method) => {
                Some(body.clone())
            }
            _ => None,
        };
        if let (
            Sent::Request {
                id,
                method: Method::Initialize,
            },
            Stage::Unused { initialize },
        ) = (sent, &mut self.sse.stage)
        {
            *initialize = Some((id, body.clone()));
        }
        let reply = match sent {
            Sent::Request { .. } => Reply::Waiting,
            Sent::Notification(_) | Sent::Response => Reply::Ignored,
        };
        self.exchanges
            .push(Exchange::new(exchange, sent, keep, reply));
        // A subscription's stream lasts until it ends; until its acknowledgement its
        // operation's deadline aborts it, like any other.
        let lasting = matches!(
            sent,
            Sent::Request {
                method: Method::Listen,
                ..
            }
        );
        self.ready.push_back(HttpRequest {
            exchange,
            method: HttpMethod::Post,
            headers,
            body,
            path: self.sse.path().map(String::from),
            lasting,
        });
        exchange
    }

    /// `Mcp-Method`, `Mcp-Name` and `Mcp-Param-*` (2026-07-28), read from the body the
    /// client wrote.
    fn routing_headers(&self, method: Method, body: &[u8], headers: &mut Headers) {
        headers.push((Cow::Borrowed("Mcp-Method"), Cow::Borrowed(method.as_str())));
        let Method::Call(kind) = method else {
            return;
        };
        // The client's own compact JSON: read where it lies, up to the name and no further.
        let text = core::str::from_utf8(body).unwrap_or_default();
        let message = JsonRef::new(text).as_object();
        let Some(params) = message.and_then(|m| m.cursor().seek("params")?.enter()) else {
            return;
        };
        let key = match kind {
            CallKind::Tool | CallKind::Prompt => "name",
            CallKind::Resource => "uri",
        };
        let Some(name) = params.seek(key).and_then(|mut name| name.value().as_str()) else {
            return;
        };
        headers.push((
            Cow::Borrowed("Mcp-Name"),
            Cow::Owned(header_value(&name).into_owned()),
        ));
        if kind != CallKind::Tool {
            return;
        }
        let tool = self.client.catalog().and_then(|c| c.marked(&name));
        let markers = tool
            .and_then(|t| t.param_headers().ok())
            .unwrap_or_default();
        if markers.is_empty() {
            return;
        }
        let arguments = message
            .and_then(|m| m.get("params"))
            .and_then(JsonRef::as_object)
            .and_then(|params| params.get("arguments"));
        for marker in markers {
            // A value that does not fit its header was refused before sending, by the
            // application's check of the arguments; here it is left out, as absent.
            let value = arguments.and_then(|a| marker.value_in(a).ok().flatten());
            if let Some(value) = value {
                headers.push((Cow::Owned(marker.header_name()), Cow::Owned(value)));
            }
        }
    }

    fn new_exchange(&mut self) -> ExchangeId {
        self.next_exchange += 1;
        ExchangeId(self.next_exchange)
    }

    fn position(&self, exchange: ExchangeId) -> Option<usize> {
        self.exchanges.iter().position(|e| e.id == exchange)
    }

    /// Drops the exchange waiting on request `id`, telling the transport to stop reading it.
    fn abort_request(&mut self, id: i64) {
        let waiting = |e: &Exchange| matches!(e.sent, Sent::Request { id: r, .. } if r == id);
        self.held
            .retain(|(sent, _)| !matches!(sent, Sent::Request { id: r, .. } if *r == id));
        while let Some(at) = self.exchanges.iter().position(waiting) {
            let exchange = self.exchanges.swap_remove(at);
            self.scheduled.retain(|s| s.request.exchange != exchange.id);
            self.aborts.push_back(exchange.id);
        }
    }

    // ---- replies ------------------------------------------------------------------------

    /// The reply to `exchange` began: its status and the [`REPLY_HEADERS`](Self::REPLY_HEADERS).
    pub fn handle_head(&mut self, exchange: ExchangeId, head: ReplyHead<'_>, now: Instant) {
        self.client.handle_timeout(now);
        self.opened(exchange);
        if self.listening_on(exchange) {
            return self.listen_head(head);
        }
        if self.sse.stream() == Some(exchange) {
            return self.sse_head(head, now);
        }
        let Some(at) = self.position(exchange) else {
            return;
        };
        let Some(entry) = self.exchanges.get_mut(at) else {
            return;
        };
        let carried_session = entry.body.is_some() && self.session_id.is_some();
        let sent = entry.sent;
        let Sent::Request { id, method } = sent else {
            // 202 (or any status) to a notification or a response: nothing more to read.
            self.forget(at);
            if head.status == 404 && self.session_id.is_some() {
                self.expired(None, now);
            }
            return;
        };
        if head.status == 404 && carried_session {
            let body = entry.body.take().unwrap_or_default();
            self.forget(at);
            return self.expired(Some((sent, body)), now);
        }
        if head.status != 404 {
            self.renewal = match self.renewal {
                Renewal::Renewed => Renewal::Settled,
                other => other,
            };
        }
        if (200..300).contains(&head.status) && self.sse.path().is_some() {
            // Over the 2024-11-05 transport the reply says only that the server took the
            // message (`202 Accepted`); the answer comes on the stream.
            return self.forget(at);
        }
        if (200..300).contains(&head.status) {
            if method == Method::Initialize {
                if let Some(session) = head.session_id {
                    if !valid_session_id(session, self.limits.session_id_bytes) {
                        self.forget(at);
                        return self.client.fail(HttpError::InvalidSessionId.into());
                    }
                    self.session_id = Some(String::from(session));
                }
            }
            let reply = match media_type(head.content_type) {
                _ if head.status == 202 || head.status == 204 => None,
                Some(Media::Json) => Some(Reply::Json(Vec::new())),
                Some(Media::EventStream) => Some(Reply::Stream),
                None => {
                    self.forget(at);
                    return self
                        .client
                        .refuse(id, HttpError::ContentType.into(), false, now);
                }
            };
            let Some(reply) = reply else {
                self.forget(at);
                return self
                    .client
                    .refuse(id, HttpError::NoAnswer.into(), false, now);
            };
            if let Some(entry) = self.exchanges.get_mut(at) {
                if matches!(reply, Reply::Stream) && entry.stream.is_none() {
                    entry.stream = Some(SseReader::new(&self.limits));
                }
                entry.reply = reply;
            }
        } else if let Some(entry) = self.exchanges.get_mut(at) {
            let challenge = match head.status {
                401 | 403 => head.www_authenticate.and_then(Challenge::parse),
                _ => None,
            };
            entry.reply = Reply::Refused {
                status: head.status,
                body: Vec::new(),
                challenge,
            };
        }
    }

    /// Bytes of `exchange`'s reply body, cut anywhere.
    pub fn handle_body(&mut self, exchange: ExchangeId, mut bytes: &[u8], now: Instant) {
        self.client.handle_timeout(now);
        if self.listening_on(exchange) {
            return self.listen_body(bytes, now);
        }
        if self.sse.stream() == Some(exchange) {
            return self.sse_body(bytes, now);
        }
        let Some(at) = self.position(exchange) else {
            return;
        };
        let limit = self.limits.frame_bytes;
        let Some(entry) = self.exchanges.get_mut(at) else {
            return;
        };
        let Sent::Request { id, .. } = entry.sent else {
            return;
        };
        match &mut entry.reply {
            Reply::Json(body) => {
                if body.len().saturating_add(bytes.len()) >= limit {
                    self.abort(at);
                    let too_long = ProtocolViolation::FrameTooLong { limit };
                    return self.client.refuse(id, too_long.into(), false, now);
                }
                body.extend_from_slice(bytes);
            }
            Reply::Refused { body, .. } => {
                let room = limit.saturating_sub(body.len());
                body.extend_from_slice(bytes.get(..room.min(bytes.len())).unwrap_or_default());
            }
            Reply::Stream => {
                let Some(reader) = entry.stream.as_mut() else {
                    return;
                };
                loop {
                    match reader.next_event(&mut bytes) {
                        Sse::NeedMore => break,
                        Sse::TooLong { limit } => {
                            self.abort(at);
                            let too_long = ProtocolViolation::FrameTooLong { limit };
                            return self.client.refuse(id, too_long.into(), false, now);
                        }
                        Sse::Event(event) => {
                            if event.is_message() {
                                self.client.handle_message(event.data, now);
                            }
                        }
                    }
                }
                if !self.client.waits_for(id) {
                    // Answered (or ended otherwise): the rest of the stream is not needed.
                    self.abort(at);
                }
            }
            Reply::Waiting | Reply::Ignored => {}
        }
    }

    /// `exchange`'s reply body is complete.
    pub fn handle_end(&mut self, exchange: ExchangeId, now: Instant) {
        self.client.handle_timeout(now);
        let Some((at, id)) = self.ended_request(exchange, now) else {
            return;
        };
        let Some(entry) = self.exchanges.get_mut(at) else {
            return;
        };
        match core::mem::replace(&mut entry.reply, Reply::Ignored) {
            Reply::Json(body) => {
                self.forget(at);
                self.client.handle_message(&body, now);
                self.unanswered(id, now);
            }
            Reply::Refused {
                status,
                body,
                challenge,
            } => {
                self.forget(at);
                self.refused(id, status, &body, challenge, now);
            }
            Reply::Stream => {
                if let Some(reader) = entry.stream.as_mut() {
                    reader.end_of_stream();
                }
                self.stream_lost(at, id, HttpError::NoAnswer, now);
            }
            Reply::Waiting | Reply::Ignored => {
                self.forget(at);
                self.unanswered(id, now);
            }
        }
    }

    /// `exchange` has ended: a lasting one (a subscription's, the event stream) is lost, and
    /// for any other, the place it stands at and the request it carried, as
    /// [`request_or_forget`](Self::request_or_forget) gives them.
    fn ended_request(&mut self, exchange: ExchangeId, now: Instant) -> Option<(usize, i64)> {
        if self.listening_on(exchange) {
            self.listen_lost(now);
            return None;
        }
        if self.sse.stream() == Some(exchange) {
            self.sse_lost(HttpError::EventStreamEnded.into());
            return None;
        }
        self.request_or_forget(exchange)
    }

    /// The exchange at which `exchange` stands and the request it carried; an exchange
    /// that carried no request (a notification, a response, a `DELETE`) is forgotten, as
    /// nothing waits on its reply.
    fn request_or_forget(&mut self, exchange: ExchangeId) -> Option<(usize, i64)> {
        let at = self.position(exchange)?;
        match self.exchanges.get(at)?.sent {
            Sent::Request { id, .. } => Some((at, id)),
            Sent::Notification(_) | Sent::Response => {
                self.forget(at);
                None
            }
        }
    }

    /// The reply to request `id` is over: if its answer was not in it, the request fails.
    fn unanswered(&mut self, id: i64, now: Instant) {
        if self.client.waits_for(id) {
            self.client
                .refuse(id, HttpError::NoAnswer.into(), false, now);
        }
    }

    /// `exchange` failed: the connection broke, before or after the reply's head.
    pub fn handle_broken(&mut self, exchange: ExchangeId, now: Instant) {
        self.client.handle_timeout(now);
        self.opened(exchange);
        let Some((at, id)) = self.ended_request(exchange, now) else {
            return;
        };
        let Some(entry) = self.exchanges.get_mut(at) else {
            return;
        };
        // An error status already said how the request ended; what broke was its body.
        if let Reply::Refused {
            status,
            body,
            challenge,
        } = &mut entry.reply
        {
            let (status, body, challenge) = (*status, core::mem::take(body), challenge.take());
            self.forget(at);
            return self.refused(id, status, &body, challenge, now);
        }
        if let Some(reader) = entry.stream.as_mut() {
            reader.end_of_stream();
        }
        self.stream_lost(at, id, HttpError::StreamBroken, now);
    }

    /// The reply to `exchange` began or failed: if it carried `notifications/initialized`,
    /// the session is open and what waited may go.
    fn opened(&mut self, exchange: ExchangeId) {
        if self.opening == Some(exchange) {
            self.opening = None;
            self.start_listening();
        }
    }

    // ---- the GET stream ------------------------------------------------------------------

    fn listening_on(&self, exchange: ExchangeId) -> bool {
        matches!(self.listen, Listen::Active { exchange: e, .. } if e == exchange)
    }

    /// Asks for the `GET` stream, in an open session of the handshake revisions that has an
    /// id and has not been refused one.
    fn start_listening(&mut self) {
        let Some(session) = self.session_id.clone() else {
            return;
        };
        let version = self.client.connection().map(|c| c.version);
        let legacy = version.is_some_and(|v| v.era() == Era::Stateful);
        if !legacy || !matches!(self.listen, Listen::Idle) || self.opening_session() {
            return;
        }
        let exchange = self.new_exchange();
        let resume_from = self.listen_reader.last_event_id().and_then(header_safe);
        self.listen = Listen::Active {
            exchange,
            open: false,
        };
        self.ready.push_back(stream_request(
            exchange,
            Some(session),
            version,
            resume_from,
        ));
    }

    fn listen_head(&mut self, head: ReplyHead<'_>) {
        match (&mut self.listen, event_stream(head)) {
            (Listen::Active { open, .. }, true) => *open = true,
            (Listen::Active { exchange, .. }, false) => {
                // 405 is the usual "none offered"; whatever refused it, it is not asked again.
                self.aborts.push_back(*exchange);
                self.listen = Listen::Off;
            }
            _ => {}
        }
    }

    fn listen_body(&mut self, mut bytes: &[u8], now: Instant) {
        if !matches!(self.listen, Listen::Active { open: true, .. }) {
            return;
        }
        loop {
            match self.listen_reader.next_event(&mut bytes) {
                Sse::NeedMore => return,
                Sse::TooLong { .. } => {
                    if let Listen::Active { exchange, .. } = self.listen {
                        self.aborts.push_back(exchange);
                    }
                    return self.listen_lost(now);
                }
                Sse::Event(event) => {
                    self.listen_failures = 0;
                    if event.is_message() {
                        self.client.handle_message(event.data, now);
                    }
                }
            }
        }
    }

    /// The `GET` stream ended, broke or was refused mid-way: asked for again after its
    /// `retry` time (1 s if it set none), at most [`Limits::stream_resumes`] times in a row
    /// without an event between.
    fn listen_lost(&mut self, now: Instant) {
        self.listen_reader.end_of_stream();
        self.listen_failures += 1;
        self.listen = if self.listen_failures > self.limits.stream_resumes {
            Listen::Off
        } else {
            let retry = self.listen_reader.retry_ms().unwrap_or(1000);
            Listen::Waiting {
                at: now.saturating_add(core::time::Duration::from_millis(retry)),
            }
        };
    }

    /// The reply to request `id` ended or broke before its answer: resume the stream where
    /// the revision and the stream's event id allow, else fail the request with `error`.
    fn stream_lost(&mut self, at: usize, id: i64, error: HttpError, now: Instant) {
        if !self.client.waits_for(id) {
            return self.forget(at);
        }
        // Only a session of the handshake revisions resumes streams; 2026-07-28 sends the
        // request again instead.
        let resumable = self.session_id.is_some();
        if !resumable {
            return self.reissue(at, id, error, now);
        }
        let Some(entry) = self.exchanges.get_mut(at) else {
            return;
        };
        let event_id = entry
            .stream
            .as_ref()
            .and_then(SseReader::last_event_id)
            .and_then(header_safe);
        let (Some(event_id), true) = (
            event_id,
            resumable && entry.resumes < self.limits.stream_resumes,
        ) else {
            self.forget(at);
            return self.client.refuse(id, error.into(), false, now);
        };
        entry.resumes += 1;
        entry.reply = Reply::Waiting;
        let retry = entry
            .stream
            .as_ref()
            .and_then(SseReader::retry_ms)
            .unwrap_or(0);
        // The resumption is a new exchange carrying the same request and reader.
        self.next_exchange += 1;
        let exchange = ExchangeId(self.next_exchange);
        entry.id = exchange;
        let request = stream_request(
            exchange,
            self.session_id.clone(),
            self.client.connection().map(|c| c.version),
            Some(event_id),
        );
        self.scheduled.push(Scheduled {
            at: now.saturating_add(core::time::Duration::from_millis(retry)),
            request,
        });
    }

    /// Whether a 2026-07-28 request of `method` is sent again when its reply is lost: every
    /// one but a tool call, which the application may allow
    /// ([`Config::reissue_broken_calls`]), and a subscription.
    fn reissues(&self, method: Method) -> bool {
        match method {
            Method::Call(CallKind::Tool) => self.reissue_calls,
            // A subscription sent again would be a new one, unacknowledged, after changes
            // that may have been missed: its end is the application's to hear.
            Method::Listen => false,
            _ => true,
        }
    }

    /// The reply to request `id`, of exchange `at`, was lost before its answer, and no
    /// stream resumes it. A 2026-07-28 request whose body was kept for this is sent again
    /// under a new id, as the revision says, at most [`Limits::stream_resumes`] times within
    /// its operation's deadline; any other fails with `error`.
    fn reissue(&mut self, at: usize, id: i64, error: HttpError, now: Instant) {
        let Some(entry) = self.exchanges.get_mut(at) else {
            return;
        };
        let (sent, resumes, body) = (entry.sent, entry.resumes, entry.body.take());
        self.forget(at);
        let again = match (sent, body) {
            (Sent::Request { method, .. }, Some(body)) if resumes < self.limits.stream_resumes => {
                Some((method, body))
            }
            _ => None,
        };
        let Some((method, body)) = again else {
            return self.client.refuse(id, error.into(), false, now);
        };
        let Some(new) = self.client.reissue(id, error.clone().into(), now) else {
            return;
        };
        let Some(body) = with_id(&body, id, new) else {
            return self.client.refuse(new, error.into(), false, now);
        };
        let exchange = self.post(Sent::Request { id: new, method }, body);
        if let Some(entry) = self
            .position(exchange)
            .and_then(|at| self.exchanges.get_mut(at))
        {
            entry.resumes = resumes + 1;
        }
    }

    /// An error status to request `id`, with its body: a 401, or a 403 with a `Bearer`
    /// challenge, fails it as a refused authorization, whatever the body says; otherwise a
    /// JSON-RPC error in the body answers the request; anything else fails it by the status.
    fn refused(
        &mut self,
        id: i64,
        status: u16,
        body: &[u8],
        challenge: Option<Challenge>,
        now: Instant,
    ) {
        if status == 401 || challenge.is_some() {
            return self.refused_by_status(id, status, challenge, now);
        }
        let error = match parse_frame(body, &self.limits) {
            Ok(Message::Response(response)) => match response.outcome {
                Outcome::Error(error) => Some(error),
                Outcome::Result(_) => None,
            },
            Ok(Message::UnboundError(error)) => Some(error),
            _ => None,
        };
        if let Some(error) = error {
            return self.client.answer_error(id, error, now);
        }
        let unsettled = self.session_id.is_some() || self.renewal != Renewal::Settled;
        if matches!(status, 400 | 404 | 405) && !unsettled {
            if let Some(body) = self.sse.initialize(id) {
                return self.ask_for_sse(id, body, status);
            }
        }
        self.refused_by_status(id, status, None, now);
    }

    /// Request `id` failed by an error status, with nothing in its body to say more than the
    /// `Bearer` challenge of a 401 or 403.
    fn refused_by_status(
        &mut self,
        id: i64,
        status: u16,
        challenge: Option<Challenge>,
        now: Instant,
    ) {
        let (error, legacy) = match status {
            401 => (HttpError::Unauthorized(challenge), false),
            403 => (HttpError::Forbidden(challenge), false),
            300..=399 => (HttpError::Redirected { status }, false),
            400 | 404 | 405 => (HttpError::Status { status }, true),
            _ => (HttpError::Status { status }, false),
        };
        self.client.refuse(id, error.into(), legacy, now);
    }

    // ---- the 2024-11-05 transport ----------------------------------------------------------

    /// The server refused `initialize` (request `id`, `body`) as a POST with `status`: ask
    /// for the event stream of the 2024-11-05 transport, at the same URL.
    fn ask_for_sse(&mut self, id: i64, body: Vec<u8>, status: u16) {
        let exchange = self.new_exchange();
        self.sse.stage = Stage::Asked {
            exchange,
            open: false,
            id,
            body,
            status,
        };
        self.ready.push_back(HttpRequest {
            exchange,
            method: HttpMethod::Get,
            headers: alloc::vec![(Cow::Borrowed("Accept"), Cow::Borrowed("text/event-stream"))],
            body: Vec::new(),
            path: None,
            lasting: true,
        });
    }

    /// Drops the 2024-11-05 transport's stream once nothing can come of it: the `initialize`
    /// it waits to send was given up (its deadline passed), or the connection failed.
    fn drop_unneeded_stream(&mut self) {
        let unneeded = match self.sse.stage {
            Stage::Asked { id, .. } => !self.client.waits_for(id),
            Stage::Open { .. } => self.client.is_failed(),
            Stage::Unused { .. } | Stage::Ended => false,
        };
        if unneeded {
            self.aborts.extend(self.sse.stream());
            self.sse.stage = Stage::Ended;
        }
    }

    fn sse_head(&mut self, head: ReplyHead<'_>, now: Instant) {
        let stream = event_stream(head);
        match &mut self.sse.stage {
            Stage::Asked { open, .. } if stream => *open = true,
            Stage::Asked {
                exchange,
                id,
                status,
                ..
            } => {
                // Not a server of that transport either: the POST's refusal stands.
                let (exchange, id, status) = (*exchange, *id, *status);
                self.aborts.push_back(exchange);
                self.sse.stage = Stage::Ended;
                self.refused_by_status(id, status, None, now);
            }
            Stage::Unused { .. } | Stage::Open { .. } | Stage::Ended => {}
        }
    }

    fn sse_body(&mut self, mut bytes: &[u8], now: Instant) {
        if matches!(self.sse.stage, Stage::Asked { open: false, .. }) {
            return;
        }
        let limit = self.limits.session_id_bytes;
        loop {
            let endpoint = match self.sse.reader.next_event(&mut bytes) {
                Sse::NeedMore => return,
                Sse::TooLong { limit } => {
                    self.aborts.extend(self.sse.stream());
                    return self.sse_lost(ProtocolViolation::FrameTooLong { limit }.into());
                }
                Sse::Event(event) if event.event == b"endpoint" => {
                    resolve(event.data, self.base.as_ref(), limit)
                }
                Sse::Event(event) => {
                    if event.is_message() {
                        self.client.handle_message(event.data, now);
                    }
                    continue;
                }
            };
            if !matches!(self.sse.stage, Stage::Asked { .. }) {
                // The endpoint is named once; a later one changes nothing.
                continue;
            }
            let Stage::Asked {
                exchange, id, body, ..
            } = core::mem::replace(&mut self.sse.stage, Stage::Ended)
            else {
                continue;
            };
            if let Ok(path) = endpoint {
                self.sse.stage = Stage::Open { exchange, path };
                self.post(
                    Sent::Request {
                        id,
                        method: Method::Initialize,
                    },
                    body,
                );
            } else {
                self.aborts.push_back(exchange);
                self.client
                    .refuse(id, HttpError::MessageEndpoint.into(), false, now);
                return;
            }
        }
    }

    /// The 2024-11-05 transport's stream ended, broke or was refused mid-way: nothing more
    /// can be answered, and the connection fails with `error`.
    fn sse_lost(&mut self, error: Error) {
        self.sse.stage = Stage::Ended;
        self.client.fail(error);
    }

    /// The server said the session expired (404). Renew it once, sending `request` again
    /// in the new one; a second expiry in a row fails the connection.
    fn expired(&mut self, request: Option<(Sent, Vec<u8>)>, now: Instant) {
        if self.renewal != Renewal::Settled {
            return self.client.fail(HttpError::SessionRenewalFailed.into());
        }
        self.session_id = None;
        self.renewal = Renewal::Renewing;
        self.opening = None;
        if let Listen::Active { exchange, .. } = self.listen {
            self.aborts.push_back(exchange);
        }
        if !matches!(self.listen, Listen::Off) {
            self.listen = Listen::Idle;
        }
        let keep = match &request {
            Some((Sent::Request { id, .. }, _)) => Some(*id),
            _ => None,
        };
        // Every other exchange belonged to the old session.
        for exchange in self.exchanges.drain(..) {
            self.aborts.push_back(exchange.id);
        }
        self.scheduled.clear();
        self.held.extend(request);
        self.client.renew_session(keep, now);
    }

    /// Forgets exchange `at`, whose reply the transport reads to its end or has.
    fn forget(&mut self, at: usize) {
        if at < self.exchanges.len() {
            self.exchanges.swap_remove(at);
        }
    }

    /// Forgets exchange `at`, and tells the transport to stop reading its reply.
    fn abort(&mut self, at: usize) {
        if at < self.exchanges.len() {
            let exchange = self.exchanges.swap_remove(at);
            self.aborts.push_back(exchange.id);
        }
    }
}

impl Exchange {
    fn new(id: ExchangeId, sent: Sent, body: Option<Vec<u8>>, reply: Reply) -> Self {
        Exchange {
            id,
            sent,
            body,
            reply,
            stream: None,
            resumes: 0,
        }
    }
}

/// Adds what names a handshake revision's session to `headers`: its id, and the revision
/// once one is agreed.
fn session_headers(
    headers: &mut Headers,
    session: Option<String>,
    version: Option<ProtocolVersion>,
) {
    if let Some(session) = session {
        headers.push((Cow::Borrowed("Mcp-Session-Id"), Cow::Owned(session)));
    }
    if let Some(version) = version {
        headers.push((
            Cow::Borrowed("MCP-Protocol-Version"),
            Cow::Borrowed(version.as_str()),
        ));
    }
}

/// A `GET` for an event stream of a handshake revision's session (the one it listens on, or
/// one resumed), from the event after `resume_from` when there is one.
fn stream_request(
    exchange: ExchangeId,
    session: Option<String>,
    version: Option<ProtocolVersion>,
    resume_from: Option<String>,
) -> HttpRequest {
    let mut headers: Headers = Vec::with_capacity(4);
    headers.push((Cow::Borrowed("Accept"), Cow::Borrowed("text/event-stream")));
    session_headers(&mut headers, session, version);
    if let Some(id) = resume_from {
        headers.push((Cow::Borrowed("Last-Event-ID"), Cow::Owned(id)));
    }
    HttpRequest {
        exchange,
        method: HttpMethod::Get,
        headers,
        body: Vec::new(),
        path: None,
        lasting: false,
    }
}

/// `body`, a request this client wrote as request `old`, written as request `new`: the
/// envelope writer puts the id first, so only the digits after `{"jsonrpc":"2.0","id":` change.
fn with_id(body: &[u8], old: i64, new: i64) -> Option<Vec<u8>> {
    const HEAD: &[u8] = br#"{"jsonrpc":"2.0","id":"#;
    let old = alloc::format!("{old}");
    let rest = body.strip_prefix(HEAD)?.strip_prefix(old.as_bytes())?;
    if rest.first().is_some_and(u8::is_ascii_digit) {
        return None;
    }
    let new = alloc::format!("{new}");
    let mut out = Vec::with_capacity(body.len() + new.len());
    out.extend_from_slice(HEAD);
    out.extend_from_slice(new.as_bytes());
    out.extend_from_slice(rest);
    Some(out)
}

/// The two media types a reply may have.
enum Media {
    Json,
    EventStream,
}

/// A `Content-Type`'s media type, ignoring case and parameters.
fn media_type(content_type: Option<&str>) -> Option<Media> {
    let essence = content_type?.split(';').next()?.trim();
    if essence.eq_ignore_ascii_case("application/json") {
        Some(Media::Json)
    } else if essence.eq_ignore_ascii_case("text/event-stream") {
        Some(Media::EventStream)
    } else {
        None
    }
}

/// Whether a reply opens an event stream: a success, of type `text/event-stream`.
fn event_stream(head: ReplyHead<'_>) -> bool {
    (200..300).contains(&head.status)
        && matches!(media_type(head.content_type), Some(Media::EventStream))
}

/// An event id as a `Last-Event-ID` value: `None` unless it is plain, non-empty ASCII.
fn header_safe(id: &[u8]) -> Option<String> {
    let plain = !id.is_empty() && id.iter().all(|b| (0x20..=0x7E).contains(b));
    plain
        .then(|| core::str::from_utf8(id).ok().map(String::from))
        .flatten()
}

/// A session id: 1 to `limit` bytes of visible ASCII (0x21 to 0x7E).
fn valid_session_id(id: &str, limit: usize) -> bool {
    (1..=limit).contains(&id.len()) && id.bytes().all(|b| (0x21..=0x7E).contains(&b))
}
