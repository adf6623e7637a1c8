//! Building a palette of 50 servers with 40 tools each (schemas compiled, names assigned),
//! and checking one model call's arguments against its tool's schema.
//!
//! `cargo bench -p mcp-sansio-host --bench palette`

#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, Criterion};
use mcp_sansio::{Allowlist, Catalog, CatalogPolicy, Limits};
use mcp_sansio_host::{Palette, PaletteConfig};

const SERVERS: usize = 50;
const TOOLS: usize = 40;

/// A catalog of `TOOLS` tools shaped like real ones: a few typed, described properties,
/// some required, one enum, one nested object.
fn catalog(server: usize) -> Catalog {
    let tools: Vec<String> = (0..TOOLS)
        .map(|t| {
            format!(
                r#"{{"name":"tool_{t}.v{server}","description":"Does thing {t} on server {server}.","inputSchema":{{"type":"object","properties":{{"order_id":{{"type":"string","description":"The order."}},"amount":{{"type":"number","minimum":0}},"mode":{{"enum":["fast","safe"]}},"note":{{"type":"object","properties":{{"text":{{"type":"string"}}}}}}}},"required":["order_id","amount"]}}}}"#
            )
        })
        .collect();
    let text = format!(r#"{{"tools":[{}]}}"#, tools.join(","));
    Catalog::from_json(&text, CatalogPolicy::STRICT, &Limits::default()).unwrap()
}

fn palette(c: &mut Criterion) {
    let catalogs: Vec<(String, Catalog, Allowlist)> = (0..SERVERS)
        .map(|s| {
            let catalog = catalog(s);
            let allow: Allowlist = catalog.tools().iter().map(|t| t.name.as_str()).collect();
            (format!("server-{s}"), catalog, allow)
        })
        .collect();
    let build = || {
        let mut palette = Palette::new(PaletteConfig::default());
        for (id, catalog, allow) in &catalogs {
            palette.set_server(id, allow, catalog).unwrap();
        }
        palette
    };
    let mut group = c.benchmark_group("palette");
    group.sample_size(20);
    group.bench_function("build_50x40", |b| b.iter(|| black_box(build())));
    let built = build();
    assert_eq!(built.tools().count(), SERVERS * TOOLS);
    let args = r#"{"order_id":"ORD-3300","amount":180.0,"mode":"safe","note":{"text":"late"}}"#;
    group.sample_size(100);
    group.bench_function("dispatch_one_call", |b| {
        b.iter(|| {
            black_box(
                built
                    .dispatch(black_box("tool_7_v31"), args)
                    .unwrap()
                    .arguments,
            )
        })
    });
    group.finish();
}

criterion_group!(benches, palette);
criterion_main!(benches);
