//! A strict, single-pass JSON validator.
//!
//! The validator walks a text once, with its own heap stack instead of recursion, and refuses
//! everything two conforming JSON parsers could read differently: invalid UTF-8, duplicate
//! keys (compared after decoding escapes), lone UTF-16 surrogates, numbers no float can hold,
//! and data after the value. It builds no tree: callers get byte spans.

use alloc::{borrow::Cow, string::String, vec::Vec};
use core::ops::Range;

use crate::error::{JsonError, JsonErrorKind};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Container {
    Object,
    Array,
}

/// Where a key sits in the text, and whether it must be decoded to be compared.
#[derive(Clone, Copy, Debug)]
struct Key {
    start: usize,
    end: usize,
    escaped: bool,
}

/// The scanner's working memory, kept between texts so that a long-lived parser does not
/// allocate per frame. Its size is bounded by the nesting limit and the largest frame.
#[derive(Debug, Default)]
pub(crate) struct Scratch {
    stack: Vec<Container>,
    /// Keys of every open object, innermost last; `key_marks` says where each object's start.
    keys: Vec<Key>,
    key_marks: Vec<usize>,
}

/// A cursor over one JSON text that validates as it goes.
pub(crate) struct Scanner<'a, 's> {
    text: &'a str,
    pos: usize,
    max_depth: usize,
    scratch: &'s mut Scratch,
    /// How many runs of insignificant whitespace have been skipped so far.
    whitespace_runs: usize,
}

impl<'a, 's> Scanner<'a, 's> {
    /// Starts a scan of `bytes`, refusing them at once if they are not UTF-8.
    pub(crate) fn new(
        bytes: &'a [u8],
        max_depth: usize,
        scratch: &'s mut Scratch,
    ) -> Result<Self, JsonError> {
        let text = core::str::from_utf8(bytes)
            .map_err(|e| JsonError::new(e.valid_up_to(), JsonErrorKind::InvalidUtf8))?;
        Ok(Scanner::from_str(text, max_depth, scratch))
    }

    /// Starts a scan of text already known to be UTF-8.
    pub(crate) fn from_str(text: &'a str, max_depth: usize, scratch: &'s mut Scratch) -> Self {
        scratch.stack.clear();
        scratch.keys.clear();
        scratch.key_marks.clear();
        Scanner {
            text,
            pos: 0,
            max_depth,
            scratch,
            whitespace_runs: 0,
        }
    }

