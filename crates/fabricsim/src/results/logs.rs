//! Optional logs: one row per message (`messages.csv`, `run.message_log`) and the drops and PFC
//! pauses in time order (`events.csv`, `run.event_log`).

use super::known;
use crate::engine::Sim;
use crate::ids::PortId;
use crate::scenario::Setup;
use crate::units::Time;
use serde::Serialize;

/// One message (a row of `messages.csv`, written when `run.message_log` is set).
#[derive(Clone, Debug, Serialize)]
pub struct MessageRow {
    /// Message id (order of creation in the workload).
    pub id: u32,
    /// Connection.
    pub conn: u32,
    /// Sending host.
    pub src: u32,
    /// Receiving host.
    pub dst: u32,
    /// Payload bytes.
    pub bytes: u64,
    /// When its dependencies were met and its gate let it through (ps).
    pub posted: Option<Time>,
    /// When its last byte was delivered in order at the receiver (ps).
    pub delivered: Option<Time>,
    /// When the sender saw it fully acknowledged (ps).
    pub completed: Option<Time>,
}

/// One logged event (`events.csv`).
#[derive(Clone, Debug)]
pub struct EventRow {
    /// When.
    pub at: Time,
    /// `drop` or `pause`.
    pub kind: &'static str,
    /// Port as `"NODE-NODE"`: for a drop the link the packet last crossed, for a pause the
    /// link whose sender is paused.
    pub link: String,
    /// Connection of a dropped packet.
    pub conn: Option<u32>,
}

/// One row per message when `run.message_log` is set, else none.
pub(super) fn messages(sim: &Sim, setup: &Setup) -> Vec<MessageRow> {
    if !setup.scenario.run.message_log {
        return Vec::new();
    }
    let traffic = &sim.traffic;
    let log = &sim.tasks.message_log;
    traffic
        .messages()
        .enumerate()
        .map(|(id, m)| {
            let c = traffic.conns[m.conn as usize];
            MessageRow {
                id: id as u32,
                conn: m.conn,
                src: c.src.0,
                dst: c.dst.0,
                bytes: m.bytes.0,
                posted: known(log.posted[id]),
                delivered: known(log.delivered[id]),
                completed: known(log.completed[id]),
            }
        })
        .collect()
}

/// The logged drops and pauses, in time order (drops first among equal times).
pub(super) fn events(sim: &Sim) -> Vec<EventRow> {
    let mut events: Vec<EventRow> = sim
        .k
        .log
        .drops
        .iter()
        .map(|&(at, port, conn)| EventRow { at, kind: "drop", link: sim.net.fabric.link_name(PortId(port)), conn: Some(conn) })
        .chain(sim.net.pfc.log.iter().map(|&(at, port, _)| EventRow { at, kind: "pause", link: sim.net.fabric.link_name(port), conn: None }))
        .collect();
    events.sort_by_key(|e| e.at);
    events
}
