//! mcp-compare: one run, three clients, the same real servers, over stdio and over Streamable
//! HTTP. Measures mcp-sansio (`StdioClient`, `HttpClient`), rmcp (the official Rust SDK, its
//! child-process and streamable HTTP clients) and a plain Python client, and over HTTP a
//! floor (a minimal keep-alive HTTP/1.1 client that posts fixed bytes and reads the reply
//! without parsing it), for
//!
//! - connect time: from starting the server process to a finished handshake, and
//! - per-call latency: each of N sequential `tools/call`s, after 100 warm-up calls,
//!
//! in several rounds where the clients take turns, because where the scheduler places the
//! client and the server on the machine's cores moves a pipe round trip by a factor of two
//! or more from one run to the next; the table pools the rounds and shows the spread of the
//! rounds' medians. Over stdio, everything is measured against the teaching server (whose own
//! cost is tiny, so the client's shows) and `@modelcontextprotocol/server-everything`; over
//! HTTP, against the teaching server and the Python SDK's server, both replying in JSON and
//! started once per table (so connect is the handshake alone). A third table has 64 tasks
//! calling at once over stdio: mcp-sansio's async driver, and its async host over the same
//! driver, against rmcp, all on one current-thread tokio runtime. Prints Markdown tables.
//!
//! ```text
//! scripts/compare [--calls N] [--connects N] [--rounds N] [--only stdio|tasks|http]
//! ```
//!
//! (The script installs the peers, builds in release mode, and runs this.)

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use mcp_sansio::{Allowlist, CallToolResult, Config, Limits, ProtocolChoice, RawObject};
use mcp_sansio_stdio::{ServerCommand, StdioClient, DEFAULT_GRACE};

mod concurrent;
mod http;

/// Calls made before measuring, by every client.
const WARM_UP: usize = 100;

/// A server to measure against, and the call to make.
struct Server {
    name: &'static str,
    /// The program and arguments that start it, or (over HTTP) the URL it serves.
    target: Target,
    tool: &'static str,
    arguments: &'static str,
    /// The text the call must answer: every client's first answer is checked.
    expected: &'static str,
}

/// Where a server is.
enum Target {
    /// Started for each connection, spoken to over stdio.
    Process(Vec<OsString>),
    /// Already serving Streamable HTTP at this URL.
    Url(String),
}

/// The clients measured, ours first (the others are compared with it).
#[derive(Clone, Copy)]
enum Client {
    Ours(ProtocolChoice),
    /// The async driver, on a current-thread tokio runtime, one call at a time.
    Async,
    Rmcp,
    Python,
    /// HTTP only: fixed bytes out, the reply read by its length, nothing parsed.
    Floor,
}

impl Client {
    const STDIO: [Client; 5] = [
        Client::Ours(ProtocolChoice::Auto),
        Client::Ours(ProtocolChoice::Stateful),
        Client::Async,
        Client::Rmcp,
        Client::Python,
    ];

    const HTTP: [Client; 6] = [
        Client::Ours(ProtocolChoice::Auto),
        Client::Ours(ProtocolChoice::Stateful),
        Client::Async,
        Client::Rmcp,
        Client::Python,
        Client::Floor,
    ];

    fn name(self) -> &'static str {
        match self {
            Client::Ours(ProtocolChoice::Stateful) => "mcp-sansio (stateful)",
            Client::Ours(_) => "mcp-sansio (auto)",
            Client::Async => "mcp-sansio-tokio (auto)",
            Client::Rmcp => "rmcp 3.11",
            Client::Python => "plain Python",
            Client::Floor => "floor (fixed bytes, no parsing)",
        }
    }

    fn measure(self, server: &Server, options: &Options, script: &Path) -> Result<Sample, String> {
        match (self, &server.target) {
            (Client::Ours(protocol), Target::Process(argv)) => {
                measure_ours(server, argv, options, protocol)
            }
            (Client::Ours(protocol), Target::Url(url)) => {
                http::measure_ours(server, url, options, protocol)
            }
            (Client::Async, _) => concurrent::measure_one_at_a_time(server, options),
            (Client::Rmcp, Target::Process(argv)) => measure_rmcp(server, argv, options),
            (Client::Rmcp, Target::Url(url)) => http::measure_rmcp(server, url, options),
            (Client::Python, target) => measure_python(server, target, options, script),
            (Client::Floor, Target::Url(url)) => http::measure_floor(server, url, options),
            (Client::Floor, Target::Process(_)) => Err(String::from("the floor is HTTP only")),
        }
    }
}

