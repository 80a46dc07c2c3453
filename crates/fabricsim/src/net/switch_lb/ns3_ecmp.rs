//! `ns3_ecmp`: the ECMP of the HPCC ns-3 RDMA simulator, bit for bit, so that a run translated
//! from that simulator's inputs puts every flow, and every ACK, on the path the simulator puts
//! it on.
//!
//! **Follows:** alibaba-edu/High-Precision-Congestion-Control @ 9f4be2a,
//! `SwitchNode::GetOutDev` / `EcmpHash` (read to understand, nothing copied): a switch hashes
//! the 12 bytes (source IP, destination IP, source port | destination port << 16), as
//! little-endian 32-bit words, with 32-bit MurmurHash3 seeded by its node id, and takes the hash
//! modulo the number of next hops. A node's IP is `11.x.y.1` with `x·256 + y` its node id
//! (`node_id_to_ip`); a flow's source port is 10000 + the number of earlier flows of the same
//! host pair in the flow file (`portNumder`), its destination port the file's `DPORT`; an ACK
//! swaps both addresses and both ports.
//!
//! **The names** (node ids, ports) come from the workload: `flow_list` with `format = "ns3"`
//! (or `"conweave"`: ConWeave's fork of that simulator hashes the same way, with its own port
//! numbering) and `ns3_topology` fills a [`Ns3Naming`]; setup refuses `ns3_ecmp` without one. fabricsim's
//! ToR `t` is the switch of the `t`-th block of hosts, its spine `j` the `j`-th other switch in id
//! order (as `from-ns3` translates the file); setup checks that every host hangs off the ToR
//! fabricsim puts it on.
//!
//! **Next-hop order** (`next_hops`): the simulator lists a destination's next hops in the order
//! its route computation visits neighbours, a `std::map` keyed by node pointer, so by memory
//! address. In the build of `experiments/ns3-parity` that is descending node id: with
//! `"descending"` (default), the hash of each of 23 inter-ToR flows and of their 23 ACKs picked
//! the uplink ns-3's packet trace shows (46 of 46). `"ascending"` is the other order, for a build
//! that allocates the other way.

use crate::ids::NodeId;
use crate::net::packet::Packet;
use serde::{Deserialize, Serialize};
use std::sync::Arc;

/// Registry name.
pub const NAME: &str = "ns3_ecmp";
/// Registry summary.
pub const SUMMARY: &str =
    "the HPCC ns-3 simulator's ECMP: MurmurHash3 of (sip, dip, sport|dport<<16) seeded by the switch's node id (flow_list format = \"ns3\" names them)";

/// The order in which the simulator lists a destination's next hops.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum NextHops {
    /// Descending node id (measured on the parity build).
    #[default]
    Descending,
    /// Ascending node id.
    Ascending,
}

/// Parameters of `ns3_ecmp`.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq, Eq)]
#[serde(default, deny_unknown_fields)]
pub struct Ns3EcmpParams {
    /// The simulator's next-hop order: `descending` or `ascending` node id.
    pub next_hops: NextHops,
}

/// The ns-3 names of a run's hosts, switches and connections (`flow_list`, `format = "ns3"`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Ns3Naming {
    /// Node id of each fabricsim host.
    pub host_node: Vec<u32>,
    /// Node id of the switch each host's link goes to.
    pub host_switch: Vec<u32>,
    /// Node id of each fabricsim switch: the ToRs in the order of their hosts, then the other
    /// switches (a leaf-spine's spines) in id order.
    pub switch_node: Vec<u32>,
    /// Of each connection: its sending host, source port and destination port.
    pub conn_ports: Vec<(NodeId, u16, u16)>,
}

impl Ns3Naming {
    /// The simulator's IP address of node `id` (`node_id_to_ip`: `11.x.y.1`).
    pub fn ip(id: u32) -> u32 {
        0x0b00_0001 + (id / 256) * 0x0001_0000 + (id % 256) * 0x0000_0100
    }

