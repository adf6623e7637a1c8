//! The labelled tool-search sets (`tests/data/search/`, which the rankers were built on;
//! `tests/data/heldout/`, `unseen/` and `fifth/`, which only measure them; the external
//! set another project wrote; the seed's experiment rebuilt in `shop/`): what they are made
//! of, that their labels are honest, and that BM25's recall over them does not fall.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use std::collections::{BTreeMap, BTreeSet, HashSet};

mod labelled;

use mcp_sansio_host::search::{tokens, Bm25, Ranker, ToolText};
use serde_json::{json, Value};

use labelled::{found, texts, top_fives, Set};

/// The package a catalog entry's `source` names (`npm firecrawl-mcp 3.22.2 (note)`): its
/// registry and name, without the version or a note.
fn package(source: &str) -> String {
    source.split(' ').take(2).collect::<Vec<_>>().join(" ")
}

/// Whether `tools` hold the `[server, tool]` an expectation names.
fn holds(tools: &[ToolText], pair: &Value) -> bool {
    tools
        .iter()
        .any(|t| pair[0] == t.server.as_str() && pair[1] == t.tool.as_str())
}

/// The `kind` a query is labelled with: whether `text` shares a word with the name of a
/// tool its `expect` names.
fn name_word_kind(text: &str, expect: &Value) -> &'static str {
    let words: HashSet<String> = tokens(text).into_iter().collect();
    let shares = expect.as_array().unwrap().iter().any(|pair| {
        tokens(pair[1].as_str().unwrap())
            .iter()
            .any(|t| words.contains(t))
    });
    if shares {
        "name-word"
    } else {
        "no-name-word"
    }
}

/// The packages `set`'s catalog was recorded from.
fn packages(set: Set) -> BTreeSet<String> {
    set.catalog()["servers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|entry| package(entry["source"].as_str().unwrap()))
        .collect()
}

/// Each set's sources and labels, checked; the packages its catalog was recorded from.
fn check(set: Set, least_queries: usize) -> BTreeSet<String> {
    let catalog = set.catalog();
    let mut packages = BTreeSet::new();
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
        packages.insert(package(source));
        for tool in entry["tools"].as_array().unwrap() {
            assert!(tools.insert((server.to_owned(), tool["name"].as_str().unwrap().to_owned())));
        }
    }
    assert!(
        servers.len() >= 10 && tools.len() >= 200,
        "{set:?}: {} servers, {} tools",
        servers.len(),
        tools.len()
    );

    let queries = set.queries();
    assert!(
        queries.len() >= least_queries,
        "{set:?}: {} queries",
        queries.len()
    );
    let mut texts = BTreeSet::new();
    let mut unshared = 0;
    for query in &queries {
        let text = query["query"].as_str().unwrap();
        assert!(texts.insert(text), "{set:?}: {text} twice");
        for pair in query["expect"].as_array().unwrap() {
            let (server, tool) = (pair[0].as_str().unwrap(), pair[1].as_str().unwrap());
            assert!(
                tools.contains(&(server.to_owned(), tool.to_owned())),
                "{set:?}: {text}: {server}/{tool}"
            );
        }
        // The kind says whether the query shares a word with an expected tool's name.
        let kind = name_word_kind(text, &query["expect"]);
        assert_eq!(query["kind"], kind, "{set:?}: {text}");
        unshared += usize::from(kind == "no-name-word");
    }
    assert!(
        unshared * 3 >= queries.len(),
        "{set:?}: {unshared} of {}",
        queries.len()
    );
    packages
}

#[test]
fn the_sets_are_real_servers_and_hand_written_queries() {
    let built = check(Set::Built, 200);
    let held_out = check(Set::HeldOut, 198);
    let unseen = check(Set::Unseen, 130);
    let fifth = check(Set::Fifth, 139);
    // Held out in their servers too: no package of the set the rankers were built on, nor of
    // each other, nor (for the last) of the external set.
    let external = packages(Set::External);
    let sets = [built, held_out, unseen, fifth.clone()];
    for (at, one) in sets.iter().enumerate() {
        for other in sets.iter().skip(at + 1) {
            assert!(one.is_disjoint(other), "{one:?} {other:?}");
        }
    }
    assert!(fifth.is_disjoint(&external), "{fifth:?} {external:?}");
}

