//! Between the elements: the engine's dispatch. Each element owns its state and its handlers —
//! the switch, the output port and PFC (`net/`), the senders (`transport/sender.rs`), the
//! receivers (`transport/receiver.rs`), the credit schemes (`transport/credit.rs`) — and gets
//! the [`Kernel`] (clock, queue, pool, counters, packet log, partition boundary) as its narrow
//! context. This file lends it and carries out what the handler returns, in order: packets a host
//! made are queued on its NIC port, a NIC port to kick is kicked, a lost credit grant goes to the
//! credit scheme, delivered and completed messages go to the workload (`workload/run.rs`), for
//! which the simulation is the [`Driver`]: it offers messages to the hosts' gates and reports
//! what they delivered and completed.
//!
//! The NIC is here too, because it sits between two elements: its port is the network's, what
//! it sends is the sender's. When its queues are empty (and PFC does not pause it) it takes one
//! packet from the connection at the head of its host's ready ring (state
//! [`crate::net::nic::HostState`]) each time the port is free, and puts the connection back at
//! the tail if it may send again.

use super::Sim;
use crate::ids::{ConnId, NodeId, PktId, PortId};
use crate::kernel::Kernel;
use crate::kernel::packet::{PktKind, F_BOUNCED, F_TRIMMED};
use crate::net::port::Kick;
use crate::kernel::store::Layout;
use crate::net::Network;
use crate::transport::hosts::Hosts;
use crate::transport::receiver::{DataStep, Sends};
use crate::transport::sender::{SenderStep, Then};
use crate::units::{Bytes, Time};
use crate::workload::graph::Traffic;
use crate::workload::run::{Driver, TaskState};
use std::sync::Arc;

//= type=assumption
//# A NIC that sends each packet on the port its entropy selects holds a few packets per port
//# for that port (a small transmit FIFO per port); with one, a free port stalled behind a busy
//# one about half the time (a healthy 2-plane permutation 21 % slower than sprayed to the free
//# port).
/// Packets' worth of data a spraying NIC stages per port (`nic_port_choice = "entropy"`)
/// before it stops taking packets from its connections.
pub const NIC_STAGED_PACKETS: u64 = 4;

impl<L: Layout> Sim<L> {
    /// Runs network handler `f` with the network and the kernel, then delivers what it left for
    /// the hosts.
    #[inline(always)]
    pub(crate) fn with_net<T>(&mut self, f: impl FnOnce(&mut Network<L>, &mut Kernel) -> T) -> T {
        let result = f(&mut self.net, &mut self.k);
        if !self.k.fx.is_empty() {
            self.deliver_host_effects();
        }
        result
    }

    /// Delivers the credit grants the network lost to their connections' credit state: the
    /// sender may have to start afresh (`transport::credit`).
    #[inline(never)]
    fn deliver_host_effects(&mut self) {
        for (conn, credits) in self.k.fx.lost_pulls.drain(..) {
            self.hosts.credits.pull_lost(conn, credits);
        }
    }

    /// Queues a packet that host-side code created on the host's NIC port `port` (in the class
    /// its kind travels in) and starts the port if it is idle.
    #[inline]
    pub(crate) fn host_send(&mut self, port: PortId, pkt: PktId) {
        let kick = self.with_net(|net, k| {
            net.queue_from_host(k, port, pkt);
            net.kick(k, port)
        });
        if kick == Kick::StartNow {
            self.port_start(port);
        }
    }

    /// Makes sure an idle port starts sending, or a busy one will look again when free.
    #[inline]
    pub(crate) fn port_kick(&mut self, port: PortId) {
        if self.with_net(|net, k| net.kick(k, port)) == Kick::StartNow {
            self.port_start(port);
        }
    }

    /// Port `port` finished its packet.
    pub(crate) fn on_port_free(&mut self, port: PortId) {
        self.net.ports[port.idx()].free_pending = false;
        self.port_start(port);
    }

