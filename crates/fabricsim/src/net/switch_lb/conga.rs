//! `conga`: CONGA, congestion-aware flowlet switching for a 2-tier leaf-spine: each source leaf
//! sends a new flowlet on the uplink whose path to the destination leaf is least congested,
//! judged from its own uplink's load and the path congestion that the destination leaf
//! measured and fed back.
//!
//! **Follows:** seqbalance §2.5.3 (CONGA, Alizadeh et al., SIGCOMM '14, as the SeqBalance paper
//! evaluates it: 2-tier only, flowlet gap 100 µs; §IV "Schemes compared", Fig. 12–13), the
//! fields of §3.4 and the parameters of §2.6 / §8 A24. **Parameters:** `gap_us` (100, paper),
//! `dre_period_us` (50), `dre_alpha` (0.2), `quant_bits` (3), `age_us` (500) (lineage).
//!
//! **Mechanism.**
//! - *DRE* per egress link (global port id): `X += bytes` for every packet sent on it, `X ←
//!   X·(1−α)` at every multiple of `dre_period`; the decay is applied lazily on access as
//!   `(1−α)^periods` by repeated squaring (the same f64 operations every run). Metric: `X·8 /
//!   (C·τ)` with `τ = dre_period/α`, i.e. the link's recent utilisation, times `2^Q`, rounded
//!   down and saturating at `2^Q − 1`.
//! - *Source leaf* (packets of its own hosts to another leaf): flowlet table per flow
//!   ([`flow_table`](super::flow_table), gap `gap_us`); a new flowlet takes `argmin_u
//!   max(local(u), ToLeaf[d][u])`; every data packet gets LBTag = its uplink index and CE =
//!   local metric of that uplink; every packet to leaf d carries feedback: one live entry of
//!   `FromLeaf[d]` drawn uniformly.
//! - *Spine*: ECMP hash where it has a choice (never on a leaf-spine's down path), and
//!   `CE = max(CE, metric(egress))` on every tagged data packet.
//! - *Destination leaf*: `FromLeaf[s][LBTag] = CE`, `ToLeaf[s][FB_LBTag] = FB_Metric`, then
//!   strips the words, so hosts see the packet as without CONGA.
//!
//! **Header fields** ([`CongaWord`]): zero on-wire cost (§3.4 allows it) and no new bytes in
//! [`Packet`]: data packets carry LBTag + CE in `path_tag` and feedback in `ecn_count` (an
//! ACK-only field); every other host-made kind (ACK, NACK, CNP, ...) carries feedback in
//! `path_tag` and no LBTag + CE of its own. So feedback rides on reverse data *and* on ACKs,
//! which matters for one-way RDMA traffic (the lineage simulator uses reverse data only).
//!
//! **Differences / choices:** ties among the least congested uplinks keep the flow's current
//! uplink when it is among them (the original design), otherwise are broken uniformly at
//! random (`ties = "random"`: always at random, as ConWeave's ns-3 `GetBestPath`, which
//! `from-ns3` writes for its `LB_MODE 3`); ACKs, NACKs and CNPs are routed as flowlets of
//! their own, carry feedback and count in the DRE (`control = "bypass"`: they bypass CONGA, hashed by
//! ECMP, without feedback and outside the DRE, as ConWeave's `CongaRouting::RouteInput` lets
//! only UDP data through); feedback is drawn among the `FromLeaf[d]` entries updated within `age_us` (none:
//! no feedback); entries older than `age_us` count as 0 (never-seen ones too); the DRE
//! counts a packet when the switch forwards it to the port (before the queue admits it); all
//! uplinks are examined at each decision (no random window of 4). At most 256 uplinks and
//! `quant_bits` ≤ 7 (the word's widths). Selecting `conga` on a fat tree is an error
//! (`SwitchLbSelection::per_tier`), and so is `conga` on one tier of a leaf-spine only (spines
//! must raise CE; a CONGA spine would misread another ToR scheme's `path_tag`).
//! **Re-routes:** a new flowlet of a live flow put on another uplink than its previous one.

use super::ecmp::{Ecmp, EcmpParams};
use super::flow_table::{flow_key, FlowTable, KeyHasher};
use super::{Candidates, PortView, SwitchCtx, SwitchLb};
use crate::ids::{NodeId, PortId};
use crate::net::packet::{CongaWord, Packet, PktKind};
use crate::scheme::Limit;
use crate::topo::Tier;
use crate::units::{us_to_ps, BitsPerSec, Time};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::hash::BuildHasherDefault;

