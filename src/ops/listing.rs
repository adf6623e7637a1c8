//! Paginated listings (`tools/list`, `resources/list`, `prompts/list`), bounded in pages and
//! items, refusing a cursor that repeats.

use alloc::collections::BTreeSet;
use alloc::{string::String, vec::Vec};

use crate::catalog::{CatalogBuilder, CatalogPolicy};
use crate::error::{Error, ProtocolViolation};
use crate::event::Output;
use crate::json::view::{Elements, JsonRef, Object};
use crate::method::ListKind;
use crate::results::{Prompt, Resource};
use crate::server::CacheHint;
use crate::version::Era;
use crate::Limits;

use super::{Context, Machine, Next, Step};

#[derive(Debug)]
enum Collected {
    Tools(CatalogBuilder),
    Resources(Vec<Resource>),
    Prompts(Vec<Prompt>),
}

/// One listing in progress, across its pages.
#[derive(Debug)]
pub(crate) struct Listing {
    kind: ListKind,
    /// The session's era, which decides what an empty cursor means.
    era: Era,
    pages: usize,
    cursors: BTreeSet<String>,
    collected: Collected,
    cache: Option<CacheHint>,
}

/// What a page says comes next.
enum Page {
    /// Ask for the page at this cursor.
    Next(String),
    /// That was the last page.
    Done,
}

impl Listing {
    /// A listing of `kind` in a session of `era`; with `header_markers`, tools whose
    /// `x-mcp-header` markers break the rules are quarantined whatever the policy.
    pub(crate) fn new(
        kind: ListKind,
        policy: CatalogPolicy,
        era: Era,
        header_markers: bool,
    ) -> Self {
        let collected = match kind {
            ListKind::Tools => {
                Collected::Tools(CatalogBuilder::new(policy).header_markers(header_markers))
            }
            ListKind::Resources => Collected::Resources(Vec::new()),
            ListKind::Prompts => Collected::Prompts(Vec::new()),
        };
        Listing {
            kind,
            era,
            pages: 0,
            cursors: BTreeSet::new(),
            collected,
            cache: None,
        }
    }

    /// Takes one page. In 2026-07-28 an empty cursor is a cursor; before it, the end.
    fn page(&mut self, result: &Object<'_>, limits: &Limits) -> Result<Page, Error> {
        let kind = self.kind;
        let invalid = |problem| kind.invalid(problem);
        self.pages += 1;
        self.cache = CacheHint::merge(self.cache, CacheHint::read(result));
        // One walk over the page: the list is read where it lies, not skipped to find the
        // cursor and walked again.
        let (mut listed, mut next) = (None, None);
        let mut members = result.cursor();
        while let Some(key) = members.key() {
            if key == self.kind.capability() {
                listed = members.array(|items| self.collect(items, limits));
            } else if key == "nextCursor" {
                next = Some(members.value());
            } else {
                members.value();
            }
        }
        listed.ok_or_else(|| invalid("the list is not an array"))??;
        let cursor = match next {
            None => return Ok(Page::Done),
            Some(cursor) if cursor.is_null() => return Ok(Page::Done),
            Some(cursor) => cursor
                .as_str()
                .ok_or_else(|| invalid("nextCursor is not a string"))?,
        };
        if cursor.is_empty() && self.era == Era::Stateful {
            return Ok(Page::Done);
        }
        if !self.cursors.insert(String::from(cursor.as_ref())) {
            return Err(ProtocolViolation::RepeatedCursor.into());
        }
        if self.pages >= limits.pages_per_listing {
            return Err(ProtocolViolation::TooManyPages {
                limit: limits.pages_per_listing,
            }
            .into());
        }
        Ok(Page::Next(String::from(cursor)))
    }

