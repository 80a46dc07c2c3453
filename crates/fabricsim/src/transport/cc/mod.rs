//! Congestion control: a small trait, one file per scheme, an enum for static dispatch.
//!
//! A controller is built from its parameters and a [`PathInfo`]; the connection calls its hooks
//! on every ACK, NACK, timeout and transmission, then reads [`CongestionControl::window`]
//! (`None` = no window) and [`CongestionControl::pacing_rate`] (`None` = send at line rate), so
//! window-based and rate-based senders share one interface.
//!
//! Adding a scheme: write `myscheme.rs` with a params struct (serde, paper defaults) and a
//! controller implementing [`CongestionControl`] and [`crate::scheme::Scheme`]`<PathInfo>`
//! (name, summary, parameter ranges, constructor); then add one row to the `scheme_family!`
//! list below. Parsing, validation, dispatch and `fabricsim list` follow from that row.

use crate::units::Bytes;
pub mod bbr;
pub mod dcqcn;
pub mod dctcp;
pub mod fixed;
pub mod hpcc;
pub mod line_rate;
pub mod mprdma;
pub mod nscc;
pub mod pacer;
pub mod smartt;
pub mod strack;
pub mod swift;
pub mod timely;

use crate::net::telemetry::IntStack;
use crate::units::{BitsPerSec, Time};

/// The window a rate-based controller may keep beside its rate (the HPCC ns-3 simulator's
/// `HAS_WIN`, and with `VAR_WIN` scaled by rate, as its `RdmaQueuePair::GetWin`): `window`
/// bytes, or with `scales` that many times `rate / line` (at least one byte, so a controller
/// at its floor still sends). `None`: no window.
pub(crate) fn rate_window(window: Option<u64>, scales: bool, rate: u64, line: u64) -> Option<u64> {
    let w = window?;
    if !scales || line == 0 {
        return Some(w);
    }
    Some(((w as u128 * rate as u128 / line as u128) as u64).max(1))
}

/// Which BDP a controller's `window_bdp` counts in (`bdp_of`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum BdpOf {
    /// The connection's own path: host rate × [`PathInfo::base_rtt`] ([`PathInfo::bdp_bytes`]).
    #[default]
    Path,
    /// The network's: host rate × [`PathInfo::net_base_rtt`], the fabric's longest path, the
    /// same for every connection (the HPCC ns-3 simulator's `GLOBAL_T 1`, where every QP's
    /// window is the largest BDP of any host pair).
    Network,
}

impl<'de> serde::Deserialize<'de> for BdpOf {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        let v = <toml::Value as serde::Deserialize>::deserialize(d)?;
        match v.as_str() {
            Some("path") => Ok(BdpOf::Path),
            Some("network") => Ok(BdpOf::Network),
            _ => Err(serde::de::Error::custom(format!("{v}: allowed `path` (the connection's own path) or `network` (the fabric's longest path)"))),
        }
    }
}

impl BdpOf {
    /// Whether this is the default, `path` (left out of a resolved scenario).
    pub fn is_path(&self) -> bool {
        *self == BdpOf::Path
    }

    /// The BDP in bytes that a window of one BDP holds on `path`.
    pub fn bytes(self, path: &PathInfo) -> u64 {
        match self {
            BdpOf::Path => path.bdp_bytes.0,
            BdpOf::Network => path.host_rate.bytes_in(path.net_base_rtt).0,
        }
    }
}

/// The window of `window_bdp` BDPs (of the path or the network, as `bdp_of` says) in bytes, at
/// least one packet (`None`: no window).
pub(crate) fn window_of_bdps(window_bdp: Option<f64>, bdp_of: BdpOf, path: &PathInfo) -> Option<u64> {
    let bdp = bdp_of.bytes(path);
    window_bdp.map(|w| ((w * bdp as f64).ceil() as u64).max(path.mtu_bytes.max(Bytes(1)).0))
}

/// Refuses `window_scales_with_rate` without a window to scale (`window_bdp`), naming the key.
pub(crate) fn check_rate_window(window_bdp: Option<f64>, scales: bool) -> crate::error::Result<()> {
    if let Some(w) = window_bdp {
        if !(w.is_finite() && w > 0.0) {
            return Err(crate::error::Error::invalid("transport.cc.window_bdp", format!("{w}: must be a positive multiple of the BDP")));
        }
    }
    if scales && window_bdp.is_none() {
        return Err(crate::error::Error::invalid("transport.cc.window_scales_with_rate", "true needs a window to scale: set window_bdp (HPCC ns-3: VAR_WIN needs HAS_WIN)"));
    }
    Ok(())
}

