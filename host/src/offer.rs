//! The palette offered in each provider's own shape.

use std::fmt;
use std::str::FromStr;

use serde_json::{json, Map, Value};

use crate::palette::{Entry, Palette};

/// A model provider's API, whose shape of tool definitions an offer takes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Provider {
    /// Anthropic Messages: `{"name", "description", "input_schema"}`.
    Anthropic,
    /// OpenAI Chat Completions: `{"type": "function", "function": {"name", "description",
    /// "parameters", "strict"}}`.
    OpenAiChat,
    /// OpenAI Responses: `{"type": "function", "name", "description", "parameters",
    /// "strict"}`.
    OpenAiResponses,
}

impl Provider {
    /// Every provider, in the order of their command-line names.
    pub const ALL: [Provider; 3] = [
        Provider::Anthropic,
        Provider::OpenAiChat,
        Provider::OpenAiResponses,
    ];

    /// The provider's command-line name: `anthropic`, `openai-chat`, `openai-responses`.
    pub fn as_str(self) -> &'static str {
        match self {
            Provider::Anthropic => "anthropic",
            Provider::OpenAiChat => "openai-chat",
            Provider::OpenAiResponses => "openai-responses",
        }
    }
}

impl fmt::Display for Provider {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A name that is not a provider's.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnknownProvider(pub String);

impl fmt::Display for UnknownProvider {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{:?} is not a provider (anthropic, openai-chat or openai-responses)",
            self.0
        )
    }
}

impl std::error::Error for UnknownProvider {}

impl FromStr for Provider {
    type Err = UnknownProvider;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Provider::ALL
            .into_iter()
            .find(|p| p.as_str() == s)
            .ok_or_else(|| UnknownProvider(s.to_owned()))
    }
}

/// How tools are offered.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct OfferOptions {
    /// OpenAI's strict mode (`"strict": true`), in which the model's arguments always match
    /// the schema, but only a subset of JSON Schema is taken: every object must say
    /// `"additionalProperties": false` and list every property in `required`. Off by default:
    /// the server's schema is offered untouched, `"strict": false`.
    ///
    /// On, each object schema in a tool's input schema (its `properties`, `items`,
    /// `prefixItems`, `anyOf`, `oneOf`, `allOf`, `$defs` and `definitions`, recursively) gets
    /// `"additionalProperties": false` and every property required; a property that was
    /// optional becomes nullable (`"type": "string"` becomes `["string", "null"]`; a property
    /// with no `type` becomes `{"anyOf": [it, {"type": "null"}]}`). The dispatcher then reads
    /// a `null` for a top-level optional argument as the argument left out, and validates
    /// against the server's own schema. Anthropic's shape has no strict flag and is always
    /// offered untouched.
    pub strict: bool,
}

impl Palette {
    /// The tools to offer a model, in `provider`'s shape, as a JSON array: only advertised
    /// and allowed tools (never quarantined ones), sorted by the name the model calls them.
    pub fn offer(&self, provider: Provider) -> Value {
        let strict = self.config.offer.strict;
        Value::Array(
            self.entries()
                .map(|entry| offer_one(entry, provider, strict))
                .collect(),
        )
    }
}

pub(crate) fn offer_one(entry: &Entry, provider: Provider, strict: bool) -> Value {
    let description = entry
        .tool
        .description
        .as_deref()
        .or(entry.tool.title.as_deref());
    shape(&entry.name, description, &entry.schema, provider, strict)
}

/// One tool in `provider`'s shape.
pub(crate) fn shape(
    name: &str,
    description: Option<&str>,
    schema: &Value,
    provider: Provider,
    strict: bool,
) -> Value {
    let schema = if strict && provider != Provider::Anthropic {
        strict_schema(schema)
    } else {
        schema.clone()
    };
    let mut tool = Map::new();
    tool.insert("name".into(), json!(name));
    if let Some(description) = description {
        tool.insert("description".into(), json!(description));
    }
    match provider {
        Provider::Anthropic => {
            tool.insert("input_schema".into(), schema);
            Value::Object(tool)
        }
        Provider::OpenAiChat => {
            tool.insert("parameters".into(), schema);
            tool.insert("strict".into(), json!(strict));
            json!({"type": "function", "function": tool})
        }
        Provider::OpenAiResponses => {
            let mut shaped = Map::new();
            shaped.insert("type".into(), json!("function"));
            shaped.extend(tool);
            shaped.insert("parameters".into(), schema);
            shaped.insert("strict".into(), json!(strict));
            Value::Object(shaped)
        }
    }
}

