//! `mcp-palette`, through the real binary: what `rank` prints, what `eval` measures, and
//! the refusals of files that are not what they say.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};

const CATALOG: &str = r#"{"servers":[
 {"server":"weather","tools":[
  {"name":"get_forecast","description":"Forecast for a city.","inputSchema":{"type":"object","properties":{"city":{"type":"string"}}}},
  {"name":"get_alerts","description":"Severe weather alerts for a US state.","inputSchema":{"type":"object"}}]},
 {"server":"files","tools":[
  {"name":"read_file","description":"Read a file from the workspace.","inputSchema":{"type":"object"}},
  {"name":"write_file","description":"Write a file to the workspace.","inputSchema":{"type":"object"}},
  {"name":"untyped","description":"A schema without a type, as some servers list.","inputSchema":{}}]}]}"#;

const QUERIES: &str = r#"{"query":"will it rain in Lyon tomorrow","expect":[["weather","get_forecast"]],"kind":"paraphrase"}
{"query":"keep this text for later","expect":[["files","write_file"]],"kind":"paraphrase"}
{"query":"read the file README","expect":[["files","read_file"]],"kind":"literal"}
{"query":"any storm warnings in Texas","expect":[["weather","get_alerts"],["weather","get_forecast"]]}
"#;

/// A file the test wrote under the temporary folder, removed when dropped.
struct Scratch(PathBuf);

impl std::ops::Deref for Scratch {
    type Target = Path;

