//! What a ranker reads of a tool, and how text becomes terms.

use std::borrow::Cow;
use std::ops::Range;
use std::sync::OnceLock;

use mcp_sansio::Tool;
use rust_stemmers::{Algorithm, Stemmer};
use serde_json::Value;
use unicode_normalization::char::{decompose_compatible, is_combining_mark};

use super::british::{american_stem, american_word, spelt_two_ways};
use super::synonyms::related;

/// The searchable text of one tool: where it comes from, and its words by field.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ToolText {
    /// The server that advertised it.
    pub server: String,
    /// The tool's name as the server gave it.
    pub tool: String,
    /// The name's terms (`get_forecast`, `getForecast`, `forecast.get` all give
    /// `get forecast`, and `getForecast` `getforecast` too, as any two words a camelCase
    /// hump joins give both), the title's (the annotations' where the tool has none), the
    /// server's. Each field's terms are its words' stems, then the forms ([`FORM_MARK`]) of
    /// the words their stems change: `list_commits` gives `list`, `commit` and `=commits`.
    pub name_terms: Vec<String>,
    /// The terms of the description, the parameter names and the parameters' descriptions.
    pub body_terms: Vec<String>,
    /// The terms of the description's first sentence ([`summary`]): what the tool does,
    /// before the usage notes. Also among `body_terms`; [`Bm25`](super::Bm25) counts them
    /// again.
    pub summary_terms: Vec<String>,
    /// The tool as one short piece of prose, for a ranker that reads sentences: its server,
    /// its name as words, its title and its description's first sentence ([`summary`]).
    /// Parameter names and the rest of the description are left out: on the labelled set
    /// they made all-MiniLM-L6-v2's recall@1 0.434 instead of 0.502.
    pub passage: String,
    /// Every word of the name, title, server name, description and parameters, lowercased
    /// and not stemmed (with each two a camelCase hump joins, as one), each once, sorted:
    /// what a query word no tool holds is checked against for a slip of the keys (`clikc`
    /// for `click`), and two neighbouring query words for the one word a tool writes.
    pub words: Vec<String>,
}

impl ToolText {
    /// The most characters of a tool's text that are read: its name, title, server name,
    /// description, and parameters' names and descriptions, in that order, until this many
    /// have been read. The longest tool of the labelled sets is 13,999 (Shopify's
    /// `learn_shopify_api`), so no real tool is cut; a server that describes a tool in
    /// megabytes costs no more than this in terms (at most two a character, in Chinese)
    /// and in the index built from them.
    pub const MAX_CHARS: usize = 32 * 1024;

    /// The text of `tool`, advertised by `server`, up to [`ToolText::MAX_CHARS`].
    pub fn new(server: &str, tool: &Tool) -> Self {
        // Each part's words, stemmed into `terms` and kept as written in `spelt`; of a part,
        // only what the budget of characters leaves is read.
        let mut spelt = Vec::new();
        let mut budget = Self::MAX_CHARS;
        let mut read = |text: &str, terms: &mut Vec<String>| {
            let read = match text.char_indices().nth(budget) {
                Some((at, _)) => text.get(..at).unwrap_or_default(),
                None => text,
            };
            budget = budget.saturating_sub(read.chars().count());
            let words = tool_words(read);
            terms.extend(with_forms(&words));
            spelt.extend(words);
        };
        let mut name_terms = Vec::new();
        read(&tool.name, &mut name_terms);
        let title = title(tool);
        if let Some(title) = &title {
            read(title, &mut name_terms);
        }
        read(server, &mut name_terms);
        let mut body_terms = Vec::new();
        if let Some(description) = &tool.description {
            read(description, &mut body_terms);
        }
        let schema: Value = serde_json::from_str(tool.input_schema.as_str()).unwrap_or(Value::Null);
        if let Some(properties) = schema.get("properties").and_then(Value::as_object) {
            for (name, property) in properties {
                read(name, &mut body_terms);
                if let Some(description) = property.get("description").and_then(Value::as_str) {
                    read(description, &mut body_terms);
                }
            }
        }
        spelt.sort();
        spelt.dedup();
        let mut passage = format!("{}: {}", words(server), words(&tool.name));
        let summary = tool.description.as_deref().map(summary);
        let summary_terms = summary
            .as_deref()
            .map(|summary| with_forms(&tool_words(summary)))
            .unwrap_or_default();
        // A title is a few words; one that is not is cut as a summary is.
        let title: Option<String> = title
            .as_deref()
            .map(|title| title.chars().take(SUMMARY_CHARS).collect());
        for part in [title.as_deref(), summary.as_deref()]
            .into_iter()
            .flatten()
            .map(|part| part.trim().trim_end_matches('.'))
            .filter(|part| !part.is_empty())
        {
            passage.push_str(". ");
            passage.push_str(part);
        }
        ToolText {
            server: server.to_owned(),
            tool: tool.name.clone(),
            name_terms,
            body_terms,
            summary_terms,
            passage,
            words: spelt,
        }
    }
}

/// A tool's title as the specification has it shown: its `title`, or else the `title` of its
/// `annotations` (where servers written before the top-level field put it, and where many
/// still do: 199 tools of the labelled sets have a title only there).
fn title(tool: &Tool) -> Option<Cow<'_, str>> {
    if let Some(title) = &tool.title {
        return Some(Cow::Borrowed(title));
    }
    let Value::Object(mut annotations) =
        serde_json::from_str(tool.annotations.as_ref()?.as_str()).ok()?
    else {
        return None;
    };
    match annotations.remove("title")? {
        Value::String(title) => Some(Cow::Owned(title)),
        _ => None,
    }
}

/// The first sentence of a description, on one line: what a tool does, without the usage
/// notes, examples and error tables that often follow.
///
/// It ends at the first `.`, `!` or `?` followed by a space or the end, at the first `。`,
/// `！` or `？` (which no space follows in Chinese or Japanese), or at a blank line,
/// and holds at most [`SUMMARY_CHARS`] characters (cut at a word).
pub fn summary(description: &str) -> String {
    let mut out = String::new();
    let mut chars = description.trim().chars().peekable();
    // How many characters `out` holds: one past the longest summary is enough to know it
    // must be cut, so a description of megabytes is not read to its end.
    let mut kept = 0_usize;
    while let Some(c) = chars.next() {
        if kept > SUMMARY_CHARS {
            break;
        }
        if c == '\n' && chars.peek() == Some(&'\n') {
            break;
        }
        if c.is_whitespace() {
            if !out.ends_with(' ') && !out.is_empty() {
                out.push(' ');
                kept += 1;
            }
            continue;
        }
        out.push(c);
        kept += 1;
        if matches!(c, '.' | '!' | '?') && chars.peek().is_none_or(|n| n.is_whitespace())
            || matches!(c, '。' | '！' | '？')
        {
            break;
        }
    }
    if out.chars().count() > SUMMARY_CHARS {
        let cut: String = out.chars().take(SUMMARY_CHARS).collect();
        out = match cut.rfind(' ') {
            Some(at) => format!("{}…", cut.get(..at).unwrap_or(&cut)),
            None => cut,
        };
    }
    out.trim_end().to_owned()
}

/// The longest [`summary`], in characters.
pub const SUMMARY_CHARS: usize = 160;

