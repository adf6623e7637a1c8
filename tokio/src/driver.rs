//! The one task that owns the sans-io client and the byte stream: it starts what the handles
//! ask for, moves bytes both ways, wakes at the client's deadlines, cancels what its callers
//! dropped, and hands every outcome to the future that waits for it.

use std::collections::HashMap;
use std::process::ExitStatus;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use mcp_sansio::{Awaited, Client, Error, Event, Instant, Misuse, Op, OpId};
use mcp_sansio_stdio::ServerProcess;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::sync::{mpsc, oneshot, Notify, Semaphore};

/// How many bytes one read from the server takes at most.
const READ_CHUNK: usize = 64 * 1024;

/// An operation's start, run by the driver on its client: the operation and its waiter, or
/// `None` when the client refused (the refusal went to the waiter already).
pub(crate) type Start =
    Box<dyn FnOnce(&mut Client, Instant) -> Option<(OpId, Box<dyn Waiter>)> + Send>;

/// What a handle asks of the driver.
pub(crate) enum Command {
    /// Start an operation.
    Start(Start),
    /// End the connection now: every waiting future fails, the server is ended, and the
    /// sender hears how it exited (`None` for a stream that is not a process).
    Close(oneshot::Sender<Option<ExitStatus>>),
}

/// The future waiting for one operation, seen from the driver.
pub(crate) trait Waiter: Send {
    /// Hands the operation's end to its future.
    fn finish(self: Box<Self>, event: Event);
    /// Whether the future is gone (dropped): the operation is then cancelled.
    fn abandoned(&self) -> bool;
}

/// The typed [`Waiter`] of an `Op<T>`.
pub(crate) struct Waiting<T> {
    pub(crate) op: Op<T>,
    pub(crate) reply: oneshot::Sender<Result<T, Error>>,
}

impl<T: Awaited + Send> Waiter for Waiting<T> {
    fn finish(self: Box<Self>, event: Event) {
        // Keyed by the operation's id, so the event is always this operation's end; a
        // future that went away meanwhile has nobody to tell.
        if let Ok(outcome) = self.op.finished(event) {
            let _ = self.reply.send(outcome);
        }
    }

    fn abandoned(&self) -> bool {
        self.reply.is_closed()
    }
}

/// What the handles and the driver share.
#[derive(Debug)]
pub(crate) struct Shared {
    /// One permit per request the client may have in flight; a caller holds one until its
    /// operation ends, so the client's table is never full when a start reaches it.
    pub(crate) slots: Semaphore,
    /// Woken when a caller's future is dropped before its end.
    pub(crate) abandoned: Notify,
    /// Events dropped because the application's queue was full.
    pub(crate) events_lost: AtomicU64,
    /// The client's operations in flight, as of the driver's last step.
    pub(crate) in_flight: AtomicUsize,
}

/// How the connection ends besides closing the stream: the server's process, if it is one.
pub(crate) struct Ending {
    pub(crate) process: Option<ServerProcess>,
    pub(crate) grace: Duration,
}

/// The driver of one connection.
pub(crate) struct Driver<R, W> {
    pub(crate) client: Client,
    pub(crate) reader: R,
    pub(crate) writer: W,
    pub(crate) commands: mpsc::Receiver<Command>,
    pub(crate) events: mpsc::Sender<Event>,
    pub(crate) shared: Arc<Shared>,
    pub(crate) ending: Ending,
}

/// Where the loop stopped, and so what the end owes.
enum Stop {
    /// Every handle is gone, or the connection failed or ended.
    Done,
    /// A handle asked to close, and waits to hear how the server exited.
    Close(oneshot::Sender<Option<ExitStatus>>),
}

