//! The simulation kernel: what every element on a packet's path shares, below the elements
//! themselves. Packets and their pool (their kinds declared in one table), the per-port packet
//! queues threaded through the pool, the INT stack a packet may carry, the event queue and its
//! event kinds, the run's counters and the packet and drop logs.
//!
//! The network's elements (`net`: switches, ports, PFC) and the hosts' (`transport`) are
//! written against these, so that an element's handler can be given exactly the part of the
//! simulation it may touch (`net::ctx::NetCtx`) rather than the whole engine.

mod buckets;
pub mod counters;
pub mod packet;
pub mod packet_log;
pub mod packet_queue;
pub mod queue;
pub mod telemetry;

pub use counters::Counters;
