//! The timing wheel's buckets: one list of fixed-size chunks per bucket, every chunk drawn from
//! one shared arena and returned to it when its bucket is drained.
//!
//! Why not a `Vec` per bucket: synchronized senders put bursts of thousands of events into a
//! few buckets, the wheel turns every few microseconds, and a `Vec` keeps the capacity of the
//! largest burst it ever held, so after a while every bucket holds a burst's worth (31 MB of
//! the 1024-host benchmark's 56 MB peak). Chunks go back to a shared free list instead, so the
//! arena holds the most events ever pending at once (rounded up to chunks), whatever bucket
//! they were in. Once it has grown to that size, pushing never allocates.

use super::queue::Event;

/// Events per chunk: 32 × 16 B = 512 B, eight cache lines.
const CHUNK: usize = 32;
/// No chunk.
const NIL: u32 = u32::MAX;

/// One chunk's events, aligned so that it covers exactly eight cache lines (not nine).
#[derive(Clone, Copy)]
#[repr(align(64))]
struct Chunk([Event; CHUNK]);

/// The buckets of a timing wheel (see [`super::queue::EventQueue`]).
pub struct Buckets {
    /// The chunk arena.
    chunks: Vec<Chunk>,
    /// Per chunk: the next chunk of its bucket's list, or of the free list.
    next: Vec<u32>,
    /// Head of the free list.
    free: u32,
    /// Per bucket: first and last chunk (`NIL` when empty) and the fill of the last.
    head: Vec<u32>,
    tail: Vec<u32>,
    tail_len: Vec<u8>,
    /// Bit `b` set when bucket `b` holds events.
    occupied: Vec<u64>,
}

impl Buckets {
    /// `n` empty buckets.
    pub fn new(n: usize) -> Self {
        debug_assert!(n.is_power_of_two() && n >= 64);
        Buckets { chunks: Vec::new(), next: Vec::new(), free: NIL, head: vec![NIL; n], tail: vec![NIL; n], tail_len: vec![0; n], occupied: vec![0; n / 64] }
    }

    /// Appends `ev` to bucket `b`.
    #[inline(always)]
    pub fn push(&mut self, b: usize, ev: Event) {
        let t = self.tail[b];
        let len = self.tail_len[b] as usize;
        if t != NIL && len < CHUNK {
            self.chunks[t as usize].0[len] = ev;
            self.tail_len[b] = len as u8 + 1;
            return;
        }
        self.push_new_chunk(b, ev);
    }

    /// `push` when the bucket's last chunk is full (or it has none): links a fresh chunk.
    #[inline(never)]
    fn push_new_chunk(&mut self, b: usize, ev: Event) {
        let c = if self.free != NIL {
            let c = self.free;
            self.free = self.next[c as usize];
            c
        } else {
            self.chunks.push(Chunk([ev; CHUNK]));
            self.next.push(NIL);
            (self.chunks.len() - 1) as u32
        };
        self.chunks[c as usize].0[0] = ev;
        self.next[c as usize] = NIL;
        match self.tail[b] {
            NIL => {
                self.head[b] = c;
                self.occupied[b / 64] |= 1 << (b % 64);
            }
            t => self.next[t as usize] = c,
        }
        self.tail[b] = c;
        self.tail_len[b] = 1;
    }

    /// Moves every event of bucket `b`, in push order, to the end of `out`; returns how many.
    pub fn drain_into(&mut self, b: usize, out: &mut Vec<Event>) -> usize {
        let before = out.len();
        let mut c = self.head[b];
        while c != NIL {
            let n = if c == self.tail[b] { self.tail_len[b] as usize } else { CHUNK };
            out.extend_from_slice(&self.chunks[c as usize].0[..n]);
            let following = self.next[c as usize];
            self.next[c as usize] = self.free;
            self.free = c;
            c = following;
        }
        self.head[b] = NIL;
        self.tail[b] = NIL;
        self.tail_len[b] = 0;
        self.occupied[b / 64] &= !(1 << (b % 64));
        out.len() - before
    }

    /// How many buckets after `from` (cyclically, `from` itself at 0) the first occupied one
    /// lies. At least one bucket must be occupied.
    pub fn next_occupied(&self, from: usize) -> usize {
        let words = self.occupied.len();
        let (w0, bit) = (from / 64, from % 64);
        // The first word from `from`'s bit on; then whole words, wrapping around (the last
        // one is the first word again, for its bits below `from`).
        let first = self.occupied[w0] >> bit;
        if first != 0 {
            return first.trailing_zeros() as usize;
        }
        for i in 1..=words {
            let w = self.occupied[(w0 + i) % words];
            if w != 0 {
                return i * 64 - bit + w.trailing_zeros() as usize;
            }
        }
        unreachable!("next_occupied on an empty wheel")
    }

    /// Chunks the arena holds (in use or free): its memory is this × 512 B.
    #[cfg(test)]
    pub fn chunks(&self) -> usize {
        self.chunks.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::units::Time;
    use crate::kernel::queue::EventQueue;

    /// An event (its fields are the queue's to set).
    fn an_event() -> Event {
        let mut q = EventQueue::new();
        q.push(Time::ZERO, crate::kernel::queue::EventKind::ConnWake, 0);
        q.pop().unwrap()
    }

    #[test]
    fn drains_in_push_order_across_chunks_and_reuses_them() {
        let sample = an_event();
        let mut b = Buckets::new(64);
        let mk = |id: u32| {
            let mut e = sample;
            e.id = id;
            e
        };
        for i in 0..(3 * CHUNK as u32 + 5) {
            b.push((i % 2) as usize, mk(i));
        }
        let mut out = Vec::new();
        assert_eq!(b.drain_into(0, &mut out), (3 * CHUNK + 5).div_ceil(2));
        assert!(out.iter().map(|e| e.id).eq((0..(3 * CHUNK as u32 + 5)).step_by(2)));
        assert_eq!(b.drain_into(0, &mut Vec::new()), 0);
        let held = b.chunks();
        // Bucket 0's chunks serve bucket 2 now: the arena does not grow.
        for i in 0..(CHUNK as u32 + 3) {
            b.push(2, mk(i));
        }
        assert_eq!(b.chunks(), held);
        let mut out = Vec::new();
        b.drain_into(1, &mut out);
        assert!(out.iter().map(|e| e.id).eq((1..(3 * CHUNK as u32 + 5)).step_by(2)));
    }

    #[test]
    fn finds_the_next_occupied_bucket_cyclically() {
        let e = an_event();
        let mut b = Buckets::new(256);
        for &at in &[3usize, 70, 200] {
            b.push(at, e);
        }
        assert_eq!(b.next_occupied(0), 3);
        assert_eq!(b.next_occupied(3), 0);
        assert_eq!(b.next_occupied(4), 66);
        assert_eq!(b.next_occupied(71), 129);
        assert_eq!(b.next_occupied(201), 256 - 201 + 3);
        b.drain_into(3, &mut Vec::new());
        assert_eq!(b.next_occupied(201), 256 - 201 + 70);
    }

    /// A burst in every bucket in turn holds memory for one burst, not one per bucket.
    #[test]
    fn memory_follows_the_events_pending_not_the_largest_burst_per_bucket() {
        let e = an_event();
        let mut b = Buckets::new(64);
        let mut out = Vec::new();
        for round in 0..64 {
            for _ in 0..(10 * CHUNK) {
                b.push(round, e);
            }
            out.clear();
            b.drain_into(round, &mut out);
        }
        assert_eq!(b.chunks(), 10);
    }
}
