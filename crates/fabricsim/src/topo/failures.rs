//! Static link failures, chosen when the fabric is built (`[topology.failures]`): `tors` ToRs,
//! picked uniformly at random from the scenario seed, each lose `uplinks_per_tor` of their
//! uplinks, also picked uniformly at random. An uplink is a ToR-to-spine cable of a leaf-spine
//! (each parallel cable counts) or a ToR-to-aggregation cable of a fat tree.
//!
//! **Follows:** strack spec §4 (link failure model) and §5.2.2 "asymmetric (failure) networks"
//! (T-8K: 16 ToRs each losing 4 or 16 of their 64 uplinks).
//!
//! **Models:**
//! - `removed` (the spec's default): the cable carries nothing and the route table is computed
//!   without it, so every ECMP next-hop set (per switch, per destination ToR) holds only ports on
//!   surviving shortest paths. Removing every uplink of a ToR would cut its hosts off, so at most
//!   all but one may fail.
//! - `degraded` (the spec's alternative, csg-htsim's built-in failure): the cable runs at
//!   `degraded_rate_factor` × its rate in both directions while ECMP keeps hashing onto it.
//!
//! **Parameters:** `tors`, `uplinks_per_tor` (required), `model` (`removed`),
//! `degraded_rate_factor` (0.1, strack spec §4: "1/10 speed").
//!
//! Two more kinds fail pod–core links of a fat tree instead (`kind`, paper §5.4; placement and
//! Eq. 2 in [`super::pod_faults`]): `partial_lag` (`f` links per pod at `(1 − p)` of their
//! rate, the paper's LAG-member loss) and `flaky` (`f` links per pod with loss bursts,
//! [`crate::net::flaky`]). Slowed cables (`partial_lag`, `degraded`) may be slowed in one
//! `direction` only and may `scale_queue` (buffer and ECN thresholds) with the rate, as htsim's
//! `-failed` does; by default both directions slow and the queue is kept (paper §4.2 gives
//! every port the same `Q`).
//!
//! Two more kinds make the cables named in `links` lossy, on any topology (issue 45 §3: faults
//! anywhere): `loss` (every packet lost with probability `loss_rate`) and `bursty_loss` (a
//! Gilbert–Elliott chain per direction, [`crate::net::wire_loss`]); `flaky` with `links` puts
//! the paper's loss bursts on the named cables instead of `f` per pod. `links` takes cable
//! names and patterns (`"tor*-spine1"`, [`super::names`]) for every kind that takes it.
//!
//! **Seeds:** every random choice here (which ToRs and uplinks, `placement = "random"`) and the
//! flaky links' burst processes draw from the failures' own `seed` when it is given, so that
//! `--seed` moves the workload while the failed links stay put; unset, they draw from the master
//! seed exactly as before the key existed (every earlier output stays as it was).
//! `enabled = false` switches the section off whatever else it says (`--set
//! topology.failures.enabled=false`): the scenario then runs, and resolves, as if it were absent.
//!
//! The fabric keeps the cables' nominal rates in [`super::PortSpec`] (so base RTTs and buffer
//! sizes are those of the healthy fabric); the engine applies the failures to its port state (`net::port::apply_failures`).

use super::pod_faults::{place, pod_uplinks, Placement, PodBottleneck};
use super::names::{example_link, is_glob, ports_matching};
use super::{Fabric, Tier};
use crate::error::{Error, Result};
use crate::ids::{NodeId, PortId};
use crate::rng::Rng;
use crate::units::{show_num, BitsPerSec, Time};
use serde::{Deserialize, Serialize};

/// Default rate factor of a degraded cable (strack spec §4: 1/10 speed).
pub const DEFAULT_DEGRADED_RATE_FACTOR: f64 = 0.1;

/// How a failed cable behaves.
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum FailureModel {
    /// Carries nothing; routes avoid it.
    #[default]
    Removed,
    /// Runs at a fraction of its rate; routes still use it.
    Degraded,
}

/// What `[topology.failures]` fails.
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum FailureKind {
    /// `tors` ToRs lose `uplinks_per_tor` uplinks each (`model` says how).
    #[default]
    TorUplinks,
    /// Paper §5.4: in every pod, `f` pod–core links run at `(1 − p)` of their rate.
    PartialLag,
    /// Paper §5.4: in every pod, `f` pod–core links lose every packet sent during random
    /// loss bursts (`net::flaky`); or, with `links`, the named cables.
    Flaky,
    /// The cables of `links` lose every packet with probability `loss_rate`
    /// (`net::wire_loss`, Bernoulli).
    Loss,
    /// The cables of `links` lose packets in bursts: a Gilbert–Elliott chain per direction
    /// (`net::wire_loss`).
    BurstyLoss,
}

/// Which directions of a failed cable are affected.
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum Direction {
    /// Both.
    #[default]
    Both,
    /// The lower node's port towards the upper one (ToR→aggregation/spine, aggregation→core).
    Up,
    /// The upper node's port back down (htsim's `-failed` slows the core→aggregation side).
    Down,
}

impl Direction {
    /// Which of a cable's ports (`[up, down]`) this direction names.
    fn indices(self) -> &'static [usize] {
        match self {
            Direction::Both => &[0, 1],
            Direction::Up => &[0],
            Direction::Down => &[1],
        }
    }
}

