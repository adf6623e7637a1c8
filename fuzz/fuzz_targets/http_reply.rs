//! Bounded memory and split invariance of the HTTP transport's reply reader (head, framing,
//! chunked coding) on any bytes a server sends; the body lives in the library.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| mcp_sansio_http::fuzzing::http_reply(data));
