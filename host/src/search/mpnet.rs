//! MPNet (Song et al. 2020), the encoder of all-mpnet-base-v2, on candle, which has none.
//!
//! A BERT-shaped encoder with three differences: positions are counted from the padding
//! id plus one, as RoBERTa counts them; there are no token types; and every layer's
//! attention adds a bias learnt per head for how far apart two tokens are, bucketed as T5
//! buckets it (exact up to 8 apart, then logarithmic up to 128), one table shared by all
//! layers. It follows `transformers`' `modeling_mpnet.py`, weight names included, and
//! is checked against sentence-transformers' own vectors (`tests/embed.rs`).

use candle_core::{DType, Module, Result, Tensor, D};
use candle_nn::{embedding, layer_norm, linear, Embedding, LayerNorm, Linear, VarBuilder};
use serde::Deserialize;

/// The fields of an MPNet `config.json` the encoder reads.
#[derive(Clone, Debug, Deserialize)]
pub(super) struct Config {
    vocab_size: usize,
    hidden_size: usize,
    num_hidden_layers: usize,
    num_attention_heads: usize,
    intermediate_size: usize,
    pub(super) max_position_embeddings: usize,
    layer_norm_eps: f64,
    pub(super) pad_token_id: u32,
    relative_attention_num_buckets: usize,
}

/// How far apart two tokens are, at most, for the relative bias to tell distances apart.
const MAX_DISTANCE: f32 = 128.0;

struct Layer {
    q: Linear,
    k: Linear,
    v: Linear,
    o: Linear,
    attention_norm: LayerNorm,
    intermediate: Linear,
    output: Linear,
    output_norm: LayerNorm,
}

/// The encoder: token ids in, one vector per token out.
pub(super) struct MpNet {
    words: Embedding,
    positions: Embedding,
    embedding_norm: LayerNorm,
    layers: Vec<Layer>,
    relative_bias: Embedding,
    buckets: usize,
    heads: usize,
    pad: u32,
}

impl MpNet {
    /// The encoder from its weights, named as `transformers` names them.
    pub(super) fn load(vb: &VarBuilder, config: &Config) -> Result<Self> {
        let hidden = config.hidden_size;
        let norm = |vb: VarBuilder| layer_norm(hidden, config.layer_norm_eps, vb);
        let embeddings = vb.pp("embeddings");
        let encoder = vb.pp("encoder");
        let layers = (0..config.num_hidden_layers)
            .map(|at| {
                let layer = encoder.pp(format!("layer.{at}"));
                let attention = layer.pp("attention");
                let attn = attention.pp("attn");
                Ok(Layer {
                    q: linear(hidden, hidden, attn.pp("q"))?,
                    k: linear(hidden, hidden, attn.pp("k"))?,
                    v: linear(hidden, hidden, attn.pp("v"))?,
                    o: linear(hidden, hidden, attn.pp("o"))?,
                    attention_norm: norm(attention.pp("LayerNorm"))?,
                    intermediate: linear(
                        hidden,
                        config.intermediate_size,
                        layer.pp("intermediate.dense"),
                    )?,
                    output: linear(config.intermediate_size, hidden, layer.pp("output.dense"))?,
                    output_norm: norm(layer.pp("output.LayerNorm"))?,
                })
            })
            .collect::<Result<Vec<_>>>()?;
        if config.num_attention_heads == 0 || hidden % config.num_attention_heads != 0 {
            candle_core::bail!(
                "{} attention heads do not divide {hidden} dimensions",
                config.num_attention_heads
            );
        }
        Ok(MpNet {
            words: embedding(config.vocab_size, hidden, embeddings.pp("word_embeddings"))?,
            positions: embedding(
                config.max_position_embeddings,
                hidden,
                embeddings.pp("position_embeddings"),
            )?,
            embedding_norm: norm(embeddings.pp("LayerNorm"))?,
            layers,
            relative_bias: embedding(
                config.relative_attention_num_buckets,
                config.num_attention_heads,
                encoder.pp("relative_attention_bias"),
            )?,
            buckets: config.relative_attention_num_buckets,
            heads: config.num_attention_heads,
            pad: config.pad_token_id,
        })
    }

