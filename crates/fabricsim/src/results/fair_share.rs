//! The fair-share ideal of each flow: the completion time it would have if every host link were
//! shared max-min fairly among the flows using it at each moment, and the fabric between the
//! hosts were non-blocking. It is the reference a reader of a workload of many concurrent flows
//! needs beside the idle-fabric ideal (`ideal_fct`): in an all-to-all every flow's idle ideal
//! assumes it runs alone, so a scheme that finishes the whole exchange later can still show the
//! lower slowdown; against its fair share each flow is charged only what its own hosts' other
//! flows must cost it.
//!
//! The model is a fluid one, in the tradition of the flow-level ideal that datacenter transport
//! papers compare against: each flow is a fluid from its sender's NIC (its egress rate) to its
//! receiver's host link (that link's rate), present from its start (`flows.csv` `start_us`)
//! until its wire bytes (payload plus headers, as the idle ideal counts them) have passed.
//! Whenever a flow starts or ends, the rates are recomputed by water-filling (max-min
//! fairness over the two links of every flow). The flow's fair ideal is then its idle ideal
//! plus the extra time its fluid took over the same bytes alone:
//! `fair_ideal = ideal_fct + (fluid duration − wire bytes / its slower host link)`, so it
//! equals the idle ideal for a flow that shares no host link, and a shared link shows as the
//! time the sharing costs.
//!
//! Only flow workloads have one: a collective's connections carry messages that wait for
//! other messages, so no fluid start-to-end model describes them (`None`).

use super::flows::{ConnPlan, FlowResult};
use crate::units::{BitsPerSec, Time};
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// A flow ends within this many picoseconds of the fluid event: absorbs floating-point
/// residue of the remaining bytes.
const END_SLACK_PS: f64 = 1e-3;

/// Per flow, its fair-share ideal FCT (ps). `egress(h)` and `ingress(h)` are host `h`'s NIC rate
/// and host-link rate towards it; `plans[i]` plans `flows[i]`; `header` is the per-packet header.
pub(super) fn fair_ideal_fcts(flows: &[FlowResult], plans: &[ConnPlan], header: u32, hosts: usize, egress: impl Fn(u32) -> BitsPerSec, ingress: impl Fn(u32) -> BitsPerSec) -> Vec<Time> {
    // Link l < hosts is host l's egress, hosts + h host h's ingress; capacities in bytes per ps.
    let cap: Vec<f64> = (0..hosts as u32).map(|h| bytes_per_ps(egress(h))).chain((0..hosts as u32).map(|h| bytes_per_ps(ingress(h)))).collect();
    let links = |f: &FlowResult| [f.src as usize, hosts + f.dst as usize];
    let wire: Vec<f64> = plans.iter().map(|p| p.wire_bytes(header) as f64).collect();
    let durations = fluid_durations(flows, &wire, &cap, links);
    flows
        .iter()
        .zip(&durations)
        .zip(&wire)
        .map(|((f, &d), &w)| {
            let [a, b] = links(f);
            let alone = w / cap[a].min(cap[b]);
            f.ideal_fct + Time((d - alone).max(0.0).round() as u64)
        })
        .collect()
}

fn bytes_per_ps(r: BitsPerSec) -> f64 {
    r.0 as f64 / 8e12
}

