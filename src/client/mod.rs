//! The sans-io MCP client: commands queue work, input arrives through `handle_*`, output
//! leaves through `poll_*`. The client is a dispatcher: it binds each answer to the
//! operation waiting for it in the request table and lets that operation's machine decide.

mod asks;
mod binding;
mod commands;
mod progress;
mod requests;
mod send;
mod subscriptions;
mod transmit;

use alloc::collections::VecDeque;
use alloc::{string::String, vec::Vec};
use core::time::Duration;

use crate::asks::{Asks, Ticket};
use crate::catalog::{Catalog, CatalogPolicy};
use crate::error::{Error, HttpError, ProtocolViolation};
use crate::event::{Event, OpId, Output, ServerNotification};
use crate::frame::{FrameReader, Framed};
use crate::id::RequestId;
use crate::json::view::{JsonRef, Object};
use crate::json::RawObject;
use crate::message::{FrameParser, Incoming, Message, Outcome, Request};
use crate::method::Method;
use crate::ops::handshake::{client_info, request_meta};
use crate::ops::{Context, Operation, Step};
use crate::roots::roots_result;
use crate::rpc_error::{ErrorCode, RpcError};
use crate::server::Connected;
use crate::time::Instant;
use crate::version::{Era, ProtocolChoice, ProtocolVersion};
use crate::{Allowlist, Limits, LogLevel, Root};
use asks::Awaiting;

pub use progress::CallOptions;
use requests::{Bound, Requests};
use transmit::Transmit;
pub(crate) use transmit::{Notice, Sent};