/// `[topology.failures]`.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FailuresConfig {
    /// `false`: the section is switched off, as if absent (its other keys are not checked);
    /// default on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub enabled: Option<bool>,
    /// `"tor_uplinks"` (default), `"partial_lag"` or `"flaky"`.
    #[serde(default, skip_serializing_if = "crate::scheme::is_default")]
    pub kind: FailureKind,
    /// The seed of every random choice of the failures (and of flaky links' bursts); unset: the
    /// scenario's master seed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seed: Option<u64>,
    /// `tor_uplinks`: number of ToRs that lose uplinks.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tors: Option<u32>,
    /// `tor_uplinks`: uplinks each of those ToRs loses.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub uplinks_per_tor: Option<u32>,
    /// `tor_uplinks`: the failed cables by name (`"tor0-spine1"`, `"tor3-agg0#1"` for the
    /// second of parallel cables) instead of `tors` and `uplinks_per_tor` drawn at random.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub links: Option<Vec<String>>,
    /// `tor_uplinks`: `"removed"` or `"degraded"`.
    #[serde(default)]
    pub model: FailureModel,
    /// `degraded` only: rate of a failed cable as a fraction of its rate (default 0.1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub degraded_rate_factor: Option<f64>,
    /// `partial_lag`, `flaky`: failed pod–core links per pod (`flaky`: default 2).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub f: Option<u32>,
    /// `partial_lag`: fraction of each failed link's rate lost, in (0, 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub p: Option<f64>,
    /// `partial_lag`, `flaky`: `"packed"` (default), `"spread"` or `"random"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub placement: Option<Placement>,
    /// Slowed ports (`partial_lag`, `degraded`): scale the data buffer and ECN thresholds with
    /// the rate (default false: every port keeps its queue, paper §4.2's one `Q` per port).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scale_queue: Option<bool>,
    /// Slowed ports (`partial_lag`, `degraded`): `"both"` (default), `"up"` or `"down"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub direction: Option<Direction>,
    /// `flaky`: mean gap between loss-burst starts in µs (default 100, paper §5.4).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub burst_gap_us: Option<f64>,
    /// `flaky`: mean loss-burst length in µs (default 10, paper §5.4).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub burst_len_us: Option<f64>,
    /// `loss`: the probability that a packet is lost (required); `bursty_loss`: that a packet
    /// is lost in the bad state (default 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub loss_rate: Option<f64>,
    /// `bursty_loss`: the probability that a packet is lost in the good state (default 0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub good_loss_rate: Option<f64>,
    /// `bursty_loss`: mean packets per bad period (required, ≥ 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mean_burst_pkts: Option<f64>,
    /// `bursty_loss`: mean packets per good period (required, ≥ 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mean_gap_pkts: Option<f64>,
}

/// `[topology.failures]` as written: one table, or an array of tables (`[[topology.failures]]`),
/// each an independent set of faults with its own kind and seed, applied in order.
#[derive(Clone, Debug)]
pub enum FailureEntries {
    /// `[topology.failures]`.
    One(FailuresConfig),
    /// `[[topology.failures]]`.
    Many(Vec<FailuresConfig>),
}

impl FailureEntries {
    /// The entries that are on, each with the key it is written under (`topology.failures`,
    /// or `topology.failures[i]` in an array), in order.
    pub fn active(&self) -> Vec<(String, &FailuresConfig)> {
        match self {
            FailureEntries::One(f) => vec![(KEY.to_string(), f)],
            FailureEntries::Many(v) => v.iter().enumerate().map(|(i, f)| (format!("{KEY}[{i}]"), f)).collect(),
        }
        .into_iter()
        .filter(|(_, f)| f.is_on())
        .collect()
    }
}

impl Serialize for FailureEntries {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        match self {
            FailureEntries::One(f) => f.serialize(s),
            FailureEntries::Many(v) => v.serialize(s),
        }
    }
}

impl<'de> Deserialize<'de> for FailureEntries {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        struct Entries;
        impl<'de> serde::de::Visitor<'de> for Entries {
            type Value = FailureEntries;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a table [topology.failures] or an array of tables [[topology.failures]]")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(self, map: A) -> std::result::Result<Self::Value, A::Error> {
                FailuresConfig::deserialize(serde::de::value::MapAccessDeserializer::new(map)).map(FailureEntries::One)
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(self, seq: A) -> std::result::Result<Self::Value, A::Error> {
                Vec::<FailuresConfig>::deserialize(serde::de::value::SeqAccessDeserializer::new(seq)).map(FailureEntries::Many)
            }
        }
        d.deserialize_any(Entries)
    }
}

/// Default failed links per pod of `kind = "flaky"` (paper §5.4: two flaky links per pod).
pub const DEFAULT_FLAKY_LINKS: u32 = 2;
/// Default mean gap between burst starts (paper §5.4: 100 µs).
pub const DEFAULT_BURST_GAP_US: f64 = 100.0;
/// Default mean burst length (paper §5.4: 10 µs).
pub const DEFAULT_BURST_LEN_US: f64 = 10.0;

/// Longest mean burst of a flaky link, in mean gaps between burst starts. Bursts merge while
/// they overlap, so one merged burst spans about e^(len / gap) bursts: at 10 that is 22,026
/// draws and a link lossy 99.995 % of the time; at 20 (found by an outside campaign) it is
/// 5·10⁸ draws before the first packet can be sent, a hang.
pub const MAX_BURST_LEN_PER_GAP: f64 = 10.0;

/// Loss-burst process of a flaky link (`crate::net::flaky`), in picoseconds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Bursts {
    /// Mean time between burst starts.
    pub mean_gap: Time,
    /// Mean burst length.
    pub mean_len: Time,
}

impl Bursts {
    /// Long-run fraction of time inside a (merged) burst: `1 − e^(−mean_len/mean_gap)`.
    pub fn loss_fraction(&self) -> f64 {
        1.0 - (-(self.mean_len.0 as f64) / self.mean_gap.0 as f64).exp()
    }
}

