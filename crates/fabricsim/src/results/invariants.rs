//! End-of-run self-checks. A violation is a simulator or scheme bug; the run reports it as an
//! error rather than returning numbers nobody should trust.

use crate::engine::{Counters, Sim};
use crate::net::packet::PktKind;
use crate::scenario::Setup;
use crate::units::{Bytes, Time};
use crate::workload::graph::{TaskKind, Trigger};

/// Returns one message per violated invariant.
pub fn check(sim: &Sim, setup: &Setup) -> Vec<String> {
    let mut v = Vec::new();
    let c = &sim.k.c;
    // Every idle connection delivered each posted payload byte exactly once (duplicates are
    // discarded and counted, never delivered twice). A mode that sends past the posted data
    // (erasure coding's extra symbols, `extra_pkts`) may deliver up to those packets' payload
    // more, but never less.
    let mss = sim.hosts.tp.mss as u64;
    for (i, (conn, r)) in sim.hosts.conns.iter().zip(&sim.hosts.rx).enumerate() {
        let extra = conn.extra_pkts as u64 * mss;
        if conn.idle() && (r.bytes < Bytes(conn.size) || (extra == 0 && r.bytes != Bytes(conn.size))) {
            v.push(format!("connection {i} is idle but its receiver got {} of {} posted bytes", r.bytes, conn.size));
        }
        if r.bytes > Bytes(conn.size + extra) {
            v.push(format!("connection {i} delivered {} bytes, more than the {} bytes posted (+ {extra} extra)", r.bytes, conn.size));
        }
        if conn.idle() && conn.in_flight != 0 {
            v.push(format!("connection {i} is idle with {} bytes still counted in flight", conn.in_flight));
        }
    }
    // Per-flow data counts add up to the run's (flows.csv `data_sent`, `data_lost`).
    let data = crate::net::packet::PktKind::Data;
    let flow_sent: u64 = sim.hosts.conns.iter().zip(&sim.hosts.stats).map(|(c, s)| c.next_seq as u64 + s.retransmits as u64).sum();
    if flow_sent != c.sent[data] {
        v.push(format!("flows sent {flow_sent} data packets in all, the hosts {}", c.sent[data]));
    }
    let flow_lost: u64 = sim.net.path_counts.iter().map(|c| c.data_drops as u64 + c.trims as u64).sum();
    let lost = c.dropped[data] - c.headers_dropped + c.data_trimmed;
    if flow_lost != lost {
        v.push(format!("flows lost {flow_lost} data packets in all, the fabric {lost}"));
    }
    // Dependencies: no task fired (a send: handed its parts to their gates) before every
    // dependency it waits for had fired.
    let t = &sim.tasks;
    for (from, _) in sim.traffic.tasks.iter().enumerate() {
        for e in sim.traffic.edges_of(from as u32) {
            let src_time = match (&sim.traffic.tasks[from].kind(), e.on) {
                (TaskKind::Send { .. }, Trigger::Delivered) => t.delivered_at[from],
                (TaskKind::Send { .. }, Trigger::Completed) => t.completed_at[from],
                _ => t.fired_at(from),
            };
            let to_time = t.fired_at(e.to as usize);
            if to_time != Time::MAX && (src_time == Time::MAX || to_time < src_time + e.delay) {
                v.push(format!("task {} fired at {to_time} ps before its dependency on task {from} was met", e.to));
                break;
            }
        }
        if v.len() > 20 {
            break;
        }
    }
    // No data queue ever held more than its own profile's buffer (the larger of its build-time
    // and its current one: a `scale_queue` link event may have shrunk it under a fuller queue).
    for (p, ps) in sim.net.ports.iter().enumerate() {
        let buffer = setup.qdisc.profiles[ps.qdisc as usize].buffer_bytes.max(setup.qdisc.profiles[setup.qdisc.port_profile[p] as usize].buffer_bytes);
        if ps.max_data_bytes > buffer {
            v.push(format!("port {p} held {} data bytes, above its {} byte buffer", ps.max_data_bytes, buffer));
        }
    }
    // PFC: lossless (no data packet lost for lack of buffer) and no switch over its buffer.
    if sim.net.pfc.on {
        if c.buffer_drops != 0 {
            v.push(format!("PFC fabric dropped {} data packets for lack of buffer (headroom overflow): not lossless", c.buffer_drops));
        }
        for (i, b) in sim.net.pfc.switches.iter().enumerate() {
            if b.max_used > b.size {
                v.push(format!("switch {} buffered {} bytes, above its {} byte buffer", sim.net.fabric.hosts + i as u32, b.max_used, b.size));
            }
        }
    }
    let (done, total) = (sim.tasks.sends_completed as usize, sim.traffic.sends.len());
    if done == total && !sim.cut_short() {
        // Conservation, per packet kind (the kind table in kernel/packet.rs): every packet a host
        // sent reached its destination host (whole or trimmed) or was dropped on the way.
        v.extend(unconserved_kinds(c));
        // Every trimmed header reached its receiver, which NACKed it, or was returned to its
        // sender and arrived there, or was dropped.
        let nacks = c.sent[PktKind::Nack];
        if c.data_trimmed != nacks + c.bounces_returned + c.headers_dropped {
            v.push(format!(
                "trimmed headers not conserved: {} trimmed != {nacks} NACKed + {} returned to their sender + {} dropped",
                c.data_trimmed, c.bounces_returned, c.headers_dropped
            ));
        }
        if sim.net.pfc.on && sim.net.pfc.charged_bytes() != 0 {
            v.push(format!("PFC accounting holds {} bytes after the network drained", sim.net.pfc.charged_bytes()));
        }
        if sim.k.pool.live() != 0 {
            v.push(format!("{} packets still in the network after every flow finished", sim.k.pool.live()));
        }
    } else if let Some((since, at)) = sim.stalled {
        // A loss only the timeout finds is resent after the RTO: with an RTO at least the
        // stall limit, the guard stops such a run first, and the user should know why.
        let rto = sim.hosts.tp.rto;
        let rto_hint = if rto >= at - since {
            format!(" (the retransmission timeout, {:.3} µs, is not shorter: a loss only the timeout finds is not resent before the guard stops the run)", rto.0 as f64 / 1e6)
        } else {
            String::new()
        };
        v.push(format!(
            "livelock: no payload byte acknowledged from {:.3} to {:.3} µs while messages were outstanding ({} of {} messages unfinished, {} packets trimmed, {} data and {} control packets dropped so far); \
             raise run.stall_limit_us if the scenario really pauses this long{rto_hint}",
            since.0 as f64 / 1e6,
            at.0 as f64 / 1e6,
            total - done,
            total,
            c.data_trimmed,
            c.dropped[PktKind::Data] - c.headers_dropped,
            // ACKs, NACKs and trimmed headers: a control lane too small for them stalls a run
            // whose data all arrives.
            c.dropped.sum_where(|k| k != PktKind::Data) + c.headers_dropped
        ));
    } else if !sim.cut_short() {
        v.push(format!(
            "{} of {} messages never finished and no event was left to run (deadlock)",
            total - done,
            total
        ));
    }
    v
}

/// One message per packet kind whose hosts sent a different number of packets than arrived
/// plus were dropped (meaningful once the network has drained).
fn unconserved_kinds(c: &Counters) -> Vec<String> {
    PktKind::ALL
        .iter()
        .filter(|&&k| c.sent[k] != c.arrived[k] + c.dropped[k])
        .map(|&k| format!("{} packets not conserved: sent {} != arrived {} + dropped {}", k.name(), c.sent[k], c.arrived[k], c.dropped[k]))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_is_checked_for_conservation() {
        let mut c = Counters::default();
        for &k in PktKind::ALL {
            c.sent[k] = 10;
            c.arrived[k] = 7;
            c.dropped[k] = 3;
        }
        assert!(unconserved_kinds(&c).is_empty());
        // A packet of any kind that vanished is reported under its kind's name.
        for &k in PktKind::ALL {
            let mut lost = c;
            lost.arrived[k] -= 1;
            let v = unconserved_kinds(&lost);
            assert_eq!(v.len(), 1, "{v:?}");
            assert!(v[0].starts_with(&format!("{} packets not conserved: sent 10 != arrived 6 + dropped 3", k.name())), "{v:?}");
        }
    }
}
