//! OAuth for Streamable HTTP, as the MCP authorization spec (2025-06-18 and later) asks of a
//! client: every step that is a decision or a document, none that moves a byte.
//!
//! A server that wants a token answers 401 with a `WWW-Authenticate` challenge, which the
//! session reads into [`HttpError::Unauthorized`](crate::HttpError::Unauthorized) (403 with
//! `insufficient_scope`, [`HttpError::Forbidden`](crate::HttpError::Forbidden), asks for more
//! scopes). From there the application, or a transport for it, goes:
//!
//! 1. [`resource_metadata_urls`]: where the server's protected resource metadata (RFC 9728)
//!    may be, in the order the spec says to try them; [`ResourceMetadata::parse`] reads the
//!    first one found and refuses metadata that names another resource than the server.
//! 2. [`server_metadata_urls`] for the authorization server it names; [`ServerMetadata::parse`]
//!    reads the first found (RFC 8414 or OpenID Connect discovery) and refuses one that does
//!    not name itself as the issuer asked for, or does not do PKCE with `S256`.
//! 3. A client id: one the application has, or [`registration_request`] and
//!    [`Registration::parse`] (RFC 7591) at the server's `registration_endpoint`.
//! 4. [`Pkce::from_random`] with 32 random bytes, a random `state`, and
//!    [`AuthorizationRequest::url`] for the user's browser, with the scope
//!    [`scope_to_request`] picks and the `resource` (RFC 8707) that binds the token to this
//!    server. [`read_redirect`] reads where the browser came back to, checking `state` (and
//!    `iss`, RFC 9207).
//! 5. [`TokenRequest`] for the token endpoint, and [`Token::parse`] for its answer; then
//!    [`HttpSession::set_authorization`](crate::HttpSession::set_authorization) sends the
//!    token on every request. [`TokenRequest::refresh`] renews it.
//!
//! [`Discovery`] and [`Login`] are those steps as one flow a transport drives: each says
//! what to fetch or which URL the browser opens, and takes what came back (see
//! [`Fetch`]). The blocking transport and the async one both run it.
//!
//! Every URL is checked before it is used: `https`, or `http` to a loopback host (the spec
//! asks for HTTPS everywhere but on the user's own machine). Every document is bounded by
//! [`Limits::frame_bytes`] and read with the crate's strict JSON parser. The randomness
//! (PKCE's verifier, `state`) comes from the application, as this crate holds none.

use alloc::borrow::Cow;
use alloc::string::String;
use alloc::vec::Vec;
use core::fmt;

use sha2::{Digest, Sha256};

use super::endpoint::split_absolute;
use super::headers::{base64, base64url};
use crate::error::{JsonError, JsonErrorKind};
use crate::json::scan::{Scanner, Scratch};
use crate::json::view::Object;
use crate::json::write::{write_array, write_string, ObjectWriter};
use crate::Limits;
use crate::RawJson;

mod flow;
pub use flow::{
    authorize, discover, token, AuthorizeError, Authorized, Browsing, ClientIdentity, Discovered,
    Discovering, Discovery, Exchanging, Fetch, Fetched, Login, Random, Registering, TokenExchange,
};

// ---- the challenge ------------------------------------------------------------------------

/// The `Bearer` challenge of a `WWW-Authenticate` header (RFC 6750, section 3; RFC 9728,
/// section 5.1): what a server that refused a request says about the token it wants.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Challenge {
    /// `resource_metadata`: where the server's protected resource metadata is.
    pub resource_metadata: Option<String>,
    /// `scope`: the scopes the request needs, space-separated. The spec has a client treat
    /// them as authoritative for the request that was refused.
    pub scope: Option<String>,
    /// `error`: `invalid_token`, `insufficient_scope`, `invalid_request`.
    pub error: Option<String>,
    /// `error_description`: the server's words, for a person.
    pub error_description: Option<String>,
}

impl Challenge {
    /// The `Bearer` challenge among those `header` holds (a `WWW-Authenticate` value, or
    /// several joined by commas, as HTTP allows), or `None` if it holds none. Parameters
    /// named twice keep their first value; other schemes and parameters are skipped. A
    /// header that breaks the grammar is read up to where it breaks.
    pub fn parse(header: &str) -> Option<Challenge> {
        let mut cursor = HeaderCursor {
            bytes: header.as_bytes(),
            at: 0,
        };
        while let Some(scheme) = cursor.scheme() {
            let bearer = scheme.eq_ignore_ascii_case("bearer");
            let mut challenge = Challenge::default();
            let whole = cursor.params(|name, value| {
                if bearer {
                    challenge.set(name, value);
                }
            });
            if bearer {
                return Some(challenge);
            }
            if !whole {
                return None;
            }
        }
        None
    }

    fn set(&mut self, name: &str, value: String) {
        let slot = if name.eq_ignore_ascii_case("resource_metadata") {
            &mut self.resource_metadata
        } else if name.eq_ignore_ascii_case("scope") {
            &mut self.scope
        } else if name.eq_ignore_ascii_case("error") {
            &mut self.error
        } else if name.eq_ignore_ascii_case("error_description") {
            &mut self.error_description
        } else {
            return;
        };
        if slot.is_none() {
            *slot = Some(value);
        }
    }

    /// Whether the challenge says nothing (`Bearer` alone).
    pub(crate) fn is_bare(&self) -> bool {
        *self == Challenge::default()
    }

    /// Whether the server says the token lacks scopes (`error="insufficient_scope"`): the
    /// spec's step-up case, where the application asks for a token with
    /// [`scope`](Self::scope).
    pub fn is_insufficient_scope(&self) -> bool {
        self.error.as_deref() == Some("insufficient_scope")
    }
}

