//! What 2026-07-28 mirrors into HTTP headers, apart from any connection: header values in the
//! spec's plain or base64 form, and the `x-mcp-header` parameters a tool declares.
//!
//! A Streamable HTTP transport sends `Mcp-Name` (the tool or prompt name, or the resource URI)
//! and one `Mcp-Param-{Name}` header per argument that the tool's input schema marks with
//! `x-mcp-header`, each value through [`header_value`]. A tool whose markers break the spec's
//! rules must be left out of the catalog: [`Tool::param_headers`] says which tools, and why.

use alloc::borrow::Cow;
use alloc::string::{String, ToString};
use alloc::vec::Vec;
use core::fmt;

use crate::catalog::Tool;
use crate::json::view::{JsonRef, Object};
use crate::RawObject;

/// `value` as a header value: as-is when it is plain, header-safe ASCII (bytes 0x20 to 0x7E,
/// no space at either end, not shaped like the sentinel), else the UTF-8 in base64 between
/// the lowercase sentinel markers, `=?base64?...?=`.
///
/// ```
/// use mcp_sansio::header_value;
/// assert_eq!(header_value("us-west1"), "us-west1");
/// assert_eq!(header_value("Hello, 世界"), "=?base64?SGVsbG8sIOS4lueVjA==?=");
/// assert_eq!(header_value(" padded "), "=?base64?IHBhZGRlZCA=?=");
/// ```
pub fn header_value(value: &str) -> Cow<'_, str> {
    let visible = value.bytes().all(|b| (0x20..=0x7E).contains(&b));
    let padded = value.starts_with(' ') || value.ends_with(' ');
    let sentinel = value.starts_with("=?base64?") && value.ends_with("?=");
    if visible && !padded && !sentinel {
        Cow::Borrowed(value)
    } else {
        let mut out = String::from("=?base64?");
        base64(value.as_bytes(), &mut out);
        out.push_str("?=");
        Cow::Owned(out)
    }
}

/// Standard base64 with padding (RFC 4648, section 4).
pub(crate) fn base64(bytes: &[u8], out: &mut String) {
    base64_with(
        b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/",
        true,
        bytes,
        out,
    );
}

/// URL-safe base64 without padding (RFC 4648, section 5), as PKCE writes its verifier and
/// challenge.
pub(crate) fn base64url(bytes: &[u8], out: &mut String) {
    base64_with(
        b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_",
        false,
        bytes,
        out,
    );
}

/// `bytes` in base64 over `alphabet`, the last group padded with `=` when `pad`.
fn base64_with(alphabet: &[u8; 64], pad: bool, bytes: &[u8], out: &mut String) {
    let sextet = |n: u32| char::from(alphabet.get((n & 63) as usize).copied().unwrap_or(b'='));
    for chunk in bytes.chunks(3) {
        let [a, b, c] = [0, 1, 2].map(|i| u32::from(chunk.get(i).copied().unwrap_or(0)));
        let n = a << 16 | b << 8 | c;
        out.push(sextet(n >> 18));
        out.push(sextet(n >> 12));
        if chunk.len() > 1 {
            out.push(sextet(n >> 6));
        } else if pad {
            out.push('=');
        }
        if chunk.len() > 2 {
            out.push(sextet(n));
        } else if pad {
            out.push('=');
        }
    }
}

/// The JSON type of a parameter mirrored into a header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ParamType {
    /// A string, sent as-is (through [`header_value`]).
    String,
    /// An integer within ±(2^53 − 1), sent in decimal.
    Integer,
    /// `true` or `false`.
    Boolean,
}

/// One argument a tool asks to have mirrored into an `Mcp-Param-{name}` header.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParamHeader {
    name: String,
    path: Vec<String>,
    kind: ParamType,
}

/// The largest integer a header may carry, either sign: JavaScript's safe range.
const SAFE_INTEGER: f64 = 9_007_199_254_740_991.0;

impl ParamHeader {
    /// The name the marker gives, as written (`Region`).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The header's name: `Mcp-Param-` and the marker's name.
    pub fn header_name(&self) -> String {
        alloc::format!("Mcp-Param-{}", self.name)
    }

    /// The chain of `properties` keys from the schema's root to the marked property.
    pub fn path(&self) -> &[String] {
        &self.path
    }

    /// The marked property's type.
    pub fn kind(&self) -> ParamType {
        self.kind
    }

    /// The header's value for a call with `arguments`: `Ok(None)` when the argument is
    /// absent or `null` (the header is then left out), else the value in its header form.
    ///
    /// # Errors
    /// A [`HeaderArgumentError`] when the argument does not have the marked type (or is an
    /// integer outside ±(2^53 − 1)): such a call cannot be sent with a correct header.
    pub fn value(&self, arguments: &RawObject) -> Result<Option<String>, HeaderArgumentError> {
        self.value_in(JsonRef::new(arguments.as_str()))
    }

