//! `rdma_writes`: backlogged RDMA WRITE streams, the testbed traffic of perftest's
//! `ib_write_bw` — long-lived client→server pairs, each client with several queue pairs that
//! keep the NIC saturated with 2 MB WRITEs, clients starting one after another.
//!
//! **Follows:** seqbalance §5.1 "Traffic" (targets T4/T5), issue 17 §1 "Backlogged RDMA writes".
//! Paper §V (testbed): "4 QPs, with each QP maintaining 128 outstanding 2MB WRITE requests to
//! fully utilize the link bandwidth"; a new server starts every 150 s over 450 s, which the spec
//! compresses to one client every 20 ms over a 60 ms run (ASSUMPTION: the metric is a
//! steady-state rate).
//!
//! **Pairs:** by default the first `clients` hosts of the first ToR send to the first
//! `clients` hosts of the last ToR (spec ASSUMPTION: clients under leaf 1, servers under leaf
//! 2, so all traffic crosses the spines); or explicit `pairs = [[client, server], ...]`. Pair
//! i's client starts at `i · stagger_us`.
//!
//! **Backlog model:** each of the `qps_per_client` connections of a pair posts, at its client's
//! start, enough `message_bytes` WRITEs to keep its host link busy until `duration_us` on its own
//! (⌈rate · (duration − start) / message_bytes⌉ messages). Messages on one connection are sent
//! in posting order (see [`super::graph`]), so posting them all at once is the "128 outstanding
//! WRITEs" of the testbed with an unbounded window — the NIC never runs dry before the end. A
//! literal cap of 128 outstanding is `[transport.gate] name = "max_outstanding", messages = 128`.
//! The traffic outlasts the run on purpose: stop it with `run.end_time_us = duration_us`
//! (`flows.csv` then has one row per connection, its bytes all its messages, unfinished).
//!
//! **Message size:** 2 MiB (2,097,152 B) by default: perftest sizes are powers of two, and the
//! spec's SeqBalance split of one WRITE into "4 × 512 KB sub-WQEs" is 2^21 / 4.

use super::graph::{GraphBuilder, Traffic};
use super::{check_endpoints, default_flow_bytes};
use crate::error::{Error, Result};
use crate::ids::NodeId;
use crate::topo::Fabric;
use crate::units::{ByteSize, Bytes, Time};
use serde::{Deserialize, Serialize};

/// Registry name.
pub const NAME: &str = "rdma_writes";
/// Overrides of the bundled example scenario for a small run of this workload (the registry
/// row's example, which the fingerprint and bad-value tests run).
pub const EXAMPLE: &[&str] = &["workload={ kind = \"rdma_writes\", clients = 2, qps_per_client = 2, message_bytes = \"64KiB\", stagger_us = 10, duration_us = 100 }", "run.end_time_us=100"];
/// Registry summary.
pub const SUMMARY: &str = "backlogged RDMA WRITE streams (ib_write_bw): client→server pairs, QPs per client, staggered client starts";

/// Most messages the workload may post in all (a guard against a duration that would exhaust
/// memory).
pub const MAX_MESSAGES: u64 = 50_000_000;

/// Parameters of `rdma_writes`.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RdmaWritesParams {
    /// Client→server pairs when `pairs` is empty: the first hosts of the first ToR to the
    /// first hosts of the last ToR.
    pub clients: u32,
    /// Explicit `[client, server]` pairs (overrides `clients`).
    pub pairs: Vec<[u32; 2]>,
    /// Connections (QPs) per pair.
    pub qps_per_client: u32,
    /// Size of each WRITE.
    pub message_bytes: ByteSize,
    /// Pair i's client starts at i × this (µs).
    pub stagger_us: f64,
    /// The connections keep their link busy until this time (µs).
    pub duration_us: f64,
}

impl Default for RdmaWritesParams {
    fn default() -> Self {
        //= seqbalance §5.1 (Traffic); type=paper
        //# ib_write_bw, three long-lived client→server pairs; each client uses 4 QPs; each QP
        //# keeps 128 outstanding 2 MB RDMA WRITEs.
        //= seqbalance §5.1 (Traffic); type=assumption
        //# Simulator emulation: compress time. Start a client every 20 ms and run 60 ms.
        RdmaWritesParams { clients: 3, pairs: Vec::new(), qps_per_client: 4, message_bytes: default_flow_bytes(), stagger_us: 20_000.0, duration_us: 60_000.0 }
    }
}

