//! Split invariance and the memory bound of `SseReader`, against the event-stream rules read
//! whole; the body lives in the library.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| mcp_sansio::fuzzing::sse(data));
