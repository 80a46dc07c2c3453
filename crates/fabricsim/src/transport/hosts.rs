//! The host layer's state: every host's NIC scheduler and the transport of every connection
//! (scoreboard, congestion control, path selection, loss recovery, credits, message gates).
//! Together with the network layer's state (`net::Network`) it is all a simulation holds
//! besides its kernel and the workload; the hosts' handlers (`sender.rs`, `receiver.rs`,
//! `credit.rs`) are methods on these fields. Arrays are indexed by host or connection id, so a
//! later partitioned engine can give a group of hosts its own slice.

use crate::ids::ConnId;
use crate::net::nic::HostState;
use crate::transport::cc::CongestionControl;
use crate::transport::gate::{AnyGate, GateState, MessageFeedback, MessageGate, WindowUpdate};
use crate::transport::receiver::Receiver;
use crate::transport::Connection;
use crate::kernel::store::{Layout, Whole};
use crate::units::{Bytes, Time};

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
    /// The receiver-to-sender signals' parameters (`transport/signal/`: DCQCN's CNP).
    pub signals: super::signal::Signals,
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
    pub in_flight_bytes: Bytes,
}

/// Everything the hosts own.
pub struct Hosts<L: Layout = Whole> {
    /// NIC scheduler of each host (indexed by host id; a partition's: its own hosts').
    pub nics: L::Of<HostState>,
    /// The connections' sending halves, by connection id: every one, or (a partition's) those
    /// whose sender or receiver it runs (the receiver reads the sender's posted messages).
    pub conns: L::Of<Connection>,
    /// What every connection's sender counted (indexed by connection id; a partition's: the
    /// connections whose sender it runs).
    pub stats: L::Of<super::sender::SenderStats>,
    /// The connections' receiving halves, by connection id: every one, or (a partition's) those
    /// whose receiver it runs.
    pub rx: L::Of<Receiver>,
    /// Per-connection pending messages and gates (a partition's: the connections whose sender
    /// it runs).
    pub lanes: L::Of<Lane>,
    /// Receiver credits (EQDS, RCCC): per-connection state, policy, per-host pull pacers.
    pub credits: super::credit::Credits,
    /// Transport constants.
    pub tp: TransportParams,
    /// `run.drop_packets`: (flow, seq, transmission to lose, transmissions seen so far, hold
    /// time: 0 = lose it, else the first switch holds it that long).
    pub drop_plan: Vec<(u32, u32, u32, u32, Time)>,
    /// What the senders have seen acknowledged (progress, ACK round trips).
    pub acked: super::sender::AckTotals,
    /// Where GPUs' NICs spray packets over their ports: which ports carry which connection.
    pub sprayed: Option<crate::net::nic::SprayedPorts>,
}

/// The hosts' work-request interface, what the workload sees of them: a message offered to a
/// connection waits behind its gate until posted; the receiver reports messages delivered in
/// order, the sender messages fully acknowledged (completed), which may open the gate again.
impl<L: Layout> Hosts<L> {
    /// Queues message `msg` (when given) on connection `c` behind its gate and posts the queued
    /// messages as far as the gate allows, appending their ids to `posted`. `bytes_of` gives a
    /// message's payload bytes.
    pub fn offer(&mut self, now: Time, c: ConnId, msg: Option<u32>, bytes_of: impl Fn(u32) -> u64, posted: &mut Vec<u32>) {
        let mss = self.tp.mss;
        if let Some(m) = msg {
            self.lanes[c.idx()].pending.push_back(m);
        }
        while let Some(&m) = self.lanes[c.idx()].pending.front() {
            let bytes = bytes_of(m);
            let lane = &mut self.lanes[c.idx()];
            let st = GateState { now, in_flight_msgs: lane.in_flight_msgs, in_flight_bytes: lane.in_flight_bytes, next_bytes: Bytes(bytes) };
            if !lane.gate.may_post(&st) {
                break;
            }
            lane.pending.pop_front();
            lane.in_flight_msgs += 1;
            lane.in_flight_bytes += Bytes(bytes);
            let conn = &mut self.conns[c.idx()];
            if conn.idle() {
                // A message on an idle connection starts a flow: its pacer may delay it.
                let j = conn.cc.start_jitter();
                if j > Time::ZERO {
                    let d = conn.rng.below((j + Time(1)).0);
                    conn.next_send = conn.next_send.max(now + Time(d));
                    conn.pace_idle = false;
                }
            }
            conn.post(m, bytes, mss, now);
            if self.credits.on {
                self.credits.on_post(c, &self.conns[c.idx()]);
            }
            posted.push(m);
        }
    }

    /// The next message of connection `c` delivered in order at its receiver now, if its
    /// packets below `end` hold one not reported yet.
    pub fn next_delivered(&mut self, now: Time, c: ConnId, end: u32) -> Option<u32> {
        let conn = &mut self.conns[c.idx()];
        let r = &mut self.rx[c.idx()];
        let m = conn.msgs.get_mut(r.next_msg(conn.msgs_retired))?;
        if m.end_pkt > end {
            return None;
        }
        m.delivered_at = now;
        r.msgs_delivered += 1;
        Some(m.msg)
    }

    /// The next message of connection `c` its sender holds fully acknowledged, if any: it
    /// leaves the connection and its gate hears of it (returning its window decision, if it
    /// made one, for the gate log). `bytes_of` gives a message's payload bytes.
    pub fn next_completed(&mut self, now: Time, c: ConnId, bytes_of: impl Fn(u32) -> u64) -> Option<(u32, Option<WindowUpdate>)> {
        let conn = &mut self.conns[c.idx()];
        let &m = conn.msgs.front()?;
        // Acknowledged (and, where the mode completes on settle, reported done) implies sent
        // and delivered.
        if m.end_pkt > conn.snd_una.min(conn.settled_end) {
            return None;
        }
        conn.msgs.pop_front();
        conn.msgs_sent -= 1;
        conn.msgs_retired += 1;
        let bytes = bytes_of(m.msg);
        let lane = &mut self.lanes[c.idx()];
        lane.in_flight_msgs -= 1;
        lane.in_flight_bytes -= Bytes(bytes);
        let fb = MessageFeedback {
            now,
            bytes: Bytes(bytes),
            posted_at: m.posted_at,
            first_tx: m.first_tx,
            delivered_at: m.delivered_at,
            rtt_max: m.rtt_max,
            rtt_mean: m.rtt_sum.checked_div(m.rtt_samples as u64).unwrap_or(Time::ZERO),
            in_flight_msgs: lane.in_flight_msgs,
        };
        Some((m.msg, lane.gate.on_complete(&fb)))
    }
}
