#![allow(clippy::unwrap_used, clippy::indexing_slicing, clippy::panic)]

use std::io::BufRead;
use std::net::TcpListener;
use std::sync::mpsc;

use proptest::prelude::*;

use super::script::scripted;
use super::*;

fn soon() -> Instant {
    Instant::now() + Duration::from_secs(10)
}

/// Reads one reply from `pieces` with heads bounded by `most`: its head, its body, how the
/// body ended, and what was left unread.
fn read_reply(
    pieces: Vec<Vec<u8>>,
    most: usize,
) -> Result<(Head, Vec<u8>, BodyEnd, Vec<u8>), String> {
    let mut conn = scripted(pieces);
    let head = conn.read_head(soon(), most)?;
    let mut body = Vec::new();
    let end = conn.read_body(head.framing, soon(), most, &mut |seen| {
        if let Seen::Body(bytes) = seen {
            body.extend_from_slice(bytes);
        }
        true
    });
    let mut rest = conn.buffered().to_vec();
    conn.stream.read_to_end(&mut rest).unwrap();
    Ok((head, body, end, rest))
}

fn one(reply: &str) -> Result<(Head, Vec<u8>, BodyEnd, Vec<u8>), String> {
    read_reply(vec![reply.as_bytes().to_vec()], 1024)
}

#[test]
fn each_framing_delimits_its_body_and_leaves_the_next_reply_unread() {
    let next = "HTTP/1.1 200 OK\r\n";
    let cases: [(&str, &str, Framing, bool); 7] = [
        (
            "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 5\r\n\r\nhello",
            "hello",
            Framing::Length(5),
            true,
        ),
        (
            "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3;ext=1\r\nhel\r\n2\r\nlo\r\n0\r\nX-Trailer: 1\r\n\r\n",
            "hello",
            Framing::Chunked,
            true,
        ),
        // Transfer-Encoding wins over Content-Length.
        (
            "HTTP/1.1 200 OK\r\nContent-Length: 99\r\nTransfer-Encoding: gzip, chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n",
            "hello",
            Framing::Chunked,
            true,
        ),
        ("HTTP/1.1 202 Accepted\r\nContent-Length: 0\r\n\r\n", "", Framing::Length(0), true),
        ("HTTP/1.1 204 No Content\r\n\r\n", "", Framing::Empty, true),
        // Bare LF line ends, and a connection the server will close.
        (
            "HTTP/1.1 200 OK\nContent-Length: 2\nConnection: close\n\nhi",
            "hi",
            Framing::Length(2),
            false,
        ),
        ("HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\nhi", "hi", Framing::Length(2), false),
    ];
    for (reply, body, framing, keep_alive) in cases {
        let (head, got, end, rest) = one(&format!("{reply}{next}")).unwrap();
        assert_eq!(head.framing, framing, "{reply:?}");
        assert_eq!(head.keep_alive, keep_alive, "{reply:?}");
        assert_eq!(String::from_utf8(got).unwrap(), body, "{reply:?}");
        assert_eq!(end, BodyEnd::Whole, "{reply:?}");
        assert_eq!(rest, next.as_bytes(), "{reply:?}");
    }
}

#[test]
fn a_body_to_the_close_ends_with_the_stream_and_never_keeps_the_connection() {
    let (head, body, end, _) =
        one("HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n\r\ndata: 1\n\n").unwrap();
    assert_eq!(head.framing, Framing::Close);
    assert!(!head.keep_alive);
    assert_eq!(body, b"data: 1\n\n");
    assert_eq!(end, BodyEnd::Whole);
    assert_eq!(
        head.fields.content_type.as_deref(),
        Some("text/event-stream")
    );
}

#[test]
fn every_challenge_reaches_the_core_and_a_redirect_its_location() {
    let (head, _, _, _) = one(
        "HTTP/1.1 401 Unauthorized\r\nWWW-Authenticate: Basic realm=\"x\"\r\n\
         www-authenticate: Bearer resource_metadata=\"http://127.0.0.1/.well-known/oauth-protected-resource\"\r\n\
         Location: /first\r\nLocation: /second\r\nContent-Length: 0\r\n\r\n",
    )
    .unwrap();
    let joined = head.fields.www_authenticate.as_deref().unwrap();
    assert_eq!(
        joined,
        "Basic realm=\"x\", Bearer resource_metadata=\"http://127.0.0.1/.well-known/oauth-protected-resource\""
    );
    let challenge = mcp_sansio::auth::Challenge::parse(joined).unwrap();
    assert_eq!(
        challenge.resource_metadata.as_deref(),
        Some("http://127.0.0.1/.well-known/oauth-protected-resource")
    );
    assert_eq!(head.fields.location.as_deref(), Some("/first"));
    assert_eq!(
        head.fields.reply_head(head.status).www_authenticate,
        Some(joined)
    );
}

