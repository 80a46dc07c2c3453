//! Output port handlers (state: [`crate::net::port::PortState`]): queue a control packet, kick
//! an idle port, start serializing the next packet (control first, or weighted round-robin with
//! `switch.control_wrr_weight`), and drop a packet.
//!
//! Follows htsim's queue+pipe elements (one pending event per port, never one per queued
//! packet): a port schedules `PortFree` only while it has something more to send, and each
//! transmitted packet gets one `Arrive` event at the far end, after serialization, propagation
//! and (for a switch) the forwarding latency. A host's NIC port has no data queue: it pulls the
//! next data packet from the host's connection scheduler when it is free (see `nic.rs`).

use crate::engine::queue::EventKind;
use crate::engine::trace::PacketEvent;
use crate::engine::Sim;
use crate::ids::{PktId, PortId};
use crate::net::packet::{Class, PktKind, F_ECT, F_TRIMMED};
use crate::net::telemetry::IntHop;

impl Sim {
    /// Puts a control-class packet (ACK, NACK, trimmed header) on `port` and starts it if idle.
    #[inline]
    pub(crate) fn enqueue_ctrl(&mut self, port: PortId, pkt: PktId) {
        let size = self.pool.get(pkt).size as u64;
        let ps = &mut self.net.ports[port as usize];
        ps.ctrl.push_back(&mut self.pool, pkt);
        ps.ctrl_bytes += size;
        ps.max_ctrl_bytes = ps.max_ctrl_bytes.max(ps.ctrl_bytes);
        self.port_kick(port);
    }

    /// Queues a packet that host-side code created on the host's NIC port `port`, in the class
    /// its kind travels in (the kind table in `net/packet.rs`). Data proper does not come this
    /// way: the NIC pulls it from its scheduler when the link is free.
    #[inline]
    pub(crate) fn host_send(&mut self, port: PortId, pkt: PktId) {
        let p = self.pool.get(pkt);
        match self.net.class.of(p.kind) {
            Class::Control => self.enqueue_ctrl(port, pkt),
            Class::Data => {
                // Waits behind the NIC's current packet.
                let size = p.size as u64;
                let ps = &mut self.net.ports[port as usize];
                ps.occupancy_to(self.now);
                ps.data.push_back(&mut self.pool, pkt);
                ps.data_bytes += size;
                self.port_kick(port);
            }
        }
    }

    /// Makes sure an idle port starts sending, or a busy one will look again when free.
    #[inline]
    pub(crate) fn port_kick(&mut self, port: PortId) {
        let ps = &mut self.net.ports[port as usize];
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
        self.net.ports[port as usize].free_pending = false;
        self.port_start(port);
    }

