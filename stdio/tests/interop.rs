//! Interop with real MCP servers that nobody here wrote: the official Python SDK (`mcp` 2.x,
//! which speaks both eras, and `mcp` 1.x, legacy only) running `interop/word_count_server.py`,
//! and the TypeScript reference servers `@modelcontextprotocol/server-everything` and
//! `@modelcontextprotocol/server-filesystem`.
//!
//! The servers are installed by `.ci/install-peers`, so these tests are ignored by a plain
//! `cargo test`. CI runs them with the installed folder in `MCP_INTEROP_PEERS`:
//!
//! ```text
//! MCP_INTEROP_PEERS=$(.ci/install-peers) cargo test -p mcp-sansio-stdio --test interop -- --ignored
//! ```
//!
//! Without `MCP_INTEROP_PEERS` they fail: a missing peer is never a pass.
//!
//! Each peer is connected in auto mode and in each era it speaks (and refused in the era it
//! does not), its tools listed, one tool called and its result checked, through the library
//! and through `mcp-call`; after each, no process of the server's group is left.
//! Prompts and resources too: each peer's listed, a prompt expanded with its arguments and a
//! resource read (server-everything's documents compared with the files it serves), over
//! stdio, over HTTP and through the async driver.
//!
//! The same peers serve Streamable HTTP too (the Python SDK with server-sent events and with
//! JSON replies, server-everything always with events and priming): the same checks through
//! `mcp_sansio_http::HttpClient` and `mcp-call --url`. The async driver (`mcp-sansio-tokio`)
//! connects, lists, calls and refuses against each peer, over stdio and over HTTP. The
//! blocking host and the async host each hold the three peers behind one palette.
//!
//! `@modelcontextprotocol/server-memory` 2025.8.4, on the TypeScript SDK 1.0.1, speaks only
//! 2024-11-05: refused by default, and a session like any other once the application
//! accepts that revision (`Config::oldest_version`, `mcp-call --oldest-version`).
//!
//! Roots: `@modelcontextprotocol/server-filesystem`, started with no directory, reaches only
//! the folders the application gives as roots, and follows them when they change; the disk
//! is the witness of what reached it. server-everything and both Python SDKs
//! (`word_count_server.py --roots`) ask the client for its roots in the middle of a call (in
//! 2026-07-28, by an `input_required` result); each driver answers with the application's,
//! and with the new ones after `set_roots`.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use std::sync::{Arc, Mutex};

use mcp_sansio::{
    Allowlist, AskKind, Asks, CallOptions, Config, ElicitationMode, Error, Event, Incompatible,
    Limits, ListKind, Listening, LogLevel, Misuse, Op, ProtocolChoice, ProtocolVersion, RawObject,
    Reply, Root, ServerNotification, ServerRequest, Subscription, SubscriptionEnded,
};
use mcp_sansio_http::{HttpClient, HttpClientError};
use mcp_sansio_stdio::{ServerCommand, StdioClient, StdioError};

/// Python and Node.js take a while to start on a loaded machine; a hang still fails.
const DEADLINE: Duration = Duration::from_secs(20);

/// One of the real servers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Peer {
    /// `mcp` 2.x with the word_count script.
    Python2,
    /// `mcp` 1.x with the same script.
    Python1,
    /// `@modelcontextprotocol/server-everything` on stdio.
    Everything,
    /// `mcp` 2.x with the word_count script and its `roots` tool (`--roots`), which asks the
    /// client for its roots on every call, and `resolved_roots`, which asks through the SDK's
    /// resolver (in 2026-07-28 by an `input_required` result).
    Roots2,
    /// The same on `mcp` 1.x.
    Roots1,
    /// `mcp` 2.x with the routed_count script (over HTTP only): a tool whose arguments are
    /// mirrored into `Mcp-Param-*` headers, which the SDK checks.
    Routed,
    /// `mcp` 2.x with the oauth_server script (over HTTP only): word_count behind the SDK's
    /// OAuth, the server its own authorization server.
    Guarded,
    /// `mcp` 2.x with the word_count script and its `grow` and `touch` tools (`--changes`),
    /// which change what a `subscriptions/listen` stream hears.
    Changing,
    /// `mcp` 2.x with the word_count script and its `chatty` tool (`--chatty`), which logs
    /// each of as many lines as it is asked for before it answers.
    Chatty2,
    /// The same on `mcp` 1.x.
    Chatty1,
    /// `@modelcontextprotocol/server-filesystem` on stdio, started with no directory: it
    /// reaches only the roots the client gives.
    Filesystem,
    /// `@modelcontextprotocol/server-memory` 2025.8.4, on the TypeScript SDK 1.0.1 as the
    /// archived reference servers are: it speaks 2024-11-05 only.
    Memory,
}

impl Peer {
    /// The program and arguments that start the server.
    fn argv(self) -> Vec<PathBuf> {
        let peers = peers();
        let interop = Path::new(env!("CARGO_MANIFEST_DIR")).join("../interop");
        let script = interop.join("word_count_server.py");
        match self {
            Peer::Python2 => vec![peers.join("mcp2/bin/python"), script],
            Peer::Routed => vec![
                peers.join("mcp2/bin/python"),
                interop.join("routed_server.py"),
            ],
            Peer::Guarded => vec![
                peers.join("mcp2/bin/python"),
                interop.join("oauth_server.py"),
            ],
            Peer::Python1 => vec![peers.join("mcp1/bin/python"), script],
            Peer::Roots2 => vec![peers.join("mcp2/bin/python"), script, "--roots".into()],
            Peer::Roots1 => vec![peers.join("mcp1/bin/python"), script, "--roots".into()],
            Peer::Changing => vec![peers.join("mcp2/bin/python"), script, "--changes".into()],
            Peer::Chatty2 => vec![peers.join("mcp2/bin/python"), script, "--chatty".into()],
            Peer::Chatty1 => vec![peers.join("mcp1/bin/python"), script, "--chatty".into()],
            Peer::Everything => vec![
                peers.join("node_modules/.bin/mcp-server-everything"),
                PathBuf::from("stdio"),
            ],
            Peer::Filesystem => vec![peers.join("node_modules/.bin/mcp-server-filesystem")],
            Peer::Memory => vec![peers.join("node_modules/.bin/mcp-server-memory")],
        }
    }

    /// The server as the transport starts it; this process reaps what the group leaves.
    fn command(self) -> ServerCommand {
        let argv = self.argv();
        ServerCommand::new(&argv[0])
            .args(&argv[1..])
            .reap_orphans(true)
    }

    /// The tool to call, its arguments, and the text it must answer.
    fn call(self) -> (&'static str, &'static str, &'static str) {
        match self {
            Peer::Python2
            | Peer::Python1
            | Peer::Roots2
            | Peer::Roots1
            | Peer::Guarded
            | Peer::Changing => (
                "word_count",
                r#"{"text":"vanilla stock needs review"}"#,
                "4 words",
            ),
            Peer::Everything => (
                "echo",
                r#"{"message":"hi from mcp-sansio"}"#,
                "Echo: hi from mcp-sansio",
            ),
            Peer::Chatty2 | Peer::Chatty1 => ("chatty", r#"{"lines":100}"#, "logged 100 lines"),
            Peer::Filesystem => ("list_allowed_directories", "{}", "Allowed directories:"),
            Peer::Memory => ("read_graph", "{}", EMPTY_GRAPH),
            Peer::Routed => (
                "regional_count",
                r#"{"text":"vanilla stock","region":"eu-west","shard":7,"dry_run":true}"#,
                "2 words; region='eu-west' shard=7 dry_run=True",
            ),
        }
    }

    /// How many tools the server advertises. server-everything registers
    /// `simulate-research-query` once it is told the session is initialized, without waiting
    /// for that to finish, so a listing right after the handshake may come before it.
    fn tools(self) -> std::ops::RangeInclusive<usize> {
        match self {
            Peer::Python2 | Peer::Python1 | Peer::Routed | Peer::Guarded => 1..=1,
            Peer::Roots2 => 8..=8,
            Peer::Roots1 => 5..=5,
            Peer::Changing => 3..=3,
            Peer::Chatty2 | Peer::Chatty1 => 2..=2,
            Peer::Everything => 12..=13,
            Peer::Filesystem => 14..=14,
            Peer::Memory => 9..=9,
        }
    }
}

/// The folder `.ci/install-peers` installed the servers into.
fn peers() -> PathBuf {
    let dir = std::env::var_os("MCP_INTEROP_PEERS").map(PathBuf::from).expect(
        "MCP_INTEROP_PEERS is not set: run MCP_INTEROP_PEERS=$(.ci/install-peers) cargo test ... -- --ignored",
    );
    assert!(dir.is_dir(), "{} is not a folder", dir.display());
    dir
}

fn config(peer: Peer, protocol: ProtocolChoice) -> Config {
    let (tool, _, _) = peer.call();
    let mut config = Config::new([tool].into_iter().collect::<Allowlist>());
    config.limits = Limits::default();
    config.limits.operation_timeout = DEADLINE;
    config.protocol = protocol;
    config
}

/// The members of process group `pgid`, zombies included, read from /proc.
fn group_members(pgid: u32) -> Vec<u32> {
    let mut members = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
            continue;
        };
        // "pid (comm) state ppid pgrp ...": comm may hold anything, so read after its ')'.
        let after = stat.rsplit_once(')').map_or("", |(_, rest)| rest);
        let pgrp = after.split_whitespace().nth(2).and_then(|p| p.parse().ok());
        if pgrp == Some(pgid) {
            members.push(pid);
        }
    }
    members
}

fn assert_group_gone(peer: Peer, pgid: u32) {
    assert_eq!(
        group_members(pgid),
        Vec::<u32>::new(),
        "{peer:?}: left running"
    );
}

/// How a run of mcp-call ended: its exit code, stdout and stderr.
fn ended(output: std::process::Output) -> (Option<i32>, String, String) {
    (
        output.status.code(),
        String::from_utf8(output.stdout).unwrap(),
        String::from_utf8(output.stderr).unwrap(),
    )
}

/// Through the library: connect with `protocol`, expect `version`, list, call, close, and
/// check that the group is gone.
fn session(peer: Peer, protocol: ProtocolChoice, version: ProtocolVersion) {
    session_of(peer, &peer.command(), config(peer, protocol), version);
}

/// [`session`] with the server started by `command`, under `config`.
fn session_of(peer: Peer, command: &ServerCommand, config: Config, version: ProtocolVersion) {
    let protocol = config.protocol;
    let (server, connected) = called(peer, command, config);
    assert_eq!(connected.version, version, "{peer:?} {protocol:?}");
    closed(peer, server);
}

/// Through the library: start the server, connect, list, call and refuse
/// ([`call_and_refuse`]); the client is left open.
fn called(
    peer: Peer,
    command: &ServerCommand,
    config: Config,
) -> (StdioClient, mcp_sansio::Connected) {
    let mut server = StdioClient::spawn(command, config).unwrap();
    let connected = server.connect().unwrap();
    assert!(connected.capabilities.tools, "{peer:?}: {connected:?}");
    let catalog = server.list_tools().unwrap();
    call_and_refuse(
        peer,
        &catalog,
        |name, arguments| server.call_tool(name, arguments),
        |e| matches!(e, StdioError::Mcp(Error::Misuse(_))),
    );
    (server, connected)
}

/// [`called`] over Streamable HTTP: connects `client`, lists, calls `peer`'s tool and has a
/// tool not allowed refused; returns the client, still connected, and what it connected to.
fn http_called(peer: Peer, mut client: HttpClient) -> (HttpClient, mcp_sansio::Connected) {
    let connected = client.connect().unwrap();
    let catalog = client.list_tools().unwrap();
    call_and_refuse(
        peer,
        &catalog,
        |name, arguments| client.call_tool(name, arguments),
        |e| matches!(e, HttpClientError::Mcp(Error::Misuse(_))),
    );
    (client, connected)
}

/// Closes `server` and checks that its whole process group is gone.
fn closed(peer: Peer, server: StdioClient) {
    let pgid = server.pid();
    server.close(Duration::from_secs(2)).unwrap();
    assert_group_gone(peer, pgid);
}

/// A tokio runtime of its own, and on it the async driver connected to `peer` over stdio in
/// `protocol` (its events dropped).
fn async_connected(
    peer: Peer,
    protocol: ProtocolChoice,
) -> (tokio::runtime::Runtime, mcp_sansio_tokio::Handle) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let (server, _events) = runtime
        .block_on(mcp_sansio_tokio::connect_stdio(
            &peer.command(),
            config(peer, protocol),
        ))
        .unwrap();
    (runtime, server)
}

/// Through the async driver: the same session as [`session`], on a tokio runtime.
fn async_session(peer: Peer, protocol: ProtocolChoice, version: ProtocolVersion) {
    let (runtime, server) = async_connected(peer, protocol);
    let pgid = server.pid().unwrap();
    async_checks(&runtime, server, peer, protocol, version);
    assert_group_gone(peer, pgid);
}

/// Through the async driver, once connected: the revision is `version`; list, call, refuse
/// a tool not allowed, close.
fn async_checks(
    runtime: &tokio::runtime::Runtime,
    server: mcp_sansio_tokio::Handle,
    peer: Peer,
    protocol: ProtocolChoice,
    version: ProtocolVersion,
) {
    assert_eq!(server.server().version, version, "{peer:?} {protocol:?}");
    let catalog = runtime.block_on(server.list_tools()).unwrap();
    call_and_refuse(
        peer,
        &catalog,
        |name, arguments| runtime.block_on(server.call_tool(name, arguments)),
        |e| matches!(e, mcp_sansio_tokio::AsyncError::Mcp(Error::Misuse(_))),
    );
    runtime.block_on(server.close()).unwrap();
}

/// After the listing, over any transport: the catalog holds the peer's tools, the peer's
/// call answers its text, and an advertised tool the application did not allow is refused
/// before anything is sent (`refused` recognises that error).
fn call_and_refuse<E: std::fmt::Debug>(
    peer: Peer,
    catalog: &mcp_sansio::Catalog,
    mut call: impl FnMut(&str, &RawObject) -> Result<mcp_sansio::CallToolResult, E>,
    refused: impl Fn(&E) -> bool,
) {
    assert!(
        peer.tools().contains(&catalog.tools().len()),
        "{peer:?}: {catalog:?}"
    );
    let (tool, args, expected) = peer.call();
    let arguments = RawObject::parse(args, &Limits::default()).unwrap();
    let result = call(tool, &arguments).unwrap();
    assert!(!result.is_error, "{peer:?}: {result:?}");
    assert_eq!(result.text(), expected, "{peer:?}");
    if let Some(other) = catalog.tools().iter().find(|t| t.name != tool) {
        let outcome = call(&other.name, &RawObject::empty());
        assert!(outcome.as_ref().err().is_some_and(&refused), "{outcome:?}");
    }
}

/// Through the library: a client limited to an era the server does not speak is refused
/// as incompatible, and the group is still ended.
fn refused_era(peer: Peer, protocol: ProtocolChoice) {
    let mut server = StdioClient::spawn(&peer.command(), config(peer, protocol)).unwrap();
    let pgid = server.pid();
    match server.connect() {
        Err(StdioError::Mcp(Error::Incompatible(Incompatible::NotStateless { .. }))) => {}
        other => panic!("{peer:?} {protocol:?}: {other:?}"),
    }
    server.close(Duration::from_secs(2)).unwrap();
    assert_group_gone(peer, pgid);
}

/// Through mcp-call: runs it with `args` against the peer, started by a shell that writes
/// the server's pid (its group's id) first. Returns how it ended, after checking that the
/// group is gone.
fn mcp_call(peer: Peer, args: &[&str]) -> (Option<i32>, String, String) {
    let dir = std::env::temp_dir().join(format!(
        "mcp-interop-{}-{peer:?}-{}",
        std::process::id(),
        args.join("_").replace(['/', '{', '}', '"', ':', ' '], "")
    ));
    std::fs::create_dir_all(&dir).unwrap();
    let pid_file = dir.join("pid");
    let argv = peer.argv();
    let output = Command::new(env!("CARGO_BIN_EXE_mcp-call"))
        .args(args)
        .args(["--timeout-ms", "20000", "--env"])
        .arg(format!("PID_FILE={}", pid_file.display()))
        .args([
            "--",
            "sh",
            "-c",
            r#"echo $$ > "$PID_FILE"; exec "$@""#,
            "sh",
        ])
        .args(&argv)
        .output()
        .unwrap();
    let pgid: u32 = std::fs::read_to_string(&pid_file)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
    assert_group_gone(peer, pgid);
    ended(output)
}