/// The fluid model: per flow, the time (ps) from its start until its `wire[i]` bytes have
/// passed both its links under max-min fair rates.
fn fluid_durations(flows: &[FlowResult], wire: &[f64], cap: &[f64], links: impl Fn(&FlowResult) -> [usize; 2]) -> Vec<f64> {
    let n = flows.len();
    let mut order: Vec<u32> = (0..n as u32).collect();
    order.sort_by_key(|&i| (flows[i as usize].start, i));
    let mut duration = vec![0.0f64; n];
    let mut remaining = wire.to_vec();
    let mut rate = vec![0.0f64; n];
    let mut filling = WaterFill::new(cap.len());
    let mut active: Vec<u32> = Vec::new();
    let mut next = 0usize;
    let mut now = 0.0f64;
    loop {
        if active.is_empty() {
            let Some(&i) = order.get(next) else { break };
            now = (flows[i as usize].start).0 as f64;
        }
        // Every flow that has started by now joins.
        while let Some(&i) = order.get(next).filter(|&&i| (flows[i as usize].start).0 as f64 <= now) {
            if remaining[i as usize] > 0.0 {
                active.push(i);
            }
            next += 1;
        }
        if active.is_empty() {
            continue;
        }
        filling.rates(&active, |i| links(&flows[i as usize]), cap, &mut rate);
        let first_end = active.iter().map(|&i| remaining[i as usize] / rate[i as usize]).fold(f64::INFINITY, f64::min);
        let arrival = order.get(next).map_or(f64::INFINITY, |&i| (flows[i as usize].start).0 as f64);
        let step = first_end.min(arrival - now);
        if !step.is_finite() {
            // A host link of no capacity: no fluid time is defined (a built fabric has none).
            break;
        }
        now += step;
        active.retain(|&i| {
            let i = i as usize;
            remaining[i] -= rate[i] * step;
            if remaining[i] <= rate[i] * END_SLACK_PS {
                duration[i] = now - flows[i].start.0 as f64;
                false
            } else {
                true
            }
        });
    }
    duration
}

/// Max-min fair rates by water-filling, with its work arrays kept between events.
struct WaterFill {
    /// Per link: unfrozen flows on it, capacity not yet given out, and a version that makes
    /// older heap entries stale.
    count: Vec<u32>,
    left: Vec<f64>,
    version: Vec<u32>,
    /// Per link: its active flows (rebuilt per call for the links in use).
    members: Vec<Vec<u32>>,
    used: Vec<usize>,
}

impl WaterFill {
    fn new(links: usize) -> WaterFill {
        WaterFill { count: vec![0; links], left: vec![0.0; links], version: vec![0; links], members: vec![Vec::new(); links], used: Vec::new() }
    }

    /// Sets `rate[i]` for every active flow: repeatedly, the link whose capacity left per
    /// unfrozen flow is the smallest fixes that share for its unfrozen flows, which then take
    /// it from their other link.
    fn rates(&mut self, active: &[u32], links: impl Fn(u32) -> [usize; 2], cap: &[f64], rate: &mut [f64]) {
        for &l in &self.used {
            self.members[l].clear();
        }
        self.used.clear();
        for &i in active {
            for l in links(i) {
                if self.members[l].is_empty() {
                    self.used.push(l);
                }
                self.members[l].push(i);
            }
        }
        let mut heap = BinaryHeap::with_capacity(self.used.len());
        for &l in &self.used {
            self.count[l] = self.members[l].len() as u32;
            self.left[l] = cap[l];
            self.version[l] = self.version[l].wrapping_add(1);
            heap.push(Reverse(Share(cap[l] / self.count[l] as f64, l, self.version[l])));
        }
        for &i in active {
            rate[i as usize] = f64::NAN;
        }
        while let Some(Reverse(Share(share, l, v))) = heap.pop() {
            if v != self.version[l] || self.count[l] == 0 {
                continue;
            }
            self.count[l] = 0;
            for k in 0..self.members[l].len() {
                let i = self.members[l][k];
                if !rate[i as usize].is_nan() {
                    continue;
                }
                rate[i as usize] = share;
                for o in links(i).into_iter().filter(|&o| o != l) {
                    self.left[o] = (self.left[o] - share).max(0.0);
                    self.count[o] -= 1;
                    self.version[o] = self.version[o].wrapping_add(1);
                    if self.count[o] > 0 {
                        heap.push(Reverse(Share(self.left[o] / self.count[o] as f64, o, self.version[o])));
                    }
                }
            }
        }
    }
}

