//! Host-side path selection: which entropy each data packet carries. ECMP switches hash the
//! entropy (with src, dst and flow id) to pick among equal-cost next hops, so the host steers
//! packets without knowing the topology.
//!
//! The trait has htsim's `UecMultipath` shape: `next_entropy` per packet and `on_feedback` per
//! ACK/NACK/timeout. Adding a scheme: one file, one variant in [`LbConfig`] and [`AnyLb`], one arm
//! in `dispatch!`, one row in [`REGISTRY`].

pub mod ecmp;
pub mod plb;
pub mod reps;
pub mod spray;
pub mod strack;

use crate::ids::Entropy;
use crate::rng::Rng;
use crate::transport::cc::PathInfo;
use crate::units::Time;
use serde::Serialize;

/// What the connection tells the selector when it needs an entropy.
#[derive(Clone, Copy, Debug)]
pub struct EntropyCtx {
    /// Current time.
    pub now: Time,
    /// Sequence number of the packet being sent.
    pub seq: u32,
    /// Whether it is a retransmission.
    pub retransmit: bool,
    /// Congestion window in packets (None for window-less senders).
    pub window_pkts: Option<u32>,
    /// Wire bytes in flight.
    pub in_flight: u64,
}

/// Per-packet feedback about the path an entropy took.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Feedback {
    /// Acknowledged, with or without an ECN mark.
    Ack {
        /// The data packet carried CE.
        ecn: bool,
    },
    /// Trimmed (NACKed).
    Nack,
    /// Declared lost by the retransmission timer.
    Timeout,
}

/// The interface of a host-side path selector.
pub trait PathSelector {
    /// Entropy for the next data packet.
    fn next_entropy(&mut self, ctx: &EntropyCtx, rng: &mut Rng) -> Entropy;
    /// Feedback about a packet that carried `entropy`.
    fn on_feedback(&mut self, _entropy: Entropy, _fb: Feedback, _now: Time) {}
}

/// Scenario selection of a path selector (`[transport.lb]`, `name = ...`).
#[derive(Clone, Debug, Serialize)]
#[serde(tag = "name", rename_all = "snake_case")]
pub enum LbConfig {
    /// See [`ecmp`].
    Ecmp(ecmp::EcmpParams),
    /// See [`spray`].
    Spray(spray::SprayParams),
    /// See [`reps`].
    Reps(reps::RepsParams),
    /// See [`plb`].
    Plb(plb::PlbParams),
    /// See [`strack`].
    Strack(strack::StrackLbParams),
}

crate::tagged_config!(LbConfig, "name", "path selection", {
    "ecmp" => Ecmp(ecmp::EcmpParams),
    "spray" => Spray(spray::SprayParams),
    "reps" => Reps(reps::RepsParams),
    "plb" => Plb(plb::PlbParams),
    "strack" => Strack(strack::StrackLbParams),
});

impl Default for LbConfig {
    fn default() -> Self {
        LbConfig::Spray(spray::SprayParams::default())
    }
}

/// A built selector (static dispatch).
#[derive(Clone, Debug)]
pub enum AnyLb {
    /// See [`ecmp`].
    Ecmp(ecmp::Ecmp),
    /// See [`spray`].
    Spray(spray::Spray),
    /// See [`reps`].
    Reps(reps::Reps),
    /// See [`plb`].
    Plb(plb::Plb),
    /// See [`strack`].
    Strack(strack::StrackLb),
}

/// Registry rows: (name, one-line summary).
pub const REGISTRY: &[(&str, &str)] =
    &[(ecmp::NAME, ecmp::SUMMARY), (spray::NAME, spray::SUMMARY), (reps::NAME, reps::SUMMARY), (plb::NAME, plb::SUMMARY), (strack::NAME, strack::SUMMARY)];

impl LbConfig {
    /// Builds the selector of one connection on `path`, drawing any initial state from `rng`.
    pub fn build(&self, path: &PathInfo, rng: &mut Rng) -> AnyLb {
        match self {
            LbConfig::Ecmp(p) => AnyLb::Ecmp(ecmp::Ecmp::new(p, rng)),
            LbConfig::Spray(p) => AnyLb::Spray(spray::Spray::new(p)),
            LbConfig::Reps(p) => AnyLb::Reps(reps::Reps::new(p, path, rng)),
            LbConfig::Plb(p) => AnyLb::Plb(plb::Plb::new(p, path, rng)),
            LbConfig::Strack(p) => AnyLb::Strack(strack::StrackLb::new(p)),
        }
    }

    /// Checks parameter values; errors name the key under `transport.lb`.
    pub fn validate(&self) -> crate::error::Result<()> {
        match self {
            LbConfig::Ecmp(_) => Ok(()),
            LbConfig::Spray(p) => p.validate(),
            LbConfig::Reps(p) => p.validate(),
            LbConfig::Plb(p) => p.validate(),
            LbConfig::Strack(p) => p.validate(),
        }
    }
}

macro_rules! dispatch {
    ($self:ident, $c:ident => $e:expr) => {
        match $self {
            AnyLb::Ecmp($c) => $e,
            AnyLb::Spray($c) => $e,
            AnyLb::Reps($c) => $e,
            AnyLb::Plb($c) => $e,
            AnyLb::Strack($c) => $e,
        }
    };
}

impl PathSelector for AnyLb {
    #[inline]
    fn next_entropy(&mut self, ctx: &EntropyCtx, rng: &mut Rng) -> Entropy {
        dispatch!(self, c => c.next_entropy(ctx, rng))
    }
    #[inline]
    fn on_feedback(&mut self, entropy: Entropy, fb: Feedback, now: Time) {
        dispatch!(self, c => c.on_feedback(entropy, fb, now))
    }
}