/// Registry name.
pub const NAME: &str = "conga";
/// Registry summary.
pub const SUMMARY: &str = "CONGA (2-tier only): per-link DRE, leaf-to-leaf congestion feedback, least congested uplink per flowlet (gap 100 µs)";

/// The most uplinks a leaf may have: LBTag is 8 bits in [`CongaWord`].
pub const MAX_UPLINKS: usize = 256;

/// Parameters of `conga`.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct CongaParams {
    /// `keep` (default): a tie keeps the flow's uplink; `random`: ties are broken at random
    /// even then, as ConWeave's ns-3 `CongaRouting::GetBestPath` does.
    #[serde(skip_serializing_if = "crate::scheme::is_default")]
    pub ties: Ties,
    /// `conga` (default): ACKs, NACKs and CNPs go through CONGA like data; `bypass`: they are
    /// ECMP-hashed, carry no feedback and do not count in the DRE (ConWeave's ns-3).
    #[serde(skip_serializing_if = "crate::scheme::is_default")]
    pub control: ControlPackets,
    /// Flowlet gap T_fl (µs).
    pub gap_us: f64,
    /// DRE decay period T_dre (µs).
    pub dre_period_us: f64,
    /// DRE decay factor α per period.
    pub dre_alpha: f64,
    /// Bits Q of the quantised congestion metric.
    pub quant_bits: u32,
    /// Remote congestion entries older than this count as 0 (µs).
    pub age_us: f64,
}

impl Default for CongaParams {
    fn default() -> Self {
        //= seqbalance §2.5.3 (CONGA); type=paper
        //# T_fl = 100 µs ("a 100 µs inactive time gap threshold").
        //= seqbalance §2.5.3 (CONGA), §8 A24; type=assumption
        //# T_dre = 50 µs, α = 0.2 (τ = 250 µs), Q = 3 bits, T_age = 500 µs (lineage).
        CongaParams { ties: Ties::Keep, control: ControlPackets::Conga, gap_us: 100.0, dre_period_us: 50.0, dre_alpha: 0.2, quant_bits: 3, age_us: 500.0 }
    }
}

/// How a new flowlet chooses among equally congested uplinks.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Ties {
    /// The flow's current uplink when it is among them (the original design), else at random.
    #[default]
    Keep,
    /// Uniformly at random among them (ConWeave's ns-3).
    Random,
}

/// How packets other than data meet CONGA.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ControlPackets {
    /// Through CONGA, as data: flowlets, feedback, DRE.
    #[default]
    Conga,
    /// Past it: ECMP-hashed, no feedback, outside the DRE (ConWeave's ns-3).
    Bypass,
}

/// `base^k` by repeated squaring: the same f64 operations for the same `k` on every run.
fn pow_periods(base: f64, mut k: u64) -> f64 {
    let (mut result, mut square) = (1.0, base);
    while k > 0 && result != 0.0 {
        if k & 1 == 1 {
            result *= square;
        }
        square *= square;
        k >>= 1;
    }
    result
}

/// The Discounting Rate Estimators of one switch's egress links, keyed by global port id.
#[derive(Clone, Debug)]
struct Dres {
    /// `X` and the DRE period it was last decayed to, per port seen so far.
    links: HashMap<PortId, (f64, u64), BuildHasherDefault<KeyHasher>>,
    period: Time,
    keep: f64,
    /// τ = T_dre / α: the window whose line-rate bytes make utilisation 1.
    tau: Time,
    /// 2^Q.
    levels: u64,
}

impl Dres {
    fn new(p: &CongaParams) -> Self {
        let period = us_to_ps(p.dre_period_us).max(Time(1));
        let tau = Time((period.0 as f64 / p.dre_alpha).round() as u64);
        Dres { links: HashMap::default(), period, keep: 1.0 - p.dre_alpha, tau, levels: 1 << p.quant_bits }
    }

    /// `X` of `port`, decayed to `now`.
    #[inline]
    fn register(&mut self, port: PortId, now: Time) -> &mut f64 {
        let (period, keep) = (now / self.period, self.keep);
        let (x, at) = self.links.entry(port).or_insert((0.0, period));
        if *at < period {
            *x *= pow_periods(keep, period - *at);
            *at = period;
        }
        x
    }

    /// Counts `bytes` sent on `port` at `now`.
    #[inline]
    fn add(&mut self, port: PortId, bytes: u32, now: Time) {
        *self.register(port, now) += bytes as f64;
    }

