//! Fabric description: nodes, links and equal-cost routing tables, as dense arrays.
//!
//! A topology module (`fat_tree.rs`, `leaf_spine.rs`) only says which nodes exist and how they
//! are wired, through [`FabricBuilder`]; [`routing`] then derives, for every switch and every
//! destination ToR, the set of ports on shortest paths. [`failures`] then fails some ToR uplinks
//! if the scenario asks (removed from routing, or degraded). Hosts come first in the node
//! numbering (host `i` is node `i`), switches after them.
//!
//! A host is one NIC port on the switch it attaches to (its ToR, or a server's scale-up switch,
//! [`Tier::ScaleUp`]); routing's destinations are those attachment switches. A GPU of a server
//! with a scale-up domain is two hosts, one per port ([`rail_optimized`]): the workloads address
//! GPUs (ranks, [`Fabric::ranks`]) and [`Fabric::endpoints`] picks the port each connection uses.

use crate::units::Bytes;
pub mod failures;
pub mod fat_tree;
pub mod leaf_spine;
pub mod names;
pub mod pod_faults;
pub mod racks;
pub mod rail_only;
pub mod rail_optimized;
pub mod routing;

use crate::error::{Error, Result};
use crate::ids::{NodeId, PortId};
use crate::units::{BitsPerSec, Time};

/// The layer a node sits in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Tier {
    /// An end host (one NIC port).
    Host,
    /// A server's scale-up switch (NVSwitch class): the GPUs' scale-up ports hang below it, and
    /// it has no uplinks (the server's scale-up domain, [`rail_optimized`]).
    ScaleUp,
    /// Top-of-rack (leaf) switch: hosts hang below it.
    Tor,
    /// Aggregation switch of a 3-tier fat tree, or the spine of a leaf-spine.
    Agg,
    /// Core switch of a 3-tier fat tree.
    Core,
}

impl Tier {
    /// Whether hosts hang from switches of this tier (a ToR, a scale-up switch): the
    /// destinations routing computes next hops towards.
    pub fn attaches_hosts(self) -> bool {
        matches!(self, Tier::Tor | Tier::ScaleUp)
    }
}

/// One direction of a link: the output port of `owner` that sends to `peer`.
#[derive(Clone, Copy, Debug)]
pub struct PortSpec {
    /// Node that transmits on this port.
    pub owner: NodeId,
    /// Node at the far end.
    pub peer: NodeId,
    /// The port of `peer` that sends back over the same cable.
    pub reverse: PortId,
    /// Serialization rate.
    pub rate: BitsPerSec,
    /// Propagation delay of the cable.
    pub latency: Time,
}

/// A built fabric: what the engine simulates.
#[derive(Clone, Debug)]
pub struct Fabric {
    /// Short description, e.g. "3-tier fat tree k=16 (1:1)".
    pub description: String,
    /// Number of hosts (nodes `0..hosts`).
    pub hosts: u32,
    /// Tier of every node.
    pub tier: Vec<Tier>,
    /// Whether it has a core tier (a 3-tier fat tree; a leaf-spine has none). Kept here because
    /// naming or classifying one port must not scan every node (that made per-port loops over
    /// a large fabric quadratic).
    pub three_tier: bool,
    /// Index of every node within its tier (host 3 = 3, first ToR = 0, ...).
    pub index_in_tier: Vec<u32>,
    /// Every output port.
    pub ports: Vec<PortSpec>,
    /// Output ports of each node (CSR offsets into `node_port_list`).
    pub node_port_start: Vec<u32>,
    /// Flattened per-node output port lists.
    pub node_port_list: Vec<PortId>,
    /// The ToR each host hangs from.
    pub tor_of_host: Vec<NodeId>,
    /// Far-end node of each port (a compact copy of `ports[p].peer` for the per-packet path,
    /// shared by every partition of a parallel run).
    pub port_peer: std::sync::Arc<[NodeId]>,
    /// The ToR a packet addressed to node `n` is routed toward: a host's ToR; a ToR switch
    /// itself (switch-made control packets, `net/switch_lb` module docs); `NodeId::MAX` for
    /// other switches, which nothing addresses. Shared like `port_peer`.
    pub route_tor: std::sync::Arc<[NodeId]>,
    /// The NIC (egress) port of each host.
    pub host_port: Vec<PortId>,
    /// The ToR port that delivers to each host.
    pub host_downlink: Vec<PortId>,
    /// Switch forwarding delay, applied once per switch traversed.
    pub switch_latency: Time,
    /// Equal-cost next hops, filled by [`routing::compute`].
    pub routes: routing::RouteTable,
    /// Cables failed at build time (`[topology.failures]`), in ToR (or pod) order.
    pub failures: Vec<failures::FailedLink>,
    /// Hosts whose cable was removed at build time, sorted (a NIC port of a GPU on a fabric
    /// of several planes: the GPU keeps its other ports); they reach no one.
    cut_hosts: Vec<NodeId>,
    /// `partial_lag` failures: Eq. 2 of the paper (whether the pod uplinks are the bottleneck).
    pub pod_bottleneck: Option<pod_faults::PodBottleneck>,
    /// The failures are pod–core links chosen per pod ([`Fabric::pod_faults`]).
    pod_failures: bool,
    /// The hosts as GPUs of multi-GPU servers, on rails (a rail-optimized fabric); `None` for
    /// fabrics of single-NIC hosts.
    pub servers: Option<rail_optimized::Servers>,
}

