//! HTTP/1.1 as this transport speaks it, over a standard TCP socket (and rustls for
//! `https://`): each request written in one piece, each reply read through one bounded buffer
//! per connection, and idle connections kept for the next exchange.
//!
//! Nothing here knows MCP: the core decides every header and reads every body. This file
//! decides only HTTP's own framing (RFC 9112): where a reply's head ends, how long its body
//! is (`Content-Length`, chunked, or until the connection closes), and whether the
//! connection may carry another exchange. Redirects are never followed, and no proxy is
//! used: every byte goes to the URL's own host.

use std::io::{self, Read, Write};
use std::net::{SocketAddr, TcpStream, ToSocketAddrs};
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

use crate::{HttpClientError, Seen};

/// The most header fields one reply head may carry; a head with more is refused whole.
/// Real servers send about a dozen; the head's size is bounded separately, by
/// [`Limits::reply_head_bytes`](mcp_sansio::Limits).
const HEADER_FIELDS: usize = 128;

/// How many bytes a connection's buffer holds at first. A reply head that needs more grows
/// it, up to the head's bound.
pub(crate) const READ_BYTES: usize = 16 * 1024;

/// The headers this transport writes itself; one of the application's by these names would
/// change how the request is framed or where it goes.
const RESERVED: [&str; 5] = [
    "host",
    "content-length",
    "transfer-encoding",
    "connection",
    "upgrade",
];

/// Where the requests go: the server's URL parsed and its host resolved once, the TLS
/// configuration built once, and the connections waiting for the next exchange.
pub(crate) struct Target {
    /// The `Host` header: the URL's host, with its port when the URL names one.
    authority: String,
    /// What the request line asks for: the URL's path and query.
    path: String,
    addrs: Vec<SocketAddr>,
    #[cfg(feature = "rustls")]
    tls: Option<Tls>,
    /// The longest reply head, and the longest framing line of a chunked body.
    head_bytes: usize,
    /// Connections whose last reply was read to its end, most recent last.
    idle: Mutex<Vec<Conn>>,
    max_idle: usize,
}

#[cfg(feature = "rustls")]
struct Tls {
    config: std::sync::Arc<rustls::ClientConfig>,
    name: rustls::pki_types::ServerName<'static>,
}

impl Target {
    /// The server at `url`, its host resolved now; at most `max_idle` idle connections are
    /// kept, and no reply head may be longer than `head_bytes`.
    pub(crate) fn new(
        url: &str,
        head_bytes: usize,
        max_idle: usize,
    ) -> Result<Self, HttpClientError> {
        let parsed = Url::parse(url)
            .map_err(|why| HttpClientError::InvalidUrl(format!("{url:?}: {why}")))?;
        if parsed.tls && !cfg!(feature = "rustls") {
            return Err(HttpClientError::InvalidUrl(format!(
                "{url:?}: https:// needs the rustls feature"
            )));
        }
        let addrs: Vec<SocketAddr> = (parsed.host, parsed.port)
            .to_socket_addrs()
            .map_err(|e| {
                HttpClientError::Unreachable(format!("cannot resolve {}: {e}", parsed.host))
            })?
            .collect();
        if addrs.is_empty() {
            return Err(HttpClientError::Unreachable(format!(
                "{} has no address",
                parsed.host
            )));
        }
        Ok(Target {
            #[cfg(feature = "rustls")]
            tls: parsed.tls.then(|| Tls::new(parsed.host)).transpose()?,
            authority: parsed.authority.to_owned(),
            path: parsed.path,
            addrs,
            head_bytes,
            idle: Mutex::new(Vec::new()),
            max_idle,
        })
    }

