//! The fuzzer as CI runs it: 2,000 check cases (valid and hostile scenarios through the check
//! path) and 200 run cases (small valid scenarios, each run twice), with the live heap bounded
//! at 2 GiB, a time limit per case, and nothing found. The long campaign (10^5 cases) is in
//! the book's `docs/src/architecture/testing.md`.

use fabricsim_fuzz::{fuzz, guard, Config, Mode};

#[global_allocator]
static ALLOC: guard::CountingAlloc = guard::CountingAlloc;

#[test]
fn generated_cases_find_no_panic_hang_allocation_abort_unnamed_rejection_or_nondeterminism() {
    guard::set_alloc_limit(2 << 30);
    // One campaign after the other: they share the watchdog and the case record.
    let check = fuzz(&Config::new(2000, 1, Mode::Check));
    assert!(check.clean(), "{}\n{:#?}", check.summary(), check.failures);
    assert!(check.cases == 2000 && check.accepted > 100, "{}", check.summary());
    assert!(check.rejected.len() > 50, "rejections should name many different keys:\n{}", check.summary());
    assert!(guard::counting() && check.peak_case_bytes > 0, "the counting allocator is installed");
    let run = fuzz(&Config::new(200, 1, Mode::Run));
    assert!(run.clean(), "{}\n{:#?}", run.summary(), run.failures);
    assert!(run.runs > 150, "most run cases are accepted and run:\n{}", run.summary());
    eprintln!("{}\n{}", check.summary(), run.summary());
}
