//! The session model: a connected client, the server it talks to (played here), and what
//! both must keep to, checked after every step. One [`Scenario`] type drives the
//! `client_session` fuzz target (through `arbitrary`) and the proptest model in `tests/`.

use alloc::collections::BTreeMap;
use alloc::{format, vec::Vec};
use core::time::Duration;

use arbitrary::{Arbitrary, Unstructured};

use crate::{
    Allowlist, Asks, CallOptions, CallToolResult, Client, Config, Error, Event, Instant, Limits,
    Misuse, Op, OpId, ProtocolChoice, ProtocolVersion, ProtocolViolation, RawObject, Reply, Root,
    Ticket,
};

/// The most steps one scenario holds: long enough to fill the request table and run
/// deadlines out, short enough that a fuzz run costs little per input.
pub const MAX_STEPS: usize = 32;

/// The most requests in flight in the model: small, so that scenarios reach the bound.
const IN_FLIGHT: usize = 8;

/// One thing that happens to a connected session.
#[derive(Clone, Debug, Arbitrary)]
pub enum Step {
    /// The application calls tool `tool % 3`: 0 is allowed and advertised, 1 advertised but
    /// not allowed, 2 neither.
    Call {
        /// Which tool.
        tool: u8,
    },
    /// The server answers the `pick`-th request it has not answered yet (modulo their
    /// number) with a result naming the request's own id, in `pieces % 4 + 1` reads.
    Answer {
        /// Which request.
        pick: u8,
        /// Into how many reads the answer is cut.
        pieces: u8,
    },
    /// The server answers, again, the `pick`-th request it answered before.
    AnswerAgain {
        /// Which request.
        pick: u8,
    },
    /// The server answers an id it was never sent.
    AnswerStranger,
    /// The server sends `count % 20` progress notifications, in one read.
    Notify {
        /// How many.
        count: u8,
    },
    /// The server pings.
    Ping,
    /// Time moves on by `ms % 4096` milliseconds.
    Tick {
        /// By how much.
        ms: u16,
    },
    /// The application cancels its `pick`-th operation in progress.
    Cancel {
        /// Which operation.
        pick: u8,
    },
    /// The application gives `count % 4` roots in place of those it gave before.
    Roots {
        /// How many.
        count: u8,
    },
    /// The server asks for the roots.
    AskRoots,
    /// The server asks the user (an elicitation), which the application answers at once
    /// (a decline) or, with `hold`, keeps unanswered until [`Step::AnswerAsks`].
    Ask {
        /// Whether this and later questions are kept unanswered.
        hold: bool,
    },
    /// The application answers every question it kept, and once more the first of them.
    AnswerAsks,
    /// The application calls `word_count` on terms of its own: a timeout of
    /// `timeout_ms % 8192 + 1` milliseconds, and progress asked for, up to
    /// `most_ms % 8192 + 1` in all.
    CallReporting {
        /// The call's timeout.
        timeout_ms: u16,
        /// Its hard maximum.
        most_ms: u16,
    },
    /// The server reports `progress % 4` under the token of the `pick`-th call that asked
    /// for progress, ended or not.
    Report {
        /// Which call.
        pick: u8,
        /// The progress reported.
        progress: u8,
    },
}

impl Step {
    /// Whether the step is a server breaking the protocol on purpose.
    pub fn breaks_the_protocol(&self) -> bool {
        matches!(self, Step::AnswerAgain { .. } | Step::AnswerStranger)
    }
}

/// A sequence of at most [`MAX_STEPS`] steps.
#[derive(Clone, Debug)]
pub struct Scenario {
    /// The steps, in order.
    pub steps: Vec<Step>,
}

impl<'a> Arbitrary<'a> for Scenario {
    fn arbitrary(u: &mut Unstructured<'a>) -> arbitrary::Result<Self> {
        let mut steps = Vec::new();
        while steps.len() < MAX_STEPS && !u.is_empty() {
            steps.push(Step::arbitrary(u)?);
        }
        Ok(Scenario { steps })
    }
}

