//! The event queue: a min-heap ordered by (time, insertion sequence).
//!
//! Ties at equal times are broken by insertion order, so two runs of the same scenario process
//! events in exactly the same order. Events are small `Copy` records; the heap stores them
//! inline, so scheduling an event never allocates once the heap has grown to its working size.

use crate::units::Time;
use std::cmp::Ordering;
use std::collections::BinaryHeap;

/// What an event does when it fires. The `id` of the event says to what.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum EventKind {
    /// Packet `id` has fully arrived at the far end of the port it last crossed.
    Arrive,
    /// Port `id` finished serializing its current packet and may start the next.
    PortFree,
    /// Task `id` of the traffic graph is ready (dependencies met, start time reached).
    TaskReady,
    /// Connection `id`'s pacing delay is over: it may send again.
    ConnWake,
    /// Connection `id`'s retransmission timer should be checked.
    ConnTimer,
    /// The `id`-th scheduled link change (down, up, rate) takes effect.
    LinkChange,
    /// Periodic sampling of traced state (`run.trace_interval_us`).
    Sample,
    /// Host `id`'s pull pacer may send its next credit (EQDS).
    PullTick,
    /// A PFC frame reaches upstream port `id >> 1`: PAUSE if `id & 1`, else RESUME.
    Pfc,
    /// Connection `id`'s loss-recovery mode timer (e.g. STrack's probe timer) fired.
    RecoveryTimer,
}

/// One scheduled event: 24 bytes.
#[derive(Clone, Copy, Debug)]
pub struct Event {
    /// When it fires.
    pub time: Time,
    seq: u64,
    /// The element, packet or connection it concerns.
    pub id: u32,
    /// What it does.
    pub kind: EventKind,
}

impl PartialEq for Event {
    fn eq(&self, o: &Self) -> bool {
        self.time == o.time && self.seq == o.seq
    }
}
impl Eq for Event {}
impl PartialOrd for Event {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Event {
    // Reversed so that `BinaryHeap` (a max-heap) pops the earliest event first.
    fn cmp(&self, o: &Self) -> Ordering {
        o.time.cmp(&self.time).then(o.seq.cmp(&self.seq))
    }
}

/// log2 of a wheel bucket's width in picoseconds (4.096 ns: well below one packet time).
const BUCKET_BITS: u32 = 12;
/// Default number of buckets (a horizon of 2048 × 4.096 ns ≈ 8.4 µs).
const DEFAULT_WHEEL: usize = 1 << 11;

/// Deterministic event queue: a timing wheel for the near future plus a heap for the far.
///
/// Most events fall within a few link delays of now, so they go into the wheel bucket of their
/// time; the bucket being processed is sorted once by (time, seq) and popped from its end.
/// Events beyond the wheel's horizon (timers, late flow starts) wait in a binary heap and join
/// the current bucket when the wheel reaches their time. A binary heap of every pending packet
/// would cost a cache miss per level on large fabrics; buckets are touched sequentially.
pub struct EventQueue {
    /// Unsorted future buckets, indexed by (time >> BUCKET_BITS) mod WHEEL.
    wheel: Vec<Vec<Event>>,
    /// The bucket being processed, sorted so that the next event is last.
    current: Vec<Event>,
    /// Events pushed into the bucket being processed after it was sorted (e.g. the end of a
    /// 64-byte ACK's serialization, 1.3 ns away): a heap, so an insert never shifts `current`.
    late: BinaryHeap<Event>,
    /// Bucket number ((time >> BUCKET_BITS)) of `current`.
    cur_bucket: u64,
    /// Events in `wheel` (not counting `current`).
    in_wheel: usize,
    /// Events beyond the horizon.
    far: BinaryHeap<Event>,
    /// Number of buckets minus one (a power of two minus one).
    mask: usize,
    next_seq: u64,
}

impl Default for EventQueue {
    fn default() -> Self {
        Self::with_buckets(DEFAULT_WHEEL)
    }
}

impl EventQueue {
    /// A queue whose wheel covers at least `horizon` picoseconds ahead: size it to the longest
    /// packet flight (serialization + propagation + switch latency), so that almost every packet
    /// event lands in the wheel while buckets that sit idle hold no memory.
    pub fn with_horizon(horizon: Time) -> Self {
        let buckets = ((horizon >> BUCKET_BITS) as usize + 2).next_power_of_two().clamp(64, 1 << 16);
        Self::with_buckets(buckets)
    }

    fn with_buckets(buckets: usize) -> Self {
        EventQueue {
            mask: buckets - 1,
            wheel: (0..buckets).map(|_| Vec::new()).collect(),
            current: Vec::new(),
            late: BinaryHeap::new(),
            cur_bucket: 0,
            in_wheel: 0,
            far: BinaryHeap::new(),
            next_seq: 0,
        }
    }

    /// An empty queue.
    pub fn new() -> Self {
        Self::default()
    }

