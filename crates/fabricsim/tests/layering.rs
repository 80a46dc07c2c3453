//! The library's top-level modules form layers, bottom up, as the list in `lib.rs`'s module
//! documentation gives them: a module uses (through `crate::` paths in its non-test code) only
//! modules of its own layer and of the layers below, and no module reaches a module that
//! reaches back to it. A lower layer (the network, the transport) that depended on the
//! simulation wiring it is what the architecture forbids.
//!
//! The check reads the sources as text: every `crate::NAME` in a file, where NAME is another
//! top-level module, is an edge, except in comments and in the items under `#[cfg(test)]`
//! (a test module anywhere in a file, not only at its end).

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

/// `text` without the items marked `#[cfg(test)]`: the attribute and the item after it, up to
/// the `;` that ends it or the `}` that closes its first block (braces counted; braces inside
/// strings or comments of test code do not matter, since all of it goes).
fn without_test_items(text: &str) -> String {
    const MARK: &str = "#[cfg(test)]";
    let mut out = String::new();
    let mut rest = text;
    while let Some(i) = rest.find(MARK) {
        out.push_str(&rest[..i]);
        let item = &rest[i + MARK.len()..];
        let mut depth = 0usize;
        let mut end = item.len();
        for (j, c) in item.char_indices() {
            match c {
                '{' => depth += 1,
                '}' if depth > 0 => {
                    depth -= 1;
                    if depth == 0 {
                        end = j + 1;
                        break;
                    }
                }
                ';' if depth == 0 => {
                    end = j + 1;
                    break;
                }
                _ => {}
            }
        }
        rest = &item[end..];
    }
    out.push_str(rest);
    out
}

/// `crate::X` references of a file's non-test, non-comment code.
fn references(text: &str, tops: &BTreeSet<String>) -> BTreeSet<String> {
    let code = without_test_items(text);
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
    // Every edge goes down or within a layer, in the order lib.rs lists them.
    let layers = layers_of_lib_rs(&std::fs::read_to_string(src.join("lib.rs")).unwrap());
    let layer = |m: &str| layers.iter().position(|l| l.contains(m));
    let unlisted: Vec<&String> = tops.iter().filter(|m| layer(m).is_none()).collect();
    assert!(unlisted.is_empty(), "top-level modules missing from lib.rs's layer list: {unlisted:?}");
    let upward: Vec<String> = graph
        .iter()
        .flat_map(|(m, uses)| uses.iter().filter(|u| layer(u) > layer(m)).map(move |u| format!("{m} (layer {}) uses {u} (layer {})", layer(m).unwrap() + 1, layer(u).unwrap() + 1)))
        .collect();
    assert!(upward.is_empty(), "modules that use a layer above their own (lib.rs's list):\n{}", upward.join("\n"));
    // The layering, printed for the record (`cargo test --test layering -- --nocapture`).
    for (module, uses) in &graph {
        println!("{module} -> {}", uses.iter().cloned().collect::<Vec<_>>().join(" "));
    }
    // The check must see real edges, or it proves nothing.
    assert!(graph.get("engine").is_some_and(|e| e.contains("net") && e.contains("transport")), "{graph:#?}");
}

/// The layers of `lib.rs`'s module documentation: one per bullet after "Layers, bottom up",
/// each the modules linked before the bullet's first colon.
fn layers_of_lib_rs(lib: &str) -> Vec<BTreeSet<String>> {
    let doc: Vec<&str> = lib.lines().filter_map(|l| l.strip_prefix("//!")).map(str::trim).collect();
    let start = doc.iter().position(|l| l.starts_with("Layers, bottom up")).expect("lib.rs lists its layers");
    let mut layers = Vec::new();
    for line in &doc[start + 1..] {
        if line.is_empty() {
            break;
        }
        let Some(bullet) = line.strip_prefix("- ") else { continue };
        let head = bullet.split(':').next().unwrap_or("");
        let names: BTreeSet<String> = head.split("[`").skip(1).filter_map(|p| p.split("`]").next()).filter(|n| !n.contains("::")).map(str::to_string).collect();
        if !names.is_empty() {
            layers.push(names);
        }
    }
    layers
}

#[test]
fn the_layer_list_is_read_as_lib_rs_writes_it() {
    let lib = "//! Layers, bottom up:\n//! - [`units`], [`ids`]: time\n//!   and ids\n//! - [`net`]: packets ([`net::Network`])\n//!\n//! - [`later`]: not a layer\n";
    let layers = layers_of_lib_rs(lib);
    assert_eq!(layers.len(), 2);
    assert!(layers[0].contains("units") && layers[0].contains("ids") && layers[1] == ["net".to_string()].into());
}

#[test]
fn references_skip_comments_and_test_code() {
    let tops: BTreeSet<String> = ["net", "engine"].iter().map(|s| s.to_string()).collect();
    assert_eq!(references("use crate::engine::Sim; // crate::net in a comment\n", &tops), ["engine".to_string()].into());
    assert_eq!(references("use crate::{net::Port, engine};\n", &tops), ["engine".to_string(), "net".to_string()].into());
    assert!(references("#[cfg(test)]\nuse crate::engine::Sim;\n", &tops).is_empty());
    // A test module in the middle of a file hides only itself.
    let text = "use crate::net::Port;\n#[cfg(test)]\nmod tests {\n    use crate::engine::Sim;\n    fn f() { if true { } }\n}\nfn g() { crate::engine::run(); }\n";
    assert_eq!(references(text, &tops), ["engine".to_string(), "net".to_string()].into());
    let text = "#[cfg(test)]\nmod tests;\nuse crate::engine::Sim;\n";
    assert_eq!(references(text, &tops), ["engine".to_string()].into());
}
