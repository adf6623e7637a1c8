//! Okapi BM25 over the tools of a catalog.

use std::collections::{BTreeMap, HashMap, HashSet};

use super::hints::hints;
use super::spelling::slips;
use super::synonyms::related;
use super::text::{
    query_words, request, stems_and_forms, tokens, Frames, Mood, ToolText, Verb, FORM_MARK,
};
use super::{best as best_k, keys, Hit, RankError, Ranker};

/// Okapi BM25, built once per catalog, over each tool's name, title, description, parameter
/// names and descriptions, and server name.
///
/// A term in the name, title or server name counts [`Bm25::NAME_WEIGHT`] times: a request
/// for "the forecast" means `get_forecast` more than a tool that mentions forecasts. A term
/// of the description's first sentence counts [`Bm25::SUMMARY_WEIGHT`] times more than one
/// of the rest of it: that sentence says what the tool does, the rest how to call it. The
/// parameters are the usual ones: `k1` = 1.2 (how fast repeats of a term stop adding) and
/// `b` = 0.75 (how much a long description is discounted).
///
/// Words count by their stems: "logged", "logs" and "log" are one term. A word its stem
/// changes also counts as written, at [`Bm25::FORM_WEIGHT`], where the tool writes it so
/// too: "which collections" and `list_collections` share "collections", not only
/// `collection`, which `drop_collection` holds as well.
///
/// An identifier in the query adds the word for what it names: `PROJ-812` adds "issue",
/// `#general` "channel", `a1b2c3` "commit", `notes.txt` "file", `~/Downloads` "directory",
/// `@kenji` "user", an email address "email", a URL or host name "url". A user names the
/// thing and leaves out its kind ("give PROJ-73 to Kenji"); the tools that act on it say the
/// kind ("Assign a Jira issue").
///
/// A query word no tool holds (nor any of its synonyms) and that is one slip from a word
/// some tool holds is read as that word: "clikc" searches for `click`, "screenshoot" for
/// `screenshot`. Below 8 letters the slip must be two neighbouring letters swapped; a word
/// shorter than 5 letters is never read as a slip.
///
/// Two neighbouring query words that some tool writes as one word are also searched as that
/// word: "roll back" for `rollback`, "set up" for `setup`, "to-do" for `todo`, "youtu.be"
/// for `youtube`. Words a space apart are joined only where neither is a stopword, so "do
/// I" is never a `doi`.
///
/// A query is read without the frame a request to a tool search puts around it: "find a
/// tool that can resize images", "is there any tool to …", "tools for: …", "… tool" and
/// "slack tools to …" are read as the request inside, as a model searching through the palette's
/// search tool writes them. Read whole, "find" and "tool" match tools that find things or are named
/// `…_tool` before the one that resizes images. "What tools did the assistant call" asks
/// about tools, and is read whole. So are the courtesies a person writes: "I need to …",
/// "I'd like to …", "could you please …", "can you help me …", "… for me, please".
///
/// A tool whose name's words are all in the query scores [`Bm25::NAME_MATCH_BONUS`] more:
/// "list projects" means `list_projects`, even in a catalog where `list_project_members`
/// and `list_labels` (of a project) share its words. A name's word may be held by a word
/// related to one of the query's, as the synonyms are: "make a folder" names
/// `create_directory` as well, and "remove the duplicate rows" `delete_records`. A name of
/// one word only by that word itself, or "show" and "find" would name every tool called
/// `get` or `search`.
///
/// A question asks to be told something: "who is following PROJ-812", "what files are
/// attached to the onboarding page", "is the van on its way". Asked one, a tool whose name
/// says it changes things (`remove_watcher`, `upload_attachment`, `post_message`: the first
/// of its verbs is one of 28 that change, `create`, `delete`, `update`, `send` and the like,
/// not one of 13 that read, `get`, `list`, `search`…, so `get_merge_request` reads) scores
/// [`Bm25::MOOD_DISCOUNT`] less, unless the question holds its verb ("when was PROJ-77
/// created"). Such tools share the question's nouns and were put before the one that reads
/// them. An order to change something is read the same way round: a request that opens with
/// one of the changing verbs, or a word related to one ("remove the old cronjob", "change
/// the priority of PROJ-55", "upload logo.png to the R2 bucket", but not "give me …"),
/// takes as much off a tool whose name's first verb reads (`list_api_resources`,
/// `get_board_issues`). An order's other words that could read are its objects ("write a
/// spec for the search project"), so none exempts a tool.
///
/// A query that names a server, every term of its name among the query's words ("who are
/// the members of our Notion workspace"), lifts that server's tools by
/// [`Bm25::SERVER_NAME_BONUS`].
///
/// A tool that matches everything is discounted: a hub. When the index is built, the first
/// sentences of up to [`Bm25::PROBES_PER_SERVER`] tools of each server are ranked as
/// queries, and each tool's hubness is how well it answers the other servers' probes (its
/// score over each probe's best, averaged per server, then over the servers). A query's
/// score for a tool is its BM25 score over the query's best less [`Bm25::HUB_WEIGHT`] times
/// that. A server that stuffs its tools with every word, to be found whatever is asked,
/// answers every probe and pays for it; averaging per server keeps one server's many
/// probes from weighing more than another's few.
#[derive(Clone, Debug)]
pub struct Bm25 {
    k1: f64,
    b: f64,
    /// For each term, the tools holding it and how often (name terms weighted).
    postings: HashMap<String, Vec<(usize, f64)>>,
    /// For each term of a tool's name (not its title, nor its server's name), the tools
    /// whose name holds it.
    named: HashMap<String, Vec<usize>>,
    /// How many distinct terms each tool's name holds.
    name_sizes: Vec<usize>,
    /// Every word of the catalog as written (lowercased), its stem and its form: what a slip
    /// of the keys or two words written as one are searched as.
    spellings: HashMap<String, (String, Option<String>)>,
    lengths: Vec<f64>,
    average: f64,
    /// (server, tool) of each tool, for breaking ties.
    keys: Vec<(String, String)>,
    /// Each tool's hubness, from 0 (answers no other server's probe) to 1.
    hubness: Vec<f64>,
    /// The verb each tool's name says it does, if it says one.
    verbs: Vec<Option<Verb>>,
    /// The terms of each server's name, one entry per server.
    servers: Vec<Vec<String>>,
    /// For each tool, its server's entry in `servers`.
    server_of: Vec<usize>,
}

