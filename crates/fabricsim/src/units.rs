//! Units of the simulation: integer picosecond time, bytes (and byte counts as scenarios write
//! them, `"2MiB"`) and bit rates.
//!
//! Everything that decides *when* an event happens is an integer so that runs are exactly
//! reproducible on every platform. Serialization times are computed with 128-bit intermediates
//! and rounded up, so a packet never leaves a port earlier than physics allows.

use serde::de::{self, Visitor};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;

/// Simulated time or duration in picoseconds.
pub type Time = u64;

/// One nanosecond in picoseconds.
pub const NS: Time = 1_000;
/// One microsecond in picoseconds.
pub const US: Time = 1_000_000;
/// One millisecond in picoseconds.
pub const MS: Time = 1_000_000_000;
/// One second in picoseconds.
pub const SEC: Time = 1_000_000_000_000;

/// A duration given in µs (a scenario's `*_us` key, already range-checked) as whole
/// picoseconds, rounded to the nearest.
pub fn us_to_ps(us: f64) -> Time {
    (us * US as f64).round() as Time
}

/// A link or pacing rate in bits per second.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct BitsPerSec(pub u64);

impl BitsPerSec {
    /// Builds a rate from gigabits per second (10^9 bit/s), rounded to the nearest bit/s.
    pub fn from_gbps(gbps: f64) -> Self {
        BitsPerSec((gbps * 1e9).round() as u64)
    }

    /// The rate in Gb/s, for display.
    pub fn gbps(self) -> f64 {
        self.0 as f64 / 1e9
    }

    /// Time to serialize `bytes` at this rate, rounded up to the next picosecond.
    #[inline]
    pub fn tx_time(self, bytes: u64) -> Time {
        let num = bytes as u128 * 8 * SEC as u128;
        let den = self.0 as u128;
        num.div_ceil(den) as Time
    }

    /// Bytes that this rate carries in `t` picoseconds (rounded down).
    pub fn bytes_in(self, t: Time) -> u64 {
        (self.0 as u128 * t as u128 / (8 * SEC as u128)) as u64
    }
}

/// A duration shown with a readable unit, for messages and the CLI.
pub struct ShowTime(pub Time);

impl fmt::Display for ShowTime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let t = self.0;
        if t >= MS {
            write!(f, "{:.3} ms", t as f64 / MS as f64)
        } else if t >= US {
            write!(f, "{:.3} us", t as f64 / US as f64)
        } else {
            write!(f, "{:.3} ns", t as f64 / NS as f64)
        }
    }
}

/// A byte count: an integer, or a string with a unit (`"64KiB"`, `"2MiB"`, `"1MB"`, `"4096B"`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ByteSize(pub u64);

/// Parses `"2MiB"`-style sizes.
pub fn parse_bytes(s: &str) -> Option<u64> {
    let s = s.trim();
    let split = s.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(s.len());
    let (num, unit) = s.split_at(split);
    let n: f64 = num.parse().ok()?;
    let mult: u64 = match unit.trim() {
        "" | "B" => 1,
        "KB" | "kB" => 1_000,
        "MB" => 1_000_000,
        "GB" => 1_000_000_000,
        "KiB" => 1 << 10,
        "MiB" => 1 << 20,
        "GiB" => 1 << 30,
        _ => return None,
    };
    let v = n * mult as f64;
    (v.fract() == 0.0 && v >= 0.0).then_some(v as u64)
}

impl Serialize for ByteSize {
    fn serialize<S: Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        s.serialize_u64(self.0)
    }
}

impl<'de> Deserialize<'de> for ByteSize {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = ByteSize;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a byte count: a non-negative integer or a string like \"64KiB\", \"2MiB\", \"1MB\"")
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> std::result::Result<ByteSize, E> {
                Ok(ByteSize(v))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> std::result::Result<ByteSize, E> {
                u64::try_from(v).map(ByteSize).map_err(|_| E::invalid_value(de::Unexpected::Signed(v), &self))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> std::result::Result<ByteSize, E> {
                parse_bytes(v).map(ByteSize).ok_or_else(|| E::invalid_value(de::Unexpected::Str(v), &self))
            }
        }
        d.deserialize_any(V)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn serialization_is_exact_for_common_rates() {
        // 4096 B at 400 Gb/s: 4096*8/400e9 s = 81.92 ns.
        assert_eq!(BitsPerSec::from_gbps(400.0).tx_time(4096), 81_920);
        // 64 B at 800 Gb/s: 0.64 ns.
        assert_eq!(BitsPerSec::from_gbps(800.0).tx_time(64), 640);
        // 1 B at 3 Gb/s is 2.666.. ns, rounded up.
        assert_eq!(BitsPerSec(3_000_000_000).tx_time(1), 2_667);
        assert_eq!(BitsPerSec::from_gbps(400.0).bytes_in(12 * US), 600_000);
    }
}