/// How a [`Client`] is set up. Start from [`Config::new`] and change the fields you need.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct Config {
    /// Every bound the client enforces.
    pub limits: Limits,
    /// Which protocol revisions to speak. Default: [`ProtocolChoice::Auto`].
    pub protocol: ProtocolChoice,
    /// The oldest revision a server may answer `initialize` with. Default:
    /// [`ProtocolVersion::V2025_06_18`], and a server that answers 2024-11-05 or 2025-03-26
    /// is refused ([`Incompatible::UnsupportedVersion`](crate::Incompatible::UnsupportedVersion))
    /// before anything is listed, as the seeds' checkpoint asks.
    ///
    /// Set [`ProtocolVersion::V2024_11_05`] to reach servers built before 2025-06-18 (the
    /// archived reference servers, on the TypeScript SDK 1.0, speak only 2024-11-05). The
    /// client still offers the newest revision it accepts, and the session is the one the
    /// server chose: none of the later revisions' additions (structured results, output
    /// schemas, elicitation) is asked of it, and nothing else changes. A
    /// [`ProtocolChoice::Pinned`] revision is accepted whatever this says.
    pub oldest_version: ProtocolVersion,
    /// The name this client gives in `clientInfo`. Default: `mcp-sansio`.
    pub client_name: String,
    /// The version this client gives in `clientInfo`. Default: this crate's version.
    pub client_version: String,
    /// The tools the application allows to be called.
    pub allowlist: Allowlist,
    /// What to do with invalid tools in a catalog. Default: [`CatalogPolicy::STRICT`].
    pub catalog_policy: CatalogPolicy,
    /// How long the `server/discover` probe of [`ProtocolChoice::Auto`] waits before taking
    /// silence for a stateful server. Default: 2 s. It never takes more than half of the
    /// handshake's deadline, so the fallback to `initialize` always has time. It is also the
    /// longest the client's own `logging/setLevel` after a handshake
    /// ([`log_level`](Self::log_level)) waits for its answer.
    pub probe_timeout: Duration,
    /// Over Streamable HTTP in 2026-07-28, whether a `tools/call` whose reply stream broke or
    /// ended before its answer is sent again under a new id. Default: `false`, and the call
    /// fails with [`HttpError::StreamBroken`](crate::HttpError::StreamBroken) (or
    /// [`HttpError::NoAnswer`](crate::HttpError::NoAnswer), for a stream that ended).
    ///
    /// The revision says a broken stream loses its request and the client MUST send it
    /// again; every other request (a listing, `server/discover`, reading a resource or a
    /// prompt) is, at most [`Limits::stream_resumes`] times. A tool call may have run before
    /// the stream broke, and only the application knows whether running it twice is safe:
    /// set this where every allowed tool may run twice.
    pub reissue_broken_calls: bool,
    /// The roots this client gives servers: the directories the application lets them work
    /// in. Default: `None`, and no `roots` capability is declared (a server's `roots/list`
    /// gets -32601).
    ///
    /// With `Some` (even an empty list), the `initialize` of 2025-06-18 and 2025-11-25
    /// declares `roots` with `listChanged`, and every `roots/list` a server sends is
    /// answered with these; [`Client::set_roots`] changes them and tells the server. A server
    /// that touches files (the reference filesystem server) keeps to its roots, so a root is
    /// a grant, and only the application gives one. In 2026-07-28 every request declares
    /// `roots` in its `_meta`, and a call answered with an `input_required` result asking for
    /// the roots is sent again with these (at most [`Limits::input_rounds`] times). The whole
    /// answer must fit in [`Limits::frame_bytes`]: [`Client::connect`] refuses a list that
    /// would not.
    pub roots: Option<Vec<Root>>,
    /// What a server may ask of the application: elicitation, sampling. Default:
    /// [`Asks::NONE`], and such requests get -32601.
    ///
    /// What these name is declared as capabilities: in the `initialize` of 2025-06-18 and
    /// 2025-11-25, and in every 2026-07-28 request's `_meta`. Each such request whose params
    /// have the revision's shape becomes an [`Event::ServerRequest`], at most
    /// [`Limits::asks_waiting`] at a time, and gets exactly the answer the application gives
    /// with [`Client::answer`]; one of a mode or kind not declared, or malformed, gets
    /// -32602 and is never seen. In 2026-07-28 a server asks through a call's
    /// `input_required` result: the call waits, under its one deadline, until the
    /// application has answered every question, then goes again with the answers (an error
    /// for an answer ends it with [`Error::Refused`](crate::Error::Refused)).
    pub asks: Asks,
    /// The level of log messages to ask every server for from the start, and to keep
    /// asking for. Default: `None`, and nothing is asked until
    /// [`Client::set_log_level`].
    ///
    /// In 2025-06-18 and 2025-11-25 the client sends `logging/setLevel` itself right after
    /// `notifications/initialized`, where the server declared `logging` (nothing is asked of
    /// one that did not; the request is not counted in [`Limits::requests_in_flight`]). Over
    /// Streamable HTTP, which keeps no order between requests, nothing else goes out until
    /// it is answered, so the session's first request is told at that level; it waits
    /// [`probe_timeout`](Self::probe_timeout) at most, so a server that never answers it
    /// holds the session no longer. Its answer is not an event: a server that refuses it
    /// sends what it sends, and each message names its level. An HTTP session the client
    /// renews after a 404 is asked again, at the level [`Client::set_log_level`] last asked
    /// for if it did. In 2026-07-28 every request but `server/discover` carries the level
    /// in its `_meta`.
    pub log_level: Option<LogLevel>,
}

impl Config {
    /// The defaults, with the application's allowlist.
    #[must_use]
    pub fn new(allowlist: Allowlist) -> Self {
        Config {
            limits: Limits::default(),
            protocol: ProtocolChoice::Auto,
            oldest_version: ProtocolVersion::V2025_06_18,
            client_name: String::from("mcp-sansio"),
            client_version: String::from(env!("CARGO_PKG_VERSION")),
            allowlist,
            catalog_policy: CatalogPolicy::STRICT,
            probe_timeout: Duration::from_secs(2),
            reissue_broken_calls: false,
            roots: None,
            asks: Asks::NONE,
            log_level: None,
        }
    }
}

#[derive(Debug)]
enum State {
    Idle,
    Connecting,
    Ready(Session),
    Failed,
}

