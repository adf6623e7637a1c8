//! Several servers at once behind one palette, on tokio: the async host.

use std::collections::BTreeMap;
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::process::ExitStatus;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError, Weak};
use std::time::Duration;

use mcp_sansio::{
    Allowlist, CallOptions, Catalog, Config, Error, Event, ListKind, Reply, ServerNotification,
    Subscription, SubscriptionEnded,
};
use mcp_sansio_host::{
    IndexedPalette, Observation, Palette, PaletteConfig, PaletteError, Provider,
};
pub use mcp_sansio_stdio::HostEvent;
use mcp_sansio_stdio::{HostServer, ServerAt};
use serde_json::Value;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::sync::{mpsc, watch};

use crate::{AsyncError, DriverConfig, DriverLimits, Events, Handle, Listener};

/// The async host's own bounds (each server's core bounds are in its
/// [`Config::limits`](mcp_sansio::Config::limits)).
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct HostLimits {
    /// Each server's driver's bounds.
    pub driver: DriverLimits,
    /// How many [`HostEvent`]s wait for the application at most; past it new ones are
    /// dropped and counted in [`Events::lost`], and a server's request among them is
    /// answered with an error at once, so no server waits on an event nobody will see.
    /// Default: 256.
    pub events_kept: usize,
    /// How many times in a row a server's subscription to its tool list's changes
    /// (2026-07-28) may end, by the server's doing or its stream's breaking, with no change
    /// heard between. The host subscribes again (and lists again) after each end, as changes
    /// may have gone unheard; past this many, the server leaves the host
    /// ([`HostError::SubscriptionChurn`]) instead of keeping its watcher subscribing and
    /// listing without end. Default: 8.
    pub subscription_ends: u32,
}

impl Default for HostLimits {
    fn default() -> Self {
        HostLimits {
            driver: DriverLimits::default(),
            events_kept: 256,
            subscription_ends: 8,
        }
    }
}

/// Why a server left the async host, or could not join it, by whose doing.
#[derive(Debug)]
#[non_exhaustive]
pub enum HostError {
    /// Starting or reaching the server, the handshake, a listing or the connection failed,
    /// or the server went away; the driver's error says who is at fault.
    Driver(AsyncError),
    /// Its catalog could not join the palette.
    Palette(PaletteError),
    /// A server of that id is already in the host (or earlier in the list it was started
    /// with): the application's mistake, refused before the second one is started.
    DuplicateId {
        /// The id given twice.
        id: String,
    },
    /// The server is at a kind of place this host does not reach (a [`ServerAt`] newer than
    /// it).
    Unsupported {
        /// The server's id.
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
            HostError::Driver(e) => e.fmt(f),
            HostError::Palette(e) => e.fmt(f),
            HostError::DuplicateId { id } => write!(
                f,
                "a server of id {id:?} is already in this host; each server needs its own id"
            ),
            HostError::Unsupported { id } => {
                write!(
                    f,
                    "server {id:?} is at a kind of place this host cannot reach"
                )
            }
            HostError::SubscriptionChurn { ends } => write!(
                f,
                "the server's subscription to its tool list's changes ended {ends} times in a \
                 row with no change between; it is not subscribed to again"
            ),
        }
    }
}

impl std::error::Error for HostError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            // Transparent: the driver's or the palette's error is this error, not its cause.
            HostError::Driver(e) => e.source(),
            HostError::Palette(e) => e.source(),
            HostError::DuplicateId { .. }
            | HostError::Unsupported { .. }
            | HostError::SubscriptionChurn { .. } => None,
        }
    }
}

/// A server the async host could not start, connect, list or keep.
pub type ServerFailure = mcp_sansio_stdio::ServerFailure<HostError>;

/// The events of every server in the host, in the order each server's watcher took them: a
/// request of the application's among them is answered through [`Host::server`] and
/// [`Handle::answer`].
pub type HostEvents = Events<HostEvent>;

