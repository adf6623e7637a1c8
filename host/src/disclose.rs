//! Progressive disclosure: the model is offered a search tool and the tools it has found so
//! far, not the whole palette.

use std::fmt;
use std::sync::OnceLock;

use serde_json::{json, Value};

use crate::offer::{offer_one, shape};
use crate::palette::Palette;
use crate::schema::Schema;
use crate::search::{summary, Bm25, RankError, Ranker, ToolText};
use crate::{Provider, Refusal};

/// The name of the palette's search tool. No server's tool is ever given this name.
pub const SEARCH_TOOL: &str = "search_tools";

/// How many tools one search shows when the model does not say.
pub const SEARCH_RESULTS: usize = 5;

/// The most tools one search shows, whatever the model asks.
pub const MAX_SEARCH_RESULTS: usize = 20;

/// The palette's tools as a ranker sees them, and the ranker: what [`Palette::search`]
/// looks tools up in. Build it again after the palette changes; a tool that has left the
/// palette since is never shown, and one that has joined is not found until then.
pub struct ToolIndex {
    texts: Vec<ToolText>,
    ranker: Box<dyn Ranker + Send + Sync>,
}

impl ToolIndex {
    /// BM25 over the palette's offered tools: needs nothing but the catalogs.
    pub fn bm25(palette: &Palette) -> Self {
        let texts = texts(palette);
        let ranker = Box::new(Bm25::new(&texts));
        ToolIndex { texts, ranker }
    }

    /// Any ranker over the palette's offered tools: `build` gets their texts, in the order
    /// its hits must index. A search trusts it no further than the palette: a hit that
    /// indexes no tool, or a tool already shown, is passed over.
    ///
    /// # Errors
    /// What `build` returns.
    pub fn with_ranker<R, E>(
        palette: &Palette,
        build: impl FnOnce(&[ToolText]) -> Result<R, E>,
    ) -> Result<Self, E>
    where
        R: Ranker + Send + Sync + 'static,
    {
        let texts = texts(palette);
        let ranker = Box::new(build(&texts)?);
        Ok(ToolIndex { texts, ranker })
    }
}

impl fmt::Debug for ToolIndex {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ToolIndex")
            .field("tools", &self.texts.len())
            .finish_non_exhaustive()
    }
}

fn texts(palette: &Palette) -> Vec<ToolText> {
    palette
        .tools()
        .map(|t| ToolText::new(t.server, t.tool))
        .collect()
}

/// What a search showed the model: each tool's model-facing name and the first sentence of
/// its description. Its [`Display`](fmt::Display) is the text to return to the model as the
/// search tool's result.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Found {
    /// (model-facing name, one-line description), best first.
    pub tools: Vec<(String, String)>,
}

impl fmt::Display for Found {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.tools.is_empty() {
            return f.write_str("No tool matches; try other words.");
        }
        for (name, summary) in &self.tools {
            if summary.is_empty() {
                writeln!(f, "{name}")?;
            } else {
                writeln!(f, "{name}: {summary}")?;
            }
        }
        f.write_str("These tools can be called from the next turn.")
    }
}

/// What the model reads of the search tool.
const SEARCH_DESCRIPTION: &str = "Search the available tools by what they do. Returns tool \
    names with one-line descriptions; the tools found can be called from the next turn.";

/// The search tool's input schema, as JSON and compiled: made once, for every palette.
fn search_schema() -> &'static (Value, Result<Schema, String>) {
    static SCHEMA: OnceLock<(Value, Result<Schema, String>)> = OnceLock::new();
    SCHEMA.get_or_init(|| {
        let json = search_schema_json();
        let compiled = Schema::compile(&json, &crate::PaletteConfig::default());
        (json, compiled)
    })
}

fn search_schema_json() -> Value {
    json!({
        "type": "object",
        "properties": {
            "query": {
                "type": "string",
                "minLength": 1,
                "description": "What the tool should do, in a few words."
            },
            "limit": {
                "type": "integer",
                "minimum": 1,
                "maximum": MAX_SEARCH_RESULTS,
                "description": format!("How many tools to return (default {SEARCH_RESULTS}).")
            }
        },
        "required": ["query"],
        "additionalProperties": false
    })
}

impl Palette {
    /// The offer of disclosure mode, in `provider`'s shape: the search tool first, then the
    /// tools disclosed so far (by [`Palette::search`] or [`Palette::disclose`]), sorted by
    /// name. A palette of hundreds of tools costs the model a few hundred tokens until it
    /// searches.
    ///
    /// Disclosure decides what the model is shown, not what it may run:
    /// [`Palette::dispatch`] checks every call against the allowlist and the schema, disclosed
    /// or not, and refuses what is not allowed whether or not it was ever shown.
    pub fn offer_disclosed(&self, provider: Provider) -> Value {
        let strict = self.config.offer.strict;
        let mut offer = vec![shape(
            SEARCH_TOOL,
            Some(SEARCH_DESCRIPTION),
            &search_schema().0,
            provider,
            strict,
        )];
        offer.extend(
            self.disclosed
                .iter()
                .filter_map(|name| self.entry(name))
                .map(|(_, entry)| offer_one(entry, provider, strict)),
        );
        Value::Array(offer)
    }