impl Fabric {
    /// Whether `node` is a host (hosts come first in node order, then switches).
    pub fn is_host(&self, node: NodeId) -> bool {
        node.0 < self.hosts
    }

    /// The hosts a workload addresses: every host, or on a fabric of servers the GPUs (hosts
    /// `0..ranks`, their NIC ports on plane 0; hosts `p × ranks ..` are their ports on plane p,
    /// and after every plane's come the GPUs' scale-up ports).
    pub fn ranks(&self) -> u32 {
        match self.servers {
            Some(s) => s.gpus(),
            None => self.hosts,
        }
    }

    /// The ports a connection between GPUs (ranks) `src` and `dst` runs between: their
    /// scale-up ports when they are in one server with a scale-up domain, else their NICs
    /// (ranks are their NIC ports on plane 0; [`crate::workload::graph::Traffic::striped`]
    /// spreads such a connection over the planes).
    pub fn endpoints(&self, src: NodeId, dst: NodeId) -> (NodeId, NodeId) {
        match self.servers {
            Some(s) if s.scale_up.is_some() && s.server_of(src) == s.server_of(dst) => (s.scale_up_port(src), s.scale_up_port(dst)),
            _ => (src, dst),
        }
    }

    /// Ports of each host's NIC: a fabric of servers' [`rail_optimized::Servers::nic_ports`],
    /// else 1.
    pub fn nic_ports(&self) -> u32 {
        self.servers.map_or(1, |s| s.nic_ports())
    }

    /// Where each GPU's NIC sprays a connection's packets over its ports
    /// (`nic_port_choice = "packet"` or `"entropy"`): the GPUs and the ports of each NIC (port p of GPU i is
    /// host p × GPUs + i). `None` where a connection keeps to one port.
    pub fn sprayed_ports(&self) -> Option<(u32, u32)> {
        self.servers.filter(|s| s.port_choice != rail_optimized::PortChoice::Striped && s.nic_ports() > 1).map(|s| (s.gpus(), s.nic_ports()))
    }

    /// Whether a spraying NIC puts each packet on the port its entropy selects
    /// (`nic_port_choice = "entropy"`) rather than on its next free port.
    pub fn ports_by_entropy(&self) -> bool {
        self.servers.is_some_and(|s| s.port_choice == rail_optimized::PortChoice::Entropy)
    }

    /// The hosts (NIC ports) a connection from host `h` sends on: every port of its GPU's NIC
    /// where the NIC sprays packets over them ([`Fabric::sprayed_ports`]), else `h` alone.
    pub fn nic_siblings(&self, h: NodeId) -> impl Iterator<Item = NodeId> {
        let (first, n, stride) = match self.sprayed_ports() {
            Some((gpus, ports)) if h.0 < gpus * ports => (h.0 % gpus, ports, gpus),
            _ => (h.0, 1, 1),
        };
        (0..n).map(move |q| NodeId(first + q * stride))
    }

