//! Where the messages of a 2024-11-05 server (HTTP with server-sent events) go: the message
//! endpoint its stream names, resolved against the URL the stream came from and kept on that
//! URL's origin.

use alloc::string::String;

/// The URL the session's requests go to, as far as resolving a reference needs it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Base {
    /// `scheme://host[:port]`, lowercase, the scheme's default port left out.
    origin: String,
    /// The path and query (`/sse`, `/mcp?x=1`); `/` when the URL has none.
    target: String,
}

/// What is wrong with a message endpoint.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Refused {
    /// Not 1 to the bound's bytes of visible ASCII: not a URL reference a request can carry.
    Malformed,
    /// On another scheme, host or port than the URL the session was given, or (with no URL
    /// given) anything but a path.
    OtherOrigin,
}

impl Base {
    /// The base of `url` (`http://` or `https://`, any case), or `None` if it is not one.
    pub(crate) fn parse(url: &str) -> Option<Self> {
        let (origin, target) = split_absolute(url)?;
        Some(Base {
            origin,
            target: String::from(target),
        })
    }
}

/// The request-target (path and query) that the message endpoint `reference` names, for a
/// session whose requests go to `base`; at most `limit` bytes of it are read.
///
/// A path (`/messages/?session_id=…`, what the Python and TypeScript SDKs send) is taken as
/// it is; an absolute URL (what Go servers send) only on `base`'s origin; a relative path
/// against `base`'s directory. A fragment is dropped, as HTTP never sends one.
pub(crate) fn resolve(
    reference: &[u8],
    base: Option<&Base>,
    limit: usize,
) -> Result<String, Refused> {
    let visible = |b: &u8| (0x21..=0x7E).contains(b);
    if reference.is_empty() || reference.len() > limit || !reference.iter().all(visible) {
        return Err(Refused::Malformed);
    }
    let reference = core::str::from_utf8(reference).map_err(|_| Refused::Malformed)?;
    let reference = reference.split('#').next().unwrap_or_default();
    let target = target_of(reference, base)?;
    // A target opening `//` would read as another host to a URL parser.
    if target.starts_with('/') && !target.starts_with("//") {
        Ok(target)
    } else {
        Err(Refused::Malformed)
    }
}

/// `reference` (visible ASCII, without a fragment) resolved to a request-target.
fn target_of(reference: &str, base: Option<&Base>) -> Result<String, Refused> {
    if reference.starts_with('/') && !reference.starts_with("//") {
        return Ok(String::from(reference));
    }
    let base = base.ok_or(Refused::OtherOrigin)?;
    if let Some(rest) = reference.strip_prefix("//") {
        // A network-path reference: the base's scheme, its own authority.
        let scheme = base.origin.split(':').next().unwrap_or_default();
        return same_origin(&alloc::format!("{scheme}://{rest}"), base);
    }
    if has_scheme(reference) {
        return same_origin(reference, base);
    }
    let path = base.target.split('?').next().unwrap_or("/");
    if reference.is_empty() || reference.starts_with('?') {
        return Ok(alloc::format!("{path}{reference}"));
    }
    let directory = path
        .rfind('/')
        .map_or("/", |at| path.get(..=at).unwrap_or("/"));
    Ok(alloc::format!("{directory}{reference}"))
}

/// The request-target of absolute URL `url`, if it is on `base`'s origin.
fn same_origin(url: &str, base: &Base) -> Result<String, Refused> {
    match split_absolute(url) {
        Some((origin, target)) if origin == base.origin => Ok(String::from(target)),
        Some(_) => Err(Refused::OtherOrigin),
        None => Err(Refused::Malformed),
    }
}

/// Whether `reference` opens with a scheme (`letter *(letter / digit / + / - / .) :`).
fn has_scheme(reference: &str) -> bool {
    let Some((scheme, _)) = reference.split_once(':') else {
        return false;
    };
    let mut bytes = scheme.bytes();
    bytes.next().is_some_and(|b| b.is_ascii_alphabetic())
        && bytes.all(|b| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'-' | b'.'))
}

