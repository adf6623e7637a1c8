//! The application's decision about which tools may run.

use alloc::{collections::BTreeSet, string::String};

/// The names of the tools the application allows to be called, fixed when the client is made.
///
/// A call is sent only for a tool that is both in the server's current catalog and in this
/// list. The client takes the list by value and offers no way to change it afterwards, and
/// nothing a server sends is ever added to it. Names match exactly (case-sensitive).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Allowlist(BTreeSet<String>);

impl Allowlist {
    /// An allowlist that allows nothing: the server's tools can be listed, never called.
    pub fn none() -> Self {
        Allowlist(BTreeSet::new())
    }

    /// Whether `name` is allowed.
    pub fn allows(&self, name: &str) -> bool {
        self.0.contains(name)
    }

    /// The allowed names, in order.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.0.iter().map(String::as_str)
    }
}

impl<S: Into<String>> FromIterator<S> for Allowlist {
    fn from_iter<I: IntoIterator<Item = S>>(names: I) -> Self {
        Allowlist(names.into_iter().map(Into::into).collect())
    }
}
