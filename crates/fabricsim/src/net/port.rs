//! Output port: a control queue (strict priority, or weighted round-robin against data with
//! `switch.control_wrr_weight`) and a data queue in front of a serializer, and the cable behind it.
//!
//! Follows htsim's queue+pipe elements (one pending event per port, never one per queued
//! packet): a port schedules `PortFree` only while it has something more to send, and each
//! transmitted packet gets one `Arrive` event at the far end, after serialization, propagation
//! and (for a switch) the forwarding latency. A host's NIC port has no data queue: it pulls the
//! next data packet from the host's connection scheduler when it is free (see `nic.rs`).
//!
//! This file holds the port's state; its handlers (kick, start, drop) are in
//! `engine/glue/port.rs`.

use crate::ids::NodeId;
use crate::net::flaky::FlakyPort;
use crate::net::wire_loss::{LossyPort, WireLoss};
use crate::topo::failures::LinkLoss;
use crate::net::packet_queue::PacketQueue;
use crate::rng::Rng;
use crate::topo::{Fabric, PortSpec};
use crate::units::{BitsPerSec, Time};

/// Run-time state of one output port, cache-line aligned. Everything that forwarding a packet
/// reads or writes is on the first two lines (line 0: timing, flags, the control queue; line 1:
/// counters, the occupancy integral, the data queue); line 2 holds what only marking and
/// losses touch. [`PortState::prefetch`] requests the two hot lines.
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
    /// The node that transmits on this port.
    pub owner: NodeId,
    /// Control packets sent in a row while data waited (for weighted round-robin).
    pub ctrl_streak: u32,
    /// Control class: ACKs, NACKs, trimmed headers. Served first.
    pub ctrl: PacketQueue,
    /// Whether the cable carries traffic.
    pub up: bool,
    /// Whether a `PortFree` event is scheduled.
    pub free_pending: bool,
    /// Whether a host owns this port (its NIC): data comes from the host's scheduler.
    pub is_nic: bool,
    /// Whether PFC has paused the data class.
    pub paused: bool,
    /// Index of this port's queue profile in `Sim::qdisc` (static).
    pub qdisc: u8,
    /// ∫ data-class bytes dt (byte·ps) up to `occ_since` (first on line 1, for its alignment).
    pub occ_area: u128,
    /// When `data_bytes` last changed.
    pub occ_since: Time,
    /// Bytes in the control class.
    pub ctrl_bytes: u64,
    /// Most bytes the control class ever held.
    pub max_ctrl_bytes: u64,
    /// Bytes transmitted.
    pub tx_bytes: u64,
    /// Flaky or lossy link (`[topology.failures] kind = "flaky"`, `"loss"`, `"bursty_loss"`):
    /// its loss process and its transmit and wire-loss counters.
    pub wire_loss: Option<Box<WireLoss>>,
    /// Data class.
    pub data: PacketQueue,
    /// Random stream for marking decisions (drawn only inside the marking ramp).
    pub rng: Rng,
    /// Packets dropped here.
    pub drops: u64,
    /// Packets trimmed here.
    pub trims: u64,
    /// Packets marked CE here.
    pub marks: u64,
    /// The node at the far end (for switch-side selectors; the hot path reads
    /// `Network::port_peer`).
    pub peer: NodeId,
    // Rarer figures live beside the port, so the state stays three cache lines: pause time and
    // count in `PfcState::ingress`, transmissions and wire losses of a flaky link in its
    // `FlakyPort`.
}

impl PortState {
    /// Initial state of the port described by `spec`.
    pub fn new(spec: &PortSpec, is_nic: bool, to_switch: bool, switch_latency: Time, rng: Rng) -> Self {
        PortState {
            rate: spec.rate,
            arrival_delay: spec.latency + if to_switch { switch_latency } else { 0 },
            owner: spec.owner,
            peer: spec.peer,
            up: true,
            busy_until: 0,
            free_pending: false,
            is_nic,
            paused: false,
            qdisc: 0,
            ctrl_streak: 0,
            ctrl: PacketQueue::default(),
            data: PacketQueue::default(),
            data_bytes: 0,
            max_data_bytes: 0,
            ctrl_bytes: 0,
            max_ctrl_bytes: 0,
            rng,
            tx_bytes: 0,
            drops: 0,
            trims: 0,
            marks: 0,
            wire_loss: None,
            occ_area: 0,
            occ_since: 0,
        }
    }

    /// Hints the CPU to load the two lines that forwarding a packet touches.
    #[inline]
    pub fn prefetch(&self) {
        crate::hint::prefetch(self);
        crate::hint::prefetch(&self.occ_area);
    }

    /// Accounts the data-class occupancy up to `now`; call before every change of `data_bytes`.
    #[inline]
    pub fn occupancy_to(&mut self, now: Time) {
        self.occ_area += self.data_bytes as u128 * (now - self.occ_since) as u128;
        self.occ_since = now;
    }

    /// ∫ data-class bytes dt (byte·ps) from 0 to `now`.
    pub fn occupancy_area(&self, now: Time) -> u128 {
        self.occ_area + self.data_bytes as u128 * now.saturating_sub(self.occ_since) as u128
    }
}

/// Applies a fabric's static failures to the engine's port state: removed cables go down,
/// degraded cables slow down (the affected directions), flaky ones get their burst process and
/// lossy ones their loss channel (each direction its own stream, `Rng::stream(seed, "flaky",
/// port)` or `Rng::stream(seed, "wire_loss", port)`, `seed` being its failure entry's own seed
/// where the scenario gives one, else the master seed).
pub(crate) fn apply_failures(fabric: &Fabric, ports: &mut [PortState]) {
    for l in &fabric.failures {
        let Some(rate) = l.rate else {
            for p in [l.up, l.down] {
                ports[p as usize].up = false;
            }
            continue;
        };
        for p in l.ports() {
            let ps = &mut ports[p as usize];
            let stream = |name| Rng::stream(l.seed, name, p as u64);
            match l.loss {
                Some(LinkLoss::Bursts(b)) => ps.wire_loss = Some(Box::new(WireLoss::bursts(FlakyPort::new(b, stream("flaky"))))),
                Some(LinkLoss::Channel(c)) => ps.wire_loss = Some(Box::new(WireLoss::channel(LossyPort::new(c, stream("wire_loss"))))),
                None => ps.rate = rate,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::mem::{offset_of, size_of};

    #[test]
    fn forwarding_touches_two_cache_lines() {
        let on_line = |line: usize, offset: usize, size: usize| offset >= 64 * line && offset + size <= 64 * (line + 1);
        // Line 0: timing, flags, profile index, control queue.
        for (o, n) in [(offset_of!(PortState, busy_until), 8), (offset_of!(PortState, arrival_delay), 8), (offset_of!(PortState, ctrl_streak), 4), (offset_of!(PortState, ctrl), size_of::<PacketQueue>()), (offset_of!(PortState, qdisc), 1)] {
            assert!(on_line(0, o, n), "{o}");
        }
        // Line 1: counters, the flaky pointer, the occupancy integral, data queue.
        for (o, n) in [(offset_of!(PortState, occ_area), 16), (offset_of!(PortState, ctrl_bytes), 8), (offset_of!(PortState, max_ctrl_bytes), 8), (offset_of!(PortState, tx_bytes), 8), (offset_of!(PortState, wire_loss), 8), (offset_of!(PortState, data), size_of::<PacketQueue>())] {
            assert!(on_line(1, o, n), "{o}");
        }
        // Three lines in all: the port array of an 8192-host fabric is 60 k ports.
        assert_eq!(size_of::<PortState>(), 192);
    }
}
