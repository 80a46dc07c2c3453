//! Switch-side path selection: which of the equal-cost output ports a switch sends a packet to.
//! The mirror of the host-side `PathSelector` (`transport::lb`): hosts steer
//! by the entropy they write, switches by the port they pick (STYLE §2.2, switch side).
//!
//! **Adding a switch-side scheme:** one file here with its `Params` (serde,
//! `deny_unknown_fields`) and a struct implementing [`SwitchLb`] and
//! [`crate::scheme::Scheme`]`<SwitchBuild>` (name, summary, parameter ranges, constructor); then
//! one row in the `scheme_family!` list below. Nothing in `net/switch.rs` changes.
//!
//! # What the switch does (`net/switch.rs`)
//! The switch decides alone where there is no choice: at the destination's ToR (the host's
//! downlink) and where the routing table has one next hop. Otherwise it asks the switch's own
//! selector (one [`AnySwitchLb`] per switch, built for the switch's tier from `[switch.lb]`):
//! first [`SwitchLb::peek`], then, if that gives nothing, [`SwitchLb::choose`] with
//! - the packet (`&mut`: a scheme may write header fields, e.g. a path tag or CONGA feedback),
//! - the candidates as [`Candidates`]: the next-hop ports with a read-only [`PortView`] each
//!   (queued bytes, quantised level, pause, link state, rate, last departure, buffer size),
//! - a [`SwitchCtx`]: `now`, the switch's random stream (`Rng::stream(seed, "switch_lb",
//!   switch index)`, drawn in event order), the packet's destination ToR (key of per-destination
//!   state), and a `rerouted` flag the scheme sets when it sends a packet elsewhere than its
//!   flow's hashed or remembered port (the switch counts it per connection for data packets:
//!   `packets.reroutes`, and per flow where [`SwitchLb::counts_reroutes`] says so).
//!
//! # Shared pieces
//! [`levels`] is the queue comparison of the adaptive schemes (quantised levels with a refresh
//! period, or bytes; uniform ties); [`flow_table`] the per-switch `(choice, last_seen)` table
//! keyed by (connection, entropy) of the flowlet-style schemes; [`ecmp::Ecmp::index`] the hash
//! that hash-based schemes start from.
//!
//! # Look-ahead (route hints in `Packet::link`)
//! The event loop routes arrivals a few events early to prefetch the output port
//! (`engine::Sim::prefetch_ahead`) and caches the result in the packet's `link`. That is
//! only sound for a choice that is a pure function of the header and the static tables: such a
//! scheme answers [`SwitchLb::peek`] (ECMP does); the glue then never calls `choose` for it, so
//! its `choose` must equal `peek` and have no side effects. Any scheme that reads port state,
//! keeps state or draws random numbers returns `None` (the default) and is asked at the
//! packet's own arrival event, in event order, so its draws and state follow the simulation.
//!
//! # Hooks for schemes that keep fabric-wide state (SeqBalance, CONGA)
//! - **Every packet, also without a choice** (SeqBalance's destination ToR mirrors CE-marked
//!   data that arrives from the fabric, seqbalance §2.4.5; CONGA's per-hop congestion field,
//!   §2.5.3): [`SwitchLb::on_packet`], called for every packet a switch forwards, after the
//!   output port is known and before the packet is queued (so before this switch's own ECN
//!   mark), only at switches whose selector says [`SwitchLb::observes_all`] — ECMP pays one
//!   flag test per hop.
//! - **Control packets a switch creates** (SeqBalance's Congestion Packets): `on_packet` may
//!   leave one packet in [`SwitchCtx::emit`]; the glue allocates it, routes it from this
//!   switch like any packet (the selector's `choose` sees it; its `kind` is control) and queues
//!   it in the control class. It counts as *sent* of its kind (`packets.by_kind`).
//! - **Control packets addressed to a switch**: a packet whose `dst` is a switch node (a ToR;
//!   routes to every ToR exist) is routed toward that ToR, handed to its selector's
//!   [`SwitchLb::on_control`] on arrival, counted as *arrived* and freed.
//!
//! # Wired since
//! - **Source routing** (seqbalance §2.4.6): the source ToR's `choose` writes
//!   [`Packet::path_tag`]; upper-tier selectors read it and return the candidate it names, with
//!   no per-flow state, and answer `peek` (a function of the header). `letflow` uses it (its
//!   tag layout: a ToR byte and 7 bits for the aggregation tier).
//! - **Stale levels** (lb-ai-training §2.1: refreshed at most every 0.1 µs): [`levels::Levels`]
//!   keeps `(level, refreshed_at)` per local port and reads [`PortView::level`] only when the
//!   entry is as old as the refresh period.

