//! What the handshake learns about the server: its revision, capabilities, identity,
//! instructions, and how long that may be cached.

use alloc::{string::String, vec::Vec};

use crate::json::view::{opt_string, string, JsonRef, Object, Problem};
use crate::json::write::{object_text, text_of, write_integer, ObjectWriter};
use crate::json::RawObject;
use crate::version::{Era, ProtocolVersion};

/// A program's self-description (`serverInfo`): for display and logs, never for decisions.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Implementation {
    /// Its name.
    pub name: String,
    /// Its version.
    pub version: String,
    /// A human-readable title, if given.
    pub title: Option<String>,
    /// Every member this crate does not model (`icons`, `websiteUrl`, ...), kept as sent.
    pub extra: RawObject,
}

impl Implementation {
    /// The program `name` at `version`.
    pub fn new(name: impl Into<String>, version: impl Into<String>) -> Self {
        Implementation {
            name: name.into(),
            version: version.into(),
            title: None,
            extra: RawObject::empty(),
        }
    }

    /// The self-description as compact JSON, as `serverInfo` says it.
    pub fn to_json(&self) -> String {
        text_of(|out| self.write_json(out))
    }

    pub(crate) fn write_json(&self, out: &mut Vec<u8>) {
        let mut object = ObjectWriter::open(out);
        object.string("name", &self.name);
        object.string("version", &self.version);
        object.opt_string("title", self.title.as_deref());
        object.members_of(&self.extra);
        object.close();
    }

    pub(crate) fn read(value: JsonRef<'_>) -> Result<Self, Problem> {
        let object = value.as_object().ok_or("serverInfo is not an object")?;
        let ([name, version, title], extra) = object.split(["name", "version", "title"]);
        Ok(Implementation {
            name: string(name, "serverInfo has no name")?,
            version: string(version, "serverInfo has no version")?,
            title: opt_string(title, "serverInfo's title is not a string")?,
            extra,
        })
    }
}

/// The capabilities a server declared.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct ServerCapabilities {
    /// It offers tools.
    pub tools: bool,
    /// It offers resources.
    pub resources: bool,
    /// It offers prompts.
    pub prompts: bool,
    /// It may send log messages.
    pub logging: bool,
    /// It says when its tool list changes (`tools.listChanged: true`): unasked in 2025-06-18
    /// and 2025-11-25, on a subscription in 2026-07-28
    /// ([`Client::listen`](crate::Client::listen)).
    pub tools_list_changed: bool,
    /// It takes `resources/subscribe` (`resources.subscribe: true`; 2025-06-18, 2025-11-25).
    pub resource_subscriptions: bool,
    /// The whole capabilities object, as sent.
    pub raw: RawObject,
}

impl ServerCapabilities {
    /// The capabilities the object `raw` declares; `raw` must be a `capabilities` object as
    /// a server sends it (each capability an object).
    ///
    /// # Errors
    /// What is wrong with `raw`, in a few words.
    pub fn from_raw(raw: &RawObject) -> Result<Self, &'static str> {
        ServerCapabilities::read(JsonRef::new(raw.as_str()))
    }

    pub(crate) fn read(value: JsonRef<'_>) -> Result<Self, Problem> {
        let object = value.as_object().ok_or("capabilities are not an object")?;
        let declared = |name: &str| -> Result<bool, Problem> {
            match object.get(name) {
                None => Ok(false),
                Some(v) if v.is_object() => Ok(true),
                Some(_) => Err("a capability is not an object"),
            }
        };
        // `true` exactly, under an object: anything else declares nothing.
        let flag = |capability: &str, member: &str| {
            object
                .get(capability)
                .and_then(JsonRef::as_object)
                .and_then(|declared| declared.get(member))
                .and_then(JsonRef::as_bool)
                == Some(true)
        };
        Ok(ServerCapabilities {
            tools: declared("tools")?,
            resources: declared("resources")?,
            prompts: declared("prompts")?,
            logging: declared("logging")?,
            tools_list_changed: flag("tools", "listChanged"),
            resource_subscriptions: flag("resources", "subscribe"),
            raw: RawObject::from_trusted(value.to_raw()),
        })
    }
}