/// The official Python SDK's servers log each step of a call unasked (`ctx.info`, one
/// `notifications/message` a line; `mcp` 2.x only in the handshake revisions): a call that
/// logs 100 lines finishes under the default limits, every line reaching the application in
/// order, and so it does through mcp-call, unless `--max-notifications` caps it below that.
#[test]
#[ignore = "needs the real servers: MCP_INTEROP_PEERS=$(.ci/install-peers)"]
fn the_python_sdks_log_each_step_of_a_call_and_the_call_still_finishes() {
    for (peer, protocol) in [
        (Peer::Chatty1, ProtocolChoice::Auto),
        (Peer::Chatty2, ProtocolChoice::Stateful),
    ] {
        let (mut server, _) = called(peer, &peer.command(), config(peer, protocol));
        assert_eq!(logged(server.take_events()), steps_logged(100), "{peer:?}");
        closed(peer, server);
    }
    let (tool, args, expected) = Peer::Chatty1.call();
    let call = ["--call", tool, "--allow", tool, "--args", args];
    let (code, out, err) = mcp_call(Peer::Chatty1, &call);
    assert_eq!(
        (code, out.as_str()),
        (Some(0), &*format!("{expected}\n")),
        "{err}"
    );
    let capped = [&call[..], &["--max-notifications", "16"]].concat();
    let (code, out, err) = mcp_call(Peer::Chatty1, &capped);
    assert_eq!((code, out.as_str()), (Some(4), ""), "{err}");
    assert!(
        err.contains("more than 16 messages arrived before an answer"),
        "{err}"
    );
}

/// The log messages among `events`, as `level data`.
fn logged(events: Vec<Event>) -> Vec<String> {
    events
        .into_iter()
        .filter_map(|event| match event {
            Event::Notification(ServerNotification::Log { level, data, .. }) => {
                Some(format!("{level} {}", data.as_str()))
            }
            _ => None,
        })
        .collect()
}

