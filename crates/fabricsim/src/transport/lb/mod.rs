//! Host-side path selection: which entropy each data packet carries. ECMP switches hash the
//! entropy (with src, dst and flow id) to pick among equal-cost next hops, so the host steers
//! packets without knowing the topology.
//!
//! The trait has htsim's `UecMultipath` shape: `next_entropy` per packet and `on_feedback` per
//! ACK/NACK/timeout. Adding a scheme: one file implementing [`PathSelector`] and
//! [`crate::scheme::Scheme`]`<LbBuild>`, and one row in the `scheme_family!` list below.

pub mod bitmap;
pub mod ecmp;
pub mod ecmp_subflows;
pub mod host_flowlet;
pub mod mixed;
pub mod plb;
pub mod reps;
pub mod spray;
pub mod strack;

use crate::ids::Entropy;
use crate::rng::Rng;
use crate::transport::cc::PathInfo;
use crate::units::Time;

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

/// What every selector's constructor gets: the connection's path and its random stream (moved
/// into the connection afterwards, so initial draws and later draws form one stream).
#[derive(Clone, Debug)]
pub struct LbBuild {
    /// The connection's path.
    pub path: PathInfo,
    /// The connection's random stream.
    pub rng: Rng,
}

crate::scheme_family! {
    /// Scenario selection of a path selector (`[transport.lb]`, `name = ...`).
    config LbConfig;
    /// A built selector (static dispatch).
    any AnyLb;
    ctx LbBuild; what "path selection"; key "transport.lb"; default Spray;
    dispatch dispatch;
    schemes {
        /// See [`ecmp`].
        Ecmp => ecmp::Ecmp,
        /// See [`ecmp_subflows`].
        EcmpSubflows => ecmp_subflows::EcmpSubflows,
        /// See [`spray`].
        Spray => spray::Spray,
        /// See [`reps`].
        Reps => reps::Reps,
        /// See [`host_flowlet`].
        HostFlowlet => host_flowlet::HostFlowlet,
        /// See [`plb`].
        Plb => plb::Plb,
        /// See [`strack`].
        Strack => strack::StrackLb,
        /// See [`bitmap`].
        Bitmap => bitmap::Bitmap,
        /// See [`mixed`].
        Mixed => mixed::Mixed,
    }
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
