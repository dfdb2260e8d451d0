//! The pairwise constraints `T` of eq. (2): must-link (`T_ij = +1`) and cannot-link
//! (`T_ij = −1`) pairs, given by the caller or drawn from labels.
//!
//! Stored twice in compact form: the pair list, sorted by `(min(i,j), max(i,j))` (what the
//! objective (3) sums over, each unordered pair once), and for every point `i` the
//! partners `T(i) = {j | (i, j) ∈ T}` with their signs (what the column update (18)
//! reads), as compressed rows.
//!
//! Building sorts the pairs (`sort_unstable`, `O(m log m)`, no memory beyond the storage) and
//! rejects self-pairs, a pair given twice, and a pair both must- and cannot-link.
//! [`Constraints::from_labels_in`] draws distinct pairs uniformly by rejection: two
//! distinct points uniformly at random, kept when their labels agree (must-link) or
//! differ (cannot-link) and that kind is still wanted; repeated pairs are removed after
//! each round and drawn again. Expected time `O(m log m + m/p)`, with `p` the share of
//! point pairs of the rarer kind wanted.
//!
//! **Memory** for `n` points and `m` pairs: `n + 1 + 4m` `u32`
//! ([`Constraints::indices_len`]). Point indices are stored shifted left by one bit with
//! the sign in bit 0, so `n < 2³¹`.

#![allow(
    clippy::indexing_slicing,
    reason = "point indices < n < 2³¹, n + 1 offsets and lists of 2m: within the n + 1 + 4m entries the constructors checked"
)]

use crate::storage::{Storage, check_capacity};
use crate::{Error, Real, Rng};

/// The kind of a pairwise constraint.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Link {
    /// The two points belong to the same class: `T_ij = +1`.
    Must,
    /// The two points belong to different classes: `T_ij = −1`.
    Cannot,
}

impl Link {
    /// `T_ij`: `+1` for must-link, `−1` for cannot-link.
    pub fn sign<T: Real>(self) -> T {
        match self {
            Link::Must => T::ONE,
            Link::Cannot => -T::ONE,
        }
    }

    fn bit(self) -> u32 {
        match self {
            Link::Must => 1,
            Link::Cannot => 0,
        }
    }

    fn from_bit(entry: u32) -> Self {
        if entry & 1 == 1 { Link::Must } else { Link::Cannot }
    }
}

/// One constraint between points `i` and `j`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Pair {
    /// One point (0-based).
    pub i: usize,
    /// The other point (0-based).
    pub j: usize,
    /// Must-link or cannot-link.
    pub link: Link,
}

impl Pair {
    /// The constraint `(i, j, link)`.
    pub const fn new(i: usize, j: usize, link: Link) -> Self {
        Pair { i, j, link }
    }
}

/// A validated set of `m` constraints on `n` points, in caller storage.
///
/// # Examples
/// ```
/// use kestrel_core::npkl::{Constraints, Link, Pair};
/// use kestrel_core::{Error, Rng};
/// let pairs = [Pair::new(0, 3, Link::Must), Pair::new(3, 1, Link::Cannot)];
/// let t = Constraints::new_in([0u32; Constraints::indices_len(4, 2)], 4, &pairs)?;
/// assert_eq!((t.len(), t.max_degree()), (2, 2));
/// assert_eq!(t.partners(3).unwrap().collect::<Vec<_>>(), [(0, Link::Must), (1, Link::Cannot)]);
/// // A pair both must- and cannot-link is rejected.
/// let bad = [Pair::new(0, 3, Link::Must), Pair::new(3, 0, Link::Cannot)];
/// assert!(Constraints::new_in([0u32; Constraints::indices_len(4, 2)], 4, &bad).is_err());
/// // Drawn from labels: 3 must-link and 3 cannot-link pairs.
/// let labels = [0, 0, 0, 1, 1, 1];
/// let t = Constraints::from_labels_in(vec![0; Constraints::indices_len(6, 6)], &labels, 3, 3, &mut Rng::seed_from_u64(1))?;
/// assert!(t.pairs().all(|p| (labels[p.i] == labels[p.j]) == (p.link == Link::Must)));
/// # Ok::<(), Error>(())
/// ```
#[derive(Debug)]
pub struct Constraints<I> {
    indices: I,
    n: usize,
    m: usize,
    max_degree: usize,
    constrained: usize,
}

