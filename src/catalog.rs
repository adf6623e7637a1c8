//! Tool catalogs: what a server advertises, validated and bounded. Advertising grants nothing.

use alloc::{string::String, vec::Vec};
use core::fmt;

use crate::http::HeaderMarkerError;
use crate::json::view::{opt_string, JsonRef};
use crate::json::write::{object_text, text_of, write_array, ObjectWriter};
use crate::json::{RawJson, RawObject};
use crate::server::CacheHint;
use crate::Allowlist;

/// One tool as the server describes it, after validation.
///
/// Everything here is the server's word: the description is text someone else wrote for a
/// model, and the annotations are hints that prove nothing. Only the [`Allowlist`] decides
/// whether a tool may run.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Tool {
    /// The tool's name: 1 to 128 characters from `A-Z a-z 0-9 _ . -`.
    pub name: String,
    /// A human-readable title, if the server gave one.
    pub title: Option<String>,
    /// The description, written by the server for a model.
    pub description: Option<String>,
    /// The JSON Schema of the arguments: an object whose `type` is `"object"`.
    pub input_schema: RawObject,
    /// The JSON Schema of `structuredContent`, if the server gave one.
    pub output_schema: Option<RawJson>,
    /// Behaviour hints (`readOnlyHint`, `destructiveHint`, ...): untrusted.
    pub annotations: Option<RawObject>,
    /// Every member this crate does not model (`icons`, `execution`, `_meta`, ...), kept as
    /// sent.
    pub extra: RawObject,
}

impl Tool {
    /// The tool `name` taking arguments described by `input_schema`, with nothing else.
    /// Nothing is validated here: a tool comes from a server through a [`Catalog`], which
    /// validates it; this constructor is for tests and caches.
    pub fn new(name: impl Into<String>, input_schema: RawObject) -> Self {
        Tool {
            name: name.into(),
            title: None,
            description: None,
            input_schema,
            output_schema: None,
            annotations: None,
            extra: RawObject::empty(),
        }
    }

    /// The tool as compact JSON, in the shape of one entry of a `tools/list` result, every
    /// member kept in `extra` included.
    pub fn to_json(&self) -> String {
        text_of(|out| self.write_json(out))
    }

    fn write_json(&self, out: &mut Vec<u8>) {
        let mut object = ObjectWriter::open(out);
        object.string("name", &self.name);
        object.opt_string("title", self.title.as_deref());
        object.opt_string("description", self.description.as_deref());
        object.raw("inputSchema", self.input_schema.as_str());
        if let Some(schema) = &self.output_schema {
            object.raw("outputSchema", schema.as_str());
        }
        if let Some(annotations) = &self.annotations {
            object.raw("annotations", annotations.as_str());
        }
        object.members_of(&self.extra);
        object.close();
    }
}

/// How a catalog is read: what to do with an invalid tool, whether an input schema with no
/// `type` passes as an object schema, and whether an optional field written `null` is read
/// as left out.
///
/// The default is strict on all three counts: [`CatalogPolicy::STRICT`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct CatalogPolicy {
    /// What to do with a catalog that holds an invalid tool.
    pub invalid_tools: InvalidTools,
    /// What to do with an `inputSchema` that has no `type` member.
    pub untyped_schemas: UntypedSchemas,
    /// What to do with an optional field of a tool written `null`.
    pub null_fields: NullFields,
}

impl CatalogPolicy {
    /// Refuse a catalog that holds an invalid tool, and count a schema with no `type` as
    /// invalid (as the teaching material does). The default.
    pub const STRICT: Self = CatalogPolicy {
        invalid_tools: InvalidTools::Refuse,
        untyped_schemas: UntypedSchemas::Refuse,
        null_fields: NullFields::Refuse,
    };

    /// Drop each invalid tool, report it with its reason, and keep the rest.
    pub const QUARANTINE: Self = CatalogPolicy {
        invalid_tools: InvalidTools::Quarantine,
        untyped_schemas: UntypedSchemas::Refuse,
        null_fields: NullFields::Refuse,
    };

