//! IRSVM: incremental reduced-set selection (seed 003, Sect. 3.1, Algorithm 1).
//!
//! With `K̃ = K(A, Ã)` (`n × m`) and a candidate column `k = K(A, x_j)`, the distance of
//! `k` to the column space of `K̃` is
//!
//! ```text
//! r² = min_β ‖K̃β − k‖² = ‖k‖² − (K̃ᵀk)ᵀ(K̃ᵀK̃)⁻¹(K̃ᵀk) = ‖k‖² − ‖L⁻¹K̃ᵀk‖²      (eq. 25-28)
//! ```
//!
//! where `LLᵀ = K̃ᵀK̃` is kept as an updatable [`Cholesky`] factor: accepting `x_j`
//! appends the column `[K̃ᵀk; ‖k‖²]`, whose Schur complement is exactly `r²`. Candidates
//! are visited in a random order; the first `initial` independent ones form `Ã₀`; after
//! that a candidate joins when `r ≥ δ`. Selection stops after `max_rejections` rejections
//! in a row, at capacity, or when every point has been tried.
//!
//! `r` is the Euclidean distance in `ℝⁿ`, so it grows like `√n`: `δ/√n` is the root mean
//! square, over the `n` training points, of what the span fails to explain of the
//! candidate's kernel column — a scale-free way to choose `δ`.
//!
//! Cost per candidate: `n` kernel evaluations (O(nd)), `K̃ᵀk` (O(nm)) and a triangular
//! solve (O(m²)); per accepted point one more O(m²) append.
//!
//! `K̃ᵀk` reads all `n·m` features, so on a large set a candidate's cost is the memory
//! traffic of that read. Candidates are therefore projected [`BATCH`] at a time: one
//! pass over the features accumulates `K̃ᵀk` for each of them, and a candidate then tested
//! after others of its batch joined adds their entries, `k_jᵀk` of the two columns. Every
//! entry is the same sum over the rows in the same order as one candidate at a time
//! would take it, so the selection is the same, bit for bit.
//!
//! **Memory** for `n` points and capacity `c`: the features `K(A, Ã)` (`n·c` scalars,
//! row `i` = `z(x_i)`, ready for a linear solver), a batch's candidate columns
//! (`BATCH·n`) and projections (`BATCH·(c + 1)`) — [`Irsvm::scalars_len`]; the factor
//! ([`Cholesky::scalars_len`]`(c)`); and `n + c` indices (visiting order, selected
//! points) — [`Irsvm::indices_len`].

#![allow(
    clippy::indexing_slicing,
    reason = "features n × c, BATCH columns of n, BATCH projections of c + 1 and n + c indices: checked in select_in"
)]

use crate::cholesky::Cholesky;
use crate::kernel::point_count;
use crate::linalg::{axpy_prefix, dot_prefix};
use crate::storage::{Storage, check_capacity};
use crate::{Error, Kernel, Real, Rng};

/// IRSVM's parameters, unchecked: [`IrsvmParams::new`], the setters, then
/// [`check`](IrsvmParams::check).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct IrsvmParams<T> {
    delta: T,
    initial: usize,
    max_rejections: usize,
}

impl<T: Real> IrsvmParams<T> {
    /// The size of the initial reduced set unless [`initial`](Self::initial) says.
    pub const INITIAL: usize = 2;

    /// Threshold `δ` on the distance `r`, with an initial set of [`INITIAL`](Self::INITIAL)
    /// and a stop after 50 rejections in a row.
    pub fn new(delta: T) -> Self {
        IrsvmParams { delta, initial: Self::INITIAL, max_rejections: 50 }
    }

    /// Size of the initial reduced set `Ã₀` (the paper: "typically a size of 2").
    pub fn initial(mut self, initial: usize) -> Self {
        self.initial = initial;
        self
    }

    /// Rejections in a row after which selection stops (Algorithm 1, step 4).
    pub fn max_rejections(mut self, max_rejections: usize) -> Self {
        self.max_rejections = max_rejections;
        self
    }

    /// Validates the parameters.
    ///
    /// # Errors
    /// `InvalidParam` naming `delta` (finite, > 0), `initial` or `max_rejections` (≥ 1).
    pub fn check(self) -> Result<ValidIrsvmParams<T>, Error> {
        if !(self.delta > T::ZERO && self.delta.is_finite()) {
            return Err(Error::InvalidParam { name: "delta" });
        }
        if self.initial == 0 {
            return Err(Error::InvalidParam { name: "initial" });
        }
        if self.max_rejections == 0 {
            return Err(Error::InvalidParam { name: "max_rejections" });
        }
        Ok(ValidIrsvmParams(self))
    }
}

/// IRSVM parameters that passed [`IrsvmParams::check`]; read-only.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ValidIrsvmParams<T>(IrsvmParams<T>);

impl<T: Real> ValidIrsvmParams<T> {
    /// The threshold `δ > 0` on the distance `r`.
    pub fn delta(&self) -> T {
        self.0.delta
    }

