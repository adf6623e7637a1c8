//! `mcp-call`: list or call the tools of an MCP server you did not write, with every bound of
//! mcp-sansio, nothing run that you did not allow, and the server's whole process group ended
//! however the command ends.
//!
//! ```text
//! mcp-call [OPTIONS] --list -- COMMAND [ARG...]
//! mcp-call [OPTIONS] --offer anthropic|openai-chat|openai-responses --allow NAME... -- COMMAND [ARG...]
//! mcp-call [OPTIONS] --call NAME --allow NAME [--args JSON] -- COMMAND [ARG...]
//! mcp-call [OPTIONS] --url URL [--header 'NAME: VALUE']... --list | --offer ... | --call ...
//! mcp-call [OPTIONS] --url URL --oauth [--oauth-client-id ID] --list | --offer ... | --call ...
//! mcp-call [OPTIONS] --connect unix:PATH|tcp:HOST:PORT --list | --offer ... | --call ...
//! mcp-call [OPTIONS] --call NAME --allow NAME --elicit JSON|decline|cancel -- COMMAND [ARG...]
//! ```
//!
//! Exit codes: 0 success; 1 the tool reported an error; 2 usage error; 3 refused by this
//! application (not allowed, or arguments that break the tool's inputSchema), nothing sent; 4 the
//! server broke the protocol or is incompatible; 5 a deadline passed; 6 the server answered with a
//! JSON-RPC error; 7 the server could not be started, or exited or closed its output early (over
//! HTTP or a socket: could not be reached). Every non-zero exit prints one line on stderr.

use std::ffi::OsString;
use std::fmt::Write as _;
use std::fs::File;
use std::io::{self, IsTerminal, Write};
use std::net::TcpStream;
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::net::UnixStream;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc::RecvTimeoutError;
use std::sync::Arc;
use std::time::Duration;

use clap::{ArgGroup, Parser};
use mcp_sansio::{
    Allowlist, Asks, CallOptions, CallToolResult, Catalog, CatalogPolicy, Config, ContentBlock,
    Error, Event, Implementation, Incompatible, Limits, LogLevel, Misuse, ProtocolChoice,
    ProtocolVersion, RawObject, Reply, Root, ServerNotification, ServerRequest,
};
use mcp_sansio_host::{accept_elicited, Palette, PaletteConfig, Provider};
use mcp_sansio_http::{HttpClient, HttpClientError};
use mcp_sansio_stdio::{
    ServerCommand, StderrMode, StdioClient, StdioError, StreamClient, DEFAULT_GRACE,
};

/// List or call the tools of an MCP server over stdio, safely.
///
/// The server is started as COMMAND in a process group of its own, with only PATH and the
/// --env variables in its environment, and that whole group is ended when mcp-call ends (or
/// it is reached at --url or --connect, and only the connection is ended).
/// A tool runs only if --allow names it and the server advertises it.
#[derive(Debug, Parser)]
#[command(name = "mcp-call", version, max_term_width = 100)]
#[command(group(ArgGroup::new("action").required(true).args(["list", "call", "offer"])))]
#[command(group(ArgGroup::new("server").required(true).args(["url", "connect", "command"])))]
struct Cli {
    /// Print the server's tools, one per line: name, a tab, the first line of its description
    /// that is not blank.
    #[arg(long)]
    list: bool,

    /// Print, as JSON, what a model would be offered from this server in PROVIDER's shape:
    /// the advertised tools that --allow names, nothing else.
    #[arg(long, value_name = "PROVIDER", conflicts_with = "list")]
    offer: Option<Provider>,

    /// Call the tool NAME and print each text block of its result on its own line. The
    /// arguments are checked against the tool's inputSchema before anything is sent.
    #[arg(long, value_name = "NAME", conflicts_with_all = ["list", "offer"])]
    call: Option<String>,

    /// The call's arguments: a JSON object [default: {}].
    #[arg(long, value_name = "JSON", requires = "call", conflicts_with = "list")]
    args: Option<String>,

    /// Print the catalog (its tools, and the server's `serverInfo` beside them), or the whole
    /// result, as JSON.
    #[arg(long)]
    json: bool,

    /// Read an inputSchema with no "type" as an object schema instead of refusing the
    /// server's catalog (some real servers leave it out).
    #[arg(long)]
    untyped_schemas_as_object: bool,

    /// Read a tool's optional field written null (title, description, outputSchema,
    /// annotations) as left out, instead of refusing the server's catalog.
    #[arg(long)]
    null_fields_as_absent: bool,

    /// Allow the tool NAME to be called (repeatable). Nothing else may run.
    #[arg(long = "allow", value_name = "NAME")]
    allow: Vec<String>,

