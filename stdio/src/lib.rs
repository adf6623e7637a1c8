//! The stdio transport for [mcp-sansio](mcp_sansio): an MCP server run as a child process in
//! its own process group, spoken to over its stdin and stdout, bounded in time and memory by
//! the core, and ended completely on close.
//!
//! ```no_run
//! use mcp_sansio::{Allowlist, Config, Limits, RawObject};
//! use mcp_sansio_stdio::{ServerCommand, StdioClient};
//! use std::time::Duration;
//!
//! let allowlist: Allowlist = ["word_count"].into_iter().collect();
//! let command = ServerCommand::new("my-mcp-server").arg("--quiet");
//! let mut server = StdioClient::spawn(&command, Config::new(allowlist))?;
//! server.connect()?;
//! server.list_tools()?;
//! let args = RawObject::parse(r#"{"text":"vanilla stock needs review"}"#, &Limits::default())?;
//! println!("{}", server.call_tool("word_count", &args)?.text());
//! let status = server.close(Duration::from_secs(1))?;
//! # Ok::<(), mcp_sansio_stdio::StdioError>(())
//! ```
//!
//! Every wait is bounded by the core's [`Client::poll_timeout`], so one operation's deadline
//! covers its writes and its reads together. Pipes are non-blocking and waited on with `poll`
//! through [rustix]; the server's stderr never blocks it (discarded by default).
//!
//! With the `cli` feature (on by default) the crate also builds `mcp-call`, a command-line
//! client on this transport: `mcp-call --list -- COMMAND [ARG...]`,
//! `mcp-call --call NAME --allow NAME --args JSON -- COMMAND [ARG...]`, with fixed exit codes
//! (see its `--help` and the repository's README).

use std::fmt;
use std::io::{self, Read, Write};
use std::process::{ChildStdin, ChildStdout, ExitStatus};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use mcp_sansio::{
    Awaited, CallOptions, CallToolResult, Catalog, Client, Config, Connected, Error, Event,
    Instant, KeptEvents, Listening, Misuse, Op, RawObject, Responder, Root, Subscription, Watcher,
};
use rustix::event::{poll, PollFd, PollFlags};
#[cfg(feature = "host")]
mod host;
#[cfg(feature = "host")]
pub use host::{Host, HostError, HostEvent, HostServer, ServerAt, ServerFailure};
mod process;
pub use process::{ServerCommand, ServerProcess, StderrMode, DEFAULT_GRACE};

/// How long one wait lasts at most while a stop flag is watched: the longest a set flag
/// goes unnoticed.
const STOP_CHECK_MS: u64 = 50;

/// How long one wait lasts at most when nothing awaited has a deadline (the end of a
/// standing subscription): the driver then waits for the server in slices, never spinning.
const IDLE_WAIT_MS: u64 = 50;

/// How many bytes one read from the server takes at most.
const READ_CHUNK: usize = 64 * 1024;

/// How many bytes of frames the transport takes from the client before it writes them (one
/// frame more at most): a pipe's worth. The rest wait in the client.
const WRITE_BATCH: usize = 64 * 1024;

/// What went wrong, by who is at fault.
///
/// Each error says its own part in `Display` and leaves the cause to
/// [`source`](std::error::Error::source), so that printing the chain shows every part once:
/// `the server could not be started: No such file or directory (os error 2)`.
/// [`StdioError::Mcp`] is transparent: it reads as the core's error.
#[derive(Debug)]
#[non_exhaustive]
pub enum StdioError {
    /// The server could not be started.
    Spawn(io::Error),
    /// Talking to the server's pipes failed here (not the server's doing).
    Io(io::Error),
    /// The protocol layer refused or failed the operation; see [`mcp_sansio::Error`].
    Mcp(Error),
    /// The flag given to [`StdioClient::stop_when`] was set while an operation was awaited.
    Stopped,
}

impl fmt::Display for StdioError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StdioError::Spawn(_) => f.write_str("the server could not be started"),
            StdioError::Io(_) => f.write_str("the server's pipes failed"),
            StdioError::Mcp(e) => e.fmt(f),
            StdioError::Stopped => f.write_str("the application stopped waiting for the server"),
        }
    }
}

impl std::error::Error for StdioError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            StdioError::Spawn(e) | StdioError::Io(e) => Some(e),
            // Transparent: the core's error is this error, not its cause.
            StdioError::Mcp(e) => std::error::Error::source(e),
            StdioError::Stopped => None,
        }
    }
}

impl From<Error> for StdioError {
    fn from(e: Error) -> Self {
        StdioError::Mcp(e)
    }
}

impl From<Misuse> for StdioError {
    fn from(e: Misuse) -> Self {
        StdioError::Mcp(e.into())
    }
}

