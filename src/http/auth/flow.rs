//! The whole flow as values a transport drives: each step says what to fetch, or which URL
//! the user's browser must open, and takes what came back. The transport only moves bytes
//! (and draws the random bytes); every decision, every document and every check is here,
//! once, for the blocking transport and the async one alike.
//!
//! [`authorize`], [`discover`] and [`token`] run the steps in order over a driver's `fetch`
//! (an async closure: a blocking driver's never waits, and its future is ready at the first
//! poll). The steps themselves are public too, for a driver that wants each in its hands,
//! as here:
//!
//! ```
//! use mcp_sansio::auth::{AuthorizeError, ClientIdentity, Discovering, Discovery, Fetch, Login};
//! use mcp_sansio::Limits;
//!
//! /// The transport's part: one request, its status and body (here, nobody answers).
//! fn send(request: &Fetch) -> Result<(u16, Vec<u8>), AuthorizeError> {
//!     Err(AuthorizeError::Unreachable(format!("{} {}: no network here", request.method, request.url)))
//! }
//!
//! fn authorize(server_url: &str) -> Result<String, AuthorizeError> {
//!     let limits = Limits::default();
//!     let mut discovery = Discovery::new(server_url, None, &limits)?;
//!     let discovered = loop {
//!         let (status, body) = send(&discovery.request())?;
//!         match discovery.answered(status, &body)? {
//!             Discovering::Next(next) => discovery = next,
//!             Discovering::Found(found) => break found,
//!         }
//!     };
//!     let identity = ClientIdentity {
//!         client_id: None,
//!         client_secret: None,
//!         metadata_document: None,
//!         client_name: "my host",
//!         redirect_uri: "http://127.0.0.1:8765/callback",
//!     };
//!     // Random bytes from the operating system, in a real application.
//!     let browsing = match Login::start(discovered, None, identity, &[7; 32], &[9; 16], &limits)? {
//!         Login::Browse(browsing) => browsing,
//!         Login::Register(registering) => {
//!             let (status, body) = send(registering.request())?;
//!             registering.answered(status, &body)?
//!         }
//!     };
//!     let back = format!("{}?code=...", browsing.url()); // the user's browser, really
//!     let exchanging = browsing.returned(&back)?;
//!     let (status, body) = send(exchanging.request())?;
//!     Ok(exchanging.answered(status, &body)?.token.access_token)
//! }
//!
//! assert!(matches!(
//!     authorize("http://127.0.0.1:1/mcp"),
//!     Err(AuthorizeError::Unreachable(why)) if why.starts_with("GET http://127.0.0.1:1/.well-known/")
//! ));
//! ```

use alloc::borrow::ToOwned;
use alloc::string::String;
use alloc::vec::{IntoIter, Vec};
use core::fmt;

use super::{
    read_redirect, registration_request, resource_metadata_urls, scope_to_request,
    server_metadata_urls, AuthError, AuthorizationRequest, Challenge, Pkce, Registration,
    ResourceMetadata, ServerMetadata, Token, TokenAuth, TokenRequest,
};
use crate::Limits;

/// One HTTP request a step needs sent, with `Accept: application/json`. Redirects are not
/// to be followed: their status is the answer.
#[derive(Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Fetch {
    /// `GET` or `POST`.
    pub method: &'static str,
    /// Where.
    pub url: String,
    /// For a `POST`: its content type and its bytes.
    pub body: Option<(&'static str, Vec<u8>)>,
    /// An `Authorization` header's value (a client secret, for `client_secret_basic`).
    pub authorization: Option<String>,
}

impl Fetch {
    /// `GET url`.
    pub fn get(url: &str) -> Fetch {
        Fetch {
            method: "GET",
            url: url.to_owned(),
            body: None,
            authorization: None,
        }
    }

    /// `POST url` with `body` as `content_type`, and an `Authorization` header if given.
    fn post(
        url: &str,
        content_type: &'static str,
        body: Vec<u8>,
        authorization: Option<String>,
    ) -> Fetch {
        Fetch {
            method: "POST",
            url: url.to_owned(),
            body: Some((content_type, body)),
            authorization,
        }
    }
}

