//! Per-element state indexed by id, held only where it is used.
//!
//! [`Store`] is what an element array must offer: every element's (`Vec<T>`, a serial run's, and
//! a parallel run's once merged) or one partition's ([`Partial`]: the elements it uses, found
//! through a slot map of one `u32` per id). The network and the hosts are generic over their
//! stores, so the serial engine is compiled with plain arrays (indexing stays one bounds check)
//! and a partition holds only what it uses (`engine/parallel`). Indexing an element a partition
//! does not hold panics at once (its slot is out of range): the parallel engine's tests would
//! see it, where a silently stale copy would not show.

use std::fmt::Debug;
use std::ops::{Index, IndexMut};

/// Marks an id whose element a [`Partial`] does not hold.
const NOT_HERE: u32 = u32::MAX;

/// An element array by id: every element's (`Vec<T>`) or a partition's ([`Partial`]).
pub trait Store<T>: Index<usize, Output = T> + IndexMut<usize> + Debug + Send {
    /// Number of ids (held or not).
    fn len(&self) -> usize;
    /// Whether there is no id.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Whether the element of id `i` is held here.
    fn holds(&self, i: u32) -> bool;
    /// The element of id `i`, if held here.
    fn get(&self, i: u32) -> Option<&T>;
    /// The element of id `i`, mutably, if held here.
    fn get_mut(&mut self, i: u32) -> Option<&mut T>;
    /// The elements held, in id order.
    fn held(&self) -> std::slice::Iter<'_, T>;
    /// The held elements' array and, for a partition's store, the slot of each id in it (for
    /// code that reads many elements through one borrow, such as a switch's path selector).
    fn parts(&self) -> (&[T], Option<&[u32]>);
}

impl<T: Debug + Send> Store<T> for Vec<T> {
    #[inline]
    fn len(&self) -> usize {
        Vec::len(self)
    }

    #[inline]
    fn holds(&self, i: u32) -> bool {
        (i as usize) < Vec::len(self)
    }

    #[inline]
    fn get(&self, i: u32) -> Option<&T> {
        self.as_slice().get(i as usize)
    }

    #[inline]
    fn get_mut(&mut self, i: u32) -> Option<&mut T> {
        self.as_mut_slice().get_mut(i as usize)
    }

    fn held(&self) -> std::slice::Iter<'_, T> {
        self.iter()
    }

    #[inline]
    fn parts(&self) -> (&[T], Option<&[u32]>) {
        (self, None)
    }
}

/// How a simulation holds its element arrays: every element's ([`Whole`]: a serial run's, and a
/// parallel run's once merged) or one partition's ([`Parted`]). The network and the hosts are
/// generic over it, so that one parameter decides every array's store at once.
pub trait Layout: Send + Sized + 'static {
    /// The store of `T`s.
    type Of<T: Debug + Send>: Store<T>;
    /// The store of those of `all` (every element, in id order) for which `keep(id)` holds. A
    /// whole layout keeps every one (it is only ever cut with a `keep` that holds everywhere).
    fn cut<T: Debug + Send>(all: impl IntoIterator<Item = T>, keep: impl Fn(u32) -> bool) -> Self::Of<T>;
}

/// Every element's arrays, in plain vectors.
#[derive(Debug)]
pub enum Whole {}

/// One partition's arrays ([`Partial`]).
#[derive(Debug)]
pub enum Parted {}

impl Layout for Whole {
    type Of<T: Debug + Send> = Vec<T>;
    fn cut<T: Debug + Send>(all: impl IntoIterator<Item = T>, _keep: impl Fn(u32) -> bool) -> Vec<T> {
        all.into_iter().collect()
    }
}

impl Layout for Parted {
    type Of<T: Debug + Send> = Partial<T>;
    fn cut<T: Debug + Send>(all: impl IntoIterator<Item = T>, keep: impl Fn(u32) -> bool) -> Partial<T> {
        Partial::partial(all, keep)
    }
}

