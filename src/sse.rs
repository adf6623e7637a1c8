//! Server-sent events, read as the WHATWG standard reads them, with a hard bound on what is
//! held: the reader under Streamable HTTP's `text/event-stream` replies.

use alloc::vec::Vec;

use crate::Limits;

/// What [`SseReader::next_event`] found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Sse<'a> {
    /// One event was dispatched.
    Event(SseEvent<'a>),
    /// The input is used up and no event is complete yet: feed more bytes.
    NeedMore,
    /// The event being read reached a bound: its data [`Limits::frame_bytes`], or an `event`,
    /// `id` or `retry` value [`Limits::sse_field_bytes`]. It is refused, nothing of it is
    /// kept, and the reader skips the rest of it, up to the blank line that ends it.
    TooLong {
        /// The bound that was reached, in bytes.
        limit: usize,
    },
}

/// One dispatched event.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SseEvent<'a> {
    /// The event's data: its `data` lines joined by `\n`. Empty for an event such as the
    /// priming event of 2025-11-25 (an id and an empty `data:` line), which carries no
    /// message: never parse it as JSON.
    pub data: &'a [u8],
    /// The event's type as the stream named it, or empty when it named none (the standard's
    /// default, `message`).
    pub event: &'a [u8],
    /// The stream's last event id when the event was dispatched, if any `id` was set.
    pub id: Option<&'a [u8]>,
}

impl SseEvent<'_> {
    /// Whether this event may carry a JSON-RPC message: its type is `message` (or none) and
    /// it has data. MCP sends its messages as such events.
    pub fn is_message(&self) -> bool {
        (self.event.is_empty() || self.event == b"message") && !self.data.is_empty()
    }
}

/// The field a line names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Field {
    Data,
    Event,
    Id,
    Retry,
}

impl Field {
    fn named(name: &[u8]) -> Option<Self> {
        match name {
            b"data" => Some(Field::Data),
            b"event" => Some(Field::Event),
            b"id" => Some(Field::Id),
            b"retry" => Some(Field::Retry),
            _ => None,
        }
    }
}

/// Where the reader is within a line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum At {
    /// At the start of a line.
    Start,
    /// Inside a field's name.
    Name,
    /// Inside the value of a field that is kept; `fresh` until its first byte, whose one
    /// leading space is dropped.
    Value { field: Field, fresh: bool },
    /// Inside a line whose bytes are dropped: a comment, an unknown field, or a line of a
    /// refused event.
    Discard,
}

/// What the end of a line did.
enum Ended {
    /// Ended a line, nothing more.
    Line,
    /// Dispatched an event.
    Event,
    /// Made the event reach a bound.
    Refused(usize),
}

/// The longest field name this reader knows (`event`, `retry`).
const NAME_BYTES: usize = 5;

/// The byte-order mark a stream may open with, which is dropped.
const BOM: [u8; 3] = [0xEF, 0xBB, 0xBF];

/// Splits an `text/event-stream` body into events, holding at most [`Limits::frame_bytes`]
/// bytes of data and [`Limits::sse_field_bytes`] of each other kept field.
///
/// Feed it the body's bytes as they arrive, cut anywhere: call
/// [`next_event`](Self::next_event) with the input until it says [`Sse::NeedMore`]. The
/// events and refusals depend only on the bytes, never on how they were cut.
///
/// It reads as the WHATWG standard's event-stream interpretation does: lines end in CRLF, LF
/// or CR; one leading byte-order mark is dropped; a line `name: value` sets a field (one space
/// after the colon is dropped), a line without a colon is a field with an empty value, a line
/// starting with `:` is a comment; `data` lines are joined with `\n`; `event` names the type;
/// `id` sets the last event id (unless it holds a NUL); `retry` sets the reconnection time
/// (digits only); unknown fields are ignored; a blank line dispatches the event if it has any
/// `data` line. Bytes of comments and unknown fields are dropped as they arrive, never held,
/// however long the line. What the standard leaves to a browser is left out: the text is not
/// decoded (a message's data is checked as UTF-8 when it is parsed as JSON).
///
/// ```
/// use mcp_sansio::{Limits, Sse, SseReader};
/// let mut reader = SseReader::new(&Limits::default());
/// let mut input: &[u8] = b": keep-alive\nid: 7\ndata:\n\nevent: message\ndata: {\"jsonrpc\":";
/// // The priming event: an id and empty data, no message.
/// let Sse::Event(priming) = reader.next_event(&mut input) else { panic!() };
/// assert!(!priming.is_message());
/// assert_eq!(priming.id, Some(&b"7"[..]));
/// assert_eq!(reader.next_event(&mut input), Sse::NeedMore);
/// let mut input: &[u8] = b"\"2.0\"}\r\n\r\n";
/// let Sse::Event(message) = reader.next_event(&mut input) else { panic!() };
/// assert!(message.is_message());
/// assert_eq!(message.data, b"{\"jsonrpc\":\"2.0\"}");
/// ```
#[derive(Clone, Debug)]
pub struct SseReader {
    data_limit: usize,
    field_limit: usize,
    at: At,
    name: [u8; NAME_BYTES],
    name_len: usize,
    /// The `data` lines of the event being read, each followed by `\n`.
    data: Vec<u8>,
    /// The event type being read.
    event: Vec<u8>,
    /// The value of the `event`, `id` or `retry` line being read.
    value: Vec<u8>,
    last_id: Option<Vec<u8>>,
    retry: Option<u64>,
    /// The event being read was refused: its lines are dropped up to the blank line.
    refused: bool,
    /// The last event was handed out: its data and type go at the next call.
    handed_out: bool,
    /// The last line ended in CR, so an LF right after it ends nothing.
    after_cr: bool,
    /// How many bytes of the byte-order mark the stream opened with so far; 3 once the
    /// stream's start is behind.
    bom: usize,
}

