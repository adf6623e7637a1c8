//! OAuth for a server that answers 401: the core's [`auth`] steps, with
//! the fetching done here, over the same HTTP/1.1 code as the session's requests.
//!
//! [`Authorizer::authorize`] runs the whole flow the MCP spec describes: discovery (the
//! protected resource metadata, then the authorization server's), a client id (the
//! application's, or dynamic registration), PKCE and `state` from the operating system's
//! random source, the user's browser (the application's part: it opens the URL and hands
//! back where the browser was sent), and the token, bound to the server with RFC 8707's
//! `resource`. It runs the core's flow ([`auth::authorize`]), which decides every step;
//! this module only sends what it asks, blocking (the flow's future is then ready at its
//! first poll). [`Authorizer::discover`] and
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
use std::future::Future;
use std::pin::pin;
use std::task::{Context, Poll, Waker};

use mcp_sansio::auth::{self, Challenge, Random, ServerMetadata, Token, TokenRequest};
use mcp_sansio::Limits;

use crate::wire::{self, Fields};
use crate::Seen;

/// Fetches OAuth's documents and runs the flow ([`auth::authorize`]); see the
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
        ready(auth::discover(
            server_url,
            challenge,
            &self.limits,
            async |request| self.fetch(request),
        ))
    }

    /// `request` at `server`'s token endpoint: a code exchanged, or a token refreshed,
    /// the client's secret sent as the request says ([`TokenRequest::client_secret`]).
    ///
    /// # Errors
    /// As the fetch and the answer go ([`TokenExchange::answered`](mcp_sansio::auth::TokenExchange::answered)).
    pub fn token(
        &self,
        server: &ServerMetadata,
        request: &TokenRequest<'_>,
    ) -> Result<Token, AuthorizeError> {
        ready(auth::token(
            server,
            request,
            &self.limits,
            async |request| self.fetch(request),
        ))
    }

    /// The whole flow for the MCP server at `server_url`, which refused a request with
    /// `challenge`: discovery, a client id (the application's, its metadata document, or
    /// a [`Registration`](mcp_sansio::auth::Registration)), PKCE and state from the
    /// operating system's random source, `browser` (given the URL to open, it returns the
    /// URL the browser was sent back to, or why not), and the token.
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
        let random = Random::drawn(|bytes| getrandom::fill(bytes).map_err(|e| e.to_string()))?;
        ready(auth::authorize(
            server_url,
            challenge,
            client,
            &random,
            &self.limits,
            async |request| self.fetch(request),
            async move |url| browser(url),
        ))
    }
}

/// The end of `future`, whose every step is a blocking call: it never waits, so it is ready
/// at its first poll.
fn ready<T>(future: impl Future<Output = T>) -> T {
    let mut future = pin!(future);
    let mut context = Context::from_waker(Waker::noop());
    loop {
        if let Poll::Ready(out) = future.as_mut().poll(&mut context) {
            return out;
        }
    }
}
