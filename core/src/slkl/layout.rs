//! Capacities of an SLKL learner and how its two buffers are carved up.
//!
//! A learner works in one buffer of scalars and one of `usize` indices, both lent or owned
//! by the caller (see [`crate::storage`]). [`Dims`] fixes every capacity at construction;
//! the learners' `const fn`s ([`Slkl::scalars_len`](super::Slkl::scalars_len), …) give the
//! lengths and bytes before anything is built.

use crate::Cholesky;
use crate::storage::check_capacity;
use crate::{Error, Real};

use super::columns::{ColumnMode, columns_len};

/// The capacities of an SLKL learner: `rows` training samples (or the window length `N`),
/// `dim` features, `candidates` = `M` candidate columns, `max_active` = the largest `m0`
/// (number of non-zero weights) the learner may reach, and where the columns live.
///
/// Memory, in scalars (see [`Slkl::scalars_len`](super::Slkl::scalars_len) and
/// [`SlklWindow::scalars_len`](super::SlklWindow::scalars_len)): the factor
/// `A(A+1)/2 + 2A` for `A = max_active`, the columns (`rows·(A+1)` on the fly,
/// `rows·M` precomputed), `rows` for `K_λ⁻¹y`, `5A` vectors (`Cᵀy`, the columns' sums,
/// `z` and two work vectors), `M` weights, `M·dim`
/// candidate centres and `M + 1` objective values for the stopping rule; the window mode
/// adds the samples, `rows·(dim + 1)`. Indices: `A + 2M`.
///
/// # Examples
/// ```
/// use kestrel_core::slkl::{Dims, Slkl};
/// // n = 1000 points in 2-D, M = 1000 candidates, m0 ≤ 200, columns on the fly.
/// const DIMS: Dims = Dims::new(1000, 2, 1000, 200);
/// const BYTES: usize = Slkl::bytes::<f32>(DIMS);
/// assert_eq!(Slkl::scalars_len(DIMS), 20_100 + 400 + 201_000 + 1000 + 1000 + 1000 + 2000 + 1001);
/// assert_eq!(BYTES, Slkl::scalars_len(DIMS) * 4 + Slkl::indices_len(DIMS) * core::mem::size_of::<usize>());
/// // Precomputing all M columns costs n·M scalars instead of n·(m0 max + 1).
/// assert!(Slkl::scalars_len(DIMS.precomputed()) > Slkl::scalars_len(DIMS));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Dims {
    rows: usize,
    dim: usize,
    candidates: usize,
    max_active: usize,
    columns: ColumnMode,
}

impl Dims {
    /// Capacities with columns computed on the fly.
    pub const fn new(rows: usize, dim: usize, candidates: usize, max_active: usize) -> Self {
        Dims { rows, dim, candidates, max_active, columns: ColumnMode::OnTheFly }
    }

    /// The same capacities with all `M` columns precomputed.
    pub const fn precomputed(self) -> Self {
        self.columns(ColumnMode::Precomputed)
    }

    /// The same capacities with the columns held as costs fewer scalars: precomputed
    /// (`rows·M`) when `M ≤ m0_max + 1`, no more than on the fly (`rows·(m0_max + 1)`) —
    /// and a step then computes no column — else on the fly.
    pub const fn fewer_scalars(self) -> Self {
        if self.candidates <= self.max_active.saturating_add(1) {
            self.precomputed()
        } else {
            self.columns(ColumnMode::OnTheFly)
        }
    }

    /// The same capacities with the given column mode.
    pub const fn columns(mut self, columns: ColumnMode) -> Self {
        self.columns = columns;
        self
    }

    /// Training samples (batch) or window length `N`.
    pub const fn rows(&self) -> usize {
        self.rows
    }
    /// Features per sample.
    pub const fn dim(&self) -> usize {
        self.dim
    }
    /// Candidate capacity `M`.
    pub const fn candidates(&self) -> usize {
        self.candidates
    }
    /// Largest number of active columns `m0`.
    pub const fn max_active(&self) -> usize {
        self.max_active
    }
    /// Where columns live.
    pub const fn column_mode(&self) -> ColumnMode {
        self.columns
    }

    /// Lengths of the scalar regions, in buffer order (see [`Region`]).
    const fn lengths(&self) -> [usize; 11] {
        let a = self.max_active;
        let m = self.candidates;
        [
            Cholesky::scalars_len(a),
            columns_len(self.columns, self.rows, m, a),
            self.rows,
            a,
            a,
            a,
            a,
            a,
            m,
            m.saturating_mul(self.dim),
            m.saturating_add(1),
        ]
    }