/// A packet-counted loss channel, as the failures resolved it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum LossChannel {
    /// Every packet lost with probability `p`.
    Bernoulli {
        /// Loss probability, in (0, 1).
        p: f64,
    },
    /// The Gilbert–Elliott chain.
    GilbertElliott {
        /// Loss probability in the bad state.
        loss_bad: f64,
        /// Loss probability in the good state.
        loss_good: f64,
        /// Mean packets per bad period (≥ 1).
        mean_burst_pkts: f64,
        /// Mean packets per good period (≥ 1).
        mean_gap_pkts: f64,
    },
}

impl LossChannel {
    /// The long-run fraction of packets lost.
    pub fn loss_rate(&self) -> f64 {
        match *self {
            LossChannel::Bernoulli { p } => p,
            LossChannel::GilbertElliott { loss_bad, loss_good, mean_burst_pkts: b, mean_gap_pkts: g } => (b * loss_bad + g * loss_good) / (b + g),
        }
    }
}

/// How a failed cable loses packets on the wire.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum LinkLoss {
    /// Loss bursts in time (`flaky`, `crate::net::flaky`).
    Bursts(Bursts),
    /// A packet-counted channel (`loss`, `bursty_loss`, `crate::net::wire_loss`).
    Channel(LossChannel),
}

/// One failed cable.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FailedLink {
    /// The lower node's port onto the cable (the uplink direction).
    pub up: PortId,
    /// The far end's port back down.
    pub down: PortId,
    /// `None`: removed; `Some(r)`: runs at rate `r` (for a flaky link, its own rate).
    pub rate: Option<BitsPerSec>,
    /// The directions slowed or flaky.
    pub direction: Direction,
    /// Slowed ports scale their queue with the rate.
    pub scale_queue: bool,
    /// Flaky or lossy: how each affected direction loses packets on the wire.
    pub loss: Option<LinkLoss>,
    /// The seed of its loss processes' random streams: its failure entry's.
    pub seed: u64,
}

impl FailedLink {
    /// What happened to the cable, for `check` and the fabric's description.
    pub fn describe(&self) -> String {
        match (self.rate, self.loss) {
            (_, Some(LinkLoss::Bursts(b))) => format!("flaky (loss bursts every {} µs for {} µs on average)", b.mean_gap.0 as f64 / 1e6, b.mean_len.0 as f64 / 1e6),
            (_, Some(LinkLoss::Channel(c))) => format!("lossy ({} % of packets lost on the wire)", show_num(100.0 * c.loss_rate())),
            (None, _) => "removed".to_string(),
            (Some(r), _) => format!("degraded to {} Gb/s", r.gbps()),
        }
    }

    /// The affected ports of the cable.
    pub fn ports(&self) -> impl Iterator<Item = PortId> + '_ {
        let both = [self.up, self.down];
        self.direction.indices().iter().map(move |&i| both[i])
    }
}

/// The build-time failures of a fabric, with Eq. 2 for pod–core rate faults.
#[derive(Clone, Debug, Default)]
pub struct Chosen {
    /// The failed cables.
    pub links: Vec<FailedLink>,
    /// `partial_lag`: Eq. 2 of the paper for its (f, p).
    pub bottleneck: Option<PodBottleneck>,
    /// Pod–core links chosen per pod (`partial_lag`, `flaky` without `links`).
    pub pod_links: bool,
}

const KEY: &str = "topology.failures";

/// Appended to range errors of the counts, where 0 is what a user trying to switch the failures
/// off would write.
const SWITCH_OFF: &str = "to switch the failures off, set topology.failures.enabled = false";

impl FailuresConfig {
    /// Whether the section is on (`enabled` unset or true).
    pub fn is_on(&self) -> bool {
        self.enabled != Some(false)
    }

    /// Picks the failed cables of `fabric` (random choices from the `failures` stream of `seed`,
    /// the failures' own seed where given: see [`crate::scenario::Scenario::failure_seed`]).
    pub fn choose(&self, fabric: &Fabric, seed: u64) -> Result<Chosen> {
        let only = |set: bool, name: &str, kinds: &str| -> Result<()> {
            if set {
                return Err(Error::invalid(format!("{KEY}.{name}"), format!("only allowed with kind = {kinds}")));
            }
            Ok(())
        };
        let k = self.kind;
        only(k != FailureKind::TorUplinks && (self.tors.is_some() || self.uplinks_per_tor.is_some()), if self.tors.is_some() { "tors" } else { "uplinks_per_tor" }, "\"tor_uplinks\"")?;
        let lossy = matches!(k, FailureKind::Loss | FailureKind::BurstyLoss);
        only(!lossy && self.loss_rate.is_some(), "loss_rate", "\"loss\" or \"bursty_loss\"")?;
        for (set, name) in [(self.good_loss_rate.is_some(), "good_loss_rate"), (self.mean_burst_pkts.is_some(), "mean_burst_pkts"), (self.mean_gap_pkts.is_some(), "mean_gap_pkts")] {
            only(k != FailureKind::BurstyLoss && set, name, "\"bursty_loss\"")?;
        }
        only(self.links.is_some() && (self.f.is_some() || self.placement.is_some()), if self.f.is_some() { "f" } else { "placement" }, "pod–core faults chosen per pod, not with `links`")?;
        only(k != FailureKind::TorUplinks && (self.model != FailureModel::Removed || self.degraded_rate_factor.is_some()), if self.degraded_rate_factor.is_some() { "degraded_rate_factor" } else { "model" }, "\"tor_uplinks\"")?;
        only(k == FailureKind::TorUplinks && self.f.is_some(), "f", "\"partial_lag\" or \"flaky\"")?;
        only(k == FailureKind::TorUplinks && self.placement.is_some(), "placement", "\"partial_lag\" or \"flaky\"")?;
        only(k != FailureKind::PartialLag && self.p.is_some(), "p", "\"partial_lag\"")?;
        only(k != FailureKind::Flaky && self.burst_gap_us.is_some(), "burst_gap_us", "\"flaky\"")?;
        only(k != FailureKind::Flaky && self.burst_len_us.is_some(), "burst_len_us", "\"flaky\"")?;
        let slows = k == FailureKind::PartialLag || self.model == FailureModel::Degraded;
        only(!slows && self.scale_queue.is_some(), "scale_queue", "\"partial_lag\", or \"tor_uplinks\" with model = \"degraded\"")?;
        only(!slows && !lossy && k != FailureKind::Flaky && self.direction.is_some(), "direction", "\"partial_lag\", \"flaky\", \"loss\", \"bursty_loss\", or \"tor_uplinks\" with model = \"degraded\"")?;
        let mut chosen = self.choose_kind(fabric, seed)?;
        for l in &mut chosen.links {
            l.seed = seed;
        }
        Ok(chosen)
    }

