//! A 2026-07-28 subscription through the blocking driver, against a server written here on a
//! bare socket: its stream lasts, so a worker reads it while the application calls and
//! waits; a change sent on it long after the acknowledgement is heard; and a cancel drops
//! the stream, which the server sees closed.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

mod common;

use std::io::{BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::mpsc::{self, Receiver, Sender};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::Duration;

use common::read_request;
use mcp_sansio::{
    Allowlist, Config, Error, Event, ListKind, ProtocolChoice, RawObject, ServerNotification,
    Subscription,
};
use mcp_sansio_http::HttpClient;
use serde_json::{json, Value};

/// Longer than any wait of the client's: the server gives up after the client has.
const PATIENCE: Duration = Duration::from_secs(10);

/// What the test tells the server, and hears back: a change to send on the subscription's
/// stream, and that the stream was dropped.
struct Shared {
    changes: Mutex<Receiver<()>>,
    dropped: Mutex<Sender<()>>,
}

fn serve() -> (String, Sender<()>, Receiver<()>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let (change, changes) = mpsc::channel();
    let (dropped, drops) = mpsc::channel();
    let shared = Arc::new(Shared {
        changes: Mutex::new(changes),
        dropped: Mutex::new(dropped),
    });
    thread::spawn(move || {
        for conn in listener.incoming() {
            let (conn, shared) = (conn.unwrap(), Arc::clone(&shared));
            thread::spawn(move || connection(conn, &shared));
        }
    });
    (url, change, drops)
}

fn json_reply(writer: &mut TcpStream, body: &Value) {
    let body = body.to_string();
    write!(
        writer,
        "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
}

/// One server-sent event carrying `message`, as one chunk; whether the client still reads.
fn event(writer: &mut TcpStream, message: &Value) -> bool {
    let data = format!("data: {message}\n\n");
    write!(writer, "{:x}\r\n{data}\r\n", data.len()).is_ok() && writer.flush().is_ok()
}

fn connection(conn: TcpStream, shared: &Shared) {
    let mut writer = conn.try_clone().unwrap();
    let mut reader = BufReader::new(conn);
    while let Some((_, _, body)) = read_request(&mut reader) {
        let message: Value = serde_json::from_slice(&body).unwrap();
        let id = message["id"].clone();
        let result = |result: Value| json!({"jsonrpc": "2.0", "id": id, "result": result});
        match message["method"].as_str().unwrap_or_default() {
            "server/discover" => json_reply(
                &mut writer,
                &result(json!({"supportedVersions": ["2026-07-28"],
                    "capabilities": {"tools": {"listChanged": true}}})),
            ),
            "tools/list" => json_reply(
                &mut writer,
                &result(
                    json!({"tools": [{"name": "word_count", "inputSchema": {"type": "object"}}]}),
                ),
            ),
            "tools/call" => json_reply(
                &mut writer,
                &result(json!({"content": [{"type": "text", "text": "2"}]})),
            ),
            "subscriptions/listen" => {
                write!(
                    writer,
                    "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n"
                )
                .unwrap();
                let meta = json!({"io.modelcontextprotocol/subscriptionId": id});
                let ack = json!({"jsonrpc": "2.0", "method": "notifications/subscriptions/acknowledged",
                    "params": {"notifications": {"toolsListChanged": true}, "_meta": meta}});
                assert!(event(&mut writer, &ack));
                // The stream lasts: a change when the test asks for one, then keep-alive
                // comments until the client drops it.
                let changes = shared.changes.lock().unwrap();
                changes.recv_timeout(PATIENCE).unwrap();
                let change = json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed",
                    "params": {"_meta": meta}});
                assert!(event(&mut writer, &change));
                for _ in 0..1000 {
                    let comment = ": alive\n\n";
                    let written = write!(writer, "{:x}\r\n{comment}\r\n", comment.len())
                        .and_then(|()| writer.flush());
                    if written.is_err() {
                        let _ = shared.dropped.lock().unwrap().send(());
                        return;
                    }
                    thread::sleep(Duration::from_millis(10));
                }
                return;
            }
            _ => {}
        }
    }
}

#[test]
fn a_subscription_s_stream_is_read_by_a_worker_for_as_long_as_it_lasts() {
    let (url, change, drops) = serve();
    let mut config = Config::new(["word_count"].into_iter().collect::<Allowlist>());
    config.protocol = ProtocolChoice::Stateless;
    config.limits.operation_timeout = Duration::from_secs(1);
    let mut client = HttpClient::new(&url, config).unwrap();
    client.connect().unwrap();
    client.list_tools().unwrap();
    let listening = client.listen(&Subscription::tools()).unwrap();
    assert_eq!(listening.honoured, Subscription::tools());
    // Past the operation's deadline, a call comes and goes while the stream stands.
    std::thread::sleep(Duration::from_millis(1100));
    let args = RawObject::parse(r#"{"text":"a b"}"#, &Default::default()).unwrap();
    assert_eq!(client.call_tool("word_count", &args).unwrap().text(), "2");
    change.send(()).unwrap();
    let events = client.wait_events(PATIENCE);
    assert!(
        events.contains(&Event::Notification(ServerNotification::ListChanged(
            ListKind::Tools
        ))),
        "{events:?}"
    );
    assert!(client.client().is_pending(listening.op));
    client.client().cancel(listening.op).unwrap();
    let events = client.wait_events(PATIENCE);
    assert!(
        events.iter().any(|e| matches!(
            e,
            Event::Finished { op, outcome: Err(Error::Cancelled) } if *op == listening.op.id()
        )),
        "{events:?}"
    );
    drops
        .recv_timeout(PATIENCE)
        .expect("the server never saw the stream dropped");
}