    /// The 12 bytes a switch hashes for packet `p`, or `None` for a packet without ns-3 names
    /// (a switch-made one).
    fn key(&self, p: &Packet) -> Option<[u32; 3]> {
        let &(src, sport, dport) = self.conn_ports.get(p.conn.idx())?;
        let (a, b) = (*self.host_node.get(p.src.idx())?, *self.host_node.get(p.dst.idx())?);
        // An answer travels from the receiver: addresses and ports swapped.
        let ports = if p.src == src { sport as u32 | (dport as u32) << 16 } else { dport as u32 | (sport as u32) << 16 };
        Some([Self::ip(a), Self::ip(b), ports])
    }
}

/// Refuses `ns3_ecmp` without ns-3 names, or with names whose switches are not fabricsim's
/// in the same order (each host must hang off the topology file's switch of its ToR's rank).
pub fn check(naming: Option<&Ns3Naming>, fabric: &crate::topo::Fabric) -> crate::error::Result<()> {
    let Some(m) = naming else {
        return Err(crate::error::Error::invalid(
            "switch.lb",
            "ns3_ecmp (also drill's control = \"ns3_ecmp\") hashes the ns-3 simulators' node ids and ports: it needs workload.kind = \"flow_list\" with format = \"ns3\" or \"conweave\" and ns3_topology (and no message shaper)",
        ));
    };
    // The simulator keeps one interface per neighbour (`nbr2if`), so its next hops are the
    // neighbours themselves: parallel cables between two switches have no counterpart there.
    let mut seen = std::collections::HashSet::new();
    for p in fabric.ports.iter().filter(|p| !fabric.is_host(p.owner) && !fabric.is_host(p.peer)) {
        if !seen.insert((p.owner, p.peer)) {
            return Err(crate::error::Error::invalid(
                "switch.lb",
                "ns3_ecmp: this fabric has parallel links between two switches (topology.links_per_spine above 1); the HPCC ns-3 simulator keeps one interface per neighbour, so its hash has nothing to pick among them",
            ));
        }
    }
    for h in 0..fabric.hosts {
        let tor = (fabric.tor_of_host[h as usize].0 - fabric.hosts) as usize;
        let (theirs, ours) = (m.host_switch.get(h as usize).copied(), m.switch_node.get(tor).copied());
        if theirs != ours || ours.is_none() {
            return Err(crate::error::Error::invalid(
                "workload.ns3_topology",
                format!(
                    "host {h} (node {}) links to switch {}, but its ToR is fabricsim's switch {tor}, the topology file's switch {}: for ns3_ecmp, number the hosts ToR by ToR",
                    m.host_node.get(h as usize).map_or("?".into(), |n| n.to_string()),
                    theirs.filter(|&s| s != u32::MAX).map_or("none".into(), |s| s.to_string()),
                    ours.map_or("none".into(), |s| s.to_string())
                ),
            ));
        }
    }
    Ok(())
}

/// 32-bit MurmurHash3 of `words` (as little-endian bytes) with `seed`.
pub fn murmur3(words: &[u32], seed: u32) -> u32 {
    let mut h = seed;
    for &w in words {
        let mut k = w.wrapping_mul(0xcc9e_2d51);
        k = k.rotate_left(15).wrapping_mul(0x1b87_3593);
        h ^= k;
        h = h.rotate_left(13).wrapping_mul(5).wrapping_add(0xe654_6b64);
    }
    h ^= (words.len() * 4) as u32;
    h ^= h >> 16;
    h = h.wrapping_mul(0x85eb_ca6b);
    h ^= h >> 13;
    h = h.wrapping_mul(0xc2b2_ae35);
    h ^ (h >> 16)
}

/// The selector of one switch.
#[derive(Clone, Debug)]
pub struct Ns3Ecmp {
    naming: Option<Arc<Ns3Naming>>,
    /// The switch's node id: the hash seed.
    seed: u32,
    next_hops: NextHops,
}

impl Ns3Ecmp {
    /// The candidate the simulator's switch picks for `p` among `n` (candidates in ascending
    /// node id, as fabricsim lists them).
    /// The simulator's pick for `p` among `n` next hops (0 for a packet without ns-3 names).
    #[inline]
    pub(super) fn index(&self, p: &Packet, n: usize) -> usize {
        let Some(key) = self.naming.as_deref().and_then(|m| m.key(p)) else { return 0 };
        let i = murmur3(&key, self.seed) as usize % n;
        match self.next_hops {
            NextHops::Ascending => i,
            NextHops::Descending => n - 1 - i,
        }
    }
}

