//! Several servers at once behind one palette: the blocking host.

use std::collections::{BTreeMap, VecDeque};
use std::fmt;
use std::fs::File;
use std::os::fd::OwnedFd;
use std::process::ExitStatus;
use std::time::Duration;

use rustix::event::PollFd;

use mcp_sansio::{
    Allowlist, CallOptions, CallToolResult, Catalog, Config, Connected, ErrorCode, Event, ListKind,
    LogLevel, OpId, RawObject, Reply, Responder, Root, RpcError, ServerNotification, ServerRequest,
    Subscription, Watcher,
};
use mcp_sansio_host::{
    IndexedPalette, Observation, Palette, PaletteConfig, PaletteError, Provider,
};
use mcp_sansio_http::{HttpClient, HttpClientError};
use serde_json::Value;

use crate::{ServerCommand, StdioClient, StdioError, StreamClient};

/// Where a [`Host`]'s server is: a process the host starts, an endpoint it reaches, or a
/// stream the application opened itself.
#[derive(Debug)]
#[non_exhaustive]
pub enum ServerAt {
    /// A local server the host starts in its own process group and ends, group and all, on
    /// [`Host::close`].
    Process(ServerCommand),
    /// A Streamable HTTP endpoint (`http://`, or `https://` with `mcp-sansio-http`'s
    /// `rustls` feature), in whichever revision the configuration's protocol choice finds.
    Url {
        /// The MCP endpoint, such as `http://127.0.0.1:8000/mcp`.
        url: String,
        /// Headers of the application's (a bearer token), sent with every request to this
        /// URL and nowhere else: redirects are not followed.
        headers: Vec<(String, String)>,
    },
    /// A server the application reached itself over a byte stream (the two halves of a
    /// socket, the pipes of a process it started), speaking newline-framed JSON-RPC: read
    /// from `reader`, written to `writer`, both set non-blocking (see [`StreamClient`]).
    /// Removing or closing it closes both; anything more that ends the server (a process, a
    /// socket's peer) is the application's.
    Stream {
        /// Where the server's messages are read.
        reader: OwnedFd,
        /// Where the client's messages are written.
        writer: OwnedFd,
    },
}

/// One server for a [`Host`]: its id in the palette (which may prefix its tools' names),
/// where it is, and the client's configuration, allowlist included.
#[derive(Debug)]
#[non_exhaustive]
pub struct HostServer {
    /// The server's id: 1 to 32 characters from `A-Z a-z 0-9 _ -`.
    pub id: String,
    /// Where it is.
    pub at: ServerAt,
    /// The client's configuration; its allowlist decides what of this server is offered.
    pub config: Config,
}

impl HostServer {
    /// Server `id`, started by `command`, spoken to under `config`.
    pub fn new(id: impl Into<String>, command: ServerCommand, config: Config) -> Self {
        HostServer {
            id: id.into(),
            at: ServerAt::Process(command),
            config,
        }
    }

    /// Server `id`, reached over Streamable HTTP at `url` with the application's `headers`
    /// (none, or a bearer token), spoken to under `config`.
    pub fn http(
        id: impl Into<String>,
        url: impl Into<String>,
        headers: &[(&str, &str)],
        config: Config,
    ) -> Self {
        HostServer {
            id: id.into(),
            at: ServerAt::Url {
                url: url.into(),
                headers: headers
                    .iter()
                    .map(|&(name, value)| (name.to_owned(), value.to_owned()))
                    .collect(),
            },
            config,
        }
    }

    /// Server `id`, reached by the application itself over `reader` and `writer` (a
    /// `UnixStream` and its `try_clone`, a `TcpStream`, a child's stdout and stdin), spoken
    /// to under `config`.
    pub fn stream(
        id: impl Into<String>,
        reader: impl Into<OwnedFd>,
        writer: impl Into<OwnedFd>,
        config: Config,
    ) -> Self {
        HostServer {
            id: id.into(),
            at: ServerAt::Stream {
                reader: reader.into(),
                writer: writer.into(),
            },
            config,
        }
    }
}

/// A server a host could not start, connect, list or keep: this crate's blocking [`Host`]
/// (with its [`HostError`]), or another host over the same servers with an error of its own.
#[derive(Debug)]
#[non_exhaustive]
pub struct ServerFailure<E = HostError> {
    /// The server's id.
    pub id: String,
    /// What went wrong.
    pub error: E,
}

impl<E> ServerFailure<E> {
    /// Server `id` failed with `error`.
    pub fn new(id: impl Into<String>, error: E) -> Self {
        ServerFailure {
            id: id.into(),
            error,
        }
    }
}

impl<E: fmt::Display> fmt::Display for ServerFailure<E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "server {:?}: {}", self.id, self.error)
    }
}

