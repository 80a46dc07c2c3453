//! `mcc`: message-level congestion control in the collective library — a window counted in
//! message bytes, decided once per round of message completions from two signals: the averaged
//! message delay (congestion of the whole multi-path pipe) and the largest sampled packet
//! delay (one slow path). Three states: grow, hold (adaptive routing moves traffic off the slow
//! path), shrink.
//!
//! **Follows:** Li et al., "Congestion Control for AI Workloads with Message-Level Signaling"
//! (APNet 2025): §3 (message-level signals; the three states "Non-Congestion", "Partial
//! Congestion", "Global Congestion"), §4 (interaction with CCLs: a new message is issued once
//! the available window is at least the message size; fast convergence: the window increment
//! is BDP divided by the hot spot's oversubscription ratio), Table 1 (`initial_target_msg_delay`
//! = 92 µs, `initial_target_max_delay` = 64 µs). What the paper leaves open is resolved as the
//! MCC spec's A-numbered assumptions, cited beside the code (`A-5` … `A-19`).
//!
//! **Signals** (per completed message, read from [`MessageFeedback`]):
//! - message delay `D_msg`: the receiver's delivery of the message minus its first
//!   packet's departure from the sender NIC (one way); `message_delay = "round_trip"` is the
//!   spec's variant B (the sender's completion minus the first departure). The engine delivers
//!   messages in order, so delivery is the arrival of the message's last missing packet or of an
//!   earlier message's, whichever is later; RC completions are in order too, and under adaptive
//!   routing the two differ only when an earlier message's straggler arrives after all of this
//!   one's packets.
//! - largest sampled packet delay: the RTT of every `sample_every`-th packet of the
//!   message and of its last packet ([`MessageGate::rtt_sample_stride`]); with coalesced ACKs
//!   the sender asks for an immediate ACK of each sampled packet.
//!
//! **Round** (A-5): at each window decision the next message to be posted is noted; its
//! completion ends the round. Completions in between are aggregated: `D_avg` is the mean message
//! delay of the round, `P_max` the largest sample. Then (A-15: "exceeds" is `≥`):
//! - `D_avg ≥ T_msg`: global congestion, decrease (A-13: `cwnd × max(1 − max_mdf,
//!   1 − β·(D_avg − T_msg)/D_avg)`; one decision per round, so at most one decrease per round);
//! - `P_max ≥ T_max`: partial congestion, hold;
//! - otherwise: no congestion, `cwnd += W_ai`, with `W_ai = BDP / r` (paper §4), BDP = NIC rate
//!   × network base RTT, `r` the worst oversubscription ratio on the path from the
//!   topology, counting only the uplink capacity that is still available.
//!
//! Then `cwnd` is clamped to `[W_min, W_max]`: one message (A-10; the largest message seen, so a
//! window can always send) and NIC rate × `T_msg`. The first window is `max(first
//! message, BDP)`. The gate posts the next ready message while `cwnd − in-flight message
//! bytes ≥ its size` (paper §4; a short tail chunk counts its real size, A-19). The NIC runs
//! without congestion control under MCC (`transport.cc = "line_rate"`, checked at setup).
//!
//! **Parameters** (`[transport.gate] name = "mcc"`): `t_msg_us` 92, `t_max_us` 64 (Table 1, pinned
//! as constants, A-7 and A-16), `oversubscription` (unset = from the topology, A-9),
//! `beta` 0.8 and `max_mdf` 0.5, `decrease` (`"proportional"`, A-13; `"littles_law"`:
//! `cwnd × T_msg / D_avg`; `"halve"`), `sample_every` 8, `message_delay` (`"one_way"`,
//! A-18; `"round_trip"`, variant B).

use super::{GateBuild, GateState, MessageFeedback, MessageGate, WindowUpdate};
use crate::error::{Error, Result};
use crate::scheme::{Limit, Scheme};
use crate::units::{Bytes, Time, us_to_ps};
use serde::{Deserialize, Serialize};

/// How the window shrinks under global congestion.
#[derive(Clone, Copy, Debug, Default, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Decrease {
    /// `cwnd × max(1 − max_mdf, 1 − β·(D_avg − T_msg)/D_avg)` (Swift-like).
    #[default]
    Proportional,
    /// Spec §2.6 alternative (i): `cwnd × T_msg / D_avg`.
    LittlesLaw,
    /// Spec §2.6 alternative (ii): `cwnd / 2`.
    Halve,
}

