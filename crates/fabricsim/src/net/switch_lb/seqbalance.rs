//! `seqbalance`: SeqBalance's in-network path pinning (Luo et al., "SeqBalance: Congestion-Aware
//! Load Balancing with no Reordering for RoCE", §III-B/§III-C, Fig. 4-5). The ToRs do all the
//! work; the host side (the Shaper that splits a message over N queue pairs) is separate.
//!
//! **Follows** seqbalance spec §2.4:
//! - *Source ToR* (§2.4.3-2.4.4): the first packet of a sub-flow (a flow-table miss: a new
//!   connection/entropy, or one idle for more than `idle_us`) picks a path by double hashing —
//!   probe `(h1 + i·h2) mod P` with a stride `h2` coprime to `P`, for at most `probes` paths,
//!   and take the first one not marked inactive; if every probed path is inactive, `h1`. Every
//!   later packet of the sub-flow (retransmissions included) follows the pinned path, so a
//!   queue pair never reorders (Mode A, "QP-pinned"). The chosen path is stamped into
//!   [`Packet::path_tag`] (the paper's 10-bit PathTag in the BTH).
//! - *Destination ToR* (§2.4.5): a CE-marked data packet arriving from the fabric is mirrored
//!   back to its source ToR as a 64-byte Congestion Packet in the control class, carrying the
//!   PathTag; it is routed by the ECMP hash of its own header. The check runs before this
//!   switch queues the packet, so marks made on the last hop (receiver incast) are not blamed
//!   on the path (§2.7 item 7).
//! - *Source ToR* (§2.4.7): a Congestion Packet marks (destination ToR, path) inactive until
//!   `now + φ`; each further one restarts the window. Expiry is lazy; pinned sub-flows keep
//!   their path, only new sub-flows avoid it.
//! - *Paths* (§2.1, §2.4.6): in a leaf-spine a path is a spine (`P` = the ToR's uplinks). In a
//!   fat tree a path between pods is (aggregation uplink `u`, core uplink `v` of that agg),
//!   `P = n·m` with index `u + n·v`; the ToR source-routes it: the tag's low byte is `u`, bits
//!   8-14 are `v`, bit 15 says "set", and aggregation switches running `seqbalance` forward by
//!   the tag (a function of the header: they answer `peek`). Within a pod `P = n`.
//! - ACKs, NACKs, CNPs and Congestion Packets are not balanced: they take `ecmp`'s hash.
//!
//! **Parameters:** `phi_us` (32, paper §III-B: the time to drain K_min at line rate),
//! `idle_us` (1000, flow-table idle expiry, spec assumption), `probes` (0 = every path; 2 = the
//! literal "double hashing" ablation SB-2H), `cp_bytes` (64), `pinning` (`"qp"`: Mode A;
//! `"message"`: Mode B re-pins at each message's first packet — the sender flags the first
//! transmission of a message's first packet, RoCE's WRITE_FIRST/ONLY — and may reorder at
//! message boundaries; spec §2.4.3, item A9).
//! **Differences:** the hashes are SplitMix64 rounds salted per switch, not CRC32 (both
//! uniform).

use super::ecmp::{Ecmp, EcmpParams};
use super::flow_table::{flow_key, FlowTable};
use super::path_tag;
use super::{Candidates, PortView, SwitchCtx, SwitchLb};
use crate::ids::{NodeId, PortId};
use crate::net::packet::{Packet, PktKind, F_CE, F_MSG_FIRST, F_TRIMMED};
use crate::rng::{mix64, Rng};
use crate::scheme::Limit;
use crate::topo::Tier;
use crate::units::{us_to_ps, Time};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;

/// Registry name.
pub const NAME: &str = "seqbalance";
/// Registry summary.
pub const SUMMARY: &str = "SeqBalance: source ToR pins each sub-flow to a path by double hashing around paths marked inactive (phi) by destination-ToR Congestion Packets";

/// Parameters of `seqbalance`.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct SeqbalanceParams {
    /// How long a Congestion Packet makes its path inactive (µs).
    pub phi_us: f64,
    /// A sub-flow idle this long (µs) is forgotten: its next packet chooses again.
    pub idle_us: f64,
    /// Paths probed per decision (0 = every path).
    pub probes: u32,
    /// Wire size of a Congestion Packet (bytes).
    pub cp_bytes: u32,
    /// When a sub-flow chooses its path: `"qp"` (Mode A, only on a flow-table miss) or
    /// `"message"` (Mode B, also at every message's first packet, which may reorder at message
    /// boundaries).
    pub pinning: Pinning,
}

