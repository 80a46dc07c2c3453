//! The end of a parallel run: the partitions' replicas become one [`Sim`], each element taken
//! from the partition that owned it (ports, switches, NICs and tasks from their node's; a
//! connection's sender half from the sender's, its receiver half from the receiver's), and
//! counts kept in several places summed. The results are then collected from it as from a
//! serial run.

use super::plan::Plan;
use crate::engine::Sim;
use crate::kernel::store::{Parted, Partial};
use crate::net::pfc::Ingress;
use crate::net::Network;
use crate::transport::hosts::Hosts;
use crate::workload::run::TaskState;

/// Merges the replicas (`sims[k]` ran partition `k`).
pub(super) fn merge(mut sims: Vec<Sim<Parted>>, plan: &Plan) -> Sim {
    let part = |node: u32| plan.node_part[node as usize] as usize;
    let fabric = std::sync::Arc::clone(&sims[0].net.fabric);
    let hosts = fabric.hosts;
    let traffic = std::sync::Arc::clone(&sims[0].traffic);
    let sender = |c: u32| part(traffic.conns[c as usize].src);
    let receiver = |c: u32| part(traffic.conns[c as usize].dst);
    // Each array from its elements' owners: a port from its node's partition, a switch's
    // selector and stream from the switch's, a NIC from its host's, a connection's record,
    // lane and counters from its sender's, its receiver half from its receiver's.
    macro_rules! take {
        ($($field:ident).+, $owner:expr) => {
            Partial::merge(sims.iter_mut().map(|s| std::mem::take(&mut s.$($field).+)).collect(), $owner)
        };
    }
    let ports = take!(net.ports, |p| part(fabric.ports[p as usize].owner));
    let switch_lb = take!(net.switch_lb, |s| part(hosts + s));
    let switch_rng = take!(net.switch_rng, |s| part(hosts + s));
    let nics = take!(hosts.nics, |h| part(h));
    let conns = take!(hosts.conns, sender);
    let stats = take!(hosts.stats, sender);
    let lanes = take!(hosts.lanes, sender);
    let rx = take!(hosts.rx, receiver);
    let mut rest = sims.split_off(1);
    let first = sims.pop().expect("partition 0");
    let mut m = first.map_layers(|net, h| {
        let Network { fabric, routes, hosts, ports: _, port_peer, switch_lb: _, switch_rng: _, switch_observes, any_observer, route_tor, pfc, qdisc, class, path_counts } = net;
        let Hosts { nics: _, conns: _, stats: _, rx: _, lanes: _, credits, tp, drop_plan, acked } = h;
        (
            Network { fabric, routes, hosts, ports, port_peer, switch_lb, switch_rng, switch_observes, any_observer, route_tor, pfc, qdisc, class, path_counts },
            Hosts { nics, conns, stats, rx, lanes, credits, tp, drop_plan, acked },
        )
    });
    if m.net.pfc.on {
        for s in 0..m.net.pfc.switches.len() {
            let owner = part(hosts + s as u32);
            if owner != 0 {
                std::mem::swap(&mut m.net.pfc.switches[s], &mut rest[owner - 1].net.pfc.switches[s]);
            }
        }
    }
    if m.net.pfc.on {
        let copy = |m: &Sim, rest: &[Sim<Parted>], k: usize, up: usize| -> Ingress { if k == 0 { m.net.pfc.ingress[up] } else { rest[k - 1].net.pfc.ingress[up] } };
        for up in 0..m.net.pfc.ingress.len() {
            let down = part(m.net.port_peer[up]);
            let upstream = part(fabric.ports[up].owner);
            m.net.pfc.ingress[up] = Ingress::from_halves(&copy(&m, &rest, down, up), &copy(&m, &rest, upstream, up));
        }
        m.net.pfc.overflow_drops += rest.iter().map(|o| o.net.pfc.overflow_drops).sum::<u64>();
    }

    // What the network did to a connection's packets: every partition's switches count.
    for c in 0..m.hosts.conns.len() {
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
