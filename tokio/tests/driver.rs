//! The async driver over an in-memory stream, with a scripted peer, on the runtime's paused
//! clock: deadlines fall exactly when the core says (no test waits for real), a full request
//! table makes callers wait instead of refusing them, and the event queue holds its bound.
//! The real processes and real peers are in the teaching server's and stdio crate's tests.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

use std::time::Duration;

use mcp_sansio::{
    Allowlist, Asks, Config, Error, Event, Limits, ListKind, Misuse, ProtocolChoice, RawObject,
    Reply, ServerNotification, Subscription,
};
use mcp_sansio_tokio::{AsyncError, DriverConfig, DriverLimits, Handle};
use serde_json::{json, Value};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

const DEADLINE: Duration = Duration::from_secs(30);

/// How the scripted peer treats `tools/call`.
#[derive(Clone, Copy)]
enum Calls {
    /// Never answers.
    Silent,
    /// Answers each after `notifications` progress notifications.
    Answer { notifications: usize },
    /// Asks `asks` elicitations at once, and answers with what each got, in the order the
    /// answers came.
    Ask { asks: usize },
}

/// A peer that speaks the 2025-11-25 handshake and lists one tool, and calls as told.
async fn peer(stream: tokio::io::DuplexStream, calls: Calls) {
    let (read, mut write) = tokio::io::split(stream);
    let mut lines = BufReader::new(read).lines();
    // The call waiting for the answers to its elicitations, and those that came.
    let mut asking: Option<(Value, Vec<String>)> = None;
    while let Ok(Some(line)) = lines.next_line().await {
        let message: Value = serde_json::from_str(&line).unwrap();
        let Some(id) = message.get("id").cloned() else {
            continue;
        };
        let mut out = Vec::new();
        if message.get("method").is_none() {
            // The client's answer to an elicitation.
            let got = message["result"]["action"]
                .as_str()
                .map_or_else(|| message["error"]["code"].to_string(), String::from);
            let Some((call, answers)) = asking.as_mut() else {
                continue;
            };
            answers.push(got);
            let Calls::Ask { asks } = calls else { continue };
            if answers.len() < asks {
                continue;
            }
            let text = answers.join(",");
            let answer = json!({"jsonrpc": "2.0", "id": call,
                "result": {"content": [{"type": "text", "text": text}]}});
            out.extend(format!("{answer}\n").into_bytes());
            asking = None;
            if write.write_all(&out).await.is_err() {
                return;
            }
            continue;
        }
        let result = match message["method"].as_str().unwrap_or_default() {
            "initialize" => json!({
                "protocolVersion": "2025-11-25",
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "scripted", "version": "1"}
            }),
            "tools/list" => json!({"tools": [{
                "name": "word_count",
                "inputSchema": {"type": "object"}
            }]}),
            "tools/call" => match calls {
                Calls::Silent => continue,
                Calls::Answer { notifications } => {
                    for n in 0..notifications {
                        let progress = json!({"jsonrpc": "2.0", "method": "notifications/message",
                            "params": {"level": "info", "data": n}});
                        out.extend(format!("{progress}\n").into_bytes());
                    }
                    json!({"content": [{"type": "text", "text": "2"}]})
                }
                Calls::Ask { asks } => {
                    for n in 0..asks {
                        let ask = json!({"jsonrpc": "2.0", "id": format!("e{n}"),
                            "method": "elicitation/create", "params": {"message": "Name?",
                            "requestedSchema": {"type": "object"}}});
                        out.extend(format!("{ask}\n").into_bytes());
                    }
                    asking = Some((id, Vec::new()));
                    if write.write_all(&out).await.is_err() {
                        return;
                    }
                    continue;
                }
            },
            _ => continue,
        };
        let answer = json!({"jsonrpc": "2.0", "id": id, "result": result});
        out.extend(format!("{answer}\n").into_bytes());
        if write.write_all(&out).await.is_err() {
            return;
        }
    }
}

