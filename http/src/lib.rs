//! The blocking Streamable HTTP transport for [mcp-sansio](mcp_sansio): an MCP server at a
//! URL, in any of the three revisions, with the core's bounds and deadlines.
//!
//! The core's [`HttpSession`] decides every header, reads every reply and keeps every
//! deadline; this crate only moves bytes, speaking HTTP/1.1 itself over a TCP socket (and
//! rustls on aws-lc-rs, post-quantum key exchange first, behind the `rustls` feature, for
//! `https://`): keep-alive, each request written in
//! one piece, every reply head bounded by
//! [`Limits::reply_head_bytes`](mcp_sansio::Limits::reply_head_bytes), and no redirect ever
//! followed and no proxy used, so the application's headers and the session id go to the
//! server's own address and nowhere else. A request alone in flight is performed on the calling
//! thread; several at once go to a small pool of worker threads. Every read of a reply is
//! bounded by its operation's deadline, and a reply the core gives up on (cancelled, too
//! long, past its deadline) is dropped.
//!
//! ```no_run
//! use mcp_sansio::{Allowlist, Config, RawObject};
//! use mcp_sansio_http::HttpClient;
//!
//! let allowlist: Allowlist = ["word_count"].into_iter().collect();
//! let mut server = HttpClient::new("http://127.0.0.1:8000/mcp", Config::new(allowlist))?
//!     .header("Authorization", "Bearer my-token")?;
//! server.connect()?;
//! server.list_tools()?;
//! let result = server.call_tool("word_count", &RawObject::parse(r#"{"text":"a b"}"#, &Default::default())?)?;
//! println!("{}", result.text());
//! server.close();
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::collections::HashSet;
use std::fmt;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender, SyncSender};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

#[cfg(feature = "_fuzz")]
#[doc(hidden)]
pub mod fuzzing;
pub mod oauth;
mod wire;

use mcp_sansio::{
    Awaited, CallOptions, CallToolResult, Catalog, Client, Config, Connected, Error, Event,
    ExchangeId, HttpError, HttpMethod, HttpRequest, HttpSession, Instant, KeptEvents, Listening,
    Misuse, Op, RawObject, Responder, Root, Subscription, Watcher,
};
use wire::Fields;

/// How many reply pieces may wait for the driver before the workers wait for it.
const REPLY_QUEUE: usize = 64;

/// What went wrong, by whose fault: the core's typed error, or this side's network.
#[derive(Debug)]
#[non_exhaustive]
pub enum HttpClientError {
    /// The URL is not one this build can reach: an `http://` (or, with the `rustls` feature,
    /// `https://`) URL with a host, an optional port, and a path and query of visible ASCII
    /// (percent-encoded). Credentials in the URL are refused: they belong in a header.
    InvalidUrl(String),
    /// A header the application gave is not a valid header (a token for a name, visible
    /// ASCII, spaces and tabs for a value), is one the transport writes itself (`Host`,
    /// `Content-Length`, `Transfer-Encoding`, `Connection`, `Upgrade`), or came after the
    /// first request.
    InvalidHeader(String),
    /// The server could not be reached: the connection was refused, timed out or failed
    /// before any reply, or its reply's head was not HTTP (the cause, as text).
    Unreachable(String),
    /// The protocol layer refused or failed the operation; see [`mcp_sansio::Error`].
    Mcp(Error),
}

impl fmt::Display for HttpClientError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            HttpClientError::InvalidUrl(why) => write!(f, "the server's address is invalid: {why}"),
            HttpClientError::InvalidHeader(why) => write!(f, "a header is invalid: {why}"),
            HttpClientError::Unreachable(why) => {
                write!(f, "the server could not be reached: {why}")
            }
            HttpClientError::Mcp(e) => e.fmt(f),
        }
    }
}

impl std::error::Error for HttpClientError {}

impl From<Error> for HttpClientError {
    fn from(e: Error) -> Self {
        HttpClientError::Mcp(e)
    }
}

impl From<Misuse> for HttpClientError {
    fn from(e: Misuse) -> Self {
        HttpClientError::Mcp(e.into())
    }
}

