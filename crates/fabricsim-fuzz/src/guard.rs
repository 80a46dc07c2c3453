//! What the fuzzer watches while a case runs: live heap bytes (a counting global allocator
//! with a bound) and time (a watchdog thread with a per-case limit). Either one, once crossed,
//! prints the case being run — its seed, index and TOML — and ends the process with its own
//! exit code, since neither an allocation that cannot be made nor a loop that does not end
//! can be unwound from.
//!
//! The allocator is installed by the binary and the test that use it:
//! `#[global_allocator] static A: fabricsim_fuzz::guard::CountingAlloc = ...;`. Without it,
//! live bytes read 0 and only the time limit applies.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::UnsafeCell;
use std::io::Write;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering::Relaxed};
use std::time::{Duration, Instant};

/// Exit code of a case that allocated beyond the bound.
pub const EXIT_ALLOC: i32 = 3;
/// Exit code of a case that ran beyond the time limit.
pub const EXIT_HANG: i32 = 4;

static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);
static LIMIT: AtomicUsize = AtomicUsize::new(usize::MAX);
/// Whether the counting allocator is the global one (it sets this on its first call).
static COUNTING: AtomicBool = AtomicBool::new(false);

/// A global allocator that counts live bytes and ends the process, printing the current case,
/// when an allocation would take them past the bound ([`set_alloc_limit`]).
pub struct CountingAlloc;

impl CountingAlloc {
    /// Counts `size` more bytes; false (nothing counted) when that would pass the bound.
    fn take(size: usize) -> bool {
        COUNTING.store(true, Relaxed);
        let live = LIVE.fetch_add(size, Relaxed).saturating_add(size);
        if live > LIMIT.load(Relaxed) {
            LIVE.fetch_sub(size, Relaxed);
            return false;
        }
        PEAK.fetch_max(live, Relaxed);
        true
    }

    /// Counts `size` bytes (ending the process past the bound), then allocates them with
    /// `alloc`; a failed allocation is not counted.
    #[inline]
    fn counted(size: usize, alloc: impl FnOnce() -> *mut u8) -> *mut u8 {
        if !Self::take(size) {
            over_limit(size);
        }
        let p = alloc();
        if p.is_null() {
            LIVE.fetch_sub(size, Relaxed);
        }
        p
    }
}

// SAFETY: every call is forwarded to the system allocator with the same layout; the counters
// are atomics, and the over-limit path writes to stderr and exits without allocating.
unsafe impl GlobalAlloc for CountingAlloc {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        Self::counted(layout.size(), || System.alloc(layout))
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        Self::counted(layout.size(), || System.alloc_zeroed(layout))
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        System.dealloc(ptr, layout);
        LIVE.fetch_sub(layout.size(), Relaxed);
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let old = layout.size();
        if new_size > old && !Self::take(new_size - old) {
            over_limit(new_size - old);
        }
        let p = System.realloc(ptr, layout, new_size);
        if p.is_null() {
            if new_size > old {
                LIVE.fetch_sub(new_size - old, Relaxed);
            }
        } else if new_size < old {
            LIVE.fetch_sub(old - new_size, Relaxed);
        }
        p
    }
}

/// Bounds live heap bytes (from now on) at `bytes`.
pub fn set_alloc_limit(bytes: usize) {
    LIMIT.store(bytes, Relaxed);
}

/// Whether live bytes are being counted (the counting allocator is installed).
pub fn counting() -> bool {
    COUNTING.load(Relaxed)
}

/// Live heap bytes now.
pub fn live_bytes() -> usize {
    LIVE.load(Relaxed)
}

/// Resets the peak to the live bytes now (at the start of a case).
pub fn reset_peak() {
    PEAK.store(LIVE.load(Relaxed), Relaxed);
}

/// Most live heap bytes since [`reset_peak`].
pub fn peak_bytes() -> usize {
    PEAK.load(Relaxed)
}

/// Room for the TOML of the case being run, readable from the allocator and the watchdog
/// without allocating. A longer case is cut (its seed and index still reproduce it).
const CASE_CAP: usize = 1 << 16;

