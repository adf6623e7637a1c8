//! The wire of Streamable HTTP: the core's [`HttpSession`] decides every request and reads
//! every reply; each request runs as a task of its own on reqwest, and hands what it sees of
//! its reply back to the driver, which drops the task when the session aborts the exchange
//! (in 2026-07-28, that is how a request is cancelled).

use std::collections::HashMap;
use std::process::ExitStatus;
use std::sync::Arc;
use std::time::Duration;

use mcp_sansio::auth::Token;
use mcp_sansio::{
    Client, Event, ExchangeId, HttpMethod, HttpRequest, HttpSession, Instant, ReplyHead,
};
use tokio::sync::mpsc;
use tokio::task::AbortHandle;

use crate::driver::{Clock, Wire};

/// How many reply pieces may wait for the driver before the exchanges wait for it.
const PIECES_QUEUED: usize = 64;

/// How long the `DELETE` that ends a session may take.
const CLOSE_TIMEOUT: Duration = Duration::from_secs(1);

/// The HTTP client of every request this crate sends: no redirect followed, no proxy.
pub(crate) fn client() -> reqwest::Result<reqwest::Client> {
    reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .no_proxy()
        .user_agent("mcp-sansio-tokio")
        .build()
}

/// Where requests go.
#[derive(Debug)]
pub(crate) struct Endpoint {
    pub(crate) http: reqwest::Client,
    pub(crate) url: reqwest::Url,
    /// The application's own headers (a bearer token), sent with every request.
    pub(crate) headers: reqwest::header::HeaderMap,
}

/// The start of a reply, owned, to cross from its task to the driver.
struct Head {
    status: u16,
    content_type: Option<String>,
    session_id: Option<String>,
    /// Every `WWW-Authenticate` field, joined by `, `.
    www_authenticate: Option<String>,
}

impl Head {
    /// What the session reads of it.
    fn as_reply_head(&self) -> ReplyHead<'_> {
        ReplyHead {
            status: self.status,
            content_type: self.content_type.as_deref(),
            session_id: self.session_id.as_deref(),
            www_authenticate: self.www_authenticate.as_deref(),
        }
    }
}

/// What an exchange saw of its reply.
enum Piece {
    Head(Head),
    Body(bytes::Bytes),
    End,
    /// The exchange failed; `before_head` when nothing of a reply came.
    Broken {
        before_head: bool,
        why: String,
    },
}

/// An HTTP endpoint, and the session that speaks to it.
pub(crate) struct HttpWire {
    session: HttpSession,
    endpoint: Arc<Endpoint>,
    pieces: mpsc::Receiver<(ExchangeId, Piece)>,
    piece_sender: mpsc::Sender<(ExchangeId, Piece)>,
    /// The exchanges under way, to drop when the session aborts them.
    live: HashMap<ExchangeId, AbortHandle>,
    /// The bound on an exchange that no operation's deadline covers.
    operation_timeout: Duration,
    /// Why the last exchange that got no reply at all failed.
    unreachable: Option<String>,
}

impl HttpWire {
    pub(crate) fn new(
        session: HttpSession,
        endpoint: Endpoint,
        operation_timeout: Duration,
    ) -> Self {
        let (piece_sender, pieces) = mpsc::channel(PIECES_QUEUED);
        HttpWire {
            session,
            endpoint: Arc::new(endpoint),
            pieces,
            piece_sender,
            live: HashMap::new(),
            operation_timeout,
            unreachable: None,
        }
    }

    /// Hands what `exchange` saw to the session.
    fn feed(&mut self, exchange: ExchangeId, piece: Piece, now: Instant) {
        match piece {
            Piece::Head(head) => self
                .session
                .handle_head(exchange, head.as_reply_head(), now),
            Piece::Body(bytes) => self.session.handle_body(exchange, &bytes, now),
            Piece::End => {
                self.live.remove(&exchange);
                self.session.handle_end(exchange, now);
            }
            Piece::Broken { before_head, why } => {
                self.live.remove(&exchange);
                self.unreachable = before_head.then_some(why);
                self.session.handle_broken(exchange, now);
            }
        }
    }
}

impl Wire for HttpWire {
    fn client(&mut self) -> &mut Client {
        self.session.client_mut()
    }

    fn poll_event(&mut self) -> Option<Event> {
        self.session.poll_event()
    }

    fn poll_timeout(&self) -> Option<Instant> {
        self.session.poll_timeout()
    }

    fn handle_timeout(&mut self, now: Instant) {
        self.session.handle_timeout(now);
    }