/// An MCP server started as a child process, and the sans-io [`Client`] that speaks to it.
///
/// The blocking methods ([`connect`](Self::connect), [`list_tools`](Self::list_tools),
/// [`call_tool`](Self::call_tool)) each run one operation to its end. For several requests
/// in flight, queue them on [`client`](Self::client) and wait for each with
/// [`run`](Self::run). Events that belong to no awaited operation (notifications, late
/// answers, other operations' ends) are kept for [`take_events`](Self::take_events).
///
/// [`close`](Self::close) ends the server and everything in its process group; dropping the
/// client does the same with [`DEFAULT_GRACE`].
#[derive(Debug)]
pub struct StdioClient {
    /// Declared before `process`, so that a dropped client closes the server's stdin (asking
    /// it to exit) before the process's own drop ends it.
    stdin: Option<ChildStdin>,
    process: ServerProcess,
    stdout: ChildStdout,
    stdout_open: bool,
    client: Client,
    origin: std::time::Instant,
    outgoing: Vec<u8>,
    read_buf: Vec<u8>,
    events: KeptEvents,
    stop: Option<Arc<AtomicBool>>,
}

impl StdioClient {
    /// Starts the server in a process group of its own, with the command's environment,
    /// non-blocking pipes for stdin and stdout, and stderr where the command says.
    ///
    /// # Errors
    /// [`StdioError::Spawn`] if the program cannot be started.
    pub fn spawn(command: &ServerCommand, config: Config) -> Result<Self, StdioError> {
        let (process, stdin, stdout) = ServerProcess::spawn(command).map_err(StdioError::Spawn)?;
        for fd in [
            rustix::fd::AsFd::as_fd(&stdin),
            rustix::fd::AsFd::as_fd(&stdout),
        ] {
            rustix::io::ioctl_fionbio(fd, true).map_err(|e| StdioError::Spawn(e.into()))?;
        }
        let events = KeptEvents::new(config.limits.events_kept);
        Ok(StdioClient {
            stdin: Some(stdin),
            process,
            stdout,
            stdout_open: true,
            client: Client::new(config),
            origin: std::time::Instant::now(),
            outgoing: Vec::new(),
            read_buf: vec![0; READ_CHUNK],
            events,
            stop: None,
        })
    }

    /// The server's process id (also its process group's id).
    pub fn pid(&self) -> u32 {
        self.process.pid()
    }

    /// The sans-io client underneath, for commands of your own; drive them with
    /// [`run`](Self::run).
    pub fn client(&mut self) -> &mut Client {
        &mut self.client
    }

    /// Now, on the clock the client runs on (milliseconds since the server was started).
    pub fn now(&self) -> Instant {
        Instant::from_std(self.origin, std::time::Instant::now())
    }

    /// Makes every wait end with [`StdioError::Stopped`] once `flag` is set, for example by
    /// a signal handler (signal-hook's `flag::register`). A set flag is noticed within 50 ms;
    /// the server keeps running until [`close`](Self::close) or drop ends it.
    pub fn stop_when(&mut self, flag: Arc<AtomicBool>) {
        self.stop = Some(flag);
    }

    /// Has `responder` answer each request a server makes of the application (an
    /// elicitation, a sampling request: see [`Config::asks`](mcp_sansio::Config)) while a
    /// [`run`](Self::run) waits, under the awaited operation's deadline. Without one, such
    /// requests are kept for [`take_events`](Self::take_events) and wait for
    /// [`Client::answer`](mcp_sansio::Client::answer) through [`client`](Self::client).
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

    /// Events that no [`run`](Self::run) consumed: notifications, late answers, and the ends
    /// of operations nobody waited for.
    ///
    /// At most [`Limits::events_kept`](mcp_sansio::Limits) notifications and late answers
    /// are kept between two calls of this; later ones are dropped and counted in
    /// [`events_lost`](Self::events_lost). The ends of operations are always kept.
    pub fn take_events(&mut self) -> Vec<Event> {
        self.events.take_all()
    }

    /// How many notifications and late answers were dropped because
    /// [`take_events`](Self::take_events) was not called often enough.
    pub fn events_lost(&self) -> u64 {
        self.events.lost()
    }

    /// Runs the handshake.
    ///
    /// # Errors
    /// Whatever ended the handshake: see [`mcp_sansio::Error`].
    pub fn connect(&mut self) -> Result<Connected, StdioError> {
        let op = self.client.connect(self.now())?;
        self.run(op)
    }

    /// Lists the server's tools, all pages; the catalog also becomes the client's.
    ///
    /// # Errors
    /// Whatever ended the listing.
    pub fn list_tools(&mut self) -> Result<Catalog, StdioError> {
        let op = self.client.list_tools(self.now())?;
        self.run(op)
    }

