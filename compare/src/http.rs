//! The HTTP half of the comparison: the servers started once, our `HttpClient`, rmcp's
//! streamable HTTP client, and the floor.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use mcp_sansio::{CallToolResult, Limits, ProtocolChoice, RawObject};
use mcp_sansio_http::HttpClient;

use crate::{
    check, config, median, ms, process_cpu, run_ours, run_rmcp, Client, Options, Ours, Sample,
    Server, Target, WARM_UP,
};

/// The HTTP servers, running for one table; ended when dropped.
pub(crate) struct Running {
    children: Vec<Child>,
    pub(crate) teaching: String,
    pub(crate) python: String,
}

impl Running {
    /// Starts the teaching server and the Python SDK 2.x server, each on a port of its own,
    /// and waits until both accept connections.
    pub(crate) fn start(teaching: &Path, peers: &Path) -> Result<Running, String> {
        let mut children = Vec::new();
        let mut server = Command::new(teaching)
            .args(["serve", "--http", "127.0.0.1:0"])
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| format!("cannot start the teaching server: {e}"))?;
        let mut url = String::new();
        if let Some(out) = server.stdout.take() {
            BufReader::new(out)
                .read_line(&mut url)
                .map_err(|e| e.to_string())?;
        }
        children.push(server);
        let teaching = url.trim().to_owned();
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .map_err(|e| e.to_string())?
            .port();
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../interop/word_count_server.py");
        children.push(
            Command::new(peers.join("mcp2/bin/python"))
                .arg(script)
                .args(["--http", &port.to_string(), "--json"])
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .map_err(|e| format!("cannot start the Python SDK server: {e}"))?,
        );
        let started = Instant::now();
        while TcpStream::connect(("127.0.0.1", port)).is_err() {
            if started.elapsed() > Duration::from_secs(30) {
                return Err(format!("the Python SDK server never listened on {port}"));
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        Ok(Running {
            children,
            teaching,
            python: format!("http://127.0.0.1:{port}/mcp"),
        })
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        for child in &mut self.children {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

impl Ours for HttpClient {
    fn list(&mut self) -> Result<(), String> {
        self.list_tools().map(drop).map_err(|e| e.to_string())
    }

    fn call(&mut self, tool: &str, arguments: &RawObject) -> Result<CallToolResult, String> {
        self.call_tool(tool, arguments).map_err(|e| e.to_string())
    }

    fn close(self) -> Result<(), String> {
        HttpClient::close(self);
        Ok(())
    }
}

pub(crate) fn measure_ours(
    server: &Server,
    url: &str,
    options: &Options,
    protocol: ProtocolChoice,
) -> Result<Sample, String> {
    let config = config(server, protocol);
    run_ours(server, options, || {
        let mut client = HttpClient::new(url, config.clone()).map_err(|e| e.to_string())?;
        client.connect().map_err(|e| e.to_string())?;
        Ok(client)
    })
}

pub(crate) fn measure_rmcp(
    server: &Server,
    url: &str,
    options: &Options,
) -> Result<Sample, String> {
    use rmcp::transport::StreamableHttpClientTransport;
    use rmcp::ServiceExt;

    run_rmcp(server, options, || async {
        let transport = StreamableHttpClientTransport::from_uri(url);
        ().serve(transport)
            .await
            .map_err(|e| format!("rmcp against {}: {e}", server.name))
    })
}

/// One HTTP/1.1 request, written whole.
fn request(authority: &str, path: &str, session: Option<&str>, body: &str) -> Vec<u8> {
    let mut head = format!(
        "POST {path} HTTP/1.1\r\nHost: {authority}\r\nAccept: application/json, text/event-stream\r\n\
         Content-Type: application/json\r\nContent-Length: {}\r\n",
        body.len()
    );
    if let Some(session) = session {
        head.push_str(&format!(
            "Mcp-Session-Id: {session}\r\nMCP-Protocol-Version: 2025-11-25\r\n"
        ));
    }
    head.push_str("\r\n");
    head.push_str(body);
    head.into_bytes()
}

/// Reads one reply: the head, then as many body bytes as `Content-Length` says. Returns the
/// head and the body.
fn reply(stream: &mut TcpStream, buf: &mut Vec<u8>) -> Result<(String, Vec<u8>), String> {
    buf.clear();
    let mut chunk = [0_u8; 16 * 1024];
    let head_end = loop {
        if let Some(at) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break at + 4;
        }
        let n = stream.read(&mut chunk).map_err(|e| e.to_string())?;
        if n == 0 {
            return Err(String::from("the server closed the connection"));
        }
        buf.extend_from_slice(chunk.get(..n).unwrap_or_default());
    };
    let head = String::from_utf8_lossy(buf.get(..head_end).unwrap_or_default()).into_owned();
    let length: usize = head
        .lines()
        .find_map(|line| {
            let (name, value) = line.split_once(':')?;
            name.eq_ignore_ascii_case("content-length")
                .then(|| value.trim().parse().ok())
                .flatten()
        })
        .ok_or("the floor reads replies with a Content-Length only")?;
    while buf.len() < head_end + length {
        let n = stream.read(&mut chunk).map_err(|e| e.to_string())?;
        if n == 0 {
            return Err(String::from("the server closed the connection"));
        }
        buf.extend_from_slice(chunk.get(..n).unwrap_or_default());
    }
    let body = buf
        .get(head_end..head_end + length)
        .unwrap_or_default()
        .to_vec();
    Ok((head, body))
}

/// The floor's connection: a 2025-11-25 session opened with fixed bytes on one keep-alive
/// connection, and the fixed bytes of one call.
struct Floor {
    stream: TcpStream,
    call: Vec<u8>,
    buf: Vec<u8>,
}

impl Floor {
    /// Connects to `url` and opens a session: `initialize`, then `notifications/initialized`.
    fn open(server: &Server, url: &str) -> Result<Floor, String> {
        let rest = url.strip_prefix("http://").ok_or("not an http:// URL")?;
        let (authority, path) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
        let initialize = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"floor","version":"1"}}}"#;
        let initialized = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
        let mut buf = Vec::new();
        let mut stream = TcpStream::connect(authority).map_err(|e| e.to_string())?;
        stream.set_nodelay(true).map_err(|e| e.to_string())?;
        // No read or write waits past the 30 s the other clients' operations get.
        let bound = Some(Duration::from_secs(30));
        stream
            .set_read_timeout(bound)
            .and_then(|()| stream.set_write_timeout(bound))
            .map_err(|e| e.to_string())?;
        stream
            .write_all(&request(authority, path, None, initialize))
            .map_err(|e| e.to_string())?;
        let (head, _) = reply(&mut stream, &mut buf)?;
        let session = head.lines().find_map(|line| {
            let (name, value) = line.split_once(':')?;
            name.eq_ignore_ascii_case("mcp-session-id")
                .then(|| value.trim().to_owned())
        });
        stream
            .write_all(&request(authority, path, session.as_deref(), initialized))
            .map_err(|e| e.to_string())?;
        reply(&mut stream, &mut buf)?;
        let call = format!(
            r#"{{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{{"name":"{}","arguments":{}}}}}"#,
            server.tool, server.arguments
        );
        Ok(Floor {
            call: request(authority, path, session.as_deref(), &call),
            stream,
            buf,
        })
    }

