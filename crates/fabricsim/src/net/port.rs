//! Output port: a control queue (strict priority, or weighted round-robin against data with
//! `switch.control_wrr_weight`) and a data queue in front of a serializer, and the cable behind it.
//!
//! Follows htsim's queue+pipe elements (one pending event per port, never one per queued
//! packet): a port schedules `PortFree` only while it has something more to send, and each
//! transmitted packet gets one `Arrive` event at the far end, after serialization, propagation
//! and (for a switch) the forwarding latency. A host's NIC port has no data queue: it pulls the
//! next data packet from the host's connection scheduler when it is free (see `nic.rs`).

use crate::engine::queue::EventKind;
use crate::engine::Sim;
use crate::ids::{NodeId, PktId, PortId};
use crate::net::packet::{PktKind, F_CE, F_ECT, F_TRIMMED};
use crate::rng::Rng;
use crate::topo::PortSpec;
use crate::units::{BitsPerSec, Time};
use std::collections::VecDeque;

/// Run-time state of one output port. Fields touched per packet come first and the struct is
/// cache-line aligned, so forwarding a packet touches two lines of it.
#[derive(Debug)]
#[repr(C, align(64))]
pub struct PortState {
    /// When the packet being serialized finishes.
    pub busy_until: Time,
    /// Bytes in the data class.
    pub data_bytes: u64,
    /// Most bytes the data class ever held.
    pub max_data_bytes: u64,
    /// Current serialization rate (a link event may change it).
    pub rate: BitsPerSec,
    /// Time from the end of serialization to the packet being ready at the far node's output
    /// stage: propagation plus, if the far node is a switch, its forwarding latency.
    pub arrival_delay: Time,
    /// The node at the far end.
    pub peer: NodeId,
    /// The node that transmits on this port.
    pub owner: NodeId,
    /// Whether the cable carries traffic.
    pub up: bool,
    /// Whether a `PortFree` event is scheduled.
    pub free_pending: bool,
    /// Whether a host owns this port (its NIC): data comes from the host's scheduler.
    pub is_nic: bool,
    /// Whether PFC has paused the data class.
    pub paused: bool,
    /// Index of this port's queue profile in `Sim::qdisc` (static; fills the byte after the flags,
    /// so the queues start on the second cache line).
    pub qdisc: u8,
    /// Control packets sent in a row while data waited (for weighted round-robin).
    pub ctrl_streak: u32,
    /// Control class: ACKs, NACKs, trimmed headers. Served first.
    pub ctrl: VecDeque<PktId>,
    /// Data class.
    pub data: VecDeque<PktId>,
    /// Bytes in the control class.
    pub ctrl_bytes: u64,
    /// Most bytes the control class ever held.
    pub max_ctrl_bytes: u64,
    /// Random stream for marking decisions.
    pub rng: Rng,
    /// Packets transmitted.
    pub tx_pkts: u64,
    /// Bytes transmitted.
    pub tx_bytes: u64,
    /// Packets dropped here.
    pub drops: u64,
    /// Packets trimmed here.
    pub trims: u64,
    /// Packets marked CE here.
    pub marks: u64,
    /// When the current pause began.
    pub paused_since: Time,
    /// Time spent paused (completed pauses).
    pub paused_total: Time,
    /// PAUSE frames received.
    pub pauses_received: u32,
}

impl PortState {
    /// Initial state of the port described by `spec`.
    pub fn new(spec: &PortSpec, is_nic: bool, to_switch: bool, switch_latency: Time, rng: Rng) -> Self {
        PortState {
            rate: spec.rate,
            arrival_delay: spec.latency + if to_switch { switch_latency } else { 0 },
            peer: spec.peer,
            owner: spec.owner,
            up: true,
            busy_until: 0,
            free_pending: false,
            is_nic,
            paused: false,
            qdisc: 0,
            ctrl_streak: 0,
            paused_since: 0,
            paused_total: 0,
            pauses_received: 0,
            ctrl: VecDeque::new(),
            data: VecDeque::new(),
            data_bytes: 0,
            max_data_bytes: 0,
            ctrl_bytes: 0,
            max_ctrl_bytes: 0,
            rng,
            tx_pkts: 0,
            tx_bytes: 0,
            drops: 0,
            trims: 0,
            marks: 0,
        }
    }
}

impl Sim {
    /// Puts a control-class packet (ACK, NACK, trimmed header) on `port` and starts it if idle.
    #[inline]
    pub(crate) fn enqueue_ctrl(&mut self, port: PortId, pkt: PktId) {
        let size = self.pool.get(pkt).size as u64;
        let ps = &mut self.ports[port as usize];
        ps.ctrl.push_back(pkt);
        ps.ctrl_bytes += size;
        ps.max_ctrl_bytes = ps.max_ctrl_bytes.max(ps.ctrl_bytes);
        self.port_kick(port);
    }