/// A name as the words it is made of (`getFileInfo` and `get_file_info` both read
/// `get file info`), nothing dropped.
fn words(name: &str) -> String {
    split(name).join(" ")
}

/// The verbs of a tool's name that say it changes something: a question, which asks to be
/// told, discounts such a tool (see [`Bm25`](super::Bm25)).
pub(crate) const CHANGING_VERBS: [&str; 28] = [
    "create", "add", "delete", "remove", "update", "edit", "set", "move", "upload", "post", "send",
    "write", "insert", "upsert", "drop", "modify", "rename", "assign", "merge", "archive", "reply",
    "fill", "clear", "reset", "kill", "install", "apply", "patch",
];

/// The verbs of a tool's name that say it reads: an order to change something discounts
/// such a tool (see [`Bm25`](super::Bm25)).
pub(crate) const READING_VERBS: [&str; 13] = [
    "get", "list", "search", "read", "show", "find", "fetch", "query", "describe", "view",
    "retrieve", "lookup", "count",
];

/// What a tool's name says it does, by the first of its words that is one of
/// [`CHANGING_VERBS`] or [`READING_VERBS`]: `remove_watcher` changes; `get_merge_request`
/// reads, its `merge` a noun's; `mr_discussions` says neither.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Verb {
    /// It changes something, by the verb of this stem.
    Changes(&'static str),
    /// It reads, by the verb of this stem.
    Reads(&'static str),
}

/// The stems of [`CHANGING_VERBS`] and of [`READING_VERBS`].
fn verb_stems() -> &'static (Vec<String>, Vec<String>) {
    static STEMS: OnceLock<(Vec<String>, Vec<String>)> = OnceLock::new();
    STEMS.get_or_init(|| {
        let stems = |verbs: &[&str]| verbs.iter().flat_map(|verb| tokens(verb)).collect();
        (stems(&CHANGING_VERBS), stems(&READING_VERBS))
    })
}

impl Verb {
    /// The verb a tool's name (its terms, in order) says it does, if it says one.
    pub(crate) fn of_name(name_terms: &[String]) -> Option<Self> {
        let (changing, reading) = verb_stems();
        let find = |verbs: &'static [String], term: &str| {
            verbs.iter().find(|verb| *verb == term).map(String::as_str)
        };
        name_terms.iter().find_map(|term| {
            find(changing, term)
                .map(Self::Changes)
                .or_else(|| find(reading, term).map(Self::Reads))
        })
    }
}

/// What a request asks for, by how it opens: to be told something or to have something
/// changed. A tool that does the other is discounted (see [`Bm25`](super::Bm25)).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Mood {
    /// A question: "who is following PROJ-812", "is the van on its way".
    Asks,
    /// An order to change something: "remove the old cronjob", "post a weekly update".
    Orders,
    /// Neither, or not said: "list my open tickets", "give me the build log".
    Other,
}

/// The words that open a question, one that asks to be told something rather than to have
/// something done: "who is following PROJ-812", "is the van on its way", "did the build
/// pass". "how" opens one unless it asks how to act (see [`Mood::of`]).
const QUESTION_WORDS: [&str; 14] = [
    "who", "what", "which", "when", "where", "whose", "why", "is", "are", "was", "were", "does",
    "did", "has",
];

impl Mood {
    /// The mood of `request` (a query as [`request`] leaves it).
    ///
    /// A question opens with one of [`QUESTION_WORDS`]; or with "how", unless "how to …" or
    /// "how do I …" ("how do", "can", "should", "would" or "could", then "I", "we" or "you"),
    /// which ask how to act; or with "do" or "have" and a person ("do we have …", "have you
    /// seen …"). A question mark alone does not make one: "Can you convert my spreadsheet to
    /// markdown?" asks to act.
    ///
    /// An order opens with one of [`CHANGING_VERBS`] or a word related to one as the
    /// synonyms relate them ("make a folder", "change the priority", "forget everything about
    /// Bob"), unless "me" or "us" follows: "give me the build log" asks to be handed
    /// something.
    pub(crate) fn of(request: &str) -> Self {
        let words = split_marked(request);
        let word = |at: usize| words.get(at).map(|(word, _)| word.as_str());
        let person = |at: usize| word(at).is_some_and(|w| ["i", "we", "you", "they"].contains(&w));
        let asks = match word(0) {
            Some("how") => {
                let acting = ["do", "can", "should", "would", "could"];
                !(word(1) == Some("to")
                    || word(1).is_some_and(|w| acting.contains(&w)) && person(2))
            }
            Some("do" | "have") => person(1),
            Some(first) => QUESTION_WORDS.contains(&first),
            None => false,
        };
        let changing = |stem: &String| {
            let (changing, _) = verb_stems();
            changing.contains(stem) || related(stem).iter().any(|other| changing.contains(other))
        };
        if asks {
            Self::Asks
        } else if word(0).map(tokens).unwrap_or_default().iter().any(changing)
            && !word(1).is_some_and(|w| ["me", "us"].contains(&w))
        {
            Self::Orders
        } else {
            Self::Other
        }
    }
}

/// Words too common in requests and descriptions to say which tool is meant.
const STOPWORDS: [&str; 40] = [
    "a", "an", "and", "are", "as", "at", "be", "by", "can", "do", "for", "from", "how", "i", "in",
    "is", "it", "me", "my", "of", "on", "or", "please", "that", "the", "this", "to", "use", "used",
    "using", "what", "when", "which", "will", "with", "you", "your", "we", "our", "should",
];

/// The terms of `text`: its words, lowercased (split at anything that is not a letter or a
/// digit and at camelCase humps: `getHTTPResponse` gives `get http response`), stopwords
/// dropped, and each reduced to its stem by Snowball's English stemmer (`logged`, `logs`
/// and `log` meet; so do `attached` and `attachments`), British spellings to the stems of
/// American ones (`organised` and `organized` meet).
pub fn tokens(text: &str) -> Vec<String> {
    stems(&unstemmed(text))
}

/// The words of `text` that [`tokens`] stems, before stemming: lowercased, stopwords dropped.
pub(crate) fn unstemmed(text: &str) -> Vec<String> {
    without_stopwords(grams(split_marked(text)).into_iter().map(|(word, _)| word))
}

/// A query read once: its words as [`unstemmed`] gives them, and each two neighbouring words
/// written as one (`roll back` gives `rollback`, `to-do` gives `todo`, `youtu.be` gives
/// `youtube`, `JavaScript` gives `javascript`), a compound a catalog may hold as one word.
/// Two words a space apart are joined only where neither is a stopword ("do I" is no `doi`);
/// two joined by one hyphen or dot, or by a camelCase hump, whatever they are; two apart by
/// anything else (a comma) never.
pub(crate) fn query_words(text: &str) -> (Vec<String>, Vec<String>) {
    let marked = grams(split_marked(text));
    let compounds = marked
        .windows(2)
        .filter_map(|pair| match pair {
            [(first, _), (second, gap)]
                if matches!(gap, Gap::Mark | Gap::Hump)
                    || (*gap == Gap::Space && !is_stopword(first) && !is_stopword(second)) =>
            {
                Some(format!("{first}{second}"))
            }
            _ => None,
        })
        .collect();
    let words = without_stopwords(marked.into_iter().map(|(word, _)| word));
    (words, compounds)
}