    /// Scalars of a batch learner, saturating ([`Slkl::scalars_len`](super::Slkl::scalars_len)).
    pub(crate) const fn batch_scalars(&self) -> usize {
        let mut parts: &[usize] = &self.lengths();
        let mut total = 0usize;
        while let [first, rest @ ..] = parts {
            total = total.saturating_add(*first);
            parts = rest;
        }
        total
    }

    /// Where region `region` lies in the scalar buffer (valid once the constructor has
    /// checked the buffer against [`Slkl::scalars_len`](super::Slkl::scalars_len)).
    pub(crate) fn region(&self, region: Region) -> core::ops::Range<usize> {
        let lengths = self.lengths();
        let k = region as usize;
        let start = lengths.iter().take(k).sum();
        start..start + lengths.get(k).copied().unwrap_or(0)
    }

    /// Scalars of a sliding-window learner: the batch learner's plus the window's samples,
    /// `rows·(dim + 1)` ([`SlklWindow::scalars_len`](super::SlklWindow::scalars_len)).
    pub(crate) const fn window_scalars(&self) -> usize {
        let samples = self.rows.saturating_mul(self.dim.saturating_add(1));
        self.batch_scalars().saturating_add(samples)
    }

    /// `usize` indices of either learner: `max_active + 2·candidates`.
    pub(crate) const fn indices(&self) -> usize {
        self.max_active.saturating_add(self.candidates.saturating_mul(2))
    }

    /// Bytes of `scalars` scalars of type `T` and the learner's indices (saturating).
    pub(crate) const fn bytes<T>(&self, scalars: usize) -> usize {
        let scalars = scalars.saturating_mul(core::mem::size_of::<T>());
        scalars.saturating_add(self.indices().saturating_mul(core::mem::size_of::<usize>()))
    }

    /// `InvalidParam` for a zero capacity; `CapacityExceeded` when the buffers are short.
    pub(crate) fn check(&self, scalars: usize, needed_scalars: usize, indices: usize) -> Result<(), Error> {
        if self.dim == 0 {
            return Err(Error::InvalidParam { name: "dim" });
        }
        if self.rows == 0 {
            return Err(Error::InvalidParam { name: "rows" });
        }
        if self.candidates == 0 {
            return Err(Error::InvalidParam { name: "candidates" });
        }
        if self.max_active == 0 {
            return Err(Error::InvalidParam { name: "max_active" });
        }
        if needed_scalars == usize::MAX || self.indices() == usize::MAX {
            return Err(Error::CapacityExceeded { needed: usize::MAX, capacity: scalars });
        }
        check_capacity(needed_scalars, scalars)?;
        check_capacity(self.indices(), indices)
    }

    /// Splits the learner's scalar buffer (at least [`Slkl::scalars_len`](super::Slkl::scalars_len)
    /// long, checked by the constructor) into its regions.
    pub(crate) fn split<'b, T: Real>(&self, buf: &'b mut [T]) -> Parts<'b, T> {
        let [factor, cols, r, cty, col_sums, z, w1, w2, mu, centres, history] = self.lengths();
        let (factor, rest) = buf.split_at_mut(factor);
        let (cols, rest) = rest.split_at_mut(cols);
        let (r, rest) = rest.split_at_mut(r);
        let (cty, rest) = rest.split_at_mut(cty);
        let (col_sums, rest) = rest.split_at_mut(col_sums);
        let (z, rest) = rest.split_at_mut(z);
        let (w1, rest) = rest.split_at_mut(w1);
        let (w2, rest) = rest.split_at_mut(w2);
        let (mu, rest) = rest.split_at_mut(mu);
        let (centres, rest) = rest.split_at_mut(centres);
        let (history, _) = rest.split_at_mut(history);
        Parts { factor, cols, r, cty, col_sums, z, w1, w2, mu, centres, history }
    }

    /// Splits the index buffer: active candidates in factor order, each candidate's
    /// position in the factor, the shrinking pool.
    pub(crate) fn split_indices<'b>(&self, buf: &'b mut [usize]) -> Indices<'b> {
        let (active, rest) = buf.split_at_mut(self.max_active);
        let (position, rest) = rest.split_at_mut(self.candidates);
        let (pool, _) = rest.split_at_mut(self.candidates);
        Indices { active, position, pool }
    }
}

/// The regions of the scalar buffer, in order: a variant's discriminant indexes
/// `Dims::lengths`, so every region is named even where only `split` reaches it.
#[allow(dead_code)]
#[derive(Clone, Copy, Debug)]
pub(crate) enum Region {
    Factor,
    Cols,
    R,
    Cty,
    ColSums,
    Z,
    W1,
    W2,
    Mu,
    Centres,
    History,
}

