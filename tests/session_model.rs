//! Model-based test of the session: random interleavings of calls, answers (whole or cut),
//! repeated and stranger answers, notifications, pings, cancels and clock ticks, checked
//! after every step by `mcp_sansio::fuzzing::run_session`: every request ends exactly once,
//! no answer binds to another request, late answers never become results, no operation
//! outlives its deadline, and the notification cap holds.

use mcp_sansio::fuzzing::{run_session, Step};
use proptest::prelude::*;

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        4 => any::<u8>().prop_map(|tool| Step::Call { tool }),
        4 => (any::<u8>(), 1u8..4).prop_map(|(pick, pieces)| Step::Answer { pick, pieces }),
        1 => any::<u8>().prop_map(|pick| Step::AnswerAgain { pick }),
        1 => Just(Step::AnswerStranger),
        3 => (0u8..20).prop_map(|count| Step::Notify { count }),
        1 => Just(Step::Ping),
        3 => (0u16..3000).prop_map(|ms| Step::Tick { ms }),
        1 => any::<u8>().prop_map(|pick| Step::Cancel { pick }),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 256,
        failure_persistence: Some(Box::new(
            proptest::test_runner::FileFailurePersistence::Direct("proptest-regressions/session_model.txt"),
        )),
        ..ProptestConfig::default()
    })]

    #[test]
    fn the_request_table_keeps_its_invariants(steps in prop::collection::vec(step(), 0..120)) {
        run_session(&steps);
    }

    /// Without stranger or repeated answers the connection never fails, so the long runs
    /// exercise deadlines, late answers and the cap rather than ending early.
    #[test]
    fn well_behaved_runs_keep_their_invariants(
        steps in prop::collection::vec(
            step().prop_filter("no connection-breaking step", |s| !matches!(s, Step::AnswerAgain { .. } | Step::AnswerStranger)),
            0..200,
        )
    ) {
        run_session(&steps);
    }
}