    /// The deadline of each operation (connect, list, call), in milliseconds.
    #[arg(long, value_name = "N", default_value_t = 5000,
          value_parser = clap::value_parser!(u64).range(1..))]
    timeout_ms: u64,

    /// Ask the server to report the call's progress: each report that advances restarts
    /// --timeout-ms for the call, which still ends N milliseconds after it was sent at the
    /// latest. For tools that take longer than --timeout-ms and say how far they are.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    progress_up_to_ms: Option<u64>,

    /// The largest frame accepted from the server, in bytes [default: 8388608].
    #[arg(long, value_name = "BYTES", value_parser = parse_frame_limit)]
    frame_limit: Option<usize>,

    /// How many notifications and requests of the server's may arrive while one request of
    /// the client's waits for its answer; one more fails that request [default: 4096].
    #[arg(long, value_name = "N")]
    max_notifications: Option<usize>,

    /// Ask the server for its log messages at LEVEL and above, and print each on stderr as
    /// `mcp-call: server log LEVEL [LOGGER]: DATA`, after the listing or the call, whether
    /// it succeeded or not. A server of the handshake revisions that declared no logging is
    /// not asked; what it sends anyway is printed, at LEVEL and above.
    #[arg(long, value_name = "debug|info|notice|warning|error|critical|alert|emergency",
          value_parser = parse_log_level)]
    log_level: Option<LogLevel>,

    /// Which protocol revisions to speak: auto, legacy, modern, or one revision by its date.
    #[arg(long, value_name = "auto|legacy|modern|YYYY-MM-DD", default_value = "auto",
          value_parser = parse_protocol)]
    protocol: ProtocolChoice,

    /// The oldest revision the server may choose in the handshake: 2024-11-05 or 2025-03-26
    /// reach servers built before 2025-06-18 (the archived reference servers speak only
    /// 2024-11-05), which are otherwise refused [default: 2025-06-18].
    #[arg(long, value_name = "YYYY-MM-DD", value_parser = parse_version)]
    oldest_version: Option<ProtocolVersion>,

    /// Where the server's stderr goes: null (discarded), inherit, or a file appended to.
    #[arg(long = "stderr", value_name = "null|inherit|PATH", default_value = "null",
          value_parser = parse_stderr)]
    stderr: StderrMode,

    /// Give the server the directory PATH as a root (repeatable): the client then declares
    /// roots and answers the server's roots/list with these, as file:// URIs. Without it,
    /// no roots are declared.
    #[arg(long = "root", value_name = "PATH", value_parser = parse_root)]
    roots: Vec<Root>,

    /// Answer every question the server asks the user (an elicitation, in form mode) with
    /// ANSWER: a JSON object of the values (accepted if they fit the server's form, declined
    /// if not), decline, or cancel; each question is said on stderr with its answer. Without
    /// it, no elicitation is declared.
    #[arg(long, value_name = "JSON|decline|cancel", value_parser = parse_elicit)]
    elicit: Option<Elicit>,

    /// Give the server the environment variable KEY (repeatable).
    #[arg(long = "env", value_name = "KEY=VALUE", value_parser = parse_env)]
    env: Vec<(String, String)>,

    /// Reach the server over Streamable HTTP at URL (its MCP endpoint) instead of starting
    /// one; a server of the older HTTP+SSE transport is reached at its event stream's URL
    /// (such as /sse).
    #[arg(long, value_name = "URL")]
    url: Option<String>,

    /// Reach a server already listening on the Unix socket PATH or at the TCP address
    /// HOST:PORT, speaking newline-framed JSON-RPC as over stdio, instead of starting one.
    /// Nothing is started, so closing the connection is all mcp-call ends.
    #[arg(long, value_name = "unix:PATH|tcp:HOST:PORT", value_parser = parse_socket)]
    connect: Option<Socket>,

    /// Send the header NAME: VALUE with every HTTP request (repeatable), such as a bearer
    /// token; it goes to --url only, as redirects are not followed.
    #[arg(long = "header", value_name = "NAME: VALUE", requires = "url",
          value_parser = parse_header)]
    headers: Vec<(String, String)>,

    /// If the server answers 401, authorize with OAuth: the URL to open in a browser is
    /// printed on stderr, and mcp-call waits (--oauth-wait-s) for the browser to come back to
    /// it on 127.0.0.1, then asks for a token bound to --url and goes on with it. The token
    /// is not kept.
    #[arg(long, requires = "url")]
    oauth: bool,

    /// The client id the authorization server knows mcp-call by; without it, mcp-call
    /// registers itself (when the server allows that).
    #[arg(long, value_name = "ID", requires = "oauth")]
    oauth_client_id: Option<String>,

    /// How long to wait for the browser to come back, in seconds.
    #[arg(long, value_name = "N", default_value_t = 300, requires = "oauth",
          value_parser = clap::value_parser!(u64).range(1..))]
    oauth_wait_s: u64,

    /// The server to start, and its arguments.
    #[arg(last = true, value_name = "COMMAND")]
    command: Vec<OsString>,
}

/// A directory of this machine as a root: its absolute path, symbolic links resolved, as a
/// `file://` URI (bytes outside the URI's unreserved set percent-encoded), named by its last
/// component.
fn parse_root(s: &str) -> Result<Root, String> {
    let path = std::fs::canonicalize(s).map_err(|why| format!("{s}: {why}"))?;
    if !path.is_dir() {
        return Err(format!("{s} is not a directory"));
    }
    let mut uri = String::from("file://");
    for byte in path.as_os_str().as_encoded_bytes() {
        if byte.is_ascii_alphanumeric() || b"-._~/".contains(byte) {
            uri.push(char::from(*byte));
        } else {
            let _ = write!(uri, "%{byte:02X}");
        }
    }
    let root = Root::new(uri).map_err(|why| why.to_string())?;
    Ok(match path.file_name() {
        Some(name) => root.with_name(name.to_string_lossy()),
        None => root,
    })
}

