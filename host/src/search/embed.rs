//! Semantic ranking: sentence embeddings (all-MiniLM-L6-v2 or all-mpnet-base-v2) on candle,
//! on the CPU.

use std::borrow::Cow;
use std::fmt;
use std::sync::Arc;

use candle_core::{DType, Device, Tensor};
use candle_nn::VarBuilder;
use candle_transformers::models::bert::{self, BertModel};
use tokenizers::{Tokenizer, TruncationParams};

use super::hints::identifier_kind;
use super::mpnet::{self, MpNet};
use super::text::{request, Frames, ToolText};
use super::vectors::VectorCache;
use super::{best, keys, Hit, RankError, Ranker};

/// A sentence-embedding model, BERT (all-MiniLM-L6-v2) or MPNet (all-mpnet-base-v2) as its
/// `config.json` says, pooled as sentence-transformers pools both: the mean of the token
/// vectors under the attention mask, scaled to unit length.
///
/// The crate reads no files: the caller passes the bytes of the model folder's
/// `config.json`, `tokenizer.json` and `model.safetensors`.
///
/// ```no_run
/// use std::sync::Arc;
/// use mcp_sansio_host::search::Embedder;
/// let dir = std::path::Path::new("all-MiniLM-L6-v2");
/// let embedder = Embedder::from_bytes(
///     &std::fs::read(dir.join("config.json"))?,
///     &std::fs::read(dir.join("tokenizer.json"))?,
///     std::fs::read(dir.join("model.safetensors"))?,
/// )?;
/// let vectors = embedder.embed(&["find a file by name"])?;
/// assert_eq!(vectors[0].len(), 384);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct Embedder {
    model: Encoder,
    tokenizer: Tokenizer,
    device: Device,
    /// The token id a short text is padded with.
    pad: u32,
    dimensions: usize,
    fingerprint: [u8; 32],
}

/// The network under the pooling.
enum Encoder {
    Bert(BertModel),
    MpNet(MpNet),
}

/// A network's configuration, read before its weights.
enum Configured {
    Bert(bert::Config),
    MpNet(mpnet::Config),
}

/// What `config.json` is read for first: which network it configures.
#[derive(serde::Deserialize)]
struct Family {
    model_type: Option<String>,
}

/// Why a model could not be loaded or run. Every case is about the files the caller gave.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum EmbedError {
    /// `config.json` is not a BERT or MPNet configuration.
    Config(String),
    /// `tokenizer.json` could not be read or applied.
    Tokenizer(String),
    /// `model.safetensors` does not hold the weights the configuration names.
    Weights(String),
    /// The model failed on an input.
    Inference(String),
}

impl fmt::Display for EmbedError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            EmbedError::Config(why) => write!(
                f,
                "the model's config.json is not a BERT or MPNet configuration: {why}"
            ),
            EmbedError::Tokenizer(why) => write!(f, "the model's tokenizer.json failed: {why}"),
            EmbedError::Weights(why) => {
                write!(
                    f,
                    "the model's weights do not match its configuration: {why}"
                )
            }
            EmbedError::Inference(why) => {
                write!(f, "the embedding model failed on an input: {why}")
            }
        }
    }
}

impl std::error::Error for EmbedError {}

impl From<EmbedError> for RankError {
    fn from(error: EmbedError) -> Self {
        RankError::Model(error.to_string())
    }
}

fn inference(error: impl fmt::Display) -> EmbedError {
    EmbedError::Inference(error.to_string())
}

impl Embedder {
    /// Tokens read of one text, as sentence-transformers reads all-MiniLM-L6-v2
    /// (`max_seq_length`; all-mpnet-base-v2 would read 384), or fewer if the model has fewer
    /// positions; the rest of a longer text is not seen. A tool's text is its name and
    /// first sentence, far shorter.
    pub const MAX_TOKENS: usize = 256;

    /// Texts run through the model at once: the padding of a batch to its longest text is
    /// the cost of batching, so [`Embedder::embed`] batches texts of like length.
    pub const BATCH: usize = 16;

