//! The output schema: every column of every CSV file a run writes and every key of
//! `summary.json`, each with its unit and exact meaning. The CSV writers build their header
//! lines from these tables (so a column cannot be written without being described), a test
//! checks that `summary.json`'s keys are exactly the ones listed here, and `fabricsim list
//! --outputs` prints the tables (with `--markdown`, the "The files" section of the book's
//! `docs/src/reference/outputs.md`, which a test keeps identical).
//!
//! Units: `µs` are microseconds with picosecond precision (6 decimals); `bytes` are wire bytes
//! unless a meaning says payload; `packets` and `count` are plain counts; a `ratio` has no
//! unit; `stats` is an object `{min, mean, p50, p99, max}` over the population the meaning
//! names (percentiles by nearest rank, all zero when it is empty).

/// One column of a CSV file, or one key of `summary.json` (a dotted path; `[]` marks the
/// elements of an array of objects).
#[derive(Clone, Copy, Debug)]
pub struct Column {
    /// Column header, or key path.
    pub name: &'static str,
    /// Unit (see the module comment).
    pub unit: &'static str,
    /// What it is, exactly; when the column or key appears only in some runs, which.
    pub meaning: &'static str,
}

/// One output file: when it is written, what one row is, and its columns.
#[derive(Clone, Copy, Debug)]
pub struct FileSchema {
    /// File name.
    pub name: &'static str,
    /// When a run writes it.
    pub written: &'static str,
    /// What one row (or, for `summary.json`, the file) describes.
    pub row: &'static str,
    /// Columns in the order written (`summary.json`: its keys, depth first).
    pub columns: &'static [Column],
}

const fn c(name: &'static str, unit: &'static str, meaning: &'static str) -> Column {
    Column { name, unit, meaning }
}

/// `flows.csv`.
pub const FLOWS: FileSchema = FileSchema {
    name: "flows.csv",
    written: "always",
    row: "one flow: one connection of a flow workload; one rank pair and queue pair of a collective workload (all its chunks); under a message shaper (`transport.shaper`) one application flow, summing its sub-QPs",
    columns: &[
        c("flow", "id", "flow id, in workload order"),
        c("src", "id", "sending host (on a fabric of servers with a scale-up domain, hosts G.. are the scale-up ports of GPUs 0.., G the GPU count: a connection inside a server runs between them)"),
        c("dst", "id", "receiving host (as `src`)"),
        c("bytes", "bytes", "payload bytes of every message of the flow"),
        c("start_us", "µs", "first message posted (or due, if none was)"),
        c("finish_us", "µs", "the sender saw its last byte acknowledged; empty if unfinished (under a shaper: the last sub-WQE's ACK, empty if any is unfinished)"),
        c("fct_us", "µs", "finish_us − start_us; empty if unfinished"),
        c("ideal_fct_us", "µs", "lower bound on an idle fabric: every wire byte (payload plus a header per packet, each message's last packet as short as it is) at the host rate, plus the path's latency for the last packet and its ACK (under a shaper: the unsplit flow's)"),
        c("slowdown", "ratio", "fct_us / ideal_fct_us (≥ 1); empty if unfinished"),
        c("retransmits", "packets", "data packets sent again"),
        c("trims", "packets", "data packets of the flow trimmed to their header by switches"),
        c("drops", "packets", "packets of the flow of every kind (data, ACKs, NACKs, headers) dropped in the fabric"),
        c("ecn_acks", "packets", "ACKs that echoed a CE mark"),
        c("timeouts", "count", "retransmission timer expiries that declared packets lost (the shared per-packet RTO, or the mode's own RTO for `tcp`/`subflow_tcp`); one expiry may declare many packets lost"),
        c("data_sent", "packets", "data packets sent: first transmissions (coded symbols beyond the message included) plus retransmissions"),
        c("data_lost", "packets", "data packets that did not arrive whole: dropped anywhere or trimmed; data_lost / data_sent is the flow's loss rate (lb-ai-training §5.5)"),
        c("duplicates", "packets", "data packets the receiver got again after it already held them (spurious retransmissions)"),
        c("fast_retransmits", "count", "recoveries started by duplicate ACKs (`tcp`, `subflow_tcp`)"),
        c("timeout_lost", "packets", "data packets declared lost by the `timeouts` expiries"),
        c("reroutes", "packets", "only when a switch runs a scheme that counts re-routes (`adaptive_packet`, `adaptive_ecmp`, `flowlet`, `letflow`, `drill`, `conga`): data packets of the flow a switch sent elsewhere than its hashed or remembered port, per switch hop"),
        c("subflows", "count", "only under a message shaper: the sub-QPs (connections) that carried the flow"),
        c("fair_ideal_fct_us", "µs", "only for flow workloads (not collectives): the flow's ideal against its fair share — ideal_fct_us plus the extra time a fluid model takes to carry its wire bytes when every host link (sender NIC, receiver downlink) is shared max-min fairly among the flows using it at each moment, over the same bytes alone; the fabric between the hosts counts as non-blocking. Equals ideal_fct_us for a flow that shares no host link; not a lower bound of fct_us"),
        c("fair_slowdown", "ratio", "fct_us / fair_ideal_fct_us: the slowdown against the flow's fair share (below 1 when it took more than its share); empty if unfinished"),
    ],
};

