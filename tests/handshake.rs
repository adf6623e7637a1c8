//! The handshake in each era, as golden transcripts of the exact frames the client writes,
//! and every way it can end.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

mod common;

use common::Pair;
use mcp_sansio::{Error, Event, Incompatible, ProtocolChoice, ProtocolVersion, RpcError};

const INITIALIZE_06_18: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"test-client","version":"1.0"}}}"#;
const INITIALIZED: &str = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
const DISCOVER: &str = r#"{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"test-client","version":"1.0"}}}}"#;
const INITIALIZE_11_25_AS_2: &str = r#"{"jsonrpc":"2.0","id":2,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"test-client","version":"1.0"}}}"#;
const DISCOVER_RESULT: &str = r#"{"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","supportedVersions":["2026-07-28"],"capabilities":{"tools":{}},"ttlMs":60000,"cacheScope":"public","_meta":{"io.modelcontextprotocol/serverInfo":{"name":"modern","version":"2"}}}}"#;

fn legacy_result(id: i64, version: &str) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","id":{id},"result":{{"protocolVersion":"{version}","capabilities":{{"tools":{{}}}},"serverInfo":{{"name":"legacy","version":"1"}}}}}}"#
    )
}

#[test]
fn legacy_golden_transcript() {
    let mut pair = Pair::new(Pair::config(
        ProtocolChoice::Pinned(ProtocolVersion::V2025_06_18),
        &[],
    ));
    let op = pair.client.connect(pair.now).unwrap();
    pair.drain();
    assert_eq!(pair.sent, [INITIALIZE_06_18]);
    pair.reply(&legacy_result(1, "2025-06-18"));
    assert_eq!(pair.sent, [INITIALIZE_06_18, INITIALIZED]);
    let c = pair.finished(op).unwrap();
    assert_eq!(c.version, ProtocolVersion::V2025_06_18);
    assert!(c.capabilities.tools);
    assert_eq!(c.server_info.unwrap().name, "legacy");
    assert_eq!(
        pair.client.poll_timeout(),
        None,
        "nothing waits after the handshake"
    );
}

#[test]
fn modern_golden_transcript_and_meta_on_every_request() {
    let mut pair = Pair::new(Pair::config(ProtocolChoice::Stateless, &["word_count"]));
    let op = pair.client.connect(pair.now).unwrap();
    pair.drain();
    assert_eq!(pair.sent, [DISCOVER]);
    pair.reply(DISCOVER_RESULT);
    assert_eq!(
        pair.sent,
        [DISCOVER],
        "the stateless revision sends no initialized"
    );
    let c = pair.finished(op).unwrap();
    assert_eq!(c.version, ProtocolVersion::V2026_07_28);
    assert_eq!(c.server_info.unwrap().name, "modern");
    let cache = c.cache.unwrap();
    assert_eq!(
        (cache.ttl_ms, cache.scope),
        (60_000, mcp_sansio::CacheScope::Public)
    );

    let _ = pair.client.list_tools(pair.now).unwrap();
    pair.drain();
    assert_eq!(
        pair.sent.last().unwrap(),
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"test-client","version":"1.0"}}}}"#
    );
}

#[test]
fn auto_falls_back_on_an_error_of_any_legacy_kind() {
    for code in [-32601, -32602, -32600, -32603, -32000] {
        let mut pair = Pair::new(Pair::config(ProtocolChoice::Auto, &[]));
        let op = pair.client.connect(pair.now).unwrap();
        pair.drain();
        assert_eq!(pair.sent, [DISCOVER]);
        pair.reply(&format!(
            r#"{{"jsonrpc":"2.0","id":1,"error":{{"code":{code},"message":"no"}}}}"#
        ));
        assert_eq!(pair.sent, [DISCOVER, INITIALIZE_11_25_AS_2], "code {code}");
        pair.reply(&legacy_result(2, "2025-11-25"));
        assert_eq!(pair.sent.last().unwrap(), INITIALIZED);
        let c = pair.finished(op).unwrap();
        assert_eq!(c.version, ProtocolVersion::V2025_11_25);
    }
}

#[test]
fn auto_falls_back_on_silence_and_ignores_the_late_probe_answer() {
    let mut pair = Pair::new(Pair::config(ProtocolChoice::Auto, &[]));
    let op = pair.client.connect(pair.now).unwrap();
    pair.drain();
    let started = pair.now;
    // The probe deadline comes first, and is at most 2 s.
    pair.jump_to_next_timeout();
    assert_eq!(
        pair.now.saturating_duration_since(started).as_millis(),
        2_000
    );
    assert_eq!(
        pair.sent,
        [DISCOVER, INITIALIZE_11_25_AS_2],
        "no cancel before initialize"
    );
    // The probe's answer arrives late: ignored, not bound, not reported.
    pair.reply(r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"Method not found"}}"#);
    assert!(pair.events.is_empty(), "{:?}", pair.events);
    pair.reply(&legacy_result(2, "2025-06-18"));
    let c = pair.finished(op).unwrap();
    assert_eq!(c.version, ProtocolVersion::V2025_06_18);
}