impl fmt::Display for Challenge {
    /// The challenge in a few words, the server's text escaped: `error "invalid_token",
    /// scope "files:read"`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut first = true;
        for (name, value) in [
            ("error", &self.error),
            ("scope", &self.scope),
            ("described as", &self.error_description),
        ] {
            if let Some(value) = value {
                let comma = if first { "" } else { ", " };
                write!(f, "{comma}{name} \"{}\"", value.escape_debug())?;
                first = false;
            }
        }
        if first {
            f.write_str("no details")?;
        }
        Ok(())
    }
}

/// A walk over a `WWW-Authenticate` value (RFC 9110, section 11.6.1).
struct HeaderCursor<'h> {
    bytes: &'h [u8],
    at: usize,
}

impl<'h> HeaderCursor<'h> {
    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.at).copied()
    }

    fn skip_spaces(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t')) {
            self.at += 1;
        }
    }

    /// A token (RFC 9110 `tchar`s), possibly empty.
    fn token(&mut self) -> &'h str {
        let start = self.at;
        while self
            .peek()
            .is_some_and(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b))
        {
            self.at += 1;
        }
        // Only ASCII was taken, so the slice is UTF-8 and on char boundaries.
        core::str::from_utf8(self.bytes.get(start..self.at).unwrap_or_default()).unwrap_or("")
    }

    /// The next challenge's scheme, past any commas and spaces before it.
    fn scheme(&mut self) -> Option<&'h str> {
        while matches!(self.peek(), Some(b' ' | b'\t' | b',')) {
            self.at += 1;
        }
        let scheme = self.token();
        (!scheme.is_empty()).then_some(scheme)
    }

    /// The current challenge's parameters, each to `each`, up to the next challenge's scheme;
    /// `false` if the header breaks the grammar (the walk then ends).
    fn params(&mut self, mut each: impl FnMut(&str, String)) -> bool {
        let mut first = true;
        loop {
            let item = self.at;
            self.skip_spaces();
            while self.peek() == Some(b',') {
                self.at += 1;
                self.skip_spaces();
            }
            if self.peek().is_none() {
                return true;
            }
            let name = self.token();
            if name.is_empty() {
                return false;
            }
            self.skip_spaces();
            let value = if self.peek() == Some(b'=') {
                self.at += 1;
                self.skip_spaces();
                if self.peek() == Some(b'"') {
                    match self.quoted() {
                        Some(value) => Some(value),
                        None => return false,
                    }
                } else {
                    Some(String::from(self.token()))
                }
            } else {
                None
            };
            match value {
                Some(value) if !(value.is_empty() && matches!(self.peek(), Some(b'='))) => {
                    each(name, value);
                }
                // A token68 (`Basic dXNlcg==`): only right after the scheme.
                _ if first => {
                    while self.peek() == Some(b'=') {
                        self.at += 1;
                    }
                }
                // A name alone: the next challenge's scheme.
                _ => {
                    self.at = item;
                    return true;
                }
            }
            first = false;
            self.skip_spaces();
            if !matches!(self.peek(), None | Some(b',')) {
                return false;
            }
        }
    }

    /// A quoted string's content, its escapes undone, or `None` if it never ends.
    fn quoted(&mut self) -> Option<String> {
        self.at += 1;
        let mut out = Vec::new();
        loop {
            match self.peek()? {
                b'"' => {
                    self.at += 1;
                    return String::from_utf8(out).ok();
                }
                b'\\' => {
                    self.at += 1;
                    out.push(self.peek()?);
                }
                b => out.push(b),
            }
            self.at += 1;
        }
    }
}

// ---- errors -------------------------------------------------------------------------------

/// Why a step of authorization could not go on. Each but [`AuthError::InvalidUrl`] and
/// [`AuthError::NoClientId`] (the application's, or an incompatible server) is the doing of the
/// resource server or the authorization server.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum AuthError {
    /// A URL the application gave (the server's, a redirect URI) is not an `http` or
    /// `https` URL.
    InvalidUrl(String),
    /// A URL a server gave is not `https`, nor `http` to a loopback host; it is not used.
    InsecureUrl(String),
    /// A document is longer than [`Limits::frame_bytes`].
    TooLong {
        /// Which document.
        document: &'static str,
    },
    /// A document is not one valid JSON text.
    Malformed {
        /// Which document.
        document: &'static str,
        /// What is wrong with it.
        error: JsonError,
    },
    /// A document lacks a member it must have, or has one of the wrong type.
    Invalid {
        /// Which document.
        document: &'static str,
        /// The member.
        member: &'static str,
    },
    /// The protected resource metadata names another resource than the server asked: its
    /// tokens would be for somewhere else.
    ResourceMismatch {
        /// The `resource` it names.
        resource: String,
    },
    /// The authorization server's metadata names another issuer than the one asked for
    /// (RFC 8414, section 3.3), or its redirect carries another `iss` (RFC 9207).
    IssuerMismatch {
        /// The issuer it names.
        issuer: String,
    },
    /// The authorization server does not list `S256` in `code_challenge_methods_supported`:
    /// without PKCE the spec says not to go on.
    NoPkce,
    /// The redirect's `state` is not the one sent: a forged or stale redirect, not used.
    StateMismatch,
    /// The redirect carries neither a code nor an error.
    NoCode,
    /// The authorization server said no, at the redirect or at an endpoint, with its OAuth
    /// error code and description.
    Refused {
        /// `error`: `access_denied`, `invalid_grant`, ...
        error: String,
        /// `error_description`, if given.
        description: Option<String>,
    },
    /// The token is not a bearer token (`token_type`), the only kind MCP sends, or holds
    /// bytes no header can carry.
    NotBearer(String),
    /// The registration names a way for the client to prove itself at the token endpoint
    /// (`token_endpoint_auth_method`) that this client does not have: `private_key_jwt`,
    /// `tls_client_auth`, or one of the server's own.
    UnsupportedClientAuth(String),
    /// No protected resource metadata, or no authorization server metadata, at any of the
    /// URLs the spec names (each answered with a status other than 200, listed).
    NotFound(Vec<(String, u16)>),
    /// An endpoint answered with an error status and no OAuth error in its body.
    Status {
        /// The URL.
        url: String,
        /// Its status.
        status: u16,
    },
    /// The authorization server takes no client it does not know (no
    /// `registration_endpoint`, no client metadata documents), and the application gave no
    /// client id.
    NoClientId,
}

