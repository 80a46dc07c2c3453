//! Random packet loss on one direction of a link (`[topology.failures]` kinds `loss` and
//! `bursty_loss`): the two standard packet-loss channels of link models.
//!
//! - **Bernoulli** (`loss`): every packet the port starts transmitting is lost with probability
//!   `p`, independently: a loss rate of `p`, isolated losses.
//! - **Gilbert–Elliott** (`bursty_loss`): a two-state Markov chain stepped once per packet. In
//!   the bad state a packet is lost with probability `loss_bad`, in the good state with
//!   `loss_good`; after each packet the chain leaves the bad state with probability
//!   `1 / mean_burst_pkts` and the good state with probability `1 / mean_gap_pkts`, so the
//!   states last geometric numbers of packets of those means. The long-run loss rate is
//!   `(mean_burst·loss_bad + mean_gap·loss_good) / (mean_burst + mean_gap)`; with
//!   `loss_bad = 1` and `loss_good = 0`, losses come in runs of mean length `mean_burst_pkts`.
//!
//! A lost packet still occupies the link for its serialization (it is lost on the wire, after
//! the queue), is never trimmed and plays no part in PFC, as on a flaky link
//! ([`super::flaky`], whose bursts are timed rather than counted in packets). Each port direction
//! draws from its own random stream (`Rng::stream(seed, "wire_loss", port)`), so the losses do
//! not depend on other ports' traffic; the chain starts in its stationary distribution, so the
//! loss rate holds from the first packet.

pub use crate::topo::failures::LossChannel;
use super::flaky::FlakyPort;
use crate::rng::Rng;
use crate::units::Time;

/// One port direction's packet-counted loss channel and its state.
#[derive(Clone, Debug)]
pub struct LossyPort {
    channel: LossChannel,
    rng: Rng,
    /// Gilbert–Elliott: in the bad state.
    bad: bool,
}

impl LossyPort {
    /// The channel on a port drawing from `rng`; a Gilbert–Elliott chain starts in its
    /// stationary distribution.
    pub fn new(channel: LossChannel, mut rng: Rng) -> LossyPort {
        let bad = match channel {
            LossChannel::Bernoulli { .. } => false,
            LossChannel::GilbertElliott { mean_burst_pkts: b, mean_gap_pkts: g, .. } => rng.unit() < b / (b + g),
        };
        LossyPort { channel, rng, bad }
    }

    /// Whether the next packet is lost (and the chain's step after it).
    #[inline]
    pub fn next_lost(&mut self) -> bool {
        match self.channel {
            LossChannel::Bernoulli { p } => self.rng.unit() < p,
            LossChannel::GilbertElliott { loss_bad, loss_good, mean_burst_pkts, mean_gap_pkts } => {
                let lost = self.rng.unit() < if self.bad { loss_bad } else { loss_good };
                let leave = if self.bad { 1.0 / mean_burst_pkts } else { 1.0 / mean_gap_pkts };
                if self.rng.unit() < leave {
                    self.bad = !self.bad;
                }
                lost
            }
        }
    }
}

/// What a port's transmissions go through before the wire: loss bursts in time (a flaky link)
/// or a packet-counted channel; with the counts every kind keeps.
#[derive(Clone, Debug)]
pub struct WireLoss {
    /// Packets the port started transmitting.
    pub transmitted: u64,
    /// Of those, the ones lost on the wire.
    pub wire_losses: u64,
    process: Process,
}

#[derive(Clone, Debug)]
enum Process {
    Bursts(FlakyPort),
    Channel(LossyPort),
}

impl WireLoss {
    /// Loss bursts in time (`flaky`).
    pub fn bursts(port: FlakyPort) -> WireLoss {
        WireLoss { transmitted: 0, wire_losses: 0, process: Process::Bursts(port) }
    }

    /// A packet-counted channel (`loss`, `bursty_loss`).
    pub fn channel(port: LossyPort) -> WireLoss {
        WireLoss { transmitted: 0, wire_losses: 0, process: Process::Channel(port) }
    }

    /// Counts a transmission starting at `t` and says whether it is lost on the wire (counted
    /// too). Calls must come with non-decreasing `t`.
    #[inline]
    pub fn transmit(&mut self, t: Time) -> bool {
        let lost = match &mut self.process {
            Process::Bursts(f) => f.lost_at(t),
            Process::Channel(c) => c.next_lost(),
        };
        self.transmitted += 1;
        self.wire_losses += lost as u64;
        lost
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Loss fraction and mean run length of consecutive losses over `n` packets.
    fn measure(channel: LossChannel, n: u64, seed: u64) -> (f64, f64) {
        let mut port = LossyPort::new(channel, Rng::stream(seed, "wire_loss", 0));
        let (mut lost, mut runs, mut prev) = (0u64, 0u64, false);
        for _ in 0..n {
            let l = port.next_lost();
            lost += l as u64;
            runs += (l && !prev) as u64;
            prev = l;
        }
        (lost as f64 / n as f64, lost as f64 / runs.max(1) as f64)
    }

    #[test]
    fn bernoulli_loses_its_rate_in_isolated_losses() {
        let p = 0.01;
        let n = 4_000_000;
        let (rate, run) = measure(LossChannel::Bernoulli { p }, n, 1);
        // Binomial: standard error sqrt(p(1 − p)/n) = 5e-5; allow 5 of them.
        assert!((rate - p).abs() < 5.0 * (p * (1.0 - p) / n as f64).sqrt(), "{rate}");
        // Runs of independent losses have mean length 1 / (1 − p).
        assert!((run - 1.0 / (1.0 - p)).abs() < 0.005, "{run}");
    }

    #[test]
    fn gilbert_elliott_loses_the_stationary_rate_in_runs_of_the_mean_burst() {
        // Bursts of 5 packets every 500 on average: loss rate 5 / 505, runs of mean 5.
        let ge = LossChannel::GilbertElliott { loss_bad: 1.0, loss_good: 0.0, mean_burst_pkts: 5.0, mean_gap_pkts: 500.0 };
        assert!((ge.loss_rate() - 5.0 / 505.0).abs() < 1e-12);
        let (rate, run) = measure(ge, 20_000_000, 2);
        // ~40,000 bursts; the rate's standard error is about rate·sqrt(2/bursts) ≈ 7e-5.
        assert!((rate - ge.loss_rate()).abs() < 4e-4, "{rate} vs {}", ge.loss_rate());
        assert!((run - 5.0).abs() < 0.15, "mean run {run}");
        // A lossy good state and a leaky bad state mix as the formula says.
        let mixed = LossChannel::GilbertElliott { loss_bad: 0.5, loss_good: 0.001, mean_burst_pkts: 20.0, mean_gap_pkts: 180.0 };
        let (rate, _) = measure(mixed, 20_000_000, 3);
        assert!((mixed.loss_rate() - (20.0 * 0.5 + 180.0 * 0.001) / 200.0).abs() < 1e-12);
        assert!((rate - mixed.loss_rate()).abs() < 8e-4, "{rate} vs {}", mixed.loss_rate());
    }

    #[test]
    fn the_counts_add_up_whatever_the_process() {
        let mut w = WireLoss::channel(LossyPort::new(LossChannel::Bernoulli { p: 0.5 }, Rng::stream(4, "wire_loss", 1)));
        let lost = (0..1000).filter(|&i| w.transmit(Time(i))).count() as u64;
        assert_eq!((w.transmitted, w.wire_losses), (1000, lost));
        assert!((400..600).contains(&lost), "{lost}");
    }
}
