//! The session over Streamable HTTP, on the virtual clock: every rule as a scenario, each
//! checked against the transcript of requests and headers the session made.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    clippy::std_instead_of_core
)]

use std::time::Duration;

use mcp_sansio::{
    Allowlist, CallToolResult, Config, Error, Event, ExchangeId, HttpError, HttpMethod,
    HttpRequest, HttpSession, Instant, Limits, ListKind, LogLevel, Op, ProtocolChoice,
    ProtocolViolation, RawObject, ReplyHead, ServerNotification, Subscription, SubscriptionEnded,
    ToolRejection,
};
use serde_json::{json, Value};

/// A reply the scripted server gives to one request.
#[derive(Clone, Debug)]
struct Reply {
    status: u16,
    content_type: Option<&'static str>,
    session: Option<String>,
    body: Vec<u8>,
    /// The connection breaks after the body instead of ending it.
    broken: bool,
    /// `WWW-Authenticate`.
    challenge: Option<&'static str>,
}

fn json_reply(status: u16, body: Value) -> Reply {
    Reply {
        status,
        content_type: Some("application/json"),
        session: None,
        body: body.to_string().into_bytes(),
        broken: false,
        challenge: None,
    }
}

fn sse_reply(text: &str) -> Reply {
    Reply {
        status: 200,
        content_type: Some("text/event-stream; charset=utf-8"),
        session: None,
        body: text.as_bytes().to_vec(),
        broken: false,
        challenge: None,
    }
}

fn accepted() -> Reply {
    Reply {
        status: 202,
        content_type: None,
        session: None,
        body: Vec::new(),
        broken: false,
        challenge: None,
    }
}

fn result(id: &Value, result: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "result": result})
}

/// A request as the server saw it: its method and its JSON-RPC body, if any.
fn body(request: &HttpRequest) -> Value {
    serde_json::from_slice(&request.body).unwrap_or(Value::Null)
}

fn rpc_method(request: &HttpRequest) -> String {
    body(request)["method"].as_str().unwrap_or("").to_owned()
}

/// Drives the session against `server` until nothing is left to perform; `None` from the
/// server leaves an exchange open (a reply that has not come yet). Every request is logged.
struct Harness {
    http: HttpSession,
    now: Instant,
    log: Vec<HttpRequest>,
    aborted: Vec<ExchangeId>,
    events: Vec<Event>,
}

impl Harness {
    fn new(config: Config) -> Self {
        Harness {
            http: HttpSession::new(config),
            now: Instant::ZERO,
            log: Vec::new(),
            aborted: Vec::new(),
            events: Vec::new(),
        }
    }

    fn run(&mut self, server: &mut dyn FnMut(&HttpRequest) -> Option<Reply>) {
        loop {
            while let Some(abort) = self.http.poll_abort() {
                self.aborted.push(abort);
            }
            self.events
                .extend(std::iter::from_fn(|| self.http.poll_event()));
            let Some(request) = self.http.poll_request() else {
                break;
            };
            self.log.push(request.clone());
            let Some(reply) = server(&request) else {
                continue;
            };
            self.feed(request.exchange, &reply);
        }
    }

    fn feed(&mut self, exchange: ExchangeId, reply: &Reply) {
        let head = ReplyHead {
            status: reply.status,
            content_type: reply.content_type,
            session_id: reply.session.as_deref(),
            www_authenticate: reply.challenge,
        };
        self.http.handle_head(exchange, head, self.now);
        // Cut in small pieces, as a network would.
        for piece in reply.body.chunks(7) {
            self.http.handle_body(exchange, piece, self.now);
        }
        if reply.broken {
            self.http.handle_broken(exchange, self.now);
        } else {
            self.http.handle_end(exchange, self.now);
        }
    }

    /// The event that ended `op`, taken out of those seen.
    fn outcome<T: mcp_sansio::Awaited>(&mut self, op: Op<T>) -> Result<T, Error> {
        let at = self
            .events
            .iter()
            .position(|e| matches!(e, Event::Finished { op: o, .. } if *o == op.id()))
            .unwrap_or_else(|| panic!("{op:?} did not finish; events: {:?}", self.events));
        let event = self.events.remove(at);
        op.finished(event).expect("the event is the op's")
    }

    fn methods(&self) -> Vec<String> {
        self.log
            .iter()
            .map(|r| match r.method {
                HttpMethod::Post => rpc_method(r),
                HttpMethod::Get => "GET".to_owned(),
                HttpMethod::Delete => "DELETE".to_owned(),
                _ => "?".to_owned(),
            })
            .collect()
    }
}

fn config(protocol: ProtocolChoice) -> Config {
    let allowlist: Allowlist = ["get_weather", "word_count"].into_iter().collect();
    let mut config = Config::new(allowlist);
    config.protocol = protocol;
    config.limits.operation_timeout = Duration::from_secs(10);
    config
}

const MODERN: &str = "2026-07-28";

/// A 2026-07-28 server: `server/discover`, one tool with an `x-mcp-header` region, and
/// one whose marker is invalid.
fn modern_server(request: &HttpRequest) -> Option<Reply> {
    let message = body(request);
    let id = &message["id"];
    Some(match rpc_method(request).as_str() {
        "server/discover" => json_reply(
            200,
            result(
                id,
                json!({"supportedVersions": [MODERN], "capabilities": {"tools": {}},
                       "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "modern", "version": "1"}}}),
            ),
        ),
        "tools/list" => json_reply(
            200,
            result(
                id,
                json!({"tools": [
                    {"name": "get_weather", "inputSchema": {"type": "object", "properties": {
                        "region": {"type": "string", "x-mcp-header": "Region"},
                        "city": {"type": "string"}}}},
                    {"name": "word_count", "inputSchema": {"type": "object", "properties": {
                        "n": {"type": "number", "x-mcp-header": "N"}}}}
                ]}),
            ),
        ),
        "tools/call" => json_reply(
            200,
            result(id, json!({"content": [{"type": "text", "text": "sunny"}]})),
        ),
        _ => json_reply(
            404,
            json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32601, "message": "Method not found"}}),
        ),
    })
}

#[test]
fn a_stateless_session_names_method_name_and_marked_arguments_in_headers() {
    let mut h = Harness::new(config(ProtocolChoice::Auto));
    let connect = h.http.client_mut().connect(h.now).unwrap();
    h.run(&mut modern_server);
    let connected = h.outcome(connect).unwrap();
    assert_eq!(connected.version.as_str(), MODERN);

    let list = h.http.client_mut().list_tools(h.now).unwrap();
    h.run(&mut modern_server);
    let catalog = h.outcome(list).unwrap();
    let names: Vec<&str> = catalog.tools().iter().map(|t| t.name.as_str()).collect();
    assert_eq!(
        names,
        ["get_weather"],
        "a tool with an invalid marker is left out"
    );
    assert_eq!(catalog.quarantined().len(), 1);
    assert!(matches!(
        catalog.quarantined()[0].reason,
        ToolRejection::HeaderMarker(_)
    ));

    let args = RawObject::parse(
        r#"{"region":"Île-de-France","city":"Paris"}"#,
        &Limits::default(),
    )
    .unwrap();
    let call = h
        .http
        .client_mut()
        .call_tool("get_weather", &args, h.now)
        .unwrap();
    h.run(&mut modern_server);
    let result: CallToolResult = h.outcome(call).unwrap();
    assert_eq!(result.text(), "sunny");

    assert_eq!(h.methods(), ["server/discover", "tools/list", "tools/call"]);
    for request in &h.log {
        assert_eq!(request.method, HttpMethod::Post);
        assert_eq!(
            request.header("accept"),
            Some("application/json, text/event-stream")
        );
        assert_eq!(request.header("content-type"), Some("application/json"));
        assert_eq!(request.header("mcp-protocol-version"), Some(MODERN));
        assert_eq!(
            request.header("mcp-method"),
            Some(rpc_method(request).as_str())
        );
        assert_eq!(request.header("mcp-session-id"), None);
    }
    let call = &h.log[2];
    assert_eq!(call.header("Mcp-Name"), Some("get_weather"));
    assert_eq!(
        call.header("Mcp-Param-Region"),
        Some("=?base64?w45sZS1kZS1GcmFuY2U=?=")
    );
    assert_eq!(h.log[1].header("Mcp-Name"), None);
    assert_eq!(h.http.open_exchanges(), 0);
}

