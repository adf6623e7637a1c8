//! Subscriptions (2026-07-28, `subscriptions/listen`): the filter sent is what the application
//! asked; only what the server acknowledged of it, and only tagged with the subscription's id,
//! reaches the application; the subscription has a deadline until its acknowledgement and
//! none after; it ends by the server's result, the server's cancel, the application's cancel,
//! or the connection, exactly once.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

mod common;

use common::{text_reply, Pair};
use mcp_sansio::{
    Config, Error, Event, KeptEvents, Limits, ListKind, Listening, Misuse, Op, ProtocolChoice,
    ProtocolVersion, ProtocolViolation, ServerNotification, Subscription, SubscriptionEnded,
};
use serde_json::json;

fn stateless() -> Pair {
    Pair::connected_stateless(Pair::config(ProtocolChoice::Stateless, &["word_count"])).0
}

fn asked() -> Subscription {
    Subscription {
        tools_list_changed: true,
        resources: vec!["file:///notes.txt".into(), "db://orders".into()],
        ..Subscription::default()
    }
}

/// A notification of `method` with `params` (object members, may be empty) tagged with
/// subscription `tag` (JSON text).
fn tagged(method: &str, members: &str, tag: &str) -> String {
    let comma = if members.is_empty() { "" } else { "," };
    format!(
        r#"{{"jsonrpc":"2.0","method":"{method}","params":{{{members}{comma}"_meta":{{"io.modelcontextprotocol/subscriptionId":{tag}}}}}}}"#
    )
}

