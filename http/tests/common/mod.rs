//! What the tests' servers on bare sockets share.

#![allow(dead_code, unreachable_pub)]

use std::io::{BufRead, BufReader, Read};
use std::net::TcpStream;

/// One request read off a connection: method, target, body.
pub fn read_request(reader: &mut BufReader<TcpStream>) -> Option<(String, String, Vec<u8>)> {
    read_request_and_headers(reader).map(|(method, target, _, body)| (method, target, body))
}

/// A request's header fields: name and trimmed value, in order.
pub type Headers = Vec<(String, String)>;

/// One request read off a connection: method, target, header fields, body.
pub fn read_request_and_headers(
    reader: &mut BufReader<TcpStream>,
) -> Option<(String, String, Headers, Vec<u8>)> {
    let mut line = String::new();
    if reader.read_line(&mut line).ok()? == 0 {
        return None;
    }
    let mut parts = line.split_whitespace();
    let (method, target) = (parts.next()?.to_owned(), parts.next()?.to_owned());
    let (mut headers, mut length) = (Vec::new(), 0);
    loop {
        let mut header = String::new();
        reader.read_line(&mut header).ok()?;
        if header.trim().is_empty() {
            break;
        }
        if let Some((name, value)) = header.split_once(':') {
            if name.eq_ignore_ascii_case("content-length") {
                length = value.trim().parse().ok()?;
            }
            headers.push((name.to_owned(), value.trim().to_owned()));
        }
    }
    let mut body = vec![0; length];
    reader.read_exact(&mut body).ok()?;
    Some((method, target, headers, body))
}