/// Where `--connect` reaches a server.
#[derive(Clone, Debug)]
enum Socket {
    Unix(PathBuf),
    Tcp(String),
}

fn parse_socket(s: &str) -> Result<Socket, String> {
    match s.split_once(':') {
        Some(("unix", path)) if !path.is_empty() => Ok(Socket::Unix(PathBuf::from(path))),
        Some(("tcp", address)) if address.contains(':') => Ok(Socket::Tcp(address.to_owned())),
        _ => Err(String::from("expected unix:PATH or tcp:HOST:PORT")),
    }
}

impl std::fmt::Display for Socket {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Socket::Unix(path) => write!(f, "unix:{}", path.display()),
            Socket::Tcp(address) => write!(f, "tcp:{address}"),
        }
    }
}

impl Socket {
    /// Connects within `timeout`, and gives the connection's two handles: one read, one
    /// written. A connection can wait far longer than any deadline (a Unix listener whose
    /// queue is full holds it until it accepts; a host that drops TCP's first packet, for
    /// the system's minutes of retries; a name's lookup), so it is made on a thread of its
    /// own, which is left to it past `timeout`: mcp-call ends soon after.
    fn open(&self, timeout: Duration) -> io::Result<(File, File)> {
        let (done, connected) = std::sync::mpsc::channel();
        let socket = self.clone();
        std::thread::spawn(move || {
            let stream: io::Result<OwnedFd> = match &socket {
                Socket::Unix(path) => UnixStream::connect(path).map(OwnedFd::from),
                Socket::Tcp(address) => TcpStream::connect(address.as_str()).map(OwnedFd::from),
            };
            let _ = done.send(stream);
        });
        let stream = match connected.recv_timeout(timeout) {
            Ok(stream) => stream?,
            Err(RecvTimeoutError::Timeout) => return Err(io::ErrorKind::TimedOut.into()),
            Err(RecvTimeoutError::Disconnected) => {
                return Err(io::Error::other(
                    "the connecting thread ended without a word",
                ))
            }
        };
        let reader = stream.try_clone()?;
        Ok((File::from(reader), File::from(stream)))
    }
}

/// The answer `--elicit` gives every question.
#[derive(Clone, Debug)]
enum Elicit {
    /// These values, where they fit the server's form.
    Accept(RawObject),
    Decline,
    Cancel,
}

fn parse_elicit(s: &str) -> Result<Elicit, String> {
    match s {
        "decline" => Ok(Elicit::Decline),
        "cancel" => Ok(Elicit::Cancel),
        values => RawObject::parse(values, &Limits::default())
            .map(Elicit::Accept)
            .map_err(|why| format!("not a JSON object, decline or cancel: {why}")),
    }
}

/// What answers the server's questions as `--elicit` says, each said on stderr with its
/// answer: values that do not fit the server's form are not sent, and the question is
/// declined.
fn answering(answer: Elicit) -> impl FnMut(&ServerRequest) -> Reply + Send {
    let config = PaletteConfig::default();
    move |request| {
        let (reply, said) = match &answer {
            Elicit::Decline => (Reply::decline(), String::from("declined")),
            Elicit::Cancel => (Reply::cancel(), String::from("cancelled")),
            Elicit::Accept(values) => match accept_elicited(request, values, &config) {
                Ok(reply) => (reply, String::from("accepted")),
                Err(why) => (Reply::decline(), format!("declined, as {why}")),
            },
        };
        let message = request.message().unwrap_or_default();
        eprintln!(
            "mcp-call: the server asks the user {:?}: {}",
            escape_controls(&message, false),
            escape_controls(&said, false)
        );
        reply
    }
}

fn parse_header(s: &str) -> Result<(String, String), String> {
    match s.split_once(':') {
        Some((name, value)) if !name.trim().is_empty() => {
            Ok((name.trim().to_owned(), value.trim().to_owned()))
        }
        _ => Err(String::from("expected 'NAME: VALUE'")),
    }
}

fn parse_frame_limit(s: &str) -> Result<usize, String> {
    match s.parse::<usize>() {
        Ok(0) => Err(String::from("the frame limit must be at least 1 byte")),
        Ok(n) => Ok(n),
        Err(e) => Err(format!("not a number of bytes: {e}")),
    }
}

fn parse_protocol(s: &str) -> Result<ProtocolChoice, String> {
    match s {
        "auto" => Ok(ProtocolChoice::Auto),
        "legacy" => Ok(ProtocolChoice::Stateful),
        "modern" => Ok(ProtocolChoice::Stateless),
        date => ProtocolVersion::parse(date)
            .map(ProtocolChoice::Pinned)
            .ok_or_else(|| format!("expected auto, legacy, modern or {}", known_versions())),
    }
}

fn parse_log_level(name: &str) -> Result<LogLevel, String> {
    LogLevel::from_name(name).ok_or_else(|| {
        let names: Vec<&str> = LogLevel::ALL.iter().map(|l| l.as_str()).collect();
        format!("expected one of {}", names.join(", "))
    })
}

fn parse_version(date: &str) -> Result<ProtocolVersion, String> {
    ProtocolVersion::parse(date).ok_or_else(|| format!("expected {}", known_versions()))
}