impl Constraints<()> {
    /// `u32` entries of the storage for `n` points and `m` pairs: `n + 1 + 4m`.
    pub const fn indices_len(n: usize, m: usize) -> usize {
        n.saturating_add(1).saturating_add(m.saturating_mul(4))
    }

    /// Bytes of the storage.
    pub const fn bytes(n: usize, m: usize) -> usize {
        Self::indices_len(n, m).saturating_mul(4)
    }
}

impl<I: Storage<u32>> Constraints<I> {
    /// The constraints `pairs` on `n` points (`(i, j)` and `(j, i)` are the same pair).
    ///
    /// # Errors
    /// `IndexOutOfRange` when a pair names a point `≥ n`; `InvalidParam { name: "pairs" }`
    /// for a self-pair, a pair given twice or both must- and cannot-link, or more than
    /// `2³¹` pairs; `InvalidParam { name: "n" }` when `n ≥ 2³¹`; `CapacityExceeded` when
    /// the storage is shorter than [`Constraints::indices_len`].
    pub fn new_in(mut indices: I, n: usize, pairs: &[Pair]) -> Result<Self, Error> {
        let m = pairs.len();
        check_sizes(n, m, indices.as_ref().len())?;
        for p in pairs {
            for index in [p.i, p.j] {
                if index >= n {
                    return Err(Error::IndexOutOfRange { index, len: n });
                }
            }
            if p.i == p.j {
                return Err(Error::InvalidParam { name: "pairs" });
            }
        }
        let list = pair_list(indices.as_mut(), n, m);
        for (slot, p) in list.chunks_exact_mut(2).zip(pairs) {
            let [first, second] = encode_pair(p.i, p.j, p.link)?;
            slot[0] = first;
            slot[1] = second;
        }
        sort_pairs(list);
        if list
            .chunks_exact(2)
            .zip(list.chunks_exact(2).skip(1))
            .any(|(a, b)| pair_key(a[0], a[1]) == pair_key(b[0], b[1]))
        {
            return Err(Error::InvalidParam { name: "pairs" });
        }
        Ok(Self::finish(indices, n, m))
    }

    /// `must` must-link and `cannot` cannot-link distinct pairs drawn uniformly at random
    /// from `labels` (one per point; points with equal labels are in the same class).
    ///
    /// # Errors
    /// `InvalidParam` naming `must` or `cannot` when that many distinct pairs of the kind
    /// could not be drawn within `1000 + 1000·m` draws (e.g. a single class and `cannot >
    /// 0`); otherwise as [`new_in`](Self::new_in).
    pub fn from_labels_in<L: PartialEq>(
        mut indices: I,
        labels: &[L],
        must: usize,
        cannot: usize,
        rng: &mut Rng,
    ) -> Result<Self, Error> {
        let n = labels.len();
        let m = must.checked_add(cannot).ok_or(Error::InvalidParam { name: "pairs" })?;
        check_sizes(n, m, indices.as_ref().len())?;
        if m > 0 && n < 2 {
            return Err(Error::InvalidParam { name: if must > 0 { "must" } else { "cannot" } });
        }
        check_available(labels, must, cannot)?;
        let list = pair_list(indices.as_mut(), n, m);
        let (mut need_must, mut need_cannot, mut filled) = (must, cannot, 0);
        let mut budget = 1000usize.saturating_add(m.saturating_mul(1000));
        while filled < m {
            while need_must + need_cannot > 0 {
                if budget == 0 {
                    return Err(Error::InvalidParam { name: if need_must > 0 { "must" } else { "cannot" } });
                }
                budget -= 1;
                let i = rng.below(n);
                let mut j = rng.below(n - 1);
                if j >= i {
                    j += 1;
                }
                let link = if labels[i] == labels[j] { Link::Must } else { Link::Cannot };
                let wanted = match link {
                    Link::Must => &mut need_must,
                    Link::Cannot => &mut need_cannot,
                };
                if *wanted > 0 {
                    *wanted -= 1;
                    let [first, second] = encode_pair(i, j, link)?;
                    list[2 * filled] = first;
                    list[2 * filled + 1] = second;
                    filled += 1;
                }
            }
            sort_pairs(&mut list[..2 * filled]);
            // Drop repeats (a repeated pair has the same kind: labels decide it).
            let mut kept = 0;
            for p in 0..filled {
                let (a, b) = (list[2 * p], list[2 * p + 1]);
                if kept > 0 && pair_key(list[2 * kept - 2], list[2 * kept - 1]) == pair_key(a, b) {
                    match Link::from_bit(b) {
                        Link::Must => need_must += 1,
                        Link::Cannot => need_cannot += 1,
                    }
                } else {
                    list[2 * kept] = a;
                    list[2 * kept + 1] = b;
                    kept += 1;
                }
            }
            filled = kept;
        }
        Ok(Self::finish(indices, n, m))
    }

