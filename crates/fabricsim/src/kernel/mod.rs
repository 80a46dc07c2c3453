//! The simulation kernel: what every element on a packet's path shares, below the elements
//! themselves. Packets and their pool (their kinds declared in one table), the per-port packet
//! queues threaded through the pool, the INT stack a packet may carry, the event queue and its
//! event kinds, the run's counters and the packet and drop logs.
//!
//! [`Kernel`] bundles them: it is the narrow context an element's handler gets (the network's:
//! `net/switch.rs`, `net/port.rs`, `net/pfc.rs`) instead of the whole engine. One struct, so a
//! handler reaches each of them at a fixed offset from one pointer, as the engine does.

mod buckets;
pub mod counters;
pub mod packet;
pub mod packet_log;
pub mod packet_queue;
pub mod queue;
pub mod store;
pub mod telemetry;

pub use counters::Counters;

use crate::ids::{ConnId, NodeId, PortId};
use crate::units::Time;
use packet::{Packet, PacketPool};
use packet_log::PacketLog;
use queue::EventQueue;
use telemetry::IntStack;

/// What every element's handler may touch besides its own state: the clock, the event queue,
/// the packet pool, the run's counters, the packet log, what it leaves for the hosts, and the
/// partition boundary of a parallel run.
pub struct Kernel {
    /// Current simulated time.
    pub now: Time,
    /// The event queue.
    pub q: EventQueue,
    /// The packet pool.
    pub pool: PacketPool,
    /// The run's counters.
    pub c: Counters,
    /// The packet and drop logs.
    pub log: PacketLog,
    /// What the network's handlers left for the hosts, delivered as each handler returns.
    pub fx: HostEffects,
    /// The partition boundary, in a parallel run: packets and frames for a node of another
    /// partition leave through it instead of the event queue.
    pub boundary: Option<Box<dyn Boundary>>,
}

impl Kernel {
    /// A kernel at time 0 with the given queue and pool, nothing counted or logged.
    pub fn new(q: EventQueue, pool: PacketPool, log: PacketLog) -> Self {
        Kernel { now: Time::ZERO, q, pool, c: Counters::default(), log, fx: HostEffects::default(), boundary: None }
    }
}

/// The edge of this thread's share of the fabric in a parallel run (`engine::parallel`).
pub trait Boundary: std::any::Any + Send {
    /// Whether node `node` belongs to another partition.
    fn remote(&self, node: NodeId) -> bool;
    /// Hands packet `pkt` (and its INT stack) to the partition of node `node`, where it arrives
    /// at `at`.
    fn send_packet(&mut self, node: NodeId, at: Time, pkt: &Packet, int: Option<&IntStack>);
    /// Hands a PFC frame (PAUSE if `pause`, else RESUME) for upstream port `port`, owned by node
    /// `node`, to that node's partition, where it acts at `at`.
    fn send_pfc_frame(&mut self, node: NodeId, at: Time, port: PortId, pause: bool);
    /// The boundary as `Any`, for the engine to reach its own partition type.
    fn as_any(&self) -> &dyn std::any::Any;
    /// The boundary as `Any`, mutably.
    fn as_any_mut(&mut self) -> &mut dyn std::any::Any;
}

/// What the network's handlers leave for the hosts: delivered by the engine as soon as the
/// handler returns, before any host acts again.
#[derive(Debug, Default)]
pub struct HostEffects {
    /// Credit grants (pull packets) lost in the network: (connection, credits granted). The
    /// connection's receiver may have to grant afresh (`transport::credit`).
    pub lost_pulls: Vec<(ConnId, u32)>,
}

impl HostEffects {
    /// Whether there is nothing to deliver.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.lost_pulls.is_empty()
    }
}
