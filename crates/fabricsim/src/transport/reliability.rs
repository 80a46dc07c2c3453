//! Loss recovery: how a receiver reports gaps and how a sender decides what to resend.
//!
//! Every mode shares the sender's scoreboard (`connection.rs`) and the retransmission timer;
//! they differ in what the receiver keeps and answers, and in what the sender infers:
//!
//! - `sack` (default): the receiver keeps out-of-order packets and acknowledges with a
//!   cumulative ACK plus a 64-packet bitmap; trimmed headers are NACKed at once; anything else
//!   is found by the retransmission timeout (RTO). The SMaRTT-REPS and EQDS model.
//! - `go_back_n`: RoCEv2's responder. Only the expected packet (PSN) is accepted; an
//!   out-of-order arrival is discarded and answered with one sequence NACK carrying the
//!   expected PSN; the sender resends everything from it (strack spec §1, §3.3; seqbalance spec
//!   §2.3.2–2.3.3; lb-ai-training spec LR-ROCE). An RTO also goes back to the oldest
//!   unacknowledged packet.
//! - `selective_nack`: "RoCE NACK at the given packet number" (lb-ai-training spec LR-ROCE
//!   variant): the receiver keeps out-of-order packets and NACKs the expected PSN once; the
//!   sender resends only that packet.
//! - `strack`: STrack's reliability for lossy multipath fabrics (strack spec §2.5.7–2.5.11):
//!   in-order arrivals are ACKed at once, the SACK bitmap covers the 64-packet segment of the
//!   lowest packet that arrived since the previous ACK, and every ACK carries the count of
//!   packets held above the cumulative point. The sender detects loss on three time scales:
//!   out-of-order count above max(cwnd, 5) packets (≈ 1–2 RTTs), an unanswered-looking probe
//!   after 3 network RTTs without ACKs, and the RTO; recovery declares the holes up to the
//!   highest received packet lost and resends them within the window.
//!
//! A sequence NACK is a gap report, not a congestion signal: it is not passed to the congestion
//! controller (trimming NACKs are).

use super::connection::SeqState;
use crate::engine::queue::EventKind;
use crate::engine::Sim;
use crate::error::{Error, Result};
use crate::ids::{ConnId, PktId};
use crate::net::packet::{Packet, PktKind, F_ECT};
use crate::scenario::NoParams;
use crate::transport::cc::CongestionControl;
use crate::transport::lb::{EntropyCtx, Feedback, PathSelector};
use crate::units::Time;
use serde::{Deserialize, Serialize};

/// Scenario selection of the loss-recovery mode (`[transport.reliability]`, `name = ...`).
#[derive(Clone, Debug, Serialize)]
#[serde(tag = "name", rename_all = "snake_case")]
pub enum ReliabilityConfig {
    /// Cumulative + selective ACKs, NACKs for trimmed headers, RTO.
    Sack(NoParams),
    /// RoCEv2 go-back-N.
    GoBackN(NoParams),
    /// RoCE selective-repeat NACK at the expected packet number.
    SelectiveNack(NoParams),
    /// STrack's SACK with out-of-order, probe and timeout loss detection.
    Strack(StrackLossParams),
}

crate::tagged_config!(ReliabilityConfig, "name", "reliability mode", {
    "sack" => Sack(NoParams),
    "go_back_n" => GoBackN(NoParams),
    "selective_nack" => SelectiveNack(NoParams),
    "strack" => Strack(StrackLossParams),
});

impl Default for ReliabilityConfig {
    fn default() -> Self {
        ReliabilityConfig::Sack(NoParams {})
    }
}

/// Registry rows: (name, summary).
pub const REGISTRY: &[(&str, &str)] = &[
    ("sack", "cumulative ACK + 64-packet SACK bitmap; NACK per trimmed header; RTO"),
    ("go_back_n", "RoCEv2: in-order receiver, one NACK per gap, sender resends from the NACKed PSN"),
    ("selective_nack", "RoCE selective repeat: receiver keeps out-of-order data, NACKs the expected PSN once; sender resends it"),
    ("strack", "STrack: SACK segments, out-of-order count, probe after 3 RTTs, RTO (strack spec §2.5.7-2.5.11)"),
];