/// `one of` the revisions this client speaks.
fn known_versions() -> String {
    let known: Vec<&str> = ProtocolVersion::ALL.iter().map(|v| v.as_str()).collect();
    format!("one of {}", known.join(", "))
}

fn parse_stderr(s: &str) -> Result<StderrMode, String> {
    Ok(match s {
        "null" => StderrMode::Discard,
        "inherit" => StderrMode::Inherit,
        path => StderrMode::File(PathBuf::from(path)),
    })
}

fn parse_env(s: &str) -> Result<(String, String), String> {
    match s.split_once('=') {
        Some((key, value)) if !key.is_empty() => Ok((key.to_owned(), value.to_owned())),
        _ => Err(String::from("expected KEY=VALUE")),
    }
}

/// How mcp-call ended, when not in success: the exit code, and the line for stderr.
struct Failure {
    code: u8,
    message: String,
}

impl Failure {
    const TOOL_ERROR: u8 = 1;
    const USAGE: u8 = 2;
    const REFUSED: u8 = 3;
    const PROTOCOL: u8 = 4;
    const DEADLINE: u8 = 5;
    const RPC_ERROR: u8 = 6;
    const SERVER_GONE: u8 = 7;

    fn new(code: u8, message: impl Into<String>) -> Self {
        Failure {
            code,
            message: message.into(),
        }
    }

    /// The exit code for the core's `error`, by whose fault it was.
    fn code(error: &Error) -> u8 {
        match error {
            Error::Malformed(_) | Error::Protocol(_) | Error::Incompatible(_) | Error::Http(_) => {
                Self::PROTOCOL
            }
            Error::Rpc(_) => Self::RPC_ERROR,
            Error::Timeout { .. } => Self::DEADLINE,
            Error::Closed => Self::SERVER_GONE,
            // Refusals (the arguments were checked before the server started), and
            // anything else the client declined to send.
            _ => Self::REFUSED,
        }
    }

    /// The failure of the step `doing` over HTTP.
    fn of_http(doing: &str, error: &HttpClientError) -> Self {
        let code = match error {
            HttpClientError::InvalidUrl(_) | HttpClientError::InvalidHeader(_) => Self::USAGE,
            HttpClientError::Mcp(e) => Self::code(e),
            _ => Self::SERVER_GONE,
        };
        let mut message = format!("{doing}: {}", chain(error));
        if let HttpClientError::Mcp(e) = error {
            message.extend(older_revision(e));
        }
        Failure::new(code, message)
    }

    /// The failure of the step `doing` (such as "calling tool \"x\""), by whose fault it was;
    /// `stderr` is where a server mcp-call started writes its own account.
    fn of(doing: &str, error: &StdioError, stderr: Option<&StderrMode>) -> Self {
        let code = match error {
            StdioError::Spawn(_) | StdioError::Io(_) => Self::SERVER_GONE,
            StdioError::Mcp(e) => Self::code(e),
            // Reported by `main` as the signal it was.
            _ => Self::SERVER_GONE,
        };
        let mut message = format!("{doing}: {}", chain(error));
        if let StdioError::Mcp(e) = error {
            message.extend(older_revision(e));
        }
        if code == Self::SERVER_GONE && stderr == Some(&StderrMode::Discard) {
            message.push_str(" (the server's stderr was discarded; --stderr inherit shows it)");
        }
        Failure::new(code, message)
    }
}

/// What lifts a refusal of the server's revision, when it is one this client speaks if
/// asked: `--oldest-version`.
fn older_revision(error: &Error) -> Option<String> {
    match error {
        Error::Incompatible(Incompatible::UnsupportedVersion { offered })
            if ProtocolVersion::parse(offered).is_some() =>
        {
            Some(format!(" (--oldest-version {offered} accepts it)"))
        }
        _ => None,
    }
}

/// An error and its causes, one after the other: `what failed: why`.
fn chain(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut cause = error.source();
    while let Some(inner) = cause {
        text.push_str(": ");
        text.push_str(&inner.to_string());
        cause = inner.source();
    }
    text
}

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) if !e.use_stderr() => {
            // --help and --version.
            let _ = e.print();
            return ExitCode::SUCCESS;
        }
        Err(e) => {
            // clap's message without its usage block, on one line.
            let rendered = e.render().to_string();
            let message = rendered.split("\n\n").next().unwrap_or("invalid arguments");
            let words: Vec<&str> = message.split_whitespace().collect();
            let what = words.join(" ");
            let what = what.strip_prefix("error: ").unwrap_or(&what);
            // A word where no option takes one is the server's command written without the
            // `--` before it: say so, as clap's message alone does not.
            let stray = e.kind() == clap::error::ErrorKind::UnknownArgument
                && matches!(
                    e.get(clap::error::ContextKind::InvalidArg),
                    Some(clap::error::ContextValue::String(arg)) if !arg.starts_with('-')
                );
            let hint = if stray {
                "the server's command goes after --, as in mcp-call --list -- COMMAND [ARG...]"
            } else {
                "mcp-call --help shows the usage"
            };
            return report(&Failure::new(Failure::USAGE, format!("{what} ({hint})")));
        }
    };
    let stop = Arc::new(AtomicBool::new(false));
    let signal = Arc::new(AtomicUsize::new(0));
    for sig in [
        signal_hook::consts::SIGINT,
        signal_hook::consts::SIGTERM,
        signal_hook::consts::SIGHUP,
    ] {
        let registered = signal_hook::flag::register(sig, Arc::clone(&stop)).and_then(|_| {
            signal_hook::flag::register_usize(sig, Arc::clone(&signal), sig.unsigned_abs() as usize)
        });
        if let Err(e) = registered {
            return report(&Failure::new(
                Failure::SERVER_GONE,
                format!("cannot watch for signal {sig}: {e}"),
            ));
        }
    }
    match run(&cli, &stop) {
        Ok(()) => ExitCode::SUCCESS,
        Err(_) if stop.load(Ordering::Relaxed) => {
            // The server is already ended; die of the signal, as the shell expects.
            let sig = signal.load(Ordering::Relaxed);
            eprintln!("mcp-call: stopped by signal {sig}; the server's process group was ended");
            let sig = i32::try_from(sig).unwrap_or(signal_hook::consts::SIGTERM);
            let _ = signal_hook::low_level::emulate_default_handler(sig);
            ExitCode::from(128_u8.saturating_add(u8::try_from(sig).unwrap_or(0)))
        }
        Err(failure) => report(&failure),
    }
}

