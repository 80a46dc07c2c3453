//! `reps`: Recycled Entropy Packet Spraying. Per-packet spraying that remembers which entropies
//! came back clean (ACKed without an ECN mark) and sends the next packets on them, so traffic
//! drifts away from marked, trimmed or dead paths within about one round trip.
//!
//! **Follows:** smartt-reps paper §3.6 (REPS prose; Algorithm 8 is not in the seed text) and its
//! reconstruction in spec `smartt-reps.md` §2.12, with the open choices of §2.15 U12.
//!
//! Behaviour, per connection:
//! 1. *Exploration.* The first `explore_bdp` × BDP of packets walk the entropy space
//!    `0..entropies` in order from a random offset, so they take distinct entropies (as long as
//!    the window holds at most `entropies` packets) and every path gets probed once.
//! 2. *Recycling.* An ACK without a CE mark pushes its entropy into a bounded FIFO; after
//!    exploration each packet pops the oldest cached entropy. A marked ACK, a NACK (trim) or a
//!    timeout pushes nothing, so that entropy is dropped from circulation.
//! 3. *Fallback.* With an empty cache the packet takes a fresh uniformly random entropy.
//!
//! **Parameters** (`[transport.lb] name = "reps"`):
//! - `entropies` = 256: size N_ev of the entropy space a flow uses (spec §2.12 table and U12,
//!   an ASSUMPTION taken from the authors' htsim default; the paper only says "all possible
//!   entropies").
//! - `cache_size` = 256: capacity of the recycled-entropy FIFO, the oldest entry overwritten on
//!   overflow (spec §2.12 `cache_cap` = N_ev, U12; ASSUMPTION, the paper gives no size).
//! - `explore_bdp` = 1.0: length of the exploration phase in path BDPs (paper §3.6: "the first
//!   bdp of packets"; spec §2.12). Counted in packets, ⌈explore_bdp · bdp / mtu⌉, because the
//!   selector is not told packet sizes; only a flow's last packet is short, so the count differs
//!   from the spec's byte counter by at most one packet. 0 disables exploration.
//! - `fallback` = `"random"`: empty-cache choice, `"random"` (uniform in `0..entropies`, spec
//!   U12) or `"explore"` (continue the exploration walk, the spec's alternative reading).
//! - `cache` = `"fifo"`: `"fifo"` (each clean ACK's entropy is reused once, spec §2.12) or
//!   `"last_good"` (the authors' March-2024 htsim variant the spec asks to offer: one slot holding
//!   the latest clean entropy, reused until feedback on it is marked, trimmed or timed out).
//!
//! Retransmissions take entropies exactly like new packets (spec §2.12 ASSUMPTION).
//!
//! **Differences / spec vs paper:** the paper's prose says that after a marked ACK REPS "selects
//! the next entropy", which could mean the next one of the exploration walk; the spec resolves
//! the empty-cache case to a random entropy. The two do not contradict each other (the paper
//! does not say what "next" is), so the spec's default is kept and the walk is offered as
//! `fallback = "explore"`. The spec's exploration counter is in bytes, ours in packets (above).
//! Nothing else in §2.12 disagrees with the paper's §3.6.
//!
//! Memory: the FIFO is one boxed slice of `cache_size` entropies allocated at the first clean
//! ACK of the connection (so connections that never send cost nothing); nothing is allocated
//! per packet or per ACK.

use super::{EntropyCtx, Feedback, PathSelector};
use crate::error::{Error, Result};
use crate::ids::Entropy;
use crate::rng::Rng;
use crate::transport::cc::PathInfo;
use crate::units::{Bytes, Time};
use serde::{Deserialize, Serialize};

/// Registry name.
pub const NAME: &str = "reps";
/// Registry summary.
pub const SUMMARY: &str = "recycled entropy packet spraying: explore the first BDP, then reuse entropies whose ACKs came back unmarked";

/// What to do when the cache is empty after exploration.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Fallback {
    /// A uniformly random entropy in `0..entropies` (spec §2.15 U12).
    Random,
    /// The next entropy of the exploration walk.
    Explore,
}