    /// Size of the initial reduced set (≥ 1).
    pub fn initial(&self) -> usize {
        self.0.initial
    }

    /// Rejections in a row after which selection stops (≥ 1).
    pub fn max_rejections(&self) -> usize {
        self.0.max_rejections
    }
}

/// Why a selection ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SelectionStop {
    /// `max_rejections` candidates in a row were rejected.
    Rejections,
    /// The reduced set reached its capacity.
    Capacity,
    /// Every point was tried.
    Exhausted,
}

/// A reduced set chosen by IRSVM, with its reduced kernel `K(A, Ã)` and the factor of
/// `K(A, Ã)ᵀK(A, Ã)`.
///
/// # Examples
/// ```
/// use kestrel_core::cholesky::Cholesky;
/// use kestrel_core::reduced_set::{Irsvm, IrsvmParams};
/// use kestrel_core::{Kernel, Rng};
/// let points: Vec<f64> = (0..200).map(|i| (i as f64 * 0.37).sin()).collect(); // 100 × 2
/// let (n, capacity) = (100, 20);
/// let selection = Irsvm::select_in(
///     vec![0.0; Irsvm::scalars_len(n, capacity)],
///     Cholesky::new_in(vec![0.0; Cholesky::scalars_len(capacity)], capacity)?,
///     vec![0; Irsvm::indices_len(n, capacity)],
///     &points, 2, &Kernel::rbf(1.0)?, IrsvmParams::new(0.5).check()?, &mut Rng::seed_from_u64(3))?;
/// assert!(selection.len() >= 2 && selection.len() <= capacity);
/// assert_eq!(selection.features(0).unwrap().len(), selection.len());
/// # Ok::<(), kestrel_core::Error>(())
/// ```
#[derive(Debug)]
pub struct Irsvm<T, S, C, I> {
    values: S,
    factor: Cholesky<T, C>,
    indices: I,
    n: usize,
    stop: SelectionStop,
}

/// Candidates projected in one pass over the features (see the module docs).
pub const BATCH: usize = 8;

impl Irsvm<(), (), (), ()> {
    /// Scalars of the value storage for `n` points and capacity `c`:
    /// `n·c + BATCH·(n + c + 1)`.
    pub const fn scalars_len(n: usize, capacity: usize) -> usize {
        let candidates = n.saturating_add(capacity).saturating_add(1).saturating_mul(BATCH);
        n.saturating_mul(capacity).saturating_add(candidates)
    }

    /// `usize` entries of the index storage: `n + c`.
    pub const fn indices_len(n: usize, capacity: usize) -> usize {
        n.saturating_add(capacity)
    }

    /// Bytes of all three storages for scalar `T`.
    pub const fn bytes<T>(n: usize, capacity: usize) -> usize {
        let scalars = Self::scalars_len(n, capacity).saturating_add(Cholesky::scalars_len(capacity));
        let indices = Self::indices_len(n, capacity).saturating_mul(core::mem::size_of::<usize>());
        scalars.saturating_mul(core::mem::size_of::<T>()).saturating_add(indices)
    }
}

impl<T: Real, S: Storage<T>, C: Storage<T>, I: Storage<usize>> Irsvm<T, S, C, I> {
    /// Runs Algorithm 1 on the rows of `points` (row-major, `dim` columns); the capacity is
    /// the factor's.
    ///
    /// # Errors
    /// `InvalidParam` for `dim = 0`; `DimensionMismatch` when
    /// `points.len()` is not a multiple of `dim`; `NonFinite` for NaN/∞ points;
    /// `CapacityExceeded` when a storage is too small or the capacity is below `initial`.
    #[allow(clippy::too_many_arguments)]
    pub fn select_in(
        values: S,
        factor: Cholesky<T, C>,
        indices: I,
        points: &[T],
        dim: usize,
        kernel: &Kernel<T>,
        params: ValidIrsvmParams<T>,
        rng: &mut Rng,
    ) -> Result<Self, Error> {
        let n = point_count(points, dim)?;
        let capacity = factor.capacity();
        check_capacity(params.initial(), capacity)?;
        check_capacity(Irsvm::scalars_len(n, capacity), values.as_ref().len())?;
        check_capacity(Irsvm::indices_len(n, capacity), indices.as_ref().len())?;
        let mut selection = Irsvm { values, factor, indices, n, stop: SelectionStop::Exhausted };
        selection.factor.clear();
        selection.run(points, dim, kernel, params, rng);
        Ok(selection)
    }

    /// Number of points selected, `m = |Ã|`.
    pub fn len(&self) -> usize {
        self.factor.dim()
    }

    /// `true` when nothing was selected (only for `n = 0`).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Indices (rows of `points`) of the reduced set, in the order they joined.
    pub fn indices(&self) -> &[usize] {
        &self.indices.as_ref()[self.n..self.n + self.len()]
    }

    /// Row `i` of the reduced kernel: `z(x_i) = K(x_i, Ã)` (`m` entries), or `None` for
    /// `i ≥ n`.
    pub fn features(&self, i: usize) -> Option<&[T]> {
        let stride = self.factor.capacity();
        self.values.as_ref().get(i.checked_mul(stride)?..)?.get(..self.len()).filter(|_| i < self.n)
    }

