//! Words that mean the same to a tool search: a request says "make a folder", the tool is
//! `create_directory`.

use std::collections::HashMap;
use std::sync::OnceLock;

use super::text::tokens;

/// Groups of words a user and a tool's author use for the same thing: the verbs of tool
/// names and the nouns of software work (with their common abbreviations), nothing specific
/// to one server. A query term from a group also searches for the others, at
/// [`super::Bm25::SYNONYM_WEIGHT`]; a word in two groups (`alert`) reaches both.
///
/// The first 40 were written for the first labelled set's domain, some from its misses. The
/// rest name what hosted software holds (calendars, spreadsheets, trackers, CRMs, shops,
/// clouds, monitoring, notebooks, browsers) as its users and its APIs say it, written from
/// that vocabulary and not from a set's queries. Seven drafted groups (around `version`,
/// `info`, `pod`, `performance`, `extract`, `sql` and `wiki`) and two words (`page` beside
/// `website`, `reload` beside `restart`) cost first hits on the first set, their words
/// meaning other things in tool catalogs, and were left out. The README has what each part
/// measured.
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
    // What hosted software holds, as its users and its APIs say it.
    &["event", "meeting", "appointment"],
    &["schedule", "reserve", "book"],
    &["record", "row", "entry"],
    &["field", "column", "attribute", "property"],
    &["sprint", "cycle", "iteration"],
    &["status", "state"],
    &["archive", "shelve"],
    &["channel", "room"],
    &["reaction", "react", "emoji"],
    &["filter", "rule"],
    &["email", "mail", "inbox"],
    &["send", "post"],
    &["draft", "compose"],
    &["document", "doc"],
    &["spreadsheet", "sheet", "workbook"],
    &["organization", "org", "workspace"],
    &["contact", "person", "people"],
    &["customer", "client", "buyer"],
    &["deal", "opportunity"],
    &["company", "business", "firm"],
    &["assign", "assignee", "delegate", "give"],
    &["complete", "finish", "done"],
    &["availability", "free", "busy", "freebusy"],
    &["location", "place", "venue", "spot"],
    &["coordinate", "latitude", "longitude", "geocode"],
    &["summary", "summarize", "overview", "tldr", "digest"],
    &["transcript", "caption", "subtitle"],
    &["paper", "article", "publication", "preprint"],
    &["photo", "image", "picture"],
    &["video", "clip", "movie"],
    &["commit", "revision", "changeset"],
    &["deploy", "ship", "publish", "release"],
    &["pipeline", "workflow", "ci"],
    &["build", "compile"],
    &["error", "exception", "crash", "failure"],
    &["edge", "relationship", "relation"],
    &["vector", "embedding"],
    &["upsert", "insert"],
    &["schema", "structure"],
    &["count", "total", "tally"],
    &["statistics", "stats", "metric", "analytics"],
    &["usage", "consumption", "quota"],
    &["history", "timeline"],
    &["recent", "latest", "newest"],
    &["timezone", "tz"],
    &["price", "cost", "pricing"],
    &["invoice", "bill", "billing"],
    &["payment", "charge", "pay"],
    &["order", "purchase"],
    &["product", "merchandise", "goods"],
    &["inventory", "stock"],
    &["convert", "transform"],
    &["export", "dump"],
    &["import", "load", "ingest"],
    &["javascript", "js"],
    &["dialog", "alert", "popup", "modal"],
    &["scroll", "swipe"],
    &["wait", "pause", "sleep", "delay"],
    &["viewport", "window"],
    &["emulate", "simulate", "mimic", "pretend"],
    &["keyboard", "keystroke", "key"],
    &["select", "choose", "pick"],
    &["network", "traffic"],
    &["accessibility", "a11y"],
    &["secret", "credential", "password"],
    &["role", "permission"],
    &["star", "favorite", "bookmark", "pin"],
    &["priority", "urgent", "importance"],
    &["due", "deadline"],
    &["epic", "initiative"],
    &["notification", "alert", "alarm"],
    &["webhook", "hook", "callback"],
    &["sync", "synchronize"],
    &[
        "config",
        "configuration",
        "settings",
        "preferences",
        "setup",
    ],
    &["environment", "env"],
    &["variable", "var"],
    &["restart", "reboot", "refresh"],
    &["audio", "sound", "voice", "speech"],
    &["website", "site", "webpage"],
    &["memo", "note"],
    &["dns", "domain"],
    &["certificate", "cert", "ssl", "tls"],
    &["backup", "snapshot"],
    &["rollback", "revert", "undo"],
    &["citation", "cite", "reference", "bibliography"],
    &["flag", "toggle"],
    &["incident", "outage", "downtime"],
    &["chart", "plot", "visualize", "visualization"],
    &["vulnerability", "cve"],
    &["dependency", "package"],
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

    #[test]
    fn a_word_in_two_groups_reaches_both_and_words_of_hosted_software_reach_theirs() {
        let reach = |from: &str, to: &str| related(&tokens(from)[0]).contains(&tokens(to)[0]);
        assert!(reach("alert", "popup") && reach("alert", "alarm"));
        assert!(reach("person", "member") && reach("person", "contact"));
        assert!(reach("rows", "record") && reach("meeting", "event"));
        assert!(reach("sprint", "cycle") && reach("emoji", "reaction"));
        // Left out: a word that names other things in tool catalogs.
        assert!(!reach("page", "website") && !reach("pod", "container"));
    }
}