/// What one client measured against one server.
#[derive(Default)]
struct Sample {
    connect: Vec<Duration>,
    calls: Vec<Duration>,
    /// The client process's CPU time (user and system, every thread) over the measured calls:
    /// its own cost, which the scheduler's placement of the two processes does not move.
    cpu: Duration,
}

/// CPU time this process has used so far, every thread included.
fn process_cpu() -> Duration {
    let t = rustix::time::clock_gettime(rustix::time::ClockId::ProcessCPUTime);
    Duration::new(
        t.tv_sec.unsigned_abs(),
        u32::try_from(t.tv_nsec).unwrap_or(0),
    )
}

/// The options of a run.
struct Options {
    calls: usize,
    connects: usize,
    rounds: usize,
}

fn main() -> std::process::ExitCode {
    match run() {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("mcp-compare: {message}");
            std::process::ExitCode::FAILURE
        }
    }
}

fn run() -> Result<(), String> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let number = |flag: &str, default: usize| -> Result<usize, String> {
        match args.iter().position(|a| a == flag) {
            None => Ok(default),
            Some(at) => args
                .get(at + 1)
                .and_then(|n| n.parse().ok())
                .filter(|n| *n > 0)
                .ok_or_else(|| format!("{flag} needs a positive number")),
        }
    };
    let options = Options {
        calls: number("--calls", 1000)?,
        connects: number("--connects", 5)?,
        rounds: number("--rounds", 5)?,
    };
    let only = args
        .iter()
        .position(|a| a == "--only")
        .map(|at| args.get(at + 1).map(String::as_str).unwrap_or_default());
    if only.is_some_and(|table| !["stdio", "tasks", "http"].contains(&table)) {
        return Err(String::from("--only takes stdio, tasks or http"));
    }
    let shows = |table: &str| only.is_none_or(|only| only == table);
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    let teaching = exe.with_file_name("mcp-teaching-server");
    if !teaching.exists() {
        return Err(format!(
            "{} is missing: build it with cargo build --release -p mcp-teaching-server",
            teaching.display()
        ));
    }
    let peers = std::env::var_os("MCP_INTEROP_PEERS")
        .map(PathBuf::from)
        .ok_or("MCP_INTEROP_PEERS is not set: run scripts/compare, which installs the peers")?;
    let servers = [
        Server {
            name: "teaching server (Rust)",
            target: Target::Process(vec![teaching.clone().into(), "serve".into()]),
            tool: "word_count",
            arguments: r#"{"text":"vanilla stock needs review"}"#,
            expected: "4",
        },
        Server {
            name: "server-everything (Node.js)",
            target: Target::Process(vec![
                peers.join("node_modules/.bin/mcp-server-everything").into(),
                "stdio".into(),
            ]),
            tool: "echo",
            arguments: r#"{"message":"vanilla stock needs review"}"#,
            expected: "Echo: vanilla stock needs review",
        },
    ];
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("plain_client.py");
    println!(
        "{} rounds, the clients taking turns (each round starting with the next); each round: {} connects, \
         then {} calls after {WARM_UP} warm-up calls, one at a time\n",
        options.rounds, options.connects, options.calls
    );
    if shows("stdio") {
        println!("Over stdio (a connect starts the server and runs the handshake):\n");
        table(&servers, &Client::STDIO, &options, &script)?;
    }
    if shows("tasks") {
        if let Some(
            teaching @ Server {
                target: Target::Process(argv),
                ..
            },
        ) = servers.first()
        {
            println!(
                "\n{} tasks calling at once over stdio, one current-thread tokio runtime for all; \
                 {} rounds of {} calls each (after {WARM_UP} warm-up calls), taking turns:\n",
                concurrent::TASKS,
                options.rounds,
                options.calls.div_ceil(concurrent::TASKS) * concurrent::TASKS
            );
            concurrent::table(teaching, argv, &options)?;
        }
    }
    if !shows("http") {
        return Ok(());
    }
    let running = http::Running::start(&teaching, &peers)?;
    let servers = [
        Server {
            name: "teaching server (Rust)",
            target: Target::Url(running.teaching.clone()),
            tool: "word_count",
            arguments: r#"{"text":"vanilla stock needs review"}"#,
            expected: "4",
        },
        Server {
            name: "Python SDK 2.3 (uvicorn)",
            target: Target::Url(running.python.clone()),
            tool: "word_count",
            arguments: r#"{"text":"vanilla stock needs review"}"#,
            expected: "4 words",
        },
    ];
    println!("\nOver Streamable HTTP (JSON replies; a connect is the handshake on a server already running):\n");
    table(&servers, &Client::HTTP, &options, &script)?;
    println!(
        "\nOurs against the floor call by call (each of our calls followed by one of the floor's, \
         on two keep-alive connections; {} calls each after {WARM_UP} warm-up calls):\n",
        options.rounds.saturating_mul(options.calls)
    );
    http::paired_table(&servers, &options)?;
    drop(running);
    Ok(())
}