    /// Builds the partner rows from the sorted, validated pair list.
    fn finish(mut indices: I, n: usize, m: usize) -> Self {
        let (ptr, rest) = indices.as_mut().split_at_mut(n + 1);
        let (adjacency, list) = rest.split_at_mut(2 * m);
        let list = &list[..2 * m];
        // Counts in ptr[i + 1], turned into row starts, then advanced while filling:
        // afterwards ptr[i + 1] is the end of row i.
        ptr.fill(0);
        for pair in list.chunks_exact(2) {
            ptr[pair[0] as usize + 1] += 1;
            ptr[(pair[1] >> 1) as usize + 1] += 1;
        }
        let (mut start, mut max_degree, mut constrained) = (0u32, 0, 0);
        for slot in &mut ptr[1..] {
            let count = *slot;
            max_degree = max_degree.max(count as usize);
            constrained += usize::from(count > 0);
            *slot = start;
            start += count;
        }
        for pair in list.chunks_exact(2) {
            let (a, b, bit) = (pair[0], pair[1] >> 1, pair[1] & 1);
            for (row, partner) in [(a, b), (b, a)] {
                let slot = &mut ptr[row as usize + 1];
                adjacency[*slot as usize] = (partner << 1) | bit;
                *slot += 1;
            }
        }
        Constraints { indices, n, m, max_degree, constrained }
    }

    /// A borrowed view, what the solver reads.
    pub fn view(&self) -> ConstraintsView<'_> {
        let (ptr, rest) = self.indices.as_ref().split_at(self.n + 1);
        let (adjacency, list) = rest.split_at(2 * self.m);
        ConstraintsView {
            ptr,
            adjacency,
            list: &list[..2 * self.m],
            n: self.n,
            max_degree: self.max_degree,
            constrained: self.constrained,
        }
    }

    /// Number of points `n`.
    pub fn n(&self) -> usize {
        self.n
    }

    /// Number of pairs `m`.
    pub fn len(&self) -> usize {
        self.m
    }

    /// `true` without pairs.
    pub fn is_empty(&self) -> bool {
        self.m == 0
    }

    /// `max_i |T(i)|`, the size of the largest per-column subproblem.
    pub fn max_degree(&self) -> usize {
        self.max_degree
    }

    /// Number of points with at least one constraint, `|L|` in the paper.
    pub fn constrained_points(&self) -> usize {
        self.constrained
    }

    /// Pair `p` of the sorted list (`i < j`), or `None` for `p ≥ m`.
    pub fn pair(&self, p: usize) -> Option<Pair> {
        self.view().pair(p)
    }

    /// The pairs, sorted by `(i, j)` with `i < j`.
    pub fn pairs(&self) -> impl Iterator<Item = Pair> + '_ {
        self.view().pairs()
    }

    /// The partners `T(i)` of point `i` with their links, or `None` for `i ≥ n`.
    pub fn partners(&self, i: usize) -> Option<impl Iterator<Item = (usize, Link)> + '_> {
        self.view().partners(i)
    }
}

/// A borrowed, `Copy` view of [`Constraints`].
#[derive(Clone, Copy, Debug)]
pub struct ConstraintsView<'a> {
    ptr: &'a [u32],
    adjacency: &'a [u32],
    list: &'a [u32],
    n: usize,
    max_degree: usize,
    constrained: usize,
}

impl<'a> ConstraintsView<'a> {
    /// Number of points `n`.
    pub fn n(&self) -> usize {
        self.n
    }

    /// Number of pairs `m`.
    pub fn len(&self) -> usize {
        self.list.len() / 2
    }

    /// `true` without pairs.
    pub fn is_empty(&self) -> bool {
        self.list.is_empty()
    }

    /// `max_i |T(i)|`.
    pub fn max_degree(&self) -> usize {
        self.max_degree
    }

    /// Number of points with at least one constraint.
    pub fn constrained_points(&self) -> usize {
        self.constrained
    }

