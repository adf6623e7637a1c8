//! Two rankers fused by reciprocal rank.

use std::collections::HashMap;

use super::text::ToolText;
use super::{best, keys, Hit, RankError, Ranker};

/// Reciprocal rank fusion of two rankers over the same tools: each tool scores
/// `1 / (K + rank)` in each list it appears in (ranks from 1, [`Hybrid::K`] = 60), and the
/// sums are ranked. Only ranks are fused, never the scores themselves, so a BM25 score and a
/// cosine need no common scale; a tool that one ranker places first and the other misses
/// still ranks high.
pub struct Hybrid<A, B> {
    first: A,
    second: B,
    keys: Vec<(String, String)>,
}

impl<A: Ranker, B: Ranker> Hybrid<A, B> {
    /// The damping constant of reciprocal rank fusion (Cormack, Clarke and Büttcher, 2009).
    pub const K: f64 = 60.0;

    /// How deep each ranker's list is read, at least: a tool ranked below this by both is
    /// not a candidate.
    pub const DEPTH: usize = 50;

    /// The fusion of `first` and `second`, both built from `tools`.
    pub fn new(first: A, second: B, tools: &[ToolText]) -> Self {
        Hybrid {
            first,
            second,
            keys: keys(tools),
        }
    }
}

impl<A: Ranker, B: Ranker> Ranker for Hybrid<A, B> {
    fn rank(&self, query: &str, k: usize) -> Result<Vec<Hit>, RankError> {
        let depth = k.max(Self::DEPTH);
        let mut fused: HashMap<usize, f64> = HashMap::new();
        for list in [
            self.first.rank(query, depth)?,
            self.second.rank(query, depth)?,
        ] {
            for (rank, hit) in (1_u32..).zip(list) {
                *fused.entry(hit.index).or_default() += 1.0 / (Self::K + f64::from(rank));
            }
        }
        let hits = fused
            .into_iter()
            .map(|(index, score)| Hit { index, score })
            .collect();
        Ok(best(hits, k, &self.keys))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A ranker that returns a fixed list.
    struct Fixed(Vec<usize>);

    impl Ranker for Fixed {
        fn rank(&self, _: &str, k: usize) -> Result<Vec<Hit>, RankError> {
            Ok(self
                .0
                .iter()
                .take(k)
                .map(|&index| Hit { index, score: 1.0 })
                .collect())
        }
    }

    fn tools(n: usize) -> Vec<ToolText> {
        (0..n)
            .map(|i| ToolText {
                server: "s".into(),
                tool: format!("t{i}"),
                name_terms: Vec::new(),
                body_terms: Vec::new(),
                summary_terms: Vec::new(),
                passage: String::new(),
                words: Vec::new(),
            })
            .collect()
    }

    fn indices(ranker: &impl Ranker, k: usize) -> Vec<usize> {
        ranker
            .rank("q", k)
            .unwrap()
            .iter()
            .map(|h| h.index)
            .collect()
    }

    #[test]
    fn agreement_wins_and_one_rankers_first_place_survives_the_others_miss() {
        let tools = tools(4);
        let fused = Hybrid::new(Fixed(vec![0, 1, 2]), Fixed(vec![1, 3, 0]), &tools);
        let order = indices(&fused, 4);
        // 1 is second and first: best. 0 is first and third. 3 and 2 appear once each,
        // second beating third.
        assert_eq!(order, [1, 0, 3, 2]);
        assert_eq!(fused.rank("q", 2).unwrap().len(), 2);
    }

    #[test]
    fn ties_are_broken_by_name_not_by_map_order() {
        let tools = tools(3);
        let fused = Hybrid::new(Fixed(vec![2, 0]), Fixed(vec![0, 2]), &tools);
        assert_eq!(indices(&fused, 3), [0, 2]);
    }
}
