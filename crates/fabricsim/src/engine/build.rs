//! Builds a simulation's state from a validated scenario, one layer at a time: the network
//! (ports with their queue profiles and failures, switch path selectors, PFC), the hosts (a
//! connection per workload connection with its congestion control, path selector, loss
//! recovery halves, credits and gate) and the tracer.

use super::trace::Tracer;
use crate::error::Result;
use crate::net::nic::{HostState, SprayedPorts};
use crate::net::port::PortState;
use crate::kernel::store::{Layout, Parted, Store, Whole};
use crate::net::switch_lb::SwitchLb;
use crate::net::Network;
use crate::rng::Rng;
use crate::scenario::Setup;
use crate::topo::Fabric;
use crate::workload::graph::Traffic;
use crate::transport::cc::PathInfo;
use crate::transport::credit::{CreditBuild, CreditState, Credits};
use crate::transport::gate::{GateBuild, MessageGate};
use crate::transport::hosts::{Hosts, Lane, TransportParams};
use crate::transport::lb::LbBuild;
use crate::transport::receiver::Receiver;
use crate::transport::Connection;
use crate::ids::NodeId;
use crate::units::{Bytes, Time};
use std::collections::HashMap;

/// The node each element of a simulation's arrays belongs to, mapped through `of_node`: a
/// port is its owner node's, a switch's selector and stream the switch's, a NIC its host's; a
/// connection's sender half, lane and counters are its source host's, its receiver half its
/// destination's. Mapped to whether a partition holds it ([`Holding`]) or to the partition
/// that holds it (the parallel run's merge).
pub(crate) struct Owners<'a, T> {
    pub fabric: &'a Fabric,
    pub traffic: &'a Traffic,
    pub of_node: &'a dyn Fn(NodeId) -> T,
}

impl<T> Owners<'_, T> {
    pub(crate) fn port(&self, p: u32) -> T {
        (self.of_node)(self.fabric.ports[p as usize].owner)
    }
    pub(crate) fn switch(&self, s: u32) -> T {
        (self.of_node)(NodeId(self.fabric.hosts + s))
    }
    pub(crate) fn host(&self, h: u32) -> T {
        (self.of_node)(NodeId(h))
    }
    pub(crate) fn sender(&self, c: u32) -> T {
        (self.of_node)(self.traffic.conns[c as usize].src)
    }
    pub(crate) fn receiver(&self, c: u32) -> T {
        (self.of_node)(self.traffic.conns[c as usize].dst)
    }
}

/// Which elements a simulation holds: those of the nodes `mine` names (every node in a serial
/// run, a partition's own in a parallel one; `engine/parallel/plan.rs`). A connection's record
/// is held at both ends (the receiver reads the sender's posted messages).
pub(crate) type Holding<'a> = Owners<'a, bool>;

impl<'a> Holding<'a> {
    /// The elements of the nodes `mine` names.
    pub(crate) fn new(setup: &'a Setup, mine: &'a dyn Fn(NodeId) -> bool) -> Self {
        Owners { fabric: &setup.fabric, traffic: &setup.traffic, of_node: mine }
    }
    /// Every element (a serial run).
    pub(crate) fn all(setup: &'a Setup) -> Self {
        Holding::new(setup, &|_| true)
    }
    pub(crate) fn conn(&self, c: u32) -> bool {
        self.sender(c) || self.receiver(c)
    }
}

