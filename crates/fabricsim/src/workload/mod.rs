//! Workloads: what the hosts exchange and when. Every workload compiles to a [`graph::Traffic`]:
//! connections, messages posted on them, and dependencies between messages. Flow workloads
//! produce a list of [`FlowSpec`]s first (one connection and one message per flow, or under a
//! message shaper one per sub-QP, see [`flows_to_traffic`]; a flow may wait for another flow to
//! finish, `after`, which is how all-to-all limits concurrent flows per host); collective
//! workloads ([`collective`]) build the graph directly.
//!
//! Adding a workload: one file with a params struct and a `generate` function, one variant in
//! [`WorkloadConfig`], one row in [`REGISTRY`].

use crate::units::Bytes;
pub mod all_to_all;
pub mod chakra;
pub mod collective;
pub mod flow_list;
pub mod graph;
pub mod input_files;
pub mod incast;
pub mod open_loop;
pub mod permutation;
pub mod rdma_writes;
pub mod run;
pub mod size_cdf;
pub mod training;

use crate::error::{Error, Result};
use crate::budget::Budget;
use graph::{GraphBuilder, GraphSize, Traffic, Trigger};
use crate::ids::NodeId;
use crate::topo::Fabric;
use crate::rng::Rng;
use crate::transport::shaper::AnyShaper;
use crate::units::Time;
use serde::Serialize;
pub use input_files::InputFiles;

/// One flow to simulate.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FlowSpec {
    /// Sending host.
    pub src: NodeId,
    /// Receiving host.
    pub dst: NodeId,
    /// Payload bytes.
    pub bytes: Bytes,
    /// Earliest start time.
    pub start: Time,
    /// If set, the flow starts only when this flow (an index into the list) has finished, and
    /// at the later of that finish and `start`.
    pub after: Option<u32>,
}

/// Scenario selection of a workload (`[workload]`, `kind = ...`).
#[derive(Clone, Debug, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum WorkloadConfig {
    /// See [`permutation`].
    Permutation(permutation::PermutationParams),
    /// See [`incast`].
    Incast(incast::IncastParams),
    /// See [`all_to_all`].
    AllToAll(all_to_all::AllToAllParams),
    /// See [`flow_list`].
    FlowList(flow_list::FlowListParams),
    /// See [`collective`].
    Collectives(collective::CollectivesParams),
    /// See [`open_loop`].
    OpenLoop(open_loop::OpenLoopParams),
    /// See [`rdma_writes`].
    RdmaWrites(rdma_writes::RdmaWritesParams),
    /// See [`training`].
    Training(training::TrainingParams),
    /// See [`chakra`].
    Chakra(chakra::ChakraParams),
}

crate::tagged_config!(WorkloadConfig, "kind", "workload", {
    "permutation" => Permutation(permutation::PermutationParams),
    "incast" => Incast(incast::IncastParams),
    "all_to_all" => AllToAll(all_to_all::AllToAllParams),
    "flow_list" => FlowList(flow_list::FlowListParams),
    "collectives" => Collectives(collective::CollectivesParams),
    "open_loop" => OpenLoop(open_loop::OpenLoopParams),
    "rdma_writes" => RdmaWrites(rdma_writes::RdmaWritesParams),
    "training" => Training(training::TrainingParams),
    "chakra" => Chakra(chakra::ChakraParams),
});

impl Default for WorkloadConfig {
    fn default() -> Self {
        WorkloadConfig::Permutation(permutation::PermutationParams::default())
    }
}

/// Registry rows: name, one-line summary and parameters of each workload.
pub const REGISTRY: &[crate::scheme::SchemeRow] = &[
    crate::scheme::plain_row::<permutation::PermutationParams>(permutation::NAME, permutation::SUMMARY, permutation::EXAMPLE),
    crate::scheme::plain_row::<incast::IncastParams>(incast::NAME, incast::SUMMARY, incast::EXAMPLE),
    crate::scheme::plain_row::<all_to_all::AllToAllParams>(all_to_all::NAME, all_to_all::SUMMARY, all_to_all::EXAMPLE),
    crate::scheme::plain_row::<flow_list::FlowListParams>(flow_list::NAME, flow_list::SUMMARY, flow_list::EXAMPLE),
    crate::scheme::plain_row::<collective::CollectivesParams>(collective::NAME, collective::SUMMARY, collective::EXAMPLE),
    open_loop::ROW,
    crate::scheme::plain_row::<rdma_writes::RdmaWritesParams>(rdma_writes::NAME, rdma_writes::SUMMARY, rdma_writes::EXAMPLE),
    crate::scheme::plain_row::<training::TrainingParams>(training::NAME, training::SUMMARY, training::EXAMPLE),
    crate::scheme::plain_row::<chakra::ChakraParams>(chakra::NAME, chakra::SUMMARY, chakra::EXAMPLE),
];