    /// Adds one page's items to what was collected, within the limits.
    fn collect(&mut self, items: &mut Elements<'_>, limits: &Limits) -> Result<(), Error> {
        let kind = self.kind;
        let invalid = |problem| kind.invalid(problem);
        let too_many = |limit| Error::Protocol(ProtocolViolation::TooManyItems { limit });
        for item in items {
            match &mut self.collected {
                Collected::Tools(builder) => add_tool(builder, item, limits)?,
                Collected::Resources(list) => {
                    if list.len() >= limits.items_per_listing {
                        return Err(too_many(limits.items_per_listing));
                    }
                    list.push(Resource::read(item).map_err(invalid)?);
                }
                Collected::Prompts(list) => {
                    if list.len() >= limits.items_per_listing {
                        return Err(too_many(limits.items_per_listing));
                    }
                    list.push(Prompt::read(item).map_err(invalid)?);
                }
            }
        }
        Ok(())
    }

    /// Everything collected, as the listing's output; the listing is empty afterwards.
    fn take(&mut self) -> Output {
        let empty = Collected::Resources(Vec::new());
        match core::mem::replace(&mut self.collected, empty) {
            Collected::Tools(builder) => Output::ListTools(builder.finish(self.cache)),
            Collected::Resources(list) => Output::ListResources(list),
            Collected::Prompts(list) => Output::ListPrompts(list),
        }
    }
}

impl ListKind {
    /// This listing's result is invalid: `problem` says how.
    fn invalid(self, problem: &'static str) -> Error {
        Error::Protocol(ProtocolViolation::InvalidResult {
            method: self.method(),
            problem,
        })
    }
}

impl Machine for Listing {
    fn on_result(&mut self, result: &Object<'_>, ctx: &Context<'_>) -> Step {
        match self.page(result, ctx.limits) {
            Err(error) => Step::Fail(error),
            Ok(Page::Next(cursor)) => Step::Send(Next::Page {
                kind: self.kind,
                cursor,
            }),
            Ok(Page::Done) => Step::Done(self.take()),
        }
    }
}

impl crate::catalog::Catalog {
    /// Reads a catalog from JSON in the shape of one `tools/list` result (what
    /// [`Catalog::to_json`](crate::Catalog::to_json) writes, or a cache of a server's
    /// answer), validated and bounded exactly as a listing from the server is. A
    /// `nextCursor` is ignored: this reads one page.
    ///
    /// # Errors
    /// [`Misuse::InvalidJson`](crate::Misuse) or [`Misuse::NotAnObject`](crate::Misuse) for
    /// text that is not a JSON object; otherwise what a listing would fail with (an invalid
    /// tool under [`CatalogPolicy::STRICT`], too many tools).
    pub fn from_json(text: &str, policy: CatalogPolicy, limits: &Limits) -> Result<Self, Error> {
        let raw = crate::json::RawObject::parse(text, limits)?;
        let result = Object::of(&raw);
        let items = result
            .get(ListKind::Tools.capability())
            .and_then(JsonRef::as_array)
            .ok_or(ProtocolViolation::InvalidResult {
                method: ListKind::Tools.method(),
                problem: "the list is not an array",
            })?;
        let mut builder = CatalogBuilder::new(policy);
        for item in items {
            add_tool(&mut builder, item, limits)?;
        }
        Ok(builder.finish(CacheHint::read(&result)))
    }
}

/// Adds one listed tool to `builder`, within [`Limits::tools_per_catalog`].
fn add_tool(builder: &mut CatalogBuilder, item: JsonRef<'_>, limits: &Limits) -> Result<(), Error> {
    if builder.seen() >= limits.tools_per_catalog {
        return Err(ProtocolViolation::TooManyItems {
            limit: limits.tools_per_catalog,
        }
        .into());
    }
    builder
        .push(item)
        .map_err(|(index, reason)| ProtocolViolation::InvalidTool { index, reason }.into())
}

#[cfg(feature = "serde")]
impl<'de> serde::Deserialize<'de> for crate::catalog::Catalog {
    /// Reads what [`Catalog::to_json`](crate::Catalog::to_json) writes, through
    /// [`Catalog::from_json`](crate::Catalog::from_json) under the strict policy and the
    /// default limits.
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        use serde::de::Error as _;
        let raw = <crate::json::RawObject as serde::Deserialize>::deserialize(deserializer)?;
        Self::from_json(raw.as_str(), CatalogPolicy::STRICT, &Limits::default())
            .map_err(D::Error::custom)
    }
}
