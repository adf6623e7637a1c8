//! The JSON machinery: a strict validator ([`scan`]), read-only views of validated text
//! ([`view`]), compact writers ([`write`]), the raw payload types ([`raw`]) and, with the
//! `serde` feature, their serde edge ([`serde`](self::serde)).
//!
//! No tree is ever built: frames are validated once, payloads are kept as compact text, and
//! what the session needs is read from that text through views.

pub(crate) mod raw;
pub(crate) mod scan;
#[cfg(feature = "serde")]
pub(crate) mod serde;
pub(crate) mod view;
pub(crate) mod write;

pub use raw::{RawJson, RawObject};
