//! serde at the edges (feature `serde`): every public value serializes in its wire shape
//! through any serde serializer, raw JSON included, without building a tree; raw JSON, tools
//! and catalogs deserialize, validated as if a server had sent them; and raw JSON reads into
//! the application's own types.

use alloc::{string::String, vec::Vec};
use core::fmt;

use serde::de::{DeserializeOwned, DeserializeSeed, Error as _, MapAccess, SeqAccess, Visitor};
use serde::ser::{SerializeMap, SerializeSeq};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::view::JsonRef;
use super::write::{write_integer, write_string};
use super::{RawJson, RawObject};
use crate::error::JsonErrorKind;
use crate::Limits;

/// Validated, compact JSON text written value by value into any serializer. Nesting is
/// bounded by the [`Limits::nesting_depth`] the text was validated under.
struct Walk<'t>(JsonRef<'t>);

impl Serialize for Walk<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let value = self.0;
        if let Some(object) = value.as_object() {
            let mut map = serializer.serialize_map(None)?;
            for (key, member) in object.members() {
                map.serialize_entry(&*key, &Walk(member))?;
            }
            return map.end();
        }
        if let Some(items) = value.as_array() {
            let mut seq = serializer.serialize_seq(None)?;
            for item in items {
                seq.serialize_element(&Walk(item))?;
            }
            return seq.end();
        }
        if let Some(text) = value.as_str() {
            return serializer.serialize_str(&text);
        }
        if let Some(flag) = value.as_bool() {
            return serializer.serialize_bool(flag);
        }
        if value.is_null() {
            return serializer.serialize_unit();
        }
        let number = value.text();
        let integral = !number.contains(['.', 'e', 'E']) && number != "-0";
        if integral {
            if let Ok(n) = number.parse::<i64>() {
                return serializer.serialize_i64(n);
            }
            if let Ok(n) = number.parse::<u64>() {
                return serializer.serialize_u64(n);
            }
        }
        // Validated JSON numbers always parse as f64 (out-of-range ones were refused).
        serializer.serialize_f64(number.parse().unwrap_or(0.0))
    }
}

/// Serializes compact JSON text this crate wrote (a value's wire shape).
pub(crate) fn serialize_text<S: Serializer>(text: &str, serializer: S) -> Result<S::Ok, S::Error> {
    Walk(JsonRef::new(text)).serialize(serializer)
}

impl Serialize for RawJson {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serialize_text(self.as_str(), serializer)
    }
}

impl Serialize for RawObject {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serialize_text(self.as_str(), serializer)
    }
}

impl<'de> Deserialize<'de> for RawJson {
    /// Reads any JSON value, members in the order they come, then validates it as this crate
    /// validates what a peer sends, under [`Limits::default`]: a key repeated in one object
    /// is refused, not resolved, and what was written reads back as it was (a number with a
    /// fraction or an exponent as `serde_json` writes it: `1e300` as `1e+300`).
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let mut text = Vec::new();
        Transcribe {
            out: &mut text,
            depth: 0,
        }
        .deserialize(deserializer)?;
        let text = String::from_utf8(text).map_err(D::Error::custom)?;
        RawJson::parse(&text, &Limits::default()).map_err(D::Error::custom)
    }
}

/// Writes a value of any self-describing serde input as compact JSON text, as it comes:
/// members in their order, a repeated key twice (for the validation after to refuse), and
/// nesting no deeper than [`Limits::default`] allows, so a deep input cannot exhaust the
/// stack.
struct Transcribe<'a> {
    out: &'a mut Vec<u8>,
    depth: usize,
}

impl Transcribe<'_> {
    /// The transcriber for a value one level further in, or the refusal of that level.
    fn inner<E: serde::de::Error>(&mut self) -> Result<Transcribe<'_>, E> {
        let limit = Limits::default().nesting_depth;
        if self.depth >= limit {
            return Err(E::custom(JsonErrorKind::TooDeep { limit }));
        }
        Ok(Transcribe {
            out: &mut *self.out,
            depth: self.depth + 1,
        })
    }
}

impl<'de> DeserializeSeed<'de> for Transcribe<'_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Transcribe<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_bool<E: serde::de::Error>(self, v: bool) -> Result<(), E> {
        self.out
            .extend_from_slice(if v { b"true".as_slice() } else { b"false" });
        Ok(())
    }

    fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<(), E> {
        write_integer(self.out, v);
        Ok(())
    }

    fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<(), E> {
        self.out.extend_from_slice(alloc::format!("{v}").as_bytes());
        Ok(())
    }

    fn visit_f64<E: serde::de::Error>(self, v: f64) -> Result<(), E> {
        if !v.is_finite() {
            return Err(E::custom("a number JSON cannot hold"));
        }
        // Written as serde_json writes it (the shortest form that reads back the same).
        let number = serde_json::to_string(&v).map_err(E::custom)?;
        self.out.extend_from_slice(number.as_bytes());
        Ok(())
    }

    fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<(), E> {
        write_string(self.out, v);
        Ok(())
    }

    fn visit_unit<E: serde::de::Error>(self) -> Result<(), E> {
        self.out.extend_from_slice(b"null");
        Ok(())
    }

    fn visit_none<E: serde::de::Error>(self) -> Result<(), E> {
        self.visit_unit()
    }

    fn visit_some<D: Deserializer<'de>>(mut self, deserializer: D) -> Result<(), D::Error> {
        // A level too: a format that nests options without end is bounded as arrays are.
        deserializer.deserialize_any(self.inner()?)
    }

    fn visit_seq<A: SeqAccess<'de>>(mut self, mut seq: A) -> Result<(), A::Error> {
        self.out.push(b'[');
        let mut first = true;
        loop {
            let before = self.out.len();
            if !first {
                self.out.push(b',');
            }
            if seq.next_element_seed(self.inner()?)?.is_none() {
                // No element after all: its comma goes too.
                self.out.truncate(before);
                break;
            }
            first = false;
        }
        self.out.push(b']');
        Ok(())
    }

    fn visit_map<A: MapAccess<'de>>(mut self, mut map: A) -> Result<(), A::Error> {
        self.out.push(b'{');
        let mut first = true;
        loop {
            let before = self.out.len();
            if !first {
                self.out.push(b',');
            }
            if map.next_key_seed(Key(&mut *self.out))?.is_none() {
                self.out.truncate(before);
                break;
            }
            self.out.push(b':');
            map.next_value_seed(self.inner()?)?;
            first = false;
        }
        self.out.push(b'}');
        Ok(())
    }
}