    /// The cables of the entry's kind, checked.
    fn choose_kind(&self, fabric: &Fabric, seed: u64) -> Result<Chosen> {
        match self.kind {
            FailureKind::TorUplinks => Ok(Chosen { links: self.choose_tor_uplinks(fabric, seed)?, ..Chosen::default() }),
            FailureKind::Flaky if self.links.is_some() => {
                let bursts = LinkLoss::Bursts(self.bursts()?);
                Ok(Chosen { links: self.named(fabric, |up| Ok(Some(fabric.ports[up.idx()].rate)), Some(bursts))?, ..Chosen::default() })
            }
            FailureKind::PartialLag if self.links.is_some() => {
                // The LAG-member loss on named cables: each runs at (1 − p) of its rate (Eq. 2
                // is about f links in every pod, so there is none to report).
                let p = self.lag_fraction()?;
                let links = self.named(fabric, |up| scaled(fabric.ports[up.idx()].rate, 1.0 - p, &format!("{KEY}.p")).map(Some), None)?;
                Ok(Chosen { links, ..Chosen::default() })
            }
            FailureKind::PartialLag | FailureKind::Flaky => self.choose_pod_links(fabric, seed),
            FailureKind::Loss | FailureKind::BurstyLoss => {
                let channel = LinkLoss::Channel(self.channel()?);
                Ok(Chosen { links: self.named(fabric, |up| Ok(Some(fabric.ports[up.idx()].rate)), Some(channel))?, ..Chosen::default() })
            }
        }
    }

    /// `partial_lag` and `flaky`: `f` pod–core links per pod.
    fn choose_pod_links(&self, fabric: &Fabric, seed: u64) -> Result<Chosen> {
        let pods = pod_uplinks(fabric, &format!("{KEY}.kind"))?;
        let u = pods[0].len() as u32;
        let f = match (self.kind, self.f) {
            (_, Some(f)) => f,
            (FailureKind::Flaky, None) => DEFAULT_FLAKY_LINKS,
            _ => return Err(Error::invalid(format!("{KEY}.f"), format!("missing: kind = \"partial_lag\" needs f (failed uplinks per pod, 1..={u}) and p")))
        };
        let mut bottleneck = None;
        let mut flaky = None;
        let mut rate_factor = None;
        if self.kind == FailureKind::PartialLag {
            let p = self.p.ok_or_else(|| Error::invalid(format!("{KEY}.p"), "missing: kind = \"partial_lag\" needs p (fraction of the rate lost, in (0, 1))"))?;
            if f == u && p >= 1.0 {
                // Before the range checks, so that the reason is the one that matters.
                PodBottleneck::of(fabric, &pods, f, p, &format!("{KEY}.p"))?;
            }
            check_f(f, u)?;
            self.lag_fraction()?;
            bottleneck = Some(PodBottleneck::of(fabric, &pods, f, p, &format!("{KEY}.p"))?);
            rate_factor = Some(1.0 - p);
        } else {
            check_f(f, u)?;
            flaky = Some(self.bursts()?);
        }
        let links = place(fabric, &pods, f, self.placement.unwrap_or_default(), seed)
            .into_iter()
            .map(|p| {
                let spec = &fabric.ports[p.idx()];
                let rate = match rate_factor {
                    Some(x) => scaled(spec.rate, x, &format!("{KEY}.p"))?,
                    None => spec.rate,
                };
                Ok(self.failed(p, spec.reverse, Some(rate), flaky.map(LinkLoss::Bursts)))
            })
            .collect::<Result<_>>()?;
        Ok(Chosen { links, bottleneck, pod_links: true })
    }

    /// The failed cable `up`/`down` at `rate` (`None`: removed) losing packets as `loss` says,
    /// with this entry's direction and queue scaling (its seed is set by [`Self::choose`]).
    fn failed(&self, up: PortId, down: PortId, rate: Option<BitsPerSec>, loss: Option<LinkLoss>) -> FailedLink {
        FailedLink { up, down, rate, direction: self.direction.unwrap_or_default(), scale_queue: self.scale_queue.unwrap_or(false), loss, seed: 0 }
    }