/// The default pairs: the first `clients` hosts of the first ToR to those of the last ToR.
fn default_pairs(clients: u32, fabric: &Fabric) -> Result<Vec<[u32; 2]>> {
    let ranks = &fabric.tor_of_host[..fabric.ranks() as usize];
    let (Some(&first), Some(&last)) = (ranks.iter().min(), ranks.iter().max()) else {
        return Err(Error::invalid("workload.kind", "the fabric has no hosts"));
    };
    if first == last {
        return Err(Error::invalid("workload.clients", "the fabric has one ToR: the default pairs go from the first ToR to the last; list `pairs` instead"));
    }
    let under = |tor| (0..fabric.ranks()).filter(|&h| ranks[h as usize] == tor).collect::<Vec<u32>>();
    let (senders, receivers) = (under(first), under(last));
    let fit = senders.len().min(receivers.len());
    if clients == 0 || clients as usize > fit {
        return Err(Error::invalid("workload.clients", format!("{clients}: must be between 1 and {fit} (hosts under the first and the last ToR)")));
    }
    Ok((0..clients as usize).map(|i| [senders[i], receivers[i]]).collect())
}

/// The traffic graph: `qps_per_client` connections per pair, each with its backlog of WRITEs.
pub fn generate(p: &RdmaWritesParams, fabric: &Fabric, room: super::Room) -> Result<Traffic> {
    if p.qps_per_client == 0 {
        return Err(Error::invalid("workload.qps_per_client", "0: must be at least 1"));
    }
    if p.message_bytes.0 == 0 {
        return Err(Error::invalid("workload.message_bytes", "0: WRITEs must carry at least one byte"));
    }
    let stagger = super::time_from_us("workload.stagger_us", p.stagger_us)?;
    let duration = super::time_from_us("workload.duration_us", p.duration_us)?;
    let pairs = if p.pairs.is_empty() { default_pairs(p.clients, fabric)? } else { p.pairs.clone() };
    for (i, [client, server]) in pairs.iter().enumerate() {
        check_endpoints(&format!("workload.pairs[{i}]"), *client as u64, *server as u64, fabric.ranks())?;
    }
    let mut plan: Vec<(u32, u32, Time, u64)> = Vec::with_capacity(pairs.len());
    for (i, &[client, server]) in pairs.iter().enumerate() {
        let start = stagger.saturating_mul(i as u64);
        if start >= duration {
            return Err(Error::invalid(
                "workload.stagger_us",
                format!("client {i} would start at {} µs, not before duration_us = {}: shorten the stagger or lengthen the run", i as f64 * p.stagger_us, p.duration_us),
            ));
        }
        // Enough WRITEs for one connection alone to keep the link busy until the end.
        let rate = fabric.ports[fabric.host_port[client as usize].idx()].rate;
        let messages = rate.bytes_in(duration - start).div_ceil(Bytes(p.message_bytes.0)).max(1);
        plan.push((client, server, start, messages));
    }
    let total: u64 = plan.iter().map(|x| x.3 * p.qps_per_client as u64).sum();
    if total > MAX_MESSAGES {
        return Err(Error::invalid(
            "workload.duration_us",
            format!("{total} WRITEs to post, more than the {MAX_MESSAGES} allowed: shorten the run or raise message_bytes"),
        ));
    }
    let conns = pairs.len() as u64 * p.qps_per_client as u64;
    let size = super::graph::GraphSize { flows: 0, conns, tasks: total, messages: total, edges: 0 };
    room.admit("workload.duration_us", size, || format!("{conns} queue pairs keeping the links busy for {} µs", p.duration_us))?;
    let mut g = GraphBuilder::new();
    g.reserve(size);
    for &(client, server, start, messages) in &plan {
        for _ in 0..p.qps_per_client {
            let conn = g.conn(NodeId(client), NodeId(server));
            for _ in 0..messages {
                g.send(conn, p.message_bytes.0, start);
            }
        }
    }
    Ok(g.finish())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::topo::leaf_spine::{build_shape, Shape};
    use crate::topo::TierLinks;
    use crate::units::{BitsPerSec, US};

    /// The testbed (spec §5.1): 2 leaves × 4 spines, 3 + 3 hosts, 40 Gb/s.
    fn testbed() -> Fabric {
        let l = (BitsPerSec::from_gbps(40.0), US);
        build_shape(Shape { tors: 2, hosts_per_tor: 3, spines: 4, links_per_spine: 1 }, TierLinks { host: l, tor_up: l, agg_up: l }, &[], Time::ZERO).unwrap()
    }

    /// Per connection: (src, dst, first post time, bytes posted).
    fn per_connection(t: &Traffic) -> Vec<(u32, u32, Time, u64)> {
        let mut rows: Vec<(u32, u32, Time, u64)> = t.conns.iter().map(|c| (c.src.0, c.dst.0, Time::MAX, 0)).collect();
        for m in t.messages() {
            let row = &mut rows[m.conn as usize];
            row.2 = row.2.min(t.tasks[m.task as usize].not_before());
            row.3 += m.bytes.0;
        }
        rows
    }

    //= seqbalance §5.1 (Traffic); type=test
    //# Three client→server pairs, 4 QPs each, a new client every 20 ms of a 60 ms run.
    #[test]
    fn default_pairs_cross_the_spines_with_staggered_starts_and_cover_the_run() {
        let f = testbed();
        let t = generate(&RdmaWritesParams::default(), &f, crate::workload::Room::UNLIMITED).unwrap();
        let rows = per_connection(&t);
        assert_eq!(rows.len(), 12);
        for (i, row) in rows.iter().enumerate() {
            let pair = (i / 4) as u32;
            assert_eq!((row.0, row.1), (pair, 3 + pair), "client i of ToR 0 to host i of the last ToR");
            assert_eq!(row.2, pair as u64 * 20 * crate::units::MS);
            // 40 Gb/s for the rest of the run, in whole 2 MiB WRITEs.
            let line = BitsPerSec::from_gbps(40.0).bytes_in((60 - 20 * pair as u64) * crate::units::MS);
            assert!(row.3 >= line.0 && row.3 < (line + Bytes(2 << 20)).0, "{row:?} vs {line}");
            assert_eq!(row.3 % (2 << 20), 0);
        }
        assert_eq!(t.edge_count(), 0, "messages wait for nothing but their start time");
    }

    #[test]
    fn explicit_pairs_and_their_errors() {
        let f = testbed();
        let p = RdmaWritesParams { pairs: vec![[5, 0], [1, 4]], qps_per_client: 2, message_bytes: ByteSize(1_000_000), stagger_us: 10.0, duration_us: 100.0, ..Default::default() };
        let rows = per_connection(&generate(&p, &f, crate::workload::Room::UNLIMITED).unwrap());
        // 40 Gb/s × 100 µs = 500 kB: one 1 MB WRITE per connection; the second pair from 10 µs.
        assert_eq!(rows, vec![(5, 0, Time::ZERO, 1_000_000), (5, 0, Time::ZERO, 1_000_000), (1, 4, 10 * US, 1_000_000), (1, 4, 10 * US, 1_000_000)]);
        let err = |p: RdmaWritesParams| generate(&p, &f, crate::workload::Room::UNLIMITED).unwrap_err().to_string();
        let e = err(RdmaWritesParams { pairs: vec![[0, 3], [1, 6]], ..Default::default() });
        assert!(e.contains("workload.pairs[1]") && e.contains("host 6 does not exist"), "{e}");
        let e = err(RdmaWritesParams { pairs: vec![[2, 2]], ..Default::default() });
        assert!(e.contains("workload.pairs[0]") && e.contains("from host 2 to itself"), "{e}");
        let e = err(RdmaWritesParams { clients: 4, ..Default::default() });
        assert!(e.contains("workload.clients") && e.contains("between 1 and 3"), "{e}");
        let e = err(RdmaWritesParams { stagger_us: 30_000.0, ..Default::default() });
        assert!(e.contains("workload.stagger_us") && e.contains("client 2 would start at 60000"), "{e}");
        let e = err(RdmaWritesParams { qps_per_client: 0, ..Default::default() });
        assert!(e.contains("workload.qps_per_client"), "{e}");
        let e = err(RdmaWritesParams { duration_us: 1e9, message_bytes: ByteSize(1000), ..Default::default() });
        assert!(e.contains("workload.duration_us") && e.contains("50000000"), "{e}");
    }
}
