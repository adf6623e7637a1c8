//! Calls that wait on terms of their own (`CallOptions`): a deadline other than every
//! operation's, and progress asked for with a token, each report of which that advances
//! restarts that deadline, never past the hard maximum.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

mod common;

use core::time::Duration;

use common::{input_required, text_reply, Pair, TOOLS};
use mcp_sansio::{
    CallOptions, CallToolResult, Error, Event, Limits, Op, ProtocolViolation, RawObject, Root,
    ServerNotification,
};
use serde_json::Value;

const TOOLS_ONLY: &str = r#"{"tools":{}}"#;

fn ready_within(limits: Limits) -> Pair {
    let mut pair = Pair::connected_legacy_within(&["word_count"], TOOLS_ONLY, limits);
    pair.list(TOOLS);
    pair
}

/// Calls `word_count` under `options`; returns the op, the request written, and its id.
fn call_with(pair: &mut Pair, options: CallOptions) -> (Op<CallToolResult>, Value, i64) {
    let args = RawObject::parse(r#"{"text":"a b"}"#, &Limits::default()).unwrap();
    let op = pair
        .client
        .call_tool_with("word_count", &args, options, pair.now)
        .unwrap();
    pair.drain();
    (op, pair.last_sent(), pair.last_id())
}

/// A progress report under `token` (JSON text).
fn report(token: &str, progress: f64) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","method":"notifications/progress","params":{{"progressToken":{token},"progress":{progress},"total":4,"message":"step {progress}"}}}}"#
    )
}

/// Ten seconds of silence at most, the server asked to report, `most` in all.
fn reporting(most: u64) -> CallOptions {
    CallOptions::new()
        .timeout(Duration::from_secs(10))
        .progress_up_to(Duration::from_secs(most))
}

/// The token the request names, as JSON text.
fn token_of(request: &Value) -> String {
    let token = &request["params"]["_meta"]["progressToken"];
    assert!(token.is_i64(), "an integer token: {request}");
    token.to_string()
}

#[test]
fn a_call_asks_for_progress_with_a_token_and_hears_its_reports_as_its_own() {
    let mut pair = ready_within(Limits::default());
    // A call that asks for nothing names no token.
    let (plain, request, plain_id) = call_with(&mut pair, CallOptions::new());
    assert!(request["params"].get("_meta").is_none(), "{request}");
    let (op, request, id) = call_with(&mut pair, reporting(60));
    assert_eq!(request["params"]["name"], "word_count");
    let token = token_of(&request);
    // In a session of the handshake revisions, the token is all the `_meta` there is.
    assert_eq!(request["params"]["_meta"].as_object().unwrap().len(), 1);
    pair.events.clear();
    pair.reply(&report(&token, 1.0));
    assert_eq!(
        pair.events,
        [Event::Progress {
            op: op.id(),
            progress: 1.0,
            total: Some(4.0),
            message: Some("step 1".into()),
        }]
    );
    // The plain call's number, as a string, a fraction, or another token: no call's.
    pair.events.clear();
    let plain_token = plain_id.to_string();
    for other in [
        format!("\"{token}\""),
        format!("{token}.0"),
        String::from("\"abc\""),
        plain_token,
    ] {
        pair.reply(&report(&other, 2.0));
    }
    assert_eq!(pair.events.len(), 4);
    assert!(
        pair.events
            .iter()
            .all(|e| matches!(e, Event::Notification(ServerNotification::Progress { .. }))),
        "{:?}",
        pair.events
    );
    pair.reply(&text_reply(id, "2"));
    assert_eq!(pair.finished(op).unwrap().text(), "2");
    // Once the call has ended, its token is no one's.
    pair.events.clear();
    pair.reply(&report(&token, 3.0));
    assert!(matches!(
        pair.events[..],
        [Event::Notification(ServerNotification::Progress { .. })]
    ));
    pair.reply(&text_reply(plain_id, "2"));
    assert_eq!(pair.finished(plain).unwrap().text(), "2");
}

