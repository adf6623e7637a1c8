//! The blocking HTTP transport with several operations in flight against the teaching
//! server over HTTP: each result reaches its own operation, and the server's call log shows
//! each call arrived once.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

use std::time::{Duration, Instant};

use mcp_sansio::{
    Allowlist, Config, Error, HttpError, Limits, ProtocolChoice, ProtocolViolation, RawObject,
};
use mcp_sansio_http::{HttpClient, HttpClientError};
use mcp_sansio_tokio::AsyncError;

mod common;
use common::Served;

/// Each revision, and how the server replies in it (JSON, or events with `--sse`).
const REVISIONS: [(ProtocolChoice, &[&str]); 3] = [
    (ProtocolChoice::Auto, &[]),
    (ProtocolChoice::Stateful, &[]),
    (ProtocolChoice::Stateful, &["--sse"]),
];

/// The four texts called at once, and the counts they must get back, in order.
const TEXTS: [(&str, &str); 4] = [
    ("one", "1"),
    ("one two", "2"),
    ("one two three", "3"),
    ("one two three four", "4"),
];

/// Checks that the calls of [`TEXTS`] got `counts`, each its own, and reached the server once.
fn each_call_once(served: &Served, protocol: ProtocolChoice, counts: &[String]) {
    assert_eq!(counts, TEXTS.map(|(_, count)| count), "{protocol:?}");
    let log = std::fs::read_to_string(&served.log).unwrap();
    assert_eq!(
        log.lines().count(),
        TEXTS.len(),
        "{protocol:?}: each call reached the server once"
    );
}

