//! Dense integer identifiers. Every piece of state lives in an array indexed by one of these,
//! so the hot path never touches a map.
//!
//! Each id is its own type (a `u32` underneath, `repr(transparent)`), so that the compiler keeps
//! a node, a port, a connection and a packet handle apart: indexing the ports with a node id or
//! charging a drop to a host instead of a connection does not compile. An id indexes a `Vec` or
//! a slice directly (`ports[p]`); `idx()` gives the `usize` where an id must meet other
//! integers (a store's slot, a range bound), and `NodeId(n)` (likewise each id) makes one from a number at the edges
//! (a scenario's host list, a loop over `0..hosts`).

use std::fmt;
use std::ops::{Index, IndexMut};

macro_rules! dense_ids {
    ($($(#[$doc:meta])* $name:ident;)*) => {$(
        $(#[$doc])*
        #[derive(Copy, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
        #[repr(transparent)]
        pub struct $name(pub u32);

        impl $name {
            /// The largest id, which the arrays that need one use for "none".
            pub const MAX: Self = Self(u32::MAX);

            /// The id as an array index.
            #[inline(always)]
            pub const fn idx(self) -> usize {
                self.0 as usize
            }

            /// The id `n` places after this one (the `n`-th of a block of consecutive ids that
            /// starts here).
            #[inline(always)]
            pub const fn offset(self, n: u32) -> Self {
                Self(self.0 + n)
            }

            /// The id of array index `i` (an index into an array of fewer than 2³² elements, as
            /// every array an id indexes is).
            #[inline(always)]
            pub const fn at(i: usize) -> Self {
                Self(i as u32)
            }
        }

        // Written as the bare number, so that every output that prints an id is unchanged.
        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                fmt::Display::fmt(&self.0, f)
            }
        }

        impl fmt::Debug for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                fmt::Debug::fmt(&self.0, f)
            }
        }

        impl<T> Index<$name> for [T] {
            type Output = T;
            #[inline(always)]
            fn index(&self, i: $name) -> &T {
                &self[i.0 as usize]
            }
        }

        impl<T> IndexMut<$name> for [T] {
            #[inline(always)]
            fn index_mut(&mut self, i: $name) -> &mut T {
                &mut self[i.0 as usize]
            }
        }

        impl<T> Index<$name> for Vec<T> {
            type Output = T;
            #[inline(always)]
            fn index(&self, i: $name) -> &T {
                &self.as_slice()[i.0 as usize]
            }
        }

        impl<T> IndexMut<$name> for Vec<T> {
            #[inline(always)]
            fn index_mut(&mut self, i: $name) -> &mut T {
                &mut self.as_mut_slice()[i.0 as usize]
            }
        }
    )*};
}

dense_ids! {
    /// A node of the fabric: hosts come first (`0..hosts`), then switches.
    NodeId;
    /// An output port (one direction of a link) in the fabric-wide port array.
    PortId;
    /// A connection (one flow's sender and receiver state).
    ConnId;
    /// A handle into the packet pool.
    PktId;
}

/// Per-packet path entropy (think UDP source port or IPv6 flow label). A value a path selector
/// hashes, not an index into any array, so a plain integer.
pub type Entropy = u16;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_id_prints_and_orders_as_its_number() {
        assert_eq!(format!("{} {:?}", NodeId(7), ConnId(42)), "7 42");
        assert!(PortId(3) < PortId(10));
        assert_eq!(PktId::at(5).idx(), 5);
        #[allow(clippy::useless_vec)] // a Vec on purpose: its Index impl is what is tested
        let v = vec!['a', 'b', 'c'];
        assert_eq!(v[NodeId(2)], 'c');
    }
}
