//! Dense integer identifiers. Every piece of state lives in a `Vec` indexed by one of these,
//! so the hot path never touches a map.

/// A node of the fabric: hosts come first (`0..hosts`), then switches.
pub type NodeId = u32;
/// An output port (one direction of a link) in the fabric-wide port array.
pub type PortId = u32;
/// A connection (one flow's sender and receiver state).
pub type ConnId = u32;
/// A handle into the packet pool.
pub type PktId = u32;
/// Per-packet path entropy (think UDP source port or IPv6 flow label).
pub type Entropy = u16;
