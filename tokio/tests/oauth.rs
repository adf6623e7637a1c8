//! The async `Authorizer` against a local authorization server that answers from a script
//! and records every request: the core's flow, sent over reqwest, and the fetch's own
//! bounds (a body past the frame limit, a redirect not followed, a server that never
//! answers).

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use mcp_sansio::auth::{AuthError, TokenAuth, TokenRequest};
use mcp_sansio::Limits;
use mcp_sansio_tokio::oauth::{AuthorizeError, Authorizer, ClientIdentity, Fetch};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpListener;

/// One request as the server read it.
#[derive(Debug, Clone)]
struct Heard {
    method: String,
    path: String,
    /// Header names in lower case.
    headers: HashMap<String, String>,
    body: String,
}

/// A server on a port of its own: each path's reply (status line's code, extra headers,
/// body); any other path is 404. Every request is recorded, in order.
struct Scripted {
    base: String,
    heard: Arc<Mutex<Vec<Heard>>>,
}

/// A path's scripted reply: its status, extra header lines (each ending in `\r\n`), and its
/// body.
type Reply = (u16, String, String);

impl Scripted {
    /// Serves `script`, given the server's base URL (`http://127.0.0.1:PORT`).
    async fn start(script: impl FnOnce(&str) -> Vec<(&'static str, Reply)>) -> Scripted {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        let script: HashMap<&str, Reply> = script(&base).into_iter().collect();
        let heard = Arc::new(Mutex::new(Vec::new()));
        let log = Arc::clone(&heard);
        tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                let (read, mut write) = stream.into_split();
                let heard = read_request(BufReader::new(read)).await;
                let none = (404, String::new(), String::new());
                let (status, extra, body) = script.get(heard.path.as_str()).unwrap_or(&none);
                log.lock().unwrap().push(heard);
                let reply = format!(
                    "HTTP/1.1 {status} X\r\nContent-Type: application/json\r\n{extra}\
                     Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
                    body.len()
                );
                let _ = write.write_all(reply.as_bytes()).await;
            }
        });
        Scripted { base, heard }
    }

    fn heard(&self) -> Vec<Heard> {
        self.heard.lock().unwrap().clone()
    }
}

/// One request's head and body.
async fn read_request(mut read: BufReader<tokio::net::tcp::OwnedReadHalf>) -> Heard {
    let mut line = String::new();
    read.read_line(&mut line).await.unwrap();
    let mut parts = line.split_whitespace();
    let method = parts.next().unwrap_or_default().to_owned();
    let path = parts.next().unwrap_or_default().to_owned();
    let mut headers = HashMap::new();
    loop {
        line.clear();
        read.read_line(&mut line).await.unwrap();
        match line.trim_end().split_once(": ") {
            Some((name, value)) => {
                headers.insert(name.to_ascii_lowercase(), value.to_owned());
            }
            None => break,
        }
    }
    let length = headers
        .get("content-length")
        .map_or(0, |n| n.parse().unwrap());
    let mut body = vec![0; length];
    read.read_exact(&mut body).await.unwrap();
    Heard {
        method,
        path,
        headers,
        body: String::from_utf8(body).unwrap(),
    }
}

/// The form body's value of `name`, still percent-encoded.
fn form<'a>(body: &'a str, name: &str) -> Option<&'a str> {
    body.split('&')
        .find_map(|pair| pair.strip_prefix(name)?.strip_prefix('='))
}

/// An MCP server's metadata and its authorization server's on one port: the resource's
/// metadata only at the root's well-known URL (the path's answers 404), registration
/// answered with `registered`, the token request with `token`.
async fn authorization_server(registered: &'static str, token: &'static str) -> Scripted {
    Scripted::start(|base| {
        let json = |body: String| (200, String::new(), body);
        vec![
            (
                "/.well-known/oauth-protected-resource",
                json(format!(
                    r#"{{"resource":"{base}/mcp","authorization_servers":["{base}"],"scopes_supported":["words"]}}"#
                )),
            ),
            (
                "/.well-known/oauth-authorization-server",
                json(format!(
                    r#"{{"issuer":"{base}","authorization_endpoint":"{base}/authorize","token_endpoint":"{base}/token","registration_endpoint":"{base}/register","code_challenge_methods_supported":["S256"]}}"#
                )),
            ),
            ("/register", (201, String::new(), registered.to_owned())),
            ("/token", json(token.to_owned())),
        ]
    })
    .await
}

