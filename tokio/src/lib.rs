//! An async driver for [mcp-sansio](mcp_sansio) on tokio: the same core under many tasks at
//! once, with its bounds and deadlines, cancellation by dropping a future, and the server
//! process ended as the blocking transport ends it.
//!
//! One driver task owns the sans-io [`Client`] (over HTTP, the [`HttpSession`] around it)
//! and the wire: a server process's pipes ([`connect_stdio`]), Streamable HTTP
//! ([`connect_http`]), or any byte stream ([`connect_stream`]). A [`Handle`] is cheap to
//! clone; any number of tasks call through it at once, up to
//! [`Limits::requests_in_flight`](mcp_sansio::Limits::requests_in_flight) (more wait for a
//! slot: backpressure, never an unbounded queue). Each call's deadline is the core's: the
//! runtime's timer only wakes the driver. Dropping a call's future cancels its operation
//! (`notifications/cancelled` goes to the server; in 2026-07-28 over HTTP, its reply stream
//! is dropped). The driver ends when the last handle is dropped, on [`Handle::close`], or when
//! the server goes; every future still waiting then resolves with an error.
//!
//! The whole run loop, eight calls at once from eight tasks:
//!
//! ```no_run
//! use mcp_sansio::{Allowlist, Config, RawObject};
//! use mcp_sansio_stdio::ServerCommand;
//!
//! # async fn example() -> Result<(), Box<dyn std::error::Error>> {
//! let allowlist: Allowlist = ["word_count"].into_iter().collect();
//! let command = ServerCommand::new("my-mcp-server");
//! let (server, mut events) = mcp_sansio_tokio::connect_stdio(&command, Config::new(allowlist)).await?;
//! server.list_tools().await?;
//! let args = RawObject::parse(r#"{"text":"a b c"}"#, &Default::default())?;
//! let calls: Vec<_> = (0..8)
//!     .map(|_| {
//!         let server = server.clone();
//!         let args = args.clone();
//!         tokio::spawn(async move { server.call_tool("word_count", &args).await })
//!     })
//!     .collect();
//! for call in calls {
//!     println!("{}", call.await??.text());
//! }
//! while let Ok(event) = events.try_recv() {
//!     println!("{event:?}");
//! }
//! server.close().await?;
//! # Ok(())
//! # }
//! ```
//!
//! [`connect_stream`] takes a reader and a writer (a TCP or Unix socket's halves, pipes of
//! your own), newline-framed as over stdio.
//!
//! A server that answers 401 is authorized with [`oauth::Authorizer`]: the core's OAuth flow,
//! its fetches on reqwest, the browser step an async closure of the application's.
//!
//! With the `host` feature, `Host` holds many servers (started, or at a URL) behind one
//! palette of the host crate (`mcp-sansio-host`): the model's calls from any tasks, each
//! routed to its server, and a watcher per server that acts on what it says with no call in
//! flight.

use std::fmt;
use std::io;
use std::process::ExitStatus;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use mcp_sansio::auth::Token;
use mcp_sansio::{
    Awaited, CallOptions, CallToolResult, Catalog, Client, Config, Connected, Error, Event,
    HttpSession, Instant, Misuse, Op, RawObject, Reply, Root, Subscription, SubscriptionEnded,
    Ticket,
};
use mcp_sansio_stdio::{ServerCommand, ServerProcess, DEFAULT_GRACE};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::sync::{mpsc, oneshot, Notify, OwnedSemaphorePermit, Semaphore};

use stream::StreamWire;

mod driver;
#[cfg(feature = "host")]
mod host;
mod http;
pub mod oauth;
mod stream;

#[cfg(feature = "host")]
pub use host::{Host, HostError, HostEvent, HostEvents, HostLimits, ServerFailure};

use driver::{Command, Driver, ListenWaiting, Shared, Start, Waiter, Waiting, Wire};

/// The driver's own bounds (the core's are in [`Config::limits`]).
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct DriverLimits {
    /// How long the server gets to exit once its input is closed, before its process group
    /// is sent SIGTERM (then, 100 ms later, SIGKILL). Default: one second.
    pub close_grace: Duration,
}

