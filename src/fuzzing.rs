//! Bodies of the cargo-fuzz targets, kept in the library so that their committed seed corpus
//! replays under a plain `cargo test` on stable. Not part of the supported API.
//!
//! Each body panics exactly when an invariant of the crate is broken; that is its purpose.
#![allow(clippy::panic, clippy::indexing_slicing, clippy::expect_used)]

use alloc::vec::Vec;

use crate::{encode_frame, parse_frame, FrameReader, Framed, Limits, Message, Outcome};

/// One thing a [`FrameReader`] yields, frames copied out.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Item {
    /// A complete frame.
    Frame(Vec<u8>),
    /// A refused line.
    TooLong,
}

/// What the framing rules say `stream` must yield under `limit`, computed without a reader:
/// split on newlines; a line of `limit` bytes or more is refused; empty and `\r`-only lines
/// are skipped; an unterminated tail is refused if it already reached the limit.
pub fn expected_items(stream: &[u8], limit: usize) -> Vec<Item> {
    let mut items = Vec::new();
    let mut lines = stream.split(|&b| b == b'\n').peekable();
    while let Some(line) = lines.next() {
        let terminated = lines.peek().is_some();
        if line.len() >= limit {
            items.push(Item::TooLong);
        } else if terminated && !line.is_empty() && line != b"\r" {
            items.push(Item::Frame(line.to_vec()));
        }
    }
    items
}

/// Feeds `stream` to a fresh reader in pieces of the given lengths (the rest in one final
/// piece), checking after every call that the reader holds fewer than `limit` bytes.
pub fn read_in_pieces(stream: &[u8], limit: usize, pieces: &[usize]) -> Vec<Item> {
    let limits = Limits {
        frame_bytes: limit,
        ..Limits::default()
    };
    let mut reader = FrameReader::new(&limits);
    let mut items = Vec::new();
    let mut rest = stream;
    let mut lengths = pieces.iter().copied();
    loop {
        let len = lengths.next().unwrap_or(rest.len()).min(rest.len());
        let (mut input, tail) = rest.split_at(len);
        rest = tail;
        loop {
            let framed = reader.next_frame(&mut input);
            match framed {
                Framed::Frame(frame) => {
                    assert!(
                        frame.len() < limit,
                        "a frame of {} bytes passed",
                        frame.len()
                    );
                    assert!(!frame.contains(&b'\n'), "a frame holds a newline");
                    items.push(Item::Frame(frame.to_vec()));
                }
                Framed::TooLong { limit: reported } => {
                    assert_eq!(reported, limit);
                    items.push(Item::TooLong);
                }
                Framed::NeedMore => {
                    assert!(input.is_empty(), "NeedMore with input left");
                    break;
                }
            }
            assert!(
                reader.buffered() < limit.max(1),
                "the reader holds too much"
            );
        }
        assert!(
            reader.buffered() < limit.max(1),
            "the reader holds too much"
        );
        if rest.is_empty() && lengths.len() == 0 {
            return items;
        }
    }
}

/// Fuzz body `frame_reader`. Input: one byte choosing the limit (1 to 256), one byte
/// counting the piece lengths that follow (one byte each, 0 meaning an empty read), then the
/// stream. Asserts that the stream yields what the framing rules say, whole or in pieces,
/// and that the reader never holds a limit's worth of bytes.
pub fn frame_reader(data: &[u8]) {
    let [limit, count, rest @ ..] = data else {
        return;
    };
    let limit = usize::from(*limit) + 1;
    let (pieces, stream) = rest.split_at(usize::from(*count).min(rest.len()));
    let pieces: Vec<usize> = pieces.iter().map(|&b| usize::from(b)).collect();
    let expected = expected_items(stream, limit);
    assert_eq!(read_in_pieces(stream, limit, &[]), expected, "whole stream");
    assert_eq!(
        read_in_pieces(stream, limit, &pieces),
        expected,
        "stream in pieces"
    );
    let bytes: Vec<usize> = core::iter::repeat_n(1, stream.len()).collect();
    assert_eq!(
        read_in_pieces(stream, limit, &bytes),
        expected,
        "byte by byte"
    );
}

/// Fuzz body `parse_frame`. Never panics on any input; whatever it accepts, `serde_json`
/// also reads as the same message, and it re-encodes as one line that parses back equal.
pub fn parse_frame_body(data: &[u8]) {
    let limits = Limits::default();
    let Ok(message) = parse_frame(data, &limits) else {
        return;
    };
    // Stricter than serde_json, never looser: it must read the same members.
    let value: serde_json::Value =
        serde_json::from_slice(data).expect("accepted a frame serde_json refuses");
    assert_eq!(value["jsonrpc"], "2.0");
    let id = &value["id"];
    match &message {
        Message::Request(r) => {
            assert_eq!(value["method"].as_str(), Some(r.method.as_str()));
            assert_same_id(id, &r.id);
        }
        Message::Notification(n) => {
            assert_eq!(value["method"].as_str(), Some(n.method.as_str()));
            assert!(id.is_null() && value.get("id").is_none());
        }
        Message::Response(r) => {
            assert_same_id(id, &r.id);
            match &r.outcome {
                Outcome::Result(_) => assert!(value["result"].is_object()),
                Outcome::Error(e) => assert_eq!(value["error"]["code"], e.code.0),
            }
        }
        Message::UnboundError(e) => {
            assert!(id.is_null());
            assert_eq!(value["error"]["message"].as_str(), Some(e.message.as_str()));
        }
    }
    let mut frame = Vec::new();
    encode_frame(&message, &limits, &mut frame).expect("a parsed message did not re-encode");
    assert_eq!(frame.pop(), Some(b'\n'));
    assert!(
        !frame.contains(&b'\n'),
        "an encoded frame holds a raw newline"
    );
    assert_eq!(
        parse_frame(&frame, &limits),
        Ok(message),
        "round trip changed the message"
    );
}

fn assert_same_id(json: &serde_json::Value, id: &crate::RequestId) {
    match (json, id.as_i64(), id.as_str()) {
        (serde_json::Value::Number(n), Some(i), None) => assert_eq!(n.as_i64(), Some(i)),
        (serde_json::Value::String(s), None, Some(t)) => assert_eq!(s, t),
        _ => panic!("id {id} read as {json}"),
    }
}
