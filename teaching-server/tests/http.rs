//! The blocking HTTP transport with several operations in flight against the teaching
//! server over HTTP: each result reaches its own operation, and the server's call log shows
//! each call arrived once.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};

use mcp_sansio::{Allowlist, Config, Limits, ProtocolChoice, RawObject};
use mcp_sansio_http::HttpClient;

/// The teaching server over HTTP; killed when dropped.
struct Served {
    child: Child,
    url: String,
    log: std::path::PathBuf,
}

impl Served {
    fn start(name: &str, extra: &[&str]) -> Served {
        let log = std::env::temp_dir().join(format!("http-{}-{name}.jsonl", std::process::id()));
        let _ = std::fs::remove_file(&log);
        let mut child = Command::new(env!("CARGO_BIN_EXE_mcp-teaching-server"))
            .args(["serve", "--http", "127.0.0.1:0", "--log"])
            .arg(&log)
            .args(extra)
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let mut url = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut url)
            .unwrap();
        Served {
            child,
            url: url.trim().to_owned(),
            log,
        }
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_file(&self.log);
    }
}

#[test]
fn calls_in_flight_at_once_each_get_their_own_result_in_every_revision() {
    for (protocol, extra) in [
        (ProtocolChoice::Auto, &[][..]),
        (ProtocolChoice::Stateful, &[][..]),
        (ProtocolChoice::Stateful, &["--sse"][..]),
    ] {
        let served = Served::start(&format!("{protocol:?}{}", extra.len()), extra);
        let mut config = Config::new(["word_count"].into_iter().collect::<Allowlist>());
        config.protocol = protocol;
        let mut client = HttpClient::new(&served.url, config).unwrap();
        client.connect().unwrap();
        client.list_tools().unwrap();
        let texts = ["one", "one two", "one two three", "one two three four"];
        let now = client.now();
        let ops: Vec<_> = texts
            .iter()
            .map(|text| {
                let args = RawObject::parse(&format!(r#"{{"text":"{text}"}}"#), &Limits::default())
                    .unwrap();
                client.client().call_tool("word_count", &args, now).unwrap()
            })
            .collect();
        // Awaited in reverse: the others finish meanwhile and wait as events.
        let mut counts: Vec<String> = ops
            .into_iter()
            .rev()
            .map(|op| client.run(op).unwrap().text().into_owned())
            .collect();
        counts.reverse();
        assert_eq!(counts, ["1", "2", "3", "4"], "{protocol:?} {extra:?}");
        let log = std::fs::read_to_string(&served.log).unwrap();
        assert_eq!(
            log.lines().count(),
            4,
            "{protocol:?}: each call reached the server once"
        );
        client.close();
    }
}

#[test]
fn each_http_failure_reaches_the_library_as_its_typed_error_by_the_deadline() {
    use mcp_sansio::{Error, HttpError, ProtocolViolation};
    use mcp_sansio_http::HttpClientError;
    use std::time::{Duration, Instant};

    type Expected = fn(&HttpClientError) -> bool;
    let cases: [(&str, &[&str], Expected, usize); 9] = [
        (
            "unauthorized",
            &[],
            |e| {
                matches!(
                    e,
                    HttpClientError::Mcp(Error::Http(HttpError::Unauthorized))
                )
            },
            0,
        ),
        (
            "redirect",
            &[],
            |e| {
                matches!(
                    e,
                    HttpClientError::Mcp(Error::Http(HttpError::Redirected { status: 307 }))
                )
            },
            0,
        ),
        (
            "wrong-content-type",
            &[],
            |e| matches!(e, HttpClientError::Mcp(Error::Http(HttpError::ContentType))),
            0,
        ),
        (
            "oversized",
            &[],
            |e| {
                matches!(
                    e,
                    HttpClientError::Mcp(Error::Protocol(ProtocolViolation::FrameTooLong { .. }))
                )
            },
            1,
        ),
        (
            "endless-event",
            &[],
            |e| {
                matches!(
                    e,
                    HttpClientError::Mcp(Error::Protocol(ProtocolViolation::FrameTooLong { .. }))
                )
            },
            1,
        ),
        (
            "wrong-id",
            &["--sse"],
            |e| {
                matches!(
                    e,
                    HttpClientError::Mcp(Error::Protocol(
                        ProtocolViolation::UnknownResponseId { .. }
                    ))
                )
            },
            1,
        ),
        (
            "endless-stream",
            &[],
            |e| matches!(e, HttpClientError::Mcp(Error::Timeout { .. })),
            1,
        ),
        (
            "trickle",
            &["--sse"],
            |e| matches!(e, HttpClientError::Mcp(Error::Timeout { .. })),
            1,
        ),
        (
            "hang",
            &[],
            |e| matches!(e, HttpClientError::Mcp(Error::Timeout { .. })),
            1,
        ),
    ];
    for (mode, extra, expected, calls) in cases {
        let mut args = vec!["--mode", mode];
        args.extend_from_slice(extra);
        let served = Served::start(mode, &args);
        let mut config = Config::new(["word_count"].into_iter().collect::<Allowlist>());
        config.limits = Limits::teaching();
        config.limits.operation_timeout = Duration::from_millis(1000);
        let started = Instant::now();
        let mut client = HttpClient::new(&served.url, config).unwrap();
        let outcome = client
            .connect()
            .and_then(|_| client.list_tools())
            .and_then(|_| {
                let args = RawObject::parse(r#"{"text":"a b"}"#, &Limits::default()).unwrap();
                client.call_tool("word_count", &args)
            });
        let error = outcome.expect_err(mode);
        assert!(expected(&error), "{mode}: {error:?}");
        assert!(
            started.elapsed() < Duration::from_secs(4),
            "{mode}: {:?}",
            started.elapsed()
        );
        let log = std::fs::read_to_string(&served.log).unwrap_or_default();
        assert_eq!(
            log.lines().count(),
            calls,
            "{mode}: calls that reached the server"
        );
    }
}
