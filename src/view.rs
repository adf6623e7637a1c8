//! Read access to validated, compact JSON text, without building a tree.
//!
//! The session reads results through these views: each look walks the text once with the
//! same scanner that validated it, and strings are borrowed unless they hold escapes.

use alloc::{borrow::Cow, vec::Vec};

use crate::error::JsonError;
use crate::json::{decode_string, RawJson, Scanner};

/// The text of exactly one JSON value that was validated and compacted before.
#[derive(Clone, Copy, Debug)]
pub(crate) struct JsonRef<'t>(&'t str);

impl<'t> JsonRef<'t> {
    /// A view of `text`, which must be one validated, compact JSON value (the text of a
    /// [`RawJson`] or of a span inside one).
    pub(crate) fn new(text: &'t str) -> Self {
        JsonRef(text)
    }

    pub(crate) fn as_str(self) -> Option<Cow<'t, str>> {
        if !self.0.starts_with('"') {
            return None;
        }
        let inner = 1..self.0.len().saturating_sub(1);
        Some(decode_string(self.0, inner, self.0.contains('\\')))
    }

    pub(crate) fn as_bool(self) -> Option<bool> {
        match self.0 {
            "true" => Some(true),
            "false" => Some(false),
            _ => None,
        }
    }

    pub(crate) fn is_null(self) -> bool {
        self.0 == "null"
    }

    /// The value as a number, if it is one (any JSON number; fractions included).
    pub(crate) fn as_f64(self) -> Option<f64> {
        if self
            .0
            .starts_with(['-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9'])
        {
            self.0.parse().ok()
        } else {
            None
        }
    }

    pub(crate) fn is_object(self) -> bool {
        self.0.starts_with('{')
    }

    /// The members of the object, or `None` if the value is not an object.
    pub(crate) fn as_object(self) -> Option<Object<'t>> {
        if !self.is_object() {
            return None;
        }
        let mut members = Vec::new();
        let mut scanner = Scanner::from_str(self.0, usize::MAX);
        scanner
            .members(|key, span, _| {
                if let Some(value) = self.0.get(span) {
                    members.push((key.clone(), JsonRef(value)));
                }
                Ok::<(), JsonError>(())
            })
            .ok()?;
        Some(Object(members))
    }

    /// The elements of the array, or `None` if the value is not an array.
    pub(crate) fn as_array(self) -> Option<Vec<JsonRef<'t>>> {
        if !self.0.starts_with('[') {
            return None;
        }
        let mut elements = Vec::new();
        let mut scanner = Scanner::from_str(self.0, usize::MAX);
        scanner
            .elements(|span| {
                if let Some(value) = self.0.get(span) {
                    elements.push(JsonRef(value));
                }
                Ok::<(), JsonError>(())
            })
            .ok()?;
        Some(elements)
    }

    /// The value as an owned [`RawJson`].
    pub(crate) fn to_raw(self) -> RawJson {
        RawJson::from_span(self.0, 0..self.0.len(), false)
    }
}

/// The members of one object, in the order written.
pub(crate) struct Object<'t>(Vec<(Cow<'t, str>, JsonRef<'t>)>);

impl<'t> Object<'t> {
    /// The value of member `key`, if present.
    pub(crate) fn get(&self, key: &str) -> Option<JsonRef<'t>> {
        self.0.iter().find(|(k, _)| k == key).map(|(_, v)| *v)
    }

    /// The string value of member `key`: `Ok(None)` when absent, `Err(())` when present
    /// but not a string.
    pub(crate) fn opt_str(&self, key: &str) -> Result<Option<Cow<'t, str>>, ()> {
        match self.get(key) {
            None => Ok(None),
            Some(v) => v.as_str().map(Some).ok_or(()),
        }
    }
}