fn report(failure: &Failure) -> ExitCode {
    eprintln!("mcp-call: {}", escape_controls(&failure.message, false));
    ExitCode::from(failure.code)
}

/// Starts the server, does what was asked, and always ends the server's group.
fn run(cli: &Cli, stop: &Arc<AtomicBool>) -> Result<(), Failure> {
    let mut limits = Limits::default();
    limits.operation_timeout = Duration::from_millis(cli.timeout_ms);
    if let Some(bytes) = cli.frame_limit {
        limits.frame_bytes = bytes;
    }
    if let Some(count) = cli.max_notifications {
        limits.notifications_before_answer = count;
    }
    let allowlist: Allowlist = cli.allow.iter().map(String::as_str).collect();
    // What can be refused without the server is refused before it is even started.
    let call = match &cli.call {
        Some(name) if !allowlist.allows(name) => {
            return Err(Failure::new(
                Failure::REFUSED,
                format!(
                    "tool {name:?} is not allowed (name it with --allow); the server was not started"
                ),
            ));
        }
        Some(name) => {
            let arguments = RawObject::parse(cli.args.as_deref().unwrap_or("{}"), &limits)
                .map_err(|why| {
                    Failure::new(
                        Failure::USAGE,
                        format!("--args is not a JSON object: {why}"),
                    )
                })?;
            Some((name.as_str(), arguments))
        }
        None => None,
    };
    let mut config = Config::new(allowlist);
    config.limits = limits;
    config.protocol = cli.protocol;
    if let Some(oldest) = cli.oldest_version {
        config.oldest_version = oldest;
    }
    if cli.untyped_schemas_as_object {
        config.catalog_policy = config.catalog_policy.untyped_schemas_as_objects();
    }
    if cli.null_fields_as_absent {
        config.catalog_policy = config.catalog_policy.null_fields_as_absent();
    }
    config.client_name = String::from("mcp-call");
    if !cli.roots.is_empty() {
        config.roots = Some(cli.roots.clone());
    }
    if cli.elicit.is_some() {
        config.asks = Asks::NONE.with_elicitation();
    }

    if let Some(url) = &cli.url {
        let token = if cli.oauth {
            oauth::token_if_asked(url, &config, cli, stop)?
        } else {
            None
        };
        let mut server = HttpClient::new(url, config)
            .map_err(|e| Failure::of_http("reaching the server", &e))?;
        if let Some(answer) = cli.elicit.clone() {
            server.set_responder(answering(answer));
        }
        server.set_watcher(watching(cli.log_level));
        for (name, value) in &cli.headers {
            server = server
                .header(name, value)
                .map_err(|e| Failure::of_http("reaching the server", &e))?;
        }
        server.session().set_authorization(token.as_ref());
        let done = session(&mut Remote::Http(&mut server), cli, &limits, call.as_ref());
        server.close();
        return done;
    }
    if let Some(socket) = &cli.connect {
        let (reader, writer) = socket.open(limits.operation_timeout).map_err(|e| {
            Failure::new(
                Failure::SERVER_GONE,
                format!("the server at {socket} could not be reached: {e}"),
            )
        })?;
        let mut server = StreamClient::new(reader, writer, config)
            .map_err(|e| Failure::of("reaching the server", &e, None))?;
        prepare(&mut server, cli, stop);
        // Dropping the client closes the connection: all there is to end.
        return session(
            &mut Remote::Stream(&mut server),
            cli,
            &limits,
            call.as_ref(),
        );
    }
    let (program, args) = cli
        .command
        .split_first()
        .ok_or_else(|| Failure::new(Failure::USAGE, "no server command after --"))?;
    // mcp-call is its own process, so it can afford to be a subreaper: whatever the server
    // started is reaped here when the group is ended, not left to an init that may not.
    let mut command = ServerCommand::new(program)
        .args(args)
        .stderr(cli.stderr.clone())
        .reap_orphans(true);
    for (key, value) in &cli.env {
        command = command.env(key, value);
    }
    let mut server = StdioClient::spawn(&command, config).map_err(|e| {
        let why = match &e {
            StdioError::Spawn(io) => io.to_string(),
            other => chain(other),
        };
        Failure::new(
            Failure::SERVER_GONE,
            format!("the server {program:?} could not be started: {why}"),
        )
    })?;
    prepare(&mut server, cli, stop);
    let done = session(
        &mut Remote::Stdio(&mut server, &cli.stderr),
        cli,
        &limits,
        call.as_ref(),
    );
    // Ends the group whatever happened; a failure to reap cannot change the outcome.
    let _ = server.close(DEFAULT_GRACE);
    done
}