impl Bm25 {
    /// How many times a term of the name, title or server name counts.
    pub const NAME_WEIGHT: f64 = 3.0;

    /// How many times more a term of the description's first sentence counts, on top of its
    /// count as a term of the description: on the labelled set recall@5 went from 0.697 to
    /// 0.729 at 4, and stayed between 0.725 and 0.733 from 3 to 8.
    pub const SUMMARY_WEIGHT: f64 = 4.0;

    /// What a word related to a query's word counts for, against the word itself: "make a
    /// folder" also searches for `create` and `directory`, at this weight.
    pub const SYNONYM_WEIGHT: f64 = 0.5;

    /// What a query's word as written (its form, [`FORM_MARK`](super::FORM_MARK)) counts
    /// for where a tool writes it so too, on top of its stem's match: "which collections
    /// are there" finds `list_collections` before `drop_collection`, "what labels do I have"
    /// `list_labels` before `add_label`. Over the seven labelled sets (1,141 queries with
    /// the shop and Chinese ones), 0.3 found 24 more first (440 to 464), 5 more in the top
    /// five and 6 more in the top ten; 0.2 to 0.4 all gained (457 to 464 first), the most at
    /// 0.3. Both hybrids, whose BM25 half it is, gained 6 and 10 first and moved by one query
    /// in the top five.
    pub const FORM_WEIGHT: f64 = 0.3;

    /// How many of a server's tools probe the others for hubs, at most (spread evenly over
    /// its tools): the bound on the extra work of building the index, about as many queries
    /// as this times the number of servers.
    pub const PROBES_PER_SERVER: usize = 16;

    /// What a tool's hubness takes off its score, against the 1 the query's best match
    /// scores.
    pub const HUB_WEIGHT: f64 = 1.0;

    /// Hubness is averaged over the other servers, counting at least this many: among a
    /// few servers, a tool that does what one other server's tool does is not a hub.
    pub const HUB_SERVERS: usize = 8;

    /// What a tool whose name's words are all in the query scores on top of its BM25 score,
    /// against the 1 the query's best match scores. On the 113 queries another project
    /// wrote (`tests/data/external/`) recall@5 went from 0.858 to 0.903 at 0.2 (0.912 at
    /// 0.5), recall@1 from 0.655 to 0.761; on the two sets of this crate recall@5 is the
    /// same from 0.1 to 0.5, and 2 of the held-out set's 198 first hits move to second at
    /// 0.2 (4 at 0.5). A name held by related words scores the same: recall@5 on the first
    /// and held-out sets went from 0.801 and 0.667 to 0.805 and 0.682 with it. Given a
    /// value of its own, 0.1 gained less, 0.15 as much at recall@5 and less at recall@1, 0.3
    /// and 0.5 lost first hits on two or three sets, and 0.5 a query of the first and of the
    /// unseen set at recall@5.
    pub const NAME_MATCH_BONUS: f64 = 0.2;

    /// What a question takes off a tool whose name says it changes things, and an order to
    /// change something off a tool whose name says it reads, against the 1 the query's best
    /// match scores. Over the seven labelled sets (1,141 queries), the question's at 0.4
    /// found 10 more queries in the top five (701 to 711) and 11 more first, and lost none at
    /// either; 0.2 found 8 and 8, 1 (the tools left out of a question's list) 11 and 11. The
    /// order's then found 5 more in the top five, 2 more first and 4 more in the top ten,
    /// and lost none at any of the three; 0.2 to 0.5 all gained 4 or 5 at five, 1 gained 3.
    /// At 0.4 such a tool stays in the list where it matches well.
    pub const MOOD_DISCOUNT: f64 = 0.4;

    /// What a tool of a server the query names scores more, against the 1 the query's best
    /// match scores: "who are the members of our Notion workspace" names the `notion`
    /// server, and its `API-get-users` no longer stands below Confluence's and Slack's user
    /// tools. A server is named when every term of its name is among the query's words
    /// (`google-maps` by "google maps"); a name that is all stopwords names none. Over the
    /// seven labelled sets (1,141 queries) BM25 found 5 more queries in the top five (716
    /// to 721), 3 more first and 2 more in the top ten, and lost none at any of the three;
    /// 0.05 found 1 more at five, 0.1 2, 0.2 4, 0.5 5 and 1 4. In a palette a server's name
    /// is the id the application gave it, not a name the server chose.
    pub const SERVER_NAME_BONUS: f64 = 0.3;

