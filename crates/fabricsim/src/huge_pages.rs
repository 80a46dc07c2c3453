//! A global allocator that backs large allocations with transparent huge pages (Linux).
//!
//! Why: at 8192 hosts the packet pool, port array, event wheel and routing tables take some
//! 250 MB and are touched at random, one cache line per packet hop. With 4 KiB pages nearly
//! every such touch also misses the TLB, and each miss is a page walk (two-dimensional, and
//! so several times dearer, in a virtual machine). Profiles showed the time of the engine's
//! software prefetches, which walk the page table on a TLB miss, as the largest single cost.
//! 2 MiB pages cover the same data with 512 times fewer TLB entries.
//!
//! Most Linux systems give huge pages only to memory that asks for them
//! (`/sys/kernel/mm/transparent_hugepage/enabled` = `madvise`), so this allocator asks:
//! allocations of at least [`LARGE_BYTES`] are advised `MADV_HUGEPAGE`, and everything else
//! goes to the system allocator unchanged. Where the kernel gives no huge pages (other
//! systems, THP `never`, no free 2 MiB frames) the advice is a no-op, and in every case the
//! simulation's outputs are the same: only where memory sits changes.
//!
//! Binaries opt in (`#[global_allocator] static A: fabricsim::huge_pages::HugePageAlloc =
//! fabricsim::huge_pages::HugePageAlloc;`); the library itself installs nothing.

use std::alloc::{GlobalAlloc, Layout, System};

/// Allocations at least this large are advised to use huge pages. Smaller ones would cover
/// at most part of one 2 MiB page and gain little.
pub const LARGE_BYTES: usize = 4 << 20;

/// The system allocator, advising huge pages for allocations of [`LARGE_BYTES`] or more.
pub struct HugePageAlloc;

#[cfg(target_os = "linux")]
fn advise(ptr: *mut u8, size: usize) {
    const HUGE_PAGE: usize = 2 << 20;
    if ptr.is_null() || size < LARGE_BYTES {
        return;
    }
    // Only whole 2 MiB frames inside the block can be huge pages.
    let start = (ptr as usize).next_multiple_of(HUGE_PAGE);
    let end = (ptr as usize + size) / HUGE_PAGE * HUGE_PAGE;
    if end > start {
        // SAFETY: [start, end) lies inside a block the system allocator just handed out;
        // MADV_HUGEPAGE changes how pages are backed, never their contents. A failure (no THP
        // support) leaves the memory as it was, so the result is ignored.
        unsafe {
            libc::madvise(start as *mut libc::c_void, end - start, libc::MADV_HUGEPAGE);
        }
    }
}

#[cfg(not(target_os = "linux"))]
fn advise(_ptr: *mut u8, _size: usize) {}

// SAFETY: every call is forwarded to `System` with the same arguments; `advise` only adds
// advice on memory the caller now owns.
unsafe impl GlobalAlloc for HugePageAlloc {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let ptr = System.alloc(layout);
        advise(ptr, layout.size());
        ptr
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        let ptr = System.alloc_zeroed(layout);
        advise(ptr, layout.size());
        ptr
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        System.dealloc(ptr, layout)
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if new_size < LARGE_BYTES {
            return System.realloc(ptr, layout, new_size);
        }
        // The system's realloc would move a large block's pages as they are (mremap): the
        // part already written would stay on small pages. A fresh advised block, filled by the
        // copy, is on huge pages throughout.
        let new_layout = Layout::from_size_align_unchecked(new_size, layout.align());
        let new = self.alloc(new_layout);
        if !new.is_null() {
            std::ptr::copy_nonoverlapping(ptr, new, layout.size().min(new_size));
            System.dealloc(ptr, layout);
        }
        new
    }
}

/// The most freed memory the system allocator keeps at the top of a heap before it returns
/// it to the kernel (see [`limit_retained_free_memory`]).
pub const RETAINED_FREE_BYTES: usize = 1 << 20;

/// Fixes glibc's trim threshold at [`RETAINED_FREE_BYTES`] (elsewhere: does nothing).
///
/// Why: glibc raises the threshold, per process, to twice the largest memory-mapped block
/// freed so far (up to 64 MiB), and every thread's heap then keeps that much freed memory. A
/// parallel run frees large blocks on every partition's thread (the whole-fabric arrays a
/// partition builds and then cuts down to its own, vectors that grew), and on
/// `bench/perm_8192.toml` with 16 partitions the heaps held some 60 MB that nothing used.
/// Binaries call this once at start; what they compute is unchanged.
pub fn limit_retained_free_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: `mallopt` only sets an allocator parameter; called before any thread starts.
    unsafe {
        libc::mallopt(libc::M_TRIM_THRESHOLD, RETAINED_FREE_BYTES as libc::c_int);
    }
}