#[derive(Debug)]
struct Session {
    connected: Connected,
    /// The `_meta` object of every request (2026-07-28), or `None` for a stateful session.
    meta: Option<String>,
}

/// What answered a request: a result (validated, compact object text, wherever it lies), or
/// a JSON-RPC error.
enum Answer<'a> {
    Result(&'a str),
    Error(RpcError),
}

/// An operation waiting for the answer to its request: the request table's entry.
#[derive(Debug)]
struct InFlight {
    op: OpId,
    method: Method,
    /// The operation's one deadline, set when it started; later requests keep it. Only a
    /// call's progress moves it ([`CallOptions::progress_up_to`]).
    deadline: Instant,
    /// How the call's progress moves its deadline, where it asked for progress.
    progress: Option<progress::Progress>,
    operation: Operation,
}

impl InFlight {
    /// Whether its deadline, or its operation's own timer, has come by `now`: never for a
    /// subscription that stands.
    fn due(&self, now: Instant) -> bool {
        !self.operation.standing()
            && (self.deadline <= now || self.operation.timer().is_some_and(|t| t <= now))
    }
}

/// The client side of one MCP connection, as a state machine with no I/O and no clock.
///
/// # The run loop
///
/// - **Commands** ([`connect`](Self::connect), [`list_tools`](Self::list_tools),
///   [`call_tool`](Self::call_tool), ...) only queue work. Each returns the typed [`Op`](crate::Op)
///   handle of its operation, or refuses at once with a [`Misuse`](crate::Misuse) and queues
///   nothing.
/// - **Input** arrives through [`handle_input`](Self::handle_input) (bytes from the server,
///   cut anywhere), [`handle_timeout`](Self::handle_timeout) (the clock reached
///   [`poll_timeout`](Self::poll_timeout)) and [`handle_close`](Self::handle_close) (the
///   server's output ended).
/// - **Output** leaves through [`poll_transmit`](Self::poll_transmit) (frames to write to
///   the server), [`poll_event`](Self::poll_event) (what happened) and
///   [`poll_timeout`](Self::poll_timeout) (when to call `handle_timeout` next).
///
/// **The drain rule:** after every command and every `handle_*` call, write every frame
/// `poll_transmit` gives, take every event `poll_event` gives, then wait for input until
/// `poll_timeout`, and no longer. After any I/O, check [`is_pending`](Self::is_pending) for
/// the operation awaited before waiting again: a write that failed may have ended it. Time
/// is an [`Instant`] the caller passes; it must never go backwards, and an early or repeated
/// `handle_timeout` is harmless.
///
/// Every operation ends with exactly one [`Event::Finished`]. Each has one deadline
/// ([`Limits::operation_timeout`] after the command, or a call's own
/// [`CallOptions`]) that covers all of its frames, so a server that trickles bytes cannot
/// stretch it; only the progress a call asked for moves it, up to the call's hard maximum.
/// On expiry the operation fails with [`Error::Timeout`], and for any request but
/// `initialize` a `notifications/cancelled` is queued. A peer that breaks the protocol
/// (malformed or oversized frames, answers to ids never sent or already answered) fails the
/// whole connection: see [`Event::Failed`].
#[derive(Debug)]
pub struct Client {
    config: Config,
    client_info: String,
    reader: FrameReader,
    parser: FrameParser,
    requests: Requests<InFlight>,
    next_op: u64,
    state: State,
    catalog: Option<Catalog>,
    transmit: Transmit,
    events: VecDeque<Event>,
    /// Finds `"resultType"` in a result before the result is walked for it.
    result_type: memchr::memmem::Finder<'static>,
    /// Whether tools are read as over Streamable HTTP: those whose `x-mcp-header` markers
    /// break the rules are left out of a 2026-07-28 catalog.
    header_markers: bool,
    /// The operation renewing an expired HTTP session, which no command started: its end
    /// is not an event.
    renewal: Option<OpId>,
    /// The capabilities the handshake revisions' `initialize` declares, and those every
    /// 2026-07-28 request does.
    capabilities: [String; 2],
    /// The server's requests waiting for the application's answer, oldest first.
    asks: Vec<(Ticket, Awaiting)>,
    /// Calls waiting for the application's answers before they go again (2026-07-28).
    parked: Vec<InFlight>,
    /// The ticket the next of them gets.
    next_ticket: u64,
    /// The latest time a `handle_*` call was given.
    now: Instant,
    /// The level of the server's log messages asked for ([`Config::log_level`], then
    /// [`set_log_level`](Self::set_log_level)): written into every 2026-07-28 request's
    /// `_meta`, and asked for again in a renewed session of a handshake revision.
    log_level: Option<LogLevel>,
    /// The `logging/setLevel` the client sent itself after a handshake, which no command
    /// started: its end is not an event. `Some` exactly while its request is in the table,
    /// as every way out of the table ends the operation (`finish`, or a failed connection).
    leveling: Option<OpId>,
}