impl fmt::Display for AuthError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AuthError::InvalidUrl(url) => {
                write!(f, "{:?} is not an http or https URL", url)
            }
            AuthError::InsecureUrl(url) => write!(
                f,
                "the server named {:?}, which is neither https nor on this machine",
                url
            ),
            AuthError::TooLong { document } => {
                write!(f, "the {document} is longer than the frame limit")
            }
            AuthError::Malformed { document, error } => {
                write!(f, "the {document} is not valid JSON: {error}")
            }
            AuthError::Invalid { document, member } => {
                write!(f, "the {document} lacks a valid \"{member}\"")
            }
            AuthError::ResourceMismatch { resource } => write!(
                f,
                "the protected resource metadata is for {:?}, not for this server",
                resource
            ),
            AuthError::IssuerMismatch { issuer } => write!(
                f,
                "the authorization server calls itself {:?}, not the issuer asked for",
                issuer
            ),
            AuthError::NoPkce => {
                f.write_str("the authorization server does not offer PKCE with S256")
            }
            AuthError::StateMismatch => {
                f.write_str("the redirect's state is not the one sent, so it is not used")
            }
            AuthError::NoCode => f.write_str("the redirect carries no authorization code"),
            AuthError::Refused { error, description } => {
                write!(f, "the authorization server refused: {:?}", error)?;
                match description {
                    Some(d) => write!(f, " ({:?})", d),
                    None => Ok(()),
                }
            }
            AuthError::NotBearer(kind) => {
                write!(
                    f,
                    "the token is not a bearer token a header can carry ({:?})",
                    kind
                )
            }
            AuthError::UnsupportedClientAuth(method) => write!(
                f,
                "the authorization server registered the client to authenticate by {:?}, \
                 which this client cannot do",
                method
            ),
            AuthError::NotFound(tried) => {
                f.write_str("no metadata was found at")?;
                for (i, (url, status)) in tried.iter().enumerate() {
                    let comma = if i == 0 { " " } else { ", " };
                    write!(f, "{comma}{url} ({status})")?;
                }
                Ok(())
            }
            AuthError::Status { url, status } => {
                write!(f, "{url} answered {status} without an OAuth error")
            }
            AuthError::NoClientId => f.write_str(
                "the authorization server registers no clients and no client id was given",
            ),
        }
    }
}

impl core::error::Error for AuthError {}

// ---- URLs ---------------------------------------------------------------------------------

/// Whether `url` names user information (`https://user@host/`): nothing OAuth uses does,
/// and a host reading one URL while a person reads another is how phishing goes.
fn has_userinfo(url: &str) -> bool {
    let rest = url.split_once("://").map_or(url, |(_, rest)| rest);
    let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
    authority.contains('@')
}

/// `url`'s origin and request target, if it is `https`, or `http` to a loopback host.
fn secure(url: &str) -> Result<(String, &str), AuthError> {
    let (origin, target) =
        split_absolute(url).ok_or_else(|| AuthError::InsecureUrl(String::from(url)))?;
    if url.contains(['#', ' ']) || !url.bytes().all(|b| b.is_ascii_graphic()) || has_userinfo(url) {
        return Err(AuthError::InsecureUrl(String::from(url)));
    }
    if origin.starts_with("https://") || is_loopback(&origin) {
        Ok((origin, target))
    } else {
        Err(AuthError::InsecureUrl(String::from(url)))
    }
}

/// Whether `origin` (`http://host[:port]`, lowercase) is on this machine.
fn is_loopback(origin: &str) -> bool {
    let authority = origin.split_once("://").map_or("", |(_, a)| a);
    let host = if authority.starts_with('[') {
        authority
            .split_once(']')
            .map_or("", |(h, _)| h)
            .trim_start_matches('[')
    } else {
        authority.split(':').next().unwrap_or_default()
    };
    let ipv4_loopback = || {
        let octets: Vec<&str> = host.split('.').collect();
        octets.len() == 4
            && octets.first() == Some(&"127")
            && octets.iter().all(|o| o.parse::<u8>().is_ok())
    };
    host == "localhost" || host == "::1" || ipv4_loopback()
}

/// The application's own URL (the MCP server's), split.
fn given(url: &str) -> Result<(String, &str), AuthError> {
    split_absolute(url)
        .filter(|_| url.bytes().all(|b| b.is_ascii_graphic()))
        .ok_or_else(|| AuthError::InvalidUrl(String::from(url)))
}

/// Where the MCP server at `server_url` may keep its protected resource metadata, in the
/// order the spec says to try them: the challenge's `resource_metadata`, if the server
/// sent one (then only that, as the spec says to use it when present); else the well-known
/// URI with the endpoint's path (`https://h/.well-known/oauth-protected-resource/mcp`), then
/// the one at the root.
///
/// # Errors
/// [`AuthError::InvalidUrl`] when `server_url` is not an `http` or `https` URL, and
/// [`AuthError::InsecureUrl`] when the challenge names a URL that is not `https` (nor
/// `http` to a loopback host).
pub fn resource_metadata_urls(
    server_url: &str,
    challenge: Option<&Challenge>,
) -> Result<Vec<String>, AuthError> {
    let (origin, target) = given(server_url)?;
    if let Some(named) = challenge.and_then(|c| c.resource_metadata.as_deref()) {
        secure(named)?;
        return Ok(alloc::vec![String::from(named)]);
    }
    let root = alloc::format!("{origin}/.well-known/oauth-protected-resource");
    let path = target.split('?').next().unwrap_or("/");
    Ok(if path == "/" {
        alloc::vec![root]
    } else {
        alloc::vec![alloc::format!("{root}{}", path.trim_end_matches('/')), root]
    })
}