impl Default for DriverLimits {
    fn default() -> Self {
        DriverLimits {
            close_grace: DEFAULT_GRACE,
        }
    }
}

/// The core's configuration and the driver's bounds. A [`Config`] converts into one with the
/// default [`DriverLimits`].
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct DriverConfig {
    /// The core's configuration: allowlist, revision, limits.
    pub config: Config,
    /// The driver's bounds.
    pub limits: DriverLimits,
}

impl DriverConfig {
    /// `config` with the driver's bounds `limits`.
    pub fn new(config: Config, limits: DriverLimits) -> Self {
        DriverConfig { config, limits }
    }
}

impl From<Config> for DriverConfig {
    fn from(config: Config) -> Self {
        DriverConfig::new(config, DriverLimits::default())
    }
}

/// What went wrong, by who is at fault.
#[derive(Debug)]
#[non_exhaustive]
pub enum AsyncError {
    /// The server could not be started.
    Spawn(io::Error),
    /// The URL is not an `http://` (or, with the `rustls` feature, `https://`) URL with a
    /// host.
    InvalidUrl(String),
    /// A header the application gave is not a valid header.
    InvalidHeader(String),
    /// The server at the URL could not be reached: the connection was refused, timed out or
    /// failed before any reply (the cause is the HTTP client's error, as text).
    Unreachable(String),
    /// The protocol layer refused or failed the operation; see [`mcp_sansio::Error`].
    Mcp(Error),
    /// The connection's driver has ended (the server went, the connection failed, or it was
    /// closed) before this operation could end.
    Ended,
    /// A token was given for a connection that is not over HTTP, where it has nowhere to go.
    NotHttp,
}

impl fmt::Display for AsyncError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AsyncError::Spawn(e) => write!(f, "the server could not be started: {e}"),
            AsyncError::InvalidUrl(why) => write!(f, "the server's address is invalid: {why}"),
            AsyncError::InvalidHeader(why) => write!(f, "a header is invalid: {why}"),
            AsyncError::Unreachable(why) => write!(f, "the server could not be reached: {why}"),
            AsyncError::Mcp(e) => e.fmt(f),
            AsyncError::Ended => f.write_str(
                "the connection has ended (the server went, the connection failed, or it was closed)",
            ),
            AsyncError::NotHttp => {
                f.write_str("the connection is not over HTTP, where a token would go")
            }
        }
    }
}

impl std::error::Error for AsyncError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            AsyncError::Spawn(e) => Some(e),
            // Transparent: the core's error is this error, not its cause.
            AsyncError::Mcp(e) => std::error::Error::source(e),
            AsyncError::InvalidUrl(_)
            | AsyncError::InvalidHeader(_)
            | AsyncError::Unreachable(_)
            | AsyncError::Ended
            | AsyncError::NotHttp => None,
        }
    }
}

impl From<Error> for AsyncError {
    fn from(e: Error) -> Self {
        AsyncError::Mcp(e)
    }
}

/// The application's side of one connection: start operations from any task, at once.
/// Clones share the connection; it ends when the last one is dropped (or on
/// [`close`](Self::close)).
#[derive(Clone, Debug)]
pub struct Handle {
    link: Link,
    connected: Arc<Connected>,
    pid: Option<u32>,
    /// Whether the connection is Streamable HTTP, where a call refused for its headers is
    /// sent again after a new listing.
    over_http: bool,
}

/// Where an operation's outcome goes: to the future waiting for it.
type Outcome<R> = oneshot::Sender<Result<R, AsyncError>>;

/// The way to the driver.
#[derive(Clone, Debug)]
struct Link {
    commands: mpsc::Sender<Command>,
    shared: Arc<Shared>,
}

