//! Any text servers write for their tools and any query a model sends: tool search never
//! panics and keeps the ranker's contract. The body lives in mcp-sansio-host.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| mcp_sansio_host::fuzzing::tool_search(data));