#[test]
fn a_modern_server_that_answered_the_probe_too_late_is_discovered_again() {
    let mut pair = Pair::new(Pair::config(ProtocolChoice::Auto, &[]));
    let op = pair.client.connect(pair.now).unwrap();
    pair.drain();
    pair.jump_to_next_timeout();
    assert_eq!(pair.sent, [DISCOVER, INITIALIZE_11_25_AS_2]);
    // The probe's answer comes late, and the server, now serving 2026-07-28 on this
    // connection, refuses initialize naming what it takes.
    pair.reply(DISCOVER_RESULT);
    pair.reply(r#"{"jsonrpc":"2.0","id":2,"error":{"code":-32022,"message":"connection is serving the 2026-07-28 protocol","data":{"supported":["2026-07-28"],"requested":"2025-11-25"}}}"#);
    let discover_again = pair.sent.last().unwrap().clone();
    assert!(
        discover_again.contains(r#""id":3,"method":"server/discover""#),
        "{discover_again}"
    );
    pair.reply(&DISCOVER_RESULT.replace("\"id\":1", "\"id\":3"));
    let c = pair.finished(op).unwrap();
    assert_eq!(c.version, ProtocolVersion::V2026_07_28);

    // A stateful-only choice, refused the same way, fails instead of asking again.
    let mut pair = Pair::new(Pair::config(ProtocolChoice::Stateful, &[]));
    let op = pair.client.connect(pair.now).unwrap();
    pair.drain();
    pair.reply(r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32022,"message":"no","data":{"supported":["2026-07-28"]}}}"#);
    assert!(matches!(pair.finished(op), Err(Error::Rpc(_))));
    assert_eq!(pair.sent.len(), 1);
}

#[test]
fn the_probe_never_takes_the_whole_handshake_deadline() {
    let mut config = Pair::config(ProtocolChoice::Auto, &[]);
    config.limits.operation_timeout = core::time::Duration::from_secs(1);
    config.probe_timeout = core::time::Duration::from_secs(10);
    let mut pair = Pair::new(config);
    let op = pair.client.connect(pair.now).unwrap();
    pair.drain();
    pair.jump_to_next_timeout();
    assert_eq!(pair.sent.len(), 2, "fell back after half the deadline");
    pair.jump_to_next_timeout();
    assert_eq!(
        pair.finished(op),
        Err(Error::Timeout {
            operation: "handshake"
        })
    );
    assert_eq!(pair.sent.len(), 2, "initialize is never cancelled");
}

#[test]
fn auto_connects_to_a_modern_server_through_the_probe() {
    let mut pair = Pair::new(Pair::config(ProtocolChoice::Auto, &[]));
    let op = pair.client.connect(pair.now).unwrap();
    pair.drain();
    pair.reply(DISCOVER_RESULT);
    let c = pair.finished(op).unwrap();
    assert_eq!(c.version, ProtocolVersion::V2026_07_28);
    assert_eq!(pair.sent, [DISCOVER]);
}

#[test]
fn unsupported_version_leads_to_a_version_both_speak_or_a_clear_refusal() {
    let unsupported = r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32022,"message":"Unsupported protocol version","data":{"supported":["2025-11-25"],"requested":"2026-07-28"}}}"#;
    let mut pair = Pair::new(Pair::config(ProtocolChoice::Auto, &[]));
    let op = pair.client.connect(pair.now).unwrap();
    pair.drain();
    pair.reply(unsupported);
    assert_eq!(pair.sent, [DISCOVER, INITIALIZE_11_25_AS_2]);
    pair.reply(&legacy_result(2, "2025-11-25"));
    pair.finished(op).unwrap();

    let mut pair = Pair::new(Pair::config(ProtocolChoice::Stateless, &[]));
    let op = pair.client.connect(pair.now).unwrap();
    pair.drain();
    pair.reply(unsupported);
    assert_eq!(
        pair.finished(op),
        Err(Error::Incompatible(Incompatible::NoCommonVersion {
            supported: vec!["2025-11-25".into()]
        }))
    );
    assert_eq!(pair.sent, [DISCOVER], "nothing else is sent");
    assert!(matches!(pair.events.last(), Some(Event::Failed(_))));
    assert!(pair.client.list_tools(pair.now).is_err());
}

