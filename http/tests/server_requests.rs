//! A server's request on the session's `GET` stream, which the answer to a call waits for:
//! through the blocking driver, against a Streamable HTTP server written here on a bare
//! socket. Real servers do this (server-everything and the Python SDKs ask for the client's
//! roots there in the middle of a call), so a driver that reads only the call's own reply
//! while the call waits never answers, and the call fails at its deadline.

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
use mcp_sansio::{Allowlist, Config, ProtocolChoice, RawObject, Root};
use mcp_sansio_http::HttpClient;
use serde_json::{json, Value};

/// Longer than the call's deadline: the server gives up after the client has.
const PATIENCE: Duration = Duration::from_secs(10);

/// What the connections share: the `GET` stream's queue of requests to send, and the
/// answers the client POSTed to them.
struct Shared {
    to_stream: Mutex<Sender<Value>>,
    from_stream: Mutex<Receiver<Value>>,
    answers: Mutex<Receiver<Value>>,
    answered: Mutex<Sender<Value>>,
}

/// A server at `/mcp` with a session: `initialize` and `tools/list` in JSON, a `GET` stream,
/// and a `tools/call` that first asks for the roots on the `GET` stream and answers with
/// their URIs once the client has POSTed them (or says it never did).
fn serve() -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let (to_stream, from_stream) = mpsc::channel();
    let (answered, answers) = mpsc::channel();
    let shared = Arc::new(Shared {
        to_stream: Mutex::new(to_stream),
        from_stream: Mutex::new(from_stream),
        answers: Mutex::new(answers),
        answered: Mutex::new(answered),
    });
    thread::spawn(move || {
        for conn in listener.incoming() {
            let (conn, shared) = (conn.unwrap(), Arc::clone(&shared));
            thread::spawn(move || connection(conn, &shared));
        }
    });
    url
}

fn reply(writer: &mut TcpStream, status: &str, body: &Value) {
    let body = body.to_string();
    write!(
        writer,
        "HTTP/1.1 {status}\r\nContent-Type: application/json\r\nMcp-Session-Id: s1\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
}

fn connection(conn: TcpStream, shared: &Shared) {
    let mut writer = conn.try_clone().unwrap();
    let mut reader = BufReader::new(conn);
    while let Some((method, _, body)) = read_request(&mut reader) {
        if method == "GET" {
            write!(
                writer,
                "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n\r\n"
            )
            .unwrap();
            let from_stream = shared.from_stream.lock().unwrap();
            while let Ok(request) = from_stream.recv() {
                let event = format!("event: message\ndata: {request}\n\n");
                if writer.write_all(event.as_bytes()).is_err() {
                    return;
                }
            }
            return;
        }
        if method == "DELETE" {
            reply(&mut writer, "200 OK", &json!({}));
            continue;
        }
        let message: Value = serde_json::from_slice(&body).unwrap();
        let id = message["id"].clone();
        let result = match message["method"].as_str() {
            Some("initialize") => json!({"protocolVersion": "2025-11-25",
                "capabilities": {"tools": {}}, "serverInfo": {"name": "asks", "version": "1"}}),
            Some("tools/list") => json!({"tools": [{"name": "roots",
                "inputSchema": {"type": "object"}}]}),
            Some("tools/call") => {
                let ask = json!({"jsonrpc": "2.0", "id": "r1", "method": "roots/list"});
                shared.to_stream.lock().unwrap().send(ask).unwrap();
                let text = match shared.answers.lock().unwrap().recv_timeout(PATIENCE) {
                    Ok(answer) => answer["result"]["roots"][0]["uri"].to_string(),
                    Err(_) => String::from("the roots never came"),
                };
                json!({"content": [{"type": "text", "text": text}]})
            }
            // A notification, or the client's answer to the server's request.
            _ => {
                if message["id"] == "r1" {
                    shared.answered.lock().unwrap().send(message).unwrap();
                }
                write!(writer, "HTTP/1.1 202 Accepted\r\nContent-Length: 0\r\n\r\n").unwrap();
                continue;
            }
        };
        reply(
            &mut writer,
            "200 OK",
            &json!({"jsonrpc": "2.0", "id": id, "result": result}),
        );
    }
}

/// The call is answered: the client read the server's question on the `GET` stream while
/// the call's own POST waited, and POSTed the roots.
#[test]
fn a_request_on_the_get_stream_is_answered_while_a_call_waits_for_it() {
    let url = serve();
    let mut config = Config::new(["roots"].into_iter().collect::<Allowlist>());
    config.protocol = ProtocolChoice::Stateful;
    config.limits.operation_timeout = Duration::from_secs(5);
    config.roots = Some(vec![Root::new("file:///srv/project").unwrap()]);
    let mut client = HttpClient::new(&url, config).unwrap();
    client.connect().unwrap();
    client.list_tools().unwrap();
    let result = client.call_tool("roots", &RawObject::empty()).unwrap();
    assert_eq!(result.text(), "\"file:///srv/project\"");
    client.close();
}
