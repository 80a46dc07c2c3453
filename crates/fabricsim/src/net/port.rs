//! Output port: a control queue (strict priority, or weighted round-robin against data with
//! `switch.control_wrr_weight`) and a data queue in front of a serializer, and the cable behind it.
//!
//! Follows htsim's queue+pipe elements (one pending event per port, never one per queued
//! packet): a port schedules `PortFree` only while it has something more to send, and each
//! transmitted packet gets one `Arrive` event at the far end, after serialization, propagation
//! and (for a switch) the forwarding latency. A host's NIC port has no data queue: it pulls the
//! next data packet from the host's connection scheduler when it is free (see `nic.rs`).
//!
//! This file holds the port's state and its handlers (queue, kick, take the next packet,
//! transmit, drop), which are methods of the [`Network`] and get the narrow [`Kernel`].

use crate::kernel::store::Store;
use crate::kernel::Kernel;
use super::Network;
use crate::ids::{NodeId, PktId, PortId};
use crate::kernel::packet::{Class, PktKind, F_ECT, F_TRIMMED};
use crate::kernel::packet_log::PacketEvent;
use crate::kernel::queue::EventKind;
use crate::kernel::telemetry::IntHop;
use crate::net::flaky::FlakyPort;
use crate::net::wire_loss::{LossyPort, WireLoss};
use crate::topo::failures::LinkLoss;
use crate::net::packet_queue::PacketQueue;
use crate::rng::Rng;
use crate::topo::{Fabric, PortSpec};
use crate::units::{BitsPerSec, Bytes, Time};

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
    pub data_bytes: Bytes,
    /// Most bytes the data class ever held.
    pub max_data_bytes: Bytes,
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
    pub ctrl_bytes: Bytes,
    /// Most bytes the control class ever held.
    pub max_ctrl_bytes: Bytes,
    /// Bytes transmitted.
    pub tx_bytes: Bytes,
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
            arrival_delay: spec.latency + if to_switch { switch_latency } else { Time::ZERO },
            owner: spec.owner,
            peer: spec.peer,
            up: true,
            busy_until: Time::ZERO,
            free_pending: false,
            is_nic,
            paused: false,
            qdisc: 0,
            ctrl_streak: 0,
            ctrl: PacketQueue::default(),
            data: PacketQueue::default(),
            data_bytes: Bytes::ZERO,
            max_data_bytes: Bytes::ZERO,
            ctrl_bytes: Bytes::ZERO,
            max_ctrl_bytes: Bytes::ZERO,
            rng,
            tx_bytes: Bytes::ZERO,
            drops: 0,
            trims: 0,
            marks: 0,
            wire_loss: None,
            occ_area: 0,
            occ_since: Time::ZERO,
        }
    }

    /// Hints the CPU to load the two lines that forwarding a packet touches.
    #[inline]
    pub fn prefetch(&self) {
        crate::hint::prefetch(self);
        crate::hint::prefetch(&self.occ_area);
    }

    /// Hints the CPU to load the line of the port's random stream and loss counters (line 2),
    /// which marking and trimming touch. Reads the hot lines [`PortState::prefetch`] requested.
    #[inline]
    pub fn prefetch_marking(&self) {
        crate::hint::prefetch(&self.rng);
    }

    /// Accounts the data-class occupancy up to `now`; call before every change of `data_bytes`.
    #[inline]
    pub fn occupancy_to(&mut self, now: Time) {
        self.occ_area += self.data_bytes.0 as u128 * (now - self.occ_since).0 as u128;
        self.occ_since = now;
    }

    /// ∫ data-class bytes dt (byte·ps) from 0 to `now`.
    pub fn occupancy_area(&self, now: Time) -> u128 {
        self.occ_area + self.data_bytes.0 as u128 * now.saturating_sub(self.occ_since).0 as u128
    }
}

/// Whether a kicked port should start sending now (it is idle) or will look again when free.
#[must_use]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kick {
    /// Idle: start it now.
    StartNow,
    /// Busy, with a `PortFree` already scheduled or scheduled now.
    Later,
}

// The port's handlers. A switch's port is driven entirely here; a NIC's port asks its host's
// scheduler for data when its queues are empty, so the engine (`engine/dispatch.rs`) composes
// [`Network::take_next`], the host's scheduler and [`Network::transmit`] for it.
impl<L: crate::kernel::store::Layout> Network<L> {
    /// Puts a control-class packet (ACK, NACK, trimmed header) on `port`'s control queue.
    #[inline]
    pub fn queue_ctrl(&mut self, k: &mut Kernel, port: PortId, pkt: PktId) {
        let size = k.pool.get(pkt).size as u64;
        let ps = &mut self.ports[port.idx()];
        ps.ctrl.push_back(&mut k.pool, pkt);
        ps.ctrl_bytes += Bytes(size);
        ps.max_ctrl_bytes = ps.max_ctrl_bytes.max(ps.ctrl_bytes);
    }

