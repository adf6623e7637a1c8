//! Roots: declared in the handshake only when the application gives some, answered to the
//! server from the application's list, changed only by the application, and announced.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

mod common;

use common::{input_required, text_reply, Pair, TOOLS};
use mcp_sansio::{
    Config, Error, Incompatible, Limits, Misuse, ProtocolChoice, ProtocolVersion,
    ProtocolViolation, Root,
};
use serde_json::{json, Value};

const CHANGED: &str = r#"{"jsonrpc":"2.0","method":"notifications/roots/list_changed"}"#;

fn config(roots: Option<Vec<Root>>) -> Config {
    let mut config = Pair::config(
        ProtocolChoice::Pinned(ProtocolVersion::V2025_11_25),
        &["word_count"],
    );
    config.roots = roots;
    config
}

fn project() -> Root {
    Root::new("file:///home/ana/project")
        .unwrap()
        .with_name("project")
}

/// The server asks for the roots with request id `id` (JSON text); returns the answer.
fn asked(pair: &mut Pair, id: &str) -> Value {
    let before = pair.sent.len();
    pair.reply(&format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"roots/list"}}"#
    ));
    assert_eq!(pair.sent.len(), before + 1, "one answer to roots/list");
    pair.last_sent()
}

#[test]
fn without_roots_none_are_declared_none_given_and_none_can_be_set() {
    let (mut pair, capabilities) = Pair::connected_2025(config(None));
    assert_eq!(capabilities, json!({}));
    assert_eq!(
        asked(&mut pair, "7"),
        json!({"jsonrpc": "2.0", "id": 7, "error": {"code": -32601, "message": "Method not found"}})
    );
    assert_eq!(
        pair.client.set_roots(vec![project()]),
        Err(Misuse::RootsNotDeclared)
    );
    assert!(pair.sent.len() == 1, "nothing announced: {:?}", pair.sent);
    assert_eq!(asked(&mut pair, "8")["error"]["code"], -32601);
}

