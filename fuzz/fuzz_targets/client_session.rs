//! Sequences of calls, answers cut anywhere, stray answers, notifications, cancels and clock
//! ticks against a connected client, checked against a model; the body lives in the library.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| mcp_sansio::fuzzing::client_session(data));