/// The network layer: one port state per fabric port (failed cables down, each port's queue
/// profile), a selector and a random stream per switch, the PFC accounting; of these, those
/// `hold` names, each kept as it is made, so a partition never holds the others' ports, not
/// even while it is built.
pub(super) fn network<L: Layout>(setup: &Setup, hold: &Holding) -> Result<Network<L>> {
    // Shared, not copied: only a routing re-convergence changes it, and then copies it.
    let fabric = std::sync::Arc::clone(&setup.fabric);
    let seed = setup.scenario.seed;
    let mut states = fabric.ports.iter().enumerate().map(|(i, spec)| {
        let to_switch = !fabric.is_host(spec.peer);
        let is_nic = fabric.is_host(spec.owner);
        PortState::new(spec, is_nic, to_switch, fabric.switch_latency, Rng::stream(seed, "port", i as u64))
    });
    let mut ports = L::cut(&mut states, |p| hold.port(p));
    crate::net::port::apply_failures(&fabric, &mut ports);
    for (p, &q) in setup.qdisc.port_profile.iter().enumerate() {
        if let Some(ps) = ports.get_mut(p as u32) {
            ps.qdisc = q;
        }
    }
    let switch_lb = setup.scenario.switch.lb.build(&fabric, seed, setup.traffic.ns3.as_ref())?;
    let switch_observes: Vec<bool> = switch_lb.iter().map(|s| s.observes_all()).collect();
    let switch_lb = L::cut(switch_lb, |s| hold.switch(s));
    Ok(Network {
        port_peer: std::sync::Arc::clone(&fabric.port_peer),
        any_observer: switch_observes.iter().any(|&o| o),
        switch_observes,
        route_tor: std::sync::Arc::clone(&fabric.route_tor),
        switch_lb,
        switch_rng: L::cut((0..fabric.switches()).map(|s| Rng::stream(seed, "switch_lb", s as u64)), |s| hold.switch(s)),
        ports,
        pfc: setup.pfc.clone(),
        qdisc: setup.qdisc.clone(),
        class: crate::net::packet::ClassTable::new(setup.scenario.transport.ack_class == crate::scenario::AckClass::Data),
        // Sized once the connections are built (`Sim::unseeded_with_pool`).
        path_counts: Vec::new(),
        routes: fabric.routes.clone(),
        hosts: NodeId(fabric.hosts),
        fabric,
    })
}

