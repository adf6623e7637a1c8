//! Read access to validated, compact JSON text, without building a tree.
//!
//! The session reads results through these views. The text was validated when its frame was
//! parsed and compacted when it became a [`RawJson`], so walking it needs no checks: members
//! and elements are found lazily by skipping values (strings, then brackets), nothing is
//! allocated, and strings are borrowed unless they hold escapes.

use alloc::borrow::Cow;
use alloc::{string::String, vec::Vec};

use super::raw::{RawJson, RawObject};
use super::scan::{decode_string, same_bytes, string_stop};
use super::write::{into_text, write_string};

/// The index just past the string whose opening quote is at `at`, and whether the string
/// holds an escape.
fn skip_string(bytes: &[u8], at: usize) -> (usize, bool) {
    let mut pos = at + 1;
    let mut escaped = false;
    // Validated text holds no raw control characters, so the first stop is a quote or a
    // backslash.
    while let Some(offset) = bytes.get(pos..).and_then(string_stop) {
        pos += offset;
        match bytes.get(pos) {
            Some(b'\\') => {
                escaped = true;
                pos += 2;
            }
            _ => return (pos + 1, escaped),
        }
    }
    (bytes.len(), escaped)
}

/// The index just past the value that starts at `at`.
fn skip_value(bytes: &[u8], at: usize) -> usize {
    match bytes.get(at) {
        Some(b'"') => skip_string(bytes, at).0,
        Some(b'{' | b'[') => {
            let mut depth = 0usize;
            let mut pos = at;
            while let Some(&b) = bytes.get(pos) {
                match b {
                    b'"' => {
                        pos = skip_string(bytes, pos).0;
                        continue;
                    }
                    b'{' | b'[' => depth += 1,
                    b'}' | b']' => {
                        depth -= 1;
                        if depth == 0 {
                            return pos + 1;
                        }
                    }
                    _ => {}
                }
                pos += 1;
            }
            bytes.len()
        }
        _ => {
            let rest = bytes.get(at..).unwrap_or_default();
            at + rest
                .iter()
                .position(|b| matches!(b, b',' | b'}' | b']'))
                .unwrap_or(rest.len())
        }
    }
}

/// The text of exactly one JSON value that was validated and compacted before.
#[derive(Clone, Copy, Debug)]
pub(crate) struct JsonRef<'t>(&'t str);

impl<'t> JsonRef<'t> {
    /// A view of `text`, which must be one validated, compact JSON value (the text of a
    /// [`RawJson`] or of a value inside one).
    pub(crate) fn new(text: &'t str) -> Self {
        JsonRef(text)
    }

    pub(crate) fn as_str(self) -> Option<Cow<'t, str>> {
        if !self.0.starts_with('"') {
            return None;
        }
        let inner = 1..self.0.len().saturating_sub(1);
        Some(decode_string(self.0, inner, self.0.contains('\\')))
    }

    pub(crate) fn as_bool(self) -> Option<bool> {
        match self.0 {
            "true" => Some(true),
            "false" => Some(false),
            _ => None,
        }
    }

    pub(crate) fn is_null(self) -> bool {
        self.0 == "null"
    }

    /// The value as a number, if it is one (any JSON number; fractions included).
    pub(crate) fn as_f64(self) -> Option<f64> {
        if self
            .0
            .starts_with(['-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9'])
        {
            self.0.parse().ok()
        } else {
            None
        }
    }

    pub(crate) fn is_object(self) -> bool {
        self.0.starts_with('{')
    }

    /// The value as an object, or `None` if it is not one.
    pub(crate) fn as_object(self) -> Option<Object<'t>> {
        self.is_object().then_some(Object(self.0))
    }

    /// The elements of the array, or `None` if the value is not an array.
    pub(crate) fn as_array(self) -> Option<Elements<'t>> {
        self.0.starts_with('[').then_some(Elements {
            text: self.0,
            pos: 1,
        })
    }

    /// The value's compact JSON text.
    pub(crate) fn text(self) -> &'t str {
        self.0
    }

    /// The value as an owned [`RawJson`].
    pub(crate) fn to_raw(self) -> RawJson {
        RawJson::from_span(self.0, 0..self.0.len(), false)
    }
}