/// What a controller may know about its connection's path at creation.
#[derive(Clone, Copy, Debug)]
pub struct PathInfo {
    /// Wire size of a full-sized data packet (payload + header).
    pub mtu_bytes: Bytes,
    /// Rate of the sender's NIC.
    pub host_rate: BitsPerSec,
    /// Round-trip time of this connection's path on an idle fabric.
    pub base_rtt: Time,
    /// host_rate × base_rtt, in bytes.
    pub bdp_bytes: Bytes,
    /// Links on the path, one way.
    pub hops: u32,
    /// Round-trip time of the fabric's longest path on an idle fabric (full data packet out,
    /// ACK back): the "network-wide base RTT" some schemes scale their constants by.
    pub net_base_rtt: Time,
    /// Connections of the workload whose sender is this connection's source host (this one
    /// included): the host's concurrent flows when they all run at once (a fixed-rate pacer's
    /// fair share of the host link is `host_rate / src_conns`).
    pub src_conns: u32,
    /// Data buffer of a switch port, bytes (the largest bounded one; 0 when PFC leaves every
    /// port unbounded): the `Q` of the LB study's reordering bound (Eq. 1,
    /// [`crate::transport::subflows`]).
    pub queue_bytes: Bytes,
    /// Concurrent flows of the source host, `F`: the `pacer`'s `flows_per_host` when set, else
    /// [`PathInfo::src_conns`].
    pub flows_per_host: u32,
}

/// An acknowledgement reaching the sender.
#[derive(Clone, Copy, Debug, Default)]
pub struct AckEvent {
    /// Arrival time at the sender.
    pub now: Time,
    /// Wire bytes newly acknowledged by this ACK.
    pub acked_bytes: Bytes,
    /// Round-trip sample of the data packet that triggered the ACK.
    pub rtt: Time,
    /// Whether that data packet carried a CE mark.
    pub ecn: bool,
    /// Data packets covered by this ACK that carried a CE mark (coalesced ACKs).
    pub marked_pkts: u32,
    /// Wire bytes in flight after this ACK was processed.
    pub in_flight: u64,
    /// Path entropy of the acknowledged data packet.
    pub entropy: u16,
    /// Whether the acknowledged packet was a retransmission.
    pub retransmitted: bool,
}

/// Why the sender learnt of a loss.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LossCause {
    /// A switch trimmed the packet and the receiver returned a NACK.
    Trimmed,
}

/// A negative acknowledgement reaching the sender.
#[derive(Clone, Copy, Debug)]
pub struct NackEvent {
    /// Arrival time at the sender.
    pub now: Time,
    /// Wire bytes of the lost packet.
    pub bytes: Bytes,
    /// Why it was lost.
    pub cause: LossCause,
    /// Path entropy of the lost packet.
    pub entropy: u16,
    /// Wire bytes still in flight.
    pub in_flight: u64,
    /// When the trimmed transmission left the sender (tells feedback on packets sent before a
    /// window reset, e.g. SMaRTT's QuickAdapt, from feedback on later ones).
    pub sent_at: Time,
    /// The packet was trimmed at the last hop (the receiver's ToR downlink) and the receiver
    /// paces that hop with credits: the trim is the credit scheme's to answer, not the
    /// window's (uec-spec §2.4). False without receiver credits.
    pub last_hop_paced: bool,
}

/// A retransmission timeout.
#[derive(Clone, Copy, Debug)]
pub struct TimeoutEvent {
    /// When the timer fired.
    pub now: Time,
    /// Wire bytes declared lost by this timeout.
    pub lost_bytes: Bytes,
    /// Wire bytes still in flight.
    pub in_flight: u64,
    /// Timeouts in a row without an ACK in between.
    pub consecutive: u32,
    /// Send time of the most recent transmission this timeout declared lost.
    pub latest_sent_at: Time,
}

/// Whether a congestion window of `window` bytes (`None`: no window) holds back a packet of
/// `wire` bytes while `in_flight` bytes are outstanding. An empty pipe may always send one
/// packet, whatever the window. The one rule the sender glue and the loss-recovery modes share.
#[inline(always)]
pub fn window_holds_back(window: Option<u64>, in_flight: u64, wire: u64) -> bool {
    window.is_some_and(|w| in_flight > 0 && in_flight + wire > w)
}

