//! `[[link_events]]` resolved against the fabric: link names (`"tor0-agg1"`, `"tor0-spine2#1"`)
//! to ports, rates and times checked, a `reroute_after_us` expanded into its own entry.

use super::{queues, rate, EventDirection, LinkAction, LinkEvent, LinkEventConfig};
use crate::net::qdisc::QdiscTable;
use crate::error::{Error, Result};
use crate::ids::PortId;
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
            let mut q = e.ports.map(|p| qdisc.port_profile[p as usize]);
            for (j, &p) in e.ports[..if e.one_way { 1 } else { 2 }].iter().enumerate() {
                q[j] = queues::scaled_profile(qdisc, fabric, p as usize, e.rate, mtu_bytes)?;
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
    let mut ports = cable(key, &ev.link, fabric)?;
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

/// Both ports of the cable named `name` (`"NODE-NODE"`, `#i` for the i-th of parallel cables,
/// as `check` names them); errors name `<key>.link`.
fn cable(key: &str, name: &str, fabric: &Fabric) -> Result<[PortId; 2]> {
    let key = format!("{key}.link");
    let (link, nth) = match name.split_once('#') {
        Some((l, i)) => (l, i.parse::<usize>().map_err(|_| Error::invalid(&key, format!("`{name}`: `#` must be followed by a cable index")))?),
        None => (name, 0),
    };
    let (pa, x, y) = port_named(fabric, &key, link, name, "tor0-agg1")?;
    let pa = fabric.parallel_ports(pa).get(nth).copied().ok_or_else(|| Error::invalid(&key, format!("`{name}`: no cable #{nth} between `{x}` and `{y}`")))?;
    Ok([pa, fabric.ports[pa as usize].reverse])
}

/// The port of the first node of `link` (`"NODE-NODE"`) towards the second, with the two node
/// names as written. Errors name `key`, quote `shown` when `link` is not two names, and give
/// `example` as a well-formed one.
pub(super) fn port_named<'a>(fabric: &Fabric, key: &str, link: &'a str, shown: &str, example: &str) -> Result<(PortId, &'a str, &'a str)> {
    let (x, y) = link.split_once('-').ok_or_else(|| Error::invalid(key, format!("`{shown}`: expected NODE-NODE, e.g. \"{example}\"")))?;
    let node = |n: &str| {
        fabric
            .node_by_name(n.trim())
            .ok_or_else(|| Error::invalid(key, format!("no node named `{n}` (names: host<i>, tor<i>, agg<i>, core<i>, spine<i>)")))
    };
    let (na, nb) = (node(x)?, node(y)?);
    let p = fabric.port_between(na, nb).ok_or_else(|| Error::invalid(key, format!("`{x}` and `{y}` are not linked")))?;
    Ok((p, x, y))
}
