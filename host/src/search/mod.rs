//! Offering fewer tools: ranking a catalog against what the user asked, so that only the few
//! tools most likely to be wanted are offered (every offered tool is text in the prompt).
//!
//! A [`Ranker`] orders the [`ToolText`]s of a catalog for a query; [`Bm25`] is the one that
//! needs nothing but the catalog. [`wilson`] gives the 95% interval of a measured recall, so
//! that two rankers are compared with the noise of the query set in view.

mod bm25;
mod british;
#[cfg(feature = "embed")]
mod embed;
mod hints;
mod hybrid;
#[cfg(feature = "embed")]
mod mpnet;
mod spelling;
mod synonyms;
mod text;
#[cfg(feature = "embed")]
mod vectors;

use std::fmt;

pub use bm25::Bm25;
#[cfg(feature = "embed")]
pub use embed::{EmbedError, Embedder, Embeddings};
pub use hybrid::Hybrid;
pub use text::{summary, tokens, ToolText, FORM_MARK, SUMMARY_CHARS};
pub(crate) use text::{unspaced, Unspaced};
#[cfg(feature = "embed")]
pub use vectors::{CacheError, VectorCache};

/// One ranked tool: its position in the list the ranker was built from, and its score.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Hit {
    /// The tool's index in the [`ToolText`]s given to the ranker.
    pub index: usize,
    /// How well it matches; only the order between hits of one query means anything.
    pub score: f64,
}

/// Orders a catalog's tools for a query.
pub trait Ranker {
    /// The `k` best tools for `query`, best first. Ties are broken by server, then tool
    /// name, so the same catalog and query always give the same list. A ranker may leave
    /// out tools that match nothing ([`Bm25`] does): fewer than `k` hits may come back.
    ///
    /// # Errors
    /// [`RankError::Model`] when a ranker's model fails on the query; [`Bm25`] never fails.
    fn rank(&self, query: &str, k: usize) -> Result<Vec<Hit>, RankError>;
}

/// Why a query could not be ranked.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum RankError {
    /// The ranker's model failed on the query; the reason is the model's own.
    Model(String),
}

impl fmt::Display for RankError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RankError::Model(why) => write!(f, "the ranking model failed on the query: {why}"),
        }
    }
}

impl std::error::Error for RankError {}

/// The (server, tool) of each tool, by index: what ties are broken by.
pub(crate) fn keys(tools: &[ToolText]) -> Vec<(String, String)> {
    tools
        .iter()
        .map(|t| (t.server.clone(), t.tool.clone()))
        .collect()
}

/// The `k` best of `hits`, best first, ties broken by `keys` (server, tool) so that the
/// order never depends on the order the scores were computed in.
pub(crate) fn best(mut hits: Vec<Hit>, k: usize, keys: &[(String, String)]) -> Vec<Hit> {
    let order = |a: &Hit, b: &Hit| {
        b.score
            .total_cmp(&a.score)
            .then_with(|| keys.get(a.index).cmp(&keys.get(b.index)))
    };
    // The best k first, without sorting the rest.
    if k < hits.len() {
        if let Some(at) = k.checked_sub(1) {
            hits.select_nth_unstable_by(at, order);
        }
        hits.truncate(k);
    }
    hits.sort_by(order);
    hits
}

/// The 95% Wilson score interval of a proportion: `successes` of `n`, as `(low, high)`.
/// `(0.0, 1.0)` when `n` is 0.
///
/// ```
/// use mcp_sansio_host::search::wilson;
/// // The seed's figure: 18 of 24 requests (0.75) runs from 0.55 to 0.88.
/// let (low, high) = wilson(18, 24);
/// assert_eq!((format!("{low:.2}"), format!("{high:.2}")), ("0.55".into(), "0.88".into()));
/// ```
pub fn wilson(successes: usize, n: usize) -> (f64, f64) {
    if n == 0 {
        return (0.0, 1.0);
    }
    // The normal quantile for a two-sided 95% interval.
    const Z: f64 = 1.959_963_984_540_054;
    #[allow(clippy::cast_precision_loss)]
    let (s, n) = (successes.min(n) as f64, n as f64);
    let p = s / n;
    let z2 = Z * Z;
    let denominator = 1.0 + z2 / n;
    let centre = (p + z2 / (2.0 * n)) / denominator;
    let half = Z * (p * (1.0 - p) / n + z2 / (4.0 * n * n)).sqrt() / denominator;
    ((centre - half).max(0.0), (centre + half).min(1.0))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wilson_is_within_zero_and_one_and_narrows_with_more_queries() {
        assert_eq!(wilson(0, 0), (0.0, 1.0));
        let (low, high) = wilson(0, 10);
        assert!(low == 0.0 && high > 0.2 && high < 0.35, "{high}");
        let (low, high) = wilson(10, 10);
        assert!(high > 0.999_999 && low > 0.65 && low < 0.8, "{low} {high}");
        let narrow = wilson(750, 1000);
        let wide = wilson(75, 100);
        assert!(narrow.1 - narrow.0 < wide.1 - wide.0);
        assert!(narrow.0 < 0.75 && 0.75 < narrow.1);
    }
}
