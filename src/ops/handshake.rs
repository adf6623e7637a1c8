//! The handshake, as one machine: `server/discover` for 2026-07-28, `initialize` for the
//! stateful revisions, and the probe that chooses between them. Everything the handshake
//! decides is here; the client only learns the [`Connected`] it ends with.

use alloc::{boxed::Box, string::String, vec::Vec};
use core::time::Duration;

use crate::error::{Error, Incompatible, ProtocolViolation};
use crate::event::Output;
use crate::json::view::{JsonRef, Object};
use crate::json::write::write_string;
use crate::logging::LogLevel;
use crate::rpc_error::{ErrorCode, RpcError};
use crate::server::{CacheHint, Connected, Implementation, ServerCapabilities};
use crate::time::Instant;
use crate::version::{Era, ProtocolChoice, ProtocolVersion};

use super::{Context, Machine, Next, Step};

/// Where the handshake stands.
#[derive(Debug)]
pub(crate) enum Handshake {
    /// Auto mode: `server/discover` sent as a probe; silence until `until` means a stateful
    /// server.
    Probe {
        until: Instant,
        version: ProtocolVersion,
    },
    /// `server/discover` sent with `version`, no fallback on silence.
    Discover { version: ProtocolVersion },
    /// `initialize` sent, offering `offered`.
    Initialize { offered: ProtocolVersion },
}

impl Handshake {
    /// The handshake `choice` calls for, starting at `now`, and its first request. The
    /// probe waits `probe`, never more than half of `timeout`, so the fallback always has
    /// time.
    pub(crate) fn start(
        choice: ProtocolChoice,
        probe: Duration,
        timeout: Duration,
        now: Instant,
    ) -> (Handshake, Next) {
        let stateless = ProtocolVersion::V2026_07_28;
        match choice {
            ProtocolChoice::Auto => {
                let until = now.saturating_add(probe.min(timeout / 2));
                let state = Handshake::Probe {
                    until,
                    version: stateless,
                };
                (state, Next::Discover(stateless))
            }
            ProtocolChoice::Stateless => Handshake::Discover { version: stateless }.go(),
            ProtocolChoice::Stateful => Handshake::Initialize {
                offered: ProtocolVersion::V2025_11_25,
            }
            .go(),
            ProtocolChoice::Pinned(version) => match version.era() {
                Era::Stateless => Handshake::Discover { version }.go(),
                Era::Stateful => Handshake::Initialize { offered: version }.go(),
            },
        }
    }

    /// This state and the request that opens it.
    fn go(self) -> (Handshake, Next) {
        let next = match self {
            Handshake::Probe { version, .. } | Handshake::Discover { version } => {
                Next::Discover(version)
            }
            Handshake::Initialize { offered } => Next::Initialize(offered),
        };
        (self, next)
    }

    /// Moves on to `attempt`.
    fn retry(&mut self, attempt: Attempt) -> Step {
        let (state, next) = match attempt {
            Attempt::Discover(version) => Handshake::Discover { version }.go(),
            Attempt::Initialize(offered) => Handshake::Initialize { offered }.go(),
        };
        *self = state;
        Step::Send(next)
    }

    /// The handshake that renews an expired session of `version`: `initialize` again.
    pub(crate) fn renew(version: ProtocolVersion) -> (Handshake, Next) {
        Handshake::Initialize { offered: version }.go()
    }

    /// The revision a `server/discover` in flight asks for; `None` once `initialize` is.
    pub(crate) fn discovering(&self) -> Option<ProtocolVersion> {
        match self {
            Handshake::Probe { version, .. } | Handshake::Discover { version } => Some(*version),
            Handshake::Initialize { .. } => None,
        }
    }

    /// The probe was refused as a server of the handshake revisions refuses what it does not
    /// know (over HTTP, a 400, 404 or 405 without a 2026-07-28 error): `initialize` follows,
    /// as silence would make it. `None` when not probing.
    pub(crate) fn refused_as_legacy(&mut self, ctx: &Context<'_>) -> Option<Step> {
        match self {
            Handshake::Probe { .. } => {}
            Handshake::Discover { .. } | Handshake::Initialize { .. } => return None,
        }
        let version = ctx.choice.newest(Era::Stateful)?;
        Some(self.retry(Attempt::Initialize(version)))
    }

    /// When the probe gives up, if probing.
    pub(crate) fn probe_until(&self) -> Option<Instant> {
        match self {
            Handshake::Probe { until, .. } => Some(*until),
            Handshake::Discover { .. } | Handshake::Initialize { .. } => None,
        }
    }

