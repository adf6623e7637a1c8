//! What the tests that run the teaching server as a process share: a server with its own
//! folder and call log, and the client's configuration.

#![allow(dead_code, unreachable_pub, clippy::unwrap_used, clippy::panic)]

use std::io::{BufRead, BufReader};
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use mcp_sansio::{Allowlist, Config, Limits, RawObject};
use mcp_sansio_stdio::ServerCommand;

pub const DEADLINE: Duration = Duration::from_secs(1);
/// Slack over a deadline for process scheduling on a loaded machine; a regression that waits
/// forever still fails.
pub const SLACK: Duration = Duration::from_secs(5);

pub struct Server {
    pub log: PathBuf,
    pub dir: PathBuf,
}

impl Server {
    pub fn new(name: &str) -> Server {
        let dir =
            std::env::temp_dir().join(format!("mcp-checkpoint-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        Server {
            log: dir.join("calls.jsonl"),
            dir,
        }
    }

    pub fn command(&self, mode: &str) -> ServerCommand {
        ServerCommand::new(env!("CARGO_BIN_EXE_mcp-teaching-server"))
            .args(["serve", "--mode", mode, "--log"])
            .arg(&self.log)
            .arg("--pid-file")
            .arg(self.dir.join("server.pids"))
    }

    /// The pid of the child the `grandchild` mode started (the pid file's second line).
    pub fn grandchild_pid(&self) -> u32 {
        std::fs::read_to_string(self.dir.join("server.pids"))
            .unwrap()
            .lines()
            .nth(1)
            .expect("the grandchild's pid")
            .parse()
            .unwrap()
    }

    pub fn calls(&self) -> Vec<serde_json::Value> {
        logged_calls(&self.log)
    }

    /// The subscriptions the server saw opened and cancelled, in order.
    pub fn subscriptions(&self) -> Vec<serde_json::Value> {
        logged_subscriptions(&self.log)
    }

    /// How many subscriptions the server saw opened.
    pub fn listens(&self) -> usize {
        self.subscriptions()
            .iter()
            .filter(|entry| entry.get("listen").is_some())
            .count()
    }
}

/// The teaching server in `mode`, its stdin and stdout the socket `end`, in a process the test
/// started (not a `ServerCommand`: the stream is all the client knows of it). Killed when
/// dropped, if it has not exited.
pub struct OnSocket {
    pub child: Child,
}

impl OnSocket {
    pub fn start(server: &Server, mode: &str, end: OwnedFd) -> OnSocket {
        let input = end.try_clone().unwrap();
        let child = Command::new(env!("CARGO_BIN_EXE_mcp-teaching-server"))
            .args(["serve", "--mode", mode, "--log"])
            .arg(&server.log)
            .stdin(Stdio::from(input))
            .stdout(Stdio::from(end))
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        // The command, and with it this process's copies of the server's end, is dropped
        // here: the server alone holds it, so its exit closes the socket.
        OnSocket { child }
    }