fn config(limits: Limits, driver: DriverLimits) -> DriverConfig {
    let mut config = Config::new(["word_count"].into_iter().collect::<Allowlist>());
    config.protocol = ProtocolChoice::Stateful;
    config.limits = limits;
    config.limits.operation_timeout = DEADLINE;
    DriverConfig::new(config, driver)
}

async fn connected(calls: Calls, config: DriverConfig) -> (Handle, mcp_sansio_tokio::Events) {
    let (ours, theirs) = tokio::io::duplex(64 * 1024);
    tokio::spawn(peer(theirs, calls));
    let (read, write) = tokio::io::split(ours);
    let (handle, events) = mcp_sansio_tokio::connect_stream(read, write, config)
        .await
        .unwrap();
    handle.list_tools().await.unwrap();
    (handle, events)
}

fn words() -> RawObject {
    RawObject::parse(r#"{"text":"a b"}"#, &Limits::default()).unwrap()
}

#[tokio::test(start_paused = true)]
async fn a_silent_server_times_the_call_out_exactly_at_its_deadline_on_the_runtimes_clock() {
    let (handle, _events) = connected(
        Calls::Silent,
        config(Limits::default(), DriverLimits::default()),
    )
    .await;
    let started = tokio::time::Instant::now();
    let outcome = handle.call_tool("word_count", &words()).await;
    let took = started.elapsed();
    assert!(
        matches!(
            outcome,
            Err(AsyncError::Mcp(Error::Timeout {
                operation: "tools/call"
            }))
        ),
        "{outcome:?}"
    );
    // Thirty seconds of the paused clock, not of the test's time; the session's clock counts
    // whole milliseconds.
    assert!(took >= DEADLINE - Duration::from_millis(1), "{took:?}");
    assert!(took <= DEADLINE + Duration::from_millis(1), "{took:?}");
    assert_eq!(handle.in_flight(), 0);
}

#[tokio::test]
async fn a_full_request_table_makes_callers_wait_and_none_is_refused() {
    let mut limits = Limits::default();
    limits.requests_in_flight = 2;
    let (handle, _events) = connected(
        Calls::Answer { notifications: 0 },
        config(limits, DriverLimits::default()),
    )
    .await;
    let calls: Vec<_> = (0..20)
        .map(|_| {
            let handle = handle.clone();
            tokio::spawn(async move { handle.call_tool("word_count", &words()).await })
        })
        .collect();
    for call in calls {
        assert_eq!(call.await.unwrap().unwrap().text(), "2");
    }
}

#[tokio::test]
async fn events_past_the_queue_bound_are_dropped_and_counted_never_held() {
    let mut limits = Limits::default();
    limits.events_kept = 2;
    let (handle, mut events) = connected(
        Calls::Answer { notifications: 5 },
        config(limits, DriverLimits::default()),
    )
    .await;
    assert_eq!(
        handle
            .call_tool("word_count", &words())
            .await
            .unwrap()
            .text(),
        "2"
    );
    assert_eq!(events.lost(), 3);
    // The first through `recv`, the second as a `Stream`.
    assert!(matches!(events.recv().await, Some(Event::Notification(_))));
    let next = std::future::poll_fn(|cx| {
        futures_core::Stream::poll_next(std::pin::Pin::new(&mut events), cx)
    })
    .await;
    assert!(matches!(next, Some(Event::Notification(_))), "{next:?}");
    assert!(events.try_recv().is_err());
}

#[tokio::test]
async fn a_request_for_the_application_is_answered_through_the_handle_or_refused_if_unseen() {
    let mut limits = Limits::default();
    limits.events_kept = 1;
    let mut config = config(limits, DriverLimits::default());
    config.config.asks = Asks::NONE.with_elicitation();
    let (handle, mut events) = connected(Calls::Ask { asks: 3 }, config).await;
    let answering = async {
        let Some(Event::ServerRequest(request)) = events.recv().await else {
            panic!("no request reached the application");
        };
        assert_eq!(request.message().as_deref(), Some("Name?"));
        handle
            .answer(request.ticket(), Reply::decline())
            .await
            .unwrap();
        // Answered once; a second answer finds nothing waiting.
        let again = handle.answer(request.ticket(), Reply::cancel()).await;
        assert!(
            matches!(again, Err(AsyncError::Mcp(Error::Misuse(Misuse::NotAsked)))),
            "{again:?}"
        );
    };
    let words = words();
    let (called, ()) = tokio::join!(handle.call_tool("word_count", &words), answering);
    // The queue held one request; the two it had no room for were refused at once (so the
    // server heard of them first), and it was not left waiting for answers nobody would give.
    assert_eq!(called.unwrap().text(), "-32603,-32603,decline");
    assert_eq!(events.lost(), 2);
}

#[tokio::test]
async fn closing_fails_every_waiting_call_and_ends_the_events() {
    let (handle, mut events) = connected(
        Calls::Silent,
        config(Limits::default(), DriverLimits::default()),
    )
    .await;
    let waiting = {
        let handle = handle.clone();
        tokio::spawn(async move { handle.call_tool("word_count", &words()).await })
    };
    tokio::task::yield_now().await;
    let other = handle.clone();
    assert_eq!(handle.close().await.unwrap(), None);
    let outcome = waiting.await.unwrap();
    assert!(matches!(outcome, Err(AsyncError::Ended)), "{outcome:?}");
    assert!(matches!(
        other.call_tool("word_count", &words()).await,
        Err(AsyncError::Ended)
    ));
    assert!(events.recv().await.is_none());
}

#[tokio::test]
async fn a_token_has_nowhere_to_go_over_a_byte_stream() {
    let (handle, _events) = connected(
        Calls::Silent,
        config(Limits::default(), DriverLimits::default()),
    )
    .await;
    let token = mcp_sansio::auth::Token::bearer("t1").unwrap();
    let refused = handle.set_authorization(Some(token)).await;
    assert!(matches!(refused, Err(AsyncError::NotHttp)), "{refused:?}");
    assert_eq!(
        refused.unwrap_err().to_string(),
        "the connection is not over HTTP, where a token would go"
    );
    handle.close().await.unwrap();
}

#[tokio::test]
async fn a_bad_url_or_header_is_refused_before_anything_is_sent_and_no_server_is_unreachable() {
    let config = || config(Limits::default(), DriverLimits::default());
    let refused = mcp_sansio_tokio::connect_http("ftp://127.0.0.1/mcp", &[], config()).await;
    assert!(
        matches!(refused, Err(AsyncError::InvalidUrl(_))),
        "{refused:?}"
    );
    let header = [("Authorization", "Bearer a\nb")];
    let refused = mcp_sansio_tokio::connect_http("http://127.0.0.1:1/mcp", &header, config()).await;
    assert!(
        matches!(refused, Err(AsyncError::InvalidHeader(_))),
        "{refused:?}"
    );
    // A port nobody listens on: the system gave it out and took it back.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let url = format!("http://127.0.0.1:{port}/mcp");
    let unreachable = mcp_sansio_tokio::connect_http(&url, &[], config()).await;
    assert!(
        matches!(unreachable, Err(AsyncError::Unreachable(_))),
        "{unreachable:?}"
    );
    // Each reads as one sentence saying what was wrong, with the detail after it.
    for (error, opening) in [
        (
            mcp_sansio_tokio::connect_http("ftp://127.0.0.1/mcp", &[], config()).await,
            "the server's address is invalid: ",
        ),
        (refused, "a header is invalid: "),
        (unreachable, "the server could not be reached: "),
    ] {
        let sentence = error.err().unwrap().to_string();
        assert!(sentence.starts_with(opening), "{sentence}");
        assert!(sentence.len() > opening.len(), "{sentence}");
    }
}

#[tokio::test(start_paused = true)]
async fn a_call_kept_but_no_longer_polled_frees_its_slot_when_its_operation_ends() {
    let mut limits = Limits::default();
    limits.requests_in_flight = 1;
    let (handle, _events) = connected(Calls::Silent, config(limits, DriverLimits::default())).await;
    let arguments = words();
    let first = handle.call_tool("word_count", &arguments);
    tokio::pin!(first);
    // Polled until it is under way, then kept, never polled again, never dropped.
    assert!(tokio::time::timeout(Duration::from_millis(10), &mut first)
        .await
        .is_err());
    // Its operation times out in the driver; the next call must get the one slot then,
    // not wait for a future nobody polls.
    let second = tokio::time::timeout(3 * DEADLINE, handle.call_tool("word_count", &arguments))
        .await
        .expect("the second call never got the slot");
    assert!(
        matches!(second, Err(AsyncError::Mcp(Error::Timeout { .. }))),
        "{second:?}"
    );
}

/// A 2026-07-28 peer that acknowledges every `subscriptions/listen` and sends one tool-list
/// change on it; it reports the id of each listen it hears cancelled on `cancelled`.
async fn listening_peer(
    stream: tokio::io::DuplexStream,
    cancelled: tokio::sync::mpsc::Sender<i64>,
) {
    let (read, mut write) = tokio::io::split(stream);
    let mut lines = BufReader::new(read).lines();
    while let Ok(Some(line)) = lines.next_line().await {
        let message: Value = serde_json::from_str(&line).unwrap();
        let id = message["id"].clone();
        let out = match message["method"].as_str().unwrap_or_default() {
            "server/discover" => vec![json!({"jsonrpc": "2.0", "id": id, "result": {
                "supportedVersions": ["2026-07-28"], "capabilities": {"tools": {}}}})],
            "subscriptions/listen" => {
                let meta = json!({"io.modelcontextprotocol/subscriptionId": id});
                vec![
                    json!({"jsonrpc": "2.0", "method": "notifications/subscriptions/acknowledged",
                        "params": {"notifications": message["params"]["notifications"], "_meta": meta}}),
                    json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed",
                        "params": {"_meta": meta}}),
                ]
            }
            "notifications/cancelled" => {
                let _ = cancelled
                    .send(message["params"]["requestId"].as_i64().unwrap())
                    .await;
                Vec::new()
            }
            _ => Vec::new(),
        };
        for message in out {
            if write
                .write_all(format!("{message}\n").as_bytes())
                .await
                .is_err()
            {
                return;
            }
        }
    }
}

