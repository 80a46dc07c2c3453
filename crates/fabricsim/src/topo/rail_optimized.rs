//! Rail-optimized fabric of multi-GPU servers (2 or 3 tiers), as AI training clusters are cabled
//! (NVIDIA's DGX SuperPOD reference architecture; the rail-only proposal of Wang et al., 2023,
//! §2 describes the same "rail" wiring): a server holds `gpus` GPUs, each with its own NIC; a
//! scalable unit (SU) of `servers_per_su` servers has one leaf per rail, and leaf r of an SU
//! links to the NIC of GPU r of every server of that SU. Every leaf has the same number of
//! uplinks, spread over the spines, and every spine reaches every leaf (unless the spines are in
//! per-rail groups, below).
//!
//! So traffic between GPUs of the same rail inside an SU crosses one leaf; between GPUs of the
//! same rail in different SUs it crosses leaf, spine, leaf; between GPUs of different rails (of
//! the same server too, unless it has a scale-up domain) it crosses a spine too. A GPU is a host
//! of the fabric: GPU r of server s is host `s × gpus + r`, named `gpu<i>`; leaf r of SU u is
//! ToR `u × gpus + r`, named `tor<i>` as on every other fabric (so are its port classes and
//! `[switch.lb]` tier keys).
//!
//! The scale-up domain (`[topology.server] scale_up_gbps`; NVLink/NVSwitch class) is modelled as
//! what it is to the network: one non-blocking switch per server (`nvs<s>`, tier
//! [`Tier::ScaleUp`]) with a link to every GPU of the server at the per-GPU scale-up rate each
//! way. Each GPU then has a second port, its scale-up port, which is host `G + i` of the fabric
//! (`nvl<i>`, G the GPU count); GPUs of one server exchange their traffic through it and never
//! touch the rails ([`super::Fabric::endpoints`]). Not modelled: the link layer of the scale-up
//! domain (its credit-based flow control; its ports are switch ports with `[switch]`'s queues,
//! `[switch.ports.scale_up]`), and copy engines or SM time spent moving the data. With
//! `cross_rail = "pxn"` a collective's messages between GPUs on different rails of different
//! servers go first over the scale-up domain to the GPU of the source's server on the
//! destination's rail, then along that rail (NCCL's PXN; [`Servers::pxn_relay`]).
//!
//! Oversubscription r:1 keeps `servers_per_su` GPUs under each leaf and gives it
//! `servers_per_su / r` uplinks: `spines` spines with `servers_per_su / (r × spines)` cables each
//! (by default one cable to each of `servers_per_su / r` spines).
//!
//! With `tiers = 3` each scalable unit has spines of its own (one cable from each of its leaves
//! to each, `servers_per_su / r` of them) and spine j of every unit links to a group of
//! `cores / spines` cores: the wiring of a 3-tier fat tree ([`super::fat_tree`]) with the units
//! as pods and the GPUs on their rails. By default `cores` gives each spine as many core links
//! as it has leaves (1:1 at the spines). Traffic between units crosses a core.
//!
//! With the spines in one group per rail (2 tiers; `kind = "rail_only"`, [`super::rail_only`])
//! leaf r of every unit links only to group r: each rail is a network of its own, and GPUs of
//! different rails meet only in a server's scale-up domain.

use super::fat_tree::{self, PodShape};
use super::{leaf_spine, Fabric, FabricSize, Tier, TierLinks};
use crate::error::{Error, Result};
use crate::ids::NodeId;
use crate::units::Time;

/// How a fabric's hosts are grouped into multi-GPU servers (rail-optimized fabrics): host
/// `s × gpus_per_server + r` is GPU `r` of server `s`, on rail `r` (its index in the server).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Servers {
    /// How the GPUs' NICs are cabled to the leaves.
    pub wiring: Wiring,
    /// Independent copies of the scale-out fabric (1: one); each GPU's NIC has a port on each,
    /// port p of GPU i being host `p × gpus() + i`.
    pub planes: u32,
    /// Each GPU's NIC has two ports on the two leaves of a pair (Alibaba HPN's dual-ToR): port 1
    /// of GPU i (host `gpus() + i`) hangs from leaf L + l where port 0 hangs from leaf l (L the
    /// leaves of one port), and every leaf links to the spines as a single-port fabric's does.
    pub dual_tor: bool,
    /// How a connection between GPUs uses their NICs' ports (with several: planes or dual-ToR).
    pub port_choice: PortChoice,
    /// Servers in the cluster.
    pub servers: u32,
    /// GPUs (each with its own NIC, so rails) per server.
    pub gpus_per_server: u32,
    /// Servers per scalable unit (the leaves of one SU serve them).
    pub servers_per_su: u32,
    /// The servers' scale-up domain, if modelled.
    pub scale_up: Option<ScaleUp>,
}

/// How a fabric of servers cables its GPUs' NICs to the leaves of a scalable unit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Wiring {
    /// GPU r of every server of the unit on the unit's leaf r (rail-optimized, rail-only).
    Rails,
    /// Every GPU of a server on one leaf, consecutive servers filling a leaf: a top-of-rack
    /// switch per rack ([`super::racks`]).
    Racks,
}

