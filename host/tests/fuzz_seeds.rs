//! Replays the `host_dispatch` fuzz corpus (`fuzz/corpus/host_dispatch`, and any crash kept
//! there as a seed) under `cargo test`.

#![allow(clippy::panic)]

use std::fs;
use std::path::Path;

#[test]
fn host_dispatch_seeds_replay() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../fuzz/corpus/host_dispatch");
    let mut replayed = 0;
    for entry in fs::read_dir(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
        let path = entry.unwrap_or_else(|e| panic!("{e}")).path();
        let data = fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        mcp_sansio_host::fuzzing::host_dispatch(&data);
        replayed += 1;
    }
    assert!(replayed >= 5, "only {replayed} seeds");
}
