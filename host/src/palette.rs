//! One palette over many servers: which tools the model hears of, under which names, and
//! the server and tool behind each name.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use mcp_sansio::{Allowlist, Catalog, CatalogPolicy, InvalidTools, Limits, QuarantinedTool, Tool};
use serde_json::Value;

use crate::names::{fits_providers, Names};
use crate::offer::OfferOptions;
use crate::schema::Schema;

/// The longest server id: ids prefix tool names (see [`crate::names`]), so they stay short.
pub const MAX_SERVER_ID: usize = 32;

/// How a palette reads catalogs and offers tools.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct PaletteConfig {
    /// What to do with an allowed tool whose schema does not compile: refuse the server's
    /// whole catalog ([`InvalidTools::Refuse`], the default) or leave the tool out and report
    /// it ([`InvalidTools::Quarantine`]). The core applied the same policy to the catalog's
    /// shape before it got here.
    pub policy: CatalogPolicy,
    /// How tools are offered, and so how arguments are read back.
    pub offer: OfferOptions,
    /// Bounds on a model's argument text, as on anything else this crate parses. Its
    /// `nesting_depth` is also the deepest value a schema's cost is reckoned to.
    pub limits: Limits,
    /// The most subschemas one value of a tool's arguments or result may be checked against,
    /// worst case. Default: 1,000.
    ///
    /// A server's schema can make checking multiply: twenty `anyOf`s of two branches, each
    /// `$ref`-ing the next, check a value that fails them against 2^20 subschemas, and
    /// branches that each descend into one property double the work at every level of the
    /// value. Each schema's worst case is reckoned when its catalog arrives (following
    /// `allOf`, `anyOf`, `oneOf`, `not`, `if`/`then`/`else` and `$ref`, down to
    /// `limits.nesting_depth`), and a schema that could need more does not compile: its tool
    /// is refused as `policy` says. Of the 2,408 input and output schemas of the 1,688 real
    /// tools in the labelled search sets, the costliest needs 32 (`host/tests/real_schemas.rs`
    /// holds every one of them to compiling).
    pub schema_checks: u64,
    /// The most JSON objects one input or output schema may hold: each subschema is one, and
    /// so is each `properties` or `$defs` map. Default: 5,000.
    ///
    /// Compiling a schema costs more than reading it: over ten thousand `$defs` that `$ref`
    /// one another `jsonschema` took 0.22 s, and 2.2 s over forty thousand, which one 8 MiB
    /// listing can hold. The largest schema of the labelled sets' real tools holds 444
    /// (Plane's intake work items). A larger one does not compile.
    pub schema_objects: usize,
    /// The most steps a schema's `pattern` may backtrack on one string. Default: 100,000.
    ///
    /// Patterns with lookaround or backreferences (which real schemas use) are matched by
    /// backtracking, and a pattern such as `^(a|a)+(?=b)$` backtracks exponentially on a
    /// string of `a`s: at `fancy-regex`'s own bound, a million steps, one string took 22 ms,
    /// and each of thousands of items may be checked. At this bound it takes 2 ms, and a real
    /// schema's lookahead pattern still matches a 90,000-character string. A string whose
    /// match would need more is refused ("cannot be checked: the server's pattern takes too
    /// long to match"), never passed.
    pub pattern_backtracks: usize,
}

impl Default for PaletteConfig {
    fn default() -> Self {
        PaletteConfig {
            policy: CatalogPolicy::default(),
            offer: OfferOptions::default(),
            limits: Limits::default(),
            schema_checks: 1_000,
            schema_objects: 5_000,
            pattern_backtracks: 100_000,
        }
    }
}

/// A palette: the allowed tools of every server added, under names every provider accepts.
#[derive(Debug, Default)]
pub struct Palette {
    pub(crate) config: PaletteConfig,
    servers: BTreeMap<String, Server>,
    routes: BTreeMap<String, Route>,
    names: Names,
    /// The model-facing names shown to the model in disclosure mode (see
    /// [`Palette::offer_disclosed`]).
    pub(crate) disclosed: BTreeSet<String>,
}

#[derive(Debug)]
struct Server {
    allowlist: Allowlist,
    tools: BTreeMap<String, Entry>,
    /// Allowed tools of its last catalog left out for their schemas.
    quarantined: Vec<SchemaRejection>,
    /// Allowed tools its last listing had in a form the core left out of the catalog.
    listing: Vec<QuarantinedTool>,
}

/// One offered tool.
#[derive(Debug)]
pub(crate) struct Entry {
    pub(crate) name: String,
    pub(crate) tool: Tool,
    pub(crate) input: Schema,
    pub(crate) output: Option<Schema>,
    /// The input schema as JSON, for offers.
    pub(crate) schema: Value,
}

#[derive(Debug)]
struct Route {
    server: String,
    tool: String,
}

/// A tool of the palette as the model sees it, with what stands behind it.
#[derive(Clone, Copy, Debug)]
#[non_exhaustive]
pub struct PaletteTool<'p> {
    /// The name the model calls it by.
    pub name: &'p str,
    /// The id of the server behind it.
    pub server: &'p str,
    /// The tool as its server described it.
    pub tool: &'p Tool,
}