super::header_hash_selector!(Ns3Ecmp);

impl crate::scheme::Scheme<super::SwitchBuild> for Ns3Ecmp {
    const NAME: &'static str = NAME;
    const SUMMARY: &'static str = SUMMARY;
    const EXAMPLE: &'static [&'static str] = &["topology={ kind = \"leaf_spine\", tors = 4, hosts_per_tor = 8, spines = 4, link_rate_gbps = 100 }", "switch.trimming=false", "switch.pfc.enabled=true", "transport.cc=line_rate", "transport.reliability=go_back_n", "workload={ kind = \"flow_list\", file = \"../data/ns3/leaf_spine_32_flows.txt\", format = \"ns3\", ns3_topology = \"../data/ns3/leaf_spine_32_topology.txt\" }"];
    type Params = Ns3EcmpParams;
    fn build(p: &Ns3EcmpParams, ctx: &mut super::SwitchBuild) -> Self {
        let seed = ctx.ns3.as_ref().and_then(|m| m.switch_node.get(ctx.switch as usize).copied()).unwrap_or(0);
        Ns3Ecmp { naming: ctx.ns3.clone(), seed, next_hops: p.next_hops }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ids::ConnId;

    #[test]
    fn murmur3_of_known_inputs() {
        // MurmurHash3_x86_32 reference values: "" with seed 0 is 0, with seed 1 0x514e28b7;
        // the 4 bytes 0x00000000 with seed 0 are 0x2362f9de.
        assert_eq!(murmur3(&[], 0), 0);
        assert_eq!(murmur3(&[], 1), 0x514e_28b7);
        assert_eq!(murmur3(&[0], 0), 0x2362_f9de);
    }

    #[test]
    fn ips_follow_node_ids() {
        assert_eq!(Ns3Naming::ip(0), 0x0b00_0001);
        assert_eq!(Ns3Naming::ip(1), 0x0b00_0101);
        assert_eq!(Ns3Naming::ip(257), 0x0b01_0101);
    }

    /// Hosts 0..32 are nodes 0..32; switch 0 is node 32, a ToR with 4 uplinks.
    fn naming() -> Arc<Ns3Naming> {
        Arc::new(Ns3Naming {
            host_node: (0..32).collect(),
            host_switch: (0..32).map(|h| 32 + h / 8).collect(),
            switch_node: (32..40).collect(),
            // Connection 0: host 0 -> 16, the first flow of the pair (sport 10000), DPORT 27861.
            conn_ports: vec![(NodeId(0), 10000, 27861)],
        })
    }

    #[test]
    fn data_and_acks_take_the_uplinks_the_simulator_took() {
        // From experiments/ns3-parity (seed 2's permutation): ns-3's trace shows node 32 sending
        // 11.0.0.1 -> 11.0.16.1 (sport 10000, dport 27861) on its interface 11 (the third of
        // spines 36..39 in interface order) and the ACK of 11.0.5.1 -> 11.0.26.1 (ports 34530
        // and 10000, the receiver's ToR being node 32 as well) on interface 10.
        let mut build = crate::net::switch_lb::SwitchBuild { seed: 1, switch: 0, tier: crate::topo::Tier::Tor, node: NodeId(32), ns3: Some(naming()) };
        let s = <Ns3Ecmp as crate::scheme::Scheme<_>>::build(&Ns3EcmpParams::default(), &mut build);
        let data = Packet { conn: ConnId(0), src: NodeId(0), dst: NodeId(16), ..Packet::default() };
        assert_eq!(s.index(&data, 4), 2, "interface 11 = candidate 2 of 9..12");
        let mut n = (*naming()).clone();
        n.conn_ports = vec![(NodeId(26), 10000, 34530)];
        let s = Ns3Ecmp { naming: Some(Arc::new(n)), seed: 32, next_hops: NextHops::Descending };
        let ack = Packet { conn: ConnId(0), src: NodeId(5), dst: NodeId(26), ..Packet::default() };
        assert_eq!(s.index(&ack, 4), 1, "interface 10 = candidate 1");
        // Without names (a switch-made packet, or no naming at all) the first candidate.
        assert_eq!(Ns3Ecmp { naming: None, seed: 32, next_hops: NextHops::Descending }.index(&data, 4), 0);
    }
}