    /// Makes sure an idle port starts sending, or a busy one will look again when free.
    #[inline]
    pub(crate) fn port_kick(&mut self, port: PortId) {
        let ps = &mut self.ports[port as usize];
        if ps.free_pending {
            return;
        }
        if ps.busy_until > self.now {
            ps.free_pending = true;
            let t = ps.busy_until;
            self.q.push(t, EventKind::PortFree, port);
            return;
        }
        self.port_start(port);
    }

    pub(crate) fn on_port_free(&mut self, port: PortId) {
        self.ports[port as usize].free_pending = false;
        self.port_start(port);
    }

    /// Picks the next packet (control first, unless the round-robin weight says data's turn has
    /// come) and serializes it.
    fn port_start(&mut self, port: PortId) {
        let owner_is_host = self.ports[port as usize].is_nic;
        let weight = self.qdisc.control_wrr_weight;
        let mut from_switch_data = None;
        let pkt = {
            let ps = &mut self.ports[port as usize];
            let data_waits = !ps.paused && !ps.data.is_empty();
            // A NIC has no data queue here (it pulls from its scheduler), so it stays strict.
            let control_turn = !ps.ctrl.is_empty() && (weight == 0 || !data_waits || ps.ctrl_streak < weight);
            if control_turn {
                let p = ps.ctrl.pop_front().expect("control class is non-empty");
                ps.ctrl_bytes -= self.pool.get(p).size as u64;
                ps.ctrl_streak = if data_waits { ps.ctrl_streak + 1 } else { 0 };
                Some(p)
            } else if ps.paused {
                None
            } else if let Some(p) = ps.data.pop_front() {
                ps.ctrl_streak = 0;
                let pk = self.pool.get_mut(p);
                ps.data_bytes -= pk.size as u64;
                if self.qdisc.profiles[ps.qdisc as usize].on_departure(ps.data_bytes, pk.flags & F_ECT != 0, &mut ps.rng) {
                    pk.flags |= F_CE;
                    ps.marks += 1;
                    self.c.ecn_marked += 1;
                }
                if !owner_is_host {
                    // The port the packet arrived over, for the PFC release below.
                    from_switch_data = Some((pk.port, pk.size as u64));
                }
                Some(p)
            } else {
                None
            }
        };
        if let Some((up, size)) = from_switch_data.filter(|_| self.pfc.on) {
            let sw = self.ports[port as usize].owner;
            self.pfc_release(sw, up, size);
        }
        let pkt = match pkt {
            Some(p) => p,
            None if owner_is_host && !self.ports[port as usize].paused => match self.nic_next_packet(self.ports[port as usize].owner) {
                Some(p) => p,
                None => return,
            },
            None => return,
        };
        let (size, now) = (self.pool.get(pkt).size as u64, self.now);
        let ps = &mut self.ports[port as usize];
        let done = now + ps.rate.tx_time(size);
        ps.busy_until = done;
        ps.tx_pkts += 1;
        ps.tx_bytes += size;
        self.c.packet_hops += 1;
        if ps.up {
            let p = self.pool.get_mut(pkt);
            p.port = port;
            p.route_hint = 0;
            self.q.push(done + ps.arrival_delay, EventKind::Arrive, pkt);
        } else {
            ps.drops += 1;
            self.drop_packet(pkt);
        }
        let ps = &self.ports[port as usize];
        let more = !ps.ctrl.is_empty() || (!ps.paused && (!ps.data.is_empty() || (owner_is_host && self.nic_has_ready(port))));
        if more {
            self.ports[port as usize].free_pending = true;
            self.q.push(done, EventKind::PortFree, port);
        }
    }

    /// Discards a packet, charging the loss to its flow and to the right counter.
    pub(crate) fn drop_packet(&mut self, pkt: PktId) {
        let p = *self.pool.get(pkt);
        if self.tracer.log_drops {
            self.tracer.drops.push((self.now, p.port, p.conn));
        }
        self.conns[p.conn as usize].drops += 1;
        match p.kind {
            PktKind::Data if p.flags & F_TRIMMED != 0 => self.c.headers_dropped += 1,
            PktKind::Data => self.c.data_dropped += 1,
            PktKind::Ack | PktKind::Nack | PktKind::Pull | PktKind::Cnp | PktKind::SeqNack | PktKind::Probe => self.c.control_dropped += 1,
        }
        self.pool.free(pkt);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::mem::{offset_of, size_of};

    #[test]
    fn queue_profile_index_shares_the_first_cache_line() {
        // Forwarding reads the flags, the profile index and both queues: lines 0 and 1.
        assert!(offset_of!(PortState, qdisc) < 64);
        assert!(offset_of!(PortState, ctrl) >= 64 && offset_of!(PortState, data) + size_of::<VecDeque<PktId>>() <= 128);
    }
}
