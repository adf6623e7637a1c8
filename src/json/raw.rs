//! The raw JSON payload types: validated once, kept as compact text, written back verbatim.

use alloc::{boxed::Box, string::String};
use core::{fmt, ops::Range};

use super::scan::{Scanner, Scratch};
use crate::error::Misuse;
use crate::Limits;

/// `text` without insignificant whitespace; `text` must be valid JSON.
pub(crate) fn compact(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut in_string = false;
    let mut escaped = false;
    for c in text.chars() {
        if in_string {
            if escaped {
                escaped = false;
            } else if c == '\\' {
                escaped = true;
            } else if c == '"' {
                in_string = false;
            }
        } else if c == '"' {
            in_string = true;
        } else if matches!(c, ' ' | '\t' | '\n' | '\r') {
            continue;
        }
        out.push(c);
    }
    out
}

/// One JSON value, validated and kept as compact text.
///
/// This is how payloads (params, results, error data) travel: validated once, never turned
/// into a tree on the hot path, and written back out verbatim. Equal values with different
/// spellings (`1.0` and `1`, `"a"` and `"\u0061"`) are different `RawJson`s; insignificant
/// whitespace is removed, so the text never holds a raw newline.
#[derive(Clone)]
pub struct RawJson(Text);

/// The text of a [`RawJson`]: owned, or a constant this crate wrote (the empty object, which
/// so costs no allocation on the per-call path).
#[derive(Clone)]
enum Text {
    Static(&'static str),
    Owned(Box<str>),
}

impl PartialEq for RawJson {
    fn eq(&self, other: &Self) -> bool {
        self.as_str() == other.as_str()
    }
}

impl Eq for RawJson {}

impl core::hash::Hash for RawJson {
    fn hash<H: core::hash::Hasher>(&self, state: &mut H) {
        self.as_str().hash(state);
    }
}

impl RawJson {
    /// Validates `text` as one JSON value under `limits` and keeps it in compact form.
    ///
    /// This is how the application hands in JSON of its own (a tool's arguments), so a
    /// refusal is the application's: a [`Misuse`], never an error that blames the peer.
    ///
    /// # Errors
    /// [`Misuse::InvalidJson`] when `text` is not one valid, unambiguous JSON value.
    pub fn parse(text: &str, limits: &Limits) -> Result<Self, Misuse> {
        let invalid = Misuse::InvalidJson;
        let mut scratch = Scratch::default();
        let mut scanner = Scanner::from_str(text, limits.nesting_depth, &mut scratch);
        let (span, spaced) = scanner.value().map_err(invalid)?;
        scanner.finish().map_err(invalid)?;
        Ok(RawJson::from_span(text, span, spaced))
    }

    /// Serializes `value` with `serde_json` and validates the result under `limits`.
    ///
    /// # Errors
    /// [`Misuse::Unserializable`] when `serde_json` cannot serialize `value`, and
    /// [`Misuse::InvalidJson`] when the JSON it makes breaks a rule of this crate (for
    /// example a map that serializes one key twice, or nesting beyond the limit).
    #[cfg(feature = "serde")]
    pub fn from_serialize<T: serde::Serialize + ?Sized>(
        value: &T,
        limits: &Limits,
    ) -> Result<Self, Misuse> {
        let text = serde_json::to_string(value).map_err(|_| Misuse::Unserializable)?;
        RawJson::parse(&text, limits)
    }

    /// Copies a validated span of `text`, compacting it if it held whitespace.
    pub(crate) fn from_span(text: &str, span: Range<usize>, spaced: bool) -> Self {
        let raw = text.get(span).unwrap_or_default();
        if spaced {
            RawJson(Text::Owned(compact(raw).into_boxed_str()))
        } else {
            RawJson(Text::Owned(Box::from(raw)))
        }
    }

    /// The compact JSON text.
    pub fn as_str(&self) -> &str {
        match &self.0 {
            Text::Static(text) => text,
            Text::Owned(text) => text,
        }
    }

