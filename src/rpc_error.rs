//! JSON-RPC errors: the error object a peer sends, and its open set of codes.

use alloc::string::String;
use core::fmt;

use crate::json::RawJson;

/// A JSON-RPC error object: a code, a one-sentence message, and optional data.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RpcError {
    /// The error code.
    pub code: ErrorCode,
    /// The peer's description of the error.
    pub message: String,
    /// Any further data the peer attached.
    pub data: Option<RawJson>,
}

impl RpcError {
    /// An error with `code` and `message`, and no data.
    #[must_use]
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        RpcError {
            code,
            message: message.into(),
            data: None,
        }
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

#[cfg(feature = "serde")]
impl serde::Serialize for ErrorCode {
    /// The number.
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_i32(self.0)
    }
}

#[cfg(feature = "serde")]
impl serde::Serialize for RpcError {
    /// `{"code": .., "message": .., "data": ..}`, as JSON-RPC writes it.
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut map = serializer.serialize_map(None)?;
        map.serialize_entry("code", &self.code)?;
        map.serialize_entry("message", &self.message)?;
        if let Some(data) = &self.data {
            map.serialize_entry("data", data)?;
        }
        map.end()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::format;

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
