//! Units of the simulation: integer picosecond time, bytes and bit rates.
//!
//! Everything that decides *when* an event happens is an integer so that runs are exactly
//! reproducible on every platform. Serialization times are computed with 128-bit intermediates
//! and rounded up, so a packet never leaves a port earlier than physics allows.

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