    /// Performs one exchange: `method` with `headers` and `body` (a `Content-Length` is sent
    /// when `body` is `Some`), all of it within `timeout`. What it sees of the reply goes to
    /// `sink` until the reply ends or breaks, or `sink` returns `false`.
    ///
    /// `opened` sees the connection's socket once the request is written, so that an
    /// exchange meant to last can be shut down from another thread.
    #[allow(clippy::too_many_arguments)] // the request's parts, its bound, and two hooks
    pub(crate) fn exchange<'h>(
        &self,
        method: &str,
        path: Option<&str>,
        headers: impl Iterator<Item = (&'h str, &'h str)>,
        body: Option<&[u8]>,
        timeout: Duration,
        opened: &dyn Fn(&TcpStream),
        sink: &mut dyn FnMut(Seen<'_>) -> bool,
    ) {
        let deadline = Instant::now()
            .checked_add(timeout)
            .unwrap_or_else(|| Instant::now() + Duration::from_secs(86_400));
        let started = self
            .request(method, path, headers, body)
            .and_then(|request| {
                let mut conn = self.send(&request, deadline)?;
                if let Some(tcp) = conn.stream.tcp() {
                    opened(tcp);
                }
                let head = conn.read_head(deadline, self.head_bytes)?;
                Ok((conn, head))
            });
        let (mut conn, head) = match started {
            Ok(started) => started,
            Err(why) => {
                sink(Seen::Broken {
                    before_head: true,
                    why,
                });
                return;
            }
        };
        let seen = Seen::Head {
            status: head.status,
            fields: &head.fields,
        };
        if !sink(seen) {
            return;
        }
        match conn.read_body(head.framing, deadline, self.head_bytes, sink) {
            BodyEnd::Whole => {
                if head.keep_alive {
                    self.keep(conn);
                }
                sink(Seen::End);
            }
            BodyEnd::Stopped => {}
            BodyEnd::Broken(why) => {
                sink(Seen::Broken {
                    before_head: false,
                    why,
                });
            }
        }
    }

    /// The request's bytes: its head, then its body. It asks for `path` (a path and query on
    /// this target's host) when given, else for the URL's own.
    fn request<'h>(
        &self,
        method: &str,
        path: Option<&str>,
        headers: impl Iterator<Item = (&'h str, &'h str)>,
        body: Option<&[u8]>,
    ) -> Result<Vec<u8>, String> {
        let path = path.unwrap_or(&self.path);
        if !path.starts_with('/') || !path.bytes().all(|b| b.is_ascii_graphic()) {
            return Err(format!(
                "the request's path {path:?} is not a path of visible ASCII"
            ));
        }
        let body_len = body.map_or(0, <[u8]>::len);
        // Room for the usual head; an application's long headers grow it once.
        let mut out = Vec::with_capacity(512 + self.authority.len() + path.len() + body_len);
        for piece in [method, " ", path, " HTTP/1.1\r\nHost: ", &self.authority] {
            out.extend_from_slice(piece.as_bytes());
        }
        out.extend_from_slice(b"\r\nUser-Agent: mcp-sansio-http\r\n");
        for (name, value) in headers {
            // The names are the core's own and the application's were checked when added;
            // a value is checked here, so that no line break can reach the request.
            if !visible(value.as_bytes()) {
                return Err(format!(
                    "the request's {name} header holds a line break or a control"
                ));
            }
            for piece in [name, ": ", value, "\r\n"] {
                out.extend_from_slice(piece.as_bytes());
            }
        }
        if let Some(body) = body {
            // Writing to a Vec cannot fail.
            let _ = write!(out, "Content-Length: {}\r\n\r\n", body.len());
            out.extend_from_slice(body);
        } else {
            out.extend_from_slice(b"\r\n");
        }
        Ok(out)
    }

    /// Writes `request` on an idle connection that is still open, or on a new one.
    fn send(&self, request: &[u8], deadline: Instant) -> Result<Conn, String> {
        let mut conn = match self.reusable() {
            Some(conn) => conn,
            None => self.open(deadline)?,
        };
        conn.write(request, deadline)
            .map_err(|e| format!("cannot send the request: {}", said(&e)))?;
        Ok(conn)
    }

    /// The most recent idle connection the server has not closed; closed ones are dropped.
    fn reusable(&self) -> Option<Conn> {
        let mut idle = self.idle.lock().unwrap_or_else(PoisonError::into_inner);
        while let Some(conn) = idle.pop() {
            if conn.is_open() {
                return Some(conn);
            }
        }
        None
    }

    /// Keeps `conn` for a later exchange, unless enough are kept already.
    fn keep(&self, conn: Conn) {
        let mut idle = self.idle.lock().unwrap_or_else(PoisonError::into_inner);
        if idle.len() < self.max_idle {
            idle.push(conn);
        }
    }

    /// A new connection to the first of the server's addresses that answers.
    fn open(&self, deadline: Instant) -> Result<Conn, String> {
        let mut last = None;
        for addr in &self.addrs {
            let tcp = remaining(deadline)
                .and_then(|left| TcpStream::connect_timeout(addr, left))
                .and_then(|tcp| tcp.set_nodelay(true).map(|()| tcp));
            match tcp {
                Ok(tcp) => return self.wrap(tcp).map(Conn::new),
                Err(e) => last = Some(format!("cannot connect to {addr}: {}", said(&e))),
            }
        }
        Err(last.unwrap_or_else(|| format!("{} has no address", self.authority)))
    }

    #[cfg(not(feature = "rustls"))]
    #[allow(clippy::unnecessary_wraps)]
    fn wrap(&self, tcp: TcpStream) -> Result<Stream, String> {
        Ok(Stream::Plain(tcp))
    }

    #[cfg(feature = "rustls")]
    fn wrap(&self, tcp: TcpStream) -> Result<Stream, String> {
        let Some(tls) = &self.tls else {
            return Ok(Stream::Plain(tcp));
        };
        let session = rustls::ClientConnection::new(tls.config.clone(), tls.name.clone())
            .map_err(|e| format!("cannot start TLS: {e}"))?;
        Ok(Stream::Tls(Box::new(rustls::StreamOwned::new(
            session, tcp,
        ))))
    }
}

