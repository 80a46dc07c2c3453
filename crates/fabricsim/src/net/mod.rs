//! Network elements: switches (`switch`), output ports with their queue discipline (`port`,
//! `qdisc`), switch path selection (`switch_lb`), PFC (`pfc`), lossy cables and host NIC
//! schedulers. Each element's state and its event handlers live in its own file; the handlers
//! are methods of [`Network`], which owns the arrays, and are given the narrow
//! [`Kernel`](crate::kernel::Kernel) (clock, event queue, packet pool, counters, packet log,
//! partition boundary) rather than the engine. The engine keeps the loop and dispatches to them.

pub mod path_counts;
pub mod flaky;
pub mod wire_loss;
// Packets, their queues and INT stacks are the kernel's; they keep their paths here.
pub use crate::kernel::{packet, packet_queue, telemetry};
pub mod nic;
pub mod pfc;
pub mod port;
pub mod qdisc;
pub mod switch;
pub mod switch_lb;

use crate::ids::NodeId;
use crate::rng::Rng;
use crate::topo::Fabric;
use crate::kernel::store::{Layout, Whole};

/// Everything the network owns: the fabric, every output port with its queues, each switch's
/// path selector and random stream, the PFC buffer accounting and the queue profiles. Arrays
/// are indexed by port or switch id. The layout `L` says whether the ports and the switches'
/// state are every one's (a serial run's) or one partition's ([`crate::kernel::store`]).
pub struct Network<L: Layout = Whole> {
    /// The topology: read-only after build (link state is kept in `ports`), and shared with the
    /// setup and every partition of a parallel run; a routing re-convergence copies it.
    pub fabric: std::sync::Arc<Fabric>,
    /// The fabric's routes and host count, at hand for the per-packet path (one load fewer
    /// than through the shared fabric; the table's arrays are shared, not copied).
    pub routes: crate::topo::routing::RouteTable,
    /// The first switch's id, which is the number of hosts (nodes `0..hosts`; switches follow).
    pub hosts: NodeId,
    /// The output ports (every one, or a partition's: its own nodes').
    pub ports: L::Of<port::PortState>,
    /// Far-end node of each port (the fabric's `port_peer`, at hand for the hot path).
    pub port_peer: std::sync::Arc<[NodeId]>,
    /// Path selector of each switch (switch `s` is node `hosts + s`; a partition's own).
    pub switch_lb: L::Of<switch_lb::AnySwitchLb>,
    /// Random stream of each switch's selector (`"switch_lb"`).
    pub switch_rng: L::Of<Rng>,
    /// Whether switch `s`'s selector sees every packet it forwards
    /// ([`switch_lb::SwitchLb::observes_all`], asked once at build).
    pub switch_observes: Vec<bool>,
    /// Whether any switch does (one test per hop keeps the common case free).
    pub any_observer: bool,
    /// The ToR a packet addressed to node `n` is routed toward (the fabric's `route_tor`, at
    /// hand for the hot path).
    pub route_tor: std::sync::Arc<[NodeId]>,
    /// PFC buffer accounting (off unless `switch.pfc.enabled`).
    pub pfc: pfc::PfcState,
    /// Queue profiles; each port holds its index (`PortState::qdisc`).
    pub qdisc: qdisc::QdiscTable,
    /// The port class each packet kind travels in (`transport.ack_class`).
    pub class: packet::ClassTable,
    /// What the network did to each connection's packets (drops, trims, re-routes), by
    /// connection id.
    pub path_counts: Vec<path_counts::PathCounts>,
}

