//! A server's request that the answer to a call waits for, on the session's `GET` stream or
//! on the call's own reply stream: through the blocking driver, against a Streamable HTTP
//! server written here on a bare socket. Real servers do both (server-everything and the
//! Python SDKs ask for the client's roots on the `GET` stream, and ask the user on the
//! call's stream), so a driver that reads only the call's own reply while the call waits,
//! or answers only once it has stopped waiting, never answers, and the call fails at its
//! deadline.

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
    Allowlist, Asks, Config, Limits, ProtocolChoice, RawObject, Reply, Root, ServerRequest,
};
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

/// A server at `/mcp` with a session: `initialize` and `tools/list` in JSON, a `GET` stream
/// (or, without `get`, 405 to a `GET`), a `tools/call` of `roots` that first asks for the
/// roots on the `GET` stream and answers with their URIs once the client has POSTed them
/// (or says it never did), and one of `ask` that asks the user on its own reply stream and
/// answers with the name the client POSTed.
fn serve(get: bool) -> String {
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
            thread::spawn(move || connection(conn, &shared, get));
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

/// The client's answer to the server's request, or why there is none.
fn answer_to_server(shared: &Shared) -> Value {
    match shared.answers.lock().unwrap().recv_timeout(PATIENCE) {
        Ok(answer) => answer,
        Err(_) => json!("the answer never came"),
    }
}

fn connection(conn: TcpStream, shared: &Shared, get: bool) {
    let mut writer = conn.try_clone().unwrap();
    let mut reader = BufReader::new(conn);
    while let Some((method, _, body)) = read_request(&mut reader) {
        if method == "GET" && !get {
            write!(
                writer,
                "HTTP/1.1 405 Method Not Allowed\r\nContent-Length: 0\r\n\r\n"
            )
            .unwrap();
            continue;
        }
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
            Some("tools/list") => json!({"tools": [
                {"name": "roots", "inputSchema": {"type": "object"}},
                {"name": "ask", "inputSchema": {"type": "object"}}]}),
            Some("tools/call") if message["params"]["name"] == "ask" => {
                write!(
                    writer,
                    "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nMcp-Session-Id: s1\r\n\r\n"
                )
                .unwrap();
                let ask = json!({"jsonrpc": "2.0", "id": "e1", "method": "elicitation/create",
                    "params": {"message": "Your name?", "requestedSchema": {"type": "object"}}});
                write!(writer, "event: message\ndata: {ask}\n\n").unwrap();
                let text = answer_to_server(shared)["result"]["content"]["name"].to_string();
                let result = json!({"jsonrpc": "2.0", "id": id,
                    "result": {"content": [{"type": "text", "text": text}]}});
                write!(writer, "event: message\ndata: {result}\n\n").unwrap();
                return;
            }
            Some("tools/call") => {
                let ask = json!({"jsonrpc": "2.0", "id": "r1", "method": "roots/list"});
                shared.to_stream.lock().unwrap().send(ask).unwrap();
                let text = answer_to_server(shared)["result"]["roots"][0]["uri"].to_string();
                json!({"content": [{"type": "text", "text": text}]})
            }
            // A notification, or the client's answer to the server's request.
            _ => {
                if message.get("method").is_none() {
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
    let mut client = connected(&serve(true));
    let result = client.call_tool("roots", &RawObject::empty()).unwrap();
    assert_eq!(result.text(), "\"file:///srv/project\"");
    client.close();
}

/// A client of `url` that gives roots and answers elicitations with the name `Ana`,
/// connected and listed.
fn connected(url: &str) -> HttpClient {
    let mut config = Config::new(["roots", "ask"].into_iter().collect::<Allowlist>());
    config.protocol = ProtocolChoice::Stateful;
    config.limits.operation_timeout = Duration::from_secs(5);
    config.roots = Some(vec![Root::new("file:///srv/project").unwrap()]);
    config.asks = Asks::NONE.with_elicitation();
    let mut client = HttpClient::new(url, config).unwrap();
    client.set_responder(|_: &ServerRequest| {
        Reply::accept(&RawObject::parse(r#"{"name":"Ana"}"#, &Limits::default()).unwrap())
    });
    client.connect().unwrap();
    client.list_tools().unwrap();
    client
}

/// The call is answered: the responder's answer to the question on the call's own stream
/// left while that stream was still being read, with or without a `GET` stream open (the
/// call's POST runs on a worker or on the calling thread).
#[test]
fn a_request_on_the_call_s_own_stream_is_answered_by_the_responder_at_once() {
    for get in [true, false] {
        let mut client = connected(&serve(get));
        let result = client.call_tool("ask", &RawObject::empty()).unwrap();
        assert_eq!(result.text(), "\"Ana\"", "with a GET stream: {get}");
        client.close();
    }
}