/// An object's text.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Object<'t>(&'t str);

impl<'t> Object<'t> {
    /// A view of a [`RawObject`], which is always a validated, compact object.
    pub(crate) fn of(object: &'t RawObject) -> Self {
        Object(object.as_str())
    }

    /// A view of `text`, which must be a validated, compact JSON object (the parser's word
    /// for a result it read).
    pub(crate) fn of_validated(text: &'t str) -> Self {
        Object(text)
    }

    /// The object as an owned [`RawObject`].
    pub(crate) fn to_raw(self) -> RawObject {
        RawObject::from_trusted(JsonRef(self.0).to_raw())
    }

    /// A walk over the members in which arrays may be read in place.
    pub(crate) fn cursor(&self) -> Cursor<'t> {
        Cursor {
            text: self.0,
            pos: 1,
            member: (1, false),
        }
    }

    /// The members, in the order written.
    pub(crate) fn members(&self) -> Members<'t> {
        Members {
            text: self.0,
            pos: 1,
        }
    }

    /// The value of member `key`, if present.
    pub(crate) fn get(&self, key: &str) -> Option<JsonRef<'t>> {
        let [value] = self.fields([key]);
        value
    }

    /// The values of the members named `keys`, found in one walk over the object that stops
    /// once each is found: validated text holds each key once.
    pub(crate) fn fields<const N: usize>(&self, keys: [&str; N]) -> [Option<JsonRef<'t>>; N] {
        let mut found = [None; N];
        let mut missing = N;
        let mut members = self.members();
        while missing > 0 {
            let Some((key, value)) = members.next() else {
                break;
            };
            let slot = keys
                .iter()
                .position(|k| same_bytes(k.as_bytes(), key.as_bytes()))
                .and_then(|slot| found.get_mut(slot));
            if let Some(entry @ None) = slot {
                *entry = Some(value);
                missing -= 1;
            }
        }
        found
    }

    /// The values of the members named `keys`, and every other member kept whole as a
    /// compact object (the empty object, which costs nothing, when there are none): what a
    /// reader models, and what it must keep so that nothing the peer sent is lost on the way
    /// back out.
    pub(crate) fn split<const N: usize>(
        &self,
        keys: [&str; N],
    ) -> ([Option<JsonRef<'t>>; N], RawObject) {
        let (found, rest) = self.split_lazily(keys);
        (found, rest.into_raw())
    }

    /// As [`split`](Self::split), in one walk that copies nothing: the other members are
    /// copied only if [`Rest::into_raw`] is asked for them, and only when there are some.
    pub(crate) fn split_lazily<'k, const N: usize>(
        &self,
        keys: [&'k str; N],
    ) -> ([Option<JsonRef<'t>>; N], Rest<'t, 'k, N>) {
        let (found, rest, _) = split_object(self.0, keys);
        (found, rest)
    }

    /// The string value of member `key`: `Ok(None)` when absent, `Err(())` when present
    /// but not a string.
    pub(crate) fn opt_str(&self, key: &str) -> Result<Option<Cow<'t, str>>, ()> {
        match self.get(key) {
            None => Ok(None),
            Some(v) => v.as_str().map(Some).ok_or(()),
        }
    }
}