/// Where the metadata of the authorization server `issuer` may be, in the spec's order: for
/// an issuer with a path, RFC 8414's path insertion, then OpenID Connect's insertion, then
/// its appending; for one without, RFC 8414's, then OpenID Connect's.
///
/// # Errors
/// [`AuthError::InsecureUrl`] when `issuer` is not `https` (nor `http` to a loopback host),
/// or has a query or fragment, which RFC 8414 forbids an issuer.
pub fn server_metadata_urls(issuer: &str) -> Result<Vec<String>, AuthError> {
    let (origin, target) = secure(issuer)?;
    if target.contains('?') {
        return Err(AuthError::InsecureUrl(String::from(issuer)));
    }
    let path = target.trim_end_matches('/');
    Ok(if path.is_empty() {
        alloc::vec![
            alloc::format!("{origin}/.well-known/oauth-authorization-server"),
            alloc::format!("{origin}/.well-known/openid-configuration"),
        ]
    } else {
        alloc::vec![
            alloc::format!("{origin}/.well-known/oauth-authorization-server{path}"),
            alloc::format!("{origin}/.well-known/openid-configuration{path}"),
            alloc::format!("{origin}{path}/.well-known/openid-configuration"),
        ]
    })
}

// ---- documents ----------------------------------------------------------------------------

/// `read` over `body`, once it is validated as one JSON object (kept in compact form) no
/// longer than the frame limit; `document` names it in every error.
fn read_document<T>(
    body: &[u8],
    document: &'static str,
    limits: &Limits,
    read: impl FnOnce(Object<'_>) -> Result<T, AuthError>,
) -> Result<T, AuthError> {
    if body.len() > limits.frame_bytes {
        return Err(AuthError::TooLong { document });
    }
    let malformed = |error| AuthError::Malformed { document, error };
    let text = core::str::from_utf8(body)
        .map_err(|e| malformed(JsonError::new(e.valid_up_to(), JsonErrorKind::InvalidUtf8)))?;
    let mut scratch = Scratch::default();
    let mut scanner = Scanner::from_str(text, limits.nesting_depth, &mut scratch);
    let (span, spaced) = scanner.value().map_err(malformed)?;
    scanner.finish().map_err(malformed)?;
    let value = RawJson::from_span(text, span, spaced);
    if !value.is_object() {
        return Err(AuthError::Invalid {
            document,
            member: "(the document itself, an object)",
        });
    }
    read(Object::of_validated(value.as_str()))
}

/// A string member, if present; `Err` if present and not a string.
fn opt_string(
    object: Object<'_>,
    member: &'static str,
    document: &'static str,
) -> Result<Option<String>, AuthError> {
    match object.get(member) {
        None => Ok(None),
        Some(value) if value.is_null() => Ok(None),
        Some(value) => value
            .as_str()
            .map(|s| Some(s.into_owned()))
            .ok_or(AuthError::Invalid { document, member }),
    }
}

/// A string member that must be there.
fn string(
    object: Object<'_>,
    member: &'static str,
    document: &'static str,
) -> Result<String, AuthError> {
    opt_string(object, member, document)?.ok_or(AuthError::Invalid { document, member })
}

/// An array of strings, if present.
fn opt_strings(
    object: Object<'_>,
    member: &'static str,
    document: &'static str,
) -> Result<Option<Vec<String>>, AuthError> {
    let invalid = AuthError::Invalid { document, member };
    let Some(value) = object.get(member).filter(|v| !v.is_null()) else {
        return Ok(None);
    };
    let elements = value.as_array().ok_or(invalid.clone())?;
    elements
        .map(|e| e.as_str().map(Cow::into_owned).ok_or(invalid.clone()))
        .collect::<Result<Vec<_>, _>>()
        .map(Some)
}

/// A URL member a server gave, checked with [`secure`].
fn secure_url(
    object: Object<'_>,
    member: &'static str,
    document: &'static str,
) -> Result<Option<String>, AuthError> {
    let url = opt_string(object, member, document)?;
    if let Some(url) = &url {
        secure(url)?;
    }
    Ok(url)
}

/// The protected resource metadata of an MCP server (RFC 9728), as the spec uses it.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct ResourceMetadata {
    /// `resource`: the server's resource identifier, sent as RFC 8707's `resource` in the
    /// authorization and token requests.
    pub resource: String,
    /// `authorization_servers`: the issuers whose tokens the server takes, at least one,
    /// each `https` (or `http` to a loopback host).
    pub authorization_servers: Vec<String>,
    /// `scopes_supported`, if given.
    pub scopes_supported: Option<Vec<String>>,
}

impl ResourceMetadata {
    const DOCUMENT: &'static str = "protected resource metadata";

    /// Reads the metadata `body` fetched for the MCP server at `server_url`.
    ///
    /// The `resource` it names must be the server's URL or lie above it on the same origin
    /// (`https://h/` or `https://h/api` for `https://h/api/mcp`), scheme and host in any
    /// case, a trailing slash aside: a server cannot have tokens asked for another's
    /// resource (RFC 9728, section 3.3).
    ///
    /// # Errors
    /// [`AuthError`]: too long, not JSON, `resource` or `authorization_servers` missing or
    /// empty, a server's URL that is not secure, or a resource that is not this server's.
    pub fn parse(body: &[u8], server_url: &str, limits: &Limits) -> Result<Self, AuthError> {
        let document = Self::DOCUMENT;
        let (origin, target) = given(server_url)?;
        read_document(body, document, limits, |object| {
            let resource = string(object, "resource", document)?;
            let covers = split_absolute(&resource).is_some_and(|(theirs, above)| {
                let path = |t: &str| -> String {
                    String::from(t.split('?').next().unwrap_or("/").trim_end_matches('/'))
                };
                let (above, ours) = (path(above), path(target));
                theirs == origin
                    && !resource.contains('#')
                    && !has_userinfo(&resource)
                    && (ours == above || ours.starts_with(&alloc::format!("{above}/")))
            });
            if !covers {
                return Err(AuthError::ResourceMismatch { resource });
            }
            let member = "authorization_servers";
            let servers = opt_strings(object, member, document)?
                .filter(|s| !s.is_empty())
                .ok_or(AuthError::Invalid { document, member })?;
            for server in &servers {
                secure(server)?;
            }
            Ok(ResourceMetadata {
                resource,
                authorization_servers: servers,
                scopes_supported: opt_strings(object, "scopes_supported", document)?,
            })
        })
    }
}

