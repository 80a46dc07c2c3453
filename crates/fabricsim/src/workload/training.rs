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
//! - **Mixture of experts** (`experts`, `top_k`; Shazeer et al. 2017, GShard and Switch
//!   Transformer's expert parallelism, as Megatron-Core runs it): every layer's MLP becomes
//!   `experts` expert MLPs (inner size `expert_ffn`) and a router (h·E weights, 2·b·s·h·E FLOPs);
//!   each token goes through top-k experts, so the block does k expert MLPs' FLOPs per token.
//!   **Expert parallelism** (`ep`) spreads the experts over `ep` consecutive replicas of a
//!   stage, E/ep on each; around the experts every GPU exchanges its micro-batch's tokens with
//!   the GPUs of its TP rank in the EP group by AllToAll, b·s·k·h values per GPU (dispatch before
//!   the experts and combine after, forward; their gradients backward; again under
//!   recomputation). Assumptions: routing is balanced (each GPU sends 1/ep of its tokens to each
//!   peer), the experts are split over the TP ranks as the dense MLP is (expert tensor
//!   parallelism = tp), so every TP rank dispatches all the micro-batch's tokens and the MLP's TP
//!   AllReduce stays; capacity limits and dropped tokens are not modelled. The experts'
//!   gradients are reduced in buckets of their own across the dp/ep replicas holding the same
//!   experts (replicas d ≡ j mod ep), the rest across all dp.
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
//! order, `order = "tp-dp-pp"`: TP innermost, so a TP group is consecutive GPUs, one server's
//! when tp is at most its GPU count), or t + tp·(p + pp·d) (`"tp-pp-dp"`, Megatron-Core's
//! `--use-tp-pp-dp-mapping`: a replica's stages on neighbouring servers, its DP peers far
//! apart), rank i on host i.

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
pub const SUMMARY: &str = "training steps of a transformer (layers, hidden, heads, FFN, sequence, batch, optional mixture of experts) under TP/PP (1F1B)/DP with overlapped gradient buckets and EP AllToAlls";
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
    /// Experts of each layer's mixture-of-experts MLP (0: a dense MLP).
    pub experts: u32,
    /// Experts each token is routed to (default min(2, experts)).
    pub top_k: Option<u32>,
    /// An expert's MLP inner size (default `ffn`).
    pub expert_ffn: Option<u64>,
}

