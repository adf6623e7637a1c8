//! The tool vectors a model has computed, kept by the text they embed, in memory and, as
//! bytes, across runs.

use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;

use super::embed::Embedder;
use super::text::ToolText;

/// What a cache's bytes start with; the last byte is the format's version.
const MAGIC: &[u8; 24] = b"mcp-sansio vector cache\x01";

/// How far from 1 the length of a stored vector may be: every vector the model gives is
/// scaled to unit length, so one further off was not written by [`VectorCache::to_bytes`].
const UNIT_SLACK: f32 = 1e-3;

/// Vectors already computed, by the exact text they embed: a catalog that comes back
/// unchanged after `list_changed` costs nothing to index again, and a changed tool costs
/// one text.
///
/// A cache belongs to the model that filled it ([`Embedder::fingerprint`]): given to an
/// [`Embeddings`](super::Embeddings) of another model, it is emptied first, as another
/// model's vectors answer nothing. [`VectorCache::to_bytes`] and
/// [`VectorCache::from_bytes`] keep it across runs, so that a process that starts again
/// over the same catalog embeds no tool at all.
#[derive(Clone, Debug, Default)]
pub struct VectorCache {
    vectors: HashMap<String, Arc<[f32]>>,
    computed: usize,
    /// The fingerprint of the model whose vectors these are; `None` until one fills it.
    model: Option<[u8; 32]>,
}

/// Why bytes could not be read back as a [`VectorCache`]. Either way the cache is only a
/// cache: computing the vectors again is the remedy.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum CacheError {
    /// The bytes are not a cache [`VectorCache::to_bytes`] wrote, or were damaged since.
    Malformed(String),
    /// The cache holds vectors of another model than the one it is read for.
    OtherModel,
}

impl fmt::Display for CacheError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CacheError::Malformed(why) => {
                write!(
                    f,
                    "the vector cache is damaged or not a vector cache: {why}"
                )
            }
            CacheError::OtherModel => write!(
                f,
                "the vector cache holds another model's vectors, not this model's"
            ),
        }
    }
}

impl std::error::Error for CacheError {}

impl VectorCache {
    /// An empty cache.
    pub fn new() -> Self {
        VectorCache::default()
    }

    /// How many texts it holds.
    pub fn len(&self) -> usize {
        self.vectors.len()
    }

    /// Whether it holds none.
    pub fn is_empty(&self) -> bool {
        self.vectors.is_empty()
    }

    /// How many texts have been run through the model to fill it, over its life (read
    /// back from bytes, it starts at 0).
    pub fn computed(&self) -> usize {
        self.computed
    }

    /// Keeps only the texts of `tools`, so that a cache kept across catalogs does not grow
    /// with every tool a server ever listed.
    pub fn retain(&mut self, tools: &[ToolText]) {
        let wanted: std::collections::HashSet<&str> =
            tools.iter().map(|t| t.passage.as_str()).collect();
        self.vectors
            .retain(|text, _| wanted.contains(text.as_str()));
    }

