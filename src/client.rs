//! The sans-io MCP client: commands queue work, input arrives through `handle_*`, output
//! leaves through `poll_*`.

use alloc::collections::VecDeque;
use alloc::{boxed::Box, string::String, vec::Vec};
use core::time::Duration;

use crate::catalog::{Catalog, CatalogPolicy};
use crate::content::{
    CallToolResult, Connected, GetPromptResult, Prompt, Resource, ResourceContents,
};
use crate::error::{Error, Incompatible, Misuse, ProtocolViolation};
use crate::handshake::{self, DiscoverError, Handshake, Next};
use crate::id::{write_integer, ErrorCode};
use crate::json::{write_string, ObjectWriter, RawJson, RawObject};
use crate::listing::{ListKind, Listing, Page};
use crate::message::{
    encode_frame, FrameParser, Message, Notification, Outcome, Request, Response, RpcError,
};
use crate::requests::{Bound, Requests};
use crate::time::Instant;
use crate::version::{Era, ProtocolChoice, ProtocolVersion};
use crate::view::{JsonRef, Object};
use crate::{Allowlist, FrameReader, Framed, Limits, RequestId};

/// How a [`Client`] is set up. Start from [`Config::new`] and change the fields you need.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct Config {
    /// Every bound the client enforces.
    pub limits: Limits,
    /// Which protocol revisions to speak. Default: [`ProtocolChoice::Auto`].
    pub protocol: ProtocolChoice,
    /// The name this client gives in `clientInfo`. Default: `mcp-sansio`.
    pub client_name: String,
    /// The version this client gives in `clientInfo`. Default: this crate's version.
    pub client_version: String,
    /// The tools the application allows to be called.
    pub allowlist: Allowlist,
    /// What to do with invalid tools in a catalog. Default: [`CatalogPolicy::Strict`].
    pub catalog_policy: CatalogPolicy,
    /// How long the `server/discover` probe of [`ProtocolChoice::Auto`] waits before taking
    /// silence for a legacy server. Default: 2 s. It never takes more than half of the
    /// handshake's deadline, so the fallback to `initialize` always has time.
    pub probe_timeout: Duration,
}

impl Config {
    /// The defaults, with the application's allowlist.
    pub fn new(allowlist: Allowlist) -> Self {
        Config {
            limits: Limits::default(),
            protocol: ProtocolChoice::Auto,
            client_name: String::from("mcp-sansio"),
            client_version: String::from(env!("CARGO_PKG_VERSION")),
            allowlist,
            catalog_policy: CatalogPolicy::Strict,
            probe_timeout: Duration::from_secs(2),
        }
    }
}

/// Names one operation: a command's handle, carried by the event that ends it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct OpId(pub(crate) u64);

/// What an operation produced.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum Output {
    /// The handshake finished.
    Connected(Box<Connected>),
    /// `tools/list`, every page of it; also kept as the client's current catalog.
    Tools(Catalog),
    /// `tools/call`.
    ToolResult(CallToolResult),
    /// `resources/list`, every page of it.
    Resources(Vec<Resource>),
    /// `resources/read`.
    ResourceContents(Vec<ResourceContents>),
    /// `prompts/list`, every page of it.
    Prompts(Vec<Prompt>),
    /// `prompts/get`.
    Prompt(GetPromptResult),
}

/// A notification from the server.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum ServerNotification {
    /// `notifications/progress`.
    Progress {
        /// The progress token of the request it reports on.
        token: RawJson,
        /// Progress so far.
        progress: f64,
        /// The total, if known.
        total: Option<f64>,
        /// A message, if any.
        message: Option<String>,
    },
    /// `notifications/message`: a log line.
    Log {
        /// Its level (`debug` ... `emergency`).
        level: String,
        /// The logger's name, if given.
        logger: Option<String>,
        /// The logged data.
        data: RawJson,
    },
    /// `notifications/{tools,resources,prompts}/list_changed`.
    ListChanged(ListKind),
    /// Any other notification, or one of the above that was malformed, kept whole.
    Other(Notification),
}

