//! Pivoted incomplete Cholesky of a kernel matrix read on demand (seed 000, Sect. 3.2).
//!
//! Approximates a positive semi-definite `n × n` matrix `K ≈ G·Gᵀ` with `G` of `n × r`,
//! greedily: at step `t` the pivot `p_t` is the index with the largest residual diagonal
//! `d_i = K_ii − Σ_{s<t} G_is²`, and column `t` of `G` is
//!
//! ```text
//! G_{p_t,t} = √d_{p_t},   G_{i,t} = (K_{i,p_t} − Σ_{s<t} G_is G_{p_t,s}) / G_{p_t,t}.
//! ```
//!
//! It stops at the rank budget `r`, or when the trace residual `Σ d_i = tr(K − GGᵀ)` falls
//! to `tolerance · tr(K)`. This is the pivoted Cholesky of `P K Pᵀ` stopped after `r`
//! columns: the rows of `G` at the pivots form the leading `r × r` factor, the others the
//! block below it.
//!
//! `K` is never stored: each step reads one column `K(·, p_t)` through the `entry`
//! closure (`n` evaluations) plus the diagonal once. Time O(r²n + r·n·c_K) where `c_K` is
//! the cost of one entry (O(d) for a kernel on d-dimensional points).
//!
//! **Memory**: `n·r + n` scalars (`G` row-major, then the residual diagonal) plus `r`
//! pivot indices; see [`IncompleteCholesky::bytes`].

#![allow(
    clippy::indexing_slicing,
    reason = "G is n × max_rank, the residual n and the pivots max_rank (checked by the constructor); points hold n rows of dim"
)]

use crate::kernel::{Kernel, point_count};
use crate::linalg::dot_prefix;
use crate::storage::{Storage, check_capacity};
use crate::{Error, Real};

/// Why the factorization stopped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StopReason {
    /// The trace residual reached `tolerance · tr(K)`.
    Tolerance,
    /// The rank reached `max_rank` (or `n`) first.
    RankBudget,
}

/// A rank-`r` pivoted incomplete Cholesky factor `K ≈ G·Gᵀ`.
///
/// # Examples
/// ```
/// use kestrel_core::Kernel;
/// use kestrel_core::IncompleteCholesky;
/// // 50 points on a line, RBF kernel: the Gram matrix has a fast-decaying spectrum.
/// let points: Vec<f64> = (0..50).map(|i| i as f64 / 49.0).collect();
/// let (n, r) = (50, 20);
/// let mut values = vec![0.0; IncompleteCholesky::scalars_len(n, r)];
/// let mut pivots = vec![0; IncompleteCholesky::indices_len(r)];
/// let ich = IncompleteCholesky::from_kernel_in(
///     &mut values[..], &mut pivots[..], &Kernel::rbf(1.0)?, &points, 1, r, 1e-9)?;
/// assert!(ich.rank() < r);
/// assert!(ich.residual() <= 1e-9 * ich.trace());
/// # Ok::<(), kestrel_core::Error>(())
/// ```
#[derive(Debug)]
pub struct IncompleteCholesky<T, S, P> {
    values: S,
    pivots: P,
    n: usize,
    max_rank: usize,
    rank: usize,
    trace: T,
    residual: T,
    stop: StopReason,
}

impl IncompleteCholesky<(), (), ()> {
    /// Scalars of the value storage: `G` (`n × max_rank`) and the residual diagonal (`n`).
    pub const fn scalars_len(n: usize, max_rank: usize) -> usize {
        n.saturating_mul(max_rank).saturating_add(n)
    }

    /// `usize` entries of the pivot storage: `max_rank`.
    pub const fn indices_len(max_rank: usize) -> usize {
        max_rank
    }

    /// Bytes of both storages together for scalar `T`.
    pub const fn bytes<T>(n: usize, max_rank: usize) -> usize {
        let values = Self::scalars_len(n, max_rank).saturating_mul(core::mem::size_of::<T>());
        values.saturating_add(Self::indices_len(max_rank).saturating_mul(core::mem::size_of::<usize>()))
    }
}