#[test]
fn the_application_s_roots_answer_the_server_even_while_a_call_waits() {
    let (mut pair, capabilities) = Pair::connected_2025(config(Some(vec![project()])));
    assert_eq!(capabilities, json!({"roots": {"listChanged": true}}));
    pair.list(TOOLS);
    let (op, id) = pair.call("word_count", r#"{"text":"a b"}"#);
    // The server asks in the middle of the call, with an id of its own kind.
    assert_eq!(
        asked(&mut pair, r#""r-1""#),
        json!({"jsonrpc": "2.0", "id": "r-1",
               "result": {"roots": [{"uri": "file:///home/ana/project", "name": "project"}]}})
    );
    pair.reply(&text_reply(id, "2"));
    pair.finished(op).unwrap();

    // The application narrows them: the server is told, and the next answer is the new list.
    pair.sent.clear();
    let docs = Root::new("file:///home/ana/project/docs").unwrap();
    pair.client.set_roots(vec![docs]).unwrap();
    pair.drain();
    assert_eq!(pair.sent, [CHANGED]);
    assert_eq!(
        asked(&mut pair, "3")["result"],
        json!({"roots": [{"uri": "file:///home/ana/project/docs"}]})
    );
    // None at all is a list too: the capability stays, and the server hears of it.
    pair.sent.clear();
    pair.client.set_roots(Vec::new()).unwrap();
    pair.drain();
    assert_eq!(pair.sent, [CHANGED]);
    assert_eq!(asked(&mut pair, "4")["result"], json!({"roots": []}));
}

#[test]
fn roots_set_before_the_handshake_are_given_and_not_announced() {
    let mut pair = Pair::new(config(Some(Vec::new())));
    pair.client.set_roots(vec![project()]).unwrap();
    pair.drain();
    assert!(pair.sent.is_empty(), "{:?}", pair.sent);
    let op = pair.client.connect(pair.now).unwrap();
    pair.drain();
    pair.reply(&format!(
        r#"{{"jsonrpc":"2.0","id":{},"result":{{"protocolVersion":"2025-11-25","capabilities":{{}},"serverInfo":{{"name":"fs","version":"1"}}}}}}"#,
        pair.last_id()
    ));
    pair.finished(op).unwrap();
    assert!(!pair.sent.iter().any(|s| s == CHANGED), "{:?}", pair.sent);
    assert_eq!(
        asked(&mut pair, "1")["result"]["roots"][0]["uri"],
        "file:///home/ana/project"
    );
}

#[test]
fn roots_that_would_not_fit_in_a_frame_are_refused_and_the_old_ones_stay() {
    let mut limits = Limits::default();
    limits.frame_bytes = 512;
    let long = || Root::new(format!("file:///{}", "d".repeat(500))).unwrap();

    let mut too_long = config(Some(vec![long()]));
    too_long.limits = limits;
    let mut pair = Pair::new(too_long);
    assert!(matches!(
        pair.client.connect(pair.now),
        Err(Misuse::FrameTooLong { limit: 512, .. })
    ));
    pair.drain();
    assert!(pair.sent.is_empty(), "a refused handshake sends nothing");

    let mut config = config(Some(vec![project()]));
    config.limits = limits;
    let (mut pair, _) = Pair::connected_2025(config);
    assert!(matches!(
        pair.client.set_roots(vec![project(), long()]),
        Err(Misuse::FrameTooLong { limit: 512, .. })
    ));
    pair.drain();
    assert!(pair.sent.is_empty(), "nothing announced: {:?}", pair.sent);
    assert_eq!(
        asked(&mut pair, "2")["result"]["roots"],
        json!([{"uri": "file:///home/ana/project", "name": "project"}])
    );
}

/// A 2026-07-28 client connected under `roots` (listed: `word_count`); returns it with the
/// capabilities its discovery declared.
fn stateless(roots: Option<Vec<Root>>, limits: Limits) -> (Pair, Value) {
    let mut config = config(roots);
    config.limits = limits;
    Pair::connected_stateless(config)
}

#[test]
fn a_2026_call_asking_for_roots_goes_again_with_them_and_is_answered() {
    let (mut pair, declared) = stateless(Some(vec![project()]), Limits::default());
    assert_eq!(
        declared,
        json!({"roots": {}}),
        "no listChanged in 2026-07-28"
    );
    let (op, first) = pair.call("word_count", r#"{"text":"a b"}"#);
    let asked = pair.last_sent();
    // Two questions, one key needing its escape written back as it was read.
    pair.reply(&input_required(
        first,
        r#"{"a:roots":{"method":"roots/list"},"b\"q":{"method":"roots/list","params":{}}}"#,
        r#""opaque-1""#,
    ));
    assert!(!pair.has_finished(op));
    let again = pair.last_sent();
    let second = pair.last_id();
    assert_ne!(second, first, "sent again under a new id");
    assert_eq!(again["method"], "tools/call");
    assert_eq!(again["params"]["name"], "word_count");
    assert_eq!(again["params"]["arguments"], json!({"text": "a b"}));
    assert_eq!(again["params"]["_meta"], asked["params"]["_meta"]);
    let listed = json!({"roots": [{"uri": "file:///home/ana/project", "name": "project"}]});
    assert_eq!(
        again["params"]["inputResponses"],
        json!({"a:roots": listed, "b\"q": listed})
    );
    assert_eq!(again["params"]["requestState"], "opaque-1");
    // Again: a state alone, any JSON, is echoed as it came; nothing else is made up.
    pair.reply(&format!(
        r#"{{"jsonrpc":"2.0","id":{second},"result":{{"resultType":"input_required","requestState":{{"n":[1,2.50]}}}}}}"#
    ));
    let third = pair.last_sent();
    assert_eq!(third["params"]["requestState"], json!({"n": [1, 2.5]}));
    assert!(pair
        .sent
        .last()
        .unwrap()
        .contains(r#""requestState":{"n":[1,2.50]}"#));
    assert!(third["params"].get("inputResponses").is_none());
    pair.reply(&text_reply(pair.last_id(), "2"));
    assert_eq!(pair.finished(op).unwrap().text(), "2");

    // Set later, the roots the next question gets are the new ones; nothing is announced.
    pair.sent.clear();
    pair.client.set_roots(Vec::new()).unwrap();
    pair.drain();
    assert!(pair.sent.is_empty(), "{:?}", pair.sent);
    let (op, id) = pair.call("word_count", r#"{"text":"a"}"#);
    pair.reply(&input_required(
        id,
        r#"{"k":{"method":"roots/list"}}"#,
        r#""s""#,
    ));
    assert_eq!(
        pair.last_sent()["params"]["inputResponses"],
        json!({"k": {"roots": []}})
    );
    pair.reply(&text_reply(pair.last_id(), "1"));
    pair.finished(op).unwrap();
}

#[test]
fn a_2026_call_asked_for_the_roots_under_too_many_keys_fails_before_writing_them() {
    // 64 KiB frames: a thousand keys ask for a roots answer of about sixty bytes each.
    let (mut pair, _) = stateless(Some(vec![project()]), Limits::teaching());
    let (op, id) = pair.call("word_count", r#"{"text":"a"}"#);
    let keys: Vec<String> = (0..1000)
        .map(|n| format!(r#""k{n:04}":{{"method":"roots/list"}}"#))
        .collect();
    let sent = pair.sent.len();
    pair.reply(&input_required(
        id,
        &format!("{{{}}}", keys.join(",")),
        r#""s""#,
    ));
    assert_eq!(
        pair.finished(op),
        Err(Error::Protocol(ProtocolViolation::InvalidResult {
            method: "tools/call",
            problem: "the input it asks for would not fit in one frame"
        }))
    );
    assert_eq!(pair.sent.len(), sent, "nothing sent");
    // Under a hundred keys, it goes.
    let (op, id) = pair.call("word_count", r#"{"text":"a"}"#);
    pair.reply(&input_required(
        id,
        &format!("{{{}}}", keys[..100].join(",")),
        r#""s""#,
    ));
    pair.reply(&text_reply(pair.last_id(), "1"));
    assert_eq!(pair.finished(op).unwrap().text(), "1");
}

#[test]
fn a_2026_call_is_sent_again_at_most_input_rounds_times() {
    let mut limits = Limits::default();
    limits.input_rounds = 2;
    let (mut pair, _) = stateless(Some(vec![project()]), limits);
    let (op, mut id) = pair.call("word_count", r#"{"text":"a"}"#);
    for _ in 0..2 {
        pair.reply(&input_required(
            id,
            r#"{"k":{"method":"roots/list"}}"#,
            r#""s""#,
        ));
        assert_ne!(pair.last_id(), id);
        id = pair.last_id();
    }
    let sent = pair.sent.len();
    pair.reply(&input_required(
        id,
        r#"{"k":{"method":"roots/list"}}"#,
        r#""s""#,
    ));
    assert_eq!(
        pair.finished(op),
        Err(Error::Protocol(ProtocolViolation::TooManyInputRounds {
            limit: 2
        }))
    );
    assert_eq!(pair.sent.len(), sent, "nothing sent past the bound");
    assert!(
        !pair.client.is_failed(),
        "the call fails, not the connection"
    );
}

#[test]
fn a_2026_call_asking_for_more_than_roots_or_without_roots_given_is_refused() {
    let refused = Err(Error::Incompatible(Incompatible::InputRequired));
    // Roots given, but the server also wants the user asked.
    let (mut pair, _) = stateless(Some(vec![project()]), Limits::default());
    let (op, id) = pair.call("word_count", r#"{"text":"a"}"#);
    let sent = pair.sent.len();
    pair.reply(&input_required(
        id,
        r#"{"r":{"method":"roots/list"},"e":{"method":"elicitation/create","params":{}}}"#,
        r#""s""#,
    ));
    assert_eq!(pair.finished(op), refused);
    assert_eq!(pair.sent.len(), sent, "nothing sent again");
    // No roots given: none declared, and a question for them is refused as before.
    let (mut pair, declared) = stateless(None, Limits::default());
    assert_eq!(declared, json!({}));
    let (op, id) = pair.call("word_count", r#"{"text":"a"}"#);
    pair.reply(&input_required(
        id,
        r#"{"r":{"method":"roots/list"}}"#,
        r#""s""#,
    ));
    assert_eq!(pair.finished(op), refused);
}

#[test]
fn a_2026_input_required_of_the_wrong_shape_breaks_the_protocol() {
    for result in [
        r#"{"resultType":"input_required"}"#,
        r#"{"resultType":"input_required","inputRequests":[]}"#,
        r#"{"resultType":"input_required","inputRequests":{"k":{}}}"#,
        r#"{"resultType":"input_required","inputRequests":{"k":{"method":7}}}"#,
        r#"{"resultType":"input_required","inputRequests":{"k":"roots/list"}}"#,
    ] {
        let (mut pair, _) = stateless(Some(vec![project()]), Limits::default());
        let (op, id) = pair.call("word_count", r#"{"text":"a"}"#);
        pair.reply(&format!(
            r#"{{"jsonrpc":"2.0","id":{id},"result":{result}}}"#
        ));
        assert!(
            matches!(
                pair.finished(op),
                Err(Error::Protocol(ProtocolViolation::InvalidResult {
                    method: "tools/call",
                    ..
                }))
            ),
            "{result}"
        );
    }
}

#[test]
fn a_failed_connection_takes_no_roots() {
    let (mut pair, _) = Pair::connected_2025(config(Some(vec![project()])));
    pair.reply("not json");
    assert!(pair.client.is_failed());
    assert_eq!(
        pair.client.set_roots(Vec::new()),
        Err(Misuse::ConnectionFailed)
    );
}
