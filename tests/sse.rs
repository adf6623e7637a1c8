//! The event-stream reader against the rules read whole, for any stream and any way of
//! cutting it (proptest); the `sse` fuzz target checks the same with coverage guidance.

use mcp_sansio::fuzzing::{expected_events, read_events_in_pieces, SseItem};
use proptest::prelude::*;

/// Streams made of the pieces that matter: field names, colons, spaces, every line ending,
/// blank lines, a byte-order mark, NUL, and plain bytes.
fn stream() -> impl Strategy<Value = Vec<u8>> {
    let token = prop_oneof![
        Just(b"data".to_vec()),
        Just(b"event".to_vec()),
        Just(b"id".to_vec()),
        Just(b"retry".to_vec()),
        Just(b":".to_vec()),
        Just(b": ".to_vec()),
        Just(b"\n".to_vec()),
        Just(b"\r".to_vec()),
        Just(b"\r\n".to_vec()),
        Just(b"\n\n".to_vec()),
        Just(vec![0xEF, 0xBB, 0xBF]),
        Just(vec![0]),
        proptest::collection::vec(any::<u8>(), 1..6),
        "[a-z0-9{}\" ]{1,12}".prop_map(String::into_bytes),
    ];
    proptest::collection::vec(token, 0..40).prop_map(|t| t.concat())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn any_cut_yields_what_the_rules_say(
        stream in stream(),
        frame in 1usize..48,
        field in 0usize..12,
        pieces in proptest::collection::vec(0usize..9, 0..24),
    ) {
        let expected = expected_events(&stream, frame, field);
        prop_assert_eq!(&read_events_in_pieces(&stream, frame, field, &[]), &expected);
        prop_assert_eq!(&read_events_in_pieces(&stream, frame, field, &pieces), &expected);
        let bytes = vec![1; stream.len()];
        prop_assert_eq!(&read_events_in_pieces(&stream, frame, field, &bytes), &expected);
    }
}

#[test]
fn the_rules_read_whole_agree_with_hand_worked_streams() {
    let event = |data: &[u8], id: Option<&[u8]>| SseItem::Event {
        event: Vec::new(),
        data: data.to_vec(),
        id: id.map(<[u8]>::to_vec),
    };
    assert_eq!(
        expected_events(b"id: 1\ndata:\n\ndata: {}\r\n\r\n", 64, 8),
        [event(b"", Some(b"1")), event(b"{}", Some(b"1"))]
    );
    assert_eq!(
        expected_events(b"data: 123456789\n\ndata: x\n\n", 8, 8),
        [SseItem::TooLong(8), event(b"x", None)]
    );
}
