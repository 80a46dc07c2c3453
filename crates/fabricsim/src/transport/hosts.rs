//! The host layer's state: every host's NIC scheduler and the transport of every connection
//! (scoreboard, congestion control, path selection, loss recovery, credits, message gates).
//! Together with the network layer's state (`net::Network`) it is all a simulation holds
//! besides its kernel and the workload; the hosts' handlers (`sender.rs`, `receiver.rs`,
//! `credit.rs`) are methods on these fields. Arrays are indexed by host or connection id, so a
//! later partitioned engine can give a group of hosts its own slice.

use crate::net::nic::HostState;
use crate::transport::gate::AnyGate;
use crate::transport::Connection;
use crate::units::Time;
use std::collections::VecDeque;

/// Transport constants shared by every connection of a run.
#[derive(Clone, Copy, Debug)]
pub struct TransportParams {
    /// Payload bytes of a full packet.
    pub mss: u32,
    /// Header bytes.
    pub header: u32,
    /// ACK/NACK wire size.
    pub ack_bytes: u32,
    /// ACK coalescing factor.
    pub ack_every: u32,
    /// ACK once this many wire bytes arrived un-ACKed (0 = off; uec-spec §4).
    pub ack_coalesce_bytes: u32,
    /// ACK every CE-marked data packet at once (uec-spec §4).
    pub ack_on_ce: bool,
    /// Retransmission timeout.
    pub rto: Time,
    /// Whether data packets are ECN-capable.
    pub ect: bool,
    /// DCQCN notification point: at most one CNP per connection per this interval (`None` =
    /// receivers send no CNPs).
    pub cnp_interval: Option<Time>,
    /// DCQCN notification point: a sequence NACK also sends a CNP (under the same interval).
    pub ooo_cnp: bool,
    /// The gates' RTT sampling stride (`MessageGate::rtt_sample_stride`; 0 = none).
    pub rtt_sample_stride: u32,
}

impl TransportParams {
    /// Whether receivers coalesce ACKs (by packets or by bytes); senders then ask for an ACK at
    /// once on the packet that fills the window or ends the backlog.
    #[inline]
    pub fn coalescing(&self) -> bool {
        self.ack_every > 1 || self.ack_coalesce_bytes > 0
    }

    /// Whether the ACK of packet `seq` of message `m` is an RTT sample for the gate.
    #[inline]
    pub fn rtt_sampled(&self, seq: u32, m: &crate::transport::connection::OpenMsg) -> bool {
        let s = self.rtt_sample_stride;
        s > 0 && ((seq - m.first_pkt) % s == 0 || seq + 1 == m.end_pkt)
    }
}

/// Per-connection message state kept outside the hot connection record.
#[derive(Debug)]
pub struct Lane {
    /// Ready messages (task ids) the gate has not let through yet, oldest first.
    pub pending: VecDeque<u32>,
    /// The connection's gate.
    pub gate: AnyGate,
    /// Messages posted and not completed.
    pub in_flight_msgs: u32,
    /// Their payload bytes.
    pub in_flight_bytes: u64,
}

/// Everything the hosts own.
pub struct Hosts {
    /// NIC scheduler of each host (indexed by host id).
    pub nics: Vec<HostState>,
    /// Every connection's sending half (indexed by connection id).
    pub conns: Vec<Connection>,
    /// Every connection's receiving half (indexed by connection id).
    pub rx: Vec<super::receiver::Receiver>,
    /// Per-connection pending messages and gates.
    pub lanes: Vec<Lane>,
    /// Receiver credits (EQDS, RCCC): per-connection state, policy, per-host pull pacers.
    pub credits: super::credit::Credits,
    /// Transport constants.
    pub tp: TransportParams,
    /// `run.drop_packets`: (flow, seq, transmission to lose, transmissions seen so far, hold
    /// time: 0 = lose it, else the first switch holds it that long).
    pub drop_plan: Vec<(u32, u32, u32, u32, Time)>,
    /// What the senders have seen acknowledged (progress, ACK round trips).
    pub acked: super::sender::AckTotals,
}
