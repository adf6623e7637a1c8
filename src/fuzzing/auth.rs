//! OAuth's readers on any bytes a server or a browser sends, and the flow that runs through
//! them: no panic, and what each accepts keeps the promises its documentation makes.

use alloc::format;
use alloc::string::String;

use crate::auth::{
    read_redirect, server_metadata_urls, AuthError, AuthorizationRequest, Challenge,
    ClientIdentity, Discovering, Discovery, Login, Pkce, Registration, ResourceMetadata,
    ServerMetadata, Token, TokenAuth, TokenRequest,
};
use crate::Limits;

/// The server every document is read for.
const SERVER: &str = "https://mcp.example.com/api/mcp";
/// The issuer every authorization server document is read for.
const ISSUER: &str = "https://auth.example.com/t1";

/// The first byte picks the reader; the rest is its input.
pub fn auth(data: &[u8]) {
    let Some((&pick, rest)) = data.split_first() else {
        return;
    };
    let limits = Limits::default();
    let text = String::from_utf8_lossy(rest);
    match pick % 8 {
        0 => challenge(&text),
        1 => {
            if let Ok(prm) = ResourceMetadata::parse(rest, SERVER, &limits) {
                // Every issuer it names can be looked for, and the resource covers us.
                assert!(!prm.authorization_servers.is_empty());
                for issuer in &prm.authorization_servers {
                    secure(issuer);
                }
                let resource = prm.resource.to_ascii_lowercase();
                assert!(
                    resource.starts_with("https://mcp.example.com"),
                    "{resource}"
                );
            }
        }
        2 => {
            if let Ok(asm) = ServerMetadata::parse(rest, ISSUER, &limits) {
                assert_eq!(asm.issuer.trim_end_matches('/'), ISSUER);
                secure(&asm.authorization_endpoint);
                secure(&asm.token_endpoint);
                if let Some(registration) = &asm.registration_endpoint {
                    secure(registration);
                }
            }
        }
        3 => {
            if let Ok(token) = Token::parse(rest, &limits) {
                let header = token.header_value();
                assert!(header.bytes().all(|b| b.is_ascii_graphic() || b == b' '));
                assert_eq!(
                    Token::bearer(&token.access_token).as_ref(),
                    Ok(&Token {
                        expires_in: None,
                        refresh_token: None,
                        scope: None,
                        ..token.clone()
                    })
                );
            }
        }
        4 => {
            if let Ok(registration) = Registration::parse(rest, &limits) {
                secret_sent_one_way(&registration);
            }
        }
        5 => redirect_round_trip(&text),
        6 => {
            let asm = issuer_metadata();
            match read_redirect(&text, "s", &asm) {
                Ok(code) => assert!(!code.is_empty()),
                Err(AuthError::IssuerMismatch { issuer }) => assert_ne!(issuer, asm.issuer),
                Err(_) => {}
            }
        }
        _ => flow(rest),
    }
}