/// The [`SwitchLb`] of a selector whose choice is a pure function of the header, its
/// `index(&Packet, candidates) -> usize`: `choose` and `peek` both return it, so the look-ahead
/// may route early (`ecmp`, `ns3_ecmp`).
macro_rules! header_hash_selector {
    ($t:ty) => {
        impl $crate::net::switch_lb::SwitchLb for $t {
            #[inline]
            fn choose(&mut self, _ctx: &mut $crate::net::switch_lb::SwitchCtx<'_>, pkt: &mut $crate::net::packet::Packet, cands: &$crate::net::switch_lb::Candidates<'_>) -> usize {
                self.index(pkt, cands.len())
            }

            #[inline]
            fn peek(&self, pkt: &$crate::net::packet::Packet, cands: &[$crate::ids::PortId]) -> Option<usize> {
                Some(self.index(pkt, cands.len()))
            }
        }
    };
}
pub(crate) use header_hash_selector;

pub mod adaptive_ecmp;
pub mod adaptive_packet;
pub mod conga;
pub mod drill;
pub mod ecmp;
pub mod flow_table;
pub mod flowlet;
pub mod letflow;
pub mod ns3_ecmp;
pub mod path_tag;
pub mod levels;
pub mod random;
pub mod round_robin;
pub mod seqbalance;

use crate::error::{Error, Result};
use crate::ids::{NodeId, PortId};
use crate::net::packet::Packet;
use crate::net::port::PortState;
use crate::kernel::store::Store;
use crate::rng::Rng;
use crate::topo::{Fabric, Tier};
use crate::units::{BitsPerSec, Time};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// What a switch's selector may use besides the packet and the candidates.
#[derive(Debug)]
pub struct SwitchCtx<'a> {
    /// Current time.
    pub now: Time,
    /// The switch's own random stream (`"switch_lb"`, switch index).
    pub rng: &'a mut Rng,
    /// The ToR of the packet's destination host (the key of per-destination state, e.g.
    /// DRILL's memory or SeqBalance's congestion table), or the destination switch itself for a
    /// packet addressed to a switch.
    pub dst_tor: crate::ids::NodeId,
    /// The ToR of the packet's source host, or the source switch for a switch-made packet
    /// (`NodeId::MAX` where the caller does not know it, e.g. in unit tests built with
    /// [`SwitchCtx::new`]).
    pub src_tor: crate::ids::NodeId,
    /// The fabric (routes, tiers, hop distances), for schemes that choose whole paths at the
    /// source ToR (seqbalance §2.4.6); `None` in unit tests built with [`SwitchCtx::new`].
    pub fabric: Option<&'a Fabric>,
    /// A control packet the selector wants sent from this switch (at most one per call; only
    /// read after [`SwitchLb::on_packet`]). Its `dst` is a host, or a ToR switch's node id.
    pub emit: Option<Packet>,
    /// Set by `choose` when it re-routes: sends the packet to another port than the flow's
    /// hashed or remembered one at this switch. The glue counts it per connection, for data
    /// packets only (the "re-routes on almost every packet" diagnostic, lb-ai-training §5).
    pub rerouted: bool,
}