    /// As [`value`](Self::value), for arguments the crate holds as a view.
    pub(crate) fn value_in(
        &self,
        arguments: JsonRef<'_>,
    ) -> Result<Option<String>, HeaderArgumentError> {
        let mut value = arguments;
        for key in &self.path {
            let Some(inner) = value.as_object().and_then(|o| o.get(key)) else {
                return Ok(None);
            };
            value = inner;
        }
        if value.is_null() {
            return Ok(None);
        }
        let wrong = || HeaderArgumentError {
            header: self.header_name(),
            expected: self.kind,
        };
        let text = match self.kind {
            ParamType::String => header_value(&value.as_str().ok_or_else(wrong)?).into_owned(),
            ParamType::Boolean => value.as_bool().ok_or_else(wrong)?.to_string(),
            ParamType::Integer => {
                let n = value.as_f64().ok_or_else(wrong)?;
                // Within ±2^53 a whole number converts to i64 and back without loss.
                let whole = n as i64;
                if !(-SAFE_INTEGER..=SAFE_INTEGER).contains(&n) || whole as f64 != n {
                    return Err(wrong());
                }
                alloc::format!("{whole}")
            }
        };
        Ok(Some(text))
    }
}

/// An argument that cannot be mirrored into the header its tool declares.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HeaderArgumentError {
    /// The header, `Mcp-Param-...`.
    pub header: String,
    /// The type the tool's schema marks.
    pub expected: ParamType,
}

impl fmt::Display for HeaderArgumentError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let expected = match self.expected {
            ParamType::String => "a string",
            ParamType::Integer => "an integer within ±(2^53 - 1)",
            ParamType::Boolean => "a boolean",
        };
        write!(
            f,
            "the argument behind header {} must be {expected}",
            self.header
        )
    }
}

impl core::error::Error for HeaderArgumentError {}

/// Why a tool's `x-mcp-header` markers break the 2026-07-28 rules. A client over Streamable
/// HTTP must leave such a tool out of its catalog.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum HeaderMarkerError {
    /// A marker is not a string.
    NotAString,
    /// A marker is empty or not an HTTP token (RFC 9110: letters, digits and
    /// ``!#$%&'*+-.^_`|~``).
    NotAToken(String),
    /// Two markers name the same header, ignoring case.
    Duplicate(String),
    /// A marker is on a property whose type is not `string`, `integer` or `boolean`.
    NotPrimitive(String),
    /// A marker is on a schema not reached from the root through `properties` keys alone
    /// (inside `items`, a composition, a condition, `$defs`, or on the root itself).
    Unreachable(String),
}

impl fmt::Display for HeaderMarkerError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            HeaderMarkerError::NotAString => f.write_str("an x-mcp-header marker is not a string"),
            HeaderMarkerError::NotAToken(name) => {
                write!(f, "x-mcp-header {name:?} is not an HTTP token")
            }
            HeaderMarkerError::Duplicate(name) => {
                write!(f, "x-mcp-header {name:?} is used twice, ignoring case")
            }
            HeaderMarkerError::NotPrimitive(name) => write!(
                f,
                "x-mcp-header {name:?} marks a property that is not a string, integer or boolean"
            ),
            HeaderMarkerError::Unreachable(name) => write!(
                f,
                "x-mcp-header {name:?} is not on a property reached through properties alone"
            ),
        }
    }
}

impl core::error::Error for HeaderMarkerError {}

/// Keywords whose value is one subschema.
const ONE_SCHEMA: [&str; 11] = [
    "additionalProperties",
    "additionalItems",
    "items",
    "contains",
    "not",
    "if",
    "then",
    "else",
    "propertyNames",
    "unevaluatedItems",
    "unevaluatedProperties",
];

/// Keywords whose value is an array of subschemas.
const SCHEMA_LISTS: [&str; 5] = ["items", "prefixItems", "anyOf", "oneOf", "allOf"];

/// Keywords whose value maps names to subschemas.
const SCHEMA_MAPS: [&str; 4] = [
    "patternProperties",
    "$defs",
    "definitions",
    "dependentSchemas",
];

fn is_token(name: &str) -> bool {
    !name.is_empty()
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b))
}

