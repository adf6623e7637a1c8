//! Replays every input in the fuzz corpus through the fuzz bodies, so the committed seeds and
//! any crash kept as a seed are checked by a plain `cargo test` on stable.

#![allow(clippy::panic)]

use std::fs;
use std::path::Path;

fn replay(target: &str, body: fn(&[u8])) {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fuzz/corpus")
        .join(target);
    let mut replayed = 0;
    for entry in fs::read_dir(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
        let path = entry.unwrap_or_else(|e| panic!("{e}")).path();
        let data = fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        body(&data);
        replayed += 1;
    }
    assert!(
        replayed >= 5,
        "{target}: only {replayed} inputs in {}",
        dir.display()
    );
}

#[test]
fn frame_reader_corpus_replays() {
    replay("frame_reader", mcp_sansio::fuzzing::frame_reader);
}

#[test]
fn parse_frame_corpus_replays() {
    replay("parse_frame", mcp_sansio::fuzzing::parse_frame_body);
}

#[test]
fn client_session_corpus_replays() {
    replay("client_session", mcp_sansio::fuzzing::client_session);
}

#[test]
fn sse_corpus_replays() {
    replay("sse", mcp_sansio::fuzzing::sse);
}

#[test]
fn http_session_corpus_replays() {
    replay("http_session", mcp_sansio::fuzzing::http_session);
}

#[test]
fn auth_corpus_replays() {
    replay("auth", mcp_sansio::fuzzing::auth);
}

#[test]
fn subscription_corpus_replays() {
    replay("subscription", mcp_sansio::fuzzing::subscription);
}