impl<'a> SwitchCtx<'a> {
    /// A context at `now` with `rng`, for destination ToR `dst_tor`, nothing re-routed yet.
    pub fn new(now: Time, rng: &'a mut Rng, dst_tor: crate::ids::NodeId) -> Self {
        SwitchCtx { now, rng, dst_tor, src_tor: crate::ids::NodeId::MAX, rerouted: false, fabric: None, emit: None }
    }

    /// A context at `now` with `rng` in `fabric`, for a packet from ToR `src_tor` to ToR
    /// `dst_tor`.
    pub fn between(now: Time, rng: &'a mut Rng, fabric: &'a Fabric, src_tor: crate::ids::NodeId, dst_tor: crate::ids::NodeId) -> Self {
        SwitchCtx { now, rng, dst_tor, src_tor, rerouted: false, fabric: Some(fabric), emit: None }
    }
}

/// The equal-cost output ports of one decision (at least two), with read-only views of their
/// state.
#[derive(Clone, Copy, Debug)]
pub struct Candidates<'a> {
    ports: &'a [PortId],
    /// The held ports' state, and (a partition's store) the slot of each port id in it.
    state: &'a [PortState],
    slot: Option<&'a [u32]>,
    profile_buffers: &'a [u64],
}

impl<'a> Candidates<'a> {
    /// The candidates `ports`, whose state is `state[port]`; a port whose queue profile is `i`
    /// (`PortState::qdisc`) holds `profile_buffers[i]` bytes of data.
    pub fn new(ports: &'a [PortId], state: &'a impl Store<PortState>, profile_buffers: &'a [u64]) -> Self {
        let (state, slot) = state.parts();
        Candidates { ports, state, slot, profile_buffers }
    }

    /// Number of candidates.
    #[inline]
    pub fn len(&self) -> usize {
        self.ports.len()
    }

    /// Whether there are none (never, for a call of [`SwitchLb::choose`]).
    pub fn is_empty(&self) -> bool {
        self.ports.is_empty()
    }

    /// The candidate port ids, in routing-table order.
    pub fn ports(&self) -> &'a [PortId] {
        self.ports
    }

    /// The state of candidate `i`.
    pub fn view(&self, i: usize) -> PortView<'a> {
        let id = self.ports[i];
        let st = match self.slot {
            None => &self.state[id.idx()],
            Some(slot) => &self.state[slot[id.idx()] as usize],
        };
        PortView { id, st, buffer_bytes: self.profile_buffers[st.qdisc as usize] }
    }

    /// Every candidate's state, in order.
    pub fn iter(&self) -> impl Iterator<Item = PortView<'a>> + '_ {
        (0..self.len()).map(|i| self.view(i))
    }
}

impl<'a> PortView<'a> {
    /// The view of port `id`, whose state is `state[id]` (buffers as for [`Candidates::new`]).
    pub fn of(id: PortId, state: &'a impl Store<PortState>, profile_buffers: &[u64]) -> Self {
        let st = &state[id.idx()];
        PortView { id, st, buffer_bytes: profile_buffers[st.qdisc as usize] }
    }
}

/// A read-only view of one candidate output port.
#[derive(Clone, Copy, Debug)]
pub struct PortView<'a> {
    id: PortId,
    st: &'a PortState,
    buffer_bytes: u64,
}

impl PortView<'_> {
    /// The port id.
    pub fn id(&self) -> PortId {
        self.id
    }
    /// Bytes queued in the data class (including bytes held by a PFC pause).
    pub fn queued_bytes(&self) -> u64 {
        self.st.data_bytes.0
    }
    /// Bytes queued in the control class.
    pub fn ctrl_bytes(&self) -> u64 {
        self.st.ctrl_bytes.0
    }
    /// Data-class buffer of the port (bytes). Under PFC the shared buffer bounds the queue
    /// instead, and this is effectively unlimited.
    pub fn buffer_bytes(&self) -> u64 {
        self.buffer_bytes
    }
    /// Quantised occupancy, see [`quantised_level`].
    pub fn level(&self) -> u8 {
        quantised_level(self.st.data_bytes.0, self.buffer_bytes)
    }
    /// Whether PFC has paused the data class.
    pub fn paused(&self) -> bool {
        self.st.paused
    }
    /// Whether the cable carries traffic.
    pub fn up(&self) -> bool {
        self.st.up
    }
    /// Current serialization rate.
    pub fn rate(&self) -> BitsPerSec {
        self.st.rate
    }
    /// When the packet being serialized (or the last one) finishes: the port's last departure.
    pub fn busy_until(&self) -> Time {
        self.st.busy_until
    }
    /// The node at the far end.
    pub fn peer(&self) -> crate::ids::NodeId {
        self.st.peer
    }
}