    /// The model from its files' bytes.
    ///
    /// # Errors
    /// When a file is not what its name says; see [`EmbedError`].
    pub fn from_bytes(
        config: &[u8],
        tokenizer: &[u8],
        safetensors: Vec<u8>,
    ) -> Result<Self, EmbedError> {
        let (config_bytes, tokenizer_bytes) = (config, tokenizer);
        let config_error = |e: serde_json::Error| EmbedError::Config(e.to_string());
        let family: Family = serde_json::from_slice(config).map_err(config_error)?;
        // The configuration, then the tokenizer, then the weights: each file is blamed for
        // its own fault, the cheap ones before the large one is read.
        let (config, positions, pad) = match family.model_type.as_deref() {
            Some("mpnet") => {
                let config: mpnet::Config = serde_json::from_slice(config).map_err(config_error)?;
                // Positions start after the padding id's: that many fewer are left for tokens.
                let positions = config
                    .max_position_embeddings
                    .saturating_sub(usize::try_from(config.pad_token_id).unwrap_or(usize::MAX))
                    .saturating_sub(1);
                let pad = config.pad_token_id;
                (Configured::MpNet(config), positions, pad)
            }
            None | Some("bert") => {
                let config: bert::Config = serde_json::from_slice(config).map_err(config_error)?;
                let pad = u32::try_from(config.pad_token_id).unwrap_or(0);
                let positions = config.max_position_embeddings;
                (Configured::Bert(config), positions, pad)
            }
            Some(other) => {
                return Err(EmbedError::Config(format!(
                    "its model_type is {other:?}, not \"bert\" or \"mpnet\""
                )))
            }
        };
        let mut tokenizer =
            Tokenizer::from_bytes(tokenizer).map_err(|e| EmbedError::Tokenizer(e.to_string()))?;
        tokenizer
            .with_truncation(Some(TruncationParams {
                max_length: Self::MAX_TOKENS.min(positions),
                ..TruncationParams::default()
            }))
            .map_err(|e| EmbedError::Tokenizer(e.to_string()))?;
        // Each batch is padded here, to its own longest text.
        tokenizer.with_padding(None);
        let fingerprint = fingerprint(config_bytes, tokenizer_bytes, &safetensors);
        let device = Device::Cpu;
        let weights = VarBuilder::from_buffered_safetensors(safetensors, DType::F32, &device)
            .map_err(|e| EmbedError::Weights(e.to_string()))?;
        let model = match &config {
            Configured::Bert(config) => BertModel::load(weights, config).map(Encoder::Bert),
            Configured::MpNet(config) => MpNet::load(&weights, config).map(Encoder::MpNet),
        }
        .map_err(|e| EmbedError::Weights(e.to_string()))?;
        let mut embedder = Embedder {
            model,
            tokenizer,
            device,
            pad,
            dimensions: 0,
            fingerprint,
        };
        // One probe sets the width and proves the files agree before any catalog is read.
        embedder.dimensions = embedder.embed(&["probe"])?.first().map_or(0, Vec::len);
        Ok(embedder)
    }

    /// SHA-256 over the model's three files and the way this crate reads them (the tokens
    /// it reads of a text, and a version it changes whenever its vectors would): two
    /// embedders with one fingerprint give one vector for any text, so a
    /// [`VectorCache`] kept across runs is known by it.
    pub fn fingerprint(&self) -> [u8; 32] {
        self.fingerprint
    }

    /// How many numbers each vector has (384 for all-MiniLM-L6-v2, 768 for all-mpnet-base-v2).
    pub fn dimensions(&self) -> usize {
        self.dimensions
    }