/// SeqBalance's pinning granularity (spec §2.4.3, item A9: the paper does not settle it).
#[derive(Clone, Copy, Debug, Default, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Pinning {
    /// Mode A, "QP-pinned": a path decision only on a flow-table miss; never reorders.
    #[default]
    Qp,
    /// Mode B, "message-pinned": also at each message's first packet (WRITE_FIRST/ONLY).
    Message,
}

impl Default for SeqbalanceParams {
    fn default() -> Self {
        //= seqbalance §2.4.2 (constants); type=paper (φ), assumption (the rest)
        //# φ = 32 µs; T_idle = 1 ms; K_max = P (probe every path); CP 64 B on the wire.
        SeqbalanceParams { phi_us: 32.0, idle_us: 1000.0, probes: 0, cp_bytes: 64, pinning: Pinning::Qp }
    }
}

/// The strides in `1..p` coprime to `p` (just `[1]` for `p` ≤ 2), so that probing from any
/// start visits every path once.
fn coprime_strides(p: usize) -> Vec<usize> {
    fn gcd(a: usize, b: usize) -> usize {
        if b == 0 {
            a
        } else {
            gcd(b, a % b)
        }
    }
    let s: Vec<usize> = (1..p).filter(|&k| gcd(k, p) == 1).collect();
    if s.is_empty() {
        vec![1]
    } else {
        s
    }
}

/// Per destination ToR at a source ToR: the path space and each path's inactive-until time.
#[derive(Clone, Debug)]
struct PathSet {
    /// ToR uplinks toward the destination.
    n: usize,
    /// Paths: `n` × upper-tier uplinks.
    p: usize,
    strides: Vec<usize>,
    /// Path `u + n·v` is inactive while `now < inactive_until[u + n·v]`.
    inactive_until: Vec<Time>,
}

/// The selector: ToR state (flow table, congestion table), or the tag reader elsewhere.
#[derive(Clone, Debug)]
pub struct Seqbalance {
    tor: bool,
    node: NodeId,
    phi: Time,
    probes: usize,
    cp_bytes: u32,
    per_message: bool,
    flows: FlowTable,
    paths: HashMap<NodeId, PathSet>,
    salt: (u64, u64),
    hash: Ecmp,
    /// Congestion Packets this switch sent (destination role).
    pub cps_sent: u64,
}

impl Seqbalance {
    /// The selector of switch number `switch` (node `node`) in tier `tier`.
    pub fn new(p: &SeqbalanceParams, seed: u64, switch: u32, tier: Tier, node: NodeId) -> Self {
        let mut rng = Rng::stream(seed, "seqbalance", switch as u64);
        Seqbalance {
            tor: matches!(tier, Tier::Tor | Tier::Host),
            node,
            phi: us_to_ps(p.phi_us),
            probes: p.probes as usize,
            cp_bytes: p.cp_bytes,
            per_message: p.pinning == Pinning::Message,
            flows: FlowTable::new(us_to_ps(p.idle_us)),
            paths: HashMap::new(),
            salt: (rng.next_u64(), rng.next_u64()),
            hash: Ecmp::new(&EcmpParams {}, seed, switch),
            cps_sent: 0,
        }
    }

    /// The path set toward `dst_tor`, created on first use: `n` ToR uplinks, times the
    /// upper-tier fan-out toward `dst_tor` seen from the first uplink's far end (1 in a
    /// leaf-spine and within a pod).
    fn path_set(&mut self, ctx: &SwitchCtx<'_>, cands: &Candidates<'_>) -> &mut PathSet {
        let dst = ctx.dst_tor;
        self.paths.entry(dst).or_insert_with(|| {
            let n = cands.len();
            let m = ctx.fabric.map_or(1, |f| {
                let peer = cands.view(0).peer();
                if peer == dst {
                    1
                } else {
                    f.routes.next_hops(f, peer, dst).len().max(1)
                }
            });
            // The tag holds 8 bits of `u` and 7 of `v`.
            let m = m.min(128);
            let p = n * m;
            PathSet { n, p, strides: coprime_strides(p), inactive_until: vec![Time::ZERO; p] }
        })
    }

