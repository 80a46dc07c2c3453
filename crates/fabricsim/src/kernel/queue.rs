//! The event queue: a min-heap ordered by (time, kind, entity).
//!
//! Events at equal times run in an order that depends only on *what* they are: first by kind
//! (the [`EventKind`] discriminant, a fixed priority), then by the element they concern (a
//! port, a connection, a task, …): never on when or by whom they were scheduled. So the order
//! is the same however the fabric is split between event queues (a parallel engine's
//! partitions each see their own events in the serial engine's relative order), and two runs
//! of the same scenario process events in exactly the same order. Events are 16-byte `Copy`
//! records stored inline, so scheduling an event never allocates once the queue has grown to
//! its working size.

use super::buckets::Buckets;
use crate::units::Time;
use std::cmp::Ordering;
use std::collections::BinaryHeap;

/// What an event does when it fires. The `id` of the event says to what. The discriminant is
/// the priority among events at one instant (lower first): a link change takes effect before
/// anything else at its moment, frames and packets arrive before ports and hosts act on what
/// arrived, and the sampler sees the state after everything at its moment.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
#[repr(u8)]
pub enum EventKind {
    /// The `id`-th scheduled link change (down, up, rate) takes effect.
    LinkChange = 0,
    /// The oldest PFC frame in flight to upstream port `id` reaches it (which frame it is,
    /// PAUSE or RESUME, is the port's to say: see `net::pfc::Ingress`).
    Pfc = 1,
    /// Packet `id` has fully arrived at the far end of the port it last crossed (the event's
    /// entity: at most one packet arrives over a port at one instant).
    Arrive = 2,
    /// Packet `id`, held at its first switch by `run.drop_packets` (the event's entity is the
    /// plan entry), arrives there anew.
    HeldArrive = 3,
    /// Port `id` finished serializing its current packet and may start the next.
    PortFree = 4,
    /// Host `id`'s pull pacer may send its next credit (EQDS).
    PullTick = 5,
    /// Connection `id`'s retransmission timer should be checked.
    ConnTimer = 6,
    /// Connection `id`'s loss-recovery mode timer (e.g. STrack's probe timer) fired.
    RecoveryTimer = 7,
    /// Connection `id`'s pacing delay is over: it may send again.
    ConnWake = 8,
    /// Task `id` of the traffic graph is ready (dependencies met, start time reached).
    TaskReady = 9,
    /// Periodic sampling of traced state (`run.trace_interval_us`).
    Sample = 10,
}

impl EventKind {
    /// Every kind, by discriminant (`ALL[k as usize] == k`).
    #[cfg(test)]
    const ALL: [EventKind; 11] = [
        EventKind::LinkChange,
        EventKind::Pfc,
        EventKind::Arrive,
        EventKind::HeldArrive,
        EventKind::PortFree,
        EventKind::PullTick,
        EventKind::ConnTimer,
        EventKind::RecoveryTimer,
        EventKind::ConnWake,
        EventKind::TaskReady,
        EventKind::Sample,
    ];
}

/// Bits of an event's order key that hold the entity (below the kind's 4 bits).
pub const ENTITY_BITS: u32 = 28;
/// Entities an event kind can name: ports (×2 for PFC frames), connections, tasks, hosts, link
/// changes and drop-plan entries must each stay below this (checked when a run is built).
pub const MAX_ENTITIES: u64 = 1 << ENTITY_BITS;

/// One scheduled event: 16 bytes.
#[derive(Clone, Copy, Debug)]
pub struct Event {
    /// When it fires.
    pub time: Time,
    /// Kind (top 4 bits) and entity (low 28 bits): the order among events at one instant.
    key: u32,
    /// The element, packet or connection it concerns.
    pub id: u32,
}

impl Event {
    /// What it does.
    #[inline(always)]
    pub fn kind(&self) -> EventKind {
        // SAFETY: `key` is private and only ever built as `(kind as u32) << ENTITY_BITS | entity` with
        // `entity` masked to its `ENTITY_BITS` (`push_for`), so its top bits are a valid discriminant
        // of the `repr(u8)` enum. (A table lookup here cost 4 % of all instructions.)
        unsafe { std::mem::transmute::<u8, EventKind>((self.key >> ENTITY_BITS) as u8) }
    }

    /// (time, kind and entity): where it stands among all events of the run. A parallel run's
    /// partitions compare their progress by it (`engine::parallel`).
    #[inline(always)]
    pub fn point(&self) -> (Time, u32) {
        (self.time, self.key)
    }

