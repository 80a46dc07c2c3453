//! `[transport]` checks that need no fabric: packet and ACK sizes, and the parameters of the
//! congestion control, path selection, credit, shaper and loss-recovery schemes.

use super::TransportConfig;
use crate::error::{Error, Result};
use crate::units::show_num;

/// Checks sizes first (MTU, ACK size, ACK ratio), then each scheme's parameters (every
/// `cc_by_source` controller too; its hosts are checked with the fabric). The message
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
    //= uec-spec §4: the SACK bitmap covers 64 packets, so an ACK must come within 64 of them
    if tr.ack_coalesce_bytes > 64 * tr.mtu_bytes {
        return Err(Error::invalid(
            "transport.ack_coalesce_bytes",
            format!("{}: must be between 0 (off) and 64 × mtu_bytes = {} (an ACK's bitmap covers 64 packets)", tr.ack_coalesce_bytes, 64 * tr.mtu_bytes),
        ));
    }
    tr.cc.validate()?;
    for (i, e) in tr.cc_by_source.iter().enumerate() {
        let key = format!("transport.cc_by_source[{i}].cc");
        e.cc.validate().map_err(|err| err.moved("transport.cc", &key))?;
        // CNPs are a notification point's setting for the whole fabric, taken from
        // `transport.cc`: a DCQCN sender among others would get none, or others would get CNPs.
        if e.cc.cnp_interval().is_some() || tr.cc.cnp_interval().is_some() {
            return Err(Error::invalid(key, "\"dcqcn\" cannot share a run with other congestion controls (its receivers send CNPs to every sender)"));
        }
    }
    tr.lb.validate()?;
    tr.credit.validate()?;
    tr.shaper.validate()?;
    tr.reliability.validate()
}

/// `transport.cc_by_source` hosts: each listed once, on the fabric, in a non-empty list.
pub(super) fn check_cc_hosts(tr: &TransportConfig, hosts: u32) -> Result<()> {
    let mut seen = vec![false; hosts as usize];
    for (i, e) in tr.cc_by_source.iter().enumerate() {
        let key = format!("transport.cc_by_source[{i}].hosts");
        if e.hosts.is_empty() {
            return Err(Error::invalid(key, "empty: list the source hosts whose connections use this `cc`"));
        }
        for &h in &e.hosts {
            let slot = seen.get_mut(h as usize).ok_or_else(|| Error::invalid(&key, format!("host {h} does not exist: the fabric has hosts 0..{}", hosts - 1)))?;
            if std::mem::replace(slot, true) {
                return Err(Error::invalid(&key, format!("host {h} is listed twice: a host has one congestion control")));
            }
        }
    }
    Ok(())
}

/// Refuses a rate controller's floor above the host link rate it controls (`host_rate`, bits
/// per second): DCQCN's and TIMELY's `min_rate_mbps` would otherwise be cut to the line rate
/// without a word, and the controller could never slow down.
pub(super) fn check_rate_floors(tr: &TransportConfig, host_rate: u64) -> Result<()> {
    for (key, cc) in tr.ccs() {
        let Some(floor_mbps) = cc.min_rate_mbps() else { continue };
        if floor_mbps * 1e6 > host_rate as f64 {
            return Err(Error::invalid(
                format!("{key}.min_rate_mbps"),
                format!("{}: above the host link rate ({} Mb/s), so the controller could never slow down; allowed up to the host link rate", show_num(floor_mbps), show_num(host_rate as f64 / 1e6)),
            ));
        }
    }
    Ok(())
}