/// The whole flow against servers whose answers come from `data` (split at `0xFF`): each
/// discovery URL's status (one byte each, the metadata documents valid ones), the
/// registration's answer, where the browser comes back (`STATE` standing for the state
/// sent), and the token endpoint's answer. No panic; discovery asks at most the five URLs
/// the spec names; every request goes where the documents said; and a token, when one
/// comes, is for this server.
fn flow(data: &[u8]) {
    let limits = Limits::default();
    let mut parts = data.split(|&b| b == 0xFF);
    let mut part = || parts.next().unwrap_or_default();
    let (statuses, registration, redirect, token) = (part(), part(), part(), part());
    let status = |byte: Option<&u8>| match byte.map(|b| b % 4) {
        Some(0) => 404,
        Some(1) => 500,
        Some(2) => 400,
        _ => 200,
    };
    let resource = format!(r#"{{"resource":"{SERVER}","authorization_servers":["{ISSUER}"]}}"#);
    let server = format!(
        r#"{{"issuer":"{ISSUER}","authorization_endpoint":"{ISSUER}/authorize","token_endpoint":"{ISSUER}/token","registration_endpoint":"{ISSUER}/register","code_challenge_methods_supported":["S256"]}}"#
    );
    let mut discovery = Discovery::new(SERVER, None, &limits).expect("the server's URL is valid");
    let mut asked = 0;
    let discovered = loop {
        let request = discovery.request();
        assert!(asked < 5, "discovery asked a sixth URL: {}", request.url);
        secure(&request.url);
        let body = if request
            .url
            .contains("/.well-known/oauth-protected-resource")
        {
            &resource
        } else {
            &server
        };
        match discovery.answered(status(statuses.get(asked)), body.as_bytes()) {
            Ok(Discovering::Next(next)) => discovery = next,
            Ok(Discovering::Found(found)) => break found,
            Err(_) => return,
        }
        asked += 1;
    };
    let identity = ClientIdentity {
        client_id: None,
        client_secret: None,
        metadata_document: None,
        client_name: "fuzz",
        redirect_uri: "http://127.0.0.1:1/cb",
    };
    let Ok(Login::Register(registering)) =
        Login::start(discovered, None, identity, &[3; 32], &[4; 16], &limits)
    else {
        panic!("a server with a registration endpoint registers a client without an id");
    };
    assert_eq!(registering.request().url, format!("{ISSUER}/register"));
    let Ok(browsing) = registering.answered(201, registration) else {
        return;
    };
    let url = browsing.url();
    assert!(url.starts_with(&format!("{ISSUER}/authorize?")), "{url}");
    assert!(url.bytes().all(|b| b.is_ascii_graphic()), "{url}");
    let redirect = String::from_utf8_lossy(redirect).replace("STATE", &"04".repeat(16));
    let Ok(exchanging) = browsing.returned(&redirect) else {
        return;
    };
    let request = exchanging.request();
    assert_eq!(request.url, format!("{ISSUER}/token"));
    let body = request
        .body
        .as_ref()
        .map(|(_, b)| b.as_slice())
        .unwrap_or_default();
    let body = String::from_utf8_lossy(body);
    assert!(
        body.contains("&resource=https%3A%2F%2Fmcp.example.com%2Fapi%2Fmcp"),
        "{body}"
    );
    if let Ok(authorized) = exchanging.answered(status(statuses.last()), token) {
        assert_eq!(authorized.discovered.resource.resource, SERVER);
        let header = authorized.token.header_value();
        assert!(header.bytes().all(|b| b.is_ascii_graphic() || b == b' '));
    }
}

/// A registration's token requests send its secret exactly one way: in the body for
/// `client_secret_post`, in a `Basic` header for `client_secret_basic`, nowhere for `none`;
/// and a method that sends one always has one.
fn secret_sent_one_way(registration: &Registration) {
    let secret = registration.client_secret.as_deref();
    let auth = registration.token_auth;
    assert!(auth == TokenAuth::None || secret.is_some(), "{auth:?}");
    let request = TokenRequest::refresh("r", None, &registration.client_id, "https://a/mcp")
        .client_secret(secret, auth);
    let in_body = request
        .body()
        .split('&')
        .any(|p| p.starts_with("client_secret="));
    assert_eq!(in_body, auth == TokenAuth::SecretPost);
    match request.authorization() {
        Some(header) => {
            assert_eq!(auth, TokenAuth::SecretBasic);
            let encoded = header.strip_prefix("Basic ").unwrap_or_default();
            assert!(!encoded.is_empty());
            assert!(encoded
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'/' | b'=')));
        }
        None => assert_ne!(auth, TokenAuth::SecretBasic),
    }
}

/// `url` is one the readers take from a server: `https`, or `http` to this machine.
fn secure(url: &str) {
    let lower = url.to_ascii_lowercase();
    assert!(
        lower.starts_with("https://") || lower.starts_with("http://"),
        "{url}"
    );
    // A URL without a query is a URL one could look for an issuer at.
    if !url.contains('?') {
        assert!(server_metadata_urls(url).is_ok(), "{url}");
    }
}

/// A challenge read from `header` is read again the same from a header written from it.
fn challenge(header: &str) {
    let Some(read) = Challenge::parse(header) else {
        return;
    };
    let mut written = String::from("Bearer");
    let mut first = true;
    for (name, value) in [
        ("resource_metadata", &read.resource_metadata),
        ("scope", &read.scope),
        ("error", &read.error),
        ("error_description", &read.error_description),
    ] {
        if let Some(value) = value {
            let quoted = value.replace('\\', "\\\\").replace('"', "\\\"");
            let comma = if first { " " } else { ", " };
            written.push_str(&format!("{comma}{name}=\"{quoted}\""));
            first = false;
        }
    }
    assert_eq!(
        Challenge::parse(&written).as_ref(),
        Some(&read),
        "{written}"
    );
}

fn issuer_metadata() -> ServerMetadata {
    let document = br#"{"issuer":"https://auth.example.com/t1","authorization_endpoint":"https://auth.example.com/t1/authorize?x=1","token_endpoint":"https://auth.example.com/t1/token","code_challenge_methods_supported":["S256"]}"#;
    ServerMetadata::parse(document, ISSUER, &Limits::default())
        .expect("the fixed document is valid")
}

/// An authorization URL built from any strings carries them without letting one become
/// another parameter: read back as a redirect, its `state` matches and it has no code.
fn redirect_round_trip(text: &str) {
    let asm = issuer_metadata();
    let mut parts = text.splitn(3, '\u{0}');
    let (client_id, state, resource) = (
        parts.next().unwrap_or(""),
        parts.next().unwrap_or("s"),
        parts.next().unwrap_or(SERVER),
    );
    let pkce = Pkce::from_random(&[9; 32]);
    let url = AuthorizationRequest {
        client_id,
        redirect_uri: "http://127.0.0.1:1/cb",
        scope: Some(text),
        state,
        resource,
    }
    .url(&asm, &pkce);
    assert!(url.bytes().all(|b| b.is_ascii_graphic()), "{url}");
    assert_eq!(
        read_redirect(&url, state, &asm),
        Err(AuthError::NoCode),
        "{url}"
    );
}
