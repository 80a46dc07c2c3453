//! Message shapers: the host-side driver module that may split one application message (a WQE)
//! into sub-messages (sub-WQEs), each posted on a queue pair of its own.
//!
//! **Follows:** seqbalance §2.2 (the SeqBalance Shaper; paper §III-C "SeqBalance Shaper" and
//! "Completion Queue Element"). The shaper splits a flow of S bytes into n sub-WQEs over N
//! sub-QPs; each sub-QP is a connection of its own (own 5-tuple, hence own entropy for ECMP and
//! the SeqBalance switch, own congestion-control state starting at line rate) and all n
//! sub-WQEs are posted at the flow's start. The app flow completes when the sender has seen the
//! ACK of the last byte of every sub-WQE (the paper's sender-side bitmap).
//!
//! **Where it applies:** flow workloads, when the workload layer compiles them into connections
//! and messages (`workload::flows_to_traffic`, which records which connections form each app
//! flow). It lives here, with the other `[transport.*]` families, because it is the RNIC
//! driver's business and is configured under `[transport]`; the workload layer, above
//! transport, calls [`AnyShaper::split`]. Collectives spread their chunks over queue pairs
//! themselves (`workload.qps`), so a shaper with a collective workload is refused.
//!
//! Adding a shaper: one struct implementing [`Shaper`] and [`crate::scheme::Scheme`]`<ShaperCtx>`,
//! and one row in the `scheme_family!` list below.

use crate::scheme::{Limit, NoParams};
use serde::{Deserialize, Serialize};

/// What a shaper is built with.
#[derive(Clone, Copy, Debug)]
pub struct ShaperCtx {
    /// Payload bytes of a full packet.
    pub mss: u64,
}

/// The interface of a shaper.
pub trait Shaper {
    /// Replaces `out` with the sizes of the sub-messages of a `bytes`-byte message, in
    /// sub-QP order (sub-message i goes to sub-QP i); they add up to `bytes`, none is empty.
    fn split(&self, bytes: u64, out: &mut Vec<u64>);
    /// The most sub-messages it cuts one message into (what setup plans connections for).
    fn max_pieces(&self) -> u64;
}

crate::scheme_family! {
    /// Scenario selection of a shaper (`[transport.shaper]`, `name = ...`).
    config ShaperConfig;
    /// A built shaper (static dispatch).
    any AnyShaper;
    ctx ShaperCtx; what "message shaper"; key "transport.shaper"; default None;
    dispatch dispatch;
    schemes {
        /// One message, one connection.
        None => Unsplit,
        /// The SeqBalance Shaper.
        Seqbalance => SeqBalanceShaper,
    }
}

impl ShaperConfig {
    /// Whether this is `none` (left out of resolved scenarios, so that they stay as they were
    /// before shapers existed).
    pub fn is_none(&self) -> bool {
        matches!(self, ShaperConfig::None(_))
    }
}

impl AnyShaper {
    /// Whether it is a shaper other than `none`: flows are then reported per app flow with
    /// their sub-QP count (`flows.csv` `subflows`), even those it leaves whole.
    pub fn is_active(&self) -> bool {
        !matches!(self, AnyShaper::None(_))
    }

    /// See [`Shaper::split`].
    pub fn split(&self, bytes: u64, out: &mut Vec<u64>) {
        dispatch!(self, s => s.split(bytes, out))
    }

    /// See [`Shaper::max_pieces`].
    pub fn max_pieces(&self) -> u64 {
        dispatch!(self, s => s.max_pieces())
    }
}

/// `none`: every message goes whole to its own connection.
#[derive(Clone, Copy, Debug)]
pub struct Unsplit;

impl crate::scheme::Scheme<ShaperCtx> for Unsplit {
    const NAME: &'static str = "none";
    const SUMMARY: &'static str = "no shaper: one connection (QP) per flow";
    type Params = NoParams;
    fn build(_p: &NoParams, _ctx: &mut ShaperCtx) -> Self {
        Unsplit
    }
}

