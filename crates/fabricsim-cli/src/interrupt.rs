//! Interrupts of `fabricsim run`: the first SIGINT (Ctrl-C) or SIGTERM asks the running
//! simulation to stop at its next progress check (within 65,536 events), so that the partial
//! results are written, marked `"interrupted": true`; a second one ends the process at once
//! (the handler resets itself to the system's default when it fires).
//!
//! The handler only stores the signal's number in an atomic, which is all a signal handler may
//! safely do; the engine reads [`flag`] after each progress call.

use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};

static STOP: AtomicBool = AtomicBool::new(false);
static SIGNAL: AtomicI32 = AtomicI32::new(0);

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

#[cfg(unix)]
extern "C" fn on_signal(signal: libc::c_int) {
    SIGNAL.store(signal, Ordering::Relaxed);
    STOP.store(true, Ordering::Relaxed);
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
            action.sa_flags = libc::SA_RESETHAND | libc::SA_RESTART;
            libc::sigemptyset(&mut action.sa_mask);
            libc::sigaction(signal, &action, std::ptr::null_mut());
        }
    }
}
