//! The teaching server over Streamable HTTP: sessions for 2025-06-18 and 2025-11-25, every
//! request on its own for 2026-07-28 (a subscription on a stream of its own), replies in
//! JSON or (with `--sse`, or when a reply carries more than its answer) as server-sent events
//! opening with a priming event; and the HTTP failure modes.

use std::collections::HashSet;
use std::io::{self, Read, Write};
use std::sync::{mpsc, Arc, Mutex, PoisonError};
use std::time::Duration;

use serde_json::{json, Value};

use crate::modes::Mode;
use crate::wire::{Method, Request, Response, Server};
use crate::{Opened, Out, Serve, STATELESS};

/// What the server shares between the threads that answer.
struct Shared {
    serve: Serve,
    sessions: HashSet<String>,
    next_session: u64,
    /// The `expire` mode ends the session once, at the first call.
    expired_once: bool,
    /// The methods whose first reply the `lost-stream` mode has ended early.
    lost: HashSet<String>,
    events: u64,
}

/// How the server answers over HTTP.
#[derive(Clone, Debug, Default)]
pub(crate) struct Options {
    /// Replies as server-sent events, opening with a priming event.
    pub(crate) sse: bool,
    /// Requests without `Authorization: Bearer TOKEN` get 401.
    pub(crate) token: Option<String>,
}

/// Serves the MCP endpoint `/mcp` at `addr` (`127.0.0.1:0` picks a port) until killed;
/// prints `http://ADDR/mcp` on stdout once listening.
pub(crate) fn serve(addr: &str, serve: Serve, options: Options) -> Result<(), String> {
    let server = Server::bind(addr).map_err(|e| format!("cannot listen on {addr}: {e}"))?;
    let bound = server
        .local_addr()
        .map_err(|e| format!("the server has no address: {e}"))?;
    println!("http://{bound}/mcp");
    let _ = io::stdout().flush();
    let shared = Arc::new(Mutex::new(Shared {
        serve,
        sessions: HashSet::new(),
        next_session: 0,
        expired_once: false,
        lost: HashSet::new(),
        events: 0,
    }));
    // A thread per connection: a reply that never ends holds only its own.
    server.run(move |request| answer(request, &shared, &options));
    Ok(())
}

fn header(request: &Request, name: &'static str) -> Option<String> {
    request.header(name).map(str::to_owned)
}

/// In `moved-header` and `moving-header`, the refusal (-32020) of a call whose `region` is
/// not in the header the server now declares for it, as a 2026-07-28 server checks what it
/// declared; `None` for every other request.
fn moved_header(request: &Request, message: &Value, serve: &Serve) -> Option<Value> {
    if message["method"] != "tools/call" {
        return None;
    }
    let declared = crate::modes::region_header(serve.mode, serve.listed)?;
    let region = message["params"]["arguments"]["region"].as_str()?;
    let sent = header(
        request,
        if declared == "Zone" {
            "mcp-param-zone"
        } else {
            "mcp-param-region"
        },
    );
    (sent.as_deref() != Some(region)).then(|| {
        rpc_error(
            message.get("id").unwrap_or(&Value::Null),
            -32020,
            &format!("Mcp-Param-{declared} does not match the argument region"),
        )
    })
}

/// An empty reply with `code` and the header `name: value`.
fn bare(code: u16, name: &str, value: &str) -> Response {
    Response::empty(code).with_header(name, value)
}

fn status(code: u16, body: &Value) -> Response {
    Response::data(code, body.to_string().into_bytes())
        .with_header("Content-Type", "application/json")
}

fn rpc_error(id: &Value, code: i64, message: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})
}

