//! Argument and result checks against the schemas a server published, compiled once per
//! catalog, with refusals worded for a model.

mod cost;

use jsonschema::error::{TypeKind, ValidationErrorKind};
use jsonschema::{Draft, ValidationError, Validator};
use serde_json::Value;

use crate::PaletteConfig;

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
    /// another with `$schema`: drafts 4, 6, 7 and 2019-09 are read as written (a draft-07
    /// tuple's `items` is a list, which 2020-12 would refuse), and a dialect of any other
    /// name does not compile, as its rules are not known. Nothing is fetched: this crate
    /// builds `jsonschema` without its HTTP and file resolvers, so a `$ref` that leaves the
    /// schema does not compile.
    ///
    /// A schema of more than `config.schema_objects` objects, or whose check of one value
    /// could take more than `config.schema_checks` subschemas, does not compile either
    /// ([`cost`]), and a `pattern` that backtracks more
    /// than `config.pattern_backtracks` times on a value fails that value.
    pub(crate) fn compile(schema: &Value, config: &PaletteConfig) -> Result<Self, String> {
        let draft = match Draft::Draft202012.detect(schema) {
            Draft::Unknown => {
                let named = schema
                    .get("$schema")
                    .map(Value::to_string)
                    .unwrap_or_default();
                return Err(format!(
                    "$schema {named} is not a dialect this client knows (JSON Schema drafts 4, 6, 7, 2019-09 and 2020-12)"
                ));
            }
            known => known,
        };
        cost::within_size(schema, config.schema_objects)?;
        cost::worst_case(schema, config.limits.nesting_depth, config.schema_checks)?;
        jsonschema::options()
            .with_draft(draft)
            .should_validate_formats(false)
            .with_pattern_options(
                jsonschema::PatternOptions::fancy_regex()
                    .backtrack_limit(config.pattern_backtracks),
            )
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
        ValidationErrorKind::BacktrackLimitExceeded { .. } => {
            let whose = if at.is_empty() {
                format!("the {part}s")
            } else {
                format!("{part} '{at}'")
            };
            format!("{whose} cannot be checked: the server's pattern takes too long to match")
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

    fn compile(schema: &Value) -> Result<Schema, String> {
        Schema::compile(schema, &PaletteConfig::default())
    }

    fn refund() -> Schema {
        compile(&json!({
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
        let schema = compile(&json!({
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
    fn each_kind_of_problem_reads_as_a_sentence_naming_the_argument() {
        let schema = compile(&json!({
            "type": "object",
            "properties": {
                "id": {"type": ["string", "integer"]},
                "gone": {"type": "null"},
                "count": {"type": "integer", "minimum": 1},
                "filter": {"type": "object", "properties": {"tag": {"type": "string"}},
                    "additionalProperties": false}
            },
            "additionalProperties": false
        }))
        .unwrap();
        let cases = [
            (
                json!({"id": 1.5}),
                "argument 'id' must be an integer or a string",
            ),
            (json!({"gone": 0}), "argument 'gone' must be null"),
            (json!({"extra": 1}), "unexpected argument 'extra'"),
            (
                json!({"filter": {"tag": "a", "colour": "red"}}),
                "unexpected argument 'colour' in 'filter'",
            ),
            (
                json!({"count": 0}),
                "argument 'count' is invalid: 0 is less than the minimum of 1",
            ),
        ];
        for (arguments, sentence) in cases {
            assert_eq!(schema.problems(&arguments, "argument"), [sentence]);
        }
        // What stands for all of them names them all.
        assert_eq!(
            schema.problems(&json!([1]), "argument"),
            ["the arguments must be an object"]
        );
        let bounded = compile(&json!({"type": "object", "minProperties": 2})).unwrap();
        assert_eq!(
            bounded.problems(&json!({"a": 1}), "member"),
            [r#"the members are invalid: {"a":1} has less than 2 properties"#]
        );
    }

    #[test]
    fn a_remote_reference_does_not_compile() {
        let remote =
            json!({"type": "object", "properties": {"a": {"$ref": "https://example.com/s.json"}}});
        assert!(compile(&remote).is_err());
    }

    /// A draft-07 tuple (`items` a list, as zod-to-json-schema writes a coordinate pair) is
    /// read as draft 7 says, where 2020-12 would refuse the schema; without `$schema`, a
    /// schema is 2020-12, whose tuples are `prefixItems`.
    #[test]
    fn a_schema_is_read_in_the_dialect_it_names() {
        let pair = |dialect: Option<&str>, keyword: &str| {
            let mut point = json!({"type": "array", "minItems": 2, "maxItems": 2});
            point[keyword] = json!([{"type": "number"}, {"type": "number"}]);
            let mut schema =
                json!({"type": "object", "properties": {"at": point}, "required": ["at"]});
            if let Some(dialect) = dialect {
                schema["$schema"] = json!(dialect);
            }
            compile(&schema)
        };
        for draft7 in [
            "http://json-schema.org/draft-07/schema#",
            "https://json-schema.org/draft-07/schema",
        ] {
            let schema = pair(Some(draft7), "items").unwrap();
            assert!(schema
                .problems(&json!({"at": [1.5, 2]}), "argument")
                .is_empty());
            assert_eq!(
                schema.problems(&json!({"at": [1.5, "north"]}), "argument"),
                ["argument 'at[1]' must be a number"]
            );
        }
        assert!(pair(
            Some("https://json-schema.org/draft/2020-12/schema"),
            "items"
        )
        .is_err());
        assert!(pair(None, "items").is_err());
        let schema = pair(None, "prefixItems").unwrap();
        assert_eq!(
            schema.problems(&json!({"at": [1.5, "north"]}), "argument"),
            ["argument 'at[1]' must be a number"]
        );
    }

    #[test]
    fn a_dialect_of_another_name_does_not_compile() {
        let schema = json!({"$schema": "https://example.com/my-dialect", "type": "object"});
        assert_eq!(
            compile(&schema).unwrap_err(),
            "$schema \"https://example.com/my-dialect\" is not a dialect this client knows (JSON Schema drafts 4, 6, 7, 2019-09 and 2020-12)"
        );
    }

    /// A pattern that backtracks without end fails the value in words that blame the
    /// pattern; a real one (Linear's, with two lookaheads) still reads a long value.
    #[test]
    fn a_pattern_that_backtracks_too_long_fails_the_value_it_could_not_check() {
        let schema = |pattern: &str| {
            compile(&json!({"type": "object", "properties": {
                "s": {"type": "string", "pattern": pattern}}}))
            .unwrap()
        };
        let evil = schema("^(a|a)+(?=b)$");
        let aaa = json!({"s": format!("{}!", "a".repeat(40))});
        assert_eq!(
            evil.problems(&aaa, "argument"),
            ["argument 's' cannot be checked: the server's pattern takes too long to match"]
        );
        let linear = schema("^(?!.*[Ll][Ii][Nn][Ee][Aa][Rr])(?!.*[Hh][Tt][Tt][Pp][Ss]?://).*$");
        let long = "ok ".repeat(30_000);
        assert!(linear.problems(&json!({"s": long}), "argument").is_empty());
        let named = json!({"s": format!("{long}linear")});
        assert!(linear.problems(&named, "argument")[0].contains("does not match"));
    }
}