/// The host layer: NIC schedulers, and for every connection of the workload its transport
/// built from `[transport]` for its path (base RTT and BDP of its hop count).
pub(super) fn hosts<L: Layout>(setup: &Setup, fabric: &Fabric, hold: &Holding) -> Hosts<L> {
    let seed = setup.scenario.seed;
    let tr = &setup.scenario.transport;
    let mut tp = TransportParams {
        mss: tr.mtu_bytes - tr.header_bytes,
        header: tr.header_bytes,
        ack_bytes: tr.ack_bytes,
        ack_every: tr.ack_every,
        ack_coalesce_bytes: tr.ack_coalesce_bytes,
        ack_on_ce: tr.ack_on_ce,
        rto: setup.rto,
        ect: tr.ecn_capable,
        signals: crate::transport::signal::Signals::build(&tr.cc),
        rtt_sample_stride: 0,
    };
    // Base RTT is the same for every path of a tier-symmetric fabric with one hop count that
    // starts on one kind of host link (rate, delay): compute once per such kind (a GPU's
    // scale-up port and its NIC both reach a peer in 2 hops, over different links).
    let mut rtt_by_hops: HashMap<(usize, u64, Time), Time> = HashMap::new();
    // The gates' oversubscription ratio depends on the two ToRs only.
    let mut ratio_by_tors: HashMap<(NodeId, NodeId), f64> = HashMap::new();
    let n = setup.traffic.conns.len();
    let (mut conns, mut credit, mut lanes) = (Vec::with_capacity(n), Vec::new(), Vec::<Lane>::with_capacity(n));
    let mut rx = Vec::with_capacity(n);
    let mtu = (tp.mss + tp.header) as u64;
    let mut src_conns = vec![0u32; fabric.hosts as usize];
    for f in &setup.traffic.conns {
        src_conns[f.src.idx()] += 1;
    }
    let queue_bytes = eq1_queue_bytes(setup);
    let cc_of = tr.cc_of_hosts(fabric.hosts);
    for (i, f) in setup.traffic.conns.iter().enumerate() {
        let hops = super::hop_count(fabric, f.src, f.dst);
        let nic = &fabric.ports[fabric.host_port[f.src.idx()].idx()];
        let rtt = *rtt_by_hops.entry((hops, nic.rate.0, nic.latency)).or_insert_with(|| fabric.base_rtt(f.src, f.dst, mtu, tp.ack_bytes as u64));
        // A spraying NIC's connection sends on all its ports.
        let host_rate = fabric.nic_rate(f.src, false, |p| fabric.ports[p.idx()].rate);
        // A GPU's scale-up port runs its GPU's congestion control.
        let cc_config = cc_of[fabric.rank_of(f.src) as usize];
        let pacer_flows = pacer_flows(cc_config);
        let path = PathInfo { mtu_bytes: Bytes(mtu), host_rate, base_rtt: rtt, bdp_bytes: host_rate.bytes_in(rtt), hops: hops as u32, net_base_rtt: setup.base_rtt, src_conns: src_conns[f.src.idx()], queue_bytes: Bytes(queue_bytes), flows_per_host: pacer_flows.unwrap_or(src_conns[f.src.idx()]) };
        let cc = cc_config.build(&mut path.clone());
        let mut lb_ctx = LbBuild { path, rng: Rng::stream(seed, "conn", i as u64) };
        let lb = tr.lb.build(&mut lb_ctx);
        let (tx_recovery, rx_recovery) = (tr.reliability.build(&mut path.clone()), tr.reliability.build_receiver());
        let tors = (fabric.tor_of_host[f.src.idx()], fabric.tor_of_host[f.dst.idx()]);
        let oversubscription = *ratio_by_tors.entry(tors).or_insert_with(|| fabric.oversubscription_on_path(f.src, f.dst));
        lanes.push(Lane { pending: Default::default(), gate: tr.gate.build(&mut GateBuild { path, oversubscription }), in_flight_msgs: 0, in_flight_bytes: Bytes::ZERO });
        let mut conn = Connection::new(f.src, f.dst, cc, lb, lb_ctx.rng, tx_recovery);
        conn.base_rtt = rtt;
        conns.push(conn);
        rx.push(Receiver::new(rx_recovery, rtt));
        // (Without receiver credits nothing reads a connection's credit state.)
        if tr.credit.enabled() {
            let credit_policy = tr.credit.build(&mut CreditBuild { bdp_bytes: path.bdp_bytes, mtu_bytes: Bytes(mtu) });
            credit.push(CreditState::new(credit_policy.unsolicited_packets()));
        }
    }
    tp.rtt_sample_stride = lanes.first().map_or(0, |l| l.gate.rtt_sample_stride());
    let whole = Hosts {
        nics: (0..fabric.hosts).map(|h| HostState::new(fabric.host_port[h as usize], fabric.nic_siblings(NodeId(h)).next().unwrap_or(NodeId(h)))).collect(),
        stats: vec![Default::default(); n],
        conns,
        rx,
        lanes,
        credits: Credits { on: tr.credit.enabled(), state: credit, policy: tr.credit.policy(), pacers: if tr.credit.enabled() { (0..fabric.hosts).map(|_| Default::default()).collect() } else { Vec::new() } },
        tp,
        drop_plan: setup.scenario.run.drop_packets.iter().map(|d| (d.flow, d.seq, d.transmission, 0, d.hold_us.map_or(Time::ZERO, crate::units::us_to_ps))).collect(),
        acked: Default::default(),
        sprayed: sprayed_ports(fabric, &setup.traffic.conns),
    };
    cut_hosts(whole, hold)
}

/// Which port of the peer each port of a spraying NIC reaches, per connection
/// ([`SprayedPorts`]): the port on its own plane (or leaf of the pair), else the first it
/// reaches (a dual-ToR peer whose port on that side is cut), else none.
fn sprayed_ports(fabric: &Fabric, conns: &[crate::workload::graph::ConnSpec]) -> Option<SprayedPorts> {
    let (gpus, ports) = fabric.sprayed_ports()?;
    let mut peer_port = vec![SprayedPorts::NONE; conns.len() * ports as usize];
    let on = |h: NodeId, q: u32| NodeId(h.0 % gpus + q * gpus);
    for (c, f) in conns.iter().enumerate().filter(|(_, f)| f.src.0 < gpus * ports) {
        for q in 0..ports {
            let reaches = |r: &u32| fabric.reachable(on(f.src, q), on(f.dst, *r));
            if let Some(r) = std::iter::once(q).chain(0..ports).find(reaches) {
                peer_port[c * ports as usize + q as usize] = r as u8;
            }
        }
    }
    Some(SprayedPorts { gpus, ports, peer_port, by_entropy: fabric.ports_by_entropy() })
}