    /// Pair `p` of the sorted list, or `None` for `p ≥ m`.
    pub fn pair(&self, p: usize) -> Option<Pair> {
        let a = *self.list.get(2 * p)?;
        let b = *self.list.get(2 * p + 1)?;
        Some(Pair::new(a as usize, (b >> 1) as usize, Link::from_bit(b)))
    }

    /// The pairs, sorted by `(i, j)` with `i < j`.
    pub fn pairs(&self) -> impl Iterator<Item = Pair> + use<'a> {
        self.list.chunks_exact(2).map(|c| Pair::new(c[0] as usize, (c[1] >> 1) as usize, Link::from_bit(c[1])))
    }

    /// The partners `T(i)` of point `i` with their links, or `None` for `i ≥ n`.
    pub fn partners(&self, i: usize) -> Option<impl Iterator<Item = (usize, Link)> + use<'a>> {
        Some(self.encoded(i)?.iter().map(|&e| ((e >> 1) as usize, Link::from_bit(e))))
    }

    /// The partners of `i` encoded as `(j << 1) | must`, or `None` for `i ≥ n`.
    pub(super) fn encoded(&self, i: usize) -> Option<&'a [u32]> {
        let start = *self.ptr.get(i)? as usize;
        let end = *self.ptr.get(i + 1)? as usize;
        self.adjacency.get(start..end)
    }
}

/// Decodes a partner entry into `(j, T_ij)`.
pub(super) fn decode<T: Real>(entry: u32) -> (usize, T) {
    ((entry >> 1) as usize, Link::from_bit(entry).sign())
}

/// Sort key of a stored pair: `(i, j)` without the link bit.
/// A pair as stored: `(min(i, j), max(i, j) << 1 | must)`.
///
/// # Errors
/// `InvalidParam { name: "n" }` for an index of `2³¹` or more (checked before, with `n`).
fn encode_pair(i: usize, j: usize, link: Link) -> Result<[u32; 2], Error> {
    let too_large = Error::InvalidParam { name: "n" };
    let index = |x: usize| u32::try_from(x).ok().filter(|&x| x < 1 << 31).ok_or(too_large);
    Ok([index(i.min(j))?, (index(i.max(j))? << 1) | link.bit()])
}

fn pair_key(a: u32, b: u32) -> u64 {
    (u64::from(a) << 32) | u64::from(b >> 1)
}

/// `InvalidParam` naming `must` or `cannot` when the labels have fewer distinct pairs of
/// that kind than asked (the draw would never finish). Counts pairs row by row and stops
/// as soon as both counts suffice: O(n) per row, O(n²) only when nearly every pair is asked.
fn check_available<L: PartialEq>(labels: &[L], must: usize, cannot: usize) -> Result<(), Error> {
    let (mut same, mut different) = (0usize, 0usize);
    for (i, a) in labels.iter().enumerate() {
        if same >= must && different >= cannot {
            break;
        }
        for b in labels.get(i + 1..).unwrap_or_default() {
            if a == b {
                same += 1;
            } else {
                different += 1;
            }
        }
    }
    match (same >= must, different >= cannot) {
        (false, _) => Err(Error::InvalidParam { name: "must" }),
        (true, false) => Err(Error::InvalidParam { name: "cannot" }),
        (true, true) => Ok(()),
    }
}

/// Sorts the pairs `(list[2p], list[2p+1])` by [`pair_key`] (`O(m log m)`, in place, no
/// memory). Pairs with equal keys are equal or a repeat of opposite kinds, which is
/// rejected, so the order among them does not matter.
fn sort_pairs(list: &mut [u32]) {
    let (pairs, _) = list.as_chunks_mut::<2>();
    pairs.sort_unstable_by_key(|&[a, b]| pair_key(a, b));
}

fn check_sizes(n: usize, m: usize, capacity: usize) -> Result<(), Error> {
    if n >= 1 << 31 {
        return Err(Error::InvalidParam { name: "n" });
    }
    if m >= 1 << 31 {
        return Err(Error::InvalidParam { name: "pairs" });
    }
    check_capacity(Constraints::indices_len(n, m), capacity)
}