impl fmt::Debug for Fetch {
    /// The body and the `Authorization` value are not printed: either may hold a secret.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Fetch")
            .field("method", &self.method)
            .field("url", &self.url)
            .field("body", &self.body.as_ref().map(|(kind, b)| (kind, b.len())))
            .field("authorization", &self.authorization.as_ref().map(|_| "…"))
            .finish()
    }
}

/// A reply to one [`Fetch`], as a transport read it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fetched {
    /// The status.
    pub status: u16,
    /// `Location`, if given (a redirect's target).
    pub location: Option<String>,
    /// The body, at most [`Limits::frame_bytes`] of it.
    pub body: Vec<u8>,
}

/// Why a transport's run of the flow ended without a token: a step's document or decision
/// ([`AuthError`]), or the transport's own part (reaching a URL, the browser, the random
/// bytes).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum AuthorizeError {
    /// A step's document or decision failed; see [`AuthError`] (most are the servers'
    /// doing).
    Auth(AuthError),
    /// A URL could not be reached, or its reply was not HTTP, or it took longer than
    /// [`Limits::operation_timeout`] (the cause, as text).
    Unreachable(String),
    /// A reply's body is longer than [`Limits::frame_bytes`]: not read further.
    TooLong {
        /// The URL.
        url: String,
    },
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
            AuthorizeError::TooLong { url } => {
                write!(f, "{url}'s reply is longer than the frame limit")
            }
            AuthorizeError::Browser(why) => write!(f, "the browser step failed: {why}"),
            AuthorizeError::Random(why) => write!(f, "no random bytes: {why}"),
        }
    }
}

impl core::error::Error for AuthorizeError {}

impl From<AuthError> for AuthorizeError {
    fn from(e: AuthError) -> Self {
        AuthorizeError::Auth(e)
    }
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
    /// [`HttpSession::set_authorization`](crate::HttpSession::set_authorization).
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

// ---- discovery ----------------------------------------------------------------------------

/// Discovery under way: the protected resource metadata from the first URL that has it,
/// then its first authorization server's, each URL in the spec's order. Send
/// [`request`](Self::request), and give [`answered`](Self::answered) what came back.
#[derive(Debug, Clone)]
pub struct Discovery {
    server_url: String,
    limits: Limits,
    /// The URL asked now, and those left to ask after it.
    url: String,
    rest: IntoIter<String>,
    /// The URLs that did not have it, with their status.
    tried: Vec<(String, u16)>,
    /// `Some` once the resource's metadata is read: the authorization server's is next.
    resource: Option<ResourceMetadata>,
}

/// Where discovery stands after an answer.
#[derive(Debug, Clone)]
pub enum Discovering {
    /// Not found yet: send this one's [`request`](Discovery::request).
    Next(Discovery),
    /// Both documents, read and checked.
    Found(Discovered),
}

impl Discovery {
    /// Discovery for the MCP server at `server_url`, which refused a request with
    /// `challenge` (if it sent one).
    ///
    /// # Errors
    /// As [`resource_metadata_urls`] goes: `server_url` or the challenge's URL unusable.
    pub fn new(
        server_url: &str,
        challenge: Option<&Challenge>,
        limits: &Limits,
    ) -> Result<Discovery, AuthError> {
        let (url, rest) = first(resource_metadata_urls(server_url, challenge)?)?;
        Ok(Discovery {
            server_url: server_url.to_owned(),
            limits: *limits,
            url,
            rest,
            tried: Vec::new(),
            resource: None,
        })
    }

    /// The request to send now: a `GET`.
    pub fn request(&self) -> Fetch {
        Fetch::get(&self.url)
    }