/// What the `chatty` tool logs of a call of `lines` lines.
fn steps_logged(lines: usize) -> Vec<String> {
    (1..=lines)
        .map(|line| format!(r#"info "step {line} of {lines}""#))
        .collect()
}

/// A level asked for (`Client::set_log_level`) reaches each kind of server as that server
/// can take it. The official Python SDK 2.x in 2026-07-28 sends a request's log messages
/// only where the request names a level in its `_meta`, and only that level and above, and
/// it declares no `logging`; in the handshake revisions neither Python SDK declares
/// `logging` (each logs every level unasked, above), so neither is asked, and nothing is
/// sent; the TypeScript reference server declares it and says yes to `logging/setLevel`.
/// A level configured (`Config::log_level`) is asked by the client itself, over stdio and
/// over HTTP. Through the blocking host, which hands on what each server says, tagged; and
/// through mcp-call, whose `--log-level` prints what comes at that level and above.
#[test]
#[ignore = "needs the real servers: MCP_INTEROP_PEERS=$(.ci/install-peers)"]
fn a_level_asked_for_reaches_each_server_as_it_can_take_one() {
    let ask = |server: &mut StdioClient, level: LogLevel| {
        let now = server.now();
        server
            .client()
            .set_log_level(level, now)
            .map(|op| server.run(op))
    };
    let lines = RawObject::parse(r#"{"lines":3}"#, &Limits::default()).unwrap();
    let peer = Peer::Chatty2;
    let (mut server, connected) = called(peer, &peer.command(), config(peer, ProtocolChoice::Auto));
    assert_eq!(connected.version, ProtocolVersion::V2026_07_28);
    assert!(!connected.capabilities.logging, "{connected:?}");
    // The call `called` made asked for no level: the server logged none of its 100 lines.
    assert_eq!(logged(server.take_events()), Vec::<String>::new());
    for (level, expected) in [
        (LogLevel::Info, steps_logged(3)),
        (LogLevel::Warning, Vec::new()),
        (LogLevel::Debug, steps_logged(3)),
    ] {
        ask(&mut server, level).unwrap().unwrap();
        let result = server.call_tool("chatty", &lines).unwrap();
        assert_eq!(result.text(), "logged 3 lines");
        assert_eq!(logged(server.take_events()), expected, "{level}");
    }
    closed(peer, server);

    for (peer, protocol) in [
        (Peer::Chatty1, ProtocolChoice::Auto),
        (Peer::Chatty2, ProtocolChoice::Stateful),
    ] {
        let (mut server, _) = called(peer, &peer.command(), config(peer, protocol));
        assert_eq!(
            ask(&mut server, LogLevel::Warning).map(|_| ()),
            Err(Misuse::CapabilityNotOffered {
                capability: "logging"
            }),
            "{peer:?} {protocol:?}"
        );
        closed(peer, server);
    }

    let peer = Peer::Everything;
    let (mut server, connected) = called(peer, &peer.command(), config(peer, ProtocolChoice::Auto));
    assert!(connected.capabilities.logging, "{connected:?}");
    ask(&mut server, LogLevel::Error).unwrap().unwrap();
    closed(peer, server);

    // A level configured is asked by the client itself after the handshake, where the server
    // declared logging, and over HTTP nothing else goes out before its answer: server-
    // everything takes it over stdio and over HTTP with event-stream replies, and the session
    // goes on; the Python SDK 1.x, which declared none, is not asked. No event says so.
    let no_op_of_its_own = |events: Vec<Event>| {
        let ended: Vec<&Event> = events
            .iter()
            .filter(|e| matches!(e, Event::Finished { .. }))
            .collect();
        assert!(ended.is_empty(), "{ended:?}");
    };
    let configured = |peer: Peer| {
        let mut config = config(peer, ProtocolChoice::Stateful);
        config.log_level = Some(LogLevel::Debug);
        config
    };
    for peer in [Peer::Everything, Peer::Python1] {
        let (mut server, connected) = called(peer, &peer.command(), configured(peer));
        assert_eq!(connected.capabilities.logging, peer == Peer::Everything);
        no_op_of_its_own(server.take_events());
        closed(peer, server);
    }
    let everything = HttpPeer::start(Peer::Everything, Served::Events);
    let client = HttpClient::new(&everything.url, configured(Peer::Everything)).unwrap();
    let (mut client, _) = http_called(Peer::Everything, client);
    no_op_of_its_own(client.take_events());
    client.close();

    // The blocking host asks each as it can take one, and hands on what each says, tagged
    // with its id: the 2026-07-28 server what was asked for, the other what it says unasked.
    let servers = [("two", Peer::Chatty2), ("one", Peer::Chatty1)].map(|(id, peer)| {
        let config = config(peer, ProtocolChoice::Auto);
        mcp_sansio_stdio::HostServer::new(id, peer.command(), config)
    });
    let (mut host, failures) =
        mcp_sansio_stdio::Host::start(servers, mcp_sansio_host::PaletteConfig::default());
    assert!(failures.is_empty(), "{failures:?}");
    host.set_log_level("two", LogLevel::Info).unwrap();
    let refused = host.set_log_level("one", LogLevel::Warning);
    assert!(
        matches!(
            refused,
            Err(mcp_sansio_stdio::HostError::Stdio(StdioError::Mcp(
                mcp_sansio::Error::Misuse(Misuse::CapabilityNotOffered { .. })
            )))
        ),
        "{refused:?}"
    );
    for name in ["chatty", "one_chatty"] {
        assert_eq!(host.call(name, r#"{"lines":3}"#).text(), "logged 3 lines");
    }
    let heard: Vec<String> = host
        .take_events()
        .into_iter()
        .flat_map(|heard| {
            let server = heard.server;
            logged(vec![heard.event])
                .into_iter()
                .map(move |line| format!("{server} {line}"))
        })
        .collect();
    let expected: Vec<String> = ["two", "one"]
        .iter()
        .flat_map(|server| {
            steps_logged(3)
                .into_iter()
                .map(move |l| format!("{server} {l}"))
        })
        .collect();
    assert_eq!(heard, expected);
    for (id, status) in host.close(Duration::from_secs(2)) {
        assert!(status.is_ok(), "{id}: {status:?}");
    }

    // mcp-call: in 2026-07-28 the level reaches the server; in a handshake revision the
    // server is not asked, and what it logs unasked is printed at the level and above.
    let (tool, args, expected) = Peer::Chatty2.call();
    let call = ["--call", tool, "--allow", tool, "--args", args];
    let step = |line: usize| format!("mcp-call: server log info: step {line} of 100");
    for (peer, level, printed) in [
        (
            Peer::Chatty2,
            "info",
            (1..=100).map(step).collect::<Vec<_>>(),
        ),
        (Peer::Chatty2, "error", Vec::new()),
        (Peer::Chatty1, "info", (1..=100).map(step).collect()),
        (Peer::Chatty1, "warning", Vec::new()),
    ] {
        let (code, out, err) = mcp_call(peer, &[&call[..], &["--log-level", level]].concat());
        assert_eq!(
            (code, out.as_str()),
            (Some(0), &*format!("{expected}\n")),
            "{err}"
        );
        let mut lines: Vec<&str> = err.lines().collect();
        if peer == Peer::Chatty1 {
            let note = lines.remove(0);
            assert!(note.contains("declared no logging"), "{err}");
        }
        assert_eq!(lines, printed, "{peer:?} {level}");
    }
}

/// The progress reports among the events `server` kept, as (progress, total).
fn reports(server: &mut StdioClient) -> Vec<(f64, Option<f64>)> {
    server
        .take_events()
        .into_iter()
        .filter_map(|event| match event {
            Event::Progress {
                progress, total, ..
            } => Some((progress, total)),
            _ => None,
        })
        .collect()
}

/// Asked for progress, the official Python SDK's servers report each step of a call
/// (`ctx.report_progress`, sent only where the request names a token), in every revision
/// they speak over stdio: a call that takes twice its timeout finishes, as each report
/// restarts that timeout, and every report reaches the application as the call's own; a
/// resource read as slowly, on its own terms (`read_resource_with`, through the client's
/// `run`), is carried to its end the same way; the same call, not asking, ends at its
/// timeout (shown once: it takes the server's grace).
#[test]
#[ignore = "needs the real servers: MCP_INTEROP_PEERS=$(.ci/install-peers)"]
fn the_python_sdks_report_progress_when_asked_and_it_keeps_a_long_call_going() {
    // Six steps half a second apart: three seconds, against a timeout of two.
    let arguments = RawObject::parse(r#"{"lines":6,"pause":0.5}"#, &Limits::default()).unwrap();
    let timeout = CallOptions::new().timeout(Duration::from_secs(2));
    for (peer, protocol) in [
        (Peer::Chatty1, ProtocolChoice::Auto),
        (Peer::Chatty2, ProtocolChoice::Stateful),
        (Peer::Chatty2, ProtocolChoice::Auto),
    ] {
        let (mut server, _) = called(peer, &peer.command(), config(peer, protocol));
        server.take_events();
        let patient = timeout.progress_up_to(DEADLINE);
        let result = server
            .call_tool_with("chatty", &arguments, patient)
            .unwrap();
        assert_eq!(result.text(), "logged 6 lines", "{peer:?} {protocol:?}");
        let steps: Vec<(f64, Option<f64>)> = (1..=6).map(|n| (f64::from(n), Some(6.0))).collect();
        assert_eq!(reports(&mut server), steps, "{peer:?} {protocol:?}");
        let now = server.now();
        let op = server
            .client()
            .read_resource_with("slow://6", patient, now)
            .unwrap();
        let contents = server.run(op).unwrap();
        assert_eq!(
            contents.iter().map(|c| &c.body).collect::<Vec<_>>(),
            [&mcp_sansio::ResourceBody::Text("read in 6 steps".into())],
            "{peer:?} {protocol:?}"
        );
        assert_eq!(reports(&mut server), steps, "{peer:?} {protocol:?}");
        if let Peer::Chatty1 = peer {
            let error = server
                .call_tool_with("chatty", &arguments, timeout)
                .unwrap_err();
            assert!(
                matches!(error, StdioError::Mcp(Error::Timeout { .. })),
                "{peer:?} {protocol:?}: {error:?}"
            );
        }
        closed(peer, server);
    }
    // The async driver: the same call, its reports on the events channel.
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let peer = Peer::Chatty2;
    let (server, mut events) = runtime
        .block_on(mcp_sansio_tokio::connect_stdio(
            &peer.command(),
            config(peer, ProtocolChoice::Auto),
        ))
        .unwrap();
    runtime.block_on(server.list_tools()).unwrap();
    let patient = timeout.progress_up_to(DEADLINE);
    let call = server.call_tool_with("chatty", &arguments, patient);
    assert_eq!(runtime.block_on(call).unwrap().text(), "logged 6 lines");
    let mut reported = 0;
    while let Ok(event) = events.try_recv() {
        reported += usize::from(matches!(event, Event::Progress { .. }));
    }
    assert_eq!(reported, 6);
    runtime.block_on(server.close()).unwrap();
}

/// One operation over any transport: started on the client, run to its end, its error the
/// protocol's (a transport's own error fails the test).
trait Asked {
    fn ask<T: mcp_sansio::Awaited + Send + 'static>(
        &mut self,
        start: impl FnOnce(&mut mcp_sansio::Client, mcp_sansio::Instant) -> Result<Op<T>, Misuse>
            + Send
            + 'static,
    ) -> Result<T, Error>;
}

/// The async driver, on a runtime of its own.
impl Asked for (tokio::runtime::Runtime, mcp_sansio_tokio::Handle) {
    fn ask<T: mcp_sansio::Awaited + Send + 'static>(
        &mut self,
        start: impl FnOnce(&mut mcp_sansio::Client, mcp_sansio::Instant) -> Result<Op<T>, Misuse>
            + Send
            + 'static,
    ) -> Result<T, Error> {
        let (runtime, server) = self;
        runtime
            .block_on(server.run(start))
            .map_err(|error| match error {
                mcp_sansio_tokio::AsyncError::Mcp(error) => error,
                other => panic!("{other}"),
            })
    }
}

/// [`Asked`] for a blocking client, whose transport's errors wrap the protocol's in `$mcp`.
macro_rules! asked_blocking {
    ($client:ty, $mcp:path) => {
        impl Asked for $client {
            fn ask<T: mcp_sansio::Awaited + Send + 'static>(
                &mut self,
                start: impl FnOnce(
                        &mut mcp_sansio::Client,
                        mcp_sansio::Instant,
                    ) -> Result<Op<T>, Misuse>
                    + Send
                    + 'static,
            ) -> Result<T, Error> {
                let now = self.now();
                let op = start(self.client(), now).map_err(Error::Misuse)?;
                self.run(op).map_err(|error| match error {
                    $mcp(error) => error,
                    other => panic!("{other}"),
                })
            }
        }
    };
}

asked_blocking!(StdioClient, StdioError::Mcp);
asked_blocking!(HttpClient, HttpClientError::Mcp);

/// The text of each message of an expanded prompt, with its role; other content as `None`.
fn said(prompt: &mcp_sansio::GetPromptResult) -> Vec<(&str, Option<&str>)> {
    prompt
        .messages
        .iter()
        .map(|message| {
            let text = match &message.content {
                mcp_sansio::ContentBlock::Text { text, .. } => Some(text.as_str()),
                _ => None,
            };
            (message.role.as_str(), text)
        })
        .collect()
}

/// The text of the one content a resource read gave, checked to be at `uri`.
fn read_text(server: &mut impl Asked, uri: &str) -> String {
    let owned = uri.to_owned();
    let contents = server
        .ask(move |c, now| c.read_resource(&owned, now))
        .unwrap();
    assert_eq!(contents.len(), 1, "{uri}: {contents:?}");
    assert_eq!(contents[0].uri, uri);
    match &contents[0].body {
        mcp_sansio::ResourceBody::Text(text) => text.clone(),
        other => panic!("{uri}: {other:?}"),
    }
}

/// The prompt `name` expanded with `arguments`, checked to open with a user's message of
/// `text`.
fn expanded(
    server: &mut impl Asked,
    name: &'static str,
    arguments: &'static [(&'static str, &'static str)],
    text: &str,
) -> mcp_sansio::GetPromptResult {
    let expanded = server
        .ask(move |c, now| c.get_prompt(name, arguments, now))
        .unwrap();
    assert_eq!(
        said(&expanded).first(),
        Some(&("user", Some(text))),
        "{name}"
    );
    expanded
}

/// Prompts and resources of `peer` through `server`, connected: the prompts listed with
/// their arguments, expanded with the arguments given, resources listed and read, and a
/// prompt the server does not have answered with its error (never a result). The texts are
/// the peers' own: server-everything's prompt templates and the files it serves, compared
/// with the files on disk; the Python script's `review` and `words://guide`.
fn prompts_and_resources(peer: Peer, server: &mut impl Asked) {
    let prompts = server.ask(|c, now| c.list_prompts(now)).unwrap();
    let resources = server.ask(|c, now| c.list_resources(now)).unwrap();
    let (arguments, uri) = match peer {
        Peer::Everything => (
            vec![
                ("simple-prompt", vec![]),
                ("args-prompt", vec![("city", true), ("state", false)]),
            ],
            "demo://resource/static/document/features.md",
        ),
        _ => (
            vec![("review", vec![("text", true), ("tone", false)])],
            "words://guide",
        ),
    };
    for (name, expected) in arguments {
        let prompt = prompts.iter().find(|p| p.name == name);
        let prompt = prompt.unwrap_or_else(|| panic!("{peer:?}: no {name} in {prompts:?}"));
        let listed: Vec<(&str, bool)> = prompt
            .arguments
            .iter()
            .map(|a| (a.name.as_str(), a.required))
            .collect();
        assert_eq!(listed, expected, "{peer:?} {name}");
        // Asked for as listed without its required arguments, it is refused unsent (the
        // same session then goes on below, so nothing was left half-sent).
        let first_required = expected.iter().find(|(_, required)| *required);
        if let Some((argument, _)) = first_required {
            let prompt = prompt.clone();
            let refused = server
                .ask(move |c, now| c.get_listed_prompt(&prompt, &[], CallOptions::new(), now));
            assert!(
                matches!(&refused, Err(Error::Misuse(Misuse::PromptArgumentMissing { argument: a, .. }))
                    if a == *argument),
                "{peer:?} {name}: {refused:?}"
            );
        }
    }
    assert!(
        resources.iter().any(|r| r.uri == uri),
        "{peer:?}: {resources:?}"
    );
    let text = read_text(server, uri);
    if peer == Peer::Everything {
        let both: &[_] = &[("city", "Paris"), ("state", "Texas")];
        expanded(
            server,
            "args-prompt",
            both,
            "What's weather in Paris, Texas?",
        );
        expanded(
            server,
            "args-prompt",
            &[("city", "Lima")],
            "What's weather in Lima?",
        );
        // A prompt that embeds a resource: its second message is the resource itself.
        let arguments: &[_] = &[("resourceType", "Text"), ("resourceId", "2")];
        let opening = "This prompt includes the Text resource with id: 2. \
            Please analyze the following resource:";
        let embedding = expanded(server, "resource-prompt", arguments, opening);
        assert_eq!(embedding.messages.len(), 2, "{embedding:?}");
        match &embedding.messages[1].content {
            mcp_sansio::ContentBlock::Resource { resource, .. } => {
                assert_eq!(resource.uri, "demo://resource/dynamic/text/2");
                assert!(
                    matches!(&resource.body, mcp_sansio::ResourceBody::Text(t)
                        if t.starts_with("Resource 2: This is a plaintext resource")),
                    "{resource:?}"
                );
            }
            other => panic!("{other:?}"),
        }
        let on_disk = peers()
            .join("node_modules/@modelcontextprotocol/server-everything/dist/docs/features.md");
        assert_eq!(text, std::fs::read_to_string(on_disk).unwrap());
        let dynamic = read_text(server, "demo://resource/dynamic/text/3");
        assert!(dynamic.starts_with("Resource 3: "), "{dynamic}");
    } else {
        assert_eq!(prompts.len(), 1, "{prompts:?}");
        let arguments: &[_] = &[("text", "hi there"), ("tone", "blunt")];
        let opening = "Review this text in a blunt tone: hi there";
        let review = expanded(server, "review", arguments, opening);
        assert_eq!(review.messages.len(), 1, "{review:?}");
        assert_eq!(
            review.description.as_deref(),
            Some("Asks for a review of a text.")
        );
        assert_eq!(text, "Words are runs of characters between whitespace.");
    }
    let missing = server.ask(|c, now| c.get_prompt("no-such-prompt", &[], now));
    assert!(
        matches!(missing, Err(Error::Rpc(_))),
        "{peer:?}: {missing:?}"
    );
}

/// Prompts and resources, which tools are not: each peer's listed, expanded and read over
/// stdio in every era it speaks and over Streamable HTTP, through `run` on each blocking
/// client and on the async driver, and a prompt it does not have answered with its error.
#[test]
#[ignore = "needs the real servers: MCP_INTEROP_PEERS=$(.ci/install-peers)"]
fn every_peer_s_prompts_and_resources_are_listed_expanded_and_read() {
    for (peer, protocol) in [
        (Peer::Everything, ProtocolChoice::Auto),
        (Peer::Python2, ProtocolChoice::Auto),
        (Peer::Python2, ProtocolChoice::Stateful),
        (Peer::Python1, ProtocolChoice::Auto),
    ] {
        let (mut server, _) = called(peer, &peer.command(), config(peer, protocol));
        prompts_and_resources(peer, &mut server);
        closed(peer, server);
    }
    for (peer, served, protocol) in [
        (Peer::Everything, Served::Events, ProtocolChoice::Auto),
        (Peer::Python2, Served::Json, ProtocolChoice::Auto),
        (Peer::Python2, Served::Events, ProtocolChoice::Stateful),
        (Peer::Python1, Served::Events, ProtocolChoice::Auto),
    ] {
        let http = HttpPeer::start(peer, served);
        let client = HttpClient::new(&http.url, config(peer, protocol)).unwrap();
        let (mut client, _) = http_called(peer, client);
        prompts_and_resources(peer, &mut client);
        client.close();
    }
    for peer in [Peer::Everything, Peer::Python2] {
        let mut driven = async_connected(peer, ProtocolChoice::Auto);
        prompts_and_resources(peer, &mut driven);
        let (runtime, server) = driven;
        runtime.block_on(server.close()).unwrap();
    }
}

/// Through mcp-call: list and call in `protocol`.
fn command_line(peer: Peer, protocol: &str) {
    let (tool, args, expected) = peer.call();
    let (code, stdout, stderr) = mcp_call(peer, &["--list", "--protocol", protocol]);
    assert_eq!(code, Some(0), "{peer:?} {protocol}: {stderr}");
    assert!(peer.tools().contains(&stdout.lines().count()), "{stdout}");
    assert!(
        stdout.lines().any(|l| l.starts_with(&format!("{tool}\t"))),
        "{stdout}"
    );
    let call = [
        "--call",
        tool,
        "--allow",
        tool,
        "--args",
        args,
        "--protocol",
        protocol,
    ];
    let (code, stdout, stderr) = mcp_call(peer, &call);
    assert_eq!(code, Some(0), "{peer:?} {protocol}: {stderr}");
    assert_eq!(stdout, format!("{expected}\n"));
}

#[test]
#[ignore = "needs the real servers: MCP_INTEROP_PEERS=$(.ci/install-peers)"]
fn python_sdk_2_speaks_both_eras_through_the_library() {
    use ProtocolVersion::*;
    let peer = Peer::Python2;
    session(peer, ProtocolChoice::Auto, V2026_07_28);
    session(peer, ProtocolChoice::Stateless, V2026_07_28);
    session(peer, ProtocolChoice::Stateful, V2025_11_25);
    session(peer, ProtocolChoice::Pinned(V2025_06_18), V2025_06_18);
}

#[test]
#[ignore = "needs the real servers: MCP_INTEROP_PEERS=$(.ci/install-peers)"]
fn python_sdk_1_speaks_the_handshake_and_is_refused_as_stateless() {
    // Its -32602 to server/discover sends auto mode to the handshake at once.
    legacy_only(Peer::Python1);
}

#[test]
#[ignore = "needs the real servers: MCP_INTEROP_PEERS=$(.ci/install-peers)"]
fn server_everything_speaks_the_handshake_and_is_refused_as_stateless() {
    // Its -32601 to server/discover sends auto mode to the handshake at once.
    legacy_only(Peer::Everything);
}

#[test]
#[ignore = "needs the real servers: MCP_INTEROP_PEERS=$(.ci/install-peers)"]
fn the_async_driver_speaks_to_every_peer_over_stdio() {
    use ProtocolVersion::*;
    async_session(Peer::Python2, ProtocolChoice::Auto, V2026_07_28);
    async_session(Peer::Python2, ProtocolChoice::Stateful, V2025_11_25);
    async_session(Peer::Python1, ProtocolChoice::Auto, V2025_11_25);
    async_session(Peer::Everything, ProtocolChoice::Auto, V2025_11_25);
}

/// A server of the handshake revisions only: auto, legacy and a pinned revision connect, and
/// a client limited to the stateless revision is refused.
fn legacy_only(peer: Peer) {
    use ProtocolVersion::*;
    session(peer, ProtocolChoice::Auto, V2025_11_25);
    session(peer, ProtocolChoice::Stateful, V2025_11_25);
    session(peer, ProtocolChoice::Pinned(V2025_06_18), V2025_06_18);
    refused_era(peer, ProtocolChoice::Stateless);
}

#[test]
#[ignore = "needs the real servers: MCP_INTEROP_PEERS=$(.ci/install-peers)"]
fn mcp_call_lists_and_calls_every_peer_in_every_era_it_speaks() {
    for protocol in ["auto", "modern", "legacy"] {
        command_line(Peer::Python2, protocol);
    }
    for protocol in ["auto", "legacy"] {
        command_line(Peer::Python1, protocol);
        command_line(Peer::Everything, protocol);
    }
}

#[test]
#[ignore = "needs the real servers: MCP_INTEROP_PEERS=$(.ci/install-peers)"]
fn mcp_call_refuses_what_a_real_peer_cannot_do_or_was_not_allowed() {
    for peer in [Peer::Python1, Peer::Everything] {
        let (code, _, stderr) = mcp_call(peer, &["--list", "--protocol", "modern"]);
        assert_eq!(code, Some(4), "{peer:?}: {stderr}");
        assert!(
            stderr.contains("does not speak the stateless revision"),
            "{stderr}"
        );
    }
    // server-everything advertises get-env, which would hand its environment to the model;
    // not allowed, it is refused before the server is even started.
    let (code, _, stderr) = mcp_call_unstarted(&["--call", "get-env"]);
    assert_eq!(code, Some(3), "{stderr}");
    // Allowed, with arguments its schema refuses: refused here against the schema the
    // server published, before the call is sent (exit 3, naming each argument), where
    // before this check the server itself answered with a tool error.
    let (code, stdout, stderr) = mcp_call(
        Peer::Everything,
        &[
            "--call",
            "get-sum",
            "--allow",
            "get-sum",
            "--args",
            r#"{"a":"one"}"#,
        ],
    );
    assert_eq!(code, Some(3), "{stdout} {stderr}");
    assert_eq!(stdout, "");
    assert!(
        stderr.contains("missing required argument 'b'")
            && stderr.contains("argument 'a' must be a number")
            && stderr.contains("nothing was sent"),
        "{stderr}"
    );
}

/// mcp-call refusing before it starts anything: the server command is never run.
fn mcp_call_unstarted(args: &[&str]) -> (Option<i32>, String, String) {
    let argv = Peer::Everything.argv();
    let output = Command::new(env!("CARGO_BIN_EXE_mcp-call"))
        .args(args)
        .arg("--")
        .args(&argv)
        .output()
        .unwrap();
    ended(output)
}

/// The three peers as one host's servers: `py2`, `py1`, `everything`.
const HOST_PEERS: [(&str, Peer); 3] = [
    ("py2", Peer::Python2),
    ("py1", Peer::Python1),
    ("everything", Peer::Everything),
];

/// The model-facing names a host over the peers of [`HOST_PEERS`] offers, and the call of
/// each peer's tool: its arguments and its peer's answer.
const HOST_CALLS: [(&str, Peer); 3] = [
    ("word_count", Peer::Python2),
    ("py1_word_count", Peer::Python1),
    ("echo", Peer::Everything),
];

/// Arguments `echo`'s schema refuses, and the refusal the model reads, nothing sent.
const REFUSED_ECHO: (&str, &str) = (
    r#"{"message": 5}"#,
    "not called: argument 'message' must be a string",
);

/// The palette of a host over the peers of [`HOST_PEERS`], wherever they are, routes each
/// tool to its peer, and offers the three.
fn assert_routes(palette: &mcp_sansio_host::Palette) {
    let routes: Vec<(String, String, String)> = palette
        .tools()
        .map(|t| (t.name.to_owned(), t.server.to_owned(), t.tool.name.clone()))
        .collect();
    // Both Python peers have word_count: the first keeps the name, the second is qualified.
    let expected = [
        ("echo", "everything", "echo"),
        ("py1_word_count", "py1", "word_count"),
        ("word_count", "py2", "word_count"),
    ];
    let expected: Vec<(String, String, String)> = expected
        .iter()
        .map(|(a, b, c)| ((*a).to_owned(), (*b).to_owned(), (*c).to_owned()))
        .collect();
    assert_eq!(routes, expected);
    let offer = palette.offer(mcp_sansio_host::Provider::OpenAiChat);
    assert_eq!(offer.as_array().unwrap().len(), 3);
}

/// A host over `servers` (the peers of [`HOST_PEERS`], wherever they are): the palette
/// routes each tool to its peer, each call gets its peer's answer, and arguments the
/// peer's schema refuses are refused before sending.
fn host_routes_each_call(servers: Vec<mcp_sansio_stdio::HostServer>) -> mcp_sansio_stdio::Host {
    let (mut host, failures) =
        mcp_sansio_stdio::Host::start(servers, mcp_sansio_host::PaletteConfig::default());
    assert!(failures.is_empty(), "{failures:?}");
    assert_routes(host.palette());
    for (name, peer) in HOST_CALLS {
        let (_, args, answer) = peer.call();
        let observation = host.call(name, args);
        assert_eq!(observation.text(), answer, "{name}");
        assert!(!observation.is_error());
    }
    let (args, refusal) = REFUSED_ECHO;
    assert_eq!(host.call("echo", args).text(), refusal);
    host
}

/// The async host over the same peers, one at a URL and two started: every peer is called
/// at once, from tasks of their own, and each answers its own call; closing ends the two
/// started peers' process groups.
#[test]
#[ignore = "needs the real servers: MCP_INTEROP_PEERS=$(.ci/install-peers)"]
fn one_async_host_over_real_peers_at_a_url_and_started_calls_them_all_at_once() {
    use mcp_sansio_stdio::HostServer;
    let py2 = HttpPeer::start(Peer::Python2, Served::Events);
    let started = |id: &str, peer: Peer| {
        HostServer::new(id, peer.command(), config(peer, ProtocolChoice::Auto))
    };
    let servers = vec![
        HostServer::http(
            "py2",
            &py2.url,
            &[],
            config(Peer::Python2, ProtocolChoice::Auto),
        ),
        started("py1", Peer::Python1),
        started("everything", Peer::Everything),
    ];
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let (host, _events, failures) = mcp_sansio_tokio::Host::start(
            servers,
            mcp_sansio_host::PaletteConfig::default(),
            mcp_sansio_tokio::HostLimits::default(),
        )
        .await;
        assert!(failures.is_empty(), "{failures:?}");
        host.with_palette(assert_routes);
        let calls: Vec<_> = HOST_CALLS
            .into_iter()
            .map(|(name, peer)| {
                let host = host.clone();
                tokio::spawn(async move {
                    let (_, args, answer) = peer.call();
                    (name, host.call(name, args).await, answer)
                })
            })
            .collect();
        for call in calls {
            let (name, observation, answer) = call.await.unwrap();
            assert_eq!(observation.text(), answer, "{name}");
            assert!(!observation.is_error(), "{name}");
        }
        let (args, refusal) = REFUSED_ECHO;
        assert_eq!(host.call("echo", args).await.text(), refusal);
        let pgids: Vec<(u32, Peer)> = [("py1", Peer::Python1), ("everything", Peer::Everything)]
            .into_iter()
            .map(|(id, peer)| (host.server(id).unwrap().pid().unwrap(), peer))
            .collect();
        assert_eq!(host.server("py2").unwrap().pid(), None);
        let closed = host.close().await;
        let ended: Vec<(&str, bool)> = closed
            .iter()
            .map(|(id, status)| (id.as_str(), status.as_ref().unwrap().is_some()))
            .collect();
        assert_eq!(ended, [("everything", true), ("py1", true), ("py2", false)]);
        assert!(host.take_failures().is_empty());
        for (pgid, peer) in pgids {
            assert_group_gone(peer, pgid);
        }
    });
}

#[test]
#[ignore = "needs the real servers: MCP_INTEROP_PEERS=$(.ci/install-peers)"]
fn one_host_over_every_real_peer_routes_each_call_and_refuses_bad_arguments() {
    use mcp_sansio_stdio::HostServer;
    let servers = HOST_PEERS
        .map(|(id, peer)| HostServer::new(id, peer.command(), config(peer, ProtocolChoice::Auto)));
    let host = host_routes_each_call(servers.into());
    let pgids: Vec<u32> = HOST_PEERS
        .iter()
        .map(|(id, _)| host.pid(id).unwrap())
        .collect();
    for (id, status) in host.close(Duration::from_secs(1)) {
        assert!(status.is_ok(), "{id}: {status:?}");
    }
    for (pgid, (_, peer)) in pgids.into_iter().zip(HOST_PEERS) {
        assert_group_gone(peer, pgid);
    }
}

#[test]
#[ignore = "needs the real servers: MCP_INTEROP_PEERS=$(.ci/install-peers)"]
fn one_host_over_real_peers_at_urls_and_started_routes_each_call() {
    use mcp_sansio_stdio::HostServer;
    // The Python SDK 2 and server-everything over HTTP (2025-11-25 sessions, SSE replies),
    // the Python SDK 1 started over stdio: one palette over both transports.
    let py2 = HttpPeer::start(Peer::Python2, Served::Events);
    let everything = HttpPeer::start(Peer::Everything, Served::Events);
    let at_url = |id: &str, served: &HttpPeer| {
        HostServer::http(
            id,
            &served.url,
            &[],
            config(served.peer, ProtocolChoice::Auto),
        )
    };
    let servers = vec![
        at_url("py2", &py2),
        HostServer::new(
            "py1",
            Peer::Python1.command(),
            config(Peer::Python1, ProtocolChoice::Auto),
        ),
        at_url("everything", &everything),
    ];
    let host = host_routes_each_call(servers);
    assert_eq!(host.pid("py2"), None);
    assert!(host.pid("py1").is_some());
    let ended: Vec<(String, bool)> = host
        .close(Duration::from_secs(1))
        .into_iter()
        .map(|(id, status)| (id, status.unwrap().is_some()))
        .collect();
    let expected = [("everything", false), ("py1", true), ("py2", false)];
    assert_eq!(
        ended,
        expected.map(|(id, started)| (id.to_owned(), started))
    );
}

/// How a peer serves HTTP.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Served {
    /// Streamable HTTP, replies as server-sent events.
    Events,
    /// Streamable HTTP, replies in JSON (the Python SDK's `json_response`).
    Json,
    /// The 2024-11-05 transport: an event stream at `/sse`, messages POSTed elsewhere.
    OldSse,
}