    /// Schedules `kind` for `id` at `time` (never earlier than the last event popped).
    #[inline(always)]
    pub fn push(&mut self, time: Time, kind: EventKind, id: u32) {
        let seq = self.next_seq;
        self.next_seq += 1;
        let ev = Event { time, seq, id, kind };
        let bucket = time >> BUCKET_BITS;
        if bucket <= self.cur_bucket {
            self.late.push(ev);
        } else if bucket <= self.cur_bucket + self.mask as u64 {
            self.wheel[(bucket as usize) & self.mask].push(ev);
            self.in_wheel += 1;
        } else {
            self.far.push(ev);
        }
    }

    /// Removes and returns the earliest event.
    #[inline]
    pub fn pop(&mut self) -> Option<Event> {
        if self.current.is_empty() && self.late.is_empty() {
            self.advance()?;
        }
        // The earliest of the sorted bucket's last event and the late heap's top
        // (`Event`'s order is reversed: greater = earlier).
        match (self.current.last(), self.late.peek()) {
            (Some(a), Some(b)) if b > a => self.late.pop(),
            (Some(_), _) => self.current.pop(),
            (None, _) => self.late.pop(),
        }
    }

    /// Moves to the next non-empty bucket and sorts it into `current`.
    #[cold]
    fn advance(&mut self) -> Option<()> {
        loop {
            if self.in_wheel == 0 {
                // Nothing near: jump straight to the far heap's earliest bucket.
                let t = self.far.peek()?.time;
                self.cur_bucket = t >> BUCKET_BITS;
            } else {
                self.cur_bucket += 1;
            }
            let slot = (self.cur_bucket as usize) & self.mask;
            debug_assert!(self.current.is_empty());
            while let Some(e) = self.far.peek() {
                if e.time >> BUCKET_BITS != self.cur_bucket {
                    break;
                }
                self.current.push(self.far.pop().expect("peeked"));
            }
            let bucket = &mut self.wheel[slot];
            self.in_wheel -= bucket.len();
            if self.current.is_empty() {
                std::mem::swap(&mut self.current, bucket);
            } else {
                self.current.append(bucket);
            }
            if !self.current.is_empty() {
                // Far events (pushed before any wheel event of this bucket, popped in order)
                // precede the wheel's, which sit in push order: among equal times, sequence
                // numbers already ascend. A stable sort on time alone therefore yields (time,
                // seq) order, and runs of equal or ascending times (the common case: packets
                // of synchronized flows) make it close to linear. Reversed so that the earliest
                // event is last, ready for `pop`.
                self.current.sort_by_key(|e| e.time);
                self.current.reverse();
                return Some(());
            }
        }
    }

    /// The event `k` places after the next one in the bucket being processed, if known
    /// (for prefetching the state it will touch).
    #[inline]
    pub fn peek_ahead(&self, k: usize) -> Option<&Event> {
        let n = self.current.len();
        (n > k).then(|| &self.current[n - 1 - k])
    }

    /// Number of pending events.
    pub fn len(&self) -> usize {
        self.current.len() + self.late.len() + self.in_wheel + self.far.len()
    }

    /// True when nothing is pending.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pops_by_time_then_insertion_order() {
        let mut q = EventQueue::new();
        q.push(5, EventKind::Arrive, 1);
        q.push(3, EventKind::Arrive, 2);
        q.push(5, EventKind::Arrive, 3);
        q.push(3, EventKind::Arrive, 4);
        let order: Vec<u32> = std::iter::from_fn(|| q.pop()).map(|e| e.id).collect();
        assert_eq!(order, vec![2, 4, 1, 3]);
    }

    /// The wheel must pop exactly what a plain binary heap would, including far-future events,
    /// events pushed into the bucket being processed, and ties.
    #[test]
    fn matches_a_binary_heap_on_random_workloads() {
        for q in [EventQueue::new(), EventQueue::with_horizon(100_000)] {
            matches_a_binary_heap(q);
        }
    }

    fn matches_a_binary_heap(mut q: EventQueue) {
        let mut rng = crate::rng::Rng::stream(3, "queue-test", 0);
        let mut reference = BinaryHeap::new();
        let mut seq = 0u64;
        let mut now = 0u64;
        for step in 0..200_000u32 {
            if rng.below(3) > 0 || reference.is_empty() {
                let delta = match rng.below(4) {
                    0 => rng.below(5_000),
                    1 => rng.below(2_000_000),
                    2 => rng.below(200_000_000),
                    _ => 0,
                };
                q.push(now + delta, EventKind::Arrive, step);
                reference.push(Event { time: now + delta, seq, id: step, kind: EventKind::Arrive });
                seq += 1;
            } else {
                let a = q.pop().unwrap();
                let b = reference.pop().unwrap();
                assert_eq!((a.time, a.id), (b.time, b.id));
                now = a.time;
            }
            assert_eq!(q.len(), reference.len());
        }
        while let Some(b) = reference.pop() {
            let a = q.pop().unwrap();
            assert_eq!((a.time, a.id), (b.time, b.id));
        }
        assert!(q.pop().is_none());
    }
}
