//! Subscriptions against the teaching server as a process: a 2026-07-28 server tells its
//! changes only to a subscription that asked, an earlier revision's server tells them
//! unasked, and what a careless server sends a subscription that it did not ask for never
//! reaches the application.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

mod common;

use common::{config, words, Server, SLACK};
use mcp_sansio::{
    Event, ListKind, ProtocolChoice, ProtocolVersion, ServerNotification, Subscription,
};
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
