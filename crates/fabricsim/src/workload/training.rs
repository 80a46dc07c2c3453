//! `training`: training steps (iterations) of a transformer language model under Megatron-style
//! tensor, pipeline and data parallelism, compiled to compute delays, collectives and
//! point-to-point messages on the traffic graph ([`super::graph`]).
//!
//! What a step is follows Narayanan et al., "Efficient Large-Scale Language Model Training on
//! GPU Clusters Using Megatron-LM" (SC '21):
//! - **Tensor parallelism** (§2.3, Fig. 5) splits each layer's attention and MLP over `tp`
//!   GPUs: two AllReduces of the layer's activations (b·s·h values) in the forward pass, two in
//!   the backward; with full activation recomputation (`recompute`, §3.5) the forward is run
//!   again, AllReduces included, before each layer's backward. The vocabulary-parallel
//!   embedding AllReduces its output in the forward pass, the logit layer its input gradient in
//!   the backward.
//! - **Pipeline parallelism** (§2.2.1, Fig. 4 top: 1F1B) cuts the layers into `pp` stages
//!   (the first `layers mod pp` stages take one more); stage p runs min(pp − p − 1, m) forward
//!   passes, then one forward and one backward in turn, then the remaining backwards, over the
//!   m = global batch / (micro-batch × dp) micro-batches. Between stages the activations go
//!   forward and their gradients back, b·s·h values, split over the stage's TP ranks (rank t
//!   to rank t) and AllGathered across the receiving stage's TP group (the scatter/gather
//!   optimisation, §4.1).
//! - **Data parallelism** AllReduces each stage's weight gradients across the `dp` replicas in
//!   buckets of `bucket_params` parameters, each started as the last micro-batch's backward
//!   pass has produced its gradients (last layer first), one after another on one
//!   communicator, overlapping the rest of the backward pass (Megatron-LM's overlapped
//!   gradient reduction). A replica's next iteration starts when its buckets are reduced.
//!
//! FLOPs of one layer for one micro-batch of b sequences of s tokens, forward (the paper's §5.1
//! count, generalised to grouped-query attention and gated MLPs): 2·b·s·h·(h + 2·h_kv) for the
//! QKV projection, 4·b·s²·h for the attention scores and their weighted sum, 2·b·s·h² for the
//! output projection, 2·k·b·s·h·f for the MLP (k = 2 matrices, 3 when gated as in SwiGLU); the
//! backward pass twice the forward. With h_kv = h and f = 4h that is 24·b·s·h² + 4·b·s²·h per
//! layer, and with recomputation and the logit layer (2·b·s·h·V forward) the paper's
//! 96·B·s·l·h²·(1 + s/6h + V/16lh) per iteration. A layer holds h·(h + 2·h_kv) + h² + k·h·f
//! weights (biases and norms left out); the first stage the embedding (V·h), the last the
//! logit layer (V·h, untied: the embedding-gradient AllReduce between them is not modelled),
//! each split over the TP ranks. Compute time is FLOPs / (`tflops` × `efficiency`) per GPU.
//!
//! Model of execution (assumptions): the GPUs of a TP group do the same work and meet at every
//! TP collective, so each group has one compute stream, its kernels one after another in the
//! schedule's order; communication runs beside it (NCCL's own streams) and a collective starts
//! when every rank taking part has reached it (its inputs computed or received); point-to-point
//! sends are posted when their data is computed and never wait for the receiver.
//!
//! Ranks: rank = t + tp·(d + dp·p) for TP rank t, DP replica d, stage p (Megatron-LM's default
//! order: TP innermost, so a TP group is consecutive GPUs, one server's when tp is at most its
//! GPU count), rank i on host i.

use super::collective;
use super::graph::{GraphBuilder, GraphSize, Role, StepMap, Trigger, GROUP_KINDS};
use super::Room;
use crate::error::{Error, Result};
use crate::ids::NodeId;
use crate::units::{ByteSize, Time};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;

/// Registry name.
pub const NAME: &str = "training";
/// Registry summary.
pub const SUMMARY: &str = "training steps of a transformer (layers, hidden, heads, FFN, sequence, batch) under TP/PP (1F1B)/DP with overlapped gradient buckets";
/// Overrides of the bundled example scenario for a small run of this workload.
pub const EXAMPLE: &[&str] = &["workload={ kind = \"training\", model = { layers = 4, hidden = 256, heads = 8, seq = 128, vocab = 1024, global_batch = 8 }, parallelism = { tp = 2, pp = 2, dp = 2 } }"];

/// `[workload]` of kind `training`.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct TrainingParams {
    /// The model.
    pub model: ModelConfig,
    /// How it is split over the GPUs.
    pub parallelism: ParallelismConfig,
    /// The GPUs' compute rate.
    pub gpu: GpuConfig,
    /// Training steps run one after another.
    pub iterations: u32,
    /// Chunk (message) size of the collectives.
    pub chunk: ByteSize,
    /// Queue pairs per rank pair.
    pub qps: u32,
}

impl Default for TrainingParams {
    fn default() -> Self {
        TrainingParams { model: ModelConfig::default(), parallelism: ParallelismConfig::default(), gpu: GpuConfig::default(), iterations: 1, chunk: ByteSize(512 << 10), qps: 1 }
    }
}

/// `workload.model`: a decoder-only transformer. The defaults are GPT-3 175B's (Brown et al.,
/// 2020, Table 2.1: 96 layers, d_model 12288, 96 heads, context 2048; vocabulary 50257 padded
/// to 51200 as Megatron-LM pads it).
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ModelConfig {
    /// Transformer layers (l).
    pub layers: u32,
    /// Hidden size (h).
    pub hidden: u64,
    /// Attention heads.
    pub heads: u32,
    /// Key/value heads (grouped-query attention; default: `heads`).
    pub kv_heads: Option<u32>,
    /// MLP inner size (f; default 4·h).
    pub ffn: Option<u64>,
    /// Gated MLP (SwiGLU: three weight matrices instead of two).
    pub gated_ffn: bool,
    /// Sequence length (s).
    pub seq: u64,
    /// Vocabulary size (V).
    pub vocab: u64,
    /// Sequences per micro-batch (b).
    pub micro_batch: u64,
    /// Sequences per iteration (B; default: one micro-batch per pipeline stage per replica).
    pub global_batch: Option<u64>,
    /// Bytes per activation and gradient value (2: BF16/FP16).
    pub bytes_per_value: u64,
}

impl Default for ModelConfig {
    fn default() -> Self {
        ModelConfig { layers: 96, hidden: 12288, heads: 96, kv_heads: None, ffn: None, gated_ffn: false, seq: 2048, vocab: 51200, micro_batch: 1, global_batch: None, bytes_per_value: 2 }
    }
}