    /// This policy, reading an `inputSchema` that has no `type` as an object schema
    /// ([`UntypedSchemas::AsObject`]).
    #[must_use]
    pub const fn untyped_schemas_as_objects(mut self) -> Self {
        self.untyped_schemas = UntypedSchemas::AsObject;
        self
    }

    /// This policy, reading an optional field written `null` as left out
    /// ([`NullFields::AsAbsent`]).
    #[must_use]
    pub const fn null_fields_as_absent(mut self) -> Self {
        self.null_fields = NullFields::AsAbsent;
        self
    }
}

/// What to do with a catalog that holds an invalid tool.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum InvalidTools {
    /// Refuse the whole listing as a protocol violation.
    #[default]
    Refuse,
    /// Drop each invalid tool, report it with its reason, and keep the rest.
    Quarantine,
}

/// What to do with an `inputSchema` that is an object with no `type` member.
///
/// MCP says an input schema is an object schema, `"type": "object"`. Some real servers leave
/// `type` out (the archived GitLab reference server lists every schema so), and models'
/// providers refuse such a schema.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum UntypedSchemas {
    /// The tool is invalid ([`ToolRejection::InputSchemaTypeNotObject`]).
    #[default]
    Refuse,
    /// The schema is read as an object schema and kept with `"type":"object"` written as
    /// its first member, so that what is offered and validated says what was assumed. A
    /// `type` that is present and not `"object"` is still refused.
    AsObject,
}

/// What to do with a tool's optional field (`title`, `description`, `outputSchema`,
/// `annotations`) written `null`.
///
/// MCP types each of them as present with a value of its type, or absent; `null` is neither.
/// Some servers and tools write every field they have no value for as `null` (a Python
/// tool's `model_dump()` of the SDK's own `Tool`, a language whose JSON writer keeps empty
/// fields), and the TypeScript SDK's client refuses the whole listing then.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum NullFields {
    /// The tool is invalid ([`ToolRejection::InvalidField`] names the field).
    #[default]
    Refuse,
    /// The field is read as left out, and the tool as if it had not been written. A `null`
    /// `name` or `inputSchema`, which a tool must have, is still refused.
    AsAbsent,
}

/// Why a tool was refused.
///
/// Names follow the rule 2025-11-25 and 2026-07-28 state (1 to 128 characters from
/// `A-Z a-z 0-9 _ . -`), applied to every revision: a name reaches both the model and the
/// application's allowlist, so it must be plain, exact text. Among tools with the same name
/// the first one listed is kept.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ToolRejection {
    /// The entry is not a JSON object.
    NotAnObject,
    /// The tool has no string `name`.
    MissingName,
    /// The name is empty, longer than 128 characters, or uses other characters.
    InvalidName,
    /// An earlier tool in the listing has the same name.
    DuplicateName,
    /// `inputSchema` is missing or is not an object.
    InputSchemaNotObject,
    /// `inputSchema.type` is not `"object"`.
    InputSchemaTypeNotObject,
    /// An optional field has the wrong type; the field is named.
    InvalidField(&'static str),
    /// Over Streamable HTTP in 2026-07-28: an `x-mcp-header` marker breaks the rules. Such a
    /// tool is always left out of the catalog (quarantined, whatever the policy), as the
    /// spec says; see [`Tool::param_headers`].
    HeaderMarker(HeaderMarkerError),
}

impl fmt::Display for ToolRejection {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ToolRejection::NotAnObject => f.write_str("it is not an object"),
            ToolRejection::MissingName => f.write_str("it has no string name"),
            ToolRejection::InvalidName => {
                f.write_str("its name is not 1 to 128 characters of A-Z a-z 0-9 _ . -")
            }
            ToolRejection::DuplicateName => f.write_str("its name repeats an earlier tool's"),
            ToolRejection::InputSchemaNotObject => f.write_str("its inputSchema is not an object"),
            ToolRejection::InputSchemaTypeNotObject => {
                f.write_str("its inputSchema's type is not \"object\"")
            }
            ToolRejection::InvalidField(field) => write!(f, "its {field} has the wrong type"),
            ToolRejection::HeaderMarker(why) => write!(f, "{why}"),
        }
    }
}

