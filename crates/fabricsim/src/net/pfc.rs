//! Priority flow control (IEEE 802.1Qbb) on a shared-buffer switch: the lossless fabric RoCEv2
//! runs on.
//!
//! **Follows:** strack spec §4 and §5.4 (shared buffer of 256 MB per 51.2 Tb/s switch, scaled by
//! capacity; per-ingress accounting; XOFF when an ingress port's use exceeds α × the free shared
//! buffer, α = 1/8; XON 2 MTU below; headroom 2 × link delay × rate + 2 MTU) and seqbalance spec
//! §4 (HPCC ns-3 switch MMU: packets of a port whose shared use reached the threshold go to its
//! headroom; XOFF when shared use reaches the threshold or headroom is in use; XON when headroom
//! is empty and shared use + resume offset is below the threshold; headroom overflow is the only
//! possible drop and is counted and reported). lb-ai-training spec §4.2 gives the static mode
//! (fixed XOFF, XON one packet below).
//!
//! Model: every switch has one buffer shared by all its output queues, partitioned into a shared
//! pool and a headroom reserve per ingress port. Only the data class is accounted and paused
//! (one lossless priority); control packets (ACKs, NACKs, CNPs) travel in a strict-priority
//! class that is never paused, as PFC frames themselves are generated out of band. A PAUSE or
//! RESUME takes the link's propagation delay plus one 64-byte frame time to act on the upstream
//! port, which then finishes the packet it is serializing and stops starting data packets
//! (a host NIC stops pulling from its connections). Hosts never send PAUSE (their receive path
//! is infinitely fast). Pause frames carry no timer: a paused port waits for RESUME.
//!
//! Accounting is keyed by the upstream egress port (one per cable direction), which identifies
//! the (switch, ingress port) pair exactly.
//!
//! This file holds the configuration, the accounting and the handlers (admission, release,
//! PAUSE/RESUME frames), the latter as methods of the [`Network`](super::Network).

use crate::error::{Error, Result};
use crate::ids::{NodeId, PortId};
use crate::topo::Fabric;
use crate::units::{ByteSize, Bytes, MAX_BUFFER_BYTES, Time};
use crate::kernel::Kernel;
use crate::kernel::queue::EventKind;
use serde::{Deserialize, Serialize};

/// `[switch.pfc]`.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct PfcConfig {
    /// Turn PFC on (lossless data class).
    pub enabled: bool,
    /// Buffer of every switch in bytes; default: `buffer_mb_per_tbps` × the switch's capacity.
    pub buffer_bytes: Option<ByteSize>,
    /// Buffer per Tb/s of switch capacity (sum of its port rates), in MB (10^6 B):
    /// 256 MB / 51.2 Tb/s = 5 (strack spec §4).
    pub buffer_mb_per_tbps: f64,
    /// `dynamic` (XOFF at α × free shared buffer) or `static` (XOFF at `xoff_bytes`).
    pub threshold: PfcThreshold,
    /// α of the dynamic threshold.
    pub alpha: f64,
    /// Ingress bytes that trigger XOFF in the static mode.
    pub xoff_bytes: Option<ByteSize>,
    /// RESUME once use is this far below the threshold; default 2 MTU (strack spec §5.4).
    pub resume_offset_bytes: Option<ByteSize>,
    /// Headroom per ingress port; default 2 × link delay × rate + 2 MTU (strack spec §5.4) + two
    /// PFC frame times (the frame's serialization, which the spec's formula leaves out).
    pub headroom_bytes: Option<ByteSize>,
}

/// Ranges of the numeric `[switch.pfc]` keys (what `fabricsim list --params` shows); the
/// smallest static threshold and headroom depend on the packet size and are checked in
/// [`PfcConfig::build`].
pub const PFC_LIMITS: &[crate::scheme::Limit] = &[
    crate::scheme::Limit::new("buffer_bytes", 0.0, MAX_BUFFER_BYTES as f64),
    crate::scheme::Limit::new("buffer_mb_per_tbps", 1e-3, 1e6),
    crate::scheme::Limit::new("alpha", 1.0 / 1024.0, 64.0),
    crate::scheme::Limit::new("xoff_bytes", 0.0, MAX_BUFFER_BYTES as f64),
    crate::scheme::Limit::new("resume_offset_bytes", 0.0, MAX_BUFFER_BYTES as f64),
    crate::scheme::Limit::new("headroom_bytes", 0.0, MAX_BUFFER_BYTES as f64),
];