impl<T: Real, S: Storage<T>, P: Storage<usize>> IncompleteCholesky<T, S, P> {
    /// Factors the `n × n` matrix with diagonal `diagonal(i)` and entries `entry(i, j)`.
    ///
    /// `tolerance` is relative: stop once `tr(K − GGᵀ) ≤ tolerance · tr(K)`; 0 runs to the
    /// rank budget (or to an exact factor).
    ///
    /// # Errors
    /// `InvalidParam { name: "tolerance" }` unless `0 ≤ tolerance` and finite;
    /// `CapacityExceeded` when `values` or `pivots` is shorter than [`IncompleteCholesky::scalars_len`] /
    /// [`IncompleteCholesky::indices_len`]; `NonFinite` when an entry is NaN/∞; `NotPositiveDefinite { pivot }`
    /// when a diagonal entry is negative (the matrix cannot be a kernel matrix).
    pub fn factor_in(
        values: S,
        pivots: P,
        n: usize,
        max_rank: usize,
        tolerance: T,
        mut diagonal: impl FnMut(usize) -> T,
        mut entry: impl FnMut(usize, usize) -> T,
    ) -> Result<Self, Error> {
        if !(tolerance >= T::ZERO && tolerance.is_finite()) {
            return Err(Error::InvalidParam { name: "tolerance" });
        }
        check_capacity(IncompleteCholesky::scalars_len(n, max_rank), values.as_ref().len())?;
        check_capacity(IncompleteCholesky::indices_len(max_rank), pivots.as_ref().len())?;
        let mut ich = IncompleteCholesky {
            values,
            pivots,
            n,
            max_rank,
            rank: 0,
            trace: T::ZERO,
            residual: T::ZERO,
            stop: StopReason::RankBudget,
        };
        ich.init_diagonal(&mut diagonal)?;
        let threshold = tolerance * ich.trace;
        while ich.residual > threshold {
            if ich.rank == max_rank.min(n) {
                return Ok(ich);
            }
            ich.add_pivot_column(&mut entry)?;
        }
        ich.stop = StopReason::Tolerance;
        Ok(ich)
    }

    /// Factors the kernel matrix of the rows of `points` (row-major, `dim` columns).
    ///
    /// # Errors
    /// As [`factor_in`](Self::factor_in); `InvalidParam { name: "dim" }` for `dim = 0`;
    /// `DimensionMismatch` when `points.len()` is not a multiple of `dim`; `NonFinite` for
    /// NaN/∞ in `points`.
    pub fn from_kernel_in(
        values: S,
        pivots: P,
        kernel: &Kernel<T>,
        points: &[T],
        dim: usize,
        max_rank: usize,
        tolerance: T,
    ) -> Result<Self, Error> {
        let n = point_count(points, dim)?;
        let point = |i: usize| &points[i * dim..(i + 1) * dim];
        Self::factor_in(
            values,
            pivots,
            n,
            max_rank,
            tolerance,
            |i| kernel.diagonal(point(i)),
            |i, j| kernel.eval_prefix(point(i), point(j)),
        )
    }

    /// Rank `r` reached.
    pub fn rank(&self) -> usize {
        self.rank
    }

    /// Size `n` of the factored matrix.
    pub fn n(&self) -> usize {
        self.n
    }

    /// The pivots in the order chosen: `pivots()[t]` is the row that column `t` is pivoted on.
    pub fn pivots(&self) -> &[usize] {
        &self.pivots.as_ref()[..self.rank]
    }

    /// Row `i` of `G` (`r` entries), or `None` when `i ≥ n`.
    pub fn row(&self, i: usize) -> Option<&[T]> {
        if i >= self.n {
            return None;
        }
        self.values.as_ref().get(i * self.max_rank..i * self.max_rank + self.rank)
    }

    /// The residual diagonal `diag(K − GGᵀ)` (clamped at 0 against rounding).
    pub fn residual_diagonal(&self) -> &[T] {
        let start = self.n * self.max_rank;
        &self.values.as_ref()[start..start + self.n]
    }

    /// `tr(K − GGᵀ)`.
    pub fn residual(&self) -> T {
        self.residual
    }

    /// `tr(K)`.
    pub fn trace(&self) -> T {
        self.trace
    }

    /// Why the factorization stopped.
    pub fn stop_reason(&self) -> StopReason {
        self.stop
    }

    /// Gives both storages back.
    pub fn into_storage(self) -> (S, P) {
        (self.values, self.pivots)
    }

    fn init_diagonal(&mut self, diagonal: &mut impl FnMut(usize) -> T) -> Result<(), Error> {
        let start = self.n * self.max_rank;
        let d = &mut self.values.as_mut()[start..start + self.n];
        for (i, di) in d.iter_mut().enumerate() {
            *di = diagonal(i);
            if !di.is_finite() {
                return Err(Error::NonFinite);
            }
            if *di < T::ZERO {
                return Err(Error::NotPositiveDefinite { pivot: i });
            }
        }
        self.trace = d.iter().fold(T::ZERO, |acc, &x| acc + x);
        self.residual = self.trace;
        Ok(())
    }