/// Where requests go, shared by the workers.
struct Endpoint {
    target: wire::Target,
    url: String,
    /// The application's own headers (a bearer token), sent with every request.
    headers: Vec<(String, String)>,
    /// The sockets of exchanges that last the session (the 2024-11-05 transport's event
    /// stream): a worker blocked reading a quiet one wakes only when it is shut down.
    lasting: Mutex<Vec<(ExchangeId, std::net::TcpStream)>>,
    /// Set when the client goes: a lasting exchange whose socket comes after that is shut
    /// down at once.
    gone: std::sync::atomic::AtomicBool,
}

impl Endpoint {
    /// Shuts down the socket of lasting exchange `exchange` (every one, with `None`), which
    /// ends its worker's read.
    fn shut(&self, exchange: Option<ExchangeId>) {
        let mut lasting = self.lasting.lock().unwrap_or_else(PoisonError::into_inner);
        lasting.retain(|(e, tcp)| {
            let hit = exchange.is_none_or(|x| x == *e);
            if hit {
                let _ = tcp.shutdown(std::net::Shutdown::Both);
            }
            !hit
        });
    }
}

/// One exchange for a worker to perform.
struct Job {
    request: HttpRequest,
    /// How long the whole exchange may take: its operation's deadline.
    timeout: Duration,
    aborted: Arc<Mutex<HashSet<ExchangeId>>>,
}

/// What an exchange saw of its reply, as it happens.
enum Seen<'a> {
    Head {
        status: u16,
        fields: &'a Fields,
    },
    Body(&'a [u8]),
    End,
    /// The exchange failed; `before_head` when nothing of a reply came.
    Broken {
        before_head: bool,
        why: String,
    },
}

/// What a worker saw, sent to the driver: [`Seen`], owned.
enum Piece {
    Head {
        exchange: ExchangeId,
        status: u16,
        fields: Fields,
    },
    Body(ExchangeId, Vec<u8>),
    End(ExchangeId),
    Broken {
        exchange: ExchangeId,
        before_head: bool,
        why: String,
    },
}

impl Piece {
    fn of(exchange: ExchangeId, seen: Seen<'_>) -> Piece {
        match seen {
            Seen::Head { status, fields } => Piece::Head {
                exchange,
                status,
                fields: fields.clone(),
            },
            Seen::Body(bytes) => Piece::Body(exchange, bytes.to_vec()),
            Seen::End => Piece::End(exchange),
            Seen::Broken { before_head, why } => Piece::Broken {
                exchange,
                before_head,
                why,
            },
        }
    }
}

/// An MCP server reached over Streamable HTTP, and the sans-io session that speaks to it.
///
/// The blocking methods ([`connect`](Self::connect), [`list_tools`](Self::list_tools),
/// [`call_tool`](Self::call_tool)) each run one operation to its end. For several at once,
/// start them on [`client`](Self::client) and wait for each with [`run`](Self::run).
/// Events no [`run`](Self::run) consumed are kept for [`take_events`](Self::take_events).
pub struct HttpClient {
    session: HttpSession,
    endpoint: Arc<Endpoint>,
    origin: std::time::Instant,
    jobs: Sender<Job>,
    job_queue: Arc<Mutex<Receiver<Job>>>,
    replies: Receiver<Piece>,
    reply_sender: SyncSender<Piece>,
    workers: usize,
    busy: Arc<AtomicUsize>,
    max_workers: usize,
    /// Exchanges handed to a worker whose reply has not ended: only these can be aborted,
    /// so the set the workers read holds nothing that no worker will take out.
    /// (A list: the session keeps at most twice `requests_in_flight` exchanges open, and
    /// most of the time one is.)
    live: Vec<ExchangeId>,
    /// The exchange performed on this thread, if one is.
    here: Option<ExchangeId>,
    /// The bound on an exchange that no operation's deadline covers.
    operation_timeout: Duration,
    aborted: Arc<Mutex<HashSet<ExchangeId>>>,
    events: KeptEvents,
    /// Why the last exchange that got no reply at all failed, for the error of its operation.
    unreachable: Option<String>,
    /// The catalog [`call_tool`](Self::call_tool) listed anew after a header mismatch, until
    /// [`take_relisted`](Self::take_relisted).
    relisted: Option<Catalog>,
}

impl fmt::Debug for HttpClient {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HttpClient")
            .field("url", &self.endpoint.url)
            .field("session", &self.session)
            .finish_non_exhaustive()
    }
}

