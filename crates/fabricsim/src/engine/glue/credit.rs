//! The engine's side of the credit schemes (EQDS, RCCC; their state and handlers:
//! [`crate::transport::credit::Credits`]): a pacer's tick sends the PULL it makes, and a PULL
//! that arrives wakes its connection.

use crate::engine::Sim;
use crate::ids::{NodeId, PktId};

impl Sim {
    /// The pacer of `host` may send one PULL.
    pub(crate) fn on_pull_tick(&mut self, host: NodeId) {
        let port = self.hosts.nics[host as usize].port;
        let rate = self.net.ports[port as usize].rate;
        let h = &mut self.hosts;
        let Some(pull) = h.credits.on_pull_tick(&mut self.k, host, &h.conns, &h.tp, port, rate) else { return };
        self.host_send(port, pull);
        self.hosts.credits.schedule_tick(&mut self.k, host);
    }

    /// Sender: a PULL arrived.
    pub(crate) fn on_pull(&mut self, pkt: PktId) {
        let h = &mut self.hosts;
        let c = h.credits.on_pull(&mut self.k, pkt, &h.conns);
        self.conn_wake(c);
    }
}