/// How a connection between two GPUs uses their NICs' ports when each NIC has several (one
/// per plane, or the two of a dual-ToR NIC).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PortChoice {
    /// One queue pair per port pair, a send's bytes split evenly over them (NCCL spreads a
    /// transfer over a NIC's ports this way): each part keeps to its plane.
    #[default]
    Striped,
    /// One queue pair whose every packet leaves on the sending NIC's next free port (round robin
    /// over the free ones, a paused or down port taking none) for the peer's port on the same
    /// plane: the NIC sprays packets over its ports, as htsim's multi-port UEC NIC does
    /// (`UecNIC::findFreePort`, uet-htsim 40ccb05).
    Packet,
    /// One queue pair whose every packet leaves on the port its entropy selects (a hash of the
    /// connection and the entropy, mod ports), so that the sender's path selection chooses the plane as it chooses a path
    /// within one: REPS keeps the entropies that came back unmarked, and with them a plane that
    /// is not congested. A packet for a busy port waits there (staged), and the NIC takes no
    /// further packet from its connections while any of its ports holds one.
    Entropy,
}

impl PortChoice {
    /// Its name in `topology.nic_port_choice`.
    pub fn name(self) -> &'static str {
        match self {
            PortChoice::Striped => "striped",
            PortChoice::Packet => "packet",
            PortChoice::Entropy => "entropy",
        }
    }
}

/// A server's scale-up domain: a non-blocking switch with one link per GPU.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ScaleUp {
    /// Rate of each GPU's link to the scale-up switch, each way.
    pub rate: crate::units::BitsPerSec,
    /// Propagation delay of each GPU's link to the scale-up switch.
    pub latency: Time,
}

impl Servers {
    /// GPUs in the cluster.
    pub fn gpus(&self) -> u32 {
        self.servers * self.gpus_per_server
    }

    /// How a connection between GPUs uses the NIC ports, for `fabricsim check`; `striped`
    /// says over what when striped.
    fn port_use(&self, striped: &str) -> String {
        match self.port_choice {
            PortChoice::Striped => format!("a connection between GPUs is striped over {striped} (nic_port_choice = \"striped\")"),
            PortChoice::Packet => "a connection between GPUs is one queue pair whose packets leave on the NIC's next free port, each to the peer's port on its plane (nic_port_choice = \"packet\")".to_string(),
            PortChoice::Entropy => "a connection between GPUs is one queue pair whose packets leave on the port their entropy selects (hashed with the connection), each to the peer's port on its plane (nic_port_choice = \"entropy\")".to_string(),
        }
    }

    /// Ports of each GPU's NIC: one per plane, or the two of a dual-ToR NIC. Port p of GPU i is
    /// host `p × gpus() + i`.
    pub fn nic_ports(&self) -> u32 {
        if self.dual_tor {
            2
        } else {
            self.planes
        }
    }

    /// Leaves at each leaf position of a plane: the two of a dual-ToR pair, else one.
    pub fn leaf_sets(&self) -> u32 {
        if self.dual_tor {
            2
        } else {
            1
        }
    }

    /// Host of GPU `gpu`'s scale-up port (after every NIC port).
    pub fn scale_up_port(&self, gpu: NodeId) -> NodeId {
        gpu.offset(self.nic_ports() * self.gpus())
    }

    /// The server GPU (host) `gpu` is in.
    pub fn server_of(&self, gpu: NodeId) -> u32 {
        gpu.0 / self.gpus_per_server
    }

    /// The rail of GPU `gpu`: its index within its server, the leaf of its SU it hangs from.
    pub fn rail_of(&self, gpu: NodeId) -> u32 {
        gpu.0 % self.gpus_per_server
    }

    /// The GPU that relays traffic from GPU `src` to GPU `dst` over the scale-up domain (PXN):
    /// the GPU of `src`'s server on `dst`'s rail, when the two are on different servers and
    /// rails (`None` otherwise: a rail or a server joins them directly).
    pub fn pxn_relay(&self, src: NodeId, dst: NodeId) -> Option<NodeId> {
        let g = self.gpus_per_server;
        (self.server_of(src) != self.server_of(dst) && self.rail_of(src) != self.rail_of(dst)).then(|| NodeId(self.server_of(src) * g + self.rail_of(dst)))
    }

    /// Scalable units.
    pub fn sus(&self) -> u32 {
        self.servers / self.servers_per_su
    }

    /// The leaf (index among the ToRs) GPU `gpu` hangs from: leaf r of its server's unit, or
    /// with rack wiring its server's leaf (each leaf has `servers_per_su` GPU ports, filled by
    /// whole servers in order).
    pub fn leaf_of(&self, gpu: u32) -> u32 {
        match self.wiring {
            Wiring::Rails => gpu / self.gpus_per_server / self.servers_per_su * self.gpus_per_server + gpu % self.gpus_per_server,
            Wiring::Racks => gpu / self.servers_per_su,
        }
    }

    /// The scalable units in words ("2 scalable units of 4 servers", "one scalable unit of 4
    /// servers").
    pub fn units(&self) -> String {
        match self.sus() {
            1 => format!("one scalable unit of {} servers", self.servers_per_su),
            u => format!("{u} scalable units of {} servers", self.servers_per_su),
        }
    }

    /// With rack wiring, the servers under each leaf, in words ("a server", "4 servers").
    pub fn per_leaf(&self) -> String {
        match self.servers_per_su / self.gpus_per_server {
            1 => "a server".to_string(),
            k => format!("{k} servers"),
        }
    }

    /// The rail of the leaf with index `leaf` among the ToRs ([`Servers::leaf_of`]'s numbering).
    pub fn rail_of_leaf(&self, leaf: u32) -> u32 {
        leaf % self.gpus_per_server
    }
}

