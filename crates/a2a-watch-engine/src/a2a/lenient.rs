//! Field decoders that accept what real agents send rather than only what the spec says
//! (spec section 5.7; docs/protocol-notes.md, "Tolerant decoding").

use std::fmt;

use jiff::Timestamp;
use jiff::civil::DateTime;
use serde::de::{self, Visitor};
use serde::{Deserialize, Deserializer, Serializer};

/// A count that may arrive as `11`, `11.0` (a2a-python prints numbers as floats), `"11"`, or null.
pub fn count<'de, D: Deserializer<'de>>(d: D) -> Result<u32, D::Error> {
    Ok(u32::try_from(whole_number(d)?).unwrap_or(u32::MAX))
}

/// A number that only counts up, like A2A 1.1's `generation` (an int64, which proto JSON writes
/// as a string): anything else, negative or null, is 0, "not given".
pub fn whole_number<'de, D: Deserializer<'de>>(d: D) -> Result<u64, D::Error> {
    struct NumberVisitor;
    impl<'de> Visitor<'de> for NumberVisitor {
        type Value = u64;
        fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
            f.write_str("a non-negative number")
        }
        fn visit_u64<E: de::Error>(self, v: u64) -> Result<u64, E> {
            Ok(v)
        }
        fn visit_i64<E: de::Error>(self, v: i64) -> Result<u64, E> {
            Ok(u64::try_from(v).unwrap_or(0))
        }
        fn visit_f64<E: de::Error>(self, v: f64) -> Result<u64, E> {
            Ok(v.clamp(0.0, u64::MAX as f64) as u64)
        }
        fn visit_str<E: de::Error>(self, v: &str) -> Result<u64, E> {
            let v = v.trim();
            match v.parse::<u64>() {
                Ok(n) => Ok(n),
                Err(_) => v.parse::<f64>().map_err(E::custom).and_then(|f| self.visit_f64(f)),
            }
        }
        fn visit_unit<E: de::Error>(self) -> Result<u64, E> {
            Ok(0)
        }
    }
    d.deserialize_any(NumberVisitor)
}

/// A bool that proto3 may omit (absent = false) and that some agents send as null.
pub fn flag<'de, D: Deserializer<'de>>(d: D) -> Result<bool, D::Error> {
    Ok(Option::<bool>::deserialize(d)?.unwrap_or(false))
}

/// A string that may be null.
pub fn text<'de, D: Deserializer<'de>>(d: D) -> Result<String, D::Error> {
    Ok(Option::<String>::deserialize(d)?.unwrap_or_default())
}

/// A list that may be null.
pub fn list<'de, D, T>(d: D) -> Result<Vec<T>, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de>,
{
    Ok(Option::<Vec<T>>::deserialize(d)?.unwrap_or_default())
}

/// Parses a timestamp in any of the shapes agents send: RFC 3339 with `Z` or an offset, with or
/// without a fraction, or with no zone at all (0.3 Python servers), which we read as UTC.
pub fn parse_timestamp(s: &str) -> Option<Timestamp> {
    let s = s.trim();
    if let Ok(ts) = s.parse::<Timestamp>() {
        return Some(ts);
    }
    s.parse::<DateTime>()
        .ok()
        .and_then(|dt| jiff::tz::TimeZone::UTC.to_timestamp(dt).ok())
}

/// An optional timestamp; one we cannot read becomes `None` rather than losing the whole event.
/// Read straight from the text (no intermediate value): it is on every status of every frame.
pub fn timestamp<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Timestamp>, D::Error> {
    struct TimestampVisitor;
    impl<'de> Visitor<'de> for TimestampVisitor {
        type Value = Option<Timestamp>;
        fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
            f.write_str("an RFC 3339 timestamp")
        }
        fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
            Ok(parse_timestamp(v))
        }
        fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
            Ok(None)
        }
        fn visit_none<E: de::Error>(self) -> Result<Self::Value, E> {
            Ok(None)
        }
        fn visit_some<D2: Deserializer<'de>>(self, d: D2) -> Result<Self::Value, D2::Error> {
            d.deserialize_any(self)
        }
        // Anything else (a number, an object) is not a timestamp we can read.
        fn visit_i64<E: de::Error>(self, _: i64) -> Result<Self::Value, E> {
            Ok(None)
        }
        fn visit_u64<E: de::Error>(self, _: u64) -> Result<Self::Value, E> {
            Ok(None)
        }
        fn visit_f64<E: de::Error>(self, _: f64) -> Result<Self::Value, E> {
            Ok(None)
        }
        fn visit_bool<E: de::Error>(self, _: bool) -> Result<Self::Value, E> {
            Ok(None)
        }
        fn visit_map<A: de::MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
            while map.next_entry::<de::IgnoredAny, de::IgnoredAny>()?.is_some() {}
            Ok(None)
        }
        fn visit_seq<A: de::SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
            while seq.next_element::<de::IgnoredAny>()?.is_some() {}
            Ok(None)
        }
    }
    d.deserialize_option(TimestampVisitor)
}