    /// Whether the value is a JSON object.
    pub fn is_object(&self) -> bool {
        self.as_str().starts_with('{')
    }

    /// Wraps compact JSON text this crate wrote itself.
    pub(crate) fn from_trusted_text(text: String) -> Self {
        RawJson(Text::Owned(text.into_boxed_str()))
    }
}

impl fmt::Debug for RawJson {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "RawJson({})", self.as_str())
    }
}

impl fmt::Display for RawJson {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A [`RawJson`] that is known to be a JSON object: what `params` and `result` must be.
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct RawObject(RawJson);

impl RawObject {
    /// The empty object, `{}`.
    pub fn empty() -> Self {
        RawObject(RawJson(Text::Static("{}")))
    }

    /// Validates `text` as one JSON object under `limits`.
    ///
    /// # Errors
    /// [`Misuse::InvalidJson`] for invalid JSON, [`Misuse::NotAnObject`] for any other value.
    pub fn parse(text: &str, limits: &Limits) -> Result<Self, Misuse> {
        RawObject::try_from(RawJson::parse(text, limits)?)
    }

    /// Serializes `value` with `serde_json`, which must make a JSON object.
    ///
    /// # Errors
    /// As [`RawJson::from_serialize`], and [`Misuse::NotAnObject`] for any other value.
    #[cfg(feature = "serde")]
    pub fn from_serialize<T: serde::Serialize + ?Sized>(
        value: &T,
        limits: &Limits,
    ) -> Result<Self, Misuse> {
        RawObject::try_from(RawJson::from_serialize(value, limits)?)
    }

    /// Wraps a [`RawJson`] the crate has checked is an object.
    pub(crate) fn from_trusted(raw: RawJson) -> Self {
        RawObject(raw)
    }

    /// Wraps compact JSON object text this crate wrote itself.
    pub(crate) fn from_trusted_text(text: String) -> Self {
        RawObject(RawJson::from_trusted_text(text))
    }

    /// Whether this is the empty object, `{}`.
    pub fn is_empty(&self) -> bool {
        self.as_str() == "{}"
    }

    /// The compact JSON text.
    pub fn as_str(&self) -> &str {
        self.0.as_str()
    }

    /// The object as a [`RawJson`].
    pub fn as_raw(&self) -> &RawJson {
        &self.0
    }
}

impl TryFrom<RawJson> for RawObject {
    type Error = Misuse;

    /// Accepts `raw` if it is an object; otherwise [`Misuse::NotAnObject`].
    fn try_from(raw: RawJson) -> Result<Self, Misuse> {
        if raw.is_object() {
            Ok(RawObject(raw))
        } else {
            Err(Misuse::NotAnObject)
        }
    }
}

impl From<RawObject> for RawJson {
    fn from(object: RawObject) -> Self {
        object.0
    }
}

impl fmt::Debug for RawObject {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "RawObject({})", self.0.as_str())
    }
}

impl fmt::Display for RawObject {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn raw_json_is_compact_and_keeps_string_spaces() {
        let limits = Limits::default();
        let raw = RawJson::parse(" { \"a b\" : [ 1 ,\t2 ] }\r\n", &limits);
        assert_eq!(
            raw.map(|r| r.as_str().into()),
            Ok(String::from(r#"{"a b":[1,2]}"#))
        );
        assert_eq!(RawObject::parse("[1]", &limits), Err(Misuse::NotAnObject));
    }

    #[cfg(feature = "serde")]
    #[test]
    fn serialized_values_are_validated_like_text() {
        let limits = Limits::default();
        let map: alloc::collections::BTreeMap<&str, u8> = [("x", 1)].into_iter().collect();
        assert_eq!(
            RawObject::from_serialize(&map, &limits).map(|o| o.as_str().into()),
            Ok(String::from(r#"{"x":1}"#))
        );
    }
}