    /// Calls a tool that is allowed and advertised; anything else is refused before a byte
    /// is written.
    ///
    /// # Errors
    /// The refusal, or whatever ended the call.
    pub fn call_tool(
        &mut self,
        name: &str,
        arguments: &RawObject,
    ) -> Result<CallToolResult, StdioError> {
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
    ) -> Result<CallToolResult, StdioError> {
        let op = self
            .client
            .call_tool_with(name, arguments, options, self.now())?;
        self.run(op)
    }

    /// Replaces the roots the server is given (see
    /// [`Config::roots`](mcp_sansio::Config::roots)) and writes the server the
    /// `notifications/roots/list_changed` that says so, as far as its pipe takes it now (the
    /// rest goes with the next operation). The server's next `roots/list` is answered with
    /// `roots`.
    ///
    /// # Errors
    /// The client's refusal ([`Client::set_roots`]); [`StdioError::Io`] if the pipe fails.
    pub fn set_roots(&mut self, roots: Vec<Root>) -> Result<(), StdioError> {
        self.client.set_roots(roots)?;
        self.send_queued()
    }

    /// Drives the pipes until operation `op` ends, and returns what it produced. Waits never
    /// pass the client's next deadline, so the operation ends by its deadline at the latest.
    ///
    /// # Errors
    /// [`StdioError::Mcp`] with the operation's error; [`StdioError::Io`] if the pipes fail
    /// here; [`StdioError::Stopped`] once the [`stop_when`](Self::stop_when) flag is set.
    pub fn run<T: Awaited>(&mut self, op: Op<T>) -> Result<T, StdioError> {
        let ended = self.drive(op, |_| None::<core::convert::Infallible>)?;
        Ok(ended.unwrap_or_else(|never| match never {}))
    }

    /// Subscribes to the changes `subscription` asks for
    /// ([`Client::listen`](mcp_sansio::Client::listen), 2026-07-28) and drives the pipes
    /// until the server acknowledges it. The changes it honours then come among
    /// [`take_events`](Self::take_events) (wait for them with
    /// [`wait_events`](Self::wait_events)), and so does its end; cancel it through
    /// [`client`](Self::client).
    ///
    /// # Errors
    /// The client's refusal ([`Misuse::NotInRevision`] in an earlier revision), or whatever
    /// ended the subscription before its acknowledgement (a refusal, the deadline).
    pub fn listen(&mut self, subscription: &Subscription) -> Result<Listening, StdioError> {
        let op = self.client.listen(subscription, self.now())?;
        // Found early: the acknowledgement; or the subscription's end, before any.
        let honoured = self
            .drive(op, |events| events.take_subscribed(op.id()))?
            .err();
        Ok(Listening::new(op, honoured, &mut self.events))
    }

    /// Drives the pipes until an event is kept or `timeout` has passed, and takes every
    /// kept event (none, if none came): how an application that listens waits for the
    /// server's changes between its own operations.
    ///
    /// # Errors
    /// [`StdioError::Io`] if the pipes fail here; [`StdioError::Stopped`] once the
    /// [`stop_when`](Self::stop_when) flag is set.
    pub fn wait_events(&mut self, timeout: Duration) -> Result<Vec<Event>, StdioError> {
        let until = self.now().saturating_add(timeout);
        loop {
            self.check_stop()?;
            self.events.gather(&mut self.client);
            if !self.events.is_empty() || self.now() >= until {
                return Ok(self.events.take_all());
            }
            self.exchange(Some(until))?;
        }
    }

    /// Drives the pipes until operation `op` ends (`Ok(output)`), or until `early` finds
    /// what it looks for among the kept events (`Err(found)`).
    fn drive<T: Awaited, R>(
        &mut self,
        op: Op<T>,
        mut early: impl FnMut(&mut KeptEvents) -> Option<R>,
    ) -> Result<Result<T, R>, StdioError> {
        loop {
            self.check_stop()?;
            self.events.gather(&mut self.client);
            if let Some(found) = early(&mut self.events) {
                return Ok(Err(found));
            }
            // The operation may have ended while another was awaited.
            if let Some(ended) = self.events.take_finished(op.id()) {
                match op.finished(ended) {
                    Ok(outcome) => return outcome.map(Ok).map_err(StdioError::Mcp),
                    Err(other) => self.events.push(other),
                }
            }
            if !self.client.is_pending(op) {
                // Never started, or its end was taken already: nothing can end it now.
                return Err(StdioError::Mcp(Misuse::UnknownOperation.into()));
            }
            self.exchange(None)?;
        }
    }

    fn check_stop(&self) -> Result<(), StdioError> {
        if self
            .stop
            .as_ref()
            .is_some_and(|flag| flag.load(Ordering::Relaxed))
        {
            return Err(StdioError::Stopped);
        }
        Ok(())
    }