/// An authorization server's metadata (RFC 8414, or OpenID Connect discovery), as far as a
/// client of MCP uses it.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct ServerMetadata {
    /// `issuer`, the one asked for.
    pub issuer: String,
    /// `authorization_endpoint`, where the user's browser goes.
    pub authorization_endpoint: String,
    /// `token_endpoint`, where a code or a refresh token becomes an access token.
    pub token_endpoint: String,
    /// `registration_endpoint` (RFC 7591), if the server takes clients it does not know.
    pub registration_endpoint: Option<String>,
    /// `client_id_metadata_document_supported`: whether a URL may be the client id.
    pub client_id_metadata_document_supported: bool,
    /// `scopes_supported`, if given.
    pub scopes_supported: Option<Vec<String>>,
}

impl ServerMetadata {
    const DOCUMENT: &'static str = "authorization server metadata";

    /// Reads the metadata `body` fetched for `issuer` (from one of
    /// [`server_metadata_urls`]).
    ///
    /// # Errors
    /// [`AuthError`]: too long, not JSON, an `issuer` that is not the one asked for (a
    /// trailing slash aside, when the issuer has no path), an endpoint missing or not
    /// secure, or no `S256` in `code_challenge_methods_supported`.
    pub fn parse(body: &[u8], issuer: &str, limits: &Limits) -> Result<Self, AuthError> {
        let document = Self::DOCUMENT;
        read_document(body, document, limits, |object| {
            let named = string(object, "issuer", document)?;
            let bare = |url: &str| {
                let trimmed = url.trim_end_matches('/');
                match trimmed.split_once("://") {
                    Some((_, rest)) if !rest.contains('/') => String::from(trimmed),
                    _ => String::from(url),
                }
            };
            if bare(&named) != bare(issuer) {
                return Err(AuthError::IssuerMismatch { issuer: named });
            }
            let required = |member: &'static str| {
                secure_url(object, member, document)?.ok_or(AuthError::Invalid { document, member })
            };
            let authorization_endpoint = required("authorization_endpoint")?;
            let token_endpoint = required("token_endpoint")?;
            let registration_endpoint = secure_url(object, "registration_endpoint", document)?;
            let methods = opt_strings(object, "code_challenge_methods_supported", document)?;
            if !methods.is_some_and(|m| m.iter().any(|m| m == "S256")) {
                return Err(AuthError::NoPkce);
            }
            let cimd = "client_id_metadata_document_supported";
            let client_id_metadata_document_supported = match object.get(cimd) {
                None => false,
                Some(v) if v.is_null() => false,
                Some(v) => v.as_bool().ok_or(AuthError::Invalid {
                    document,
                    member: cimd,
                })?,
            };
            Ok(ServerMetadata {
                issuer: named,
                authorization_endpoint,
                token_endpoint,
                registration_endpoint,
                client_id_metadata_document_supported,
                scopes_supported: opt_strings(object, "scopes_supported", document)?,
            })
        })
    }
}

/// The scope to ask for, as the spec's scope selection says: the challenge's `scope` if the
/// server sent one (authoritative for the request it refused), else every scope in the
/// resource's `scopes_supported`, else none (the `scope` parameter is then left out).
pub fn scope_to_request(
    challenge: Option<&Challenge>,
    resource: &ResourceMetadata,
) -> Option<String> {
    if let Some(scope) = challenge.and_then(|c| c.scope.clone()) {
        return Some(scope);
    }
    resource
        .scopes_supported
        .as_ref()
        .filter(|s| !s.is_empty())
        .map(|s| s.join(" "))
}

// ---- registration -------------------------------------------------------------------------

/// The body of a dynamic client registration request (RFC 7591), `application/json`: a
/// public client (`token_endpoint_auth_method` `none`) of the authorization code grant with
/// refresh tokens, named `client_name`, redirected to `redirect_uris`.
pub fn registration_request(client_name: &str, redirect_uris: &[&str]) -> Vec<u8> {
    let mut out = Vec::new();
    let mut object = ObjectWriter::open(&mut out);
    object.string("client_name", client_name);
    object.key("redirect_uris");
    write_array(object.out(), redirect_uris, |uri, out| {
        write_string(out, uri)
    });
    object.raw("grant_types", r#"["authorization_code","refresh_token"]"#);
    object.raw("response_types", r#"["code"]"#);
    object.string("token_endpoint_auth_method", "none");
    object.close();
    out
}

/// How a client proves itself at the token endpoint: its `token_endpoint_auth_method`
/// (RFC 7591, section 2).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum TokenAuth {
    /// `none`: a public client, which sends its `client_id` and nothing else.
    None,
    /// `client_secret_post`: the secret in the form body, as `client_secret`.
    SecretPost,
    /// `client_secret_basic`: the client id and secret in an `Authorization: Basic` header
    /// (RFC 6749, section 2.3.1), which every authorization server that issues secrets must
    /// take.
    SecretBasic,
}

impl TokenAuth {
    /// The method as RFC 7591 names it.
    pub fn as_str(self) -> &'static str {
        match self {
            TokenAuth::None => "none",
            TokenAuth::SecretPost => "client_secret_post",
            TokenAuth::SecretBasic => "client_secret_basic",
        }
    }
}