/// Measures every client against every server, in rounds, and prints the table.
fn table(
    servers: &[Server],
    clients: &[Client],
    options: &Options,
    script: &Path,
) -> Result<(), String> {
    println!(
        "| server | client | connect (median) | per call (median) | per call (p95) | \
         round medians | per call vs ours | client CPU per call |"
    );
    println!("|---|---|---:|---:|---:|---:|---:|---:|");
    for server in servers {
        let mut pooled: Vec<(Client, Sample, Vec<Duration>)> = clients
            .iter()
            .map(|c| (*c, Sample::default(), Vec::new()))
            .collect();
        let clients = pooled.len();
        for round in 0..options.rounds {
            // Each round starts with the next client, so no client always goes first (after
            // another's processes have just exited) or last.
            for turn in 0..clients {
                let Some((client, sample, round_medians)) =
                    pooled.get_mut((round + turn) % clients)
                else {
                    continue;
                };
                let round = client.measure(server, options, script)?;
                round_medians.push(median(&round.calls));
                sample.connect.extend(round.connect);
                sample.calls.extend(round.calls);
                sample.cpu += round.cpu;
            }
        }
        let base = pooled
            .first()
            .map(|(_, sample, _)| median(&sample.calls))
            .unwrap_or_default();
        for (client, sample, round_medians) in &pooled {
            let per_call = median(&sample.calls);
            let low = round_medians.iter().min().copied().unwrap_or_default();
            let high = round_medians.iter().max().copied().unwrap_or_default();
            let cpu_per_call = sample
                .cpu
                .checked_div(u32::try_from(sample.calls.len()).unwrap_or(u32::MAX))
                .unwrap_or_default();
            println!(
                "| {} | {} | {} | {} | {} | {} to {} | {:.2}× | {} |",
                server.name,
                client.name(),
                ms(median(&sample.connect)),
                ms(per_call),
                ms(percentile(&sample.calls, 95)),
                ms(low),
                ms(high),
                per_call.as_secs_f64() / base.as_secs_f64(),
                us(cpu_per_call),
            );
        }
    }
    Ok(())
}

fn ms(d: Duration) -> String {
    format!("{:.3} ms", d.as_secs_f64() * 1000.0)
}

fn us(d: Duration) -> String {
    format!("{:.1} µs", d.as_secs_f64() * 1e6)
}

fn median(samples: &[Duration]) -> Duration {
    percentile(samples, 50)
}

/// The `p`th percentile (nearest rank).
fn percentile(samples: &[Duration], p: usize) -> Duration {
    let mut sorted = samples.to_vec();
    sorted.sort_unstable();
    let rank = (sorted.len() * p).div_ceil(100).saturating_sub(1);
    sorted.get(rank).copied().unwrap_or_default()
}

fn check(client: &str, server: &Server, text: &str) -> Result<(), String> {
    if text == server.expected {
        Ok(())
    } else {
        Err(format!(
            "{client} against {}: the call answered {text:?}, not {:?}",
            server.name, server.expected
        ))
    }
}

/// The client's settings for `server`: its tool allowed, 30 s deadlines, `protocol`.
fn config(server: &Server, protocol: ProtocolChoice) -> Config {
    let mut config = Config::new([server.tool].into_iter().collect::<Allowlist>());
    config.limits.operation_timeout = Duration::from_secs(30);
    config.protocol = protocol;
    config
}

