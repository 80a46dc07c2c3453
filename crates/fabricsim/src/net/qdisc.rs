//! Switch output-port queue discipline: drop-tail data queue with RED-style ECN marking and
//! optional packet trimming, plus a control class served first (strict priority, or weighted
//! round-robin against the data class).
//!
//! Follows: smartt-reps spec §4.1–4.3 (two classes, 1-BDP data queue, RED Kmin/Kmax, trim instead
//! of drop) and strack spec §4 (marking on the bytes left after the departing packet).
//! The discipline only decides; the port owns the queues, the timing and the counters.
//!
//! The control class is bounded as [`ControlLane`] says (lb-ai-training spec §4.2, paper §4:
//! "headers take buffer from data"): unbounded (the SMaRTT-REPS / STrack model, default), its
//! own lane of fixed capacity (the study's non-trimming runs: Q; htsim's header queue: 2·Q), or
//! sharing the port's buffer with data, where a control packet that finds the buffer full
//! evicts the newest queued data packet, which is trimmed (its header stays), and is dropped
//! only when no data is left to evict.
//!
//! Settings are per port: [`QdiscTable`] holds the few distinct profiles a scenario resolves to
//! (`[switch]`, then `[[switch.by_link_rate]]`, then `[switch.ports.<class>]`; see
//! `scenario/queues.rs`) and each port's index into them, which the port carries in its first
//! cache line (`PortState::qdisc`). Thresholds differ per link rate because the DCQCN lineage
//! scales them linearly with rate (mcc spec §2.10.1: Kmin/Kmax 400/1600 KB at 100 G, 200/800 KB
//! at 50 G, 1600/6400 KB at 400 G; seqbalance spec §2.4.8 and A23 for 400 G ToR–Agg links).
//! Two settings stay global ([`QdiscTable`] fields): the trimmed header size, which is the
//! transport's packet format, and the control-class WRR weight, a fabric-wide guard against
//! headers starving data that no spec varies per port.

use crate::units::Bytes;
use crate::rng::Rng;

/// Where the ECN decision is taken.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MarkAt {
    /// On enqueue, against the occupancy the packet finds.
    Enqueue,
    /// On dequeue, against the occupancy the packet leaves behind (reacts one queue-time earlier).
    Dequeue,
}

/// The data buffer of a port with no limit of its own (under PFC the switch's shared buffer
/// bounds it): large enough never to be reached, small enough that sums of it cannot overflow.
pub const UNBOUNDED_BUFFER: u64 = u64::MAX / 4;

/// Parameters of one port's discipline, all in bytes of the data class.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct QdiscConfig {
    /// Data-class buffer; an arriving packet that would exceed it is trimmed or dropped.
    pub buffer_bytes: Bytes,
    /// Below this occupancy nothing is marked.
    pub kmin_bytes: Bytes,
    /// Above this occupancy everything is marked.
    pub kmax_bytes: Bytes,
    /// Marking probability reached at `kmax_bytes` (RED's Pmax).
    pub pmax: f64,
    /// Whether marking is on at all.
    pub ecn: bool,
    /// Enqueue or dequeue marking.
    pub mark_at: MarkAt,
    /// Trim would-be drops to a header instead of dropping them.
    pub trimming: bool,
    /// How the control class is bounded.
    pub control: ControlLane,
}

/// Capacity of the control class (ACKs, NACKs, trimmed headers) at a switch port.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ControlLane {
    /// No limit (control packets are never dropped for lack of buffer).
    Unbounded,
    /// A lane of its own holding at most this many bytes; a control packet that does not fit
    /// is dropped.
    Separate(u64),
    /// Data and control share `buffer_bytes`; a control packet that does not fit evicts the
    /// newest queued data packet (trimming it) until it fits, and is dropped only when no data
    /// is left.
    Shared,
}

/// Where a switch sends the header of a packet it trimmed (`[switch] trimmed_headers`;
/// lb-ai-training spec LR-TRIM, LR-TRIM-RTS and §4.2; paper §4 "Packet Trimming").
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TrimmedHeaders {
    /// On to the receiver, which NACKs it (LR-TRIM, default).
    #[default]
    ToReceiver,
    /// Every header straight back to the sender from the trimming switch (return-to-sender, the
    /// paper's description of LR-TRIM-RTS).
    ToSender,
    /// On to the receiver, but back to the sender when the control class cannot take it (the
    /// header queue is full: htsim's return-to-sender, spec LR-TRIM-RTS option).
    ToSenderOnOverflow,
}

impl TrimmedHeaders {
    /// Whether this is the default (left out of resolved scenarios).
    pub fn is_default(&self) -> bool {
        *self == TrimmedHeaders::ToReceiver
    }
}

/// What to do with a control packet arriving at a switch port.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ControlVerdict {
    /// Append to the control class.
    Enqueue,
    /// Evict and trim the newest queued data packet, then ask again.
    EvictNewestData,
    /// Discard.
    Drop,
}