/// A server of the handshake revisions with sessions: refuses `server/discover` as the
/// Python SDK does (400, an error with its own placeholder id), answers on SSE with a
/// priming event, and logs which session each request carried.
struct LegacyServer {
    sessions: u32,
    live: Option<String>,
    /// Answer every request (after the handshake) with 404 this many times.
    expire: u32,
    /// What the `GET` stream carries; without it, `GET` gets 405.
    listen: Option<String>,
    /// Whether it declares `logging`, and says yes to `logging/setLevel`.
    logging: bool,
}

impl LegacyServer {
    fn new() -> Self {
        LegacyServer {
            sessions: 0,
            live: None,
            expire: 0,
            listen: None,
            logging: false,
        }
    }

    fn reply(&mut self, request: &HttpRequest) -> Option<Reply> {
        let message = body(request);
        let id = message["id"].clone();
        let method = rpc_method(request);
        if request.method == HttpMethod::Delete {
            self.live = None;
            return Some(accepted());
        }
        if request.method == HttpMethod::Get {
            return Some(match &self.listen {
                Some(events) => sse_reply(events),
                None => Reply {
                    status: 405,
                    ..accepted()
                },
            });
        }
        if method == "server/discover" {
            return Some(json_reply(
                400,
                json!({"jsonrpc": "2.0", "id": "server-error",
                       "error": {"code": -32600, "message": "Bad Request: Missing session ID"}}),
            ));
        }
        if method == "initialize" {
            assert_eq!(request.header("mcp-session-id"), None);
            self.sessions += 1;
            let session = format!("session-{}", self.sessions);
            self.live = Some(session.clone());
            let mut reply = json_reply(
                200,
                result(
                    &id,
                    json!({"protocolVersion": "2025-11-25",
                           "capabilities": if self.logging {
                               json!({"tools": {}, "logging": {}})
                           } else {
                               json!({"tools": {}})
                           },
                           "serverInfo": {"name": "legacy", "version": "1"}}),
                ),
            );
            reply.session = Some(session);
            return Some(reply);
        }
        if request.header("mcp-session-id") != self.live.as_deref() || self.expire > 0 {
            self.expire = self.expire.saturating_sub(1);
            return Some(json_reply(404, json!({"error": "session not found"})));
        }
        assert_eq!(request.header("mcp-protocol-version"), Some("2025-11-25"));
        Some(match method.as_str() {
            "notifications/initialized" | "notifications/cancelled" => accepted(),
            "tools/list" => json_reply(
                200,
                result(
                    &id,
                    json!({"tools": [{"name": "word_count", "inputSchema": {"type": "object"}}]}),
                ),
            ),
            "logging/setLevel" if self.logging => json_reply(200, result(&id, json!({}))),
            "tools/call" => sse_reply(&format!(
                "id: ev-0\ndata:\n\n: keep-alive\n\nid: ev-1\ndata: {}\n\n",
                result(&id, json!({"content": [{"type": "text", "text": "4"}]}))
            )),
            _ if message.get("result").is_some() => accepted(),
            other => panic!("unexpected {other}"),
        })
    }
}

fn legacy_connected(server: &mut LegacyServer) -> Harness {
    legacy_connected_as(server, config(ProtocolChoice::Auto))
}

fn legacy_connected_as(server: &mut LegacyServer, config: Config) -> Harness {
    let mut h = Harness::new(config);
    let connect = h.http.client_mut().connect(h.now).unwrap();
    h.run(&mut |r| server.reply(r));
    assert_eq!(h.outcome(connect).unwrap().version.as_str(), "2025-11-25");
    let list = h.http.client_mut().list_tools(h.now).unwrap();
    h.run(&mut |r| server.reply(r));
    h.outcome(list).unwrap();
    h
}

fn call(h: &mut Harness) -> Op<CallToolResult> {
    let now = h.now;
    h.http
        .client_mut()
        .call_tool("word_count", &RawObject::empty(), now)
        .unwrap()
}

#[test]
fn a_legacy_session_falls_back_from_the_probe_and_echoes_its_id() {
    let mut server = LegacyServer::new();
    let mut h = legacy_connected(&mut server);
    let op = call(&mut h);
    h.run(&mut |r| server.reply(r));
    assert_eq!(h.outcome(op).unwrap().text(), "4");
    assert_eq!(
        h.methods(),
        [
            "server/discover",
            "initialize",
            "notifications/initialized",
            "GET",
            "tools/list",
            "tools/call"
        ]
    );
    // The probe names the modern revision; initialize names none; then the session's.
    assert_eq!(h.log[0].header("MCP-Protocol-Version"), Some(MODERN));
    assert_eq!(h.log[0].header("Mcp-Method"), Some("server/discover"));
    assert_eq!(h.log[1].header("MCP-Protocol-Version"), None);
    for later in &h.log[2..] {
        assert_eq!(later.header("Mcp-Session-Id"), Some("session-1"));
        assert_eq!(later.header("MCP-Protocol-Version"), Some("2025-11-25"));
        assert_eq!(later.header("Mcp-Method"), None);
    }
    assert_eq!(h.http.session_id(), Some("session-1"));
    let delete = h.http.close().expect("a session with an id is deleted");
    assert_eq!(delete.method, HttpMethod::Delete);
    assert_eq!(delete.header("Mcp-Session-Id"), Some("session-1"));
}

#[test]
fn an_expired_session_is_renewed_once_and_the_refused_request_sent_again() {
    let mut server = LegacyServer::new();
    let mut h = legacy_connected(&mut server);
    server.expire = 1;
    let op = call(&mut h);
    h.run(&mut |r| server.reply(r));
    assert_eq!(h.outcome(op).unwrap().text(), "4");
    let calls: Vec<&HttpRequest> = h
        .log
        .iter()
        .filter(|r| rpc_method(r) == "tools/call")
        .collect();
    assert_eq!(calls.len(), 2);
    assert_eq!(
        calls[0].body, calls[1].body,
        "the same request, the same id"
    );
    assert_eq!(calls[0].header("Mcp-Session-Id"), Some("session-1"));
    assert_eq!(calls[1].header("Mcp-Session-Id"), Some("session-2"));
    assert_eq!(
        &h.methods()[5..],
        [
            "tools/call",
            "initialize",
            "notifications/initialized",
            "tools/call"
        ]
    );
    // No event says the renewal happened apart from the call's own end.
    assert!(h.events.is_empty(), "{:?}", h.events);
}

/// The level of log messages asked for, as each `logging/setLevel` carried it, with the
/// session it went to.
fn levels_asked(h: &Harness) -> Vec<(String, String)> {
    h.log
        .iter()
        .filter(|r| rpc_method(r) == "logging/setLevel")
        .map(|r| {
            let session = r.header("Mcp-Session-Id").unwrap_or("none").to_owned();
            let level = body(r)["params"]["level"].as_str().unwrap_or("").to_owned();
            (session, level)
        })
        .collect()
}