/// Splits the object that starts at the beginning of `text` as [`Object::split_lazily`]
/// does, and says where it ends: `text` may run on past the object (the rest of an array
/// that holds it), so that one walk both reads an element and finds the next.
fn split_object<'t, 'k, const N: usize>(
    text: &'t str,
    keys: [&'k str; N],
) -> ([Option<JsonRef<'t>>; N], Rest<'t, 'k, N>, usize) {
    let mut found = [None; N];
    let mut kept = Kept::new();
    let mut members = Members { text, pos: 1 };
    while let Some(member) = members.next_member() {
        match keys
            .iter()
            .position(|k| same_bytes(k.as_bytes(), member.key.as_bytes()))
        {
            Some(slot) => {
                if let Some(entry) = found.get_mut(slot) {
                    *entry = Some(member.value);
                }
            }
            None => kept.add(member.span, member.escaped),
        }
    }
    // Past the last member's ',' or '}' is the object's end; `{}` has no member.
    let end = if members.pos == 1 { 2 } else { members.pos };
    let rest = Rest {
        object: Object(text.get(..end).unwrap_or(text)),
        keys,
        kept,
    };
    (found, rest, end)
}

/// How many members a walk notes the place of, so that [`Rest::into_raw`] copies them
/// without walking the object again: enough for the usual leftovers (`_meta`,
/// `annotations`, ...).
const KEPT: usize = 4;

/// Where the members a walk did not name lie in the object's text, each `"key":value` whole.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Kept {
    spans: [(usize, usize); KEPT],
    len: usize,
    /// Whether `spans` holds every member the walk did not name; not when there were more
    /// than [`KEPT`], or one's key holds an escape (it is written back decoded).
    whole: bool,
}

impl Kept {
    /// None yet.
    pub(crate) const fn new() -> Self {
        Kept {
            spans: [(0, 0); KEPT],
            len: 0,
            whole: true,
        }
    }

    /// One more member, at `span` of the object's text.
    fn add(&mut self, span: (usize, usize), escaped: bool) {
        match self.spans.get_mut(self.len) {
            Some(slot) if !escaped => {
                *slot = span;
                self.len += 1;
            }
            _ => self.whole = false,
        }
    }

    /// Whether the walk met any member it did not name.
    fn any(&self) -> bool {
        self.len > 0 || !self.whole
    }
}

/// The members of an object that a [`split`](Object::split_lazily) did not name.
pub(crate) struct Rest<'t, 'k, const N: usize> {
    object: Object<'t>,
    keys: [&'k str; N],
    kept: Kept,
}

impl<'t, 'k, const N: usize> Rest<'t, 'k, N> {
    /// The members of `object` not named by `keys`, as a walk of the reader's own `kept`
    /// them.
    pub(crate) fn new(object: Object<'t>, keys: [&'k str; N], kept: Kept) -> Self {
        Rest { object, keys, kept }
    }

    /// The whole object the members were split from.
    pub(crate) fn object(&self) -> Object<'t> {
        self.object
    }

    /// The members, copied into a compact object; the empty object, which costs nothing,
    /// when there are none.
    pub(crate) fn into_raw(self) -> RawObject {
        if !self.kept.any() {
            return RawObject::empty();
        }
        let text = self.object.0;
        let kept = self.kept.spans.get(..self.kept.len).unwrap_or_default();
        if self.kept.whole {
            // Each member copied as written: its key has no escape, so writing it back
            // would give the same bytes.
            let length: usize = kept
                .iter()
                .map(|(start, end)| end.saturating_sub(*start) + 1)
                .sum();
            let mut rest = String::with_capacity(length + 1);
            for &(start, end) in kept {
                rest.push(if rest.is_empty() { '{' } else { ',' });
                rest.push_str(text.get(start..end).unwrap_or_default());
            }
            rest.push('}');
            return RawObject::from_trusted_text(rest);
        }
        // The rest is never longer than the object (a key written back may only lose
        // escapes): one allocation, not one per doubling.
        let mut rest = Vec::with_capacity(self.object.0.len());
        for (key, value) in self.object.members() {
            if !self.keys.iter().any(|k| *k == key) {
                rest.push(if rest.is_empty() { b'{' } else { b',' });
                write_string(&mut rest, &key);
                rest.push(b':');
                rest.extend_from_slice(value.text().as_bytes());
            }
        }
        rest.push(b'}');
        RawObject::from_trusted_text(into_text(rest))
    }
}

/// The members of an object, found one at a time.
pub(crate) struct Members<'t> {
    text: &'t str,
    pos: usize,
}

/// One member of an object, and where it lies in the object's text.
struct Member<'t> {
    key: Cow<'t, str>,
    value: JsonRef<'t>,
    /// From the key's opening quote to just past the value.
    span: (usize, usize),
    /// Whether the key holds an escape.
    escaped: bool,
}

