//! `pacer`: the Load-Balancing-for-AI study's fixed-rate per-flow pacer, its "congestion
//! control" (lb-ai-training spec §2.0.2 and CC-FIXED in §2.2; paper §4 "Traffic workload" and
//! §6, Fig. 8).
//!
//! - **Rate.** Each connection is paced at `r = c · B_link / F`: `B_link` is the sending host's
//!   link rate, `F` the number of concurrent flows that host sends and `c` the *rate
//!   coefficient* (`rate_coefficient`, in (0, 1], default 1: the host's flows together send at
//!   exactly its link rate). Paper §6: "Rate Coefficient = pacing rate / fair share rate".
//! - **F.** By default the number of the workload's connections whose sender is this
//!   connection's host ([`PathInfo::src_conns`]): 127 on the 128-host all-to-all, `m` for `m`
//!   concurrent permutations (spec §5.2). A workload whose flows do not all run at once (e.g.
//!   `all_to_all` with `max_concurrent`) sets the concurrency with `flows_per_host`.
//! - **Pacing.** The gap after a packet is its wire bytes at `r` (spec §2.0.2 ASSUMPTION: pace
//!   on the wire bytes of the packet sent), measured on the connection's own schedule
//!   ([`PacingClock::Schedule`]): a packet the NIC takes late, behind other flows' packets or
//!   ACKs, does not push the later ones back, as if every tick dropped its packet into the
//!   unbounded FIFO NIC of spec §2.0.2. A host's flows therefore offer exactly `c · B_link`
//!   together, and with `c = 0.5` a host's offered load is half its link: unlike `line_rate`,
//!   which paces every connection at a fraction of the *host* rate, so that on an all-to-all the
//!   NIC's round-robin over many connections keeps the link full whatever the fraction.
//! - **Start.** A message posted on an idle connection starts after `U(0, P/r)` (`P` = full
//!   packet wire bytes), drawn from the connection's random stream (spec §2.0.1; paper §4: "we
//!   randomize the start time of flows by up to the calculated time between packet sends
//!   (inverse pacing rate)"); `start_jitter = false` starts every flow at once.
//! - **Gap jitter** (`gap_jitter`, default 0): each gap is multiplied by `1 + U(−j, j)`. The
//!   spec's pacing is deterministic after the random start (§2.0.2), so every flow of a run has
//!   the same period and queue patterns repeat exactly: a flow whose packets meet a recurring
//!   burst loses every packet for as long as the burst recurs. The option measures how much of
//!   a result hinges on that exactness (spec §8); it is not the paper's model.
//! - **No window, no reaction.** Loss, ECN, delay, NACKs and timeouts never change the rate:
//!   loss recovery only chooses which packet goes next (paper §6: "these events do not change
//!   the pacing rate but only determine which packet must be (re)transmitted next").
//!
//! Spec and paper agree on everything this module implements: the paper gives the rate as the
//! fair share times the coefficient and the start jitter as one inter-packet time; the wire-byte
//! pacing and the FIFO NIC are the spec's stated assumptions, on which the paper is silent.

use super::{CongestionControl, PacingClock, PathInfo};
use crate::error::{Error, Result};
use crate::scheme::Limit;
use crate::units::{BitsPerSec, Time};
use serde::{Deserialize, Serialize};

/// Registry name.
pub const NAME: &str = "pacer";
/// Registry summary.
pub const SUMMARY: &str =
    "no window, each flow paced at c x host link / F (its flows per host) on a fixed schedule, random start within one gap (LB study's CC-FIXED)";

/// Parameters of `pacer`.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct PacerParams {
    /// `c`: the pacing rate as a fraction of the flow's fair share of its host link, in (0, 1].
    pub rate_coefficient: f64,
    /// `F`: concurrent flows per sending host; unset = the workload's connections from the
    /// flow's source host.
    pub flows_per_host: Option<u32>,
    /// Start each flow after a random delay of at most one pacing gap.
    pub start_jitter: bool,
    /// Relative jitter of every pacing gap, in [0, 1): the gap is scaled by `1 + U(−j, j)`.
    pub gap_jitter: f64,
}

impl Default for PacerParams {
    fn default() -> Self {
        PacerParams { rate_coefficient: 1.0, flows_per_host: None, start_jitter: true, gap_jitter: 0.0 }
    }
}

/// The controller: a constant rate, a fixed schedule and the start jitter bound.
#[derive(Clone, Debug)]
pub struct Pacer {
    rate: BitsPerSec,
    jitter: Time,
    gap_jitter: f64,
}

impl Pacer {
    /// A pacer for a connection on `path`.
    pub fn new(p: &PacerParams, path: &PathInfo) -> Self {
        let flows = p.flows_per_host.unwrap_or(path.src_conns).max(1);
        let bps = p.rate_coefficient * path.host_rate.0 as f64 / flows as f64;
        let rate = BitsPerSec(bps.round().max(1.0) as u64);
        let jitter = if p.start_jitter { rate.tx_time(path.mtu_bytes) } else { Time::ZERO };
        Pacer { rate, jitter, gap_jitter: p.gap_jitter }
    }
}