#[cfg(feature = "rustls")]
impl Tls {
    /// TLS to `host`, verified against the webpki roots, with aws-lc-rs's cryptography.
    fn new(host: &str) -> Result<Self, HttpClientError> {
        let roots = rustls::RootCertStore {
            roots: webpki_roots::TLS_SERVER_ROOTS.to_vec(),
        };
        Tls::trusting(host, roots)
    }

    /// TLS to `host`, verified against `roots`.
    fn trusting(host: &str, roots: rustls::RootCertStore) -> Result<Self, HttpClientError> {
        let invalid = |why: String| HttpClientError::InvalidUrl(why);
        // aws-lc-rs, not ring: its provider offers the hybrid post-quantum key exchange
        // (X25519MLKEM768) first, as browsers do; rustls deprecates ring's for lacking one.
        let provider = std::sync::Arc::new(rustls::crypto::aws_lc_rs::default_provider());
        let config = rustls::ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .map_err(|e| invalid(format!("no TLS version to offer: {e}")))?
            .with_root_certificates(roots)
            .with_no_client_auth();
        let name = rustls::pki_types::ServerName::try_from(host.to_owned())
            .map_err(|e| invalid(format!("{host:?} is not a name TLS can verify: {e}")))?;
        Ok(Tls {
            config: std::sync::Arc::new(config),
            name,
        })
    }
}

/// Refuses a header that is not valid HTTP, or that this transport writes itself: a name of
/// token characters, a value of visible ASCII, spaces and tabs (no line break can end it).
pub(crate) fn check_header(name: &str, value: &str) -> Result<(), String> {
    let token = |b: u8| {
        matches!(
            b,
            b'!' | b'#'..=b'\'' | b'*' | b'+' | b'-' | b'.' | b'^' | b'_' | b'`' | b'|' | b'~'
        ) || b.is_ascii_alphanumeric()
    };
    if name.is_empty() || !name.bytes().all(token) {
        return Err(format!("name {name:?} is not an HTTP token"));
    }
    if RESERVED.iter().any(|r| name.eq_ignore_ascii_case(r)) {
        return Err(format!("{name:?} is written by the transport itself"));
    }
    if !visible(value.as_bytes()) {
        return Err(format!(
            "{name:?}'s value holds a byte outside visible ASCII, space and tab"
        ));
    }
    Ok(())
}

/// What a URL names, as this transport reads it.
#[derive(Debug, PartialEq, Eq)]
struct Url<'a> {
    tls: bool,
    /// The host to resolve: a name, an IPv4 address or an IPv6 address without brackets.
    host: &'a str,
    port: u16,
    /// The URL's host and port as written, for the `Host` header.
    authority: &'a str,
    /// The path and query, `/` when the URL has neither; never the fragment.
    path: String,
}