    /// The cache as bytes, to be kept (in a file, say) and read back with
    /// [`VectorCache::from_bytes`]: the model's fingerprint, then each text and its vector,
    /// in the order of the texts, so that one cache always gives the same bytes. A vector
    /// takes 4 bytes a number (1.5 KiB for all-MiniLM-L6-v2, 3 KiB for all-mpnet-base-v2)
    /// and its text its own length.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut entries: Vec<(&String, &Arc<[f32]>)> = self.vectors.iter().collect();
        entries.sort_unstable_by(|a, b| a.0.cmp(b.0));
        let dimensions = entries.first().map_or(0, |(_, vector)| vector.len());
        let mut out = Vec::with_capacity(
            MAGIC.len()
                + 40
                + entries
                    .iter()
                    .map(|(text, vector)| 4 + text.len() + 4 * vector.len())
                    .sum::<usize>(),
        );
        out.extend_from_slice(MAGIC);
        out.extend_from_slice(&self.model.unwrap_or([0; 32]));
        out.extend_from_slice(&length(dimensions).to_le_bytes());
        out.extend_from_slice(&length(entries.len()).to_le_bytes());
        for (text, vector) in entries {
            out.extend_from_slice(&length(text.len()).to_le_bytes());
            out.extend_from_slice(text.as_bytes());
            for number in vector.iter() {
                out.extend_from_slice(&number.to_le_bytes());
            }
        }
        out
    }

    /// A cache that [`VectorCache::to_bytes`] wrote, read back for `embedder`.
    ///
    /// Every byte is checked before it is trusted: the file may have been cut short or
    /// written by something else, and a vector read wrong would rank tools wrong without a
    /// word. Memory grows with the bytes given, no further.
    ///
    /// # Errors
    /// [`CacheError::OtherModel`] when another model computed the vectors (an empty cache
    /// belongs to any model); [`CacheError::Malformed`] when the bytes are not such a cache
    /// (cut short, a count that does not match, text that is not UTF-8, a text twice, a
    /// vector not of the model's width or not of unit length).
    pub fn from_bytes(bytes: &[u8], embedder: &Embedder) -> Result<Self, CacheError> {
        Self::read(bytes, embedder.fingerprint(), embedder.dimensions())
    }

    /// [`VectorCache::from_bytes`] for a model known by its fingerprint and width.
    fn read(bytes: &[u8], model: [u8; 32], width: usize) -> Result<Self, CacheError> {
        let mut reader = Reader { rest: bytes };
        if reader.take(MAGIC.len())? != MAGIC {
            return Err(malformed("it does not start as a vector cache does"));
        }
        let fingerprint = reader.take(32)?;
        let dimensions = reader.count()?;
        let entries = reader.count()?;
        if entries > 0 && fingerprint != model {
            return Err(CacheError::OtherModel);
        }
        if entries > 0 && dimensions != width {
            return Err(malformed(format!(
                "its vectors have {dimensions} numbers, the model's {width}"
            )));
        }
        let mut vectors = HashMap::new();
        for entry in 0..entries {
            let text_length = reader.count()?;
            let text = std::str::from_utf8(reader.take(text_length)?)
                .map_err(|_| malformed(format!("text {entry} is not UTF-8")))?;
            let numbers = reader.take(width.saturating_mul(4))?;
            let vector: Arc<[f32]> = numbers
                .chunks_exact(4)
                .map(|n| f32::from_le_bytes(n.try_into().unwrap_or([0; 4])))
                .collect();
            let norm = vector.iter().map(|x| x * x).sum::<f32>().sqrt();
            if !((1.0 - UNIT_SLACK)..=(1.0 + UNIT_SLACK)).contains(&norm) {
                return Err(malformed(format!(
                    "the vector of text {entry} is not of unit length"
                )));
            }
            if vectors.insert(text.to_owned(), vector).is_some() {
                return Err(malformed(format!("text {entry} is there twice")));
            }
        }
        if !reader.rest.is_empty() {
            return Err(malformed(format!(
                "{} bytes follow its last vector",
                reader.rest.len()
            )));
        }
        Ok(VectorCache {
            vectors,
            computed: 0,
            model: Some(model),
        })
    }

    /// Makes this the cache of the model `fingerprint`: another model's vectors are dropped.
    pub(super) fn bind(&mut self, fingerprint: [u8; 32]) {
        if self.model != Some(fingerprint) {
            self.vectors.clear();
            self.model = Some(fingerprint);
        }
    }

    /// The vector of `text`, if computed.
    pub(super) fn get(&self, text: &str) -> Option<&Arc<[f32]>> {
        self.vectors.get(text)
    }

    /// Keeps `vector`, just computed for `text`.
    pub(super) fn insert(&mut self, text: &str, vector: Vec<f32>) {
        self.vectors.insert(text.to_owned(), vector.into());
        self.computed += 1;
    }
}

/// A length as the four bytes the format gives it; no cache of this crate's holds a text
/// or a count past `u32`, so the cap is never reached in practice.
fn length(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

fn malformed(why: impl Into<String>) -> CacheError {
    CacheError::Malformed(why.into())
}

/// The bytes not yet read.
struct Reader<'a> {
    rest: &'a [u8],
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], CacheError> {
        if n > self.rest.len() {
            return Err(malformed(format!(
                "it ends {} bytes short",
                n - self.rest.len()
            )));
        }
        let (taken, rest) = self.rest.split_at(n);
        self.rest = rest;
        Ok(taken)
    }

    fn count(&mut self) -> Result<usize, CacheError> {
        let n = u32::from_le_bytes(self.take(4)?.try_into().unwrap_or([0; 4]));
        usize::try_from(n).map_err(|_| malformed("a count is past this machine's reach"))
    }
}

#[cfg(test)]
mod tests {
    use super::{CacheError, VectorCache};

    const MODEL: [u8; 32] = [7; 32];

    /// A cache of two texts with 3-number unit vectors, as model `MODEL` would fill it.
    fn filled() -> VectorCache {
        let mut cache = VectorCache::new();
        cache.bind(MODEL);
        cache.insert("read a file", vec![1.0, 0.0, 0.0]);
        cache.insert("list issues ✓", vec![0.0, 0.6, 0.8]);
        cache
    }

