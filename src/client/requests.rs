//! The table of requests in flight: exact id binding, late answers, the notification cap.

use alloc::collections::VecDeque;
use alloc::vec::Vec;

use crate::error::ProtocolViolation;
use crate::id::RequestId;

/// What a response's id binds to.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Bound<T> {
    /// The request it answers, now removed from the table.
    Answer(T),
    /// A request abandoned earlier (at its deadline, or cancelled); `report` says whether
    /// the application wants to hear about it.
    Late { report: bool },
    /// Nothing: an id never sent, or one already answered.
    Nothing(ProtocolViolation),
}

/// A request in flight: what it carries, and how many messages that were not its answer
/// arrived since it was sent.
#[derive(Debug)]
struct Entry<T> {
    id: i64,
    messages: usize,
    value: T,
}

/// Requests in flight, keyed by the integer ids this client sends, each bound to what the
/// caller keeps with it (the client keeps the operation itself there: one table, no second
/// one pointing back).
///
/// Ids come from a counter starting at 1, so an integer id below the counter that is
/// neither in flight nor remembered as abandoned was already answered, and anything else
/// (a string, an integer never reached) was never sent. Only abandoned ids need memory,
/// and at most `remember` of them are kept: a late answer to an older one counts as a
/// duplicate answer.
#[derive(Debug)]
pub(crate) struct Requests<T> {
    next: i64,
    /// Few at a time (at most `Limits::requests_in_flight`): a vector searched in order.
    in_flight: Vec<Entry<T>>,
    abandoned: VecDeque<(i64, bool)>,
    remember: usize,
}

impl<T> Requests<T> {
    pub(crate) fn new(remember: usize) -> Self {
        Requests {
            next: 1,
            in_flight: Vec::new(),
            abandoned: VecDeque::new(),
            remember,
        }
    }

    /// The id the next request will carry, if the counter is not exhausted.
    pub(crate) fn next_id(&self) -> Option<i64> {
        (self.next < i64::MAX).then_some(self.next)
    }

    /// Records a request sent with the id [`next_id`](Self::next_id) gave.
    pub(crate) fn insert(&mut self, id: i64, value: T) {
        self.in_flight.push(Entry {
            id,
            messages: 0,
            value,
        });
        self.next = id.saturating_add(1);
    }

    pub(crate) fn len(&self) -> usize {
        self.in_flight.len()
    }

    /// The requests in flight, oldest first.
    pub(crate) fn iter(&self) -> impl Iterator<Item = (i64, &T)> {
        self.in_flight.iter().map(|e| (e.id, &e.value))
    }

    /// The requests in flight, oldest first, to change.
    pub(crate) fn iter_mut(&mut self) -> impl Iterator<Item = (i64, &mut T)> {
        self.in_flight.iter_mut().map(|e| (e.id, &mut e.value))
    }

    /// Binds a response's id, exactly: the integer `n` only ever answers request `n`.
    pub(crate) fn bind(&mut self, id: &RequestId) -> Bound<T> {
        let Some(n) = id.as_i64() else {
            return Bound::Nothing(ProtocolViolation::UnknownResponseId { id: id.clone() });
        };
        if let Some(request) = self.remove(n) {
            return Bound::Answer(request);
        }
        if let Some(at) = self.abandoned.iter().position(|(a, _)| *a == n) {
            let report = self.abandoned.remove(at).is_some_and(|(_, report)| report);
            return Bound::Late { report };
        }
        if (1..self.next).contains(&n) {
            Bound::Nothing(ProtocolViolation::DuplicateResponse { id: id.clone() })
        } else {
            Bound::Nothing(ProtocolViolation::UnknownResponseId { id: id.clone() })
        }
    }

    /// Stops waiting for request `id`; a late answer will be recognised (and reported if
    /// `report`). Returns what the request carried, if it was in flight.
    pub(crate) fn abandon(&mut self, id: i64, report: bool) -> Option<T> {
        let request = self.remove(id)?;
        self.remember(id, report);
        Some(request)
    }

