//! Per-flow rows (`flows.csv`): what the workload puts on each connection, when it started and
//! finished, and its ideal completion time on an idle fabric. Under a message shaper a row is
//! an application flow instead, over the sub-QPs (connections) that carried it
//! (seqbalance §2.2.4, §5.2 "Metrics").

use crate::engine::Sim;
use crate::units::{BitsPerSec, Bytes, Time};
use serde::Serialize;

/// Outcome of one flow (one connection, which may carry several messages).
#[derive(Clone, Debug, Serialize)]
pub struct FlowResult {
    /// Index in the workload (the connection id).
    pub id: u32,
    /// Sending host.
    pub src: u32,
    /// Receiving host.
    pub dst: u32,
    /// Payload bytes (of every message the workload puts on the connection).
    pub bytes: u64,
    /// Start time (ps): first message posted (or due, if none was).
    pub start: Time,
    /// Time the sender saw the last byte acknowledged (ps), if every message finished.
    pub finish: Option<Time>,
    /// Completion time on an idle fabric (ps): all wire bytes at the host rate plus the path's
    /// remaining latency for the last packet and its ACK.
    pub ideal_fct: Time,
    /// Data packets retransmitted.
    pub retransmits: u32,
    /// Data packets trimmed in the fabric.
    pub trims: u32,
    /// Packets (data or ACK) dropped in the fabric.
    pub drops: u32,
    /// ACKs that echoed ECN.
    pub ecn_acks: u32,
    /// Retransmission timer expiries that declared packets lost.
    pub timeouts: u32,
    /// Data packets those expiries declared lost.
    pub timeout_lost: u32,
    /// Data packets sent: first transmissions (coded symbols beyond the message included) plus
    /// retransmissions.
    pub data_sent: u32,
    /// Data packets that did not arrive whole: dropped anywhere or trimmed (lb-ai-training
    /// §5.5 loss rate numerator).
    pub data_lost: u32,
    /// Data packets that reached the receiver again after it already held them: spurious
    /// retransmissions (lb-ai-training §5.5).
    pub duplicates: u32,
    /// Fast retransmits (recoveries started by duplicate ACKs; `tcp` modes).
    pub fast_retransmits: u32,
    /// NACKs (trimming and sequence) and returned headers (return-to-sender) the sender acted
    /// on; not written to flows.csv.
    #[serde(skip)]
    pub nacks: u32,
    /// Data packets of the flow that a switch re-routed (sent elsewhere than the flow's hashed
    /// or remembered port), counted per switch hop; `None` unless some switch runs a scheme that
    /// counts re-routes (`SwitchLb::counts_reroutes`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reroutes: Option<u32>,
    /// Connections (sub-QPs) that carried the flow; `None` unless a message shaper is active
    /// (`[transport.shaper]`), whose rows are application flows.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub subflows: Option<u32>,
    /// Completion time against the flow's max-min fair share of its host links (ps;
    /// [`super::fair_share`]); `None` for collective workloads.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fair_ideal_fct: Option<Time>,
}

impl FlowResult {
    /// Lost data packets over data packets sent (0 for a flow that sent none).
    pub fn loss_rate(&self) -> f64 {
        self.data_lost as f64 / self.data_sent.max(1) as f64
    }

    /// Flow completion time (ps).
    pub fn fct(&self) -> Option<Time> {
        self.finish.map(|f| f - self.start)
    }

    /// FCT divided by the ideal FCT.
    pub fn slowdown(&self) -> Option<f64> {
        self.fct().map(|f| f.0 as f64 / self.ideal_fct.0 as f64)
    }

    /// FCT divided by the fair-share ideal FCT, where there is one.
    pub fn fair_slowdown(&self) -> Option<f64> {
        self.fct().zip(self.fair_ideal_fct).map(|(f, i)| f.0 as f64 / i.0 as f64)
    }
}

/// What the workload puts on one connection, over all its messages.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct ConnPlan {
    /// Payload bytes.
    pub bytes: u64,
    /// Data packets (at least one per message).
    pub pkts: u64,
    /// Payload of the last message's last packet.
    pub tail: u64,
    /// Earliest due time of its messages (`Time::MAX` when it carries none).
    pub due: Time,
}

impl ConnPlan {
    /// Bytes on the wire: payload plus a `header` per packet.
    pub fn wire_bytes(&self, header: u32) -> u64 {
        self.bytes + self.pkts * header as u64
    }

