//! Roots: the directories the application tells its servers they may work in.
//!
//! A server that touches files (the reference filesystem server, an IDE's language tools)
//! asks its client for roots with `roots/list` and keeps to them; when the list changes the
//! client says so with `notifications/roots/list_changed` and the server asks again. In
//! 2026-07-28, where a server cannot ask mid-call, it answers a call with `input_required`
//! and the client sends the call again with the roots. The server never chooses them: the
//! application gives them in [`Config::roots`](crate::Config) and changes them with
//! [`Client::set_roots`](crate::Client::set_roots).

use alloc::string::String;

use crate::error::Misuse;
use crate::json::write::{object_text, write_array, ObjectWriter};

/// One root: a `file://` URI, and optionally a name a server may show for it.
///
/// ```
/// use mcp_sansio::Root;
///
/// let root = Root::new("file:///home/ana/project")?.with_name("project");
/// assert_eq!(root.uri(), "file:///home/ana/project");
/// assert_eq!(root.name(), Some("project"));
/// assert!(Root::new("https://example.com/").is_err());
/// # Ok::<(), mcp_sansio::Misuse>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Root {
    uri: String,
    name: Option<String>,
}

impl Root {
    /// A root at `uri`, which must be a `file://` URI (the scheme in any case) without
    /// control characters: the revisions that have roots allow no other.
    ///
    /// # Errors
    /// [`Misuse::InvalidRoot`] for any other text.
    pub fn new(uri: impl Into<String>) -> Result<Self, Misuse> {
        let uri = uri.into();
        let file = uri
            .get(..7)
            .is_some_and(|scheme| scheme.eq_ignore_ascii_case("file://"));
        if !file || uri.chars().any(char::is_control) {
            return Err(Misuse::InvalidRoot { uri });
        }
        Ok(Root { uri, name: None })
    }

    /// This root, named `name` (for display: servers do not resolve it).
    #[must_use]
    pub fn with_name(mut self, name: impl Into<String>) -> Self {
        self.name = Some(name.into());
        self
    }

    /// The root's URI.
    #[must_use]
    pub fn uri(&self) -> &str {
        &self.uri
    }

    /// The root's name, if it has one.
    #[must_use]
    pub fn name(&self) -> Option<&str> {
        self.name.as_deref()
    }
}

/// The result of `roots/list` for `roots`: `{"roots":[{"uri":…,"name":…},…]}`.
pub(crate) fn roots_result(roots: &[Root]) -> String {
    object_text(|result| {
        result.key("roots");
        write_array(result.out(), roots, |root, out| {
            let mut object = ObjectWriter::open(out);
            object.string("uri", &root.uri);
            object.opt_string("name", root.name.as_deref());
            object.close();
        });
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_file_uris_are_roots_and_the_result_lists_them_in_order() {
        for uri in [
            "https://example.com/",
            "/home/ana",
            "file:/home/ana",
            "fil",
            "",
            "file:///a\nb",
            "file:///a\u{7f}",
        ] {
            assert_eq!(
                Root::new(uri),
                Err(Misuse::InvalidRoot { uri: uri.into() }),
                "{uri:?}"
            );
        }
        let roots = [
            Root::new("file:///srv/a \"b\"").unwrap().with_name("a"),
            Root::new("FILE:///tmp").unwrap(),
        ];
        assert_eq!(
            roots_result(&roots),
            r#"{"roots":[{"uri":"file:///srv/a \"b\"","name":"a"},{"uri":"FILE:///tmp"}]}"#
        );
        assert_eq!(roots_result(&[]), r#"{"roots":[]}"#);
    }
}