    /// The combined rate of the links a connection from host `h` sends on ([`Fabric::nic_siblings`]
    /// whose cable is in place), each port's as `rate` gives it (`downlink`: the links into
    /// them instead).
    pub fn nic_rate(&self, h: NodeId, downlink: bool, rate: impl Fn(PortId) -> BitsPerSec) -> BitsPerSec {
        let links = if downlink { &self.host_downlink } else { &self.host_port };
        // (A lone port counts as built, cut or not, as every rate read from it did before.)
        let live = |s: &NodeId| *s == h || self.cut_hosts.binary_search(s).is_err();
        BitsPerSec(self.nic_siblings(h).filter(live).map(|s| rate(links[s.idx()]).0).sum())
    }

    /// The GPU (rank) a host belongs to: itself, or for a NIC port on another plane or a
    /// scale-up port the GPU whose it is.
    pub fn rank_of(&self, host: NodeId) -> u32 {
        host.0 % self.ranks()
    }

    /// Output ports of `node`.
    pub fn ports_of(&self, node: NodeId) -> &[PortId] {
        let a = self.node_port_start[node.idx()] as usize;
        let b = self.node_port_start[node.idx() + 1] as usize;
        &self.node_port_list[a..b]
    }

    /// Number of switches.
    pub fn switches(&self) -> u32 {
        self.tier.len() as u32 - self.hosts
    }

    /// Whether the failures are pod–core links chosen per pod (`partial_lag`, `flaky` without
    /// `links`, lb-ai-training §5.4), whose runs report queues by tier.
    pub fn pod_faults(&self) -> bool {
        self.pod_failures
    }

    /// The rate port `p` runs at after `[topology.failures]` (0 for a removed cable).
    pub fn available_rate(&self, p: PortId) -> BitsPerSec {
        for l in &self.failures {
            if l.rate.is_none() && (l.up == p || l.down == p) {
                return BitsPerSec(0);
            }
            if let (Some(r), None) = (l.rate, l.loss) {
                if l.ports().any(|q| q == p) {
                    return r;
                }
            }
        }
        self.ports[p.idx()].rate
    }

    /// The oversubscription ratio of switch `s` on the way up (`inbound = false`: capacity
    /// from the tier below over the available capacity of its uplinks) or on the way down
    /// (`inbound = true`: capacity towards the tier below over the available capacity of the
    /// links arriving from above). 1 for a switch without uplinks; infinite when every uplink
    /// is down.
    pub fn oversubscription_of(&self, s: NodeId, inbound: bool) -> f64 {
        let (mut below, mut above) = (0u64, 0u64);
        for &p in self.ports_of(s) {
            let spec = &self.ports[p.idx()];
            if self.tier[spec.peer.idx()] < self.tier[s.idx()] {
                below += spec.rate.0;
            } else {
                above += self.available_rate(if inbound { spec.reverse } else { p }).0;
            }
        }
        if below == 0 || !self.ports_of(s).iter().any(|&p| self.tier[self.ports[p.idx()].peer.idx()] > self.tier[s.idx()]) {
            return 1.0;
        }
        below as f64 / above as f64
    }

    /// The worst oversubscription ratio on the way from host `src` to host `dst` (MCC spec
    /// A-9, "the hot spot with the highest oversubscription ratio", paper §4): the source ToR
    /// going up, the destination ToR coming down, and, when the route climbs above them, the
    /// switches their uplinks reach (a fat tree's aggregation switches). 1 within a rack.
    pub fn oversubscription_on_path(&self, src: NodeId, dst: NodeId) -> f64 {
        let (ts, td) = (self.tor_of_host[src.idx()], self.tor_of_host[dst.idx()]);
        if ts == td {
            return 1.0;
        }
        let mut r = self.oversubscription_of(ts, false).max(self.oversubscription_of(td, true));
        if self.routes.distance(self, ts, td) > 2 {
            for (t, inbound) in [(ts, false), (td, true)] {
                for &p in self.ports_of(t) {
                    let up = self.ports[p.idx()].peer;
                    if self.tier[up.idx()] > self.tier[t.idx()] {
                        r = r.max(self.oversubscription_of(up, inbound));
                    }
                }
            }
        }
        r.max(1.0)
    }

