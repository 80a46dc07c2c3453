//! Units of the simulation: integer picosecond time, bytes (and byte counts as scenarios write
//! them, `"2MiB"`, `"2M"`) and bit rates (and rates as scenarios write them, `400` or `"400G"`).
//!
//! Everything that decides *when* an event happens is an integer so that runs are exactly
//! reproducible on every platform. Serialization times are computed with 128-bit intermediates
//! and rounded up, so a packet never leaves a port earlier than physics allows.

use serde::de::{self, Visitor};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;

/// The arithmetic a quantity newtype of `u64` shares ([`Time`], [`Bytes`]): quantities of one
/// kind add and subtract (with `u64`'s overflow behaviour), scale by a
/// plain number (`3 * US`, `rtt / 2`), divide into a plain ratio (`t / US`), sum, and print as
/// their count. Mixing two kinds does not compile; `.0` is the count where one must meet other
/// numbers.
macro_rules! quantity {
    ($T:ident) => {
        impl $T {
            /// None of it.
            pub const ZERO: $T = $T(0);
            /// The largest value, used for "never" or "unbounded".
            pub const MAX: $T = $T(u64::MAX);

            /// `self − other`, or zero if `other` is larger.
            #[inline(always)]
            pub const fn saturating_sub(self, other: $T) -> $T {
                $T(self.0.saturating_sub(other.0))
            }

            /// `self + other`, or `MAX` if that overflows.
            #[inline(always)]
            pub const fn saturating_add(self, other: $T) -> $T {
                $T(self.0.saturating_add(other.0))
            }

            /// `self × n`, or `MAX` if that overflows.
            #[inline(always)]
            pub const fn saturating_mul(self, n: u64) -> $T {
                $T(self.0.saturating_mul(n))
            }

            /// `self − other`, unless `other` is larger.
            #[inline(always)]
            pub const fn checked_sub(self, other: $T) -> Option<$T> {
                match self.0.checked_sub(other.0) {
                    Some(v) => Some($T(v)),
                    None => None,
                }
            }

            /// `self / n`, unless `n` is zero.
            #[inline(always)]
            pub const fn checked_div(self, n: u64) -> Option<$T> {
                match self.0.checked_div(n) {
                    Some(v) => Some($T(v)),
                    None => None,
                }
            }

            /// The distance between two values.
            #[inline(always)]
            pub const fn abs_diff(self, other: $T) -> $T {
                $T(self.0.abs_diff(other.0))
            }

            /// How many `unit`s it takes to cover `self` (rounded up).
            #[inline(always)]
            pub const fn div_ceil(self, unit: $T) -> u64 {
                self.0.div_ceil(unit.0)
            }
        }

        impl std::ops::Add for $T {
            type Output = $T;
            #[inline(always)]
            fn add(self, o: $T) -> $T {
                $T(self.0 + o.0)
            }
        }

        impl std::ops::Sub for $T {
            type Output = $T;
            #[inline(always)]
            fn sub(self, o: $T) -> $T {
                $T(self.0 - o.0)
            }
        }

        impl std::ops::AddAssign for $T {
            #[inline(always)]
            fn add_assign(&mut self, o: $T) {
                self.0 += o.0;
            }
        }

        impl std::ops::SubAssign for $T {
            #[inline(always)]
            fn sub_assign(&mut self, o: $T) {
                self.0 -= o.0;
            }
        }

        impl std::ops::Mul<u64> for $T {
            type Output = $T;
            #[inline(always)]
            fn mul(self, n: u64) -> $T {
                $T(self.0 * n)
            }
        }

        impl std::ops::Mul<$T> for u64 {
            type Output = $T;
            #[inline(always)]
            fn mul(self, v: $T) -> $T {
                $T(self * v.0)
            }
        }

        impl std::ops::MulAssign<u64> for $T {
            #[inline(always)]
            fn mul_assign(&mut self, n: u64) {
                self.0 *= n;
            }
        }

        impl std::ops::Div<u64> for $T {
            type Output = $T;
            #[inline(always)]
            fn div(self, n: u64) -> $T {
                $T(self.0 / n)
            }
        }

        /// A ratio (how many `o` fit in `self`, rounded down).
        impl std::ops::Div for $T {
            type Output = u64;
            #[inline(always)]
            fn div(self, o: $T) -> u64 {
                self.0 / o.0
            }
        }

        impl std::ops::Rem for $T {
            type Output = $T;
            #[inline(always)]
            fn rem(self, o: $T) -> $T {
                $T(self.0 % o.0)
            }
        }

        impl std::iter::Sum for $T {
            fn sum<I: Iterator<Item = $T>>(it: I) -> $T {
                $T(it.map(|v| v.0).sum())
            }
        }

        // Written as the bare count, so that every output that prints one is unchanged.
        impl fmt::Display for $T {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                fmt::Display::fmt(&self.0, f)
            }
        }

        impl fmt::Debug for $T {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                fmt::Debug::fmt(&self.0, f)
            }
        }
    };
}

