//! The one task that owns the sans-io client and its wire (a byte stream, or HTTP): it
//! starts what the handles ask for, moves the wire's I/O, wakes at the client's deadlines,
//! cancels what its callers dropped, and hands every outcome to the future that waits for it.

use std::collections::HashMap;
use std::future::Future;
use std::process::ExitStatus;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use mcp_sansio::auth::Token;
use mcp_sansio::{
    Awaited, Client, Error, ErrorCode, Event, HttpError, Instant, Misuse, Op, OpId, Reply,
    RpcError, Subscription, SubscriptionEnded,
};
use tokio::sync::{mpsc, oneshot, Notify, OwnedSemaphorePermit, Semaphore};

use crate::AsyncError;

/// The session's clock: milliseconds since the driver started, on the runtime's clock (so a
/// paused test runtime moves it too).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Clock {
    origin: tokio::time::Instant,
}

impl Clock {
    fn start() -> Clock {
        Clock {
            origin: tokio::time::Instant::now(),
        }
    }

    /// Now, on the session's clock.
    pub(crate) fn now(self) -> Instant {
        Instant::from_std(
            self.origin.into_std(),
            tokio::time::Instant::now().into_std(),
        )
    }

    /// When `at` falls on the runtime's clock.
    fn at(self, at: Instant) -> tokio::time::Instant {
        self.origin + Duration::from_millis(at.as_millis())
    }
}

/// What the driver moves besides commands: the I/O of one kind of connection, with the
/// sans-io session that reads it.
pub(crate) trait Wire: Send + 'static {
    /// The client inside, to start operations on.
    fn client(&mut self) -> &mut Client;
    /// The session's next event.
    fn poll_event(&mut self) -> Option<Event>;
    /// The session's next deadline.
    fn poll_timeout(&self) -> Option<Instant>;
    /// Applies the clock.
    fn handle_timeout(&mut self, now: Instant);
    /// Hands the I/O what the session queued (bytes to write, requests to make, replies to
    /// drop); nothing here waits.
    fn flush(&mut self, clock: Clock);
    /// Waits for the next piece of I/O and hands it to the session. Cancel-safe: dropped
    /// before it is ready, it loses nothing.
    fn io(&mut self, clock: Clock) -> impl Future<Output = ()> + Send;
    /// Why the wire could not reach the server at all, if that is how it last failed.
    fn unreachable(&mut self) -> Option<String>;
    /// Sends `token` with every request from now on, if the wire is HTTP (`false` for a
    /// byte stream, where a token has nowhere to go).
    fn authorize(&mut self, token: Option<&Token>) -> bool;
    /// Ends the connection, within `grace` where the server is asked; how a server process
    /// exited.
    fn end(self, grace: Duration) -> impl Future<Output = Option<ExitStatus>> + Send;
}

/// An operation's start, run by the driver on its client: the operation and its waiter, or
/// `None` when the client refused (the refusal went to the waiter already).
pub(crate) type Start =
    Box<dyn FnOnce(&mut Client, Instant) -> Option<(OpId, Box<dyn Waiter>)> + Send>;

/// What a handle asks of the driver.
pub(crate) enum Command {
    /// Start an operation.
    Start(Start),
    /// A command of the client's that starts no operation (new roots, an answer to the
    /// server); the closure tells its sender whether the client took it.
    Tell(Box<dyn FnOnce(&mut Client) + Send>),
    /// Send this token with every request from now on (over HTTP); the sender hears whether
    /// the wire took it.
    Authorize(Option<Token>, oneshot::Sender<bool>),
    /// End the connection now: every waiting future fails, the server is ended, and the
    /// sender hears how it exited (`None` for a stream that is not a process).
    Close(oneshot::Sender<Option<ExitStatus>>),
}

/// The future waiting for one operation, seen from the driver.
pub(crate) trait Waiter: Send {
    /// Hands the operation's end to its future; `unreachable` says why, when the wire could
    /// not reach the server at all.
    fn finish(self: Box<Self>, event: Event, unreachable: Option<String>);
    /// Whether the future is gone (dropped): the operation is then cancelled.
    fn abandoned(&self) -> bool;
    /// Hands a subscription's acknowledgement to whoever waits for it; only a subscription
    /// is acknowledged.
    fn acknowledged(&mut self, _honoured: Subscription) {}
}

