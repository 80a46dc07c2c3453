//! Switch: picks an output port for each arriving packet and applies the port's queue
//! discipline.
//!
//! Output-queued, as in the smartt-reps spec §4.3a: at the destination's ToR the packet goes
//! down the host's port; elsewhere the switch's own selector (`switch_lb`, default the ECMP
//! hash of (src, dst, flow, entropy) with the switch's seed) picks among the equal-cost next
//! hops, so each tier decides independently. Control packets and trimmed headers go to the
//! strict-priority class; data meets the drop-tail/ECN/trim discipline (`qdisc.rs`) of the
//! output port's own profile. The forwarding latency was already added to the arrival time.
//!
//! The switch has no state of its own beyond its ports ([`crate::net::port`]), its selector
//! ([`crate::net::switch_lb`]) and its PFC accounting ([`crate::net::pfc`]). Its handlers are
//! methods of the [`Network`] that owns those arrays and get the narrow [`Kernel`]: what the
//! switch does to a connection's packets it counts in the network's own
//! [`PathCounts`](super::path_counts::PathCounts), and a packet `run.drop_packets` holds goes
//! back to the engine ([`Forwarded::Held`]), which keeps that plan.

use crate::units::Bytes;
use crate::kernel::store::Layout;
use crate::kernel::Kernel;
use super::Network;
use crate::ids::{NodeId, PktId, PortId};
use crate::kernel::packet::{Class, Packet, PktKind, F_BOUNCED, F_DOOMED, F_ECT, F_HELD, F_LAST_HOP, F_TRIMMED};
use crate::kernel::packet_log::PacketEvent;
use crate::kernel::queue::EventKind;
use crate::net::qdisc::{ControlVerdict, TrimmedHeaders, Verdict};
use crate::net::switch_lb::{Candidates, PortView, SwitchCtx, SwitchLb};

/// What became of a packet handed to a switch.
#[must_use]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Forwarded {
    /// Queued, trimmed, bounced, dropped or consumed: the switch is done with it.
    Done,
    /// `run.drop_packets` holds it (`hold_us`): the engine hands it to this switch again later.
    Held(PktId),
}

impl<L: Layout> Network<L> {
    /// Whether `node` is a host (hosts come first in node order; as [`crate::topo::Fabric::is_host`]).
    #[inline(always)]
    pub(crate) fn is_host(&self, node: NodeId) -> bool {
        node < self.hosts
    }

    /// Switch `sw`'s index in the per-switch arrays (switches follow the hosts in node order).
    #[inline(always)]
    pub(crate) fn switch_index(&self, sw: NodeId) -> usize {
        (sw.0 - self.hosts.0) as usize
    }

    /// The output port switch `sw` sends packet `p` to, if it follows from the header and the
    /// tables alone: the host's port at its ToR, the only next hop, or the selector's
    /// [`SwitchLb::peek`] (ECMP). The look-ahead caches it in `link`.
    #[inline]
    pub fn route_peek(&self, sw: NodeId, p: &Packet) -> Option<PortId> {
        let dst_tor = self.route_tor[p.dst.idx()];
        if sw == dst_tor {
            // `None` for a packet addressed to this switch: `switch_receive` consumes it.
            return self.fabric.host_downlink.get(p.dst.idx()).copied();
        }
        let hops = self.routes.next_hops_of(self.hosts.0, sw, dst_tor);
        if hops.len() == 1 {
            return Some(hops[0]);
        }
        self.switch_lb[self.switch_index(sw)].peek(p, hops).map(|i| hops[i])
    }

    /// The output port switch `sw` sends packet `pkt` to: [`Network::route_peek`], else the
    /// selector's [`SwitchLb::choose`] now, in event order.
    #[inline]
    fn route_out(&mut self, k: &mut Kernel, sw: NodeId, pkt: PktId) -> PortId {
        match self.route_peek(sw, k.pool.get(pkt)) {
            Some(out) => out,
            None => self.route_choose(k, sw, pkt),
        }
    }