#[test]
fn calls_in_flight_at_once_each_get_their_own_result_in_every_revision() {
    for (protocol, extra) in REVISIONS {
        let served = Served::start(&format!("{protocol:?}{}", extra.len()), extra);
        let mut config = Config::new(["word_count"].into_iter().collect::<Allowlist>());
        config.protocol = protocol;
        let mut client = HttpClient::new(&served.url, config).unwrap();
        client.connect().unwrap();
        client.list_tools().unwrap();
        let now = client.now();
        let ops: Vec<_> = TEXTS
            .iter()
            .map(|(text, _)| {
                let args = RawObject::parse(&format!(r#"{{"text":"{text}"}}"#), &Limits::default())
                    .unwrap();
                client.client().call_tool("word_count", &args, now).unwrap()
            })
            .collect();
        // Awaited in reverse: the others finish meanwhile and wait as events.
        let mut counts: Vec<String> = ops
            .into_iter()
            .rev()
            .map(|op| client.run(op).unwrap().text().into_owned())
            .collect();
        counts.reverse();
        each_call_once(&served, protocol, &counts);
        client.close();
    }
}

/// The async driver connected to `served` in `protocol`, its tools listed.
async fn async_listed(served: &Served, protocol: ProtocolChoice) -> mcp_sansio_tokio::Handle {
    let mut config = Config::new(["word_count"].into_iter().collect::<Allowlist>());
    config.protocol = protocol;
    let (handle, _events) = mcp_sansio_tokio::connect_http(&served.url, &[], config)
        .await
        .unwrap();
    handle.list_tools().await.unwrap();
    handle
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_async_driver_runs_calls_at_once_in_every_revision() {
    for (protocol, extra) in REVISIONS {
        let served = Served::start(&format!("async-{protocol:?}{}", extra.len()), extra);
        let handle = async_listed(&served, protocol).await;
        let calls = TEXTS.map(|(text, _)| {
            let handle = handle.clone();
            let args =
                RawObject::parse(&format!(r#"{{"text":"{text}"}}"#), &Limits::default()).unwrap();
            tokio::spawn(async move { handle.call_tool("word_count", &args).await })
        });
        let mut counts = Vec::new();
        for call in calls {
            counts.push(call.await.unwrap().unwrap().text().into_owned());
        }
        each_call_once(&served, protocol, &counts);
        handle.close().await.unwrap();
    }
}

#[tokio::test]
async fn through_the_async_driver_an_expired_session_is_renewed_once_and_the_call_runs_once() {
    let served = Served::start("async-expire", &["--mode", "expire"]);
    let handle = async_listed(&served, ProtocolChoice::Stateful).await;
    let args = RawObject::parse(r#"{"text":"a b"}"#, &Limits::default()).unwrap();
    let result = handle.call_tool("word_count", &args).await.unwrap();
    assert_eq!(result.text(), "2");
    let log = std::fs::read_to_string(&served.log).unwrap();
    assert_eq!(log.lines().count(), 1, "the call ran once: {log}");
    handle.close().await.unwrap();
}

#[tokio::test]
async fn a_dropped_call_is_cancelled_with_a_session_and_its_stream_dropped_without_one() {
    for protocol in [ProtocolChoice::Stateful, ProtocolChoice::Auto] {
        let served = Served::start(
            &format!("async-cancel-{protocol:?}"),
            &["--mode", "parallel", "--delay-ms", "10000"],
        );
        let handle = async_listed(&served, protocol).await;
        let args = RawObject::parse(r#"{"text":"a b"}"#, &Limits::default()).unwrap();
        let gave_up = tokio::time::timeout(
            Duration::from_millis(200),
            handle.call_tool("word_count", &args),
        )
        .await;
        assert!(gave_up.is_err(), "{gave_up:?}");
        let log = || -> Vec<serde_json::Value> {
            std::fs::read_to_string(&served.log)
                .unwrap_or_default()
                .lines()
                .map(|l| serde_json::from_str(l).unwrap())
                .collect()
        };
        let limit = Instant::now() + Duration::from_secs(5);
        if protocol == ProtocolChoice::Stateful {
            // The session's server hears of it.
            while !log().iter().any(|c| c.get("cancelled").is_some()) {
                assert!(
                    Instant::now() < limit,
                    "the server never heard of the cancellation"
                );
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
            let calls = log();
            assert_eq!(calls[1]["cancelled"], calls[0]["id"], "{calls:?}");
        } else {
            // Without a session, dropping the stream is the cancellation: no notification.
            assert!(
                log().iter().all(|c| c.get("cancelled").is_none()),
                "{:?}",
                log()
            );
        }
        while handle.in_flight() != 0 {
            assert!(Instant::now() < limit, "the client's table never emptied");
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        handle.close().await.unwrap();
    }
}

/// How an HTTP failure must end: the core's error it must reach the library as.
type Expected = fn(&Error) -> bool;

/// The HTTP failure modes (with the server's extra flags), how each must end, and how many
/// calls reach the server: one table for both drivers, the blocking transport and the async
/// one. In `lost-stream` the discovery and the listing are sent again and answered, and
/// the call, which ran, fails.
fn http_failures() -> [(&'static str, &'static [&'static str], Expected, usize); 10] {
    use ProtocolViolation::{FrameTooLong, UnknownResponseId};
    [
        (
            "unauthorized",
            &[],
            |e| matches!(e, Error::Http(HttpError::Unauthorized(Some(_)))),
            0,
        ),
        (
            "redirect",
            &[],
            |e| matches!(e, Error::Http(HttpError::Redirected { status: 307 })),
            0,
        ),
        (
            "wrong-content-type",
            &[],
            |e| matches!(e, Error::Http(HttpError::ContentType)),
            0,
        ),
        (
            "oversized",
            &[],
            |e| matches!(e, Error::Protocol(FrameTooLong { .. })),
            1,
        ),
        (
            "endless-event",
            &[],
            |e| matches!(e, Error::Protocol(FrameTooLong { .. })),
            1,
        ),
        (
            "wrong-id",
            &["--sse"],
            |e| matches!(e, Error::Protocol(UnknownResponseId { .. })),
            1,
        ),
        (
            "endless-stream",
            &[],
            |e| matches!(e, Error::Timeout { .. }),
            1,
        ),
        (
            "trickle",
            &["--sse"],
            |e| matches!(e, Error::Timeout { .. }),
            1,
        ),
        ("hang", &[], |e| matches!(e, Error::Timeout { .. }), 1),
        (
            "lost-stream",
            &[],
            |e| matches!(e, Error::Http(HttpError::NoAnswer)),
            1,
        ),
    ]
}

/// The teaching server in failing `mode` (with `extra` flags) for `driver`'s test, and the
/// client's configuration for it.
fn failing(driver: &str, mode: &str, extra: &[&str]) -> (Served, Config) {
    let mut args = vec!["--mode", mode];
    args.extend_from_slice(extra);
    let served = Served::start(&format!("{driver}-{mode}"), &args);
    let mut config = Config::new(["word_count"].into_iter().collect::<Allowlist>());
    config.limits = Limits::teaching();
    config.limits.operation_timeout = Duration::from_millis(1000);
    (served, config)
}

/// Checks how `mode` ended against the table, and what reached the server.
fn check_failure(
    served: &Served,
    mode: &str,
    expected: Expected,
    calls: usize,
    error: &Error,
    took: Duration,
) {
    assert!(expected(error), "{mode}: {error:?}");
    assert!(took < Duration::from_secs(4), "{mode}: {took:?}");
    let log = std::fs::read_to_string(&served.log).unwrap_or_default();
    assert_eq!(
        log.lines().count(),
        calls,
        "{mode}: calls that reached the server"
    );
}

#[test]
fn each_http_failure_reaches_the_library_as_its_typed_error_by_the_deadline() {
    for (mode, extra, expected, calls) in http_failures() {
        let (served, config) = failing("blocking", mode, extra);
        let started = Instant::now();
        let mut client = HttpClient::new(&served.url, config).unwrap();
        let outcome = client
            .connect()
            .and_then(|_| client.list_tools())
            .and_then(|_| {
                let args = RawObject::parse(r#"{"text":"a b"}"#, &Limits::default()).unwrap();
                client.call_tool("word_count", &args)
            });
        let error = match outcome {
            Err(HttpClientError::Mcp(e)) => e,
            other => panic!("{mode}: {other:?}"),
        };
        check_failure(&served, mode, expected, calls, &error, started.elapsed());
    }
}

#[tokio::test]
async fn each_http_failure_ends_the_same_way_through_the_async_driver() {
    for (mode, extra, expected, calls) in http_failures() {
        let (served, config) = failing("async", mode, extra);
        let started = Instant::now();
        let outcome = async {
            let (handle, _events) =
                mcp_sansio_tokio::connect_http(&served.url, &[], config).await?;
            handle.list_tools().await?;
            let args = RawObject::parse(r#"{"text":"a b"}"#, &Limits::default()).unwrap();
            handle.call_tool("word_count", &args).await
        }
        .await;
        let error = match outcome {
            Err(AsyncError::Mcp(e)) => e,
            other => panic!("{mode}: {other:?}"),
        };
        check_failure(&served, mode, expected, calls, &error, started.elapsed());
    }
}

/// `lost-stream` with [`Config::reissue_broken_calls`]: the call whose stream was lost is
/// sent again and answered, and the server's own log shows what that costs: it ran twice,
/// under two ids. Both drivers.
#[tokio::test]
async fn a_lost_call_is_sent_again_only_when_the_application_allows_it() {
    let args = RawObject::parse(r#"{"text":"a b"}"#, &Limits::default()).unwrap();
    let ran_twice = |served: &Served| {
        let log = std::fs::read_to_string(&served.log).unwrap();
        let ids: Vec<serde_json::Value> = log
            .lines()
            .map(|line| serde_json::from_str::<serde_json::Value>(line).unwrap()["id"].clone())
            .collect();
        assert!(ids.len() == 2 && ids[0] != ids[1], "{log}");
    };
    let (served, mut config) = failing("blocking-reissue", "lost-stream", &[]);
    config.reissue_broken_calls = true;
    let mut client = HttpClient::new(&served.url, config).unwrap();
    client.connect().unwrap();
    client.list_tools().unwrap();
    assert_eq!(client.call_tool("word_count", &args).unwrap().text(), "2");
    ran_twice(&served);

    let (served, mut config) = failing("async-reissue", "lost-stream", &[]);
    config.reissue_broken_calls = true;
    let (handle, _events) = mcp_sansio_tokio::connect_http(&served.url, &[], config)
        .await
        .unwrap();
    handle.list_tools().await.unwrap();
    assert_eq!(
        handle.call_tool("word_count", &args).await.unwrap().text(),
        "2"
    );
    ran_twice(&served);
    handle.close().await.unwrap();
}

/// Connects a blocking client to the first `(url, config)` and the async driver to the
/// second, lists the tools on each, and calls `word_count` with `args`: both calls fail with
/// the server's -32020, whose message names the header.
async fn refused_by_both(
    blocking: (&str, Config),
    asynchronous: (&str, Config),
    args: &RawObject,
) -> (HttpClient, mcp_sansio_tokio::Handle) {
    let refused = |error: &Error| {
        assert!(error.is_header_mismatch(), "{error:?}");
        assert!(error.to_string().contains("Mcp-Param-"), "{error}");
    };
    let mut client = HttpClient::new(blocking.0, blocking.1).unwrap();
    client.connect().unwrap();
    client.list_tools().unwrap();
    match client.call_tool("word_count", args) {
        Err(HttpClientError::Mcp(error)) => refused(&error),
        other => panic!("{other:?}"),
    }
    let (handle, _events) = mcp_sansio_tokio::connect_http(asynchronous.0, &[], asynchronous.1)
        .await
        .unwrap();
    handle.list_tools().await.unwrap();
    match handle.call_tool("word_count", args).await {
        Err(AsyncError::Mcp(error)) => refused(&error),
        other => panic!("{other:?}"),
    }
    (client, handle)
}

/// `moved-header`: the server moves `word_count`'s `Mcp-Param-*` header after the client
/// listed, and refuses the call made with the old one (-32020) before it runs. Each driver
/// lists again and sends the call once more, with the header the new listing declares: it
/// is answered, and ran once. In `moving-header` the listing is always one behind: the
/// call is sent twice, refused twice, and fails with the server's -32020, having never run.
/// In a 2025 session, which has no such headers, a -32020 is only the call's error.
#[tokio::test]
async fn a_call_refused_for_a_moved_header_is_sent_again_after_listing_anew() {
    let args =
        RawObject::parse(r#"{"text":"a b","region":"eu-west"}"#, &Limits::default()).unwrap();
    let ran = |served: &Served| {
        let log = std::fs::read_to_string(&served.log).unwrap_or_default();
        log.lines().count()
    };
    let header_of = |catalog: &mcp_sansio::Catalog| {
        let tool = catalog.get("word_count").unwrap();
        tool.param_headers().unwrap()[0].header_name()
    };

    let (served, config) = failing("blocking", "moved-header", &[]);
    let mut client = HttpClient::new(&served.url, config).unwrap();
    client.connect().unwrap();
    assert_eq!(header_of(&client.list_tools().unwrap()), "Mcp-Param-Region");
    assert_eq!(client.call_tool("word_count", &args).unwrap().text(), "2");
    assert_eq!(ran(&served), 1);
    let listed = client.client().catalog().unwrap();
    assert_eq!(
        header_of(listed),
        "Mcp-Param-Zone",
        "the client's catalog is the new one"
    );
    let relisted = client.take_relisted().unwrap();
    assert_eq!(
        header_of(&relisted),
        "Mcp-Param-Zone",
        "and the application is told"
    );
    assert!(client.take_relisted().is_none());

    let (served, config) = failing("async", "moved-header", &[]);
    let (handle, _events) = mcp_sansio_tokio::connect_http(&served.url, &[], config)
        .await
        .unwrap();
    handle.list_tools().await.unwrap();
    assert!(handle.take_relisted().is_none());
    assert_eq!(
        handle.call_tool("word_count", &args).await.unwrap().text(),
        "2"
    );
    assert_eq!(ran(&served), 1);
    assert_eq!(
        header_of(&handle.take_relisted().unwrap()),
        "Mcp-Param-Zone"
    );
    assert!(handle.take_relisted().is_none());
    handle.close().await.unwrap();

    let blocking = failing("blocking", "moving-header", &[]);
    let asynchronous = failing("async", "moving-header", &[]);
    let (_, handle) = refused_by_both(
        (&blocking.0.url, blocking.1),
        (&asynchronous.0.url, asynchronous.1),
        &args,
    )
    .await;
    assert_eq!(ran(&blocking.0), 0);
    assert_eq!(ran(&asynchronous.0), 0);
    handle.close().await.unwrap();

    // A 2025 session has no such headers: the server (wrongly) refuses the call there for
    // want of one, and the client takes the -32020 as the call's error, without listing again.
    let (served, mut config) = failing("blocking-2025", "moved-header", &[]);
    config.protocol = ProtocolChoice::Stateful;
    let (mut client, handle) =
        refused_by_both((&served.url, config.clone()), (&served.url, config), &args).await;
    assert!(client.take_relisted().is_none(), "not listed again");
    assert!(handle.take_relisted().is_none(), "not listed again");
    assert_eq!(ran(&served), 0);
    handle.close().await.unwrap();
}