/// What adding or updating a server did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct ServerReport {
    /// The names the model is now offered from this server, sorted.
    pub offered: Vec<String>,
    /// Allowed tools left out because a schema of theirs does not compile (only under
    /// [`InvalidTools::Quarantine`]).
    pub quarantined: Vec<SchemaRejection>,
    /// Allowed tools the server listed in a form the core left out of the catalog
    /// ([`Catalog::quarantined`]: the wrong `inputSchema`, a repeated name, a field of the
    /// wrong type; only under [`InvalidTools::Quarantine`]). A tool is allowed by name, so one
    /// listed without a name is never among them.
    pub listing: Vec<QuarantinedTool>,
}

/// An allowed tool the offer leaves out, and why (only under [`InvalidTools::Quarantine`]):
/// see [`Palette::left_out`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum LeftOut<'p> {
    /// The server listed it in a form the core left out of the catalog.
    Listing {
        /// The id of the server that listed it.
        server: &'p str,
        /// The tool, with its place in the listing and why it was left out.
        tool: &'p QuarantinedTool,
    },
    /// A schema of its does not compile.
    Schema(&'p SchemaRejection),
}

impl<'p> LeftOut<'p> {
    /// The id of the server that listed it.
    pub fn server(&self) -> &'p str {
        match *self {
            LeftOut::Listing { server, .. } => server,
            LeftOut::Schema(rejection) => &rejection.server,
        }
    }

    /// The tool's name as its server gave it.
    pub fn tool(&self) -> &'p str {
        match *self {
            LeftOut::Listing { tool, .. } => tool.name.as_deref().unwrap_or_default(),
            LeftOut::Schema(rejection) => &rejection.tool,
        }
    }
}

impl fmt::Display for LeftOut<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LeftOut::Listing { server, tool } => write!(
                f,
                "server \"{server}\" listed tool \"{}\" in a form the client refuses: {}",
                self.tool(),
                tool.reason
            ),
            LeftOut::Schema(rejection) => rejection.fmt(f),
        }
    }
}

/// An allowed tool whose input or output schema does not compile.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct SchemaRejection {
    /// The id of the server that listed it.
    pub server: String,
    /// The tool's name as its server gave it.
    pub tool: String,
    /// What the compiler said.
    pub reason: String,
}

impl fmt::Display for SchemaRejection {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "the schema of tool \"{}\" from server \"{}\" does not compile: {}",
            self.tool, self.server, self.reason
        )
    }
}

/// Why the application's request to the palette was refused; the palette is unchanged.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum PaletteError {
    /// A server id must be 1 to 32 characters from `A-Z a-z 0-9 _ -`.
    InvalidServerId(String),
    /// Under [`InvalidTools::Refuse`], an allowed tool's schema does not compile, so the
    /// server's catalog is refused whole.
    Schema(SchemaRejection),
}

impl fmt::Display for PaletteError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PaletteError::InvalidServerId(id) => write!(
                f,
                "server id {id:?} is not 1 to {MAX_SERVER_ID} characters from A-Z a-z 0-9 _ -"
            ),
            PaletteError::Schema(rejection) => write!(f, "{rejection}; the catalog is refused"),
        }
    }
}

impl std::error::Error for PaletteError {}

impl Palette {
    /// An empty palette.
    pub fn new(config: PaletteConfig) -> Self {
        Palette {
            config,
            ..Palette::default()
        }
    }

    /// Adds server `id` with what it advertises and what the application allows of it, or
    /// replaces what an earlier call said (a new catalog after `list_changed`, or a new
    /// allowlist). Only tools that are both advertised and allowed get a name. Tools that
    /// stay keep their names; tools that go lose theirs; new tools are named by the rule in
    /// [`crate::names`].
    pub fn set_server(
        &mut self,
        id: &str,
        allowlist: &Allowlist,
        catalog: &Catalog,
    ) -> Result<ServerReport, PaletteError> {
        if id.len() > MAX_SERVER_ID || !fits_providers(id) {
            return Err(PaletteError::InvalidServerId(id.to_owned()));
        }
        let listing: Vec<QuarantinedTool> = catalog
            .quarantined()
            .iter()
            .filter(|tool| {
                tool.name
                    .as_deref()
                    .is_some_and(|name| allowlist.allows(name))
            })
            .cloned()
            .collect();
        let mut compiled = Vec::new();
        let mut quarantined = Vec::new();
        for tool in catalog.offered(allowlist) {
            match compile(tool, &self.config) {
                Ok(schemas) => compiled.push((tool, schemas)),
                Err(reason) => {
                    let rejection = SchemaRejection {
                        server: id.to_owned(),
                        tool: tool.name.clone(),
                        reason,
                    };
                    match self.config.policy.invalid_tools {
                        InvalidTools::Quarantine => quarantined.push(rejection),
                        _ => return Err(PaletteError::Schema(rejection)),
                    }
                }
            }
        }
        let mut old = self
            .servers
            .remove(id)
            .map(|server| server.tools)
            .unwrap_or_default();
        let mut tools = BTreeMap::new();
        for (tool, (input, output, schema)) in compiled {
            let name = match old.remove(&tool.name) {
                Some(kept) => kept.name,
                None => {
                    let name = self.names.assign(id, &tool.name);
                    self.routes.insert(
                        name.clone(),
                        Route {
                            server: id.to_owned(),
                            tool: tool.name.clone(),
                        },
                    );
                    name
                }
            };
            let entry = Entry {
                name,
                tool: tool.clone(),
                input,
                output,
                schema,
            };
            tools.insert(tool.name.clone(), entry);
        }
        for gone in old.into_values() {
            self.forget(&gone.name);
        }
        let mut offered: Vec<String> = tools.values().map(|e| e.name.clone()).collect();
        offered.sort();
        self.servers.insert(
            id.to_owned(),
            Server {
                allowlist: allowlist.clone(),
                tools,
                quarantined: quarantined.clone(),
                listing: listing.clone(),
            },
        );
        Ok(ServerReport {
            offered,
            quarantined,
            listing,
        })
    }

