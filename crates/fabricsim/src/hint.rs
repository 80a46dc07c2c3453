//! CPU hints with no effect on results: cache-line prefetch for the event loop's look-ahead
//! (`engine::Sim::prefetch_ahead`), the packet pool and the routing tables.

/// Asks the CPU to start loading the cache line holding `*r` (a hint; no effect on results).
#[inline(always)]
pub fn prefetch<T>(r: &T) {
    prefetch_addr(r as *const T);
}

/// Asks the CPU to start loading the cache line at address `p`, which need not point into any
/// object (a ring's next free slot, say): a prefetch never faults and never dereferences.
#[inline(always)]
pub fn prefetch_addr<T>(p: *const T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: `_mm_prefetch` is a hint; it neither faults nor reads the value, whatever `p` is.
    unsafe {
        std::arch::x86_64::_mm_prefetch(p as *const i8, std::arch::x86_64::_MM_HINT_T0);
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}