    /// The probe got no answer by `now`: the server is stateful, and `initialize` follows
    /// (if the choice accepts a stateful revision). `None` while the probe still waits.
    pub(crate) fn probe_expired(&mut self, now: Instant, ctx: &Context<'_>) -> Option<Step> {
        if self.probe_until().is_none_or(|until| until > now) {
            return None;
        }
        Some(match ctx.choice.newest(Era::Stateful) {
            Some(version) => self.retry(Attempt::Initialize(version)),
            None => Step::Fail(Error::Timeout {
                operation: "handshake",
            }),
        })
    }
}

impl Machine for Handshake {
    fn on_result(&mut self, result: &Object<'_>, ctx: &Context<'_>) -> Step {
        let version = match *self {
            Handshake::Initialize { .. } => {
                return match read_initialize(result, ctx) {
                    Ok(connected) => connect(connected),
                    Err(error) => Step::Fail(error),
                };
            }
            Handshake::Probe { version, .. } | Handshake::Discover { version } => version,
        };
        let discovered = match read_discover(result) {
            Ok(discovered) => discovered,
            Err(error) => return Step::Fail(error),
        };
        if discovered.supported.iter().any(|s| s == version.as_str()) {
            return connect(discovered.connected(version));
        }
        match choose(ctx, &discovered.supported, version) {
            Some(attempt) => self.retry(attempt),
            None => Step::Fail(
                Incompatible::NoCommonVersion {
                    supported: discovered.supported,
                }
                .into(),
            ),
        }
    }

    fn on_error(&mut self, error: RpcError, ctx: &Context<'_>) -> Step {
        let (probing, tried) = match *self {
            Handshake::Initialize { offered } => {
                return self.initialize_refused(error, offered, ctx)
            }
            Handshake::Probe { version, .. } => (true, version),
            Handshake::Discover { version } => (false, version),
        };
        match read_discover_error(&error) {
            DiscoverError::Unsupported(supported) => match choose(ctx, &supported, tried) {
                Some(attempt) => self.retry(attempt),
                None => Step::Fail(Incompatible::NoCommonVersion { supported }.into()),
            },
            DiscoverError::Stateless => Step::Fail(Error::Rpc(error)),
            DiscoverError::Other => match ctx.choice.newest(Era::Stateful) {
                Some(version) if probing => self.retry(Attempt::Initialize(version)),
                _ => Step::Fail(Incompatible::NotStateless { error }.into()),
            },
        }
    }
}

impl Handshake {
    /// `initialize` was refused. A server that names the versions it takes (-32022) may be a
    /// 2026-07-28 server that answered the probe too late and now holds the connection to
    /// that revision (the Python SDK does): `server/discover` follows if a revision both
    /// speak is left, never the same `initialize` again.
    fn initialize_refused(
        &mut self,
        error: RpcError,
        offered: ProtocolVersion,
        ctx: &Context<'_>,
    ) -> Step {
        if let DiscoverError::Unsupported(supported) = read_discover_error(&error) {
            match choose(ctx, &supported, offered) {
                Some(Attempt::Initialize(version)) if version == offered => {}
                Some(attempt) => return self.retry(attempt),
                None => {}
            }
        }
        Step::Fail(Error::Rpc(error))
    }
}

fn connect(connected: Connected) -> Step {
    Step::Done(Output::Connect(Box::new(connected)))
}

/// What to try after the server named the versions it supports.
#[derive(Debug, PartialEq, Eq)]
enum Attempt {
    Discover(ProtocolVersion),
    Initialize(ProtocolVersion),
}

/// The identity a client sends: `{"name":..,"version":..}`.
pub(crate) fn client_info(name: &str, version: &str) -> String {
    let mut out = Vec::with_capacity(name.len() + version.len() + 24);
    out.extend_from_slice(b"{\"name\":");
    write_string(&mut out, name);
    out.extend_from_slice(b",\"version\":");
    write_string(&mut out, version);
    out.push(b'}');
    String::from_utf8(out).unwrap_or_default()
}

/// The `_meta` object every 2026-07-28 request carries, declaring `capabilities` (a compact
/// object), and asking for the server's log messages at `log_level` and above where it is
/// given (without it, a server sends none).
pub(crate) fn request_meta(
    version: ProtocolVersion,
    client_info: &str,
    capabilities: &str,
    log_level: Option<LogLevel>,
) -> String {
    let mut meta = String::with_capacity(200 + client_info.len() + capabilities.len());
    meta.push_str("{\"io.modelcontextprotocol/protocolVersion\":\"");
    meta.push_str(version.as_str());
    meta.push_str("\",\"io.modelcontextprotocol/clientCapabilities\":");
    meta.push_str(capabilities);
    meta.push_str(",\"io.modelcontextprotocol/clientInfo\":");
    meta.push_str(client_info);
    if let Some(level) = log_level {
        meta.push_str(",\"io.modelcontextprotocol/logLevel\":\"");
        meta.push_str(level.as_str());
        meta.push('"');
    }
    meta.push('}');
    meta
}