/// A renewed session starts without the level the old one was asked for: the client asks
/// again, at the level last asked for, configured or commanded, and no event says so.
#[test]
fn a_renewed_session_is_asked_again_for_the_log_level() {
    let mut server = LegacyServer::new();
    server.logging = true;
    let mut configured = config(ProtocolChoice::Auto);
    configured.log_level = Some(LogLevel::Error);
    let mut h = legacy_connected_as(&mut server, configured);
    assert!(h.events.is_empty(), "{:?}", h.events);
    let now = h.now;
    let level = h.http.client_mut().set_log_level(LogLevel::Warning, now);
    h.run(&mut |r| server.reply(r));
    h.outcome(level.unwrap()).unwrap();
    server.expire = 1;
    let op = call(&mut h);
    h.run(&mut |r| server.reply(r));
    assert_eq!(h.outcome(op).unwrap().text(), "4");
    let asked = [
        ("session-1", "error"),
        ("session-1", "warning"),
        ("session-2", "warning"),
    ]
    .map(|(session, level)| (session.to_owned(), level.to_owned()));
    assert_eq!(levels_asked(&h), asked);
    assert!(h.events.is_empty(), "{:?}", h.events);

    // Never asked for, never sent, renewal or not.
    let mut server = LegacyServer::new();
    server.logging = true;
    let mut h = legacy_connected(&mut server);
    server.expire = 1;
    let op = call(&mut h);
    h.run(&mut |r| server.reply(r));
    assert_eq!(h.outcome(op).unwrap().text(), "4");
    assert_eq!(levels_asked(&h), []);
}

/// HTTP keeps no order between requests: the level the client asks for itself after the
/// handshake goes out alone, and nothing else goes until it is answered, so the session's
/// first request is already told at that level.
/// A client configured to ask for `info`, connected at time zero to `server`, which
/// declares logging and is given the level's request without answering it; that request.
fn connected_with_the_level_unanswered(server: &mut LegacyServer) -> (Harness, HttpRequest) {
    server.logging = true;
    let mut configured = config(ProtocolChoice::Stateful);
    configured.log_level = Some(LogLevel::Info);
    let mut h = Harness::new(configured);
    let connect = h.http.client_mut().connect(h.now).unwrap();
    h.run(&mut all_but_the_level(server));
    h.outcome(connect).unwrap();
    let level = h.log.iter().find(|r| rpc_method(r) == "logging/setLevel");
    let level = level.expect("the level was asked for").clone();
    (h, level)
}

/// `server`'s replies to everything but `logging/setLevel`, which gets none.
fn all_but_the_level(server: &mut LegacyServer) -> impl FnMut(&HttpRequest) -> Option<Reply> + '_ {
    |r| (rpc_method(r) != "logging/setLevel").then(|| server.reply(r))?
}

#[test]
fn nothing_goes_out_before_the_level_the_client_asks_for_itself_is_answered() {
    let mut server = LegacyServer::new();
    let (mut h, level) = connected_with_the_level_unanswered(&mut server);
    let list = h.http.client_mut().list_tools(h.now).unwrap();
    h.run(&mut all_but_the_level(&mut server));
    let posted =
        |h: &Harness| -> Vec<String> { h.methods().into_iter().filter(|m| m != "GET").collect() };
    assert_eq!(
        posted(&h),
        [
            "initialize",
            "notifications/initialized",
            "logging/setLevel"
        ]
    );
    let reply = server.reply(&level).unwrap();
    h.feed(level.exchange, &reply);
    h.run(&mut |r| server.reply(r));
    h.outcome(list).unwrap();
    assert_eq!(posted(&h).last().map(String::as_str), Some("tools/list"));
    assert!(h.events.is_empty(), "{:?}", h.events);
}

/// A server that never answers the level holds the session's requests no longer than a
/// probe's silence (`Config::probe_timeout`, 2 s): then the level's request is given up,
/// unseen, and what waited goes, its own deadline still ahead of it.
#[test]
fn a_level_never_answered_holds_the_session_no_longer_than_a_probe() {
    let mut server = LegacyServer::new();
    let (mut h, _) = connected_with_the_level_unanswered(&mut server);
    let mut silent = all_but_the_level(&mut server);
    let list = h.http.client_mut().list_tools(h.now).unwrap();
    let listed = |h: &Harness| h.methods().iter().any(|m| m == "tools/list");
    for ms in [0, 1999] {
        h.now = Instant::ZERO.saturating_add(Duration::from_millis(ms));
        h.http.handle_timeout(h.now);
        h.run(&mut silent);
        assert!(!listed(&h), "at {ms} ms");
    }
    h.now = Instant::ZERO.saturating_add(Duration::from_secs(2));
    h.http.handle_timeout(h.now);
    h.run(&mut silent);
    assert!(listed(&h));
    assert_eq!(h.outcome(list).unwrap().tools().len(), 1);
    assert!(h.events.is_empty(), "{:?}", h.events);
}

#[test]
fn a_second_404_in_a_row_fails_instead_of_looping() {
    let mut server = LegacyServer::new();
    let mut h = legacy_connected(&mut server);
    server.expire = 5;
    let op = call(&mut h);
    h.run(&mut |r| server.reply(r));
    assert_eq!(
        h.outcome(op),
        Err(Error::Http(HttpError::SessionRenewalFailed))
    );
    assert!(h.http.client().is_failed());
    let initializes = h.methods().iter().filter(|m| *m == "initialize").count();
    assert_eq!(initializes, 2, "one renewal, no more");
}

#[test]
fn requests_the_old_session_took_fail_and_are_never_replayed() {
    let mut server = LegacyServer::new();
    let mut h = legacy_connected(&mut server);
    // The first call is taken and left unanswered; the second finds the session gone.
    let first = call(&mut h);
    h.run(&mut |_| None);
    server.expire = 1;
    let second = call(&mut h);
    h.run(&mut |r| server.reply(r));
    assert_eq!(h.outcome(first), Err(Error::Http(HttpError::SessionEnded)));
    assert_eq!(h.outcome(second).unwrap().text(), "4");
    let calls = h.methods().iter().filter(|m| *m == "tools/call").count();
    assert_eq!(calls, 3, "first once, second twice");
    let first_call = h
        .log
        .iter()
        .find(|r| rpc_method(r) == "tools/call")
        .unwrap();
    assert!(
        h.aborted.contains(&first_call.exchange),
        "the first's stream is dropped"
    );
}

#[test]
fn statuses_without_a_jsonrpc_body_are_typed_and_the_status_table_reads_as_rpc_errors() {
    for (status, body, expected) in [
        (401, json!("no"), Error::Http(HttpError::Unauthorized(None))),
        (403, json!({}), Error::Http(HttpError::Forbidden(None))),
        (
            307,
            json!(null),
            Error::Http(HttpError::Redirected { status: 307 }),
        ),
        (
            500,
            json!([1]),
            Error::Http(HttpError::Status { status: 500 }),
        ),
    ] {
        let mut h = Harness::new(config(ProtocolChoice::Stateless));
        let connect = h.http.client_mut().connect(h.now).unwrap();
        h.run(&mut |_| Some(json_reply(status, body.clone())));
        assert_eq!(h.outcome(connect).unwrap_err(), expected, "status {status}");
    }
    // 400 with -32602 and 404 with -32601 read as the JSON-RPC errors they carry.
    let mut h = Harness::new(config(ProtocolChoice::Stateless));
    let connect = h.http.client_mut().connect(h.now).unwrap();
    h.run(&mut modern_server);
    h.outcome(connect).unwrap();
    let list = h.http.client_mut().list_tools(h.now).unwrap();
    h.run(&mut |r| {
        let id = body(r)["id"].clone();
        Some(json_reply(
            400,
            json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32602, "message": "missing _meta key"}}),
        ))
    });
    let Err(Error::Rpc(error)) = h.outcome(list) else {
        panic!()
    };
    assert_eq!(error.code.0, -32602);
}

#[test]
fn a_reply_of_another_type_or_too_long_fails_its_request() {
    let mut limits = Limits::default();
    limits.frame_bytes = 512;
    for (reply, expected) in [
        (
            Reply {
                content_type: Some("text/html"),
                ..json_reply(200, json!({}))
            },
            Error::Http(HttpError::ContentType),
        ),
        (accepted(), Error::Http(HttpError::NoAnswer)),
        (
            json_reply(200, json!({"pad": "x".repeat(600)})),
            Error::Protocol(ProtocolViolation::FrameTooLong { limit: 512 }),
        ),
        (
            sse_reply(&format!("data: {}\n\n", "x".repeat(600))),
            Error::Protocol(ProtocolViolation::FrameTooLong { limit: 512 }),
        ),
    ] {
        let mut config = config(ProtocolChoice::Stateless);
        config.limits = limits;
        let mut h = Harness::new(config);
        let connect = h.http.client_mut().connect(h.now).unwrap();
        h.run(&mut |_| Some(reply.clone()));
        assert_eq!(h.outcome(connect).unwrap_err(), expected);
        assert_eq!(h.http.open_exchanges(), 0);
    }
}