/// The interface every congestion controller implements. Hooks default to doing nothing.
pub trait CongestionControl {
    /// An ACK arrived.
    fn on_ack(&mut self, _ev: &AckEvent) {}
    /// The ACK just given to [`CongestionControl::on_ack`] echoed these in-band telemetry
    /// records of its data packet's path (only when a scheme of the run reads them:
    /// [`CcConfig::carries_telemetry`]).
    fn on_telemetry(&mut self, _now: Time, _int: &IntStack) {}
    /// A NACK arrived.
    fn on_nack(&mut self, _ev: &NackEvent) {}
    /// The retransmission timer fired.
    fn on_timeout(&mut self, _ev: &TimeoutEvent) {}
    /// A data packet of `bytes` left the sender.
    fn on_send(&mut self, _now: Time, _bytes: u64) {}
    /// A congestion notification packet (RoCEv2 CNP, sent by the receiver's NIC when CE-marked
    /// data arrives; see `transport.cnp`) reached the sender.
    fn on_cnp(&mut self, _now: Time) {}
    /// Time has passed without an event for this controller: run any timers due by `now`
    /// (a rate limiter asks before releasing a packet held by a long pacing gap).
    fn advance_to(&mut self, _now: Time) {}
    /// Congestion window in wire bytes; `None` for a window-less (purely rate-based) sender.
    fn window(&self) -> Option<u64>;
    /// Pacing rate; `None` for no pacing (line rate).
    fn pacing_rate(&self) -> Option<BitsPerSec>;
    /// What the pacing gap is measured from (read once, when the connection is built).
    fn pacing_clock(&self) -> PacingClock {
        PacingClock::Departure
    }
    /// Upper bound of the random delay of a message posted on an idle connection: its first
    /// packet waits `U(0, start_jitter)`, drawn from the connection's random stream (0 = none,
    /// and nothing is drawn). Meant for [`PacingClock::Schedule`]: a `Departure` pacer re-reads
    /// its rate during gaps longer than the engine's re-check interval (10 µs) and would cut a
    /// longer start delay short.
    fn start_jitter(&self) -> Time {
        Time::ZERO
    }
    /// Relative jitter `j` of each pacing gap: the gap after a packet is its serialization at
    /// the pacing rate times `1 + U(−j, j)`, drawn from the connection's random stream (0 =
    /// exact gaps, and nothing is drawn). The mean rate is unchanged.
    fn gap_jitter(&self) -> f64 {
        0.0
    }
}

/// What a paced connection measures its next send time from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PacingClock {
    /// From the moment the NIC took the previous packet: time the packet waited behind other
    /// connections' packets is lost to the connection (a NIC rate limiter). While the next send
    /// is more than a few µs away the rate is re-read, so a rising rate shortens the gap.
    Departure,
    /// From the previous packet's own slot on a fixed schedule, whenever the NIC actually took
    /// it: slot `k+1` = slot `k` + wire bytes / rate. A packet the NIC could not take at its
    /// slot (the link busy with other connections' packets or control packets) does not delay
    /// the later slots, so a connection that fell behind sends its late packets as soon as the
    /// NIC lets it, as if each slot had dropped a packet into an unbounded NIC FIFO. A
    /// connection with nothing to send is idle; when it gets something again its schedule
    /// resumes at `max(now, next slot)` (no catch-up for the idle time). The rate is read once
    /// per packet. This is lb-ai-training spec §2.0.2's `PACE_TICK` / `policy_wakeup`.
    Schedule,
}

crate::scheme_family! {
    /// Scenario selection of a controller and its parameters (`[transport.cc]`, `name = ...`).
    config CcConfig;
    /// A built controller (static dispatch over every scheme).
    any AnyCc;
    ctx PathInfo; what "congestion control"; key "transport.cc"; default Fixed;
    dispatch dispatch;
    schemes {
        /// See [`fixed`].
        Fixed => fixed::Fixed,
        /// See [`line_rate`].
        LineRate => line_rate::LineRate,
        /// See [`pacer`].
        Pacer => pacer::Pacer,
        /// See [`mprdma`].
        Mprdma => mprdma::Mprdma,
        /// See [`smartt`]. Boxed: its state is a few hundred bytes, and every connection's
        /// `AnyCc` is as large as the largest variant.
        Smartt => Box<smartt::Smartt>,
        /// See [`swift`]. Boxed: about 130 bytes of state, several times the small schemes'.
        Swift => Box<swift::Swift>,
        /// See [`bbr`]. Boxed: its filters and delivery checkpoints take about 1.5 KiB.
        Bbr => Box<bbr::Bbr>,
        /// See [`strack`]. Boxed: about 200 bytes of constants and state.
        Strack => Box<strack::Strack>,
        /// See [`dcqcn`]. Boxed: about 180 bytes of constants and state.
        Dcqcn => Box<dcqcn::Dcqcn>,
        /// See [`dctcp`].
        Dctcp => dctcp::Dctcp,
        /// See [`timely`]. Boxed: about 130 bytes of constants and state.
        Timely => Box<timely::Timely>,
        /// See [`nscc`]. Boxed: about 250 bytes of constants and state.
        Nscc => Box<nscc::Nscc>,
        /// See [`hpcc`]. Boxed: its copy of the last INT records takes about 170 bytes.
        Hpcc => Box<hpcc::Hpcc>,
    }
}

