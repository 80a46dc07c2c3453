//! `[transport]` checks that need no fabric: packet and ACK sizes, and the parameters of the
//! congestion control, path selection, credit, shaper and loss-recovery schemes.

use super::TransportConfig;
use crate::error::{Error, Result};

/// Checks sizes first (MTU, ACK size, ACK ratio), then each scheme's parameters. The message
/// gate is checked later, with the run options (see [`super::Scenario::setup`]).
pub(super) fn check(tr: &TransportConfig) -> Result<()> {
    if tr.header_bytes == 0 || tr.mtu_bytes <= tr.header_bytes {
        return Err(Error::invalid(
            "transport.mtu_bytes",
            format!("{}: must exceed header_bytes ({}) so packets carry payload", tr.mtu_bytes, tr.header_bytes),
        ));
    }
    if tr.mtu_bytes > 65_535 {
        return Err(Error::invalid("transport.mtu_bytes", format!("{}: at most 65535 bytes", tr.mtu_bytes)));
    }
    if tr.ack_bytes == 0 || tr.ack_bytes > tr.mtu_bytes {
        return Err(Error::invalid("transport.ack_bytes", format!("{}: must be between 1 and mtu_bytes", tr.ack_bytes)));
    }
    if tr.ack_every == 0 || tr.ack_every > 64 {
        return Err(Error::invalid("transport.ack_every", format!("{}: must be between 1 and 64 packets", tr.ack_every)));
    }
    tr.cc.validate()?;
    tr.lb.validate()?;
    tr.credit.validate()?;
    tr.shaper.validate()?;
    tr.reliability.validate()
}
