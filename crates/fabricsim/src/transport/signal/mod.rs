//! Receiver-to-sender signals beside the ACK stream: a control packet that a receiver sends
//! when a data packet's arrival calls for it, and its sender's reaction. DCQCN's congestion
//! notification packet is one (`cnp.rs`).
//!
//! A signal is one file implementing [`Signal`] and one row of the [`signals!`] table below
//! (which also declares its module). The row names the packet kind it travels as: a row of the
//! kernel's kind table (`kernel/packet.rs`), marked there as a receiver's answer, which gives
//! its report name and port class. The receiver asks every signal about each data arrival
//! (`transport/receiver.rs`, through [`Signals::on_arrival`]) and builds the packets they ask
//! for; the engine hands every arriving packet of a signal's kind to the sender
//! (`engine/dispatch.rs`), which passes it here ([`Signals::on_receipt`]).

use crate::kernel::packet::PktKind;
use crate::transport::cc::CcConfig;
use crate::transport::Connection;
use crate::units::Time;
use std::fmt::Debug;

/// A data packet's arrival at its receiver, as a signal sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Arrival {
    /// A data packet (not a trimmed header) arrived, before the loss-recovery mode judged it.
    Data {
        /// It carried a congestion mark.
        ce: bool,
    },
    /// The loss-recovery mode discarded it as out of order and the receiver answers with a
    /// sequence NACK for the packet it expects (go-back-N).
    Gap {
        /// It carried a congestion mark.
        ce: bool,
    },
}

/// One signal: its parameters for a run (built from the congestion control's configuration),
/// what it sends, and what its sender does with it.
pub trait Signal: Copy + Debug + Default + Send + Sync {
    /// Whether a sequence NACK's congestion-echo flag (`F_ECE`) carries this signal to the
    /// sender, which then reacts as to the signal's packet.
    const ON_GAP_NACK_FLAG: bool = false;
    /// Its parameters for a run whose congestion control is `cc` (a signal the run's schemes
    /// do not use is built inert: it never asks to be sent).
    fn build(cc: &CcConfig) -> Self;
    /// Receiver: whether `arrival` calls for this signal now. `last_sent` is the signal's state
    /// at this connection's receiver: when it last left (`Time::MAX`: never); set it when
    /// answering yes.
    fn on_arrival(&self, now: Time, arrival: Arrival, last_sent: &mut Time) -> bool;
    /// Receiver: whether the sequence NACK answering a gap carries the signal as its
    /// congestion-echo flag (`ce`: the discarded packet carried a mark).
    fn flags_gap_nack(&self, _ce: bool) -> bool {
        false
    }
    /// Sender: the signal reached connection `conn`'s sender at `now`.
    fn on_receipt(&self, now: Time, conn: &mut Connection);
}

/// Declares the signals, one row each: `Kind => module::Type`, where `Kind` is the packet kind
/// it travels as. Generates their modules, [`Signals`] (every signal's parameters for one
/// run) and the calls the receiver and the sender make, dispatched statically.
macro_rules! signals {
    ($( $(#[$attr:meta])* $Kind:ident => $module:ident :: $Type:ident; )*) => {
        $( $(#[$attr])* pub mod $module; )*

        /// How many signals there are (the receiver keeps one `Time` of state for each).
        pub const COUNT: usize = <[&str]>::len(&[$(stringify!($Kind)),*]);

        /// Every signal's parameters for one run (by default every one inert).
        #[derive(Clone, Copy, Debug, Default)]
        #[allow(non_snake_case)]
        pub struct Signals {
            $( #[doc = concat!("The ", stringify!($Kind), " signal's.")] pub $Kind: $module::$Type, )*
        }

        impl Signals {
            /// Every signal, built for a run whose congestion control is `cc`.
            pub fn build(cc: &CcConfig) -> Self {
                let _ = cc;
                Signals { $( $Kind: <$module::$Type as Signal>::build(cc), )* }
            }

            /// Receiver: calls `send(kind)` for each signal that `arrival` calls for now, in
            /// table order; `last_sent` holds each signal's state at this receiver.
            #[inline(always)]
            pub fn on_arrival(&self, now: Time, arrival: Arrival, last_sent: &mut [Time; COUNT], mut send: impl FnMut(PktKind)) {
                let _ = (now, arrival, &last_sent, &mut send);
                let mut _i = 0;
                $(
                    if self.$Kind.on_arrival(now, arrival, &mut last_sent[_i]) {
                        send(PktKind::$Kind);
                    }
                    _i += 1;
                )*
            }

            /// Receiver: whether the sequence NACK answering a gap carries a signal's flag.
            #[inline]
            pub fn flags_gap_nack(&self, ce: bool) -> bool {
                let _ = ce;
                false $( || self.$Kind.flags_gap_nack(ce) )*
            }

            /// Sender: a packet of kind `kind` reached connection `conn`'s sender; false when
            /// no signal travels as `kind`.
            pub fn on_receipt(&self, kind: PktKind, now: Time, conn: &mut Connection) -> bool {
                match kind {
                    $( PktKind::$Kind => { self.$Kind.on_receipt(now, conn); true } )*
                    _ => { let _ = (now, conn); false }
                }
            }

            /// Sender: a sequence NACK with the congestion-echo flag reached `conn`'s sender:
            /// the signals it carries act.
            pub fn on_gap_nack_flag(&self, now: Time, conn: &mut Connection) {
                let _ = (now, &conn);
                $(
                    if <$module::$Type as Signal>::ON_GAP_NACK_FLAG {
                        self.$Kind.on_receipt(now, conn);
                    }
                )*
            }

            /// The packet kinds signals travel as.
            pub fn kinds() -> [PktKind; COUNT] {
                [$(PktKind::$Kind),*]
            }
        }
    };
}

signals! {
    /// DCQCN's congestion notification packet (DCQCN §3.2).
    Cnp => cnp::CnpSignal;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_signal_travels_as_a_receiver_s_answer() {
        // (So that `transport.ack_class = "data"` moves it with the ACKs.)
        assert!(Signals::kinds().iter().all(|k| k.is_answer()));
        assert_eq!(Signals::kinds().len(), COUNT);
    }
}
