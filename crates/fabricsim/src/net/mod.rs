//! Network elements: packets, output ports with their queue discipline, switch path selection
//! (`switch_lb`), PFC accounting and host NICs. This module holds their state and pure logic;
//! the event handlers that drive them (forwarding, serialization, PFC frames) are `impl Sim`
//! blocks in `engine/glue/`.

pub mod nic;
pub mod packet;
pub mod pfc;
pub mod port;
pub mod qdisc;
pub mod switch_lb;