#[test]
fn interim_replies_are_skipped_and_the_headers_the_core_reads_come_through() {
    let (head, body, _, _) = one(
        "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: </x>\r\n\r\n\
         HTTP/1.1 200 OK\r\nmcp-session-id: abc-1\r\nMcp-Session-Id: second\r\n\
         Content-Type: application/json\r\nContent-Length: 2\r\n\r\n{}",
    )
    .unwrap();
    assert_eq!(head.status, 200);
    assert_eq!(
        head.fields.session_id.as_deref(),
        Some("abc-1"),
        "the first one counts"
    );
    assert_eq!(body, b"{}");
    // A value outside visible ASCII is not handed on as text.
    let reply = b"HTTP/1.1 200 OK\r\nMcp-Session-Id: \x80x\r\nContent-Length: 0\r\n\r\n";
    let (head, _, _, _) = read_reply(vec![reply.to_vec()], 1024).unwrap();
    assert_eq!(head.fields.session_id, None);
}

#[test]
fn broken_framing_is_refused_with_what_was_wrong() {
    let refused_head: [(&str, &str); 4] = [
        (
            "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\nhi",
            "Content-Length",
        ),
        (
            "HTTP/1.1 200 OK\r\nContent-Length: +2\r\n\r\nhi",
            "Content-Length",
        ),
        ("SSH-2.0-OpenSSH\r\n\r\n", "not HTTP/1.1"),
        (
            "HTTP/1.1 200 OK\r\nContent-Len",
            "closed the connection before a reply",
        ),
    ];
    for (reply, why) in refused_head {
        let error = one(reply).unwrap_err();
        assert!(error.contains(why), "{reply:?}: {error}");
    }
    let broken_body: [(&str, &str); 4] = [
        (
            "HTTP/1.1 200 OK\r\nContent-Length: 9\r\n\r\nhi",
            "inside the body",
        ),
        (
            "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
            "not hexadecimal",
        ),
        (
            "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n11111111111111111\r\n",
            "not hexadecimal",
        ),
        (
            "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nhello\r\n",
            "longer than its size",
        ),
    ];
    for (reply, why) in broken_body {
        let (_, _, end, _) = one(reply).unwrap();
        assert!(
            matches!(&end, BodyEnd::Broken(e) if e.contains(why)),
            "{reply:?}: {end:?}"
        );
    }
}

#[test]
fn a_head_or_a_framing_line_past_the_bound_is_refused_before_more_is_read() {
    let long = format!("HTTP/1.1 200 OK\r\nX-Pad: {}\r\n\r\n", "a".repeat(2000));
    let error = read_reply(vec![long.into_bytes()], 1024).unwrap_err();
    assert!(error.contains("longer than 1024 bytes"), "{error}");
    // An endless head, a byte per read: refused at the bound, not at the end of input.
    let drip: Vec<Vec<u8>> = std::iter::once(b"HTTP/1.1 200 OK\r\nX: ".to_vec())
        .chain(std::iter::repeat_n(b"a".to_vec(), 100_000))
        .collect();
    let mut conn = scripted(drip);
    let error = conn.read_head(soon(), 1024).unwrap_err();
    assert!(error.contains("longer than 1024 bytes"), "{error}");
    assert!(conn.buf.len() <= READ_BYTES, "the buffer stayed bounded");
    for body in [
        format!("{}\r\n", "0".repeat(2000)),
        format!("0\r\nX: {}\r\n\r\n", "a".repeat(2000)),
        format!("0\r\n{}\r\n", "X: a\r\n".repeat(400)),
    ] {
        let reply = format!("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n{body}");
        let (_, _, end, _) = read_reply(vec![reply.into_bytes()], 1024).unwrap();
        assert!(
            matches!(&end, BodyEnd::Broken(e) if e.contains("1024 bytes")),
            "{end:?}"
        );
    }
}

