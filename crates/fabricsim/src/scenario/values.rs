//! Scenario value types with friendly spellings (`"2MiB"`, `"4:1"`), `--set` overrides and the
//! `cc = "name"` shorthand. Byte counts ([`ByteSize`]) live in [`crate::units`] and the scheme
//! parameter helpers ([`deserialize_params`], [`NoParams`]) in [`crate::scheme`], re-exported here.

use crate::error::{Error, Result};
use serde::de::{self, Visitor};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;

pub use crate::scheme::{deserialize_params, NoParams};
pub use crate::units::ByteSize;

/// An oversubscription ratio r:1, written `"4:1"` or `4`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ratio(pub u32);

impl Serialize for Ratio {
    fn serialize<S: Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        s.serialize_str(&format!("{}:1", self.0))
    }
}

impl<'de> Deserialize<'de> for Ratio {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = Ratio;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("an oversubscription ratio such as \"1:1\", \"2:1\", \"4:1\", \"8:1\" (or the integer 4)")
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> std::result::Result<Ratio, E> {
                if v == 0 || v > 1024 {
                    return Err(E::invalid_value(de::Unexpected::Unsigned(v), &self));
                }
                Ok(Ratio(v as u32))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> std::result::Result<Ratio, E> {
                if v <= 0 {
                    return Err(E::invalid_value(de::Unexpected::Signed(v), &self));
                }
                self.visit_u64(v as u64)
            }
            fn visit_str<E: de::Error>(self, v: &str) -> std::result::Result<Ratio, E> {
                let r = v.split_once(':').and_then(|(a, b)| (b.trim() == "1").then(|| a.trim().parse::<u64>().ok()).flatten());
                match r {
                    Some(n) => self.visit_u64(n),
                    None => Err(E::invalid_value(de::Unexpected::Str(v), &self)),
                }
            }
        }
        d.deserialize_any(V)
    }
}

/// Applies one `key.path=value` override. The value is read as a TOML value when it parses as
/// one (`400`, `true`, `"x"`, `[1, 2]`), otherwise as a bare string (`--set transport.cc=fixed`).
pub fn apply_override(root: &mut toml::Value, spec: &str) -> Result<()> {
    let (path, raw) = spec
        .split_once('=')
        .ok_or_else(|| Error::invalid("--set", format!("`{spec}`: expected key.path=value, e.g. topology.k=16")))?;
    let path = path.trim();
    if path.is_empty() || path.split('.').any(str::is_empty) {
        return Err(Error::invalid("--set", format!("`{spec}`: the key path is empty or has an empty part")));
    }
    let value = match format!("v = {}", raw.trim()).parse::<toml::Table>() {
        Ok(mut t) => t.remove("v").unwrap_or(toml::Value::String(raw.trim().to_string())),
        // An integer TOML cannot hold would otherwise become a string and fail as one.
        Err(_) if is_integer(raw.trim()) => {
            return Err(Error::invalid(path, format!("{}: integers are allowed in {}..={} (TOML's range)", raw.trim(), i64::MIN, i64::MAX)));
        }
        Err(_) => toml::Value::String(raw.trim().to_string()),
    };
    let parts: Vec<&str> = path.split('.').collect();
    let mut node = root;
    for (i, part) in parts.iter().enumerate() {
        let table = node
            .as_table_mut()
            .ok_or_else(|| Error::invalid("--set", format!("`{path}`: `{}` is not a table", parts[..i].join("."))))?;
        if i + 1 == parts.len() {
            // A new workload kind replaces the whole workload table: the old kind's keys
            // belong to it, and would be refused (the new kind's keys follow in later --set).
            if parts == ["workload", "kind"] && table.get("kind") != Some(&value) {
                table.clear();
            }
            // Setting `transport.cc.x` on a `cc = "name"` shorthand keeps working because
            // shorthands are expanded before overrides reach inside them (see below).
            table.insert(part.to_string(), value);
            return Ok(());
        }
        let entry = table.entry(part.to_string()).or_insert_with(|| toml::Value::Table(toml::Table::new()));
        if let toml::Value::String(name) = entry {
            let mut t = toml::Table::new();
            t.insert(shorthand_tag(part).to_string(), toml::Value::String(name.clone()));
            *entry = toml::Value::Table(t);
        }
        node = entry;
    }
    Ok(())
}

/// Whether `s` is a decimal integer (digits, optionally after a minus sign).
fn is_integer(s: &str) -> bool {
    let digits = s.strip_prefix('-').unwrap_or(s);
    !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit())
}

fn shorthand_tag(key: &str) -> &'static str {
    if key == "workload" || key == "topology" {
        "kind"
    } else {
        "name"
    }
}

/// Turns `transport.cc = "fixed"` into `[transport.cc] name = "fixed"` (likewise `lb`, `gate`) and
/// `workload = "incast"` into `[workload] kind = "incast"`.
pub fn expand_shorthands(root: &mut toml::Value) {
    let Some(top) = root.as_table_mut() else { return };
    if let Some(toml::Value::String(w)) = top.get("workload").cloned() {
        let mut t = toml::Table::new();
        t.insert("kind".into(), toml::Value::String(w));
        top.insert("workload".into(), toml::Value::Table(t));
    }
    if let Some(toml::Value::Table(tr)) = top.get_mut("transport") {
        for key in ["cc", "lb", "gate", "credit", "reliability", "shaper"] {
            if let Some(toml::Value::String(name)) = tr.get(key).cloned() {
                tr.insert(key.into(), named(name));
            }
        }
        if let Some(toml::Value::Array(entries)) = tr.get_mut("cc_by_source") {
            for e in entries.iter_mut().filter_map(toml::Value::as_table_mut) {
                if let Some(toml::Value::String(name)) = e.get("cc").cloned() {
                    e.insert("cc".into(), named(name));
                }
            }
        }
    }
}

/// `[x] name = "<name>"`: the table a `x = "<name>"` shorthand stands for.
fn named(name: String) -> toml::Value {
    toml::Value::Table(toml::Table::from_iter([("name".to_string(), toml::Value::String(name))]))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::units::parse_bytes;

    #[test]
    fn byte_sizes() {
        // Every spelling is tested in `units`; here, that the scenario's type is that parser.
        assert_eq!(parse_bytes("2MiB"), Ok(2 << 20));
        assert_eq!(parse_bytes("2M"), Ok(2_000_000));
        assert!(parse_bytes("3 parsecs").is_err());
    }

    #[test]
    fn overrides_create_and_replace() {
        let mut v: toml::Value = toml::Value::Table("[topology]\nk = 8\n[transport]\ncc = \"fixed\"\n".parse().unwrap());
        apply_override(&mut v, "topology.k=16").unwrap();
        apply_override(&mut v, "transport.cc.window_bdp=2.0").unwrap();
        apply_override(&mut v, "transport.lb=ecmp").unwrap();
        assert_eq!(v["topology"]["k"].as_integer(), Some(16));
        assert_eq!(v["transport"]["cc"]["name"].as_str(), Some("fixed"));
        assert_eq!(v["transport"]["cc"]["window_bdp"].as_float(), Some(2.0));
        assert_eq!(v["transport"]["lb"].as_str(), Some("ecmp"));
        assert!(apply_override(&mut v, "nonsense").is_err());
    }
}