/// Many servers, one palette, on tokio: local servers each started in its own process group,
/// remote ones reached over Streamable HTTP, and any the application reaches itself over a
/// byte stream ([`add_stream`](Host::add_stream)), each call routed to the server behind its tool,
/// calls to any servers at once from any tasks. Clones share the host; the last one dropped
/// ends every server (as dropping their [`Handle`]s does).
///
/// Each server has a task of its own that watches what it says, without waiting for a call:
/// a change of its tool list (said unasked in 2025, on a subscription the host holds in
/// 2026-07-28, made again if the server ends it) is listed at once and the palette updated,
/// once for any burst of changes that arrived together; a server that goes leaves the
/// palette and is reported by [`take_failures`](Host::take_failures); anything else reaches
/// the application's [`HostEvents`], tagged with the server's id. Each change of the
/// palette's tools is heard through [`palette_changes`](Host::palette_changes).
///
/// ```no_run
/// use mcp_sansio::{Allowlist, Config};
/// use mcp_sansio_host::{PaletteConfig, Provider};
/// use mcp_sansio_stdio::{HostServer, ServerCommand};
/// use mcp_sansio_tokio::{Host, HostLimits};
///
/// # async fn example() {
/// let allow = |tools: &[&str]| Config::new(tools.iter().copied().collect::<Allowlist>());
/// let servers = [
///     HostServer::new("files", ServerCommand::new("files-server"), allow(&["read_file"])),
///     HostServer::http("weather", "http://127.0.0.1:8000/mcp", &[], allow(&["get_forecast"])),
/// ];
/// let (host, mut events, failures) =
///     Host::start(servers, PaletteConfig::default(), HostLimits::default()).await;
/// for failure in &failures {
///     eprintln!("left out: {failure}");
/// }
/// let tools = host.offer(Provider::Anthropic); // what the model hears of
/// // The model's calls, from any task, at once; each reaches its own server.
/// let (forecast, file) = tokio::join!(
///     host.call("get_forecast", r#"{"city":"Lisbon"}"#),
///     host.call("read_file", r#"{"path":"notes.txt"}"#),
/// );
/// println!("{}\n{}", forecast.text(), file.text());
/// while let Ok(event) = events.try_recv() {
///     println!("{}: {:?}", event.server, event.event);
/// }
/// host.close().await;
/// # }
/// ```
#[derive(Clone, Debug)]
pub struct Host {
    shared: Arc<Shared>,
}

/// What every clone of a host, and every server's watcher (weakly), shares.
#[derive(Debug)]
struct Shared {
    state: Mutex<State>,
    /// Where the watchers send what the application is to hear.
    events: mpsc::Sender<HostEvent>,
    /// How many events the application's queue had no room for.
    lost: Arc<AtomicU64>,
    limits: HostLimits,
}

#[derive(Debug)]
struct State {
    palette: IndexedPalette,
    servers: BTreeMap<String, Joined>,
    failures: Vec<ServerFailure>,
    /// How many servers have joined so far: each is numbered as it joins, so that what a
    /// server's watcher or call reports never touches a server added later under its id.
    joined: u64,
    /// How many times the palette's tools have changed: what
    /// [`palette_changes`](Host::palette_changes) hands out receivers of.
    changes: watch::Sender<u64>,
}

/// A server in the host.
#[derive(Debug)]
struct Joined {
    handle: Handle,
    allowlist: Allowlist,
    /// The deadline each of its calls is sent under.
    timeout: Duration,
    /// Its number, in the order servers joined.
    number: u64,
    /// Its watcher, ended with it.
    watcher: tokio::task::AbortHandle,
}

impl Drop for Joined {
    fn drop(&mut self) {
        // The watcher holds a handle of its own: a server that leaves ends with it.
        self.watcher.abort();
    }
}

/// A server connected and listed, not yet in the palette.
struct Opened {
    handle: Handle,
    events: Events,
    listener: Option<Listener>,
    catalog: Catalog,
    allowlist: Allowlist,
    timeout: Duration,
}