/// Simulated time or duration in whole picoseconds.
///
/// Its own type, so that the compiler keeps a time apart from a byte count or an id (the
/// arithmetic of `quantity!`); it serialises as the picosecond count.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default, Serialize, Deserialize)]
#[serde(transparent)]
#[repr(transparent)]
pub struct Time(pub u64);

quantity!(Time);

impl Time {
    /// `n` microseconds, for constants (`Time::from_us(10)`; elsewhere `10 * US` reads the same:
    /// operators are not `const`).
    pub const fn from_us(n: u64) -> Time {
        Time(n * US.0)
    }
}

/// A count of bytes: a flow's or message's size, a buffer, a threshold, a queue's occupancy, a
/// window.
///
/// Its own type, so that the compiler keeps a byte count apart from a time or an id (the
/// arithmetic of `quantity!`); a rate turns a time into bytes ([`BitsPerSec::bytes_in`]) and
/// bytes into a time ([`BitsPerSec::tx_time`]). It serialises as the count.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default, Serialize, Deserialize)]
#[serde(transparent)]
#[repr(transparent)]
pub struct Bytes(pub u64);

quantity!(Bytes);

/// One nanosecond.
pub const NS: Time = Time(1_000);
/// One microsecond.
pub const US: Time = Time(1_000_000);
/// One millisecond.
pub const MS: Time = Time(1_000_000_000);
/// One second.
pub const SEC: Time = Time(1_000_000_000_000);

/// A duration given in µs (a scenario's `*_us` key, already range-checked) as whole
/// picoseconds, rounded to the nearest.
pub fn us_to_ps(us: f64) -> Time {
    Time((us * US.0 as f64).round() as u64)
}

/// Picoseconds as microseconds (as the output files write times).
pub fn ps_to_us(t: Time) -> f64 {
    t.0 as f64 / US.0 as f64
}

/// Longest time or duration a scenario may give, in µs: 1000 s of simulated time. Time is u64
/// picoseconds (about 213 days at most), so sums of thousands of such values (a path's
/// latencies, a start time plus timeouts) cannot wrap.
pub const MAX_TIME_US: f64 = 1e9;

/// [`MAX_TIME_US`] in ns, for `*_ns` keys.
pub const MAX_TIME_NS: f64 = MAX_TIME_US * 1e3;

/// `us` µs as whole picoseconds, or `None` unless `0 ≤ us ≤` [`MAX_TIME_US`].
pub fn checked_us(us: f64) -> Option<Time> {
    (us.is_finite() && (0.0..=MAX_TIME_US).contains(&us)).then(|| us_to_ps(us))
}

/// A scenario number for a message: as written for ordinary magnitudes, in exponent form
/// (`1e300`, `1e-300`) for huge or tiny ones, so that an error never prints 300 digits.
pub fn show_num(v: f64) -> String {
    if v != 0.0 && v.is_finite() && !(1e-6..1e15).contains(&v.abs()) {
        format!("{v:e}")
    } else {
        v.to_string()
    }
}

/// Slowest link or pacing rate, in Gb/s (1 Mb/s: a 64 KiB packet still takes under a second).
pub const MIN_RATE_GBPS: f64 = 1e-3;
/// Fastest link rate, in Gb/s (1 Pb/s).
pub const MAX_RATE_GBPS: f64 = 1e6;

/// Largest buffer, threshold or headroom a port may have, in bytes (1 TiB): draining it at the
/// slowest rate takes about 2.4 hours, far inside [`Time`].
pub const MAX_BUFFER_BYTES: u64 = 1 << 40;

/// A link or pacing rate in bits per second.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct BitsPerSec(pub u64);

impl BitsPerSec {
    /// Builds a rate from gigabits per second (10^9 bit/s), rounded to the nearest bit/s.
    pub fn from_gbps(gbps: f64) -> Self {
        BitsPerSec((gbps * 1e9).round() as u64)
    }

    /// Whether the rate lies in [`MIN_RATE_GBPS`]`..=`[`MAX_RATE_GBPS`].
    pub fn in_range(self) -> bool {
        (1e9 * MIN_RATE_GBPS..=1e9 * MAX_RATE_GBPS).contains(&(self.0 as f64))
    }