/// A tool dropped under [`InvalidTools::Quarantine`], with its reason.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct QuarantinedTool {
    /// Its position in the listing, counting from 0 across pages.
    pub index: usize,
    /// Its name, if it had a string one.
    pub name: Option<String>,
    /// Why it was dropped.
    pub reason: ToolRejection,
}

/// The tools a server advertised, validated, sorted by name.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct Catalog {
    tools: Vec<Tool>,
    /// For each tool, whether its schema may hold `x-mcp-header` markers: noted once here,
    /// read on every 2026-07-28 call over HTTP.
    marked: Vec<bool>,
    quarantined: Vec<QuarantinedTool>,
    cache: Option<CacheHint>,
}

impl Catalog {
    /// The valid tools, sorted by name.
    pub fn tools(&self) -> &[Tool] {
        &self.tools
    }

    /// The tool called `name`, if advertised.
    pub fn get(&self, name: &str) -> Option<&Tool> {
        self.position(name).and_then(|i| self.tools.get(i))
    }

    /// The tool called `name` when it is advertised and its schema may hold `x-mcp-header`
    /// markers ([`Tool::param_headers`] then says which); `None` for most tools.
    pub(crate) fn marked(&self, name: &str) -> Option<&Tool> {
        let at = self.position(name)?;
        self.marked.get(at).copied()?.then(|| self.tools.get(at))?
    }

    fn position(&self, name: &str) -> Option<usize> {
        self.tools
            .binary_search_by(|t| t.name.as_str().cmp(name))
            .ok()
    }

    /// The tools dropped under [`InvalidTools::Quarantine`] (always empty under
    /// [`InvalidTools::Refuse`]).
    pub fn quarantined(&self) -> &[QuarantinedTool] {
        &self.quarantined
    }

    /// How long the server says the listing may be cached (2026-07-28 only).
    pub fn cache(&self) -> Option<CacheHint> {
        self.cache
    }

    /// The tools to offer a model: advertised *and* allowed, sorted by name.
    pub fn offered<'a>(&'a self, allowlist: &'a Allowlist) -> impl Iterator<Item = &'a Tool> {
        self.tools.iter().filter(|t| allowlist.allows(&t.name))
    }

    /// The catalog as compact JSON in the shape of one `tools/list` result: `tools`, then
    /// `ttlMs` and `cacheScope` when there is a cache hint. Quarantined tools are not
    /// written: they were reported when the catalog was listed.
    /// [`Catalog::from_json`] reads it back.
    pub fn to_json(&self) -> String {
        object_text(|object| {
            object.key("tools");
            write_array(object.out(), &self.tools, Tool::write_json);
            if let Some(cache) = &self.cache {
                cache.write_members(object);
            }
        })
    }
}

/// Builds a catalog page by page under one policy.
#[derive(Debug)]
pub(crate) struct CatalogBuilder {
    policy: CatalogPolicy,
    header_markers: bool,
    seen: usize,
    tools: Vec<Tool>,
    quarantined: Vec<QuarantinedTool>,
}

impl CatalogBuilder {
    pub(crate) fn new(policy: CatalogPolicy) -> Self {
        CatalogBuilder {
            policy,
            header_markers: false,
            seen: 0,
            tools: Vec::new(),
            quarantined: Vec::new(),
        }
    }

    /// Checks each tool's `x-mcp-header` markers too, quarantining a tool that breaks them.
    pub(crate) fn header_markers(mut self, check: bool) -> Self {
        self.header_markers = check;
        self
    }

    /// How many entries were listed so far, valid or not.
    pub(crate) fn seen(&self) -> usize {
        self.seen
    }

