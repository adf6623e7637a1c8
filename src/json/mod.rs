//! The JSON machinery: a strict validator ([`scan`]), read-only views of validated text
//! ([`view`]), compact writers ([`write`]) and the raw payload types ([`raw`]).
//!
//! No tree is ever built: frames are validated once, payloads are kept as compact text, and
//! what the session needs is read from that text through views.

pub(crate) mod raw;
pub(crate) mod scan;
pub(crate) mod view;
pub(crate) mod write;

pub use raw::{RawJson, RawObject};