/// Something a server in a host said that is the application's to hear, tagged with the
/// server's id: a notification (a log message, a resource update, a prompt list's change), a
/// late answer, a request of the application's where the host hands those on (this crate's
/// blocking [`Host`] answers them itself: see [`Host::set_responder`]). The changes of a
/// server's tool list are the host's own: it lists the tools again and the palette follows.
#[derive(Debug)]
#[non_exhaustive]
pub struct HostEvent {
    /// The id of the server it came from.
    pub server: String,
    /// What it said.
    pub event: Event,
}

impl HostEvent {
    /// Server `server` said `event`.
    pub fn new(server: impl Into<String>, event: Event) -> Self {
        HostEvent {
            server: server.into(),
            event,
        }
    }
}

/// Why a server left the host, by whose doing.
#[derive(Debug)]
#[non_exhaustive]
pub enum HostError {
    /// A server the host started, or one over the application's stream: starting it, the
    /// handshake or the listing failed, or it went away.
    Stdio(StdioError),
    /// A server at a URL: its address or headers are invalid, it could not be reached, or
    /// the handshake, the listing or the session failed.
    Http(HttpClientError),
    /// Its catalog could not join the palette.
    Palette(PaletteError),
    /// No server of that id is in the host: never started, or gone.
    UnknownServer {
        /// The id asked for.
        id: String,
    },
    /// A token was given for a server the host started or reaches over a stream, which is
    /// not reached over HTTP.
    NotHttp {
        /// The server's id.
        id: String,
    },
    /// A server of that id is already in the host (or earlier in the list it was started
    /// with): the application's mistake, refused before the second one is started, so the
    /// first is never replaced unseen.
    DuplicateId {
        /// The id given twice.
        id: String,
    },
    /// The server's subscription to its tool list's changes ended more than
    /// [`HostLimits::subscription_ends`] times in a row, no change heard between: the peer's
    /// doing, or its connection's.
    SubscriptionChurn {
        /// How many times in a row it ended one.
        ends: u32,
    },
}

impl fmt::Display for HostError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            HostError::Stdio(e) => {
                e.fmt(f)?;
                let mut cause = std::error::Error::source(e);
                while let Some(inner) = cause {
                    write!(f, ": {inner}")?;
                    cause = inner.source();
                }
                Ok(())
            }
            HostError::Http(e) => e.fmt(f),
            HostError::Palette(e) => e.fmt(f),
            HostError::UnknownServer { id } => write!(f, "no server {id:?} is in this host"),
            HostError::NotHttp { id } => write!(
                f,
                "server {id:?} is not reached over HTTP, where a token would go"
            ),
            HostError::DuplicateId { id } => write!(
                f,
                "a server of id {id:?} is already in this host; each server needs its own id"
            ),
            HostError::SubscriptionChurn { ends } => write!(
                f,
                "the server's subscription to its tool list's changes ended {ends} times in a \
                 row with no change between; it is not subscribed to again"
            ),
        }
    }
}

impl std::error::Error for HostError {}

impl HostError {
    /// The protocol layer's error, when that is what this is.
    fn mcp(&self) -> Option<&mcp_sansio::Error> {
        match self {
            HostError::Stdio(StdioError::Mcp(e)) | HostError::Http(HttpClientError::Mcp(e)) => {
                Some(e)
            }
            _ => None,
        }
    }
}

/// Many servers, one palette: local ones each started in its own process group, remote ones
/// reached over Streamable HTTP, others the application reached itself over a byte stream
/// ([`HostServer::stream`]), each call routed to the server behind its tool. Every
/// process group is ended on [`close`](Host::close) or drop; every HTTP session that has an
/// id is ended (`DELETE`) on [`close`](Host::close) (a drop only lets it go).
///
/// A server that fails to start, to connect or to list its tools is reported by
/// [`start`](Host::start) and left out; one that dies later is reported by
/// [`take_failures`](Host::take_failures) and its tools leave the palette. The others go on.
///
/// The host hears a server while it waits on it (a call, a listing, a level asked for), and
/// every server at [`hear`](Host::hear), which waits on none, and at [`wait`](Host::wait),
/// which waits on all of them: what a server says between two calls is heard at whichever
/// of these comes next. A change of its tool list is the host's own; everything else it
/// says is kept for [`take_events`](Host::take_events), tagged with its id: at most its
/// configuration's [`Limits::events_kept`](mcp_sansio::Limits) between two looks, the rest
/// dropped and counted in [`events_lost`](Host::events_lost). A request a server makes of
/// the application is answered at once by its [responder](Host::set_responder), or refused
/// if it has none, so no server waits on a question nobody will see.
#[derive(Debug)]
pub struct Host {
    /// The palette, and BM25 over it for the search tool.
    palette: IndexedPalette,
    servers: BTreeMap<String, Joined>,
    failures: Vec<ServerFailure>,
    /// What the servers said for the application, in the order the host heard it.
    heard: VecDeque<HostEvent>,
    /// How many events found no room in `heard`.
    lost: u64,
    limits: HostLimits,
}