impl SseReader {
    /// A reader bounded by `limits`.
    pub fn new(limits: &Limits) -> Self {
        SseReader {
            data_limit: limits.frame_bytes,
            field_limit: limits.sse_field_bytes,
            at: At::Start,
            name: [0; NAME_BYTES],
            name_len: 0,
            data: Vec::new(),
            event: Vec::new(),
            value: Vec::new(),
            last_id: None,
            retry: None,
            refused: false,
            handed_out: false,
            after_cr: false,
            bom: 0,
        }
    }

    /// The last event id the streams read so far set: what a client sends as `Last-Event-ID`
    /// to resume. It survives [`end_of_stream`](Self::end_of_stream).
    pub fn last_event_id(&self) -> Option<&[u8]> {
        self.last_id.as_deref()
    }

    /// The reconnection time, in milliseconds, a `retry` field set, if any.
    pub fn retry_ms(&self) -> Option<u64> {
        self.retry
    }

    /// How many bytes of an unfinished event the reader holds.
    pub fn buffered(&self) -> usize {
        self.data.len() + self.event.len() + self.value.len()
    }

    /// The stream ended: an unfinished event is dropped, as the standard says, and the reader
    /// is ready for a new stream (which may open with a byte-order mark). The last event id
    /// and the reconnection time are kept.
    pub fn end_of_stream(&mut self) {
        self.at = At::Start;
        self.name_len = 0;
        self.data.clear();
        self.event.clear();
        self.value.clear();
        self.refused = false;
        self.handed_out = false;
        self.after_cr = false;
        self.bom = 0;
    }