/// `workload.parallelism`.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ParallelismConfig {
    /// Tensor-parallel size.
    pub tp: u32,
    /// Pipeline stages.
    pub pp: u32,
    /// Data-parallel replicas (default: every host in use, hosts / (tp × pp)).
    pub dp: Option<u32>,
    /// Parameters per data-parallel gradient bucket (default max(40 M, 1 M × dp), Megatron-LM's
    /// default bucket size).
    pub bucket_params: Option<u64>,
    /// Full activation recomputation: each layer's forward pass (and its TP AllReduces) again
    /// before its backward.
    pub recompute: bool,
    /// Algorithm of the TP collectives.
    pub tp_algorithm: String,
    /// Algorithm of the DP AllReduce.
    pub dp_algorithm: String,
    /// How the TP collectives are simulated: `"packets"`, or `"analytic"` (each a delay: its
    /// bus bytes at the server's scale-up rate plus its latency term; needs every TP group
    /// inside one server's scale-up domain).
    pub tp_network: String,
    /// Megatron-LM's distributed optimizer (ZeRO stage 1 with sharded gradients): each bucket's
    /// gradients are ReduceScattered across the replicas instead of AllReduced, and once the
    /// last bucket is, the updated parameters AllGathered bucket by bucket before the next
    /// iteration (the same bytes per GPU as the AllReduce: its two halves).
    pub distributed_optimizer: bool,
}

impl Default for ParallelismConfig {
    fn default() -> Self {
        ParallelismConfig { tp: 1, pp: 1, dp: None, bucket_params: None, recompute: false, tp_algorithm: "ring".into(), dp_algorithm: "ring".into(), tp_network: "packets".into(), distributed_optimizer: false }
    }
}

/// `workload.gpu`.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct GpuConfig {
    /// Peak dense rate, TFLOP/s (default 989: an H100 SXM's BF16).
    pub tflops: f64,
    /// Fraction of the peak the kernels reach (default 0.5, an assumption: Megatron-LM reports
    /// 44–52 % of peak at scale, Narayanan et al. Table 1).
    pub efficiency: f64,
}

impl GpuConfig {
    /// FLOPs per picosecond its kernels reach, or the error naming the key out of range.
    pub fn check(&self) -> Result<f64> {
        if !(self.tflops.is_finite() && self.tflops > 0.0 && self.tflops <= 1e6) {
            return Err(Error::invalid("workload.gpu.tflops", format!("{}: allowed above 0, up to 1e6", crate::units::show_num(self.tflops))));
        }
        if !(self.efficiency.is_finite() && self.efficiency > 0.0 && self.efficiency <= 1.0) {
            return Err(Error::invalid("workload.gpu.efficiency", format!("{}: allowed above 0, up to 1", crate::units::show_num(self.efficiency))));
        }
        // 1 TFLOP/s is one FLOP per picosecond.
        Ok(self.tflops * self.efficiency)
    }
}

impl Default for GpuConfig {
    fn default() -> Self {
        GpuConfig { tflops: 989.0, efficiency: 0.5 }
    }
}

/// Largest model dimension accepted: beyond it the FLOP counts leave exact integers.
const MAX_DIM: u64 = 1 << 24;

/// A step's shape, from the parameters and the host count: what the graph is generated from,
/// and what `fabricsim check` shows.
#[derive(Clone, Debug, PartialEq)]
pub struct Plan {
    /// Tensor-parallel size.
    pub tp: u32,
    /// Pipeline stages.
    pub pp: u32,
    /// Data-parallel replicas.
    pub dp: u32,
    /// Micro-batches per replica per iteration.
    pub micro_batches: u32,
    /// Layers of each stage.
    pub stage_layers: Vec<u32>,
    /// FLOPs of one layer's attention block, forward, one micro-batch, whole (all TP ranks).
    pub attention_flops: f64,
    /// FLOPs of one layer's MLP block, forward, one micro-batch, whole.
    pub mlp_flops: f64,
    /// FLOPs of the logit layer, forward, one micro-batch, whole.
    pub logit_flops: f64,
    /// Bytes of one micro-batch's activations (b·s·h values).
    pub activation_bytes: u64,
    /// Weights of one layer.
    pub layer_params: u64,
    /// Weights of the embedding (and of the logit layer).
    pub embedding_params: u64,
    /// Parameters per gradient bucket.
    pub bucket_params: u64,
    /// Bytes per value.
    pub bytes_per_value: u64,
    /// Full recomputation.
    pub recompute: bool,
    /// FLOPs one GPU's kernels do per picosecond (`tflops` × `efficiency`).
    pub flops_per_ps: f64,
    /// Algorithms of the TP and DP collectives.
    pub tp_algorithm: &'static str,
    /// See `tp_algorithm`.
    pub dp_algorithm: &'static str,
    /// TP collectives are analytic delays (`tp_network = "analytic"`).
    pub tp_analytic: bool,
    /// Gradients ReduceScattered and parameters AllGathered (`distributed_optimizer`).
    pub distributed_optimizer: bool,
    /// Iterations.
    pub iterations: u32,
}

fn positive(key: &str, v: u64, max: u64) -> Result<()> {
    if v == 0 || v > max {
        return Err(Error::invalid(key, format!("{v}: allowed 1..={max}")));
    }
    Ok(())
}

fn algorithm(key: &str, op: &str, given: &str) -> Result<&'static str> {
    let (_, algs, _) = collective::OPERATIONS.iter().find(|(o, _, _)| *o == op).expect("a known operation");
    // The hierarchical algorithms need a group size the step does not give.
    let allowed: Vec<&'static str> = algs.iter().copied().filter(|a| !a.starts_with("hier")).collect();
    allowed.iter().copied().find(|a| *a == given).ok_or_else(|| {
        let list: Vec<String> = allowed.iter().map(|a| format!("`{a}`")).collect();
        Error::invalid(key, format!("unknown algorithm `{}` for {op}; allowed: {}", crate::excerpt::clip(given), list.join(", ")))
    })
}