#[test]
fn a_sink_that_stops_reading_stops_the_body() {
    let mut conn = scripted(vec![
        b"HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\nab".to_vec(),
        b"cd".to_vec(),
    ]);
    let head = conn.read_head(soon(), 1024).unwrap();
    let mut pieces = 0;
    let end = conn.read_body(head.framing, soon(), 1024, &mut |_| {
        pieces += 1;
        false
    });
    assert_eq!((end, pieces), (BodyEnd::Stopped, 1));
}

/// A reply carrying `body`, chunked into `chunks` (sizes, cycled) or with a length.
fn encoded(body: &[u8], chunks: &[usize]) -> Vec<u8> {
    let mut out = b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n".to_vec();
    if chunks.is_empty() {
        out.extend_from_slice(format!("Content-Length: {}\r\n\r\n", body.len()).as_bytes());
        out.extend_from_slice(body);
        return out;
    }
    out.extend_from_slice(b"Transfer-Encoding: chunked\r\n\r\n");
    let mut rest = body;
    for size in chunks.iter().cycle() {
        if rest.is_empty() {
            break;
        }
        let (chunk, after) = rest.split_at((*size).clamp(1, rest.len()));
        out.extend_from_slice(format!("{:x}\r\n", chunk.len()).as_bytes());
        out.extend_from_slice(chunk);
        out.extend_from_slice(b"\r\n");
        rest = after;
    }
    out.extend_from_slice(b"0\r\n\r\n");
    out
}

/// `bytes` cut into pieces of the sizes `cuts` gives, in turn, again and again.
fn cut(bytes: &[u8], cuts: &[usize]) -> Vec<Vec<u8>> {
    let mut pieces = Vec::new();
    let mut rest = bytes;
    for size in cuts.iter().cycle() {
        if rest.is_empty() {
            break;
        }
        let (piece, after) = rest.split_at((*size).clamp(1, rest.len()));
        pieces.push(piece.to_vec());
        rest = after;
    }
    pieces
}

proptest! {
    /// However the reply's bytes arrive, read by read, the body and its end are the same.
    #[test]
    fn any_split_of_a_reply_gives_the_same_body(
        body in proptest::collection::vec(any::<u8>(), 0..3000),
        chunks in proptest::collection::vec(1_usize..700, 0..5),
        cuts in proptest::collection::vec(1_usize..400, 1..20),
    ) {
        let bytes = encoded(&body, &chunks);
        let pieces = cut(&bytes, &cuts);
        let (head, got, end, rest) = read_reply(pieces, 1024).unwrap();
        prop_assert!(head.keep_alive);
        prop_assert_eq!(got, body);
        prop_assert_eq!(end, BodyEnd::Whole);
        prop_assert!(rest.is_empty());
    }
}

proptest! {
    /// Whatever a server sends, however it is cut, reading it ends without a panic and the
    /// buffer stays within the larger of its first size and the head's bound.
    #[test]
    fn any_bytes_from_a_server_end_in_a_reply_or_a_refusal(
        head in proptest::sample::select(vec![
            "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n",
            "HTTP/1.1 200 OK\r\nContent-Length: 40\r\n\r\n",
            "HTTP/1.1 100 Continue\r\n\r\n",
            "HTTP/1.1 200 OK\r\n",
            "",
        ]),
        noise in proptest::collection::vec(
            proptest::sample::select(b"0123456789abcdefABCDEF;:= \r\n\t\x00\x7fHTP/.1".to_vec()),
            0..3000,
        ),
        cuts in proptest::collection::vec(1_usize..300, 1..10),
    ) {
        let mut bytes = head.as_bytes().to_vec();
        bytes.extend_from_slice(&noise);
        let pieces = cut(&bytes, &cuts);
        let mut conn = scripted(pieces);
        if let Ok(head) = conn.read_head(soon(), 256) {
            let _ = conn.read_body(head.framing, soon(), 256, &mut |_| true);
        }
        prop_assert!(conn.buf.len() <= READ_BYTES);
    }
}

