//! Rail-only fabric (Wang, Ghobadi, Shakeri, Zhang, Hasani, "Rail-only: A Low-Cost
//! High-Performance Network for Training LLMs with Trillion Parameters", arXiv 2307.12169,
//! 2023): the rail-optimized wiring ([`super::rail_optimized`]) without the spine layer that
//! joins the rails. Each rail is a network of its own, GPU r of every server on rail r's
//! network, and the rails meet only inside the servers, in their scale-up (HB) domain.
//!
//! Each rail's network is one switch when the cluster is one scalable unit (the unit's leaf r is
//! the rail's switch: no spine at all), and otherwise a 2-tier Clos of its own: leaf r of every
//! unit linked to a group of rail spines that only rail r uses (the paper's per-rail Clos when a
//! rail outgrows one switch's radix). `servers_per_su` is then the leaf's GPU ports; the
//! `oversubscription` and `spines` keys size each rail's spine group as they size a
//! rail-optimized fabric's spines.
//!
//! Routing: GPUs of one rail reach each other over their rail; GPUs of one server over the
//! scale-up domain (`[topology.server] scale_up_gbps`); a GPU reaches a GPU on another rail of
//! another server by forwarding, as the paper proposes for all-to-all traffic: the data crosses
//! the source server's scale-up domain to the GPU on the destination's rail, then that rail
//! ([`super::rail_optimized::Servers::pxn_relay`]; the same mechanism as a rail-optimized
//! fabric's `cross_rail = "pxn"`, here the only way and so the default). Without a scale-up
//! domain only rail-aligned jobs have paths; a job that needs another is refused, naming its
//! first such connection.

use super::rail_optimized::{Servers, Shape};
use crate::error::{Error, Result};

/// The shape of a rail-only fabric of `servers`: one switch per rail when they are one scalable
/// unit (no spines; `ratio` must be 1:1 and `spines` unset, as there is nothing above the
/// leaves), else leaf r of every unit under rail r's own group of spines (`ratio`:1 at the
/// leaves, `spines` in all, default `server.gpus × servers_per_su / ratio`); every count checked,
/// errors naming its key.
pub fn shape(servers: Servers, ratio: u32, spines: Option<u32>) -> Result<Shape> {
    let shape = Shape::grouped(servers, ratio, spines, 2, None, true)?;
    if servers.sus() > 1 {
        return Ok(shape);
    }
    let why = "one scalable unit (servers = servers_per_su): each rail is one switch, its unit's leaf, with nothing above it";
    if let Some(s) = spines {
        return Err(Error::invalid("topology.spines", format!("{s}: a rail-only fabric of {why}; allowed: unset")));
    }
    if ratio != 1 {
        return Err(Error::invalid("topology.oversubscription", format!("{ratio}:1: a rail-only fabric of {why}; allowed: \"1:1\"")));
    }
    Ok(Shape { spines: 0, links_per_spine: 0, ..shape })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ids::NodeId;
    use crate::topo::rail_optimized::{build, check_lines};
    use crate::topo::{Tier, TierLinks};
    use crate::units::{BitsPerSec, Time, US};

    fn servers(n: u32, g: u32, su: u32) -> Servers {
        Servers { servers: n, gpus_per_server: g, servers_per_su: su, scale_up: None, wiring: crate::topo::rail_optimized::Wiring::Rails, planes: 1, dual_tor: false, port_choice: Default::default() }
    }

    fn links() -> TierLinks {
        let l = (BitsPerSec::from_gbps(400.0), US);
        TierLinks { host: l, tor_up: l, agg_up: l }
    }

    //= type=test
    //# One unit: a switch per rail and nothing else (4 servers × 4 GPUs: 16 GPUs, 4 switches,
    //# 16 cables); GPUs of one rail are two links apart, GPUs of two rails have no path.
    #[test]
    fn one_unit_is_a_switch_per_rail() {
        let shape = shape(servers(4, 4, 4), 1, None).unwrap();
        let f = build(shape, links(), Time::ZERO);
        assert_eq!(f.size(), shape.size());
        assert_eq!(f.tier_counts(), vec![(Tier::Host, 16), (Tier::Tor, 4)]);
        assert_eq!(f.ports.len(), 32);
        assert_eq!(f.representative_path(NodeId(1), NodeId(13)).len(), 2);
        assert!(!f.reachable(NodeId(0), NodeId(1)));
        assert!(f.description.contains("rail-only") && f.description.contains("one switch per rail"), "{}", f.description);
        let lines = check_lines(&f).join("\n");
        assert!(lines.contains("separate networks, each one switch: bisection 0.8 Tb/s within each"), "{lines}");
    }

    //= type=test
    //# Several units: each rail is a 2-tier Clos of its own (leaf r of every unit to rail r's
    //# spines), exactly the per-rail groups of a rail-optimized fabric.
    #[test]
    fn several_units_give_each_rail_its_own_spines() {
        let s = shape(servers(8, 4, 4), 2, None).unwrap();
        assert_eq!((s.spines, s.links_per_spine, s.per_rail), (8, 1, true));
        let f = build(s, links(), Time::ZERO);
        assert_eq!(f.tier_counts(), vec![(Tier::Host, 32), (Tier::Tor, 8), (Tier::Agg, 8)]);
        assert_eq!(f.representative_path(NodeId(0), NodeId(16)).len(), 4);
        assert!(!f.reachable(NodeId(0), NodeId(17)));
    }

    #[test]
    fn keys_without_meaning_on_one_unit_are_refused() {
        let e = shape(servers(4, 4, 4), 1, Some(4)).unwrap_err().to_string();
        assert!(e.contains("topology.spines") && e.contains("allowed: unset"), "{e}");
        let e = shape(servers(4, 4, 4), 2, None).unwrap_err().to_string();
        assert!(e.contains("topology.oversubscription") && e.contains("allowed: \"1:1\""), "{e}");
        let e = shape(servers(6, 4, 4), 1, None).unwrap_err().to_string();
        assert!(e.contains("topology.servers") && e.contains("nearest valid: 4 or 8"), "{e}");
    }
}
