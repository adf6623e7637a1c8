//! Argument and result checks against the schemas a server published, compiled once per
//! catalog, with refusals worded for a model.

use jsonschema::error::{TypeKind, ValidationErrorKind};
use jsonschema::{Draft, ValidationError, Validator};
use serde_json::Value;

/// At most this many problems are reported for one call's arguments: enough for a model to
/// fix them, short enough not to flood its context.
pub const MAX_PROBLEMS: usize = 5;

/// A compiled schema.
pub(crate) struct Schema(Validator);

impl core::fmt::Debug for Schema {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str("Schema")
    }
}

impl Schema {
    /// Compiles `schema` as JSON Schema 2020-12 (MCP's default dialect) unless it names
    /// another with `$schema`. Nothing is fetched: this crate builds `jsonschema` without its
    /// HTTP and file resolvers, so a `$ref` that leaves the schema does not compile.
    pub(crate) fn compile(schema: &Value) -> Result<Self, String> {
        jsonschema::options()
            .with_draft(Draft::Draft202012)
            .should_validate_formats(false)
            .build(schema)
            .map(Schema)
            .map_err(|e| e.to_string())
    }

    /// Every problem with `instance`, up to [`MAX_PROBLEMS`], each one sentence naming the
    /// `part` at fault (`missing required argument 'amount'` for part `argument`).
    pub(crate) fn problems(&self, instance: &Value, part: &str) -> Vec<String> {
        self.0
            .iter_errors(instance)
            .take(MAX_PROBLEMS)
            .map(|error| describe(&error, part))
            .collect()
    }
}

/// One validation error as a sentence a model can act on.
fn describe(error: &ValidationError<'_>, part: &str) -> String {
    let at = argument_path(&error.instance_path().to_string());
    match error.kind() {
        ValidationErrorKind::Required { property } => {
            let name = property
                .as_str()
                .map_or_else(|| property.to_string(), str::to_owned);
            let full = if at.is_empty() {
                name
            } else {
                format!("{at}.{name}")
            };
            format!("missing required {part} '{full}'")
        }
        ValidationErrorKind::Type { kind } if !at.is_empty() => {
            format!("{part} '{at}' must be {}", type_words(kind))
        }
        ValidationErrorKind::Type { kind } => format!("the {part}s must be {}", type_words(kind)),
        ValidationErrorKind::AdditionalProperties { unexpected } => {
            let names: Vec<String> = unexpected.iter().map(|n| format!("'{n}'")).collect();
            let whose = if at.is_empty() {
                String::new()
            } else {
                format!(" in '{at}'")
            };
            format!("unexpected {part} {}{whose}", names.join(", "))
        }
        _ if at.is_empty() => format!("the {part}s are invalid: {error}"),
        _ => format!("{part} '{at}' is invalid: {error}"),
    }
}

/// A JSON pointer (`/order/items/0/sku`) as a reader would write the path
/// (`order.items[0].sku`); empty for the arguments themselves.
fn argument_path(pointer: &str) -> String {
    let mut out = String::new();
    for segment in pointer.split('/').skip(1) {
        let segment = segment.replace("~1", "/").replace("~0", "~");
        if !segment.is_empty() && segment.bytes().all(|b| b.is_ascii_digit()) && !out.is_empty() {
            out.push_str(&format!("[{segment}]"));
        } else {
            if !out.is_empty() {
                out.push('.');
            }
            out.push_str(&segment);
        }
    }
    out
}

fn type_words(kind: &TypeKind) -> String {
    let one = |name: String| {
        let article = if name.starts_with(['a', 'e', 'i', 'o', 'u']) {
            "an"
        } else {
            "a"
        };
        if name == "null" {
            name
        } else {
            format!("{article} {name}")
        }
    };
    match kind {
        TypeKind::Single(t) => one(t.to_string()),
        TypeKind::Multiple(set) => {
            let names: Vec<String> = set.iter().map(|t| one(t.to_string())).collect();
            names.join(" or ")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn refund() -> Schema {
        Schema::compile(&json!({
            "type": "object",
            "properties": {
                "order_id": {"type": "string"},
                "amount": {"type": "number"}
            },
            "required": ["order_id", "amount"]
        }))
        .unwrap()
    }

    #[test]
    fn the_seeds_three_cases() {
        let schema = refund();
        assert!(schema
            .problems(
                &json!({"order_id": "ORD-3300", "amount": 180.0}),
                "argument"
            )
            .is_empty());
        assert_eq!(
            schema.problems(&json!({"order_id": "ORD-3300"}), "argument"),
            ["missing required argument 'amount'"]
        );
        assert_eq!(
            schema.problems(
                &json!({"order_id": "ORD-3300", "amount": "lots"}),
                "argument"
            ),
            ["argument 'amount' must be a number"]
        );
    }

    #[test]
    fn nested_paths_read_as_written() {
        let schema = Schema::compile(&json!({
            "type": "object",
            "properties": {"order": {"type": "object", "properties": {
                "items": {"type": "array", "items": {"type": "object",
                    "properties": {"sku": {"type": "integer"}}, "required": ["qty"]}}}}}
        }))
        .unwrap();
        let problems = schema.problems(&json!({"order": {"items": [{"sku": "x"}]}}), "argument");
        assert!(
            problems.contains(&"argument 'order.items[0].sku' must be an integer".to_owned()),
            "{problems:?}"
        );
        assert!(
            problems.contains(&"missing required argument 'order.items[0].qty'".to_owned()),
            "{problems:?}"
        );
    }

    #[test]
    fn a_remote_reference_does_not_compile() {
        let remote =
            json!({"type": "object", "properties": {"a": {"$ref": "https://example.com/s.json"}}});
        assert!(Schema::compile(&remote).is_err());
    }
}
