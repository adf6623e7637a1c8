//! The labelled tool-search set (`tests/data/search/`) and how a ranker's recall over it is
//! counted, for the tests of every ranker.

use mcp_sansio::{Catalog, CatalogPolicy, Limits};
use mcp_sansio_host::search::{Ranker, ToolText};
use serde_json::{json, Value};

/// The catalog file: `{"servers": [{"server", "tools"}]}`.
pub(crate) fn catalog() -> Value {
    serde_json::from_str(include_str!("../data/search/catalog.json")).unwrap()
}

/// The queries, one JSON object a line.
pub(crate) fn queries() -> Vec<Value> {
    include_str!("../data/search/queries.jsonl")
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// The tools of `catalog` as a client accepts them, ready to rank.
pub(crate) fn texts(catalog: &Value) -> Vec<ToolText> {
    let policy = CatalogPolicy::QUARANTINE.untyped_schemas_as_objects();
    let mut tools = Vec::new();
    for entry in catalog["servers"].as_array().unwrap() {
        let server = entry["server"].as_str().unwrap();
        let listing = json!({"tools": entry["tools"]}).to_string();
        let parsed = Catalog::from_json(&listing, policy, &Limits::default()).unwrap();
        tools.extend(parsed.tools().iter().map(|t| ToolText::new(server, t)));
    }
    tools
}

/// For each query, the `ranker`'s top five.
pub(crate) fn top_fives(ranker: &dyn Ranker, queries: &[Value]) -> Vec<Vec<usize>> {
    queries
        .iter()
        .map(|query| {
            let hits = ranker.rank(query["query"].as_str().unwrap(), 5).unwrap();
            hits.iter().map(|hit| hit.index).collect()
        })
        .collect()
}

/// How many queries have an expected tool in their top five.
pub(crate) fn found(tools: &[ToolText], queries: &[Value], tops: &[Vec<usize>]) -> usize {
    queries
        .iter()
        .zip(tops)
        .filter(|(query, top)| {
            top.iter().any(|&at| {
                let tool = &tools[at];
                query["expect"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .any(|pair| pair[0] == tool.server.as_str() && pair[1] == tool.tool.as_str())
            })
        })
        .count()
}