    pub(crate) fn text(&self) -> &'a str {
        self.text
    }

    fn bytes(&self) -> &'a [u8] {
        self.text.as_bytes()
    }

    fn peek(&self) -> Option<u8> {
        self.bytes().get(self.pos).copied()
    }

    fn error(&self, kind: JsonErrorKind) -> JsonError {
        JsonError::new(self.pos, kind)
    }

    fn end_or(&self, kind: JsonErrorKind) -> JsonError {
        match self.peek() {
            None => self.error(JsonErrorKind::UnexpectedEnd),
            Some(_) => self.error(kind),
        }
    }

    fn skip_whitespace(&mut self) {
        let start = self.pos;
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.peek() {
            self.pos += 1;
        }
        if self.pos != start {
            self.whitespace_runs += 1;
        }
    }

    fn expect(&mut self, byte: u8, what: &'static str) -> Result<(), JsonError> {
        if self.peek() == Some(byte) {
            self.pos += 1;
            Ok(())
        } else {
            Err(self.end_or(JsonErrorKind::Expected(what)))
        }
    }

    /// Scans one complete value starting at the cursor (leading whitespace allowed), leaving
    /// the cursor just after it. Returns the value's span and whether it held any
    /// insignificant whitespace.
    pub(crate) fn value(&mut self) -> Result<(Range<usize>, bool), JsonError> {
        self.skip_whitespace();
        let start = self.pos;
        let runs = self.whitespace_runs;
        self.scan_value()?;
        Ok((start..self.pos, self.whitespace_runs != runs))
    }

    fn scan_value(&mut self) -> Result<(), JsonError> {
        let base = self.scratch.stack.len();
        'value: loop {
            self.skip_whitespace();
            match self.peek() {
                Some(b'{') => {
                    self.open(Container::Object)?;
                    self.skip_whitespace();
                    if self.peek() == Some(b'}') {
                        self.pos += 1;
                        self.close_object()?;
                    } else {
                        self.key()?;
                        continue 'value;
                    }
                }
                Some(b'[') => {
                    self.open(Container::Array)?;
                    self.skip_whitespace();
                    if self.peek() == Some(b']') {
                        self.pos += 1;
                        self.scratch.stack.pop();
                    } else {
                        continue 'value;
                    }
                }
                Some(b'"') => {
                    self.string()?;
                }
                Some(b'-' | b'0'..=b'9') => self.number()?,
                Some(b't') => self.literal(b"true")?,
                Some(b'f') => self.literal(b"false")?,
                Some(b'n') => self.literal(b"null")?,
                _ => return Err(self.end_or(JsonErrorKind::Expected("a value"))),
            }
            // A value is complete: close containers until one wants another element.
            while self.scratch.stack.len() > base {
                self.skip_whitespace();
                let object = self.scratch.stack.last() == Some(&Container::Object);
                match (object, self.peek()) {
                    (true, Some(b',')) => {
                        self.pos += 1;
                        self.skip_whitespace();
                        self.key()?;
                        continue 'value;
                    }
                    (true, Some(b'}')) => {
                        self.pos += 1;
                        self.close_object()?;
                    }
                    (false, Some(b',')) => {
                        self.pos += 1;
                        continue 'value;
                    }
                    (false, Some(b']')) => {
                        self.pos += 1;
                        self.scratch.stack.pop();
                    }
                    (true, _) => return Err(self.end_or(JsonErrorKind::Expected("',' or '}'"))),
                    (false, _) => return Err(self.end_or(JsonErrorKind::Expected("',' or ']'"))),
                }
            }
            return Ok(());
        }
    }

    fn open(&mut self, container: Container) -> Result<(), JsonError> {
        if self.scratch.stack.len() >= self.max_depth {
            return Err(self.error(JsonErrorKind::TooDeep {
                limit: self.max_depth,
            }));
        }
        self.pos += 1;
        self.scratch.stack.push(container);
        if container == Container::Object {
            self.scratch.key_marks.push(self.scratch.keys.len());
        }
        Ok(())
    }

    /// Pops the innermost object, refusing it if two of its keys are equal.
    fn close_object(&mut self) -> Result<(), JsonError> {
        self.scratch.stack.pop();
        let mark = self.scratch.key_marks.pop().unwrap_or(0);
        let text = self.text;
        let keys = self.scratch.keys.get_mut(mark..).unwrap_or_default();
        let unique = if keys.len() <= 8 {
            keys.iter().enumerate().all(|(i, key)| {
                keys.iter()
                    .skip(i + 1)
                    .all(|other| !same_key(text, key, other))
            })
        } else if keys.iter().any(|k| k.escaped) {
            let mut decoded: Vec<Cow<'_, str>> = keys.iter().map(|k| key_text(text, k)).collect();
            decoded.sort_unstable();
            decoded.windows(2).all(|pair| pair.first() != pair.last())
        } else {
            let raw = |k: &Key| text.get(k.start..k.end).unwrap_or_default();
            keys.sort_unstable_by(|a, b| raw(a).cmp(raw(b)));
            keys.windows(2).all(|pair| match pair {
                [a, b] => raw(a) != raw(b),
                _ => true,
            })
        };
        self.scratch.keys.truncate(mark);
        if unique {
            Ok(())
        } else {
            Err(JsonError::new(
                self.pos.saturating_sub(1),
                JsonErrorKind::DuplicateKey,
            ))
        }
    }

    /// Reads `"key":` inside an object and remembers the decoded key.
    fn key(&mut self) -> Result<(), JsonError> {
        if self.peek() != Some(b'"') {
            return Err(self.end_or(JsonErrorKind::Expected("a string key")));
        }
        let (inner, escaped) = self.string()?;
        self.scratch.keys.push(Key {
            start: inner.start,
            end: inner.end,
            escaped,
        });
        self.skip_whitespace();
        self.expect(b':', "':'")
    }

    /// Scans a string whose opening quote is at the cursor. Returns the span between the
    /// quotes and whether it holds any escape.
    pub(crate) fn string(&mut self) -> Result<(Range<usize>, bool), JsonError> {
        self.pos += 1;
        let start = self.pos;
        let mut escaped = false;
        loop {
            let rest = self.bytes().get(self.pos..).unwrap_or_default();
            let Some(offset) = string_stop(rest) else {
                self.pos = self.text.len();
                return Err(self.error(JsonErrorKind::UnexpectedEnd));
            };
            self.pos += offset;
            match self.peek() {
                Some(b'"') => {
                    let inner = start..self.pos;
                    self.pos += 1;
                    return Ok((inner, escaped));
                }
                Some(b'\\') => {
                    escaped = true;
                    self.escape()?;
                }
                _ => return Err(self.error(JsonErrorKind::ControlCharacter)),
            }
        }
    }

    /// Checks one escape whose backslash is at the cursor.
    fn escape(&mut self) -> Result<(), JsonError> {
        let at = self.pos;
        self.pos += 1;
        match self.peek() {
            Some(b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't') => {
                self.pos += 1;
                Ok(())
            }
            Some(b'u') => {
                let unit = self.hex4(at)?;
                match unit {
                    0xD800..=0xDBFF => {
                        let low_at = self.pos;
                        if self.bytes().get(self.pos..self.pos + 2) != Some(b"\\u") {
                            return Err(JsonError::new(at, JsonErrorKind::LoneSurrogate));
                        }
                        self.pos += 1;
                        match self.hex4(low_at)? {
                            0xDC00..=0xDFFF => Ok(()),
                            _ => Err(JsonError::new(at, JsonErrorKind::LoneSurrogate)),
                        }
                    }
                    0xDC00..=0xDFFF => Err(JsonError::new(at, JsonErrorKind::LoneSurrogate)),
                    _ => Ok(()),
                }
            }
            None => Err(self.error(JsonErrorKind::UnexpectedEnd)),
            Some(_) => Err(JsonError::new(at, JsonErrorKind::InvalidEscape)),
        }
    }

    /// Reads the four hex digits after a `u` at the cursor.
    fn hex4(&mut self, escape_at: usize) -> Result<u16, JsonError> {
        let digits = self.bytes().get(self.pos + 1..self.pos + 5);
        let unit = digits.and_then(|d| {
            d.iter().try_fold(0u16, |acc, &b| {
                let digit = char::from(b).to_digit(16)?;
                Some(acc << 4 | digit as u16)
            })
        });
        match unit {
            Some(unit) => {
                self.pos += 5;
                Ok(unit)
            }
            None if digits.is_none() && self.text.len() < self.pos + 5 => Err(JsonError::new(
                self.text.len(),
                JsonErrorKind::UnexpectedEnd,
            )),
            None => Err(JsonError::new(escape_at, JsonErrorKind::InvalidEscape)),
        }
    }

    fn digits(&mut self) -> usize {
        let start = self.pos;
        while let Some(b'0'..=b'9') = self.peek() {
            self.pos += 1;
        }
        self.pos - start
    }

    fn number(&mut self) -> Result<(), JsonError> {
        let start = self.pos;
        if self.peek() == Some(b'-') {
            self.pos += 1;
        }
        let integer = match self.peek() {
            Some(b'0') => {
                self.pos += 1;
                1
            }
            Some(b'1'..=b'9') => self.digits(),
            _ => return Err(self.end_or(JsonErrorKind::Expected("a digit"))),
        };
        if self.peek() == Some(b'.') {
            self.pos += 1;
            if self.digits() == 0 {
                return Err(self.end_or(JsonErrorKind::Expected("a digit after '.'")));
            }
        }
        let mut exponent = false;
        if let Some(b'e' | b'E') = self.peek() {
            exponent = true;
            self.pos += 1;
            if let Some(b'+' | b'-') = self.peek() {
                self.pos += 1;
            }
            if self.digits() == 0 {
                return Err(self.end_or(JsonErrorKind::Expected("a digit in the exponent")));
            }
        }
        // Only an exponent or more than 308 integer digits can reach past f64::MAX.
        if exponent || integer > 308 {
            let text = self.text.get(start..self.pos).unwrap_or_default();
            if text.parse::<f64>().map_or(true, f64::is_infinite) {
                return Err(JsonError::new(start, JsonErrorKind::NumberOutOfRange));
            }
        }
        Ok(())
    }

    fn literal(&mut self, word: &'static [u8]) -> Result<(), JsonError> {
        let end = self.pos + word.len();
        match self.bytes().get(self.pos..end) {
            Some(found) if found == word => {
                self.pos = end;
                Ok(())
            }
            _ => {
                let what = match word.first() {
                    Some(b't') => "'true'",
                    Some(b'f') => "'false'",
                    _ => "'null'",
                };
                let at_end = self.text.len() < end
                    && self
                        .bytes()
                        .get(self.pos..)
                        .is_some_and(|b| word.starts_with(b));
                Err(if at_end {
                    JsonError::new(self.text.len(), JsonErrorKind::UnexpectedEnd)
                } else {
                    self.error(JsonErrorKind::Expected(what))
                })
            }
        }
    }

    /// Walks the members of the object at the cursor, calling `member` with each decoded key
    /// and the span of its value, then checks the keys are unique. If the value at the cursor
    /// is valid JSON but not an object, returns `Ok(false)` without calling `member`.
    pub(crate) fn members<E: From<JsonError>>(
        &mut self,
        mut member: impl FnMut(&Cow<'a, str>, Range<usize>, bool) -> Result<(), E>,
    ) -> Result<bool, E> {
        self.skip_whitespace();
        if self.peek() != Some(b'{') {
            self.value()?;
            return Ok(false);
        }
        self.open(Container::Object)?;
        self.skip_whitespace();
        if self.peek() == Some(b'}') {
            self.pos += 1;
        } else {
            loop {
                let index = self.scratch.keys.len();
                self.key()?;
                let (span, spaced) = self.value()?;
                if let Some(key) = self.scratch.keys.get(index) {
                    member(&key_text(self.text, key), span, spaced)?;
                }
                self.skip_whitespace();
                match self.peek() {
                    Some(b',') => {
                        self.pos += 1;
                        self.skip_whitespace();
                    }
                    Some(b'}') => {
                        self.pos += 1;
                        break;
                    }
                    _ => return Err(self.end_or(JsonErrorKind::Expected("',' or '}'")).into()),
                }
            }
        }
        self.close_object()?;
        Ok(true)
    }

    /// Checks that only whitespace follows the cursor.
    pub(crate) fn finish(&mut self) -> Result<(), JsonError> {
        self.skip_whitespace();
        if self.pos == self.text.len() {
            Ok(())
        } else {
            Err(self.error(JsonErrorKind::TrailingData))
        }
    }
}

