//! The end of a parallel run: the partitions' replicas become one [`Sim`], each element taken
//! from the partition that owned it (ports, switches, NICs and tasks from their node's; a
//! connection's sender half from the sender's, its receiver half from the receiver's), and
//! counts kept in several places summed. The results are then collected from it as from a
//! serial run.

use super::plan::Plan;
use crate::engine::build::Owners;
use crate::engine::Sim;
use crate::ids::NodeId;
use crate::kernel::store::{Parted, Partial};
use crate::net::pfc::Ingress;
use crate::net::Network;
use crate::transport::hosts::Hosts;
use crate::workload::run::TaskState;

/// Merges the replicas (`sims[k]` ran partition `k`).
pub(super) fn merge(mut sims: Vec<Sim<Parted>>, plan: &Plan) -> Sim {
    let part = |node: NodeId| plan.node_part[node] as usize;
    let fabric = std::sync::Arc::clone(&sims[0].net.fabric);
    let traffic = std::sync::Arc::clone(&sims[0].traffic);
    // Each array from its elements' owners (`engine/build.rs`), a connection's record from
    // its sender's partition.
    let owner = Owners { fabric: &fabric, traffic: &traffic, of_node: &part };
    macro_rules! take {
        ($($field:ident).+, $owner:expr) => {
            Partial::merge(sims.iter_mut().map(|s| std::mem::take(&mut s.$($field).+)).collect(), $owner)
        };
    }
    let ports = take!(net.ports, |p| owner.port(p));
    let switch_lb = take!(net.switch_lb, |s| owner.switch(s));
    let switch_rng = take!(net.switch_rng, |s| owner.switch(s));
    let nics = take!(hosts.nics, |h| owner.host(h));
    let conns = take!(hosts.conns, |c| owner.sender(c));
    let stats = take!(hosts.stats, |c| owner.sender(c));
    let lanes = take!(hosts.lanes, |c| owner.sender(c));
    let rx = take!(hosts.rx, |c| owner.receiver(c));
    let mut rest = sims.split_off(1);
    let first = sims.pop().expect("partition 0");
    let mut m = first.map_layers(|net, h| {
        let Network { fabric, routes, hosts, ports: _, port_peer, switch_lb: _, switch_rng: _, switch_observes, any_observer, route_tor, pfc, qdisc, class, path_counts } = net;
        let Hosts { nics: _, conns: _, stats: _, rx: _, lanes: _, credits, tp, drop_plan, acked, sprayed } = h;
        (
            Network { fabric, routes, hosts, ports, port_peer, switch_lb, switch_rng, switch_observes, any_observer, route_tor, pfc, qdisc, class, path_counts },
            Hosts { nics, conns, stats, rx, lanes, credits, tp, drop_plan, acked, sprayed },
        )
    });
    // PFC: a switch's buffer account from its owner; an ingress record half from each end.
    if m.net.pfc.on {
        for s in 0..m.net.pfc.switches.len() {
            let k = owner.switch(s as u32);
            if k != 0 {
                std::mem::swap(&mut m.net.pfc.switches[s], &mut rest[k - 1].net.pfc.switches[s]);
            }
        }
        let copy = |m: &Sim, rest: &[Sim<Parted>], k: usize, up: usize| -> Ingress { if k == 0 { m.net.pfc.ingress[up] } else { rest[k - 1].net.pfc.ingress[up] } };
        for up in 0..m.net.pfc.ingress.len() {
            let down = part(m.net.port_peer[up]);
            let upstream = owner.port(up as u32);
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
