//! Log messages asked for at a level (`Client::set_log_level`), from the teaching server in
//! its own process: over stdio and over HTTP, in a handshake revision (`logging/setLevel`,
//! which the server's log shows arrived) and in 2026-07-28 (the level in each request's
//! `_meta`). The server tells each call at two levels, `debug` and `info`, only when asked.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

use mcp_sansio::{Era, Event, LogLevel, ProtocolChoice, ProtocolVersion, ServerNotification};
use mcp_sansio_host::PaletteConfig;
use mcp_sansio_http::HttpClient;
use mcp_sansio_stdio::{Host, HostError, HostEvent, HostServer, StdioClient};
use serde_json::Value;

mod common;
use common::{config, words, Served, Server};

/// What a transport gives these tests.
trait Transport {
    fn call(&mut self) -> String;
    fn events(&mut self) -> Vec<Event>;
    /// Asks for `level`, through the transport's own run loop.
    fn ask(&mut self, level: LogLevel);
}

/// The two blocking transports share these methods by name, not by a trait of their own.
macro_rules! transport {
    ($client:ty) => {
        impl Transport for $client {
            fn call(&mut self) -> String {
                let result = self.call_tool("word_count", &words()).unwrap();
                result.text().to_string()
            }
            fn events(&mut self) -> Vec<Event> {
                self.take_events()
            }
            fn ask(&mut self, level: LogLevel) {
                let now = self.now();
                let op = self.client().set_log_level(level, now).unwrap();
                self.run(op).unwrap();
            }
        }
    };
}

transport!(StdioClient);
transport!(HttpClient);

/// The log messages among `events`, as `level data`.
fn logged(events: Vec<Event>) -> Vec<String> {
    events
        .into_iter()
        .filter_map(|event| match event {
            Event::Notification(ServerNotification::Log {
                level,
                logger,
                data,
            }) => {
                assert_eq!(logger.as_deref(), Some("lucy"));
                Some(format!("{level} {data}"))
            }
            _ => None,
        })
        .collect()
}

const DEBUG: &str =
    r#"debug {"arguments":{"text":"vanilla stock needs review"},"tool":"word_count"}"#;
const INFO: &str = r#"info "word_count answered""#;

/// Nothing unasked; then each level asked for gets that level and above, call by call.
fn each_level_gets_its_own(transport: &mut impl Transport, version: ProtocolVersion) {
    assert_eq!(transport.call(), "4");
    assert_eq!(
        logged(transport.events()),
        Vec::<String>::new(),
        "{version:?}"
    );
    for (level, expected) in [
        (LogLevel::Info, &[INFO][..]),
        (LogLevel::Debug, &[DEBUG, INFO][..]),
        (LogLevel::Warning, &[][..]),
    ] {
        transport.ask(level);
        assert_eq!(transport.call(), "4");
        assert_eq!(logged(transport.events()), expected, "{version:?} {level}");
    }
}

/// The levels `logging/setLevel` brought to the server, in order.
fn levels_set(calls: &[Value]) -> Vec<&str> {
    calls
        .iter()
        .filter_map(|entry| entry.get("set_level")?.as_str())
        .collect()
}

#[test]
fn over_stdio_each_revision_gets_the_levels_asked_for_and_nothing_unasked() {
    for (mode, era, expected) in [
        ("legacy", Era::Stateful, &["info", "debug", "warning"][..]),
        ("modern", Era::Stateless, &[][..]),
    ] {
        let server = Server::new(&format!("logging-{mode}"));
        let mut client =
            StdioClient::spawn(&server.command(mode), config(&["word_count"])).unwrap();
        let version = client.connect().unwrap().version;
        assert_eq!(version.era(), era);
        client.list_tools().unwrap();
        each_level_gets_its_own(&mut client, version);
        assert_eq!(levels_set(&server.calls()), expected, "{mode}");
        client.close(common::DEADLINE).unwrap();
    }
}