#[test]
fn a_session_id_that_is_not_visible_ascii_fails_the_connection() {
    for bad in ["has space", "", "é"] {
        let mut server = LegacyServer::new();
        let mut h = Harness::new(config(ProtocolChoice::Stateful));
        let connect = h.http.client_mut().connect(h.now).unwrap();
        h.run(&mut |r| {
            let mut reply = server.reply(r)?;
            reply.session = reply.session.map(|_| bad.to_owned());
            Some(reply)
        });
        assert_eq!(
            h.outcome(connect),
            Err(Error::Http(HttpError::InvalidSessionId)),
            "{bad:?}"
        );
    }
}

/// A 2026-07-28 session, connected and its tools listed.
fn modern_listed(config: Config) -> Harness {
    let mut h = Harness::new(config);
    let connect = h.http.client_mut().connect(h.now).unwrap();
    h.run(&mut modern_server);
    h.outcome(connect).unwrap();
    let list = h.http.client_mut().list_tools(h.now).unwrap();
    h.run(&mut modern_server);
    h.outcome(list).unwrap();
    h.log.clear();
    h
}

/// A reply stream that breaks after a priming event, before any answer.
fn breaking(_: &HttpRequest) -> Option<Reply> {
    let mut reply = sse_reply("id: 1\ndata:\n\n");
    reply.broken = true;
    Some(reply)
}

/// The modern server, but its first reply breaks as [`breaking`] does.
fn breaking_once() -> impl FnMut(&HttpRequest) -> Option<Reply> {
    let mut replies = 0;
    move |r| {
        replies += 1;
        if replies == 1 {
            breaking(r)
        } else {
            modern_server(r)
        }
    }
}

/// Each request's id, and its body without it.
fn ids_and_rest(log: &[HttpRequest]) -> (Vec<i64>, Vec<Value>) {
    log.iter()
        .map(|r| {
            let mut message = body(r);
            let id = message["id"].as_i64().unwrap();
            message.as_object_mut().unwrap().remove("id");
            (id, message)
        })
        .unzip()
}

#[test]
fn a_broken_stateless_stream_sends_its_request_again_under_a_new_id() {
    let mut h = modern_listed(config(ProtocolChoice::Stateless));
    let list = h.http.client_mut().list_tools(h.now).unwrap();
    h.run(&mut breaking_once());
    assert_eq!(h.outcome(list).unwrap().tools().len(), 1);
    assert_eq!(h.methods(), ["tools/list", "tools/list"]);
    // The same request, headers and all, under a new id: the old one is not reused.
    let (ids, rest) = ids_and_rest(&h.log);
    assert_ne!(ids[0], ids[1]);
    assert_eq!(rest[0], rest[1]);
    assert_eq!(h.log[0].headers, h.log[1].headers);
    assert_eq!(h.http.open_exchanges(), 0);
    assert_eq!(h.http.client().in_flight(), 0);
}

#[test]
fn sending_again_is_bounded_and_keeps_the_operations_deadline() {
    let mut h = modern_listed(config(ProtocolChoice::Stateless));
    let list = h.http.client_mut().list_tools(h.now).unwrap();
    h.run(&mut breaking);
    assert_eq!(h.outcome(list), Err(Error::Http(HttpError::StreamBroken)));
    let sent = Limits::default().stream_resumes + 1;
    assert_eq!(h.methods(), vec!["tools/list"; sent]);
    let (ids, _) = ids_and_rest(&h.log);
    let mut distinct = ids.clone();
    distinct.sort_unstable();
    distinct.dedup();
    assert_eq!(distinct.len(), sent, "a new id each time: {ids:?}");
    assert_eq!(h.http.client().in_flight(), 0);

    // A stream that breaks once the deadline has passed is not sent again.
    h.log.clear();
    let list = h.http.client_mut().list_tools(h.now).unwrap();
    h.run(&mut |_| None);
    let exchange = h.log[0].exchange;
    h.now = h.now.saturating_add(Duration::from_secs(10));
    h.http.handle_broken(exchange, h.now);
    h.run(&mut |_| panic!("nothing is sent after the deadline"));
    assert!(matches!(h.outcome(list), Err(Error::Timeout { .. })));
}

/// The head of a reply that is an event stream, its events to come.
const EVENT_STREAM: ReplyHead<'static> = ReplyHead {
    status: 200,
    content_type: Some("text/event-stream"),
    session_id: None,
    www_authenticate: None,
};

/// Listens for tool changes; the stream opens and brings the acknowledgement. Returns the
/// op, the exchange and the subscription's id.
fn subscribed(h: &mut Harness) -> (Op<SubscriptionEnded>, ExchangeId, i64) {
    let op = h
        .http
        .client_mut()
        .listen(&Subscription::tools(), h.now)
        .unwrap();
    h.run(&mut |_| None);
    let request = h.log.last().unwrap().clone();
    assert_eq!(rpc_method(&request), "subscriptions/listen");
    assert!(
        request.lasting,
        "a subscription's stream is bounded by the session alone"
    );
    assert_eq!(request.header("Mcp-Method"), Some("subscriptions/listen"));
    let id = body(&request)["id"].as_i64().unwrap();
    h.http.handle_head(request.exchange, EVENT_STREAM, h.now);
    let ack = json!({"jsonrpc": "2.0", "method": "notifications/subscriptions/acknowledged",
        "params": {"notifications": {"toolsListChanged": true},
                   "_meta": {"io.modelcontextprotocol/subscriptionId": id}}});
    h.http.handle_body(
        request.exchange,
        format!("data: {ack}\n\n").as_bytes(),
        h.now,
    );
    h.run(&mut |_| None);
    assert!(h
        .events
        .iter()
        .any(|e| matches!(e, Event::Subscribed { op: o, .. } if *o == op.id())));
    (op, request.exchange, id)
}

#[test]
fn a_subscription_s_stream_lasts_until_cancelled_or_lost_and_is_never_sent_again() {
    let mut h = modern_listed(config(ProtocolChoice::Stateless));
    let (op, exchange, id) = subscribed(&mut h);
    // A day later it stands, and its changes come on its stream while a call goes and comes.
    assert_eq!(h.http.poll_timeout(), None);
    h.now = h.now.saturating_add(Duration::from_secs(24 * 60 * 60));
    h.http.handle_timeout(h.now);
    let call = h
        .http
        .client_mut()
        .call_tool("get_weather", &RawObject::empty(), h.now)
        .unwrap();
    h.run(&mut modern_server);
    assert_eq!(h.outcome(call).unwrap().text(), "sunny");
    let change = json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed",
        "params": {"_meta": {"io.modelcontextprotocol/subscriptionId": id}}});
    h.http
        .handle_body(exchange, format!("data: {change}\n\n").as_bytes(), h.now);
    h.run(&mut |_| None);
    assert!(h
        .events
        .contains(&Event::Notification(ServerNotification::ListChanged(
            ListKind::Tools
        ))));
    assert!(h.aborted.is_empty(), "nothing was dropped: {:?}", h.aborted);
    assert_eq!(h.http.open_exchanges(), 1);

    // Cancelled: the stream is dropped, and that is the whole cancel.
    h.http.client_mut().cancel(op).unwrap();
    h.log.clear();
    h.run(&mut |_| panic!("nothing is posted"));
    assert_eq!(h.aborted, [exchange]);
    assert_eq!(h.outcome(op), Err(Error::Cancelled));
    assert_eq!(h.http.open_exchanges(), 0);

    // Lost: a stream that breaks ends its subscription, and no new one is made behind the
    // application's back.
    let (op, exchange, _) = subscribed(&mut h);
    h.log.clear();
    h.http.handle_broken(exchange, h.now);
    h.run(&mut |_| panic!("nothing is sent again"));
    assert_eq!(h.outcome(op), Err(Error::Http(HttpError::StreamBroken)));

    // Ended by the server: its result comes on the stream, which then ends.
    let (op, exchange, id) = subscribed(&mut h);
    let end = json!({"jsonrpc": "2.0", "id": id, "result": {"resultType": "complete"}});
    h.http
        .handle_body(exchange, format!("data: {end}\n\n").as_bytes(), h.now);
    h.run(&mut |_| None);
    assert_eq!(h.outcome(op), Ok(SubscriptionEnded));
    assert_eq!(h.http.client().in_flight(), 0);
}

