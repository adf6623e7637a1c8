//! Request ids and JSON-RPC error codes.

use alloc::{boxed::Box, string::String, vec::Vec};
use core::fmt;

use crate::json::write_string;

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

/// Appends `n` in decimal.
pub(crate) fn write_integer(out: &mut Vec<u8>, n: i64) {
    let mut digits = [0u8; 20];
    let mut at = digits.len();
    let mut rest = n.unsigned_abs();
    loop {
        at -= 1;
        if let Some(slot) = digits.get_mut(at) {
            // rest % 10 < 10, so the cast cannot truncate.
            *slot = b'0' + (rest % 10) as u8;
        }
        rest /= 10;
        if rest == 0 {
            break;
        }
    }
    if n < 0 {
        out.push(b'-');
    }
    out.extend_from_slice(digits.get(at..).unwrap_or_default());
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

/// A JSON-RPC error code: any `i32`, with the standard and MCP codes as constants.
///
/// Open on purpose: a peer may send any code, and an unknown code is still a code.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ErrorCode(pub i32);

impl ErrorCode {
    /// -32700: the receiver could not parse the JSON it was sent.
    pub const PARSE_ERROR: ErrorCode = ErrorCode(-32700);
    /// -32600: the JSON sent is not a valid request.
    pub const INVALID_REQUEST: ErrorCode = ErrorCode(-32600);
    /// -32601: the method does not exist, or its capability was not declared.
    pub const METHOD_NOT_FOUND: ErrorCode = ErrorCode(-32601);
    /// -32602: invalid params (in MCP also an unknown tool or prompt, or a bad cursor).
    pub const INVALID_PARAMS: ErrorCode = ErrorCode(-32602);
    /// -32603: an internal error in the receiver.
    pub const INTERNAL_ERROR: ErrorCode = ErrorCode(-32603);
    /// -32002: MCP resource not found (2025-06-18 and 2025-11-25).
    pub const RESOURCE_NOT_FOUND: ErrorCode = ErrorCode(-32002);
    /// -32042: MCP URL elicitation required (2025-11-25).
    pub const URL_ELICITATION_REQUIRED: ErrorCode = ErrorCode(-32042);
    /// -32020: MCP HTTP header mismatch (2026-07-28).
    pub const HEADER_MISMATCH: ErrorCode = ErrorCode(-32020);
    /// -32021: MCP missing required client capability (2026-07-28).
    pub const MISSING_REQUIRED_CLIENT_CAPABILITY: ErrorCode = ErrorCode(-32021);
    /// -32022: MCP unsupported protocol version (2026-07-28).
    pub const UNSUPPORTED_PROTOCOL_VERSION: ErrorCode = ErrorCode(-32022);

    /// The code's standard name, if it has one.
    pub const fn name(self) -> Option<&'static str> {
        Some(match self.0 {
            -32700 => "parse error",
            -32600 => "invalid request",
            -32601 => "method not found",
            -32602 => "invalid params",
            -32603 => "internal error",
            -32002 => "resource not found",
            -32042 => "URL elicitation required",
            -32020 => "header mismatch",
            -32021 => "missing required client capability",
            -32022 => "unsupported protocol version",
            _ => return None,
        })
    }
}

impl fmt::Display for ErrorCode {
    /// The number, then its name in parentheses when it has one: `-32601 (method not found)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.name() {
            Some(name) => write!(f, "{} ({name})", self.0),
            None => write!(f, "{}", self.0),
        }
    }
}

impl fmt::Debug for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ErrorCode({self})")
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

    #[test]
    fn integers_write_as_json() {
        for n in [0, 7, -7, 1234567890, i64::MIN, i64::MAX] {
            let mut out = Vec::new();
            write_integer(&mut out, n);
            assert_eq!(out, format!("{n}").as_bytes());
        }
    }

    #[test]
    fn codes_display_with_their_names() {
        assert_eq!(
            format!("{}", ErrorCode::METHOD_NOT_FOUND),
            "-32601 (method not found)"
        );
        assert_eq!(format!("{}", ErrorCode(7)), "7");
        assert_eq!(
            ErrorCode::UNSUPPORTED_PROTOCOL_VERSION.name(),
            Some("unsupported protocol version")
        );
    }
}