    /// One message of `bytes` in `mss`-byte packets, due at `due`.
    fn unsplit(bytes: u64, mss: u64, due: Time) -> ConnPlan {
        let pkts = bytes.div_ceil(mss).max(1);
        ConnPlan { bytes, pkts, tail: bytes - (pkts - 1) * mss, due }
    }
}

/// The plan of every connection of `sim`'s workload.
pub(super) fn plan(sim: &Sim) -> Vec<ConnPlan> {
    let mss = sim.hosts.tp.mss as u64;
    let traffic = &sim.traffic;
    let mut plan = vec![ConnPlan { bytes: 0, pkts: 0, tail: 0, due: Time::MAX }; traffic.conns.len()];
    for msg in traffic.messages() {
        let p = &mut plan[msg.conn as usize];
        let m = ConnPlan::unsplit(msg.bytes.0, mss, traffic.tasks[msg.task as usize].not_before());
        p.bytes += m.bytes;
        p.pkts += m.pkts;
        p.tail = m.tail;
        p.due = p.due.min(m.due);
    }
    plan
}

/// One row per connection of `sim`.
pub(super) fn rows(sim: &Sim, plan: &[ConnPlan]) -> Vec<FlowResult> {
    use crate::net::switch_lb::SwitchLb;
    let reroutes_counted = sim.net.switch_lb.iter().any(|s| s.counts_reroutes());
    let mut flows = Vec::with_capacity(sim.hosts.conns.len());
    for (i, c) in sim.hosts.conns.iter().enumerate() {
        let p = &plan[i];
        let path = &sim.net.path_counts[i];
        let stats = &sim.hosts.stats[i];
        let finished = c.idle() && c.size == p.bytes;
        flows.push(FlowResult {
            id: i as u32,
            src: c.src.0,
            dst: c.dst.0,
            bytes: p.bytes,
            start: if c.started { c.start } else { p.due },
            finish: if finished { c.finish } else { None },
            ideal_fct: conn_ideal_fct(sim, i, p),
            retransmits: stats.retransmits,
            trims: path.trims,
            drops: path.drops,
            ecn_acks: stats.ecn_acks,
            timeouts: stats.timeouts,
            timeout_lost: stats.timeout_lost,
            data_sent: c.next_seq + stats.retransmits,
            data_lost: path.data_drops + path.trims,
            duplicates: sim.hosts.rx[i].duplicates,
            fast_retransmits: stats.fast_retransmits,
            nacks: stats.nacks,
            reroutes: reroutes_counted.then_some(path.reroutes),
            subflows: None,
            fair_ideal_fct: None,
        });
    }
    flows
}

/// The ideal FCT of connection `i` of `sim` carrying `p`.
fn conn_ideal_fct(sim: &Sim, i: usize, p: &ConnPlan) -> Time {
    let (tp, c) = (sim.hosts.tp, &sim.hosts.conns[i]);
    let host_rate = super::bounds::link_rate(sim, c.src, false);
    let hops = crate::engine::hop_count(&sim.net.fabric, c.src, c.dst) as u64;
    ideal_fct(p, host_rate, tp.mss, tp.header, c.base_rtt, hops)
}

/// Under a message shaper, one row per application flow out of the per-connection `conns`
/// rows (planned as `plan`), and each app flow's plan (its sub-QPs' packets added up); without
/// one, the rows and plan as they are.
pub(super) fn app_flows(sim: &Sim, conns: Vec<FlowResult>, plan: &[ConnPlan]) -> (Vec<FlowResult>, Vec<ConnPlan>) {
    let traffic = &sim.traffic;
    if traffic.app_flows.is_empty() {
        return (conns, plan.to_vec());
    }
    let mss = sim.hosts.tp.mss as u64;
    let flows = traffic.app_flows.len() - 1;
    let (mut rows, mut plans) = (Vec::with_capacity(flows), Vec::with_capacity(flows));
    for f in 0..flows {
        let range = traffic.conns_of_app_flow(f);
        let (first, parts) = (range.start, &conns[range.clone()]);
        let mut p = plan[first];
        for q in &plan[first + 1..range.end] {
            (p.bytes, p.pkts, p.tail, p.due) = (p.bytes + q.bytes, p.pkts + q.pkts, q.tail, p.due.min(q.due));
        }
        let sum = |field: fn(&FlowResult) -> u32| parts.iter().map(field).sum::<u32>();
        rows.push(FlowResult {
            id: f as u32,
            src: parts[0].src,
            dst: parts[0].dst,
            bytes: p.bytes,
            start: parts.iter().map(|r| r.start).min().unwrap_or(p.due),
            //= seqbalance §2.2.4; type=assumption
            //# FCT = t(last sub-WQE ACK received at sender) − w.t_post
            finish: parts.iter().map(|r| r.finish).collect::<Option<Vec<Time>>>().and_then(|t| t.into_iter().max()),
            //= seqbalance §5.2 (Metrics); type=assumption
            //# For SeqBalance, use the same ideal as the unsplit flow.
            ideal_fct: conn_ideal_fct(sim, first, &ConnPlan::unsplit(p.bytes, mss, p.due)),
            retransmits: sum(|r| r.retransmits),
            trims: sum(|r| r.trims),
            drops: sum(|r| r.drops),
            ecn_acks: sum(|r| r.ecn_acks),
            timeouts: sum(|r| r.timeouts),
            timeout_lost: sum(|r| r.timeout_lost),
            data_sent: sum(|r| r.data_sent),
            data_lost: sum(|r| r.data_lost),
            duplicates: sum(|r| r.duplicates),
            fast_retransmits: sum(|r| r.fast_retransmits),
            nacks: sum(|r| r.nacks),
            reroutes: parts[0].reroutes.map(|_| sum(|r| r.reroutes.unwrap_or(0))),
            subflows: Some(parts.len() as u32),
            fair_ideal_fct: None,
        });
        plans.push(p);
    }
    (rows, plans)
}