    //= seqbalance §2.4.4 (select_path); type=assumption (concrete rule for "double hashing")
    //# h1 = H1(key) mod P; h2 = a stride coprime to P from H2(key); probe (h1 + i·h2) mod P for
    //# i < K_max and take the first active path; all inactive: h1.
    fn select(&mut self, key: u64, now: Time, ctx: &SwitchCtx<'_>, cands: &Candidates<'_>) -> usize {
        let (s1, s2, probes) = (self.salt.0, self.salt.1, self.probes);
        let set = self.path_set(ctx, cands);
        let h1 = (mix64(s1 ^ key) % set.p as u64) as usize;
        let h2 = set.strides[(mix64(s2 ^ key) % set.strides.len() as u64) as usize];
        let k = if probes == 0 { set.p } else { probes.min(set.p) };
        (0..k).map(|i| (h1 + i * h2) % set.p).find(|&q| set.inactive_until[q] <= now).unwrap_or(h1)
    }

    /// Path index `u + n·v` of `tag` in `set`, if it names one.
    fn path_of(set: &PathSet, tag: u16) -> Option<usize> {
        let (u, v) = (path_tag::tor_uplink(tag), path_tag::upper(tag));
        (path_tag::is_set(tag) && u < set.n && u + set.n * v < set.p).then(|| u + set.n * v)
    }

    /// Whether (destination ToR `dst`, path `tag`) is inactive at `now` (for tests and
    /// diagnostics).
    pub fn inactive(&self, dst: NodeId, tag: u16, now: Time) -> bool {
        self.paths.get(&dst).and_then(|s| Self::path_of(s, tag).map(|q| now < s.inactive_until[q])).unwrap_or(false)
    }
}

impl SwitchLb for Seqbalance {
    fn choose(&mut self, ctx: &mut SwitchCtx<'_>, pkt: &mut Packet, cands: &Candidates<'_>) -> usize {
        let n = cands.len();
        if !self.tor {
            return path_tag::follow(pkt, n, &self.hash);
        }
        if pkt.kind != PktKind::Data || ctx.src_tor != self.node {
            // Control packets, and anything not entering the fabric here, take the hash.
            return self.hash.index(pkt, n);
        }
        let (now, key) = (ctx.now, flow_key(pkt));
        let live = self.flows.get(key, now).filter(|_| !(self.per_message && pkt.flags & F_MSG_FIRST != 0));
        let tag = match live {
            Some(e) => e.choice as u16,
            None => {
                let q = self.select(key, now, ctx, cands);
                let set = &self.paths[&ctx.dst_tor];
                path_tag::new(q % set.n, q / set.n)
            }
        };
        self.flows.set(key, tag as u32, now);
        pkt.path_tag = tag;
        path_tag::tor_uplink(tag) % n
    }

    /// Upper tiers follow the tag (or the hash): a function of the header.
    #[inline]
    fn peek(&self, pkt: &Packet, cands: &[PortId]) -> Option<usize> {
        (!self.tor).then(|| path_tag::follow(pkt, cands.len(), &self.hash))
    }

    fn observes_all(&self) -> bool {
        self.tor
    }

    //= seqbalance §2.4.5 (on_data_from_fabric); type=paper (mirror CE-marked data to the source
    //= ToR), assumption (64 B, control class, ECMP-routed, CE read at the destination ToR's ingress)
    fn on_packet(&mut self, ctx: &mut SwitchCtx<'_>, pkt: &mut Packet, _out: &PortView<'_>) {
        let from_fabric = ctx.dst_tor == self.node && ctx.src_tor != self.node;
        if !from_fabric || pkt.kind != PktKind::Data || pkt.flags & (F_CE | F_TRIMMED) != F_CE || !path_tag::is_set(pkt.path_tag) {
            return;
        }
        self.cps_sent += 1;
        ctx.emit = Some(Packet {
            kind: PktKind::Congestion,
            conn: pkt.conn,
            src: self.node,
            dst: ctx.src_tor,
            seq: pkt.seq,
            size: self.cp_bytes,
            entropy: pkt.entropy,
            path_tag: pkt.path_tag,
            sent_at: ctx.now,
            ..Packet::default()
        });
    }

    //= seqbalance §2.4.7 (on_congestion_packet); type=paper
    //# Mark the path inactive for φ; each further Congestion Packet restarts the window.
    fn on_control(&mut self, ctx: &mut SwitchCtx<'_>, pkt: &Packet) {
        if pkt.kind != PktKind::Congestion {
            return;
        }
        let until = ctx.now + self.phi;
        if let Some(set) = self.paths.get_mut(&pkt.src) {
            if let Some(q) = Self::path_of(set, pkt.path_tag) {
                set.inactive_until[q] = until;
            }
        }
    }
}