impl Client {
    /// A client that has sent nothing yet; call [`connect`](Self::connect) first.
    #[must_use]
    pub fn new(config: Config) -> Self {
        Client {
            client_info: client_info(&config.client_name, &config.client_version),
            reader: FrameReader::new(&config.limits),
            parser: FrameParser::new(&config.limits),
            requests: Requests::new(config.limits.remembered_abandoned_ids),
            next_op: 0,
            state: State::Idle,
            catalog: None,
            transmit: Transmit::default(),
            events: VecDeque::new(),
            result_type: memchr::memmem::Finder::new(b"\"resultType\""),
            header_markers: false,
            renewal: None,
            capabilities: [
                capabilities(&config, Era::Stateful),
                capabilities(&config, Era::Stateless),
            ],
            asks: Vec::new(),
            parked: Vec::new(),
            next_ticket: 0,
            now: Instant::ZERO,
            log_level: config.log_level,
            leveling: None,
            config,
        }
    }

    /// What the handshake established, once it has finished.
    pub fn connection(&self) -> Option<&Connected> {
        match &self.state {
            State::Ready(session) => Some(&session.connected),
            _ => None,
        }
    }

    /// The catalog of the last completed `tools/list`.
    pub fn catalog(&self) -> Option<&Catalog> {
        self.catalog.as_ref()
    }

    /// The application's allowlist, as fixed when the client was made.
    pub fn allowlist(&self) -> &Allowlist {
        &self.config.allowlist
    }

    /// How many requests are waiting for an answer.
    pub fn in_flight(&self) -> usize {
        self.requests.len()
    }

    /// Whether operation `op` is still in progress: its [`Event::Finished`] has not been
    /// queued yet. A driver awaiting `op` re-checks this after every I/O before it waits.
    pub fn is_pending(&self, op: impl Into<OpId>) -> bool {
        let op = op.into();
        self.requests.iter().any(|(_, request)| request.op == op)
            || self.parked.iter().any(|request| request.op == op)
    }

    /// Whether the connection has failed (see [`Event::Failed`]).
    pub fn is_failed(&self) -> bool {
        matches!(self.state, State::Failed)
    }

    // ---- input -------------------------------------------------------------------------

    /// Takes bytes the server wrote, cut anywhere. Deadlines up to `now` are applied first,
    /// so an answer that arrives after its deadline is late, however its bytes trickled.
    pub fn handle_input(&mut self, mut bytes: &[u8], now: Instant) {
        self.handle_timeout(now);
        // The reader is set aside while its frames are handled, so that a frame can be read
        // where it lies (in `bytes`, or in the reader's buffer) without a copy.
        let mut reader = core::mem::replace(&mut self.reader, FrameReader::new(&Limits::default()));
        while !self.is_failed() {
            match reader.next_frame(&mut bytes) {
                Framed::NeedMore => break,
                Framed::TooLong { limit } => {
                    self.fail_connection(ProtocolViolation::FrameTooLong { limit }.into());
                }
                Framed::Frame(frame) => self.on_frame(frame),
            }
        }
        self.reader = reader;
    }

