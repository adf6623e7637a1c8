//! OAuth for a server that answers 401: the core's [`auth`](mcp_sansio::auth) steps, with
//! the fetching done here, over the same HTTP/1.1 code as the session's requests.
//!
//! [`Authorizer::authorize`] runs the whole flow the MCP spec describes: discovery (the
//! protected resource metadata, then the authorization server's), a client id (the
//! application's, or dynamic registration), PKCE and `state` from the operating system's
//! random source, the user's browser (the application's part: it opens the URL and hands
//! back where the browser was sent), and the token, bound to the server with RFC 8707's
//! `resource`. Each step is also public, for an application that keeps a client id, a
//! refresh token or the metadata between runs.
//!
//! Every fetch is bounded: one reply head by [`Limits::reply_head_bytes`], one document by
//! [`Limits::frame_bytes`], and each exchange by [`Limits::operation_timeout`]. Redirects
//! are not followed (a metadata URL that redirects counts as not found), and no header of
//! the application's goes to these URLs.
//!
//! ```no_run
//! use mcp_sansio::{Allowlist, Config, Error, HttpError};
//! use mcp_sansio_http::oauth::{Authorizer, ClientIdentity};
//! use mcp_sansio_http::{HttpClient, HttpClientError};
//!
//! let url = "https://mcp.example.com/mcp";
//! let config = || Config::new(["word_count"].into_iter().collect::<Allowlist>());
//! let mut server = HttpClient::new(url, config())?;
//! if let Err(HttpClientError::Mcp(Error::Http(HttpError::Unauthorized(challenge)))) =
//!     server.connect()
//! {
//!     let identity = ClientIdentity {
//!         client_id: None, // registers itself
//!         client_secret: None,
//!         metadata_document: None,
//!         client_name: "my host",
//!         redirect_uri: "http://127.0.0.1:8765/callback", // where the host listens
//!     };
//!     let authorized = Authorizer::new(&config().limits).authorize(
//!         url,
//!         challenge.as_ref(),
//!         identity,
//!         |open| {
//!             // Show `open` to the user; return the URL the browser came back to.
//!             # let _ = open;
//!             Ok(String::from("http://127.0.0.1:8765/callback?code=...&state=..."))
//!         },
//!     )?;
//!     server = HttpClient::new(url, config())?;
//!     server.session().set_authorization(Some(&authorized.token));
//!     server.connect()?;
//! }
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::fmt;

use mcp_sansio::auth::{
    read_redirect, registration_request, resource_metadata_urls, scope_to_request,
    server_metadata_urls, AuthError, AuthorizationRequest, Challenge, Pkce, Registration,
    ResourceMetadata, ServerMetadata, Token, TokenAuth, TokenRequest,
};
use mcp_sansio::Limits;

use crate::wire::{self, Fields};
use crate::Seen;

/// Why authorization did not end with a token.
#[derive(Debug)]
#[non_exhaustive]
pub enum AuthorizeError {
    /// A step's document or decision failed; see [`AuthError`] (most are the servers'
    /// doing).
    Auth(AuthError),
    /// A URL could not be reached, or its reply was not HTTP (the cause, as text).
    Unreachable(String),
    /// No protected resource metadata, or no authorization server metadata, at any of the
    /// URLs the spec names (each answered with a status other than 200, listed).
    NotFound(Vec<(String, u16)>),
    /// A reply's body is longer than [`Limits::frame_bytes`]: not read further.
    TooLong {
        /// The URL.
        url: String,
    },
    /// An endpoint answered with a status and no OAuth error in its body.
    Status {
        /// The URL.
        url: String,
        /// Its status.
        status: u16,
    },
    /// The authorization server takes no client it does not know (no
    /// `registration_endpoint`), and the application gave no client id.
    NoClientId,
    /// The application's browser step failed, in its own words.
    Browser(String),
    /// The operating system's random source failed.
    Random(String),
}

