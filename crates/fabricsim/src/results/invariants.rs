//! End-of-run self-checks. A violation is a simulator or scheme bug; the run reports it as an
//! error rather than returning numbers nobody should trust.

use crate::engine::Sim;
use crate::scenario::Setup;

/// Returns one message per violated invariant.
pub fn check(sim: &Sim, setup: &Setup) -> Vec<String> {
    let mut v = Vec::new();
    let c = &sim.c;
    // Every finished flow delivered each payload byte exactly once (duplicates are discarded
    // and counted, never delivered twice).
    for (i, conn) in sim.conns.iter().enumerate() {
        if conn.finish.is_some() && conn.rcv_bytes != conn.size {
            v.push(format!("flow {i} finished but its receiver got {} of {} bytes", conn.rcv_bytes, conn.size));
        }
        if conn.rcv_bytes > conn.size {
            v.push(format!("flow {i} delivered {} bytes, more than its {} bytes", conn.rcv_bytes, conn.size));
        }
        if conn.finish.is_some() && conn.in_flight != 0 {
            v.push(format!("flow {i} finished with {} bytes still counted in flight", conn.in_flight));
        }
    }
    // No data queue ever held more than its buffer.
    let buffer = setup.qdisc.buffer_bytes;
    for (p, ps) in sim.ports.iter().enumerate() {
        if ps.max_data_bytes > buffer {
            v.push(format!("port {p} held {} data bytes, above its {} byte buffer", ps.max_data_bytes, buffer));
        }
    }
    if sim.completed as usize == sim.conns.len() && !sim.stopped_early {
        // Conservation: every data packet sent arrived whole, was trimmed or was dropped; every
        // trimmed header became a NACK or was dropped; every ACK/NACK arrived or was dropped.
        if c.data_sent != c.data_arrived + c.data_trimmed + c.data_dropped {
            v.push(format!(
                "data packets not conserved: sent {} != arrived {} + trimmed {} + dropped {}",
                c.data_sent, c.data_arrived, c.data_trimmed, c.data_dropped
            ));
        }
        if c.data_trimmed != c.nacks_sent + c.headers_dropped {
            v.push(format!("trimmed headers not conserved: {} trimmed != {} NACKed + {} dropped", c.data_trimmed, c.nacks_sent, c.headers_dropped));
        }
        if c.acks_sent + c.nacks_sent != c.acks_arrived + c.nacks_arrived + c.control_dropped {
            v.push(format!(
                "control packets not conserved: {} ACKs + {} NACKs sent != {} + {} arrived + {} dropped",
                c.acks_sent, c.nacks_sent, c.acks_arrived, c.nacks_arrived, c.control_dropped
            ));
        }
        if sim.pool.live() != 0 {
            v.push(format!("{} packets still in the network after every flow finished", sim.pool.live()));
        }
    } else if !sim.stopped_early {
        v.push(format!(
            "{} of {} flows never finished and no event was left to run (deadlock)",
            sim.conns.len() - sim.completed as usize,
            sim.conns.len()
        ));
    }
    v
}