    /// Pod of every host: hosts whose ToRs share aggregation switches (a fat tree's pod); in a
    /// 2-tier fabric each ToR is its own pod. Pods are numbered in host order.
    pub fn pod_of_host(&self) -> Vec<u32> {
        // Union the ToRs and aggregation switches that are linked to each other.
        let n = self.tier.len();
        let mut parent: Vec<usize> = (0..n).collect();
        // A leaf-spine's spines are its upper tier (tier Agg, no Core above): no pods there.
        let three_tier = self.three_tier;
        fn root(parent: &mut [usize], mut x: usize) -> usize {
            while parent[x] != x {
                parent[x] = parent[parent[x]];
                x = parent[x];
            }
            x
        }
        for p in &self.ports {
            let (a, b) = (p.owner.idx(), p.peer.idx());
            if three_tier && matches!((self.tier[a], self.tier[b]), (Tier::Tor, Tier::Agg) | (Tier::Agg, Tier::Tor)) {
                let (ra, rb) = (root(&mut parent, a), root(&mut parent, b));
                parent[ra] = rb;
            }
        }
        let mut number = std::collections::HashMap::new();
        self.tor_of_host
            .iter()
            .map(|&t| {
                let r = root(&mut parent, t.idx());
                let next = number.len() as u32;
                *number.entry(r).or_insert(next)
            })
            .collect()
    }

    /// Node count of each tier, in tier order.
    pub fn tier_counts(&self) -> Vec<(Tier, u32)> {
        let mut out: Vec<(Tier, u32)> = Vec::new();
        for &t in &self.tier {
            match out.iter_mut().find(|(x, _)| *x == t) {
                Some((_, n)) => *n += 1,
                None => out.push((t, 1)),
            }
        }
        out.sort();
        out
    }

    /// Human-readable node name: host12, tor3, agg5, core7 (spine for a leaf-spine's upper tier).
    /// A GPU's NIC port on plane p ≥ 1 is `gpu<i>.p<p>`, its scale-up port `nvl<i>` (GPU i's)
    /// and a scale-up switch `nvs<s>` (server s's).
    pub fn node_name(&self, n: NodeId) -> String {
        let ranks = self.ranks();
        if self.is_host(n) && n.0 >= ranks {
            return match n.0 / ranks {
                p if p < self.nic_ports() => format!("gpu{}.p{p}", n.0 % ranks),
                _ => format!("nvl{}", n.0 % ranks),
            };
        }
        format!("{}{}", self.tier_name(self.tier[n.idx()]), self.index_in_tier[n.idx()])
    }

