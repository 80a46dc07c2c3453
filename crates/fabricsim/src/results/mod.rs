//! Results of a run: one row per connection (`flows.csv`; a flow workload has one connection
//! per flow, and under a message shaper one row per flow over its sub-QPs), one row per
//! collective instance (`ccts.csv`, collective workloads only), a summary (`summary.json`, with
//! FCT slowdown by flow size over a stationary window when `[results]` asks), and the
//! end-of-run invariant checks.

mod bounds;
mod by_size;
mod collectives;
mod csv;
mod fair_share;
mod flowlets;
mod floors;
mod flows;
pub(crate) mod imbalance;
mod invariants;
mod logs;
pub mod out_dir;
mod ports;
pub mod schema;
mod stats;
pub mod stream;
mod summary;
mod timeline;
mod training;

pub use by_size::{SizeBucket, WindowFigures};
pub use flowlets::FlowletSizes;
pub use collectives::{CctResult, CollectiveSummary};
pub use training::{check_lines as step_check_lines, GroupFigures, IterationFigures, TrainingSummary};
pub use flows::FlowResult;
pub use logs::{EventRow, MessageRow};
pub use out_dir::OutDir;
pub use ports::PortStats;
pub use stats::Stats;
pub use stream::Streamed;
pub use summary::{peak_rss_bytes, PacketCounts, Performance, PfcSummary, QueueProfile, Summary};

use crate::engine::Sim;
use crate::ids::{NodeId, PortId};
use crate::scenario::Setup;
use crate::units::Time;

/// Everything a run produced.
#[derive(Clone, Debug)]
pub struct Results {
    /// Per-flow rows (per connection; per application flow under a message shaper).
    pub flows: Vec<FlowResult>,
    /// Per-collective-instance rows (empty for flow workloads).
    pub ccts: Vec<CctResult>,
    /// Per-message rows (empty unless `run.message_log`).
    pub messages: Vec<MessageRow>,
    /// Sampled connection state (empty unless `run.trace_interval_us`, and when streamed).
    pub trace: Vec<crate::engine::trace::ConnSample>,
    /// Sampled port state (empty unless `run.trace_ports`, and when streamed).
    pub port_trace: Vec<crate::engine::trace::PortSample>,
    /// The trace files the run wrote while it ran instead of keeping their samples
    /// ([`crate::run_into`]); [`Results::write_to`] moves them into place.
    pub streamed: Vec<Streamed>,
    /// Logged drops and pauses (empty unless `run.event_log`).
    pub events: Vec<EventRow>,
    /// Logged ACKs (`run.ack_log_conns`): (time, connection, RTT, ECN echo).
    pub acks: Vec<(Time, u32, Time, bool)>,
    /// Logged packet events (`run.packet_log_conns`), in event order.
    pub packet_log: Vec<crate::engine::trace::PacketRecord>,
    /// Names (`"NODE-NODE"`) of the ports in `packet_log`.
    pub packet_log_links: std::collections::BTreeMap<u32, String>,
    /// Logged gate window decisions (`run.gate_log`): (time, connection, decision).
    pub gate_log: Vec<(Time, u32, crate::transport::gate::WindowUpdate)>,
    /// Per-port statistics (`run.port_stats`), in port order; empty when off.
    pub ports: Vec<PortStats>,
    /// Per flowlet gap θ (`run.flowlet_gaps_us`), the sorted flowlet sizes (wire bytes).
    pub flowlets: Vec<(Time, Vec<u64>)>,
    /// Names (`"NODE-NODE"`) of the traced ports.
    pub port_names: std::collections::BTreeMap<u32, String>,
    /// Whether `timeline.json` is written (`run.timeline`).
    pub timeline: bool,
    /// Summary.
    pub summary: Summary,
    /// `resolved_scenario.toml`: the resolved scenario as a file that reruns this run
    /// ([`Setup::rerun_toml`]).
    pub scenario_toml: String,
}

use crate::units::ps_to_us as us;

/// Whether the flows get a fair-share ideal (`results.fair_share`): never for collectives; by
/// default only when every flow is due at the same time, where the fluid model is cheap (one
/// water-filling per distinct finish) and the idle ideal misleads most.
fn wants_fair_share(sim: &Sim, setup: &Setup, plans: &[flows::ConnPlan]) -> bool {
    use crate::scenario::FairShare;
    let batch = || {
        let mut dues = plans.iter().map(|p| p.due).filter(|&d| d != Time::MAX);
        let first = dues.next();
        dues.all(|d| Some(d) == first)
    };
    sim.traffic.instances.is_empty()
        && match setup.results.fair_share {
            FairShare::Off => false,
            FairShare::On => true,
            FairShare::Auto => batch(),
        }
}

/// `t` unless it is `Time::MAX` (never happened).
fn known(t: Time) -> Option<Time> {
    (t != Time::MAX).then_some(t)
}

/// Gathers results after [`Sim::run`] (the samples of a streamed trace are in their files, not
/// here: see [`crate::run_into`]).
pub fn collect(sim: &Sim, setup: &Setup, wall_seconds: f64) -> Results {
    let plan = flows::plan(sim);
    let (mut flows, flow_plan) = flows::app_flows(sim, flows::rows(sim, &plan), &plan);
    if wants_fair_share(sim, setup, &flow_plan) {
        let f = &sim.net.fabric;
        let fair = fair_share::fair_ideal_fcts(&flows, &flow_plan, sim.hosts.tp.header, f.hosts as usize, |h| bounds::link_rate(sim, NodeId(h), false), |h| bounds::link_rate(sim, NodeId(h), true));
        for (row, ideal) in flows.iter_mut().zip(fair) {
            row.fair_ideal_fct = Some(ideal);
        }
    }
    let ccts = collectives::rows(sim);
    let flowlets = sim.tracer.flowlets.as_ref().map(|m| m.sizes()).unwrap_or_default();
    let mut summary = summary::assemble(sim, setup, &flows, summary::Plans { flows: &flow_plan, conns: &plan }, &ccts, wall_seconds);
    summary.flowlets = sim.tracer.flowlets.is_some().then(|| flowlets::figures(&flowlets));
    summary.training = training::summary(sim, &ccts);
    Results {
        flows,
        ccts,
        messages: logs::messages(sim, setup),
        trace: sim.tracer.samples.clone(),
        port_trace: sim.tracer.port_samples.clone(),
        streamed: Vec::new(),
        events: logs::events(sim),
        acks: sim.tracer.acks.clone(),
        packet_log: sim.k.log.packets.clone(),
        packet_log_links: sim.k.log.packets.iter().filter(|r| r.port != crate::engine::trace::NO_PORT).map(|r| (r.port, sim.net.fabric.link_name(PortId(r.port)))).collect(),
        gate_log: sim.tracer.gate_updates.clone(),
        ports: if setup.scenario.run.port_stats { ports::rows(sim) } else { Vec::new() },
        flowlets,
        port_names: sim.tracer.ports.iter().map(|&p| (p, sim.net.fabric.link_name(PortId(p)))).collect(),
        timeline: setup.scenario.run.timeline,
        summary,
        scenario_toml: setup.rerun_toml(),
    }
}
