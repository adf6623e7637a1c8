//! parse_frame and encode_frame: each rule of the strict reading, and the exact bytes written.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use mcp_sansio::{
    encode_frame, parse_frame, Error, ErrorCode, JsonErrorKind, Limits, Message, Misuse,
    Notification, Outcome, ProtocolViolation, RawJson, RawObject, Request, RequestId, Response,
    RpcError,
};

fn parse(frame: &str) -> Result<Message, Error> {
    parse_frame(frame.as_bytes(), &Limits::default())
}

fn violation(frame: &str) -> ProtocolViolation {
    match parse(frame) {
        Err(Error::Protocol(v)) => v,
        other => panic!("{frame}: expected a protocol violation, got {other:?}"),
    }
}

fn malformed(frame: &[u8]) -> JsonErrorKind {
    match parse_frame(frame, &Limits::default()) {
        Err(Error::Malformed(e)) => e.kind(),
        other => panic!("expected malformed JSON, got {other:?}"),
    }
}

fn response_id(id_json: &str) -> Result<RequestId, Error> {
    match parse(&format!(
        r#"{{"jsonrpc":"2.0","id":{id_json},"result":{{}}}}"#
    ))? {
        Message::Response(r) => Ok(r.id),
        other => panic!("not a response: {other:?}"),
    }
}