/// The counts of a rail-optimized fabric.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shape {
    /// The servers and their GPUs.
    pub servers: Servers,
    /// Switch tiers: 2 (leaves and spines) or 3 (leaves, the spines of each scalable unit,
    /// cores).
    pub tiers: u32,
    /// 2 tiers: spines, each linked to every leaf; 3 tiers: spines per scalable unit, each
    /// linked to every leaf of its unit.
    pub spines: u32,
    /// Parallel cables between each leaf and each spine it links to (1 in 3 tiers).
    pub links_per_spine: u32,
    /// 3 tiers: core switches; spine j of every unit links to cores j·c .. (j+1)·c − 1 with
    /// c = cores / spines (0 in 2 tiers).
    pub cores: u32,
    /// 2 tiers: the spines are in one group per rail, and leaf r of every unit links only to
    /// group r (the rail-only design, [`super::rail_only`]: rails meet in the servers, not in
    /// the fabric; with one unit there are no spines, each rail being its leaf).
    pub per_rail: bool,
}

/// Largest fabric [`build`] accepts (GPUs, and switch-to-switch cables).
const MAX_SHAPE: u64 = 1 << 20;

impl Shape {
    /// The shape of `servers` in `tiers` tiers with `ratio`:1 at the leaves, on `spines` spines
    /// (default: one cable from every leaf to each of `servers_per_su / ratio` spines, of the
    /// whole fabric in 2 tiers, of its unit in 3) and `cores` cores (3 tiers; default: as many
    /// uplinks on each spine as it has leaves, 1:1); every count checked, errors naming its key.
    pub fn new(servers: Servers, ratio: u32, spines: Option<u32>, tiers: u32, cores: Option<u32>) -> Result<Shape> {
        Self::grouped(servers, ratio, spines, tiers, cores, false)
    }

