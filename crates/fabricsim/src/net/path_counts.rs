//! What the network owns about connections: [`PathCounts`], what it did to each connection's
//! packets anywhere on their paths. The network's handlers get the [`Kernel`](crate::kernel::Kernel)
//! as their narrow context; they never write into a host's or a connection's arrays: what a
//! host must learn of (a lost credit grant) they leave in the kernel's
//! [`HostEffects`](crate::kernel::HostEffects) for the engine to deliver.

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