#[test]
fn urls_are_read_strictly() {
    let good: [(&str, bool, &str, u16, &str, &str); 5] = [
        (
            "http://127.0.0.1:8000/mcp",
            false,
            "127.0.0.1",
            8000,
            "127.0.0.1:8000",
            "/mcp",
        ),
        (
            "https://example.com",
            true,
            "example.com",
            443,
            "example.com",
            "/",
        ),
        (
            "http://example.com?x=1#top",
            false,
            "example.com",
            80,
            "example.com",
            "/?x=1",
        ),
        ("http://[::1]:9/a/b?c", false, "::1", 9, "[::1]:9", "/a/b?c"),
        ("http://[::1]/", false, "::1", 80, "[::1]", "/"),
    ];
    for (text, tls, host, port, authority, path) in good {
        let expected = Url {
            tls,
            host,
            port,
            authority,
            path: path.to_owned(),
        };
        assert_eq!(Url::parse(text), Ok(expected), "{text}");
    }
    for bad in [
        "ftp://example.com/",
        "HTTP://example.com/",
        "http://",
        "http://:80/",
        "http://user:pw@example.com/",
        "http://example.com:port/",
        "http://example.com:99999/",
        "http://[::1/",
        "http://[::1]x/",
        "http://exa mple.com/",
        "http://example.com/a b",
        "http://example.com/\r\nX: 1",
        "http://example.com/é",
    ] {
        assert!(Url::parse(bad).is_err(), "{bad:?}");
    }
}

#[test]
fn headers_that_could_reframe_or_redirect_a_request_are_refused() {
    assert!(check_header("Authorization", "Bearer a.b-c").is_ok());
    assert!(check_header("X-Tab", "a\tb").is_ok());
    for (name, value) in [
        ("", "x"),
        ("Bad Name", "x"),
        ("X", "a\r\nInjected: 1"),
        ("X", "caf\u{e9}"),
        ("Host", "evil.example"),
        ("content-length", "0"),
        ("Transfer-Encoding", "chunked"),
        ("Connection", "close"),
    ] {
        assert!(check_header(name, value).is_err(), "{name:?}: {value:?}");
    }
}

#[test]
fn a_visible_value_is_printable_ascii_and_tabs_whatever_the_byte() {
    for b in 0..=u8::MAX {
        let expected = b == b'\t' || (b' '..=b'~').contains(&b);
        assert_eq!(visible(&[b]), expected, "{b:#04x}");
        // Anywhere in a longer value, past the width of one wide compare.
        let mut long = vec![b'a'; 40];
        long[33] = b;
        assert_eq!(visible(&long), expected, "{b:#04x} at 33");
    }
    assert!(visible(b""));
}

#[test]
fn a_request_is_one_piece_with_its_length_and_the_host_of_the_url() {
    let target = Target::new("http://127.0.0.1:1/mcp?x=1", 1024, 1).unwrap();
    let headers = [
        ("Accept", "application/json, text/event-stream"),
        ("Mcp-Session-Id", "s1"),
    ];
    let post = target
        .request("POST", None, headers.into_iter(), Some(b"{}"))
        .unwrap();
    assert_eq!(
        String::from_utf8(post).unwrap(),
        "POST /mcp?x=1 HTTP/1.1\r\nHost: 127.0.0.1:1\r\nUser-Agent: mcp-sansio-http\r\n\
         Accept: application/json, text/event-stream\r\nMcp-Session-Id: s1\r\n\
         Content-Length: 2\r\n\r\n{}"
    );
    let delete = target
        .request("DELETE", None, std::iter::empty(), None)
        .unwrap();
    assert_eq!(
        String::from_utf8(delete).unwrap(),
        "DELETE /mcp?x=1 HTTP/1.1\r\nHost: 127.0.0.1:1\r\nUser-Agent: mcp-sansio-http\r\n\r\n"
    );
    // A message endpoint the core named: its path, on the URL's own host.
    let message = target
        .request(
            "POST",
            Some("/message?sessionId=ab"),
            std::iter::empty(),
            Some(b"{}"),
        )
        .unwrap();
    assert!(String::from_utf8(message)
        .unwrap()
        .starts_with("POST /message?sessionId=ab HTTP/1.1\r\nHost: 127.0.0.1:1\r\n"));
    for bad in ["/a b", "/a\r\nX: y", "message", ""] {
        assert!(target
            .request("POST", Some(bad), std::iter::empty(), None)
            .is_err());
    }
    assert!(target
        .request("POST", None, [("X", "a\nb")].into_iter(), Some(b""))
        .is_err());
    let mut conn = scripted(Vec::new());
    conn.write(b"head and body", soon()).unwrap();
    let Stream::Script(script) = &conn.stream else {
        unreachable!()
    };
    assert_eq!(
        *script.written.lock().unwrap(),
        [b"head and body".to_vec()],
        "one write"
    );
}

