//! Any bytes to a 2026-07-28 client with two subscriptions in flight: each is acknowledged
//! at most once and honouring no more than it asked, and ends at most once; the body lives in
//! the library.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| mcp_sansio::fuzzing::subscription(data));