//= lb-ai-training §2.1 (queue comparison); type=assumption (htsim-faithful)
//# Level 0 below 5 % of the buffer, 1 below 10 %, 2 below 20 %, 3 above.
/// Quantised occupancy of a data queue holding `bytes` of `capacity`: 0, 1, 2 or 3.
#[inline]
pub fn quantised_level(bytes: u64, capacity: u64) -> u8 {
    let (b, c) = (bytes as u128, capacity as u128);
    if b * 20 < c {
        0
    } else if b * 10 < c {
        1
    } else if b * 5 < c {
        2
    } else {
        3
    }
}

/// The interface of a switch-side path selector; one instance per switch.
pub trait SwitchLb {
    /// Index into `cands` (at least two) of the port for `pkt`.
    fn choose(&mut self, ctx: &mut SwitchCtx<'_>, pkt: &mut Packet, cands: &Candidates<'_>) -> usize;

    /// The index `choose` would return, if that is a pure function of the header and the static
    /// candidate list `cands`; the glue may then compute it early (look-ahead) and never call
    /// `choose`. Default: `None` (ask `choose` at the packet's arrival).
    #[inline]
    fn peek(&self, _pkt: &Packet, _cands: &[PortId]) -> Option<usize> {
        None
    }

    /// Whether `choose` reports re-routes (`SwitchCtx::rerouted`): schemes that have a port of
    /// the flow's to depart from (a hash, a table entry, a remembered port). The results add a
    /// per-flow `reroutes` column and figures only for runs with such a scheme. Default: no.
    fn counts_reroutes(&self) -> bool {
        false
    }

    /// Whether [`SwitchLb::on_packet`] must see every packet the switch forwards (asked once,
    /// when the network is built). Default: no.
    fn observes_all(&self) -> bool {
        false
    }

    /// Every packet the switch forwards to port `out`, with or without a choice, before it is
    /// queued there (e.g. a destination ToR noticing CE marks, a hop raising CONGA's
    /// congestion field). `out_view` is the output port's state. The selector may set
    /// [`SwitchCtx::emit`].
    fn on_packet(&mut self, _ctx: &mut SwitchCtx<'_>, _pkt: &mut Packet, _out: &PortView<'_>) {}