/// What a registration endpoint gave the client (RFC 7591, section 3.2.1).
#[derive(Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Registration {
    /// `client_id`.
    pub client_id: String,
    /// `client_secret`, if the server made the client a confidential one; sent with
    /// [`TokenRequest::client_secret`], as `token_auth` says.
    pub client_secret: Option<String>,
    /// How the token endpoint takes the client: the `token_endpoint_auth_method` the
    /// server registered, which may not be the `none` asked for. Where the server names
    /// none, `client_secret_basic` if it gave a secret (RFC 7591's default) and `none` if
    /// not. Never a secret-sending method without `client_secret`.
    pub token_auth: TokenAuth,
}

impl fmt::Debug for Registration {
    /// The secret is not printed.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Registration")
            .field("client_id", &self.client_id)
            .field("client_secret", &self.client_secret.as_ref().map(|_| "…"))
            .field("token_auth", &self.token_auth)
            .finish()
    }
}

impl Registration {
    const DOCUMENT: &'static str = "client registration";

    /// Reads a registration endpoint's answer: the registration, or its error
    /// (`{"error", "error_description"}`) as [`AuthError::Refused`].
    ///
    /// # Errors
    /// [`AuthError`]: too long, not JSON, refused, no `client_id`, a
    /// `token_endpoint_auth_method` this client does not have
    /// ([`AuthError::UnsupportedClientAuth`]), or one that sends a secret without a
    /// `client_secret`.
    pub fn parse(body: &[u8], limits: &Limits) -> Result<Self, AuthError> {
        let document = Self::DOCUMENT;
        read_document(body, document, limits, |object| {
            refusal(object, document)?;
            let client_secret = opt_string(object, "client_secret", document)?;
            let member = "token_endpoint_auth_method";
            let token_auth = match opt_string(object, member, document)?.as_deref() {
                Some("none") => TokenAuth::None,
                Some("client_secret_post") => TokenAuth::SecretPost,
                Some("client_secret_basic") => TokenAuth::SecretBasic,
                Some(other) => return Err(AuthError::UnsupportedClientAuth(String::from(other))),
                None if client_secret.is_some() => TokenAuth::SecretBasic,
                None => TokenAuth::None,
            };
            if token_auth != TokenAuth::None && client_secret.is_none() {
                let member = "client_secret";
                return Err(AuthError::Invalid { document, member });
            }
            Ok(Registration {
                client_id: string(object, "client_id", document)?,
                client_secret,
                token_auth,
            })
        })
    }
}

/// An OAuth error document (`{"error": ...}`) as [`AuthError::Refused`].
fn refusal(object: Object<'_>, document: &'static str) -> Result<(), AuthError> {
    match opt_string(object, "error", document)? {
        Some(error) => Err(AuthError::Refused {
            error,
            description: opt_string(object, "error_description", document)?,
        }),
        None => Ok(()),
    }
}

// ---- the authorization code ---------------------------------------------------------------

/// A PKCE verifier and its `S256` challenge (RFC 7636).
#[derive(Clone, PartialEq, Eq)]
pub struct Pkce {
    verifier: String,
    challenge: String,
}

impl fmt::Debug for Pkce {
    /// The verifier is not printed.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Pkce")
            .field("challenge", &self.challenge)
            .finish_non_exhaustive()
    }
}

impl Pkce {
    /// The verifier written from `random` (32 bytes from a cryptographic source: 43
    /// characters of base64url, RFC 7636's recommendation), and its challenge,
    /// `BASE64URL(SHA256(verifier))`.
    ///
    /// ```
    /// use mcp_sansio::auth::Pkce;
    /// // RFC 7636, appendix B.
    /// let pkce = Pkce::from_random(&[
    ///     116, 24, 223, 180, 151, 153, 224, 37, 79, 250, 96, 125, 216, 173, 187, 186, 22,
    ///     212, 37, 77, 105, 214, 191, 240, 91, 88, 5, 88, 83, 132, 141, 121,
    /// ]);
    /// assert_eq!(pkce.verifier(), "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk");
    /// assert_eq!(pkce.challenge(), "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM");
    /// ```
    pub fn from_random(random: &[u8; 32]) -> Self {
        let mut verifier = String::with_capacity(43);
        base64url(random, &mut verifier);
        let mut challenge = String::with_capacity(43);
        base64url(&Sha256::digest(verifier.as_bytes()), &mut challenge);
        Pkce {
            verifier,
            challenge,
        }
    }

    /// The verifier, kept by the application until the token request.
    pub fn verifier(&self) -> &str {
        &self.verifier
    }

    /// The challenge, sent in the authorization request.
    pub fn challenge(&self) -> &str {
        &self.challenge
    }
}

/// Appends `value` percent-encoded for a query or form (every byte but RFC 3986's
/// unreserved characters).
fn percent_encode(value: &str, out: &mut String) {
    const HEX: &[u8; 16] = b"0123456789ABCDEF";
    for b in value.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
            out.push(char::from(b));
        } else {
            out.push('%');
            out.push(char::from(
                HEX.get(usize::from(b >> 4)).copied().unwrap_or(b'0'),
            ));
            out.push(char::from(
                HEX.get(usize::from(b & 15)).copied().unwrap_or(b'0'),
            ));
        }
    }
}

/// `name=value` pairs, percent-encoded and joined by `&`, the absent ones left out.
fn form(pairs: &[(&str, Option<&str>)]) -> String {
    let mut out = String::new();
    for (name, value) in pairs {
        if let Some(value) = value {
            if !out.is_empty() {
                out.push('&');
            }
            percent_encode(name, &mut out);
            out.push('=');
            percent_encode(value, &mut out);
        }
    }
    out
}

