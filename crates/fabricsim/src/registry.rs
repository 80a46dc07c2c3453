//! The catalogue of every pluggable scheme, by family: what `fabricsim list` prints, what the
//! README's tables are checked against, and where a user learns the names, parameters, defaults
//! and allowed ranges of every scheme. Each family's rows come from the family's own
//! declaration (`scheme_family!` in its `mod.rs`, see [`crate::scheme`]), so this file changes
//! only when a new *family* appears, never for a new scheme.

use crate::scheme::{Family, SchemeRow};

/// Topologies (`topology.kind`); their parameters are the `[topology]` keys (README).
const TOPOLOGIES: &[SchemeRow] = &[
    crate::scheme::plain_row::<crate::scheme::NoParams>(
        "fat_tree",
        "3-tier k-ary fat tree: k³/4 hosts; oversubscription at the ToR or aggregation tier",
    ),
    crate::scheme::plain_row::<crate::scheme::NoParams>(
        "leaf_spine",
        "2-tier leaf-spine of radix K: K ToRs × K/2 hosts, K/(2r) spines; or explicit tors/hosts_per_tor/spines",
    ),
];

/// Every family, in the order `fabricsim list` prints them.
pub fn families() -> Vec<Family> {
    use crate::transport::{cc, credit, gate, lb, recovery};
    vec![
        Family { title: "topologies", key: "topology.kind", schemes: TOPOLOGIES },
        Family { title: "congestion control", key: "transport.cc", schemes: cc::CcConfig::REGISTRY },
        Family { title: "path selection", key: "transport.lb", schemes: lb::LbConfig::REGISTRY },
        Family { title: "switch path selection", key: "switch.lb", schemes: crate::net::switch_lb::SwitchLbConfig::REGISTRY },
        Family { title: "workloads", key: "workload.kind", schemes: crate::workload::REGISTRY },
        Family { title: "message gates", key: "transport.gate", schemes: gate::GateConfig::REGISTRY },
        Family { title: "receiver credits", key: "transport.credit", schemes: credit::CreditConfig::REGISTRY },
        Family { title: "loss recovery", key: "transport.reliability", schemes: recovery::RecoveryConfig::REGISTRY },
    ]
}

/// The family selected by scenario key `key` (`transport.cc`), if any.
pub fn family(key: &str) -> Option<Family> {
    families().into_iter().find(|f| f.key == key)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_within_each_family_and_parameters_list() {
        for f in families() {
            let mut names: Vec<_> = f.schemes.iter().map(|s| s.name).collect();
            names.sort_unstable();
            names.dedup();
            assert_eq!(names.len(), f.schemes.len(), "duplicate name in {}", f.key);
            for s in f.schemes {
                assert!(!s.summary.is_empty(), "{}: {} has no summary", f.key, s.name);
                // Parameter listing must not fail for any scheme.
                let _ = (s.params)();
            }
        }
    }

    #[test]
    fn listed_parameters_carry_their_defaults() {
        let cc = family("transport.cc").unwrap();
        let fixed = cc.schemes.iter().find(|s| s.name == "fixed").unwrap();
        let params = (fixed.params)();
        assert!(params.iter().any(|p| p.key == "window_bdp" && p.default == "1.0"), "{params:?}");
        let gate = family("transport.gate").unwrap();
        let mo = gate.schemes.iter().find(|s| s.name == "max_outstanding").unwrap();
        let params = (mo.params)();
        assert_eq!(params, vec![crate::scheme::ParamRow { key: "messages".into(), default: "8".into(), allowed: Some("1..=1000000".into()) }]);
    }

    #[test]
    fn declared_limits_are_enforced_with_the_key_and_range() {
        let g: crate::transport::gate::GateConfig = toml::from_str("name = \"max_outstanding\"\nmessages = 0").unwrap();
        let e = g.validate().unwrap_err().to_string();
        assert!(e.contains("transport.gate.messages") && e.contains("1..=1000000"), "{e}");
    }
}