impl Tool {
    /// Whether the schema could hold an `x-mcp-header` marker: a marker's key is written
    /// either as it reads or with an escape in it, so a schema holding neither that text
    /// nor a backslash has none, and need not be walked. A catalog notes it for each tool
    /// when it is listed, not on every call.
    pub(crate) fn may_have_param_headers(&self) -> bool {
        let schema = self.input_schema.as_str().as_bytes();
        schema.contains(&b'\\') || memchr::memmem::find(schema, b"x-mcp-header").is_some()
    }

    /// The arguments this tool asks to have mirrored into `Mcp-Param-*` headers, in the
    /// order its schema lists them, each with the path to its property.
    ///
    /// # Errors
    /// A [`HeaderMarkerError`] when a marker breaks the rules: the tool must then be left out
    /// of a catalog read over Streamable HTTP.
    pub fn param_headers(&self) -> Result<Vec<ParamHeader>, HeaderMarkerError> {
        if !self.may_have_param_headers() {
            return Ok(Vec::new());
        }
        let mut found: Vec<ParamHeader> = Vec::new();
        // Subschemas still to look at, each with its path of `properties` keys when it is
        // reached through them alone (the root's is empty). A stack, not recursion: the
        // depth is the schema's.
        let root = JsonRef::new(self.input_schema.as_str());
        let mut pending: Vec<(JsonRef<'_>, Option<Vec<String>>)> =
            alloc::vec![(root, Some(Vec::new()))];
        while let Some((schema, path)) = pending.pop() {
            let Some(object) = schema.as_object() else {
                continue;
            };
            if let Some(marker) = object.get("x-mcp-header") {
                let name = marker
                    .as_str()
                    .ok_or(HeaderMarkerError::NotAString)?
                    .into_owned();
                let path = match path.as_ref() {
                    Some(path) if !path.is_empty() => path.clone(),
                    _ => return Err(HeaderMarkerError::Unreachable(name)),
                };
                found.push(marked(&object, name, path)?);
            }
            let mut children = Vec::new();
            for (key, value) in object.members() {
                let key = key.as_ref();
                if key == "properties" {
                    for (property, schema) in value.as_object().iter().flat_map(Object::members) {
                        let path = path.as_ref().map(|p| {
                            let mut p = p.clone();
                            p.push(property.into_owned());
                            p
                        });
                        children.push((schema, path));
                    }
                } else if ONE_SCHEMA.contains(&key) && value.is_object() {
                    children.push((value, None));
                } else if SCHEMA_LISTS.contains(&key) {
                    children.extend(value.as_array().into_iter().flatten().map(|s| (s, None)));
                } else if SCHEMA_MAPS.contains(&key) {
                    let map = value.as_object();
                    children.extend(map.iter().flat_map(Object::members).map(|(_, s)| (s, None)));
                }
            }
            // Popped in the order written.
            pending.extend(children.into_iter().rev());
        }
        for (i, header) in found.iter().enumerate() {
            let twice = found
                .iter()
                .skip(i + 1)
                .any(|other| other.name.eq_ignore_ascii_case(&header.name));
            if twice {
                return Err(HeaderMarkerError::Duplicate(header.name.clone()));
            }
        }
        Ok(found)
    }
}

/// The header a reachable marked property declares.
fn marked(
    property: &Object<'_>,
    name: String,
    path: Vec<String>,
) -> Result<ParamHeader, HeaderMarkerError> {
    if !is_token(&name) {
        return Err(HeaderMarkerError::NotAToken(name));
    }
    let kind = match property.get("type").and_then(JsonRef::as_str).as_deref() {
        Some("string") => ParamType::String,
        Some("integer") => ParamType::Integer,
        Some("boolean") => ParamType::Boolean,
        _ => return Err(HeaderMarkerError::NotPrimitive(name)),
    };
    Ok(ParamHeader { name, path, kind })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Limits;

    fn tool(schema: &str) -> Tool {
        Tool::new("t", RawObject::parse(schema, &Limits::default()).unwrap())
    }

    #[test]
    fn header_values_as_the_spec_table_encodes_them() {
        let table = [
            ("us-west1", "us-west1"),
            ("Hello, 世界", "=?base64?SGVsbG8sIOS4lueVjA==?="),
            (" padded ", "=?base64?IHBhZGRlZCA=?="),
            ("line1\nline2", "=?base64?bGluZTEKbGluZTI=?="),
            ("=?base64?literal?=", "=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?="),
        ];
        for (value, header) in table {
            assert_eq!(header_value(value), header, "{value:?}");
        }
        assert_eq!(header_value("tab\there"), "=?base64?dGFiCWhlcmU=?=");
        assert_eq!(header_value("a"), "a");
        assert_eq!(header_value(""), "");
    }

    #[test]
    fn reachable_markers_give_headers_and_values() {
        let sql = tool(
            r#"{"type":"object","properties":{
                "region":{"type":"string","x-mcp-header":"Region"},
                "query":{"type":"string"},
                "opts":{"type":"object","properties":{
                    "shard":{"type":"integer","x-mcp-header":"Shard"},
                    "dry":{"type":"boolean","x-mcp-header":"Dry-Run"}}}},
              "required":["region","query"]}"#,
        );
        let headers = sql.param_headers().unwrap();
        let names: Vec<(&str, &[String])> = headers.iter().map(|h| (h.name(), h.path())).collect();
        assert_eq!(names.len(), 3);
        assert_eq!(names[0].0, "Region");
        assert_eq!(names[1].1, ["opts".to_string(), "shard".to_string()]);
        let args = |text: &str| RawObject::parse(text, &Limits::default()).unwrap();
        let call = args(r#"{"region":"us-west1","opts":{"shard":42.0,"dry":false}}"#);
        let values: Vec<Option<String>> = headers.iter().map(|h| h.value(&call).unwrap()).collect();
        assert_eq!(
            values,
            [
                Some("us-west1".into()),
                Some("42".into()),
                Some("false".into())
            ]
        );
        // Absent or null: no header.
        let call = args(r#"{"region":null,"opts":{}}"#);
        assert!(headers.iter().all(|h| h.value(&call).unwrap().is_none()));
        // A value of another type, or an unsafe integer, cannot be sent.
        let call = args(r#"{"region":7,"opts":{"shard":9007199254740993,"dry":"no"}}"#);
        assert!(headers.iter().all(|h| h.value(&call).is_err()));
        assert_eq!(
            headers[0].value(&call).unwrap_err().to_string(),
            "the argument behind header Mcp-Param-Region must be a string"
        );
    }

    #[test]
    fn markers_that_break_the_rules_are_refused() {
        let refused = |schema: &str| tool(schema).param_headers().unwrap_err();
        let prop = |p: &str| alloc::format!(r#"{{"type":"object","properties":{{"a":{p}}}}}"#);
        assert_eq!(
            refused(&prop(r#"{"type":"number","x-mcp-header":"A"}"#)),
            HeaderMarkerError::NotPrimitive("A".into())
        );
        assert_eq!(
            refused(&prop(r#"{"type":"string","x-mcp-header":"a b"}"#)),
            HeaderMarkerError::NotAToken("a b".into())
        );
        assert_eq!(
            refused(&prop(r#"{"type":"string","x-mcp-header":""}"#)),
            HeaderMarkerError::NotAToken(String::new())
        );
        assert_eq!(
            refused(&prop(r#"{"type":"string","x-mcp-header":3}"#)),
            HeaderMarkerError::NotAString
        );
        for unreachable in [
            r#"{"type":"array","items":{"type":"string","x-mcp-header":"A"}}"#,
            r#"{"anyOf":[{"type":"string","x-mcp-header":"A"}]}"#,
            r#"{"type":"object","$defs":{"d":{"type":"string","x-mcp-header":"A"}}}"#,
        ] {
            assert_eq!(
                refused(&prop(unreachable)),
                HeaderMarkerError::Unreachable("A".into()),
                "{unreachable}"
            );
        }
        assert_eq!(
            refused(r#"{"type":"object","x-mcp-header":"Root"}"#),
            HeaderMarkerError::Unreachable("Root".into())
        );
        assert_eq!(
            refused(
                r#"{"type":"object","properties":{"a":{"type":"string","x-mcp-header":"Id"},"b":{"type":"string","x-mcp-header":"ID"}}}"#
            ),
            HeaderMarkerError::Duplicate("Id".into())
        );
        // A property named like the keyword, or the keyword inside data, is no marker.
        let fine = tool(
            r#"{"type":"object","properties":{"x-mcp-header":{"type":"string","default":{"x-mcp-header":"no"}}}}"#,
        );
        assert_eq!(fine.param_headers().unwrap(), []);
    }

    #[test]
    fn a_marker_written_with_escapes_is_still_a_marker() {
        // The key spelled with an escape, and the name too: no text search may skip them.
        let escaped = tool(
            r#"{"type":"object","properties":{"region":{"type":"string","x-mcp-\u0068eader":"Re\u0067ion"}}}"#,
        );
        let headers = escaped.param_headers().unwrap();
        assert_eq!(headers.len(), 1);
        assert_eq!(headers[0].name(), "Region");
        // A backslash elsewhere and no marker: walked, and nothing found.
        let plain =
            tool(r#"{"type":"object","properties":{"p":{"type":"string","pattern":"\\d+"}}}"#);
        assert_eq!(plain.param_headers().unwrap(), []);
    }
}
