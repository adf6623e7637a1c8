//! The bodies of the `host_dispatch` and `tool_search` fuzz targets, kept in the library so
//! that their seed corpora replay under a plain `cargo test`. Not part of the supported API.

use mcp_sansio::{Allowlist, Catalog, CatalogPolicy, Limits};

use crate::cost::Priced;
use crate::search::{Bm25, Hit, Hybrid, Ranker, ToolText};
use crate::{Palette, PaletteConfig, Provider, ToolIndex, MAX_SEARCH_RESULTS};

/// Fuzz body `host_dispatch`. Input: a tool's input schema, a NUL byte, then a model's
/// argument text. Whatever a server lists and a model sends, the palette never panics:
/// the schema is compiled (or the tool quarantined), offered and priced in every shape, and
/// the call dispatched (or refused); an accepted call's arguments are one JSON object. The
/// schema's text is also the tool's description, and the argument text also a call of the
/// search tool, so that tool search reads both.
pub fn host_dispatch(data: &[u8]) {
    let mut parts = data.splitn(2, |&b| b == 0);
    let (Some(schema), Some(arguments)) = (parts.next(), parts.next()) else {
        return;
    };
    let (Ok(schema), Ok(arguments)) = (
        core::str::from_utf8(schema),
        core::str::from_utf8(arguments),
    ) else {
        return;
    };
    let description = serde_json::Value::from(schema).to_string();
    let listing = format!(
        r#"{{"tools":[{{"name":"t","description":{description},"inputSchema":{schema}}}]}}"#
    );
    let policy = CatalogPolicy::QUARANTINE.untyped_schemas_as_objects();
    let Ok(catalog) = Catalog::from_json(&listing, policy, &Limits::default()) else {
        return;
    };
    let config = PaletteConfig {
        policy,
        ..PaletteConfig::default()
    };
    let mut palette = Palette::new(config);
    let allow: Allowlist = ["t"].into_iter().collect();
    let Ok(report) = palette.set_server("s", &allow, &catalog) else {
        return;
    };
    for provider in Provider::ALL {
        let priced = Priced::new(palette.offer(provider));
        assert_eq!(priced.tokens.len(), report.offered.len());
    }
    let index = ToolIndex::bm25(&palette);
    if let Ok(found) = palette.search(&index, arguments) {
        assert!(found.tools.len() <= MAX_SEARCH_RESULTS);
        let _ = found.to_string();
    }
    let _ = palette.offer_disclosed(Provider::OpenAiResponses);
    if report.offered.is_empty() {
        return;
    }
    if let Ok(call) = palette.dispatch("t", arguments) {
        assert!(
            call.arguments.as_str().starts_with('{'),
            "arguments not an object"
        );
    }
}

/// Fuzz body `tool_search`. Input: a query, then tools, each after a NUL byte. A tool's
/// text is its name (the characters a name may hold, up to 64, then its position, so that
/// names differ), its description, and a title from its first 40 characters; tools go to
/// three servers in turn, so that hubs are probed. Whatever the servers write and the model
/// asks, BM25 and the fusion of two BM25s never panic and keep the `Ranker` contract: at
/// most `k` distinct tools of the catalog, finite scores, best first with ties in (server,
/// tool) order, and the top `k` the first `k` of the longest answer.
pub fn tool_search(data: &[u8]) {
    let Ok(text) = core::str::from_utf8(data) else {
        return;
    };
    let mut parts = text.split('\0');
    let query = parts.next().unwrap_or_default();
    let mut tools = Vec::new();
    let servers = ["docs", "tracker", "browser"].into_iter().cycle();
    for ((at, part), server) in parts.take(24).enumerate().zip(servers) {
        let stem: String = part
            .chars()
            .filter(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-'))
            .take(64)
            .collect();
        let title: String = part.chars().take(40).collect();
        let listing = serde_json::json!({"tools": [{
            "name": format!("{stem}{at}"),
            "title": title,
            "description": part,
            "inputSchema": {"type": "object", "properties": {stem: {"type": "string",
                "description": part}}},
        }]});
        let policy = CatalogPolicy::QUARANTINE;
        let Ok(catalog) = Catalog::from_json(&listing.to_string(), policy, &Limits::default())
        else {
            continue;
        };
        tools.extend(catalog.tools().iter().map(|t| ToolText::new(server, t)));
    }
    let bm25 = Bm25::new(&tools);
    keeps_the_contract(&bm25, &tools, query);
    let other = Bm25::new(&swapped(&tools));
    keeps_the_contract(&Hybrid::new(bm25, other, &tools), &tools, query);
}

/// `tools` with their descriptions read as names and their names as descriptions: a second
/// ranker built on them orders the same tools otherwise, so that fused ranks cross and tie.
pub fn swapped(tools: &[ToolText]) -> Vec<ToolText> {
    tools
        .iter()
        .map(|t| ToolText {
            name_terms: t.body_terms.clone(),
            body_terms: t.name_terms.clone(),
            summary_terms: Vec::new(),
            ..t.clone()
        })
        .collect()
}

/// The `Ranker` contract (see [`tool_search`]) for `query` at every `k` up to one past the
/// catalog.
fn keeps_the_contract(ranker: &dyn Ranker, tools: &[ToolText], query: &str) {
    let key = |h: &Hit| tools.get(h.index).map(|t| (&t.server, &t.tool));
    let all = ranker.rank(query, tools.len() + 1).ok().unwrap_or_default();
    assert!(all.len() <= tools.len());
    let mut seen = std::collections::BTreeSet::new();
    for hit in &all {
        assert!(hit.index < tools.len() && hit.score.is_finite(), "{hit:?}");
        assert!(seen.insert(hit.index), "{hit:?} twice");
    }
    for pair in all.windows(2) {
        if let [a, b] = pair {
            assert!(
                a.score > b.score || (a.score == b.score && key(a) < key(b)),
                "{a:?} before {b:?}"
            );
        }
    }
    for k in [0, 1, 5] {
        let top = ranker.rank(query, k).ok().unwrap_or_default();
        assert_eq!(top, all.get(..k.min(all.len())).unwrap_or_default());
    }
}
