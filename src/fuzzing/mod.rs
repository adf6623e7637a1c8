//! Bodies of the cargo-fuzz targets, kept in the library so that their committed seed corpus
//! replays under a plain `cargo test` on stable. Not part of the supported API.
//!
//! Each body panics exactly when an invariant of the crate is broken; that is its purpose.
#![allow(clippy::panic, clippy::indexing_slicing, clippy::expect_used)]

use alloc::vec::Vec;

use crate::{encode_frame, parse_frame, Error, FrameReader, Framed, Limits, Message, Outcome};

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
    for mut input in cut(stream, pieces) {
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
    }
    items
}

/// `stream` cut into pieces of the given lengths (each at most what is left, zero being an
/// empty read), then the rest as one last piece: how the readers' bodies feed a stream.
fn cut<'s>(stream: &'s [u8], lengths: &[usize]) -> Vec<&'s [u8]> {
    let mut pieces = Vec::with_capacity(lengths.len() + 1);
    let mut rest = stream;
    for &len in lengths {
        let (piece, tail) = rest.split_at(len.min(rest.len()));
        pieces.push(piece);
        rest = tail;
    }
    pieces.push(rest);
    pieces
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

/// Fuzz body `parse_frame`, two-sided against `serde_json`:
///
/// - never panics on any input;
/// - whatever it accepts, `serde_json` reads as the same message, payloads included
///   (params, result, error data compared as values), and it re-encodes as one line that
///   parses back equal;
/// - whatever `serde_json` accepts and it refuses is refused for a documented reason that
///   the value confirms: a JSON-RPC rule the value breaks, nesting past the limit, or one of
///   the ambiguities `serde_json` resolves silently (a duplicate key).
pub fn parse_frame_body(data: &[u8]) {
    let limits = Limits::default();
    let oracle = serde_json::from_slice::<serde_json::Value>(data);
    match (parse_frame(data, &limits), oracle) {
        (Ok(message), Ok(value)) => agree(&message, &value, &limits),
        (Ok(message), Err(e)) => panic!("accepted {message:?}, which serde_json refuses: {e}"),
        (Err(refused), Ok(value)) => refusal_is_documented(&refused, &value),
        (Err(_), Err(_)) => {}
    }
}

/// The parsed message says what `serde_json` reads, and round-trips.
fn agree(message: &Message, value: &serde_json::Value, limits: &Limits) {
    let same = |raw: &str, expected: &serde_json::Value, what: &str| {
        let read: serde_json::Value =
            serde_json::from_str(raw).expect("a kept payload is not JSON");
        assert_eq!(
            &read, expected,
            "the {what} differs from serde_json's reading"
        );
    };
    assert_eq!(value["jsonrpc"], "2.0");
    let id = &value["id"];
    match message {
        Message::Request(r) => {
            assert_eq!(value["method"].as_str(), Some(r.method.as_str()));
            assert_same_id(id, &r.id);
            match &r.params {
                Some(params) => same(params.as_str(), &value["params"], "params"),
                None => assert!(value.get("params").is_none()),
            }
        }
        Message::Notification(n) => {
            assert_eq!(value["method"].as_str(), Some(n.method.as_str()));
            assert!(value.get("id").is_none());
            match &n.params {
                Some(params) => same(params.as_str(), &value["params"], "params"),
                None => assert!(value.get("params").is_none()),
            }
        }
        Message::Response(r) => {
            assert_same_id(id, &r.id);
            match &r.outcome {
                Outcome::Result(result) => same(result.as_str(), &value["result"], "result"),
                Outcome::Error(e) => same_error(e, &value["error"], &same),
            }
        }
        Message::UnboundError(e) => {
            assert!(id.is_null());
            same_error(e, &value["error"], &same);
        }
    }
    let mut frame = Vec::new();
    encode_frame(message, limits, &mut frame).expect("a parsed message did not re-encode");
    assert_eq!(frame.pop(), Some(b'\n'));
    assert!(
        !frame.contains(&b'\n'),
        "an encoded frame holds a raw newline"
    );
    assert_eq!(
        parse_frame(&frame, limits).as_ref(),
        Ok(message),
        "round trip changed the message"
    );
}

