//! The labelled tool-search set (`tests/data/search/`): what it is made of, that its labels
//! are honest, and that BM25's recall over it does not fall.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use std::collections::{BTreeSet, HashSet};

mod labelled;

use mcp_sansio_host::search::{tokens, Bm25};
use serde_json::json;

use labelled::{catalog, found, queries, texts, top_fives};

#[test]
fn the_set_is_real_servers_and_hand_written_queries() {
    let catalog = catalog();
    let servers = catalog["servers"].as_array().unwrap();
    let mut tools = HashSet::new();
    for entry in servers {
        let server = entry["server"].as_str().unwrap();
        // Where it came from: a registry, a package, a version.
        let source = entry["source"].as_str().unwrap();
        assert!(
            source.starts_with("npm ") || source.starts_with("PyPI "),
            "{source}"
        );
        // Not the peers the interop tests run against.
        assert!(!source.contains("server-everything") && !source.contains("word_count"));
        for tool in entry["tools"].as_array().unwrap() {
            assert!(tools.insert((server.to_owned(), tool["name"].as_str().unwrap().to_owned())));
        }
    }
    assert!(
        servers.len() >= 10 && tools.len() >= 200,
        "{} servers, {} tools",
        servers.len(),
        tools.len()
    );

    let queries = queries();
    assert!(queries.len() >= 200);
    let mut texts = BTreeSet::new();
    let mut unshared = 0;
    for query in &queries {
        let text = query["query"].as_str().unwrap();
        assert!(texts.insert(text), "{text} twice");
        let words: HashSet<String> = tokens(text).into_iter().collect();
        let mut shares = false;
        for pair in query["expect"].as_array().unwrap() {
            let (server, tool) = (pair[0].as_str().unwrap(), pair[1].as_str().unwrap());
            assert!(
                tools.contains(&(server.to_owned(), tool.to_owned())),
                "{text}: {server}/{tool}"
            );
            shares |= tokens(tool).iter().any(|t| words.contains(t));
        }
        // The kind says whether the query shares a word with an expected tool's name.
        let kind = if shares { "name-word" } else { "no-name-word" };
        assert_eq!(query["kind"], kind, "{text}");
        unshared += usize::from(!shares);
    }
    assert!(
        unshared * 3 >= queries.len(),
        "{unshared} of {}",
        queries.len()
    );
}

#[test]
fn bm25_recall_at_5_does_not_fall() {
    let tools = texts(&catalog());
    let queries = queries();
    let found = found(&tools, &queries, &top_fives(&Bm25::new(&tools), &queries));
    // 163 of 251 (0.649) when the set was written; 183 (0.729) once the description's first
    // sentence counted more; 190 (0.757) with the groups written from half the set's misses;
    // 193 (0.769) with hubs discounted; 199 (0.793) with what identifiers name ("PROJ-73":
    // an issue) counted as query words. README has the figures.
    assert!(found >= 199, "{found} of {}", queries.len());
}

/// A server that fills its tools with words to be found for every request: one tool
/// describes itself with every word of the catalog, one opens its description with every
/// common verb, one is named after ten verbs and titled after nine nouns. BM25 discounts
/// them as hubs (they answer every other server's probes), which halves what they take;
/// the rest it cannot tell from honest text, and the allowlist is the defence there (a
/// server the application has not allowed is never searched). What this pins is how much
/// they take, so a change to the ranker that makes stuffing pay more is seen.
#[test]
fn a_server_stuffing_its_tools_with_words_takes_a_bounded_share() {
    let mut catalog = catalog();
    let mut words = BTreeSet::new();
    for entry in catalog["servers"].as_array().unwrap() {
        for tool in entry["tools"].as_array().unwrap() {
            let text = tool["description"].as_str().unwrap_or_default();
            words.extend(
                text.split(|c: char| !c.is_ascii_alphabetic())
                    .filter(|w| !w.is_empty())
                    .map(str::to_lowercase),
            );
        }
    }
    let every: Vec<String> = words.into_iter().collect();
    let verbs = "create delete update get list search find read write run stop move copy \
                 open show add remove edit send post fetch download upload click type navigate";
    let object = json!({"type": "object"});
    catalog["servers"].as_array_mut().unwrap().push(json!({
        "server": "stuffer",
        "tools": [
            {"name": "everything", "description": every.join(" "), "inputSchema": object},
            {"name": "do_anything", "description": format!("{verbs}. {}", every.join(" ")),
             "inputSchema": object},
            {"name": "create_delete_update_get_list_search_find_read_write_run",
             "title": "issue ticket file page user message repository pull request",
             "description": verbs, "inputSchema": object},
        ],
    }));
    let tools = texts(&catalog);
    // All three within the catalog's limits: none left out for its size.
    assert_eq!(tools.iter().filter(|t| t.server == "stuffer").count(), 3);
    let queries = queries();
    let tops = top_fives(&Bm25::new(&tools), &queries);
    let reached = tops
        .iter()
        .filter(|top| top.iter().any(|&at| tools[at].server == "stuffer"))
        .count();
    let found = found(&tools, &queries, &tops);
    // Measured: in the top five for 15 of the 251 queries, and recall@5 from 199 to 198;
    // without the hub discount (and the identifiers' kinds), 36 and from 190 to 185.
    assert!(reached <= 20, "stuffed tools in {reached} top fives");
    assert!(found >= 195, "{found} of {}", queries.len());
}