/// The words a request names the tools themselves by.
const TOOL_WORDS: [&str; 2] = ["tool", "tools"];

/// Words that, beside stopwords, ask for a tool before a request names one: "is there any",
/// "find me the right", "I need a", "do you have an MCP".
const FRAME_ASKS: [&str; 33] = [
    "find",
    "search",
    "look",
    "looking",
    "need",
    "needs",
    "want",
    "wants",
    "get",
    "give",
    "show",
    "recommend",
    "suggest",
    "there",
    "any",
    "some",
    "best",
    "right",
    "good",
    "mcp",
    "would",
    "could",
    "like",
    "us",
    "have",
    "has",
    "got",
    "one",
    "available",
    "appropriate",
    "correct",
    "useful",
    "just",
];

/// Words that tie a tool word to what the tool must do: "that could", "I can use to",
/// "capable of", "designed for". Only these: "find a tool for what time it is in Tokyo"
/// keeps its "what".
const FRAME_TIES: [&str; 32] = [
    "that", "which", "who", "to", "for", "can", "could", "will", "would", "should", "might", "may",
    "i", "we", "you", "is", "are", "be", "do", "does", "able", "capable", "of", "so", "in",
    "order", "designed", "meant", "built", "made", "use", "used",
];

/// Verbs that tie a tool word to the request only before a person: "that lets me", "which
/// helps us"; "a tool that can allow the server to write" asks for what it says.
const FRAME_GRANTS: [&str; 8] = [
    "let", "lets", "allow", "allows", "help", "helps", "enable", "enables",
];

/// What follows a [`FRAME_GRANTS`] verb that ties a request: a person, or "with" and "to"
/// ("helps with", "helps to").
const FRAME_PERSONS: [&str; 6] = ["me", "us", "you", "one", "with", "to"];

/// Phrases that open a request by asking for help rather than by saying what is wanted: "I
/// need to", "I'd like to", "could you please", "can you help me", "is it possible to". A
/// query may open with several ("hey, could you please help me", "I need you to"), each
/// followed by any "to", with [`FILLERS`] anywhere among them ("I just need to", "could you
/// maybe"). Only these: "like the latest post" and "help" alone ask for what they say. A
/// phrase's words stand apart by spaces or an apostrophe ("I'd" is `i d`).
const OPENERS: [&[&str]; 44] = [
    &["please"],
    &["you"],
    &["kindly"],
    &["could", "you"],
    &["can", "you"],
    &["would", "you"],
    &["will", "you"],
    &["you", "could"],
    &["help", "me"],
    &["help", "us"],
    &["assist", "me"],
    &["assist", "us"],
    &["i", "need"],
    &["we", "need"],
    &["i", "need", "help"],
    &["we", "need", "help"],
    &["i", "want"],
    &["we", "want"],
    &["i", "wanna"],
    &["i", "d", "like"],
    &["i", "would", "like"],
    &["we", "d", "like"],
    &["we", "would", "like"],
    &["i", "d", "love"],
    &["i", "would", "love"],
    &["i", "m", "trying"],
    &["i", "am", "trying"],
    &["we", "re", "trying"],
    &["we", "are", "trying"],
    &["i", "m", "looking", "for"],
    &["i", "am", "looking", "for"],
    &["we", "re", "looking", "for"],
    &["i", "was", "wondering", "if"],
    &["i", "m", "wondering", "if"],
    &["we", "were", "wondering", "if"],
    &["i", "have", "to"],
    &["we", "have", "to"],
    &["is", "it", "possible"],
    &["would", "it", "be", "possible"],
    &["is", "there", "a", "way"],
    &["is", "there", "any", "way"],
    &["let", "s"],
    &["go", "ahead", "and"],
    &["for", "me"],
];

/// Words that may stand anywhere among [`OPENERS`]' words: "I just need to", "could you
/// maybe".
const FILLERS: [&str; 7] = [
    "just", "really", "also", "only", "actually", "maybe", "perhaps",
];

/// Words that open a request before a punctuation mark, with at most one word after them:
/// "hey, …", "hi there! …", "ok. …", but not "hello world program".
const GREETINGS: [&str; 5] = ["hey", "hi", "hello", "ok", "okay"];

/// How many of the first words of `spans` (from [`split_spans`] of `text`) open a request
/// without saying what it wants: greetings and [`OPENERS`].
fn opening(text: &str, spans: &[(String, Gap, Range<usize>)]) -> usize {
    let word = |at: usize| spans.get(at).map(|(word, _, _)| word.as_str());
    // What stands between the word `at` and the next.
    let between = |at: usize| match (spans.get(at), spans.get(at + 1)) {
        (Some((_, _, this)), Some((_, _, next))) => text.get(this.end..next.start),
        _ => None,
    };
    let joined = |at: usize| {
        between(at).is_some_and(|gap| gap.trim().is_empty() || matches!(gap, "'" | "\u{2019}"))
    };
    let stopped = |at: usize| between(at).is_some_and(|gap| !gap.trim().is_empty());
    // Where the phrase of `words` starting at `at` ends, fillers skipped, if it stands there.
    let phrase = |mut at: usize, words: &[&str]| {
        for (i, w) in words.iter().enumerate() {
            while word(at).is_some_and(|w| FILLERS.contains(&w)) && joined(at) {
                at += 1;
            }
            if word(at) != Some(w) || (i + 1 < words.len() && !joined(at)) {
                return None;
            }
            at += 1;
        }
        Some(at)
    };
    let mut at = 0;
    loop {
        if word(at).is_some_and(|w| GREETINGS.contains(&w)) {
            if stopped(at) {
                at += 1;
                continue;
            }
            if joined(at) && stopped(at + 1) {
                at += 2;
                continue;
            }
        }
        let Some(end) = OPENERS.iter().filter_map(|words| phrase(at, words)).max() else {
            return at;
        };
        at = end;
        while word(at).is_some_and(|w| w == "to" || FILLERS.contains(&w)) && joined(at - 1) {
            at += 1;
        }
    }
}

/// Phrases that close a request politely: "… please", "… for me", "… thanks".
const CLOSINGS: [&[&str]; 8] = [
    &["please"],
    &["pls"],
    &["thanks"],
    &["thank", "you"],
    &["for", "me"],
    &["for", "us"],
    &["if", "you", "can"],
    &["if", "possible"],
];

/// Where the request in `spans` ends, before the [`CLOSINGS`] that end it ("send it for me,
/// please"), none of them taken from before the word `start`.
fn closing(spans: &[(String, Gap, Range<usize>)], start: usize) -> usize {
    let mut end = spans.len();
    while let Some(length) = CLOSINGS
        .iter()
        .filter(|words| {
            end.checked_sub(words.len()).is_some_and(|from| {
                from > start
                    && spans
                        .get(from..end)
                        .is_some_and(|tail| tail.iter().map(|(w, _, _)| w).eq(words.iter()))
            })
        })
        .map(|words| words.len())
        .max()
    {
        end -= length;
    }
    end
}

/// Which frames [`request`] drops.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Frames {
    /// Around the request and within it, for a ranker that counts words: "slack tools to
    /// post the notes" is read as "slack post the notes".
    All,
    /// Only around the request, for a ranker that reads sentences: "slack post the notes" is
    /// no sentence. With the frame within dropped from the embedded query too, the hybrid on
    /// all-mpnet-base-v2 found 11 fewer of the five English sets' queries inside "*server*
    /// tools to …".
    #[cfg_attr(not(feature = "embed"), allow(dead_code))]
    Around,
}