fn ack(id: i64, filter: &str) -> String {
    tagged(
        "notifications/subscriptions/acknowledged",
        &format!(r#""notifications":{filter}"#),
        &id.to_string(),
    )
}

/// Listens with `subscription`; returns the op and the request id.
fn listen(pair: &mut Pair, subscription: &Subscription) -> (Op<SubscriptionEnded>, i64) {
    let op = pair.client.listen(subscription, pair.now).unwrap();
    pair.drain();
    (op, pair.last_id())
}

/// Listens with [`asked`] and has the server honour `filter`; returns the op, the request id
/// and what the acknowledgement said was honoured.
fn subscribed(pair: &mut Pair, filter: &str) -> (Op<SubscriptionEnded>, i64, Subscription) {
    let (op, id) = listen(pair, &asked());
    pair.reply(&ack(id, filter));
    let honoured = take_subscribed(pair, op);
    (op, id, honoured)
}

fn take_subscribed(pair: &mut Pair, op: Op<SubscriptionEnded>) -> Subscription {
    let at = pair
        .events
        .iter()
        .position(|e| matches!(e, Event::Subscribed { op: o, .. } if *o == op.id()))
        .unwrap_or_else(|| panic!("no acknowledgement among {:?}", pair.events));
    match pair.events.remove(at) {
        Event::Subscribed { honoured, .. } => honoured,
        _ => unreachable!(),
    }
}

/// The notifications the client reported, taken.
fn notifications(pair: &mut Pair) -> Vec<ServerNotification> {
    let mut taken = Vec::new();
    pair.events.retain(|e| match e {
        Event::Notification(n) => {
            taken.push(n.clone());
            false
        }
        _ => true,
    });
    taken
}

#[test]
fn the_filter_sent_is_what_was_asked_with_the_session_s_meta() {
    let mut pair = stateless();
    let (op, id) = listen(&mut pair, &asked());
    let sent = pair.last_sent();
    assert_eq!(sent["method"], "subscriptions/listen");
    assert_eq!(
        sent["params"]["notifications"],
        json!({"toolsListChanged": true, "resourceSubscriptions": ["file:///notes.txt", "db://orders"]}),
        "a change not asked for is left out, never sent as false"
    );
    assert_eq!(
        sent["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"],
        "2026-07-28"
    );
    assert!(pair.client.is_pending(op));
    assert_eq!(id, sent["id"].as_i64().unwrap());

    let everything = Subscription {
        tools_list_changed: true,
        prompts_list_changed: true,
        resources_list_changed: true,
        resources: Vec::new(),
    };
    let _ = listen(&mut pair, &everything);
    assert_eq!(
        pair.last_sent()["params"]["notifications"],
        json!({"toolsListChanged": true, "promptsListChanged": true, "resourcesListChanged": true})
    );
}

#[test]
fn only_what_was_asked_and_honoured_is_heard_and_only_on_its_own_subscription() {
    let mut pair = stateless();
    // The server honours more than was asked (prompts), and less (one of the two URIs).
    let (op, id, honoured) = subscribed(
        &mut pair,
        r#"{"toolsListChanged":true,"promptsListChanged":true,"resourceSubscriptions":["db://orders","db://other"]}"#,
    );
    assert_eq!(
        honoured,
        Subscription {
            tools_list_changed: true,
            resources: vec!["db://orders".into()],
            ..Subscription::default()
        }
    );
    let tag = id.to_string();
    for line in [
        tagged("notifications/tools/list_changed", "", &tag),
        // Not asked for, though acknowledged.
        tagged("notifications/prompts/list_changed", "", &tag),
        // Neither asked nor acknowledged.
        tagged("notifications/resources/list_changed", "", &tag),
        // Asked, not acknowledged.
        tagged(
            "notifications/resources/updated",
            r#""uri":"file:///notes.txt""#,
            &tag,
        ),
        // Acknowledged, not asked.
        tagged(
            "notifications/resources/updated",
            r#""uri":"db://other""#,
            &tag,
        ),
        tagged(
            "notifications/resources/updated",
            r#""uri":"db://orders""#,
            &tag,
        ),
        // A URI under the one asked is another URI.
        tagged(
            "notifications/resources/updated",
            r#""uri":"db://orders/7""#,
            &tag,
        ),
        // The same id, in other clothes, is another subscription, and one not in flight.
        tagged("notifications/tools/list_changed", "", &format!("\"{id}\"")),
        tagged("notifications/tools/list_changed", "", &format!("{id}.0")),
        tagged("notifications/tools/list_changed", "", "true"),
        tagged(
            "notifications/tools/list_changed",
            "",
            &(id + 1).to_string(),
        ),
        tagged("notifications/tools/list_changed", "", "1"),
    ] {
        pair.reply(&line);
    }
    assert_eq!(
        notifications(&mut pair),
        [
            ServerNotification::ListChanged(ListKind::Tools),
            ServerNotification::ResourceUpdated {
                uri: "db://orders".into()
            },
        ]
    );
    assert!(pair.events.is_empty(), "{:?}", pair.events);
    assert!(pair.client.is_pending(op));
    assert!(!pair.client.is_failed());
    // Untagged, a change is no subscription's: it is reported as it comes, as before.
    pair.reply(r#"{"jsonrpc":"2.0","method":"notifications/prompts/list_changed"}"#);
    assert_eq!(
        notifications(&mut pair),
        [ServerNotification::ListChanged(ListKind::Prompts)]
    );
}

#[test]
fn nothing_is_heard_before_the_acknowledgement_which_must_come_by_the_deadline() {
    let mut pair = stateless();
    let (op, id) = listen(&mut pair, &asked());
    let deadline = pair
        .client
        .poll_timeout()
        .expect("a deadline until acknowledged");
    assert_eq!(
        deadline.as_millis() - pair.now.as_millis(),
        Limits::default().operation_timeout.as_millis() as u64
    );
    pair.reply(&tagged(
        "notifications/tools/list_changed",
        "",
        &id.to_string(),
    ));
    assert!(notifications(&mut pair).is_empty());
    pair.jump_to_next_timeout();
    assert_eq!(
        pair.finished(op),
        Err(Error::Timeout {
            operation: "subscriptions/listen"
        })
    );
    let cancel = pair.last_sent();
    assert_eq!(cancel["method"], "notifications/cancelled");
    assert_eq!(cancel["params"]["requestId"], id);
    // An acknowledgement after the deadline starts nothing.
    pair.reply(&ack(id, r#"{"toolsListChanged":true}"#));
    assert!(pair.events.is_empty(), "{:?}", pair.events);
}

#[test]
fn once_acknowledged_it_stands_with_no_deadline_and_counts_against_no_request() {
    let mut limits = Limits::default();
    limits.notifications_before_answer = 2;
    let mut config = Pair::config(ProtocolChoice::Stateless, &["word_count"]);
    config.limits = limits;
    let (mut pair, _) = Pair::connected_stateless(config);
    let (op, id, _) = subscribed(&mut pair, r#"{"toolsListChanged":true}"#);
    assert_eq!(
        pair.client.poll_timeout(),
        None,
        "a standing subscription waits for nothing"
    );
    pair.advance(30 * 24 * 60 * 60 * 1000);
    assert!(pair.client.is_pending(op));
    // A call waits while the subscription's changes come, more of them than the cap.
    let (call, call_id) = pair.call("word_count", r#"{"text":"a b"}"#);
    for _ in 0..5 {
        pair.reply(&tagged(
            "notifications/tools/list_changed",
            "",
            &id.to_string(),
        ));
    }
    assert_eq!(notifications(&mut pair).len(), 5);
    pair.reply(&text_reply(call_id, "2 words"));
    assert_eq!(pair.finished(call).unwrap().text(), "2 words");
    // Untagged chatter still counts against a call, and the cap still holds.
    let (call, _) = pair.call("word_count", r#"{"text":"a b"}"#);
    for _ in 0..3 {
        pair.reply(r#"{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"x"}}"#);
    }
    assert_eq!(
        pair.finished(call),
        Err(ProtocolViolation::TooManyNotifications { limit: 2 }.into())
    );
    assert!(
        pair.client.is_pending(op),
        "the subscription counts none of it"
    );
}

#[test]
fn the_server_ends_it_by_its_result_or_its_cancel_and_the_application_by_cancelling() {
    let mut pair = stateless();
    let (op, id, _) = subscribed(&mut pair, r#"{"toolsListChanged":true}"#);
    pair.reply(&format!(
        r#"{{"jsonrpc":"2.0","id":{id},"result":{{"resultType":"complete","_meta":{{"io.modelcontextprotocol/subscriptionId":{id}}}}}}}"#
    ));
    assert_eq!(pair.finished(op), Ok(SubscriptionEnded));
    pair.reply(&tagged(
        "notifications/tools/list_changed",
        "",
        &id.to_string(),
    ));
    assert!(
        notifications(&mut pair).is_empty(),
        "an ended subscription hears nothing"
    );

    let (op, id, _) = subscribed(&mut pair, r#"{"toolsListChanged":true}"#);
    let before = pair.sent.len();
    pair.reply(&format!(
        r#"{{"jsonrpc":"2.0","method":"notifications/cancelled","params":{{"requestId":{id},"reason":"shutting down"}}}}"#
    ));
    assert_eq!(pair.finished(op), Ok(SubscriptionEnded));
    assert_eq!(pair.sent.len(), before, "nothing is cancelled back");
    // The cancel is reported too, as every notification is.
    assert_eq!(notifications(&mut pair).len(), 1);

    let (op, id, _) = subscribed(&mut pair, r#"{"toolsListChanged":true}"#);
    pair.client.cancel(op).unwrap();
    pair.drain();
    assert_eq!(pair.finished(op), Err(Error::Cancelled));
    let cancel = pair.last_sent();
    assert_eq!(cancel["method"], "notifications/cancelled");
    assert_eq!(cancel["params"]["requestId"], id);
    pair.reply(&tagged(
        "notifications/tools/list_changed",
        "",
        &id.to_string(),
    ));
    assert!(notifications(&mut pair).is_empty());
    // Its result, if the server sends one after all, is late, not a broken protocol.
    pair.reply(&format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{{}}}}"#));
    assert!(!pair.client.is_failed());
    assert!(matches!(
        pair.events.as_slice(),
        [Event::LateResponse { .. }]
    ));
}

#[test]
fn a_driver_s_listening_honours_nothing_when_it_ended_before_any_acknowledgement() {
    let mut pair = stateless();
    let (op, id) = listen(&mut pair, &asked());
    // The server ends it at once, acknowledging nothing: a driver waiting for the
    // acknowledgement finds the end instead.
    pair.reply(&format!(
        r#"{{"jsonrpc":"2.0","id":{id},"result":{{"resultType":"complete"}}}}"#
    ));
    assert_eq!(pair.finished(op), Ok(SubscriptionEnded));
    let mut kept = KeptEvents::new(4);
    let listening = Listening::new(op, None, &mut kept);
    assert_eq!(listening.honoured, Subscription::default());
    // Its end is put back for the application, which sees it among the events.
    assert!(matches!(
        kept.take_all().as_slice(),
        [Event::Finished { op: o, outcome: Ok(_) }] if *o == op.id()
    ));

    // Acknowledged, it honours what the acknowledgement said, and nothing is put back.
    let (op, _, honoured) = subscribed(&mut pair, r#"{"toolsListChanged":true}"#);
    let listening = Listening::new(op, Some(honoured), &mut kept);
    assert_eq!(listening.honoured, Subscription::tools());
    assert!(kept.is_empty());
}

#[test]
fn a_refusal_or_a_bad_acknowledgement_ends_it_and_a_failed_connection_ends_every_one() {
    let mut pair = stateless();
    let (op, id) = listen(&mut pair, &asked());
    pair.reply(&format!(
        r#"{{"jsonrpc":"2.0","id":{id},"error":{{"code":-32603,"message":"Subscription limit reached"}}}}"#
    ));
    assert!(
        matches!(pair.finished(op), Err(Error::Rpc(e)) if e.message == "Subscription limit reached")
    );

    let (op, id) = listen(&mut pair, &asked());
    pair.reply(&ack(id, r#"["toolsListChanged"]"#));
    assert_eq!(
        pair.finished(op),
        Err(ProtocolViolation::InvalidAcknowledgement.into())
    );
    assert!(
        !pair.client.is_failed(),
        "one subscription's fault, not the connection's"
    );

    let (first, _, _) = subscribed(&mut pair, r#"{"toolsListChanged":true}"#);
    let (second, _, _) = subscribed(&mut pair, r#"{}"#);
    pair.client.handle_close();
    pair.drain();
    assert_eq!(pair.finished(first), Err(Error::Closed));
    assert_eq!(pair.finished(second), Err(Error::Closed));
}

#[test]
fn an_earlier_revision_is_refused_before_a_byte_is_sent() {
    let mut pair = Pair::connected_legacy(&["word_count"], r#"{"tools":{"listChanged":true}}"#);
    assert_eq!(
        pair.client.listen(&Subscription::tools(), pair.now),
        Err(Misuse::NotInRevision {
            method: "subscriptions/listen",
            version: ProtocolVersion::V2025_06_18,
        })
    );
    pair.drain();
    assert!(pair.sent.is_empty());
    let mut unconnected = Pair::new(Config::new(Default::default()));
    assert_eq!(
        unconnected
            .client
            .listen(&Subscription::tools(), unconnected.now),
        Err(Misuse::NotConnected)
    );
}

proptest::proptest! {
    /// Whatever the server acknowledges and sends, tagged however, the application hears
    /// only changes that were asked for and acknowledged, and the client neither fails nor
    /// ends the subscription for it.
    #[test]
    fn no_change_is_heard_that_was_not_asked_and_acknowledged(
        asked_flags in proptest::array::uniform3(proptest::bool::ANY),
        asked_uris in proptest::collection::vec("[ab]{1,2}", 0..4),
        acked_flags in proptest::array::uniform3(proptest::bool::ANY),
        acked_uris in proptest::collection::vec("[ab]{1,2}", 0..4),
        sent in proptest::collection::vec((0usize..5, "[ab]{1,2}", 0usize..4), 0..24),
    ) {
        let mut pair = stateless();
        let asked = Subscription {
            tools_list_changed: asked_flags[0],
            prompts_list_changed: asked_flags[1],
            resources_list_changed: asked_flags[2],
            resources: asked_uris.clone(),
        };
        let (op, id) = listen(&mut pair, &asked);
        let filter = json!({
            "toolsListChanged": acked_flags[0],
            "promptsListChanged": acked_flags[1],
            "resourcesListChanged": acked_flags[2],
            "resourceSubscriptions": acked_uris,
        });
        pair.reply(&ack(id, &filter.to_string()));
        let honoured = take_subscribed(&mut pair, op);
        let methods = [
            "notifications/tools/list_changed",
            "notifications/prompts/list_changed",
            "notifications/resources/list_changed",
            "notifications/resources/updated",
            "notifications/subscriptions/acknowledged",
        ];
        let tags = [id.to_string(), format!("\"{id}\""), (id + 7).to_string(), format!("{id}.0")];
        for (method, uri, tag) in sent {
            pair.reply(&tagged(methods[method], &format!(r#""uri":"{uri}""#), &tags[tag]));
        }
        for heard in notifications(&mut pair) {
            let allowed = match &heard {
                ServerNotification::ListChanged(ListKind::Tools) => asked_flags[0] && acked_flags[0],
                ServerNotification::ListChanged(ListKind::Prompts) => asked_flags[1] && acked_flags[1],
                ServerNotification::ListChanged(ListKind::Resources) => asked_flags[2] && acked_flags[2],
                ServerNotification::ResourceUpdated { uri } => {
                    asked_uris.contains(uri) && acked_uris.contains(uri)
                }
                _ => false,
            };
            proptest::prop_assert!(allowed, "{heard:?} was heard; honoured {honoured:?}");
        }
        proptest::prop_assert!(pair.events.is_empty(), "{:?}", pair.events);
        proptest::prop_assert!(pair.client.is_pending(op));
        proptest::prop_assert!(!pair.client.is_failed());
    }
}

#[test]
fn in_the_handshake_revisions_a_resource_s_updates_are_asked_for_and_stopped_by_request() {
    let mut pair = Pair::connected_legacy(
        &["word_count"],
        r#"{"tools":{},"resources":{"subscribe":true,"listChanged":true}}"#,
    );
    let op = pair
        .client
        .subscribe_resource("file:///notes.txt", pair.now)
        .unwrap();
    pair.drain();
    let sent = pair.last_sent();
    assert_eq!(sent["method"], "resources/subscribe");
    assert_eq!(sent["params"], json!({"uri": "file:///notes.txt"}));
    pair.reply(&format!(
        r#"{{"jsonrpc":"2.0","id":{},"result":{{}}}}"#,
        pair.last_id()
    ));
    assert_eq!(pair.finished(op), Ok(()));
    pair.reply(r#"{"jsonrpc":"2.0","method":"notifications/resources/updated","params":{"uri":"file:///notes.txt"}}"#);
    assert_eq!(
        notifications(&mut pair),
        [ServerNotification::ResourceUpdated {
            uri: "file:///notes.txt".into()
        }]
    );

    let op = pair
        .client
        .unsubscribe_resource("file:///notes.txt", pair.now)
        .unwrap();
    pair.drain();
    assert_eq!(pair.last_sent()["method"], "resources/unsubscribe");
    pair.reply(&format!(
        r#"{{"jsonrpc":"2.0","id":{},"error":{{"code":-32602,"message":"Not subscribed"}}}}"#,
        pair.last_id()
    ));
    assert!(matches!(pair.finished(op), Err(Error::Rpc(e)) if e.message == "Not subscribed"));
    // An update without its URI is kept whole, not read as one.
    pair.reply(r#"{"jsonrpc":"2.0","method":"notifications/resources/updated","params":{}}"#);
    assert!(matches!(
        notifications(&mut pair).as_slice(),
        [ServerNotification::Other(_)]
    ));
}

#[test]
fn a_resource_subscription_is_refused_before_a_byte_where_it_cannot_be_asked() {
    let refusal = |capabilities: &str| {
        let mut pair = Pair::connected_legacy(&[], capabilities);
        let refused = pair.client.subscribe_resource("file:///a", pair.now);
        pair.drain();
        assert!(pair.sent.is_empty());
        refused.unwrap_err()
    };
    assert_eq!(
        refusal(r#"{"resources":{"listChanged":true}}"#),
        Misuse::CapabilityNotOffered {
            capability: "resources.subscribe"
        }
    );
    assert_eq!(
        refusal(r#"{"resources":{"subscribe":"yes"}}"#),
        Misuse::CapabilityNotOffered {
            capability: "resources.subscribe"
        }
    );
    assert_eq!(
        refusal(r#"{"tools":{}}"#),
        Misuse::CapabilityNotOffered {
            capability: "resources"
        }
    );
    let mut pair = stateless();
    assert_eq!(
        pair.client.unsubscribe_resource("file:///a", pair.now),
        Err(Misuse::NotInRevision {
            method: "resources/unsubscribe",
            version: ProtocolVersion::V2026_07_28,
        })
    );
}
