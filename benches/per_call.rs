//! The whole per-call path in the core, beside bare serde_json on the same two messages.
//!
//! `cargo bench --bench per_call`
//!
//! - `mcp_sansio`: queue `tools/call` (allowlist and catalog checks, params, encoding), take
//!   the frame, feed the canned reply in one to three reads, poll the event, read the text.
//! - `serde_json_typed`: serialize the same request from a typed struct, deserialize the
//!   same reply into typed structs, read the text. No framing, ids, limits or validation.
//! - `reply_only`: writing the canned reply with the call's id, which both of the above do
//!   inside their loop; subtract it for the net figures.

// A benchmark runs on known-good input and may panic if that assumption breaks.
#![allow(
    clippy::expect_used,
    clippy::unwrap_used,
    clippy::panic,
    clippy::indexing_slicing,
    clippy::std_instead_of_core,
    missing_docs
)]

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, Criterion};
use mcp_sansio::{Allowlist, Client, Config, Instant, Limits, RawObject};
use serde::{Deserialize, Serialize};

const TEXT: &str = "vanilla stock needs review";

/// Writes the server's reply to request `id` into `out`: what a teaching server says.
fn reply(out: &mut Vec<u8>, id: i64) {
    out.clear();
    out.extend_from_slice(br#"{"jsonrpc":"2.0","id":"#);
    out.extend_from_slice(itoa(id, &mut [0; 20]));
    out.extend_from_slice(
        br#","result":{"content":[{"type":"text","text":"4"}],"isError":false}}"#,
    );
    out.push(b'\n');
}

fn itoa(mut n: i64, buf: &mut [u8; 20]) -> &[u8] {
    let mut at = buf.len();
    loop {
        at -= 1;
        buf[at] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            return &buf[at..];
        }
    }
}

fn connected() -> Client {
    let config = Config::new(["word_count"].into_iter().collect::<Allowlist>());
    mcp_sansio::fuzzing::connected_client(config)
}

#[derive(Serialize)]
struct CallRequest<'a> {
    jsonrpc: &'a str,
    id: i64,
    method: &'a str,
    params: CallParams<'a>,
}

#[derive(Serialize)]
struct CallParams<'a> {
    name: &'a str,
    arguments: &'a serde_json::Value,
}

#[derive(Deserialize)]
struct CallResponse {
    #[allow(dead_code)]
    jsonrpc: String,
    #[allow(dead_code)]
    id: i64,
    result: CallResult,
}

#[derive(Deserialize)]
struct CallResult {
    content: Vec<Block>,
    #[serde(rename = "isError")]
    #[allow(dead_code)]
    is_error: Option<bool>,
}

#[derive(Deserialize)]
struct Block {
    #[serde(rename = "type")]
    #[allow(dead_code)]
    kind: String,
    text: Option<String>,
}

fn per_call(c: &mut Criterion) {
    let limits = Limits::default();
    let arguments = RawObject::parse(&format!(r#"{{"text":"{TEXT}"}}"#), &limits).unwrap();
    let mut group = c.benchmark_group("per_call");

    let mut client = connected();
    let mut now = Instant::ZERO;
    let mut buf = Vec::with_capacity(128);
    let mut frame = Vec::with_capacity(256);
    let mut id = 3i64;
    group.bench_function("mcp_sansio", |b| {
        b.iter(|| {
            now = Instant::from_millis(now.as_millis() + 1);
            let op = client.call_tool("word_count", &arguments, now).unwrap();
            frame.clear();
            client.poll_transmit(&mut frame).unwrap();
            black_box(&frame);
            reply(&mut buf, id);
            let pieces = (id % 3 + 1) as usize;
            for piece in buf.chunks(buf.len().div_ceil(pieces)) {
                client.handle_input(piece, now);
            }
            id += 1;
            let event = client.poll_event().expect("the call's end");
            let result = op.finished(event).expect("this call's end").unwrap();
            black_box(&*result.text());
        })
    });

    let args_value: serde_json::Value = serde_json::json!({ "text": TEXT });
    let mut out = Vec::with_capacity(128);
    let mut id = 3i64;
    group.bench_function("serde_json_typed", |b| {
        b.iter(|| {
            out.clear();
            let request = CallRequest {
                jsonrpc: "2.0",
                id,
                method: "tools/call",
                params: CallParams {
                    name: "word_count",
                    arguments: &args_value,
                },
            };
            serde_json::to_writer(&mut out, &request).unwrap();
            black_box(&out);
            reply(&mut buf, id);
            id += 1;
            let response: CallResponse = serde_json::from_slice(&buf).unwrap();
            black_box(
                response
                    .result
                    .content
                    .into_iter()
                    .filter_map(|b| b.text)
                    .collect::<Vec<_>>()
                    .join("\n"),
            )
        })
    });

    let mut id = 3i64;
    group.bench_function("reply_only", |b| {
        b.iter(|| {
            reply(&mut buf, id);
            id += 1;
            black_box(&buf);
        })
    });
    group.finish();
}

criterion_group!(benches, per_call);
criterion_main!(benches);