    /// The factor `L` of `K(A, Ã)ᵀK(A, Ã) = LLᵀ`.
    pub fn factor(&self) -> &Cholesky<T, C> {
        &self.factor
    }

    /// Why selection stopped.
    pub fn stop(&self) -> SelectionStop {
        self.stop
    }

    fn run(&mut self, points: &[T], dim: usize, kernel: &Kernel<T>, params: ValidIrsvmParams<T>, rng: &mut Rng) {
        let (n, capacity) = (self.n, self.factor.capacity());
        let order = &mut self.indices.as_mut()[..n];
        for (i, slot) in order.iter_mut().enumerate() {
            *slot = i;
        }
        rng.shuffle(order);
        let delta2 = params.delta() * params.delta();
        let mut rejections = 0;
        for first in (0..n).step_by(BATCH) {
            if self.len() == capacity {
                break;
            }
            let mut batch = [0; BATCH];
            let size = BATCH.min(n - first);
            batch[..size].copy_from_slice(&self.indices.as_ref()[first..first + size]);
            self.project(points, dim, kernel, &batch[..size]);
            let (projected, mut joined) = (self.len(), [0; BATCH]);
            for (slot, &candidate) in batch[..size].iter().enumerate() {
                if self.len() == capacity {
                    self.stop = SelectionStop::Capacity;
                    return;
                }
                let threshold = if self.len() < params.initial() { T::ZERO } else { delta2 };
                let earlier = &joined[..self.len() - projected];
                if self.try_add(candidate, slot, projected, earlier, threshold) {
                    joined[self.len() - 1 - projected] = slot;
                    rejections = 0;
                } else if self.len() >= params.initial() {
                    rejections += 1;
                    if rejections == params.max_rejections() {
                        self.stop = SelectionStop::Rejections;
                        return;
                    }
                }
            }
        }
        self.stop = if self.len() == capacity { SelectionStop::Capacity } else { SelectionStop::Exhausted };
    }

    /// The batch's kernel columns `k = K(A, x)`, and their projections `K̃ᵀk` on the
    /// centres chosen so far, in one pass over the features.
    fn project(&mut self, points: &[T], dim: usize, kernel: &Kernel<T>, batch: &[usize]) {
        let (n, capacity, m) = (self.n, self.factor.capacity(), self.len());
        let (features, rest) = self.values.as_mut().split_at_mut(n * capacity);
        let (columns, projections) = rest.split_at_mut(BATCH * n);
        for (&candidate, column) in batch.iter().zip(columns.chunks_exact_mut(n)) {
            kernel.column_of_rows(&points[candidate * dim..(candidate + 1) * dim], &points[..n * dim], column);
        }
        projections.fill(T::ZERO);
        for (i, row) in features.chunks_exact(capacity).enumerate() {
            for (column, projection) in
                columns.chunks_exact(n).zip(projections.chunks_exact_mut(capacity + 1)).take(batch.len())
            {
                axpy_prefix(column[i], &row[..m], &mut projection[..m]);
            }
        }
    }

    /// Adds the batch's `slot`-th candidate when its squared distance `r²` to the span
    /// reaches `threshold` (and the factor accepts it); returns whether it joined. Its
    /// projection holds the first `projected` entries; those of the centres that joined
    /// from the batch since (its slots `earlier`) are the sums over the rows of the two
    /// columns' products, taken in row order as the pass takes every entry.
    fn try_add(&mut self, candidate: usize, slot: usize, projected: usize, earlier: &[usize], threshold: T) -> bool {
        let (n, capacity, m) = (self.n, self.factor.capacity(), self.len());
        let (features, rest) = self.values.as_mut().split_at_mut(n * capacity);
        let (columns, projections) = rest.split_at_mut(BATCH * n);
        let column = &columns[slot * n..(slot + 1) * n];
        let projection = &mut projections[slot * (capacity + 1)..][..=m];
        for (entry, &other) in projection[projected..m].iter_mut().zip(earlier) {
            *entry = column.iter().zip(&columns[other * n..(other + 1) * n]).fold(T::ZERO, |sum, (&c, &z)| sum + c * z);
        }
        projection[m] = dot_prefix(column, column);
        if self.factor.append_column(projection).is_err() {
            return false;
        }
        // The new diagonal of L is r = √(‖k‖² − ‖L⁻¹K̃ᵀk‖²) (the Schur complement).
        let r = self.factor.row(m).and_then(|row| row.last().copied()).unwrap_or(T::ZERO);
        if r * r < threshold {
            // Rejected: drop the row just appended (the last one, so nothing else moves).
            let _ = self.factor.remove_column(m);
            return false;
        }
        for (&c, row) in column.iter().zip(features.chunks_exact_mut(capacity)) {
            row[m] = c;
        }
        self.indices.as_mut()[n + m] = candidate;
        true
    }
}