    fn deref(&self) -> &Path {
        &self.0
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// `text` in a file of its own: tests running side by side may write the same `name`.
fn write(name: &str, text: &str) -> Scratch {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    let path = std::env::temp_dir().join(format!("mcp-palette-{}-{n}-{name}", std::process::id()));
    std::fs::write(&path, text).unwrap();
    Scratch(path)
}

fn palette(args: &[&str]) -> (Option<i32>, String, String) {
    // No model folder from the environment: the rankers that need one must be asked for it.
    let output = Command::new(env!("CARGO_BIN_EXE_mcp-palette"))
        .args(args)
        .env_remove("MCP_PALETTE_MODEL")
        .output()
        .unwrap();
    (
        output.status.code(),
        String::from_utf8(output.stdout).unwrap(),
        String::from_utf8(output.stderr).unwrap(),
    )
}

/// `mcp-palette eval` of `queries` against `catalog`, with `more` arguments.
fn eval(catalog: &Path, queries: &Path, more: &[&str]) -> (Option<i32>, String, String) {
    let mut args = vec![
        "eval",
        "--catalog",
        catalog.to_str().unwrap(),
        "--queries",
        queries.to_str().unwrap(),
    ];
    args.extend_from_slice(more);
    palette(&args)
}

#[test]
fn rank_prints_server_tool_and_score_best_first() {
    let catalog = write("rank.json", CATALOG);
    let (code, out, err) = palette(&[
        "rank",
        "--catalog",
        catalog.to_str().unwrap(),
        "--top",
        "2",
        // Not an order ("write a file" would discount `read_file`, which reads).
        "a",
        "file",
        "to",
        "write",
    ]);
    assert_eq!(code, Some(0), "{err}");
    let lines: Vec<Vec<&str>> = out.lines().map(|l| l.split('\t').collect()).collect();
    assert_eq!(lines.len(), 2, "{out}");
    assert_eq!(lines[0][..2], ["files", "write_file"]);
    assert_eq!(lines[1][..2], ["files", "read_file"]);
    let scores: Vec<f64> = lines.iter().map(|l| l[2].parse().unwrap()).collect();
    assert!(scores[0] > scores[1], "{out}");
    // The untyped schema is read as an object schema, not a reason to refuse the catalog.
    let (code, out, _) = palette(&[
        "rank",
        "--catalog",
        catalog.to_str().unwrap(),
        "without",
        "type",
    ]);
    assert_eq!(code, Some(0));
    assert!(out.starts_with("files\tuntyped\t"), "{out}");
}

#[test]
fn eval_prints_recall_with_its_interval_overall_and_per_kind() {
    let catalog = write("eval.json", CATALOG);
    let queries = write("eval.jsonl", QUERIES);
    let (code, out, err) = eval(&catalog, &queries, &["--k", "1,5"]);
    assert_eq!(code, Some(0), "{err}");
    // Overall, then each kind, one line per k. BM25 finds the literal request and misses
    // the paraphrases, which share no word with their tools: what semantic ranking is for.
    assert_eq!(
        out,
        "recall@1 0.250 [0.046, 0.699] n=4\n\
         recall@5 0.250 [0.046, 0.699] n=4\n\
         recall@1 1.000 [0.207, 1.000] n=1 kind=literal\n\
         recall@5 1.000 [0.207, 1.000] n=1 kind=literal\n\
         recall@1 0.000 [0.000, 0.658] n=2 kind=paraphrase\n\
         recall@5 0.000 [0.000, 0.658] n=2 kind=paraphrase\n"
    );
    // The ks written with spaces and the ranker in capitals, as a script may write them.
    let (code, spaced, err) = eval(&catalog, &queries, &["--k", "1, 5", "--ranker", "BM25"]);
    assert_eq!((code, err.as_str()), (Some(0), ""));
    assert_eq!(spaced, out);
    let (code, _, err) = eval(&catalog, &queries, &["--k", "1,0"]);
    assert_eq!(code, Some(2));
    assert!(
        err.contains("\"0\" is not a whole number of at least 1"),
        "{err}"
    );
}

#[test]
fn eval_lists_the_misses_with_what_was_found_instead() {
    let catalog = write("misses.json", CATALOG);
    let queries = write(
        "misses.jsonl",
        "{\"query\":\"the file\\tREADME to write\",\"expect\":[[\"files\",\"read_file\"]]}\n\
         {\"query\":\"read the file README\",\"expect\":[[\"files\",\"read_file\"]]}\n\
         {\"query\":\"will it rain in Lyon\",\"expect\":[[\"weather\",\"get_forecast\"],[\"files\",\"read_file\"]]}\n",
    );
    let (code, out, err) = eval(&catalog, &queries, &["--k", "5", "--misses", "1"]);
    assert_eq!(code, Some(0), "{err}");
    // Recall at k first, then one line per query missed at the misses' own depth: the query
    // on one line, every expected tool, and the tools ranked first instead (none, when no
    // word of the query is in the catalog).
    assert_eq!(
        out,
        "recall@5 0.667 [0.208, 0.939] n=3\n\
         miss\tthe file README to write\tfiles/read_file\tfiles/write_file\n\
         miss\twill it rain in Lyon\tweather/get_forecast,files/read_file\t\n"
    );
    // Deeper, the first query's tool is found too.
    let (_, out, _) = eval(&catalog, &queries, &["--k", "1", "--misses", "2"]);
    assert!(
        !out.contains("the file README") && out.contains("miss\twill it rain"),
        "{out}"
    );
    // Depth 0 cannot hold a hit: a usage error, not a list of every query, nor a recall@0.
    let (code, _, err) = eval(&catalog, &queries, &["--misses", "0"]);
    assert_eq!(code, Some(2), "{err}");
    let (code, _, err) = eval(&catalog, &queries, &["--k", "5,0"]);
    assert_eq!(code, Some(2), "{err}");
}

#[test]
fn eval_can_rank_each_query_among_a_few_tools_drawn_for_it() {
    // The first labelled set: 365 tools, 251 queries.
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/search");
    let (catalog, queries) = (data.join("catalog.json"), data.join("queries.jsonl"));
    let recall_at_5 = |out: &str| -> f64 {
        let line = out.lines().find(|l| l.starts_with("recall@5 ")).unwrap();
        line.split(' ').nth(1).unwrap().parse().unwrap()
    };
    let (code, whole, err) = eval(&catalog, &queries, &[]);
    assert_eq!(code, Some(0), "{err}");
    let (code, drawn, err) = eval(&catalog, &queries, &["--tools", "64"]);
    assert_eq!(code, Some(0), "{err}");
    // Among 64 tools the expected one is found more often than among 365.
    assert!(
        recall_at_5(&drawn) > recall_at_5(&whole) + 0.05,
        "{drawn}\n{whole}"
    );
    // Every query is measured, each in its own draw.
    assert!(
        drawn.lines().take(3).all(|l| l.ends_with(" n=251")),
        "{drawn}"
    );
    // The same seed draws the same tools; another seed, others.
    assert_eq!(eval(&catalog, &queries, &["--tools", "64"]).1, drawn);
    let (_, seed_1, _) = eval(&catalog, &queries, &["--tools", "64", "--seed", "1"]);
    assert_ne!(seed_1, drawn);
    // As many tools as the catalog holds, or more: the catalog itself.
    assert_eq!(eval(&catalog, &queries, &["--tools", "365"]).1, whole);
    assert_eq!(eval(&catalog, &queries, &["--tools", "100000"]).1, whole);
    // Among two tools, a query that misses has one tool in its place at most: the draw
    // holds its expected tools and one other.
    let (_, out, _) = eval(&catalog, &queries, &["--tools", "2", "--misses", "5"]);
    for miss in out.lines().filter(|l| l.starts_with("miss\t")) {
        let instead = miss.rsplit('\t').next().unwrap();
        assert!(!instead.contains(','), "{miss}");
    }
    // No tools, or a seed without a draw: usage errors.
    assert_eq!(eval(&catalog, &queries, &["--tools", "0"]).0, Some(2));
    assert_eq!(eval(&catalog, &queries, &["--seed", "3"]).0, Some(2));
}

#[test]
fn files_written_on_windows_read_the_same() {
    // A byte order mark first and CRLF line ends, in both files.
    let windows = |text: &str| format!("\u{feff}{}", text.replace('\n', "\r\n"));
    let run = |catalog: &str, queries: &str| {
        let catalog = write(&format!("win-{}.json", catalog.len()), catalog);
        let queries = write(&format!("win-{}.jsonl", queries.len()), queries);
        eval(&catalog, &queries, &[])
    };
    let plain = run(CATALOG, QUERIES);
    assert_eq!(plain.0, Some(0), "{}", plain.2);
    assert_eq!(run(&windows(CATALOG), &windows(QUERIES)), plain);
}

#[test]
fn an_expected_tool_the_catalog_leaves_out_is_a_miss_not_a_failed_measure() {
    // Listed, but with a name no client accepts: quarantined, so no ranker can return it.
    let catalog = write(
        "leftout.json",
        &CATALOG.replace(
            r#"{"name":"get_alerts""#,
            r#"{"name":"bad name","description":"Not a valid tool name.","inputSchema":{"type":"object"}},
  {"name":"get_alerts""#,
        ),
    );
    let queries = write(
        "leftout.jsonl",
        "{\"query\":\"a bad name\",\"expect\":[[\"weather\",\"bad name\"]]}\n\
         {\"query\":\"read the file README\",\"expect\":[[\"files\",\"read_file\"]]}\n",
    );
    let (code, out, err) = eval(&catalog, &queries, &["--k", "1"]);
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(out, "recall@1 0.500 [0.095, 0.905] n=2\n");
    assert!(
        err.contains("weather/bad name is left out of the catalog (its name is not"),
        "{err}"
    );
    assert!(
        err.contains("\"a bad name\" expects weather/bad name, left out"),
        "{err}"
    );
    // Ranking and pricing say so too: a tool that silently vanished would look unfindable.
    let path = catalog.to_str().unwrap();
    for args in [
        &["rank", "--catalog", path, "--top", "3", "alerts"][..],
        &["cost", "--catalog", path, "--format", "anthropic"],
    ] {
        let (code, out, err) = palette(args);
        assert_eq!(code, Some(0), "{err}");
        assert!(!out.contains("bad name"), "{out}");
        assert_eq!(
            err,
            "mcp-palette: weather/bad name is left out of the catalog \
             (its name is not 1 to 128 characters of A-Z a-z 0-9 _ . -)\n"
        );
    }
}

#[test]
fn an_expected_tool_the_catalog_does_not_list_is_said_and_missed() {
    // A labelling slip (a tool renamed since, a server's name written otherwise) costs its
    // query, said on stderr, and not the whole measure; a query that expects another tool
    // too can still find that one.
    let catalog = write("unlisted.json", CATALOG);
    let queries = write(
        "unlisted.jsonl",
        "{\"query\":\"delete the file\",\"expect\":[[\"files\",\"delete_file\"]]}\n\
         {\"query\":\"read the file README\",\"expect\":[[\"Files\",\"read_file\"],[\"files\",\"read_file\"]]}\n",
    );
    let (code, out, err) = eval(&catalog, &queries, &["--k", "1"]);
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(out, "recall@1 0.500 [0.095, 0.905] n=2\n");
    assert_eq!(
        err,
        "mcp-palette: \"delete the file\" expects files/delete_file, which the catalog \
               does not hold; it can only find its other expected tools\n\
               mcp-palette: \"read the file README\" expects Files/read_file, which the catalog \
               does not hold; it can only find its other expected tools\n"
    );
}

#[test]
fn optional_fields_written_null_are_read_as_left_out() {
    // As a Python program writes a catalog from the SDK's own `Tool`s with `model_dump()`:
    // every field with no value is `null`, those MCP defines and those it does not.
    let catalog = write(
        "nulls.json",
        r#"{"servers":[{"server":"shop","tools":[
  {"name":"stock_level","title":null,"description":"How many units of a product are in stock.","inputSchema":{"type":"object"},"outputSchema":null,"annotations":null,"icons":null,"meta":null},
  {"name":"word_count","title":null,"description":null,"inputSchema":{"type":"object","properties":{"text":{"type":"string"}}},"outputSchema":null,"annotations":{"title":null,"readOnlyHint":true},"icons":null,"meta":null}]}]}"#,
    );
    let queries = write(
        "nulls.jsonl",
        "{\"query\":\"how many tins of paint are in stock\",\"expect\":[[\"shop\",\"stock_level\"]]}\n\
         {\"query\":\"count the words of this text\",\"expect\":[[\"shop\",\"word_count\"]]}\n",
    );
    let (code, out, err) = eval(&catalog, &queries, &["--k", "1"]);
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(out, "recall@1 1.000 [0.342, 1.000] n=2\n");
    assert_eq!(err, "", "nothing is left out");
    let (code, out, err) = palette(&[
        "cost",
        "--catalog",
        catalog.to_str().unwrap(),
        "--format",
        "anthropic",
    ]);
    assert_eq!(code, Some(0), "{err}");
    assert!(out.starts_with("stock_level\t"), "{out}");
    assert!(out.contains("\nword_count\t"), "{out}");
}