    /// The cables of `links` (names or patterns), each at the rate `rate(up port)` gives and
    /// losing packets as `loss` says in the affected directions.
    fn named(&self, fabric: &Fabric, rate: impl Fn(PortId) -> Result<Option<BitsPerSec>>, loss: Option<LinkLoss>) -> Result<Vec<FailedLink>> {
        let names = self.links.as_deref().ok_or_else(|| Error::invalid(format!("{KEY}.links"), "missing: name the cables, e.g. links = [\"tor0-spine1\"] or a pattern \"tor*-spine1\""))?;
        self.cables(fabric, names)?.into_iter().map(|(_, up, down)| Ok(self.failed(up, down, rate(up)?, loss))).collect()
    }

    /// `partial_lag`: `p`, the fraction of each failed link's rate lost, in (0, 1).
    fn lag_fraction(&self) -> Result<f64> {
        let p = self.p.ok_or_else(|| Error::invalid(format!("{KEY}.p"), "missing: kind = \"partial_lag\" needs p (fraction of the rate lost, in (0, 1))"))?;
        if !(p > 0.0 && p < 1.0) {
            return Err(Error::invalid(format!("{KEY}.p"), format!("{p}: the fraction of the rate lost must lie strictly between 0 and 1 (a whole loss is kind = \"tor_uplinks\" removing the link)")));
        }
        Ok(p)
    }

    /// `flaky`: the burst process (the paper's 100 µs / 10 µs by default).
    fn bursts(&self) -> Result<Bursts> {
        let gap = burst_mean(&format!("{KEY}.burst_gap_us"), self.burst_gap_us.unwrap_or(DEFAULT_BURST_GAP_US))?;
        let len = burst_mean(&format!("{KEY}.burst_len_us"), self.burst_len_us.unwrap_or(DEFAULT_BURST_LEN_US))?;
        let ratio = len.0 as f64 / gap.0 as f64;
        if ratio > MAX_BURST_LEN_PER_GAP {
            return Err(Error::invalid(
                format!("{KEY}.burst_len_us"),
                format!(
                    "{}: {} times the mean gap between bursts ({} µs); allowed at most {MAX_BURST_LEN_PER_GAP} times, where the link is lossy 99.995 % of the time: overlapping bursts merge, and a merged burst spans about e^(len / gap) bursts, so a longer one would take ages to draw; a link that is always down is a `down` link event",
                    show_num(len.0 as f64 / 1e6),
                    show_num(ratio),
                    show_num(gap.0 as f64 / 1e6),
                ),
            ));
        }
        Ok(Bursts { mean_gap: gap, mean_len: len })
    }

    /// `loss` and `bursty_loss`: the channel, its probabilities in [0, 1] and its mean
    /// periods at least one packet.
    fn channel(&self) -> Result<LossChannel> {
        let probability = |name: &str, v: Option<f64>, default: Option<f64>| -> Result<f64> {
            let key = format!("{KEY}.{name}");
            let v = v.or(default).ok_or_else(|| Error::invalid(&key, format!("missing: kind = \"{}\" needs it (a probability)", if self.kind == FailureKind::Loss { "loss" } else { "bursty_loss" })))?;
            if !(0.0..=1.0).contains(&v) {
                return Err(Error::invalid(key, format!("{}: a probability, allowed 0..=1", show_num(v))));
            }
            Ok(v)
        };
        let period = |name: &str, v: Option<f64>| -> Result<f64> {
            let key = format!("{KEY}.{name}");
            let v = v.ok_or_else(|| Error::invalid(&key, "missing: kind = \"bursty_loss\" needs mean_burst_pkts and mean_gap_pkts (mean packets per bad and good period)"))?;
            if !(1.0..=1e12).contains(&v) {
                return Err(Error::invalid(key, format!("{}: a mean number of packets, allowed 1..=1e12 (a state lasts at least one packet)", show_num(v))));
            }
            Ok(v)
        };
        Ok(match self.kind {
            FailureKind::Loss => {
                let p = probability("loss_rate", self.loss_rate, None)?;
                if p == 0.0 || p == 1.0 {
                    let why = if p == 0.0 { "loses nothing (to switch the failures off, set topology.failures.enabled = false)" } else { "loses everything: a cable that carries nothing is kind = \"tor_uplinks\" with `links` (removed), or a `down` link event" };
                    return Err(Error::invalid(format!("{KEY}.loss_rate"), format!("{p}: {why}; allowed: strictly between 0 and 1")));
                }
                LossChannel::Bernoulli { p }
            }
            _ => {
                let (loss_bad, loss_good) = (probability("loss_rate", self.loss_rate, Some(1.0))?, probability("good_loss_rate", self.good_loss_rate, Some(0.0))?);
                if loss_bad <= loss_good {
                    return Err(Error::invalid(format!("{KEY}.loss_rate"), format!("{}: the bad state must lose more than the good one (good_loss_rate {})", show_num(loss_bad), show_num(loss_good))));
                }
                LossChannel::GilbertElliott { loss_bad, loss_good, mean_burst_pkts: period("mean_burst_pkts", self.mean_burst_pkts)?, mean_gap_pkts: period("mean_gap_pkts", self.mean_gap_pkts)? }
            }
        })
    }

