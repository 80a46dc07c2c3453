//! Host NIC: one egress port shared round-robin by the host's connections that may send.
//!
//! A connection joins its host's ready ring when its congestion control and pacer allow a
//! packet; the NIC takes one packet from the connection at the head of the ring each time the
//! port is free (after any pending ACK/NACK, which have priority) and puts the connection back
//! at the tail if it may send again. Packets are created only at that moment, so the NIC holds
//! no data queue.

use crate::engine::Sim;
use crate::ids::{ConnId, NodeId, PktId, PortId};
use std::collections::VecDeque;

/// Scheduler state of one host.
#[derive(Debug)]
pub struct HostState {
    /// The NIC's egress port.
    pub port: PortId,
    /// Connections that may send now, in round-robin order.
    pub ready: VecDeque<ConnId>,
}

impl HostState {
    /// A host whose NIC is `port`.
    pub fn new(port: PortId) -> Self {
        HostState { port, ready: VecDeque::new() }
    }
}

impl Sim {
    /// Whether the host owning NIC port `port` has a connection waiting to send.
    #[inline]
    pub(crate) fn nic_has_ready(&self, port: PortId) -> bool {
        let host = self.ports[port as usize].owner;
        !self.hosts[host as usize].ready.is_empty()
    }

    /// The next data packet of `host`, round-robin over its ready connections.
    pub(crate) fn nic_next_packet(&mut self, host: NodeId) -> Option<PktId> {
        while let Some(c) = self.hosts[host as usize].ready.pop_front() {
            self.conns[c as usize].in_ready = false;
            if let Some(pkt) = self.conn_emit(c) {
                if self.conn_may_send(c) {
                    self.conns[c as usize].in_ready = true;
                    self.hosts[host as usize].ready.push_back(c);
                }
                return Some(pkt);
            }
        }
        None
    }
}