/// The query parameter `name` of `url`.
fn query<'a>(url: &'a str, name: &str) -> &'a str {
    let (_, query) = url.split_once('?').unwrap();
    form(query, name).unwrap_or_else(|| panic!("no {name} in {url}"))
}

const TOKEN: &str = r#"{"access_token":"at-1","token_type":"Bearer","expires_in":60,"refresh_token":"rt-1","scope":"words"}"#;

#[tokio::test]
async fn the_flow_runs_on_tokio_from_discovery_through_registration_to_the_token() {
    let server = authorization_server(
        r#"{"client_id":"c-1","client_secret":"s3cret","token_endpoint_auth_method":"client_secret_basic"}"#,
        TOKEN,
    )
    .await;
    let base = server.base.clone();
    let identity = ClientIdentity {
        client_id: None,
        client_secret: None,
        metadata_document: None,
        client_name: "async host",
        redirect_uri: "http://127.0.0.1:1/callback",
    };
    let authorizer = Authorizer::new(&Limits::default()).unwrap();
    let mut opened = String::new();
    let authorized = authorizer
        .authorize(&format!("{base}/mcp"), None, identity, async |url| {
            opened = url.to_owned();
            let state = query(url, "state");
            Ok(format!(
                "http://127.0.0.1:1/callback?code=c0de&state={state}"
            ))
        })
        .await
        .unwrap();
    assert_eq!(authorized.token.access_token, "at-1");
    assert_eq!(authorized.client_id, "c-1");
    assert_eq!(authorized.token_auth, TokenAuth::SecretBasic);
    assert!(opened.starts_with(&format!(
        "{base}/authorize?response_type=code&client_id=c-1&"
    )));
    assert_eq!(query(&opened, "code_challenge_method"), "S256");
    assert_eq!(query(&opened, "scope"), "words");

    // What reached the server, in order: the path's well-known URL first (404), then the
    // root's; the authorization server's; the registration; the code, with the verifier
    // and the resource, the secret in the header as the registration said.
    let heard = server.heard();
    let asked: Vec<(&str, &str)> = heard
        .iter()
        .map(|h| (h.method.as_str(), h.path.as_str()))
        .collect();
    assert_eq!(
        asked,
        [
            ("GET", "/.well-known/oauth-protected-resource/mcp"),
            ("GET", "/.well-known/oauth-protected-resource"),
            ("GET", "/.well-known/oauth-authorization-server"),
            ("POST", "/register"),
            ("POST", "/token"),
        ]
    );
    let registration: serde_json::Value = serde_json::from_str(&heard[3].body).unwrap();
    assert_eq!(registration["client_name"], "async host");
    assert_eq!(heard[3].headers["content-type"], "application/json");
    let token = &heard[4];
    assert_eq!(form(&token.body, "code"), Some("c0de"));
    assert_eq!(form(&token.body, "code_verifier").map(str::len), Some(43));
    let resource = format!("{base}/mcp")
        .replace(':', "%3A")
        .replace('/', "%2F");
    assert_eq!(form(&token.body, "resource"), Some(resource.as_str()));
    assert_eq!(form(&token.body, "client_secret"), None);
    assert!(token.headers["authorization"].starts_with("Basic "));
    for request in &heard {
        assert_eq!(request.headers["accept"], "application/json", "{request:?}");
    }

    // A refresh, sent the same way; a redirect that is not the one sent is not used, and
    // no code goes to the token endpoint.
    let refresh = TokenRequest::refresh(
        "rt-1",
        None,
        "c-1",
        &authorized.discovered.resource.resource,
    )
    .client_secret(authorized.client_secret.as_deref(), authorized.token_auth);
    let renewed = authorizer
        .token(&authorized.discovered.server, &refresh)
        .await
        .unwrap();
    assert_eq!(renewed.access_token, "at-1");
    let known = ClientIdentity {
        client_id: Some("c-1"),
        ..identity
    };
    let forged = authorizer
        .authorize(&format!("{base}/mcp"), None, known, async |_| {
            Ok(String::from(
                "http://127.0.0.1:1/callback?code=c0de&state=forged",
            ))
        })
        .await;
    assert!(
        matches!(forged, Err(AuthorizeError::Auth(AuthError::StateMismatch))),
        "{forged:?}"
    );
    let posted: Vec<String> = server
        .heard()
        .iter()
        .filter(|h| h.method == "POST")
        .map(|h| h.path.clone())
        .collect();
    assert_eq!(
        posted,
        ["/register", "/token", "/token"],
        "nothing more was posted"
    );
}

