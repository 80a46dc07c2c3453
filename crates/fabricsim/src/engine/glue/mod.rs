//! The glue between the event loop and the network and transport elements: `impl Sim` blocks
//! that move packets between the state structs of [`crate::net`] and [`crate::transport`], push
//! events and bump counters. One file per element; the elements' state, pure logic and scheme
//! traits stay in their own modules, which do not know about [`Sim`](super::Sim).

mod credit;
mod nic;
mod pfc;
mod port;
mod receiver;
mod sender;
mod switch;
