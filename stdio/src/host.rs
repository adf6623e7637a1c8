//! Several servers at once behind one palette: the blocking host.

use std::collections::BTreeMap;
use std::fmt;
use std::process::ExitStatus;
use std::time::Duration;

use mcp_sansio::{Allowlist, Config, Event, ListKind, ServerNotification};
use mcp_sansio_host::{
    Observation, Palette, PaletteConfig, PaletteError, Provider, ToolIndex, SEARCH_TOOL,
};
use serde_json::Value;

use crate::{ServerCommand, StdioClient, StdioError};

/// One server for a [`Host`] to start: its id in the palette (which may prefix its tools'
/// names), how to start it, and the client's configuration, allowlist included.
#[derive(Debug)]
#[non_exhaustive]
pub struct HostServer {
    /// The server's id: 1 to 32 characters from `A-Z a-z 0-9 _ -`.
    pub id: String,
    /// How to start it.
    pub command: ServerCommand,
    /// The client's configuration; its allowlist decides what of this server is offered.
    pub config: Config,
}

impl HostServer {
    /// Server `id`, started by `command`, spoken to under `config`.
    pub fn new(id: impl Into<String>, command: ServerCommand, config: Config) -> Self {
        HostServer {
            id: id.into(),
            command,
            config,
        }
    }
}

/// A server the host could not start, connect, list or keep.
#[derive(Debug)]
#[non_exhaustive]
pub struct ServerFailure {
    /// The server's id.
    pub id: String,
    /// What went wrong.
    pub error: HostError,
}

impl fmt::Display for ServerFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "server {:?}: {}", self.id, self.error)
    }
}

/// Why a server left the host, by whose doing.
#[derive(Debug)]
#[non_exhaustive]
pub enum HostError {
    /// Starting it, the handshake or the listing failed, or it went away.
    Stdio(StdioError),
    /// Its catalog could not join the palette.
    Palette(PaletteError),
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
            HostError::Palette(e) => e.fmt(f),
        }
    }
}

impl std::error::Error for HostError {}

/// Many servers, one palette: each started in its own process group, each call routed to
/// the server behind its tool, and every group ended on [`close`](Host::close) (or drop).
///
/// A server that fails to start, to connect or to list its tools is reported by
/// [`start`](Host::start) and left out; one that dies later is reported by
/// [`take_failures`](Host::take_failures) and its tools leave the palette. The others go on.
#[derive(Debug)]
pub struct Host {
    palette: Palette,
    /// BM25 over the palette, for the search tool; built again whenever the palette changes.
    index: ToolIndex,
    servers: BTreeMap<String, Joined>,
    failures: Vec<ServerFailure>,
}

/// A server in the host, with the allowlist its catalog is read under.
#[derive(Debug)]
struct Joined {
    client: StdioClient,
    allowlist: Allowlist,
    /// The deadline each of its calls is sent under.
    timeout: Duration,
}

impl Host {
    /// Starts every server (all processes first, so that they start together), then
    /// connects to each and lists its tools into one palette, in the order given.
    pub fn start(
        servers: impl IntoIterator<Item = HostServer>,
        palette: PaletteConfig,
    ) -> (Host, Vec<ServerFailure>) {
        let palette = Palette::new(palette);
        let mut host = Host {
            index: ToolIndex::bm25(&palette),
            palette,
            servers: BTreeMap::new(),
            failures: Vec::new(),
        };
        let mut started = Vec::new();
        let mut failures = Vec::new();
        for server in servers {
            let allowlist = server.config.allowlist.clone();
            let timeout = server.config.limits.operation_timeout;
            match StdioClient::spawn(&server.command, server.config) {
                Ok(client) => started.push((
                    server.id,
                    Joined {
                        client,
                        allowlist,
                        timeout,
                    },
                )),
                Err(e) => failures.push(ServerFailure {
                    id: server.id,
                    error: HostError::Stdio(e),
                }),
            }
        }
        for (id, mut server) in started {
            let joined = server
                .client
                .connect()
                .and_then(|_| server.client.list_tools())
                .map_err(HostError::Stdio)
                .and_then(|catalog| {
                    host.palette
                        .set_server(&id, &server.allowlist, &catalog)
                        .map_err(HostError::Palette)
                });
            match joined {
                Ok(_) => {
                    host.servers.insert(id, server);
                }
                Err(error) => {
                    let _ = server.client.close(crate::DEFAULT_GRACE);
                    failures.push(ServerFailure { id, error });
                }
            }
        }
        host.index = ToolIndex::bm25(&host.palette);
        (host, failures)
    }

