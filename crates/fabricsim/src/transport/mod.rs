//! Transport: connections with sender and receiver state, on top of which congestion control
//! ([`cc`]) and path selection ([`lb`]) plug in; message gates ([`gate`]) decide when a ready
//! message is posted to a connection; a shaper ([`shaper`]) may split a flow's message over
//! several connections when the workload is compiled.
//!
//! Reliability: the receiver acknowledges every `ack_every` data packets with a cumulative ACK
//! plus a 64-packet selective bitmap and an ECN count, and NACKs every trimmed header at once;
//! the sender keeps a scoreboard of unacknowledged packets, retransmits NACKed packets first,
//! and declares a packet lost when it has been outstanding for one retransmission timeout.
//! Loss recovery ([`recovery`]) is a sender half and a receiver half per mode, one file each
//! (SACK, RoCE go-back-N, selective NACK, STrack's loss detection); the sender
//! ([`sender`]) and the receiver ([`receiver`]) carry out what their hooks return, and the
//! engine's dispatch what the sender and receiver return. Signals beside the ACKs, such as
//! DCQCN's congestion notification packets, are one file each ([`signal`]). Per-connection
//! memory is proportional to the window, not to the flow size.

pub mod cc;
pub mod connection;
pub mod credit;
pub mod gate;
pub mod hosts;
pub mod lb;
pub mod receiver;
pub mod recovery;
pub mod sender;
pub mod shaper;
pub mod signal;
pub mod subflows;

pub use connection::Connection;
