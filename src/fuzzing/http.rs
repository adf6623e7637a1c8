//! The session over Streamable HTTP against a server that answers anything: any status, any
//! content type, any session id, any body cut anywhere, any exchange ended or broken in any
//! order; and the event stream of the 2024-11-05 transport, naming any message endpoint and
//! carrying the answers to any request. Nothing may panic, every operation ends exactly once,
//! and once every exchange has ended and every deadline passed, nothing is left open.

use alloc::collections::BTreeMap;
use alloc::{format, vec::Vec};
use core::time::Duration;

use arbitrary::{Arbitrary, Unstructured};

use crate::{
    Allowlist, Asks, Config, Event, HttpRequest, HttpSession, Instant, LogLevel, OpId,
    ProtocolChoice, RawObject, Reply, ReplyHead,
};

/// One thing that happens, to the exchange `pick` (modulo those open) where it names one.
#[derive(Clone, Debug, Arbitrary)]
enum Step {
    /// The application lists the tools.
    List,
    /// The application calls the allowed tool.
    Call,
    /// The application cancels its `pick`-th operation in progress.
    Cancel { pick: u8 },
    /// A reply's head.
    Head {
        pick: u8,
        status: u16,
        /// 0: JSON, 1: events, 2: none, 3: another type.
        kind: u8,
        session: Option<Vec<u8>>,
    },
    /// A well-formed answer to the exchange's request: its head, its body (as JSON or one
    /// event), and its end.
    Answer { pick: u8, events: bool },
    /// Body bytes.
    Body { pick: u8, bytes: Vec<u8> },
    /// An `endpoint` event naming `reference`, as the 2024-11-05 transport's stream opens.
    Endpoint { pick: u8, reference: Vec<u8> },
    /// A well-formed answer to the message of open exchange `of`, as one event in the body
    /// of exchange `pick` (as the 2024-11-05 transport's stream carries every answer).
    Relay { pick: u8, of: u8 },
    /// The body ends.
    End { pick: u8 },
    /// The exchange breaks.
    Broken { pick: u8 },
    /// Time moves on by `ms % 8192` milliseconds.
    Tick { ms: u16 },
}

/// At most this many steps per input.
const MAX_STEPS: usize = 48;

/// Runs one input: the protocol choice from its first byte, then the steps.
pub fn http_session(data: &[u8]) {
    let mut input = Unstructured::new(data);
    let protocol = match input.arbitrary::<u8>().unwrap_or(0) % 3 {
        0 => ProtocolChoice::Auto,
        1 => ProtocolChoice::Stateful,
        _ => ProtocolChoice::Stateless,
    };
    let steps: Vec<Step> = (0..MAX_STEPS)
        .map_while(|_| input.arbitrary::<Step>().ok())
        .collect();
    let mut config = Config::new(["word_count"].into_iter().collect::<Allowlist>());
    config.protocol = protocol;
    config.limits.frame_bytes = 4096;
    config.limits.requests_in_flight = 8;
    config.limits.operation_timeout = Duration::from_secs(5);
    // Declared, so that a `roots/list` the input holds is answered, and POSTed, and a
    // 2026-07-28 call asked for the roots goes again with them.
    config.roots = Some(Vec::new());
    // And the user is asked: an elicitation the input holds, or a 2026-07-28 call's, is
    // answered by the application at once.
    config.asks = Asks::NONE.with_elicitation();
    // And asks for log messages itself, in each session the handshake starts.
    config.log_level = Some(LogLevel::Info);
    let mut driver = Driver {
        http: HttpSession::new(config).with_url("http://127.0.0.1:1/sse"),
        now: Instant::ZERO,
        open: Vec::new(),
        ops: BTreeMap::new(),
    };
    if let Ok(op) = driver.http.client_mut().connect(driver.now) {
        driver.ops.insert(op.id(), 0);
    }
    driver.pump();
    for step in steps {
        driver.step(step);
        driver.pump();
    }
    // Every exchange ends (a transport's contract), then every deadline passes; a `GET`
    // stream asked for again each time gives up within its bound.
    for _ in 0..8 {
        while let Some(request) = driver.open.pop() {
            driver.http.handle_broken(request.exchange, driver.now);
            driver.pump();
        }
        driver.now = driver.now.saturating_add(Duration::from_secs(3600));
        driver.http.handle_timeout(driver.now);
        driver.pump();
    }
    for (op, ended) in &driver.ops {
        assert_eq!(*ended, 1, "operation {op:?} ended {ended} times");
    }
    assert_eq!(
        driver.http.client().in_flight(),
        0,
        "requests left in flight"
    );
    assert_eq!(driver.http.open_exchanges(), 0, "exchanges left open");
    assert_eq!(driver.http.poll_timeout(), None, "something still waits");
}

