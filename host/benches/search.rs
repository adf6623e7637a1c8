//! BM25 over 10,000 tools: building the index, and ranking one query.
//!
//! `cargo bench -p mcp-sansio-host --bench search`

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    missing_docs
)]

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, Criterion};
use mcp_sansio_host::search::{tokens, Bm25, Ranker, ToolText};

const TOOLS: usize = 10_000;

/// Words to build names and descriptions from: a vocabulary the size of a real catalog's.
const WORDS: [&str; 64] = [
    "get",
    "list",
    "create",
    "update",
    "delete",
    "search",
    "read",
    "write",
    "file",
    "issue",
    "pull",
    "request",
    "branch",
    "commit",
    "repository",
    "user",
    "team",
    "channel",
    "message",
    "calendar",
    "event",
    "invoice",
    "customer",
    "order",
    "refund",
    "payment",
    "stock",
    "price",
    "weather",
    "forecast",
    "alert",
    "city",
    "route",
    "map",
    "place",
    "image",
    "video",
    "page",
    "database",
    "table",
    "query",
    "row",
    "column",
    "schema",
    "log",
    "metric",
    "trace",
    "deploy",
    "build",
    "test",
    "ticket",
    "comment",
    "label",
    "project",
    "task",
    "note",
    "document",
    "folder",
    "share",
    "permission",
    "token",
    "secret",
    "email",
    "contact",
];

/// Tool `n`: a three-word name and a twelve-word description, spread over the vocabulary.
fn tool(n: usize) -> ToolText {
    let word = |i: usize| WORDS[(n * 7 + i * 13 + i * i) % WORDS.len()];
    let name = format!("{}_{}_{}", word(0), word(1), word(2));
    let description: Vec<&str> = (3..15).map(word).collect();
    ToolText {
        server: format!("server_{}", n % 100),
        tool: name.clone(),
        name_terms: tokens(&name),
        body_terms: tokens(&description.join(" ")),
    }
}

fn search(c: &mut Criterion) {
    let tools: Vec<ToolText> = (0..TOOLS).map(tool).collect();
    let mut group = c.benchmark_group("bm25_10k_tools");
    group.sample_size(20);
    group.bench_function("build", |b| b.iter(|| Bm25::new(black_box(&tools))));
    let index = Bm25::new(&tools);
    let query = "refund the customer's last order payment";
    assert_eq!(index.rank(query, 5).len(), 5);
    group.bench_function("rank_top5", |b| b.iter(|| index.rank(black_box(query), 5)));
    group.finish();
}

criterion_group!(benches, search);
criterion_main!(benches);