impl Shaper for Unsplit {
    fn split(&self, bytes: u64, out: &mut Vec<u64>) {
        out.clear();
        out.push(bytes);
    }
    fn max_pieces(&self) -> u64 {
        1
    }
}

/// How a message is cut into sub-WQEs.
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum SplitRule {
    /// Whole packets: sub-WQE i gets ⌊pk/n⌋ packets, one more if i < pk mod n; the last one
    /// carries the partial packet.
    #[default]
    Packets,
    /// Bytes: ⌈S/n⌉ or ⌊S/n⌋ bytes each, the larger ones first.
    Bytes,
}

/// Parameters of `seqbalance`.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct SeqBalanceParams {
    /// N: sub-QPs per flow.
    pub qps: u32,
    /// `"packets"` or `"bytes"`.
    pub split: SplitRule,
}

impl Default for SeqBalanceParams {
    fn default() -> Self {
        //= seqbalance §2.6 (N, sub-flows per WQE); type=paper
        //# N = 4 (swept 2..6 in Fig. 6/7).
        //= seqbalance §2.7 item 2; type=assumption
        //# Split granularity is packet-aligned. `n = min(N, #packets)`.
        SeqBalanceParams { qps: 4, split: SplitRule::Packets }
    }
}

/// `seqbalance`: the SeqBalance Shaper (see the module doc).
#[derive(Clone, Copy, Debug)]
pub struct SeqBalanceShaper {
    qps: u64,
    rule: SplitRule,
    mss: u64,
}

impl crate::scheme::Scheme<ShaperCtx> for SeqBalanceShaper {
    const NAME: &'static str = "seqbalance";
    const SUMMARY: &'static str = "SeqBalance Shaper: a flow becomes n = min(qps, packets) sub-WQEs on sub-QPs of their own (own entropy, fresh CC), posted at once; the flow completes when every sub-WQE is acknowledged";
    type Params = SeqBalanceParams;
    const LIMITS: &'static [Limit] = &[Limit::new("qps", 1.0, 64.0)];
    fn build(p: &SeqBalanceParams, ctx: &mut ShaperCtx) -> Self {
        SeqBalanceShaper { qps: p.qps as u64, rule: p.split, mss: ctx.mss.max(1) }
    }
}