impl Scenario {
    /// The scenario `data` spells, read as the fuzz target reads its input.
    pub fn from_bytes(data: &[u8]) -> Self {
        let steps = Scenario::arbitrary_take_rest(Unstructured::new(data))
            .map(|s| s.steps)
            .unwrap_or_default();
        Scenario { steps }
    }
}

/// Fuzz body `client_session`: the scenario `data` spells, through [`run_session`].
pub fn client_session(data: &[u8]) {
    run_session(&Scenario::from_bytes(data).steps);
}

/// A client made from `config`, connected at 2025-06-18 (the handshake at time zero, with ids
/// 1 and 2) to a server offering tools, whose catalog lists `word_count` and
/// `place_purchase`; every frame and event of the setup is drained. For tests and benches
/// that start from a connected client.
pub fn connected_client(mut config: Config) -> Client {
    config.protocol = ProtocolChoice::Pinned(ProtocolVersion::V2025_06_18);
    let mut client = Client::new(config);
    let now = Instant::ZERO;
    let _ = client.connect(now).expect("connect");
    client.handle_input(
        b"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"protocolVersion\":\"2025-06-18\",\"capabilities\":{\"tools\":{}}}}\n",
        now,
    );
    let _ = client.list_tools(now).expect("list");
    client.handle_input(
        b"{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{\"tools\":[{\"name\":\"word_count\",\"description\":\"Count the words in a short text.\",\"inputSchema\":{\"type\":\"object\",\"properties\":{\"text\":{\"type\":\"string\"}}}},{\"name\":\"place_purchase\",\"inputSchema\":{\"type\":\"object\"}}]}}\n",
        now,
    );
    let mut out = Vec::new();
    while client.poll_transmit(&mut out).is_some() {}
    while let Some(event) = client.poll_event() {
        assert!(
            !matches!(event, Event::Failed(_)),
            "setup failed: {event:?}"
        );
    }
    assert!(client.catalog().is_some(), "the setup listed no tools");
    client
}

/// What the model knows about one operation the application started.
struct Started {
    id: i64,
    /// When it must be answered by: moved only by progress it asked for.
    deadline: Instant,
    messages: usize,
    ended: bool,
    /// Where it asked for progress: its token, and how reports move its deadline.
    reporting: Option<Reporting>,
}

/// A call that asked for progress, as the model follows it.
struct Reporting {
    token: i64,
    every: Duration,
    until: Instant,
    last: Option<f64>,
}

/// One frame the client wrote, as the server reads it.
#[derive(serde::Deserialize)]
struct Written<'a> {
    id: Option<Id>,
    #[serde(borrow)]
    method: Option<&'a str>,
    params: Option<Cancelled>,
    #[serde(borrow)]
    result: Option<Answered<'a>>,
    error: Option<Refused>,
}

/// The result the client wrote: the answer to the server's ping (nothing), to its
/// `roots/list` (roots), or to its elicitation (an action).
#[derive(serde::Deserialize)]
struct Answered<'a> {
    roots: Option<Vec<serde::de::IgnoredAny>>,
    action: Option<&'a str>,
}

/// The error the client wrote: to a question past the bound of those waiting.
#[derive(serde::Deserialize)]
struct Refused {
    code: i64,
}

/// An id: the client's requests carry integers; its answers to the server's ping carry the
/// server's string.
enum Id {
    Integer(i64),
    Other,
}

impl<'de> serde::Deserialize<'de> for Id {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Visitor;
        impl serde::de::Visitor<'_> for Visitor {
            type Value = Id;
            fn expecting(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
                f.write_str("an integer or a string")
            }
            fn visit_i64<E>(self, n: i64) -> Result<Id, E> {
                Ok(Id::Integer(n))
            }
            fn visit_u64<E>(self, n: u64) -> Result<Id, E> {
                Ok(i64::try_from(n).map_or(Id::Other, Id::Integer))
            }
            fn visit_str<E>(self, _: &str) -> Result<Id, E> {
                Ok(Id::Other)
            }
        }
        deserializer.deserialize_any(Visitor)
    }
}

