//! How a run is cut into partitions, and whether it can be: the assignment of every node to a
//! partition, of every task of the traffic graph to the partition that runs it, and the
//! lookahead (the least delay of anything that crosses between partitions).
//!
//! A partition is a block of ToRs with their hosts, plus the switches above them that mostly
//! connect into that block (a 3-tier fat tree's pods); switches that connect to every block
//! alike (cores, leaf-spine spines) are dealt round-robin. On a rail-optimized fabric a
//! server's GPUs hang from several leaves: the run is cut by rail where the traffic graph lets
//! a server's GPUs be apart (the TP collectives of a training step analytic, joined at the
//! coordinator and ending a collective's time later), else the ToRs that serve one server stay
//! in one block (a scalable unit), so that a server is never cut. Every cross-partition effect
//! travels over a cable or a dependency of the graph, so it takes at least the lookahead (the
//! shortest cable between partitions); dependencies shorter than that are refused.

use crate::engine::Sim;
use crate::ids::NodeId;
use crate::scenario::LinkAction;
use crate::topo::{Fabric, Tier};
use crate::transport::gate::MessageGate;
use crate::transport::recovery::SenderRecovery;
use crate::units::Time;
use crate::workload::graph::{TaskKind, Trigger};

/// A partitioning of one run.
#[derive(Clone, Debug)]
pub struct Plan {
    /// Number of partitions (at least 2).
    pub parts: usize,
    /// Partition of every node.
    pub node_part: Vec<u16>,
    /// Where every task of the traffic graph runs.
    pub task_place: Vec<Place>,
    /// Least delay between an action in one partition and its effect in another (ps, > 0).
    pub lookahead: Time,
    /// How the ToRs were dealt.
    pub cut: Cut,
}

/// How a plan deals the ToRs over the partitions ([`plan`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Cut {
    /// Consecutive blocks of ToRs (a fat tree's pods; ToRs that each serve whole servers).
    Blocks,
    /// Servers cut: each rail's leaves dealt over partitions of its own.
    ByRail,
    /// Servers spanning several ToRs kept whole (scalable units), because the cut by rail was
    /// refused for this reason.
    WholeServers(String),
}

/// Cuts the run `sim` was built for into at most `threads` partitions, or says why it must
/// run serially.
///
/// Where servers span several ToRs (a rail-optimized fabric), the run is first cut by rail,
/// servers and all ([`by_rail`]): each rail's leaves dealt over partitions of their own. A
/// pipeline's messages between two units then keep partitions of every rail busy at once,
/// where a cut into whole units leaves all but the two units that exchange them idle. That
/// holds when nothing inside a server needs its GPUs together sooner than the lookahead
/// (analytic TP collectives take longer; a message over the scale-up domain right after a
/// compute step does not): otherwise the servers are kept whole, and that cut's answer stands.
pub fn plan(sim: &Sim, threads: usize) -> Result<Plan, String> {
    serial_only(sim)?;
    let f = &sim.net.fabric;
    let tors = tors_of(f);
    let (block, blocks) = tor_blocks(f, &tors);
    let mut refused = None;
    if blocks < tors.len() && threads > 1 {
        let parts = threads.min(tors.len()).min(u16::MAX as usize);
        match cut(sim, &tors, &by_rail(f, &tors, parts), parts) {
            Ok(p) => return Ok(Plan { cut: Cut::ByRail, ..p }),
            Err(why) => refused = Some(why),
        }
    }
    let parts = threads.min(blocks).min(u16::MAX as usize);
    if parts < 2 {
        return Err(if blocks == tors.len() {
            format!("the fabric has {} ToR switch(es): a partition needs at least one", tors.len())
        } else {
            format!("the fabric's {} ToR switches form {blocks} block(s) that share servers (a scalable unit's rail leaves), and a partition keeps a server whole", tors.len())
        });
    }
    // Consecutive blocks together (a fat tree's pods).
    let tor_part: Vec<u16> = block.iter().map(|&b| (b as usize * parts / blocks) as u16).collect();
    cut(sim, &tors, &tor_part, parts).map(|p| Plan { cut: refused.map_or(Cut::Blocks, Cut::WholeServers), ..p })
}

