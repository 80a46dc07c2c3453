//! The glue between the event loop and the host-side elements: `impl Sim` blocks that move
//! packets between the state structs of [`crate::transport`] and the NIC ports, push events and
//! bump counters. One file per element; the elements' state, pure logic and scheme traits stay
//! in their own modules, which do not know about [`Sim`](super::Sim). (The network's elements
//! have left: they own their handlers in [`crate::net`].)

mod credit;
mod receiver;
mod sender;
