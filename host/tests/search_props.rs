//! BM25's and the fusion's promises over generated catalogs and queries: whatever text a
//! server writes and a model searches for (identifiers, synonyms, punctuation, any
//! Unicode), ranking never panics and its answer keeps the `Ranker` contract: at most `k`
//! distinct tools of the catalog, finite scores, best first with ties in (server, tool)
//! order, the same answer every time, and the top `k` the first `k` of any longer answer.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use mcp_sansio_host::fuzzing::swapped;
use mcp_sansio_host::search::{summary, tokens, Bm25, Hit, Hybrid, Ranker, ToolText};
use proptest::prelude::*;

/// Words that reach each path of the ranker: tool verbs and their synonym groups, every
/// shape of identifier it reads, standards that look like issue keys, words written apart
/// that a catalog writes as one, British spellings and bare endings they are read by, words
/// no tool holds, and text that is not words at all.
const WORDS: &[&str] = &[
    "get",
    "list",
    "create",
    "make",
    "new",
    "delete",
    "remove",
    "folder",
    "directory",
    "file",
    "issue",
    "ticket",
    "pull",
    "pr",
    "merge",
    "comment",
    "note",
    "watch",
    "follow",
    "search",
    "find",
    "page",
    "user",
    "roll",
    "back",
    "to-do",
    "organise",
    "organize",
    "colour",
    "ise",
    "Isations",
    "the",
    "a",
    "of",
    "PROJ-73",
    "OPS-7",
    "#42",
    "#general",
    "a1b2c3",
    "notes.txt",
    "src/main.rs",
    "~/Downloads",
    "/var/log",
    "@kenji",
    "kenji@example.com",
    "https://example.com/a",
    "docs.stripe.com",
    "UTF-8",
    "SHA-256",
    "e.g.",
    "v1.2",
    "naïve",
    "日本語",
    "天气预报",
    "メールを送信",
    "파일을",
    "ค้นหาไฟล์",
    "café",
    "cafe\u{301}",
    "ＧｉｔＨｕｂ",
    "Straße",
    "Ünïcödé",
    "🦀",
    "--",
    ".",
    "",
];

fn text() -> impl Strategy<Value = String> {
    prop_oneof![
        3 => proptest::collection::vec(proptest::sample::select(WORDS), 0..24)
            .prop_map(|words| words.join(" ")),
        1 => any::<String>(),
    ]
}

/// A catalog of 1 to 10 servers (from eight on, BM25 looks for hubs), each with 1 to 4
/// tools; every (server, tool) is unique, as in a palette. The tools' texts come from a
/// pool of three at most, so that tools tie and the tie-break is exercised.
fn catalog() -> impl Strategy<Value = Vec<ToolText>> {
    proptest::collection::vec((text(), text()), 1..4)
        .prop_flat_map(|pool| {
            let texts = pool.len();
            (
                Just(pool),
                proptest::collection::vec(proptest::collection::vec(0..texts, 1..5), 1..11),
            )
        })
        .prop_map(|(pool, servers)| {
            let mut tools = Vec::new();
            for (s, server_tools) in servers.into_iter().enumerate() {
                let server = format!("server{s}");
                for (t, at) in server_tools.into_iter().enumerate() {
                    let (name_words, description) = &pool[at];
                    let mut name_terms = tokens(name_words);
                    name_terms.extend(tokens(&server));
                    tools.push(ToolText {
                        server: server.clone(),
                        tool: format!("tool{t}"),
                        name_terms,
                        body_terms: tokens(description),
                        summary_terms: tokens(&summary(description)),
                        passage: description.clone(),
                        words: Vec::new(),
                    });
                }
            }
            tools
        })
}

fn in_order(tools: &[ToolText], a: &Hit, b: &Hit) -> bool {
    let key = |h: &Hit| (&tools[h.index].server, &tools[h.index].tool);
    a.score > b.score || (a.score == b.score && key(a) < key(b))
}

/// The `Ranker` contract for `query` and `k` (see the top of this file).
fn keeps_the_contract(
    ranker: &dyn Ranker,
    tools: &[ToolText],
    query: &str,
    k: usize,
) -> Result<(), TestCaseError> {
    let hits = ranker.rank(query, k).unwrap();
    prop_assert!(hits.len() <= k);
    let mut seen = std::collections::BTreeSet::new();
    for hit in &hits {
        prop_assert!(hit.index < tools.len(), "{hit:?}");
        prop_assert!(hit.score.is_finite(), "{hit:?}");
        prop_assert!(seen.insert(hit.index), "{hit:?} twice");
    }
    for pair in hits.windows(2) {
        prop_assert!(in_order(tools, &pair[0], &pair[1]), "{pair:?}");
    }
    prop_assert_eq!(&ranker.rank(query, k).unwrap(), &hits);
    let all = ranker.rank(query, tools.len()).unwrap();
    prop_assert_eq!(&all[..hits.len()], &hits[..]);
    // Fewer than k only when nothing else matched.
    if hits.len() < k {
        prop_assert_eq!(all.len(), hits.len());
    }
    Ok(())
}

proptest! {
    #[test]
    fn bm25_keeps_the_ranker_contract_on_any_text(
        tools in catalog(),
        query in text(),
        k in 0_usize..12,
    ) {
        keeps_the_contract(&Bm25::new(&tools), &tools, &query, k)?;
    }

    #[test]
    fn the_fusion_of_two_rankers_keeps_it_too(
        tools in catalog(),
        query in text(),
        k in 0_usize..12,
    ) {
        let hybrid = Hybrid::new(Bm25::new(&tools), Bm25::new(&swapped(&tools)), &tools);
        keeps_the_contract(&hybrid, &tools, &query, k)?;
    }
}
