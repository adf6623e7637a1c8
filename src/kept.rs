//! The events a blocking driver keeps for its application between operations, bounded where
//! the server decides how many there are.

use alloc::boxed::Box;
use alloc::collections::VecDeque;
use alloc::vec::Vec;
use core::fmt;

use crate::asks::Responder;
use crate::client::Client;
use crate::event::{Event, OpId};
use crate::subscription::Subscription;

/// Events a driver took from the [`Client`](crate::Client) and keeps until the application
/// asks: the end of an operation it has not awaited yet, notifications, late answers, the
/// connection's failure.
///
/// The application decides how many operations it starts, so every
/// [`Event::Finished`] (and the one [`Event::Failed`]) is kept, and so is every
/// [`Event::ServerRequest`] no [`Responder`] answered (the client bounds those with
/// [`Limits::asks_waiting`](crate::Limits)). The server decides how many
/// notifications, progress reports and late answers it sends, so at most
/// [`Limits::events_kept`](crate::Limits) of those are held at once; later ones are dropped
/// and counted in [`lost`](Self::lost), until the application takes what is kept.
///
/// ```
/// use mcp_sansio::{Event, KeptEvents, RequestId};
///
/// let mut kept = KeptEvents::new(2);
/// for id in 1..=3 {
///     kept.push(Event::LateResponse { id: RequestId::from(id) });
/// }
/// assert_eq!(kept.lost(), 1);
/// assert_eq!(kept.take_all().len(), 2);
/// // Taken, they make room again.
/// kept.push(Event::LateResponse { id: RequestId::from(4) });
/// assert_eq!(kept.take_all().len(), 1);
/// ```
#[derive(Default)]
pub struct KeptEvents {
    events: VecDeque<Event>,
    /// How many of `events` the server sent unasked.
    unasked: usize,
    limit: usize,
    lost: u64,
    /// What answers the server's requests as they are gathered, if anything does.
    responder: Option<Box<dyn Responder>>,
    /// What sees every event as it is gathered, if anything does.
    watcher: Option<Box<dyn Watcher>>,
}

impl fmt::Debug for KeptEvents {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("KeptEvents")
            .field("events", &self.events)
            .field("limit", &self.limit)
            .field("lost", &self.lost)
            .field("responder", &self.responder.is_some())
            .field("watcher", &self.watcher.is_some())
            .finish_non_exhaustive()
    }
}

impl KeptEvents {
    /// An empty store that holds at most `limit` notifications, progress reports and late
    /// answers at once.
    pub fn new(limit: usize) -> Self {
        KeptEvents {
            limit,
            ..KeptEvents::default()
        }
    }

    /// Has `responder` answer every [`Event::ServerRequest`] that
    /// [`gather`](Self::gather) takes from now on, in place of keeping it.
    pub fn set_responder(&mut self, responder: Box<dyn Responder>) {
        self.responder = Some(responder);
    }

    /// Has `watcher` see every event [`gather`](Self::gather) takes from now on, as it
    /// takes it, before it is kept or dropped for want of room: how a blocking driver's
    /// application hears a server's progress and log messages while an operation runs,
    /// instead of after it. The requests a [`Responder`] answers are not among them.
    pub fn set_watcher(&mut self, watcher: Box<dyn Watcher>) {
        self.watcher = Some(watcher);
    }

    /// Takes every event `client` has, keeping each (see [`push`](Self::push)) but the
    /// server requests the [`Responder`], if one is set, answers at once; the watcher, if
    /// one is set, sees each first.
    pub fn gather(&mut self, client: &mut Client) {
        while let Some(event) = client.poll_event_with(self.responder.as_deref_mut()) {
            if let Some(watcher) = self.watcher.as_mut() {
                watcher.watch(&event);
            }
            self.push(event);
        }
    }