/// A blocking stream client as the options say: stopped by a signal, answering the server's
/// questions as `--elicit` says, its log messages printed as they come.
fn prepare<R: io::Read + AsFd, W: io::Write + AsFd, P>(
    server: &mut StreamClient<R, W, P>,
    cli: &Cli,
    stop: &Arc<AtomicBool>,
) {
    server.stop_when(Arc::clone(stop));
    if let Some(answer) = cli.elicit.clone() {
        server.set_responder(answering(answer));
    }
    server.set_watcher(watching(cli.log_level));
}

/// The server, over whichever transport; each step's failure says what was being done.
enum Remote<'a> {
    Stdio(&'a mut StdioClient, &'a StderrMode),
    Stream(&'a mut StreamClient<File, File>),
    Http(&'a mut HttpClient),
}

/// `$body` with `$server` the remote's client, whichever transport it is, and `$fail` what
/// makes the [`Failure`] of a step (`doing`) from its error.
macro_rules! on_remote {
    ($remote:expr, |$server:ident, $fail:ident| $body:expr) => {
        match $remote {
            Remote::Stdio($server, stderr) => {
                let $fail = |doing: &str, e: &StdioError| Failure::of(doing, e, Some(stderr));
                $body
            }
            Remote::Stream($server) => {
                let $fail = |doing: &str, e: &StdioError| Failure::of(doing, e, None);
                $body
            }
            Remote::Http($server) => {
                let $fail = |doing: &str, e: &HttpClientError| Failure::of_http(doing, e);
                $body
            }
        }
    };
}

impl Remote<'_> {
    /// Runs the handshake; the server's self-description, if it gave one.
    fn connect(&mut self) -> Result<Option<Implementation>, Failure> {
        on_remote!(self, |server, fail| server
            .connect()
            .map(|c| c.server_info)
            .map_err(|e| fail("connecting", &e)))
    }

    fn list_tools(&mut self) -> Result<Catalog, Failure> {
        on_remote!(self, |server, fail| server
            .list_tools()
            .map_err(|e| fail("listing tools", &e)))
    }

    /// Asks for log messages at `level` and above; `false` where the server declared no
    /// logging, and so was not asked.
    fn set_log_level(&mut self, level: LogLevel) -> Result<bool, Failure> {
        const DOING: &str = "asking for the server's log messages";
        on_remote!(self, |server, fail| {
            let now = server.now();
            match server.client().set_log_level(level, now) {
                Ok(op) => server.run(op).map(|()| true).map_err(|e| fail(DOING, &e)),
                Err(Misuse::CapabilityNotOffered { .. }) => Ok(false),
                Err(misuse) => Err(Failure::new(Failure::REFUSED, format!("{DOING}: {misuse}"))),
            }
        })
    }

    fn call_tool(
        &mut self,
        name: &str,
        arguments: &RawObject,
        options: CallOptions,
    ) -> Result<CallToolResult, Failure> {
        let doing = format!("calling tool {name:?}");
        on_remote!(self, |server, fail| server
            .call_tool_with(name, arguments, options)
            .map_err(|e| fail(&doing, &e)))
    }
}

/// The protocol part: connect, list, and call if asked.
fn session(
    server: &mut Remote<'_>,
    cli: &Cli,
    limits: &Limits,
    call: Option<&(&str, RawObject)>,
) -> Result<(), Failure> {
    let server_info = server.connect()?;
    if let Some(level) = cli.log_level {
        if !server.set_log_level(level)? {
            eprintln!(
                "mcp-call: the server declared no logging, so it was not asked for its log \
                 messages; those it sends anyway at {level} and above are printed"
            );
        }
    }
    let catalog = server.list_tools()?;
    if cli.list {
        print(&render_catalog(&catalog, server_info.as_ref(), cli.json));
        return Ok(());
    }
    // The application's half: what a model may hear of, and the schema check of a call.
    let mut config = PaletteConfig::default();
    config.policy = CatalogPolicy::QUARANTINE;
    config.limits = *limits;
    let mut palette = Palette::new(config);
    let allowlist: Allowlist = cli.allow.iter().map(String::as_str).collect();
    let report = palette
        .set_server("server", &allowlist, &catalog)
        .map_err(|e| Failure::new(Failure::USAGE, e.to_string()))?;
    if let Some(provider) = cli.offer {
        for dropped in &report.quarantined {
            eprintln!("mcp-call: left out of the offer: {dropped}");
        }
        print(&format!("{:#}\n", palette.offer(provider)));
        return Ok(());
    }
    let Some((name, arguments)) = call else {
        return Ok(());
    };
    if let Some(dropped) = report.quarantined.iter().find(|q| q.tool == *name) {
        return Err(Failure::new(
            Failure::PROTOCOL,
            format!("{dropped}, so its arguments cannot be checked; nothing was sent"),
        ));
    }
    if let Some(offered) = palette.tools().find(|t| t.tool.name == *name) {
        let model_name = offered.name.to_owned();
        palette
            .dispatch(&model_name, arguments.as_str())
            .map_err(|refusal| {
                Failure::new(
                    Failure::REFUSED,
                    format!("tool {name:?} refused: {refusal}; nothing was sent"),
                )
            })?;
    }
    // A tool that is not advertised is refused by the core, in its own words.
    let mut options = CallOptions::new();
    if let Some(most) = cli.progress_up_to_ms {
        options = options.progress_up_to(Duration::from_millis(most));
    }
    let result = server.call_tool(name, arguments, options)?;
    print(&render_result(&result, cli.json));
    if result.is_error {
        return Err(Failure::new(
            Failure::TOOL_ERROR,
            format!("tool {name:?} reported an error (its text is on stdout)"),
        ));
    }
    Ok(())
}

