//! Link names and patterns, as scenarios write them: `"NODE-NODE"` names the port of the first
//! node towards the second; `*` and `?` match node names (`"tor*-spine1"`). `run.trace_ports`
//! selects ports with them and `[topology.failures] links` cables.

use super::Fabric;

/// Whether a link entry (`run.trace_ports`, `[topology.failures] links`) is a pattern rather than a name.
pub(crate) fn is_glob(name: &str) -> bool {
    name.contains(['*', '?'])
}

/// Every port (in port order) whose link `"OWNER-PEER"` matches `pattern` node by node: the
/// pattern's part before its first `-` against the owner's name, the rest against the peer's, so
/// that a `*` never reaches across the dash (`"*-host1"` is not `"tor0-host1"` and `"host10-tor2"`
/// alike by accident of spelling). A pattern without a dash matches nothing.
pub(crate) fn ports_matching<'a>(fabric: &'a Fabric, pattern: &'a str) -> impl Iterator<Item = u32> + 'a {
    let parts = pattern.split_once('-');
    (0..fabric.ports.len() as u32).filter(move |&p| {
        let spec = &fabric.ports[p as usize];
        parts.is_some_and(|(a, b)| glob_match(a.trim(), &fabric.node_name(spec.owner)) && glob_match(b.trim(), &fabric.node_name(spec.peer)))
    })
}

/// A link name of `fabric` to show in errors: its first switch-to-switch port's, else its first
/// port's (a fabric always has a ToR-to-host port).
pub(crate) fn example_link(fabric: &Fabric) -> String {
    let switch = |n: u32| n >= fabric.hosts;
    let p = fabric.ports.iter().position(|s| switch(s.owner.0) && switch(s.peer.0)).unwrap_or(0);
    let spec = &fabric.ports[p];
    format!("{}-{}", fabric.node_name(spec.owner), fabric.node_name(spec.peer))
}

/// Glob matching of a whole `text`: `*` matches any run of characters (also none), `?` exactly
/// one, anything else itself. Backtracks only to the last `*` (a later `*` subsumes every
/// earlier choice), so the work is at most |pattern| × |text|.
pub(crate) fn glob_match(pattern: &str, text: &str) -> bool {
    let (p, t): (Vec<char>, Vec<char>) = (pattern.chars().collect(), text.chars().collect());
    let (mut i, mut j) = (0, 0);
    // Position after the last `*` seen, and the text position it currently stands for.
    let mut star: Option<(usize, usize)> = None;
    while j < t.len() {
        if i < p.len() && (p[i] == '?' || p[i] == t[j]) {
            i += 1;
            j += 1;
        } else if i < p.len() && p[i] == '*' {
            star = Some((i + 1, j));
            i += 1;
        } else if let Some((si, sj)) = star {
            // Let the last `*` swallow one more character and retry from there.
            star = Some((si, sj + 1));
            i = si;
            j = sj + 1;
        } else {
            return false;
        }
    }
    p[i..].iter().all(|&c| c == '*')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn glob_matches_whole_names() {
        for (p, t) in [("*", ""), ("*", "tor0"), ("tor*", "tor0"), ("tor*", "tor"), ("tor?", "tor7"), ("t*0", "tor10"), ("*1", "spine1"), ("a*b*c", "aXXbYYc"), ("*a*", "banana"), ("spine1", "spine1"), ("??", "ab")] {
            assert!(glob_match(p, t), "{p} should match {t}");
        }
        for (p, t) in [("tor?", "tor10"), ("tor*", "agg0"), ("*1", "spine10"), ("spine1", "spine10"), ("a*b*c", "aXXbYY"), ("?", ""), ("??", "a"), ("tor0", "tor")] {
            assert!(!glob_match(p, t), "{p} should not match {t}");
        }
    }
}