/// Most flows one workload may generate (open-loop traces, permutations, all-to-alls): each
/// takes a connection's state, about a kilobyte, so more would exhaust memory before an
/// estimate could say so.
pub const MAX_FLOWS: u64 = 50_000_000;

/// Refuses `flows` flows above [`MAX_FLOWS`], naming `key` and how the count arose (`how`).
pub fn check_flow_count(key: &str, flows: u64, how: &str) -> Result<()> {
    if flows > MAX_FLOWS {
        return Err(Error::invalid(key, format!("{how} = {flows} flows; allowed at most {MAX_FLOWS} (each flow's connection takes about 1 KB)")));
    }
    Ok(())
}

/// What generating a workload may take: the memory left after the fabric, and the most
/// sub-messages the message shaper cuts one flow into. Every generator counts what it will
/// generate before generating it and asks here ([`crate::budget`]).
#[derive(Clone, Copy, Debug)]
pub struct Room {
    /// Memory left for the workload.
    pub budget: Budget,
    /// Connections (and messages) per flow.
    pub pieces: u64,
}

impl Room {
    /// No limit, no shaper.
    pub const UNLIMITED: Room = Room { budget: Budget::UNLIMITED, pieces: 1 };

    /// Refuses a graph of `size`, naming `key`, when its ids would not fit 32 bits, it would
    /// exceed the budget, or it and the run state of its connections and tasks would exceed
    /// the machine ([`Budget::admit_run`]); `how` says how the counts arose.
    pub fn admit(&self, key: &str, size: GraphSize, how: impl FnOnce() -> String) -> Result<()> {
        let what = format!("{}: {}", how(), size.describe());
        self.budget.admit(key, size.bytes(), || what.clone())?;
        self.budget.admit_run(key, size.bytes(), size.run_bytes(), || what.clone())?;
        if !size.fits_ids() {
            return Err(Error::invalid(key, format!("{what}; allowed fewer than 2^32 − 1 tasks, connections and messages and fewer than 2^31 dependencies")));
        }
        Ok(())
    }

    /// Refuses `flows` flows above [`MAX_FLOWS`], or whose list, connections and messages
    /// would exceed the budget, naming `key` and how the count arose (`how`).
    pub fn admit_flows(&self, key: &str, flows: u64, how: &str) -> Result<()> {
        check_flow_count(key, flows, how)?;
        let n = flows.saturating_mul(self.pieces);
        self.admit(key, GraphSize { flows, conns: n, tasks: n, messages: n, edges: 0 }, || format!("{how} = {flows} flows"))
    }
}

impl WorkloadConfig {
    /// Whether the workload is a list of flows compiled by [`flows_to_traffic`] (the only kind
    /// a message shaper applies to). Every variant is named, so that a new workload must say.
    pub fn compiles_flows(&self) -> bool {
        match self {
            WorkloadConfig::Permutation(_) | WorkloadConfig::Incast(_) | WorkloadConfig::AllToAll(_) | WorkloadConfig::FlowList(_) | WorkloadConfig::OpenLoop(_) => true,
            // Back-to-back WRITE streams: N sub-QPs carrying sub-WQE i of every message are
            // N× the queue pairs with 1/N-size messages (`qps_per_client`, `message_bytes`).
            WorkloadConfig::Collectives(_) | WorkloadConfig::RdmaWrites(_) | WorkloadConfig::Training(_) | WorkloadConfig::Chakra(_) => false,
        }
    }