#[test]
fn a_tool_whose_schema_does_not_compile_is_left_out_of_every_command() {
    // A host never offers it (the palette quarantines it), so no command may rank or price
    // it: a ranking that found it would find a tool the model can never be given.
    let catalog = write(
        "nocompile.json",
        &CATALOG.replace(
            r#"{"name":"get_alerts""#,
            r#"{"name":"get_alerts_v3","description":"Severe weather alerts for a US state.","inputSchema":{"$schema":"https://example.com/dialect","type":"object"}},
  {"name":"get_alerts""#,
        ),
    );
    let said = "mcp-palette: weather/get_alerts_v3 is left out of the catalog (its schema does \
        not compile: inputSchema: $schema \"https://example.com/dialect\" is not a dialect this \
        client knows (JSON Schema drafts 4, 6, 7, 2019-09 and 2020-12))\n";
    let path = catalog.to_str().unwrap();
    for args in [
        &[
            "rank",
            "--catalog",
            path,
            "--top",
            "3",
            "severe weather alerts",
        ][..],
        &["cost", "--catalog", path, "--format", "openai-chat"],
    ] {
        let (code, out, err) = palette(args);
        assert_eq!(code, Some(0), "{err}");
        assert!(!out.contains("get_alerts_v3"), "{out}");
        assert!(out.contains("get_alerts"), "{out}");
        assert_eq!(err, said);
    }
    let queries = write(
        "nocompile.jsonl",
        "{\"query\":\"storm alerts for Texas\",\"expect\":[[\"weather\",\"get_alerts_v3\"]]}\n",
    );
    let (code, out, err) = eval(&catalog, &queries, &["--k", "5"]);
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(out, "recall@5 0.000 [0.000, 0.793] n=1\n");
    assert!(
        err.contains("\"storm alerts for Texas\" expects weather/get_alerts_v3, left out (its schema does not compile"),
        "{err}"
    );
}

#[test]
fn a_server_named_as_no_palette_id_is_offered_under_one() {
    // Search prints the server as the file writes it; an offer needs an id a provider
    // accepts, as a name that two servers share is prefixed with it.
    let catalog = write(
        "servernames.json",
        r#"{"servers":[
 {"server":"Google Maps","tools":[{"name":"search","description":"Find places.","inputSchema":{"type":"object"}}]},
 {"server":"Google_Maps","tools":[{"name":"search","description":"Find places, again.","inputSchema":{"type":"object"}}]},
 {"server":"docs.aws","tools":[{"name":"search","description":"Search the documentation.","inputSchema":{"type":"object"}}]}]}"#,
    );
    let path = catalog.to_str().unwrap();
    let (code, out, err) = palette(&["cost", "--catalog", path, "--format", "anthropic"]);
    assert_eq!(code, Some(0), "{err}");
    let names: Vec<&str> = out.lines().map(|l| l.split('\t').next().unwrap()).collect();
    // "Google Maps" came first, so its tool is `search`; the others are named after their
    // servers' ids, which are three, not two.
    assert_eq!(
        names,
        ["Google_Maps_search", "docs_aws_search", "search", "total"]
    );
    assert_eq!(
        err,
        "mcp-palette: server \"Google Maps\" is offered as \"Google_Maps_2\", as a server id is 1 to 32 characters from A-Z a-z 0-9 _ -\n\
         mcp-palette: server \"docs.aws\" is offered as \"docs_aws\", as a server id is 1 to 32 characters from A-Z a-z 0-9 _ -\n"
    );
    let (code, out, _) = palette(&["rank", "--catalog", path, "--top", "1", "documentation"]);
    assert_eq!(code, Some(0));
    assert!(out.starts_with("docs.aws\tsearch\t"), "{out}");
}

