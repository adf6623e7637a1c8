//! The framing and parsing invariants, as properties over generated input.
//!
//! 1. Split invariance: how a stream is cut never changes what comes out of it.
//! 2. Ids: only integers within i64 and strings are ids, and `1` is never `"1"`.
//! 3. Endless lines: without a newline, the reader holds less than the limit and refuses
//!    the line in the read that reaches the limit.
//! 4. Round trip: a parsed message encodes to one line that parses to the same message.
//! 5. Through serde: raw JSON read by any serde deserializer is the text it came from.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

use mcp_sansio::fuzzing::{expected_items, read_in_pieces, Item};
use mcp_sansio::{
    encode_frame, parse_frame, Error, FrameReader, Framed, Limits, Message, Outcome,
    ProtocolViolation, RawJson, RequestId,
};
use proptest::prelude::*;
use serde_json::Value;

const LIMIT: usize = 256;

/// Any JSON value, small enough to keep frames well under the framing tests' limit at times
/// and over it at others.
fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        (-1e300f64..1e300).prop_map(Value::from),
        "\\PC{0,8}".prop_map(Value::String),
        any::<String>().prop_map(Value::String),
    ];
    leaf.prop_recursive(4, 24, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::btree_map("\\PC{0,6}", inner, 0..4)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

fn json_object() -> impl Strategy<Value = Value> {
    prop::collection::btree_map("\\PC{0,6}", json_value(), 0..4)
        .prop_map(|m| Value::Object(m.into_iter().collect()))
}

/// A valid id: an integer or a string.
fn id() -> impl Strategy<Value = Value> {
    prop_oneof![
        any::<i64>().prop_map(Value::from),
        any::<String>().prop_map(Value::String)
    ]
}

/// A valid JSON-RPC message of any kind, as a JSON value.
fn message() -> impl Strategy<Value = Value> {
    let method = any::<String>;
    let params = || prop::option::of(json_object());
    let error = (
        any::<i32>(),
        any::<String>(),
        prop::option::of(json_value()),
    )
        .prop_map(|(code, message, data)| {
            let mut e = serde_json::json!({"code": code, "message": message});
            if let Some(data) = data {
                e["data"] = data;
            }
            e
        });
    prop_oneof![
        (id(), method(), params()).prop_map(|(id, method, params)| {
            let mut m = serde_json::json!({"jsonrpc": "2.0", "id": id, "method": method});
            if let Some(p) = params {
                m["params"] = p;
            }
            m
        }),
        (method(), params()).prop_map(|(method, params)| {
            let mut m = serde_json::json!({"jsonrpc": "2.0", "method": method});
            if let Some(p) = params {
                m["params"] = p;
            }
            m
        }),
        (id(), json_object()).prop_map(
            |(id, result)| serde_json::json!({"jsonrpc": "2.0", "id": id, "result": result})
        ),
        (prop_oneof![id(), Just(Value::Null)], error).prop_map(
            |(id, error)| serde_json::json!({"jsonrpc": "2.0", "id": id, "error": error})
        ),
    ]
}

/// `text` with insignificant whitespace added between tokens (never a newline, so it stays
/// one frame): pretty-printing puts newlines only outside strings.
fn spaced(value: &Value) -> String {
    serde_json::to_string_pretty(value)
        .unwrap()
        .replace('\n', " \t\r")
}

/// One line of a stream: a valid message, junk, an oversized line, or a blank line.
fn line() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        4 => message().prop_map(|m| serde_json::to_vec(&m).unwrap()),
        1 => prop::collection::vec(any::<u8>().prop_filter("no newline", |b| *b != b'\n'), 0..40),
        1 => (LIMIT..LIMIT * 3).prop_map(|n| vec![b'x'; n]),
        1 => Just(b"\r".to_vec()),
        1 => Just(Vec::new()),
    ]
}

fn stream() -> impl Strategy<Value = Vec<u8>> {
    (prop::collection::vec(line(), 0..12), any::<bool>()).prop_map(|(lines, unterminated_tail)| {
        let mut stream = lines.join(&b'\n');
        if !unterminated_tail && !stream.is_empty() {
            stream.push(b'\n');
        }
        stream
    })
}