/// What to try after the server listed `supported`, given what was already tried; `None`
/// when no revision both speak is left.
fn choose(ctx: &Context<'_>, supported: &[String], tried: ProtocolVersion) -> Option<Attempt> {
    let common = |era: Era| {
        ProtocolVersion::ALL.into_iter().rev().find(|v| {
            v.era() == era
                && ctx.choice.accepts_since(*v, ctx.oldest)
                && supported.iter().any(|s| s == v.as_str())
        })
    };
    if let Some(stateless) = common(Era::Stateless).filter(|v| *v != tried) {
        return Some(Attempt::Discover(stateless));
    }
    common(Era::Stateful).map(Attempt::Initialize)
}

fn invalid(method: &'static str, problem: &'static str) -> Error {
    Error::Protocol(ProtocolViolation::InvalidResult { method, problem })
}

/// The string array `supported` names, from a discover result or a -32022 error's data.
fn versions(list: Option<JsonRef<'_>>) -> Option<Vec<String>> {
    list?
        .as_array()?
        .map(|v| v.as_str().map(String::from))
        .collect()
}

/// A discover result, read: the versions it lists and the connection it would give.
struct Discovered {
    supported: Vec<String>,
    capabilities: ServerCapabilities,
    server_info: Option<Implementation>,
    instructions: Option<String>,
    cache: Option<CacheHint>,
}

/// What both handshakes say about the server: its capabilities (required), its
/// self-description `info` (where the revision puts it), and its instructions.
fn read_server(
    method: &'static str,
    result: &Object<'_>,
    info: Option<JsonRef<'_>>,
) -> Result<(ServerCapabilities, Option<Implementation>, Option<String>), Error> {
    let capabilities = result
        .get("capabilities")
        .ok_or_else(|| invalid(method, "capabilities are missing"))
        .and_then(|c| ServerCapabilities::read(c).map_err(|p| invalid(method, p)))?;
    let server_info = info
        .map(Implementation::read)
        .transpose()
        .map_err(|p| invalid(method, p))?;
    let instructions = result
        .opt_str("instructions")
        .map_err(|()| invalid(method, "instructions are not a string"))?
        .map(String::from);
    Ok((capabilities, server_info, instructions))
}

fn read_discover(result: &Object<'_>) -> Result<Discovered, Error> {
    const METHOD: &str = "server/discover";
    let supported = versions(result.get("supportedVersions"))
        .ok_or_else(|| invalid(METHOD, "supportedVersions is not an array of strings"))?;
    // serverInfo travels in the result's _meta; older drafts put it at the top level.
    let info = result
        .get("_meta")
        .and_then(JsonRef::as_object)
        .and_then(|meta| meta.get("io.modelcontextprotocol/serverInfo"))
        .or_else(|| result.get("serverInfo"));
    let (capabilities, server_info, instructions) = read_server(METHOD, result, info)?;
    Ok(Discovered {
        supported,
        capabilities,
        server_info,
        instructions,
        cache: CacheHint::read(result),
    })
}

impl Discovered {
    fn connected(self, version: ProtocolVersion) -> Connected {
        Connected {
            version,
            capabilities: self.capabilities,
            server_info: self.server_info,
            instructions: self.instructions,
            cache: self.cache,
        }
    }
}

/// Reads an `initialize` result, refusing a version the client does not accept.
fn read_initialize(result: &Object<'_>, ctx: &Context<'_>) -> Result<Connected, Error> {
    const METHOD: &str = "initialize";
    let offered = result
        .get("protocolVersion")
        .and_then(JsonRef::as_str)
        .ok_or_else(|| invalid(METHOD, "protocolVersion is not a string"))?;
    let version = ProtocolVersion::parse(&offered)
        .filter(|v| v.era() == Era::Stateful && ctx.choice.accepts_since(*v, ctx.oldest))
        .ok_or_else(|| {
            Error::Incompatible(Incompatible::UnsupportedVersion {
                offered: String::from(offered),
            })
        })?;
    let (capabilities, server_info, instructions) =
        read_server(METHOD, result, result.get("serverInfo"))?;
    Ok(Connected {
        version,
        capabilities,
        server_info,
        instructions,
        cache: None,
    })
}

/// How a server that answered the discovery request with an error is read.
#[derive(Debug, PartialEq, Eq)]
enum DiscoverError {
    /// -32022: a stateless server; these are the versions it supports.
    Unsupported(Vec<String>),
    /// Another error in the range the 2026-07-28 revision reserves: a stateless server that
    /// refused.
    Stateless,
    /// Anything else: a server that does not know `server/discover`.
    Other,
}

