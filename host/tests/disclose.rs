//! Progressive disclosure: the model starts with the search tool alone, sees what it found,
//! and is still refused whatever the application does not allow.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use mcp_sansio::{Allowlist, Catalog, CatalogPolicy, Limits};
use mcp_sansio_host::names::fits_providers;
use mcp_sansio_host::search::{Hit, RankError, Ranker};
use mcp_sansio_host::{Palette, PaletteConfig, Provider, Refusal, ToolIndex, SEARCH_TOOL};
use serde_json::Value;

fn catalog(json: &str) -> Catalog {
    Catalog::from_json(json, CatalogPolicy::STRICT, &Limits::default()).unwrap()
}

fn shop() -> Catalog {
    catalog(
        r#"{"tools":[
        {"name":"process_refund","description":"Refund an order. Use with care.","inputSchema":{"type":"object","properties":{"order_id":{"type":"string"},"amount":{"type":"number"}},"required":["order_id","amount"]}},
        {"name":"place_purchase","description":"Buy something on the customer's card.","inputSchema":{"type":"object"}},
        {"name":"track_order","description":"Where an order is in delivery.","inputSchema":{"type":"object"}},
        {"name":"search_tools","description":"The shop's own search of its product catalog.","inputSchema":{"type":"object"}}]}"#,
    )
}

fn palette() -> Palette {
    let mut palette = Palette::new(PaletteConfig::default());
    let allow: Allowlist = ["process_refund", "track_order", "search_tools"]
        .into_iter()
        .collect();
    palette.set_server("shop", &allow, &shop()).unwrap();
    palette
}

fn names(offer: &Value, provider: Provider) -> Vec<String> {
    offer
        .as_array()
        .unwrap()
        .iter()
        .map(|t| match provider {
            Provider::OpenAiChat => t["function"]["name"].as_str().unwrap().to_owned(),
            _ => t["name"].as_str().unwrap().to_owned(),
        })
        .collect()
}