/// Answers one HTTP request: a refusal, the end of a session, or what the server says to
/// the message a POST carries.
fn answer(request: &mut Request, server: &Mutex<Shared>, options: &Options) {
    let sse = options.sse;
    let message = match posted(request, server, options) {
        Ok(message) => message,
        Err(instead) => {
            if let Some(response) = instead {
                let _ = request.respond(response);
            }
            return;
        }
    };
    let id = message.get("id").cloned();
    let method = message["method"].as_str().unwrap_or_default().to_owned();
    let stateless = header(request, "mcp-protocol-version").as_deref() == Some(STATELESS);
    let mut shared = server.lock().unwrap_or_else(PoisonError::into_inner);
    let new_session = match placed(request, &mut shared, &message, stateless) {
        Ok(new_session) => new_session,
        Err(refusal) => {
            drop(shared);
            let _ = request.respond(refusal);
            return;
        }
    };
    if id.is_none() || message.get("method").is_none() {
        // A notification (the parallel mode logs cancellations), or the answer to a
        // request of the server's.
        shared.serve.handle(&message);
        drop(shared);
        let _ = request.respond(Response::empty(202));
        return;
    }
    shared.serve.out = Out::Reply(Vec::new());
    shared.serve.handle(&message);
    let opened = shared.serve.take_opened();
    let subscription = opened.as_ref().map(|o| o.number);
    let lines = match std::mem::replace(&mut shared.serve.out, Out::Reply(Vec::new())) {
        Out::Reply(lines) => lines,
        Out::Stdout(_) => Vec::new(),
    };
    shared.events += 1;
    let event_base = shared.events;
    let mode = shared.serve.mode;
    // The lost-stream mode ends the first reply to each method before its answer, in
    // 2026-07-28 (where that loses the request, and nothing resumes the stream).
    let loses = mode == Mode::LostStream && stateless && shared.lost.insert(method.clone());
    let held = match (mode, &id) {
        (Mode::Parallel, Some(id)) if method == "tools/call" => shared.serve.parallel_delay(id),
        _ => Duration::ZERO,
    };
    drop(shared);
    // The parallel mode holds its answer, with the lock released: other requests (a
    // cancellation among them) are served meanwhile.
    std::thread::sleep(held);
    let messages: Vec<&[u8]> = lines
        .split(|b| *b == b'\n')
        .filter(|l| !l.is_empty())
        .collect();
    if messages.is_empty() {
        // The hang mode: the request is held, unanswered, until the process ends.
        std::thread::sleep(Duration::from_secs(3600));
        return;
    }
    let mut headers = Vec::new();
    if let Some(session) = &new_session {
        headers.push(("Mcp-Session-Id", session.clone()));
    }
    let stream = sse
        || opened.is_some()
        || loses
        || messages.len() > 1
        || matches!(mode, Mode::EndlessEvent | Mode::EndlessStream);
    // A whole body is sent with its length; a stream, chunked.
    let whole = |bytes: Vec<u8>| -> (Option<usize>, Box<dyn Read + Send>) {
        (Some(bytes.len()), Box::new(io::Cursor::new(bytes)))
    };
    let (content_type, (length, body)) = if mode == Mode::WrongContentType {
        ("text/html", whole(b"<html>not MCP</html>".to_vec()))
    } else if stream {
        let body = event_stream(&messages, event_base, mode, &method, opened, loses);
        ("text/event-stream", (None, body))
    } else {
        let one = messages.first().map(|m| m.to_vec()).unwrap_or_default();
        ("application/json", whole(one))
    };
    headers.push(("Content-Type", content_type.to_owned()));
    let response = headers.iter().fold(
        Response::stream(200, body, length),
        |response, (name, value)| response.with_header(name, value),
    );
    let _ = request.respond(response);
    // A subscription's stream ends when the server ends the subscription, or when the
    // client closes it (a write then fails), which is its cancel.
    if let Some(number) = subscription {
        server
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .serve
            .stream_closed(number);
    }
}

