//! What one partition sends another in a window, carried as one block from sender to
//! receiver: the coordinator hands whole mailboxes over at the barrier and never touches a
//! message, so the exchange costs the coordinator O(partitions²) per window, not O(messages).
//! With every message routed through the coordinator, its serial share of a 16-thread run at
//! 8192 hosts was as large as a partition's whole work (about 15 M messages in 64 windows).
//!
//! Packets, nearly all the traffic, sit in their own array so that each stays one cache line
//! ([`Packet`] is 64 bytes, aligned to 64); their arrival times lie beside them.

use super::Message;
use crate::net::packet::Packet;
use crate::net::telemetry::IntStack;
use crate::units::Time;

/// Packets a mailbox keeps room for however few it carried.
const KEEP_PACKETS: usize = 1024;

/// Messages from one partition (or the coordinator) to another, in the order sent.
#[derive(Debug, Default)]
pub(crate) struct Mailbox {
    /// Packets that crossed a cable into the receiver's partition. Each names the port it
    /// crossed (`Packet::port`).
    packets: Vec<Packet>,
    /// `arrive_at[i]`: when `packets[i]` reaches the far end of its cable.
    arrive_at: Vec<Time>,
    /// `telemetry[i]`: the INT records `packets[i]` carries, when the run's packets carry
    /// them (`kernel/telemetry.rs`; then every packet has one, else this stays empty).
    telemetry: Vec<IntStack>,
    /// Everything else: PFC frames, posted messages, task dependencies.
    other: Vec<Message>,
}

impl Mailbox {
    /// Adds a packet that arrives at `at`, with its INT records if packets carry them.
    #[inline]
    pub(crate) fn push_packet(&mut self, at: Time, pkt: &Packet, int: Option<&IntStack>) {
        self.packets.push(*pkt);
        self.arrive_at.push(at);
        if let Some(int) = int {
            self.telemetry.push(*int);
        }
    }

    /// Adds any other message.
    pub(crate) fn push(&mut self, msg: Message) {
        self.other.push(msg);
    }

    /// Whether it holds buffers (a new mailbox has none; a cleared one keeps its own).
    #[inline(always)]
    pub(crate) fn has_buffers(&self) -> bool {
        self.packets.capacity() > 0 || self.other.capacity() > 0
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.packets.is_empty() && self.other.is_empty()
    }

    /// The packets with their arrival times, then the other messages, each in the order
    /// sent. Delivery order between the two does not matter: a packet's arrival is an event
    /// at least a lookahead later, and the others act on disjoint state (a frame on its
    /// ingress record, a post on the connection's message list, a dependency on its task).
    pub(crate) fn contents(&self) -> (impl Iterator<Item = (Time, &Packet, Option<&IntStack>)>, &[Message]) {
        let int = |i: usize| self.telemetry.get(i);
        (self.arrive_at.iter().copied().zip(self.packets.iter()).enumerate().map(move |(i, (at, p))| (at, p, int(i))), &self.other)
    }

    /// Empties it, keeping its buffers for the next window: room for twice the packets it
    /// carried (at least [`KEEP_PACKETS`]), trimmed down when it holds more than twice that.
    /// A mailbox circulates between pairs of partitions, and one window's burst on one pair
    /// would otherwise stay in every mailbox it ever reached: on `bench/perm_k52.toml` with 16
    /// partitions they grew to 4.6 MB each, some 650 MB in all, where most windows carry a
    /// tenth of that. Loads that hold steady never reallocate.
    pub(crate) fn clear(&mut self) {
        let keep = (2 * self.packets.len()).max(KEEP_PACKETS);
        self.packets.clear();
        self.arrive_at.clear();
        self.telemetry.clear();
        self.other.clear();
        if self.packets.capacity() > 2 * keep {
            self.packets.shrink_to(keep);
            self.arrive_at.shrink_to(keep);
            self.telemetry.shrink_to(keep);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ids::PortId;

    #[test]
    fn keeps_each_kind_in_the_order_sent_and_empties_without_dropping_its_buffers() {
        let mut m = Mailbox::default();
        assert!(m.is_empty());
        let pkt = |seq| Packet { seq, ..Packet::default() };
        m.push_packet(Time(30), &pkt(1), None);
        m.push(Message::Frame { at: Time(10), port: PortId(4), pause: true });
        m.push_packet(Time(20), &pkt(2), None);
        m.push(Message::Frame { at: Time(11), port: PortId(4), pause: false });
        assert!(!m.is_empty());
        let (packets, other) = m.contents();
        let packets: Vec<(Time, u32, bool)> = packets.map(|(at, p, int)| (at, p.seq, int.is_some())).collect();
        assert_eq!(packets, vec![(Time(30), 1, false), (Time(20), 2, false)]);
        assert!(matches!(other, [Message::Frame { pause: true, .. }, Message::Frame { pause: false, .. }]));
        let cap = m.packets.capacity();
        m.clear();
        assert!(m.is_empty());
        assert_eq!(m.packets.capacity(), cap);
    }

    #[test]
    fn a_mailbox_gives_back_a_burst_s_room_once_it_carries_less() {
        let mut m = Mailbox::default();
        for seq in 0..20_000 {
            m.push_packet(Time(1), &Packet { seq, ..Packet::default() }, None);
        }
        m.clear();
        assert!(m.packets.capacity() >= 20_000, "a full window keeps its room");
        m.push_packet(Time(1), &Packet::default(), None);
        m.clear();
        assert!(m.packets.capacity() >= KEEP_PACKETS && m.packets.capacity() <= 2 * KEEP_PACKETS, "{}", m.packets.capacity());
        assert!(m.arrive_at.capacity() <= 2 * KEEP_PACKETS);
    }

    #[test]
    fn int_records_travel_with_their_packets() {
        let mut m = Mailbox::default();
        let int = |ts| {
            let mut s = IntStack::default();
            s.push(crate::net::telemetry::IntHop { ts, ..Default::default() });
            s
        };
        m.push_packet(Time(30), &Packet { seq: 1, ..Packet::default() }, Some(&int(Time(7))));
        m.push_packet(Time(20), &Packet { seq: 2, ..Packet::default() }, Some(&int(Time(9))));
        let got: Vec<(u32, Time)> = m.contents().0.map(|(_, p, i)| (p.seq, i.unwrap().hop[0].ts)).collect();
        assert_eq!(got, vec![(1, Time(7)), (2, Time(9))]);
        m.clear();
        assert!(m.telemetry.is_empty());
    }
}
