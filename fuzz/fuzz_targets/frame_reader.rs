//! Split invariance and the memory bound of `FrameReader`; the body lives in the library.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| mcp_sansio::fuzzing::frame_reader(data));