impl<'t> Members<'t> {
    /// The next member and where it lies; `None` after the last.
    fn next_member(&mut self) -> Option<Member<'t>> {
        let bytes = self.text.as_bytes();
        if bytes.get(self.pos) != Some(&b'"') {
            return None; // '}' or the end: no more members
        }
        let (key_end, escaped) = skip_string(bytes, self.pos);
        let inner = self.pos + 1..key_end.saturating_sub(1);
        let key = decode_string(self.text, inner, escaped);
        let start = key_end + 1; // past ':'
        let end = skip_value(bytes, start);
        let value = JsonRef(self.text.get(start..end)?);
        let span = (self.pos, end);
        self.pos = end + 1; // past ',' (or '}', which then ends the walk)
        Some(Member {
            key,
            value,
            span,
            escaped,
        })
    }
}

impl<'t> Iterator for Members<'t> {
    type Item = (Cow<'t, str>, JsonRef<'t>);

    fn next(&mut self) -> Option<Self::Item> {
        self.next_member().map(|m| (m.key, m.value))
    }
}

/// The elements of an array, found one at a time.
///
/// `pos` is the index of the next element's first byte, or of the closing `]` once the last
/// element was read, so a walk over an array inside longer text (a [`Cursor`]'s) knows where
/// the array ends.
pub(crate) struct Elements<'t> {
    text: &'t str,
    pos: usize,
}

impl<'t> Elements<'t> {
    /// Moves past the element that ends at `end`: to the next one after a `,`, or onto the
    /// closing `]`.
    fn step_past(&mut self, end: usize) {
        self.pos = match self.text.as_bytes().get(end) {
            Some(b',') => end + 1,
            _ => end,
        };
    }

    fn at_end(&self) -> bool {
        matches!(self.text.as_bytes().get(self.pos), None | Some(b']'))
    }

    /// The next element's one string value when the element is exactly `before`, a string,
    /// then `after`, as compact JSON writes it; the walk moved past the element. `None`,
    /// the walk where it was, for any other element.
    ///
    /// For the usual shapes of a common element, read with no split: a text block and
    /// nothing else is `{"type":"text","text":"…"}` from most servers and
    /// `{"text":"…","type":"text"}` from some.
    #[inline]
    pub(crate) fn next_exact_string(&mut self, before: &str, after: &str) -> Option<JsonRef<'t>> {
        let bytes = self.text.as_bytes();
        let start = self.pos.checked_add(before.len())?;
        if bytes.get(self.pos..start)? != before.as_bytes() || bytes.get(start) != Some(&b'"') {
            return None;
        }
        let (end, _) = skip_string(bytes, start);
        let past = end.checked_add(after.len())?;
        if bytes.get(end..past)? != after.as_bytes() {
            return None;
        }
        let value = JsonRef(self.text.get(start..end)?);
        self.step_past(past);
        Some(value)
    }

    /// The next element split as [`Object::split_lazily`] splits an object, in the one walk
    /// that also finds where the element ends; `Err` with the element when it is not an
    /// object.
    pub(crate) fn next_split<'k, const N: usize>(
        &mut self,
        keys: [&'k str; N],
    ) -> Option<Result<Split<'t, 'k, N>, JsonRef<'t>>> {
        if self.at_end() {
            return None;
        }
        let rest = self.text.get(self.pos..)?;
        if !rest.starts_with('{') {
            return self.next().map(Err);
        }
        let (found, rest, end) = split_object(rest, keys);
        self.step_past(self.pos + end);
        Some(Ok((found, rest)))
    }
}

impl<'t> Iterator for Elements<'t> {
    type Item = JsonRef<'t>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.at_end() {
            return None;
        }
        let end = skip_value(self.text.as_bytes(), self.pos);
        let value = JsonRef(self.text.get(self.pos..end)?);
        self.step_past(end);
        Some(value)
    }
}

/// An object's members walked one at a time, where a reader may read an array value in the
/// same walk that finds its end ([`array`](Self::array)) instead of having it skipped first.
/// After each [`key`](Self::key), take its value with [`value`](Self::value) or
/// [`array`](Self::array).
pub(crate) struct Cursor<'t> {
    text: &'t str,
    pos: usize,
    /// Where the current member's key starts, and whether it holds an escape.
    member: (usize, bool),
}