impl Plan {
    /// The plan of `p` on `hosts` hosts, or the error naming the key that does not fit.
    pub fn of(p: &TrainingParams, hosts: u32) -> Result<Plan> {
        let m = &p.model;
        let par = &p.parallelism;
        positive("workload.model.layers", m.layers as u64, 1 << 16)?;
        positive("workload.model.hidden", m.hidden, MAX_DIM)?;
        positive("workload.model.heads", m.heads as u64, 1 << 16)?;
        positive("workload.model.seq", m.seq, MAX_DIM)?;
        positive("workload.model.vocab", m.vocab, MAX_DIM)?;
        positive("workload.model.micro_batch", m.micro_batch, 1 << 16)?;
        positive("workload.model.bytes_per_value", m.bytes_per_value, 8)?;
        if m.hidden % m.heads as u64 != 0 {
            return Err(Error::invalid("workload.model.heads", format!("{}: must divide hidden = {}", m.heads, m.hidden)));
        }
        let kv = m.kv_heads.unwrap_or(m.heads);
        if kv == 0 || m.heads % kv != 0 {
            return Err(Error::invalid("workload.model.kv_heads", format!("{kv}: must be at least 1 and divide heads = {}", m.heads)));
        }
        let ffn = m.ffn.unwrap_or(4 * m.hidden);
        positive("workload.model.ffn", ffn, MAX_DIM)?;
        positive("workload.parallelism.tp", par.tp as u64, hosts as u64)?;
        positive("workload.parallelism.pp", par.pp as u64, hosts as u64)?;
        if m.heads % par.tp != 0 {
            return Err(Error::invalid("workload.parallelism.tp", format!("{}: must divide the model's {} heads", par.tp, m.heads)));
        }
        if par.pp > m.layers {
            return Err(Error::invalid("workload.parallelism.pp", format!("{}: more stages than the model's {} layers", par.pp, m.layers)));
        }
        let per_replica = par.tp as u64 * par.pp as u64;
        if per_replica > hosts as u64 {
            return Err(Error::invalid("workload.parallelism.tp", format!("tp × pp = {per_replica} GPUs per replica; the fabric has {hosts} hosts")));
        }
        let dp = par.dp.unwrap_or((hosts as u64 / per_replica) as u32);
        if dp == 0 || dp as u64 * per_replica > hosts as u64 {
            return Err(Error::invalid("workload.parallelism.dp", format!("{dp}: tp × pp × dp GPUs must be between 1 and the fabric's {hosts} hosts; allowed 1..={}", hosts as u64 / per_replica)));
        }
        let per_step = m.micro_batch * dp as u64;
        let global = m.global_batch.unwrap_or(per_step * par.pp as u64);
        if global == 0 || global % per_step != 0 || global / per_step > 1 << 20 {
            return Err(Error::invalid("workload.model.global_batch", format!("{global}: must be a multiple of micro_batch × dp = {per_step}, at most 2^20 micro-batches")));
        }
        let bucket = par.bucket_params.unwrap_or((40_000_000u64).max(1_000_000 * dp as u64));
        positive("workload.parallelism.bucket_params", bucket, 1 << 50)?;
        let flops_per_ps = p.gpu.check()?;
        positive("workload.iterations", p.iterations as u64, 1 << 16)?;
        positive("workload.chunk", p.chunk.0, 1 << 40)?;
        positive("workload.qps", p.qps as u64, 16)?;
        let tp_algorithm = algorithm("workload.parallelism.tp_algorithm", "allreduce", &par.tp_algorithm)?;
        let dp_algorithm = algorithm("workload.parallelism.dp_algorithm", "allreduce", &par.dp_algorithm)?;
        if par.distributed_optimizer && dp_algorithm != "ring" {
            return Err(Error::invalid("workload.parallelism.dp_algorithm", format!("`{dp_algorithm}`: the distributed optimizer's ReduceScatter and AllGather run as rings; allowed: `ring`")));
        }
        if dp_algorithm == "hd" && !dp.is_power_of_two() {
            return Err(Error::invalid("workload.parallelism.dp_algorithm", format!("`hd` needs a power-of-two number of replicas, dp = {dp}")));
        }
        let tp_analytic = match par.tp_network.as_str() {
            "packets" => false,
            "analytic" => true,
            other => return Err(Error::invalid("workload.parallelism.tp_network", format!("`{}`; allowed: `packets`, `analytic`", crate::excerpt::clip(other)))),
        };
        if tp_algorithm == "hd" && !par.tp.is_power_of_two() {
            return Err(Error::invalid("workload.parallelism.tp_algorithm", format!("`hd` needs a power-of-two tp, tp = {}", par.tp)));
        }
        let (b, s, h, f, v) = (m.micro_batch as f64, m.seq as f64, m.hidden as f64, ffn as f64, m.vocab as f64);
        let h_kv = h * kv as f64 / m.heads as f64;
        let k = if m.gated_ffn { 3.0 } else { 2.0 };
        let stage_layers = (0..par.pp).map(|i| m.layers / par.pp + u32::from(i < m.layers % par.pp)).collect();
        let layer_params = m.hidden * (m.hidden + 2 * m.hidden * kv as u64 / m.heads as u64) + m.hidden * m.hidden + if m.gated_ffn { 3 } else { 2 } * m.hidden * ffn;
        Ok(Plan {
            tp: par.tp,
            pp: par.pp,
            dp,
            micro_batches: (global / per_step) as u32,
            stage_layers,
            attention_flops: 2.0 * b * s * h * (h + 2.0 * h_kv) + 4.0 * b * s * s * h + 2.0 * b * s * h * h,
            mlp_flops: 2.0 * k * b * s * h * f,
            logit_flops: 2.0 * b * s * h * v,
            activation_bytes: m.micro_batch * m.seq * m.hidden * m.bytes_per_value,
            layer_params,
            embedding_params: m.vocab * m.hidden,
            bucket_params: bucket,
            bytes_per_value: m.bytes_per_value,
            recompute: par.recompute,
            flops_per_ps,
            tp_algorithm,
            dp_algorithm,
            tp_analytic,
            distributed_optimizer: par.distributed_optimizer,
            iterations: p.iterations,
        })
    }

    /// GPUs in use.
    pub fn gpus(&self) -> u32 {
        self.tp * self.pp * self.dp
    }

    /// The host of TP rank `t` of replica `d` on stage `p`.
    pub fn rank(&self, p: u32, d: u32, t: u32) -> u32 {
        t + self.tp * (d + self.dp * p)
    }

    /// Compute time of `flops` split over the TP ranks.
    fn compute_time(&self, flops: f64) -> Time {
        Time((flops / self.tp as f64 / self.flops_per_ps).round() as u64)
    }

    /// The weights of stage `p` (one TP rank holds 1/tp of them).
    pub fn stage_params(&self, p: u32) -> u64 {
        let layers = self.stage_layers[p as usize] as u64 * self.layer_params;
        let embedding = if p == 0 { self.embedding_params } else { 0 } + if p + 1 == self.pp { self.embedding_params } else { 0 };
        layers + embedding
    }

    /// The gradient buckets of stage `p` in the order the backward pass fills them: per bucket,
    /// (parameters per TP rank, the layer of the stage whose backward closes it, counted from
    /// the stage's last; `layers` for the embedding).
    pub fn buckets(&self, p: u32) -> Vec<(u64, u32)> {
        let n = self.stage_layers[p as usize];
        let mut out = Vec::new();
        let mut acc = if p + 1 == self.pp { self.embedding_params } else { 0 };
        for done in 0..n {
            acc += self.layer_params;
            if acc >= self.bucket_params {
                out.push((acc.div_ceil(self.tp as u64), done));
                acc = 0;
            }
        }
        if p == 0 {
            acc += self.embedding_params;
        }
        if acc > 0 {
            out.push((acc.div_ceil(self.tp as u64), n));
        }
        out
    }