    /// Takes one whole message from a transport that frames messages itself (an HTTP
    /// response body, a server-sent event's data): no newline framing applies, and newlines
    /// inside it are JSON whitespace. A message of [`Limits::frame_bytes`] bytes or more is
    /// refused as a frame that long would be. Deadlines up to `now` are applied first.
    pub fn handle_message(&mut self, message: &[u8], now: Instant) {
        self.handle_timeout(now);
        if self.is_failed() {
            return;
        }
        let limit = self.config.limits.frame_bytes;
        if message.len() >= limit {
            self.fail_connection(ProtocolViolation::FrameTooLong { limit }.into());
        } else {
            self.on_frame(message);
        }
    }

    /// One message's bytes, parsed and handled.
    fn on_frame(&mut self, frame: &[u8]) {
        match self.parser.parse_incoming(frame) {
            Ok(Incoming::Result { id, result }) => self.on_response(id, Answer::Result(&result)),
            Ok(Incoming::Other(message)) => self.on_message(message),
            Err(error) => self.fail_connection(error),
        }
    }

    /// Applies every deadline and timer up to `now`. Harmless when early or repeated.
    pub fn handle_timeout(&mut self, now: Instant) {
        self.now = self.now.max(now);
        let parked: Vec<OpId> = self
            .parked
            .iter()
            .filter(|r| r.deadline <= now)
            .map(|r| r.op)
            .collect();
        for op in parked {
            self.end_parked(op, |method| Error::Timeout {
                operation: method.operation(),
            });
        }
        let due: Vec<i64> = self
            .requests
            .iter()
            .filter(|(_, r)| r.due(now))
            .map(|(id, _)| id)
            .collect();
        for id in due {
            // A request due now may have ended already in this sweep, with the connection.
            let Some(mut request) = self.requests.remove(id) else {
                continue;
            };
            if request.deadline <= now {
                let operation = request.method.operation();
                self.requests.remember(id, true);
                self.end_abandoned(id, request, Error::Timeout { operation });
                continue;
            }
            // The operation's own timer: its request is abandoned, a late answer ignored.
            self.requests.remember(id, false);
            let ctx = self.context();
            match request.operation.on_timer(now, &ctx) {
                Some(step) => self.apply(request, step),
                None => self.finish(
                    request.op,
                    Err(Error::Timeout {
                        operation: request.method.operation(),
                    }),
                ),
            }
        }
    }

    /// The server's output ended. Every operation in flight fails with [`Error::Closed`].
    pub fn handle_close(&mut self) {
        if !self.is_failed() {
            self.fail_connection(Error::Closed);
        }
    }

    // ---- output ------------------------------------------------------------------------

    /// Appends the next frame to write to the server, newline included, to `out`; returns
    /// its length, or `None` when nothing is queued. Nothing is allocated here once `out`
    /// has room.
    ///
    /// Take frames as fast as the server takes bytes, not faster: what a server does not read
    /// then waits here, under [`Limits::unsent_bytes`](crate::Limits), and a server that
    /// stops reading fails the connection instead of growing a buffer of the transport's.
    #[must_use = "a frame the client queued must be written to the server"]
    pub fn poll_transmit(&mut self, out: &mut Vec<u8>) -> Option<usize> {
        self.transmit.pop_into(out).map(|(len, _)| len)
    }

    /// As [`poll_transmit`](Self::poll_transmit), also saying what the frame carries: for a
    /// transport that sends each message on its own.
    pub(crate) fn poll_sent(&mut self, out: &mut Vec<u8>) -> Option<Sent> {
        self.transmit.pop_into(out).map(|(_, sent)| sent)
    }

    /// The next event.
    #[must_use = "events carry the ends of operations"]
    pub fn poll_event(&mut self) -> Option<Event> {
        self.events.pop_front()
    }