    /// The quantised congestion metric of `port` (rate `rate`) at `now`.
    #[inline]
    fn metric(&mut self, port: PortId, rate: BitsPerSec, now: Time) -> u8 {
        let x = *self.register(port, now);
        quantise(x, rate.bytes_in(self.tau).0, self.levels)
    }
}

/// `x` bytes against a window of `capacity` bytes, in `levels` steps (0..levels−1, saturating);
/// a link that carries nothing (`capacity` 0) is fully congested once it has any bytes.
#[inline]
fn quantise(x: f64, capacity: u64, levels: u64) -> u8 {
    if capacity == 0 {
        return if x > 0.0 { (levels - 1) as u8 } else { 0 };
    }
    ((x * levels as f64 / capacity as f64) as u64).min(levels - 1) as u8
}

/// A remote congestion entry: its metric and when it was written.
#[derive(Clone, Copy, Debug)]
struct Remote {
    metric: u8,
    updated: Time,
}

/// Per-leaf tables of remote congestion entries (`CongestionToLeaf`, `CongestionFromLeaf`),
/// indexed by the other leaf and the uplink index at the source leaf.
#[derive(Clone, Debug, Default)]
struct LeafTable {
    entries: HashMap<NodeId, Vec<Option<Remote>>, BuildHasherDefault<KeyHasher>>,
}

impl LeafTable {
    /// Writes `metric` for (`leaf`, `uplink`) at `now`.
    fn store(&mut self, leaf: NodeId, uplink: u8, metric: u8, now: Time) {
        let row = self.entries.entry(leaf).or_default();
        let u = uplink as usize;
        if row.len() <= u {
            row.resize(u + 1, None);
        }
        row[u] = Some(Remote { metric, updated: now });
    }

    /// The live (written within `age`) entries of `leaf`: `(uplink, metric)`.
    fn live(&self, leaf: NodeId, now: Time, age: Time) -> impl Iterator<Item = (u8, u8)> + '_ {
        self.entries.get(&leaf).into_iter().flat_map(move |row| {
            row.iter().enumerate().filter_map(move |(u, e)| e.filter(|r| now.saturating_sub(r.updated) <= age).map(|r| (u as u8, r.metric)))
        })
    }

    /// The metric of (`leaf`, `uplink`), 0 when never written or older than `age`.
    #[inline]
    fn metric(&self, leaf: NodeId, uplink: usize, now: Time, age: Time) -> u8 {
        match self.entries.get(&leaf).and_then(|row| row.get(uplink).copied().flatten()) {
            Some(r) if now.saturating_sub(r.updated) <= age => r.metric,
            _ => 0,
        }
    }
}

/// The selector: at a leaf the flowlet table, the remote tables and the DREs of its uplinks;
/// at a spine the ECMP hash and the DREs of its links.
#[derive(Clone, Debug)]
pub struct Conga {
    leaf: bool,
    node: NodeId,
    gap: Time,
    age: Time,
    dre: Dres,
    flows: FlowTable,
    /// `CongestionToLeaf[d][u]`: the congestion of this leaf's path via uplink `u` to leaf `d`,
    /// as leaf `d` fed it back.
    to_leaf: LeafTable,
    /// `CongestionFromLeaf[s][u]`: the CE that packets from leaf `s` via its uplink `u` arrived
    /// with, to be fed back to `s`.
    from_leaf: LeafTable,
    hash: Ecmp,
    /// The least congested candidates of this decision (reused).
    minima: Vec<usize>,
    /// `ties = "keep"`.
    keep_on_tie: bool,
    /// `control = "bypass"`.
    bypass: bool,
}

impl Conga {
    /// The selector of switch number `switch` (node `node`) in tier `tier`.
    pub fn new(p: &CongaParams, seed: u64, switch: u32, tier: Tier, node: NodeId) -> Self {
        let gap = us_to_ps(p.gap_us);
        Conga {
            leaf: matches!(tier, Tier::Tor | Tier::Host),
            node,
            gap,
            age: us_to_ps(p.age_us),
            dre: Dres::new(p),
            // Entries outlive a flowlet (10 gaps), so that a flow's next flowlet on another
            // uplink counts as a re-route; only the gap decides whether a flowlet continues.
            flows: FlowTable::new(10 * gap),
            to_leaf: LeafTable::default(),
            from_leaf: LeafTable::default(),
            hash: Ecmp::new(&EcmpParams {}, seed, switch),
            minima: Vec::new(),
            keep_on_tie: p.ties == Ties::Keep,
            bypass: p.control == ControlPackets::Bypass,
        }
    }

