//! Ranking one query over 10,000 tools: BM25 (and building its index), and with the `embed`
//! feature, embedding the query and ranking 10,000 cached tool vectors.
//!
//! `cargo bench -p mcp-sansio-host --bench search`, or with the embedding ranker:
//! `MCP_PALETTE_MODEL=DIR cargo bench -p mcp-sansio-host --features embed --bench search`

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    missing_docs
)]

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, Criterion};
use mcp_sansio::{Catalog, CatalogPolicy, Limits};
use mcp_sansio_host::search::{Bm25, Ranker, ToolText};

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

/// Tool `n`: a three-word name and a twelve-word description, spread over the vocabulary,
/// read as a real server's tool is ([`ToolText::new`]: stems, forms, the first sentence).
fn tool(n: usize) -> ToolText {
    let word = |i: usize| WORDS[(n * 7 + i * 13 + i * i) % WORDS.len()];
    let name = format!("{}_{}_{}", word(0), word(1), word(2));
    let description = (3..15).map(word).collect::<Vec<&str>>().join(" ");
    let listing = serde_json::json!({"tools": [{
        "name": name, "description": description, "inputSchema": {"type": "object"}}]});
    let catalog = Catalog::from_json(
        &listing.to_string(),
        CatalogPolicy::STRICT,
        &Limits::default(),
    )
    .unwrap();
    ToolText::new(&format!("server_{}", n % 100), &catalog.tools()[0])
}

const QUERY: &str = "refund the customer's last order payment";

/// The same request with a slip of the keys in each word the catalog holds, so each is
/// looked for among its one-slip variants.
const MISSPELT: &str = "refnud the custmoer's last oredr paymnet";

fn search(c: &mut Criterion) {
    let tools: Vec<ToolText> = (0..TOOLS).map(tool).collect();
    let mut group = c.benchmark_group("bm25_10k_tools");
    group.sample_size(20);
    group.bench_function("build", |b| b.iter(|| Bm25::new(black_box(&tools))));
    let index = Bm25::new(&tools);
    assert_eq!(index.rank(QUERY, 5).map(|h| h.len()).ok(), Some(5));
    group.bench_function("rank_top5", |b| b.iter(|| index.rank(black_box(QUERY), 5)));
    assert_eq!(index.rank(MISSPELT, 5).ok(), index.rank(QUERY, 5).ok());
    group.bench_function("rank_top5_misspelt", |b| {
        b.iter(|| index.rank(black_box(MISSPELT), 5));
    });
    group.finish();
}

#[cfg(feature = "embed")]
fn embed(c: &mut Criterion) {
    use mcp_sansio_host::search::{Embedder, Embeddings, Hybrid, VectorCache};
    let Some(dir) = std::env::var_os("MCP_PALETTE_MODEL").map(std::path::PathBuf::from) else {
        eprintln!("embed benches skipped: set MCP_PALETTE_MODEL to the model's folder");
        return;
    };
    let read = |name: &str| std::fs::read(dir.join(name)).unwrap();
    let embedder = std::sync::Arc::new(
        Embedder::from_bytes(
            &read("config.json"),
            &read("tokenizer.json"),
            read("model.safetensors"),
        )
        .unwrap(),
    );
    let tools: Vec<ToolText> = (0..TOOLS).map(tool).collect();
    let started = std::time::Instant::now();
    let index = Embeddings::new(embedder.clone(), &tools, &mut VectorCache::new()).unwrap();
    eprintln!(
        "embedding {TOOLS} tool texts once took {:.1} s",
        started.elapsed().as_secs_f64()
    );
    let mut group = c.benchmark_group("embed_10k_tools");
    group.sample_size(20);
    group.bench_function("embed_query", |b| {
        b.iter(|| embedder.embed(black_box(&[QUERY])))
    });
    assert_eq!(index.rank(QUERY, 5).map(|h| h.len()).ok(), Some(5));
    group.bench_function("rank_top5", |b| b.iter(|| index.rank(black_box(QUERY), 5)));
    let hybrid = Hybrid::new(Bm25::new(&tools), index, &tools);
    group.bench_function("hybrid_top5", |b| {
        b.iter(|| hybrid.rank(black_box(QUERY), 5))
    });
    group.finish();
}

#[cfg(feature = "embed")]
criterion_group!(benches, search, embed);
#[cfg(not(feature = "embed"))]
criterion_group!(benches, search);
criterion_main!(benches);