impl HttpClient {
    /// A client for the MCP endpoint at `url` (such as `http://127.0.0.1:8000/mcp`). Nothing
    /// is sent until [`connect`](Self::connect).
    ///
    /// # Errors
    /// [`HttpClientError::InvalidUrl`] for a URL this build cannot reach.
    pub fn new(url: &str, config: Config) -> Result<Self, HttpClientError> {
        let max_workers = config.limits.requests_in_flight.saturating_add(2);
        // Each worker and the calling thread may hold a connection.
        let target = wire::Target::new(
            url,
            config.limits.reply_head_bytes,
            max_workers.saturating_add(1),
        )?;
        let operation_timeout = config.limits.operation_timeout;
        let events_kept = config.limits.events_kept;
        let (jobs, job_queue) = mpsc::channel();
        let (reply_sender, replies) = mpsc::sync_channel(REPLY_QUEUE);
        Ok(HttpClient {
            session: HttpSession::new(config).with_url(url),
            endpoint: Arc::new(Endpoint {
                target,
                url: url.to_owned(),
                headers: Vec::new(),
                lasting: Mutex::new(Vec::new()),
                gone: std::sync::atomic::AtomicBool::new(false),
            }),
            origin: std::time::Instant::now(),
            jobs,
            job_queue: Arc::new(Mutex::new(job_queue)),
            replies,
            reply_sender,
            workers: 0,
            busy: Arc::new(AtomicUsize::new(0)),
            max_workers,
            live: Vec::new(),
            here: None,
            operation_timeout,
            aborted: Arc::new(Mutex::new(HashSet::new())),
            events: KeptEvents::new(events_kept),
            unreachable: None,
            relisted: None,
        })
    }

    /// Adds a header of the application's (such as `Authorization: Bearer ...`) to every
    /// request. It goes to this URL only: redirects are not followed. A token given to the
    /// session ([`HttpSession::set_authorization`]) is sent instead of an `Authorization`
    /// given here, never beside it.
    ///
    /// # Errors
    /// [`HttpClientError::InvalidHeader`] if the name or value is not a valid header.
    pub fn header(mut self, name: &str, value: &str) -> Result<Self, HttpClientError> {
        wire::check_header(name, value).map_err(HttpClientError::InvalidHeader)?;
        match Arc::get_mut(&mut self.endpoint) {
            Some(endpoint) => endpoint.headers.push((name.to_owned(), value.to_owned())),
            None => {
                return Err(HttpClientError::InvalidHeader(String::from(
                    "headers must be added before the first request",
                )))
            }
        }
        Ok(self)
    }

    /// The session, and through it the client: to start operations, read the catalog.
    pub fn session(&mut self) -> &mut HttpSession {
        &mut self.session
    }

    /// The client, to start operations that [`run`](Self::run) then waits for.
    pub fn client(&mut self) -> &mut Client {
        self.session.client_mut()
    }

    /// Now, on the session's clock.
    pub fn now(&self) -> Instant {
        Instant::from_std(self.origin, std::time::Instant::now())
    }

    /// Has `responder` answer each request a server makes of the application (an
    /// elicitation, a sampling request: see [`Config::asks`](mcp_sansio::Config)) while a
    /// [`run`](Self::run) waits, under the awaited operation's deadline. Without one, such
    /// requests are kept for [`take_events`](Self::take_events) and wait for
    /// [`Client::answer`](mcp_sansio::Client::answer) through [`session`](Self::session).
    pub fn set_responder(&mut self, responder: impl Responder + 'static) {
        self.events.set_responder(Box::new(responder));
    }

    /// Has `watcher` see every event as it arrives, while an operation runs (see
    /// [`KeptEvents::set_watcher`](mcp_sansio::KeptEvents::set_watcher)): a long call's
    /// progress, a server's log messages, as they come rather than after. Each is still kept
    /// for [`take_events`](Self::take_events) as before.
    pub fn set_watcher(&mut self, watcher: impl Watcher + 'static) {
        self.events.set_watcher(Box::new(watcher));
    }

    /// Events that no [`run`](Self::run) consumed.
    ///
    /// At most [`Limits::events_kept`](mcp_sansio::Limits) notifications and late answers
    /// are kept between two calls of this; later ones are dropped and counted in
    /// [`events_lost`](Self::events_lost). The ends of operations are always kept.
    pub fn take_events(&mut self) -> Vec<Event> {
        self.events.take_all()
    }