/// The listing: one line per tool, or as JSON `{"tools": [...]}` with the server's
/// `serverInfo` beside it when it gave one, so that the output is one server's entry of an
/// `mcp-palette` catalog file as it is (named by `serverInfo.name` unless `"server"` is added).
fn render_catalog(catalog: &Catalog, server_info: Option<&Implementation>, json: bool) -> String {
    let mut out = String::new();
    if json {
        let tools: Vec<String> = catalog.tools().iter().map(|t| t.to_json()).collect();
        let info = server_info
            .map(|info| format!("\"serverInfo\":{},", info.to_json()))
            .unwrap_or_default();
        let _ = writeln!(out, "{{{info}\"tools\":[{}]}}", tools.join(","));
    } else {
        for tool in catalog.tools() {
            // Some servers open a description with a line break and indent it as a block.
            let description = tool.description.as_deref().unwrap_or("");
            let first = description.lines().map(str::trim).find(|l| !l.is_empty());
            let first = escape_controls(first.unwrap_or(""), false);
            let _ = writeln!(out, "{}\t{first}", escape_controls(&tool.name, false));
        }
    }
    out
}

/// What says the server's events on stderr as they come: its log messages at `log_level`
/// and above, if asked for, and the progress of a call that asked for it.
fn watching(log_level: Option<LogLevel>) -> impl FnMut(&Event) + Send + 'static {
    move |event| {
        let line = match event {
            Event::Progress {
                progress,
                total,
                message,
                ..
            } => Some(progress_line(*progress, *total, message.as_deref())),
            _ => log_level.and_then(|least| log_line(event, least)),
        };
        if let Some(line) = line {
            eprintln!("{line}");
        }
    }
}

/// A report of a call's progress, as a line for stderr: `mcp-call: progress N[ of TOTAL][:
/// MESSAGE]`, control characters escaped.
fn progress_line(progress: f64, total: Option<f64>, message: Option<&str>) -> String {
    let mut line = format!("mcp-call: progress {progress}");
    if let Some(total) = total {
        line.push_str(&format!(" of {total}"));
    }
    if let Some(message) = message {
        line.push_str(": ");
        line.push_str(&escape_controls(message, false));
    }
    line
}

/// A log message at `least` or above, as a line for stderr: `mcp-call: server log LEVEL
/// [LOGGER]: DATA`, a text as its characters and any other value as JSON, control
/// characters escaped.
fn log_line(event: &Event, least: LogLevel) -> Option<String> {
    let Event::Notification(ServerNotification::Log {
        level,
        logger,
        data,
    }) = event
    else {
        return None;
    };
    if *level < least {
        return None;
    }
    let data = match serde_json::from_str::<serde_json::Value>(data.as_str()) {
        Ok(serde_json::Value::String(text)) => text,
        _ => data.as_str().to_owned(),
    };
    let logger = logger
        .as_deref()
        .map(|logger| format!(" {}", escape_controls(logger, false)))
        .unwrap_or_default();
    Some(format!(
        "mcp-call: server log {level}{logger}: {}",
        escape_controls(&data, false)
    ))
}

fn render_result(result: &CallToolResult, json: bool) -> String {
    let mut out = String::new();
    if json {
        out.push_str(&result.to_json());
        out.push('\n');
    } else {
        for block in &result.content {
            if let ContentBlock::Text { text, .. } = block {
                out.push_str(text);
                out.push('\n');
            }
        }
    }
    out
}

/// Writes to stdout. On a terminal, the server's control characters are shown escaped, so
/// a hostile text cannot drive the terminal; into a pipe or file, the text is exact.
fn print(text: &str) {
    let stdout = io::stdout();
    let shown = if stdout.is_terminal() {
        escape_controls(text, true)
    } else {
        text.to_owned()
    };
    let _ = stdout.lock().write_all(shown.as_bytes());
}

/// `text` with its control characters escaped (`\u{1b}`), but for newlines and tabs when
/// `keep_lines`.
fn escape_controls(text: &str, keep_lines: bool) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if c.is_control() && !(keep_lines && (c == '\n' || c == '\t')) {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    out
}

/// `--oauth`: the flow, with this machine's loopback for the browser's way back.
mod oauth {
    use std::io::{Read, Write};
    use std::net::{TcpListener, TcpStream};
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::Arc;
    use std::time::{Duration, Instant};

