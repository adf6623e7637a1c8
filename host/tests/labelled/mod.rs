//! The labelled tool-search sets (`tests/data/search/`, `heldout/`, `external/`, `unseen/`,
//! `fifth/`, `chinese/`, `shop/`) and how a ranker's recall over them is counted, for the tests of
//! every ranker.

use mcp_sansio::{Catalog, CatalogPolicy, Limits};
use mcp_sansio_host::search::{Ranker, ToolText};
use serde_json::{json, Value};

/// One labelled set: a catalog file and the queries written for it.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Set {
    /// `tests/data/search/`: the set the rankers were built and tuned on.
    Built,
    /// `tests/data/heldout/`: other servers and other queries, which only measure; nothing
    /// in the rankers was written or tuned from them.
    HeldOut,
    /// `tests/data/external/`: queries another project wrote for its own tool search. The
    /// misspelling rule and the bonus for a tool the query names were written after its
    /// misses were read.
    External,
    /// `tests/data/unseen/`: other servers and queries again, written after every rule of
    /// the rankers, to judge what was measured on the held-out set after its misses were
    /// read.
    Unseen,
    /// `tests/data/fifth/`: other servers and queries again, written once the unseen set's
    /// misses had been read, to judge what was measured after that.
    Fifth,
    /// `tests/data/chinese/`: three servers that describe their tools in Chinese, and
    /// queries written in Chinese.
    Chinese,
    /// `tests/data/shop/`: the seed's experiment rebuilt, 64 tools written by hand (the
    /// shop's eight, 24 that resemble them, 32 from other domains), and requests for the
    /// shop's tools.
    Shop,
}

impl Set {
    /// The sets written in English, in the order they were written.
    pub(crate) const ENGLISH: [Set; 5] = [
        Set::Built,
        Set::HeldOut,
        Set::External,
        Set::Unseen,
        Set::Fifth,
    ];

    /// The catalog file: `{"servers": [{"server", "source", "tools"}]}`.
    pub(crate) fn catalog(self) -> Value {
        serde_json::from_str(match self {
            Set::Built => include_str!("../data/search/catalog.json"),
            Set::HeldOut => include_str!("../data/heldout/catalog.json"),
            Set::External => include_str!("../data/external/catalog.json"),
            Set::Unseen => include_str!("../data/unseen/catalog.json"),
            Set::Fifth => include_str!("../data/fifth/catalog.json"),
            Set::Chinese => include_str!("../data/chinese/catalog.json"),
            Set::Shop => include_str!("../data/shop/catalog.json"),
        })
        .unwrap()
    }

    /// The queries, one JSON object a line.
    pub(crate) fn queries(self) -> Vec<Value> {
        match self {
            Set::Built => include_str!("../data/search/queries.jsonl"),
            Set::HeldOut => include_str!("../data/heldout/queries.jsonl"),
            Set::External => include_str!("../data/external/queries.jsonl"),
            Set::Unseen => include_str!("../data/unseen/queries.jsonl"),
            Set::Fifth => include_str!("../data/fifth/queries.jsonl"),
            Set::Chinese => include_str!("../data/chinese/queries.jsonl"),
            Set::Shop => include_str!("../data/shop/queries.jsonl"),
        }
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
    }
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
