//! Per-port statistics (`ports.csv`, with `run.port_stats = true`): one row per direction of
//! every link, from the counters every port keeps anyway (so the option costs nothing while
//! the run simulates), for finding the hot, lossy or paused links of a run.

use crate::engine::Sim;
use crate::ids::PortId;
use crate::scenario::{port_class, PORT_CLASSES};
use crate::units::{Time, US};
use std::fmt::Write;

/// One direction of one link, over the whole run.
#[derive(Clone, Debug, PartialEq)]
pub struct PortStats {
    /// Port id (the transmitting side of the link).
    pub port: u32,
    /// `"NODE-NODE"`: the port's owner, then its peer.
    pub link: String,
    /// Port class (`tor_up`, `agg_down`, ...; `host_up` for a host's NIC).
    pub class: &'static str,
    /// Rate at the end of the run, Gb/s (a link event or a degraded failure may have changed it).
    pub rate_gbps: f64,
    /// Bytes transmitted (every class: data, headers, ACKs, control).
    pub tx_bytes: u64,
    /// Bytes transmitted over what the final rate could carry in the run's time.
    pub utilisation: f64,
    /// Deepest data queue, bytes.
    pub max_queue_bytes: u64,
    /// Time-averaged data queue over the run, bytes.
    pub mean_queue_bytes: f64,
    /// Packets dropped at this port (no buffer, port down, or a header with nothing to evict).
    pub drops: u64,
    /// Packets lost on the wire (flaky links in a loss burst, lossy links by their channel).
    pub wire_losses: u64,
    /// Data packets trimmed to their header here.
    pub trims: u64,
    /// CE markings made here.
    pub ecn_marks: u64,
    /// PAUSE frames that paused this port (PFC).
    pub pauses: u32,
    /// Time this port's data class spent paused, µs.
    pub paused_us: f64,
}

/// The statistics of every port of `sim`, in port order.
pub(super) fn rows(sim: &Sim) -> Vec<PortStats> {
    let f = &sim.net.fabric;
    let run: Time = sim.k.now.max(Time(1));
    let ingress = &sim.net.pfc.ingress;
    sim.net
        .ports
        .iter()
        .enumerate()
        .map(|(i, ps)| {
            let pauses = ingress.get(i).map_or(0, |s| s.pauses_received);
            PortStats {
                port: i as u32,
                link: f.link_name(PortId(i as u32)),
                class: port_class(f, i).map_or("host_up", |c| PORT_CLASSES[c]),
                rate_gbps: ps.rate.gbps(),
                tx_bytes: ps.tx_bytes.0,
                utilisation: ps.tx_bytes.0 as f64 * 8.0 / (ps.rate.0 as f64 * run.0 as f64 / 1e12),
                max_queue_bytes: ps.max_data_bytes.0,
                mean_queue_bytes: ps.occupancy_area(sim.k.now) as f64 / run.0 as f64,
                drops: ps.drops,
                wire_losses: ps.wire_loss.as_ref().map_or(0, |fl| fl.wire_losses),
                trims: ps.trims,
                ecn_marks: ps.marks,
                pauses,
                paused_us: (super::summary::paused_time(sim, i)).0 as f64 / US.0 as f64,
            }
        })
        .collect()
}

/// `ports.csv` text.
pub(super) fn csv(rows: &[PortStats]) -> String {
    let mut s = super::schema::PORTS.header();
    for r in rows {
        let _ = writeln!(
            s,
            "{},{},{},{},{},{:.6},{},{:.1},{},{},{},{},{},{:.6}",
            r.port, r.link, r.class, r.rate_gbps, r.tx_bytes, r.utilisation, r.max_queue_bytes, r.mean_queue_bytes, r.drops, r.wire_losses, r.trims, r.ecn_marks, r.pauses, r.paused_us
        );
    }
    s
}