/// `text` without the frame a request to a tool search puts around what it wants: the
/// model searching for tools writes "find a tool that can resize images", "is there a tool
/// to …", "tools for: …", "… tool", and "find", "search" and "tool" then match tools that
/// find, search, or are named `…_tool`, before any that resizes images. Every ranker reads
/// a query through this.
///
/// A leading frame is a tool word (`tool`, `tools`) after nothing but words that ask for one
/// ([`FRAME_ASKS`] and stopwords), and before words that tie it to the request
/// ([`FRAME_TIES`], or a [`FRAME_GRANTS`] verb before a person), a punctuation mark, or
/// nothing: "what tools did the assistant call" asks about tools, and keeps them. A trailing
/// frame is a tool word last but for stopwords ("weather forecast tool"). After a name, a
/// tool word and what ties it are a frame within the request: "slack tools for posting" is
/// read as "slack posting", but "list the tools that are disabled" whole. A tool word joined
/// to another by a hyphen, a dot or a camelCase hump is part of a name (`infra-tools`,
/// `devTools`), never a frame. Nothing is dropped where nothing but the frame's words would
/// remain: "which tools do I have" is about tools.
///
/// The courtesies a person wraps a request in go too, before any frame: the [`OPENERS`]
/// ("I need to", "I'd like to", "could you please", "can you help me", "hey, …") and the
/// [`CLOSINGS`] ("… for me, please", "… thanks"). "need", "like" and "help" match tools
/// that describe what a user needs or likes, or that show help; "I'd like to …" took BM25's
/// recall@5 on the held-out set from 0.682 to 0.636.
///
/// A frame within the request is dropped only for [`Frames::All`].
pub(crate) fn request(text: &str, frames: Frames) -> Cow<'_, str> {
    let spans = split_spans(text);
    let word = |at: usize| spans.get(at).map(|(word, _, _)| word.as_str());
    // A tool word on its own, not part of `infra-tools`, `devTools` or `tool-chain`.
    let alone = |at: usize| {
        let gap = |at: usize| spans.get(at).map(|(_, gap, _)| *gap);
        !matches!(gap(at), Some(Gap::Mark | Gap::Hump))
            && !matches!(gap(at + 1), Some(Gap::Mark | Gap::Hump))
    };
    let tool = |at: usize| word(at).is_some_and(|w| TOOL_WORDS.contains(&w)) && alone(at);
    // How many words at `at` tie a tool word to the request: none, one ("that"), or a verb
    // and its person ("lets me").
    let tie = |at: usize| match (word(at), word(at + 1)) {
        (Some(w), _) if FRAME_TIES.contains(&w) => 1,
        (Some(verb), Some(person))
            if FRAME_GRANTS.contains(&verb) && FRAME_PERSONS.contains(&person) =>
        {
            2
        }
        _ => 0,
    };
    // The first word of the request, the one after its last, and the words of a frame
    // within it ("slack tools for …").
    let opened = opening(text, &spans);
    let mut start = opened;
    let mut within = 0..0;
    if let Some(at) = (opened..spans.len()).find(|&at| tool(at)) {
        let asked = (opened..at)
            .all(|before| word(before).is_some_and(|w| is_stopword(w) || FRAME_ASKS.contains(&w)));
        let tied = spans
            .get(at + 1)
            .is_none_or(|(_, gap, _)| *gap == Gap::Apart || tie(at + 1) > 0);
        let mut after = at + 1;
        // After a colon ("Tool: …") the request begins: nothing there ties.
        let colon = match (spans.get(at), spans.get(at + 1)) {
            (Some((_, _, tool)), Some((_, _, next))) => text
                .get(tool.end..next.start)
                .is_some_and(|gap| gap.contains(':')),
            _ => false,
        };
        loop {
            // "who" and "which" tie only next to the tool word ("a tool which can …"); after
            // another tie they open the request, a question ("a tool that can who is …").
            if colon || after > at + 1 && matches!(word(after), Some("who" | "which")) {
                break;
            }
            match tie(after) {
                0 => break,
                n => after += n,
            }
        }
        let named = at
            .checked_sub(1)
            .and_then(word)
            .is_some_and(|w| !is_stopword(w) && !FRAME_ASKS.contains(&w));
        if asked && tied {
            start = after;
        } else if named && tied && frames == Frames::All {
            within = at..after;
        }
    }
    let closed = closing(&spans, start);
    let end = match (0..closed).rfind(|&at| word(at).is_some_and(|w| !is_stopword(w))) {
        Some(last) if last >= start && tool(last) && !within.contains(&last) => last,
        _ => closed,
    };
    let framing = |w: &str| {
        is_stopword(w)
            || FILLERS.contains(&w)
            || OPENERS
                .iter()
                .chain(&CLOSINGS)
                .any(|phrase| phrase.contains(&w))
            || FRAME_ASKS.contains(&w)
            || FRAME_TIES.contains(&w)
            || FRAME_GRANTS.contains(&w)
    };
    let kept = (start..end).filter(|at| !within.contains(at));
    if (start == 0 && end == spans.len() && within.is_empty())
        || kept.clone().all(|at| word(at).is_none_or(framing))
    {
        return Cow::Borrowed(text);
    }
    // A part of `text` from the end of the word `from` (or its start) to the start of the
    // word `to` (or its end): what stands between words is kept, the `#` of `#general` as the
    // `(` of `foo()`, but for a colon, comma or dash that ends a frame or stands before one
    // ("tools for: …", "… for me, please").
    let part = |from: Option<usize>, to: usize| {
        let from = from
            .and_then(|at| spans.get(at))
            .map_or(0, |(_, _, span)| span.end);
        let to = spans.get(to).map_or(text.len(), |(_, _, span)| span.start);
        text.get(from..to).map_or("", |part| {
            let separator = |c: char| c.is_whitespace() || matches!(c, ':' | ',' | ';' | '–' | '—');
            part.trim_start_matches(separator)
                .trim_end_matches(separator)
        })
    };
    let before = start.checked_sub(1);
    if within.is_empty() {
        return Cow::Borrowed(part(before, end));
    }
    let tail = if within.end < end {
        part(within.end.checked_sub(1), end)
    } else {
        ""
    };
    Cow::Owned(
        format!("{} {tail}", part(before, within.start))
            .trim_end()
            .to_owned(),
    )
}

/// The words of a tool's `text` that are indexed, before stemming: [`unstemmed`]'s, and
/// each two a camelCase hump joins written as one as well (`JavaScript` gives `java`,
/// `script` and `javascript`; `getYouTubeVideo` also `getyou`, `youtube` and `tubevideo`).
/// A description that writes `GitHub` or `PostgreSQL` is then found by a query that writes
/// `github` or `postgresql`, as one that writes them with their capitals finds it by their
/// parts.
fn tool_words(text: &str) -> Vec<String> {
    let marked = split_marked(text);
    let joined: Vec<String> = marked
        .windows(2)
        .filter_map(|pair| match pair {
            [(first, _), (second, Gap::Hump)] => Some(format!("{first}{second}")),
            _ => None,
        })
        .collect();
    let mut words = without_stopwords(grams(marked).into_iter().map(|(word, _)| word));
    words.extend(joined);
    words
}