/// One of our clients, over whichever transport: what the rounds need of it.
trait Ours: Sized {
    fn list(&mut self) -> Result<(), String>;
    fn call(&mut self, tool: &str, arguments: &RawObject) -> Result<CallToolResult, String>;
    fn close(self) -> Result<(), String>;
}

impl Ours for StdioClient {
    fn list(&mut self) -> Result<(), String> {
        self.list_tools().map(drop).map_err(|e| e.to_string())
    }

    fn call(&mut self, tool: &str, arguments: &RawObject) -> Result<CallToolResult, String> {
        self.call_tool(tool, arguments).map_err(|e| e.to_string())
    }

    fn close(self) -> Result<(), String> {
        StdioClient::close(self, DEFAULT_GRACE)
            .map(drop)
            .map_err(|e| e.to_string())
    }
}

fn measure_ours(
    server: &Server,
    argv: &[OsString],
    options: &Options,
    protocol: ProtocolChoice,
) -> Result<Sample, String> {
    let config = config(server, protocol);
    let (program, args) = argv.split_first().ok_or("no server program")?;
    let command = ServerCommand::new(program).args(args);
    run_ours(server, options, || {
        let mut client = StdioClient::spawn(&command, config.clone()).map_err(|e| e.to_string())?;
        client.connect().map_err(|e| e.to_string())?;
        Ok(client)
    })
}

/// Our rounds against `server`: `connect` opens one connected client.
fn run_ours<C: Ours>(
    server: &Server,
    options: &Options,
    connect: impl Fn() -> Result<C, String>,
) -> Result<Sample, String> {
    let fail = |e: String| format!("mcp-sansio against {}: {e}", server.name);
    let mut connect_times = Vec::with_capacity(options.connects);
    for _ in 0..options.connects {
        let started = Instant::now();
        let client = connect().map_err(fail)?;
        connect_times.push(started.elapsed());
        client.close().map_err(fail)?;
    }
    let mut client = connect().map_err(fail)?;
    client.list().map_err(fail)?;
    let arguments = RawObject::parse(server.arguments, &Limits::default())
        .map_err(|e| format!("the benchmark's own arguments: {e}"))?;
    let first = client.call(server.tool, &arguments).map_err(fail)?;
    check("mcp-sansio", server, &first.text())?;
    for _ in 0..WARM_UP {
        client.call(server.tool, &arguments).map_err(fail)?;
    }
    let mut calls = Vec::with_capacity(options.calls);
    let cpu = process_cpu();
    for _ in 0..options.calls {
        let started = Instant::now();
        client.call(server.tool, &arguments).map_err(fail)?;
        calls.push(started.elapsed());
    }
    let cpu = process_cpu().saturating_sub(cpu);
    client.close().map_err(fail)?;
    Ok(Sample {
        connect: connect_times,
        calls,
        cpu,
    })
}

fn measure_rmcp(server: &Server, argv: &[OsString], options: &Options) -> Result<Sample, String> {
    use rmcp::ServiceExt;

    let fail = |e: &dyn std::fmt::Display| format!("rmcp against {}: {e}", server.name);
    run_rmcp(server, options, || async {
        ().serve(rmcp_child(server, argv)?)
            .await
            .map_err(|e| fail(&e))
    })
}

/// rmcp's child-process transport to the server `argv` starts, with the same environment
/// (`PATH` alone) and stderr as ours.
fn rmcp_child(
    server: &Server,
    argv: &[OsString],
) -> Result<rmcp::transport::TokioChildProcess, String> {
    let (program, args) = argv.split_first().ok_or("no server program")?;
    let mut command = tokio::process::Command::new(program);
    command.args(args).env_clear();
    if let Some(path) = std::env::var_os("PATH") {
        command.env("PATH", path);
    }
    rmcp::transport::TokioChildProcess::builder(command)
        .stderr(Stdio::null())
        .spawn()
        .map(|(transport, _)| transport)
        .map_err(|e| format!("rmcp against {}: {e}", server.name))
}