/// Cuts the run into `parts` partitions, ToR `tors[i]` in partition `tor_part[i]`: its hosts
/// with it, the switches above where most of their neighbours are.
fn cut(sim: &Sim, tors: &[u32], tor_part: &[u16], parts: usize) -> Result<Plan, String> {
    let f = &sim.net.fabric;
    let mut node_part = vec![u16::MAX; f.tier.len()];
    for (i, &t) in tors.iter().enumerate() {
        node_part[t as usize] = tor_part[i];
    }
    for h in 0..f.hosts {
        node_part[h as usize] = node_part[f.tor_of_host[h as usize].idx()];
    }
    // A server's scale-up switch and the GPUs' ports on it, an island with no cable to the
    // rails, go where most of the server's NICs are (their traffic's other half).
    for n in f.hosts..f.tier.len() as u32 {
        if f.tier[n as usize] != Tier::ScaleUp {
            continue;
        }
        let mut votes = vec![0u32; parts];
        for &p in f.ports_of(NodeId(n)) {
            votes[node_part[f.rank_of(sim.net.port_peer[p.idx()]) as usize] as usize] += 1;
        }
        let pick = most_voted(&votes, f.index_in_tier[n as usize]);
        node_part[n as usize] = pick;
        for &p in f.ports_of(NodeId(n)) {
            node_part[sim.net.port_peer[p.idx()].idx()] = pick;
        }
    }
    // Upper tiers, lowest first: each joins the partition most of its assigned neighbours are
    // in (a tie: a core sees every pod alike, a unit's spine each rail of the unit).
    for tier in [Tier::Agg, Tier::Core] {
        for n in f.hosts..f.tier.len() as u32 {
            if f.tier[n as usize] != tier {
                continue;
            }
            let mut votes = vec![0u32; parts];
            for &p in f.ports_of(NodeId(n)) {
                let peer = sim.net.port_peer[p.idx()];
                if let Some(&q) = node_part.get(peer.idx()).filter(|&&q| q != u16::MAX) {
                    votes[q as usize] += 1;
                }
            }
            node_part[n as usize] = most_voted(&votes, f.index_in_tier[n as usize]);
        }
    }
    if let Some(n) = node_part.iter().position(|&q| q == u16::MAX) {
        return Err(format!("node {n} is in no tier a partition covers"));
    }
    // Lookahead: the least propagation delay over cables between partitions (a packet's
    // arrival and a PFC frame both take at least that long).
    let lookahead = (0..f.ports.len())
        .filter(|&p| node_part[sim.net.ports[p].owner.idx()] != node_part[sim.net.port_peer[p].idx()])
        .map(|p| f.ports[p].latency)
        .min()
        .unwrap_or(Time::MAX);
    if lookahead == Time::ZERO {
        return Err("a cable between partitions has no propagation delay (no lookahead)".into());
    }
    let task_place = task_places(sim, &node_part, lookahead)?;
    Ok(Plan { parts, node_part, task_place, lookahead, cut: Cut::Blocks })
}

/// The partition with the most `votes`; a tie goes round-robin by the switch's `index` in its
/// tier, over the tied partitions only, so that switches that see several partitions alike
/// (cores over pods; with a cut by rail, a unit's spines over its rails, a server's scale-up
/// switch over its GPUs) spread over those partitions instead of piling on the first.
fn most_voted(votes: &[u32], index: u32) -> u16 {
    let best = *votes.iter().max().expect("at least two partitions");
    let tied = votes.iter().filter(|&&v| v == best).count();
    let nth = index as usize % tied;
    votes.iter().enumerate().filter(|&(_, &v)| v == best).nth(nth).expect("within the ties").0 as u16
}