/// How the XOFF threshold is set.
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum PfcThreshold {
    /// α × (shared pool − shared bytes in use).
    #[default]
    Dynamic,
    /// A fixed number of bytes per ingress port.
    Static,
}

impl Default for PfcConfig {
    fn default() -> Self {
        PfcConfig {
            enabled: false,
            buffer_bytes: None,
            buffer_mb_per_tbps: 5.0,
            threshold: PfcThreshold::Dynamic,
            alpha: 0.125,
            xoff_bytes: None,
            resume_offset_bytes: None,
            headroom_bytes: None,
        }
    }
}

/// Buffer state of one switch.
#[derive(Clone, Copy, Debug, Default)]
pub struct SwitchBuffer {
    /// Whole buffer (shared pool + headroom reserves).
    pub size: u64,
    /// Size of the shared pool (buffer minus every ingress port's headroom).
    pub shared_size: u64,
    /// Shared bytes in use.
    pub shared_used: u64,
    /// Most bytes (shared + headroom) ever buffered.
    pub max_used: u64,
    /// Headroom bytes in use, summed over ingress ports.
    pub headroom_used: u64,
}

/// Accounting of one ingress port (keyed by the upstream port feeding it).
#[derive(Clone, Copy, Debug, Default)]
pub struct Ingress {
    /// Shared-pool bytes charged to this ingress.
    pub shared: u64,
    /// Headroom bytes in use.
    pub headroom: u64,
    /// Headroom reserved for it.
    pub headroom_size: u64,
    /// Whether a PAUSE was sent and no RESUME since.
    pub xoff: bool,
    /// PAUSE frames sent upstream.
    pub pauses_sent: u32,
    /// PAUSE frames that paused the upstream port (received while it was running).
    pub pauses_received: u32,
    /// When the upstream port was last paused.
    pub paused_since: Time,
    /// Time the upstream port spent paused, over closed pauses.
    pub paused_total: Time,
    /// PFC frames on their way to the upstream port, and whether the oldest is a PAUSE. The
    /// frames alternate (a PAUSE only when `xoff` is set, a RESUME only when it is cleared), so
    /// these two say which each frame is. A frame event names only the port: two frames that
    /// arrive at one instant are then the same kind of event, and whichever runs first takes
    /// the older frame, so the upstream port ends in the state sent last.
    pub frames_in_flight: u32,
    /// Whether the oldest frame in flight is a PAUSE.
    pub oldest_frame_pauses: bool,
}

impl Ingress {
    /// The record of a cable whose two ends ran in different partitions: the accounting of
    /// the downstream switch's ingress from `down`'s copy, what the upstream port saw (frames
    /// received, time paused) from `up`'s.
    pub fn from_halves(down: &Ingress, up: &Ingress) -> Ingress {
        let Ingress { shared, headroom, headroom_size, xoff, pauses_sent, .. } = *down;
        let Ingress { pauses_received, paused_since, paused_total, frames_in_flight, oldest_frame_pauses, .. } = *up;
        Ingress { shared, headroom, headroom_size, xoff, pauses_sent, pauses_received, paused_since, paused_total, frames_in_flight, oldest_frame_pauses }
    }

    /// A frame (PAUSE if `pause`) leaves for the upstream port.
    pub fn frame_sent(&mut self, pause: bool) {
        if self.frames_in_flight == 0 {
            self.oldest_frame_pauses = pause;
        }
        debug_assert_eq!(self.oldest_frame_pauses ^ (self.frames_in_flight % 2 == 1), pause, "PFC frames alternate");
        self.frames_in_flight += 1;
    }

    /// The oldest frame in flight reaches the upstream port: whether it is a PAUSE.
    pub fn frame_arrived(&mut self) -> bool {
        debug_assert!(self.frames_in_flight > 0);
        let pause = self.oldest_frame_pauses;
        self.frames_in_flight -= 1;
        self.oldest_frame_pauses = !pause;
        pause
    }
}