/// What one exchange with `target` saw: the status, the body, and how it ended.
fn exchange(target: &Target, timeout: Duration) -> (Option<u16>, Vec<u8>, String) {
    let (mut status, mut body, mut end) = (None, Vec::new(), String::new());
    target.exchange(
        "POST",
        None,
        std::iter::empty(),
        Some(b"{}"),
        timeout,
        &|_| {},
        &mut |seen| {
            match seen {
                Seen::Head { status: s, .. } => status = Some(s),
                Seen::Body(bytes) => body.extend_from_slice(bytes),
                Seen::End => end = String::from("end"),
                Seen::Broken { before_head, why } => end = format!("broken {before_head}: {why}"),
            }
            true
        },
    );
    (status, body, end)
}

/// Reads one request (head and `Content-Length` body) from `reader`; false at its end.
fn read_request(reader: &mut io::BufReader<TcpStream>) -> bool {
    read_request_from(reader)
}

/// [`read_request`] from any stream.
fn read_request_from(reader: &mut impl BufRead) -> bool {
    let mut length = 0;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap_or(0) == 0 {
            return false;
        }
        if let Some(value) = line.to_ascii_lowercase().strip_prefix("content-length:") {
            length = value.trim().parse().unwrap();
        }
        if line == "\r\n" {
            break;
        }
    }
    let mut body = vec![0; length];
    reader.read_exact(&mut body).unwrap();
    true
}

/// A server on a real socket that answers every request on each connection with `reply`,
/// closing a connection after `per_connection` replies; it reports each closed connection.
fn server(reply: &'static str, per_connection: usize) -> (String, mpsc::Receiver<usize>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let (closed, closes) = mpsc::channel();
    std::thread::spawn(move || {
        for (n, stream) in listener.incoming().enumerate() {
            let mut stream = stream.unwrap();
            let mut reader = io::BufReader::new(stream.try_clone().unwrap());
            for _ in 0..per_connection {
                if !read_request(&mut reader) {
                    break;
                }
                stream.write_all(reply.as_bytes()).unwrap();
            }
            drop((reader, stream));
            closed.send(n).unwrap();
        }
    });
    (url, closes)
}

const OK: &str = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}";

#[test]
fn a_connection_carries_the_next_exchange_once_its_reply_is_read() {
    let (url, closes) = server(OK, 3);
    let target = Target::new(&url, 1024, 4).unwrap();
    for _ in 0..3 {
        assert_eq!(
            exchange(&target, Duration::from_secs(5)),
            (Some(200), b"{}".to_vec(), String::from("end"))
        );
    }
    // Three exchanges, one connection: the server closed its first after the third reply.
    assert_eq!(closes.recv().unwrap(), 0);
    // The next exchange finds the kept connection closed and opens another.
    assert_eq!(exchange(&target, Duration::from_secs(5)).2, "end");
    assert_eq!(target.idle.lock().unwrap().len(), 1);
}

#[test]
fn a_socket_timeout_is_set_again_only_when_it_could_outlast_the_deadline() {
    let (url, _) = server(OK, usize::MAX);
    let target = Target::new(&url, 1024, 4).unwrap();
    let timeouts = || {
        let idle = target.idle.lock().unwrap();
        (
            idle[0].read_timeout.unwrap(),
            idle[0].write_timeout.unwrap(),
        )
    };
    exchange(&target, Duration::from_secs(5));
    let (read, write) = timeouts();
    assert!(read <= Duration::from_secs(5) && write <= Duration::from_secs(5));
    // More time left than the socket waits: nothing changes.
    exchange(&target, Duration::from_secs(60));
    assert_eq!(timeouts(), (read, write));
    // Less: both are set to what is left.
    exchange(&target, Duration::from_millis(500));
    let (read, write) = timeouts();
    assert!(read <= Duration::from_millis(500) && write <= Duration::from_millis(500));
}

#[test]
fn a_connection_the_server_closes_is_not_kept() {
    let close = "HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 2\r\n\r\n{}";
    let (url, closes) = server(close, usize::MAX);
    let target = Target::new(&url, 1024, 4).unwrap();
    assert_eq!(exchange(&target, Duration::from_secs(5)).2, "end");
    assert!(target.idle.lock().unwrap().is_empty());
    drop(target);
    assert_eq!(closes.recv().unwrap(), 0);
}