    /// When [`handle_timeout`](Self::handle_timeout) must be called next, if anything waits.
    /// A transport waits for input no longer than this.
    #[must_use = "waiting past it leaves operations past their deadlines"]
    pub fn poll_timeout(&self) -> Option<Instant> {
        self.requests
            .iter()
            .filter(|(_, r)| !r.operation.standing())
            .map(|(_, r)| {
                r.operation
                    .timer()
                    .map_or(r.deadline, |t| t.min(r.deadline))
            })
            .chain(self.parked.iter().map(|r| r.deadline))
            .min()
    }

    // ---- dispatch ----------------------------------------------------------------------

    /// A response to request `id`: bound exactly, or late, or a violation.
    fn on_response(&mut self, id: RequestId, answer: Answer<'_>) {
        match self.requests.bind(&id) {
            Bound::Answer(request) => self.on_answer(request, answer),
            Bound::Late { report } => {
                if report {
                    self.events.push_back(Event::LateResponse { id });
                }
            }
            Bound::Nothing(violation) => self.fail_connection(violation.into()),
        }
    }

    fn on_message(&mut self, message: Message) {
        match message {
            Message::Response(response) => {
                let answer = match response.outcome {
                    Outcome::Result(result) => {
                        return self.on_response(response.id, Answer::Result(result.as_str()));
                    }
                    Outcome::Error(error) => Answer::Error(error),
                };
                self.on_response(response.id, answer);
            }
            Message::UnboundError(error) => self.fail_connection(Error::Rpc(error)),
            Message::Notification(notification) => {
                let Some(notification) = self.on_subscription(notification) else {
                    return;
                };
                if notification.method == "notifications/progress" {
                    // A call's own progress, asked for, is the call's; any other counts.
                    if let Some(other) = self.own_progress(ServerNotification::read(notification)) {
                        self.count_message();
                        self.events.push_back(Event::Notification(other));
                    }
                    return;
                }
                self.count_message();
                if notification.method == "notifications/cancelled" {
                    self.on_cancelled(notification.params.as_ref());
                    self.on_listen_cancelled(notification.params.as_ref());
                }
                let event = ServerNotification::read(notification);
                self.events.push_back(Event::Notification(event));
            }
            Message::Request(request) => {
                let stateless = self
                    .connection()
                    .is_some_and(|c| c.version.era() == Era::Stateless);
                if stateless {
                    self.fail_connection(ProtocolViolation::UnexpectedRequest.into());
                    return;
                }
                self.count_message();
                self.answer_server_request(request);
            }
        }
    }

    /// The answer to `request` arrived: its operation decides what follows.
    fn on_answer(&mut self, mut request: InFlight, answer: Answer<'_>) {
        let ctx = self.context();
        let machine = request.operation.machine();
        let step = match answer {
            Answer::Error(error) => machine.on_error(error, &ctx),
            Answer::Result(result) => {
                let object = Object::of_validated(result);
                match check_result_type(&object, result, &self.result_type) {
                    Ok(ResultType::Complete) => machine.on_result(&object, &ctx),
                    Ok(ResultType::InputRequired) => machine.on_input_required(&object, &ctx),
                    Err(error) => Step::Fail(error),
                }
            }
        };
        self.apply(request, step);
    }

    /// Carries out what an operation decided; its request is out of the table by now.
    fn apply(&mut self, request: InFlight, step: Step) {
        match step {
            Step::Done(output) => self.finish(request.op, Ok(output)),
            Step::Fail(error) => self.finish(request.op, Err(error)),
            Step::Ask(asked) => self.park(request, asked),
            Step::Send(next) => {
                let op = request.op;
                // The operation is out of the table: if the queue is full, it ends here.
                if let Err(error) = self.room_to_send() {
                    self.finish(op, Err(error));
                } else if let Err(misuse) = self.send(request, next) {
                    self.finish(op, Err(misuse.into()));
                }
            }
        }
    }

