//! Frames waiting to be written, in one buffer: queuing a frame allocates nothing once the
//! buffer has grown to the largest burst, and taking one copies it into the caller's buffer.
//! Each frame keeps what it is ([`Sent`]), for a transport that carries messages apart.

use alloc::collections::VecDeque;
use alloc::vec::Vec;

use crate::error::Misuse;
use crate::method::Method;

/// What a queued frame carries.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Sent {
    /// Request `id`, of `method`.
    Request { id: i64, method: Method },
    /// A notification of this client's.
    Notification(Notice),
    /// The answer to a server's request.
    Response,
}

/// The notifications this client sends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Notice {
    /// `notifications/initialized`.
    Initialized,
    /// `notifications/cancelled` for request `id`.
    Cancelled { id: i64 },
    /// `notifications/roots/list_changed`.
    RootsChanged,
}

impl Notice {
    /// The notification's method.
    pub(crate) const fn method(self) -> &'static str {
        match self {
            Notice::Initialized => "notifications/initialized",
            Notice::Cancelled { .. } => "notifications/cancelled",
            Notice::RootsChanged => "notifications/roots/list_changed",
        }
    }
}

/// Whole frames, in order, waiting for the transport.
#[derive(Debug, Default)]
pub(crate) struct Transmit {
    /// The frames back to back; `start` is where the first one not yet taken begins.
    bytes: Vec<u8>,
    start: usize,
    /// Where each queued frame ends in `bytes`, and what it is.
    ends: VecDeque<(usize, Sent)>,
}

impl Transmit {
    /// Queues the frame `write` appends (through the envelope writer, which refuses a frame
    /// over the limit and then leaves the buffer as it was).
    pub(crate) fn push(
        &mut self,
        sent: Sent,
        write: impl FnOnce(&mut Vec<u8>) -> Result<usize, Misuse>,
    ) -> Result<(), Misuse> {
        write(&mut self.bytes)?;
        self.ends.push_back((self.bytes.len(), sent));
        Ok(())
    }

    /// How many bytes wait for the transport.
    pub(crate) fn unsent(&self) -> usize {
        self.bytes.len().saturating_sub(self.start)
    }

    /// Appends the next frame to `out`; returns its length and what it is, or `None` if
    /// none is queued.
    pub(crate) fn pop_into(&mut self, out: &mut Vec<u8>) -> Option<(usize, Sent)> {
        let (end, sent) = self.ends.pop_front()?;
        let frame = self.bytes.get(self.start..end).unwrap_or_default();
        out.extend_from_slice(frame);
        let len = frame.len();
        self.start = end;
        if self.ends.is_empty() {
            self.bytes.clear();
            self.start = 0;
        }
        Some((len, sent))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(text: &'static [u8]) -> impl FnOnce(&mut Vec<u8>) -> Result<usize, Misuse> {
        move |out| {
            out.extend_from_slice(text);
            Ok(text.len())
        }
    }

    #[test]
    fn frames_come_out_whole_in_order_and_a_refused_one_leaves_nothing() {
        let mut queue = Transmit::default();
        queue
            .push(Sent::Notification(Notice::Initialized), frame(b"a\n"))
            .unwrap();
        let refused = queue.push(Sent::Response, |_| Err(Misuse::IdsExhausted));
        assert_eq!(refused, Err(Misuse::IdsExhausted));
        queue
            .push(
                Sent::Notification(Notice::Cancelled { id: 4 }),
                frame(b"bc\n"),
            )
            .unwrap();
        let mut out = Vec::new();
        assert_eq!(
            queue.pop_into(&mut out),
            Some((2, Sent::Notification(Notice::Initialized)))
        );
        assert_eq!(
            queue.pop_into(&mut out),
            Some((3, Sent::Notification(Notice::Cancelled { id: 4 })))
        );
        assert_eq!(queue.pop_into(&mut out), None);
        assert_eq!(out, b"a\nbc\n");
        // Emptied, the buffer starts over instead of growing.
        queue.push(Sent::Response, frame(b"d\n")).unwrap();
        assert_eq!((queue.start, queue.bytes.len()), (0, 2));
    }
}