    fn flush(&mut self, clock: Clock) {
        while let Some(exchange) = self.session.poll_abort() {
            if let Some(task) = self.live.remove(&exchange) {
                task.abort();
            }
        }
        while let Some(request) = self.session.poll_request() {
            // Bounded by the session's next deadline, as the blocking transport bounds it;
            // the session aborts the exchange at that deadline anyway.
            let now = clock.now();
            let bound = match self.session.poll_timeout() {
                // The 2024-11-05 transport's event stream lasts the session, and a
                // subscription's until it ends; the session aborts either when it is done.
                _ if request.lasting => HttpRequest::LASTING_BOUND,
                None => self.operation_timeout,
                Some(at) => at
                    .saturating_duration_since(now)
                    .max(Duration::from_millis(1)),
            };
            let exchange = request.exchange;
            let task = tokio::spawn(perform(
                Arc::clone(&self.endpoint),
                request,
                bound,
                self.piece_sender.clone(),
            ));
            self.live.insert(exchange, task.abort_handle());
        }
    }

    async fn io(&mut self, clock: Clock) {
        // The wire holds a sender itself, so the queue never closes while it lives.
        if let Some((exchange, piece)) = self.pieces.recv().await {
            self.feed(exchange, piece, clock.now());
        }
    }

    fn unreachable(&mut self) -> Option<String> {
        self.unreachable.take()
    }

    fn authorize(&mut self, token: Option<&Token>) -> bool {
        self.session.set_authorization(token);
        true
    }

    async fn end(mut self, _grace: Duration) -> Option<ExitStatus> {
        for (_, task) in self.live.drain() {
            task.abort();
        }
        if let Some(request) = self.session.close() {
            let (sender, _) = mpsc::channel(1);
            perform(self.endpoint, request, CLOSE_TIMEOUT, sender).await;
        }
        None
    }
}

/// Performs one exchange within `bound`, sending what it sees of the reply to `pieces`
/// until the reply ends or fails, or nobody reads the pieces any more.
async fn perform(
    endpoint: Arc<Endpoint>,
    request: HttpRequest,
    bound: Duration,
    pieces: mpsc::Sender<(ExchangeId, Piece)>,
) {
    let exchange = request.exchange;
    let send = |piece: Piece| pieces.send((exchange, piece));
    let mut seen_head = false;
    let work = async {
        let method = match request.method {
            HttpMethod::Get => reqwest::Method::GET,
            HttpMethod::Delete => reqwest::Method::DELETE,
            // A method a later core adds is sent as the POST it most likely is.
            _ => reqwest::Method::POST,
        };
        let mut url = endpoint.url.clone();
        if let Some(path) = &request.path {
            // The core's message endpoint: a path and query on the URL's own origin.
            let (path, query) = path
                .split_once('?')
                .map_or((path.as_str(), None), |(p, q)| (p, Some(q)));
            url.set_path(path);
            url.set_query(query);
        }
        // The session's own header of a name wins over the application's (a token set with
        // `set_authorization` over one given to `connect_http`): a name is never sent twice.
        let mut theirs = endpoint.headers.clone();
        for (name, _) in &request.headers {
            theirs.remove(name.as_ref());
        }
        let mut builder = endpoint.http.request(method, url).headers(theirs);
        for (name, value) in &request.headers {
            builder = builder.header(name.as_ref(), value.as_ref());
        }
        let mut response = match builder.body(request.body).send().await {
            Ok(response) => response,
            Err(e) => {
                return Piece::Broken {
                    before_head: true,
                    why: e.to_string(),
                }
            }
        };
        let header = |name: &str| {
            response
                .headers()
                .get(name)
                .and_then(|v| v.to_str().ok())
                .map(str::to_owned)
        };
        let head = Piece::Head(Head {
            status: response.status().as_u16(),
            content_type: header("content-type"),
            session_id: header("mcp-session-id"),
            www_authenticate: {
                let fields: Vec<&str> = response
                    .headers()
                    .get_all("www-authenticate")
                    .iter()
                    .filter_map(|v| v.to_str().ok())
                    .collect();
                (!fields.is_empty()).then(|| fields.join(", "))
            },
        });
        seen_head = true;
        if send(head).await.is_err() {
            return Piece::End;
        }
        loop {
            match response.chunk().await {
                Ok(Some(bytes)) => {
                    if send(Piece::Body(bytes)).await.is_err() {
                        return Piece::End;
                    }
                }
                Ok(None) => return Piece::End,
                Err(e) => {
                    return Piece::Broken {
                        before_head: false,
                        why: e.to_string(),
                    }
                }
            }
        }
    };
    let outcome = tokio::time::timeout(bound, work).await;
    let last = match outcome {
        Ok(last) => last,
        Err(_) => Piece::Broken {
            before_head: !seen_head,
            why: format!("no complete reply within {bound:?}"),
        },
    };
    let _ = send(last).await;
}