/// The pair-list part of the storage (`2m` entries).
fn pair_list(indices: &mut [u32], n: usize, m: usize) -> &mut [u32] {
    &mut indices[n + 1 + 2 * m..n + 1 + 4 * m]
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::*;
    use std::vec;
    use std::vec::Vec;

    #[test]
    fn partners_mirror_the_pairs() {
        let pairs = [Pair::new(4, 1, Link::Must), Pair::new(0, 2, Link::Cannot), Pair::new(1, 2, Link::Must)];
        let t = Constraints::new_in(vec![0; Constraints::indices_len(5, 3)], 5, &pairs).unwrap();
        assert_eq!(t.constrained_points(), 4);
        let sorted: Vec<Pair> = t.pairs().collect();
        assert_eq!(sorted, [Pair::new(0, 2, Link::Cannot), Pair::new(1, 2, Link::Must), Pair::new(1, 4, Link::Must)]);
        assert_eq!(t.partners(1).unwrap().collect::<Vec<_>>(), [(2, Link::Must), (4, Link::Must)]);
        assert_eq!(t.partners(3).unwrap().count(), 0);
        assert!(t.partners(5).is_none());
        assert_eq!(t.pair(3), None);
    }

    #[test]
    fn bad_pairs_are_rejected() {
        let make =
            |pairs: &[Pair]| Constraints::new_in(vec![0; Constraints::indices_len(4, pairs.len())], 4, pairs).err();
        assert_eq!(make(&[Pair::new(0, 4, Link::Must)]), Some(Error::IndexOutOfRange { index: 4, len: 4 }));
        assert_eq!(make(&[Pair::new(2, 2, Link::Must)]), Some(Error::InvalidParam { name: "pairs" }));
        let twice = [Pair::new(0, 1, Link::Must), Pair::new(1, 0, Link::Must)];
        assert_eq!(make(&twice), Some(Error::InvalidParam { name: "pairs" }));
        let conflict = [Pair::new(0, 1, Link::Must), Pair::new(2, 3, Link::Must), Pair::new(1, 0, Link::Cannot)];
        assert_eq!(make(&conflict), Some(Error::InvalidParam { name: "pairs" }));
        let r = Constraints::new_in([0u32; 4], 4, &[Pair::new(0, 1, Link::Must)]);
        assert_eq!(r.err(), Some(Error::CapacityExceeded { needed: 9, capacity: 4 }));
    }

    #[test]
    fn label_draws_are_distinct_and_honest() {
        let labels: Vec<u8> = (0..30).map(|i| (i % 3) as u8).collect();
        let mut rng = Rng::seed_from_u64(5);
        let t =
            Constraints::from_labels_in(vec![0; Constraints::indices_len(30, 100)], &labels, 60, 40, &mut rng).unwrap();
        let pairs: Vec<Pair> = t.pairs().collect();
        assert_eq!(pairs.len(), 100);
        assert_eq!(pairs.iter().filter(|p| p.link == Link::Must).count(), 60);
        for w in pairs.windows(2) {
            assert!((w[0].i, w[0].j) < (w[1].i, w[1].j));
        }
        for p in &pairs {
            assert_eq!(labels[p.i] == labels[p.j], p.link == Link::Must);
        }
        // All 18 must-link pairs of 3 classes of 4 can be drawn; 19 cannot.
        let small = &labels[..12];
        let all = Constraints::from_labels_in(vec![0; Constraints::indices_len(12, 18)], small, 18, 0, &mut rng);
        assert_eq!(all.unwrap().len(), 18);
        let r = Constraints::from_labels_in(vec![0; Constraints::indices_len(12, 19)], small, 19, 0, &mut rng);
        assert_eq!(r.err(), Some(Error::InvalidParam { name: "must" }));
        let one_class = [7u8; 5];
        let r = Constraints::from_labels_in(vec![0; Constraints::indices_len(5, 1)], &one_class, 0, 1, &mut rng);
        assert_eq!(r.err(), Some(Error::InvalidParam { name: "cannot" }));
        // More pairs than exist are refused before anything is drawn (the draw would never end).
        let before = rng.state();
        let r = Constraints::from_labels_in(vec![0; Constraints::indices_len(12, 200)], small, 100, 100, &mut rng);
        assert_eq!((r.err(), rng.state()), (Some(Error::InvalidParam { name: "must" }), before));
        let r = Constraints::from_labels_in(vec![0; Constraints::indices_len(12, 60)], small, 10, 50, &mut rng);
        assert_eq!((r.err(), rng.state()), (Some(Error::InvalidParam { name: "cannot" }), before));
    }
}
