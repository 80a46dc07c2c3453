//! The end of a parallel run: the partitions' replicas become one [`Sim`], each element taken
//! from the partition that owned it (ports, switches, NICs and tasks from their node's; a
//! connection's sender half from the sender's, its receiver half from the receiver's), and
//! counts kept in several places summed. The results are then collected from it as from a
//! serial run.

use super::plan::Plan;
use crate::workload::run::TaskState;
use crate::engine::Sim;
use crate::net::pfc::Ingress;
use crate::net::port_table::PortTable;
use crate::transport::hosts::{ConnTable, RxTable};

/// Merges the replicas (`sims[k]` ran partition `k`).
pub(super) fn merge(mut sims: Vec<Sim<PortTable, ConnTable, RxTable>>, plan: &Plan) -> Sim {
    let part = |node: u32| plan.node_part[node as usize] as usize;
    let fabric = std::sync::Arc::clone(&sims[0].net.fabric);
    let hosts = fabric.hosts;

    // Network: ports and switches from their owners; a PFC ingress record half from each end.
    let tables = sims.iter_mut().map(|s| std::mem::take(&mut s.net.ports)).collect();
    let ports = PortTable::merge(tables, |p| part(fabric.ports[p as usize].owner));
    // A connection's sender half from its sender's partition.
    let traffic = std::sync::Arc::clone(&sims[0].traffic);
    let tables = sims.iter_mut().map(|s| std::mem::take(&mut s.hosts.conns)).collect();
    let conns = ConnTable::merge(tables, |c| part(traffic.conns[c as usize].src));
    // Its receiver half from its receiver's.
    let tables = sims.iter_mut().map(|s| std::mem::take(&mut s.hosts.rx)).collect();
    let rx = RxTable::merge(tables, |c| part(traffic.conns[c as usize].dst));
    let mut rest = sims.split_off(1);
    let mut m = sims.pop().expect("partition 0").with_stores(|_| ports, |_| conns, |_| rx);
    for s in 0..m.net.switch_lb.len() {
        let owner = part(hosts + s as u32);
        if owner != 0 {
            let o = &mut rest[owner - 1];
            std::mem::swap(&mut m.net.switch_lb[s], &mut o.net.switch_lb[s]);
            std::mem::swap(&mut m.net.switch_rng[s], &mut o.net.switch_rng[s]);
            if m.net.pfc.on {
                std::mem::swap(&mut m.net.pfc.switches[s], &mut o.net.pfc.switches[s]);
            }
        }
    }
    if m.net.pfc.on {
        let copy = |m: &Sim, rest: &[Sim<PortTable, ConnTable, RxTable>], k: usize, up: usize| -> Ingress { if k == 0 { m.net.pfc.ingress[up] } else { rest[k - 1].net.pfc.ingress[up] } };
        for up in 0..m.net.pfc.ingress.len() {
            let down = part(m.net.port_peer[up]);
            let upstream = part(fabric.ports[up].owner);
            m.net.pfc.ingress[up] = Ingress::from_halves(&copy(&m, &rest, down, up), &copy(&m, &rest, upstream, up));
        }
        m.net.pfc.overflow_drops += rest.iter().map(|o| o.net.pfc.overflow_drops).sum::<u64>();
    }

    // Hosts: NICs from their host; a connection's lane (gate, pending messages), sender half and
    // sender's statistics from its sender, its receiver half from its receiver, path statistics summed.
    for h in 0..hosts {
        let owner = part(h);
        if owner != 0 {
            std::mem::swap(&mut m.hosts.nics[h as usize], &mut rest[owner - 1].hosts.nics[h as usize]);
        }
    }
    for c in 0..m.hosts.conns.len() {
        let ks = part(m.hosts.conns[c].src);
        if ks != 0 {
            std::mem::swap(&mut m.hosts.lanes[c], &mut rest[ks - 1].hosts.lanes[c]);
            m.hosts.stats[c] = rest[ks - 1].hosts.stats[c];
        }
        // What the network did to the connection's packets: every partition's switches count.
        for o in &rest {
            m.net.path_counts[c].absorb(&o.net.path_counts[c]);
        }
    }

    // The traffic graph: each task's entries from the partition that changed them.
    let init = TaskState::new(&m.traffic, m.tasks.logs_messages());
    for o in &rest {
        m.tasks.absorb(&o.tasks, &init);
    }

    // Run-wide counts.
    for o in rest {
        m.k.c.absorb(&o.k.c);
        m.hosts.acked.rtt.absorb(&o.hosts.acked.rtt);
        m.hosts.acked.payload += o.hosts.acked.payload;
        m.hosts.acked.last_at = m.hosts.acked.last_at.max(o.hosts.acked.last_at);
        m.k.pool.absorb(o.k.pool);
    }
    m.k.boundary = None;
    m
}
