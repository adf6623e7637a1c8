//! The per-call ratio, measured paired: mcp-sansio's whole call path against bare typed
//! serde_json (`call_path/mod.rs`), in alternating blocks of calls, so that a slow spell of
//! the machine (another tenant on a VM) slows both sides of a pair alike instead of one
//! separate criterion run.
//!
//! `cargo bench --bench per_call_paired`
//!
//! Each of 400 rounds times a block of 2,000 calls of each path and of writing the reply
//! alone, in an order that rotates from round to round; a round's ratio is
//! `(ours - reply) / (serde - reply)`. Prints the median ratio and its quartiles, and each
//! path's median time per call.

#![allow(
    clippy::expect_used,
    clippy::unwrap_used,
    clippy::panic,
    clippy::indexing_slicing,
    clippy::std_instead_of_core,
    clippy::new_without_default,
    clippy::print_stdout,
    missing_docs
)]

mod call_path;

use std::time::Instant;

use call_path::{Ours, Reply, Serde};

const ROUNDS: usize = 400;
const BLOCK: u32 = 2_000;

/// Nanoseconds per call over one block of `call`.
fn block(mut call: impl FnMut()) -> f64 {
    let started = Instant::now();
    for _ in 0..BLOCK {
        call();
    }
    started.elapsed().as_nanos() as f64 / f64::from(BLOCK)
}

fn quantile(sorted: &[f64], q: f64) -> f64 {
    sorted[((sorted.len() - 1) as f64 * q).round() as usize]
}

fn main() {
    // `cargo bench` passes `--bench`; `cargo test --benches` passes nothing: then one short
    // round proves it runs.
    let rounds = if std::env::args().any(|a| a == "--bench") {
        ROUNDS
    } else {
        1
    };
    let (mut ours, mut serde, mut reply) = (Ours::new(), Serde::new(), Reply::new());
    // Warm-up: caches, branch predictors, buffers at their working size.
    for _ in 0..3 {
        block(|| ours.call());
        block(|| serde.call());
        block(|| reply.call());
    }
    let mut samples = Vec::with_capacity(rounds);
    for round in 0..rounds {
        let mut times = [0.0; 3];
        for k in 0..3 {
            let which = (round + k) % 3;
            times[which] = match which {
                0 => block(|| ours.call()),
                1 => block(|| serde.call()),
                _ => block(|| reply.call()),
            };
        }
        samples.push(times);
    }
    let median = |index: usize| {
        let mut v: Vec<f64> = samples.iter().map(|t| t[index]).collect();
        v.sort_by(f64::total_cmp);
        quantile(&v, 0.5)
    };
    let mut ratios: Vec<f64> = samples.iter().map(|[o, s, r]| (o - r) / (s - r)).collect();
    ratios.sort_by(f64::total_cmp);
    println!(
        "per call: mcp-sansio {:.0} ns, serde_json typed {:.0} ns, reply alone {:.1} ns",
        median(0),
        median(1),
        median(2)
    );
    println!(
        "ratio (net of the reply), {rounds} paired rounds of {BLOCK} calls: median {:.3}, quartiles {:.3} to {:.3}, max {:.3}",
        quantile(&ratios, 0.5),
        quantile(&ratios, 0.25),
        quantile(&ratios, 0.75),
        quantile(&ratios, 1.0)
    );
}