    /// One unit vector per text, in order.
    ///
    /// # Errors
    /// [`EmbedError::Tokenizer`] or [`EmbedError::Inference`] when the model fails.
    pub fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        let encodings = self
            .tokenizer
            .encode_batch(texts.to_vec(), true)
            .map_err(|e| EmbedError::Tokenizer(e.to_string()))?;
        // Like lengths together: a short text padded to a long one costs the long one's time.
        let mut order: Vec<usize> = (0..encodings.len()).collect();
        order.sort_by_key(|&at| encodings.get(at).map_or(0, tokenizers::Encoding::len));
        let mut out = vec![Vec::new(); texts.len()];
        for batch in order.chunks(Self::BATCH) {
            let chosen: Vec<&tokenizers::Encoding> =
                batch.iter().filter_map(|&at| encodings.get(at)).collect();
            let vectors = self.embed_batch(&chosen)?;
            for (&at, vector) in batch.iter().zip(vectors) {
                if let Some(slot) = out.get_mut(at) {
                    *slot = vector;
                }
            }
        }
        Ok(out)
    }

    fn embed_batch(
        &self,
        encodings: &[&tokenizers::Encoding],
    ) -> Result<Vec<Vec<f32>>, EmbedError> {
        let width = encodings.iter().map(|e| e.len()).max().unwrap_or(0);
        // One (texts × width) matrix of `take`, each row padded with `pad`.
        let matrix = |take: fn(&tokenizers::Encoding) -> &[u32], pad: u32| {
            let mut data = Vec::with_capacity(encodings.len() * width);
            for encoding in encodings {
                let row = take(encoding);
                data.extend_from_slice(row);
                data.resize(data.len() + width.saturating_sub(row.len()), pad);
            }
            Tensor::from_vec(data, (encodings.len(), width), &self.device).map_err(inference)
        };
        let ids = matrix(tokenizers::Encoding::get_ids, self.pad)?;
        let types = matrix(tokenizers::Encoding::get_type_ids, 0)?;
        let mask = matrix(tokenizers::Encoding::get_attention_mask, 0)?;
        let hidden = match &self.model {
            Encoder::Bert(model) => model.forward(&ids, &types, Some(&mask)),
            Encoder::MpNet(model) => model.forward(&ids, &mask),
        }
        .map_err(inference)?;
        // Mean over the real tokens only, then unit length: sentence-transformers' pooling
        // and its Normalize module.
        let mask = mask
            .to_dtype(DType::F32)
            .and_then(|m| m.unsqueeze(2))
            .map_err(inference)?;
        let summed = hidden
            .broadcast_mul(&mask)
            .and_then(|h| h.sum(1))
            .map_err(inference)?;
        let counts = mask
            .sum(1)
            .and_then(|c| c.clamp(1e-9, f64::MAX))
            .map_err(inference)?;
        let mean = summed.broadcast_div(&counts).map_err(inference)?;
        let norms = mean
            .sqr()
            .and_then(|s| s.sum_keepdim(1))
            .and_then(|s| s.sqrt())
            .and_then(|n| n.clamp(1e-12, f64::MAX))
            .map_err(inference)?;
        mean.broadcast_div(&norms)
            .and_then(|v| v.to_vec2::<f32>())
            .map_err(inference)
    }
}

/// Ranks tools by the cosine between the query's vector and each tool's
/// ([`ToolText::passage`] embedded once, through a [`VectorCache`]).
///
/// Each identifier in the query is embedded as the kind it names, which
/// [`Bm25`](super::Bm25) counts too: "give PROJ-73 to Kenji" as "give issue to Kenji". As
/// `Bm25` does, it embeds the request without the frame of a search for a tool around it:
/// "find a tool that can resize images" as "resize images", and "could you please resize
/// this, thanks" as "resize this"; a frame within it ("slack tools to post …") it embeds as
/// written, a sentence.
pub struct Embeddings {
    embedder: Arc<Embedder>,
    vectors: Vec<Arc<[f32]>>,
    keys: Vec<(String, String)>,
}

