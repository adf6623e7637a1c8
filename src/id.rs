//! Request ids: an integer or a string, never equal to each other.

use alloc::{boxed::Box, string::String, vec::Vec};
use core::fmt;

use crate::json::write::{write_integer, write_string};

/// A JSON-RPC request id: an integer within `i64`, or a string.
///
/// The two kinds never compare equal: `1` and `"1"` are different ids, and `Display` shows
/// which is which (`1` versus `"1"`). Nothing else is an id: not `true`, not `1.0`, not
/// `null`, not an array or object, not an integer outside `i64`.
#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct RequestId(Repr);

#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
enum Repr {
    Integer(i64),
    String(Box<str>),
}

impl RequestId {
    /// The id's integer, if it is an integer id.
    pub fn as_i64(&self) -> Option<i64> {
        match &self.0 {
            Repr::Integer(n) => Some(*n),
            Repr::String(_) => None,
        }
    }

    /// The id's string, if it is a string id.
    pub fn as_str(&self) -> Option<&str> {
        match &self.0 {
            Repr::Integer(_) => None,
            Repr::String(s) => Some(s),
        }
    }

    /// Appends the id as JSON.
    pub(crate) fn write_json(&self, out: &mut Vec<u8>) {
        match &self.0 {
            Repr::Integer(n) => write_integer(out, *n),
            Repr::String(s) => write_string(out, s),
        }
    }
}

impl From<i64> for RequestId {
    fn from(n: i64) -> Self {
        RequestId(Repr::Integer(n))
    }
}

impl From<&str> for RequestId {
    fn from(s: &str) -> Self {
        RequestId(Repr::String(Box::from(s)))
    }
}

impl From<String> for RequestId {
    fn from(s: String) -> Self {
        RequestId(Repr::String(s.into_boxed_str()))
    }
}

impl fmt::Display for RequestId {
    /// An integer id as digits (`1`), a string id as a JSON string (`"1"`).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.0 {
            Repr::Integer(n) => write!(f, "{n}"),
            Repr::String(s) => {
                let mut out = Vec::with_capacity(s.len() + 2);
                write_string(&mut out, s);
                f.write_str(core::str::from_utf8(&out).map_err(|_| fmt::Error)?)
            }
        }
    }
}

impl fmt::Debug for RequestId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "RequestId({self})")
    }
}

#[cfg(feature = "serde")]
impl serde::Serialize for RequestId {
    /// An integer id as a number, a string id as a string.
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match &self.0 {
            Repr::Integer(n) => serializer.serialize_i64(*n),
            Repr::String(s) => serializer.serialize_str(s),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::format;

    #[test]
    fn integer_and_string_ids_differ_and_say_so() {
        let one = RequestId::from(1);
        let text = RequestId::from("1");
        assert_ne!(one, text);
        assert_eq!(format!("{one}"), "1");
        assert_eq!(format!("{text}"), "\"1\"");
        assert_eq!(
            format!("{:?}", RequestId::from("a\"b")),
            "RequestId(\"a\\\"b\")"
        );
        assert_eq!(one.as_i64(), Some(1));
        assert_eq!(text.as_str(), Some("1"));
        assert_eq!(one.as_str(), None);
    }
}
