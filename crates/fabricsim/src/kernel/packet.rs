//! Packets as plain data, kept in a pool and passed around as `u32` handles.
//!
//! A packet is created when a NIC starts serializing it and freed when its last consumer is done
//! with it; the pool recycles slots, so steady-state simulation does not allocate.

use crate::ids::{ConnId, Entropy, NodeId, PktId, PortId};
use super::telemetry::IntStack;
use crate::units::Time;

/// Which class of an output port a packet waits in: control packets (ACKs, notifications,
/// trimmed headers) go first; data waits behind them, is subject to the queue discipline and
/// to PFC pauses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Class {
    /// The high-priority class.
    Control,
    /// The data class.
    Data,
}

/// Declares the packet kinds from one row each: `Variant = "name", Class;`, or `Variant =
/// "name", Class, answer;` for a kind a receiver sends its sender. From it come [`PktKind`],
/// its name, class and role, and the per-kind counters ([`PerKind`]) that the engine keeps
/// (sent by a host, arrived at a host, dropped anywhere), that `summary.json` reports under
/// `packets.by_kind` and whose conservation the end-of-run checks verify. A new
/// receiver-to-sender signal (a congestion notification) is one answer row here and its file
/// and row in `transport/signal/`; another new kind also needs the handler its host side runs
/// (the compiler points at the one `match` that must name it); a switch's feedback packet is
/// its switch scheme's.
macro_rules! packet_kinds {
    (@answer answer) => { true };
    (@answer) => { false };
    ($( $(#[$attr:meta])* $Variant:ident = $name:literal, $class:ident $(, $role:ident)?; )+) => {
        /// What a packet is (one row per kind in the table below).
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
        #[repr(u8)]
        pub enum PktKind {
            $( $(#[$attr])* $Variant, )+
        }

        impl PktKind {
            /// Every kind, in declaration order (the order of reports).
            pub const ALL: &'static [PktKind] = &[$(PktKind::$Variant),+];
            /// Number of kinds.
            pub const COUNT: usize = Self::ALL.len();

            /// The kind's name in reports (`summary.json`'s `packets.by_kind`).
            pub const fn name(self) -> &'static str {
                match self { $(PktKind::$Variant => $name),+ }
            }

            /// The port class the kind travels in (a trimmed data packet moves to control).
            pub const fn class(self) -> Class {
                match self { $(PktKind::$Variant => Class::$class),+ }
            }

            /// Whether a receiver sends it to its sender (an ACK, a NACK, a signal).
            pub const fn is_answer(self) -> bool {
                match self { $(PktKind::$Variant => packet_kinds!(@answer $($role)?)),+ }
            }
        }
    };
}

packet_kinds! {
    /// Payload of a flow (possibly trimmed to its header).
    #[default]
    Data = "data", Data;
    /// Receiver acknowledgement (cumulative + selective).
    Ack = "ack", Control, answer;
    /// Receiver's negative acknowledgement of a trimmed packet.
    Nack = "nack", Control, answer;
    /// Receiver's credit for one more packet (EQDS PULL, `transport/credit.rs`).
    Pull = "pull", Control;
    /// RoCEv2 congestion notification packet: the receiver saw CE-marked data (DCQCN's
    /// notification point; at most one per connection per `cnp_interval`).
    Cnp = "cnp", Control, answer;
    /// Sequence NACK (RoCE NAK): "the next packet I expect is `seq`". Go-back-N senders resend
    /// from it; selective-repeat senders resend that one packet (`transport/recovery/`).
    SeqNack = "seq_nack", Control, answer;
    /// Header-only loss probe in the data class: the receiver answers with an immediate ACK
    /// (STrack §3.3.2).
    Probe = "probe", Data;
    /// A switch's congestion feedback to another switch (SeqBalance's Congestion Packet,
    /// seqbalance §2.4.5: a destination ToR mirrors a CE-marked data packet's header back to
    /// the source ToR). Made and consumed by switches, never by hosts; reported only when a
    /// run has some.
    Congestion = "congestion", Control;
}

/// The port class of every packet kind in one run: the kind table's, but for the receiver's
/// answers when `transport.ack_class = "data"` ([`ClassTable::new`]).
#[derive(Clone, Copy, Debug)]
pub struct ClassTable([Class; PktKind::COUNT]);

impl ClassTable {
    /// The kind table's classes; with `answers_with_data`, what a receiver sends its sender
    /// (ACKs, NACKs, sequence NACKs, signals such as CNPs) travels in the data class, FIFO with
    /// data and paused with it (the HPCC ns-3 simulator's `ACK_HIGH_PRIO 0`).
    pub fn new(answers_with_data: bool) -> Self {
        let mut t = [Class::Data; PktKind::COUNT];
        for &k in PktKind::ALL {
            t[k as usize] = k.class();
        }
        if answers_with_data {
            for &k in PktKind::ALL.iter().filter(|k| k.is_answer()) {
                t[k as usize] = Class::Data;
            }
        }
        ClassTable(t)
    }

    /// The class `kind` travels in.
    #[inline(always)]
    pub fn of(&self, kind: PktKind) -> Class {
        self.0[kind as usize]
    }
}

impl Default for ClassTable {
    fn default() -> Self {
        ClassTable::new(false)
    }
}

impl PktKind {
    /// Whether only switches make and consume this kind: reports list it only when nonzero,
    /// so runs without such a scheme keep their outputs.
    pub const fn switch_made(self) -> bool {
        matches!(self, PktKind::Congestion)
    }
}

/// One counter per packet kind, indexed by [`PktKind`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PerKind(pub [u64; PktKind::COUNT]);

impl PerKind {
    /// Sum over the kinds that `keep` accepts.
    pub fn sum_where(&self, keep: impl Fn(PktKind) -> bool) -> u64 {
        PktKind::ALL.iter().filter(|k| keep(**k)).map(|k| self[*k]).sum()
    }
}

impl std::ops::Index<PktKind> for PerKind {
    type Output = u64;
    #[inline]
    fn index(&self, k: PktKind) -> &u64 {
        &self.0[k as usize]
    }
}

impl std::ops::IndexMut<PktKind> for PerKind {
    #[inline]
    fn index_mut(&mut self, k: PktKind) -> &mut u64 {
        &mut self.0[k as usize]
    }
}

/// Flag: the sender marks the packet ECN-capable.
pub const F_ECT: u16 = 1;
/// Flag: a switch marked Congestion Experienced.
pub const F_CE: u16 = 2;
/// Flag: the payload was trimmed away by a switch; only the header travels on.
pub const F_TRIMMED: u16 = 4;
/// Flag: this data packet is a retransmission.
pub const F_RETX: u16 = 8;
/// Flag (ACK): echoes a CE mark of the acknowledged data packet.
pub const F_ECE: u16 = 16;
/// Flag (data): the sender asks for an immediate ACK (its window is full or this is the last
/// packet), so ACK coalescing never stalls a window-limited sender.
pub const F_ACK_NOW: u16 = 32;
/// Flag (ACK): answers a probe.
pub const F_PROBE_ACK: u16 = 64;
/// Flag (data): chosen by `run.drop_packets`; the first switch discards it.
pub const F_DOOMED: u16 = 128;
/// Flag (trimmed data): a switch returned this header to its sender (return-to-sender,
/// lb-ai-training spec LR-TRIM-RTS and §3 `bounced` flag): source and destination are swapped,
/// so it travels back to the sending host, which treats it as a NACK. Never bounced twice.
pub const F_BOUNCED: u16 = 256;
/// Flag (data): chosen by `run.drop_packets` with `hold_us`; the first switch holds it that
/// long before forwarding it (an out-of-order arrival on purpose).
pub const F_HELD: u16 = 512;
/// Flag (data): the first transmission of a message's first packet (RoCE's WRITE_FIRST /
/// WRITE_ONLY opcode), which SeqBalance's message-pinned mode re-pins on.
pub const F_MSG_FIRST: u16 = 1024;
/// Flag (trimmed data, and the NACK of it): trimmed at the last hop, the port towards the
/// receiving host (htsim's `last_hop` of a NACK; uec-spec §2.4).
pub const F_LAST_HOP: u16 = 2048;

/// One packet. Field meaning depends on `kind`; see each field.
///
/// 64 bytes, aligned to 64 so that each packet of the pool's array is exactly one cache line
/// (at the allocator's 16-byte alignment most packets straddled two).
#[derive(Clone, Copy, Debug, Default)]
#[repr(align(64))]
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
    /// `F_*` bit flags (u16 since return-to-sender's `F_BOUNCED`: the packet stays 64 bytes).
    pub flags: u16,
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
    /// ACK: data packets newly covered by this ACK that carried a CE mark. Data: CONGA's
    /// feedback word between leaves (see [`CongaWord`]), 0 at hosts.
    pub ecn_count: u16,
    /// Source-routing tag (any kind): a uniform 16-bit path number that a source ToR's
    /// switch-side selector writes (`letflow`) and the aggregation tier reads to pick its next
    /// hop, so only the ToR keeps per-flow state. 0 when no ToR wrote one. Under `conga` it
    /// holds a [`CongaWord`] between leaves instead (data: LBTag and CE; other kinds:
    /// feedback), 0 at hosts.
    pub path_tag: u16,
    /// Two uses that never overlap, as a packet either waits at a port or crosses a link (one
    /// field, so the packet stays 64 bytes):
    /// - while queued at a port: the packet queued after it ([`PacketQueue`](super::packet_queue::PacketQueue));
    /// - while crossing a link: the output port + 1 that the next switch will choose, if the
    ///   event loop's look-ahead already computed it (0 = not computed). Cleared when the
    ///   packet leaves a queue and whenever it starts crossing a link.
    pub link: u32,
}

/// One of CONGA's overlay fields (seqbalance §3.4: LBTag + CE, or FB_LBTag + FB_Metric) packed
/// into a 16-bit header field that the carrying kind does not otherwise use, so the overlay
/// costs neither bytes on the wire nor bytes in [`Packet`]: bit 15 says the word is set, bits
/// 8..15 hold the metric (at most 7 bits), bits 0..8 the uplink index (at most 256 uplinks).
///
/// Where each word rides (only between a source and a destination leaf running `conga`; the
/// destination leaf clears them, so hosts never see them):
/// - data: LBTag + CE in `path_tag`, feedback in `ecn_count` (an ACK-only field);
/// - every other host-made kind (ACK, NACK, CNP, ...): feedback in `path_tag`; these carry no
///   LBTag + CE of their own (their `ecn_count` is in use).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CongaWord {
    /// The uplink index at the source leaf (LBTag, FB_LBTag).
    pub uplink: u8,
    /// The congestion metric (CE, FB_Metric), below 128.
    pub metric: u8,
}

impl CongaWord {
    /// Bit 15: the word is set.
    const SET: u16 = 0x8000;

    /// The packed form.
    #[inline]
    pub fn pack(self) -> u16 {
        debug_assert!(self.metric < 0x80, "metric {} wider than 7 bits", self.metric);
        Self::SET | ((self.metric as u16 & 0x7f) << 8) | self.uplink as u16
    }

    /// The word packed in `w`, if set.
    #[inline]
    pub fn unpack(w: u16) -> Option<CongaWord> {
        (w & Self::SET != 0).then_some(CongaWord { uplink: w as u8, metric: ((w >> 8) & 0x7f) as u8 })
    }
}

impl Packet {
    /// CONGA's forward word (LBTag + CE) of a data packet, if a source leaf wrote one.
    #[inline]
    pub fn conga_forward(&self) -> Option<CongaWord> {
        if self.kind == PktKind::Data {
            CongaWord::unpack(self.path_tag)
        } else {
            None
        }
    }

    /// Writes CONGA's forward word; only data packets carry one (other kinds are unchanged).
    #[inline]
    pub fn set_conga_forward(&mut self, w: CongaWord) {
        if self.kind == PktKind::Data {
            self.path_tag = w.pack();
        }
    }

    /// The field that carries CONGA's feedback word for this packet's kind.
    #[inline]
    fn conga_feedback_field(&mut self) -> &mut u16 {
        if self.kind == PktKind::Data {
            &mut self.ecn_count
        } else {
            &mut self.path_tag
        }
    }

    /// CONGA's feedback word (FB_LBTag + FB_Metric), if a source leaf wrote one.
    #[inline]
    pub fn conga_feedback(&self) -> Option<CongaWord> {
        CongaWord::unpack(if self.kind == PktKind::Data { self.ecn_count } else { self.path_tag })
    }

    /// Writes CONGA's feedback word.
    #[inline]
    pub fn set_conga_feedback(&mut self, w: CongaWord) {
        *self.conga_feedback_field() = w.pack();
    }

    /// Strips every CONGA word (the destination leaf does, before the packet reaches a host).
    #[inline]
    pub fn clear_conga(&mut self) {
        if self.kind == PktKind::Data {
            self.ecn_count = 0;
        }
        self.path_tag = 0;
    }
}

/// Free-list pool of packets.
#[derive(Default)]
pub struct PacketPool {
    slots: Vec<Packet>,
    free: Vec<PktId>,
    live: usize,
    /// The INT lane (`kernel/telemetry.rs`): one record stack per slot, kept only when some
    /// congestion control reads in-band telemetry ([`PacketPool::enable_telemetry`]).
    telemetry: Option<Vec<IntStack>>,
}

impl PacketPool {
    /// An empty pool with room for `n` packets before it grows, where the system grants the
    /// address space (a machine that refuses it, e.g. under strict overcommit, gets a pool that
    /// grows as it goes, as it always may). The free list is not reserved: it grows to the
    /// high-water mark at most, and a reservation advised onto huge pages
    /// (`huge_pages.rs`) would make a whole 2 MiB page resident for each partition of a
    /// parallel run, whose lists stay far smaller.
    pub fn with_capacity(n: usize) -> Self {
        let mut pool = PacketPool::default();
        let _ = pool.slots.try_reserve_exact(n);
        pool
    }

    /// Stores `p` and returns its handle. With the INT lane on, the packet starts with an
    /// empty record stack.
    #[inline]
    pub fn alloc(&mut self, p: Packet) -> PktId {
        self.live += 1;
        let id = if let Some(id) = self.free.pop() {
            self.slots[id.idx()] = p;
            id
        } else {
            self.slots.push(p);
            PktId::at(self.slots.len() - 1)
        };
        if let Some(lane) = &mut self.telemetry {
            if lane.len() < self.slots.len() {
                lane.resize(self.slots.len(), IntStack::default());
            }
            lane[id.idx()].pushed = 0;
        }
        id
    }

    /// Keeps an INT record stack beside every packet from now on (before the first `alloc`).
    pub fn enable_telemetry(&mut self) {
        debug_assert!(self.slots.is_empty(), "the INT lane starts with the pool");
        self.telemetry = Some(Vec::with_capacity(self.slots.capacity()));
    }

    /// Whether packets carry INT record stacks.
    #[inline]
    pub fn telemetry_on(&self) -> bool {
        self.telemetry.is_some()
    }

    /// The INT records packet `id` carries (`None`: the lane is off).
    #[inline]
    pub fn telemetry(&self, id: PktId) -> Option<&IntStack> {
        self.telemetry.as_ref().map(|lane| &lane[id.idx()])
    }

    /// The INT records of packet `id`, to push onto or to fill (`None`: the lane is off).
    #[inline]
    pub fn telemetry_mut(&mut self, id: PktId) -> Option<&mut IntStack> {
        self.telemetry.as_mut().map(|lane| &mut lane[id.idx()])
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
        &self.slots[id.idx()]
    }

    /// The packet behind a handle, mutably.
    #[inline]
    pub fn get_mut(&mut self, id: PktId) -> &mut Packet {
        &mut self.slots[id.idx()]
    }

    /// Hints the CPU to load packet `id` into cache ahead of use.
    #[inline]
    pub fn prefetch(&self, id: PktId) {
        if let Some(p) = self.slots.get(id.idx()) {
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

    /// Takes over another pool's packets (a parallel run's partitions, merged when it ends:
    /// the live count and the high-water mark become sums; the packets' ids are not kept).
    pub fn absorb(&mut self, o: PacketPool) {
        self.live += o.live;
        self.slots.extend(o.slots);
        if let (Some(lane), Some(other)) = (&mut self.telemetry, o.telemetry) {
            lane.extend(other);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_move_to_the_data_class_only_when_asked() {
        let (control, data) = (ClassTable::default(), ClassTable::new(true));
        for &k in PktKind::ALL {
            assert_eq!(control.of(k), k.class(), "{k:?}");
        }
        for k in [PktKind::Ack, PktKind::Nack, PktKind::SeqNack, PktKind::Cnp] {
            assert_eq!(data.of(k), Class::Data, "{k:?}");
        }
        // Credits and switch feedback keep their class; data stays data.
        for k in [PktKind::Pull, PktKind::Congestion] {
            assert_eq!(data.of(k), Class::Control, "{k:?}");
        }
        assert_eq!(data.of(PktKind::Data), Class::Data);
    }

    #[test]
    fn the_kind_table_is_consistent() {
        // Each kind indexes its own slot; names are unique and usable as JSON keys.
        for (i, &k) in PktKind::ALL.iter().enumerate() {
            assert_eq!(k as usize, i);
            assert!(k.name().chars().all(|c| c.is_ascii_lowercase() || c == '_'), "{}", k.name());
        }
        let mut names: Vec<_> = PktKind::ALL.iter().map(|k| k.name()).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), PktKind::COUNT);
        assert_eq!(PktKind::default(), PktKind::Data);
        // Data and probes wait in the data class (ECN, trimming, PFC); the rest jump ahead.
        assert_eq!(PktKind::Data.class(), Class::Data);
        assert_eq!(PktKind::Probe.class(), Class::Data);
        assert_eq!(PktKind::Ack.class(), Class::Control);
    }

    #[test]
    fn a_reserved_pool_hands_out_the_same_handles_as_a_growing_one() {
        // The engine reserves the pool from the estimate; outputs must not depend on it, so
        // handles follow only the order of allocations and frees (last freed, first reused).
        let mut pools = [PacketPool::default(), PacketPool::with_capacity(1000), PacketPool::with_capacity(2), PacketPool::with_capacity(usize::MAX / 2)];
        assert!(pools[1].slots.capacity() >= 1000);
        assert_eq!(pools[3].slots.capacity(), 0, "a reservation the system refuses leaves a growing pool, not an abort");
        let mut handles: Vec<Vec<PktId>> = vec![Vec::new(); pools.len()];
        for (pool, got) in pools.iter_mut().zip(&mut handles) {
            let mut live = Vec::new();
            for i in 0..50u32 {
                live.push(pool.alloc(Packet { seq: i, ..Packet::default() }));
                if i % 3 == 0 {
                    let id = live.remove(live.len() / 2);
                    pool.free(id);
                }
            }
            got.extend(&live);
            assert_eq!(pool.live(), live.len());
            assert!(live.iter().all(|&id| pool.get(id).seq < 50));
        }
        assert_eq!(handles[0], handles[1]);
        assert_eq!(handles[0], handles[2]);
    }

    #[test]
    fn a_packet_fits_one_cache_line() {
        // Packets are copied on every hop and the pool is walked by the prefetcher: a new
        // header field must fit the padding or replace something, not spill to a second line.
        assert!(std::mem::size_of::<Packet>() <= 64, "{} bytes", std::mem::size_of::<Packet>());
    }

    #[test]
    fn per_kind_counters_index_and_sum() {
        let mut c = PerKind::default();
        c[PktKind::Ack] += 3;
        c[PktKind::Cnp] += 2;
        c[PktKind::Data] += 100;
        assert_eq!(c[PktKind::Ack], 3);
        assert_eq!(c.sum_where(|k| k.class() == Class::Control), 5);
    }
}