    /// FLOPs of one iteration, all GPUs together.
    pub fn iteration_flops(&self) -> f64 {
        let layer = self.attention_flops + self.mlp_flops;
        let passes = if self.recompute { 4.0 } else { 3.0 };
        let layers: u32 = self.stage_layers.iter().sum();
        self.micro_batches as f64 * self.dp as f64 * (passes * layer * layers as f64 + 3.0 * self.logit_flops)
    }

    /// Bytes one GPU of each group kind sends per iteration under the collectives' bus formulas
    /// (`cost`), for stage `p`: (TP, PP, DP).
    pub fn bytes_per_gpu(&self, p: u32) -> (u64, u64, u64) {
        let m = self.micro_batches as u64;
        let bus = |alg: &str, n: u32, s: u64| if n > 1 { collective::cost("allreduce", alg, n as u64, s, 1).0 } else { 0 };
        let ag = |s: u64| if self.tp > 1 { collective::cost("allgather", "ring", self.tp as u64, s, 1).0 } else { 0 };
        let layers = self.stage_layers[p as usize] as u64;
        let per_layer = if self.recompute { 6 } else { 4 };
        let ends = u64::from(p == 0) + u64::from(p + 1 == self.pp);
        // Activations in from the previous stage and gradients from the next, AllGathered.
        let received = u64::from(p > 0) + u64::from(p + 1 < self.pp);
        let tp = m * ((per_layer * layers + ends) * bus(self.tp_algorithm, self.tp, self.activation_bytes) + received * ag(self.activation_bytes));
        let sent = u64::from(p + 1 < self.pp) + u64::from(p > 0);
        let pp = m * sent * self.activation_bytes.div_ceil(self.tp as u64);
        let dp: u64 = self.buckets(p).iter().map(|&(params, _)| bus(self.dp_algorithm, self.dp, params * self.bytes_per_value)).sum();
        let it = self.iterations as u64;
        (tp * it, pp * it, dp * it)
    }

    /// Lines for `fabricsim check`: the step's shape, its FLOPs and bytes per GPU.
    pub fn lines(&self) -> Vec<String> {
        let mut out = vec![format!(
            "training      {} GPUs: tp {} × pp {} × dp {}, {} micro-batches per replica, layers per stage {}, {} iteration(s)",
            self.gpus(),
            self.tp,
            self.pp,
            self.dp,
            self.micro_batches,
            show_layers(&self.stage_layers),
            self.iterations
        )];
        out.push(format!("              {:.4e} FLOPs per iteration; per GPU and micro-batch and layer: attention {:.4e}, MLP {:.4e} forward", self.iteration_flops(), self.attention_flops / self.tp as f64, self.mlp_flops / self.tp as f64));
        for p in 0..self.pp {
            let (tp, pp, dp) = self.bytes_per_gpu(p);
            out.push(format!("              stage {p}: {} weights, {} gradient buckets; bytes sent per GPU: TP {tp}, PP {pp}, DP {dp}", self.stage_params(p), self.buckets(p).len()));
        }
        out
    }
}

fn show_layers(v: &[u32]) -> String {
    let (lo, hi) = (v.iter().min().copied().unwrap_or(0), v.iter().max().copied().unwrap_or(0));
    if lo == hi {
        lo.to_string()
    } else {
        format!("{lo}-{hi}")
    }
}

/// What the step's graph holds, counted without building it (a test keeps it equal to the
/// built graph's; connections are a bound).
pub fn size(plan: &Plan, chunk: u64, qps: u32) -> GraphSize {
    let spec = |bytes: u64, op: &str| collective::CollectiveSpec { op: op.into(), algorithm: None, bytes: ByteSize(bytes), parallelism: None, root: None, gap_us: None, group: None, channels: None };
    let edges = |n: u64| GraphSize { edges: n, ..GraphSize::default() };
    let tasks = |n: u64, e: u64| GraphSize { tasks: n, edges: e, ..GraphSize::default() };
    // An instance counts one edge into its start; a collective waiting for `deps` tasks.
    let instance = |op: &str, alg: &str, n: u32, bytes: u64, deps: u64| collective::instance_size(op, alg, n, &spec(bytes, op), chunk, qps).plus(edges(deps - 1));
    // An analytic instance: its two markers, the edges into its start and one to its end.
    let tp_instance = |op: &str, alg: &str, deps: u64| if plan.tp_analytic { tasks(2, deps + 1) } else { instance(op, alg, plan.tp, plan.activation_bytes, deps) };
    let tp = plan.tp > 1;
    // A TP collective on a stream: the instance, then the join the stream goes on from.
    let tp_ar = if tp { tp_instance("allreduce", plan.tp_algorithm, 1).plus(tasks(1, 1)) } else { GraphSize::default() };
    // A received pass: its arrival join, then the AllGather (or, without TP, a join of the
    // stream and the arrival).
    let recv = tasks(1, 0).plus(if tp { tp_instance("allgather", "ring", 2).plus(tasks(1, 1)) } else { tasks(1, 2) });
    let compute = tasks(1, 1);
    let m = plan.micro_batches as u64;
    let mut one = GraphSize::default();
    for p in 0..plan.pp {
        let (first, last) = (p == 0, p + 1 == plan.pp);
        let layers = plan.stage_layers[p as usize] as u64;
        let block = compute.plus(tp_ar).times(2);
        let forward = block.times(layers).plus(if first { tp_ar } else { GraphSize::default() }).plus(if last { compute } else { GraphSize::default() });
        let passes = if plan.recompute { 2 } else { 1 };
        let backward = block.times(layers * passes).plus(if last { compute.plus(tp_ar) } else { GraphSize::default() });
        let received = u64::from(!first) + u64::from(!last);
        // Sends: one message per TP rank, an edge in from the stream, one to the receiver.
        let send = GraphSize { tasks: 1, messages: 1, edges: 2, ..GraphSize::default() }.times(plan.tp as u64);
        let stream = forward.plus(backward).plus(recv.times(received)).plus(send.times(received)).times(m);
        let buckets = plan.buckets(p);
        let mut dp = GraphSize::default();
        if plan.dp > 1 {
            let reduce = if plan.distributed_optimizer { "reducescatter" } else { "allreduce" };
            for (k, &(params, _)) in buckets.iter().enumerate() {
                dp = dp.plus(instance(reduce, plan.dp_algorithm, plan.dp, params * plan.bytes_per_value, plan.dp as u64 + u64::from(k > 0)).times(plan.tp as u64));
            }
            // The distributed optimizer's AllGathers, each after the one before (the first
            // after the last ReduceScatter).
            if plan.distributed_optimizer {
                for &(params, _) in &buckets {
                    dp = dp.plus(instance("allgather", "ring", plan.dp, params * plan.bytes_per_value, 1).times(plan.tp as u64));
                }
            }
        }
        // Each replica's end of the iteration: its stream and every TP rank's last bucket.
        let last_buckets = if plan.dp > 1 { plan.tp as u64 } else { 0 };
        let end = tasks(1, 1 + last_buckets);
        one = one.plus(stream.plus(end).times(plan.dp as u64)).plus(dp);
    }
    let groups = plan.pp as u64 * plan.dp as u64;
    let step_end = tasks(1, groups);
    // TP rings and DP rings (two successors per rank at most, per algorithm), the pipeline's
    // pairs both ways: a bound.
    let conns = plan.gpus() as u64 * qps as u64 * 8;
    one.plus(step_end).times(plan.iterations as u64).plus(tasks(groups, 0)).plus(GraphSize { conns, ..GraphSize::default() })
}

