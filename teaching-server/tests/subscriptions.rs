//! Subscriptions against the teaching server as a process: a 2026-07-28 server tells its
//! changes only to a subscription that asked (over HTTP on the subscription's own stream),
//! an earlier revision's server tells them unasked, and what a careless server sends a
//! subscription that it did not ask for never reaches the application.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

mod common;

use std::time::Instant;

use common::{config, words, Served, Server, SLACK};
use mcp_sansio::{
    Error, Event, ListKind, ProtocolChoice, ProtocolVersion, ServerNotification, Subscription,
};
use mcp_sansio_http::HttpClient;
use mcp_sansio_stdio::StdioClient;
use serde_json::json;

fn started(server: &Server, mode: &str, protocol: ProtocolChoice) -> StdioClient {
    let mut config = config(&["word_count"]);
    config.protocol = protocol;
    let mut client = StdioClient::spawn(&server.command(mode), config).unwrap();
    client.connect().unwrap();
    client.list_tools().unwrap();
    client
}

fn tools_changed(events: &[Event]) -> usize {
    events
        .iter()
        .filter(|e| {
            matches!(
                e,
                Event::Notification(ServerNotification::ListChanged(ListKind::Tools))
            )
        })
        .count()
}

#[test]
fn a_2026_server_tells_its_change_to_a_subscription_only_and_a_2025_one_to_anyone() {
    // Unasked, a 2026-07-28 server says nothing: the change is there, unannounced.
    let server = Server::new("subscriptions-unasked");
    let mut client = started(&server, "list-changed", ProtocolChoice::Auto);
    assert_eq!(
        client.client().connection().unwrap().version,
        ProtocolVersion::V2026_07_28
    );
    client.call_tool("word_count", &words()).unwrap();
    assert_eq!(tools_changed(&client.take_events()), 0);
    assert_eq!(client.list_tools().unwrap().tools().len(), 3);
    client.close(SLACK).unwrap();

    // Asked, it says so before the call's answer, on the subscription.
    let server = Server::new("subscriptions-asked");
    let mut client = started(&server, "list-changed", ProtocolChoice::Auto);
    let listening = client.listen(&Subscription::tools()).unwrap();
    assert_eq!(listening.honoured, Subscription::tools());
    client.call_tool("word_count", &words()).unwrap();
    assert_eq!(tools_changed(&client.take_events()), 1);
    client.client().cancel(listening.op).unwrap();
    // The cancel leaves with the next exchange; the server logs it.
    client.call_tool("word_count", &words()).unwrap();
    let seen = server.subscriptions();
    assert_eq!(seen.len(), 2, "{seen:?}");
    assert_eq!(seen[0]["notifications"], json!({"toolsListChanged": true}));
    assert_eq!(seen[1]["unsubscribed"], seen[0]["listen"]);
    client.close(SLACK).unwrap();

    // A 2025 server says it unasked.
    let server = Server::new("subscriptions-2025");
    let mut client = started(&server, "list-changed", ProtocolChoice::Stateful);
    client.call_tool("word_count", &words()).unwrap();
    assert_eq!(tools_changed(&client.take_events()), 1);
    assert!(server.subscriptions().is_empty());
    client.close(SLACK).unwrap();
}

#[test]
fn what_a_careless_server_sends_that_was_not_asked_never_reaches_the_application() {
    let server = Server::new("subscriptions-stray");
    let mut client = started(&server, "stray-changes", ProtocolChoice::Auto);
    let asked = Subscription {
        tools_list_changed: true,
        resources: vec!["file:///kept".into()],
        ..Subscription::default()
    };
    let listening = client.listen(&asked).unwrap();
    // Acknowledged as more than asked, and less: it honours what was asked and it has.
    assert_eq!(listening.honoured, Subscription::tools());
    for _ in 0..3 {
        assert_eq!(
            client.call_tool("word_count", &words()).unwrap().text(),
            "4"
        );
    }
    // Fifteen stray messages later, each before its call's answer: nothing heard, nothing
    // failed, the subscription stands.
    let events = client.take_events();
    assert!(events.is_empty(), "{events:?}");
    assert!(client.client().is_pending(listening.op));
    assert!(!client.client().is_failed());
    assert_eq!(server.calls().len(), 3);
    client.close(SLACK).unwrap();
}

/// A 2026-07-28 HTTP client of `served`, connected and listed (two tools), allowed to count
/// words and letters.
fn over_http(served: &Served) -> HttpClient {
    let mut client = HttpClient::new(&served.url, config(&["word_count", "letter_count"])).unwrap();
    assert_eq!(
        client.connect().unwrap().version,
        ProtocolVersion::V2026_07_28
    );
    assert_eq!(client.list_tools().unwrap().tools().len(), 2);
    client
}

/// Waits, at most [`SLACK`], for an event `wanted` picks, keeping every event seen on the
/// way: over HTTP the subscription's stream is not the call's, so what the server sent on
/// it before the call's answer may be read after it.
fn wait_for(client: &mut HttpClient, wanted: impl Fn(&Event) -> bool) -> Vec<Event> {
    let started = Instant::now();
    let mut seen = client.take_events();
    while !seen.iter().any(&wanted) {
        assert!(started.elapsed() < SLACK, "never came; saw {seen:?}");
        seen.extend(client.wait_events(SLACK));
    }
    seen
}