        /// The key that sizes the workload's messages, for errors about their size.
    pub fn size_key(&self) -> &'static str {
        match self {
            WorkloadConfig::Permutation(_) | WorkloadConfig::Incast(_) | WorkloadConfig::AllToAll(_) => "workload.flow_bytes",
            WorkloadConfig::FlowList(_) => "workload.file",
            WorkloadConfig::Collectives(_) => "workload.jobs",
            WorkloadConfig::OpenLoop(_) => "workload.cdf",
            WorkloadConfig::RdmaWrites(_) => "workload.message_bytes",
            WorkloadConfig::Training(_) => "workload.model",
            WorkloadConfig::Chakra(_) => "workload.traces",
        }
    }

    /// Generates the traffic for `fabric`, flows split by `shaper`, refused before anything
    /// large is generated when it would exceed `budget`. `base_dir` resolves relative file
    /// names; `seed` is the scenario's master seed.
    pub fn generate(&self, fabric: &Fabric, seed: u64, files: &InputFiles, shaper: &AnyShaper, budget: Budget) -> Result<Traffic> {
        // The host rate is for counting before the fabric is built: here each host's own is read.
        let hosts = HostPlan { hosts: fabric.ranks(), host_rate: fabric.host_port.first().map_or(crate::units::BitsPerSec(0), |&p| fabric.ports[p.idx()].rate) };
        Ok(self.generate_on(hosts, Some(fabric), seed, files, shaper, budget)?.expect("on a built fabric every workload is generated"))
    }

    /// What can be done before the fabric is built, from its host count alone: a workload that
    /// needs nothing else (collectives, incast, all-to-all, a flow list) is generated (`Some`,
    /// the same traffic [`WorkloadConfig::generate`] gives); the others have their counts
    /// checked (`None`: generate them on the built fabric). Either way a workload too large
    /// for `budget` is refused here, before seconds go into building a large fabric.
    pub fn generate_early(&self, hosts: HostPlan, seed: u64, files: &InputFiles, shaper: &AnyShaper, budget: Budget) -> Result<Option<Traffic>> {
        self.generate_on(hosts, None, seed, files, shaper, budget)
    }

    fn generate_on(&self, plan: HostPlan, fabric: Option<&Fabric>, seed: u64, files: &InputFiles, shaper: &AnyShaper, budget: Budget) -> Result<Option<Traffic>> {
        let room = Room { budget, pieces: shaper.max_pieces() };
        if shaper.is_active() && !self.compiles_flows() {
            return Err(Error::invalid(
                "transport.shaper",
                "a message shaper splits flow workloads only (permutation, incast, all_to_all, flow_list, open_loop); collectives spread each chunk over queue pairs themselves: use workload.qps (1..=16); rdma_writes streams: N x qps_per_client with message_bytes / N; and shaper = \"none\"",
            ));
        }
        let hosts = plan.hosts;
        let mut rng = Rng::stream(seed, "workload", 0);
        let mut ns3 = None;
        let (mut flows, jitter_us) = match (self, fabric) {
            (WorkloadConfig::Collectives(p), _) => return collective::generate(p, hosts, &mut rng, files, room).map(Some),
            // Analytic scale-up collectives need the built fabric's servers: before it, counted.
            (WorkloadConfig::Training(p), None) => return training::admit(p, hosts, room).map(|_| None),
            (WorkloadConfig::Training(p), Some(fabric)) => return training::generate(p, hosts, Some(fabric), room).map(Some),
            (WorkloadConfig::Chakra(p), _) => return chakra::generate(p, hosts, files, room).map(Some),
            (WorkloadConfig::Incast(p), _) => (incast::generate(p, hosts, &mut rng)?, p.start_jitter_us),
            (WorkloadConfig::AllToAll(p), _) => (all_to_all::generate(p, hosts, room)?, p.start_jitter_us),
            (WorkloadConfig::FlowList(p), _) => {
                let (flows, naming) = flow_list::generate(p, hosts, files)?;
                ns3 = naming;
                (flows, p.start_jitter_us)
            }
            // These need the built fabric (its ToRs and pods, its host links): before it, their
            // counts are checked.
            (WorkloadConfig::Permutation(p), None) => return permutation::admit(p, hosts, room).map(|_| None),
            (WorkloadConfig::OpenLoop(p), None) => return open_loop::admit(p, hosts, plan.host_rate, files, room).map(|_| None),
            (WorkloadConfig::RdmaWrites(_), None) => return Ok(None),
            (WorkloadConfig::RdmaWrites(p), Some(fabric)) => return rdma_writes::generate(p, fabric, room).map(Some),
            (WorkloadConfig::OpenLoop(p), Some(fabric)) => (open_loop::generate(p, fabric, &mut rng, files, room)?, 0.0),
            (WorkloadConfig::Permutation(p), Some(fabric)) => {
                let ranks = hosts as usize;
                let (pods, tors) = (&fabric.pod_of_host()[..ranks], fabric.tor_of_host[..ranks].iter().map(|t| t.0).collect::<Vec<_>>());
                (permutation::generate(p, pods, &tors, &mut rng, room)?, p.start_jitter_us)
            }
        };
        let jitter = time_from_us("workload.start_jitter_us", jitter_us)?;
        if jitter > Time::ZERO {
            let mut jrng = Rng::stream(seed, "workload-jitter", 0);
            for f in &mut flows {
                f.start += Time(jrng.below((jitter + Time(1)).0));
            }
        }
        if flows.is_empty() {
            return Err(Error::invalid("workload", "the workload generates no flows"));
        }
        let mut traffic = flows_to_traffic(&flows, shaper);
        // The names are per connection: only while each flow is one connection.
        traffic.ns3 = ns3.filter(|_| traffic.conns.len() == flows.len()).map(std::sync::Arc::new);
        Ok(Some(traffic))
    }
}

