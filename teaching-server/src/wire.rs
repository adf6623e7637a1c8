//! HTTP/1.1 as the teaching server speaks it: a thread per connection, which reads its
//! requests one after another and answers each before it reads the next.
//!
//! A thread of its own for every connection is what the tests need of a server: `tiny_http`,
//! used before, handed connections to a pool that, when two arrived at once, could leave one
//! unread until another connection closed, and a client's call then hung past its deadline
//! with its request in the server's socket.

use std::io::{self, BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};

/// The longest request head (request line and headers) read.
const MAX_HEAD: usize = 64 * 1024;

/// The longest request body read.
const MAX_BODY: usize = 16 * 1024 * 1024;

/// How long a connection may sit without a byte of its next request before it is closed: a
/// client that opens one and says nothing holds its thread no longer than this.
const IDLE: std::time::Duration = std::time::Duration::from_secs(120);

/// A request's method, as far as the server tells them apart.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Method {
    Get,
    Post,
    Delete,
    Other,
}

/// One request, read whole, and the connection to answer it on.
pub(crate) struct Request {
    method: Method,
    headers: Headers,
    body: Vec<u8>,
    stream: TcpStream,
    /// Whether the client asked to close the connection after this request.
    close: bool,
    /// Set once a response was written whole: the connection may carry another request.
    answered: bool,
}

impl Request {
    pub(crate) fn method(&self) -> Method {
        self.method
    }

    /// The value of header `name` (any case), the first if it repeats.
    pub(crate) fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    pub(crate) fn body(&self) -> &[u8] {
        &self.body
    }

    /// Writes `response`: with its length when it has one, chunked when not, each piece sent
    /// as soon as the body gives it.
    pub(crate) fn respond(&mut self, response: Response) -> io::Result<()> {
        let mut head = format!(
            "HTTP/1.1 {} {}\r\n",
            response.status,
            reason(response.status)
        );
        for (name, value) in &response.headers {
            head.push_str(&format!("{name}: {value}\r\n"));
        }
        match response.length {
            Some(length) => head.push_str(&format!("Content-Length: {length}\r\n")),
            None => head.push_str("Transfer-Encoding: chunked\r\n"),
        }
        if self.close {
            head.push_str("Connection: close\r\n");
        }
        head.push_str("\r\n");
        // The head and a whole body leave in one write; a stream's pieces each as it comes.
        let mut out = io::BufWriter::new(&mut self.stream);
        out.write_all(head.as_bytes())?;
        let mut body = response.body;
        let mut buffer = [0_u8; 8192];
        loop {
            let read = body.read(&mut buffer)?;
            if read == 0 {
                break;
            }
            let piece = buffer.get(..read).unwrap_or_default();
            if response.length.is_some() {
                out.write_all(piece)?;
            } else {
                out.write_all(format!("{read:x}\r\n").as_bytes())?;
                out.write_all(piece)?;
                out.write_all(b"\r\n")?;
                out.flush()?;
            }
        }
        if response.length.is_none() {
            out.write_all(b"0\r\n\r\n")?;
        }
        out.flush()?;
        drop(out);
        self.answered = true;
        Ok(())
    }
}

/// A response: a status, headers, and a body read to its end as it is sent.
pub(crate) struct Response {
    status: u16,
    headers: Vec<(String, String)>,
    body: Box<dyn Read + Send>,
    /// The body's length; `None` sends it chunked.
    length: Option<usize>,
}

impl Response {
    /// `status` and no body.
    pub(crate) fn empty(status: u16) -> Response {
        Response::data(status, Vec::new())
    }

    /// `status` and `bytes`, sent with their length.
    pub(crate) fn data(status: u16, bytes: Vec<u8>) -> Response {
        let length = Some(bytes.len());
        Response::stream(status, Box::new(io::Cursor::new(bytes)), length)
    }

    /// `status` and a body of `length` bytes, or of any length (chunked) for `None`.
    pub(crate) fn stream(
        status: u16,
        body: Box<dyn Read + Send>,
        length: Option<usize>,
    ) -> Response {
        Response {
            status,
            headers: Vec::new(),
            body,
            length,
        }
    }

    /// The response with header `name: value` added.
    pub(crate) fn with_header(mut self, name: &str, value: &str) -> Response {
        self.headers.push((name.to_owned(), value.to_owned()));
        self
    }
}

/// The reason phrase written after `status`; clients read only the number.
fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        202 => "Accepted",
        307 => "Temporary Redirect",
        400 => "Bad Request",
        401 => "Unauthorized",
        404 => "Not Found",
        405 => "Method Not Allowed",
        406 => "Not Acceptable",
        415 => "Unsupported Media Type",
        _ => "",
    }
}

/// A listening socket, and the address it listens on.
pub(crate) struct Server {
    listener: TcpListener,
}

impl Server {
    pub(crate) fn bind(addr: &str) -> io::Result<Server> {
        Ok(Server {
            listener: TcpListener::bind(addr)?,
        })
    }