/// What the user's browser is sent to the authorization endpoint with.
#[derive(Clone, Copy, Debug)]
pub struct AuthorizationRequest<'a> {
    /// The client id.
    pub client_id: &'a str,
    /// Where the authorization server sends the browser back (registered for the client).
    pub redirect_uri: &'a str,
    /// The scope to ask for ([`scope_to_request`]), or none.
    pub scope: Option<&'a str>,
    /// A random value the redirect must carry back ([`read_redirect`] checks it).
    pub state: &'a str,
    /// The resource the token is for ([`ResourceMetadata::resource`]).
    pub resource: &'a str,
}

impl AuthorizationRequest<'_> {
    /// The URL to open: `server`'s authorization endpoint with `response_type=code`, the
    /// PKCE challenge (`S256`), the client, the redirect, the scope, the state and the
    /// resource, each percent-encoded.
    pub fn url(&self, server: &ServerMetadata, pkce: &Pkce) -> String {
        let endpoint = &server.authorization_endpoint;
        let query = form(&[
            ("response_type", Some("code")),
            ("client_id", Some(self.client_id)),
            ("redirect_uri", Some(self.redirect_uri)),
            ("scope", self.scope),
            ("state", Some(self.state)),
            ("code_challenge", Some(pkce.challenge())),
            ("code_challenge_method", Some("S256")),
            ("resource", Some(self.resource)),
        ]);
        let joiner = if endpoint.contains('?') { '&' } else { '?' };
        alloc::format!("{endpoint}{joiner}{query}")
    }
}

/// Percent-decodes a query value (`+` as a space); `None` if it is not UTF-8 once decoded.
fn percent_decode(value: &str) -> Option<String> {
    let mut out = Vec::with_capacity(value.len());
    let mut bytes = value.bytes();
    while let Some(b) = bytes.next() {
        match b {
            b'+' => out.push(b' '),
            b'%' => {
                let hex = |b: Option<u8>| char::from(b?).to_digit(16);
                let (hi, lo) = (hex(bytes.next())?, hex(bytes.next())?);
                // Two hex digits make at most 255.
                out.push(u8::try_from(hi * 16 + lo).ok()?);
            }
            b => out.push(b),
        }
    }
    String::from_utf8(out).ok()
}

/// The authorization code in the URL the browser was sent back to (or its query alone),
/// after checking that it answers the request made with `state` by `server`.
///
/// # Errors
/// - [`AuthError::StateMismatch`] when its `state` is missing or another: the redirect is
///   not used, as the spec says.
/// - [`AuthError::IssuerMismatch`] when it carries an `iss` (RFC 9207) that is not
///   `server`'s.
/// - [`AuthError::Refused`] when it carries an `error` (`access_denied`, ...).
/// - [`AuthError::NoCode`] when it carries neither.
pub fn read_redirect(
    redirect: &str,
    state: &str,
    server: &ServerMetadata,
) -> Result<String, AuthError> {
    let query = redirect.split('#').next().unwrap_or_default();
    let query = query.split_once('?').map_or(query, |(_, q)| q);
    let mut found: [Option<String>; 5] = Default::default();
    let names = ["state", "iss", "error", "error_description", "code"];
    for pair in query.split('&') {
        let (name, value) = pair.split_once('=').unwrap_or((pair, ""));
        let Some(at) = names.iter().position(|n| *n == name) else {
            continue;
        };
        if let Some(slot) = found.get_mut(at).filter(|s| s.is_none()) {
            *slot = percent_decode(value);
        }
    }
    let [got_state, iss, error, description, code] = found;
    if got_state.as_deref() != Some(state) {
        return Err(AuthError::StateMismatch);
    }
    if let Some(iss) = iss.filter(|iss| *iss != server.issuer) {
        return Err(AuthError::IssuerMismatch { issuer: iss });
    }
    if let Some(error) = error {
        return Err(AuthError::Refused { error, description });
    }
    code.filter(|c| !c.is_empty()).ok_or(AuthError::NoCode)
}

// ---- the token ----------------------------------------------------------------------------

/// A request to the token endpoint: its body, `application/x-www-form-urlencoded`, from
/// [`body`](Self::body), and for a client that authenticates with `client_secret_basic`
/// its `Authorization` header, from [`authorization`](Self::authorization). Each carries
/// the `resource` (RFC 8707), as the spec requires.
#[derive(Clone)]
pub struct TokenRequest<'a> {
    grant: Grant<'a>,
    client_id: &'a str,
    client_secret: Option<&'a str>,
    token_auth: TokenAuth,
    resource: &'a str,
}

impl fmt::Debug for TokenRequest<'_> {
    /// The code, the verifier, the refresh token and the secret are not printed.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let grant = match self.grant {
            Grant::Code { .. } => "authorization_code",
            Grant::Refresh { .. } => "refresh_token",
        };
        f.debug_struct("TokenRequest")
            .field("grant", &grant)
            .field("client_id", &self.client_id)
            .field("token_auth", &self.token_auth)
            .field("resource", &self.resource)
            .finish_non_exhaustive()
    }
}

#[derive(Clone)]
enum Grant<'a> {
    Code {
        code: &'a str,
        redirect_uri: &'a str,
        verifier: &'a str,
    },
    Refresh {
        token: &'a str,
        scope: Option<&'a str>,
    },
}

impl<'a> TokenRequest<'a> {
    /// The authorization code `code` ([`read_redirect`]) exchanged for a token, with the
    /// PKCE verifier and the redirect URI the authorization request used.
    pub fn authorization_code(
        code: &'a str,
        redirect_uri: &'a str,
        pkce: &'a Pkce,
        client_id: &'a str,
        resource: &'a str,
    ) -> Self {
        TokenRequest {
            grant: Grant::Code {
                code,
                redirect_uri,
                verifier: pkce.verifier(),
            },
            client_id,
            client_secret: None,
            token_auth: TokenAuth::None,
            resource,
        }
    }