#[test]
fn an_error_status_whose_body_breaks_ends_the_request_by_its_status() {
    let mut h = modern_listed(config(ProtocolChoice::Stateless));
    let list = h.http.client_mut().list_tools(h.now).unwrap();
    h.run(&mut |_| {
        let mut reply = json_reply(401, json!({"error": "unauthor"}));
        reply.body.truncate(12);
        reply.broken = true;
        Some(reply)
    });
    assert_eq!(
        h.outcome(list),
        Err(Error::Http(HttpError::Unauthorized(None)))
    );
    assert_eq!(h.methods(), ["tools/list"], "not sent again");
}

#[test]
fn a_tool_call_is_sent_again_only_when_the_application_says_so() {
    let weather =
        || RawObject::parse(r#"{"region": "north", "city": "Oslo"}"#, &Limits::default()).unwrap();
    // By default: it may have run, so it fails, and is posted once.
    let mut h = modern_listed(config(ProtocolChoice::Stateless));
    let op = h
        .http
        .client_mut()
        .call_tool("get_weather", &weather(), h.now)
        .unwrap();
    h.run(&mut breaking);
    assert_eq!(h.outcome(op), Err(Error::Http(HttpError::StreamBroken)));
    assert_eq!(h.methods(), ["tools/call"]);

    // Allowed: posted again under a new id, with the same routing headers.
    let mut allowing = config(ProtocolChoice::Stateless);
    allowing.reissue_broken_calls = true;
    let mut h = modern_listed(allowing);
    let op = h
        .http
        .client_mut()
        .call_tool("get_weather", &weather(), h.now)
        .unwrap();
    h.run(&mut breaking_once());
    assert_eq!(h.outcome(op).unwrap().text(), "sunny");
    assert_eq!(h.methods(), ["tools/call", "tools/call"]);
    assert_eq!(h.log[0].headers, h.log[1].headers);
    assert_eq!(h.log[1].header("Mcp-Param-Region"), Some("north"));
    let (ids, rest) = ids_and_rest(&h.log);
    assert!(ids[0] != ids[1] && rest[0] == rest[1]);
}

#[test]
fn a_broken_legacy_stream_is_resumed_from_its_last_event_after_its_retry_time() {
    let mut server = LegacyServer::new();
    let mut h = legacy_connected(&mut server);
    let op = call(&mut h);
    let mut answered = None;
    h.run(&mut |r| {
        if r.method == HttpMethod::Get {
            return None;
        }
        let mut reply = sse_reply("retry: 1500\nid: ev-7\ndata:\n\n");
        reply.broken = true;
        answered = Some(body(r)["id"].clone());
        Some(reply)
    });
    assert_eq!(h.methods().last().map(String::as_str), Some("tools/call"));
    assert_eq!(h.http.poll_timeout(), Some(Instant::from_millis(1500)));
    h.now = Instant::from_millis(1500);
    h.http.handle_timeout(h.now);
    let id = answered.unwrap();
    h.run(&mut |r| {
        assert_eq!(r.method, HttpMethod::Get);
        assert_eq!(r.header("Last-Event-ID"), Some("ev-7"));
        assert_eq!(r.header("Accept"), Some("text/event-stream"));
        assert_eq!(r.header("Mcp-Session-Id"), Some("session-1"));
        Some(sse_reply(&format!(
            "id: ev-8\ndata: {}\n\n",
            result(
                &id,
                json!({"content": [{"type": "text", "text": "resumed"}]})
            )
        )))
    });
    assert_eq!(h.outcome(op).unwrap().text(), "resumed");
}

#[test]
fn resuming_is_bounded() {
    let mut server = LegacyServer::new();
    let mut h = legacy_connected(&mut server);
    let op = call(&mut h);
    let breaking = |_: &HttpRequest| {
        let mut reply = sse_reply("id: again\ndata:\n\n");
        reply.broken = true;
        Some(reply)
    };
    h.run(&mut { breaking });
    for _ in 0..10 {
        h.now = h.http.poll_timeout().unwrap_or(h.now);
        h.http.handle_timeout(h.now);
        h.run(&mut { breaking });
    }
    assert_eq!(h.outcome(op), Err(Error::Http(HttpError::StreamBroken)));
    let resumes = h
        .log
        .iter()
        .filter(|r| r.header("Last-Event-ID").is_some())
        .count();
    assert_eq!(resumes, Limits::default().stream_resumes);
}

#[test]
fn a_deadline_aborts_the_stream_and_only_a_legacy_session_posts_a_cancel() {
    // Stateless: the stream is dropped, nothing is posted.
    let mut h = Harness::new(config(ProtocolChoice::Stateless));
    let connect = h.http.client_mut().connect(h.now).unwrap();
    h.run(&mut modern_server);
    h.outcome(connect).unwrap();
    let list = h.http.client_mut().list_tools(h.now).unwrap();
    h.run(&mut |_| None);
    let exchange = h.log[1].exchange;
    h.now = h.http.poll_timeout().unwrap();
    h.http.handle_timeout(h.now);
    h.run(&mut |_| panic!("nothing is posted"));
    assert!(matches!(h.outcome(list), Err(Error::Timeout { .. })));
    assert!(h.aborted.contains(&exchange));

    // Legacy: the stream is dropped and notifications/cancelled posted.
    let mut server = LegacyServer::new();
    let mut h = legacy_connected(&mut server);
    let op = call(&mut h);
    h.run(&mut |_| None);
    let exchange = h.log.last().unwrap().exchange;
    h.now = h.http.poll_timeout().unwrap();
    h.http.handle_timeout(h.now);
    h.run(&mut |r| server.reply(r));
    assert!(matches!(h.outcome(op), Err(Error::Timeout { .. })));
    assert!(h.aborted.contains(&exchange));
    assert_eq!(
        h.methods().last().map(String::as_str),
        Some("notifications/cancelled")
    );
}

#[test]
fn a_server_request_on_a_legacy_stream_is_answered_by_a_post() {
    let mut server = LegacyServer::new();
    let mut h = legacy_connected(&mut server);
    let op = call(&mut h);
    h.run(&mut |r| {
        if rpc_method(r) != "tools/call" {
            return server.reply(r);
        }
        let id = body(r)["id"].clone();
        Some(sse_reply(&format!(
            "data: {}\n\ndata: {}\n\n",
            json!({"jsonrpc": "2.0", "id": "srv-1", "method": "ping"}),
            result(&id, json!({"content": []}))
        )))
    });
    h.outcome(op).unwrap();
    let answer = h.log.last().unwrap();
    assert_eq!(
        body(answer),
        json!({"jsonrpc": "2.0", "id": "srv-1", "result": {}})
    );
    assert_eq!(answer.header("Mcp-Session-Id"), Some("session-1"));
}

#[test]
fn nothing_else_is_posted_before_the_server_takes_notifications_initialized() {
    let mut server = LegacyServer::new();
    let mut h = Harness::new(config(ProtocolChoice::Stateful));
    let connect = h.http.client_mut().connect(h.now).unwrap();
    // The server holds the notification's reply back.
    h.run(&mut |r| {
        if rpc_method(r) == "notifications/initialized" {
            return None;
        }
        server.reply(r)
    });
    h.outcome(connect).unwrap();
    let list = h.http.client_mut().list_tools(h.now).unwrap();
    h.run(&mut |r| panic!("{} went out first", rpc_method(r)));
    assert_eq!(h.methods(), ["initialize", "notifications/initialized"]);
    let opening = h.log[1].exchange;
    h.feed(opening, &accepted());
    h.run(&mut |r| server.reply(r));
    h.outcome(list).unwrap();
    assert_eq!(h.methods().last().map(String::as_str), Some("tools/list"));
}

proptest::proptest! {
    #![proptest_config(proptest::test_runner::Config::with_cases(512))]

    /// The fuzz body on stable: any replies, in any order, never panic, every operation ends
    /// once, and nothing is left open at the end.
    #[test]
    fn any_replies_in_any_order_leave_nothing_open(
        data in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..2048)
    ) {
        mcp_sansio::fuzzing::http_session(&data);
    }
}