/// Whether a cached result may be shared (2026-07-28 `cacheScope`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum CacheScope {
    /// The same for every caller.
    Public,
    /// For this caller's credentials only (also assumed for any value not known).
    Private,
}

/// How long a result may be cached (2026-07-28 `ttlMs` and `cacheScope`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct CacheHint {
    /// Milliseconds the result stays fresh; a missing or negative `ttlMs` counts as 0.
    pub ttl_ms: u64,
    /// Who may share it.
    pub scope: CacheScope,
}

impl CacheHint {
    /// Fresh for `ttl_ms` milliseconds, shared as `scope` says.
    pub fn new(ttl_ms: u64, scope: CacheScope) -> Self {
        CacheHint { ttl_ms, scope }
    }

    /// Writes `ttlMs` and `cacheScope` as members of `object`, as a result carries them.
    pub(crate) fn write_members(&self, object: &mut ObjectWriter<'_>) {
        object.key("ttlMs");
        write_integer(object.out(), i64::try_from(self.ttl_ms).unwrap_or(i64::MAX));
        let scope = match self.scope {
            CacheScope::Public => "public",
            CacheScope::Private => "private",
        };
        object.string("cacheScope", scope);
    }

    /// The hint a stateless result carries, if it carries either field.
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
#[non_exhaustive]
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

impl Connected {
    /// A connection at `version` to a server with `capabilities`, and nothing else known.
    pub fn new(version: ProtocolVersion, capabilities: ServerCapabilities) -> Self {
        Connected {
            version,
            capabilities,
            server_info: None,
            instructions: None,
            cache: None,
        }
    }

    /// Whether the server tells of a change to its tool list only on a subscription: a
    /// 2026-07-28 server that declared `tools.listChanged` says so on a `subscriptions/listen`
    /// asking for [`Subscription::tools`](crate::Subscription::tools) and nowhere else. A
    /// server of an earlier revision that declared it says so unasked, and one that did not
    /// declare it never says; for those a subscription is not needed (nor, before 2026-07-28,
    /// possible).
    #[must_use]
    pub fn tool_changes_need_subscription(&self) -> bool {
        self.version.era() == Era::Stateless && self.capabilities.tools_list_changed
    }

    /// What the handshake established, as compact JSON in the shape of an `initialize`
    /// result (`protocolVersion`, `capabilities`, `serverInfo`, `instructions`), with the
    /// cache hint's `ttlMs` and `cacheScope` when there is one.
    pub fn to_json(&self) -> String {
        object_text(|object| {
            object.string("protocolVersion", self.version.as_str());
            object.raw("capabilities", self.capabilities.raw.as_str());
            if let Some(info) = &self.server_info {
                object.key("serverInfo");
                info.write_json(object.out());
            }
            object.opt_string("instructions", self.instructions.as_deref());
            if let Some(cache) = &self.cache {
                cache.write_members(object);
            }
        })
    }
}

#[cfg(feature = "serde")]
crate::json::serde::serialize_as_json!(Implementation, Connected);

#[cfg(feature = "serde")]
impl serde::Serialize for ServerCapabilities {
    /// The capabilities object, as the server sent it.
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.raw.serialize(serializer)
    }
}

#[cfg(feature = "serde")]
impl serde::Serialize for CacheHint {
    /// `{"ttlMs": .., "cacheScope": ..}`, as a result carries them.
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let text = object_text(|object| self.write_members(object));
        crate::json::serde::serialize_text(&text, serializer)
    }
}

#[cfg(feature = "serde")]
impl<'de> serde::Deserialize<'de> for CacheHint {
    /// Reads `{"ttlMs": .., "cacheScope": ..}` as a result's members are read: a missing or
    /// negative `ttlMs` is 0, and any scope but `public` is private.
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let raw = <RawObject as serde::Deserialize>::deserialize(deserializer)?;
        Ok(CacheHint::read(&Object::of(&raw)).unwrap_or(CacheHint {
            ttl_ms: 0,
            scope: CacheScope::Private,
        }))
    }
}