    /// `control = "bypass"`: everything but data is hashed, carries no feedback, and stays
    /// out of the DRE.
    #[inline]
    fn bypasses(&self, pkt: &Packet) -> bool {
        self.bypass && pkt.kind != PktKind::Data
    }

    /// Whether this leaf is the source leaf of a packet between `ctx`'s ToRs.
    #[inline]
    fn is_source(&self, ctx: &SwitchCtx<'_>) -> bool {
        self.leaf && ctx.src_tor == self.node && ctx.dst_tor != self.node
    }

    /// The uplink for a new flowlet to leaf `d`: least `max(local, remote)`, the flow's
    /// `current` uplink if among the least, else uniform among them.
    fn least_congested(&mut self, ctx: &mut SwitchCtx<'_>, cands: &Candidates<'_>, current: Option<usize>) -> usize {
        let (now, d) = (ctx.now, ctx.dst_tor);
        self.minima.clear();
        let mut best = u8::MAX;
        for (u, view) in cands.iter().enumerate() {
            let local = self.dre.metric(view.id(), view.rate(), now);
            let cost = local.max(self.to_leaf.metric(d, u, now, self.age));
            if cost < best {
                best = cost;
                self.minima.clear();
            }
            if cost == best {
                self.minima.push(u);
            }
        }
        //= seqbalance §2.5.3 (CONGA, flowlets); type=assumption
        //# Break ties uniformly at random; the original design prefers the current uplink.
        match current.filter(|c| self.keep_on_tie && self.minima.contains(c)) {
            Some(c) => c,
            None if self.minima.len() == 1 => self.minima[0],
            None => self.minima[ctx.rng.below(self.minima.len() as u64) as usize],
        }
    }

    /// Source leaf: LBTag + CE on data, and feedback for the destination leaf.
    fn stamp(&mut self, ctx: &mut SwitchCtx<'_>, pkt: &mut Packet, out: &PortView<'_>) {
        if let Some(w) = pkt.conga_forward() {
            let ce = self.dre.metric(out.id(), out.rate(), ctx.now);
            pkt.set_conga_forward(CongaWord { metric: ce, ..w });
        }
        //= seqbalance §2.5.3 (CONGA, source leaf); type=assumption
        //# Choose one entry of CongestionFromLeaf[d] ... uniform random, as in the lineage simulator.
        let (now, age) = (ctx.now, self.age);
        let live = self.from_leaf.live(ctx.dst_tor, now, age).count();
        let pick = match live {
            0 => return,
            1 => 0,
            n => ctx.rng.below(n as u64) as usize,
        };
        if let Some((uplink, metric)) = self.from_leaf.live(ctx.dst_tor, now, age).nth(pick) {
            pkt.set_conga_feedback(CongaWord { uplink, metric });
        }
    }

    /// Destination leaf: stores CE and feedback from source leaf `s`, strips the words.
    fn absorb(&mut self, ctx: &SwitchCtx<'_>, pkt: &mut Packet) {
        if let Some(w) = pkt.conga_forward() {
            self.from_leaf.store(ctx.src_tor, w.uplink, w.metric, ctx.now);
        }
        if let Some(w) = pkt.conga_feedback() {
            self.to_leaf.store(ctx.src_tor, w.uplink, w.metric, ctx.now);
        }
        pkt.clear_conga();
    }
}

impl SwitchLb for Conga {
    fn counts_reroutes(&self) -> bool {
        true
    }

    fn observes_all(&self) -> bool {
        true
    }

    fn choose(&mut self, ctx: &mut SwitchCtx<'_>, pkt: &mut Packet, cands: &Candidates<'_>) -> usize {
        let n = cands.len();
        // More uplinks than LBTag can name are rejected when the fabric is built
        // (`SwitchLbSelection::per_tier`); the hash keeps this total regardless.
        if !self.is_source(ctx) || n > MAX_UPLINKS || self.bypasses(pkt) {
            return self.hash.index(pkt, n);
        }
        let (now, key) = (ctx.now, flow_key(pkt));
        let prev = self.flows.get(key, now).filter(|e| (e.choice as usize) < n);
        let uplink = match prev {
            Some(e) if now - e.last_seen <= self.gap => e.choice as usize,
            _ => {
                let u = self.least_congested(ctx, cands, prev.map(|e| e.choice as usize));
                // A re-route: elsewhere than the flow's remembered uplink, or, for a flow this
                // leaf has not seen, than the one ECMP's hash would give it.
                ctx.rerouted = u != prev.map_or_else(|| self.hash.index(pkt, n), |e| e.choice as usize);
                u
            }
        };
        self.flows.set(key, uplink as u32, now);
        // CE follows in `on_packet`, once the DRE has counted this packet.
        pkt.set_conga_forward(CongaWord { uplink: uplink as u8, metric: 0 });
        uplink
    }