/// The blocking host's own bounds, beside each server's [`Config::limits`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct HostLimits {
    /// How many times in a row a server's subscription to its tool list's changes
    /// (2026-07-28) may end, by the server's doing or its stream's breaking, with no change
    /// heard between. The host subscribes again (and lists again) after each end it hears,
    /// as changes may have gone unheard; past this many, the server leaves the host
    /// ([`HostError::SubscriptionChurn`]) instead of keeping every [`Host::wait`] short and
    /// the host subscribing and listing without end. Default: 8.
    pub subscription_ends: u32,
}

impl Default for HostLimits {
    fn default() -> Self {
        HostLimits {
            subscription_ends: 8,
        }
    }
}

/// A server in the host, with the allowlist its catalog is read under.
#[derive(Debug)]
struct Joined {
    link: Link,
    allowlist: Allowlist,
    /// The deadline each of its calls is sent under.
    timeout: Duration,
    /// Its subscription to its tool list's changes (2026-07-28), while one stands.
    listening: Option<OpId>,
    /// How many of its events the application's queue holds at most
    /// ([`Limits::events_kept`](mcp_sansio::Limits)).
    events_kept: usize,
    /// How many of its events the queue holds now.
    kept: usize,
    /// How many events its client had dropped when last looked at (a server can say more
    /// in one call than its client keeps).
    dropped: u64,
    /// How many of its subscriptions ended since it last told of a change.
    ends: u32,
}

impl Joined {
    /// Starts the server's process, or makes its HTTP client, with the requests it makes of
    /// the application refused until a responder is set; nothing is sent yet.
    fn open(at: ServerAt, config: Config) -> Result<Joined, HostError> {
        let allowlist = config.allowlist.clone();
        let timeout = config.limits.operation_timeout;
        let events_kept = config.limits.events_kept;
        let mut link = Link::open(at, config)?;
        link.set_responder(unanswered);
        Ok(Joined {
            link,
            allowlist,
            timeout,
            listening: None,
            events_kept,
            kept: 0,
            dropped: 0,
            ends: 0,
        })
    }
}

/// The longest [`Host::wait`] goes without looking at a server over HTTP.
const HTTP_LOOK: Duration = Duration::from_millis(20);

/// The answer to a server's request when the application set no responder for it.
fn unanswered(_: &ServerRequest) -> Reply {
    Reply::Error(RpcError::new(
        ErrorCode::INTERNAL_ERROR,
        "the application answers no requests of this server",
    ))
}

impl Host {
    /// Starts every local server (all processes first, so that they start together), then
    /// connects to each server and lists its tools into one palette, in the order given. A
    /// server whose id an earlier one has is refused ([`HostError::DuplicateId`]) and never
    /// started. The host's bounds are [`HostLimits::default`].
    pub fn start(
        servers: impl IntoIterator<Item = HostServer>,
        palette: PaletteConfig,
    ) -> (Host, Vec<ServerFailure>) {
        Host::start_with(servers, palette, HostLimits::default())
    }

    /// [`start`](Host::start), under `limits`.
    pub fn start_with(
        servers: impl IntoIterator<Item = HostServer>,
        palette: PaletteConfig,
        limits: HostLimits,
    ) -> (Host, Vec<ServerFailure>) {
        let mut host = Host {
            palette: IndexedPalette::new(palette),
            servers: BTreeMap::new(),
            failures: Vec::new(),
            heard: VecDeque::new(),
            lost: 0,
            limits,
        };
        let mut seen = std::collections::BTreeSet::new();
        let mut started = Vec::new();
        let mut failures = Vec::new();
        for server in servers {
            let opened = if !seen.insert(server.id.clone()) {
                Err(HostError::DuplicateId {
                    id: server.id.clone(),
                })
            } else {
                Joined::open(server.at, server.config)
            };
            match opened {
                Ok(joined) => started.push((server.id, joined)),
                Err(error) => failures.push(ServerFailure {
                    id: server.id,
                    error,
                }),
            }
        }
        for (id, server) in started {
            if let Err(error) = host.join(&id, server) {
                failures.push(ServerFailure { id, error });
            }
        }
        (host, failures)
    }

    /// Adds server `server` to the running host: starts or reaches it, connects, and lists
    /// its tools into the palette (the search tool finds them from the next search). The
    /// servers already in the host are not touched.
    ///
    /// # Errors
    /// [`HostError::DuplicateId`] if a server of that id is already in the host (nothing is
    /// started, and a stream given is closed unwritten); otherwise why the server could not
    /// start, connect or join the palette, after which it is ended and the host is as it was.
    pub fn add(&mut self, server: HostServer) -> Result<(), HostError> {
        if self.servers.contains_key(&server.id) {
            return Err(HostError::DuplicateId { id: server.id });
        }
        let joined = Joined::open(server.at, server.config)?;
        self.join(&server.id, joined)
    }