/// Run-time PFC state.
#[derive(Clone, Debug, Default)]
pub struct PfcState {
    /// PFC is on.
    pub on: bool,
    /// Per switch (index = node − hosts).
    pub switches: Vec<SwitchBuffer>,
    /// Per upstream port (index = port id); meaningful for ports whose peer is a switch.
    pub ingress: Vec<Ingress>,
    dynamic: bool,
    alpha: f64,
    xoff_static: u64,
    resume_offset: u64,
    /// Packets dropped because an ingress port's headroom overflowed (lossless violated).
    pub overflow_drops: u64,
    /// Time of each PAUSE generation: (time, upstream port), when `run.event_log` is on.
    pub log: Vec<(Time, PortId, bool)>,
    /// Whether to record `log`.
    pub log_on: bool,
    /// Smallest and largest headroom of a switch ingress port (for [`PfcState::model`]).
    headroom_range: (u64, u64),
}

/// The XOFF rule of a PFC run.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum XoffRule {
    /// XOFF when an ingress port's shared bytes reach α × the free shared pool.
    Dynamic {
        /// α.
        alpha: f64,
    },
    /// XOFF when an ingress port's shared bytes reach a fixed number.
    Static {
        /// The threshold in bytes.
        xoff_bytes: u64,
    },
}

/// The buffer model of a PFC run, as `fabricsim check` shows it: ranges are (smallest,
/// largest) over the switches or their ingress ports, since buffers scale with capacity and
/// headroom with each cable's delay and rate.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PfcModel {
    /// Whole buffer of a switch (shared pool + headroom reserves), bytes.
    pub switch_buffer: (u64, u64),
    /// Shared pool of a switch (its buffer less every ingress port's headroom), bytes.
    pub shared_pool: (u64, u64),
    /// Headroom reserved per ingress port, bytes.
    pub headroom: (u64, u64),
    /// When a PAUSE is sent.
    pub xoff: XoffRule,
    /// RESUME once the headroom is empty and the shared bytes are this far below the threshold.
    pub resume_offset: u64,
}

/// One PFC frame's time on the wire.
pub(crate) const FRAME_BYTES: u64 = 64;