/// `ccts.csv`.
pub const CCTS: FileSchema = FileSchema {
    name: "ccts.csv",
    written: "for collective workloads",
    row: "one collective instance (job, iteration, step)",
    columns: &[
        c("job", "id", "job index"),
        c("iteration", "id", "iteration of the job"),
        c("step", "id", "position in the job's collective sequence"),
        c("op", "text", "collective: `allreduce`, `allgather`, `reducescatter`, `alltoall`, `broadcast`"),
        c("algorithm", "text", "algorithm (`ring`, `tree`, `pairwise`, ...)"),
        c("ranks", "count", "ranks taking part (N)"),
        c("bytes", "bytes", "collective size S (payload per rank)"),
        c("start_us", "µs", "instance start; empty if it never started"),
        c("end_us", "µs", "completion of its last message; empty if unfinished"),
        c("cct_us", "µs", "end_us − start_us; empty if unfinished"),
        c("ideal_cct_us", "µs", "lower bound: the algorithm's bus-bandwidth bytes per rank (2(N−1)/N·S AllReduce; (N−1)/N·S AllGather, ReduceScatter, AlltoAll; S Broadcast) at the host rate with headers, plus the shortest one-way propagation of the instance's own connections and the chunk hops its pipeline fill adds after the busiest rank's last byte (none for rings and AllToAlls, N−2 for the broadcast chain) (so it depends on where its ranks are, not on other traffic), never less than its longest dependency chain; pairwise AlltoAll adds a round trip per round"),
        c("normalized_cct", "ratio", "cct_us / ideal_cct_us (≥ 1); empty if unfinished"),
        c("group", "text", "training steps only: the parallelism group the collective serves (`tp`, `pp`, `dp`, `ep`; `other` for a Chakra trace's)"),
    ],
};

/// `trace.csv`.
pub const TRACE: FileSchema = FileSchema {
    name: "trace.csv",
    written: "with `run.trace_interval_us` and traced connections",
    row: "one sample of one traced connection",
    columns: &[
        c("time_us", "µs", "sample time"),
        c("flow", "id", "connection"),
        c("cwnd_bytes", "bytes", "congestion window; empty for window-less controllers"),
        c("in_flight_bytes", "bytes", "wire bytes sent and not yet acknowledged or declared lost"),
        c("pacing_gbps", "Gb/s", "pacing rate; empty when the sender runs at line rate"),
        c("acked_bytes", "bytes", "payload bytes acknowledged so far"),
    ],
};

/// `port_trace.csv`.
pub const PORT_TRACE: FileSchema = FileSchema {
    name: "port_trace.csv",
    written: "with `run.trace_ports`",
    row: "one sample of one traced port (a direction of a link); differences of consecutive samples give per-interval utilisation and marking rates",
    columns: &[
        c("time_us", "µs", "sample time"),
        c("port", "id", "port id"),
        c("link", "text", "`NODE-NODE`: the port's owner, then its peer"),
        c("queue_bytes", "bytes", "bytes queued in its data class"),
        c("tx_bytes", "bytes", "bytes transmitted so far (every class)"),
        c("paused", "bool", "1 while PFC holds its data class"),
        c("ecn_marks", "packets", "packets it has CE-marked so far"),
    ],
};

/// `pfc_ports.csv`.
pub const PFC_PORTS: FileSchema = FileSchema {
    name: "pfc_ports.csv",
    written: "in PFC runs in which some port was paused",
    row: "one port that was paused",
    columns: &[
        c("link", "text", "`NODE-NODE`: the paused port's owner, then its peer"),
        c("pauses", "count", "PAUSE frames that stopped it"),
        c("paused_us", "µs", "total time its data class was held"),
    ],
};

/// `acks.csv`.
pub const ACKS: FileSchema = FileSchema {
    name: "acks.csv",
    written: "with `run.ack_log_conns`",
    row: "one ACK received by a logged connection's sender",
    columns: &[
        c("time_us", "µs", "arrival at the sender"),
        c("flow", "id", "connection"),
        c("rtt_us", "µs", "round-trip time of the data packet it acknowledges"),
        c("ecn", "bool", "1 if it echoed a CE mark"),
    ],
};