    /// The cables `names` give, each as (the index of the name, its lower node's port, the
    /// other), in the order named; a pattern (`*`, `?`) names every cable one of whose
    /// directions it matches.
    fn cables(&self, fabric: &Fabric, names: &[String]) -> Result<Vec<(usize, PortId, PortId)>> {
        if names.is_empty() {
            return Err(Error::invalid(format!("{KEY}.links"), format!("empty: name at least one cable, e.g. \"{}\" ({SWITCH_OFF})", example_link(fabric))));
        }
        // The uplink direction is the lower node's port.
        let lower = |p: PortId| fabric.tier[fabric.ports[p.idx()].owner.idx()];
        let oriented = |a: PortId, b: PortId| if lower(a) <= lower(b) { (a, b) } else { (b, a) };
        let mut out: Vec<(usize, PortId, PortId)> = Vec::new();
        // By the cable's lower port: a pattern may name thousands of cables.
        let mut listed = vec![false; fabric.ports.len()];
        for (i, name) in names.iter().enumerate() {
            let key = format!("{KEY}.links[{i}]");
            let found: Vec<(PortId, PortId)> = if is_glob(name) {
                let mut v: Vec<(PortId, PortId)> = ports_matching(fabric, name).map(|p| oriented(PortId(p), fabric.ports[p as usize].reverse)).collect();
                v.sort_unstable();
                v.dedup();
                if v.is_empty() {
                    return Err(Error::invalid(key, format!("`{name}`: the pattern matches no cable of this fabric (cables are named NODE-NODE, e.g. \"{}\")", example_link(fabric))));
                }
                v
            } else {
                let [a, b] = fabric.cable_named(&key, name, &example_link(fabric))?;
                vec![oriented(a, b)]
            };
            for c in found {
                if std::mem::replace(&mut listed[c.0.idx()], true) {
                    return Err(Error::invalid(key, format!("`{name}`: the cable {}-{} is listed twice", fabric.node_name(fabric.ports[c.0.idx()].owner), fabric.node_name(fabric.ports[c.1.idx()].owner))));
                }
                out.push((i, c.0, c.1));
            }
        }
        Ok(out)
    }

    /// The rate factor of a slowed cable (`None`: removed).
    fn rate_factor(&self) -> Result<Option<f64>> {
        Ok(match (self.model, self.degraded_rate_factor) {
            (FailureModel::Removed, Some(_)) => {
                return Err(Error::invalid(format!("{KEY}.degraded_rate_factor"), "only allowed with model = \"degraded\""))
            }
            (FailureModel::Removed, None) => None,
            (FailureModel::Degraded, f) => {
                let f = f.unwrap_or(DEFAULT_DEGRADED_RATE_FACTOR);
                if !(f > 0.0 && f < 1.0) {
                    return Err(Error::invalid(format!("{KEY}.degraded_rate_factor"), format!("{f}: must be a fraction strictly between 0 and 1")));
                }
                Some(f)
            }
        })
    }

    /// `tor_uplinks` with `links`: the named cables.
    fn named_links(&self, fabric: &Fabric, names: &[String], factor: Option<f64>) -> Result<Vec<FailedLink>> {
        if let Some(k) = [("tors", self.tors.is_some()), ("uplinks_per_tor", self.uplinks_per_tor.is_some())].iter().find(|k| k.1) {
            return Err(Error::invalid(format!("{KEY}.{}", k.0), "not allowed with `links` (the cables are named, not drawn)"));
        }
        let mut out: Vec<FailedLink> = Vec::with_capacity(names.len());
        // With several NIC ports (planes, dual-ToR) a GPU keeps its other ports, and its
        // connections are striped over the ports that still join them: a NIC port or a leaf
        // (of a plane, or of a pair) may be cut off.
        let planes = fabric.nic_ports() > 1;
        for (i, up, down) in self.cables(fabric, names)? {
            if fabric.tier[fabric.ports[up.idx()].owner.idx()] == Tier::Host && factor.is_none() && !planes {
                return Err(Error::invalid(format!("{KEY}.links[{i}]"), format!("`{}`: removing a host's only cable cuts it off the fabric; use model = \"degraded\"", names[i])));
            }
            out.push(self.failed(up, down, factor.map(|f| scaled(fabric.ports[up.idx()].rate, f, &format!("{KEY}.degraded_rate_factor"))).transpose()?, None));
        }
        if factor.is_none() && !planes {
            // A switch whose every uplink is removed is cut off from the rest of the fabric.
            for l in &out {
                let owner = fabric.ports[l.up.idx()].owner;
                let up_ports = fabric.ports_of(owner).iter().filter(|&&p| fabric.tier[fabric.ports[p.idx()].peer.idx()] > fabric.tier[owner.idx()]);
                if up_ports.clone().all(|&p| out.iter().any(|m| m.up == p)) {
                    return Err(Error::invalid(format!("{KEY}.links"), format!("removing every uplink of `{}` would cut it off the fabric (a partition)", fabric.node_name(owner))));
                }
            }
        }
        Ok(out)
    }