    /// Ends operation `op`: its event, and what its output means for the client.
    fn finish(&mut self, op: OpId, outcome: Result<Output, Error>) {
        if self.leveling == Some(op) {
            self.leveling = None;
            return;
        }
        if self.renewal == Some(op) {
            self.renewal = None;
            return match outcome {
                Ok(Output::Connect(connected)) => self.establish(&connected),
                // A handshake ends in a connection; anything else cannot renew the session.
                Ok(_) => self.fail_connection(HttpError::SessionRenewalFailed.into()),
                Err(error) => self.fail_connection(error),
            };
        }
        match &outcome {
            Ok(Output::Connect(connected)) => self.establish(connected),
            Ok(Output::ListTools(catalog)) => self.catalog = Some(catalog.clone()),
            _ => {}
        }
        // A handshake that failed leaves nothing to talk to.
        let failed_handshake = match (&outcome, &self.state) {
            (Err(error), State::Connecting) => Some(error.clone()),
            _ => None,
        };
        self.events.push_back(Event::Finished { op, outcome });
        if let Some(error) = failed_handshake {
            self.fail_connection(error);
        }
    }

    /// The handshake finished: the session starts.
    fn establish(&mut self, connected: &Connected) {
        let meta = match connected.version.era() {
            Era::Stateless => Some(self.stateless_meta(connected.version)),
            Era::Stateful => {
                self.queue_notification(Notice::Initialized, None);
                None
            }
        };
        self.state = State::Ready(Session {
            connected: connected.clone(),
            meta,
        });
        // One of the client's own still in flight (the request an expired session refused,
        // carried into the renewed one) asks for the level there: no second is sent.
        let asking = self.log_level.filter(|_| {
            self.leveling.is_none()
                && connected.version.era() == Era::Stateful
                && connected.capabilities.logging
        });
        if let Some(level) = asking {
            // It holds the session's other requests over HTTP: a server slow to answer it
            // holds them no longer than a probe's silence.
            let wait = self
                .config
                .probe_timeout
                .min(self.config.limits.operation_timeout);
            let options = CallOptions::new().timeout(wait);
            self.leveling = self
                .ask_level(level, self.now, options)
                .ok()
                .map(|op| op.id());
        }
    }

    /// The `_meta` of every request of a 2026-07-28 session at `version`: the client's
    /// capabilities and self-description, and the log level asked for, if one was.
    fn stateless_meta(&self, version: ProtocolVersion) -> String {
        request_meta(
            version,
            &self.client_info,
            self.capabilities(Era::Stateless),
            self.log_level,
        )
    }