    /// One round of I/O: write what the client queued, then wait for the server at most
    /// until the client's next deadline (and `until`, if given), read what arrived, and
    /// apply the clock.
    ///
    /// Any I/O can end what is awaited (a failed write closes the connection), so the wait
    /// is decided only after it, from the client's state then. With neither a deadline nor
    /// `until` (only a standing subscription waits, and `run` awaits its end) one wait
    /// lasts at most [`IDLE_WAIT_MS`], so the loop around it neither spins nor misses the
    /// server's input.
    fn exchange(&mut self, until: Option<Instant>) -> Result<(), StdioError> {
        self.send_queued()?;
        let deadline = [self.client.poll_timeout(), until]
            .into_iter()
            .flatten()
            .min()
            .unwrap_or_else(|| {
                self.now()
                    .saturating_add(Duration::from_millis(IDLE_WAIT_MS))
            });
        let mut left = deadline.as_millis().saturating_sub(self.now().as_millis());
        if self.stop.is_some() {
            left = left.min(STOP_CHECK_MS);
        }
        let wait = Duration::from_millis(left);
        let want_write = !self.outgoing.is_empty() && self.stdin.is_some();
        let (readable, writable) = {
            let mut fds = Vec::with_capacity(2);
            if self.stdout_open {
                fds.push(PollFd::new(&self.stdout, PollFlags::IN));
            }
            if let (true, Some(stdin)) = (want_write, &self.stdin) {
                fds.push(PollFd::new(stdin, PollFlags::OUT));
            }
            if fds.is_empty() {
                // Nothing to read or write: only the clock can end the operation.
                std::thread::sleep(wait);
                (false, false)
            } else {
                let timeout = rustix::event::Timespec::try_from(wait)
                    .map_err(|e| StdioError::Io(io::Error::other(e)))?;
                match poll(&mut fds, Some(&timeout)) {
                    Ok(_) | Err(rustix::io::Errno::INTR) => {}
                    Err(e) => return Err(StdioError::Io(e.into())),
                }
                let ready = |i: usize| fds.get(i).is_some_and(|fd| !fd.revents().is_empty());
                let readable = self.stdout_open && ready(0);
                let writable = want_write && ready(usize::from(self.stdout_open));
                (readable, writable)
            }
        };
        if readable {
            self.read_available();
        }
        if writable {
            self.flush()?;
        }
        self.client.handle_timeout(self.now());
        Ok(())
    }

    /// Reads until the pipe is empty; hands each read to the client. End of file tells
    /// the client the server's output is closed.
    fn read_available(&mut self) {
        loop {
            match self.stdout.read(&mut self.read_buf) {
                Ok(0) => {
                    self.stdout_open = false;
                    self.client.handle_close();
                    return;
                }
                Ok(n) => {
                    let now = self.now();
                    let chunk = self.read_buf.get(..n).unwrap_or_default();
                    self.client.handle_input(chunk, now);
                    if n < self.read_buf.len() {
                        // A short read emptied the pipe: asking again would only say so, one
                        // system call per answer for nothing. What comes later, poll reports.
                        return;
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(_) => {
                    self.stdout_open = false;
                    self.client.handle_close();
                    return;
                }
            }
        }
    }

    /// Takes up to a batch of the frames the client queued and writes as much as the pipe
    /// takes now. Frames past a batch wait in the client, under `Limits::unsent_bytes`: a
    /// server that does not read fails the connection there instead of growing this buffer.
    fn send_queued(&mut self) -> Result<(), StdioError> {
        while self.outgoing.len() < WRITE_BATCH
            && self.client.poll_transmit(&mut self.outgoing).is_some()
        {}
        self.flush()
    }

    /// Writes as much of the queued bytes as the pipe takes now.
    fn flush(&mut self) -> Result<(), StdioError> {
        while !self.outgoing.is_empty() {
            let Some(stdin) = self.stdin.as_mut() else {
                self.outgoing.clear();
                return Ok(());
            };
            match stdin.write(&self.outgoing) {
                Ok(n) => {
                    self.outgoing.drain(..n);
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(()),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) if e.kind() == io::ErrorKind::BrokenPipe => {
                    // The server closed its input: it will answer nothing more.
                    self.stdin = None;
                    self.outgoing.clear();
                    self.client.handle_close();
                    return Ok(());
                }
                Err(e) => return Err(StdioError::Io(e)),
            }
        }
        Ok(())
    }

    /// Ends the server: closes its stdin, gives it `grace` to exit, then sends SIGTERM to its
    /// whole process group, then SIGKILL, and reaps it (see [`ServerProcess::close`]).
    /// Returns its exit status.
    ///
    /// # Errors
    /// [`StdioError::Io`] if the server cannot be reaped.
    pub fn close(self, grace: Duration) -> Result<ExitStatus, StdioError> {
        let StdioClient { stdin, process, .. } = self;
        drop(stdin);
        process.close(grace).map_err(StdioError::Io)
    }
}