struct Driver {
    http: HttpSession,
    now: Instant,
    /// Requests performed whose reply has not ended, oldest first.
    open: Vec<HttpRequest>,
    /// Every operation started, and how many times it ended.
    ops: BTreeMap<OpId, u32>,
}

impl Driver {
    /// The open exchange `pick` names, and where it is.
    fn pick(&self, pick: u8) -> Option<(usize, crate::ExchangeId)> {
        let at = usize::from(pick) % self.open.len().max(1);
        self.open.get(at).map(|r| (at, r.exchange))
    }

    fn pump(&mut self) {
        while let Some(request) = self.http.poll_request() {
            self.open.push(request);
        }
        while let Some(aborted) = self.http.poll_abort() {
            self.open.retain(|r| r.exchange != aborted);
        }
        while let Some(event) = self.http.poll_event() {
            match event {
                Event::Finished { op, .. } => {
                    // Only what the application started ends as an event, and once: the
                    // client's own requests (a renewal, the level it asks for) end unseen.
                    let ended = self.ops.get_mut(&op);
                    assert_eq!(ended.as_deref(), Some(&0), "{op:?} ended unknown or twice");
                    if let Some(ended) = ended {
                        *ended += 1;
                    }
                }
                Event::ServerRequest(request) => {
                    let answered = self
                        .http
                        .client_mut()
                        .answer(request.ticket(), Reply::decline());
                    assert_eq!(answered, Ok(()), "a question that cannot be answered");
                    while let Some(request) = self.http.poll_request() {
                        self.open.push(request);
                    }
                }
                _ => {}
            }
        }
    }