struct CaseRecord {
    text: UnsafeCell<[u8; CASE_CAP]>,
}

// SAFETY: the text is written only by the fuzzing thread between cases (`begin_case`), and read
// only to print it right before the process exits.
unsafe impl Sync for CaseRecord {}

static CASE: CaseRecord = CaseRecord { text: UnsafeCell::new([0; CASE_CAP]) };
static CASE_LEN: AtomicUsize = AtomicUsize::new(0);
static CASE_SEED: AtomicU64 = AtomicU64::new(0);
static CASE_INDEX: AtomicU64 = AtomicU64::new(0);
/// Milliseconds since [`epoch`] at which the current case started; 0 between cases.
static CASE_START_MS: AtomicU64 = AtomicU64::new(0);
static CASE_LIMIT_MS: AtomicU64 = AtomicU64::new(u64::MAX);

fn epoch() -> Instant {
    static E: std::sync::OnceLock<Instant> = std::sync::OnceLock::new();
    *E.get_or_init(Instant::now)
}

fn now_ms() -> u64 {
    epoch().elapsed().as_millis() as u64 + 1
}

/// Records the case about to run (printed if it crosses a bound) and starts its clock.
pub fn begin_case(seed: u64, index: u64, text: &str, limit: Duration) {
    CASE_START_MS.store(0, Relaxed);
    let n = text.len().min(CASE_CAP);
    // SAFETY: see `CaseRecord`.
    unsafe { (&mut *CASE.text.get())[..n].copy_from_slice(&text.as_bytes()[..n]) };
    CASE_LEN.store(n, Relaxed);
    CASE_SEED.store(seed, Relaxed);
    CASE_INDEX.store(index, Relaxed);
    CASE_LIMIT_MS.store(limit.as_millis() as u64, Relaxed);
    reset_peak();
    CASE_START_MS.store(now_ms(), Relaxed);
}

/// The current case ended.
pub fn end_case() {
    CASE_START_MS.store(0, Relaxed);
}

/// Writes `n` in decimal without allocating.
fn write_num(out: &mut impl Write, mut n: u64) {
    let mut buf = [0u8; 20];
    let mut i = buf.len();
    loop {
        i -= 1;
        buf[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    let _ = out.write_all(&buf[i..]);
}

/// Prints `what` and the current case to stderr, then exits with `code`; allocates nothing.
fn die(what: &[u8], detail: u64, code: i32) -> ! {
    let mut e = std::io::stderr();
    let _ = e.write_all(b"\nfabricsim-fuzz: ");
    let _ = e.write_all(what);
    write_num(&mut e, detail);
    let _ = e.write_all(b"\n# fabricsim-fuzz --seed ");
    write_num(&mut e, CASE_SEED.load(Relaxed));
    let _ = e.write_all(b" --case ");
    write_num(&mut e, CASE_INDEX.load(Relaxed));
    let _ = e.write_all(b" (reproduces it)\n");
    let n = CASE_LEN.load(Relaxed);
    // SAFETY: see `CaseRecord`.
    let _ = e.write_all(unsafe { &(&*CASE.text.get())[..n] });
    let _ = e.write_all(b"\n");
    let _ = e.flush();
    std::process::exit(code)
}

fn over_limit(size: usize) -> ! {
    die(b"allocation beyond the bound: live bytes would pass the limit with an allocation of ", size as u64, EXIT_ALLOC)
}

/// Starts the watchdog: a thread that ends the process, printing the case, when one runs longer
/// than its limit. Started once; later calls do nothing.
pub fn start_watchdog() {
    static STARTED: AtomicBool = AtomicBool::new(false);
    if STARTED.swap(true, Relaxed) {
        return;
    }
    epoch();
    std::thread::spawn(|| loop {
        std::thread::sleep(Duration::from_millis(50));
        let start = CASE_START_MS.load(Relaxed);
        if start != 0 {
            let ran = now_ms().saturating_sub(start);
            if ran > CASE_LIMIT_MS.load(Relaxed) {
                die(b"case ran past its time limit (a hang); ms so far: ", ran, EXIT_HANG);
            }
        }
    });
}