/// How clean entropies are remembered.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CachePolicy {
    /// A FIFO of up to `cache_size` entropies, each consumed by one packet (spec §2.12).
    Fifo,
    /// One slot with the latest clean entropy, reused until it is reported congested.
    LastGood,
}

/// Parameters of `reps`.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RepsParams {
    /// Size N_ev of the entropy space: entropies are drawn from `0..entropies`.
    pub entropies: u32,
    /// Capacity of the recycled-entropy FIFO.
    pub cache_size: u32,
    /// Length of the exploration phase, in BDPs of the path.
    pub explore_bdp: f64,
    /// Empty-cache choice.
    pub fallback: Fallback,
    /// FIFO (paper) or single last-good slot (early reference implementation).
    pub cache: CachePolicy,
}

impl Default for RepsParams {
    fn default() -> Self {
        //= smartt-reps.md §2.12 table, §2.15 U12
        //# N_ev = 256, cache capped at N_ev, random fallback; explore for one BDP (paper §3.6).
        RepsParams { entropies: 256, cache_size: 256, explore_bdp: 1.0, fallback: Fallback::Random, cache: CachePolicy::Fifo }
    }
}

impl RepsParams {
    pub(super) fn validate(&self) -> Result<()> {
        if !(1..=65_536).contains(&self.entropies) {
            return Err(Error::invalid(
                "transport.lb.entropies",
                format!("{}: must be between 1 and 65536 (16-bit entropies)", self.entropies),
            ));
        }
        if !(1..=65_536).contains(&self.cache_size) {
            return Err(Error::invalid("transport.lb.cache_size", format!("{}: must be between 1 and 65536 entries", self.cache_size)));
        }
        if !(self.explore_bdp.is_finite() && self.explore_bdp >= 0.0) {
            return Err(Error::invalid(
                "transport.lb.explore_bdp",
                format!("{}: must be a non-negative multiple of the BDP", self.explore_bdp),
            ));
        }
        Ok(())
    }
}

/// A fixed-capacity FIFO of entropies that overwrites its oldest entry when full (also the
/// recycle queue of [`super::mixed`]).
#[derive(Clone, Debug)]
pub(super) struct Ring {
    /// Empty until the first push, then exactly `cap` slots.
    buf: Box<[Entropy]>,
    cap: u32,
    head: u32,
    len: u32,
}

impl Ring {
    pub(super) fn new(cap: u32) -> Self {
        Ring { buf: Box::default(), cap: cap.max(1), head: 0, len: 0 }
    }

    pub(super) fn push(&mut self, e: Entropy) {
        if self.buf.is_empty() {
            // One allocation per connection, at its first clean ACK.
            self.buf = vec![0; self.cap as usize].into_boxed_slice();
        }
        let tail = (self.head + self.len) % self.cap;
        self.buf[tail as usize] = e;
        if self.len == self.cap {
            // Full: the oldest entry gives way (spec §2.12 "drop oldest on overflow"); it is
            // also the stalest evidence of a clean path.
            self.head = (self.head + 1) % self.cap;
        } else {
            self.len += 1;
        }
    }

    pub(super) fn pop(&mut self) -> Option<Entropy> {
        if self.len == 0 {
            return None;
        }
        let e = self.buf[self.head as usize];
        self.head = (self.head + 1) % self.cap;
        self.len -= 1;
        Some(e)
    }
}

/// The selector of one connection.
#[derive(Clone, Debug)]
pub struct Reps {
    /// N_ev.
    entropies: u32,
    /// Packets of the exploration phase still to send.
    explore_left: u64,
    /// Next entropy of the exploration walk (already reduced mod N_ev).
    explore_next: u32,
    fallback: Fallback,
    policy: CachePolicy,
    /// Recycled entropies (FIFO policy).
    cache: Ring,
    /// Latest clean entropy (last-good policy).
    last_good: Option<Entropy>,
}

