//! The protocol revisions this client speaks, and how it chooses among them.

use core::fmt;

/// A revision of MCP this client speaks, ordered from the oldest.
///
/// The two oldest (2024-11-05, 2025-03-26) are spoken only where the application says so
/// ([`Config::oldest_version`](crate::Config::oldest_version), or a pin): by default a
/// server that can offer nothing newer is refused as incompatible, before any tool is
/// listed. New revisions will be added.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[non_exhaustive]
pub enum ProtocolVersion {
    /// 2024-11-05: the first revision; `initialize` handshake. What the archived reference
    /// servers, built on the TypeScript SDK 1.0, still speak.
    V2024_11_05,
    /// 2025-03-26: `initialize` handshake. It allowed JSON-RPC batches, which this client
    /// never sends and refuses from a server (the SDKs send none unasked).
    V2025_03_26,
    /// 2025-06-18: `initialize` handshake (the seeds pin this one).
    V2025_06_18,
    /// 2025-11-25: `initialize` handshake.
    V2025_11_25,
    /// 2026-07-28: stateless; `_meta` on every request, `server/discover`.
    V2026_07_28,
}

/// What a revision does to connect: open a session with the `initialize` handshake, or
/// stay stateless.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Era {
    /// `initialize` + `notifications/initialized`, then a session (2024-11-05 to 2025-11-25).
    Stateful,
    /// `server/discover`, then per-request `_meta` and no session (2026-07-28).
    Stateless,
}

impl ProtocolVersion {
    /// Every revision spoken, oldest first.
    pub const ALL: [ProtocolVersion; 5] = [
        ProtocolVersion::V2024_11_05,
        ProtocolVersion::V2025_03_26,
        ProtocolVersion::V2025_06_18,
        ProtocolVersion::V2025_11_25,
        ProtocolVersion::V2026_07_28,
    ];

    /// The revision's date string, as it appears on the wire.
    pub const fn as_str(self) -> &'static str {
        match self {
            ProtocolVersion::V2024_11_05 => "2024-11-05",
            ProtocolVersion::V2025_03_26 => "2025-03-26",
            ProtocolVersion::V2025_06_18 => "2025-06-18",
            ProtocolVersion::V2025_11_25 => "2025-11-25",
            ProtocolVersion::V2026_07_28 => "2026-07-28",
        }
    }

    /// The revision named by `s`, if this client speaks it.
    pub fn parse(s: &str) -> Option<Self> {
        ProtocolVersion::ALL.into_iter().find(|v| v.as_str() == s)
    }

    /// Whether the revision has the handshake or is stateless.
    pub const fn era(self) -> Era {
        match self {
            ProtocolVersion::V2024_11_05
            | ProtocolVersion::V2025_03_26
            | ProtocolVersion::V2025_06_18
            | ProtocolVersion::V2025_11_25 => Era::Stateful,
            ProtocolVersion::V2026_07_28 => Era::Stateless,
        }
    }
}

impl fmt::Display for ProtocolVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Which revisions the client may use, and how it finds out what the server speaks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum ProtocolChoice {
    /// Probe with `server/discover` under a short deadline; a discover result or a
    /// recognised stateless error means the stateless revision, anything else (another
    /// error, or silence until the probe deadline) means a stateful server, and `initialize`
    /// follows on the same connection. The default.
    #[default]
    Auto,
    /// Only the stateful revisions: offer 2025-11-25, accept it or an older one down to
    /// [`Config::oldest_version`](crate::Config::oldest_version).
    Stateful,
    /// Only the stateless revision, through `server/discover`.
    Stateless,
    /// Exactly this revision, and no other (an older one than
    /// [`Config::oldest_version`](crate::Config::oldest_version) too: the pin says so).
    Pinned(ProtocolVersion),
}

impl ProtocolChoice {
    /// Whether the client may end up speaking `version`, as far as the choice goes: with
    /// any choice but a pin of `version` itself,
    /// [`Config::oldest_version`](crate::Config::oldest_version) also bounds it.
    pub fn accepts(self, version: ProtocolVersion) -> bool {
        match self {
            ProtocolChoice::Auto => true,
            ProtocolChoice::Stateful => version.era() == Era::Stateful,
            ProtocolChoice::Stateless => version.era() == Era::Stateless,
            ProtocolChoice::Pinned(pinned) => version == pinned,
        }
    }

    /// Whether the client may end up speaking `version` when the oldest revision it accepts
    /// is `oldest`, unless the choice pins `version` itself.
    pub(crate) fn accepts_since(self, version: ProtocolVersion, oldest: ProtocolVersion) -> bool {
        self.accepts(version) && (version >= oldest || self == ProtocolChoice::Pinned(version))
    }

    /// The newest accepted revision of `era`, if any.
    pub(crate) fn newest(self, era: Era) -> Option<ProtocolVersion> {
        ProtocolVersion::ALL
            .into_iter()
            .rev()
            .find(|v| v.era() == era && self.accepts(*v))
    }
}

#[cfg(feature = "serde")]
impl serde::Serialize for ProtocolVersion {
    /// The revision's date string.
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

#[cfg(feature = "serde")]
impl<'de> serde::Deserialize<'de> for ProtocolVersion {
    /// A revision this client speaks, from its date string.
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        use serde::de::Error as _;
        let text = <alloc::string::String as serde::Deserialize>::deserialize(deserializer)?;
        ProtocolVersion::parse(&text)
            .ok_or_else(|| D::Error::custom(alloc::format!("unknown protocol version {text:?}")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn choices_accept_what_they_say() {
        use ProtocolVersion::*;
        assert!(ProtocolChoice::Auto.accepts(V2025_06_18));
        assert!(!ProtocolChoice::Stateful.accepts(V2026_07_28));
        assert!(!ProtocolChoice::Stateless.accepts(V2025_11_25));
        assert!(!ProtocolChoice::Pinned(V2025_06_18).accepts(V2025_11_25));
        assert_eq!(
            ProtocolChoice::Stateful.newest(Era::Stateful),
            Some(V2025_11_25)
        );
        assert_eq!(
            ProtocolChoice::Pinned(V2025_06_18).newest(Era::Stateful),
            Some(V2025_06_18)
        );
        assert_eq!(ProtocolChoice::Stateful.newest(Era::Stateless), None);
        assert_eq!(ProtocolVersion::parse("2024-10-07"), None);
        assert_eq!(ProtocolVersion::parse("2024-11-05"), Some(V2024_11_05));
        // The oldest revisions only where the application says so.
        let oldest = V2025_06_18;
        assert!(!ProtocolChoice::Auto.accepts_since(V2025_03_26, oldest));
        assert!(!ProtocolChoice::Stateful.accepts_since(V2024_11_05, oldest));
        assert!(ProtocolChoice::Auto.accepts_since(V2024_11_05, V2024_11_05));
        assert!(ProtocolChoice::Auto.accepts_since(V2026_07_28, oldest));
        assert!(ProtocolChoice::Pinned(V2024_11_05).accepts_since(V2024_11_05, oldest));
        assert!(!ProtocolChoice::Pinned(V2024_11_05).accepts_since(V2025_11_25, V2024_11_05));
        // Offered is still the newest, whatever is accepted.
        assert_eq!(
            ProtocolChoice::Auto.newest(Era::Stateful),
            Some(V2025_11_25)
        );
        assert_eq!(ProtocolVersion::parse("2026-07-28"), Some(V2026_07_28));
    }
}