#[test]
fn progress_that_advances_restarts_the_timeout_and_a_repeat_does_not() {
    let mut pair = ready_within(Limits::default());
    let (op, request, _) = call_with(&mut pair, reporting(60));
    let token = token_of(&request);
    pair.advance(9_000);
    pair.reply(&report(&token, 1.0));
    // Ten seconds from the report, not from the call.
    pair.advance(9_999);
    assert!(!pair.has_finished(op.id()));
    // The same progress again moves nothing, nor does less.
    pair.reply(&report(&token, 1.0));
    pair.reply(&report(&token, 0.5));
    pair.advance(1);
    assert_eq!(
        pair.finished(op),
        Err(Error::Timeout {
            operation: "tools/call"
        })
    );
    assert!(
        pair.sent
            .last()
            .unwrap()
            .contains("notifications/cancelled"),
        "{:?}",
        pair.sent
    );
}

#[test]
fn no_progress_stretches_a_call_past_its_hard_maximum() {
    let mut pair = ready_within(Limits::default());
    let (op, request, _) = call_with(&mut pair, reporting(25));
    let token = token_of(&request);
    for (step, at) in [9_000, 9_000, 6_000].into_iter().enumerate() {
        pair.advance(at);
        pair.reply(&report(&token, step as f64));
    }
    // 24 s in, a report every few seconds; the call still ends 25 s after it was sent.
    assert!(!pair.has_finished(op.id()));
    pair.advance(999);
    assert!(!pair.has_finished(op.id()));
    pair.advance(1);
    assert_eq!(
        pair.finished(op),
        Err(Error::Timeout {
            operation: "tools/call"
        })
    );
}

#[test]
fn a_call_s_own_deadline_is_its_timeout_and_never_past_its_maximum() {
    let mut pair = ready_within(Limits::default());
    // Shorter than every operation's 30 s.
    let (short, _, _) = call_with(
        &mut pair,
        CallOptions::new().timeout(Duration::from_secs(2)),
    );
    // Longer.
    let (long, _, long_id) = call_with(
        &mut pair,
        CallOptions::new().timeout(Duration::from_secs(90)),
    );
    // A maximum below the timeout is the deadline.
    let (capped, _, _) = call_with(
        &mut pair,
        CallOptions::new()
            .timeout(Duration::from_secs(90))
            .progress_up_to(Duration::from_secs(5)),
    );
    pair.advance(2_000);
    assert!(matches!(pair.finished(short), Err(Error::Timeout { .. })));
    pair.advance(3_000);
    assert!(matches!(pair.finished(capped), Err(Error::Timeout { .. })));
    pair.advance(80_000);
    pair.reply(&text_reply(long_id, "2"));
    assert_eq!(pair.finished(long).unwrap().text(), "2");
}

#[test]
fn a_call_s_own_reports_count_against_no_cap_and_others_still_do() {
    let mut limits = Limits::default();
    limits.notifications_before_answer = 2;
    let mut pair = ready_within(limits);
    let (op, request, id) = call_with(&mut pair, reporting(60));
    let token = token_of(&request);
    for step in 1..=20 {
        pair.reply(&report(&token, f64::from(step)));
    }
    assert!(!pair.has_finished(op.id()));
    pair.reply(&text_reply(id, "2"));
    assert_eq!(pair.finished(op).unwrap().text(), "2");
    // Reports under a token of no call count, as any notification does.
    let (op, _, _) = call_with(&mut pair, reporting(60));
    for _ in 0..3 {
        pair.reply(&report("\"elsewhere\"", 1.0));
    }
    assert_eq!(
        pair.finished(op),
        Err(Error::Protocol(ProtocolViolation::TooManyNotifications {
            limit: 2
        }))
    );
}