    use mcp_sansio::auth::{AuthError, Token};
    use mcp_sansio::{Config, Error, HttpError};
    use mcp_sansio_http::oauth::{AuthorizeError, Authorizer, ClientIdentity};
    use mcp_sansio_http::{HttpClient, HttpClientError};

    use super::{escape_controls, Cli, Failure};

    /// The longest request line the browser's way back may have.
    const LINE_BYTES: usize = 8 * 1024;
    /// How long the browser may take to send its request line, and to take the answer.
    const BROWSER_READ: Duration = Duration::from_secs(5);

    /// A token for `url`, if connecting without one is refused with 401; none if it is not.
    pub(super) fn token_if_asked(
        url: &str,
        config: &Config,
        cli: &Cli,
        stop: &Arc<AtomicBool>,
    ) -> Result<Option<Token>, Failure> {
        let mut probe = HttpClient::new(url, config.clone())
            .map_err(|e| Failure::of_http("reaching the server", &e))?;
        let challenge = match probe.connect() {
            Err(HttpClientError::Mcp(Error::Http(HttpError::Unauthorized(challenge)))) => challenge,
            _ => {
                probe.close();
                return Ok(None);
            }
        };
        let listener = TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.set_nonblocking(true).map(|()| l))
            .map_err(|e| {
                Failure::new(
                    Failure::USAGE,
                    format!("cannot listen for the browser: {e}"),
                )
            })?;
        let port = listener.local_addr().map(|a| a.port()).unwrap_or(0);
        let redirect_uri = format!("http://127.0.0.1:{port}/callback");
        let identity = ClientIdentity {
            client_id: cli.oauth_client_id.as_deref(),
            client_secret: None,
            metadata_document: None,
            client_name: "mcp-call",
            redirect_uri: &redirect_uri,
        };
        let wait = Duration::from_secs(cli.oauth_wait_s);
        let authorized = Authorizer::new(&config.limits)
            .authorize(url, challenge.as_ref(), identity, |open| {
                eprintln!(
                    "mcp-call: the server asks for authorization; open this URL in a browser: {}",
                    escape_controls(open, false)
                );
                come_back(&listener, port, wait, stop)
            })
            .map_err(|e| failure(&e))?;
        eprintln!("mcp-call: authorized; going on with the token");
        Ok(Some(authorized.token))
    }

    /// Why authorization failed, by whose fault it was.
    fn failure(error: &AuthorizeError) -> Failure {
        let code = match error {
            AuthorizeError::Unreachable(_) => Failure::SERVER_GONE,
            AuthorizeError::Browser(_) => Failure::DEADLINE,
            AuthorizeError::Auth(AuthError::NoClientId) => Failure::USAGE,
            _ => Failure::PROTOCOL,
        };
        let hint = if matches!(error, AuthorizeError::Auth(AuthError::NoClientId)) {
            " (give one with --oauth-client-id)"
        } else {
            ""
        };
        Failure::new(code, format!("authorizing: {error}{hint}"))
    }

    /// Waits for the browser at `/callback` on `listener` and answers it; the URL it came
    /// back to.
    fn come_back(
        listener: &TcpListener,
        port: u16,
        wait: Duration,
        stop: &Arc<AtomicBool>,
    ) -> Result<String, String> {
        let until = Instant::now() + wait;
        loop {
            if stop.load(Ordering::Relaxed) {
                return Err(String::from("stopped by a signal"));
            }
            if Instant::now() >= until {
                return Err(format!("the browser did not come back within {wait:?}"));
            }
            match listener.accept() {
                Ok((stream, _)) => {
                    if let Some(target) = answer(stream) {
                        return Ok(format!("http://127.0.0.1:{port}{target}"));
                    }
                }
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                    std::thread::sleep(Duration::from_millis(50));
                }
                Err(e) => return Err(format!("cannot accept the browser: {e}")),
            }
        }
    }

    /// Reads one request from the browser; its target, if it is the way back to
    /// `/callback` (anything else, such as `/favicon.ico`, gets 404 and is waited past).
    fn answer(mut stream: TcpStream) -> Option<String> {
        // One deadline for the whole request line, however slowly its bytes come.
        let until = Instant::now() + BROWSER_READ;
        stream.set_nonblocking(false).ok()?;
        stream.set_write_timeout(Some(BROWSER_READ)).ok()?;
        let (mut read, mut chunk) = (Vec::new(), [0_u8; 1024]);
        while !read.contains(&b'\n') && read.len() < LINE_BYTES {
            let left = until.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return None;
            }
            stream.set_read_timeout(Some(left)).ok()?;
            let n = stream.read(&mut chunk).ok().filter(|&n| n > 0)?;
            read.extend_from_slice(chunk.get(..n)?);
        }
        let read = String::from_utf8_lossy(&read);
        let line = read.lines().next()?;
        let mut words = line.split_whitespace();
        let target = match (words.next(), words.next()) {
            (Some("GET"), Some(target)) if target.starts_with("/callback") => Some(target),
            _ => None,
        };
        let (status, body) = match target {
            Some(_) => (
                "200 OK",
                "mcp-call has the answer; this window may be closed.\n",
            ),
            None => ("404 Not Found", "not here\n"),
        };
        let _ = write!(
            stream,
            "HTTP/1.1 {status}\r\nContent-Type: text/plain; charset=utf-8\r\n\
             Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        );
        target.map(str::to_owned)
    }
}
