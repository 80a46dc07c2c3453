//! The library's top-level modules form layers: no module reaches, through `crate::` paths in its
//! non-test code, a module that reaches back to it. A circle would let a lower layer (the
//! network, the transport) depend on the simulation that wires it, which is what the
//! architecture forbids (lib.rs describes the layers).
//!
//! The check reads the sources as text: every `crate::NAME` outside `#[cfg(test)]` blocks and
//! comments, where NAME is another top-level module, is an edge.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

fn top_modules(src: &Path) -> BTreeSet<String> {
    std::fs::read_dir(src)
        .unwrap()
        .filter_map(|e| {
            let e = e.ok()?;
            let name = e.file_name().into_string().ok()?;
            if e.path().is_dir() {
                Some(name)
            } else {
                name.strip_suffix(".rs").filter(|n| *n != "lib").map(str::to_string)
            }
        })
        .collect()
}

fn rust_files(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

fn ident(s: &str) -> String {
    s.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect()
}

/// `crate::X` references of a file's non-test, non-comment code.
fn references(text: &str, tops: &BTreeSet<String>) -> BTreeSet<String> {
    let code = text.split("#[cfg(test)]").next().unwrap_or("");
    let mut refs = BTreeSet::new();
    for line in code.lines() {
        let line = line.split("//").next().unwrap_or("");
        let mut rest = line;
        while let Some(i) = rest.find("crate::") {
            let after = &rest[i + 7..];
            // `crate::{a::x, b}` names several modules at once: each top-level item counts.
            let names: Vec<String> = match after.strip_prefix('{') {
                Some(group) => group
                    .split(',')
                    .map(|item| ident(item.trim_start()))
                    .collect(),
                None => vec![ident(after)],
            };
            refs.extend(names.into_iter().filter(|n| tops.contains(n)));
            rest = after;
        }
    }
    refs
}

#[test]
fn top_level_modules_have_no_import_circle() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let tops = top_modules(&src);
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    for f in files {
        let rel = f.strip_prefix(&src).unwrap();
        let first = rel.components().next().unwrap().as_os_str().to_string_lossy().to_string();
        let module = first.strip_suffix(".rs").unwrap_or(&first).to_string();
        if module == "lib" {
            continue;
        }
        let refs = references(&std::fs::read_to_string(&f).unwrap(), &tops);
        graph.entry(module.clone()).or_default().extend(refs.into_iter().filter(|r| *r != module));
    }
    // Depth-first search for a back edge; report the circle it closes.
    fn visit(n: &str, g: &BTreeMap<String, BTreeSet<String>>, state: &mut BTreeMap<String, u8>, stack: &mut Vec<String>) -> Option<Vec<String>> {
        state.insert(n.to_string(), 1);
        stack.push(n.to_string());
        for m in g.get(n).into_iter().flatten() {
            match state.get(m.as_str()).copied().unwrap_or(0) {
                1 => {
                    let i = stack.iter().position(|s| s == m).unwrap();
                    let mut c = stack[i..].to_vec();
                    c.push(m.clone());
                    return Some(c);
                }
                0 => {
                    if let Some(c) = visit(m, g, state, stack) {
                        return Some(c);
                    }
                }
                _ => {}
            }
        }
        stack.pop();
        state.insert(n.to_string(), 2);
        None
    }
    let mut state = BTreeMap::new();
    for n in graph.keys() {
        if state.get(n.as_str()).copied().unwrap_or(0) == 0 {
            if let Some(c) = visit(n, &graph, &mut state, &mut Vec::new()) {
                panic!("import circle among top-level modules: {}\nfull graph: {graph:#?}", c.join(" -> "));
            }
        }
    }
    // The layering, printed for the record (`cargo test --test layering -- --nocapture`).
    for (module, uses) in &graph {
        println!("{module} -> {}", uses.iter().cloned().collect::<Vec<_>>().join(" "));
    }
    // The check must see real edges, or it proves nothing.
    assert!(graph.get("engine").is_some_and(|e| e.contains("net") && e.contains("transport")), "{graph:#?}");
}

#[test]
fn references_skip_comments_and_test_code() {
    let tops: BTreeSet<String> = ["net", "engine"].iter().map(|s| s.to_string()).collect();
    assert_eq!(references("use crate::engine::Sim; // crate::net in a comment\n", &tops), ["engine".to_string()].into());
    assert_eq!(references("use crate::{net::Port, engine};\n", &tops), ["engine".to_string(), "net".to_string()].into());
    assert!(references("#[cfg(test)]\nuse crate::engine::Sim;\n", &tops).is_empty());
}