/// What a workload may know of a fabric before it is built ([`WorkloadConfig::generate_early`]).
#[derive(Clone, Copy, Debug)]
pub struct HostPlan {
    /// Hosts.
    pub hosts: u32,
    /// The rate of every host's link.
    pub host_rate: crate::units::BitsPerSec,
}

/// One connection and one message per flow, or, as `shaper` splits it, one connection (sub-QP)
/// and one message (sub-WQE) per piece, all posted at the flow's start; `after` becomes a
/// completion dependency, on a flow split in several pieces through a join over their
/// completions. Under an active shaper the graph records which connections carry each flow
/// ([`Traffic::app_flows`]), even for flows left whole.
pub fn flows_to_traffic(flows: &[FlowSpec], shaper: &AnyShaper) -> Traffic {
    let mut g = GraphBuilder::new();
    // One connection and message per flow at least (more where the shaper splits flows).
    let n = flows.len() as u64;
    g.reserve(GraphSize { flows: 0, conns: n, tasks: n, messages: n, edges: 0 });
    // Send tasks of flow f: first_send[f]..first_send[f + 1] (connections are numbered alike).
    let mut first_send = Vec::with_capacity(flows.len() + 1);
    let mut pieces = Vec::new();
    for f in flows {
        shaper.split(f.bytes.0, &mut pieces);
        first_send.push(g.tasks() as u32);
        for &bytes in &pieces {
            //= seqbalance §2.2.3 (simulator model for flow-level workloads); type=assumption
            //# creates a fresh app QP with N fresh sub-QPs (unique sports); all n sub-WQEs are
            //# posted at the flow's start time.
            let c = g.conn(f.src, f.dst);
            g.send(c, bytes, f.start);
        }
    }
    first_send.push(g.tasks() as u32);
    let parts = |f: usize| first_send[f]..first_send[f + 1];
    // What a flow's dependents wait for: its message, or a join over its sub-WQEs' completions
    // (made only for flows something waits on).
    let mut done: Vec<u32> = (0..flows.len()).map(|f| first_send[f]).collect();
    let mut waited = vec![false; flows.len()];
    for f in flows {
        if let Some(a) = f.after {
            waited[a as usize] = true;
        }
    }
    for (a, d) in done.iter_mut().enumerate() {
        if waited[a] && parts(a).len() > 1 {
            //= seqbalance §2.2.4; type=paper
            //# The app CQE is generated only when all bits are set.
            *d = g.join();
            for t in parts(a) {
                g.edge(t, *d, Trigger::Completed, Time::ZERO);
            }
        }
    }
    for (j, f) in flows.iter().enumerate() {
        if let Some(a) = f.after {
            for t in parts(j) {
                g.edge(done[a as usize], t, Trigger::Completed, Time::ZERO);
            }
        }
    }
    let mut t = g.finish();
    if shaper.is_active() {
        // One send per connection, so the send ranges are the connection ranges.
        t.app_flows = first_send;
    }
    t
}

