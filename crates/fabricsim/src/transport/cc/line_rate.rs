//! `line_rate`: no window; each connection is paced at a fixed rate (default the host link
//! rate) and never reacts to congestion. Several connections of one host share its NIC
//! round-robin, so with many connections per host the link stays full whatever `fraction` is:
//! the Load-Balancing-for-AI study's per-flow fair-share pacer (lb-ai-training spec §2.0.2,
//! CC-FIXED), whose coefficient scales a host's offered load, is [`super::pacer`].

use super::{CongestionControl, PathInfo};
use crate::error::{Error, Result};
use crate::units::BitsPerSec;
use serde::{Deserialize, Serialize};

/// Registry name.
pub const NAME: &str = "line_rate";
/// Registry summary.
pub const SUMMARY: &str = "no window, paced at a fixed fraction of the host link rate (LB study's CC-FIXED)";

/// Parameters of `line_rate`.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct LineRateParams {
    /// Pacing rate as a fraction of the host link rate, in (0, 1].
    pub fraction: f64,
}

impl Default for LineRateParams {
    fn default() -> Self {
        LineRateParams { fraction: 1.0 }
    }
}

impl LineRateParams {
    pub(super) fn validate(&self) -> Result<()> {
        if !(self.fraction > 0.0 && self.fraction <= 1.0) {
            return Err(Error::invalid(
                "transport.cc.fraction",
                format!("{}: must be in (0, 1] (a fraction of the host link rate)", self.fraction),
            ));
        }
        Ok(())
    }
}

/// The controller: a constant pacing rate.
#[derive(Clone, Debug)]
pub struct LineRate {
    rate: BitsPerSec,
}

impl LineRate {
    /// A pacer for a connection on `path`.
    pub fn new(p: &LineRateParams, path: &PathInfo) -> Self {
        LineRate { rate: BitsPerSec(((path.host_rate.0 as f64) * p.fraction).round().max(1.0) as u64) }
    }
}

impl CongestionControl for LineRate {
    fn window(&self) -> Option<u64> {
        None
    }
    fn pacing_rate(&self) -> Option<BitsPerSec> {
        Some(self.rate)
    }
}

impl crate::scheme::Scheme<PathInfo> for LineRate {
    const NAME: &'static str = NAME;
    const SUMMARY: &'static str = SUMMARY;
    const LIMITS: &'static [crate::scheme::Limit] = &[crate::scheme::Limit::new("fraction", 1e-4, 1.0)];
    type Params = LineRateParams;
    fn check(p: &LineRateParams, _key: &str) -> crate::error::Result<()> {
        p.validate()
    }
    fn build(p: &LineRateParams, path: &mut PathInfo) -> Self {
        LineRate::new(p, path)
    }
}
