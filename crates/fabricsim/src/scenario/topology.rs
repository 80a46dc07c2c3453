//! Checks on `[topology]` that need the scenario's own types: the explicit leaf-spine shape.

use super::{TopologyConfig, TopologyKind};
use crate::error::{Error, Result};
use crate::topo::leaf_spine::Shape;

/// The explicit shape given in `[topology]`, if any: `tors`, `hosts_per_tor` and `spines` (and
/// optionally `links_per_spine`, default 1), for a leaf-spine only and instead of `k`, `hosts` and
/// `oversubscription`.
pub(super) fn leaf_spine_shape(t: &TopologyConfig) -> Result<Option<Shape>> {
    let given = [("tors", t.tors), ("hosts_per_tor", t.hosts_per_tor), ("spines", t.spines), ("links_per_spine", t.links_per_spine)];
    let Some(&(first, _)) = given.iter().find(|(_, v)| v.is_some()) else {
        return Ok(None);
    };
    if t.kind != TopologyKind::LeafSpine {
        return Err(Error::invalid(format!("topology.{first}"), "only for kind = \"leaf_spine\" (a fat tree is sized by `k` or `hosts`)"));
    }
    if t.k.is_some() || t.hosts.is_some() {
        let key = if t.k.is_some() { "topology.k" } else { "topology.hosts" };
        return Err(Error::invalid(key, "give either `k`/`hosts` or the explicit counts `tors`, `hosts_per_tor`, `spines`, not both"));
    }
    if t.oversubscription.0 != 1 {
        return Err(Error::invalid(
            "topology.oversubscription",
            "not allowed with explicit `tors`/`hosts_per_tor`/`spines`: the ratio follows from those counts, `links_per_spine` and the link rates",
        ));
    }
    let need = |key: &str, v: Option<u32>| v.ok_or_else(|| Error::invalid(format!("topology.{key}"), "missing: an explicit leaf-spine needs `tors`, `hosts_per_tor` and `spines`"));
    Ok(Some(Shape {
        tors: need("tors", t.tors)?,
        hosts_per_tor: need("hosts_per_tor", t.hosts_per_tor)?,
        spines: need("spines", t.spines)?,
        links_per_spine: t.links_per_spine.unwrap_or(1),
    }))
}
