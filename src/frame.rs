//! Newline framing with a hard bound on the bytes held.

use alloc::vec::Vec;

use crate::error::ProtocolViolation;
use crate::Limits;

/// What [`FrameReader::next_frame`] found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Framed<'a> {
    /// One complete frame: a line without its newline, never empty and never longer than
    /// the limit allows. Parse it with [`parse_frame`](crate::parse_frame).
    Frame(&'a [u8]),
    /// The input is used up and no frame is complete yet: feed more bytes.
    NeedMore,
    /// A line reached the frame limit before its newline. It is refused and its bytes are
    /// dropped; the reader skips the rest of that line and then reads on.
    TooLong {
        /// The frame limit in force, in bytes (newline included).
        limit: usize,
    },
}

impl Framed<'_> {
    /// The refusal as a protocol violation, if this is one.
    pub fn violation(&self) -> Option<ProtocolViolation> {
        match self {
            Framed::TooLong { limit } => Some(ProtocolViolation::FrameTooLong { limit: *limit }),
            Framed::Frame(_) | Framed::NeedMore => None,
        }
    }
}

/// Splits a byte stream into newline-terminated frames, holding at most `limit - 1` bytes.
///
/// Feed it the bytes as they arrive, cut anywhere: call [`next_frame`](Self::next_frame)
/// with the input until it says [`Framed::NeedMore`]. Each call consumes input from the
/// front of the slice it is given. The frames and refusals it yields depend only on the
/// bytes, never on how they were cut.
///
/// - A frame is a line of fewer than [`Limits::frame_bytes`] bytes followed by `\n`, so
///   that with its newline it fits the limit. Empty lines (and lines holding only `\r`)
///   carry no message and are skipped.
/// - A line that reaches the limit is refused with [`Framed::TooLong`] as soon as the limit
///   is reached, whether its newline has arrived or not: the reader never holds the line
///   whole. After a refusal the reader discards bytes up to and including the next newline,
///   holding none of them, and then reads frames as before. One refusal is reported per
///   refused line.
/// - Each input byte is looked at once by the newline search, however many pieces a frame
///   arrives in.
///
/// ```
/// use mcp_sansio::{FrameReader, Framed, Limits};
/// let mut reader = FrameReader::new(&Limits::default());
/// let mut input: &[u8] = b"{\"jsonrpc\":";
/// assert_eq!(reader.next_frame(&mut input), Framed::NeedMore);
/// let mut input: &[u8] = b"\"2.0\"}\n{\"jsonrpc\"";
/// assert_eq!(reader.next_frame(&mut input), Framed::Frame(b"{\"jsonrpc\":\"2.0\"}"));
/// assert_eq!(reader.next_frame(&mut input), Framed::NeedMore);
/// assert_eq!(reader.buffered(), 10);
/// ```
#[derive(Clone, Debug)]
pub struct FrameReader {
    limit: usize,
    /// The unfinished line, or the frame last handed out when `handed_out` is set.
    buf: Vec<u8>,
    handed_out: bool,
    /// The rest of a refused line is being discarded.
    skipping: bool,
}

impl FrameReader {
    /// A reader that refuses frames longer than [`Limits::frame_bytes`].
    pub fn new(limits: &Limits) -> Self {
        FrameReader {
            limit: limits.frame_bytes,
            buf: Vec::new(),
            handed_out: false,
            skipping: false,
        }
    }

    /// The frame limit in force, in bytes, newline included.
    pub fn limit(&self) -> usize {
        self.limit
    }

    /// How many bytes of an unfinished line are held: always less than the limit.
    pub fn buffered(&self) -> usize {
        if self.handed_out {
            0
        } else {
            self.buf.len()
        }
    }

    /// Whether the stream stopped inside a line: bytes of an unfinished frame are held, or
    /// the rest of a refused line is being skipped. At end of input this means the peer
    /// closed its output mid-message.
    pub fn is_mid_line(&self) -> bool {
        self.buffered() > 0 || self.skipping
    }