/// The regions of a learner's scalar buffer.
pub(crate) struct Parts<'b, T> {
    /// Packed factor `L` of `H = D⁻¹ + CᵀC/λ` (plus its rotation buffers).
    pub factor: &'b mut [T],
    /// Column storage, see [`super::columns::Columns`].
    pub cols: &'b mut [T],
    /// `r = K_λ⁻¹y` over the live rows.
    pub r: &'b mut [T],
    /// `Cᵀ(y − y₀)` over the active columns, factor order, `y₀` the engine's reference
    /// (the targets' mean when fresh).
    pub cty: &'b mut [T],
    /// `Cᵀ1`, each active column's sum, factor order (moves `Cᵀy` to a new mean).
    pub col_sums: &'b mut [T],
    /// `z = H⁻¹Cᵀy`.
    pub z: &'b mut [T],
    /// Work vector of `max_active`.
    pub w1: &'b mut [T],
    /// Work vector of `max_active`.
    pub w2: &'b mut [T],
    /// Weights `μ`, by candidate.
    pub mu: &'b mut [T],
    /// Candidate centres, row-major.
    pub centres: &'b mut [T],
    /// Ring of past objective values for the stopping rule.
    pub history: &'b mut [T],
}

/// The regions of a learner's index buffer.
pub(crate) struct Indices<'b> {
    /// Candidate of each active position (factor order).
    pub active: &'b mut [usize],
    /// Factor position of each candidate, [`NONE`] when inactive.
    pub position: &'b mut [usize],
    /// The shrinking pool: candidates drawn from are `pool[..pool_len]`.
    pub pool: &'b mut [usize],
}

/// Position of an inactive candidate.
pub(crate) const NONE: usize = usize::MAX;

#[cfg(test)]
mod tests {
    use super::*;
    use std::vec;

    #[test]
    fn regions_tile_the_buffer() {
        for dims in [Dims::new(10, 3, 7, 4), Dims::new(10, 3, 7, 4).precomputed()] {
            let total = dims.batch_scalars();
            let mut buf = vec![0.0f32; total];
            let parts = dims.split(&mut buf);
            let lens = [
                parts.factor.len(),
                parts.cols.len(),
                parts.r.len(),
                parts.cty.len(),
                parts.col_sums.len(),
                parts.z.len(),
                parts.w1.len(),
                parts.w2.len(),
                parts.mu.len(),
                parts.centres.len(),
                parts.history.len(),
            ];
            assert_eq!(lens.iter().sum::<usize>(), total);
            assert_eq!(dims.region(Region::History).end, total);
            assert_eq!(dims.region(Region::Mu).len(), 7);
            assert_eq!(dims.region(Region::Centres).len(), 21);
            let expected_cols = match dims.column_mode() {
                ColumnMode::OnTheFly => 10 * 5,
                ColumnMode::Precomputed => 10 * 7,
            };
            assert_eq!(parts.cols.len(), expected_cols);
            assert_eq!(dims.window_scalars(), total + 40);
            assert_eq!(dims.indices(), 4 + 14);
            assert_eq!(dims.bytes::<f64>(total), 8 * total + 18 * core::mem::size_of::<usize>());
            let mut ibuf = vec![0usize; dims.indices()];
            let idx = dims.split_indices(&mut ibuf);
            assert_eq!((idx.active.len(), idx.position.len(), idx.pool.len()), (4, 7, 7));
        }
    }

    #[test]
    fn fewer_scalars_precomputes_when_it_costs_no_more() {
        for (m, a) in [(7, 7), (7, 6), (7, 5), (7, 1), (1, 1)] {
            let (fly, pre) = (Dims::new(10, 3, m, a), Dims::new(10, 3, m, a).precomputed());
            let cheaper = if pre.window_scalars() <= fly.window_scalars() { pre } else { fly };
            assert_eq!(Dims::new(10, 3, m, a).fewer_scalars(), cheaper, "M = {m}, m0 ≤ {a}");
        }
    }

    #[test]
    fn check_names_zero_capacities_and_short_buffers() {
        let ok = Dims::new(10, 3, 7, 4);
        let need = ok.batch_scalars();
        assert_eq!(ok.check(need, need, 18), Ok(()));
        assert_eq!(ok.check(need - 1, need, 18), Err(Error::CapacityExceeded { needed: need, capacity: need - 1 }));
        assert!(ok.check(need, need, 17).is_err());
        for (dims, name) in [
            (Dims::new(10, 0, 7, 4), "dim"),
            (Dims::new(0, 3, 7, 4), "rows"),
            (Dims::new(10, 3, 0, 4), "candidates"),
            (Dims::new(10, 3, 7, 0), "max_active"),
        ] {
            assert_eq!(dims.check(need, need, 18), Err(Error::InvalidParam { name }));
        }
        let huge = Dims::new(usize::MAX, 2, 2, 2);
        assert_eq!(huge.batch_scalars(), usize::MAX);
        assert!(huge.check(100, huge.batch_scalars(), 100).is_err());
    }
}