    /// What this fabric calls the nodes of tier `t`, as its node names spell it: `host`,
    /// `tor`, `agg`, `core`, and `spine` for a 2-tier fabric's upper tier; `gpu` for the hosts
    /// of a fabric of servers (a rail-optimized fabric's rail leaves are its ToRs).
    pub fn tier_name(&self, t: Tier) -> &'static str {
        match t {
            Tier::Host if self.servers.is_some() => "gpu",
            Tier::Host => "host",
            Tier::ScaleUp => "nvs",
            Tier::Tor => "tor",
            Tier::Agg if !self.three_tier => "spine",
            Tier::Agg => "agg",
            Tier::Core => "core",
        }
    }

    /// The node called `name` (see [`Fabric::node_name`]).
    pub fn node_by_name(&self, name: &str) -> Option<NodeId> {
        (0..self.tier.len() as u32).map(NodeId).find(|&n| self.node_name(n) == name)
    }

    /// The port from `a` to `b`, if they are neighbours.
    pub fn port_between(&self, a: NodeId, b: NodeId) -> Option<PortId> {
        self.ports_of(a).iter().copied().find(|&p| self.ports[p.idx()].peer == b)
    }

    /// The ports of `p`'s owner towards the same peer (parallel cables), in port order.
    pub fn parallel_ports(&self, p: PortId) -> Vec<PortId> {
        let spec = &self.ports[p.idx()];
        self.ports_of(spec.owner).iter().copied().filter(|&q| self.ports[q.idx()].peer == spec.peer).collect()
    }

    /// Name of the cable of port `p`: `"tor3-spine7"`, with `#i` for the i-th of parallel cables
    /// between the same two nodes (`"tor0-spine2#1"`); `[[link_events]]` accept the same names.
    pub fn link_name(&self, p: PortId) -> String {
        let spec = &self.ports[p.idx()];
        let name = format!("{}-{}", self.node_name(spec.owner), self.node_name(spec.peer));
        let parallel = self.parallel_ports(p);
        match parallel.iter().position(|&q| q == p) {
            Some(i) if parallel.len() > 1 => format!("{name}#{i}"),
            _ => name,
        }
    }

    /// The port of the first node of `link` (`"NODE-NODE"`) towards the second, with the two
    /// node names as written. Errors name `key`, quote `shown` when `link` is not two names,
    /// and give `example` as a well-formed one.
    pub fn port_named<'a>(&self, key: &str, link: &'a str, shown: &str, example: &str) -> Result<(PortId, &'a str, &'a str)> {
        let (x, y) = link.split_once('-').ok_or_else(|| Error::invalid(key, format!("`{shown}`: expected NODE-NODE, e.g. \"{example}\"")))?;
        let node = |n: &str| {
            self.node_by_name(n.trim())
                .ok_or_else(|| Error::invalid(key, format!("no node named `{n}` (names: host<i>, tor<i>, agg<i>, core<i>, spine<i>; gpu<i> on a fabric of servers, gpu<i>.p<p> its NIC port on plane p, nvl<i> and nvs<i> in its scale-up domain)")))
        };
        let (na, nb) = (node(x)?, node(y)?);
        let p = self.port_between(na, nb).ok_or_else(|| Error::invalid(key, format!("`{x}` and `{y}` are not linked")))?;
        Ok((p, x, y))
    }

    /// The cable called `name` (`"NODE-NODE"`, or `"NODE-NODE#i"` for the i-th of parallel
    /// cables): the first node's port onto it and the second's. Errors name `key`.
    pub fn cable_named(&self, key: &str, name: &str, example: &str) -> Result<[PortId; 2]> {
        let (link, nth) = match name.split_once('#') {
            Some((l, i)) => (l, i.parse::<usize>().map_err(|_| Error::invalid(key, format!("`{name}`: `#` must be followed by a cable index")))?),
            None => (name, 0),
        };
        let (pa, x, y) = self.port_named(key, link, name, example)?;
        let pa = self.parallel_ports(pa).get(nth).copied().ok_or_else(|| Error::invalid(key, format!("`{name}`: no cable #{nth} between `{x}` and `{y}`")))?;
        Ok([pa, self.ports[pa.idx()].reverse])
    }

    /// Records static failures (one failure entry's; the entries of `[[topology.failures]]` are
    /// applied in turn and add up) and, for removed cables, rebuilds the routes without them; the
    /// description gains a note of what failed.
    pub fn apply_failures(&mut self, chosen: failures::Chosen) {
        let links = chosen.links;
        if links.is_empty() {
            return;
        }
        let mut owners: Vec<NodeId> = links.iter().map(|l| self.ports[l.up.idx()].owner).collect();
        owners.sort_unstable();
        owners.dedup();
        let what = links[0].describe();
        let one_way = match links[0].direction {
            failures::Direction::Both => "",
            failures::Direction::Up => ", upward direction only",
            failures::Direction::Down => ", downward direction only",
        };
        if chosen.bottleneck.is_some() || chosen.pod_links {
            let pods = self.pod_of_host().iter().max().map_or(0, |&m| m + 1);
            self.description += &format!("; {} pod–core links {what}{one_way} ({pods} pods × {})", links.len(), links.len() as u32 / pods.max(1));
        } else {
            // Named by the tier whose uplinks they are (named links may be agg–core links).
            let tier = self.tier[owners[0].idx()];
            let name = if tier == Tier::Tor { "ToR" } else { self.tier_name(tier) };
            if owners.iter().all(|&o| self.tier[o.idx()] == tier) && links.len() % owners.len() == 0 {
                self.description += &format!("; {} {name} uplinks {what}{one_way} ({} {name}s × {})", links.len(), owners.len(), links.len() / owners.len());
            } else {
                self.description += &format!("; {} links {what}{one_way}", links.len());
            }
        }
        self.pod_bottleneck = chosen.bottleneck.or(self.pod_bottleneck.take());
        self.pod_failures |= chosen.pod_links;
        self.failures.extend(links);
        if self.failures.iter().any(|l| l.rate.is_none()) {
            let removed = self.removed_ports();
            self.cut_hosts = (0..self.hosts).map(NodeId).filter(|h| removed[self.host_port[h.idx()].idx()]).collect();
            self.routes = routing::compute(self, |p| !removed[p.idx()]);
        }
    }

    /// Per port: whether its cable was removed at build time.
    pub fn removed_ports(&self) -> Vec<bool> {
        let mut removed = vec![false; self.ports.len()];
        for l in self.failures.iter().filter(|l| l.rate.is_none()) {
            removed[l.up.idx()] = true;
            removed[l.down.idx()] = true;
        }
        removed
    }

    /// The links (host-to-host) of one shortest path from `src` to `dst`: output ports in
    /// order, taking at every switch the slowest equal-cost next hop (the first of equally slow
    /// ones). All equal-cost paths of the supported topologies cross the same tiers, so this is
    /// the path shape of every path; where next hops differ in rate (a leaf-spine with
    /// `spine_link_rates_gbps`) it is the slowest path, whose RTT bounds every other's.
    pub fn representative_path(&self, src: NodeId, dst: NodeId) -> Vec<PortId> {
        let mut path = vec![self.host_port[src.idx()]];
        let mut node = self.tor_of_host[src.idx()];
        let dst_tor = self.tor_of_host[dst.idx()];
        while node != dst_tor {
            let hops = self.routes.next_hops(self, node, dst_tor);
            let p = hops.iter().copied().fold(hops[0], |slow, q| if self.ports[q.idx()].rate < self.ports[slow.idx()].rate { q } else { slow });
            path.push(p);
            node = self.ports[p.idx()].peer;
        }
        path.push(self.host_downlink[dst.idx()]);
        path
    }

    /// Round-trip time of an idle path: data of `data_bytes` out, ACK of `ack_bytes` back,
    /// store-and-forward at every hop, one switch latency per switch each way.
    pub fn base_rtt(&self, src: NodeId, dst: NodeId, data_bytes: u64, ack_bytes: u64) -> Time {
        let path = self.representative_path(src, dst);
        let switches = Time(path.len() as u64) - Time(1);
        let mut t = 2 * switches * self.switch_latency.0;
        for &p in &path {
            let spec = &self.ports[p.idx()];
            t += 2 * spec.latency + spec.rate.tx_time(Bytes(data_bytes)) + spec.rate.tx_time(Bytes(ack_bytes));
        }
        t
    }

    /// Whether a packet from host `src` can reach host `dst` over the intact fabric's routes
    /// (hosts of rails without a shared spine cannot: a rail-optimized fabric with per-rail
    /// spine groups).
    pub fn reachable(&self, src: NodeId, dst: NodeId) -> bool {
        if !self.cut_hosts.is_empty() && (self.cut_hosts.binary_search(&src).is_ok() || self.cut_hosts.binary_search(&dst).is_ok()) {
            return false;
        }
        let (ts, td) = (self.tor_of_host[src.idx()], self.tor_of_host[dst.idx()]);
        ts == td || self.routes.distance(self, ts, td) != u8::MAX
    }

    /// Host 0 and the nearest other host: one under the same ToR when there is one (a
    /// rail-optimized fabric numbers a server's GPUs on different leaves), else host 1.
    pub fn nearest_pair(&self) -> (NodeId, NodeId) {
        let tor = self.tor_of_host[0];
        let next = (1..self.hosts).find(|&h| self.tor_of_host[h as usize] == tor).unwrap_or(1);
        (NodeId(0), NodeId(next))
    }

    /// The host pair with the longest path (the base RTT that sizes buffers and windows),
    /// among the hosts host 0 can reach.
    pub fn farthest_pair(&self) -> (NodeId, NodeId) {
        let src = NodeId(0);
        let mut best = (src, NodeId(if self.hosts > 1 { 1 } else { 0 }));
        let mut best_len = 0;
        // Hosts under the last ToR are as far from host 0 as any host can be in these fabrics,
        // but checking every ToR's first host is cheap and topology-agnostic.
        let mut seen_tor = vec![false; self.tier.len()];
        for h in 1..self.hosts {
            let t = self.tor_of_host[h as usize].idx();
            if seen_tor[t] {
                continue;
            }
            seen_tor[t] = true;
            if !self.reachable(src, NodeId(h)) {
                continue;
            }
            let len = self.representative_path(src, NodeId(h)).len();
            if len > best_len {
                best_len = len;
                best = (src, NodeId(h));
            }
        }
        best
    }
}