#[test]
fn the_get_stream_brings_what_belongs_to_no_request_and_is_asked_for_within_bounds() {
    use mcp_sansio::{ListKind, ServerNotification};
    // A server that offers none (405) is not asked again.
    let mut server = LegacyServer::new();
    let mut h = legacy_connected(&mut server);
    let op = call(&mut h);
    h.run(&mut |r| server.reply(r));
    h.outcome(op).unwrap();
    let gets = |h: &Harness| h.log.iter().filter(|r| r.method == HttpMethod::Get).count();
    assert_eq!(gets(&h), 1);
    assert_eq!(h.http.open_exchanges(), 0);

    // One that sends a list_changed on it, then ends the stream each time.
    let mut server = LegacyServer::new();
    server.listen = Some(String::from(
        "retry: 500\nid: g-1\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/tools/list_changed\"}\n\n",
    ));
    let mut h = legacy_connected(&mut server);
    assert!(
        h.events
            .contains(&Event::Notification(ServerNotification::ListChanged(
                ListKind::Tools
            ))),
        "{:?}",
        h.events
    );
    let get = h.log.iter().find(|r| r.method == HttpMethod::Get).unwrap();
    assert_eq!(get.header("Accept"), Some("text/event-stream"));
    assert_eq!(get.header("Mcp-Session-Id"), Some("session-1"));
    assert_eq!(get.header("Last-Event-ID"), None);
    // Asked for again after its retry time, resuming from its last event.
    assert_eq!(h.http.poll_timeout(), Some(Instant::from_millis(500)));
    h.now = Instant::from_millis(500);
    h.http.handle_timeout(h.now);
    h.run(&mut |r| server.reply(r));
    let last = h.log.last().unwrap();
    assert_eq!(last.method, HttpMethod::Get);
    assert_eq!(last.header("Last-Event-ID"), Some("g-1"));

    // A stream that ends without an event is asked for again at most stream_resumes times.
    server.listen = Some(String::from(": nothing\n\n"));
    for _ in 0..10 {
        if let Some(at) = h.http.poll_timeout() {
            h.now = at;
        }
        h.http.handle_timeout(h.now);
        h.run(&mut |r| server.reply(r));
    }
    assert_eq!(gets(&h), 2 + Limits::default().stream_resumes);
    assert_eq!(h.http.poll_timeout(), None);
}

#[test]
fn answers_a_server_does_not_take_open_a_bounded_number_of_exchanges_and_the_rest_wait() {
    // The GET stream brings 300 pings; the server holds each answer's POST open.
    let mut server = LegacyServer::new();
    let pings: String = (0..300)
        .map(|n| {
            let ping = json!({"jsonrpc": "2.0", "id": format!("p{n}"), "method": "ping"});
            format!("data: {ping}\n\n")
        })
        .collect();
    server.listen = Some(pings);
    let mut config = config(ProtocolChoice::Stateful);
    config.limits.requests_in_flight = 4;
    let mut h = Harness::new(config);
    let connect = h.http.client_mut().connect(h.now).unwrap();
    let is_answer =
        |r: &HttpRequest| r.method == HttpMethod::Post && body(r).get("result").is_some();
    h.run(&mut |r| if is_answer(r) { None } else { server.reply(r) });
    h.outcome(connect).unwrap();
    let answers = |h: &Harness| -> Vec<ExchangeId> {
        h.log
            .iter()
            .filter(|r| is_answer(r))
            .map(|r| r.exchange)
            .collect()
    };
    // Twice the requests in flight; the other answers wait in the client (under its
    // unsent bound, which 300 small answers do not reach).
    let open = answers(&h);
    assert_eq!(open.len(), 8);
    assert!(!h.http.client().is_failed());
    // As the server ends them, as many more go out.
    for exchange in open {
        h.feed(exchange, &accepted());
    }
    h.run(&mut |r| if is_answer(r) { None } else { server.reply(r) });
    assert_eq!(answers(&h).len(), 16);
}

#[test]
fn a_table_of_no_requests_still_lets_the_handshake_out() {
    // No calls may wait at once, but the session's own messages still go out, one exchange
    // at a time.
    let mut server = LegacyServer::new();
    let mut config = config(ProtocolChoice::Stateful);
    config.limits.requests_in_flight = 0;
    let mut h = Harness::new(config);
    let connect = h.http.client_mut().connect(h.now).unwrap();
    h.run(&mut |r| server.reply(r));
    assert_eq!(h.outcome(connect).unwrap().version.as_str(), "2025-11-25");
}

// ---- the 2024-11-05 transport (HTTP with server-sent events) ------------------------------

/// A server of the 2024-11-05 transport, as the TypeScript SDK serves one: a POST to its URL
/// gets 404; a `GET` there opens the event stream, whose first event names the message
/// endpoint; each message POSTed there gets 202, and its answer comes on the stream.
struct OldServer {
    /// What the `endpoint` event says.
    endpoint: String,
    stream: Option<ExchangeId>,
    /// Stream bytes the session has not been given yet.
    pending: String,
    /// The messages POSTed to the endpoint, in order.
    posted: Vec<Value>,
}

impl OldServer {
    fn new(endpoint: &str) -> Self {
        OldServer {
            endpoint: endpoint.to_owned(),
            stream: None,
            pending: String::new(),
            posted: Vec::new(),
        }
    }

    fn send(&mut self, message: &Value) {
        self.pending
            .push_str(&format!("event: message\ndata: {message}\n\n"));
    }

    /// What the server does with `request`: the reply to give at once, if any.
    fn take(&mut self, request: &HttpRequest) -> Option<Reply> {
        match (request.method, request.path.as_deref()) {
            (HttpMethod::Get, None) => {
                assert!(request.lasting, "the event stream lasts the session");
                assert_eq!(request.header("Accept"), Some("text/event-stream"));
                self.stream = Some(request.exchange);
                self.pending.push_str(&format!(
                    ": opened\nevent: endpoint\ndata: {}\n\n",
                    self.endpoint
                ));
                None
            }
            (HttpMethod::Post, None) => Some(Reply {
                status: 404,
                content_type: Some("text/html"),
                body: b"Cannot POST /sse".to_vec(),
                ..accepted()
            }),
            (HttpMethod::Post, Some(_)) => {
                assert!(!request.lasting);
                assert_eq!(request.header("Mcp-Session-Id"), None);
                let message = body(request);
                let id = message["id"].clone();
                let answer = match message["method"].as_str() {
                    Some("initialize") => Some(json!({"protocolVersion": "2025-11-25",
                        "capabilities": {"tools": {}}, "serverInfo": {"name": "old", "version": "1"}})),
                    Some("tools/list") => Some(
                        json!({"tools": [{"name": "word_count", "inputSchema": {"type": "object"}}]}),
                    ),
                    Some("tools/call") => Some(json!({"content": [{"type": "text", "text": "4"}]})),
                    _ => None,
                };
                if let Some(answer) = answer {
                    self.send(&result(&id, answer));
                }
                self.posted.push(message);
                Some(accepted())
            }
            other => panic!("unexpected {other:?}"),
        }
    }
}

