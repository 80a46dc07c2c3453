//! The book's tutorials run as written: every `fabricsim` command in a `sh` block of a page in
//! `docs/src/tutorials/` (and of the tour, `docs/src/tour.md`, and the recipes,
//! `docs/src/howto/recipes.md`) runs, in page order, in a fresh folder holding a copy of
//! `docs/tutorials/` and `scenarios/` (so the commands' paths are the ones a reader at the
//! repository root types), and must exit 0 (exit code 1 would mean an invariant violation). A
//! page must include (`{{#include ...}}`) every tutorial file its commands name, so that what it
//! shows is what runs, and every file of `docs/tutorials/` must be shown by some page. The
//! commands that run the Python package (`fabricsim sweep`, `plot`, `report`) and `python3`
//! lines are run by `python/tests/test_tutorials.py`.

use std::path::{Path, PathBuf};
use std::process::Command;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The subcommands the Python package runs (`fabricsim` forwards them to `python3 -m fabricsim`).
const PYTHON_COMMANDS: &[&str] = &["sweep", "plot", "report"];

/// Splits a command line as a shell does for plain words: blanks separate words, quotes (single
/// or double) keep everything up to the closing quote, and `#` at the start of a word begins a
/// comment.
fn words(line: &str) -> Vec<String> {
    let (mut out, mut word, mut in_word, mut quote) = (Vec::new(), String::new(), false, None);
    for c in line.chars() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), c) => word.push(c),
            (None, '\'' | '"') => {
                quote = Some(c);
                in_word = true;
            }
            (None, '#') if !in_word => break,
            (None, c) if c.is_whitespace() => {
                if in_word {
                    out.push(std::mem::take(&mut word));
                    in_word = false;
                }
            }
            (None, c) => {
                word.push(c);
                in_word = true;
            }
        }
    }
    assert!(quote.is_none(), "unclosed quote in {line:?}");
    if in_word {
        out.push(word);
    }
    out
}

/// The command lines of a page's `sh` blocks, in order.
fn commands(page: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut in_sh = false;
    for line in page.lines() {
        let t = line.trim();
        if let Some(info) = t.strip_prefix("```") {
            in_sh = !in_sh && info.trim() == "sh";
            continue;
        }
        if in_sh && !t.is_empty() && !t.starts_with('#') {
            out.push(t.to_string());
        }
    }
    out
}

/// The files a page includes (`{{#include PATH}}`, PATH relative to the page), canonical.
fn includes(page_path: &Path, page: &str) -> Vec<PathBuf> {
    page.split("{{#include ")
        .skip(1)
        .map(|rest| {
            let target = rest.split("}}").next().unwrap().trim();
            let target = target.split(':').next().unwrap();
            let path = page_path.parent().unwrap().join(target);
            path.canonicalize().unwrap_or_else(|e| panic!("{}: {{{{#include {target}}}}}: {e}", page_path.display()))
        })
        .collect()
}

fn pages() -> Vec<PathBuf> {
    let dir = repo().join("docs/src/tutorials");
    let mut pages: Vec<PathBuf> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().path()).filter(|p| p.extension().is_some_and(|e| e == "md") && !p.ends_with("index.md")).collect();
    pages.sort();
    assert!(pages.len() >= 5, "the tutorials are gone from {}", dir.display());
    pages.extend(["docs/src/tour.md", "docs/src/howto/recipes.md"].map(|p| repo().join(p)));
    pages
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        if e.file_type().unwrap().is_dir() {
            copy_dir(&e.path(), &to.join(e.file_name()));
        } else {
            std::fs::copy(e.path(), to.join(e.file_name())).unwrap();
        }
    }
}

#[test]
fn every_tutorial_command_runs_as_written() {
    let tutorials = repo().join("docs/tutorials").canonicalize().unwrap();
    let mut shown = Vec::new();
    for page_path in pages() {
        let page = std::fs::read_to_string(&page_path).unwrap();
        let name = page_path.file_stem().unwrap().to_string_lossy().into_owned();
        let included = includes(&page_path, &page);
        shown.extend(included.iter().cloned());
        let lines = commands(&page);
        assert!(!lines.is_empty(), "{}: a tutorial shows the commands it runs in a ```sh block", page_path.display());
        let work = std::env::temp_dir().join(format!("fabricsim-tutorial-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&work);
        copy_dir(&tutorials, &work.join("docs/tutorials"));
        copy_dir(&repo().join("scenarios"), &work.join("scenarios"));
        for line in &lines {
            let w = words(line);
            if w[0] == "python3" || w.get(1).is_some_and(|c| PYTHON_COMMANDS.contains(&c.as_str())) {
                continue;
            }
            assert_eq!(w[0], "fabricsim", "{}: `{line}`: a tutorial's commands are `fabricsim ...` or `python3 ...`", page_path.display());
            // Every tutorial file the command names is one the page shows.
            for arg in &w[1..] {
                for part in arg.split_whitespace().filter(|p| p.starts_with("docs/tutorials/")) {
                    let file = repo().join(part).canonicalize().unwrap_or_else(|e| panic!("{}: `{line}`: {part}: {e}", page_path.display()));
                    assert!(included.contains(&file), "{}: `{line}` runs {part}, which the page does not {{{{#include}}}}", page_path.display());
                }
            }
            let o = Command::new(env!("CARGO_BIN_EXE_fabricsim")).args(&w[1..]).current_dir(&work).output().unwrap();
            assert!(
                o.status.success(),
                "{}: `{line}` exited with {:?}\nstdout:\n{}\nstderr:\n{}",
                page_path.display(),
                o.status.code(),
                String::from_utf8_lossy(&o.stdout),
                String::from_utf8_lossy(&o.stderr)
            );
        }
        let _ = std::fs::remove_dir_all(&work);
    }
    for e in std::fs::read_dir(&tutorials).unwrap() {
        let file = e.unwrap().path().canonicalize().unwrap();
        assert!(shown.contains(&file), "{} is shown by no tutorial page ({{{{#include}}}} it)", file.display());
    }
}

#[test]
fn command_lines_split_as_a_shell_splits_them() {
    assert_eq!(words("fabricsim run a.toml --set 'x=\"4:1\"'  # note"), ["fabricsim", "run", "a.toml", "--set", "x=\"4:1\""]);
    assert_eq!(words("fabricsim from-htsim 'htsim_uec -tm m.cm' -o o.toml"), ["fabricsim", "from-htsim", "htsim_uec -tm m.cm", "-o", "o.toml"]);
    assert_eq!(commands("text\n```sh\nfabricsim list\n# c\n```\n```toml\nfabricsim no\n```\n"), ["fabricsim list"]);
}
