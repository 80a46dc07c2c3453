//! Flowlet sizes as the first switch sees them (SeqBalance paper §II-B, Fig. 1: "CDF of flowlet
//! sizes" of RDMA vs TCP traffic; `run.flowlet_gaps_us`). A flowlet of a connection ends when
//! its next data packet comes more than θ after the previous one; its size is the wire bytes of
//! its data packets (retransmissions included: the ToR sees them too).
//!
//! The packets are timed as they start onto the host's link. The host link is a FIFO of fixed
//! rate and delay, so the gaps between a connection's packets at the ToR's ingress are exactly
//! the gaps at the NIC: measuring there needs no per-switch state.

use crate::units::Time;

/// The open flowlet of each connection, for every gap θ, and the closed flowlets' sizes.
#[derive(Debug, Default)]
pub struct FlowletMeter {
    /// The gaps θ, in the scenario's order.
    gaps: Vec<Time>,
    /// Per connection: when its last data packet started (`Time::MAX`: none yet).
    last: Vec<Time>,
    /// Per connection × gap: bytes of the open flowlet.
    open: Vec<u64>,
    /// Per gap: sizes of the closed flowlets, in closing order.
    closed: Vec<Vec<u64>>,
}

impl FlowletMeter {
    /// A meter cutting flowlets at each of `gaps`.
    pub fn new(gaps: Vec<Time>) -> FlowletMeter {
        let closed = vec![Vec::new(); gaps.len()];
        FlowletMeter { gaps, last: Vec::new(), open: Vec::new(), closed }
    }

    /// One data packet of `bytes` of connection `conn` starting at `now`.
    #[inline]
    pub fn packet(&mut self, conn: u32, now: Time, bytes: u64) {
        let c = conn as usize;
        let g = self.gaps.len();
        if c >= self.last.len() {
            // Connections are numbered densely; grow to cover this one.
            self.last.resize(c + 1, Time::MAX);
            self.open.resize((c + 1) * g, 0);
        }
        let last = std::mem::replace(&mut self.last[c], now);
        for (i, &gap) in self.gaps.iter().enumerate() {
            let open = &mut self.open[c * g + i];
            if last != Time::MAX && now - last > gap {
                self.closed[i].push(std::mem::take(open));
            }
            *open += bytes;
        }
    }

    /// Per gap θ (in the scenario's order): θ and the sizes of every flowlet, the still open
    /// ones included (a run's end closes them), sorted.
    pub fn sizes(&self) -> Vec<(Time, Vec<u64>)> {
        let g = self.gaps.len();
        (0..g)
            .map(|i| {
                let mut v = self.closed[i].clone();
                v.extend(self.open.iter().skip(i).step_by(g).copied().filter(|&b| b > 0));
                v.sort_unstable();
                (self.gaps[i], v)
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::units::US;

    #[test]
    fn gaps_longer_than_theta_cut_flowlets_per_connection() {
        let mut m = FlowletMeter::new(vec![10 * US, 100 * US]);
        // Connection 0: 3 packets 1 µs apart, a 50 µs pause, 2 more; then a 200 µs pause, 1.
        for t in [0, 1, 2, 52, 53, 253] {
            m.packet(0, t * US, 1000);
        }
        // Connection 2 (1 is silent) interleaves: gaps are per connection.
        m.packet(2, 5 * US, 500);
        m.packet(2, 14 * US, 500);
        let s = m.sizes();
        assert_eq!(s[0], (10 * US, vec![1000, 1000, 2000, 3000]));
        assert_eq!(s[1], (100 * US, vec![1000, 1000, 5000]));
    }

    #[test]
    fn a_gap_of_exactly_theta_does_not_cut() {
        let mut m = FlowletMeter::new(vec![10 * US]);
        m.packet(0, Time::ZERO, 1);
        m.packet(0, 10 * US, 1);
        m.packet(0, 20 * US + Time(1), 1);
        assert_eq!(m.sizes()[0].1, vec![1, 2]);
        assert_eq!(FlowletMeter::new(vec![US]).sizes(), vec![(US, vec![])]);
    }
}