    /// Sends `port`'s next packet: a switch's port on its own, a NIC's port as
    /// [`Sim::start_nic_port`] says.
    #[inline(always)]
    fn port_start(&mut self, port: PortId) {
        if self.net.ports[port.idx()].is_nic {
            self.start_nic_port(port)
        } else {
            self.with_net(|net, k| net.start_switch_port(k, port))
        }
    }

    /// Sends NIC port `port`'s next packet: from its queues, or when they are empty (and PFC
    /// does not pause it) from its host's scheduler.
    #[inline(never)]
    fn start_nic_port(&mut self, port: PortId) {
        self.send_from_nic_port(port, true)
    }

    /// [`Sim::start_nic_port`]; `unstaged_wakes` says whether a staged packet leaving lets the
    /// NIC's ports take packets again (not where the NIC is staging it right now).
    fn send_from_nic_port(&mut self, port: PortId, unstaged_wakes: bool) {
        let (pkt, queued) = match self.with_net(|net, k| net.take_next(k, port)) {
            Some(p) => (p, true),
            None if !self.net.ports[port.idx()].paused => match self.nic_next_packet(port) {
                Some(p) => (p, false),
                None => return,
            },
            None => return,
        };
        let done = self.with_net(|net, k| net.transmit(k, port, pkt));
        let more = self.net.has_backlog(port) || (!self.net.ports[port.idx()].paused && self.nic_has_ready(port));
        if more {
            self.with_net(|net, k| net.free_again_at(k, port, done));
        }
        if unstaged_wakes && queued && self.k.pool.get(pkt).kind == PktKind::Data && self.hosts.sprayed.as_ref().is_some_and(|s| s.by_entropy) {
            // A staged packet left (`nic_port_choice = "entropy"`): the NIC's ports may take
            // packets again (kicked now that this one is busy).
            self.nic_kick(port);
        }
    }

    /// The oldest PFC frame in flight to upstream port `port` reached it; a RESUME restarts
    /// the port.
    pub(crate) fn on_pfc_frame(&mut self, port: PortId) {
        if self.net.on_pfc_frame(self.k.now, port) {
            self.port_kick(port);
        }
    }

    /// A packet `run.drop_packets` holds (`hold_us`), which its first switch gave back: it
    /// arrives at that switch again once held.
    #[inline(never)]
    pub(crate) fn hold(&mut self, pkt: PktId) {
        let p = self.k.pool.get(pkt);
        let (conn, seq) = (p.conn, p.seq);
        let entry = self.hosts.drop_plan.iter().position(|d| d.0 == conn.0 && d.1 == seq && d.4 > Time::ZERO);
        let hold = entry.map_or(Time::ZERO, |i| self.hosts.drop_plan[i].4);
        // Ordered by its plan entry (its port may carry another packet at that instant).
        self.k.q.push_for(self.k.now + hold, super::queue::EventKind::HeldArrive, entry.unwrap_or(0) as u32, pkt.0);
    }

    /// Whether the host owning NIC port `port` has a connection waiting to send.
    #[inline]
    pub(crate) fn nic_has_ready(&self, port: PortId) -> bool {
        self.nic_host(port.0).is_some_and(|h| !h.ready.is_empty())
    }

    /// The next data packet NIC port `port` sends, round-robin over its host's ready
    /// connections (a spraying NIC's: [`Sim::sprayed_next_packet`]).
    pub(crate) fn nic_next_packet(&mut self, port: PortId) -> Option<PktId> {
        let host = self.net.ports[port.idx()].owner;
        if self.hosts.sprayed.as_ref().is_some_and(|s| s.sprays(host)) {
            return self.sprayed_next_packet(port, host);
        }
        while let Some(c) = self.hosts.nics[host.idx()].ready.pop_front() {
            if let Some(pkt) = self.emit_from_ring(host, c) {
                return Some(pkt);
            }
        }
        None
    }