    /// How many of a query's words no tool holds are read for slips of the keys, at most
    /// (the first in sorted order, so a query always reads the same): each costs up to about
    /// 2,500 lookups, so a query thousands of words long costs no more than a short one.
    pub const SLIPS_PER_QUERY: usize = 8;

    /// The index of `tools`, with `k1` = 1.2 and `b` = 0.75.
    pub fn new(tools: &[ToolText]) -> Self {
        Bm25::with_parameters(tools, 1.2, 0.75)
    }

    /// The index of `tools` with other parameters.
    pub fn with_parameters(tools: &[ToolText], k1: f64, b: f64) -> Self {
        let mut postings: HashMap<String, Vec<(usize, f64)>> = HashMap::new();
        let mut lengths = Vec::with_capacity(tools.len());
        let mut named: HashMap<String, Vec<usize>> = HashMap::new();
        let mut name_sizes = Vec::with_capacity(tools.len());
        for (index, tool) in tools.iter().enumerate() {
            let mut counts: HashMap<&str, f64> = HashMap::new();
            for term in &tool.name_terms {
                *counts.entry(term).or_default() += Self::NAME_WEIGHT;
            }
            for term in &tool.body_terms {
                *counts.entry(term).or_default() += 1.0;
            }
            for term in &tool.summary_terms {
                *counts.entry(term).or_default() += Self::SUMMARY_WEIGHT;
            }
            // A form repeats a word its stem counts already: it does not lengthen the tool.
            lengths.push(
                counts
                    .iter()
                    .filter(|(term, _)| !term.starts_with(FORM_MARK))
                    .map(|(_, count)| count)
                    .sum(),
            );
            let mut name = tokens(&tool.tool);
            name.sort();
            name.dedup();
            name_sizes.push(name.len());
            for term in name {
                named.entry(term).or_default().push(index);
            }
            for (term, count) in counts {
                postings
                    .entry(term.to_owned())
                    .or_default()
                    .push((index, count));
            }
        }
        let spelt: HashSet<&String> = tools.iter().flat_map(|tool| &tool.words).collect();
        let spellings = spelt
            .iter()
            .map(|&w| w.clone())
            .zip(stems_and_forms(spelt.iter().copied()))
            .collect();
        #[allow(clippy::cast_precision_loss)]
        let average = lengths.iter().sum::<f64>() / (lengths.len().max(1) as f64);
        let mut servers = Vec::new();
        let mut entries: HashMap<&str, usize> = HashMap::new();
        let mut server_of = Vec::with_capacity(tools.len());
        for tool in tools {
            let entry = *entries.entry(tool.server.as_str()).or_insert_with(|| {
                let mut terms = tokens(&tool.server);
                terms.sort();
                terms.dedup();
                servers.push(terms);
                servers.len() - 1
            });
            server_of.push(entry);
        }
        let mut index = Bm25 {
            k1,
            b,
            postings,
            named,
            name_sizes,
            spellings,
            lengths,
            average: average.max(f64::MIN_POSITIVE),
            keys: keys(tools),
            hubness: Vec::new(),
            verbs: tools
                .iter()
                .map(|tool| Verb::of_name(&tool.name_terms))
                .collect(),
            servers,
            server_of,
        };
        index.hubness = index.hubness(tools);
        index
    }

    /// Each tool's hubness (see [`Bm25`]): its relative score for the probes of every server
    /// but its own, averaged per server and then over the servers.
    fn hubness(&self, tools: &[ToolText]) -> Vec<f64> {
        let mut servers: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
        for (at, tool) in tools.iter().enumerate() {
            servers.entry(tool.server.as_str()).or_default().push(at);
        }
        let mut hubness = vec![0.0_f64; tools.len()];
        if servers.len() < 2 {
            return hubness;
        }
        let mut scores = vec![0.0_f64; tools.len()];
        let mut touched = Vec::new();
        let mut answered = vec![0.0_f64; tools.len()];
        let mut reached = Vec::new();
        for members in servers.values() {
            let probes = members.len().min(Self::PROBES_PER_SERVER);
            for probe in 0..probes {
                let Some(tool) = members
                    .get(probe * members.len() / probes)
                    .and_then(|&at| tools.get(at))
                else {
                    continue;
                };
                let words = if tool.summary_terms.is_empty() {
                    &tool.name_terms
                } else {
                    &tool.summary_terms
                };
                let mut words = words.clone();
                words.sort();
                words.dedup();
                self.score(&with_related(&words), &mut scores, &mut touched);
                let best = best_of(&scores, &touched);
                for at in touched.drain(..) {
                    let score = scores.get_mut(at).map_or(0.0, std::mem::take);
                    if let Some(sum) = answered.get_mut(at) {
                        if *sum == 0.0 {
                            reached.push(at);
                        }
                        *sum += score / best;
                    }
                }
            }
            #[allow(clippy::cast_precision_loss)]
            let probes = probes.max(1) as f64;
            for at in reached.drain(..) {
                let share = answered.get_mut(at).map_or(0.0, std::mem::take) / probes;
                // Members are in index order: a tool of this server is found by halving.
                if members.binary_search(&at).is_err() {
                    if let Some(h) = hubness.get_mut(at) {
                        *h += share;
                    }
                }
            }
        }
        #[allow(clippy::cast_precision_loss)]
        let others = (servers.len() - 1).max(Self::HUB_SERVERS) as f64;
        for h in &mut hubness {
            *h /= others;
        }
        hubness
    }