/// Events no operation waits for (notifications, late answers, list changes, the
/// server's requests of the application, to answer with [`Handle::answer`], the
/// connection's failure), in order, at most [`Limits::events_kept`](mcp_sansio::Limits) of
/// them (past it, new ones are dropped and counted in [`lost`](Self::lost)). It ends
/// (`recv` gives `None`) once the driver has ended and every event was taken. It is also a
/// [`Stream`](futures_core::Stream), for `StreamExt` and the like.
///
/// A host over many connections hands its application the same kind of queue, of events
/// that say which server they came from (`Events<HostEvent>`, with the `host` feature).
#[derive(Debug)]
pub struct Events<T = Event> {
    queue: mpsc::Receiver<T>,
    lost: Arc<AtomicU64>,
}

impl<T> Events<T> {
    /// The next event, waiting for it; `None` once the connection has ended.
    pub async fn recv(&mut self) -> Option<T> {
        self.queue.recv().await
    }

    /// The next event if one is queued.
    ///
    /// # Errors
    /// Empty, or disconnected once the connection has ended and the queue is drained.
    pub fn try_recv(&mut self) -> Result<T, mpsc::error::TryRecvError> {
        self.queue.try_recv()
    }

    /// How many events were dropped because the queue was full.
    pub fn lost(&self) -> u64 {
        self.lost.load(Ordering::Relaxed)
    }
}

impl<T> futures_core::Stream for Events<T> {
    type Item = T;

    fn poll_next(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<T>> {
        self.queue.poll_recv(cx)
    }
}

/// The receiving end of an operation's outcome, which tells the driver when it is dropped:
/// a call's future that goes before its end leaves this behind, and the driver cancels the
/// operations nobody waits for.
struct Answer<'a, T> {
    outcome: oneshot::Receiver<Result<T, AsyncError>>,
    abandoned: &'a Notify,
}

impl<T> Drop for Answer<'_, T> {
    fn drop(&mut self) {
        // Only a future that goes before its outcome wakes the driver (an ended one would
        // cost it a wake-up per call), and closes the channel first, so the driver that
        // wakes sees the operation abandoned.
        if let Err(oneshot::error::TryRecvError::Empty) = self.outcome.try_recv() {
            self.outcome.close();
            self.abandoned.notify_one();
        }
    }
}

impl Handle {
    /// The server's answer to the handshake.
    pub fn server(&self) -> &Connected {
        &self.connected
    }

    /// The server's process id, when it is a process this driver started.
    pub fn pid(&self) -> Option<u32> {
        self.pid
    }

    /// How many operations the client has in flight, as of the driver's last step (a
    /// cancelled one leaves the table at once, before its server has heard of it).
    pub fn in_flight(&self) -> usize {
        self.link.shared.in_flight.load(Ordering::Relaxed)
    }

    /// Lists the server's tools, all pages; the catalog also becomes the client's, which
    /// [`call_tool`](Self::call_tool) checks.
    ///
    /// # Errors
    /// Whatever ended the listing, or [`AsyncError::Ended`].
    pub async fn list_tools(&self) -> Result<Catalog, AsyncError> {
        self.run(|client, now| client.list_tools(now)).await
    }

    /// Calls a tool that is allowed and advertised; anything else is refused before a byte
    /// is written. Dropping the future cancels the call. Over Streamable HTTP in 2026-07-28, a
    /// call the server refuses for its `Mcp-Param-*` headers
    /// ([`HttpSession::lists_again_after`]) is sent once more after the tools are listed
    /// again, with the headers the new listing declares;
    /// [`take_relisted`](Self::take_relisted) then gives the new listing.
    ///
    /// # Errors
    /// The refusal, whatever ended the call (or its second sending, or the listing between
    /// them), or [`AsyncError::Ended`].
    pub async fn call_tool(
        &self,
        name: &str,
        arguments: &RawObject,
    ) -> Result<CallToolResult, AsyncError> {
        self.call_tool_with(name, arguments, CallOptions::new())
            .await
    }