    /// Remembers request `id`, taken out of the table with [`remove`](Self::remove), as
    /// abandoned: a late answer will be recognised (and reported if `report`).
    pub(crate) fn remember(&mut self, id: i64, report: bool) {
        if self.remember > 0 {
            if self.abandoned.len() >= self.remember {
                self.abandoned.pop_front();
            }
            self.abandoned.push_back((id, report));
        }
    }

    /// What request `id` carries, if it is in flight.
    pub(crate) fn get(&self, id: i64) -> Option<&T> {
        self.in_flight.iter().find(|e| e.id == id).map(|e| &e.value)
    }

    /// What request `id` carries, to change, if it is in flight.
    pub(crate) fn get_mut(&mut self, id: i64) -> Option<&mut T> {
        self.in_flight
            .iter_mut()
            .find(|e| e.id == id)
            .map(|e| &mut e.value)
    }

    /// Removes request `id` from the table, if it is in flight, remembering nothing.
    pub(crate) fn remove(&mut self, id: i64) -> Option<T> {
        let at = self.in_flight.iter().position(|e| e.id == id)?;
        Some(self.in_flight.remove(at).value)
    }

    /// Counts one message that is not an answer against every waiting request, and returns
    /// the ids of those that now have more than `cap`.
    pub(crate) fn count_message(&mut self, cap: usize) -> Vec<i64> {
        let mut over = Vec::new();
        for entry in &mut self.in_flight {
            entry.messages += 1;
            if entry.messages > cap {
                over.push(entry.id);
            }
        }
        over
    }

    /// Forgets everything (the connection is gone), giving back what was in flight, oldest
    /// first.
    pub(crate) fn clear(&mut self) -> Vec<T> {
        self.abandoned.clear();
        self.in_flight.drain(..).map(|e| e.value).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table() -> Requests<&'static str> {
        let mut t = Requests::new(2);
        for name in ["first", "second", "third"] {
            let id = t.next_id().unwrap();
            t.insert(id, name);
        }
        t
    }

    #[test]
    fn binds_exactly_and_only_once() {
        let mut t = table();
        assert_eq!(t.bind(&RequestId::from(2)), Bound::Answer("second"));
        assert_eq!(
            t.bind(&RequestId::from(2)),
            Bound::Nothing(ProtocolViolation::DuplicateResponse {
                id: RequestId::from(2)
            })
        );
        assert_eq!(
            t.bind(&RequestId::from("1")),
            Bound::Nothing(ProtocolViolation::UnknownResponseId {
                id: RequestId::from("1")
            })
        );
        assert_eq!(
            t.bind(&RequestId::from(4)),
            Bound::Nothing(ProtocolViolation::UnknownResponseId {
                id: RequestId::from(4)
            })
        );
        assert_eq!(
            t.bind(&RequestId::from(0)),
            Bound::Nothing(ProtocolViolation::UnknownResponseId {
                id: RequestId::from(0)
            })
        );
        assert_eq!(t.len(), 2);
    }

    #[test]
    fn abandoned_ids_are_late_once_and_remembered_within_the_bound() {
        let mut t = table();
        t.abandon(1, true);
        t.abandon(2, false);
        t.abandon(3, true); // forgets 1: the memory holds two
        assert_eq!(t.bind(&RequestId::from(3)), Bound::Late { report: true });
        assert_eq!(t.bind(&RequestId::from(2)), Bound::Late { report: false });
        assert!(matches!(t.bind(&RequestId::from(1)), Bound::Nothing(_)));
        assert!(matches!(t.bind(&RequestId::from(3)), Bound::Nothing(_)));
    }

    #[test]
    fn the_cap_counts_per_request() {
        let mut t = Requests::new(4);
        t.insert(1, "a");
        assert!(t.count_message(1).is_empty());
        t.insert(2, "b");
        assert_eq!(t.count_message(1), [1]);
        assert_eq!(t.count_message(2), [1], "request 2 has seen only two");
    }
}