    /// Whether a call that failed with `error` is sent again after a new listing, by
    /// [`HttpSession::lists_again_after`] at the revision in use.
    fn lists_again_after(&self, error: &Error) -> bool {
        self.session
            .client()
            .connection()
            .is_some_and(|c| HttpSession::lists_again_after(c.version, error))
    }

    /// The catalog that [`call_tool`](Self::call_tool) listed anew after a header mismatch
    /// (the server having changed a tool's declaration), if it did since the last look: an
    /// application that keeps its own view of the tools, a host's palette, updates it from
    /// this. The client's own catalog is already this one.
    pub fn take_relisted(&mut self) -> Option<Catalog> {
        self.relisted.take()
    }

    /// How many notifications and late answers were dropped because
    /// [`take_events`](Self::take_events) was not called often enough.
    pub fn events_lost(&self) -> u64 {
        self.events.lost()
    }

    /// Runs the handshake (finding the server's revision first under
    /// [`ProtocolChoice::Auto`](mcp_sansio::ProtocolChoice::Auto)).
    ///
    /// # Errors
    /// Whatever ended the handshake.
    pub fn connect(&mut self) -> Result<Connected, HttpClientError> {
        let now = self.now();
        let op = self.session.client_mut().connect(now)?;
        self.run(op)
    }

    /// Lists the server's tools, all pages.
    ///
    /// # Errors
    /// Whatever ended the listing.
    pub fn list_tools(&mut self) -> Result<Catalog, HttpClientError> {
        let now = self.now();
        let op = self.session.client_mut().list_tools(now)?;
        self.run(op)
    }

    /// Calls a tool that is allowed and advertised; anything else is refused before a byte
    /// is sent. A call the server refuses for its `Mcp-Param-*` headers
    /// ([`Error::is_header_mismatch`]) is sent once more after the tools are listed again,
    /// with the headers the new listing declares (and refused if the tool is no longer
    /// advertised).
    ///
    /// # Errors
    /// The refusal, or whatever ended the call (or its second sending, or the listing
    /// between them).
    pub fn call_tool(
        &mut self,
        name: &str,
        arguments: &RawObject,
    ) -> Result<CallToolResult, HttpClientError> {
        self.call_tool_with(name, arguments, CallOptions::new())
    }

    /// [`call_tool`](Self::call_tool), waiting as `options` say: a deadline of its own, and
    /// the server's progress (each report kept as an [`Event::Progress`] for
    /// [`take_events`](Self::take_events)), which can restart it up to a hard maximum.
    ///
    /// # Errors
    /// As [`call_tool`](Self::call_tool).
    pub fn call_tool_with(
        &mut self,
        name: &str,
        arguments: &RawObject,
        options: CallOptions,
    ) -> Result<CallToolResult, HttpClientError> {
        let call = |client: &mut Self| {
            let now = client.now();
            let op = client
                .session
                .client_mut()
                .call_tool_with(name, arguments, options, now)?;
            client.run(op)
        };
        match call(self) {
            Err(HttpClientError::Mcp(error)) if self.lists_again_after(&error) => {
                self.relisted = Some(self.list_tools()?);
                call(self)
            }
            outcome => outcome,
        }
    }

    /// Replaces the roots the server is given (see
    /// [`Config::roots`](mcp_sansio::Config::roots)) and POSTs the
    /// `notifications/roots/list_changed` that says so. The server's next `roots/list` is
    /// answered with `roots`.
    ///
    /// # Errors
    /// The client's refusal ([`Client::set_roots`]).
    pub fn set_roots(&mut self, roots: Vec<Root>) -> Result<(), HttpClientError> {
        self.session.client_mut().set_roots(roots)?;
        self.pump();
        Ok(())
    }

    /// Performs requests and reads replies until operation `op` ends; returns what it
    /// produced. No wait passes the session's next deadline.
    ///
    /// # Errors
    /// [`HttpClientError::Mcp`] with the operation's error, or
    /// [`HttpClientError::Unreachable`] when it failed because the server could not be
    /// reached at all.
    pub fn run<T: Awaited>(&mut self, op: Op<T>) -> Result<T, HttpClientError> {
        let ended = self.drive(op, |_| None::<core::convert::Infallible>)?;
        Ok(ended.unwrap_or_else(|never| match never {}))
    }