    /// The rate in Gb/s, for display.
    pub fn gbps(self) -> f64 {
        self.0 as f64 / 1e9
    }

    /// Time to serialize `bytes` at this rate, rounded up to the next picosecond.
    #[inline]
    pub fn tx_time(self, bytes: Bytes) -> Time {
        let num = bytes.0 as u128 * 8 * SEC.0 as u128;
        let den = self.0 as u128;
        Time(num.div_ceil(den) as u64)
    }

    /// Bytes that this rate carries in `t` picoseconds (rounded down).
    pub fn bytes_in(self, t: Time) -> Bytes {
        Bytes((self.0 as u128 * t.0 as u128 / (8 * SEC.0 as u128)) as u64)
    }
}

/// A duration shown with a readable unit, for messages and the CLI.
pub struct ShowTime(pub Time);

impl fmt::Display for ShowTime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let t = self.0;
        if t >= MS {
            write!(f, "{:.3} ms", t.0 as f64 / MS.0 as f64)
        } else if t >= US {
            write!(f, "{:.3} us", t.0 as f64 / US.0 as f64)
        } else {
            write!(f, "{:.3} ns", t.0 as f64 / NS.0 as f64)
        }
    }
}

/// A byte count: an integer, or a string with a unit (`"64KiB"`, `"2M"`, `"1.5MB"`, `"4096B"`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ByteSize(pub u64);

/// Why `s` is no number: negative (`"-3MiB"`, which a count or a rate cannot be), or not one.
fn not_a_number(s: &str, what: &str) -> String {
    if s.trim_start().starts_with('-') && split_number(s.trim_start().trim_start_matches('-')).is_some() {
        format!("`{s}` is negative; {what} cannot be")
    } else {
        format!("`{s}` does not start with a number")
    }
}

/// The byte-count spellings, for error messages (the book's scenario reference, `docs/src/reference/scenario.md`, says the same).
pub const BYTE_SPELLINGS: &str = "a byte count: a non-negative integer, or a string of a number and a unit: \
B; K or KB = 1000 B; Ki or KiB = 1024 B; M/MB = 10^6 B, Mi/MiB = 2^20 B; G/GB = 10^9 B, Gi/GiB = 2^30 B \
(letters in any case, spaces allowed, e.g. \"2MiB\", \"64kb\", \"1.5 MB\")";

/// Parses a byte count as scenarios write it: `"2M"` / `"2MB"` (decimal: 2,000,000 B, as the
/// papers' KB = 1000 B), `"2Mi"` / `"2MiB"` (binary: 2,097,152 B), likewise K and G, `"B"` or no
/// unit; unit letters in any case, spaces allowed, fractions where they give whole bytes
/// (`"1.5MB"`). The error says what is wrong with `s` (the caller adds the key).
pub fn parse_bytes(s: &str) -> Result<u64, String> {
    let (int, frac, unit) = split_number(s).ok_or_else(|| not_a_number(s, "a byte count"))?;
    let mult: u64 = match unit.to_ascii_lowercase().as_str() {
        "" | "b" => 1,
        "k" | "kb" => 1_000,
        "m" | "mb" => 1_000_000,
        "g" | "gb" => 1_000_000_000,
        "ki" | "kib" => 1 << 10,
        "mi" | "mib" => 1 << 20,
        "gi" | "gib" => 1 << 30,
        _ => return Err(format!("`{s}`: unknown unit `{unit}`")),
    };
    // Exact decimal arithmetic: "1.1KB" is 1100 B, which f64 would miss by a rounding error.
    let digits = |d: &str| -> Option<u128> { if d.is_empty() { Some(0) } else { d.parse::<u128>().ok() } };
    // At most what a TOML integer holds, so that a resolved scenario can write it back.
    let too_big = || format!("`{s}`: larger than {} B (2^63 − 1)", i64::MAX);
    if frac.len() > 30 {
        return Err(too_big());
    }
    let scale = 10u128.pow(frac.len() as u32);
    let (i, f) = (digits(int).ok_or_else(too_big)?, digits(frac).ok_or_else(too_big)?);
    let total = i.checked_mul(scale).and_then(|v| v.checked_add(f)).and_then(|v| v.checked_mul(mult as u128)).ok_or_else(too_big)?;
    if total % scale != 0 {
        return Err(format!("`{s}` is not a whole number of bytes"));
    }
    i64::try_from(total / scale).map(|b| b as u64).map_err(|_| too_big())
}

