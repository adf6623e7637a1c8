//! Streamable HTTP: what 2026-07-28 mirrors into headers, the session over HTTP for every
//! revision, and OAuth's part of it.

pub mod auth;
mod endpoint;
mod headers;
mod session;

pub use headers::{header_value, HeaderArgumentError, HeaderMarkerError, ParamHeader, ParamType};
pub use session::{ExchangeId, HttpMethod, HttpRequest, HttpSession, ReplyHead};
