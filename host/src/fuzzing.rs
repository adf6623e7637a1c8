//! The body of the `host_dispatch` fuzz target, kept in the library so that its seed corpus
//! replays under a plain `cargo test`. Not part of the supported API.

use mcp_sansio::{Allowlist, Catalog, CatalogPolicy, Limits};

use crate::cost::Priced;
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