impl<'a> Url<'a> {
    fn parse(url: &'a str) -> Result<Self, &'static str> {
        let (tls, rest) = if let Some(rest) = url.strip_prefix("http://") {
            (false, rest)
        } else if let Some(rest) = url.strip_prefix("https://") {
            (true, rest)
        } else {
            return Err("it does not start with http:// or https://");
        };
        let rest = rest.split('#').next().unwrap_or_default();
        let (authority, target) = rest.split_at(rest.find(['/', '?']).unwrap_or(rest.len()));
        if authority.contains('@') {
            return Err("it holds credentials; give them as a header (Authorization)");
        }
        let (host, port) = match authority.strip_prefix('[') {
            Some(bracketed) => {
                let (host, after) = bracketed.split_once(']').ok_or("its [ has no ]")?;
                if host.is_empty()
                    || !host
                        .bytes()
                        .all(|b| b.is_ascii_hexdigit() || b == b':' || b == b'.')
                {
                    return Err("its IPv6 address is invalid");
                }
                (
                    host,
                    after.strip_prefix(':').or(after.is_empty().then_some("")),
                )
            }
            None => match authority.rsplit_once(':') {
                Some((host, port)) => (host, Some(port)),
                None => (authority, Some("")),
            },
        };
        let port = port.ok_or("its port does not follow a :")?;
        let name_byte = |b: u8| b.is_ascii_alphanumeric() || b == b'-' || b == b'.' || b == b'_';
        if host.is_empty() || (!authority.starts_with('[') && !host.bytes().all(name_byte)) {
            return Err("it has no valid host");
        }
        let port = match port {
            "" if tls => 443,
            "" => 80,
            digits if digits.bytes().all(|b| b.is_ascii_digit()) => digits
                .parse()
                .map_err(|_| "its port is not a port number")?,
            _ => return Err("its port is not a port number"),
        };
        if !target.bytes().all(|b| (b'!'..=b'~').contains(&b)) {
            return Err(
                "its path holds a space, a control or a non-ASCII byte (percent-encode it)",
            );
        }
        let path = match target.strip_prefix('?') {
            _ if target.is_empty() => String::from("/"),
            Some(_) => format!("/{target}"),
            None => target.to_owned(),
        };
        Ok(Url {
            tls,
            host,
            port,
            authority,
            path,
        })
    }
}

/// A connection's byte stream.
enum Stream {
    Plain(TcpStream),
    #[cfg(feature = "rustls")]
    Tls(Box<rustls::StreamOwned<rustls::ClientConnection, TcpStream>>),
    /// Scripted bytes in place of a socket, for the framing tests and the fuzz target.
    #[cfg(any(test, feature = "_fuzz"))]
    Script(script::Script),
}

impl Stream {
    /// The socket under the stream, for its timeouts.
    fn tcp(&self) -> Option<&TcpStream> {
        match self {
            Stream::Plain(tcp) => Some(tcp),
            #[cfg(feature = "rustls")]
            Stream::Tls(tls) => Some(tls.get_ref()),
            #[cfg(any(test, feature = "_fuzz"))]
            Stream::Script(_) => None,
        }
    }
}

impl Read for Stream {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Stream::Plain(tcp) => tcp.read(buf),
            #[cfg(feature = "rustls")]
            Stream::Tls(tls) => tls.read(buf),
            #[cfg(any(test, feature = "_fuzz"))]
            Stream::Script(script) => script.read(buf),
        }
    }
}

impl Write for Stream {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Stream::Plain(tcp) => tcp.write(buf),
            #[cfg(feature = "rustls")]
            Stream::Tls(tls) => tls.write(buf),
            #[cfg(any(test, feature = "_fuzz"))]
            Stream::Script(script) => script.write(buf),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match self {
            Stream::Plain(tcp) => tcp.flush(),
            #[cfg(feature = "rustls")]
            Stream::Tls(tls) => tls.flush(),
            #[cfg(any(test, feature = "_fuzz"))]
            Stream::Script(script) => script.flush(),
        }
    }
}

/// Whether nothing waits to be read on `tcp`, not even its end: one peek that does not
/// block, with `MSG_DONTWAIT` where there is one.
#[cfg(unix)]
fn nothing_waits(tcp: &TcpStream) -> bool {
    let mut one = [std::mem::MaybeUninit::<u8>::uninit()];
    let peeked =
        socket2::SockRef::from(tcp).recv_with_flags(&mut one, libc::MSG_PEEK | libc::MSG_DONTWAIT);
    matches!(peeked, Err(e) if e.kind() == io::ErrorKind::WouldBlock)
}

/// Whether nothing waits to be read on `tcp`, not even its end: a peek with the socket
/// made non-blocking for it.
#[cfg(not(unix))]
fn nothing_waits(tcp: &TcpStream) -> bool {
    if tcp.set_nonblocking(true).is_err() {
        return false;
    }
    let peeked = tcp.peek(&mut [0_u8; 1]);
    let restored = tcp.set_nonblocking(false).is_ok();
    restored && matches!(peeked, Err(e) if e.kind() == io::ErrorKind::WouldBlock)
}