    /// One vector per token: `ids` and `mask` are (texts × tokens), the mask 1 where a
    /// token is real and 0 where it pads.
    pub(super) fn forward(&self, ids: &Tensor, mask: &Tensor) -> Result<Tensor> {
        let (texts, width) = ids.dims2()?;
        // Positions count the tokens that are not padding, from the padding id plus one;
        // padding sits at the padding id's own position.
        let rows = ids.to_vec2::<u32>()?;
        let mut positions = Vec::with_capacity(texts * width);
        for row in &rows {
            let mut seen = self.pad;
            for &id in row {
                if id == self.pad {
                    positions.push(self.pad);
                } else {
                    seen = seen.saturating_add(1);
                    positions.push(seen);
                }
            }
        }
        let positions = Tensor::from_vec(positions, (texts, width), ids.device())?;
        let mut hidden = self
            .embedding_norm
            .forward(&(self.words.forward(ids)? + self.positions.forward(&positions)?)?)?;
        // (texts × 1 × 1 × tokens): 0 over real tokens, the lowest float over padding.
        let blocked = ((mask.ones_like()? - mask)?.to_dtype(DType::F32)? * f64::from(f32::MIN))?
            .unsqueeze(1)?
            .unsqueeze(1)?;
        let bias = self.position_bias(width, ids)?.broadcast_add(&blocked)?;
        let head = hidden.dim(D::Minus1)? / self.heads;
        #[allow(clippy::cast_precision_loss)]
        let scale = (head as f64).sqrt();
        let split = |x: Tensor| -> Result<Tensor> {
            x.reshape((texts, width, self.heads, head))?
                .transpose(1, 2)?
                .contiguous()
        };
        for layer in &self.layers {
            let q = split(layer.q.forward(&hidden)?)?;
            let k = split(layer.k.forward(&hidden)?)?;
            let v = split(layer.v.forward(&hidden)?)?;
            let scores = (q.matmul(&k.t()?)? / scale)?.broadcast_add(&bias)?;
            let attended = candle_nn::ops::softmax_last_dim(&scores)?
                .matmul(&v)?
                .transpose(1, 2)?
                .reshape((texts, width, self.heads * head))?;
            let attended = layer
                .attention_norm
                .forward(&(layer.o.forward(&attended)? + &hidden)?)?;
            let inner = layer.intermediate.forward(&attended)?.gelu_erf()?;
            hidden = layer
                .output_norm
                .forward(&(layer.output.forward(&inner)? + &attended)?)?;
        }
        Ok(hidden)
    }

    /// The relative bias, (1 × heads × tokens × tokens): for query token `i` and key token
    /// `j`, each head's learnt value for the bucket of `j - i`.
    fn position_bias(&self, width: usize, on: &Tensor) -> Result<Tensor> {
        let mut buckets = Vec::with_capacity(width * width);
        for i in 0..width {
            for j in 0..width {
                buckets.push(bucket(j, i, self.buckets));
            }
        }
        let buckets = Tensor::from_vec(buckets, (width, width), on.device())?;
        self.relative_bias
            .forward(&buckets)?
            .permute((2, 0, 1))?
            .unsqueeze(0)?
            .contiguous()
    }
}

/// The bucket of a key at `key` for a query at `query`, of `buckets` in all: half for keys
/// at or before the query and half for keys after it; in each half, distances below a
/// quarter of `buckets` have their own bucket and longer ones share buckets spaced by the
/// logarithm up to [`MAX_DISTANCE`]. Reckoned in `f32`, as `transformers` reckons it, so the
/// boundaries fall where the model learnt them.
fn bucket(key: usize, query: usize, buckets: usize) -> u32 {
    let half = buckets / 2;
    let exact = half / 2;
    let (base, distance) = if key > query {
        (half, key - query)
    } else {
        (0, query - key)
    };
    let within = if distance < exact {
        distance
    } else {
        #[allow(
            clippy::cast_precision_loss,
            clippy::cast_possible_truncation,
            clippy::cast_sign_loss
        )]
        let far = exact
            + ((distance as f32 / exact as f32).ln() / (MAX_DISTANCE / exact as f32).ln()
                * (half - exact) as f32) as usize;
        far.min(half.saturating_sub(1))
    };
    u32::try_from(base + within).unwrap_or(u32::MAX)
}

#[cfg(test)]
mod tests {
    use super::bucket;

    #[test]
    fn distances_fall_in_their_buckets_as_transformers_puts_them() {
        // Computed with transformers' relative_position_bucket (32 buckets, 128 apart).
        let after: Vec<u32> = [0, 1, 7, 8, 11, 12, 16, 31, 32, 64, 127, 128, 300]
            .iter()
            .map(|&d| bucket(d, 0, 32))
            .collect();
        assert_eq!(after, [0, 17, 23, 24, 24, 25, 26, 27, 28, 30, 31, 31, 31]);
        let before: Vec<u32> = [1, 7, 8, 16, 300]
            .iter()
            .map(|&d| bucket(0, d, 32))
            .collect();
        assert_eq!(before, [1, 7, 8, 10, 15]);
    }
}
