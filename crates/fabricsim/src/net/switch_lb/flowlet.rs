//! `flowlet`: in-switch flowlet adaptive routing (LB-SAR-FLOWLET). Each switch remembers
//! `(egress, last_seen)` per flow; a new (or expired) flow goes to a shortest-queue port, and
//! when a flow's packets are more than the flowlet gap δ apart, a fair coin may move it to a
//! strictly shorter queue.
//!
//! **Follows:** lb-ai-training §2.1, LB-SAR-FLOWLET (paper §4 "Per-Flowlet LB", §5 Fig. 3
//! and 6; in-switch flowlet AR: paced all-to-all exceeds the gap on nearly every packet, so it acts like
//! per-packet AR; closely spaced permutation flows never do, so it acts like ECMP). The
//! paper's numbers were lost in our copy: δ = 10 µs (htsim's `ar_sticky_delta`), entries
//! expire after 10·δ of inactivity, 50 % coin (htsim) — all assumptions.
//! **Parameters:** `gap_us` (δ, 10), `lifetime_us` (100; at least δ), `deterministic`
//! (false: no coin, always move to a strictly shorter queue once the gap is exceeded),
//! `compare`, `level_refresh_us` (see [`super::levels`]).
//! **Re-routes:** a flow moved to another port after a gap.
//! **State:** [`super::flow_table`], keyed by (connection, entropy).

use super::flow_table::{flow_key, FlowTable};
use crate::units::us_to_ps;
use super::levels::{lowest_of, Compare, Levels, DEFAULT_REFRESH_US, REFRESH_LIMIT};
use super::{Candidates, SwitchCtx, SwitchLb};
use crate::error::{Error, Result};
use crate::net::packet::Packet;
use crate::scheme::Limit;
use crate::units::Time;
use serde::{Deserialize, Serialize};

/// Registry name.
pub const NAME: &str = "flowlet";
/// Registry summary.
pub const SUMMARY: &str = "LB-SAR-FLOWLET: per-flow port; after a gap > δ a coin may move the flow to a shorter queue";

/// Parameters of `flowlet`.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct FlowletParams {
    /// Flowlet gap δ (µs).
    pub gap_us: f64,
    /// Idle time (µs) after which a flow's entry expires and the flow counts as new.
    pub lifetime_us: f64,
    /// Move on every gap (no 50 % coin).
    pub deterministic: bool,
    /// Queue comparison: quantised `level` or exact `bytes`.
    pub compare: Compare,
    /// Refresh period of a port's cached level (µs).
    pub level_refresh_us: f64,
}

impl Default for FlowletParams {
    fn default() -> Self {
        //= lb-ai-training §2.1 (LB-SAR-FLOWLET); type=assumption
        //# δ = 10 µs (htsim's ar_sticky_delta); entries expire after 10·δ = 100 µs.
        FlowletParams { gap_us: 10.0, lifetime_us: 100.0, deterministic: false, compare: Compare::Level, level_refresh_us: DEFAULT_REFRESH_US }
    }
}

/// The selector: the flow table and the queue comparison.
#[derive(Clone, Debug)]
pub struct Flowlet {
    gap: Time,
    deterministic: bool,
    table: FlowTable,
    levels: Levels,
}

impl Flowlet {
    /// A selector.
    pub fn new(p: &FlowletParams) -> Self {
        Flowlet { gap: us_to_ps(p.gap_us), deterministic: p.deterministic, table: FlowTable::new(us_to_ps(p.lifetime_us)), levels: Levels::new(p.compare, p.level_refresh_us) }
    }
}

impl SwitchLb for Flowlet {
    fn counts_reroutes(&self) -> bool {
        true
    }

    fn choose(&mut self, ctx: &mut SwitchCtx<'_>, pkt: &mut Packet, cands: &Candidates<'_>) -> usize {
        let now = ctx.now;
        let key = flow_key(pkt);
        let entry = self.table.get(key, now).filter(|e| (e.choice as usize) < cands.len());
        let m = self.levels.metrics(now, cands);
        let out = match entry {
            None => lowest_of(m, ctx.rng),
            Some(e) => {
                let cur = e.choice as usize;
                if now - e.last_seen > self.gap && (self.deterministic || ctx.rng.below(2) == 0) {
                    let cand = lowest_of(m, ctx.rng);
                    if m[cand] < m[cur] {
                        ctx.rerouted = true;
                        cand
                    } else {
                        cur
                    }
                } else {
                    cur
                }
            }
        };
        self.table.set(key, out as u32, now);
        out
    }
}

