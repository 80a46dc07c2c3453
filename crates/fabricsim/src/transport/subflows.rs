//! How many subflows a paced flow needs so that spraying cannot trigger a spurious fast
//! retransmit: Eq. 1 of the Load-Balancing-for-AI study (paper §7; lb-ai-training spec §2.3,
//! LR-SUBTCP), for the subflow TCP loss-recovery mode.
//!
//! In a 3-tier fat tree two packets of one flow meet different queues at no more than 4 hops
//! (ToR up, agg up, core down, agg down), so one packet can be delayed behind the others by at
//! most `4·Q/B_link` for per-port queues of `Q` bytes. A subflow sending `P`-byte packets at
//! `r = B_link/(F·S)` (`F` flows per host, `S` subflows per flow, rate coefficient 1) emits
//! `4·Q/(P·F·S)` packets in that time, each a dupACK; a threshold of `d` dupACKs is safe when
//! that count stays below `d`, i.e. `S > 4·Q/(d·P·F)`. The smallest such `S`:
//!
//! `S = max(1, ⌊4·Q / (d·P·F)⌋ + 1)`
//!
//! It depends on `Q/P`, `d` and `F` only, not on the link rate (paper: 400 Gb/s gave the same
//! results as 100 Gb/s). Paper check: 32 KiB queues, 4 KiB packets, one flow per host, `d = 3`
//! needs "only 11" subflows; `d = 6` "halves" it (6); with `d = 3` any `F ≥ 11` needs one.

use crate::error::{Error, Result};

/// Eq. 1's subflow count for queues of `queue_bytes`, packets of `packet_bytes`, a dupACK
/// threshold of `dupack_threshold` and `flows_per_host` concurrent flows per sending host.
/// Errors name `key.packet_bytes`, `key.dupack_threshold` or `key.flows_per_host` when that
/// value is 0 (the bound divides by each).
pub fn subflow_count(key: &str, queue_bytes: u64, packet_bytes: u64, dupack_threshold: u32, flows_per_host: u32) -> Result<u32> {
    for (name, v) in [("packet_bytes", packet_bytes), ("dupack_threshold", dupack_threshold as u64), ("flows_per_host", flows_per_host as u64)] {
        if v == 0 {
            return Err(Error::invalid(format!("{key}.{name}"), "0: Eq. 1's subflow count needs it positive"));
        }
    }
    // ⌊4Q / (dPF)⌋ in integers: exact where the quotient is whole (S must exceed it strictly).
    let quotient = (4 * queue_bytes as u128) / (dupack_threshold as u128 * packet_bytes as u128 * flows_per_host as u128);
    Ok(u32::try_from(quotient + 1).unwrap_or(u32::MAX).max(1))
}

#[cfg(test)]
mod tests {
    use super::subflow_count;

    const KIB: u64 = 1024;

    fn s(q: u64, p: u64, d: u32, f: u32) -> u32 {
        subflow_count("transport.reliability", q, p, d, f).unwrap()
    }

    #[test]
    fn the_papers_configurations() {
        // 4·32/(3·4) = 10.67 → 11 ("only 11"); 4·32/(6·4) = 5.33 → 6 ("can be halved").
        assert_eq!(s(32 * KIB, 4 * KIB, 3, 1), 11);
        assert_eq!(s(32 * KIB, 4 * KIB, 6, 1), 6);
        // d = 3: 10.67/F < 1 from F = 11 on, so one subflow (plain TCP); F = 10 still needs 2.
        assert_eq!(s(32 * KIB, 4 * KIB, 3, 10), 2);
        for f in [11, 12, 64, 127] {
            assert_eq!(s(32 * KIB, 4 * KIB, 3, f), 1, "F = {f}");
        }
    }

    #[test]
    fn a_whole_quotient_needs_one_more_and_the_rate_does_not_matter() {
        // 4·12 KiB / (3·4 KiB) = 4 exactly: with S = 4 a delayed packet could be overtaken by
        // 4·Q/(P·S) = 3 = d packets, so S must exceed the quotient.
        assert_eq!(s(12 * KIB, 4 * KIB, 3, 1), 5);
        // No queue: no reordering, one subflow.
        assert_eq!(s(0, 4 * KIB, 3, 1), 1);
        // Scaling Q and P together leaves S unchanged.
        assert_eq!(s(320 * KIB, 40 * KIB, 3, 1), 11);
        // The floor is taken on the whole ratio, not on parts of it.
        assert_eq!(s(32 * KIB, 4 * KIB, 2, 2), 9);
    }

    #[test]
    fn zero_inputs_are_refused_naming_the_key() {
        let e = subflow_count("transport.reliability", 32 * KIB, 4 * KIB, 0, 1).unwrap_err().to_string();
        assert!(e.contains("transport.reliability.dupack_threshold"), "{e}");
        let e = subflow_count("transport.reliability", 32 * KIB, 4 * KIB, 3, 0).unwrap_err().to_string();
        assert!(e.contains("transport.reliability.flows_per_host"), "{e}");
        let e = subflow_count("transport.reliability", 32 * KIB, 0, 3, 1).unwrap_err().to_string();
        assert!(e.contains("transport.reliability.packet_bytes"), "{e}");
    }
}