#[test]
fn bm25_recall_at_5_does_not_fall() {
    let recall = |set: Set| {
        let tools = texts(&set.catalog());
        let queries = set.queries();
        found(&tools, &queries, &top_fives(&Bm25::new(&tools), &queries))
    };
    // 163 of 251 (0.649) when the set was written; 183 (0.729) once the description's first
    // sentence counted more; 190 (0.757) with the groups written from half the set's misses;
    // 193 (0.769) with hubs discounted; 199 (0.793) with what identifiers name ("PROJ-73":
    // an issue) counted as query words; 201 (0.801) with 90 more synonym groups; 202 (0.805)
    // with a tool's name held by words related to the query's ("show me what's in notes.txt"
    // names `read_file`). The forms of words (`=collections` beside `collection`) kept it
    // there, and found 5 more first; 204 (0.813) with a title read from the annotations
    // where a tool has no other ("run the pricing watcher right now" finds Firecrawl's
    // "Run monitor now"); 207 (0.825) with a question's discount on tools that change
    // things ("who is following PROJ-812" no longer ranks `jira_remove_watcher` first); 209
    // (0.833) with an order's discount on tools that read ("remove the old cronjob from the
    // cluster" no longer ranks `list_api_resources` first); 211 (0.841) with a bonus for the
    // tools of a server the query names ("who are the members of our Notion workspace").
    // README has the figures.
    let built = recall(Set::Built);
    assert!(built >= 211, "{built} of 251");
    // 124 of 198 (0.626) when the held-out set was written, with the ranker above; 130
    // (0.657) with the 90 groups; 132 (0.667) with neighbouring words read as one ("roll
    // back" as `rollback`); 135 (0.682) with names held by related words ("remove the
    // duplicate rows" names `delete_records`); 141 (0.712) with the forms of words ("what
    // collections are in the shop database" finds `list-collections`); 145 (0.732) with a
    // question's discount ("who is on the platform team"); 146 (0.737) with an order's
    // ("post a weekly status update on the Checkout project"); 147 (0.742) with a server
    // named ("write a spec doc for the search project in Linear").
    let held_out = recall(Set::HeldOut);
    assert!(held_out >= 147, "{held_out} of 198");
    // 93 of 113 (0.823) when the external set was first measured; 97 (0.858) with slips of
    // the keys read as the word meant, 102 (0.903) with the bonus for a tool the query names,
    // 103 (0.912) with a camelCase word read whole as well ("run javascript").
    let external = recall(Set::External);
    assert!(external >= 103, "{external} of 113");
    // 92 of 130 (0.708) when the unseen set was written; 95 (0.731) with the 90 groups; 93
    // (0.715) with the forms of words, which lose "find the coordinates of 10 Downing
    // Street" and "split the Asana project into columns …" to tools that write
    // `coordinates` and `columns`, and find 2 more first; 94 (0.723) with the annotations'
    // titles ("find contacts at acme.com in the CRM": HubSpot's "Search CRM Objects"); 96
    // (0.738) with a question's discount; 97 (0.746) with an order's ("write an email to
    // the team but don't send it yet"); 98 (0.754) with a server named ("split the Asana
    // project into columns …").
    let unseen = recall(Set::Unseen);
    assert!(unseen >= 98, "{unseen} of 130");
    // 92 of 139 (0.662) when the fifth set was written; 93 (0.669) with the 90 groups; 94
    // (0.676) with the forms of words; 95 (0.683) with a question's discount; 96 (0.691)
    // with an order's ("upload logo.png to the R2 bucket"); 97 (0.698) with a server named
    // ("how many requests did my site get on Cloudflare yesterday").
    let fifth = recall(Set::Fifth);
    assert!(fifth >= 97, "{fifth} of 139");
}

