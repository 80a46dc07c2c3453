//! `drill`: DRILL(d, m) per-packet micro load balancing: each packet goes to the candidate with
//! the fewest queued bytes among `d` randomly sampled candidates and the `m` remembered as least
//! loaded at the previous decision (ties go to a remembered one); the least loaded are
//! remembered for the next packet.
//!
//! **Follows:** seqbalance §2.5.4: DRILL (Ghorbani et al., SIGCOMM '17) as the SeqBalance
//! paper evaluates it (§IV "Schemes compared", Fig. 12–13): d = 2, m = 1;
//! memory per (switch, destination ToR) (the original keeps it per forwarding engine, the
//! lineage simulator per destination). **Parameters:** `d` (2, 1..=64), `m` (1, 0..=4).
//! **Differences:** the d samples are drawn with replacement; a remembered port that is not
//! among the current candidates (routes changed) is skipped.
//! **ConWeave's DRILL** (conweave-project/conweave-ns3 @ 236a801, `SwitchNode::DoLbDrill`,
//! `from-ns3`'s `LB_MODE 2`): `sample = "distinct"` draws the d samples without replacement
//! (it shuffles the next hops and takes the first d), and `memory = "host"` keeps the
//! remembered port per destination host (its map is keyed by destination IP), and `control =
//! "ns3_ecmp"` routes every packet but data (ACKs, NACKs, CNPs) by the ns-3 ECMP hash
//! ([`ns3_ecmp`](super::ns3_ecmp)), as its `SwitchNode::GetOutDev` does under every LB_MODE:
//! sprayed per packet, a flow's NACK was overtaken by the ACKs of the packets it asked for,
//! and the sender, already past it, waited for its RTO; `load = "all_classes"` compares the
//! bytes queued in every class (ACKs too), as its `CalculateInterfaceLoad` reads the egress
//! queue's `GetNBytesTotal`. Defaults (`"replacement"`, `"tor"`, `"drill"`, `"data"`) are the
//! behaviour above.
//! **Re-routes:** a packet sent to another port than the first remembered one.

use super::{Candidates, SwitchCtx, SwitchLb};
use crate::ids::{NodeId, PortId};
use crate::net::packet::{Packet, PktKind};
use crate::scheme::Limit;
use serde::{Deserialize, Serialize};
use super::flow_table::KeyHasher;
use std::collections::HashMap;
use std::hash::BuildHasherDefault;

/// Registry name.
pub const NAME: &str = "drill";
/// Registry summary.
pub const SUMMARY: &str = "DRILL(d, m): fewest queued bytes among d random candidates and m remembered, per destination ToR";

/// The most ports a switch remembers per destination.
pub const MAX_M: usize = 4;

/// How the d samples are drawn.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Sample {
    /// Independently, so two may hit the same port.
    #[default]
    Replacement,
    /// d distinct candidates (all of them when there are no more than d), as ConWeave's ns-3.
    Distinct,
}

/// What the memory is kept per.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MemoryPer {
    /// Per destination ToR.
    #[default]
    Tor,
    /// Per destination host, as ConWeave's ns-3 (keyed by destination IP).
    Host,
}

/// How packets other than data are routed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Control {
    /// By DRILL, as data.
    #[default]
    Drill,
    /// By the ns-3 simulators' ECMP hash (needs the ns-3 names of `flow_list`).
    Ns3Ecmp,
}

/// Which queued bytes are a port's load.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Load {
    /// The data class's.
    #[default]
    Data,
    /// Every class's (control too), as ConWeave's ns-3.
    AllClasses,
}

/// Parameters of `drill`.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
#[serde(default, deny_unknown_fields)]
pub struct DrillParams {
    /// Random samples per packet.
    pub d: u32,
    /// Ports remembered per destination ToR (or host).
    pub m: u32,
    /// `replacement` (default) or `distinct` samples.
    #[serde(skip_serializing_if = "crate::scheme::is_default")]
    pub sample: Sample,
    /// `tor` (default) or `host`: what the memory is kept per.
    #[serde(skip_serializing_if = "crate::scheme::is_default")]
    pub memory: MemoryPer,
    /// `drill` (default) or `ns3_ecmp`: how ACKs, NACKs and CNPs are routed.
    #[serde(skip_serializing_if = "crate::scheme::is_default")]
    pub control: Control,
    /// `data` (default) or `all_classes`: which queued bytes are a port's load.
    #[serde(skip_serializing_if = "crate::scheme::is_default")]
    pub load: Load,
}