    pub(crate) fn local_addr(&self) -> io::Result<SocketAddr> {
        self.listener.local_addr()
    }

    /// Serves every connection on a thread of its own, passing each request to `answer`,
    /// until accepting fails.
    pub(crate) fn run(self, answer: impl Fn(&mut Request) + Clone + Send + 'static) {
        for stream in self.listener.incoming() {
            let Ok(stream) = stream else {
                continue;
            };
            let answer = answer.clone();
            std::thread::spawn(move || connection(stream, &answer));
        }
    }
}

/// Reads and answers the requests of one connection until it ends, a request cannot be
/// read (or [`IDLE`] passes without a byte of it), one goes unanswered, or the client asked
/// to close.
fn connection(stream: TcpStream, answer: &impl Fn(&mut Request)) {
    // Small replies go out at once, not after the client's delayed acknowledgement.
    let _ = stream.set_nodelay(true);
    // A read that waits longer fails, and the connection ends.
    let _ = stream.set_read_timeout(Some(IDLE));
    let Ok(reading) = stream.try_clone() else {
        return;
    };
    let mut reader = BufReader::new(reading);
    loop {
        let Ok(Some((method, headers))) = read_head(&mut reader) else {
            return;
        };
        let header = |name: &str| {
            headers
                .iter()
                .find(|(n, _)| n == name)
                .map(|(_, v)| v.to_ascii_lowercase())
        };
        let close = header("connection").is_some_and(|c| c.contains("close"));
        let Ok(mut writing) = stream.try_clone() else {
            return;
        };
        if header("expect").is_some_and(|e| e == "100-continue")
            && writing.write_all(b"HTTP/1.1 100 Continue\r\n\r\n").is_err()
        {
            return;
        }
        let body = if header("transfer-encoding").is_some_and(|t| t.contains("chunked")) {
            read_chunked(&mut reader)
        } else {
            let length = header("content-length")
                .and_then(|l| l.trim().parse::<usize>().ok())
                .unwrap_or(0);
            read_exact(&mut reader, length)
        };
        let Ok(body) = body else {
            return;
        };
        let mut request = Request {
            method,
            headers,
            body,
            stream: writing,
            close,
            answered: false,
        };
        answer(&mut request);
        if !request.answered || request.close {
            return;
        }
    }
}

/// A request's headers, each as (lowercased name, value).
type Headers = Vec<(String, String)>;

/// The next request's method and headers; `None` at the end of the connection.
fn read_head(reader: &mut impl BufRead) -> io::Result<Option<(Method, Headers)>> {
    let mut read = 0;
    let mut line = String::new();
    // Blank lines before a request line are allowed (RFC 9112, 2.2).
    loop {
        line.clear();
        let n = (&mut *reader).take(MAX_HEAD as u64).read_line(&mut line)?;
        if n == 0 {
            return Ok(None);
        }
        read += n;
        if !line.trim().is_empty() {
            break;
        }
        if read > MAX_HEAD {
            return Err(io::Error::other("request head too long"));
        }
    }
    let method = match line.split(' ').next().unwrap_or_default() {
        "GET" => Method::Get,
        "POST" => Method::Post,
        "DELETE" => Method::Delete,
        _ => Method::Other,
    };
    let mut headers = Vec::new();
    loop {
        line.clear();
        let n = (&mut *reader).take(MAX_HEAD as u64).read_line(&mut line)?;
        read += n;
        if n == 0 || read > MAX_HEAD {
            return Err(io::Error::other("request head cut short or too long"));
        }
        let text = line.trim_end_matches(['\r', '\n']);
        if text.is_empty() {
            return Ok(Some((method, headers)));
        }
        if let Some((name, value)) = text.split_once(':') {
            headers.push((name.trim().to_ascii_lowercase(), value.trim().to_owned()));
        }
    }
}

/// `length` bytes of body.
fn read_exact(reader: &mut impl Read, length: usize) -> io::Result<Vec<u8>> {
    if length > MAX_BODY {
        return Err(io::Error::other("request body too long"));
    }
    let mut body = vec![0; length];
    reader.read_exact(&mut body)?;
    Ok(body)
}

/// A chunked body, its trailers skipped.
fn read_chunked(reader: &mut impl BufRead) -> io::Result<Vec<u8>> {
    let mut body = Vec::new();
    let mut line = String::new();
    loop {
        line.clear();
        (&mut *reader).take(1024).read_line(&mut line)?;
        let size = line.split(';').next().unwrap_or_default().trim();
        let size = usize::from_str_radix(size, 16).map_err(io::Error::other)?;
        if size == 0 {
            // Trailers, up to the blank line.
            loop {
                line.clear();
                if (&mut *reader).take(MAX_HEAD as u64).read_line(&mut line)? == 0
                    || line.trim().is_empty()
                {
                    return Ok(body);
                }
            }
        }
        if body.len() + size > MAX_BODY {
            return Err(io::Error::other("request body too long"));
        }
        body.extend(read_exact(reader, size)?);
        line.clear();
        reader.read_line(&mut line)?;
    }
}