impl fmt::Display for AuthorizeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AuthorizeError::Auth(e) => e.fmt(f),
            AuthorizeError::Unreachable(why) => write!(f, "could not fetch: {why}"),
            AuthorizeError::NotFound(tried) => {
                f.write_str("no metadata was found at")?;
                for (i, (url, status)) in tried.iter().enumerate() {
                    let comma = if i == 0 { " " } else { ", " };
                    write!(f, "{comma}{url} ({status})")?;
                }
                Ok(())
            }
            AuthorizeError::TooLong { url } => {
                write!(f, "{url}'s reply is longer than the frame limit")
            }
            AuthorizeError::Status { url, status } => {
                write!(f, "{url} answered {status} without an OAuth error")
            }
            AuthorizeError::NoClientId => f.write_str(
                "the authorization server registers no clients and no client id was given",
            ),
            AuthorizeError::Browser(why) => write!(f, "the browser step failed: {why}"),
            AuthorizeError::Random(why) => write!(f, "no random bytes: {why}"),
        }
    }
}

impl std::error::Error for AuthorizeError {}

impl From<AuthError> for AuthorizeError {
    fn from(e: AuthError) -> Self {
        AuthorizeError::Auth(e)
    }
}

/// A reply to one fetch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fetched {
    /// The status.
    pub status: u16,
    /// `Location`, if given (a redirect's target).
    pub location: Option<String>,
    /// The body, at most [`Limits::frame_bytes`] of it.
    pub body: Vec<u8>,
}

/// Both servers' metadata, found for one MCP server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Discovered {
    /// The MCP server's protected resource metadata.
    pub resource: ResourceMetadata,
    /// Its first authorization server's metadata.
    pub server: ServerMetadata,
}

/// Who the client is to the authorization server, tried in the spec's order: a client id
/// the application has, then its client metadata document where the server takes one, then
/// dynamic registration.
#[derive(Debug, Clone, Copy)]
pub struct ClientIdentity<'a> {
    /// A client id the application has for this authorization server (pre-registered).
    pub client_id: Option<&'a str>,
    /// The secret of that client, if the server registered it as a confidential one, and
    /// how the server takes it ([`TokenAuth::SecretBasic`] where the application does not
    /// know: every server that issues secrets must take that). Not used without
    /// `client_id`.
    pub client_secret: Option<(&'a str, TokenAuth)>,
    /// The `https` URL of the application's client metadata document, used as the client id
    /// where the authorization server says it takes one
    /// (`client_id_metadata_document_supported`).
    pub metadata_document: Option<&'a str>,
    /// The name a registration gives the client, shown to the user.
    pub client_name: &'a str,
    /// Where the browser comes back: a loopback URL the application listens on, or its own
    /// `https` one.
    pub redirect_uri: &'a str,
}

/// What authorization ended with.
#[derive(Clone)]
pub struct Authorized {
    /// The token: hand it to
    /// [`HttpSession::set_authorization`](mcp_sansio::HttpSession::set_authorization).
    pub token: Token,
    /// The client id used, to keep for a refresh.
    pub client_id: String,
    /// The client secret a registration gave, or the application's, if any.
    pub client_secret: Option<String>,
    /// How the token endpoint takes the client, to send the secret the same way in a
    /// refresh ([`TokenRequest::client_secret`]).
    pub token_auth: TokenAuth,
    /// The metadata found, to keep for a refresh.
    pub discovered: Discovered,
}

impl fmt::Debug for Authorized {
    /// The token and the secret are not printed.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Authorized")
            .field("token", &self.token)
            .field("client_id", &self.client_id)
            .field("client_secret", &self.client_secret.as_ref().map(|_| "…"))
            .field("token_auth", &self.token_auth)
            .field("discovered", &self.discovered)
            .finish()
    }
}

/// Fetches OAuth's documents and runs the flow; see the [module](self).
#[derive(Debug, Clone)]
pub struct Authorizer {
    limits: Limits,
}

impl Authorizer {
    /// An authorizer bounded by `limits` (see the [module](self)).
    pub fn new(limits: &Limits) -> Self {
        Authorizer { limits: *limits }
    }

    /// `method` to `url`, with `body` of its content type if given, and `Accept:
    /// application/json`.
    ///
    /// # Errors
    /// [`AuthorizeError::Unreachable`] when there is no reply, or the URL cannot be reached
    /// by this build; [`AuthorizeError::TooLong`] for a body past the frame limit.
    pub fn fetch(
        &self,
        method: &str,
        url: &str,
        body: Option<(&str, &[u8])>,
    ) -> Result<Fetched, AuthorizeError> {
        self.send(method, url, body, None)
    }

