//! The token and the challenge through the blocking driver, against a server written here
//! on a bare socket that refuses everything with 401 and records each request's
//! `Authorization` headers: the session's token goes instead of the application's header,
//! never beside it, and every `WWW-Authenticate` field reaches the core.

#![allow(clippy::unwrap_used, clippy::panic, clippy::indexing_slicing)]

mod common;

use std::io::{BufReader, Write};
use std::net::TcpListener;
use std::sync::{Arc, Mutex};
use std::thread;

use common::read_request_and_headers;
use mcp_sansio::auth::Token;
use mcp_sansio::{Config, Error, HttpError, ProtocolChoice};
use mcp_sansio_http::{HttpClient, HttpClientError};

/// A server that answers 401 to every request; the `Authorization` values of each request.
fn refusing() -> (String, Arc<Mutex<Vec<Vec<String>>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let seen = Arc::new(Mutex::new(Vec::new()));
    let record = Arc::clone(&seen);
    thread::spawn(move || {
        for conn in listener.incoming() {
            let mut conn = conn.unwrap();
            let mut reader = BufReader::new(conn.try_clone().unwrap());
            let (_, _, headers, _) = read_request_and_headers(&mut reader).unwrap();
            let tokens: Vec<String> = headers
                .into_iter()
                .filter(|(name, _)| name.eq_ignore_ascii_case("authorization"))
                .map(|(_, value)| value)
                .collect();
            record.lock().unwrap().push(tokens);
            write!(
                conn,
                "HTTP/1.1 401 Unauthorized\r\nWWW-Authenticate: Basic realm=\"x\"\r\n\
                 WWW-Authenticate: Bearer error=\"invalid_token\", scope=\"s1 s2\"\r\n\
                 Content-Length: 0\r\nConnection: close\r\n\r\n"
            )
            .unwrap();
        }
    });
    (url, seen)
}

fn refused(client: &mut HttpClient) -> mcp_sansio::auth::Challenge {
    match client.connect() {
        Err(HttpClientError::Mcp(Error::Http(HttpError::Unauthorized(Some(c))))) => c,
        other => panic!("{other:?}"),
    }
}

#[test]
fn the_session_s_token_replaces_the_application_s_header_and_the_challenge_comes_through() {
    let mut config = Config::new(["x"].into_iter().collect());
    config.protocol = ProtocolChoice::Stateless;
    let (url, seen) = refusing();

    let mut client = HttpClient::new(&url, config.clone())
        .unwrap()
        .header("authorization", "Bearer from-the-header")
        .unwrap();
    client
        .session()
        .set_authorization(Some(&Token::bearer("from-the-session").unwrap()));
    let challenge = refused(&mut client);
    assert_eq!(challenge.error.as_deref(), Some("invalid_token"));
    assert_eq!(challenge.scope.as_deref(), Some("s1 s2"));

    let mut client = HttpClient::new(&url, config)
        .unwrap()
        .header("Authorization", "Bearer from-the-header")
        .unwrap();
    refused(&mut client);
    assert_eq!(
        *seen.lock().unwrap(),
        [["Bearer from-the-session"], ["Bearer from-the-header"]]
    );
}