    /// Subscribes to the changes `subscription` asks for
    /// ([`Client::listen`](mcp_sansio::Client::listen), 2026-07-28) and waits until the
    /// server acknowledges it. Its stream is then read by a worker for as long as it lasts;
    /// the changes it honours come among [`take_events`](Self::take_events) (wait for them
    /// with [`wait_events`](Self::wait_events)), and so does its end. Cancel it through
    /// [`client`](Self::client): its stream is dropped.
    ///
    /// # Errors
    /// The client's refusal ([`Misuse::NotInRevision`] in an earlier revision), or whatever
    /// ended the subscription before its acknowledgement (a refusal, the deadline).
    pub fn listen(&mut self, subscription: &Subscription) -> Result<Listening, HttpClientError> {
        let now = self.now();
        let op = self.session.client_mut().listen(subscription, now)?;
        // Found early: the acknowledgement; or the subscription's end, before any.
        let honoured = self
            .drive(op, |events| events.take_subscribed(op.id()))?
            .err();
        Ok(Listening::new(op, honoured, &mut self.events))
    }

    /// Moves the exchanges until an event is kept or `timeout` has passed, and takes every
    /// kept event (none, if none came): how an application that listens waits for the
    /// server's changes between its own operations. What the workers have read is taken
    /// at least once, so with a zero `timeout` this takes what the server has sent by now
    /// without waiting (a request of its own is answered, the answer sent).
    pub fn wait_events(&mut self, timeout: Duration) -> Vec<Event> {
        let until = self.now().saturating_add(timeout);
        let mut read = false;
        loop {
            self.events.gather(self.session.client_mut());
            self.pump();
            self.events.gather(self.session.client_mut());
            if !self.events.is_empty() || (read && self.now() >= until) {
                // What the events asked of the server (the responder's answers) is sent.
                self.pump();
                return self.events.take_all();
            }
            self.wait(Some(until));
            read = true;
        }
    }

    /// Moves the exchanges until operation `op` ends (`Ok(output)`), or until `early` finds
    /// what it looks for among the kept events (`Err(found)`).
    fn drive<T: Awaited, R>(
        &mut self,
        op: Op<T>,
        mut early: impl FnMut(&mut KeptEvents) -> Option<R>,
    ) -> Result<Result<T, R>, HttpClientError> {
        loop {
            // What arrived while waiting may be a request the responder answers now, so
            // that the answer leaves with this pump.
            self.events.gather(self.session.client_mut());
            self.pump();
            self.events.gather(self.session.client_mut());
            if let Some(found) = early(&mut self.events) {
                return Ok(Err(found));
            }
            if let Some(ended) = self.events.take_finished(op.id()) {
                match op.finished(ended) {
                    Ok(Ok(output)) => return Ok(Ok(output)),
                    Ok(Err(Error::Http(HttpError::StreamBroken))) if self.unreachable.is_some() => {
                        let why = self.unreachable.take().unwrap_or_default();
                        return Err(HttpClientError::Unreachable(why));
                    }
                    Ok(Err(error)) => return Err(error.into()),
                    Err(other) => self.events.push(other),
                }
            }
            if !self.session.client().is_pending(op) {
                return Err(Misuse::UnknownOperation.into());
            }
            self.wait(None);
        }
    }

    /// Ends the session: `DELETE` for a session with an id (its answer is not awaited
    /// beyond one second), and the workers stop.
    pub fn close(mut self) {
        if let Some(request) = self.session.close() {
            let timeout = Duration::from_secs(1);
            perform(&self.endpoint, &request, timeout, &mut |_| true);
        }
    }

    /// Hands every request the session made to a worker, and every abort to the workers.
    ///
    /// A request alone in flight is performed here, on the calling thread: no thread
    /// between the reply and the session, which is what one call at a time costs.
    fn pump(&mut self) {
        self.take_aborts();
        let Some(first) = self.session.poll_request() else {
            return;
        };
        let second = self.session.poll_request();
        // A POST only, and alone: not even a GET stream may be live, since the server may
        // send a request on it that the POST's answer waits for (server-everything asks for
        // the roots there in the middle of a call), and this thread would not read it.
        let alone = second.is_none() && self.live.is_empty();
        // A subscription's stream lasts: only a worker may read it.
        if alone && first.method == HttpMethod::Post && !first.lasting {
            self.perform_here(first);
            return;
        }
        for request in [Some(first), second].into_iter().flatten() {
            self.dispatch(request);
        }
        while let Some(request) = self.session.poll_request() {
            self.dispatch(request);
        }
    }