/// Whether `word` (lowercase) is one of [`STOPWORDS`].
fn is_stopword(word: &str) -> bool {
    STOPWORDS.contains(&word)
}

/// `words` without the stopwords.
fn without_stopwords(words: impl IntoIterator<Item = String>) -> Vec<String> {
    words
        .into_iter()
        .filter(|word| !is_stopword(word))
        .collect()
}

/// Each of `words` reduced to its stem, as [`tokens`] does; a British spelling to the stem
/// of the American one (`summarise` and `summarize`, `colour` and `color` meet).
pub(crate) fn stems<'a>(words: impl IntoIterator<Item = &'a String>) -> Vec<String> {
    let stemmer = Stemmer::create(Algorithm::English);
    words
        .into_iter()
        .map(|word| stem_of(&stemmer, word).0)
        .collect()
}

/// What marks a term that is a word as written, not a stem: `=commits` is the word "commits",
/// beside its stem `commit`. No word holds it: words are split at anything that is not a
/// letter or a digit.
pub const FORM_MARK: char = '=';

/// Each of `words`' stem ([`stems`]) and, where the stem is not the word, the word as written
/// (`-ise` spelt `-ize`), marked with [`FORM_MARK`]: `commits` gives `commit` and
/// `=commits`, `organised` `organ` and `=organized`, `commit` only `commit`. A plural or a
/// tense says something the stem drops: "which collections are there" asks for
/// `list_collections` more than for `drop_collection`. A word British English spells
/// otherwise in its stem (`colours`, `centres`) has no form, on either side of the ocean:
/// a catalog in either spelling ranks the same.
pub(crate) fn stems_and_forms<'a>(
    words: impl IntoIterator<Item = &'a String>,
) -> Vec<(String, Option<String>)> {
    let stemmer = Stemmer::create(Algorithm::English);
    words
        .into_iter()
        .map(|word| {
            let (stem, changed) = stem_of(&stemmer, word);
            let form = changed
                .filter(|_| !spelt_two_ways(&stem))
                .map(|written| format!("{FORM_MARK}{written}"));
            (stem, form)
        })
        .collect()
}

/// `word`'s stem (a British spelling's the American one's), and the word as written (`-ise`
/// spelt `-ize`) where the stemmer changed it.
fn stem_of<'a>(stemmer: &Stemmer, word: &'a str) -> (String, Option<Cow<'a, str>>) {
    let written = american_word(word).map_or(Cow::Borrowed(word), Cow::Owned);
    let stemmed = stemmer.stem(&written);
    let changed = stemmed != written;
    let stem = american_stem(&stemmed).map_or_else(|| stemmed.into_owned(), str::to_owned);
    (stem, changed.then_some(written))
}

/// The terms of a field of a tool made of `words`: their stems, then their forms (see
/// [`stems_and_forms`]).
fn with_forms(words: &[String]) -> Vec<String> {
    let (stems, forms): (Vec<String>, Vec<Option<String>>) =
        stems_and_forms(words).into_iter().unzip();
    stems
        .into_iter()
        .chain(forms.into_iter().flatten())
        .collect()
}

/// The words of `text`, lowercased: split at anything that is not a letter or a digit and at
/// camelCase humps (`getHTTPResponse` gives `get http response`).
fn split(text: &str) -> Vec<String> {
    split_marked(text)
        .into_iter()
        .map(|(word, _)| word)
        .collect()
}

/// What stands between a word and the one before it.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Gap {
    /// Only whitespace.
    Space,
    /// One hyphen or dot and nothing else (`to-do`, `next.js`).
    Mark,
    /// A camelCase hump (`Java|Script`).
    Hump,
    /// Anything else, or no word before.
    Apart,
}

/// [`split`]'s words, each with what stands between it and the word before.
fn split_marked(text: &str) -> Vec<(String, Gap)> {
    split_spans(text)
        .into_iter()
        .map(|(word, gap, _)| (word, gap))
        .collect()
}

/// [`split_marked`]'s words, each with the bytes of `text` it was read from.
fn split_spans(text: &str) -> Vec<(String, Gap, Range<usize>)> {
    let mut out = Vec::new();
    // Where the word being read starts in `text`, and where it ends so far.
    let mut span = 0..0;
    let mut word = String::new();
    let mut gap = Gap::Apart;
    // The characters since the last word: how many, the last one, whether all were spaces.
    let mut between = (0_usize, ' ', true);
    let mut previous: Option<char> = None;
    let chars: Vec<(usize, char)> = text.char_indices().collect();
    for (at, &(byte, c)) in chars.iter().enumerate() {
        // A mark belongs to the letter before it: dropped from a Latin one (`e` and U+0301
        // read as `e`), kept with any other (a Devanagari vowel sign), never a word alone.
        if is_combining_mark(c) {
            if word
                .chars()
                .next_back()
                .is_some_and(|last| !last.is_ascii())
            {
                word.push(c);
                span.end = byte + c.len_utf8();
            }
            continue;
        }
        if !c.is_alphanumeric() {
            if !word.is_empty() {
                out.push((std::mem::take(&mut word), gap, span.clone()));
                between = (0, ' ', true);
            }
            between = (between.0 + 1, c, between.2 && c.is_whitespace());
            previous = None;
            continue;
        }
        let next_lower = chars.get(at + 1).is_some_and(|(_, n)| n.is_lowercase());
        let hump = match previous {
            // fooBar: a lower letter then an upper one.
            Some(p) if p.is_lowercase() && c.is_uppercase() => true,
            // HTTPResponse: the last capital of a run starts the next word.
            Some(p) if p.is_uppercase() && c.is_uppercase() && next_lower => true,
            _ => false,
        };
        // Where an unspaced script meets another, a word ends (`获取GitHub仓库`), as at a
        // hump.
        let script = word
            .chars()
            .next_back()
            .is_some_and(|last| unspaced(last) != unspaced(c));
        let mut humped = false;
        if (hump || script) && !word.is_empty() {
            out.push((std::mem::take(&mut word), gap, span.clone()));
            between = (0, ' ', false);
            humped = hump && !script;
        }
        if word.is_empty() {
            span.start = byte;
            gap = match between {
                _ if out.is_empty() => Gap::Apart,
                _ if humped => Gap::Hump,
                (1, '-' | '.', _) => Gap::Mark,
                (1.., _, true) => Gap::Space,
                _ => Gap::Apart,
            };
        }
        for lower in c.to_lowercase() {
            fold(lower, &mut word);
        }
        span.end = byte + c.len_utf8();
        previous = Some(c);
    }
    if !word.is_empty() {
        out.push((word, gap, span));
    }
    out
}

