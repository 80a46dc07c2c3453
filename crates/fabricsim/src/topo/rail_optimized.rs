//! 2-tier rail-optimized fabric of multi-GPU servers, as AI training clusters are cabled
//! (NVIDIA's DGX SuperPOD reference architecture; the rail-only proposal of Wang et al., 2023,
//! §2 describes the same "rail" wiring): a server holds `gpus` GPUs, each with its own NIC; a
//! scalable unit (SU) of `servers_per_su` servers has one leaf per rail, and leaf r of an SU
//! links to the NIC of GPU r of every server of that SU. Every leaf has the same number of
//! uplinks, spread over the spines, and every spine reaches every leaf.
//!
//! So traffic between GPUs of the same rail inside an SU crosses one leaf; between GPUs of the
//! same rail in different SUs it crosses leaf, spine, leaf; between GPUs of different rails (the
//! same server included) it crosses a spine too. What is not modelled yet: the server's scale-up
//! domain (NVLink/NVSwitch class), which on real servers carries the traffic between GPUs of a
//! server and moves cross-rail data onto the right rail before it leaves (PXN), per-rail spine
//! groups and a third tier. A GPU is a host of the fabric: GPU r of server s is host
//! `s × gpus + r`, named `gpu<i>`; leaf r of SU u is ToR `u × gpus + r`, named `tor<i>` as on
//! every other fabric (so are its port classes and `[switch.lb]` tier keys).
//!
//! Oversubscription r:1 keeps `servers_per_su` GPUs under each leaf and gives it
//! `servers_per_su / r` uplinks: `spines` spines with `servers_per_su / (r × spines)` cables each
//! (by default one cable to each of `servers_per_su / r` spines).

use super::{Fabric, FabricBuilder, FabricSize, Tier, TierLinks};
use crate::error::{Error, Result};
use crate::ids::NodeId;
use crate::units::Time;

/// How a fabric's hosts are grouped into multi-GPU servers (rail-optimized fabrics): host
/// `s × gpus_per_server + r` is GPU `r` of server `s`, on rail `r`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Servers {
    /// Servers in the cluster.
    pub servers: u32,
    /// GPUs (each with its own NIC, so rails) per server.
    pub gpus_per_server: u32,
    /// Servers per scalable unit (the leaves of one SU serve them).
    pub servers_per_su: u32,
}

impl Servers {
    /// The server GPU (host) `gpu` is in.
    pub fn server_of(&self, gpu: NodeId) -> u32 {
        gpu.0 / self.gpus_per_server
    }

    /// The rail of GPU `gpu`: its index within its server, the leaf of its SU it hangs from.
    pub fn rail_of(&self, gpu: NodeId) -> u32 {
        gpu.0 % self.gpus_per_server
    }

    /// Scalable units.
    pub fn sus(&self) -> u32 {
        self.servers / self.servers_per_su
    }
}

/// The counts of a rail-optimized fabric.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shape {
    /// The servers and their GPUs.
    pub servers: Servers,
    /// Spine switches.
    pub spines: u32,
    /// Parallel cables between each leaf and each spine.
    pub links_per_spine: u32,
}

/// Largest fabric [`build`] accepts (GPUs, and leaf–spine cables).
const MAX_SHAPE: u64 = 1 << 20;

