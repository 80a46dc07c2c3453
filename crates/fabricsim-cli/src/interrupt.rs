//! Interrupts of `fabricsim run`: the first SIGINT (Ctrl-C) or SIGTERM asks the running
//! simulation to stop at its next progress check (within 65,536 events), so that the partial
//! results are written, marked `"interrupted": true`; a second one, a second or more after
//! the first, ends the process at once (the system's default action). One sooner is the same
//! interrupt delivered twice: `timeout -s INT` signals the command and then its process group,
//! which holds the command too, and a second delivery that ended the process lost a long run's
//! results (seen on an 8192-GPU run).
//!
//! The handler only reads a monotonic clock and stores to atomics, or restores the default
//! action and raises the signal again, all async-signal-safe; the engine reads [`flag`] after
//! each progress call.

use std::sync::atomic::{AtomicBool, AtomicI32, AtomicU64, Ordering};

static STOP: AtomicBool = AtomicBool::new(false);
static SIGNAL: AtomicI32 = AtomicI32::new(0);
/// When the first signal came (ns on the monotonic clock).
static FIRST_AT_NS: AtomicU64 = AtomicU64::new(0);
/// A second signal sooner than this after the first is the same interrupt.
const REPEAT_NS: u64 = 1_000_000_000;

/// The flag the signal handler sets.
pub fn flag() -> &'static AtomicBool {
    &STOP
}

/// The signal that stopped the run, if one did.
pub fn received() -> Option<i32> {
    Some(SIGNAL.load(Ordering::Relaxed)).filter(|&s| s != 0)
}

/// The exit code of a process ended by `signal`, as shells report it (128 + the number).
pub fn exit_code(signal: i32) -> u8 {
    (128 + signal).clamp(0, 255) as u8
}

/// The signal's usual name, for the message.
pub fn name(signal: i32) -> &'static str {
    match signal {
        2 => "SIGINT (Ctrl-C)",
        15 => "SIGTERM",
        _ => "a signal",
    }
}

/// Nanoseconds on the monotonic clock (`clock_gettime` is async-signal-safe).
#[cfg(unix)]
fn monotonic_ns() -> u64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: `ts` is a valid timespec for the call to fill.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

#[cfg(unix)]
extern "C" fn on_signal(signal: libc::c_int) {
    let now = monotonic_ns();
    if !STOP.swap(true, Ordering::Relaxed) {
        FIRST_AT_NS.store(now, Ordering::Relaxed);
        SIGNAL.store(signal, Ordering::Relaxed);
    } else if now.saturating_sub(FIRST_AT_NS.load(Ordering::Relaxed)) >= REPEAT_NS {
        // SAFETY: `signal` and `raise` are async-signal-safe; the default action of SIGINT
        // and SIGTERM ends the process.
        unsafe {
            libc::signal(signal, libc::SIG_DFL);
            libc::raise(signal);
        }
    }
}

/// Installs the handler for SIGINT and SIGTERM (nothing elsewhere than on Unix, where the
/// system's default ends the process).
pub fn install() {
    #[cfg(unix)]
    for signal in [libc::SIGINT, libc::SIGTERM] {
        // SAFETY: a zeroed sigaction is a valid value to fill in; the handler is an
        // `extern "C"` function that only stores to atomics (async-signal-safe).
        unsafe {
            let mut action: libc::sigaction = std::mem::zeroed();
            action.sa_sigaction = on_signal as extern "C" fn(libc::c_int) as usize;
            action.sa_flags = libc::SA_RESTART;
            libc::sigemptyset(&mut action.sa_mask);
            libc::sigaction(signal, &action, std::ptr::null_mut());
        }
    }
}