/// An `http` or `https` URL's origin (lowercase, without its scheme's default port or any
/// user information) and its path and query (`/` when empty), or `None` for any other URL.
pub(crate) fn split_absolute(url: &str) -> Option<(String, &str)> {
    let (scheme, rest) = url.split_once("://")?;
    let default_port = if scheme.eq_ignore_ascii_case("http") {
        ":80"
    } else if scheme.eq_ignore_ascii_case("https") {
        ":443"
    } else {
        return None;
    };
    let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let (authority, target) = rest.split_at(end);
    let authority = authority.rsplit('@').next().unwrap_or_default();
    let authority = authority.strip_suffix(default_port).unwrap_or(authority);
    if authority.is_empty() {
        return None;
    }
    let target = target.split('#').next().unwrap_or_default();
    let origin = alloc::format!("{scheme}://{authority}").to_ascii_lowercase();
    Some((origin, if target.is_empty() { "/" } else { target }))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    fn at(url: &str, reference: &str) -> Result<String, Refused> {
        resolve(reference.as_bytes(), Base::parse(url).as_ref(), 1024)
    }

    #[test]
    fn an_endpoint_is_followed_only_on_the_origin_its_stream_came_from() {
        let sse = "http://127.0.0.1:3001/sse";
        // What the TypeScript and Python SDKs send, and what Go servers send.
        assert_eq!(
            at(sse, "/message?sessionId=ab-1").unwrap(),
            "/message?sessionId=ab-1"
        );
        assert_eq!(
            at(sse, "/messages/?session_id=f00d").unwrap(),
            "/messages/?session_id=f00d"
        );
        assert_eq!(
            at(sse, "http://127.0.0.1:3001/message?s=1").unwrap(),
            "/message?s=1"
        );
        assert_eq!(at(sse, "HTTP://127.0.0.1:3001/m#frag").unwrap(), "/m");
        assert_eq!(
            at("http://h/a/sse", "message?s=1").unwrap(),
            "/a/message?s=1"
        );
        assert_eq!(at("http://h/sse?x=1", "?s=1").unwrap(), "/sse?s=1");
        assert_eq!(at("http://h:80/sse", "http://H/m").unwrap(), "/m");
        assert_eq!(at("https://h/sse", "//h:443/m").unwrap(), "/m");
        assert_eq!(at("https://h/sse", "https://h").unwrap(), "/");
        // Another host, port or scheme is never followed: the application's headers go
        // only where it sent them.
        for elsewhere in [
            "http://127.0.0.1:3002/message",
            "https://127.0.0.1:3001/message",
            "http://evil.example/message",
            "//evil.example/message",
            "http://127.0.0.1:3001@evil.example/message",
            "ftp://127.0.0.1:3001/message",
        ] {
            let refused = at(sse, elsewhere).unwrap_err();
            assert!(
                matches!(refused, Refused::OtherOrigin | Refused::Malformed),
                "{elsewhere}"
            );
        }
        assert_eq!(at(sse, "http://evil.example/m"), Err(Refused::OtherOrigin));
        // Without the URL, only a path is followed.
        assert_eq!(resolve(b"/m?s=1", None, 64).unwrap(), "/m?s=1");
        assert_eq!(resolve(b"http://h/m", None, 64), Err(Refused::OtherOrigin));
        assert_eq!(resolve(b"m", None, 64), Err(Refused::OtherOrigin));
        // Nothing a request line cannot carry, and nothing past the bound.
        for bad in ["", "/a b", "/a\r\nHost: evil", "/\u{e9}", "http:///m"] {
            assert_eq!(at(sse, bad), Err(Refused::Malformed), "{bad:?}");
        }
        assert_eq!(resolve(b"/abcd", None, 4), Err(Refused::Malformed));
        assert_eq!(
            at(sse, "http://127.0.0.1:3001//evil/m"),
            Err(Refused::Malformed)
        );
    }
}