    /// The next packet of connection `c`, just taken from `ring`'s ready ring, if it may send
    /// one; `c` goes back to the ring's tail if it may send again.
    #[inline(always)]
    fn emit_from_ring(&mut self, ring: NodeId, c: ConnId) -> Option<PktId> {
        self.hosts.conns[c.idx()].in_ready = false;
        let pkt = self.hosts.emit(&mut self.k, c)?;
        if let Some(m) = self.tracer.flowlets.as_deref_mut() {
            // `run.flowlet_gaps_us`: the packet starts onto the host link now.
            m.packet(c.0, self.k.now, self.k.pool.get(pkt).size as u64);
        }
        if self.hosts.may_send(&mut self.k, c) {
            self.hosts.conns[c.idx()].in_ready = true;
            self.hosts.nics[ring.idx()].ready.push_back(c);
        }
        Some(pkt)
    }

    /// The next data packet port `port` (host `host`) of a spraying NIC sends: from the ready
    /// ring its NIC's ports share, the first connection this port reaches the peer from (others
    /// stay in the ring, in order), its packet addressed from this port to the peer's port
    /// that it reaches. A port that is down sends none (the NIC sees its own link).
    ///
    /// By entropy (`nic_port_choice = "entropy"`) the packet leaves by the port its entropy
    /// selects: this one, or another, where it waits (staged) if that port is busy; the NIC
    /// takes no packet while any of its ports holds [`NIC_STAGED_PACKETS`] packets' worth.
    #[inline(never)]
    fn sprayed_next_packet(&mut self, port: PortId, host: NodeId) -> Option<PktId> {
        if !self.net.ports[port.idx()].up {
            return None;
        }
        let sprayed = self.hosts.sprayed.as_ref().expect("a spraying NIC");
        let (q, ports, gpus, by_entropy) = (host.0 / sprayed.gpus, sprayed.ports, sprayed.gpus, sprayed.by_entropy);
        let ring = self.hosts.nics[host.idx()].ring;
        let port_of = |sim: &Self, q: u32| sim.hosts.nics[(ring.0 + q * gpus) as usize].port;
        let stage = Bytes(NIC_STAGED_PACKETS * (self.hosts.tp.mss + self.hosts.tp.header) as u64);
        let full = |sim: &Self, p: PortId| sim.net.ports[p.idx()].data_bytes >= stage;
        if by_entropy && (0..ports).any(|q| full(self, port_of(self, q))) {
            return None;
        }
        let mut passed = None;
        while let Some(c) = self.hosts.nics[ring.idx()].ready.pop_front() {
            let sprayed = self.hosts.sprayed.as_ref().expect("a spraying NIC");
            let dst = self.hosts.conns[c.idx()].dst;
            // (By entropy any port may carry it: the packet's entropy picks one that reaches.)
            let peer = if by_entropy { Some(dst) } else { sprayed.peer(c, q, dst) };
            let Some(peer) = peer.filter(|_| passed != Some(c)) else {
                // Not from this port, or every waiting connection looked at: leave it waiting.
                self.hosts.nics[ring.idx()].ready.push_back(c);
                if passed.is_some_and(|p| p == c) {
                    return None;
                }
                passed.get_or_insert(c);
                continue;
            };
            let Some(pkt) = self.emit_from_ring(ring, c) else { continue };
            if !by_entropy {
                let p = self.k.pool.get_mut(pkt);
                (p.src, p.dst) = (host, peer);
                self.hosts.nics[ring.idx()].next_port = ((q + 1) % ports) as u8;
                return Some(pkt);
            }
            let sprayed = self.hosts.sprayed.as_ref().expect("a spraying NIC");
            let out = sprayed.port_of(c, self.k.pool.get(pkt).entropy as u32, q);
            let peer = sprayed.peer(c, out, dst).expect("the entropy's port reaches the peer");
            let p = self.k.pool.get_mut(pkt);
            (p.src, p.dst) = (NodeId(ring.0 + out * gpus), peer);
            if out == q {
                return Some(pkt);
            }
            let other = port_of(self, out);
            let kick = self.with_net(|net, k| {
                net.queue_from_host(k, other, pkt);
                net.kick(k, other)
            });
            if kick == Kick::StartNow {
                // (This port is still looking for its packet: no wake-up of the NIC's ports.)
                self.send_from_nic_port(other, false);
            }
            if full(self, other) {
                // That port's stage is full: the NIC waits for a packet to leave it.
                return None;
            }
        }
        None
    }

