//! mcp-sansio: the client side of the Model Context Protocol as a pure state machine.
//!
//! No I/O, no clock, no randomness, no `unsafe`, and `no_std` with `alloc`: bytes from an MCP
//! server go in, typed messages come out, and every bound on what a server can make the
//! client hold lives in [`Limits`]. Transports (stdio, HTTP) drive it from outside.
//!
//! This release holds the layer everything else stands on:
//!
//! - [`FrameReader`] splits a stream into newline-terminated frames, refusing any line that
//!   reaches [`Limits::frame_bytes`] *before* it is parsed, in bounded memory, whether or not
//!   its newline ever comes.
//! - [`parse_frame`] turns one frame into one [`Message`], strictly: anything two JSON parsers
//!   could read differently is refused, an id is an integer or a string and nothing else
//!   (`true`, `1.0` and `"1"` never answer request `1`), and payloads stay compact JSON text
//!   ([`RawObject`]) instead of becoming a tree.
//! - [`encode_frame`] writes a [`Message`] as one compact line.
//!
//! Errors say who is at fault: the peer's bytes ([`Error::Malformed`]), the peer's use of the
//! protocol ([`Error::Protocol`]), or the application ([`Error::Misuse`]).
//!
//! # The read loop
//!
//! Whatever the transport, reading is the same loop: hand the reader each chunk as it
//! arrives, and take frames until it needs more.
//!
//! ```
//! use mcp_sansio::{parse_frame, FrameReader, Framed, Limits, Message, Outcome};
//!
//! let limits = Limits::default();
//! let mut reader = FrameReader::new(&limits);
//! // What a server wrote, as three reads from its stdout happened to cut it.
//! let reads: [&[u8]; 3] = [
//!     b"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progressToken\":1,\"progress\":1}}\n{\"jsonrpc\":\"2.0\",\"id\":1,\"res",
//!     b"ult\":{\"content\":[{\"type\":\"text\",\"text\":\"4\"}]}}\n",
//!     b"{\"jsonrpc\":\"2.0\",\"id\":true,\"result\":{}}\n",
//! ];
//! let mut seen = Vec::new();
//! for read in reads {
//!     let mut input = read;
//!     loop {
//!         match reader.next_frame(&mut input) {
//!             Framed::Frame(frame) => match parse_frame(frame, &limits) {
//!                 Ok(Message::Notification(n)) => seen.push(n.method),
//!                 Ok(Message::Response(r)) => match r.outcome {
//!                     Outcome::Result(result) => seen.push(format!("{} -> {result}", r.id)),
//!                     Outcome::Error(e) => seen.push(format!("{} failed: {}", r.id, e.message)),
//!                 },
//!                 Ok(other) => seen.push(format!("unexpected {other:?}")),
//!                 Err(refused) => seen.push(refused.to_string()),
//!             },
//!             Framed::TooLong { limit } => seen.push(format!("refused a line over {limit} bytes")),
//!             Framed::NeedMore => break,
//!         }
//!     }
//! }
//! assert_eq!(seen, [
//!     "notifications/progress",
//!     r#"1 -> {"content":[{"type":"text","text":"4"}]}"#,
//!     "the peer broke the protocol: an id is neither an integer within i64 nor a string",
//! ]);
//! ```
#![no_std]
#![forbid(unsafe_code)]

extern crate alloc;
#[cfg(feature = "std")]
extern crate std;

mod allowlist;
mod catalog;
mod client;
mod content;
mod error;
mod frame;
mod handshake;
mod id;
mod json;
mod limits;
mod listing;
mod message;
mod requests;
mod time;
mod version;
mod view;

#[doc(hidden)]
pub mod fuzzing;

pub use allowlist::Allowlist;
pub use catalog::{Catalog, CatalogPolicy, QuarantinedTool, Tool, ToolRejection};
pub use client::{Client, Config, Event, OpId, Output, ServerNotification};
pub use content::{
    CacheHint, CacheScope, CallToolResult, Connected, ContentBlock, GetPromptResult,
    Implementation, Prompt, PromptArgument, PromptMessage, Resource, ResourceBody,
    ResourceContents, ServerCapabilities,
};
pub use error::{Error, Incompatible, JsonError, JsonErrorKind, Misuse, ProtocolViolation};
pub use frame::{FrameReader, Framed};
pub use id::{ErrorCode, RequestId};
pub use json::{RawJson, RawObject};
pub use limits::Limits;
pub use listing::ListKind;
pub use message::{
    encode_frame, parse_frame, FrameParser, Message, Notification, Outcome, Request, Response,
    RpcError,
};
pub use time::Instant;
pub use version::{Era, ProtocolChoice, ProtocolVersion};

/// The README's examples, compiled and run as doctests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
