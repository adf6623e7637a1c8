//! What the identifiers in a request say it is about: `PROJ-812` is an issue, `#general` a
//! channel, `notes.txt` a file. A user names the thing and leaves out its kind ("give
//! PROJ-73 to Kenji"); the tools that act on it say the kind ("Assign a Jira issue").

/// The kinds of thing the identifiers in `query` name, each as the word a tool's
/// description uses for it, once, in the order they first come; words that name nothing
/// give nothing.
///
/// | identifier | example | kind |
/// |---|---|---|
/// | a URL | `https://example.com/a`, `www.example.com` | `url` |
/// | a host name | `docs.stripe.com` | `url` |
/// | a tracker's issue key | `PROJ-812`, `OPS-77` | `issue` |
/// | a number after `#` | `#42` | `issue` |
/// | a name after `#` | `#general` | `channel` |
/// | a commit hash (6 to 12 or 40 hex digits, letters and digits both) | `a1b2c3` | `commit` |
/// | a name after `@` | `@kenji` | `user` |
/// | an email address | `kenji@example.com` | `email` |
/// | a file name, or a path to one | `notes.txt`, `src/main.rs` | `file` |
/// | a path without an extension | `~/Downloads`, `/var/log` | `directory` |
pub(crate) fn hints(query: &str) -> Vec<&'static str> {
    query
        .split_whitespace()
        .filter_map(identifier_kind)
        .fold(Vec::new(), |mut kinds, kind| {
            if !kinds.contains(&kind) {
                kinds.push(kind);
            }
            kinds
        })
}

/// The kind of thing `word`, one word of a query, names if it is an identifier (see
/// [`hints`]); the punctuation around it is not part of it (`(PROJ-7),` is `PROJ-7`).
pub(crate) fn identifier_kind(word: &str) -> Option<&'static str> {
    kind(
        word.trim_matches(|c: char| matches!(c, ',' | ';' | ':' | '!' | '?' | '"' | '\''))
            .trim_matches(|c: char| matches!(c, '(' | ')' | '[' | ']' | '{' | '}' | '`'))
            .trim_end_matches('.'),
    )
}

/// Top-level domains that make `name.tld` a host, not a file.
const DOMAINS: &[&str] = &[
    "com", "org", "net", "io", "dev", "ai", "app", "co", "gov", "edu", "uk", "de",
];

/// The kind of thing `word` names, if it is an identifier.
fn kind(word: &str) -> Option<&'static str> {
    if ["http://", "https://", "www."]
        .iter()
        .any(|scheme| word.starts_with(scheme))
    {
        return Some("url");
    }
    if let Some(tag) = word.strip_prefix('#') {
        let mut chars = tag.chars();
        return match chars.next() {
            Some(c) if c.is_ascii_digit() && chars.all(|c| c.is_ascii_digit()) => Some("issue"),
            Some(c) if c.is_alphabetic() => Some("channel"),
            _ => None,
        };
    }
    if let Some(handle) = word.strip_prefix('@') {
        return handle
            .starts_with(|c: char| c.is_alphabetic())
            .then_some("user");
    }
    if let Some((local, domain)) = word.split_once('@') {
        return (!local.is_empty() && domain.contains('.')).then_some("email");
    }
    if is_issue_key(word) {
        return Some("issue");
    }
    if is_commit(word) {
        return Some("commit");
    }
    let rooted = ["/", "~/", "./", "../"]
        .iter()
        .any(|root| word.starts_with(root))
        && word.chars().any(char::is_alphabetic);
    let last = word.rsplit('/').next().unwrap_or(word);
    match last.rsplit_once('.') {
        Some((stem, extension)) if is_extension(stem, extension) => {
            if !rooted && DOMAINS.contains(&extension.to_ascii_lowercase().as_str()) {
                Some("url")
            } else {
                Some("file")
            }
        }
        _ => rooted.then_some("directory"),
    }
}

/// Whether `stem.extension` is a file name: an extension of one to four letters or digits,
/// starting with a letter, after two characters at least ("e.g" and "i.e" name nothing).
fn is_extension(stem: &str, extension: &str) -> bool {
    (1..=4).contains(&extension.len())
        && extension.starts_with(|c: char| c.is_ascii_alphabetic())
        && extension.chars().all(|c| c.is_ascii_alphanumeric())
        && stem.chars().count() >= 2
}

/// Names of standards written like an issue key: `UTF-8`, `SHA-256`, `ISO-8601`.
const STANDARDS: &[&str] = &[
    "COVID", "ECMA", "GPT", "HTTP", "ISO", "RFC", "SHA", "SSL", "TLS", "UCS", "UTF",
];

/// `PROJ-812`: a project key (an upper-case letter, then upper-case letters or digits, two
/// characters at least, not one of the [`STANDARDS`]), a hyphen, a number.
fn is_issue_key(word: &str) -> bool {
    let Some((project, number)) = word.split_once('-') else {
        return false;
    };
    project.len() >= 2
        && !STANDARDS.contains(&project)
        && project.starts_with(|c: char| c.is_ascii_uppercase())
        && project
            .chars()
            .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit())
        && !number.is_empty()
        && number.chars().all(|c| c.is_ascii_digit())
}

/// `a1b2c3`: an abbreviated (6 to 12 digits) or whole (40) commit hash, with letters and
/// digits both, so that neither `facade` nor `123456` is one.
fn is_commit(word: &str) -> bool {
    ((6..=12).contains(&word.len()) || word.len() == 40)
        && word.chars().all(|c| c.is_ascii_hexdigit())
        && word.chars().any(|c| c.is_ascii_digit())
        && word.chars().any(|c| c.is_ascii_alphabetic())
}

#[cfg(test)]
mod tests {
    use super::hints;

    #[test]
    fn each_kind_of_identifier_gives_its_word() {
        for (query, expected) in [
            ("who is following PROJ-812", vec!["issue"]),
            ("move OPS-77 and A1-2 to #42", vec!["issue"]),
            ("close #42", vec!["issue"]),
            ("tell #general the deploy is done", vec!["channel"]),
            ("what did commit a1b2c3 change", vec!["commit"]),
            ("show me what's in notes.txt.", vec!["file"]),
            ("open src/main.rs and /etc/hosts.conf", vec!["file"]),
            ("what is in ~/Downloads and /var/log/", vec!["directory"]),
            (
                "send @kenji the notes.txt from #ops",
                vec!["user", "file", "channel"],
            ),
            ("mail kenji@example.com", vec!["email"]),
            (
                "grab (https://example.com/pricing) as markdown",
                vec!["url"],
            ),
            ("find every page on docs.stripe.com", vec!["url"]),
        ] {
            assert_eq!(hints(query), expected, "{query}");
        }
    }

    #[test]
    fn ordinary_words_numbers_and_abbreviations_give_nothing() {
        for query in [
            "make a folder",
            "the facade of 123456, e.g. this",
            "version v1.2 of Node",
            "a ticket for Pro-7 or proj-7",
            "# heading and a lone / and #",
            "account 5b10ac8d82e05b22cc7d4ef5",
            "document.title",
            "save it as UTF-8 with a SHA-256 and an ISO-8601 date",
            "and/or 1/2 at @ 3 or @4 and ./ with me@localhost",
        ] {
            assert!(hints(query).is_empty(), "{query}: {:?}", hints(query));
        }
    }
}
