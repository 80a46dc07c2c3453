//! `strack`: STrack's adaptive packet spraying. A clean (unmarked) ACK clocks the next packet
//! out on the same entropy; a marked ACK flags its entropy in a bitmap, and the next packet takes
//! the next unflagged entropy in round-robin order, each packet clearing at most one flag on its
//! way, so a penalty lasts about one pass over the range (one or two RTTs). The round-robin range
//! follows the window: clamp(2·cwnd, 8, 256) entropies.
//!
//! **Follows:** Le et al., "STrack", §1, §3.1 and Algorithm 3; spec `shared/specs/strack.md`
//! §2.5.3 (update_ecn_bitmap), §2.5.4 (choose_path), §2.6 (oblivious variant), §2.7 E1/E2.
//!
//! State per connection: a `max_paths`-bit flag bitmap (`[u64; 4]`, no allocation), the
//! round-robin pointer `rr` and an explicit `Option` for the entropy to reuse (E2: the paper's
//! `next_path_id > 0` test could never reuse path 0).
//!
//! **Entropies are path ids.** The wire entropy *is* the path id, 0..`max_paths`. The spec
//! (§2.1.2) adds a random per-connection salt so that different flows' path ids hash
//! independently; fabricsim's ECMP hash already mixes in the connection id
//! (`net/switch.rs`: hash of (src, dst, conn, entropy) with the switch seed), so flows that use
//! the same path ids still land on independent physical paths and no salt is needed.
//!
//! **Initial pointer:** `rr` starts at 0 as in Algorithm 3, so the first packet takes path 1
//! (the pointer advances before use) and the selector draws nothing from the RNG. Because the
//! switch hash includes the connection, all flows starting at the same path id does not make
//! them collide.
//!
//! **Parameters** (`[transport.lb] name = "strack"`, [`StrackLbParams`]):
//! - `max_paths` = 256: entropies per connection and bitmap size (paper §4.1, Algorithm 3).
//! - `min_paths` = 8: lower clamp of the round-robin range (Algorithm 3 l.18).
//! - `bitmap` = `"text"`: flag polarity (spec §2.7 E1). `"text"`: 1 = the entropy's last ACK was
//!   ECN-marked, skipped by round-robin (paper §1/§3.1 prose). `"literal"`: Algorithm 3 as
//!   printed, 1 = the entropy's last ACK was clean, i.e. it is already ACK-clocked; round-robin
//!   skips those (clearing one per packet) and so explores the entropies that are *not*
//!   currently clocked, marked ones included.
//! - `mode` = `"adaptive"`: `"oblivious"` is the §2.6 baseline: ECN ignored, no bitmap, no
//!   reuse, plain round-robin.
//! - `oblivious_range` = `"all"`: the oblivious baseline's range, all `max_paths` (spec §2.6
//!   ASSUMPTION) or `"window"`, the adaptive range clamp(2·cwnd, `min_paths`, `max_paths`).
//!
//! Feedback: only ACKs carry path information. NACKs do not exist in STrack (no trimming) and a
//! timeout says nothing about one path (the RTO covers the whole connection, spec §2.5.10), so
//! `Feedback::Nack` and `Feedback::Timeout` are ignored. So are entropies ≥ `max_paths` (never
//! emitted by this selector).
//!
//! **Differences:** the range is 2·`window_pkts`, where the connection reports the window as
//! whole packets rounded down (`EntropyCtx::window_pkts`), whereas the spec rounds 2·cwnd with
//! cwnd fractional; the two differ by at most 2 entropies. A window-less sender uses
//! `max_paths`. Retransmissions choose their entropy like new packets (spec §2.5.8 ASSUMPTION).

use super::{EntropyCtx, Feedback, PathSelector};
use crate::error::{Error, Result};
use crate::ids::Entropy;
use crate::rng::Rng;
use crate::units::Time;
use serde::{Deserialize, Serialize};

/// Registry name.
pub const NAME: &str = "strack";
/// Registry summary.
pub const SUMMARY: &str =
    "STrack adaptive spraying: reuse entropies whose ACK came back clean, round-robin past ECN-flagged ones over 2·cwnd paths";

/// Largest `max_paths`: the bitmap has this many bits (paper §4.1: 256 paths).
pub const MAX_PATHS: u32 = 256;