impl Reps {
    /// A selector for a connection on `path`; the exploration offset is drawn from `rng`.
    pub fn new(p: &RepsParams, path: &PathInfo, rng: &mut Rng) -> Self {
        // Invalid values are refused by validate(); clamp anyway so a selector built from
        // unchecked parameters cannot divide by zero.
        let entropies = p.entropies.clamp(1, 65_536);
        let explore_bytes = (p.explore_bdp.max(0.0) * path.bdp_bytes.0 as f64).ceil() as u64;
        //= spec smartt-reps.md §2.12 (explore_base)
        //# A random starting point so that flows sharing a path walk the entropies in different orders.
        let explore_next = rng.below(entropies as u64) as u32;
        Reps {
            entropies,
            explore_left: explore_bytes.div_ceil(path.mtu_bytes.max(Bytes(1)).0),
            explore_next,
            fallback: p.fallback,
            policy: p.cache,
            cache: Ring::new(p.cache_size.clamp(1, 65_536)),
            last_good: None,
        }
    }

    fn walk(&mut self) -> Entropy {
        let e = self.explore_next;
        self.explore_next = if e + 1 == self.entropies { 0 } else { e + 1 };
        e as Entropy
    }

    /// Entropies currently cached (FIFO length, or 0/1 for the last-good slot).
    pub fn cached(&self) -> u32 {
        match self.policy {
            CachePolicy::Fifo => self.cache.len,
            CachePolicy::LastGood => self.last_good.is_some() as u32,
        }
    }
}

impl PathSelector for Reps {
    fn next_entropy(&mut self, _ctx: &EntropyCtx, rng: &mut Rng) -> Entropy {
        //= paper §3.6; spec §2.12 next_entropy
        //# The first BDP of packets walks the whole entropy space, whatever feedback has arrived.
        if self.explore_left > 0 {
            self.explore_left -= 1;
            return self.walk();
        }
        //# Afterwards reuse an entropy that recently came back clean.
        let recycled = match self.policy {
            CachePolicy::Fifo => self.cache.pop(),
            CachePolicy::LastGood => self.last_good,
        };
        if let Some(e) = recycled {
            return e;
        }
        //= spec §2.15 U12
        //# Nothing known to be good: move on to another entropy.
        match self.fallback {
            Fallback::Random => rng.below(self.entropies as u64) as Entropy,
            Fallback::Explore => self.walk(),
        }
    }

    fn on_feedback(&mut self, entropy: Entropy, fb: Feedback, _now: Time) {
        match (fb, self.policy) {
            //= paper §3.6; spec §2.12 on_ack
            //# An unmarked ACK means the packet's path was uncongested: cache its entropy.
            (Feedback::Ack { ecn: false }, CachePolicy::Fifo) => self.cache.push(entropy),
            (Feedback::Ack { ecn: false }, CachePolicy::LastGood) => self.last_good = Some(entropy),
            //= spec §2.12 on_nack / on_timeout (ASSUMPTION: trimmed or lost = congested)
            //# Marked, trimmed or lost: not cached. A FIFO simply never sees it again; the
            //# single slot is emptied if it held that entropy.
            (_, CachePolicy::Fifo) => {}
            (_, CachePolicy::LastGood) => {
                if self.last_good == Some(entropy) {
                    self.last_good = None;
                }
            }
        }
    }
}