    /// Kicks NIC port `port`, and where it is a spraying NIC's, every port of that NIC, the
    /// one after the last that sent first (so that free ports take turns, as htsim's UEC NIC
    /// rotates its ports).
    fn nic_kick(&mut self, port: PortId) {
        let host = self.net.ports[port.idx()].owner;
        let Some((gpus, ports)) = self.hosts.sprayed.as_ref().filter(|s| s.sprays(host)).map(|s| (s.gpus, s.ports)) else {
            return self.port_kick(port);
        };
        let ring = self.hosts.nics[host.idx()].ring;
        let first = self.hosts.nics[ring.idx()].next_port as u32;
        for i in 0..ports {
            let q = (first + i) % ports;
            let p = self.hosts.nics[(ring.0 + q * gpus) as usize].port;
            self.port_kick(p);
        }
    }

    /// A packet reached host `host`.
    pub(crate) fn host_receive(&mut self, host: NodeId, pkt: PktId) {
        let kind = self.k.pool.get(pkt).kind;
        self.k.c.arrived[kind] += 1;
        // The one place a new packet kind must be named, which handler its host side runs (a
        // receiver-to-sender signal's kind needs none: the signals' table routes it).
        match kind {
            PktKind::Data => self.on_data(host, pkt),
            PktKind::Ack => self.on_ack(pkt),
            PktKind::Nack => self.on_nack(pkt),
            PktKind::Pull => self.on_pull(pkt),
            PktKind::SeqNack => self.on_seq_nack(pkt),
            PktKind::Probe => self.on_probe(host, pkt),
            // Addressed to switches only; a host never sees one.
            PktKind::Congestion => unreachable!("switch-made packet at host {host}"),
            // Every other kind is a receiver-to-sender signal (`transport/signal/`).
            _ => self.hosts.on_signal(&mut self.k, pkt),
        }
    }

    /// Data packet `pkt` reached host `host`: a header a switch bounced goes to its sender, the
    /// credit scheme hears of it, then the connection's [`Receiver`](crate::transport::receiver::Receiver)
    /// takes it; completed messages go to the workload before the receiver answers.
    fn on_data(&mut self, host: NodeId, pkt: PktId) {
        let p = *self.k.pool.get(pkt);
        debug_assert_eq!(p.dst, host);
        if p.flags & F_BOUNCED != 0 {
            // A header a switch returned: this host is its sender (spec LR-TRIM-RTS).
            self.k.c.bounces_returned += 1;
            return self.on_bounce(pkt);
        }
        if self.hosts.credits.on {
            let h = &mut self.hosts;
            h.credits.on_data(&mut self.k, p.conn, &h.conns[p.conn.idx()], p.flags & F_TRIMMED != 0);
        }
        let tp = self.hosts.tp;
        let port = self.hosts.nics[host.idx()].port;
        let mut sends = Sends::default();
        let step = self.hosts.rx[p.conn.idx()].on_data(&mut self.k, &tp, pkt, &p, port, &mut sends);
        for s in sends.iter() {
            self.host_send(port, s);
        }
        let DataStep::Answer(accepted) = step else { return };
        if accepted.fresh {
            // Messages complete in order; a mode that completes one message at a time (erasure
            // coding) is asked again for the next. (The messages' packet ranges are the
            // sender's posts, which the receiver knows as work requests.)
            loop {
                let sender = &self.hosts.conns[p.conn.idx()];
                let Some(end) = self.hosts.rx[p.conn.idx()].newly_delivered_end(p.seq, &sender.msgs, sender.msgs_retired) else { break };
                self.with_tasks(|tasks, sim, traffic| tasks.on_delivered(sim, traffic, p.conn.0, end));
            }
        }
        // (Read after delivering: the workload may have posted more on this connection.)
        let n_pkts = self.hosts.conns[p.conn.idx()].n_pkts;
        if let Some(answer) = self.hosts.rx[p.conn.idx()].answer_data(&mut self.k, &tp, pkt, &p, n_pkts, accepted) {
            self.host_send(port, answer);
        }
    }