/// The glibc tunable that, set to 1, backs the whole malloc heap with transparent huge pages.
pub const HUGE_HEAP_TUNABLE: &str = "glibc.malloc.hugetlb";

/// Restarts the running binary, once, with glibc's heap on transparent huge pages
/// ([`HUGE_HEAP_TUNABLE`]`=1` added to `GLIBC_TUNABLES`); returns only where it does not restart.
///
/// Why: [`HugePageAlloc`] puts the large arrays on huge pages, but the many small allocations
/// (each connection's scoreboard, timer log and message rings, each receiver's state) come
/// from glibc's heap on 4 KiB pages, and at 8192 hosts they are touched at random, one TLB miss
/// each. glibc reads its tunables only as a process starts, so the binary starts again with
/// the tunable set: `bench/perm_8192.toml` ran 5 % faster (medians of 5 interleaved runs, both
/// the benchmark and the htsim translation), with the same peak memory. What it computes is
/// unchanged. It does nothing when `GLIBC_TUNABLES` already names `glibc.malloc.hugetlb`
/// (set `GLIBC_TUNABLES=glibc.malloc.hugetlb=0` to run without it, e.g. under valgrind, which
/// does not follow the restart), where the system is not Linux with glibc, or when the restart
/// fails (the run goes on as it is).
pub fn restart_with_huge_page_heap() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        use std::os::unix::process::CommandExt;
        let tunables = std::env::var("GLIBC_TUNABLES").unwrap_or_default();
        if tunables.contains(HUGE_HEAP_TUNABLE) {
            return;
        }
        let Ok(exe) = std::env::current_exe() else { return };
        let mut args = std::env::args_os();
        let arg0 = args.next().unwrap_or_else(|| exe.clone().into_os_string());
        let ours = format!("{HUGE_HEAP_TUNABLE}=1");
        let value = if tunables.is_empty() { ours } else { format!("{tunables}:{ours}") };
        // Only returns on failure; the run then goes on without the tunable.
        let _ = std::process::Command::new(exe).arg0(arg0).args(args).env("GLIBC_TUNABLES", value).exec();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Whether the mapping holding `addr` carries the huge-page advice (`hg` in its VmFlags).
    #[cfg(target_os = "linux")]
    fn advised(addr: usize) -> bool {
        let smaps = std::fs::read_to_string("/proc/self/smaps").expect("/proc/self/smaps");
        let mut inside = false;
        for line in smaps.lines() {
            let range = line.split_whitespace().next().and_then(|r| r.split_once('-'));
            if let Some((lo, hi)) = range.and_then(|(a, b)| Some((usize::from_str_radix(a, 16).ok()?, usize::from_str_radix(b, 16).ok()?))) {
                inside = (lo..hi).contains(&addr);
            } else if inside && line.starts_with("VmFlags:") {
                return line.split_whitespace().any(|f| f == "hg");
            }
        }
        false
    }

    #[test]
    fn a_block_grown_large_keeps_its_contents_and_is_advised() {
        let a = HugePageAlloc;
        let pattern = |i: usize| (i % 251) as u8;
        let small = Layout::from_size_align(1 << 20, 64).unwrap();
        let large = 16 << 20;
        // SAFETY: each block is used within its layout and freed once, with that layout.
        unsafe {
            let p = a.alloc(small);
            assert!(!p.is_null());
            (0..small.size()).for_each(|i| *p.add(i) = pattern(i));
            // Past LARGE_BYTES: the copying path.
            let q = a.realloc(p, small, large);
            assert!(!q.is_null() && q as usize % 64 == 0);
            assert!((0..small.size()).all(|i| *q.add(i) == pattern(i)));
            #[cfg(target_os = "linux")]
            if std::path::Path::new("/sys/kernel/mm/transparent_hugepage/enabled").exists() {
                // The block's middle holds whole 2 MiB frames, all advised.
                assert!(advised(q as usize + large / 2));
            }
            // Back below the threshold: the system's own realloc.
            let r = a.realloc(q, Layout::from_size_align(large, 64).unwrap(), 4096);
            assert!((0..4096).all(|i| *r.add(i) == pattern(i)));
            a.dealloc(r, Layout::from_size_align(4096, 64).unwrap());
        }
    }
}
