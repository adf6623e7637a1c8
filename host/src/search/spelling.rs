//! Misspelt query words: "clikc" for `click`, "screenshoot" for `screenshot`.

/// The shortest word, in letters, that is read as a possible misspelling: shorter ones are
/// too often another real word one letter away (`stale` and `state`, `night` and `right`).
pub(crate) const SHORTEST: usize = 5;

/// The longest word, in letters, that is read as a possible misspelling: a longer one is no
/// slip of a common word, and this bounds the work of a hostile query.
pub(crate) const LONGEST: usize = 24;

/// From this many letters, any one slip makes a misspelling; below it, only two neighbouring
/// letters swapped, the slip that least often makes another real word.
pub(crate) const ANY_SLIP: usize = 8;

/// The words `word` (lowercase) may have been meant as, one slip away: for a word of
/// [`SHORTEST`] letters up to [`ANY_SLIP`], two neighbouring letters swapped (`clikc` for
/// `click`); from [`ANY_SLIP`] letters, also one letter left out, one too many, or one
/// wrong (`understnd` for `understand`). A letter put in or changed is one of `a` to `z`
/// or of the word's own. Empty for a word shorter than [`SHORTEST`] or longer than
/// [`LONGEST`]; so at most about 2,500.
pub(crate) fn slips(word: &str) -> Vec<String> {
    let letters: Vec<char> = word.chars().collect();
    let n = letters.len();
    let mut out = Vec::new();
    if !(SHORTEST..=LONGEST).contains(&n) {
        return out;
    }
    let text = |letters: &[char]| letters.iter().collect::<String>();
    for at in 0..n - 1 {
        let mut swapped = letters.clone();
        swapped.swap(at, at + 1);
        out.push(text(&swapped));
    }
    if n >= ANY_SLIP {
        let mut alphabet: Vec<char> = ('a'..='z').chain(letters.iter().copied()).collect();
        alphabet.sort_unstable();
        alphabet.dedup();
        for at in 0..=n {
            let (head, tail) = letters.split_at(at);
            if let Some((_, rest)) = tail.split_first() {
                out.push(text(&[head, rest].concat()));
                for &c in &alphabet {
                    out.push(text(&[head, &[c], rest].concat()));
                }
            }
            for &c in &alphabet {
                out.push(text(&[head, &[c], tail].concat()));
            }
        }
    }
    out.retain(|candidate| candidate != word);
    out.sort_unstable();
    out.dedup();
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn slip(typed: &str, meant: &str) -> bool {
        slips(typed).iter().any(|s| s == meant)
    }

    #[test]
    fn a_swap_in_a_short_word_any_one_slip_in_a_long_one() {
        assert!(slip("qeury", "query"));
        assert!(slip("clikc", "click"));
        assert!(slip("naviagte", "navigate"));
        assert!(slip("understnd", "understand"));
        assert!(slip("screenshoot", "screenshot"));
        assert!(slip("documentaion", "documentation"));
        assert!(slip("documentatiom", "documentation"));
        // Short words one letter from another word are words, not typos.
        assert!(!slip("stale", "state"));
        assert!(!slip("sprint", "print"));
        assert!(!slip("world", "word"));
        assert!(!slip("clck", "click"));
        assert!(slips("clck").is_empty());
        // Never the word itself, nor two slips away, nor a swap that is not of neighbours.
        assert!(!slip("click", "click"));
        assert!(!slip("screenshooot", "screenshot"));
        assert!(!slip("kcilc", "click"));
        // Letters, not bytes: `ä` is two bytes and one letter.
        assert!(slip("fähcer", "fächer"));
        assert!(slip("häuserblok", "häuserblock"));
        // Bounded, whatever the word.
        let long: String = ('a'..='x').collect();
        assert!(!slips(&long).is_empty() && slips(&long).len() <= 2_500);
        let odd: String = ('\u{3b1}'..='\u{3c8}').take(LONGEST).collect();
        assert!(slips(&odd).len() <= 2_500);
        assert!(slips(&format!("{long}y")).is_empty());
    }
}
