//! Heap allocations on the per-call path, counted (not timed): a regression that allocates
//! per frame, per id or per empty `extra` object fails here.
//!
//! `cargo test --test allocations -- --nocapture` prints the figure.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use mcp_sansio::{Allowlist, Config, Instant, Limits, RawObject};

#[global_allocator]
static ALLOC: dhat::Alloc = dhat::Alloc;

/// The most allocations one `tools/call` may cost, from the command to the typed result's
/// text: the content list and the block's text (`text()` lends a lone text block).
const BUDGET: u64 = 2;

#[test]
fn one_call_costs_at_most_its_budget_of_allocations() {
    let _profiler = dhat::Profiler::builder().testing().build();
    let config = Config::new(["word_count"].into_iter().collect::<Allowlist>());
    let mut client = mcp_sansio::fuzzing::connected_client(config);
    let now = Instant::ZERO;
    let mut frame = Vec::with_capacity(512);
    let args = RawObject::parse(
        r#"{"text":"vanilla stock needs review"}"#,
        &Limits::default(),
    )
    .unwrap();
    let calls = 110;
    let replies: Vec<String> = (3..3 + calls)
        .map(|id| {
            format!("{{\"jsonrpc\":\"2.0\",\"id\":{id},\"result\":{{\"content\":[{{\"type\":\"text\",\"text\":\"4\"}}],\"isError\":false}}}}\n")
        })
        .collect();
    let mut counted = 0;
    for (n, reply) in replies.iter().enumerate() {
        let start = dhat::HeapStats::get().total_blocks;
        let op = client.call_tool("word_count", &args, now).unwrap();
        frame.clear();
        client.poll_transmit(&mut frame).unwrap();
        client.handle_input(reply.as_bytes(), now);
        let result = op.finished(client.poll_event().unwrap()).unwrap().unwrap();
        assert_eq!(result.text(), "4");
        // The first ten grow the buffers to their working size; the rest are counted.
        if n >= 10 {
            counted += dhat::HeapStats::get().total_blocks - start;
        }
    }
    let per_call = counted / (calls - 10) as u64;
    println!("allocations per call: {per_call}");
    assert!(
        per_call <= BUDGET,
        "{per_call} allocations per call, budget {BUDGET}"
    );
}
