//! Host NIC handlers (state: [`crate::net::nic::HostState`]): the NIC takes one packet from the
//! connection at the head of its host's ready ring each time the port is free, and puts the
//! connection back at the tail if it may send again.

use crate::engine::Sim;
use crate::ids::{NodeId, PktId, PortId};

impl Sim {
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