    /// Its place in the run's total order. Two events with equal (time, key) are the same
    /// event (same kind, same element; an `Arrive`'s port carries one packet at an instant), so
    /// `id` breaks no tie that matters: it only makes the order total.
    #[inline(always)]
    fn order(&self) -> (Time, u64) {
        (self.time, (self.key as u64) << 32 | self.id as u64)
    }
}

impl PartialEq for Event {
    fn eq(&self, o: &Self) -> bool {
        self.order() == o.order()
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
        o.order().cmp(&self.order())
    }
}

/// log2 of a wheel bucket's width in picoseconds when nothing says better (4.096 ns).
const DEFAULT_BUCKET_BITS: u32 = 12;
/// Events a bucket should hold when the fabric is busy: enough that a bucket's fixed cost is
/// shared, few enough that sorting it stays short. (Measured by instruction counts: a
/// 1024-host fabric at 400 Gb/s does best at 128-256 ps buckets, a 128-host one at 100 Gb/s
/// at 1 ns; the estimate of the event rate below lands both there.)
const EVENTS_PER_BUCKET: f64 = 8.0;
/// Default number of buckets (a horizon of 2048 × 4.096 ns ≈ 8.4 µs).
const DEFAULT_WHEEL: usize = 1 << 11;
/// Slots of the outer wheel, each half the inner wheel's span: 4096 × 4.2 µs ≈ 17 ms by
/// default, and a few ms at the finest buckets, which covers pacing gaps and retransmission
/// timers (the lb-ai-training study's paced flows put 9 % of their events there).
const OUTER_SLOTS: usize = 1 << 12;

/// Deterministic event queue: a timing wheel for the near future, a coarser wheel beyond it,
/// and a heap for the far.
///
/// Most events fall within a few link delays of now, so they go into the wheel bucket of their
/// time; the bucket being processed is sorted once by (time, key) and popped from its end.
/// Events beyond the wheel's horizon (pacing gaps, timers) go into the outer wheel, whose slot
/// spans half the inner wheel; a slot moves into the inner wheel, unsorted, just before the
/// inner wheel reaches its first bucket. Events beyond both (late flow starts) wait in a binary
/// heap and join the current bucket when the wheel reaches their time. A binary heap of every
/// pending event would cost a cache miss per level; buckets are touched sequentially. Which of
/// the three holds an event never changes the order: a bucket is sorted only once every event
/// of its time range has reached it.
pub struct EventQueue {
    /// Unsorted future buckets, indexed by (time >> bits) mod WHEEL.
    wheel: Buckets,
    /// Unsorted later events, indexed by period = bucket >> period_bits, mod the outer size.
    /// Invariant: every period held lies in (current period, current period + outer_mask].
    outer: Buckets,
    /// Events in `outer`.
    in_outer: usize,
    /// log2 of an outer slot's width in inner buckets (half the inner wheel).
    period_bits: u32,
    /// Outer slots minus one.
    outer_mask: usize,
    /// Reusable buffer for moving an outer slot into the inner wheel.
    cascade: Vec<Event>,
    /// The bucket being processed, sorted so that the next event is last.
    current: Vec<Event>,
    /// Events pushed into the bucket being processed after it was sorted (e.g. the end of a
    /// 64-byte ACK's serialization, 1.3 ns away): a heap, so an insert never shifts `current`.
    late: BinaryHeap<Event>,
    /// Bucket number ((time >> bits)) of `current`.
    cur_bucket: u64,
    /// Events in `wheel` (not counting `current`).
    in_wheel: usize,
    /// Events beyond the horizon.
    far: BinaryHeap<Event>,
    /// Number of buckets minus one (a power of two minus one).
    mask: usize,
    /// log2 of a bucket's width in picoseconds.
    bits: u32,
    /// Reusable buffers of `sort_bucket`.
    sort_buf: SortBuffers,
}

impl Default for EventQueue {
    fn default() -> Self {
        Self::with_wheels(DEFAULT_WHEEL, OUTER_SLOTS, DEFAULT_BUCKET_BITS)
    }
}

impl EventQueue {
    /// A queue whose wheel covers at least `horizon` picoseconds ahead: size it to the longest
    /// packet flight (serialization + propagation + switch latency), so that almost every packet
    /// event lands in the wheel while buckets that sit idle hold no memory.
    pub fn with_horizon(horizon: Time, events_per_ns: f64) -> Self {
        let bits = Self::bucket_bits(events_per_ns);
        let buckets = ((horizon.0 >> bits) as usize + 2).next_power_of_two().clamp(64, 1 << 16);
        Self::with_wheels(buckets, OUTER_SLOTS, bits)
    }