impl Default for DrillParams {
    fn default() -> Self {
        //= seqbalance §2.5.4 (DRILL); type=assumption
        //# d = 2, m = 1: the original DRILL recommendation.
        DrillParams { d: 2, m: 1, sample: Sample::Replacement, memory: MemoryPer::Tor, control: Control::Drill, load: Load::Data }
    }
}

/// The ports remembered for one destination ToR, best first.
#[derive(Clone, Copy, Debug, Default)]
struct Memory {
    ports: [PortId; MAX_M],
    len: u8,
}

/// The selector: its memory per destination ToR (or host).
#[derive(Clone, Debug)]
pub struct Drill {
    d: u32,
    m: usize,
    distinct: bool,
    per_host: bool,
    /// `load = "all_classes"`.
    all_classes: bool,
    /// `control = "ns3_ecmp"`: the hash for everything but data.
    control: Option<super::ns3_ecmp::Ns3Ecmp>,
    memory: HashMap<NodeId, Memory, BuildHasherDefault<KeyHasher>>,
    /// This decision's contenders `(bytes, not remembered, candidate index)` (reused).
    scratch: Vec<(u64, bool, usize)>,
}

impl Drill {
    /// A selector.
    pub fn new(p: &DrillParams) -> Self {
        Drill {
            d: p.d,
            m: p.m as usize,
            distinct: p.sample == Sample::Distinct,
            per_host: p.memory == MemoryPer::Host,
            all_classes: p.load == Load::AllClasses,
            control: None,
            memory: HashMap::default(),
            scratch: Vec::with_capacity(p.d as usize + MAX_M),
        }
    }
}

impl SwitchLb for Drill {
    fn counts_reroutes(&self) -> bool {
        true
    }

    fn choose(&mut self, ctx: &mut SwitchCtx<'_>, pkt: &mut Packet, cands: &Candidates<'_>) -> usize {
        if let (Some(hash), false) = (&self.control, pkt.kind == PktKind::Data) {
            return hash.index(pkt, cands.len());
        }
        let all = self.all_classes;
        let load = |i: usize| {
            let v = cands.view(i);
            v.queued_bytes() + if all { v.ctrl_bytes() } else { 0 }
        };
        let mem = self.memory.entry(if self.per_host { pkt.dst } else { ctx.dst_tor }).or_default();
        let s = &mut self.scratch;
        s.clear();
        for &port in &mem.ports[..mem.len as usize] {
            if let Some(i) = cands.ports().iter().position(|&q| q == port) {
                s.push((load(i), false, i));
            }
        }
        let n = cands.len();
        if self.distinct {
            // d distinct candidates, each uniform among those not yet sampled (what taking the
            // first d of a shuffle gives).
            let first = s.len();
            for j in 0..(self.d as usize).min(n) {
                let r = ctx.rng.below((n - j) as u64) as usize;
                let i = (0..n).filter(|i| !s[first..].iter().any(|t| t.2 == *i)).nth(r).expect("n - j candidates are not sampled yet");
                s.push((load(i), true, i));
            }
        } else {
            for _ in 0..self.d {
                let i = ctx.rng.below(n as u64) as usize;
                s.push((load(i), true, i));
            }
        }
        // Fewest bytes first; on equal bytes a remembered port (`false`) first; stable otherwise.
        s.sort_by_key(|&(b, sampled, _)| (b, sampled));
        let out = s[0].2;
        ctx.rerouted = mem.len > 0 && cands.ports()[out] != mem.ports[0];
        mem.len = 0;
        for &(_, _, i) in s.iter() {
            if mem.len as usize == self.m {
                break;
            }
            let port = cands.ports()[i];
            if !mem.ports[..mem.len as usize].contains(&port) {
                mem.ports[mem.len as usize] = port;
                mem.len += 1;
            }
        }
        out
    }
}

