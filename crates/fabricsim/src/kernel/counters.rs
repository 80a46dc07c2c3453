//! The run's packet and event counters: every element counts what it does here, and a
//! parallel run adds its partitions' counts.

use super::packet::PerKind;

/// Packet and event counters of a run. Per-kind counts come from the kind table
/// (`kernel/packet.rs`): a new packet kind is counted, reported and checked without an edit here.
#[derive(Clone, Copy, Debug, Default)]
pub struct Counters {
    /// Events processed.
    pub events: u64,
    /// Packets put on a link (every packet, every hop).
    pub packet_hops: u64,
    /// Packets a host put on its link, per kind (data: first transmissions and retransmissions).
    pub sent: PerKind,
    /// Packets that reached the host they were addressed to, per kind (data: including trimmed
    /// headers).
    pub arrived: PerKind,
    /// Packets discarded anywhere, per kind (a dead link, a full buffer, a planned drop; data:
    /// including trimmed headers).
    pub dropped: PerKind,
    /// Data packets that were retransmissions.
    pub data_retransmitted: u64,
    /// Data packets trimmed to headers.
    pub data_trimmed: u64,
    /// Of the trimmed data packets, those cut after they were queued, to make room for a
    /// control packet in a lane shared with data (lb-ai-training spec §4.2).
    pub data_evicted: u64,
    /// Of those, the ones evicted for a trimmed header (the paper's §6.2 argument: headers
    /// take buffer from data); the rest made room for ACKs, NACKs and other control packets.
    pub evicted_by_headers: u64,
    /// Of the dropped data packets, those that were trimmed headers.
    pub headers_dropped: u64,
    /// Trimmed headers a switch returned to their sender (`switch.trimmed_headers`,
    /// lb-ai-training spec LR-TRIM-RTS).
    pub headers_bounced: u64,
    /// Of those, the ones that reached their sender (counted as arrived data there).
    pub bounces_returned: u64,
    /// Data packets marked CE (each once, however many switches marked it).
    pub ecn_marked: u64,
    /// CE markings made by switch ports (a packet marked at two hops counts twice).
    pub ecn_mark_events: u64,
    /// Retransmission timer expiries that declared packets lost.
    pub timeouts: u64,
    /// Data packets declared lost by those expiries.
    pub timeout_lost: u64,
    /// Data packets dropped for lack of buffer (tail drop; PFC headroom overflow).
    pub buffer_drops: u64,
    /// Recoveries started by the out-of-order count (STrack).
    pub ooo_recoveries: u64,
    /// Fast retransmits ([`crate::transport::recovery::Episode::FastRetransmit`]).
    pub fast_retransmits: u64,
    /// Recoveries started by a probe answer (STrack).
    pub probe_recoveries: u64,
    /// Data packets re-routed by a switch-side selector, per switch hop (see `SwitchCtx::rerouted`).
    pub reroutes: u64,
    /// Packets (any kind) lost on the wire by flaky links; also counted in `dropped`.
    pub wire_losses: u64,
}

impl Counters {
    /// Adds another partition's counts (every counter counts events that happen in one place).
    pub(crate) fn absorb(&mut self, o: &Counters) {
        // Destructured, so that a new counter cannot be forgotten here.
        let Counters {
            events,
            packet_hops,
            sent,
            arrived,
            dropped,
            data_retransmitted,
            data_trimmed,
            data_evicted,
            evicted_by_headers,
            headers_dropped,
            headers_bounced,
            bounces_returned,
            ecn_marked,
            ecn_mark_events,
            timeouts,
            timeout_lost,
            buffer_drops,
            ooo_recoveries,
            fast_retransmits,
            probe_recoveries,
            reroutes,
            wire_losses,
        } = *o;
        for (mine, theirs) in [(&mut self.sent, sent), (&mut self.arrived, arrived), (&mut self.dropped, dropped)] {
            for (a, b) in mine.0.iter_mut().zip(theirs.0) {
                *a += b;
            }
        }
        for (a, b) in [
            (&mut self.events, events),
            (&mut self.packet_hops, packet_hops),
            (&mut self.data_retransmitted, data_retransmitted),
            (&mut self.data_trimmed, data_trimmed),
            (&mut self.data_evicted, data_evicted),
            (&mut self.evicted_by_headers, evicted_by_headers),
            (&mut self.headers_dropped, headers_dropped),
            (&mut self.headers_bounced, headers_bounced),
            (&mut self.bounces_returned, bounces_returned),
            (&mut self.ecn_marked, ecn_marked),
            (&mut self.ecn_mark_events, ecn_mark_events),
            (&mut self.timeouts, timeouts),
            (&mut self.timeout_lost, timeout_lost),
            (&mut self.buffer_drops, buffer_drops),
            (&mut self.ooo_recoveries, ooo_recoveries),
            (&mut self.fast_retransmits, fast_retransmits),
            (&mut self.probe_recoveries, probe_recoveries),
            (&mut self.reroutes, reroutes),
            (&mut self.wire_losses, wire_losses),
        ] {
            *a += b;
        }
    }

    /// A switch port marks a data packet CE (at enqueue or dequeue): one marking event, and a
    /// marked packet unless an earlier hop already marked it.
    #[inline]
    pub(crate) fn mark_ce(&mut self, flags: &mut u16) {
        self.ecn_marked += (*flags & super::packet::F_CE == 0) as u64;
        *flags |= super::packet::F_CE;
        self.ecn_mark_events += 1;
    }
}