/// Eq. 1's Q (subflow TCP): the largest bounded switch-port data buffer (PFC: unbounded).
fn eq1_queue_bytes(setup: &Setup) -> u64 {
    let q = &setup.qdisc;
    (0..q.profiles.len()).filter(|&i| q.switch_ports[i] > 0).filter_map(|i| q.profiles[i].bounded_buffer()).max().unwrap_or(0)
}

/// The `pacer`'s `flows_per_host`, when `cc` is the pacer and sets one.
fn pacer_flows(cc: &crate::transport::cc::CcConfig) -> Option<u32> {
    match cc {
        crate::transport::cc::CcConfig::Pacer(p) => p.flows_per_host,
        _ => None,
    }
}

/// The loss-recovery timers of `setup` as `fabricsim check` prints them, with their values on
/// the fabric's longest path (host 0 to the last host, as many flows on host 0 as the
/// workload puts there): the shared RTO when the selected mode runs it, then the mode's own
/// timers.
pub fn recovery_timers(setup: &Setup) -> Vec<String> {
    let (fabric, tr) = (&setup.fabric, &setup.scenario.transport);
    // The last GPU, not its scale-up port (which host 0 cannot reach), on a fabric of servers.
    let (src, dst) = (NodeId(0), NodeId(fabric.ranks().saturating_sub(1)));
    let host_rate = fabric.ports[fabric.host_port[src.idx()].idx()].rate;
    let mtu = tr.mtu_bytes as u64;
    let src_conns = (setup.traffic.conns.iter().filter(|c| c.src == src).count() as u32).max(1);
    let path = PathInfo {
        mtu_bytes: Bytes(mtu),
        host_rate,
        base_rtt: setup.base_rtt,
        bdp_bytes: setup.bdp_bytes,
        hops: super::hop_count(fabric, src, dst) as u32,
        net_base_rtt: setup.base_rtt,
        src_conns,
        queue_bytes: Bytes(eq1_queue_bytes(setup)),
        flows_per_host: pacer_flows(tr.cc_of_host(src.0)).unwrap_or(src_conns),
    };
    use crate::transport::recovery::SenderRecovery;
    let mode = tr.reliability.build(&mut path.clone());
    let mut lines = Vec::new();
    if mode.uses_shared_rto() {
        lines.push(format!(
            "RTO {} (transport.rto_us, shared): a packet unacknowledged this long is declared lost; each expiry that declares packets lost counts as a timeout",
            crate::units::ShowTime(setup.rto)
        ));
    } else {
        lines.push("shared RTO off (transport.rto_us unused)".to_string());
    }
    lines.extend(mode.own_timers());
    lines
}

/// The packet and drop logs of `run.packet_log_conns` and `run.event_log`.
pub(super) fn packet_log(setup: &Setup) -> crate::kernel::packet_log::PacketLog {
    let mut packet_conns = setup.scenario.run.packet_log_conns.clone();
    packet_conns.sort_unstable();
    packet_conns.dedup();
    crate::kernel::packet_log::PacketLog { log_drops: setup.scenario.run.event_log, packet_conns, ..Default::default() }
}

/// The sampler of `run.trace_*` and `run.ack_log_conns`.
pub(super) fn tracer(setup: &Setup) -> Tracer {
    let mut ack_conns = setup.scenario.run.ack_log_conns.clone();
    ack_conns.sort_unstable();
    Tracer {
        interval: setup.trace_interval,
        conns: setup.trace_conns.clone(),
        ports: setup.trace_ports.clone(),
        ack_conns,
        log_gates: setup.scenario.run.gate_log,
        flowlets: (!setup.flowlet_gaps.is_empty()).then(|| Box::new(super::flowlets::FlowletMeter::new(setup.flowlet_gaps.clone()))),
        imbalance: if setup.trace_interval > Time::ZERO { super::uplink_meter::UplinkMeter::new(&setup.fabric, &setup.trace_ports) } else { None },
        ..Default::default()
    }
}