/// The strict form of a schema, as [`OfferOptions::strict`] describes.
pub(crate) fn strict_schema(schema: &Value) -> Value {
    let Value::Object(members) = schema else {
        return schema.clone();
    };
    let mut out = Map::new();
    for (key, value) in members {
        let value = match (key.as_str(), value) {
            ("properties", Value::Object(properties)) => {
                let required: Vec<&str> = members
                    .get("required")
                    .and_then(Value::as_array)
                    .map(|r| r.iter().filter_map(Value::as_str).collect())
                    .unwrap_or_default();
                let properties = properties
                    .iter()
                    .map(|(name, property)| {
                        let strict = strict_schema(property);
                        let strict = if required.contains(&name.as_str()) {
                            strict
                        } else {
                            nullable(strict)
                        };
                        (name.clone(), strict)
                    })
                    .collect();
                Value::Object(properties)
            }
            ("items", Value::Object(_)) => strict_schema(value),
            // A tuple: draft 7 writes it as a list under `items`, 2020-12 as `prefixItems`.
            ("items" | "prefixItems" | "anyOf" | "oneOf" | "allOf", Value::Array(options)) => {
                Value::Array(options.iter().map(strict_schema).collect())
            }
            ("$defs" | "definitions", Value::Object(defs)) => Value::Object(
                defs.iter()
                    .map(|(name, def)| (name.clone(), strict_schema(def)))
                    .collect(),
            ),
            _ => value.clone(),
        };
        out.insert(key.clone(), value);
    }
    let is_object = out.get("type") == Some(&json!("object")) || out.contains_key("properties");
    if is_object {
        let names: Vec<Value> = out
            .get("properties")
            .and_then(Value::as_object)
            .map(|p| p.keys().map(|k| json!(k)).collect())
            .unwrap_or_default();
        out.insert("required".into(), Value::Array(names));
        out.insert("additionalProperties".into(), json!(false));
    }
    Value::Object(out)
}

fn nullable(schema: Value) -> Value {
    let mut schema = schema;
    match schema.get_mut("type") {
        Some(Value::String(t)) if t != "null" => {
            let t = std::mem::take(t);
            if let Some(slot) = schema.get_mut("type") {
                *slot = json!([t, "null"]);
            }
            schema
        }
        Some(Value::Array(types)) => {
            if !types.contains(&json!("null")) {
                types.push(json!("null"));
            }
            schema
        }
        Some(_) => schema,
        None => json!({"anyOf": [schema, {"type": "null"}]}),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strict_form_requires_everything_and_makes_optional_nullable() {
        let schema = json!({
            "type": "object",
            "properties": {
                "query": {"type": "string"},
                "limit": {"type": "integer"},
                "filter": {"type": "object", "properties": {"tag": {"type": "string"}}},
                "mode": {"enum": ["a", "b"]}
            },
            "required": ["query"]
        });
        let strict = strict_schema(&schema);
        assert_eq!(
            strict,
            json!({
                "type": "object",
                "properties": {
                    "query": {"type": "string"},
                    "limit": {"type": ["integer", "null"]},
                    "filter": {"type": ["object", "null"],
                        "properties": {"tag": {"type": ["string", "null"]}},
                        "required": ["tag"], "additionalProperties": false},
                    "mode": {"anyOf": [{"enum": ["a", "b"]}, {"type": "null"}]}
                },
                "required": ["filter", "limit", "mode", "query"],
                "additionalProperties": false
            })
        );
    }

    /// Objects inside a tuple are made strict too, whichever draft wrote the tuple.
    #[test]
    fn strict_form_reaches_into_tuples() {
        let point = json!({"type": "object", "properties": {"x": {"type": "number"}}});
        let strict_point = json!({"type": "object",
            "properties": {"x": {"type": ["number", "null"]}},
            "required": ["x"], "additionalProperties": false});
        for keyword in ["items", "prefixItems"] {
            let mut tuple = json!({"type": "array"});
            tuple[keyword] = json!([point, {"type": "string"}]);
            let mut expected = json!({"type": "array"});
            expected[keyword] = json!([strict_point, {"type": "string"}]);
            assert_eq!(strict_schema(&tuple), expected, "{keyword}");
        }
    }

    /// Definitions a schema refers to are made strict where they stand, under either name;
    /// an optional member that may already be of several types gains `null` once.
    #[test]
    fn strict_form_reaches_into_definitions_and_widens_type_lists() {
        let address = json!({"type": "object", "properties": {"city": {"type": "string"}}});
        let strict_address = json!({"type": "object",
            "properties": {"city": {"type": ["string", "null"]}},
            "required": ["city"], "additionalProperties": false});
        for keyword in ["$defs", "definitions"] {
            let mut schema = json!({
                "type": "object",
                "properties": {
                    "to": {"$ref": format!("#/{keyword}/address")},
                    "id": {"type": ["string", "integer"]},
                    "note": {"type": ["string", "null"]}
                },
                "required": ["to"]
            });
            schema[keyword] = json!({"address": address});
            let mut expected = json!({
                "type": "object",
                "properties": {
                    "to": {"$ref": format!("#/{keyword}/address")},
                    "id": {"type": ["string", "integer", "null"]},
                    "note": {"type": ["string", "null"]}
                },
                "required": ["id", "note", "to"],
                "additionalProperties": false
            });
            expected[keyword] = json!({"address": strict_address});
            assert_eq!(strict_schema(&schema), expected, "{keyword}");
        }
    }

    #[test]
    fn providers_by_name() {
        for provider in Provider::ALL {
            assert_eq!(provider.as_str().parse::<Provider>(), Ok(provider));
        }
        assert!("gemini".parse::<Provider>().is_err());
    }
}