    /// One call: the fixed bytes written, the reply read by its length; the reply's body.
    fn call(&mut self) -> Result<Vec<u8>, String> {
        self.stream
            .write_all(&self.call)
            .map_err(|e| e.to_string())?;
        reply(&mut self.stream, &mut self.buf).map(|(_, body)| body)
    }

    /// The first call, its answer checked: the server understood the fixed bytes.
    fn first(&mut self, server: &Server) -> Result<(), String> {
        let first: serde_json::Value =
            serde_json::from_slice(&self.call()?).map_err(|e| e.to_string())?;
        check(
            "the floor",
            server,
            first
                .pointer("/result/content/0/text")
                .and_then(serde_json::Value::as_str)
                .unwrap_or_default(),
        )
    }
}

/// The floor: a keep-alive connection, a session, then the same fixed call bytes written and
/// each reply read by its length, nothing parsed. What any client must at least spend.
pub(crate) fn measure_floor(
    server: &Server,
    url: &str,
    options: &Options,
) -> Result<Sample, String> {
    let fail = |e: String| format!("the floor against {}: {e}", server.name);
    let mut connect = Vec::with_capacity(options.connects);
    for _ in 0..options.connects {
        let started = Instant::now();
        Floor::open(server, url).map_err(fail)?;
        connect.push(started.elapsed());
    }
    let mut floor = Floor::open(server, url).map_err(fail)?;
    floor.first(server).map_err(fail)?;
    for _ in 0..WARM_UP {
        floor.call().map_err(fail)?;
    }
    let mut calls = Vec::with_capacity(options.calls);
    let cpu = process_cpu();
    for _ in 0..options.calls {
        let started = Instant::now();
        floor.call().map_err(fail)?;
        calls.push(started.elapsed());
    }
    let cpu = process_cpu().saturating_sub(cpu);
    Ok(Sample {
        connect,
        calls,
        cpu,
    })
}