    /// Pivots on the largest residual diagonal and appends the matching column of `G`.
    fn add_pivot_column(&mut self, entry: &mut impl FnMut(usize, usize) -> T) -> Result<(), Error> {
        let (n, r, t) = (self.n, self.max_rank, self.rank);
        let (g, d) = self.values.as_mut().split_at_mut(n * r);
        let d = &mut d[..n];
        let p = argmax(d);
        let pivot_value = d[p].sqrt();
        for i in 0..n {
            let k = entry(i, p);
            if !k.is_finite() {
                return Err(Error::NonFinite);
            }
            let sum = if i == p { T::ZERO } else { dot_prefix(&g[i * r..i * r + t], &g[p * r..p * r + t]) };
            g[i * r + t] = if i == p { pivot_value } else { (k - sum) / pivot_value };
        }
        for (i, di) in d.iter_mut().enumerate() {
            let gi = g[i * r + t];
            *di = (*di - gi * gi).max_of(T::ZERO);
        }
        d[p] = T::ZERO;
        self.residual = d.iter().fold(T::ZERO, |acc, &x| acc + x);
        self.pivots.as_mut()[t] = p;
        self.rank = t + 1;
        Ok(())
    }
}

/// Index of the largest value (the first of equals).
fn argmax<T: Real>(d: &[T]) -> usize {
    let mut best = 0;
    for (i, &x) in d.iter().enumerate() {
        if x > d[best] {
            best = i;
        }
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exact_on_a_low_rank_matrix() {
        // K = v vᵀ + w wᵀ, rank 2: two pivots reproduce it exactly.
        let v = [1.0, 2.0, 0.5, -1.0];
        let w = [0.0, 1.0, 3.0, 1.0];
        let k = |i: usize, j: usize| v[i] * v[j] + w[i] * w[j];
        let ich = IncompleteCholesky::factor_in([0.0; 20], [0usize; 4], 4, 4, 1e-12, |i| k(i, i), k).unwrap();
        assert_eq!(ich.rank(), 2);
        assert_eq!(ich.stop_reason(), StopReason::Tolerance);
        assert_eq!(ich.pivots()[0], 2); // largest diagonal 9.25
        for i in 0..4 {
            for j in 0..4 {
                let approx = dot_prefix(ich.row(i).unwrap(), ich.row(j).unwrap());
                assert!((approx - k(i, j)).abs() < 1e-12);
            }
        }
    }

    #[test]
    fn errors() {
        let k = |_: usize, _: usize| 1.0f64;
        let r = IncompleteCholesky::factor_in([0.0; 3], [0usize; 2], 2, 2, 0.0, |_| 1.0, k);
        assert_eq!(r.err(), Some(Error::CapacityExceeded { needed: 6, capacity: 3 }));
        let r = IncompleteCholesky::factor_in([0.0; 6], [0usize; 1], 2, 2, 0.0, |_| 1.0, k);
        assert_eq!(r.err(), Some(Error::CapacityExceeded { needed: 2, capacity: 1 }));
        let r = IncompleteCholesky::factor_in([0.0; 6], [0usize; 2], 2, 2, -1.0, |_| 1.0, k);
        assert_eq!(r.err(), Some(Error::InvalidParam { name: "tolerance" }));
        let r = IncompleteCholesky::factor_in([0.0; 6], [0usize; 2], 2, 2, 0.0, |i| 1.0 - 2.0 * i as f64, k);
        assert_eq!(r.err(), Some(Error::NotPositiveDefinite { pivot: 1 }));
        let r = IncompleteCholesky::factor_in([0.0; 6], [0usize; 2], 2, 2, 0.0, |_| 1.0, |_, _| f64::NAN);
        assert_eq!(r.err(), Some(Error::NonFinite));
        let kernel = Kernel::rbf(1.0).unwrap();
        let r = IncompleteCholesky::from_kernel_in([0.0; 6], [0usize; 2], &kernel, &[1.0, f64::NAN], 1, 2, 0.0);
        assert_eq!(r.err(), Some(Error::NonFinite));
        let r = IncompleteCholesky::from_kernel_in([0.0; 6], [0usize; 2], &kernel, &[1.0, 2.0, 3.0], 2, 2, 0.0);
        assert_eq!(r.err(), Some(Error::DimensionMismatch { expected: 4, got: 3 }));
        let r = IncompleteCholesky::from_kernel_in([0.0; 6], [0usize; 2], &kernel, &[], 0, 2, 0.0);
        assert_eq!(r.err(), Some(Error::InvalidParam { name: "dim" }));
    }
}