/// The seed's experiment rebuilt (`tests/data/shop/`): Lucy's eight tools among 24 written
/// to resemble them and 32 from other domains, 64 in all, as the seed's confusable catalog
/// was made, and five requests for each of her tools, written before any ranker saw them.
/// On its own catalog of that make the seed measured BM25's recall@5 at 0.875 (21 of 24).
#[test]
fn the_seeds_confusable_catalog_rebuilt() {
    let catalog = Set::Shop.catalog();
    let mut roles: BTreeMap<&str, usize> = BTreeMap::new();
    for entry in catalog["servers"].as_array().unwrap() {
        *roles.entry(entry["role"].as_str().unwrap()).or_default() +=
            entry["tools"].as_array().unwrap().len();
    }
    let made = BTreeMap::from([("confusable", 24), ("shop", 8), ("unrelated", 32)]);
    assert_eq!(roles, made);
    let tools = texts(&catalog);
    assert_eq!(tools.len(), 64, "every tool a client accepts");
    let queries = Set::Shop.queries();
    let mut per_tool: BTreeMap<&str, usize> = BTreeMap::new();
    let mut unshared = 0;
    for query in &queries {
        let text = query["query"].as_str().unwrap();
        let expect = query["expect"].as_array().unwrap();
        assert_eq!(expect.len(), 1, "{text}");
        let pair = &expect[0];
        assert!(pair[0] == "shop" && holds(&tools, pair), "{text}: {pair}");
        *per_tool.entry(pair[1].as_str().unwrap()).or_default() += 1;
        let kind = name_word_kind(text, &query["expect"]);
        assert_eq!(query["kind"], kind, "{text}");
        unshared += usize::from(kind == "no-name-word");
    }
    assert!(
        per_tool.len() == 8 && per_tool.values().all(|&n| n == 5),
        "{per_tool:?}"
    );
    assert_eq!(unshared, 19);
    let found = found(&tools, &queries, &top_fives(&Bm25::new(&tools), &queries));
    // 34 of 40 (0.850) when the set was written. README has the figures.
    assert!(found >= 34, "{found} of {}", queries.len());
}

/// Three servers that describe their tools in Chinese (two map servers, one of recipes), as
/// they list them, and queries written in Chinese: BM25 reads Han text as its characters and
/// their pairs, and finds what a reader of Chinese would.
#[test]
fn a_catalog_in_chinese_is_searched_in_chinese() {
    let catalog = Set::Chinese.catalog();
    let tools = texts(&catalog);
    let mut own = BTreeSet::new();
    for entry in catalog["servers"].as_array().unwrap() {
        let source = entry["source"].as_str().unwrap();
        assert!(source.starts_with("npm "), "{source}");
        own.insert(package(source));
        let described = entry["tools"].as_array().unwrap().iter().all(|tool| {
            let description = tool["description"].as_str().unwrap();
            description
                .chars()
                .filter(|c| ('\u{4e00}'..='\u{9fff}').contains(c))
                .count()
                >= 4
        });
        assert!(described, "{source}: a tool not described in Chinese");
    }
    assert_eq!((own.len(), tools.len()), (3, 27));
    for other in Set::ENGLISH {
        assert!(own.is_disjoint(&packages(other)), "{other:?}");
    }
    let queries = Set::Chinese.queries();
    for query in &queries {
        let text = query["query"].as_str().unwrap();
        for pair in query["expect"].as_array().unwrap() {
            assert!(holds(&tools, pair), "{text}: {pair}");
        }
        // The kind says whether the query holds a Latin letter or a digit ("IP", "8.8.8.8").
        let latin = text.chars().any(|c| c.is_ascii_alphanumeric());
        let kind = if latin { "with-latin" } else { "han-only" };
        assert_eq!(query["kind"], kind, "{text}");
    }
    let found = found(&tools, &queries, &top_fives(&Bm25::new(&tools), &queries));
    // None of 35 while a run of Han characters was one word (a query's words never equal a
    // description's whole clause); 20 (0.571) with the pairs alone; 31 (0.886) with the
    // characters too.
    assert!(found >= 31, "{found} of {}", queries.len());
}