    /// [`fetch`](Self::fetch), with an `Authorization` header if given.
    fn send(
        &self,
        method: &str,
        url: &str,
        body: Option<(&str, &[u8])>,
        authorization: Option<&str>,
    ) -> Result<Fetched, AuthorizeError> {
        let target = wire::Target::new(url, self.limits.reply_head_bytes, 0)
            .map_err(|e| AuthorizeError::Unreachable(e.to_string()))?;
        let mut headers = vec![("Accept", "application/json")];
        if let Some((content_type, _)) = body {
            headers.push(("Content-Type", content_type));
        }
        if let Some(value) = authorization {
            headers.push(("Authorization", value));
        }
        let limit = self.limits.frame_bytes;
        let mut head: Option<(u16, Fields)> = None;
        let mut out = Vec::new();
        let mut failed = None;
        let mut too_long = false;
        target.exchange(
            method,
            None,
            headers.into_iter(),
            body.map(|(_, b)| b),
            self.limits.operation_timeout,
            &|_| {},
            &mut |seen| match seen {
                Seen::Head { status, fields } => {
                    head = Some((status, fields.clone()));
                    true
                }
                Seen::Body(bytes) => {
                    too_long = out.len().saturating_add(bytes.len()) > limit;
                    if !too_long {
                        out.extend_from_slice(bytes);
                    }
                    !too_long
                }
                Seen::End => true,
                Seen::Broken { why, .. } => {
                    failed = Some(why);
                    false
                }
            },
        );
        if too_long {
            return Err(AuthorizeError::TooLong {
                url: url.to_owned(),
            });
        }
        if let Some(why) = failed {
            return Err(AuthorizeError::Unreachable(why));
        }
        let (status, fields) =
            head.ok_or_else(|| AuthorizeError::Unreachable(format!("{url} gave no reply")))?;
        Ok(Fetched {
            status,
            location: fields.location,
            body: out,
        })
    }

    /// The first of `urls` that answers 200, its body read by `parse`.
    fn first_found<T>(
        &self,
        urls: Vec<String>,
        parse: impl Fn(&[u8]) -> Result<T, AuthError>,
    ) -> Result<T, AuthorizeError> {
        let mut tried = Vec::new();
        for url in urls {
            let fetched = self.fetch("GET", &url, None)?;
            if fetched.status == 200 {
                return Ok(parse(&fetched.body)?);
            }
            tried.push((url, fetched.status));
        }
        Err(AuthorizeError::NotFound(tried))
    }

    /// Both servers' metadata for the MCP server at `server_url`, which refused a request
    /// with `challenge` (if it sent one): the protected resource metadata from the first
    /// URL that has it, then its first authorization server's, each in the spec's order.
    ///
    /// # Errors
    /// [`AuthorizeError`]: a URL unreachable, no metadata at any URL, or metadata refused.
    pub fn discover(
        &self,
        server_url: &str,
        challenge: Option<&Challenge>,
    ) -> Result<Discovered, AuthorizeError> {
        let urls = resource_metadata_urls(server_url, challenge)?;
        let resource = self.first_found(urls, |body| {
            ResourceMetadata::parse(body, server_url, &self.limits)
        })?;
        let issuer = resource
            .authorization_servers
            .first()
            .cloned()
            .unwrap_or_default();
        let server = self.first_found(server_metadata_urls(&issuer)?, |body| {
            ServerMetadata::parse(body, &issuer, &self.limits)
        })?;
        Ok(Discovered { resource, server })
    }

    /// `body` POSTed to `url` as `content_type`, with an `Authorization` header if given,
    /// its answer read by `parse`; an error status with no OAuth error in its body is
    /// [`AuthorizeError::Status`].
    fn post<T>(
        &self,
        url: &str,
        content_type: &str,
        body: &[u8],
        authorization: Option<&str>,
        parse: impl Fn(&[u8], &Limits) -> Result<T, AuthError>,
    ) -> Result<T, AuthorizeError> {
        let fetched = self.send("POST", url, Some((content_type, body)), authorization)?;
        let parsed = parse(&fetched.body, &self.limits);
        if (200..300).contains(&fetched.status) {
            return Ok(parsed?);
        }
        match parsed {
            Err(refused @ AuthError::Refused { .. }) => Err(refused.into()),
            _ => Err(AuthorizeError::Status {
                url: url.to_owned(),
                status: fetched.status,
            }),
        }
    }

