//! Replays the host's fuzz corpora (`fuzz/corpus/host_dispatch` and
//! `fuzz/corpus/tool_search`, and any crash kept there as a seed) under `cargo test`.

#![allow(clippy::panic)]

use std::fs;
use std::path::Path;

/// Runs `body` on every file of the corpus `name`, and returns how many there were.
fn replay(name: &str, body: fn(&[u8])) -> usize {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../fuzz/corpus")
        .join(name);
    let mut replayed = 0;
    for entry in fs::read_dir(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
        let path = entry.unwrap_or_else(|e| panic!("{e}")).path();
        let data = fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        body(&data);
        replayed += 1;
    }
    replayed
}

#[test]
fn host_dispatch_seeds_replay() {
    let replayed = replay("host_dispatch", mcp_sansio_host::fuzzing::host_dispatch);
    assert!(replayed >= 5, "only {replayed} seeds");
}

#[test]
fn tool_search_seeds_replay() {
    let replayed = replay("tool_search", mcp_sansio_host::fuzzing::tool_search);
    assert!(replayed >= 9, "only {replayed} seeds");
}