/// Where GPU `g`'s ToR is in `tors` (ascending, [`tors_of`]).
fn tor_index(f: &Fabric, tors: &[u32], g: u32) -> usize {
    tors.binary_search(&f.tor_of_host[g as usize].0).expect("a GPU hangs from a ToR")
}

/// The ToRs of fabric `f`, by node.
fn tors_of(f: &Fabric) -> Vec<u32> {
    (f.hosts..f.tier.len() as u32).filter(|&n| f.tier[n as usize] == Tier::Tor).collect()
}

/// The most partitions `threads` threads can cut fabric `f` into (before asking whether the
/// run can be cut at all, or by rail): one per ToR, at most.
pub fn partitions_at_most(f: &Fabric, threads: usize) -> usize {
    threads.min(tors_of(f).len()).max(1)
}

/// The partition of each ToR of `tors` in a cut by rail into `parts` (≥ 2) partitions: each
/// rail (the lowest index in its server of a GPU a ToR serves) gets its share of the
/// partitions, consecutive rails together when there are fewer partitions than rails, and its
/// leaves are dealt over them in turn. On a rail-optimized fabric neighbouring units (a
/// pipeline's stages in Megatron's default order) then sit in different partitions of each
/// rail: a message between them keeps twice the partitions busy that consecutive blocks would.
fn by_rail(f: &Fabric, tors: &[u32], parts: usize) -> Vec<u16> {
    let mut rail = vec![u32::MAX; tors.len()];
    if let Some(servers) = &f.servers {
        for g in 0..f.ranks() {
            let t = tor_index(f, tors, g);
            rail[t] = rail[t].min(servers.rail_of(NodeId(g)));
        }
    }
    let mut rails: Vec<u32> = rail.clone();
    rails.sort_unstable();
    rails.dedup();
    let mut dealt = vec![0usize; rails.len()];
    rail.iter()
        .map(|r| {
            let k = rails.binary_search(r).expect("listed");
            let lo = k * parts / rails.len();
            let hi = ((k + 1) * parts / rails.len()).max(lo + 1);
            dealt[k] += 1;
            (lo + (dealt[k] - 1) % (hi - lo)) as u16
        })
        .collect()
}

/// The block of each ToR of `tors` (numbered in order of their first ToR) and the number of
/// blocks: the ToRs that serve GPUs of one server go together, so that a server, whose GPUs
/// meet over its scale-up domain and whose TP collectives join them at once, is never cut. On
/// a rail-optimized fabric that is a scalable unit's leaves (GPU r of each of its servers on
/// leaf r), with rack wiring or without servers each ToR alone.
fn tor_blocks(f: &Fabric, tors: &[u32]) -> (Vec<u32>, usize) {
    // Union-find over the ToRs, each set's root its lowest index.
    let mut parent: Vec<u32> = (0..tors.len() as u32).collect();
    fn root(parent: &mut [u32], mut t: u32) -> u32 {
        while parent[t as usize] != t {
            parent[t as usize] = parent[parent[t as usize] as usize];
            t = parent[t as usize];
        }
        t
    }
    if let Some(servers) = &f.servers {
        let index = |g: u32| tor_index(f, tors, g) as u32;
        for g in 1..f.ranks() {
            if servers.server_of(NodeId(g)) == servers.server_of(NodeId(g - 1)) {
                let (a, b) = (root(&mut parent, index(g - 1)), root(&mut parent, index(g)));
                parent[a.max(b) as usize] = a.min(b);
            }
        }
    }
    let mut block = vec![0u32; tors.len()];
    let mut next = 0;
    for t in 0..tors.len() as u32 {
        let r = root(&mut parent, t);
        block[t as usize] = if r == t {
            next += 1;
            next - 1
        } else {
            block[r as usize]
        };
    }
    (block, next as usize)
}

