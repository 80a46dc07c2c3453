//! `fixed`: a constant congestion window, by default one bandwidth-delay product of the
//! connection's path. The reference point against which adaptive schemes are compared, and the
//! window used by the benchmark (shared/bench README).
//!
//! Parameters: `window_bdp` (default 1.0, window as a multiple of the path BDP) or
//! `window_bytes` (overrides it). A BDP-derived window is rounded up to whole packets (as htsim
//! sizes its 1-BDP windows: 153 × 4096 B = 626,688 B on the benchmark fabric); the window never
//! falls below one full packet.

use super::{CongestionControl, PathInfo};
use crate::error::{Error, Result};
use crate::units::BitsPerSec;
use serde::{Deserialize, Serialize};

/// Registry name.
pub const NAME: &str = "fixed";
/// Registry summary.
pub const SUMMARY: &str = "constant window (default 1 BDP of the path), no reaction to congestion";

/// Parameters of `fixed`.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct FixedParams {
    /// Window as a multiple of the connection's BDP.
    pub window_bdp: f64,
    /// Window in bytes; overrides `window_bdp` when set.
    pub window_bytes: Option<u64>,
}

impl Default for FixedParams {
    fn default() -> Self {
        FixedParams { window_bdp: 1.0, window_bytes: None }
    }
}

impl FixedParams {
    pub(super) fn validate(&self) -> Result<()> {
        if !(self.window_bdp.is_finite() && self.window_bdp > 0.0) {
            return Err(Error::invalid("transport.cc.window_bdp", format!("{}: must be a positive number", self.window_bdp)));
        }
        if self.window_bytes == Some(0) {
            return Err(Error::invalid("transport.cc.window_bytes", "0: must be at least one byte"));
        }
        Ok(())
    }
}

/// The controller: a window that never changes.
#[derive(Clone, Debug)]
pub struct Fixed {
    window: u64,
}

impl Fixed {
    /// A fixed window for a connection on `path`.
    pub fn new(p: &FixedParams, path: &PathInfo) -> Self {
        // A BDP-sized window is rounded up to whole packets: one byte short of the BDP would
        // leave the pipe a fraction of a packet empty every round trip.
        let w = p.window_bytes.unwrap_or_else(|| {
            let bytes = (p.window_bdp * path.bdp_bytes.0 as f64).ceil() as u64;
            (bytes.div_ceil(path.mtu_bytes.0) * path.mtu_bytes).0
        });
        Fixed { window: w.max(path.mtu_bytes.0) }
    }
}

impl CongestionControl for Fixed {
    fn window(&self) -> Option<u64> {
        Some(self.window)
    }
    fn pacing_rate(&self) -> Option<BitsPerSec> {
        None
    }
}

impl crate::scheme::Scheme<PathInfo> for Fixed {
    const NAME: &'static str = NAME;
    const SUMMARY: &'static str = SUMMARY;
    const LIMITS: &'static [crate::scheme::Limit] = &[crate::scheme::Limit::new("window_bdp", 0.001, 1000.0), crate::scheme::Limit::new("window_bytes", 1.0, 1099511627776.0)];
    type Params = FixedParams;
    fn check(p: &FixedParams, _key: &str) -> crate::error::Result<()> {
        p.validate()
    }
    fn build(p: &FixedParams, path: &mut PathInfo) -> Self {
        Fixed::new(p, path)
    }
}