/// Writes an object's key, which JSON has only as a string.
struct Key<'a>(&'a mut Vec<u8>);

impl<'de> DeserializeSeed<'de> for Key<'_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_str(self)
    }
}

impl<'de> Visitor<'de> for Key<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a string key")
    }

    fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<(), E> {
        write_string(self.0, v);
        Ok(())
    }
}

impl<'de> Deserialize<'de> for RawObject {
    /// As [`RawJson`]'s, and the value must be an object.
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let raw = <RawJson as Deserialize>::deserialize(deserializer)?;
        RawObject::try_from(raw).map_err(D::Error::custom)
    }
}

impl RawJson {
    /// Reads the value into a type of the application's.
    ///
    /// # Errors
    /// `serde_json`'s error when the value does not have the type's shape.
    pub fn deserialize<T: DeserializeOwned>(&self) -> Result<T, serde_json::Error> {
        serde_json::from_str(self.as_str())
    }
}

impl RawObject {
    /// Reads the object into a type of the application's.
    ///
    /// # Errors
    /// `serde_json`'s error when the object does not have the type's shape.
    pub fn deserialize<T: DeserializeOwned>(&self) -> Result<T, serde_json::Error> {
        self.as_raw().deserialize()
    }
}

/// Implements `Serialize` for types that write their own wire shape with `to_json`.
macro_rules! serialize_as_json {
    ($($ty:ty),* $(,)?) => {$(
        impl serde::Serialize for $ty {
            /// The value in its wire shape, as its `to_json` writes it.
            fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                $crate::json::serde::serialize_text(&self.to_json(), serializer)
            }
        }
    )*};
}
pub(crate) use serialize_as_json;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn raw_json_passes_through_serde_value_for_value() {
        let text =
            r#"{"a":[1,-2,18446744073709551615,1.5,-0,1e2,"x\n\u00e9",true,null,{}],"b":{"c":[]}}"#;
        let raw = RawJson::parse(text, &Limits::default()).unwrap();
        let through: serde_json::Value = serde_json::to_value(&raw).unwrap();
        let direct: serde_json::Value = serde_json::from_str(text).unwrap();
        assert_eq!(through, direct);
        let back: RawJson = serde_json::from_value(direct).unwrap();
        assert_eq!(back.deserialize::<serde_json::Value>().unwrap(), through);
    }

    #[test]
    fn deserialized_raw_json_keeps_its_members_in_order_and_refuses_a_repeated_key() {
        let text = r#"{"z":1,"a":{"y":[true,null,"\u00e9\n",[]],"b":2.5,"c":-7,"d":1e300}}"#;
        let raw: RawJson = serde_json::from_str(text).unwrap();
        assert_eq!(
            raw.as_str(),
            "{\"z\":1,\"a\":{\"y\":[true,null,\"\u{e9}\\n\",[]],\"b\":2.5,\"c\":-7,\"d\":1e+300}}"
        );
        let repeated = serde_json::from_str::<RawJson>(r#"{"a":1,"a":2}"#).unwrap_err();
        assert!(
            alloc::format!("{repeated}").contains("a key repeated in one object"),
            "{repeated}"
        );
    }

    /// A deserializer of options nested without end, as a format other than JSON could give.
    struct Endless;

    impl<'de> Deserializer<'de> for Endless {
        type Error = serde::de::value::Error;

        fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Self::Error> {
            visitor.visit_some(Endless)
        }

        serde::forward_to_deserialize_any! {
            bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes
            byte_buf option unit unit_struct newtype_struct seq tuple tuple_struct map struct
            enum identifier ignored_any
        }
    }

    #[test]
    fn options_nested_without_end_are_refused_at_the_nesting_bound() {
        let refused = <RawJson as Deserialize>::deserialize(Endless).unwrap_err();
        assert!(
            alloc::format!("{refused}").contains("nesting deeper than the limit of 64"),
            "{refused}"
        );
    }

    #[test]
    fn deserialized_raw_json_is_held_to_the_crates_rules() {
        let deep = "[".repeat(100) + &"]".repeat(100);
        let refused = serde_json::from_str::<RawJson>(&deep).unwrap_err();
        assert!(alloc::format!("{refused}").contains("nesting"), "{refused}");
        assert!(serde_json::from_str::<RawObject>("[1]").is_err());
    }
}