    /// Shows the model tool `name` from the next offer on; false when no offered tool has
    /// that name.
    pub fn disclose(&mut self, name: &str) -> bool {
        let offered = self.entry(name).is_some();
        if offered {
            self.disclosed.insert(name.to_owned());
        }
        offered
    }

    /// The model-facing names disclosed so far, sorted.
    pub fn disclosed(&self) -> impl Iterator<Item = &str> {
        self.disclosed.iter().map(String::as_str)
    }

    /// Forgets every disclosure: the next offer is the search tool alone.
    pub fn hide_all(&mut self) {
        self.disclosed.clear();
    }

    /// Runs the model's call of the search tool: `arguments` is its argument text
    /// (`{"query": "...", "limit": 5}`), checked as any call is. The tools found are
    /// disclosed, and returned for the model to read.
    ///
    /// ```
    /// use mcp_sansio::{Allowlist, Catalog, CatalogPolicy, Limits};
    /// use mcp_sansio_host::cost::Priced;
    /// use mcp_sansio_host::{Palette, PaletteConfig, Provider, ToolIndex, SEARCH_TOOL};
    ///
    /// let catalog = Catalog::from_json(
    ///     r#"{"tools":[
    ///         {"name":"get_forecast","description":"Weather forecast for a city.","inputSchema":{"type":"object"}},
    ///         {"name":"read_file","description":"Read a file.","inputSchema":{"type":"object"}}]}"#,
    ///     CatalogPolicy::STRICT,
    ///     &Limits::default(),
    /// )?;
    /// let mut palette = Palette::new(PaletteConfig::default());
    /// let allow: Allowlist = ["get_forecast", "read_file"].into_iter().collect();
    /// palette.set_server("tools", &allow, &catalog)?;
    /// let index = ToolIndex::bm25(&palette);
    ///
    /// // Turn 1: the model hears of the search tool alone.
    /// let offer = Priced::new(palette.offer_disclosed(Provider::Anthropic));
    /// assert_eq!(offer.tools[0]["name"], SEARCH_TOOL);
    /// // It searches; what it found is its tool result.
    /// let found = palette.search(&index, r#"{"query":"weather forecast"}"#)?;
    /// assert!(found.to_string().starts_with("get_forecast: Weather forecast for a city."));
    /// // Turn 2: the tool it found is offered in full, and dispatches as any call.
    /// let offer = palette.offer_disclosed(Provider::Anthropic);
    /// assert_eq!(offer[1]["name"], "get_forecast");
    /// let call = palette.dispatch("get_forecast", "{}")?;
    /// assert_eq!(call.tool, "get_forecast");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    /// [`Refusal::ArgumentsNotAnObject`] or [`Refusal::InvalidArguments`] for arguments the
    /// search tool's schema refuses; [`Refusal::SearchFailed`] when the ranker fails.
    pub fn search(&mut self, index: &ToolIndex, arguments: &str) -> Result<Found, Refusal> {
        let (json, compiled) = search_schema();
        let (_, value) = self.read_arguments(SEARCH_TOOL, arguments, json)?;
        let problems = match compiled {
            Ok(schema) => schema.problems(&value, "argument"),
            Err(e) => vec![e.clone()],
        };
        if !problems.is_empty() {
            return Err(Refusal::InvalidArguments {
                name: SEARCH_TOOL.to_owned(),
                problems,
            });
        }
        let query = value.get("query").and_then(Value::as_str).unwrap_or("");
        let limit = value
            .get("limit")
            .and_then(Value::as_u64)
            .and_then(|l| usize::try_from(l).ok())
            .unwrap_or(SEARCH_RESULTS)
            .min(MAX_SEARCH_RESULTS);
        let hits =
            index
                .ranker
                .rank(query, limit)
                .map_err(|e: RankError| Refusal::SearchFailed {
                    reason: e.to_string(),
                })?;
        let mut tools = Vec::new();
        for hit in hits {
            let Some(text) = index.texts.get(hit.index) else {
                continue;
            };
            // Looked up again: a tool that left the palette after the index was built is
            // never shown.
            let Some(entry) = self.entry_of(&text.server, &text.tool) else {
                continue;
            };
            // A ranker of the application's own may name a tool twice; it is shown once.
            if tools.iter().any(|(name, _)| *name == entry.name) {
                continue;
            }
            let line = entry
                .tool
                .description
                .as_deref()
                .or(entry.tool.title.as_deref())
                .map(summary)
                .unwrap_or_default();
            tools.push((entry.name.clone(), line));
        }
        for (name, _) in &tools {
            self.disclosed.insert(name.clone());
        }
        Ok(Found { tools })
    }
}
