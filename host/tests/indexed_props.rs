//! `IndexedPalette` builds its search index lazily, at the first search after changes, and
//! keeps it through what does not change the offered tools (a search, `hide_all`). Over any
//! sequence of servers set and removed, searches and disclosures forgotten, it must answer
//! every search exactly as a palette whose index is built afresh for each search, and
//! disclose the same tools.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use mcp_sansio::{Allowlist, Catalog, CatalogPolicy, Limits};
use mcp_sansio_host::{
    IndexedPalette, Observation, Palette, PaletteConfig, ToolIndex, SEARCH_TOOL,
};
use proptest::prelude::*;

/// The tools a server may list: a few share words, so that changes move the rankings.
const TOOLS: &[(&str, &str)] = &[
    ("get_forecast", "Weather forecast for a city."),
    ("get_alerts", "Weather alerts for a region."),
    ("read_file", "Read a file from disk."),
    ("write_file", "Write a file to disk."),
    ("list_issues", "List the issues of a repository."),
    ("create_issue", "Open a new issue in a repository."),
    ("search_code", "Search code across repositories."),
    ("send_message", "Send a message to a channel."),
];

const SERVERS: &[&str] = &["weather", "files", "github"];

const WORDS: &[&str] = &[
    "weather",
    "forecast",
    "file",
    "read",
    "write",
    "issue",
    "open",
    "repository",
    "code",
    "message",
    "send",
    "city",
    "disk",
    "nothing",
];

#[derive(Clone, Debug)]
enum Step {
    /// Server `SERVERS[.0]` lists the tools of `TOOLS` whose bits `.1` sets.
    Set(usize, u8),
    Remove(usize),
    HideAll,
    /// A search for these words, at most `.1` tools.
    Search(Vec<usize>, u8),
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        3 => (0..SERVERS.len(), any::<u8>()).prop_map(|(s, tools)| Step::Set(s, tools)),
        1 => (0..SERVERS.len()).prop_map(Step::Remove),
        1 => Just(Step::HideAll),
        4 => (prop::collection::vec(0..WORDS.len(), 1..4), 1..6u8)
            .prop_map(|(words, limit)| Step::Search(words, limit)),
    ]
}

fn catalog(bits: u8) -> Catalog {
    let tools: Vec<String> = TOOLS
        .iter()
        .enumerate()
        .filter(|(i, _)| bits & (1 << i) != 0)
        .map(|(_, (name, description))| {
            format!(
                r#"{{"name":"{name}","description":"{description}","inputSchema":{{"type":"object"}}}}"#
            )
        })
        .collect();
    let json = format!(r#"{{"tools":[{}]}}"#, tools.join(","));
    Catalog::from_json(&json, CatalogPolicy::STRICT, &Limits::default()).unwrap()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn the_lazy_index_answers_as_a_fresh_one(steps in prop::collection::vec(step(), 1..24)) {
        let allow: Allowlist = TOOLS.iter().map(|(name, _)| *name).collect();
        let mut indexed = IndexedPalette::new(PaletteConfig::default());
        let mut fresh = Palette::new(PaletteConfig::default());
        for step in steps {
            match step {
                Step::Set(server, bits) => {
                    let listed = catalog(bits);
                    let a = indexed.change(|p| p.set_server(SERVERS[server], &allow, &listed));
                    let b = fresh.set_server(SERVERS[server], &allow, &listed);
                    prop_assert_eq!(a.unwrap(), b.unwrap());
                }
                Step::Remove(server) => {
                    let a = indexed.change(|p| p.remove_server(SERVERS[server]));
                    prop_assert_eq!(a, fresh.remove_server(SERVERS[server]));
                }
                Step::HideAll => {
                    indexed.hide_all();
                    fresh.hide_all();
                }
                Step::Search(words, limit) => {
                    let query: Vec<&str> = words.iter().map(|&w| WORDS[w]).collect();
                    let arguments = format!(
                        r#"{{"query":"{}","limit":{limit}}}"#,
                        query.join(" ")
                    );
                    let Err(Observation::Answer { text }) = indexed.route(SEARCH_TOOL, &arguments)
                    else {
                        panic!("the search was not answered");
                    };
                    let index = ToolIndex::bm25(&fresh);
                    let found = fresh.search(&index, &arguments).unwrap();
                    prop_assert_eq!(text, found.to_string());
                }
            }
            prop_assert_eq!(
                indexed.palette().disclosed().collect::<Vec<_>>(),
                fresh.disclosed().collect::<Vec<_>>()
            );
        }
    }
}
