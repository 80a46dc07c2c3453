//! Timing derived from the fabric: the base RTT and BDP of the longest path, and the
//! retransmission timeout (given, or derived from the base RTT and the queues on that path).

use super::{positive_time, TransportConfig};
use crate::error::{Error, Result};
use crate::ids::NodeId;
use crate::net::qdisc::QdiscTable;
use crate::topo::Fabric;
use crate::units::{us_to_ps, Time, MAX_TIME_US, MS, SEC};

/// The longest path's figures.
pub(super) struct Base {
    /// Its endpoints (hosts): the farthest pair of the fabric.
    pub pair: (NodeId, NodeId),
    /// Its round-trip time with full data packets and ACKs.
    pub rtt: Time,
    /// Host rate × that RTT.
    pub bdp_bytes: u64,
}

impl Base {
    /// Figures of `fabric`'s farthest pair with `tr`'s packet sizes.
    pub fn of(fabric: &Fabric, tr: &TransportConfig) -> Base {
        let (a, b) = fabric.farthest_pair();
        let rtt = fabric.base_rtt(a, b, tr.mtu_bytes as u64, tr.ack_bytes as u64);
        let host_rate = fabric.ports[fabric.host_port[0] as usize].rate;
        Base { pair: (a, b), rtt, bdp_bytes: host_rate.bytes_in(rtt) }
    }
}

/// The retransmission timeout: `transport.rto_us` when given (positive), 4 ms on a lossless
/// (PFC) fabric, else the base RTT plus twice the time to drain a full data buffer at every hop
/// of the longest path.
pub(super) fn rto(tr: &TransportConfig, lossless: bool, fabric: &Fabric, qdisc: &QdiscTable, base: &Base) -> Result<Time> {
    Ok(match tr.rto_us {
        Some(us) => positive_time("transport.rto_us", us, "the retransmission timeout")?,
        // A lossless fabric loses nothing to congestion, and pauses can hold a packet far
        // longer than one port's buffer takes to drain: RoCE NICs use milliseconds (4 ms,
        // the HPCC ns-3 default the seqbalance spec §2.3.2 adopts).
        None if lossless => 4 * MS,
        None => {
            // Worst case of a packet that is not lost: the longest path's base RTT plus a full
            // data buffer drained at every hop, with a factor 2 of margin. Summed in u128: slow
            // links with deep buffers can take longer than any run may (then an error, never a
            // wrapped timeout).
            let path = fabric.representative_path(base.pair.0, base.pair.1);
            let queueing: u128 = path.iter().map(|&p| fabric.ports[p as usize].rate.tx_time(qdisc.of_port(p).buffer_bytes) as u128).sum();
            let rto = base.rtt as u128 + 2 * queueing;
            if rto > us_to_ps(MAX_TIME_US) as u128 {
                return Err(Error::invalid(
                    "transport.rto_us",
                    format!(
                        "unset, so derived as base RTT + 2 × draining every buffer of the longest path: {} s, above the {} s a run may last; give rto_us (0..={MAX_TIME_US} µs) or smaller switch buffers",
                        rto as f64 / SEC as f64,
                        MAX_TIME_US / 1e6
                    ),
                ));
            }
            rto as Time
        }
    })
}