/// Polarity of the per-entropy flag (spec §2.7 E1).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BitmapPolarity {
    /// Flag = last ACK on the entropy was marked; round-robin skips flagged entropies.
    Text,
    /// Flag = last ACK on the entropy was clean (Algorithm 3 as printed); round-robin skips
    /// those, i.e. entropies that are already ACK-clocked.
    Literal,
}

/// Whether the selector uses ECN feedback.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SprayMode {
    /// STrack's adaptive spraying (paper §3.1).
    Adaptive,
    /// Oblivious round-robin spraying, the "STrack CC + oblivious spray" baseline (spec §2.6).
    Oblivious,
}

/// Round-robin range of the oblivious mode.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ObliviousRange {
    /// All `max_paths` entropies (spec §2.6 ASSUMPTION).
    All,
    /// clamp(2·cwnd, `min_paths`, `max_paths`), as the adaptive mode (spec §2.6 alternative).
    Window,
}

/// Parameters of `strack` path selection.
#[derive(Clone, Copy, Debug, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct StrackLbParams {
    /// Entropies (path ids) per connection, 1..=256 (paper §4.1, Algorithm 3: 256).
    pub max_paths: u32,
    /// Smallest round-robin range, 1..=`max_paths` (Algorithm 3 l.18: 8).
    pub min_paths: u32,
    /// Flag polarity: "text" (paper prose, spec E1 resolution) or "literal" (Algorithm 3).
    pub bitmap: BitmapPolarity,
    /// "adaptive" (paper §3.1) or "oblivious" (spec §2.6 baseline).
    pub mode: SprayMode,
    /// Oblivious range: "all" (spec §2.6) or "window".
    pub oblivious_range: ObliviousRange,
}

impl Default for StrackLbParams {
    fn default() -> Self {
        StrackLbParams {
            max_paths: MAX_PATHS,
            min_paths: 8,
            bitmap: BitmapPolarity::Text,
            mode: SprayMode::Adaptive,
            oblivious_range: ObliviousRange::All,
        }
    }
}

impl StrackLbParams {
    pub(super) fn validate(&self) -> Result<()> {
        if !(1..=MAX_PATHS).contains(&self.max_paths) {
            return Err(Error::invalid("transport.lb.max_paths", format!("{}: must be between 1 and {MAX_PATHS}", self.max_paths)));
        }
        if !(1..=self.max_paths).contains(&self.min_paths) {
            return Err(Error::invalid(
                "transport.lb.min_paths",
                format!("{}: must be between 1 and max_paths ({})", self.min_paths, self.max_paths),
            ));
        }
        Ok(())
    }
}

/// A fixed 256-bit set of entropies.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Bits([u64; 4]);

impl Bits {
    #[inline]
    fn get(&self, i: u32) -> bool {
        self.0[(i / 64) as usize] >> (i % 64) & 1 == 1
    }
    #[inline]
    fn set(&mut self, i: u32, v: bool) {
        let (w, b) = ((i / 64) as usize, i % 64);
        if v {
            self.0[w] |= 1 << b;
        } else {
            self.0[w] &= !(1 << b);
        }
    }
}

/// The selector of one connection.
#[derive(Clone, Debug)]
pub struct StrackLb {
    max_paths: u32,
    min_paths: u32,
    polarity: BitmapPolarity,
    mode: SprayMode,
    oblivious_range: ObliviousRange,
    /// Per-entropy flag; meaning per `polarity`. Round-robin skips set entries.
    flags: Bits,
    /// Round-robin pointer (the last path id used).
    rr: u32,
    /// Entropy whose clean ACK clocks out the next packet.
    next_path_id: Option<u32>,
}

impl StrackLb {
    /// A selector with its bitmap clear and `rr` = 0 (Algorithm 3 INIT).
    pub fn new(p: &StrackLbParams) -> Self {
        // Invalid values are refused by validate(); clamp anyway so a selector built from
        // unchecked parameters can neither index past the bitmap nor divide by zero.
        let max_paths = p.max_paths.clamp(1, MAX_PATHS);
        StrackLb {
            max_paths,
            min_paths: p.min_paths.clamp(1, max_paths),
            polarity: p.bitmap,
            mode: p.mode,
            oblivious_range: p.oblivious_range,
            flags: Bits::default(),
            rr: 0,
            next_path_id: None,
        }
    }