    /// A control packet addressed to this switch (e.g. a SeqBalance Congestion Packet at the
    /// source ToR); the glue frees it afterwards.
    fn on_control(&mut self, _ctx: &mut SwitchCtx<'_>, _pkt: &Packet) {}
}

/// What every switch-side selector is built from: the run's master seed and the switch's
/// number (0 = the first switch node), so each switch can salt or seed its own state.
#[derive(Clone, Debug)]
pub struct SwitchBuild {
    /// Master seed of the run.
    pub seed: u64,
    /// Switch number.
    pub switch: u32,
    /// The switch's tier (a leaf-spine's spine is `Agg`).
    pub tier: Tier,
    /// The switch's node id (`hosts + switch`): what `SwitchCtx::dst_tor` / `src_tor` say
    /// when this switch is the packet's destination or source ToR.
    pub node: crate::ids::NodeId,
    /// The HPCC ns-3 simulator's names of the run's nodes and connections, when the workload
    /// read them (`ns3_ecmp` hashes them).
    pub ns3: Option<std::sync::Arc<ns3_ecmp::Ns3Naming>>,
}

crate::scheme_family! {
    /// Scenario selection of a switch-side scheme (`name = ...` in `[switch.lb]` or a tier table).
    #[derive(PartialEq)]
    config SwitchLbConfig;
    /// A built selector (static dispatch).
    any AnySwitchLb;
    ctx SwitchBuild; what "switch path selection"; key "switch.lb"; default Ecmp;
    dispatch dispatch;
    schemes {
        /// See [`ecmp`].
        Ecmp => ecmp::Ecmp,
        /// See [`random`].
        Random => random::Random,
        /// See [`round_robin`].
        RoundRobin => round_robin::RoundRobin,
        /// See [`adaptive_packet`].
        AdaptivePacket => adaptive_packet::AdaptivePacket,
        /// See [`adaptive_ecmp`].
        AdaptiveEcmp => adaptive_ecmp::AdaptiveEcmp,
        /// See [`flowlet`].
        Flowlet => flowlet::Flowlet,
        /// See [`letflow`].
        Letflow => letflow::Letflow,
        /// See [`drill`].
        Drill => drill::Drill,
        /// See [`seqbalance`].
        Seqbalance => seqbalance::Seqbalance,
        /// See [`conga`].
        Conga => conga::Conga,
        /// See [`ns3_ecmp`].
        Ns3Ecmp => ns3_ecmp::Ns3Ecmp,
    }
}

impl SwitchLb for AnySwitchLb {
    #[inline]
    fn choose(&mut self, ctx: &mut SwitchCtx<'_>, pkt: &mut Packet, cands: &Candidates<'_>) -> usize {
        dispatch!(self, c => c.choose(ctx, pkt, cands))
    }
    #[inline]
    fn peek(&self, pkt: &Packet, cands: &[PortId]) -> Option<usize> {
        dispatch!(self, c => c.peek(pkt, cands))
    }
    fn counts_reroutes(&self) -> bool {
        dispatch!(self, c => c.counts_reroutes())
    }
    fn observes_all(&self) -> bool {
        dispatch!(self, c => c.observes_all())
    }
    fn on_packet(&mut self, ctx: &mut SwitchCtx<'_>, pkt: &mut Packet, out: &PortView<'_>) {
        dispatch!(self, c => c.on_packet(ctx, pkt, out))
    }
    fn on_control(&mut self, ctx: &mut SwitchCtx<'_>, pkt: &Packet) {
        dispatch!(self, c => c.on_control(ctx, pkt))
    }
}

/// `[switch.lb]`: the scheme of every switch, with optional per-tier overrides
/// (`tor`, `agg`, `core` in a fat tree; `tor`, `spine` in a leaf-spine), each a name or a table
/// like `[switch.lb]` itself.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SwitchLbSelection {
    /// Every switch without an override.
    pub default: SwitchLbConfig,
    /// ToR (leaf) switches.
    pub tor: Option<SwitchLbConfig>,
    /// Aggregation switches of a fat tree.
    pub agg: Option<SwitchLbConfig>,
    /// Core switches of a fat tree.
    pub core: Option<SwitchLbConfig>,
    /// Spine switches of a leaf-spine.
    pub spine: Option<SwitchLbConfig>,
}

/// The per-tier override keys of `[switch.lb]`, ToR first (a fat tree has `tor`, `agg`, `core`;
/// a leaf-spine `tor`, `spine`).
pub const TIER_KEYS: [&str; 4] = ["tor", "agg", "core", "spine"];