impl Host {
    /// Starts every local server and reaches every remote one, all at once, then lists each
    /// one's tools into one palette in the order given. A server that cannot start, connect
    /// or join the palette is left out and reported, and so is a server whose id an earlier
    /// one has ([`HostError::DuplicateId`], never started). The others go on.
    pub async fn start(
        servers: impl IntoIterator<Item = HostServer>,
        palette: PaletteConfig,
        limits: HostLimits,
    ) -> (Host, HostEvents, Vec<ServerFailure>) {
        let (events, queue) = mpsc::channel(limits.events_kept.max(1));
        let lost = Arc::new(AtomicU64::new(0));
        let host = Host {
            shared: Arc::new(Shared {
                state: Mutex::new(State {
                    palette: IndexedPalette::new(palette),
                    servers: BTreeMap::new(),
                    failures: Vec::new(),
                    joined: 0,
                    changes: watch::Sender::new(0),
                }),
                events,
                lost: Arc::clone(&lost),
                limits,
            }),
        };
        let mut seen = std::collections::BTreeSet::new();
        let mut opening = Vec::new();
        for server in servers {
            let id = server.id.clone();
            let open = if seen.insert(id.clone()) {
                Ok(tokio::spawn(open(
                    server,
                    host.shared.limits.driver.clone(),
                )))
            } else {
                Err(HostError::DuplicateId { id: id.clone() })
            };
            opening.push((id, open));
        }
        let mut failures = Vec::new();
        for (id, open) in opening {
            let opened = match open {
                Ok(task) => task
                    .await
                    .unwrap_or(Err(HostError::Driver(AsyncError::Ended))),
                Err(error) => Err(error),
            };
            if let Err(error) = opened.and_then(|opened| host.join(&id, opened)) {
                failures.push(ServerFailure::new(id, error));
            }
        }
        let events = Events { queue, lost };
        (host, events, failures)
    }

    /// Adds `server` to the running host: starts or reaches it, connects, and lists its tools
    /// into the palette. The servers already in the host go on meanwhile.
    ///
    /// # Errors
    /// [`HostError::DuplicateId`] if a server of that id is in the host (nothing is started);
    /// otherwise why the server could not start, connect or join the palette, after which it
    /// is ended and the host is as it was.
    pub async fn add(&self, server: HostServer) -> Result<(), HostError> {
        if self.state().servers.contains_key(&server.id) {
            return Err(HostError::DuplicateId { id: server.id });
        }
        let id = server.id.clone();
        let opened = open(server, self.shared.limits.driver.clone()).await?;
        self.join(&id, opened)
    }

    /// Adds a server the application reached itself, speaking newline-framed JSON-RPC over
    /// `reader` and `writer` (the two halves of a socket, the pipes of a process it started,
    /// an in-process duplex) under `config`, as [`add`](Host::add) adds one it starts: the
    /// handshake, a subscription to its tool list's changes where that is how it tells them,
    /// its tools listed into the palette, and a watcher. Removing or closing it closes
    /// `writer`; anything more that ends the server (a process, a socket's peer) is the
    /// application's.
    ///
    /// # Errors
    /// [`HostError::DuplicateId`] if a server of that id is in the host, before a byte is
    /// read or written; otherwise why the handshake, the listing or the palette refused
    /// it, after which `writer` is closed and the host is as it was.
    pub async fn add_stream<R, W>(
        &self,
        id: impl Into<String>,
        reader: R,
        writer: W,
        config: Config,
    ) -> Result<(), HostError>
    where
        R: AsyncRead + Unpin + Send + 'static,
        W: AsyncWrite + Unpin + Send + 'static,
    {
        let id = id.into();
        if self.state().servers.contains_key(&id) {
            return Err(HostError::DuplicateId { id });
        }
        let (allowlist, timeout) = (config.allowlist.clone(), config.limits.operation_timeout);
        let config = DriverConfig::new(config, self.shared.limits.driver.clone());
        let connected = crate::connect_stream(reader, writer, config).await;
        let opened = listed(connected, allowlist, timeout).await?;
        self.join(&id, opened)
    }