    /// Ends server `id` and takes its tools out of the palette (and out of what the model
    /// was shown by a search): a local server's process group is given `grace` to exit after
    /// its input closes, a remote one's session is ended, the application's stream closed.
    /// `None` if no server of that id is in the host; otherwise how it ended, as
    /// [`close`](Host::close) says it. The others go on, and a server of the same id may be
    /// added again.
    pub fn remove(
        &mut self,
        id: &str,
        grace: Duration,
    ) -> Option<Result<Option<ExitStatus>, StdioError>> {
        let server = self.servers.remove(id)?;
        self.palette.change(|p| p.remove_server(id));
        Some(server.link.close(grace))
    }

    /// Connects to an opened server and lists its tools into the palette, under `id`; on
    /// failure the server is ended and the palette left as it was.
    fn join(&mut self, id: &str, mut server: Joined) -> Result<(), HostError> {
        let listed = server.link.connect_and_list();
        server.listening = listed.as_ref().ok().and_then(|(_, listening)| *listening);
        let joined = listed.and_then(|(catalog, _)| {
            self.palette
                .change(|p| p.set_server(id, &server.allowlist, &catalog))
                .map_err(HostError::Palette)
        });
        match joined {
            Ok(_) => {
                self.servers.insert(id.to_owned(), server);
                // What it said while joining (a log message, a list change) is heard now.
                self.hear_from(id, None, Vec::new());
                Ok(())
            }
            Err(error) => {
                let _ = server.link.close(crate::DEFAULT_GRACE);
                Err(error)
            }
        }
    }

    /// The palette: what the model is offered, and the server behind each name (and, under
    /// `CatalogPolicy::QUARANTINE`, which allowed tools were left out and why, listed wrongly
    /// or with a schema that does not compile: [`Palette::left_out`]).
    pub fn palette(&self) -> &Palette {
        self.palette.palette()
    }

    /// The tools to offer the model, in `provider`'s shape.
    pub fn offer(&self, provider: Provider) -> Value {
        self.palette.palette().offer(provider)
    }

    /// The offer of progressive disclosure, in `provider`'s shape: the search tool
    /// ([`SEARCH_TOOL`](mcp_sansio_host::SEARCH_TOOL)) and the tools the model has found so far
    /// (see [`Palette::offer_disclosed`]). The model's calls of the search tool go through
    /// [`call`](Host::call) like any other.
    pub fn offer_disclosed(&self, provider: Provider) -> Value {
        self.palette.palette().offer_disclosed(provider)
    }

    /// Forgets what the model has found with the search tool: the next
    /// [`offer_disclosed`](Host::offer_disclosed) is the search tool alone, as for a new
    /// conversation. What may run is unchanged.
    pub fn hide_all(&mut self) {
        self.palette.hide_all();
    }

    /// The process id of server `id`, while it is in the host and if the host started it
    /// (`None` for a server over HTTP or the application's stream).
    pub fn pid(&self, id: &str) -> Option<u32> {
        self.servers.get(id).and_then(|server| server.link.pid())
    }

    /// Replaces the roots server `id` is given (see
    /// [`Config::roots`](mcp_sansio::Config::roots)) and tells it so; its next `roots/list`
    /// is answered with `roots`.
    ///
    /// # Errors
    /// [`HostError::UnknownServer`] if no server of that id is in the host; the client's
    /// refusal ([`Client::set_roots`](mcp_sansio::Client::set_roots)), or a transport that failed.
    pub fn set_roots(&mut self, id: &str, roots: Vec<Root>) -> Result<(), HostError> {
        on_link!(self.link_of(id)?, |client, fail| client
            .set_roots(roots)
            .map_err(fail))
    }

    /// Sends `token` to HTTP server `id` with every request from now on (see
    /// [`HttpSession::set_authorization`](mcp_sansio::HttpSession::set_authorization)),
    /// instead of an `Authorization` header it was given, or none with `None`: a token
    /// refreshed while the host runs.
    ///
    /// # Errors
    /// [`HostError::UnknownServer`] if no server of that id is in the host, and
    /// [`HostError::NotHttp`] for a server the host started or reaches over a stream.
    pub fn set_authorization(
        &mut self,
        id: &str,
        token: Option<&mcp_sansio::auth::Token>,
    ) -> Result<(), HostError> {
        match self.link_of(id)? {
            Link::Process(_) | Link::Stream(_) => Err(HostError::NotHttp { id: id.to_owned() }),
            Link::Http(client) => {
                client.session().set_authorization(token);
                Ok(())
            }
        }
    }