    /// Reads from the front of `input` until an event is dispatched, an event is refused, or
    /// the input is used up; consumes what it read.
    pub fn next_event(&mut self, input: &mut &[u8]) -> Sse<'_> {
        if self.handed_out {
            self.handed_out = false;
            self.data.clear();
            self.event.clear();
        }
        loop {
            if self.bom < BOM.len() {
                match self.opening(input) {
                    Some(refusal) => return refusal,
                    None if self.bom < BOM.len() => return Sse::NeedMore,
                    None => {}
                }
            }
            let Some(&byte) = input.first() else {
                return Sse::NeedMore;
            };
            if byte == b'\r' || byte == b'\n' {
                *input = input.get(1..).unwrap_or_default();
                let lf_after_cr = byte == b'\n' && self.after_cr;
                self.after_cr = byte == b'\r';
                if lf_after_cr {
                    continue;
                }
                match self.end_line() {
                    Ended::Line => continue,
                    Ended::Event => return Sse::Event(self.dispatched()),
                    Ended::Refused(limit) => return Sse::TooLong { limit },
                }
            }
            self.after_cr = false;
            if let Some(refusal) = self.take(input) {
                return refusal;
            }
        }
    }

    /// Reads the stream's first bytes, dropping a byte-order mark. Bytes that turn out not to
    /// be one are read as the line they start.
    fn opening(&mut self, input: &mut &[u8]) -> Option<Sse<'static>> {
        while self.bom < BOM.len() {
            let byte = *input.first()?;
            if Some(&byte) == BOM.get(self.bom) {
                self.bom += 1;
                *input = input.get(1..).unwrap_or_default();
                continue;
            }
            // Not a mark: what matched of it is the start of a line, then the rest.
            let matched = self.bom;
            self.bom = BOM.len();
            let mut held = BOM.get(..matched).unwrap_or_default();
            while !held.is_empty() {
                if let Some(refusal) = self.take(&mut held) {
                    return Some(refusal);
                }
            }
        }
        None
    }

    /// Consumes bytes of the current line from the front of `input`, up to its end (which it
    /// leaves). Returns a refusal when the line makes the event reach a bound.
    fn take(&mut self, input: &mut &[u8]) -> Option<Sse<'static>> {
        let run = line_run(input);
        match self.at {
            At::Start | At::Name => {
                let (byte, rest) = input.split_first()?;
                *input = rest;
                if *byte == b':' {
                    self.at = match (self.at, Field::named(self.name())) {
                        (At::Start, _) | (_, None) => At::Discard,
                        (_, Some(_)) if self.refused => At::Discard,
                        (_, Some(field)) => At::Value { field, fresh: true },
                    };
                } else if self.name_len < NAME_BYTES {
                    if let Some(slot) = self.name.get_mut(self.name_len) {
                        *slot = *byte;
                    }
                    self.name_len += 1;
                    self.at = At::Name;
                } else {
                    // Longer than any known field name.
                    self.at = At::Discard;
                }
                None
            }
            At::Value { field, fresh } => {
                let mut bytes = input.get(..run).unwrap_or_default();
                *input = input.get(run..).unwrap_or_default();
                if fresh {
                    bytes = bytes.strip_prefix(b" ").unwrap_or(bytes);
                    self.at = At::Value {
                        field,
                        fresh: false,
                    };
                }
                self.keep(field, bytes)
            }
            At::Discard => {
                *input = input.get(run..).unwrap_or_default();
                None
            }
        }
    }

    fn name(&self) -> &[u8] {
        self.name.get(..self.name_len).unwrap_or_default()
    }

    /// Keeps `bytes` of a field's value, within its bound.
    fn keep(&mut self, field: Field, bytes: &[u8]) -> Option<Sse<'static>> {
        let (buffer, limit) = match field {
            // The data with the newline its line adds fits the frame limit, as a frame with
            // its newline does: the data handed out is shorter than the limit.
            Field::Data => (&mut self.data, self.data_limit),
            Field::Event | Field::Id | Field::Retry => (&mut self.value, self.field_limit),
        };
        let room = limit.saturating_sub(buffer.len());
        let newline = usize::from(field == Field::Data);
        if bytes.len().saturating_add(newline) > room {
            self.refuse();
            return Some(Sse::TooLong { limit });
        }
        buffer.extend_from_slice(bytes);
        None
    }

    /// Drops everything of the event being read; its remaining lines are dropped too.
    fn refuse(&mut self) {
        self.refused = true;
        self.at = At::Discard;
        self.data.clear();
        self.event.clear();
        self.value.clear();
    }

    /// Ends a line.
    fn end_line(&mut self) -> Ended {
        let at = core::mem::replace(&mut self.at, At::Start);
        let field = match at {
            At::Start => return self.blank_line(),
            // A field with no colon: its value is empty.
            At::Name if !self.refused => Field::named(self.name()),
            At::Value { field, .. } => Some(field),
            At::Name | At::Discard => None,
        };
        self.name_len = 0;
        let mut ended = Ended::Line;
        if let Some(field) = field {
            // The data line's own newline must fit too.
            match self.keep(field, b"") {
                Some(Sse::TooLong { limit }) => ended = Ended::Refused(limit),
                _ => self.apply(field),
            }
        }
        // A refusal drops the rest of the line it happens in; this line has ended, and the
        // next starts fresh (a blank one ends the refused event).
        self.at = At::Start;
        self.value.clear();
        ended
    }

    /// Applies the field whose line just ended.
    fn apply(&mut self, field: Field) {
        match field {
            Field::Data => self.data.push(b'\n'),
            Field::Event => core::mem::swap(&mut self.event, &mut self.value),
            Field::Id if !self.value.contains(&0) => {
                let id = self.last_id.get_or_insert_with(Vec::new);
                id.clear();
                id.extend_from_slice(&self.value);
            }
            Field::Retry if !self.value.is_empty() && self.value.iter().all(u8::is_ascii_digit) => {
                let ms = self.value.iter().fold(0u64, |ms, digit| {
                    ms.saturating_mul(10)
                        .saturating_add(u64::from(digit - b'0'))
                });
                self.retry = Some(ms);
            }
            Field::Id | Field::Retry => {}
        }
    }

    /// A blank line: dispatches the event if it has data.
    fn blank_line(&mut self) -> Ended {
        if self.refused {
            self.refused = false;
            return Ended::Line;
        }
        if self.data.is_empty() {
            self.event.clear();
            return Ended::Line;
        }
        self.data.pop(); // the newline after the last data line
        self.handed_out = true;
        Ended::Event
    }

    fn dispatched(&self) -> SseEvent<'_> {
        SseEvent {
            data: &self.data,
            event: &self.event,
            id: self.last_id.as_deref(),
        }
    }
}