/// How an operation's end reads for its future: its output, or the error that ended it
/// (`unreachable` says why the stream broke, when the wire could not reach the server).
/// `None` when `event` is not `op`'s end.
fn outcome<T: Awaited>(
    op: Op<T>,
    event: Event,
    unreachable: Option<String>,
) -> Option<Result<T, AsyncError>> {
    Some(match (op.finished(event), unreachable) {
        (Ok(Ok(output)), _) => Ok(output),
        (Ok(Err(Error::Http(HttpError::StreamBroken))), Some(why)) => {
            Err(AsyncError::Unreachable(why))
        }
        (Ok(Err(error)), _) => Err(AsyncError::Mcp(error)),
        (Err(_), _) => return None,
    })
}

/// The typed [`Waiter`] of an `Op<T>`.
pub(crate) struct Waiting<T> {
    pub(crate) op: Op<T>,
    pub(crate) reply: oneshot::Sender<Result<T, AsyncError>>,
    /// The operation's slot, freed with this waiter: when the operation has ended in the
    /// client (or the driver has).
    pub(crate) _slot: OwnedSemaphorePermit,
}

impl<T: Awaited + Send> Waiter for Waiting<T> {
    fn finish(self: Box<Self>, event: Event, unreachable: Option<String>) {
        // Not this operation's end cannot be, as the driver keys waiters by operation; were
        // it so, the reply dropped here still ends the future, with `Ended`.
        if let Some(outcome) = outcome(self.op, event, unreachable) {
            // A future that went away meanwhile has nobody to tell.
            let _ = self.reply.send(outcome);
        }
    }

    fn abandoned(&self) -> bool {
        self.reply.is_closed()
    }
}

/// The [`Waiter`] of a subscription: its acknowledgement goes to the `listen` future, its
/// end to the [`Listener`](crate::Listener).
pub(crate) struct ListenWaiting {
    pub(crate) op: Op<SubscriptionEnded>,
    /// Until the acknowledgement.
    pub(crate) acknowledged: Option<oneshot::Sender<Subscription>>,
    pub(crate) end: oneshot::Sender<Result<SubscriptionEnded, AsyncError>>,
    pub(crate) _slot: OwnedSemaphorePermit,
}

impl Waiter for ListenWaiting {
    fn finish(self: Box<Self>, event: Event, unreachable: Option<String>) {
        if let Some(outcome) = outcome(self.op, event, unreachable) {
            let _ = self.end.send(outcome);
        }
    }

    /// The `listen` future dropped before the acknowledgement, or the listener after it.
    fn abandoned(&self) -> bool {
        self.end.is_closed() || self.acknowledged.as_ref().is_some_and(|a| a.is_closed())
    }

    fn acknowledged(&mut self, honoured: Subscription) {
        if let Some(waiting) = self.acknowledged.take() {
            let _ = waiting.send(honoured);
        }
    }
}

/// What the handles and the driver share.
#[derive(Debug)]
pub(crate) struct Shared {
    /// One permit per request the client may have in flight; each operation holds one until
    /// it has ended in the client, so the client's table is never full when a start
    /// reaches it.
    pub(crate) slots: Arc<Semaphore>,
    /// Woken when a caller's future is dropped before its end.
    pub(crate) abandoned: Notify,
    /// Events dropped because the application's queue was full.
    pub(crate) events_lost: Arc<AtomicU64>,
    /// The client's operations in flight, as of the driver's last step.
    pub(crate) in_flight: AtomicUsize,
    /// The catalog a call listed anew after a header mismatch, until the application takes it.
    pub(crate) relisted: std::sync::Mutex<Option<mcp_sansio::Catalog>>,
}

/// The driver of one connection.
pub(crate) struct Driver<W> {
    pub(crate) wire: W,
    pub(crate) commands: mpsc::Receiver<Command>,
    pub(crate) events: mpsc::Sender<Event>,
    pub(crate) shared: Arc<Shared>,
    /// How long the server gets to end when the connection does.
    pub(crate) grace: Duration,
}

/// Where the loop stopped, and so what the end owes.
enum Stop {
    /// Every handle is gone, or the connection failed or ended.
    Done,
    /// A handle asked to close, and waits to hear how the server exited.
    Close(oneshot::Sender<Option<ExitStatus>>),
}

