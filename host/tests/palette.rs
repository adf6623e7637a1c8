//! The palette's promises, over generated servers and catalogs: names are unique (ignoring
//! case) and fit every provider, surviving tools keep their names whatever else changes, and
//! every name routes to exactly the server and tool it was given for.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use std::collections::{BTreeMap, BTreeSet};

use mcp_sansio::{Allowlist, Catalog, CatalogPolicy, Limits};
use mcp_sansio_host::names::fits_providers;
use mcp_sansio_host::{Palette, PaletteConfig, Provider};
use proptest::prelude::*;

fn catalog(tools: &BTreeSet<String>) -> Catalog {
    let entries: Vec<String> = tools
        .iter()
        .map(|name| format!(r#"{{"name":"{name}","inputSchema":{{"type":"object"}}}}"#))
        .collect();
    let text = format!(r#"{{"tools":[{}]}}"#, entries.join(","));
    Catalog::from_json(&text, CatalogPolicy::STRICT, &Limits::default()).unwrap()
}

/// Tool names that collide once sanitised, differ only in case, or run past 64 characters.
fn tool_name() -> impl Strategy<Value = String> {
    prop_oneof![
        "[a-c]{1,3}",
        "[a-c]{1,2}[._][a-c]{1,2}",
        "[A-Ca-c]{1,3}",
        "[a-c]{60,70}",
        "[a-c.]{120,128}".prop_filter("a name", |s| !s.is_empty()),
    ]
}

fn server() -> impl Strategy<Value = (String, BTreeSet<String>)> {
    (
        "[a-c]{1,3}",
        proptest::collection::btree_set(tool_name(), 0..6),
    )
}

#[derive(Clone, Debug)]
enum Change {
    Set(String, BTreeSet<String>),
    Remove(String),
}

fn change() -> impl Strategy<Value = Change> {
    prop_oneof![
        3 => server().prop_map(|(id, tools)| Change::Set(id, tools)),
        1 => "[a-c]{1,3}".prop_map(Change::Remove),
    ]
}

/// Model name → (server, tool), from the palette's own listing.
fn map(palette: &Palette) -> BTreeMap<String, (String, String)> {
    palette
        .tools()
        .map(|t| {
            (
                t.name.to_owned(),
                (t.server.to_owned(), t.tool.name.clone()),
            )
        })
        .collect()
}

proptest! {
    #[test]
    fn names_are_unique_fit_providers_and_survivors_keep_them(
        changes in proptest::collection::vec(change(), 1..12)
    ) {
        let mut palette = Palette::new(PaletteConfig::default());
        for change in changes {
            let before = map(&palette);
            let mut expected: BTreeSet<(String, String)> = before.values().cloned().collect();
            match &change {
                Change::Set(id, tools) => {
                    let allow: Allowlist = tools.iter().map(String::as_str).collect();
                    palette.set_server(id, &allow, &catalog(tools)).unwrap();
                    expected.retain(|(server, _)| server != id);
                    expected.extend(tools.iter().map(|t| (id.clone(), t.clone())));
                }
                Change::Remove(id) => {
                    palette.remove_server(id);
                    expected.retain(|(server, _)| server != id);
                }
            }
            let after = map(&palette);
            // Exactly the allowed tools of the servers present, each once.
            let routed: BTreeSet<(String, String)> = after.values().cloned().collect();
            prop_assert_eq!(&routed, &expected);
            prop_assert_eq!(routed.len(), after.len());
            // Unique ignoring case, and every provider takes them.
            let folded: BTreeSet<String> = after.keys().map(|n| n.to_ascii_lowercase()).collect();
            prop_assert_eq!(folded.len(), after.len());
            for name in after.keys() {
                prop_assert!(fits_providers(name), "{name}");
            }
            // A tool that stayed kept its name.
            for (name, target) in &before {
                if expected.contains(target) {
                    prop_assert_eq!(after.get(name), Some(target), "{} was renamed", name);
                }
            }
            // Each name routes to what it names, and dispatch goes there.
            for (name, (server, tool)) in &after {
                let call = palette.dispatch(name, "{}").unwrap();
                prop_assert_eq!((call.server, call.tool), (server.as_str(), tool.as_str()));
            }
            // Offers name exactly the palette's tools, in every shape.
            for provider in Provider::ALL {
                let offer = palette.offer(provider);
                let names: Vec<&str> = offer
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|t| t.get("name").or_else(|| t["function"].get("name")).and_then(|n| n.as_str()).unwrap())
                    .collect();
                prop_assert_eq!(names, after.keys().map(String::as_str).collect::<Vec<_>>());
            }
        }
    }
}
