//! British spellings read as American ones: a request to "summarise the colour settings"
//! finds `summarize` and `color`, and a server that writes "organisation" is found by a
//! request for an "organization". Most tool catalogs are written in American English, their
//! users write both.
//!
//! The stemmer alone does not meet the two: Snowball reads `organise` as `organis` and
//! `organize` as `organ`, `colour` and `color` as themselves. Each word is read twice here,
//! before stemming ([`american_word`]: the `-ise` and `-yse` endings) and after it
//! ([`american_stem`]: the words that differ elsewhere). Both sides of a search pass through
//! the same two steps, so a word read wrongly still meets itself; what a wrong reading
//! could cost is only a meeting with another word.

/// Endings a British word may spell with `s` where American English has `z`, longest first
/// (the first `s` of each is the one that differs).
const Z_ENDINGS: [&str; 13] = [
    "isations", "isation", "isers", "iser", "ising", "ised", "ises", "ise", "ysing", "ysed",
    "yses", "yser", "yse",
];

/// The shortest beginning, in letters, before an `-ise` ending that is read as American:
/// shorter ones are words that end in `-ise` on both sides of the ocean (`raise`, `noise`,
/// `poise`, `guise`, `rise`).
const SHORTEST_BEGINNING: usize = 3;

/// Beginnings before `-ise` (and its other endings) of the longer words American English
/// spells with an `s` too (`advertise`, `exercise`, `promise`, `practise` whose American
/// form is `practice`), sorted. Words ending in `wise` (`otherwise`, `bitwise`) are never
/// read.
const S_IN_BOTH: [&str; 33] = [
    "adv", "advert", "appra", "bra", "chast", "circumc", "compr", "comprom", "conc", "cru", "dem",
    "desp", "dev", "disgu", "enterpr", "exc", "exerc", "expert", "franch", "improv", "inc",
    "merchand", "parad", "pract", "prec", "prem", "prom", "repr", "rev", "superv", "surm", "surpr",
    "telev",
];

/// `word` (lowercase) as American English spells it where British English ends it in
/// `-ise`, `-isation`, `-yse` and their forms (`organised` to `organized`, `analyse` to
/// `analyze`); any other word unchanged.
pub(crate) fn american_word(word: &str) -> Option<String> {
    let (beginning, ending) = Z_ENDINGS
        .iter()
        .find_map(|ending| Some((word.strip_suffix(ending)?, *ending)))?;
    if beginning.chars().count() < SHORTEST_BEGINNING
        || beginning.ends_with('w')
        || S_IN_BOTH.binary_search(&beginning).is_ok()
    {
        return None;
    }
    Some(format!("{beginning}{}", ending.replacen('s', "z", 1)))
}

/// Stems (Snowball English) of British spellings and the stems of their American ones,
/// sorted by the British stem: `-our` (`colour`), `-re` (`centre`), `-ogue` (`catalogue`),
/// `-ence` (`licence`), and words of their own (`grey`, `programme`, `judgement`).
const STEMS: [(&str, &str); 52] = [
    ("aeroplan", "airplan"),
    ("aluminium", "aluminum"),
    ("amongst", "among"),
    ("analogu", "analog"),
    ("armour", "armor"),
    ("artefact", "artifact"),
    ("behaviour", "behavior"),
    ("candour", "candor"),
    ("catalogu", "catalog"),
    ("centimetr", "centimet"),
    ("centr", "center"),
    ("clamour", "clamor"),
    ("colour", "color"),
    ("defenc", "defens"),
    ("dialogu", "dialog"),
    ("endeavour", "endeavor"),
    ("favour", "favor"),
    ("favourit", "favorit"),
    ("fibr", "fiber"),
    ("flavour", "flavor"),
    ("fuell", "fuel"),
    ("grey", "gray"),
    ("harbour", "harbor"),
    ("honour", "honor"),
    ("humour", "humor"),
    ("jewelleri", "jewelri"),
    ("judgement", "judgment"),
    ("kilometr", "kilomet"),
    ("labour", "labor"),
    ("learnt", "learn"),
    ("licenc", "licens"),
    ("litr", "liter"),
    ("manoeuvr", "maneuv"),
    ("metr", "meter"),
    ("millimetr", "millimet"),
    ("mould", "mold"),
    ("neighbour", "neighbor"),
    ("neighbourhood", "neighborhood"),
    ("odour", "odor"),
    ("offenc", "offens"),
    ("parlour", "parlor"),
    ("practis", "practic"),
    ("pretenc", "pretens"),
    ("programm", "program"),
    ("rigour", "rigor"),
    ("rumour", "rumor"),
    ("savour", "savor"),
    ("sceptic", "skeptic"),
    ("theatr", "theater"),
    ("vapour", "vapor"),
    ("vigour", "vigor"),
    ("whilst", "while"),
];

/// The stem of the American spelling of the word `stem` (Snowball English) was made from,
/// where British English spells that word otherwise (`colour` to `color`, `centr` to
/// `center`); `None` for any other stem.
pub(crate) fn american_stem(stem: &str) -> Option<&'static str> {
    STEMS
        .binary_search_by(|(british, _)| british.cmp(&stem))
        .ok()
        .and_then(|at| STEMS.get(at))
        .map(|(_, american)| *american)
}