#[test]
fn the_model_starts_with_the_search_tool_and_is_shown_what_it_finds() {
    let mut palette = palette();
    // A server's tool never takes the search tool's name.
    assert!(palette.route(SEARCH_TOOL).is_none());
    assert!(palette.route("shop_search_tools").is_some());
    for provider in Provider::ALL {
        let offer = palette.offer_disclosed(provider);
        assert_eq!(names(&offer, provider), [SEARCH_TOOL], "{provider:?}");
    }
    let index = ToolIndex::bm25(&palette);
    let found = palette
        .search(&index, r#"{"query":"refund the order","limit":1}"#)
        .unwrap();
    assert_eq!(
        found.tools,
        [("process_refund".to_owned(), "Refund an order.".to_owned())]
    );
    assert_eq!(
        found.to_string(),
        "process_refund: Refund an order.\nThese tools can be called from the next turn."
    );
    // The next offer holds what was found, in full, after the search tool.
    let offer = palette.offer_disclosed(Provider::Anthropic);
    assert_eq!(
        names(&offer, Provider::Anthropic),
        [SEARCH_TOOL, "process_refund"]
    );
    assert_eq!(offer[1]["input_schema"]["required"][1], "amount");
    assert!(names(&offer, Provider::Anthropic)
        .iter()
        .all(|n| fits_providers(n)));
    assert_eq!(palette.disclosed().collect::<Vec<_>>(), ["process_refund"]);
    palette.hide_all();
    assert_eq!(
        palette
            .offer_disclosed(Provider::Anthropic)
            .as_array()
            .unwrap()
            .len(),
        1
    );
}

#[test]
fn disclosure_never_widens_what_may_run() {
    let mut palette = palette();
    // Not allowed: cannot be disclosed, found, or called.
    assert!(!palette.disclose("place_purchase"));
    let index = ToolIndex::bm25(&palette);
    let found = palette
        .search(
            &index,
            r#"{"query":"buy something on the card","limit":20}"#,
        )
        .unwrap();
    assert!(found.tools.iter().all(|(name, _)| name != "place_purchase"));
    assert_eq!(
        palette.dispatch("place_purchase", "{}").unwrap_err(),
        Refusal::UnknownTool {
            name: "place_purchase".into()
        }
    );
    // Allowed but never shown: still checked in full, as any call.
    assert_eq!(
        palette
            .dispatch("process_refund", r#"{"order_id":"A"}"#)
            .unwrap_err()
            .to_string(),
        "missing required argument 'amount'"
    );
    // The search tool is the palette's, not a server's: it never dispatches.
    assert!(matches!(
        palette.dispatch(SEARCH_TOOL, r#"{"query":"x"}"#),
        Err(Refusal::UnknownTool { .. })
    ));
}

#[test]
fn the_search_tools_arguments_are_checked_like_any_call() {
    let mut palette = palette();
    let index = ToolIndex::bm25(&palette);
    let refused = |palette: &mut Palette, arguments: &str| {
        palette.search(&index, arguments).unwrap_err().to_string()
    };
    assert_eq!(
        refused(&mut palette, r#"{"limit":3}"#),
        "missing required argument 'query'"
    );
    assert!(refused(&mut palette, r#"{"query":"x","limit":500}"#).contains("'limit'"));
    assert!(refused(&mut palette, r#"{"query":"x","other":1}"#).contains("other"));
    assert!(refused(&mut palette, "[1]")
        .starts_with("the arguments for 'search_tools' must be one JSON object"));
    // Nothing matched: said so, nothing disclosed.
    let found = palette
        .search(&index, r#"{"query":"quantum chromodynamics"}"#)
        .unwrap();
    assert!(found.tools.is_empty());
    assert_eq!(found.to_string(), "No tool matches; try other words.");
    assert_eq!(palette.disclosed().count(), 0);
}

#[test]
fn a_tool_that_leaves_is_neither_offered_nor_found_through_an_old_index() {
    let mut palette = palette();
    let index = ToolIndex::bm25(&palette);
    assert!(palette.disclose("track_order"));
    // The server's new catalog drops track_order.
    let allow: Allowlist = ["process_refund", "track_order"].into_iter().collect();
    let smaller =
        catalog(r#"{"tools":[{"name":"process_refund","inputSchema":{"type":"object"}}]}"#);
    palette.set_server("shop", &allow, &smaller).unwrap();
    assert_eq!(
        names(
            &palette.offer_disclosed(Provider::Anthropic),
            Provider::Anthropic
        ),
        [SEARCH_TOOL]
    );
    let found = palette
        .search(&index, r#"{"query":"where is my order in delivery"}"#)
        .unwrap();
    assert!(
        found.tools.iter().all(|(name, _)| name != "track_order"),
        "{found:?}"
    );
}

/// A ranker of the application's own: it answers every query with `hits`, or fails.
struct Fixed(Result<Vec<Hit>, RankError>);

impl Ranker for Fixed {
    fn rank(&self, _query: &str, k: usize) -> Result<Vec<Hit>, RankError> {
        self.0
            .clone()
            .map(|hits| hits.into_iter().take(k).collect())
    }
}

#[test]
fn an_application_s_own_ranker_is_asked_and_trusted_no_further_than_the_palette() {
    let mut palette = palette();
    // It is built from the palette's tools, in the order its hits index.
    let mut seen = Vec::new();
    let hit = |index| Hit { index, score: 1.0 };
    let index = ToolIndex::with_ranker(&palette, |texts| {
        seen = texts.iter().map(|t| t.tool.clone()).collect();
        Ok::<_, RankError>(Fixed(Ok(vec![hit(99), hit(1), hit(1)])))
    })
    .unwrap();
    assert_eq!(seen, ["process_refund", "search_tools", "track_order"]);
    // A hit past the palette's tools is no tool, never shown nor disclosed; a tool named
    // twice is shown once.
    let found = palette.search(&index, r#"{"query":"anything"}"#).unwrap();
    assert_eq!(
        found
            .tools
            .iter()
            .map(|(name, _)| name.as_str())
            .collect::<Vec<_>>(),
        ["shop_search_tools"]
    );
    assert_eq!(
        palette.disclosed().collect::<Vec<_>>(),
        ["shop_search_tools"]
    );
    // Its failure refuses the search; nothing is disclosed, no server hears of it.
    let failing = ToolIndex::with_ranker(&palette, |_| {
        Ok::<_, RankError>(Fixed(Err(RankError::Model("out of memory".into()))))
    })
    .unwrap();
    let refused = palette
        .search(&failing, r#"{"query":"refund"}"#)
        .unwrap_err();
    assert_eq!(
        refused,
        Refusal::SearchFailed {
            reason: "the ranking model failed on the query: out of memory".into()
        }
    );
    assert_eq!(
        refused.to_string(),
        "the tool search failed: the ranking model failed on the query: out of memory"
    );
    assert_eq!(palette.disclosed().count(), 1);
    // And a build that fails is the application's error, as it returned it.
    let unbuilt = ToolIndex::with_ranker(&palette, |_| Err::<Fixed, _>("no weights"));
    assert_eq!(unbuilt.unwrap_err(), "no weights");
}
