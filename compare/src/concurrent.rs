//! The async driver (`mcp-sansio-tokio`) measured: as one client calling one at a time (a
//! row of the stdio table), and with many tasks calling at once against rmcp, both on one
//! current-thread tokio runtime, against the teaching server; and the async host over the
//! same driver, where each call is the model's (a palette name and argument text, checked
//! against the tool's input schema, the result read back as the model's observation).

use std::ffi::OsString;
use std::time::{Duration, Instant};

use mcp_sansio::{CallToolResult, Limits, ProtocolChoice, RawObject};
use mcp_sansio_host::PaletteConfig;
use mcp_sansio_stdio::{HostServer, ServerCommand};
use mcp_sansio_tokio::{Events, Handle, Host, HostLimits};
use tokio::runtime::Runtime;

use crate::{
    check, config, median, percentile, process_cpu, rmcp_child, rmcp_first_call, run_ours, Options,
    Ours, Sample, Server, Target, WARM_UP,
};

/// The async driver as one client that waits for each call.
struct OneAtATime<'a> {
    runtime: &'a Runtime,
    handle: Handle,
    _events: Events,
}

impl Ours for OneAtATime<'_> {
    fn list(&mut self) -> Result<(), String> {
        self.runtime
            .block_on(self.handle.list_tools())
            .map(drop)
            .map_err(|e| e.to_string())
    }

    fn call(&mut self, tool: &str, arguments: &RawObject) -> Result<CallToolResult, String> {
        self.runtime
            .block_on(self.handle.call_tool(tool, arguments))
            .map_err(|e| e.to_string())
    }

    fn close(self) -> Result<(), String> {
        self.runtime
            .block_on(self.handle.close())
            .map(drop)
            .map_err(|e| e.to_string())
    }
}

/// The async driver's rounds in a one-at-a-time table (auto mode), over stdio or HTTP.
pub(crate) fn measure_one_at_a_time(server: &Server, options: &Options) -> Result<Sample, String> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| e.to_string())?;
    let config = config(server, ProtocolChoice::Auto);
    run_ours(server, options, || {
        let connected = runtime.block_on(async {
            match &server.target {
                Target::Process(argv) => {
                    let (program, args) = argv.split_first().ok_or("no server program")?;
                    let command = ServerCommand::new(program).args(args);
                    mcp_sansio_tokio::connect_stdio(&command, config.clone()).await
                }
                Target::Url(url) => mcp_sansio_tokio::connect_http(url, &[], config.clone()).await,
            }
            .map_err(|e| e.to_string())
        });
        let (handle, events) = connected?;
        Ok(OneAtATime {
            runtime: &runtime,
            handle,
            _events: events,
        })
    })
}

/// How many tasks call at once.
pub(crate) const TASKS: usize = 64;

/// One round: every task's call latencies, the round's wall time and the client's CPU.
struct Burst {
    latencies: Vec<Duration>,
    wall: Duration,
    cpu: Duration,
}

#[derive(Clone, Copy)]
enum Contender {
    Ours,
    Host,
    Rmcp,
}

impl Contender {
    fn name(self) -> &'static str {
        match self {
            Contender::Ours => "mcp-sansio-tokio (auto)",
            Contender::Host => "mcp-sansio-tokio `Host` (auto)",
            Contender::Rmcp => "rmcp 3.11",
        }
    }
}

/// Measures both clients in turns against `server` (a process) and prints the table.
pub(crate) fn table(server: &Server, argv: &[OsString], options: &Options) -> Result<(), String> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| e.to_string())?;
    let per_task = options.calls.div_ceil(TASKS);
    let contenders = [Contender::Ours, Contender::Host, Contender::Rmcp];
    let mut bursts: Vec<Vec<Burst>> = contenders.iter().map(|_| Vec::new()).collect();
    for round in 0..options.rounds {
        for turn in 0..contenders.len() {
            let at = (round + turn) % contenders.len();
            let (Some(contender), Some(slot)) = (contenders.get(at), bursts.get_mut(at)) else {
                continue;
            };
            let burst = match contender {
                Contender::Ours => runtime.block_on(ours(server, argv, per_task)),
                Contender::Host => runtime.block_on(host(server, argv, per_task)),
                Contender::Rmcp => runtime.block_on(rmcp(server, argv, per_task)),
            }?;
            slot.push(burst);
        }
    }
    println!(
        "| client | calls per second (median round) | latency p50 | latency p99 | vs ours (throughput) | client CPU per call |"
    );
    println!("|---|---:|---:|---:|---:|---:|");
    let throughput = |rounds: &[Burst]| -> f64 {
        let mut rates: Vec<f64> = rounds
            .iter()
            .map(|b| b.latencies.len() as f64 / b.wall.as_secs_f64())
            .collect();
        rates.sort_by(f64::total_cmp);
        rates.get(rates.len() / 2).copied().unwrap_or_default()
    };
    let ours_rate = bursts.first().map_or(0.0, |b| throughput(b));
    for (contender, rounds) in contenders.iter().zip(&bursts) {
        let mut latencies: Vec<Duration> = rounds
            .iter()
            .flat_map(|b| b.latencies.iter().copied())
            .collect();
        latencies.sort();
        let calls = u32::try_from(latencies.len().max(1)).unwrap_or(u32::MAX);
        let cpu: Duration = rounds.iter().map(|b| b.cpu).sum();
        let rate = throughput(rounds);
        println!(
            "| {} | {:.0} | {:.3} ms | {:.3} ms | {:.2}× | {:.1} µs |",
            contender.name(),
            rate,
            median(&latencies).as_secs_f64() * 1e3,
            percentile(&latencies, 99).as_secs_f64() * 1e3,
            rate / ours_rate,
            (cpu / calls).as_secs_f64() * 1e6,
        );
    }
    Ok(())
}