    /// The bucket width for a fabric expected to make `events_per_ns` events per nanosecond
    /// when busy: about [`EVENTS_PER_BUCKET`] per bucket (rounded down to a power of two),
    /// between 128 ps and 8 ns. (The width only moves work between sorting buckets and
    /// stepping through them; the order of events is the same.)
    fn bucket_bits(events_per_ns: f64) -> u32 {
        if !(events_per_ns > 0.0) {
            return DEFAULT_BUCKET_BITS;
        }
        let width_ps = EVENTS_PER_BUCKET / events_per_ns * 1000.0;
        (width_ps.log2().floor() as i64).clamp(7, 13) as u32
    }

    /// `buckets` inner buckets of 2^`bits` ps and `outer_slots` outer slots (both powers of two).
    fn with_wheels(buckets: usize, outer_slots: usize, bits: u32) -> Self {
        EventQueue {
            mask: buckets - 1,
            bits,
            wheel: Buckets::new(buckets),
            outer: Buckets::new(outer_slots),
            in_outer: 0,
            period_bits: buckets.trailing_zeros() - 1,
            outer_mask: outer_slots - 1,
            cascade: Vec::new(),
            current: Vec::new(),
            late: BinaryHeap::new(),
            cur_bucket: 0,
            in_wheel: 0,
            far: BinaryHeap::new(),
            sort_buf: SortBuffers::default(),
        }
    }

    /// An empty queue.
    pub fn new() -> Self {
        Self::default()
    }

    /// Schedules `kind` for `id` at `time` (never earlier than the last event popped); `id` is
    /// the entity that orders it among events of its kind at that instant.
    #[inline(always)]
    pub fn push(&mut self, time: Time, kind: EventKind, id: u32) {
        self.push_for(time, kind, id, id);
    }

    /// Schedules `kind` for `id` at `time`, ordered among events of its kind at that instant
    /// by `entity` (e.g. an arriving packet by the port it crossed).
    #[inline(always)]
    pub fn push_for(&mut self, time: Time, kind: EventKind, entity: u32, id: u32) {
        debug_assert!((entity as u64) < MAX_ENTITIES, "event entity {entity} beyond the key's {ENTITY_BITS} bits");
        // Masked, so the kind bits stay a valid discriminant whatever `entity` is (`kind()`
        // relies on it); `Sim::new` refuses runs whose entities would not fit.
        let ev = Event { time, key: (kind as u32) << ENTITY_BITS | (entity & (MAX_ENTITIES as u32 - 1)), id };
        let bucket = time.0 >> self.bits;
        if bucket <= self.cur_bucket {
            self.late.push(ev);
        } else if bucket <= self.cur_bucket + self.mask as u64 {
            self.wheel.push((bucket as usize) & self.mask, ev);
            self.in_wheel += 1;
        } else if bucket >> self.period_bits <= (self.cur_bucket >> self.period_bits) + self.outer_mask as u64 {
            self.outer.push((bucket >> self.period_bits) as usize & self.outer_mask, ev);
            self.in_outer += 1;
        } else {
            self.far.push(ev);
        }
    }

    /// Removes and returns the earliest event.
    #[inline]
    pub fn pop(&mut self) -> Option<Event> {
        self.pop_if(|_| true)
    }

    /// Removes and returns the earliest event if `take` accepts it; otherwise leaves it queued
    /// and returns None (as it does when the queue is empty).
    #[inline]
    pub fn pop_if(&mut self, take: impl FnOnce(&Event) -> bool) -> Option<Event> {
        let late = self.earliest_is_late()?;
        let next = if late { self.late.peek() } else { self.current.last() };
        if !take(next.expect("non-empty")) {
            return None;
        }
        if late {
            self.late.pop()
        } else {
            self.current.pop()
        }
    }

    /// The earliest event, left in the queue.
    #[inline]
    pub fn peek(&mut self) -> Option<&Event> {
        if self.earliest_is_late()? {
            self.late.peek()
        } else {
            self.current.last()
        }
    }

