//! `[[link_events]]` resolved against the fabric: link names (`"tor0-agg1"`, `"tor0-spine2#1"`)
//! to ports, rates and times checked, a `reroute_after_us` expanded into its own entry.

use super::{queues, rate, EventDirection, LinkAction, LinkEvent, LinkEventConfig};
use crate::net::qdisc::QdiscTable;
use crate::error::{Error, Result};
use crate::topo::Fabric;
use crate::units::BitsPerSec;
use crate::workload::time_from_us;

/// The events of `configs` on `fabric`, in time order.
/// A `scale_queue` event adds the scaled queue profiles it switches to to `qdisc`.
pub(super) fn resolve(configs: &[LinkEventConfig], fabric: &Fabric, qdisc: &mut QdiscTable, mtu_bytes: u64) -> Result<Vec<LinkEvent>> {
    let mut events = Vec::new();
    for (i, ev) in configs.iter().enumerate() {
        resolve_one(&format!("link_events[{i}]"), ev, fabric, &mut events)?;
        if ev.scale_queue == Some(true) {
            let e = events.iter_mut().rev().find(|e| e.action == LinkAction::Rate).expect("a scale_queue event is a rate change");
            // A one-way change leaves the other port's profile alone (the engine applies only
            // the first entry then).
            let mut q = e.ports.map(|p| qdisc.port_profile[p.idx()]);
            for (j, &p) in e.ports[..if e.one_way { 1 } else { 2 }].iter().enumerate() {
                q[j] = queues::scaled_profile(qdisc, fabric, p.idx(), e.rate, mtu_bytes)?;
            }
            e.profiles = Some(q);
        }
    }
    events.sort_by_key(|e| e.at);
    Ok(events)
}

/// Appends the event `ev` (at `key`) and, with `reroute_after_us`, its reroute.
fn resolve_one(key: &str, ev: &LinkEventConfig, fabric: &Fabric, events: &mut Vec<LinkEvent>) -> Result<()> {
    let at = time_from_us(&format!("{key}.at_us"), ev.at_us)?;
    let mut ports = fabric.cable_named(&format!("{key}.link"), &ev.link, "tor0-agg1")?;
    if ev.action != LinkAction::Rate {
        for (set, name) in [(ev.direction.is_some(), "direction"), (ev.scale_queue.is_some(), "scale_queue")] {
            if set {
                return Err(Error::invalid(format!("{key}.{name}"), "only allowed with action = \"rate\" (a link goes down or up as a whole)"));
            }
        }
    }
    let direction = ev.direction.unwrap_or(EventDirection::Both);
    if direction == EventDirection::Reverse {
        ports.swap(0, 1);
    }
    let new_rate = match (ev.action, ev.rate_gbps) {
        (LinkAction::Rate, Some(g)) => rate(&format!("{key}.rate_gbps"), g)?,
        (LinkAction::Rate, None) => return Err(Error::invalid(format!("{key}.rate_gbps"), "missing: action \"rate\" needs rate_gbps")),
        (_, Some(_)) => return Err(Error::invalid(format!("{key}.rate_gbps"), "only allowed with action = \"rate\"")),
        (_, None) => BitsPerSec(0),
    };
    events.push(LinkEvent { at, ports, action: ev.action, rate: new_rate, one_way: direction != EventDirection::Both, profiles: None });
    if let Some(us) = ev.reroute_after_us {
        let k = format!("{key}.reroute_after_us");
        if !matches!(ev.action, LinkAction::Down | LinkAction::Up) {
            return Err(Error::invalid(k, "only allowed with action = \"down\" or \"up\" (a rate change leaves routes alone)"));
        }
        let after = time_from_us(&k, us)?;
        events.push(LinkEvent { at: at + after, ports, action: LinkAction::Reroute, rate: BitsPerSec(0), one_way: false, profiles: None });
    }
    Ok(())
}

