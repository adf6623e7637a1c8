//! The teaching server as a library: [`serve`] runs it on this process's stdin and stdout,
//! so that a program (the `mcp-teaching-server` binary, an example) can start itself as the
//! server it talks to.
//!
//! The server appends every `tools/call` it receives to the `--log` file, one JSON line each,
//! so tests check what reached it without trusting the client, and writes its pid (and, in
//! the grandchild mode, its child's) to the `--pid-file`, so tests check that none is left.

// `serde_json::Value`'s string index reads give `Null` for anything missing, and this program
// only writes through it into objects it built itself: the index cannot panic here.
#![allow(clippy::indexing_slicing)]

use std::collections::HashSet;
use std::io::{self, BufRead, Write};
use std::sync::{mpsc, Arc, Mutex, PoisonError};

use std::time::{Duration, Instant};

use serde_json::{json, Value};

mod http;
mod modes;
mod wire;

use modes::Mode;

/// The value after `flag` in `args`.
fn option<'a>(args: &'a [String], flag: &str) -> Option<&'a str> {
    let at = args.iter().position(|a| a == flag)?;
    args.get(at + 1).map(String::as_str)
}

/// Options of `serve`.
struct Serve {
    mode: Mode,
    log: Option<std::fs::File>,
    delay: Duration,
    /// Where messages go: stdout, or (over HTTP) the reply being built.
    out: Out,
    /// The id of the last request answered, for the `stale` mode.
    last_answered: Option<Value>,
    /// A `tools/call` held back, for the `reverse` and `ask-flood` modes.
    held: Option<Value>,
    /// What each question of the `ask-flood` mode got, by its id.
    got: Vec<(String, Value)>,
    calls: usize,
    /// How many listings have been answered (their first pages).
    listed: usize,
    /// The ids (as JSON text) of the calls the client cancelled, for the `parallel` mode's
    /// answering threads.
    cancelled: Arc<Mutex<HashSet<String>>>,
    /// The `subscriptions/listen` request that stands, if one does (2026-07-28).
    listening: Option<Standing>,
    /// Over HTTP, the stream the `subscriptions/listen` just handled opened, for its reply
    /// to carry after the acknowledgement.
    opened: Option<Opened>,
    /// How many subscriptions have been made, which numbers each one.
    subscribed: u64,
    /// The least severe of [`LEVELS`] the client asked for with `logging/setLevel` (its
    /// index), in the handshake revisions; until it asks, no log messages are sent.
    log_level: Option<usize>,
}

/// The levels of log messages, least severe first.
const LEVELS: [&str; 8] = [
    "debug",
    "info",
    "notice",
    "warning",
    "error",
    "critical",
    "alert",
    "emergency",
];

/// Over HTTP, a subscription's stream as it opens: which subscription it is, and where what
/// it is told arrives, each message bare (the reply frames them).
pub(crate) struct Opened {
    pub(crate) number: u64,
    pub(crate) told: mpsc::Receiver<Value>,
}

/// A subscription that stands: its number, its request's id, whether it asked for the tool
/// list's changes, and, over HTTP, the stream its messages go on (over stdio they go to
/// stdout with the rest).
struct Standing {
    number: u64,
    id: Value,
    tools: bool,
    stream: Option<mpsc::SyncSender<Value>>,
}

/// How many messages wait for a subscription's HTTP stream at most; past that, a client
/// that does not read its stream misses them, and no other request waits for it.
const STREAM_BACKLOG: usize = 64;

/// How many bytes of answers the stdio loop holds at most before it writes them, even with
/// more requests waiting: the client reads the first answers while later ones are made.
const FLUSH_BYTES: usize = 4096;

/// Where the server's messages go.
enum Out {
    /// Stdout, through what is written and not yet flushed: the stdio loop flushes before it
    /// waits for more input, so a client with many requests in flight gets their answers in
    /// one write, and one that waits for each gets it at once.
    Stdout(Vec<u8>),
    /// Over HTTP: the lines of the reply to the request being handled.
    Reply(Vec<u8>),
}

