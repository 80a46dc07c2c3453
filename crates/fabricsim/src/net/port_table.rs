//! The output ports' store ([`crate::kernel::store`]): every port's (`Vec<PortState>`, a serial
//! run's) or a partition's ([`PortTable`]). An output port is only ever written and read by its
//! owner's partition (a packet that crosses to another partition arrives there as an event naming
//! the port it crossed, but the arrival reads the cable's far end from the network's `port_peer`,
//! not the port's state), so a partition holds its own nodes' ports only — at 8192 hosts the
//! others' would be 9.4 MB of copies in every partition.

use super::port::PortState;
use crate::kernel::store::{Partial, Store};

/// What the network needs of its ports' store.
pub trait PortStore: Store<PortState> {}

impl<S: Store<PortState>> PortStore for S {}

/// A partition's ports: its own nodes'.
pub type PortTable = Partial<PortState>;