    /// The link to server `id`.
    fn link_of(&mut self, id: &str) -> Result<&mut Link, HostError> {
        self.servers
            .get_mut(id)
            .map(|server| &mut server.link)
            .ok_or_else(|| HostError::UnknownServer { id: id.to_owned() })
    }

    /// Has `responder` answer the requests server `id` makes of the application (see
    /// [`Config::asks`](mcp_sansio::Config::asks)) while the host waits on it. Until one is
    /// set, each is refused at once (error -32603).
    ///
    /// # Errors
    /// [`HostError::UnknownServer`] if no server of that id is in the host.
    pub fn set_responder(
        &mut self,
        id: &str,
        responder: impl Responder + 'static,
    ) -> Result<(), HostError> {
        self.link_of(id)?.set_responder(responder);
        Ok(())
    }

    /// Has `watcher` see everything server `id` says as the host hears it, while a call
    /// waits (see [`StreamClient::set_watcher`](crate::StreamClient::set_watcher)): a long
    /// call's progress and the server's log messages as they come. Each is still kept for
    /// [`take_events`](Host::take_events).
    ///
    /// # Errors
    /// [`HostError::UnknownServer`] if no server of that id is in the host.
    pub fn set_watcher(
        &mut self,
        id: &str,
        watcher: impl Watcher + 'static,
    ) -> Result<(), HostError> {
        self.link_of(id)?.set_watcher(watcher);
        Ok(())
    }

    /// Asks server `id` for its log messages at `level` and above
    /// ([`Client::set_log_level`](mcp_sansio::Client::set_log_level)): `logging/setLevel`,
    /// awaited, in a handshake revision; in 2026-07-28 the level goes with each request from
    /// now on. Its messages come among [`take_events`](Host::take_events).
    ///
    /// # Errors
    /// [`HostError::UnknownServer`] if no server of that id is in the host; the client's
    /// refusal (`Misuse::CapabilityNotOffered` for a server of a handshake revision that
    /// declared no logging, which is not asked); or whatever ended the request. What the
    /// server said meanwhile is heard as after a call: a server whose connection the client
    /// found broken leaves the host.
    pub fn set_log_level(&mut self, id: &str, level: LogLevel) -> Result<(), HostError> {
        let set = self.link_of(id)?.set_log_level(level);
        self.hear_from(id, None, Vec::new());
        set
    }

    /// What the servers said for the application since the last look, oldest first, each
    /// tagged with its server's id (see [`Host`] for what is kept).
    pub fn take_events(&mut self) -> Vec<HostEvent> {
        for server in self.servers.values_mut() {
            server.kept = 0;
        }
        self.heard.drain(..).collect()
    }

    /// How many events were dropped in all, because a server said more than its
    /// [`Limits::events_kept`](mcp_sansio::Limits) between two
    /// [`take_events`](Host::take_events), or in one call.
    pub fn events_lost(&self) -> u64 {
        self.lost
    }

    /// Runs the model's call of `name` with argument text `arguments`, and says what the
    /// model should read. A refused call sends nothing; a failed call is a failure, never a
    /// result. A server that turns out to be gone leaves the host, and is reported by
    /// [`take_failures`](Host::take_failures). A `tools/list_changed` from the server behind
    /// the call is acted on before returning: its catalog is listed again and the palette
    /// updated (surviving tools keep their names). So is the listing an HTTP server's call
    /// made after the server refused it for a moved `Mcp-Param-*` header
    /// ([`HttpClient::take_relisted`](mcp_sansio_http::HttpClient::take_relisted)).
    ///
    /// A call of [`SEARCH_TOOL`](mcp_sansio_host::SEARCH_TOOL) is the host's own: BM25 over
    /// the palette, the tools found disclosed and listed for the model; no server hears of it.
    pub fn call(&mut self, name: &str, arguments: &str) -> Observation {
        self.call_with(name, arguments, CallOptions::new())
    }

