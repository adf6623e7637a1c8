//! A byte stream the application brings: the real teaching server with a Unix or TCP socket
//! as its stdin and stdout, started by the test itself, and `StreamClient` on the socket's
//! other end. What reached the server is read from its own call log.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

use std::net::{TcpListener, TcpStream};
use std::os::unix::net::UnixStream;

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use mcp_sansio::{Config, Error, Event, Misuse, ServerNotification};
use mcp_sansio_stdio::StreamClient;

mod common;

use common::{config, eventually, mcp, words, OnSocket, Server, DEADLINE, SLACK};

/// A Unix socket pair: the client's end, and the teaching server in `mode` on the other.
fn over_unix(
    server: &Server,
    mode: &str,
    config: Config,
) -> (StreamClient<UnixStream, UnixStream>, OnSocket) {
    let (ours, theirs) = UnixStream::pair().unwrap();
    let running = OnSocket::start(server, mode, theirs.into());
    let client = StreamClient::new(ours.try_clone().unwrap(), ours, config).unwrap();
    (client, running)
}

#[test]
fn the_teaching_server_on_a_unix_socket_is_listed_and_called_and_sees_the_end_of_its_input() {
    let server = Server::new("stream-unix");
    let (mut client, mut running) = over_unix(&server, "normal", config(&["word_count"]));
    client.connect().unwrap();
    let catalog = client.list_tools().unwrap();
    assert!(catalog.get("word_count").is_some(), "{catalog:?}");
    assert_eq!(
        client.call_tool("word_count", &words()).unwrap().text(),
        "4"
    );
    let calls = server.calls();
    assert_eq!(calls.len(), 1, "{calls:?}");
    assert_eq!(calls[0]["arguments"]["text"], "vanilla stock needs review");
    // Dropping the client closes its end: the server reads the end of its input and exits.
    drop(client);
    let status = running.exits();
    assert!(status.success(), "{status}");
}

#[test]
fn the_teaching_server_on_a_tcp_connection_answers_as_over_pipes() {
    let server = Server::new("stream-tcp");
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let ours = TcpStream::connect(listener.local_addr().unwrap()).unwrap();
    let (theirs, _) = listener.accept().unwrap();
    let _running = OnSocket::start(&server, "notify", theirs.into());
    let mut client =
        StreamClient::new(ours.try_clone().unwrap(), ours, config(&["word_count"])).unwrap();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let watched = Arc::clone(&seen);
    client.set_watcher(move |event: &Event| {
        if let Event::Notification(ServerNotification::Progress { progress, .. }) = event {
            watched.lock().unwrap().push(*progress);
        }
    });
    client.connect().unwrap();
    client.list_tools().unwrap();
    assert_eq!(
        client.call_tool("word_count", &words()).unwrap().text(),
        "4"
    );
    // The server's three reports were heard as they came, before the answer ended the wait.
    assert_eq!(*seen.lock().unwrap(), [1.0, 2.0, 3.0]);
    assert_eq!(server.calls().len(), 1);
}

#[test]
fn a_server_that_never_answers_fails_the_call_at_its_deadline() {
    let server = Server::new("stream-hang");
    let (mut client, _running) = over_unix(&server, "hang", config(&["word_count"]));
    client.connect().unwrap();
    client.list_tools().unwrap();
    let started = Instant::now();
    let error = mcp(client.call_tool("word_count", &words()));
    let waited = started.elapsed();
    assert!(
        matches!(error, Error::Timeout { .. }),
        "expected the deadline, got {error:?}"
    );
    assert!(waited >= DEADLINE, "ended early, after {waited:?}");
    assert!(waited < DEADLINE + SLACK, "ended late, after {waited:?}");
    assert_eq!(server.calls().len(), 1, "the call reached the server");
}

#[test]
fn a_server_that_dies_in_the_middle_of_a_call_ends_it_as_closed_before_its_deadline() {
    let server = Server::new("stream-dies");
    let mut config = config(&["word_count"]);
    config.limits.operation_timeout = Duration::from_secs(60);
    let (mut client, mut running) = over_unix(&server, "hang", config);
    client.connect().unwrap();
    client.list_tools().unwrap();
    let pid = running.child.id();
    let log = server.log.clone();
    let killer = std::thread::spawn(move || {
        eventually("the call reaches the server", || {
            !common::logged_calls(&log).is_empty()
        });
        common::kill(pid);
    });
    let started = Instant::now();
    let error = mcp(client.call_tool("word_count", &words()));
    killer.join().unwrap();
    assert_eq!(error, Error::Closed);
    assert!(started.elapsed() < SLACK, "waited {:?}", started.elapsed());
    // Nothing is left to reach: the next call is refused at once, before a byte is written.
    assert_eq!(
        mcp(client.call_tool("word_count", &words())),
        Error::Misuse(Misuse::ConnectionFailed)
    );
    assert!(!running.exits().success());
}
