//! Scenarios of calls, answers cut anywhere, stray answers, notifications, cancels and clock
//! ticks against a connected client, checked against a model; the body lives in the library
//! and the input is a structured `Scenario`, drawn by `arbitrary`.
#![no_main]

libfuzzer_sys::fuzz_target!(|scenario: mcp_sansio::fuzzing::Scenario| {
    mcp_sansio::fuzzing::run_session(&scenario.steps);
});
