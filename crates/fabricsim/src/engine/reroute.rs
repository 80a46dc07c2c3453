//! Routing re-convergence after a link event that sets `reroute_after_us`: the equal-cost tables
//! are rebuilt over the links up at that moment (statically removed links stay down unless a
//! link event brought them up). Without such an event routes never change, as in the
//! smartt-reps testbed (spec §4.6).

use super::queue::EventKind;
use super::Sim;
use crate::topo::routing;

impl Sim {
    /// Recomputes the route table from the ports' current up/down state.
    pub(crate) fn reroute(&mut self) {
        let ports = &self.net.ports;
        self.net.fabric.routes = routing::compute(&self.net.fabric, |p| ports[p as usize].up);
        // The look-ahead may already have routed arrivals of the current bucket with the old
        // table: make them route again.
        let mut k = 0;
        while let Some(e) = self.k.q.peek_ahead(k) {
            let (kind, id) = (e.kind(), e.id);
            if matches!(kind, EventKind::Arrive | EventKind::HeldArrive) {
                self.k.pool.get_mut(id).link = 0;
            }
            k += 1;
        }
    }
}
