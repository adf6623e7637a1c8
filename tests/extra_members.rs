//! Nothing the server sent is lost on the way back out: a fixture full of members this crate
//! does not model (icons, `_meta`, `execution`, annotations, titles, sizes, unknown future
//! members), listed and called through a client, then written back with `to_json` and with
//! serde, compared member for member with what the server sent.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

mod common;

use common::Pair;
use mcp_sansio::{Catalog, CatalogPolicy, Limits, ProtocolChoice, ProtocolVersion};
use serde_json::{json, Value};

fn tools() -> Value {
    json!([
        {
            "name": "word_count",
            "title": "Word count",
            "description": "Count the words.",
            "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}},
            "outputSchema": {"type": "object", "properties": {"words": {"type": "integer"}}},
            "annotations": {"readOnlyHint": true, "title": "Counter"},
            "icons": [{"src": "data:image/png;base64,AA==", "mimeType": "image/png", "sizes": ["48x48"]}],
            "execution": {"taskSupport": "optional"},
            "_meta": {"com.example/owner": "stock-team", "nested": {"a": [1, 2.5, null]}},
            "x-future-member": {"anything": true}
        },
        {
            "name": "a.plain-tool",
            "inputSchema": {"type": "object"}
        }
    ])
}

fn result() -> Value {
    json!({
        "content": [
            {"type": "text", "text": "4", "annotations": {"audience": ["user"], "priority": 0.5}, "_meta": {"k": 1}},
            {"type": "image", "data": "AA==", "mimeType": "image/png", "annotations": {"lastModified": "2025-01-01T00:00:00Z"}},
            {"type": "resource_link", "uri": "file:///r", "name": "r", "title": "R", "size": 3, "icons": []},
            {"type": "resource", "resource": {"uri": "file:///b", "text": "b", "_meta": {"m": true}}, "annotations": {"audience": ["assistant"]}},
            {"type": "hologram", "depth": 3}
        ],
        "structuredContent": {"words": 4},
        "isError": false,
        "_meta": {"io.modelcontextprotocol/related-task": {"taskId": "t1"}},
        "x-future-member": [1, "two"]
    })
}

fn connected() -> Pair {
    let mut pair = Pair::new(Pair::config(
        ProtocolChoice::Pinned(ProtocolVersion::V2025_11_25),
        &["word_count"],
    ));
    let op = pair.client.connect(pair.now).unwrap();
    pair.drain();
    let id = pair.last_id();
    pair.reply(&json!({"jsonrpc": "2.0", "id": id, "result": {
        "protocolVersion": "2025-11-25",
        "capabilities": {"tools": {"listChanged": true}, "resources": {}, "prompts": {}, "experimental": {"x": {}}},
        "serverInfo": {"name": "fixture", "version": "1", "title": "Fixture", "icons": [{"src": "a.png"}], "websiteUrl": "https://example.com"},
        "instructions": "Be brief."
    }}).to_string());
    let connected = pair.finished(op).unwrap();
    let written: Value = serde_json::from_str(&connected.to_json()).unwrap();
    assert_eq!(written["serverInfo"]["websiteUrl"], "https://example.com");
    assert_eq!(written["serverInfo"]["icons"], json!([{"src": "a.png"}]));
    assert_eq!(written["capabilities"]["experimental"], json!({"x": {}}));
    assert_eq!(serde_json::to_value(&connected).unwrap(), written);
    pair.sent.clear();
    pair
}