    /// The palette: what the model is offered, and the server behind each name.
    pub fn palette(&self) -> &Palette {
        &self.palette
    }

    /// The tools to offer the model, in `provider`'s shape.
    pub fn offer(&self, provider: Provider) -> Value {
        self.palette.offer(provider)
    }

    /// The offer of progressive disclosure, in `provider`'s shape: the search tool
    /// ([`SEARCH_TOOL`]) and the tools the model has found so far
    /// (see [`Palette::offer_disclosed`]). The model's calls of the search tool go through
    /// [`call`](Host::call) like any other.
    pub fn offer_disclosed(&self, provider: Provider) -> Value {
        self.palette.offer_disclosed(provider)
    }

    /// The process id of server `id`, while it is in the host.
    pub fn pid(&self, id: &str) -> Option<u32> {
        self.servers.get(id).map(|server| server.client.pid())
    }

    /// Runs the model's call of `name` with argument text `arguments`, and says what the
    /// model should read. A refused call sends nothing; a failed call is a failure, never a
    /// result. A server that turns out to be gone leaves the host, and is reported by
    /// [`take_failures`](Host::take_failures). A `tools/list_changed` from the server behind
    /// the call is acted on before returning: its catalog is listed again and the palette
    /// updated (surviving tools keep their names).
    ///
    /// A call of [`SEARCH_TOOL`] is the host's own: BM25 over the palette, the tools found
    /// disclosed and listed for the model; no server hears of it.
    pub fn call(&mut self, name: &str, arguments: &str) -> Observation {
        if name == SEARCH_TOOL {
            return match self.palette.search(&self.index, arguments) {
                Ok(found) => Observation::Answer {
                    text: found.to_string(),
                },
                Err(refusal) => Observation::refused(&refusal),
            };
        }
        let dispatch = match self.palette.dispatch(name, arguments) {
            Ok(dispatch) => dispatch,
            Err(refusal) => return Observation::refused(&refusal),
        };
        let id = dispatch.server.to_owned();
        let Some(server) = self.servers.get_mut(&id) else {
            return Observation::lost(name, &"its server has left");
        };
        let (observation, gone) = match server.client.call_tool(dispatch.tool, &dispatch.arguments)
        {
            Ok(result) => (self.palette.observe(name, &result), None),
            Err(StdioError::Mcp(mcp_sansio::Error::Timeout { .. })) => {
                (Observation::timed_out(name, server.timeout), None)
            }
            Err(StdioError::Mcp(error)) => {
                let observation = Observation::failed(name, &error);
                let gone =
                    matches!(error, mcp_sansio::Error::Closed).then_some(StdioError::Mcp(error));
                (observation, gone)
            }
            Err(other) => {
                let observation = Observation::lost(name, &other);
                (
                    observation,
                    matches!(other, StdioError::Io(_)).then_some(other),
                )
            }
        };
        self.after_call(&id, gone);
        observation
    }

    /// Looks at what server `id` said besides the answer: a list change is listed again; a
    /// server that is `gone`, or whose connection failed, leaves the host.
    fn after_call(&mut self, id: &str, mut gone: Option<StdioError>) {
        let Some(server) = self.servers.get_mut(id) else {
            return;
        };
        let mut relist = false;
        for event in server.client.take_events() {
            match event {
                Event::Notification(ServerNotification::ListChanged(ListKind::Tools)) => {
                    relist = true;
                }
                Event::Failed(error) => gone = Some(StdioError::Mcp(error)),
                _ => {}
            }
        }
        if gone.is_none() && relist {
            match server.client.list_tools() {
                Ok(catalog) => {
                    if let Err(e) = self.palette.set_server(id, &server.allowlist, &catalog) {
                        self.drop_server(id, HostError::Palette(e));
                    }
                    self.index = ToolIndex::bm25(&self.palette);
                }
                Err(e) => gone = Some(e),
            }
        }
        if let Some(error) = gone {
            self.drop_server(id, HostError::Stdio(error));
        }
    }

    fn drop_server(&mut self, id: &str, error: HostError) {
        self.palette.remove_server(id);
        self.index = ToolIndex::bm25(&self.palette);
        if let Some(server) = self.servers.remove(id) {
            let _ = server.client.close(crate::DEFAULT_GRACE);
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

    /// Ends every server's process group (each given `grace` to exit after its input closes)
    /// and says how each ended.
    pub fn close(self, grace: Duration) -> Vec<(String, Result<ExitStatus, StdioError>)> {
        self.servers
            .into_iter()
            .map(|(id, server)| (id, server.client.close(grace)))
            .collect()
    }
}
