//! Network elements: packets, output ports with their queue discipline, switches with their
//! path selection (`switch_lb`) and host NICs.

pub mod nic;
pub mod packet;
pub mod pfc;
pub mod port;
pub mod qdisc;
pub mod switch;
pub mod switch_lb;
