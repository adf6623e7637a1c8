//! `parse_frame` never panics, agrees with serde_json, and round-trips; the body lives in
//! the library.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| mcp_sansio::fuzzing::parse_frame_body(data));