    /// A refresh token exchanged for a new token, for `scope` if given (no more than the
    /// first token had).
    pub fn refresh(
        refresh_token: &'a str,
        scope: Option<&'a str>,
        client_id: &'a str,
        resource: &'a str,
    ) -> Self {
        TokenRequest {
            grant: Grant::Refresh {
                token: refresh_token,
                scope,
            },
            client_id,
            client_secret: None,
            token_auth: TokenAuth::None,
            resource,
        }
    }

    /// The client's secret, for a confidential client, sent as `token_auth` says
    /// ([`Registration::token_auth`]): in the body, in the `Authorization` header, or, for
    /// [`TokenAuth::None`], not at all.
    #[must_use]
    pub fn client_secret(mut self, secret: Option<&'a str>, token_auth: TokenAuth) -> Self {
        self.client_secret = secret;
        self.token_auth = token_auth;
        self
    }

    /// The secret, where `token_auth` is the way it is sent.
    fn secret_sent(&self, token_auth: TokenAuth) -> Option<&'a str> {
        self.client_secret.filter(|_| self.token_auth == token_auth)
    }

    /// The form body to POST. It names the `client_id` whatever the client authenticates
    /// with, as some servers look the client up by it before reading the header.
    pub fn body(&self) -> String {
        let client = [
            ("client_id", Some(self.client_id)),
            ("client_secret", self.secret_sent(TokenAuth::SecretPost)),
            ("resource", Some(self.resource)),
        ];
        let mut pairs: Vec<(&str, Option<&str>)> = match self.grant {
            Grant::Code {
                code,
                redirect_uri,
                verifier,
            } => alloc::vec![
                ("grant_type", Some("authorization_code")),
                ("code", Some(code)),
                ("redirect_uri", Some(redirect_uri)),
                ("code_verifier", Some(verifier)),
            ],
            Grant::Refresh { token, scope } => alloc::vec![
                ("grant_type", Some("refresh_token")),
                ("refresh_token", Some(token)),
                ("scope", scope),
            ],
        };
        pairs.extend(client);
        form(&pairs)
    }

    /// The `Authorization` header's value for a client that authenticates with
    /// `client_secret_basic`: `Basic` and the base64 of the client id and secret, each
    /// form-encoded first and joined by a colon (RFC 6749, section 2.3.1). `None` for any
    /// other client.
    pub fn authorization(&self) -> Option<String> {
        let secret = self.secret_sent(TokenAuth::SecretBasic)?;
        let mut pair = String::new();
        percent_encode(self.client_id, &mut pair);
        pair.push(':');
        percent_encode(secret, &mut pair);
        let mut value = String::from("Basic ");
        base64(pair.as_bytes(), &mut value);
        Some(value)
    }
}

/// An access token from a token endpoint (OAuth 2.1, section 3.2.3).
#[derive(Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Token {
    /// `access_token`: visible ASCII, ready for a header.
    pub access_token: String,
    /// `expires_in`, in seconds, if given.
    pub expires_in: Option<u64>,
    /// `refresh_token`, if given.
    pub refresh_token: Option<String>,
    /// `scope`, if given (the scopes granted, when not those asked for).
    pub scope: Option<String>,
}

impl fmt::Debug for Token {
    /// The tokens are not printed.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Token")
            .field("expires_in", &self.expires_in)
            .field("refresh_token", &self.refresh_token.as_ref().map(|_| "…"))
            .field("scope", &self.scope)
            .finish_non_exhaustive()
    }
}

impl Token {
    const DOCUMENT: &'static str = "token response";

    /// Reads a token endpoint's answer: the token, or its error as [`AuthError::Refused`].
    ///
    /// # Errors
    /// [`AuthError`]: too long, not JSON, refused, no `access_token`, a `token_type` other
    /// than `Bearer` (any case) or a token with bytes a header cannot carry
    /// ([`AuthError::NotBearer`]), or an `expires_in` that is not a whole number of seconds.
    pub fn parse(body: &[u8], limits: &Limits) -> Result<Self, AuthError> {
        let document = Self::DOCUMENT;
        read_document(body, document, limits, |object| {
            refusal(object, document)?;
            let access_token = string(object, "access_token", document)?;
            let kind = string(object, "token_type", document)?;
            if !kind.eq_ignore_ascii_case("bearer") {
                return Err(AuthError::NotBearer(kind));
            }
            let bearer = Token::bearer(&access_token)?;
            let member = "expires_in";
            let expires_in = match object.get(member).filter(|v| !v.is_null()) {
                None => None,
                Some(value) => Some(
                    value
                        .text()
                        .parse::<u64>()
                        .map_err(|_| AuthError::Invalid { document, member })?,
                ),
            };
            Ok(Token {
                expires_in,
                refresh_token: opt_string(object, "refresh_token", document)?,
                scope: opt_string(object, "scope", document)?,
                ..bearer
            })
        })
    }

    /// A bearer token the application holds already (from its configuration, or its own
    /// OAuth client), to send with
    /// [`HttpSession::set_authorization`](crate::HttpSession::set_authorization).
    ///
    /// # Errors
    /// [`AuthError::NotBearer`] when `access_token` is empty or holds bytes other than
    /// visible ASCII, which no header can carry.
    pub fn bearer(access_token: &str) -> Result<Self, AuthError> {
        if access_token.is_empty() || !access_token.bytes().all(|b| b.is_ascii_graphic()) {
            return Err(AuthError::NotBearer(String::from("a token of other bytes")));
        }
        Ok(Token {
            access_token: String::from(access_token),
            expires_in: None,
            refresh_token: None,
            scope: None,
        })
    }

    /// The `Authorization` header's value: `Bearer ` and the token.
    pub fn header_value(&self) -> String {
        alloc::format!("Bearer {}", self.access_token)
    }
}