    /// [`Shape::new`], with the spines in one group per rail when `per_rail` (2 tiers only;
    /// default `server.gpus × servers_per_su / ratio` spines, a leaf one cable to each spine
    /// of its rail's group).
    pub fn grouped(servers: Servers, ratio: u32, spines: Option<u32>, tiers: u32, cores: Option<u32>, per_rail: bool) -> Result<Shape> {
        let Servers { servers: n, gpus_per_server, servers_per_su, .. } = servers;
        for (key, v) in [("topology.servers", n), ("topology.server.gpus", gpus_per_server), ("topology.servers_per_su", servers_per_su)] {
            if v == 0 {
                return Err(Error::invalid(key, "0: must be at least 1"));
            }
        }
        // The wiring's name in the messages (the checks are the same for both).
        let fabric = if servers.wiring == Wiring::Racks { "rack-wired" } else { "rail-optimized" };
        if servers.wiring == Wiring::Racks && servers_per_su % gpus_per_server != 0 {
            let lower = (servers_per_su / gpus_per_server).max(1) * gpus_per_server;
            return Err(Error::invalid(
                "topology.servers_per_su",
                format!("{servers_per_su}: a rack-wired leaf has servers_per_su GPU ports and holds whole servers of {gpus_per_server} GPUs (server.gpus); nearest valid: {lower} or {}", lower + gpus_per_server),
            ));
        }
        if !(2..=3).contains(&tiers) {
            return Err(Error::invalid("topology.tiers", format!("{tiers}: a {fabric} fabric has 2 tiers (leaves, spines) or 3 (leaves, spines per scalable unit, cores); allowed: 2, 3")));
        }
        if cores.is_some() && tiers == 2 {
            return Err(Error::invalid("topology.cores", format!("only with tiers = 3: a 2-tier {fabric} fabric has no core tier")));
        }
        if n % servers_per_su != 0 {
            let lower = n / servers_per_su * servers_per_su;
            let nearest = if lower > 0 { format!("{lower} or {}", lower + servers_per_su) } else { format!("{servers_per_su}") };
            return Err(Error::invalid(
                "topology.servers",
                format!("{n}: a {fabric} fabric is built of whole scalable units of {servers_per_su} servers (topology.servers_per_su); nearest valid: {nearest}"),
            ));
        }
        if ratio == 0 || servers_per_su % ratio != 0 {
            let allowed: Vec<String> = (1..=servers_per_su).filter(|r| servers_per_su % r == 0).map(|r| format!("{r}:1")).collect();
            return Err(Error::invalid(
                "topology.oversubscription",
                format!("{ratio}:1: a leaf has {servers_per_su} GPU ports (topology.servers_per_su), which {ratio} does not divide; allowed: {}", allowed.join(", ")),
            ));
        }
        // Leaves never outnumber GPUs, so the GPU count bounds the products below it.
        let gpus = n as u64 * gpus_per_server as u64;
        if gpus > MAX_SHAPE {
            return Err(Error::invalid("topology.servers", format!("{gpus} GPUs: at most {MAX_SHAPE} (servers × server.gpus)")));
        }
        let uplinks = servers_per_su / ratio;
        if servers.dual_tor && tiers == 3 {
            return Err(Error::invalid("topology.dual_tor", "only with tiers = 2 (a leaf pair under every spine)"));
        }
        if servers.dual_tor && servers.planes > 1 {
            return Err(Error::invalid("topology.dual_tor", format!("with planes = {}: a NIC's ports are either on a leaf pair or on planes; allowed with planes > 1: false", servers.planes)));
        }
        if per_rail && tiers == 3 {
            return Err(Error::invalid("topology.tiers", "a rail-only fabric's rails are 2-tier networks (or one switch each); allowed: 2"));
        }
        let shape = if per_rail {
            let g = gpus_per_server;
            let spines = spines.unwrap_or(g * uplinks);
            let per_group = spines / g;
            if spines % g != 0 || per_group == 0 || uplinks % per_group != 0 {
                let allowed: Vec<String> = (1..=uplinks).filter(|s| uplinks % s == 0).map(|s| (s * g).to_string()).collect();
                return Err(Error::invalid(
                    "topology.spines",
                    format!("{spines}: per-rail groups take server.gpus ({g}) groups of equal size, and a leaf's {uplinks} uplinks spread evenly over its group; allowed: {}", allowed.join(", ")),
                ));
            }
            Shape { servers, tiers, spines, links_per_spine: uplinks / per_group, cores: 0, per_rail }
        } else if tiers == 2 {
            let spines = spines.unwrap_or(uplinks);
            if spines == 0 || uplinks % spines != 0 {
                let allowed: Vec<String> = (1..=uplinks).filter(|s| uplinks % s == 0).map(|s| s.to_string()).collect();
                return Err(Error::invalid(
                    "topology.spines",
                    format!("{spines}: a leaf has {uplinks} uplinks (servers_per_su / oversubscription), spread evenly over the spines; allowed: {}", allowed.join(", ")),
                ));
            }
            Shape { servers, tiers, spines, links_per_spine: uplinks / spines, cores: 0, per_rail }
        } else {
            let spines = spines.unwrap_or(uplinks);
            if spines != uplinks {
                return Err(Error::invalid(
                    "topology.spines",
                    format!("{spines}: in 3 tiers a leaf has one cable to each spine of its unit, and {uplinks} uplinks (servers_per_su / oversubscription); allowed: {uplinks}"),
                ));
            }
            let cores = cores.unwrap_or(spines * gpus_per_server);
            if cores as u64 > MAX_SHAPE {
                return Err(Error::invalid("topology.cores", format!("{cores}: at most {MAX_SHAPE}")));
            }
            if cores == 0 || cores % spines != 0 {
                let allowed: Vec<String> = (1..=4).map(|m| (m * spines).to_string()).collect();
                return Err(Error::invalid(
                    "topology.cores",
                    format!("{cores}: spine j of every unit links to cores j·c .. (j+1)·c − 1 with c = cores / spines, so cores must be a multiple of the spines per unit ({spines}); allowed: {}, ... (default {}: 1:1 at the spines)", allowed.join(", "), spines * gpus_per_server),
                ));
            }
            let shape = Shape { servers, tiers, spines, links_per_spine: 1, cores, per_rail };
            shape.pods().check().map_err(|e| e.moved("topology.pods", "topology.servers"))?;
            shape
        };
        let cables = shape.leaves() as u64 * uplinks as u64;
        if cables > MAX_SHAPE {
            return Err(Error::invalid("topology.servers", format!("{cables} leaf-spine cables: at most {MAX_SHAPE} (leaves × uplinks)")));
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

    /// The 2-tier wiring: a leaf-spine whose ToRs are the leaves.
    fn leaf_spine(&self) -> super::leaf_spine::Shape {
        super::leaf_spine::Shape { tors: self.servers.leaf_sets() * self.leaves(), hosts_per_tor: self.servers.servers_per_su, spines: self.spines, links_per_spine: self.links_per_spine }
    }

    /// The 3-tier wiring: a fat tree whose pods are the scalable units.
    fn pods(&self) -> PodShape {
        let Servers { servers_per_su, gpus_per_server, .. } = self.servers;
        PodShape { pods: self.servers.sus(), tors_per_pod: gpus_per_server, aggs_per_pod: self.spines, hosts_per_tor: servers_per_su, cores: self.cores }
    }

    /// Spines each leaf links to: its rail's group, or every spine.
    fn spines_per_leaf(&self) -> u32 {
        if self.per_rail {
            self.spines / self.servers.gpus_per_server
        } else {
            self.spines
        }
    }

    /// The spines leaf `leaf` links to: its rail's group, or every spine.
    fn spines_of_leaf(&self, leaf: u32) -> std::ops::Range<u32> {
        if self.per_rail {
            let (rail, group) = (self.servers.rail_of_leaf(leaf), self.spines_per_leaf());
            rail * group..(rail + 1) * group
        } else {
            0..self.spines
        }
    }

    /// What the fabric's tables will hold.
    pub fn size(&self) -> FabricSize {
        let rails = if self.tiers == 3 {
            self.pods().size()
        } else {
            // A dual-ToR fabric has a NIC port and a leaf more per port and leaf.
            let sets = self.servers.leaf_sets() as u64;
            let (gpus, leaves, spines) = (sets * self.gpus(), sets * self.leaves() as u64, self.spines as u64);
            let cables = gpus + leaves * self.spines_per_leaf() as u64 * self.links_per_spine as u64;
            FabricSize { nodes: gpus + leaves + spines, ports: 2 * cables, switches: leaves + spines, tors: leaves }
        };
        // Every plane is a copy of the scale-out fabric (its GPU links included).
        let p = self.servers.planes as u64;
        let rails = FabricSize { nodes: p * rails.nodes, ports: p * rails.ports, switches: p * rails.switches, tors: p * rails.tors };
        if self.servers.scale_up.is_none() {
            return rails;
        }
        // A scale-up port per GPU, a scale-up switch per server (a routing destination), a
        // cable between them.
        let (gpus, servers) = (self.gpus(), self.servers.servers as u64);
        FabricSize { nodes: rails.nodes + gpus + servers, ports: rails.ports + 2 * gpus, switches: rails.switches + servers, tors: rails.tors + servers }
    }
}

/// Builds the fabric of `shape`: GPU r of server s on leaf (SU of s) × gpus + r; in 2 tiers
/// every leaf `links_per_spine` cables to every spine, in 3 tiers every leaf one cable to each
/// spine of its unit and spine j of every unit to its group of cores (a fat tree's wiring, the
/// units as pods).
pub fn build(shape: Shape, links: TierLinks, switch_latency: Time) -> Fabric {
    let Shape { servers, spines, links_per_spine, cores, .. } = shape;
    let Servers { servers: n, gpus_per_server: g, servers_per_su, scale_up, wiring, planes, dual_tor, .. } = servers;
    let gpus = shape.gpus() as u32;
    // Dual-ToR: port 1 of GPU i (host gpus + i) on the other leaf of its port 0's pair.
    let leaf_of = |host: u32| if host < gpus { servers.leaf_of(host) } else { shape.leaves() + servers.leaf_of(host - gpus) };
    let mut b = if shape.tiers == 3 {
        fat_tree::wire_hosts(shape.pods(), links, leaf_of)
    } else {
        leaf_spine::wire_hosts(shape.leaf_spine(), links, &[], leaf_of, |leaf| shape.spines_of_leaf(leaf))
    };
    // Planes 1..: the NIC ports on them (numbered after plane 0's, hosts p × gpus + i) and a
    // copy of the scale-out switches each, numbered after the previous plane's.
    for _ in 1..planes {
        let port0 = b.add_hosts(gpus);
        if shape.tiers == 3 {
            fat_tree::wire_plane(&mut b, shape.pods(), links, port0, leaf_of);
        } else {
            leaf_spine::wire_plane(&mut b, shape.leaf_spine(), links, &[], port0, leaf_of, |leaf| shape.spines_of_leaf(leaf));
        }
    }
    if let Some(up) = scale_up {
        // Added after the rails' switches; the builder numbers the scale-up ports right after
        // the GPUs' NIC ports (hosts planes × gpus ..) and the scale-up switches last.
        let port0 = b.add_hosts(gpus);
        let switch0 = b.add_switches(Tier::ScaleUp, n);
        for gpu in 0..gpus {
            b.link(port0.offset(gpu), switch0.offset(gpu / g), up.rate, up.latency);
        }
    }
    let round = |r: f64| (r * 100.0).round() / 100.0;
    // A rail-only unit's leaves have no uplinks, and so no ratio.
    let ratio = round(servers_per_su as f64 * links.host.0.gbps() / ((shape.spines_per_leaf() * links_per_spine).max(1) as f64 * links.tor_up.0.gbps()));
    let head = format!("{n} servers × {g} GPUs ({gpus} GPUs, a NIC each), {}", servers.units());
    let head = match scale_up {
        Some(up) => format!("{head}, a scale-up switch per server ({} Gb/s per GPU)", crate::units::show_num(up.rate.gbps())),
        None => head,
    };
    let head = if planes > 1 { format!("{planes} planes (a NIC port on each), each: {head}") } else { head };
    let head = if dual_tor { format!("{head}, dual-ToR (each NIC's 2 ports on the 2 leaves of a pair)") } else { head };
    let (kind, leaf) = match wiring {
        Wiring::Rails => ("rail-optimized", "rail leaves"),
        Wiring::Racks => ("rack-wired", "leaves"),
    };
    let head = match wiring {
        Wiring::Rails => head,
        Wiring::Racks => format!("{head}, each server's GPUs on one leaf ({} per leaf)", servers.per_leaf()),
    };
    let description = if shape.tiers == 3 {
        let spine_ratio = round(g as f64 * links.tor_up.0.gbps() / ((cores / spines) as f64 * links.agg_up.0.gbps()));
        format!("3-tier {kind}, {head} ({g} {leaf} and {spines} spines each), {cores} cores; {ratio}:1 at the leaves, {spine_ratio}:1 at the spines")
    } else if shape.per_rail && spines == 0 {
        format!("rail-only, {head}, one switch per rail (rails meet only inside servers)")
    } else if shape.per_rail {
        format!("2-tier rail-only, {head}, {} rail leaves, {spines} spines in {g} per-rail groups (rails meet only inside servers); {ratio}:1 at the leaves", shape.leaves())
    } else {
        format!("2-tier {kind}, {head}, {} {leaf}, {spines} spines; {ratio}:1 at the leaves", shape.leaf_spine().tors)
    };
    let mut fabric = b.build(description, switch_latency);
    fabric.servers = Some(servers);
    fabric
}

/// What `fabricsim check` says of a fabric of servers: the servers and their units, the rails,
/// what is not modelled, and the capacity at each tier (empty for other fabrics).
pub fn check_lines(fabric: &Fabric) -> Vec<String> {
    let Some(s) = fabric.servers else { return Vec::new() };
    let tbps = |bits: u64| format!("{} Tb/s", crate::units::show_num((bits as f64 / 1e12 * 1000.0).round() / 1000.0));
    // Capacity one way at each tier: the GPUs' links, the leaves' links to the spines, the
    // spines' links to the cores (3 tiers); failed cables count at what they still carry.
    let (mut gpu_links, mut uplinks, mut core_links) = (0u64, 0u64, 0u64);
    for (i, p) in fabric.ports.iter().enumerate() {
        let rate = fabric.available_rate(crate::ids::PortId::at(i)).0;
        match (fabric.tier[p.owner.idx()], fabric.tier[p.peer.idx()]) {
            (Tier::Host, Tier::Tor) => gpu_links += rate,
            (Tier::Tor, Tier::Agg) => uplinks += rate,
            (Tier::Agg, Tier::Core) => core_links += rate,
            _ => {}
        }
    }
    let leaves = fabric.tier.iter().filter(|&&t| t == Tier::Tor).count();
    // Per-rail groups (rail-only): no spine, or the first spine's leaves all on one rail (read
    // from the cables as built, whatever a failure removed).
    let first_spine = (fabric.hosts..fabric.tier.len() as u32).map(NodeId).find(|n| fabric.tier[n.idx()] == Tier::Agg);
    let one_rail = |spine: NodeId| {
        let mut rails = fabric.ports_of(spine).iter().map(|&p| s.rail_of_leaf(fabric.index_in_tier[fabric.ports[p.idx()].peer.idx()]));
        let first = rails.next();
        rails.all(|r| Some(r) == first)
    };
    let per_rail = s.gpus_per_server > 1 && s.wiring == Wiring::Rails && first_spine.map_or(true, one_rail);
    let cores = if fabric.three_tier { format!(", spine uplinks {}", tbps(core_links)) } else { String::new() };
    let narrowest = if fabric.three_tier { gpu_links.min(uplinks).min(core_links) } else { gpu_links.min(uplinks) };
    let mut lines = vec![
        format!(
            "servers       {} × {} GPUs, a NIC each ({} GPUs); {}",
            s.servers,
            s.gpus_per_server,
            s.gpus(),
            s.units()
        ),
        match s.wiring {
            Wiring::Rails => format!("rails         {}: GPU r of every server on leaf r of its unit ({leaves} leaves); gpu<i> is GPU i mod {} of server i / {}", s.gpus_per_server, s.gpus_per_server, s.gpus_per_server),
            Wiring::Racks => format!(
                "racks         every GPU of a server on one leaf, {} per leaf ({leaves} leaves; the switches and cables of the rail-optimized wiring); gpu<i> is GPU i mod {} of server i / {}",
                s.per_leaf(),
                s.gpus_per_server,
                s.gpus_per_server
            ),
        },
        match s.scale_up {
            Some(up) => format!(
                "scale-up      a non-blocking switch per server (nvs<s>), {} Gb/s each way per GPU, {} ns per link: GPUs of one server exchange their traffic there (gpu<i>'s port on it is nvl<i>){}",
                crate::units::show_num(up.rate.gbps()),
                crate::units::show_num(up.latency.0 as f64 / 1000.0),
                if per_rail { "; GPUs of different servers and rails have no path of their own: a collective's messages between them are forwarded through the source's domain onto the destination's rail" } else { "" }
            ),
            None if per_rail => "scale-up      not modelled: on a rail-only fabric GPUs of different rails have no path (the rails meet only in a server's scale-up domain)".to_string(),
            None => "scale-up      not modelled: GPUs of one server reach each other through their leaves and the spines ([topology.server] scale_up_gbps models it)".to_string(),
        },
        if per_rail && uplinks == 0 && leaves as u32 == s.gpus_per_server * s.planes {
            let g = s.gpus_per_server as u64;
            format!("capacity      GPU links {} (one way); the rails are separate networks, each one switch: bisection {} within each", tbps(gpu_links), tbps(gpu_links / g / 2))
        } else if per_rail {
            let g = s.gpus_per_server as u64;
            format!("capacity      GPU links {}, leaf uplinks {} (one way); the rails are separate networks: bisection {} within each", tbps(gpu_links), tbps(uplinks), tbps(narrowest / g / 2))
        } else {
            format!("capacity      GPU links {}, leaf uplinks {}{cores} (one way); bisection {} (half the narrowest tier)", tbps(gpu_links), tbps(uplinks), tbps(narrowest / 2))
        },
    ];
    if s.dual_tor {
        let l = fabric.tier.iter().filter(|&&t| t == Tier::Tor).count() as u32 / 2;
        lines.insert(
            2,
            format!("dual-ToR      each GPU's NIC has 2 ports, port 0 (gpu<i>) on leaf l and port 1 (gpu<i>.p1) on leaf {l} + l of the pair, every leaf under the spines; {}", s.port_use("the two (port 0 to 0, 1 to 1; across when a port of each is cut), half its bytes on each")),
        );
    }
    if s.planes > 1 {
        let per_plane = |tier: Tier| fabric.tier.iter().filter(|&&t| t == tier).count() as u32 / s.planes;
        let (l, a) = (per_plane(Tier::Tor), per_plane(Tier::Agg));
        lines.insert(
            2,
            format!(
                "planes        {}: independent copies of the scale-out fabric, plane p with leaves tor<p·{l}>.. and spines {}<p·{a}>..; GPU i's NIC port on plane p is gpu<i>.p<p> (p ≥ 1); {} (capacities below: all planes together)",
                s.planes,
                fabric.tier_name(Tier::Agg),
                s.port_use(&format!("the planes that join it, 1/{} of its bytes on each", s.planes))
            ),
        );
    }
    lines
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
        Servers { servers: n, gpus_per_server: g, servers_per_su: su, scale_up: None, wiring: Wiring::Rails, planes: 1, dual_tor: false, port_choice: Default::default() }
    }

    //= type=test
    //# GPU r of server s hangs from leaf r of its SU; same-rail GPUs of one SU meet at their
    //# leaf, other pairs (the same server's other GPUs included) cross a spine.
    #[test]
    fn rails_wiring_and_paths() {
        // 2 SUs of 4 servers × 4 GPUs: 8 leaves, 4 spines (1:1), 32 GPUs.
        let shape = Shape::new(servers(8, 4, 4), 1, None, 2, None).unwrap();
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
        let s = Shape::new(servers(8, 2, 8), 2, None, 2, None).unwrap();
        assert_eq!((s.spines, s.links_per_spine), (4, 1));
        let s = Shape::new(servers(8, 2, 8), 2, Some(2), 2, None).unwrap();
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
        let f = build(Shape::new(servers(8, 2, 4), 2, None, 2, None).unwrap(), links(), Time::ZERO);
        let lines = check_lines(&f).join("\n");
        for want in ["8 × 2 GPUs, a NIC each (16 GPUs); 2 scalable units of 4 servers", "rails         2: GPU r of every server on leaf r of its unit (4 leaves)", "scale-up      not modelled", "GPU links 6.4 Tb/s, leaf uplinks 3.2 Tb/s (one way); bisection 1.6 Tb/s"] {
            assert!(lines.contains(want), "{want:?} not in:\n{lines}");
        }
        // 3 tiers, 2:1 at the leaves, half the default cores: 2:1 again at the spines.
        let f = build(Shape::new(servers(8, 2, 4), 2, None, 3, Some(2)).unwrap(), links(), Time::ZERO);
        let lines = check_lines(&f).join("\n");
        assert!(lines.contains("GPU links 6.4 Tb/s, leaf uplinks 3.2 Tb/s, spine uplinks 1.6 Tb/s (one way); bisection 0.8 Tb/s"), "{lines}");
        assert!(f.description.contains("2:1 at the leaves, 2:1 at the spines"), "{}", f.description);
        let plain = crate::topo::leaf_spine::build(4, 1, links(), Time::ZERO).unwrap();
        assert!(check_lines(&plain).is_empty());
    }

    //= type=test
    //# Per-rail spine groups: leaf r of every unit links only to group r, so a rail reaches
    //# across units and no two rails meet; the base RTT's pairs are reachable ones.
    #[test]
    fn per_rail_groups_keep_the_rails_apart() {
        // 2 units of 4 servers × 4 GPUs: 8 leaves, 4 uplinks each, 16 spines in 4 groups of 4.
        let shape = Shape::grouped(servers(8, 4, 4), 1, None, 2, None, true).unwrap();
        assert_eq!((shape.spines, shape.links_per_spine), (16, 1));
        let f = build(shape, links(), Time::ZERO);
        assert_eq!(f.size(), shape.size());
        let peers = |n: &str| -> Vec<String> { f.ports_of(f.node_by_name(n).unwrap()).iter().map(|&p| f.node_name(f.ports[p.idx()].peer)).collect() };
        // tor6 is rail 2 of unit 1: spines 8..12.
        assert_eq!(peers("tor6"), ["gpu18", "gpu22", "gpu26", "gpu30", "spine8", "spine9", "spine10", "spine11"]);
        assert!(f.reachable(NodeId(0), NodeId(16)) && f.reachable(NodeId(0), NodeId(4)));
        assert!(!f.reachable(NodeId(0), NodeId(1)) && !f.reachable(NodeId(2), NodeId(19)));
        assert_eq!(f.representative_path(NodeId(0), NodeId(16)).len(), 4);
        assert_eq!(f.farthest_pair(), (NodeId(0), NodeId(16)));
        assert_eq!(f.nearest_pair(), (NodeId(0), NodeId(4)));
        assert!(f.description.contains("16 spines in 4 per-rail groups"), "{}", f.description);
        let lines = check_lines(&f).join("\n");
        assert!(lines.contains("GPUs of different rails have no path") && lines.contains("separate networks: bisection 1.6 Tb/s within each"), "{lines}");
        // Two spines per group, each leaf's 4 uplinks as 2 cables to each.
        let two = Shape::grouped(servers(8, 4, 4), 1, Some(8), 2, None, true).unwrap();
        assert_eq!(two.links_per_spine, 2);
        let e = Shape::grouped(servers(8, 4, 4), 1, Some(6), 2, None, true).unwrap_err().to_string();
        assert!(e.contains("topology.spines") && e.contains("allowed: 4, 8, 16"), "{e}");
        let e = Shape::grouped(servers(8, 4, 4), 1, None, 3, None, true).unwrap_err().to_string();
        assert!(e.contains("topology.tiers") && e.contains("allowed: 2"), "{e}");
    }

    #[test]
    fn bad_counts_name_their_key() {
        let err = |n, g, su, ratio, spines| Shape::new(servers(n, g, su), ratio, spines, 2, None).unwrap_err().to_string();
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
        let three = |spines, cores| Shape::new(servers(8, 4, 4), 1, spines, 3, cores).unwrap_err().to_string();
        let e = three(Some(2), None);
        assert!(e.contains("topology.spines") && e.contains("allowed: 4"), "{e}");
        assert!(three(None, Some(u32::MAX)).contains("topology.cores"));
        let e = three(None, Some(6));
        assert!(e.contains("topology.cores") && e.contains("4, 8, 12, 16") && e.contains("default 16"), "{e}");
        let e = Shape::new(servers(8, 4, 4), 1, None, 4, None).unwrap_err().to_string();
        assert!(e.contains("topology.tiers") && e.contains("allowed: 2, 3"), "{e}");
        let e = Shape::new(servers(8, 4, 4), 1, None, 2, Some(4)).unwrap_err().to_string();
        assert!(e.contains("topology.cores") && e.contains("only with tiers = 3"), "{e}");
    }

    //= type=test
    //# 3 tiers: a unit's leaves reach each other through its own spines (4 links), other units
    //# through a core (6 links); a k-ary fat tree's counts when the unit is k/2 servers of k/2 GPUs.
    #[test]
    fn three_tiers_are_a_fat_tree_of_units() {
        // 4 units of 4 servers × 4 GPUs: 16 leaves, 4 spines per unit, 16 cores (4 per spine group).
        let shape = Shape::new(servers(16, 4, 4), 1, None, 3, None).unwrap();
        assert_eq!((shape.spines, shape.cores), (4, 16));
        let f = build(shape, links(), Time::ZERO);
        assert_eq!(f.tier_counts(), vec![(Tier::Host, 64), (Tier::Tor, 16), (Tier::Agg, 16), (Tier::Core, 16)]);
        assert_eq!(f.size(), shape.size());
        // gpu1 (server 0, rail 1) and gpu13 (server 3, rail 1): one leaf; gpu17 (server 4: unit 1).
        assert_eq!(f.representative_path(NodeId(1), NodeId(13)).len(), 2);
        assert_eq!(f.representative_path(NodeId(0), NodeId(1)).len(), 4);
        assert_eq!(f.representative_path(NodeId(1), NodeId(17)).len(), 6);
        assert_eq!(f.node_name(f.tor_of_host[17]), "tor5");
        // Each unit is a pod: its 16 GPUs share one.
        assert_eq!(f.pod_of_host()[..16], [0; 16]);
        assert_eq!(f.pod_of_host()[16..32], [1; 16]);
        assert!(f.description.contains("3-tier rail-optimized") && f.description.contains("(4 rail leaves and 4 spines each), 16 cores; 1:1 at the leaves, 1:1 at the spines"), "{}", f.description);
    }

    //= type=test
    //# Two planes: two copies of the scale-out fabric, GPU i's NIC port on plane 1 is host
    //# G + i (gpu<i>.p1) under plane 1's leaves, numbered after plane 0's; the planes never
    //# meet; the scale-up ports come after both planes' NIC ports.
    #[test]
    fn planes_are_copies_of_the_scale_out_fabric() {
        use crate::units::NS;
        let up = ScaleUp { rate: BitsPerSec::from_gbps(3600.0), latency: 150 * NS };
        let shape = Shape::new(Servers { planes: 2, scale_up: Some(up), ..servers(8, 4, 4) }, 1, None, 2, None).unwrap();
        let f = build(shape, links(), Time::ZERO);
        assert_eq!(f.size(), shape.size());
        assert_eq!(f.tier_counts(), vec![(Tier::Host, 96), (Tier::ScaleUp, 8), (Tier::Tor, 16), (Tier::Agg, 8)]);
        assert_eq!((f.hosts, f.ranks()), (96, 32));
        let name = |n: u32| f.node_name(NodeId(n));
        assert_eq!((name(5), name(37), name(69)), ("gpu5".into(), "gpu5.p1".into(), "nvl5".into()));
        assert_eq!((name(f.tor_of_host[5].0), name(f.tor_of_host[37].0)), ("tor1".into(), "tor9".into()));
        assert!(f.reachable(NodeId(0), NodeId(16)) && f.reachable(NodeId(32), NodeId(48)));
        assert!(!f.reachable(NodeId(0), NodeId(48)), "the planes meet nowhere");
        assert_eq!(f.endpoints(NodeId(4), NodeId(5)), (NodeId(68), NodeId(69)));
        assert_eq!(f.rank_of(NodeId(37)), 5);
        assert!(f.description.contains("2 planes (a NIC port on each)"), "{}", f.description);
        let lines = check_lines(&f).join("\n");
        assert!(lines.contains("planes        2: independent copies") && lines.contains("tor<p·8>") && lines.contains("spine<p·4>"), "{lines}");
    }

    //= type=test
    //# A scale-up domain adds a port per GPU (hosts G..2G, nvl<i>) on a switch per server
    //# (nvs<s>, numbered after every other switch): GPUs of one server are two links apart
    //# through it, the rails are as before, and connections between GPUs of one server are
    //# mapped onto the scale-up ports.
    #[test]
    fn scale_up_domain_adds_a_port_per_gpu_and_a_switch_per_server() {
        use crate::units::NS;
        let up = ScaleUp { rate: BitsPerSec::from_gbps(3600.0), latency: 150 * NS };
        let shape = Shape::new(Servers { scale_up: Some(up), ..servers(8, 4, 4) }, 1, None, 2, None).unwrap();
        let f = build(shape, links(), Time::ZERO);
        assert_eq!(f.size(), shape.size());
        assert_eq!(f.tier_counts(), vec![(Tier::Host, 64), (Tier::ScaleUp, 8), (Tier::Tor, 8), (Tier::Agg, 4)]);
        assert_eq!((f.hosts, f.ranks()), (64, 32));
        let name = |n: u32| f.node_name(NodeId(n));
        assert_eq!((name(5), name(37), name(f.tor_of_host[37].0)), ("gpu5".into(), "nvl5".into(), "nvs1".into()));
        // The scale-out part is numbered as without the domain: the leaves right after the hosts.
        assert_eq!(name(f.tor_of_host[5].0), "tor1");
        assert_eq!(f.tor_of_host[5].0, 64 + 1);
        // GPUs 4 and 5 (server 1) meet at nvs1; their NICs would cross a spine.
        assert_eq!(f.endpoints(NodeId(4), NodeId(5)), (NodeId(36), NodeId(37)));
        assert_eq!(f.endpoints(NodeId(4), NodeId(8)), (NodeId(4), NodeId(8)));
        let path = f.representative_path(NodeId(36), NodeId(37));
        assert_eq!(path.iter().map(|&p| f.link_name(p)).collect::<Vec<_>>(), ["nvl4-nvs1", "nvs1-nvl5"]);
        assert_eq!(f.ports[path[0].idx()].rate, up.rate);
        assert!(!f.reachable(NodeId(36), NodeId(40)), "scale-up ports of different servers have no path");
        assert_eq!(f.rank_of(NodeId(37)), 5);
        assert!(f.description.contains("a scale-up switch per server (3600 Gb/s per GPU)"), "{}", f.description);
    }
}