/// Splits `"1.5 MiB"` into the integer digits, the fraction digits and the trimmed unit; `None`
/// when it does not start with a number (`""`, `"."`, `"-3"`, `"MB"`, `"1.2.3"`).
fn split_number(s: &str) -> Option<(&str, &str, &str)> {
    let s = s.trim();
    let end = s.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(s.len());
    let (num, unit) = s.split_at(end);
    let (int, frac) = num.split_once('.').unwrap_or((num, ""));
    if (int.is_empty() && frac.is_empty()) || frac.contains('.') {
        return None;
    }
    Some((int, frac, unit.trim()))
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
                f.write_str(BYTE_SPELLINGS)
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> std::result::Result<ByteSize, E> {
                // Above i64::MAX (only from JSON): a resolved scenario could not write it back.
                i64::try_from(v).map(|_| ByteSize(v)).map_err(|_| E::invalid_value(de::Unexpected::Unsigned(v), &self))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> std::result::Result<ByteSize, E> {
                u64::try_from(v).map(ByteSize).map_err(|_| E::invalid_value(de::Unexpected::Signed(v), &self))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> std::result::Result<ByteSize, E> {
                parse_bytes(v).map(ByteSize).map_err(|why| E::custom(format!("{why}; expected {BYTE_SPELLINGS}")))
            }
        }
        d.deserialize_any(V)
    }
}

/// A rate as a scenario's `*_gbps` key gives it, in Gb/s: a number (`400`, `12.5`) or a string
/// with a unit (`"400G"`, `"400Gbps"`, `"100 Gb/s"`, `"25g"`, `"800M"` = 0.8). Written back as a
/// plain number, so resolved scenarios read the same whichever spelling was used. Range checks
/// (positive, finite) are the caller's, which knows the key.
#[derive(Clone, Copy, Debug, PartialEq, PartialOrd)]
pub struct Gbps(pub f64);

/// What a rate key accepts, for error messages.
pub const RATE_SPELLINGS: &str = "a number in Gb/s, or a string such as \"400G\", \"400Gbps\", \"100 Gb/s\", \"800M\" (= 0.8)";

/// Parses `"400G"`-style rates into Gb/s: units G, Gbps, Gb/s, Gbit/s (and M, T alike), letters in
/// any case except a capital `B`, which means bytes and is refused rather than silently read
/// as bits.
pub fn parse_gbps(s: &str) -> Result<f64, String> {
    let (int, frac, unit) = split_number(s).ok_or_else(|| not_a_number(s, "a rate"))?;
    if unit.contains('B') {
        return Err(format!("`{s}`: a capital B means bytes; rates are in bits per second (\"400Gbps\", \"400 Gb/s\")"));
    }
    let n: f64 = format!("{}.{}", if int.is_empty() { "0" } else { int }, if frac.is_empty() { "0" } else { frac })
        .parse()
        .map_err(|_| format!("`{s}` is not a number"))?;
    let unit = unit.to_ascii_lowercase();
    let prefix = ["bps", "b/s", "bit/s", "bits/s", ""].iter().find_map(|suffix| unit.strip_suffix(suffix).filter(|p| p.len() <= 1));
    match prefix {
        // A bare number in a string ("400") is Gb/s, as the unquoted number would be.
        Some("") | Some("g") => Ok(n),
        // Division, not × 0.001, so that "800M" is exactly the f64 nearest 0.8.
        Some("m") => Ok(n / 1000.0),
        Some("t") => Ok(n * 1000.0),
        _ => Err(format!("`{s}`: unknown unit `{unit}`")),
    }
}

impl fmt::Display for Gbps {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

impl Serialize for Gbps {
    fn serialize<S: Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        s.serialize_f64(self.0)
    }
}