    /// Removes server `id` and every name its tools had. Returns whether it was there.
    pub fn remove_server(&mut self, id: &str) -> bool {
        let Some(server) = self.servers.remove(id) else {
            return false;
        };
        for entry in server.tools.into_values() {
            self.forget(&entry.name);
        }
        true
    }

    fn forget(&mut self, name: &str) {
        self.routes.remove(name);
        self.names.release(name);
        // A freed name may be given to another tool, which the model has not been shown.
        self.disclosed.remove(name);
    }

    /// The ids of the servers in the palette, sorted.
    pub fn servers(&self) -> impl Iterator<Item = &str> {
        self.servers.keys().map(String::as_str)
    }

    /// The allowed tools left out of the offer for their schemas, as each server's last
    /// catalog had them (only under [`InvalidTools::Quarantine`]), by server id: what a host
    /// that takes catalogs as they change has to show for the reports it did not keep.
    pub fn quarantined(&self) -> impl Iterator<Item = &SchemaRejection> {
        self.servers.values().flat_map(|server| &server.quarantined)
    }

    /// Every allowed tool the offer leaves out, and why, as each server's last catalog had
    /// them (only under [`InvalidTools::Quarantine`]), by server id: those the server listed
    /// in a form the core refused ([`ServerReport::listing`]), then those whose schemas do not
    /// compile ([`Palette::quarantined`]). What an application reads to learn why a tool it
    /// allowed is not offered.
    pub fn left_out(&self) -> impl Iterator<Item = LeftOut<'_>> {
        self.servers.iter().flat_map(|(id, server)| {
            let listing = server
                .listing
                .iter()
                .map(move |tool| LeftOut::Listing { server: id, tool });
            listing.chain(server.quarantined.iter().map(LeftOut::Schema))
        })
    }

    /// Every offered tool, sorted by the name the model calls it by.
    pub fn tools(&self) -> impl Iterator<Item = PaletteTool<'_>> {
        self.routes.keys().filter_map(|name| {
            let (server, entry) = self.entry(name)?;
            Some(PaletteTool {
                name: &entry.name,
                server,
                tool: &entry.tool,
            })
        })
    }

    /// The server and tool behind model-facing name `name`, if it is offered.
    pub fn route(&self, name: &str) -> Option<PaletteTool<'_>> {
        let (server, entry) = self.entry(name)?;
        Some(PaletteTool {
            name: &entry.name,
            server,
            tool: &entry.tool,
        })
    }

    pub(crate) fn entry(&self, name: &str) -> Option<(&str, &Entry)> {
        let route = self.routes.get(name)?;
        let (server_id, server) = self.servers.get_key_value(&route.server)?;
        let entry = server.tools.get(&route.tool)?;
        Some((server_id, entry))
    }

    /// Whether the application allows `tool` on server `id`: the allowlist, asked again.
    pub(crate) fn allows(&self, id: &str, tool: &str) -> bool {
        self.servers
            .get(id)
            .is_some_and(|server| server.allowlist.allows(tool))
    }

    /// The offered entry of `tool` from server `id`, by the server's own names.
    pub(crate) fn entry_of(&self, id: &str, tool: &str) -> Option<&Entry> {
        self.servers.get(id)?.tools.get(tool)
    }

    pub(crate) fn entries(&self) -> impl Iterator<Item = &Entry> {
        self.routes
            .keys()
            .filter_map(|name| self.entry(name).map(|(_, e)| e))
    }
}

type Compiled = (Schema, Option<Schema>, Value);

fn compile(tool: &Tool, config: &PaletteConfig) -> Result<Compiled, String> {
    let schema: Value = tool
        .input_schema
        .deserialize()
        .map_err(|e| format!("inputSchema: {e}"))?;
    let input = Schema::compile(&schema, config).map_err(|e| format!("inputSchema: {e}"))?;
    let output = match &tool.output_schema {
        None => None,
        Some(raw) => {
            let value: Value = raw
                .deserialize()
                .map_err(|e| format!("outputSchema: {e}"))?;
            Some(Schema::compile(&value, config).map_err(|e| format!("outputSchema: {e}"))?)
        }
    };
    Ok((input, output, schema))
}