#[test]
fn a_tool_with_no_name_is_said_by_its_place_in_the_listing() {
    let catalog = write(
        "noname.json",
        r#"{"servers":[{"server":"shop","tools":[
  {"name":"stock_level","description":"How many units are in stock.","inputSchema":{"type":"object"}},
  {"description":"A tool without a name.","inputSchema":{"type":"object"}}]}]}"#,
    );
    let (code, out, err) = palette(&[
        "rank",
        "--catalog",
        catalog.to_str().unwrap(),
        "--top",
        "5",
        "units in stock",
    ]);
    assert_eq!(code, Some(0), "{err}");
    assert!(
        out.starts_with("shop\tstock_level\t") && out.lines().count() == 1,
        "{out}"
    );
    assert_eq!(
        err,
        "mcp-palette: shop's tool #1 is left out of the catalog (it has no string name)\n"
    );
}

#[test]
fn a_tool_written_without_an_input_schema_is_ranked_as_taking_no_arguments() {
    // A catalog written by hand, as the seeds' experiment wrote its tools: no `inputSchema`
    // is read as `{"type": "object"}`, and said; one that is there but no object schema is
    // still left out.
    let catalog = write(
        "noschema.json",
        r#"{"servers":[{"server":"shop","tools":[
  {"name":"stock_level","description":"How many units of a product are in stock."},
  {"name":"word_count","description":"Count the words in a text.","inputSchema":null}]}]}"#,
    );
    let queries = write(
        "noschema.jsonl",
        "{\"query\":\"how many tins of paint are in stock\",\"expect\":[[\"shop\",\"stock_level\"]]}\n\
         {\"query\":\"count the words\",\"expect\":[[\"shop\",\"word_count\"]]}\n",
    );
    let (code, out, err) = eval(&catalog, &queries, &["--k", "1"]);
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(out, "recall@1 0.500 [0.095, 0.905] n=2\n");
    assert!(
        err.contains("shop/stock_level has no inputSchema; read as taking no arguments"),
        "{err}"
    );
    assert!(
        err.contains("shop/word_count is left out of the catalog"),
        "{err}"
    );
    let (code, out, _) = palette(&[
        "cost",
        "--catalog",
        catalog.to_str().unwrap(),
        "--format",
        "anthropic",
    ]);
    assert_eq!(code, Some(0));
    assert!(out.starts_with("stock_level\t"), "{out}");
}

