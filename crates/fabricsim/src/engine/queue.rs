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
    /// Connection `id` starts (its flow's start time).
    FlowStart,
    /// Connection `id`'s pacing delay is over: it may send again.
    ConnWake,
    /// Connection `id`'s retransmission timer should be checked.
    ConnTimer,
    /// The `id`-th scheduled link change (down, up, rate) takes effect.
    LinkChange,
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

/// Deterministic event queue.
#[derive(Default)]
pub struct EventQueue {
    heap: BinaryHeap<Event>,
    next_seq: u64,
}

impl EventQueue {
    /// An empty queue.
    pub fn new() -> Self {
        Self::default()
    }

    /// Schedules `kind` for `id` at `time`.
    #[inline]
    pub fn push(&mut self, time: Time, kind: EventKind, id: u32) {
        let seq = self.next_seq;
        self.next_seq += 1;
        self.heap.push(Event { time, seq, id, kind });
    }

    /// Removes and returns the earliest event.
    #[inline]
    pub fn pop(&mut self) -> Option<Event> {
        self.heap.pop()
    }

    /// Number of pending events.
    pub fn len(&self) -> usize {
        self.heap.len()
    }

    /// True when nothing is pending.
    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
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
}
