//! Message gates: the collective library's say in when a ready message is handed to the
//! transport.
//!
//! A collective library (NCCL, RCCL) posts a chunk to a queue pair once its data dependencies
//! are met; a message-level controller such as MCC (mcc spec §2.1, "the window decides whether
//! the next chunk's WQE may be posted") sits in between and may hold it back, driven by
//! per-message completion feedback. Every connection has one gate; ready messages wait in the
//! connection's pending queue, in order, until the gate lets the first one through.
//!
//! Adding a gate: one file implementing [`MessageGate`] and [`crate::scheme::Scheme`]`<GateBuild>`,
//! and one row in the `scheme_family!` list below.

use crate::units::Bytes;
pub mod mcc;

use crate::scheme::NoParams;
use crate::transport::cc::PathInfo;
use crate::units::Time;
use serde::{Deserialize, Serialize};

/// What a gate may know about its connection when it is built.
#[derive(Clone, Copy, Debug)]
pub struct GateBuild {
    /// The connection's path, as its congestion controller sees it.
    pub path: PathInfo,
    /// The worst oversubscription ratio on the connection's path: over the ToRs of both ends
    /// and the switches above them that have uplinks, (capacity towards the hosts) / (uplink
    /// capacity still available after `[topology.failures]`); 1 on a fabric without uplinks.
    pub oversubscription: f64,
}

/// A window decision of a gate, for the gate log (`run.gate_log`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WindowUpdate {
    /// What the gate concluded (`mcc`: `"grow"`, `"hold"` or `"shrink"`).
    pub state: &'static str,
    /// The window after the decision, payload bytes.
    pub window_bytes: Bytes,
}

/// What the gate sees when deciding on the next message of its connection.
#[derive(Clone, Copy, Debug)]
pub struct GateState {
    /// Current time.
    pub now: Time,
    /// Messages posted and not yet completed.
    pub in_flight_msgs: u32,
    /// Their payload bytes.
    pub in_flight_bytes: Bytes,
    /// Payload bytes of the message waiting to be posted.
    pub next_bytes: Bytes,
}

/// Feedback on a completed message.
#[derive(Clone, Copy, Debug)]
pub struct MessageFeedback {
    /// Completion time (the sender saw its last byte acknowledged).
    pub now: Time,
    /// Payload bytes.
    pub bytes: Bytes,
    /// When it was posted to the transport.
    pub posted_at: Time,
    /// When its first packet left the NIC.
    pub first_tx: Time,
    /// When its last byte was delivered in order at the receiver.
    pub delivered_at: Time,
    /// Largest round-trip sample of its sampled packets' ACKs (0 if none, or if the gate does
    /// not want RTT samples; see [`MessageGate::rtt_sample_stride`]).
    pub rtt_max: Time,
    /// Mean of those samples (0 if none).
    pub rtt_mean: Time,
    /// Messages still in flight on the connection after this one.
    pub in_flight_msgs: u32,
}

/// The interface of a message gate.
pub trait MessageGate {
    /// Whether the next ready message may be posted now. A gate that says no is asked again
    /// after the next completion on its connection.
    fn may_post(&mut self, st: &GateState) -> bool;
    /// A message of this connection completed (completions come in posting order). A gate
    /// that decided its window returns the decision, for the gate log.
    fn on_complete(&mut self, _fb: &MessageFeedback) -> Option<WindowUpdate> {
        None
    }
    /// Which packets' RTT samples the gate reads (`rtt_max`, `rtt_mean` of the feedback):
    /// 0 = none (the sender then skips attributing ACKs to messages), `n` = the first packet of
    /// every `n` of a message and its last packet (1 = all). Read once, when the fabric is
    /// built; with coalesced ACKs (`transport.ack_every` > 1) sampled packets ask for an
    /// immediate ACK.
    fn rtt_sample_stride(&self) -> u32 {
        0
    }
    /// Whether the gate reads [`MessageFeedback::delivered_at`], a time the receiver knows
    /// and the sender learns without a packet: a partitioned run cannot give it to a sender in
    /// another partition, so such a run stays serial (`engine::parallel`).
    fn reads_delivery_time(&self) -> bool {
        false
    }
}

crate::scheme_family! {
    /// Scenario selection of a gate (`[transport.gate]`, `name = ...`).
    config GateConfig;
    /// A built gate (static dispatch).
    any AnyGate;
    ctx GateBuild; what "message gate"; key "transport.gate"; default None;
    dispatch dispatch;
    schemes {
        /// Post every message as soon as it is ready.
        None => Open,
        /// At most `messages` outstanding messages per connection (as NCCL_STEPS bounds the
        /// chunks in flight per channel; the MCC spec's A-2 sensitivity uses 8).
        MaxOutstanding => MaxOutstanding,
        /// See [`mcc`]. Boxed: about 150 bytes of state.
        Mcc => Box<mcc::Mcc>,
    }
}

/// `none`: always open.
#[derive(Clone, Copy, Debug)]
pub struct Open;

impl crate::scheme::Scheme<GateBuild> for Open {
    const NAME: &'static str = "none";
    const SUMMARY: &'static str = "post each message as soon as its dependencies are met (the transport alone paces)";
    type Params = NoParams;
    fn build(_p: &NoParams, _ctx: &mut GateBuild) -> Self {
        Open
    }
}

impl MessageGate for Open {
    #[inline]
    fn may_post(&mut self, _st: &GateState) -> bool {
        true
    }
}

/// Parameters of `max_outstanding`.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct MaxOutstandingParams {
    /// Most messages posted and not completed per connection.
    pub messages: u32,
}

impl Default for MaxOutstandingParams {
    fn default() -> Self {
        MaxOutstandingParams { messages: 8 }
    }
}

/// `max_outstanding`: a bound on the messages posted and not completed.
#[derive(Clone, Copy, Debug)]
pub struct MaxOutstanding {
    messages: u32,
}

impl crate::scheme::Scheme<GateBuild> for MaxOutstanding {
    const NAME: &'static str = "max_outstanding";
    const SUMMARY: &'static str = "at most `messages` posted, uncompleted messages per connection (NCCL_STEPS-like)";
    type Params = MaxOutstandingParams;
    const LIMITS: &'static [crate::scheme::Limit] = &[crate::scheme::Limit::new("messages", 1.0, 1e6)];
    fn build(p: &MaxOutstandingParams, _ctx: &mut GateBuild) -> Self {
        MaxOutstanding { messages: p.messages }
    }
}

impl MessageGate for MaxOutstanding {
    #[inline]
    fn may_post(&mut self, st: &GateState) -> bool {
        st.in_flight_msgs < self.messages
    }
}

impl MessageGate for AnyGate {
    #[inline]
    fn may_post(&mut self, st: &GateState) -> bool {
        dispatch!(self, g => g.may_post(st))
    }
    #[inline]
    fn on_complete(&mut self, fb: &MessageFeedback) -> Option<WindowUpdate> {
        dispatch!(self, g => g.on_complete(fb))
    }
    #[inline]
    fn rtt_sample_stride(&self) -> u32 {
        dispatch!(self, g => g.rtt_sample_stride())
    }
    fn reads_delivery_time(&self) -> bool {
        dispatch!(self, g => g.reads_delivery_time())
    }
}