impl Shaper for SeqBalanceShaper {
    fn max_pieces(&self) -> u64 {
        self.qps
    }
    fn split(&self, bytes: u64, out: &mut Vec<u64>) {
        out.clear();
        //= seqbalance §2.2.2; type=assumption
        //# Let `pk = ceil(S / MTU_payload)` and `n = min(N, pk)`. A flow smaller than n packets
        //# is not split into empty pieces. A single-packet flow is not split at all.
        let pkts = bytes.div_ceil(self.mss).max(1);
        let n = self.qps.min(pkts);
        match self.rule {
            SplitRule::Packets => {
                //= seqbalance §2.2.2; type=assumption
                //# Sub-WQE i (i = 0..n−1) gets `floor(pk/n)` packets, plus one extra if
                //# `i < pk mod n`. The last sub-WQE carries the partial last packet.
                let mut left = bytes;
                for i in 0..n {
                    let share = (pkts / n + u64::from(i < pkts % n)) * self.mss;
                    let piece = if i + 1 == n { left } else { share };
                    out.push(piece);
                    left -= piece;
                }
            }
            SplitRule::Bytes => {
                //= seqbalance §2.2.2; type=assumption
                //# Alternative, also acceptable: byte-exact split `ceil(S/n)`.
                // The remainder goes one byte each to the first pieces (so ⌈S/n⌉ or ⌊S/n⌋
                // bytes): cutting ⌈S/n⌉ each and leaving the rest to the last could leave it
                // empty or short when packets are tiny.
                out.extend((0..n).map(|i| bytes / n + u64::from(i < bytes % n)));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scheme::Scheme;

    fn pieces(qps: u32, split: SplitRule, mss: u64, bytes: u64) -> Vec<u64> {
        let s = SeqBalanceShaper::build(&SeqBalanceParams { qps, split }, &mut ShaperCtx { mss });
        let mut out = vec![7];
        s.split(bytes, &mut out);
        out
    }

    #[test]
    fn ten_packets_over_four_qps_are_three_three_two_two() {
        // pk = 10 with a partial last packet of 500 B: 3, 3, 2, 2 packets; the last sub-WQE
        // holds one full packet and the partial one.
        assert_eq!(pieces(4, SplitRule::Packets, 1000, 9_500), vec![3000, 3000, 2000, 1500]);
        assert_eq!(pieces(4, SplitRule::Packets, 1000, 10_000), vec![3000, 3000, 2000, 2000]);
    }

    #[test]
    fn short_flows_use_fewer_sub_qps_and_one_packet_is_not_split() {
        // pk = 2 with N = 4: n = 2.
        assert_eq!(pieces(4, SplitRule::Packets, 1000, 1_200), vec![1000, 200]);
        assert_eq!(pieces(4, SplitRule::Bytes, 1000, 1_200), vec![600, 600]);
        for split in [SplitRule::Packets, SplitRule::Bytes] {
            assert_eq!(pieces(4, split, 1000, 1_000), vec![1000]);
            assert_eq!(pieces(4, split, 1000, 1), vec![1]);
        }
        // N = 1 never splits.
        assert_eq!(pieces(1, SplitRule::Packets, 1000, 1_000_000), vec![1_000_000]);
    }

    #[test]
    fn byte_split_sums_to_the_flow_and_differs_by_at_most_a_byte() {
        for (qps, bytes) in [(4, 9_500u64), (3, 1_000_001), (64, 64_001), (6, 2_000_000)] {
            let p = pieces(qps, SplitRule::Bytes, 1000, bytes);
            assert_eq!(p.len(), qps as usize);
            assert_eq!(p.iter().sum::<u64>(), bytes);
            assert!(p[0] == bytes.div_ceil(qps as u64) && p.iter().all(|&x| x + 1 >= p[0]), "{p:?}");
        }
        // Tiny packets (1 B payload): still no empty piece.
        assert_eq!(pieces(4, SplitRule::Bytes, 1, 5), vec![2, 1, 1, 1]);
    }

    #[test]
    fn packet_split_is_whole_packets_but_the_last() {
        let (mss, bytes) = (1000u64, 1_234_567u64);
        let p = pieces(6, SplitRule::Packets, mss, bytes);
        assert_eq!(p.len(), 6);
        assert_eq!(p.iter().sum::<u64>(), bytes);
        assert!(p[..5].iter().all(|&x| x % mss == 0), "{p:?}");
        // 1235 packets over 6: 206 for the first five (1235 mod 6 = 5), 205 for the last.
        assert_eq!(p.iter().map(|&x| x.div_ceil(mss)).collect::<Vec<_>>(), vec![206, 206, 206, 206, 206, 205]);
    }

    #[test]
    fn none_keeps_the_message_whole() {
        let mut out = Vec::new();
        Unsplit.split(123_456, &mut out);
        assert_eq!(out, vec![123_456]);
    }

    #[test]
    fn qps_limits_are_enforced() {
        for bad in [0, 65] {
            let c: ShaperConfig = toml::from_str(&format!("name = \"seqbalance\"\nqps = {bad}")).unwrap();
            let e = c.validate().unwrap_err().to_string();
            assert!(e.contains("transport.shaper.qps") && e.contains("1..=64"), "{e}");
        }
        let c: ShaperConfig = toml::from_str("name = \"seqbalance\"\nqps = 64\nsplit = \"bytes\"").unwrap();
        assert!(c.validate().is_ok() && !c.is_none());
    }
}
