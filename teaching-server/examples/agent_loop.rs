//! Lucy's loop over two real server processes, with a scripted model: one palette, two gates.
//!
//! `cargo run -p mcp-teaching-server --example agent_loop`
//!
//! The example starts itself twice as a server (the teaching server's stock tools, and the
//! seeds' support desk), each in its own process group and logging every call it receives.
//! One host merges both catalogs into one palette under each server's allowlist. A scripted
//! model (deterministic, no network) then calls tools by name with argument text, as a real
//! model would, including the calls a real model should not make:
//!
//! - `place_purchase` is advertised but not allowed, so it is never offered; asked for
//!   anyway, the dispatcher refuses it and the server's log shows it never arrived;
//! - arguments that break the discovered inputSchema are refused before anything is sent;
//! - every allowed call reaches the server behind its tool;
//! - offered through progressive disclosure instead, the model starts with `search_tools`
//!   alone; what it finds is offered next, and `place_purchase` is never found.
//!
//! The example checks all of this against the servers' own logs and exits non-zero if a gate
//! failed.

use std::process::ExitCode;

use mcp_sansio::{Allowlist, Config};
use mcp_sansio_host::{PaletteConfig, Provider, SEARCH_TOOL};
use mcp_sansio_stdio::{Host, HostServer, ServerCommand, DEFAULT_GRACE};