    /// Asks switch `sw`'s selector to choose for `pkt` among two or more next hops, giving it
    /// the packet, the candidates' port state, `now` and the switch's random stream.
    fn route_choose(&mut self, k: &mut Kernel, sw: NodeId, pkt: PktId) -> PortId {
        let s = self.switch_index(sw);
        let p = k.pool.get_mut(pkt);
        let (src_tor, dst_tor) = (self.route_tor[p.src.idx()], self.route_tor[p.dst.idx()]);
        let hops = self.routes.next_hops_of(self.hosts.0, sw, dst_tor);
        let cands = Candidates::new(hops, &self.ports, &self.qdisc.profile_buffers);
        let mut ctx = SwitchCtx::between(k.now, &mut self.switch_rng[s], &self.fabric, src_tor, dst_tor);
        let out = hops[self.switch_lb[s].choose(&mut ctx, p, &cands)];
        if ctx.rerouted && p.kind == PktKind::Data {
            self.path_counts[p.conn.idx()].reroutes += 1;
            k.c.reroutes += 1;
        }
        out
    }

    /// Cuts data packet `pkt`, which port `out` could not buffer (on arrival, or `evicted`
    /// from its queue to make room for a control packet), to a header (a probe is already
    /// header-sized and stays as it is) and counts the trim.
    fn trim(&mut self, k: &mut Kernel, out: PortId, pkt: PktId, evicted: bool) {
        let p = k.pool.get_mut(pkt);
        if p.kind == PktKind::Probe {
            return;
        }
        let event = if evicted { PacketEvent::Evicted } else { PacketEvent::Trimmed };
        k.log.packet(k.now, p.conn.0, p.seq, event, out.0);
        p.size = self.qdisc.header_bytes;
        p.flags |= F_TRIMMED;
        // A port whose peer is a host is the last hop.
        if self.is_host(self.port_peer[out.idx()]) {
            p.flags |= F_LAST_HOP;
        }
        let conn = p.conn;
        self.ports[out.idx()].trims += 1;
        k.c.data_trimmed += 1;
        self.path_counts[conn.idx()].trims += 1;
    }

    /// Queues control packet `pkt` (or a trimmed header) on switch port `out` as its control
    /// lane allows: at once, after evicting and trimming the newest queued data packets (a
    /// lane shared with data), or not at all (dropped).
    #[inline]
    fn switch_enqueue_ctrl(&mut self, k: &mut Kernel, out: PortId, pkt: PktId) {
        if self.qdisc.control_bounded {
            self.bounded_enqueue_ctrl(k, out, pkt)
        } else {
            self.enqueue_ctrl(k, out, pkt)
        }
    }

    /// [`Network::switch_enqueue_ctrl`] where some control lane is bounded.
    #[inline(never)]
    fn bounded_enqueue_ctrl(&mut self, k: &mut Kernel, out: PortId, pkt: PktId) {
        let size = k.pool.get(pkt).size as u64;
        loop {
            let ps = &self.ports[out.idx()];
            match self.qdisc.profiles[ps.qdisc as usize].on_control_arrival(ps.data_bytes.0, ps.ctrl_bytes.0, size) {
                ControlVerdict::Enqueue => return self.enqueue_ctrl(k, out, pkt),
                ControlVerdict::Drop => {
                    //= spec lb-ai-training.md §4.2 (a header that finds no room: "In RTS mode it
                    //= is bounced instead, if it has not already been bounced")
                    let flags = k.pool.get(pkt).flags;
                    if self.qdisc.trimmed_headers != TrimmedHeaders::ToReceiver && flags & (F_TRIMMED | F_BOUNCED) == F_TRIMMED {
                        return self.bounce(k, out, pkt);
                    }
                    return self.drop_at(k, out, pkt);
                }
                ControlVerdict::EvictNewestData => {
                    // The newest data packet leaves the data class; its header is kept, ahead
                    // of the arrival (lb-ai-training spec §4.2), or returned to its sender.
                    let ps = &mut self.ports[out.idx()];
                    let victim = ps.data.pop_back(&mut k.pool).expect("eviction only with queued data");
                    ps.occupancy_to(k.now);
                    ps.data_bytes -= Bytes(k.pool.get(victim).size as u64);
                    k.c.data_evicted += 1;
                    if k.pool.get(pkt).flags & F_TRIMMED != 0 {
                        k.c.evicted_by_headers += 1;
                    }
                    self.trim(k, out, victim, true);
                    if self.returns_at_once(k, victim) {
                        self.bounce(k, out, victim);
                    } else {
                        self.enqueue_ctrl(k, out, victim);
                    }
                }
            }
        }
    }