/// Shared fixtures of the controllers' unit tests: 4096-byte packets, a 10 µs base RTT, six
/// hops, and a clean full-packet ACK at the base RTT.
#[cfg(test)]
pub(crate) mod testing {
    use super::{AckEvent, PathInfo};
    use crate::units::{BitsPerSec, Bytes, Time};

    /// Full packet size of the fixtures.
    pub const MTU: u64 = 4096;

    /// A path at `host_rate_bps` with a BDP of `bdp_bytes` (given separately, so tests can pick
    /// round numbers).
    pub const fn path(host_rate_bps: u64, bdp_bytes: u64) -> PathInfo {
        PathInfo { mtu_bytes: Bytes(MTU), host_rate: BitsPerSec(host_rate_bps), base_rtt: Time::from_us(10), bdp_bytes: Bytes(bdp_bytes), hops: 6, net_base_rtt: Time::from_us(10), src_conns: 1, queue_bytes: Bytes::ZERO, flows_per_host: 1 }
    }

    /// An unmarked ACK of one full packet at the base RTT.
    pub const ACK: AckEvent =
        AckEvent { now: Time::ZERO, acked_bytes: Bytes(MTU), rtt: Time::from_us(10), ecn: false, marked_pkts: 0, in_flight: 0, entropy: 0, retransmitted: false };
}

impl CcConfig {
    /// The notification point's CNP interval for schemes that react to CNP packets (`Some` for
    /// `dcqcn`'s paper reaction point: at most one CNP per connection per interval); `None` for
    /// every other scheme and for `dcqcn`'s mellanox one (its CNPs ride on the ACKs).
    pub fn cnp_interval(&self) -> Option<Time> {
        match self {
            CcConfig::Dcqcn(p) => p.cnp_interval(),
            _ => None,
        }
    }

    /// The floor of a rate controller's rate, Mb/s (`dcqcn`'s and `timely`'s `min_rate_mbps`);
    /// `None` for schemes without one. Setup refuses a floor above the host link rate.
    pub fn min_rate_mbps(&self) -> Option<f64> {
        match self {
            CcConfig::Dcqcn(p) => Some(p.min_rate_mbps),
            CcConfig::Timely(p) => Some(p.min_rate_mbps),
            _ => None,
        }
    }

    /// Whether the scheme reads in-band telemetry (`kernel/telemetry.rs`): switches then stamp
    /// every data packet and ACKs echo the records (`hpcc`).
    pub fn carries_telemetry(&self) -> bool {
        matches!(self, CcConfig::Hpcc(_))
    }

    /// Whether the notification point also sends a CNP with every sequence NACK (`dcqcn`'s
    /// `ooo_triggers_cnp`, the ConWeave ns-3 receiver; seqbalance spec §2.3.3).
    pub fn ooo_triggers_cnp(&self) -> bool {
        matches!(self, CcConfig::Dcqcn(p) if p.ooo_triggers_cnp)
    }
}

impl CongestionControl for AnyCc {
    #[inline]
    fn on_ack(&mut self, ev: &AckEvent) {
        dispatch!(self, c => c.on_ack(ev))
    }
    #[inline]
    fn on_telemetry(&mut self, now: Time, int: &IntStack) {
        dispatch!(self, c => c.on_telemetry(now, int))
    }
    #[inline]
    fn on_nack(&mut self, ev: &NackEvent) {
        dispatch!(self, c => c.on_nack(ev))
    }
    #[inline]
    fn on_timeout(&mut self, ev: &TimeoutEvent) {
        dispatch!(self, c => c.on_timeout(ev))
    }
    #[inline]
    fn on_send(&mut self, now: Time, bytes: u64) {
        dispatch!(self, c => c.on_send(now, bytes))
    }
    #[inline]
    fn on_cnp(&mut self, now: Time) {
        dispatch!(self, c => c.on_cnp(now))
    }
    #[inline]
    fn advance_to(&mut self, now: Time) {
        dispatch!(self, c => c.advance_to(now))
    }
    #[inline]
    fn window(&self) -> Option<u64> {
        dispatch!(self, c => c.window())
    }
    #[inline]
    fn pacing_rate(&self) -> Option<BitsPerSec> {
        dispatch!(self, c => c.pacing_rate())
    }
    #[inline]
    fn pacing_clock(&self) -> PacingClock {
        dispatch!(self, c => c.pacing_clock())
    }
    #[inline]
    fn start_jitter(&self) -> Time {
        dispatch!(self, c => c.start_jitter())
    }
    #[inline]
    fn gap_jitter(&self) -> f64 {
        dispatch!(self, c => c.gap_jitter())
    }
}
