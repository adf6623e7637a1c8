//! The checkpoint: the real teaching server in its own process, spoken to through the stdio
//! transport, in every mode. Each failure ends with its own typed error and no result; what
//! reached the server is read from the server's own call log.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

use std::time::{Duration, Instant};

use mcp_sansio::{
    Config, Error, ErrorCode, Event, Incompatible, Limits, Misuse, ProtocolChoice, ProtocolVersion,
    ProtocolViolation, RequestId, ServerNotification,
};
use mcp_sansio_stdio::{StderrMode, StdioClient, StdioError};

mod common;

use common::{args, config, mcp, process_exists, words, Server, DEADLINE, SLACK};

/// Connected and listed, in `mode`.
fn ready(server: &Server, mode: &str, allowed: &[&str]) -> StdioClient {
    let mut client = StdioClient::spawn(&server.command(mode), config(allowed)).unwrap();
    client.connect().unwrap();
    client.list_tools().unwrap();
    client
}

#[test]
fn the_allowed_call_succeeds_and_the_advertised_purchase_never_reaches_the_server() {
    let server = Server::new("normal");
    let mut client = ready(&server, "normal", &["word_count"]);
    assert_eq!(
        client.call_tool("word_count", &words()).unwrap().text(),
        "4"
    );
    let refused = client.call_tool("place_purchase", &args(r#"{"tubs":100}"#));
    assert_eq!(
        mcp(refused),
        Error::Misuse(Misuse::ToolNotAllowed {
            name: "place_purchase".into()
        })
    );
    let pid = client.pid();
    let status = client.close(DEADLINE).unwrap();
    assert!(status.success(), "{status}");
    assert!(!process_exists(pid), "the server was not reaped");
    let calls = server.calls();
    assert_eq!(calls.len(), 1, "{calls:?}");
    assert_eq!(calls[0]["name"], "word_count");
}

#[test]
fn negative_control_an_allowed_purchase_does_reach_the_server() {
    let server = Server::new("control");
    let mut client = ready(&server, "normal", &["word_count", "place_purchase"]);
    let result = client
        .call_tool("place_purchase", &args(r#"{"tubs":100}"#))
        .unwrap();
    assert_eq!(result.text(), "ordered 100 tubs");
    client.close(DEADLINE).unwrap();
    let calls = server.calls();
    assert_eq!(calls.len(), 1);
    assert_eq!(calls[0]["name"], "place_purchase");
}

/// The configuration a failing mode runs under: the teaching one, but for `deaf`, which
/// sends requests (pings need a stateful revision) without end. Each counts as a message
/// before the call's answer, so the cap on those is lifted to reach the bound on unsent
/// answers.
fn mode_config(mode: &str) -> Config {
    let mut config = config(&["word_count"]);
    if mode == "deaf" {
        config.protocol = ProtocolChoice::Stateful;
        config.limits.notifications_before_answer = usize::MAX;
    }
    config
}

/// Runs one `word_count` call in `mode` and returns how it failed and how long it took.
fn failing_call(mode: &str) -> (Error, Duration) {
    let server = Server::new(mode);
    let mut client = StdioClient::spawn(&server.command(mode), mode_config(mode)).unwrap();
    client.connect().unwrap();
    client.list_tools().unwrap();
    let started = Instant::now();
    let error = mcp(client.call_tool("word_count", &words()));
    (error, started.elapsed())
}

/// How a failing mode must end.
type Check = Box<dyn Fn(&Error) -> bool>;

/// The checkpoint's failing modes and how each must end: one table for both drivers, the
/// blocking transport and the async one.
fn failing_modes() -> Vec<(&'static str, Check)> {
    vec![
        (
            "wrong-id",
            Box::new(|e| {
                *e == Error::Protocol(ProtocolViolation::UnknownResponseId {
                    id: RequestId::from(4),
                })
            }),
        ),
        (
            "stale",
            Box::new(|e| {
                *e == Error::Protocol(ProtocolViolation::DuplicateResponse {
                    id: RequestId::from(2),
                })
            }),
        ),
        (
            "true-id",
            Box::new(|e| *e == Error::Protocol(ProtocolViolation::InvalidId)),
        ),
        (
            "oversized",
            Box::new(|e| *e == Error::Protocol(ProtocolViolation::FrameTooLong { limit: 65_536 })),
        ),
        ("stdout-log", Box::new(|e| matches!(e, Error::Malformed(_)))),
        (
            "flood",
            Box::new(|e| {
                *e == Error::Protocol(ProtocolViolation::TooManyNotifications { limit: 16 })
            }),
        ),
        (
            "deaf",
            Box::new(|e| {
                *e == Error::Protocol(ProtocolViolation::NotReading {
                    limit: Limits::teaching().unsent_bytes,
                })
            }),
        ),
        (
            "hang",
            Box::new(|e| {
                *e == Error::Timeout {
                    operation: "tools/call",
                }
            }),
        ),
        (
            "trickle",
            Box::new(|e| {
                *e == Error::Timeout {
                    operation: "tools/call",
                }
            }),
        ),
    ]
}

/// Checks `error`, which `mode` ended with after `took`, against `expected`.
fn check_failure(mode: &str, expected: &Check, error: &Error, took: Duration) {
    assert!(expected(error), "{mode}: {error:?}");
    assert!(took < DEADLINE + SLACK, "{mode}: took {took:?}");
    if matches!(error, Error::Timeout { .. }) {
        // The client's clock counts whole milliseconds, so a deadline may fall up to one
        // millisecond before the wall-clock mark; never more.
        let resolution = Duration::from_millis(1);
        assert!(
            took + resolution >= DEADLINE,
            "{mode}: timed out early, after {took:?}"
        );
    }
    println!("{mode:<11} -> {error}");
}

#[test]
fn every_failing_mode_ends_with_its_own_typed_error_and_no_result() {
    for (mode, expected) in failing_modes() {
        let (error, took) = failing_call(mode);
        check_failure(mode, &expected, &error, took);
    }
}

#[tokio::test]
async fn every_failing_mode_ends_the_same_way_through_the_async_driver() {
    for (mode, expected) in failing_modes() {
        let server = Server::new(&format!("async-{mode}"));
        let (handle, _events) =
            mcp_sansio_tokio::connect_stdio(&server.command(mode), mode_config(mode))
                .await
                .unwrap();
        handle.list_tools().await.unwrap();
        let started = Instant::now();
        let error = match handle.call_tool("word_count", &words()).await {
            Err(mcp_sansio_tokio::AsyncError::Mcp(e)) => e,
            other => panic!("{mode}: expected a protocol-level error, got {other:?}"),
        };
        check_failure(mode, &expected, &error, started.elapsed());
        // The driver ended a failed connection's server; a timed-out one is closed here.
        let _ = handle.close().await;
    }
}

#[test]
fn an_old_version_stops_at_the_handshake() {
    let server = Server::new("old");
    let mut client =
        StdioClient::spawn(&server.command("old-version"), config(&["word_count"])).unwrap();
    assert_eq!(
        mcp(client.connect()),
        Error::Incompatible(Incompatible::UnsupportedVersion {
            offered: "2024-11-05".into()
        })
    );
    assert!(mcp(client.list_tools()) == Error::Misuse(Misuse::ConnectionFailed));
    assert!(server.calls().is_empty());
}

#[test]
fn after_a_late_reply_the_connection_goes_on_and_the_next_call_gets_its_own_answer() {
    let server = Server::new("late");
    let mut client = ready(&server, "late", &["word_count"]);
    assert_eq!(
        mcp(client.call_tool("word_count", &words())),
        Error::Timeout {
            operation: "tools/call"
        }
    );
    let second = client
        .call_tool("word_count", &args(r#"{"text":"one two"}"#))
        .unwrap();
    assert_eq!(second.text(), "2");
    assert!(
        client.take_events().iter().any(|e| *e
            == Event::LateResponse {
                id: RequestId::from(3)
            }),
        "the late answer was not reported as late"
    );
    // The timed-out call was cancelled with the server, which still logged both calls.
    assert_eq!(server.calls().len(), 2);
}

#[test]
fn chatter_on_stderr_or_notifications_within_the_cap_do_not_stop_a_call() {
    let server = Server::new("stderr");
    let captured = server.dir.join("stderr.txt");
    let command = server
        .command("stderr-log")
        .stderr(StderrMode::File(captured.clone()));
    let mut client = StdioClient::spawn(&command, config(&["word_count"])).unwrap();
    client.connect().unwrap();
    client.list_tools().unwrap();
    assert_eq!(
        client.call_tool("word_count", &words()).unwrap().text(),
        "4"
    );
    client.close(DEADLINE).unwrap();
    assert!(std::fs::read_to_string(&captured)
        .unwrap()
        .contains("teaching server read"));

    let server = Server::new("notify");
    let mut client = ready(&server, "notify", &["word_count"]);
    assert_eq!(
        client.call_tool("word_count", &words()).unwrap().text(),
        "4"
    );
    let notifications = client
        .take_events()
        .into_iter()
        .filter(|e| matches!(e, Event::Notification(_)))
        .count();
    assert_eq!(notifications, 3);
}

#[test]
fn notifications_nobody_takes_are_kept_up_to_the_bound_and_the_rest_counted() {
    // Three progress notifications a call; the application never takes them between calls.
    let server = Server::new("notify-kept");
    let mut config = config(&["word_count"]);
    config.limits.events_kept = 4;
    let mut client = StdioClient::spawn(&server.command("notify"), config).unwrap();
    client.connect().unwrap();
    client.list_tools().unwrap();
    for _ in 0..3 {
        assert_eq!(
            client.call_tool("word_count", &words()).unwrap().text(),
            "4"
        );
    }
    assert_eq!(client.events_lost(), 5);
    let kept = client.take_events();
    assert_eq!(kept.len(), 4, "{kept:?}");
    // Taken, they leave room for the next call's.
    client.call_tool("word_count", &words()).unwrap();
    assert_eq!(client.take_events().len(), 3);
    assert_eq!(client.events_lost(), 5);
}

/// A watcher sees each event as the client takes it, in the middle of the call, those
/// dropped for want of room too; what is kept is kept as before.
#[test]
fn a_watcher_sees_every_event_as_it_comes_kept_or_not() {
    let server = Server::new("notify-watched");
    let mut config = config(&["word_count"]);
    config.limits.events_kept = 1;
    let mut client = StdioClient::spawn(&server.command("notify"), config).unwrap();
    let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let log = std::sync::Arc::clone(&seen);
    client.set_watcher(move |event: &Event| {
        if let Event::Notification(ServerNotification::Progress {
            progress,
            total,
            message,
            ..
        }) = event
        {
            let message = message.clone().unwrap_or_default();
            log.lock().unwrap().push((*progress, *total, message));
        }
    });
    client.connect().unwrap();
    client.list_tools().unwrap();
    assert_eq!(
        client.call_tool("word_count", &words()).unwrap().text(),
        "4"
    );
    let expected: Vec<(f64, Option<f64>, String)> = (1..=3)
        .map(|n| (f64::from(n), Some(3.0), format!("counting, pass {n}")))
        .collect();
    assert_eq!(*seen.lock().unwrap(), expected);
    assert_eq!(client.events_lost(), 2);
    assert_eq!(client.take_events().len(), 1);
}

#[test]
fn two_calls_in_flight_answered_in_reverse_bind_to_the_right_requests() {
    let server = Server::new("reverse");
    let mut client = ready(&server, "reverse", &["word_count"]);
    let now = client.now();
    let one = client
        .client()
        .call_tool("word_count", &args(r#"{"text":"one"}"#), now)
        .unwrap();
    let two = client
        .client()
        .call_tool("word_count", &args(r#"{"text":"one two"}"#), now)
        .unwrap();
    let first = client.run(one).unwrap();
    let second = client.run(two).unwrap();
    assert_eq!((&*first.text(), &*second.text()), ("1", "2"));
}

#[test]
fn pagination_walks_every_page_and_endless_or_repeated_cursors_are_refused() {
    let server = Server::new("paginate");
    let mut client = StdioClient::spawn(&server.command("paginate"), config(&[])).unwrap();
    client.connect().unwrap();
    let catalog = client.list_tools().unwrap();
    assert_eq!(catalog.tools().len(), 8);

    let server = Server::new("endless");
    let mut client = StdioClient::spawn(&server.command("endless-cursor"), config(&[])).unwrap();
    client.connect().unwrap();
    assert_eq!(
        mcp(client.list_tools()),
        Error::Protocol(ProtocolViolation::TooManyPages { limit: 64 })
    );

    let server = Server::new("repeat");
    let mut client = StdioClient::spawn(&server.command("repeat-cursor"), config(&[])).unwrap();
    client.connect().unwrap();
    assert_eq!(
        mcp(client.list_tools()),
        Error::Protocol(ProtocolViolation::RepeatedCursor)
    );
}

#[test]
fn a_hostile_description_is_advertised_but_never_offered_or_called() {
    let server = Server::new("hostile");
    let mut client = ready(&server, "hostile", &["word_count"]);
    let catalog = client.list_tools().unwrap();
    let restock = catalog.get("restock").unwrap();
    assert!(restock.description.as_deref().unwrap().contains("tubs=100"));
    let allowlist = client.client().allowlist().clone();
    let offered: Vec<&str> = catalog
        .offered(&allowlist)
        .map(|t| t.name.as_str())
        .collect();
    assert_eq!(offered, ["word_count"]);
    assert!(client.call_tool("restock", &args("{}")).is_err());
    client.close(DEADLINE).unwrap();
    assert!(server.calls().is_empty());
}

#[test]
fn auto_connects_to_modern_only_and_legacy_only_servers_alike() {
    for (mode, version) in [
        ("modern", ProtocolVersion::V2026_07_28),
        ("legacy", ProtocolVersion::V2025_11_25),
        ("normal", ProtocolVersion::V2026_07_28),
    ] {
        let server = Server::new(mode);
        let mut client =
            StdioClient::spawn(&server.command(mode), config(&["word_count"])).unwrap();
        assert_eq!(client.connect().unwrap().version, version, "{mode}");
        client.list_tools().unwrap();
        assert_eq!(
            client.call_tool("word_count", &words()).unwrap().text(),
            "4",
            "{mode}"
        );
    }
    // Pinned to the seeds' revision, the dual-era server speaks it; the modern-only one refuses
    // an initialize without the _meta every 2026-07-28 request carries.
    let server = Server::new("pinned");
    let mut pinned = config(&["word_count"]);
    pinned.protocol = ProtocolChoice::Pinned(ProtocolVersion::V2025_06_18);
    let mut client = StdioClient::spawn(&server.command("normal"), pinned.clone()).unwrap();
    assert_eq!(
        client.connect().unwrap().version,
        ProtocolVersion::V2025_06_18
    );
    let mut client = StdioClient::spawn(&server.command("modern"), pinned).unwrap();
    assert!(matches!(mcp(client.connect()), Error::Rpc(e) if e.code == ErrorCode::INVALID_PARAMS));
}

#[test]
fn closing_ends_the_whole_group_grandchild_included_and_leaves_no_zombie() {
    let server = Server::new("grandchild");
    let command = server.command("grandchild").reap_orphans(true);
    let mut client = StdioClient::spawn(&command, config(&["word_count"])).unwrap();
    client.connect().unwrap();
    let grandchild = server.grandchild_pid();
    assert!(process_exists(grandchild));
    let pid = client.pid();
    client.close(DEADLINE).unwrap();
    assert!(!process_exists(pid), "the server is left");
    assert!(
        !process_exists(grandchild),
        "the grandchild is left (alive or a zombie)"
    );
}

#[test]
fn a_server_that_ignores_sigterm_and_eof_cannot_make_close_hang() {
    let server = Server::new("stubborn");
    let mut client = StdioClient::spawn(&server.command("stubborn"), config(&[])).unwrap();
    client.connect().unwrap();
    let pid = client.pid();
    let started = Instant::now();
    let status = client.close(Duration::from_millis(200)).unwrap();
    assert!(started.elapsed() < DEADLINE + SLACK);
    use std::os::unix::process::ExitStatusExt;
    assert_eq!(status.signal(), Some(9), "{status}");
    assert!(!process_exists(pid));
}

#[test]
fn a_server_that_closes_its_input_cannot_make_the_next_operation_outlast_its_deadline() {
    // It answers the handshake, then closes its input and keeps its output open without
    // writing: the listing's write fails, and nothing may wait after that without a bound.
    let server = Server::new("close-input");
    let command = server.command("close-input");
    let (done, outcome) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut client = StdioClient::spawn(&command, config(&[])).unwrap();
        client.connect().unwrap();
        let started = Instant::now();
        let listed = client.list_tools().map(|_| ());
        let _ = done.send((listed.map_err(|e| e.to_string()), started.elapsed()));
    });
    let (listed, took) = outcome
        .recv_timeout(DEADLINE + SLACK)
        .expect("the listing outlasted its deadline: a wait without a bound");
    let error = listed.unwrap_err();
    assert!(error.contains("closed"), "{error}");
    assert!(took < DEADLINE + SLACK, "{took:?}");
}

#[test]
fn a_server_that_dies_mid_call_gives_a_clear_error() {
    let server = Server::new("dies");
    let mut client = ready(&server, "hang", &["word_count"]);
    let now = client.now();
    let op = client
        .client()
        .call_tool("word_count", &words(), now)
        .unwrap();
    let killer = std::process::Command::new("kill")
        .args(["-9", &client.pid().to_string()])
        .status()
        .unwrap();
    assert!(killer.success());
    assert!(matches!(
        client.run(op),
        Err(StdioError::Mcp(Error::Closed))
    ));
}

#[test]
fn dropping_the_client_ends_the_server() {
    let server = Server::new("drop");
    let client = ready(&server, "normal", &[]);
    let pid = client.pid();
    drop(client);
    assert!(!process_exists(pid));
}