/// Features whose state is shared between partitions without a packet to carry it.
fn serial_only(sim: &Sim) -> Result<(), String> {
    if sim.tracer.records_anything() || sim.k.log.records_anything() || sim.net.pfc.log_on {
        return Err("tracing and event logs sample the whole fabric".into());
    }
    if sim.link_events.iter().any(|e| e.action == LinkAction::Reroute) {
        return Err("`reroute_after_us` recomputes every switch's routes at once".into());
    }
    if sim.hosts.credits.on {
        return Err("receiver credits (`transport.credit`): a dropped PULL returns its credit to the sender at once".into());
    }
    if sim.hosts.conns.first().is_some_and(|c| c.recovery.completes_on_settle()) {
        return Err("the loss-recovery mode completes messages on the receiver's word, not on an ACK".into());
    }
    if sim.hosts.lanes.first().is_some_and(|l| l.gate.reads_delivery_time()) {
        return Err("the message gate reads the receiver's delivery time".into());
    }
    if sim.hosts.drop_plan.iter().any(|d| d.4 > Time::ZERO) {
        return Err("`run.drop_packets` holds a packet at a switch on the sender's count".into());
    }
    if sim.hosts.tp.coalescing() && several_messages_on_a_connection(sim) {
        return Err("ACK coalescing (`transport.ack_every`, `transport.ack_coalesce_bytes`) with several messages on a connection: a receiver acknowledges at once when it holds all the sender has posted, which it reads from the sender's state".into());
    }
    if sim.net.fabric.nic_ports() > 1 {
        return Err("a send striped over a NIC's ports (planes, dual-ToR) posts its parts on ports under different leaves".into());
    }
    if sim.total_sends == 0 {
        return Err("the workload sends nothing".into());
    }
    Ok(())
}

/// Whether some connection carries more than one message.
fn several_messages_on_a_connection(sim: &Sim) -> bool {
    let mut seen = vec![false; sim.hosts.conns.len()];
    sim.traffic.messages().any(|m| std::mem::replace(&mut seen[m.conn as usize], true))
}

/// Where a task of the traffic graph runs in a partitioned run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Place {
    /// In one partition: a message at its sender's, a join whose inputs all fire there (some
    /// may fire everywhere: a stream's start, a compute step after one).
    Part(u16),
    /// In every partition at the same point: a join without dependencies (it fires at its
    /// start time), or one whose inputs are all such joins. Each partition applies its edges to
    /// its own tasks.
    Everywhere,
    /// At the coordinator: a join whose inputs fire in several partitions (a collective's end
    /// marker). Partitions report its inputs; when the last one comes, it fires at once at
    /// that point (its edges then act on the partitions through messages, which needs every
    /// edge out of it to take at least the lookahead), or, when an input's delay or its start
    /// time puts it later, the coordinator schedules it in every partition as an `Everywhere`
    /// join.
    Coordinator,
}

/// What the inputs of a join seen so far have in common.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Inputs {
    None,
    Place(Place),
    Mixed,
}

