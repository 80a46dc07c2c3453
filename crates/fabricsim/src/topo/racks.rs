//! Rack-wired fabric of multi-GPU servers: the plain Clos that a rail-optimized fabric
//! ([`super::rail_optimized`]) is compared with. Every NIC of a server goes to the same leaf, a
//! top-of-rack switch, and consecutive servers fill a leaf; a scalable unit of
//! `servers_per_su` servers has `server.gpus` leaves of `servers_per_su` GPU ports each, so the
//! fabric has exactly the rail-optimized fabric's switches, cables and port counts (2 tiers, or
//! 3 with the units as pods) and differs only in which leaf each NIC is cabled to. Meta's RoCE
//! training clusters are cabled this way (Gangidi et al., "RDMA over Ethernet for Distributed
//! AI Training at Meta Scale", SIGCOMM 2024, §3: a rack training switch per rack of GPU
//! servers).
//!
//! So traffic between GPUs of servers under one leaf crosses that leaf only, whatever their
//! index in the server; traffic between GPUs under different leaves crosses a spine (and a core
//! between units in 3 tiers), where a rail-optimized fabric keeps same-index GPUs of a unit under
//! one leaf. A scale-up domain (`[topology.server] scale_up_gbps`) works as on the rail
//! fabrics; there are no rails to relay onto, so `cross_rail = "pxn"` is refused, and
//! `summary.json` has no per-rail breakdown (`rails`), as a leaf serves no one rail.

use super::rail_optimized::{Servers, Shape, Wiring};
use crate::error::Result;

/// The shape of a rack-wired fabric of `servers` (their `wiring` set to racks): as a
/// rail-optimized fabric's ([`Shape::new`]), `servers_per_su` also a multiple of `server.gpus`
/// so that a leaf holds whole servers; every count checked, errors naming its key.
pub fn shape(servers: Servers, ratio: u32, spines: Option<u32>, tiers: u32, cores: Option<u32>) -> Result<Shape> {
    Shape::new(Servers { wiring: Wiring::Racks, ..servers }, ratio, spines, tiers, cores)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ids::NodeId;
    use crate::topo::rail_optimized::{build, check_lines};
    use crate::topo::{Tier, TierLinks};
    use crate::units::{BitsPerSec, Time, US};

    fn servers(n: u32, g: u32, su: u32) -> Servers {
        Servers { servers: n, gpus_per_server: g, servers_per_su: su, scale_up: None, wiring: Wiring::Racks, planes: 1, dual_tor: false, port_choice: Default::default() }
    }

    fn links() -> TierLinks {
        let l = (BitsPerSec::from_gbps(400.0), US);
        TierLinks { host: l, tor_up: l, agg_up: l }
    }

    //= type=test
    //# 8 servers × 4 GPUs in units of 4 servers: the rail-optimized fabric's switches and
    //# cables, every GPU of a server on one leaf (a server per leaf; two with units of 8).
    #[test]
    fn a_servers_gpus_share_a_leaf_and_the_counts_are_the_rail_fabrics() {
        // 8 servers × 4 GPUs, units of 4 servers: 2 units × 4 leaves of 4 GPU ports, 1 server each.
        let racks = shape(servers(8, 4, 4), 1, None, 2, None).unwrap();
        let rails = Shape::new(Servers { wiring: Wiring::Rails, ..servers(8, 4, 4) }, 1, None, 2, None).unwrap();
        assert_eq!(racks.size(), rails.size());
        let f = build(racks, links(), Time::ZERO);
        assert_eq!(f.tier_counts(), vec![(Tier::Host, 32), (Tier::Tor, 8), (Tier::Agg, 4)]);
        let leaf = |g: u32| f.node_name(f.tor_of_host[g as usize]);
        assert_eq!((leaf(0), leaf(3), leaf(4), leaf(31)), ("tor0".into(), "tor0".into(), "tor1".into(), "tor7".into()));
        // In one server: one leaf (2 links); GPU 0 of servers 0 and 1: across a spine (4).
        assert_eq!(f.representative_path(NodeId(0), NodeId(3)).len(), 2);
        assert_eq!(f.representative_path(NodeId(0), NodeId(4)).len(), 4);
        assert!(f.description.contains("2-tier rack-wired") && f.description.contains("each server's GPUs on one leaf (a server per leaf)"), "{}", f.description);
        let lines = check_lines(&f).join("\n");
        assert!(lines.contains("racks         every GPU of a server on one leaf, a server per leaf (8 leaves"), "{lines}");
        // Two servers per leaf when a unit has 8 servers of 4 GPUs.
        let f = build(shape(servers(8, 4, 8), 1, None, 2, None).unwrap(), links(), Time::ZERO);
        assert_eq!(f.representative_path(NodeId(0), NodeId(7)).len(), 2);
        assert_eq!(f.representative_path(NodeId(0), NodeId(8)).len(), 4);
    }

    #[test]
    fn a_leaf_holds_whole_servers() {
        let e = shape(servers(12, 4, 6), 1, None, 2, None).unwrap_err().to_string();
        assert!(e.contains("topology.servers_per_su") && e.contains("nearest valid: 4 or 8"), "{e}");
    }
}
