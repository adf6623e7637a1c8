//! The async host (`mcp_sansio_tokio::Host`) over real teaching-server processes, started by
//! the host or reached over HTTP: calls from many tasks at once reach the server behind each
//! tool; what a server says without being asked (a list change, its death, a question for
//! the user) is acted on by its watcher with no call in flight; servers join and leave a
//! running host; the servers' own logs are the witnesses.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

mod common;

use common::{config, eventually_async as eventually, process_exists, Served, Server};
use mcp_sansio::{Asks, CallOptions, Event, ProtocolChoice, Reply, ServerNotification};
use mcp_sansio_host::{PaletteConfig, Provider, SEARCH_TOOL};
use mcp_sansio_stdio::HostServer;
use mcp_sansio_tokio::{AsyncError, Host, HostError, HostEvents, HostLimits, ServerFailure};
use serde_json::json;
use tokio::sync::watch;

/// Teaching server `id` in `mode`, allowed `allow`, logging to `server`'s folder.
fn teaching(id: &str, server: &Server, mode: &str, allow: &[&str]) -> HostServer {
    HostServer::new(id, server.command(mode), config(allow))
}

/// As [`teaching`], in a 2025 session, where the server says its list changed unasked.
fn teaching_2025(id: &str, server: &Server, mode: &str, allow: &[&str]) -> HostServer {
    let mut server = teaching(id, server, mode, allow);
    server.config.protocol = ProtocolChoice::Stateful;
    server
}