#[tokio::test]
async fn the_browser_s_failure_and_a_server_that_registers_nobody_end_the_flow_in_their_words() {
    let server = Scripted::start(|base| {
        vec![
            (
                "/.well-known/oauth-protected-resource/mcp",
                (200, String::new(), format!(r#"{{"resource":"{base}/mcp","authorization_servers":["{base}"]}}"#)),
            ),
            (
                "/.well-known/oauth-authorization-server",
                (200, String::new(), format!(
                    r#"{{"issuer":"{base}","authorization_endpoint":"{base}/a","token_endpoint":"{base}/t","code_challenge_methods_supported":["S256"]}}"#
                )),
            ),
        ]
    })
    .await;
    let url = format!("{}/mcp", server.base);
    let authorizer = Authorizer::new(&Limits::default()).unwrap();
    let anonymous = ClientIdentity {
        client_id: None,
        client_secret: None,
        metadata_document: None,
        client_name: "async host",
        redirect_uri: "http://127.0.0.1:1/callback",
    };
    let refused = authorizer
        .authorize(&url, None, anonymous, async |_| {
            unreachable!("no browser without a client")
        })
        .await;
    assert!(
        matches!(refused, Err(AuthorizeError::Auth(AuthError::NoClientId))),
        "{refused:?}"
    );
    let known = ClientIdentity {
        client_id: Some("mine"),
        ..anonymous
    };
    let closed = authorizer
        .authorize(&url, None, known, async |_| {
            Err(String::from("the user closed the window"))
        })
        .await;
    match closed {
        Err(error @ AuthorizeError::Browser(_)) => assert_eq!(
            error.to_string(),
            "the browser step failed: the user closed the window"
        ),
        other => panic!("{other:?}"),
    }
    // Nothing but discovery reached the server, twice.
    assert!(server.heard().iter().all(|h| h.method == "GET"));
}

#[tokio::test]
async fn a_fetch_stops_at_the_frame_limit_and_does_not_follow_a_redirect() {
    let elsewhere = Scripted::start(|_| Vec::new()).await;
    let target = format!("{}/secret", elsewhere.base);
    let server = Scripted::start(|_| {
        vec![
            ("/big", (200, String::new(), "x".repeat(4096))),
            (
                "/moved",
                (302, format!("Location: {target}\r\n"), String::new()),
            ),
        ]
    })
    .await;
    let mut limits = Limits::default();
    limits.frame_bytes = 1024;
    let authorizer = Authorizer::new(&limits).unwrap();
    let big = authorizer
        .fetch(&Fetch::get(&format!("{}/big", server.base)))
        .await;
    assert!(
        matches!(&big, Err(AuthorizeError::TooLong { url }) if url.ends_with("/big")),
        "{big:?}"
    );
    let moved = authorizer
        .fetch(&Fetch::get(&format!("{}/moved", server.base)))
        .await
        .unwrap();
    assert_eq!(moved.status, 302);
    assert_eq!(moved.location.as_deref(), Some(target.as_str()));
    assert!(elsewhere.heard().is_empty(), "the redirect was followed");
    // An https:// URL without the rustls feature: refused, saying why, before anything is
    // sent (with it: nobody listens there).
    let tls = authorizer.fetch(&Fetch::get("https://127.0.0.1:1/x")).await;
    match tls {
        Err(AuthorizeError::Unreachable(why)) => assert_eq!(
            why.ends_with("https:// needs the rustls feature of mcp-sansio-tokio"),
            !cfg!(feature = "rustls"),
            "{why}"
        ),
        other => panic!("{other:?}"),
    }
}

#[tokio::test(start_paused = true)]
async fn a_server_that_never_answers_is_unreachable_once_the_operation_timeout_passes() {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!(
        "http://{}/.well-known/oauth-protected-resource",
        listener.local_addr().unwrap()
    );
    tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((stream, _)) = listener.accept().await {
            held.push(stream);
        }
    });
    let mut limits = Limits::default();
    limits.operation_timeout = Duration::from_secs(30);
    let authorizer = Authorizer::new(&limits).unwrap();
    let silent = authorizer.fetch(&Fetch::get(&url)).await;
    match silent {
        Err(AuthorizeError::Unreachable(why)) => {
            assert!(why.ends_with("gave no complete reply within 30s"), "{why}")
        }
        other => panic!("{other:?}"),
    }
}
