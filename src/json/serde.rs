//! serde at the edges (feature `serde`): every public value serializes in its wire shape
//! through any serde serializer, raw JSON included, without building a tree; raw JSON, tools
//! and catalogs deserialize, validated as if a server had sent them; and raw JSON reads into
//! the application's own types.

use serde::de::{DeserializeOwned, Error as _};
use serde::ser::{SerializeMap, SerializeSeq};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::view::JsonRef;
use super::{RawJson, RawObject};
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
    /// Reads any JSON value, then validates it as this crate validates what a peer sends,
    /// under [`Limits::default`].
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let value = serde_json::Value::deserialize(deserializer)?;
        let text = serde_json::to_string(&value).map_err(D::Error::custom)?;
        RawJson::parse(&text, &Limits::default()).map_err(D::Error::custom)
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
    fn deserialized_raw_json_is_held_to_the_crates_rules() {
        let deep = "[".repeat(100) + &"]".repeat(100);
        let refused = serde_json::from_str::<RawJson>(&deep).unwrap_err();
        assert!(alloc::format!("{refused}").contains("nesting"), "{refused}");
        assert!(serde_json::from_str::<RawObject>("[1]").is_err());
    }
}
