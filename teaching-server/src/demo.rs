//! The seeds' scenario end to end: this binary starts itself as the teaching server and speaks
//! to it through mcp-sansio's stdio transport.

use std::time::{Duration, Instant};

use mcp_sansio::{Allowlist, Config, Limits, RawObject};
use mcp_sansio_stdio::{ServerCommand, StdioClient};

use mcp_teaching_server::millis;

/// This program, run as the teaching server in `mode`, logging calls to `log`.
fn server(mode: &str, log: &std::path::Path) -> Result<ServerCommand, String> {
    let exe = std::env::current_exe().map_err(|e| format!("cannot find this program: {e}"))?;
    Ok(ServerCommand::new(exe).args([
        "serve".into(),
        "--mode".into(),
        mode.into(),
        "--log".into(),
        log.as_os_str().to_owned(),
    ]))
}

fn call_log(name: &str) -> std::path::PathBuf {
    std::env::temp_dir().join(format!("mcp-teaching-{name}-{}.jsonl", std::process::id()))
}

/// Counts the words in "vanilla stock needs review" through a separate server process, shows
/// `place_purchase` refused inside the client, prints the server's own call log and its exit
/// status.
pub(crate) fn run() -> Result<(), String> {
    let log = call_log("calls");
    let _ = std::fs::remove_file(&log);
    let allowlist: Allowlist = ["word_count"].into_iter().collect();
    let mut config = Config::new(allowlist);
    config.limits = Limits::teaching();
    let started = Instant::now();
    let mut server =
        StdioClient::spawn(&server("normal", &log)?, config).map_err(|e| e.to_string())?;
    let hello = server.connect().map_err(|e| e.to_string())?;
    let catalog = server.list_tools().map_err(|e| e.to_string())?;
    println!(
        "connected to {} over protocol {} in {:.1} ms (pid {}, its own process group)",
        hello.server_info.as_ref().map_or("?", |i| i.name.as_str()),
        hello.version,
        millis(started),
        server.pid()
    );
    println!("the server advertises:");
    let allowlist = server.client().allowlist().clone();
    for tool in catalog.tools() {
        let verdict = if allowlist.allows(&tool.name) {
            "offered"
        } else {
            "not allowed"
        };
        let description = tool.description.as_deref().unwrap_or("");
        println!("  {:<15} {:<12} {description}", tool.name, verdict);
    }
    let text = RawObject::parse(
        r#"{"text":"vanilla stock needs review"}"#,
        &Limits::default(),
    )
    .map_err(|e| e.to_string())?;
    let result = server
        .call_tool("word_count", &text)
        .map_err(|e| e.to_string())?;
    println!(
        "word_count(\"vanilla stock needs review\") = {}",
        result.text()
    );
    let order = RawObject::parse(r#"{"flavor":"vanilla","tubs":100}"#, &Limits::default())
        .map_err(|e| e.to_string())?;
    match server.call_tool("place_purchase", &order) {
        Ok(result) => return Err(format!("the purchase went through: {}", result.text())),
        Err(refused) => println!("place_purchase refused inside the client: {refused}"),
    }
    let status = server
        .close(Duration::from_secs(1))
        .map_err(|e| e.to_string())?;
    match status.code() {
        Some(code) => println!("server exit status: {code}"),
        None => println!("server ended by a signal: {status}"),
    }
    let calls =
        std::fs::read_to_string(&log).map_err(|e| format!("cannot read the call log: {e}"))?;
    println!("the server's own call log ({}):", log.display());
    print!("{calls}");
    let _ = std::fs::remove_file(&log);
    if calls.contains("place_purchase") {
        return Err(String::from("the purchase reached the server"));
    }
    Ok(())
}