/// How many bytes at the front of `input` belong to the current line (up to its CR or LF).
fn line_run(input: &[u8]) -> usize {
    memchr::memchr2(b'\r', b'\n', input).unwrap_or(input.len())
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::string::String;
    use alloc::vec;

    /// Every event and refusal in `input` fed whole, as (type, data, id) text.
    fn read(limits: &Limits, input: &[u8]) -> Vec<String> {
        let mut reader = SseReader::new(limits);
        let mut input = input;
        let mut out = Vec::new();
        loop {
            match reader.next_event(&mut input) {
                Sse::NeedMore => return out,
                Sse::TooLong { limit } => out.push(alloc::format!("too long {limit}")),
                Sse::Event(e) => out.push(alloc::format!(
                    "{}|{}|{}",
                    String::from_utf8_lossy(e.event),
                    String::from_utf8_lossy(e.data),
                    e.id.map(String::from_utf8_lossy).unwrap_or_default()
                )),
            }
        }
    }

    #[test]
    fn reads_the_standards_examples() {
        let limits = Limits::default();
        // Lines joined, comments skipped, one space dropped, CR and CRLF ends.
        let stream = b": test stream\n\ndata: first event\nid: 1\n\ndata:second event\nid\n\ndata:  third event\r\n\r\ndata\rdata\r\r";
        assert_eq!(
            read(&limits, stream),
            vec!["|first event|1", "|second event|", "| third event|", "|\n|"]
        );
        // A field with no colon, an unknown field, event types, a NUL id ignored.
        let stream =
            b"event: add\ndata: 73857293\n\nfoo: bar\nevent:remove\ndata:2153\nid: a\0b\n\n";
        assert_eq!(read(&limits, stream), vec!["add|73857293|", "remove|2153|"]);
        // No blank line at the end: the event is not dispatched.
        assert_eq!(read(&limits, b"data: half"), Vec::<String>::new());
    }

    #[test]
    fn a_byte_order_mark_is_dropped_once_and_a_near_miss_is_read() {
        let limits = Limits::default();
        assert_eq!(read(&limits, b"\xEF\xBB\xBFdata: x\n\n"), vec!["|x|"]);
        // A second mark is part of the first line's name: an unknown field.
        assert_eq!(
            read(&limits, b"\xEF\xBB\xBF\xEF\xBB\xBFdata: x\n\n"),
            Vec::<String>::new()
        );
        // Two bytes of a mark, then a colon: a comment line.
        assert_eq!(read(&limits, b"\xEF\xBB: c\ndata: y\n\n"), vec!["|y|"]);
    }

    #[test]
    fn retry_and_the_last_id_survive_the_stream() {
        let mut reader = SseReader::new(&Limits::default());
        let mut input: &[u8] = b"retry: 1500\nid: e-9\ndata:\n\nretry: 2x\ndata: part";
        assert!(matches!(reader.next_event(&mut input), Sse::Event(e) if e.data.is_empty()));
        assert_eq!(reader.next_event(&mut input), Sse::NeedMore);
        assert_eq!(reader.retry_ms(), Some(1500));
        reader.end_of_stream();
        assert_eq!(reader.buffered(), 0);
        assert_eq!(reader.last_event_id(), Some(&b"e-9"[..]));
        // The half event is gone; the new stream may open with a mark.
        let mut input: &[u8] = b"\xEF\xBB\xBFdata: next\n\n";
        assert!(matches!(reader.next_event(&mut input), Sse::Event(e) if e.data == b"next"));
    }

    #[test]
    fn an_event_over_a_bound_is_refused_whole_and_the_next_is_read() {
        let limits = Limits {
            frame_bytes: 8,
            sse_field_bytes: 4,
            ..Limits::default()
        };
        // Seven bytes of data fit (with the newline, eight); eight do not.
        assert_eq!(read(&limits, b"data: 1234567\n\n"), vec!["|1234567|"]);
        assert_eq!(
            read(&limits, b"data: 1234\ndata: 5678\nid: x\n\ndata: ok\n\n"),
            vec!["too long 8", "|ok|"]
        );
        assert_eq!(
            read(&limits, b"event: toolong\ndata: a\n\nid: abcd\ndata: b\n\n"),
            vec!["too long 4", "|b|abcd"]
        );
        // A data line refused at its end (its newline does not fit): the very next blank
        // line ends the refused event.
        assert_eq!(
            read(&limits, b"data: 1234567\ndata:\n\nid: ab\ndata: x\n\n"),
            vec!["too long 8", "|x|ab"]
        );
        // Comments and unknown fields are never held, however long.
        let mut long = vec![b':'; 1000];
        long.extend_from_slice(b"\nxyzzy: ");
        long.extend(core::iter::repeat_n(b'q', 1000));
        long.extend_from_slice(b"\ndata: ok\n\n");
        assert_eq!(read(&limits, &long), vec!["|ok|"]);
    }
}
