//! Switch: picks an output port for each arriving packet and applies the port's queue
//! discipline.
//!
//! Output-queued, as in the smartt-reps spec §4.3a: at the destination's ToR the packet goes
//! down the host's port; elsewhere it hashes (src, dst, flow, entropy) with the switch's own
//! seed onto the equal-cost next hops, so each tier decides independently. Control packets and
//! trimmed headers go to the strict-priority class; data meets the drop-tail/ECN/trim
//! discipline (`qdisc.rs`) of the output port's own profile. The forwarding latency was already added to the arrival time.

use crate::engine::Sim;
use crate::ids::{NodeId, PktId, PortId};
use crate::net::packet::{Packet, PktKind, F_CE, F_DOOMED, F_ECT, F_TRIMMED};
use crate::net::qdisc::Verdict;
use crate::rng::mix64;

impl Sim {
    /// The output port switch `sw` sends packet `p` to: the host's port at its ToR, else the
    /// ECMP hash of (src, dst, flow, entropy) with the switch's seed over the next hops.
    #[inline]
    pub(crate) fn route_out(&self, sw: NodeId, p: &Packet) -> PortId {
        let dst_tor = self.fabric.tor_of_host[p.dst as usize];
        if sw == dst_tor {
            return self.fabric.host_downlink[p.dst as usize];
        }
        let hops = self.fabric.routes.next_hops(&self.fabric, sw, dst_tor);
        if hops.len() == 1 {
            return hops[0];
        }
        let seed = self.switch_seed[(sw - self.fabric.hosts) as usize];
        let h = mix64(seed ^ ((p.src as u64) << 32 | p.dst as u64));
        let h = mix64(h ^ ((p.conn as u64) << 16 | p.entropy as u64));
        hops[((h as u128 * hops.len() as u128) >> 64) as usize]
    }

    /// Forwards packet `pkt` that arrived at switch `sw`.
    pub(crate) fn switch_receive(&mut self, sw: NodeId, pkt: PktId) {
        let p = *self.pool.get(pkt);
        let out = match p.route_hint {
            0 => self.route_out(sw, &p),
            hint => hint - 1,
        };
        if p.flags & F_DOOMED != 0 {
            self.drop_packet(pkt);
            return;
        }
        if !self.ports[out as usize].up {
            self.ports[out as usize].drops += 1;
            self.drop_packet(pkt);
            return;
        }
        if !matches!(p.kind, PktKind::Data | PktKind::Probe) || p.flags & F_TRIMMED != 0 {
            self.enqueue_ctrl(out, pkt);
            return;
        }
        if self.pfc.on && !self.pfc_admit(sw, p.port, p.size as u64) {
            self.ports[out as usize].drops += 1;
            self.c.buffer_drops += 1;
            self.drop_packet(pkt);
            return;
        }
        let ps = &mut self.ports[out as usize];
        match self.qdisc.profiles[ps.qdisc as usize].on_arrival(ps.data_bytes, p.size as u64, p.flags & F_ECT != 0, &mut ps.rng) {
            Verdict::Enqueue { mark } => {
                if mark {
                    self.pool.get_mut(pkt).flags |= F_CE;
                    ps.marks += 1;
                    self.c.ecn_marked += 1;
                }
                ps.data.push_back(pkt);
                ps.data_bytes += p.size as u64;
                ps.max_data_bytes = ps.max_data_bytes.max(ps.data_bytes);
                self.port_kick(out);
            }
            Verdict::Trim if p.kind == PktKind::Probe => {
                // A probe is already header-sized: it moves to the control class untouched.
                self.enqueue_ctrl(out, pkt);
            }
            Verdict::Trim => {
                ps.trims += 1;
                self.c.data_trimmed += 1;
                self.conns[p.conn as usize].trims += 1;
                let hdr = self.qdisc.header_bytes;
                let pk = self.pool.get_mut(pkt);
                pk.size = hdr;
                pk.flags |= F_TRIMMED;
                self.enqueue_ctrl(out, pkt);
            }
            Verdict::Drop => {
                ps.drops += 1;
                self.c.buffer_drops += 1;
                self.drop_packet(pkt);
            }
        }
    }
}