/// Completion time on an idle fabric of a connection carrying `p`, sent at `host_rate` with
/// `mss`-byte payloads and `header`-byte headers over `hops` links whose RTT with full packets
/// is `path_rtt`.
pub(super) fn ideal_fct(p: &ConnPlan, host_rate: BitsPerSec, mss: u32, header: u32, path_rtt: Time, hops: u64) -> Time {
    let last = p.tail + header as u64;
    let mtu = (mss + header) as u64;
    // Every message's own last packet may be short: count the real wire bytes, not full
    // packets (a lower bound must not charge a connection of many messages for padding).
    let wire = p.wire_bytes(header);
    // The path RTT counts one host-link serialization of a full packet; swap it for the
    // whole flow's serialization, and count the last packet's size on the other hops.
    host_rate.tx_time(Bytes(wire)) + path_rtt - hops * host_rate.tx_time(Bytes(mtu)) + (hops - 1) * host_rate.tx_time(Bytes(last))
}

#[cfg(test)]
pub(super) mod tests {
    use super::{ideal_fct, ConnPlan, FlowResult};
    use crate::units::{BitsPerSec, Time};

    /// A flow row with the given times (ps) and counters 1..=5.
    pub fn row(id: u32, start: u64, finish: Option<u64>, ideal_fct: u64) -> FlowResult {
        FlowResult { id, src: 0, dst: 1, bytes: 10_000, start: Time(start), finish: finish.map(Time), ideal_fct: Time(ideal_fct), retransmits: 1, trims: 2, drops: 3, ecn_acks: 4, timeouts: 5, timeout_lost: 10, data_sent: 6, data_lost: 7, duplicates: 8, fast_retransmits: 9, nacks: 0, reroutes: None, subflows: None, fair_ideal_fct: None }
    }

    #[test]
    fn fct_and_slowdown_of_a_crafted_row() {
        let f = row(0, 1_000_000, Some(4_000_000), 1_500_000);
        assert_eq!(f.fct(), Some(Time(3_000_000)));
        assert_eq!(f.slowdown(), Some(2.0));
        let unfinished = row(0, 1_000_000, None, 1_500_000);
        assert_eq!((unfinished.fct(), unfinished.slowdown()), (None, None));
    }

    #[test]
    fn ideal_fct_of_a_three_packet_flow() {
        // 10 000 B with 4032 B payloads: 3 packets, the last carrying 10 000 - 2 × 4032 = 1936 B
        // (2000 B on the wire); 2 × 4096 + 2000 = 10 192 wire bytes.
        let p = ConnPlan { bytes: 10_000, pkts: 3, tail: 1_936, due: Time::ZERO };
        assert_eq!(p.wire_bytes(64), 10_192);
        // At 100 Gb/s (10 ps a bit): the flow serializes in 815 360 ps; the path RTT of
        // 9 331 200 ps counts one 4096 B serialization (327 680 ps) on each of 4 hops, replaced
        // by the last packet's 160 000 ps on the 3 hops after the first:
        // 815 360 + 9 331 200 - 4 × 327 680 + 3 × 160 000 = 9 315 840.
        assert_eq!(ideal_fct(&p, BitsPerSec::from_gbps(100.0), 4032, 64, Time(9_331_200), 4), Time(9_315_840));
    }
}