    /// Queues a packet a host created on its NIC port `port`, in the class its kind travels in
    /// (the kind table in `kernel/packet.rs`). Data proper does not come this way: the NIC pulls
    /// it from its scheduler when the link is free.
    #[inline]
    pub fn queue_from_host(&mut self, k: &mut Kernel, port: PortId, pkt: PktId) {
        let p = k.pool.get(pkt);
        match self.class.of(p.kind) {
            Class::Control => self.queue_ctrl(k, port, pkt),
            Class::Data => {
                // Waits behind the NIC's current packet.
                let size = p.size as u64;
                let ps = &mut self.ports[port.idx()];
                ps.occupancy_to(k.now);
                ps.data.push_back(&mut k.pool, pkt);
                ps.data_bytes += Bytes(size);
            }
        }
    }

    /// Puts control packet `pkt` on switch port `out` and starts the port if idle.
    #[inline]
    pub(super) fn enqueue_ctrl(&mut self, k: &mut Kernel, out: PortId, pkt: PktId) {
        self.queue_ctrl(k, out, pkt);
        self.kick_switch_port(k, out);
    }

    /// Makes sure a port starts sending if it is idle ([`Kick::StartNow`]: the caller starts
    /// it), or will look again when free.
    #[inline(always)]
    pub fn kick(&mut self, k: &mut Kernel, port: PortId) -> Kick {
        let ps = &mut self.ports[port.idx()];
        if ps.free_pending {
            return Kick::Later;
        }
        if ps.busy_until > k.now {
            ps.free_pending = true;
            let t = ps.busy_until;
            k.q.push(t, EventKind::PortFree, port.0);
            return Kick::Later;
        }
        Kick::StartNow
    }

    /// [`Network::kick`] for a switch's port, which starts itself.
    #[inline]
    pub(super) fn kick_switch_port(&mut self, k: &mut Kernel, port: PortId) {
        debug_assert!(!self.ports[port.idx()].is_nic, "a switch queues on its own ports only");
        if self.kick(k, port) == Kick::StartNow {
            self.start_switch_port(k, port);
        }
    }

    /// A switch's port is free (its `PortFree` event), or was kicked while idle: it sends its
    /// next packet, if any.
    #[inline(never)]
    pub fn start_switch_port(&mut self, k: &mut Kernel, port: PortId) {
        if let Some(pkt) = self.take_next(k, port) {
            let done = self.transmit(k, port, pkt);
            if self.has_backlog(port) {
                self.free_again_at(k, port, done);
            }
        }
    }

    /// Takes the next packet to serialize from `port`'s queues: control first, unless the
    /// round-robin weight says data's turn has come; nothing while PFC pauses data and no
    /// control waits. A switch's data packet releases its PFC buffer and gets its INT record
    /// as it leaves.
    #[inline(always)]
    pub fn take_next(&mut self, k: &mut Kernel, port: PortId) -> Option<PktId> {
        let weight = self.qdisc.control_wrr_weight;
        let mut from_switch_data = None;
        let pkt = {
            let ps = &mut self.ports[port.idx()];
            let data_waits = !ps.paused && !ps.data.is_empty();
            // A NIC has no data queue here (it pulls from its scheduler), so it stays strict.
            let control_turn = !ps.ctrl.is_empty() && (weight == 0 || !data_waits || ps.ctrl_streak < weight);
            if control_turn {
                let p = ps.ctrl.pop_front(&mut k.pool).expect("control class is non-empty");
                ps.ctrl_bytes -= Bytes(k.pool.get(p).size as u64);
                ps.ctrl_streak = if data_waits { ps.ctrl_streak + 1 } else { 0 };
                Some(p)
            } else if ps.paused {
                None
            } else if let Some(p) = ps.data.pop_front(&mut k.pool) {
                ps.ctrl_streak = 0;
                let pk = k.pool.get_mut(p);
                ps.occupancy_to(k.now);
                ps.data_bytes -= Bytes(pk.size as u64);
                if self.qdisc.profiles[ps.qdisc as usize].on_departure(ps.data_bytes.0, pk.flags & F_ECT != 0, &mut ps.rng) {
                    k.c.mark_ce(&mut pk.flags);
                    ps.marks += 1;
                }
                if !ps.is_nic {
                    // The port the packet arrived over, for the PFC release below.
                    from_switch_data = Some((pk.port, pk.size as u64));
                }
                Some(p)
            } else {
                None
            }
        };
        if let Some((up, size)) = from_switch_data.filter(|_| self.pfc.on) {
            let sw = self.ports[port.idx()].owner;
            self.pfc_release(k, sw, up, size);
        }
        if from_switch_data.is_some() && k.pool.telemetry_on() {
            self.push_int_hop(k, port, pkt.expect("data was taken"));
        }
        pkt
    }