impl crate::scheme::Scheme<super::LbBuild> for Reps {
    const NAME: &'static str = NAME;
    const SUMMARY: &'static str = SUMMARY;
    const LIMITS: &'static [crate::scheme::Limit] = &[crate::scheme::Limit::new("entropies", 1.0, 65536.0), crate::scheme::Limit::new("cache_size", 1.0, 65536.0), crate::scheme::Limit::new("explore_bdp", 0.0, 1000.0)];
    type Params = RepsParams;
    fn check(p: &RepsParams, _key: &str) -> crate::error::Result<()> {
        p.validate()
    }
    fn build(p: &RepsParams, ctx: &mut super::LbBuild) -> Self {
        Reps::new(p, &ctx.path, &mut ctx.rng)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::units::{BitsPerSec, US};

    /// A path whose BDP is exactly `bdp_pkts` full packets of 4096 B.
    fn path(bdp_pkts: u64) -> PathInfo {
        PathInfo { mtu_bytes: Bytes(4096), host_rate: BitsPerSec::from_gbps(400.0), base_rtt: 10 * US, bdp_bytes: Bytes(bdp_pkts * 4096), hops: 6, net_base_rtt: 10 * US, src_conns: 1, queue_bytes: Bytes::ZERO, flows_per_host: 1 }
    }

    const CTX: EntropyCtx = EntropyCtx { now: Time::ZERO, seq: 0, retransmit: false, window_pkts: None, in_flight: 0 };
    const CLEAN: Feedback = Feedback::Ack { ecn: false };
    const MARKED: Feedback = Feedback::Ack { ecn: true };

    fn reps(p: RepsParams, bdp_pkts: u64) -> (Reps, Rng) {
        let mut rng = Rng::stream(3, "test", 0);
        let r = Reps::new(&p, &path(bdp_pkts), &mut rng);
        (r, rng)
    }

    fn next(r: &mut Reps, rng: &mut Rng) -> Entropy {
        r.next_entropy(&CTX, rng)
    }

    //= type=test
    //# First BDP: distinct entropies, a consecutive walk mod N_ev, regardless of feedback.
    #[test]
    fn explores_distinct_entropies_during_the_first_window() {
        let (mut r, mut rng) = reps(RepsParams::default(), 100);
        let mut seen = std::collections::HashSet::new();
        let first = next(&mut r, &mut rng);
        seen.insert(first);
        // Clean feedback during exploration must not cut it short.
        r.on_feedback(first, CLEAN, Time::ZERO);
        for i in 1..100u32 {
            let e = next(&mut r, &mut rng);
            assert_eq!(e as u32, (first as u32 + i) % 256, "exploration walks the space in order");
            assert!(seen.insert(e), "entropy {e} repeated during exploration");
            assert!((e as u32) < 256);
        }
        // Exploration is over after 100 packets: the cached entropy comes back now.
        assert_eq!(next(&mut r, &mut rng), first);
    }

    #[test]
    fn exploration_length_follows_explore_bdp() {
        // 2.5 BDPs of a 10-packet BDP = 25 packets of walk, then the (only) cached entropy.
        let (mut r, mut rng) = reps(RepsParams { explore_bdp: 2.5, ..RepsParams::default() }, 10);
        let first = next(&mut r, &mut rng);
        r.on_feedback(4242, CLEAN, Time::ZERO);
        for i in 1..25u32 {
            assert_eq!(next(&mut r, &mut rng) as u32, (first as u32 + i) % 256);
        }
        assert_eq!(next(&mut r, &mut rng), 4242);
    }

    //= type=test
    //# After exploration only entropies whose ACK came back unmarked are reused, each once, in order;
    //# marked, NACKed and timed-out ones never are.
    #[test]
    fn recycles_only_unmarked_entropies() {
        let (mut r, mut rng) = reps(RepsParams { explore_bdp: 0.0, ..RepsParams::default() }, 100);
        r.on_feedback(10, CLEAN, Time::ZERO);
        r.on_feedback(11, MARKED, Time::ZERO);
        r.on_feedback(12, Feedback::Nack, Time::ZERO);
        r.on_feedback(13, CLEAN, Time::ZERO);
        r.on_feedback(14, Feedback::Timeout, Time::ZERO);
        r.on_feedback(10, CLEAN, Time::ZERO);
        assert_eq!(r.cached(), 3);
        assert_eq!([next(&mut r, &mut rng), next(&mut r, &mut rng), next(&mut r, &mut rng)], [10, 13, 10]);
        assert_eq!(r.cached(), 0);
    }

    #[test]
    fn never_recycles_a_congested_entropy() {
        // Feed many rounds in which entropies 0..8 come back clean and 8..16 marked, trimmed or
        // timed out; a bad entropy may only ever appear as a random fallback, and with the cache
        // kept full the fallback is never needed.
        let (mut r, mut rng) = reps(RepsParams { explore_bdp: 0.0, entropies: 16, ..RepsParams::default() }, 100);
        for e in 0..8 {
            r.on_feedback(e, CLEAN, Time::ZERO);
        }
        for round in 0..1000u32 {
            let e = next(&mut r, &mut rng);
            assert!(e < 8, "round {round}: congested entropy {e} was recycled");
            r.on_feedback(e, CLEAN, Time::ZERO);
            let bad = 8 + (round % 8) as Entropy;
            let fb = [MARKED, Feedback::Nack, Feedback::Timeout][round as usize % 3];
            r.on_feedback(bad, fb, Time::ZERO);
        }
    }

    //= type=test
    //# Empty cache after exploration: a random entropy in 0..N_ev (not a walk, not a constant).
    #[test]
    fn falls_back_to_random_when_the_cache_is_empty() {
        let (mut r, mut rng) = reps(RepsParams { explore_bdp: 0.0, entropies: 64, ..RepsParams::default() }, 100);
        let draws: Vec<Entropy> = (0..200).map(|_| next(&mut r, &mut rng)).collect();
        assert!(draws.iter().all(|&e| e < 64));
        let distinct: std::collections::HashSet<_> = draws.iter().collect();
        // 200 uniform draws from 64 values hit ~61 of them; a constant or a short cycle would not.
        assert!(distinct.len() > 40, "{} distinct of 200 draws", distinct.len());
        let walk_like = draws.windows(2).filter(|w| (w[0] + 1) % 64 == w[1]).count();
        assert!(walk_like < 20, "{walk_like} consecutive steps: looks like a walk, not random");
        // A clean ACK is then used before any further random draw.
        r.on_feedback(7, CLEAN, Time::ZERO);
        assert_eq!(next(&mut r, &mut rng), 7);
    }

    #[test]
    fn explore_fallback_continues_the_walk() {
        let (mut r, mut rng) =
            reps(RepsParams { explore_bdp: 0.0, entropies: 32, fallback: Fallback::Explore, ..RepsParams::default() }, 100);
        let a = next(&mut r, &mut rng);
        assert_eq!(next(&mut r, &mut rng), (a + 1) % 32);
    }

    //= type=test
    //# The cache never holds more than cache_size entries; overflow forgets the oldest.
    #[test]
    fn cache_bound_is_respected() {
        let (mut r, mut rng) = reps(RepsParams { explore_bdp: 0.0, cache_size: 4, ..RepsParams::default() }, 100);
        for e in 100..110 {
            r.on_feedback(e, CLEAN, Time::ZERO);
            assert!(r.cached() <= 4);
        }
        assert_eq!(r.cached(), 4);
        assert_eq!(r.cache.buf.len(), 4, "storage is exactly cache_size slots");
        let got: Vec<Entropy> = (0..4).map(|_| next(&mut r, &mut rng)).collect();
        assert_eq!(got, [106, 107, 108, 109], "the four newest survive, oldest first");
        assert_eq!(r.cached(), 0);
    }

    #[test]
    fn last_good_reuses_one_entropy_until_it_is_marked() {
        let p = RepsParams { explore_bdp: 0.0, cache: CachePolicy::LastGood, ..RepsParams::default() };
        let (mut r, mut rng) = reps(p, 100);
        r.on_feedback(5, CLEAN, Time::ZERO);
        assert_eq!([next(&mut r, &mut rng), next(&mut r, &mut rng)], [5, 5]);
        // A mark on another entropy leaves the slot alone; a mark on it empties it.
        r.on_feedback(6, MARKED, Time::ZERO);
        assert_eq!(next(&mut r, &mut rng), 5);
        r.on_feedback(5, Feedback::Nack, Time::ZERO);
        assert_eq!(r.cached(), 0);
    }

    #[test]
    fn bad_parameters_name_their_key() {
        let key = |p: RepsParams| match p.validate() {
            Err(Error::Invalid { key, .. }) => key,
            other => panic!("expected Error::Invalid, got {other:?}"),
        };
        assert_eq!(key(RepsParams { cache_size: 0, ..RepsParams::default() }), "transport.lb.cache_size");
        assert_eq!(key(RepsParams { entropies: 0, ..RepsParams::default() }), "transport.lb.entropies");
        assert_eq!(key(RepsParams { entropies: 70_000, ..RepsParams::default() }), "transport.lb.entropies");
        assert_eq!(key(RepsParams { explore_bdp: -1.0, ..RepsParams::default() }), "transport.lb.explore_bdp");
        assert_eq!(key(RepsParams { explore_bdp: f64::NAN, ..RepsParams::default() }), "transport.lb.explore_bdp");
        assert!(RepsParams::default().validate().is_ok());
    }
}
