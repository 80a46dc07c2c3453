//! The engine's side of the network elements (`net/switch.rs`, `net/port.rs`, `net/pfc.rs`):
//! it lends a handler the narrow context ([`NetCtx`]) made of its own clock, queue, pool,
//! counters and packet log, delivers what the handler left for the hosts as soon as it
//! returns, and starts ports: a switch's port on its own, a NIC's port by asking the host's
//! scheduler for data when its queues are empty.

use super::parallel::Partition;
use super::Sim;
use crate::ids::{PktId, PortId};
use crate::net::ctx::{Boundary, NetCtx};
use crate::net::port::Kick;
use crate::net::Network;

impl Sim {
    /// Runs network handler `f` with the network and its context, then delivers what it left
    /// for the hosts.
    #[inline(always)]
    pub(crate) fn with_net<R>(&mut self, f: impl FnOnce(&mut Network, &mut NetCtx) -> R) -> R {
        let result = {
            let mut cx = NetCtx {
                now: self.now,
                q: &mut self.q,
                pool: &mut self.pool,
                c: &mut self.c,
                log: &mut self.tracer.log,
                boundary: self.part.as_deref_mut().map(|p| p as &mut dyn Boundary),
                fx: &mut self.host_effects,
            };
            f(&mut self.net, &mut cx)
        };
        if !self.host_effects.is_empty() {
            self.deliver_host_effects();
        }
        result
    }

    /// Delivers the credit grants the network lost to their connections' credit state: the
    /// sender may have to start afresh (`transport::credit`).
    #[inline(never)]
    fn deliver_host_effects(&mut self) {
        for (conn, credits) in self.host_effects.lost_pulls.drain(..) {
            self.hosts.credit[conn as usize].pulls_settled += credits;
        }
    }

    /// Queues a packet that host-side code created on the host's NIC port `port` (in the class
    /// its kind travels in) and starts the port if it is idle.
    #[inline]
    pub(crate) fn host_send(&mut self, port: PortId, pkt: PktId) {
        self.with_net(|net, cx| net.queue_from_host(cx, port, pkt));
        self.port_kick(port);
    }

    /// Makes sure an idle port starts sending, or a busy one will look again when free.
    #[inline]
    pub(crate) fn port_kick(&mut self, port: PortId) {
        if self.with_net(|net, cx| net.kick(cx, port)) == Kick::StartNow {
            self.port_start(port);
        }
    }

    /// Port `port` finished its packet.
    pub(crate) fn on_port_free(&mut self, port: PortId) {
        self.net.ports[port as usize].free_pending = false;
        self.port_start(port);
    }

    /// Sends `port`'s next packet: from its queues, or for a NIC whose queues are empty (and
    /// not paused by PFC) from its host's scheduler.
    fn port_start(&mut self, port: PortId) {
        if !self.net.ports[port as usize].is_nic {
            return self.with_net(|net, cx| net.start_switch_port(cx, port));
        }
        let pkt = match self.with_net(|net, cx| net.take_next(cx, port)) {
            Some(p) => p,
            None if !self.net.ports[port as usize].paused => match self.nic_next_packet(self.net.ports[port as usize].owner) {
                Some(p) => p,
                None => return,
            },
            None => return,
        };
        let done = self.with_net(|net, cx| net.transmit(cx, port, pkt));
        let more = self.net.has_backlog(port) || (!self.net.ports[port as usize].paused && self.nic_has_ready(port));
        if more {
            self.with_net(|net, cx| net.free_again_at(cx, port, done));
        }
    }

    /// The oldest PFC frame in flight to upstream port `port` reached it; a RESUME restarts
    /// the port.
    pub(crate) fn on_pfc_frame(&mut self, port: PortId) {
        if self.net.on_pfc_frame(self.now, port) {
            self.port_kick(port);
        }
    }

    /// A packet `run.drop_packets` holds (`hold_us`), which its first switch gave back: it
    /// arrives at that switch again once held.
    #[inline(never)]
    pub(crate) fn hold(&mut self, pkt: PktId) {
        let p = self.pool.get(pkt);
        let (conn, seq) = (p.conn, p.seq);
        let entry = self.hosts.drop_plan.iter().position(|d| d.0 == conn && d.1 == seq && d.4 > 0);
        let hold = entry.map_or(0, |i| self.hosts.drop_plan[i].4);
        // Ordered by its plan entry (its port may carry another packet at that instant).
        self.q.push_for(self.now + hold, super::queue::EventKind::HeldArrive, entry.unwrap_or(0) as u32, pkt);
    }
}

impl Boundary for Partition {
    #[inline]
    fn remote(&self, node: crate::ids::NodeId) -> bool {
        Partition::remote(self, node)
    }

    fn send_packet(&mut self, node: crate::ids::NodeId, at: crate::units::Time, pkt: &crate::net::packet::Packet, int: Option<&crate::net::telemetry::IntStack>) {
        Partition::send_packet(self, node, at, pkt, int)
    }

    fn send_pfc_frame(&mut self, node: crate::ids::NodeId, at: crate::units::Time, port: PortId, pause: bool) {
        self.send(node, super::parallel::Message::Frame { at, port, pause })
    }
}
