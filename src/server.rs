//! What the handshake learns about the server: its revision, capabilities, identity,
//! instructions, and how long that may be cached.

use alloc::string::String;

use crate::json::view::{optional_str, required_str, JsonRef, Object, Problem};
use crate::json::RawObject;
use crate::version::ProtocolVersion;

/// A program's self-description (`serverInfo`): for display and logs, never for decisions.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Implementation {
    /// Its name.
    pub name: String,
    /// Its version.
    pub version: String,
    /// A human-readable title, if given.
    pub title: Option<String>,
}

impl Implementation {
    pub(crate) fn read(value: JsonRef<'_>) -> Result<Self, Problem> {
        let object = value.as_object().ok_or("serverInfo is not an object")?;
        Ok(Implementation {
            name: required_str(&object, "name", "serverInfo has no name")?,
            version: required_str(&object, "version", "serverInfo has no version")?,
            title: optional_str(&object, "title", "serverInfo's title is not a string")?,
        })
    }
}

/// The capabilities a server declared.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ServerCapabilities {
    /// It offers tools.
    pub tools: bool,
    /// It offers resources.
    pub resources: bool,
    /// It offers prompts.
    pub prompts: bool,
    /// It may send log messages.
    pub logging: bool,
    /// The whole capabilities object, as sent.
    pub raw: RawObject,
}

impl ServerCapabilities {
    pub(crate) fn read(value: JsonRef<'_>) -> Result<Self, Problem> {
        let object = value.as_object().ok_or("capabilities are not an object")?;
        let declared = |name: &str| -> Result<bool, Problem> {
            match object.get(name) {
                None => Ok(false),
                Some(v) if v.is_object() => Ok(true),
                Some(_) => Err("a capability is not an object"),
            }
        };
        Ok(ServerCapabilities {
            tools: declared("tools")?,
            resources: declared("resources")?,
            prompts: declared("prompts")?,
            logging: declared("logging")?,
            raw: RawObject::from_trusted(value.to_raw()),
        })
    }
}

/// Whether a cached result may be shared (2026-07-28 `cacheScope`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CacheScope {
    /// The same for every caller.
    Public,
    /// For this caller's credentials only (also assumed for any value not known).
    Private,
}

/// How long a result may be cached (2026-07-28 `ttlMs` and `cacheScope`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CacheHint {
    /// Milliseconds the result stays fresh; a missing or negative `ttlMs` counts as 0.
    pub ttl_ms: u64,
    /// Who may share it.
    pub scope: CacheScope,
}

impl CacheHint {
    /// The hint a modern result carries, if it carries either field.
    pub(crate) fn read(result: &Object<'_>) -> Option<Self> {
        let ttl = result.get("ttlMs");
        let scope = result.get("cacheScope");
        if ttl.is_none() && scope.is_none() {
            return None;
        }
        let ttl_ms = ttl
            .and_then(JsonRef::as_f64)
            .filter(|ms| *ms > 0.0)
            // Saturating float-to-int cast: huge values become u64::MAX.
            .map_or(0, |ms| ms as u64);
        let scope = match scope.and_then(JsonRef::as_str).as_deref() {
            Some("public") => CacheScope::Public,
            _ => CacheScope::Private,
        };
        Some(CacheHint { ttl_ms, scope })
    }

    /// The stricter of two hints: the shorter life, and private if either is.
    pub(crate) fn merge(a: Option<Self>, b: Option<Self>) -> Option<Self> {
        match (a, b) {
            (Some(a), Some(b)) => Some(CacheHint {
                ttl_ms: a.ttl_ms.min(b.ttl_ms),
                scope: if a.scope == CacheScope::Public && b.scope == CacheScope::Public {
                    CacheScope::Public
                } else {
                    CacheScope::Private
                },
            }),
            (a, b) => a.or(b),
        }
    }
}

/// What the handshake established.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Connected {
    /// The revision in use.
    pub version: ProtocolVersion,
    /// What the server offers.
    pub capabilities: ServerCapabilities,
    /// The server's self-description, if it gave one (display only).
    pub server_info: Option<Implementation>,
    /// The server's instructions for the model, if any (untrusted text).
    pub instructions: Option<String>,
    /// How long the discovery result may be cached (2026-07-28 only).
    pub cache: Option<CacheHint>,
}