    /// [`call`](Host::call), the call waiting as `options` say (the application's choice,
    /// not the model's): a deadline of its own, and progress asked of the server, each
    /// report among [`take_events`](Host::take_events) as the call's [`Event::Progress`]
    /// (and seen as it comes by the server's watcher, if one is set), restarting the
    /// deadline up to a hard maximum. For a tool known to take minutes.
    pub fn call_with(&mut self, name: &str, arguments: &str, options: CallOptions) -> Observation {
        let (id, tool, arguments) = match self.palette.route(name, arguments) {
            Ok(call) => (call.server.to_owned(), call.tool.to_owned(), call.arguments),
            Err(observation) => return observation,
        };
        let Some(server) = self.servers.get_mut(&id) else {
            return Observation::lost(name, &"its server has left");
        };
        let (observation, gone) = match server.link.call_tool(&tool, &arguments, options) {
            Ok(result) => (self.palette.palette().observe(name, &result), None),
            Err(error) => match error.mcp() {
                Some(mcp_sansio::Error::Timeout { .. }) => (
                    Observation::timed_out_under(name, options, server.timeout),
                    None,
                ),
                Some(mcp) => {
                    let observation = Observation::failed(name, mcp);
                    (
                        observation,
                        matches!(mcp, mcp_sansio::Error::Closed).then_some(error),
                    )
                }
                // Its stream failed or the server could not be reached: it is gone.
                None => (Observation::lost(name, &error), Some(error)),
            },
        };
        self.hear_from(&id, gone, Vec::new());
        observation
    }

    /// Hears every server now, without waiting: reads what each has sent since the host
    /// last waited on it, and acts on it as after a call. A server whose tool list changed
    /// is listed again and the palette updated; a server whose process died or whose
    /// stream closed leaves the host (see [`take_failures`](Host::take_failures)); a request
    /// of a server's is answered by its responder; the rest is kept for
    /// [`take_events`](Host::take_events). Call it before each offer, so that the model is
    /// offered what the servers hold now and not what they held at the last call of each;
    /// [`wait`](Host::wait) does the same when there is nothing to do until a server speaks.
    ///
    /// Nothing here waits on a server but a relisting and, over HTTP, the sending of an
    /// answer to its request, each under the server's deadline. A server over HTTP is heard
    /// on the streams that stand: its subscription in 2026-07-28, the session's `GET` stream
    /// in a handshake revision where the server offers one.
    pub fn hear(&mut self) {
        self.hear_all();
    }

    /// Waits until a server says something for the application, or until `timeout` has
    /// passed: [`hear`](Host::hear), again each time a server has sent more, until one of
    /// them gives the application something new. True when something did: an event kept for
    /// [`take_events`](Host::take_events) (or dropped for want of room, and counted in
    /// [`events_lost`](Host::events_lost)), a tool list listed again (the palette may have
    /// changed: offer again), or a server gone ([`take_failures`](Host::take_failures)).
    /// False when `timeout` passed without; a request of a server's answered by its responder
    /// is no news. How an application that has nothing to call listens to all its servers at
    /// once, instead of calling `hear` in a loop of its own.
    ///
    /// Servers over stdio and over a stream are waited on together, so the wait ends as
    /// soon as one of them writes. A server over HTTP is heard on its workers' replies, which
    /// come on no descriptor a wait can watch: while the host holds one, it looks again at
    /// least every 20 ms.
    pub fn wait(&mut self, timeout: Duration) -> bool {
        let started = std::time::Instant::now();
        loop {
            if self.hear_all() {
                return true;
            }
            let left = timeout.saturating_sub(started.elapsed());
            if left.is_zero() {
                return false;
            }
            self.wait_for_input(left);
        }
    }

    /// Waits at most `left` until a server over stdio or a stream has written or can be
    /// written to, or until a client's next deadline; at most [`HTTP_LOOK`] while a server
    /// over HTTP is among them. A wait the system refuses (a descriptor closed under it) is
    /// a sleep of that much, the failure left to the next hearing, which reads it.
    fn wait_for_input(&self, left: Duration) {
        let mut wait = left;
        let mut fds = Vec::new();
        for server in self.servers.values() {
            match server.link.waits_on() {
                Some((watched, wake)) => {
                    fds.extend(watched);
                    wait = wake.map_or(wait, |wake| wait.min(wake));
                }
                None => wait = wait.min(HTTP_LOOK),
            }
        }
        if fds.is_empty() || crate::stream::wait_on(&mut fds, wait).is_err() {
            std::thread::sleep(wait.min(HTTP_LOOK));
        }
    }

    /// [`hear`](Host::hear): true when the application has something new.
    fn hear_all(&mut self) -> bool {
        let ids: Vec<String> = self.servers.keys().cloned().collect();
        let mut news = false;
        for id in ids {
            let Some(server) = self.servers.get_mut(&id) else {
                continue;
            };
            let (arrived, gone) = match server.link.take_arrived() {
                Ok(arrived) => (arrived, None),
                Err(error) => (Vec::new(), Some(error)),
            };
            news |= self.hear_from(&id, gone, arrived);
        }
        news
    }