/// `packet_log.csv`.
pub const PACKET_LOG: FileSchema = FileSchema {
    name: "packet_log.csv",
    written: "with `run.packet_log_conns`",
    row: "one event of one data packet of a logged flow, in event order",
    columns: &[
        c("time_us", "µs", "when"),
        c("flow", "id", "connection"),
        c("seq", "id", "packet sequence number within the connection"),
        c("event", "text", "`sent`, `resent` (left the sender), `trimmed` (cut to a header on arrival at `link`), `evicted` (cut after it was queued at `link`, for a control packet), `dropped`, `bounced` (header returned to the sender at `link`), `header_arrived` (at the receiver, which NACKs it), `nack_arrived`, `ack_arrived` (at the sender), `timed_out` (declared lost by the sender's timer)"),
        c("link", "text", "`NODE-NODE`: the switch port where it happened; empty at a host"),
    ],
};

/// `gate_log.csv`.
pub const GATE_LOG: FileSchema = FileSchema {
    name: "gate_log.csv",
    written: "with `run.gate_log` and a message gate",
    row: "one window decision of a message gate, in time order",
    columns: &[
        c("time_us", "µs", "decision time"),
        c("flow", "id", "connection"),
        c("state", "text", "`mcc`: `grow`, `hold` or `shrink`"),
        c("window_bytes", "bytes", "message window after the decision, payload bytes"),
    ],
};

/// `ports.csv`.
pub const PORTS: FileSchema = FileSchema {
    name: "ports.csv",
    written: "with `run.port_stats`",
    row: "one direction of one link (the transmitting port), over the whole run",
    columns: &[
        c("port", "id", "port id"),
        c("link", "text", "`NODE-NODE`: the port's owner, then its peer"),
        c("class", "text", "port class (`tor_up`, `agg_down`, ...; `host_up` for a host's NIC)"),
        c("rate_gbps", "Gb/s", "rate at the end of the run (a link event or a degraded failure may have changed it)"),
        c("tx_bytes", "bytes", "bytes transmitted, every class (data, headers, ACKs, control)"),
        c("utilisation", "ratio", "tx_bytes × 8 / (rate_gbps × run time)"),
        c("max_queue_bytes", "bytes", "deepest data queue"),
        c("mean_queue_bytes", "bytes", "time-averaged data queue over the run"),
        c("drops", "packets", "packets dropped at the port: no buffer, port down, or a header with nothing to evict"),
        c("wire_losses", "packets", "packets lost on the wire: in a flaky link's loss bursts, or drawn by a lossy link's channel (`loss`, `bursty_loss`)"),
        c("trims", "packets", "data packets trimmed to their header here"),
        c("ecn_marks", "packets", "CE markings made here (their sum over ports is `packets.ecn_mark_events`)"),
        c("pauses", "count", "PAUSE frames that stopped this port"),
        c("paused_us", "µs", "time its data class was held by PFC"),
    ],
};

/// `events.csv`.
pub const EVENTS: FileSchema = FileSchema {
    name: "events.csv",
    written: "with `run.event_log`",
    row: "one drop or PFC PAUSE generation, in time order",
    columns: &[
        c("time_us", "µs", "when"),
        c("event", "text", "`drop` or `pause`"),
        c("link", "text", "`NODE-NODE`: for a drop the link the packet last crossed, for a pause the link whose sender is paused"),
        c("flow", "id", "connection of a dropped packet; empty for a pause"),
    ],
};

/// `messages.csv`.
pub const MESSAGES: FileSchema = FileSchema {
    name: "messages.csv",
    written: "with `run.message_log`",
    row: "one message",
    columns: &[
        c("message", "id", "message id, in order of creation in the workload"),
        c("conn", "id", "connection"),
        c("src", "id", "sending host (on a fabric of servers with a scale-up domain, hosts G.. are the scale-up ports of GPUs 0.., G the GPU count: a connection inside a server runs between them)"),
        c("dst", "id", "receiving host (as `src`)"),
        c("bytes", "bytes", "payload bytes"),
        c("posted_us", "µs", "its dependencies were met and its gate let it through; empty if never"),
        c("delivered_us", "µs", "its last byte was delivered in order at the receiver; empty if never"),
        c("completed_us", "µs", "the sender saw it fully acknowledged; empty if never"),
    ],
};

/// `flowlets.csv`.
pub const FLOWLETS: FileSchema = FileSchema {
    name: "flowlets.csv",
    written: "with `run.flowlet_gaps_us`",
    row: "one percentile of the flowlet-size distribution of one gap θ (seqbalance Fig. 1)",
    columns: &[
        c("gap_us", "µs", "the gap θ: a pause longer than this starts a new flowlet"),
        c("percentile", "count", "1 to 100"),
        c("flowlet_bytes", "bytes", "flowlet size at that percentile, nearest rank (wire bytes of a connection's data packets with no pause longer than θ, retransmissions included)"),
    ],
};