impl crate::scheme::Scheme<super::SwitchBuild> for Flowlet {
    const NAME: &'static str = NAME;
    const SUMMARY: &'static str = SUMMARY;
    type Params = FlowletParams;
    const LIMITS: &'static [Limit] = &[Limit::new("gap_us", 0.001, 1e6), Limit::new("lifetime_us", 0.001, 1e9), REFRESH_LIMIT];
    fn check(p: &FlowletParams, key: &str) -> Result<()> {
        if p.lifetime_us < p.gap_us {
            return Err(Error::invalid(format!("{key}.lifetime_us"), format!("{} µs is shorter than the flowlet gap `gap_us` ({} µs)", p.lifetime_us, p.gap_us)));
        }
        Ok(())
    }
    fn build(p: &FlowletParams, _ctx: &mut super::SwitchBuild) -> Self {
        Flowlet::new(p)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ids::{ConnId, NodeId};
    use crate::net::switch_lb::tests::idle_ports;
    use crate::rng::Rng;
    use crate::units::{Bytes, US};

    #[test]
    fn a_flowlet_keeps_its_port_until_a_gap_and_expires_after_its_lifetime() {
        let (ports, mut state) = idle_ports(2);
        let buf = [100_000u64];
        let mut rng = Rng::stream(1, "switch_lb", 0);
        let mut lb = Flowlet::new(&FlowletParams { deterministic: true, level_refresh_us: 0.0, ..Default::default() });
        let p = Packet { conn: ConnId(5), ..Default::default() };
        // Port 1 is fuller: the new flow takes port 0.
        state[1].data_bytes = Bytes(50_000);
        let mut go = |now: Time, state: &Vec<crate::net::port::PortState>| {
            let c = Candidates::new(&ports, state, &buf);
            let mut ctx = SwitchCtx::new(now, &mut rng, NodeId(0));
            let out = lb.choose(&mut ctx, &mut p.clone(), &c);
            (out, ctx.rerouted)
        };
        assert_eq!(go(Time::ZERO, &state), (0, false));
        // Port 0 fills up, port 1 drains; packets every 10 µs (not more than δ) stay on 0.
        state[0].data_bytes = Bytes(50_000);
        state[1].data_bytes = Bytes::ZERO;
        for t in 1..=5 {
            assert_eq!(go(t * 10 * US, &state), (0, false));
        }
        // A gap of more than δ: moved to the strictly shorter port 1.
        assert_eq!(go(60 * US + Time(1), &state), (1, true));
        // Equal levels after a gap: no move (strictly lower only).
        state[0].data_bytes = Bytes::ZERO;
        assert_eq!(go(80 * US, &state), (1, false));
        // Idle beyond the lifetime (100 µs): a new flow, to a lowest port, not a re-route.
        state[1].data_bytes = Bytes(50_000);
        assert_eq!(go(181 * US, &state), (0, false));
    }

    #[test]
    fn the_coin_moves_about_half_the_gapped_flows() {
        let (ports, mut state) = idle_ports(2);
        let mut rng = Rng::stream(1, "switch_lb", 0);
        let mut lb = Flowlet::new(&FlowletParams { level_refresh_us: 0.0, ..Default::default() });
        let mut moved = 0;
        for conn in 0..2000u32 {
            let p = Packet { conn: ConnId(conn), ..Default::default() };
            state[0].data_bytes = Bytes::ZERO;
            state[1].data_bytes = Bytes(50_000);
            let c = Candidates::new(&ports, &state, &[100_000]);
            assert_eq!(lb.choose(&mut SwitchCtx::new(Time::ZERO, &mut rng, NodeId(0)), &mut p.clone(), &c), 0);
            state[0].data_bytes = Bytes(50_000);
            state[1].data_bytes = Bytes::ZERO;
            let c = Candidates::new(&ports, &state, &[100_000]);
            moved += lb.choose(&mut SwitchCtx::new(20 * US, &mut rng, NodeId(0)), &mut p.clone(), &c);
        }
        // 1 000 ± 22.
        assert!((900..1100).contains(&moved), "{moved}");
    }
}
