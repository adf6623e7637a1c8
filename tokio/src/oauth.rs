//! OAuth for a server that answers 401, on tokio: the core's flow ([`auth::authorize`])
//! with its fetches sent over reqwest. The blocking transport's `Authorizer` runs the same
//! flow, so both take the same steps in the same order and fail the same way.
//!
//! [`Authorizer::authorize`] runs the whole flow the MCP spec describes: discovery (the
//! protected resource metadata, then the authorization server's), a client id (the
//! application's, its metadata document, or dynamic registration), PKCE and `state` from the
//! operating system's random source, the user's browser (the application's part: an async
//! closure opens the URL and hands back where the browser was sent), and the token, bound to
//! the server with RFC 8707's `resource`.
//!
//! Every fetch is bounded: one document by [`Limits::frame_bytes`] and each exchange,
//! reply head and body, by [`Limits::operation_timeout`]. A reply's head is bounded by
//! hyper's own limit on it (about 400 KiB), as for every request of
//! [`connect_http`](crate::connect_http). Redirects are not followed (a metadata URL that
//! redirects counts as not found), no proxy is used, and no header of the application's
//! goes to these URLs. An `https://` URL, which every authorization server not on this
//! machine has, needs the `rustls` feature, as for `connect_http`; without it, such a fetch
//! is refused, saying so, as [`AuthorizeError::Unreachable`].
//!
//! ```no_run
//! use mcp_sansio::{Allowlist, Config, Error, HttpError};
//! use mcp_sansio_tokio::oauth::{Authorizer, ClientIdentity};
//! use mcp_sansio_tokio::AsyncError;
//!
//! # async fn example() -> Result<(), Box<dyn std::error::Error>> {
//! let url = "http://127.0.0.1:8000/mcp";
//! let config = || Config::new(["word_count"].into_iter().collect::<Allowlist>());
//! let server = match mcp_sansio_tokio::connect_http(url, &[], config()).await {
//!     Err(AsyncError::Mcp(Error::Http(HttpError::Unauthorized(challenge)))) => {
//!         let identity = ClientIdentity {
//!             client_id: None, // registers itself
//!             client_secret: None,
//!             metadata_document: None,
//!             client_name: "my host",
//!             redirect_uri: "http://127.0.0.1:8765/callback", // where the host listens
//!         };
//!         let authorized = Authorizer::new(&config().limits)?
//!             .authorize(url, challenge.as_ref(), identity, async |open| {
//!                 // Show `open` to the user; return the URL the browser came back to.
//!                 # let _ = open;
//!                 Ok(String::from("http://127.0.0.1:8765/callback?code=...&state=..."))
//!             })
//!             .await?;
//!         let bearer = authorized.token.header_value();
//!         mcp_sansio_tokio::connect_http(url, &[("Authorization", &bearer)], config()).await?
//!     }
//!     other => other?,
//! };
//! # let _ = server;
//! # Ok(())
//! # }
//! ```

use mcp_sansio::auth::{self, Challenge, Random, ServerMetadata, Token, TokenRequest};
pub use mcp_sansio::auth::{
    AuthorizeError, Authorized, ClientIdentity, Discovered, Fetch, Fetched,
};
use mcp_sansio::Limits;

/// Fetches OAuth's documents and runs the flow on tokio; see the [module](self).
#[derive(Debug, Clone)]
pub struct Authorizer {
    http: reqwest::Client,
    limits: Limits,
}

impl Authorizer {
    /// An authorizer bounded by `limits` (see the [module](self)).
    ///
    /// # Errors
    /// [`AuthorizeError::Unreachable`] when no HTTP client can be made here (its TLS
    /// backend or the system's resolver configuration failed to load).
    pub fn new(limits: &Limits) -> Result<Self, AuthorizeError> {
        let http = crate::http::client().map_err(|e| AuthorizeError::Unreachable(e.to_string()))?;
        Ok(Authorizer {
            http,
            limits: *limits,
        })
    }

