//! The application's half of MCP: one palette over many servers, offered to a model in its
//! provider's own shape, and every call the model makes checked again before a byte is sent.
//!
//! **The protocol connects; the application decides.** A server describes its tools; a
//! [`Palette`] offers the model only the tools that are both advertised and allowed, under
//! names every provider accepts (the rule is in [`names`]), and maps each name back to one
//! server and one tool. What the model asks for is text, so [`Palette::dispatch`] checks it
//! all again: the name, the allowlist, and the arguments against the inputSchema the server
//! published (JSON Schema 2020-12, or the draft its `$schema` names, compiled when the
//! catalog arrives, never fetching a remote `$ref`). [`Palette::observe`] turns the answer into
//! what the model reads, and a failure is never passed off as a result.
//!
//! A palette of hundreds of tools need not be offered whole: [`search`] ranks tools for a
//! request (BM25; with the `embed` feature, sentence embeddings and a hybrid of the two),
//! [`Palette::offer_disclosed`] offers the model a search tool and only what it has found,
//! and [`cost`] says what each offer costs in tokens. An [`IndexedPalette`] keeps the
//! search index in step with a palette whose catalogs change.
//!
//! Like the core, this crate does no I/O and reads no clock: it works on catalogs and
//! results from any transport (the embedding model too is given as bytes).
//!
//! ```
//! use mcp_sansio::{Allowlist, Catalog, CatalogPolicy, Limits};
//! use mcp_sansio_host::{Palette, PaletteConfig, Provider};
//!
//! let support = Catalog::from_json(
//!     r#"{"tools":[
//!         {"name":"process_refund","description":"Refund an order.","inputSchema":{
//!             "type":"object",
//!             "properties":{"order_id":{"type":"string"},"amount":{"type":"number"}},
//!             "required":["order_id","amount"]}},
//!         {"name":"place_purchase","inputSchema":{"type":"object"}}]}"#,
//!     CatalogPolicy::STRICT,
//!     &Limits::default(),
//! )?;
//! let mut palette = Palette::new(PaletteConfig::default());
//! let allow: Allowlist = ["process_refund"].into_iter().collect();
//! palette.set_server("support", &allow, &support)?;
//!
//! // The model hears of the allowed tool only.
//! let offer = palette.offer(Provider::Anthropic);
//! assert_eq!(offer[0]["name"], "process_refund");
//! assert_eq!(offer.as_array().map(Vec::len), Some(1));
//!
//! // Its calls are checked before anything is sent.
//! let call = palette.dispatch("process_refund", r#"{"order_id":"ORD-3300","amount":180.0}"#)?;
//! assert_eq!((call.server, call.tool), ("support", "process_refund"));
//! let refused = palette.dispatch("process_refund", r#"{"order_id":"ORD-3300"}"#).unwrap_err();
//! assert_eq!(refused.to_string(), "missing required argument 'amount'");
//! let refused = palette.dispatch("place_purchase", "{}").unwrap_err();
//! assert_eq!(refused.to_string(), "there is no tool named 'place_purchase'; call one of the tools offered");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

#![forbid(unsafe_code)]

pub mod cost;
mod disclose;
mod dispatch;
mod elicit;
#[cfg(feature = "_fuzz")]
#[doc(hidden)]
pub mod fuzzing;
mod indexed;
pub mod names;
mod observe;
mod offer;
mod palette;
mod schema;
pub mod search;

pub use disclose::{Found, ToolIndex, MAX_SEARCH_RESULTS, SEARCH_RESULTS, SEARCH_TOOL};
pub use dispatch::{Dispatch, Refusal};
pub use elicit::{accept_elicited, ElicitRefusal};
pub use indexed::IndexedPalette;
pub use observe::Observation;
pub use offer::{OfferOptions, Provider, UnknownProvider};
pub use palette::{
    LeftOut, Palette, PaletteConfig, PaletteError, PaletteTool, SchemaRejection, ServerReport,
    MAX_SERVER_ID,
};
pub use schema::MAX_PROBLEMS;
