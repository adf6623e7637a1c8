//! The stdio transport for [mcp-sansio](mcp_sansio): an MCP server run as a child process in
//! its own process group, spoken to over its stdin and stdout, bounded in time and memory by
//! the core, and ended completely on close.
//!
//! ```no_run
//! use mcp_sansio::{Allowlist, Config, Limits, RawObject};
//! use mcp_sansio_stdio::{ServerCommand, StdioClient};
//! use std::time::Duration;
//!
//! let allowlist: Allowlist = ["word_count"].into_iter().collect();
//! let command = ServerCommand::new("my-mcp-server").arg("--quiet");
//! let mut server = StdioClient::spawn(&command, Config::new(allowlist))?;
//! server.connect()?;
//! server.list_tools()?;
//! let args = RawObject::parse(r#"{"text":"vanilla stock needs review"}"#, &Limits::default())?;
//! println!("{}", server.call_tool("word_count", &args)?.text());
//! let status = server.close(Duration::from_secs(1))?;
//! # Ok::<(), mcp_sansio_stdio::StdioError>(())
//! ```
//!
//! Every wait is bounded by the core's [`Client::poll_timeout`](mcp_sansio::Client), so one
//! operation's deadline covers its writes and its reads together. Pipes are non-blocking and
//! waited on with `poll` through [rustix]; the server's stderr never blocks it (discarded by
//! default).
//!
//! A server reached another way (a Unix or TCP socket, a process the application started
//! itself, a serial line) is spoken to the same way by [`StreamClient`], over any reader and
//! writer with a file descriptor; [`StdioClient`] is that client over a child's pipes, with
//! the process behind them.
//!
//! With the `cli` feature (on by default) the crate also builds `mcp-call`, a command-line
//! client on this transport: `mcp-call --list -- COMMAND [ARG...]`,
//! `mcp-call --call NAME --allow NAME --args JSON -- COMMAND [ARG...]`, with fixed exit codes
//! (see its `--help` and the repository's README).

use std::fmt;
use std::io;
use std::process::{ChildStdin, ChildStdout, ExitStatus};
use std::time::Duration;

use mcp_sansio::{Config, Error, Misuse};
#[cfg(feature = "host")]
mod host;
#[cfg(feature = "host")]
pub use host::{Host, HostError, HostEvent, HostLimits, HostServer, ServerAt, ServerFailure};
mod process;
pub use process::{ServerCommand, ServerProcess, StderrMode, DEFAULT_GRACE};
mod stream;
pub use stream::StreamClient;

/// What went wrong, by who is at fault.
///
/// Each error says its own part in `Display` and leaves the cause to
/// [`source`](std::error::Error::source), so that printing the chain shows every part once:
/// `the server could not be started: No such file or directory (os error 2)`.
/// [`StdioError::Mcp`] is transparent: it reads as the core's error.
#[derive(Debug)]
#[non_exhaustive]
pub enum StdioError {
    /// The server could not be started.
    Spawn(io::Error),
    /// Reading from or writing to the server failed here (not the server's doing).
    Io(io::Error),
    /// The protocol layer refused or failed the operation; see [`mcp_sansio::Error`].
    Mcp(Error),
    /// The flag given to [`StreamClient::stop_when`] was set while an operation was awaited.
    Stopped,
}

impl fmt::Display for StdioError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StdioError::Spawn(_) => f.write_str("the server could not be started"),
            StdioError::Io(_) => f.write_str("talking to the server failed here"),
            StdioError::Mcp(e) => e.fmt(f),
            StdioError::Stopped => f.write_str("the application stopped waiting for the server"),
        }
    }
}

impl std::error::Error for StdioError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            StdioError::Spawn(e) | StdioError::Io(e) => Some(e),
            // Transparent: the core's error is this error, not its cause.
            StdioError::Mcp(e) => std::error::Error::source(e),
            StdioError::Stopped => None,
        }
    }
}

impl From<Error> for StdioError {
    fn from(e: Error) -> Self {
        StdioError::Mcp(e)
    }
}

impl From<Misuse> for StdioError {
    fn from(e: Misuse) -> Self {
        StdioError::Mcp(e.into())
    }
}

/// An MCP server started as a child process, and the [`StreamClient`] that speaks to it over
/// the process's stdout and stdin.
///
/// Every method of [`StreamClient`] works on it ([`connect`](StreamClient::connect),
/// [`list_tools`](StreamClient::list_tools), [`call_tool`](StreamClient::call_tool),
/// [`run`](StreamClient::run), ...); the process adds [`spawn`](StreamClient::spawn),
/// [`pid`](StreamClient::pid) and [`close`](StreamClient::close), which ends the server and
/// everything in its process group. Dropping the client does the same with
/// [`DEFAULT_GRACE`].
pub type StdioClient = StreamClient<ChildStdout, ChildStdin, ServerProcess>;

impl StdioClient {
    /// Starts the server in a process group of its own, with the command's environment,
    /// non-blocking pipes for stdin and stdout, and stderr where the command says.
    ///
    /// # Errors
    /// [`StdioError::Spawn`] if the program cannot be started.
    pub fn spawn(command: &ServerCommand, config: Config) -> Result<Self, StdioError> {
        let (process, stdin, stdout) = ServerProcess::spawn(command).map_err(StdioError::Spawn)?;
        StreamClient::holding(stdout, stdin, process, config).map_err(|e| match e {
            StdioError::Io(e) => StdioError::Spawn(e),
            other => other,
        })
    }

    /// The server's process id (also its process group's id).
    pub fn pid(&self) -> u32 {
        self.behind().pid()
    }

    /// Ends the server: closes its stdin, gives it `grace` to exit, then sends SIGTERM to its
    /// whole process group, then SIGKILL, and reaps it (see [`ServerProcess::close`]).
    /// Returns its exit status.
    ///
    /// # Errors
    /// [`StdioError::Io`] if the server cannot be reaped.
    pub fn close(self, grace: Duration) -> Result<ExitStatus, StdioError> {
        self.end_with(|process| process.close(grace).map_err(StdioError::Io))
    }
}
