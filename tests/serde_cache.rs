//! What an application caches through serde reads back as it was written, and is read as
//! strictly as the server's own answer: a catalog (with its cache hint), a tool, a result, a
//! cache hint, a protocol version.

#![cfg(feature = "serde")]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use mcp_sansio::{
    CacheHint, CacheScope, CallToolResult, Catalog, CatalogPolicy, ErrorCode, Limits,
    ProtocolVersion, RawJson, RpcError, Tool,
};
use serde_json::{json, Value};

const LISTING: &str = r#"{"tools":[{"name":"word_count","title":"Words","description":"Count words.","inputSchema":{"type":"object","properties":{"text":{"type":"string"}}},"annotations":{"readOnlyHint":true},"x-vendor":1}],"ttlMs":60000,"cacheScope":"public"}"#;

#[test]
fn a_cached_catalog_reads_back_whole_with_its_cache_hint() {
    let catalog = Catalog::from_json(LISTING, CatalogPolicy::STRICT, &Limits::default()).unwrap();
    assert_eq!(
        catalog.cache(),
        Some(CacheHint::new(60_000, CacheScope::Public))
    );
    let cached = serde_json::to_string(&catalog).unwrap();
    assert_eq!(cached, catalog.to_json());
    let back: Catalog = serde_json::from_str(&cached).unwrap();
    assert_eq!(back, catalog);
    // What was cached is read as the server's answer is: an invalid tool, strictly, refuses it.
    let tampered = cached.replace("word_count", "word count");
    assert!(serde_json::from_str::<Catalog>(&tampered).is_err());
}

#[test]
fn a_tool_and_a_result_read_back_member_for_member() {
    let catalog = Catalog::from_json(LISTING, CatalogPolicy::STRICT, &Limits::default()).unwrap();
    let tool = &catalog.tools()[0];
    let text = serde_json::to_string(tool).unwrap();
    assert_eq!(serde_json::from_str::<Tool>(&text).unwrap(), *tool);
    assert!(
        serde_json::from_str::<Tool>(r#"{"name":"t"}"#).is_err(),
        "no inputSchema"
    );

    let result =
        r#"{"content":[{"type":"text","text":"4"}],"structuredContent":{"n":4},"isError":false}"#;
    let read: CallToolResult = serde_json::from_str(result).unwrap();
    assert_eq!(read.text(), "4");
    let again: CallToolResult =
        serde_json::from_str(&serde_json::to_string(&read).unwrap()).unwrap();
    assert_eq!(again, read);
    assert!(serde_json::from_str::<CallToolResult>(r#"{"content":{}}"#).is_err());
}

#[test]
fn a_cache_hint_and_a_version_read_back_and_refuse_what_they_do_not_know() {
    let hint = CacheHint::new(5_000, CacheScope::Private);
    let text = serde_json::to_string(&hint).unwrap();
    assert_eq!(text, r#"{"ttlMs":5000,"cacheScope":"private"}"#);
    assert_eq!(serde_json::from_str::<CacheHint>(&text).unwrap(), hint);
    // Read as a result's members are: no life is none, an unknown scope private.
    assert_eq!(
        serde_json::from_str::<CacheHint>(r#"{"cacheScope":"world"}"#).unwrap(),
        CacheHint::new(0, CacheScope::Private)
    );

    for version in [
        ProtocolVersion::V2025_06_18,
        ProtocolVersion::V2025_11_25,
        ProtocolVersion::V2026_07_28,
    ] {
        let text = serde_json::to_string(&version).unwrap();
        assert_eq!(text, format!("\"{version}\""));
        assert_eq!(
            serde_json::from_str::<ProtocolVersion>(&text).unwrap(),
            version
        );
    }
    let unknown = serde_json::from_str::<ProtocolVersion>(r#""2099-01-01""#).unwrap_err();
    assert!(
        unknown
            .to_string()
            .contains(r#"unknown protocol version "2099-01-01""#),
        "{unknown}"
    );
}

#[test]
fn an_rpc_error_serializes_as_json_rpc_writes_it() {
    let mut error = RpcError::new(ErrorCode::INVALID_PARAMS, "bad region");
    let value: Value = serde_json::to_value(&error).unwrap();
    assert_eq!(value, json!({"code": -32602, "message": "bad region"}));
    error.data = Some(RawJson::parse(r#"{"field":"region"}"#, &Limits::default()).unwrap());
    let value: Value = serde_json::to_value(&error).unwrap();
    assert_eq!(
        value,
        json!({"code": -32602, "message": "bad region", "data": {"field": "region"}})
    );
}