    /// Serializes packet `pkt` on `port` and returns when it is done: it arrives at the far end
    /// one `arrival_delay` later, unless the cable is down or loses it on the wire.
    #[inline(always)]
    pub fn transmit(&mut self, k: &mut Kernel, port: PortId, pkt: PktId) -> Time {
        let (size, now) = (k.pool.get(pkt).size as u64, k.now);
        let ps = &mut self.ports[port.idx()];
        let done = now + ps.rate.tx_time(Bytes(size));
        ps.busy_until = done;
        ps.tx_bytes += Bytes(size);
        k.c.packet_hops += 1;
        if ps.is_nic {
            k.c.sent[k.pool.get(pkt).kind] += 1;
        }
        // A flaky link loses what it starts sending during a loss burst (paper §5.4), a lossy
        // one what its loss channel draws (`net::wire_loss`), after the packet has taken its
        // serialization time.
        let wire_lost = ps.up && ps.wire_loss.as_mut().is_some_and(|f| f.transmit(now));
        if wire_lost {
            k.c.wire_losses += 1;
            k.pool.get_mut(pkt).port = port;
            self.drop_packet(k, pkt);
        } else if ps.up {
            let at = done + ps.arrival_delay;
            let p = k.pool.get_mut(pkt);
            p.port = port;
            p.link = 0;
            let peer = self.port_peer[port.idx()];
            match k.boundary.as_deref_mut() {
                Some(b) if b.remote(peer) => {
                    // The far end is another partition's: the packet travels as a message.
                    let p = *p;
                    b.send_packet(peer, at, &p, k.pool.telemetry(pkt));
                    k.pool.free(pkt);
                }
                _ => k.q.push_for(at, EventKind::Arrive, port.0, pkt.0),
            }
        } else {
            self.drop_at(k, port, pkt);
        }
        done
    }

    /// Whether `port` has a queued packet it may send (PFC pauses the data class).
    #[inline(always)]
    pub fn has_backlog(&self, port: PortId) -> bool {
        let ps = &self.ports[port.idx()];
        !ps.ctrl.is_empty() || (!ps.paused && !ps.data.is_empty())
    }

    /// Schedules `port` to look again when the packet it is sending is done, at `done`.
    #[inline(always)]
    pub fn free_again_at(&mut self, k: &mut Kernel, port: PortId, done: Time) {
        self.ports[port.idx()].free_pending = true;
        k.q.push(done, EventKind::PortFree, port.0);
    }

    /// A switch's data packet starts leaving `port`: the port appends its INT record (HPCC
    /// §3.1; `kernel/telemetry.rs` says what each field counts).
    // Out of line: runs without INT never call it.
    #[inline(never)]
    fn push_int_hop(&mut self, k: &mut Kernel, port: PortId, pkt: PktId) {
        if k.pool.get(pkt).kind != PktKind::Data {
            return;
        }
        let ps = &self.ports[port.idx()];
        let hop = IntHop { ts: k.now, tx_bytes: ps.tx_bytes, qlen: (ps.data_bytes + ps.ctrl_bytes).0, rate: ps.rate };
        if let Some(stack) = k.pool.telemetry_mut(pkt) {
            stack.push(hop);
        }
    }

    /// Discards packet `pkt` that port `port` could not take or send (a dead cable, a full
    /// buffer): counted against the port, then [`Network::drop_packet`].
    #[inline]
    pub(super) fn drop_at(&mut self, k: &mut Kernel, port: PortId, pkt: PktId) {
        self.ports[port.idx()].drops += 1;
        self.drop_packet(k, pkt);
    }

    /// Discards a packet at the port it last reached, charging the loss to its connection's
    /// [`PathCounts`](super::path_counts::PathCounts) and to the right counter; a lost credit
    /// grant is left for its host ([`HostEffects`](crate::kernel::HostEffects)).
    pub fn drop_packet(&mut self, k: &mut Kernel, pkt: PktId) {
        let p = *k.pool.get(pkt);
        k.log.drop(k.now, p.port.0, p.conn.0);
        if p.kind == PktKind::Data {
            k.log.packet(k.now, p.conn.0, p.seq, PacketEvent::Dropped, p.port.0);
        }
        let counts = &mut self.path_counts[p.conn.idx()];
        counts.drops += 1;
        k.c.dropped[p.kind] += 1;
        if p.flags & F_TRIMMED != 0 {
            k.c.headers_dropped += 1;
        } else if p.kind == PktKind::Data {
            counts.data_drops += 1;
        } else if p.kind == PktKind::Pull {
            // The credits it granted are gone: the sender may have to start afresh.
            k.fx.lost_pulls.push((p.conn, p.seq));
        }
        k.pool.free(pkt);
    }
}

/// Applies a fabric's static failures to the engine's port state: removed cables go down,
/// degraded cables slow down (the affected directions), flaky ones get their burst process and
/// lossy ones their loss channel (each direction its own stream, `Rng::stream(seed, "flaky",
/// port)` or `Rng::stream(seed, "wire_loss", port)`, `seed` being its failure entry's own seed
/// where the scenario gives one, else the master seed).
pub(crate) fn apply_failures(fabric: &Fabric, ports: &mut impl Store<PortState>) {
    for l in &fabric.failures {
        let Some(rate) = l.rate else {
            for p in [l.up, l.down] {
                if let Some(ps) = ports.get_mut(p.0) {
                    ps.up = false;
                }
            }
            continue;
        };
        for p in l.ports() {
            let Some(ps) = ports.get_mut(p.0) else { continue; };
            let stream = |name| Rng::stream(l.seed, name, p.0 as u64);
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