/// Pushes `c` (lowercase) onto `word` as a search term spells it: a Latin letter without its
/// accents (`é` as `e`), a fullwidth letter or digit or a ligature as its ASCII letters (`ａ`
/// as `a`, `ﬁ` as `fi`), the letters that have no accent to drop but an ASCII spelling by
/// that spelling (`ß` as `ss`, `ø` as `o`), anything else as it is: a Greek, Cyrillic, kana
/// or Hangul letter keeps its marks (`が` is not `か`).
fn fold(c: char, word: &mut String) {
    if c.is_ascii() {
        word.push(c);
        return;
    }
    if let Some(spelling) = ASCII_SPELLINGS
        .iter()
        .find_map(|&(letter, spelling)| (letter == c).then_some(spelling))
    {
        word.push_str(spelling);
        return;
    }
    // Its compatibility decomposition: ASCII letters and digits, then marks only.
    let mut base = String::new();
    let mut latin = true;
    decompose_compatible(c, |part| {
        if part.is_ascii_alphanumeric() && latin {
            base.push(part.to_ascii_lowercase());
        } else if base.is_empty() || !is_combining_mark(part) {
            latin = false;
        }
    });
    if latin && !base.is_empty() {
        word.push_str(&base);
    } else {
        word.push(c);
    }
}

/// Lowercase letters of Latin alphabets that Unicode does not decompose into an ASCII letter
/// and marks, with the ASCII spelling a search engine gives them.
const ASCII_SPELLINGS: [(char, &str); 9] = [
    ('ß', "ss"),
    ('æ', "ae"),
    ('œ', "oe"),
    ('ø', "o"),
    ('ł', "l"),
    ('đ', "d"),
    ('ð', "d"),
    ('þ', "th"),
    ('ı', "i"),
];

/// A script written without spaces between its words, by what one of its characters is.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Unspaced {
    /// Han, Hiragana, Katakana and Hangul (whose words carry their particles: `파일을` is
    /// `파일` and `을`): a character is a syllable or a whole word.
    Syllables,
    /// Thai, Lao, Khmer and Myanmar: a character is a letter, or a mark on one.
    Letters,
}

/// Which [`Unspaced`] script `c` is of, if any.
pub(crate) fn unspaced(c: char) -> Option<Unspaced> {
    match u32::from(c) {
        0x0E00..=0x0EFF // Thai, Lao
        | 0x1000..=0x109F // Myanmar
        | 0x1780..=0x17FF // Khmer
        => Some(Unspaced::Letters),
        0x1100..=0x11FF // Hangul Jamo
        | 0x2E80..=0x2FDF // CJK and Kangxi radicals
        | 0x3005..=0x3007 // 々 〆 〇
        | 0x3040..=0x30FF // Hiragana, Katakana
        | 0x3130..=0x318F // Hangul compatibility Jamo
        | 0x31F0..=0x31FF // Katakana phonetic extensions
        | 0x3400..=0x4DBF // CJK extension A
        | 0x4E00..=0x9FFF // CJK unified ideographs
        | 0xA960..=0xA97F // Hangul Jamo extended A
        | 0xAC00..=0xD7FF // Hangul syllables, Jamo extended B
        | 0xF900..=0xFAFF // CJK compatibility ideographs
        | 0xFF66..=0xFF9F // halfwidth Katakana
        | 0x20000..=0x3134F // CJK extensions B to G
        => Some(Unspaced::Syllables),
        _ => None,
    }
}