/// The external set is the other project's cases, whole: every expected tool is one the
/// catalog holds, as a client accepts it, and each case's kind is its prompt's length.
#[test]
fn the_external_set_is_the_other_projects_cases_whole() {
    let catalog = Set::External.catalog();
    let tools = texts(&catalog);
    let queries = Set::External.queries();
    assert_eq!(queries.len(), 113);
    for query in &queries {
        assert!(["short", "medium", "long"].contains(&query["kind"].as_str().unwrap()));
        for pair in query["expect"].as_array().unwrap() {
            assert!(holds(&tools, pair), "{pair}");
        }
    }
    for server in catalog["servers"].as_array().unwrap() {
        let source = server["source"].as_str().unwrap();
        assert!(
            source.starts_with("npm ") || source.starts_with("PyPI "),
            "{source}"
        );
    }
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
    let mut catalog = Set::Built.catalog();
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
    let queries = Set::Built.queries();
    // How many top fives hold a stuffed tool, and how many queries are still found.
    let measure = |tools: &[ToolText]| {
        let tops = top_fives(&Bm25::new(tools), &queries);
        let reached = tops
            .iter()
            .filter(|top| top.iter().any(|&at| tools[at].server == "stuffer"))
            .count();
        (reached, found(tools, &queries, &tops))
    };
    let (reached, kept) = measure(&tools);
    // Measured when this test was written: in the top five for 15 of the 251 queries, and
    // recall@5 from 199 to 198; without the hub discount (and the identifiers' kinds), 36
    // and from 190 to 185. On 2026-12-03, 20, and 202 still found of 202.
    assert!(reached <= 20, "stuffed tools in {reached} top fives");
    assert!(kept >= 195, "{kept} of {}", queries.len());

    // Two more, named by one common word each and described by the verbs: a query holding
    // "show" or "look up" must not name `get` or `find` for them. Measured: the five in 25
    // top fives, 201 found; 33 when a word related to the query's could hold a name of one
    // word.
    let stuffer = catalog["servers"]
        .as_array_mut()
        .unwrap()
        .last_mut()
        .unwrap();
    for name in ["get", "find"] {
        stuffer["tools"].as_array_mut().unwrap().push(json!(
            {"name": name, "description": verbs, "inputSchema": object}
        ));
    }
    let (reached, kept) = measure(&texts(&catalog));
    assert!(reached <= 27, "stuffed tools in {reached} top fives");
    assert!(kept >= 195, "{kept} of {}", queries.len());
}

/// `text` as British English spells it: `-ize` and `-yze` words with an `s` (`organization`,
/// `summarize`, `analyze`; not `size`), and the words spelt otherwise that these catalogs hold
/// (`color`, `center`, `catalog`, `license`, `behavior`, `canceled`, `labeled`…). Case kept.
fn british(text: &str) -> String {
    const WORDS: &[(&str, &str)] = &[
        ("color", "colour"),
        ("colors", "colours"),
        ("colored", "coloured"),
        ("favorite", "favourite"),
        ("favorites", "favourites"),
        ("behavior", "behaviour"),
        ("behaviors", "behaviours"),
        ("center", "centre"),
        ("centered", "centred"),
        ("meter", "metre"),
        ("meters", "metres"),
        ("kilometers", "kilometres"),
        ("catalog", "catalogue"),
        ("catalogs", "catalogues"),
        ("dialog", "dialogue"),
        ("license", "licence"),
        ("licenses", "licences"),
        ("gray", "grey"),
        ("artifact", "artefact"),
        ("artifacts", "artefacts"),
        ("canceled", "cancelled"),
        ("canceling", "cancelling"),
        ("labeled", "labelled"),
        ("labeling", "labelling"),
        ("modeling", "modelling"),
        ("traveling", "travelling"),
    ];
    const Z_ENDINGS: [&str; 11] = [
        "izations", "ization", "izers", "izer", "izing", "ized", "izes", "ize", "yzing", "yzed",
        "yze",
    ];
    let respell = |word: &str| -> Option<String> {
        let lower = word.to_lowercase();
        let new = WORDS
            .iter()
            .find(|(american, _)| *american == lower)
            .map(|(_, british)| (*british).to_owned())
            .or_else(|| {
                let ending = Z_ENDINGS.iter().find(|e| lower.ends_with(*e))?;
                let beginning = &lower[..lower.len() - ending.len()];
                (beginning.len() >= 3 && !lower.contains("size"))
                    .then(|| format!("{beginning}{}", ending.replacen('z', "s", 1)))
            })?;
        Some(if word.chars().all(|c| c.is_ascii_uppercase()) {
            new.to_uppercase()
        } else if word.starts_with(|c: char| c.is_ascii_uppercase()) {
            format!("{}{}", new[..1].to_uppercase(), &new[1..])
        } else {
            new
        })
    };
    let mut out = String::new();
    let mut word = String::new();
    for c in text.chars().chain(std::iter::once(' ')) {
        if c.is_ascii_alphabetic() {
            word.push(c);
            continue;
        }
        out.push_str(&respell(&word).unwrap_or_else(|| word.clone()));
        word.clear();
        out.push(c);
    }
    out.pop();
    out
}

