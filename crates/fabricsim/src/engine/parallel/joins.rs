//! Joins of the traffic graph whose inputs fire in several partitions ([`Place::Coordinator`],
//! e.g. a collective's end marker): the coordinator counts their inputs, which the partitions
//! report with the point of the event that fired each, and fires them as the serial run would.
//!
//! A join fires in the event of its last input, at once, unless an input's delay or its start
//! time puts it later. At once: its edges act from that point, on the partitions through
//! messages (the plan checked they take at least the lookahead, so they arrive in time) and on
//! other coordinator joins directly. Later: every partition runs it as a `TaskReady` event at
//! that time, the event the serial run has, and applies its edges to its own tasks.

use super::plan::Place;
use super::{point_time, Message, Point};
use crate::workload::run::TaskState;
use crate::units::Time;
use crate::workload::graph::Traffic;

/// The coordinator's state of the coordinator joins.
pub(super) struct Joins {
    /// The coordinator joins' task ids, ascending: a join's state is at its index here (they
    /// are a few per collective instance, the graph tens of millions of tasks).
    ids: Vec<u32>,
    deps_left: Vec<u32>,
    ready_at: Vec<Time>,
    /// Joins fired at once: (task, time).
    fired: Vec<(u32, Time)>,
    /// Inputs reported and not yet folded in: (point, partition, order in its report, join,
    /// satisfied at).
    pending: Vec<(Point, u16, u32, u32, Time)>,
    /// Scratch: inputs left to satisfy in one event ([`Joins::satisfy`]).
    work: Vec<(u32, Time)>,
}

impl Joins {
    pub(super) fn new(traffic: &Traffic, places: &[Place]) -> Self {
        let ids: Vec<u32> = (0..places.len() as u32).filter(|&t| places[t as usize] == Place::Coordinator).collect();
        let deps_left = ids.iter().map(|&t| traffic.tasks[t as usize].deps()).collect();
        Joins { ready_at: vec![Time::ZERO; ids.len()], ids, deps_left, fired: Vec::new(), pending: Vec::new(), work: Vec::new() }
    }

    /// Where coordinator join `t`'s state is.
    fn slot(&self, t: u32) -> usize {
        self.ids.binary_search(&t).expect("only coordinator joins are reported to the coordinator")
    }

    /// Inputs partition `part` reported, in the order it fired them.
    pub(super) fn report(&mut self, part: u16, inputs: &[(Point, u32, Time)]) {
        for (seq, &(p, join, at)) in inputs.iter().enumerate() {
            self.pending.push((p, part, seq as u32, join, at));
        }
    }

    /// Folds in the reported inputs (all before the window's end, `bound`; `None` when the run
    /// stopped at the last of them: nothing after it runs), in the serial order;
    /// `send(Some(k), m)` sends a message to partition `k`, `send(None, m)` to all.
    pub(super) fn settle(&mut self, traffic: &Traffic, places: &[Place], bound: Option<Time>, send: &mut dyn FnMut(Option<u16>, Message)) {
        let mut pending = std::mem::take(&mut self.pending);
        pending.sort_unstable();
        for &(p, _, _, join, at) in &pending {
            self.satisfy(traffic, places, bound, p, join, at, send);
        }
        pending.clear();
        self.pending = pending;
    }

    /// Join `join`'s input is satisfied at `at`, in the event at point `p`; a join that fires
    /// at once satisfies the coordinator joins after it in the same event, in the order a
    /// recursive walk would (depth first, edges in order), from a work stack: a chain of such
    /// joins is as long as the graph makes it.
    #[allow(clippy::too_many_arguments)]
    fn satisfy(&mut self, traffic: &Traffic, places: &[Place], bound: Option<Time>, p: Point, join: u32, at: Time, send: &mut dyn FnMut(Option<u16>, Message)) {
        let mut work = std::mem::take(&mut self.work);
        work.push((join, at));
        while let Some((join, at)) = work.pop() {
            let j = self.slot(join);
            self.ready_at[j] = self.ready_at[j].max(at);
            self.deps_left[j] -= 1;
            if self.deps_left[j] > 0 {
                continue;
            }
            let now = point_time(p);
            let when = self.ready_at[j].max(traffic.tasks[join as usize].not_before());
            if when > now {
                if let Some(bound) = bound {
                    assert!(when >= bound, "join {join} would fire at {when} ps, inside a window that ended at {bound} ps (the plan's lookahead check failed)");
                    send(None, Message::Fire { task: join, at: when });
                }
                continue;
            }
            self.fired.push((join, now));
            let stacked = work.len();
            for e in traffic.edges_of(join) {
                let at = now + e.delay;
                match places[e.to as usize] {
                    Place::Part(k) if bound.is_some() => send(Some(k), Message::Satisfy { task: e.to, at }),
                    Place::Part(_) => {}
                    Place::Coordinator => work.push((e.to, at)),
                    Place::Everywhere => unreachable!("a join that waits for a coordinator join that may fire at once runs at the coordinator"),
                }
            }
            // The first edge's join on top.
            work[stacked..].reverse();
        }
        self.work = work;
    }

    /// Writes the coordinator joins' state into the merged run's task state.
    pub(super) fn apply_to(&self, tasks: &mut TaskState, traffic: &Traffic) {
        for (j, &t) in self.ids.iter().enumerate() {
            // A join fired later, as every partition's `TaskReady` event, comes from them.
            tasks.set_wait(t as usize, self.deps_left[j], self.ready_at[j]);
        }
        for &(t, now) in &self.fired {
            tasks.record_fire(traffic.tasks[t as usize].kind(), t, now);
        }
    }
}