    /// `tor_uplinks`: the strack spec's ToR uplink failures.
    fn choose_tor_uplinks(&self, fabric: &Fabric, seed: u64) -> Result<Vec<FailedLink>> {
        let factor = self.rate_factor()?;
        if let Some(names) = &self.links {
            return self.named_links(fabric, names, factor);
        }
        let need = |v: Option<u32>, name: &str| v.ok_or_else(|| Error::invalid(format!("{KEY}.{name}"), "missing: kind = \"tor_uplinks\" (the default) needs `tors` and `uplinks_per_tor`, or `links`"));
        let (n_tors, per_tor) = (need(self.tors, "tors")?, need(self.uplinks_per_tor, "uplinks_per_tor")?);
        let tors: Vec<u32> = (fabric.hosts..fabric.tier.len() as u32).filter(|&n| fabric.tier[n as usize] == Tier::Tor).collect();
        if n_tors == 0 || n_tors as usize > tors.len() {
            return Err(Error::invalid(format!("{KEY}.tors"), format!("{}: the fabric has {} ToRs; allowed: 1..={} ({SWITCH_OFF})", n_tors, tors.len(), tors.len())));
        }
        let uplinks = |t: u32| -> Vec<PortId> {
            fabric.ports_of(NodeId(t)).iter().copied().filter(|&p| fabric.tier[fabric.ports[p.idx()].peer.idx()] != Tier::Host).collect()
        };
        // Every ToR of the supported fabrics has the same number of uplinks.
        let n_up = uplinks(tors[0]).len() as u32;
        let max = match self.model {
            FailureModel::Removed => n_up.saturating_sub(1),
            FailureModel::Degraded => n_up,
        };
        if per_tor == 0 || per_tor > max {
            let why = if per_tor == 0 {
                format!("no uplink fails ({SWITCH_OFF})")
            } else if self.model == FailureModel::Removed && per_tor == n_up {
                format!("removing all {n_up} uplinks of a ToR would cut its hosts off the fabric (a partition)")
            } else {
                format!("a ToR has {n_up} uplinks")
            };
            return Err(Error::invalid(
                format!("{KEY}.uplinks_per_tor"),
                format!("{}: {why}; allowed: 1..={max} with model = \"{}\"", per_tor, if self.model == FailureModel::Removed { "removed" } else { "degraded" }),
            ));
        }
        let mut rng = Rng::stream(seed, "failures", 0);
        let mut pick = tors;
        partial_shuffle(&mut rng, &mut pick, n_tors as usize);
        let mut chosen = pick[..n_tors as usize].to_vec();
        chosen.sort_unstable();
        let mut out = Vec::with_capacity((n_tors * per_tor) as usize);
        for t in chosen {
            let mut ups = uplinks(t);
            partial_shuffle(&mut rng, &mut ups, per_tor as usize);
            let mut failed = ups[..per_tor as usize].to_vec();
            failed.sort_unstable();
            for p in failed {
                let spec = &fabric.ports[p.idx()];
                let rate = factor.map(|f| scaled(spec.rate, f, &format!("{KEY}.degraded_rate_factor"))).transpose()?;
                out.push(self.failed(p, spec.reverse, rate, None));
            }
        }
        Ok(out)
    }
}

/// `rate × factor`; an error naming `key` (the factor's) when that leaves the allowed rates.
fn scaled(rate: BitsPerSec, factor: f64, key: &str) -> Result<BitsPerSec> {
    let r = BitsPerSec((rate.0 as f64 * factor).round() as u64);
    if !r.in_range() {
        return Err(Error::invalid(
            key,
            format!("{factor}: leaves {} Gb/s of a {} Gb/s link; allowed rates {}..={} Gb/s", r.gbps(), rate.gbps(), crate::units::MIN_RATE_GBPS, crate::units::MAX_RATE_GBPS),
        ));
    }
    Ok(r)
}

fn check_f(f: u32, u: u32) -> Result<()> {
    if f == 0 || f > u {
        return Err(Error::invalid(format!("{KEY}.f"), format!("{f}: a pod has {u} uplinks (aggregation–core links); allowed: 1..={u}{}", if f == 0 { format!(" ({SWITCH_OFF})") } else { String::new() })));
    }
    Ok(())
}

/// A positive mean burst gap or length in µs, as picoseconds.
fn burst_mean(key: &str, us: f64) -> Result<Time> {
    let Some(t) = crate::units::checked_us(us).filter(|_| us > 0.0) else {
        let max = crate::units::show_num(crate::units::MAX_TIME_US);
        return Err(Error::invalid(key, format!("{}: must be a positive number of microseconds, at most {max}", crate::units::show_num(us))));
    };
    if t == Time::ZERO {
        return Err(Error::invalid(key, format!("{us}: below one picosecond")));
    }
    Ok(t)
}