#[test]
fn a_discovery_that_names_other_revisions_or_is_not_understood_is_read_by_the_choice() {
    // A discovery result whose supportedVersions leaves out the revision asked for: under
    // Auto the handshake revision it names follows; pinned to 2026-07-28 (or Stateless),
    // nothing follows, and the failure lists what the server takes.
    let elsewhere = r#"{"jsonrpc":"2.0","id":1,"result":{"supportedVersions":["2025-11-25","2031-01-01"],"capabilities":{}}}"#;
    let mut pair = Pair::new(Pair::config(ProtocolChoice::Auto, &[]));
    let op = pair.client.connect(pair.now).unwrap();
    pair.drain();
    pair.reply(elsewhere);
    assert_eq!(pair.sent, [DISCOVER, INITIALIZE_11_25_AS_2]);
    pair.reply(&legacy_result(2, "2025-11-25"));
    assert_eq!(
        pair.finished(op).unwrap().version,
        ProtocolVersion::V2025_11_25
    );
    for choice in [
        ProtocolChoice::Stateless,
        ProtocolChoice::Pinned(ProtocolVersion::V2026_07_28),
    ] {
        let mut pair = Pair::new(Pair::config(choice, &[]));
        let op = pair.client.connect(pair.now).unwrap();
        pair.drain();
        assert_eq!(pair.sent, [DISCOVER]);
        pair.reply(elsewhere);
        assert_eq!(
            pair.finished(op),
            Err(Error::Incompatible(Incompatible::NoCommonVersion {
                supported: vec!["2025-11-25".into(), "2031-01-01".into()]
            }))
        );
        assert_eq!(pair.sent, [DISCOVER], "nothing else is sent");
    }
    // An error outside the 2026-07-28 range when only that revision will do: a server of
    // the handshake revisions, which is incompatible, not a failed request.
    let mut pair = Pair::new(Pair::config(ProtocolChoice::Stateless, &[]));
    let op = pair.client.connect(pair.now).unwrap();
    pair.drain();
    pair.reply(r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"Method not found"}}"#);
    let Err(Error::Incompatible(Incompatible::NotStateless { error })) = pair.finished(op) else {
        panic!("not read as a server of the handshake revisions");
    };
    assert_eq!(
        (error.code.0, error.message.as_str()),
        (-32601, "Method not found")
    );
    assert_eq!(pair.sent, [DISCOVER]);
}

#[test]
fn a_modern_refusal_does_not_fall_back() {
    let mut pair = Pair::new(Pair::config(ProtocolChoice::Auto, &[]));
    let op = pair.client.connect(pair.now).unwrap();
    pair.drain();
    pair.reply(
        r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32021,"message":"Missing capability"}}"#,
    );
    assert!(
        matches!(pair.finished(op), Err(Error::Rpc(RpcError { code, .. })) if code.0 == -32021)
    );
    assert_eq!(pair.sent, [DISCOVER]);
}

#[test]
fn a_version_we_do_not_speak_stops_the_handshake_before_anything_else_is_sent() {
    for (choice, offered) in [
        (
            ProtocolChoice::Pinned(ProtocolVersion::V2025_06_18),
            "2024-11-05",
        ),
        (ProtocolChoice::Stateful, "2024-10-07"),
        (
            ProtocolChoice::Pinned(ProtocolVersion::V2025_06_18),
            "2025-11-25",
        ),
        (ProtocolChoice::Stateful, "2026-07-28"),
        (ProtocolChoice::Stateful, ""),
    ] {
        let mut pair = Pair::new(Pair::config(choice, &[]));
        let op = pair.client.connect(pair.now).unwrap();
        pair.drain();
        pair.reply(&legacy_result(1, offered));
        assert_eq!(
            pair.finished(op),
            Err(Error::Incompatible(Incompatible::UnsupportedVersion {
                offered: offered.into()
            }))
        );
        assert_eq!(
            pair.sent.len(),
            1,
            "no initialized after a refused version: {:?}",
            pair.sent
        );
    }
}

