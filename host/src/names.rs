//! Model-facing names: every allowed tool gets one that every provider accepts, and keeps it.
//!
//! MCP tool names are 1 to 128 characters from `A-Z a-z 0-9 _ . -`; the strictest provider
//! rule is `^[a-zA-Z0-9_-]{1,64}$`. A tool's name is the first of these that fits and is free:
//!
//! 1. the tool's own name: `process_refund` stays `process_refund`;
//! 2. its name with each `.` made `_`: `files.read` becomes `files_read`;
//! 3. that, after the server's id and `_`: `search` from server `catalog`, when another
//!    server's `search` came first, becomes `catalog_search`;
//! 4. that, cut to 55 characters, then `_` and eight hex digits of a hash of the server id
//!    and the tool name: a 100-character name becomes `catalog_` + 47 of its characters +
//!    `_` + the digits;
//! 5. the fourth, cut shorter, then `_2`, `_3`, ... (only a server that crafts names to meet
//!    a hash would get here).
//!
//! "Fits" is the provider rule; "free" means no other tool's name equals it ignoring ASCII
//! case, so that no two offered names differ only in case. A tool keeps its name for as long
//! as it stays in the palette: adding a server, removing one, or a server's new catalog never
//! renames a tool that survives, and a newcomer never takes a name in use, so no server's tool
//! shadows another's. The names that are freed when a tool goes may be given to later tools.
//! New tools are named in the order their catalog lists them after sorting by name, servers
//! in the order they are added, so the same history gives the same names.
//!
//! One name is never given to a server's tool: [`SEARCH_TOOL`](crate::SEARCH_TOOL), the
//! palette's own search tool; a server's `search_tools` is named by step 3.

use std::collections::BTreeSet;

/// The longest name every provider accepts.
pub const MAX_NAME: usize = 64;

/// Whether `name` satisfies the strictest provider rule, `^[a-zA-Z0-9_-]{1,64}$`.
pub fn fits_providers(name: &str) -> bool {
    (1..=MAX_NAME).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-'))
}

/// The names in use, compared ignoring ASCII case.
#[derive(Debug)]
pub(crate) struct Names(BTreeSet<String>);

impl Default for Names {
    /// No tool's name yet, and the search tool's name taken for good.
    fn default() -> Self {
        Names(BTreeSet::from([Self::key(crate::SEARCH_TOOL)]))
    }
}

impl Names {
    fn key(name: &str) -> String {
        name.to_ascii_lowercase()
    }

    pub(crate) fn is_free(&self, name: &str) -> bool {
        !self.0.contains(&Self::key(name))
    }

    pub(crate) fn release(&mut self, name: &str) {
        self.0.remove(&Self::key(name));
    }

    /// Picks the name of `tool` from `server` by the module's rule, and takes it.
    pub(crate) fn assign(&mut self, server: &str, tool: &str) -> String {
        let name = self.pick(server, tool);
        self.0.insert(Self::key(&name));
        name
    }

    fn pick(&self, server: &str, tool: &str) -> String {
        let plain = tool.replace('.', "_");
        let qualified = format!("{server}_{plain}");
        let usable = |name: &str| fits_providers(name) && self.is_free(name);
        for candidate in [tool, &plain, &qualified] {
            if usable(candidate) {
                return candidate.to_owned();
            }
        }
        let hashed = format!(
            "{}_{:08x}",
            prefix(&qualified, MAX_NAME - 9),
            fnv1a(server, tool) as u32
        );
        if usable(&hashed) {
            return hashed;
        }
        (2u32..)
            .map(|n| {
                let suffix = format!("_{n}");
                format!("{}{suffix}", prefix(&hashed, MAX_NAME - suffix.len()))
            })
            .find(|name| usable(name))
            .unwrap_or(hashed) // unreachable: the names in use are finite
    }
}

/// The first `max` bytes of an ASCII name (server ids and sanitised tool names are ASCII).
fn prefix(name: &str, max: usize) -> &str {
    name.get(..max.min(name.len())).unwrap_or(name)
}

/// FNV-1a over the server id, a zero byte and the tool name: stable across runs, platforms
/// and versions, which a std `Hasher` does not promise.
fn fnv1a(server: &str, tool: &str) -> u64 {
    let bytes = server.bytes().chain([0]).chain(tool.bytes());
    bytes.fold(0xcbf2_9ce4_8422_2325, |hash, b| {
        (hash ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_rule_step_by_step() {
        let mut names = Names::default();
        assert_eq!(names.assign("support", "process_refund"), "process_refund");
        assert_eq!(names.assign("files", "files.read"), "files_read");
        assert_eq!(names.assign("support", "search"), "search");
        assert_eq!(names.assign("catalog", "search"), "catalog_search");
        // Differs from a name in use only in case: qualified.
        assert_eq!(names.assign("other", "Search"), "other_Search");
        let long = "a".repeat(100);
        let hashed = names.assign("catalog", &long);
        assert_eq!(hashed.len(), 64);
        assert!(hashed.starts_with(&format!("catalog_{}", "a".repeat(47))));
        assert!(fits_providers(&hashed));
    }

    #[test]
    fn a_crafted_collision_gets_a_counter() {
        let mut names = Names::default();
        let long = "b".repeat(100);
        let first = names.assign("s", &long);
        // Another server names a tool exactly what the first got, and then the first
        // tool's second candidate, so every earlier step is taken.
        names.0.insert(Names::key(&format!("t_{long}")));
        let crafted = format!(
            "{}_{:08x}",
            prefix(&format!("t_{long}"), 55),
            fnv1a("t", &long) as u32
        );
        names.0.insert(Names::key(&crafted));
        let second = names.assign("t", &long);
        assert_ne!(first, second);
        assert!(
            second.ends_with("_2") && fits_providers(&second),
            "{second}"
        );
    }

    #[test]
    fn the_hash_is_stable() {
        // Fixed so that a change to the hash, which would rename tools, fails here.
        assert_eq!(fnv1a("catalog", "search"), 0xc7b2_adcd_8474_8fd4);
    }
}
