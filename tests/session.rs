//! The session after the handshake: exact id binding, deadlines and late answers, the
//! notification cap, server requests, catalogs and pagination, the allowlist, typed results.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

mod common;

use common::{text_reply, Pair, TOOLS};
use mcp_sansio::{
    CacheHint, CacheScope, CallOptions, CatalogPolicy, ContentBlock, Error, ErrorCode, Event,
    Limits, ListKind, Misuse, ProtocolChoice, ProtocolViolation, RequestId, ResourceBody,
    ServerNotification, ToolRejection,
};

const TOOLS_ONLY: &str = r#"{"tools":{}}"#;

fn ready() -> Pair {
    let mut pair = Pair::connected_legacy(&["word_count"], TOOLS_ONLY);
    pair.list(TOOLS);
    pair
}

#[test]
fn an_allowed_advertised_call_gets_its_own_result() {
    let mut pair = ready();
    let (op, id) = pair.call("word_count", r#"{"text":"vanilla stock needs review"}"#);
    assert_eq!(
        pair.sent,
        [format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"word_count","arguments":{{"text":"vanilla stock needs review"}}}}}}"#
        )]
    );
    pair.reply(&text_reply(id, "4"));
    let result = pair.finished(op).unwrap();
    assert_eq!(result.text(), "4");
    assert!(!result.is_error);
}

#[test]
fn the_allowlist_and_the_catalog_refuse_before_a_byte_is_sent() {
    let mut pair = ready();
    let args = mcp_sansio::RawObject::empty();
    assert_eq!(
        pair.client.call_tool("place_purchase", &args, pair.now),
        Err(Misuse::ToolNotAllowed {
            name: "place_purchase".into()
        })
    );
    assert_eq!(
        pair.client.call_tool("Word_Count", &args, pair.now),
        Err(Misuse::ToolNotAllowed {
            name: "Word_Count".into()
        })
    );
    pair.drain();
    assert!(pair.sent.is_empty(), "a refused call sent {:?}", pair.sent);

    // Allowed but not advertised: still refused.
    let mut pair = Pair::connected_legacy(&["delete_everything"], TOOLS_ONLY);
    pair.list(TOOLS);
    assert_eq!(
        pair.client.call_tool("delete_everything", &args, pair.now),
        Err(Misuse::ToolNotAdvertised {
            name: "delete_everything".into()
        })
    );
    // Before any listing, nothing is advertised.
    let mut pair = Pair::connected_legacy(&["word_count"], TOOLS_ONLY);
    assert!(matches!(
        pair.client.call_tool("word_count", &args, pair.now),
        Err(Misuse::ToolNotAdvertised { .. })
    ));
    pair.drain();
    assert!(pair.sent.is_empty());
}