    /// Forgets `exchange` as live; whether it was.
    fn ended(&mut self, exchange: ExchangeId) -> bool {
        forget(&mut self.live, exchange)
    }

    /// Takes the exchanges the session gave up on: a worker's stops reading, and the one
    /// performed here stops when it is no longer live.
    fn take_aborts(&mut self) {
        while let Some(exchange) = self.session.poll_abort() {
            self.endpoint.shut(Some(exchange));
            if self.ended(exchange) && self.here != Some(exchange) {
                self.aborted
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .insert(exchange);
            }
        }
    }

    /// How long an exchange starting now may take: until the session's next deadline, or,
    /// when nothing has one (a notification sent after its operation ended), one operation's
    /// time.
    fn timeout(&self) -> Duration {
        let now = self.now();
        match self.session.poll_timeout() {
            Some(deadline) => deadline
                .saturating_duration_since(now)
                .max(Duration::from_millis(1)),
            None => self.operation_timeout,
        }
    }

    /// Hands `request` to a worker, starting one if all are busy. A job counts as busy from
    /// here, not from when a worker takes it: a job queued behind a stream that lasts the
    /// session would otherwise wait for a worker that never comes free.
    fn dispatch(&mut self, request: HttpRequest) {
        let busy = self.busy.fetch_add(1, Ordering::AcqRel);
        if busy >= self.workers && self.workers < self.max_workers {
            self.spawn_worker();
        }
        self.live.push(request.exchange);
        let job = Job {
            timeout: if request.lasting {
                HttpRequest::LASTING_BOUND
            } else {
                self.timeout()
            },
            request,
            aborted: Arc::clone(&self.aborted),
        };
        // The workers hold the queue's other end for as long as this client lives.
        let _ = self.jobs.send(job);
    }

    /// Performs `request` on this thread, feeding its reply to the session as it comes;
    /// a server's request on the stream is answered meanwhile (by the responder, where it
    /// is the application's), and requests the session makes (those answers) go to the
    /// workers.
    fn perform_here(&mut self, request: HttpRequest) {
        let exchange = request.exchange;
        let endpoint = Arc::clone(&self.endpoint);
        let timeout = self.timeout();
        self.live.push(exchange);
        self.here = Some(exchange);
        perform(&endpoint, &request, timeout, &mut |seen| {
            self.feed(exchange, seen);
            self.take_aborts();
            self.events.gather(self.session.client_mut());
            while let Some(more) = self.session.poll_request() {
                self.dispatch(more);
            }
            self.live.contains(&exchange)
        });
        self.here = None;
        self.ended(exchange);
    }

    fn spawn_worker(&mut self) {
        let queue = Arc::clone(&self.job_queue);
        let endpoint = Arc::clone(&self.endpoint);
        let replies = self.reply_sender.clone();
        let busy = Arc::clone(&self.busy);
        let spawned = std::thread::Builder::new()
            .name(String::from("mcp-sansio-http"))
            .spawn(move || loop {
                let job = {
                    let queue = queue.lock().unwrap_or_else(PoisonError::into_inner);
                    queue.recv()
                };
                let Ok(job) = job else {
                    return;
                };
                let exchange = job.request.exchange;
                perform(&endpoint, &job.request, job.timeout, &mut |seen| {
                    let aborted = job
                        .aborted
                        .lock()
                        .unwrap_or_else(PoisonError::into_inner)
                        .remove(&exchange);
                    !aborted && replies.send(Piece::of(exchange, seen)).is_ok()
                });
                busy.fetch_sub(1, Ordering::AcqRel);
            });
        if spawned.is_ok() {
            self.workers += 1;
        }
    }