/// `summary.json`.
pub const SUMMARY: FileSchema = FileSchema {
    name: "summary.json",
    written: "always",
    row: "the run: fabric, flow and collective figures, packet counters, queues, PFC, invariant violations, wall-clock performance and the resolved scenario",
    columns: &[
        c("name", "text", "scenario name"),
        c("seed", "count", "master seed"),
        c("fabric", "text", "the fabric, in words"),
        c("hosts", "count", "hosts"),
        c("switches", "count", "switches"),
        c("failed_links", "text", "only with `[topology.failures]`: the cables failed at build time, e.g. `tor3-spine7`"),
        c("failure_seed", "count", "only when `[topology.failures] seed` is given: the seed the failures were drawn from (else the master seed)"),
        c("pod_uplink_bottleneck.f", "count", "only with `partial_lag` failures: failed uplinks per pod"),
        c("pod_uplink_bottleneck.p", "ratio", "fraction of each failed uplink's rate lost"),
        c("pod_uplink_bottleneck.pod_uplinks", "count", "uplinks per pod (U)"),
        c("pod_uplink_bottleneck.hosts", "count", "hosts (N)"),
        c("pod_uplink_bottleneck.hosts_per_pod", "count", "hosts per pod (H)"),
        c("pod_uplink_bottleneck.usable_uplinks", "count", "usable uplink capacity per pod, in links: U − f·p"),
        c("pod_uplink_bottleneck.max_fp", "count", "largest f·p that keeps the pod uplinks off an all-to-all's bottleneck: U − H·(N − H)/(N − 1) (lb-ai-training Eq. 2)"),
        c("pod_uplink_bottleneck.bottleneck", "bool", "whether Eq. 2 is violated (information, not an error)"),
        c("base_rtt_us", "µs", "round-trip time of the longest path on an idle fabric: a full data packet out, its ACK back"),
        c("bdp_bytes", "bytes", "host rate × base_rtt_us"),
        c("flows", "count", "flows in the workload (rows of flows.csv)"),
        c("flows_finished", "count", "flows that finished"),
        c("stopped_at_end_time", "bool", "the run stopped at `run.end_time_us` with flows unfinished"),
        c("stalled_since_us", "µs", "null unless the livelock guard (`run.stall_limit_us`) stopped the run: the last time payload was acknowledged (or messages became outstanding on an idle network, if later); the run stopped exactly `run.stall_limit_us` after it"),
        c("interrupted", "bool", "an interrupt (Ctrl-C or SIGTERM to `fabricsim run`, Ctrl-C in Python, a stop asked by a caller of the library) cut the run short: every figure is of the partial run, unfinished flows are unfinished, and the checks that need a drained network are skipped"),
        c("interrupted_at_us", "µs", "null unless interrupted: the simulated time the run had reached"),
        c("completion_time_us", "µs", "from the first flow start to the last flow finish"),
        c("ideal_completion_time_us", "µs", "lower bound of completion_time_us: the latest of every flow's planned start plus its ideal FCT, every collective instance's start plus its ideal CCT (packet instances: an analytic one sends no flow), and the busiest bottleneck (a host link, or a ToR's or pod's uplinks for traffic that must leave it) at full rate plus the shortest one-way propagation of any connection"),
        c("stationary_window.start_us", "µs", "only with `[results] window_start_us` / `window_end_us`: earliest counted flow start"),
        c("stationary_window.end_us", "µs", "starts from here on are not counted; null: no end"),
        c("stationary_window.flows", "count", "flows that started in the window"),
        c("stationary_window.flows_finished", "count", "of those, the finished ones: the flows fct_us, slowdown and slowdown_by_size count"),
        c("fct_us", "µs stats", "FCT of the finished flows (that started in the stationary window, if one is set)"),
        c("slowdown", "ratio stats", "FCT / ideal FCT over the same flows"),
        c("fair_slowdown", "ratio stats", "flow workloads only (null for collectives): FCT / fair-share ideal FCT (flows.csv `fair_ideal_fct_us`) over the same flows: the slowdown against each flow's max-min fair share of its host links, which a workload of many concurrent flows should be read by"),
        c("slowdown_by_size[].label", "text", "only with `[results] size_buckets`: the bucket's byte range, `0 < bytes <= 10000` (last: `bytes > 10000`)"),
        c("slowdown_by_size[].bytes_above", "bytes", "flows in the bucket have more payload bytes than this"),
        c("slowdown_by_size[].bytes_at_most", "bytes", "and at most this many; null for the last bucket"),
        c("slowdown_by_size[].count", "count", "finished flows in the bucket (started in the window)"),
        c("slowdown_by_size[].mean", "ratio", "their mean slowdown; null when count is 0"),
        c("slowdown_by_size[].p50", "ratio", "median slowdown, nearest rank; null when count is 0"),
        c("slowdown_by_size[].p95", "ratio", "95th percentile slowdown; null when count is 0"),
        c("slowdown_by_size[].p99", "ratio", "99th percentile slowdown; null when count is 0"),
        c("loss.data_loss_rate", "ratio", "data packets dropped or trimmed / data packets sent, over all flows (lb-ai-training §5.5)"),
        c("loss.flow_loss_rate", "ratio stats", "per flow, data_lost / data_sent"),
        c("loss.worst_flow", "id", "the flow with the highest loss rate (lowest id on ties)"),
        c("loss.retransmitted_fraction", "ratio", "retransmitted data packets / data packets sent"),
        c("loss.spurious_retransmissions_per_flow", "packets stats", "per flow, data packets its receiver got more than once"),
        c("reroutes_per_packet", "ratio stats", "only when switches count re-routes: per flow, data-packet re-routes by switches / its data packets (per hop, so it may exceed 1)"),
        c("uplink_imbalance.tors", "count", "only when `run.trace_ports` holds every uplink of some ToR: ToRs whose every uplink was traced"),
        c("uplink_imbalance.samples", "count", "(ToR, sampling interval) pairs with traffic"),
        c("uplink_imbalance.imbalance", "ratio stats", "per sample, (max − min) / mean of the bytes the ToR's uplinks sent in the interval (0 = even; seqbalance Fig. 7, 13)"),
        c("flowlets[].gap_us", "µs", "only with `run.flowlet_gaps_us`: the gap θ"),
        c("flowlets[].flowlets", "count", "flowlets of every connection that sent data"),
        c("flowlets[].mean_bytes", "bytes", "mean flowlet size (wire bytes); null without flowlets"),
        c("flowlets[].p50_bytes", "bytes", "median flowlet size, nearest rank"),
        c("flowlets[].p90_bytes", "bytes", "90th percentile flowlet size"),
        c("flowlets[].p99_bytes", "bytes", "99th percentile flowlet size"),
        c("flowlets[].max_bytes", "bytes", "largest flowlet"),
        c("flowlets[].bytes_in_flowlets_above_10mb", "ratio", "share of the bytes carried in flowlets above 10 MB"),
        c("collectives.jobs", "count", "only for collective workloads: jobs"),
        c("collectives.instances", "count", "collective instances (jobs × iterations × sequence length)"),
        c("collectives.finished", "count", "instances that finished"),
        c("collectives.cct_us", "µs stats", "CCT of the finished instances"),
        c("collectives.normalized_cct", "ratio stats", "CCT / ideal CCT of the finished instances"),
        c("training.iterations[].iteration", "id", "only for training steps (`workload.kind = \"training\"`): iteration index"),
        c("training.iterations[].time_us", "µs", "from the previous iteration's end (or the start) to the last GPU finishing this one; null if unfinished"),
        c("training.iterations[].compute_ideal_us", "µs", "the same on an infinitely fast network: the longest path of compute delays through the step's dependencies (the compute critical path, pipeline bubbles included)"),
        c("training.iterations[].network_ideal_us", "µs", "the same with each collective at its ideal CCT (`ccts.csv`) and each point-to-point message at its sender's NIC rate plus its one-way propagation: a lower bound that does not move with other traffic"),
        c("training.iterations[].slowdown", "ratio", "time_us / network_ideal_us; null if unfinished"),
        c("training.iterations[].critical_path.compute_us", "µs", "the iteration's critical path (walked back from its last GPU's end through the input that readied each task last): compute kernels on it; the parts add up to time_us; null if unfinished"),
        c("training.iterations[].critical_path.tp_us", "µs", "TP collectives on the critical path, start to end: exposed TP communication"),
        c("training.iterations[].critical_path.pp_us", "µs", "pipeline messages on the critical path, posting to arrival: exposed PP communication"),
        c("training.iterations[].critical_path.dp_us", "µs", "DP collectives on the critical path: exposed gradient reduction"),
        c("training.iterations[].critical_path.ep_us", "µs", "EP communication on the critical path"),
        c("training.iterations[].critical_path.other_us", "µs", "communication no group kind labels (a Chakra trace's collectives and messages) on the critical path"),
        c("training.iterations[].critical_path.wait_us", "µs", "other waits on the critical path (a task held to its not-before time)"),
        c("training.groups[].group", "text", "a parallelism group kind that communicated: `tp`, `pp`, `dp`, `ep`, or `other` (a Chakra trace's communication)"),
        c("training.groups[].bytes", "bytes", "payload bytes of its messages over the run, collectives' and point-to-point"),
        c("training.groups[].collectives", "count", "its collective instances"),
        c("training.groups[].cct_sum_us", "µs", "their CCTs summed (unfinished ones count 0)"),
        c("training.groups[].ideal_sum_us", "µs", "their ideal CCTs summed"),
        c("packets.data_sent", "packets", "data packets sent, retransmissions included"),
        c("packets.retransmitted", "packets", "data packets sent again"),
        c("packets.dropped", "packets", "whole data packets dropped anywhere"),
        c("packets.trimmed", "packets", "data packets trimmed to their header"),
        c("packets.evicted", "packets", "only when non-zero: of the trimmed, those cut after they were queued, to make room for a control packet in a lane shared with data (`switch.control_lane = \"shared\"`)"),
        c("packets.evicted_by_headers", "packets", "only when non-zero: of those, the ones evicted for a trimmed header (the rest for ACKs, NACKs and other control packets)"),
        c("packets.ecn_marked", "packets", "data packets that carried a CE mark, each counted once however many switches marked it"),
        c("packets.ecn_mark_events", "count", "CE markings made by switch ports: a packet marked at two hops counts twice"),
        c("packets.acks", "packets", "ACKs sent"),
        c("packets.nacks", "packets", "NACKs sent (trimmed headers answered)"),
        c("packets.bounced", "packets", "only when non-zero: trimmed headers switches returned to their sender (`switch.trimmed_headers`)"),
        c("packets.bounces_returned", "packets", "only when non-zero: of those, the ones that reached their sender"),
        c("packets.control_dropped", "packets", "control packets (ACKs, NACKs, headers, ...) dropped"),
        c("packets.timeouts", "count", "retransmission timer expiries that declared packets lost (the shared per-packet RTO, or a mode's own RTO)"),
        c("packets.timeout_lost", "packets", "data packets declared lost by those expiries"),
        c("packets.packet_hops", "count", "packet transmissions on links, every kind, every hop"),
        c("packets.buffer_drops", "packets", "data packets dropped for lack of buffer (tail drop or PFC headroom overflow)"),
        c("packets.cnps", "packets", "congestion notification packets sent (DCQCN)"),
        c("packets.seq_nacks", "packets", "sequence NACKs sent (RoCE go-back-N, selective NACK)"),
        c("packets.discarded_out_of_order", "packets", "out-of-order data packets go-back-N receivers discarded"),
        c("packets.probes", "packets", "loss probes sent (STrack)"),
        c("packets.ooo_recoveries", "count", "recoveries started by the out-of-order count (STrack)"),
        c("packets.probe_recoveries", "count", "recoveries started by a probe's answer (STrack)"),
        c("packets.fast_retransmits", "count", "recoveries started by duplicate ACKs (`tcp` modes)"),
        c("packets.reroutes", "packets", "only when non-zero: data packets switches re-routed, per switch hop"),
        c("packets.by_kind", "packets", "per packet kind (`data`, `ack`, `nack`, ...): `sent` by hosts (or made by switches), `arrived` at the node addressed, `dropped` in the network; each kind balances, sent = arrived + dropped"),
        c("packets.wire_losses", "packets", "only with flaky or lossy links: packets of any kind lost on the wire (also counted as dropped of their kind, never as buffer drops or trims)"),
        c("events", "count", "simulation events processed"),
        c("ack_rtt_us", "µs stats", "round-trip time of acknowledged data packets (percentiles at 0.13 µs resolution)"),
        c("duplicate_data_packets", "packets", "data packets that reached their receiver more than once (spurious retransmissions)"),
        c("max_queue_bytes", "bytes", "deepest data queue of any switch port"),
        c("buffer_bytes", "bytes", "data buffer of a switch port of the `[switch]` profile; null under PFC, where the switch's shared buffer bounds the ports"),
        c("queues_by_tier[].class", "text", "only with pod–core failures or `run.tier_queue_stats`: port class `tor_up`, `agg_up`, `agg_down`, `core_down`, `tor_down` (`spine_down` on a leaf-spine, `scale_up` for a server scale-up domain's ports)"),
        c("queues_by_tier[].ports", "count", "ports of the class"),
        c("queues_by_tier[].max_bytes", "bytes", "deepest data queue of any of its ports"),
        c("queues_by_tier[].mean_bytes", "bytes", "time-averaged data queue (∫ occupancy dt / run time), averaged over its ports"),
        c("queues_by_tier[].max_port_mean_bytes", "bytes", "the largest time-averaged data queue of one of its ports"),
        c("queues_by_tier[].wire_losses", "packets", "packets its ports lost on the wire (flaky or lossy links)"),
        c("queues_by_tier[].drops", "packets", "packets of any kind its ports dropped: no buffer, port down, or a header with nothing to evict"),
        c("queues_by_tier[].trims", "packets", "data packets its ports trimmed"),
        c("rails[].rail", "count", "only on a fabric of servers on rails (`topology.kind = \"rail_optimized\"` or `\"rail_only\"`; not `\"racks\"`, whose leaves serve no one rail), one entry per rail: the rail, GPU r of every server and leaf r of every scalable unit"),
        c("rails[].gpus", "count", "GPUs on the rail (one per server)"),
        c("rails[].gpu_tx_bytes", "bytes", "bytes (every packet) the rail's GPUs sent into the fabric over the run"),
        c("rails[].gpu_rx_bytes", "bytes", "bytes the rail's leaves delivered to its GPUs"),
        c("rails[].gpu_tx_utilisation", "ratio", "gpu_tx_bytes over what the rail's GPU links could carry in the run (rate × run time)"),
        c("rails[].uplink_tx_bytes", "bytes", "bytes the rail's leaves sent up to the spines"),
        c("rails[].uplink_rx_bytes", "bytes", "bytes the spines sent down to the rail's leaves"),
        c("rails[].uplink_tx_utilisation", "ratio", "uplink_tx_bytes over what the rail's leaf uplinks could carry in the run"),
        c("rails[].scale_up_tx_bytes", "bytes", "only with a scale-up domain (`[topology.server] scale_up_gbps`): bytes the rail's GPUs sent into their servers' scale-up switches"),
        c("rails[].scale_up_tx_utilisation", "ratio", "only with a scale-up domain: scale_up_tx_bytes over what the rail's GPUs' scale-up links could carry in the run"),
        c("planes[].plane", "count", "only on a fabric of servers with `topology.planes` > 1, one entry per plane: the plane, whose GPU NIC ports are hosts plane × GPUs .. (`gpu<i>.p<plane>`)"),
        c("planes[].gpu_tx_bytes", "bytes", "bytes (every packet) the GPUs' NIC ports on the plane sent into it"),
        c("planes[].gpu_tx_utilisation", "ratio", "gpu_tx_bytes over what those ports could carry in the run (rate × run time)"),
        c("planes[].uplink_tx_bytes", "bytes", "bytes the plane's leaves sent up to its spines"),
        c("planes[].uplink_tx_utilisation", "ratio", "uplink_tx_bytes over what the plane's leaf uplinks could carry in the run"),
        c("flaky_ports[].port", "text", "only with flaky or lossy links (`flaky`, `loss`, `bursty_loss`): every port that loses packets on the wire, `NODE-NODE`"),
        c("flaky_ports[].transmitted", "packets", "packets it transmitted, lost ones included"),
        c("flaky_ports[].wire_losses", "packets", "packets it lost on the wire"),
        c("queue_profiles[].ports", "text", "only when `[switch.ports.*]` or `[[switch.by_link_rate]]` made more than one profile: the ports using it, as `class@rate`"),
        c("queue_profiles[].port_count", "count", "switch ports using it"),
        c("queue_profiles[].buffer_bytes", "bytes", "data buffer per port; null under PFC"),
        c("queue_profiles[].ecn", "bool", "ECN marking on"),
        c("queue_profiles[].kmin_bytes", "bytes", "ECN Kmin"),
        c("queue_profiles[].kmax_bytes", "bytes", "ECN Kmax"),
        c("queue_profiles[].pmax", "ratio", "marking probability at Kmax"),
        c("queue_profiles[].mark_at", "text", "`enqueue` or `dequeue`"),
        c("queue_profiles[].trimming", "bool", "trimming on"),
        c("pfc.pause_frames", "count", "only in PFC runs: PAUSE frames switches sent"),
        c("pfc.ports_paused", "count", "ports ever paused"),
        c("pfc.paused_time_us", "µs", "paused time summed over ports"),
        c("pfc.max_port_paused_us", "µs", "the longest total paused time of one port"),
        c("pfc.max_paused_port", "text", "that port, `NODE-NODE` (empty if none was paused)"),
        c("pfc.max_switch_buffer_bytes", "bytes", "most bytes any switch buffered at once"),
        c("pfc.headroom_overflow_drops", "packets", "data packets dropped because headroom overflowed (must be 0: lossless)"),
        c("invariant_violations", "text", "invariant violations, one string each; empty when the run is sound (any entry makes `fabricsim run` exit 1)"),
        c("engine.version", "text", "the fabricsim version that made the run"),
        c("engine.commit", "text", "the project commit the engine was built from (`-dirty`: with uncommitted changes to tracked files; `unknown`: not built from a git checkout); a results row made from this run names it"),
        c("performance.wall_seconds", "seconds", "wall-clock time of the simulation loop (a parallel run: from starting its partitions, which build their copies of the fabric meanwhile, to merging them; differs between identical runs)"),
        c("performance.events_per_second", "events/s", "events per wall second"),
        c("performance.packet_hops_per_second", "hops/s", "packet-hops per wall second"),
        c("performance.peak_rss_bytes", "bytes", "peak resident memory of the process, where the OS reports it (else null)"),
        c("performance.peak_packets_in_pool", "packets", "packet records the engine held at its peak (engine memory, not a network figure; a parallel run: the sum over its partitions' pools)"),
        c("performance.threads", "threads", "threads the run was asked to use (`--threads`)"),
        c("performance.partitions", "partitions", "partitions that ran in parallel (1 = the serial engine)"),
        c("performance.serial_reason", "text", "why a run asked to use several threads ran serially (null otherwise)"),
        c("performance.sync_windows", "windows", "synchronisation windows of a parallel run (0 when serial)"),
        c("performance.partition_cpu_seconds", "seconds", "CPU time the partitions of a parallel run spent running events and taking in messages, summed over partitions (null when serial, or where the OS does not report a thread's CPU time)"),
        c("performance.critical_path_seconds", "seconds", "a parallel run's critical path in CPU time: per synchronisation round the busiest partition's CPU time plus the coordinator's serial share, summed; the wall time with a free core per partition and free synchronisation, so serial wall / this bounds the speed-up apart from the machine's memory and caches (null as above)"),
        c("estimate.data_packets", "packets", "data packets the workload posts (first transmissions), as `check` estimates them before the run"),
        c("estimate.events", "count", "events the estimate expected (about 21 per data packet; compare `events`)"),
        c("estimate.peak_memory_bytes", "bytes", "peak memory the estimate expected (compare `performance.peak_rss_bytes`); `run` refuses a scenario whose estimate exceeds the machine's memory unless `--force`"),
        c("estimate.wall_s", "seconds", "[fast, slow] wall-time range the estimate expected, from 20 M and 3 M events/s"),
        c("scenario", "text", "the fully resolved scenario, every default filled in"),
    ],
};