/// The revision whose requests carry their own `_meta`, served without a session.
const STATELESS: &str = "2026-07-28";

/// The `_meta` that ties a notification to subscription `id`.
fn subscription(id: &Value) -> Value {
    json!({"io.modelcontextprotocol/subscriptionId": id})
}

impl Out {
    /// Whether messages go to stdout, where a subscription can stand.
    fn is_stdout(&self) -> bool {
        matches!(self, Out::Stdout(_))
    }

    /// Writes `bytes` (held until [`flush`](Self::flush), on stdout).
    fn write(&mut self, bytes: &[u8]) {
        match self {
            Out::Stdout(pending) | Out::Reply(pending) => pending.extend_from_slice(bytes),
        }
    }

    /// How many bytes wait for [`flush`](Self::flush).
    fn held(&self) -> usize {
        match self {
            Out::Stdout(pending) => pending.len(),
            Out::Reply(_) => 0,
        }
    }

    /// Writes what is held to stdout, whole, under one lock (the parallel mode's threads
    /// write too).
    fn flush(&mut self) {
        if let Out::Stdout(pending) = self {
            if !pending.is_empty() {
                let mut out = io::stdout().lock();
                let _ = out.write_all(pending);
                let _ = out.flush();
                pending.clear();
            }
        }
    }
}

