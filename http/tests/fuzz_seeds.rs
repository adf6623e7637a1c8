//! Replays the `http_reply` fuzz corpus (`fuzz/corpus/http_reply`, and any crash kept there
//! as a seed) under `cargo test`.

#![allow(clippy::unwrap_used)]

#[test]
fn the_http_reply_seeds_replay() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../fuzz/corpus/http_reply");
    let seeds: Vec<Vec<u8>> = std::fs::read_dir(dir)
        .unwrap()
        .map(|entry| std::fs::read(entry.unwrap().path()).unwrap())
        .collect();
    assert!(seeds.len() >= 5, "only {} seeds in {dir}", seeds.len());
    seeds
        .iter()
        .for_each(|seed| mcp_sansio_http::fuzzing::http_reply(seed));
}