impl FileSchema {
    /// The CSV header line (with its newline) of the columns `keep` accepts.
    pub fn header_where(&self, keep: impl Fn(&str) -> bool) -> String {
        let names: Vec<&str> = self.columns.iter().map(|c| c.name).filter(|n| keep(n)).collect();
        names.join(",") + "\n"
    }

    /// The CSV header line (with its newline) of every column.
    pub fn header(&self) -> String {
        self.header_where(|_| true)
    }
}

/// `resolved_scenario.toml`.
pub const SCENARIO: FileSchema = FileSchema {
    name: "resolved_scenario.toml",
    written: "always",
    row: "the resolved scenario as a scenario file: `fabricsim run RUN_DIR` (or `RUN_DIR/resolved_scenario.toml`, or `RUN_DIR/summary.json`) reruns the run and writes the same files",
    columns: &[
        c("files_dir", "path", "only when the scenario reads files (flow list, CDF, collective trace): the absolute folder they were read from"),
        c("(every other key)", "as in a scenario", "the scenario with defaults filled in and `--set` overrides and the seed applied; the same as summary.json's `scenario`"),
    ],
};

/// `timeline.json`.
pub const TIMELINE: FileSchema = FileSchema {
    name: "timeline.json",
    written: "with `run.timeline`",
    row: "the run as a Chrome trace-event file for Perfetto (ui.perfetto.dev: Open trace file) or chrome://tracing: `{\"traceEvents\": [...]}`, one event per entry below; times in µs with picosecond precision",
    columns: &[
        c("process `host H`", "async slices", "each flow host H sends, from start_us to finish_us (args: flow, dst, bytes, ideal_fct_us, slowdown); with `run.message_log` each message, from posting to completion (args: message, flow, dst, bytes, delivered_us); an unfinished one runs to the timeline's end with `unfinished: true`"),
        c("process `collectives`, thread `job J`", "slices", "each collective instance of job J, from its start to its end (args: ranks, ideal_cct_us, cct_us, normalized_cct)"),
        c("process `ports`", "counters", "per port of `run.trace_ports`, at every sample: `queue LINK` (bytes in its data class) and `paused LINK` (1 while PFC holds it)"),
    ],
};