/// Something the application should know. Drain them with [`Client::poll_event`].
#[derive(Clone, Debug, PartialEq)]
pub enum Event {
    /// An operation ended: exactly once for every operation a command started.
    Finished {
        /// The operation.
        op: OpId,
        /// What it produced, or why it failed.
        outcome: Result<Output, Error>,
    },
    /// The server sent a notification.
    Notification(ServerNotification),
    /// An answer arrived for a request abandoned at its deadline or cancelled. It is bound
    /// to nothing.
    LateResponse {
        /// The abandoned request's id.
        id: RequestId,
    },
    /// The connection failed; every operation in flight has ended with this error, and new
    /// commands are refused. Start a new client (and a new transport) to go on.
    Failed(Error),
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
    /// The `_meta` object of every request (2026-07-28), or `None` for a legacy session.
    meta: Option<String>,
}

#[derive(Debug)]
enum Kind {
    Handshake(Handshake),
    Listing(Box<Listing>),
    Call(&'static str),
}

#[derive(Debug)]
struct Operation {
    deadline: Instant,
    /// The request of this operation in flight, if any.
    request: Option<i64>,
    kind: Kind,
}

/// The operations in progress, in the order they started. Few at a time (each holds at most
/// one request, and requests in flight are bounded), so a vector searched in order beats a
/// tree.
#[derive(Debug, Default)]
struct Ops(Vec<(OpId, Operation)>);

impl Ops {
    fn insert(&mut self, op: OpId, operation: Operation) {
        self.0.push((op, operation));
    }

    fn contains_key(&self, op: &OpId) -> bool {
        self.get(op).is_some()
    }

    fn get(&self, op: &OpId) -> Option<&Operation> {
        self.0.iter().find(|(id, _)| id == op).map(|(_, o)| o)
    }

    fn get_mut(&mut self, op: &OpId) -> Option<&mut Operation> {
        self.0.iter_mut().find(|(id, _)| id == op).map(|(_, o)| o)
    }

    fn remove(&mut self, op: &OpId) -> Option<Operation> {
        let at = self.0.iter().position(|(id, _)| id == op)?;
        Some(self.0.remove(at).1)
    }

    fn keys(&self) -> impl Iterator<Item = &OpId> {
        self.0.iter().map(|(id, _)| id)
    }

    fn iter(&self) -> impl Iterator<Item = (&OpId, &Operation)> {
        self.0.iter().map(|(id, o)| (id, o))
    }