pub fn serialize_timestamp<S: Serializer>(ts: &Option<Timestamp>, s: S) -> Result<S::Ok, S::Error> {
    match ts {
        // ISO 8601 UTC with a `Z` (spec section 5.6.1).
        Some(ts) => s.serialize_str(&ts.to_string()),
        None => s.serialize_none(),
    }
}

/// A JSON value that may be `null` and still be present: `Some(Value::Null)` for `"data": null`.
pub fn present<'de, D: Deserializer<'de>>(d: D) -> Result<Option<serde_json::Value>, D::Error> {
    serde_json::Value::deserialize(d).map(Some)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamps_of_every_shape_parse() {
        let utc = parse_timestamp("2026-10-06T09:00:00.500Z").unwrap();
        assert_eq!(parse_timestamp("2026-10-06T09:00:00.500+00:00"), Some(utc));
        assert_eq!(parse_timestamp("2026-10-06T11:00:00.500+02:00"), Some(utc));
        assert_eq!(
            parse_timestamp("2026-10-06T09:00:00.500"),
            Some(utc),
            "zone-less is UTC"
        );
        assert!(parse_timestamp("2025-04-02T16:59:25.331844").is_some());
        assert!(parse_timestamp("2026-10-06T09:00:00Z").is_some());
        assert_eq!(parse_timestamp("yesterday"), None);
    }

    #[derive(Deserialize)]
    struct Counted {
        #[serde(default, deserialize_with = "count")]
        n: u32,
    }

    #[derive(Deserialize)]
    struct Stamped {
        #[serde(default, deserialize_with = "timestamp")]
        at: Option<Timestamp>,
    }

    #[test]
    fn unreadable_timestamps_become_none_not_errors() {
        {
            let json = r#"{"at":"2026-10-06T09:00:00Z"}"#;
            assert!(serde_json::from_str::<Stamped>(json).unwrap().at.is_some());
        }
        for json in [
            r#"{"at":null}"#,
            r#"{"at":"soon"}"#,
            r#"{"at":12}"#,
            r#"{"at":{"s":1}}"#,
            r#"{"at":[1]}"#,
            "{}",
        ] {
            assert_eq!(serde_json::from_str::<Stamped>(json).unwrap().at, None, "{json}");
        }
    }

    #[test]
    fn counts_accept_floats_strings_and_null() {
        for (json, want) in [
            (r#"{"n":11}"#, 11),
            (r#"{"n":11.0}"#, 11),
            (r#"{"n":"7"}"#, 7),
            (r#"{"n":null}"#, 0),
            ("{}", 0),
        ] {
            assert_eq!(serde_json::from_str::<Counted>(json).unwrap().n, want, "{json}");
        }
    }
}

#[cfg(test)]
mod generation_tests {
    use crate::a2a::StreamResponse;

    /// A2A 1.1's `generation` as proto JSON writes an int64 (a string), as a number, or not at
    /// all; what is not a count up from 1 is 0, "not given".
    #[test]
    fn generations_read_as_strings_or_numbers_and_anything_else_is_zero() {
        for (generation, want) in [
            (r#""42""#, 42),
            ("42", 42),
            ("42.0", 42),
            ("-3", 0),
            ("null", 0),
            (r#""9223372036854775807""#, i64::MAX as u64),
        ] {
            let json = format!(r#"{{"statusUpdate": {{"taskId": "t", "generation": {generation}}}}}"#);
            let event: StreamResponse = serde_json::from_str(&json).unwrap();
            assert_eq!(event.generation(), want, "{generation}");
        }
        let event: StreamResponse = serde_json::from_str(r#"{"task": {"id": "t"}}"#).unwrap();
        assert_eq!(event.generation(), 0, "absent");
    }
}