    /// Consumes bytes from the front of `input` until a frame is complete, a line is
    /// refused, or the input is used up; see the type's documentation.
    pub fn next_frame<'s, 'i: 's>(&'s mut self, input: &mut &'i [u8]) -> Framed<'s> {
        if self.handed_out {
            self.buf.clear();
            self.handed_out = false;
        }
        loop {
            let newline = memchr::memchr(b'\n', input);
            if self.skipping {
                match newline {
                    Some(at) => {
                        *input = input.get(at + 1..).unwrap_or_default();
                        self.skipping = false;
                        continue;
                    }
                    None => {
                        *input = &[];
                        return Framed::NeedMore;
                    }
                }
            }
            let Some(at) = newline else {
                if self.buf.len() + input.len() >= self.limit {
                    self.buf.clear();
                    self.skipping = true;
                    *input = &[];
                    return Framed::TooLong { limit: self.limit };
                }
                self.buf.extend_from_slice(input);
                *input = &[];
                return Framed::NeedMore;
            };
            let (head, rest) = input.split_at(at);
            *input = rest.get(1..).unwrap_or_default();
            let len = self.buf.len() + head.len();
            if len >= self.limit {
                self.buf.clear();
                return Framed::TooLong { limit: self.limit };
            }
            let only_cr = len == 1 && (self.buf.first() == Some(&b'\r') || head == b"\r");
            if len == 0 || only_cr {
                self.buf.clear();
                continue;
            }
            if self.buf.is_empty() {
                return Framed::Frame(head);
            }
            self.buf.extend_from_slice(head);
            self.handed_out = true;
            return Framed::Frame(&self.buf);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::vec;

    fn limits(frame_bytes: usize) -> Limits {
        Limits {
            frame_bytes,
            ..Limits::default()
        }
    }

    /// Everything the reader yields for `chunks`, frames copied out.
    fn collect(reader: &mut FrameReader, chunks: &[&[u8]]) -> Vec<Result<Vec<u8>, usize>> {
        let mut out = Vec::new();
        for chunk in chunks {
            let mut input = *chunk;
            loop {
                match reader.next_frame(&mut input) {
                    Framed::Frame(f) => out.push(Ok(f.to_vec())),
                    Framed::TooLong { limit } => out.push(Err(limit)),
                    Framed::NeedMore => break,
                }
            }
        }
        out
    }

    #[test]
    fn frames_split_anywhere_come_out_whole() {
        let mut reader = FrameReader::new(&limits(64));
        let out = collect(
            &mut reader,
            &[b"{\"a\"", b":1}\n{", b"}\n", b"\n\r\n[", b"]"],
        );
        assert_eq!(out, vec![Ok(b"{\"a\":1}".to_vec()), Ok(b"{}".to_vec())]);
        assert_eq!(reader.buffered(), 2);
        assert!(reader.is_mid_line());
    }

    #[test]
    fn a_line_at_the_limit_is_refused_and_one_below_is_not() {
        // Limit 8: seven bytes plus the newline fit, eight do not.
        let mut reader = FrameReader::new(&limits(8));
        let out = collect(&mut reader, &[b"1234567\n12345678\nabc\n"]);
        assert_eq!(
            out,
            vec![Ok(b"1234567".to_vec()), Err(8), Ok(b"abc".to_vec())]
        );
    }

    #[test]
    fn an_endless_line_is_refused_at_the_limit_and_skipped_in_bounded_memory() {
        let mut reader = FrameReader::new(&limits(8));
        assert_eq!(collect(&mut reader, &[b"1234567"]), vec![]);
        assert_eq!(reader.buffered(), 7);
        // The eighth byte reaches the limit: refused now, not when the newline comes.
        assert_eq!(collect(&mut reader, &[b"8"]), vec![Err(8)]);
        assert_eq!(reader.buffered(), 0);
        for _ in 0..1000 {
            assert_eq!(collect(&mut reader, &[&[b'x'; 4096]]), vec![]);
            assert_eq!(reader.buffered(), 0);
        }
        assert!(reader.is_mid_line());
        // Its end, and what follows, read normally.
        assert_eq!(
            collect(&mut reader, &[b"xx\n{}\n"]),
            vec![Ok(b"{}".to_vec())]
        );
        assert!(!reader.is_mid_line());
    }

    #[test]
    fn refusal_reports_the_limit_as_a_protocol_violation() {
        let refused = Framed::TooLong { limit: 8 };
        assert_eq!(
            refused.violation(),
            Some(ProtocolViolation::FrameTooLong { limit: 8 })
        );
        assert_eq!(Framed::NeedMore.violation(), None);
    }
}