#[test]
fn a_server_that_never_answers_breaks_the_exchange_at_its_deadline_and_one_not_there_at_once() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let target = Target::new(&url, 1024, 4).unwrap();
    let (status, _, end) = exchange(&target, Duration::from_millis(50));
    assert_eq!(status, None);
    assert_eq!(end, "broken true: the exchange's deadline passed");
    drop(listener);
    let (_, _, end) = exchange(&target, Duration::from_secs(5));
    assert!(
        end.starts_with("broken true: cannot connect to 127.0.0.1:"),
        "{end}"
    );
}

#[cfg(feature = "rustls")]
mod tls {
    use std::sync::Arc;

    use super::*;
    use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};

    const CA: &[u8] = include_bytes!("tls/ca.der");
    const LEAF: &[u8] = include_bytes!("tls/localhost.der");
    const KEY: &[u8] = include_bytes!("tls/localhost.key.der");

    /// A TLS server with the test certificate (for localhost and 127.0.0.1, issued by the
    /// test CA), answering every request with `OK`; it reports each connection whose
    /// handshake completed, by the key exchange group it settled on.
    fn tls_server() -> (String, mpsc::Receiver<Option<rustls::NamedGroup>>) {
        let provider = Arc::new(rustls::crypto::aws_lc_rs::default_provider());
        let key = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(KEY.to_vec()));
        let config = rustls::ServerConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .unwrap()
            .with_no_client_auth()
            .with_single_cert(vec![CertificateDer::from(LEAF.to_vec())], key)
            .unwrap();
        let config = Arc::new(config);
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("https://{}/mcp", listener.local_addr().unwrap());
        let (accepted, accepts) = mpsc::channel();
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(tcp) = stream else { return };
                let session = rustls::ServerConnection::new(Arc::clone(&config)).unwrap();
                let tls = rustls::StreamOwned::new(session, tcp);
                let accepted = accepted.clone();
                std::thread::spawn(move || {
                    let mut reader = io::BufReader::new(tls);
                    let mut first = true;
                    while read_request_from(&mut reader) {
                        let tls = reader.get_mut();
                        if std::mem::take(&mut first) {
                            let group = tls.conn.negotiated_key_exchange_group();
                            let _ = accepted.send(group.map(|g| g.name()));
                        }
                        if tls
                            .write_all(OK.as_bytes())
                            .and_then(|()| tls.flush())
                            .is_err()
                        {
                            return;
                        }
                    }
                });
            }
        });
        (url, accepts)
    }

    fn trusting_the_test_ca(url: &str, name: &str) -> Target {
        let mut target = Target::new(url, 1024, 4).unwrap();
        let mut roots = rustls::RootCertStore::empty();
        roots.add(CertificateDer::from(CA.to_vec())).unwrap();
        target.tls = Some(Tls::trusting(name, roots).unwrap());
        target
    }

    #[test]
    fn https_verifies_the_server_and_keeps_its_connection() {
        let (url, accepts) = tls_server();
        let target = trusting_the_test_ca(&url, "127.0.0.1");
        for _ in 0..3 {
            assert_eq!(
                exchange(&target, Duration::from_secs(5)),
                (Some(200), b"{}".to_vec(), String::from("end"))
            );
        }
        // The hybrid post-quantum exchange, which the client offers first.
        assert_eq!(
            accepts.recv().unwrap(),
            Some(rustls::NamedGroup::X25519MLKEM768)
        );
        assert!(
            accepts.try_recv().is_err(),
            "one connection carried all three"
        );
    }

    #[test]
    fn https_refuses_a_server_it_cannot_verify_before_anything_is_sent() {
        let (url, _) = tls_server();
        // The webpki roots do not know the test CA.
        let (status, _, end) =
            exchange(&Target::new(&url, 1024, 4).unwrap(), Duration::from_secs(5));
        assert_eq!(status, None);
        assert!(
            end.starts_with(
                "broken true: cannot send the request: TLS failed: invalid peer certificate"
            ),
            "{end}"
        );
        // The test CA, but a name the certificate does not carry.
        let (_, _, end) = exchange(
            &trusting_the_test_ca(&url, "example.com"),
            Duration::from_secs(5),
        );
        assert!(end.contains("invalid peer certificate"), "{end}");
    }
}