    /// Keeps `event`, unless it is one the server sent unasked and `limit` of those are
    /// held already; then it is dropped and counted.
    pub fn push(&mut self, event: Event) {
        let unasked = unasked(&event);
        if unasked {
            if self.unasked >= self.limit {
                self.lost = self.lost.saturating_add(1);
                return;
            }
            self.unasked += 1;
        }
        self.events.push_back(event);
    }

    /// Takes the event that ended `op`, if it is kept.
    pub fn take_finished(&mut self, op: OpId) -> Option<Event> {
        let at = self
            .events
            .iter()
            .position(|e| matches!(e, Event::Finished { op: done, .. } if *done == op))?;
        self.events.remove(at)
    }

    /// Takes the acknowledgement of subscription `op` ([`Event::Subscribed`]), if it is
    /// kept: what the server honours.
    pub fn take_subscribed(&mut self, op: OpId) -> Option<Subscription> {
        let at = self
            .events
            .iter()
            .position(|e| matches!(e, Event::Subscribed { op: acked, .. } if *acked == op))?;
        match self.events.remove(at)? {
            Event::Subscribed { honoured, .. } => Some(honoured),
            _ => None,
        }
    }

    /// Whether any event is kept.
    pub fn is_empty(&self) -> bool {
        self.events.is_empty()
    }

    /// Takes every kept event, in the order they came.
    pub fn take_all(&mut self) -> Vec<Event> {
        self.unasked = 0;
        self.events.drain(..).collect()
    }

    /// How many notifications, progress reports and late answers were dropped for want of
    /// room, in all.
    pub fn lost(&self) -> u64 {
        self.lost
    }
}

/// What sees each event a blocking driver takes from the [`Client`], as it takes it (see
/// [`KeptEvents::set_watcher`]): a closure `FnMut(&Event)` is one. It runs inside the
/// driver's wait, so it should be quick: print, count, hand on.
pub trait Watcher: Send {
    /// Sees `event`.
    fn watch(&mut self, event: &Event);
}

impl<F: FnMut(&Event) + Send> Watcher for F {
    fn watch(&mut self, event: &Event) {
        self(event);
    }
}

/// Whether the server decides how many of `event` it sends: what it sends unasked, and the
/// progress a call asked for.
fn unasked(event: &Event) -> bool {
    matches!(
        event,
        Event::Notification(_) | Event::LateResponse { .. } | Event::Progress { .. }
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Error;
    use crate::RequestId;

    fn late(id: i64) -> Event {
        Event::LateResponse {
            id: RequestId::from(id),
        }
    }

    fn finished(op: u64) -> Event {
        Event::Finished {
            op: OpId(op),
            outcome: Err(Error::Cancelled),
        }
    }

    #[test]
    fn the_ends_of_operations_are_always_kept_and_what_the_server_sends_is_bounded() {
        let mut kept = KeptEvents::new(2);
        kept.push(late(1));
        kept.push(finished(7));
        kept.push(late(2));
        kept.push(late(3));
        kept.push(finished(8));
        kept.push(Event::Failed(Error::Closed));
        assert_eq!(kept.lost(), 1);
        assert!(
            matches!(kept.take_finished(OpId(8)), Some(Event::Finished { op, .. }) if op == OpId(8))
        );
        assert!(kept.take_finished(OpId(8)).is_none());
        // Taking an operation's end frees no room for the server's events.
        kept.push(late(4));
        assert_eq!(kept.lost(), 2);
        assert_eq!(
            kept.take_all(),
            [late(1), finished(7), late(2), Event::Failed(Error::Closed)]
        );
        kept.push(late(5));
        assert_eq!(kept.take_all(), [late(5)]);
        assert_eq!(kept.lost(), 2);
    }

    #[test]
    fn a_limit_of_zero_keeps_only_what_the_application_asked_for() {
        let mut kept = KeptEvents::new(0);
        kept.push(late(1));
        kept.push(finished(1));
        assert_eq!(kept.take_all(), [finished(1)]);
        assert_eq!(kept.lost(), 1);
    }
}