/// Every port's discipline: the distinct profiles, each port's index into them, and the
/// settings shared by all ports.
#[derive(Clone, Debug)]
pub struct QdiscTable {
    /// Distinct profiles; 0 is `[switch]` itself (also given to host NICs, which queue no data
    /// here).
    pub profiles: Vec<QdiscConfig>,
    /// Profile index of each port (copied into `PortState::qdisc` for the hot path).
    pub port_profile: Vec<u8>,
    /// Switch ports using each profile.
    pub switch_ports: Vec<u32>,
    /// Which ports use each profile, as `class@rate` keys (`"tor_down@400G, tor_up@400G"`).
    pub labels: Vec<String>,
    /// Data-class buffer of each profile (what switch-side path selectors compare queues with).
    pub profile_buffers: Vec<u64>,
    /// Size of a trimmed header on the wire.
    pub header_bytes: u32,
    /// Control packets sent per data packet while both classes wait; 0 = strict priority.
    /// Strict priority lets trimmed headers starve data once an incast's offered load exceeds
    /// MTU/header (≈ 65) times the link rate; a weight bounds that (smartt-reps spec §4.1,
    /// "WRR 20:1 as in htsim's composite queue").
    pub control_wrr_weight: u32,
    /// Where trimmed headers go (global: the transport's packet format decides what a header
    /// may carry back).
    pub trimmed_headers: TrimmedHeaders,
    /// Whether any profile bounds its control class (not [`ControlLane::Unbounded`]): when not,
    /// forwarding queues control packets without asking ([`QdiscConfig::on_control_arrival`]).
    pub control_bounded: bool,
}

impl QdiscTable {
    /// The profile of port `port`.
    #[inline]
    pub fn of_port(&self, port: u32) -> &QdiscConfig {
        &self.profiles[self.port_profile[port as usize] as usize]
    }
}

/// What to do with an arriving data packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Append to the data class; `mark` says whether to set CE now.
    Enqueue {
        /// Set CE on the packet now.
        mark: bool,
    },
    /// Cut to a header and put it in the control class.
    Trim,
    /// Discard.
    Drop,
}

impl QdiscConfig {
    /// The data buffer, or `None` when the port has no limit of its own ([`UNBOUNDED_BUFFER`]).
    pub fn bounded_buffer(&self) -> Option<u64> {
        (self.buffer_bytes < Bytes(UNBOUNDED_BUFFER)).then_some(self.buffer_bytes.0)
    }

    /// RED marking probability for occupancy `q` bytes:
    /// 0 up to Kmin, linear to Pmax at Kmax, 1 above Kmax.
    pub fn mark_probability(&self, q: u64) -> f64 {
        if !self.ecn || q <= self.kmin_bytes.0 {
            0.0
        } else if q > self.kmax_bytes.0 {
            1.0
        } else {
            let span = ((self.kmax_bytes - self.kmin_bytes).max(Bytes(1))).0 as f64;
            self.pmax * (q - self.kmin_bytes.0) as f64 / span
        }
    }

    #[inline]
    fn draw_mark(&self, q: u64, rng: &mut Rng) -> bool {
        let p = self.mark_probability(q);
        p >= 1.0 || (p > 0.0 && rng.unit() < p)
    }

    /// Decision for an ECN-capable (`ect`) data packet of `size` bytes arriving at a data class
    /// holding `queued` bytes, beside a control class holding `ctrl` bytes (which take buffer
    /// only when the lane is shared).
    #[inline]
    pub fn on_arrival(&self, queued: u64, ctrl: u64, size: u64, ect: bool, rng: &mut Rng) -> Verdict {
        let held = if self.control == ControlLane::Shared { queued + ctrl } else { queued };
        if held + size > self.buffer_bytes.0 {
            return if self.trimming { Verdict::Trim } else { Verdict::Drop };
        }
        let mark = ect && self.mark_at == MarkAt::Enqueue && self.draw_mark(queued, rng);
        Verdict::Enqueue { mark }
    }

    /// Decision for a control packet of `size` bytes arriving at a port whose classes hold
    /// `data` and `ctrl` bytes.
    #[inline]
    pub fn on_control_arrival(&self, data: u64, ctrl: u64, size: u64) -> ControlVerdict {
        match self.control {
            ControlLane::Unbounded => ControlVerdict::Enqueue,
            ControlLane::Separate(cap) if ctrl + size <= cap => ControlVerdict::Enqueue,
            ControlLane::Separate(_) => ControlVerdict::Drop,
            ControlLane::Shared if data + ctrl + size <= self.buffer_bytes.0 => ControlVerdict::Enqueue,
            ControlLane::Shared if data > 0 => ControlVerdict::EvictNewestData,
            ControlLane::Shared => ControlVerdict::Drop,
        }
    }

    /// Whether a data packet leaving a data class that holds `queued` bytes (itself included)
    /// may draw from the port's random stream: dequeue marking, above Kmin. (A hint for the
    /// event loop's look-ahead, which then requests the stream's cache line.)
    #[inline]
    pub fn may_draw_at_departure(&self, queued: u64) -> bool {
        self.mark_at == MarkAt::Dequeue && self.mark_probability(queued) > 0.0
    }

