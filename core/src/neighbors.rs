//! Exact k-nearest-neighbour search, for any learner that needs neighbour lists (the kNN
//! graph of [`npkl`](crate::npkl), eq. 1 of seed 004, and its out-of-sample extension,
//! Sect. III-E).
//!
//! Neighbours are ordered by the key `(squared distance, index)`, so ties go to the lower
//! index and both searches return the same lists:
//!
//! - [`Search::BruteForce`]: every pair, `O(n²d)` time, `O(n·k²)` worst case for keeping
//!   the lists sorted (usually `O(n²)` cheap rejections).
//! - [`Search::SortedProjection`]: the points are sorted along the coordinate of largest
//!   variance (`O(n log n)`, an `n`-entry permutation of scratch); each point scans
//!   outward in that order, nearer side first, and stops when the gap along the axis
//!   alone exceeds its current `k`-th distance — the gap bounds the distance from below,
//!   so no unvisited point can enter. `O(n·w·d)` for a slab of `w` points: `w ≈ √(k·n)`
//!   for uniform 2-D data, at worst `n` (high dimension).
//!
//! No memory besides the caller's lists.

#![allow(
    clippy::indexing_slicing,
    reason = "lists and distances of n·k, perm of n, point indices < n = points.len()/dim: sizes the callers checked"
)]

use crate::Real;
use crate::linalg::squared_distance_prefix;

/// How the exact nearest neighbours are found.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Search {
    /// Scan a slab around each point along the coordinate of largest variance (exact).
    #[default]
    SortedProjection,
    /// Compare every pair of points, `O(n²d)`.
    BruteForce,
}

/// Offers `j` at squared distance `d2` to the list `(idx, dist)` of its `len` best so far,
/// sorted by `(distance, index)`, of capacity `idx.len()`; returns the new length.
pub(crate) fn offer<T: Real>(idx: &mut [u32], dist: &mut [T], len: usize, j: u32, d2: T) -> usize {
    let capacity = idx.len().min(dist.len());
    let len = len.min(capacity);
    let mut p = len;
    while p > 0 && (dist[p - 1] > d2 || (dist[p - 1] == d2 && idx[p - 1] > j)) {
        p -= 1;
    }
    if p >= capacity {
        return len;
    }
    let new_len = (len + 1).min(capacity);
    for q in (p + 1..new_len).rev() {
        idx[q] = idx[q - 1];
        dist[q] = dist[q - 1];
    }
    idx[p] = j;
    dist[p] = d2;
    new_len
}

/// The `k` nearest neighbours of every point by comparing all pairs.
pub(crate) fn brute_force<T: Real>(points: &[T], dim: usize, k: usize, lists: &mut [u32], dists: &mut [T]) {
    for ((i, idx), dist) in lists.chunks_exact_mut(k).enumerate().zip(dists.chunks_exact_mut(k)) {
        let xi = &points[i * dim..(i + 1) * dim];
        let mut len = 0;
        for ((j, j32), xj) in (0..).zip(0u32..).zip(points.chunks_exact(dim)) {
            if j != i {
                len = offer(idx, dist, len, j32, squared_distance_prefix(xi, xj));
            }
        }
    }
}

/// The `k` nearest neighbours of every point by scanning outward along the sorted
/// coordinate of largest variance (`perm`, `n` entries, is scratch).
pub(crate) fn sorted_projection<T: Real>(
    points: &[T],
    dim: usize,
    n: usize,
    k: usize,
    lists: &mut [u32],
    perm: &mut [u32],
    dists: &mut [T],
) {
    let axis = widest_axis(points, dim, n);
    let key = |p: u32| points[p as usize * dim + axis];
    for (slot, p) in perm.iter_mut().zip(0u32..) {
        *slot = p;
    }
    perm.sort_unstable_by(|&a, &b| key(a).partial_cmp(&key(b)).unwrap_or(core::cmp::Ordering::Equal).then(a.cmp(&b)));
    for pos in 0..n {
        let i = perm[pos] as usize;
        let xi = &points[i * dim..(i + 1) * dim];
        let ki = xi[axis];
        let (idx, dist) = (&mut lists[i * k..(i + 1) * k], &mut dists[i * k..(i + 1) * k]);
        let (mut len, mut below, mut above) = (0, pos, pos + 1);
        loop {
            let gap_below = (below > 0).then(|| ki - key(perm[below - 1]));
            let gap_above = (above < n).then(|| key(perm[above]) - ki);
            let (gap, take_below) = match (gap_below, gap_above) {
                (Some(b), Some(a)) => {
                    if b <= a {
                        (b, true)
                    } else {
                        (a, false)
                    }
                }
                (Some(b), None) => (b, true),
                (None, Some(a)) => (a, false),
                (None, None) => break,
            };
            // The gap along one axis bounds the distance from below, so once the nearer
            // side's gap exceeds the k-th distance, no unvisited point can enter.
            if len == k && gap * gap > dist[k - 1] {
                break;
            }
            let j = if take_below {
                below -= 1;
                perm[below]
            } else {
                above += 1;
                perm[above - 1]
            };
            let xj = &points[j as usize * dim..(j as usize + 1) * dim];
            len = offer(idx, dist, len, j, squared_distance_prefix(xi, xj));
        }
    }
}

/// The coordinate with the largest variance (the first among equals).
fn widest_axis<T: Real>(points: &[T], dim: usize, n: usize) -> usize {
    let inv_n = T::ONE / T::from_f64(n as f64);
    let mut best = (0, T::ZERO);
    for a in 0..dim {
        let mean = points.chunks_exact(dim).fold(T::ZERO, |acc, x| acc + x[a]) * inv_n;
        let var = points.chunks_exact(dim).fold(T::ZERO, |acc, x| acc + (x[a] - mean) * (x[a] - mean));
        if var > best.1 {
            best = (a, var);
        }
    }
    best.0
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::*;
    use std::vec;

    #[test]
    fn offer_keeps_the_k_best_sorted() {
        let (mut idx, mut dist) = ([0u32; 3], [0.0f64; 3]);
        let mut len = 0;
        for (j, d) in [(0u32, 5.0), (1, 1.0), (2, 3.0), (3, 1.0), (4, 0.5), (5, 9.0)] {
            len = offer(&mut idx, &mut dist, len, j, d);
        }
        assert_eq!((len, idx, dist), (3, [4, 1, 3], [0.5, 1.0, 1.0]));
    }

    #[test]
    fn searches_agree_with_ties_and_duplicates() {
        let mut rng = crate::Rng::seed_from_u64(8);
        // Points on a coarse grid: many equal distances and some duplicates.
        for dim in [1, 2, 3, 5] {
            let n = 80;
            let points: std::vec::Vec<f32> = (0..n * dim).map(|_| rng.below(4) as f32).collect();
            let k = 6;
            let (mut a, mut b) = (vec![0u32; n * k], vec![0u32; n * k]);
            let (mut da, mut db) = (vec![0.0f32; n * k], vec![0.0f32; n * k]);
            let mut perm = vec![0u32; n];
            brute_force(&points, dim, k, &mut a, &mut da);
            sorted_projection(&points, dim, n, k, &mut b, &mut perm, &mut db);
            assert_eq!(a, b, "dim {dim}");
            assert_eq!(da, db);
        }
    }
}