    /// The stems of the query's `words` (lowercased, as [`unstemmed`](super::text::unstemmed) gives
    /// them) and their forms ([`FORM_MARK`]), with the stem of the word each misspelt one was
    /// meant to be, sorted and without repeats.
    fn meant(&self, words: &[String]) -> Vec<String> {
        let held = |stem: &String| {
            self.postings.contains_key(stem)
                || related(stem)
                    .iter()
                    .any(|other| self.postings.contains_key(other))
        };
        let mut words = words.to_vec();
        words.sort();
        words.dedup();
        let mut out = Vec::with_capacity(words.len());
        let mut read = 0;
        for (word, (stem, form)) in words.iter().zip(stems_and_forms(&words)) {
            if read < Self::SLIPS_PER_QUERY && !held(&stem) {
                let variants = slips(word);
                read += usize::from(!variants.is_empty());
                out.extend(
                    variants
                        .iter()
                        .filter_map(|slip| self.spellings.get(slip))
                        .flat_map(stem_and_form)
                        .cloned(),
                );
            }
            out.push(stem);
            out.extend(form);
        }
        out.sort();
        out.dedup();
        out
    }

    /// Adds each tool's BM25 score for the query's `terms` (from [`with_related`]) to
    /// `scores`, and the tools first reached to `touched`: each word at full weight, each
    /// related word at [`Bm25::SYNONYM_WEIGHT`].
    fn score(&self, terms: &[(&str, bool)], scores: &mut [f64], touched: &mut Vec<usize>) {
        #[allow(clippy::cast_precision_loss)]
        let n = self.lengths.len() as f64;
        for &(term, by_relation) in terms {
            let weight = if by_relation {
                Self::SYNONYM_WEIGHT
            } else if term.starts_with(FORM_MARK) {
                Self::FORM_WEIGHT
            } else {
                1.0
            };
            let Some(holders) = self.postings.get(term) else {
                continue;
            };
            #[allow(clippy::cast_precision_loss)]
            let df = holders.len() as f64;
            // The "+1" form: never negative, however common the term.
            let idf = ((n - df + 0.5) / (df + 0.5) + 1.0).ln();
            for &(index, tf) in holders {
                let (Some(score), Some(length)) = (scores.get_mut(index), self.lengths.get(index))
                else {
                    continue;
                };
                if *score == 0.0 {
                    touched.push(index);
                }
                let norm = self.k1 * (1.0 - self.b + self.b * length / self.average);
                *score += weight * idf * tf * (self.k1 + 1.0) / (tf + norm);
            }
        }
    }
}

/// The query's `words` (stems, from [`Bm25::meant`], without repeats), then the words
/// related to them that the query does not hold itself, each once and marked `true`. Looked
/// up in a set: a query of many words costs in proportion to its length.
fn with_related(words: &[String]) -> Vec<(&str, bool)> {
    let mut terms: Vec<(&str, bool)> = words.iter().map(|w| (w.as_str(), false)).collect();
    let mut seen: HashSet<&str> = words.iter().map(String::as_str).collect();
    for word in words {
        for other in related(word) {
            if seen.insert(other) {
                terms.push((other, true));
            }
        }
    }
    terms
}

/// The terms a word of the catalog is searched as: its stem, and its form if it has one.
fn stem_and_form((stem, form): &(String, Option<String>)) -> impl Iterator<Item = &String> {
    std::iter::once(stem).chain(form)
}

/// The highest of the `touched` tools' `scores`, never 0: what a query's scores are divided
/// by, so its best match scores 1.
fn best_of(scores: &[f64], touched: &[usize]) -> f64 {
    touched
        .iter()
        .filter_map(|&at| scores.get(at))
        .fold(f64::MIN_POSITIVE, |a, &b| a.max(b))
}