#[test]
fn each_kind_of_message_parses() {
    let request =
        parse(r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"word_count"}}"#);
    assert_eq!(
        request.unwrap(),
        Message::Request(Request {
            id: RequestId::from(7),
            method: "tools/call".into(),
            params: Some(RawObject::parse(r#"{"name":"word_count"}"#, &Limits::default()).unwrap()),
        })
    );
    let notification = parse(r#"{"method":"notifications/initialized","jsonrpc":"2.0"}"#);
    assert_eq!(
        notification.unwrap(),
        Message::Notification(Notification {
            method: "notifications/initialized".into(),
            params: None
        })
    );
    let Message::Response(ok) =
        parse(r#"{"jsonrpc":"2.0","id":"a","result":{"x":[1,2]}}"#).unwrap()
    else {
        panic!("not a response")
    };
    assert_eq!(ok.id, RequestId::from("a"));
    assert!(matches!(ok.outcome, Outcome::Result(r) if r.as_str() == r#"{"x":[1,2]}"#));

    let failed = parse(
        r#"{"jsonrpc":"2.0","id":3,"error":{"code":-32601,"message":"no such method","data":{"m":"x"}}}"#,
    );
    let Message::Response(Response {
        id,
        outcome: Outcome::Error(e),
    }) = failed.unwrap()
    else {
        panic!("not an error response")
    };
    assert_eq!(id, RequestId::from(3));
    assert_eq!(e.code, ErrorCode::METHOD_NOT_FOUND);
    assert_eq!(e.message, "no such method");
    assert_eq!(e.data.unwrap().as_str(), r#"{"m":"x"}"#);
}

#[test]
fn an_error_with_a_null_or_absent_id_answers_nothing() {
    for frame in [
        r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error"}}"#,
        r#"{"jsonrpc":"2.0","error":{"code":-32700,"message":"parse error"}}"#,
    ] {
        let Ok(Message::UnboundError(e)) = parse(frame) else {
            panic!("{frame} should be an unbound error")
        };
        assert_eq!(e.code, ErrorCode::PARSE_ERROR);
    }
    // A result must say which request it answers.
    assert_eq!(
        violation(r#"{"jsonrpc":"2.0","id":null,"result":{}}"#),
        ProtocolViolation::InvalidId
    );
    assert_eq!(
        violation(r#"{"jsonrpc":"2.0","result":{}}"#),
        ProtocolViolation::ResultWithoutId
    );
}

#[test]
fn only_integers_within_i64_and_strings_are_ids() {
    assert_eq!(response_id("1").unwrap(), RequestId::from(1));
    assert_eq!(response_id("\"1\"").unwrap(), RequestId::from("1"));
    assert_ne!(response_id("1").unwrap(), response_id("\"1\"").unwrap());
    assert_eq!(
        response_id("-9223372036854775808").unwrap(),
        RequestId::from(i64::MIN)
    );
    assert_eq!(response_id(r#""\u0031""#).unwrap(), RequestId::from("1"));
    for not_an_id in [
        "true",
        "false",
        "1.0",
        "1e0",
        "-0",
        "null",
        "[1]",
        "{}",
        "9223372036854775808",
        "-9223372036854775809",
        "18446744073709551616",
    ] {
        assert_eq!(
            response_id(not_an_id),
            Err(Error::Protocol(ProtocolViolation::InvalidId)),
            "{not_an_id} must not be an id"
        );
    }
    assert_eq!(
        violation(r#"{"jsonrpc":"2.0","id":true,"method":"ping"}"#),
        ProtocolViolation::InvalidId
    );
}

#[test]
fn shape_rules_are_enforced() {
    let cases = [
        (r#"{"id":1,"result":{}}"#, ProtocolViolation::NotJsonRpc2),
        (
            r#"{"jsonrpc":"1.0","id":1,"result":{}}"#,
            ProtocolViolation::NotJsonRpc2,
        ),
        (
            r#"{"jsonrpc":2.0,"id":1,"result":{}}"#,
            ProtocolViolation::NotJsonRpc2,
        ),
        (
            r#"[{"jsonrpc":"2.0","id":1,"result":{}}]"#,
            ProtocolViolation::NotAnObject,
        ),
        (r#""hello""#, ProtocolViolation::NotAnObject),
        (
            r#"{"jsonrpc":"2.0","id":1,"result":{},"error":{"code":1,"message":"m"}}"#,
            ProtocolViolation::ResultAndError,
        ),
        (
            r#"{"jsonrpc":"2.0","id":1,"method":"m","result":{}}"#,
            ProtocolViolation::RequestAndResponse,
        ),
        (
            r#"{"jsonrpc":"2.0","id":1}"#,
            ProtocolViolation::NotAMessage,
        ),
        (
            r#"{"jsonrpc":"2.0","id":1,"result":[]}"#,
            ProtocolViolation::ResultNotObject,
        ),
        (
            r#"{"jsonrpc":"2.0","id":1,"result":null}"#,
            ProtocolViolation::ResultNotObject,
        ),
        (
            r#"{"jsonrpc":"2.0","id":1,"method":"m","params":[1]}"#,
            ProtocolViolation::ParamsNotObject,
        ),
        (
            r#"{"jsonrpc":"2.0","method":7}"#,
            ProtocolViolation::MethodNotString,
        ),
        (
            r#"{"jsonrpc":"2.0","id":1,"error":{"code":1.5,"message":"m"}}"#,
            ProtocolViolation::InvalidErrorObject,
        ),
        (
            r#"{"jsonrpc":"2.0","id":1,"error":{"code":2147483648,"message":"m"}}"#,
            ProtocolViolation::InvalidErrorObject,
        ),
        (
            r#"{"jsonrpc":"2.0","id":1,"error":{"code":1}}"#,
            ProtocolViolation::InvalidErrorObject,
        ),
        (
            r#"{"jsonrpc":"2.0","id":1,"error":{"code":1,"message":2}}"#,
            ProtocolViolation::InvalidErrorObject,
        ),
        (
            r#"{"jsonrpc":"2.0","id":1,"error":"boom"}"#,
            ProtocolViolation::InvalidErrorObject,
        ),
    ];
    for (frame, expected) in cases {
        assert_eq!(violation(frame), expected, "{frame}");
    }
}

#[test]
fn unknown_members_are_checked_then_ignored() {
    let frame = r#"{"jsonrpc":"2.0","id":1,"result":{},"extra":{"deep":[1,2]}}"#;
    assert!(matches!(parse(frame), Ok(Message::Response(_))));
    let dup = r#"{"jsonrpc":"2.0","id":1,"result":{},"extra":{"k":1,"k":2}}"#;
    assert_eq!(malformed(dup.as_bytes()), JsonErrorKind::DuplicateKey);
}

#[test]
fn anything_two_parsers_could_read_differently_is_refused() {
    let dup_top = br#"{"jsonrpc":"2.0","id":1,"id":2,"result":{}}"#;
    assert_eq!(malformed(dup_top), JsonErrorKind::DuplicateKey);
    let dup_escaped = br#"{"jsonrpc":"2.0","id":1,"result":{"a":1,"\u0061":2}}"#;
    assert_eq!(malformed(dup_escaped), JsonErrorKind::DuplicateKey);
    let lone = br#"{"jsonrpc":"2.0","id":1,"result":{"t":"\ud800"}}"#;
    assert_eq!(malformed(lone), JsonErrorKind::LoneSurrogate);
    let huge = br#"{"jsonrpc":"2.0","id":1,"result":{"n":1e999}}"#;
    assert_eq!(malformed(huge), JsonErrorKind::NumberOutOfRange);
    let trailing = br#"{"jsonrpc":"2.0","id":1,"result":{}} {}"#;
    assert_eq!(malformed(trailing), JsonErrorKind::TrailingData);
    let bom = b"\xef\xbb\xbf{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}";
    assert_eq!(malformed(bom), JsonErrorKind::Expected("a value"));
    let latin1 = b"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"t\":\"caf\xe9\"}}";
    assert_eq!(malformed(latin1), JsonErrorKind::InvalidUtf8);
    assert_eq!(
        malformed(b"server starting on port 8080"),
        JsonErrorKind::Expected("a value")
    );
    assert_eq!(
        malformed(b"{\"jsonrpc\":\"2.0\",\"id\":1,"),
        JsonErrorKind::UnexpectedEnd
    );
}

#[test]
fn nesting_is_bounded_at_the_limit_and_never_overflows_the_stack() {
    let limits = Limits::default();
    let nested = |depth: usize| {
        // The frame's object is depth 1, "result" depth 2, then arrays.
        let arrays = depth - 2;
        format!(
            r#"{{"jsonrpc":"2.0","id":1,"result":{{"a":{}{}}}}}"#,
            "[".repeat(arrays),
            "]".repeat(arrays)
        )
    };
    let at_limit = nested(limits.nesting_depth);
    let Ok(Message::Response(r)) = parse(&at_limit) else {
        panic!("depth at the limit refused")
    };
    // Whatever the crate accepts, serde_json can deserialize afterwards.
    let Outcome::Result(result) = r.outcome else {
        panic!()
    };
    serde_json::from_str::<serde_json::Value>(result.as_str()).unwrap();
    assert_eq!(
        malformed(nested(limits.nesting_depth + 1).as_bytes()),
        JsonErrorKind::TooDeep {
            limit: limits.nesting_depth
        }
    );
    // A million open brackets: refused at the limit, with no recursion to overflow.
    let mut deep = br#"{"jsonrpc":"2.0","id":1,"result":{"a":"#.to_vec();
    deep.extend(core::iter::repeat_n(b'[', 1_000_000));
    assert_eq!(
        malformed(&deep),
        JsonErrorKind::TooDeep {
            limit: limits.nesting_depth
        }
    );
}

#[test]
fn payloads_are_kept_compact() {
    let spaced = "{ \"jsonrpc\" : \"2.0\" , \"id\" : 1 ,\t\"result\" : { \"text\" : \"a b\" ,\r\"n\" : [ 1 , 2 ] } }";
    let Ok(Message::Response(r)) = parse(spaced) else {
        panic!()
    };
    let Outcome::Result(result) = r.outcome else {
        panic!()
    };
    assert_eq!(result.as_str(), r#"{"text":"a b","n":[1,2]}"#);
}

#[test]
fn encoding_is_compact_one_line_and_exact() {
    let limits = Limits::default();
    let request = Message::Request(Request {
        id: RequestId::from(41),
        method: "tools/list".into(),
        params: Some(RawObject::empty()),
    });
    let mut out = Vec::new();
    encode_frame(&request, &limits, &mut out).unwrap();
    assert_eq!(
        out,
        b"{\"jsonrpc\":\"2.0\",\"id\":41,\"method\":\"tools/list\",\"params\":{}}\n"
    );

    // Newlines in strings are escaped, so the frame stays one line.
    let odd = Message::Response(Response {
        id: RequestId::from("line\nbreak"),
        outcome: Outcome::Error(RpcError {
            code: ErrorCode::INVALID_PARAMS,
            message: "bad \"name\"\n".into(),
            data: Some(RawJson::parse("[1,\n2]", &limits).unwrap()),
        }),
    });
    out.clear();
    encode_frame(&odd, &limits, &mut out).unwrap();
    assert_eq!(
        out,
        br#"{"jsonrpc":"2.0","id":"line\nbreak","error":{"code":-32602,"message":"bad \"name\"\n","data":[1,2]}}"#
            .iter()
            .chain(b"\n")
            .copied()
            .collect::<Vec<u8>>()
    );
    assert_eq!(out.iter().filter(|&&b| b == b'\n').count(), 1);
    assert_eq!(parse_frame(&out[..out.len() - 1], &limits), Ok(odd));

    let unbound = Message::UnboundError(RpcError {
        code: ErrorCode(-32700),
        message: "x".into(),
        data: None,
    });
    out.clear();
    encode_frame(&unbound, &limits, &mut out).unwrap();
    assert_eq!(
        out,
        b"{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32700,\"message\":\"x\"}}\n"
    );
}

#[test]
fn encoding_refuses_a_frame_over_the_limit_and_leaves_the_buffer_alone() {
    let ping = Message::Request(Request {
        id: RequestId::from(1),
        method: "ping".into(),
        params: None,
    });
    let exact = b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\n".len();
    let mut limits = Limits::default();
    limits.frame_bytes = exact;
    let mut out = b"kept".to_vec();
    encode_frame(&ping, &limits, &mut out).unwrap();
    assert_eq!(out.len(), 4 + exact);

    limits.frame_bytes = exact - 1;
    let mut out = b"kept".to_vec();
    assert_eq!(
        encode_frame(&ping, &limits, &mut out),
        Err(Misuse::FrameTooLong {
            len: exact,
            limit: exact - 1
        })
    );
    assert_eq!(out, b"kept");
}

#[test]
fn errors_read_as_one_sentence_that_names_who_is_at_fault() {
    let cases = [
        (
            parse("{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}").unwrap_err(),
            "the peer sent malformed JSON: the text ends inside a value at byte 35",
        ),
        (
            parse(r#"{"jsonrpc":"2.0","id":true,"result":{}}"#).unwrap_err(),
            "the peer broke the protocol: an id is neither an integer within i64 nor a string",
        ),
        (
            Error::from(RawObject::parse("[]", &Limits::default()).unwrap_err()),
            "the application's request was refused: a value that must be a JSON object is not one",
        ),
        (
            Error::Protocol(ProtocolViolation::FrameTooLong { limit: 65536 }),
            "the peer broke the protocol: a frame exceeds the 65536-byte limit",
        ),
    ];
    for (error, sentence) in cases {
        assert_eq!(error.to_string(), sentence);
    }
}

#[test]
fn teaching_limits_are_one_constructor_away() {
    let teaching = Limits::teaching();
    assert_eq!(teaching.frame_bytes, 64 * 1024);
    assert_eq!(teaching.notifications_before_answer, 16);
    assert_eq!(teaching.tools_per_catalog, 32);
    assert_eq!(
        teaching.operation_timeout,
        core::time::Duration::from_secs(5)
    );
    let default = Limits::default();
    assert!(default.frame_bytes <= 16 * 1024 * 1024);
    assert!(
        default.frame_bytes >= 1024 * 1024,
        "must admit real servers' tool lists"
    );
    assert!(
        default.notifications_before_answer >= 1000,
        "must admit a real server that logs each step of a long call"
    );
}