    /// What the [`request`](Self::request) got: a status other than 200 moves on to the
    /// next URL; a 200's body is read and checked.
    ///
    /// # Errors
    /// [`AuthError::NotFound`] once no URL is left; else as [`ResourceMetadata::parse`],
    /// [`server_metadata_urls`] and [`ServerMetadata::parse`] go.
    pub fn answered(mut self, status: u16, body: &[u8]) -> Result<Discovering, AuthError> {
        if status != 200 {
            let asked = core::mem::take(&mut self.url);
            self.tried.push((asked, status));
            return match self.rest.next() {
                Some(url) => {
                    self.url = url;
                    Ok(Discovering::Next(self))
                }
                None => Err(AuthError::NotFound(self.tried)),
            };
        }
        match self.resource {
            Some(resource) => {
                let issuer = resource
                    .authorization_servers
                    .first()
                    .map_or("", String::as_str);
                let server = ServerMetadata::parse(body, issuer, &self.limits)?;
                Ok(Discovering::Found(Discovered { resource, server }))
            }
            None => {
                let resource = ResourceMetadata::parse(body, &self.server_url, &self.limits)?;
                let issuer = resource
                    .authorization_servers
                    .first()
                    .map_or("", String::as_str);
                (self.url, self.rest) = first(server_metadata_urls(issuer)?)?;
                self.tried.clear();
                self.resource = Some(resource);
                Ok(Discovering::Next(self))
            }
        }
    }
}

/// The first of `urls`, and the rest.
fn first(urls: Vec<String>) -> Result<(String, IntoIter<String>), AuthError> {
    let mut urls = urls.into_iter();
    let url = urls.next().ok_or(AuthError::NotFound(Vec::new()))?;
    Ok((url, urls))
}

// ---- the client, the browser and the token ------------------------------------------------

/// What the flow does once discovery is done: register the client first, or go straight to
/// the browser.
#[derive(Debug, Clone)]
pub enum Login {
    /// Dynamic registration first (RFC 7591): the application gave no client id, and the
    /// server does not take its metadata document.
    Register(Registering),
    /// The user's browser.
    Browse(Browsing),
}

impl Login {
    /// The flow from `discovered` on, for a server that refused a request with `challenge`
    /// (its `scope`, if any, is the one asked for): the client id from `client`, in the
    /// spec's order, then PKCE from `verifier` and the `state` from `state`, both random
    /// bytes the transport draws.
    ///
    /// # Errors
    /// - [`AuthError::NoClientId`] when the application gave no client id and the server
    ///   neither takes a metadata document nor registers clients.
    /// - [`AuthError::InvalidUrl`] for a metadata document URL that is not `https` with a
    ///   path.
    pub fn start(
        discovered: Discovered,
        challenge: Option<&Challenge>,
        client: ClientIdentity<'_>,
        verifier: &[u8; 32],
        state: &[u8; 16],
        limits: &Limits,
    ) -> Result<Login, AuthError> {
        let document = client
            .metadata_document
            .filter(|_| discovered.server.client_id_metadata_document_supported);
        let plan = Plan {
            scope: scope_to_request(challenge, &discovered.resource),
            discovered,
            redirect_uri: client.redirect_uri.to_owned(),
            pkce: Pkce::from_random(verifier),
            state: state.iter().map(|b| alloc::format!("{b:02x}")).collect(),
            limits: *limits,
        };
        let (client_id, client_secret, token_auth) = match (client.client_id, document) {
            (Some(id), _) => match client.client_secret {
                Some((secret, token_auth)) => (id.to_owned(), Some(secret.to_owned()), token_auth),
                None => (id.to_owned(), None, TokenAuth::None),
            },
            (None, Some(url)) => (metadata_document(url)?, None, TokenAuth::None),
            (None, None) => {
                let endpoint = plan
                    .discovered
                    .server
                    .registration_endpoint
                    .as_deref()
                    .ok_or(AuthError::NoClientId)?;
                let body = registration_request(client.client_name, &[client.redirect_uri]);
                let request = Fetch::post(endpoint, "application/json", body, None);
                return Ok(Login::Register(Registering { plan, request }));
            }
        };
        Ok(Login::Browse(plan.browse(
            client_id,
            client_secret,
            token_auth,
        )))
    }
}

/// What the flow keeps from discovery to the token.
#[derive(Clone)]
struct Plan {
    discovered: Discovered,
    scope: Option<String>,
    redirect_uri: String,
    pkce: Pkce,
    state: String,
    limits: Limits,
}

impl fmt::Debug for Plan {
    /// The verifier and the state are not printed.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Plan")
            .field("discovered", &self.discovered)
            .field("scope", &self.scope)
            .field("redirect_uri", &self.redirect_uri)
            .finish_non_exhaustive()
    }
}