impl CongestionControl for Pacer {
    fn window(&self) -> Option<u64> {
        None
    }
    fn pacing_rate(&self) -> Option<BitsPerSec> {
        Some(self.rate)
    }
    fn pacing_clock(&self) -> PacingClock {
        PacingClock::Schedule
    }
    fn start_jitter(&self) -> Time {
        self.jitter
    }
    fn gap_jitter(&self) -> f64 {
        self.gap_jitter
    }
}

impl crate::scheme::Scheme<PathInfo> for Pacer {
    const NAME: &'static str = NAME;
    const SUMMARY: &'static str = SUMMARY;
    type Params = PacerParams;
    const LIMITS: &'static [Limit] = &[Limit::new("flows_per_host", 1.0, 1e9), Limit::new("gap_jitter", 0.0, 0.999), Limit::new("rate_coefficient", 1e-4, 1.0)];
    fn check(p: &PacerParams, key: &str) -> Result<()> {
        let c = p.rate_coefficient;
        if !(c > 0.0 && c <= 1.0) {
            return Err(Error::invalid(
                format!("{key}.rate_coefficient"),
                format!("{c}: must be in (0, 1] (the pacing rate as a fraction of the flow's fair share of its host link)"),
            ));
        }
        Ok(())
    }
    fn build(p: &PacerParams, path: &mut PathInfo) -> Self {
        Pacer::new(p, path)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::units::Bytes;
    use crate::scheme::Scheme;
    use crate::transport::cc::testing::{path, ACK, MTU};
    use crate::transport::cc::{NackEvent, LossCause, TimeoutEvent};

    const GBPS100: u64 = 100_000_000_000;

    fn on(src_conns: u32) -> PathInfo {
        PathInfo { src_conns, ..path(GBPS100, 125_000) }
    }

    #[test]
    fn rate_is_the_coefficient_times_the_fair_share() {
        let p = PacerParams::default();
        // 127 flows per host at c = 1: 100 Gb/s / 127.
        assert_eq!(Pacer::new(&p, &on(127)).pacing_rate(), Some(BitsPerSec(787_401_575)));
        let half = PacerParams { rate_coefficient: 0.5, ..p.clone() };
        assert_eq!(Pacer::new(&half, &on(4)).pacing_rate(), Some(BitsPerSec(12_500_000_000)));
        // flows_per_host overrides the workload's count.
        let eight = PacerParams { flows_per_host: Some(8), ..p.clone() };
        assert_eq!(Pacer::new(&eight, &on(127)).pacing_rate(), Some(BitsPerSec(12_500_000_000)));
        assert_eq!(Pacer::new(&p, &on(1)).pacing_rate(), Some(BitsPerSec(GBPS100)));
    }

    #[test]
    fn start_jitter_is_one_packet_gap_or_none() {
        // 4096 B at 25 Gb/s: 1.31072 us.
        let c = Pacer::new(&PacerParams::default(), &on(4));
        assert_eq!(c.start_jitter(), Time(1_310_720));
        assert_eq!(c.start_jitter(), BitsPerSec(25_000_000_000).tx_time(Bytes(MTU)));
        let off = Pacer::new(&PacerParams { start_jitter: false, ..Default::default() }, &on(4));
        assert_eq!(off.start_jitter(), Time::ZERO);
    }

    #[test]
    fn no_window_fixed_schedule_and_deaf_to_congestion() {
        let mut c = Pacer::new(&PacerParams::default(), &on(2));
        assert_eq!(c.window(), None);
        assert_eq!(c.pacing_clock(), PacingClock::Schedule);
        let before = c.pacing_rate();
        c.on_ack(&crate::transport::cc::AckEvent { ecn: true, marked_pkts: 1, rtt: Time(1_000_000_000), ..ACK });
        c.on_nack(&NackEvent { now: Time(5), bytes: Bytes(MTU), cause: LossCause::Trimmed, entropy: 0, in_flight: 0, sent_at: Time::ZERO, last_hop_paced: false });
        c.on_timeout(&TimeoutEvent { now: Time(9), lost_bytes: Bytes(10 * MTU), in_flight: 0, consecutive: 3, latest_sent_at: Time::ZERO });
        c.on_cnp(Time(10));
        c.advance_to(Time(1_000_000_000));
        assert_eq!(c.pacing_rate(), before);
        assert_eq!(before, Some(BitsPerSec(GBPS100 / 2)));
    }

    #[test]
    fn coefficient_outside_zero_one_is_refused_naming_the_key() {
        for bad in [0.0, -0.5, 1.01, f64::NAN, f64::INFINITY] {
            let p = PacerParams { rate_coefficient: bad, ..Default::default() };
            let e = Pacer::check(&p, "transport.cc").unwrap_err().to_string();
            assert!(e.contains("transport.cc.rate_coefficient") && e.contains("(0, 1]"), "{bad}: {e}");
        }
        for good in [1e-3, 0.5, 1.0] {
            assert!(Pacer::check(&PacerParams { rate_coefficient: good, ..Default::default() }, "transport.cc").is_ok());
        }
    }
}