/// Serves on stdin and stdout until stdin ends, or over HTTP with `--http ADDR`, as
/// `serve`'s `args` say (`--mode MODE`, `--log PATH`, `--pid-file PATH`, `--delay-ms N`,
/// `--http ADDR`, `--sse`, `--token TOKEN`).
///
/// # Errors
/// A sentence for the user when an argument is wrong or a file cannot be opened.
pub fn serve(args: &[String]) -> Result<(), String> {
    let mode = Mode::parse(option(args, "--mode").unwrap_or("normal"))?;
    let log = option(args, "--log")
        .map(|path| {
            std::fs::File::options()
                .create(true)
                .append(true)
                .open(path)
                .map_err(|e| format!("cannot open the call log {path}: {e}"))
        })
        .transpose()?;
    let delay = Duration::from_millis(
        option(args, "--delay-ms")
            .map(|d| {
                d.parse()
                    .map_err(|_| format!("--delay-ms {d:?} is not a number"))
            })
            .transpose()?
            .unwrap_or(1500),
    );
    // The server's own pid, then (grandchild mode) its child's: tests check each is gone.
    let mut pids = vec![std::process::id()];
    if mode == Mode::Grandchild {
        // A child that would outlive the server, holding its pipes open, unless the whole
        // process group is ended.
        let child = std::process::Command::new("sleep")
            .arg("600")
            .spawn()
            .map_err(|e| format!("cannot start the grandchild: {e}"))?;
        pids.push(child.id());
    }
    if let Some(path) = option(args, "--pid-file") {
        let lines: String = pids.iter().map(|pid| format!("{pid}\n")).collect();
        std::fs::write(path, lines).map_err(|e| format!("cannot write {path}: {e}"))?;
    }
    let ignore_term = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    if mode == Mode::Stubborn {
        signal_hook::flag::register(signal_hook::consts::SIGTERM, ignore_term)
            .map_err(|e| format!("cannot ignore SIGTERM: {e}"))?;
    }
    let mut server = Serve {
        mode,
        log,
        delay,
        out: Out::Stdout(Vec::new()),
        last_answered: None,
        held: None,
        got: Vec::new(),
        calls: 0,
        listed: 0,
        cancelled: Arc::default(),
        listening: None,
        opened: None,
        subscribed: 0,
        log_level: None,
    };
    if let Some(addr) = option(args, "--http") {
        server.out = Out::Reply(Vec::new());
        let options = http::Options {
            sse: args.iter().any(|a| a == "--sse"),
            token: option(args, "--token").map(String::from),
        };
        return http::serve(addr, server, options);
    }
    let mut input = io::BufReader::with_capacity(64 * 1024, io::stdin());
    let mut line = String::new();
    loop {
        if !input.buffer().contains(&b'\n') || server.out.held() >= FLUSH_BYTES {
            // Nothing more to answer without waiting, or enough for one write: what was
            // answered goes out now.
            server.out.flush();
        }
        line.clear();
        match input.read_line(&mut line) {
            Ok(0) | Err(_) => break,
            Ok(_) => {}
        }
        let text = line.trim_end_matches(['\n', '\r']);
        if mode == Mode::StderrLog {
            eprintln!("teaching server read {} bytes", text.len());
        }
        let Ok(message) = serde_json::from_str::<Value>(text) else {
            server.send(
                &json!({"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}),
            );
            continue;
        };
        if mode == Mode::CloseInput && message.get("id").is_some() {
            // Input closed before the handshake's answer, so the client's next write fails.
            let null = std::fs::File::open("/dev/null")
                .map_err(|e| format!("cannot open /dev/null: {e}"))?;
            rustix::stdio::dup2_stdin(&null).map_err(|e| format!("cannot close stdin: {e}"))?;
            server.handle(&message);
            server.out.flush();
            // Output stays open, silent, until the client ends the process group.
            loop {
                std::thread::sleep(Duration::from_secs(60));
            }
        }
        if mode == Mode::Deaf && message["method"] == "tools/call" {
            // Input is never read again: the pipe fills and the client's writes wait, while
            // requests keep coming until a write fails.
            server.out.flush();
            let mut stdout = io::stdout().lock();
            for n in 0_u64.. {
                let ping = format!("{{\"jsonrpc\":\"2.0\",\"id\":\"p{n}\",\"method\":\"ping\"}}\n");
                if stdout.write_all(ping.as_bytes()).is_err() {
                    break;
                }
            }
            return Ok(());
        }
        server.handle(&message);
    }
    server.out.flush();
    if mode == Mode::Stubborn {
        // Ignores end of input too: only SIGKILL ends it.
        loop {
            std::thread::sleep(Duration::from_secs(60));
        }
    }
    Ok(())
}

impl Serve {
    fn send(&mut self, message: &Value) {
        self.out.write(format!("{message}\n").as_bytes());
    }

    /// How long the parallel mode holds the answer to request `id`: up to `--delay-ms`,
    /// spread by the id, so answers overtake one another.
    fn parallel_delay(&self, id: &Value) -> Duration {
        let spread = u64::try_from(self.delay.as_millis())
            .unwrap_or(u64::MAX)
            .saturating_add(1);
        Duration::from_millis(id.as_u64().unwrap_or(0).wrapping_mul(7919) % spread)
    }

    /// Appends `entry` to the call log, if there is one, as one write of the whole line: a
    /// test reading the log while the server runs never sees half an entry (`writeln!` on a
    /// file writes each formatted piece on its own).
    fn log_entry(&mut self, entry: &Value) {
        if let Some(log) = self.log.as_mut() {
            let _ = log.write_all(format!("{entry}\n").as_bytes());
        }
    }

    fn answer(&mut self, id: &Value, result: Value) {
        self.last_answered = Some(id.clone());
        self.send(&json!({"jsonrpc":"2.0","id":id,"result":result}));
    }

    fn error(&mut self, id: &Value, code: i64, message: &str, data: Option<Value>) {
        let mut error = json!({"code": code, "message": message});
        if let Some(data) = data {
            error["data"] = data;
        }
        self.send(&json!({"jsonrpc":"2.0","id":id,"error":error}));
    }

    fn handle(&mut self, message: &Value) {
        let Some(method) = message.get("method").and_then(Value::as_str) else {
            if self.mode == Mode::AskFlood {
                self.answered(message);
            }
            return;
        };
        let Some(id) = message.get("id") else {
            // Notifications need no answer; a cancelled subscription ends, and the log says
            // so; the parallel mode witnesses cancellations.
            let request = &message["params"]["requestId"];
            if method == "notifications/cancelled"
                && self.listening.as_ref().is_some_and(|s| s.id == *request)
            {
                self.listening = None;
                self.log_entry(&json!({"unsubscribed": request}));
            }
            if self.mode == Mode::Parallel && method == "notifications/cancelled" {
                let request = message["params"]["requestId"].clone();
                self.log_entry(&json!({"cancelled": request}));
                self.cancelled
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .insert(request.to_string());
            }
            return;
        };
        let empty = json!({});
        let params = message.get("params").unwrap_or(&empty);
        let requested = params["_meta"]["io.modelcontextprotocol/protocolVersion"].as_str();
        if self.mode == Mode::Modern && method != "server/discover" && requested.is_none() {
            return self.error(
                id,
                -32602,
                "missing io.modelcontextprotocol/protocolVersion in _meta",
                None,
            );
        }
        match method {
            "server/discover" => self.discover(id, requested),
            "initialize" => self.initialize(id, params),
            "ping" => self.answer(id, json!({})),
            "tools/list" => self.list(id, params),
            "tools/call" => self.call(id, params),
            "logging/setLevel" if requested != Some(STATELESS) => self.set_level(id, params),
            "subscriptions/listen" if requested == Some(STATELESS) => {
                self.listen(id, params);
            }
            _ => self.error(id, -32601, "Method not found", None),
        }
    }

    /// A subscription (2026-07-28): the tool list's changes are all this server has to
    /// tell, so that is all it honours (and, in `stray-changes`, the prompts' too, which it
    /// never sends anyway, as a careless server acknowledges what it has not). It stands,
    /// unanswered, until cancelled; over HTTP on a stream of its own, which its
    /// acknowledgement opens and its end closes. One stands at a time: a new one ends the
    /// last one's stream.
    fn listen(&mut self, id: &Value, params: &Value) {
        let asked = &params["notifications"];
        self.log_entry(&json!({"listen": id, "notifications": asked}));
        let tools = asked["toolsListChanged"] == json!(true);
        let mut honoured = json!({});
        if tools {
            honoured["toolsListChanged"] = json!(true);
        }
        if self.mode == Mode::StrayChanges {
            honoured["promptsListChanged"] = json!(true);
        }
        self.send(
            &json!({"jsonrpc": "2.0", "method": "notifications/subscriptions/acknowledged",
            "params": {"notifications": honoured, "_meta": subscription(id)}}),
        );
        self.subscribed += 1;
        let number = self.subscribed;
        let stream = (!self.out.is_stdout()).then(|| {
            let (stream, told) = mpsc::sync_channel(STREAM_BACKLOG);
            self.opened = Some(Opened { number, told });
            stream
        });
        self.listening = Some(Standing {
            number,
            id: id.clone(),
            tools,
            stream,
        });
        if self.mode == Mode::EndAtOnce {
            self.end_subscription(id);
        }
    }

    /// Ends subscription `id`, the one that stands, as the server's own doing: its result,
    /// on its stream over HTTP, which then ends.
    fn end_subscription(&mut self, id: &Value) {
        self.log_entry(&json!({"ended": id}));
        self.tell(&json!({"jsonrpc": "2.0", "id": id,
            "result": {"resultType": "complete", "_meta": subscription(id)}}));
        self.listening = None;
    }

    /// Sends `message` on the subscription that stands: on its stream over HTTP, where a
    /// full or closed stream loses it; with the rest over stdio.
    fn tell(&mut self, message: &Value) {
        match self.listening.as_ref().and_then(|s| s.stream.as_ref()) {
            Some(stream) => {
                let _ = stream.try_send(message.clone());
            }
            None => self.send(message),
        }
    }

    /// Over HTTP, the stream the `subscriptions/listen` just handled opened, if it did.
    fn take_opened(&mut self) -> Option<Opened> {
        self.opened.take()
    }

    /// Over HTTP, subscription `number`'s stream has closed. If the subscription still
    /// stands, the server did not end it: the client closed the stream, which in 2026-07-28
    /// is its cancel, and the log says so as it does for a cancel over stdio.
    fn stream_closed(&mut self, number: u64) {
        let Some(standing) = self.listening.take_if(|s| s.number == number) else {
            return;
        };
        self.log_entry(&json!({"unsubscribed": standing.id}));
    }

    /// In 2026-07-28, what a subscription hears of this call: the tool list's change, in
    /// `list-changed`, on a subscription that asked for it; its end, in `end-subscriptions`;
    /// in `stray-changes`, what it did not ask for, or on a subscription it does not hold.
    fn tell_subscribers(&mut self) {
        let Some((id, tools)) = self.listening.as_ref().map(|s| (s.id.clone(), s.tools)) else {
            return;
        };
        let change = |method: &str, meta: Value, params: Value| {
            let mut params = params;
            params["_meta"] = meta;
            json!({"jsonrpc": "2.0", "method": method, "params": params})
        };
        match self.mode {
            Mode::ListChanged if tools && self.calls == 1 => self.tell(&change(
                "notifications/tools/list_changed",
                subscription(&id),
                json!({}),
            )),
            Mode::EndSubscriptions if self.calls == 1 => self.end_subscription(&id),
            Mode::StrayChanges => {
                let stray = json!(id.as_i64().unwrap_or(0) + 1000);
                for message in [
                    change(
                        "notifications/tools/list_changed",
                        subscription(&stray),
                        json!({}),
                    ),
                    change(
                        "notifications/tools/list_changed",
                        subscription(&json!(id.to_string())),
                        json!({}),
                    ),
                    change(
                        "notifications/prompts/list_changed",
                        subscription(&id),
                        json!({}),
                    ),
                    change(
                        "notifications/resources/updated",
                        subscription(&id),
                        json!({"uri": "file:///stray"}),
                    ),
                    change(
                        "notifications/subscriptions/acknowledged",
                        subscription(&id),
                        json!({"notifications": {"resourcesListChanged": true}}),
                    ),
                ] {
                    self.tell(&message);
                }
            }
            _ => {}
        }
    }

    fn discover(&mut self, id: &Value, requested: Option<&str>) {
        let supported = self.mode.supported();
        if supported.is_empty() {
            return self.error(id, -32601, "Method not found", None);
        }
        if !requested.is_some_and(|v| supported.contains(&v)) {
            let data = json!({"supported": supported, "requested": requested});
            return self.error(id, -32022, "Unsupported protocol version", Some(data));
        }
        self.answer(
            id,
            json!({
                "resultType": "complete",
                "supportedVersions": supported,
                // Its changes are told on subscriptions (`subscriptions/listen`).
                "capabilities": {"tools": {"listChanged": true}, "logging": {}},
                "ttlMs": 60000,
                "cacheScope": "public",
                "_meta": {"io.modelcontextprotocol/serverInfo": {"name": self.mode.server_name(), "version": "1"}}
            }),
        );
    }

    fn initialize(&mut self, id: &Value, params: &Value) {
        if self.mode == Mode::Modern {
            return self.error(id, -32601, "Method not found", None);
        }
        // A new session (over HTTP, one renewed) starts with no log level asked for.
        self.log_level = None;
        let asked = params["protocolVersion"].as_str().unwrap_or_default();
        let version = match self.mode {
            Mode::OldVersion => "2024-11-05",
            _ if asked == "2025-11-25" => "2025-11-25",
            _ => "2025-06-18",
        };
        self.answer(
            id,
            json!({
                "protocolVersion": version,
                "capabilities": {"tools": {"listChanged": false}, "logging": {}},
                "serverInfo": {"name": self.mode.server_name(), "version": "1"}
            }),
        );
    }

    fn list(&mut self, id: &Value, params: &Value) {
        let mut tools = modes::tools(self.mode);
        let adds = matches!(
            self.mode,
            Mode::ListChanged | Mode::ChangeLater | Mode::EndSubscriptions
        );
        if adds && self.calls > 0 {
            tools.push(modes::letter_count());
        }
        let page: usize = params["cursor"]
            .as_str()
            .and_then(|c| c.strip_prefix("page-"))
            .and_then(|n| n.parse().ok())
            .unwrap_or(0);
        if let Some(header) = modes::region_header(self.mode, self.listed) {
            tools[0]["inputSchema"]["properties"]["region"] =
                json!({"type": "string", "x-mcp-header": header});
        }
        if page == 0 {
            self.listed += 1;
            if self.mode == Mode::ChangeFlood {
                self.log_entry(&json!({"listed": self.listed}));
            }
        }
        let mut result = match self.mode {
            Mode::Paginate => {
                let chunk: Vec<&Value> = tools.iter().skip(page * 3).take(3).collect();
                let mut result = json!({"tools": chunk});
                if (page + 1) * 3 < tools.len() {
                    result["nextCursor"] = json!(format!("page-{}", page + 1));
                }
                result
            }
            Mode::EndlessCursor => json!({"tools": [], "nextCursor": format!("page-{}", page + 1)}),
            // A new tool on each page, but the same cursor again from the second page on.
            Mode::RepeatCursor => json!({"tools": tools.get(page..=page), "nextCursor": "page-1"}),
            _ => json!({"tools": tools}),
        };
        if self.mode == Mode::Modern {
            result["resultType"] = json!("complete");
            result["ttlMs"] = json!(60000);
            result["cacheScope"] = json!("public");
        }
        self.answer(id, result);
    }

    /// `logging/setLevel` (the handshake revisions): from now on, log messages at `level`
    /// and above; logged as `{"set_level": LEVEL}`.
    fn set_level(&mut self, id: &Value, params: &Value) {
        let level = &params["level"];
        self.log_entry(&json!({"set_level": level}));
        match LEVELS.iter().position(|l| level == *l) {
            Some(rank) => {
                self.log_level = Some(rank);
                self.answer(id, json!({}));
            }
            None => self.error(id, -32602, "Invalid log level", None),
        }
    }

    fn call(&mut self, id: &Value, params: &Value) {
        self.calls += 1;
        self.log_entry(
            &json!({"id": id, "name": params["name"], "arguments": params["arguments"]}),
        );
        let stateless = params["_meta"]["io.modelcontextprotocol/protocolVersion"] == STATELESS;
        // The log messages asked for: in 2026-07-28 by the request itself (without a level,
        // none); before, by `logging/setLevel`.
        let least = if stateless {
            match &params["_meta"]["io.modelcontextprotocol/logLevel"] {
                Value::Null => None,
                asked => match LEVELS.iter().position(|l| asked == *l) {
                    Some(rank) => Some(rank),
                    None => return self.error(id, -32602, "Invalid log level", None),
                },
            }
        } else {
            self.log_level
        };
        let result = match tool_result(params) {
            Ok(result) => result,
            Err(refusal) => return self.error(id, -32602, refusal, None),
        };
        // What the call did, at two levels, before its answer.
        let done = format!("{} answered", params["name"].as_str().unwrap_or("?"));
        let told = [
            (
                0,
                json!({"tool": params["name"], "arguments": params["arguments"]}),
            ),
            (1, json!(done)),
        ];
        for (rank, data) in told {
            if least.is_some_and(|least| rank >= least) {
                self.send(&json!({"jsonrpc": "2.0", "method": "notifications/message",
                    "params": {"level": LEVELS[rank], "logger": "lucy", "data": data}}));
            }
        }
        if stateless {
            self.tell_subscribers();
        } else if self.mode == Mode::ListChanged && self.calls == 1 {
            self.send(&json!({"jsonrpc":"2.0","method":"notifications/tools/list_changed"}));
        } else if self.mode == Mode::ChangeFlood && self.calls == 1 {
            for _ in 0..15 {
                self.send(&json!({"jsonrpc":"2.0","method":"notifications/tools/list_changed"}));
            }
            self.send(&json!({"jsonrpc":"2.0","method":"notifications/message",
                "params": {"level": "info", "data": "15 changes told"}}));
        }
        // The token the call asked progress under, or else the call's id (unasked).
        let token = match &params["_meta"]["progressToken"] {
            Value::Null => id.clone(),
            asked => asked.clone(),
        };
        let progress = |n: usize| json!({"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken": token, "progress": n}});
        match self.mode {
            Mode::WrongId => {
                let wrong = json!(id.as_i64().unwrap_or(0) + 1);
                self.answer(&wrong, result);
            }
            Mode::Stale => {
                let stale = self.last_answered.clone().unwrap_or(json!(0));
                self.answer(&stale, result);
            }
            Mode::TrueId => self.answer(&json!(true), result),
            Mode::Late if self.calls == 1 => {
                // What was answered before goes out first, not after the delay.
                self.out.flush();
                std::thread::sleep(self.delay);
                self.answer(id, result);
            }
            Mode::Oversized => self.answer(id, text_result(&"x".repeat(100_000))),
            Mode::StdoutLog => {
                self.out.write(b"calling tool now\n");
                self.answer(id, result);
            }
            Mode::Hang => {}
            Mode::Trickle => {
                let line = format!("{}\n", json!({"jsonrpc":"2.0","id":id,"result":result}));
                // Over HTTP the reply is dripped by the transport instead.
                for byte in line.as_bytes() {
                    self.out.write(&[*byte]);
                    self.out.flush();
                    if matches!(self.out, Out::Stdout(_)) {
                        std::thread::sleep(Duration::from_millis(20));
                    }
                }
            }
            Mode::Notify => {
                // As a real tool reports: how far of how much, and what it is doing.
                for n in 1..=3 {
                    let mut report = progress(n);
                    report["params"]["total"] = json!(3);
                    report["params"]["message"] = json!(format!("counting, pass {n}"));
                    self.send(&report);
                }
                self.answer(id, result);
            }
            Mode::Flood => {
                for n in 1..=17 {
                    self.send(&progress(n));
                }
                self.answer(id, result);
            }
            Mode::Parallel if matches!(self.out, Out::Stdout(_)) => {
                let line = format!("{}\n", json!({"jsonrpc":"2.0","id":id,"result":result}));
                let delay = self.parallel_delay(id);
                let key = id.to_string();
                let cancelled = Arc::clone(&self.cancelled);
                std::thread::spawn(move || {
                    std::thread::sleep(delay);
                    let skip = cancelled
                        .lock()
                        .unwrap_or_else(PoisonError::into_inner)
                        .contains(&key);
                    if !skip {
                        let mut out = io::stdout().lock();
                        let _ = out.write_all(line.as_bytes());
                        let _ = out.flush();
                    }
                });
            }
            Mode::AskFlood => {
                let form = json!({"message": "Name?", "requestedSchema": {"type": "object",
                    "properties": {"name": {"type": "string"}}}});
                let mut questions: Vec<(String, &str, Value)> = (0..10)
                    .map(|n| (format!("ask-{n:02}"), "elicitation/create", form.clone()))
                    .collect();
                questions.push((
                    String::from("ask-bad"),
                    "elicitation/create",
                    json!({"message": "Name?"}),
                ));
                questions.push((
                    String::from("ask-sample"),
                    "sampling/createMessage",
                    json!({"messages": [], "maxTokens": 5}),
                ));
                for (ask, method, params) in questions {
                    self.send(
                        &json!({"jsonrpc": "2.0", "id": ask, "method": method, "params": params}),
                    );
                }
                self.got.clear();
                self.held = Some(id.clone());
            }
            Mode::Reverse => match self.held.take() {
                None => self.held = Some(json!({"id": id, "result": result})),
                Some(first) => {
                    self.answer(id, result);
                    self.answer(&first["id"], first["result"].clone());
                }
            },
            _ => self.answer(id, result),
        }
        if self.mode == Mode::ChangeLater && self.calls == 1 {
            self.change_later(stateless);
        }
    }

    /// `change-later`: the tool list's change, `--delay-ms` after the first call, from a
    /// thread of its own, so that the server goes on serving meanwhile: over stdio with the
    /// rest (unasked in a 2025 session), over HTTP on the subscription's stream; in
    /// 2026-07-28 only to a subscription that asked for it.
    fn change_later(&self, stateless: bool) {
        let listening = self.listening.as_ref().filter(|s| s.tools);
        let mut message = json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"});
        if stateless {
            let Some(standing) = listening else {
                return;
            };
            message["params"] = json!({"_meta": subscription(&standing.id)});
        }
        let stream = listening.and_then(|s| s.stream.clone());
        let stdout = self.out.is_stdout();
        let delay = self.delay;
        std::thread::spawn(move || {
            std::thread::sleep(delay);
            match stream {
                Some(stream) => {
                    let _ = stream.try_send(message);
                }
                None if stdout => {
                    let mut out = io::stdout().lock();
                    let _ = out.write_all(format!("{message}\n").as_bytes());
                    let _ = out.flush();
                }
                None => {}
            }
        });
    }
}

impl Serve {
    /// The `ask-flood` mode: the client's answer to one of its questions, logged; once all
    /// twelve are in, the held call is answered with what each got.
    fn answered(&mut self, message: &Value) {
        let Some(ask) = message["id"].as_str() else {
            return;
        };
        let got = match (message.get("result"), message.get("error")) {
            (Some(result), _) => result["action"].clone(),
            (_, Some(error)) => error["code"].clone(),
            _ => Value::Null,
        };
        self.log_entry(&json!({"answer_to": ask, "got": got}));
        self.got.push((ask.to_owned(), got));
        if self.got.len() < 12 {
            return;
        }
        self.got.sort_by(|a, b| a.0.cmp(&b.0));
        let lines: Vec<String> = self
            .got
            .iter()
            .map(|(ask, got)| format!("{ask} {got}"))
            .collect();
        if let Some(call) = self.held.take() {
            self.answer(&call, text_result(&lines.join("\n")));
        }
    }
}

/// What the tool `params` name answers to its arguments (the tool's own error among them),
/// or the server's refusal of the call (-32602) in a few words.
fn tool_result(params: &Value) -> Result<Value, &'static str> {
    let arguments = &params["arguments"];
    Ok(match params["name"].as_str() {
        Some("word_count") => match arguments["text"].as_str() {
            Some(text) => text_result(&text.split_whitespace().count().to_string()),
            // A tool error, for the model to read: the tool ran and refused its input.
            None => {
                json!({"content": [{"type": "text", "text": "word_count needs a text to count"}], "isError": true})
            }
        },
        Some("search_policy") => {
            text_result("Refunds are accepted within 30 days of delivery, up to the order's total.")
        }
        Some("process_refund") => {
            let order = arguments["order_id"].as_str().unwrap_or("?");
            let amount = arguments["amount"].as_f64().unwrap_or(0.0);
            text_result(&format!("refunded {amount:.2} on {order}"))
        }
        Some("letter_count") => {
            let text = arguments["text"]
                .as_str()
                .ok_or("letter_count needs a text")?;
            text_result(
                &text
                    .chars()
                    .filter(|c| c.is_alphabetic())
                    .count()
                    .to_string(),
            )
        }
        Some("place_purchase") => {
            let tubs = arguments["tubs"].as_u64().unwrap_or(1);
            text_result(&format!("ordered {tubs} tubs"))
        }
        _ => return Err("Unknown tool"),
    })
}

/// A tool result of one text block, with the `_meta` and `annotations` members a client must
/// keep when it writes the result back out.
fn text_result(text: &str) -> Value {
    json!({
        "content": [{"type": "text", "text": text, "annotations": {"audience": ["user"]}}],
        "isError": false,
        "_meta": {"lucy/served-by": "teaching-server"}
    })
}

/// How long a run took, in milliseconds with a fraction.
pub fn millis(since: Instant) -> f64 {
    since.elapsed().as_secs_f64() * 1000.0
}