/// Where each task runs, in topological order of the graph; checks that every dependency
/// between places leaves the partitions time to hear of it (the lookahead).
fn task_places(sim: &Sim, node_part: &[u16], lookahead: Time) -> Result<Vec<Place>, String> {
    let traffic = &sim.traffic;
    let n = traffic.tasks.len();
    let mut place = vec![Place::Everywhere; n];
    let mut inputs = vec![Inputs::None; n];
    let mut left: Vec<u32> = traffic.tasks.iter().map(|t| t.deps()).collect();
    let mut ready: Vec<u32> = (0..n as u32).filter(|&t| left[t as usize] == 0).collect();
    let mut seen = 0;
    // A join fires at once, in the event of its last input, if an input has no delay.
    let may_fire_at_once: Vec<bool> = {
        let mut v = vec![false; n];
        for from in 0..n {
            for e in traffic.edges_of(from as u32) {
                if e.delay == Time::ZERO {
                    v[e.to as usize] = true;
                }
            }
        }
        v
    };
    // Where an edge out of `from` fires: a delivery at the receiver, a completion at the
    // sender, a join where it runs.
    let fires_at = |place: &[Place], from: usize, on: Trigger| -> Place {
        match traffic.tasks[from].kind() {
            TaskKind::Send { .. } => {
                let c = traffic.conns[traffic.send_conn(from as u32) as usize];
                Place::Part(node_part[(if on == Trigger::Delivered { c.dst } else { c.src }).idx()])
            }
            _ => place[from],
        }
    };
    // Where a join that waits for `from` hears of it: a coordinator join that never fires at
    // once is scheduled in every partition (`joins.rs`), each applying its own edges, as a
    // join that runs everywhere does (an analytic collective's end, its start's delay after
    // it: the tasks after it run where their other inputs do, not at the coordinator).
    let heard_at = |place: &[Place], from: usize, on: Trigger| -> Place {
        match fires_at(place, from, on) {
            Place::Coordinator if !may_fire_at_once[from] => Place::Everywhere,
            p => p,
        }
    };
    while let Some(t) = ready.pop() {
        seen += 1;
        let i = t as usize;
        place[i] = match traffic.tasks[i].kind() {
            TaskKind::Send { .. } => Place::Part(node_part[(traffic.conns[traffic.send_conn(t) as usize].src).idx()]),
            _ => match inputs[i] {
                Inputs::None => Place::Everywhere,
                Inputs::Place(p) => p,
                Inputs::Mixed => Place::Coordinator,
            },
        };
        for e in traffic.edges_of(t) {
            let at = heard_at(&place, i, e.on);
            let to = e.to as usize;
            inputs[to] = match (inputs[to], at) {
                (_, Place::Coordinator) => Inputs::Mixed,
                (Inputs::None, p) => Inputs::Place(p),
                // An input that fires everywhere fires in the partition of every other input
                // too: the join can run there.
                (Inputs::Place(Place::Everywhere), p) | (Inputs::Place(p), Place::Everywhere) => Inputs::Place(p),
                (Inputs::Place(q), p) if q == p => Inputs::Place(p),
                _ => Inputs::Mixed,
            };
            left[to] -= 1;
            if left[to] == 0 {
                ready.push(e.to);
            }
        }
    }
    if seen != n {
        return Err("the traffic graph has a cycle".into());
    }
    // A coordinator join that may fire at once (an input without delay) acts on the
    // partitions at that point: its edges must take the lookahead, and it must not wait for
    // a start time that could fall before they hear of it.
    let too_close = |from: usize, to: u32, d: Time| {
        format!(
            "the traffic graph has a dependency between partitions shorter than the lookahead ({} ps): task {from} ({:?} in {:?}) -> {to} ({:?} in {:?}) after {d} ps",
            lookahead, traffic.tasks[from].kind(), place[from], traffic.tasks[to as usize].kind(), place[to as usize]
        )
    };
    for (from, &at_once) in may_fire_at_once.iter().enumerate() {
        for e in traffic.edges_of(from as u32) {
            let (source, target) = (fires_at(&place, from, e.on), place[e.to as usize]);
            let ok = match (source, target) {
                (Place::Part(p), Place::Part(q)) => p == q || e.delay >= lookahead,
                (Place::Everywhere, _) => true,
                (Place::Coordinator, Place::Part(_) | Place::Everywhere) => !at_once || e.delay >= lookahead,
                // A coordinator join's input comes in the event that fires it (reported, or
                // from a coordinator join fired at once), or late enough to be scheduled.
                (_, Place::Coordinator) => e.delay == Time::ZERO || e.delay >= lookahead,
                (Place::Part(_), Place::Everywhere) => false,
            };
            if !ok {
                return Err(too_close(from, e.to, e.delay));
            }
        }
    }
    for (t, task) in traffic.tasks.iter().enumerate() {
        if place[t] == Place::Coordinator && may_fire_at_once[t] && task.not_before() > Time::ZERO {
            return Err(format!("the traffic graph has a join of several partitions (task {t}) with a start time"));
        }
    }
    Ok(place)
}