#[test]
fn tools_keep_every_member_written_back_by_to_json_and_serde() {
    let mut pair = connected();
    let op = pair.client.list_tools(pair.now).unwrap();
    pair.drain();
    let id = pair.last_id();
    pair.reply(&json!({"jsonrpc": "2.0", "id": id, "result": {"tools": tools()}}).to_string());
    let catalog = pair.finished(op).unwrap();
    let sent = tools();
    for tool in catalog.tools() {
        let original = sent
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["name"] == tool.name.as_str())
            .unwrap();
        let written: Value = serde_json::from_str(&tool.to_json()).unwrap();
        assert_eq!(&written, original, "to_json of {}", tool.name);
        assert_eq!(
            &serde_json::to_value(tool).unwrap(),
            original,
            "serde of {}",
            tool.name
        );
    }
    // The catalog as a whole: a tools/list result, which reads back to the same catalog.
    let written = catalog.to_json();
    let back = Catalog::from_json(&written, CatalogPolicy::STRICT, &Limits::default()).unwrap();
    assert_eq!(back, catalog);
    let through_serde: Catalog =
        serde_json::from_value(serde_json::to_value(&catalog).unwrap()).unwrap();
    assert_eq!(through_serde, catalog);
}

#[test]
fn results_keep_every_member_of_every_block() {
    let mut pair = connected();
    pair.list(&tools().to_string());
    let (op, id) = pair.call("word_count", r#"{"text":"a b c d"}"#);
    pair.reply(&json!({"jsonrpc": "2.0", "id": id, "result": result()}).to_string());
    let result_back = pair.finished(op).unwrap();
    let written: Value = serde_json::from_str(&result_back.to_json()).unwrap();
    assert_eq!(written, result());
    assert_eq!(serde_json::to_value(&result_back).unwrap(), result());

    #[derive(serde::Deserialize, Debug, PartialEq)]
    struct Words {
        words: u32,
    }
    assert_eq!(
        result_back.structured::<Words>().unwrap().unwrap(),
        Words { words: 4 }
    );
    assert!(result_back.structured::<Vec<String>>().unwrap().is_err());
}

#[test]
fn resources_and_prompts_keep_every_member() {
    let mut pair = connected();
    let resources = json!([{"uri": "file:///a", "name": "a", "title": "A", "size": 12, "annotations": {"priority": 1}, "icons": [], "_meta": {"m": 1}}]);
    let op = pair.client.list_resources(pair.now).unwrap();
    pair.drain();
    let id = pair.last_id();
    pair.reply(
        &json!({"jsonrpc": "2.0", "id": id, "result": {"resources": resources}}).to_string(),
    );
    let listed = pair.finished(op).unwrap();
    assert_eq!(serde_json::to_value(&listed).unwrap(), resources);

    let prompts = json!([{"name": "p", "title": "P", "description": "d", "arguments": [{"name": "x", "title": "X", "required": true}], "icons": [], "_meta": {"m": 2}}]);
    let op = pair.client.list_prompts(pair.now).unwrap();
    pair.drain();
    let id = pair.last_id();
    pair.reply(&json!({"jsonrpc": "2.0", "id": id, "result": {"prompts": prompts}}).to_string());
    let listed = pair.finished(op).unwrap();
    assert_eq!(serde_json::to_value(&listed).unwrap(), prompts);

    let got = json!({"description": "d", "messages": [{"role": "user", "content": {"type": "text", "text": "hi", "annotations": {"audience": ["user"]}}, "_meta": {"m": 3}}], "_meta": {"m": 4}});
    let op = pair
        .client
        .get_prompt("p", &[("x", "1")], pair.now)
        .unwrap();
    pair.drain();
    let id = pair.last_id();
    pair.reply(&json!({"jsonrpc": "2.0", "id": id, "result": got}).to_string());
    let prompt = pair.finished(op).unwrap();
    assert_eq!(serde_json::to_value(&prompt).unwrap(), got);

    let contents =
        json!([{"uri": "file:///a", "mimeType": "text/plain", "text": "hello", "_meta": {"m": 5}}]);
    let op = pair.client.read_resource("file:///a", pair.now).unwrap();
    pair.drain();
    let id = pair.last_id();
    pair.reply(&json!({"jsonrpc": "2.0", "id": id, "result": {"contents": contents}}).to_string());
    let read = pair.finished(op).unwrap();
    assert_eq!(serde_json::to_value(&read).unwrap(), contents);
}