impl<W: Wire> Driver<W> {
    /// Runs the connection until it ends, then ends the server.
    pub(crate) async fn run(mut self) {
        let stop = self.drive().await;
        // Callers waiting for a slot, or about to, learn the connection ended; the waiting
        // futures learn it as their waiters drop with the table below.
        self.shared.slots.close();
        let Driver {
            wire,
            commands,
            grace,
            ..
        } = self;
        drop(commands);
        let status = wire.end(grace).await;
        if let Stop::Close(reply) = stop {
            let _ = reply.send(status);
        }
    }

    async fn drive(&mut self) -> Stop {
        let clock = Clock::start();
        let mut waiting: HashMap<OpId, Box<dyn Waiter>> = HashMap::new();
        loop {
            while let Some(event) = self.wire.poll_event() {
                self.deliver(event, &mut waiting);
            }
            self.shared
                .in_flight
                .store(self.wire.client().in_flight(), Ordering::Relaxed);
            if self.wire.client().is_failed() {
                return Stop::Done;
            }
            self.wire.flush(clock);
            let deadline = self.wire.poll_timeout();
            let wake_at = deadline.map_or(clock.origin, |at| clock.at(at));
            tokio::select! {
                // Cancellations first: a dropped call leaves the server's queue as soon as
                // the driver hears of it.
                biased;
                () = self.shared.abandoned.notified() => {
                    let client = self.wire.client();
                    for (op, _) in waiting.iter().filter(|(_, w)| w.abandoned()) {
                        // Ends it with `Cancelled` and tells the server; its end finds
                        // nobody waiting.
                        let _ = client.cancel(*op);
                    }
                }
                command = self.commands.recv() => match command {
                    Some(Command::Start(start)) => {
                        let client = self.wire.client();
                        if let Some((op, waiter)) = start(client, clock.now()) {
                            if waiter.abandoned() {
                                // Dropped before it started: cancelled before a deadline.
                                let _ = client.cancel(op);
                            }
                            waiting.insert(op, waiter);
                        }
                    }
                    // What it queues leaves with the flush at the top of the loop.
                    Some(Command::Tell(tell)) => tell(self.wire.client()),
                    Some(Command::Authorize(token, reply)) => {
                        let _ = reply.send(self.wire.authorize(token.as_ref()));
                    }
                    Some(Command::Close(reply)) => return Stop::Close(reply),
                    // Every handle is gone; no future can be waiting, since each borrows one.
                    None => return Stop::Done,
                },
                () = self.wire.io(clock) => {}
                () = tokio::time::sleep_until(wake_at), if deadline.is_some() => {
                    self.wire.handle_timeout(clock.now());
                }
            }
        }
    }

    /// Hands `event` to the future waiting for it, or to the application's queue.
    fn deliver(&mut self, event: Event, waiting: &mut HashMap<OpId, Box<dyn Waiter>>) {
        if let Event::Subscribed { op, honoured } = &event {
            if let Some(waiter) = waiting.get_mut(op) {
                return waiter.acknowledged(honoured.clone());
            }
        }
        if let Event::Finished { op, .. } = &event {
            if let Some(waiter) = waiting.remove(op) {
                let broken = matches!(
                    &event,
                    Event::Finished {
                        outcome: Err(Error::Http(HttpError::StreamBroken)),
                        ..
                    }
                );
                let unreachable = if broken {
                    self.wire.unreachable()
                } else {
                    None
                };
                waiter.finish(event, unreachable);
                return;
            }
        }
        if let Err(unsent) = self.events.try_send(event) {
            self.shared.events_lost.fetch_add(1, Ordering::Relaxed);
            // A request nobody will see must not keep its server waiting.
            if let Event::ServerRequest(request) = unsent.into_inner() {
                let _ = self
                    .wire
                    .client()
                    .answer(request.ticket(), Reply::Error(unseen()));
            }
        }
    }
}

/// The error a server's request gets when the application's event queue has no room for it
/// (or is gone): a request nobody will see must not keep its server waiting.
pub(crate) fn unseen() -> RpcError {
    RpcError::new(
        ErrorCode::INTERNAL_ERROR,
        "the application's event queue is full or gone",
    )
}

/// The refusal given to a start whose client refused it.
pub(crate) fn refused<T>(reply: oneshot::Sender<Result<T, AsyncError>>, misuse: Misuse) {
    let _ = reply.send(Err(AsyncError::Mcp(misuse.into())));
}