    /// Picks the next packet (control first, unless the round-robin weight says data's turn has
    /// come) and serializes it.
    fn port_start(&mut self, port: PortId) {
        let owner_is_host = self.net.ports[port as usize].is_nic;
        let weight = self.net.qdisc.control_wrr_weight;
        let mut from_switch_data = None;
        let pkt = {
            let ps = &mut self.net.ports[port as usize];
            let data_waits = !ps.paused && !ps.data.is_empty();
            // A NIC has no data queue here (it pulls from its scheduler), so it stays strict.
            let control_turn = !ps.ctrl.is_empty() && (weight == 0 || !data_waits || ps.ctrl_streak < weight);
            if control_turn {
                let p = ps.ctrl.pop_front(&mut self.pool).expect("control class is non-empty");
                ps.ctrl_bytes -= self.pool.get(p).size as u64;
                ps.ctrl_streak = if data_waits { ps.ctrl_streak + 1 } else { 0 };
                Some(p)
            } else if ps.paused {
                None
            } else if let Some(p) = ps.data.pop_front(&mut self.pool) {
                ps.ctrl_streak = 0;
                let pk = self.pool.get_mut(p);
                ps.occupancy_to(self.now);
                ps.data_bytes -= pk.size as u64;
                if self.net.qdisc.profiles[ps.qdisc as usize].on_departure(ps.data_bytes, pk.flags & F_ECT != 0, &mut ps.rng) {
                    self.c.mark_ce(&mut pk.flags);
                    ps.marks += 1;
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
        if let Some((up, size)) = from_switch_data.filter(|_| self.net.pfc.on) {
            let sw = self.net.ports[port as usize].owner;
            self.pfc_release(sw, up, size);
        }
        if from_switch_data.is_some() && self.pool.telemetry_on() {
            self.push_int_hop(port, pkt.expect("data was taken"));
        }
        let pkt = match pkt {
            Some(p) => p,
            None if owner_is_host && !self.net.ports[port as usize].paused => match self.nic_next_packet(self.net.ports[port as usize].owner) {
                Some(p) => p,
                None => return,
            },
            None => return,
        };
        let (size, now) = (self.pool.get(pkt).size as u64, self.now);
        let ps = &mut self.net.ports[port as usize];
        let done = now + ps.rate.tx_time(size);
        ps.busy_until = done;
        ps.tx_bytes += size;
        self.c.packet_hops += 1;
        if owner_is_host {
            self.c.sent[self.pool.get(pkt).kind] += 1;
        }
        // A flaky link loses what it starts sending during a loss burst (paper §5.4), a lossy
        // one what its loss channel draws (`net::wire_loss`), after the packet has taken its
        // serialization time.
        let wire_lost = ps.up && ps.wire_loss.as_mut().is_some_and(|f| f.transmit(now));
        if wire_lost {
            self.c.wire_losses += 1;
            self.pool.get_mut(pkt).port = port;
            self.drop_packet(pkt);
        } else if ps.up {
            let at = done + ps.arrival_delay;
            let p = self.pool.get_mut(pkt);
            p.port = port;
            p.link = 0;
            match self.part.as_deref_mut() {
                Some(part) if part.remote(self.net.port_peer[port as usize]) => {
                    // The far end is another partition's: the packet travels as a message.
                    let p = *p;
                    part.send_packet(self.net.port_peer[port as usize], at, &p, self.pool.telemetry(pkt));
                    self.pool.free(pkt);
                }
                _ => self.q.push_for(at, EventKind::Arrive, port, pkt),
            }
        } else {
            ps.drops += 1;
            self.drop_packet(pkt);
        }
        let ps = &self.net.ports[port as usize];
        let more = !ps.ctrl.is_empty() || (!ps.paused && (!ps.data.is_empty() || (owner_is_host && self.nic_has_ready(port))));
        if more {
            self.net.ports[port as usize].free_pending = true;
            self.q.push(done, EventKind::PortFree, port);
        }
    }

    /// A switch's data packet starts leaving `port`: the port appends its INT record (HPCC
    /// §3.1; `net/telemetry.rs` says what each field counts).
    // Out of line: runs without INT never call it.
    #[inline(never)]
    fn push_int_hop(&mut self, port: PortId, pkt: PktId) {
        if self.pool.get(pkt).kind != PktKind::Data {
            return;
        }
        let ps = &self.net.ports[port as usize];
        let hop = IntHop { ts: self.now, tx_bytes: ps.tx_bytes, qlen: ps.data_bytes + ps.ctrl_bytes, rate: ps.rate };
        if let Some(stack) = self.pool.telemetry_mut(pkt) {
            stack.push(hop);
        }
    }

    /// Discards a packet, charging the loss to its flow and to the right counter.
    pub(crate) fn drop_packet(&mut self, pkt: PktId) {
        let p = *self.pool.get(pkt);
        if self.tracer.log_drops {
            self.tracer.drops.push((self.now, p.port, p.conn));
        }
        if p.kind == PktKind::Data {
            self.tracer.log_packet(self.now, p.conn, p.seq, PacketEvent::Dropped, p.port);
        }
        let conn = &mut self.hosts.conns[p.conn as usize];
        conn.drops += 1;
        self.c.dropped[p.kind] += 1;
        if p.flags & F_TRIMMED != 0 {
            self.c.headers_dropped += 1;
        } else if p.kind == PktKind::Data {
            conn.data_drops += 1;
        } else if p.kind == PktKind::Pull {
            // The credits it granted are gone: the sender may have to start afresh.
            self.hosts.credit[p.conn as usize].pulls_settled += p.seq;
        }
        self.pool.free(pkt);
    }
}