/// The offset of the first byte in `bytes` that ends a plain run inside a JSON string: a
/// quote, a backslash, or a control character a string may not hold raw.
///
/// Eight bytes at a time: in each little-endian word, `(x - 0x01..01) & !x & 0x80..80` marks
/// the zero bytes of `x` (and possibly bytes above one, through the borrow, never below), so
/// the lowest mark of the three tests is the first byte that matches one of them.
pub(crate) fn string_stop(bytes: &[u8]) -> Option<usize> {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    let zero_bytes = |x: u64| x.wrapping_sub(ONES) & !x & HIGH;
    let mut words = bytes.chunks_exact(8);
    let mut offset = 0;
    for word in &mut words {
        let mut eight = [0u8; 8];
        eight.copy_from_slice(word);
        let w = u64::from_le_bytes(eight);
        let marks = zero_bytes(w ^ (ONES * u64::from(b'"')))
            | zero_bytes(w ^ (ONES * u64::from(b'\\')))
            | (w.wrapping_sub(ONES * 0x20) & !w & HIGH);
        if marks != 0 {
            return Some(offset + (marks.trailing_zeros() / 8) as usize);
        }
        offset += 8;
    }
    words
        .remainder()
        .iter()
        .position(|&b| b == b'"' || b == b'\\' || b < 0x20)
        .map(|at| offset + at)
}

