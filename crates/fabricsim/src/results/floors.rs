//! The least time a flow, a collective instance or a whole run can take, for the invariant
//! check "nothing finished faster than physically possible". Unlike the ideals reported beside
//! the results (`ideal_fct`, `ideal_cct`, `ideal_completion_time_us`: models for normalizing),
//! these hold on any fabric and any path a packet may take:
//! - rates are the fastest each port ever has: as built, or as a link event sets it later
//!   (the reported ideals use the host rate everywhere and the slowest equal-cost path, which a
//!   faster path, a link slower than the host links, or a link sped up mid-run beats);
//! - propagation is the links' and switches' latencies alone, on the paths as set up
//!   (re-routing only lengthens them);
//! - a collective needs its busiest rank's bus bytes serialized plus one propagation there and
//!   back, or its dependency chain of chunk hops — no pipeline-fill serialization on top, which
//!   a direct AlltoAll or a ring with several chunks per step does not pay.
//!
//! On a fabric of one rate with no link events the flow floor equals the ideal FCT exactly.

use super::collectives::CctResult;
use super::flows::{ConnPlan, FlowResult};
use crate::engine::Sim;
use crate::ids::NodeId;
use crate::scenario::{LinkAction, Setup};
use crate::topo::Fabric;
use crate::units::{BitsPerSec, Bytes, Time};
use crate::workload::graph::Instance;

/// The fastest rates of the run's ports and the paths as set up.
pub(super) struct Fastest<'a> {
    fabric: &'a Fabric,
    /// Per port: its rate as built or the fastest a link event gives it.
    port: Vec<BitsPerSec>,
    /// The fastest of all.
    any: BitsPerSec,
    mss: u64,
    header: u64,
    ack: u64,
}

impl<'a> Fastest<'a> {
    /// The fastest rates of `setup`'s run.
    pub fn of(setup: &'a Setup, sim: &Sim) -> Fastest<'a> {
        let fabric = &setup.fabric;
        let mut port: Vec<BitsPerSec> = fabric.ports.iter().map(|p| p.rate).collect();
        for ev in setup.link_events.iter().filter(|e| e.action == LinkAction::Rate) {
            for &p in &ev.ports[..if ev.one_way { 1 } else { 2 }] {
                port[p.idx()] = port[p.idx()].max(ev.rate);
            }
        }
        let any = port.iter().copied().max().unwrap_or(BitsPerSec(1));
        let tp = sim.hosts.tp;
        Fastest { fabric, port, any, mss: tp.mss as u64, header: tp.header as u64, ack: tp.ack_bytes as u64 }
    }

    /// Links and one-way propagation (link and switch latencies) from `src` to `dst`.
    fn path(&self, src: NodeId, dst: NodeId) -> (u64, Time) {
        let path = self.fabric.representative_path(src, dst);
        let latency: Time = path.iter().map(|&p| self.fabric.ports[p.idx()].latency).sum();
        (path.len() as u64, latency + (Time(path.len() as u64) - Time(1)) * self.fabric.switch_latency.0)
    }

    /// The fastest rate of host `h`'s NIC (`downlink`: of the link into it); a spraying NIC's
    /// ports together.
    fn nic(&self, h: NodeId, downlink: bool) -> BitsPerSec {
        self.fabric.nic_rate(h, downlink, |p| self.port[p.idx()])
    }

    /// The least a connection `src` → `dst` carrying `p` can take: its NIC serializes every
    /// wire byte, the last packet crosses the other links at the fastest rate, and its ACK
    /// crosses every link back; propagation both ways.
    pub fn fct(&self, src: NodeId, dst: NodeId, p: &ConnPlan) -> Time {
        let (hops, one_way) = self.path(src, dst);
        let last = p.tail + self.header;
        self.nic(src, false).tx_time(Bytes(p.wire_bytes(self.header as u32))) + (hops - 1) * self.any.tx_time(Bytes(last)) + hops * self.any.tx_time(Bytes(self.ack)) + 2 * one_way
    }

    /// The shortest one-way propagation of `sim`'s connections (0 without any).
    pub fn min_one_way(&self, sim: &Sim) -> Time {
        sim.hosts.conns.iter().map(|c| self.path(c.src, c.dst).1).min().unwrap_or(Time::ZERO)
    }

    /// The fastest host NIC.
    fn fastest_nic(&self) -> BitsPerSec {
        (0..self.fabric.hosts).map(|h| self.nic(NodeId(h), false)).max().unwrap_or(self.any)
    }

    /// The least collective instance `inst` can take, its connections at least `one_way` apart:
    /// the busiest rank serializes the bus bytes and the last byte goes there and back; or the
    /// dependency chain, each hop a chunk serialized and carried one way; plus the round trips
    /// the algorithm waits for.
    pub fn cct(&self, inst: &Instance, one_way: Time) -> Time {
        // An analytic instance is a delay of its duration.
        if let Some(d) = inst.fixed {
            return d;
        }
        let rate = self.fastest_nic();
        let wire = |b: u64| rate.tx_time(Bytes(b + b.div_ceil(self.mss) * self.header));
        let bulk = wire(inst.bus_bytes.0) + 2 * one_way;
        let chain = if inst.algorithm == "hd" {
            // Halving-doubling's steps carry S/2, S/4, ... and back: each hop its own chunk.
            let levels = inst.ranks.trailing_zeros();
            (0..levels).chain((0..levels).rev()).map(|i| wire(inst.chunk.min(inst.bytes.div_ceil(Bytes((2u64 << i) * inst.channels.max(1) as u64)))) + one_way).sum()
        } else {
            // (A channel's step: the channels share the bus bytes.)
            inst.chain_hops as u64 * (wire(inst.hop_chunk()) + one_way)
        };
        bulk.max(chain) + inst.rtt_rounds as u64 * 2 * one_way
    }

    /// The least the whole run can take from `first_start`: any flow's due time plus its floor,
    /// any collective's start plus its floor, and every bottleneck's load at its fastest rate
    /// (a host's NIC or downlink; a ToR's or pod's uplinks) plus the shortest propagation.
    pub fn completion(&self, sim: &Sim, flows: &[FlowResult], flow_plan: &[ConnPlan], plan: &[ConnPlan], ccts: &[CctResult], one_way: Time, first_start: Time) -> Time {
        let flow = flows.iter().map(|f| flow_plan[f.id as usize].due.saturating_add(self.fct(NodeId(f.src), NodeId(f.dst), &flow_plan[f.id as usize]))).max().unwrap_or(Time::ZERO);
        // An analytic instance (a delay on a scale-up domain) sends no packet, and the run's
        // completion spans its flows only: a step's last TP collective may outlast them.
        let cct = ccts.iter().filter(|c| !c.instance.is_analytic()).filter_map(|c| c.start.map(|s| s + self.cct(&c.instance, one_way))).max().unwrap_or(Time::ZERO);
        let f = self.fabric;
        let load = super::bounds::host_loads(sim, plan);
        let host = (0..f.hosts as usize).map(|h| self.nic(NodeId(h as u32), false).tx_time(Bytes(load[h].0)).max(self.nic(NodeId(h as u32), true).tx_time(Bytes(load[h].1)))).max().unwrap_or(Time::ZERO);
        let removed = f.removed_ports();
        let (tors, pods) = super::bounds::cut_bound(sim, plan, &f.pod_of_host(), |p| if removed[p] { 0 } else { self.port[p].0 });
        let links = first_start + host.max(tors).max(pods) + one_way;
        flow.max(cct).max(links).saturating_sub(first_start)
    }
}