/// What the message delay measures.
#[derive(Clone, Copy, Debug, Default, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum MessageDelay {
    /// first departure at the sender to delivery at the receiver.
    #[default]
    OneWay,
    /// Variant B: first departure to the sender's completion (run it with `t_msg_us` = 124).
    RoundTrip,
}

/// Parameters of `mcc`.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct MccParams {
    /// `T_msg`: threshold of the averaged message delay, µs (Table 1: 92).
    pub t_msg_us: f64,
    /// `T_max`: threshold of the largest sampled packet delay, µs (Table 1: 64).
    pub t_max_us: f64,
    /// `r`: the hot spot's oversubscription ratio (unset: from the topology, A-9).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub oversubscription: Option<f64>,
    /// Decrease gain β (A-13: 0.8).
    pub beta: f64,
    /// Largest fractional cut per round (A-13: 0.5).
    pub max_mdf: f64,
    /// Decrease law.
    pub decrease: Decrease,
    /// Packet-delay sampling stride: every n-th packet of a message plus its last (A-14: 8).
    pub sample_every: u32,
    /// Message-delay definition.
    pub message_delay: MessageDelay,
}

impl Default for MccParams {
    fn default() -> Self {
        //= mcc Table 1: initial_target_msg_delay 92 us, initial_target_max_delay 64 us
        MccParams { t_msg_us: 92.0, t_max_us: 64.0, oversubscription: None, beta: 0.8, max_mdf: 0.5, decrease: Decrease::Proportional, sample_every: 8, message_delay: MessageDelay::OneWay }
    }
}

/// The three congestion states of paper §3.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CongestionState {
    /// Message delay and every sample below their targets: grow.
    None,
    /// Message delay below its target, some sample at or above `T_max`: hold.
    Partial,
    /// Message delay at or above `T_msg`: shrink.
    Global,
}

impl CongestionState {
    /// The name written to the gate log.
    pub fn name(self) -> &'static str {
        match self {
            CongestionState::None => "grow",
            CongestionState::Partial => "hold",
            CongestionState::Global => "shrink",
        }
    }
}

/// Paper §3's classification of one round's signals (A-15: a threshold is reached at `≥`).
pub fn classify(d_avg: Time, p_max: Time, t_msg: Time, t_max: Time) -> CongestionState {
    if d_avg >= t_msg {
        CongestionState::Global
    } else if p_max >= t_max {
        CongestionState::Partial
    } else {
        CongestionState::None
    }
}

/// The MCC state of one connection.
#[derive(Clone, Debug)]
pub struct Mcc {
    t_msg: Time,
    t_max: Time,
    beta: f64,
    max_mdf: f64,
    decrease: Decrease,
    sample_every: u32,
    message_delay: MessageDelay,
    /// `W_ai` in bytes.
    increment: f64,
    /// `W_max` in bytes.
    max_window: f64,
    /// The path BDP, for the first window.
    bdp: f64,
    /// `W_min`: the largest message seen (0 before the first).
    min_window: f64,
    /// Window in payload bytes (0 until the first message sets it).
    cwnd: f64,
    /// Messages posted so far (the next one's sequence number).
    posted: u64,
    /// Messages completed so far (the next completion's sequence number).
    completed: u64,
    /// The message whose completion ends the round.
    round_end: u64,
    delay_sum: u128,
    delay_count: u64,
    sample_max: Time,
}

impl Mcc {
    /// The window in payload bytes.
    pub fn window_bytes(&self) -> f64 {
        self.cwnd
    }

    /// `W_ai` in bytes.
    pub fn increment_bytes(&self) -> f64 {
        self.increment
    }

