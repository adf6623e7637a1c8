//! Bodies of the cargo-fuzz targets, kept in the library so that their committed seed corpus
//! replays under a plain `cargo test` on stable. Not part of the supported API.
//!
//! Each body panics exactly when an invariant of the crate is broken; that is its purpose.
#![allow(clippy::panic, clippy::indexing_slicing, clippy::expect_used)]

use alloc::vec::Vec;

use crate::{encode_frame, parse_frame, FrameReader, Framed, Limits, Message, Outcome};

/// One thing a [`FrameReader`] yields, frames copied out.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Item {
    /// A complete frame.
    Frame(Vec<u8>),
    /// A refused line.
    TooLong,
}

/// What the framing rules say `stream` must yield under `limit`, computed without a reader:
/// split on newlines; a line of `limit` bytes or more is refused; empty and `\r`-only lines
/// are skipped; an unterminated tail is refused if it already reached the limit.
pub fn expected_items(stream: &[u8], limit: usize) -> Vec<Item> {
    let mut items = Vec::new();
    let mut lines = stream.split(|&b| b == b'\n').peekable();
    while let Some(line) = lines.next() {
        let terminated = lines.peek().is_some();
        if line.len() >= limit {
            items.push(Item::TooLong);
        } else if terminated && !line.is_empty() && line != b"\r" {
            items.push(Item::Frame(line.to_vec()));
        }
    }
    items
}

/// Feeds `stream` to a fresh reader in pieces of the given lengths (the rest in one final
/// piece), checking after every call that the reader holds fewer than `limit` bytes.
pub fn read_in_pieces(stream: &[u8], limit: usize, pieces: &[usize]) -> Vec<Item> {
    let limits = Limits {
        frame_bytes: limit,
        ..Limits::default()
    };
    let mut reader = FrameReader::new(&limits);
    let mut items = Vec::new();
    let mut rest = stream;
    let mut lengths = pieces.iter().copied();
    loop {
        let len = lengths.next().unwrap_or(rest.len()).min(rest.len());
        let (mut input, tail) = rest.split_at(len);
        rest = tail;
        loop {
            let framed = reader.next_frame(&mut input);
            match framed {
                Framed::Frame(frame) => {
                    assert!(
                        frame.len() < limit,
                        "a frame of {} bytes passed",
                        frame.len()
                    );
                    assert!(!frame.contains(&b'\n'), "a frame holds a newline");
                    items.push(Item::Frame(frame.to_vec()));
                }
                Framed::TooLong { limit: reported } => {
                    assert_eq!(reported, limit);
                    items.push(Item::TooLong);
                }
                Framed::NeedMore => {
                    assert!(input.is_empty(), "NeedMore with input left");
                    break;
                }
            }
            assert!(
                reader.buffered() < limit.max(1),
                "the reader holds too much"
            );
        }
        assert!(
            reader.buffered() < limit.max(1),
            "the reader holds too much"
        );
        if rest.is_empty() && lengths.len() == 0 {
            return items;
        }
    }
}

/// Fuzz body `frame_reader`. Input: one byte choosing the limit (1 to 256), one byte
/// counting the piece lengths that follow (one byte each, 0 meaning an empty read), then the
/// stream. Asserts that the stream yields what the framing rules say, whole or in pieces,
/// and that the reader never holds a limit's worth of bytes.
pub fn frame_reader(data: &[u8]) {
    let [limit, count, rest @ ..] = data else {
        return;
    };
    let limit = usize::from(*limit) + 1;
    let (pieces, stream) = rest.split_at(usize::from(*count).min(rest.len()));
    let pieces: Vec<usize> = pieces.iter().map(|&b| usize::from(b)).collect();
    let expected = expected_items(stream, limit);
    assert_eq!(read_in_pieces(stream, limit, &[]), expected, "whole stream");
    assert_eq!(
        read_in_pieces(stream, limit, &pieces),
        expected,
        "stream in pieces"
    );
    let bytes: Vec<usize> = core::iter::repeat_n(1, stream.len()).collect();
    assert_eq!(
        read_in_pieces(stream, limit, &bytes),
        expected,
        "byte by byte"
    );
}