impl SwitchLbSelection {
    fn tiers(&self) -> [(&'static str, &Option<SwitchLbConfig>); 4] {
        [(TIER_KEYS[0], &self.tor), (TIER_KEYS[1], &self.agg), (TIER_KEYS[2], &self.core), (TIER_KEYS[3], &self.spine)]
    }

    /// Checks every selected scheme's parameters (ranges, then cross-checks); an error in a
    /// tier override names the tier (`switch.lb.tor.gap_us`).
    pub fn validate(&self) -> Result<()> {
        self.default.validate()?;
        for (tier, cfg) in self.tiers() {
            if let Some(c) = cfg {
                c.validate().map_err(|e| match e {
                    Error::Invalid { key, message } => Error::Invalid { key: key.replacen("switch.lb", &format!("switch.lb.{tier}"), 1), message },
                    other => other,
                })?;
            }
        }
        Ok(())
    }

    /// The scheme of each switch tier, indexed ToR, aggregation (a leaf-spine's spine), core,
    /// after [`SwitchLbSelection::validate`]; an override for a tier `fabric` lacks is an error
    /// naming the key and the allowed ones.
    pub fn per_tier(&self, fabric: &Fabric) -> Result<[&SwitchLbConfig; 3]> {
        self.validate()?;
        let three_tier = fabric.three_tier;
        let (allowed, present): (&str, &[&str]) = if three_tier { ("`tor`, `agg`, `core`", &["tor", "agg", "core"]) } else { ("`tor`, `spine`", &["tor", "spine"]) };
        for (key, cfg) in self.tiers() {
            if cfg.is_some() && !present.contains(&key) {
                let kind = if three_tier { "a fat tree" } else { "a leaf-spine" };
                return Err(Error::invalid(format!("switch.lb.{key}"), format!("{kind} has no `{key}` tier; allowed tier keys: {allowed}")));
            }
        }
        let upper = if three_tier { &self.agg } else { &self.spine };
        let d = &self.default;
        let per_tier = [self.tor.as_ref().unwrap_or(d), upper.as_ref().unwrap_or(d), self.core.as_ref().unwrap_or(d)];
        self.check_conga(fabric, three_tier, &per_tier)?;
        Ok(per_tier)
    }

    /// `conga` models a 2-tier leaf-spine whose spines raise CE (seqbalance §2.5.3: the paper
    /// leaves CONGA out of its 3-tier runs, as CONGA targets 2-tier fabrics).
    fn check_conga(&self, fabric: &Fabric, three_tier: bool, per_tier: &[&SwitchLbConfig; 3]) -> Result<()> {
        let is_conga = |c: &SwitchLbConfig| matches!(c, SwitchLbConfig::Conga(_));
        if three_tier && per_tier.iter().any(|c| is_conga(c)) {
            let key = match self.tiers().iter().find(|(_, c)| c.as_ref().is_some_and(is_conga)) {
                Some((tier, _)) if !is_conga(&self.default) => format!("switch.lb.{tier}"),
                _ => "switch.lb".to_string(),
            };
            let others = SwitchLbConfig::REGISTRY.iter().filter(|r| r.name != conga::NAME).map(|r| format!("`{}`", r.name)).collect::<Vec<_>>().join(", ");
            return Err(Error::invalid(key, format!("`conga` models a 2-tier leaf-spine only (this is a fat tree); allowed here: {others}")));
        }
        // Both tiers or neither: CONGA's spines raise CE, and a CONGA spine under another
        // scheme's ToRs would read their path tags as CONGA words.
        if is_conga(per_tier[0]) != is_conga(per_tier[1]) {
            let (key, other) = if is_conga(per_tier[0]) { ("spine", per_tier[1]) } else { ("tor", per_tier[0]) };
            return Err(Error::invalid(format!("switch.lb.{key}"), format!("`{}`: `conga` runs on both tiers of a leaf-spine or neither; allowed: `conga`", other.name())));
        }
        let uplinks = |node: usize| fabric.ports_of(NodeId(node as u32)).iter().filter(|&&p| fabric.tier[fabric.ports[p.idx()].peer.idx()] == Tier::Agg).count();
        let most = (0..fabric.tier.len()).filter(|&n| fabric.tier[n] == Tier::Tor).map(uplinks).max().unwrap_or(0);
        if is_conga(per_tier[0]) && most > conga::MAX_UPLINKS {
            return Err(Error::invalid("switch.lb", format!("`conga` tags at most {} uplinks per leaf; this leaf-spine has {most}", conga::MAX_UPLINKS)));
        }
        Ok(())
    }

    /// Refuses a selection with `ns3_ecmp` that the workload's ns-3 names (`ns3`) cannot serve
    /// ([`ns3_ecmp::check`]).
    pub fn check_ns3_names(&self, fabric: &Fabric, ns3: Option<&ns3_ecmp::Ns3Naming>) -> Result<()> {
        let hashes = |c: &&SwitchLbConfig| matches!(c, SwitchLbConfig::Ns3Ecmp(_)) || matches!(c, SwitchLbConfig::Drill(p) if p.control == drill::Control::Ns3Ecmp);
        if self.per_tier(fabric)?.iter().any(hashes) {
            ns3_ecmp::check(ns3, fabric)?;
        }
        Ok(())
    }

    /// Builds one selector per switch of `fabric` (switch `s` is node `fabric.hosts + s`);
    /// `ns3` names the nodes and connections for `ns3_ecmp`.
    pub fn build(&self, fabric: &Fabric, seed: u64, ns3: Option<&std::sync::Arc<ns3_ecmp::Ns3Naming>>) -> Result<Vec<AnySwitchLb>> {
        let per_tier = self.per_tier(fabric)?;
        // A server's scale-up switch only delivers to the GPUs below it: no choice to make, and
        // no scheme of the scale-out fabric (a leaf's tagging or reordering) belongs there.
        let scale_up = SwitchLbConfig::Ecmp(Default::default());
        Ok((0..fabric.switches())
            .map(|s| {
                let tier = fabric.tier[(fabric.hosts + s) as usize];
                let cfg = match tier {
                    Tier::ScaleUp => &scale_up,
                    Tier::Tor | Tier::Host => per_tier[0],
                    Tier::Agg => per_tier[1],
                    Tier::Core => per_tier[2],
                };
                cfg.build(&mut SwitchBuild { seed, switch: s, tier, node: NodeId(fabric.hosts + s), ns3: ns3.cloned() })
            })
            .collect())
    }

    /// Whether this is the default (ECMP everywhere), which resolved scenarios leave out.
    pub fn is_default(&self) -> bool {
        *self == SwitchLbSelection::default()
    }
}

/// A scheme written as a name (`"random"`) or a table (`{ name = "random", ... }`).
fn as_table<E: serde::de::Error>(key: &str, v: toml::Value) -> std::result::Result<toml::Table, E> {
    match v {
        toml::Value::String(name) => Ok(toml::Table::from_iter([("name".to_string(), toml::Value::String(name))])),
        toml::Value::Table(t) => Ok(t),
        other => Err(E::custom(format!("{key}must be a scheme name or a table with `name`, found {}", other.type_str()))),
    }
}

impl<'de> Deserialize<'de> for SwitchLbSelection {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        use serde::de::Error as _;
        let mut table = as_table::<D::Error>("", toml::Value::deserialize(d)?)?;
        let mut tier = |key: &str| -> std::result::Result<Option<SwitchLbConfig>, D::Error> {
            let Some(v) = table.remove(key) else { return Ok(None) };
            let t = as_table::<D::Error>(&format!("`{key}`: "), v)?;
            SwitchLbConfig::deserialize(toml::Value::Table(t)).map(Some).map_err(|e| D::Error::custom(format!("`{key}`: {e}")))
        };
        let (tor, agg, core, spine) = (tier(TIER_KEYS[0])?, tier(TIER_KEYS[1])?, tier(TIER_KEYS[2])?, tier(TIER_KEYS[3])?);
        // `--set switch.lb.tor=random` alone leaves no `name`: the default stays ECMP.
        let default = if table.is_empty() { SwitchLbConfig::default() } else { SwitchLbConfig::deserialize(toml::Value::Table(table)).map_err(D::Error::custom)? };
        Ok(SwitchLbSelection { default, tor, agg, core, spine })
    }
}