impl Plan {
    /// The browser's step, for the client now known.
    fn browse(
        self,
        client_id: String,
        client_secret: Option<String>,
        token_auth: TokenAuth,
    ) -> Browsing {
        let url = AuthorizationRequest {
            client_id: &client_id,
            redirect_uri: &self.redirect_uri,
            scope: self.scope.as_deref(),
            state: &self.state,
            resource: &self.discovered.resource.resource,
        }
        .url(&self.discovered.server, &self.pkce);
        Browsing {
            plan: self,
            client_id,
            client_secret,
            token_auth,
            url,
        }
    }
}

/// The client's registration under way: send [`request`](Self::request).
#[derive(Debug, Clone)]
pub struct Registering {
    plan: Plan,
    request: Fetch,
}

impl Registering {
    /// The request to send: the registration, `POST`ed to the registration endpoint.
    pub fn request(&self) -> &Fetch {
        &self.request
    }

    /// What the registration endpoint answered; the browser's step is next.
    ///
    /// # Errors
    /// As [`Registration::parse`] goes; an error status without an OAuth error in its body
    /// is [`AuthError::Status`].
    pub fn answered(self, status: u16, body: &[u8]) -> Result<Browsing, AuthError> {
        let registration = answer(&self.request, status, body, |body| {
            Registration::parse(body, &self.plan.limits)
        })?;
        Ok(self.plan.browse(
            registration.client_id,
            registration.client_secret,
            registration.token_auth,
        ))
    }
}

/// The user's browser: open [`url`](Self::url), and give [`returned`](Self::returned) the URL
/// it came back to.
#[derive(Clone)]
pub struct Browsing {
    plan: Plan,
    client_id: String,
    client_secret: Option<String>,
    token_auth: TokenAuth,
    url: String,
}

impl fmt::Debug for Browsing {
    /// The secret is not printed.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Browsing")
            .field("client_id", &self.client_id)
            .field("url", &self.url)
            .finish_non_exhaustive()
    }
}

impl Browsing {
    /// The authorization endpoint's URL to open, with the PKCE challenge, the client, the
    /// redirect, the scope, the state and the resource.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// The client id the flow goes on with (the application's, its document's URL, or the
    /// one a registration gave).
    pub fn client_id(&self) -> &str {
        &self.client_id
    }

    /// Where the browser was sent back to: its code is exchanged for the token next.
    ///
    /// # Errors
    /// As [`read_redirect`] goes: a `state` that is not the one sent
    /// ([`AuthError::StateMismatch`]; the redirect is not used), another issuer, the
    /// server's refusal, or no code.
    pub fn returned(self, redirect: &str) -> Result<Exchanging, AuthError> {
        let plan = self.plan;
        let code = read_redirect(redirect, &plan.state, &plan.discovered.server)?;
        let request = TokenRequest::authorization_code(
            &code,
            &plan.redirect_uri,
            &plan.pkce,
            &self.client_id,
            &plan.discovered.resource.resource,
        )
        .client_secret(self.client_secret.as_deref(), self.token_auth);
        let exchange = TokenExchange::new(&plan.discovered.server, &request, &plan.limits);
        Ok(Exchanging {
            exchange,
            authorized: Unfinished {
                client_id: self.client_id,
                client_secret: self.client_secret,
                token_auth: self.token_auth,
                discovered: plan.discovered,
            },
        })
    }
}

/// The code exchanged for the token: send [`request`](Self::request).
#[derive(Debug, Clone)]
pub struct Exchanging {
    exchange: TokenExchange,
    authorized: Unfinished,
}

