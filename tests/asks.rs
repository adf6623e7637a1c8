//! Elicitation and sampling: declared only as the application says, checked for shape,
//! handed to the application, bounded, and answered exactly as the application answers.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

mod common;

use common::{input_required, text_reply, Pair, TOOLS};
use mcp_sansio::{
    AskKind, Asks, Config, ElicitationMode, Error, Event, Incompatible, Limits, Misuse,
    ProtocolChoice, ProtocolVersion, ProtocolViolation, RawObject, Reply, Root, ServerNotification,
    ServerRequest,
};
use serde_json::{json, Value};

const FORM: &str = r#"{"message":"Your name?","requestedSchema":{"type":"object","properties":{"name":{"type":"string"}}}}"#;
const SAMPLE: &str =
    r#"{"messages":[{"role":"user","content":{"type":"text","text":"hi"}}],"maxTokens":100}"#;

fn config(asks: Asks) -> Config {
    let mut config = Pair::config(
        ProtocolChoice::Pinned(ProtocolVersion::V2025_11_25),
        &["word_count"],
    );
    config.asks = asks;
    config
}

fn raw(text: &str) -> RawObject {
    RawObject::parse(text, &Limits::default()).unwrap()
}

/// The server sends request `method` with `params` (JSON text) under id `id` (JSON text).
fn ask(pair: &mut Pair, id: &str, method: &str, params: &str) {
    pair.reply(&format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"{method}","params":{params}}}"#
    ));
}

/// The server requests the client handed to the application, taken from its events.
fn asked(pair: &mut Pair) -> Vec<ServerRequest> {
    let mut asked = Vec::new();
    pair.events.retain(|event| match event {
        Event::ServerRequest(request) => {
            asked.push(request.clone());
            false
        }
        _ => true,
    });
    asked
}

/// The one frame the client sent since the last look, parsed.
fn answer(pair: &mut Pair) -> Value {
    assert_eq!(pair.sent.len(), 1, "one answer: {:?}", pair.sent);
    let frame = pair.last_sent();
    pair.sent.clear();
    frame
}

/// The one question handed over is a URL elicitation, and the user went: accepted.
fn user_went_to_the_url(pair: &mut Pair) {
    let request = asked(pair).remove(0);
    assert_eq!(request.kind(), AskKind::Elicitation(ElicitationMode::Url));
    pair.client
        .answer(request.ticket(), Reply::accepted())
        .unwrap();
    pair.drain();
}

#[test]
fn nothing_is_declared_or_handed_on_unless_the_application_answers_it() {
    let (mut pair, capabilities) = Pair::connected_2025(config(Asks::NONE));
    assert_eq!(capabilities, json!({}));
    ask(&mut pair, "1", "elicitation/create", FORM);
    ask(&mut pair, "2", "sampling/createMessage", SAMPLE);
    assert!(asked(&mut pair).is_empty());
    assert_eq!(pair.sent.len(), 2);
    for (frame, id) in pair.sent.iter().zip([1, 2]) {
        let frame: Value = serde_json::from_str(frame).unwrap();
        assert_eq!(
            frame,
            json!({"jsonrpc": "2.0", "id": id,
            "error": {"code": -32601, "message": "Method not found"}})
        );
    }

    // Each declaration names exactly what the application answers, beside its roots.
    let declared = |asks: Asks, roots: bool| {
        let mut config = config(asks);
        config.roots = roots.then(Vec::new);
        Pair::connected_2025(config).1
    };
    assert_eq!(
        declared(Asks::NONE.with_elicitation(), false),
        json!({"elicitation": {"form": {}}})
    );
    assert_eq!(
        declared(Asks::NONE.with_url_elicitation().with_sampling(), false),
        json!({"elicitation": {"url": {}}, "sampling": {}})
    );
    assert_eq!(
        declared(
            Asks::NONE
                .with_elicitation()
                .with_url_elicitation()
                .with_sampling(),
            true
        ),
        json!({"roots": {"listChanged": true}, "elicitation": {"form": {}, "url": {}},
               "sampling": {}})
    );
}