impl PfcConfig {
    /// Validates and builds the run-time state for `fabric` with `mtu`-byte packets.
    pub fn build(&self, fabric: &Fabric, mtu: u64) -> Result<PfcState> {
        // Checked even while PFC is off, so that a bad value never passes unnoticed.
        crate::scheme::validate_params(self, PFC_LIMITS, "switch.pfc")?;
        if !self.enabled {
            // A setting of a switched-off PFC would silently do nothing: refuse it.
            let set = toml::Value::try_from(PfcConfig { enabled: false, ..self.clone() }).ok();
            let default = toml::Value::try_from(PfcConfig::default()).ok();
            if let (Some(toml::Value::Table(set)), Some(toml::Value::Table(default))) = (set, default) {
                if let Some((key, value)) = set.iter().find(|(k, v)| default.get(k.as_str()) != Some(v)) {
                    return Err(Error::invalid(format!("switch.pfc.{key}"), format!("{value}: set while PFC is off; add `switch.pfc.enabled = true` or leave the key out")));
                }
            }
            return Ok(PfcState::default());
        }
        let xoff_static = match (self.threshold, &self.xoff_bytes) {
            (PfcThreshold::Static, Some(b)) if b.0 >= mtu => b.0,
            (PfcThreshold::Static, Some(b)) => {
                return Err(Error::invalid("switch.pfc.xoff_bytes", format!("{}: must be at least one packet ({mtu} bytes)", b.0)))
            }
            (PfcThreshold::Static, None) => return Err(Error::invalid("switch.pfc.xoff_bytes", "missing: threshold = \"static\" needs xoff_bytes")),
            (PfcThreshold::Dynamic, Some(_)) => {
                return Err(Error::invalid("switch.pfc.xoff_bytes", "only allowed with threshold = \"static\" (the dynamic threshold follows the free buffer)"))
            }
            (PfcThreshold::Dynamic, None) => 0,
        };
        let resume_offset = self.resume_offset_bytes.map_or(2 * mtu, |b| b.0);
        if let Some(h) = self.headroom_bytes.filter(|h| h.0 < 2 * mtu) {
            // Less cannot even hold the packets that straddle a pause: the fabric would drop.
            return Err(Error::invalid(
                "switch.pfc.headroom_bytes",
                format!("{}: a lossless port needs at least 2 × mtu_bytes ({} bytes) of headroom; default 2 × link delay × rate + 2 MTU + 2 PFC frames", h.0, 2 * mtu),
            ));
        }
        let hosts = fabric.hosts;
        let mut ingress = vec![Ingress::default(); fabric.ports.len()];
        let mut switches = Vec::with_capacity(fabric.switches() as usize);
        let mut headroom_range = (u64::MAX, 0);
        for sw in hosts..fabric.tier.len() as u32 {
            let mut capacity_bps = 0u128;
            let mut headroom_total = 0u64;
            for &out in fabric.ports_of(NodeId(sw)) {
                let spec = &fabric.ports[out.idx()];
                capacity_bps += spec.rate.0 as u128;
                // The port feeding this switch over the same cable.
                let up = spec.reverse;
                // Worst case after XOFF leaves: everything the upstream port starts during the
                // frame's flight back and the data already on the cable (2 × delay × rate), the
                // frame's own serialization, and two packets straddling the interval's ends.
                // The spec's 2 × delay × rate + 2 MTU lacks the frame term and overflowed by
                // 32 bytes in a 4:1 AlltoAll; the second frame term absorbs rounding. A packet
                // reaching a switch also spends the switch latency on the way (`Port`'s arrival
                // delay): data towards this switch, and the frame towards an upstream switch,
                // take that much longer (without it a fabric with switch latency overflowed,
                // found by the fuzzer).
                let sl = fabric.switch_latency;
                let upstream_switch = spec.peer >= NodeId(hosts);
                let h = match self.headroom_bytes {
                    Some(b) => b.0,
                    None => (spec.rate.bytes_in(spec.latency + sl) + spec.rate.bytes_in(spec.latency + if upstream_switch { sl } else { Time::ZERO }) + Bytes(2 * mtu) + Bytes(2 * FRAME_BYTES)).0,
                };
                ingress[up.idx()].headroom_size = h;
                headroom_total += h;
                headroom_range = (headroom_range.0.min(h), headroom_range.1.max(h));
            }
            let buffer = match self.buffer_bytes {
                Some(b) => b.0,
                None => {
                    let b = (self.buffer_mb_per_tbps * 1e6 * capacity_bps as f64 / 1e12).round();
                    if b > MAX_BUFFER_BYTES as f64 {
                        return Err(Error::invalid(
                            "switch.pfc.buffer_mb_per_tbps",
                            format!("{}: gives switch {sw} {b} bytes; allowed at most {MAX_BUFFER_BYTES} bytes (1 TiB) per switch", self.buffer_mb_per_tbps),
                        ));
                    }
                    b as u64
                }
            };
            if buffer <= headroom_total + mtu {
                return Err(Error::invalid(
                    "switch.pfc.buffer_bytes",
                    format!("switch {sw}: a {buffer}-byte buffer leaves no shared pool after {headroom_total} bytes of headroom"),
                ));
            }
            switches.push(SwitchBuffer { size: buffer, shared_size: buffer - headroom_total, ..Default::default() });
        }
        // XON needs the shared bytes `resume_offset` below the XOFF threshold, whose largest
        // value is α × an empty shared pool (dynamic) or xoff_bytes (static): an offset at or
        // above it resumes a port only once it has drained, which is no threshold at all.
        let smallest_pool = switches.iter().map(|b| b.shared_size).min().unwrap_or(0);
        let (top, what) = match self.threshold {
            PfcThreshold::Dynamic => ((smallest_pool as f64 * self.alpha) as u64, format!("α ({}) × the smallest shared pool ({smallest_pool} bytes)", self.alpha)),
            PfcThreshold::Static => (xoff_static, "switch.pfc.xoff_bytes".to_string()),
        };
        if !switches.is_empty() && resume_offset >= top {
            return Err(Error::invalid(
                "switch.pfc.resume_offset_bytes",
                format!("{resume_offset}: must be below the largest XOFF threshold, {top} bytes ({what}); default 2 × mtu_bytes ({} bytes)", 2 * mtu),
            ));
        }
        Ok(PfcState {
            on: true,
            switches,
            ingress,
            dynamic: self.threshold == PfcThreshold::Dynamic,
            alpha: self.alpha,
            xoff_static,
            resume_offset,
            overflow_drops: 0,
            log: Vec::new(),
            log_on: false,
            headroom_range,
        })
    }
}