impl Serialize for SwitchLbSelection {
    fn serialize<S: Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        use serde::ser::Error as _;
        let mut t = match toml::Value::try_from(&self.default).map_err(S::Error::custom)? {
            toml::Value::Table(t) => t,
            _ => toml::Table::new(),
        };
        for (key, cfg) in self.tiers() {
            if let Some(c) = cfg {
                t.insert(key.to_string(), toml::Value::try_from(c).map_err(S::Error::custom)?);
            }
        }
        t.serialize(s)
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::units::Bytes;

    /// `n` idle candidate ports 0..n and their state.
    pub(crate) fn idle_ports(n: u32) -> (Vec<PortId>, Vec<PortState>) {
        ((0..n).map(PortId).collect(), idle_port_states(n))
    }

    /// The state of `n` idle ports.
    pub(crate) fn idle_port_states(n: u32) -> Vec<PortState> {
        let spec = crate::topo::PortSpec { owner: NodeId(0), peer: NodeId(1), reverse: PortId(0), rate: BitsPerSec::from_gbps(400.0), latency: Time::ZERO };
        (0..n).map(|i| PortState::new(&spec, false, true, Time::ZERO, Rng::stream(0, "port", i as u64))).collect()
    }

    #[test]
    fn levels_follow_the_five_ten_twenty_percent_steps() {
        // Buffer 100 000 B: level changes at 5 000, 10 000 and 20 000 B.
        let l: Vec<u8> = [0, 4_999, 5_000, 9_999, 10_000, 19_999, 20_000, 100_000].iter().map(|&b| quantised_level(b, 100_000)).collect();
        assert_eq!(l, [0, 0, 1, 1, 2, 2, 3, 3]);
        // No overflow with the effectively unlimited PFC buffer.
        assert_eq!(quantised_level(1 << 40, u64::MAX / 4), 0);
    }