#[test]
fn an_elicitation_inside_a_call_waits_for_the_application_and_gets_its_answer_exactly() {
    let (mut pair, _) = Pair::connected_2025(config(Asks::NONE.with_elicitation()));
    pair.list(TOOLS);
    let (op, id) = pair.call("word_count", r#"{"text":"a b"}"#);
    pair.sent.clear();
    ask(&mut pair, r#""e-1""#, "elicitation/create", FORM);
    // Nothing is answered for the application.
    assert!(pair.sent.is_empty(), "{:?}", pair.sent);
    let [request] = <[ServerRequest; 1]>::try_from(asked(&mut pair)).unwrap();
    assert_eq!(request.kind(), AskKind::Elicitation(ElicitationMode::Form));
    assert_eq!(request.message().as_deref(), Some("Your name?"));
    assert_eq!(request.params().as_str(), FORM);

    // The user's values go back under the server's own id, unnormalised.
    let values = raw(r#"{"name":"Ana","age":30.0}"#);
    pair.client
        .answer(request.ticket(), Reply::accept(&values))
        .unwrap();
    pair.drain();
    assert_eq!(
        pair.sent,
        [
            r#"{"jsonrpc":"2.0","id":"e-1","result":{"action":"accept","content":{"name":"Ana","age":30.0}}}"#
        ]
    );
    pair.sent.clear();
    // Once answered, it waits no more.
    assert_eq!(
        pair.client.answer(request.ticket(), Reply::decline()),
        Err(Misuse::NotAsked)
    );
    pair.reply(&text_reply(id, "2"));
    pair.finished(op).unwrap();

    // A decline and a cancel are answers too.
    for (n, reply, action) in [
        (2, Reply::decline(), "decline"),
        (3, Reply::cancel(), "cancel"),
    ] {
        ask(&mut pair, &n.to_string(), "elicitation/create", FORM);
        let ticket = asked(&mut pair)[0].ticket();
        pair.client.answer(ticket, reply).unwrap();
        pair.drain();
        assert_eq!(
            answer(&mut pair),
            json!({"jsonrpc": "2.0", "id": n, "result": {"action": action}})
        );
    }
}

#[test]
fn sampling_is_the_application_s_to_give_or_refuse() {
    let (mut pair, _) = Pair::connected_2025(config(Asks::NONE.with_sampling()));
    ask(&mut pair, "5", "sampling/createMessage", SAMPLE);
    let request = asked(&mut pair).remove(0);
    assert_eq!(request.kind(), AskKind::Sampling);
    assert_eq!(request.message(), None);
    let completion =
        r#"{"role":"assistant","content":{"type":"text","text":"hello"},"model":"m-1"}"#;
    pair.client
        .answer(request.ticket(), Reply::Result(raw(completion)))
        .unwrap();
    pair.drain();
    assert_eq!(
        pair.sent,
        [format!(
            r#"{{"jsonrpc":"2.0","id":5,"result":{completion}}}"#
        )]
    );
    pair.sent.clear();

    ask(&mut pair, "6", "sampling/createMessage", SAMPLE);
    let ticket = asked(&mut pair)[0].ticket();
    pair.client
        .answer(ticket, Reply::refuse("the user said no"))
        .unwrap();
    pair.drain();
    assert_eq!(
        answer(&mut pair),
        json!({"jsonrpc": "2.0", "id": 6, "error": {"code": -1, "message": "the user said no"}})
    );
    // An elicitation was not declared: it is not the application's to see.
    ask(&mut pair, "7", "elicitation/create", FORM);
    assert!(asked(&mut pair).is_empty());
    assert_eq!(answer(&mut pair)["error"]["code"], -32601);
}

#[test]
fn a_request_out_of_shape_or_of_a_mode_not_declared_is_refused_unseen() {
    let (mut pair, _) = Pair::connected_2025(config(Asks::NONE.with_elicitation().with_sampling()));
    let url =
        r#"{"mode":"url","message":"Sign in","url":"https://example.com/a","elicitationId":"x"}"#;
    for (method, params) in [
        (
            "elicitation/create",
            r#"{"requestedSchema":{"type":"object"}}"#,
        ),
        ("elicitation/create", r#"{"message":"Your name?"}"#),
        (
            "elicitation/create",
            r#"{"message":7,"requestedSchema":{"type":"object"}}"#,
        ),
        (
            "elicitation/create",
            r#"{"mode":"form","message":"m","requestedSchema":[]}"#,
        ),
        (
            "elicitation/create",
            r#"{"mode":"voice","message":"m","requestedSchema":{}}"#,
        ),
        (
            "elicitation/create",
            r#"{"mode":1,"message":"m","requestedSchema":{}}"#,
        ),
        ("elicitation/create", url),
        ("sampling/createMessage", r#"{"messages":[]}"#),
        ("sampling/createMessage", r#"{"messages":{},"maxTokens":1}"#),
        (
            "sampling/createMessage",
            r#"{"messages":[],"maxTokens":"1"}"#,
        ),
    ] {
        ask(&mut pair, "9", method, params);
        assert!(
            asked(&mut pair).is_empty(),
            "{params} reached the application"
        );
        assert_eq!(answer(&mut pair)["error"]["code"], -32602, "{params}");
    }
    pair.reply(r#"{"jsonrpc":"2.0","id":10,"method":"elicitation/create"}"#);
    assert_eq!(answer(&mut pair)["error"]["code"], -32602);

    // With URL mode declared alone, a URL elicitation is the application's and a form not.
    let (mut pair, _) = Pair::connected_2025(config(Asks::NONE.with_url_elicitation()));
    ask(&mut pair, "11", "elicitation/create", url);
    user_went_to_the_url(&mut pair);
    assert_eq!(
        answer(&mut pair),
        json!({"jsonrpc": "2.0", "id": 11, "result": {"action": "accept"}})
    );
    // The server says when the interaction at the URL has ended; without an id, the
    // notification is kept whole.
    pair.reply(r#"{"jsonrpc":"2.0","method":"notifications/elicitation/complete","params":{"elicitationId":"x"}}"#);
    pair.reply(r#"{"jsonrpc":"2.0","method":"notifications/elicitation/complete","params":{}}"#);
    let notes: Vec<&ServerNotification> = pair
        .events
        .iter()
        .filter_map(|event| match event {
            Event::Notification(note) => Some(note),
            _ => None,
        })
        .collect();
    assert_eq!(
        notes[0],
        &ServerNotification::ElicitationComplete {
            elicitation_id: String::from("x")
        }
    );
    assert!(
        matches!(notes[1], ServerNotification::Other(_)),
        "{:?}",
        notes[1]
    );
    // A form, or (in 2025-11-25) a URL without its elicitationId, is not.
    let no_id = r#"{"mode":"url","message":"Sign in","url":"https://example.com/a"}"#;
    for params in [FORM, no_id] {
        ask(&mut pair, "12", "elicitation/create", params);
        assert!(asked(&mut pair).is_empty());
        assert_eq!(answer(&mut pair)["error"]["code"], -32602);
    }
}

#[test]
fn no_more_than_the_bound_wait_and_a_withdrawn_request_waits_no_more() {
    let mut config = config(Asks::NONE.with_elicitation());
    config.limits.asks_waiting = 2;
    let (mut pair, _) = Pair::connected_2025(config);
    for id in 1..=3 {
        ask(&mut pair, &id.to_string(), "elicitation/create", FORM);
    }
    let waiting = asked(&mut pair);
    assert_eq!(waiting.len(), 2);
    assert_eq!(
        answer(&mut pair),
        json!({"jsonrpc": "2.0", "id": 3, "error": {"code": -32603,
               "message": "too many requests wait for the application's answer"}})
    );
    // The server withdraws request 1: its answer is not sent, and it frees a place.
    pair.reply(r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}"#);
    assert_eq!(
        pair.client.answer(waiting[0].ticket(), Reply::decline()),
        Err(Misuse::NotAsked)
    );
    pair.drain();
    assert!(pair.sent.is_empty(), "{:?}", pair.sent);
    ask(&mut pair, r#""4""#, "elicitation/create", FORM);
    let fourth = asked(&mut pair).remove(0);
    // A withdrawal of a string id does not touch an integer one.
    pair.reply(
        r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"2"}}"#,
    );
    pair.client
        .answer(waiting[1].ticket(), Reply::cancel())
        .unwrap();
    pair.client
        .answer(fourth.ticket(), Reply::cancel())
        .unwrap();
    pair.drain();
    let ids: Vec<Value> = pair
        .sent
        .iter()
        .map(|frame| serde_json::from_str::<Value>(frame).unwrap()["id"].clone())
        .collect();
    assert_eq!(ids, [json!(2), json!("4")]);

    // A connection that failed answers nothing more.
    pair.sent.clear();
    ask(&mut pair, "5", "elicitation/create", FORM);
    let fifth = asked(&mut pair).remove(0);
    pair.client.handle_close();
    assert_eq!(
        pair.client.answer(fifth.ticket(), Reply::decline()),
        Err(Misuse::ConnectionFailed)
    );
}

#[test]
fn a_responder_answers_as_events_are_taken_and_an_answer_too_long_becomes_an_error() {
    let mut config = config(Asks::NONE.with_elicitation());
    config.limits = Limits::teaching();
    let (mut pair, _) = Pair::connected_2025(config);
    // Taken out of order of the drain, so the responder sees them.
    let mut seen = Vec::new();
    let mut responder = |request: &ServerRequest| {
        seen.push(request.message().unwrap());
        if seen.len() == 1 {
            Reply::accept(&raw(r#"{"name":"Ana"}"#))
        } else {
            let long = "x".repeat(70 * 1024);
            Reply::accept(&raw(&format!(r#"{{"name":"{long}"}}"#)))
        }
    };
    for id in [1, 2] {
        pair.client.handle_input(
            format!(
                r#"{{"jsonrpc":"2.0","id":{id},"method":"elicitation/create","params":{FORM}}}"#
            )
            .as_bytes(),
            pair.now,
        );
        pair.client.handle_input(b"\n", pair.now);
        assert_eq!(pair.client.poll_event_with(Some(&mut responder)), None);
    }
    assert_eq!(seen, ["Your name?", "Your name?"]);
    pair.drain();
    let answers: Vec<Value> = pair
        .sent
        .iter()
        .map(|frame| serde_json::from_str(frame).unwrap())
        .collect();
    assert_eq!(
        answers,
        [
            json!({"jsonrpc": "2.0", "id": 1,
                   "result": {"action": "accept", "content": {"name": "Ana"}}}),
            json!({"jsonrpc": "2.0", "id": 2, "error": {"code": -32603,
                   "message": "the application's answer is too long"}}),
        ]
    );
}

/// A 2026-07-28 client answering `asks`, with one root, connected and listed.
fn stateless(asks: Asks, limits: Limits) -> (Pair, Value) {
    let mut config = config(asks);
    config.roots = Some(vec![Root::new("file:///a").unwrap()]);
    config.limits = limits;
    Pair::connected_stateless(config)
}

/// What 2026-07-28 calls ask for: the roots, a user, a model.
const THREE: &str = concat!(
    r#"{"r":{"method":"roots/list"},"#,
    r#""e":{"method":"elicitation/create","params":{"message":"Your name?","requestedSchema":{"type":"object"}}},"#,
    r#""s":{"method":"sampling/createMessage","params":{"messages":[],"maxTokens":9}}}"#
);

#[test]
fn a_2026_call_waits_for_the_application_s_answers_and_goes_again_with_them() {
    let (mut pair, declared) = stateless(
        Asks::NONE.with_elicitation().with_sampling(),
        Limits::default(),
    );
    assert_eq!(
        declared,
        json!({"roots": {}, "elicitation": {"form": {}}, "sampling": {}})
    );
    let (op, first) = pair.call("word_count", r#"{"text":"a b"}"#);
    let deadline = pair.client.poll_timeout();
    pair.sent.clear();
    pair.reply(&input_required(first, THREE, r#"{"k":2.50}"#));
    // The roots are the client's to give; the rest waits for the application, and so does
    // the call, under its one deadline.
    assert!(pair.sent.is_empty(), "{:?}", pair.sent);
    let questions = asked(&mut pair);
    let kinds: Vec<AskKind> = questions.iter().map(ServerRequest::kind).collect();
    assert_eq!(
        kinds,
        [
            AskKind::Elicitation(ElicitationMode::Form),
            AskKind::Sampling
        ]
    );
    assert!(pair.client.is_pending(op) && !pair.has_finished(op));
    assert_eq!(pair.client.poll_timeout(), deadline);
    assert_eq!(pair.client.in_flight(), 0, "no request is out meanwhile");

    // Answered in any order; the call goes once all are in.
    let completion =
        raw(r#"{"role":"assistant","content":{"type":"text","text":"x"},"model":"m"}"#);
    pair.client
        .answer(questions[1].ticket(), Reply::Result(completion))
        .unwrap();
    pair.drain();
    assert!(pair.sent.is_empty(), "{:?}", pair.sent);
    pair.client
        .answer(
            questions[0].ticket(),
            Reply::accept(&raw(r#"{"name":"Ana"}"#)),
        )
        .unwrap();
    pair.drain();
    assert_eq!(pair.sent.len(), 1);
    let again = pair.last_sent();
    assert_ne!(pair.last_id(), first, "sent again under a new id");
    assert_eq!(again["params"]["arguments"], json!({"text": "a b"}));
    assert!(
        pair.sent[0].contains(concat!(
            r#""inputResponses":{"r":{"roots":[{"uri":"file:///a"}]},"#,
            r#""e":{"action":"accept","content":{"name":"Ana"}},"#,
            r#""s":{"role":"assistant","content":{"type":"text","text":"x"},"model":"m"}},"#,
            r#""requestState":{"k":2.50}"#
        )),
        "{}",
        pair.sent[0]
    );
    assert_eq!(
        pair.client.answer(questions[0].ticket(), Reply::decline()),
        Err(Misuse::NotAsked)
    );
    pair.reply(&text_reply(pair.last_id(), "2"));
    assert_eq!(pair.finished(op).unwrap().text(), "2");
}

#[test]
fn a_2026_url_elicitation_has_no_id_and_is_answered_all_the_same() {
    let (mut pair, declared) = stateless(Asks::NONE.with_url_elicitation(), Limits::default());
    assert_eq!(declared, json!({"roots": {}, "elicitation": {"url": {}}}));
    let (op, id) = pair.call("word_count", r#"{"text":"a"}"#);
    pair.reply(&input_required(
        id,
        r#"{"u":{"method":"elicitation/create","params":{"mode":"url","message":"Sign in","url":"https://example.com/a"}}}"#,
        r#""s""#,
    ));
    user_went_to_the_url(&mut pair);
    assert_eq!(
        pair.last_sent()["params"]["inputResponses"],
        json!({"u": {"action": "accept"}})
    );
    pair.reply(&text_reply(pair.last_id(), "1"));
    assert_eq!(pair.finished(op).unwrap().text(), "1");
}

#[test]
fn a_2026_call_the_application_refuses_or_lets_run_out_ends_without_going_again() {
    let asks = Asks::NONE.with_elicitation().with_sampling();
    // Refused: the call ends with the application's error, and its other question with it.
    let (mut pair, _) = stateless(asks, Limits::default());
    let (op, id) = pair.call("word_count", r#"{"text":"a"}"#);
    pair.sent.clear();
    pair.reply(&input_required(id, THREE, r#""s""#));
    let questions = asked(&mut pair);
    pair.client
        .answer(questions[1].ticket(), Reply::refuse("no model for you"))
        .unwrap();
    pair.drain();
    assert!(matches!(
        pair.finished(op),
        Err(Error::Refused(e)) if e.message == "no model for you"
    ));
    assert_eq!(
        pair.client.answer(questions[0].ticket(), Reply::decline()),
        Err(Misuse::NotAsked)
    );
    pair.drain();
    assert!(pair.sent.is_empty(), "{:?}", pair.sent);

    // Its deadline passes while it waits: a timeout, and nothing to cancel with the server.
    let (op, id) = pair.call("word_count", r#"{"text":"a"}"#);
    pair.sent.clear();
    pair.reply(&input_required(id, THREE, r#""s""#));
    let waiting = asked(&mut pair);
    pair.jump_to_next_timeout();
    assert_eq!(
        pair.finished(op),
        Err(Error::Timeout {
            operation: "tools/call"
        })
    );
    assert!(pair.sent.is_empty(), "{:?}", pair.sent);
    assert_eq!(
        pair.client.answer(waiting[0].ticket(), Reply::decline()),
        Err(Misuse::NotAsked)
    );
    assert_eq!(pair.client.poll_timeout(), None);

    // Cancelled by the application while it waits.
    let (op, id) = pair.call("word_count", r#"{"text":"a"}"#);
    pair.reply(&input_required(id, THREE, r#""s""#));
    asked(&mut pair);
    pair.client.cancel(op).unwrap();
    pair.drain();
    assert_eq!(pair.finished(op), Err(Error::Cancelled));
    assert!(!pair.client.is_pending(op));

    // The server's output ends while one waits: it ends with the connection.
    let (op, id) = pair.call("word_count", r#"{"text":"a"}"#);
    pair.reply(&input_required(id, THREE, r#""s""#));
    let waiting = asked(&mut pair);
    pair.client.handle_close();
    pair.drain();
    assert_eq!(pair.finished(op), Err(Error::Closed));
    assert_eq!(
        pair.client.answer(waiting[0].ticket(), Reply::decline()),
        Err(Misuse::ConnectionFailed)
    );
}

#[test]
fn a_2026_call_asking_past_the_bound_or_out_of_shape_fails_with_nothing_sent() {
    let mut limits = Limits::default();
    limits.asks_waiting = 1;
    let (mut pair, _) = stateless(Asks::NONE.with_elicitation().with_sampling(), limits);
    let (op, id) = pair.call("word_count", r#"{"text":"a"}"#);
    pair.sent.clear();
    pair.reply(&input_required(id, THREE, r#""s""#));
    assert_eq!(
        pair.finished(op),
        Err(Error::Protocol(ProtocolViolation::TooManyAsks { limit: 1 }))
    );
    assert!(asked(&mut pair).is_empty());

    for (requests, malformed) in [
        (
            r#"{"e":{"method":"elicitation/create","params":{"message":"m"}}}"#,
            true,
        ),
        (r#"{"e":{"method":"elicitation/create"}}"#, true),
        (
            r#"{"u":{"method":"elicitation/create","params":{"mode":"url","message":"m","url":"u","elicitationId":"i"}}}"#,
            false,
        ),
        (r#"{"x":{"method":"tasks/get","params":{}}}"#, false),
    ] {
        let (op, id) = pair.call("word_count", r#"{"text":"a"}"#);
        pair.reply(&input_required(id, requests, r#""s""#));
        let outcome = pair.finished(op);
        if malformed {
            assert!(
                matches!(
                    outcome,
                    Err(Error::Protocol(ProtocolViolation::InvalidResult { .. }))
                ),
                "{requests}: {outcome:?}"
            );
        } else {
            assert_eq!(
                outcome,
                Err(Error::Incompatible(Incompatible::InputRequired)),
                "{requests}"
            );
        }
        assert!(asked(&mut pair).is_empty());
    }
    assert!(pair
        .sent
        .iter()
        .all(|frame| !frame.contains("inputResponses")));
}
