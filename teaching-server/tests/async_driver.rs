//! The async driver (`mcp-sansio-tokio`) against the real teaching server in its own process:
//! many calls at once from many tasks, cancellation by drop witnessed by the server's own
//! log, the driver's end, and a byte stream the application brings (TCP). The checkpoint's
//! failing modes run through this driver in `checkpoint.rs`, from the blocking driver's table.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

mod common;

use std::time::Duration;

use common::{
    args, config, eventually_async as eventually, process_exists, words, Served, Server, DEADLINE,
    SLACK,
};
use mcp_sansio::{
    Error, Event, ListKind, Misuse, ProtocolVersion, ServerNotification, Subscription,
};
use mcp_sansio_tokio::{AsyncError, Handle};
use serde_json::json;

async fn connect(server: &Server, mode: &str) -> (Handle, mcp_sansio_tokio::Events) {
    let (handle, events) =
        mcp_sansio_tokio::connect_stdio(&server.command(mode), config(&["word_count"]))
            .await
            .unwrap();
    handle.list_tools().await.unwrap();
    (handle, events)
}

#[tokio::test]
async fn a_call_succeeds_a_refusal_sends_nothing_and_close_reaps_the_server() {
    let server = Server::new("async-normal");
    let (handle, _events) = connect(&server, "normal").await;
    assert_eq!(
        handle.server().server_info.as_ref().unwrap().name,
        "lucy-teaching-server"
    );
    let result = handle.call_tool("word_count", &words()).await.unwrap();
    assert_eq!(result.text(), "4");
    let refused = handle
        .call_tool("place_purchase", &args(r#"{"tubs":100}"#))
        .await;
    assert!(
        matches!(
            refused,
            Err(AsyncError::Mcp(Error::Misuse(
                Misuse::ToolNotAllowed { .. }
            )))
        ),
        "{refused:?}"
    );
    let pid = handle.pid().unwrap();
    let status = handle.close().await.unwrap().unwrap();
    assert!(status.success(), "{status}");
    assert!(!process_exists(pid), "the server was not reaped");
    let calls = server.calls();
    assert_eq!(calls.len(), 1, "{calls:?}");
    assert_eq!(calls[0]["name"], "word_count");
}

#[tokio::test]
async fn dropping_a_call_cancels_it_with_the_server_and_frees_its_slot() {
    let server = Server::new("async-cancel");
    let command = server.command("parallel").args(["--delay-ms", "10000"]);
    let (handle, _events) = mcp_sansio_tokio::connect_stdio(&command, config(&["word_count"]))
        .await
        .unwrap();
    handle.list_tools().await.unwrap();
    // The server holds this call for seconds; the caller gives up after 100 ms.
    let gave_up = tokio::time::timeout(
        Duration::from_millis(100),
        handle.call_tool("word_count", &words()),
    )
    .await;
    assert!(gave_up.is_err(), "{gave_up:?}");
    eventually("the server logs the cancellation", || {
        server.calls().iter().any(|c| c.get("cancelled").is_some())
    })
    .await;
    let calls = server.calls();
    assert_eq!(calls.len(), 2, "{calls:?}");
    assert_eq!(calls[1]["cancelled"], calls[0]["id"], "{calls:?}");
    assert_eq!(handle.in_flight(), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_thousand_calls_at_once_with_random_drops_each_resolve_once_with_their_own_answer() {
    let server = Server::new("async-thousand");
    let command = server.command("parallel").args(["--delay-ms", "20"]);
    let (handle, _events) = mcp_sansio_tokio::connect_stdio(&command, config(&["word_count"]))
        .await
        .unwrap();
    handle.list_tools().await.unwrap();
    // A fixed pseudo-random sequence: the same drops on every run.
    let mut seed: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    let mut tasks = Vec::new();
    for n in 0..1000_usize {
        let handle = handle.clone();
        let words = n % 37 + 1;
        let text = vec!["w"; words].join(" ");
        let drop_after = (next() % 4 == 0).then(|| Duration::from_millis(next() % 30));
        tasks.push(tokio::spawn(async move {
            let arguments = args(&format!(r#"{{"text":"{text}"}}"#));
            let call = handle.call_tool("word_count", &arguments);
            let outcome = match drop_after {
                Some(after) => tokio::time::timeout(after, call).await.ok(),
                None => Some(call.await),
            };
            (words, drop_after.is_some(), outcome)
        }));
    }
    let (mut answered, mut dropped) = (0, 0);
    for task in tasks {
        let (words, may_drop, outcome) = task.await.unwrap();
        match outcome {
            Some(result) => {
                let result = result.unwrap();
                assert_eq!(
                    result.text(),
                    words.to_string(),
                    "a call got another's answer"
                );
                answered += 1;
            }
            None => {
                assert!(may_drop, "a call that was not dropped never resolved");
                dropped += 1;
            }
        }
    }
    assert_eq!(answered + dropped, 1000);
    assert!(dropped > 0, "no call was dropped: the test proves nothing");
    assert!(answered > 700, "{answered} answered");
    eventually("the client's table empties", || handle.in_flight() == 0).await;
    // Every dropped call that had reached the server was cancelled with it.
    handle.close().await.unwrap();
    let calls = server.calls();
    let cancelled = calls
        .iter()
        .filter(|c| c.get("cancelled").is_some())
        .count();
    let reached = calls.iter().filter(|c| c.get("name").is_some()).count();
    assert!(
        cancelled <= dropped,
        "{cancelled} cancelled, {dropped} dropped"
    );
    assert!(
        reached >= answered,
        "{reached} reached the server, {answered} answered"
    );
    println!("{answered} answered, {dropped} dropped, {cancelled} cancelled with the server");
}

#[tokio::test]
async fn a_server_that_dies_mid_call_fails_the_call_and_ends_the_driver() {
    let server = Server::new("async-dies");
    let (handle, mut events) = connect(&server, "hang").await;
    let pid = handle.pid().unwrap();
    let arguments = words();
    let call = handle.call_tool("word_count", &arguments);
    let kill = async {
        tokio::time::sleep(Duration::from_millis(50)).await;
        rustix::process::kill_process_group(
            rustix::process::Pid::from_raw(i32::try_from(pid).unwrap()).unwrap(),
            rustix::process::Signal::KILL,
        )
        .unwrap();
    };
    let (outcome, ()) = tokio::join!(call, kill);
    assert!(
        matches!(outcome, Err(AsyncError::Mcp(Error::Closed))),
        "{outcome:?}"
    );
    // The failure reaches the events, and then they end with the driver.
    let mut failed = false;
    while let Some(event) = tokio::time::timeout(SLACK, events.recv()).await.unwrap() {
        failed |= matches!(event, Event::Failed(Error::Closed));
    }
    assert!(failed);
    let after = handle.call_tool("word_count", &words()).await;
    assert!(matches!(after, Err(AsyncError::Ended)), "{after:?}");
}

#[tokio::test]
async fn the_last_handle_dropped_ends_the_server() {
    let server = Server::new("async-drop");
    let (handle, mut events) = connect(&server, "normal").await;
    let pid = handle.pid().unwrap();
    let clone = handle.clone();
    drop(handle);
    assert_eq!(
        clone
            .call_tool("word_count", &words())
            .await
            .unwrap()
            .text(),
        "4"
    );
    drop(clone);
    // The events end when the driver has ended the server.
    assert!(tokio::time::timeout(DEADLINE + SLACK, events.recv())
        .await
        .unwrap()
        .is_none());
    eventually("the server is reaped", || !process_exists(pid)).await;
}

#[tokio::test]
async fn a_server_that_closes_its_input_fails_the_next_operation_by_its_deadline() {
    // It answers the handshake, then closes its input and keeps its output open in silence:
    // the listing's write fails, and nothing may wait after that without a bound.
    let server = Server::new("async-close-input");
    let (handle, _events) =
        mcp_sansio_tokio::connect_stdio(&server.command("close-input"), config(&[]))
            .await
            .unwrap();
    let listed = tokio::time::timeout(DEADLINE + SLACK, handle.list_tools())
        .await
        .expect("the listing outlasted its deadline: a wait without a bound");
    // The write fails (`Closed`) at once, unless a process this test binary is starting in
    // another thread still holds a copy of the pipe's read end between its fork and exec;
    // then the write goes through, and the listing ends at its deadline (`Timeout`). Either
    // way it ends, and by its deadline.
    assert!(
        matches!(
            listed,
            Err(AsyncError::Mcp(Error::Closed | Error::Timeout { .. }))
        ),
        "{listed:?}"
    );
}

#[tokio::test]
async fn a_server_that_ignores_sigterm_and_eof_cannot_make_close_hang() {
    use std::os::unix::process::ExitStatusExt;
    let server = Server::new("async-stubborn");
    let mut config = mcp_sansio_tokio::DriverConfig::from(config(&[]));
    config.limits.close_grace = Duration::from_millis(200);
    let (handle, _events) = mcp_sansio_tokio::connect_stdio(&server.command("stubborn"), config)
        .await
        .unwrap();
    let pid = handle.pid().unwrap();
    let status = tokio::time::timeout(DEADLINE + SLACK, handle.close())
        .await
        .expect("close hung")
        .unwrap()
        .unwrap();
    assert_eq!(status.signal(), Some(9), "{status}");
    assert!(!process_exists(pid));
}

#[tokio::test]
async fn closing_ends_the_whole_group_grandchild_included() {
    let server = Server::new("async-grandchild");
    let command = server.command("grandchild").reap_orphans(true);
    let (handle, _events) = mcp_sansio_tokio::connect_stdio(&command, config(&["word_count"]))
        .await
        .unwrap();
    let grandchild = server.grandchild_pid();
    assert!(process_exists(grandchild));
    let pid = handle.pid().unwrap();
    handle.close().await.unwrap();
    assert!(!process_exists(pid), "the server is left");
    assert!(
        !process_exists(grandchild),
        "the grandchild is left (alive or a zombie)"
    );
}

/// A 2026-07-28 client of a `list-changed` server, listed, subscribes to the tool list's
/// changes and calls: the change reaches its events, and the tool added is listed. Gives the
/// subscription.
async fn the_change_is_heard(
    handle: &Handle,
    events: &mut mcp_sansio_tokio::Events,
) -> mcp_sansio_tokio::Listener {
    assert_eq!(handle.server().version, ProtocolVersion::V2026_07_28);
    assert!(handle.server().capabilities.tools_list_changed);
    let listener = handle.listen(Subscription::tools()).await.unwrap();
    assert_eq!(listener.honoured(), &Subscription::tools());
    handle.call_tool("word_count", &words()).await.unwrap();
    let event = tokio::time::timeout(SLACK, events.recv())
        .await
        .unwrap()
        .unwrap();
    assert!(
        matches!(
            event,
            Event::Notification(ServerNotification::ListChanged(ListKind::Tools))
        ),
        "{event:?}"
    );
    assert_eq!(handle.list_tools().await.unwrap().tools().len(), 3);
    listener
}

#[tokio::test]
async fn a_list_change_reaches_the_events_of_a_2026_client_that_listens() {
    let server = Server::new("async-list-changed");
    let (handle, mut events) = connect(&server, "list-changed").await;
    let listener = the_change_is_heard(&handle, &mut events).await;
    dropped_is_cancelled(listener, || server.subscriptions()).await;
}

/// Dropped, the `listener`'s subscription is cancelled with the server, which says so in the
/// log `seen` reads: over stdio a `notifications/cancelled`, over HTTP its stream closed.
async fn dropped_is_cancelled(
    listener: mcp_sansio_tokio::Listener,
    seen: impl Fn() -> Vec<serde_json::Value>,
) {
    drop(listener);
    eventually("the server hears the cancel", || seen().len() == 2).await;
    let seen = seen();
    assert_eq!(seen[0]["notifications"], json!({"toolsListChanged": true}));
    assert_eq!(seen[1]["unsubscribed"], seen[0]["listen"]);
}

#[tokio::test]
async fn over_http_a_change_is_heard_a_dropped_listener_cancels_and_the_server_s_end_ends_one() {
    // The change comes on the subscription's own stream, among the events.
    let served = Served::start("async-http-list-changed", &["--mode", "list-changed"]);
    let (handle, mut events) =
        mcp_sansio_tokio::connect_http(&served.url, &[], config(&["word_count"]))
            .await
            .unwrap();
    handle.list_tools().await.unwrap();
    let listener = the_change_is_heard(&handle, &mut events).await;
    dropped_is_cancelled(listener, || served.subscriptions()).await;

    // The server ends a subscription, on its stream: the listener's end is complete.
    let served = Served::start("async-http-end", &["--mode", "end-subscriptions"]);
    let (handle, _events) =
        mcp_sansio_tokio::connect_http(&served.url, &[], config(&["word_count"]))
            .await
            .unwrap();
    handle.list_tools().await.unwrap();
    let listener = handle.listen(Subscription::tools()).await.unwrap();
    handle.call_tool("word_count", &words()).await.unwrap();
    tokio::time::timeout(SLACK, listener.ended())
        .await
        .unwrap()
        .unwrap();
    let seen = served.subscriptions();
    assert_eq!(seen[1]["ended"], seen[0]["listen"]);
}

#[tokio::test]
async fn any_byte_stream_works_here_tcp_to_a_server_process() {
    use tokio::net::{TcpListener, TcpStream};
    let server = Server::new("async-tcp");
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    // The other side of the socket: a relay to a teaching server of its own, as a remote
    // machine might run one behind a port.
    let program = env!("CARGO_BIN_EXE_mcp-teaching-server");
    let log = server.log.clone();
    let relay = tokio::spawn(async move {
        let (socket, _) = listener.accept().await.unwrap();
        let mut child = tokio::process::Command::new(program)
            .args(["serve", "--log"])
            .arg(&log)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .unwrap();
        let (mut stdin, mut stdout) = (child.stdin.take().unwrap(), child.stdout.take().unwrap());
        let (mut from, mut to) = socket.into_split();
        let inbound = async move {
            let _ = tokio::io::copy(&mut from, &mut stdin).await;
            // The client closed its side: the server's input ends, and so does the server.
            drop(stdin);
        };
        let _ = tokio::join!(inbound, tokio::io::copy(&mut stdout, &mut to));
        child.wait().await.unwrap()
    });
    let socket = TcpStream::connect(address).await.unwrap();
    let (reader, writer) = socket.into_split();
    let (handle, _events) =
        mcp_sansio_tokio::connect_stream(reader, writer, config(&["word_count"]))
            .await
            .unwrap();
    assert_eq!(handle.pid(), None);
    handle.list_tools().await.unwrap();
    assert_eq!(
        handle
            .call_tool("word_count", &words())
            .await
            .unwrap()
            .text(),
        "4"
    );
    assert_eq!(handle.close().await.unwrap(), None);
    let exited = tokio::time::timeout(SLACK, relay).await.unwrap().unwrap();
    assert!(exited.success(), "{exited}");
    assert_eq!(server.calls().len(), 1);
}