#[derive(serde::Deserialize)]
#[serde(rename_all = "camelCase")]
struct Cancelled {
    request_id: Option<i64>,
    #[serde(rename = "_meta")]
    meta: Option<Meta>,
}

/// A request's `_meta`, where the client names a progress token.
#[derive(serde::Deserialize)]
#[serde(rename_all = "camelCase")]
struct Meta {
    progress_token: Option<i64>,
}

/// A connected client, the server this test plays, and the model both are checked against.
struct Model {
    client: Client,
    now: Instant,
    timeout: Duration,
    cap: usize,
    /// Requests the server read and has not answered; ids it answered.
    unanswered: Vec<i64>,
    answered: Vec<i64>,
    ops: BTreeMap<OpId, Started>,
    /// The operations not ended yet: the only ones whose invariants can still change.
    open: Vec<OpId>,
    failed: bool,
    /// Ids the client reported answered late.
    late: Vec<i64>,
    out: Vec<u8>,
    /// How many roots the application gave last.
    roots: usize,
    /// How many `notifications/roots/list_changed` the server read.
    announced: usize,
    /// How many roots each answer to `roots/list` held, in order.
    listed: Vec<usize>,
    /// How many questions the server asked, and how many answers (the application's, or
    /// the client's refusal past the bound) it read.
    asked: usize,
    replied: usize,
    /// Whether the application keeps questions unanswered, and those it keeps.
    hold: bool,
    held: Vec<Ticket>,
    /// The bound on questions waiting.
    asks_waiting: usize,
    /// The progress token the last request read named.
    token: Option<i64>,
    /// Progress reports the client must still give the application as a call's own.
    reports_due: usize,
}

impl Model {
    fn connected() -> Self {
        let mut config = Config::new(["word_count"].into_iter().collect::<Allowlist>());
        config.limits = Limits::teaching();
        config.limits.requests_in_flight = IN_FLIGHT;
        config.roots = Some(Vec::new());
        config.asks = Asks::NONE.with_elicitation();
        // Small, so that scenarios reach the bound.
        config.limits.asks_waiting = 2;
        Model {
            asks_waiting: config.limits.asks_waiting,
            cap: config.limits.notifications_before_answer,
            timeout: config.limits.operation_timeout,
            client: connected_client(config),
            now: Instant::from_millis(0),
            unanswered: Vec::new(),
            answered: Vec::new(),
            ops: BTreeMap::new(),
            open: Vec::new(),
            failed: false,
            late: Vec::new(),
            out: Vec::new(),
            roots: 0,
            announced: 0,
            listed: Vec::new(),
            asked: 0,
            replied: 0,
            hold: false,
            held: Vec::new(),
            token: None,
            reports_due: 0,
        }
    }

    /// Reads what the client wrote, as the server; returns the id of the last request.
    fn server_reads(&mut self) -> Option<i64> {
        let mut last = None;
        while let Some(len) = self.client.poll_transmit(&mut self.out) {
            let frame = self.out.get(..len).expect("the frame just written");
            assert_eq!(frame.last(), Some(&b'\n'), "a frame without its newline");
            let written: Written<'_> =
                serde_json::from_slice(frame).expect("the client wrote bad JSON");
            match (written.method, written.id) {
                (Some(_), Some(Id::Integer(id))) => {
                    self.unanswered.push(id);
                    last = Some(id);
                    self.token = written
                        .params
                        .and_then(|params| params.meta)
                        .and_then(|meta| meta.progress_token);
                }
                (Some("notifications/cancelled"), None) => {
                    let id = written
                        .params
                        .and_then(|p| p.request_id)
                        .expect("a cancel names its request");
                    assert!(
                        self.ops.values().any(|o| o.id == id),
                        "cancelled request {id}, which was never made"
                    );
                }
                (Some("notifications/roots/list_changed"), None) => self.announced += 1,
                (None, Some(Id::Other)) => match (written.result, written.error) {
                    (
                        Some(Answered {
                            roots: Some(roots), ..
                        }),
                        _,
                    ) => self.listed.push(roots.len()),
                    (
                        Some(Answered {
                            action: Some(action),
                            ..
                        }),
                        _,
                    ) => {
                        assert_eq!(action, "decline", "not the application's answer");
                        self.replied += 1;
                    }
                    (_, Some(Refused { code: -32603 })) => self.replied += 1,
                    _ => {}
                },
                _ => {}
            }
            self.out.clear();
        }
        last
    }