/// Refuses a step too large for `room`, naming what makes it large.
pub fn admit(p: &TrainingParams, hosts: u32, room: Room) -> Result<Plan> {
    let plan = Plan::of(p, hosts)?;
    let size = size(&plan, p.chunk.0, p.qps);
    let key = if size.messages > 1_000_000 && p.chunk.0 < (4 << 20) { "workload.chunk" } else { "workload.model.global_batch" };
    room.admit(key, size, || format!("{} iteration(s) of {} micro-batches on {} GPUs (tp {}, pp {}, dp {})", plan.iterations, plan.micro_batches, plan.gpus(), plan.tp, plan.pp, plan.dp))?;
    Ok(plan)
}

/// Builds the graph of a step, keeping each task's role.
struct Emitter<'a> {
    plan: &'a Plan,
    g: GraphBuilder,
    roles: Vec<Role>,
    chunk: u64,
    qps: u32,
    /// Per TP group (stage, replica): its connections keyed by rank pair and queue pair.
    tp_conns: Vec<HashMap<(u32, u32, u32), u32>>,
    /// Per DP group (stage, TP rank): likewise.
    dp_conns: Vec<HashMap<(u32, u32, u32), u32>>,
    /// Point-to-point connections by (source host, destination host).
    p2p: HashMap<(u32, u32), u32>,
    /// Per stream (stage, replica): its last task.
    stream: Vec<u32>,
    /// Instances emitted in the current iteration.
    step: u32,
    iteration: u32,
    /// With analytic TP collectives: the scale-up domain's rate and one-way latency.
    scale_up: Option<(crate::units::BitsPerSec, Time)>,
}

impl Emitter<'_> {
    fn tag(&mut self, role: Role) {
        self.roles.resize(self.g.tasks(), role);
    }

    fn group(&self, p: u32, d: u32) -> usize {
        (p * self.plan.dp + d) as usize
    }

    fn join(&mut self, role: Role) -> u32 {
        let j = self.g.join();
        self.tag(role);
        j
    }

    /// Stream (p, d) computes `time` after its last task and `after`.
    fn compute(&mut self, p: u32, d: u32, time: Time, after: Option<u32>) {
        let s = self.group(p, d);
        let j = self.join(Role::Compute);
        self.g.edge(self.stream[s], j, Trigger::Delivered, time);
        if let Some(a) = after {
            self.g.edge(a, j, Trigger::Delivered, time);
        }
        self.stream[s] = j;
    }

    /// A collective of `op` over `bytes` among `hosts`, of group kind `kind`, starting when all
    /// of `deps` have fired; returns its end marker.
    fn collective(&mut self, op: &'static str, alg: &'static str, hosts: &[NodeId], bytes: u64, kind: usize, conns_of: (bool, usize), deps: &[u32]) -> u32 {
        let c = collective::CollectiveSpec { op: op.into(), algorithm: Some(alg.into()), bytes: ByteSize(bytes), parallelism: None, root: None, gap_us: None, group: None, channels: None };
        let mut inst = collective::instance(0, self.iteration, self.step, op, alg, hosts.len() as u32, &c, self.chunk);
        inst.group = GROUP_KINDS[kind];
        self.step += 1;
        let (begin, end) = match self.scale_up.filter(|_| kind == 0) {
            Some((rate, one_way)) => {
                let d = analytic_cct(&inst, rate, one_way);
                inst.algorithm = "analytic";
                inst.fixed = Some(d);
                inst.first_host = hosts[0].0;
                let (i, begin) = self.g.begin(inst, Time::ZERO);
                let end = self.g.end(i);
                self.g.edge(begin, end, Trigger::Delivered, d);
                (begin, end)
            }
            None => {
                let conns = if conns_of.0 { &mut self.dp_conns[conns_of.1] } else { &mut self.tp_conns[conns_of.1] };
                collective::emit(&mut self.g, conns, hosts, &c, inst, self.chunk, self.qps, Time::ZERO)
            }
        };
        self.tag(Role::Collective);
        for &dep in deps {
            self.g.edge(dep, begin, Trigger::Delivered, Time::ZERO);
        }
        end
    }

    /// A TP AllReduce of the activations on stream (p, d), after its last task and `after`.
    fn tp_collective(&mut self, p: u32, d: u32, op: &'static str, after: Option<u32>) {
        if self.plan.tp == 1 {
            if let Some(a) = after {
                // Nothing to gather: the stream waits for what it received.
                let s = self.group(p, d);
                let j = self.join(Role::Marker);
                self.g.edge(self.stream[s], j, Trigger::Delivered, Time::ZERO);
                self.g.edge(a, j, Trigger::Delivered, Time::ZERO);
                self.stream[s] = j;
            }
            return;
        }
        let hosts: Vec<NodeId> = (0..self.plan.tp).map(|t| NodeId(self.plan.rank(p, d, t))).collect();
        let s = self.group(p, d);
        let alg = if op == "allreduce" { self.plan.tp_algorithm } else { "ring" };
        let mut deps = vec![self.stream[s]];
        deps.extend(after);
        let end = self.collective(op, alg, &hosts, self.plan.activation_bytes, 0, (false, s), &deps);
        // The stream goes on when the collective has ended.
        let j = self.join(Role::Marker);
        self.g.edge(end, j, Trigger::Delivered, Time::ZERO);
        self.stream[s] = j;
    }

    /// Stream (p, d) sends its activations (or gradients) to stage `q`: a message per TP rank
    /// into `into`, the receiver's join.
    fn send(&mut self, p: u32, d: u32, q: u32, into: u32) {
        let bytes = self.plan.activation_bytes.div_ceil(self.plan.tp as u64);
        let from = self.stream[self.group(p, d)];
        for t in 0..self.plan.tp {
            let (src, dst) = (self.plan.rank(p, d, t), self.plan.rank(q, d, t));
            let g = &mut self.g;
            let c = *self.p2p.entry((src, dst)).or_insert_with(|| g.conn(NodeId(src), NodeId(dst)));
            let m = self.g.send(c, bytes, Time::ZERO);
            self.tag(Role::Message(1));
            self.g.edge(from, m, Trigger::Delivered, Time::ZERO);
            self.g.edge(m, into, Trigger::Delivered, Time::ZERO);
        }
    }
}