/// How long until `deadline`; an error once it has passed.
fn remaining(deadline: Instant) -> io::Result<Duration> {
    let left = deadline.saturating_duration_since(Instant::now());
    if left.is_zero() {
        return Err(io::Error::new(
            io::ErrorKind::TimedOut,
            "the exchange's deadline passed",
        ));
    }
    Ok(left)
}

/// An I/O error as this transport words it; TLS's own errors say they are TLS's.
fn said(e: &io::Error) -> String {
    match e.kind() {
        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut => {
            String::from("the exchange's deadline passed")
        }
        _ if tls_error(e) => format!("TLS failed: {e}"),
        _ => e.to_string(),
    }
}

/// Whether `e` is rustls's (a handshake or record that failed).
#[cfg(feature = "rustls")]
fn tls_error(e: &io::Error) -> bool {
    e.get_ref().is_some_and(|inner| inner.is::<rustls::Error>())
}

#[cfg(not(feature = "rustls"))]
fn tls_error(_: &io::Error) -> bool {
    false
}

/// How a reply's body is delimited (RFC 9112, section 6.3).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Framing {
    /// No body (1xx, 204, 304).
    Empty,
    /// `Content-Length` bytes.
    Length(u64),
    /// Chunked transfer coding.
    Chunked,
    /// Everything until the server closes the connection.
    Close,
}

/// The header fields of a reply that someone reads: the session's
/// ([`HttpSession::REPLY_HEADERS`](mcp_sansio::HttpSession::REPLY_HEADERS)), and `Location`
/// for an OAuth redirect. Each is the first field of its name, but `WWW-Authenticate`,
/// whose fields are joined by `, ` (RFC 9110, section 5.3); only visible ASCII is kept.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Fields {
    pub(crate) content_type: Option<String>,
    pub(crate) session_id: Option<String>,
    pub(crate) www_authenticate: Option<String>,
    pub(crate) location: Option<String>,
}

impl Fields {
    /// What the session reads of a reply with `status` and these fields.
    pub(crate) fn reply_head(&self, status: u16) -> mcp_sansio::ReplyHead<'_> {
        mcp_sansio::ReplyHead {
            status,
            content_type: self.content_type.as_deref(),
            session_id: self.session_id.as_deref(),
            www_authenticate: self.www_authenticate.as_deref(),
        }
    }
}

/// A reply's head, as the transport needs it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Head {
    status: u16,
    fields: Fields,
    framing: Framing,
    /// Whether the connection may carry another exchange once the body is read.
    keep_alive: bool,
}

impl Head {
    fn of(reply: &httparse::Response<'_, '_>) -> Result<Head, String> {
        let status = reply.code.ok_or("the reply has no status")?;
        let text = |value: &[u8]| {
            visible(value)
                .then(|| std::str::from_utf8(value).ok().map(str::to_owned))
                .flatten()
        };
        let mut fields = Fields::default();
        // Whether the last transfer coding is chunked, if there is one.
        let mut chunked = None;
        let mut length = None;
        let mut length_valid = true;
        let mut close = false;
        for field in reply.headers.iter() {
            let name = field.name;
            // httparse's values borrow the buffer; copied out only where kept.
            let value: &[u8] = field.value;
            if name.eq_ignore_ascii_case("content-type") {
                fields.content_type = fields.content_type.or_else(|| text(value));
            } else if name.eq_ignore_ascii_case("mcp-session-id") {
                fields.session_id = fields.session_id.or_else(|| text(value));
            } else if name.eq_ignore_ascii_case("location") {
                fields.location = fields.location.or_else(|| text(value));
            } else if name.eq_ignore_ascii_case("www-authenticate") {
                if let Some(value) = text(value) {
                    match &mut fields.www_authenticate {
                        Some(joined) => {
                            joined.push_str(", ");
                            joined.push_str(&value);
                        }
                        None => fields.www_authenticate = Some(value),
                    }
                }
            } else if name.eq_ignore_ascii_case("transfer-encoding") {
                for coding in value.split(|&b| b == b',').map(<[u8]>::trim_ascii) {
                    if !coding.is_empty() {
                        chunked = Some(coding.eq_ignore_ascii_case(b"chunked"));
                    }
                }
            } else if name.eq_ignore_ascii_case("content-length") {
                for digits in value.split(|&b| b == b',').map(<[u8]>::trim_ascii) {
                    match (decimal(digits), length) {
                        (Some(n), None) => length = Some(n),
                        (Some(n), Some(before)) if n == before => {}
                        _ => length_valid = false,
                    }
                }
            } else if name.eq_ignore_ascii_case("connection") {
                close |= value
                    .split(|&b| b == b',')
                    .any(|t| t.trim_ascii().eq_ignore_ascii_case(b"close"));
            }
        }
        let framing = if (100..200).contains(&status) || status == 204 || status == 304 {
            Framing::Empty
        } else if let Some(chunked) = chunked {
            if chunked {
                Framing::Chunked
            } else {
                Framing::Close
            }
        } else if let Some(length) = length.filter(|_| length_valid) {
            Framing::Length(length)
        } else if length_valid {
            Framing::Close
        } else {
            return Err(String::from("the reply's Content-Length is invalid"));
        };
        let keep_alive =
            reply.version == Some(1) && status != 101 && framing != Framing::Close && !close;
        Ok(Head {
            status,
            fields,
            framing,
            keep_alive,
        })
    }
}

