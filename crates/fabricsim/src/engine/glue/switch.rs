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
//! ([`crate::net::switch_lb`]) and its PFC accounting ([`crate::net::pfc`]).

use crate::engine::trace::PacketEvent;
use crate::engine::Sim;
use crate::ids::{NodeId, PktId, PortId};
use crate::net::packet::{Class, Packet, PktKind, F_BOUNCED, F_DOOMED, F_ECT, F_HELD, F_LAST_HOP, F_TRIMMED};
use crate::net::qdisc::{ControlVerdict, TrimmedHeaders, Verdict};
use crate::net::switch_lb::{Candidates, PortView, SwitchCtx, SwitchLb};

impl Sim {
    /// The output port switch `sw` sends packet `p` to, if it follows from the header and the
    /// tables alone: the host's port at its ToR, the only next hop, or the selector's
    /// [`SwitchLb::peek`] (ECMP). The look-ahead caches it in `link`.
    #[inline]
    pub(crate) fn route_peek(&self, sw: NodeId, p: &Packet) -> Option<PortId> {
        let dst_tor = self.net.route_tor[p.dst as usize];
        if sw == dst_tor {
            // `None` for a packet addressed to this switch: `switch_receive` consumes it.
            return self.net.fabric.host_downlink.get(p.dst as usize).copied();
        }
        let hops = self.net.fabric.routes.next_hops(&self.net.fabric, sw, dst_tor);
        if hops.len() == 1 {
            return Some(hops[0]);
        }
        self.net.switch_lb[(sw - self.net.fabric.hosts) as usize].peek(p, hops).map(|i| hops[i])
    }

    /// The output port switch `sw` sends packet `pkt` to: [`Sim::route_peek`], else the
    /// selector's [`SwitchLb::choose`] now, in event order.
    #[inline]
    fn route_out(&mut self, sw: NodeId, pkt: PktId) -> PortId {
        match self.route_peek(sw, self.pool.get(pkt)) {
            Some(out) => out,
            None => self.route_choose(sw, pkt),
        }
    }

    /// Asks switch `sw`'s selector to choose for `pkt` among two or more next hops, giving it
    /// the packet, the candidates' port state, `now` and the switch's random stream.
    fn route_choose(&mut self, sw: NodeId, pkt: PktId) -> PortId {
        let s = (sw - self.net.fabric.hosts) as usize;
        let p = self.pool.get_mut(pkt);
        let (src_tor, dst_tor) = (self.net.route_tor[p.src as usize], self.net.route_tor[p.dst as usize]);
        let hops = self.net.fabric.routes.next_hops(&self.net.fabric, sw, dst_tor);
        let cands = Candidates::new(hops, &self.net.ports, &self.net.qdisc.profile_buffers);
        let mut ctx = SwitchCtx::between(self.now, &mut self.net.switch_rng[s], &self.net.fabric, src_tor, dst_tor);
        let out = hops[self.net.switch_lb[s].choose(&mut ctx, p, &cands)];
        if ctx.rerouted && p.kind == PktKind::Data {
            self.hosts.conns[p.conn as usize].reroutes += 1;
            self.c.reroutes += 1;
        }
        out
    }

    /// Cuts data packet `pkt`, which port `out` could not buffer (on arrival, or `evicted`
    /// from its queue to make room for a control packet), to a header (a probe is already
    /// header-sized and stays as it is) and counts the trim.
    fn trim(&mut self, out: PortId, pkt: PktId, evicted: bool) {
        let p = self.pool.get_mut(pkt);
        if p.kind == PktKind::Probe {
            return;
        }
        let event = if evicted { PacketEvent::Evicted } else { PacketEvent::Trimmed };
        self.tracer.log_packet(self.now, p.conn, p.seq, event, out);
        p.size = self.net.qdisc.header_bytes;
        p.flags |= F_TRIMMED;
        // A port whose peer is a host (hosts are the nodes below `hosts`) is the last hop.
        if self.net.fabric.ports[out as usize].peer < self.net.fabric.hosts {
            p.flags |= F_LAST_HOP;
        }
        let conn = p.conn;
        self.net.ports[out as usize].trims += 1;
        self.c.data_trimmed += 1;
        self.hosts.conns[conn as usize].trims += 1;
    }

    /// Queues control packet `pkt` (or a trimmed header) on switch port `out` as its control
    /// lane allows: at once, after evicting and trimming the newest queued data packets (a
    /// lane shared with data), or not at all (dropped).
    #[inline]
    fn switch_enqueue_ctrl(&mut self, out: PortId, pkt: PktId) {
        if self.net.qdisc.control_bounded {
            self.bounded_enqueue_ctrl(out, pkt)
        } else {
            self.enqueue_ctrl(out, pkt)
        }
    }