/// A whole simulation's network cut down to what `hold` names (partition 0 of a parallel run
/// is cut from the simulation built to plan the run, instead of built again).
pub(super) fn cut_network(net: Network<Whole>, hold: &Holding) -> Network<Parted> {
    let Network { fabric, routes, hosts, ports, port_peer, switch_lb, switch_rng, switch_observes, any_observer, route_tor, pfc, qdisc, class, path_counts } = net;
    let (ports, switch_lb, switch_rng) = (Parted::cut(ports, |p| hold.port(p)), Parted::cut(switch_lb, |s| hold.switch(s)), Parted::cut(switch_rng, |s| hold.switch(s)));
    Network { fabric, routes, hosts, ports, port_peer, switch_lb, switch_rng, switch_observes, any_observer, route_tor, pfc, qdisc, class, path_counts }
}

/// Every host and connection's state cut down to what `hold` names (a whole layout keeps all).
pub(super) fn cut_hosts<L: Layout>(h: Hosts<Whole>, hold: &Holding) -> Hosts<L> {
    let Hosts { nics, conns, stats, rx, lanes, credits, tp, drop_plan, acked, sprayed } = h;
    Hosts {
        nics: L::cut(nics, |h| hold.host(h)),
        conns: L::cut(conns, |c| hold.conn(c)),
        stats: L::cut(stats, |c| hold.sender(c)),
        rx: L::cut(rx, |c| hold.receiver(c)),
        lanes: L::cut(lanes, |c| hold.sender(c)),
        credits,
        tp,
        drop_plan,
        acked,
        sprayed,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::Sim;

    /// Every array of a simulation cut by `hold` holds exactly the elements `hold` names, and
    /// building a partition directly gives the same elements as cutting a whole simulation.
    #[test]
    fn a_partition_holds_exactly_what_its_holding_names_built_or_cut() {
        let setup = crate::scenario::tests::setup("", &["topology.tors=4", "topology.hosts_per_tor=3", "topology.spines=2"]).unwrap();
        let mine = |n: NodeId| n.0 % 3 != 1;
        let hold = Holding::new(&setup, &mine);
        let cut = Sim::unseeded(&setup).unwrap().cut(&hold);
        let built = Sim::<Parted>::unseeded_in(&setup, 1024, &hold).unwrap();
        let (fabric, traffic) = (&setup.fabric, &setup.traffic);
        for sim in [&cut, &built] {
            let (net, hosts) = (&sim.net, &sim.hosts);
            for p in 0..fabric.ports.len() as u32 {
                assert_eq!(net.ports.holds(p), mine(fabric.ports[p as usize].owner), "port {p}");
            }
            for s in 0..fabric.switches() {
                assert_eq!(net.switch_lb.holds(s), mine(NodeId(fabric.hosts + s)), "switch {s}");
                assert_eq!(net.switch_rng.holds(s), mine(NodeId(fabric.hosts + s)), "switch {s}'s stream");
            }
            for h in 0..fabric.hosts {
                assert_eq!(hosts.nics.holds(h), mine(NodeId(h)), "host {h}");
            }
            for (c, f) in traffic.conns.iter().enumerate() {
                let c = c as u32;
                assert_eq!((hosts.lanes.holds(c), hosts.stats.holds(c)), (mine(f.src), mine(f.src)), "connection {c}'s sender side");
                assert_eq!(hosts.rx.holds(c), mine(f.dst), "connection {c}'s receiver");
                assert_eq!(hosts.conns.holds(c), mine(f.src) || mine(f.dst), "connection {c}'s record");
            }
        }
        // Some of each kind is held and some is not (the predicate cuts through every array).
        assert!(cut.net.ports.held().len() > 0 && cut.net.ports.held().len() < fabric.ports.len());
        assert!(cut.hosts.rx.held().len() > 0 && cut.hosts.rx.held().len() < traffic.conns.len());
        // The same elements either way (compared by their debug form: the states hold no time yet).
        let show = |s: &Sim<Parted>| format!("{:?} {:?} {:?}", s.net.ports.held().collect::<Vec<_>>(), s.hosts.nics.held().collect::<Vec<_>>(), s.hosts.rx.held().collect::<Vec<_>>());
        assert_eq!(show(&cut), show(&built));
    }
}