/// Performs every request and delivers the stream's bytes until nothing moves.
fn run_old(h: &mut Harness, server: &mut OldServer) {
    loop {
        while let Some(abort) = h.http.poll_abort() {
            h.aborted.push(abort);
        }
        h.events.extend(std::iter::from_fn(|| h.http.poll_event()));
        if let Some(request) = h.http.poll_request() {
            h.log.push(request.clone());
            match server.take(&request) {
                Some(reply) => h.feed(request.exchange, &reply),
                None => h.http.handle_head(request.exchange, EVENT_STREAM, h.now),
            }
            continue;
        }
        let (Some(stream), false) = (server.stream, server.pending.is_empty()) else {
            return;
        };
        let bytes = std::mem::take(&mut server.pending);
        for piece in bytes.as_bytes().chunks(5) {
            h.http.handle_body(stream, piece, h.now);
        }
    }
}

fn old_connected(server: &mut OldServer, url: Option<&str>) -> Harness {
    let mut h = Harness::new(config(ProtocolChoice::Auto));
    if let Some(url) = url {
        h.http = HttpSession::new(config(ProtocolChoice::Auto)).with_url(url);
    }
    let connect = h.http.client_mut().connect(h.now).unwrap();
    run_old(&mut h, server);
    assert_eq!(h.outcome(connect).unwrap().version.as_str(), "2025-11-25");
    let list = h.http.client_mut().list_tools(h.now).unwrap();
    run_old(&mut h, server);
    h.outcome(list).unwrap();
    h
}

#[test]
fn a_server_of_the_2024_11_05_transport_is_reached_through_its_event_stream() {
    let mut server = OldServer::new("/message?sessionId=ab-1");
    let mut h = old_connected(&mut server, None);
    let op = call(&mut h);
    run_old(&mut h, &mut server);
    assert_eq!(h.outcome(op).unwrap().text(), "4");
    // The server's ping on the stream is answered by a POST to the endpoint.
    server.send(&json!({"jsonrpc": "2.0", "id": "p1", "method": "ping"}));
    run_old(&mut h, &mut server);
    assert_eq!(
        h.methods(),
        [
            "server/discover",
            "initialize",
            "GET",
            "initialize",
            "notifications/initialized",
            "tools/list",
            "tools/call",
            ""
        ]
    );
    assert_eq!(server.posted.last().unwrap()["id"], "p1");
    assert_eq!(server.posted.last().unwrap()["result"], json!({}));
    // The URL's own requests carry no path; every message after the stream opened goes to
    // the endpoint, the refused initialize among them, under its first id.
    let paths: Vec<Option<&str>> = h.log.iter().map(|r| r.path.as_deref()).collect();
    assert_eq!(paths[..3], [None, None, None]);
    assert!(paths[3..]
        .iter()
        .all(|p| *p == Some("/message?sessionId=ab-1")));
    assert_eq!(body(&h.log[1]), body(&h.log[3]));
    assert!(h
        .log
        .iter()
        .all(|r| r.lasting == (r.method == HttpMethod::Get)));
    // Closing drops the stream; there is no session id to DELETE.
    assert_eq!(h.http.open_exchanges(), 1);
    assert!(h.http.close().is_none());
    assert_eq!(h.http.poll_abort(), server.stream);
    assert_eq!(h.http.open_exchanges(), 0);
}

#[test]
fn a_message_endpoint_is_followed_only_on_the_session_s_own_origin() {
    let url = "http://127.0.0.1:3001/sse";
    // A Go server names a whole URL; on the same origin it is followed as its path.
    let mut server = OldServer::new("http://127.0.0.1:3001/message?sessionId=go");
    let h = old_connected(&mut server, Some(url));
    assert_eq!(
        h.log.last().unwrap().path.as_deref(),
        Some("/message?sessionId=go")
    );
    for (endpoint, url) in [
        ("http://evil.example/message?sessionId=1", Some(url)),
        ("http://127.0.0.1:3002/message", Some(url)),
        ("//evil.example/message", Some(url)),
        // Without the URL only a path is followed.
        ("http://127.0.0.1:3001/message", None),
        ("/message?sessionId=a b", Some(url)),
        ("", Some(url)),
    ] {
        let mut server = OldServer::new(endpoint);
        let mut h = Harness::new(config(ProtocolChoice::Stateful));
        if let Some(url) = url {
            h.http = HttpSession::new(config(ProtocolChoice::Stateful)).with_url(url);
        }
        let connect = h.http.client_mut().connect(h.now).unwrap();
        run_old(&mut h, &mut server);
        assert_eq!(
            h.outcome(connect).unwrap_err(),
            Error::Http(HttpError::MessageEndpoint),
            "{endpoint:?}"
        );
        // Nothing was sent to it, and the stream was dropped.
        assert_eq!(h.methods(), ["initialize", "GET"], "{endpoint:?}");
        assert!(server.posted.is_empty());
        assert_eq!(h.aborted, [server.stream.unwrap()]);
    }
}

#[test]
fn when_the_event_stream_ends_every_waiting_request_fails_and_so_does_the_connection() {
    let mut server = OldServer::new("/messages/?session_id=f00d");
    let mut h = old_connected(&mut server, None);
    // Taken (202), never answered: the call waits on the stream, within its deadline.
    let op = call(&mut h);
    server.endpoint.clear();
    let posted = h.http.poll_request().unwrap();
    h.feed(posted.exchange, &accepted());
    assert!(h.http.client().is_pending(op));
    h.http.handle_end(server.stream.unwrap(), h.now);
    h.events.extend(std::iter::from_fn(|| h.http.poll_event()));
    assert_eq!(
        h.outcome(op).unwrap_err(),
        Error::Http(HttpError::EventStreamEnded)
    );
    assert!(h.http.client_mut().list_tools(h.now).is_err());

    // A call past its deadline fails by it; the stream stays.
    let mut server = OldServer::new("/m");
    let mut h = old_connected(&mut server, None);
    let op = call(&mut h);
    let posted = h.http.poll_request().unwrap();
    h.feed(posted.exchange, &accepted());
    h.now = h.http.poll_timeout().unwrap();
    h.http.handle_timeout(h.now);
    run_old(&mut h, &mut server);
    assert!(matches!(h.outcome(op), Err(Error::Timeout { .. })));
    assert!(!h.aborted.contains(&server.stream.unwrap()));

    // A message longer than the frame limit fails the connection and drops the stream.
    let mut limits = Limits::default();
    limits.frame_bytes = 256;
    let mut server = OldServer::new("/m");
    let mut small = config(ProtocolChoice::Stateful);
    small.limits = limits;
    let mut h = Harness::new(small);
    let connect = h.http.client_mut().connect(h.now).unwrap();
    run_old(&mut h, &mut server);
    h.outcome(connect).unwrap();
    let list = h.http.client_mut().list_tools(h.now).unwrap();
    run_old(&mut h, &mut server);
    h.outcome(list).unwrap();
    let op = call(&mut h);
    let posted = h.http.poll_request().unwrap();
    h.feed(posted.exchange, &accepted());
    server.send(&json!({"jsonrpc": "2.0", "method": "notifications/message", "params": {"data": "x".repeat(300)}}));
    run_old(&mut h, &mut server);
    assert_eq!(
        h.outcome(op).unwrap_err(),
        Error::Protocol(ProtocolViolation::FrameTooLong { limit: 256 })
    );
    assert!(h.aborted.contains(&server.stream.unwrap()));

    // A stream that never names its endpoint: the handshake fails at its deadline, and the
    // stream, which would last the session, is dropped with it.
    let mut h = Harness::new(config(ProtocolChoice::Stateful));
    let connect = h.http.client_mut().connect(h.now).unwrap();
    let mut stream = None;
    h.run(&mut |r| match r.method {
        HttpMethod::Get => {
            stream = Some(r.exchange);
            None
        }
        _ => Some(json_reply(405, json!(null))),
    });
    h.now = h.http.poll_timeout().unwrap();
    h.http.handle_timeout(h.now);
    h.run(&mut |r| panic!("{r:?} sent after the deadline"));
    assert!(matches!(h.outcome(connect), Err(Error::Timeout { .. })));
    assert_eq!(h.aborted, [stream.unwrap()]);
    assert_eq!(h.http.open_exchanges(), 0);
}