    /// [`Sim::switch_enqueue_ctrl`] where some control lane is bounded.
    #[inline(never)]
    fn bounded_enqueue_ctrl(&mut self, out: PortId, pkt: PktId) {
        let size = self.pool.get(pkt).size as u64;
        loop {
            let ps = &self.net.ports[out as usize];
            match self.net.qdisc.profiles[ps.qdisc as usize].on_control_arrival(ps.data_bytes, ps.ctrl_bytes, size) {
                ControlVerdict::Enqueue => return self.enqueue_ctrl(out, pkt),
                ControlVerdict::Drop => {
                    //= spec lb-ai-training.md §4.2 (a header that finds no room: "In RTS mode it
                    //= is bounced instead, if it has not already been bounced")
                    let flags = self.pool.get(pkt).flags;
                    if self.net.qdisc.trimmed_headers != TrimmedHeaders::ToReceiver && flags & (F_TRIMMED | F_BOUNCED) == F_TRIMMED {
                        return self.bounce(out, pkt);
                    }
                    self.net.ports[out as usize].drops += 1;
                    return self.drop_packet(pkt);
                }
                ControlVerdict::EvictNewestData => {
                    // The newest data packet leaves the data class; its header is kept, ahead
                    // of the arrival (lb-ai-training spec §4.2), or returned to its sender.
                    let ps = &mut self.net.ports[out as usize];
                    let victim = ps.data.pop_back(&mut self.pool).expect("eviction only with queued data");
                    ps.occupancy_to(self.now);
                    ps.data_bytes -= self.pool.get(victim).size as u64;
                    self.c.data_evicted += 1;
                    if self.pool.get(pkt).flags & F_TRIMMED != 0 {
                        self.c.evicted_by_headers += 1;
                    }
                    self.trim(out, victim, true);
                    if self.returns_at_once(victim) {
                        self.bounce(out, victim);
                    } else {
                        self.enqueue_ctrl(out, victim);
                    }
                }
            }
        }
    }

    /// Whether the header `pkt` was just trimmed to goes straight back to its sender
    /// (`trimmed_headers = "to_sender"`; a probe, which is never trimmed, goes on).
    #[inline]
    fn returns_at_once(&self, pkt: PktId) -> bool {
        self.net.qdisc.trimmed_headers == TrimmedHeaders::ToSender && self.pool.get(pkt).flags & F_TRIMMED != 0
    }

    /// Return-to-sender (lb-ai-training spec LR-TRIM-RTS; paper §4 "Packet Trimming": the
    /// trimmed packet "may be sent to ... the original sender"): turns trimmed header `pkt`,
    /// which port `out` could not take, around at `out`'s switch. Source and destination swap,
    /// `F_BOUNCED` is set, and the header is forwarded toward its sender as any packet
    /// (the switch's selector among equal-cost hops) in the control class. It stays a data
    /// packet, so per-kind conservation holds: it arrives at its (new) destination host, the
    /// sender, or is dropped on the way.
    fn bounce(&mut self, out: PortId, pkt: PktId) {
        let sw = self.net.ports[out as usize].owner;
        let p = self.pool.get_mut(pkt);
        self.tracer.log_packet(self.now, p.conn, p.seq, PacketEvent::Bounced, out);
        std::mem::swap(&mut p.src, &mut p.dst);
        p.flags |= F_BOUNCED;
        p.link = 0;
        self.c.headers_bounced += 1;
        let back = self.route_out(sw, pkt);
        if !self.net.ports[back as usize].up {
            self.net.ports[back as usize].drops += 1;
            return self.drop_packet(pkt);
        }
        self.switch_enqueue_ctrl(back, pkt);
    }

    /// Shows packet `pkt`, bound for port `out` of switch `sw`, to the switch's selector
    /// ([`SwitchLb::on_packet`]) and sends the control packet it may emit.
    #[inline(never)]
    fn switch_observe(&mut self, sw: NodeId, pkt: PktId, out: PortId) {
        let s = (sw - self.net.fabric.hosts) as usize;
        let p = self.pool.get_mut(pkt);
        let (src_tor, dst_tor) = (self.net.route_tor[p.src as usize], self.net.route_tor[p.dst as usize]);
        let mut ctx = SwitchCtx::between(self.now, &mut self.net.switch_rng[s], &self.net.fabric, src_tor, dst_tor);
        let view = PortView::of(out, &self.net.ports, &self.net.qdisc.profile_buffers);
        self.net.switch_lb[s].on_packet(&mut ctx, p, &view);
        if let Some(made) = ctx.emit {
            self.switch_emit(sw, made);
        }
    }