/// A server built before 2025-06-18 answers `initialize` with its own revision: refused by
/// default, as the seeds' checkpoint asks, and spoken once the application accepts revisions
/// that old. The client still offers its newest, and lists and calls as in any session.
#[test]
fn the_oldest_revisions_are_spoken_only_where_the_application_accepts_them() {
    for (offered, version) in [
        ("2024-11-05", ProtocolVersion::V2024_11_05),
        ("2025-03-26", ProtocolVersion::V2025_03_26),
    ] {
        for oldest in [None, Some(ProtocolVersion::V2024_11_05)] {
            let mut config = Pair::config(ProtocolChoice::Stateful, &["word_count"]);
            if let Some(oldest) = oldest {
                config.oldest_version = oldest;
            }
            let mut pair = Pair::new(config);
            let op = pair.client.connect(pair.now).unwrap();
            pair.drain();
            assert_eq!(pair.last_sent()["params"]["protocolVersion"], "2025-11-25");
            pair.reply(&legacy_result(1, offered));
            let connected = pair.finished(op);
            if oldest.is_none() {
                assert_eq!(
                    connected,
                    Err(Error::Incompatible(Incompatible::UnsupportedVersion {
                        offered: offered.into()
                    }))
                );
                assert_eq!(pair.sent.len(), 1, "{offered}: {:?}", pair.sent);
                continue;
            }
            assert_eq!(connected.unwrap().version, version);
            assert_eq!(pair.sent.last().map(String::as_str), Some(INITIALIZED));
            pair.sent.clear();
            pair.list(common::TOOLS);
            let (op, id) = pair.call("word_count", r#"{"text":"a b"}"#);
            pair.reply(&common::text_reply(id, "2 words"));
            assert_eq!(pair.finished(op).unwrap().text(), "2 words");
        }
    }
    // A pin is the application's word too, whatever the oldest accepted.
    let mut pair = Pair::new(Pair::config(
        ProtocolChoice::Pinned(ProtocolVersion::V2024_11_05),
        &[],
    ));
    let op = pair.client.connect(pair.now).unwrap();
    pair.drain();
    assert_eq!(pair.last_sent()["params"]["protocolVersion"], "2024-11-05");
    pair.reply(&legacy_result(1, "2024-11-05"));
    assert_eq!(
        pair.finished(op).unwrap().version,
        ProtocolVersion::V2024_11_05
    );
}

#[test]
fn a_modern_result_that_needs_input_is_refused_with_a_typed_error() {
    let mut pair = Pair::new(Pair::config(ProtocolChoice::Stateless, &[]));
    let op = pair.client.connect(pair.now).unwrap();
    pair.drain();
    pair.reply(
        r#"{"jsonrpc":"2.0","id":1,"result":{"resultType":"input_required","inputRequests":{}}}"#,
    );
    assert_eq!(
        pair.finished(op),
        Err(Error::Incompatible(Incompatible::InputRequired))
    );
}

#[test]
fn a_server_ping_during_the_handshake_is_answered_and_the_handshake_goes_on() {
    let mut pair = Pair::new(Pair::config(ProtocolChoice::Stateful, &[]));
    let op = pair.client.connect(pair.now).unwrap();
    pair.drain();
    pair.reply(r#"{"jsonrpc":"2.0","id":"s1","method":"ping"}"#);
    assert_eq!(
        pair.sent.last().unwrap(),
        r#"{"jsonrpc":"2.0","id":"s1","result":{}}"#
    );
    pair.reply(&legacy_result(1, "2025-11-25"));
    pair.finished(op).unwrap();
}

#[test]
fn only_a_2026_server_that_declared_tool_changes_needs_a_subscription_to_tell_them() {
    let connect = |choice: ProtocolChoice, tools: &str| {
        let mut pair = Pair::new(Pair::config(choice, &[]));
        let op = pair.client.connect(pair.now).unwrap();
        pair.drain();
        pair.reply(&match choice {
            ProtocolChoice::Stateless => format!(
                r#"{{"jsonrpc":"2.0","id":1,"result":{{"supportedVersions":["2026-07-28"],"capabilities":{{"tools":{tools}}}}}}}"#
            ),
            _ => format!(
                r#"{{"jsonrpc":"2.0","id":1,"result":{{"protocolVersion":"2025-11-25","capabilities":{{"tools":{tools}}},"serverInfo":{{"name":"legacy","version":"1"}}}}}}"#
            ),
        });
        pair.finished(op).unwrap()
    };
    let stateful = ProtocolChoice::Pinned(ProtocolVersion::V2025_11_25);
    let told = r#"{"listChanged":true}"#;
    assert!(connect(ProtocolChoice::Stateless, told).tool_changes_need_subscription());
    assert!(!connect(ProtocolChoice::Stateless, "{}").tool_changes_need_subscription());
    assert!(
        !connect(stateful, told).tool_changes_need_subscription(),
        "a 2025 server tells of changes unasked"
    );
    assert!(!connect(stateful, "{}").tool_changes_need_subscription());
}
