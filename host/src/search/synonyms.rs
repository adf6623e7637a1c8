//! Words that mean the same to a tool search: a request says "make a folder", the tool is
//! `create_directory`.

use std::collections::HashMap;
use std::sync::OnceLock;

use super::text::tokens;

/// Groups of words a user and a tool's author use for the same thing: the verbs of tool
/// names and the nouns of software work (with their common abbreviations), nothing specific
/// to one server. A query term from a
/// group also searches for the others, at [`super::Bm25::SYNONYM_WEIGHT`].
const GROUPS: &[&[&str]] = &[
    &["create", "make", "new", "add", "generate"],
    &["delete", "remove", "erase", "destroy", "drop", "forget"],
    &["update", "edit", "change", "modify", "alter"],
    &[
        "get", "fetch", "retrieve", "read", "show", "view", "display",
    ],
    &["list", "enumerate"],
    &["search", "find", "look", "lookup", "locate", "query"],
    &["run", "execute", "exec", "launch", "start"],
    &["stop", "kill", "terminate", "cancel", "abort", "halt"],
    &["move", "rename", "transfer", "relocate"],
    &["copy", "duplicate", "clone", "fork"],
    &["directory", "folder", "dir"],
    &["repository", "repo"],
    &["issue", "ticket", "bug"],
    &["pull", "pr"],
    &["merge", "mr", "land"],
    &["comment", "remark", "reply", "note"],
    &["message", "chat"],
    &["user", "person", "people", "member", "account"],
    &["screenshot", "capture", "picture", "image"],
    &["click", "press", "tap"],
    &["type", "enter", "input", "fill"],
    &["navigate", "go", "visit", "browse"],
    &["database", "db"],
    &["kubernetes", "k8s", "kubectl"],
    &["log", "output", "print"],
    &["download", "save", "grab"],
    &["upload", "attach"],
    &["label", "tag"],
    &["permission", "access", "restriction"],
    &["watch", "follow", "subscribe", "notify"],
    &["hover", "mouse"],
    &["process", "program"],
    &["link", "relation", "relationship"],
    &["worklog", "timesheet"],
    &["option", "choice", "dropdown"],
    &["crawl", "spider"],
    &["diff", "compare", "difference"],
    &["batch", "bulk"],
    &["child", "children", "underneath", "nested"],
    &["direction", "route"],
];

/// The stems related to `stem` (never `stem` itself); empty for most words.
pub(crate) fn related(stem: &str) -> &'static [String] {
    static TABLE: OnceLock<HashMap<String, Vec<String>>> = OnceLock::new();
    let table = TABLE.get_or_init(|| {
        let mut table: HashMap<String, Vec<String>> = HashMap::new();
        for group in GROUPS {
            let stems: Vec<String> = group.iter().flat_map(|w| tokens(w)).collect();
            for stem in &stems {
                let others = table.entry(stem.clone()).or_default();
                others.extend(stems.iter().filter(|s| *s != stem).cloned());
                others.sort();
                others.dedup();
            }
        }
        table
    });
    table.get(stem).map_or(&[], Vec::as_slice)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_word_reaches_its_group_by_stem_and_only_its_group() {
        let folder = tokens("folders");
        assert!(related(&folder[0]).contains(&tokens("directory")[0]));
        assert!(!related(&folder[0]).contains(&folder[0]));
        assert!(related("forecast").is_empty());
    }
}