    //= strack §3.1, Algorithm 3 l.17–18; spec §2.5.4
    //# The range tracks the window, 2·cwnd clamped to [8, 256], so flags are at most ~1 window old.
    fn window_range(&self, ctx: &EntropyCtx) -> u32 {
        match ctx.window_pkts {
            Some(w) => w.saturating_mul(2).clamp(self.min_paths, self.max_paths),
            None => self.max_paths,
        }
    }

    /// Whether entropy `e` is currently flagged (skipped by round-robin).
    pub fn flagged(&self, e: Entropy) -> bool {
        (e as u32) < self.max_paths && self.flags.get(e as u32)
    }

    /// The entropy the next packet will reuse, if any.
    pub fn next_path_id(&self) -> Option<Entropy> {
        self.next_path_id.map(|e| e as Entropy)
    }
}

impl PathSelector for StrackLb {
    fn next_entropy(&mut self, ctx: &EntropyCtx, _rng: &mut Rng) -> Entropy {
        if self.mode == SprayMode::Oblivious {
            //= spec §2.6; type=assumption
            //# Oblivious baseline: plain round-robin over 256 (or the window range), no feedback.
            let paths = match self.oblivious_range {
                ObliviousRange::All => self.max_paths,
                ObliviousRange::Window => self.window_range(ctx),
            };
            self.rr = (self.rr + 1) % paths;
            return self.rr as Entropy;
        }
        //= strack Algorithm 3 l.12–14; spec §2.5.4, §2.7 E2
        //# A clean ACK clocks the next packet out on its entropy (path 0 included); rr follows it.
        if let Some(p) = self.next_path_id.take() {
            self.rr = p;
            return p as Entropy;
        }
        //= strack §3.1, Algorithm 3 l.19–27; spec §2.5.4
        //# Otherwise the next entropy in round-robin order that is not flagged; each packet
        //# clears the first flag it skips, so the loop ends within paths + 1 steps.
        let paths = self.window_range(ctx);
        let mut cleared = false;
        self.rr = (self.rr + 1) % paths;
        while self.flags.get(self.rr) {
            if !cleared {
                self.flags.set(self.rr, false);
                cleared = true;
            }
            self.rr = (self.rr + 1) % paths;
        }
        self.rr as Entropy
    }

    fn on_feedback(&mut self, entropy: Entropy, fb: Feedback, _now: Time) {
        let Feedback::Ack { ecn } = fb else {
            // STrack has no NACKs, and a timeout is about the connection, not one path.
            return;
        };
        let pid = entropy as u32;
        if self.mode == SprayMode::Oblivious || pid >= self.max_paths {
            return;
        }
        //= strack §1, §3.1, Algorithm 3 l.2–10; spec §2.5.3, §2.7 E1
        //# Marked: flag the entropy and do not reuse it. Clean: unflag it and reuse it next.
        //# The literal variant stores the opposite bit (1 = clean, already clocked).
        let flag = match self.polarity {
            BitmapPolarity::Text => ecn,
            BitmapPolarity::Literal => !ecn,
        };
        self.flags.set(pid, flag);
        self.next_path_id = if ecn { None } else { Some(pid) };
    }
}

