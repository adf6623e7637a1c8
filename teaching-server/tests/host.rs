//! The blocking host with real server processes, started by the host or reached over HTTP:
//! each call reaches the server behind its tool; a server that cannot start or be reached,
//! or that dies, is reported and leaves the palette; the others go on.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use std::time::Duration;

use mcp_sansio::{Allowlist, CallOptions, CatalogPolicy, Config, Event, HttpError, ProtocolChoice};
use mcp_sansio_host::{PaletteConfig, PaletteError, Provider, SEARCH_TOOL};
use mcp_sansio_http::HttpClientError;
use mcp_sansio_stdio::{
    Host, HostError, HostEvent, HostLimits, HostServer, ServerCommand, StdioError, DEFAULT_GRACE,
};

mod common;
use common::{OnSocket, Served, Server};

fn teaching(id: &str, mode: &str, allow: &[&str]) -> HostServer {
    let command = ServerCommand::new(env!("CARGO_BIN_EXE_mcp-teaching-server"))
        .args(["serve", "--mode", mode]);
    HostServer::new(
        id,
        command,
        Config::new(allow.iter().copied().collect::<Allowlist>()),
    )
}

/// The host over `servers`, each of which started, connected and listed its tools.
fn started(servers: impl IntoIterator<Item = HostServer>) -> Host {
    let (host, failures) = Host::start(servers, PaletteConfig::default());
    assert!(failures.is_empty(), "{failures:?}");
    host
}

/// A host over the teaching server (`word_count` allowed) and the support desk
/// (`search_policy`), both started.
fn stock_and_support() -> Host {
    started([
        teaching("stock", "normal", &["word_count"]),
        teaching("support", "support", &["search_policy"]),
    ])
}

