//! A blocking client over any byte stream with a file descriptor: a server's pipes, a TCP or
//! Unix socket's two handles, a serial line. [`StdioClient`](crate::StdioClient) is this over
//! a child's stdout and stdin, with the process behind it.

use std::io::{self, Read, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use mcp_sansio::{
    Awaited, CallOptions, CallToolResult, Catalog, Client, Config, Connected, Event, Instant,
    KeptEvents, Listening, Misuse, Op, RawObject, Responder, Root, Subscription, Watcher,
};
use rustix::event::{poll, PollFd, PollFlags};
use rustix::fd::AsFd;

use crate::StdioError;

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

/// The sans-io [`Client`] over a byte stream the application brings: newline-framed JSON-RPC
/// read from `R` and written to `W`, each wait bounded by the client's next deadline.
///
/// `R` and `W` are anything with a file descriptor that reads or writes: the two handles of a
/// [`UnixStream`](std::os::unix::net::UnixStream) or a [`TcpStream`](std::net::TcpStream)
/// (`stream.try_clone()?` and `stream`), the pipes of a process the application started
/// itself, a serial line. [`new`](Self::new) puts both into non-blocking mode, which is a
/// setting of the file description: handles cloned from them become non-blocking too, so
/// give this client handles nobody else reads or writes (not this process's own stdin).
///
/// The blocking methods ([`connect`](Self::connect), [`list_tools`](Self::list_tools),
/// [`call_tool`](Self::call_tool)) each run one operation to its end. For several requests
/// in flight, queue them on [`client`](Self::client) and wait for each with
/// [`run`](Self::run). Events that belong to no awaited operation (notifications, late
/// answers, other operations' ends) are kept for [`take_events`](Self::take_events).
///
/// The server's end of the stream closing (end of file, a reset, a refused write) ends
/// every operation with [`Error::Closed`](mcp_sansio::Error::Closed). Dropping the client
/// drops both handles.
///
/// ```no_run
/// use std::os::unix::net::UnixStream;
/// use mcp_sansio::{Allowlist, Config, Limits, RawObject};
/// use mcp_sansio_stdio::StreamClient;
///
/// let socket = UnixStream::connect("/run/word-count.sock")?;
/// let allowlist: Allowlist = ["word_count"].into_iter().collect();
/// let mut server = StreamClient::new(socket.try_clone()?, socket, Config::new(allowlist))?;
/// server.connect()?;
/// server.list_tools()?;
/// let args = RawObject::parse(r#"{"text":"vanilla stock needs review"}"#, &Limits::default())?;
/// println!("{}", server.call_tool("word_count", &args)?.text());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
///
/// `P` is what else the client holds while the stream lasts: nothing (`()`) for a stream
/// made with [`new`](Self::new), the server's [`ServerProcess`](crate::ServerProcess) for a
/// [`StdioClient`](crate::StdioClient). It is dropped after the writer (a server is asked to
/// exit by the end of its input first) and before the reader.
#[derive(Debug)]
pub struct StreamClient<R, W, P = ()> {
    /// `None` once the server stopped taking input (a refused write): what the client queues
    /// then is dropped.
    writer: Option<W>,
    behind: P,
    reader: R,
    /// Whether the server's output may still hold something: false after end of file.
    reader_open: bool,
    client: Client,
    origin: std::time::Instant,
    outgoing: Vec<u8>,
    read_buf: Vec<u8>,
    events: KeptEvents,
    stop: Option<Arc<AtomicBool>>,
}

impl<R: Read + AsFd, W: Write + AsFd> StreamClient<R, W> {
    /// The client over `reader` and `writer`, both put into non-blocking mode. Nothing is
    /// written before the first operation ([`connect`](Self::connect)).
    ///
    /// # Errors
    /// [`StdioError::Io`] if either cannot be made non-blocking (a handle that is no stream,
    /// a descriptor already closed).
    pub fn new(reader: R, writer: W, config: Config) -> Result<Self, StdioError> {
        StreamClient::holding(reader, writer, (), config)
    }
}

impl<R: Read + AsFd, W: Write + AsFd, P> StreamClient<R, W, P> {
    /// [`new`](StreamClient::new), holding `behind` while the stream lasts.
    pub(crate) fn holding(
        reader: R,
        writer: W,
        behind: P,
        config: Config,
    ) -> Result<Self, StdioError> {
        for fd in [reader.as_fd(), writer.as_fd()] {
            rustix::io::ioctl_fionbio(fd, true).map_err(|e| StdioError::Io(e.into()))?;
        }
        let events = KeptEvents::new(config.limits.events_kept);
        Ok(StreamClient {
            writer: Some(writer),
            behind,
            reader,
            reader_open: true,
            client: Client::new(config),
            origin: std::time::Instant::now(),
            outgoing: Vec::new(),
            read_buf: vec![0; READ_CHUNK],
            events,
            stop: None,
        })
    }

    /// What the client holds while the stream lasts.
    pub(crate) fn behind(&self) -> &P {
        &self.behind
    }

    /// Ends the client: drops the writer (the server's sign that no more input comes), has
    /// `end` end what it holds, and only then drops the reader, so that a server on its way
    /// out can still write.
    pub(crate) fn end_with<T>(self, end: impl FnOnce(P) -> T) -> T {
        let StreamClient {
            writer,
            behind,
            reader,
            ..
        } = self;
        drop(writer);
        let ended = end(behind);
        drop(reader);
        ended
    }

    /// Drops the writing handle: what the client queues from then on is dropped.
    fn close_writer(&mut self) {
        self.writer = None;
        self.outgoing.clear();
    }

    /// The sans-io client underneath, for commands of your own; drive them with
    /// [`run`](Self::run).
    pub fn client(&mut self) -> &mut Client {
        &mut self.client
    }

    /// Now, on the clock the client runs on (milliseconds since this client was made).
    pub fn now(&self) -> Instant {
        Instant::from_std(self.origin, std::time::Instant::now())
    }

    /// Makes every wait end with [`StdioError::Stopped`] once `flag` is set, for example by
    /// a signal handler (signal-hook's `flag::register`). A set flag is noticed within 50 ms;
    /// the server keeps running (for a [`StdioClient`](crate::StdioClient), until its
    /// [`close`](crate::StdioClient::close) or drop ends it).
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
    /// `notifications/roots/list_changed` that says so, as far as the stream takes it now (the
    /// rest goes with the next operation). The server's next `roots/list` is answered with
    /// `roots`.
    ///
    /// # Errors
    /// The client's refusal ([`Client::set_roots`]); [`StdioError::Io`] if the stream fails.
    pub fn set_roots(&mut self, roots: Vec<Root>) -> Result<(), StdioError> {
        self.client.set_roots(roots)?;
        self.send_queued()
    }

    /// Drives the stream until operation `op` ends, and returns what it produced. Waits never
    /// pass the client's next deadline, so the operation ends by its deadline at the latest.
    ///
    /// # Errors
    /// [`StdioError::Mcp`] with the operation's error; [`StdioError::Io`] if the stream fails
    /// here; [`StdioError::Stopped`] once the [`stop_when`](Self::stop_when) flag is set.
    pub fn run<T: Awaited>(&mut self, op: Op<T>) -> Result<T, StdioError> {
        let ended = self.drive(op, |_| None::<core::convert::Infallible>)?;
        Ok(ended.unwrap_or_else(|never| match never {}))
    }

    /// Subscribes to the changes `subscription` asks for
    /// ([`Client::listen`](mcp_sansio::Client::listen), 2026-07-28) and drives the stream
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

    /// Drives the stream until an event is kept or `timeout` has passed, and takes every
    /// kept event (none, if none came): how an application that listens waits for the
    /// server's changes between its own operations. The stream is read at least once, so
    /// with a zero `timeout` this takes what the server has sent by now without waiting (a
    /// request of its own is answered, the answer written as far as the stream takes it).
    ///
    /// # Errors
    /// [`StdioError::Io`] if the stream fails here; [`StdioError::Stopped`] once the
    /// [`stop_when`](Self::stop_when) flag is set.
    pub fn wait_events(&mut self, timeout: Duration) -> Result<Vec<Event>, StdioError> {
        let until = self.now().saturating_add(timeout);
        let mut read = false;
        loop {
            self.check_stop()?;
            self.events.gather(&mut self.client);
            if !self.events.is_empty() || (read && self.now() >= until) {
                // What the events asked of the server (the responder's answers) leaves now.
                self.send_queued()?;
                return Ok(self.events.take_all());
            }
            self.exchange(Some(until))?;
            read = true;
        }
    }

    /// Drives the stream until operation `op` ends (`Ok(output)`), or until `early` finds
    /// what it looks for among the kept events (`Err(found)`).
    fn drive<T: Awaited, F>(
        &mut self,
        op: Op<T>,
        mut early: impl FnMut(&mut KeptEvents) -> Option<F>,
    ) -> Result<Result<T, F>, StdioError> {
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
        let wait = self
            .next_wake(until)
            .unwrap_or(Duration::from_millis(IDLE_WAIT_MS));
        let want_write = !self.outgoing.is_empty() && self.writer.is_some();
        let (readable, writable) = {
            let mut fds = self.poll_fds();
            if fds.is_empty() {
                // Nothing to read or write: only the clock can end the operation.
                std::thread::sleep(wait);
                (false, false)
            } else {
                wait_on(&mut fds, wait)?;
                let ready = |i: usize| fds.get(i).is_some_and(|fd| !fd.revents().is_empty());
                let readable = self.reader_open && ready(0);
                let writable = want_write && ready(usize::from(self.reader_open));
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

    /// What a wait on this stream watches: the server's output while it may still hold
    /// something (first), and the server's input while the client has bytes for it.
    pub(crate) fn poll_fds(&self) -> Vec<PollFd<'_>> {
        let mut fds = Vec::with_capacity(2);
        if self.reader_open {
            fds.push(PollFd::new(&self.reader, PollFlags::IN));
        }
        if let (false, Some(writer)) = (self.outgoing.is_empty(), &self.writer) {
            fds.push(PollFd::new(writer, PollFlags::OUT));
        }
        fds
    }

    /// How long a wait on this stream may last: until the client's next deadline or `until`,
    /// whichever comes first, and at most [`STOP_CHECK_MS`] while a stop flag is set; `None`
    /// when nothing bounds it.
    pub(crate) fn next_wake(&self, until: Option<Instant>) -> Option<Duration> {
        let deadline = [self.client.poll_timeout(), until]
            .into_iter()
            .flatten()
            .min();
        let left = deadline.map(|at| at.as_millis().saturating_sub(self.now().as_millis()));
        let left = match self.stop {
            Some(_) => Some(left.map_or(STOP_CHECK_MS, |left| left.min(STOP_CHECK_MS))),
            None => left,
        };
        left.map(Duration::from_millis)
    }

    /// Reads until the stream has nothing more now; hands each read to the client. End of
    /// file tells the client the server's output is closed.
    fn read_available(&mut self) {
        loop {
            match self.reader.read(&mut self.read_buf) {
                Ok(0) => {
                    self.reader_open = false;
                    self.client.handle_close();
                    return;
                }
                Ok(n) => {
                    let now = self.now();
                    let chunk = self.read_buf.get(..n).unwrap_or_default();
                    self.client.handle_input(chunk, now);
                    if n < self.read_buf.len() {
                        // A short read emptied the stream: asking again would only say so, one
                        // system call per answer for nothing. What comes later, poll reports.
                        return;
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(_) => {
                    self.reader_open = false;
                    self.client.handle_close();
                    return;
                }
            }
        }
    }

    /// Takes up to a batch of the frames the client queued and writes as much as the stream
    /// takes now. Frames past a batch wait in the client, under `Limits::unsent_bytes`: a
    /// server that does not read fails the connection there instead of growing this buffer.
    fn send_queued(&mut self) -> Result<(), StdioError> {
        while self.outgoing.len() < WRITE_BATCH
            && self.client.poll_transmit(&mut self.outgoing).is_some()
        {}
        self.flush()
    }

    /// The server takes no more input: nothing more is written, and the client hears that
    /// the connection is closed.
    fn writer_gone(&mut self) {
        self.close_writer();
        self.client.handle_close();
    }

    /// Writes as much of the queued bytes as the stream takes now.
    fn flush(&mut self) -> Result<(), StdioError> {
        while !self.outgoing.is_empty() {
            let Some(writer) = self.writer.as_mut() else {
                self.outgoing.clear();
                return Ok(());
            };
            match writer.write(&self.outgoing) {
                // A stream that takes nothing of a frame takes no more: asking again would
                // spin.
                Ok(0) => {
                    self.writer_gone();
                    return Ok(());
                }
                Ok(n) => {
                    self.outgoing.drain(..n);
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(()),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                // The server closed its input: it will answer nothing more.
                Err(e) if closed_by_peer(e.kind()) => {
                    self.writer_gone();
                    return Ok(());
                }
                Err(e) => return Err(StdioError::Io(e)),
            }
        }
        Ok(())
    }
}

/// Whether a failed write says the server's end is gone (a closed pipe, a reset or
/// disconnected socket) rather than that writing failed here.
fn closed_by_peer(kind: io::ErrorKind) -> bool {
    matches!(
        kind,
        io::ErrorKind::BrokenPipe
            | io::ErrorKind::ConnectionReset
            | io::ErrorKind::ConnectionAborted
            | io::ErrorKind::NotConnected
    )
}

/// The longest one [`wait_on`] lasts: a longer wait is made in pieces by the loop around it,
/// and no `poll` is asked for a timeout it cannot take (`Duration::MAX`).
const LONGEST_POLL: Duration = Duration::from_secs(3600);

/// Waits until one of `fds` is ready or `wait` has passed (at most [`LONGEST_POLL`]); a
/// signal only ends the wait early.
///
/// # Errors
/// [`StdioError::Io`] if the wait cannot be made (a descriptor closed under it).
pub(crate) fn wait_on(fds: &mut [PollFd<'_>], wait: Duration) -> Result<(), StdioError> {
    let timeout = rustix::event::Timespec::try_from(wait.min(LONGEST_POLL))
        .map_err(|e| StdioError::Io(io::Error::other(e)))?;
    match poll(fds, Some(&timeout)) {
        Ok(_) | Err(rustix::io::Errno::INTR) => Ok(()),
        Err(e) => Err(StdioError::Io(e.into())),
    }
}