/// Whether `value` is visible ASCII, spaces and tabs only: no byte can end a header line.
///
/// Every byte is looked at, with no early exit, so that the check compiles to wide compares:
/// a header value is short, and a bad one rare.
fn visible(value: &[u8]) -> bool {
    value.iter().fold(true, |ok, &b| {
        ok & ((b.wrapping_sub(b' ') <= b'~' - b' ') | (b == b'\t'))
    })
}

/// A `Content-Length`: decimal digits only, no sign, no more than a `u64` holds.
fn decimal(digits: &[u8]) -> Option<u64> {
    if digits.is_empty() {
        return None;
    }
    digits.iter().try_fold(0_u64, |n, &b| {
        let digit = u64::from(b.checked_sub(b'0').filter(|d| *d < 10)?);
        n.checked_mul(10)?.checked_add(digit)
    })
}

/// Whether a reply head ends in `bytes`: a line feed followed by an empty line.
fn head_ends(bytes: &[u8]) -> bool {
    let mut rest = bytes;
    while let Some(at) = rest.iter().position(|&b| b == b'\n') {
        rest = rest.get(at + 1..).unwrap_or_default();
        if rest.first() == Some(&b'\n') || rest.starts_with(b"\r\n") {
            return true;
        }
    }
    false
}

/// How reading a body ended.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum BodyEnd {
    /// Read to its end: the connection is where the next reply would start.
    Whole,
    /// The sink stopped reading.
    Stopped,
    /// The body broke off, or its framing was invalid.
    Broken(String),
}

/// One connection, and the bytes read from it and not yet used.
pub(crate) struct Conn {
    stream: Stream,
    buf: Vec<u8>,
    /// The unused bytes are `buf[start..end]`.
    start: usize,
    end: usize,
    /// The socket's read and write timeouts as last set, if they were.
    read_timeout: Option<Duration>,
    write_timeout: Option<Duration>,
}

/// Which of a socket's timeouts.
#[derive(Debug, Clone, Copy)]
enum Direction {
    Read,
    Write,
}

impl Conn {
    fn new(stream: Stream) -> Self {
        Conn {
            stream,
            buf: vec![0; READ_BYTES],
            start: 0,
            end: 0,
            read_timeout: None,
            write_timeout: None,
        }
    }

    /// Whether the server has not closed the connection and sent nothing unasked: a peek
    /// that would block.
    fn is_open(&self) -> bool {
        match self.stream.tcp() {
            Some(tcp) => self.start == self.end && nothing_waits(tcp),
            None => self.start == self.end,
        }
    }

    /// Writes all of `bytes` (and, over TLS, flushes them) by `deadline`.
    fn write(&mut self, mut bytes: &[u8], deadline: Instant) -> io::Result<()> {
        loop {
            self.bound(Direction::Write, deadline)?;
            let wrote = if bytes.is_empty() {
                self.stream.flush().map(|()| 0)
            } else {
                self.stream.write(bytes)
            };
            match wrote {
                Ok(0) if bytes.is_empty() => return Ok(()),
                Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
                Ok(n) => bytes = bytes.get(n..).unwrap_or_default(),
                Err(e) => self.retry_after(Direction::Write, e, deadline)?,
            }
        }
    }

    /// Bounds the next blocking read or write by what is left until `deadline`. The
    /// socket's timeout changes only when the one it has could wait past the deadline: most
    /// exchanges start a new operation, with more time left than the last one had, and
    /// then no system call is needed.
    fn bound(&mut self, direction: Direction, deadline: Instant) -> io::Result<()> {
        let left = remaining(deadline)?;
        let Some(tcp) = self.stream.tcp() else {
            return Ok(());
        };
        let set = match direction {
            Direction::Read => &mut self.read_timeout,
            Direction::Write => &mut self.write_timeout,
        };
        if set.is_none_or(|set| set > left) {
            match direction {
                Direction::Read => tcp.set_read_timeout(Some(left))?,
                Direction::Write => tcp.set_write_timeout(Some(left))?,
            }
            *set = Some(left);
        }
        Ok(())
    }