/// Registry rows with parameters (for `fabricsim list`).
pub const REGISTRY_ROWS: &[crate::scheme::SchemeRow] = &[
    crate::scheme::plain_row::<NoParams>(REGISTRY[0].0, REGISTRY[0].1),
    crate::scheme::plain_row::<NoParams>(REGISTRY[1].0, REGISTRY[1].1),
    crate::scheme::plain_row::<NoParams>(REGISTRY[2].0, REGISTRY[2].1),
    crate::scheme::plain_row::<StrackLossParams>(REGISTRY[3].0, REGISTRY[3].1),
];

/// Parameters of `strack` loss detection (strack spec §2.1.2).
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct StrackLossParams {
    /// Floor of the out-of-order threshold, in packets (paper: "say 5").
    pub min_ooo_threshold: u32,
    /// A probe goes out after this many network base RTTs without an ACK (paper: n = 3).
    pub probe_interval_rtts: f64,
    /// A probe answer whose queueing delay is below this many network RTTs, with no other ACK
    /// since the probe, means the outstanding packets were lost (Algorithm 1 line 10: 2).
    pub probe_small_delay_rtts: f64,
    /// Probe-triggered recovery covers packets up to the highest sent before the probe
    /// (`extended`, our reading of the intent; spec §2.5.9) or only up to the highest received
    /// (`literal`, the paper's "same way as OOO-based").
    pub probe_range: ProbeRange,
    /// Also ACK at once every CE-marked arrival, so coalescing never hides an ECN mark from the
    /// path selector (spec §2.5.11 optional variant).
    pub ack_on_ce: bool,
}

/// How far probe-triggered recovery reaches.
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum ProbeRange {
    /// Up to the highest packet sent before the probe.
    Extended,
    /// Up to the highest packet known received.
    Literal,
}

impl Default for StrackLossParams {
    fn default() -> Self {
        //= spec strack.md §2.1.2 (min_ooo_threshold 5, probe n = 3, small RTT 2 × net RTT)
        StrackLossParams { min_ooo_threshold: 5, probe_interval_rtts: 3.0, probe_small_delay_rtts: 2.0, probe_range: ProbeRange::Extended, ack_on_ce: false }
    }
}

impl ReliabilityConfig {
    /// Checks parameter values; errors name the key under `transport.reliability`.
    pub fn validate(&self) -> Result<()> {
        if let ReliabilityConfig::Strack(p) = self {
            if p.min_ooo_threshold == 0 {
                return Err(Error::invalid("transport.reliability.min_ooo_threshold", "0: must be at least 1 packet"));
            }
            for (key, v) in [("probe_interval_rtts", p.probe_interval_rtts), ("probe_small_delay_rtts", p.probe_small_delay_rtts)] {
                if !(v.is_finite() && v > 0.0 && v <= 1000.0) {
                    return Err(Error::invalid(format!("transport.reliability.{key}"), format!("{v}: must be a positive number of RTTs up to 1000")));
                }
            }
        }
        Ok(())
    }

    /// The run-time form, with times resolved against the fabric's network base RTT.
    pub fn resolve(&self, net_base_rtt: Time) -> Reliability {
        match self {
            ReliabilityConfig::Sack(_) => Reliability::Sack,
            ReliabilityConfig::GoBackN(_) => Reliability::GoBackN,
            ReliabilityConfig::SelectiveNack(_) => Reliability::SelectiveNack,
            ReliabilityConfig::Strack(p) => Reliability::Strack {
                min_ooo: p.min_ooo_threshold,
                probe_interval: ((p.probe_interval_rtts * net_base_rtt as f64).round() as Time).max(1),
                probe_small_delay: (p.probe_small_delay_rtts * net_base_rtt as f64).round() as Time,
                extended_probe_range: p.probe_range == ProbeRange::Extended,
                ack_on_ce: p.ack_on_ce,
            },
        }
    }
}

/// Resolved loss-recovery mode of a run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reliability {
    /// See [`ReliabilityConfig::Sack`].
    Sack,
    /// See [`ReliabilityConfig::GoBackN`].
    GoBackN,
    /// See [`ReliabilityConfig::SelectiveNack`].
    SelectiveNack,
    /// See [`ReliabilityConfig::Strack`].
    Strack {
        /// Floor of the out-of-order threshold (packets).
        min_ooo: u32,
        /// Probe after this long without an ACK.
        probe_interval: Time,
        /// A probe answer below this queueing delay counts as "fast".
        probe_small_delay: Time,
        /// Probe recovery reaches the highest packet sent before the probe.
        extended_probe_range: bool,
        /// ACK every CE-marked arrival at once.
        ack_on_ce: bool,
    },
}