    /// Registers a client (RFC 7591) at `server`'s registration endpoint.
    ///
    /// # Errors
    /// [`AuthorizeError::NoClientId`] when `server` has no registration endpoint; else as
    /// the fetch and the answer go.
    pub fn register(
        &self,
        server: &ServerMetadata,
        client_name: &str,
        redirect_uri: &str,
    ) -> Result<Registration, AuthorizeError> {
        let endpoint = server
            .registration_endpoint
            .as_deref()
            .ok_or(AuthorizeError::NoClientId)?;
        let body = registration_request(client_name, &[redirect_uri]);
        self.post(
            endpoint,
            "application/json",
            &body,
            None,
            Registration::parse,
        )
    }

    /// `request` at `server`'s token endpoint: a code exchanged, or a token refreshed,
    /// the client's secret sent as the request says ([`TokenRequest::client_secret`]).
    ///
    /// # Errors
    /// As the fetch and the answer go: [`AuthError::Refused`] with the server's OAuth error.
    pub fn token(
        &self,
        server: &ServerMetadata,
        request: &TokenRequest<'_>,
    ) -> Result<Token, AuthorizeError> {
        let body = request.body();
        self.post(
            &server.token_endpoint,
            "application/x-www-form-urlencoded",
            body.as_bytes(),
            request.authorization().as_deref(),
            Token::parse,
        )
    }

    /// The whole flow for the MCP server at `server_url`, which refused a request with
    /// `challenge`: discovery, a client id, PKCE and state, `browser` (given the URL to
    /// open, it returns the URL the browser was sent back to, or why not), and the token.
    ///
    /// # Errors
    /// [`AuthorizeError`] from whichever step failed; a redirect whose `state` is not the
    /// one sent is [`AuthError::StateMismatch`], and is not used.
    pub fn authorize(
        &self,
        server_url: &str,
        challenge: Option<&Challenge>,
        client: ClientIdentity<'_>,
        browser: impl FnOnce(&str) -> Result<String, String>,
    ) -> Result<Authorized, AuthorizeError> {
        let discovered = self.discover(server_url, challenge)?;
        let document = client
            .metadata_document
            .filter(|_| discovered.server.client_id_metadata_document_supported);
        let (client_id, client_secret, token_auth) = match (client.client_id, document) {
            (Some(id), _) => match client.client_secret {
                Some((secret, token_auth)) => (id.to_owned(), Some(secret.to_owned()), token_auth),
                None => (id.to_owned(), None, TokenAuth::None),
            },
            (None, Some(url)) => (metadata_document(url)?, None, TokenAuth::None),
            (None, None) => {
                let registration =
                    self.register(&discovered.server, client.client_name, client.redirect_uri)?;
                (
                    registration.client_id,
                    registration.client_secret,
                    registration.token_auth,
                )
            }
        };
        let (mut verifier, mut state) = ([0_u8; 32], [0_u8; 16]);
        for bytes in [&mut verifier[..], &mut state[..]] {
            getrandom::fill(bytes).map_err(|e| AuthorizeError::Random(e.to_string()))?;
        }
        let pkce = Pkce::from_random(&verifier);
        let state: String = state.iter().map(|b| format!("{b:02x}")).collect();
        let scope = scope_to_request(challenge, &discovered.resource);
        let resource = discovered.resource.resource.as_str();
        let url = AuthorizationRequest {
            client_id: &client_id,
            redirect_uri: client.redirect_uri,
            scope: scope.as_deref(),
            state: &state,
            resource,
        }
        .url(&discovered.server, &pkce);
        let back = browser(&url).map_err(AuthorizeError::Browser)?;
        let code = read_redirect(&back, &state, &discovered.server)?;
        let request = TokenRequest::authorization_code(
            &code,
            client.redirect_uri,
            &pkce,
            &client_id,
            resource,
        )
        .client_secret(client_secret.as_deref(), token_auth);
        let token = self.token(&discovered.server, &request)?;
        Ok(Authorized {
            token,
            client_id,
            client_secret,
            token_auth,
            discovered,
        })
    }
}

/// A client metadata document's URL as a client id: `https` with a path, as the spec says
/// such a client id MUST be.
fn metadata_document(url: &str) -> Result<String, AuthorizeError> {
    let path = url
        .strip_prefix("https://")
        .and_then(|rest| rest.split_once('/'))
        .map(|(_, path)| path);
    match path {
        Some(path) if !path.is_empty() && !url.contains('#') => Ok(url.to_owned()),
        _ => Err(AuthError::InvalidUrl(url.to_owned()).into()),
    }
}
