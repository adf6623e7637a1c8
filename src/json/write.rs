//! Compact JSON writers: strings, integers, objects member by member, arrays.
//!
//! Everything this crate sends is written by these, straight into the frame's buffer.

use alloc::{string::String, vec::Vec};

use super::raw::RawObject;
use super::scan::string_stop;

/// Appends `n` in decimal.
pub(crate) fn write_integer(out: &mut Vec<u8>, n: i64) {
    let mut digits = [0u8; 20];
    let mut at = digits.len();
    let mut rest = n.unsigned_abs();
    loop {
        at -= 1;
        if let Some(slot) = digits.get_mut(at) {
            // rest % 10 < 10, so the cast cannot truncate.
            *slot = b'0' + (rest % 10) as u8;
        }
        rest /= 10;
        if rest == 0 {
            break;
        }
    }
    if n < 0 {
        out.push(b'-');
    }
    out.extend_from_slice(digits.get(at..).unwrap_or_default());
}

/// Appends `s` to `out` as a JSON string literal, quotes included.
pub(crate) fn write_string(out: &mut Vec<u8>, s: &str) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    out.push(b'"');
    let mut rest = s.as_bytes();
    while let Some(at) = string_stop(rest) {
        let (plain, tail) = rest.split_at(at);
        out.extend_from_slice(plain);
        let Some((&b, tail)) = tail.split_first() else {
            break;
        };
        match b {
            b'"' => out.extend_from_slice(b"\\\""),
            b'\\' => out.extend_from_slice(b"\\\\"),
            b'\n' => out.extend_from_slice(b"\\n"),
            b'\r' => out.extend_from_slice(b"\\r"),
            b'\t' => out.extend_from_slice(b"\\t"),
            b'\x08' => out.extend_from_slice(b"\\b"),
            b'\x0c' => out.extend_from_slice(b"\\f"),
            _ => {
                let hi = HEX.get(usize::from(b >> 4)).copied().unwrap_or(b'0');
                let lo = HEX.get(usize::from(b & 0xf)).copied().unwrap_or(b'0');
                out.extend_from_slice(&[b'\\', b'u', b'0', b'0', hi, lo]);
            }
        }
        rest = tail;
    }
    out.extend_from_slice(rest);
    out.push(b'"');
}

/// Writes a JSON object member by member into a buffer.
pub(crate) struct ObjectWriter<'b> {
    out: &'b mut Vec<u8>,
    empty: bool,
}

impl<'b> ObjectWriter<'b> {
    pub(crate) fn open(out: &'b mut Vec<u8>) -> Self {
        out.push(b'{');
        ObjectWriter { out, empty: true }
    }

    pub(crate) fn key(&mut self, key: &str) {
        if !self.empty {
            self.out.push(b',');
        }
        self.empty = false;
        write_string(self.out, key);
        self.out.push(b':');
    }

    pub(crate) fn string(&mut self, key: &str, value: &str) {
        self.key(key);
        write_string(self.out, value);
    }

    pub(crate) fn integer(&mut self, key: &str, value: i64) {
        self.key(key);
        write_integer(self.out, value);
    }

    /// The buffer, to write the value of the member just [keyed](Self::key).
    pub(crate) fn out(&mut self) -> &mut Vec<u8> {
        self.out
    }

    pub(crate) fn boolean(&mut self, key: &str, value: bool) {
        self.raw(key, if value { "true" } else { "false" });
    }

    pub(crate) fn opt_string(&mut self, key: &str, value: Option<&str>) {
        if let Some(value) = value {
            self.string(key, value);
        }
    }

    /// Writes every member of `object`, a compact JSON object, as members of this one.
    pub(crate) fn members_of(&mut self, object: &RawObject) {
        self.members_of_text(object.as_str());
    }

    /// Writes every member of `text`, compact, validated object text, as members of this one.
    pub(crate) fn members_of_text(&mut self, text: &str) {
        let inner = text
            .get(1..text.len().saturating_sub(1))
            .unwrap_or_default();
        if inner.is_empty() {
            return;
        }
        if !self.empty {
            self.out.push(b',');
        }
        self.empty = false;
        self.out.extend_from_slice(inner.as_bytes());
    }

    /// `value` must be compact, validated JSON.
    pub(crate) fn raw(&mut self, key: &str, value: &str) {
        self.key(key);
        self.out.extend_from_slice(value.as_bytes());
    }

    pub(crate) fn close(self) {
        self.out.push(b'}');
    }
}

/// Writes a JSON array of `items`, each written by `write`.
pub(crate) fn write_array<T>(out: &mut Vec<u8>, items: &[T], write: impl Fn(&T, &mut Vec<u8>)) {
    out.push(b'[');
    for (i, item) in items.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        write(item, out);
    }
    out.push(b']');
}

/// The compact JSON text `write` writes.
pub(crate) fn text_of(write: impl FnOnce(&mut Vec<u8>)) -> String {
    let mut out = Vec::new();
    write(&mut out);
    into_text(out)
}

/// The compact JSON text of the object whose members `members` writes.
pub(crate) fn object_text(members: impl FnOnce(&mut ObjectWriter<'_>)) -> String {
    text_of(|out| {
        let mut object = ObjectWriter::open(out);
        members(&mut object);
        object.close();
    })
}

/// The text written into `out` by the JSON writers above, which only ever write UTF-8.
pub(crate) fn into_text(out: Vec<u8>) -> String {
    String::from_utf8(out).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::format;

    #[test]
    fn integers_write_as_json() {
        for n in [0, 7, -7, 1234567890, i64::MIN, i64::MAX] {
            let mut out = Vec::new();
            write_integer(&mut out, n);
            assert_eq!(out, format!("{n}").as_bytes());
        }
    }

    #[test]
    fn string_writer_escapes_what_json_requires() {
        let mut out = Vec::new();
        write_string(&mut out, "q\"b\\n\n\u{1}é");
        assert_eq!(out, r#""q\"b\\n\n\u0001é""#.as_bytes());
    }
}