/// A reply as server-sent events: a priming event, then `messages`, each with an id of
/// reply `event_base`; on a subscription's stream, then what it is told; and what the
/// stream modes do to a `tools/call`'s reply.
fn event_stream(
    messages: &[&[u8]],
    event_base: u64,
    mode: Mode,
    method: &str,
    opened: Option<Opened>,
    loses: bool,
) -> Box<dyn Read + Send> {
    let mut text = format!("id: e{event_base}-0\ndata:\n\n");
    for (n, message) in messages.iter().enumerate() {
        text.push_str(&format!("id: e{event_base}-{}\ndata: ", n + 1));
        text.push_str(&String::from_utf8_lossy(message));
        text.push_str("\n\n");
    }
    match (mode, opened) {
        // A subscription's stream: its acknowledgement, then what it is told, until it
        // ends.
        (_, Some(Opened { told, .. })) => Box::new(Told {
            pending: io::Cursor::new(text.into_bytes()),
            told,
        }),
        // The priming event, and the stream ends before the answer.
        _ if loses => Box::new(io::Cursor::new(
            format!("id: e{event_base}-0\ndata:\n\n").into_bytes(),
        )),
        // One event whose data never ends.
        (Mode::EndlessEvent, None) if method == "tools/call" => {
            Box::new(io::Cursor::new(b"data: ".to_vec()).chain(io::repeat(b'x')))
        }
        // Keep-alive comments, forever, and never the answer.
        (Mode::EndlessStream, None) if method == "tools/call" => Box::new(Drip {
            bytes: b": keep-alive\n\n".to_vec(),
            at: 0,
            every: Duration::from_millis(100),
            repeat: true,
        }),
        (Mode::Trickle, None) if method == "tools/call" => Box::new(Drip {
            bytes: text.into_bytes(),
            at: 0,
            every: Duration::from_millis(20),
            repeat: false,
        }),
        _ => Box::new(io::Cursor::new(text.into_bytes())),
    }
}

/// The JSON-RPC message a POST carries, once the request has passed what every request
/// must (its token, its method, `Accept`, `Content-Type`, a body that is JSON); or what the
/// server answers instead (a refusal, or the end of a session for a DELETE), `None` where it
/// answers nothing.
fn posted(
    request: &Request,
    server: &Mutex<Shared>,
    options: &Options,
) -> Result<Value, Option<Response>> {
    let mode = server
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .serve
        .mode;
    let authorized = options.token.as_ref().is_none_or(|token| {
        header(request, "authorization").as_deref() == Some(format!("Bearer {token}").as_str())
    });
    match (request.method(), mode) {
        _ if !authorized => return Err(Some(bare(401, "WWW-Authenticate", "Bearer"))),
        (_, Mode::Unauthorized) => return Err(Some(bare(401, "WWW-Authenticate", "Bearer"))),
        // Elsewhere: a client that followed would carry its headers to another origin.
        (_, Mode::Redirect) => return Err(Some(bare(307, "Location", "http://127.0.0.2:9/mcp"))),
        (Method::Delete, _) => {
            if let Some(id) = header(request, "mcp-session-id") {
                server
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .sessions
                    .remove(&id);
            }
            return Err(Some(Response::empty(200)));
        }
        (Method::Post, _) => {}
        _ => return Err(Some(bare(405, "Allow", "POST, DELETE"))),
    }
    let accept = header(request, "accept").unwrap_or_default();
    if !(accept.contains("application/json") && accept.contains("text/event-stream")) {
        return Err(Some(status(
            406,
            &rpc_error(&Value::Null, -32600, "Not Acceptable"),
        )));
    }
    if !header(request, "content-type").is_some_and(|t| t.starts_with("application/json")) {
        return Err(Some(status(
            415,
            &rpc_error(&Value::Null, -32600, "Unsupported Media Type"),
        )));
    }
    let body = String::from_utf8(request.body().to_vec()).map_err(|_| None)?;
    serde_json::from_str::<Value>(&body)
        .map_err(|_| Some(status(400, &rpc_error(&Value::Null, -32700, "Parse error"))))
}