impl<'t> Cursor<'t> {
    /// The next member's key, or `None` after the last.
    pub(crate) fn key(&mut self) -> Option<Cow<'t, str>> {
        let bytes = self.text.as_bytes();
        if bytes.get(self.pos) != Some(&b'"') {
            return None;
        }
        let (key_end, escaped) = skip_string(bytes, self.pos);
        let key = decode_string(self.text, self.pos + 1..key_end.saturating_sub(1), escaped);
        self.member = (self.pos, escaped);
        self.pos = key_end + 1; // past ':'
        Some(key)
    }

    /// The current member skipped whole, its place noted in `kept`: a member the reader
    /// does not model.
    pub(crate) fn keep(&mut self, kept: &mut Kept) {
        let (start, escaped) = self.member;
        self.value();
        // `value` left the walk just past the value's end and the `,` or `}` after it.
        kept.add((start, self.pos - 1), escaped);
    }

    /// The current member's value, skipped whole.
    pub(crate) fn value(&mut self) -> JsonRef<'t> {
        let end = skip_value(self.text.as_bytes(), self.pos);
        let value = JsonRef(self.text.get(self.pos..end).unwrap_or_default());
        self.pos = end + 1; // past ',' (or '}', which then ends the walk)
        value
    }

    /// Walks on to the member `key` and stops at its value, to be taken next; `None`, the
    /// walk over, when the object has no such member.
    pub(crate) fn seek(mut self, key: &str) -> Option<Self> {
        while let Some(found) = self.key() {
            if found == key {
                return Some(self);
            }
            self.value();
        }
        None
    }

    /// The current member's value as a walk of its own, when it is an object: entered where
    /// it lies, nothing skipped. The outer walk ends here.
    pub(crate) fn enter(self) -> Option<Cursor<'t>> {
        let rest = self.text.get(self.pos..)?;
        rest.starts_with('{').then_some(Cursor {
            text: rest,
            pos: 1,
            member: (1, false),
        })
    }

    /// The current member's value read by `read` as an array's elements, in the walk that
    /// finds where the array ends; `None`, the value skipped, when it is not an array.
    pub(crate) fn array<R>(&mut self, read: impl FnOnce(&mut Elements<'t>) -> R) -> Option<R> {
        if self.text.as_bytes().get(self.pos) != Some(&b'[') {
            self.value();
            return None;
        }
        let mut elements = Elements {
            text: self.text,
            pos: self.pos + 1,
        };
        let read = read(&mut elements);
        // A reader that stopped early (on an error) leaves the rest to walk past.
        elements.by_ref().for_each(drop);
        self.pos = elements.pos + 2; // past ']', then past ',' (or '}')
        Some(read)
    }
}