#[test]
fn over_http_each_revision_gets_the_levels_asked_for_and_nothing_unasked() {
    for (protocol, era, expected) in [
        (
            ProtocolChoice::Stateful,
            Era::Stateful,
            &["info", "debug", "warning"][..],
        ),
        (ProtocolChoice::Stateless, Era::Stateless, &[][..]),
    ] {
        let served = Served::start(&format!("logging-{protocol:?}"), &[]);
        let mut config = config(&["word_count"]);
        config.protocol = protocol;
        let mut client = HttpClient::new(&served.url, config).unwrap();
        let version = client.connect().unwrap().version;
        assert_eq!(version.era(), era);
        client.list_tools().unwrap();
        each_level_gets_its_own(&mut client, version);
        assert_eq!(levels_set(&served.calls()), expected, "{protocol:?}");
        client.close();
    }
}

/// A level set once in the configuration is asked for at the handshake, and again in the
/// session the client renews after the server ended the first (the teaching server's
/// `expire` mode, whose new session starts with no level): the call after the renewal is
/// told at the level asked for.
#[test]
fn over_http_a_configured_level_outlives_a_renewed_session() {
    let served = Served::start("logging-renewed", &["--mode", "expire"]);
    let mut config = config(&["word_count"]);
    config.protocol = ProtocolChoice::Stateful;
    config.log_level = Some(LogLevel::Info);
    let mut client = HttpClient::new(&served.url, config).unwrap();
    client.connect().unwrap();
    client.list_tools().unwrap();
    assert_eq!(client.call(), "4", "the call the renewal sent again");
    client.take_events();
    assert_eq!(client.call(), "4");
    assert_eq!(logged(client.take_events()), [INFO]);
    assert_eq!(levels_set(&served.calls()), ["info", "info"]);
    client.close();
}

/// The async driver runs the command as any other: in 2026-07-28 it ends at once, and the
/// next call's log messages reach the application's events before the call's answer.
#[tokio::test]
async fn through_the_async_driver_in_each_revision() {
    for (mode, level, expected) in [
        ("legacy", LogLevel::Info, &[INFO][..]),
        ("modern", LogLevel::Debug, &[DEBUG, INFO][..]),
    ] {
        let server = Server::new(&format!("logging-async-{mode}"));
        let (handle, mut events) =
            mcp_sansio_tokio::connect_stdio(&server.command(mode), config(&["word_count"]))
                .await
                .unwrap();
        handle.list_tools().await.unwrap();
        handle
            .run(move |client, now| client.set_log_level(level, now))
            .await
            .unwrap();
        let result = handle.call_tool("word_count", &words()).await.unwrap();
        assert_eq!(result.text(), "4");
        let mut told = Vec::new();
        while let Ok(event) = events.try_recv() {
            told.push(event);
        }
        assert_eq!(logged(told), expected, "{mode}");
        handle.close().await.unwrap();
    }
}

/// What a blocking host heard, as `server level data`, none of it anything but a log message.
fn heard(host: &mut Host) -> Vec<String> {
    host.take_events()
        .into_iter()
        .map(|HostEvent { server, event, .. }| {
            let told = logged(vec![event]);
            assert_eq!(told.len(), 1, "{server}: not a log message");
            format!("{server} {}", told[0])
        })
        .collect()
}