/// One partition's elements: those it uses, in id order, and a slot map.
#[derive(Debug)]
pub struct Partial<T> {
    /// The elements held, in id order.
    items: Vec<T>,
    /// The index in `items` of each id ([`NOT_HERE`]: not held).
    slot: Box<[u32]>,
}

impl<T> Default for Partial<T> {
    fn default() -> Self {
        Partial { items: Vec::new(), slot: Box::default() }
    }
}

impl<T> Partial<T> {
    /// Only the elements for which `keep(i)` holds, of `all` (every element, in id order).
    pub fn partial(all: impl IntoIterator<Item = T>, keep: impl Fn(u32) -> bool) -> Self {
        let mut items = Vec::new();
        let mut slot = Vec::new();
        for (i, e) in all.into_iter().enumerate() {
            if keep(i as u32) {
                slot.push(items.len() as u32);
                items.push(e);
            } else {
                slot.push(NOT_HERE);
            }
        }
        items.shrink_to_fit();
        Partial { items, slot: slot.into_boxed_slice() }
    }

    /// Every element, from the partitions' stores (`parts[k]` held partition `k`'s), each taken
    /// from the partition `owner(i)` names (which must hold it).
    pub fn merge(parts: Vec<Partial<T>>, owner: impl Fn(u32) -> usize) -> Vec<T> {
        let n = parts.first().map_or(0, |p| p.slot.len());
        let mut parts: Vec<_> = parts.into_iter().map(|p| (p.slot, p.items.into_iter().map(Some).collect::<Vec<_>>())).collect();
        (0..n)
            .map(|i| {
                let (slot, items) = &mut parts[owner(i as u32)];
                items[slot[i] as usize].take().expect("the owner holds the element")
            })
            .collect()
    }
}

impl<T> Index<usize> for Partial<T> {
    type Output = T;

    #[inline(always)]
    fn index(&self, i: usize) -> &T {
        &self.items[self.slot[i] as usize]
    }
}

impl<T> IndexMut<usize> for Partial<T> {
    #[inline(always)]
    fn index_mut(&mut self, i: usize) -> &mut T {
        let s = self.slot[i] as usize;
        &mut self.items[s]
    }
}

impl<T: Debug + Send> Store<T> for Partial<T> {
    fn len(&self) -> usize {
        self.slot.len()
    }

    #[inline]
    fn holds(&self, i: u32) -> bool {
        self.slot[i as usize] != NOT_HERE
    }

    #[inline]
    fn get(&self, i: u32) -> Option<&T> {
        self.slot.get(i as usize).and_then(|&s| self.items.as_slice().get(s as usize))
    }

    #[inline]
    fn get_mut(&mut self, i: u32) -> Option<&mut T> {
        let s = *self.slot.get(i as usize)?;
        self.items.as_mut_slice().get_mut(s as usize)
    }

    fn held(&self) -> std::slice::Iter<'_, T> {
        self.items.iter()
    }

    #[inline]
    fn parts(&self) -> (&[T], Option<&[u32]>) {
        (&self.items, Some(&self.slot))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_partial_store_holds_its_elements_by_id_and_a_merge_restores_every_one() {
        let even = Partial::partial((0..6u64).map(|i| i), |i| i % 2 == 0);
        let odd = Partial::partial((0..6u64).map(|i| 100 + i), |i| i % 2 == 1);
        assert_eq!((even.len(), even.holds(2), even.holds(3)), (6, true, false));
        assert_eq!((even[4], odd[3], even.get(3), odd.get(3)), (4, 103, None, Some(&103)));
        assert_eq!(even.held().copied().collect::<Vec<_>>(), [0, 2, 4]);
        assert_eq!(Partial::merge(vec![even, odd], |i| (i % 2) as usize), [0, 101, 2, 103, 4, 105]);
        let all: Vec<u64> = (0..3).collect();
        assert_eq!((Store::len(&all), all.holds(2), all.holds(3), Store::get(&all, 1)), (3, true, false, Some(&1)));
    }

    #[test]
    #[should_panic]
    fn indexing_an_element_not_held_panics() {
        let p = Partial::partial(0..4u8, |i| i < 2);
        let _ = p[3];
    }
}