    /// [`call_tool`](Self::call_tool), waiting as `options` say: a deadline of its own, and
    /// the server's progress (each report an [`Event::Progress`] on the events channel),
    /// which can restart it up to a hard maximum.
    ///
    /// # Errors
    /// As [`call_tool`](Self::call_tool).
    pub async fn call_tool_with(
        &self,
        name: &str,
        arguments: &RawObject,
        options: CallOptions,
    ) -> Result<CallToolResult, AsyncError> {
        let call = || {
            let name = name.to_owned();
            let arguments = arguments.clone();
            self.run(move |client, now| client.call_tool_with(&name, &arguments, options, now))
        };
        match call().await {
            Err(AsyncError::Mcp(error))
                if self.over_http
                    && HttpSession::lists_again_after(self.connected.version, &error) =>
            {
                let catalog = self.list_tools().await?;
                *self.relisted() = Some(catalog);
                call().await
            }
            outcome => outcome,
        }
    }

    /// The catalog that [`call_tool`](Self::call_tool) (on this handle or a clone) listed
    /// anew after a header mismatch, the server having changed a tool's declaration, if one
    /// did since the last look: an application that keeps its own view of the tools updates
    /// it from this. The client's own catalog is already this one.
    pub fn take_relisted(&self) -> Option<Catalog> {
        self.relisted().take()
    }

    fn relisted(&self) -> std::sync::MutexGuard<'_, Option<Catalog>> {
        // Only ever replaced or taken whole: a panic elsewhere leaves nothing half-written.
        self.link
            .shared
            .relisted
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Starts an operation of your own on the client (any of its commands) and waits for
    /// its end. It waits first for a free slot while
    /// [`Limits::requests_in_flight`](mcp_sansio::Limits::requests_in_flight) operations are
    /// in flight. Dropping the future cancels the operation.
    ///
    /// # Errors
    /// The client's refusal, whatever ended the operation, or [`AsyncError::Ended`].
    pub async fn run<T, F>(&self, start: F) -> Result<T, AsyncError>
    where
        T: Awaited + Send + 'static,
        F: FnOnce(&mut Client, Instant) -> Result<Op<T>, Misuse> + Send + 'static,
    {
        self.link.run(start).await
    }

    /// Subscribes to the changes `subscription` asks for
    /// ([`Client::listen`](mcp_sansio::Client::listen), 2026-07-28), and waits until the
    /// server acknowledges it; the subscription holds one slot of
    /// [`Limits::requests_in_flight`](mcp_sansio::Limits::requests_in_flight) until it
    /// ends. Dropping the future before then cancels it.
    ///
    /// # Errors
    /// The client's refusal ([`Misuse::NotInRevision`] in an earlier revision), whatever
    /// ended the subscription before its acknowledgement, or [`AsyncError::Ended`].
    pub async fn listen(&self, subscription: Subscription) -> Result<Listener, AsyncError> {
        let (acknowledged, acknowledgement) = oneshot::channel();
        let (end, ended) = oneshot::channel();
        // From here a dropped future drops the listener, which cancels the subscription.
        let mut listener = Listener {
            honoured: Subscription::default(),
            end: ended,
            shared: Arc::clone(&self.link.shared),
        };
        self.link
            .start(
                move |client, now| client.listen(&subscription, now),
                end,
                |op, end, slot| {
                    Box::new(ListenWaiting {
                        op,
                        acknowledged: Some(acknowledged),
                        end,
                        _slot: slot,
                    })
                },
            )
            .await?;
        if let Ok(honoured) = acknowledgement.await {
            listener.honoured = honoured;
            return Ok(listener);
        }
        // Ended before any acknowledgement: a refusal, or the server ending it at once,
        // which leaves a listener that honours nothing and has ended.
        let ended = (&mut listener.end)
            .await
            .unwrap_or(Err(AsyncError::Ended))?;
        let (end, ended_now) = oneshot::channel();
        let _ = end.send(Ok(ended));
        listener.end = ended_now;
        Ok(listener)
    }

    /// Replaces the roots the server is given (see
    /// [`Config::roots`](mcp_sansio::Config::roots)) and sends the
    /// `notifications/roots/list_changed` that says so; the server's next `roots/list` is
    /// answered with `roots`.
    ///
    /// # Errors
    /// The client's refusal ([`Client::set_roots`]), or [`AsyncError::Ended`].
    pub async fn set_roots(&self, roots: Vec<Root>) -> Result<(), AsyncError> {
        self.tell(move |client| client.set_roots(roots)).await
    }

