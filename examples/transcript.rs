//! Reads what an MCP server wrote on its stdout and says what each line is to a strict client.
//!
//! `cargo run --example transcript` reads a built-in transcript of a misbehaving server;
//! `cargo run --example transcript -- FILE` reads a capture of your own (`-` for stdin).
//! Either is read 4 KiB at a time, under the teaching limits (64 KiB frames).

use std::io::Read;
use std::process::ExitCode;

use mcp_sansio::{parse_frame, FrameReader, Framed, Limits, Message, Outcome};

/// A server that answers correctly, then does each thing a strict client must refuse.
fn builtin() -> Vec<u8> {
    let mut s = String::new();
    s.push_str(r#"{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"teaching","version":"1"}}}"#);
    s.push('\n');
    s.push_str(r#"{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"ready"}}"#);
    s.push('\n');
    s.push_str(r#"{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"4"}]}}"#);
    s.push('\n');
    s.push_str(r#"{"jsonrpc":"2.0","id":true,"result":{"content":[]}}"#);
    s.push('\n');
    s.push_str(r#"{"jsonrpc":"2.0","id":"3","result":{"content":[]}}"#);
    s.push('\n');
    s.push_str(
        r#"{"jsonrpc":"2.0","id":4,"result":{"content":[]},"error":{"code":1,"message":"both"}}"#,
    );
    s.push('\n');
    s.push_str(r#"{"jsonrpc":"2.0","id":5,"result":{"tool":"a","tool":"b"}}"#);
    s.push('\n');
    s.push_str("INFO server listening (a log line on stdout)\n");
    s.push_str(r#"{"jsonrpc":"2.0","id":6,"result":{"blob":""#);
    s.push_str(&"A".repeat(100_000));
    s.push_str("\"}}\n");
    s.push_str(r#"{"jsonrpc":"2.0","id":7,"error":{"code":-32601,"message":"Method not found"}}"#);
    s.push('\n');
    s.into_bytes()
}

fn describe(frame: &[u8], limits: &Limits) -> String {
    match parse_frame(frame, limits) {
        Ok(Message::Request(r)) => format!("request {} {}", r.id, r.method),
        Ok(Message::Notification(n)) => format!("notification {}", n.method),
        Ok(Message::Response(r)) => match r.outcome {
            Outcome::Result(result) => {
                let mut text = result.to_string();
                if text.len() > 60 {
                    text.truncate(57);
                    text.push_str("...");
                }
                format!("result for request {}: {text}", r.id)
            }
            Outcome::Error(e) => format!("error for request {}: {} {}", r.id, e.code, e.message),
        },
        Ok(Message::UnboundError(e)) => {
            format!("error tied to no request: {} {}", e.code, e.message)
        }
        Err(refused) => format!("REFUSED: {refused}"),
    }
}

fn main() -> ExitCode {
    let limits = Limits::teaching();
    let mut source: Box<dyn Read> = match std::env::args().nth(1).as_deref() {
        None => Box::new(std::io::Cursor::new(builtin())),
        Some("-") => Box::new(std::io::stdin()),
        Some(path) => match std::fs::File::open(path) {
            Ok(file) => Box::new(file),
            Err(e) => {
                eprintln!("transcript: cannot open {path}: {e}");
                return ExitCode::from(2);
            }
        },
    };
    let mut reader = FrameReader::new(&limits);
    let mut buf = [0u8; 4096];
    let mut line = 0;
    loop {
        let n = match source.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) => {
                eprintln!("transcript: read failed: {e}");
                return ExitCode::from(2);
            }
        };
        let mut input = buf.get(..n).unwrap_or_default();
        loop {
            let said = match reader.next_frame(&mut input) {
                Framed::Frame(frame) => describe(frame, &limits),
                Framed::TooLong { limit } => {
                    format!("REFUSED before parsing: longer than the {limit}-byte frame limit")
                }
                Framed::NeedMore => break,
            };
            line += 1;
            println!("{line:>3}  {said}");
        }
    }
    if reader.is_mid_line() {
        println!("  -  the stream ended inside a line");
    }
    ExitCode::SUCCESS
}
