//! The 2024-11-05 transport (HTTP with server-sent events) through the blocking driver, against
//! a server written here on a bare socket, so that the tests see every byte that reached it:
//! which paths were asked for, on which connections, and when the event stream was let go.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

mod common;

use std::io::{BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::mpsc::{self, Receiver, Sender};
use std::thread;
use std::time::Duration;

use common::read_request;
use mcp_sansio::{Allowlist, Config, Error, HttpError, ProtocolChoice, RawObject};
use mcp_sansio_http::{HttpClient, HttpClientError};
use serde_json::{json, Value};

/// Long enough for any machine; a test that waits this long has failed.
const PATIENCE: Duration = Duration::from_secs(20);

/// What reached the server.
#[derive(Debug, PartialEq)]
enum Seen {
    /// A request line: method and target.
    Request(String, String),
    /// The event stream's connection was closed by the client.
    StreamClosed,
}

/// A server of the 2024-11-05 transport at `/sse`, as the TypeScript SDK serves one: a POST
/// there gets 404; a `GET` opens the stream, whose first event is `endpoint` (the data
/// given); a POST to `/message` gets 202 and its answer on the stream. Everything that
/// reaches it goes to the receiver.
fn serve(endpoint: String) -> (String, Receiver<Seen>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/sse", listener.local_addr().unwrap());
    let (seen, log) = mpsc::channel();
    let (to_stream, from_posts) = mpsc::channel::<Value>();
    let from_posts = std::sync::Arc::new(std::sync::Mutex::new(from_posts));
    thread::spawn(move || {
        for conn in listener.incoming() {
            let (conn, seen, to_stream) = (conn.unwrap(), seen.clone(), to_stream.clone());
            let (endpoint, from_posts) = (endpoint.clone(), from_posts.clone());
            thread::spawn(move || connection(conn, &endpoint, &seen, &to_stream, &from_posts));
        }
    });
    (url, log)
}

fn connection(
    conn: TcpStream,
    endpoint: &str,
    seen: &Sender<Seen>,
    to_stream: &Sender<Value>,
    from_posts: &std::sync::Mutex<Receiver<Value>>,
) {
    let mut writer = conn.try_clone().unwrap();
    let mut reader = BufReader::new(conn);
    while let Some((method, target, body)) = read_request(&mut reader) {
        let _ = seen.send(Seen::Request(method.clone(), target.clone()));
        match (method.as_str(), target.as_str()) {
            ("GET", "/sse") => {
                write!(
                    writer,
                    "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n\r\nevent: endpoint\ndata: {endpoint}\n\n"
                )
                .unwrap();
                // Answers go out as they come; the client's close ends the read below.
                let mut watch = reader.into_inner();
                watch
                    .set_read_timeout(Some(Duration::from_millis(20)))
                    .unwrap();
                let from_posts = from_posts.lock().unwrap();
                loop {
                    while let Ok(answer) = from_posts.try_recv() {
                        let event = format!("event: message\ndata: {answer}\n\n");
                        if writer.write_all(event.as_bytes()).is_err() {
                            let _ = seen.send(Seen::StreamClosed);
                            return;
                        }
                    }
                    match watch.read(&mut [0; 16]) {
                        Ok(0) => {
                            let _ = seen.send(Seen::StreamClosed);
                            return;
                        }
                        Ok(_) => {}
                        Err(_) => {}
                    }
                }
            }
            ("POST", "/sse") => {
                write!(
                    writer,
                    "HTTP/1.1 404 Not Found\r\nContent-Length: 16\r\n\r\nCannot POST /sse"
                )
                .unwrap();
            }
            ("POST", _) => {
                let message: Value = serde_json::from_slice(&body).unwrap();
                let id = message["id"].clone();
                let result = match message["method"].as_str() {
                    Some("initialize") => Some(json!({"protocolVersion": "2025-11-25",
                        "capabilities": {"tools": {}}, "serverInfo": {"name": "old", "version": "1"}})),
                    Some("tools/list") => Some(json!({"tools": [{"name": "word_count",
                        "inputSchema": {"type": "object"}}]})),
                    Some("tools/call") => Some(json!({"content": [{"type": "text", "text": "4"}]})),
                    _ => None,
                };
                if let Some(result) = result {
                    to_stream
                        .send(json!({"jsonrpc": "2.0", "id": id, "result": result}))
                        .unwrap();
                }
                write!(
                    writer,
                    "HTTP/1.1 202 Accepted\r\nContent-Length: 8\r\n\r\nAccepted"
                )
                .unwrap();
            }
            _ => {
                write!(
                    writer,
                    "HTTP/1.1 405 Method Not Allowed\r\nContent-Length: 0\r\n\r\n"
                )
                .unwrap();
            }
        }
    }
}

fn config() -> Config {
    let mut config = Config::new(["word_count"].into_iter().collect::<Allowlist>());
    config.protocol = ProtocolChoice::Stateful;
    config.limits.operation_timeout = PATIENCE;
    config
}

/// What reached the server, until `last` (inclusive) or until nothing more comes.
fn until(log: &Receiver<Seen>, last: &Seen) -> Vec<Seen> {
    let mut seen = Vec::new();
    while let Ok(next) = log.recv_timeout(PATIENCE) {
        let done = next == *last;
        seen.push(next);
        if done {
            break;
        }
    }
    seen
}

fn request(method: &str, target: &str) -> Seen {
    Seen::Request(method.to_owned(), target.to_owned())
}

#[test]
fn messages_go_to_the_endpoint_and_close_lets_the_stream_go() {
    let (url, log) = serve(String::from("/message?sessionId=s1"));
    let mut client = HttpClient::new(&url, config()).unwrap();
    client.connect().unwrap();
    client.list_tools().unwrap();
    let result = client.call_tool("word_count", &RawObject::empty()).unwrap();
    assert_eq!(result.text(), "4");
    client.close();
    let seen = until(&log, &Seen::StreamClosed);
    let endpoint = "/message?sessionId=s1";
    assert_eq!(
        seen,
        [
            request("POST", "/sse"),
            request("GET", "/sse"),
            request("POST", endpoint),
            request("POST", endpoint),
            request("POST", endpoint),
            request("POST", endpoint),
            Seen::StreamClosed,
        ],
        "initialize refused, the stream, then initialize, initialized, the listing and the \
         call at the endpoint; and close let the stream go"
    );
}

#[test]
fn a_client_dropped_without_close_lets_the_stream_go_too() {
    let (url, log) = serve(String::from("/message?sessionId=s2"));
    let mut client = HttpClient::new(&url, config()).unwrap();
    client.connect().unwrap();
    drop(client);
    let seen = until(&log, &Seen::StreamClosed);
    assert_eq!(seen.last(), Some(&Seen::StreamClosed), "{seen:?}");
}

#[test]
fn an_endpoint_on_another_origin_is_never_sent_to() {
    // The other origin is a listener of ours: nothing may connect to it.
    let elsewhere = TcpListener::bind("127.0.0.1:0").unwrap();
    elsewhere.set_nonblocking(true).unwrap();
    let port = elsewhere.local_addr().unwrap().port();
    let (url, log) = serve(format!("http://127.0.0.1:{port}/message?sessionId=s3"));
    let mut client = HttpClient::new(&url, config()).unwrap();
    match client.connect() {
        Err(HttpClientError::Mcp(Error::Http(HttpError::MessageEndpoint))) => {}
        other => panic!("{other:?}"),
    }
    client.close();
    let seen = until(&log, &Seen::StreamClosed);
    assert_eq!(
        seen,
        [
            request("POST", "/sse"),
            request("GET", "/sse"),
            Seen::StreamClosed
        ]
    );
    assert!(
        elsewhere.accept().is_err(),
        "the client connected to the other origin"
    );
}