/// The blocking host asks each server as its revision takes it, and hands on what each
/// says, tagged with its id and in the order heard; a server not asked says nothing.
#[test]
fn a_blocking_host_hears_each_server_at_its_own_level() {
    let old = Server::new("logging-host-legacy");
    let new = Server::new("logging-host-modern");
    let quiet = Server::new("logging-host-quiet");
    let servers = [
        HostServer::new("old", old.command("legacy"), config(&["word_count"])),
        HostServer::new("new", new.command("modern"), config(&["word_count"])),
        HostServer::new("quiet", quiet.command("normal"), config(&["word_count"])),
    ];
    let (mut host, failures) = Host::start(servers, PaletteConfig::default());
    assert!(failures.is_empty(), "{failures:?}");
    let calls = ["word_count", "new_word_count", "quiet_word_count"];
    let call_each = |host: &mut Host| {
        for name in calls {
            let observation = host.call(name, r#"{"text":"vanilla stock needs review"}"#);
            assert_eq!(observation.text(), "4", "{name}");
        }
    };
    call_each(&mut host);
    assert_eq!(heard(&mut host), Vec::<String>::new());
    host.set_log_level("old", LogLevel::Info).unwrap();
    host.set_log_level("new", LogLevel::Debug).unwrap();
    // A watcher on one server sees its messages as they come; they are kept all the same.
    let watched = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let count = std::sync::Arc::clone(&watched);
    host.set_watcher("new", move |event: &Event| {
        if matches!(event, Event::Notification(ServerNotification::Log { .. })) {
            count.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        }
    })
    .unwrap();
    call_each(&mut host);
    assert_eq!(watched.load(std::sync::atomic::Ordering::Relaxed), 2);
    assert_eq!(
        heard(&mut host),
        [
            format!("old {INFO}"),
            format!("new {DEBUG}"),
            format!("new {INFO}")
        ]
    );
    assert_eq!(levels_set(&old.calls()), ["info"]);
    assert!(
        levels_set(&new.calls()).is_empty(),
        "2026-07-28 has no setLevel"
    );
    assert!(levels_set(&quiet.calls()).is_empty());
    assert!(matches!(
        host.set_log_level("gone", LogLevel::Info),
        Err(HostError::UnknownServer { .. })
    ));
    assert_eq!(host.events_lost(), 0);
    host.close(common::DEADLINE);
}

/// A server's messages are kept up to its configuration's `events_kept` between two looks;
/// the rest are dropped and counted, and taking them makes room again.
#[test]
fn a_blocking_host_keeps_a_server_s_events_within_its_bound() {
    let server = Server::new("logging-host-bound");
    let mut three = config(&["word_count"]);
    three.limits.events_kept = 3;
    let chatty = HostServer::new("chatty", server.command("legacy"), three);
    let (mut host, failures) = Host::start([chatty], PaletteConfig::default());
    assert!(failures.is_empty(), "{failures:?}");
    host.set_log_level("chatty", LogLevel::Debug).unwrap();
    for _ in 0..3 {
        assert_eq!(host.call("word_count", r#"{"text":"a"}"#).text(), "1");
    }
    let kept = heard(&mut host);
    assert_eq!(kept.len(), 3, "{kept:?}");
    assert!(kept[0].starts_with("chatty debug"), "{kept:?}");
    assert_eq!(host.events_lost(), 3);
    host.call("word_count", r#"{"text":"a"}"#);
    assert_eq!(heard(&mut host).len(), 2);
    assert_eq!(host.events_lost(), 3);

    // Room for one: the client keeps the first of a call's two messages, and the host counts
    // the second, dropped before it heard it.
    let terse = Server::new("logging-host-terse");
    let mut one = config(&["word_count"]);
    one.limits.events_kept = 1;
    host.add(HostServer::new("terse", terse.command("legacy"), one))
        .unwrap();
    host.set_log_level("terse", LogLevel::Debug).unwrap();
    host.call("word_count", r#"{"text":"a"}"#);
    host.call("terse_word_count", r#"{"text":"a"}"#);
    assert_eq!(
        heard(&mut host),
        [
            format!(
                "chatty {}",
                DEBUG.replace("vanilla stock needs review", "a")
            ),
            format!("chatty {INFO}"),
            format!("terse {}", DEBUG.replace("vanilla stock needs review", "a")),
        ]
    );
    assert_eq!(host.events_lost(), 4);
    host.close(common::DEADLINE);
}
