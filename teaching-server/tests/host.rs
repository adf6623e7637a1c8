//! The blocking host with real server processes: a server that cannot start, or that dies,
//! is reported and leaves the palette; the others go on.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use mcp_sansio::{Allowlist, Config};
use mcp_sansio_host::{PaletteConfig, Provider, SEARCH_TOOL};
use mcp_sansio_stdio::{Host, HostError, HostServer, ServerCommand, StdioError, DEFAULT_GRACE};

fn teaching(id: &str, mode: &str, allow: &[&str]) -> HostServer {
    let command = ServerCommand::new(env!("CARGO_BIN_EXE_mcp-teaching-server"))
        .args(["serve", "--mode", mode]);
    HostServer::new(
        id,
        command,
        Config::new(allow.iter().copied().collect::<Allowlist>()),
    )
}

#[test]
fn a_server_that_cannot_start_or_connect_is_reported_and_the_others_work() {
    let missing = HostServer::new(
        "missing",
        ServerCommand::new("/nonexistent/mcp-server"),
        Config::new(Allowlist::none()),
    );
    let servers = [
        teaching("stock", "normal", &["word_count"]),
        missing,
        teaching("old", "old-version", &["word_count"]),
        teaching("support", "support", &["process_refund"]),
    ];
    let (mut host, failures) = Host::start(servers, PaletteConfig::default());
    let failed: Vec<&str> = failures.iter().map(|f| f.id.as_str()).collect();
    assert_eq!(failed, ["missing", "old"]);
    assert!(matches!(
        failures[0].error,
        HostError::Stdio(StdioError::Spawn(_))
    ));
    assert!(
        failures[1].to_string().contains("incompatible"),
        "{}",
        failures[1]
    );
    let servers: Vec<&str> = host.palette().servers().collect();
    assert_eq!(servers, ["stock", "support"]);
    assert_eq!(host.call("word_count", r#"{"text":"a b c"}"#).text(), "3");
    let refund = host.call("process_refund", r#"{"order_id":"ORD-1","amount":2}"#);
    assert_eq!(refund.text(), "refunded 2.00 on ORD-1");
    for (id, status) in host.close(DEFAULT_GRACE) {
        assert!(status.is_ok(), "{id}: {status:?}");
    }
}

#[test]
fn a_server_that_dies_leaves_the_palette_and_the_call_is_a_failure() {
    let servers = [
        teaching("stock", "normal", &["word_count"]),
        teaching("support", "support", &["search_policy"]),
    ];
    let (mut host, failures) = Host::start(servers, PaletteConfig::default());
    assert!(failures.is_empty(), "{failures:?}");
    let pid = host.pid("support").unwrap();
    rustix::process::kill_process(
        rustix::process::Pid::from_raw(i32::try_from(pid).unwrap()).unwrap(),
        rustix::process::Signal::KILL,
    )
    .unwrap();
    let lost = host.call("search_policy", r#"{"query":"window"}"#);
    assert!(lost.is_error());
    assert!(lost.text().contains("there is no result"), "{lost:?}");
    let gone = host.take_failures();
    assert_eq!(gone.len(), 1);
    assert_eq!(gone[0].id, "support");
    let servers: Vec<&str> = host.palette().servers().collect();
    assert_eq!(servers, ["stock"]);
    // Its tools are gone from the palette; the other server still answers.
    let after = host.call("search_policy", r#"{"query":"window"}"#);
    assert_eq!(
        after.text(),
        "not called: there is no tool named 'search_policy'; call one of the tools offered"
    );
    assert_eq!(host.call("word_count", r#"{"text":"a b"}"#).text(), "2");
    // Nor does the search tool show the dead server's tools.
    let found = host.call(SEARCH_TOOL, r#"{"query":"refund policy window"}"#);
    assert!(!found.text().contains("search_policy"), "{found:?}");
    assert_eq!(host.close(DEFAULT_GRACE).len(), 1);
}

#[test]
fn the_search_tool_is_the_hosts_own_and_discloses_what_it_finds() {
    let servers = [
        teaching("stock", "normal", &["word_count"]),
        teaching("support", "support", &["search_policy", "process_refund"]),
    ];
    let (mut host, failures) = Host::start(servers, PaletteConfig::default());
    assert!(failures.is_empty(), "{failures:?}");
    let names = |offer: serde_json::Value| -> Vec<String> {
        offer
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["name"].as_str().unwrap().to_owned())
            .collect()
    };
    assert_eq!(
        names(host.offer_disclosed(Provider::Anthropic)),
        [SEARCH_TOOL]
    );
    let found = host.call(SEARCH_TOOL, r#"{"query":"count the words","limit":1}"#);
    assert!(!found.is_error());
    assert!(found.text().starts_with("word_count: "), "{found:?}");
    assert_eq!(
        names(host.offer_disclosed(Provider::Anthropic)),
        [SEARCH_TOOL, "word_count"]
    );
    // Refused like any call, and nothing reaches a server either way.
    let refused = host.call(SEARCH_TOOL, r#"{"limit":1}"#);
    assert_eq!(
        refused.text(),
        "not called: missing required argument 'query'"
    );
    for (id, status) in host.close(DEFAULT_GRACE) {
        assert!(status.is_ok(), "{id}: {status:?}");
    }
}

#[test]
fn a_list_change_is_listed_again_and_surviving_names_stay() {
    let servers = [
        teaching("support", "support", &["search_policy"]),
        teaching("stock", "list-changed", &["word_count", "letter_count"]),
    ];
    let (mut host, failures) = Host::start(servers, PaletteConfig::default());
    assert!(failures.is_empty(), "{failures:?}");
    let names = |host: &Host| -> Vec<(String, String)> {
        host.palette()
            .tools()
            .map(|t| (t.name.to_owned(), t.server.to_owned()))
            .collect()
    };
    let before = names(&host);
    assert_eq!(before.len(), 2, "{before:?}");
    assert!(!before.iter().any(|(n, _)| n == "letter_count"));
    // The call's answer comes after the server said its list changed: the host lists
    // again before returning, and the new tool is offered from then on.
    assert_eq!(host.call("word_count", r#"{"text":"a b c"}"#).text(), "3");
    let after = names(&host);
    for kept in &before {
        assert!(
            after.contains(kept),
            "{kept:?} was renamed or lost: {after:?}"
        );
    }
    assert!(
        after.contains(&("letter_count".to_owned(), "stock".to_owned())),
        "{after:?}"
    );
    assert_eq!(host.call("letter_count", r#"{"text":"ab c"}"#).text(), "3");
    assert!(host.take_failures().is_empty());
    assert_eq!(host.close(DEFAULT_GRACE).len(), 2);
}

#[test]
fn a_call_that_times_out_is_a_failure_that_says_so_never_a_result() {
    let mut server = teaching("stock", "hang", &["word_count"]);
    server.config.limits.operation_timeout = std::time::Duration::from_secs(1);
    let (mut host, failures) = Host::start([server], PaletteConfig::default());
    assert!(failures.is_empty(), "{failures:?}");
    let observation = host.call("word_count", r#"{"text":"a b"}"#);
    assert!(observation.is_error());
    assert_eq!(
        observation.text(),
        "the word_count tool did not answer within 1 s; there is no result"
    );
    // A timeout is the call's failure, not the server's: it stays.
    assert!(host.take_failures().is_empty());
    assert_eq!(host.palette().servers().count(), 1);
    host.close(DEFAULT_GRACE);
}