    /// What to do after `error` from a read or a write: try again when it was interrupted,
    /// or when the socket's timeout, shorter than what is left, ran out (it is set afresh);
    /// otherwise the error.
    fn retry_after(
        &mut self,
        direction: Direction,
        error: io::Error,
        deadline: Instant,
    ) -> io::Result<()> {
        match error.kind() {
            io::ErrorKind::Interrupted => Ok(()),
            io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut if Instant::now() < deadline => {
                match direction {
                    Direction::Read => self.read_timeout = None,
                    Direction::Write => self.write_timeout = None,
                }
                Ok(())
            }
            _ => Err(error),
        }
    }

    /// The bytes read and not yet used.
    fn buffered(&self) -> &[u8] {
        self.buf.get(self.start..self.end).unwrap_or_default()
    }

    /// Marks `n` buffered bytes used.
    fn consume(&mut self, n: usize) {
        self.start = self.start.saturating_add(n).min(self.end);
        if self.start == self.end {
            self.start = 0;
            self.end = 0;
        }
    }

    /// Reads more bytes after the buffered ones, letting the buffered bytes grow to `most`;
    /// how many came, 0 at the end of the stream.
    fn fill(&mut self, deadline: Instant, most: usize) -> Result<usize, String> {
        if self.end == self.buf.len() {
            if self.start > 0 {
                self.buf.copy_within(self.start..self.end, 0);
                self.end -= self.start;
                self.start = 0;
            } else if self.buf.len() < most {
                let grown = self.buf.len().saturating_mul(2).clamp(1, most);
                self.buf.resize(grown, 0);
            } else {
                return Err(format!(
                    "more than {most} bytes came without an end of line"
                ));
            }
        }
        loop {
            self.bound(Direction::Read, deadline)
                .map_err(|e| said(&e))?;
            let free = self.buf.get_mut(self.end..).unwrap_or_default();
            match self.stream.read(free) {
                Ok(n) => {
                    self.end += n;
                    return Ok(n);
                }
                Err(e) => self
                    .retry_after(Direction::Read, e, deadline)
                    .map_err(|e| said(&e))?,
            }
        }
    }

    /// Reads a reply's head, skipping interim (1xx) replies but 101.
    fn read_head(&mut self, deadline: Instant, most: usize) -> Result<Head, String> {
        // A head usually comes whole in one read, so the first look is a parse; after that,
        // a parse waits for the head's blank line, and the search for it resumes where it
        // stopped: a server that drips its head a byte at a time costs one scan of it, not
        // one parse per byte.
        let mut scanned = 0_usize;
        loop {
            let bytes = self.buffered();
            let ended = (scanned == 0 && !bytes.is_empty())
                || bytes
                    .get(scanned.saturating_sub(2)..)
                    .is_some_and(head_ends);
            scanned = bytes.len();
            if ended {
                // Left uninitialised: httparse writes the fields it finds.
                let mut fields = [const { std::mem::MaybeUninit::uninit() }; HEADER_FIELDS];
                let mut reply = httparse::Response::new(&mut []);
                let parsed = httparse::ParserConfig::default().parse_response_with_uninit_headers(
                    &mut reply,
                    bytes,
                    &mut fields,
                );
                match parsed {
                    Ok(httparse::Status::Complete(len)) if len > most => {
                        return Err(format!("the reply's head is longer than {most} bytes"));
                    }
                    Ok(httparse::Status::Complete(len)) => {
                        let head = Head::of(&reply)?;
                        self.consume(len);
                        scanned = 0;
                        if head.framing == Framing::Empty
                            && (100..200).contains(&head.status)
                            && head.status != 101
                        {
                            continue;
                        }
                        return Ok(head);
                    }
                    Ok(httparse::Status::Partial) => {}
                    Err(e) => return Err(format!("the reply's head is not HTTP/1.1: {e}")),
                }
            }
            if self.buffered().len() >= most {
                return Err(format!("the reply's head is longer than {most} bytes"));
            }
            match self.fill(deadline, most) {
                Ok(0) => {
                    return Err(String::from(
                        "the server closed the connection before a reply",
                    ))
                }
                Ok(_) => {}
                Err(why) => return Err(why),
            }
        }
    }

