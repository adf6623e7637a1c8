//! Model-based test of the session: random scenarios of calls, answers (whole or cut),
//! repeated and stranger answers, notifications, pings, cancels and clock ticks, checked
//! after every step by `mcp_sansio::fuzzing::run_session`: a call is refused exactly when it
//! must be, every request ends exactly once, no answer binds to another request, late
//! answers never become results, no operation outlives its deadline, and the notification
//! cap holds. Scenarios are the fuzz target's own type, drawn from bytes by `arbitrary`.

use mcp_sansio::fuzzing::{run_session, Scenario, Step, MAX_STEPS};
use proptest::prelude::*;

/// Scenarios as the fuzz target draws them: from random bytes, through `arbitrary`.
fn scenario() -> impl Strategy<Value = Scenario> {
    prop::collection::vec(any::<u8>(), 0..MAX_STEPS * 4)
        .prop_map(|bytes| Scenario::from_bytes(&bytes))
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 512,
        failure_persistence: Some(Box::new(
            proptest::test_runner::FileFailurePersistence::Direct("proptest-regressions/session_model.txt"),
        )),
        ..ProptestConfig::default()
    })]

    #[test]
    fn the_request_table_keeps_its_invariants(scenario in scenario()) {
        run_session(&scenario.steps);
    }

    /// Without stranger or repeated answers the connection never fails: long runs exercise
    /// deadlines, late answers, the cap and the in-flight limit rather than ending early.
    #[test]
    fn well_behaved_runs_never_fail_the_connection(scenario in scenario()) {
        let steps: Vec<Step> = scenario.steps.into_iter().filter(|s| !s.breaks_the_protocol()).collect();
        prop_assert!(!run_session(&steps), "a well-behaved server failed the connection");
    }
}