fn same_error(
    error: &crate::RpcError,
    expected: &serde_json::Value,
    same: &dyn Fn(&str, &serde_json::Value, &str),
) {
    assert_eq!(expected["code"].as_i64(), Some(i64::from(error.code.0)));
    assert_eq!(expected["message"].as_str(), Some(error.message.as_str()));
    match &error.data {
        Some(data) => same(data.as_str(), &expected["data"], "error data"),
        None => assert!(expected.get("data").is_none()),
    }
}

/// `refused` is one of the documented reasons, and `value` (what `serde_json` read) shows it.
fn refusal_is_documented(refused: &Error, value: &serde_json::Value) {
    use crate::{JsonErrorKind, ProtocolViolation as V};
    use serde_json::Value;
    let member = |key: &str| value.as_object().and_then(|o| o.get(key));
    // An integer `0` may have been written `-0`, which this crate refuses as an id or code
    // (parsers read it as 0 or as -0.0); any other integer in range is acceptable.
    let plain_integer =
        |v: &Value, fits: &dyn Fn(i64) -> bool| v.as_i64().is_some_and(|n| n != 0 && fits(n));
    let shown = match refused {
        Error::Malformed(e) => match e.kind() {
            // serde_json keeps the last of two equal keys; this crate refuses the object.
            JsonErrorKind::DuplicateKey => true,
            JsonErrorKind::TooDeep { limit } => depth(value) > limit,
            other => panic!("serde_json read what was refused as {other:?}: {value}"),
        },
        Error::Protocol(violation) => match violation {
            V::NotAnObject => !value.is_object(),
            V::NotJsonRpc2 => member("jsonrpc").and_then(Value::as_str) != Some("2.0"),
            V::InvalidId => {
                member("id").is_some_and(|id| !id.is_string() && !plain_integer(id, &|_| true))
            }
            V::MethodNotString => member("method").is_some_and(|m| !m.is_string()),
            V::ParamsNotObject => member("params").is_some_and(|p| !p.is_object()),
            V::ResultNotObject => member("result").is_some_and(|r| !r.is_object()),
            V::InvalidErrorObject => member("error").is_some_and(|e| {
                let code = e
                    .get("code")
                    .is_some_and(|c| plain_integer(c, &|n| i32::try_from(n).is_ok()));
                let message = e.get("message").is_some_and(Value::is_string);
                !(e.is_object() && code && message)
            }),
            V::RequestAndResponse => {
                member("method").is_some()
                    && (member("result").is_some() || member("error").is_some())
            }
            V::ResultAndError => member("result").is_some() && member("error").is_some(),
            V::NotAMessage => ["method", "result", "error"]
                .iter()
                .all(|k| member(k).is_none()),
            V::ResultWithoutId => member("result").is_some() && member("id").is_none(),
            other => panic!("parse_frame refused with a session-level violation {other:?}"),
        },
        other => panic!("parse_frame refused with {other:?}"),
    };
    assert!(shown, "refused as {refused}, which {value} does not show");
}

/// How deeply `value` nests, counting itself as 1 if it is an array or object.
fn depth(value: &serde_json::Value) -> usize {
    match value {
        serde_json::Value::Array(items) => 1 + items.iter().map(depth).max().unwrap_or(0),
        serde_json::Value::Object(members) => 1 + members.values().map(depth).max().unwrap_or(0),
        _ => 0,
    }
}

fn assert_same_id(json: &serde_json::Value, id: &crate::RequestId) {
    match (json, id.as_i64(), id.as_str()) {
        (serde_json::Value::Number(n), Some(i), None) => assert_eq!(n.as_i64(), Some(i)),
        (serde_json::Value::String(s), None, Some(t)) => assert_eq!(s, t),
        _ => panic!("id {id} read as {json}"),
    }
}

mod auth;
mod http;
mod session;
mod sse;
mod subscription;

pub use auth::auth;
pub use http::http_session;
pub use session::{client_session, connected_client, run_session, Scenario, Step, MAX_STEPS};
pub use sse::{expected_events, read_events_in_pieces, sse, SseItem};
pub use subscription::subscription;
