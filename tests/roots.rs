//! Roots: declared in the handshake only when the application gives some, answered to the
//! server from the application's list, changed only by the application, and announced.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

mod common;

use common::{text_reply, Pair, TOOLS};
use mcp_sansio::{Config, Limits, Misuse, ProtocolChoice, ProtocolVersion, Root};
use serde_json::{json, Value};

const INITIALIZED: &str = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
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

/// Connects with `config`; returns the pair and the capabilities `initialize` declared.
fn connected(config: Config) -> (Pair, Value) {
    let mut pair = Pair::new(config);
    let op = pair.client.connect(pair.now).unwrap();
    pair.drain();
    let initialize = pair.last_sent();
    pair.reply(&format!(
        r#"{{"jsonrpc":"2.0","id":{},"result":{{"protocolVersion":"2025-11-25","capabilities":{{"tools":{{}}}},"serverInfo":{{"name":"fs","version":"1"}}}}}}"#,
        pair.last_id()
    ));
    pair.finished(op).unwrap();
    assert_eq!(pair.sent.last().map(String::as_str), Some(INITIALIZED));
    pair.sent.clear();
    (pair, initialize["params"]["capabilities"].clone())
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
    let (mut pair, capabilities) = connected(config(None));
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
    let (mut pair, capabilities) = connected(config(Some(vec![project()])));
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
    let (mut pair, _) = connected(config);
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

#[test]
fn a_2026_session_declares_no_roots_and_announces_no_change() {
    let mut config = config(Some(vec![project()]));
    config.protocol = ProtocolChoice::Stateless;
    let mut pair = Pair::new(config);
    let op = pair.client.connect(pair.now).unwrap();
    pair.drain();
    assert_eq!(
        pair.last_sent()["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"],
        json!({})
    );
    pair.reply(r#"{"jsonrpc":"2.0","id":1,"result":{"supportedVersions":["2026-07-28"],"capabilities":{"tools":{}}}}"#);
    pair.finished(op).unwrap();
    pair.sent.clear();
    pair.client.set_roots(Vec::new()).unwrap();
    pair.drain();
    assert!(pair.sent.is_empty(), "{:?}", pair.sent);
}

#[test]
fn a_failed_connection_takes_no_roots() {
    let (mut pair, _) = connected(config(Some(vec![project()])));
    pair.reply("not json");
    assert!(pair.client.is_failed());
    assert_eq!(
        pair.client.set_roots(Vec::new()),
        Err(Misuse::ConnectionFailed)
    );
}