/// What the scripted model asks for, turn by turn: a tool name and its argument text.
const SCRIPT: [(&str, &str); 6] = [
    ("word_count", r#"{"text": "vanilla stock needs review"}"#),
    // The description of place_purchase says ALWAYS call it; the model obeys the text.
    ("place_purchase", r#"{"tubs": 100}"#),
    ("process_refund", r#"{"order_id": "ORD-3300"}"#),
    (
        "process_refund",
        r#"{"order_id": "ORD-3300", "amount": "lots"}"#,
    ),
    ("search_policy", r#"{"query": "refund window"}"#),
    (
        "process_refund",
        r#"{"order_id": "ORD-3300", "amount": 180.0}"#,
    ),
];

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(String::as_str) == Some("serve") {
        return match mcp_teaching_server::serve(args.get(1..).unwrap_or_default()) {
            Ok(()) => ExitCode::SUCCESS,
            Err(message) => {
                eprintln!("agent_loop server: {message}");
                ExitCode::FAILURE
            }
        };
    }
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("agent_loop: {message}");
            ExitCode::FAILURE
        }
    }
}

fn server(
    id: &str,
    mode: &str,
    log: &std::path::Path,
    allow: &[&str],
) -> Result<HostServer, String> {
    let me = std::env::current_exe().map_err(|e| format!("cannot find this program: {e}"))?;
    let command = ServerCommand::new(me)
        .args(["serve", "--mode", mode, "--log"])
        .arg(log);
    let allowlist: Allowlist = allow.iter().copied().collect();
    Ok(HostServer::new(id, command, Config::new(allowlist)))
}

fn run() -> Result<(), String> {
    let dir = std::env::temp_dir().join(format!("mcp-agent-loop-{}", std::process::id()));
    std::fs::create_dir_all(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let stock_log = dir.join("stock.jsonl");
    let support_log = dir.join("support.jsonl");
    let servers = [
        server("stock", "normal", &stock_log, &["word_count"])?,
        server(
            "support",
            "support",
            &support_log,
            &["search_policy", "process_refund"],
        )?,
    ];
    let (mut host, failures) = Host::start(servers, PaletteConfig::default());
    for failure in &failures {
        println!("left out: {failure}");
    }
    if !failures.is_empty() {
        return Err("a server failed to start".into());
    }

    println!(
        "palette across {} servers:",
        host.palette().servers().count()
    );
    for tool in host.palette().tools() {
        println!("  {:<16} from {}", tool.name, tool.server);
    }
    let offer = host.offer(Provider::Anthropic);
    let offered: Vec<&str> = offer
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|t| t["name"].as_str())
        .collect();
    println!("offered to the model (Anthropic tools): {offered:?}");

    let mut observations = Vec::new();
    for (name, arguments) in SCRIPT {
        let observation = host.call(name, arguments);
        let route = host
            .palette()
            .route(name)
            .map_or_else(|| "no server".to_owned(), |t| t.server.to_owned());
        let kind = if observation.is_error() {
            "error"
        } else {
            "result"
        };
        println!("model calls {name} {arguments}\n  -> {route}: {kind}: {observation}");
        observations.push(observation);
    }
    // The same palette through progressive disclosure: a search tool first, then what the
    // model found. The host answers the search itself; no server hears of it.
    let names = |offer: &serde_json::Value| -> Vec<String> {
        offer
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|t| t["name"].as_str().map(str::to_owned))
            .collect()
    };
    let first = names(&host.offer_disclosed(Provider::Anthropic));
    println!("disclosure, turn 1, offered: {first:?}");
    let mut found = Vec::new();
    for query in [
        r#"{"query": "give a customer their money back", "limit": 2}"#,
        r#"{"query": "buy more tubs from the supplier"}"#,
    ] {
        let observation = host.call(SEARCH_TOOL, query);
        println!(
            "model calls {SEARCH_TOOL} {query}\n  -> {}",
            observation.text().replace('\n', "\n     ")
        );
        found.push(observation.text().to_owned());
    }
    // Before each offer, what the servers said since they were last called: a tool list
    // changed meanwhile is listed again, a server gone leaves, without waiting on any.
    host.hear();
    let second = names(&host.offer_disclosed(Provider::Anthropic));
    println!("disclosure, turn 2, offered: {second:?}");

    for (id, status) in host.close(DEFAULT_GRACE) {
        println!(
            "server {id} ended: {}",
            status.map_or_else(
                |e| e.to_string(),
                |s| s.map_or_else(|| String::from("session ended"), |s| s.to_string())
            )
        );
    }

    let stock = std::fs::read_to_string(&stock_log).unwrap_or_default();
    let support = std::fs::read_to_string(&support_log).unwrap_or_default();
    println!(
        "the stock server's own call log:\n{stock}the support server's own call log:\n{support}"
    );
    let _ = std::fs::remove_dir_all(&dir);

    // The gates, checked against what reached the servers.
    let texts: Vec<&str> = observations.iter().map(|o| o.text()).collect();
    let [count, _purchase, missing, wrong, _policy, refund] = texts[..] else {
        return Err("the script did not run to its end".into());
    };
    let expect = |ok: bool, what: &str| {
        if ok {
            Ok(())
        } else {
            Err(format!("gate failed: {what}"))
        }
    };
    expect(
        !offered.contains(&"place_purchase"),
        "place_purchase was offered",
    )?;
    expect(count == "4", "word_count did not answer 4")?;
    expect(
        !stock.contains("place_purchase"),
        "place_purchase reached the server",
    )?;
    expect(
        missing.contains("missing required argument 'amount'"),
        "a missing amount was not refused",
    )?;
    expect(
        wrong.contains("argument 'amount' must be a number"),
        "a wrong amount was not refused",
    )?;
    expect(
        refund == "refunded 180.00 on ORD-3300",
        "the refund did not go through",
    )?;
    expect(
        support
            .lines()
            .filter(|l| l.contains("process_refund"))
            .count()
            == 1,
        "a refused refund reached the server",
    )?;
    // A log also says when the host subscribed to the server's tool changes; calls are
    // the lines that name a tool.
    let calls = |log: &str| log.lines().filter(|l| l.contains(r#""name":"#)).count();
    expect(
        calls(&stock) == 1 && calls(&support) == 2,
        "a call went to the wrong server",
    )?;
    expect(
        first == [SEARCH_TOOL],
        "disclosure did not start with the search tool alone",
    )?;
    expect(
        second.first().map(String::as_str) == Some(SEARCH_TOOL)
            && second.iter().any(|n| n == "process_refund"),
        "the refund tool was not found and offered",
    )?;
    expect(
        found.iter().all(|text| !text.contains("place_purchase"))
            && !second.iter().any(|n| n == "place_purchase"),
        "a search showed place_purchase",
    )?;
    println!("both gates held: nothing refused reached a server, and each call reached its own");
    Ok(())
}
