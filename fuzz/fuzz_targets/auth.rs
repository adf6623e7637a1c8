//! OAuth's readers (the challenge, the metadata, the token, the redirect) and its whole flow
//! on any bytes: no panic, and what each accepts keeps its documented promises; the body
//! lives in the library.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| mcp_sansio::fuzzing::auth(data));