    /// Answers the server's request `ticket` (an [`Event::ServerRequest`] from [`Events`])
    /// with `reply`; see [`Config::asks`](mcp_sansio::Config::asks). A request the
    /// application's event queue had no room for was answered with an error already.
    ///
    /// # Errors
    /// The client's refusal ([`Client::answer`]), or [`AsyncError::Ended`].
    pub async fn answer(&self, ticket: Ticket, reply: Reply) -> Result<(), AsyncError> {
        self.tell(move |client| client.answer(ticket, reply)).await
    }

    /// Sends `token` as `Authorization: Bearer …` with every request from now on (see
    /// [`HttpSession::set_authorization`](mcp_sansio::HttpSession::set_authorization)), or
    /// none with `None`: a token refreshed mid-session
    /// ([`auth::TokenRequest::refresh`](mcp_sansio::auth::TokenRequest::refresh)) replaces
    /// the one [`connect_http`] was given as a header, for requests made after this returns.
    ///
    /// # Errors
    /// [`AsyncError::NotHttp`] for a connection over stdio or a byte stream, or
    /// [`AsyncError::Ended`].
    pub async fn set_authorization(&self, token: Option<Token>) -> Result<(), AsyncError> {
        let (reply, taken) = oneshot::channel();
        self.link
            .commands
            .send(Command::Authorize(token, reply))
            .await
            .map_err(|_| AsyncError::Ended)?;
        match taken.await {
            Ok(true) => Ok(()),
            Ok(false) => Err(AsyncError::NotHttp),
            Err(_) => Err(AsyncError::Ended),
        }
    }

    /// Has the driver apply `command` to its client, and waits for the client's word.
    async fn tell(
        &self,
        command: impl FnOnce(&mut Client) -> Result<(), Misuse> + Send + 'static,
    ) -> Result<(), AsyncError> {
        let (reply, outcome) = oneshot::channel();
        let tell = Box::new(move |client: &mut Client| {
            let _ = reply.send(command(client));
        });
        self.link
            .commands
            .send(Command::Tell(tell))
            .await
            .map_err(|_| AsyncError::Ended)?;
        outcome
            .await
            .map_err(|_| AsyncError::Ended)?
            .map_err(|misuse| AsyncError::Mcp(misuse.into()))
    }

    /// Ends the connection now, for every clone: futures still waiting fail with
    /// [`AsyncError::Ended`], the server's input is closed, and a server process (with its
    /// whole group) is ended and reaped within [`DriverLimits::close_grace`] and 100 ms.
    /// Returns how the process exited (`None` for a stream, or a process that could not be
    /// reaped).
    ///
    /// # Errors
    /// [`AsyncError::Ended`] if the connection had ended already.
    pub async fn close(self) -> Result<Option<ExitStatus>, AsyncError> {
        let (reply, status) = oneshot::channel();
        self.link
            .commands
            .send(Command::Close(reply))
            .await
            .map_err(|_| AsyncError::Ended)?;
        status.await.map_err(|_| AsyncError::Ended)
    }
}

impl Link {
    /// See [`Handle::run`].
    async fn run<T, F>(&self, start: F) -> Result<T, AsyncError>
    where
        T: Awaited + Send + 'static,
        F: FnOnce(&mut Client, Instant) -> Result<Op<T>, Misuse> + Send + 'static,
    {
        let (reply, outcome) = oneshot::channel();
        // From here a dropped future wakes the driver, which cancels the operation if it
        // started (a start still in the queue is cancelled when it starts).
        let mut answer = Answer {
            outcome,
            abandoned: &self.shared.abandoned,
        };
        self.start(start, reply, |op, reply, slot| {
            Box::new(Waiting {
                op,
                reply,
                _slot: slot,
            })
        })
        .await?;
        (&mut answer.outcome)
            .await
            .unwrap_or(Err(AsyncError::Ended))
    }

