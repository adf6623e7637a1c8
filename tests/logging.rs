//! Asking a server for its log messages at a level (`Client::set_log_level`): with
//! `logging/setLevel` in the handshake revisions, where the server must have declared
//! `logging`; in 2026-07-28, which has no such request, with the level in every later
//! request's `_meta`. And what a log message's level must be to be read as one.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

mod common;

use common::{text_reply, Pair, TOOLS};
use mcp_sansio::{
    Error, ErrorCode, Event, Limits, LogLevel, Misuse, ProtocolChoice, ProtocolVersion, RawJson,
    ServerNotification,
};
use serde_json::{json, Value};

const LOGGING: &str = r#"{"tools":{},"logging":{}}"#;

fn legacy(capabilities: &str) -> Pair {
    let mut pair = Pair::connected_legacy(&["word_count"], capabilities);
    pair.list(TOOLS);
    pair
}

fn stateless() -> Pair {
    let config = Pair::config(ProtocolChoice::Stateless, &["word_count"]);
    let (mut pair, _) = Pair::connected_stateless(config);
    pair.sent.clear();
    pair
}

/// The `_meta` of the request the client wrote last.
fn last_meta(pair: &Pair) -> Value {
    pair.last_sent()["params"]["_meta"].clone()
}

/// What the log notifications among `events` say, as `level data`.
fn logged(events: &[Event]) -> Vec<String> {
    events
        .iter()
        .filter_map(|event| match event {
            Event::Notification(ServerNotification::Log { level, data, .. }) => {
                Some(format!("{level} {data}"))
            }
            _ => None,
        })
        .collect()
}

