//! OAuth's documents and decisions: the challenge, discovery, metadata, PKCE, the redirect
//! and the token, each against what the spec and its RFCs say, and a hostile server's
//! variants of each.

#![allow(
    clippy::unwrap_used,
    clippy::panic,
    clippy::indexing_slicing,
    clippy::std_instead_of_core
)]

use mcp_sansio::auth::{
    read_redirect, registration_request, resource_metadata_urls, scope_to_request,
    server_metadata_urls, AuthError, AuthorizationRequest, Challenge, Pkce, Registration,
    ResourceMetadata, ServerMetadata, Token, TokenAuth, TokenRequest,
};
use mcp_sansio::Limits;

fn limits() -> Limits {
    Limits::default()
}

fn challenge(header: &str) -> Challenge {
    Challenge::parse(header).unwrap_or_else(|| panic!("no Bearer challenge in {header:?}"))
}

#[test]
fn the_bearer_challenge_is_read_from_any_header_the_grammar_allows() {
    // The spec's own examples, a 401 and a 403 (folded lines joined by a space).
    let c = challenge(
        r#"Bearer resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource", scope="files:read""#,
    );
    assert_eq!(
        c.resource_metadata.as_deref(),
        Some("https://mcp.example.com/.well-known/oauth-protected-resource")
    );
    assert_eq!(c.scope.as_deref(), Some("files:read"));
    assert!(!c.is_insufficient_scope());
    let c = challenge(
        r#"Bearer error="insufficient_scope", scope="files:read files:write user:profile", resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource", error_description="Additional file write permission required""#,
    );
    assert!(c.is_insufficient_scope());
    assert_eq!(
        c.scope.as_deref(),
        Some("files:read files:write user:profile")
    );
    assert_eq!(
        c.error_description.as_deref(),
        Some("Additional file write permission required")
    );

    // What the Python SDK sends, unquoted tokens, any case, spaces around `=`, escapes.
    let c = challenge(r#"bearer ERROR=invalid_token , Error_Description = "a \"quoted\" \\ word""#);
    assert_eq!(c.error.as_deref(), Some("invalid_token"));
    assert_eq!(c.error_description.as_deref(), Some(r#"a "quoted" \ word"#));
    // A bare scheme is a challenge with nothing in it.
    assert_eq!(challenge("Bearer"), Challenge::default());
    assert_eq!(challenge("Bearer   "), Challenge::default());

    // Among other schemes, before and after, with token68 and parameters of their own.
    let c = challenge(
        r#"Basic realm="a, Bearer scope=\"x\"", Negotiate dGVzdA==, Bearer scope="y", DPoP algs="ES256""#,
    );
    assert_eq!(
        c.scope.as_deref(),
        Some("y"),
        "the quoted comma is not a separator"
    );
    let c =
        challenge(r#"Newauth realm="apps", type=1, title="Login", Bearer realm="x", scope="z""#);
    assert_eq!(c.scope.as_deref(), Some("z"));
    // The first value of a parameter named twice; unknown parameters skipped.
    let c = challenge(r#"Bearer scope="a", scope="b", realm="r", foo=bar"#);
    assert_eq!(c.scope.as_deref(), Some("a"));

    // No Bearer challenge, or a header broken before it.
    for header in [
        "",
        "Basic realm=\"x\"",
        "Bearerx scope=\"a\"",
        "Basic realm=\"never ends, Bearer scope=\"a\"",
        "Basic realm=\"x\" junk, Bearer scope=\"a\"",
        "=, Bearer",
    ] {
        assert_eq!(Challenge::parse(header), None, "{header:?}");
    }
    // Broken after its start: what came before the break is kept.
    let c = challenge(r#"Bearer scope="a", error="never ends"#);
    assert_eq!(c.scope.as_deref(), Some("a"));
    assert_eq!(c.error, None);
}

#[test]
fn a_challenge_reads_as_a_few_escaped_words() {
    let c = challenge("Bearer error=\"invalid_token\", error_description=\"bad\\\"\u{7}\"");
    assert_eq!(
        c.to_string(),
        r#"error "invalid_token", described as "bad\"\u{7}""#
    );
    assert_eq!(Challenge::default().to_string(), "no details");
    let bare = mcp_sansio::HttpError::Unauthorized(Some(Challenge::default()));
    assert_eq!(
        bare.to_string(),
        "it answered 401, wanting authorization this client was not given"
    );
    let error = mcp_sansio::Error::Http(mcp_sansio::HttpError::Unauthorized(Some(c)));
    assert_eq!(
        error.to_string(),
        "the peer's HTTP answer carried no answer: it answered 401, wanting authorization this \
         client was not given (error \"invalid_token\", described as \"bad\\\"\\u{7}\")"
    );
}

#[test]
fn the_resource_metadata_is_looked_for_where_the_spec_says_in_its_order() {
    assert_eq!(
        resource_metadata_urls("https://example.com/public/mcp", None).unwrap(),
        [
            "https://example.com/.well-known/oauth-protected-resource/public/mcp",
            "https://example.com/.well-known/oauth-protected-resource",
        ]
    );
    assert_eq!(
        resource_metadata_urls("HTTP://LocalHost:8000/mcp/?x=1#f", None).unwrap(),
        [
            "http://localhost:8000/.well-known/oauth-protected-resource/mcp",
            "http://localhost:8000/.well-known/oauth-protected-resource",
        ]
    );
    for root in [
        "https://example.com",
        "https://example.com/",
        "https://example.com:443/",
    ] {
        assert_eq!(
            resource_metadata_urls(root, None).unwrap(),
            ["https://example.com/.well-known/oauth-protected-resource"],
            "{root}"
        );
    }
    // The challenge's URL, when there is one, alone.
    let c = challenge(r#"Bearer resource_metadata="https://meta.example.com/prm""#);
    assert_eq!(
        resource_metadata_urls("https://example.com/mcp", Some(&c)).unwrap(),
        ["https://meta.example.com/prm"]
    );
    let bare = Challenge::default();
    assert_eq!(
        resource_metadata_urls("https://example.com/mcp", Some(&bare))
            .unwrap()
            .len(),
        2
    );
    // A challenge pointing at plain HTTP elsewhere, or at no URL, is not followed.
    for named in [
        "http://example.com/prm",
        "ftp://example.com/prm",
        "/relative",
        "https://example.com/a b",
    ] {
        let c = challenge(&format!(r#"Bearer resource_metadata="{named}""#));
        assert_eq!(
            resource_metadata_urls("https://example.com/mcp", Some(&c)),
            Err(AuthError::InsecureUrl(named.to_owned())),
            "{named}"
        );
    }
    assert!(matches!(
        resource_metadata_urls("example.com/mcp", None),
        Err(AuthError::InvalidUrl(_))
    ));
}

#[test]
fn the_authorization_server_is_looked_for_under_rfc_8414_then_openid_connect() {
    assert_eq!(
        server_metadata_urls("https://auth.example.com/tenant1").unwrap(),
        [
            "https://auth.example.com/.well-known/oauth-authorization-server/tenant1",
            "https://auth.example.com/.well-known/openid-configuration/tenant1",
            "https://auth.example.com/tenant1/.well-known/openid-configuration",
        ]
    );
    for issuer in ["https://auth.example.com", "https://auth.example.com/"] {
        assert_eq!(
            server_metadata_urls(issuer).unwrap(),
            [
                "https://auth.example.com/.well-known/oauth-authorization-server",
                "https://auth.example.com/.well-known/openid-configuration",
            ]
        );
    }
    assert_eq!(
        server_metadata_urls("http://127.0.0.1:9000").unwrap()[0],
        "http://127.0.0.1:9000/.well-known/oauth-authorization-server"
    );
    for bad in [
        "http://auth.example.com",
        "https://auth.example.com/?tenant=1",
        "https://auth.example.com/#x",
        "http://127.evil.example",
        "http://127.0.0.1.evil.example",
        "http://127.0.0.256",
        "http://localhost.evil.example",
        "https://user@auth.example.com",
        "http://evil.example@127.0.0.1",
    ] {
        assert!(
            matches!(server_metadata_urls(bad), Err(AuthError::InsecureUrl(_))),
            "{bad}"
        );
    }
}

const PRM: &str = r#"{
  "resource": "https://example.com/public/mcp",
  "authorization_servers": ["https://auth.example.com/tenant1", "http://localhost:9000"],
  "scopes_supported": ["files:read", "files:write"],
  "bearer_methods_supported": ["header"]
}"#;

#[test]
fn resource_metadata_is_taken_only_for_this_server() {
    let server = "https://example.com/public/mcp";
    let prm = ResourceMetadata::parse(PRM.as_bytes(), server, &limits()).unwrap();
    assert_eq!(prm.resource, server);
    assert_eq!(
        prm.authorization_servers,
        ["https://auth.example.com/tenant1", "http://localhost:9000"]
    );
    assert_eq!(
        scope_to_request(None, &prm).as_deref(),
        Some("files:read files:write")
    );
    let c = challenge(r#"Bearer scope="files:read""#);
    assert_eq!(
        scope_to_request(Some(&c), &prm).as_deref(),
        Some("files:read"),
        "the challenge's scope is authoritative"
    );

    // The resource may be the server, or lie above it, in any case of scheme and host.
    let with = |resource: &str| PRM.replace("https://example.com/public/mcp", resource);
    for covering in [
        "https://example.com/public/mcp",
        "https://example.com/public/mcp/",
        "HTTPS://EXAMPLE.COM/public/mcp",
        "https://example.com:443/public/mcp",
        "https://example.com/public",
        "https://example.com",
        "https://example.com/",
    ] {
        let prm = ResourceMetadata::parse(with(covering).as_bytes(), server, &limits());
        assert!(prm.is_ok(), "{covering}: {prm:?}");
    }
    // Another origin, a sibling, a longer name, a deeper path, a fragment: refused.
    for other in [
        "https://evil.example/public/mcp",
        "http://example.com/public/mcp",
        "https://example.com:8443/public/mcp",
        "https://example.com/private/mcp",
        "https://example.com/public/mcpx",
        "https://example.com/pub",
        "https://example.com/public/mcp/deeper",
        "https://example.com/public/mcp#f",
        "https://@example.com/public/mcp",
        "https://evil.example@example.com/public/mcp",
        "not a url",
    ] {
        assert_eq!(
            ResourceMetadata::parse(with(other).as_bytes(), server, &limits()),
            Err(AuthError::ResourceMismatch {
                resource: other.to_owned()
            }),
            "{other}"
        );
    }
    // Authorization servers: at least one, each secure.
    for (servers, expected) in [
        (r#"[]"#, "invalid"),
        (r#""https://auth.example.com""#, "invalid"),
        (r#"[1]"#, "invalid"),
        (r#"["http://auth.example.com"]"#, "insecure"),
    ] {
        let doc = format!(r#"{{"resource":"{server}","authorization_servers":{servers}}}"#);
        let got = ResourceMetadata::parse(doc.as_bytes(), server, &limits()).unwrap_err();
        let kind = match got {
            AuthError::Invalid { member, .. } => {
                assert_eq!(member, "authorization_servers");
                "invalid"
            }
            AuthError::InsecureUrl(_) => "insecure",
            other => panic!("{servers}: {other:?}"),
        };
        assert_eq!(kind, expected, "{servers}");
    }
    let doc = format!(r#"{{"resource":"{server}"}}"#);
    assert!(matches!(
        ResourceMetadata::parse(doc.as_bytes(), server, &limits()),
        Err(AuthError::Invalid {
            member: "authorization_servers",
            ..
        })
    ));
}

#[test]
fn documents_are_bounded_and_read_strictly() {
    let server = "https://example.com/public/mcp";
    let mut tight = Limits::default();
    tight.frame_bytes = 64;
    assert_eq!(
        ResourceMetadata::parse(PRM.as_bytes(), server, &tight),
        Err(AuthError::TooLong {
            document: "protected resource metadata"
        })
    );
    for bad in [
        &b"{\"resource\":1,\"resource\":2}"[..],
        b"{\"resource\": \"x\"",
        b"\xff",
        b"",
        b"{} {}",
    ] {
        assert!(
            matches!(
                ResourceMetadata::parse(bad, server, &limits()),
                Err(AuthError::Malformed { .. })
            ),
            "{bad:?}"
        );
    }
    for not_an_object in ["[]", "\"x\"", "null"] {
        assert!(matches!(
            Token::parse(not_an_object.as_bytes(), &limits()),
            Err(AuthError::Invalid { .. })
        ));
    }
    let deep = format!("{}{}", "[".repeat(200), "]".repeat(200));
    assert!(matches!(
        Token::parse(deep.as_bytes(), &limits()),
        Err(AuthError::Malformed { .. })
    ));
}

const ASM: &str = r#"{
  "issuer": "https://auth.example.com/tenant1",
  "authorization_endpoint": "https://auth.example.com/tenant1/authorize",
  "token_endpoint": "https://auth.example.com/tenant1/token",
  "registration_endpoint": "https://auth.example.com/tenant1/register",
  "code_challenge_methods_supported": ["plain", "S256"],
  "client_id_metadata_document_supported": true,
  "response_types_supported": ["code"]
}"#;

#[test]
fn an_authorization_server_must_name_itself_and_do_pkce() {
    let issuer = "https://auth.example.com/tenant1";
    let asm = ServerMetadata::parse(ASM.as_bytes(), issuer, &limits()).unwrap();
    assert_eq!(asm.token_endpoint, "https://auth.example.com/tenant1/token");
    assert_eq!(
        asm.registration_endpoint.as_deref(),
        Some("https://auth.example.com/tenant1/register")
    );
    assert!(asm.client_id_metadata_document_supported);

    // Another issuer: refused (RFC 8414, section 3.3).
    for other in [
        "https://auth.example.com/tenant2",
        "https://evil.example/tenant1",
    ] {
        assert_eq!(
            ServerMetadata::parse(ASM.as_bytes(), other, &limits()),
            Err(AuthError::IssuerMismatch {
                issuer: issuer.to_owned()
            })
        );
    }
    // A host-only issuer with or without its slash, as serializers write it.
    let slashed = r#"{"issuer":"http://127.0.0.1:9000/","authorization_endpoint":"http://127.0.0.1:9000/authorize","token_endpoint":"http://127.0.0.1:9000/token","code_challenge_methods_supported":["S256"]}"#;
    let asm =
        ServerMetadata::parse(slashed.as_bytes(), "http://127.0.0.1:9000", &limits()).unwrap();
    assert_eq!(asm.registration_endpoint, None);
    assert!(!asm.client_id_metadata_document_supported);

    // No PKCE with S256: the spec says not to go on.
    for methods in [r#""code_challenge_methods_supported":["plain"],"#, ""] {
        let doc = ASM.replace(
            r#""code_challenge_methods_supported": ["plain", "S256"],"#,
            methods,
        );
        assert_eq!(
            ServerMetadata::parse(doc.as_bytes(), issuer, &limits()),
            Err(AuthError::NoPkce),
            "{methods}"
        );
    }
    // Endpoints: present and secure.
    let doc = ASM.replace(
        "https://auth.example.com/tenant1/token",
        "http://auth.example.com/token",
    );
    assert!(matches!(
        ServerMetadata::parse(doc.as_bytes(), issuer, &limits()),
        Err(AuthError::InsecureUrl(_))
    ));
    let doc = ASM.replace(
        r#""authorization_endpoint""#,
        r#""authorization_endpoint_x""#,
    );
    assert_eq!(
        ServerMetadata::parse(doc.as_bytes(), issuer, &limits()),
        Err(AuthError::Invalid {
            document: "authorization server metadata",
            member: "authorization_endpoint"
        })
    );
    let doc = ASM.replace("true", "\"yes\"");
    assert!(matches!(
        ServerMetadata::parse(doc.as_bytes(), issuer, &limits()),
        Err(AuthError::Invalid {
            member: "client_id_metadata_document_supported",
            ..
        })
    ));
}

fn server() -> ServerMetadata {
    ServerMetadata::parse(
        ASM.as_bytes(),
        "https://auth.example.com/tenant1",
        &limits(),
    )
    .unwrap()
}

#[test]
fn the_browser_is_sent_with_pkce_state_and_resource_and_its_return_is_checked() {
    let pkce = Pkce::from_random(&[7; 32]);
    assert_eq!(pkce.verifier().len(), 43);
    assert!(
        !format!("{pkce:?}").contains(pkce.verifier()),
        "the verifier is secret"
    );
    let request = AuthorizationRequest {
        client_id: "client 1",
        redirect_uri: "http://127.0.0.1:3000/callback",
        scope: Some("files:read files:write"),
        state: "s/1",
        resource: "https://example.com/public/mcp",
    };
    assert_eq!(
        request.url(&server(), &pkce),
        format!(
            "https://auth.example.com/tenant1/authorize?response_type=code&client_id=client%201\
             &redirect_uri=http%3A%2F%2F127.0.0.1%3A3000%2Fcallback&scope=files%3Aread%20files%3Awrite\
             &state=s%2F1&code_challenge={}&code_challenge_method=S256\
             &resource=https%3A%2F%2Fexample.com%2Fpublic%2Fmcp",
            pkce.challenge()
        )
    );
    let mut with_query = server();
    with_query.authorization_endpoint = String::from("https://a.example/authorize?tenant=1");
    let unscoped = AuthorizationRequest {
        scope: None,
        ..request
    };
    let url = unscoped.url(&with_query, &pkce);
    assert!(url.starts_with("https://a.example/authorize?tenant=1&response_type=code&"));
    assert!(!url.contains("scope="));

    // The way back.
    let s = server();
    assert_eq!(
        read_redirect(
            "http://127.0.0.1:3000/callback?code=a%2Bb+c&state=s%2F1",
            "s/1",
            &s
        )
        .unwrap(),
        "a+b c"
    );
    assert_eq!(
        read_redirect(
            "code=x&state=s&iss=https%3A%2F%2Fauth.example.com%2Ftenant1",
            "s",
            &s
        )
        .unwrap(),
        "x"
    );
    for (redirect, expected) in [
        ("?code=x&state=t", AuthError::StateMismatch),
        ("?code=x", AuthError::StateMismatch),
        ("?code=x&state=", AuthError::StateMismatch),
        ("?code=x&state=s%ZZ", AuthError::StateMismatch),
        (
            "?code=x&state=s&iss=https%3A%2F%2Fevil.example",
            AuthError::IssuerMismatch {
                issuer: "https://evil.example".to_owned(),
            },
        ),
        (
            "?error=access_denied&error_description=no+thanks&state=s",
            AuthError::Refused {
                error: "access_denied".to_owned(),
                description: Some("no thanks".to_owned()),
            },
        ),
        ("?state=s", AuthError::NoCode),
        ("?state=s&code=", AuthError::NoCode),
    ] {
        assert_eq!(
            read_redirect(redirect, "s", &s),
            Err(expected),
            "{redirect}"
        );
    }
    // The first of a parameter named twice: a second `state` cannot override the first.
    assert_eq!(
        read_redirect("?state=t&state=s&code=x", "s", &s),
        Err(AuthError::StateMismatch)
    );
}

#[test]
fn token_requests_carry_the_verifier_and_the_resource() {
    let pkce = Pkce::from_random(&[0; 32]);
    let body = TokenRequest::authorization_code(
        "c&d",
        "http://127.0.0.1:3000/cb",
        &pkce,
        "id-1",
        "https://example.com/mcp",
    )
    .body();
    assert_eq!(
        body,
        format!(
            "grant_type=authorization_code&code=c%26d&redirect_uri=http%3A%2F%2F127.0.0.1%3A3000%2Fcb\
             &code_verifier={}&client_id=id-1&resource=https%3A%2F%2Fexample.com%2Fmcp",
            pkce.verifier()
        )
    );
    let refresh = TokenRequest::refresh("r=1", Some("a b"), "id-1", "https://example.com/mcp");
    let posted = refresh
        .clone()
        .client_secret(Some("s3"), TokenAuth::SecretPost);
    assert_eq!(
        posted.body(),
        "grant_type=refresh_token&refresh_token=r%3D1&scope=a%20b&client_id=id-1\
         &client_secret=s3&resource=https%3A%2F%2Fexample.com%2Fmcp"
    );
    assert_eq!(posted.authorization(), None);
    // Basic: the secret leaves the body for the header; a public client sends it nowhere.
    let without_secret = "grant_type=refresh_token&refresh_token=r%3D1&scope=a%20b&client_id=id-1\
                          &resource=https%3A%2F%2Fexample.com%2Fmcp";
    let basic = refresh
        .clone()
        .client_secret(Some("s3"), TokenAuth::SecretBasic);
    assert_eq!(basic.body(), without_secret);
    assert_eq!(basic.authorization().as_deref(), Some("Basic aWQtMTpzMw=="));
    let public = refresh.client_secret(Some("s3"), TokenAuth::None);
    assert_eq!(public.body(), without_secret);
    assert_eq!(public.authorization(), None);
}

#[test]
fn client_secret_basic_is_rfc_6749_s_header_with_both_parts_form_encoded() {
    let pkce = Pkce::from_random(&[7; 32]);
    let code = |client_id, secret| {
        TokenRequest::authorization_code("c", "http://127.0.0.1/cb", &pkce, client_id, "r")
            .client_secret(Some(secret), TokenAuth::SecretBasic)
            .authorization()
            .unwrap()
    };
    // RFC 6749, section 2.3.1's own example.
    assert_eq!(
        code("s6BhdRkqt3", "gX1fBat3bV"),
        "Basic czZCaGRSa3F0MzpnWDFmQmF0M2JW"
    );
    // A colon, a space, a plus and a letter beyond ASCII are encoded before base64, so the
    // server splits id from secret at the right colon: "a%3Ab:p%20w%2B%C3%A9".
    assert_eq!(code("a:b", "p w+é"), "Basic YSUzQWI6cCUyMHclMkIlQzMlQTk=");
    // What a request prints names neither the secret nor the code's verifier.
    let request = TokenRequest::authorization_code("c0de", "u", &pkce, "id", "r")
        .client_secret(Some("hunter2"), TokenAuth::SecretBasic);
    let printed = format!("{request:?}");
    for secret in ["hunter2", "c0de", pkce.verifier()] {
        assert!(!printed.contains(secret), "{printed}");
    }
    assert!(printed.contains("SecretBasic"), "{printed}");
}

#[test]
fn a_registration_says_how_the_token_endpoint_takes_the_client() {
    let read = |body: &str| Registration::parse(body.as_bytes(), &limits());
    let method = |body: &str| read(body).map(|r| r.token_auth);
    // As the server registered it, whatever was asked.
    for (named, expected) in [
        ("none", TokenAuth::None),
        ("client_secret_post", TokenAuth::SecretPost),
        ("client_secret_basic", TokenAuth::SecretBasic),
    ] {
        let body = format!(
            r#"{{"client_id":"c1","client_secret":"shh","token_endpoint_auth_method":"{named}"}}"#
        );
        assert_eq!(method(&body), Ok(expected), "{named}");
        assert_eq!(expected.as_str(), named);
    }
    // Unnamed: RFC 7591's default, client_secret_basic, where there is a secret.
    assert_eq!(
        method(r#"{"client_id":"c1","client_secret":"shh"}"#),
        Ok(TokenAuth::SecretBasic)
    );
    assert_eq!(method(r#"{"client_id":"c1"}"#), Ok(TokenAuth::None));
    assert_eq!(
        method(r#"{"client_id":"c1","token_endpoint_auth_method":"none"}"#),
        Ok(TokenAuth::None)
    );
    // A method this client does not have is named; a secret method with no secret, and a
    // method that is not a string, are the document's fault.
    let refused = method(
        r#"{"client_id":"c1","client_secret":"k","token_endpoint_auth_method":"private_key_jwt"}"#,
    );
    assert_eq!(
        refused,
        Err(AuthError::UnsupportedClientAuth(
            "private_key_jwt".to_owned()
        ))
    );
    assert_eq!(
        refused.unwrap_err().to_string(),
        "the authorization server registered the client to authenticate by \"private_key_jwt\", \
         which this client cannot do"
    );
    let invalid = |member| {
        Err(AuthError::Invalid {
            document: "client registration",
            member,
        })
    };
    for named in ["client_secret_post", "client_secret_basic"] {
        let body = format!(r#"{{"client_id":"c1","token_endpoint_auth_method":"{named}"}}"#);
        assert_eq!(method(&body), invalid("client_secret"), "{named}");
    }
    assert_eq!(
        method(r#"{"client_id":"c1","token_endpoint_auth_method":1}"#),
        invalid("token_endpoint_auth_method")
    );
}

#[test]
fn a_token_is_a_bearer_token_a_header_can_carry() {
    let token = Token::parse(
        br#"{"access_token":"abc.DEF-1","token_type":"bearer","expires_in":3600,"refresh_token":"r1","scope":"files:read"}"#,
        &limits(),
    )
    .unwrap();
    assert_eq!(token.header_value(), "Bearer abc.DEF-1");
    assert_eq!(token.expires_in, Some(3600));
    assert_eq!(token.refresh_token.as_deref(), Some("r1"));
    let printed = format!("{token:?}");
    assert!(
        !printed.contains("abc.DEF") && !printed.contains("r1"),
        "{printed}"
    );

    for (body, expected) in [
        (
            r#"{"access_token":"a","token_type":"mac"}"#,
            AuthError::NotBearer("mac".to_owned()),
        ),
        (
            r#"{"access_token":"a b","token_type":"Bearer"}"#,
            AuthError::NotBearer("a token of other bytes".to_owned()),
        ),
        (
            r#"{"access_token":"a\r\nX: y","token_type":"Bearer"}"#,
            AuthError::NotBearer("a token of other bytes".to_owned()),
        ),
        (
            r#"{"access_token":"","token_type":"Bearer"}"#,
            AuthError::NotBearer("a token of other bytes".to_owned()),
        ),
        (
            r#"{"token_type":"Bearer"}"#,
            AuthError::Invalid {
                document: "token response",
                member: "access_token",
            },
        ),
        (
            r#"{"access_token":"a"}"#,
            AuthError::Invalid {
                document: "token response",
                member: "token_type",
            },
        ),
        (
            r#"{"access_token":"a","token_type":"Bearer","expires_in":1.5}"#,
            AuthError::Invalid {
                document: "token response",
                member: "expires_in",
            },
        ),
        (
            r#"{"access_token":"a","token_type":"Bearer","expires_in":-1}"#,
            AuthError::Invalid {
                document: "token response",
                member: "expires_in",
            },
        ),
        (
            r#"{"error":"invalid_grant","error_description":"code used"}"#,
            AuthError::Refused {
                error: "invalid_grant".to_owned(),
                description: Some("code used".to_owned()),
            },
        ),
    ] {
        assert_eq!(
            Token::parse(body.as_bytes(), &limits()),
            Err(expected),
            "{body}"
        );
    }
    assert_eq!(Token::bearer("k-1").unwrap().header_value(), "Bearer k-1");
    assert!(Token::bearer("k 1").is_err());
}

#[test]
fn a_client_registers_as_a_public_client_of_the_code_grant() {
    let body = registration_request("mcp-sansio \"test\"", &["http://127.0.0.1:3000/cb"]);
    assert_eq!(
        std::str::from_utf8(&body).unwrap(),
        r#"{"client_name":"mcp-sansio \"test\"","redirect_uris":["http://127.0.0.1:3000/cb"],"grant_types":["authorization_code","refresh_token"],"response_types":["code"],"token_endpoint_auth_method":"none"}"#
    );
    let registration = Registration::parse(
        br#"{"client_id":"c1","client_secret":"shh","client_id_issued_at":1}"#,
        &limits(),
    )
    .unwrap();
    assert_eq!(registration.client_id, "c1");
    assert_eq!(registration.client_secret.as_deref(), Some("shh"));
    assert!(!format!("{registration:?}").contains("shh"));
    assert_eq!(
        Registration::parse(br#"{"error":"invalid_redirect_uri"}"#, &limits()),
        Err(AuthError::Refused {
            error: "invalid_redirect_uri".to_owned(),
            description: None
        })
    );
}

proptest::proptest! {
    /// Any values, written as a server writes them (quoted, escaped, in any order, among
    /// other schemes), are read back exactly.
    #[test]
    fn any_challenge_written_is_read_back(
        values in proptest::collection::vec(proptest::option::of("[ -~]{0,24}"), 4),
        before in proptest::option::of("(Basic|DPoP|Negotiate) [a-z]{1,5}=\"[ -~&&[^\"\\\\]]{0,8}\""),
        token68 in proptest::bool::ANY,
    ) {
        let names = ["resource_metadata", "scope", "error", "error_description"];
        let mut header = String::new();
        if let Some(other) = &before {
            header.push_str(other);
            header.push_str(", ");
        }
        header.push_str("Bearer");
        let mut first = true;
        for (name, value) in names.iter().zip(&values) {
            if let Some(value) = value {
                let quoted = value.replace('\\', "\\\\").replace('"', "\\\"");
                header.push_str(if first { " " } else { ", " });
                header.push_str(&format!("{name}=\"{quoted}\""));
                first = false;
            }
        }
        if token68 {
            header.push_str(", Basic dXNlcg==");
        }
        let read = Challenge::parse(&header).unwrap();
        let got = [&read.resource_metadata, &read.scope, &read.error, &read.error_description];
        for (got, want) in got.iter().zip(&values) {
            proptest::prop_assert_eq!(*got, want, "{}", header);
        }
    }
}

/// The flow a transport drives, driven here by values alone: the requests it asks for, in
/// order, and what it makes of each answer.
#[test]
fn the_whole_flow_runs_on_values_alone_and_says_what_to_fetch_at_each_step() {
    use mcp_sansio::auth::{ClientIdentity, Discovering, Discovery, Fetch, Login};

    let base = "https://mcp.example";
    let issuer = "https://id.example/tenant";
    let resource = format!(r#"{{"resource":"{base}/mcp","authorization_servers":["{issuer}"]}}"#);
    let openid = format!(
        r#"{{"issuer":"{issuer}","authorization_endpoint":"{issuer}/authorize","token_endpoint":"{issuer}/token","code_challenge_methods_supported":["S256"]}}"#
    );
    // Discovery: the path's well-known URL 404s, the root's has it; RFC 8414's insertion
    // 404s, OpenID Connect's has it. Each step is a GET of the next URL.
    let mut discovery = Discovery::new(&format!("{base}/mcp"), None, &limits()).unwrap();
    let mut asked = Vec::new();
    let answers = [
        (404, ""),
        (200, resource.as_str()),
        (404, ""),
        (200, openid.as_str()),
    ];
    let mut found = None;
    for (status, body) in answers {
        let request = discovery.request();
        assert_eq!((request.method, &request.body), ("GET", &None));
        asked.push(request.url);
        match discovery.answered(status, body.as_bytes()).unwrap() {
            Discovering::Next(next) => discovery = next,
            Discovering::Found(discovered) => {
                found = Some(discovered);
                break;
            }
        }
    }
    assert_eq!(
        asked,
        [
            format!("{base}/.well-known/oauth-protected-resource/mcp"),
            format!("{base}/.well-known/oauth-protected-resource"),
            "https://id.example/.well-known/oauth-authorization-server/tenant".to_owned(),
            "https://id.example/.well-known/openid-configuration/tenant".to_owned(),
        ]
    );
    let discovered = found.unwrap();
    assert_eq!(discovered.server.token_endpoint, format!("{issuer}/token"));

    // No registration endpoint and no client id: refused before the browser.
    let anonymous = ClientIdentity {
        client_id: None,
        client_secret: None,
        metadata_document: Some("https://app.example/client.json"),
        client_name: "host",
        redirect_uri: "http://127.0.0.1:9/cb",
    };
    let refused = Login::start(
        discovered.clone(),
        None,
        anonymous,
        &[1; 32],
        &[2; 16],
        &limits(),
    );
    assert!(matches!(refused, Err(AuthError::NoClientId)), "{refused:?}");

    // A client id: straight to the browser, whose URL carries the state drawn from the
    // bytes given; the redirect's code goes to the token endpoint with the verifier.
    let known = ClientIdentity {
        client_id: Some("app"),
        ..anonymous
    };
    let browsing = match Login::start(discovered, None, known, &[1; 32], &[2; 16], &limits()) {
        Ok(Login::Browse(browsing)) => browsing,
        other => panic!("{other:?}"),
    };
    assert_eq!(browsing.client_id(), "app");
    let state = "02".repeat(16);
    assert!(
        browsing.url().contains(&format!("&state={state}&")),
        "{}",
        browsing.url()
    );
    let exchanging = browsing
        .clone()
        .returned(&format!("http://127.0.0.1:9/cb?code=xyz&state={state}"))
        .unwrap();
    let request: &Fetch = exchanging.request();
    assert_eq!(
        (request.method, request.url.as_str()),
        ("POST", "https://id.example/tenant/token")
    );
    let (kind, body) = request.body.clone().unwrap();
    assert_eq!(kind, "application/x-www-form-urlencoded");
    let body = String::from_utf8(body).unwrap();
    assert!(
        body.starts_with("grant_type=authorization_code&code=xyz&"),
        "{body}"
    );
    assert_eq!(request.authorization, None);
    // Its Debug shows no body: a code or a secret may be in it.
    assert!(!format!("{request:?}").contains("xyz"));

    // An error status without an OAuth error names the URL; with one, the server's words.
    assert_eq!(
        exchanging.clone().answered(502, b"<html>").unwrap_err(),
        AuthError::Status {
            url: "https://id.example/tenant/token".to_owned(),
            status: 502
        }
    );
    let refused = exchanging
        .answered(400, br#"{"error":"invalid_grant"}"#)
        .unwrap_err();
    assert!(matches!(refused, AuthError::Refused { error, .. } if error == "invalid_grant"));
    let forged = browsing.returned("http://127.0.0.1:9/cb?code=xyz&state=forged");
    assert!(matches!(forged, Err(AuthError::StateMismatch)));
}

#[test]
fn discovery_that_finds_nothing_names_every_url_it_tried() {
    use mcp_sansio::auth::{Discovering, Discovery};

    let mut discovery = Discovery::new("http://127.0.0.1:8/api/mcp", None, &limits()).unwrap();
    let refused = loop {
        match discovery.answered(404, b"") {
            Ok(Discovering::Next(next)) => discovery = next,
            Ok(Discovering::Found(found)) => panic!("{found:?}"),
            Err(e) => break e,
        }
    };
    assert_eq!(
        refused.to_string(),
        "no metadata was found at http://127.0.0.1:8/.well-known/oauth-protected-resource/api/mcp (404), \
         http://127.0.0.1:8/.well-known/oauth-protected-resource (404)"
    );
}