    /// Waits, at most [`SLACK`], for the server to exit by itself.
    pub fn exits(&mut self) -> std::process::ExitStatus {
        let mut status = None;
        eventually("the server exits", || {
            status = self.child.try_wait().unwrap();
            status.is_some()
        });
        status.unwrap()
    }
}

impl Drop for OnSocket {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The subscriptions a teaching server logged at `log` as it saw them opened, cancelled and
/// ended, in order.
pub fn logged_subscriptions(log: &Path) -> Vec<serde_json::Value> {
    logged(log).into_iter().filter(is_subscription).collect()
}

/// Whether a log entry is a subscription's (`{"listen": ID, ...}`, `{"unsubscribed": ID}`,
/// `{"ended": ID}`), not a call's.
fn is_subscription(entry: &serde_json::Value) -> bool {
    ["listen", "unsubscribed", "ended"]
        .iter()
        .any(|key| entry.get(key).is_some())
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// The calls a teaching server logged at `log` (and what it logged of them: cancels,
/// answers), one JSON object each, without its subscriptions; none if it logged none.
pub fn logged_calls(log: &Path) -> Vec<serde_json::Value> {
    logged(log)
        .into_iter()
        .filter(|entry| !is_subscription(entry))
        .collect()
}

/// Everything a teaching server logged at `log`, one JSON object each. The server writes each
/// entry whole, but a read may still land mid-write: a last line without its newline is left
/// for the next look.
fn logged(log: &Path) -> Vec<serde_json::Value> {
    std::fs::read_to_string(log)
        .unwrap_or_default()
        .split_inclusive('\n')
        .filter(|line| line.ends_with('\n'))
        .map(|line| serde_json::from_str(line).unwrap())
        .collect()
}

pub fn config(allowed: &[&str]) -> Config {
    let mut config = Config::new(allowed.iter().copied().collect::<Allowlist>());
    config.limits = Limits::teaching();
    config.limits.operation_timeout = DEADLINE;
    config
}

/// The protocol's own error inside a blocking driver's failure; any other outcome fails the
/// test.
pub fn mcp(
    result: Result<impl std::fmt::Debug, mcp_sansio_stdio::StdioError>,
) -> mcp_sansio::Error {
    match result {
        Err(mcp_sansio_stdio::StdioError::Mcp(e)) => e,
        other => panic!("expected a protocol-level error, got {other:?}"),
    }
}

pub fn args(json: &str) -> RawObject {
    RawObject::parse(json, &Limits::default()).unwrap()
}

pub fn words() -> RawObject {
    args(r#"{"text":"vanilla stock needs review"}"#)
}

/// Waits, at most [`SLACK`], until `done` holds: the server is another process, so what it
/// did is seen a moment later.
pub fn eventually(what: &str, mut done: impl FnMut() -> bool) {
    let started = Instant::now();
    while !done() {
        assert!(started.elapsed() < SLACK, "never: {what}");
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// As [`eventually`], in a task: waits (bounded) until `done` holds, letting the runtime's
/// other tasks (a driver, a host's watchers) run meanwhile.
pub async fn eventually_async(what: &str, mut done: impl FnMut() -> bool) {
    let limit = tokio::time::Instant::now() + SLACK;
    while !done() {
        assert!(tokio::time::Instant::now() < limit, "never: {what}");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

/// Kills process `pid` outright (SIGKILL), as a crash would end it.
pub fn kill(pid: u32) {
    rustix::process::kill_process(
        rustix::process::Pid::from_raw(i32::try_from(pid).unwrap()).unwrap(),
        rustix::process::Signal::KILL,
    )
    .unwrap();
}

pub fn process_exists(pid: u32) -> bool {
    Path::new(&format!("/proc/{pid}")).exists()
}

/// The teaching server over HTTP; killed when dropped.
pub struct Served {
    pub child: Child,
    pub url: String,
    pub log: PathBuf,
}

impl Served {
    /// Starts the server with `extra` arguments (`--mode M`, `--sse`, ...), its call log
    /// named after `name`, and reads the URL it serves.
    pub fn start(name: &str, extra: &[&str]) -> Served {
        let log = std::env::temp_dir().join(format!("http-{}-{name}.jsonl", std::process::id()));
        let _ = std::fs::remove_file(&log);
        let mut child = Command::new(env!("CARGO_BIN_EXE_mcp-teaching-server"))
            .args(["serve", "--http", "127.0.0.1:0", "--log"])
            .arg(&log)
            .args(extra)
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let mut url = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut url)
            .unwrap();
        Served {
            child,
            url: url.trim().to_owned(),
            log,
        }
    }

    /// The calls this server logged, one JSON object each.
    pub fn calls(&self) -> Vec<serde_json::Value> {
        logged_calls(&self.log)
    }

    /// The subscriptions this server saw opened, cancelled and ended, in order.
    pub fn subscriptions(&self) -> Vec<serde_json::Value> {
        logged_subscriptions(&self.log)
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_file(&self.log);
    }
}

/// The `Mcp-Param-*` header (`Region` or `Zone`) the palette's `word_count` declares for its
/// `region`: the `moved-header` mode's marker of which listing the palette holds.
pub fn header_marker(palette: &mcp_sansio_host::Palette) -> Option<&'static str> {
    let tool = palette.tools().find(|t| t.name == "word_count").unwrap();
    let schema = tool.tool.input_schema.as_str();
    ["Region", "Zone"]
        .into_iter()
        .find(|m| schema.contains(&format!("\"x-mcp-header\":\"{m}\"")))
}

/// A call of `moved-header`'s `word_count`, refused for its old header, was sent again after
/// a new listing: `answer` is its count, the palette's `marker` now the new header's, and
/// the call ran once at `remote`.
pub fn assert_moved(remote: &Served, answer: &str, marker: Option<&str>) {
    assert_eq!(answer, "3");
    assert_eq!(marker, Some("Zone"));
    assert_eq!(
        remote.calls().len(),
        1,
        "refused before it ran, then ran once"
    );
}

/// A host's server `missing` whose program does not exist: it cannot start.
pub fn missing_server() -> mcp_sansio_stdio::HostServer {
    mcp_sansio_stdio::HostServer::new(
        "missing",
        ServerCommand::new("/nonexistent/mcp-server"),
        Config::new(Allowlist::none()),
    )
}
