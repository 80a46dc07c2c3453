//! Timing derived from the fabric: the base RTT and BDP of the longest path, and the
//! retransmission timeout (given, or derived from the base RTT and the queues on that path).

use super::{positive_time, TransportConfig};
use crate::error::{Error, Result};
use crate::ids::NodeId;
use crate::net::qdisc::QdiscTable;
use crate::topo::Fabric;
use crate::units::{Bytes, MAX_TIME_US, MS, SEC, Time, show_num, us_to_ps};

/// The longest path's figures.
pub(super) struct Base {
    /// Its endpoints (hosts): the farthest pair of the fabric.
    pub pair: (NodeId, NodeId),
    /// Its round-trip time with full data packets and ACKs.
    pub rtt: Time,
    /// Host rate × that RTT.
    pub bdp_bytes: Bytes,
    /// The round trip of the nearest pair (host 0 and another host of its ToR,
    /// [`Fabric::nearest_pair`]): no acknowledgement can come back sooner.
    pub nearest_rtt: Time,
}

impl Base {
    /// Figures of `fabric`'s farthest pair with `tr`'s packet sizes.
    pub fn of(fabric: &Fabric, tr: &TransportConfig) -> Base {
        let (a, b) = fabric.farthest_pair();
        let rtt = fabric.base_rtt(a, b, tr.mtu_bytes as u64, tr.ack_bytes as u64);
        let host_rate = fabric.ports[fabric.host_port[0].idx()].rate;
        let (n0, n1) = fabric.nearest_pair();
        let nearest_rtt = if fabric.hosts >= 2 { fabric.base_rtt(n0, n1, tr.mtu_bytes as u64, tr.ack_bytes as u64) } else { rtt };
        Base { pair: (a, b), rtt, bdp_bytes: host_rate.bytes_in(rtt), nearest_rtt }
    }
}

/// The retransmission timeout: `transport.rto_us` when given (positive), 4 ms on a lossless
/// (PFC) fabric, else the base RTT plus twice the time to drain a full data buffer at every hop
/// of the longest path.
pub(super) fn rto(tr: &TransportConfig, lossless: bool, fabric: &Fabric, qdisc: &QdiscTable, base: &Base) -> Result<Time> {
    Ok(match tr.rto_us {
        Some(us) => {
            let rto = positive_time("transport.rto_us", us, "the retransmission timeout")?;
            if rto < base.nearest_rtt {
                return Err(Error::invalid(
                    "transport.rto_us",
                    format!(
                        "{}: shorter than the round trip of the nearest pair of hosts ({} µs), so every packet would time out before its ACK could return; allowed from {} µs",
                        show_num(us),
                        show_num(base.nearest_rtt.0 as f64 / 1e6),
                        show_num(base.nearest_rtt.0 as f64 / 1e6)
                    ),
                ));
            }
            rto
        }
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
            let queueing: u128 = path.iter().map(|&p| fabric.ports[p.idx()].rate.tx_time(qdisc.of_port(p.0).buffer_bytes).0 as u128).sum();
            let rto = base.rtt.0 as u128 + 2 * queueing;
            if rto > us_to_ps(MAX_TIME_US).0 as u128 {
                return Err(Error::invalid(
                    "transport.rto_us",
                    format!(
                        "unset, so derived as base RTT + 2 × draining every buffer of the longest path: {} s, above the {} s a run may last; give rto_us (0..={MAX_TIME_US} µs) or smaller switch buffers",
                        rto as f64 / SEC.0 as f64,
                        MAX_TIME_US / 1e6
                    ),
                ));
            }
            Time(rto as u64)
        }
    })
}

/// The livelock guard's limit: `run.stall_limit_us` as `given` (0 = off; else at least the
/// nearest pair's round trip, before which nothing can be acknowledged), or unset the 10 ms
/// default, raised to twice a timeout and a longest-path round trip where those are longer: a
/// loss found by the timeout is acknowledged only one RTO and one RTT later, and on slow links
/// (1 Mb/s: 33 ms to send one 4 KB packet) that exceeds 10 ms for every run.
pub(super) fn stall_limit(given: Option<Time>, rto: Time, base: &Base) -> Result<Time> {
    match given {
        Some(Time::ZERO) => Ok(Time::ZERO),
        Some(limit) if limit < base.nearest_rtt => Err(Error::invalid(
            "run.stall_limit_us",
            format!(
                "{}: shorter than the round trip of the nearest pair of hosts ({} µs), before which nothing can be acknowledged; allowed: 0 (off) or from {} µs",
                show_num(limit.0 as f64 / 1e6),
                show_num(base.nearest_rtt.0 as f64 / 1e6),
                show_num(base.nearest_rtt.0 as f64 / 1e6)
            ),
        )),
        Some(limit) => Ok(limit),
        None => Ok(us_to_ps(super::run_options::DEFAULT_STALL_LIMIT_US).max(rto.saturating_add(base.rtt).saturating_mul(2))),
    }
}
