//! The `sse` fuzz body: an [`SseReader`] against the event-stream rules read whole, line by
//! line, with no streaming state, and the reader's memory bound.

use alloc::vec::Vec;

use crate::{Limits, Sse, SseReader};

/// One thing an [`SseReader`] yields, copied out.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SseItem {
    /// A dispatched event: its type, data and last event id.
    Event {
        /// The type as named, or empty.
        event: Vec<u8>,
        /// The data.
        data: Vec<u8>,
        /// The last event id at dispatch.
        id: Option<Vec<u8>>,
    },
    /// A refused event, and the bound it reached.
    TooLong(usize),
}

/// What the rules say `stream` yields under the two bounds, read whole: one leading
/// byte-order mark dropped; lines ended by CRLF, LF or CR; per line, the WHATWG field rules;
/// an event refused, once, as soon as its data with its newlines passes `frame` bytes or a
/// kept field's value passes `field` bytes, its remaining lines dropped to the blank line; an
/// unterminated last line refused if it already passed a bound, else dropped with its event.
pub fn expected_events(stream: &[u8], frame: usize, field: usize) -> Vec<SseItem> {
    let stream = stream.strip_prefix(&[0xEF, 0xBB, 0xBF]).unwrap_or(stream);
    let mut items = Vec::new();
    let (mut data, mut event, mut last_id): (Vec<u8>, Vec<u8>, Option<Vec<u8>>) =
        (Vec::new(), Vec::new(), None);
    let mut refused = false;
    let mut rest = stream;
    while !rest.is_empty() {
        let end = rest.iter().position(|&b| b == b'\r' || b == b'\n');
        let line = &rest[..end.unwrap_or(rest.len())];
        rest = match end {
            None => &[],
            Some(at) if rest[at] == b'\r' && rest.get(at + 1) == Some(&b'\n') => &rest[at + 2..],
            Some(at) => &rest[at + 1..],
        };
        let terminated = end.is_some();
        if line.is_empty() {
            if !refused && !data.is_empty() {
                data.pop();
                items.push(SseItem::Event {
                    event: event.clone(),
                    data: data.clone(),
                    id: last_id.clone(),
                });
            }
            data.clear();
            event.clear();
            refused = false;
            continue;
        }
        if refused || line.first() == Some(&b':') {
            continue;
        }
        let colon = line.iter().position(|&b| b == b':');
        let (name, value) = match colon {
            Some(at) => {
                let value = &line[at + 1..];
                (&line[..at], value.strip_prefix(b" ").unwrap_or(value))
            }
            None => (line, &line[line.len()..]),
        };
        // A bound is checked as a value's bytes arrive, and at the end of its line: an
        // unterminated line with nothing after its colon has not been checked yet.
        if !terminated && colon.is_none_or(|at| at + 1 == line.len()) {
            break;
        }
        let over = match name {
            b"data" => Some((data.len() + value.len() + 1 > frame, frame)),
            b"event" | b"id" | b"retry" => Some((value.len() > field, field)),
            _ => None,
        };
        if let Some((true, limit)) = over {
            items.push(SseItem::TooLong(limit));
            refused = true;
            data.clear();
            event.clear();
            continue;
        }
        if !terminated {
            break;
        }
        match name {
            b"data" => {
                data.extend_from_slice(value);
                data.push(b'\n');
            }
            b"event" => event = value.to_vec(),
            b"id" if !value.contains(&0) => last_id = Some(value.to_vec()),
            _ => {}
        }
    }
    items
}

/// Feeds `stream` to a fresh reader in pieces of the given lengths (the rest in one final
/// piece), checking after every call that the reader holds no more than its bounds allow.
pub fn read_events_in_pieces(
    stream: &[u8],
    frame: usize,
    field: usize,
    pieces: &[usize],
) -> Vec<SseItem> {
    let limits = Limits {
        frame_bytes: frame,
        sse_field_bytes: field,
        ..Limits::default()
    };
    let mut reader = SseReader::new(&limits);
    let mut items = Vec::new();
    for mut input in super::cut(stream, pieces) {
        loop {
            match reader.next_event(&mut input) {
                Sse::Event(e) => {
                    assert!(
                        e.data.len() < frame.max(1),
                        "{} bytes of data passed",
                        e.data.len()
                    );
                    items.push(SseItem::Event {
                        event: e.event.to_vec(),
                        data: e.data.to_vec(),
                        id: e.id.map(<[u8]>::to_vec),
                    });
                }
                Sse::TooLong { limit } => items.push(SseItem::TooLong(limit)),
                Sse::NeedMore => {
                    assert!(input.is_empty(), "NeedMore with input left");
                    break;
                }
            }
            assert!(
                reader.buffered() <= frame + 2 * field,
                "the reader holds {} bytes",
                reader.buffered()
            );
        }
        assert!(
            reader.buffered() <= frame + 2 * field,
            "the reader holds {} bytes between reads",
            reader.buffered()
        );
    }
    items
}

/// Fuzz body `sse`. Input: one byte choosing the data bound (1 to 64), one the field bound
/// (0 to 15), one counting the piece lengths that follow (one byte each, 0 an empty read),
/// then the stream. Asserts that the stream yields what the rules say, whole, in pieces and
/// byte by byte, and that the reader never holds more than its bounds.
pub fn sse(data: &[u8]) {
    let [frame, field, count, rest @ ..] = data else {
        return;
    };
    let frame = usize::from(*frame % 64) + 1;
    let field = usize::from(*field % 16);
    let (pieces, stream) = rest.split_at(usize::from(*count).min(rest.len()));
    let pieces: Vec<usize> = pieces.iter().map(|&b| usize::from(b)).collect();
    let expected = expected_events(stream, frame, field);
    assert_eq!(
        read_events_in_pieces(stream, frame, field, &[]),
        expected,
        "whole stream"
    );
    assert_eq!(
        read_events_in_pieces(stream, frame, field, &pieces),
        expected,
        "stream in pieces"
    );
    let bytes: Vec<usize> = core::iter::repeat_n(1, stream.len()).collect();
    assert_eq!(
        read_events_in_pieces(stream, frame, field, &bytes),
        expected,
        "byte by byte"
    );
}