fn parsed(items: &[Item]) -> Vec<Result<Message, Error>> {
    items
        .iter()
        .map(|item| match item {
            Item::Frame(frame) => parse_frame(frame, &Limits::default()),
            Item::TooLong => Err(Error::Protocol(ProtocolViolation::FrameTooLong {
                limit: LIMIT,
            })),
        })
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 512,
        failure_persistence: Some(Box::new(
            proptest::test_runner::FileFailurePersistence::Direct("proptest-regressions/invariants.txt"),
        )),
        ..ProptestConfig::default()
    })]

    /// (1) Any partition of a mixed stream yields exactly what one feed yields, and what the
    /// framing rules say it must, frames and messages alike.
    #[test]
    fn split_invariance(stream in stream(), pieces in prop::collection::vec(0usize..64, 0..40)) {
        let whole = read_in_pieces(&stream, LIMIT, &[]);
        prop_assert_eq!(&whole, &expected_items(&stream, LIMIT));
        let cut = read_in_pieces(&stream, LIMIT, &pieces);
        prop_assert_eq!(&cut, &whole);
        prop_assert_eq!(parsed(&cut), parsed(&whole));
    }

    /// (2) A response whose id is any JSON value but an integer within i64 or a string is
    /// never a response.
    #[test]
    fn only_integers_and_strings_are_ids(id in json_value()) {
        let frame = serde_json::to_vec(&serde_json::json!({"jsonrpc": "2.0", "id": id, "result": {}})).unwrap();
        let parsed = parse_frame(&frame, &Limits::default());
        let valid = id.is_i64() || id.is_string();
        prop_assert_eq!(matches!(parsed, Ok(Message::Response(_))), valid, "{}", id);
        if !valid {
            prop_assert_eq!(parsed, Err(Error::Protocol(ProtocolViolation::InvalidId)));
        }
    }

    /// (2) `n` and `"n"` are different ids, whatever `n`; `n` answers only integer `n`.
    #[test]
    fn integer_and_string_ids_never_match(n in any::<i64>()) {
        let read = |id: Value| {
            let frame = serde_json::to_vec(&serde_json::json!({"jsonrpc": "2.0", "id": id, "result": {}})).unwrap();
            match parse_frame(&frame, &Limits::default()) {
                Ok(Message::Response(r)) => r.id,
                other => panic!("{other:?}"),
            }
        };
        let number = read(Value::from(n));
        let text = read(Value::String(n.to_string()));
        prop_assert_eq!(&number, &RequestId::from(n));
        prop_assert_ne!(&text, &RequestId::from(n));
        prop_assert_ne!(number.to_string(), text.to_string());
    }

    /// (3) A line that never ends: the reader holds fewer than `limit` bytes at all times,
    /// refuses the line in the read that brings it to `limit` bytes, and then holds nothing.
    #[test]
    fn endless_lines_stay_bounded(
        limit in 1usize..512,
        bytes in prop::collection::vec(any::<u8>().prop_filter("no newline", |b| *b != b'\n'), 0..2048),
        pieces in prop::collection::vec(0usize..97, 1..64),
    ) {
        let mut limits = Limits::default();
        limits.frame_bytes = limit;
        let mut reader = FrameReader::new(&limits);
        let (mut fed, mut refusals) = (0, 0);
        let mut rest = &bytes[..];
        for &n in pieces.iter().cycle().take(bytes.len() + pieces.len()) {
            let (mut input, tail) = rest.split_at(n.min(rest.len()));
            rest = tail;
            fed += input.len();
            loop {
                match reader.next_frame(&mut input) {
                    Framed::Frame(f) => panic!("a line without newline became a frame: {f:?}"),
                    Framed::TooLong { .. } => refusals += 1,
                    Framed::NeedMore => break,
                }
            }
            prop_assert!(reader.buffered() < limit);
            prop_assert_eq!(refusals, usize::from(fed >= limit), "fed {} of limit {}", fed, limit);
            prop_assert_eq!(reader.buffered(), if fed >= limit { 0 } else { fed });
        }
    }

    /// (4) A parsed message re-encodes to one compact line that parses to the same message,
    /// however the original was spaced.
    #[test]
    fn round_trip(message in message(), spread in any::<bool>()) {
        let text = if spread { spaced(&message) } else { serde_json::to_string(&message).unwrap() };
        let limits = Limits::default();
        let parsed = parse_frame(text.as_bytes(), &limits);
        let parsed = match parsed {
            Ok(m) => m,
            Err(e) => panic!("a valid message was refused: {e}: {text}"),
        };
        let mut frame = Vec::new();
        encode_frame(&parsed, &limits, &mut frame).unwrap();
        prop_assert_eq!(frame.pop(), Some(b'\n'));
        prop_assert!(!frame.contains(&b'\n'));
        prop_assert!(!frame.contains(&b' ') || text.contains(' '), "encoding added spaces");
        prop_assert_eq!(&parse_frame(&frame, &limits).unwrap(), &parsed);
        // Re-encoding is idempotent: the compact frame is its own encoding.
        let mut again = Vec::new();
        encode_frame(&parsed, &limits, &mut again).unwrap();
        again.pop();
        prop_assert_eq!(again, frame.clone());
        // And it means what serde_json reads in the original.
        let reread: Value = serde_json::from_slice(&frame).unwrap();
        prop_assert_eq!(reread, message.clone());
        if let Message::Response(r) = &parsed {
            if let Outcome::Result(result) = &r.outcome {
                prop_assert_eq!(&serde_json::from_str::<Value>(result.as_str()).unwrap(), &message["result"]);
            }
        }
    }
}

proptest! {
    #[test]
    fn raw_json_read_through_serde_is_the_text_it_came_from(value in json_value()) {
        let text = serde_json::to_string(&value).unwrap();
        let Ok(parsed) = RawJson::parse(&text, &Limits::default()) else {
            // Past the crate's rules (nesting); serde must refuse it too.
            prop_assert!(serde_json::from_str::<RawJson>(&text).is_err());
            return Ok(());
        };
        let read: RawJson = serde_json::from_str(&text).unwrap();
        prop_assert_eq!(read.as_str(), parsed.as_str());
        // From serde_json's own tree (members sorted, as that tree holds them), and back out.
        let from_tree: RawJson = serde_json::from_value(value.clone()).unwrap();
        prop_assert_eq!(&from_tree, &parsed);
        let written = serde_json::to_string(&parsed).unwrap();
        prop_assert_eq!(serde_json::from_str::<RawJson>(&written).unwrap(), parsed);
    }
}
