//! What the user typed for a server's form elicitation, checked against the form's schema
//! before a byte of it is sent.
//!
//! The core hands a form elicitation to the application with its `requestedSchema`
//! unchecked beyond being an object: what the user typed, and what the schema may say, are
//! the application's to judge. The revisions restrict that schema to a flat form (an object
//! whose properties are strings, numbers, integers, booleans, or in 2025-11-25 lists of
//! choices), so a client can draw it; a server's schema that is not one, or that would cost
//! more to check than [`PaletteConfig`] allows, is refused, and values that break it are
//! refused with each problem named, as a model's arguments are.
//!
//! ```
//! use mcp_sansio::{Limits, RawObject, Reply};
//! use mcp_sansio_host::{accept_elicited, ElicitRefusal, PaletteConfig};
//! # use mcp_sansio::{Asks, Client, Config, Event, Instant};
//! # let mut config = Config::new(Default::default());
//! # config.asks = Asks::NONE.with_elicitation();
//! # config.protocol = mcp_sansio::ProtocolChoice::Stateful;
//! # let mut client = Client::new(config);
//! # let now = Instant::ZERO;
//! # let _op = client.connect(now)?;
//! # client.handle_input(br#"{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"s","version":"1"}}}
//! # {"jsonrpc":"2.0","id":"e","method":"elicitation/create","params":{"message":"Refund how much?","requestedSchema":{"type":"object","properties":{"amount":{"type":"number","maximum":120}},"required":["amount"]}}}
//! # "#, now);
//! # let request = std::iter::from_fn(|| client.poll_event())
//! #     .find_map(|e| match e { Event::ServerRequest(r) => Some(r), _ => None })
//! #     .unwrap();
//! let config = PaletteConfig::default();
//! let typed = |text: &str| RawObject::parse(text, &Limits::default());
//! // `request` is the `Event::ServerRequest` asking "Refund how much?" (at most 120).
//! let refused = accept_elicited(&request, &typed(r#"{"amount":500}"#)?, &config);
//! assert!(matches!(refused, Err(ElicitRefusal::Values(problems)) if problems.len() == 1));
//! let reply = accept_elicited(&request, &typed(r#"{"amount":80}"#)?, &config);
//! assert_eq!(reply, Ok(Reply::accept(&typed(r#"{"amount":80}"#)?)));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use core::fmt;

use mcp_sansio::{AskKind, ElicitationMode, RawObject, Reply, ServerRequest};
use serde_json::Value;

use crate::schema::Schema;
use crate::PaletteConfig;

/// Why values for a form elicitation are not sent.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ElicitRefusal {
    /// The request is not a form elicitation (a URL elicitation or a sampling request has
    /// no form to fill).
    NotAForm,
    /// The server's `requestedSchema` is not a flat form, or does not compile within the
    /// palette's bounds: the server is at fault, and no values can be checked against it.
    Schema(String),
    /// The values break the form's schema: each problem one sentence, at most
    /// [`MAX_PROBLEMS`](crate::MAX_PROBLEMS).
    Values(Vec<String>),
}

impl fmt::Display for ElicitRefusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ElicitRefusal::NotAForm => f.write_str("the server's request is not a form to fill"),
            ElicitRefusal::Schema(why) => write!(f, "the server's form cannot be used: {why}"),
            ElicitRefusal::Values(problems) => {
                write!(f, "the values do not fit the form: {}", problems.join("; "))
            }
        }
    }
}

impl std::error::Error for ElicitRefusal {}

/// The answer that accepts the form elicitation `request` with `values`, once they are
/// checked against its `requestedSchema` within `config`'s bounds (the same as a tool's
/// arguments: `schema_objects`, `schema_checks`, `pattern_backtracks`); formats such as
/// `email` are not checked, as for arguments.
///
/// # Errors
/// [`ElicitRefusal::NotAForm`] for any other request; [`ElicitRefusal::Schema`] for a form
/// that is not flat (every property a string, a number, an integer, a boolean, or an array
/// of strings to choose from) or does not compile; [`ElicitRefusal::Values`] for values that
/// break it.
pub fn accept_elicited(
    request: &ServerRequest,
    values: &RawObject,
    config: &PaletteConfig,
) -> Result<Reply, ElicitRefusal> {
    if request.kind() != AskKind::Elicitation(ElicitationMode::Form) {
        return Err(ElicitRefusal::NotAForm);
    }
    let params: Value = serde_json::from_str(request.params().as_str())
        .map_err(|e| ElicitRefusal::Schema(e.to_string()))?;
    let schema = params.get("requestedSchema").unwrap_or(&Value::Null);
    flat(schema).map_err(ElicitRefusal::Schema)?;
    let compiled = Schema::compile(schema, config).map_err(ElicitRefusal::Schema)?;
    let values_json: Value = serde_json::from_str(values.as_str())
        .map_err(|e| ElicitRefusal::Values(vec![e.to_string()]))?;
    let problems = compiled.problems(&values_json, "field");
    if problems.is_empty() {
        Ok(Reply::accept(values))
    } else {
        Err(ElicitRefusal::Values(problems))
    }
}

/// Whether `schema` is a flat form: an object schema whose properties are each a string, a
/// number, an integer, a boolean, or an array of strings (a choice of several).
fn flat(schema: &Value) -> Result<(), String> {
    if schema.get("type").and_then(Value::as_str) != Some("object") {
        return Err(String::from("it is not an object schema"));
    }
    let Some(properties) = schema.get("properties") else {
        return Ok(());
    };
    let properties = properties
        .as_object()
        .ok_or("its properties are not an object")?;
    for (name, property) in properties {
        let kind = property.get("type").and_then(Value::as_str);
        let fits = match kind {
            Some("string" | "number" | "integer" | "boolean") => true,
            Some("array") => property.get("items").is_some_and(|items| {
                items.get("type").and_then(Value::as_str) == Some("string")
                    || items.get("enum").is_some()
                    || items.get("anyOf").is_some()
            }),
            _ => false,
        };
        if !fits {
            return Err(format!(
                "field '{name}' is not a string, a number, an integer, a boolean or a list of choices"
            ));
        }
    }
    Ok(())
}
