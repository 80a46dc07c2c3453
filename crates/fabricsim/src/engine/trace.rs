//! Time series and distributions recorded during a run, for figures that plot dynamics rather
//! than completion times: congestion windows over time (smartt-reps Fig. 2), the per-ACK RTT
//! distribution (Fig. 10b).
//!
//! Sampling is an event every `run.trace_interval_us` that reads the traced connections' state;
//! it stops rescheduling itself when nothing else is pending, so it never keeps a finished or
//! deadlocked run alive. The RTT histogram is always on: one array increment per ACK.
//!
//! Samples go to one of two sinks: the tracer's vectors, which the results hand to library
//! callers (the Python package, tests), or, for `fabricsim run`, their CSV files, row by row
//! through a bounded buffer (a [`SampleSink`]: `results::stream`), so that a run sampled every
//! nanosecond holds no more samples than the buffer. The uplink-imbalance figure is kept up
//! to date tick by tick ([`super::uplink_meter::UplinkMeter`]) for the same reason.

use super::queue::EventKind;
use crate::kernel::Kernel;
use crate::transport::cc::CongestionControl;
use crate::units::Time;

/// One sample of one connection.
#[derive(Clone, Copy, Debug)]
pub struct ConnSample {
    /// When.
    pub at: Time,
    /// Connection.
    pub conn: u32,
    /// Congestion window in bytes (`None` for window-less controllers).
    pub window: Option<u64>,
    /// Wire bytes in flight.
    pub in_flight: u64,
    /// Pacing rate in bits per second (`None` = line rate).
    pub rate_bps: Option<u64>,
    /// Payload bytes acknowledged so far.
    pub acked_bytes: u64,
}

/// One sample of one port.
#[derive(Clone, Copy, Debug)]
pub struct PortSample {
    /// When.
    pub at: Time,
    /// Port.
    pub port: u32,
    /// Bytes in its data class.
    pub data_bytes: u64,
    /// Bytes transmitted so far (every class).
    pub tx_bytes: u64,
    /// Whether PFC holds its data class.
    pub paused: bool,
    /// Packets this port has marked CE so far.
    pub marks: u64,
}

pub use crate::kernel::packet_log::{PacketEvent, PacketLog, PacketRecord, NO_PORT};

/// What to sample and what was sampled.
#[derive(Debug, Default)]
pub struct Tracer {
    /// Sampling period (0 = off).
    pub interval: Time,
    /// Connections to sample.
    pub conns: Vec<u32>,
    /// Samples in time order (none when streamed to `files`).
    pub samples: Vec<ConnSample>,
    /// Ports to sample.
    pub ports: Vec<u32>,
    /// Port samples in time order (none when streamed to `files`).
    pub port_samples: Vec<PortSample>,
    /// The files the samples are streamed to instead of the vectors above.
    pub(crate) files: Option<Box<dyn SampleSink>>,
    /// The uplink imbalance of the ToRs whose uplinks are all traced, tick by tick.
    pub(crate) imbalance: Option<super::uplink_meter::UplinkMeter>,
    /// Connections whose every ACK is logged (`run.ack_log_conns`), sorted.
    pub ack_conns: Vec<u32>,
    /// Logged ACKs: (arrival time, connection, RTT sample, ECN echo).
    pub acks: Vec<(Time, u32, Time, bool)>,
    /// Whether to log the gates' window decisions (`run.gate_log`).
    pub log_gates: bool,
    /// Logged window decisions: (time, connection, decision).
    pub gate_updates: Vec<(Time, u32, crate::transport::gate::WindowUpdate)>,
    /// Flowlet sizes per gap (`run.flowlet_gaps_us`); `None`: off.
    pub flowlets: Option<Box<super::flowlets::FlowletMeter>>,
}

impl Tracer {
    /// Whether it samples or logs anything; a parallel run stays serial while it does (a new
    /// kind of record belongs in this test).
    pub(crate) fn records_anything(&self) -> bool {
        self.interval > Time::ZERO || !self.ack_conns.is_empty() || self.log_gates || self.flowlets.is_some()
    }

    /// Whether the run takes samples: a period and something to sample.
    pub(crate) fn samples_anything(&self) -> bool {
        samples_anything(self.interval, &self.conns, &self.ports)
    }
}

/// Whether a run sampling every `interval` (0: never) the connections `conns` and the ports
/// `ports` takes any sample.
pub fn samples_anything(interval: Time, conns: &[u32], ports: &[u32]) -> bool {
    interval > Time::ZERO && !(conns.is_empty() && ports.is_empty())
}

/// Where a run writes its samples instead of keeping them in the [`Tracer`]: the trace files of
/// a results folder (`results::stream::TraceFiles`, for `fabricsim run`). A trait here and its
/// implementation in results, so that the engine does not reach up a layer.
pub trait SampleSink: std::fmt::Debug + Send {
    /// Writes one connection sample.
    fn conn(&mut self, s: &ConnSample);
    /// Writes one sample of the `index`-th traced port.
    fn port(&mut self, index: usize, s: &PortSample);
    /// The sink as `Any`, for its owner to take back once the run is over.
    fn into_any(self: Box<Self>) -> Box<dyn std::any::Any>;
}

impl Tracer {
    /// A sampling tick at `k.now`: reads the traced connections' senders (`conns`) and the
    /// traced ports (`ports`), and schedules the next tick while anything else is pending.
    pub(crate) fn on_sample(&mut self, k: &mut Kernel, conns: &impl crate::kernel::store::Store<crate::transport::Connection>, ports: &impl crate::kernel::store::Store<crate::net::port::PortState>) {
        let now = k.now;
        let Tracer { conns: traced_conns, samples, ports: traced_ports, port_samples, files, imbalance, .. } = self;
        for &c in traced_conns.iter() {
            let conn = &conns[c as usize];
            let s = ConnSample {
                at: now,
                conn: c,
                window: conn.cc.window(),
                in_flight: conn.in_flight,
                rate_bps: conn.cc.pacing_rate().map(|r| r.0),
                acked_bytes: conn.acked_payload,
            };
            match files {
                Some(f) => f.conn(&s),
                None => samples.push(s),
            }
        }
        for (i, &p) in traced_ports.iter().enumerate() {
            let ps = &ports[p as usize];
            let s = PortSample { at: now, port: p, data_bytes: ps.data_bytes.0, tx_bytes: ps.tx_bytes.0, paused: ps.paused, marks: ps.marks };
            match files {
                Some(f) => f.port(i, &s),
                None => port_samples.push(s),
            }
        }
        if let Some(m) = imbalance {
            m.tick(|p| (ports[p as usize].tx_bytes).0);
        }
        if !k.q.is_empty() {
            k.q.push(now + self.interval, EventKind::Sample, 0);
        }
    }
}