/// Ours and the floor call by call: what one call of ours costs over the floor's, with the
/// machine's drift (other tenants, frequency) landing on both alike.
struct Paired {
    /// Our calls, in order.
    ours: Vec<Duration>,
    /// The floor's calls, each right after ours of the same index.
    floor: Vec<Duration>,
}

/// `options.rounds` × `options.calls` calls of ours (`protocol`), each followed by one of the
/// floor's, on two keep-alive connections to `url`, after the warm-up calls of both.
fn measure_paired(
    server: &Server,
    url: &str,
    options: &Options,
    protocol: ProtocolChoice,
) -> Result<Paired, String> {
    let fail = |e: String| format!("ours and the floor against {}: {e}", server.name);
    let mut ours =
        HttpClient::new(url, config(server, protocol)).map_err(|e| fail(e.to_string()))?;
    ours.connect().map_err(|e| fail(e.to_string()))?;
    ours.list_tools().map_err(|e| fail(e.to_string()))?;
    let arguments = RawObject::parse(server.arguments, &Limits::default())
        .map_err(|e| format!("the benchmark's own arguments: {e}"))?;
    let call_ours = |ours: &mut HttpClient| {
        ours.call_tool(server.tool, &arguments)
            .map_err(|e| fail(e.to_string()))
    };
    check("mcp-sansio", server, &call_ours(&mut ours)?.text())?;
    let mut floor = Floor::open(server, url).map_err(fail)?;
    floor.first(server).map_err(fail)?;
    for _ in 0..WARM_UP {
        call_ours(&mut ours)?;
        floor.call().map_err(fail)?;
    }
    let total = options.rounds.saturating_mul(options.calls);
    let mut paired = Paired {
        ours: Vec::with_capacity(total),
        floor: Vec::with_capacity(total),
    };
    for _ in 0..total {
        let started = Instant::now();
        call_ours(&mut ours)?;
        paired.ours.push(started.elapsed());
        let started = Instant::now();
        floor.call().map_err(fail)?;
        paired.floor.push(started.elapsed());
    }
    ours.close();
    Ok(paired)
}

/// Prints ours against the floor call by call, for each server and both of our protocols:
/// the medians, their ratio, and the ratio's range over blocks of `options.calls` calls.
pub(crate) fn paired_table(servers: &[Server], options: &Options) -> Result<(), String> {
    println!(
        "| server | client | ours per call (median) | floor per call (median) | ours / floor | \
         ours / floor over blocks of {} calls |",
        options.calls
    );
    println!("|---|---|---:|---:|---:|---:|");
    for server in servers {
        let Target::Url(url) = &server.target else {
            continue;
        };
        for protocol in [ProtocolChoice::Auto, ProtocolChoice::Stateful] {
            let paired = measure_paired(server, url, options, protocol)?;
            let ratio = |ours: &[Duration], floor: &[Duration]| {
                median(ours).as_secs_f64() / median(floor).as_secs_f64()
            };
            let blocks: Vec<f64> = paired
                .ours
                .chunks(options.calls)
                .zip(paired.floor.chunks(options.calls))
                .map(|(ours, floor)| ratio(ours, floor))
                .collect();
            let low = blocks.iter().copied().fold(f64::INFINITY, f64::min);
            let high = blocks.iter().copied().fold(0.0, f64::max);
            println!(
                "| {} | {} | {} | {} | {:.2}× | {low:.2}× to {high:.2}× |",
                server.name,
                Client::Ours(protocol).name(),
                ms(median(&paired.ours)),
                ms(median(&paired.floor)),
                ratio(&paired.ours, &paired.floor),
            );
        }
    }
    Ok(())
}