    /// Takes a connected server into the palette, with a watcher of its own; a server added
    /// under the same id meanwhile wins, and this one is ended.
    fn join(&self, id: &str, opened: Opened) -> Result<(), HostError> {
        let mut state = self.state();
        if state.servers.contains_key(id) {
            return Err(HostError::DuplicateId { id: id.to_owned() });
        }
        state
            .change_palette(|p| p.set_server(id, &opened.allowlist, &opened.catalog))
            .map_err(HostError::Palette)?;
        state.joined += 1;
        let number = state.joined;
        let watched = Watched {
            host: Arc::downgrade(&self.shared),
            id: id.to_owned(),
            number,
            subscription_ends: self.shared.limits.subscription_ends,
        };
        let watcher =
            tokio::spawn(watched.watch(opened.handle.clone(), opened.events, opened.listener));
        state.servers.insert(
            id.to_owned(),
            Joined {
                handle: opened.handle,
                allowlist: opened.allowlist,
                timeout: opened.timeout,
                number,
                watcher: watcher.abort_handle(),
            },
        );
        Ok(())
    }

    /// Ends server `id` and takes its tools out of the palette (and out of what the model
    /// was shown by a search): a local server's process group is ended and reaped within
    /// [`DriverLimits::close_grace`] and 100 ms. `None` if no server of that id is in the
    /// host; otherwise how it ended, as [`Handle::close`] says it. A server of the same id
    /// may be added again.
    pub async fn remove(&self, id: &str) -> Option<Result<Option<ExitStatus>, AsyncError>> {
        let server = {
            let mut state = self.state();
            let server = state.servers.remove(id)?;
            state.change_palette(|p| p.remove_server(id));
            server
        };
        Some(server.handle.clone().close().await)
    }

    /// Reads the palette: what the model is offered, and the server behind each name (and,
    /// under `CatalogPolicy::QUARANTINE`, which allowed tools were left out and why, listed
    /// wrongly or with a schema that does not compile: [`Palette::left_out`]).
    pub fn with_palette<T>(&self, read: impl FnOnce(&Palette) -> T) -> T {
        read(self.state().palette.palette())
    }

    /// The tools to offer the model, in `provider`'s shape.
    pub fn offer(&self, provider: Provider) -> Value {
        self.with_palette(|palette| palette.offer(provider))
    }

    /// The offer of progressive disclosure, in `provider`'s shape: the search tool and the
    /// tools the model has found so far (see [`Palette::offer_disclosed`]). The model's
    /// calls of the search tool go through [`call`](Host::call) like any other.
    pub fn offer_disclosed(&self, provider: Provider) -> Value {
        self.with_palette(|palette| palette.offer_disclosed(provider))
    }

    /// Forgets what the model has found with the search tool: the next
    /// [`offer_disclosed`](Host::offer_disclosed) is the search tool alone, as for a new
    /// conversation. What may run is unchanged.
    pub fn hide_all(&self) {
        self.state().palette.hide_all();
    }

    /// The handle of server `id`, while it is in the host: to answer its requests, set its
    /// roots or its token, or run an operation of the application's own.
    pub fn server(&self, id: &str) -> Option<Handle> {
        self.state().servers.get(id).map(|s| s.handle.clone())
    }

    /// Runs the model's call of `name` with argument text `arguments`, and says what the
    /// model should read. A refused call sends nothing; a failed call is a failure, never a
    /// result. Calls from many tasks run at once, each server's up to its
    /// [`Limits::requests_in_flight`](mcp_sansio::Limits::requests_in_flight); the host is
    /// never locked while a call waits. A server that turns out to be gone leaves the host,
    /// and is reported by [`take_failures`](Host::take_failures). A listing the call made
    /// after an HTTP server refused it for a moved `Mcp-Param-*` header
    /// ([`Handle::take_relisted`]) is taken into the palette.
    ///
    /// A call of [`SEARCH_TOOL`](mcp_sansio_host::SEARCH_TOOL) is the host's own: BM25 over
    /// the palette, the tools found disclosed and listed for the model; no server hears of it.
    pub async fn call(&self, name: &str, arguments: &str) -> Observation {
        self.call_with(name, arguments, CallOptions::new()).await
    }