    /// Looks at what server `id` said besides its answers (`arrived`, and what its client
    /// keeps): a list change is listed again, a
    /// listing a call made itself (after a header mismatch) taken, and the rest kept for the
    /// application; a server that is `gone`, or whose connection failed, leaves the host.
    /// True when the application has something new from it: an event kept or lost, a
    /// listing, or its leaving.
    fn hear_from(&mut self, id: &str, mut gone: Option<HostError>, arrived: Vec<Event>) -> bool {
        let Some(server) = self.servers.get_mut(id) else {
            return false;
        };
        let lost_before = self.lost;
        let kept_before = self.heard.len();
        let relisted = server.link.take_relisted();
        let dropped = server.link.events_lost();
        self.lost = self
            .lost
            .saturating_add(dropped.saturating_sub(server.dropped));
        server.dropped = dropped;
        let mut changed = false;
        let mut lost = false;
        for event in arrived.into_iter().chain(server.link.take_events()) {
            match event {
                Event::Notification(ServerNotification::ListChanged(ListKind::Tools)) => {
                    changed = true;
                    server.ends = 0;
                }
                Event::Failed(error) => gone = Some(server.link.failed(error)),
                // Its subscription ended: changes may have gone unheard since.
                Event::Finished { op, .. } if Some(op) == server.listening => lost = true,
                event if server.kept < server.events_kept => {
                    server.kept += 1;
                    self.heard.push_back(HostEvent::new(id, event));
                }
                _ => self.lost = self.lost.saturating_add(1),
            }
        }
        let mut news = self.lost != lost_before || self.heard.len() != kept_before;
        if lost && gone.is_none() {
            server.ends = server.ends.saturating_add(1);
            if server.ends > self.limits.subscription_ends {
                gone = Some(HostError::SubscriptionChurn { ends: server.ends });
            } else {
                server.listening = server.link.listen_for_changes();
                changed = true;
            }
        }
        // A list change is listed again; a call refused for a moved header was sent again
        // after a listing of its own, which the palette takes as it is.
        let listed = match (changed, relisted) {
            _ if gone.is_some() => None,
            (true, _) => Some(server.link.list_tools()),
            (false, relisted) => relisted.map(Ok),
        };
        if let Some(listed) = listed {
            news = true;
            match listed {
                Ok(catalog) => {
                    let set = self
                        .palette
                        .change(|p| p.set_server(id, &server.allowlist, &catalog));
                    if let Err(e) = set {
                        self.drop_server(id, HostError::Palette(e));
                    }
                }
                Err(e) => gone = Some(e),
            }
        }
        if let Some(error) = gone {
            self.drop_server(id, error);
            news = true;
        }
        news
    }

    fn drop_server(&mut self, id: &str, error: HostError) {
        self.palette.change(|p| p.remove_server(id));
        if let Some(server) = self.servers.remove(id) {
            let _ = server.link.close(crate::DEFAULT_GRACE);
        }
        self.failures.push(ServerFailure {
            id: id.to_owned(),
            error,
        });
    }

    /// Servers that left the host since the last look, and why.
    pub fn take_failures(&mut self) -> Vec<ServerFailure> {
        std::mem::take(&mut self.failures)
    }

    /// Ends every server: a local one's process group (given `grace` to exit after its input
    /// closes), a remote one's session (`DELETE` where it has one), the application's stream
    /// (closed). Says how each ended: a local server's exit status, `None` for the others.
    pub fn close(self, grace: Duration) -> Vec<(String, Result<Option<ExitStatus>, StdioError>)> {
        self.servers
            .into_iter()
            .map(|(id, server)| (id, server.link.close(grace)))
            .collect()
    }
}

/// The transport a joined server is spoken to over (boxed: each client holds its buffers
/// inline, and they differ in size).
#[derive(Debug)]
enum Link {
    Process(Box<StdioClient>),
    Stream(Box<StreamClient<File, File>>),
    Http(Box<HttpClient>),
}

/// `$body` with `$client` the link's client, whichever transport it is, and `$fail` the
/// [`HostError`] variant its errors go in.
macro_rules! on_link {
    ($link:expr, |$client:ident, $fail:ident| $body:expr) => {
        match $link {
            Link::Process($client) => {
                let $fail = HostError::Stdio;
                $body
            }
            Link::Stream($client) => {
                let $fail = HostError::Stdio;
                $body
            }
            Link::Http($client) => {
                let $fail = HostError::Http;
                $body
            }
        }
    };
}
use on_link;

impl Link {
    /// Starts the process, takes the application's stream, or makes the HTTP client
    /// (nothing is sent yet).
    fn open(at: ServerAt, config: Config) -> Result<Link, HostError> {
        match at {
            ServerAt::Process(command) => StdioClient::spawn(&command, config)
                .map(|client| Link::Process(Box::new(client)))
                .map_err(HostError::Stdio),
            ServerAt::Stream { reader, writer } => {
                StreamClient::new(File::from(reader), File::from(writer), config)
                    .map(|client| Link::Stream(Box::new(client)))
                    .map_err(HostError::Stdio)
            }
            ServerAt::Url { url, headers } => HttpClient::new(&url, config)
                .and_then(|client| {
                    headers
                        .iter()
                        .try_fold(client, |client, (name, value)| client.header(name, value))
                })
                .map(|client| Link::Http(Box::new(client)))
                .map_err(HostError::Http),
        }
    }