impl<'de> Deserialize<'de> for Gbps {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = Gbps;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str(RATE_SPELLINGS)
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> std::result::Result<Gbps, E> {
                Ok(Gbps(v))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> std::result::Result<Gbps, E> {
                Ok(Gbps(v as f64))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> std::result::Result<Gbps, E> {
                Ok(Gbps(v as f64))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> std::result::Result<Gbps, E> {
                parse_gbps(v).map(Gbps).map_err(|why| E::custom(format!("{why}; expected {RATE_SPELLINGS}")))
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
        assert_eq!(BitsPerSec::from_gbps(400.0).tx_time(Bytes(4096)), Time(81_920));
        // 64 B at 800 Gb/s: 0.64 ns.
        assert_eq!(BitsPerSec::from_gbps(800.0).tx_time(Bytes(64)), Time(640));
        // 1 B at 3 Gb/s is 2.666.. ns, rounded up.
        assert_eq!(BitsPerSec(3_000_000_000).tx_time(Bytes(1)), Time(2_667));
        assert_eq!(BitsPerSec::from_gbps(400.0).bytes_in(12 * US), Bytes(600_000));
    }

    #[test]
    fn byte_spellings() {
        let ok = |s: &str| parse_bytes(s).unwrap_or_else(|e| panic!("{s}: {e}"));
        for (s, v) in [
            ("12", 12),
            ("12B", 12),
            ("12 b", 12),
            ("2M", 2_000_000),
            ("2MB", 2_000_000),
            ("2mb", 2_000_000),
            ("2Mi", 2_097_152),
            ("2MiB", 2_097_152),
            ("2mib", 2_097_152),
            ("2 MiB", 2_097_152),
            (" 2 MIB ", 2_097_152),
            ("64K", 64_000),
            ("64kb", 64_000),
            ("64kB", 64_000),
            ("64Ki", 65_536),
            ("64KiB", 65_536),
            ("1G", 1_000_000_000),
            ("1GB", 1_000_000_000),
            ("1Gi", 1 << 30),
            ("1gib", 1 << 30),
            ("1.5MB", 1_500_000),
            ("1.1KB", 1_100),
            ("1.5KiB", 1_536),
            (".5K", 500),
            ("3.", 3),
            ("16GiB", 16 << 30),
        ] {
            assert_eq!(ok(s), v, "{s}");
        }
    }

    #[test]
    fn bad_byte_spellings_say_why() {
        let err = |s: &str| parse_bytes(s).unwrap_err();
        assert!(err("3 parsecs").contains("unknown unit `parsecs`"));
        assert!(err("2MiBs").contains("unknown unit"));
        assert!(err("1.5B").contains("not a whole number of bytes"));
        assert!(err("0.3KiB").contains("not a whole number of bytes"));
        for s in ["", ".", "MB", "1.2.3MB", "+5", "-", "-MB"] {
            assert!(err(s).contains("does not start with a number"), "{s}: {}", err(s));
        }
        for s in ["-3", "-1.5MB", " -2 KiB"] {
            assert!(err(s).contains("is negative"), "{s}: {}", err(s));
        }
        // Too large wraps nowhere: an error, not a clamp.
        assert!(err("20000000000GB").contains("larger than"));
        assert!(err("99999999999999999999999999999999999999999").contains("larger than"));
        // 2^63 fits u64 but no TOML integer: a resolved scenario could not write it back.
        assert!(err("9223372036854775808").contains("9223372036854775807"));
        assert_eq!(parse_bytes("9223372036854775807"), Ok(i64::MAX as u64));
    }

    #[test]
    fn rate_spellings() {
        let ok = |s: &str| parse_gbps(s).unwrap_or_else(|e| panic!("{s}: {e}"));
        for (s, v) in [
            ("400", 400.0),
            ("400G", 400.0),
            ("400g", 400.0),
            ("400Gbps", 400.0),
            ("400 gbps", 400.0),
            ("100 Gb/s", 100.0),
            ("100Gbit/s", 100.0),
            ("25g", 25.0),
            ("12.5G", 12.5),
            ("800M", 0.8),
            ("800Mbps", 0.8),
            ("1.6T", 1600.0),
        ] {
            assert_eq!(ok(s), v, "{s}");
        }
        assert!(parse_gbps("400GB/s").unwrap_err().contains("bytes"));
        assert!(parse_gbps("400GBps").unwrap_err().contains("bytes"));
        assert!(parse_gbps("400 furlongs").unwrap_err().contains("unknown unit"));
        assert!(parse_gbps("400Gbpss").unwrap_err().contains("unknown unit"));
        assert!(parse_gbps("fast").unwrap_err().contains("does not start with a number"));
    }

    #[test]
    fn rates_deserialize_from_numbers_and_strings_and_write_back_as_numbers() {
        #[derive(Deserialize, Serialize)]
        struct T {
            r: Gbps,
        }
        let get = |text: &str| toml::from_str::<T>(text).map(|t| t.r.0).map_err(|e| e.to_string());
        assert_eq!(get("r = 400"), Ok(400.0));
        assert_eq!(get("r = 12.5"), Ok(12.5));
        assert_eq!(get("r = \"400G\""), Ok(400.0));
        let e = get("r = true").unwrap_err();
        assert!(e.contains("a number in Gb/s, or a string such as \"400G\""), "{e}");
        let e = get("r = \"4 parsecs\"").unwrap_err();
        assert!(e.contains("unknown unit") && e.contains("a number in Gb/s"), "{e}");
        assert_eq!(toml::to_string(&T { r: Gbps(400.0) }).unwrap().trim(), "r = 400.0");
    }
}
