//! OAuth discovery over the wire, against a server written here on a bare socket that
//! serves scripted documents at scripted paths and records every path asked for: the order
//! the spec gives, what counts as not found, and what is refused.

#![allow(clippy::unwrap_used, clippy::panic, clippy::indexing_slicing)]

use std::collections::HashMap;
mod common;

use std::io::{BufReader, Write};
use std::net::TcpListener;
use std::sync::{Arc, Mutex};
use std::thread;

use common::read_request_and_headers;
use mcp_sansio::auth::{AuthError, Challenge, TokenAuth};
use mcp_sansio::Limits;
use mcp_sansio_http::oauth::{AuthorizeError, Authorizer};

/// What the server answers at a path: a status and a body.
type Script = HashMap<String, (u16, String)>;

/// What was posted to the server: each path, its body and its `Authorization` header, in
/// order.
type Posted = Arc<Mutex<Vec<(String, String, Option<String>)>>>;

/// Serves `script` (anything else: 404); the base URL, and the paths asked for in order.
fn serve(script: impl Fn(&str) -> Script + Send + 'static) -> (String, Arc<Mutex<Vec<String>>>) {
    let (base, asked, _) = serve_posted(script);
    (base, asked)
}

/// As [`serve`], and what was posted.
fn serve_posted(
    script: impl Fn(&str) -> Script + Send + 'static,
) -> (String, Arc<Mutex<Vec<String>>>, Posted) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let script = script(&base);
    let asked = Arc::new(Mutex::new(Vec::new()));
    let posted = Posted::default();
    let (log, bodies) = (Arc::clone(&asked), Arc::clone(&posted));
    thread::spawn(move || {
        for conn in listener.incoming() {
            let mut conn = conn.unwrap();
            let mut reader = BufReader::new(conn.try_clone().unwrap());
            let (method, path, headers, body) = read_request_and_headers(&mut reader).unwrap();
            log.lock().unwrap().push(path.clone());
            if method == "POST" {
                let body = String::from_utf8(body).unwrap();
                let authorization = headers
                    .into_iter()
                    .find(|(name, _)| name.eq_ignore_ascii_case("authorization"))
                    .map(|(_, value)| value);
                bodies
                    .lock()
                    .unwrap()
                    .push((path.clone(), body, authorization));
            }
            let (status, body) = script
                .get(&path)
                .cloned()
                .unwrap_or((404, String::from("{}")));
            let location = if status == 302 {
                "Location: /elsewhere\r\n"
            } else {
                ""
            };
            write!(
                conn,
                "HTTP/1.1 {status} X\r\nContent-Type: application/json\r\n{location}\
                 Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            )
            .unwrap();
        }
    });
    (base, asked, posted)
}