#[test]
fn a_server_that_cannot_start_or_connect_is_reported_and_the_others_work() {
    let missing = common::missing_server();
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

/// A schema is the server's to write, and a validator does what it says: this one's checks
/// double at every level of the value. The host reckons that when the catalog arrives and
/// refuses the catalog (the default policy) before any call, so nothing can hang on it.
#[test]
fn a_server_whose_schema_checks_multiply_is_refused_before_any_call() {
    let servers = [
        teaching("stock", "normal", &["word_count"]),
        teaching("costly", "costly-schema", &["word_count"]),
    ];
    let (mut host, failures) = Host::start(servers, PaletteConfig::default());
    let failed: Vec<&str> = failures.iter().map(|f| f.id.as_str()).collect();
    assert_eq!(failed, ["costly"]);
    assert!(
        matches!(&failures[0].error, HostError::Palette(PaletteError::Schema(r)) if r.tool == "word_count"),
        "{}",
        failures[0]
    );
    assert!(
        failures[0]
            .to_string()
            .contains("could take more than 1000 subschemas"),
        "{}",
        failures[0]
    );
    let servers: Vec<&str> = host.palette().servers().collect();
    assert_eq!(servers, ["stock"]);
    assert_eq!(host.call("word_count", r#"{"text":"a b c"}"#).text(), "3");
    for (id, status) in host.close(DEFAULT_GRACE) {
        assert!(status.is_ok(), "{id}: {status:?}");
    }
}

/// Under QUARANTINE a server's wrongly listed tool is left out, not its whole catalog, and
/// the application can still learn which of the tools it allowed are missing, and why: the
/// host takes catalogs as they come and keeps no report, the palette does.
#[test]
fn an_allowed_tool_listed_wrongly_is_left_out_and_the_palette_says_why() {
    let mut lax = teaching("lax", "untyped", &["word_count"]);
    lax.config.catalog_policy = CatalogPolicy::QUARANTINE;
    let servers = [teaching("stock", "normal", &["word_count"]), lax];
    let mut config = PaletteConfig::default();
    config.policy = CatalogPolicy::QUARANTINE;
    let (mut host, failures) = Host::start(servers, config);
    assert!(failures.is_empty(), "{failures:?}");
    let servers: Vec<&str> = host.palette().servers().collect();
    assert_eq!(servers, ["lax", "stock"]);
    let left_out: Vec<String> = host.palette().left_out().map(|l| l.to_string()).collect();
    assert_eq!(
        left_out,
        [
            r#"server "lax" listed tool "word_count" in a form the client refuses: its inputSchema's type is not "object""#
        ]
    );
    let offered: Vec<(&str, &str)> = host.palette().tools().map(|t| (t.name, t.server)).collect();
    assert_eq!(offered, [("word_count", "stock")]);
    assert_eq!(host.call("word_count", r#"{"text":"a b c"}"#).text(), "3");
    for (id, status) in host.close(DEFAULT_GRACE) {
        assert!(status.is_ok(), "{id}: {status:?}");
    }
}

#[test]
fn a_server_that_dies_leaves_the_palette_and_the_call_is_a_failure() {
    let mut host = stock_and_support();
    let pid = host.pid("support").unwrap();
    common::kill(pid);
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
    let mut host = started(servers);
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
    // A new conversation starts from the search tool alone; what may run is unchanged.
    host.hide_all();
    assert_eq!(
        names(host.offer_disclosed(Provider::Anthropic)),
        [SEARCH_TOOL]
    );
    assert_eq!(host.call("word_count", r#"{"text":"a b"}"#).text(), "2");
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
    let mut host = started(servers);
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

/// A server may change its tools while no call of the host's waits on it: the model would
/// be offered the old list until the next call to that server, which might never come.
/// `hear` reads every server without waiting and lists a changed one again: over stdio in a
/// handshake revision (the change told unasked) and in 2026-07-28 (told on the host's
/// subscription), and over HTTP on the subscription's stream. `wait` waits on both servers
/// at once and ends at the change, which is news.
#[test]
fn a_change_told_between_calls_is_heard_before_the_next_offer() {
    let later = ["--mode", "change-later", "--delay-ms", "100"];
    let allow = || {
        Config::new(
            ["word_count", "letter_count"]
                .into_iter()
                .collect::<Allowlist>(),
        )
    };
    let over_stdio = |protocol| {
        let command = ServerCommand::new(env!("CARGO_BIN_EXE_mcp-teaching-server")).args(["serve"]);
        let mut config = allow();
        config.protocol = protocol;
        HostServer::new("stock", command.args(later), config)
    };
    let served = Served::start("host-change-later", &later);
    let stocks = [
        ("stdio, 2025-11-25", over_stdio(ProtocolChoice::Stateful)),
        ("stdio, 2026-07-28", over_stdio(ProtocolChoice::Auto)),
        (
            "HTTP, 2026-07-28",
            HostServer::http("stock", &served.url, &[], allow()),
        ),
    ];
    for (at, stock) in stocks {
        let servers = [teaching("support", "support", &["search_policy"]), stock];
        let (mut host, failures) = Host::start(servers, PaletteConfig::default());
        assert!(failures.is_empty(), "{at}: {failures:?}");
        let offers_letters = |host: &Host| host.palette().tools().any(|t| t.name == "letter_count");
        assert_eq!(host.call("word_count", r#"{"text":"a b c"}"#).text(), "3");
        // Nothing is called while the host waits; the change ends the wait.
        assert!(host.wait(common::SLACK), "{at}: the change never heard");
        assert!(offers_letters(&host), "{at}");
        assert!(host.take_events().is_empty(), "{at}");
        let policy = host.call("search_policy", r#"{"query":"window"}"#);
        assert!(!policy.is_error(), "{at}: {policy:?}");
        assert_eq!(host.call("letter_count", r#"{"text":"ab c"}"#).text(), "3");
        assert!(host.take_failures().is_empty(), "{at}");
        host.close(DEFAULT_GRACE);
    }
}

/// A server that dies while nothing is asked of it leaves the host at the next `hear`, its
/// tools out of the palette before the model is offered them, not when a call finds it gone.
#[test]
fn a_server_that_dies_between_calls_leaves_at_the_next_hearing() {
    let mut host = stock_and_support();
    common::kill(host.pid("support").unwrap());
    common::eventually("the dead server heard", || {
        host.hear();
        host.palette().servers().count() == 1
    });
    let gone = host.take_failures();
    assert_eq!(gone.len(), 1, "{gone:?}");
    assert_eq!(gone[0].id, "support");
    assert!(
        matches!(
            gone[0].error,
            HostError::Stdio(StdioError::Mcp(mcp_sansio::Error::Closed))
        ),
        "{}",
        gone[0].error
    );
    let offered: Vec<&str> = host.palette().tools().map(|t| t.name).collect();
    assert_eq!(offered, ["word_count"]);
    assert_eq!(host.call("word_count", r#"{"text":"a b c"}"#).text(), "3");
    assert!(host.take_failures().is_empty());
    host.close(DEFAULT_GRACE);
}

/// A wait ends when a server dies, its tools already out of the palette; a wait on servers
/// that say nothing lasts its timeout and has no news.
#[test]
fn a_wait_ends_at_a_server_s_death_and_not_before() {
    let mut host = stock_and_support();
    assert!(!host.wait(std::time::Duration::from_millis(100)));
    assert_eq!(host.palette().servers().count(), 2);
    assert!(host.take_events().is_empty() && host.take_failures().is_empty());
    common::kill(host.pid("stock").unwrap());
    assert!(host.wait(common::SLACK), "the death never heard");
    let gone = host.take_failures();
    assert_eq!(gone.len(), 1, "{gone:?}");
    assert_eq!(gone[0].id, "stock");
    let offered: Vec<&str> = host.palette().tools().map(|t| t.name).collect();
    assert_eq!(offered, ["search_policy"]);
    host.close(DEFAULT_GRACE);
}

/// A server that ends every subscription as soon as it has acknowledged it would keep the
/// host subscribing and listing without end, and every wait short: past
/// `HostLimits::subscription_ends` in a row, it leaves the host, reported for it, and the
/// next wait on the other server lasts its timeout.
#[test]
fn a_server_ending_every_subscription_at_once_leaves_after_the_bound() {
    let churner = Server::new("host-churn");
    let churn = HostServer::new(
        "churn",
        churner.command("end-at-once"),
        common::config(&["word_count"]),
    );
    let mut limits = HostLimits::default();
    limits.subscription_ends = 3;
    let servers = [churn, teaching("support", "support", &["search_policy"])];
    let (mut host, failures) = Host::start_with(servers, PaletteConfig::default(), limits);
    assert!(failures.is_empty(), "{failures:?}");
    let mut gone = Vec::new();
    // Each wait ends at an end heard: one more subscription and listing, or the leaving.
    for _ in 0..5 {
        assert!(host.wait(common::SLACK));
        gone.extend(host.take_failures());
        if !gone.is_empty() {
            break;
        }
    }
    assert_eq!(gone.len(), 1, "{gone:?}");
    assert_eq!(gone[0].id, "churn");
    assert!(
        matches!(gone[0].error, HostError::SubscriptionChurn { ends: 4 }),
        "{}",
        gone[0].error
    );
    assert!(
        gone[0].error.to_string().contains("ended 4 times in a row"),
        "{}",
        gone[0].error
    );
    // The first subscription and three more, each ended; no fifth.
    assert_eq!(churner.listens(), 4, "{:?}", churner.subscriptions());
    let offered: Vec<&str> = host.palette().tools().map(|t| t.name).collect();
    assert_eq!(offered, ["search_policy"]);
    assert!(!host.wait(Duration::from_millis(100)));
    host.close(DEFAULT_GRACE);
}

#[test]
fn a_call_that_times_out_is_a_failure_that_says_so_never_a_result() {
    let mut server = teaching("stock", "hang", &["word_count"]);
    server.config.limits.operation_timeout = std::time::Duration::from_secs(1);
    let mut host = started([server]);
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

/// A call the application sends on its own terms: a deadline of its own, said in the
/// failure; progress asked for, each report the call's own among the host's events, tagged
/// with its server's id.
#[test]
fn a_call_on_its_own_terms_keeps_its_deadline_and_its_progress() {
    let servers = [
        teaching("stuck", "hang", &["word_count"]),
        teaching("busy", "notify", &["word_count"]),
    ];
    let mut host = started(servers);
    let short = CallOptions::new().timeout(Duration::from_millis(300));
    let observation = host.call_with("word_count", r#"{"text":"a b"}"#, short);
    assert_eq!(
        observation.text(),
        "the word_count tool did not answer within 300 ms; there is no result"
    );
    let reporting = short.progress_up_to(Duration::from_millis(600));
    let observation = host.call_with("word_count", r#"{"text":"a b"}"#, reporting);
    assert_eq!(
        observation.text(),
        "the word_count tool did not answer before its deadline; there is no result"
    );
    let generous = CallOptions::new().progress_up_to(Duration::from_secs(10));
    let observation = host.call_with("busy_word_count", r#"{"text":"a b"}"#, generous);
    assert_eq!(observation.text(), "2");
    let reports: Vec<(String, f64, Option<String>)> = host
        .take_events()
        .into_iter()
        .filter_map(|HostEvent { server, event, .. }| match event {
            Event::Progress {
                progress, message, ..
            } => Some((server, progress, message)),
            _ => None,
        })
        .collect();
    let expected: Vec<(String, f64, Option<String>)> = (1..=3)
        .map(|n| {
            (
                "busy".into(),
                f64::from(n),
                Some(format!("counting, pass {n}")),
            )
        })
        .collect();
    assert_eq!(reports, expected);
    assert!(host.take_failures().is_empty());
    host.close(DEFAULT_GRACE);
}

/// The support desk served by `served`, as server `id`, with `headers` on every request.
fn support_at(id: &str, served: &Served, headers: &[(&str, &str)]) -> HostServer {
    HostServer::http(
        id,
        &served.url,
        headers,
        common::config(&["search_policy", "process_refund"]),
    )
}

#[test]
fn one_host_over_a_started_server_and_an_http_server_routes_each_call_to_its_own() {
    let local = Server::new("host-local");
    let remote = Served::start("host-remote", &["--mode", "support", "--token", "sesame"]);
    let servers = [
        HostServer::new(
            "stock",
            local.command("normal"),
            common::config(&["word_count"]),
        ),
        support_at("support", &remote, &[("Authorization", "Bearer sesame")]),
    ];
    let mut host = started(servers);
    let routes: Vec<(&str, &str)> = host.palette().tools().map(|t| (t.name, t.server)).collect();
    assert_eq!(
        routes,
        [
            ("process_refund", "support"),
            ("search_policy", "support"),
            ("word_count", "stock")
        ]
    );
    assert!(host.pid("stock").is_some());
    assert_eq!(
        host.pid("support"),
        None,
        "the host started no process for it"
    );

    assert_eq!(host.call("word_count", r#"{"text":"a b c"}"#).text(), "3");
    let refund = host.call(
        "process_refund",
        r#"{"order_id":"ORD-3300","amount":180.0}"#,
    );
    assert_eq!(refund.text(), "refunded 180.00 on ORD-3300");
    // A token replaced while the host runs: a wrong one fails the call (the server stays),
    // the right one works again; a started server has nowhere to send one.
    let wrong = mcp_sansio::auth::Token::bearer("wrong").unwrap();
    host.set_authorization("support", Some(&wrong)).unwrap();
    let search = r#"{"query":"refunds"}"#;
    let unauthorized = host.call("search_policy", search);
    assert!(
        unauthorized.text().contains("it answered 401"),
        "{}",
        unauthorized.text()
    );
    let right = mcp_sansio::auth::Token::bearer("sesame").unwrap();
    host.set_authorization("support", Some(&right)).unwrap();
    assert!(!host.call("search_policy", search).text().contains("401"));
    assert!(matches!(
        host.set_authorization("stock", Some(&right)),
        Err(HostError::NotHttp { .. })
    ));
    assert!(host.take_failures().is_empty(), "no server left");
    // Checked against the schema the HTTP server published: refused, and never sent.
    let refused = host.call("process_refund", r#"{"order_id":"ORD-3300"}"#);
    assert_eq!(
        refused.text(),
        "not called: missing required argument 'amount'"
    );

    let remote_calls = remote.calls();
    assert_eq!(remote_calls.len(), 2, "{remote_calls:?}");
    assert_eq!(remote_calls[0]["name"], "process_refund");
    assert_eq!(remote_calls[1]["name"], "search_policy");
    let local_calls = local.calls();
    assert_eq!(local_calls.len(), 1, "{local_calls:?}");
    assert_eq!(local_calls[0]["name"], "word_count");

    let ended: Vec<(String, bool)> = host
        .close(DEFAULT_GRACE)
        .into_iter()
        .map(|(id, status)| (id, status.unwrap().is_some()))
        .collect();
    assert_eq!(
        ended,
        [
            (String::from("stock"), true),
            (String::from("support"), false)
        ],
        "an exit status for the process, none for the session"
    );
}

#[test]
fn an_http_server_refusing_the_host_or_out_of_reach_is_reported_and_the_others_work() {
    let remote = Served::start("host-token", &["--mode", "support", "--token", "sesame"]);
    // A port nothing listens on: bound, then let go.
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let nowhere = format!("http://{}/mcp", closed.local_addr().unwrap());
    drop(closed);
    let servers = [
        teaching("stock", "normal", &["word_count"]),
        support_at("support", &remote, &[]),
        HostServer::http("nowhere", nowhere, &[], common::config(&["word_count"])),
        HostServer::http("bad-url", "ftp://127.0.0.1/mcp", &[], common::config(&[])),
        support_at(
            "bad-header",
            &remote,
            &[("Authorization", "Bearer sesame\n")],
        ),
    ];
    let (mut host, failures) = Host::start(servers, PaletteConfig::default());
    let failed: Vec<(&str, String)> = failures
        .iter()
        .map(|f| (f.id.as_str(), f.error.to_string()))
        .collect();
    assert_eq!(failed.len(), 4, "{failed:?}");
    assert!(matches!(
        failures[0].error,
        HostError::Http(HttpClientError::InvalidUrl(_))
    ));
    assert!(matches!(
        failures[1].error,
        HostError::Http(HttpClientError::InvalidHeader(_))
    ));
    assert!(
        matches!(
            failures[2].error,
            HostError::Http(HttpClientError::Mcp(mcp_sansio::Error::Http(
                HttpError::Unauthorized(Some(_))
            )))
        ),
        "{failed:?}"
    );
    assert!(
        matches!(
            failures[3].error,
            HostError::Http(HttpClientError::Unreachable(_))
        ),
        "{failed:?}"
    );
    let ids: Vec<&str> = failed.iter().map(|(id, _)| *id).collect();
    // Refused before a byte is sent first, in the order given; then those the handshake
    // failed with, in the order given.
    assert_eq!(ids, ["bad-url", "bad-header", "support", "nowhere"]);
    assert!(remote.calls().is_empty(), "nothing reached the server");
    let servers: Vec<&str> = host.palette().servers().collect();
    assert_eq!(servers, ["stock"]);
    assert_eq!(host.call("word_count", r#"{"text":"a b"}"#).text(), "2");
    assert_eq!(host.close(DEFAULT_GRACE).len(), 1);
}

#[test]
fn an_http_server_that_dies_leaves_the_palette_and_the_call_is_a_failure() {
    let mut remote = Served::start("host-dies", &["--mode", "support"]);
    let servers = [
        teaching("stock", "normal", &["word_count"]),
        support_at("support", &remote, &[]),
    ];
    let mut host = started(servers);
    remote.child.kill().unwrap();
    remote.child.wait().unwrap();
    let lost = host.call("search_policy", r#"{"query":"window"}"#);
    assert!(lost.is_error());
    assert!(lost.text().contains("there is no result"), "{lost:?}");
    let gone = host.take_failures();
    assert_eq!(gone.len(), 1, "{gone:?}");
    assert_eq!(gone[0].id, "support");
    assert!(matches!(gone[0].error, HostError::Http(_)), "{gone:?}");
    let servers: Vec<&str> = host.palette().servers().collect();
    assert_eq!(servers, ["stock"]);
    assert_eq!(host.call("word_count", r#"{"text":"a b"}"#).text(), "2");
    assert_eq!(host.close(DEFAULT_GRACE).len(), 1);
}

/// A host over an HTTP server that moves a tool's `Mcp-Param-*` header after it was listed:
/// the call, refused for the old header, is sent again after a new listing and answered,
/// and the palette takes that listing, so the host's view of the tool is the server's.
#[test]
fn a_call_refused_for_a_moved_header_is_answered_and_the_palette_takes_the_new_listing() {
    let remote = Served::start("host-moved", &["--mode", "moved-header"]);
    let server = HostServer::http("stock", &remote.url, &[], common::config(&["word_count"]));
    let mut host = started([server]);
    assert_eq!(common::header_marker(host.palette()), Some("Region"));
    let observation = host.call("word_count", r#"{"text":"a b c","region":"eu-west"}"#);
    common::assert_moved(
        &remote,
        observation.text(),
        common::header_marker(host.palette()),
    );
    assert!(host.take_failures().is_empty());
    host.close(DEFAULT_GRACE);
}

/// Server `stock` adds a tool at the first call and, telling no one, ends the subscription:
/// changes may have gone unheard, so the host subscribes again and lists again, when the
/// call returns if `at_once`, else at a later [`Host::hear`]. `subscriptions` reads what the
/// server logged of them.
fn an_ended_subscription_is_made_again(
    stock: HostServer,
    at_once: bool,
    subscriptions: impl Fn() -> Vec<serde_json::Value>,
) {
    let mut host = started([stock]);
    let offered = |host: &Host| -> Vec<String> {
        host.palette().tools().map(|t| t.name.to_owned()).collect()
    };
    assert_eq!(offered(&host), ["word_count"]);
    assert_eq!(host.call("word_count", r#"{"text":"a b c"}"#).text(), "3");
    let both = ["letter_count", "word_count"];
    if at_once {
        assert_eq!(offered(&host), both);
    } else {
        common::eventually("the ended subscription heard", || {
            host.hear();
            offered(&host) == both
        });
    }
    assert_eq!(host.call("letter_count", r#"{"text":"ab c"}"#).text(), "3");
    // The server logs a subscription when its request arrives, which over HTTP may be on
    // a connection of its own, read after the listing that followed it.
    common::eventually("the second subscription logged", || {
        subscriptions().len() >= 3
    });
    let seen = subscriptions();
    assert_eq!(seen.len(), 3, "{seen:?}");
    assert_eq!(
        seen[0]["notifications"],
        serde_json::json!({"toolsListChanged": true})
    );
    assert_eq!(seen[1]["ended"], seen[0]["listen"]);
    assert!(
        seen[2]["listen"].as_i64() > seen[0]["listen"].as_i64(),
        "{seen:?}"
    );
    assert!(host.take_failures().is_empty());
    host.close(DEFAULT_GRACE);
}

#[test]
fn a_subscription_the_server_ends_is_made_again_and_the_tools_listed_again() {
    let allow = || {
        Config::new(
            ["word_count", "letter_count"]
                .into_iter()
                .collect::<Allowlist>(),
        )
    };
    // Over stdio the end comes before the call's answer, on the one pipe: the host has
    // acted on it when the call returns.
    let server = Server::new("host-end-subscriptions");
    let stock = HostServer::new("stock", server.command("end-subscriptions"), allow());
    an_ended_subscription_is_made_again(stock, true, || server.subscriptions());
    // Over HTTP it comes on the subscription's own stream, which may be read after the
    // call's answer: the host acts on it when it next hears that server.
    let served = Served::start("host-end-subscriptions", &["--mode", "end-subscriptions"]);
    let stock = HostServer::http("stock", &served.url, &[], allow());
    an_ended_subscription_is_made_again(stock, false, || served.subscriptions());
}

#[test]
fn an_http_server_s_list_change_reaches_the_palette_through_a_subscription() {
    let served = Served::start("host-list-changed", &["--mode", "list-changed"]);
    let allow = ["word_count", "letter_count"]
        .into_iter()
        .collect::<Allowlist>();
    let stock = HostServer::http("stock", &served.url, &[], Config::new(allow));
    let mut host = started([stock]);
    assert_eq!(host.palette().tools().count(), 1);
    assert_eq!(host.call("word_count", r#"{"text":"a b c"}"#).text(), "3");
    // The change comes on the subscription's stream, which may be read after the answer.
    common::eventually("the change heard on the subscription", || {
        host.hear();
        host.palette().tools().count() == 2
    });
    assert_eq!(host.call("letter_count", r#"{"text":"ab c"}"#).text(), "3");
    let seen = served.subscriptions();
    assert_eq!(seen.len(), 1, "subscribed once, never ended: {seen:?}");
    assert!(host.take_failures().is_empty());
    host.close(DEFAULT_GRACE);
}

/// A second server under an id already taken is the application's mistake: refused before
/// it is started, at the start and when added later, and the first server goes on.
#[test]
fn a_second_server_under_a_taken_id_is_refused_and_never_started() {
    let twice = Server::new("host-duplicate");
    let servers = [
        teaching("stock", "normal", &["word_count"]),
        HostServer::new(
            "stock",
            twice.command("support"),
            Config::new(["process_refund"].into_iter().collect::<Allowlist>()),
        ),
    ];
    let (mut host, failures) = Host::start(servers, PaletteConfig::default());
    assert_eq!(failures.len(), 1, "{failures:?}");
    assert!(
        matches!(&failures[0].error, HostError::DuplicateId { id } if id == "stock"),
        "{}",
        failures[0]
    );
    assert_eq!(
        failures[0].to_string(),
        "server \"stock\": a server of id \"stock\" is already in this host; each server needs its own id"
    );
    let refused = host
        .add(HostServer::new(
            "stock",
            twice.command("support"),
            Config::new(["process_refund"].into_iter().collect::<Allowlist>()),
        ))
        .unwrap_err();
    assert!(
        matches!(refused, HostError::DuplicateId { .. }),
        "{refused}"
    );
    assert!(!twice.dir.join("server.pids").exists(), "it was started");
    // The first server is the one behind the id, and nothing of the second's was offered.
    assert_eq!(host.call("word_count", r#"{"text":"a b c"}"#).text(), "3");
    assert!(host.palette().route("process_refund").is_none());
    assert_eq!(host.close(DEFAULT_GRACE).len(), 1);
}

/// Servers come and go while the host runs: an added one's tools are offered, routed and
/// found by the search tool; a removed one's process is ended and its tools leave the offer,
/// the routes and the search; its id may be used again.
#[test]
fn a_server_added_and_removed_while_the_host_runs_joins_and_leaves_the_palette() {
    let (mut host, failures) = Host::start(
        [teaching("stock", "normal", &["word_count"])],
        PaletteConfig::default(),
    );
    assert!(failures.is_empty(), "{failures:?}");
    host.add(teaching("support", "support", &["process_refund"]))
        .unwrap();
    let offered: Vec<String> = host
        .offer(Provider::Anthropic)
        .as_array()
        .unwrap()
        .iter()
        .map(|tool| tool["name"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(offered, ["process_refund", "word_count"]);
    let found = host.call(SEARCH_TOOL, r#"{"query":"refund an order"}"#);
    assert!(found.text().starts_with("process_refund"), "{found:?}");
    let refund = host.call("process_refund", r#"{"order_id":"ORD-1","amount":2}"#);
    assert_eq!(refund.text(), "refunded 2.00 on ORD-1");

    let pid = host.pid("support").unwrap();
    let ended = host.remove("support", DEFAULT_GRACE).unwrap();
    assert!(ended.is_ok(), "{ended:?}");
    assert!(
        !common::process_exists(pid),
        "the removed server still runs"
    );
    assert!(host.remove("support", DEFAULT_GRACE).is_none());
    let servers: Vec<&str> = host.palette().servers().collect();
    assert_eq!(servers, ["stock"]);
    // What the search showed of it is no longer offered, nor found, nor routed.
    let offered = host.offer_disclosed(Provider::Anthropic);
    assert_eq!(offered.as_array().unwrap().len(), 1, "{offered}");
    let found = host.call(SEARCH_TOOL, r#"{"query":"refund an order"}"#);
    assert!(!found.text().contains("process_refund"), "{found:?}");
    let after = host.call("process_refund", r#"{"order_id":"ORD-1","amount":2}"#);
    assert_eq!(
        after.text(),
        "not called: there is no tool named 'process_refund'; call one of the tools offered"
    );
    assert_eq!(host.call("word_count", r#"{"text":"a b"}"#).text(), "2");

    // The id is free again: a server added under it is spoken to afresh.
    host.add(teaching("support", "support", &["process_refund"]))
        .unwrap();
    assert_ne!(host.pid("support"), Some(pid));
    let refund = host.call("process_refund", r#"{"order_id":"ORD-2","amount":3}"#);
    assert_eq!(refund.text(), "refunded 3.00 on ORD-2");
    assert_eq!(host.close(DEFAULT_GRACE).len(), 2);
}

/// A server that cannot be added leaves the host as it was.
#[test]
fn a_server_that_cannot_be_added_is_reported_and_the_host_is_unchanged() {
    let (mut host, failures) = Host::start(
        [teaching("stock", "normal", &["word_count"])],
        PaletteConfig::default(),
    );
    assert!(failures.is_empty(), "{failures:?}");
    let missing = common::missing_server();
    let error = host.add(missing).unwrap_err();
    assert!(
        matches!(error, HostError::Stdio(StdioError::Spawn(_))),
        "{error}"
    );
    let error = host
        .add(teaching("old", "old-version", &["word_count"]))
        .unwrap_err();
    assert!(error.to_string().contains("incompatible"), "{error}");
    let servers: Vec<&str> = host.palette().servers().collect();
    assert_eq!(servers, ["stock"]);
    assert!(host.take_failures().is_empty());
    assert_eq!(host.call("word_count", r#"{"text":"a b c"}"#).text(), "3");
    assert_eq!(host.close(DEFAULT_GRACE).len(), 1);
}

/// A server the application reached itself over a socket is hosted as any other: its calls
/// reach it, an id already taken is refused and the stream given closed unwritten, removing
/// it closes its input (so it exits by itself), and one that dies leaves the host, reported.
#[test]
fn a_server_over_the_application_s_stream_is_hosted_as_any_other() {
    use std::io::Read;
    use std::os::unix::net::UnixStream;

    let (local, socketed) = (Server::new("host-stream-l"), Server::new("host-stream"));
    let (ours, theirs) = UnixStream::pair().unwrap();
    let mut running = OnSocket::start(&socketed, "support", theirs.into());
    let servers = [
        HostServer::new(
            "stock",
            local.command("normal"),
            common::config(&["word_count"]),
        ),
        HostServer::stream(
            "socket",
            ours.try_clone().unwrap(),
            ours,
            common::config(&["process_refund"]),
        ),
    ];
    let mut host = started(servers);
    let routes: Vec<(&str, &str)> = host.palette().tools().map(|t| (t.name, t.server)).collect();
    assert_eq!(
        routes,
        [("process_refund", "socket"), ("word_count", "stock")]
    );
    assert_eq!(
        host.pid("socket"),
        None,
        "the host started no process for it"
    );
    assert_eq!(
        host.call("process_refund", r#"{"order_id":"ORD-7","amount":3}"#)
            .text(),
        "refunded 3.00 on ORD-7"
    );
    assert_eq!(host.call("word_count", r#"{"text":"a b c"}"#).text(), "3");
    let calls = socketed.calls();
    assert_eq!(calls.len(), 1, "{calls:?}");
    assert_eq!(calls[0]["name"], "process_refund");
    assert_eq!(calls[0]["arguments"]["order_id"], "ORD-7");
    assert!(matches!(
        host.set_authorization("socket", None),
        Err(HostError::NotHttp { id }) if id == "socket"
    ));

    let (twin, mut peer) = UnixStream::pair().unwrap();
    let taken = host.add(HostServer::stream(
        "socket",
        twin.try_clone().unwrap(),
        twin,
        common::config(&["process_refund"]),
    ));
    assert!(
        matches!(&taken, Err(HostError::DuplicateId { id }) if id == "socket"),
        "{taken:?}"
    );
    let mut written = Vec::new();
    peer.read_to_end(&mut written).unwrap();
    assert!(written.is_empty(), "{}", String::from_utf8_lossy(&written));

    assert!(matches!(
        host.remove("socket", DEFAULT_GRACE),
        Some(Ok(None))
    ));
    assert!(running.exits().success(), "it saw the end of its input");
    let servers: Vec<&str> = host.palette().servers().collect();
    assert_eq!(servers, ["stock"]);

    let doomed = Server::new("host-stream-dies");
    let (ours, theirs) = UnixStream::pair().unwrap();
    let dying = OnSocket::start(&doomed, "support", theirs.into());
    host.add(HostServer::stream(
        "doomed",
        ours.try_clone().unwrap(),
        ours,
        common::config(&["search_policy"]),
    ))
    .unwrap();
    common::kill(dying.child.id());
    let lost = host.call("search_policy", r#"{"query":"window"}"#);
    assert!(lost.is_error(), "{lost:?}");
    let gone = host.take_failures();
    assert_eq!(gone.len(), 1, "{gone:?}");
    assert_eq!(gone[0].id, "doomed");
    assert!(
        matches!(
            gone[0].error,
            HostError::Stdio(StdioError::Mcp(mcp_sansio::Error::Closed))
        ),
        "{}",
        gone[0].error
    );
    assert_eq!(host.call("word_count", r#"{"text":"a b"}"#).text(), "2");
    assert_eq!(host.close(DEFAULT_GRACE).len(), 1);
}