#[test]
fn a_server_without_tools_gets_no_tool_requests() {
    let mut pair = Pair::connected_legacy(&["word_count"], r#"{"resources":{}}"#);
    assert_eq!(
        pair.client.list_tools(pair.now),
        Err(Misuse::CapabilityNotOffered {
            capability: "tools"
        })
    );
    assert_eq!(
        pair.client.list_prompts(pair.now),
        Err(Misuse::CapabilityNotOffered {
            capability: "prompts"
        })
    );
    pair.drain();
    assert!(pair.sent.is_empty());
}

#[test]
fn commands_before_the_handshake_are_refused() {
    let mut pair = Pair::new(Pair::config(ProtocolChoice::Auto, &["word_count"]));
    assert_eq!(pair.client.list_tools(pair.now), Err(Misuse::NotConnected));
    let _ = pair.client.connect(pair.now).unwrap();
    assert_eq!(
        pair.client.connect(pair.now),
        Err(Misuse::AlreadyConnecting)
    );
}

#[test]
fn calls_in_flight_answered_in_reverse_bind_to_their_own_requests() {
    let mut pair = ready();
    let (first, id1) = pair.call("word_count", r#"{"text":"one"}"#);
    let (second, id2) = pair.call("word_count", r#"{"text":"one two"}"#);
    assert_ne!(id1, id2);
    assert_eq!(pair.client.in_flight(), 2);
    pair.reply(&text_reply(id2, "2"));
    pair.reply(&text_reply(id1, "1"));
    let r1 = pair.finished(first).unwrap();
    let r2 = pair.finished(second).unwrap();
    assert_eq!((&*r1.text(), &*r2.text()), ("1", "2"));
}

#[test]
fn only_the_exact_id_answers_a_request() {
    for (id, violation) in [
        ("true", None),
        (
            r#""3""#,
            Some(ProtocolViolation::UnknownResponseId {
                id: RequestId::from("3"),
            }),
        ),
        (
            "4",
            Some(ProtocolViolation::UnknownResponseId {
                id: RequestId::from(4),
            }),
        ),
        ("3.0", None),
    ] {
        let mut pair = ready();
        let (op, sent) = pair.call("word_count", r#"{"text":"x"}"#);
        assert_eq!(sent, 3);
        pair.reply(&format!(
            r#"{{"jsonrpc":"2.0","id":{id},"result":{{"content":[]}}}}"#
        ));
        let outcome = pair.finished(op);
        match violation {
            Some(v) => assert_eq!(outcome, Err(Error::Protocol(v)), "id {id}"),
            None => assert_eq!(
                outcome,
                Err(Error::Protocol(ProtocolViolation::InvalidId)),
                "id {id}"
            ),
        }
        assert!(
            matches!(pair.events.last(), Some(Event::Failed(_))),
            "id {id}"
        );
        assert!(pair.client.is_failed());
        assert_eq!(
            pair.client.list_tools(pair.now),
            Err(Misuse::ConnectionFailed)
        );
    }
}

#[test]
fn a_second_answer_to_the_same_request_breaks_the_connection() {
    let mut pair = ready();
    let (op, id) = pair.call("word_count", r#"{"text":"x"}"#);
    pair.reply(&text_reply(id, "1"));
    assert!(pair.finished(op).is_ok());
    pair.reply(&text_reply(id, "1"));
    assert_eq!(
        pair.events,
        [Event::Failed(Error::Protocol(
            ProtocolViolation::DuplicateResponse {
                id: RequestId::from(id)
            }
        ))]
    );
}

#[test]
fn a_deadline_fails_the_call_cancels_it_and_its_late_answer_binds_to_nothing() {
    let mut pair = ready();
    let (op, id) = pair.call("word_count", r#"{"text":"x"}"#);
    pair.sent.clear();
    pair.jump_to_next_timeout();
    assert_eq!(
        pair.finished(op),
        Err(Error::Timeout {
            operation: "tools/call"
        })
    );
    let cancel = pair.last_sent();
    assert_eq!(cancel["method"], "notifications/cancelled");
    assert_eq!(cancel["params"]["requestId"], id);
    // The late answer arrives while the next call waits: reported, and bound to nothing.
    let (next, id2) = pair.call("word_count", r#"{"text":"a b"}"#);
    pair.reply(&text_reply(id, "late"));
    assert_eq!(
        pair.events,
        [Event::LateResponse {
            id: RequestId::from(id)
        }]
    );
    pair.events.clear();
    pair.reply(&text_reply(id2, "2"));
    let r = pair.finished(next).unwrap();
    assert_eq!(r.text(), "2");
}

#[test]
fn one_deadline_covers_every_byte_of_an_answer_however_it_trickles() {
    let mut pair = ready();
    let (op, id) = pair.call("word_count", r#"{"text":"x"}"#);
    let reply = format!("{}\n", text_reply(id, "1"));
    let deadline = pair.client.poll_timeout().unwrap();
    // One byte every second: each read is fresh, but the deadline does not move.
    assert!(
        reply.len() > 30,
        "the trickle must outlast the 30 s deadline"
    );
    for byte in reply.as_bytes() {
        pair.advance(1_000);
        pair.feed(&[*byte]);
        if pair.has_finished(op) {
            break;
        }
    }
    assert!(pair.now >= deadline);
    assert_eq!(
        pair.finished(op),
        Err(Error::Timeout {
            operation: "tools/call"
        })
    );
}

#[test]
fn notifications_up_to_the_cap_are_events_and_one_more_fails_the_request() {
    let progress = r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":7,"progress":1,"total":2,"message":"half"}}"#;
    let mut pair = ready();
    let (op, id) = pair.call("word_count", r#"{"text":"x"}"#);
    let cap = mcp_sansio::Limits::default().notifications_before_answer;
    for _ in 0..cap {
        pair.reply(progress);
    }
    assert!(!pair.has_finished(op));
    assert_eq!(pair.events.len(), cap);
    assert_eq!(
        pair.events[0],
        Event::Notification(ServerNotification::Progress {
            token: mcp_sansio::RawJson::parse("7", &mcp_sansio::Limits::default()).unwrap(),
            progress: 1.0,
            total: Some(2.0),
            message: Some("half".into()),
        })
    );
    pair.reply(progress);
    assert_eq!(
        pair.finished(op),
        Err(Error::Protocol(ProtocolViolation::TooManyNotifications {
            limit: cap
        }))
    );
    // The connection goes on; the answer, if it comes, is late.
    pair.events.clear();
    pair.reply(&text_reply(id, "1"));
    assert_eq!(
        pair.events,
        [Event::LateResponse {
            id: RequestId::from(id)
        }]
    );
}

#[test]
fn server_requests_are_answered_and_the_waiting_call_goes_on() {
    let mut pair = ready();
    let (op, id) = pair.call("word_count", r#"{"text":"x"}"#);
    pair.reply(r#"{"jsonrpc":"2.0","id":90,"method":"ping"}"#);
    pair.reply(r#"{"jsonrpc":"2.0","id":91,"method":"sampling/createMessage","params":{}}"#);
    assert_eq!(pair.sent[1], r#"{"jsonrpc":"2.0","id":90,"result":{}}"#);
    assert_eq!(
        pair.sent[2],
        r#"{"jsonrpc":"2.0","id":91,"error":{"code":-32601,"message":"Method not found"}}"#
    );
    pair.reply(&text_reply(id, "1"));
    assert!(pair.finished(op).is_ok());
}

/// A server that reads nothing: the transport takes no frame, and `pings` requests arrive.
/// Returns how many arrived before the connection failed.
fn unread_pings(pair: &mut Pair, pings: usize) -> usize {
    for n in 0..pings {
        if pair.client.is_failed() {
            return n;
        }
        let ping = format!("{{\"jsonrpc\":\"2.0\",\"id\":\"p{n}\",\"method\":\"ping\"}}\n");
        pair.client.handle_input(ping.as_bytes(), pair.now);
    }
    pings
}

#[test]
fn answers_a_server_never_reads_stay_under_the_unsent_bound_then_fail_the_connection() {
    let mut limits = Limits::default();
    limits.unsent_bytes = 1024;
    let mut pair = Pair::connected_legacy_within(&["word_count"], TOOLS_ONLY, limits);
    pair.list(TOOLS);
    // Nothing waits for an answer, so no notification cap applies: each ping only queues
    // its answer (36 bytes or so), until the queue holds more than the bound.
    let arrived = unread_pings(&mut pair, 1000);
    let failure = Error::Protocol(ProtocolViolation::NotReading { limit: 1024 });
    pair.drain();
    assert_eq!(pair.events, [Event::Failed(failure)]);
    // Every ping but the last was answered; the answers passed the bound by one frame.
    assert_eq!(pair.sent.len() + 1, arrived);
    let queued: usize = pair.sent.iter().map(|frame| frame.len() + 1).sum();
    assert!(queued > 1024 && queued <= 1024 + 41, "{queued}");
    assert!(pair.sent.iter().all(|f| f.contains(r#""result":{}"#)));
    // Nothing more is queued or started.
    pair.sent.clear();
    let args = mcp_sansio::RawObject::empty();
    assert_eq!(
        pair.client.call_tool("word_count", &args, pair.now),
        Err(Misuse::ConnectionFailed)
    );
    pair.drain();
    assert!(pair.sent.is_empty());
}

#[test]
fn a_listing_whose_next_page_finds_the_queue_full_fails_with_the_unsent_bound() {
    let mut limits = Limits::default();
    limits.unsent_bytes = 1024;
    limits.notifications_before_answer = usize::MAX;
    let mut pair = Pair::connected_legacy_within(&["word_count"], TOOLS_ONLY, limits);
    let op = pair.client.list_tools(pair.now).unwrap();
    pair.drain();
    let id = pair.last_id();
    pair.sent.clear();
    // Twenty-six answers (40 or 41 bytes each) take the queue past the bound; only the
    // next frame queued finds out.
    assert_eq!(unread_pings(&mut pair, 26), 26);
    assert!(!pair.client.is_failed());
    // The first page names a second one; its request has no room.
    pair.reply(&page(id, &tool("word_count"), Some("2")));
    let failure = Error::Protocol(ProtocolViolation::NotReading { limit: 1024 });
    assert_eq!(pair.finished(op), Err(failure.clone()));
    assert_eq!(pair.events, [Event::Failed(failure)]);
    assert!(!pair.sent.iter().any(|f| f.contains("tools/list")));
}

#[test]
fn a_malformed_or_oversized_frame_fails_everything_in_flight() {
    let mut pair = ready();
    let (op, _) = pair.call("word_count", r#"{"text":"x"}"#);
    pair.reply("calling tool now");
    assert!(matches!(pair.finished(op), Err(Error::Malformed(_))));

    let mut config = Pair::config(ProtocolChoice::Stateful, &[]);
    config.limits = mcp_sansio::Limits::teaching();
    let mut pair = Pair::new(config);
    let op = pair.client.connect(pair.now).unwrap();
    pair.drain();
    pair.feed(&vec![b'x'; 70_000]);
    assert_eq!(
        pair.finished(op),
        Err(Error::Protocol(ProtocolViolation::FrameTooLong {
            limit: 65_536
        }))
    );
}

#[test]
fn a_closed_output_fails_what_waits() {
    let mut pair = ready();
    let (op, _) = pair.call("word_count", r#"{"text":"x"}"#);
    pair.client.handle_close();
    pair.drain();
    assert_eq!(pair.finished(op), Err(Error::Closed));
    assert_eq!(pair.events, [Event::Failed(Error::Closed)]);
}

#[test]
fn cancelling_ends_the_operation_and_tells_the_server() {
    let mut pair = ready();
    let (op, id) = pair.call("word_count", r#"{"text":"x"}"#);
    pair.client.cancel(op).unwrap();
    pair.drain();
    assert_eq!(pair.finished(op), Err(Error::Cancelled));
    assert_eq!(pair.last_sent()["params"]["requestId"], id);
    assert_eq!(pair.client.cancel(op), Err(Misuse::UnknownOperation));
}

#[test]
fn tool_errors_and_rpc_errors_stay_apart() {
    let mut pair = ready();
    let (op, id) = pair.call("word_count", r#"{"text":"x"}"#);
    pair.reply(&format!(
        r#"{{"jsonrpc":"2.0","id":{id},"result":{{"content":[{{"type":"text","text":"too long"}}],"isError":true}}}}"#
    ));
    let r = pair.finished(op).unwrap();
    assert!(r.is_error);
    assert_eq!(r.text(), "too long");

    let (op, id) = pair.call("word_count", r#"{"text":"x"}"#);
    pair.reply(&format!(
        r#"{{"jsonrpc":"2.0","id":{id},"error":{{"code":-32602,"message":"Unknown tool"}}}}"#
    ));
    let Err(Error::Rpc(e)) = pair.finished(op) else {
        panic!()
    };
    assert_eq!(e.code, ErrorCode::INVALID_PARAMS);
}

#[test]
fn results_are_typed_block_by_block() {
    let mut pair = ready();
    let (op, id) = pair.call("word_count", r#"{"text":"x"}"#);
    pair.reply(&format!(
        r#"{{"jsonrpc":"2.0","id":{id},"result":{{"content":[{{"type":"text","text":"a"}},{{"type":"image","data":"AA==","mimeType":"image/png"}},{{"type":"audio","data":"AA==","mimeType":"audio/wav"}},{{"type":"resource_link","uri":"file:///a","name":"a"}},{{"type":"resource","resource":{{"uri":"file:///b","text":"b"}}}},{{"type":"hologram","x":1}},{{"type":"text","text":"z"}}],"structuredContent":{{"n":1}}}}}}"#
    ));
    let r = pair.finished(op).unwrap();
    assert_eq!(r.content.len(), 7);
    assert!(
        matches!(&r.content[1], ContentBlock::Image { mime_type, .. } if mime_type == "image/png")
    );
    assert!(matches!(&r.content[2], ContentBlock::Audio { .. }));
    assert!(matches!(&r.content[3], ContentBlock::ResourceLink { uri, .. } if uri == "file:///a"));
    assert!(
        matches!(&r.content[4], ContentBlock::Resource { resource, .. } if resource.body == ResourceBody::Text("b".into()))
    );
    assert!(
        matches!(&r.content[5], ContentBlock::Other(raw) if raw.as_str() == r#"{"type":"hologram","x":1}"#)
    );
    assert_eq!(r.text(), "a\nz");
    assert_eq!(
        r.structured_content.as_ref().unwrap().as_str(),
        r#"{"n":1}"#
    );
    // Written back as JSON, the result says what the server said, member for member.
    assert_eq!(
        r.to_json(),
        r#"{"content":[{"type":"text","text":"a"},{"type":"image","data":"AA==","mimeType":"image/png"},{"type":"audio","data":"AA==","mimeType":"audio/wav"},{"type":"resource_link","uri":"file:///a","name":"a"},{"type":"resource","resource":{"uri":"file:///b","text":"b"}},{"type":"hologram","x":1},{"type":"text","text":"z"}],"structuredContent":{"n":1},"isError":false}"#
    );

    let (op, id) = pair.call("word_count", r#"{"text":"x"}"#);
    pair.reply(&format!(
        r#"{{"jsonrpc":"2.0","id":{id},"result":{{"content":[{{"type":"text"}}]}}}}"#
    ));
    assert_eq!(
        pair.finished(op),
        Err(Error::Protocol(ProtocolViolation::InvalidResult {
            method: "tools/call",
            problem: "a text block has no text"
        }))
    );
}

fn page(id: i64, tools: &str, cursor: Option<&str>) -> String {
    let next = cursor
        .map(|c| format!(r#","nextCursor":"{c}""#))
        .unwrap_or_default();
    format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{{"tools":{tools}{next}}}}}"#)
}

fn tool(name: &str) -> String {
    format!(r#"[{{"name":"{name}","inputSchema":{{"type":"object"}}}}]"#)
}

#[test]
fn a_tool_written_back_as_json_keeps_every_member_it_was_listed_with() {
    let mut pair = Pair::connected_legacy(&[], TOOLS_ONLY);
    let op = pair.client.list_tools(pair.now).unwrap();
    pair.drain();
    let listed = r#"{"name":"t","title":"T","description":"say \"hi\"\nthen stop","inputSchema":{"type":"object","properties":{"x":{"type":"number"}}},"outputSchema":{"type":"object"},"annotations":{"readOnlyHint":true}}"#;
    pair.reply(&page(pair.last_id(), &format!("[{listed}]"), None));
    let catalog = pair.finished(op).unwrap();
    assert_eq!(catalog.tools()[0].to_json(), listed);
}

#[test]
fn a_listing_is_as_fresh_as_its_stalest_page_and_shared_only_if_every_page_is() {
    // In 2026-07-28 a result may say how long it stays fresh (`ttlMs`) and who may share it
    // (`cacheScope`); a listing of several pages keeps the strictest of what they say.
    let public = |ms| Some(CacheHint::new(ms, CacheScope::Public));
    let private = |ms| Some(CacheHint::new(ms, CacheScope::Private));
    let cases: [(&[&str], Option<CacheHint>); 7] = [
        (
            &[
                r#""ttlMs":60000,"cacheScope":"public""#,
                r#""ttlMs":5000,"cacheScope":"public""#,
            ],
            public(5000),
        ),
        (
            &[
                r#""ttlMs":60000,"cacheScope":"public""#,
                r#""ttlMs":90000,"cacheScope":"private""#,
            ],
            private(60000),
        ),
        // A page that says nothing takes nothing away.
        (
            &[r#""ttlMs":60000,"cacheScope":"public""#, ""],
            public(60000),
        ),
        (&["", ""], None),
        // A life that is negative, or not a number, is none; a scope not known is private.
        (&[r#""ttlMs":-5,"cacheScope":"everyone""#], private(0)),
        (&[r#""ttlMs":"forever","cacheScope":"public""#], public(0)),
        (&[r#""ttlMs":1e300"#], private(u64::MAX)),
    ];
    let (mut pair, _) = Pair::connected_stateless(Pair::config(ProtocolChoice::Stateless, &[]));
    for (pages, expected) in cases {
        let op = pair.client.list_tools(pair.now).unwrap();
        pair.drain();
        for (n, hint) in pages.iter().enumerate() {
            let next = if n + 1 < pages.len() {
                format!(r#","nextCursor":"p{n}""#)
            } else {
                String::new()
            };
            let comma = if hint.is_empty() { "" } else { "," };
            pair.reply(&format!(
                r#"{{"jsonrpc":"2.0","id":{},"result":{{"tools":[]{next}{comma}{hint}}}}}"#,
                pair.last_id()
            ));
        }
        let catalog = pair.finished(op).unwrap();
        assert_eq!(catalog.cache(), expected, "{pages:?}");
    }
}

#[test]
fn pagination_follows_cursors_and_refuses_repeats_and_endless_lists() {
    let mut pair = Pair::connected_legacy(&[], TOOLS_ONLY);
    let op = pair.client.list_tools(pair.now).unwrap();
    pair.drain();
    for (i, cursor) in [Some("p2"), Some("p3"), None].into_iter().enumerate() {
        let id = pair.last_id();
        if i > 0 {
            assert_eq!(pair.last_sent()["params"]["cursor"], format!("p{}", i + 1));
        }
        pair.reply(&page(id, &tool(&format!("t{i}")), cursor));
    }
    let catalog = pair.finished(op).unwrap();
    assert_eq!(catalog.tools().len(), 3);

    let op = pair.client.list_tools(pair.now).unwrap();
    pair.drain();
    pair.reply(&page(pair.last_id(), &tool("a"), Some("same")));
    pair.reply(&page(pair.last_id(), &tool("b"), Some("same")));
    assert_eq!(
        pair.finished(op),
        Err(Error::Protocol(ProtocolViolation::RepeatedCursor))
    );

    let op = pair.client.list_tools(pair.now).unwrap();
    pair.drain();
    for n in 0..64 {
        pair.reply(&page(pair.last_id(), "[]", Some(&format!("c{n}"))));
    }
    assert_eq!(
        pair.finished(op),
        Err(Error::Protocol(ProtocolViolation::TooManyPages {
            limit: 64
        }))
    );
}

#[test]
fn an_empty_cursor_ends_a_legacy_listing_but_not_a_modern_one() {
    let mut pair = Pair::connected_legacy(&[], TOOLS_ONLY);
    let op = pair.client.list_tools(pair.now).unwrap();
    pair.drain();
    pair.reply(&page(pair.last_id(), &tool("a"), Some("")));
    pair.finished(op).unwrap();

    let mut pair = Pair::new(Pair::config(ProtocolChoice::Stateless, &[]));
    let op = pair.client.connect(pair.now).unwrap();
    pair.drain();
    pair.reply(r#"{"jsonrpc":"2.0","id":1,"result":{"supportedVersions":["2026-07-28"],"capabilities":{"tools":{}}}}"#);
    assert!(pair.finished(op).is_ok());
    let op = pair.client.list_tools(pair.now).unwrap();
    pair.drain();
    pair.reply(&page(pair.last_id(), &tool("a"), Some("")));
    assert!(!pair.has_finished(op), "\"\" is a cursor in 2026-07-28");
    assert_eq!(pair.last_sent()["params"]["cursor"], "");
    pair.reply(&page(pair.last_id(), &tool("b"), None));
    let catalog = pair.finished(op).unwrap();
    assert_eq!(catalog.tools().len(), 2);
}

#[test]
fn catalogs_are_bounded_and_validated_by_policy() {
    let bad =
        r#"[{"name":"ok","inputSchema":{"type":"object"}},{"name":"bad","inputSchema":"nope"}]"#;
    let mut pair = Pair::connected_legacy(&[], TOOLS_ONLY);
    let op = pair.client.list_tools(pair.now).unwrap();
    pair.drain();
    pair.reply(&page(pair.last_id(), bad, None));
    assert_eq!(
        pair.finished(op),
        Err(Error::Protocol(ProtocolViolation::InvalidTool {
            index: 1,
            reason: ToolRejection::InputSchemaNotObject
        }))
    );
    assert!(
        pair.client.catalog().is_none(),
        "a refused listing leaves no catalog"
    );

    let mut config = Pair::config(ProtocolChoice::Stateful, &[]);
    config.catalog_policy = CatalogPolicy::QUARANTINE;
    config.limits.tools_per_catalog = 2;
    let mut pair = Pair::new(config);
    let op = pair.client.connect(pair.now).unwrap();
    pair.drain();
    pair.reply(r#"{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}}}}"#);
    assert!(pair.finished(op).is_ok());
    let op = pair.client.list_tools(pair.now).unwrap();
    pair.drain();
    pair.reply(&page(pair.last_id(), bad, None));
    let catalog = pair.finished(op).unwrap();
    assert_eq!(catalog.tools().len(), 1);
    assert_eq!(
        catalog.quarantined()[0].reason,
        ToolRejection::InputSchemaNotObject
    );

    let op = pair.client.list_tools(pair.now).unwrap();
    pair.drain();
    let three = r#"[{"name":"a","inputSchema":{"type":"object"}},{"name":"b","inputSchema":{"type":"object"}},{"name":"c","inputSchema":{"type":"object"}}]"#;
    pair.reply(&page(pair.last_id(), three, None));
    assert_eq!(
        pair.finished(op),
        Err(Error::Protocol(ProtocolViolation::TooManyItems {
            limit: 2
        }))
    );
}

#[test]
fn resources_and_prompts_are_listed_read_and_expanded() {
    let mut pair = Pair::connected_legacy(&[], r#"{"resources":{},"prompts":{}}"#);
    let op = pair.client.list_resources(pair.now).unwrap();
    pair.drain();
    pair.reply(&format!(
        r#"{{"jsonrpc":"2.0","id":{},"result":{{"resources":[{{"uri":"file:///r","name":"r","mimeType":"text/plain"}}]}}}}"#,
        pair.last_id()
    ));
    let list = pair.finished(op).unwrap();
    assert_eq!(list[0].uri, "file:///r");

    let op = pair.client.read_resource("file:///r", pair.now).unwrap();
    pair.drain();
    assert_eq!(pair.last_sent()["params"]["uri"], "file:///r");
    pair.reply(&format!(
        r#"{{"jsonrpc":"2.0","id":{},"result":{{"contents":[{{"uri":"file:///r","blob":"AAEC"}}]}}}}"#,
        pair.last_id()
    ));
    let contents = pair.finished(op).unwrap();
    assert_eq!(contents[0].body, ResourceBody::Blob("AAEC".into()));

    let op = pair.client.list_prompts(pair.now).unwrap();
    pair.drain();
    pair.reply(&format!(
        r#"{{"jsonrpc":"2.0","id":{},"result":{{"prompts":[{{"name":"review","arguments":[{{"name":"code","required":true}}]}}]}}}}"#,
        pair.last_id()
    ));
    let prompts = pair.finished(op).unwrap();
    assert!(prompts[0].arguments[0].required);

    let op = pair
        .client
        .get_prompt("review", &[("code", "fn main() {}")], pair.now)
        .unwrap();
    pair.drain();
    assert_eq!(
        pair.last_sent()["params"]["arguments"]["code"],
        "fn main() {}"
    );
    pair.reply(&format!(
        r#"{{"jsonrpc":"2.0","id":{},"result":{{"messages":[{{"role":"user","content":{{"type":"text","text":"Review it"}}}}]}}}}"#,
        pair.last_id()
    ));
    let prompt = pair.finished(op).unwrap();
    assert_eq!(prompt.messages[0].role, "user");

    // An argument named twice would be a key repeated in one object: refused, unsent.
    pair.sent.clear();
    assert_eq!(
        pair.client.get_prompt(
            "review",
            &[("code", "a"), ("tone", "kind"), ("code", "b")],
            pair.now
        ),
        Err(Misuse::PromptArgumentRepeated {
            name: "code".into()
        })
    );
    // As listed, the prompt requires `code`: asked for without it, refused, unsent.
    let review = &prompts[0];
    let missing = pair
        .client
        .get_listed_prompt(review, &[("tone", "kind")], CallOptions::new(), pair.now)
        .unwrap_err();
    assert_eq!(
        missing,
        Misuse::PromptArgumentMissing {
            prompt: "review".into(),
            argument: "code".into()
        }
    );
    assert_eq!(
        missing.to_string(),
        r#"prompt "review" requires the argument "code", which is not given"#
    );
    pair.drain();
    assert!(
        pair.sent.is_empty(),
        "a refused prompt sent {:?}",
        pair.sent
    );
    // Given it, the prompt is asked for, with an argument it does not declare sent as well.
    let op = pair
        .client
        .get_listed_prompt(
            review,
            &[("tone", "kind"), ("code", "x = 1")],
            CallOptions::new(),
            pair.now,
        )
        .unwrap();
    pair.drain();
    assert_eq!(pair.last_sent()["params"]["name"], "review");
    assert_eq!(
        pair.last_sent()["params"]["arguments"],
        serde_json::json!({"tone": "kind", "code": "x = 1"})
    );
    pair.reply(&format!(
        r#"{{"jsonrpc":"2.0","id":{},"result":{{"messages":[]}}}}"#,
        pair.last_id()
    ));
    assert!(pair.finished(op).unwrap().messages.is_empty());
}

#[test]
fn resource_and_prompt_listings_are_bounded_across_pages_and_read_strictly() {
    let mut limits = Limits::default();
    limits.items_per_listing = 2;
    let mut pair = Pair::connected_legacy_within(&[], r#"{"resources":{},"prompts":{}}"#, limits);
    let resource = |n: usize| format!(r#"{{"uri":"file:///r{n}","name":"r{n}"}}"#);
    let prompt = |n: usize| format!(r#"{{"name":"p{n}"}}"#);
    let mut listed = |list: ListKind, pages: &[(&str, String)]| {
        let op = match list {
            ListKind::Resources => pair.client.list_resources(pair.now).unwrap().id(),
            _ => pair.client.list_prompts(pair.now).unwrap().id(),
        };
        pair.drain();
        for (next, items) in pages {
            pair.reply(&format!(
                r#"{{"jsonrpc":"2.0","id":{},"result":{{"{}":{items}{next}}}}}"#,
                pair.last_id(),
                list.capability()
            ));
        }
        pair.finished_any(op).map(|_| ())
    };
    let cursor = r#","nextCursor":"p2""#;
    let too_many = Err(Error::Protocol(ProtocolViolation::TooManyItems {
        limit: 2,
    }));
    // Two a page, within the bound; a third on the next page passes it.
    let two_resources = format!("[{},{}]", resource(1), resource(2));
    assert_eq!(
        listed(ListKind::Resources, &[("", two_resources.clone())]),
        Ok(())
    );
    assert_eq!(
        listed(
            ListKind::Resources,
            &[(cursor, two_resources), ("", format!("[{}]", resource(3)))]
        ),
        too_many
    );
    let three_prompts = format!("[{},{},{}]", prompt(1), prompt(2), prompt(3));
    assert_eq!(listed(ListKind::Prompts, &[("", three_prompts)]), too_many);
    // What breaks a listing's shape names the method and what is wrong.
    let invalid = |method, problem| {
        Err(Error::Protocol(ProtocolViolation::InvalidResult {
            method,
            problem,
        }))
    };
    assert_eq!(
        listed(ListKind::Resources, &[("", r#"[{"name":"r"}]"#.into())]),
        invalid("resources/list", "a resource has no uri")
    );
    assert_eq!(
        listed(ListKind::Prompts, &[("", r#"{"name":"p"}"#.into())]),
        invalid("prompts/list", "the list is not an array")
    );
    assert_eq!(
        listed(ListKind::Prompts, &[(r#","nextCursor":7"#, "[]".into())]),
        invalid("prompts/list", "nextCursor is not a string")
    );
    assert_eq!(
        listed(
            ListKind::Prompts,
            &[("", r#"[{"name":"p","arguments":{}}]"#.into())]
        ),
        invalid("prompts/list", "a prompt's arguments are not an array")
    );
}

#[test]
fn an_op_takes_only_its_own_end_and_gives_any_other_event_back_unchanged() {
    let mut pair = Pair::connected_legacy(&["word_count"], TOOLS_ONLY);
    pair.list(TOOLS);
    let (first, first_id) = pair.call("word_count", r#"{"text":"a b"}"#);
    let (second, second_id) = pair.call("word_count", r#"{"text":"c"}"#);
    pair.reply(&text_reply(second_id, "1"));
    pair.reply(&text_reply(first_id, "2"));
    let second_end = Event::Finished {
        op: second.id(),
        outcome: pair.finished_any(second.id()),
    };
    // Another operation's end, and an event that is no end, come back as they were.
    assert_eq!(first.finished(second_end.clone()), Err(second_end.clone()));
    let other = Event::Notification(ServerNotification::ListChanged(ListKind::Tools));
    assert_eq!(first.finished(other.clone()), Err(other));
    // Its own end, typed.
    assert_eq!(second.finished(second_end).unwrap().unwrap().text(), "1");
    assert_eq!(pair.finished(first).unwrap().text(), "2");
}

#[test]
fn requests_in_flight_are_bounded() {
    let mut config = Pair::config(ProtocolChoice::Stateful, &["word_count"]);
    config.limits.requests_in_flight = 2;
    let mut pair = Pair::new(config);
    let op = pair.client.connect(pair.now).unwrap();
    pair.drain();
    pair.reply(r#"{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}}}}"#);
    assert!(pair.finished(op).is_ok());
    pair.list(TOOLS);
    let _ = pair.call("word_count", "{}");
    let _ = pair.call("word_count", "{}");
    let sent = pair.sent.len();
    assert_eq!(
        pair.client
            .call_tool("word_count", &mcp_sansio::RawObject::empty(), pair.now),
        Err(Misuse::TooManyInFlight { limit: 2 })
    );
    pair.drain();
    assert_eq!(pair.sent.len(), sent);
}

#[test]
fn notifications_become_typed_events() {
    let mut pair = ready();
    pair.reply(r#"{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"warning","logger":"db","data":{"slow":true}}}"#);
    pair.reply(r#"{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}"#);
    pair.reply(r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"progress":1}}"#);
    pair.reply(r#"{"jsonrpc":"2.0","method":"vendor/custom","params":{"x":1}}"#);
    let kinds: Vec<String> = pair
        .events
        .iter()
        .map(|e| match e {
            Event::Notification(ServerNotification::Log {
                level,
                logger,
                data,
            }) => {
                format!("log {level} {} {data}", logger.as_deref().unwrap_or("-"))
            }
            Event::Notification(ServerNotification::ListChanged(kind)) => {
                format!("changed {}", kind.method())
            }
            Event::Notification(ServerNotification::Other(n)) => format!("other {}", n.method),
            other => format!("{other:?}"),
        })
        .collect();
    assert_eq!(
        kinds,
        [
            r#"log warning db {"slow":true}"#,
            "changed tools/list",
            // A progress notification without its token is kept whole, not guessed at.
            "other notifications/progress",
            "other vendor/custom",
        ]
    );
}

#[test]
fn a_request_from_a_stateless_server_breaks_the_protocol() {
    let mut pair = Pair::new(Pair::config(ProtocolChoice::Stateless, &[]));
    let op = pair.client.connect(pair.now).unwrap();
    pair.drain();
    pair.reply(r#"{"jsonrpc":"2.0","id":1,"result":{"supportedVersions":["2026-07-28"],"capabilities":{"tools":{}}}}"#);
    assert!(pair.finished(op).is_ok());
    pair.reply(r#"{"jsonrpc":"2.0","id":"s","method":"ping"}"#);
    assert_eq!(
        pair.events,
        [Event::Failed(Error::Protocol(
            ProtocolViolation::UnexpectedRequest
        ))]
    );
    assert_eq!(
        pair.sent.len(),
        1,
        "no answer to a request 2026-07-28 does not allow"
    );
}

#[test]
fn a_message_framed_by_its_transport_may_span_lines_and_is_bounded_as_a_frame() {
    let mut pair = ready();
    let (first, id) = pair.call("word_count", r#"{"text":"a b"}"#);
    let (second, other) = pair.call("word_count", r#"{"text":"c"}"#);
    // Pretty-printed, as an HTTP body or a multi-line SSE event's data may be: its newlines
    // are whitespace, not frame ends.
    let pretty = format!(
        "{{\n  \"jsonrpc\": \"2.0\",\n  \"id\": {id},\n  \"result\": {{\n    \"content\": [{{\"type\": \"text\", \"text\": \"2\"}}]\n  }}\n}}"
    );
    pair.client.handle_message(pretty.as_bytes(), pair.now);
    pair.drain();
    assert_eq!(pair.finished(first).unwrap().text(), "2");
    // The message is whole: the next one is separate, with no newline needed.
    pair.client
        .handle_message(text_reply(other, "1").as_bytes(), pair.now);
    pair.drain();
    assert_eq!(pair.finished(second).unwrap().text(), "1");

    // At the frame limit it is refused before it is parsed, as a frame would be.
    let mut config = Pair::config(ProtocolChoice::Stateful, &[]);
    config.limits = mcp_sansio::Limits::teaching();
    let mut pair = Pair::new(config);
    let op = pair.client.connect(pair.now).unwrap();
    pair.drain();
    pair.client.handle_message(&vec![b' '; 65_536], pair.now);
    pair.drain();
    assert_eq!(
        pair.finished(op),
        Err(Error::Protocol(ProtocolViolation::FrameTooLong {
            limit: 65_536
        }))
    );
}