    /// [`call`](Host::call), the call waiting as `options` say (the application's choice,
    /// not the model's): a deadline of its own, and progress asked of the server, each
    /// report reaching the [`HostEvents`] as the call's [`Event::Progress`], tagged with
    /// its server's id, and restarting the deadline up to a hard maximum. For a tool known
    /// to take minutes.
    pub async fn call_with(
        &self,
        name: &str,
        arguments: &str,
        options: CallOptions,
    ) -> Observation {
        let (id, tool, arguments, handle, number, timeout) = {
            let mut state = self.state();
            let (id, tool, arguments) = match state.palette.route(name, arguments) {
                Ok(call) => (call.server.to_owned(), call.tool.to_owned(), call.arguments),
                Err(observation) => return observation,
            };
            let Some(server) = state.servers.get(&id) else {
                return Observation::lost(name, &"its server has left");
            };
            let (handle, number, timeout) = (server.handle.clone(), server.number, server.timeout);
            (id, tool, arguments, handle, number, timeout)
        };
        match handle.call_tool_with(&tool, &arguments, options).await {
            Ok(result) => {
                if let Some(catalog) = handle.take_relisted() {
                    // Whether the server is still here, the observation says either way.
                    self.shared.relisted(&id, number, &catalog);
                }
                self.with_palette(|palette| palette.observe(name, &result))
            }
            Err(AsyncError::Mcp(Error::Timeout { .. })) => {
                Observation::timed_out_under(name, options, timeout)
            }
            Err(AsyncError::Mcp(error)) => {
                let observation = Observation::failed(name, &error);
                if matches!(error, Error::Closed) {
                    self.leave(&id, number, HostError::Driver(AsyncError::Mcp(error)));
                }
                observation
            }
            // The driver ended or the server could not be reached: it is gone.
            Err(error) => {
                let observation = Observation::lost(name, &error);
                self.leave(&id, number, HostError::Driver(error));
                observation
            }
        }
    }

    /// Servers that left the host since the last look, and why.
    pub fn take_failures(&self) -> Vec<ServerFailure> {
        std::mem::take(&mut self.state().failures)
    }

    /// A receiver that hears each change of the palette's tools, to offer the model the
    /// new list without reading the palette on every turn: a server joined, left (removed,
    /// closed, or gone: [`take_failures`](Host::take_failures) says why) or listed anew after
    /// saying its list changed. A change heard may leave the tools as they were (a listing
    /// the same as the last, one the palette refused). Its value counts the changes
    /// since the host started, the first listings included; a receiver starts having seen
    /// the count as it is, so [`changed`](watch::Receiver::changed) waits for the next one,
    /// and changes made while nobody looked are heard as one. `changed` fails once every
    /// clone of the host has been dropped. What the search tool discloses is no change of
    /// the tools: each [`offer_disclosed`](Host::offer_disclosed) shows it.
    pub fn palette_changes(&self) -> watch::Receiver<u64> {
        self.state().changes.subscribe()
    }

    /// Ends every server, all at once: a local one's process group, a remote one's session.
    /// Says how each ended, by id: a local server's exit status, `None` for a remote one.
    pub async fn close(&self) -> Vec<(String, Result<Option<ExitStatus>, AsyncError>)> {
        let servers = {
            let mut state = self.state();
            let servers = std::mem::take(&mut state.servers);
            for id in servers.keys() {
                state.change_palette(|p| p.remove_server(id));
            }
            servers
        };
        let closing: Vec<_> = servers
            .into_iter()
            .map(|(id, server)| (id, tokio::spawn(server.handle.clone().close())))
            .collect();
        let mut closed = Vec::new();
        for (id, close) in closing {
            closed.push((id, close.await.unwrap_or(Err(AsyncError::Ended))));
        }
        closed
    }

    fn state(&self) -> MutexGuard<'_, State> {
        self.shared.state()
    }

    /// Server `id`, the one numbered `number`, leaves the host because of `error`.
    fn leave(&self, id: &str, number: u64, error: HostError) {
        self.shared.leave(id, number, error);
    }
}