#[test]
fn over_http_a_change_comes_on_the_subscription_s_own_stream_until_it_ends() {
    let served = Served::start("subscriptions-http", &["--mode", "list-changed"]);
    let mut client = over_http(&served);
    let listening = client.listen(&Subscription::tools()).unwrap();
    assert_eq!(listening.honoured, Subscription::tools());
    // The call's answer is its own POST's; the change comes on the listen's stream.
    assert_eq!(
        client.call_tool("word_count", &words()).unwrap().text(),
        "4"
    );
    let seen = wait_for(&mut client, |e| tools_changed(std::slice::from_ref(e)) == 1);
    assert_eq!(tools_changed(&seen), 1, "{seen:?}");
    assert!(client.client().is_pending(listening.op));
    assert_eq!(client.list_tools().unwrap().tools().len(), 3);
    assert_eq!(
        client
            .call_tool("letter_count", &common::args(r#"{"text":"ab c"}"#))
            .unwrap()
            .text(),
        "3"
    );
    // Cancelled, its stream is dropped: it ends as cancelled, and nothing else is heard.
    client.client().cancel(listening.op).unwrap();
    let seen = wait_for(&mut client, |e| matches!(e, Event::Finished { .. }));
    assert!(
        seen.iter().any(|e| matches!(e, Event::Finished { op, outcome: Err(Error::Cancelled) } if *op == listening.op.id())),
        "{seen:?}"
    );
    // The server notices the closed stream at its next keep-alive, and logs the cancel.
    common::eventually("the server hears the cancel", || {
        served.subscriptions().len() == 2
    });
    let subscriptions = served.subscriptions();
    assert_eq!(
        subscriptions[0]["notifications"],
        json!({"toolsListChanged": true})
    );
    assert_eq!(subscriptions[1]["unsubscribed"], subscriptions[0]["listen"]);
    assert_eq!(served.calls().len(), 2);
    client.close();
}

#[test]
fn over_http_the_server_s_end_of_a_subscription_ends_it_and_strays_are_not_heard() {
    // The server adds a tool and ends the subscription without a word: it ends, complete.
    let served = Served::start("subscriptions-http-end", &["--mode", "end-subscriptions"]);
    let mut client = over_http(&served);
    let listening = client.listen(&Subscription::tools()).unwrap();
    assert_eq!(
        client.call_tool("word_count", &words()).unwrap().text(),
        "4"
    );
    let ended =
        |e: &Event| matches!(e, Event::Finished { op, outcome: Ok(_) } if *op == listening.op.id());
    let seen = wait_for(&mut client, ended);
    assert_eq!(tools_changed(&seen), 0, "{seen:?}");
    assert!(!client.client().is_pending(listening.op));
    assert!(!client.client().is_failed());
    let subscriptions = served.subscriptions();
    assert_eq!(subscriptions[1]["ended"], subscriptions[0]["listen"]);
    client.close();

    // Strays come on the stream, then a second subscription, whose acknowledgement comes
    // on a stream of its own after them: none of them was asked for, none is heard.
    let served = Served::start("subscriptions-http-stray", &["--mode", "stray-changes"]);
    let mut client = over_http(&served);
    let first = client.listen(&Subscription::tools()).unwrap();
    assert_eq!(first.honoured, Subscription::tools());
    for _ in 0..3 {
        assert_eq!(
            client.call_tool("word_count", &words()).unwrap().text(),
            "4"
        );
    }
    // The server holds one subscription: a second one ends the first one's stream, after
    // its fifteen strays. Its end is the marker that they were all read.
    let second = client.listen(&Subscription::tools()).unwrap();
    let seen = wait_for(
        &mut client,
        |e| matches!(e, Event::Finished { op, .. } if *op == first.op.id()),
    );
    assert_eq!(seen.len(), 1, "only the first stream's end: {seen:?}");
    assert!(client.client().is_pending(second.op));
    assert!(!client.client().is_failed());
    assert_eq!(served.calls().len(), 3);
    client.close();
}

#[test]
fn a_stdio_client_waits_for_what_arrives_and_no_longer_than_it_is_told() {
    let server = Server::new("wait-events");
    let mut client = started(&server, "normal", ProtocolChoice::Auto);
    // Nothing comes: nothing, once the time is up.
    assert!(client
        .wait_events(std::time::Duration::from_millis(50))
        .unwrap()
        .is_empty());
    // A call queued on the core and not awaited: its end is an event, and the wait sends
    // the call and brings its answer.
    let now = client.now();
    let op = client
        .client()
        .call_tool("word_count", &words(), now)
        .unwrap();
    let events = client.wait_events(SLACK).unwrap();
    assert!(
        events
            .iter()
            .any(|e| matches!(e, Event::Finished { op: done, outcome: Ok(_) } if *done == op.id())),
        "{events:?}"
    );
    assert_eq!(server.calls().len(), 1);
    client.close(SLACK).unwrap();
}