    /// Whether the earliest event is the late heap's top rather than the sorted bucket's last
    /// (`Event`'s order is reversed: greater = earlier); None when the queue is empty.
    #[inline(always)]
    fn earliest_is_late(&mut self) -> Option<bool> {
        if self.current.is_empty() && self.late.is_empty() {
            self.advance()?;
        }
        Some(match (self.current.last(), self.late.peek()) {
            (Some(a), Some(b)) => b > a,
            (Some(_), None) => false,
            (None, _) => true,
        })
    }

    /// Moves to the next non-empty bucket and sorts it into `current`.
    #[cold]
    fn advance(&mut self) -> Option<()> {
        loop {
            // The next bucket with events: the wheel's next occupied one (its bitmap skips
            // empty buckets a word at a time) or the far heap's earliest, whichever is sooner.
            let near = (self.in_wheel > 0).then(|| {
                let from = (self.cur_bucket + 1) as usize & self.mask;
                self.cur_bucket + 1 + self.wheel.next_occupied(from) as u64
            });
            let far = self.far.peek().map(|e| e.time.0 >> self.bits);
            let next = match (near, far) {
                (Some(a), Some(b)) => Some(a.min(b)),
                (a, b) => a.or(b),
            };
            // Unless that bucket comes before the outer wheel's next period, the period's
            // events join the inner wheel first (they may share the bucket).
            if self.in_outer > 0 {
                let period = self.cur_bucket >> self.period_bits;
                let from = (period + 1) as usize & self.outer_mask;
                let start = (period + 1 + self.outer.next_occupied(from) as u64) << self.period_bits;
                if next.is_none_or(|b| b >= start) {
                    self.cascade(start);
                    continue;
                }
            }
            self.cur_bucket = next?;
            let slot = (self.cur_bucket as usize) & self.mask;
            debug_assert!(self.current.is_empty());
            while let Some(e) = self.far.peek() {
                if e.time.0 >> self.bits != self.cur_bucket {
                    break;
                }
                self.current.push(self.far.pop().expect("peeked"));
            }
            self.in_wheel -= self.wheel.drain_into(slot, &mut self.current);
            if !self.current.is_empty() {
                // Latest first, so that the earliest event is last, ready for `pop`.
                sort_bucket(&mut self.current, self.bits, &mut self.sort_buf);
                // Equal (time, key) must mean the same event (`Event::order`).
                debug_assert!(self.current.windows(2).all(|w| (w[0].time, w[0].key) != (w[1].time, w[1].key) || w[0].id == w[1].id));
                return Some(());
            }
        }
    }

    /// Moves the outer slot whose period starts at bucket `start` into the inner wheel. Nothing
    /// is pending before `start`, so the wheel may turn to just before it; the slot's buckets
    /// (half the wheel) then lie within the inner wheel's span.
    #[cold]
    fn cascade(&mut self, start: u64) {
        debug_assert!(start > self.cur_bucket && self.current.is_empty() && self.late.is_empty());
        self.cur_bucket = start - 1;
        let slot = (start >> self.period_bits) as usize & self.outer_mask;
        let mut moved = std::mem::take(&mut self.cascade);
        moved.clear();
        self.in_outer -= self.outer.drain_into(slot, &mut moved);
        for &ev in &moved {
            let bucket = ev.time.0 >> self.bits;
            debug_assert!(bucket > self.cur_bucket && bucket <= self.cur_bucket + self.mask as u64);
            self.wheel.push((bucket as usize) & self.mask, ev);
        }
        self.in_wheel += moved.len();
        self.cascade = moved;
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
        self.current.len() + self.late.len() + self.in_wheel + self.in_outer + self.far.len()
    }

