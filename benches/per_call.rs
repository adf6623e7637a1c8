//! The whole per-call path in the core, beside bare serde_json on the same two messages (the
//! paths are described in `call_path/mod.rs`).
//!
//! `cargo bench --bench per_call`; `--bench per_call_paired` gives the ratio.

// A benchmark runs on known-good input and may panic if that assumption breaks.
#![allow(
    clippy::expect_used,
    clippy::unwrap_used,
    clippy::panic,
    clippy::indexing_slicing,
    clippy::std_instead_of_core,
    clippy::new_without_default,
    missing_docs
)]

mod call_path;

use call_path::{Ours, Reply, Serde};
use criterion::{criterion_group, criterion_main, Criterion};

fn per_call(c: &mut Criterion) {
    let mut group = c.benchmark_group("per_call");
    let mut ours = Ours::new();
    group.bench_function("mcp_sansio", |b| b.iter(|| ours.call()));
    let mut serde = Serde::new();
    group.bench_function("serde_json_typed", |b| b.iter(|| serde.call()));
    let mut reply = Reply::new();
    group.bench_function("reply_only", |b| b.iter(|| reply.call()));
    group.finish();
}

criterion_group!(benches, per_call);
criterion_main!(benches);