impl PfcState {
    /// The buffer model (None when PFC is off).
    pub fn model(&self) -> Option<PfcModel> {
        let range = |f: fn(&SwitchBuffer) -> u64| self.switches.iter().map(f).fold((u64::MAX, 0), |(lo, hi), x| (lo.min(x), hi.max(x)));
        self.on.then(|| PfcModel {
            switch_buffer: range(|b| b.size),
            shared_pool: range(|b| b.shared_size),
            headroom: self.headroom_range,
            xoff: if self.dynamic { XoffRule::Dynamic { alpha: self.alpha } } else { XoffRule::Static { xoff_bytes: self.xoff_static } },
            resume_offset: self.resume_offset,
        })
    }

    #[inline]
    fn threshold(&self, b: &SwitchBuffer) -> u64 {
        if self.dynamic {
            ((b.shared_size - b.shared_used.min(b.shared_size)) as f64 * self.alpha) as u64
        } else {
            self.xoff_static
        }
    }

    /// Charges a `size`-byte data packet arriving at switch `sw` from upstream port `up`.
    /// Returns `(admitted, send_pause)`.
    #[inline]
    pub(crate) fn admit(&mut self, sw: usize, up: usize, size: u64) -> (bool, bool) {
        let t = self.threshold(&self.switches[sw]);
        let b = &mut self.switches[sw];
        let ing = &mut self.ingress[up];
        if ing.shared + size > t || b.shared_used + size > b.shared_size || ing.headroom > 0 {
            if ing.headroom + size > ing.headroom_size {
                return (false, false);
            }
            ing.headroom += size;
            b.headroom_used += size;
        } else {
            ing.shared += size;
            b.shared_used += size;
        }
        b.max_used = b.max_used.max(b.shared_used + b.headroom_used);
        let t = self.threshold(&self.switches[sw]);
        let ing = &mut self.ingress[up];
        let pause = !ing.xoff && (ing.headroom > 0 || ing.shared >= t);
        if pause {
            ing.xoff = true;
            ing.pauses_sent += 1;
        }
        (true, pause)
    }

    /// Releases a `size`-byte packet that entered switch `sw` from upstream port `up` and is
    /// leaving. Returns whether to send RESUME.
    #[inline]
    pub(crate) fn release(&mut self, sw: usize, up: usize, size: u64) -> bool {
        let b = &mut self.switches[sw];
        let ing = &mut self.ingress[up];
        let from_headroom = ing.headroom.min(size);
        ing.headroom -= from_headroom;
        b.headroom_used -= from_headroom;
        let from_shared = size - from_headroom;
        debug_assert!(ing.shared >= from_shared && b.shared_used >= from_shared, "PFC accounting went negative");
        ing.shared -= from_shared;
        b.shared_used -= from_shared;
        let t = self.threshold(&self.switches[sw]);
        let ing = &mut self.ingress[up];
        let resume = ing.xoff && ing.headroom == 0 && (ing.shared == 0 || ing.shared + self.resume_offset <= t);
        if resume {
            ing.xoff = false;
        }
        resume
    }

    /// Bytes still charged anywhere (zero once the network has drained).
    pub fn charged_bytes(&self) -> u64 {
        self.switches.iter().map(|b| b.shared_used + b.headroom_used).sum()
    }
}


// The PFC handlers: admission and release of data packets at a switch, and the PAUSE/RESUME
// frames they trigger, which act on the upstream port one propagation delay plus one 64-byte
// frame time later.
impl<L: crate::kernel::store::Layout> super::Network<L> {
    /// PFC admission of data packet `size` bytes arriving at switch `sw` over upstream port
    /// `up`. Returns false if the packet must be dropped (headroom overflow).
    #[inline]
    pub(super) fn pfc_admit(&mut self, k: &mut Kernel, sw: NodeId, up: PortId, size: u64) -> bool {
        let s = self.switch_index(sw);
        let (ok, pause) = self.pfc.admit(s, up.idx(), size);
        if !ok {
            self.pfc.overflow_drops += 1;
            return false;
        }
        if pause {
            self.send_pfc_frame(k, up, true);
        }
        true
    }

    /// PFC release of a data packet leaving switch `sw` that came in over upstream port `up`.
    #[inline]
    pub(super) fn pfc_release(&mut self, k: &mut Kernel, sw: NodeId, up: PortId, size: u64) {
        let s = self.switch_index(sw);
        if self.pfc.release(s, up.idx(), size) {
            self.send_pfc_frame(k, up, false);
        }
    }

