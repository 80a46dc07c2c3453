//! PFC handlers (IEEE 802.1Qbb; accounting in [`crate::net::pfc::PfcState`]): admission and
//! release of data packets at a switch, and the PAUSE/RESUME frames they trigger, which act on
//! the upstream port one propagation delay plus one 64-byte frame time later.

use crate::engine::queue::EventKind;
use crate::engine::Sim;
use crate::ids::{NodeId, PortId};
use crate::net::pfc::FRAME_BYTES;

impl Sim {
    /// PFC admission of data packet `size` bytes arriving at switch `sw` over upstream port
    /// `up`. Returns false if the packet must be dropped (headroom overflow).
    #[inline]
    pub(crate) fn pfc_admit(&mut self, sw: NodeId, up: PortId, size: u64) -> bool {
        let s = (sw - self.net.fabric.hosts) as usize;
        let (ok, pause) = self.net.pfc.admit(s, up as usize, size);
        if !ok {
            self.net.pfc.overflow_drops += 1;
            return false;
        }
        if pause {
            self.send_pfc_frame(up, true);
        }
        true
    }

    /// PFC release of a data packet leaving switch `sw` that came in over upstream port `up`.
    #[inline]
    pub(crate) fn pfc_release(&mut self, sw: NodeId, up: PortId, size: u64) {
        let s = (sw - self.net.fabric.hosts) as usize;
        if self.net.pfc.release(s, up as usize, size) {
            self.send_pfc_frame(up, false);
        }
    }

    /// Sends PAUSE (`pause`) or RESUME to upstream port `up`; it acts one propagation delay
    /// plus one frame time later.
    fn send_pfc_frame(&mut self, up: PortId, pause: bool) {
        let spec = &self.net.fabric.ports[up as usize];
        let delay = spec.latency + spec.rate.tx_time(FRAME_BYTES);
        if self.net.pfc.log_on && pause {
            self.net.pfc.log.push((self.now, up, pause));
        }
        self.net.pfc.ingress[up as usize].frame_sent(pause);
        let (at, upstream) = (self.now + delay, self.net.ports[up as usize].owner);
        match self.part.as_deref_mut() {
            Some(part) if part.remote(upstream) => part.send(upstream, crate::engine::parallel::Message::Frame { at, port: up, pause }),
            _ => self.q.push(at, EventKind::Pfc, up),
        }
    }

    /// The oldest PFC frame in flight to upstream port `port` reached it.
    pub(crate) fn on_pfc_frame(&mut self, port: u32) {
        let pause = self.net.pfc.ingress[port as usize].frame_arrived();
        let now = self.now;
        let ps = &mut self.net.ports[port as usize];
        let stats = &mut self.net.pfc.ingress[port as usize];
        if pause {
            if !ps.paused {
                ps.paused = true;
                stats.paused_since = now;
                stats.pauses_received += 1;
            }
        } else if ps.paused {
            ps.paused = false;
            stats.paused_total += now - stats.paused_since;
            self.port_kick(port);
        }
    }
}