    fn step(&mut self, step: Step) {
        let now = self.now;
        match step {
            Step::List => {
                if let Ok(op) = self.http.client_mut().list_tools(now) {
                    self.ops.insert(op.id(), 0);
                }
            }
            Step::Call => {
                let call = self
                    .http
                    .client_mut()
                    .call_tool("word_count", &RawObject::empty(), now);
                if let Ok(op) = call {
                    self.ops.insert(op.id(), 0);
                }
            }
            Step::Cancel { pick } => {
                let pending: Vec<OpId> = self
                    .ops
                    .iter()
                    .filter(|(_, ended)| **ended == 0)
                    .map(|(op, _)| *op)
                    .collect();
                if let Some(op) = pending.get(usize::from(pick) % pending.len().max(1)) {
                    let _ = self.http.client_mut().cancel(*op);
                }
            }
            Step::Head {
                pick,
                status,
                kind,
                session,
            } => {
                let Some((_, exchange)) = self.pick(pick) else {
                    return;
                };
                let session = session
                    .as_deref()
                    .map(|s| core::str::from_utf8(s).unwrap_or("x"));
                let status = status % 600;
                // A refusal's bytes double as its challenge.
                let head = ReplyHead {
                    status,
                    content_type: content_type(kind),
                    session_id: session,
                    www_authenticate: session.filter(|_| matches!(status, 401 | 403)),
                };
                self.http.handle_head(exchange, head, now);
            }
            Step::Answer { pick, events } => {
                let Some((at, _)) = self.pick(pick) else {
                    return;
                };
                let request = self.open.remove(at);
                let body = answer(&request);
                let head = ReplyHead {
                    status: 200,
                    content_type: content_type(u8::from(events)),
                    session_id: Some("fuzz-session"),
                    www_authenticate: None,
                };
                self.http.handle_head(request.exchange, head, now);
                let body = if events {
                    let mut text = b"id: 1\ndata:\n\ndata: ".to_vec();
                    text.extend_from_slice(&body);
                    text.extend_from_slice(b"\n\n");
                    text
                } else {
                    body
                };
                self.http.handle_body(request.exchange, &body, now);
                self.http.handle_end(request.exchange, now);
            }
            Step::Body { pick, bytes } => {
                let Some((_, exchange)) = self.pick(pick) else {
                    return;
                };
                self.http.handle_body(exchange, &bytes, now);
            }
            Step::Endpoint { pick, reference } => {
                let Some((_, exchange)) = self.pick(pick) else {
                    return;
                };
                let mut text = b"event: endpoint\ndata: ".to_vec();
                text.extend_from_slice(&reference);
                text.extend_from_slice(b"\n\n");
                self.http.handle_body(exchange, &text, now);
            }
            Step::Relay { pick, of } => {
                let (Some((_, exchange)), Some((from, _))) = (self.pick(pick), self.pick(of))
                else {
                    return;
                };
                let Some(request) = self.open.get(from) else {
                    return;
                };
                let mut text = b"event: message\ndata: ".to_vec();
                text.extend_from_slice(&answer(request));
                text.extend_from_slice(b"\n\n");
                self.http.handle_body(exchange, &text, now);
            }
            Step::End { pick } => {
                let Some((at, _)) = self.pick(pick) else {
                    return;
                };
                let request = self.open.remove(at);
                self.http.handle_end(request.exchange, now);
            }
            Step::Broken { pick } => {
                let Some((at, _)) = self.pick(pick) else {
                    return;
                };
                let request = self.open.remove(at);
                self.http.handle_broken(request.exchange, now);
            }
            Step::Tick { ms } => {
                self.now = now.saturating_add(Duration::from_millis(u64::from(ms % 8192)));
                self.http.handle_timeout(self.now);
            }
        }
    }
}

fn content_type(kind: u8) -> Option<&'static str> {
    match kind % 4 {
        0 => Some("application/json"),
        1 => Some("text/event-stream"),
        2 => None,
        _ => Some("text/plain"),
    }
}

/// A well-formed answer to `request`'s message: for the handshake, a server of the
/// revision it asks for; for anything else, an empty tool result.
fn answer(request: &HttpRequest) -> Vec<u8> {
    let text = core::str::from_utf8(&request.body).unwrap_or("");
    let id = crate::json::view::JsonRef::new(text)
        .as_object()
        .and_then(|o| o.get("id"))
        .map_or("null", |id| id.text());
    let result = match request.header("Mcp-Method") {
        Some("server/discover") => {
            r#"{"supportedVersions":["2026-07-28"],"capabilities":{"tools":{}}}"#
        }
        _ if text.contains("\"initialize\"") => {
            r#"{"protocolVersion":"2025-11-25","capabilities":{"tools":{},"logging":{}},"serverInfo":{"name":"f","version":"1"}}"#
        }
        _ if text.contains("\"tools/list\"") => {
            r#"{"tools":[{"name":"word_count","inputSchema":{"type":"object"}}]}"#
        }
        // A 2026-07-28 call is first asked for the roots and the user, and answered once it
        // brings them.
        Some("tools/call") if !text.contains("\"inputResponses\"") => {
            r#"{"resultType":"input_required","inputRequests":{"r":{"method":"roots/list"},"e":{"method":"elicitation/create","params":{"message":"m","requestedSchema":{"type":"object"}}}},"requestState":"s"}"#
        }
        _ => r#"{"content":[]}"#,
    };
    format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{result}}}"#).into_bytes()
}