/// Converts a non-negative microsecond value of scenario key `key` to picoseconds.
pub fn time_from_us(key: &str, us: f64) -> Result<Time> {
    crate::units::checked_us(us).ok_or_else(|| Error::invalid(key, format!("{}: must be a non-negative number of microseconds; allowed 0..={} (1000 s)", crate::units::show_num(us), crate::units::show_num(crate::units::MAX_TIME_US))))
}

/// Checks that a flow's endpoints exist and differ. `key` names where the flow came from.
pub fn check_endpoints(key: &str, src: u64, dst: u64, hosts: u32) -> Result<()> {
    if src >= hosts as u64 || dst >= hosts as u64 {
        let bad = if src >= hosts as u64 { src } else { dst };
        return Err(Error::invalid(key, format!("host {bad} does not exist: the fabric has hosts 0..{}", hosts - 1)));
    }
    if src == dst {
        return Err(Error::invalid(key, format!("flow from host {src} to itself")));
    }
    Ok(())
}

fn default_flow_bytes() -> crate::units::ByteSize {
    crate::units::ByteSize(2 << 20)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transport::shaper::{ShaperConfig, ShaperCtx};
    use graph::TaskKind;

    fn shaper(toml: &str) -> AnyShaper {
        toml::from_str::<ShaperConfig>(toml).unwrap().build(&mut ShaperCtx { mss: 1000 })
    }

    fn flow(bytes: u64, after: Option<u32>) -> FlowSpec {
        FlowSpec { src: NodeId(0), dst: NodeId(1), bytes: Bytes(bytes), start: Time(5), after }
    }

    #[test]
    fn a_split_flow_is_one_connection_and_message_per_piece_and_dependents_wait_for_all() {
        // Flow 0: 10 packets over 4 sub-QPs; flow 1: one packet, whole; flow 2 waits for flow 0.
        let flows = [flow(10_000, None), flow(700, None), flow(2_500, Some(0))];
        let t = flows_to_traffic(&flows, &shaper("name = \"seqbalance\"\nqps = 4"));
        assert_eq!(t.app_flows, vec![0, 4, 5, 8]);
        let sizes: Vec<u64> = t.sends.iter().map(|&s| match t.tasks[s as usize].kind() { TaskKind::Send { bytes, .. } => bytes, _ => 0 }).collect();
        assert_eq!(sizes, vec![3000, 3000, 2000, 2000, 700, 1000, 1000, 500]);
        assert!(t.sends.iter().all(|&s| t.tasks[s as usize].not_before() == Time(5)));
        assert_eq!(t.conns_of_app_flow(2), 5..8);
        // One join (task 8) waits for the four completions of flow 0 and releases each of the
        // three sub-WQEs of flow 2.
        assert_eq!(t.tasks.len(), 9);
        assert_eq!((t.tasks[8].kind(), t.tasks[8].deps()), (TaskKind::Join, 4));
        for s in 0..4 {
            assert_eq!(t.edges_of(s).map(|e| (e.to, e.on)).collect::<Vec<_>>(), vec![(8, Trigger::Completed)]);
        }
        assert_eq!(t.edges_of(8).map(|e| e.to).collect::<Vec<_>>(), vec![5, 6, 7]);
        assert!((5..8).all(|s| t.tasks[s].deps() == 1));
    }

    #[test]
    fn without_a_shaper_the_graph_is_one_connection_per_flow() {
        let flows = [flow(10_000, None), flow(2_500, Some(0))];
        let none = shaper("name = \"none\"");
        let t = flows_to_traffic(&flows, &none);
        assert!(t.app_flows.is_empty() && !none.is_active());
        assert_eq!((t.conns.len(), t.tasks.len()), (2, 2));
        assert_eq!(t.edges_of(0).map(|e| (e.to, e.on)).collect::<Vec<_>>(), vec![(1, Trigger::Completed)]);
        // qps = 1 splits nothing but still reports per app flow.
        let t = flows_to_traffic(&flows, &shaper("name = \"seqbalance\"\nqps = 1"));
        assert_eq!((t.conns.len(), t.tasks.len(), t.app_flows.clone()), (2, 2, vec![0, 1, 2]));
    }
}
