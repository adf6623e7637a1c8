//! OAuth for a server that answers 401: the core's [`auth`](mcp_sansio::auth) steps, with
//! the fetching done here, over the same HTTP/1.1 code as the session's requests.
//!
//! [`Authorizer::authorize`] runs the whole flow the MCP spec describes: discovery (the
//! protected resource metadata, then the authorization server's), a client id (the
//! application's, or dynamic registration), PKCE and `state` from the operating system's
//! random source, the user's browser (the application's part: it opens the URL and hands
//! back where the browser was sent), and the token, bound to the server with RFC 8707's
//! `resource`. It drives the core's flow ([`Discovery`], then [`Login`]), which decides
//! every step; this module only sends what it asks. [`Authorizer::discover`] and
//! [`Authorizer::token`] are also public, for an application that keeps a client id, a
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

pub use mcp_sansio::auth::{
    AuthorizeError, Authorized, ClientIdentity, Discovered, Fetch, Fetched,
};
use mcp_sansio::auth::{
    Challenge, Discovering, Discovery, Login, ServerMetadata, Token, TokenExchange, TokenRequest,
};
use mcp_sansio::Limits;

use crate::wire::{self, Fields};
use crate::Seen;

/// Fetches OAuth's documents and runs the flow ([`Discovery`], [`Login`]); see the
/// [module](self).
#[derive(Debug, Clone)]
pub struct Authorizer {
    limits: Limits,
}

impl Authorizer {
    /// An authorizer bounded by `limits` (see the [module](self)).
    pub fn new(limits: &Limits) -> Self {
        Authorizer { limits: *limits }
    }

    /// Sends `request`, with `Accept: application/json`, and reads its reply.
    ///
    /// # Errors
    /// [`AuthorizeError::Unreachable`] when there is no reply, or the URL cannot be reached
    /// by this build; [`AuthorizeError::TooLong`] for a body past the frame limit.
    pub fn fetch(&self, request: &Fetch) -> Result<Fetched, AuthorizeError> {
        let url = request.url.as_str();
        let target = wire::Target::new(url, self.limits.reply_head_bytes, 0)
            .map_err(|e| AuthorizeError::Unreachable(e.to_string()))?;
        let mut headers = vec![("Accept", "application/json")];
        if let Some((content_type, _)) = &request.body {
            headers.push(("Content-Type", content_type));
        }
        if let Some(value) = &request.authorization {
            headers.push(("Authorization", value));
        }
        let limit = self.limits.frame_bytes;
        let mut head: Option<(u16, Fields)> = None;
        let mut out = Vec::new();
        let mut failed = None;
        let mut too_long = false;
        target.exchange(
            request.method,
            None,
            headers.into_iter(),
            request.body.as_ref().map(|(_, b)| b.as_slice()),
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

    /// Both servers' metadata for the MCP server at `server_url`, which refused a request
    /// with `challenge` (if it sent one): the protected resource metadata from the first
    /// URL that has it, then its first authorization server's, each in the spec's order.
    ///
    /// # Errors
    /// [`AuthorizeError`]: a URL unreachable, no metadata at any URL
    /// ([`AuthError::NotFound`](mcp_sansio::auth::AuthError::NotFound)), or metadata
    /// refused.
    pub fn discover(
        &self,
        server_url: &str,
        challenge: Option<&Challenge>,
    ) -> Result<Discovered, AuthorizeError> {
        let mut discovery = Discovery::new(server_url, challenge, &self.limits)?;
        loop {
            let fetched = self.fetch(&discovery.request())?;
            match discovery.answered(fetched.status, &fetched.body)? {
                Discovering::Next(next) => discovery = next,
                Discovering::Found(found) => return Ok(found),
            }
        }
    }

    /// `request` at `server`'s token endpoint: a code exchanged, or a token refreshed,
    /// the client's secret sent as the request says ([`TokenRequest::client_secret`]).
    ///
    /// # Errors
    /// As the fetch and the answer go ([`TokenExchange::answered`]).
    pub fn token(
        &self,
        server: &ServerMetadata,
        request: &TokenRequest<'_>,
    ) -> Result<Token, AuthorizeError> {
        let exchange = TokenExchange::new(server, request, &self.limits);
        let fetched = self.fetch(exchange.request())?;
        Ok(exchange.answered(fetched.status, &fetched.body)?)
    }

    /// The whole flow for the MCP server at `server_url`, which refused a request with
    /// `challenge`: discovery, a client id (the application's, its metadata document, or
    /// a [`Registration`](mcp_sansio::auth::Registration)), PKCE and state from the operating system's random source,
    /// `browser` (given the URL to open, it returns the URL the browser was sent back to,
    /// or why not), and the token.
    ///
    /// # Errors
    /// [`AuthorizeError`] from whichever step failed; a redirect whose `state` is not the
    /// one sent is
    /// [`AuthError::StateMismatch`](mcp_sansio::auth::AuthError::StateMismatch), and is not
    /// used.
    pub fn authorize(
        &self,
        server_url: &str,
        challenge: Option<&Challenge>,
        client: ClientIdentity<'_>,
        browser: impl FnOnce(&str) -> Result<String, String>,
    ) -> Result<Authorized, AuthorizeError> {
        let discovered = self.discover(server_url, challenge)?;
        let (verifier, state) = random()?;
        let login = Login::start(
            discovered,
            challenge,
            client,
            &verifier,
            &state,
            &self.limits,
        )?;
        let browsing = match login {
            Login::Browse(browsing) => browsing,
            Login::Register(registering) => {
                let fetched = self.fetch(registering.request())?;
                registering.answered(fetched.status, &fetched.body)?
            }
        };
        let back = browser(browsing.url()).map_err(AuthorizeError::Browser)?;
        let exchanging = browsing.returned(&back)?;
        let fetched = self.fetch(exchanging.request())?;
        Ok(exchanging.answered(fetched.status, &fetched.body)?)
    }
}

/// PKCE's verifier and `state`, from the operating system's random source.
///
/// # Errors
/// [`AuthorizeError::Random`] when it fails.
fn random() -> Result<([u8; 32], [u8; 16]), AuthorizeError> {
    let (mut verifier, mut state) = ([0_u8; 32], [0_u8; 16]);
    for bytes in [&mut verifier[..], &mut state[..]] {
        getrandom::fill(bytes).map_err(|e| AuthorizeError::Random(e.to_string()))?;
    }
    Ok((verifier, state))
}