#[test]
fn catalogs_and_labels_written_in_other_shapes_measure_the_same() {
    // A set written elsewhere need not be written as ours is; what it says is what counts.
    let canonical: serde_json::Value = serde_json::from_str(CATALOG).unwrap();
    let entries = canonical["servers"].as_array().unwrap().clone();
    let renamed = |key: &str| -> Vec<serde_json::Value> {
        entries
            .iter()
            .map(|entry| {
                let name = entry["server"].clone();
                let named = match key {
                    "serverInfo" => serde_json::json!({"name": name, "version": "1"}),
                    _ => name,
                };
                serde_json::json!({ key: named, "tools": entry["tools"] })
            })
            .collect()
    };
    let by_name: serde_json::Map<String, serde_json::Value> = entries
        .iter()
        .map(|e| (e["server"].as_str().unwrap().to_owned(), e["tools"].clone()))
        .collect();
    let shapes = [
        ("alone", serde_json::Value::Array(entries.clone())),
        ("name", serde_json::json!({ "servers": renamed("name") })),
        // What `mcp-call --list --json` prints, taken as it is.
        (
            "info",
            serde_json::json!({ "servers": renamed("serverInfo") }),
        ),
        ("map", serde_json::json!({ "servers": by_name })),
    ];
    let queries = write("shapes.jsonl", QUERIES);
    let (code, want, err) = eval(&write("shapes.json", CATALOG), &queries, &["--k", "1,5"]);
    assert_eq!(code, Some(0), "{err}");
    assert!(!want.starts_with("recall@1 0.000"), "{want}");
    // Nothing said: an expected tool not found under its server's name would be.
    assert_eq!(err, "");
    for (shape, file) in &shapes {
        let catalog = write(&format!("shape-{shape}.json"), &file.to_string());
        let (code, out, err) = eval(&catalog, &queries, &["--k", "1,5"]);
        assert_eq!((code, err.as_str()), (Some(0), ""), "{shape}");
        assert_eq!(out, want, "{shape}");
    }
    // One server's entry alone, as `mcp-call --list --json` prints it, is a catalog of that
    // server: it ranks as the same server in a "servers" array does.
    assert_eq!(entries[1]["server"], "files");
    let files = serde_json::json!({
        "serverInfo": {"name": "files", "version": "1"},
        "tools": entries[1]["tools"]
    });
    let alone = write("entry-alone.json", &files.to_string());
    let within = serde_json::json!({ "servers": [entries[1]] }).to_string();
    let within = write("entry-within.json", &within);
    let ranked = |catalog: &Path| {
        let catalog = catalog.to_str().unwrap();
        palette(&[
            "rank",
            "--catalog",
            catalog,
            "--top",
            "3",
            "read the README file",
        ])
    };
    let (code, out, err) = ranked(&alone);
    assert_eq!((code, err.as_str()), (Some(0), ""));
    assert!(out.starts_with("files\tread_file\t"), "{out}");
    assert_eq!(ranked(&within), (code, out, err));
    // One pair written flat, pairs written as objects, one object alone.
    let labels = QUERIES
        .replace(
            r#"[["weather","get_forecast"]]"#,
            r#"["weather","get_forecast"]"#,
        )
        .replace(
            r#"[["files","write_file"]]"#,
            r#"[{"server":"files","tool":"write_file"}]"#,
        )
        .replace(
            r#"[["files","read_file"]]"#,
            r#"{"server":"files","tool":"read_file"}"#,
        );
    assert_ne!(labels, QUERIES);
    // And the queries laid out over several lines each, or held in one array.
    let objects: Vec<serde_json::Value> = QUERIES
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    let pretty: Vec<String> = objects
        .iter()
        .map(|o| serde_json::to_string_pretty(o).unwrap())
        .collect();
    let array = serde_json::Value::Array(objects).to_string();
    for (name, text) in [
        ("labels.jsonl", labels),
        ("pretty.json", pretty.join("\n")),
        ("array.json", array),
    ] {
        let (code, out, err) = eval(
            &write("shapes.json", CATALOG),
            &write(name, &text),
            &["--k", "1,5"],
        );
        assert_eq!((code, err.as_str()), (Some(0), ""), "{name}");
        assert_eq!(out, want, "{name}");
    }
    // A slip in a query laid out over lines is said at the line the query starts on.
    let mut slipped = pretty.clone();
    slipped[1] = slipped[1].replace("\"expect\"", "\"expected\"");
    let slip = slipped.join("\n");
    let (code, _, err) = eval(
        &write("shapes.json", CATALOG),
        &write("slip.json", &slip),
        &[],
    );
    assert_eq!(code, Some(2));
    let second = 1 + pretty[0].lines().count();
    assert!(
        err.contains(&format!("slip.json line {second}: \"expect\" is not")),
        "{err}"
    );
}