    #[test]
    fn views_show_port_state() {
        let (ports, mut state) = idle_ports(3);
        state[1].data_bytes = Bytes(30_000);
        state[2].paused = true;
        state[2].up = false;
        let c = Candidates::new(&ports[1..], &state, &[100_000]);
        assert_eq!(c.len(), 2);
        let v: Vec<(PortId, u64, u8, bool, bool)> = c.iter().map(|p| (p.id(), p.queued_bytes(), p.level(), p.paused(), p.up())).collect();
        assert_eq!(v, [(PortId(1), 30_000, 3, false, true), (PortId(2), 0, 0, true, false)]);
    }

    fn parse(toml_text: &str) -> std::result::Result<SwitchLbSelection, String> {
        let v: toml::Table = toml_text.parse().unwrap();
        SwitchLbSelection::deserialize(toml::Value::Table(v)).map_err(|e| e.to_string())
    }

    #[test]
    fn selection_parses_names_tables_and_tiers() {
        assert_eq!(parse("").unwrap(), SwitchLbSelection::default());
        let s = parse("name = \"random\"\ntor = \"ecmp\"\n[core]\nname = \"random\"\n").unwrap();
        assert_eq!(s.default, SwitchLbConfig::Random(Default::default()));
        assert_eq!(s.tor, Some(SwitchLbConfig::Ecmp(Default::default())));
        assert_eq!(s.core, Some(SwitchLbConfig::Random(Default::default())));
        assert_eq!((s.agg.as_ref(), s.spine.as_ref()), (None, None));
        // A tier alone keeps the ECMP default.
        assert_eq!(parse("agg = \"random\"").unwrap().default, SwitchLbConfig::default());
        // Round trip through the resolved form.
        let back: toml::Table = toml::to_string(&s).unwrap().parse().unwrap();
        assert_eq!(SwitchLbSelection::deserialize(toml::Value::Table(back)).unwrap(), s);
        let e = parse("name = \"presto\"").unwrap_err();
        assert!(e.contains("unknown switch path selection `presto`") && e.contains("`ecmp`, `random`, `round_robin`"), "{e}");
        let e = parse("tor = \"rr\"").unwrap_err();
        assert!(e.contains("`tor`") && e.contains("allowed: `ecmp`, `random`"), "{e}");
        let e = parse("tor = 3").unwrap_err();
        assert!(e.contains("`tor`: must be a scheme name"), "{e}");
    }
}