impl<R, W> Driver<R, W>
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    /// Runs the connection until it ends, then ends the server.
    pub(crate) async fn run(mut self) {
        let stop = self.drive().await;
        // Callers waiting for a slot, or about to, learn the connection ended; the waiting
        // futures learn it as their waiters drop with the table below.
        self.shared.slots.close();
        let Driver {
            writer,
            commands,
            ending,
            ..
        } = self;
        drop(commands);
        let status = end(writer, ending).await;
        if let Stop::Close(reply) = stop {
            let _ = reply.send(status);
        }
    }

    async fn drive(&mut self) -> Stop {
        let origin = tokio::time::Instant::now();
        let now =
            move || Instant::from_std(origin.into_std(), tokio::time::Instant::now().into_std());
        let mut waiting: HashMap<OpId, Box<dyn Waiter>> = HashMap::new();
        let mut outgoing: Vec<u8> = Vec::new();
        let mut input = vec![0_u8; READ_CHUNK];
        let mut server_writable = true;
        loop {
            while let Some(event) = self.client.poll_event() {
                self.deliver(event, &mut waiting);
            }
            self.shared
                .in_flight
                .store(self.client.in_flight(), Ordering::Relaxed);
            if self.client.is_failed() {
                return Stop::Done;
            }
            while self.client.poll_transmit(&mut outgoing).is_some() {}
            if !server_writable {
                outgoing.clear();
            }
            let deadline = self.client.poll_timeout();
            let wake_at =
                deadline.map_or(origin, |at| origin + Duration::from_millis(at.as_millis()));
            tokio::select! {
                // Cancellations before starts: a dropped future frees its slot only after it
                // woke the driver, so the start that takes the slot never finds the
                // client's table full.
                biased;
                () = self.shared.abandoned.notified() => {
                    for (op, _) in waiting.iter().filter(|(_, w)| w.abandoned()) {
                        // Ends it with `Cancelled` and tells the server; its end finds
                        // nobody waiting.
                        let _ = self.client.cancel(*op);
                    }
                }
                command = self.commands.recv() => match command {
                    Some(Command::Start(start)) => {
                        if let Some((op, waiter)) = start(&mut self.client, now()) {
                            if waiter.abandoned() {
                                // Dropped before it started: cancelled before a deadline.
                                let _ = self.client.cancel(op);
                            }
                            waiting.insert(op, waiter);
                        }
                    }
                    Some(Command::Close(reply)) => return Stop::Close(reply),
                    // Every handle is gone; no future can be waiting, since each borrows one.
                    None => return Stop::Done,
                },
                written = self.writer.write(&outgoing), if !outgoing.is_empty() => match written {
                    Ok(n) => {
                        outgoing.drain(..n.min(outgoing.len()));
                        if n == 0 {
                            server_writable = false;
                            self.client.handle_close();
                        }
                    }
                    Err(_) => {
                        // The server closed its input: it will answer nothing more.
                        server_writable = false;
                        self.client.handle_close();
                    }
                },
                read = self.reader.read(&mut input) => match read {
                    Ok(0) | Err(_) => self.client.handle_close(),
                    Ok(n) => self.client.handle_input(input.get(..n).unwrap_or_default(), now()),
                },
                () = tokio::time::sleep_until(wake_at), if deadline.is_some() => {
                    self.client.handle_timeout(now());
                }
            }
        }
    }

    /// Hands `event` to the future waiting for it, or to the application's queue.
    fn deliver(&mut self, event: Event, waiting: &mut HashMap<OpId, Box<dyn Waiter>>) {
        if let Event::Finished { op, .. } = &event {
            if let Some(waiter) = waiting.remove(op) {
                waiter.finish(event);
                return;
            }
        }
        if self.events.try_send(event).is_err() {
            self.shared.events_lost.fetch_add(1, Ordering::Relaxed);
        }
    }
}

/// Ends the stream and, for a process, the whole process group; how the server exited.
async fn end<W: AsyncWrite + Unpin>(mut writer: W, ending: Ending) -> Option<ExitStatus> {
    // The server's input ends first: how it is asked to exit. A peer that does not take
    // the shutdown gets no longer than the grace.
    let _ = tokio::time::timeout(ending.grace, writer.shutdown()).await;
    drop(writer);
    let process = ending.process?;
    let grace = ending.grace;
    // Waiting, signalling and reaping block for a bounded time: on the blocking pool.
    match tokio::task::spawn_blocking(move || process.close(grace)).await {
        Ok(Ok(status)) => Some(status),
        _ => None,
    }
}

/// The refusal given to a start whose client refused it.
pub(crate) fn refused<T>(reply: oneshot::Sender<Result<T, Error>>, misuse: Misuse) {
    let _ = reply.send(Err(misuse.into()));
}
