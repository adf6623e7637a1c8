//! The two call paths the per-call benches compare, one call per `call()`.
//!
//! - [`Ours`]: queue `tools/call` (allowlist and catalog checks, params, encoding), take the
//!   frame, feed the canned reply in one to three reads, poll the event, read the text.
//! - [`Serde`]: serialize the same request from a typed struct, deserialize the same reply
//!   into typed structs, read the text. No framing, ids, limits or validation.
//! - [`Reply`]: writing the canned reply with the call's id, which both of the above do in
//!   each call; subtract it for the net figures.

use std::hint::black_box;

use mcp_sansio::{Allowlist, Client, Config, Instant, Limits, RawObject};
use serde::{Deserialize, Serialize};

const TEXT: &str = "vanilla stock needs review";

/// Writes the server's reply to request `id` into `out`: what a teaching server says.
fn reply(out: &mut Vec<u8>, id: i64) {
    out.clear();
    out.extend_from_slice(br#"{"jsonrpc":"2.0","id":"#);
    out.extend_from_slice(itoa(id, &mut [0; 20]));
    out.extend_from_slice(
        br#","result":{"content":[{"type":"text","text":"4"}],"isError":false}}"#,
    );
    out.push(b'\n');
}

fn itoa(mut n: i64, buf: &mut [u8; 20]) -> &[u8] {
    let mut at = buf.len();
    loop {
        at -= 1;
        buf[at] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            return &buf[at..];
        }
    }
}

/// The whole call path in the core, on a connected client.
pub(crate) struct Ours {
    client: Client,
    arguments: RawObject,
    now: Instant,
    buf: Vec<u8>,
    frame: Vec<u8>,
    id: i64,
}

impl Ours {
    pub(crate) fn new() -> Self {
        let config = Config::new(["word_count"].into_iter().collect::<Allowlist>());
        let arguments =
            RawObject::parse(&format!(r#"{{"text":"{TEXT}"}}"#), &Limits::default()).unwrap();
        Ours {
            client: mcp_sansio::fuzzing::connected_client(config),
            arguments,
            now: Instant::ZERO,
            buf: Vec::with_capacity(128),
            frame: Vec::with_capacity(256),
            id: 3,
        }
    }

    pub(crate) fn call(&mut self) {
        self.now = Instant::from_millis(self.now.as_millis() + 1);
        let op = self
            .client
            .call_tool("word_count", &self.arguments, self.now)
            .unwrap();
        self.frame.clear();
        self.client.poll_transmit(&mut self.frame).unwrap();
        black_box(&self.frame);
        reply(&mut self.buf, self.id);
        let pieces = (self.id % 3 + 1) as usize;
        for piece in self.buf.chunks(self.buf.len().div_ceil(pieces)) {
            self.client.handle_input(piece, self.now);
        }
        self.id += 1;
        let event = self.client.poll_event().expect("the call's end");
        let result = op.finished(event).expect("this call's end").unwrap();
        black_box(&*result.text());
    }
}

#[derive(Serialize)]
struct CallRequest<'a> {
    jsonrpc: &'a str,
    id: i64,
    method: &'a str,
    params: CallParams<'a>,
}

#[derive(Serialize)]
struct CallParams<'a> {
    name: &'a str,
    arguments: &'a serde_json::Value,
}

#[derive(Deserialize)]
struct CallResponse {
    #[allow(dead_code)]
    jsonrpc: String,
    #[allow(dead_code)]
    id: i64,
    result: CallResult,
}

#[derive(Deserialize)]
struct CallResult {
    content: Vec<Block>,
    #[serde(rename = "isError")]
    #[allow(dead_code)]
    is_error: Option<bool>,
}

#[derive(Deserialize)]
struct Block {
    #[serde(rename = "type")]
    #[allow(dead_code)]
    kind: String,
    text: Option<String>,
}

/// Bare typed serde_json on the same two messages.
pub(crate) struct Serde {
    arguments: serde_json::Value,
    out: Vec<u8>,
    buf: Vec<u8>,
    id: i64,
}

impl Serde {
    pub(crate) fn new() -> Self {
        Serde {
            arguments: serde_json::json!({ "text": TEXT }),
            out: Vec::with_capacity(128),
            buf: Vec::with_capacity(128),
            id: 3,
        }
    }

    pub(crate) fn call(&mut self) {
        self.out.clear();
        let request = CallRequest {
            jsonrpc: "2.0",
            id: self.id,
            method: "tools/call",
            params: CallParams {
                name: "word_count",
                arguments: &self.arguments,
            },
        };
        serde_json::to_writer(&mut self.out, &request).unwrap();
        black_box(&self.out);
        reply(&mut self.buf, self.id);
        self.id += 1;
        let response: CallResponse = serde_json::from_slice(&self.buf).unwrap();
        black_box(
            response
                .result
                .content
                .into_iter()
                .filter_map(|b| b.text)
                .collect::<Vec<_>>()
                .join("\n"),
        );
    }
}

/// Writing the reply alone.
pub(crate) struct Reply {
    buf: Vec<u8>,
    id: i64,
}

impl Reply {
    pub(crate) fn new() -> Self {
        Reply {
            buf: Vec::with_capacity(128),
            id: 3,
        }
    }

    pub(crate) fn call(&mut self) {
        reply(&mut self.buf, self.id);
        self.id += 1;
        black_box(&self.buf);
    }
}
