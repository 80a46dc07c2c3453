//! The engine's side of the network elements (`net/switch.rs`, `net/port.rs`, `net/pfc.rs`):
//! it lends a handler the narrow context (the [`Kernel`]: clock, queue, pool, counters,
//! packet log, partition boundary), delivers what the handler left for the hosts as soon as it
//! returns, and starts ports: a switch's port on its own, a NIC's port by asking the host's
//! scheduler for data when its queues are empty (the NIC, state [`crate::net::nic::HostState`],
//! takes one packet from the connection at the head of its host's ready ring each time the port
//! is free, and puts the connection back at the tail if it may send again).

use super::parallel::Partition;
use super::Sim;
use crate::ids::{NodeId, PktId, PortId};
use crate::kernel::packet::Packet;
use crate::kernel::telemetry::IntStack;
use crate::kernel::{Boundary, Kernel};
use crate::net::port::Kick;
use crate::net::Network;
use crate::units::Time;

impl Sim {
    /// Runs network handler `f` with the network and the kernel, then delivers what it left for
    /// the hosts.
    #[inline(always)]
    pub(crate) fn with_net<R>(&mut self, f: impl FnOnce(&mut Network, &mut Kernel) -> R) -> R {
        let result = f(&mut self.net, &mut self.k);
        if !self.k.fx.is_empty() {
            self.deliver_host_effects();
        }
        result
    }

    /// Delivers the credit grants the network lost to their connections' credit state: the
    /// sender may have to start afresh (`transport::credit`).
    #[inline(never)]
    fn deliver_host_effects(&mut self) {
        for (conn, credits) in self.k.fx.lost_pulls.drain(..) {
            self.hosts.credits.pull_lost(conn, credits);
        }
    }

    /// Queues a packet that host-side code created on the host's NIC port `port` (in the class
    /// its kind travels in) and starts the port if it is idle.
    #[inline]
    pub(crate) fn host_send(&mut self, port: PortId, pkt: PktId) {
        let kick = self.with_net(|net, k| {
            net.queue_from_host(k, port, pkt);
            net.kick(k, port)
        });
        if kick == Kick::StartNow {
            self.port_start(port);
        }
    }

    /// Makes sure an idle port starts sending, or a busy one will look again when free.
    #[inline]
    pub(crate) fn port_kick(&mut self, port: PortId) {
        if self.with_net(|net, k| net.kick(k, port)) == Kick::StartNow {
            self.port_start(port);
        }
    }

    /// Port `port` finished its packet.
    pub(crate) fn on_port_free(&mut self, port: PortId) {
        self.net.ports[port as usize].free_pending = false;
        self.port_start(port);
    }

    /// Sends `port`'s next packet: a switch's port on its own, a NIC's port as
    /// [`Sim::start_nic_port`] says.
    #[inline(always)]
    fn port_start(&mut self, port: PortId) {
        if self.net.ports[port as usize].is_nic {
            self.start_nic_port(port)
        } else {
            self.with_net(|net, k| net.start_switch_port(k, port))
        }
    }

    /// Sends NIC port `port`'s next packet: from its queues, or when they are empty (and PFC
    /// does not pause it) from its host's scheduler.
    #[inline(never)]
    fn start_nic_port(&mut self, port: PortId) {
        let pkt = match self.with_net(|net, k| net.take_next(k, port)) {
            Some(p) => p,
            None if !self.net.ports[port as usize].paused => match self.nic_next_packet(self.net.ports[port as usize].owner) {
                Some(p) => p,
                None => return,
            },
            None => return,
        };
        let done = self.with_net(|net, k| net.transmit(k, port, pkt));
        let more = self.net.has_backlog(port) || (!self.net.ports[port as usize].paused && self.nic_has_ready(port));
        if more {
            self.with_net(|net, k| net.free_again_at(k, port, done));
        }
    }

    /// The oldest PFC frame in flight to upstream port `port` reached it; a RESUME restarts
    /// the port.
    pub(crate) fn on_pfc_frame(&mut self, port: PortId) {
        if self.net.on_pfc_frame(self.k.now, port) {
            self.port_kick(port);
        }
    }

    /// A packet `run.drop_packets` holds (`hold_us`), which its first switch gave back: it
    /// arrives at that switch again once held.
    #[inline(never)]
    pub(crate) fn hold(&mut self, pkt: PktId) {
        let p = self.k.pool.get(pkt);
        let (conn, seq) = (p.conn, p.seq);
        let entry = self.hosts.drop_plan.iter().position(|d| d.0 == conn && d.1 == seq && d.4 > 0);
        let hold = entry.map_or(0, |i| self.hosts.drop_plan[i].4);
        // Ordered by its plan entry (its port may carry another packet at that instant).
        self.k.q.push_for(self.k.now + hold, super::queue::EventKind::HeldArrive, entry.unwrap_or(0) as u32, pkt);
    }

    /// Whether the host owning NIC port `port` has a connection waiting to send.
    #[inline]
    pub(crate) fn nic_has_ready(&self, port: PortId) -> bool {
        let host = self.net.ports[port as usize].owner;
        !self.hosts.nics[host as usize].ready.is_empty()
    }

    /// The next data packet of `host`, round-robin over its ready connections.
    pub(crate) fn nic_next_packet(&mut self, host: NodeId) -> Option<PktId> {
        while let Some(c) = self.hosts.nics[host as usize].ready.pop_front() {
            self.hosts.conns[c as usize].in_ready = false;
            if let Some(pkt) = self.conn_emit(c) {
                if let Some(m) = self.tracer.flowlets.as_deref_mut() {
                    // `run.flowlet_gaps_us`: the packet starts onto the host link now.
                    m.packet(c, self.k.now, self.k.pool.get(pkt).size as u64);
                }
                if self.conn_may_send(c) {
                    self.hosts.conns[c as usize].in_ready = true;
                    self.hosts.nics[host as usize].ready.push_back(c);
                }
                return Some(pkt);
            }
        }
        None
    }
}

impl Boundary for Partition {
    #[inline]
    fn remote(&self, node: NodeId) -> bool {
        Partition::remote(self, node)
    }

    fn send_packet(&mut self, node: NodeId, at: Time, pkt: &Packet, int: Option<&IntStack>) {
        Partition::send_packet(self, node, at, pkt, int)
    }

    fn send_pfc_frame(&mut self, node: NodeId, at: Time, port: PortId, pause: bool) {
        self.send(node, super::parallel::Message::Frame { at, port, pause })
    }

    fn as_any(&self) -> &dyn std::any::Any {
        self
    }

    fn as_any_mut(&mut self) -> &mut dyn std::any::Any {
        self
    }
}