/// Where `message` belongs: in 2026-07-28 on its own, its `Mcp-Method` checked; in a
/// handshake revision in a session the server knows, or a new one for `initialize` (its id
/// returned). The refusal otherwise, or when a call's `Mcp-Param-*` header is not what the
/// server declares (the `moved-header` modes).
fn placed(
    request: &Request,
    shared: &mut Shared,
    message: &Value,
    stateless: bool,
) -> Result<Option<String>, Response> {
    let method = message["method"].as_str().unwrap_or_default();
    let mut new_session = None;
    if stateless {
        if shared.serve.mode.supported().is_empty() {
            // What a server of the handshake revisions says to a request it cannot place.
            return Err(status(
                400,
                &rpc_error(&Value::Null, -32000, "Bad Request: Server not initialized"),
            ));
        }
        if header(request, "mcp-method").as_deref() != Some(method) {
            return Err(status(
                400,
                &rpc_error(
                    message.get("id").unwrap_or(&Value::Null),
                    -32020,
                    "Mcp-Method does not match the body",
                ),
            ));
        }
    } else if method == "initialize" {
        shared.next_session += 1;
        let session = format!("teaching-{}", shared.next_session);
        shared.sessions.insert(session.clone());
        new_session = Some(session);
    } else {
        let session = header(request, "mcp-session-id");
        let known = session
            .as_ref()
            .is_some_and(|s| shared.sessions.contains(s));
        let expire =
            shared.serve.mode == Mode::Expire && method == "tools/call" && !shared.expired_once;
        if !known || expire {
            if expire {
                shared.expired_once = true;
                if let Some(session) = &session {
                    shared.sessions.remove(session);
                }
            }
            let code = if session.is_some() { 404 } else { 400 };
            return Err(status(
                code,
                &rpc_error(&Value::Null, -32001, "Session not found"),
            ));
        }
    }
    // Checked in every revision, wrongly in a 2025 session, which has no such headers: there
    // every call with a region is refused, and a client must not list again for it.
    match moved_header(request, message, &shared.serve) {
        Some(refusal) => Err(status(400, &refusal)),
        None => Ok(new_session),
    }
}

/// A subscription's stream: what it was sent as it opened, then each message told on it as
/// an event as it comes, until the subscription ends (the sending side is dropped). A
/// keep-alive comment goes after each [`KEEP_ALIVE`] without one, so a client that closed
/// the stream is noticed within two of them, when a write fails.
struct Told {
    pending: io::Cursor<Vec<u8>>,
    told: mpsc::Receiver<Value>,
}

/// How long a subscription's stream stays silent at most.
const KEEP_ALIVE: Duration = Duration::from_millis(500);

impl Read for Told {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        loop {
            let read = self.pending.read(buf)?;
            if read > 0 || buf.is_empty() {
                return Ok(read);
            }
            let next = match self.told.recv_timeout(KEEP_ALIVE) {
                Ok(message) => format!("data: {message}\n\n"),
                Err(mpsc::RecvTimeoutError::Timeout) => ": keep-alive\n\n".to_owned(),
                Err(mpsc::RecvTimeoutError::Disconnected) => return Ok(0),
            };
            self.pending = io::Cursor::new(next.into_bytes());
        }
    }
}

/// A body that gives one byte at a time, each after a pause; forever if `repeat`.
struct Drip {
    bytes: Vec<u8>,
    at: usize,
    every: Duration,
    repeat: bool,
}

impl Read for Drip {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.at >= self.bytes.len() {
            if !self.repeat {
                return Ok(0);
            }
            self.at = 0;
        }
        let (Some(byte), Some(slot)) = (self.bytes.get(self.at), buf.first_mut()) else {
            return Ok(0);
        };
        std::thread::sleep(self.every);
        *slot = *byte;
        self.at += 1;
        Ok(1)
    }
}