    /// Sends `request`, with `Accept: application/json`, and reads its reply.
    ///
    /// # Errors
    /// [`AuthorizeError::Unreachable`] when there is no reply within
    /// [`Limits::operation_timeout`], or the URL cannot be reached by this build;
    /// [`AuthorizeError::TooLong`] for a body past [`Limits::frame_bytes`].
    pub async fn fetch(&self, request: &Fetch) -> Result<Fetched, AuthorizeError> {
        let bound = self.limits.operation_timeout;
        tokio::time::timeout(bound, self.exchange(request))
            .await
            .unwrap_or_else(|_| {
                Err(AuthorizeError::Unreachable(format!(
                    "{} gave no complete reply within {bound:?}",
                    request.url
                )))
            })
    }

    /// [`fetch`](Self::fetch), unbounded in time.
    async fn exchange(&self, request: &Fetch) -> Result<Fetched, AuthorizeError> {
        let url = request.url.as_str();
        if !cfg!(feature = "rustls") && url.starts_with("https://") {
            return Err(AuthorizeError::Unreachable(format!(
                "{url}: https:// needs the rustls feature of mcp-sansio-tokio"
            )));
        }
        let unreachable = |e: reqwest::Error| AuthorizeError::Unreachable(format!("{url}: {e}"));
        let method = if request.method == "POST" {
            reqwest::Method::POST
        } else {
            reqwest::Method::GET
        };
        let mut builder = self
            .http
            .request(method, url)
            .header("Accept", "application/json");
        if let Some((content_type, body)) = &request.body {
            builder = builder
                .header("Content-Type", *content_type)
                .body(body.clone());
        }
        if let Some(value) = &request.authorization {
            builder = builder.header("Authorization", value);
        }
        let mut response = builder.send().await.map_err(unreachable)?;
        let status = response.status().as_u16();
        let location = response
            .headers()
            .get("location")
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned);
        let mut body = Vec::new();
        while let Some(bytes) = response.chunk().await.map_err(unreachable)? {
            if body.len().saturating_add(bytes.len()) > self.limits.frame_bytes {
                return Err(AuthorizeError::TooLong {
                    url: url.to_owned(),
                });
            }
            body.extend_from_slice(&bytes);
        }
        Ok(Fetched {
            status,
            location,
            body,
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
    pub async fn discover(
        &self,
        server_url: &str,
        challenge: Option<&Challenge>,
    ) -> Result<Discovered, AuthorizeError> {
        auth::discover(server_url, challenge, &self.limits, async |request| {
            self.fetch(request).await
        })
        .await
    }

    /// `request` at `server`'s token endpoint: a code exchanged, or a token refreshed
    /// ([`TokenRequest::refresh`]), the client's secret sent as the request says.
    ///
    /// # Errors
    /// As the fetch and the answer go
    /// ([`TokenExchange::answered`](mcp_sansio::auth::TokenExchange::answered)).
    pub async fn token(
        &self,
        server: &ServerMetadata,
        request: &TokenRequest<'_>,
    ) -> Result<Token, AuthorizeError> {
        auth::token(server, request, &self.limits, async |request| {
            self.fetch(request).await
        })
        .await
    }

    /// The whole flow for the MCP server at `server_url`, which refused a request with
    /// `challenge`: discovery, a client id, PKCE and state, `browser` (given the URL to
    /// open, it returns the URL the browser was sent back to, or why not), and the token.
    ///
    /// # Errors
    /// [`AuthorizeError`] from whichever step failed; a redirect whose `state` is not the
    /// one sent is
    /// [`AuthError::StateMismatch`](mcp_sansio::auth::AuthError::StateMismatch), and is not
    /// used.
    pub async fn authorize(
        &self,
        server_url: &str,
        challenge: Option<&Challenge>,
        client: ClientIdentity<'_>,
        browser: impl AsyncFnOnce(&str) -> Result<String, String>,
    ) -> Result<Authorized, AuthorizeError> {
        let random = Random::drawn(|bytes| getrandom::fill(bytes).map_err(|e| e.to_string()))?;
        let fetch = async |request: &Fetch| self.fetch(request).await;
        auth::authorize(
            server_url,
            challenge,
            client,
            &random,
            &self.limits,
            fetch,
            browser,
        )
        .await
    }
}