    /// Adds one listed entry; under the strict policy an invalid one is the error.
    pub(crate) fn push(&mut self, entry: JsonRef<'_>) -> Result<(), (usize, ToolRejection)> {
        let index = self.seen;
        self.seen += 1;
        let checked = read_tool(entry, self.policy).and_then(|tool| {
            if self.tools.iter().any(|t| t.name == tool.name) {
                Err(ToolRejection::DuplicateName)
            } else {
                Ok(tool)
            }
        });
        let marker = match &checked {
            Ok(tool) if self.header_markers => tool.param_headers().err(),
            _ => None,
        };
        if let Some(why) = marker {
            self.quarantine(entry, index, ToolRejection::HeaderMarker(why));
            return Ok(());
        }
        match (checked, self.policy.invalid_tools) {
            (Ok(tool), _) => self.tools.push(tool),
            (Err(reason), InvalidTools::Refuse) => return Err((index, reason)),
            (Err(reason), InvalidTools::Quarantine) => self.quarantine(entry, index, reason),
        }
        Ok(())
    }

    /// Leaves entry `index` out of the catalog, with its reason.
    fn quarantine(&mut self, entry: JsonRef<'_>, index: usize, reason: ToolRejection) {
        let name = entry
            .as_object()
            .and_then(|o| o.get("name"))
            .and_then(|n| n.as_str())
            .map(String::from);
        self.quarantined.push(QuarantinedTool {
            index,
            name,
            reason,
        });
    }

    pub(crate) fn finish(mut self, cache: Option<CacheHint>) -> Catalog {
        self.tools.sort_by(|a, b| a.name.cmp(&b.name));
        Catalog {
            marked: self
                .tools
                .iter()
                .map(Tool::may_have_param_headers)
                .collect(),
            tools: self.tools,
            quarantined: self.quarantined,
            cache,
        }
    }
}

fn valid_name(name: &str) -> bool {
    (1..=128).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-'))
}

fn read_tool(entry: JsonRef<'_>, policy: CatalogPolicy) -> Result<Tool, ToolRejection> {
    let tool = entry.as_object().ok_or(ToolRejection::NotAnObject)?;
    let ([name, title, description, schema, output_schema, annotations], extra) = tool.split([
        "name",
        "title",
        "description",
        "inputSchema",
        "outputSchema",
        "annotations",
    ]);
    let [title, description, output_schema, annotations] =
        [title, description, output_schema, annotations].map(|field| match policy.null_fields {
            NullFields::AsAbsent => field.filter(|value| !value.is_null()),
            NullFields::Refuse => field,
        });
    let name = name
        .and_then(JsonRef::as_str)
        .ok_or(ToolRejection::MissingName)?;
    if !valid_name(&name) {
        return Err(ToolRejection::InvalidName);
    }
    let schema = schema
        .filter(|s| s.is_object())
        .ok_or(ToolRejection::InputSchemaNotObject)?;
    let schema_type = schema.as_object().and_then(|s| s.get("type"));
    let input_schema = match (schema_type, policy.untyped_schemas) {
        (None, UntypedSchemas::AsObject) => typed_as_object(schema.text()),
        (Some(t), _) if t.as_str().as_deref() == Some("object") => {
            RawObject::from_trusted(schema.to_raw())
        }
        _ => return Err(ToolRejection::InputSchemaTypeNotObject),
    };
    let text = |value: Option<JsonRef<'_>>, field: &'static str| {
        opt_string(value, field).map_err(ToolRejection::InvalidField)
    };
    let annotations = match annotations {
        None => None,
        Some(a) if a.is_object() => Some(RawObject::from_trusted(a.to_raw())),
        Some(_) => return Err(ToolRejection::InvalidField("annotations")),
    };
    Ok(Tool {
        name: String::from(name),
        title: text(title, "title")?,
        description: text(description, "description")?,
        input_schema,
        output_schema: output_schema.map(JsonRef::to_raw),
        annotations,
        extra,
    })
}

