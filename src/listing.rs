//! Paginated listings (`tools/list`, `resources/list`, `prompts/list`), bounded in pages and
//! items, refusing a cursor that repeats.

use alloc::collections::BTreeSet;
use alloc::{string::String, vec::Vec};

use crate::catalog::{CatalogBuilder, CatalogPolicy};
use crate::client::Output;
use crate::content::{CacheHint, Prompt, Resource, ServerCapabilities};
use crate::error::{Error, ProtocolViolation};
use crate::version::Era;
use crate::view::{JsonRef, Object};
use crate::Limits;

/// What a listing lists.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ListKind {
    /// Tools.
    Tools,
    /// Resources.
    Resources,
    /// Prompts.
    Prompts,
}

impl ListKind {
    /// The listing's method, such as `tools/list`.
    pub fn method(self) -> &'static str {
        match self {
            ListKind::Tools => "tools/list",
            ListKind::Resources => "resources/list",
            ListKind::Prompts => "prompts/list",
        }
    }

    /// The server capability the listing needs.
    pub fn capability(self) -> &'static str {
        match self {
            ListKind::Tools => "tools",
            ListKind::Resources => "resources",
            ListKind::Prompts => "prompts",
        }
    }

    pub(crate) fn offered(self, capabilities: &ServerCapabilities) -> bool {
        match self {
            ListKind::Tools => capabilities.tools,
            ListKind::Resources => capabilities.resources,
            ListKind::Prompts => capabilities.prompts,
        }
    }
}

#[derive(Debug)]
enum Collected {
    Tools(CatalogBuilder),
    Resources(Vec<Resource>),
    Prompts(Vec<Prompt>),
}

/// What a page says comes next.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Page {
    /// Ask for the page at this cursor.
    Next(String),
    /// That was the last page.
    Done,
}

/// One listing in progress, across its pages.
#[derive(Debug)]
pub(crate) struct Listing {
    kind: ListKind,
    pages: usize,
    cursors: BTreeSet<String>,
    collected: Collected,
    cache: Option<CacheHint>,
}

impl Listing {
    pub(crate) fn new(kind: ListKind, policy: CatalogPolicy) -> Self {
        let collected = match kind {
            ListKind::Tools => Collected::Tools(CatalogBuilder::new(policy)),
            ListKind::Resources => Collected::Resources(Vec::new()),
            ListKind::Prompts => Collected::Prompts(Vec::new()),
        };
        Listing {
            kind,
            pages: 0,
            cursors: BTreeSet::new(),
            collected,
            cache: None,
        }
    }

    pub(crate) fn kind(&self) -> ListKind {
        self.kind
    }

    /// Takes one page. In 2026-07-28 an empty cursor is a cursor; before it, the end.
    pub(crate) fn page(
        &mut self,
        result: &Object<'_>,
        era: Era,
        limits: &Limits,
    ) -> Result<Page, Error> {
        let method = self.kind.method();
        let invalid =
            |problem| Error::Protocol(ProtocolViolation::InvalidResult { method, problem });
        self.pages += 1;
        self.cache = CacheHint::merge(self.cache, CacheHint::read(result));
        let items = result
            .get(self.kind.capability())
            .and_then(JsonRef::as_array)
            .ok_or_else(|| invalid("the list is not an array"))?;
        let too_many = |limit| Error::Protocol(ProtocolViolation::TooManyItems { limit });
        for item in items {
            match &mut self.collected {
                Collected::Tools(builder) => {
                    if builder.seen() >= limits.tools_per_catalog {
                        return Err(too_many(limits.tools_per_catalog));
                    }
                    builder.push(item).map_err(|(index, reason)| {
                        ProtocolViolation::InvalidTool { index, reason }
                    })?;
                }
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
        let cursor = match result.get("nextCursor") {
            None => return Ok(Page::Done),
            Some(cursor) if cursor.is_null() => return Ok(Page::Done),
            Some(cursor) => cursor
                .as_str()
                .ok_or_else(|| invalid("nextCursor is not a string"))?,
        };
        if cursor.is_empty() && era == Era::Legacy {
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

    pub(crate) fn finish(self) -> Output {
        match self.collected {
            Collected::Tools(builder) => Output::Tools(builder.finish(self.cache)),
            Collected::Resources(list) => Output::Resources(list),
            Collected::Prompts(list) => Output::Prompts(list),
        }
    }
}