#[test]
fn the_event_stream_is_asked_for_only_when_the_initialize_post_is_refused_as_by_an_old_server() {
    // A 400, 404 or 405 without a JSON-RPC error: the stream is asked for; refused too,
    // the handshake fails by the POST's status.
    for status in [400, 404, 405] {
        let mut h = Harness::new(config(ProtocolChoice::Stateful));
        let connect = h.http.client_mut().connect(h.now).unwrap();
        h.run(&mut |r| {
            Some(match r.method {
                HttpMethod::Get => json_reply(405, json!("no")),
                _ => json_reply(status, json!({"detail": "Method Not Allowed"})),
            })
        });
        assert_eq!(
            h.outcome(connect).unwrap_err(),
            Error::Http(HttpError::Status { status })
        );
        assert_eq!(h.methods(), ["initialize", "GET"]);
        // A stream of another type is no event stream either.
        let mut h = Harness::new(config(ProtocolChoice::Stateful));
        let connect = h.http.client_mut().connect(h.now).unwrap();
        h.run(&mut |r| {
            Some(match r.method {
                HttpMethod::Get => json_reply(200, json!({})),
                _ => json_reply(status, json!(null)),
            })
        });
        assert_eq!(
            h.outcome(connect).unwrap_err(),
            Error::Http(HttpError::Status { status })
        );
    }
    // Any other status, or a JSON-RPC error in the body, is the answer: no stream.
    for reply in [
        json_reply(500, json!("oops")),
        json_reply(403, json!("no")),
        json_reply(
            404,
            json!({"jsonrpc": "2.0", "id": 0, "error": {"code": -32601, "message": "nope"}}),
        ),
    ] {
        let mut h = Harness::new(config(ProtocolChoice::Stateful));
        let connect = h.http.client_mut().connect(h.now).unwrap();
        h.run(&mut |_| Some(reply.clone()));
        assert!(h.outcome(connect).is_err());
        assert_eq!(h.methods(), ["initialize"]);
    }
    // The stream is asked for once: the initialize sent again over it, refused, is final.
    let mut h = Harness::new(config(ProtocolChoice::Stateful));
    let connect = h.http.client_mut().connect(h.now).unwrap();
    let mut stream = None;
    h.run(&mut |r| match (r.method, &r.path) {
        (HttpMethod::Get, _) => {
            stream = Some(r.exchange);
            None
        }
        _ => Some(json_reply(404, json!(null))),
    });
    let stream = stream.unwrap();
    let head = ReplyHead {
        status: 200,
        content_type: Some("text/event-stream"),
        session_id: None,
        www_authenticate: None,
    };
    h.http.handle_head(stream, head, h.now);
    h.http
        .handle_body(stream, b"event: endpoint\ndata: /m\n\n", h.now);
    h.run(&mut |_| Some(json_reply(404, json!(null))));
    assert_eq!(
        h.outcome(connect).unwrap_err(),
        Error::Http(HttpError::Status { status: 404 })
    );
    assert_eq!(h.methods(), ["initialize", "GET", "initialize"]);
}

/// A legacy server behind a bearer token: `accepted` passes, `scoped_down` gets 403 with
/// `insufficient_scope` on a tool call, anything else 401 with a challenge and, as some
/// servers do, a JSON-RPC error in the body.
fn guarded<'s>(
    server: &'s mut LegacyServer,
    accepted: &'s str,
    scoped_down: &'s str,
) -> impl FnMut(&HttpRequest) -> Option<Reply> + 's {
    move |request| {
        let given = request.header("authorization").unwrap_or("");
        if given == format!("Bearer {scoped_down}") && rpc_method(request) == "tools/call" {
            let mut reply = json_reply(403, json!({"error": "insufficient_scope"}));
            reply.challenge = Some(
                r#"Bearer error="insufficient_scope", scope="words:count words:read", resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource""#,
            );
            return Some(reply);
        }
        if given != format!("Bearer {accepted}") {
            let mut reply = json_reply(
                401,
                json!({"jsonrpc": "2.0", "id": body(request)["id"].clone(),
                       "error": {"code": -32001, "message": "unauthorized"}}),
            );
            reply.challenge = Some(
                r#"Basic realm="old", Bearer error="invalid_token", resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource", scope="words:read""#,
            );
            return Some(reply);
        }
        server.reply(request)
    }
}

#[test]
fn a_401_says_where_authorization_starts_and_the_token_goes_with_every_request() {
    // Without a token: the connection fails with the server's challenge, whatever its body.
    let mut server = LegacyServer::new();
    let mut h = Harness::new(config(ProtocolChoice::Auto));
    let connect = h.http.client_mut().connect(h.now).unwrap();
    h.run(&mut guarded(&mut server, "t1", "t0"));
    let Err(Error::Http(HttpError::Unauthorized(Some(challenge)))) = h.outcome(connect) else {
        panic!("{:?}", h.events);
    };
    assert_eq!(challenge.error.as_deref(), Some("invalid_token"));
    assert_eq!(challenge.scope.as_deref(), Some("words:read"));
    assert_eq!(
        challenge.resource_metadata.as_deref(),
        Some("https://mcp.example.com/.well-known/oauth-protected-resource")
    );
    assert_eq!(h.methods(), ["server/discover"], "nothing else is tried");

    // With one: every request of the session carries it, the GET stream and the DELETE too.
    let mut server = LegacyServer::new();
    server.listen = Some(String::from(": nothing yet\n\n"));
    let mut h = Harness::new(config(ProtocolChoice::Auto));
    let token = mcp_sansio::auth::Token::bearer("t1").unwrap();
    h.http.set_authorization(Some(&token));
    let connect = h.http.client_mut().connect(h.now).unwrap();
    h.run(&mut guarded(&mut server, "t1", "t0"));
    h.outcome(connect).unwrap();
    let list = h.http.client_mut().list_tools(h.now).unwrap();
    h.run(&mut guarded(&mut server, "t1", "t0"));
    h.outcome(list).unwrap();
    let op = call(&mut h);
    h.run(&mut guarded(&mut server, "t1", "t0"));
    h.outcome(op).unwrap();

    // A token that lacks a scope: 403 with the scopes to ask for.
    let scoped_down = mcp_sansio::auth::Token::bearer("t0").unwrap();
    h.http.set_authorization(Some(&scoped_down));
    let op = call(&mut h);
    h.run(&mut guarded(&mut server, "t1", "t0"));
    let Err(Error::Http(HttpError::Forbidden(Some(challenge)))) = h.outcome(op) else {
        panic!("{:?}", h.events);
    };
    assert!(challenge.is_insufficient_scope());
    assert_eq!(challenge.scope.as_deref(), Some("words:count words:read"));

    // Renewed: the next request carries the new one; closing carries it too.
    h.http.set_authorization(Some(&token));
    let op = call(&mut h);
    h.run(&mut guarded(&mut server, "t1", "t0"));
    h.outcome(op).unwrap();
    let close = h.http.close().unwrap();
    h.log.push(close);
    let carried: Vec<(String, Option<&str>)> = h
        .methods()
        .into_iter()
        .zip(h.log.iter().map(|r| r.header("authorization")))
        .collect();
    let with = |token| {
        carried
            .iter()
            .filter(|(_, t)| *t == Some(token))
            .map(|(m, _)| m.as_str())
            .collect::<Vec<_>>()
    };
    assert_eq!(
        with("Bearer t1"),
        [
            "server/discover",
            "initialize",
            "notifications/initialized",
            "GET",
            "tools/list",
            "tools/call",
            "tools/call",
            "DELETE"
        ],
        "{carried:?}"
    );
    assert_eq!(with("Bearer t0"), ["tools/call"]);
    assert_eq!(carried.len(), 9, "every request carries one: {carried:?}");

    // And without one again, none.
    h.http.set_authorization(None);
    let _ = call(&mut h);
    let mut sent = 0;
    h.run(&mut |r| {
        assert_eq!(r.header("authorization"), None);
        sent += 1;
        None
    });
    assert_eq!(sent, 1);
}