/// [`Authorized`], but for its token.
#[derive(Clone)]
struct Unfinished {
    client_id: String,
    client_secret: Option<String>,
    token_auth: TokenAuth,
    discovered: Discovered,
}

impl fmt::Debug for Unfinished {
    /// The secret is not printed.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Unfinished")
            .field("client_id", &self.client_id)
            .finish_non_exhaustive()
    }
}

impl Exchanging {
    /// The request to send: the code, `POST`ed to the token endpoint.
    pub fn request(&self) -> &Fetch {
        self.exchange.request()
    }

    /// What the token endpoint answered: the flow's end.
    ///
    /// # Errors
    /// As [`TokenExchange::answered`] goes.
    pub fn answered(self, status: u16, body: &[u8]) -> Result<Authorized, AuthError> {
        let token = self.exchange.answered(status, body)?;
        let Unfinished {
            client_id,
            client_secret,
            token_auth,
            discovered,
        } = self.authorized;
        Ok(Authorized {
            token,
            client_id,
            client_secret,
            token_auth,
            discovered,
        })
    }
}

/// One request to a token endpoint, and the reading of its answer: the flow's last step, and
/// a refresh ([`TokenRequest::refresh`]).
#[derive(Debug, Clone)]
pub struct TokenExchange {
    request: Fetch,
    limits: Limits,
}

impl TokenExchange {
    /// `request` at `server`'s token endpoint, the client's secret sent as the request says
    /// ([`TokenRequest::client_secret`]).
    pub fn new(server: &ServerMetadata, request: &TokenRequest<'_>, limits: &Limits) -> Self {
        TokenExchange {
            request: Fetch::post(
                &server.token_endpoint,
                "application/x-www-form-urlencoded",
                request.body().into_bytes(),
                request.authorization(),
            ),
            limits: *limits,
        }
    }

    /// The request to send.
    pub fn request(&self) -> &Fetch {
        &self.request
    }

    /// What the token endpoint answered.
    ///
    /// # Errors
    /// As [`Token::parse`] goes: [`AuthError::Refused`] with the server's OAuth error; an
    /// error status without one is [`AuthError::Status`].
    pub fn answered(self, status: u16, body: &[u8]) -> Result<Token, AuthError> {
        answer(&self.request, status, body, |body| {
            Token::parse(body, &self.limits)
        })
    }
}

/// The answer to `request`, read by `parse`; an error status with no OAuth error in its
/// body is [`AuthError::Status`].
fn answer<T>(
    request: &Fetch,
    status: u16,
    body: &[u8],
    parse: impl FnOnce(&[u8]) -> Result<T, AuthError>,
) -> Result<T, AuthError> {
    let parsed = parse(body);
    if (200..300).contains(&status) {
        return parsed;
    }
    match parsed {
        Err(refused @ AuthError::Refused { .. }) => Err(refused),
        _ => Err(AuthError::Status {
            url: request.url.clone(),
            status,
        }),
    }
}

/// A client metadata document's URL as a client id: `https` with a path, as the spec says
/// such a client id MUST be.
fn metadata_document(url: &str) -> Result<String, AuthError> {
    let path = url
        .strip_prefix("https://")
        .and_then(|rest| rest.split_once('/'))
        .map(|(_, path)| path);
    match path {
        Some(path) if !path.is_empty() && !url.contains('#') => Ok(url.to_owned()),
        _ => Err(AuthError::InvalidUrl(url.to_owned())),
    }
}

// ---- driving it ---------------------------------------------------------------------------