impl Shared {
    fn state(&self) -> MutexGuard<'_, State> {
        // Every change under the lock is whole before it is made (a palette change is one
        // call): a panic elsewhere leaves nothing half-written.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Sets server `id`'s new `catalog` in the palette, if the server is still the one
    /// numbered `number`; a catalog the palette refuses takes the server out. Says whether
    /// that server is still in the host, all under one lock.
    fn relisted(&self, id: &str, number: u64, catalog: &Catalog) -> bool {
        let mut state = self.state();
        let Some(server) = state.servers.get(id).filter(|s| s.number == number) else {
            return false;
        };
        let allowlist = server.allowlist.clone();
        match state.change_palette(|p| p.set_server(id, &allowlist, catalog)) {
            Ok(_) => true,
            Err(e) => {
                state.leave(id, number, HostError::Palette(e));
                false
            }
        }
    }

    /// Server `id`, the one numbered `number`, leaves the host because of `error`.
    fn leave(&self, id: &str, number: u64, error: HostError) {
        self.state().leave(id, number, error);
    }
}

impl State {
    /// Takes server `id` out of the palette and reports `error`, if the server in the host
    /// under that id is still the one numbered `number` (reports of a server that has left
    /// come from its watcher and its calls alike, and only the first counts).
    fn leave(&mut self, id: &str, number: u64, error: HostError) {
        if self.servers.get(id).is_some_and(|s| s.number == number) {
            self.servers.remove(id);
            self.change_palette(|p| p.remove_server(id));
            self.failures.push(ServerFailure::new(id, error));
        }
    }

    /// Changes the palette's tools with `change`, and tells every receiver of
    /// [`Host::palette_changes`]: every change of them goes through here, so none goes
    /// unheard.
    fn change_palette<T>(&mut self, change: impl FnOnce(&mut Palette) -> T) -> T {
        let changed = self.palette.change(change);
        self.changes.send_modify(|n| *n = n.wrapping_add(1));
        changed
    }
}

/// Starts or reaches `server`, runs the handshake, subscribes to its tool list's changes
/// where that is how it tells them, and lists its tools.
async fn open(server: HostServer, limits: DriverLimits) -> Result<Opened, HostError> {
    let (allowlist, timeout) = (
        server.config.allowlist.clone(),
        server.config.limits.operation_timeout,
    );
    let config = DriverConfig::new(server.config, limits);
    let connected = match server.at {
        ServerAt::Process(command) => crate::connect_stdio(&command, config).await,
        ServerAt::Url { url, headers } => {
            let headers: Vec<(&str, &str)> = headers
                .iter()
                .map(|(name, value)| (name.as_str(), value.as_str()))
                .collect();
            crate::connect_http(&url, &headers, config).await
        }
        _ => return Err(HostError::Unsupported { id: server.id }),
    };
    listed(connected, allowlist, timeout).await
}

/// A server `connected`, subscribed to its tool list's changes where that is how it tells
/// them, and its tools listed.
async fn listed(
    connected: Result<(Handle, Events), AsyncError>,
    allowlist: Allowlist,
    timeout: Duration,
) -> Result<Opened, HostError> {
    let (handle, events) = connected.map_err(HostError::Driver)?;
    let listener = listen_for_changes(&handle).await;
    let catalog = handle.list_tools().await.map_err(HostError::Driver)?;
    Ok(Opened {
        handle,
        events,
        listener,
        catalog,
        allowlist,
        timeout,
    })
}

/// A 2026-07-28 server that says its tool list changes says so only on a subscription,
/// which this makes; a server of an earlier revision says so unasked. One that refuses the
/// subscription is kept all the same, its tools listed again only when a call of the host's
/// finds them moved.
async fn listen_for_changes(handle: &Handle) -> Option<Listener> {
    if !handle.server().tool_changes_need_subscription() {
        return None;
    }
    handle.listen(Subscription::tools()).await.ok()
}