/// A peer serving HTTP on a port of its own, killed when dropped (and the OAuth peer's log
/// removed).
struct HttpPeer {
    peer: Peer,
    child: std::process::Child,
    url: String,
    log: Option<PathBuf>,
}

impl HttpPeer {
    /// Starts `peer` over HTTP as `served` and waits until it accepts connections.
    fn start(peer: Peer, served: Served) -> HttpPeer {
        HttpPeer::start_with(peer, served, &[])
    }

    /// [`start`](Self::start), with `env` set for the peer.
    fn start_with(peer: Peer, served: Served, env: &[(&str, &str)]) -> HttpPeer {
        // A port the system just gave out and took back; the peer binds it right after.
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let argv = peer.argv();
        let mut command = Command::new(&argv[0]);
        match peer {
            Peer::Everything => {
                let mode = match served {
                    Served::OldSse => "sse",
                    Served::Events | Served::Json => "streamableHttp",
                };
                command.arg(mode).env("PORT", port.to_string());
            }
            Peer::Guarded => {
                // A log left by an earlier run on the same port is not this peer's witness.
                let _ = std::fs::remove_file(oauth_log(port));
                command
                    .args(&argv[1..])
                    .arg(port.to_string())
                    .arg(oauth_log(port));
            }
            Peer::Filesystem | Peer::Memory | Peer::Chatty2 | Peer::Chatty1 => {
                unreachable!("{peer:?} serves stdio only")
            }
            Peer::Python1
            | Peer::Python2
            | Peer::Routed
            | Peer::Roots2
            | Peer::Roots1
            | Peer::Changing => {
                let flag = match served {
                    Served::OldSse => "--sse",
                    Served::Events | Served::Json => "--http",
                };
                command.args(&argv[1..]).args([flag, &port.to_string()]);
                if served == Served::Json {
                    command.arg("--json");
                }
            }
        }
        let child = command
            .envs(env.iter().copied())
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        let started = std::time::Instant::now();
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(
                started.elapsed() < DEADLINE,
                "{peer:?} never listened on {port}"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        let path = match served {
            Served::OldSse => "sse",
            Served::Events | Served::Json => "mcp",
        };
        HttpPeer {
            peer,
            child,
            url: format!("http://127.0.0.1:{port}/{path}"),
            log: (peer == Peer::Guarded).then(|| oauth_log(port)),
        }
    }

    /// Through the library: connect with `protocol`, expect `version` (or, with `None`, a
    /// refusal as not stateless), list, call, refuse a tool not allowed, close.
    fn session(&self, protocol: ProtocolChoice, version: Option<ProtocolVersion>) {
        let peer = self.peer;
        let mut server = HttpClient::new(&self.url, config(peer, protocol)).unwrap();
        let Some(version) = version else {
            match server.connect() {
                Err(HttpClientError::Mcp(Error::Incompatible(Incompatible::NotStateless {
                    ..
                }))) => return,
                other => panic!("{peer:?} {protocol:?}: {other:?}"),
            }
        };
        let (server, connected) = http_called(peer, server);
        assert_eq!(connected.version, version, "{peer:?} {protocol:?}");
        server.close();
    }

    /// Through the async driver: connect with `protocol`, expect `version`, list, call,
    /// refuse a tool not allowed, close.
    fn async_session(&self, protocol: ProtocolChoice, version: ProtocolVersion) {
        let peer = self.peer;
        let (runtime, server, _events) = self.async_connect(config(peer, protocol));
        async_checks(&runtime, server, peer, protocol, version);
    }

    /// A runtime, and the async driver on it connected under `config` (and its events).
    fn async_connect(
        &self,
        config: Config,
    ) -> (
        tokio::runtime::Runtime,
        mcp_sansio_tokio::Handle,
        mcp_sansio_tokio::Events,
    ) {
        self.async_connect_with(&[], config)
    }

    /// As [`async_connect`](Self::async_connect), sending `headers` with every request.
    fn async_connect_with(
        &self,
        headers: &[(&str, &str)],
        config: Config,
    ) -> (
        tokio::runtime::Runtime,
        mcp_sansio_tokio::Handle,
        mcp_sansio_tokio::Events,
    ) {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let (server, events) = runtime
            .block_on(mcp_sansio_tokio::connect_http(&self.url, headers, config))
            .unwrap();
        (runtime, server, events)
    }

    /// Through mcp-call --url: list and call in `protocol`, and refuse a tool not allowed.
    fn command_line(&self, protocol: &str) {
        let peer = self.peer;
        let (tool, args, expected) = peer.call();
        let run = |extra: &[&str]| {
            ended(
                Command::new(env!("CARGO_BIN_EXE_mcp-call"))
                    .args(["--url", &self.url, "--protocol", protocol])
                    .args(["--timeout-ms", "20000"])
                    .args(extra)
                    .output()
                    .unwrap(),
            )
        };
        let (code, stdout, stderr) = run(&["--list"]);
        assert_eq!(code, Some(0), "{peer:?} {protocol}: {stderr}");
        assert!(peer.tools().contains(&stdout.lines().count()), "{stdout}");
        let (code, stdout, stderr) = run(&["--call", tool, "--allow", tool, "--args", args]);
        assert_eq!(code, Some(0), "{peer:?} {protocol}: {stderr}");
        assert_eq!(stdout, format!("{expected}\n"));
        let (code, _, stderr) = run(&["--call", tool]);
        assert_eq!(code, Some(3), "{peer:?}: {stderr}");
    }
}

impl Drop for HttpPeer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        if let Some(log) = &self.log {
            let _ = std::fs::remove_file(log);
        }
    }
}

#[test]
#[ignore = "needs the real servers: MCP_INTEROP_PEERS=$(.ci/install-peers)"]
fn over_http_python_sdk_2_speaks_both_eras_with_events_and_with_json() {
    use ProtocolVersion::*;
    for served in [Served::Events, Served::Json] {
        let server = HttpPeer::start(Peer::Python2, served);
        server.session(ProtocolChoice::Auto, Some(V2026_07_28));
        server.session(ProtocolChoice::Stateless, Some(V2026_07_28));
        server.session(ProtocolChoice::Stateful, Some(V2025_11_25));
        server.session(ProtocolChoice::Pinned(V2025_06_18), Some(V2025_06_18));
        server.async_session(ProtocolChoice::Auto, V2026_07_28);
        server.async_session(ProtocolChoice::Stateful, V2025_11_25);
        for protocol in ["auto", "modern", "legacy"] {
            server.command_line(protocol);
        }
    }
}

#[test]
#[ignore = "needs the real servers: MCP_INTEROP_PEERS=$(.ci/install-peers)"]
fn over_http_python_sdk_1_and_server_everything_speak_the_handshake_with_sessions() {
    use ProtocolVersion::*;
    for peer in [Peer::Python1, Peer::Everything] {
        let server = HttpPeer::start(peer, Served::Events);
        server.session(ProtocolChoice::Auto, Some(V2025_11_25));
        server.session(ProtocolChoice::Stateful, Some(V2025_11_25));
        server.session(ProtocolChoice::Pinned(V2025_06_18), Some(V2025_06_18));
        server.session(ProtocolChoice::Stateless, None);
        server.async_session(ProtocolChoice::Auto, V2025_11_25);
        for protocol in ["auto", "legacy"] {
            server.command_line(protocol);
        }
    }
}

/// The 2024-11-05 transport (HTTP with server-sent events), which servers built before
/// Streamable HTTP speak: each peer serves it at `/sse` (the Python SDKs' `transport="sse"`,
/// server-everything's `sse` mode). The `initialize` POST there is refused (405 from the
/// Python SDKs, 404 from Express), and the client asks for the event stream, POSTs to the
/// message endpoint it names, and reads every answer from it: through both drivers, through
/// `mcp-call --url`, and through a host's palette.
#[test]
#[ignore = "needs the real servers: MCP_INTEROP_PEERS=$(.ci/install-peers)"]
fn over_the_2024_11_05_transport_every_peer_is_reached_through_its_event_stream() {
    use mcp_sansio_stdio::HostServer;
    use ProtocolVersion::*;
    let served = [Peer::Python2, Peer::Python1, Peer::Everything]
        .map(|peer| HttpPeer::start(peer, Served::OldSse));
    for server in &served {
        server.session(ProtocolChoice::Auto, Some(V2025_11_25));
        server.session(ProtocolChoice::Pinned(V2025_06_18), Some(V2025_06_18));
        server.async_session(ProtocolChoice::Auto, V2025_11_25);
        server.command_line("auto");
    }
    let servers = ["py2", "py1", "everything"]
        .into_iter()
        .zip(&served)
        .map(|(id, s)| HostServer::http(id, &s.url, &[], config(s.peer, ProtocolChoice::Auto)))
        .collect();
    let host = host_routes_each_call(servers);
    for (id, status) in host.close(Duration::from_secs(1)) {
        assert_eq!(
            status.unwrap(),
            None,
            "{id}: nothing started, nothing to reap"
        );
    }
}

/// The event stream of the 2024-11-05 transport lasts the session, not one operation: a
/// session idle for longer than an operation's deadline still answers on it.
#[test]
#[ignore = "needs the real servers: MCP_INTEROP_PEERS=$(.ci/install-peers)"]
fn the_2024_11_05_event_stream_outlasts_an_operation_s_deadline() {
    let server = HttpPeer::start(Peer::Python1, Served::OldSse);
    let mut config = config(Peer::Python1, ProtocolChoice::Stateful);
    config.limits.operation_timeout = Duration::from_secs(2);
    let mut client = HttpClient::new(&server.url, config).unwrap();
    client.connect().unwrap();
    client.list_tools().unwrap();
    // Longer than the deadline every exchange of an operation gets.
    std::thread::sleep(Duration::from_secs(3));
    let (tool, args, expected) = Peer::Python1.call();
    let arguments = RawObject::parse(args, &Limits::default()).unwrap();
    assert_eq!(client.call_tool(tool, &arguments).unwrap().text(), expected);
    client.close();
}