/// Both servers' metadata for the MCP server at `server_url`, which refused a request with
/// `challenge` (if it sent one), each [`Discovery`] request sent by `fetch`.
///
/// A driver's `fetch` sends one request and reads its reply; an async transport awaits in
/// it, a blocking one does not (and the future is then ready at its first poll).
///
/// # Errors
/// [`AuthorizeError`]: what `fetch` failed with, no metadata at any URL
/// ([`AuthError::NotFound`]), or metadata refused.
pub async fn discover(
    server_url: &str,
    challenge: Option<&Challenge>,
    limits: &Limits,
    mut fetch: impl AsyncFnMut(&Fetch) -> Result<Fetched, AuthorizeError>,
) -> Result<Discovered, AuthorizeError> {
    let mut discovery = Discovery::new(server_url, challenge, limits)?;
    loop {
        let fetched = fetch(&discovery.request()).await?;
        match discovery.answered(fetched.status, &fetched.body)? {
            Discovering::Next(next) => discovery = next,
            Discovering::Found(found) => return Ok(found),
        }
    }
}

/// `request` at `server`'s token endpoint, sent by `fetch`: a code exchanged, or a token
/// refreshed ([`TokenRequest::refresh`]).
///
/// # Errors
/// What `fetch` failed with, or as [`TokenExchange::answered`] goes.
pub async fn token(
    server: &ServerMetadata,
    request: &TokenRequest<'_>,
    limits: &Limits,
    fetch: impl AsyncFnOnce(&Fetch) -> Result<Fetched, AuthorizeError>,
) -> Result<Token, AuthorizeError> {
    let exchange = TokenExchange::new(server, request, limits);
    let fetched = fetch(exchange.request()).await?;
    Ok(exchange.answered(fetched.status, &fetched.body)?)
}

/// The random bytes a flow needs: PKCE's verifier and the `state`, drawn by the driver.
#[derive(Clone)]
pub struct Random {
    /// PKCE's code verifier is made of these ([`Pkce::from_random`]).
    pub verifier: [u8; 32],
    /// The `state` is these, in hexadecimal.
    pub state: [u8; 16],
}

impl Random {
    /// Both, filled by `fill` (the operating system's random source, in a driver).
    ///
    /// # Errors
    /// [`AuthorizeError::Random`] with what `fill` said.
    pub fn drawn(
        mut fill: impl FnMut(&mut [u8]) -> Result<(), String>,
    ) -> Result<Self, AuthorizeError> {
        let mut random = Random {
            verifier: [0; 32],
            state: [0; 16],
        };
        fill(&mut random.verifier)
            .and_then(|()| fill(&mut random.state))
            .map_err(AuthorizeError::Random)?;
        Ok(random)
    }
}

impl fmt::Debug for Random {
    /// The bytes are not printed.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Random(…)")
    }
}

/// The whole flow for the MCP server at `server_url`, which refused a request with
/// `challenge`: [`discover`], [`Login`] (the client id, registration where it must), the
/// user's browser, and the code exchanged for the token. `fetch` sends each request (see
/// [`discover`]); `browser`, given the URL to open, returns the URL the browser was sent
/// back to, or why not.
///
/// # Errors
/// [`AuthorizeError`] from whichever step failed; a redirect whose `state` is not the one
/// sent is [`AuthError::StateMismatch`], and is not used.
pub async fn authorize(
    server_url: &str,
    challenge: Option<&Challenge>,
    client: ClientIdentity<'_>,
    random: &Random,
    limits: &Limits,
    mut fetch: impl AsyncFnMut(&Fetch) -> Result<Fetched, AuthorizeError>,
    browser: impl AsyncFnOnce(&str) -> Result<String, String>,
) -> Result<Authorized, AuthorizeError> {
    let discovered = discover(server_url, challenge, limits, &mut fetch).await?;
    let login = Login::start(
        discovered,
        challenge,
        client,
        &random.verifier,
        &random.state,
        limits,
    )?;
    let browsing = match login {
        Login::Browse(browsing) => browsing,
        Login::Register(registering) => {
            let fetched = fetch(registering.request()).await?;
            registering.answered(fetched.status, &fetched.body)?
        }
    };
    let back = browser(browsing.url())
        .await
        .map_err(AuthorizeError::Browser)?;
    let exchanging = browsing.returned(&back)?;
    let fetched = fetch(exchanging.request()).await?;
    Ok(exchanging.answered(fetched.status, &fetched.body)?)
}
