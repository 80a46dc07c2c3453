//! Host NIC: one egress port shared round-robin by the host's connections that may send.
//!
//! A connection joins its host's ready ring when its congestion control and pacer allow a
//! packet; the NIC takes one packet from the connection at the head of the ring each time the
//! port is free (after any pending ACK/NACK, which have priority) and puts the connection back
//! at the tail if it may send again. Packets are created only at that moment, so the NIC holds
//! no data queue.
//!
//! This file holds the scheduler state; the engine drives it (`engine/dispatch.rs`): the ready ring
//! is a round robin over connections, and only the sender can say what a connection sends.

use crate::ids::{ConnId, PortId};
use std::collections::VecDeque;

/// Scheduler state of one host.
#[derive(Debug)]
pub struct HostState {
    /// The NIC's egress port.
    pub port: PortId,
    /// Connections that may send now, in round-robin order.
    pub ready: VecDeque<ConnId>,
}

impl HostState {
    /// A host whose NIC is `port`.
    pub fn new(port: PortId) -> Self {
        HostState { port, ready: VecDeque::new() }
    }
}

