//! Framing + parsing throughput on a realistic MCP server stream, beside the baseline of
//! splitting on newlines with memchr and parsing each line with `serde_json::Value`.
//!
//! `cargo bench --bench frames`

// A benchmark runs on known-good input and may panic if that assumption breaks.
#![allow(
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::std_instead_of_core
)]

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use mcp_sansio::{parse_frame, FrameParser, FrameReader, Framed, Limits, Message};

/// The size of one read from a pipe (Linux's default pipe buffer).
const READ: usize = 64 * 1024;

/// What a busy server writes: a `tools/list` reply of 50 tools, then 200 `tools/call` replies
/// each preceded by two progress notifications.
fn server_stream() -> Vec<u8> {
    let mut tools = Vec::new();
    for i in 0..50 {
        tools.push(format!(
            r#"{{"name":"tool_{i}","title":"Tool number {i}","description":"Does task {i}: reads the input text, applies the named operation and returns a short report. Use it when the user asks for operation {i}.","inputSchema":{{"type":"object","properties":{{"text":{{"type":"string","description":"The text to work on."}},"mode":{{"type":"string","enum":["fast","careful","exhaustive"]}},"limit":{{"type":"integer","minimum":1,"maximum":1000}},"tags":{{"type":"array","items":{{"type":"string"}}}}}},"required":["text"],"additionalProperties":false}},"annotations":{{"readOnlyHint":true,"openWorldHint":false}}}}"#
        ));
    }
    let mut stream = format!(
        r#"{{"jsonrpc":"2.0","id":2,"result":{{"tools":[{}]}}}}"#,
        tools.join(",")
    )
    .into_bytes();
    stream.push(b'\n');
    for call in 0..200 {
        let id = call + 3;
        for step in 1..=2 {
            stream.extend_from_slice(
                format!(
                    r#"{{"jsonrpc":"2.0","method":"notifications/progress","params":{{"progressToken":{id},"progress":{step},"total":2,"message":"step {step} of 2"}}}}"#
                )
                .as_bytes(),
            );
            stream.push(b'\n');
        }
        stream.extend_from_slice(
            format!(
                r#"{{"jsonrpc":"2.0","id":{id},"result":{{"content":[{{"type":"text","text":"The text has {call} words. Counted with the careful mode; no \"special\" characters were found.\nDone."}}],"structuredContent":{{"words":{call},"mode":"careful"}},"isError":false}}}}"#
            )
            .as_bytes(),
        );
        stream.push(b'\n');
    }
    stream
}

/// Ours: FrameReader + `parse`, fed a pipe read at a time. Returns the messages read.
fn ours(stream: &[u8], limits: &Limits, mut parse: impl FnMut(&[u8]) -> Message) -> usize {
    let mut reader = FrameReader::new(limits);
    let mut messages = 0;
    for read in stream.chunks(READ) {
        let mut input = read;
        loop {
            match reader.next_frame(&mut input) {
                Framed::Frame(frame) => {
                    black_box(&parse(frame));
                    messages += 1;
                }
                Framed::TooLong { .. } => unreachable!("the stream fits the limit"),
                Framed::NeedMore => break,
            }
        }
    }
    messages
}

/// `parse_frame`, which sets up its working memory per frame.
fn one_off(limits: &Limits) -> impl FnMut(&[u8]) -> Message + '_ {
    move |frame| parse_frame(frame, limits).expect("valid stream")
}

/// A long-lived `FrameParser`, as the client uses it.
fn reusing(limits: &Limits) -> impl FnMut(&[u8]) -> Message {
    let mut parser = FrameParser::new(limits);
    move |frame| parser.parse(frame).expect("valid stream")
}

/// Baseline: keep a buffer, split on newlines with memchr, parse each line as a Value.
fn baseline(stream: &[u8]) -> usize {
    let mut buf: Vec<u8> = Vec::new();
    let mut messages = 0;
    for read in stream.chunks(READ) {
        buf.extend_from_slice(read);
        let mut start = 0;
        for end in memchr::memchr_iter(b'\n', &buf) {
            let value: serde_json::Value =
                serde_json::from_slice(&buf[start..end]).expect("valid stream");
            black_box(&value);
            messages += 1;
            start = end + 1;
        }
        buf.drain(..start);
    }
    messages
}

fn frames(c: &mut Criterion) {
    let stream = server_stream();
    let limits = Limits::default();
    assert_eq!(ours(&stream, &limits, one_off(&limits)), baseline(&stream));
    assert_eq!(ours(&stream, &limits, reusing(&limits)), baseline(&stream));
    let mut group = c.benchmark_group("frames");
    group.throughput(Throughput::Bytes(stream.len() as u64));
    group.bench_function("mcp_sansio", |b| {
        b.iter(|| ours(black_box(&stream), &limits, one_off(&limits)))
    });
    group.bench_function("mcp_sansio_frame_parser", |b| {
        b.iter(|| ours(black_box(&stream), &limits, reusing(&limits)))
    });
    group.bench_function("baseline_memchr_serde_value", |b| {
        b.iter(|| baseline(black_box(&stream)))
    });
    group.finish();
}

criterion_group!(benches, frames);
criterion_main!(benches);