    fn values(&self) -> impl Iterator<Item = &Operation> {
        self.0.iter().map(|(_, o)| o)
    }
}

/// The client side of one MCP connection, as a state machine with no I/O and no clock.
///
/// # The run loop
///
/// - **Commands** ([`connect`](Self::connect), [`list_tools`](Self::list_tools),
///   [`call_tool`](Self::call_tool), ...) only queue work. Each returns the [`OpId`] of its
///   operation, or refuses at once with an error and queues nothing.
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
/// `poll_timeout`. Time is an [`Instant`] the caller passes; it must never go backwards, and
/// an early or repeated `handle_timeout` is harmless.
///
/// Every operation ends with exactly one [`Event::Finished`]. Each has one deadline
/// ([`Limits::operation_timeout`] after the command) that covers all of its frames, so a
/// server that trickles bytes cannot stretch it. On expiry the operation fails with
/// [`Error::Timeout`], and for any request but `initialize` a `notifications/cancelled` is
/// queued. A peer that breaks the protocol (malformed or oversized frames, answers to ids
/// never sent or already answered) fails the whole connection: see [`Event::Failed`].
#[derive(Debug)]
pub struct Client {
    config: Config,
    client_info: String,
    reader: FrameReader,
    parser: FrameParser,
    requests: Requests,
    ops: Ops,
    next_op: u64,
    state: State,
    catalog: Option<Catalog>,
    transmit: VecDeque<Vec<u8>>,
    events: VecDeque<Event>,
    /// Finds `"resultType"` in a result before the result is walked for it.
    result_type: memchr::memmem::Finder<'static>,
}

impl Client {
    /// A client that has sent nothing yet; call [`connect`](Self::connect) first.
    pub fn new(config: Config) -> Self {
        Client {
            client_info: handshake::client_info(&config.client_name, &config.client_version),
            reader: FrameReader::new(&config.limits),
            parser: FrameParser::new(&config.limits),
            requests: Requests::new(config.limits.remembered_abandoned_ids),
            ops: Ops::default(),
            next_op: 0,
            state: State::Idle,
            catalog: None,
            transmit: VecDeque::new(),
            events: VecDeque::new(),
            result_type: memchr::memmem::Finder::new(b"\"resultType\""),
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
    pub fn is_pending(&self, op: OpId) -> bool {
        self.ops.contains_key(&op)
    }

    /// Whether the connection has failed (see [`Event::Failed`]).
    pub fn is_failed(&self) -> bool {
        matches!(self.state, State::Failed)
    }

    // ---- commands ----------------------------------------------------------------------

    /// Starts the handshake the configured [`ProtocolChoice`] calls for.
    ///
    /// # Errors
    /// [`Misuse::AlreadyConnecting`] if it was started before.
    pub fn connect(&mut self, now: Instant) -> Result<OpId, Error> {
        match self.state {
            State::Idle => {}
            State::Failed => return Err(Misuse::ConnectionFailed.into()),
            State::Connecting | State::Ready(_) => return Err(Misuse::AlreadyConnecting.into()),
        }
        let choice = self.config.protocol;
        let op = self.new_op();
        let deadline = now.saturating_add(self.config.limits.operation_timeout);
        let modern = ProtocolVersion::V2026_07_28;
        let kind = match choice {
            ProtocolChoice::Auto => {
                let probe = self
                    .config
                    .probe_timeout
                    .min(self.config.limits.operation_timeout / 2);
                let until = now.saturating_add(probe);
                Handshake::Probe {
                    until,
                    version: modern,
                }
            }
            ProtocolChoice::Modern => Handshake::Discover { version: modern },
            ProtocolChoice::Legacy => Handshake::Initialize {
                offered: ProtocolVersion::V2025_11_25,
            },
            ProtocolChoice::Pinned(version) => match version.era() {
                Era::Modern => Handshake::Discover { version },
                Era::Legacy => Handshake::Initialize { offered: version },
            },
        };
        let request = match kind {
            Handshake::Initialize { offered } => self.send_initialize(op, offered)?,
            Handshake::Probe { version, .. } | Handshake::Discover { version } => {
                self.send_discover(op, version)?
            }
        };
        self.ops.insert(
            op,
            Operation {
                deadline,
                request: Some(request),
                kind: Kind::Handshake(kind),
            },
        );
        self.state = State::Connecting;
        Ok(op)
    }

    /// Lists the server's tools, following `nextCursor` across pages within
    /// [`Limits::pages_per_listing`] and [`Limits::tools_per_catalog`]. The result becomes
    /// the client's current catalog.
    ///
    /// # Errors
    /// [`Misuse`] when not connected, when the server lacks the tools capability, or when
    /// too many requests are in flight.
    pub fn list_tools(&mut self, now: Instant) -> Result<OpId, Error> {
        self.start_listing(ListKind::Tools, now)
    }

    /// Lists the server's resources, all pages.
    ///
    /// # Errors
    /// As [`list_tools`](Self::list_tools), for the resources capability.
    pub fn list_resources(&mut self, now: Instant) -> Result<OpId, Error> {
        self.start_listing(ListKind::Resources, now)
    }

    /// Lists the server's prompts, all pages.
    ///
    /// # Errors
    /// As [`list_tools`](Self::list_tools), for the prompts capability.
    pub fn list_prompts(&mut self, now: Instant) -> Result<OpId, Error> {
        self.start_listing(ListKind::Prompts, now)
    }

    /// Calls a tool that is both in the application's allowlist and in the current catalog.
    /// Otherwise refuses, and not one byte is queued.
    ///
    /// # Errors
    /// [`Misuse::ToolNotAllowed`], [`Misuse::ToolNotAdvertised`], or the refusals of
    /// [`list_tools`](Self::list_tools).
    pub fn call_tool(
        &mut self,
        name: &str,
        arguments: &RawObject,
        now: Instant,
    ) -> Result<OpId, Error> {
        self.ready_for("tools", |c| c.tools)?;
        if !self.config.allowlist.allows(name) {
            return Err(Misuse::ToolNotAllowed {
                name: String::from(name),
            }
            .into());
        }
        if self.catalog.as_ref().and_then(|c| c.get(name)).is_none() {
            return Err(Misuse::ToolNotAdvertised {
                name: String::from(name),
            }
            .into());
        }
        self.start_call("tools/call", now, |params| {
            params.string("name", name);
            params.raw("arguments", arguments.as_str());
        })
    }

    /// Reads the resource at `uri`.
    ///
    /// # Errors
    /// As [`list_resources`](Self::list_resources).
    pub fn read_resource(&mut self, uri: &str, now: Instant) -> Result<OpId, Error> {
        self.ready_for("resources", |c| c.resources)?;
        self.start_call("resources/read", now, |params| params.string("uri", uri))
    }

    /// Expands the prompt `name` with string `arguments`.
    ///
    /// # Errors
    /// As [`list_prompts`](Self::list_prompts).
    pub fn get_prompt(
        &mut self,
        name: &str,
        arguments: &[(&str, &str)],
        now: Instant,
    ) -> Result<OpId, Error> {
        self.ready_for("prompts", |c| c.prompts)?;
        let mut args = Vec::new();
        let mut writer = ObjectWriter::open(&mut args);
        for (key, value) in arguments {
            writer.string(key, value);
        }
        writer.close();
        let args = String::from_utf8(args).unwrap_or_default();
        self.start_call("prompts/get", now, |params| {
            params.string("name", name);
            params.raw("arguments", &args);
        })
    }

    /// Cancels an operation: it ends with [`Error::Cancelled`], its request (unless it is
    /// `initialize`) is cancelled with the server, and a late answer is reported as late.
    /// Cancelling the handshake fails the connection.
    ///
    /// # Errors
    /// [`Misuse::UnknownOperation`] if the operation is not in progress.
    pub fn cancel(&mut self, op: OpId) -> Result<(), Error> {
        if !self.ops.contains_key(&op) {
            return Err(Misuse::UnknownOperation.into());
        }
        self.fail_op(op, Error::Cancelled);
        Ok(())
    }

    // ---- input -------------------------------------------------------------------------

    /// Takes bytes the server wrote, cut anywhere. Deadlines up to `now` are applied first,
    /// so an answer that arrives after its deadline is late, however its bytes trickled.
    pub fn handle_input(&mut self, mut bytes: &[u8], now: Instant) {
        self.handle_timeout(now);
        while !self.is_failed() {
            let parsed = match self.reader.next_frame(&mut bytes) {
                Framed::NeedMore => break,
                Framed::TooLong { limit } => Err(ProtocolViolation::FrameTooLong { limit }.into()),
                Framed::Frame(frame) => self.parser.parse(frame),
            };
            match parsed {
                Ok(message) => self.on_message(message),
                Err(error) => self.fail_connection(error),
            }
        }
    }

    /// Applies every deadline up to `now`. Harmless when early or repeated.
    pub fn handle_timeout(&mut self, now: Instant) {
        let due: Vec<OpId> = self
            .ops
            .iter()
            .filter(|(_, op)| op.deadline <= now || matches!(op.kind, Kind::Handshake(Handshake::Probe { until, .. }) if until <= now))
            .map(|(id, _)| *id)
            .collect();
        for id in due {
            let Some(op) = self.ops.get(&id) else {
                continue;
            };
            if op.deadline <= now {
                let operation = match &op.kind {
                    Kind::Handshake(_) => "handshake",
                    Kind::Listing(listing) => listing.kind().method(),
                    Kind::Call(method) => method,
                };
                self.fail_op(id, Error::Timeout { operation });
            } else {
                self.probe_expired(id);
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

    /// The next frame to write to the server, newline included.
    pub fn poll_transmit(&mut self) -> Option<Vec<u8>> {
        self.transmit.pop_front()
    }

    /// The next event.
    pub fn poll_event(&mut self) -> Option<Event> {
        self.events.pop_front()
    }

    /// When [`handle_timeout`](Self::handle_timeout) must be called next, if anything waits.
    pub fn poll_timeout(&self) -> Option<Instant> {
        self.ops
            .values()
            .map(|op| match op.kind {
                Kind::Handshake(Handshake::Probe { until, .. }) => until.min(op.deadline),
                _ => op.deadline,
            })
            .min()
    }

    // ---- internals ---------------------------------------------------------------------

    fn new_op(&mut self) -> OpId {
        self.next_op += 1;
        OpId(self.next_op)
    }

    /// The session, if the client is connected and the server offers `capability`.
    fn ready_for(
        &self,
        capability: &'static str,
        offered: impl Fn(&crate::content::ServerCapabilities) -> bool,
    ) -> Result<(), Error> {
        let session = match &self.state {
            State::Ready(session) => session,
            State::Failed => return Err(Misuse::ConnectionFailed.into()),
            State::Idle | State::Connecting => return Err(Misuse::NotConnected.into()),
        };
        if !offered(&session.connected.capabilities) {
            return Err(Misuse::CapabilityNotOffered { capability }.into());
        }
        let limit = self.config.limits.requests_in_flight;
        if self.requests.len() >= limit {
            return Err(Misuse::TooManyInFlight { limit }.into());
        }
        Ok(())
    }

    fn meta(&self) -> Option<&str> {
        match &self.state {
            State::Ready(session) => session.meta.as_deref(),
            _ => None,
        }
    }

    /// Writes a request straight into its frame: `params` gets `members`, then `meta` (the
    /// revision's `_meta`) if any. Refuses a frame over the limit.
    fn request_frame(
        &self,
        id: i64,
        method: &'static str,
        meta: Option<&str>,
        members: impl FnOnce(&mut ObjectWriter<'_>),
    ) -> Result<Vec<u8>, Error> {
        let mut frame = Vec::with_capacity(160);
        frame.extend_from_slice(br#"{"jsonrpc":"2.0","id":"#);
        write_integer(&mut frame, id);
        frame.extend_from_slice(br#","method":"#);
        write_string(&mut frame, method);
        frame.extend_from_slice(br#","params":"#);
        let mut params = ObjectWriter::open(&mut frame);
        members(&mut params);
        if let Some(meta) = meta {
            params.raw("_meta", meta);
        }
        params.close();
        frame.extend_from_slice(b"}\n");
        let limit = self.config.limits.frame_bytes;
        if frame.len() > limit {
            return Err(Misuse::FrameTooLong {
                len: frame.len(),
                limit,
            }
            .into());
        }
        Ok(frame)
    }

    /// Queues a request of operation `op`, with the session's `_meta` when the revision
    /// needs it; refuses (queuing nothing) if it cannot be sent.
    fn send(
        &mut self,
        op: OpId,
        method: &'static str,
        members: impl FnOnce(&mut ObjectWriter<'_>),
    ) -> Result<i64, Error> {
        let id = self.requests.next_id().ok_or(Misuse::IdsExhausted)?;
        let frame = self.request_frame(id, method, self.meta(), members)?;
        Ok(self.queue_request(op, method, id, frame))
    }

    fn queue_request(&mut self, op: OpId, method: &'static str, id: i64, frame: Vec<u8>) -> i64 {
        self.requests.insert(id, op, method);
        self.transmit.push_back(frame);
        id
    }

    fn send_discover(&mut self, op: OpId, version: ProtocolVersion) -> Result<i64, Error> {
        let id = self.requests.next_id().ok_or(Misuse::IdsExhausted)?;
        let meta = handshake::request_meta(version, &self.client_info);
        let frame = self.request_frame(id, "server/discover", Some(&meta), |_| {})?;
        Ok(self.queue_request(op, "server/discover", id, frame))
    }

    fn send_initialize(&mut self, op: OpId, version: ProtocolVersion) -> Result<i64, Error> {
        let id = self.requests.next_id().ok_or(Misuse::IdsExhausted)?;
        let frame = self.request_frame(id, "initialize", None, |params| {
            params.string("protocolVersion", version.as_str());
            params.raw("capabilities", "{}");
            params.raw("clientInfo", &self.client_info);
        })?;
        Ok(self.queue_request(op, "initialize", id, frame))
    }

    fn queue_notification(&mut self, method: &str, params: Option<RawObject>) {
        let message = Message::Notification(Notification {
            method: String::from(method),
            params,
        });
        let mut frame = Vec::new();
        if encode_frame(&message, &self.config.limits, &mut frame).is_ok() {
            self.transmit.push_back(frame);
        }
    }

    fn start_listing(&mut self, kind: ListKind, now: Instant) -> Result<OpId, Error> {
        self.ready_for(kind.capability(), |c| kind.offered(c))?;
        let listing = Listing::new(kind, self.config.catalog_policy);
        self.start(Kind::Listing(Box::new(listing)), kind.method(), now, |_| {})
    }

    fn start_call(
        &mut self,
        method: &'static str,
        now: Instant,
        members: impl FnOnce(&mut ObjectWriter<'_>),
    ) -> Result<OpId, Error> {
        self.start(Kind::Call(method), method, now, members)
    }

    /// Sends an operation's first request and starts its one deadline.
    fn start(
        &mut self,
        kind: Kind,
        method: &'static str,
        now: Instant,
        members: impl FnOnce(&mut ObjectWriter<'_>),
    ) -> Result<OpId, Error> {
        let op = self.new_op();
        let request = self.send(op, method, members)?;
        let deadline = now.saturating_add(self.config.limits.operation_timeout);
        self.ops.insert(
            op,
            Operation {
                deadline,
                request: Some(request),
                kind,
            },
        );
        Ok(op)
    }

    fn finish(&mut self, op: OpId, outcome: Result<Output, Error>) {
        self.ops.remove(&op);
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

    /// Ends one operation with `error`, abandoning its request (reported as late if it is
    /// answered) and cancelling it with the server unless it is `initialize`.
    fn fail_op(&mut self, op: OpId, error: Error) {
        let request = self.ops.get(&op).and_then(|o| o.request);
        if let Some(id) = request {
            if let Some(request) = self.requests.abandon(id, true) {
                if request.method != "initialize" {
                    self.queue_cancel(id, &error);
                }
            }
        }
        self.finish(op, Err(error));
    }

    fn queue_cancel(&mut self, id: i64, reason: &Error) {
        let mut params = Vec::new();
        let mut writer = ObjectWriter::open(&mut params);
        writer.integer("requestId", id);
        writer.string("reason", &alloc::format!("{reason}"));
        writer.close();
        let params = RawObject::from_trusted_text(String::from_utf8(params).unwrap_or_default());
        self.queue_notification("notifications/cancelled", Some(params));
    }

    /// The peer broke the protocol: every operation ends with `error`, and so does the
    /// connection.
    fn fail_connection(&mut self, error: Error) {
        self.state = State::Failed;
        self.requests.clear();
        let ops: Vec<OpId> = self.ops.keys().copied().collect();
        for op in ops {
            self.ops.remove(&op);
            self.events.push_back(Event::Finished {
                op,
                outcome: Err(error.clone()),
            });
        }
        self.events.push_back(Event::Failed(error));
    }

    /// Auto mode's probe got no answer in time: the server is legacy; `initialize` follows.
    fn probe_expired(&mut self, op: OpId) {
        let Some(operation) = self.ops.get_mut(&op) else {
            return;
        };
        if let Some(id) = operation.request.take() {
            // A late answer to the probe is ignored, not reported.
            self.requests.abandon(id, false);
        }
        let Some(legacy) = self.config.protocol.newest(Era::Legacy) else {
            self.fail_op(
                op,
                Error::Timeout {
                    operation: "handshake",
                },
            );
            return;
        };
        self.continue_handshake(op, Next::Initialize(legacy));
    }

    fn continue_handshake(&mut self, op: OpId, next: Next) {
        let (kind, sent) = match next {
            Next::Discover(version) => (
                Handshake::Discover { version },
                self.send_discover(op, version),
            ),
            Next::Initialize(offered) => (
                Handshake::Initialize { offered },
                self.send_initialize(op, offered),
            ),
        };
        match (sent, self.ops.get_mut(&op)) {
            (Ok(id), Some(operation)) => {
                operation.request = Some(id);
                operation.kind = Kind::Handshake(kind);
            }
            (Err(error), _) => self.finish(op, Err(error)),
            (Ok(_), None) => {}
        }
    }

    fn on_message(&mut self, message: Message) {
        match message {
            Message::Response(response) => match self.requests.bind(&response.id) {
                Bound::Answer(request) => self.on_answer(request.op, response.outcome),
                Bound::Late { report } => {
                    if report {
                        self.events
                            .push_back(Event::LateResponse { id: response.id });
                    }
                }
                Bound::Nothing(violation) => self.fail_connection(violation.into()),
            },
            Message::UnboundError(error) => self.fail_connection(Error::Rpc(error)),
            Message::Notification(notification) => {
                self.count_message();
                let event = read_notification(notification);
                self.events.push_back(Event::Notification(event));
            }
            Message::Request(request) => {
                let modern = self
                    .connection()
                    .is_some_and(|c| c.version.era() == Era::Modern);
                if modern {
                    self.fail_connection(ProtocolViolation::UnexpectedRequest.into());
                    return;
                }
                self.count_message();
                self.answer_server_request(request);
            }
        }
    }

    /// Counts a message that is not an answer against every waiting request; those past
    /// the cap fail.
    fn count_message(&mut self) {
        let limit = self.config.limits.notifications_before_answer;
        for id in self.requests.count_message(limit) {
            let op = self
                .ops
                .iter()
                .find(|(_, o)| o.request == Some(id))
                .map(|(op, _)| *op);
            if let Some(op) = op {
                self.fail_op(op, ProtocolViolation::TooManyNotifications { limit }.into());
            }
        }
    }

    /// A legacy server's request: `ping` gets `{}`; anything else needs a capability this
    /// client does not declare, and gets -32601.
    fn answer_server_request(&mut self, request: Request) {
        let outcome = if request.method == "ping" {
            Outcome::Result(RawObject::empty())
        } else {
            Outcome::Error(RpcError {
                code: ErrorCode::METHOD_NOT_FOUND,
                message: String::from("Method not found"),
                data: None,
            })
        };
        let message = Message::Response(Response {
            id: request.id,
            outcome,
        });
        let mut frame = Vec::new();
        if encode_frame(&message, &self.config.limits, &mut frame).is_ok() {
            self.transmit.push_back(frame);
        }
    }

    fn on_answer(&mut self, op: OpId, outcome: Outcome) {
        let Some(operation) = self.ops.get_mut(&op) else {
            return;
        };
        operation.request = None;
        let handshake = matches!(operation.kind, Kind::Handshake(_));
        let result = match outcome {
            Outcome::Result(result) => result,
            Outcome::Error(error) if handshake => return self.handshake_error(op, error),
            Outcome::Error(error) => return self.finish(op, Err(Error::Rpc(error))),
        };
        let Some(object) = JsonRef::new(result.as_str()).as_object() else {
            return;
        };
        if let Err(error) = check_result_type(&object, result.as_str(), &self.result_type) {
            return self.finish(op, Err(error));
        }
        let (era, limits) = (self.meta_era(), self.config.limits);
        let Some(operation) = self.ops.get_mut(&op) else {
            return;
        };
        let page = match &mut operation.kind {
            Kind::Handshake(_) => return self.handshake_result(op, &object),
            Kind::Call(method) => {
                let method = *method;
                let read = match method {
                    "tools/call" => CallToolResult::read(&object).map(Output::ToolResult),
                    "resources/read" => {
                        ResourceContents::read_all(&object).map(Output::ResourceContents)
                    }
                    _ => GetPromptResult::read(&object).map(Output::Prompt),
                };
                let outcome = read
                    .map_err(|problem| ProtocolViolation::InvalidResult { method, problem }.into());
                return self.finish(op, outcome);
            }
            Kind::Listing(listing) => listing
                .page(&object, era, &limits)
                .map(|page| (page, listing.kind())),
        };
        match page {
            Err(error) => self.finish(op, Err(error)),
            Ok((Page::Next(cursor), kind)) => {
                match self.send(op, kind.method(), |params| params.string("cursor", &cursor)) {
                    Ok(id) => {
                        if let Some(operation) = self.ops.get_mut(&op) {
                            operation.request = Some(id);
                        }
                    }
                    Err(error) => self.finish(op, Err(error)),
                }
            }
            Ok((Page::Done, _)) => {
                let Some(Operation {
                    kind: Kind::Listing(listing),
                    ..
                }) = self.ops.remove(&op)
                else {
                    return;
                };
                let output = listing.finish();
                if let Output::Tools(catalog) = &output {
                    self.catalog = Some(catalog.clone());
                }
                self.finish(op, Ok(output));
            }
        }
    }

    fn meta_era(&self) -> Era {
        match self.meta() {
            Some(_) => Era::Modern,
            None => Era::Legacy,
        }
    }

    /// Where the handshake operation `op` stands, if it is one.
    fn handshake(&self, op: OpId) -> Option<&Handshake> {
        match self.ops.get(&op) {
            Some(Operation {
                kind: Kind::Handshake(state),
                ..
            }) => Some(state),
            _ => None,
        }
    }

    fn handshake_result(&mut self, op: OpId, result: &Object<'_>) {
        let choice = self.config.protocol;
        let Some(state) = self.handshake(op) else {
            return;
        };
        let discovering = match state {
            Handshake::Initialize { .. } => None,
            Handshake::Probe { version, .. } | Handshake::Discover { version } => Some(*version),
        };
        let connected = match discovering {
            None => handshake::read_initialize(result, choice),
            Some(version) => match handshake::read_discover(result) {
                Err(error) => Err(error),
                Ok(discovered) if discovered.supported.iter().any(|s| s == version.as_str()) => {
                    Ok(discovered.connected(version))
                }
                Ok(discovered) => match handshake::choose(choice, &discovered.supported, version) {
                    Some(next) => return self.continue_handshake(op, next),
                    None => Err(Incompatible::NoCommonVersion {
                        supported: discovered.supported,
                    }
                    .into()),
                },
            },
        };
        match connected {
            Ok(connected) => {
                let meta = match connected.version.era() {
                    Era::Modern => Some(handshake::request_meta(
                        connected.version,
                        &self.client_info,
                    )),
                    Era::Legacy => {
                        self.queue_notification("notifications/initialized", None);
                        None
                    }
                };
                self.state = State::Ready(Session {
                    connected: connected.clone(),
                    meta,
                });
                self.finish(op, Ok(Output::Connected(Box::new(connected))));
            }
            Err(error) => self.finish(op, Err(error)),
        }
    }

    fn handshake_error(&mut self, op: OpId, error: RpcError) {
        let choice = self.config.protocol;
        let Some(state) = self.handshake(op) else {
            return;
        };
        let (probing, tried) = match state {
            Handshake::Initialize { .. } => return self.finish(op, Err(Error::Rpc(error))),
            Handshake::Probe { version, .. } => (true, *version),
            Handshake::Discover { version } => (false, *version),
        };
        match handshake::read_discover_error(&error) {
            DiscoverError::Unsupported(supported) => {
                match handshake::choose(choice, &supported, tried) {
                    Some(next) => self.continue_handshake(op, next),
                    None => {
                        self.finish(op, Err(Incompatible::NoCommonVersion { supported }.into()))
                    }
                }
            }
            DiscoverError::Modern => self.finish(op, Err(Error::Rpc(error))),
            DiscoverError::Other => match choice.newest(Era::Legacy) {
                Some(legacy) if probing => self.continue_handshake(op, Next::Initialize(legacy)),
                _ => self.finish(op, Err(Incompatible::NotStateless { error }.into())),
            },
        }
    }
}

/// A result's `resultType`: absent or `complete` is a result; `input_required` needs what
/// this client does not provide yet; anything else is unknown.
fn check_result_type(
    result: &Object<'_>,
    text: &str,
    finder: &memchr::memmem::Finder<'_>,
) -> Result<(), Error> {
    // Most results have no resultType: look for the key's bytes (or any escape, which could
    // spell it differently) before walking the object.
    if finder.find(text.as_bytes()).is_none() && memchr::memchr(b'\\', text.as_bytes()).is_none() {
        return Ok(());
    }
    match result.get("resultType").map(JsonRef::as_str) {
        None => Ok(()),
        Some(Some(kind)) if kind == "complete" => Ok(()),
        Some(Some(kind)) if kind == "input_required" => Err(Incompatible::InputRequired.into()),
        Some(_) => Err(ProtocolViolation::UnknownResultType.into()),
    }
}

fn read_notification(notification: Notification) -> ServerNotification {
    let read = |n: &Notification| -> Option<ServerNotification> {
        let params = n.params.as_ref().map(|p| JsonRef::new(p.as_str()));
        let object = params.and_then(JsonRef::as_object);
        Some(match n.method.as_str() {
            "notifications/progress" => {
                let object = object?;
                let token = object.get("progressToken")?;
                ServerNotification::Progress {
                    token: token.to_raw(),
                    progress: object.get("progress")?.as_f64()?,
                    total: object.get("total").and_then(JsonRef::as_f64),
                    message: object
                        .get("message")
                        .and_then(JsonRef::as_str)
                        .map(String::from),
                }
            }
            "notifications/message" => {
                let object = object?;
                ServerNotification::Log {
                    level: String::from(object.get("level")?.as_str()?),
                    logger: object
                        .get("logger")
                        .and_then(JsonRef::as_str)
                        .map(String::from),
                    data: object.get("data")?.to_raw(),
                }
            }
            "notifications/tools/list_changed" => ServerNotification::ListChanged(ListKind::Tools),
            "notifications/resources/list_changed" => {
                ServerNotification::ListChanged(ListKind::Resources)
            }
            "notifications/prompts/list_changed" => {
                ServerNotification::ListChanged(ListKind::Prompts)
            }
            _ => return None,
        })
    };
    read(&notification).unwrap_or(ServerNotification::Other(notification))
}