    #[test]
    fn a_cache_read_back_holds_the_same_vectors_and_writes_the_same_bytes() {
        let cache = filled();
        let bytes = cache.to_bytes();
        let back = VectorCache::read(&bytes, MODEL, 3).unwrap();
        assert_eq!(back.len(), 2);
        assert_eq!(back.computed(), 0);
        assert_eq!(&**back.get("list issues ✓").unwrap(), &[0.0, 0.6, 0.8]);
        assert_eq!(back.to_bytes(), bytes);
    }

    #[test]
    fn another_models_cache_is_refused_and_an_empty_one_is_anyones() {
        let bytes = filled().to_bytes();
        assert_eq!(
            VectorCache::read(&bytes, [8; 32], 3).unwrap_err(),
            CacheError::OtherModel
        );
        let empty = VectorCache::new().to_bytes();
        let read = VectorCache::read(&empty, [8; 32], 3).unwrap();
        assert!(read.is_empty());
        assert_eq!(read.model, Some([8; 32]));
    }

    #[test]
    fn binding_to_another_model_drops_the_vectors() {
        let mut cache = filled();
        cache.bind(MODEL);
        assert_eq!(cache.len(), 2);
        cache.bind([8; 32]);
        assert!(cache.is_empty());
        assert_eq!(cache.computed(), 2, "its life's count stays");
    }

    #[test]
    fn every_cut_and_every_flipped_byte_is_refused_or_read_without_panic() {
        let bytes = filled().to_bytes();
        for end in 0..bytes.len() {
            assert!(
                matches!(
                    VectorCache::read(&bytes[..end], MODEL, 3),
                    Err(CacheError::Malformed(_))
                ),
                "cut at {end}"
            );
        }
        let mut longer = bytes.clone();
        longer.push(0);
        assert!(VectorCache::read(&longer, MODEL, 3).is_err());
        for at in 0..bytes.len() {
            for bit in 0..8 {
                let mut flipped = bytes.clone();
                flipped[at] ^= 1 << bit;
                // Read or refused, never a panic; a flip in a vector is never taken as is.
                if let Ok(read) = VectorCache::read(&flipped, MODEL, 3) {
                    for text in ["read a file", "list issues ✓"] {
                        if let Some(vector) = read.get(text) {
                            let norm: f32 = vector.iter().map(|x| x * x).sum::<f32>().sqrt();
                            assert!((norm - 1.0).abs() <= super::UNIT_SLACK, "{at} {bit}");
                        }
                    }
                }
            }
        }
    }

    proptest::proptest! {
        /// Any bytes, and any bytes after a cache's header, are read or refused; what is
        /// read holds only unit vectors of the model's width.
        #[test]
        fn any_bytes_are_read_or_refused_without_panic(
            tail in proptest::collection::vec(proptest::num::u8::ANY, 0..256),
            width in 0_usize..5,
        ) {
            let mut bytes = filled().to_bytes();
            bytes.truncate(super::MAGIC.len() + 32);
            bytes.extend_from_slice(&tail);
            for input in [&tail[..], &bytes[..]] {
                if let Ok(read) = VectorCache::read(input, MODEL, width) {
                    for vector in read.vectors.values() {
                        proptest::prop_assert_eq!(vector.len(), width);
                        let norm: f32 = vector.iter().map(|x| x * x).sum::<f32>().sqrt();
                        proptest::prop_assert!((norm - 1.0).abs() <= super::UNIT_SLACK);
                    }
                }
            }
        }
    }

    #[test]
    fn what_is_wrong_is_named() {
        let bytes = filled().to_bytes();
        let why = |bytes: &[u8], width| match VectorCache::read(bytes, MODEL, width) {
            Err(CacheError::Malformed(why)) => why,
            other => panic!("{other:?}"),
        };
        assert!(why(b"not a cache at all, just some text", 3).contains("does not start"));
        assert!(why(&bytes, 4).contains("3 numbers, the model's 4"));
        // The last text's ("read a file") first number, 1.0, made 2.0: no longer of unit
        // length; and made NaN.
        let mut stretched = bytes.clone();
        let at = bytes.len() - 12;
        stretched[at..at + 4].copy_from_slice(&2.0_f32.to_le_bytes());
        assert!(why(&stretched, 3).contains("not of unit length"));
        let mut nan = bytes.clone();
        nan[at..at + 4].copy_from_slice(&f32::NAN.to_le_bytes());
        assert!(why(&nan, 3).contains("not of unit length"));
        // A text twice: the second entry renamed to the first's length-prefixed text.
        let mut twice = VectorCache::new();
        twice.bind(MODEL);
        twice.insert("ab", vec![1.0, 0.0, 0.0]);
        twice.insert("ac", vec![1.0, 0.0, 0.0]);
        let mut twice = twice.to_bytes();
        let second = twice.len() - 12 - 1;
        twice[second] = b'b';
        assert!(why(&twice, 3).contains("twice"));
        assert!(CacheError::OtherModel.to_string().contains("another model"));
    }
}