    /// Reads a body framed as `framing`, handing its bytes to `sink`; a chunked body's
    /// framing lines and trailers may not pass `most` bytes.
    fn read_body(
        &mut self,
        framing: Framing,
        deadline: Instant,
        most: usize,
        sink: &mut dyn FnMut(Seen<'_>) -> bool,
    ) -> BodyEnd {
        let read = match framing {
            Framing::Empty => Ok(true),
            Framing::Length(length) => self.pass(Some(length), deadline, sink),
            Framing::Close => self.pass(None, deadline, sink),
            Framing::Chunked => self.pass_chunks(deadline, most, sink),
        };
        match read {
            Ok(true) => BodyEnd::Whole,
            Ok(false) => BodyEnd::Stopped,
            Err(why) => BodyEnd::Broken(why),
        }
    }

    /// Hands the next `length` bytes to `sink`, or, with no length, every byte until the
    /// server closes the connection; `false` if it stopped reading.
    fn pass(
        &mut self,
        mut length: Option<u64>,
        deadline: Instant,
        sink: &mut dyn FnMut(Seen<'_>) -> bool,
    ) -> Result<bool, String> {
        while length != Some(0) {
            if self.buffered().is_empty() && self.fill(deadline, READ_BYTES)? == 0 {
                return match length {
                    None => Ok(true),
                    Some(_) => Err(String::from(
                        "the server closed the connection inside the body",
                    )),
                };
            }
            let bytes = self.buffered();
            let n = length.map_or(bytes.len(), |left| {
                bytes.len().min(usize::try_from(left).unwrap_or(usize::MAX))
            });
            if !sink(Seen::Body(bytes.get(..n).unwrap_or_default())) {
                return Ok(false);
            }
            self.consume(n);
            length = length.map(|left| left - n as u64);
        }
        Ok(true)
    }

    /// Hands a chunked body's data to `sink`, and reads its trailers past.
    fn pass_chunks(
        &mut self,
        deadline: Instant,
        most: usize,
        sink: &mut dyn FnMut(Seen<'_>) -> bool,
    ) -> Result<bool, String> {
        loop {
            let size = self.line(deadline, most, |line| {
                let digits = line.split(|&b| b == b';').next().unwrap_or_default();
                let digits = digits.trim_ascii();
                let valid = !digits.is_empty()
                    && digits.len() <= 16
                    && digits.iter().all(u8::is_ascii_hexdigit);
                valid
                    .then(|| std::str::from_utf8(digits).ok())
                    .flatten()
                    .and_then(|hex| u64::from_str_radix(hex, 16).ok())
                    .ok_or_else(|| String::from("a chunk's size is not hexadecimal"))
            })??;
            if size == 0 {
                break;
            }
            if !self.pass(Some(size), deadline, sink)? {
                return Ok(false);
            }
            self.line(deadline, most, |line| {
                line.is_empty()
                    .then_some(())
                    .ok_or_else(|| String::from("a chunk is longer than its size"))
            })??;
        }
        let mut trailers = 0_usize;
        loop {
            let len = self.line(deadline, most, <[u8]>::len)?;
            trailers = trailers.saturating_add(len);
            if trailers > most {
                return Err(format!("the body's trailers are longer than {most} bytes"));
            }
            if len == 0 {
                return Ok(true);
            }
        }
    }

    /// Reads one line (ended by LF, an optional CR before it dropped), hands it to `read`,
    /// and consumes it; a line longer than `most` bytes is refused.
    fn line<T>(
        &mut self,
        deadline: Instant,
        most: usize,
        read: impl FnOnce(&[u8]) -> T,
    ) -> Result<T, String> {
        loop {
            let bytes = self.buffered();
            let found = bytes.iter().position(|&b| b == b'\n');
            if found.unwrap_or(bytes.len()) >= most {
                return Err(format!(
                    "a line of the body's framing is longer than {most} bytes"
                ));
            }
            if let Some(at) = found {
                let line = bytes.get(..at).unwrap_or_default();
                let line = line.strip_suffix(b"\r").unwrap_or(line);
                let out = read(line);
                self.consume(at + 1);
                return Ok(out);
            }
            if self.fill(deadline, most)? == 0 {
                return Err(String::from(
                    "the server closed the connection inside the body",
                ));
            }
        }
    }
}

#[cfg(any(test, feature = "_fuzz"))]
pub(crate) mod script;
#[cfg(test)]
mod tests;