/// A subscription's end, while one stands.
type Ending = Pin<Box<dyn Future<Output = Result<SubscriptionEnded, AsyncError>> + Send>>;

/// Waits for the subscription's end; forever when there is none.
async fn ended(ending: &mut Option<Ending>) -> Result<SubscriptionEnded, AsyncError> {
    match ending {
        Some(ending) => ending.await,
        None => std::future::pending().await,
    }
}

/// What a server's watcher needs of the host: weakly, so that a host dropped ends its
/// servers.
struct Watched {
    host: Weak<Shared>,
    id: String,
    number: u64,
    /// [`HostLimits::subscription_ends`].
    subscription_ends: u32,
}

impl Watched {
    /// Watches the server's `events` (and its subscription to its tool list's changes, its
    /// `listener`) until it leaves the host or the host goes.
    async fn watch(self, handle: Handle, mut events: Events, listener: Option<Listener>) {
        let mut ending: Option<Ending> = listener.map(|l| Box::pin(l.ended()) as Ending);
        // Subscriptions the server ended since the last change heard.
        let mut ends = 0_u32;
        loop {
            let first = tokio::select! {
                // Events first: a connection that failed ends its subscription and says why
                // among the events, in the same step, and the why is what is reported.
                biased;
                event = events.recv() => event,
                end = ended(&mut ending) => {
                    ending = None;
                    if matches!(end, Err(AsyncError::Ended)) {
                        // The connection ended with it: the events say how.
                        continue;
                    }
                    ends = ends.saturating_add(1);
                    if ends > self.subscription_ends {
                        self.leave(HostError::SubscriptionChurn { ends });
                        return;
                    }
                    // Ended by the server, or lost: changes may have gone unheard since.
                    ending = listen_for_changes(&handle)
                        .await
                        .map(|l| Box::pin(l.ended()) as Ending);
                    if !self.list(&handle).await {
                        return;
                    }
                    continue;
                }
            };
            let Some(first) = first else {
                self.leave(HostError::Driver(AsyncError::Ended));
                return;
            };
            // Everything that arrived together is one batch: one listing for any number of
            // changes in it.
            let mut batch = vec![first];
            while let Ok(event) = events.try_recv() {
                batch.push(event);
            }
            let mut changed = false;
            for event in batch {
                match event {
                    Event::Notification(ServerNotification::ListChanged(ListKind::Tools)) => {
                        changed = true;
                        ends = 0;
                    }
                    Event::Failed(error) => {
                        self.leave(HostError::Driver(AsyncError::Mcp(error)));
                        return;
                    }
                    event => {
                        if !self.forward(&handle, event).await {
                            return;
                        }
                    }
                }
            }
            if changed && !self.list(&handle).await {
                return;
            }
        }
    }

    /// Hands `event` to the application; a request with no room in its queue is refused at
    /// once. False once the host has gone.
    async fn forward(&self, handle: &Handle, event: Event) -> bool {
        let Some(host) = self.host.upgrade() else {
            return false;
        };
        let event = HostEvent::new(self.id.as_str(), event);
        if let Err(unsent) = host.events.try_send(event) {
            host.lost.fetch_add(1, Ordering::Relaxed);
            drop(host);
            if let Event::ServerRequest(request) = unsent.into_inner().event {
                let refusal = Reply::Error(crate::driver::unseen());
                let _ = handle.answer(request.ticket(), refusal).await;
            }
        }
        true
    }

    /// Lists the server's tools again into the palette; false when the server left for it
    /// (the listing failed, or the palette refused it) or the host has gone.
    async fn list(&self, handle: &Handle) -> bool {
        let listed = handle.list_tools().await;
        let Some(host) = self.host.upgrade() else {
            return false;
        };
        match listed {
            Ok(catalog) => host.relisted(&self.id, self.number, &catalog),
            Err(error) => {
                host.leave(&self.id, self.number, HostError::Driver(error));
                false
            }
        }
    }

    fn leave(&self, error: HostError) {
        if let Some(host) = self.host.upgrade() {
            host.leave(&self.id, self.number, error);
        }
    }
}