    /// A probe reached its receiver, which answers at once.
    fn on_probe(&mut self, host: NodeId, pkt: PktId) {
        let (tp, port, conn) = (self.hosts.tp, self.hosts.nics[host.idx()].port, self.k.pool.get(pkt).conn);
        let answer = self.hosts.rx[conn.idx()].on_probe(&mut self.k, &tp, pkt);
        self.host_send(port, answer);
    }

    /// Puts `c` in its host's ready ring if it may send, and makes sure the NIC looks at it.
    pub(crate) fn conn_wake(&mut self, c: ConnId) {
        if let Some(port) = self.hosts.wake(&mut self.k, c) {
            self.nic_kick(port);
        }
    }

    /// `c`'s pacing delay is over.
    pub(crate) fn on_conn_wake(&mut self, c: ConnId) {
        if let Some(port) = self.hosts.on_wake(&mut self.k, c) {
            self.nic_kick(port);
        }
    }

    /// Carries out what a sender handler returned.
    #[inline(always)]
    fn follow(&mut self, step: SenderStep) {
        if let Some(probe) = step.probe {
            let port = self.k.pool.get(probe).port;
            self.host_send(port, probe);
        }
        match step.then {
            Then::Stop => {}
            Then::Wake => self.conn_wake(step.conn),
            Then::Progress => {
                let c = step.conn;
                if self.hosts.oldest_message_done(c) {
                    self.with_tasks(|tasks, sim, traffic| tasks.on_completed(sim, traffic, c.0));
                }
                self.hosts.note_finish(self.k.now, c);
                self.conn_wake(c);
            }
        }
    }

    /// An ACK reached its sender.
    pub(crate) fn on_ack(&mut self, pkt: PktId) {
        let Some((step, seen)) = self.hosts.on_ack(&mut self.k, pkt) else { return };
        let c = step.conn;
        if !self.tracer.ack_conns.is_empty() && self.tracer.ack_conns.binary_search(&c.0).is_ok() {
            self.tracer.acks.push((self.k.now, c.0, seen.rtt, seen.ecn));
        }
        self.follow(step);
    }

    /// Runs sender handler `f` with the hosts and the kernel, then carries out its step.
    #[inline(always)]
    fn with_sender(&mut self, f: impl FnOnce(&mut Hosts<L>, &mut Kernel) -> SenderStep) {
        let step = f(&mut self.hosts, &mut self.k);
        self.follow(step);
    }

    /// A NACK (trimmed packet) reached its sender.
    pub(crate) fn on_nack(&mut self, pkt: PktId) {
        self.with_sender(|h, k| h.on_nack(k, pkt));
    }

    /// A trimmed header a switch returned reached its sender.
    pub(crate) fn on_bounce(&mut self, pkt: PktId) {
        self.with_sender(|h, k| h.on_bounce(k, pkt));
    }

    /// A sequence NACK reached its sender.
    pub(crate) fn on_seq_nack(&mut self, pkt: PktId) {
        self.with_sender(|h, k| h.on_seq_nack(k, pkt));
    }

    /// The retransmission timer of `c`.
    pub(crate) fn on_conn_timer(&mut self, c: ConnId) {
        self.with_sender(|h, k| h.on_timer(k, c));
    }

    /// The loss-recovery mode's own timer of `c`.
    pub(crate) fn on_recovery_timer(&mut self, c: ConnId) {
        self.with_sender(|h, k| h.on_recovery_timer(k, c));
    }