/// A key's text, decoded if it holds escapes.
fn key_text<'t>(text: &'t str, key: &Key) -> Cow<'t, str> {
    decode_string(text, key.start..key.end, key.escaped)
}

fn same_key(text: &str, a: &Key, b: &Key) -> bool {
    if a.escaped || b.escaped {
        key_text(text, a) == key_text(text, b)
    } else {
        let bytes = text.as_bytes();
        same_bytes(
            bytes.get(a.start..a.end).unwrap_or_default(),
            bytes.get(b.start..b.end).unwrap_or_default(),
        )
    }
}

/// Whether two short texts (keys, mostly) are equal. Most differ in length or in their first
/// bytes, which an inline loop finds sooner than a call to `memcmp`.
pub(crate) fn same_bytes(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x == y)
}

/// The text of a validated string's contents, with escapes decoded.
///
/// Inlined: nearly every key and string has no escape, and is then a borrow found in a
/// few instructions, where a call cost as much again.
#[inline]
pub(crate) fn decode_string(text: &str, inner: Range<usize>, escaped: bool) -> Cow<'_, str> {
    let raw = text.get(inner).unwrap_or_default();
    if escaped {
        Cow::Owned(decode_escapes(raw))
    } else {
        Cow::Borrowed(raw)
    }
}