/// Runs `per_task` calls made by `call` in each of [`TASKS`] tasks, after a warm-up.
async fn burst<F>(per_task: usize, call: F) -> Result<Burst, String>
where
    F: AsyncFn() -> Result<(), String> + Clone + 'static,
{
    timed(WARM_UP, &call).await?;
    let cpu = process_cpu();
    let started = Instant::now();
    let mut set = tokio::task::JoinSet::new();
    for _ in 0..TASKS {
        let call = call.clone();
        set.spawn_local(async move { timed(per_task, &call).await });
    }
    let mut latencies = Vec::with_capacity(per_task * TASKS);
    while let Some(done) = set.join_next().await {
        latencies.extend(done.map_err(|e| e.to_string())??);
    }
    Ok(Burst {
        latencies,
        wall: started.elapsed(),
        cpu: process_cpu().saturating_sub(cpu),
    })
}

/// Makes `calls` calls one after another, and says how long each took.
async fn timed(
    calls: usize,
    call: &impl AsyncFn() -> Result<(), String>,
) -> Result<Vec<Duration>, String> {
    let mut latencies = Vec::with_capacity(calls);
    for _ in 0..calls {
        let started = Instant::now();
        call().await?;
        latencies.push(started.elapsed());
    }
    Ok(latencies)
}

async fn ours(server: &Server, argv: &[OsString], per_task: usize) -> Result<Burst, String> {
    let fail = |e: &dyn std::fmt::Display| format!("mcp-sansio-tokio against {}: {e}", server.name);
    let (program, args) = argv.split_first().ok_or("no server program")?;
    let command = ServerCommand::new(program).args(args);
    let (handle, _events) =
        mcp_sansio_tokio::connect_stdio(&command, config(server, ProtocolChoice::Auto))
            .await
            .map_err(|e| fail(&e))?;
    handle.list_tools().await.map_err(|e| fail(&e))?;
    let arguments = RawObject::parse(server.arguments, &Limits::default())
        .map_err(|e| format!("the benchmark's own arguments: {e}"))?;
    let first = handle
        .call_tool(server.tool, &arguments)
        .await
        .map_err(|e| fail(&e))?;
    check("mcp-sansio-tokio", server, &first.text())?;
    let tool = server.tool;
    let caller = handle.clone();
    let call = async move || {
        caller
            .call_tool(tool, &arguments)
            .await
            .map(drop)
            .map_err(|e| e.to_string())
    };
    let burst = tokio::task::LocalSet::new()
        .run_until(burst(per_task, call))
        .await?;
    handle.close().await.map_err(|e| fail(&e))?;
    Ok(burst)
}

async fn host(server: &Server, argv: &[OsString], per_task: usize) -> Result<Burst, String> {
    let fail = |e: &dyn std::fmt::Display| format!("the async host against {}: {e}", server.name);
    let (program, args) = argv.split_first().ok_or("no server program")?;
    let command = ServerCommand::new(program).args(args);
    let joining = HostServer::new("measured", command, config(server, ProtocolChoice::Auto));
    let (host, _events, failures) =
        Host::start([joining], PaletteConfig::default(), HostLimits::default()).await;
    if let Some(failure) = failures.first() {
        return Err(fail(failure));
    }
    let name = host
        .with_palette(|palette| {
            palette
                .tools()
                .find(|t| t.tool.name == server.tool)
                .map(|t| t.name.to_owned())
        })
        .ok_or_else(|| fail(&"its tool is not in the palette"))?;
    let first = host.call(&name, server.arguments).await;
    if first.is_error() {
        return Err(fail(&first.text()));
    }
    check("the async host", server, first.text())?;
    let arguments = server.arguments;
    let caller = host.clone();
    let call = async move || {
        let observation = caller.call(&name, arguments).await;
        if observation.is_error() {
            return Err(observation.text().to_owned());
        }
        Ok(())
    };
    let burst = tokio::task::LocalSet::new()
        .run_until(burst(per_task, call))
        .await?;
    for (_, closed) in host.close().await {
        closed.map_err(|e| fail(&e))?;
    }
    Ok(burst)
}

async fn rmcp(server: &Server, argv: &[OsString], per_task: usize) -> Result<Burst, String> {
    use rmcp::ServiceExt;

    let fail = |e: &dyn std::fmt::Display| format!("rmcp against {}: {e}", server.name);
    let client = ().serve(rmcp_child(server, argv)?).await.map_err(|e| fail(&e))?;
    client.list_tools(None).await.map_err(|e| fail(&e))?;
    let params = rmcp_first_call(&client, server).await?;
    let peer = client.peer().clone();
    let call = async move || {
        peer.call_tool(params.clone())
            .await
            .map(drop)
            .map_err(|e| e.to_string())
    };
    let burst = tokio::task::LocalSet::new()
        .run_until(burst(per_task, call))
        .await?;
    client.cancel().await.map_err(|e| fail(&e))?;
    Ok(burst)
}
