//! mcp-teaching-server: an MCP server that is correct by default and wrong on purpose when
//! asked, and the scenario that drives it through mcp-sansio's stdio transport.
//!
//! ```text
//! mcp-teaching-server                      the seeds' scenario end to end (same as `demo`)
//! mcp-teaching-server serve --mode MODE [--log PATH] [--pid-file PATH] [--delay-ms N]
//! ```
//!
//! The server appends every `tools/call` it receives to the `--log` file, one JSON line each,
//! so tests check what reached it without trusting the client, and writes its pid (and, in
//! the grandchild mode, its child's) to the `--pid-file`, so tests check that none is left.

use std::process::ExitCode;

use mcp_teaching_server::serve;

mod demo;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = match args.first().map(String::as_str) {
        None | Some("demo") => demo::run(),
        Some("serve") => serve(args.get(1..).unwrap_or_default()),
        Some(other) => Err(format!("unknown command {other:?}; try demo or serve")),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("mcp-teaching-server: {message}");
            ExitCode::FAILURE
        }
    }
}