impl Embeddings {
    /// The index of `tools`: the texts not yet in `cache` are embedded and added to it.
    ///
    /// # Errors
    /// When the model fails on a tool's text.
    pub fn new(
        embedder: Arc<Embedder>,
        tools: &[ToolText],
        cache: &mut VectorCache,
    ) -> Result<Self, EmbedError> {
        cache.bind(embedder.fingerprint());
        let mut missing: Vec<&str> = tools
            .iter()
            .map(|t| t.passage.as_str())
            .filter(|text| cache.get(text).is_none())
            .collect();
        missing.sort_unstable();
        missing.dedup();
        for (text, vector) in missing.iter().zip(embedder.embed(&missing)?) {
            cache.insert(text, vector);
        }
        let vectors = tools
            .iter()
            .map(|t| {
                cache
                    .get(&t.passage)
                    .cloned()
                    .ok_or_else(|| EmbedError::Inference("a tool's text was not embedded".into()))
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Embeddings {
            embedder,
            vectors,
            keys: keys(tools),
        })
    }
}

/// The model's identity: its files' bytes, each after its length so that no two sets of
/// files run together alike, after the way they are read.
fn fingerprint(config: &[u8], tokenizer: &[u8], safetensors: &[u8]) -> [u8; 32] {
    use sha2::{Digest, Sha256};
    /// Changed whenever this crate would compute another vector from the same files.
    const READING: &[u8] = b"mcp-sansio embedder 1";
    let mut hash = Sha256::new();
    hash.update(READING);
    hash.update((Embedder::MAX_TOKENS as u64).to_le_bytes());
    for file in [config, tokenizer, safetensors] {
        hash.update((file.len() as u64).to_le_bytes());
        hash.update(file);
    }
    hash.finalize().into()
}

/// The dot product of two vectors (the cosine, both being of unit length), summed in eight
/// lanes so that the compiler can keep them in SIMD registers.
fn dot(a: &[f32], b: &[f32]) -> f32 {
    let mut lanes = [0.0_f32; 8];
    let (a8, b8) = (a.chunks_exact(8), b.chunks_exact(8));
    let tail: f32 = a8
        .remainder()
        .iter()
        .zip(b8.remainder())
        .map(|(x, y)| x * y)
        .sum();
    for (x, y) in a8.zip(b8) {
        for ((lane, x), y) in lanes.iter_mut().zip(x).zip(y) {
            *lane += x * y;
        }
    }
    lanes.iter().sum::<f32>() + tail
}

impl Ranker for Embeddings {
    fn rank(&self, query: &str, k: usize) -> Result<Vec<Hit>, RankError> {
        let query =
            self.embedder
                .embed(&[identifiers_as_kinds(&request(query, Frames::Around)).as_ref()])?;
        let Some(query) = query.first() else {
            return Ok(Vec::new());
        };
        let hits = self.vectors.iter().enumerate().map(|(index, vector)| Hit {
            index,
            score: f64::from(dot(vector, query)),
        });
        Ok(best(hits.collect(), k, &self.keys))
    }
}

/// `query` with each identifier replaced by the kind it names, for a ranker that reads
/// sentences: "give PROJ-73 to Kenji" is read as "give issue to Kenji". The identifier's
/// word pieces tell the model nothing; its kind does. A query without identifiers comes
/// back as it is.
fn identifiers_as_kinds(query: &str) -> Cow<'_, str> {
    let mut replaced = false;
    let words: Vec<&str> = query
        .split_whitespace()
        .map(|word| {
            identifier_kind(word).map_or(word, |kind| {
                replaced = true;
                kind
            })
        })
        .collect();
    if replaced {
        Cow::Owned(words.join(" "))
    } else {
        Cow::Borrowed(query)
    }
}

#[cfg(test)]
mod tests {
    use super::{dot, identifiers_as_kinds, EmbedError, Embedder};

    #[test]
    fn a_model_of_another_family_is_refused_before_its_weights_are_read() {
        let refused = Embedder::from_bytes(br#"{"model_type": "roberta"}"#, b"{}", Vec::new());
        assert!(matches!(
            refused,
            Err(EmbedError::Config(why)) if why.contains("roberta")
        ));
        // A family it knows, with no weights: the weights are what is wrong.
        let empty = Embedder::from_bytes(
            br#"{"model_type": "mpnet", "vocab_size": 8, "hidden_size": 4,
                "num_hidden_layers": 1, "num_attention_heads": 2, "intermediate_size": 8,
                "max_position_embeddings": 16, "layer_norm_eps": 1e-5, "pad_token_id": 1,
                "relative_attention_num_buckets": 32}"#,
            br#"{"model": {"type": "WordLevel", "vocab": {"[UNK]": 0}, "unk_token": "[UNK]"}}"#,
            Vec::new(),
        );
        assert!(
            matches!(empty, Err(EmbedError::Weights(_))),
            "{:?}",
            empty.err()
        );
    }

    #[test]
    fn identifiers_are_read_as_their_kinds_and_other_words_as_they_are() {
        assert_eq!(
            identifiers_as_kinds("give PROJ-73 to Kenji, see notes.txt"),
            "give issue to Kenji, see file"
        );
        assert_eq!(identifiers_as_kinds("make  a folder"), "make  a folder");
    }

    #[test]
    fn the_lane_split_dot_product_is_the_dot_product() {
        for n in [0, 1, 7, 8, 9, 384, 385] {
            #[allow(clippy::cast_precision_loss)]
            let a: Vec<f32> = (0..n).map(|i| (i as f32 * 0.37).sin()).collect();
            #[allow(clippy::cast_precision_loss)]
            let b: Vec<f32> = (0..n).map(|i| (i as f32 * 0.11).cos()).collect();
            let plain: f32 = a.iter().zip(&b).map(|(x, y)| x * y).sum();
            assert!((dot(&a, &b) - plain).abs() < 1e-4, "{n}");
        }
    }
}