/// How long an analytic collective takes on a scale-up domain of `rate` and one-way latency
/// `one_way`: the ideal CCT's formula of `ccts.csv` (the algorithm's bus bytes at the rate,
/// its pipeline-fill and chain hops of a chunk, its round trips) on payload bytes (the
/// scale-up link's own framing is not modelled), plus one one-way latency more, as a packet
/// instance ends when its last message is acknowledged.
pub fn analytic_cct(inst: &super::graph::Instance, rate: crate::units::BitsPerSec, one_way: Time) -> Time {
    use crate::units::Bytes;
    let chain = inst.chain_hops.max(1) as u64 * inst.channels.max(1) as u64;
    let hop = rate.tx_time(Bytes(inst.chunk.min((inst.bus_bytes.0 / chain).max(1)))) + one_way;
    let bulk = rate.tx_time(inst.bus_bytes) + inst.fill_hops as u64 * hop;
    bulk.max(inst.chain_hops as u64 * hop) + inst.rtt_rounds as u64 * 2 * one_way + one_way
}

/// The scale-up domain analytic TP collectives run on: its rate and one-way latency (GPU to
/// its server's scale-up switch to GPU), or the error when a TP group is not inside one.
fn scale_up_of(plan: &Plan, fabric: &crate::topo::Fabric) -> Result<(crate::units::BitsPerSec, Time)> {
    let key = "workload.parallelism.tp_network";
    let servers = fabric.servers.ok_or_else(|| Error::invalid(key, "`analytic` needs servers with a scale-up domain (`topology.kind = \"rail_optimized\"` with `[topology.server] scale_up_gbps`)"))?;
    let up = servers.scale_up.ok_or_else(|| Error::invalid(key, "`analytic` needs a scale-up domain: `[topology.server] scale_up_gbps`"))?;
    if servers.gpus() % plan.tp != 0 {
        return Err(Error::invalid(key, format!("`analytic` needs every TP group inside one server: tp = {} does not divide the {} GPUs of a server", plan.tp, servers.gpus())));
    }
    Ok((up.rate, 2 * up.latency + fabric.switch_latency))
}

/// Generates the step's graph on `hosts` hosts (on `fabric`, which analytic TP collectives need).
pub fn generate(p: &TrainingParams, hosts: u32, fabric: Option<&crate::topo::Fabric>, room: Room) -> Result<super::graph::Traffic> {
    let plan = admit(p, hosts, room)?;
    let scale_up = match (plan.tp_analytic && plan.tp > 1, fabric) {
        (true, Some(f)) => Some(scale_up_of(&plan, f)?),
        (true, None) => return Err(Error::invalid("workload.parallelism.tp_network", "`analytic` is generated on the built fabric")),
        (false, _) => None,
    };
    Ok(generate_with(p, &plan, scale_up))
}

/// The graph of `plan` (admitted) with analytic TP collectives on a scale-up domain of this rate
/// and one-way latency (`None`: as packets).
fn generate_with(p: &TrainingParams, plan: &Plan, scale_up: Option<(crate::units::BitsPerSec, Time)>) -> super::graph::Traffic {
    let mut e = Emitter {
        plan,
        g: GraphBuilder::new(),
        roles: Vec::new(),
        chunk: p.chunk.0,
        qps: p.qps,
        tp_conns: vec![HashMap::new(); (plan.pp * plan.dp) as usize],
        dp_conns: vec![HashMap::new(); (plan.pp * plan.tp) as usize],
        p2p: HashMap::new(),
        stream: Vec::new(),
        step: 0,
        iteration: 0,
        scale_up,
    };
    let counted = size(plan, p.chunk.0, p.qps);
    e.g.reserve(GraphSize { conns: 0, ..counted });
    let (pp, dp, mb) = (plan.pp, plan.dp, plan.micro_batches);
    for _ in 0..pp * dp {
        let start = e.join(Role::Marker);
        e.stream.push(start);
    }
    let mut iteration_ends = Vec::with_capacity(plan.iterations as usize);
    for it in 0..plan.iterations {
        e.iteration = it;
        e.step = 0;
        // The joins where a stage's passes arrive: activations (forward) and gradients
        // (backward) of each micro-batch, per (stage, replica), made when first needed.
        let mut arrivals: HashMap<(bool, u32, u32, u32), u32> = HashMap::new();
        let mut ends = Vec::with_capacity((pp * dp) as usize);
        for p in 0..pp {
            let layers = plan.stage_layers[p as usize];
            let last = p + 1 == pp;
            let warmup = (pp - p - 1).min(mb);
            let mut order: Vec<(bool, u32)> = (0..warmup).map(|m| (true, m)).collect();
            for i in 0..mb - warmup {
                order.push((true, warmup + i));
                order.push((false, i));
            }
            order.extend((mb - warmup..mb).map(|m| (false, m)));
            // Per replica, the compute tasks that close each bucket (last micro-batch's backward).
            let buckets = plan.buckets(p);
            let mut bucket_ready: Vec<Vec<u32>> = vec![Vec::new(); buckets.len()];
            for d in 0..dp {
                for &(forward, m) in &order {
                    // What it waits for from the neighbouring stage.
                    let from_stage = if forward { (p > 0).then(|| p - 1) } else { (!last).then(|| p + 1) };
                    if from_stage.is_some() {
                        let arrived = arrival(&mut e, &mut arrivals, (forward, p, d, m));
                        e.tp_collective(p, d, "allgather", Some(arrived));
                    }
                    let fwd_attention = plan.compute_time(plan.attention_flops);
                    let fwd_mlp = plan.compute_time(plan.mlp_flops);
                    if forward {
                        if p == 0 {
                            e.tp_collective(p, d, "allreduce", None);
                        }
                        for _ in 0..layers {
                            e.compute(p, d, fwd_attention, None);
                            e.tp_collective(p, d, "allreduce", None);
                            e.compute(p, d, fwd_mlp, None);
                            e.tp_collective(p, d, "allreduce", None);
                        }
                        if last {
                            e.compute(p, d, plan.compute_time(plan.logit_flops), None);
                        }
                    } else {
                        if last {
                            e.compute(p, d, plan.compute_time(2.0 * plan.logit_flops), None);
                            e.tp_collective(p, d, "allreduce", None);
                        }
                        let mut next_bucket = 0;
                        for done in 0..layers {
                            if plan.recompute {
                                e.compute(p, d, fwd_attention, None);
                                e.tp_collective(p, d, "allreduce", None);
                                e.compute(p, d, fwd_mlp, None);
                                e.tp_collective(p, d, "allreduce", None);
                            }
                            e.compute(p, d, plan.compute_time(2.0 * plan.mlp_flops), None);
                            e.tp_collective(p, d, "allreduce", None);
                            e.compute(p, d, plan.compute_time(2.0 * plan.attention_flops), None);
                            if m + 1 == mb {
                                while next_bucket < buckets.len() && buckets[next_bucket].1 == done {
                                    let s = e.stream[e.group(p, d)];
                                    bucket_ready[next_bucket].push(s);
                                    next_bucket += 1;
                                }
                            }
                            e.tp_collective(p, d, "allreduce", None);
                        }
                        if m + 1 == mb {
                            while next_bucket < buckets.len() {
                                let s = e.stream[e.group(p, d)];
                                bucket_ready[next_bucket].push(s);
                                next_bucket += 1;
                            }
                        }
                    }
                    // What it sends on.
                    let to_stage = if forward { (!last).then(|| p + 1) } else { (p > 0).then(|| p - 1) };
                    if let Some(q) = to_stage {
                        let into = arrival(&mut e, &mut arrivals, (forward, q, d, m));
                        e.send(p, d, q, into);
                    }
                }
            }
            // The stage's gradient buckets, one AllReduce per TP rank across the replicas.
            let mut last_ends: Vec<u32> = Vec::new();
            if dp > 1 {
                let mut prev: Vec<Option<u32>> = vec![None; plan.tp as usize];
                let reduce = if plan.distributed_optimizer { "reducescatter" } else { "allreduce" };
                let hosts_of = |t: u32| (0..dp).map(|d| NodeId(plan.rank(p, d, t))).collect::<Vec<NodeId>>();
                for (k, &(params, _)) in buckets.iter().enumerate() {
                    for t in 0..plan.tp {
                        let mut deps = bucket_ready[k].clone();
                        deps.extend(prev[t as usize]);
                        let end = e.collective(reduce, plan.dp_algorithm, &hosts_of(t), params * plan.bytes_per_value, 2, (true, (p * plan.tp + t) as usize), &deps);
                        prev[t as usize] = Some(end);
                    }
                }
                // The distributed optimizer: the updated parameters gathered back, bucket by
                // bucket, once every gradient is reduced.
                if plan.distributed_optimizer {
                    for &(params, _) in &buckets {
                        for t in 0..plan.tp {
                            let after = prev[t as usize].expect("a bucket before");
                            let end = e.collective("allgather", "ring", &hosts_of(t), params * plan.bytes_per_value, 2, (true, (p * plan.tp + t) as usize), &[after]);
                            prev[t as usize] = Some(end);
                        }
                    }
                }
                last_ends = prev.into_iter().flatten().collect();
            }
            for d in 0..dp {
                let s = e.group(p, d);
                let j = e.join(Role::Marker);
                e.g.edge(e.stream[s], j, Trigger::Delivered, Time::ZERO);
                for &b in &last_ends {
                    e.g.edge(b, j, Trigger::Delivered, Time::ZERO);
                }
                e.stream[s] = j;
                ends.push(j);
            }
        }
        let end = e.join(Role::Marker);
        for &j in &ends {
            e.g.edge(j, end, Trigger::Delivered, Time::ZERO);
        }
        iteration_ends.push(end);
    }
    let Emitter { g, mut roles, .. } = e;
    let mut t = g.finish();
    roles.resize(t.tasks.len(), Role::Marker);
    t.step = Some(std::sync::Arc::new(StepMap { roles, iteration_ends, lines: plan.lines() }));
    t
}

