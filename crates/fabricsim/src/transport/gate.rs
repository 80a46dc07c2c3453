//! Message gates: the collective library's say in when a ready message is handed to the
//! transport.
//!
//! A collective library (NCCL, RCCL) posts a chunk to a queue pair once its data dependencies
//! are met; a message-level controller such as MCC (mcc spec §2.1, "the window decides whether
//! the next chunk's WQE may be posted") sits in between and may hold it back, driven by
//! per-message completion feedback. Every connection has one gate; ready messages wait in the
//! connection's pending queue, in order, until the gate lets the first one through.
//!
//! Adding a gate: one file (or a section here) implementing [`MessageGate`], one variant in
//! [`GateConfig`] and [`AnyGate`], one row in [`REGISTRY`].

use crate::error::{Error, Result};
use crate::scenario::NoParams;
use crate::units::Time;
use serde::{Deserialize, Serialize};

/// What the gate sees when deciding on the next message of its connection.
#[derive(Clone, Copy, Debug)]
pub struct GateState {
    /// Current time.
    pub now: Time,
    /// Messages posted and not yet completed.
    pub in_flight_msgs: u32,
    /// Their payload bytes.
    pub in_flight_bytes: u64,
    /// Payload bytes of the message waiting to be posted.
    pub next_bytes: u64,
}

/// Feedback on a completed message.
#[derive(Clone, Copy, Debug)]
pub struct MessageFeedback {
    /// Completion time (the sender saw its last byte acknowledged).
    pub now: Time,
    /// Payload bytes.
    pub bytes: u64,
    /// When it was posted to the transport.
    pub posted_at: Time,
    /// When its first packet left the NIC.
    pub first_tx: Time,
    /// When its last byte was delivered in order at the receiver.
    pub delivered_at: Time,
    /// Largest round-trip sample of its packets' ACKs (0 if none, or if the gate does not
    /// want RTT samples).
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
    /// A message of this connection completed.
    fn on_complete(&mut self, _fb: &MessageFeedback) {}
    /// Whether the gate reads per-packet RTT samples (`rtt_max`, `rtt_mean` of the feedback);
    /// the sender skips attributing ACKs to messages otherwise.
    fn wants_rtt_samples(&self) -> bool {
        false
    }
}

/// Scenario selection of a gate (`[transport.gate]`, `name = ...`).
#[derive(Clone, Debug, Serialize)]
#[serde(tag = "name", rename_all = "snake_case")]
pub enum GateConfig {
    /// Post every message as soon as it is ready.
    None(NoParams),
    /// At most `messages` outstanding messages per connection (as NCCL_STEPS bounds the chunks
    /// in flight per channel; the MCC spec's A-2 sensitivity uses 8).
    MaxOutstanding(MaxOutstandingParams),
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

crate::tagged_config!(GateConfig, "name", "message gate", {
    "none" => None(NoParams),
    "max_outstanding" => MaxOutstanding(MaxOutstandingParams),
});

impl Default for GateConfig {
    fn default() -> Self {
        GateConfig::None(NoParams {})
    }
}

/// Registry rows: (name, one-line summary).
pub const REGISTRY: &[(&str, &str)] = &[
    ("none", "post each message as soon as its dependencies are met (the transport alone paces)"),
    ("max_outstanding", "at most `messages` posted, uncompleted messages per connection (NCCL_STEPS-like)"),
];

impl GateConfig {
    /// Checks parameters.
    pub fn validate(&self) -> Result<()> {
        if let GateConfig::MaxOutstanding(p) = self {
            if p.messages == 0 {
                return Err(Error::invalid("transport.gate.messages", "0: must be at least 1"));
            }
        }
        Ok(())
    }

    /// Builds the gate of one connection.
    pub fn build(&self) -> AnyGate {
        match self {
            GateConfig::None(_) => AnyGate::Open,
            GateConfig::MaxOutstanding(p) => AnyGate::MaxOutstanding(p.messages),
        }
    }
}

/// A built gate (static dispatch).
#[derive(Clone, Debug)]
pub enum AnyGate {
    /// Always open.
    Open,
    /// Bound on outstanding messages.
    MaxOutstanding(u32),
}

impl MessageGate for AnyGate {
    #[inline]
    fn may_post(&mut self, st: &GateState) -> bool {
        match self {
            AnyGate::Open => true,
            AnyGate::MaxOutstanding(n) => st.in_flight_msgs < *n,
        }
    }
}