    /// Waits for one piece of a reply, at most until the session's next deadline (and
    /// `until`, if given), and hands it (and the time) to the session.
    fn wait(&mut self, until: Option<Instant>) {
        let now = self.now();
        let until = [self.session.poll_timeout(), until]
            .into_iter()
            .flatten()
            .min();
        let wait = until.map_or(Duration::from_millis(50), |t| {
            t.saturating_duration_since(now)
        });
        match self.replies.recv_timeout(wait) {
            Ok(piece) => self.feed_piece(piece),
            Err(RecvTimeoutError::Timeout | RecvTimeoutError::Disconnected) => {}
        }
        // More may have come meanwhile: take it without waiting.
        while let Ok(piece) = self.replies.try_recv() {
            self.feed_piece(piece);
        }
        let now = self.now();
        self.session.handle_timeout(now);
    }

    fn feed_piece(&mut self, piece: Piece) {
        match piece {
            Piece::Head {
                exchange,
                status,
                fields,
            } => self.feed(
                exchange,
                Seen::Head {
                    status,
                    fields: &fields,
                },
            ),
            Piece::Body(exchange, bytes) => self.feed(exchange, Seen::Body(&bytes)),
            Piece::End(exchange) => self.feed(exchange, Seen::End),
            Piece::Broken {
                exchange,
                before_head,
                why,
            } => self.feed(exchange, Seen::Broken { before_head, why }),
        }
    }

    /// Hands what `exchange` saw to the session.
    fn feed(&mut self, exchange: ExchangeId, seen: Seen<'_>) {
        let now = self.now();
        match seen {
            Seen::Head { status, fields } => {
                self.session
                    .handle_head(exchange, fields.reply_head(status), now);
            }
            Seen::Body(bytes) => self.session.handle_body(exchange, bytes, now),
            Seen::End => {
                self.ended(exchange);
                self.session.handle_end(exchange, now);
            }
            Seen::Broken { before_head, why } => {
                self.ended(exchange);
                self.unreachable = before_head.then_some(why);
                self.session.handle_broken(exchange, now);
            }
        }
    }
}

impl Drop for HttpClient {
    fn drop(&mut self) {
        // Every reply still read is abandoned; workers waiting for a job end when the
        // queue closes with this client, and one blocked on a read by its timeout.
        let mut aborted = self.aborted.lock().unwrap_or_else(PoisonError::into_inner);
        aborted.extend(self.live.drain(..));
        self.endpoint.gone.store(true, Ordering::SeqCst);
        self.endpoint.shut(None);
    }
}

/// Takes `exchange` out of `list`; whether it was there.
fn forget(list: &mut Vec<ExchangeId>, exchange: ExchangeId) -> bool {
    match list.iter().position(|e| *e == exchange) {
        Some(at) => {
            list.swap_remove(at);
            true
        }
        None => false,
    }
}

/// Performs one exchange, handing what it sees of the reply to `sink` until the reply ends
/// or fails, or `sink` says to stop (the exchange was aborted).
fn perform(
    endpoint: &Endpoint,
    request: &HttpRequest,
    timeout: Duration,
    sink: &mut dyn FnMut(Seen<'_>) -> bool,
) {
    // The session's own header of a name wins over the application's (a token set with
    // `set_authorization` over one given to `header`): a name is never sent twice.
    let theirs = |name: &str| {
        !request
            .headers
            .iter()
            .any(|(n, _)| n.eq_ignore_ascii_case(name))
    };
    let headers = request
        .headers
        .iter()
        .map(|(n, v)| (n.as_ref(), v.as_ref()))
        .chain(
            endpoint
                .headers
                .iter()
                .filter(|(n, _)| theirs(n))
                .map(|(n, v)| (n.as_str(), v.as_str())),
        );
    let (method, body) = match request.method {
        HttpMethod::Get => ("GET", None),
        HttpMethod::Delete => ("DELETE", None),
        // A method a later core adds is sent as the POST it most likely is.
        _ => ("POST", Some(request.body.as_slice())),
    };
    let exchange = request.exchange;
    let opened = |tcp: &std::net::TcpStream| {
        if !request.lasting {
            return;
        }
        if let Ok(tcp) = tcp.try_clone() {
            endpoint
                .lasting
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .push((exchange, tcp));
        }
        if endpoint.gone.load(Ordering::SeqCst) {
            endpoint.shut(Some(exchange));
        }
    };
    let path = request.path.as_deref();
    endpoint
        .target
        .exchange(method, path, headers, body, timeout, &opened, sink);
    // Ended: its socket is kept for another exchange, or closed, by the wire.
    endpoint
        .lasting
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .retain(|(e, _)| *e != exchange);
}