/// Whether `stem` is the American stem of a word British English spells otherwise, so that
/// the word as written (its form) may be either spelling: `color` (from `colors` or
/// `colours`), `center`; not `organ`, whose British forms are read as American ones whole.
pub(crate) fn spelt_two_ways(stem: &str) -> bool {
    STEMS.iter().any(|&(_, american)| american == stem)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::search::tokens;

    /// Each line: British forms, then American ones, of words a request or a catalog may hold.
    const PAIRS: &[(&str, &str)] = &[
        (
            "organise organised organises organising",
            "organize organized organizes organizing",
        ),
        (
            "organisation organisations organiser",
            "organization organizations organizer",
        ),
        (
            "summarise summarised summarising",
            "summarize summarized summarizing",
        ),
        ("analyse analysed analysing", "analyze analyzed analyzing"),
        (
            "authorise authorisation authorised",
            "authorize authorization authorized",
        ),
        (
            "optimise optimisation initialise serialise",
            "optimize optimization initialize serialize",
        ),
        (
            "normalise normalisation visualise visualisation",
            "normalize normalization visualize visualization",
        ),
        (
            "prioritise categorise customise synchronise recognise",
            "prioritize categorize customize synchronize recognize",
        ),
        (
            "finalise minimise maximise utilise localise",
            "finalize minimize maximize utilize localize",
        ),
        (
            "capitalise sanitise tokenise emphasise criticise",
            "capitalize sanitize tokenize emphasize criticize",
        ),
        ("paralyse catalyse", "paralyze catalyze"),
        (
            "colour colours coloured colourful",
            "color colors colored colorful",
        ),
        (
            "favourite favourites favour favourable",
            "favorite favorites favor favorable",
        ),
        (
            "behaviour behavioural honour flavour labour",
            "behavior behavioral honor flavor labor",
        ),
        (
            "neighbour neighbourhood humour rumour harbour",
            "neighbor neighborhood humor rumor harbor",
        ),
        (
            "armour vapour odour endeavour savour",
            "armor vapor odor endeavor savor",
        ),
        (
            "parlour rigour vigour candour clamour",
            "parlor rigor vigor candor clamor",
        ),
        (
            "centre centres centred centring",
            "center centers centered centering",
        ),
        (
            "metre metres kilometre centimetre millimetre",
            "meter meters kilometer centimeter millimeter",
        ),
        (
            "litre theatre fibre manoeuvre",
            "liter theater fiber maneuver",
        ),
        (
            "catalogue catalogues catalogued dialogue analogue",
            "catalog catalogs cataloged dialog analog",
        ),
        (
            "licence licences defence offence pretence",
            "license licenses defense offense pretense",
        ),
        (
            "grey greyed programme programmes",
            "gray grayed program programs",
        ),
        (
            "judgement artefact aluminium mould sceptical",
            "judgment artifact aluminum mold skeptical",
        ),
        (
            "jewellery aeroplane whilst amongst learnt",
            "jewelry airplane while among learned",
        ),
        (
            "practise practised practising",
            "practice practiced practicing",
        ),
        (
            "cancelled travelling modelling labelled fuelled",
            "canceled traveling modeling labeled fueled",
        ),
        (
            "enrolment fulfilment instalment",
            "enrollment fulfillment installment",
        ),
    ];

    #[test]
    fn british_and_american_spellings_of_a_word_are_one_term() {
        for (british, american) in PAIRS {
            assert_eq!(tokens(british), tokens(american), "{british} / {american}");
        }
    }

    #[test]
    fn words_spelt_with_s_everywhere_are_left_alone() {
        for word in [
            "raise",
            "noise",
            "rise",
            "wise",
            "otherwise",
            "bitwise",
            "pairwise",
            "advertise",
            "advertising",
            "exercise",
            "exercised",
            "promise",
            "promising",
            "enterprise",
            "surprise",
            "revise",
            "supervisor",
            "precise",
            "concise",
            "expertise",
            "improvise",
            "franchise",
            "merchandise",
            "compromise",
            "premises",
            "devise",
            "advise",
            "adviser",
            "boise",
            "analysis",
        ] {
            assert_eq!(american_word(word), None, "{word}");
        }
        // Their stems are their own: no request for "rise" finds "rize".
        assert_eq!(
            tokens("raise rises advertised"),
            ["rais", "rise", "advertis"]
        );
    }

    #[test]
    fn american_spellings_are_read_as_they_were() {
        // Nothing American changes: these stems are what they were before British
        // spellings were read.
        assert_eq!(
            tokens("organize color center catalog tokenize"),
            ["organ", "color", "center", "catalog", "token"]
        );
        for (_, american) in PAIRS {
            for word in american.split(' ') {
                assert_eq!(american_word(word), None, "{word}");
            }
        }
    }

    #[test]
    fn the_stem_table_is_sorted_and_maps_to_stems_no_british_word_has() {
        assert!(STEMS.windows(2).all(|pair| pair[0].0 < pair[1].0));
        assert!(S_IN_BOTH.windows(2).all(|pair| pair[0] < pair[1]));
        for (british, american) in STEMS {
            assert_eq!(american_stem(american), None, "{american} is read again");
            assert_eq!(american_stem(british), Some(american));
        }
    }
}