    /// The end of a round: classify, update, start the next round.
    fn decide(&mut self) -> CongestionState {
        let d_avg = Time((self.delay_sum / self.delay_count.max(1) as u128) as u64);
        let state = classify(d_avg, self.sample_max, self.t_msg, self.t_max);
        match state {
            //= mcc §4: "with an 8:1 oversubscription, we add 1/8 Bandwidth-Delay-Product (BDP) to the window"
            CongestionState::None => self.cwnd += self.increment,
            //= mcc §3 Partial Congestion: "MCC maintains the congestion window"
            CongestionState::Partial => {}
            //= spec mcc.md A-13 (the paper gives no decrease law)
            CongestionState::Global => {
                let (d, t) = (d_avg.0 as f64, self.t_msg.0 as f64);
                self.cwnd *= match self.decrease {
                    Decrease::Proportional => (1.0 - self.beta * (d - t) / d).max(1.0 - self.max_mdf),
                    Decrease::LittlesLaw => t / d,
                    Decrease::Halve => 0.5,
                };
            }
        }
        //= spec mcc.md A-10, A-11: W_min = one message, W_max = C_nic x T_msg
        self.cwnd = self.cwnd.clamp(self.min_window, self.max_window.max(self.min_window));
        //= spec mcc.md A-5: the next message to be posted closes the next round
        self.round_end = self.posted;
        self.delay_sum = 0;
        self.delay_count = 0;
        self.sample_max = Time::ZERO;
        state
    }
}

impl Scheme<GateBuild> for Mcc {
    const NAME: &'static str = "mcc";
    const SUMMARY: &'static str = "MCC: message window in the collective library; grow / hold / shrink on message delay vs T_msg and max sampled packet RTT vs T_max";
    const EXAMPLE: &'static [&'static str] = &["transport.cc=line_rate"];
    type Params = MccParams;
    const LIMITS: &'static [Limit] = &[
        // From 1 ns to 1 s: positive, and far from overflowing picosecond sums.
        Limit::new("t_msg_us", 0.001, 1e6),
        Limit::new("t_max_us", 0.001, 1e6),
        Limit::new("oversubscription", 1e-3, 1e6),
        Limit::new("max_mdf", 0.0, 0.999),
        Limit::new("sample_every", 1.0, 1e6),
        Limit::new("beta", 1e-6, 0.999999),
    ];
    fn check(p: &MccParams, key: &str) -> Result<()> {
        if !(p.beta > 0.0 && p.beta < 1.0) {
            return Err(Error::invalid(format!("{key}.beta"), format!("{}: the decrease gain must lie strictly between 0 and 1", p.beta)));
        }
        if p.oversubscription.is_some_and(|r| r <= 0.0) {
            return Err(Error::invalid(format!("{key}.oversubscription"), "must be > 0"));
        }
        Ok(())
    }
    fn build(p: &MccParams, ctx: &mut GateBuild) -> Self {
        let path = &ctx.path;
        //= spec mcc.md A-8: BDP = C_nic x net_base_rtt
        let bdp = path.host_rate.bytes_in(path.net_base_rtt).0 as f64;
        //= spec mcc.md A-9: r from the topology, at least 1
        let r = p.oversubscription.unwrap_or(ctx.oversubscription.max(1.0));
        let t_msg = us_to_ps(p.t_msg_us);
        Mcc {
            t_msg,
            t_max: us_to_ps(p.t_max_us),
            beta: p.beta,
            max_mdf: p.max_mdf,
            decrease: p.decrease,
            sample_every: p.sample_every,
            message_delay: p.message_delay,
            increment: bdp / r,
            max_window: path.host_rate.bytes_in(t_msg).0 as f64,
            bdp,
            min_window: 0.0,
            cwnd: 0.0,
            posted: 0,
            completed: 0,
            round_end: 0,
            delay_sum: 0,
            delay_count: 0,
            sample_max: Time::ZERO,
        }
    }
}

impl MessageGate for Mcc {
    fn may_post(&mut self, st: &GateState) -> bool {
        let size = st.next_bytes.0 as f64;
        if size > self.min_window {
            self.min_window = size;
            //= spec mcc.md A-12: W_init = max(msg_size, BDP)
            self.cwnd = if self.cwnd == 0.0 { size.max(self.bdp).min(self.max_window.max(size)) } else { self.cwnd.max(size) };
        }
        //= mcc §4: "a new message will be issued once the available window size is larger than the message size"
        let ok = self.cwnd - st.in_flight_bytes.0 as f64 >= size;
        self.posted += ok as u64;
        ok
    }