    /// Whether the header `pkt` was just trimmed to goes straight back to its sender
    /// (`trimmed_headers = "to_sender"`; a probe, which is never trimmed, goes on).
    #[inline]
    fn returns_at_once(&self, k: &Kernel, pkt: PktId) -> bool {
        self.qdisc.trimmed_headers == TrimmedHeaders::ToSender && k.pool.get(pkt).flags & F_TRIMMED != 0
    }

    /// Return-to-sender (lb-ai-training spec LR-TRIM-RTS; paper §4 "Packet Trimming": the
    /// trimmed packet "may be sent to ... the original sender"): turns trimmed header `pkt`,
    /// which port `out` could not take, around at `out`'s switch. Source and destination swap,
    /// `F_BOUNCED` is set, and the header is forwarded toward its sender as any packet
    /// (the switch's selector among equal-cost hops) in the control class. It stays a data
    /// packet, so per-kind conservation holds: it arrives at its (new) destination host, the
    /// sender, or is dropped on the way.
    fn bounce(&mut self, k: &mut Kernel, out: PortId, pkt: PktId) {
        let sw = self.ports[out.idx()].owner;
        let p = k.pool.get_mut(pkt);
        k.log.packet(k.now, p.conn.0, p.seq, PacketEvent::Bounced, out.0);
        std::mem::swap(&mut p.src, &mut p.dst);
        p.flags |= F_BOUNCED;
        p.link = 0;
        k.c.headers_bounced += 1;
        let back = self.route_out(k, sw, pkt);
        if !self.ports[back.idx()].up {
            return self.drop_at(k, back, pkt);
        }
        self.switch_enqueue_ctrl(k, back, pkt);
    }

    /// Shows packet `pkt`, bound for port `out` of switch `sw`, to the switch's selector
    /// ([`SwitchLb::on_packet`]) and sends the control packet it may emit.
    #[inline(never)]
    fn switch_observe(&mut self, k: &mut Kernel, sw: NodeId, pkt: PktId, out: PortId) {
        let s = self.switch_index(sw);
        let p = k.pool.get_mut(pkt);
        let (src_tor, dst_tor) = (self.route_tor[p.src.idx()], self.route_tor[p.dst.idx()]);
        let mut ctx = SwitchCtx::between(k.now, &mut self.switch_rng[s], &self.fabric, src_tor, dst_tor);
        let view = PortView::of(out, &self.ports, &self.qdisc.profile_buffers);
        self.switch_lb[s].on_packet(&mut ctx, p, &view);
        if let Some(made) = ctx.emit {
            self.switch_emit(k, sw, made);
        }
    }

    /// Sends control packet `made`, created by switch `sw`, toward its destination (a host or
    /// a ToR switch) in the control class; it counts as sent of its kind.
    fn switch_emit(&mut self, k: &mut Kernel, sw: NodeId, mut made: Packet) {
        debug_assert_eq!(made.kind.class(), Class::Control, "switches make control packets only");
        made.link = 0;
        k.c.sent[made.kind] += 1;
        let pkt = k.pool.alloc(made);
        if made.dst == sw {
            return self.switch_consume(k, sw, pkt);
        }
        let out = self.route_out(k, sw, pkt);
        k.pool.get_mut(pkt).port = out;
        if !self.ports[out.idx()].up {
            return self.drop_at(k, out, pkt);
        }
        self.switch_enqueue_ctrl(k, out, pkt);
    }

    /// Hands control packet `pkt`, addressed to switch `sw`, to the switch's selector
    /// ([`SwitchLb::on_control`]); it has arrived, and is freed.
    #[inline(never)]
    fn switch_consume(&mut self, k: &mut Kernel, sw: NodeId, pkt: PktId) {
        let s = self.switch_index(sw);
        let p = *k.pool.get(pkt);
        let mut ctx = SwitchCtx::between(k.now, &mut self.switch_rng[s], &self.fabric, self.route_tor[p.src.idx()], sw);
        self.switch_lb[s].on_control(&mut ctx, &p);
        k.c.arrived[p.kind] += 1;
        k.pool.free(pkt);
    }