    /// Whether a departing ECN-capable data packet gets CE, given the bytes left behind it.
    #[inline]
    pub fn on_departure(&self, remaining: u64, ect: bool, rng: &mut Rng) -> bool {
        ect && self.mark_at == MarkAt::Dequeue && self.draw_mark(remaining, rng)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const CFG: QdiscConfig = QdiscConfig {
        buffer_bytes: Bytes(100_000),
        kmin_bytes: Bytes(20_000),
        kmax_bytes: Bytes(80_000),
        pmax: 0.5,
        ecn: true,
        mark_at: MarkAt::Dequeue,
        trimming: true,
        control: ControlLane::Unbounded,
    };

    //= type=test; smartt-reps spec §4.2 RED ramp between Kmin and Kmax
    #[test]
    fn marking_rate_follows_red_ramp() {
        let mut rng = Rng::stream(1, "qdisc-test", 0);
        // (occupancy, expected probability): 0 at Kmin, Pmax/2 half-way, Pmax at Kmax, 1 above.
        for (q, p) in [(10_000u64, 0.0), (20_000, 0.0), (50_000, 0.25), (80_000, 0.5), (90_000, 1.0)] {
            assert!((CFG.mark_probability(q) - p).abs() < 1e-12);
            let n = 200_000;
            let marked = (0..n).filter(|_| CFG.on_departure(q, true, &mut rng)).count();
            let got = marked as f64 / n as f64;
            // 5 standard deviations of a binomial proportion.
            let tol = 5.0 * (p * (1.0 - p) / n as f64).sqrt() + 1e-9;
            assert!((got - p).abs() <= tol, "q={q}: marked {got}, expected {p}");
        }
        // Non-ECT packets and enqueue-time calls on a dequeue-marking port never mark.
        assert!(!CFG.on_departure(90_000, false, &mut rng));
        assert_eq!(CFG.on_arrival(90_000, 0, 1_000, true, &mut rng), Verdict::Enqueue { mark: false });
    }

    #[test]
    fn full_queue_trims_or_drops() {
        let mut rng = Rng::stream(1, "qdisc-test", 1);
        assert_eq!(CFG.on_arrival(99_000, 0, 4_096, true, &mut rng), Verdict::Trim);
        let no_trim = QdiscConfig { trimming: false, ..CFG };
        assert_eq!(no_trim.on_arrival(99_000, 0, 4_096, true, &mut rng), Verdict::Drop);
        assert_eq!(no_trim.on_arrival(95_904, 0, 4_096, true, &mut rng), Verdict::Enqueue { mark: false });
    }

    #[test]
    fn enqueue_marking_uses_found_occupancy() {
        let mut rng = Rng::stream(1, "qdisc-test", 2);
        let enq = QdiscConfig { mark_at: MarkAt::Enqueue, ..CFG };
        assert_eq!(enq.on_arrival(85_000, 0, 1_000, true, &mut rng), Verdict::Enqueue { mark: true });
        assert_eq!(enq.on_arrival(1_000, 0, 1_000, true, &mut rng), Verdict::Enqueue { mark: false });
        assert!(!enq.on_departure(85_000, true, &mut rng));
    }

    //= lb-ai-training spec §4.2: headers share Q with data and evict the newest data packet
    #[test]
    fn control_lane_capacity_and_eviction() {
        let mut rng = Rng::stream(1, "qdisc-test", 3);
        // Unbounded: always queued, and control bytes never count against data.
        assert_eq!(CFG.on_control_arrival(100_000, 1 << 40, 64), ControlVerdict::Enqueue);
        assert_eq!(CFG.on_arrival(90_000, 50_000, 4_096, true, &mut rng), Verdict::Enqueue { mark: false });
        // Separate lane of 2·Q: fits up to the byte, then drops.
        let sep = QdiscConfig { control: ControlLane::Separate(200_000), ..CFG };
        assert_eq!(sep.on_control_arrival(100_000, 199_936, 64), ControlVerdict::Enqueue);
        assert_eq!(sep.on_control_arrival(0, 199_937, 64), ControlVerdict::Drop);
        // Shared: headers take data's buffer ...
        let shared = QdiscConfig { control: ControlLane::Shared, ..CFG };
        assert_eq!(shared.on_arrival(90_000, 6_000, 4_096, true, &mut rng), Verdict::Trim);
        assert_eq!(shared.on_arrival(90_000, 5_904, 4_096, true, &mut rng), Verdict::Enqueue { mark: false });
        // ... and a header that finds the buffer full evicts data, dropped only with none left.
        assert_eq!(shared.on_control_arrival(99_936, 0, 64), ControlVerdict::Enqueue);
        assert_eq!(shared.on_control_arrival(99_937, 0, 64), ControlVerdict::EvictNewestData);
        assert_eq!(shared.on_control_arrival(0, 99_937, 64), ControlVerdict::Drop);
    }
}