impl Reliability {
    /// Whether the receiver keeps out-of-order packets.
    #[inline]
    pub fn keeps_out_of_order(self) -> bool {
        self != Reliability::GoBackN
    }

    /// Whether the receiver answers the first out-of-order arrival of a gap with a sequence NACK.
    #[inline]
    pub fn nacks_gaps(self) -> bool {
        matches!(self, Reliability::GoBackN | Reliability::SelectiveNack)
    }
}

/// Sender-side state of STrack's loss detection (strack spec §2.3).
#[derive(Clone, Copy, Debug, Default)]
pub struct LossDetect {
    /// In a recovery episode.
    pub in_recovery: bool,
    /// Highest packet covered by the current episode.
    pub recovery_end: u32,
    /// One past the highest packet known received.
    pub highest_rcvd_end: u32,
    /// When the next probe is due (re-armed by every ACK).
    pub probe_deadline: Time,
    /// Whether a probe-timer event is scheduled.
    pub probe_pending: bool,
    /// ACKs (other than probe answers) since the last probe left.
    pub acks_since_probe: u32,
    /// One past the highest packet sent when the last probe left.
    pub sent_end_at_probe: u32,
}

impl Sim {
    /// Declares every in-flight packet of `c` in `[snd_una, end)` lost and queues it for
    /// retransmission, oldest first. Returns the number of packets declared lost.
    pub(crate) fn declare_lost_range(&mut self, c: ConnId, from: u32, end: u32) -> u32 {
        let now = self.now;
        let conn = &mut self.conns[c as usize];
        let from = from.max(conn.snd_una);
        let end = end.min(conn.next_seq);
        let mut n = 0;
        for seq in from..end {
            let slot = conn.slot(seq);
            if slot.state != SeqState::InFlight {
                continue;
            }
            slot.state = SeqState::Lost;
            let (wire, entropy) = (slot.wire as u64, slot.entropy);
            conn.in_flight -= wire;
            conn.retx.push_back(seq);
            conn.lb.on_feedback(entropy, Feedback::Timeout, now);
            n += 1;
        }
        n
    }

    /// A sequence NACK ("I expect `seq`") reached its sender.
    pub(crate) fn on_seq_nack(&mut self, pkt: PktId) {
        let p = *self.pool.get(pkt);
        self.pool.free(pkt);
        self.c.seq_nacks_arrived += 1;
        let c = p.conn;
        if self.conns[c as usize].idle() {
            return;
        }
        // Everything below the expected PSN has arrived: the NACK is also a cumulative ACK.
        let una = self.conns[c as usize].snd_una;
        for seq in una..p.cum_ack {
            self.ack_one(c, seq);
        }
        self.conns[c as usize].advance_una();
        let e = p.cum_ack;
        let conn = &mut self.conns[c as usize];
        if e >= conn.snd_una && e < conn.next_seq {
            conn.nacks += 1;
            match self.reliability {
                Reliability::GoBackN => {
                    // The packet that revealed the gap left before our last rewind: its NACK
                    // asks for what we are already resending.
                    if p.sent_at >= conn.rewound_at {
                        conn.rewound_at = self.now;
                        self.declare_lost_range(c, e, u32::MAX);
                    }
                }
                _ => {
                    // Resend the expected packet only if the packet that revealed the gap left
                    // after its current transmission (otherwise that transmission may still
                    // arrive).
                    let slot = conn.slot(e);
                    if slot.state == SeqState::InFlight && slot.sent_at <= p.sent_at {
                        self.declare_lost_range(c, e, e + 1);
                    }
                }
            }
        }
        self.after_ack_progress(c);
    }