    /// Sends control packet `made`, created by switch `sw`, toward its destination (a host or
    /// a ToR switch) in the control class; it counts as sent of its kind.
    fn switch_emit(&mut self, sw: NodeId, mut made: Packet) {
        debug_assert_eq!(made.kind.class(), Class::Control, "switches make control packets only");
        made.link = 0;
        self.c.sent[made.kind] += 1;
        let pkt = self.pool.alloc(made);
        if made.dst == sw {
            return self.switch_consume(sw, pkt);
        }
        let out = self.route_out(sw, pkt);
        self.pool.get_mut(pkt).port = out;
        if !self.net.ports[out as usize].up {
            self.net.ports[out as usize].drops += 1;
            return self.drop_packet(pkt);
        }
        self.switch_enqueue_ctrl(out, pkt);
    }

    /// Hands control packet `pkt`, addressed to switch `sw`, to the switch's selector
    /// ([`SwitchLb::on_control`]); it has arrived, and is freed.
    #[inline(never)]
    fn switch_consume(&mut self, sw: NodeId, pkt: PktId) {
        let s = (sw - self.net.fabric.hosts) as usize;
        let p = *self.pool.get(pkt);
        let mut ctx = SwitchCtx::between(self.now, &mut self.net.switch_rng[s], &self.net.fabric, self.net.route_tor[p.src as usize], sw);
        self.net.switch_lb[s].on_control(&mut ctx, &p);
        self.c.arrived[p.kind] += 1;
        self.pool.free(pkt);
    }

    /// A packet `run.drop_packets` chose, at its first switch: lost, or held for its `hold_us`
    /// and then handed to this switch again (it arrives anew, unflagged).
    #[inline(never)]
    fn drop_or_hold(&mut self, pkt: PktId) {
        let p = self.pool.get_mut(pkt);
        if p.flags & F_DOOMED != 0 {
            return self.drop_packet(pkt);
        }
        p.flags &= !F_HELD;
        p.link = 0;
        let (conn, seq) = (p.conn, p.seq);
        let entry = self.hosts.drop_plan.iter().position(|d| d.0 == conn && d.1 == seq && d.4 > 0);
        let hold = entry.map_or(0, |i| self.hosts.drop_plan[i].4);
        // Ordered by its plan entry (its port may carry another packet at that instant).
        self.q.push_for(self.now + hold, crate::engine::queue::EventKind::HeldArrive, entry.unwrap_or(0) as u32, pkt);
    }

    /// Forwards packet `pkt` that arrived at switch `sw`.
    pub(crate) fn switch_receive(&mut self, sw: NodeId, pkt: PktId) {
        if self.pool.get(pkt).dst == sw {
            return self.switch_consume(sw, pkt);
        }
        let out = match self.pool.get(pkt).link {
            0 => self.route_out(sw, pkt),
            hint => hint - 1,
        };
        if self.net.any_observer && self.net.switch_observes[(sw - self.net.fabric.hosts) as usize] {
            self.switch_observe(sw, pkt, out);
        }
        let p = *self.pool.get(pkt);
        if p.flags & (F_DOOMED | F_HELD) != 0 {
            return self.drop_or_hold(pkt);
        }
        if !self.net.ports[out as usize].up {
            self.net.ports[out as usize].drops += 1;
            self.drop_packet(pkt);
            return;
        }
        if self.net.class.of(p.kind) == Class::Control || p.flags & F_TRIMMED != 0 {
            self.switch_enqueue_ctrl(out, pkt);
            return;
        }
        if self.net.pfc.on && !self.pfc_admit(sw, p.port, p.size as u64) {
            self.net.ports[out as usize].drops += 1;
            self.c.buffer_drops += 1;
            self.drop_packet(pkt);
            return;
        }
        let ps = &mut self.net.ports[out as usize];
        match self.net.qdisc.profiles[ps.qdisc as usize].on_arrival(ps.data_bytes, ps.ctrl_bytes, p.size as u64, p.flags & F_ECT != 0, &mut ps.rng) {
            Verdict::Enqueue { mark } => {
                if mark {
                    self.c.mark_ce(&mut self.pool.get_mut(pkt).flags);
                    ps.marks += 1;
                }
                ps.occupancy_to(self.now);
                ps.data.push_back(&mut self.pool, pkt);
                ps.data_bytes += p.size as u64;
                ps.max_data_bytes = ps.max_data_bytes.max(ps.data_bytes);
                self.port_kick(out);
            }
            Verdict::Trim => {
                self.trim(out, pkt, false);
                if self.returns_at_once(pkt) {
                    self.bounce(out, pkt);
                } else {
                    self.switch_enqueue_ctrl(out, pkt);
                }
            }
            Verdict::Drop => {
                ps.drops += 1;
                self.c.buffer_drops += 1;
                self.drop_packet(pkt);
            }
        }
    }
}
