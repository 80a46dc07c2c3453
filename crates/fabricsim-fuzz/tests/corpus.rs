//! Every case in `corpus/` (cases the fuzzer found failing, their class since fixed) passes the
//! check path, and the run cases also run deterministically within their invariants.

#[test]
fn every_corpus_case_passes() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("corpus");
    let data = std::env::temp_dir().join(format!("fabricsim-fuzz-corpus-{}", std::process::id()));
    let mut n = 0;
    let mut failed = Vec::new();
    for entry in std::fs::read_dir(&dir).expect("corpus folder") {
        let path = entry.expect("corpus entry").path();
        if path.extension().is_some_and(|e| e == "toml") {
            let text = std::fs::read_to_string(&path).expect("corpus case");
            if let Err(e) = fabricsim_fuzz::replay(&text, &data) {
                failed.push(format!("{}: {e}", path.display()));
            }
            n += 1;
        }
    }
    let _ = std::fs::remove_dir_all(&data);
    assert!(failed.is_empty(), "{}", failed.join("\n"));
    assert!(n >= 4, "the corpus holds {n} cases");
}