    /// Waits for a slot, then has the driver run `start` on its client: the operation it
    /// starts is waited for by the [`Waiter`] `waiter` makes of it, `reply` and the slot; a
    /// refusal goes to `reply`.
    async fn start<T, R, F, M>(
        &self,
        start: F,
        reply: Outcome<R>,
        waiter: M,
    ) -> Result<(), AsyncError>
    where
        T: Awaited + Send + 'static,
        R: Send + 'static,
        F: FnOnce(&mut Client, Instant) -> Result<Op<T>, Misuse> + Send + 'static,
        M: FnOnce(Op<T>, Outcome<R>, OwnedSemaphorePermit) -> Box<dyn Waiter> + Send + 'static,
    {
        // The slot goes with the operation, not with the future: the driver frees it when
        // the operation ends, so a future that is kept but no longer polled cannot hold it.
        let slot = Arc::clone(&self.shared.slots)
            .acquire_owned()
            .await
            .map_err(|_| AsyncError::Ended)?;
        let start: Start = Box::new(move |client, now| match start(client, now) {
            Ok(op) => Some((op.id(), waiter(op, reply, slot))),
            Err(misuse) => {
                driver::refused(reply, misuse);
                None
            }
        });
        self.commands
            .send(Command::Start(start))
            .await
            .map_err(|_| AsyncError::Ended)
    }
}

/// A subscription the driver holds ([`Handle::listen`]): what the server honours, and its
/// end. The changes it honours arrive among the [`Events`], as
/// [`Event::Notification`]s. Dropping it cancels the
/// subscription (over stdio `notifications/cancelled` goes to the server; over HTTP its
/// stream is dropped).
#[derive(Debug)]
pub struct Listener {
    honoured: Subscription,
    end: oneshot::Receiver<Result<SubscriptionEnded, AsyncError>>,
    shared: Arc<Shared>,
}

impl Listener {
    /// What the server honours of what was asked: never more.
    pub fn honoured(&self) -> &Subscription {
        &self.honoured
    }

    /// Waits for the subscription's end: `Ok` when the server ended it on purpose, else
    /// what lost it (its stream broke, the connection ended).
    ///
    /// # Errors
    /// What ended it, if not the server on purpose; [`AsyncError::Ended`] with the driver.
    pub async fn ended(mut self) -> Result<SubscriptionEnded, AsyncError> {
        (&mut self.end).await.unwrap_or(Err(AsyncError::Ended))
    }
}

impl Drop for Listener {
    fn drop(&mut self) {
        // As a call's future does: only a subscription that has not ended wakes the driver.
        if let Err(oneshot::error::TryRecvError::Empty) = self.end.try_recv() {
            self.end.close();
            self.shared.abandoned.notify_one();
        }
    }
}

/// Starts the driver for a server speaking newline-framed JSON-RPC over `reader` and
/// `writer` (the two halves of a socket, or pipes), and runs the handshake.
///
/// # Errors
/// Whatever ended the handshake.
pub async fn connect_stream<R, W>(
    reader: R,
    writer: W,
    config: impl Into<DriverConfig>,
) -> Result<(Handle, Events), AsyncError>
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let config = config.into();
    let client = Client::new(config.config.clone());
    start(StreamWire::new(client, reader, writer, None), &config, None).await
}

/// Starts `command` as the blocking transport does (a process group of its own, only the
/// environment given, stderr never blocking), runs the driver over its stdin and stdout, and
/// runs the handshake. When the driver ends, the server's input is closed and its whole
/// group ended (SIGTERM, then SIGKILL) and reaped.
///
/// # Errors
/// [`AsyncError::Spawn`] if the server cannot be started; whatever ended the handshake.
pub async fn connect_stdio(
    command: &ServerCommand,
    config: impl Into<DriverConfig>,
) -> Result<(Handle, Events), AsyncError> {
    let config = config.into();
    let (process, stdin, stdout) = ServerProcess::spawn(command).map_err(AsyncError::Spawn)?;
    let pid = process.pid();
    let stdin = tokio::process::ChildStdin::from_std(stdin).map_err(AsyncError::Spawn)?;
    let stdout = tokio::process::ChildStdout::from_std(stdout).map_err(AsyncError::Spawn)?;
    let client = Client::new(config.config.clone());
    let wire = StreamWire::new(client, stdout, stdin, Some(process));
    start(wire, &config, Some(pid)).await
}