/// A host over `stock` alone in `mode` (2025), allowed `word_count` and the `letter_count`
/// the mode adds after its first call, which this makes; with a receiver of the palette's
/// changes taken before that call, which has heard none yet.
async fn changing_stock(stock: &Server, mode: &str) -> (Host, watch::Receiver<u64>) {
    let server = teaching_2025("stock", stock, mode, &["word_count", "letter_count"]);
    let (host, _events, failures) = start(vec![server]).await;
    assert!(failures.is_empty(), "{failures:?}");
    assert_eq!(offered(&host), ["word_count"]);
    let changes = host.palette_changes();
    assert_eq!(
        host.call("word_count", r#"{"text":"a b c"}"#).await.text(),
        "3"
    );
    (host, changes)
}

async fn start(servers: Vec<HostServer>) -> (Host, HostEvents, Vec<ServerFailure>) {
    Host::start(servers, PaletteConfig::default(), HostLimits::default()).await
}

/// The model-facing names the palette offers, sorted.
fn offered(host: &Host) -> Vec<String> {
    let mut names: Vec<String> =
        host.with_palette(|p| p.tools().map(|t| t.name.to_owned()).collect());
    names.sort();
    names
}

/// How many times `server` has served its tool list.
fn listings(server: &Server) -> usize {
    server
        .calls()
        .iter()
        .filter(|entry| entry.get("listed").is_some())
        .count()
}

fn ids(failures: &[ServerFailure]) -> Vec<&str> {
    failures.iter().map(|f| f.id.as_str()).collect()
}

#[tokio::test]
async fn what_cannot_join_is_reported_in_order_and_each_call_reaches_its_own_server() {
    let (stock, twice, support, old) = (
        Server::new("ahost-stock"),
        Server::new("ahost-twice"),
        Server::new("ahost-support"),
        Server::new("ahost-old"),
    );
    let servers = vec![
        teaching("stock", &stock, "normal", &["word_count"]),
        common::missing_server(),
        teaching("stock", &twice, "support", &["process_refund"]),
        teaching("support", &support, "support", &["process_refund"]),
        teaching("old", &old, "old-version", &["word_count"]),
    ];
    let (host, _events, failures) = start(servers).await;
    assert_eq!(ids(&failures), ["missing", "stock", "old"], "{failures:?}");
    assert!(
        matches!(&failures[0].error, HostError::Driver(AsyncError::Spawn(_))),
        "{}",
        failures[0]
    );
    assert!(
        matches!(&failures[1].error, HostError::DuplicateId { id } if id == "stock"),
        "{}",
        failures[1]
    );
    assert!(!twice.dir.join("server.pids").exists(), "the twin started");
    assert!(
        failures[2].to_string().contains("incompatible"),
        "{}",
        failures[2]
    );
    assert_eq!(offered(&host), ["process_refund", "word_count"]);

    // Two calls at once, each to its own server; each server saw only its own.
    let (count, refund) = tokio::join!(
        host.call("word_count", r#"{"text":"a b c"}"#),
        host.call("process_refund", r#"{"order_id":"ORD-1","amount":2}"#),
    );
    assert_eq!(count.text(), "3");
    assert_eq!(refund.text(), "refunded 2.00 on ORD-1");
    assert_eq!(stock.calls().len(), 1);
    assert_eq!(support.calls()[0]["name"], "process_refund");

    // Refused calls send nothing; the search tool is the host's own.
    let refused = host.call("place_purchase", "{}").await;
    assert_eq!(
        refused.text(),
        "not called: there is no tool named 'place_purchase'; call one of the tools offered"
    );
    let found = host
        .call(SEARCH_TOOL, r#"{"query":"refund an order"}"#)
        .await;
    assert!(found.text().starts_with("process_refund"), "{found:?}");
    let disclosed = host.offer_disclosed(Provider::Anthropic);
    assert_eq!(disclosed[1]["name"], "process_refund", "{disclosed}");
    host.hide_all();
    let hidden = host.offer_disclosed(Provider::Anthropic);
    assert_eq!(hidden.as_array().map(Vec::len), Some(1), "{hidden}");
    assert_eq!(stock.calls().len(), 1);
    assert_eq!(support.calls().len(), 1);

    let pids: Vec<u32> = ["stock", "support"]
        .iter()
        .map(|id| host.server(id).unwrap().pid().unwrap())
        .collect();
    let closed = host.close().await;
    assert_eq!(closed.len(), 2);
    for (id, status) in closed {
        assert!(status.is_ok(), "{id}: {status:?}");
    }
    for pid in pids {
        assert!(!process_exists(pid), "{pid} still runs");
    }
    assert!(host.with_palette(|p| p.tools().next().is_none()));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn calls_from_many_tasks_at_once_each_get_their_own_answer() {
    let (stock, support) = (Server::new("ahost-many"), Server::new("ahost-many-s"));
    // The stock server answers after up to 50 ms, set by each request's id: out of order.
    let parallel = stock.command("parallel").args(["--delay-ms", "50"]);
    let servers = vec![
        HostServer::new("stock", parallel, config(&["word_count"])),
        teaching("support", &support, "support", &["process_refund"]),
    ];
    let (host, _events, failures) = start(servers).await;
    assert!(failures.is_empty(), "{failures:?}");
    let tasks: Vec<_> = (1..=16_usize)
        .map(|n| {
            let host = host.clone();
            tokio::spawn(async move {
                if n % 2 == 0 {
                    let text = vec!["w"; n].join(" ");
                    let got = host
                        .call("word_count", &json!({ "text": text }).to_string())
                        .await;
                    (got.text().to_owned(), n.to_string())
                } else {
                    let order = format!("ORD-{n}");
                    let got = host
                        .call(
                            "process_refund",
                            &json!({"order_id": order, "amount": n}).to_string(),
                        )
                        .await;
                    (got.text().to_owned(), format!("refunded {n}.00 on {order}"))
                }
            })
        })
        .collect();
    for task in tasks {
        let (got, expected) = task.await.unwrap();
        assert_eq!(got, expected);
    }
    assert_eq!(stock.calls().len(), 8);
    assert_eq!(support.calls().len(), 8);
    host.close().await;
}

#[tokio::test]
async fn a_server_that_dies_leaves_the_palette_with_no_call_in_flight() {
    let (stock, support) = (Server::new("ahost-dies"), Server::new("ahost-dies-s"));
    let servers = vec![
        teaching("stock", &stock, "normal", &["word_count"]),
        teaching("support", &support, "support", &["search_policy"]),
    ];
    let (host, _events, failures) = start(servers).await;
    assert!(failures.is_empty(), "{failures:?}");
    let pid = host.server("support").unwrap().pid().unwrap();
    common::kill(pid);
    // Its watcher sees the connection end: it leaves before anyone calls it.
    let mut gone = Vec::new();
    eventually("the dead server is reported", || {
        gone.extend(host.take_failures());
        !gone.is_empty()
    })
    .await;
    assert_eq!(ids(&gone), ["support"]);
    assert_eq!(offered(&host), ["word_count"]);
    assert!(host.server("support").is_none());
    let after = host.call("search_policy", r#"{"query":"window"}"#).await;
    assert_eq!(
        after.text(),
        "not called: there is no tool named 'search_policy'; call one of the tools offered"
    );
    let found = host
        .call(SEARCH_TOOL, r#"{"query":"refund policy window"}"#)
        .await;
    assert!(!found.text().contains("search_policy"), "{found:?}");
    assert_eq!(
        host.call("word_count", r#"{"text":"a b"}"#).await.text(),
        "2"
    );
    assert_eq!(host.close().await.len(), 1);
}

/// A list change said unasked (2025-11-25) is listed by the server's watcher, not by the
/// next call: the new tool is offered, and surviving names stay.
#[tokio::test]
async fn a_list_change_said_unasked_is_listed_by_the_watcher() {
    let stock = Server::new("ahost-changed");
    let (host, _changes) = changing_stock(&stock, "list-changed").await;
    eventually("the new tool is offered", || offered(&host).len() == 2).await;
    assert_eq!(offered(&host), ["letter_count", "word_count"]);
    assert_eq!(
        host.call("letter_count", r#"{"text":"ab c"}"#).await.text(),
        "3"
    );
    assert!(host.take_failures().is_empty());
    host.close().await;
}

/// In 2026-07-28 a server says its list changed only on a subscription: the host holds one,
/// and when the server ends it, makes it again and lists again (changes may have gone
/// unheard meanwhile).
#[tokio::test]
async fn in_2026_the_host_listens_and_makes_an_ended_subscription_again() {
    for mode in ["list-changed", "end-subscriptions"] {
        let stock = Server::new(&format!("ahost-{mode}"));
        let server = teaching("stock", &stock, mode, &["word_count", "letter_count"]);
        let (host, _events, failures) = start(vec![server]).await;
        assert!(failures.is_empty(), "{mode}: {failures:?}");
        assert_eq!(offered(&host), ["word_count"]);
        assert_eq!(
            host.call("word_count", r#"{"text":"a b c"}"#).await.text(),
            "3"
        );
        eventually("the new tool is offered", || offered(&host).len() == 2).await;
        assert_eq!(
            host.call("letter_count", r#"{"text":"ab c"}"#).await.text(),
            "3"
        );
        let seen = stock.subscriptions();
        assert_eq!(seen[0]["notifications"], json!({"toolsListChanged": true}));
        if mode == "end-subscriptions" {
            eventually("the host listens again", || {
                stock.subscriptions().len() == 3
            })
            .await;
            let seen = stock.subscriptions();
            assert_eq!(seen[1]["ended"], seen[0]["listen"], "{seen:?}");
            assert!(seen[2]["listen"].as_i64() > seen[0]["listen"].as_i64());
        }
        assert!(host.take_failures().is_empty(), "{mode}");
        host.close().await;
    }
}

/// The application hears each change of the palette's tools as it happens, with nothing
/// polled: a server's new listing (said unasked, with no call of the application's in
/// flight), a server added, one removed, one that dies; a receiver taken late waits for the
/// next change, and every receiver hears when the host has gone.
#[tokio::test]
async fn the_application_hears_each_change_of_the_palette_without_polling() {
    let (stock, support, dies) = (
        Server::new("ahost-heard"),
        Server::new("ahost-heard-s"),
        Server::new("ahost-heard-d"),
    );
    let (host, mut changes) = changing_stock(&stock, "change-later").await;
    assert_eq!(*changes.borrow(), 1, "the first listing is a change");
    // The server says its list changed after answering, from a thread of its own.
    assert_eq!(offered(&host), ["word_count"]);
    let heard = tokio::time::timeout(common::SLACK, changes.changed()).await;
    assert!(matches!(heard, Ok(Ok(()))), "{heard:?}");
    assert_eq!(offered(&host), ["letter_count", "word_count"]);
    assert_eq!(*changes.borrow_and_update(), 2);

    let refunds = teaching("support", &support, "support", &["process_refund"]);
    host.add(refunds).await.unwrap();
    assert!(
        changes.has_changed().unwrap(),
        "an added server is a change"
    );
    assert_eq!(*changes.borrow_and_update(), 3);
    host.remove("support").await.unwrap().unwrap();
    assert_eq!(*changes.borrow_and_update(), 4, "a removed one too");
    // A refusal is no change.
    let refused = host
        .add(teaching("stock", &support, "support", &["process_refund"]))
        .await;
    assert!(refused.is_err());
    assert!(!changes.has_changed().unwrap());

    host.add(teaching("dies", &dies, "support", &["search_policy"]))
        .await
        .unwrap();
    let mut late = host.palette_changes();
    assert_eq!(*late.borrow(), 5);
    common::kill(host.server("dies").unwrap().pid().unwrap());
    let heard = tokio::time::timeout(common::SLACK, late.changed()).await;
    assert!(matches!(heard, Ok(Ok(()))), "{heard:?}");
    assert_eq!(ids(&host.take_failures()), ["dies"]);
    assert_eq!(offered(&host), ["letter_count", "word_count"]);
    // Both changes since the first receiver last looked are heard as one.
    assert_eq!(*changes.borrow_and_update(), 6);

    host.close().await;
    assert_eq!(
        *changes.borrow_and_update(),
        7,
        "closing empties the palette"
    );
    drop(host);
    assert!(changes.changed().await.is_err(), "the host has gone");
}

/// Fifteen changes said in one breath cost one listing, not fifteen: the watcher takes what
/// arrived together as one batch. The server's message after the changes marks the batch's
/// end: the watcher hands it on before it lists, so a watcher listing once per change would
/// have listed fifteen times by the time the message arrives. (The test's runtime runs one
/// task at a time, so the driver queues the whole read before the watcher looks.)
#[tokio::test]
async fn a_burst_of_changes_is_listed_once() {
    let stock = Server::new("ahost-flood");
    let server = teaching_2025("stock", &stock, "change-flood", &["word_count"]);
    let (host, mut events, failures) = start(vec![server]).await;
    assert!(failures.is_empty(), "{failures:?}");
    assert_eq!(listings(&stock), 1);
    assert_eq!(
        host.call("word_count", r#"{"text":"a b c"}"#).await.text(),
        "3"
    );
    let told = tokio::time::timeout(common::SLACK, events.recv())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(told.server, "stock");
    assert!(
        matches!(&told.event, Event::Notification(ServerNotification::Log { data, .. })
            if data.as_str() == r#""15 changes told""#),
        "{:?}",
        told.event
    );
    eventually("the change is listed", || listings(&stock) >= 2).await;
    assert_eq!(listings(&stock), 2, "{:?}", stock.calls());
    assert!(host.take_failures().is_empty());
    host.close().await;
}

/// A server the application reached itself over a byte stream (here the pipes of a process
/// it started) is hosted as any other: an id already taken is refused before a byte is
/// written, its calls are routed to it, a burst of its list changes is heard by a watcher
/// of its own and listed once, and removing it closes its input, so it exits.
#[tokio::test]
async fn a_server_over_a_stream_the_application_brings_is_hosted_as_any_other() {
    use tokio::io::AsyncReadExt;

    let (support, piped) = (Server::new("ahost-stream-s"), Server::new("ahost-stream"));
    let (host, mut events, failures) = start(vec![teaching(
        "support",
        &support,
        "support",
        &["process_refund"],
    )])
    .await;
    assert!(failures.is_empty(), "{failures:?}");
    let mut stateful = config(&["word_count"]);
    stateful.protocol = ProtocolChoice::Stateful;

    let (ours, mut theirs) = tokio::io::duplex(4096);
    let (reader, writer) = tokio::io::split(ours);
    let twin = host
        .add_stream("support", reader, writer, stateful.clone())
        .await;
    assert!(
        matches!(&twin, Err(HostError::DuplicateId { id }) if id == "support"),
        "{twin:?}"
    );
    let mut written = Vec::new();
    theirs.read_to_end(&mut written).await.unwrap();
    assert!(written.is_empty(), "{}", String::from_utf8_lossy(&written));

    let mut child = tokio::process::Command::new(env!("CARGO_BIN_EXE_mcp-teaching-server"))
        .args(["serve", "--mode", "change-flood", "--log"])
        .arg(&piped.log)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let (stdin, stdout) = (child.stdin.take().unwrap(), child.stdout.take().unwrap());
    host.add_stream("piped", stdout, stdin, stateful)
        .await
        .unwrap();
    assert_eq!(offered(&host), ["process_refund", "word_count"]);
    assert_eq!(listings(&piped), 1);
    let (count, refund) = tokio::join!(
        host.call("word_count", r#"{"text":"a b c"}"#),
        host.call("process_refund", r#"{"order_id":"ORD-1","amount":2}"#),
    );
    assert_eq!(
        (count.text(), refund.text()),
        ("3", "refunded 2.00 on ORD-1")
    );
    assert_eq!(
        piped
            .calls()
            .iter()
            .filter(|c| c.get("name").is_some())
            .count(),
        1
    );
    assert_eq!(support.calls()[0]["name"], "process_refund");

    let told = tokio::time::timeout(common::SLACK, events.recv())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(told.server, "piped");
    eventually("the change is listed", || listings(&piped) >= 2).await;
    assert_eq!(listings(&piped), 2, "{:?}", piped.calls());

    let removed = host.remove("piped").await;
    assert!(matches!(removed, Some(Ok(None))), "{removed:?}");
    let exited = tokio::time::timeout(common::SLACK, child.wait())
        .await
        .unwrap()
        .unwrap();
    assert!(exited.success(), "{exited:?}");
    assert_eq!(offered(&host), ["process_refund"]);
    assert!(host.take_failures().is_empty());
    host.close().await;
}

#[tokio::test]
async fn servers_join_and_leave_a_running_host_and_an_id_is_taken_once() {
    let (stock, support, again, twice) = (
        Server::new("ahost-join"),
        Server::new("ahost-join-s"),
        Server::new("ahost-join-a"),
        Server::new("ahost-join-t"),
    );
    let (host, _events, failures) =
        start(vec![teaching("stock", &stock, "normal", &["word_count"])]).await;
    assert!(failures.is_empty(), "{failures:?}");
    host.add(teaching(
        "support",
        &support,
        "support",
        &["process_refund"],
    ))
    .await
    .unwrap();
    let refused = host
        .add(teaching("support", &twice, "normal", &["word_count"]))
        .await
        .unwrap_err();
    assert!(
        matches!(refused, HostError::DuplicateId { .. }),
        "{refused}"
    );
    assert!(!twice.dir.join("server.pids").exists(), "the twin started");
    let missing = common::missing_server();
    let error = host.add(missing).await.unwrap_err();
    assert!(
        matches!(error, HostError::Driver(AsyncError::Spawn(_))),
        "{error}"
    );
    assert_eq!(offered(&host), ["process_refund", "word_count"]);
    let refund = host
        .call("process_refund", r#"{"order_id":"ORD-1","amount":2}"#)
        .await;
    assert_eq!(refund.text(), "refunded 2.00 on ORD-1");

    let pid = host.server("support").unwrap().pid().unwrap();
    let ended = host.remove("support").await.unwrap();
    assert!(ended.is_ok(), "{ended:?}");
    assert!(!process_exists(pid), "the removed server still runs");
    assert!(host.remove("support").await.is_none());
    assert_eq!(offered(&host), ["word_count"]);
    let after = host
        .call("process_refund", r#"{"order_id":"ORD-1","amount":2}"#)
        .await;
    assert!(after.text().starts_with("not called"), "{after:?}");

    // The id is free again; whatever the old server's watcher says of its end never touches
    // the new one.
    host.add(teaching("support", &again, "support", &["process_refund"]))
        .await
        .unwrap();
    let refund = host
        .call("process_refund", r#"{"order_id":"ORD-2","amount":3}"#)
        .await;
    assert_eq!(refund.text(), "refunded 3.00 on ORD-2");
    assert_eq!(again.calls().len(), 1);
    assert_eq!(support.calls().len(), 1);
    assert!(host.take_failures().is_empty());
    assert_eq!(host.close().await.len(), 2);
}

/// A server at a URL joins as a started one does; a call the server refuses for a moved
/// `Mcp-Param-*` header is sent again after a new listing, which the palette takes.
#[tokio::test]
async fn a_server_at_a_url_joins_and_its_new_listing_reaches_the_palette() {
    let remote = Served::start("ahost-moved", &["--mode", "moved-header"]);
    let stock = Server::new("ahost-url");
    let servers = vec![
        HostServer::http("remote", &remote.url, &[], config(&["word_count"])),
        teaching("local", &stock, "support", &["process_refund"]),
    ];
    let (host, _events, failures) = start(servers).await;
    assert!(failures.is_empty(), "{failures:?}");
    assert_eq!(host.with_palette(common::header_marker), Some("Region"));
    let observation = host
        .call("word_count", r#"{"text":"a b c","region":"eu-west"}"#)
        .await;
    let marker = host.with_palette(common::header_marker);
    common::assert_moved(&remote, observation.text(), marker);
    assert!(host.take_failures().is_empty());
    host.close().await;
}

/// A server's questions reach the application tagged with its id, to answer through its
/// handle; past the host's queue they are refused at once, and counted, so the server never
/// waits on a question nobody will see.
#[tokio::test]
async fn a_server_s_questions_reach_the_application_and_past_the_queue_are_refused() {
    let asker = Server::new("ahost-asks");
    let mut server = teaching("asker", &asker, "ask-flood", &["word_count"]);
    server.config.asks = Asks::NONE.with_elicitation();
    server.config.limits.asks_waiting = 12;
    let mut limits = HostLimits::default();
    limits.events_kept = 4;
    let (host, mut events, failures) =
        Host::start(vec![server], PaletteConfig::default(), limits).await;
    assert!(failures.is_empty(), "{failures:?}");
    let call = tokio::spawn({
        let host = host.clone();
        async move { host.call("word_count", r#"{"text":"a b"}"#).await }
    });
    eventually("six questions find no room", || events.lost() == 6).await;
    let handle = host.server("asker").unwrap();
    for _ in 0..4 {
        let event = events.try_recv().unwrap();
        assert_eq!(event.server, "asker");
        let Event::ServerRequest(request) = event.event else {
            panic!("{:?}", event.event)
        };
        handle
            .answer(request.ticket(), Reply::decline())
            .await
            .unwrap();
    }
    let answered = call.await.unwrap();
    let mut expected: Vec<String> = (0..10)
        .map(|n| {
            let got = if n < 4 { "\"decline\"" } else { "-32603" };
            format!("ask-{n:02} {got}")
        })
        .collect();
    expected.push("ask-bad -32602".into());
    expected.push("ask-sample -32601".into());
    assert_eq!(answered.text(), expected.join("\n"));
    assert!(events.try_recv().is_err());
    host.close().await;
}

#[tokio::test]
async fn a_call_that_times_out_is_a_failure_and_the_server_stays() {
    let stock = Server::new("ahost-hang");
    let (host, _events, failures) =
        start(vec![teaching("stock", &stock, "hang", &["word_count"])]).await;
    assert!(failures.is_empty(), "{failures:?}");
    let observation = host.call("word_count", r#"{"text":"a b"}"#).await;
    assert!(observation.is_error());
    assert_eq!(
        observation.text(),
        "the word_count tool did not answer within 1 s; there is no result"
    );
    assert!(host.take_failures().is_empty());
    assert!(host.server("stock").is_some());
    host.close().await;
}

/// A call on its own terms through the async host: its own deadline, said in the failure,
/// and the progress it asked for among the application's events, tagged.
#[tokio::test]
async fn a_call_on_its_own_terms_keeps_its_deadline_and_its_progress() {
    let stuck = Server::new("ahost-own-terms-hang");
    let busy = Server::new("ahost-own-terms-notify");
    let (host, mut events, failures) = start(vec![
        teaching("stuck", &stuck, "hang", &["word_count"]),
        teaching("busy", &busy, "notify", &["word_count"]),
    ])
    .await;
    assert!(failures.is_empty(), "{failures:?}");
    let short = CallOptions::new().timeout(std::time::Duration::from_millis(300));
    let observation = host
        .call_with("word_count", r#"{"text":"a b"}"#, short)
        .await;
    assert_eq!(
        observation.text(),
        "the word_count tool did not answer within 300 ms; there is no result"
    );
    let reporting = CallOptions::new().progress_up_to(std::time::Duration::from_secs(10));
    let observation = host
        .call_with("busy_word_count", r#"{"text":"a b"}"#, reporting)
        .await;
    assert_eq!(observation.text(), "2");
    let mut reports = Vec::new();
    while reports.len() < 3 {
        let event = events.recv().await.unwrap();
        if let Event::Progress { progress, .. } = event.event {
            reports.push((event.server, progress));
        }
    }
    let expected: Vec<(String, f64)> = (1..=3).map(|n| ("busy".into(), f64::from(n))).collect();
    assert_eq!(reports, expected);
    host.close().await;
}

/// The last clone of a host dropped ends every server, watchers and all.
#[tokio::test]
async fn a_dropped_host_ends_every_server() {
    let (one, two) = (Server::new("ahost-drop-1"), Server::new("ahost-drop-2"));
    let servers = vec![
        teaching("one", &one, "normal", &["word_count"]),
        teaching("two", &two, "support", &["process_refund"]),
    ];
    let (host, mut events, failures) = start(servers).await;
    assert!(failures.is_empty(), "{failures:?}");
    let pids: Vec<u32> = ["one", "two"]
        .iter()
        .map(|id| host.server(id).unwrap().pid().unwrap())
        .collect();
    let clone = host.clone();
    drop(host);
    assert_eq!(
        clone.call("word_count", r#"{"text":"a"}"#).await.text(),
        "1"
    );
    drop(clone);
    let ended = tokio::time::timeout(common::SLACK, events.recv()).await;
    assert!(matches!(ended, Ok(None)), "the events did not end");
    for pid in pids {
        eventually("the server ends", || !process_exists(pid)).await;
    }
}

/// The model-facing name of server `id`'s `word_count`.
fn word_count_of(host: &Host, id: &str) -> String {
    host.with_palette(|p| {
        p.tools()
            .find(|t| t.server == id && t.tool.name == "word_count")
            .map(|t| t.name.to_owned())
            .unwrap()
    })
}

/// One host over a correct server and servers that are wrong in their own ways, all called
/// at once: each wrong one costs only its own call, or its own place in the palette; what
/// each says reaches the application tagged with its own id, or not at all; the correct one
/// is untouched.
#[tokio::test]
async fn servers_wrong_in_their_own_ways_cost_only_themselves() {
    let modes = [
        "normal",
        "notify",
        "flood",
        "true-id",
        "hostile",
        "stray-changes",
    ];
    let logs: Vec<Server> = modes
        .iter()
        .map(|mode| Server::new(&format!("ahost-wrong-{mode}")))
        .collect();
    let servers = modes
        .iter()
        .zip(&logs)
        .map(|(mode, log)| teaching(mode, log, mode, &["word_count"]))
        .collect();
    let (host, mut events, failures) = start(servers).await;
    assert!(failures.is_empty(), "{failures:?}");
    // The hostile server's purchase tool is advertised, never offered: it is not allowed.
    let names = offered(&host);
    assert_eq!(names.len(), modes.len(), "{names:?}");
    assert!(names.iter().all(|name| name.ends_with("word_count")));
    let calls: Vec<_> = modes
        .iter()
        .map(|mode| {
            let (host, name) = (host.clone(), word_count_of(&host, mode));
            tokio::spawn(async move { host.call(&name, r#"{"text":"a b c"}"#).await })
        })
        .collect();
    for (mode, call) in modes.iter().zip(calls) {
        let observation = call.await.unwrap();
        let broken = match *mode {
            "flood" => Some("more than 16 messages arrived before an answer"),
            "true-id" => Some("an id is neither an integer within i64 nor a string"),
            _ => None,
        };
        match broken {
            Some(why) => {
                assert!(observation.is_error(), "{mode}: {observation:?}");
                assert!(observation.text().contains(why), "{mode}: {observation:?}");
            }
            None => assert_eq!(observation.text(), "3", "{mode}"),
        }
    }
    // A message with an id no request can have fails the connection: that server leaves,
    // reported for what it did. Too many notifications fail only the call.
    let mut gone = Vec::new();
    eventually("the broken connection leaves", || {
        gone.extend(host.take_failures());
        !gone.is_empty()
    })
    .await;
    assert_eq!(ids(&gone), ["true-id"]);
    assert!(
        gone[0].to_string().contains("an id is neither"),
        "{}",
        gone[0]
    );
    assert!(host.server("flood").is_some());
    assert_eq!(offered(&host).len(), modes.len() - 1);
    // Progress reaches the application tagged with its server; the stray changes of the
    // careless one reach no one.
    let mut heard: Vec<(String, Event)> = Vec::new();
    eventually("the progress is heard", || {
        while let Ok(event) = events.try_recv() {
            heard.push((event.server, event.event));
        }
        let progress = |id: &str| {
            heard
                .iter()
                .filter(|(server, event)| {
                    server == id
                        && matches!(
                            event,
                            Event::Notification(ServerNotification::Progress { .. })
                        )
                })
                .count()
        };
        progress("notify") == 3 && progress("flood") == 17
    })
    .await;
    assert!(
        heard
            .iter()
            .all(|(server, _)| server == "notify" || server == "flood"),
        "{heard:?}"
    );
    for log in &logs {
        assert!(
            log.calls().iter().all(|call| call["name"] == "word_count"),
            "{:?}",
            log.calls()
        );
    }
    assert_eq!(
        host.call("word_count", r#"{"text":"a b"}"#).await.text(),
        "2"
    );
    host.close().await;
}

/// A server that ends every subscription as soon as it has acknowledged it would keep the
/// host subscribing and listing without end: past `HostLimits::subscription_ends` in a row,
/// it leaves the host, reported for it; the log counts every subscription it saw.
#[tokio::test]
async fn a_server_ending_every_subscription_at_once_leaves_after_the_bound() {
    let churner = Server::new("ahost-churn");
    let mut limits = HostLimits::default();
    limits.subscription_ends = 3;
    let (host, _events, failures) = Host::start(
        vec![
            teaching("churn", &churner, "end-at-once", &["word_count"]),
            teaching(
                "stock",
                &Server::new("ahost-churn-stock"),
                "normal",
                &["word_count"],
            ),
        ],
        PaletteConfig::default(),
        limits,
    )
    .await;
    assert!(failures.is_empty(), "{failures:?}");
    let mut gone = Vec::new();
    eventually("the churning server leaves", || {
        gone.extend(host.take_failures());
        !gone.is_empty()
    })
    .await;
    assert_eq!(ids(&gone), ["churn"]);
    assert!(
        matches!(gone[0].error, HostError::SubscriptionChurn { ends: 4 }),
        "{}",
        gone[0]
    );
    assert!(
        gone[0].to_string().contains("ended 4 times in a row"),
        "{}",
        gone[0]
    );
    // The first subscription and three more, each ended; no fifth.
    assert_eq!(churner.listens(), 4, "{:?}", churner.subscriptions());
    // The other server is untouched (its tool's name depends on whether the churning one had
    // left by the time it joined).
    let stock = word_count_of(&host, "stock");
    assert_eq!(offered(&host), std::slice::from_ref(&stock));
    assert_eq!(host.call(&stock, r#"{"text":"a b"}"#).await.text(), "2");
    host.close().await;
}