/// Every output file's schema, in the order written (the table of output files,
/// [`super::csv::OUTPUT_FILES`], holds them).
pub fn files() -> impl Iterator<Item = &'static FileSchema> {
    super::csv::OUTPUT_FILES.iter().map(|f| f.schema)
}

/// The schema as `fabricsim list --outputs` prints it: per file, when it is written, what a
/// row is, then one line per column.
pub fn text() -> String {
    let mut s = String::from("Units: µs with picosecond precision; bytes are wire bytes unless payload is said; stats = {min, mean, p50, p99, max}, nearest rank.\n");
    for f in files() {
        s.push_str(&format!("\n{} ({}): {}\n", f.name, f.written, f.row));
        let width = f.columns.iter().map(|c| c.name.chars().count()).max().unwrap_or(0);
        for col in f.columns {
            s.push_str(&format!("  {:width$}  [{}] {}\n", col.name, col.unit, col.meaning));
        }
    }
    s
}

/// The schema as the book's "The files" section (`docs/src/reference/outputs.md`): per file a
/// paragraph and a table.
pub fn markdown() -> String {
    let mut s = String::new();
    for f in files() {
        s.push_str(&format!("\n`{}` — written {}; {}.\n\n| column | unit | meaning |\n|---|---|---|\n", f.name, f.written, f.row));
        for col in f.columns {
            s.push_str(&format!("| `{}` | {} | {} |\n", col.name, col.unit, col.meaning.replace('|', "\\|")));
        }
    }
    s
}