/// Starts the driver for the MCP endpoint at `url` (such as `http://127.0.0.1:8000/mcp`)
/// over Streamable HTTP, in whichever revision the configuration chooses, and runs the
/// handshake. `headers` (a bearer token) go with every request, to this URL only: redirects
/// are not followed, and no proxy is used. Requests run concurrently, each on a connection
/// of a keep-alive pool; dropping a call's future drops its reply (and, in a 2025 session,
/// sends `notifications/cancelled`).
///
/// # Errors
/// [`AsyncError::InvalidUrl`] or [`AsyncError::InvalidHeader`] before anything is sent;
/// [`AsyncError::Unreachable`] or whatever else ended the handshake.
pub async fn connect_http(
    url: &str,
    headers: &[(&str, &str)],
    config: impl Into<DriverConfig>,
) -> Result<(Handle, Events), AsyncError> {
    let config = config.into();
    let scheme_ok =
        url.starts_with("http://") || (cfg!(feature = "rustls") && url.starts_with("https://"));
    let parsed = reqwest::Url::parse(url)
        .ok()
        .filter(|u| scheme_ok && u.host().is_some())
        .ok_or_else(|| {
            let want = if cfg!(feature = "rustls") {
                "http:// or https://"
            } else {
                "http:// (https:// needs the rustls feature)"
            };
            AsyncError::InvalidUrl(format!("{url:?} is not an {want} URL with a host"))
        })?;
    let mut map = reqwest::header::HeaderMap::new();
    for (name, value) in headers {
        let name = reqwest::header::HeaderName::try_from(*name)
            .map_err(|e| AsyncError::InvalidHeader(format!("name {name:?}: {e}")))?;
        let value = reqwest::header::HeaderValue::try_from(*value)
            .map_err(|e| AsyncError::InvalidHeader(format!("{name:?}'s value: {e}")))?;
        map.append(name, value);
    }
    let client = http::client().map_err(|e| AsyncError::InvalidUrl(e.to_string()))?;
    let endpoint = http::Endpoint {
        http: client,
        url: parsed,
        headers: map,
    };
    let session = HttpSession::new(config.config.clone()).with_url(url);
    let wire = http::HttpWire::new(session, endpoint, config.config.limits.operation_timeout);
    let (mut handle, events) = start(wire, &config, None).await?;
    handle.over_http = true;
    Ok((handle, events))
}

async fn start<W: Wire>(
    wire: W,
    config: &DriverConfig,
    pid: Option<u32>,
) -> Result<(Handle, Events), AsyncError> {
    let slots = config.config.limits.requests_in_flight.max(1);
    let (commands, queue) = mpsc::channel(slots);
    let (events, event_queue) = mpsc::channel(config.config.limits.events_kept.max(1));
    let shared = Arc::new(Shared {
        slots: Arc::new(Semaphore::new(slots)),
        abandoned: Notify::new(),
        events_lost: Arc::new(AtomicU64::new(0)),
        in_flight: AtomicUsize::new(0),
        relisted: std::sync::Mutex::new(None),
    });
    let driver = Driver {
        wire,
        commands: queue,
        events,
        shared: Arc::clone(&shared),
        grace: config.limits.close_grace,
    };
    tokio::spawn(driver.run());
    let link = Link {
        commands,
        shared: Arc::clone(&shared),
    };
    let connected = link.run(|client, now| client.connect(now)).await?;
    let handle = Handle {
        link,
        connected: Arc::new(connected),
        pid,
        over_http: false,
    };
    Ok((
        handle,
        Events {
            queue: event_queue,
            lost: Arc::clone(&shared.events_lost),
        },
    ))
}