impl Shape {
    /// The shape of `servers` with `ratio`:1 at the leaves, on `spines` spines (default: one
    /// cable from every leaf to each of `servers_per_su / ratio` spines); every count checked,
    /// errors naming its key.
    pub fn new(servers: Servers, ratio: u32, spines: Option<u32>) -> Result<Shape> {
        let Servers { servers: n, gpus_per_server, servers_per_su } = servers;
        for (key, v) in [("topology.servers", n), ("topology.server.gpus", gpus_per_server), ("topology.servers_per_su", servers_per_su)] {
            if v == 0 {
                return Err(Error::invalid(key, "0: must be at least 1"));
            }
        }
        if n % servers_per_su != 0 {
            let lower = n / servers_per_su * servers_per_su;
            let nearest = if lower > 0 { format!("{lower} or {}", lower + servers_per_su) } else { format!("{servers_per_su}") };
            return Err(Error::invalid(
                "topology.servers",
                format!("{n}: a rail-optimized fabric is built of whole scalable units of {servers_per_su} servers (topology.servers_per_su); nearest valid: {nearest}"),
            ));
        }
        if ratio == 0 || servers_per_su % ratio != 0 {
            let allowed: Vec<String> = (1..=servers_per_su).filter(|r| servers_per_su % r == 0).map(|r| format!("{r}:1")).collect();
            return Err(Error::invalid(
                "topology.oversubscription",
                format!("{ratio}:1: a leaf has {servers_per_su} GPU ports (topology.servers_per_su), which {ratio} does not divide; allowed: {}", allowed.join(", ")),
            ));
        }
        let uplinks = servers_per_su / ratio;
        let spines = spines.unwrap_or(uplinks);
        if spines == 0 || uplinks % spines != 0 {
            let allowed: Vec<String> = (1..=uplinks).filter(|s| uplinks % s == 0).map(|s| s.to_string()).collect();
            return Err(Error::invalid(
                "topology.spines",
                format!("{spines}: a leaf has {uplinks} uplinks (servers_per_su / oversubscription), spread evenly over the spines; allowed: {}", allowed.join(", ")),
            ));
        }
        let shape = Shape { servers, spines, links_per_spine: uplinks / spines };
        // Leaves never outnumber GPUs, so the GPU count bounds every product below it.
        let gpus = shape.gpus();
        let cables = if gpus > MAX_SHAPE { u64::MAX } else { shape.leaves() as u64 * uplinks as u64 };
        if gpus > MAX_SHAPE || cables > MAX_SHAPE {
            return Err(Error::invalid(
                "topology.servers",
                format!("{gpus} GPUs and {} leaf-spine cables: at most {MAX_SHAPE} of each (servers × server.gpus, leaves × uplinks)", if cables == u64::MAX { "more".to_string() } else { cables.to_string() }),
            ));
        }
        Ok(shape)
    }

    /// GPUs (hosts).
    pub fn gpus(&self) -> u64 {
        self.servers.servers as u64 * self.servers.gpus_per_server as u64
    }

    /// Leaves: one per rail in every SU.
    pub fn leaves(&self) -> u32 {
        self.servers.sus() * self.servers.gpus_per_server
    }

    /// What the fabric's tables will hold.
    pub fn size(&self) -> FabricSize {
        let (gpus, leaves, spines) = (self.gpus(), self.leaves() as u64, self.spines as u64);
        let cables = gpus + leaves * spines * self.links_per_spine as u64;
        FabricSize { nodes: gpus + leaves + spines, ports: 2 * cables, switches: leaves + spines, tors: leaves }
    }
}

/// Builds the fabric of `shape`: GPU r of server s on leaf (SU of s) × gpus + r, every leaf
/// `links_per_spine` cables to every spine.
pub fn build(shape: Shape, links: TierLinks, switch_latency: Time) -> Fabric {
    let Shape { servers, spines, links_per_spine } = shape;
    let Servers { servers: n, gpus_per_server: g, servers_per_su } = servers;
    let gpus = shape.gpus() as u32;
    let mut b = FabricBuilder::new(gpus);
    let leaf0 = b.add_switches(Tier::Tor, shape.leaves());
    let spine0 = b.add_switches(Tier::Agg, spines);
    for gpu in 0..gpus {
        let (server, rail) = (gpu / g, gpu % g);
        b.link(NodeId(gpu), leaf0.offset(server / servers_per_su * g + rail), links.host.0, links.host.1);
    }
    for leaf in 0..shape.leaves() {
        for s in 0..spines {
            for _ in 0..links_per_spine {
                b.link(leaf0.offset(leaf), spine0.offset(s), links.tor_up.0, links.tor_up.1);
            }
        }
    }
    let ratio = servers_per_su as f64 * links.host.0.gbps() / ((spines * links_per_spine) as f64 * links.tor_up.0.gbps());
    let ratio = (ratio * 100.0).round() / 100.0;
    let sus = servers.sus();
    let mut fabric = b.build(
        format!(
            "2-tier rail-optimized, {n} servers × {g} GPUs ({gpus} GPUs, a NIC each), {sus} scalable units of {servers_per_su} servers, {} rail leaves, {spines} spines; {ratio}:1 at the leaves",
            shape.leaves()
        ),
        switch_latency,
    );
    fabric.servers = Some(servers);
    fabric
}

