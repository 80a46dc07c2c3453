//! Packets as plain data, kept in a pool and passed around as `u32` handles.
//!
//! A packet is created when a NIC starts serializing it and freed when its last consumer is done
//! with it; the pool recycles slots, so steady-state simulation does not allocate.

use crate::ids::{ConnId, Entropy, NodeId, PktId, PortId};
use crate::units::Time;

/// What a packet is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
#[repr(u8)]
pub enum PktKind {
    /// Payload of a flow (possibly trimmed to its header).
    #[default]
    Data,
    /// Receiver acknowledgement (cumulative + selective).
    Ack,
    /// Receiver's negative acknowledgement of a trimmed packet.
    Nack,
    /// Receiver's credit for one more packet (EQDS PULL, `transport/credit.rs`).
    Pull,
    /// RoCEv2 congestion notification packet: the receiver saw CE-marked data (DCQCN's
    /// notification point; at most one per connection per `cnp_interval`).
    Cnp,
    /// Sequence NACK (RoCE NAK): "the next packet I expect is `seq`". Go-back-N senders resend
    /// from it; selective-repeat senders resend that one packet (`transport/recovery/`).
    SeqNack,
    /// Header-only loss probe in the data class: the receiver answers with an immediate ACK
    /// (STrack §3.3.2).
    Probe,
}

/// Flag: the sender marks the packet ECN-capable.
pub const F_ECT: u8 = 1;
/// Flag: a switch marked Congestion Experienced.
pub const F_CE: u8 = 2;
/// Flag: the payload was trimmed away by a switch; only the header travels on.
pub const F_TRIMMED: u8 = 4;
/// Flag: this data packet is a retransmission.
pub const F_RETX: u8 = 8;
/// Flag (ACK): echoes a CE mark of the acknowledged data packet.
pub const F_ECE: u8 = 16;
/// Flag (data): the sender asks for an immediate ACK (its window is full or this is the last
/// packet), so ACK coalescing never stalls a window-limited sender.
pub const F_ACK_NOW: u8 = 32;
/// Flag (ACK): answers a probe.
pub const F_PROBE_ACK: u8 = 64;
/// Flag (data): chosen by `run.drop_packets`; the first switch discards it.
pub const F_DOOMED: u8 = 128;

/// One packet. Field meaning depends on `kind`; see each field.
#[derive(Clone, Copy, Debug, Default)]
pub struct Packet {
    /// The connection this packet belongs to.
    pub conn: ConnId,
    /// Source node (a host).
    pub src: NodeId,
    /// Destination node (a host).
    pub dst: NodeId,
    /// Data: packet sequence number. ACK/NACK: the data packet that triggered it.
    pub seq: u32,
    /// Bytes on the wire now (header only once trimmed).
    pub size: u32,
    /// Path entropy hashed by ECMP switches.
    pub entropy: Entropy,
    /// Data, ACK or NACK.
    pub kind: PktKind,
    /// `F_*` bit flags.
    pub flags: u8,
    /// Data: when the sender started transmitting it. ACK/NACK: echo of the data packet's value.
    pub sent_at: Time,
    /// The port the packet is crossing or last crossed.
    pub port: PortId,
    /// ACK: every data packet below this sequence number has arrived.
    pub cum_ack: u32,
    /// ACK: bit i set means data packet `sack_base + i` has arrived.
    pub sack_bits: u64,
    /// ACK: sequence number of bit 0 of `sack_bits`.
    pub sack_base: u32,
    /// ACK: data packets the receiver holds above `cum_ack` (saturating; STrack's OOO count).
    pub ooo_count: u16,
    /// ACK: data packets newly covered by this ACK that carried a CE mark.
    pub ecn_count: u16,
    /// Output port + 1 that the next switch will choose, if the event loop's look-ahead already
    /// computed it (0 = not computed). Reset whenever the packet starts crossing a link.
    pub route_hint: u32,
}

/// Free-list pool of packets.
#[derive(Default)]
pub struct PacketPool {
    slots: Vec<Packet>,
    free: Vec<PktId>,
    live: usize,
}

impl PacketPool {
    /// Stores `p` and returns its handle.
    #[inline]
    pub fn alloc(&mut self, p: Packet) -> PktId {
        self.live += 1;
        if let Some(id) = self.free.pop() {
            self.slots[id as usize] = p;
            id
        } else {
            self.slots.push(p);
            (self.slots.len() - 1) as PktId
        }
    }

    /// Returns the slot of `id` to the pool.
    #[inline]
    pub fn free(&mut self, id: PktId) {
        debug_assert!(self.live > 0);
        self.live -= 1;
        self.free.push(id);
    }

    /// The packet behind a handle.
    #[inline]
    pub fn get(&self, id: PktId) -> &Packet {
        &self.slots[id as usize]
    }

    /// The packet behind a handle, mutably.
    #[inline]
    pub fn get_mut(&mut self, id: PktId) -> &mut Packet {
        &mut self.slots[id as usize]
    }

    /// Hints the CPU to load packet `id` into cache ahead of use.
    #[inline]
    pub fn prefetch(&self, id: PktId) {
        if let Some(p) = self.slots.get(id as usize) {
            crate::hint::prefetch(p);
        }
    }

    /// Packets currently allocated (in flight or queued).
    pub fn live(&self) -> usize {
        self.live
    }

    /// Most packets ever alive at once.
    pub fn high_water(&self) -> usize {
        self.slots.len()
    }
}