    /// STrack loss detection on an ACK (spec §2.5.7 process_sack, §2.5.9 handle_probe_ack).
    /// `p` is the ACK; `rtt` its round-trip sample.
    pub(crate) fn strack_on_ack(&mut self, c: ConnId, p: &Packet, rtt: Time, probe_ack: bool) {
        let Reliability::Strack { min_ooo, probe_interval, probe_small_delay, extended_probe_range, .. } = self.reliability else {
            return;
        };
        let now = self.now;
        let mtu = (self.tp.mss + self.tp.header) as u64;
        let base = self.path_rtt[c as usize];
        let conn = &mut self.conns[c as usize];
        let ld = &mut conn.loss;
        let mut hi = ld.highest_rcvd_end.max(p.cum_ack);
        if p.sack_bits != 0 {
            hi = hi.max(p.sack_base + 64 - p.sack_bits.leading_zeros());
        }
        if !probe_ack && p.seq != u32::MAX {
            hi = hi.max(p.seq + 1);
        }
        ld.highest_rcvd_end = hi;
        ld.probe_deadline = now + probe_interval;
        if ld.in_recovery && conn.snd_una > ld.recovery_end {
            ld.in_recovery = false;
        }
        let cwnd_pkts = conn.cc.window().map_or(u32::MAX as u64, |w| w / mtu) as u32;
        let mut enter = None;
        if probe_ack {
            let fast = rtt.saturating_sub(base) < probe_small_delay;
            if fast && ld.acks_since_probe == 0 && !ld.in_recovery {
                let end = if extended_probe_range { hi.max(ld.sent_end_at_probe) } else { hi };
                enter = Some((end, true));
            }
        } else {
            ld.acks_since_probe += 1;
            if !ld.in_recovery && p.ooo_count as u32 > cwnd_pkts.max(min_ooo) {
                enter = Some((hi, false));
            }
        }
        if let Some((end, by_probe)) = enter {
            let ld = &mut self.conns[c as usize].loss;
            ld.in_recovery = true;
            ld.recovery_end = end.saturating_sub(1);
            if by_probe {
                self.c.probe_recoveries += 1;
            } else {
                self.c.ooo_recoveries += 1;
            }
            self.declare_lost_range(c, 0, end);
        }
    }

    /// Arms the probe timer of `c` if it is not already armed (a packet left an empty pipe).
    pub(crate) fn strack_arm_probe(&mut self, c: ConnId) {
        let Reliability::Strack { probe_interval, .. } = self.reliability else { return };
        let now = self.now;
        let ld = &mut self.conns[c as usize].loss;
        if ld.probe_pending {
            return;
        }
        ld.probe_pending = true;
        ld.probe_deadline = now + probe_interval;
        self.q.push(ld.probe_deadline, EventKind::ConnProbe, c);
    }

    /// The probe timer of `c`: send a probe if no ACK came for a probe interval.
    pub(crate) fn on_conn_probe(&mut self, c: ConnId) {
        let Reliability::Strack { probe_interval, .. } = self.reliability else { return };
        let now = self.now;
        let conn = &mut self.conns[c as usize];
        conn.loss.probe_pending = false;
        if conn.idle() || conn.acked_pkts == conn.next_seq {
            // Nothing unacknowledged: the next transmission re-arms the timer.
            return;
        }
        if conn.loss.probe_deadline > now {
            conn.loss.probe_pending = true;
            self.q.push(conn.loss.probe_deadline, EventKind::ConnProbe, c);
            return;
        }
        conn.loss.acks_since_probe = 0;
        conn.loss.sent_end_at_probe = conn.next_seq;
        conn.loss.probe_deadline = now + probe_interval;
        conn.loss.probe_pending = true;
        self.q.push(now + probe_interval, EventKind::ConnProbe, c);
        let ctx = EntropyCtx {
            now,
            seq: conn.snd_una,
            retransmit: false,
            window_pkts: conn.cc.window().map(|w| (w / (self.tp.mss + self.tp.header) as u64) as u32),
            in_flight: conn.in_flight,
        };
        let entropy = conn.lb.next_entropy(&ctx, &mut conn.rng);
        let (src, dst) = (conn.src, conn.dst);
        let port = self.hosts[src as usize].port;
        let pkt = self.pool.alloc(Packet {
            conn: c,
            src,
            dst,
            seq: u32::MAX,
            size: self.tp.header,
            entropy,
            kind: PktKind::Probe,
            flags: if self.tp.ect { F_ECT } else { 0 },
            sent_at: now,
            port,
            sack_base: conn.snd_una,
            ..Packet::default()
        });
        self.c.probes_sent += 1;
        // The probe travels in the data class: it waits behind the NIC's current packet.
        self.ports[port as usize].data.push_back(pkt);
        self.ports[port as usize].data_bytes += self.tp.header as u64;
        self.port_kick(port);
    }
}