    /// Spines hash (a function of the header); leaves decide at the packet's arrival.
    #[inline]
    fn peek(&self, pkt: &Packet, cands: &[PortId]) -> Option<usize> {
        (!self.leaf).then(|| self.hash.index(pkt, cands.len()))
    }

    fn on_packet(&mut self, ctx: &mut SwitchCtx<'_>, pkt: &mut Packet, out: &PortView<'_>) {
        // Switch-made packets are addressed to switches and never reach a destination leaf's
        // `on_packet`: they carry no words.
        if pkt.kind.switch_made() || self.bypasses(pkt) {
            return;
        }
        if !self.leaf {
            self.dre.add(out.id(), pkt.size, ctx.now);
            if let Some(w) = pkt.conga_forward() {
                let here = self.dre.metric(out.id(), out.rate(), ctx.now);
                pkt.set_conga_forward(CongaWord { metric: w.metric.max(here), ..w });
            }
        } else if self.is_source(ctx) {
            self.dre.add(out.id(), pkt.size, ctx.now);
            self.stamp(ctx, pkt, out);
        } else if ctx.dst_tor == self.node && ctx.src_tor != self.node {
            self.absorb(ctx, pkt);
        }
    }
}

impl crate::scheme::Scheme<super::SwitchBuild> for Conga {
    const NAME: &'static str = NAME;
    const SUMMARY: &'static str = SUMMARY;
    const EXAMPLE: &'static [&'static str] = &["topology.kind=leaf_spine", "topology.k=16", "topology.oversubscription=\"4:1\""];
    type Params = CongaParams;
    const LIMITS: &'static [Limit] = &[
        Limit::new("gap_us", 0.001, 1e6),
        Limit::new("dre_period_us", 0.001, 1e6),
        Limit::new("dre_alpha", 0.001, 1.0),
        Limit::new("quant_bits", 1.0, 7.0),
        Limit::new("age_us", 0.001, 1e6),
    ];
    fn build(p: &CongaParams, ctx: &mut super::SwitchBuild) -> Self {
        Conga::new(p, ctx.seed, ctx.switch, ctx.tier, ctx.node)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ids::ConnId;
    use crate::net::packet::PktKind;
    use crate::net::switch_lb::tests::idle_ports;
    use crate::rng::Rng;
    use crate::units::{Bytes, US};

    /// Leaves A and B, a spine.
    const A: NodeId = NodeId(100);
    const B: NodeId = NodeId(101);

    /// A context for a packet from ToR `from` to ToR `to` (no fabric: CONGA needs none).
    fn ctx_between(now: Time, rng: &mut Rng, from: NodeId, to: NodeId) -> SwitchCtx<'_> {
        SwitchCtx { src_tor: from, ..SwitchCtx::new(now, rng, to) }
    }

    fn leaf(node: NodeId) -> Conga {
        Conga::new(&CongaParams::default(), 1, node.0 - A.0, Tier::Tor, node)
    }

    fn data(conn: u32) -> Packet {
        Packet { conn: ConnId(conn), size: 1000, kind: PktKind::Data, ..Default::default() }
    }

    /// A data packet of `conn` from A to B through leaf `lb`: its choice among `c`, then
    /// `on_packet` on the chosen port.
    fn send(lb: &mut Conga, rng: &mut Rng, now: Time, p: &mut Packet, c: &Candidates<'_>, from: NodeId, to: NodeId) -> usize {
        let mut ctx = ctx_between(now, rng, from, to);
        let u = lb.choose(&mut ctx, p, c);
        lb.on_packet(&mut ctx, p, &c.view(u));
        u
    }

    #[test]
    fn dre_rises_with_traffic_and_decays_by_one_minus_alpha_per_period() {
        let mut d = Dres::new(&CongaParams::default());
        let p = 50 * US;
        for _ in 0..100 {
            d.add(PortId(7), 1_000, 10 * US);
        }
        assert_eq!(*d.register(PortId(7), p - Time(1)), 100_000.0);
        // Each period boundary crossed multiplies by 0.8, however late the access.
        assert!((*d.register(PortId(7), p) - 80_000.0).abs() < 1e-6);
        assert!((*d.register(PortId(7), 4 * p + Time(3)) - 100_000.0 * 0.8f64.powi(4)).abs() < 1e-6);
        assert!((pow_periods(0.8, 13) - 0.8f64.powi(13)).abs() < 1e-12);
        // Steady line rate: X tends to rate·τ, utilisation 1, the top metric; half rate gives
        // half of the 8 levels (after the register has converged).
        let rate = BitsPerSec::from_gbps(100.0);
        let mut line = Dres::new(&CongaParams::default());
        let mut half = Dres::new(&CongaParams::default());
        for i in 0..200_000u64 {
            let t = i * 80_000; // a 1000 B packet every 80 ns: 100 Gbps
            line.add(PortId(1), 1_000, Time(t));
            if i % 2 == 0 {
                half.add(PortId(1), 1_000, Time(t));
            }
        }
        let end = 200_000 * 80_000;
        // Just before a decay (`end` is one): X ≈ rate·τ (3.125 MB) at full rate, the top
        // metric; just after, (1 − α) of it (metric 6). Half rate: half of that.
        let x = *line.register(PortId(1), Time(end - 1));
        assert!((3.0e6..3.2e6).contains(&x), "{x}");
        assert_eq!(line.metric(PortId(1), rate, Time(end - 1)), 7);
        assert!((3..=4).contains(&half.metric(PortId(1), rate, Time(end - 1))), "{}", half.metric(PortId(1), rate, Time(end - 1)));
        assert_eq!((line.metric(PortId(1), rate, Time(end)), half.metric(PortId(1), rate, Time(end))), (6, 3));
        // Idle for 100 periods: back to 0.
        assert_eq!(line.metric(PortId(1), rate, Time(end) + 100 * p), 0);
    }

    #[test]
    fn ties_keep_the_flow_s_uplink_unless_random() {
        // Four idle uplinks, all at metric 0: every new flowlet is a four-way tie.
        let (ports, state) = idle_ports(4);
        let c = Candidates::new(&ports, &state, &[100_000]);
        let mut rng = Rng::stream(1, "switch_lb", 0);
        let flowlets = |ties: Ties, rng: &mut Rng| {
            let mut a = Conga::new(&CongaParams { ties, ..CongaParams::default() }, 1, 0, Tier::Tor, A);
            // One flow, a new flowlet every 200 µs (gap 100 µs); the DRE of the chosen
            // uplink decays to 0 by then, so each decision is a tie again.
            (0..40).map(|k| {
                let mut ctx = ctx_between(k * 200 * US + 10_000 * US, rng, A, B);
                a.choose(&mut ctx, &mut data(7), &c)
            }).collect::<Vec<_>>()
        };
        let keep = flowlets(Ties::Keep, &mut rng);
        assert!(keep.iter().all(|&u| u == keep[0]), "keep: the first choice stays: {keep:?}");
        let random = flowlets(Ties::Random, &mut rng);
        let used = (0..4).filter(|u| random.contains(u)).count();
        assert_eq!(used, 4, "random: 40 ties over 4 uplinks use them all: {random:?}");
    }

    #[test]
    fn control_bypass_hashes_acks_without_feedback_or_dre() {
        let (ports, state) = idle_ports(4);
        let c = Candidates::new(&ports, &state, &[100_000]);
        let mut rng = Rng::stream(1, "switch_lb", 0);
        let ack = |conn| Packet { conn, size: 60, kind: PktKind::Ack, ..Default::default() };
        for (control, carries) in [(ControlPackets::Conga, true), (ControlPackets::Bypass, false)] {
            let mut a = Conga::new(&CongaParams { control, ..CongaParams::default() }, 1, 0, Tier::Tor, A);
            // Leaf A has heard from leaf B: a feedback entry to piggyback.
            a.from_leaf.store(B, 1, 5, US);
            let mut p = ack(ConnId(3));
            let u = send(&mut a, &mut rng, 2 * US, &mut p, &c, A, B);
            assert_eq!(p.conga_feedback().is_some(), carries, "{control:?}");
            assert_eq!(*a.dre.register(c.view(u).id(), 2 * US) > 0.0, carries, "{control:?}: the DRE counts it");
            if !carries {
                assert_eq!(u, a.hash.index(&ack(ConnId(3)), 4), "hashed");
            }
        }
    }

    #[test]
    fn quantisation_is_floor_and_saturates() {
        // 8 levels of a 1 000 B window.
        let q: Vec<u8> = [0.0, 124.9, 125.0, 500.0, 874.9, 875.0, 1_000.0, 1e12].iter().map(|&x| quantise(x, 1_000, 8)).collect();
        assert_eq!(q, [0, 0, 1, 4, 6, 7, 7, 7]);
        assert_eq!(quantise(1e12, 1_000, 128), 127);
        assert_eq!((quantise(0.0, 0, 8), quantise(1.0, 0, 8)), (0, 7));
    }

    #[test]
    fn a_new_flowlet_takes_the_least_congested_path_from_local_and_remote_metrics() {
        let (ports, state) = idle_ports(4);
        let c = Candidates::new(&ports, &state, &[100_000]);
        let mut rng = Rng::stream(1, "switch_lb", 0);
        let mut a = leaf(A);
        let rate = c.view(0).rate();
        // Local load: uplinks 0 and 1 busy (metric 7 and 3); remote: uplink 2 congested
        // beyond leaf B (metric 5); uplink 3 is the least congested (0).
        a.dre.add(PortId(0), 20_000_000, Time::ZERO);
        a.dre.add(PortId(1), (rate.bytes_in(a.dre.tau) * 3 / 8 + Bytes(1)).0 as u32, Time::ZERO);
        a.to_leaf.store(B, 2, 5, Time::ZERO);
        assert_eq!((a.dre.metric(PortId(0), rate, Time::ZERO), a.dre.metric(PortId(1), rate, Time::ZERO)), (7, 3));
        for conn in 0..20 {
            assert_eq!(send(&mut a, &mut rng, US, &mut data(conn), &c, A, B), 3);
        }
        // A new flow is re-routed when uplink 3 is not where ECMP's hash would put it.
        for conn in 20..40 {
            let mut ctx = ctx_between(US, &mut rng, A, B);
            let mut p = data(conn);
            let hashed = a.hash.index(&p, 4);
            assert_eq!(a.choose(&mut ctx, &mut p, &c), 3);
            assert_eq!(ctx.rerouted, hashed != 3, "flow {conn}: hashed to {hashed}");
        }
        // Another destination leaf knows nothing remote: uplinks 2 and 3 tie, drawn uniformly.
        let picks: Vec<usize> = (100..400).map(|conn| send(&mut a, &mut rng, US, &mut data(conn), &c, A, B.offset(1))).collect();
        let twos = picks.iter().filter(|&&u| u == 2).count();
        assert!(picks.iter().all(|&u| u >= 2) && (110..190).contains(&twos), "{twos}");
        // A flowlet keeps its uplink within the gap even when it has become the worst.
        a.to_leaf.store(B, 3, 6, US);
        let mut p = data(0);
        assert_eq!(send(&mut a, &mut rng, 50 * US, &mut p, &c, A, B), 3);
        assert_eq!(p.conga_forward().map(|w| w.uplink), Some(3));
        // After a gap (three decays later: local metrics 6 and 1) it moves to uplink 1, the
        // least of max(local, remote) = 6, 1, 5, 6: a re-route.
        let mut ctx = ctx_between(151 * US, &mut rng, A, B);
        assert_eq!(a.choose(&mut ctx, &mut data(0), &c), 1);
        assert!(ctx.rerouted);
        // All idle: the flow's current uplink wins the tie, without a draw.
        let mut fresh = leaf(A);
        for current in 0..4 {
            let before = rng.clone().next_u64();
            assert_eq!(fresh.least_congested(&mut ctx_between(Time::ZERO, &mut rng, A, B), &c, Some(current)), current);
            assert_eq!(rng.clone().next_u64(), before);
        }
    }

    #[test]
    fn feedback_round_trip_carries_ce_back_to_the_source_leaf() {
        let (ports, state) = idle_ports(6);
        // Leaf A's uplinks 0..2 (to spines), leaf B's 2..4, the spine's link to B is port 5.
        let (ca, cb) = (Candidates::new(&ports[0..2], &state, &[100_000]), Candidates::new(&ports[2..4], &state, &[100_000]));
        let mut rng = Rng::stream(1, "switch_lb", 0);
        let (mut a, mut b) = (leaf(A), leaf(B));
        let mut spine = Conga::new(&CongaParams::default(), 1, 9, Tier::Agg, NodeId(200));
        assert_eq!(spine.peek(&data(1), &ports[0..2]), Some(Ecmp::new(&EcmpParams {}, 1, 9).index(&data(1), 2)));
        assert_eq!(a.peek(&data(1), &ports[0..2]), None);
        // The spine's downlink to B is busy: metric 6.
        let down = PortView::of(PortId(5), &state, &[100_000]);
        spine.dre.add(PortId(5), (down.rate().bytes_in(spine.dre.tau) * 6 / 8 + Bytes(1)).0 as u32, Time::ZERO);
        // A → spine → B: LBTag = A's uplink, CE = max(0 at A, 6 at the spine).
        let mut p = data(1);
        let u = send(&mut a, &mut rng, US, &mut p, &ca, A, B);
        assert_eq!((p.conga_forward(), p.conga_feedback()), (Some(CongaWord { uplink: u as u8, metric: 0 }), None));
        spine.on_packet(&mut ctx_between(2 * US, &mut rng, A, B), &mut p, &down);
        assert_eq!(p.conga_forward(), Some(CongaWord { uplink: u as u8, metric: 6 }));
        // B stores FromLeaf[A][u] = 6 and strips the words.
        b.on_packet(&mut ctx_between(3 * US, &mut rng, A, B), &mut p, &PortView::of(PortId(4), &state, &[100_000]));
        assert_eq!((p.path_tag, p.ecn_count), (0, 0));
        assert_eq!(b.from_leaf.metric(A, u, 3 * US, b.age), 6);
        // B's ACK back to A carries the feedback in `path_tag`; A stores ToLeaf[B][u] = 6.
        let mut ack = Packet { kind: PktKind::Ack, ecn_count: 9, ..data(1) };
        send(&mut b, &mut rng, 4 * US, &mut ack, &cb, B, A);
        assert_eq!((ack.conga_feedback(), ack.conga_forward(), ack.ecn_count), (Some(CongaWord { uplink: u as u8, metric: 6 }), None, 9));
        a.on_packet(&mut ctx_between(5 * US, &mut rng, B, A), &mut ack, &PortView::of(PortId(4), &state, &[100_000]));
        assert_eq!((ack.path_tag, ack.ecn_count), (0, 9));
        assert_eq!(a.to_leaf.metric(B, u, 5 * US, a.age), 6);
        // Reverse data carries feedback in `ecn_count`, beside its own LBTag + CE.
        let mut back = data(2);
        let v = send(&mut b, &mut rng, 6 * US, &mut back, &cb, B, A);
        assert_eq!(back.conga_forward(), Some(CongaWord { uplink: v as u8, metric: 0 }));
        assert_eq!(back.conga_feedback(), Some(CongaWord { uplink: u as u8, metric: 6 }));
        // A's next new flow to B avoids uplink u.
        assert_eq!(send(&mut a, &mut rng, 7 * US, &mut data(3), &ca, A, B), 1 - u);
    }

    #[test]
    fn remote_entries_age_to_zero() {
        let (ports, state) = idle_ports(2);
        let c = Candidates::new(&ports, &state, &[100_000]);
        let mut rng = Rng::stream(1, "switch_lb", 0);
        let mut a = leaf(A);
        a.to_leaf.store(B, 0, 7, Time::ZERO);
        a.from_leaf.store(B, 1, 4, Time::ZERO);
        assert_eq!(a.to_leaf.metric(B, 0, 500 * US, a.age), 7);
        assert_eq!(a.to_leaf.metric(B, 0, 500 * US + Time(1), a.age), 0);
        // Within the age: uplink 1 always; and feedback FromLeaf[B][1] = 4 goes to B.
        let mut p = data(1);
        assert_eq!(send(&mut a, &mut rng, 400 * US, &mut p, &c, A, B), 1);
        assert_eq!(p.conga_feedback(), Some(CongaWord { uplink: 1, metric: 4 }));
        // Past the age: the uplinks tie again (both picked over many flows), no feedback left.
        let mut seen = [false; 2];
        for conn in 10..60 {
            let mut p = data(conn);
            seen[send(&mut a, &mut rng, 501 * US, &mut p, &c, A, B)] = true;
            assert_eq!(p.conga_feedback(), None);
        }
        assert_eq!(seen, [true, true]);
    }
}