/// rmcp's call parameters for `server`'s call, and the first call made and checked.
async fn rmcp_first_call(
    client: &rmcp::service::RunningService<rmcp::RoleClient, ()>,
    server: &Server,
) -> Result<rmcp::model::CallToolRequestParams, String> {
    let fail = |e: &dyn std::fmt::Display| format!("rmcp against {}: {e}", server.name);
    let arguments: serde_json::Map<String, serde_json::Value> =
        serde_json::from_str(server.arguments).map_err(|e| fail(&e))?;
    let params = rmcp::model::CallToolRequestParams::new(server.tool).with_arguments(arguments);
    let first = client
        .call_tool(params.clone())
        .await
        .map_err(|e| fail(&e))?;
    let first = serde_json::to_value(&first).map_err(|e| fail(&e))?;
    check(
        "rmcp",
        server,
        first
            .pointer("/content/0/text")
            .and_then(serde_json::Value::as_str)
            .unwrap_or_default(),
    )?;
    Ok(params)
}

/// rmcp's rounds against `server`, whatever its transport: `connect` opens one client.
fn run_rmcp<F, Fut>(server: &Server, options: &Options, connect: F) -> Result<Sample, String>
where
    F: Fn() -> Fut,
    Fut: std::future::Future<
        Output = Result<rmcp::service::RunningService<rmcp::RoleClient, ()>, String>,
    >,
{
    let fail = |e: &dyn std::fmt::Display| format!("rmcp against {}: {e}", server.name);
    // A single-threaded runtime: the fastest setting for one sequential client, and the
    // same one core that mcp-sansio uses.
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| fail(&e))?;
    runtime.block_on(async {
        let mut connect_times = Vec::with_capacity(options.connects);
        for _ in 0..options.connects {
            let started = Instant::now();
            let client = connect().await?;
            connect_times.push(started.elapsed());
            client.cancel().await.map_err(|e| fail(&e))?;
        }
        let client = connect().await?;
        client.list_tools(None).await.map_err(|e| fail(&e))?;
        let params = rmcp_first_call(&client, server).await?;
        for _ in 0..WARM_UP {
            client
                .call_tool(params.clone())
                .await
                .map_err(|e| fail(&e))?;
        }
        let mut calls = Vec::with_capacity(options.calls);
        let cpu = process_cpu();
        for _ in 0..options.calls {
            let started = Instant::now();
            client
                .call_tool(params.clone())
                .await
                .map_err(|e| fail(&e))?;
            calls.push(started.elapsed());
        }
        let cpu = process_cpu().saturating_sub(cpu);
        client.cancel().await.map_err(|e| fail(&e))?;
        Ok(Sample {
            connect: connect_times,
            calls,
            cpu,
        })
    })
}

fn measure_python(
    server: &Server,
    target: &Target,
    options: &Options,
    script: &Path,
) -> Result<Sample, String> {
    let fail = |e: &dyn std::fmt::Display| format!("plain Python against {}: {e}", server.name);
    let mut command = Command::new("python3");
    command
        .arg(script)
        .arg(options.calls.to_string())
        .arg(options.connects.to_string())
        .args([server.tool, server.arguments]);
    match target {
        Target::Process(argv) => command.arg("--").args(argv),
        Target::Url(url) => command.args(["--url", url]),
    };
    let output = command
        .stderr(Stdio::inherit())
        .output()
        .map_err(|e| fail(&e))?;
    if !output.status.success() {
        return Err(fail(&output.status));
    }
    let report: serde_json::Value = serde_json::from_slice(&output.stdout).map_err(|e| fail(&e))?;
    check(
        "plain Python",
        server,
        report
            .get("text")
            .and_then(serde_json::Value::as_str)
            .unwrap_or_default(),
    )?;
    let durations = |key: &str| -> Vec<Duration> {
        report
            .get(key)
            .and_then(serde_json::Value::as_array)
            .map(|ns| {
                ns.iter()
                    .filter_map(serde_json::Value::as_u64)
                    .map(Duration::from_nanos)
                    .collect()
            })
            .unwrap_or_default()
    };
    Ok(Sample {
        connect: durations("connect_ns"),
        calls: durations("call_ns"),
        cpu: Duration::from_nanos(
            report
                .get("cpu_ns")
                .and_then(serde_json::Value::as_u64)
                .unwrap_or_default(),
        ),
    })
}