/// A listed tool as some provider is offered it.
type Offered = fn(&serde_json::Value) -> serde_json::Value;

#[test]
fn tools_written_as_a_provider_offers_them_are_read_as_listed() {
    // A catalog built from what an application offers a model, not from what its servers
    // listed: each provider's shape ranks as the listing does.
    let queries = write("provider.jsonl", QUERIES);
    let (code, want, err) = eval(&write("listed.json", CATALOG), &queries, &["--k", "1,5"]);
    assert_eq!((code, err.as_str()), (Some(0), ""));
    let canonical: serde_json::Value = serde_json::from_str(CATALOG).unwrap();
    let shapes: [(&str, Offered); 3] = [
        (
            "anthropic",
            |t| serde_json::json!({"name": t["name"], "description": t["description"], "input_schema": t["inputSchema"]}),
        ),
        (
            "openai-chat",
            |t| serde_json::json!({"type": "function", "function": {"name": t["name"], "description": t["description"], "parameters": t["inputSchema"], "strict": false}}),
        ),
        (
            "openai-responses",
            |t| serde_json::json!({"type": "function", "name": t["name"], "description": t["description"], "parameters": t["inputSchema"], "strict": false}),
        ),
    ];
    for (shape, offered) in shapes {
        let mut catalog = canonical.clone();
        for entry in catalog["servers"].as_array_mut().unwrap() {
            let tools: Vec<serde_json::Value> = entry["tools"]
                .as_array()
                .unwrap()
                .iter()
                .map(offered)
                .collect();
            entry["tools"] = serde_json::Value::Array(tools);
        }
        let file = write(&format!("{shape}.json"), &catalog.to_string());
        let (code, out, err) = eval(&file, &queries, &["--k", "1,5"]);
        assert_eq!(code, Some(0), "{shape}: {err}");
        assert_eq!(out, want, "{shape}");
        assert_eq!(
            err,
            "mcp-palette: weather: 2 tools are written as a model provider offers them; \
             read as the server would list them\n\
             mcp-palette: files: 3 tools are written as a model provider offers them; \
             read as the server would list them\n",
            "{shape}"
        );
    }
}