    fn on_complete(&mut self, fb: &MessageFeedback) -> Option<WindowUpdate> {
        let seq = self.completed;
        self.completed += 1;
        let end = match self.message_delay {
            MessageDelay::OneWay => fb.delivered_at,
            MessageDelay::RoundTrip => fb.now,
        };
        self.delay_sum += end.saturating_sub(fb.first_tx).0 as u128;
        self.delay_count += 1;
        self.sample_max = self.sample_max.max(fb.rtt_max);
        if seq < self.round_end {
            return None;
        }
        let state = self.decide();
        Some(WindowUpdate { state: state.name(), window_bytes: Bytes(self.cwnd as u64) })
    }

    fn rtt_sample_stride(&self) -> u32 {
        self.sample_every
    }

    fn reads_delivery_time(&self) -> bool {
        self.message_delay == MessageDelay::OneWay
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transport::cc::PathInfo;
    use crate::units::{BitsPerSec, US};

    const MSG: u64 = 65_536;

    /// The paper's fabric (spec ): 100 G NIC, 8.5 µs network base RTT (a 106,250 B
    /// BDP), r = 400/150.
    fn gate(p: MccParams) -> Mcc {
        let path = PathInfo {
            mtu_bytes: Bytes(1048),
            host_rate: BitsPerSec::from_gbps(100.0),
            base_rtt: Time(8_500_000),
            bdp_bytes: Bytes(106_250),
            hops: 4,
            net_base_rtt: Time(8_500_000),
            src_conns: 1,
            queue_bytes: Bytes::ZERO,
            flows_per_host: 1,
        };
        Mcc::build(&p, &mut GateBuild { path, oversubscription: 400.0 / 150.0 })
    }

    fn st(in_flight_bytes: u64, next_bytes: u64) -> GateState {
        GateState { now: Time::ZERO, in_flight_msgs: (in_flight_bytes / MSG) as u32, in_flight_bytes: Bytes(in_flight_bytes), next_bytes: Bytes(next_bytes) }
    }

    /// A completed message with one-way delay `d_us` and largest sampled RTT `p_us`.
    fn done(d_us: u64, p_us: u64) -> MessageFeedback {
        MessageFeedback { now: Time::ZERO, bytes: Bytes(MSG), posted_at: Time::ZERO, first_tx: 1000 * US, delivered_at: (1000 + d_us) * US, rtt_max: p_us * US, rtt_mean: Time::ZERO, in_flight_msgs: 0 }
    }

    #[test]
    fn classification_of_crafted_signal_pairs() {
        let (t_msg, t_max) = (92 * US, 64 * US);
        assert_eq!(classify(60 * US, 20 * US, t_msg, t_max), CongestionState::None);
        assert_eq!(classify(60 * US, 64 * US, t_msg, t_max), CongestionState::Partial, "A-15: reaching T_max counts");
        assert_eq!(classify(91 * US, 300 * US, t_msg, t_max), CongestionState::Partial);
        assert_eq!(classify(92 * US, 10 * US, t_msg, t_max), CongestionState::Global, "A-15: reaching T_msg counts");
        assert_eq!(classify(150 * US, 300 * US, t_msg, t_max), CongestionState::Global, "the message delay decides first");
    }

    #[test]
    fn first_window_increment_and_cap_come_from_the_topology() {
        let mut g = gate(MccParams::default());
        // W_ai = BDP / r = 106,250 × 150 / 400.
        assert!((g.increment_bytes() - 39_843.75).abs() < 1e-6, "{}", g.increment_bytes());
        // W_init = max(65,536, 106,250): one message fits, the second does not.
        assert!(g.may_post(&st(0, MSG)));
        assert_eq!(g.window_bytes(), 106_250.0);
        assert!(!g.may_post(&st(MSG, MSG)));
        // A short tail chunk is compared with its real size.
        assert!(g.may_post(&st(MSG, 40_000)));
        assert_eq!(g.max_window, 1_150_000.0, "W_max = 100 Gb/s × 92 µs");
        // `oversubscription` overrides the topology's ratio.
        let g1 = gate(MccParams { oversubscription: Some(1.0), ..Default::default() });
        assert_eq!(g1.increment_bytes(), 106_250.0);
    }

    #[test]
    fn window_grows_holds_and_shrinks_once_per_round() {
        let mut g = gate(MccParams::default());
        assert!(g.may_post(&st(0, MSG)));
        let w0 = g.window_bytes();
        // Round 0 ends with the first completion (nothing was noted yet): grow by W_ai.
        assert_eq!(g.on_complete(&done(60, 20)).map(|u| u.state), Some("grow"));
        assert_eq!(g.window_bytes(), w0 + g.increment_bytes());
        // Post two messages; the first of them closes the next round, the one after is
        // aggregated into the round after that.
        assert!(g.may_post(&st(0, MSG)));
        assert!(g.may_post(&st(MSG, MSG)));
        let w1 = g.window_bytes();
        // A slow path (sample ≥ T_max) with a fine message delay: hold.
        assert_eq!(g.on_complete(&done(70, 80)).map(|u| u.state), Some("hold"));
        assert_eq!(g.window_bytes(), w1);
        // The second message was posted before that decision: it belongs to the next round,
        // which ends only when a message posted after the decision completes.
        assert_eq!(g.on_complete(&done(130, 80)), None);
        assert!(g.may_post(&st(0, MSG)));
        // Round average (130 + 110) / 2 = 120 µs ≥ 92: cut by β·(120 − 92)/120 = 0.18666….
        assert_eq!(g.on_complete(&done(110, 10)).map(|u| u.state), Some("shrink"));
        let want = w1 * (1.0 - 0.8 * 28.0 / 120.0);
        assert!((g.window_bytes() - want).abs() < 1.0, "{} vs {want}", g.window_bytes());
        // A huge delay cuts at most max_mdf, and never below one message.
        for _ in 0..10 {
            assert!(g.may_post(&st(0, MSG)));
            assert_eq!(g.on_complete(&done(10_000, 10)).map(|u| u.state), Some("shrink"));
        }
        assert_eq!(g.window_bytes(), MSG as f64);
        // Growth stops at W_max.
        for _ in 0..100 {
            assert!(g.may_post(&st(0, MSG)));
            g.on_complete(&done(50, 10));
        }
        assert_eq!(g.window_bytes(), 1_150_000.0);
    }

    #[test]
    fn decrease_alternatives() {
        for (decrease, factor) in [(Decrease::LittlesLaw, 92.0 / 184.0), (Decrease::Halve, 0.5)] {
            let mut g = gate(MccParams { decrease, ..Default::default() });
            // One growth first, so that the cut stays above one message.
            assert!(g.may_post(&st(0, MSG)));
            g.on_complete(&done(50, 10));
            assert!(g.may_post(&st(0, MSG)));
            let w = g.window_bytes();
            assert_eq!(g.on_complete(&done(184, 10)).map(|u| u.state), Some("shrink"));
            assert!(w * factor > MSG as f64);
            assert_eq!(g.window_bytes(), w * factor);
        }
        // Round-trip message delay: the completion time counts, not the delivery.
        let mut g = gate(MccParams { message_delay: MessageDelay::RoundTrip, ..Default::default() });
        assert!(g.may_post(&st(0, MSG)));
        let fb = MessageFeedback { now: 1100 * US, ..done(50, 10) };
        assert_eq!(g.on_complete(&fb).map(|u| u.state), Some("shrink"), "100 µs round trip ≥ 92 µs");
    }

    #[test]
    fn bad_parameters_name_their_key() {
        let err = |t: &str| -> String {
            let c: super::super::GateConfig = toml::from_str(&format!("name = \"mcc\"\n{t}")).unwrap();
            c.validate().unwrap_err().to_string()
        };
        for (t, key) in [
            ("beta = 1.0", "transport.gate.beta"),
            ("beta = 0.0", "transport.gate.beta"),
            ("sample_every = 0", "transport.gate.sample_every"),
            ("oversubscription = 0.0", "transport.gate.oversubscription"),
            ("t_msg_us = 0.0", "transport.gate.t_msg_us"),
            ("t_max_us = -1.0", "transport.gate.t_max_us"),
        ] {
            let e = err(t);
            assert!(e.contains(key), "{t}: {e}");
        }
    }
}