/// A server that writes British English is found as if it wrote American English: each set's
/// catalog, its titles and descriptions (the tool's and its parameters') respelt, ranks every
/// query exactly as the catalog as recorded does. Before British spellings were read, four
/// of the five respelt catalogs ranked some queries otherwise: the ranking depended on how a
/// description was spelt.
#[test]
fn a_catalog_in_british_spelling_ranks_as_the_american_one() {
    let mut respelt = 0;
    for set in Set::ENGLISH {
        let catalog = set.catalog();
        let mut british_catalog = catalog.clone();
        for entry in british_catalog["servers"].as_array_mut().unwrap() {
            for tool in entry["tools"].as_array_mut().unwrap() {
                let tool = tool.as_object_mut().unwrap();
                let mut texts = Vec::new();
                for (key, value) in tool.iter_mut() {
                    match key.as_str() {
                        "title" | "description" => texts.push(value),
                        "inputSchema" => texts.extend(
                            value
                                .get_mut("properties")
                                .and_then(|p| p.as_object_mut())
                                .into_iter()
                                .flat_map(|p| p.values_mut())
                                .filter_map(|p| p.get_mut("description")),
                        ),
                        _ => {}
                    }
                }
                for text in texts {
                    if let Some(american) = text.as_str() {
                        let respelling = british(american);
                        respelt += usize::from(respelling != american);
                        *text = json!(respelling);
                    }
                }
            }
        }
        let (tools, british_tools) = (texts(&catalog), texts(&british_catalog));
        let (index, british_index) = (Bm25::new(&tools), Bm25::new(&british_tools));
        for query in set.queries() {
            let query = query["query"].as_str().unwrap();
            assert_eq!(
                index.rank(query, 10).unwrap(),
                british_index.rank(query, 10).unwrap(),
                "{set:?}: {query}"
            );
        }
    }
    // 286 titles and descriptions of the five catalogs hold a word British English spells
    // otherwise.
    assert!(respelt >= 280, "{respelt} texts respelt");
}

/// A model searching for tools through the palette's search tool writes the request inside
/// a frame ("find a tool that can …"), and its words ("find", "tool") match tools that find
/// things or are named `…_tool`. Framed six ways, each set's queries find as many of their
/// tools in the top five as the queries alone. Before frames were read, "find a tool that can
/// …" took the first set from 202 to 155 and the held-out set from 135 to 95. The first three
/// frames are of those written before the rule that reads them; the last three of those
/// written to check it once it was built (`host/RANKING.md`, the step that reads frames).
#[test]
fn a_request_framed_as_a_search_for_a_tool_or_in_courtesies_finds_what_the_request_finds() {
    const FRAMES: [&str; 11] = [
        "find a tool that can {}",
        "I need a tool that lets me {}",
        "which tool should I use to {}",
        "is there any tool to {}",
        "Tool: {}",
        "{} tool",
        "I need to {}",
        "I'd like to {}",
        "can you help me {}",
        "could you please {}",
        "hey, {} for me, please",
    ];
    for set in Set::ENGLISH {
        let tools = texts(&set.catalog());
        let index = Bm25::new(&tools);
        let queries = set.queries();
        // How many queries find a tool in the top five, each written in `frame`: `{}` is the
        // query, `{server}` the server of its first expected tool.
        let found_in = |frame: &str| {
            let framed: Vec<Value> = queries
                .iter()
                .map(|query| {
                    let mut query = query.clone();
                    let server = query["expect"][0][0].as_str().unwrap();
                    let text = query["query"].as_str().unwrap();
                    let text = frame.replace("{server}", server).replace("{}", text);
                    query["query"] = json!(text);
                    query
                })
                .collect();
            found(&tools, &framed, &top_fives(&index, &framed))
        };
        let plain = found_in("{}");
        for frame in FRAMES {
            assert_eq!(found_in(frame), plain, "{set:?}, framed as {frame:?}");
        }
        // After the server's name, "slack tools to …" finds what "slack: …" does.
        assert_eq!(
            found_in("{server} tools to {}"),
            found_in("{server}: {}"),
            "{set:?}"
        );
    }
}
