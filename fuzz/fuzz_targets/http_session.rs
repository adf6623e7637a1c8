//! The session over Streamable HTTP against replies of any status, type, session id and
//! body, ended or broken in any order; the body lives in the library.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| mcp_sansio::fuzzing::http_session(data));
