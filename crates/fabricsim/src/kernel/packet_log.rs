//! The packet log (`run.packet_log_conns`: every event of the logged connections' data packets)
//! and the drop log (`run.event_log`): the two records that elements on a packet's path, switch
//! ports as well as hosts, append to as things happen to it.

use crate::units::Time;

/// What happened to a data packet of a logged connection (`run.packet_log_conns`), in the
/// order a packet meets them: it leaves its sender, may be trimmed or dropped on the way, its
/// header reaches the receiver, and an ACK or NACK about it reaches the sender.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PacketEvent {
    /// A first transmission left the sender (into its NIC).
    Sent,
    /// A retransmission left the sender.
    Resent,
    /// A switch port could not buffer it on arrival and cut it to a header.
    Trimmed,
    /// A switch port cut it to a header after it was queued, to make room for a control
    /// packet in a lane shared with data (lb-ai-training spec §4.2).
    Evicted,
    /// It (or, when it had been trimmed, its header) was discarded.
    Dropped,
    /// A switch turned its header back toward the sender (return-to-sender).
    Bounced,
    /// Its trimmed header reached the receiver, which NACKs it.
    HeaderArrived,
    /// A NACK or returned header about it reached the sender.
    NackArrived,
    /// An ACK for it reached the sender.
    AckArrived,
    /// The sender's retransmission timer declared it lost.
    TimedOut,
}

impl PacketEvent {
    /// The name written to `packet_log.csv`.
    pub fn name(self) -> &'static str {
        match self {
            PacketEvent::Sent => "sent",
            PacketEvent::Resent => "resent",
            PacketEvent::Trimmed => "trimmed",
            PacketEvent::Evicted => "evicted",
            PacketEvent::Dropped => "dropped",
            PacketEvent::Bounced => "bounced",
            PacketEvent::HeaderArrived => "header_arrived",
            PacketEvent::NackArrived => "nack_arrived",
            PacketEvent::AckArrived => "ack_arrived",
            PacketEvent::TimedOut => "timed_out",
        }
    }
}

/// The port of a [`PacketRecord`] whose event happens at a host.
pub const NO_PORT: u32 = u32::MAX;

/// One logged event of one data packet.
#[derive(Clone, Copy, Debug)]
pub struct PacketRecord {
    /// When.
    pub at: Time,
    /// Connection.
    pub conn: u32,
    /// Packet sequence number within the connection.
    pub seq: u32,
    /// What happened.
    pub event: PacketEvent,
    /// The switch port where it happened, or [`NO_PORT`].
    pub port: u32,
}

/// The packets' events and drops a run logs (empty and off unless the scenario asks).
#[derive(Debug, Default)]
pub struct PacketLog {
    /// Whether to log drops (`run.event_log`).
    pub log_drops: bool,
    /// Dropped packets: (time, port where it was lost, connection).
    pub drops: Vec<(Time, u32, u32)>,
    /// Connections whose every packet event is logged (`run.packet_log_conns`), sorted.
    pub packet_conns: Vec<u32>,
    /// Logged packet events of those connections, in event order.
    pub packets: Vec<PacketRecord>,
}

impl PacketLog {
    /// Logs `event` of packet `seq` of connection `conn` at port `port` ([`NO_PORT`] for an
    /// event at a host), if `run.packet_log_conns` names the connection.
    #[inline]
    pub fn packet(&mut self, at: Time, conn: u32, seq: u32, event: PacketEvent, port: u32) {
        if !self.packet_conns.is_empty() && self.packet_conns.binary_search(&conn).is_ok() {
            self.packets.push(PacketRecord { at, conn, seq, event, port });
        }
    }

    /// Logs the loss of a packet of connection `conn` at port `port`, if `run.event_log` asks.
    #[inline]
    pub fn drop(&mut self, at: Time, port: u32, conn: u32) {
        if self.log_drops {
            self.drops.push((at, port, conn));
        }
    }

    /// Whether it logs anything.
    pub fn records_anything(&self) -> bool {
        self.log_drops || !self.packet_conns.is_empty()
    }
}