/// Fuzz body `parse_frame`. Never panics on any input; whatever it accepts, `serde_json`
/// also reads as the same message, and it re-encodes as one line that parses back equal.
pub fn parse_frame_body(data: &[u8]) {
    let limits = Limits::default();
    let Ok(message) = parse_frame(data, &limits) else {
        return;
    };
    // Stricter than serde_json, never looser: it must read the same members.
    let value: serde_json::Value =
        serde_json::from_slice(data).expect("accepted a frame serde_json refuses");
    assert_eq!(value["jsonrpc"], "2.0");
    let id = &value["id"];
    match &message {
        Message::Request(r) => {
            assert_eq!(value["method"].as_str(), Some(r.method.as_str()));
            assert_same_id(id, &r.id);
        }
        Message::Notification(n) => {
            assert_eq!(value["method"].as_str(), Some(n.method.as_str()));
            assert!(id.is_null() && value.get("id").is_none());
        }
        Message::Response(r) => {
            assert_same_id(id, &r.id);
            match &r.outcome {
                Outcome::Result(_) => assert!(value["result"].is_object()),
                Outcome::Error(e) => assert_eq!(value["error"]["code"], e.code.0),
            }
        }
        Message::UnboundError(e) => {
            assert!(id.is_null());
            assert_eq!(value["error"]["message"].as_str(), Some(e.message.as_str()));
        }
    }
    let mut frame = Vec::new();
    encode_frame(&message, &limits, &mut frame).expect("a parsed message did not re-encode");
    assert_eq!(frame.pop(), Some(b'\n'));
    assert!(
        !frame.contains(&b'\n'),
        "an encoded frame holds a raw newline"
    );
    assert_eq!(
        parse_frame(&frame, &limits),
        Ok(message),
        "round trip changed the message"
    );
}

fn assert_same_id(json: &serde_json::Value, id: &crate::RequestId) {
    match (json, id.as_i64(), id.as_str()) {
        (serde_json::Value::Number(n), Some(i), None) => assert_eq!(n.as_i64(), Some(i)),
        (serde_json::Value::String(s), None, Some(t)) => assert_eq!(s, t),
        _ => panic!("id {id} read as {json}"),
    }
}

/// One thing that happens to a connected session, in the model-based test and the
/// `client_session` fuzz target.
#[derive(Clone, Debug)]
pub enum Step {
    /// The application calls tool `tool % 3`: 0 is allowed and advertised, 1 advertised but
    /// not allowed, 2 neither.
    Call {
        /// Which tool.
        tool: u8,
    },
    /// The server answers the `pick`-th request it has not answered yet (modulo their
    /// number) with a result naming the request's own id, in `pieces` reads.
    Answer {
        /// Which request.
        pick: u8,
        /// Into how many reads the answer is cut (at least one).
        pieces: u8,
    },
    /// The server answers, again, the `pick`-th request it answered before.
    AnswerAgain {
        /// Which request.
        pick: u8,
    },
    /// The server answers an id it was never sent.
    AnswerStranger,
    /// The server sends `count` progress notifications, one read each.
    Notify {
        /// How many.
        count: u8,
    },
    /// The server pings.
    Ping,
    /// Time moves on.
    Tick {
        /// By how many milliseconds.
        ms: u16,
    },
    /// The application cancels its `pick`-th operation in progress.
    Cancel {
        /// Which operation.
        pick: u8,
    },
}

/// Decodes fuzz input into steps, two bytes a step.
pub fn decode_steps(data: &[u8]) -> Vec<Step> {
    data.chunks_exact(2)
        .map(|pair| {
            let (op, arg) = (pair[0], pair[1]);
            match op % 8 {
                0 => Step::Call { tool: arg },
                1 => Step::Answer {
                    pick: arg & 0x1f,
                    pieces: (arg >> 5) + 1,
                },
                2 => Step::AnswerAgain { pick: arg },
                3 => Step::AnswerStranger,
                4 => Step::Notify { count: arg % 20 },
                5 => Step::Ping,
                6 => Step::Tick {
                    ms: u16::from(arg) * 64,
                },
                _ => Step::Cancel { pick: arg },
            }
        })
        .collect()
}

/// Fuzz body `client_session`: runs the decoded steps through [`run_session`].
pub fn client_session(data: &[u8]) {
    run_session(&decode_steps(data));
}

/// What the model knows about one operation the application started.
struct Op {
    id: i64,
    sent_at: crate::Instant,
    messages: usize,
    ended: bool,
}

/// A connected client, the server this test plays, and the model both are checked against.
struct Model {
    client: crate::Client,
    now: crate::Instant,
    timeout: core::time::Duration,
    cap: usize,
    /// Requests the server read and has not answered; ids it answered.
    unanswered: Vec<i64>,
    answered: Vec<i64>,
    ops: alloc::collections::BTreeMap<crate::OpId, Op>,
    failed: bool,
    /// Ids the client reported answered late.
    late: Vec<i64>,
}