impl crate::scheme::Scheme<super::SwitchBuild> for Drill {
    const NAME: &'static str = NAME;
    const SUMMARY: &'static str = SUMMARY;
    type Params = DrillParams;
    const LIMITS: &'static [Limit] = &[Limit::new("d", 1.0, 64.0), Limit::new("m", 0.0, MAX_M as f64)];
    fn build(p: &DrillParams, ctx: &mut super::SwitchBuild) -> Self {
        let mut d = Drill::new(p);
        if p.control == Control::Ns3Ecmp {
            d.control = Some(super::ns3_ecmp::Ns3Ecmp::build(&Default::default(), ctx));
        }
        d
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::units::{Bytes, Time};
    use crate::net::switch_lb::tests::idle_ports;
    use crate::rng::Rng;

    #[test]
    fn picks_the_fewer_bytes_and_ties_to_memory() {
        let (ports, mut state) = idle_ports(4);
        for (s, b) in state.iter_mut().zip([4_000, 1_000, 3_000, 2_000]) {
            s.data_bytes = Bytes(b);
        }
        let c = Candidates::new(&ports, &state, &[100_000]);
        let mut rng = Rng::stream(1, "switch_lb", 0);
        let mut lb = Drill::new(&DrillParams::default());
        let mut ctx = SwitchCtx::new(Time::ZERO, &mut rng, NodeId(7));
        // Static queues: the memory converges to port 1, the least loaded, and stays there.
        let picks: Vec<usize> = (0..50).map(|_| lb.choose(&mut ctx, &mut Packet::default(), &c)).collect();
        let first1 = picks.iter().position(|&i| i == 1).unwrap();
        assert!(picks[first1..].iter().all(|&i| i == 1), "{picks:?}");
        // Every pick is never worse than the remembered one: the sequence of bytes only falls.
        let bytes: Vec<u64> = picks.iter().map(|&i| state[i].data_bytes.0).collect();
        assert!(bytes.windows(2).all(|w| w[1] <= w[0]), "{bytes:?}");
        // Another destination ToR has its own memory (starts without one).
        let mut ctx = SwitchCtx::new(Time::ZERO, &mut rng, NodeId(8));
        lb.choose(&mut ctx, &mut Packet::default(), &c);
        assert!(!ctx.rerouted);
        // All equal: ties go to the remembered port (port 1 for ToR 7), never re-routed.
        for s in state.iter_mut() {
            s.data_bytes = Bytes(5_000);
        }
        let c = Candidates::new(&ports, &state, &[100_000]);
        for _ in 0..100 {
            let mut ctx = SwitchCtx::new(Time::ZERO, &mut rng, NodeId(7));
            assert_eq!(lb.choose(&mut ctx, &mut Packet::default(), &c), 1);
            assert!(!ctx.rerouted);
        }
        // Port 3 empties: sampled, it wins and is remembered (a re-route).
        state[3].data_bytes = Bytes::ZERO;
        let c = Candidates::new(&ports, &state, &[100_000]);
        let mut moved = false;
        for _ in 0..100 {
            let mut ctx = SwitchCtx::new(Time::ZERO, &mut rng, NodeId(7));
            let i = lb.choose(&mut ctx, &mut Packet::default(), &c);
            if !moved && i == 3 {
                assert!(ctx.rerouted);
                moved = true;
            } else {
                assert_eq!(i, if moved { 3 } else { 1 });
            }
        }
        assert!(moved);
        // d = 2 samples of two ports of 2: the fewer bytes always wins with m = 0.
        let mut lb0 = Drill::new(&DrillParams { d: 2, m: 0, ..DrillParams::default() });
        let two = Candidates::new(&ports[2..], &state, &[100_000]);
        let wins = (0..1000).filter(|_| lb0.choose(&mut SwitchCtx::new(Time::ZERO, &mut rng, NodeId(7)), &mut Packet::default(), &two) == 1).count();
        // Port 3 (index 1) wins unless both samples hit index 0: 750 ± 14.
        assert!((690..810).contains(&wins), "{wins}");
    }

    #[test]
    fn conweave_s_drill_samples_distinct_ports_and_remembers_per_destination_host() {
        let (ports, mut state) = idle_ports(4);
        for (s, b) in state.iter_mut().zip([4_000, 1_000, 3_000, 2_000]) {
            s.data_bytes = Bytes(b);
        }
        let c = Candidates::new(&ports, &state, &[100_000]);
        let mut rng = Rng::stream(1, "switch_lb", 0);
        // d = 2 distinct of 2 candidates, m = 0: both are always sampled, so the fewer bytes
        // always wins (with replacement it lost a quarter of the time, above).
        let two = Candidates::new(&ports[2..], &state, &[100_000]);
        let mut lb = Drill::new(&DrillParams { d: 2, m: 0, sample: Sample::Distinct, ..DrillParams::default() });
        assert!((0..1000).all(|_| lb.choose(&mut SwitchCtx::new(Time::ZERO, &mut rng, NodeId(7)), &mut Packet::default(), &two) == 1));
        // d = 4 distinct of 4: every port is sampled, the least loaded (port 1) always wins.
        let mut lb = Drill::new(&DrillParams { d: 4, m: 0, sample: Sample::Distinct, ..DrillParams::default() });
        assert!((0..200).all(|_| lb.choose(&mut SwitchCtx::new(Time::ZERO, &mut rng, NodeId(7)), &mut Packet::default(), &c) == 1));
        // d = 3 distinct of 4: port 1 is missed exactly when the three are the others, 1/4.
        let mut lb = Drill::new(&DrillParams { d: 3, m: 0, sample: Sample::Distinct, ..DrillParams::default() });
        let wins = (0..4000).filter(|_| lb.choose(&mut SwitchCtx::new(Time::ZERO, &mut rng, NodeId(7)), &mut Packet::default(), &c) == 1).count();
        assert!((2850..3150).contains(&wins), "{wins}");
        // Memory per host: two hosts under one ToR remember their own ports.
        let mut lb = Drill::new(&DrillParams { d: 1, m: 1, memory: MemoryPer::Host, ..DrillParams::default() });
        let to = |dst: u32| Packet { dst: NodeId(dst), ..Packet::default() };
        for _ in 0..50 {
            lb.choose(&mut SwitchCtx::new(Time::ZERO, &mut rng, NodeId(7)), &mut to(3), &c);
        }
        assert_eq!(lb.memory.len(), 1);
        assert_eq!(lb.memory[&NodeId(3)].ports[0], ports[1], "host 3 converged on the least loaded port");
        lb.choose(&mut SwitchCtx::new(Time::ZERO, &mut rng, NodeId(7)), &mut to(4), &c);
        assert_eq!(lb.memory.len(), 2, "host 4, under the same ToR 7, has a memory of its own");
    }

    #[test]
    fn all_classes_counts_the_control_queue_as_load() {
        // Port 0: fewer data bytes, but ACKs queued; port 1: more data, no ACKs.
        let (ports, mut state) = idle_ports(2);
        (state[0].data_bytes, state[0].ctrl_bytes, state[1].data_bytes) = (Bytes(1_000), Bytes(1_200), Bytes(2_000));
        let c = Candidates::new(&ports, &state, &[100_000]);
        let mut rng = Rng::stream(1, "switch_lb", 0);
        let both = |load| DrillParams { d: 2, m: 0, sample: Sample::Distinct, load, ..DrillParams::default() };
        let mut data = Drill::new(&both(Load::Data));
        let mut all = Drill::new(&both(Load::AllClasses));
        assert_eq!(data.choose(&mut SwitchCtx::new(Time::ZERO, &mut rng, NodeId(7)), &mut Packet::default(), &c), 0);
        assert_eq!(all.choose(&mut SwitchCtx::new(Time::ZERO, &mut rng, NodeId(7)), &mut Packet::default(), &c), 1);
    }
}