fn read_discover_error(error: &RpcError) -> DiscoverError {
    if error.code == ErrorCode::UNSUPPORTED_PROTOCOL_VERSION {
        let data = error.data.as_ref().map(|d| JsonRef::new(d.as_str()));
        let supported = data
            .and_then(JsonRef::as_object)
            .and_then(|d| versions(d.get("supported")));
        return match supported {
            Some(supported) => DiscoverError::Unsupported(supported),
            None => DiscoverError::Stateless,
        };
    }
    if (-32099..=-32020).contains(&error.code.0) {
        DiscoverError::Stateless
    } else {
        DiscoverError::Other
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::vec;
    use ProtocolVersion::*;

    fn strings(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| String::from(*s)).collect()
    }

    /// What `choose` reads of a client set to `choice`, accepting revisions from `oldest`.
    fn choose_as(
        choice: ProtocolChoice,
        oldest: ProtocolVersion,
        supported: &[String],
        tried: ProtocolVersion,
    ) -> Option<Attempt> {
        let limits = crate::Limits::default();
        let ctx = Context {
            limits: &limits,
            choice,
            oldest,
            roots: None,
            asks: crate::Asks::NONE,
        };
        choose(&ctx, supported, tried)
    }

    #[test]
    fn choosing_prefers_a_new_modern_version_then_a_legacy_one() {
        let choose =
            |choice, supported: &[String], tried| choose_as(choice, V2025_06_18, supported, tried);
        let both = strings(&["2025-06-18", "2025-11-25", "2026-07-28"]);
        assert_eq!(
            choose(ProtocolChoice::Auto, &both, V2025_06_18),
            Some(Attempt::Discover(V2026_07_28))
        );
        // Already tried the only modern version: a legacy one both speak.
        assert_eq!(
            choose(ProtocolChoice::Auto, &both, V2026_07_28),
            Some(Attempt::Initialize(V2025_11_25))
        );
        assert_eq!(choose(ProtocolChoice::Stateless, &both, V2026_07_28), None);
        assert_eq!(
            choose(ProtocolChoice::Pinned(V2025_06_18), &both, V2026_07_28),
            Some(Attempt::Initialize(V2025_06_18))
        );
        assert_eq!(
            choose(ProtocolChoice::Auto, &strings(&["2027-01-01"]), V2026_07_28),
            None
        );
        // The oldest revisions only where the application accepts them.
        let old = strings(&["2024-11-05", "2025-03-26"]);
        assert_eq!(choose(ProtocolChoice::Auto, &old, V2025_11_25), None);
        assert_eq!(
            choose_as(ProtocolChoice::Auto, V2024_11_05, &old, V2025_11_25),
            Some(Attempt::Initialize(V2025_03_26))
        );
        assert_eq!(
            choose(ProtocolChoice::Pinned(V2024_11_05), &old, V2025_11_25),
            Some(Attempt::Initialize(V2024_11_05))
        );
    }

    #[test]
    fn discovery_errors_are_read_by_code_range_not_one_code() {
        let error = |code, data: Option<&str>| RpcError {
            code: ErrorCode(code),
            message: "x".into(),
            data: data.map(|d| crate::RawJson::parse(d, &crate::Limits::default()).unwrap()),
        };
        assert_eq!(
            read_discover_error(&error(
                -32022,
                Some(r#"{"supported":["2025-11-25"],"requested":"2026-07-28"}"#)
            )),
            DiscoverError::Unsupported(vec!["2025-11-25".into()])
        );
        assert_eq!(
            read_discover_error(&error(-32022, None)),
            DiscoverError::Stateless
        );
        assert_eq!(
            read_discover_error(&error(-32021, None)),
            DiscoverError::Stateless
        );
        assert_eq!(
            read_discover_error(&error(-32601, None)),
            DiscoverError::Other
        );
        assert_eq!(
            read_discover_error(&error(-32602, None)),
            DiscoverError::Other
        );
        assert_eq!(
            read_discover_error(&error(-32000, None)),
            DiscoverError::Other
        );
    }

    #[test]
    fn meta_carries_the_three_keys_and_a_log_level_asked_for() {
        let meta = request_meta(V2026_07_28, &client_info("c\"x", "1"), "{}", None);
        assert_eq!(
            meta,
            r#"{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"c\"x","version":"1"}}"#
        );
        let meta = request_meta(V2026_07_28, "{}", "{}", Some(LogLevel::Notice));
        assert_eq!(
            meta,
            r#"{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{},"io.modelcontextprotocol/logLevel":"notice"}"#
        );
    }
}