#[test]
fn in_2026_the_token_joins_the_request_meta_and_stays_through_every_round() {
    let mut config = Pair::config(mcp_sansio::ProtocolChoice::Stateless, &["word_count"]);
    config.roots = Some(vec![Root::new("file:///home/ana/project").unwrap()]);
    let (mut pair, _) = Pair::connected_stateless(config);
    let (op, request, first) = call_with(&mut pair, reporting(60));
    let meta = &request["params"]["_meta"];
    let token = token_of(&request);
    assert_eq!(
        meta["io.modelcontextprotocol/protocolVersion"],
        "2026-07-28"
    );
    assert!(
        meta["io.modelcontextprotocol/clientInfo"].is_object(),
        "{meta}"
    );
    pair.reply(&input_required(
        first,
        r#"{"r":{"method":"roots/list"}}"#,
        r#""s""#,
    ));
    let again = pair.last_sent();
    assert_ne!(pair.last_id(), first, "sent again under a new id");
    assert_eq!(again["params"]["_meta"], *meta, "the same token and meta");
    pair.events.clear();
    pair.reply(&report(&token, 1.0));
    assert!(
        matches!(pair.events[..], [Event::Progress { op: of, .. }] if of == op.id()),
        "{:?}",
        pair.events
    );
    pair.reply(&text_reply(pair.last_id(), "2"));
    assert_eq!(pair.finished(op).unwrap().text(), "2");
}

/// Reading a resource and expanding a prompt wait on terms of their own as a call does: the
/// token in the request, each report the operation's own and restarting its deadline; and
/// a deadline shorter than every operation's ends the operation then, as a timeout.
#[test]
fn resources_and_prompts_wait_on_their_own_terms_as_calls_do() {
    let mut pair = Pair::connected_legacy(&[], r#"{"resources":{},"prompts":{}}"#);
    let plain = pair.client.read_resource("file:///r", pair.now).unwrap();
    pair.drain();
    assert!(pair.last_sent()["params"].get("_meta").is_none());
    let plain_id = pair.last_id();
    let read = pair
        .client
        .read_resource_with("file:///r", reporting(60), pair.now)
        .unwrap();
    pair.drain();
    let request = pair.last_sent();
    assert_eq!(request["method"], "resources/read");
    assert_eq!(request["params"]["uri"], "file:///r");
    let token = token_of(&request);
    let read_id = pair.last_id();
    let prompt = pair
        .client
        .get_prompt_with(
            "review",
            &[("code", "x")],
            CallOptions::new().timeout(Duration::from_secs(2)),
            pair.now,
        )
        .unwrap();
    pair.drain();
    let request = pair.last_sent();
    assert_eq!(request["params"]["arguments"]["code"], "x");
    assert!(request["params"].get("_meta").is_none(), "{request}");
    pair.advance(2_000);
    assert_eq!(
        pair.finished(prompt),
        Err(Error::Timeout {
            operation: "prompts/get"
        })
    );
    pair.advance(7_000);
    pair.events.clear();
    pair.reply(&report(&token, 1.0));
    assert!(
        matches!(pair.events[..], [Event::Progress { op, .. }] if op == read.id()),
        "{:?}",
        pair.events
    );
    // Nineteen seconds from the read, past the ten it had without a report; the plain
    // read, on every operation's thirty, waits too.
    pair.advance(9_999);
    assert!(!pair.has_finished(read.id()));
    let contents = r#"{"contents":[{"uri":"file:///r","text":"hi"}]}"#;
    pair.reply(&format!(
        r#"{{"jsonrpc":"2.0","id":{read_id},"result":{contents}}}"#
    ));
    assert_eq!(pair.finished(read).unwrap()[0].uri, "file:///r");
    pair.reply(&format!(
        r#"{{"jsonrpc":"2.0","id":{plain_id},"result":{contents}}}"#
    ));
    assert_eq!(pair.finished(plain).unwrap().len(), 1);
}