    /// Connects, subscribes to the tool list's changes where that is how the server tells
    /// them ([`listen_for_changes`](Self::listen_for_changes)), and lists the tools.
    fn connect_and_list(&mut self) -> Result<(Catalog, Option<OpId>), HostError> {
        on_link!(self, |client, fail| client
            .connect()
            .map(drop)
            .map_err(fail))?;
        let listening = self.listen_for_changes();
        Ok((self.list_tools()?, listening))
    }

    /// A 2026-07-28 server that says its tool list changes says so only when asked: a
    /// subscription, whose operation this gives. A server of an earlier revision says so
    /// unasked, and one that refuses the subscription is kept all the same, its list then
    /// listed again only when a call of the host's finds it changed (or the connection
    /// fails, which the next request reports).
    fn listen_for_changes(&mut self) -> Option<OpId> {
        on_link!(self, |client, _fail| {
            let connected = client.client().connection();
            if !connected.is_some_and(Connected::tool_changes_need_subscription) {
                return None;
            }
            let listening = client.listen(&Subscription::tools()).ok();
            listening.map(|l| l.op.id())
        })
    }

    fn list_tools(&mut self) -> Result<Catalog, HostError> {
        on_link!(self, |client, fail| client.list_tools().map_err(fail))
    }

    fn call_tool(
        &mut self,
        tool: &str,
        arguments: &RawObject,
        options: CallOptions,
    ) -> Result<CallToolResult, HostError> {
        on_link!(self, |client, fail| client
            .call_tool_with(tool, arguments, options)
            .map_err(fail))
    }

    fn set_responder(&mut self, responder: impl Responder + 'static) {
        on_link!(self, |client, _fail| client.set_responder(responder));
    }

    fn set_watcher(&mut self, watcher: impl Watcher + 'static) {
        on_link!(self, |client, _fail| client.set_watcher(watcher));
    }

    /// Asks for log messages at `level` and above, and waits for the answer where there is
    /// one to wait for.
    fn set_log_level(&mut self, level: LogLevel) -> Result<(), HostError> {
        on_link!(self, |client, fail| {
            let now = client.now();
            match client.client().set_log_level(level, now) {
                Ok(op) => client.run(op).map_err(fail),
                Err(refused) => Err(fail(refused.into())),
            }
        })
    }

    /// The listing the last call made after a header mismatch (HTTP only).
    fn take_relisted(&mut self) -> Option<Catalog> {
        match self {
            Link::Process(_) | Link::Stream(_) => None,
            Link::Http(client) => client.take_relisted(),
        }
    }

    fn take_events(&mut self) -> Vec<Event> {
        on_link!(self, |client, _fail| client.take_events())
    }

    /// Reads what the server has sent by now, without waiting, and takes the events kept.
    fn take_arrived(&mut self) -> Result<Vec<Event>, HostError> {
        match self {
            Link::Process(client) => client.wait_events(Duration::ZERO).map_err(HostError::Stdio),
            Link::Stream(client) => client.wait_events(Duration::ZERO).map_err(HostError::Stdio),
            Link::Http(client) => Ok(client.wait_events(Duration::ZERO)),
        }
    }

    /// What a wait across servers watches of this link: its descriptors, and how long until
    /// its client's next deadline. `None` over HTTP, whose replies come on its workers'
    /// channel, not on a descriptor.
    fn waits_on(&self) -> Option<(Vec<PollFd<'_>>, Option<Duration>)> {
        match self {
            Link::Process(client) => Some((client.poll_fds(), client.next_wake(None))),
            Link::Stream(client) => Some((client.poll_fds(), client.next_wake(None))),
            Link::Http(_) => None,
        }
    }

    /// How many events the client dropped for want of room, in all.
    fn events_lost(&self) -> u64 {
        on_link!(self, |client, _fail| client.events_lost())
    }

    /// The connection's failure, as this transport reports it.
    fn failed(&self, error: mcp_sansio::Error) -> HostError {
        on_link!(self, |_client, fail| fail(error.into()))
    }

    fn pid(&self) -> Option<u32> {
        match self {
            Link::Process(client) => Some(client.pid()),
            Link::Stream(_) | Link::Http(_) => None,
        }
    }

    fn close(self, grace: Duration) -> Result<Option<ExitStatus>, StdioError> {
        match self {
            Link::Process(client) => client.close(grace).map(Some),
            Link::Stream(client) => {
                drop(client);
                Ok(None)
            }
            Link::Http(client) => {
                client.close();
                Ok(None)
            }
        }
    }
}