    /// What the operations may read of the settings.
    fn context(&self) -> Context<'_> {
        Context {
            limits: &self.config.limits,
            choice: self.config.protocol,
            oldest: self.config.oldest_version,
            roots: self.config.roots.as_deref(),
            asks: self.config.asks,
        }
    }

    /// The capabilities this client declares in `era`: see [`capabilities`].
    pub(crate) fn capabilities(&self, era: Era) -> &str {
        let [stateful, stateless] = &self.capabilities;
        match era {
            Era::Stateful => stateful,
            Era::Stateless => stateless,
        }
    }

    /// Ends the operation waiting on request `id`, if it still waits, with `error`: the
    /// request is abandoned (a late answer is reported) and, unless it is `initialize`,
    /// cancelled with the server.
    fn expire(&mut self, id: i64, error: Error) {
        if let Some(request) = self.requests.abandon(id, true) {
            self.end_abandoned(id, request, error);
        }
    }

    /// Ends the operation of abandoned request `id` with `error`, cancelling the request
    /// with the server unless it is `initialize`.
    fn end_abandoned(&mut self, id: i64, request: InFlight, error: Error) {
        if request.method.cancellable() {
            self.queue_cancel(id, &error);
        }
        self.finish(request.op, Err(error));
    }

    /// The peer broke the protocol: every operation ends with `error`, and so does the
    /// connection.
    fn fail_connection(&mut self, error: Error) {
        self.state = State::Failed;
        self.asks.clear();
        let parked = core::mem::take(&mut self.parked);
        // The client's own operations end unseen: the failure says it all.
        let own = [self.renewal.take(), self.leveling.take()];
        for request in self.requests.clear().into_iter().chain(parked) {
            if own.contains(&Some(request.op)) {
                continue;
            }
            self.events.push_back(Event::Finished {
                op: request.op,
                outcome: Err(error.clone()),
            });
        }
        self.events.push_back(Event::Failed(error));
    }

    /// Counts a message that is not an answer against every waiting request but the
    /// subscriptions that stand; those past the cap fail.
    pub(super) fn count_message(&mut self) {
        let limit = self.config.limits.notifications_before_answer;
        for id in self.requests.count_message(limit) {
            // A subscription that stands waits for no answer: what comes meanwhile is its
            // point, not a stall.
            if self
                .requests
                .get(id)
                .is_some_and(|r| !r.operation.standing())
            {
                self.expire(id, ProtocolViolation::TooManyNotifications { limit }.into());
            }
        }
    }

    /// A stateful server's request: `ping` gets `{}`, `roots/list` the roots where
    /// [`Config::roots`] declared them; what [`Config::asks`] declares waits for the
    /// application ([`hand_over`](Self::hand_over)); anything else needs a capability this
    /// client does not declare, and gets -32601.
    fn answer_server_request(&mut self, request: Request) {
        let outcome = if request.method == "ping" {
            Outcome::Result(RawObject::empty())
        } else if let (Some(roots), "roots/list") = (&self.config.roots, request.method.as_str()) {
            Outcome::Result(RawObject::from_trusted_text(roots_result(roots)))
        } else {
            match self
                .config
                .asks
                .read(&request.method, request.params.as_ref(), Era::Stateful)
            {
                Some(Ok(kind)) => {
                    let params = request.params.unwrap_or_else(RawObject::empty);
                    match self.hand_over(Awaiting::Request(request.id.clone()), kind, params) {
                        Ok(()) => return,
                        Err(error) => Outcome::Error(error),
                    }
                }
                Some(Err(refusal)) => Outcome::Error(refusal.rpc_error()),
                None => Outcome::Error(RpcError::new(
                    ErrorCode::METHOD_NOT_FOUND,
                    "Method not found",
                )),
            }
        };
        // Only a string id longer than the frame limit could make the answer too long; such
        // a request gets no answer.
        let _ = self.respond(request.id, outcome);
    }
}

/// What a result's `resultType` says it is.
enum ResultType {
    /// The result itself (`complete`, or no `resultType`).
    Complete,
    /// A request for input before the result (`input_required`, 2026-07-28).
    InputRequired,
}

/// A result's `resultType`: absent or `complete` is a result; `input_required` asks for
/// input first; anything else is unknown.
fn check_result_type(
    result: &Object<'_>,
    text: &str,
    finder: &memchr::memmem::Finder<'_>,
) -> Result<ResultType, Error> {
    // Most results have no resultType: look for the key's bytes (or any escape, which could
    // spell it differently) before walking the object.
    if finder.find(text.as_bytes()).is_none() && memchr::memchr(b'\\', text.as_bytes()).is_none() {
        return Ok(ResultType::Complete);
    }
    match result.get("resultType").map(JsonRef::as_str) {
        None => Ok(ResultType::Complete),
        Some(Some(kind)) if kind == "complete" => Ok(ResultType::Complete),
        Some(Some(kind)) if kind == "input_required" => Ok(ResultType::InputRequired),
        Some(_) => Err(ProtocolViolation::UnknownResultType.into()),
    }
}

/// The capabilities `config` declares in `era`: roots, where the application gives some
/// (with `listChanged` in the handshake revisions, which have the notification), and what
/// the application answers itself.
fn capabilities(config: &Config, era: Era) -> String {
    let mut members = String::new();
    if config.roots.is_some() {
        members.push_str(match era {
            Era::Stateful => r#""roots":{"listChanged":true}"#,
            Era::Stateless => r#""roots":{}"#,
        });
    }
    let asks = config.asks.capability_members();
    if !members.is_empty() && !asks.is_empty() {
        members.push(',');
    }
    members.push_str(&asks);
    alloc::format!("{{{members}}}")
}