impl Default for ModelConfig {
    fn default() -> Self {
        ModelConfig { layers: 96, hidden: 12288, heads: 96, kv_heads: None, ffn: None, gated_ffn: false, seq: 2048, vocab: 51200, micro_batch: 1, global_batch: None, bytes_per_value: 2, experts: 0, top_k: None, expert_ffn: None }
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
    /// Expert-parallel size: the experts of a layer spread over `ep` consecutive replicas (the
    /// same stage and TP rank), which exchange tokens by AllToAll; it divides `dp` and the
    /// experts.
    pub ep: u32,
    /// How ranks map to GPUs, innermost first: `"tp-dp-pp"` or `"tp-pp-dp"`.
    pub order: String,
}

impl Default for ParallelismConfig {
    fn default() -> Self {
        ParallelismConfig { tp: 1, pp: 1, dp: None, bucket_params: None, recompute: false, tp_algorithm: "ring".into(), dp_algorithm: "ring".into(), tp_network: "packets".into(), distributed_optimizer: false, ep: 1, order: ORDERS[0].into() }
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

/// Rank orders (`parallelism.order`), innermost first; the first is the default.
pub const ORDERS: [&str; 2] = ["tp-dp-pp", "tp-pp-dp"];

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
    /// FLOPs of one layer's MLP block, forward, one micro-batch, whole (with experts: the
    /// router's and top-k experts' per token).
    pub mlp_flops: f64,
    /// FLOPs of the logit layer, forward, one micro-batch, whole.
    pub logit_flops: f64,
    /// Bytes of one micro-batch's activations (b·s·h values).
    pub activation_bytes: u64,
    /// Weights of one layer outside its experts (with experts: attention and router).
    pub layer_params: u64,
    /// Experts per layer (0: dense), experts per token, expert-parallel size.
    pub experts: u32,
    /// See `experts`.
    pub top_k: u32,
    /// See `experts`.
    pub ep: u32,
    /// Weights of the experts one EP rank holds in one layer (experts / ep of them; its TP
    /// ranks hold 1/tp each).
    pub expert_params: u64,
    /// Bytes one GPU sends in one token AllToAll (dispatch or combine) of one layer and
    /// micro-batch: its micro-batch's tokens, top-k copies, h values each.
    pub dispatch_bytes: u64,
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
    /// Ranks in `"tp-pp-dp"` order (a replica's stages next to each other).
    pub stages_inner: bool,
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
        let moe = m.experts > 0;
        if !moe {
            for (key, given) in [("workload.model.top_k", m.top_k.is_some()), ("workload.model.expert_ffn", m.expert_ffn.is_some())] {
                if given {
                    return Err(Error::invalid(key, "needs `experts` (a mixture-of-experts MLP); without it the MLP is dense"));
                }
            }
        }
        positive("workload.model.experts", m.experts.max(1) as u64, 1 << 12)?;
        let top_k = m.top_k.unwrap_or(m.experts.min(2));
        if moe && !(1..=m.experts).contains(&top_k) {
            return Err(Error::invalid("workload.model.top_k", format!("{top_k}: allowed 1..={} (the experts)", m.experts)));
        }
        let expert_ffn = m.expert_ffn.unwrap_or(ffn);
        positive("workload.model.expert_ffn", expert_ffn, MAX_DIM)?;
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
        positive("workload.parallelism.ep", par.ep as u64, 1 << 16)?;
        if par.ep > 1 && !moe {
            return Err(Error::invalid("workload.parallelism.ep", format!("{}: expert parallelism needs `model.experts`", par.ep)));
        }
        if dp % par.ep != 0 || (moe && m.experts % par.ep != 0) {
            return Err(Error::invalid("workload.parallelism.ep", format!("{}: must divide dp = {dp} and the {} experts", par.ep, m.experts)));
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
        let stages_inner = match ORDERS.iter().position(|o| *o == par.order) {
            Some(i) => i == 1,
            None => return Err(Error::invalid("workload.parallelism.order", format!("`{}`; allowed: `{}`, `{}`", crate::excerpt::clip(&par.order), ORDERS[0], ORDERS[1]))),
        };
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
        let matrices = if m.gated_ffn { 3 } else { 2 };
        let attention_params = m.hidden * (m.hidden + 2 * m.hidden * kv as u64 / m.heads as u64) + m.hidden * m.hidden;
        // With experts: the router's h·E weights beside attention; the experts apart.
        let layer_params = attention_params + if moe { m.hidden * m.experts as u64 } else { matrices * m.hidden * ffn };
        let expert_params = (m.experts / par.ep) as u64 * matrices * m.hidden * expert_ffn;
        // Every count below stays an exact u64 when the model's weights and a micro-batch's
        // activations (top-k copies of them for a dispatch) do.
        let weights = m.layers as u128 * (layer_params as u128 + par.ep as u128 * expert_params as u128) + 2 * m.vocab as u128 * m.hidden as u128;
        if weights > 1 << 50 {
            return Err(Error::invalid("workload.model.layers", format!("a model of {weights} weights; allowed up to 2^50")));
        }
        let activations = m.micro_batch as u128 * m.seq as u128 * m.hidden as u128 * m.bytes_per_value as u128;
        if activations * top_k.max(1) as u128 > 1 << 40 {
            return Err(Error::invalid("workload.model.micro_batch", format!("{activations} bytes of activations per micro-batch (micro_batch × seq × hidden × bytes_per_value, × top_k with experts); allowed up to 2^40")));
        }
        Ok(Plan {
            tp: par.tp,
            pp: par.pp,
            dp,
            micro_batches: (global / per_step) as u32,
            stage_layers,
            attention_flops: 2.0 * b * s * h * (h + 2.0 * h_kv) + 4.0 * b * s * s * h + 2.0 * b * s * h * h,
            mlp_flops: if moe { 2.0 * b * s * h * m.experts as f64 + top_k as f64 * 2.0 * k * b * s * h * expert_ffn as f64 } else { 2.0 * k * b * s * h * f },
            logit_flops: 2.0 * b * s * h * v,
            activation_bytes: m.micro_batch * m.seq * m.hidden * m.bytes_per_value,
            layer_params,
            experts: m.experts,
            top_k,
            ep: par.ep,
            expert_params,
            dispatch_bytes: activations as u64 * top_k as u64,
            embedding_params: m.vocab * m.hidden,
            bucket_params: bucket,
            bytes_per_value: m.bytes_per_value,
            recompute: par.recompute,
            flops_per_ps,
            tp_algorithm,
            dp_algorithm,
            tp_analytic,
            distributed_optimizer: par.distributed_optimizer,
            stages_inner,
            iterations: p.iterations,
        })
    }

    /// GPUs in use.
    pub fn gpus(&self) -> u32 {
        self.tp * self.pp * self.dp
    }

    /// The host of TP rank `t` of replica `d` on stage `p`.
    pub fn rank(&self, p: u32, d: u32, t: u32) -> u32 {
        if self.stages_inner {
            t + self.tp * (p + self.pp * d)
        } else {
            t + self.tp * (d + self.dp * p)
        }
    }

    /// Compute time of `flops` split over the TP ranks.
    fn compute_time(&self, flops: f64) -> Time {
        Time((flops / self.tp as f64 / self.flops_per_ps).round() as u64)
    }

    /// The weights of stage `p`, every expert included (one TP rank of one EP rank holds 1/tp of
    /// the rest and 1/tp of its experts).
    pub fn stage_params(&self, p: u32) -> u64 {
        let layers = self.stage_layers[p as usize] as u64 * (self.layer_params + self.ep as u64 * self.expert_params);
        let embedding = if p == 0 { self.embedding_params } else { 0 } + if p + 1 == self.pp { self.embedding_params } else { 0 };
        layers + embedding
    }

    /// The gradient buckets of stage `p` in the order the backward pass fills them: per bucket,
    /// (parameters per TP rank, the layer of the stage whose backward closes it, counted from
    /// the stage's last; `layers` for the embedding). Without the experts' weights.
    pub fn buckets(&self, p: u32) -> Vec<(u64, u32)> {
        self.bucket_list(p, self.layer_params, true)
    }

    /// The buckets of the experts' gradients of stage `p` on one EP rank (reduced across the
    /// replicas holding the same experts), as `buckets`; none without experts.
    pub fn expert_buckets(&self, p: u32) -> Vec<(u64, u32)> {
        if self.experts == 0 {
            return Vec::new();
        }
        self.bucket_list(p, self.expert_params, false)
    }

    /// Replicas holding the same experts: dp / ep.
    pub fn expert_dp(&self) -> u32 {
        self.dp / self.ep
    }

    fn bucket_list(&self, p: u32, per_layer: u64, embeddings: bool) -> Vec<(u64, u32)> {
        let n = self.stage_layers[p as usize];
        let mut out = Vec::new();
        let mut acc = if embeddings && p + 1 == self.pp { self.embedding_params } else { 0 };
        for done in 0..n {
            acc += per_layer;
            if acc >= self.bucket_params {
                out.push((acc.div_ceil(self.tp as u64), done));
                acc = 0;
            }
        }
        if embeddings && p == 0 {
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
    /// (`cost`), for stage `p`: TP, PP, DP, EP.
    pub fn bytes_per_gpu(&self, p: u32) -> [u64; 4] {
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
        let experts: u64 = self.expert_buckets(p).iter().map(|&(params, _)| bus(self.dp_algorithm, self.expert_dp(), params * self.bytes_per_value)).sum();
        let a2a = if self.ep > 1 { collective::cost("alltoall", "direct", self.ep as u64, self.dispatch_bytes, 1).0 } else { 0 };
        let ep = m * layers * self.alltoalls_per_layer() * a2a;
        let it = self.iterations as u64;
        [tp * it, pp * it, (dp + experts) * it, ep * it]
    }

    /// Token AllToAlls of one layer and micro-batch: dispatch and combine forward, their
    /// gradients backward, and the forward's again under recomputation; none without EP.
    pub fn alltoalls_per_layer(&self) -> u64 {
        if self.ep > 1 { if self.recompute { 6 } else { 4 } } else { 0 }
    }

    /// Lines for `fabricsim check`: the step's shape, its FLOPs and bytes per GPU.
    pub fn lines(&self) -> Vec<String> {
        let mut out = vec![format!(
            "training      {} GPUs: tp {} × pp {} × dp {}{}, {} micro-batches per replica, layers per stage {}, {} iteration(s)",
            self.gpus(),
            self.tp,
            self.pp,
            self.dp,
            if self.stages_inner { " (ranks tp-pp-dp)" } else { "" },
            self.micro_batches,
            show_layers(&self.stage_layers),
            self.iterations
        )];
        out.push(format!("              {:.4e} FLOPs per iteration; per GPU and micro-batch and layer: attention {:.4e}, MLP {:.4e} forward", self.iteration_flops(), self.attention_flops / self.tp as f64, self.mlp_flops / self.tp as f64));
        if self.experts > 0 {
            out.push(format!(
                "              experts: {} per layer, top-{}, ep {} ({} per GPU, their gradients across {} replicas); {} bytes per GPU per token AllToAll",
                self.experts,
                self.top_k,
                self.ep,
                self.experts / self.ep,
                self.expert_dp(),
                self.dispatch_bytes
            ));
        }
        for p in 0..self.pp {
            let [tp, pp, dp, ep] = self.bytes_per_gpu(p);
            let ep = if self.ep > 1 { format!(", EP {ep}") } else { String::new() };
            let buckets = self.buckets(p).len() + self.expert_buckets(p).len();
            out.push(format!("              stage {p}: {} weights, {buckets} gradient buckets; bytes sent per GPU: TP {tp}, PP {pp}, DP {dp}{ep}", self.stage_params(p)));
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
        // Token AllToAlls: per EP group and point, a gate joining its members' streams, one
        // instance per TP rank, and the join they all go on from.
        let a2a_points = (plan.dp / plan.ep) as u64 * m * layers * plan.alltoalls_per_layer();
        let a2a = if plan.ep > 1 { tasks(2, (plan.ep + plan.tp) as u64).plus(instance("alltoall", "direct", plan.ep, plan.dispatch_bytes, 1).times(plan.tp as u64)).times(a2a_points) } else { GraphSize::default() };
        // One TP rank's chain of gradient buckets across `n` replicas.
        let chain = |buckets: &[(u64, u32)], n: u32| {
            let mut out = GraphSize::default();
            if n > 1 {
                let reduce = if plan.distributed_optimizer { "reducescatter" } else { "allreduce" };
                for (k, &(params, _)) in buckets.iter().enumerate() {
                    out = out.plus(instance(reduce, plan.dp_algorithm, n, params * plan.bytes_per_value, n as u64 + u64::from(k > 0)));
                }
                // The distributed optimizer's AllGathers, each after the one before (the first
                // after the last ReduceScatter).
                if plan.distributed_optimizer {
                    for &(params, _) in buckets {
                        out = out.plus(instance("allgather", "ring", n, params * plan.bytes_per_value, 1));
                    }
                }
            }
            out
        };
        let experts = plan.expert_buckets(p);
        let dp = chain(&plan.buckets(p), plan.dp).plus(chain(&experts, plan.expert_dp()).times(plan.ep as u64)).times(plan.tp as u64);
        // Each replica's end of the iteration: its stream and every TP rank's last bucket, and
        // last expert bucket.
        let last_buckets = u64::from(plan.dp > 1) + u64::from(!experts.is_empty() && plan.expert_dp() > 1);
        let end = tasks(1, 1 + last_buckets * plan.tp as u64);
        one = one.plus(stream.plus(end).times(plan.dp as u64)).plus(dp).plus(a2a);
    }
    let groups = plan.pp as u64 * plan.dp as u64;
    let step_end = tasks(1, groups);
    // TP rings, DP and expert-DP rings (two successors per rank at most, per algorithm), the
    // pipeline's pairs both ways, the EP group's peers: a bound.
    let conns = plan.gpus() as u64 * qps as u64 * (10 + plan.ep as u64);
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

/// Communicators: TP groups (stage, replica), DP groups (stage, TP rank), EP groups ((stage,
/// TP rank), EP group), expert-DP groups ((stage, TP rank), EP rank).
const COMM_TP: usize = 0;
const COMM_DP: usize = 1;
const COMM_EP: usize = 2;
const COMM_EXPERT_DP: usize = 3;

/// Builds the graph of a step, keeping each task's role.
struct Emitter<'a> {
    plan: &'a Plan,
    g: GraphBuilder,
    roles: Vec<Role>,
    chunk: u64,
    qps: u32,
    /// Per communicator kind (`COMM_TP`, ...) and group of it: its connections keyed by rank
    /// pair and queue pair.
    conns: [Vec<HashMap<(u32, u32, u32), u32>>; 4],
    /// Token AllToAlls emitted in this iteration: (stage, EP group, ordinal) → the gate its
    /// members' streams join and the join they go on from.
    alltoalls: HashMap<(u32, u32, u32), (u32, u32)>,
    /// Per stream: token AllToAlls it has reached in this iteration.
    alltoalls_reached: Vec<u32>,
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
    fn collective(&mut self, op: &'static str, alg: &'static str, hosts: &[NodeId], bytes: u64, kind: usize, comm: (usize, usize), deps: &[u32]) -> u32 {
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
                collective::emit(&mut self.g, &mut self.conns[comm.0][comm.1], hosts, &c, inst, self.chunk, self.qps, Time::ZERO)
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
        let end = self.collective(op, alg, &hosts, self.plan.activation_bytes, 0, (COMM_TP, s), &deps);
        // The stream goes on when the collective has ended.
        let j = self.join(Role::Marker);
        self.g.edge(end, j, Trigger::Delivered, Time::ZERO);
        self.stream[s] = j;
    }

    /// Stream (p, d) reaches a token AllToAll of its EP group (none without EP): one per TP rank
    /// among the group's GPUs of that rank, starting when every member's stream has reached it
    /// (made by the first to); the streams go on when all have ended.
    fn token_alltoall(&mut self, p: u32, d: u32) {
        let plan = self.plan;
        if plan.ep == 1 {
            return;
        }
        let s = self.group(p, d);
        let g = d / plan.ep;
        let ordinal = self.alltoalls_reached[s];
        self.alltoalls_reached[s] += 1;
        let (gate, done) = match self.alltoalls.get(&(p, g, ordinal)) {
            Some(&v) => v,
            None => {
                let gate = self.join(Role::Marker);
                let groups = plan.dp / plan.ep;
                let ends: Vec<u32> = (0..plan.tp)
                    .map(|t| {
                        let hosts: Vec<NodeId> = (0..plan.ep).map(|j| NodeId(plan.rank(p, g * plan.ep + j, t))).collect();
                        self.collective("alltoall", "direct", &hosts, plan.dispatch_bytes, 3, (COMM_EP, ((p * plan.tp + t) * groups + g) as usize), &[gate])
                    })
                    .collect();
                let done = self.join(Role::Marker);
                for end in ends {
                    self.g.edge(end, done, Trigger::Delivered, Time::ZERO);
                }
                self.alltoalls.insert((p, g, ordinal), (gate, done));
                (gate, done)
            }
        };
        self.g.edge(self.stream[s], gate, Trigger::Delivered, Time::ZERO);
        self.stream[s] = done;
    }

    /// The MLP block of stream (p, d) taking `time`: with EP, between the tokens' dispatch and
    /// their combine.
    fn mlp(&mut self, p: u32, d: u32, time: Time) {
        self.token_alltoall(p, d);
        self.compute(p, d, time, None);
        self.token_alltoall(p, d);
    }

    /// TP rank `t`'s chain of gradient buckets of stage `p` across `replicas` on communicator
    /// `comm`: each bucket reduced once every replica's backward has closed it (`ready[k][d]`)
    /// and the bucket before is, then with the distributed optimizer the parameters gathered
    /// back; returns the chain's last end per TP rank (none on one replica).
    fn reduce_buckets(&mut self, p: u32, buckets: &[(u64, u32)], ready: &[Vec<u32>], replicas: &[u32], comm: impl Fn(u32) -> (usize, usize)) -> Vec<u32> {
        let plan = self.plan;
        if replicas.len() < 2 {
            return Vec::new();
        }
        let mut prev: Vec<Option<u32>> = vec![None; plan.tp as usize];
        let reduce = if plan.distributed_optimizer { "reducescatter" } else { "allreduce" };
        let hosts_of = |t: u32| replicas.iter().map(|&d| NodeId(plan.rank(p, d, t))).collect::<Vec<NodeId>>();
        for (k, &(params, _)) in buckets.iter().enumerate() {
            for t in 0..plan.tp {
                let mut deps: Vec<u32> = replicas.iter().map(|&d| ready[k][d as usize]).collect();
                deps.extend(prev[t as usize]);
                let end = self.collective(reduce, plan.dp_algorithm, &hosts_of(t), params * plan.bytes_per_value, 2, comm(t), &deps);
                prev[t as usize] = Some(end);
            }
        }
        // The distributed optimizer: the updated parameters gathered back, bucket by bucket,
        // once every gradient is reduced.
        if plan.distributed_optimizer {
            for &(params, _) in buckets {
                for t in 0..plan.tp {
                    let after = prev[t as usize].expect("a bucket before");
                    let end = self.collective("allgather", "ring", &hosts_of(t), params * plan.bytes_per_value, 2, comm(t), &[after]);
                    prev[t as usize] = Some(end);
                }
            }
        }
        prev.into_iter().flatten().collect()
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
/// `one_way`, a model rather than a bound: the algorithm's bus bytes at the rate on payload
/// bytes (the scale-up link's own framing is not modelled) plus each of its pipeline-fill hops
/// of a chunk in full (the ideal CCT of `ccts.csv` leaves out the last one's serialization,
/// which its bytes already count; a real pipeline starts one chunk late), never less than its
/// chain of chunk hops, plus its round trips and one one-way latency more, as a packet
/// instance ends when its last message is acknowledged.
pub fn analytic_cct(inst: &super::graph::Instance, rate: crate::units::BitsPerSec, one_way: Time) -> Time {
    use crate::units::Bytes;
    let hop = rate.tx_time(Bytes(inst.hop_chunk())) + one_way;
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
        conns: [
            vec![HashMap::new(); (plan.pp * plan.dp) as usize],
            vec![HashMap::new(); (plan.pp * plan.tp) as usize],
            vec![HashMap::new(); (plan.pp * plan.tp * (plan.dp / plan.ep)) as usize],
            vec![HashMap::new(); (plan.pp * plan.tp * plan.ep) as usize],
        ],
        alltoalls: HashMap::new(),
        alltoalls_reached: vec![0; (plan.pp * plan.dp) as usize],
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
        e.alltoalls.clear();
        e.alltoalls_reached.iter_mut().for_each(|n| *n = 0);
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
            // Per bucket, each replica's task that closes it (last micro-batch's backward), in
            // replica order; likewise the experts' buckets.
            let buckets = plan.buckets(p);
            let mut bucket_ready: Vec<Vec<u32>> = vec![Vec::new(); buckets.len()];
            let expert_buckets = plan.expert_buckets(p);
            let mut expert_ready: Vec<Vec<u32>> = vec![Vec::new(); expert_buckets.len()];
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
                            e.mlp(p, d, fwd_mlp);
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
                        let mut next = [0, 0];
                        for done in 0..layers {
                            if plan.recompute {
                                e.compute(p, d, fwd_attention, None);
                                e.tp_collective(p, d, "allreduce", None);
                                e.mlp(p, d, fwd_mlp);
                                e.tp_collective(p, d, "allreduce", None);
                            }
                            e.mlp(p, d, plan.compute_time(2.0 * plan.mlp_flops));
                            e.tp_collective(p, d, "allreduce", None);
                            e.compute(p, d, plan.compute_time(2.0 * plan.attention_flops), None);
                            if m + 1 == mb {
                                let s = e.stream[e.group(p, d)];
                                close_buckets(&buckets, &mut bucket_ready, &mut next[0], Some(done), s);
                                close_buckets(&expert_buckets, &mut expert_ready, &mut next[1], Some(done), s);
                            }
                            e.tp_collective(p, d, "allreduce", None);
                        }
                        if m + 1 == mb {
                            let s = e.stream[e.group(p, d)];
                            close_buckets(&buckets, &mut bucket_ready, &mut next[0], None, s);
                            close_buckets(&expert_buckets, &mut expert_ready, &mut next[1], None, s);
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
            // The stage's gradient buckets, one chain per TP rank across the replicas; the
            // experts' per TP rank and EP rank across the replicas holding the same experts.
            let all: Vec<u32> = (0..dp).collect();
            let last_ends = e.reduce_buckets(p, &buckets, &bucket_ready, &all, |t| (COMM_DP, (p * plan.tp + t) as usize));
            let expert_last_ends: Vec<Vec<u32>> = (0..plan.ep)
                .map(|j| {
                    let holders: Vec<u32> = (j..dp).step_by(plan.ep as usize).collect();
                    e.reduce_buckets(p, &expert_buckets, &expert_ready, &holders, |t| (COMM_EXPERT_DP, ((p * plan.tp + t) * plan.ep + j) as usize))
                })
                .collect();
            for d in 0..dp {
                let s = e.group(p, d);
                let j = e.join(Role::Marker);
                e.g.edge(e.stream[s], j, Trigger::Delivered, Time::ZERO);
                for &b in last_ends.iter().chain(&expert_last_ends[(d % plan.ep) as usize]) {
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

/// Replica's stream task `s` closes the buckets of `list` from `next` on whose closing layer is
/// `done` (all the rest: `None`).
fn close_buckets(list: &[(u64, u32)], ready: &mut [Vec<u32>], next: &mut usize, done: Option<u32>, s: u32) {
    while *next < list.len() && done.is_none_or(|l| list[*next].1 == l) {
        ready[*next].push(s);
        *next += 1;
    }
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
            p.parallelism.order = ORDERS[rng.below(2) as usize].into();
            // Half the cases a mixture of experts, spread over every replica or kept on each.
            if rng.below(2) == 0 {
                p.model.experts = 6;
                p.model.top_k = Some(1 + rng.below(2) as u32);
                p.parallelism.ep = if rng.below(2) == 0 { dp } else { 1 };
            }
            let plan = Plan::of(&p, 64).unwrap();
            let counted = size(&plan, p.chunk.0, p.qps);
            let analytic = p.parallelism.tp_network == "analytic" && tp > 1;
            let built = GraphSize::of(&generate_with(&p, &plan, analytic.then_some((crate::units::BitsPerSec(3_600_000_000_000), Time(1_000_000)))));
            let what = format!("case {case}: tp {tp} pp {pp} dp {dp} ep {} layers {layers}: counted {counted:?}, built {built:?}", plan.ep);
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

    //= type=test
    //# A mixture-of-experts layer (Mixtral-like: 8 experts, top-2, SwiGLU) holds the router's h·E
    //# weights beside attention and E·3·h·f_e in its experts; its MLP block does top-k experts'
    //# FLOPs per token and the router's.
    #[test]
    fn experts_weights_and_flops() {
        let moe = ModelConfig { layers: 32, hidden: 4096, heads: 32, kv_heads: Some(8), ffn: Some(14336), gated_ffn: true, seq: 4096, vocab: 32000, global_batch: Some(16), experts: 8, top_k: Some(2), ..ModelConfig::default() };
        let mut p = params(moe, 1, 4, 8);
        p.parallelism.ep = 8;
        let plan = Plan::of(&p, 64).unwrap();
        let (h, f) = (4096u64, 14336u64);
        assert_eq!(plan.layer_params, h * (h + 2 * 1024) + h * h + h * 8);
        assert_eq!(plan.expert_params, 3 * h * f);
        let total: u64 = (0..4).map(|s| plan.stage_params(s)).sum();
        // Mixtral 8x7B's 46.7 B weights (norms left out).
        assert!((46.6e9..46.8e9).contains(&(total as f64)), "{total}");
        let (b, s) = (1.0, 4096.0);
        assert_eq!(plan.mlp_flops, 2.0 * b * s * h as f64 * 8.0 + 2.0 * 2.0 * 3.0 * b * s * h as f64 * f as f64);
        assert_eq!(plan.dispatch_bytes, 4096 * 2 * 4096 * 2);
        assert_eq!(plan.expert_dp(), 1);
        // Every expert's gradients stay on their one holder: no expert buckets reduced.
        let t = generate(&p, 64, None, Room::UNLIMITED).unwrap();
        let moved = bytes_by_group(&t);
        assert_eq!(moved[2], (0..4).map(|s| plan.bytes_per_gpu(s)[2]).sum::<u64>() * 8, "DP: dense buckets only");
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
    //# values per pass between neighbouring stages; DP: every stage's weights once per TP rank;
    //# with experts, EP: per layer and micro-batch 4 token AllToAlls (6 with recomputation) of
    //# b·s·k·h values per GPU, (ep − 1)/ep of them sent, and the experts' weights reduced across
    //# the dp/ep replicas holding them.
    #[test]
    fn bytes_per_group_are_the_formulas() {
        let gpt = ModelConfig { layers: 8, hidden: 512, heads: 8, seq: 256, vocab: 1024, micro_batch: 2, global_batch: Some(16), ..ModelConfig::default() };
        let llama = ModelConfig { layers: 6, hidden: 512, heads: 8, kv_heads: Some(2), ffn: Some(1376), gated_ffn: true, seq: 128, vocab: 2000, global_batch: Some(12), ..ModelConfig::default() };
        let uneven = ModelConfig { layers: 7, hidden: 384, heads: 6, seq: 64, vocab: 500, global_batch: Some(9), ..ModelConfig::default() };
        let moe = ModelConfig { layers: 4, hidden: 256, heads: 4, kv_heads: Some(2), ffn: Some(512), gated_ffn: true, seq: 64, vocab: 300, global_batch: Some(24), experts: 6, top_k: Some(2), expert_ffn: Some(384), ..ModelConfig::default() };
        for (model, tp, pp, dp, ep, recompute) in [(gpt, 4, 2, 2, 1, false), (llama, 2, 3, 2, 1, true), (uneven, 3, 3, 3, 1, false), (moe.clone(), 2, 2, 4, 2, true), (moe, 1, 1, 6, 3, false)] {
            let mut p = params(model.clone(), tp, pp, dp);
            p.parallelism.ep = ep;
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
            let (mut tp_bytes, mut pp_bytes, mut dp_bytes, mut ep_bytes) = (0, 0, 0, 0);
            let ep64 = ep as u64;
            let dispatch = a * plan.top_k as u64;
            for s in 0..pp {
                let l = plan.stage_layers[s as usize] as u64;
                let ends = u64::from(s == 0) + u64::from(s + 1 == pp);
                let neighbours = u64::from(s > 0) + u64::from(s + 1 < pp);
                let per_layer = if recompute { 6 } else { 4 };
                tp_bytes += dp64 * m * ((per_layer * l + ends) * ring(tp64, a, 2 * (tp64 - 1)) + neighbours * ring(tp64, a, tp64 - 1));
                pp_bytes += dp64 * m * neighbours * tp64 * a.div_ceil(tp64);
                // Weights of the stage, per TP rank, bucketed.
                let matrices = if model.gated_ffn { 3 } else { 2 };
                let attention = model.hidden * (model.hidden + 2 * model.hidden * model.kv_heads.unwrap_or(model.heads) as u64 / model.heads as u64) + model.hidden * model.hidden;
                let layer = attention + if model.experts > 0 { model.hidden * model.experts as u64 } else { matrices * model.hidden * model.ffn.unwrap_or(4 * model.hidden) };
                assert_eq!(layer, plan.layer_params);
                if model.experts > 0 {
                    let experts = (model.experts as u64 / ep64) * matrices * model.hidden * model.expert_ffn.unwrap();
                    assert_eq!(experts, plan.expert_params);
                    let buckets = plan.expert_buckets(s);
                    let weights: u64 = buckets.iter().map(|b| b.0).sum();
                    assert!(weights * tp64 >= l * experts && weights * tp64 < l * experts + buckets.len() as u64 * tp64, "stage {s} experts");
                    let n = dp64 / ep64;
                    dp_bytes += tp64 * ep64 * buckets.iter().map(|b| ring(n, b.0 * 2, 2 * (n - 1))).sum::<u64>();
                    // Each AllToAll instance: ep ranks send (ep − 1) pieces of ⌈S/ep⌉.
                    let per_layer = if recompute { 6 } else { 4 };
                    ep_bytes += (dp64 / ep64) * m * l * per_layer * tp64 * ep64 * (ep64 - 1) * dispatch.div_ceil(ep64);
                }
                let buckets = plan.buckets(s);
                let weights: u64 = buckets.iter().map(|b| b.0).sum();
                let stage = l * layer + ends * model.vocab * model.hidden;
                // Each bucket rounds its share per TP rank up.
                assert!(weights * tp64 >= stage && weights * tp64 < stage + buckets.len() as u64 * tp64, "stage {s}: {weights} × {tp} against {stage}");
                dp_bytes += tp64 * buckets.iter().map(|b| ring(dp64, b.0 * 2, 2 * (dp64 - 1))).sum::<u64>();
            }
            let got = bytes_by_group(&t);
            assert_eq!(got, [tp_bytes, pp_bytes, dp_bytes, ep_bytes], "tp {tp} pp {pp} dp {dp} ep {ep}");
            // And `check`'s per-GPU figures add up to the same (where the bus formulas divide
            // evenly).
            let per_gpu = (0..pp).map(|s| plan.bytes_per_gpu(s)).fold([0; 4], |a, b| [0, 1, 2, 3].map(|i| a[i] + b[i] * tp64 * dp64));
            assert_eq!(per_gpu[1], pp_bytes);
            if dispatch % ep64 == 0 {
                assert_eq!(per_gpu[3], ep_bytes);
            }
        }
    }

    //= type=test
    //# Megatron-LM's default order puts a replica's DP peers on neighbouring TP groups and its
    //# stages dp groups apart; `"tp-pp-dp"` (Megatron-Core's tp-pp-dp mapping) the other way
    //# round; TP stays innermost in both, and every GPU is used once.
    #[test]
    fn rank_orders_place_dp_or_pp_next_to_tp() {
        let mut p = params(small(4, 8), 2, 2, 4);
        let default = Plan::of(&p, 16).unwrap();
        p.parallelism.order = "tp-pp-dp".into();
        let swapped = Plan::of(&p, 16).unwrap();
        assert_eq!((default.rank(0, 1, 0), default.rank(1, 0, 0), default.rank(1, 3, 1)), (2, 8, 15));
        assert_eq!((swapped.rank(0, 1, 0), swapped.rank(1, 0, 0), swapped.rank(1, 3, 1)), (4, 2, 15));
        for plan in [default, swapped] {
            let mut seen: Vec<u32> = (0..2).flat_map(|s| (0..4).flat_map(move |d| (0..2).map(move |t| (s, d, t)))).map(|(s, d, t)| plan.rank(s, d, t)).collect();
            seen.sort();
            assert_eq!(seen, (0..16).collect::<Vec<u32>>());
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
        p.parallelism.order = "pp-dp-tp".into();
        assert_eq!(refused(p, 8), "workload.parallelism.order");
        let mut p = params(small(4, 4), 1, 1, 4);
        p.parallelism.dp_algorithm = "hier".into();
        assert_eq!(refused(p, 8), "workload.parallelism.dp_algorithm");
        // Experts: EP without experts, EP not dividing dp or the experts, top-k above them,
        // expert keys on a dense model, a dispatch above 2^40 bytes.
        let moe = |experts: u32, ep: u32| {
            let mut p = params(ModelConfig { experts, ..small(4, 4) }, 1, 1, 4);
            p.parallelism.ep = ep;
            p
        };
        assert_eq!(refused(moe(0, 2), 8), "workload.parallelism.ep");
        assert_eq!(refused(moe(6, 4), 8), "workload.parallelism.ep");
        assert_eq!(refused(moe(4, 3), 8), "workload.parallelism.ep");
        let mut p = moe(4, 2);
        p.model.top_k = Some(5);
        assert_eq!(refused(p, 8), "workload.model.top_k");
        let mut p = moe(0, 1);
        p.model.expert_ffn = Some(64);
        assert_eq!(refused(p, 8), "workload.model.expert_ffn");
        let mut p = moe(4096, 1);
        p.model.top_k = Some(4096);
        p.model.seq = 1 << 20;
        p.model.hidden = 1 << 16;
        p.model.heads = 1;
        assert_eq!(refused(p, 8), "workload.model.micro_batch");
        let mut p = moe(4096, 1);
        p.model.hidden = 1 << 20;
        p.model.heads = 1;
        assert_eq!(refused(p, 8), "workload.model.layers");
    }
}