    /// A packet `run.drop_packets` chose, at its first switch: lost, or held for its `hold_us`
    /// (the engine, which keeps the plan, hands it to this switch again; it arrives anew,
    /// unflagged).
    #[inline(never)]
    fn drop_or_hold(&mut self, k: &mut Kernel, pkt: PktId) -> Forwarded {
        let p = k.pool.get_mut(pkt);
        if p.flags & F_DOOMED != 0 {
            self.drop_packet(k, pkt);
            return Forwarded::Done;
        }
        p.flags &= !F_HELD;
        p.link = 0;
        Forwarded::Held(pkt)
    }

    /// Forwards packet `pkt` that arrived at switch `sw`.
    // Inlined into the engine's arrival handler, its one caller (as before it moved here).
    #[inline(always)]
    pub fn switch_receive(&mut self, k: &mut Kernel, sw: NodeId, pkt: PktId) -> Forwarded {
        if k.pool.get(pkt).dst == sw {
            self.switch_consume(k, sw, pkt);
            return Forwarded::Done;
        }
        let out = match k.pool.get(pkt).link {
            0 => self.route_out(k, sw, pkt),
            hint => PortId(hint - 1),
        };
        if self.any_observer && self.switch_observes[self.switch_index(sw)] {
            self.switch_observe(k, sw, pkt, out);
        }
        let p = *k.pool.get(pkt);
        if p.flags & (F_DOOMED | F_HELD) != 0 {
            return self.drop_or_hold(k, pkt);
        }
        if !self.ports[out.idx()].up {
            self.drop_at(k, out, pkt);
            return Forwarded::Done;
        }
        if self.class.of(p.kind) == Class::Control || p.flags & F_TRIMMED != 0 {
            self.switch_enqueue_ctrl(k, out, pkt);
            return Forwarded::Done;
        }
        if self.pfc.on && !self.pfc_admit(k, sw, p.port, p.size as u64) {
            k.c.buffer_drops += 1;
            self.drop_at(k, out, pkt);
            return Forwarded::Done;
        }
        let ps = &mut self.ports[out.idx()];
        match self.qdisc.profiles[ps.qdisc as usize].on_arrival(ps.data_bytes.0, ps.ctrl_bytes.0, p.size as u64, p.flags & F_ECT != 0, &mut ps.rng) {
            Verdict::Enqueue { mark } => {
                if mark {
                    k.c.mark_ce(&mut k.pool.get_mut(pkt).flags);
                    ps.marks += 1;
                }
                ps.occupancy_to(k.now);
                ps.data.push_back(&mut k.pool, pkt);
                ps.data_bytes += Bytes(p.size as u64);
                ps.max_data_bytes = ps.max_data_bytes.max(ps.data_bytes);
                self.kick_switch_port(k, out);
            }
            Verdict::Trim => {
                self.trim(k, out, pkt, false);
                if self.returns_at_once(k, pkt) {
                    self.bounce(k, out, pkt);
                } else {
                    self.switch_enqueue_ctrl(k, out, pkt);
                }
            }
            Verdict::Drop => {
                k.c.buffer_drops += 1;
                self.drop_at(k, out, pkt);
            }
        }
        Forwarded::Done
    }
}

// Routing re-convergence after a link event that sets `reroute_after_us`: the equal-cost tables
// are rebuilt over the links up at that moment (statically removed links stay down unless a
// link event brought them up). Without such an event routes never change, as in the
// smartt-reps testbed (spec §4.6).
impl<L: Layout> Network<L> {
    /// Recomputes every switch's routes from the ports' current up/down state.
    pub fn reroute(&mut self, k: &mut Kernel) {
        let ports = &self.ports;
        self.routes = crate::topo::routing::compute(&self.fabric, |p| ports[p.idx()].up);
        std::sync::Arc::make_mut(&mut self.fabric).routes = self.routes.clone();
        // The look-ahead may already have routed arrivals of the current bucket with the old
        // table: make them route again.
        let mut i = 0;
        while let Some(e) = k.q.peek_ahead(i) {
            let (kind, id) = (e.kind(), e.id);
            if matches!(kind, EventKind::Arrive | EventKind::HeldArrive) {
                k.pool.get_mut(PktId(id)).link = 0;
            }
            i += 1;
        }
    }
}
