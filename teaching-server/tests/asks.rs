//! The teaching server's `ask-flood` mode against both drivers: it asks the user ten times
//! at once in the middle of a call, once with an elicitation missing its schema, once for a
//! sample nobody declared, and logs what each question got. The server's own log says what
//! reached it: the application's answers, and the client's refusals.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

mod common;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use common::{args, config, words, Server};
use mcp_sansio::{Asks, Config, Event, Reply, ServerRequest};
use mcp_sansio_host::PaletteConfig;
use mcp_sansio_stdio::{Host, HostServer, StdioClient};
use serde_json::{json, Value};

/// A client of the teaching server that answers elicitation, with room for `waiting`
/// questions at once.
fn asking(waiting: usize) -> Config {
    let mut config = config(&["word_count"]);
    config.asks = Asks::NONE.with_elicitation();
    config.limits.asks_waiting = waiting;
    config
}

/// The call's answer the server gives once its questions got, in order of their ids,
/// `accepted` accepts, `refused` -32603s (past the bound), the schemaless one -32602 and
/// the sample -32601.
fn summary(accepted: usize, refused: usize) -> String {
    let mut lines: Vec<String> = (0..10)
        .map(|n| {
            let got = if n < accepted { "\"accept\"" } else { "-32603" };
            format!("ask-{n:02} {got}")
        })
        .collect();
    assert_eq!(accepted + refused, 10);
    lines.push(String::from("ask-bad -32602"));
    lines.push(String::from("ask-sample -32601"));
    lines.join("\n")
}

/// What the server logged its questions got, by id.
fn logged_answers(server: &Server) -> Vec<(String, Value)> {
    let mut answers: Vec<(String, Value)> = server
        .calls()
        .into_iter()
        .filter_map(|entry| {
            let ask = entry.get("answer_to")?.as_str()?.to_owned();
            Some((ask, entry["got"].clone()))
        })
        .collect();
    answers.sort_by(|a, b| a.0.cmp(&b.0));
    answers
}

#[test]
fn the_blocking_driver_s_responder_answers_every_question_it_may_see() {
    let server = Server::new("ask-flood-blocking");
    let mut client = StdioClient::spawn(&server.command("ask-flood"), asking(16)).unwrap();
    let asked = Arc::new(AtomicUsize::new(0));
    let count = Arc::clone(&asked);
    client.set_responder(move |request: &ServerRequest| {
        assert_eq!(request.message().as_deref(), Some("Name?"));
        count.fetch_add(1, Ordering::Relaxed);
        Reply::accept(&args(r#"{"name":"Ana"}"#))
    });
    client.connect().unwrap();
    client.list_tools().unwrap();
    let result = client.call_tool("word_count", &words()).unwrap();
    assert_eq!(result.text(), summary(10, 0));
    assert_eq!(asked.load(Ordering::Relaxed), 10);
    let answers = logged_answers(&server);
    assert_eq!(answers.len(), 12);
    assert!(answers[..10].iter().all(|(_, got)| *got == json!("accept")));
    client.close(std::time::Duration::from_secs(2)).unwrap();

    // Declaring nothing, every question is refused as a method this client does not have.
    let server = Server::new("ask-flood-none");
    let mut client =
        StdioClient::spawn(&server.command("ask-flood"), config(&["word_count"])).unwrap();
    client.connect().unwrap();
    client.list_tools().unwrap();
    let text = client
        .call_tool("word_count", &words())
        .unwrap()
        .text()
        .into_owned();
    assert_eq!(text.matches("-32601").count(), 12, "{text}");
}

#[tokio::test]
async fn past_the_bound_the_client_refuses_and_the_application_sees_only_what_may_wait() {
    let server = Server::new("ask-flood-async");
    let (handle, mut events) =
        mcp_sansio_tokio::connect_stdio(&server.command("ask-flood"), asking(8))
            .await
            .unwrap();
    handle.list_tools().await.unwrap();
    let words = words();
    let answering = async {
        // Every question the application may see is held before any is answered: the two
        // past the bound are refused by the client meanwhile, whatever reads they came in.
        let mut held = Vec::new();
        while held.len() < 8 {
            if let Some(Event::ServerRequest(request)) = events.recv().await {
                held.push(request.ticket());
            }
        }
        for ticket in held {
            handle.answer(ticket, Reply::decline()).await.unwrap();
        }
    };
    let (called, ()) = tokio::join!(handle.call_tool("word_count", &words), answering);
    let expected = summary(8, 2).replace("\"accept\"", "\"decline\"");
    assert_eq!(called.unwrap().text(), expected);
    let answers = logged_answers(&server);
    let refused = answers
        .iter()
        .filter(|(_, got)| *got == json!(-32603))
        .count();
    assert_eq!(refused, 2, "{answers:?}");
    assert!(
        events.try_recv().is_err(),
        "no question past the bound reached the application"
    );
}

/// The blocking host holds no question for the application to answer later, while the
/// server waits on it: without a responder each is refused at once, and the call is
/// answered; the responder the application sets answers the next call's.
#[test]
fn the_blocking_host_refuses_a_question_until_a_responder_answers_it() {
    let server = Server::new("ask-flood-host");
    let asker = HostServer::new("asker", server.command("ask-flood"), asking(12));
    let (mut host, failures) = Host::start([asker], PaletteConfig::default());
    assert!(failures.is_empty(), "{failures:?}");
    let refused = host.call("word_count", r#"{"text":"a b"}"#);
    assert!(!refused.is_error(), "{}", refused.text());
    assert_eq!(refused.text(), summary(0, 10));
    host.set_responder("asker", |_: &ServerRequest| {
        Reply::accept(&args(r#"{"name":"Ana"}"#))
    })
    .unwrap();
    assert_eq!(
        host.call("word_count", r#"{"text":"a b"}"#).text(),
        summary(10, 0)
    );
    assert_eq!(logged_answers(&server).len(), 24);
    assert!(host.take_events().is_empty(), "no question was kept");
    assert!(host.take_failures().is_empty());
    host.close(common::DEADLINE);
}