/// Incremental construction of a fabric by a topology module.
pub struct FabricBuilder {
    tier: Vec<Tier>,
    index_in_tier: Vec<u32>,
    ports: Vec<PortSpec>,
    hosts: u32,
}

impl FabricBuilder {
    /// A builder with `hosts` hosts already created (nodes `0..hosts`).
    pub fn new(hosts: u32) -> Self {
        FabricBuilder {
            tier: vec![Tier::Host; hosts as usize],
            index_in_tier: (0..hosts).collect(),
            ports: Vec::new(),
            hosts,
        }
    }

    /// Adds `count` hosts after the nodes so far and returns the node id the first one has
    /// until [`FabricBuilder::build`], which numbers every host before every switch (so the
    /// first added host becomes the one after those already there).
    pub fn add_hosts(&mut self, count: u32) -> NodeId {
        let first = self.tier.len() as u32;
        for i in 0..count {
            self.tier.push(Tier::Host);
            self.index_in_tier.push(self.hosts + i);
        }
        self.hosts += count;
        NodeId(first)
    }

    /// Adds `count` switches of `tier` and returns the node id of the first one.
    pub fn add_switches(&mut self, tier: Tier, count: u32) -> NodeId {
        let first = self.tier.len() as u32;
        let already = self.tier.iter().filter(|&&t| t == tier).count() as u32;
        for i in 0..count {
            self.tier.push(tier);
            self.index_in_tier.push(already + i);
        }
        NodeId(first)
    }