impl Ranker for Bm25 {
    fn rank(&self, query: &str, k: usize) -> Result<Vec<Hit>, RankError> {
        let request = request(query, Frames::All);
        let query = request.as_ref();
        // One slot per tool, and the tools any term reached: no map on the hot loop.
        let mut scores = vec![0.0_f64; self.lengths.len()];
        let mut touched: Vec<usize> = Vec::new();
        // What the query's identifiers are ("PROJ-73": an issue) counts as words of it.
        let (query_words, compounds) = query_words(query);
        let mut words = self.meant(&query_words);
        words.extend(hints(query).into_iter().flat_map(tokens));
        // Two words the catalog writes as one ("roll back", `rollback`) are searched as it too.
        words.extend(
            compounds
                .iter()
                .filter_map(|compound| self.spellings.get(compound))
                .flat_map(stem_and_form)
                .cloned(),
        );
        words.sort();
        words.dedup();
        let terms = with_related(&words);
        self.score(&terms, &mut scores, &mut touched);
        let best = best_of(&scores, &touched);
        // For each tool, how many of its name's terms the query holds, itself or by a word
        // related to one of its words ("make a folder" holds `create_directory`'s two), and
        // whether any only by a related word.
        let mut in_name = vec![(0_usize, false); self.name_sizes.len()];
        for &(word, by_relation) in &terms {
            for &at in self.named.get(word).map_or(&[][..], Vec::as_slice) {
                if let Some((count, related)) = in_name.get_mut(at) {
                    *count += 1;
                    *related |= by_relation;
                }
            }
        }
        // A question discounts a tool that changes what it asks about, unless it names the
        // change itself; an order to change something discounts a tool that reads.
        let mood = Mood::of(query);
        // The servers the query names: every term of the name among its words.
        let named_servers: Vec<bool> = self
            .servers
            .iter()
            .map(|terms| {
                !terms.is_empty() && terms.iter().all(|term| words.binary_search(term).is_ok())
            })
            .collect();
        let hits = touched
            .into_iter()
            .map(|index| {
                // A name of one word is held only by that word: "show" and "find" would
                // otherwise name every tool called `get` or `search`.
                let named = in_name.get(index).is_some_and(|&(count, related)| {
                    count > 0
                        && self.name_sizes.get(index) == Some(&count)
                        && (count > 1 || !related)
                });
                Hit {
                    index,
                    score: scores.get(index).copied().unwrap_or(0.0) / best
                        - Self::HUB_WEIGHT * self.hubness.get(index).copied().unwrap_or(0.0)
                        + if named { Self::NAME_MATCH_BONUS } else { 0.0 }
                        + if self
                            .server_of
                            .get(index)
                            .and_then(|&server| named_servers.get(server))
                            .copied()
                            .unwrap_or(false)
                        {
                            Self::SERVER_NAME_BONUS
                        } else {
                            0.0
                        }
                        - match (mood, self.verbs.get(index).copied().flatten()) {
                            (Mood::Asks, Some(Verb::Changes(verb)))
                                if words.binary_search_by(|w| w.as_str().cmp(verb)).is_err() =>
                            {
                                Self::MOOD_DISCOUNT
                            }
                            (Mood::Orders, Some(Verb::Reads(_))) => Self::MOOD_DISCOUNT,
                            _ => 0.0,
                        },
                }
            })
            .collect();
        Ok(best_k(hits, k, &self.keys))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::search::text::unstemmed;

    fn text(server: &str, tool: &str, description: &str) -> ToolText {
        ToolText {
            server: server.to_owned(),
            tool: tool.to_owned(),
            name_terms: tokens(tool),
            body_terms: tokens(description),
            summary_terms: tokens(&crate::search::summary(description)),
            passage: description.to_owned(),
            words: format!("{tool} {description}")
                .split(|c: char| !c.is_alphanumeric())
                .map(str::to_lowercase)
                .collect(),
        }
    }

    /// The texts of a `tools/list` result's tools, as a server named `server` lists them.
    fn listed(server: &str, listing: &serde_json::Value) -> Vec<ToolText> {
        let catalog = mcp_sansio::Catalog::from_json(
            &listing.to_string(),
            mcp_sansio::CatalogPolicy::STRICT,
            &mcp_sansio::Limits::default(),
        )
        .unwrap();
        catalog
            .tools()
            .iter()
            .map(|tool| ToolText::new(server, tool))
            .collect()
    }

    /// Every tool's score for `query`, each by its `key`, sorted by key.
    fn scores_by(index: &Bm25, query: &str, key: impl Fn(usize) -> String) -> Vec<(String, f64)> {
        let mut hits: Vec<(String, f64)> = index
            .rank(query, index.lengths.len())
            .unwrap()
            .into_iter()
            .map(|hit| (key(hit.index), hit.score))
            .collect();
        hits.sort_by(|a, b| a.0.cmp(&b.0));
        hits
    }

    #[test]
    fn a_request_discounts_the_tools_that_do_otherwise_than_it_asks() {
        let tools = [
            text("jira", "remove_watcher", "Remove a watcher from an issue."),
            text("jira", "list_watchers", "List the watchers of an issue."),
            text("jira", "watchers", "The watchers of an issue."),
        ];
        let index = Bm25::new(&tools);
        let scores = |query: &str| scores_by(&index, query, |at| tools[at].tool.clone());
        // Each pair searches the same terms ("is" and "me" are stopwords), and only the
        // first of it takes the discount, off the one tool named.
        for (moody, plain, discounted) in [
            // A question: off the tool that removes watchers.
            (
                "is the issue watched",
                "the issue watched",
                "remove_watcher",
            ),
            // An order ("give" is related to `assign`): off the tool that lists them.
            (
                "give the issue watchers",
                "give me the issue watchers",
                "list_watchers",
            ),
        ] {
            let with = scores(moody);
            let without = scores(plain);
            assert_eq!(with.len(), 3);
            for ((tool, moody), (_, plain)) in with.iter().zip(&without) {
                let off = if tool == discounted {
                    Bm25::MOOD_DISCOUNT
                } else {
                    0.0
                };
                assert!(
                    (plain - moody - off).abs() < 1e-9,
                    "{tool}: {with:?} {without:?}"
                );
            }
        }
        // A question that holds the verb asks about that change: nothing taken off.
        assert_eq!(
            scores("was the watcher removed from the issue"),
            scores("watcher removed from the issue")
        );
    }

    #[test]
    fn a_query_that_names_a_server_lifts_its_tools() {
        // Four servers with the same tool: only their names tell them apart.
        let tools: Vec<ToolText> = ["notion", "google-maps", "maps", "the"]
            .iter()
            .map(|server| text(server, "get_users", "List the users of the workspace."))
            .collect();
        let index = Bm25::new(&tools);
        let scores = |query: &str| scores_by(&index, query, |at| tools[at].server.clone());
        for (query, lifted) in [
            ("who are the users of our Notion workspace", &["notion"][..]),
            // Every term of a name: "maps" names `maps`, not `google-maps`.
            ("list the users of the maps workspace", &["maps"][..]),
            (
                "list the users of the Google Maps workspace",
                &["google-maps", "maps"][..],
            ),
            // A name that is all stopwords names nothing.
            ("list the users of the workspace", &[][..]),
        ] {
            let hits = scores(query);
            assert_eq!(hits.len(), 4, "{query}");
            let plain = hits
                .iter()
                .map(|(_, score)| *score)
                .fold(f64::MAX, f64::min);
            for (server, score) in &hits {
                let bonus = if lifted.contains(&server.as_str()) {
                    Bm25::SERVER_NAME_BONUS
                } else {
                    0.0
                };
                assert!((score - plain - bonus).abs() < 1e-9, "{query}: {hits:?}");
            }
        }
    }

    fn names(index: &Bm25, tools: &[ToolText], query: &str, k: usize) -> Vec<String> {
        index
            .rank(query, k)
            .unwrap()
            .iter()
            .map(|h| tools[h.index].tool.clone())
            .collect()
    }

    /// Each tool's BM25 score for `query`, without the bonus for a name or the hub discount.
    fn plain_scores(index: &Bm25, query: &str) -> Vec<f64> {
        let mut scores = vec![0.0; index.lengths.len()];
        let words = index.meant(&unstemmed(query));
        index.score(&with_related(&words), &mut scores, &mut Vec::new());
        scores
    }

    #[test]
    fn the_name_weighs_more_than_a_mention_and_rare_terms_more_than_common_ones() {
        let tools = [
            text("weather", "get_forecast", "Forecast for a city."),
            text(
                "weather",
                "get_alerts",
                "Weather alerts; see the forecast for details.",
            ),
            text("files", "read_file", "Read a file from the workspace."),
            text("files", "write_file", "Write a file to the workspace."),
        ];
        let index = Bm25::new(&tools);
        assert_eq!(
            names(&index, &tools, "what's the forecast", 2)[0],
            "get_forecast"
        );
        assert_eq!(names(&index, &tools, "write to a file", 1), ["write_file"]);
        // Nothing matches: nothing is returned, rather than an arbitrary tool.
        assert!(index.rank("quantum chromodynamics", 5).unwrap().is_empty());
    }

    #[test]
    fn a_british_spelling_finds_the_american_one_and_the_other_way_round() {
        let tools = [
            text("docs", "summarize_text", "Summarize a document."),
            text("paint", "pick_color", "The color of a pixel."),
            text(
                "files",
                "tidy_files",
                "Organise files into folders by type.",
            ),
            text("files", "read_file", "Read a file."),
            text(
                "shop",
                "cancel_order",
                "Cancel an order that has not shipped.",
            ),
        ];
        let index = Bm25::new(&tools);
        assert_eq!(
            names(&index, &tools, "summarise this", 1),
            ["summarize_text"]
        );
        assert_eq!(
            names(&index, &tools, "what colour is it", 1),
            ["pick_color"]
        );
        assert_eq!(names(&index, &tools, "organize", 5), ["tidy_files"]);
        assert_eq!(
            names(&index, &tools, "the order was cancelled", 1),
            ["cancel_order"]
        );
    }

    #[test]
    fn two_words_the_catalog_writes_as_one_find_it() {
        let tools = [
            text("ci", "run_rollback_pipeline", "Run the rollback pipeline."),
            text("ci", "trigger_pipeline", "Trigger a pipeline on a branch."),
            text("papers", "paper_by_doi", "A paper by its DOI."),
            text("maps", "directions", "Route between two places."),
        ];
        let index = Bm25::new(&tools);
        assert_eq!(
            names(&index, &tools, "roll back prod with the pipeline", 1),
            ["run_rollback_pipeline"]
        );
        // "do I" is two stopwords, not the catalog's `doi`.
        assert_eq!(
            names(&index, &tools, "how do I plan a route", 4),
            ["directions"]
        );
    }

    #[test]
    fn the_first_sentence_says_what_a_tool_does() {
        // The same words, in another order: what each does comes first.
        let tools = [
            text("s", "t1", "Archive a record. Remove it."),
            text("s", "t2", "Remove a record. Archive it."),
        ];
        let index = Bm25::new(&tools);
        assert_eq!(names(&index, &tools, "remove", 2), ["t2", "t1"]);
        assert_eq!(names(&index, &tools, "archive", 2), ["t1", "t2"]);
    }

    #[test]
    fn a_tool_stuffed_with_every_word_is_a_hub_and_loses_to_the_tool_that_fits() {
        let honest = [
            ("weather", "get_forecast", "Forecast for a city."),
            // No server is named by a query below: that would lift its tool.
            ("disk", "read_file", "Read a file from disk."),
            ("mail", "send_email", "Send an email to someone."),
            ("calendar", "create_event", "Create a calendar event."),
            ("tracker", "create_issue", "Create an issue in the tracker."),
            ("chat", "post_message", "Post a message to a channel."),
            ("shell", "run_command", "Run a shell command."),
            ("search", "web_search", "Search the web."),
            ("maps", "get_directions", "Directions between two places."),
        ];
        let mut tools: Vec<ToolText> = honest
            .iter()
            .map(|(server, tool, description)| text(server, tool, description))
            .collect();
        let every: Vec<&str> = honest
            .iter()
            .flat_map(|(_, tool, description)| [*tool, *description])
            .collect();
        tools.push(text("stuffer", "do_anything", &every.join(" ")));
        let index = Bm25::new(&tools);
        let stuffer = tools.len() - 1;
        let hubness = |at: usize| index.hubness[at];
        // It answers every other server's probe; an honest tool, few of them.
        assert!(
            (0..stuffer).all(|at| hubness(stuffer) > 4.0 * hubness(at)),
            "{:?}",
            index.hubness
        );
        // So the tool that fits comes first, where plain BM25 put the stuffed one first.
        let plain = |query: &str| {
            let scores = plain_scores(&index, query);
            (0..stuffer).all(|at| scores[stuffer] > scores[at])
        };
        for (query, fits) in [
            ("search the web for a city forecast", "web_search"),
            ("run a command to read the file", "run_command"),
        ] {
            assert!(plain(query), "{query}");
            assert_eq!(names(&index, &tools, query, 1), [fits]);
        }
        // One server alone has no hubs: its own probes are never counted.
        let alone: Vec<ToolText> = tools
            .iter()
            .map(|t| ToolText {
                server: "one".to_owned(),
                ..t.clone()
            })
            .collect();
        assert!(Bm25::new(&alone).hubness.iter().all(|&h| h == 0.0));
    }

    #[test]
    fn a_slip_of_the_keys_finds_the_word_meant_and_a_real_word_is_left_alone() {
        let tools = [
            text("web", "browser_click", "Click an element on the page."),
            text("web", "take_screenshot", "Capture the page as an image."),
            text(
                "docs",
                "query_docs",
                "Answer a question from documentation.",
            ),
            text("db", "get_state", "Read the state of a record."),
        ];
        let index = Bm25::new(&tools);
        assert_eq!(
            names(&index, &tools, "clikc the button", 1),
            ["browser_click"]
        );
        assert_eq!(
            names(&index, &tools, "screenshoot please", 1),
            ["take_screenshot"]
        );
        assert_eq!(
            names(&index, &tools, "qeury the documentaion", 1),
            ["query_docs"]
        );
        // A short word one letter from a catalog word is read as itself: nothing matches.
        assert!(index.rank("stale", 5).unwrap().is_empty());
        // A word the catalog holds is never read as another.
        assert_eq!(index.meant(&unstemmed("click")), tokens("click"));
        // Only SLIPS_PER_QUERY unknown words are read (the first in sorted order): one past
        // them is not.
        let unknown =
            |n: usize| -> String { ('a'..='z').take(n).map(|c| format!("bxyzw{c} ")).collect() };
        let most = Bm25::SLIPS_PER_QUERY;
        assert!(names(&index, &tools, &format!("{} clikc", unknown(most)), 1).is_empty());
        assert_eq!(
            names(&index, &tools, &format!("{} clikc", unknown(most - 1)), 1),
            ["browser_click"]
        );
    }

    #[test]
    fn a_tool_named_by_the_query_comes_before_its_namesakes() {
        // Every tool holds "list" and "project"; the one whose name is just those wins,
        // though its description is the longest.
        let tools = [
            text(
                "plane",
                "list_projects",
                "List projects in a workspace, paginated: each with its identifier, name, \
                 description, emoji, cover image and archive date; for more, retrieve it.",
            ),
            text(
                "plane",
                "list_project_members",
                "List the members of a project.",
            ),
            text("plane", "list_labels", "List all labels in a project."),
            text("plane", "list_states", "List all states in a project."),
        ];
        let index = Bm25::new(&tools);
        assert_eq!(names(&index, &tools, "list projects", 1), ["list_projects"]);
        let plain = plain_scores(&index, "list projects");
        assert!(plain[0] < plain[1], "without the bonus it loses: {plain:?}");
    }

    #[test]
    fn a_tool_named_by_the_query_in_other_words_comes_before_one_sharing_a_word() {
        // "make a folder" names `create_directory` in other words; `share_folder` holds
        // "folder" itself, and wins on BM25 alone.
        let tools = [
            text("files", "create_directory", "Create a new directory."),
            text(
                "files",
                "share_folder",
                "Share a folder so others can make changes.",
            ),
            text("files", "read_file", "Read a file."),
            text("files", "move_file", "Move a file to another place."),
        ];
        let index = Bm25::new(&tools);
        assert_eq!(
            names(&index, &tools, "make a folder", 1),
            ["create_directory"]
        );
        let plain = plain_scores(&index, "make a folder");
        assert!(plain[0] < plain[1], "without the bonus it loses: {plain:?}");
        // Said in the name's own words, it still wins.
        assert_eq!(names(&index, &tools, "share a folder", 1), ["share_folder"]);
    }

    #[test]
    fn a_request_framed_as_a_search_for_a_tool_ranks_as_the_request() {
        // Tools that find things, and tools named `…_tool`, match the frame's words.
        let tools = [
            text(
                "files",
                "find_files",
                "Find files whose names match a pattern.",
            ),
            text(
                "maps",
                "nearest_point_tool",
                "Find the nearest point to a place.",
            ),
            text("maps", "distance_tool", "The distance between two places."),
            text(
                "images",
                "resize_image",
                "Resize an image to a width and height.",
            ),
            text("images", "crop_image", "Crop an image to a rectangle."),
        ];
        let index = Bm25::new(&tools);
        let plain = names(&index, &tools, "resize a picture", 5);
        assert_eq!(plain[0], "resize_image");
        for framed in [
            "find a tool that can resize a picture",
            "is there a tool to resize a picture?",
            "search for tools that let me resize a picture",
            "picture resizing tool",
        ] {
            assert_eq!(
                names(&index, &tools, framed, 1),
                ["resize_image"],
                "{framed}"
            );
        }
        assert_eq!(
            names(&index, &tools, "find a tool that can resize a picture", 5),
            plain
        );
    }

    #[test]
    fn a_word_written_in_camel_case_is_found_written_as_one_and_the_other_way_round() {
        let listing = serde_json::json!({"tools": [
            {"name": "browser_evaluate", "inputSchema": {"type": "object"},
             "description": "Evaluate JavaScript expression on page or element"},
            {"name": "run_code", "inputSchema": {"type": "object"},
             "description": "Run a code snippet in the server process."},
            {"name": "search_repositories", "inputSchema": {"type": "object"},
             "description": "Search github repositories by topic."},
            {"name": "search_code", "inputSchema": {"type": "object"},
             "description": "Search code across repositories."},
        ]});
        let tools = listed("dev", &listing);
        let index = Bm25::new(&tools);
        // The description's `JavaScript` is `javascript` too...
        assert_eq!(
            names(&index, &tools, "some javascript", 1),
            ["browser_evaluate"]
        );
        // ...and a query's `GitHub` is `github`.
        assert_eq!(
            names(&index, &tools, "search GitHub for rust", 1),
            ["search_repositories"]
        );
    }

    #[test]
    fn a_word_as_written_counts_beside_its_stem() {
        let listing = serde_json::json!({"tools": [
            {"name": "drop_collection", "inputSchema": {"type": "object"},
             "description": "Removes a collection from a database."},
            {"name": "list_collections", "inputSchema": {"type": "object"},
             "description": "List all collections for a database."},
            {"name": "create_collection", "inputSchema": {"type": "object"},
             "description": "Creates a collection in a database."},
            {"name": "find", "inputSchema": {"type": "object"},
             "description": "Run a find query against a collection."},
        ]});
        let tools = listed("mongodb", &listing);
        let index = Bm25::new(&tools);
        // The plural is the list's: by stems alone, three tools hold "collection" and
        // "database" alike, and `create_collection` came first.
        assert_eq!(
            names(
                &index,
                &tools,
                "what collections are in the shop database",
                1
            ),
            ["list_collections"]
        );
        // A slip of the keys is read as the word meant, form and all.
        assert_eq!(
            index
                .rank("what colletcions are in the shop database", 4)
                .unwrap(),
            index
                .rank("what collections are in the shop database", 4)
                .unwrap()
        );
        // A form matches only itself: the singular still finds what its stem finds.
        assert_eq!(
            names(&index, &tools, "remove a collection", 1),
            ["drop_collection"]
        );
        // A form never lengthens a tool: without their forms, the tools measure the same.
        let bare: Vec<ToolText> = tools
            .iter()
            .cloned()
            .map(|mut tool| {
                for terms in [
                    &mut tool.name_terms,
                    &mut tool.body_terms,
                    &mut tool.summary_terms,
                ] {
                    terms.retain(|term| !term.starts_with(FORM_MARK));
                }
                tool
            })
            .collect();
        assert_ne!(bare, tools);
        assert_eq!(Bm25::new(&bare).lengths, index.lengths);
    }

    #[test]
    fn ties_break_by_server_then_name_and_the_order_never_changes() {
        let tools = [
            text("b", "sync", "Sync now."),
            text("a", "sync", "Sync now."),
            text("a", "async", "Sync now."),
        ];
        let index = Bm25::new(&tools);
        let first = index.rank("sync now", 3).unwrap();
        for _ in 0..10 {
            assert_eq!(index.rank("sync now", 3).unwrap(), first);
        }
        let order: Vec<(&str, &str)> = first
            .iter()
            .map(|h| (tools[h.index].server.as_str(), tools[h.index].tool.as_str()))
            .collect();
        // "sync" in the name of two: they lead, "a" before "b".
        assert_eq!(order, [("a", "sync"), ("b", "sync"), ("a", "async")]);
    }
}
