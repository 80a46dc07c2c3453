//! What a network element's handler is given: the narrow context of the switches, their ports and
//! PFC (`switch.rs`, `port.rs`, `pfc.rs`), instead of the whole simulation.
//!
//! A handler sees the clock, the event queue, the packet pool, the run's counters and the packet
//! log, and the partition boundary when the fabric is split between threads; its own state is
//! the [`Network`](super::Network) it is a method of. It never writes into a host's or a
//! connection's arrays: what the network does to a connection's packets it counts in its own
//! [`PathCounts`], and what a host must learn of (a lost credit grant) it leaves in
//! [`HostEffects`] for the engine to deliver when the handler returns.

use crate::ids::{ConnId, NodeId, PortId};
use crate::kernel::packet::{Packet, PacketPool};
use crate::kernel::packet_log::PacketLog;
use crate::kernel::queue::EventQueue;
use crate::kernel::telemetry::IntStack;
use crate::kernel::Counters;
use crate::units::Time;

/// The part of the simulation a network handler may touch besides the network itself.
pub struct NetCtx<'a> {
    /// Current simulated time.
    pub now: Time,
    /// The event queue (a port's `PortFree`, a packet's `Arrive`, a PFC frame).
    pub q: &'a mut EventQueue,
    /// The packet pool.
    pub pool: &'a mut PacketPool,
    /// The run's counters.
    pub c: &'a mut Counters,
    /// The packet and drop logs.
    pub log: &'a mut PacketLog,
    /// The partition boundary, in a parallel run: packets and frames for a node of another
    /// partition leave through it instead of the event queue.
    pub boundary: Option<&'a mut dyn Boundary>,
    /// What the hosts must learn of when the handler returns.
    pub fx: &'a mut HostEffects,
}

impl NetCtx<'_> {
    /// Whether node `node` lies across the partition boundary (another partition's node).
    #[inline]
    pub fn is_remote(&self, node: NodeId) -> bool {
        self.boundary.as_deref().is_some_and(|b| b.remote(node))
    }
}

/// The edge of this thread's share of the fabric in a parallel run (`engine::parallel`).
pub trait Boundary {
    /// Whether node `node` belongs to another partition.
    fn remote(&self, node: NodeId) -> bool;
    /// Hands packet `pkt` (and its INT stack) to the partition of node `node`, where it arrives
    /// at `at`.
    fn send_packet(&mut self, node: NodeId, at: Time, pkt: &Packet, int: Option<&IntStack>);
    /// Hands a PFC frame (PAUSE if `pause`, else RESUME) for upstream port `port`, owned by node
    /// `node`, to that node's partition, where it acts at `at`.
    fn send_pfc_frame(&mut self, node: NodeId, at: Time, port: PortId, pause: bool);
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

/// What the network did to one connection's packets, anywhere on its paths: owned by the
/// network, which alone writes it (a parallel run adds its partitions' counts).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PathCounts {
    /// Packets of any kind (data, ACKs, NACKs, ...) dropped.
    pub drops: u32,
    /// Of those, data packets (not trimmed headers) dropped.
    pub data_drops: u32,
    /// Data packets trimmed to headers.
    pub trims: u32,
    /// Data packets a switch-side selector moved off their usual next hop, per switch hop.
    pub reroutes: u32,
}

impl PathCounts {
    /// Adds another partition's counts for the same connection.
    pub fn absorb(&mut self, o: &PathCounts) {
        // Destructured, so that a new count cannot be forgotten here.
        let PathCounts { drops, data_drops, trims, reroutes } = *o;
        self.drops += drops;
        self.data_drops += data_drops;
        self.trims += trims;
        self.reroutes += reroutes;
    }
}
