//! Any schema a server lists and any argument text a model sends: the host's palette never
//! panics. The body lives in mcp-sansio-host.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| mcp_sansio_host::fuzzing::host_dispatch(data));
