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

use crate::ids::{NodeId, PktId};
use crate::net::flaky::FlakyPort;
use crate::rng::Rng;
use crate::topo::{Fabric, PortSpec};
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
    /// Bytes transmitted.
    pub tx_bytes: u64,
    /// Flaky link (`[topology.failures] kind = "flaky"`): its loss-burst process and its
    /// transmit and wire-loss counters.
    pub flaky: Option<Box<FlakyPort>>,
    /// When `data_bytes` last changed.
    pub occ_since: Time,
    /// ∫ data-class bytes dt (byte·ps) up to `occ_since`. With the transmit counter and the
    /// flaky pointer it fills the third cache line, which every transmission touches anyway.
    pub occ_area: u128,
    /// Random stream for marking decisions (drawn only inside the marking ramp).
    pub rng: Rng,
    /// Packets dropped here.
    pub drops: u64,
    /// Packets trimmed here.
    pub trims: u64,
    /// Packets marked CE here.
    pub marks: u64,
    // Rarer figures live beside the port, so the state stays four cache lines (a fifth cost
    // 10–15 % of wall time on the 1024-host benchmark): pause time and count in
    // `PfcState::ingress`, transmissions and wire losses of a flaky link in its `FlakyPort`.
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
            ctrl: VecDeque::new(),
            data: VecDeque::new(),
            data_bytes: 0,
            max_data_bytes: 0,
            ctrl_bytes: 0,
            max_ctrl_bytes: 0,
            rng,
            tx_bytes: 0,
            drops: 0,
            trims: 0,
            marks: 0,
            flaky: None,
            occ_area: 0,
            occ_since: 0,
        }
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
/// degraded cables slow down (the affected directions), flaky ones get their burst process
/// (each direction its own stream, `Rng::stream(seed, "flaky", port)`, `seed` being the failures'
/// own seed where the scenario gives one).
pub(crate) fn apply_failures(fabric: &Fabric, ports: &mut [PortState], seed: u64) {
    for l in &fabric.failures {
        if l.rate.is_none() {
            for p in [l.up, l.down] {
                ports[p as usize].up = false;
            }
            continue;
        }
        for p in l.ports() {
            let ps = &mut ports[p as usize];
            if let Some(b) = l.flaky {
                ps.flaky = Some(Box::new(FlakyPort::new(b, Rng::stream(seed, "flaky", p as u64))));
            } else if let Some(r) = l.rate {
                ps.rate = r;
            }
        }
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
        // A transmission also reads the counters, the flaky pointer and the occupancy integral:
        // all on line 2.
        for o in [offset_of!(PortState, ctrl_bytes), offset_of!(PortState, tx_bytes), offset_of!(PortState, flaky), offset_of!(PortState, occ_since)] {
            assert!((128..192).contains(&o), "{o}");
        }
        assert!(offset_of!(PortState, occ_area) + 16 <= 192);
        // Four lines in all: the port array of an 8192-host fabric is 60 k ports.
        assert_eq!(size_of::<PortState>(), 256);
    }
}
