//! What the user typed for a form elicitation, checked against the server's form before it
//! is sent: server-everything's own form (every kind of field the revisions allow), values
//! that break it, forms that are not flat or cost too much, and requests with no form.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

use mcp_sansio::{
    Asks, Client, Config, Event, Instant, Limits, ProtocolChoice, RawObject, Reply, ServerRequest,
};
use mcp_sansio_host::{accept_elicited, ElicitRefusal, PaletteConfig};
use serde_json::json;

/// server-everything's `trigger-elicitation-request` form (2026.8.31), as it sends it.
fn everything_form() -> serde_json::Value {
    json!({
        "type": "object",
        "properties": {
            "name": {"title": "String", "type": "string", "description": "Your full, legal name"},
            "check": {"title": "Boolean", "type": "boolean"},
            "email": {"type": "string", "format": "email"},
            "integer": {"type": "integer", "minimum": 1, "maximum": 100, "default": 42},
            "number": {"type": "number", "minimum": 0, "maximum": 1000, "default": 2.5},
            "untitledSingleSelectEnum": {"type": "string", "enum": ["Monica", "Rachel", "Joey"]},
            "untitledMultipleSelectEnum": {"type": "array", "minItems": 1, "maxItems": 3,
                "items": {"type": "string", "enum": ["Guitar", "Piano", "Violin"]}},
            "titledSingleSelectEnum": {"type": "string",
                "oneOf": [{"const": "hero-1", "title": "Superman"}, {"const": "hero-2", "title": "Green Lantern"}]},
            "titledMultipleSelectEnum": {"type": "array", "minItems": 1, "maxItems": 3,
                "items": {"anyOf": [{"const": "fish-1", "title": "Tuna"}, {"const": "fish-2", "title": "Salmon"}]}},
            "legacyTitledEnum": {"type": "string", "enum": ["pet-1", "pet-2"], "enumNames": ["Cats", "Dogs"]}
        },
        "required": ["name"]
    })
}

/// The request a 2025-11-25 server's `elicitation/create` with `params` becomes.
fn asked(params: &serde_json::Value) -> ServerRequest {
    let mut config = Config::new(mcp_sansio::Allowlist::default());
    config.protocol = ProtocolChoice::Stateful;
    config.asks = Asks::NONE.with_elicitation().with_url_elicitation();
    let mut client = Client::new(config);
    let now = Instant::ZERO;
    let _handshake = client.connect(now).unwrap();
    let handshake = r#"{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"s","version":"1"}}}"#;
    let ask =
        json!({"jsonrpc": "2.0", "id": "e", "method": "elicitation/create", "params": params});
    client.handle_input(format!("{handshake}\n{ask}\n").as_bytes(), now);
    std::iter::from_fn(|| client.poll_event())
        .find_map(|event| match event {
            Event::ServerRequest(request) => Some(request),
            _ => None,
        })
        .expect("the request reached the application")
}

fn form(schema: serde_json::Value) -> ServerRequest {
    asked(&json!({"message": "Please fill in", "requestedSchema": schema}))
}

fn values(text: &str) -> RawObject {
    RawObject::parse(text, &Limits::default()).unwrap()
}

#[test]
fn values_that_fit_a_real_form_are_accepted_as_typed() {
    let request = form(everything_form());
    let typed = values(
        r#"{"name":"Ana Lima","check":true,"email":"not checked","integer":42,"number":2.50,
            "untitledSingleSelectEnum":"Joey","untitledMultipleSelectEnum":["Piano","Violin"],
            "titledSingleSelectEnum":"hero-2","titledMultipleSelectEnum":["fish-1"],
            "legacyTitledEnum":"pet-2"}"#,
    );
    let reply = accept_elicited(&request, &typed, &PaletteConfig::default()).unwrap();
    assert_eq!(reply, Reply::accept(&typed));
    // Only what is required is required.
    let least = values(r#"{"name":"Ana"}"#);
    assert!(accept_elicited(&request, &least, &PaletteConfig::default()).is_ok());
}

#[test]
fn values_that_break_the_form_are_refused_each_problem_named() {
    let request = form(everything_form());
    let config = PaletteConfig::default();
    for (typed, problem) in [
        (r#"{"check":true}"#, "missing required field 'name'"),
        (
            r#"{"name":"Ana","integer":"42"}"#,
            "field 'integer' must be an integer",
        ),
        (
            r#"{"name":"Ana","integer":101}"#,
            "field 'integer' is invalid",
        ),
        (
            r#"{"name":"Ana","untitledSingleSelectEnum":"Ross"}"#,
            "field 'untitledSingleSelectEnum'",
        ),
        (
            r#"{"name":"Ana","untitledMultipleSelectEnum":[]}"#,
            "field 'untitledMultipleSelectEnum'",
        ),
        (
            r#"{"name":"Ana","titledMultipleSelectEnum":["fish-9"]}"#,
            "field 'titledMultipleSelectEnum[0]'",
        ),
    ] {
        let refused = accept_elicited(&request, &values(typed), &config);
        let Err(ElicitRefusal::Values(problems)) = &refused else {
            panic!("{typed}: {refused:?}");
        };
        assert!(problems[0].starts_with(problem), "{typed}: {problems:?}");
        assert_eq!(
            ElicitRefusal::Values(problems.clone()).to_string(),
            format!("the values do not fit the form: {}", problems.join("; "))
        );
    }
}

#[test]
fn a_form_that_is_not_flat_or_costs_too_much_is_the_server_s_fault() {
    let config = PaletteConfig::default();
    let name = values(r#"{"name":"Ana"}"#);
    for schema in [
        json!({"type": "object", "properties": {"address": {"type": "object"}}}),
        json!({"type": "object", "properties": {"tags": {"type": "array", "items": {"type": "object"}}}}),
        json!({"type": "object", "properties": {"name": {"$ref": "#/$defs/n"}}}),
        json!({"type": "string"}),
        json!({"type": "object", "properties": []}),
    ] {
        let refused = accept_elicited(&form(schema.clone()), &name, &config);
        assert!(
            matches!(refused, Err(ElicitRefusal::Schema(_))),
            "{schema}: {refused:?}"
        );
    }
    // What the user is told blames the server's form, and says how.
    let nested = json!({"type": "object", "properties": {"address": {"type": "object"}}});
    assert_eq!(
        accept_elicited(&form(nested), &name, &config)
            .unwrap_err()
            .to_string(),
        "the server's form cannot be used: field 'address' is not a string, a number, an \
         integer, a boolean or a list of choices"
    );
    // A form with no fields is flat: it is accepted empty.
    let empty = form(json!({"type": "object"}));
    assert!(accept_elicited(&empty, &values("{}"), &config).is_ok());
    // Flat, but more than the palette lets a schema hold.
    let mut small = PaletteConfig::default();
    small.schema_objects = 3;
    let refused = accept_elicited(&form(everything_form()), &name, &small);
    assert!(
        matches!(refused, Err(ElicitRefusal::Schema(_))),
        "{refused:?}"
    );
}

#[test]
fn a_request_with_no_form_has_nothing_to_accept() {
    let url = asked(
        &json!({"mode": "url", "message": "Sign in", "url": "https://example.com/a",
        "elicitationId": "x"}),
    );
    let refused = accept_elicited(&url, &values("{}"), &PaletteConfig::default());
    assert_eq!(refused, Err(ElicitRefusal::NotAForm));
    assert_eq!(
        refused.unwrap_err().to_string(),
        "the server's request is not a form to fill"
    );
}