/// A heap entry: a link's share per unfrozen flow, the link, its version.
#[derive(PartialEq)]
struct Share(f64, usize, u32);

impl Eq for Share {}

impl PartialOrd for Share {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Share {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.0.total_cmp(&other.0).then(self.1.cmp(&other.1))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::flows::tests::row;

    /// 100 Gb/s everywhere, no headers: a byte is 80 ps.
    fn durations(flows: &[(u32, u32, u64, u64)]) -> Vec<f64> {
        let rows: Vec<FlowResult> = flows.iter().enumerate().map(|(i, &(src, dst, _, start))| FlowResult { src, dst, ..row(i as u32, start, None, 0) }).collect();
        let wire: Vec<f64> = flows.iter().map(|f| f.2 as f64).collect();
        let hosts = 8;
        let cap = vec![bytes_per_ps(BitsPerSec::from_gbps(100.0)); 2 * hosts];
        fluid_durations(&rows, &wire, &cap, |f| [f.src as usize, hosts + f.dst as usize])
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() <= 1e-6 * b.max(1.0)
    }

    #[test]
    fn an_incast_shares_the_receivers_link_equally() {
        // Four 1 MB flows into host 0 at once: each at 25 Gb/s, all done after 4 MB at line rate.
        let d = durations(&[(1, 0, 1_000_000, 0), (2, 0, 1_000_000, 0), (3, 0, 1_000_000, 0), (4, 0, 1_000_000, 0)]);
        assert!(d.iter().all(|&x| close(x, 4.0 * 80e6)), "{d:?}");
    }

    #[test]
    fn a_short_flow_leaves_and_the_long_one_takes_the_link() {
        // 1 MB and 3 MB into host 0: 2 MB pass at half rate each (160 µs), then the 2 MB left
        // of the long one at full rate (160 µs more).
        let d = durations(&[(1, 0, 1_000_000, 0), (2, 0, 3_000_000, 0)]);
        assert!(close(d[0], 160e6) && close(d[1], 320e6), "{d:?}");
    }

    #[test]
    fn max_min_gives_the_unshared_link_its_leftover() {
        // Hosts 1 and 2 send to 0; host 1 also sends to 3. Host 0's link gives 50 each;
        // host 1's egress is then 50 + the flow to 3, which gets the other 50 (not 100: host 1's
        // NIC is full). Equal 1 MB flows: all finish together at 50 Gb/s, 160 µs.
        let d = durations(&[(1, 0, 1_000_000, 0), (2, 0, 1_000_000, 0), (1, 3, 1_000_000, 0)]);
        assert!(d.iter().all(|&x| close(x, 160e6)), "{d:?}");
        // Host 2 → 3 added: host 3's link now also has two flows; every link carries two
        // flows at 50.
        let d = durations(&[(1, 0, 1_000_000, 0), (2, 0, 1_000_000, 0), (1, 3, 1_000_000, 0), (4, 5, 1_000_000, 0)]);
        assert!(close(d[3], 80e6), "a flow sharing nothing runs at line rate: {d:?}");
    }

    #[test]
    fn a_late_flow_joins_and_slows_the_first_from_then_on() {
        // 2 MB alone for 80 µs (1 MB done), then shares with a 0.5 MB flow: both at half rate
        // until the short one ends 80 µs later (0.5 MB each), then 0.5 MB alone (40 µs).
        let d = durations(&[(1, 0, 2_000_000, 0), (2, 0, 500_000, 80_000_000)]);
        assert!(close(d[0], 200e6) && close(d[1], 80e6), "{d:?}");
    }

    #[test]
    fn a_permutation_runs_every_flow_at_line_rate() {
        let d = durations(&[(0, 1, 1_000_000, 0), (1, 2, 1_000_000, 0), (2, 0, 1_000_000, 0)]);
        assert!(d.iter().all(|&x| close(x, 80e6)), "{d:?}");
    }
}