    /// Adds a full-duplex cable between `a` and `b`.
    pub fn link(&mut self, a: NodeId, b: NodeId, rate: BitsPerSec, latency: Time) {
        let pa = self.ports.len() as u32;
        self.ports.push(PortSpec { owner: a, peer: b, reverse: PortId(pa + 1), rate, latency });
        self.ports.push(PortSpec { owner: b, peer: a, reverse: PortId(pa), rate, latency });
    }

    /// Numbers hosts added after switches ([`FabricBuilder::add_hosts`]) before every switch,
    /// each group in the order it was added; a fabric without such hosts is left as it is.
    fn hosts_first(&mut self) {
        let n = self.tier.len();
        if self.tier[..self.hosts as usize].iter().all(|&t| t == Tier::Host) {
            return;
        }
        let mut new_id = vec![0u32; n];
        let (mut host, mut switch) = (0u32, self.hosts);
        for (i, t) in self.tier.iter().enumerate() {
            let next = if *t == Tier::Host { &mut host } else { &mut switch };
            new_id[i] = *next;
            *next += 1;
        }
        let (mut tier, mut index) = (vec![Tier::Host; n], vec![0u32; n]);
        for i in 0..n {
            tier[new_id[i] as usize] = self.tier[i];
            index[new_id[i] as usize] = self.index_in_tier[i];
        }
        (self.tier, self.index_in_tier) = (tier, index);
        for p in &mut self.ports {
            p.owner = NodeId(new_id[p.owner.idx()]);
            p.peer = NodeId(new_id[p.peer.idx()]);
        }
    }

    /// Finishes the fabric: per-node port lists, host attachment and routing tables.
    pub fn build(mut self, description: String, switch_latency: Time) -> Fabric {
        self.hosts_first();
        let n = self.tier.len();
        let mut count = vec![0u32; n + 1];
        for p in &self.ports {
            count[p.owner.idx() + 1] += 1;
        }
        for i in 0..n {
            count[i + 1] += count[i];
        }
        let mut fill = count.clone();
        let mut list = vec![PortId(0); self.ports.len()];
        for (i, p) in self.ports.iter().enumerate() {
            list[fill[p.owner.idx()] as usize] = PortId::at(i);
            fill[p.owner.idx()] += 1;
        }
        let mut host_port = vec![PortId::MAX; self.hosts as usize];
        let mut tor_of_host = vec![NodeId::MAX; self.hosts as usize];
        let mut host_downlink = vec![PortId::MAX; self.hosts as usize];
        for (i, p) in self.ports.iter().enumerate() {
            if p.owner < NodeId(self.hosts) {
                host_port[p.owner.idx()] = PortId(i as u32);
                tor_of_host[p.owner.idx()] = p.peer;
                host_downlink[p.owner.idx()] = p.reverse;
            }
        }
        let port_peer = self.ports.iter().map(|p| p.peer).collect();
        let route_tor = tor_of_host.iter().copied().chain((self.hosts..n as u32).map(|s| if self.tier[s as usize].attaches_hosts() { NodeId(s) } else { NodeId::MAX })).collect();
        let mut fabric = Fabric {
            description,
            hosts: self.hosts,
            port_peer,
            route_tor,
            three_tier: self.tier.contains(&Tier::Core),
            tier: self.tier,
            index_in_tier: self.index_in_tier,
            ports: self.ports,
            node_port_start: count,
            node_port_list: list,
            tor_of_host,
            host_port,
            host_downlink,
            switch_latency,
            routes: routing::RouteTable::default(),
            failures: Vec::new(),
            pod_bottleneck: None,
            pod_failures: false,
            servers: None,
            cut_hosts: Vec::new(),
        };
        fabric.routes = routing::compute(&fabric, |_| true);
        fabric
    }
}