#[test]
fn a_tool_may_be_expected_by_its_name_alone_or_joined_to_its_servers() {
    // A set written elsewhere may name its tools as its own host does; each way measures
    // what the pairs do.
    let catalog = write("named.json", CATALOG);
    let (code, want, err) = eval(&catalog, &write("pairs.jsonl", QUERIES), &["--k", "1,5"]);
    assert_eq!((code, err.as_str()), (Some(0), ""));
    for (way, forecast, write_file, read_file) in [
        (
            "alone",
            "\"get_forecast\"",
            "[\"write_file\"]",
            "\"read_file\"",
        ),
        (
            "slash",
            "\"weather/get_forecast\"",
            "[\"files/write_file\"]",
            "[\"files/read_file\"]",
        ),
        (
            "joined",
            "[\"weather:get_forecast\"]",
            "[\"files.write_file\"]",
            "\"files__read_file\"",
        ),
    ] {
        let labels = QUERIES
            .replace(r#"[["weather","get_forecast"]]"#, forecast)
            .replace(r#"[["files","write_file"]]"#, write_file)
            .replace(r#"[["files","read_file"]]"#, read_file)
            // Two names, and a name beside a pair.
            .replace(
                r#"[["weather","get_alerts"],["weather","get_forecast"]]"#,
                r#"["get_alerts","get_forecast"]"#,
            );
        let (code, out, err) = eval(&catalog, &write("named.jsonl", &labels), &["--k", "1,5"]);
        assert_eq!((code, err.as_str()), (Some(0), ""), "{way}");
        assert_eq!(out, want, "{way}");
    }
    // A name two servers' tools share: either counts, and that is said. A name no tool has
    // costs its query, said; two strings naming no tools are a pair, said as one.
    let shared = write(
        "shared.json",
        &CATALOG.replace(r#""name":"get_alerts""#, r#""name":"read_file""#),
    );
    let labels = write(
        "shared.jsonl",
        "{\"query\":\"read the file README\",\"expect\":\"read_file\"}\n\
         {\"query\":\"delete the file\",\"expect\":[\"delete_file\",[\"files\",\"write_file\"]]}\n\
         {\"query\":\"remove it\",\"expect\":[\"files\",\"delete_file\"]}\n",
    );
    let (code, out, err) = eval(&shared, &labels, &["--k", "5"]);
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(out, "recall@5 0.667 [0.208, 0.939] n=3\n");
    assert_eq!(
        err,
        "mcp-palette: \"read the file README\" expects \"read_file\", a tool of 2 servers \
         (weather, files); any of them counts\n\
         mcp-palette: \"delete the file\" expects \"delete_file\", which names no tool of the \
         catalog; it can only find its other expected tools\n\
         mcp-palette: \"remove it\" expects files/delete_file, which the catalog does not \
         hold; it can only find its other expected tools\n"
    );
}

#[test]
fn files_that_are_not_what_they_say_are_refused_with_exit_2() {
    let catalog = write("bad.json", CATALOG);
    let not_a_catalog = write("notcat.json", r#"{"server":"a"}"#);
    let (code, _, err) = palette(&["rank", "--catalog", not_a_catalog.to_str().unwrap(), "x"]);
    assert_eq!(code, Some(2));
    assert!(err.contains("has no \"servers\""), "{err}");
    // One entry alone that names no server: its tools' pairs could not be written.
    let nameless = write("nameless.json", r#"{"tools":[]}"#);
    let (code, _, err) = palette(&["rank", "--catalog", nameless.to_str().unwrap(), "x"]);
    assert_eq!(code, Some(2));
    assert!(
        err.contains("one server's entry that names no server"),
        "{err}"
    );
    // Tools alone, and an entry without them.
    let tools = write(
        "tools.json",
        r#"[{"name":"read_file","description":"Read a file.","inputSchema":{"type":"object"}}]"#,
    );
    let (code, _, err) = palette(&["rank", "--catalog", tools.to_str().unwrap(), "x"]);
    assert_eq!(code, Some(2));
    assert!(
        err.contains("tools.json reads as a list of tools, which names no server"),
        "{err}"
    );
    let toolless = write("toolless.json", r#"{"servers":{"files":{"version":"1"}}}"#);
    let (code, _, err) = palette(&["rank", "--catalog", toolless.to_str().unwrap(), "x"]);
    assert_eq!(code, Some(2));
    assert!(
        err.contains("the server entry \"files\" has no \"tools\""),
        "{err}"
    );
    // One server twice: which listing a tool belongs to would be a guess.
    let twice = write(
        "twice.json",
        r#"{"servers":[{"server":"a","tools":[]},{"server":"a","tools":[]}]}"#,
    );
    let twice = twice.to_str().unwrap();
    for args in [
        vec!["rank", "--catalog", twice, "x"],
        vec!["cost", "--catalog", twice, "--format", "anthropic"],
    ] {
        let (code, _, err) = palette(&args);
        assert_eq!(code, Some(2), "{err}");
        assert!(err.contains("server \"a\" is listed twice"), "{err}");
    }
    // An entry named nowhere, and a pair of three.
    let unnamed = write("unnamed.json", r#"{"servers":[{"tools":[]}]}"#);
    let (code, _, err) = palette(&["rank", "--catalog", unnamed.to_str().unwrap(), "x"]);
    assert_eq!(code, Some(2));
    assert!(
        err.contains("a server entry has no \"server\" name"),
        "{err}"
    );
    for expect in [
        "[[\"files\"]]",
        "[]",
        "5",
        "[[\"files\",\"read_file\",\"x\"]]",
    ] {
        let odd = write(
            "odd.jsonl",
            &format!("{{\"query\":\"x\",\"expect\":{expect}}}\n"),
        );
        let (code, _, err) = eval(&catalog, &odd, &[]);
        assert_eq!(code, Some(2), "{expect}");
        assert!(err.contains("line 1: \"expect\" is not"), "{err}");
    }
    let bad_line = write("badline.jsonl", "{\"query\":\"x\"}\n");
    let (code, _, err) = eval(&catalog, &bad_line, &[]);
    assert_eq!(code, Some(2));
    assert!(err.contains("line 1"), "{err}");
}

#[test]
fn cost_prints_each_offered_tool_and_the_total() {
    let catalog = write("cost.json", CATALOG);
    let (code, out, err) = palette(&[
        "cost",
        "--catalog",
        catalog.to_str().unwrap(),
        "--format",
        "openai-chat",
    ]);
    assert_eq!(code, Some(0), "{err}");
    let lines: Vec<(&str, usize)> = out
        .lines()
        .map(|l| {
            let (name, tokens) = l.split_once('\t').unwrap();
            (name, tokens.parse().unwrap())
        })
        .collect();
    let (total, tools) = lines.split_last().unwrap();
    assert_eq!(total.0, "total");
    assert_eq!(total.1, tools.iter().map(|(_, t)| t).sum::<usize>());
    let names: Vec<&str> = tools.iter().map(|(n, _)| *n).collect();
    assert_eq!(
        names,
        [
            "get_alerts",
            "get_forecast",
            "read_file",
            "untyped",
            "write_file"
        ]
    );
    // A described tool with a parameter costs more than a bare one.
    let of = |name: &str| tools.iter().find(|(n, _)| *n == name).unwrap().1;
    assert!(of("get_forecast") > of("get_alerts"), "{out}");
    // The shape's name in any case, as a script may write it.
    let (code, shouted, err) = palette(&[
        "cost",
        "--catalog",
        catalog.to_str().unwrap(),
        "--format",
        "OpenAI-Chat",
    ]);
    assert_eq!((code, err.as_str(), shouted), (Some(0), "", out));
    let (code, _, err) = palette(&[
        "cost",
        "--catalog",
        catalog.to_str().unwrap(),
        "--format",
        "gemini",
    ]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("\"gemini\" is not a provider"), "{err}");
}

#[test]
fn cost_with_search_prices_the_search_tool_and_what_it_disclosed() {
    let catalog = write("cost_search.json", CATALOG);
    let run = |extra: &[&str]| {
        let mut args = vec![
            "cost",
            "--catalog",
            catalog.to_str().unwrap(),
            "--format",
            "anthropic",
        ];
        args.extend_from_slice(extra);
        palette(&args)
    };
    let cost = |extra: &[&str]| {
        let (code, out, err) = run(extra);
        assert_eq!(code, Some(0), "{err}");
        out
    };
    let whole = cost(&[]);
    let searched = cost(&["--search", "write a file"]);
    let names: Vec<&str> = searched
        .lines()
        .map(|l| l.split_once('\t').unwrap().0)
        .collect();
    // The search tool first, then the disclosed tools by name, then the total.
    assert_eq!(names[0], "search_tools");
    assert_eq!(names.last(), Some(&"total"));
    assert!(
        names.contains(&"write_file") && !names.contains(&"get_alerts"),
        "{searched}"
    );
    let total = |out: &str| -> usize {
        out.lines()
            .last()
            .unwrap()
            .split_once('\t')
            .unwrap()
            .1
            .parse()
            .unwrap()
    };
    assert!(total(&searched) > 0 && total(&whole) > 0);
    // Each disclosed tool costs what it costs in the whole offer.
    let of = |out: &str, name: &str| {
        out.lines()
            .find(|l| l.starts_with(&format!("{name}\t")))
            .map(str::to_owned)
    };
    assert_eq!(of(&searched, "write_file"), of(&whole, "write_file"));
    // A limit discloses that many, and is checked as the model's own `limit` is.
    let one = cost(&["--search", "write a file", "--limit", "1"]);
    assert_eq!(one.lines().count(), 3, "{one}");
    assert_eq!(of(&one, "write_file"), of(&whole, "write_file"));
    for refused in [
        &["--search", "write", "--limit", "21"][..],
        &["--limit", "2"],
    ] {
        let (code, _, err) = run(refused);
        assert_eq!(code, Some(2), "{refused:?}: {err}");
    }
}

#[test]
fn the_model_rankers_say_what_they_need() {
    let catalog = write("needs.json", CATALOG);
    let (code, _, err) = palette(&[
        "rank",
        "--catalog",
        catalog.to_str().unwrap(),
        "--ranker",
        "embed",
        "forecast",
    ]);
    assert_eq!(code, Some(2));
    // Built without the feature, or with it and no model folder: either way, said plainly.
    // (With the feature and a model, `tests/embed.rs` runs the command for real.)
    assert!(
        err.contains("--features embed") || err.contains("--model DIR"),
        "{err}"
    );
}