/// Moves a uniform random sample of `k` elements of `v` to its front (in random order).
fn partial_shuffle<T>(rng: &mut Rng, v: &mut [T], k: usize) {
    for i in 0..k.min(v.len()) {
        let j = i + rng.below((v.len() - i) as u64) as usize;
        v.swap(i, j);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::topo::{leaf_spine, TierLinks};
    use crate::units::US;

    fn t8k_like(k: u32) -> Fabric {
        let l = (BitsPerSec::from_gbps(400.0), US);
        leaf_spine::build(k, 1, TierLinks { host: l, tor_up: l, agg_up: l }, Time::ZERO).unwrap()
    }

    fn cfg(tors: u32, uplinks: u32, model: FailureModel) -> FailuresConfig {
        FailuresConfig {
            enabled: None,
            kind: FailureKind::TorUplinks,
            seed: None,
            tors: Some(tors),
            uplinks_per_tor: Some(uplinks),
            links: None,
            model,
            degraded_rate_factor: None,
            f: None,
            p: None,
            placement: None,
            scale_queue: None,
            direction: None,
            burst_gap_us: None,
            burst_len_us: None,
            loss_rate: None,
            good_loss_rate: None,
            mean_burst_pkts: None,
            mean_gap_pkts: None,
        }
    }

    //= strack spec §5.2.2 (T-8K failures)
    //# 16 ToRs each lose 4 of their 64 uplinks: 64 cables, 4 per affected ToR, distinct.
    #[test]
    fn t8k_counts() {
        let f = t8k_like(128);
        let links = cfg(16, 4, FailureModel::Removed).choose(&f, 7).unwrap().links;
        assert_eq!(links.len(), 64);
        let mut tors: Vec<NodeId> = links.iter().map(|l| f.ports[l.up.idx()].owner).collect();
        tors.dedup();
        assert_eq!(tors.len(), 16);
        let mut ups: Vec<PortId> = links.iter().map(|l| l.up).collect();
        ups.sort_unstable();
        ups.dedup();
        assert_eq!(ups.len(), 64);
        assert!(links.iter().all(|l| f.tier[f.ports[l.up.idx()].peer.idx()] == Tier::Agg && l.rate.is_none()));
    }

    /// MCC's fabric (mcc spec §5.1): 2 leaves × 4 hosts, 2 spines, 100 G.
    fn mcc_fabric() -> Fabric {
        let l = (BitsPerSec::from_gbps(100.0), US);
        let shape = leaf_spine::Shape { tors: 2, hosts_per_tor: 4, spines: 2, links_per_spine: 1 };
        leaf_spine::build_shape(shape, TierLinks { host: l, tor_up: l, agg_up: l }, &[], Time::ZERO).unwrap()
    }

    fn named(links: &[&str], model: FailureModel) -> FailuresConfig {
        let mut c = cfg(1, 1, model);
        (c.tors, c.uplinks_per_tor) = (None, None);
        c.links = Some(links.iter().map(|s| s.to_string()).collect());
        c
    }

    //= mcc §2.2 Fig. 1: l2 (leaf0 to spine1) runs at 50 G; spec A-9: r = 400 / 150
    #[test]
    fn named_links_fail_exactly_those_cables() {
        let mut f = mcc_fabric();
        let mut c = named(&["spine1-tor0"], FailureModel::Degraded);
        c.degraded_rate_factor = Some(0.5);
        let chosen = c.choose(&f, 1).unwrap();
        assert_eq!(chosen.links.len(), 1);
        let l = chosen.links[0];
        // Named from either end, the uplink is the ToR's port.
        assert_eq!(f.link_name(l.up), "tor0-spine1");
        assert_eq!(l.rate, Some(BitsPerSec::from_gbps(50.0)));
        assert_eq!(f.oversubscription_on_path(NodeId(0), NodeId(4)), 2.0, "before the failure: 400 / 200");
        f.apply_failures(chosen);
        assert_eq!(f.available_rate(l.up), BitsPerSec::from_gbps(50.0));
        assert!((f.oversubscription_on_path(NodeId(0), NodeId(4)) - 400.0 / 150.0).abs() < 1e-12);
        assert!((f.oversubscription_on_path(NodeId(5), NodeId(1)) - 400.0 / 150.0).abs() < 1e-12, "coming down into tor0 as well");
        assert_eq!(f.oversubscription_on_path(NodeId(0), NodeId(1)), 1.0, "within a rack");
    }

    #[test]
    fn bad_named_links_name_the_entry() {
        let f = mcc_fabric();
        let err = |c: FailuresConfig| c.choose(&f, 1).unwrap_err().to_string();
        let e = err(named(&["tor0-spine1", "tor0-spine9"], FailureModel::Removed));
        assert!(e.contains("topology.failures.links[1]") && e.contains("spine9"), "{e}");
        let e = err(named(&["tor0-spine1", "spine1-tor0"], FailureModel::Removed));
        assert!(e.contains("topology.failures.links[1]") && e.contains("twice"), "{e}");
        let e = err(named(&["tor0-spine1", "tor0-spine0"], FailureModel::Removed));
        assert!(e.contains("topology.failures.links") && e.contains("tor0") && e.contains("partition"), "{e}");
        let e = err(named(&["host0-tor0"], FailureModel::Removed));
        assert!(e.contains("topology.failures.links[0]") && e.contains("cuts it off"), "{e}");
        let e = err(named(&[], FailureModel::Removed));
        assert!(e.contains("topology.failures.links") && e.contains("empty"), "{e}");
        let mut both = named(&["tor0-spine1"], FailureModel::Removed);
        both.tors = Some(1);
        assert!(err(both).contains("topology.failures.tors"));
    }

    #[test]
    fn degraded_rate_is_the_factor() {
        let f = t8k_like(8);
        let links = cfg(2, 4, FailureModel::Degraded).choose(&f, 1).unwrap().links;
        assert_eq!(links.len(), 8);
        assert!(links.iter().all(|l| l.rate == Some(BitsPerSec::from_gbps(40.0))));
    }

    #[test]
    fn out_of_range_is_refused() {
        let f = t8k_like(8);
        let e = cfg(9, 1, FailureModel::Removed).choose(&f, 1).unwrap_err().to_string();
        assert!(e.contains("topology.failures.tors") && e.contains("1..=8"), "{e}");
        // 0 is what one writes to switch the section off: the error says how.
        let e = cfg(0, 1, FailureModel::Removed).choose(&f, 1).unwrap_err().to_string();
        assert!(e.contains("topology.failures.tors") && e.contains("1..=8") && e.contains("topology.failures.enabled = false"), "{e}");
        let e = cfg(1, 0, FailureModel::Removed).choose(&f, 1).unwrap_err().to_string();
        assert!(e.contains("topology.failures.uplinks_per_tor") && e.contains("enabled = false"), "{e}");
        let e = cfg(1, 4, FailureModel::Removed).choose(&f, 1).unwrap_err().to_string();
        assert!(e.contains("topology.failures.uplinks_per_tor") && e.contains("partition") && e.contains("1..=3"), "{e}");
        let e = cfg(1, 5, FailureModel::Degraded).choose(&f, 1).unwrap_err().to_string();
        assert!(e.contains("uplinks_per_tor") && e.contains("1..=4"), "{e}");
        let mut c = cfg(1, 1, FailureModel::Degraded);
        c.degraded_rate_factor = Some(1.5);
        let e = c.choose(&f, 1).unwrap_err().to_string();
        assert!(e.contains("topology.failures.degraded_rate_factor"), "{e}");
    }
}