/// What `fabricsim check` says of a fabric of servers: the servers and their units, the rails,
/// what is not modelled, and the capacity at each tier (empty for other fabrics).
pub fn check_lines(fabric: &Fabric) -> Vec<String> {
    let Some(s) = fabric.servers else { return Vec::new() };
    let tbps = |bits: u64| format!("{} Tb/s", crate::units::show_num((bits as f64 / 1e12 * 1000.0).round() / 1000.0));
    // Capacity one way: the GPUs' links, and the leaves' links to the spines.
    let (mut gpu_links, mut uplinks) = (0u64, 0u64);
    for (i, p) in fabric.ports.iter().enumerate() {
        match (fabric.tier[p.owner.idx()], fabric.tier[p.peer.idx()]) {
            (Tier::Host, _) => gpu_links += p.rate.0,
            (Tier::Tor, Tier::Agg) => uplinks += fabric.available_rate(crate::ids::PortId::at(i)).0,
            _ => {}
        }
    }
    let leaves = fabric.tier.iter().filter(|&&t| t == Tier::Tor).count();
    vec![
        format!(
            "servers       {} × {} GPUs, a NIC each ({} GPUs); {} scalable units of {} servers",
            s.servers,
            s.gpus_per_server,
            fabric.hosts,
            s.sus(),
            s.servers_per_su
        ),
        format!("rails         {}: GPU r of every server on leaf r of its unit ({leaves} leaves); gpu<i> is GPU i mod {} of server i / {}", s.gpus_per_server, s.gpus_per_server, s.gpus_per_server),
        "scale-up      not modelled: GPUs of one server reach each other through their leaves and the spines".to_string(),
        format!("capacity      GPU links {}, leaf uplinks {} (one way); bisection {}", tbps(gpu_links), tbps(uplinks), tbps(gpu_links.min(uplinks) / 2)),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::units::{BitsPerSec, US};

    fn links() -> TierLinks {
        let l = (BitsPerSec::from_gbps(400.0), US);
        TierLinks { host: l, tor_up: l, agg_up: l }
    }

    fn servers(n: u32, g: u32, su: u32) -> Servers {
        Servers { servers: n, gpus_per_server: g, servers_per_su: su }
    }

    //= type=test
    //# GPU r of server s hangs from leaf r of its SU; same-rail GPUs of one SU meet at their
    //# leaf, other pairs (the same server's other GPUs included) cross a spine.
    #[test]
    fn rails_wiring_and_paths() {
        // 2 SUs of 4 servers × 4 GPUs: 8 leaves, 4 spines (1:1), 32 GPUs.
        let shape = Shape::new(servers(8, 4, 4), 1, None).unwrap();
        let f = build(shape, links(), Time::ZERO);
        assert_eq!(f.tier_counts(), vec![(Tier::Host, 32), (Tier::Tor, 8), (Tier::Agg, 4)]);
        assert_eq!(f.size(), shape.size());
        let name = |n: NodeId| f.node_name(n);
        // gpu6 = server 1, rail 2 (SU 0): leaf 2; gpu21 = server 5, rail 1 (SU 1): leaf 4 + 1.
        assert_eq!(name(f.tor_of_host[6]), "tor2");
        assert_eq!(name(f.tor_of_host[21]), "tor5");
        assert_eq!(name(NodeId(21)), "gpu21");
        // leaf 2 serves rail 2 of servers 0..4.
        let leaf2 = f.node_by_name("tor2").unwrap();
        let below: Vec<String> = f.ports_of(leaf2).iter().map(|&p| name(f.ports[p.idx()].peer)).collect();
        assert_eq!(below, ["gpu2", "gpu6", "gpu10", "gpu14", "spine0", "spine1", "spine2", "spine3"]);
        // Hops (links): same rail, same SU: 2; same rail, other SU: 4; other rail, same server: 4.
        assert_eq!(f.representative_path(NodeId(2), NodeId(14)).len(), 2);
        assert_eq!(f.representative_path(NodeId(2), NodeId(18)).len(), 4);
        assert_eq!(f.representative_path(NodeId(0), NodeId(1)).len(), 4);
        // A leaf has 4 equal-cost uplinks towards any other leaf.
        assert_eq!(f.routes.next_hops(&f, leaf2, f.tor_of_host[1]).len(), 4);
        assert!(f.description.contains("8 servers × 4 GPUs (32 GPUs, a NIC each), 2 scalable units of 4 servers, 8 rail leaves, 4 spines; 1:1"), "{}", f.description);
        let s = f.servers.unwrap();
        assert_eq!((s.server_of(NodeId(21)), s.rail_of(NodeId(21))), (5, 1));
    }

    //= type=test
    //# r:1 gives each leaf servers_per_su / r uplinks, over the spines asked for.
    #[test]
    fn oversubscription_and_spine_counts() {
        let s = Shape::new(servers(8, 2, 8), 2, None).unwrap();
        assert_eq!((s.spines, s.links_per_spine), (4, 1));
        let s = Shape::new(servers(8, 2, 8), 2, Some(2)).unwrap();
        assert_eq!((s.spines, s.links_per_spine), (2, 2));
        let f = build(s, links(), Time::ZERO);
        assert!(f.description.contains("2:1 at the leaves"), "{}", f.description);
        assert_eq!(f.routes.next_hops(&f, f.tor_of_host[0], f.tor_of_host[1]).len(), 4);
    }

    //= type=test
    //# check's capacity line: 8 servers × 2 GPUs at 400 G is 6.4 Tb/s of GPU links; 2:1 leaves
    //# give 3.2 Tb/s of uplinks; the bisection is half the smaller.
    #[test]
    fn check_names_servers_rails_and_capacity() {
        let f = build(Shape::new(servers(8, 2, 4), 2, None).unwrap(), links(), Time::ZERO);
        let lines = check_lines(&f).join("\n");
        for want in ["8 × 2 GPUs, a NIC each (16 GPUs); 2 scalable units of 4 servers", "rails         2: GPU r of every server on leaf r of its unit (4 leaves)", "scale-up      not modelled", "GPU links 6.4 Tb/s, leaf uplinks 3.2 Tb/s (one way); bisection 1.6 Tb/s"] {
            assert!(lines.contains(want), "{want:?} not in:\n{lines}");
        }
        let plain = crate::topo::leaf_spine::build(4, 1, links(), Time::ZERO).unwrap();
        assert!(check_lines(&plain).is_empty());
    }

    #[test]
    fn bad_counts_name_their_key() {
        let err = |n, g, su, ratio, spines| Shape::new(servers(n, g, su), ratio, spines).unwrap_err().to_string();
        let e = err(10, 8, 4, 1, None);
        assert!(e.contains("topology.servers") && e.contains("nearest valid: 8 or 12"), "{e}");
        assert!(err(2, 8, 4, 1, None).contains("nearest valid: 4"));
        assert!(err(8, 0, 4, 1, None).contains("topology.server.gpus"));
        assert!(err(0, 8, 4, 1, None).contains("topology.servers"));
        assert!(err(8, 8, 0, 1, None).contains("topology.servers_per_su"));
        let e = err(8, 8, 4, 3, None);
        assert!(e.contains("topology.oversubscription") && e.contains("allowed: 1:1, 2:1, 4:1"), "{e}");
        let e = err(8, 8, 4, 1, Some(3));
        assert!(e.contains("topology.spines") && e.contains("allowed: 1, 2, 4"), "{e}");
        assert!(err(8, 8, 4, 1, Some(0)).contains("topology.spines"));
        assert!(err(1 << 16, 64, 1 << 14, 1, None).contains("at most 1048576"));
    }
}