impl crate::scheme::Scheme<super::SwitchBuild> for Seqbalance {
    type Params = SeqbalanceParams;
    const NAME: &'static str = NAME;
    const SUMMARY: &'static str = SUMMARY;
    const LIMITS: &'static [Limit] = &[Limit::new("phi_us", 0.0, 1e6), Limit::new("idle_us", 0.001, 1e7), Limit::new("probes", 0.0, 1024.0), Limit::new("cp_bytes", 1.0, 65_535.0)];
    fn build(p: &SeqbalanceParams, ctx: &mut super::SwitchBuild) -> Self {
        Seqbalance::new(p, ctx.seed, ctx.switch, ctx.tier, ctx.node)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ids::ConnId;
    use crate::net::packet::F_ECT;
    use crate::net::switch_lb::tests::idle_ports;
    use crate::units::US;

    /// Source ToR node 100, destination ToR node 200 in these tests.
    const SRC: NodeId = NodeId(100);
    const DST: NodeId = NodeId(200);

    fn tor(p: &SeqbalanceParams) -> Seqbalance {
        Seqbalance::new(p, 1, 0, Tier::Tor, SRC)
    }

    /// The first packet of connection `conn`, leaving its ToR at `now`: the uplink index.
    fn first(sb: &mut Seqbalance, rng: &mut Rng, conn: u32, now: Time, c: &Candidates<'_>) -> (usize, u16) {
        let mut p = Packet { conn: ConnId(conn), ..Default::default() };
        let mut ctx = SwitchCtx::new(now, rng, DST);
        ctx.src_tor = SRC;
        let i = sb.choose(&mut ctx, &mut p, c);
        (i, p.path_tag)
    }

    fn congestion(sb: &mut Seqbalance, rng: &mut Rng, tag: u16, now: Time) {
        let cp = Packet { kind: PktKind::Congestion, src: DST, dst: SRC, path_tag: tag, ..Default::default() };
        sb.on_control(&mut SwitchCtx::new(now, rng, SRC), &cp);
    }

    #[test]
    fn strides_are_coprime_to_the_path_count() {
        // The spec's lists (§2.4.4): P = 12, 16, 4, 3.
        assert_eq!(coprime_strides(12), [1, 5, 7, 11]);
        assert_eq!(coprime_strides(16), [1, 3, 5, 7, 9, 11, 13, 15]);
        assert_eq!(coprime_strides(4), [1, 3]);
        assert_eq!(coprime_strides(3), [1, 2]);
        assert_eq!(coprime_strides(1), [1]);
    }

    #[test]
    fn without_feedback_sub_flows_spread_uniformly_and_stay_pinned() {
        // §2.4.9 property 2: with no congestion feedback the choice is a uniform hash over P.
        let (ports, state) = idle_ports(12);
        let c = Candidates::new(&ports, &state, &[100_000]);
        let mut rng = Rng::stream(1, "switch_lb", 0);
        let mut sb = tor(&SeqbalanceParams::default());
        let mut hist = [0u32; 12];
        for conn in 0..12_000 {
            let (i, tag) = first(&mut sb, &mut rng, conn, Time::ZERO, &c);
            hist[i] += 1;
            // Later packets (and retransmissions) of the sub-flow follow the pin.
            for t in 1..4 {
                assert_eq!(first(&mut sb, &mut rng, conn, t * 100 * US, &c), (i, tag));
            }
        }
        // 1000 ± 29 per path.
        assert!(hist.iter().all(|&n| (880..1120).contains(&n)), "{hist:?}");
    }

    #[test]
    fn a_congestion_packet_makes_its_path_inactive_for_exactly_phi_and_each_one_restarts_it() {
        // §2.4.9 property 3 and §7 T0 "φ behaviour".
        let (ports, state) = idle_ports(4);
        let c = Candidates::new(&ports, &state, &[100_000]);
        let mut rng = Rng::stream(1, "switch_lb", 0);
        let mut sb = tor(&SeqbalanceParams::default());
        let (pinned, tag) = first(&mut sb, &mut rng, 0, Time::ZERO, &c);
        let phi = 32 * US;
        congestion(&mut sb, &mut rng, tag, 10 * US);
        assert!(sb.inactive(DST, tag, 10 * US));
        assert!(sb.inactive(DST, tag, 10 * US + phi - Time(1)));
        assert!(!sb.inactive(DST, tag, 10 * US + phi));
        // A second CP at 30 µs restarts the window: inactive until 62 µs.
        congestion(&mut sb, &mut rng, tag, 30 * US);
        assert!(sb.inactive(DST, tag, 10 * US + phi + 5 * US));
        assert!(!sb.inactive(DST, tag, 30 * US + phi));
        // While inactive: no new sub-flow lands on it, and the pinned one keeps it.
        let mut hist = [0u32; 4];
        for conn in 1..4_001 {
            hist[first(&mut sb, &mut rng, conn, 40 * US, &c).0] += 1;
        }
        assert_eq!(hist[pinned], 0, "{hist:?}");
        // Its share moves to the next probe: stride 1 or 3 (= −1) from it, half each, so its
        // neighbours take 3/8 each and the opposite path keeps 1/4 (1500, 1500, 1000 ± 30).
        let (next, prev, opposite) = ((pinned + 1) % 4, (pinned + 3) % 4, (pinned + 2) % 4);
        assert!([next, prev].iter().all(|&i| (1_400..1_600).contains(&hist[i])), "{hist:?}");
        assert!((900..1_100).contains(&hist[opposite]), "{hist:?}");
        assert_eq!(first(&mut sb, &mut rng, 0, 45 * US, &c).0, pinned);
        // After the window, new sub-flows use it again.
        let back = (4_001..8_001).filter(|&conn| first(&mut sb, &mut rng, conn, 70 * US, &c).0 == pinned).count();
        assert!((850..1_150).contains(&back), "{back}");
    }

    #[test]
    fn probing_falls_back_to_the_first_hash_when_every_path_is_inactive() {
        let (ports, state) = idle_ports(4);
        let c = Candidates::new(&ports, &state, &[100_000]);
        let mut rng = Rng::stream(1, "switch_lb", 0);
        let mut plain = tor(&SeqbalanceParams::default());
        let mut sb = tor(&SeqbalanceParams::default());
        first(&mut sb, &mut rng, 0, Time::ZERO, &c);
        for u in 0..4 {
            congestion(&mut sb, &mut rng, path_tag::new(u, 0), Time::ZERO);
        }
        for conn in 1..200 {
            assert_eq!(first(&mut sb, &mut rng, conn, US, &c).0, first(&mut plain, &mut rng, conn, US, &c).0);
        }
        // SB-2H (two probes): with paths 0 and 1 inactive, a sub-flow whose two probes both hit
        // them takes its first hash.
        let mut two = tor(&SeqbalanceParams { probes: 2, ..Default::default() });
        first(&mut two, &mut rng, 0, Time::ZERO, &c);
        congestion(&mut two, &mut rng, path_tag::new(0, 0), Time::ZERO);
        congestion(&mut two, &mut rng, path_tag::new(1, 0), Time::ZERO);
        let on_inactive = (1..2_000).filter(|&conn| first(&mut two, &mut rng, conn, US, &c).0 < 2).count();
        let mut full = tor(&SeqbalanceParams::default());
        first(&mut full, &mut rng, 0, Time::ZERO, &c);
        congestion(&mut full, &mut rng, path_tag::new(0, 0), Time::ZERO);
        congestion(&mut full, &mut rng, path_tag::new(1, 0), Time::ZERO);
        assert_eq!((1..2_000).filter(|&conn| first(&mut full, &mut rng, conn, US, &c).0 < 2).count(), 0);
        assert!(on_inactive > 100, "{on_inactive}");
    }

    #[test]
    fn the_destination_tor_mirrors_ce_marked_data_from_the_fabric_only() {
        let (ports, state) = idle_ports(1);
        let view = PortView::of(PortId(0), &state, &[100_000]);
        let _ = ports;
        let mut rng = Rng::stream(1, "switch_lb", 0);
        let mut dst = Seqbalance::new(&SeqbalanceParams::default(), 1, 1, Tier::Tor, DST);
        let tag = path_tag::new(2, 0);
        let mut cases = Vec::new();
        for (src_tor, kind, flags, path_tag) in [
            (SRC, PktKind::Data, F_ECT | F_CE, tag), // marked, from the fabric: mirrored
            (SRC, PktKind::Data, F_ECT, tag),        // not marked
            (DST, PktKind::Data, F_ECT | F_CE, tag), // intra-rack
            (SRC, PktKind::Ack, F_CE, tag),          // not data
            (SRC, PktKind::Data, F_ECT | F_CE | F_TRIMMED, tag),
            (SRC, PktKind::Data, F_ECT | F_CE, 0), // no tag: its source ToR runs another scheme
        ] {
            let mut p = Packet { kind, flags, path_tag, conn: ConnId(7), entropy: 3, src: NodeId(1), dst: NodeId(9), size: 1048, ..Default::default() };
            let mut ctx = SwitchCtx::new(5 * US, &mut rng, DST);
            ctx.src_tor = src_tor;
            dst.on_packet(&mut ctx, &mut p, &view);
            cases.push(ctx.emit);
        }
        let cp = cases[0].expect("a Congestion Packet");
        assert_eq!((cp.kind, cp.src, cp.dst, cp.path_tag, cp.size, cp.conn), (PktKind::Congestion, DST, SRC, tag, 64, ConnId(7)));
        assert!(cases[1..].iter().all(Option::is_none), "{cases:?}");
        assert_eq!(dst.cps_sent, 1);
    }

    #[test]
    fn upper_tiers_follow_the_tag_and_control_packets_take_the_hash() {
        let (ports, state) = idle_ports(4);
        let c = Candidates::new(&ports, &state, &[100_000]);
        let mut rng = Rng::stream(1, "switch_lb", 0);
        let agg = Seqbalance::new(&SeqbalanceParams::default(), 1, 5, Tier::Agg, NodeId(300));
        for v in 0..4 {
            assert_eq!(agg.peek(&Packet { path_tag: path_tag::new(1, v), ..Default::default() }, &ports), Some(v));
        }
        let hash = Ecmp::new(&EcmpParams {}, 1, 5);
        let untagged = Packet { conn: ConnId(3), ..Default::default() };
        assert_eq!(agg.peek(&untagged, &ports), Some(hash.index(&untagged, 4)));
        // At a ToR, an ACK is hashed, not pinned, and gets no tag.
        let mut sb = tor(&SeqbalanceParams::default());
        assert_eq!(sb.peek(&untagged, &ports), None);
        let mut ack = Packet { kind: PktKind::Ack, conn: ConnId(3), ..Default::default() };
        let mut ctx = SwitchCtx::new(Time::ZERO, &mut rng, DST);
        ctx.src_tor = SRC;
        assert_eq!(sb.choose(&mut ctx, &mut ack, &c), Ecmp::new(&EcmpParams {}, 1, 0).index(&ack, 4));
        assert_eq!(ack.path_tag, 0);
    }

    #[test]
    fn message_pinning_chooses_again_at_each_message_start_and_qp_pinning_does_not() {
        let (ports, state) = idle_ports(4);
        let c = Candidates::new(&ports, &state, &[100_000]);
        let mut rng = Rng::stream(1, "switch_lb", 0);
        for (pinning, moves) in [(Pinning::Qp, false), (Pinning::Message, true)] {
            let mut sb = Seqbalance::new(&SeqbalanceParams { pinning, ..Default::default() }, 1, 0, Tier::Tor, NodeId(100));
            let send = |sb: &mut Seqbalance, rng: &mut Rng, flags: u16, now: Time| {
                let mut p = Packet { conn: ConnId(1), flags, ..Default::default() };
                let mut ctx = SwitchCtx::new(now, rng, NodeId(200));
                ctx.src_tor = NodeId(100);
                sb.choose(&mut ctx, &mut p, &c)
            };
            let first = send(&mut sb, &mut rng, F_MSG_FIRST, Time::ZERO);
            assert_eq!(send(&mut sb, &mut rng, 0, US), first);
            // The path of the first message is marked inactive; the next message starts.
            let cp = Packet { kind: PktKind::Congestion, src: NodeId(200), dst: NodeId(100), path_tag: path_tag::new(first, 0), ..Default::default() };
            sb.on_control(&mut SwitchCtx::new(2 * US, &mut rng, NodeId(100)), &cp);
            let next = send(&mut sb, &mut rng, F_MSG_FIRST, 3 * US);
            assert_eq!(next != first, moves, "{pinning:?}");
            assert_eq!(send(&mut sb, &mut rng, 0, 4 * US), next);
        }
    }
}