impl crate::scheme::Scheme<super::LbBuild> for StrackLb {
    const NAME: &'static str = NAME;
    const SUMMARY: &'static str = SUMMARY;
    const LIMITS: &'static [crate::scheme::Limit] = &[crate::scheme::Limit::new("max_paths", 1.0, 65536.0), crate::scheme::Limit::new("min_paths", 1.0, 65536.0)];
    type Params = StrackLbParams;
    fn check(p: &StrackLbParams, _key: &str) -> crate::error::Result<()> {
        p.validate()
    }
    fn build(p: &StrackLbParams, _ctx: &mut super::LbBuild) -> Self {
        StrackLb::new(p)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const CTX: EntropyCtx = EntropyCtx { now: Time::ZERO, seq: 0, retransmit: false, window_pkts: Some(4), in_flight: 0 };
    const CLEAN: Feedback = Feedback::Ack { ecn: false };
    const MARKED: Feedback = Feedback::Ack { ecn: true };

    fn lb(p: StrackLbParams) -> (StrackLb, Rng) {
        (StrackLb::new(&p), Rng::stream(5, "test", 0))
    }

    fn ctx(window_pkts: Option<u32>) -> EntropyCtx {
        EntropyCtx { window_pkts, ..CTX }
    }

    fn take(s: &mut StrackLb, rng: &mut Rng, window_pkts: Option<u32>, n: usize) -> Vec<Entropy> {
        (0..n).map(|_| s.next_entropy(&ctx(window_pkts), rng)).collect()
    }

    //= strack §3.1 ("round-robin until an ACK is received"); spec §2.5.4; type=test
    #[test]
    fn round_robin_before_any_ack() {
        let (mut s, mut rng) = lb(StrackLbParams::default());
        // Window of 4 packets: range 8, pointer starts at 0 and advances before use.
        assert_eq!(take(&mut s, &mut rng, Some(4), 10), [1, 2, 3, 4, 5, 6, 7, 0, 1, 2]);
    }

    //= strack Algorithm 3 l.17–18; spec §2.5.4 (range); type=test
    #[test]
    fn range_follows_the_window_with_floor_8_and_cap_256() {
        // (window_pkts, expected range): 0 and 2 → floor 8; 10 → 20; 100 → 200; 128 and 10^6 →
        // cap 256; None (window-less sender) → 256.
        let cases = [(Some(0), 8u32), (Some(2), 8), (Some(10), 20), (Some(100), 200), (Some(128), 256), (Some(1_000_000), 256), (None, 256)];
        for (w, range) in cases {
            let (mut s, mut rng) = lb(StrackLbParams::default());
            let got = take(&mut s, &mut rng, w, range as usize + 1);
            let want: Vec<Entropy> = (1..=range).map(|i| (i % range) as Entropy).chain([1]).collect();
            assert_eq!(got, want, "window {w:?}");
        }
        // min_paths and max_paths bound the range.
        let (mut s, mut rng) = lb(StrackLbParams { max_paths: 16, min_paths: 4, ..StrackLbParams::default() });
        assert_eq!(take(&mut s, &mut rng, Some(1), 5), [1, 2, 3, 0, 1]);
        assert!(take(&mut s, &mut rng, Some(100), 100).iter().all(|&e| e < 16));
    }

    //= strack §1, §3.1 (ACK clocking); spec §2.5.3; type=test
    #[test]
    fn clean_ack_reuses_its_entropy_and_the_pointer_follows() {
        let (mut s, mut rng) = lb(StrackLbParams::default());
        assert_eq!(take(&mut s, &mut rng, Some(4), 3), [1, 2, 3]);
        s.on_feedback(2, CLEAN, Time::ZERO);
        assert_eq!(s.next_path_id(), Some(2));
        // The clean entropy is used once, then round-robin resumes after it (rr = 2).
        assert_eq!(take(&mut s, &mut rng, Some(4), 3), [2, 3, 4]);
        // Only the latest clean ACK counts.
        s.on_feedback(6, CLEAN, Time::ZERO);
        s.on_feedback(1, CLEAN, Time::ZERO);
        assert_eq!(take(&mut s, &mut rng, Some(4), 2), [1, 2]);
    }

    //= spec §2.7 E2; type=test
    #[test]
    fn path_zero_can_be_reused() {
        let (mut s, mut rng) = lb(StrackLbParams::default());
        s.on_feedback(0, CLEAN, Time::ZERO);
        assert_eq!(take(&mut s, &mut rng, Some(4), 2), [0, 1]);
    }

    //= strack §1, §3.1 (marked ACK); spec §2.5.3; type=test
    #[test]
    fn marked_ack_moves_on_and_is_skipped() {
        let (mut s, mut rng) = lb(StrackLbParams::default());
        s.on_feedback(3, CLEAN, Time::ZERO);
        // A later marked ACK cancels the reuse and flags its entropy.
        s.on_feedback(2, MARKED, Time::ZERO);
        assert_eq!(s.next_path_id(), None);
        assert!(s.flagged(2));
        assert_eq!(take(&mut s, &mut rng, Some(4), 3), [1, 3, 4]);
        assert!(!s.flagged(2), "skipping cleared the flag");
        // A clean ACK on a flagged entropy unflags it.
        s.on_feedback(5, MARKED, Time::ZERO);
        s.on_feedback(5, CLEAN, Time::ZERO);
        assert!(!s.flagged(5));
        assert_eq!(s.next_path_id(), Some(5));
    }

    //= strack Algorithm 3 l.20–27; spec §2.5.4 (one flag per packet); type=test
    #[test]
    fn each_packet_clears_at_most_one_flag() {
        let (mut s, mut rng) = lb(StrackLbParams::default());
        for e in [2, 3, 4] {
            s.on_feedback(e, MARKED, Time::ZERO);
        }
        // rr = 0: 1 is free; then 2 is skipped and cleared, 3 and 4 skipped but kept, 5 taken.
        assert_eq!(take(&mut s, &mut rng, Some(4), 1), [1]);
        assert_eq!(take(&mut s, &mut rng, Some(4), 1), [5]);
        assert!(!s.flagged(2) && s.flagged(3) && s.flagged(4));
        // Next pass: 6, 7, 0, 1, then 2 (clear now); 3 is skipped and cleared, 4 kept.
        assert_eq!(take(&mut s, &mut rng, Some(4), 5), [6, 7, 0, 1, 2]);
        assert_eq!(take(&mut s, &mut rng, Some(4), 1), [5]);
        assert!(!s.flagged(3) && s.flagged(4));
        assert_eq!(take(&mut s, &mut rng, Some(4), 5), [6, 7, 0, 1, 2]);
        assert_eq!(take(&mut s, &mut rng, Some(4), 2), [3, 5]);
        assert!(!s.flagged(4));
    }

    //= spec §2.5.4 (termination); type=test
    #[test]
    fn all_flagged_range_terminates_on_the_cleared_entry() {
        let (mut s, mut rng) = lb(StrackLbParams::default());
        for e in 0..256 {
            s.on_feedback(e, MARKED, Time::ZERO);
        }
        // Range 8, rr = 0: 1 is skipped and cleared, 2..7 and 0 skipped, back to 1.
        assert_eq!(take(&mut s, &mut rng, Some(4), 1), [1]);
        assert_eq!((0..8).filter(|&e| s.flagged(e)).count(), 7);
        // The next packet clears 2, skips 3..7 and 0, and lands on the free 1 again; the one
        // after finds 2 free at once (and clears nothing).
        assert_eq!(take(&mut s, &mut rng, Some(4), 1), [1]);
        assert_eq!((0..8).filter(|&e| s.flagged(e)).count(), 6);
        assert_eq!(take(&mut s, &mut rng, Some(4), 1), [2]);
        assert_eq!((0..8).filter(|&e| s.flagged(e)).count(), 6);
        // Flags beyond the current range stay until the range grows (spec §2.5.4).
        assert!((8..256).all(|e| s.flagged(e)));
        // Any sequence of feedback and windows keeps returning in-range entropies.
        let mut x = 12345u32;
        for _ in 0..5000 {
            x = x.wrapping_mul(1_103_515_245).wrapping_add(12_345);
            let w = Some((x >> 16) % 300);
            let reuse = s.next_path_id();
            let e = s.next_entropy(&ctx(w), &mut rng);
            match reuse {
                Some(r) => assert_eq!(e, r),
                None => assert!((e as u32) < s.window_range(&ctx(w))),
            }
            s.on_feedback(e, Feedback::Ack { ecn: x >> 20 & 1 == 1 }, Time::ZERO);
        }
    }

    //= spec §2.7 E1 (literal-bitmap ablation); type=test
    #[test]
    fn literal_bitmap_skips_clocked_entropies_and_explores_marked_ones() {
        let (mut s, mut rng) = lb(StrackLbParams { bitmap: BitmapPolarity::Literal, ..StrackLbParams::default() });
        // Clean on 2: flag set (= already clocked) and reused next.
        s.on_feedback(2, CLEAN, Time::ZERO);
        assert!(s.flagged(2));
        assert_eq!(take(&mut s, &mut rng, Some(4), 1), [2]);
        // Clean on 3 and 4 make them clocked; a mark on 5 leaves it (and cancels the reuse).
        s.on_feedback(3, CLEAN, Time::ZERO);
        s.on_feedback(4, CLEAN, Time::ZERO);
        s.on_feedback(5, MARKED, Time::ZERO);
        assert!(s.flagged(3) && s.flagged(4) && !s.flagged(5));
        // rr = 2: 3 skipped (cleared), 4 skipped (kept), the marked 5 is taken.
        assert_eq!(take(&mut s, &mut rng, Some(4), 1), [5]);
        assert!(!s.flagged(3) && s.flagged(4));
        // A mark on a clocked entropy clears its bit.
        s.on_feedback(4, MARKED, Time::ZERO);
        assert!(!s.flagged(4));
    }

    //= spec §2.6 (oblivious, range 256); type=test
    #[test]
    fn oblivious_ignores_ecn_and_round_robins_over_all_paths() {
        let (mut s, mut rng) = lb(StrackLbParams { mode: SprayMode::Oblivious, ..StrackLbParams::default() });
        s.on_feedback(1, MARKED, Time::ZERO);
        s.on_feedback(7, CLEAN, Time::ZERO);
        assert!(!s.flagged(1));
        assert_eq!(s.next_path_id(), None);
        let got = take(&mut s, &mut rng, Some(4), 257);
        let want: Vec<Entropy> = (1..=256u32).map(|i| (i % 256) as Entropy).chain([1]).collect();
        assert_eq!(got, want);
    }

    //= spec §2.6 (oblivious, window range); type=test
    #[test]
    fn oblivious_window_range_follows_the_window() {
        let p = StrackLbParams { mode: SprayMode::Oblivious, oblivious_range: ObliviousRange::Window, ..StrackLbParams::default() };
        let (mut s, mut rng) = lb(p);
        s.on_feedback(3, CLEAN, Time::ZERO);
        assert_eq!(take(&mut s, &mut rng, Some(2), 9), [1, 2, 3, 4, 5, 6, 7, 0, 1]);
        let (mut s, mut rng) = lb(p);
        assert_eq!(take(&mut s, &mut rng, Some(6), 13), [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 0, 1]);
    }

    #[test]
    fn nacks_timeouts_and_out_of_range_entropies_are_ignored() {
        let (mut s, mut rng) = lb(StrackLbParams { max_paths: 16, ..StrackLbParams::default() });
        s.on_feedback(3, CLEAN, Time::ZERO);
        s.on_feedback(3, Feedback::Nack, Time::ZERO);
        s.on_feedback(4, Feedback::Timeout, Time::ZERO);
        s.on_feedback(300, MARKED, Time::ZERO);
        assert_eq!(s.next_path_id(), Some(3));
        assert!(!s.flagged(4) && !s.flagged(300));
        assert_eq!(take(&mut s, &mut rng, Some(4), 2), [3, 4]);
    }

    #[test]
    fn bad_parameters_name_their_key() {
        let key = |p: StrackLbParams| match p.validate() {
            Err(Error::Invalid { key, .. }) => key,
            other => panic!("expected Error::Invalid, got {other:?}"),
        };
        let d = StrackLbParams::default;
        assert_eq!(key(StrackLbParams { max_paths: 0, ..d() }), "transport.lb.max_paths");
        assert_eq!(key(StrackLbParams { max_paths: 257, ..d() }), "transport.lb.max_paths");
        assert_eq!(key(StrackLbParams { min_paths: 0, ..d() }), "transport.lb.min_paths");
        assert_eq!(key(StrackLbParams { max_paths: 4, ..d() }), "transport.lb.min_paths");
        assert!(d().validate().is_ok());
        assert!(StrackLbParams { max_paths: 4, min_paths: 4, ..d() }.validate().is_ok());
    }

    #[test]
    fn scenario_table_selects_strack() {
        let cfg: super::super::LbConfig =
            toml::from_str("name = \"strack\"\nbitmap = \"literal\"\nmode = \"oblivious\"\noblivious_range = \"window\"").unwrap();
        match &cfg {
            super::super::LbConfig::Strack(p) => {
                assert_eq!(p.bitmap, BitmapPolarity::Literal);
                assert_eq!(p.mode, SprayMode::Oblivious);
                assert_eq!(p.oblivious_range, ObliviousRange::Window);
            }
            other => panic!("{other:?}"),
        }
        assert!(cfg.validate().is_ok());
        let bad: super::super::LbConfig = toml::from_str("name = \"strack\"\nmax_paths = 300").unwrap();
        assert!(bad.validate().is_err());
        assert!(toml::from_str::<super::super::LbConfig>("name = \"strack\"\npaths = 8").is_err());
    }
}