/// The join where pass (forward?, stage, replica, micro-batch) arrives, made when first needed.
fn arrival(e: &mut Emitter, arrivals: &mut HashMap<(bool, u32, u32, u32), u32>, key: (bool, u32, u32, u32)) -> u32 {
    if let Some(&j) = arrivals.get(&key) {
        return j;
    }
    let j = e.join(Role::Marker);
    arrivals.insert(key, j);
    j
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::graph::TaskKind;

    fn params(model: ModelConfig, tp: u32, pp: u32, dp: u32) -> TrainingParams {
        TrainingParams { model, parallelism: ParallelismConfig { tp, pp, dp: Some(dp), ..ParallelismConfig::default() }, ..TrainingParams::default() }
    }

    fn small(layers: u32, micro_batches: u64) -> ModelConfig {
        ModelConfig { layers, hidden: 64, heads: 4, seq: 32, vocab: 128, global_batch: Some(micro_batches), ..ModelConfig::default() }
    }

    #[test]
    fn counted_sizes_are_the_built_graphs() {
        let mut rng = crate::rng::Rng::stream(3, "training-sizes", 0);
        for case in 0..120 {
            let (tp, pp, dp) = ([1, 2, 4][rng.below(3) as usize], 1 + rng.below(3) as u32, 1 + rng.below(3) as u32);
            let layers = pp + rng.below(5) as u32;
            let mut p = params(small(layers, dp as u64 * (1 + rng.below(5))), tp, pp, dp);
            p.parallelism.recompute = rng.below(2) == 0;
            p.parallelism.bucket_params = Some([1_000, 30_000, 1 << 30][rng.below(3) as usize]);
            p.iterations = 1 + rng.below(2) as u32;
            p.chunk = ByteSize([1000, 4096, 1 << 20][rng.below(3) as usize]);
            p.qps = 1 + rng.below(2) as u32;
            if rng.below(3) == 0 {
                p.parallelism.tp_network = "analytic".into();
            }
            p.parallelism.distributed_optimizer = rng.below(2) == 0;
            let plan = Plan::of(&p, 64).unwrap();
            let counted = size(&plan, p.chunk.0, p.qps);
            let analytic = p.parallelism.tp_network == "analytic" && tp > 1;
            let built = GraphSize::of(&generate_with(&p, &plan, analytic.then_some((crate::units::BitsPerSec(3_600_000_000_000), Time(1_000_000)))));
            let what = format!("case {case}: tp {tp} pp {pp} dp {dp} layers {layers}: counted {counted:?}, built {built:?}");
            assert_eq!((counted.tasks, counted.messages, counted.edges), (built.tasks, built.messages, built.edges), "{what}");
            assert!(built.conns <= counted.conns, "{what}");
        }
    }

    //= type=test
    //# Narayanan et al. (SC '21) §5.1: with activation recomputation an iteration takes
    //# 96·B·s·l·h²·(1 + s/6h + V/16lh) FLOPs; GPT-3 175B has 12h² weights per layer.
    #[test]
    fn flops_and_weights_follow_the_papers_formulas() {
        let m = ModelConfig { global_batch: Some(1536), ..ModelConfig::default() };
        let mut p = params(m, 8, 16, 8);
        p.parallelism.recompute = true;
        let plan = Plan::of(&p, 1024).unwrap();
        let (b, s, l, h, v) = (1536.0, 2048.0, 96.0, 12288.0, 51200.0);
        let paper = 96.0 * b * s * l * h * h * (1.0 + s / (6.0 * h) + v / (16.0 * l * h));
        assert!((plan.iteration_flops() / paper - 1.0).abs() < 1e-12, "{} vs {paper}", plan.iteration_flops());
        assert_eq!(plan.layer_params, 12 * 12288 * 12288);
        let total: u64 = (0..16).map(|p| plan.stage_params(p)).sum();
        assert!((174e9..176e9).contains(&(total as f64)), "{total}");
        // A Llama-2-70B-like model (grouped-query attention, SwiGLU): 68.98 B weights.
        let llama = ModelConfig { layers: 80, hidden: 8192, heads: 64, kv_heads: Some(8), ffn: Some(28672), gated_ffn: true, seq: 4096, vocab: 32000, global_batch: Some(64), ..ModelConfig::default() };
        let plan = Plan::of(&params(llama, 8, 4, 2), 64).unwrap();
        let total: u64 = (0..4).map(|p| plan.stage_params(p)).sum();
        assert_eq!(total, 80 * (8192 * (8192 + 2 * 1024) + 8192 * 8192 + 3 * 8192 * 28672) + 2 * 32000 * 8192);
        assert!((68.9e9..69.1e9).contains(&(total as f64)), "{total}");
    }

    /// Payload bytes of the graph per group kind, as the summary counts them.
    fn bytes_by_group(t: &crate::workload::graph::Traffic) -> [u64; 4] {
        let mut out = [0u64; 4];
        for (task, k) in t.step_sends() {
            if let TaskKind::Send { bytes, .. } = t.tasks[task as usize].kind() {
                out[k] += bytes;
            }
        }
        out
    }

    //= type=test
    //# The generator's bytes per iteration equal the closed forms on three models: a ring
    //# AllReduce of S over N ranks sends 2(N−1) segments of ⌈S/N⌉ per rank, an AllGather N−1;
    //# TP: 4 AllReduces of b·s·h values per layer and micro-batch (6 with recomputation), one
    //# more on the first and on the last stage, an AllGather per received pass; PP: b·s·h
    //# values per pass between neighbouring stages; DP: every stage's weights once per TP rank.
    #[test]
    fn bytes_per_group_are_the_formulas() {
        let gpt = ModelConfig { layers: 8, hidden: 512, heads: 8, seq: 256, vocab: 1024, micro_batch: 2, global_batch: Some(16), ..ModelConfig::default() };
        let llama = ModelConfig { layers: 6, hidden: 512, heads: 8, kv_heads: Some(2), ffn: Some(1376), gated_ffn: true, seq: 128, vocab: 2000, global_batch: Some(12), ..ModelConfig::default() };
        let uneven = ModelConfig { layers: 7, hidden: 384, heads: 6, seq: 64, vocab: 500, global_batch: Some(9), ..ModelConfig::default() };
        for (model, tp, pp, dp, recompute) in [(gpt, 4, 2, 2, false), (llama, 2, 3, 2, true), (uneven, 3, 3, 3, false)] {
            let mut p = params(model.clone(), tp, pp, dp);
            p.parallelism.recompute = recompute;
            // The distributed optimizer's ReduceScatter and AllGather move the AllReduce's bytes.
            p.parallelism.distributed_optimizer = recompute;
            p.parallelism.bucket_params = Some(500_000);
            let plan = Plan::of(&p, 64).unwrap();
            let t = generate(&p, 64, None, Room::UNLIMITED).unwrap();
            let (tp64, dp64) = (tp as u64, dp as u64);
            let a = model.micro_batch * model.seq * model.hidden * 2;
            let m = plan.micro_batches as u64;
            let ring = |n: u64, s: u64, steps: u64| if n > 1 { n * steps * s.div_ceil(n) } else { 0 };
            let (mut tp_bytes, mut pp_bytes, mut dp_bytes) = (0, 0, 0);
            for s in 0..pp {
                let l = plan.stage_layers[s as usize] as u64;
                let ends = u64::from(s == 0) + u64::from(s + 1 == pp);
                let neighbours = u64::from(s > 0) + u64::from(s + 1 < pp);
                let per_layer = if recompute { 6 } else { 4 };
                tp_bytes += dp64 * m * ((per_layer * l + ends) * ring(tp64, a, 2 * (tp64 - 1)) + neighbours * ring(tp64, a, tp64 - 1));
                pp_bytes += dp64 * m * neighbours * tp64 * a.div_ceil(tp64);
                // Weights of the stage, per TP rank, bucketed.
                let layer = model.hidden * (model.hidden + 2 * model.hidden * model.kv_heads.unwrap_or(model.heads) as u64 / model.heads as u64) + model.hidden * model.hidden + if model.gated_ffn { 3 } else { 2 } * model.hidden * model.ffn.unwrap_or(4 * model.hidden);
                assert_eq!(layer, plan.layer_params);
                let buckets = plan.buckets(s);
                let weights: u64 = buckets.iter().map(|b| b.0).sum();
                let stage = l * layer + ends * model.vocab * model.hidden;
                // Each bucket rounds its share per TP rank up.
                assert!(weights * tp64 >= stage && weights * tp64 < stage + buckets.len() as u64 * tp64, "stage {s}: {weights} × {tp} against {stage}");
                dp_bytes += tp64 * buckets.iter().map(|b| ring(dp64, b.0 * 2, 2 * (dp64 - 1))).sum::<u64>();
            }
            let got = bytes_by_group(&t);
            assert_eq!(got, [tp_bytes, pp_bytes, dp_bytes, 0], "tp {tp} pp {pp} dp {dp}");
            // And `check`'s per-GPU figures add up to the same.
            let per_gpu: (u64, u64, u64) = (0..pp).map(|s| plan.bytes_per_gpu(s)).fold((0, 0, 0), |a, b| (a.0 + b.0 * tp64 * dp64, a.1 + b.1 * tp64 * dp64, a.2 + b.2 * tp64 * dp64));
            assert_eq!(per_gpu.1, pp_bytes);
        }
    }

    #[test]
    fn bad_shapes_name_their_key() {
        let refused = |p: TrainingParams, hosts: u32| match Plan::of(&p, hosts) {
            Err(Error::Invalid { key, .. }) => key,
            other => panic!("accepted: {other:?}"),
        };
        assert_eq!(refused(params(small(4, 4), 3, 1, 1), 8), "workload.parallelism.tp");
        assert_eq!(refused(params(small(4, 3), 1, 2, 2), 8), "workload.model.global_batch");
        assert_eq!(refused(params(small(4, 4), 2, 2, 4), 8), "workload.parallelism.dp");
        assert_eq!(refused(params(small(2, 4), 1, 3, 1), 8), "workload.parallelism.pp");
        let mut p = params(small(4, 4), 1, 1, 4);
        p.model.kv_heads = Some(3);
        assert_eq!(refused(p, 8), "workload.model.kv_heads");
        let mut p = params(small(4, 4), 1, 1, 4);
        p.gpu.efficiency = 1.5;
        assert_eq!(refused(p, 8), "workload.gpu.efficiency");
        let mut p = params(small(4, 4), 1, 1, 4);
        p.parallelism.dp_algorithm = "hier".into();
        assert_eq!(refused(p, 8), "workload.parallelism.dp_algorithm");
    }
}