    /// True when nothing is pending.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// The reusable buffers of [`sort_bucket`], all the queue's.
#[derive(Default)]
struct SortBuffers {
    /// Each event's packed order.
    keys: Vec<u64>,
    /// The radix sort's second array of keys.
    keys_tmp: Vec<u64>,
    /// The events in their new order, which then trade places with the bucket's.
    events: Vec<Event>,
}

/// Sorts one bucket's events latest first by (time, key). All times in a bucket share their
/// high bits, so an event's order packs into one u64 with its index in the bucket: (time's low
/// bits, key, index). Sorting those plain integers and gathering the events by index costs a
/// fraction of sorting the 16-byte events with a compound comparison; equal (time, key) is one
/// event, so every sort gives one order whatever the push order.
fn sort_bucket(events: &mut Vec<Event>, bits: u32, buf: &mut SortBuffers) {
    let index_bits: u32 = 64 - 32 - bits;
    let n = events.len();
    if n < 2 {
        return;
    }
    if n >= 1 << index_bits {
        // A huge bucket (e.g. a million tasks ready at once): the plain comparison sort.
        events.sort_unstable_by_key(|e| std::cmp::Reverse(e.order()));
        return;
    }
    let low: u64 = (1 << bits) - 1;
    let keys = &mut buf.keys;
    keys.clear();
    keys.extend(events.iter().enumerate().map(|(i, e)| ((e.time.0 & low) << 32 | e.key as u64) << index_bits | i as u64));
    if n < RADIX_FROM {
        keys.sort_unstable();
    } else {
        radix_sort_above(keys, &mut buf.keys_tmp, index_bits);
    }
    buf.events.clear();
    buf.events.extend(keys.iter().rev().map(|k| events[(k & ((1 << index_bits) - 1)) as usize]));
    std::mem::swap(events, &mut buf.events);
}

/// Buckets of at least this many events are sorted by [`radix_sort_above`]; below, a
/// comparison sort is cheaper than clearing the digit counts.
const RADIX_FROM: usize = 64;

/// Sorts `keys` ascending, given that their bits below `lo` already ascend in `keys`' order
/// (they are each key's index): a stable sort of the bits from `lo` up, a byte at a time
/// (least significant first), sorts the whole. For buckets of a few hundred events several
/// times cheaper than a comparison sort; a byte that every key shares costs no pass.
fn radix_sort_above(keys: &mut Vec<u64>, tmp: &mut Vec<u64>, lo: u32) {
    const MAX_DIGITS: usize = 6;
    let digits = ((64 - lo) as usize).div_ceil(8);
    debug_assert!(digits <= MAX_DIGITS);
    let mut counts = [[0u32; 256]; MAX_DIGITS];
    for &k in keys.iter() {
        let v = k >> lo;
        for (d, c) in counts.iter_mut().enumerate().take(digits) {
            c[((v >> (8 * d)) & 0xFF) as usize] += 1;
        }
    }
    tmp.clear();
    tmp.resize(keys.len(), 0);
    for (d, c) in counts.iter_mut().enumerate().take(digits) {
        let shift = lo + 8 * d as u32;
        let digit = |k: u64| ((k >> shift) & 0xFF) as usize;
        if c[digit(keys[0])] as usize == keys.len() {
            continue;
        }
        let mut sum = 0;
        for x in c.iter_mut() {
            let here = *x;
            *x = sum;
            sum += here;
        }
        for &k in keys.iter() {
            let slot = &mut c[digit(k)];
            tmp[*slot as usize] = k;
            *slot += 1;
        }
        std::mem::swap(keys, tmp);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pops_by_time_then_kind_then_entity_whatever_the_push_order() {
        let pushes = [
            (5, EventKind::PortFree, 9, 1),
            (3, EventKind::ConnWake, 2, 2),
            (5, EventKind::Arrive, 7, 3),
            (3, EventKind::Arrive, 8, 4),
            (3, EventKind::Arrive, 6, 5),
            (5, EventKind::LinkChange, 0, 6),
        ];
        let mut orders = Vec::new();
        for rotation in 0..pushes.len() {
            let mut q = EventQueue::new();
            for &(t, kind, entity, id) in pushes.iter().cycle().skip(rotation).take(pushes.len()) {
                q.push_for(Time(t), kind, entity, id);
            }
            orders.push(std::iter::from_fn(|| q.pop()).map(|e| (e.id, e.kind())).collect::<Vec<_>>());
        }
        use EventKind::*;
        let expected = vec![(5, Arrive), (4, Arrive), (2, ConnWake), (6, LinkChange), (3, Arrive), (1, PortFree)];
        assert!(orders.iter().all(|o| *o == expected), "{orders:?}");
    }

    #[test]
    fn an_event_is_sixteen_bytes_and_every_kind_round_trips() {
        assert_eq!(std::mem::size_of::<Event>(), 16);
        for (i, k) in EventKind::ALL.iter().enumerate() {
            assert_eq!(*k as usize, i);
            let mut q = EventQueue::new();
            q.push_for(Time(1), *k, (MAX_ENTITIES - 1) as u32, 7);
            let e = q.pop().unwrap();
            assert_eq!((e.kind(), e.id), (*k, 7));
        }
    }

    /// The radix sort orders like a comparison sort, whichever bytes the keys share (a pass is
    /// skipped) or differ in, for every key width a bucket width gives.
    #[test]
    fn the_radix_sort_orders_as_a_comparison_sort() {
        let mut rng = crate::rng::Rng::stream(5, "radix-test", 0);
        let mut tmp = Vec::new();
        for bits in [7u32, 10, 13] {
            let index_bits = 64 - 32 - bits;
            for n in [RADIX_FROM, 180, 1000] {
                // Upper parts drawn from a narrow or a wide range: shared bytes, and all bytes.
                for range in [4u64, 1 << 20, 1 << (32 + bits)] {
                    let mut keys: Vec<u64> = (0..n as u64).map(|i| rng.below(range) << index_bits | i).collect();
                    let mut expected = keys.clone();
                    expected.sort_unstable();
                    radix_sort_above(&mut keys, &mut tmp, index_bits);
                    assert_eq!(keys, expected, "bits {bits}, n {n}, range {range}");
                }
            }
        }
    }

    /// Bursts of hundreds of events into one bucket (the radix sort's case) pop in order.
    #[test]
    fn a_crowded_bucket_pops_in_order() {
        let mut rng = crate::rng::Rng::stream(7, "crowded-test", 0);
        let mut q = EventQueue::with_horizon(Time(1_000_000), 2000.0);
        let mut reference = BinaryHeap::new();
        for burst in 0..50u64 {
            for _ in 0..500 {
                let time = burst * 10_000 + 5_000 + rng.below(200);
                let kind = EventKind::ALL[rng.below(EventKind::ALL.len() as u64) as usize];
                let entity = rng.below(MAX_ENTITIES) as u32;
                let key = (kind as u32) << ENTITY_BITS | entity;
                q.push_for(Time(time), kind, entity, entity);
                reference.push(Event { time: Time(time), key, id: entity });
            }
            while let Some(b) = reference.peek().copied().filter(|e| e.time.0 < (burst + 1) * 10_000) {
                reference.pop();
                let a = q.pop().unwrap();
                assert_eq!((a.time, a.key, a.id), (b.time, b.key, b.id));
            }
        }
    }

    /// The wheel must pop exactly what a plain binary heap would, including far-future events,
    /// events pushed into the bucket being processed, and ties.
    #[test]
    fn matches_a_binary_heap_on_random_workloads() {
        for q in [
            EventQueue::new(),
            EventQueue::with_horizon(Time(100_000), 0.0),
            EventQueue::with_horizon(Time(2_000_000), 500.0),
            EventQueue::with_horizon(Time(100_000), 0.001),
            // A small outer wheel, so that many events go past it to the heap and periods wrap.
            EventQueue::with_wheels(64, 64, 10),
        ] {
            matches_a_binary_heap(q);
        }
    }

    /// Pops must follow the total order. Events equal in (time, key) are one event in the
    /// engine (see `Event::order`; `advance` asserts it), so the test derives the id from them.
    fn matches_a_binary_heap(mut q: EventQueue) {
        let mut rng = crate::rng::Rng::stream(3, "queue-test", 0);
        let mut reference = BinaryHeap::new();
        let mut now = 0u64;
        for _ in 0..200_000u32 {
            if rng.below(3) > 0 || reference.is_empty() {
                let delta = match rng.below(5) {
                    0 => rng.below(5_000),
                    1 => rng.below(2_000_000),
                    2 => rng.below(200_000_000),
                    3 => rng.below(50_000_000_000),
                    _ => 0,
                };
                // Few entities, so that equal times meet equal kinds and entities differ.
                let kind = EventKind::ALL[rng.below(EventKind::ALL.len() as u64) as usize];
                let entity = rng.below(4) as u32;
                let (time, key) = (now + delta, (kind as u32) << ENTITY_BITS | entity);
                let id = ((time ^ (key as u64) << 40).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 32) as u32;
                q.push_for(Time(time), kind, entity, id);
                reference.push(Event { time: Time(time), key, id });
            } else {
                let (a, b) = (q.pop().unwrap(), reference.pop().unwrap());
                assert_eq!((a.time, a.kind(), a.key, a.id), (b.time, b.kind(), b.key, b.id));
                now = a.time.0;
            }
            assert_eq!(q.len(), reference.len());
        }
        while let Some(b) = reference.pop() {
            let a = q.pop().unwrap();
            assert_eq!((a.time, a.key, a.id), (b.time, b.key, b.id));
        }
        assert!(q.pop().is_none());
    }
}