    /// The pacer of `host` may send one PULL.
    pub(crate) fn on_pull_tick(&mut self, host: NodeId) {
        let port = self.hosts.nics[host.idx()].port;
        let rate = self.net.ports[port.idx()].rate;
        let h = &mut self.hosts;
        let Some(pull) = h.credits.on_pull_tick(&mut self.k, host, &h.conns, &h.tp, port, rate) else { return };
        self.host_send(port, pull);
        self.hosts.credits.schedule_tick(&mut self.k, host);
    }

    /// Sender: a PULL arrived.
    pub(crate) fn on_pull(&mut self, pkt: PktId) {
        let h = &mut self.hosts;
        let c = h.credits.on_pull(&mut self.k, pkt, &h.conns);
        self.conn_wake(c);
    }
}

impl<L: Layout> Sim<L> {
    /// Runs workload handler `f` with the task state and the graph, this simulation as its
    /// [`Driver`]. (The task state is taken out for the call: the driver is the rest of the
    /// simulation, which never calls back into the workload while a handler runs.)
    #[inline]
    pub(crate) fn with_tasks(&mut self, f: impl FnOnce(&mut TaskState, &mut Sim<L>, &Traffic)) {
        let mut tasks = std::mem::take(&mut self.tasks);
        let traffic = Arc::clone(&self.traffic);
        f(&mut tasks, self, &traffic);
        self.tasks = tasks;
    }

    /// A `TaskReady` event: the task's dependencies fired and its time has come.
    pub(crate) fn on_task_ready(&mut self, t: u32) {
        self.with_tasks(|tasks, sim, traffic| tasks.on_task_ready(sim, traffic, t));
    }
}

/// What the workload asks of the simulation: the hosts post, deliver and complete its
/// messages; a partition applies only its own edges and tells the receiver's partition of a
/// post.
impl<L: Layout> Driver for Sim<L> {
    #[inline]
    fn now(&self) -> Time {
        self.k.now
    }

    fn schedule_task(&mut self, at: Time, t: u32) {
        self.k.q.push(at, super::queue::EventKind::TaskReady, t);
    }

    #[inline]
    fn applies_here(&mut self, from: u32, to: u32, at: Time) -> bool {
        self.part_mut().is_none_or(|part| part.applies_here(from, to, at))
    }

    /// The livelock guard's clock, and in a partitioned run the coordinator's (whether the
    /// network is idle is a global question).
    #[inline]
    fn outstanding_changed(&mut self, delta: i32) {
        self.busy.change(self.k.now, delta);
        if let Some(part) = self.part_mut() {
            part.log_outstanding(delta);
        }
    }

    fn offer(&mut self, conn: u32, msg: Option<u32>, posted: &mut Vec<u32>) {
        let (now, first) = (self.k.now, posted.len());
        let traffic = &self.traffic;
        self.hosts.offer(now, ConnId(conn), msg, |m| traffic.message(m).bytes.0, posted);
        if posted.len() == first {
            return;
        }
        let dst = self.hosts.conns[conn as usize].dst;
        if self.part().is_some_and(|p| p.remote(dst)) {
            // The receiver's half of the connection, in another partition, learns the
            // messages' boundaries from this.
            let traffic = Arc::clone(&self.traffic);
            let part = self.part_mut().expect("a partition");
            for &m in &posted[first..] {
                part.send(dst, super::parallel::Message::Post { conn, msg: m, bytes: traffic.message(m).bytes.0, at: now });
            }
        }
        self.conn_wake(ConnId(conn));
    }

    #[inline]
    fn next_delivered(&mut self, conn: u32, end: u32) -> Option<u32> {
        self.hosts.next_delivered(self.k.now, ConnId(conn), end)
    }

    fn next_completed(&mut self, conn: u32) -> Option<u32> {
        let traffic = &self.traffic;
        let (msg, update) = self.hosts.next_completed(self.k.now, ConnId(conn), |m| traffic.message(m).bytes.0)?;
        if let Some(u) = update.filter(|_| self.tracer.log_gates) {
            self.tracer.gate_updates.push((self.k.now, conn, u));
        }
        Some(msg)
    }
}