fn resource(base: &str, resource: &str) -> String {
    format!(r#"{{"resource":"{resource}","authorization_servers":["{base}/t1"]}}"#)
}

fn server(base: &str) -> String {
    format!(
        r#"{{"issuer":"{base}/t1","authorization_endpoint":"{base}/t1/authorize","token_endpoint":"{base}/t1/token","code_challenge_methods_supported":["S256"]}}"#
    )
}

/// The `state` the authorization URL `url` carries, for the browser's return.
fn state(url: &str) -> &str {
    url.split("state=")
        .nth(1)
        .and_then(|rest| rest.split('&').next())
        .unwrap()
}

/// What discovery reads for `{base}/mcp`: its resource's metadata, and its authorization
/// server's with `members` added (JSON object members, each ending in a comma).
fn discoverable(base: &str, members: &str) -> Script {
    let metadata = server(base).replace(
        r#""code_challenge_methods_supported""#,
        &format!(r#"{members}"code_challenge_methods_supported""#),
    );
    Script::from([
        (
            "/.well-known/oauth-protected-resource/mcp".into(),
            (200, resource(base, &format!("{base}/mcp"))),
        ),
        (
            "/.well-known/oauth-authorization-server/t1".into(),
            (200, metadata),
        ),
    ])
}

#[test]
fn without_a_challenge_url_the_well_known_uris_are_tried_in_the_spec_s_order() {
    let (base, asked) = serve(|base| {
        Script::from([
            // The endpoint's own well-known URI redirects: not followed, not found.
            (
                "/.well-known/oauth-protected-resource/api/mcp".into(),
                (302, String::new()),
            ),
            (
                "/.well-known/oauth-protected-resource".into(),
                (200, resource(base, &format!("{base}/api"))),
            ),
            // RFC 8414's path insertion is not there; OpenID Connect's is.
            (
                "/.well-known/openid-configuration/t1".into(),
                (200, server(base)),
            ),
        ])
    });
    let found = Authorizer::new(&Limits::default())
        .discover(&format!("{base}/api/mcp"), Some(&Challenge::default()))
        .unwrap();
    assert_eq!(found.resource.resource, format!("{base}/api"));
    assert_eq!(found.server.token_endpoint, format!("{base}/t1/token"));
    assert_eq!(
        *asked.lock().unwrap(),
        [
            "/.well-known/oauth-protected-resource/api/mcp",
            "/.well-known/oauth-protected-resource",
            "/.well-known/oauth-authorization-server/t1",
            "/.well-known/openid-configuration/t1",
        ]
    );
}

#[test]
fn the_challenge_s_url_alone_is_used_and_what_it_holds_is_checked() {
    // Found at the challenge's URL, but for another server's resource: refused, and the
    // authorization server is never asked.
    let (base, asked) = serve(|base| {
        Script::from([(
            "/meta".into(),
            (200, resource(base, "https://elsewhere.example/mcp")),
        )])
    });
    let challenge = Challenge::parse(&format!(r#"Bearer resource_metadata="{base}/meta""#));
    let refused =
        Authorizer::new(&Limits::default()).discover(&format!("{base}/mcp"), challenge.as_ref());
    assert!(
        matches!(
            refused,
            Err(AuthorizeError::Auth(AuthError::ResourceMismatch { .. }))
        ),
        "{refused:?}"
    );
    assert_eq!(*asked.lock().unwrap(), ["/meta"]);

    // Not at the challenge's URL: not found, and no well-known URI is tried instead.
    let (base, asked) = serve(|_| Script::new());
    let challenge = Challenge::parse(&format!(r#"Bearer resource_metadata="{base}/gone""#));
    match Authorizer::new(&Limits::default()).discover(&format!("{base}/mcp"), challenge.as_ref()) {
        Err(AuthorizeError::Auth(AuthError::NotFound(tried))) => {
            assert_eq!(tried, [(format!("{base}/gone"), 404)]);
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(*asked.lock().unwrap(), ["/gone"]);

    // A document past the frame limit is not read whole.
    let (base, _) = serve(|base| {
        let padded = resource(base, &format!("{base}/mcp"))
            .replace('{', &format!("{{\"pad\":\"{}\",", "x".repeat(4096)));
        Script::from([(
            "/.well-known/oauth-protected-resource/mcp".into(),
            (200, padded),
        )])
    });
    let mut limits = Limits::default();
    limits.frame_bytes = 1024;
    let refused = Authorizer::new(&limits).discover(&format!("{base}/mcp"), None);
    assert!(
        matches!(&refused, Err(AuthorizeError::TooLong { url }) if url.ends_with("/mcp")),
        "{refused:?}"
    );

    // An authorization server without PKCE: refused.
    let (base, _) = serve(|base| {
        Script::from([
            (
                "/.well-known/oauth-protected-resource/mcp".into(),
                (200, resource(base, &format!("{base}/mcp"))),
            ),
            (
                "/.well-known/oauth-authorization-server/t1".into(),
                (
                    200,
                    server(base).replace(r#","code_challenge_methods_supported":["S256"]"#, ""),
                ),
            ),
        ])
    });
    let refused = Authorizer::new(&Limits::default()).discover(&format!("{base}/mcp"), None);
    assert!(
        matches!(refused, Err(AuthorizeError::Auth(AuthError::NoPkce))),
        "{refused:?}"
    );
}

#[test]
fn a_client_metadata_document_is_the_client_id_where_the_server_takes_one() {
    use mcp_sansio_http::oauth::ClientIdentity;

    let document = "https://app.example/oauth/client.json";
    let identity = ClientIdentity {
        client_id: None,
        client_secret: None,
        metadata_document: Some(document),
        client_name: "app",
        redirect_uri: "http://127.0.0.1:1/cb",
    };
    for (supported, registers) in [(true, false), (false, true)] {
        let (base, asked) = serve(move |base| {
            let mut script = discoverable(
                base,
                &format!(
                    r#""client_id_metadata_document_supported":{supported},"registration_endpoint":"{base}/t1/register","#
                ),
            );
            script.insert(
                "/t1/register".into(),
                (201, r#"{"client_id":"registered-1"}"#.into()),
            );
            script
        });
        let mut seen = String::new();
        let outcome = Authorizer::new(&Limits::default()).authorize(
            &format!("{base}/mcp"),
            None,
            identity,
            |url| {
                seen = url.to_owned();
                Ok(format!(
                    "http://127.0.0.1:1/cb?error=access_denied&state={}",
                    state(url)
                ))
            },
        );
        assert!(
            matches!(&outcome, Err(AuthorizeError::Auth(AuthError::Refused { error, .. })) if error == "access_denied"),
            "{outcome:?}"
        );
        let client_id = if registers {
            "registered-1"
        } else {
            "https%3A%2F%2Fapp.example%2Foauth%2Fclient.json"
        };
        assert!(seen.contains(&format!("&client_id={client_id}&")), "{seen}");
        assert_eq!(
            asked
                .lock()
                .unwrap()
                .contains(&String::from("/t1/register")),
            registers
        );
    }
    // A document's URL that is not https with a path is not sent.
    let (base, _) =
        serve(|base| discoverable(base, r#""client_id_metadata_document_supported":true,"#));
    for bad in [
        "http://app.example/client.json",
        "https://app.example",
        "https://app.example/",
    ] {
        let identity = ClientIdentity {
            metadata_document: Some(bad),
            ..identity
        };
        let refused = Authorizer::new(&Limits::default()).authorize(
            &format!("{base}/mcp"),
            None,
            identity,
            |_| panic!("no browser for {bad}"),
        );
        assert!(
            matches!(refused, Err(AuthorizeError::Auth(AuthError::InvalidUrl(_)))),
            "{bad}: {refused:?}"
        );
    }
}

/// A whole authorization against a scripted server.
struct Run {
    /// The server's base URL.
    base: String,
    /// What authorization ended with.
    authorized: mcp_sansio_http::oauth::Authorized,
    /// The URL the browser was sent to.
    sent_to: String,
    /// The paths asked for, in order.
    asked: Vec<String>,
    /// What was posted: path, body, `Authorization` header.
    posted: Vec<(String, String, Option<String>)>,
}

/// A whole authorization against a scripted server whose registration endpoint answers
/// `registration`, by a client that registers itself, or by the application's own `known`
/// client (its id and secret).
fn authorized_by(registration: String, known: Option<(&str, (&str, TokenAuth))>) -> Run {
    use mcp_sansio_http::oauth::ClientIdentity;
    let (base, asked, posted) = serve_posted(move |base| {
        let mut script = discoverable(
            base,
            &format!(r#""registration_endpoint":"{base}/t1/register","#),
        );
        script.insert("/t1/register".into(), (201, registration.clone()));
        script.insert(
            "/t1/token".into(),
            (
                200,
                r#"{"access_token":"tok-1","token_type":"Bearer","expires_in":60,"refresh_token":"r-1"}"#
                    .into(),
            ),
        );
        script
    });
    let identity = ClientIdentity {
        client_id: known.map(|(id, _)| id),
        client_secret: known.map(|(_, secret)| secret),
        metadata_document: None,
        client_name: "app",
        redirect_uri: "http://127.0.0.1:1/cb",
    };
    let mut sent_to = String::new();
    let authorized = Authorizer::new(&Limits::default())
        .authorize(&format!("{base}/mcp"), None, identity, |url| {
            sent_to = url.to_owned();
            Ok(format!(
                "http://127.0.0.1:1/cb?code=c0de&state={}",
                state(url)
            ))
        })
        .unwrap();
    let asked = asked.lock().unwrap().clone();
    let posted = posted.lock().unwrap().clone();
    Run {
        base,
        authorized,
        sent_to,
        asked,
        posted,
    }
}

#[test]
fn a_whole_authorization_ends_with_the_token_for_the_code_and_verifier_it_sent() {
    let Run {
        base,
        authorized,
        sent_to,
        asked,
        posted,
    } = authorized_by(
        r#"{"client_id":"registered-1","client_secret":"s3"}"#.to_owned(),
        None,
    );
    assert_eq!(authorized.token.access_token, "tok-1");
    assert_eq!(authorized.token.refresh_token.as_deref(), Some("r-1"));
    assert_eq!(authorized.client_id, "registered-1");
    assert_eq!(authorized.client_secret.as_deref(), Some("s3"));
    // The browser went to the authorization endpoint with a PKCE challenge for this resource.
    assert!(
        sent_to.starts_with(&format!("{base}/t1/authorize?")),
        "{sent_to}"
    );
    assert!(sent_to.contains("code_challenge_method=S256"), "{sent_to}");
    // The code came back to the token endpoint with its verifier, for the same resource.
    assert_eq!(asked.last().map(String::as_str), Some("/t1/token"));
    let (path, body, _) = posted.last().unwrap();
    assert_eq!(path, "/t1/token");
    let form: HashMap<&str, &str> = body.split('&').filter_map(|p| p.split_once('=')).collect();
    assert_eq!(form.get("grant_type"), Some(&"authorization_code"));
    assert_eq!(form.get("code"), Some(&"c0de"));
    assert_eq!(form.get("client_id"), Some(&"registered-1"));
    let verifier = form.get("code_verifier").unwrap();
    assert!((43..=128).contains(&verifier.len()), "{verifier}");
    let resource = format!("{base}/mcp")
        .replace(':', "%3A")
        .replace('/', "%2F");
    assert_eq!(form.get("resource"), Some(&resource.as_str()));
    assert!(
        sent_to.contains(&format!("resource={resource}")),
        "{sent_to}"
    );
}

#[test]
fn the_secret_goes_to_the_token_endpoint_as_the_registration_says() {
    let with_secret = |method: &str| {
        format!(
            r#"{{"client_id":"registered-1","client_secret":"s3","token_endpoint_auth_method":"{method}"}}"#
        )
    };
    for (registration, expected) in [
        (with_secret("client_secret_basic"), TokenAuth::SecretBasic),
        // Unnamed with a secret: RFC 7591's default.
        (
            r#"{"client_id":"registered-1","client_secret":"s3"}"#.to_owned(),
            TokenAuth::SecretBasic,
        ),
        (with_secret("client_secret_post"), TokenAuth::SecretPost),
        (
            r#"{"client_id":"registered-1","token_endpoint_auth_method":"none"}"#.to_owned(),
            TokenAuth::None,
        ),
    ] {
        let in_body = expected == TokenAuth::SecretPost;
        // client_id "registered-1", secret "s3": base64 of "registered-1:s3".
        let header = (expected == TokenAuth::SecretBasic).then_some("Basic cmVnaXN0ZXJlZC0xOnMz");
        let Run {
            authorized, posted, ..
        } = authorized_by(registration.clone(), None);
        assert_eq!(authorized.token_auth, expected, "{registration}");
        // Only the token request may carry the secret, and only one way.
        for (path, body, authorization) in &posted {
            let at_token = path == "/t1/token";
            assert_eq!(
                body.contains("client_secret=s3"),
                in_body && at_token,
                "{path} {body}"
            );
            let sent = if at_token { header } else { None };
            assert_eq!(authorization.as_deref(), sent, "{path}");
            assert!(
                body.contains("client_id=registered-1") || !at_token,
                "{body}"
            );
        }
        assert_eq!(posted.len(), 2, "{posted:?}");
    }
}

#[test]
fn the_application_s_own_confidential_client_sends_its_secret_as_it_says() {
    for (token_auth, in_body, header) in [
        (TokenAuth::SecretBasic, false, Some("Basic YXBwLTE6aw==")),
        (TokenAuth::SecretPost, true, None),
        (TokenAuth::None, false, None),
    ] {
        let Run {
            authorized, posted, ..
        } = authorized_by(String::new(), Some(("app-1", ("k", token_auth))));
        assert_eq!(authorized.client_id, "app-1");
        assert_eq!(authorized.client_secret.as_deref(), Some("k"));
        assert_eq!(authorized.token_auth, token_auth);
        // Nothing registered: one POST, the token request, with the secret one way.
        let [(path, body, authorization)] = posted.as_slice() else {
            panic!("{posted:?}");
        };
        assert_eq!(path, "/t1/token");
        assert!(body.contains("client_id=app-1"), "{body}");
        assert_eq!(body.contains("client_secret=k"), in_body, "{body}");
        assert_eq!(authorization.as_deref(), header, "{token_auth:?}");
    }
}