#[test]
fn in_a_handshake_revision_the_level_is_asked_with_set_level_and_the_servers_yes_ends_it() {
    let mut pair = legacy(LOGGING);
    let op = pair
        .client
        .set_log_level(LogLevel::Warning, pair.now)
        .unwrap();
    pair.drain();
    let id = pair.last_id();
    assert_eq!(
        pair.last_sent(),
        json!({"jsonrpc": "2.0", "id": id, "method": "logging/setLevel",
               "params": {"level": "warning"}})
    );
    assert!(pair.client.is_pending(op));
    pair.reply(&format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{{}}}}"#));
    assert_eq!(pair.finished(op), Ok(()));
    pair.reply(r#"{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"error","logger":"db","data":"disk full"}}"#);
    assert_eq!(
        pair.events,
        [Event::Notification(ServerNotification::Log {
            level: LogLevel::Error,
            logger: Some("db".into()),
            data: RawJson::parse(r#""disk full""#, &Limits::default()).unwrap(),
        })]
    );
    // The handshake revisions have no per-request level: a call carries no `_meta`.
    let _ = pair.call("word_count", r#"{"text":"a"}"#);
    assert!(pair.last_sent()["params"].get("_meta").is_none());
}

#[test]
fn a_server_that_did_not_declare_logging_is_not_asked_and_nothing_is_sent() {
    let mut pair = legacy(r#"{"tools":{}}"#);
    assert_eq!(
        pair.client
            .set_log_level(LogLevel::Debug, pair.now)
            .map(|op| op.id()),
        Err(Misuse::CapabilityNotOffered {
            capability: "logging"
        })
    );
    pair.drain();
    assert!(pair.sent.is_empty(), "{:?}", pair.sent);
    assert!(pair.events.is_empty(), "{:?}", pair.events);
}

#[test]
fn a_refusal_or_silence_ends_the_request_as_the_servers_fault_and_the_session_goes_on() {
    let mut pair = legacy(LOGGING);
    let refused = pair.client.set_log_level(LogLevel::Info, pair.now).unwrap();
    pair.drain();
    let id = pair.last_id();
    pair.reply(&format!(
        r#"{{"jsonrpc":"2.0","id":{id},"error":{{"code":-32602,"message":"Invalid level"}}}}"#
    ));
    match pair.finished(refused) {
        Err(Error::Rpc(error)) => assert_eq!(error.code, ErrorCode::INVALID_PARAMS),
        other => panic!("{other:?}"),
    }
    // Unanswered, it times out as any request does, and is cancelled with the server.
    let silent = pair.client.set_log_level(LogLevel::Info, pair.now).unwrap();
    pair.drain();
    let id = pair.last_id();
    pair.jump_to_next_timeout();
    assert!(matches!(
        pair.finished(silent),
        Err(Error::Timeout { operation, .. }) if operation == "logging/setLevel"
    ));
    assert_eq!(
        pair.last_sent(),
        json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
               "params": {"requestId": id, "reason": "the logging/setLevel operation did not finish before its deadline"}})
    );
    let (call, id) = pair.call("word_count", r#"{"text":"a b"}"#);
    pair.reply(&text_reply(id, "2"));
    assert_eq!(pair.finished(call).unwrap().text(), "2");
}

#[test]
fn in_2026_07_28_every_later_request_carries_the_level_and_nothing_is_sent_for_it() {
    let mut pair = stateless();
    let _ = pair.call("word_count", r#"{"text":"a"}"#);
    assert!(
        last_meta(&pair)
            .get("io.modelcontextprotocol/logLevel")
            .is_none(),
        "no level unless asked: {}",
        last_meta(&pair)
    );
    let before = pair.sent.len();
    let op = pair.client.set_log_level(LogLevel::Info, pair.now).unwrap();
    assert!(!pair.client.is_pending(op), "it ends as it is made");
    pair.drain();
    assert_eq!(pair.sent.len(), before, "no request: {:?}", pair.sent);
    assert_eq!(pair.finished(op), Ok(()));

    let _ = pair.call("word_count", r#"{"text":"a"}"#);
    let meta = last_meta(&pair);
    assert_eq!(meta["io.modelcontextprotocol/logLevel"], "info");
    assert_eq!(
        meta["io.modelcontextprotocol/protocolVersion"],
        "2026-07-28"
    );
    assert_eq!(
        meta["io.modelcontextprotocol/clientInfo"],
        json!({"name": "test-client", "version": "1.0"})
    );
    let _listing = pair.client.list_tools(pair.now).unwrap();
    pair.drain();
    assert_eq!(last_meta(&pair)["io.modelcontextprotocol/logLevel"], "info");

    // A later level replaces it.
    let op = pair
        .client
        .set_log_level(LogLevel::Critical, pair.now)
        .unwrap();
    pair.drain();
    assert_eq!(pair.finished(op), Ok(()));
    let _ = pair.call("word_count", r#"{"text":"a"}"#);
    let meta = last_meta(&pair);
    assert_eq!(meta["io.modelcontextprotocol/logLevel"], "critical");
    assert_eq!(meta.as_object().unwrap().len(), 4, "{meta}");
}

/// A 2025-06-18 client configured to ask for `notice`, connected to a server declaring
/// `capabilities`; the frames it wrote from the handshake on.
fn configured(capabilities: &str) -> Pair {
    let mut config = Pair::config(
        ProtocolChoice::Pinned(ProtocolVersion::V2025_06_18),
        &["word_count"],
    );
    config.log_level = Some(LogLevel::Notice);
    Pair::handshake_2025_06_18(config, capabilities)
}

/// `Config::log_level`: asked right after the handshake, where the server declared
/// `logging`; the answer, a yes or a refusal, is the client's own and no event.
#[test]
fn a_configured_level_is_asked_after_the_handshake_and_its_answer_is_no_event() {
    let mut pair = configured(LOGGING);
    let methods: Vec<Value> = pair
        .sent
        .iter()
        .map(|frame| serde_json::from_str::<Value>(frame).unwrap()["method"].clone())
        .collect();
    assert_eq!(
        methods,
        [
            "initialize",
            "notifications/initialized",
            "logging/setLevel"
        ]
    );
    assert_eq!(pair.last_sent()["params"], json!({"level": "notice"}));
    let id = pair.last_id();
    pair.reply(&format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{{}}}}"#));
    assert!(pair.events.is_empty(), "{:?}", pair.events);
    pair.list(TOOLS);
    let (call, call_id) = pair.call("word_count", r#"{"text":"a b"}"#);
    pair.reply(&text_reply(call_id, "2"));
    assert_eq!(pair.finished(call).unwrap().text(), "2");

    // It takes no room of the application's: with room for one request, one may start.
    let mut config = Pair::config(
        ProtocolChoice::Pinned(ProtocolVersion::V2025_06_18),
        &["word_count"],
    );
    config.log_level = Some(LogLevel::Notice);
    config.limits.requests_in_flight = 1;
    let mut narrow = Pair::handshake_2025_06_18(config, LOGGING);
    assert_eq!(narrow.last_sent()["method"], "logging/setLevel");
    let listing = narrow.client.list_tools(narrow.now).map(|op| op.id());
    assert!(listing.is_ok(), "{listing:?}");
    assert!(matches!(
        narrow.client.list_tools(narrow.now).map(|op| op.id()),
        Err(Misuse::TooManyInFlight { limit: 1 })
    ));

    // Refused, or never answered: the session goes on, no event.
    let mut pair = configured(LOGGING);
    let id = pair.last_id();
    pair.reply(&format!(
        r#"{{"jsonrpc":"2.0","id":{id},"error":{{"code":-32602,"message":"Invalid level"}}}}"#
    ));
    assert!(pair.events.is_empty(), "{:?}", pair.events);
    let mut pair = configured(LOGGING);
    pair.jump_to_next_timeout();
    assert!(pair.events.is_empty(), "{:?}", pair.events);
    assert_eq!(pair.last_sent()["method"], "notifications/cancelled");
    assert!(!pair.client.is_failed());

    // Cut short by the connection's failure, it ends with no event of its own.
    let mut pair = configured(LOGGING);
    pair.reply("not json");
    assert!(
        matches!(pair.events[..], [Event::Failed(_)]),
        "{:?}",
        pair.events
    );

    // A server that declared no logging is not asked.
    let pair = configured(r#"{"tools":{}}"#);
    assert_eq!(pair.sent.len(), 2, "{:?}", pair.sent);
}

/// In 2026-07-28 the configured level goes with every request from the first after the
/// discovery, which asks for no log messages.
#[test]
fn in_2026_07_28_a_configured_level_goes_with_every_request_after_the_discovery() {
    let mut config = Pair::config(ProtocolChoice::Stateless, &["word_count"]);
    config.log_level = Some(LogLevel::Debug);
    let mut pair = Pair::new(config);
    let op = pair.client.connect(pair.now).unwrap();
    pair.drain();
    assert_eq!(pair.last_sent()["method"], "server/discover");
    assert_eq!(
        last_meta(&pair).get("io.modelcontextprotocol/logLevel"),
        None
    );
    pair.reply(r#"{"jsonrpc":"2.0","id":1,"result":{"supportedVersions":["2026-07-28"],"capabilities":{"tools":{}}}}"#);
    pair.finished(op).unwrap();
    let _listing = pair.client.list_tools(pair.now).unwrap();
    pair.drain();
    assert_eq!(pair.last_sent()["method"], "tools/list");
    assert_eq!(
        last_meta(&pair)["io.modelcontextprotocol/logLevel"],
        "debug"
    );
}

#[test]
fn in_2026_07_28_a_full_request_table_does_not_stop_it_as_it_sends_nothing() {
    let mut limits = Limits::default();
    limits.requests_in_flight = 1;
    let mut config = Pair::config(ProtocolChoice::Stateless, &["word_count"]);
    config.limits = limits;
    let (mut pair, _) = Pair::connected_stateless(config);
    let _ = pair.call("word_count", r#"{"text":"a"}"#);
    let op = pair
        .client
        .set_log_level(LogLevel::Debug, pair.now)
        .unwrap();
    pair.drain();
    assert_eq!(pair.finished(op), Ok(()));

    let mut limits = Limits::default();
    limits.requests_in_flight = 1;
    let mut pair = Pair::connected_legacy_within(&["word_count"], LOGGING, limits);
    let _listing = pair.client.list_tools(pair.now).unwrap();
    assert_eq!(
        pair.client
            .set_log_level(LogLevel::Debug, pair.now)
            .map(|op| op.id()),
        Err(Misuse::TooManyInFlight { limit: 1 })
    );
}

#[test]
fn before_the_handshake_and_after_a_failure_it_is_refused() {
    let mut pair = Pair::new(Pair::config(ProtocolChoice::Auto, &[]));
    assert_eq!(
        pair.client
            .set_log_level(LogLevel::Info, pair.now)
            .map(|op| op.id()),
        Err(Misuse::NotConnected)
    );
    let mut pair = stateless();
    pair.reply(r#"{"jsonrpc":"2.0","id":true,"result":{}}"#);
    assert!(pair.events.iter().any(|e| matches!(e, Event::Failed(_))));
    assert_eq!(
        pair.client
            .set_log_level(LogLevel::Info, pair.now)
            .map(|op| op.id()),
        Err(Misuse::ConnectionFailed)
    );
}

#[test]
fn a_log_message_whose_level_is_none_of_the_eight_is_kept_whole_not_read_as_a_log() {
    let mut pair = legacy(LOGGING);
    for level in [
        r#""warning""#,
        r#""WARNING""#,
        r#""warn""#,
        r#""verbose""#,
        "3",
        "null",
    ] {
        pair.reply(&format!(
            r#"{{"jsonrpc":"2.0","method":"notifications/message","params":{{"level":{level},"data":"x"}}}}"#
        ));
    }
    pair.reply(r#"{"jsonrpc":"2.0","method":"notifications/message","params":{"data":"x"}}"#);
    assert_eq!(logged(&pair.events), [r#"warning "x""#]);
    let kept = pair
        .events
        .iter()
        .filter(|e| matches!(e, Event::Notification(ServerNotification::Other(n)) if n.method == "notifications/message"))
        .count();
    assert_eq!(kept, 6, "{:?}", pair.events);
}