/// `raw` with its escapes decoded.
fn decode_escapes(raw: &str) -> String {
    let mut out = String::with_capacity(raw.len());
    let mut chars = raw.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        let decoded = match chars.next() {
            Some('b') => '\u{8}',
            Some('f') => '\u{c}',
            Some('n') => '\n',
            Some('r') => '\r',
            Some('t') => '\t',
            Some('u') => {
                let high = hex_unit(&mut chars);
                if (0xD800..0xDC00).contains(&high) {
                    chars.next(); // the validated low half's backslash
                    chars.next(); // and its 'u'
                    let low = hex_unit(&mut chars);
                    let scalar = 0x10000 + ((high - 0xD800) << 10) + (low.wrapping_sub(0xDC00));
                    char::from_u32(scalar).unwrap_or(char::REPLACEMENT_CHARACTER)
                } else {
                    char::from_u32(high).unwrap_or(char::REPLACEMENT_CHARACTER)
                }
            }
            Some(other) => other, // '"', '\\' and '/' stand for themselves
            None => break,
        };
        out.push(decoded);
    }
    out
}

fn hex_unit(chars: &mut core::str::Chars<'_>) -> u32 {
    chars
        .take(4)
        .fold(0, |acc, c| acc << 4 | c.to_digit(16).unwrap_or(0))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(text: &str) -> Result<(), JsonError> {
        let mut scratch = Scratch::default();
        let mut scanner = Scanner::new(text.as_bytes(), 4, &mut scratch)?;
        scanner.value()?;
        scanner.finish()
    }

    fn kind(text: &str) -> JsonErrorKind {
        match check(text) {
            Err(e) => e.kind(),
            Ok(()) => JsonErrorKind::Expected("a refusal, got acceptance"),
        }
    }

    #[test]
    fn accepts_every_kind_of_value() {
        for text in [
            "0",
            "-0",
            "-12.5e+3",
            "1E-2",
            "true",
            "false",
            "null",
            r#""a\"\\\/\b\f\n\r\t\u00e9\ud83d\ude00""#,
            "[]",
            "{}",
            " [1, {\"a\" : [true]} ,\"x\"] ",
            "{\"a\":1,\"b\":{\"a\":2}}",
        ] {
            assert_eq!(check(text), Ok(()), "{text}");
        }
    }

    #[test]
    fn refuses_what_parsers_read_differently() {
        assert_eq!(kind(r#"{"a":1,"a":2}"#), JsonErrorKind::DuplicateKey);
        assert_eq!(kind(r#"{"a":1,"\u0061":2}"#), JsonErrorKind::DuplicateKey);
        let many: String = (0..20).map(|i| alloc::format!("\"k{i}\":0,")).collect();
        assert_eq!(
            kind(&alloc::format!("{{{many}\"k7\":1}}")),
            JsonErrorKind::DuplicateKey
        );
        // More than eight keys: sorted, and compared decoded when any is escaped.
        assert_eq!(
            kind(&alloc::format!("{{{many}\"k\\u0037\":1}}")),
            JsonErrorKind::DuplicateKey
        );
        assert_eq!(check(&alloc::format!("{{{many}\"k\\u0037x\":1}}")), Ok(()));
        assert_eq!(kind(r#""\ud800""#), JsonErrorKind::LoneSurrogate);
        assert_eq!(kind(r#""\udc00\ud800""#), JsonErrorKind::LoneSurrogate);
        assert_eq!(kind(r#""\ud800\u0041""#), JsonErrorKind::LoneSurrogate);
        assert_eq!(kind("1e400"), JsonErrorKind::NumberOutOfRange);
        assert_eq!(kind(&"9".repeat(400)), JsonErrorKind::NumberOutOfRange);
        assert_eq!(kind("{} {}"), JsonErrorKind::TrailingData);
        assert_eq!(kind("\u{feff}{}"), JsonErrorKind::Expected("a value"));
        assert_eq!(kind("NaN"), JsonErrorKind::Expected("a value"));
        assert_eq!(kind("[1,]"), JsonErrorKind::Expected("a value"));
        assert_eq!(kind("01"), JsonErrorKind::TrailingData);
        assert_eq!(kind("1."), JsonErrorKind::UnexpectedEnd);
        assert_eq!(kind("\"a\tb\""), JsonErrorKind::ControlCharacter);
        assert_eq!(kind(r#""\x""#), JsonErrorKind::InvalidEscape);
        assert_eq!(kind(r#""\u12g4""#), JsonErrorKind::InvalidEscape);
        assert_eq!(kind("[[[[[]]]]]"), JsonErrorKind::TooDeep { limit: 4 });
        assert_eq!(
            kind("[[[[]]]]"),
            JsonErrorKind::Expected("a refusal, got acceptance")
        );
        assert_eq!(kind("tru"), JsonErrorKind::UnexpectedEnd);
        assert_eq!(kind("trUe"), JsonErrorKind::Expected("'true'"));
        assert_eq!(kind("{\"a\" 1}"), JsonErrorKind::Expected("':'"));
    }

    #[test]
    fn the_word_at_a_time_search_finds_the_first_stop_byte() {
        let naive = |bytes: &[u8]| {
            bytes
                .iter()
                .position(|&b| b == b'"' || b == b'\\' || b < 0x20)
        };
        // Every byte value at every position of a 20-byte run, after each kind of byte
        // that could disturb the borrow arithmetic below it.
        let specials = [
            b'"', b'\\', 0x00, 0x1f, 0x20, 0x21, 0x5b, 0x5d, 0x7f, 0x80, 0xa0, 0xff,
        ];
        for &before in &specials {
            for stop in 0..=255u8 {
                for at in 0..20 {
                    let mut bytes = alloc::vec![b'a'; 20];
                    bytes[at] = stop;
                    if at > 0 {
                        bytes[at - 1] = before;
                    }
                    assert_eq!(
                        string_stop(&bytes),
                        naive(&bytes),
                        "{before:#x} then {stop:#x} at {at}"
                    );
                }
            }
        }
    }

    #[test]
    fn invalid_utf8_reports_where() {
        let mut scratch = Scratch::default();
        let err = Scanner::new(b"\"ab\xff\"", 4, &mut scratch).err();
        assert_eq!(err, Some(JsonError::new(3, JsonErrorKind::InvalidUtf8)));
    }

    #[test]
    fn decodes_escapes_and_surrogate_pairs() {
        let text = r#"a\n\u00e9\ud83d\ude00\/"#;
        assert_eq!(decode_string(text, 0..text.len(), true), "a\né😀/");
        assert!(matches!(
            decode_string("plain", 0..5, false),
            Cow::Borrowed("plain")
        ));
    }
}