impl Model {
    fn connected() -> Self {
        use crate::{Allowlist, Client, Config, Instant, ProtocolChoice, ProtocolVersion};
        let mut config = Config::new(["word_count"].into_iter().collect::<Allowlist>());
        config.protocol = ProtocolChoice::Pinned(ProtocolVersion::V2025_06_18);
        config.limits = Limits::teaching();
        let mut model = Model {
            cap: config.limits.notifications_before_answer,
            timeout: config.limits.operation_timeout,
            client: Client::new(config),
            now: Instant::from_millis(0),
            unanswered: Vec::new(),
            answered: Vec::new(),
            ops: alloc::collections::BTreeMap::new(),
            failed: false,
            late: Vec::new(),
        };
        model.client.connect(model.now).expect("connect");
        model.client.handle_input(
            b"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"protocolVersion\":\"2025-06-18\",\"capabilities\":{\"tools\":{}}}}\n",
            model.now,
        );
        model.client.list_tools(model.now).expect("list");
        model.client.handle_input(
            b"{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{\"tools\":[{\"name\":\"word_count\",\"inputSchema\":{\"type\":\"object\"}},{\"name\":\"place_purchase\",\"inputSchema\":{\"type\":\"object\"}}]}}\n",
            model.now,
        );
        while model.client.poll_transmit().is_some() {}
        while let Some(event) = model.client.poll_event() {
            assert!(
                !matches!(event, crate::Event::Failed(_)),
                "setup failed: {event:?}"
            );
        }
        model
    }

    /// Reads what the client wrote, as the server; returns the frames.
    fn server_reads(&mut self) -> Vec<serde_json::Value> {
        let mut frames = Vec::new();
        while let Some(frame) = self.client.poll_transmit() {
            let value: serde_json::Value =
                serde_json::from_slice(&frame).expect("the client wrote bad JSON");
            if value.get("method").is_some() {
                if let Some(id) = value.get("id").and_then(serde_json::Value::as_i64) {
                    self.unanswered.push(id);
                }
            }
            if value["method"] == "notifications/cancelled" {
                let id = value["params"]["requestId"]
                    .as_i64()
                    .expect("a cancel names its request");
                assert!(
                    self.ops.values().any(|o| o.id == id),
                    "cancelled request {id} was never made"
                );
            }
            frames.push(value);
        }
        frames
    }

    /// Feeds one read and checks everything the client reported.
    fn input(&mut self, bytes: &[u8], counts_as_message: bool) {
        self.client.handle_input(bytes, self.now);
        if counts_as_message && !self.failed {
            for op in self.ops.values_mut().filter(|o| !o.ended) {
                op.messages += 1;
            }
        }
        self.settle(false);
    }

    /// Drains the client and checks every invariant against the model.
    fn settle(&mut self, cancelled: bool) {
        use crate::{Error, Event, Output, ProtocolViolation};
        self.server_reads();
        while let Some(event) = self.client.poll_event() {
            match event {
                Event::Finished { op, outcome } => {
                    let model = self.ops.get_mut(&op).expect("an unknown operation ended");
                    assert!(!model.ended, "operation {op:?} ended twice");
                    model.ended = true;
                    let deadline = model.sent_at.saturating_add(self.timeout);
                    match outcome {
                        Ok(Output::ToolResult(result)) => {
                            assert_eq!(
                                result.text(),
                                alloc::format!("{}", model.id),
                                "a result reached the wrong request"
                            );
                            assert!(self.now < deadline, "a result after the deadline");
                            assert!(model.messages <= self.cap, "a result past the cap");
                        }
                        Ok(other) => panic!("a call produced {other:?}"),
                        Err(Error::Timeout { .. }) => {
                            assert!(self.now >= deadline, "a timeout before the deadline")
                        }
                        Err(Error::Protocol(ProtocolViolation::TooManyNotifications { limit })) => {
                            assert_eq!(limit, self.cap);
                            assert_eq!(
                                model.messages,
                                self.cap + 1,
                                "the cap fired at the wrong count"
                            );
                        }
                        Err(Error::Cancelled) => assert!(cancelled, "cancelled without a cancel"),
                        Err(Error::Protocol(_)) => assert!(self.client.is_failed()),
                        Err(other) => panic!("a call failed with {other}"),
                    }
                }
                Event::LateResponse { id } => {
                    let id = id.as_i64().expect("late ids are ours");
                    let model = self
                        .ops
                        .values()
                        .find(|o| o.id == id)
                        .expect("late for an unknown request");
                    assert!(
                        model.ended,
                        "an answer to a waiting request was called late"
                    );
                    self.late.push(id);
                }
                Event::Failed(_) => self.failed = true,
                Event::Notification(_) => {}
            }
        }
        for (op, model) in &self.ops {
            let due = self.now >= model.sent_at.saturating_add(self.timeout);
            assert!(
                !due || model.ended,
                "operation {op:?} outlived its deadline"
            );
            assert!(
                model.messages <= self.cap || model.ended,
                "operation {op:?} passed the cap"
            );
            assert!(
                !self.failed || model.ended,
                "the connection failed with work left"
            );
        }
    }