/// `marked` with each word of an [`unspaced`] script read as its overlapping pairs of
/// characters and its characters one by one (`天气预报` as `天气 气预 预报 天 气 预 报`), as
/// search engines for these languages index text whose words nothing sets apart: a query's
/// `预报` then finds the description's `天气预报`, and its `骑自行车` the description's
/// `骑行`, the pairs ranking the tools that share a whole word first. Such a word, and the
/// one after it, are never joined to a neighbour as a compound.
fn grams(marked: Vec<(String, Gap)>) -> Vec<(String, Gap)> {
    let mut out = Vec::with_capacity(marked.len());
    let mut after_unspaced = false;
    for (word, gap) in marked {
        let gap = if after_unspaced { Gap::Apart } else { gap };
        after_unspaced = word.chars().next().and_then(unspaced).is_some();
        if !after_unspaced {
            out.push((word, gap));
            continue;
        }
        let chars: Vec<char> = word.chars().collect();
        out.extend(
            chars
                .windows(2)
                .map(|pair| pair.iter().collect())
                .chain(chars.iter().map(char::to_string))
                .map(|gram| (gram, Gap::Apart)),
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_request_asks_to_be_told_orders_a_change_or_neither() {
        for (request, mood) in [
            ("who is following PROJ-812", Mood::Asks),
            (
                "What files are attached to the onboarding page?",
                Mood::Asks,
            ),
            ("what's the address at 48.8584, 2.2945", Mood::Asks),
            ("how many hours were logged on PROJ-9", Mood::Asks),
            ("is the van on its way", Mood::Asks),
            ("did the deploy pass", Mood::Asks),
            ("do we have any open pull requests", Mood::Asks),
            ("remove ticket TEST-4 permanently", Mood::Orders),
            ("Upload logo.png to the R2 bucket", Mood::Orders),
            // By a word related to a changing verb.
            ("change the priority of PROJ-55", Mood::Orders),
            ("make a folder called drafts", Mood::Orders),
            ("give Maria the ticket", Mood::Orders),
            ("give me the build log", Mood::Other),
            ("send us the invoice", Mood::Other),
            ("list my open tickets", Mood::Other),
            ("how do I reset my password", Mood::Other),
            ("how to rename a branch", Mood::Other),
            ("how can we move the page", Mood::Other),
            ("do a backup of the database", Mood::Other),
            ("Can you convert my spreadsheet to markdown?", Mood::Other),
            ("", Mood::Other),
        ] {
            assert_eq!(Mood::of(request), mood, "{request}");
        }
    }

    #[test]
    fn a_name_says_what_it_does_by_its_first_verb() {
        for (name, verb) in [
            ("remove_watcher", Some(Verb::Changes("remov"))),
            ("get_merge_request", Some(Verb::Reads("get"))),
            ("merge_pull_request", Some(Verb::Changes("merg"))),
            ("listUploads", Some(Verb::Reads("list"))),
            ("mr_discussions", None),
        ] {
            assert_eq!(Verb::of_name(&tokens(name)), verb, "{name}");
        }
    }

    #[test]
    fn names_split_the_same_whatever_their_convention() {
        for name in [
            "get_forecast",
            "getForecast",
            "forecast.get",
            "GetForecast",
            "get-forecast",
        ] {
            let mut terms = tokens(name);
            terms.sort();
            assert_eq!(terms, ["forecast", "get"], "{name}");
        }
        assert_eq!(tokens("getHTTPResponse"), ["get", "http", "respons"]);
        // The embedded sentence splits names by the same rule, keeping every word whole.
        assert_eq!(words("getHTTPResponse"), "get http response");
        assert_eq!(words("the_file-info.v2"), "the file info v2");
        assert_eq!(tokens("list_files v2"), ["list", "file", "v2"]);
        assert_eq!(
            tokens("What is the status of my order?"),
            ["status", "order"]
        );
        // One stem for a word's forms, in a request and a description alike.
        assert_eq!(tokens("logged logs log"), ["log", "log", "log"]);
        assert_eq!(tokens("attached attachments"), ["attach", "attach"]);
        // Not English: split and lowercased, never lost.
        assert_eq!(tokens("Récupérer les données").len(), 3);
    }

    /// Whether every term of `query` is one of `text`'s.
    fn within(query: &str, text: &str) -> bool {
        let terms = tokens(text);
        tokens(query).iter().all(|term| terms.contains(term))
    }

    #[test]
    fn unspaced_scripts_read_as_characters_and_their_pairs() {
        assert_eq!(
            tokens("天气预报"),
            ["天气", "气预", "预报", "天", "气", "预", "报"]
        );
        // One or two characters: the pair and each character.
        assert_eq!(tokens("天气"), ["天气", "天", "气"]);
        assert_eq!(tokens("书"), ["书"]);
        // A word of the query inside a description's run, whatever the run was made of.
        assert!(within("预报", "根据城市名称查询指定城市的天气预报"));
        // A word the run does not hold whole still meets it in its characters.
        let ride = tokens("骑自行车去颐和园");
        let shared: Vec<String> = tokens("骑行")
            .into_iter()
            .filter(|t| ride.contains(t))
            .collect();
        assert_eq!(shared, ["骑", "行"]);
        // Where scripts meet, a word ends: the Latin word is whole, and no term mixes them.
        assert_eq!(
            tokens("获取GitHub仓库的README"),
            [
                "获取", "获", "取", "git", "hub", "仓库", "库的", "仓", "库", "的", "readm"
            ]
        );
        // Japanese (kana and kanji), Korean (a word and its particle), Thai.
        assert!(within("メール", "メールを送信します"));
        assert!(within("送信", "メールを送信します"));
        assert!(within("파일", "파일을 읽습니다"));
        assert!(within("ไฟล์", "ค้นหาไฟล์"));
        // A pair is never joined to a neighbour as a compound.
        assert!(query_words("天气 forecast 北京").1.is_empty());
    }

    #[test]
    fn latin_letters_meet_without_their_accents() {
        assert_eq!(tokens("Café crème brûlée"), tokens("cafe creme brulee"));
        assert_eq!(
            tokens("Récupérer les données"),
            tokens("recuperer les donnees")
        );
        assert_eq!(
            tokens("Straße Øresund Łódź"),
            tokens("strasse oresund lodz")
        );
        assert_eq!(tokens("Ærø Œuvre"), tokens("aero oeuvre"));
        // Written decomposed (`e` then U+0301) or fullwidth, the same.
        assert_eq!(tokens("cafe\u{301}"), tokens("café"));
        assert_eq!(tokens("ＧｉｔＨｕｂ　ｆｉｌｅ"), tokens("GitHub file"));
        // Other scripts keep their marks: が is not か, ά is not α, й is not и.
        assert_ne!(tokens("が"), tokens("か"));
        assert_ne!(tokens("ά"), tokens("α"));
        assert_ne!(tokens("й"), tokens("и"));
        // A vowel sign is part of its word, not a break in it.
        assert_eq!(tokens("फ़ाइल खोलें").len(), 2);
        // A mark with no letter before it is no word.
        assert!(tokens("\u{301} \u{301}").is_empty());
    }

    #[test]
    fn a_tool_written_in_camel_case_is_indexed_by_its_parts_and_as_one_word() {
        // `you` is a stopword alone, not in `youtube`.
        assert_eq!(
            tool_words("Run JavaScript in the getYouTubeVideo page"),
            [
                "run",
                "java",
                "script",
                "get",
                "tube",
                "video",
                "page",
                "javascript",
                "getyou",
                "youtube",
                "tubevideo"
            ]
        );
        // Only a hump joins: spaces, marks, scripts and all capitals do not.
        assert_eq!(
            tool_words("git hub git-hub GIT 获取Git"),
            unstemmed("git hub git-hub GIT 获取Git")
        );
        assert!(tool_words("").is_empty());
    }

    #[test]
    fn a_request_is_read_without_the_frame_a_tool_search_puts_around_it() {
        for (query, request_) in [
            ("find a tool that can resize images", "resize images"),
            ("Is there any tool to send an email?", "send an email?"),
            ("tools for: list my repos", "list my repos"),
            ("Tool: list my repos", "list my repos"),
            ("which tool should I use to book a flight", "book a flight"),
            ("I need an MCP tool capable of reading PDFs", "reading PDFs"),
            (
                "search for tools that let me post to #general",
                "post to #general",
            ),
            ("a tool which helps with invoices", "invoices"),
            ("weather forecast tool", "weather forecast"),
            ("get me the right tools for charts, please", "charts"),
            // A content verb after the frame is the request's, not the frame's.
            (
                "a tool that can allow the server to write",
                "allow the server to write",
            ),
            ("a tool that helps Maria", "helps Maria"),
            // Within a request, after a name: the tool word and its ties.
            (
                "slack tools for posting a message",
                "slack posting a message",
            ),
            (
                "the GitHub tool to open an issue",
                "the GitHub open an issue",
            ),
            ("Slack tools: post #general", "Slack post #general"),
            ("jira tools", "jira"),
        ] {
            assert_eq!(request(query, Frames::All), request_, "{query}");
        }
        // A ranker reading sentences keeps a frame within the request, not one around it.
        assert_eq!(
            request("slack tools to post the notes", Frames::Around),
            "slack tools to post the notes"
        );
        assert_eq!(
            request("find a tool that can post the notes", Frames::Around),
            "post the notes"
        );
        // A question about tools, a tool word inside a name, and a frame with nothing in it
        // are left as they are.
        for query in [
            "what tools did the assistant call recently",
            "which tools do I have",
            "list the tools of the gitlab server",
            "list the tools that are disabled",
            "start a new GitLab project called infra-tools",
            "open devTools",
            "find a tool-chain file",
            "find a tool",
            "tools",
            "",
        ] {
            assert_eq!(request(query, Frames::All), query);
        }
        // Any text: parts of it, on character boundaries.
        for query in [
            "tool: é",
            "tools\u{301} for x",
            "工具 tool 工具",
            "tool tool tool",
            "x tool: é tools",
            "é tools to",
        ] {
            let request = request(query, Frames::All);
            assert!(
                request.split(' ').all(|part| query.contains(part)),
                "{query}"
            );
        }
    }

    #[test]
    fn a_request_is_read_without_the_courtesies_around_it() {
        for (query, request_) in [
            ("I need to send an email to Bob", "send an email to Bob"),
            ("I'd like to book a flight", "book a flight"),
            ("We\u{2019}d like to export the sheet", "export the sheet"),
            ("could you please list my repos", "list my repos"),
            ("Can you help me find the invoice", "find the invoice"),
            (
                "hey, could you maybe resize this image?",
                "resize this image?",
            ),
            ("Hi there! I just need to rename a file", "rename a file"),
            ("I was wondering if you could archive it", "archive it"),
            ("is it possible to undo the deploy", "undo the deploy"),
            ("I need you to post in #general", "post in #general"),
            ("I need help with my invoices", "with my invoices"),
            ("Let's merge PR 12", "merge PR 12"),
            ("ok, go ahead and restart the pod", "restart the pod"),
            ("delete the cache for me, please", "delete the cache"),
            ("Could you close ENG-4 please? thanks", "close ENG-4"),
            // With a tool search's frame after them.
            ("I need a tool that can resize images", "resize images"),
            ("could you find me a tool to send email", "send email"),
        ] {
            assert_eq!(request(query, Frames::All), request_, "{query}");
            assert_eq!(request(query, Frames::Around), request_, "{query}");
        }
        // A courtesy's words asking for what they say, or with nothing after them.
        for query in [
            "like the latest post",
            "help",
            "show help for git",
            "hello world program",
            "need-to-know list",
            "you could",
            "please",
            "thank you",
            "I need help",
            "hi",
        ] {
            assert_eq!(request(query, Frames::All), query);
        }
    }

    #[test]
    fn neighbouring_words_are_offered_as_one() {
        assert_eq!(
            query_words("Roll back the deploy, then set up to-do lists").1,
            ["rollback", "thenset", "setup", "todo"]
        );
        assert_eq!(
            query_words("open youtu.be/x in next.js").1,
            ["openyoutu", "youtube", "nextjs"]
        );
        // Apart, a stopword joins nothing: "do I" is no DOI.
        assert_eq!(query_words("how do I get there").1, ["getthere"]);
        // More than one mark, a comma: apart.
        assert_eq!(
            query_words("to--do to - do get, foo").1,
            Vec::<String>::new()
        );
        // A hump joins: a query that writes `JavaScript` finds `javascript` too.
        assert_eq!(
            query_words("run JavaScript on getHTTPResponse").1,
            ["runjava", "javascript", "gethttp", "httpresponse"]
        );
        assert!(query_words("").1.is_empty() && query_words("one").1.is_empty());
        // The words of the same reading are what `unstemmed` gives.
        let text = "Roll back the deploy, then set up to-do lists for getUser";
        assert_eq!(query_words(text).0, unstemmed(text));
    }

    #[test]
    fn a_tool_reads_as_its_name_title_server_description_and_parameters() {
        let catalog = mcp_sansio::Catalog::from_json(
            r#"{"tools":[{"name":"get_forecast","title":"Weather outlook",
                "description":"Forecast for a city.",
                "inputSchema":{"type":"object","properties":{
                    "cityName":{"type":"string","description":"Where, as a town name"}}}}]}"#,
            mcp_sansio::CatalogPolicy::STRICT,
            &mcp_sansio::Limits::default(),
        )
        .unwrap();
        let text = ToolText::new("noaa", &catalog.tools()[0]);
        assert_eq!(
            text.name_terms,
            ["get", "forecast", "weather", "outlook", "noaa"]
        );
        assert_eq!(
            text.body_terms,
            // `cityName` also as one word: `citynam`. Each part read on its own (the
            // description, then each parameter's name and description): its stems, then
            // the forms of the words its stems change.
            [
                "forecast",
                "citi",
                "=city",
                "citi",
                "name",
                "citynam",
                "=city",
                "=cityname",
                "where",
                "town",
                "name"
            ]
        );
        assert_eq!(text.summary_terms, ["forecast", "citi", "=city"]);
        assert_eq!(
            text.passage,
            "noaa: get forecast. Weather outlook. Forecast for a city"
        );
        // As written, for slips of the keys and a query's compounds: lowercased, each once,
        // stopwords left out, a camelCase word whole as well.
        assert_eq!(
            text.words,
            [
                "city", "cityname", "forecast", "get", "name", "noaa", "outlook", "town",
                "weather", "where"
            ]
        );
    }

    #[test]
    fn a_tool_without_a_title_is_read_with_its_annotations_title() {
        let catalog = mcp_sansio::Catalog::from_json(
            r#"{"tools":[
                {"name":"list_processes","description":"List processes.",
                 "annotations":{"title":"List Running Processes","readOnlyHint":true},
                 "inputSchema":{"type":"object"}},
                {"name":"kill","title":"End a process","description":"Kill one.",
                 "annotations":{"title":"Terminate"},"inputSchema":{"type":"object"}},
                {"name":"odd","annotations":{"title":7},"inputSchema":{"type":"object"}}]}"#,
            mcp_sansio::CatalogPolicy::STRICT,
            &mcp_sansio::Limits::default(),
        )
        .unwrap();
        // A catalog holds its tools sorted by name.
        let [titled, listed, odd] = catalog.tools() else {
            panic!("three tools");
        };
        // The annotations' title is the title where the tool has none: in the name's
        // field and in the passage.
        let text = ToolText::new("desktop", listed);
        assert!(text.name_terms.contains(&"run".to_owned()), "{text:?}");
        assert_eq!(
            text.passage,
            "desktop: list processes. List Running Processes. List processes"
        );
        // A tool's own title comes first, as the specification shows it.
        let text = ToolText::new("desktop", titled);
        assert!(!text.words.contains(&"terminate".to_owned()), "{text:?}");
        assert_eq!(text.passage, "desktop: kill. End a process. Kill one");
        // A title that is not a string is no title.
        assert_eq!(ToolText::new("desktop", odd).passage, "desktop: odd");
    }

    #[test]
    fn a_tool_described_in_megabytes_is_read_up_to_its_bound() {
        let tool = |description: &str, title: &str| {
            let listing = serde_json::json!({"tools": [{
                "name": "big", "title": title, "description": description,
                "inputSchema": {"type": "object", "properties": {"tail": {
                    "type": "string", "description": "never read"}}}}]});
            let catalog = mcp_sansio::Catalog::from_json(
                &listing.to_string(),
                mcp_sansio::CatalogPolicy::STRICT,
                &mcp_sansio::Limits::default(),
            )
            .unwrap();
            ToolText::new("s", &catalog.tools()[0])
        };
        let han = "天气预报".repeat(250_000);
        let text = tool(&han, &"title ".repeat(100_000));
        // The name and "title"s fill part of the budget, the description the rest, and the
        // parameter after it is not read: at most two terms a character.
        assert!(text.body_terms.len() <= 2 * ToolText::MAX_CHARS);
        assert!(!text.body_terms.contains(&"tail".to_owned()));
        assert!(text.name_terms.len() + text.body_terms.len() >= ToolText::MAX_CHARS / 6);
        assert!(text.passage.chars().count() <= 2 * SUMMARY_CHARS + 16);
        // Under the bound, everything is read.
        let small = tool("Forecast for a city.", "Weather");
        assert!(small.body_terms.contains(&"tail".to_owned()));
    }

    #[test]
    fn a_summary_is_the_first_sentence_on_one_line_and_bounded() {
        assert_eq!(
            summary("  Fetch a URL.\n\n## Usage\nCall it with..."),
            "Fetch a URL."
        );
        assert_eq!(summary("Read v1.2 files. Then more."), "Read v1.2 files.");
        assert_eq!(
            summary("Notion | Retrieve a user\n\nError Responses: 400"),
            "Notion | Retrieve a user"
        );
        assert_eq!(summary("Spread\n   over\tlines"), "Spread over lines");
        let long = summary(&"word ".repeat(100));
        assert!(
            long.chars().count() <= SUMMARY_CHARS + 1 && long.ends_with("word…"),
            "{long}"
        );
        assert_eq!(summary(""), "");
        // Cut at the bound, however long the sentence goes on.
        let endless = "word ".repeat(1_000_000);
        assert_eq!(summary(&endless), summary(&endless[..1000]));
        // A Chinese or Japanese full stop ends a sentence with no space after it.
        assert_eq!(summary("查询天气。支持全国城市"), "查询天气。");
        assert_eq!(
            summary("メールを送信します！添付も可"),
            "メールを送信します！"
        );
        assert_eq!(summary("v1。2"), "v1。");
    }
}