/// What a fabric's tables will hold, counted from its shape before it is built: nodes, ports,
/// and the route table's switch × destination-ToR entries, which dominate (a k = 128 fat tree
/// has 168 million).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FabricSize {
    /// Hosts and switches.
    pub nodes: u64,
    /// Ports (two per cable).
    pub ports: u64,
    /// Switches.
    pub switches: u64,
    /// ToRs and scale-up switches (the route table's destinations).
    pub tors: u64,
}

impl Fabric {
    /// The counts of this built fabric, as [`FabricSize`] counts a shape before building.
    pub fn size(&self) -> FabricSize {
        let nodes = self.tier.len() as u64;
        let tors = self.tier.iter().filter(|t| t.attaches_hosts()).count() as u64;
        FabricSize { nodes, ports: self.ports.len() as u64, switches: nodes - self.hosts as u64, tors }
    }
}

impl FabricSize {
    /// Hosts: the nodes that are not switches.
    pub fn hosts(&self) -> u64 {
        self.nodes - self.switches
    }

    /// Route table entries: one per switch and destination ToR.
    pub fn route_entries(&self) -> u64 {
        self.switches.saturating_mul(self.tors)
    }

    /// Bytes building the fabric takes at its peak ([`crate::budget`]'s costs).
    pub fn bytes(&self) -> f64 {
        use crate::budget::{BYTES_PER_NODE, BYTES_PER_PORT, BYTES_PER_ROUTE_ENTRY};
        self.route_entries() as f64 * BYTES_PER_ROUTE_ENTRY + self.ports as f64 * BYTES_PER_PORT + self.nodes as f64 * BYTES_PER_NODE
    }

    /// The counts for a message: "20480 switches × 8192 ToRs = 167772160 route entries, 3145728 ports".
    pub fn describe(&self) -> String {
        format!("a fabric of {} switches × {} ToRs = {} route entries and {} ports", self.switches, self.tors, self.route_entries(), self.ports)
    }
}

/// Link rates and latencies of a tiered fabric, from the scenario.
#[derive(Clone, Copy, Debug)]
pub struct TierLinks {
    /// Host-to-ToR cables.
    pub host: (BitsPerSec, Time),
    /// ToR-to-aggregation (or spine) cables.
    pub tor_up: (BitsPerSec, Time),
    /// Aggregation-to-core cables.
    pub agg_up: (BitsPerSec, Time),
}

/// The even radix up to `max_k` whose fabric (`size(k)` hosts) has exactly `hosts` hosts, or an
/// error on `topology.hosts` naming the sizes around it (`what`: the fabrics, `rule`: how their
/// size follows the radix, `letter`: the radix's name).
fn radix_for_hosts(hosts: u32, max_k: u32, size: impl Fn(u32) -> u64, what: &str, rule: &str, letter: &str) -> crate::error::Result<u32> {
    use crate::error::Error;
    if hosts as u64 > size(max_k) {
        return Err(Error::invalid("topology.hosts", format!("{hosts}: {what} up to {} hosts ({letter}={max_k}) are supported", size(max_k))));
    }
    let mut k = 2u32;
    while size(k) < hosts as u64 {
        k += 2;
    }
    if size(k) == hosts as u64 {
        return Ok(k);
    }
    // Below the smallest fabric there is no smaller size to offer.
    let nearest = if k > 2 { format!("{} ({letter}={}) or {} ({letter}={k})", size(k - 2), k - 2, size(k)) } else { format!("the smallest is {} ({letter}={k})", size(k)) };
    Err(Error::invalid("topology.hosts", format!("{hosts}: {rule}; nearest valid: {nearest}")))
}