    /// Sends PAUSE (`pause`) or RESUME to upstream port `up`; it acts one propagation delay
    /// plus one frame time later.
    fn send_pfc_frame(&mut self, k: &mut Kernel, up: PortId, pause: bool) {
        let spec = &self.fabric.ports[up.idx()];
        let delay = spec.latency + spec.rate.tx_time(Bytes(FRAME_BYTES));
        if self.pfc.log_on && pause {
            self.pfc.log.push((k.now, up, pause));
        }
        self.pfc.ingress[up.idx()].frame_sent(pause);
        let (at, upstream) = (k.now + delay, self.fabric.ports[up.idx()].owner);
        match k.boundary.as_deref_mut() {
            Some(b) if b.remote(upstream) => b.send_pfc_frame(upstream, at, up, pause),
            _ => k.q.push(at, EventKind::Pfc, up.0),
        }
    }

    /// The oldest PFC frame in flight to upstream port `port` reached it. Returns whether a
    /// RESUME lets the port send again (the caller kicks it: it may be a host's NIC).
    #[must_use]
    pub fn on_pfc_frame(&mut self, now: Time, port: PortId) -> bool {
        let pause = self.pfc.ingress[port.idx()].frame_arrived();
        let ps = &mut self.ports[port.idx()];
        let stats = &mut self.pfc.ingress[port.idx()];
        if pause {
            if !ps.paused {
                ps.paused = true;
                stats.paused_since = now;
                stats.pauses_received += 1;
            }
            false
        } else if ps.paused {
            ps.paused = false;
            stats.paused_total += now - stats.paused_since;
            true
        } else {
            false
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn frames_in_flight_arrive_oldest_first() {
        let mut g = super::Ingress::default();
        g.frame_sent(true);
        g.frame_sent(false);
        g.frame_sent(true);
        assert_eq!([g.frame_arrived(), g.frame_arrived()], [true, false]);
        g.frame_sent(false);
        assert_eq!([g.frame_arrived(), g.frame_arrived()], [true, false]);
        assert_eq!(g.frames_in_flight, 0);
    }

    use super::{PfcModel, XoffRule};

    /// The PFC model of the scenario tests' tiny leaf-spine (2 ToRs, 1 spine, one host per ToR,
    /// 100 G: every switch has two 100 G ports, 0.2 Tb/s of capacity) with PFC on and the
    /// `switch.pfc.*` overrides `sets`, and the scenario's packet size.
    fn model(sets: &[&str]) -> (PfcModel, u64) {
        let sets = [&["switch.trimming=false", "switch.pfc.enabled=true"], sets].concat();
        let setup = crate::scenario::tests::setup("", &sets).unwrap();
        (setup.pfc.model().expect("PFC is on"), setup.scenario.transport.mtu_bytes as u64)
    }

    #[test]
    fn model_reports_the_configured_buffer_rule_and_headroom() {
        assert_eq!(crate::scenario::tests::setup("", &[]).unwrap().pfc.model(), None);
        let (m, _) = model(&[
            "switch.pfc.buffer_bytes=1000000",
            "switch.pfc.headroom_bytes=20000",
            "switch.pfc.threshold=static",
            "switch.pfc.xoff_bytes=50000",
            "switch.pfc.resume_offset_bytes=4096",
        ]);
        // Two ingress ports per switch, 20 000 B of headroom each.
        assert_eq!(m, PfcModel { switch_buffer: (1_000_000, 1_000_000), shared_pool: (960_000, 960_000), headroom: (20_000, 20_000), xoff: XoffRule::Static { xoff_bytes: 50_000 }, resume_offset: 4096 });
    }

    #[test]
    fn model_defaults_scale_the_buffer_with_capacity() {
        let (m, mtu) = model(&[]);
        // 5 MB per Tb/s × 0.2 Tb/s; α = 1/8; XON 2 MTU below the threshold.
        assert_eq!(m.switch_buffer, (1_000_000, 1_000_000));
        assert_eq!(m.xoff, XoffRule::Dynamic { alpha: 0.125 });
        assert_eq!(m.resume_offset, 2 * mtu);
        // Every cable alike (100 G, 1 µs): one headroom, 2 × delay × rate + 2 MTU + 2 frames.
        assert_eq!(m.headroom, (2 * 12_500 + 2 * mtu + 2 * super::FRAME_BYTES, 2 * 12_500 + 2 * mtu + 2 * super::FRAME_BYTES));
        assert_eq!(m.shared_pool.0, 1_000_000 - 2 * m.headroom.0);
    }
}
