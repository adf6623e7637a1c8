//! Frames waiting to be written, in one buffer: queuing a frame allocates nothing once the
//! buffer has grown to the largest burst, and taking one copies it into the caller's buffer.

use alloc::collections::VecDeque;
use alloc::vec::Vec;

use crate::error::Misuse;

/// Whole frames, in order, waiting for the transport.
#[derive(Debug, Default)]
pub(crate) struct Transmit {
    /// The frames back to back; `start` is where the first one not yet taken begins.
    bytes: Vec<u8>,
    start: usize,
    /// Where each queued frame ends in `bytes`.
    ends: VecDeque<usize>,
}

impl Transmit {
    /// Queues the frame `write` appends (through the envelope writer, which refuses a frame
    /// over the limit and then leaves the buffer as it was).
    pub(crate) fn push(
        &mut self,
        write: impl FnOnce(&mut Vec<u8>) -> Result<usize, Misuse>,
    ) -> Result<(), Misuse> {
        write(&mut self.bytes)?;
        self.ends.push_back(self.bytes.len());
        Ok(())
    }

    /// Appends the next frame to `out`; returns its length, or `None` if none is queued.
    pub(crate) fn pop_into(&mut self, out: &mut Vec<u8>) -> Option<usize> {
        let end = self.ends.pop_front()?;
        let frame = self.bytes.get(self.start..end).unwrap_or_default();
        out.extend_from_slice(frame);
        let len = frame.len();
        self.start = end;
        if self.ends.is_empty() {
            self.bytes.clear();
            self.start = 0;
        }
        Some(len)
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
        queue.push(frame(b"a\n")).unwrap();
        let refused = queue.push(|_| Err(Misuse::IdsExhausted));
        assert_eq!(refused, Err(Misuse::IdsExhausted));
        queue.push(frame(b"bc\n")).unwrap();
        let mut out = Vec::new();
        assert_eq!(queue.pop_into(&mut out), Some(2));
        assert_eq!(queue.pop_into(&mut out), Some(3));
        assert_eq!(queue.pop_into(&mut out), None);
        assert_eq!(out, b"a\nbc\n");
        // Emptied, the buffer starts over instead of growing.
        queue.push(frame(b"d\n")).unwrap();
        assert_eq!((queue.start, queue.bytes.len()), (0, 2));
    }
}