    fn step(&mut self, step: &Step) {
        use alloc::format;
        match *step {
            Step::Call { tool } => {
                let name = ["word_count", "place_purchase", "nobody"][usize::from(tool % 3)];
                let before = self.unanswered.len();
                match self
                    .client
                    .call_tool(name, &crate::RawObject::empty(), self.now)
                {
                    Ok(op) => {
                        assert_eq!(name, "word_count", "a refused tool was called");
                        let frames = self.server_reads();
                        let id = frames
                            .last()
                            .and_then(|f| f["id"].as_i64())
                            .expect("a call sent its request");
                        self.ops.insert(
                            op,
                            Op {
                                id,
                                sent_at: self.now,
                                messages: 0,
                                ended: false,
                            },
                        );
                    }
                    Err(crate::Error::Misuse(_)) => {
                        self.server_reads();
                        assert_eq!(
                            self.unanswered.len(),
                            before,
                            "a refused call sent a request"
                        );
                    }
                    Err(other) => panic!("a call failed with {other}"),
                }
            }
            Step::Answer { pick, pieces } => {
                if self.unanswered.is_empty() {
                    return;
                }
                let id = self
                    .unanswered
                    .remove(usize::from(pick) % self.unanswered.len());
                self.answered.push(id);
                // An answer to a request that already ended must come back as late.
                let abandoned = !self.failed && self.ops.values().any(|o| o.id == id && o.ended);
                let line = format!(
                    "{{\"jsonrpc\":\"2.0\",\"id\":{id},\"result\":{{\"content\":[{{\"type\":\"text\",\"text\":\"{id}\"}}]}}}}\n"
                );
                let size = line.len().div_ceil(usize::from(pieces.max(1)));
                for piece in line.as_bytes().chunks(size.max(1)) {
                    self.input(piece, false);
                }
                if abandoned && !self.failed {
                    assert!(
                        self.late.contains(&id),
                        "the late answer to {id} was not reported"
                    );
                }
            }
            Step::AnswerAgain { pick } => {
                if let Some(id) = self
                    .answered
                    .get(usize::from(pick) % self.answered.len().max(1))
                {
                    let line = format!(
                        "{{\"jsonrpc\":\"2.0\",\"id\":{id},\"result\":{{\"content\":[]}}}}\n"
                    );
                    self.input(line.as_bytes(), false);
                }
            }
            Step::AnswerStranger => {
                self.input(
                    b"{\"jsonrpc\":\"2.0\",\"id\":\"3\",\"result\":{\"content\":[]}}\n",
                    false,
                );
            }
            Step::Notify { count } => {
                for _ in 0..count {
                    self.input(
                        b"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progressToken\":1,\"progress\":1}}\n",
                        true,
                    );
                }
            }
            Step::Ping => self.input(
                b"{\"jsonrpc\":\"2.0\",\"id\":\"p\",\"method\":\"ping\"}\n",
                true,
            ),
            Step::Tick { ms } => {
                self.now = self
                    .now
                    .saturating_add(core::time::Duration::from_millis(u64::from(ms)));
                self.client.handle_timeout(self.now);
                self.settle(false);
            }
            Step::Cancel { pick } => {
                let open: Vec<crate::OpId> = self
                    .ops
                    .iter()
                    .filter(|(_, o)| !o.ended)
                    .map(|(k, _)| *k)
                    .collect();
                if let Some(op) = open.get(usize::from(pick) % open.len().max(1)) {
                    self.client.cancel(*op).expect("cancel an open operation");
                    self.settle(true);
                }
            }
        }
    }
}

/// Runs `steps` against a connected client whose server is this function, and asserts
/// after every read and tick: every operation ends exactly once; a result only ever
/// reaches the operation whose request it answered; an answer after a deadline or a cancel
/// is never a result; no operation outlives its deadline; the notification cap holds; a
/// refused call sends nothing.
pub fn run_session(steps: &[Step]) {
    let mut model = Model::connected();
    for step in steps {
        model.step(step);
    }
    // In the end every operation ends: time runs out for whatever still waits.
    model.now = model.now.saturating_add(model.timeout);
    model.client.handle_timeout(model.now);
    model.settle(false);
    assert!(
        model.ops.values().all(|o| o.ended),
        "an operation never ended"
    );
}