/// The official Python SDK checks every `Mcp-Param-*` header against the call's arguments
/// and refuses a mismatch with -32020 (shown first, with a header of our own making): each
/// argument below reaches its tool through both drivers, so each header the client wrote,
/// plain or in base64, is what the SDK reads back. The values are those a header cannot
/// hold as they are (outer spaces, controls, non-ASCII, a value that looks encoded), an
/// empty one, integers past 32 bits and negative, both booleans, and optional arguments
/// left out (no header).
#[test]
#[ignore = "needs the real servers: MCP_INTEROP_PEERS=$(.ci/install-peers)"]
fn over_http_python_sdk_2_reads_back_every_mcp_param_header() {
    use std::io::{Read, Write};
    let server = HttpPeer::start(Peer::Routed, Served::Events);
    let address = server.url.trim_start_matches("http://");
    let address = &address[..address.find('/').unwrap()];
    let body = r#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"regional_count","arguments":{"text":"a","region":"Basel"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}"#;
    let mut raw = std::net::TcpStream::connect(address).unwrap();
    write!(
        raw,
        "POST /mcp HTTP/1.1\r\nHost: {address}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2026-07-28\r\n\
         Mcp-Method: tools/call\r\nMcp-Name: regional_count\r\nMcp-Param-Region: Bern\r\n\
         Connection: close\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut reply = String::new();
    raw.read_to_string(&mut reply).unwrap();
    assert!(
        reply.starts_with("HTTP/1.1 400") && reply.contains("-32020"),
        "the SDK checks the headers: {reply}"
    );

    server.session(ProtocolChoice::Auto, Some(ProtocolVersion::V2026_07_28));
    let cases = [
        (
            r#""region":" padded ""#,
            "region=' padded ' shard=0 dry_run=False",
        ),
        (
            r#""region":"tab\there""#,
            "region='tab\\there' shard=0 dry_run=False",
        ),
        (
            r#""region":"Zürich 日本""#,
            "region='Zürich 日本' shard=0 dry_run=False",
        ),
        (
            r#""region":"=?base64?Zm9v?=""#,
            "region='=?base64?Zm9v?=' shard=0 dry_run=False",
        ),
        (
            r#""region":"a,b;c=\"d\"""#,
            "region='a,b;c=\"d\"' shard=0 dry_run=False",
        ),
        (r#""region":"""#, "region='' shard=0 dry_run=False"),
        (
            r#""region":"x","shard":-3"#,
            "region='x' shard=-3 dry_run=False",
        ),
        (
            r#""region":"x","shard":12345678901234"#,
            "region='x' shard=12345678901234 dry_run=False",
        ),
        (
            r#""region":"x","dry_run":false"#,
            "region='x' shard=0 dry_run=False",
        ),
    ];
    let mut client =
        HttpClient::new(&server.url, config(Peer::Routed, ProtocolChoice::Auto)).unwrap();
    client.connect().unwrap();
    client.list_tools().unwrap();
    let (runtime, handle, _events) =
        server.async_connect(config(server.peer, ProtocolChoice::Auto));
    runtime.block_on(handle.list_tools()).unwrap();
    for (arguments, said) in cases {
        let arguments = RawObject::parse(
            &format!(r#"{{"text":"a",{arguments}}}"#),
            &Limits::default(),
        )
        .unwrap();
        let want = format!("1 words; {said}");
        let result = client.call_tool("regional_count", &arguments).unwrap();
        assert_eq!(result.text(), want, "blocking");
        let result = runtime
            .block_on(handle.call_tool("regional_count", &arguments))
            .unwrap();
        assert_eq!(result.text(), want, "async");
    }
    runtime.block_on(handle.close()).unwrap();
    client.close();
}

/// What server-memory's `read_graph` answers over a memory file that does not exist yet.
const EMPTY_GRAPH: &str = "{\n  \"entities\": [],\n  \"relations\": []\n}";

/// A server built before 2025-06-18 is refused by default, before anything is listed, and
/// spoken once the application accepts its revision: server-memory 2025.8.4 is on the
/// TypeScript SDK 1.0.1, as the archived reference servers (GitHub, Slack, Google Maps…)
/// are, and answers `initialize` with 2024-11-05 whatever it is offered. Through the library
/// and through `mcp-call --oldest-version`; its memory file stays unwritten, as nothing but
/// `read_graph` was allowed.
#[test]
#[ignore = "needs the real servers: MCP_INTEROP_PEERS=$(.ci/install-peers)"]
fn a_server_of_2024_11_05_is_refused_by_default_and_spoken_when_accepted() {
    let peer = Peer::Memory;
    let memory =
        std::env::temp_dir().join(format!("mcp-interop-memory-{}.json", std::process::id()));
    let command = peer.command().env("MEMORY_FILE_PATH", &memory);
    let mut server = StdioClient::spawn(&command, config(peer, ProtocolChoice::Auto)).unwrap();
    let pgid = server.pid();
    let refused = server.connect();
    assert!(
        matches!(
            &refused,
            Err(StdioError::Mcp(Error::Incompatible(Incompatible::UnsupportedVersion { offered })))
                if offered == "2024-11-05"
        ),
        "{refused:?}"
    );
    server.close(Duration::from_secs(2)).unwrap();
    assert_group_gone(peer, pgid);

    let mut config = config(peer, ProtocolChoice::Auto);
    config.oldest_version = ProtocolVersion::V2024_11_05;
    session_of(peer, &command, config, ProtocolVersion::V2024_11_05);
    assert!(!memory.exists());

    let env = format!("MEMORY_FILE_PATH={}", memory.display());
    let (code, _, stderr) = mcp_call(peer, &["--list", "--env", &env]);
    assert_eq!(code, Some(4), "{stderr}");
    assert!(
        stderr.contains("(--oldest-version 2024-11-05 accepts it)"),
        "{stderr}"
    );
    let (tool, _, expected) = peer.call();
    let args = [
        "--call",
        tool,
        "--allow",
        tool,
        "--oldest-version",
        "2024-11-05",
        "--env",
        &env,
    ];
    let (code, stdout, stderr) = mcp_call(peer, &args);
    assert_eq!((code, stderr.as_str()), (Some(0), ""));
    assert_eq!(stdout, format!("{expected}\n"));
}

/// The tool of server-everything that says which roots it holds: registered only for a
/// client that declares roots.
const ROOTS_TOOL: &str = "get-roots-list";

/// A config for server-everything allowing only [`ROOTS_TOOL`], giving `roots`.
fn roots_config(roots: Option<Vec<Root>>) -> Config {
    let mut config = config(Peer::Everything, ProtocolChoice::Auto);
    config.allowlist = [ROOTS_TOOL].into_iter().collect();
    config.roots = roots;
    config
}

/// The root URIs the test gives, before and after the application narrows them.
const PROJECT: &str = "file:///srv/project";
const DOCS: &str = "file:///srv/project/docs";

/// Calls [`ROOTS_TOOL`] until its answer names `uri`: see [`called_once_offered`].
fn roots_held<E: std::fmt::Debug>(
    list: impl FnMut() -> Result<mcp_sansio::Catalog, E>,
    call: impl FnMut() -> Result<mcp_sansio::CallToolResult, E>,
    uri: &str,
) -> String {
    called_once_offered(ROOTS_TOOL, list, call, uri)
}

/// Calls `tool` through `call` (listing again through `list` while server-everything has
/// not registered it yet, as it does once told the session is initialized, at most 50
/// times) until its answer holds `wanted`: see [`answer_holding`].
fn called_once_offered<E: std::fmt::Debug>(
    tool: &str,
    mut list: impl FnMut() -> Result<mcp_sansio::Catalog, E>,
    mut call: impl FnMut() -> Result<mcp_sansio::CallToolResult, E>,
    wanted: &str,
) -> String {
    let offered = (0..50).any(|_| list().unwrap().tools().iter().any(|t| t.name == tool));
    assert!(offered, "{tool} is never offered");
    answer_holding(wanted, || call().unwrap().text().into_owned())
}

/// Asks `ask` until its answer holds `wanted`, at most 50 times; returns the last answer.
/// Real servers fetch roots in the background after the session opens and after each
/// change they hear of, and answer calls meanwhile, so an answer may still be the one
/// before.
fn answer_holding(wanted: &str, mut ask: impl FnMut() -> String) -> String {
    let mut text = String::new();
    for _ in 0..50 {
        text = ask();
        if text.contains(wanted) {
            break;
        }
    }
    text
}

/// Roots reach a real server through every driver: server-everything registers
/// `get-roots-list` only for a client that declares roots, asks for them with `roots/list`
/// when the session opens and again when told they changed, and answers the tool with what
/// it holds. The application's first root is what it reports, then, after `set_roots`, only
/// the narrower one; a client that declares none is offered no such tool.
#[test]
#[ignore = "needs the real servers: MCP_INTEROP_PEERS=$(.ci/install-peers)"]
fn server_everything_holds_the_application_s_roots_and_hears_when_they_change() {
    let project = || Root::new(PROJECT).unwrap().with_name("project");
    let docs = || vec![Root::new(DOCS).unwrap().with_name("docs")];
    let empty = RawObject::empty();

    // Over stdio, through the blocking driver.
    let mut server = StdioClient::spawn(
        &Peer::Everything.command(),
        roots_config(Some(vec![project()])),
    )
    .unwrap();
    server.connect().unwrap();
    let session = |server: &mut StdioClient, uri| {
        let server = std::cell::RefCell::new(server);
        roots_held(
            || server.borrow_mut().list_tools(),
            || server.borrow_mut().call_tool(ROOTS_TOOL, &empty),
            uri,
        )
    };
    let text = session(&mut server, PROJECT);
    assert!(
        text.contains("(1 total)") && text.contains(PROJECT),
        "{text}"
    );
    server.set_roots(docs()).unwrap();
    let text = session(&mut server, DOCS);
    assert!(text.contains("(1 total)") && text.contains(DOCS), "{text}");
    server.close(Duration::from_secs(2)).unwrap();

    // Without roots, the tool is never offered.
    let mut server = StdioClient::spawn(&Peer::Everything.command(), roots_config(None)).unwrap();
    server.connect().unwrap();
    for _ in 0..3 {
        let catalog = server.list_tools().unwrap();
        assert!(!catalog.tools().iter().any(|t| t.name == ROOTS_TOOL));
    }
    server.close(Duration::from_secs(2)).unwrap();

    // Over Streamable HTTP, where the server's requests come on event streams and the
    // answers are POSTed, through the blocking driver and the async one.
    let served = HttpPeer::start(Peer::Everything, Served::Events);
    let mut server = HttpClient::new(&served.url, roots_config(Some(vec![project()]))).unwrap();
    server.connect().unwrap();
    let server = std::cell::RefCell::new(server);
    let held = |uri| {
        roots_held(
            || server.borrow_mut().list_tools(),
            || server.borrow_mut().call_tool(ROOTS_TOOL, &empty),
            uri,
        )
    };
    assert!(held(PROJECT).contains(PROJECT));
    server.borrow_mut().set_roots(docs()).unwrap();
    let text = held(DOCS);
    assert!(text.contains(DOCS) && !text.contains("2 total"), "{text}");
    server.into_inner().close();

    let (runtime, server, _events) = served.async_connect(roots_config(Some(vec![project()])));
    let held = |uri| {
        roots_held(
            || runtime.block_on(server.list_tools()),
            || runtime.block_on(server.call_tool(ROOTS_TOOL, &empty)),
            uri,
        )
    };
    assert!(held(PROJECT).contains(PROJECT));
    runtime.block_on(server.set_roots(docs())).unwrap();
    assert!(held(DOCS).contains(DOCS));
    runtime.block_on(server.close()).unwrap();
}

/// A folder under the temporary folder, removed with all it holds when dropped.
struct Scratch(PathBuf);

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Two folders for server-filesystem, each holding one file, made anew under the temporary
/// folder (by its real path, which is the one the server reports); and their `file://` URIs.
/// Both are removed when the returned [`Scratch`] is dropped.
fn two_folders(name: &str) -> (Scratch, [(PathBuf, Root); 2]) {
    let base = std::env::temp_dir()
        .canonicalize()
        .unwrap()
        .join(format!("mcp-sansio-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&base);
    let folders = ["inside", "outside"].map(|folder| {
        let dir = base.join(folder);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("note.txt"), format!("the {folder} note\n")).unwrap();
        let root = Root::new(format!("file://{}", dir.display()))
            .unwrap()
            .with_name(folder);
        (dir, root)
    });
    (Scratch(base), folders)
}

/// A config for server-filesystem allowing `list_allowed_directories` and `tool`, giving
/// `root`.
fn files_config(tool: &str, root: Root) -> Config {
    let mut config = config(Peer::Filesystem, ProtocolChoice::Auto);
    config.allowlist = ["list_allowed_directories", tool].into_iter().collect();
    config.roots = Some(vec![root]);
    config
}

/// `value` as a call's arguments.
fn arguments(value: &serde_json::Value) -> RawObject {
    RawObject::parse(&value.to_string(), &Limits::default()).unwrap()
}

/// The roots an application gives are what a real server's reach is: server-filesystem,
/// started with no directory, asks the client for its roots once the session opens (and
/// again when told they changed) and reads no file outside them. What reached it is read
/// off the disk: a tool it advertises but the application did not allow (`write_file`)
/// leaves no file behind.
#[test]
#[ignore = "needs the real servers: MCP_INTEROP_PEERS=$(.ci/install-peers)"]
fn server_filesystem_reaches_only_the_application_s_roots() {
    let peer = Peer::Filesystem;
    let (_scratch, [(inside, inside_root), (outside, outside_root)]) = two_folders("roots");
    let config = files_config("read_text_file", inside_root);
    let mut server = StdioClient::spawn(&peer.command(), config).unwrap();
    let pgid = server.pid();
    server.connect().unwrap();
    assert!(peer
        .tools()
        .contains(&server.list_tools().unwrap().tools().len()));
    let (tool, args, heading) = peer.call();
    let allowed = |server: &mut StdioClient, dir: &Path| {
        let wanted = dir.display().to_string();
        let text = answer_holding(&wanted, || {
            let args = RawObject::parse(args, &Limits::default()).unwrap();
            server.call_tool(tool, &args).unwrap().text().into_owned()
        });
        assert_eq!(text, format!("{heading}\n{wanted}"));
    };
    let read = |server: &mut StdioClient, dir: &Path| {
        let args = arguments(&serde_json::json!({ "path": dir.join("note.txt") }));
        server.call_tool("read_text_file", &args).unwrap()
    };
    allowed(&mut server, &inside);
    let note = read(&mut server, &inside);
    assert_eq!(
        (note.is_error, note.text().as_ref()),
        (false, "the inside note\n")
    );
    let denied = read(&mut server, &outside);
    assert!(denied.is_error, "{denied:?}");
    assert!(denied.text().starts_with("Access denied"), "{denied:?}");

    // Advertised, not allowed: refused here, and nothing is written.
    let write = arguments(&serde_json::json!({ "path": inside.join("new.txt"), "content": "x" }));
    let refused = server.call_tool("write_file", &write);
    assert!(
        matches!(refused, Err(StdioError::Mcp(Error::Misuse(_)))),
        "{refused:?}"
    );
    assert!(!inside.join("new.txt").exists());

    // The application moves the root: the server hears of it and follows.
    server.set_roots(vec![outside_root]).unwrap();
    allowed(&mut server, &outside);
    let note = read(&mut server, &outside);
    assert_eq!(
        (note.is_error, note.text().as_ref()),
        (false, "the outside note\n")
    );
    assert!(read(&mut server, &inside).is_error);
    server.close(Duration::from_secs(2)).unwrap();
    assert_group_gone(peer, pgid);
}

/// A host over server-filesystem, whose edits change the disk, so the disk says what reached
/// it: an edit its published schema refuses (an edit without `newText`) is refused before
/// sending and changes nothing, a valid one inside the roots is made, and one outside them
/// is the server's error, the file untouched.
#[test]
#[ignore = "needs the real servers: MCP_INTEROP_PEERS=$(.ci/install-peers)"]
fn a_host_over_server_filesystem_edits_only_what_the_schema_and_the_roots_allow() {
    let peer = Peer::Filesystem;
    let (_scratch, [(inside, inside_root), (outside, _)]) = two_folders("edits");
    let config = files_config("edit_file", inside_root);
    let servers = vec![mcp_sansio_stdio::HostServer::new(
        "files",
        peer.command(),
        config,
    )];
    let (mut host, failures) =
        mcp_sansio_stdio::Host::start(servers, mcp_sansio_host::PaletteConfig::default());
    assert!(failures.is_empty(), "{failures:?}");
    let offered: Vec<&str> = host.palette().tools().map(|t| t.name).collect();
    assert_eq!(offered, ["edit_file", "list_allowed_directories"]);
    let (tool, args, _) = peer.call();
    let wanted = inside.display().to_string();
    let held = answer_holding(&wanted, || host.call(tool, args).text().to_owned());
    assert!(held.ends_with(&wanted), "{held}");

    let edit = |dir: &Path, edit: serde_json::Value| {
        let path = dir.join("note.txt");
        serde_json::json!({ "path": path, "edits": [edit] }).to_string()
    };
    let unfinished = edit(&inside, serde_json::json!({ "oldText": "the inside note" }));
    let refused = host.call("edit_file", &unfinished);
    assert!(refused.text().starts_with("not called: "), "{refused}");
    assert!(refused.text().contains("newText"), "{refused}");
    let note = |dir: &Path| std::fs::read_to_string(dir.join("note.txt")).unwrap();
    assert_eq!(note(&inside), "the inside note\n");

    let change = serde_json::json!({ "oldText": "the inside note", "newText": "edited" });
    let made = host.call("edit_file", &edit(&inside, change));
    assert!(!made.is_error(), "{made}");
    assert_eq!(note(&inside), "edited\n");
    let change = serde_json::json!({ "oldText": "the outside note", "newText": "edited" });
    let denied = host.call("edit_file", &edit(&outside, change));
    assert!(
        denied.is_error() && denied.text().contains("Access denied"),
        "{denied}"
    );
    assert_eq!(note(&outside), "the outside note\n");

    let pgid = host.pid("files").unwrap();
    for (id, status) in host.close(Duration::from_secs(1)) {
        assert!(status.is_ok(), "{id}: {status:?}");
    }
    assert_group_gone(peer, pgid);
}

const ELICIT_TOOL: &str = "trigger-elicitation-request";
const SAMPLE_TOOL: &str = "trigger-sampling-request";
const URL_TOOL: &str = "trigger-url-elicitation";
/// The completion the application's "model" gives, with a number written as `2.50`.
const COMPLETION: &str = r#"{"role":"assistant","content":{"type":"text","text":"from the application"},"model":"house-model","_meta":{"cost":2.50}}"#;

fn asks_config(asks: Asks) -> Config {
    let mut config = config(Peer::Everything, ProtocolChoice::Auto);
    config.allowlist = [ELICIT_TOOL, SAMPLE_TOOL, URL_TOOL].into_iter().collect();
    config.asks = asks;
    config
}

/// The application's answers: the first elicitation accepted with a name, the next declined,
/// a URL one accepted (the user went), every sampling request given [`COMPLETION`]; `seen`
/// records what was asked.
fn answers(seen: &Arc<Mutex<Vec<String>>>) -> impl FnMut(&ServerRequest) -> Reply + Send {
    let seen = Arc::clone(seen);
    move |request| {
        let mut seen = seen.lock().unwrap();
        seen.push(format!(
            "{}: {}",
            request.kind(),
            request.message().unwrap_or_default()
        ));
        let raw = |text| RawObject::parse(text, &Limits::default()).unwrap();
        match request.kind() {
            AskKind::Sampling => Reply::Result(raw(COMPLETION)),
            AskKind::Elicitation(ElicitationMode::Url) => Reply::accepted(),
            _ if seen.iter().filter(|s| s.starts_with("elicitation")).count() == 1 => {
                Reply::accept(&raw(r#"{"name":"Ana Lima","check":true}"#))
            }
            _ => Reply::decline(),
        }
    }
}

/// Calls server-everything's elicitation tool twice, its sampling tool once and its URL
/// elicitation tool on both of its paths, through a blocking driver whose responder is
/// [`answers`] recording in `seen`: each result echoes what the application answered, and
/// the error path is a failed call carrying the URL to open (-32042), never a result.
fn responded<E: std::fmt::Debug>(
    list: impl FnMut() -> Result<mcp_sansio::Catalog, E> + Copy,
    call: impl Fn(&str, &RawObject) -> Result<mcp_sansio::CallToolResult, E>,
    seen: &Mutex<Vec<String>>,
) {
    let empty = RawObject::empty();
    let sample_args =
        RawObject::parse(r#"{"prompt":"hello","maxTokens":50}"#, &Limits::default()).unwrap();
    let accepted = r#""name": "Ana Lima""#;
    let text = called_once_offered(ELICIT_TOOL, list, || call(ELICIT_TOOL, &empty), accepted);
    assert!(
        text.contains(accepted) && text.contains(r#""check": true"#),
        "{text}"
    );
    let declined = call(ELICIT_TOOL, &empty).unwrap();
    assert!(
        declined.text().contains(r#""action": "decline""#),
        "{}",
        declined.text()
    );
    let sampled = r#""text": "from the application""#;
    let text = called_once_offered(
        SAMPLE_TOOL,
        list,
        || call(SAMPLE_TOOL, &sample_args),
        sampled,
    );
    assert!(
        text.contains(sampled) && text.contains(r#""model": "house-model""#),
        "{text}"
    );
    let url_args = |error_path: bool| {
        let text = format!(
            r#"{{"url":"https://example.com/sign-in","message":"Sign in, please","errorPath":{error_path}}}"#
        );
        RawObject::parse(&text, &Limits::default()).unwrap()
    };
    let went = "User completed the URL elicitation flow";
    let text = called_once_offered(URL_TOOL, list, || call(URL_TOOL, &url_args(false)), went);
    assert!(text.contains("URL: https://example.com/sign-in"), "{text}");
    let failed = call(URL_TOOL, &url_args(true)).unwrap_err();
    let failed = format!("{failed:?}");
    assert!(
        failed.contains("-32042") && failed.contains("https://modelcontextprotocol.io"),
        "{failed}"
    );
    assert_eq!(
        *seen.lock().unwrap(),
        [
            "elicitation: Please provide inputs for the following fields:",
            "elicitation: Please provide inputs for the following fields:",
            "sampling: ",
            "URL elicitation: Sign in, please",
        ]
    );
}

/// A server's requests of the application reach it through every driver and go back as the
/// application answered them: server-everything registers its elicitation and sampling tools
/// only for a client that declares them, asks in the middle of each call (over Streamable
/// HTTP on an event stream), and echoes the answer it got, raw, in the tool's result.
#[test]
#[ignore = "needs the real servers: MCP_INTEROP_PEERS=$(.ci/install-peers)"]
fn server_everything_asks_the_application_and_hears_exactly_its_answers() {
    let sample_args =
        RawObject::parse(r#"{"prompt":"hello","maxTokens":50}"#, &Limits::default()).unwrap();
    let empty = RawObject::empty();
    let both = Asks::NONE
        .with_elicitation()
        .with_url_elicitation()
        .with_sampling();

    // A blocking driver, given the responder, connected, asked and answered; then returned.
    macro_rules! responded_through {
        ($server:expr) => {{
            let seen = Arc::new(Mutex::new(Vec::new()));
            let mut server = $server;
            server.set_responder(answers(&seen));
            server.connect().unwrap();
            let server = std::cell::RefCell::new(server);
            responded(
                || server.borrow_mut().list_tools(),
                |tool, args| server.borrow_mut().call_tool(tool, args),
                &seen,
            );
            server.into_inner()
        }};
    }

    // Over stdio, through the blocking driver and its responder.
    let server = StdioClient::spawn(&Peer::Everything.command(), asks_config(both)).unwrap();
    responded_through!(server)
        .close(Duration::from_secs(2))
        .unwrap();

    // Without the declaration, neither tool is offered.
    let mut server =
        StdioClient::spawn(&Peer::Everything.command(), asks_config(Asks::NONE)).unwrap();
    server.connect().unwrap();
    for _ in 0..3 {
        let catalog = server.list_tools().unwrap();
        assert!(!catalog
            .tools()
            .iter()
            .any(|t| t.name == ELICIT_TOOL || t.name == SAMPLE_TOOL));
    }
    server.close(Duration::from_secs(2)).unwrap();

    // Over Streamable HTTP, through the blocking driver's responder.
    let served = HttpPeer::start(Peer::Everything, Served::Events);
    responded_through!(HttpClient::new(&served.url, asks_config(both)).unwrap()).close();

    // Through the async driver, whose application takes each request from its events and
    // answers through the handle while the call waits.
    let (runtime, server, mut events) = served.async_connect(asks_config(both));
    let mut asked = |tool: &'static str, args: RawObject, reply: Reply| {
        runtime.block_on(async {
            let answer = async {
                loop {
                    match events.recv().await {
                        Some(Event::ServerRequest(request)) => {
                            server.answer(request.ticket(), reply).await.unwrap();
                            return request.kind();
                        }
                        Some(_) => {}
                        None => panic!("the connection ended"),
                    }
                }
            };
            let (called, kind) = tokio::join!(server.call_tool(tool, &args), answer);
            (called.unwrap().text().into_owned(), kind)
        })
    };
    for _ in 0..50 {
        let catalog = runtime.block_on(server.list_tools()).unwrap();
        if catalog.tools().iter().any(|t| t.name == SAMPLE_TOOL) {
            break;
        }
    }
    let (text, kind) = asked(ELICIT_TOOL, empty.clone(), Reply::cancel());
    assert_eq!(kind, AskKind::Elicitation(ElicitationMode::Form));
    assert!(text.contains(r#""action": "cancel""#), "{text}");
    let completion = RawObject::parse(COMPLETION, &Limits::default()).unwrap();
    let (text, kind) = asked(SAMPLE_TOOL, sample_args.clone(), Reply::Result(completion));
    assert_eq!(kind, AskKind::Sampling);
    assert!(text.contains(r#""text": "from the application""#), "{text}");
    let (text, _) = asked(SAMPLE_TOOL, sample_args, Reply::refuse("not today"));
    assert!(text.contains("not today"), "{text}");
    runtime.block_on(server.close()).unwrap();
}

/// Calls each tool of `expected` through `call`, and checks it answers as expected.
fn each_answers<E: std::fmt::Debug>(
    expected: &[(&str, &str)],
    mut call: impl FnMut(&str) -> Result<mcp_sansio::CallToolResult, E>,
) {
    for (tool, answer) in expected {
        assert_eq!(call(tool).unwrap().text(), *answer, "{tool}");
    }
}

/// Both Python SDKs ask through `ctx.elicit`, `ctx.elicit_url` and `create_message` in the
/// middle of a call (`word_count_server.py --roots`), and read what the application
/// answered; a client that declares neither gets a tool error from the SDK, not a hang.
#[test]
#[ignore = "needs the real servers: MCP_INTEROP_PEERS=$(.ci/install-peers)"]
fn the_python_sdks_ask_the_user_and_the_model_through_the_application() {
    let all = Asks::NONE
        .with_elicitation()
        .with_url_elicitation()
        .with_sampling();
    // In 2026-07-28 nothing is declared, and `mcp` 2.x has no way to ask mid-call.
    let asks_config = |peer: Peer, asks: Asks| {
        let protocol = if asks == Asks::NONE {
            ProtocolChoice::Auto
        } else {
            ProtocolChoice::Pinned(ProtocolVersion::V2025_11_25)
        };
        let mut config = config(peer, protocol);
        config.allowlist = ["ask_name", "ask_url", "sample"].into_iter().collect();
        config.asks = asks;
        config
    };
    let respond = |request: &ServerRequest| {
        let raw = |text| RawObject::parse(text, &Limits::default()).unwrap();
        match request.kind() {
            AskKind::Elicitation(ElicitationMode::Form) => Reply::accept(&raw(r#"{"name":"Ana"}"#)),
            AskKind::Elicitation(_) => Reply::accepted(),
            _ => Reply::Result(raw(COMPLETION)),
        }
    };
    let expected = [
        ("ask_name", "hello Ana"),
        ("ask_url", "url accept"),
        ("sample", "house-model said from the application"),
    ];
    let empty = RawObject::empty();
    for peer in [Peer::Roots2, Peer::Roots1] {
        let mut server = StdioClient::spawn(&peer.command(), asks_config(peer, all)).unwrap();
        server.set_responder(respond);
        server.connect().unwrap();
        server.list_tools().unwrap();
        each_answers(&expected, |tool| server.call_tool(tool, &empty));
        server.close(Duration::from_secs(2)).unwrap();

        let served = HttpPeer::start(peer, Served::Events);
        let mut server = HttpClient::new(&served.url, asks_config(peer, all)).unwrap();
        server.set_responder(respond);
        server.connect().unwrap();
        server.list_tools().unwrap();
        each_answers(&expected, |tool| server.call_tool(tool, &empty));
        server.close();

        // Nothing declared (in 2026-07-28 with `mcp` 2.x, in 2025-11-25 with 1.x): the SDK
        // refuses to ask, and the call fails.
        let mut server =
            StdioClient::spawn(&peer.command(), asks_config(peer, Asks::NONE)).unwrap();
        server.connect().unwrap();
        server.list_tools().unwrap();
        for (tool, _) in expected {
            let result = server.call_tool(tool, &empty);
            assert!(
                result.as_ref().map_or(true, |r| r.is_error),
                "{peer:?} {tool}: {result:?}"
            );
        }
        server.close(Duration::from_secs(2)).unwrap();
    }
}

/// In 2026-07-28 `mcp` 2.3's resolver asks through `input_required` (`resolved_name`, and
/// `resolved_both`, which asks the user and the model in one round): the application answers
/// each question, and the call goes again with them, over stdio and over HTTP with events
/// and with JSON replies, through the blocking drivers' responders and the async driver's
/// handle. Refused, the call fails with the application's error and is not sent again.
#[test]
#[ignore = "needs the real servers: MCP_INTEROP_PEERS=$(.ci/install-peers)"]
fn mcp_2_3_s_resolver_asks_in_2026_and_the_call_goes_again_with_the_application_s_answers() {
    let mut config = config(Peer::Roots2, ProtocolChoice::Stateless);
    config.allowlist = ["resolved_name", "resolved_both"].into_iter().collect();
    config.asks = Asks::NONE.with_elicitation().with_sampling();
    let raw = |text| RawObject::parse(text, &Limits::default()).unwrap();
    let reply = move |kind: AskKind| match kind {
        AskKind::Sampling => Reply::Result(raw(COMPLETION)),
        _ => Reply::accept(&raw(r#"{"name":"Ana"}"#)),
    };
    let respond = move |request: &ServerRequest| reply(request.kind());
    let expected = [
        ("resolved_name", "hello Ana"),
        (
            "resolved_both",
            "Ana and house-model said from the application",
        ),
    ];
    let empty = RawObject::empty();

    let mut server = StdioClient::spawn(&Peer::Roots2.command(), config.clone()).unwrap();
    server.set_responder(respond);
    assert_eq!(
        server.connect().unwrap().version,
        ProtocolVersion::V2026_07_28
    );
    server.list_tools().unwrap();
    each_answers(&expected, |tool| server.call_tool(tool, &empty));
    server.close(Duration::from_secs(2)).unwrap();

    for served in [Served::Events, Served::Json] {
        let served = HttpPeer::start(Peer::Roots2, served);
        let mut server = HttpClient::new(&served.url, config.clone()).unwrap();
        server.set_responder(respond);
        server.connect().unwrap();
        server.list_tools().unwrap();
        each_answers(&expected, |tool| server.call_tool(tool, &empty));
        // Refused by the application: the call ends with its error.
        server.set_responder(|_: &ServerRequest| Reply::refuse("not now"));
        let refused = server.call_tool("resolved_name", &empty);
        assert!(
            matches!(&refused, Err(HttpClientError::Mcp(Error::Refused(e))) if e.message == "not now"),
            "{refused:?}"
        );
        server.close();

        // The async driver: each question from the events, each answer through the handle.
        let (runtime, server, mut events) = served.async_connect(config.clone());
        runtime.block_on(server.list_tools()).unwrap();
        for (tool, answer) in expected {
            let questions = if tool == "resolved_both" { 2 } else { 1 };
            let answering = async {
                for _ in 0..questions {
                    loop {
                        if let Some(Event::ServerRequest(request)) = events.recv().await {
                            let reply = reply(request.kind());
                            server.answer(request.ticket(), reply).await.unwrap();
                            break;
                        }
                    }
                }
            };
            let (called, ()) =
                runtime.block_on(async { tokio::join!(server.call_tool(tool, &empty), answering) });
            assert_eq!(called.unwrap().text(), answer, "{tool}");
        }
        runtime.block_on(server.close()).unwrap();
    }
}

/// `mcp-call` against server-everything with `args`, run again (at most five times more)
/// while it fails: the server registers its capability-gated tools once the session is
/// open, so a run may come before they are.
fn mcp_call_everything_once_offered(args: &[&str]) -> (Option<i32>, String, String) {
    (0..5)
        .map(|_| mcp_call(Peer::Everything, args))
        .find(|(code, _, _)| *code == Some(0))
        .unwrap_or_else(|| mcp_call(Peer::Everything, args))
}

/// `mcp-call --elicit` answers every question the server asks the user as told, and says
/// each on stderr: values accepted, a decline, or values that do not fit the server's form
/// declined, unsent; anything else is a usage error.
#[test]
#[ignore = "needs the real servers: MCP_INTEROP_PEERS=$(.ci/install-peers)"]
fn mcp_call_answers_the_server_s_questions_as_told() {
    let asked =
        "mcp-call: the server asks the user \"Please provide inputs for the following fields:\"";
    for (answer, echoed, said) in [
        (
            r#"{"name":"Ana Lima","check":true}"#,
            r#""name": "Ana Lima""#,
            "accepted",
        ),
        ("decline", r#""action": "decline""#, "declined"),
        (
            r#"{"check":true}"#,
            r#""action": "decline""#,
            "declined, as the values do not fit the form: missing required field 'name'",
        ),
    ] {
        let args = [
            "--call",
            ELICIT_TOOL,
            "--allow",
            ELICIT_TOOL,
            "--elicit",
            answer,
        ];
        let (code, stdout, stderr) = mcp_call_everything_once_offered(&args);
        assert_eq!(code, Some(0), "{stderr}");
        assert!(stdout.contains(echoed), "{stdout}");
        assert_eq!(stderr.trim_end(), format!("{asked}: {said}"));
    }
    let (code, _, stderr) = mcp_call_unstarted(&["--call", ELICIT_TOOL, "--elicit", "[1]"]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.contains("not a JSON object, decline or cancel"),
        "{stderr}"
    );
}

/// `mcp-call --root PATH` gives the server each directory as a `file://` URI, a space and
/// non-ASCII letters percent-encoded, named by its last component.
#[test]
#[ignore = "needs the real servers: MCP_INTEROP_PEERS=$(.ci/install-peers)"]
fn mcp_call_gives_each_root_as_a_file_uri() {
    let dir = std::env::temp_dir().join(format!("mcp-roots-{}", std::process::id()));
    let odd = dir.join("a b").join("é");
    std::fs::create_dir_all(&odd).unwrap();
    let odd_arg = odd.to_str().unwrap();
    let dir_arg = dir.to_str().unwrap();
    let args = [
        "--call", ROOTS_TOOL, "--allow", ROOTS_TOOL, "--root", odd_arg, "--root", dir_arg,
    ];
    let (code, stdout, stderr) = mcp_call_everything_once_offered(&args);
    assert_eq!(code, Some(0), "{stderr}");
    let canonical = std::fs::canonicalize(&dir).unwrap();
    let base = format!("file://{}", canonical.display());
    assert!(stdout.contains("(2 total)"), "{stdout}");
    assert!(
        stdout.contains(&format!("1. é\n   URI: {base}/a%20b/%C3%A9")),
        "{stdout}"
    );
    let name = canonical.file_name().unwrap().to_str().unwrap();
    assert!(
        stdout.contains(&format!("2. {name}\n   URI: {base}\n")),
        "{stdout}"
    );
    // A root that is not a directory here is a usage error, and nothing is started.
    let (code, _, stderr) =
        mcp_call_unstarted(&["--list", "--root", &format!("{dir_arg}/missing")]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("missing"), "{stderr}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The official Python SDKs ask for roots from inside a tool (`ctx.session.list_roots()`),
/// anew on every call, so each answer is the roots as they are now: through every driver,
/// over stdio and over Streamable HTTP, the `roots` tool of both SDKs reports the
/// application's roots, then the new ones after `set_roots`. A client that declares none
/// answers -32601, which `mcp` 1.x reports as the tool's error and 2.x as its own. In
/// 2026-07-28, where a server cannot ask mid-call, `mcp` 2.x's resolver answers
/// `input_required` and the client sends the call again with the roots. In one host over
/// both, each server's roots are its own (`Host::set_roots`).
#[test]
#[ignore = "needs the real servers: MCP_INTEROP_PEERS=$(.ci/install-peers)"]
fn the_python_sdks_ask_for_roots_inside_a_call_and_get_the_application_s() {
    let project = || vec![Root::new(PROJECT).unwrap()];
    let docs = || vec![Root::new(DOCS).unwrap(), Root::new(PROJECT).unwrap()];
    let both = format!("{DOCS} {PROJECT}");
    let empty = RawObject::empty();
    let roots_config = |peer: Peer, roots: Option<Vec<Root>>| {
        // 2026-07-28 has no back-channel for the server's request.
        let mut config = config(peer, ProtocolChoice::Stateful);
        config.allowlist = ["roots"].into_iter().collect();
        config.roots = roots;
        config
    };
    for peer in [Peer::Roots2, Peer::Roots1] {
        let mut server =
            StdioClient::spawn(&peer.command(), roots_config(peer, Some(project()))).unwrap();
        server.connect().unwrap();
        server.list_tools().unwrap();
        assert_eq!(server.call_tool("roots", &empty).unwrap().text(), PROJECT);
        server.set_roots(docs()).unwrap();
        assert_eq!(server.call_tool("roots", &empty).unwrap().text(), both);
        server.close(Duration::from_secs(2)).unwrap();

        let mut server = StdioClient::spawn(&peer.command(), roots_config(peer, None)).unwrap();
        server.connect().unwrap();
        server.list_tools().unwrap();
        // mcp 1.x reports the refusal as the tool's error, 2.x as a JSON-RPC error.
        match server.call_tool("roots", &empty) {
            Ok(result) => assert!(
                result.is_error && result.text().contains("Method not found"),
                "{peer:?}: {result:?}"
            ),
            Err(StdioError::Mcp(Error::Rpc(error))) => {
                assert_eq!(
                    error.code,
                    mcp_sansio::ErrorCode::METHOD_NOT_FOUND,
                    "{peer:?}"
                );
            }
            Err(other) => panic!("{peer:?}: {other:?}"),
        }
        server.close(Duration::from_secs(2)).unwrap();

        let served = HttpPeer::start(peer, Served::Events);
        let mut server = HttpClient::new(&served.url, roots_config(peer, Some(project()))).unwrap();
        server.connect().unwrap();
        server.list_tools().unwrap();
        assert_eq!(server.call_tool("roots", &empty).unwrap().text(), PROJECT);
        server.set_roots(docs()).unwrap();
        assert_eq!(server.call_tool("roots", &empty).unwrap().text(), both);
        server.close();

        let (runtime, server, _events) = served.async_connect(roots_config(peer, Some(project())));
        runtime.block_on(server.list_tools()).unwrap();
        let call = || runtime.block_on(server.call_tool("roots", &empty)).unwrap();
        assert_eq!(call().text(), PROJECT);
        runtime.block_on(server.set_roots(docs())).unwrap();
        assert_eq!(call().text(), both);
        runtime.block_on(server.close()).unwrap();
    }

    // In 2026-07-28 a server cannot ask mid-call: mcp 2.3's resolver answers the call with
    // `input_required`, and the client sends it again with the roots, over stdio and over
    // HTTP (events and JSON replies), through every driver.
    let modern = |roots: Option<Vec<Root>>| {
        let mut config = config(Peer::Roots2, ProtocolChoice::Stateless);
        config.allowlist = ["resolved_roots"].into_iter().collect();
        config.roots = roots;
        config
    };
    // Through a blocking client (stdio or HTTP): 2026-07-28, the roots, then the new ones.
    macro_rules! resolved_twice {
        ($server:expr) => {{
            let server = &mut $server;
            let version = server.connect().unwrap().version;
            assert_eq!(version, ProtocolVersion::V2026_07_28);
            server.list_tools().unwrap();
            let text = server
                .call_tool("resolved_roots", &empty)
                .unwrap()
                .text()
                .into_owned();
            assert_eq!(text, PROJECT);
            server.set_roots(docs()).unwrap();
            let text = server
                .call_tool("resolved_roots", &empty)
                .unwrap()
                .text()
                .into_owned();
            assert_eq!(text, both);
        }};
    }
    let mut server = StdioClient::spawn(&Peer::Roots2.command(), modern(Some(project()))).unwrap();
    resolved_twice!(server);
    server.close(Duration::from_secs(2)).unwrap();
    // Without roots none are declared, and the SDK refuses the call itself (-32021).
    let mut server = StdioClient::spawn(&Peer::Roots2.command(), modern(None)).unwrap();
    server.connect().unwrap();
    server.list_tools().unwrap();
    match server.call_tool("resolved_roots", &empty) {
        Err(StdioError::Mcp(Error::Rpc(error))) => assert_eq!(error.code.0, -32021),
        other => panic!("{other:?}"),
    }
    server.close(Duration::from_secs(2)).unwrap();
    for served in [Served::Events, Served::Json] {
        let served = HttpPeer::start(Peer::Roots2, served);
        let mut server = HttpClient::new(&served.url, modern(Some(project()))).unwrap();
        resolved_twice!(server);
        server.close();
        let (runtime, server, _events) = served.async_connect(modern(Some(project())));
        runtime.block_on(server.list_tools()).unwrap();
        let call = || {
            runtime
                .block_on(server.call_tool("resolved_roots", &empty))
                .unwrap()
        };
        assert_eq!(call().text(), PROJECT);
        runtime.block_on(server.set_roots(docs())).unwrap();
        assert_eq!(call().text(), both);
        runtime.block_on(server.close()).unwrap();
    }

    // One host over both, one started and one at a URL: each server's roots are its own.
    use mcp_sansio_stdio::{Host, HostError, HostServer};
    let served = HttpPeer::start(Peer::Roots1, Served::Events);
    let servers = vec![
        HostServer::new(
            "py2",
            Peer::Roots2.command(),
            roots_config(Peer::Roots2, Some(project())),
        ),
        HostServer::http(
            "py1",
            &served.url,
            &[],
            roots_config(Peer::Roots1, Some(project())),
        ),
    ];
    let (mut host, failures) = Host::start(servers, mcp_sansio_host::PaletteConfig::default());
    assert!(failures.is_empty(), "{failures:?}");
    assert_eq!(host.call("roots", "{}").text(), PROJECT);
    assert_eq!(host.call("py1_roots", "{}").text(), PROJECT);
    host.set_roots("py1", docs()).unwrap();
    assert_eq!(host.call("py1_roots", "{}").text(), both);
    assert_eq!(host.call("roots", "{}").text(), PROJECT);
    assert!(matches!(
        host.set_roots("nobody", docs()),
        Err(HostError::UnknownServer { id }) if id == "nobody"
    ));
    host.close(Duration::from_secs(1));
}

/// Where the OAuth peer on `port` logs what reached its authorization server.
fn oauth_log(port: u16) -> PathBuf {
    std::env::temp_dir().join(format!("mcp-sansio-oauth-{port}.jsonl"))
}

/// The OAuth peer's user, a robot: the browser opens `url`, the authorization server
/// approves at once, and the browser is sent back to where the redirect says.
fn robot_approves(
    authorizer: &mcp_sansio_http::oauth::Authorizer,
    url: &str,
) -> Result<String, String> {
    let fetched = authorizer
        .fetch(&mcp_sansio::auth::Fetch::get(url))
        .map_err(|e| e.to_string())?;
    fetched.location.ok_or_else(|| String::from("no Location"))
}

/// The steps the OAuth peer logged, one JSON object each.
fn oauth_steps(url: &str) -> Vec<serde_json::Value> {
    let port: u16 = url
        .trim_start_matches("http://127.0.0.1:")
        .trim_end_matches("/mcp")
        .parse()
        .unwrap();
    std::fs::read_to_string(oauth_log(port))
        .unwrap_or_default()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect()
}

/// What the OAuth peer at `url` logged, checked: one registration, as a public client
/// redirected to `redirect_uri`; `authorizations` authorizations, each for this server's
/// URL (RFC 8707), with an S256 challenge's 43 characters and a 32-character state; then
/// one token and one refresh for that URL. Gives the authorizations.
fn witnessed_one_public_client(
    url: &str,
    redirect_uri: &str,
    authorizations: usize,
) -> Vec<serde_json::Value> {
    let steps = oauth_steps(url);
    let named = |step: &str| -> Vec<serde_json::Value> {
        steps
            .iter()
            .filter(|s| s["step"] == step)
            .cloned()
            .collect()
    };
    let registered = named("register");
    assert_eq!(registered.len(), 1, "{steps:?}");
    assert_eq!(registered[0]["auth_method"], "none");
    assert_eq!(registered[0]["redirect_uris"][0], redirect_uri);
    let authorized = named("authorize");
    assert_eq!(authorized.len(), authorizations, "{steps:?}");
    for step in &authorized {
        assert_eq!(step["resource"], url, "{step}");
        assert_eq!(step["challenge_length"], 43);
        assert_eq!(step["state"].as_str().unwrap().len(), 32);
    }
    let issued: Vec<_> = steps
        .iter()
        .filter(|s| s["step"] == "token" || s["step"] == "refresh")
        .map(|s| (s["step"].as_str().unwrap(), s["resource"].as_str().unwrap()))
        .collect();
    assert_eq!(issued, [("token", url), ("refresh", url)], "{steps:?}");
    authorized
}

#[test]
#[ignore = "needs the real servers: MCP_INTEROP_PEERS=$(.ci/install-peers)"]
fn the_python_sdk_s_oauth_is_followed_from_its_401_to_a_token_bound_to_the_server() {
    use mcp_sansio::auth::{AuthError, Challenge, TokenRequest};
    use mcp_sansio::HttpError;
    use mcp_sansio_http::oauth::{AuthorizeError, Authorizer, ClientIdentity, Fetch};

    let server = HttpPeer::start(Peer::Guarded, Served::Events);
    let base = server.url.trim_end_matches("/mcp").to_owned();
    let guarded = |protocol| config(Peer::Guarded, protocol);

    // Without a token: the SDK's 401, and its challenge says where to look.
    let mut client = HttpClient::new(&server.url, guarded(ProtocolChoice::Auto)).unwrap();
    let challenge = match client.connect() {
        Err(HttpClientError::Mcp(Error::Http(HttpError::Unauthorized(Some(c))))) => c,
        other => panic!("{other:?}"),
    };
    assert_eq!(
        challenge.resource_metadata.as_deref(),
        Some(format!("{base}/.well-known/oauth-protected-resource/mcp").as_str())
    );
    assert_eq!(challenge.error.as_deref(), Some("invalid_token"));

    // The flow: discovery, registration, the robot's browser, the token.
    let authorizer = Authorizer::new(&Limits::default());
    let redirect_uri = "http://127.0.0.1:1/callback";
    let identity = ClientIdentity {
        client_id: None,
        client_secret: None,
        metadata_document: None,
        client_name: "mcp-sansio interop",
        redirect_uri,
    };
    let mut opened = String::new();
    let authorized = authorizer
        .authorize(&server.url, Some(&challenge), identity, |url| {
            opened = url.to_owned();
            let fetched = authorizer
                .fetch(&Fetch::get(url))
                .map_err(|e| e.to_string())?;
            assert_eq!(
                fetched.status,
                302,
                "{}",
                String::from_utf8_lossy(&fetched.body)
            );
            fetched.location.ok_or_else(|| String::from("no Location"))
        })
        .unwrap();
    assert!(opened.starts_with(&format!("{base}/authorize?response_type=code&client_id=")));
    assert_eq!(authorized.discovered.resource.resource, server.url);
    assert_eq!(authorized.token.scope.as_deref(), Some("words"));
    let printed = format!("{authorized:?}");
    let refresh_token = authorized.token.refresh_token.as_deref().unwrap();
    for secret in [authorized.token.access_token.as_str(), refresh_token] {
        assert!(!printed.contains(secret), "{printed}");
    }

    // With it, every revision connects, lists and calls, through both drivers.
    for protocol in [ProtocolChoice::Auto, ProtocolChoice::Stateful] {
        let mut client = HttpClient::new(&server.url, guarded(protocol)).unwrap();
        client.session().set_authorization(Some(&authorized.token));
        http_called(Peer::Guarded, client).0.close();
    }
    let bearer = authorized.token.header_value();
    let header = ("Authorization", bearer.as_str());
    let (runtime, handle, _events) =
        server.async_connect_with(&[header], guarded(ProtocolChoice::Auto));
    async_checks(
        &runtime,
        handle,
        Peer::Guarded,
        ProtocolChoice::Auto,
        ProtocolVersion::V2026_07_28,
    );

    // Refreshed: a new token, and the old refresh token is spent (the SDK rotates it).
    let refresh = authorized.token.refresh_token.clone().unwrap();
    let resource = authorized.discovered.resource.resource.as_str();
    let request = TokenRequest::refresh(&refresh, None, &authorized.client_id, resource);
    let renewed = authorizer
        .token(&authorized.discovered.server, &request)
        .unwrap();
    assert_ne!(renewed.access_token, authorized.token.access_token);
    let mut client = HttpClient::new(&server.url, guarded(ProtocolChoice::Auto)).unwrap();
    client.session().set_authorization(Some(&renewed));
    client.connect().unwrap();
    client.close();
    // The session's token is sent instead of the application's header, never beside it.
    let mut client = HttpClient::new(&server.url, guarded(ProtocolChoice::Auto))
        .unwrap()
        .header("Authorization", &renewed.header_value())
        .unwrap();
    let bogus = mcp_sansio::auth::Token::bearer("bogus").unwrap();
    client.session().set_authorization(Some(&bogus));
    assert!(
        matches!(
            client.connect(),
            Err(HttpClientError::Mcp(Error::Http(HttpError::Unauthorized(
                Some(_)
            ))))
        ),
        "the bogus token went, alone"
    );
    match authorizer.token(&authorized.discovered.server, &request) {
        Err(AuthorizeError::Auth(AuthError::Refused { error, .. })) => {
            assert_eq!(error, "invalid_grant");
        }
        other => panic!("{other:?}"),
    }
    // The async driver's token replaced mid-session, over the one given as a header: a
    // bogus one, and the server refuses (the header's is not sent beside it); the renewed
    // one, and it answers (each 2026-07-28 request stands alone).
    let (tool, arguments, expected) = Peer::Guarded.call();
    let arguments = RawObject::parse(arguments, &Limits::default()).unwrap();
    let (runtime, async_handle, _events) =
        server.async_connect_with(&[header], guarded(ProtocolChoice::Auto));
    runtime.block_on(async_handle.list_tools()).unwrap();
    runtime
        .block_on(async_handle.set_authorization(Some(bogus)))
        .unwrap();
    let refused = runtime.block_on(async_handle.call_tool(tool, &arguments));
    assert!(
        matches!(
            refused,
            Err(mcp_sansio_tokio::AsyncError::Mcp(Error::Http(
                HttpError::Unauthorized(Some(_))
            )))
        ),
        "{refused:?}"
    );
    runtime
        .block_on(async_handle.set_authorization(Some(renewed.clone())))
        .unwrap();
    let answered = runtime
        .block_on(async_handle.call_tool(tool, &arguments))
        .unwrap();
    assert_eq!(answered.text(), expected);

    // A scope the client may not have: the SDK refuses by the redirect, and no token is
    // asked for.
    let deny = Challenge::parse(r#"Bearer scope="admin""#).unwrap();
    let client_id = authorized.client_id.as_str();
    let known = ClientIdentity {
        client_id: Some(client_id),
        client_secret: None,
        ..identity
    };
    let robot = |url: &str| robot_approves(&authorizer, url);
    match authorizer.authorize(&server.url, Some(&deny), known, robot) {
        Err(AuthorizeError::Auth(AuthError::Refused { error, description })) => {
            assert_eq!(error, "invalid_scope");
            assert!(description.unwrap().contains("admin"));
        }
        other => panic!("{other:?}"),
    }
    // A forged redirect (another state) is not used: no code is sent to the token endpoint.
    let forged = authorizer.authorize(&server.url, Some(&challenge), known, |url| {
        let back = robot(url)?;
        let (head, _) = back.split_once("state=").unwrap();
        Ok(format!("{head}state=forged"))
    });
    assert!(
        matches!(forged, Err(AuthorizeError::Auth(AuthError::StateMismatch))),
        "{forged:?}"
    );

    // The witness. The refused scope never reached the authorization endpoint, and the
    // forged redirect's code was never exchanged.
    let authorizations = witnessed_one_public_client(&server.url, redirect_uri, 2);
    assert_eq!(authorizations[0]["scopes"], serde_json::json!(["words"]));
}

#[test]
#[ignore = "needs the real servers: MCP_INTEROP_PEERS=$(.ci/install-peers)"]
fn the_python_sdk_s_oauth_is_followed_on_tokio_from_its_401_to_calls_with_the_token() {
    use mcp_sansio::auth::{AuthError, TokenRequest};
    use mcp_sansio::HttpError;
    use mcp_sansio_tokio::oauth::{AuthorizeError, Authorizer, ClientIdentity, Fetch};
    use mcp_sansio_tokio::{connect_http, AsyncError};

    let server = HttpPeer::start(Peer::Guarded, Served::Events);
    let guarded = || config(Peer::Guarded, ProtocolChoice::Auto);
    let (tool, arguments, expected) = Peer::Guarded.call();
    let arguments = RawObject::parse(arguments, &Limits::default()).unwrap();
    let redirect_uri = "http://127.0.0.1:1/callback";
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        // The async driver's 401 carries the SDK's challenge, as the blocking one's does.
        let challenge = match connect_http(&server.url, &[], guarded()).await {
            Err(AsyncError::Mcp(Error::Http(HttpError::Unauthorized(Some(c))))) => c,
            Err(other) => panic!("{other}"),
            Ok(_) => panic!("connected without a token"),
        };
        let authorizer = Authorizer::new(&Limits::default()).unwrap();
        let identity = ClientIdentity {
            client_id: None,
            client_secret: None,
            metadata_document: None,
            client_name: "mcp-sansio interop, async",
            redirect_uri,
        };
        // The robot's browser: the SDK approves at once and redirects.
        let robot = async |url: &str| {
            let fetched = authorizer
                .fetch(&Fetch::get(url))
                .await
                .map_err(|e| e.to_string())?;
            fetched.location.ok_or_else(|| String::from("no Location"))
        };
        let authorized = authorizer
            .authorize(&server.url, Some(&challenge), identity, robot)
            .await
            .unwrap();
        assert_eq!(authorized.discovered.resource.resource, server.url);
        assert_eq!(authorized.token.scope.as_deref(), Some("words"));

        // With it, the async driver connects, lists and calls.
        let bearer = authorized.token.header_value();
        let (handle, _events) = connect_http(&server.url, &[("Authorization", &bearer)], guarded())
            .await
            .unwrap();
        handle.list_tools().await.unwrap();
        let answered = handle.call_tool(tool, &arguments).await.unwrap();
        assert_eq!(answered.text(), expected);

        // Refreshed on tokio too; the renewed token replaces the header's mid-session, and
        // the spent refresh token is refused (the SDK rotates it).
        let refresh = authorized.token.refresh_token.clone().unwrap();
        let resource = authorized.discovered.resource.resource.as_str();
        let request = TokenRequest::refresh(&refresh, None, &authorized.client_id, resource);
        let renewed = authorizer
            .token(&authorized.discovered.server, &request)
            .await
            .unwrap();
        assert_ne!(renewed.access_token, authorized.token.access_token);
        handle.set_authorization(Some(renewed)).await.unwrap();
        let answered = handle.call_tool(tool, &arguments).await.unwrap();
        assert_eq!(answered.text(), expected);
        match authorizer
            .token(&authorized.discovered.server, &request)
            .await
        {
            Err(AuthorizeError::Auth(AuthError::Refused { error, .. })) => {
                assert_eq!(error, "invalid_grant");
            }
            other => panic!("{other:?}"),
        }
        handle.close().await.unwrap();
    });

    witnessed_one_public_client(&server.url, redirect_uri, 1);
}

#[test]
#[ignore = "needs the real servers: MCP_INTEROP_PEERS=$(.ci/install-peers)"]
fn the_python_sdk_takes_a_confidential_client_s_secret_the_way_it_registered_it() {
    use mcp_sansio::auth::{AuthError, TokenAuth, TokenRequest};
    use mcp_sansio_http::oauth::{AuthorizeError, Authorizer, ClientIdentity};

    for method in ["client_secret_basic", "client_secret_post"] {
        // The server registers every client as confidential, authenticating by `method`,
        // though the client asks to be a public one.
        let env = [("OAUTH_CLIENT_AUTH", method)];
        let server = HttpPeer::start_with(Peer::Guarded, Served::Events, &env);
        let authorizer = Authorizer::new(&Limits::default());
        let identity = ClientIdentity {
            client_id: None,
            client_secret: None,
            metadata_document: None,
            client_name: "mcp-sansio interop",
            redirect_uri: "http://127.0.0.1:1/callback",
        };
        let authorized = authorizer
            .authorize(&server.url, None, identity, |url| {
                robot_approves(&authorizer, url)
            })
            .unwrap_or_else(|e| panic!("{method}: {e}"));
        assert_eq!(authorized.token_auth.as_str(), method);
        let secret = authorized.client_secret.as_deref().unwrap();
        let mut client =
            HttpClient::new(&server.url, config(Peer::Guarded, ProtocolChoice::Auto)).unwrap();
        client.session().set_authorization(Some(&authorized.token));
        client.connect().unwrap();
        client.list_tools().unwrap();
        client.close();

        // A refresh takes the secret the same way; without it, the SDK refuses the client
        // and the refresh token is not spent.
        let refresh = authorized.token.refresh_token.clone().unwrap();
        let resource = authorized.discovered.resource.resource.as_str();
        let request = TokenRequest::refresh(&refresh, None, &authorized.client_id, resource);
        let server_metadata = &authorized.discovered.server;
        let unsent = request.clone().client_secret(Some(secret), TokenAuth::None);
        match authorizer.token(server_metadata, &unsent) {
            Err(AuthorizeError::Auth(AuthError::Refused { error, .. })) => {
                assert_eq!(error, "invalid_client", "{method}");
            }
            other => panic!("{method}: {other:?}"),
        }
        let sent = request.client_secret(Some(secret), authorized.token_auth);
        let renewed = authorizer.token(server_metadata, &sent).unwrap();
        assert_ne!(renewed.access_token, authorized.token.access_token);

        // The same client as the application's own, known before: its secret sent the way
        // the server registered it is taken, the other way refused at the token endpoint.
        let other = match authorized.token_auth {
            TokenAuth::SecretBasic => TokenAuth::SecretPost,
            _ => TokenAuth::SecretBasic,
        };
        for (token_auth, taken) in [(authorized.token_auth, true), (other, false)] {
            let known = ClientIdentity {
                client_id: Some(&authorized.client_id),
                client_secret: Some((secret, token_auth)),
                ..identity
            };
            let again = authorizer.authorize(&server.url, None, known, |url| {
                robot_approves(&authorizer, url)
            });
            match again {
                Ok(again) => assert!(taken, "{method} as {token_auth:?}: {again:?}"),
                Err(AuthorizeError::Auth(AuthError::Refused { error, .. })) if !taken => {
                    assert_eq!(error, "invalid_client", "{method} as {token_auth:?}");
                }
                Err(e) => panic!("{method} as {token_auth:?}: {e}"),
            }
        }

        let steps = oauth_steps(&server.url);
        let registered: Vec<_> = steps.iter().filter(|s| s["step"] == "register").collect();
        assert_eq!(registered.len(), 1, "{steps:?}");
        assert_eq!(registered[0]["auth_method"], method);
        let issued: Vec<_> = steps
            .iter()
            .filter_map(|s| s["step"].as_str())
            .filter(|step| ["token", "refresh"].contains(step))
            .collect();
        assert_eq!(issued, ["token", "refresh", "token"], "{method}");
    }
}

#[test]
#[ignore = "needs the real servers: MCP_INTEROP_PEERS=$(.ci/install-peers)"]
fn mcp_call_authorizes_through_the_browser_it_asks_to_open() {
    use std::io::{BufRead, BufReader, Read};
    use std::process::Stdio;

    use mcp_sansio_http::oauth::{Authorizer, Fetch};

    let server = HttpPeer::start(Peer::Guarded, Served::Events);
    let mcp_call = || {
        let mut command = Command::new(env!("CARGO_BIN_EXE_mcp-call"));
        command.args(["--url", &server.url, "--timeout-ms", "20000"]);
        command
    };

    // Without --oauth: the 401 and its challenge, said in one line.
    let (code, _, stderr) = ended(mcp_call().arg("--list").output().unwrap());
    assert_eq!(code, Some(4), "{stderr}");
    assert!(
        stderr.contains("it answered 401") && stderr.contains(r#"error "invalid_token""#),
        "{stderr}"
    );

    // With it: the URL on stderr, the robot's browser there and back, then the listing.
    let mut child = mcp_call()
        .args(["--oauth", "--list"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stderr = BufReader::new(child.stderr.take().unwrap());
    let mut line = String::new();
    let said = "open this URL in a browser: ";
    while !line.contains(said) {
        line.clear();
        assert_ne!(
            stderr.read_line(&mut line).unwrap(),
            0,
            "mcp-call said nothing"
        );
    }
    let open = line.trim_end().split(said).nth(1).unwrap();
    assert!(
        open.starts_with(&server.url.replace("/mcp", "/authorize?")),
        "{open}"
    );
    let mut patient = Limits::default();
    patient.operation_timeout = DEADLINE;
    let browser = Authorizer::new(&patient);
    let approved = browser.fetch(&Fetch::get(open)).unwrap();
    assert_eq!(approved.status, 302);
    let back = approved.location.unwrap();
    assert!(back.starts_with("http://127.0.0.1:"), "{back}");
    // Something else reaches the listener first and sends its request line a byte a second:
    // it is let go at the line's own deadline (5 s), and the browser is answered after it.
    let listener = back["http://".len()..]
        .split('/')
        .next()
        .unwrap()
        .to_owned();
    let trickle = std::net::TcpStream::connect(&listener).unwrap();
    std::thread::spawn(move || {
        use std::io::Write;
        let mut trickle = trickle;
        while trickle.write_all(b"G").is_ok() {
            std::thread::sleep(Duration::from_secs(1));
        }
    });
    std::thread::sleep(Duration::from_millis(200));
    let shown = browser.fetch(&Fetch::get(&back)).unwrap();
    assert_eq!(
        shown.status,
        200,
        "{}",
        String::from_utf8_lossy(&shown.body)
    );
    let mut rest = String::new();
    stderr.read_to_string(&mut rest).unwrap();
    let output = child.wait_with_output().unwrap();
    assert_eq!(output.status.code(), Some(0), "{rest}");
    assert_eq!(rest, "mcp-call: authorized; going on with the token\n");
    assert_eq!(
        String::from_utf8(output.stdout).unwrap(),
        "word_count\tCount the words in a short text.\n"
    );

    // A browser that never comes back: the wait ends, as a deadline.
    let (code, _, stderr) = ended(
        mcp_call()
            .args(["--oauth", "--oauth-wait-s", "1", "--list"])
            .output()
            .unwrap(),
    );
    assert_eq!(code, Some(5), "{stderr}");
    assert!(
        stderr.ends_with("the browser did not come back within 1s\n"),
        "{stderr}"
    );
}

/// What the subscription test needs of a blocking driver, over stdio or HTTP.
trait Listens {
    fn connect(&mut self) -> ProtocolVersion;
    fn list(&mut self) -> Vec<String>;
    fn call(&mut self, name: &str, arguments: &str) -> String;
    fn listen(&mut self, subscription: &Subscription) -> Listening;
    fn cancel(&mut self, op: Op<SubscriptionEnded>);
    fn wait_events(&mut self, timeout: Duration) -> Vec<Event>;
}

/// The trait for a driver; `$events` turns what its `wait_events` gives into the events.
macro_rules! listens {
    ($driver:ty, $events:expr) => {
        impl Listens for $driver {
            fn connect(&mut self) -> ProtocolVersion {
                <$driver>::connect(self).unwrap().version
            }
            fn list(&mut self) -> Vec<String> {
                let catalog = self.list_tools().unwrap();
                catalog.tools().iter().map(|t| t.name.clone()).collect()
            }
            fn call(&mut self, name: &str, arguments: &str) -> String {
                let arguments = RawObject::parse(arguments, &Limits::default()).unwrap();
                self.call_tool(name, &arguments)
                    .unwrap()
                    .text()
                    .into_owned()
            }
            fn listen(&mut self, subscription: &Subscription) -> Listening {
                <$driver>::listen(self, subscription).unwrap()
            }
            fn cancel(&mut self, op: Op<SubscriptionEnded>) {
                self.client().cancel(op).unwrap();
            }
            fn wait_events(&mut self, timeout: Duration) -> Vec<Event> {
                $events(<$driver>::wait_events(self, timeout))
            }
        }
    };
}

listens!(StdioClient, |events: Result<Vec<Event>, StdioError>| events
    .unwrap());
listens!(HttpClient, |events: Vec<Event>| events);

/// Waits until an event `wanted` picks arrives, keeping every event seen on the way.
fn wait_for(server: &mut impl Listens, seen: &mut Vec<Event>, wanted: impl Fn(&Event) -> bool) {
    let started = std::time::Instant::now();
    while !seen.iter().any(&wanted) {
        assert!(started.elapsed() < DEADLINE, "never came; saw {seen:?}");
        seen.extend(server.wait_events(DEADLINE));
    }
}

/// A 2026-07-28 session of the Python SDK's: what a subscription asks for and the SDK
/// acknowledges is heard when the server changes, what it does not ask for is not, and once
/// cancelled it hears nothing.
fn changes_are_heard(server: &mut impl Listens) {
    assert_eq!(server.connect(), ProtocolVersion::V2026_07_28);
    assert_eq!(server.list(), ["grow", "touch", "word_count"]);
    let asked = Subscription {
        tools_list_changed: true,
        resources: vec!["note://a".into()],
        ..Subscription::default()
    };
    let listening = server.listen(&asked);
    assert_eq!(listening.honoured, asked, "the SDK honours all it is asked");

    let mut seen = Vec::new();
    assert_eq!(server.call("grow", "{}"), "added grown_1");
    let tools_changed = |e: &Event| {
        matches!(
            e,
            Event::Notification(ServerNotification::ListChanged(ListKind::Tools))
        )
    };
    wait_for(server, &mut seen, tools_changed);
    assert_eq!(server.list(), ["grow", "grown_1", "touch", "word_count"]);

    assert_eq!(
        server.call("touch", r#"{"uri":"note://b"}"#),
        "touched note://b"
    );
    assert_eq!(
        server.call("touch", r#"{"uri":"note://a"}"#),
        "touched note://a"
    );
    wait_for(
        server,
        &mut seen,
        |e| matches!(e, Event::Notification(ServerNotification::ResourceUpdated { uri }) if uri == "note://a"),
    );
    let updates: Vec<&Event> = seen
        .iter()
        .filter(|e| {
            matches!(
                e,
                Event::Notification(ServerNotification::ResourceUpdated { .. })
            )
        })
        .collect();
    assert_eq!(updates.len(), 1, "only note://a was asked for: {seen:?}");

    server.cancel(listening.op);
    seen.clear();
    assert_eq!(server.call("grow", "{}"), "added grown_2");
    // Anything the server still sent would have come by now.
    seen.extend(server.wait_events(Duration::from_secs(1)));
    seen.extend(server.wait_events(Duration::from_millis(500)));
    assert!(
        !seen.iter().any(tools_changed),
        "a cancelled subscription heard {seen:?}"
    );
    assert!(
        seen.iter().any(|e| matches!(e, Event::Finished { op, outcome: Err(Error::Cancelled) } if *op == listening.op.id())),
        "{seen:?}"
    );
}

fn changing_config(protocol: ProtocolChoice) -> Config {
    let mut config = config(Peer::Changing, protocol);
    config.allowlist = ["word_count", "grow", "touch"].into_iter().collect();
    config
}

#[test]
#[ignore = "needs the real peers: MCP_INTEROP_PEERS=$(.ci/install-peers)"]
fn the_python_sdk_s_changes_reach_a_subscription_over_stdio_and_http() {
    let command = Peer::Changing.command();
    let mut server = StdioClient::spawn(&command, changing_config(ProtocolChoice::Auto)).unwrap();
    changes_are_heard(&mut server);
    server.close(Duration::from_secs(2)).unwrap();

    let served = HttpPeer::start(Peer::Changing, Served::Events);
    let mut server = HttpClient::new(&served.url, changing_config(ProtocolChoice::Auto)).unwrap();
    changes_are_heard(&mut server);
    server.close();

    // The async driver, over both.
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let (server, events) = runtime
        .block_on(mcp_sansio_tokio::connect_stdio(
            &command,
            changing_config(ProtocolChoice::Auto),
        ))
        .unwrap();
    runtime.block_on(async_changes_are_heard(server, events));
    // A server of its own: the one above has grown already.
    let served = HttpPeer::start(Peer::Changing, Served::Events);
    let (server, events) = runtime
        .block_on(mcp_sansio_tokio::connect_http(
            &served.url,
            &[],
            changing_config(ProtocolChoice::Auto),
        ))
        .unwrap();
    runtime.block_on(async_changes_are_heard(server, events));

    // The handshake revisions have no subscriptions: refused before a byte is sent.
    let mut server =
        StdioClient::spawn(&command, changing_config(ProtocolChoice::Stateful)).unwrap();
    server.connect().unwrap();
    assert!(matches!(
        server.listen(&Subscription::tools()),
        Err(StdioError::Mcp(Error::Misuse(Misuse::NotInRevision { .. })))
    ));
    server.close(Duration::from_secs(2)).unwrap();
}

/// Through the async driver: a listener hears the tools change, and once dropped, nothing.
async fn async_changes_are_heard(
    server: mcp_sansio_tokio::Handle,
    mut events: mcp_sansio_tokio::Events,
) {
    assert_eq!(server.server().version, ProtocolVersion::V2026_07_28);
    server.list_tools().await.unwrap();
    let listener = server.listen(Subscription::tools()).await.unwrap();
    assert_eq!(listener.honoured(), &Subscription::tools());
    let grow = || async {
        let result = server.call_tool("grow", &RawObject::empty()).await.unwrap();
        result.text().into_owned()
    };
    assert_eq!(grow().await, "added grown_1");
    let heard = tokio::time::timeout(DEADLINE, async {
        loop {
            match events.recv().await {
                Some(Event::Notification(ServerNotification::ListChanged(ListKind::Tools))) => {
                    return
                }
                Some(_) => {}
                None => panic!("the connection ended"),
            }
        }
    });
    heard.await.expect("the tool list's change never came");
    assert_eq!(server.in_flight(), 1, "the subscription stands");
    drop(listener);
    assert_eq!(grow().await, "added grown_2");
    let quiet = tokio::time::timeout(Duration::from_millis(1500), async {
        while let Some(event) = events.recv().await {
            if matches!(
                event,
                Event::Notification(ServerNotification::ListChanged(_))
            ) {
                return event;
            }
        }
        panic!("the connection ended");
    });
    assert!(
        quiet.await.is_err(),
        "a dropped listener's subscription still heard"
    );
    assert_eq!(server.in_flight(), 0);
    server.close().await.unwrap();
}

#[test]
#[ignore = "needs the real peers: MCP_INTEROP_PEERS=$(.ci/install-peers)"]
fn server_everything_sends_the_updates_of_a_resource_subscribed_to_in_2025() {
    let toggle = "toggle-subscriber-updates";
    let mut config = config(Peer::Everything, ProtocolChoice::Auto);
    config.allowlist = [toggle].into_iter().collect();
    let mut server = StdioClient::spawn(&Peer::Everything.command(), config).unwrap();
    let connected = server.connect().unwrap();
    assert_eq!(connected.version, ProtocolVersion::V2025_11_25);
    assert!(connected.capabilities.resource_subscriptions);
    server.list_tools().unwrap();
    let uri = "demo://resource/dynamic/text/1";
    let now = server.now();
    let op = server.client().subscribe_resource(uri, now).unwrap();
    server.run(op).unwrap();
    // The tool starts the server's updates, one at once and one every five seconds.
    server.call_tool(toggle, &RawObject::empty()).unwrap();
    let mut seen = Vec::new();
    wait_for(
        &mut server,
        &mut seen,
        |e| matches!(e, Event::Notification(ServerNotification::ResourceUpdated { uri: u }) if u == uri),
    );
    let now = server.now();
    let op = server.client().unsubscribe_resource(uri, now).unwrap();
    server.run(op).unwrap();
    // And a 2025 server's lists change unasked: listen is not for this revision.
    assert!(matches!(
        server.listen(&Subscription::tools()),
        Err(StdioError::Mcp(Error::Misuse(Misuse::NotInRevision { .. })))
    ));
    server.close(Duration::from_secs(2)).unwrap();
}