#[tokio::test]
async fn a_listener_hears_what_it_asked_for_and_dropping_it_cancels_the_subscription() {
    let (ours, theirs) = tokio::io::duplex(64 * 1024);
    let (cancelled, mut cancels) = tokio::sync::mpsc::channel(4);
    tokio::spawn(listening_peer(theirs, cancelled));
    let (read, write) = tokio::io::split(ours);
    let mut config = config(Limits::default(), DriverLimits::default());
    config.config.protocol = ProtocolChoice::Stateless;
    let (handle, mut events) = mcp_sansio_tokio::connect_stream(read, write, config)
        .await
        .unwrap();
    let listener = handle.listen(Subscription::tools()).await.unwrap();
    assert_eq!(listener.honoured(), &Subscription::tools());
    assert_eq!(
        events.recv().await,
        Some(Event::Notification(ServerNotification::ListChanged(
            ListKind::Tools
        )))
    );
    assert_eq!(handle.in_flight(), 1, "the subscription stands");
    drop(listener);
    // The listen was the second request, after server/discover.
    assert_eq!(cancels.recv().await, Some(2));
    assert_eq!(handle.in_flight(), 0);
    // Its slot is free again: another subscription stands as the first did.
    let again = handle.listen(Subscription::tools()).await.unwrap();
    let ended = tokio::time::timeout(Duration::from_millis(50), again.ended()).await;
    assert!(ended.is_err(), "a subscription nobody ended has not ended");
    assert_eq!(
        cancels.recv().await,
        Some(3),
        "and the timeout dropped it, which cancels"
    );
    handle.close().await.unwrap();
}