/// Compact object text `{...}` with `"type":"object"` written as its first member.
fn typed_as_object(schema: &str) -> RawObject {
    let members = schema
        .get(1..schema.len().saturating_sub(1))
        .unwrap_or_default();
    let separator = if members.is_empty() { "" } else { "," };
    RawObject::from_trusted_text(alloc::format!(r#"{{"type":"object"{separator}{members}}}"#))
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::format;

    fn build(policy: CatalogPolicy, entries: &[&str]) -> Result<Catalog, (usize, ToolRejection)> {
        let mut builder = CatalogBuilder::new(policy);
        for entry in entries {
            builder.push(JsonRef::new(entry))?;
        }
        Ok(builder.finish(None))
    }

    const GOOD: &str =
        r#"{"name":"word_count","description":"Count words.","inputSchema":{"type":"object"}}"#;

    #[test]
    fn each_rule_names_its_reason() {
        let cases = [
            ("[]", ToolRejection::NotAnObject),
            (
                r#"{"inputSchema":{"type":"object"}}"#,
                ToolRejection::MissingName,
            ),
            (
                r#"{"name":"","inputSchema":{"type":"object"}}"#,
                ToolRejection::InvalidName,
            ),
            (
                r#"{"name":"buy now","inputSchema":{"type":"object"}}"#,
                ToolRejection::InvalidName,
            ),
            (
                r#"{"name":"wörd","inputSchema":{"type":"object"}}"#,
                ToolRejection::InvalidName,
            ),
            (r#"{"name":"t"}"#, ToolRejection::InputSchemaNotObject),
            (
                r#"{"name":"t","inputSchema":"object"}"#,
                ToolRejection::InputSchemaNotObject,
            ),
            (
                r#"{"name":"t","inputSchema":{"type":"array"}}"#,
                ToolRejection::InputSchemaTypeNotObject,
            ),
            (
                r#"{"name":"t","inputSchema":{}}"#,
                ToolRejection::InputSchemaTypeNotObject,
            ),
            (
                r#"{"name":"t","description":7,"inputSchema":{"type":"object"}}"#,
                ToolRejection::InvalidField("description"),
            ),
            (GOOD, ToolRejection::DuplicateName),
        ];
        for (entry, reason) in cases {
            assert_eq!(
                build(CatalogPolicy::STRICT, &[GOOD, entry]),
                Err((1, reason)),
                "{entry}"
            );
        }
        let long = alloc::format!(
            r#"{{"name":"{}","inputSchema":{{"type":"object"}}}}"#,
            "a".repeat(129)
        );
        assert_eq!(
            build(CatalogPolicy::STRICT, &[&long]),
            Err((0, ToolRejection::InvalidName))
        );
    }

    #[test]
    fn quarantine_keeps_the_valid_tools_and_reports_the_rest() {
        let bad = r#"{"name":"zzz","inputSchema":null}"#;
        let other = r#"{"name":"a.b-c_d","inputSchema":{"type":"object","properties":{}}}"#;
        let catalog = build(CatalogPolicy::QUARANTINE, &[GOOD, bad, other, GOOD]).unwrap();
        let names: Vec<&str> = catalog.tools().iter().map(|t| t.name.as_str()).collect();
        assert_eq!(names, ["a.b-c_d", "word_count"]);
        assert_eq!(
            catalog.quarantined(),
            [
                QuarantinedTool {
                    index: 1,
                    name: Some("zzz".into()),
                    reason: ToolRejection::InputSchemaNotObject
                },
                QuarantinedTool {
                    index: 3,
                    name: Some("word_count".into()),
                    reason: ToolRejection::DuplicateName
                },
            ]
        );
        assert!(catalog.get("word_count").is_some());
        assert!(catalog.get("zzz").is_none());
    }

    #[test]
    fn an_untyped_schema_passes_only_when_the_policy_says_so() {
        let untyped =
            r#"{"name":"get_issue","inputSchema":{"properties":{"iid":{"type":"number"}}}}"#;
        let empty = r#"{"name":"ping","inputSchema":{}}"#;
        let array = r#"{"name":"list","inputSchema":{"type":"array"}}"#;
        assert_eq!(
            build(CatalogPolicy::STRICT, &[untyped]).unwrap_err(),
            (0, ToolRejection::InputSchemaTypeNotObject)
        );
        let lenient = CatalogPolicy::STRICT.untyped_schemas_as_objects();
        let catalog = build(lenient, &[untyped, empty]).unwrap();
        let schemas: Vec<&str> = catalog
            .tools()
            .iter()
            .map(|t| t.input_schema.as_str())
            .collect();
        assert_eq!(
            schemas,
            [
                r#"{"type":"object","properties":{"iid":{"type":"number"}}}"#,
                r#"{"type":"object"}"#
            ]
        );
        // A type that says something else is still refused.
        assert_eq!(
            build(lenient, &[array]).unwrap_err(),
            (0, ToolRejection::InputSchemaTypeNotObject)
        );
    }

    #[test]
    fn a_null_optional_field_is_left_out_only_when_the_policy_says_so() {
        // As a Python tool's `model_dump()` of the SDK's `Tool` writes one: every field it
        // has no value for is `null`, those MCP defines and those it does not.
        let dumped = r#"{"name":"word_count","title":null,"description":null,"inputSchema":{"type":"object"},"outputSchema":null,"annotations":null,"icons":null}"#;
        for field in ["title", "description", "annotations"] {
            let one = format!(r#"{{"name":"t","inputSchema":{{"type":"object"}},"{field}":null}}"#);
            assert_eq!(
                build(CatalogPolicy::STRICT, &[&one]).unwrap_err(),
                (0, ToolRejection::InvalidField(field))
            );
        }
        assert!(matches!(
            build(CatalogPolicy::STRICT, &[dumped]).unwrap_err(),
            (0, ToolRejection::InvalidField(_))
        ));
        let lenient = CatalogPolicy::STRICT.null_fields_as_absent();
        let catalog = build(lenient, &[dumped]).unwrap();
        let tool = catalog.get("word_count").unwrap();
        assert_eq!(
            (&tool.title, &tool.description),
            (&None, &None),
            "read as left out"
        );
        assert!(tool.output_schema.is_none() && tool.annotations.is_none());
        // What the core does not read is kept as written.
        assert_eq!(tool.extra.as_str(), r#"{"icons":null}"#);
        // A field a tool must have is still refused when null, and a field of the wrong
        // type is still wrong.
        let no_schema = r#"{"name":"t","inputSchema":null}"#;
        let numbered = r#"{"name":"t","inputSchema":{"type":"object"},"title":3}"#;
        assert_eq!(
            build(lenient, &[no_schema]).unwrap_err(),
            (0, ToolRejection::InputSchemaNotObject)
        );
        assert_eq!(
            build(lenient, &[numbered]).unwrap_err(),
            (0, ToolRejection::InvalidField("title"))
        );
    }

    #[test]
    fn offered_means_advertised_and_allowed() {
        let purchase = r#"{"name":"place_purchase","inputSchema":{"type":"object"}}"#;
        let catalog = build(CatalogPolicy::STRICT, &[purchase, GOOD]).unwrap();
        let allow: Allowlist = ["word_count", "not_advertised"].into_iter().collect();
        let offered: Vec<&str> = catalog.offered(&allow).map(|t| t.name.as_str()).collect();
        assert_eq!(offered, ["word_count"]);
    }
}

#[cfg(feature = "serde")]
crate::json::serde::serialize_as_json!(Tool, Catalog);

#[cfg(feature = "serde")]
impl<'de> serde::Deserialize<'de> for Tool {
    /// Reads a tool as a `tools/list` entry, validated by the same rules under
    /// [`CatalogPolicy::STRICT`] (a tool written by [`Tool::to_json`] after an untyped schema
    /// was accepted says `"type":"object"`, so it reads back).
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        use serde::de::Error as _;
        let raw = <RawObject as serde::Deserialize>::deserialize(deserializer)?;
        read_tool(JsonRef::new(raw.as_str()), CatalogPolicy::STRICT).map_err(D::Error::custom)
    }
}