    /// Feeds one read holding `messages` messages that are not answers (notifications,
    /// pings), or an answer when `messages` is 0, and checks everything the client reported.
    /// Each waiting operation counts them up to one past the cap, where it must fail.
    fn input(&mut self, bytes: &[u8], messages: usize) {
        self.client.handle_input(bytes, self.now);
        if !self.failed {
            for op in &self.open {
                if let Some(model) = self.ops.get_mut(op) {
                    model.messages = (model.messages + messages).min(self.cap + 1);
                }
            }
        }
        self.settle(false);
    }

    /// Drains the client and checks every invariant against the model.
    fn settle(&mut self, cancelled: bool) {
        self.server_reads();
        while let Some(event) = self.client.poll_event() {
            match event {
                Event::Finished { op, outcome } => {
                    let model = self.ops.get_mut(&op).expect("an unknown operation ended");
                    assert!(!model.ended, "operation {op:?} ended twice");
                    model.ended = true;
                    assert!(
                        !self.client.is_pending(op),
                        "{op:?} ended and is still pending"
                    );
                    let deadline = model.deadline;
                    let result = Op::<CallToolResult>::new(op)
                        .finished(Event::Finished { op, outcome })
                        .expect("this operation's end");
                    match result {
                        Ok(result) => {
                            assert_eq!(
                                result.text(),
                                format!("{}", model.id),
                                "a result reached the wrong request"
                            );
                            assert!(self.now < deadline, "a result after the deadline");
                            assert!(model.messages <= self.cap, "a result past the cap");
                        }
                        Err(Error::Timeout { .. }) => {
                            assert!(self.now >= deadline, "a timeout before the deadline");
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
                Event::Progress { op, .. } => {
                    let model = self.ops.get(&op).expect("progress of an unknown operation");
                    assert!(model.reporting.is_some(), "{op:?} never asked for progress");
                    assert!(!model.ended, "progress of {op:?}, which has ended");
                    assert!(self.reports_due > 0, "progress no server sent");
                    self.reports_due -= 1;
                }
                Event::Subscribed { op, .. } => {
                    panic!("{op:?} was acknowledged, and no subscription was asked for")
                }
                Event::ServerRequest(request) => {
                    if self.hold {
                        self.held.push(request.ticket());
                    } else {
                        let answered = self.client.answer(request.ticket(), Reply::decline());
                        assert_eq!(answered, Ok(()), "a question the application cannot answer");
                        self.server_reads();
                    }
                }
            }
        }
        self.open
            .retain(|op| self.ops.get(op).is_some_and(|o| !o.ended));
        for op in &self.open {
            let Some(model) = self.ops.get(op) else {
                continue;
            };
            assert!(
                self.now < model.deadline,
                "operation {op:?} outlived its deadline"
            );
            if let Some(reporting) = &model.reporting {
                assert!(model.deadline <= reporting.until, "past the hard maximum");
            }
            assert!(
                model.messages <= self.cap,
                "operation {op:?} passed the cap"
            );
            assert!(!self.failed, "the connection failed with work left");
            assert!(
                self.client.is_pending(*op),
                "is_pending says {op:?} ended, and no event said so"
            );
        }
    }

    /// The application calls `name` under `options`; the model checks the refusal, or
    /// follows the call.
    fn call(&mut self, name: &str, options: CallOptions) {
        let expected = self.expected_call(name);
        let before = self.unanswered.len();
        let called = self
            .client
            .call_tool_with(name, &RawObject::empty(), options, self.now);
        assert_eq!(
            called.as_ref().map(|_| ()),
            expected.as_ref().map(|_| ()),
            "call_tool({name}) on a client the model knows"
        );
        let sent = self.server_reads();
        let Ok(op) = called else {
            assert_eq!(
                self.unanswered.len(),
                before,
                "a refused call sent a request"
            );
            return;
        };
        let id = sent.expect("a call sent its request");
        let every = options.timeout.unwrap_or(self.timeout);
        let mut deadline = self.now.saturating_add(every);
        let reporting = options.progress_up_to.map(|most| {
            let until = self.now.saturating_add(most);
            deadline = deadline.min(until);
            Reporting {
                token: self
                    .token
                    .expect("a call asking for progress named no token"),
                every,
                until,
                last: None,
            }
        });
        if reporting.is_none() {
            assert_eq!(self.token, None, "a plain call named a token");
        }
        self.open.push(op.id());
        self.ops.insert(
            op.id(),
            Started {
                id,
                deadline,
                messages: 0,
                ended: false,
                reporting,
            },
        );
    }

    /// What `call_tool(name)` must do now: exactly one refusal, or a request sent.
    fn expected_call(&self, name: &str) -> Result<(), Misuse> {
        let open = self.open.len();
        if name != "word_count" {
            Err(Misuse::ToolNotAllowed { name: name.into() })
        } else if self.failed {
            Err(Misuse::ConnectionFailed)
        } else if open >= IN_FLIGHT {
            Err(Misuse::TooManyInFlight { limit: IN_FLIGHT })
        } else {
            Ok(())
        }
    }

    fn step(&mut self, step: &Step) {
        match *step {
            Step::Call { tool } => {
                let name = ["word_count", "place_purchase", "nobody"][usize::from(tool % 3)];
                self.call(name, CallOptions::new());
            }
            Step::CallReporting {
                timeout_ms,
                most_ms,
            } => {
                let millis = |ms: u16| Duration::from_millis(u64::from(ms % 8192) + 1);
                let options = CallOptions::new()
                    .timeout(millis(timeout_ms))
                    .progress_up_to(millis(most_ms));
                self.call("word_count", options);
            }
            Step::Report { pick, progress } => {
                let reporting: Vec<(OpId, i64)> = self
                    .ops
                    .iter()
                    .filter_map(|(op, o)| o.reporting.as_ref().map(|r| (*op, r.token)))
                    .collect();
                let Some(&(op, token)) = reporting.get(usize::from(pick) % reporting.len().max(1))
                else {
                    return;
                };
                let progress = f64::from(progress % 4);
                let line = format!(
                    "{{\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{{\"progressToken\":{token},\"progress\":{progress}}}}}\n"
                );
                let now = self.now;
                let own = !self.failed
                    && self.ops.get_mut(&op).is_some_and(|model| {
                        if model.ended {
                            return false;
                        }
                        if let Some(r) = &mut model.reporting {
                            if r.last.is_none_or(|last| progress > last) {
                                r.last = Some(progress);
                                let next = now.saturating_add(r.every).min(r.until);
                                model.deadline = model.deadline.max(next);
                            }
                        }
                        true
                    });
                // A call's own report counts against no cap; one under the token of a call
                // that has ended is any notification.
                if own {
                    self.reports_due += 1;
                }
                self.input(line.as_bytes(), usize::from(!own));
                assert_eq!(self.reports_due, 0, "a call's report not given as its own");
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
                let size = line.len().div_ceil(usize::from(pieces % 4 + 1));
                for piece in line.as_bytes().chunks(size.max(1)) {
                    self.input(piece, 0);
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
                    self.input(line.as_bytes(), 0);
                }
            }
            Step::AnswerStranger => {
                self.input(
                    b"{\"jsonrpc\":\"2.0\",\"id\":\"3\",\"result\":{\"content\":[]}}\n",
                    0,
                );
            }
            Step::Notify { count } => {
                // A burst in one read: the client counts each message as it parses it.
                let count = usize::from(count % 20);
                let burst = b"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progressToken\":1,\"progress\":1}}\n"
                    .repeat(count);
                self.input(&burst, count);
            }
            Step::Ping => self.input(
                b"{\"jsonrpc\":\"2.0\",\"id\":\"p\",\"method\":\"ping\"}\n",
                1,
            ),
            Step::Tick { ms } => {
                self.now = self
                    .now
                    .saturating_add(Duration::from_millis(u64::from(ms % 4096)));
                self.client.handle_timeout(self.now);
                self.settle(false);
            }
            Step::Cancel { pick } => {
                if let Some(&op) = self.open.get(usize::from(pick) % self.open.len().max(1)) {
                    self.client.cancel(op).expect("cancel an open operation");
                    self.settle(true);
                }
            }
            Step::Roots { count } => {
                let roots: Vec<Root> = (0..count % 4)
                    .filter_map(|n| Root::new(format!("file:///srv/{n}")).ok())
                    .collect();
                let given = roots.len();
                let announced = self.announced;
                let set = self.client.set_roots(roots);
                self.settle(false);
                if self.failed {
                    assert_eq!(
                        set,
                        Err(Misuse::ConnectionFailed),
                        "roots on a failed client"
                    );
                } else {
                    assert_eq!(set, Ok(()), "roots refused by a healthy client");
                    self.roots = given;
                    assert_eq!(self.announced, announced + 1, "a change not announced");
                }
            }
            Step::Ask { hold } => {
                self.hold = hold;
                let failed = self.failed;
                let id = self.asked;
                self.asked += 1;
                let line = format!(
                    "{{\"jsonrpc\":\"2.0\",\"id\":\"e{id}\",\"method\":\"elicitation/create\",\"params\":{{\"message\":\"Name?\",\"requestedSchema\":{{\"type\":\"object\"}}}}}}\n"
                );
                self.input(line.as_bytes(), 1);
                if !failed && !self.failed {
                    assert!(self.held.len() <= self.asks_waiting, "past the bound");
                    assert_eq!(
                        self.asked,
                        self.replied + self.held.len(),
                        "a question neither answered, refused, nor kept"
                    );
                }
            }
            Step::AnswerAsks => {
                let held = core::mem::take(&mut self.held);
                for ticket in &held {
                    let answered = self.client.answer(*ticket, Reply::decline());
                    let expected = if self.failed {
                        Err(Misuse::ConnectionFailed)
                    } else {
                        Ok(())
                    };
                    assert_eq!(answered, expected, "a kept question answered");
                }
                if let Some(first) = held.first() {
                    let again = self.client.answer(*first, Reply::decline());
                    assert!(again.is_err(), "a question answered twice");
                }
                self.settle(false);
                if !self.failed {
                    assert_eq!(self.asked, self.replied, "an answer lost");
                }
            }
            Step::AskRoots => {
                let listed = self.listed.len();
                let failed = self.failed;
                self.input(
                    b"{\"jsonrpc\":\"2.0\",\"id\":\"r\",\"method\":\"roots/list\"}\n",
                    1,
                );
                if !failed {
                    assert_eq!(self.listed.len(), listed + 1, "roots/list unanswered");
                    assert_eq!(self.listed.last(), Some(&self.roots), "not the roots given");
                }
            }
        }
    }
}

/// Runs `steps` against a connected client whose server is this function, and asserts
/// after every read and tick: a call is refused exactly when the model says it must be (an
/// allowed, advertised call on a healthy connection under the in-flight limit is sent);
/// every operation ends exactly once; a result only ever reaches the operation whose
/// request it answered; an answer after a deadline or a cancel is never a result; no
/// operation outlives its deadline, which only progress a call asked for moves, never past
/// its hard maximum; each such report is the call's own and counts against no cap; the
/// notification cap holds; a refused call sends nothing. Returns whether the connection
/// failed.
pub fn run_session(steps: &[Step]) -> bool {
    let mut model = Model::connected();
    for step in steps {
        model.step(step);
    }
    // In the end every operation ends: time runs out, to the last deadline, for whatever
    // still waits.
    let last = model.ops.values().filter(|o| !o.ended).map(|o| o.deadline);
    model.now = last.fold(model.now, Instant::max);
    model.client.handle_timeout(model.now);
    model.settle(false);
    assert!(
        model.ops.values().all(|o| o.ended),
        "an operation never ended"
    );
    model.failed
}