/// An object's named members and the [`Rest`] of them.
pub(crate) type Split<'t, 'k, const N: usize> = ([Option<JsonRef<'t>>; N], Rest<'t, 'k, N>);

/// What a reader found wrong, in a few words.
pub(crate) type Problem = &'static str;

/// A member's value that must be a string.
pub(crate) fn string(value: Option<JsonRef<'_>>, problem: Problem) -> Result<String, Problem> {
    value
        .and_then(JsonRef::as_str)
        .map(String::from)
        .ok_or(problem)
}

/// A member's value that may be absent but, when present, must be a string.
pub(crate) fn opt_string(
    value: Option<JsonRef<'_>>,
    problem: Problem,
) -> Result<Option<String>, Problem> {
    value
        .map(|v| v.as_str().map(String::from).ok_or(problem))
        .transpose()
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::borrow::ToOwned;
    use alloc::vec::Vec;

    #[test]
    fn a_cursor_reads_arrays_in_place_and_stays_in_step() {
        let text =
            r#"{"n":1,"a":[{"k":"]"},2,[3,{}]],"e":[],"s":"[","o":{"a":[1]},"z":[{"x":[]}]}"#;
        let object = JsonRef::new(text).as_object().unwrap();
        let mut cursor = object.cursor();
        let mut seen = Vec::new();
        while let Some(key) = cursor.key() {
            match key.as_ref() {
                // Reads only the first element, split: the rest is walked past.
                "a" => {
                    let first = cursor.array(|elements| {
                        let ([k], _) = elements.next_split(["k"]).unwrap().unwrap();
                        k.unwrap().text()
                    });
                    seen.push(("a", first.unwrap().to_owned()));
                }
                "e" | "z" => {
                    let all =
                        cursor.array(|elements| elements.map(|e| e.text()).collect::<Vec<_>>());
                    seen.push((if key == "e" { "e" } else { "z" }, all.unwrap().join("|")));
                }
                // Not an array: skipped, and the walk goes on.
                "s" => assert!(cursor.array(|_| ()).is_none()),
                _ => seen.push(("other", cursor.value().text().to_owned())),
            }
        }
        let expected = [
            ("other", "1"),
            ("a", r#""]""#),
            ("e", ""),
            ("other", r#"{"a":[1]}"#),
            ("z", r#"{"x":[]}"#),
        ];
        let expected: Vec<(&str, String)> =
            expected.iter().map(|(k, v)| (*k, (*v).into())).collect();
        assert_eq!(seen, expected);
    }

    #[test]
    fn walks_compact_json_lazily() {
        let text = r#"{"a":[1,{"b":"x]}\"y"},[]],"k\u0031":true,"c":"s","d":-1.5e3,"e":{}}"#;
        let object = JsonRef::new(text).as_object().unwrap();
        let keys: Vec<_> = object.members().map(|(k, _)| k).collect();
        assert_eq!(keys, ["a", "k1", "c", "d", "e"]);
        let a: Vec<&str> = object
            .get("a")
            .unwrap()
            .as_array()
            .unwrap()
            .map(|v| v.0)
            .collect();
        assert_eq!(a, ["1", r#"{"b":"x]}\"y"}"#, "[]"]);
        assert_eq!(object.get("k1").and_then(JsonRef::as_bool), Some(true));
        assert_eq!(
            object.get("c").and_then(JsonRef::as_str).as_deref(),
            Some("s")
        );
        assert_eq!(object.get("d").and_then(JsonRef::as_f64), Some(-1500.0));
        assert_eq!(
            object
                .get("e")
                .and_then(JsonRef::as_object)
                .map(|o| o.members().count()),
            Some(0)
        );
        assert_eq!(object.opt_str("d"), Err(()));
        assert_eq!(object.opt_str("zz"), Ok(None));
        assert_eq!(JsonRef::new("[]").as_array().map(Iterator::count), Some(0));
    }

    /// What `into_raw` must give: every member not named, its key written back decoded.
    fn rest_by_walking(object: Object<'_>, keys: &[&str]) -> String {
        let mut out = Vec::new();
        for (key, value) in object.members() {
            if !keys.contains(&key.as_ref()) {
                out.push(if out.is_empty() { b'{' } else { b',' });
                write_string(&mut out, &key);
                out.push(b':');
                out.extend_from_slice(value.text().as_bytes());
            }
        }
        if out.is_empty() {
            return "{}".to_owned();
        }
        out.push(b'}');
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn the_rest_is_copied_from_where_the_walk_found_it() {
        let cases = [
            (r#"{"a":1,"b":[{"c":"}"}],"d":"x"}"#, r#"{"b":[{"c":"}"}]}"#),
            (r#"{"a":1,"d":2}"#, "{}"),
            (r#"{}"#, "{}"),
            // More than the walk notes: walked again.
            (
                r#"{"p":1,"q":2,"a":0,"r":3,"s":4,"t":5}"#,
                r#"{"p":1,"q":2,"r":3,"s":4,"t":5}"#,
            ),
            // A key with an escape is written back decoded.
            (
                r#"{"\u0071":{"x":[]},"a":true,"é":null}"#,
                r#"{"q":{"x":[]},"é":null}"#,
            ),
        ];
        for (text, rest) in cases {
            let object = JsonRef::new(text).as_object().unwrap();
            let (_, split) = object.split(["a", "d"]);
            assert_eq!(split.as_str(), rest, "{text}");
            assert_eq!(rest_by_walking(object, &["a", "d"]), rest, "{text}");
            // The cursor's own walk keeps the same.
            let mut kept = Kept::new();
            let mut cursor = object.cursor();
            while let Some(key) = cursor.key() {
                if key == "a" || key == "d" {
                    cursor.value();
                } else {
                    cursor.keep(&mut kept);
                }
            }
            let raw = Rest::new(object, ["a", "d"], kept).into_raw();
            assert_eq!(raw.as_str(), rest, "{text}");
        }
    }

    proptest::proptest! {
        #[test]
        fn the_rest_is_what_a_second_walk_would_give(
            members in proptest::collection::vec(
                (0_usize..8, proptest::sample::select(alloc::vec!["1", r#""s""#, "[]", r#"{"k":["]"]}"#, "null"])),
                0..10,
            ),
            named in proptest::collection::vec(0_usize..8, 0..3),
        ) {
            // Keys k0..k7, the odd ones written with an escape; each once.
            let mut seen = Vec::new();
            let mut text = String::from("{");
            for (key, value) in members {
                if seen.contains(&key) {
                    continue;
                }
                seen.push(key);
                if text.len() > 1 {
                    text.push(',');
                }
                let written = if key % 2 == 1 { alloc::format!("\\u006b{key}") } else { alloc::format!("k{key}") };
                text.push_str(&alloc::format!(r#""{written}":{value}"#));
            }
            text.push('}');
            let names: Vec<String> = named.iter().map(|k| alloc::format!("k{k}")).collect();
            let keys = [
                names.first().map_or("none", String::as_str),
                names.get(1).map_or("none", String::as_str),
                names.get(2).map_or("none", String::as_str),
            ];
            let object = JsonRef::new(&text).as_object().unwrap();
            let (_, rest) = object.split(keys);
            proptest::prop_assert_eq!(rest.as_str(), rest_by_walking(object, &keys));
        }
    }

    #[test]
    fn a_cursor_seeks_a_member_and_enters_an_object_in_place() {
        let text = r#"{"id":1,"params":{"x":[{"name":"no"}],"name":"yes","z":{}},"n":"outer"}"#;
        let object = JsonRef::new(text).as_object().unwrap();
        let mut params = object.cursor().seek("params").unwrap().enter().unwrap();
        assert_eq!(params.key().as_deref(), Some("x"));
        params.value();
        let mut name = params.seek("name").unwrap();
        assert_eq!(name.value().as_str().as_deref(), Some("yes"));
        // The entered walk ends with its object, not with the text.
        assert!(object
            .cursor()
            .seek("params")
            .unwrap()
            .enter()
            .unwrap()
            .seek("n")
            .is_none());
        assert!(object.cursor().seek("absent").is_none());
        assert!(object.cursor().seek("id").unwrap().enter().is_none());
    }

    #[test]
    fn fields_are_found_in_any_order_and_absent_ones_stay_none() {
        let text = r#"{"a":[1,{"b":"}"}],"k\u0031":true,"c":"s","d":{}}"#;
        let object = JsonRef::new(text).as_object().unwrap();
        fn text_of(v: Option<JsonRef<'_>>) -> Option<&str> {
            v.map(|v| v.0)
        }
        let [d, k1, a, zz] = object.fields(["d", "k1", "a", "zz"]);
        assert_eq!(
            [text_of(d), text_of(k1), text_of(a), text_of(zz)],
            [Some("{}"), Some("true"), Some(r#"[1,{"b":"}"}]"#), None]
        );
        // Found early, and the same when the walk stops before the end.
        let [a, k1] = object.fields(["a", "k1"]);
        assert_eq!(
            [text_of(a), text_of(k1)],
            [Some(r#"[1,{"b":"}"}]"#), Some("true")]
        );
        assert_eq!(text_of(object.get("c")), Some(r#""s""#));
        assert_eq!(text_of(object.get("b")), None);
    }
}
