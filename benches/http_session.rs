//! The core's own cost of one call over Streamable HTTP: queue `tools/call`, take the HTTP
//! request the session makes (headers included), and read the reply back (its head, its
//! body, its end) to the typed result. No network: what `mcp-sansio-http` adds on top is
//! its HTTP/1.1 and the kernel's, measured end to end by `mcp-compare`.
//!
//! `cargo bench --bench http_session`

// A benchmark runs on known-good input and may panic if that assumption breaks.
#![allow(
    clippy::expect_used,
    clippy::unwrap_used,
    clippy::panic,
    clippy::indexing_slicing,
    clippy::std_instead_of_core,
    missing_docs
)]

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, Criterion};
use mcp_sansio::{
    Allowlist, CallToolResult, Config, HttpRequest, HttpSession, Instant, Limits, ProtocolChoice,
    RawObject, ReplyHead,
};

/// The id in a request's body.
fn id_of(request: &HttpRequest) -> String {
    let text = std::str::from_utf8(&request.body).unwrap();
    let start = text.find("\"id\":").map(|at| at + 5);
    start
        .map(|at| {
            let rest = &text[at..];
            rest[..rest.find(',').unwrap()].to_owned()
        })
        .unwrap_or_default()
}

/// A well-behaved server's reply to `request`: the handshake of `protocol`'s revision, the
/// catalog, a tool result; 405 to the `GET` stream, 202 to notifications.
fn serve(request: &HttpRequest) -> (u16, Option<&'static str>, Vec<u8>) {
    let body = std::str::from_utf8(&request.body).unwrap();
    if request.body.is_empty() {
        return (405, None, Vec::new());
    }
    if !body.contains("\"id\"") {
        return (202, None, Vec::new());
    }
    let result = if body.contains("server/discover") {
        r#"{"supportedVersions":["2026-07-28"],"capabilities":{"tools":{}}}"#
    } else if body.contains("\"initialize\"") {
        r#"{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"b","version":"1"}}"#
    } else if body.contains("tools/list") {
        r#"{"tools":[{"name":"word_count","inputSchema":{"type":"object","properties":{"text":{"type":"string"}}}}]}"#
    } else {
        r#"{"content":[{"type":"text","text":"4"}],"isError":false}"#
    };
    let message = format!(
        r#"{{"jsonrpc":"2.0","id":{},"result":{result}}}"#,
        id_of(request)
    );
    (200, Some("application/json"), message.into_bytes())
}

/// A session over HTTP, connected and listed, and the reply to its next call.
struct Bench {
    http: HttpSession,
    now: Instant,
    arguments: RawObject,
    events: bool,
    reply: Vec<u8>,
}

impl Bench {
    fn new(protocol: ProtocolChoice, events: bool) -> Self {
        let mut config = Config::new(["word_count"].into_iter().collect::<Allowlist>());
        config.protocol = protocol;
        let mut bench = Bench {
            http: HttpSession::new(config),
            now: Instant::ZERO,
            arguments: RawObject::parse(
                r#"{"text":"vanilla stock needs review"}"#,
                &Limits::default(),
            )
            .unwrap(),
            events,
            reply: Vec::with_capacity(256),
        };
        let _connecting = bench.http.client_mut().connect(bench.now).unwrap();
        bench.settle();
        let _listing = bench.http.client_mut().list_tools(bench.now).unwrap();
        bench.settle();
        bench
    }

    /// Answers every request until none is left.
    fn settle(&mut self) {
        while let Some(request) = self.http.poll_request() {
            let (status, content_type, body) = serve(&request);
            let head = ReplyHead {
                status,
                content_type,
                session_id: Some("bench-session"),
                www_authenticate: None,
            };
            self.http.handle_head(request.exchange, head, self.now);
            self.http.handle_body(request.exchange, &body, self.now);
            self.http.handle_end(request.exchange, self.now);
        }
        while self.http.poll_abort().is_some() {}
        while self.http.poll_event().is_some() {}
    }

    fn call(&mut self) -> CallToolResult {
        let op = self
            .http
            .client_mut()
            .call_tool("word_count", &self.arguments, self.now)
            .unwrap();
        let request = self.http.poll_request().unwrap();
        black_box(&request.headers);
        self.reply.clear();
        let content_type = if self.events {
            self.reply.extend_from_slice(b"id: 1\ndata:\n\ndata: ");
            "text/event-stream"
        } else {
            "application/json"
        };
        self.reply.extend_from_slice(br#"{"jsonrpc":"2.0","id":"#);
        self.reply.extend_from_slice(id_of(&request).as_bytes());
        self.reply.extend_from_slice(
            br#","result":{"content":[{"type":"text","text":"4"}],"isError":false}}"#,
        );
        if self.events {
            self.reply.extend_from_slice(b"\n\n");
        }
        let head = ReplyHead {
            status: 200,
            content_type: Some(content_type),
            session_id: None,
            www_authenticate: None,
        };
        self.http.handle_head(request.exchange, head, self.now);
        self.http
            .handle_body(request.exchange, &self.reply, self.now);
        self.http.handle_end(request.exchange, self.now);
        while self.http.poll_abort().is_some() {}
        let event = self.http.poll_event().expect("the call's end");
        match op.finished(event) {
            Ok(result) => result.unwrap(),
            Err(other) => panic!("{other:?}"),
        }
    }
}

fn http_session(c: &mut Criterion) {
    let mut group = c.benchmark_group("http_session");
    let mut stateless = Bench::new(ProtocolChoice::Stateless, false);
    assert_eq!(stateless.call().text(), "4");
    group.bench_function("2026_json", |b| b.iter(|| stateless.call()));
    let mut session = Bench::new(ProtocolChoice::Stateful, true);
    assert_eq!(session.call().text(), "4");
    group.bench_function("session_events", |b| b.iter(|| session.call()));
    group.finish();
}

criterion_group!(benches, http_session);
criterion_main!(benches);
