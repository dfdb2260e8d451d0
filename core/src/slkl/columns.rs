//! The rank-1 Nyström columns `c_m = K(·, s_m)/√k(s_m, s_m)` (eq. 1-2 of the SLKL paper).
//!
//! Row `i` of column `m` is `k(xᵢ, s_m)/√k(s_m, s_m)`, so `c_m c_mᵀ` is the Gram matrix of
//! the rank-1 kernel `k~_m(x, x') = k(x, s_m)k(x', s_m)/k(s_m, s_m)` of eq. (2). Two ways to
//! hold them (Sect. 4.2):
//!
//! - [`ColumnMode::OnTheFly`]: only the `m0` active columns are stored, in factor order,
//!   plus one scratch column for the candidate under study, computed in O(n·d) kernel work
//!   each time it is drawn. Memory `n·(m0_max + 1)`: the paper's O(n·m0).
//! - [`ColumnMode::Precomputed`]: all `M` columns computed once, O(M·n·d); memory `n·M`.
//!   A draw then costs no kernel evaluation.
//!
//! Columns are contiguous (column-major), so the dot products of a step run over
//! contiguous memory; each has `rows` scalars of which the first `n` (the live samples)
//! are used.

#![allow(
    clippy::indexing_slicing,
    reason = "columns of rows entries, candidates < M and active slots < max_active: the regions Dims lays out, checked by the constructors"
)]

use core::ops::Range;

use super::layout::NONE;
use crate::{Kernel, Real};

/// Where the rank-1 Nyström columns `c_m = K(·, s_m)/√k(s_m, s_m)` (eq. 1-2) live
/// (Sect. 4.2 of the SLKL paper): only the `m0` active ones, the drawn candidate computed
/// when needed (memory O(n·m0)), or all `M` computed at construction (memory O(n·M), no
/// kernel work per step).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
pub enum ColumnMode {
    /// Active columns stored, candidates computed when drawn: memory O(n·m0).
    #[default]
    OnTheFly,
    /// All `M` columns computed at construction: memory O(n·M), no kernel work per step.
    Precomputed,
}

/// Scalars of the column storage (saturating).
pub(crate) const fn columns_len(mode: ColumnMode, rows: usize, m: usize, a: usize) -> usize {
    match mode {
        ColumnMode::OnTheFly => rows.saturating_mul(a.saturating_add(1)),
        ColumnMode::Precomputed => rows.saturating_mul(m),
    }
}

/// The live samples a step works on: `n = y.len()` rows of `x` (row-major, `dim`
/// columns) and the targets, centred by `mean`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Data<'d, T> {
    pub x: &'d [T],
    pub y: &'d [T],
    pub dim: usize,
    pub mean: T,
}

impl<T: Real> Data<'_, T> {
    /// Number of live samples.
    pub fn n(&self) -> usize {
        self.y.len()
    }
    /// Sample `i`'s features.
    pub fn row(&self, i: usize) -> &[T] {
        &self.x[i * self.dim..(i + 1) * self.dim]
    }
    /// `Σᵢ vᵢ (yᵢ − ȳ)`: `vᵀy` for the centred targets, compensated.
    pub fn dot_centred(&self, v: &[T]) -> T {
        compensated_sum(v.iter().zip(self.y).map(|(&vi, &yi)| vi * (yi - self.mean)))
    }

    /// `(Σᵢ vᵢ (yᵢ − ȳ), Σᵢ vᵢ)`: a column's entries of `Cᵀy` and `Cᵀ1`, compensated.
    pub fn column_sums(&self, v: &[T]) -> (T, T) {
        (self.dot_centred(v), compensated_sum(v.iter().take(self.n()).copied()))
    }

    /// `‖y − ȳ‖²`, compensated.
    pub fn centred_norm2(&self) -> T {
        compensated_sum(self.y.iter().map(|&yi| (yi - self.mean) * (yi - self.mean)))
    }
}

/// `Σ xᵢ` with Neumaier's compensation: error O(ε) instead of O(nε), so the sums that
/// enter `F` once (`‖y‖²`, `Cᵀy`, the mean) are as accurate in `f32` as the factor.
pub(crate) fn compensated_sum<T: Real>(xs: impl Iterator<Item = T>) -> T {
    let (mut sum, mut carry) = (T::ZERO, T::ZERO);
    for x in xs {
        let t = sum + x;
        carry += if sum.abs() >= x.abs() { (sum - t) + x } else { (x - t) + sum };
        sum = t;
    }
    sum + carry
}

/// `1/√k(s, s)`, the normalisation of the column of centre `s`; 0 if `k(s, s) ≤ 0` (such
/// a column is identically 0 for a positive kernel and never enters). A unit diagonal (the
/// Gaussian's and Laplacian's, a constant the compiler sees) takes no root: on an Arm FPU
/// the root is an instruction the compiler cannot fold.
pub(crate) fn inverse_norm<T: Real>(kernel: &Kernel<T>, s: &[T]) -> T {
    let d = kernel.diagonal(s);
    if d == T::ONE {
        T::ONE
    } else if d > T::ZERO && d.is_finite() {
        T::ONE / d.sqrt()
    } else {
        T::ZERO
    }
}

/// `out[i] = k(xᵢ, s)/√k(s, s)` for the live samples (the Gaussian's `exp` in one loop,
/// [`Kernel::column_of_rows`]).
pub(crate) fn fill_column<T: Real>(kernel: &Kernel<T>, s: &[T], data: &Data<'_, T>, out: &mut [T]) {
    let scale = inverse_norm(kernel, s);
    let live = out.len().min(data.n());
    let out = &mut out[..live];
    kernel.column_of_rows(s, data.x, out);
    for o in out {
        *o *= scale;
    }
}

/// The column store's geometry (the scalars live in `Parts::cols`).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Columns {
    pub mode: ColumnMode,
    /// Stride of one column.
    pub rows: usize,
    /// Slots for active columns in on-the-fly mode; the scratch slot comes after them.
    pub max_active: usize,
}

impl Columns {
    fn slot(&self, slot: usize, n: usize) -> Range<usize> {
        let start = slot * self.rows;
        start..start + n
    }

    /// The live part of the column of active position `p` (candidate `candidate`).
    pub fn active(&self, p: usize, candidate: usize, n: usize) -> Range<usize> {
        match self.mode {
            ColumnMode::OnTheFly => self.slot(p, n),
            ColumnMode::Precomputed => self.slot(candidate, n),
        }
    }

    /// Makes candidate `j`'s column available and says where: computed into the scratch
    /// slot on the fly (returns `true` for one column evaluation), or already there.
    pub fn prepare<T: Real>(
        &self,
        cols: &mut [T],
        j: usize,
        centres: &[T],
        kernel: &Kernel<T>,
        data: &Data<'_, T>,
    ) -> (Range<usize>, bool) {
        match self.mode {
            ColumnMode::OnTheFly => {
                let range = self.slot(self.max_active, data.n());
                let s = &centres[j * data.dim..(j + 1) * data.dim];
                fill_column(kernel, s, data, &mut cols[range.clone()]);
                (range, true)
            }
            ColumnMode::Precomputed => (self.slot(j, data.n()), false),
        }
    }

    /// Computes every candidate's column (precomputed mode; nothing on the fly).
    pub fn precompute<T: Real>(
        &self,
        cols: &mut [T],
        candidates: usize,
        centres: &[T],
        kernel: &Kernel<T>,
        data: &Data<'_, T>,
    ) {
        for j in 0..candidates {
            self.recompute(cols, j, centres, kernel, data);
        }
    }

    /// Recomputes candidate `j`'s column from its centre (precomputed mode; nothing on the
    /// fly, where columns are computed when drawn).
    pub fn recompute<T: Real>(&self, cols: &mut [T], j: usize, centres: &[T], kernel: &Kernel<T>, data: &Data<'_, T>) {
        if self.mode == ColumnMode::Precomputed {
            let s = &centres[j * data.dim..(j + 1) * data.dim];
            fill_column(kernel, s, data, &mut cols[self.slot(j, data.n())]);
        }
    }

    /// Candidate drawn last enters at position `p` (= current `m0`): on the fly, the
    /// scratch column becomes the active slot `p`.
    pub fn enter<T: Real>(&self, cols: &mut [T], p: usize) {
        if self.mode == ColumnMode::OnTheFly {
            let from = self.max_active * self.rows;
            cols.copy_within(from..from + self.rows, p * self.rows);
        }
    }

    /// Active position `p` of `m0` leaves: on the fly, the slots after it move down one.
    /// O(rows·(m0 − p)).
    pub fn leave<T: Real>(&self, cols: &mut [T], p: usize, m0: usize) {
        if self.mode == ColumnMode::OnTheFly {
            cols.copy_within((p + 1) * self.rows..m0 * self.rows, p * self.rows);
        }
    }

    /// The active columns' entries at row `slot` now (`old[..m0]`) and for sample `x`
    /// (`new[..m0]`), factor order, without writing. O(m0·d) kernel work.
    #[allow(clippy::too_many_arguments)]
    pub fn read_row<T: Real>(
        &self,
        cols: &[T],
        slot: usize,
        x: &[T],
        centres: &[T],
        active: &[usize],
        kernel: &Kernel<T>,
        old: &mut [T],
        new: &mut [T],
    ) {
        for (p, &j) in active.iter().enumerate() {
            old[p] = cols[self.active(p, j, 0).start + slot];
        }
        entries(kernel, centres, x, active.iter().copied().enumerate().map(|(p, j)| (j, p)), new);
    }

    /// Row `slot` of every stored column becomes sample `x`'s (sliding window), the
    /// active columns' entries taken from `new[..m0]` (`position[j]`: candidate `j`'s
    /// factor position, [`NONE`] when inactive, for each of the live candidates). O(m0) on
    /// the fly; precomputed, the inactive candidates' entries are computed, O((M − m0)·d).
    #[allow(clippy::too_many_arguments)]
    pub fn write_row<T: Real>(
        &self,
        cols: &mut [T],
        slot: usize,
        x: &[T],
        centres: &[T],
        position: &[usize],
        kernel: &Kernel<T>,
        new: &[T],
    ) {
        match self.mode {
            ColumnMode::OnTheFly => {
                for (p, &v) in new.iter().enumerate() {
                    cols[p * self.rows + slot] = v;
                }
            }
            ColumnMode::Precomputed => {
                let at = |j: usize| j * self.rows + slot;
                let inactive = position.iter().enumerate().filter(|&(_, &p)| p == NONE).map(|(j, _)| (j, at(j)));
                entries(kernel, centres, x, inactive, cols);
                for (j, &p) in position.iter().enumerate() {
                    if p != NONE {
                        cols[at(j)] = new[p];
                    }
                }
            }
        }
    }
}

/// `out[o] = k(x, s_j)/√k(s_j, s_j)` for each pair `(j, o)`: sample `x`'s entries of the
/// columns `j`, all kernel values first ([`Kernel::values_at`]: the Gaussian's `exp`s in
/// one loop), then their normalisation, which a unit diagonal does without (a product by
/// 1: the same bits).
fn entries<T: Real>(
    kernel: &Kernel<T>,
    centres: &[T],
    x: &[T],
    pairs: impl Iterator<Item = (usize, usize)> + Clone,
    out: &mut [T],
) {
    kernel.values_at(x, centres, pairs.clone(), out);
    if !kernel.unit_diagonal() {
        let dim = x.len();
        for (j, o) in pairs {
            out[o] *= inverse_norm(kernel, &centres[j * dim..(j + 1) * dim]);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    macro_rules! gen_tests {
        ($($name:ident: $t:ty,)*) => {$(
            #[test]
            fn $name() {
                let kernel = Kernel::<$t>::polynomial(2, 1.0, 1.0).unwrap();
                let x: [$t; 6] = [1.0, 0.0, 0.0, 1.0, 1.0, 1.0];
                let y: [$t; 3] = [1.0, 2.0, 3.0];
                let data = Data { x: &x, y: &y, dim: 2, mean: 2.0 };
                assert_eq!(data.dot_centred(&[1.0, 1.0, 1.0]), 0.0);
                let centres: [$t; 4] = [1.0, 1.0, 0.0, 1.0];
                // k(s, s) = (2 + 1)² = 9 for s = (1, 1): column = k(xᵢ, s)/3.
                let mut col = [0.0; 3];
                fill_column(&kernel, &centres[..2], &data, &mut col);
                assert_eq!(col, [4.0 / 3.0, 4.0 / 3.0, 3.0]);
                for mode in [ColumnMode::OnTheFly, ColumnMode::Precomputed] {
                    let store = Columns { mode, rows: 4, max_active: 2 };
                    let mut cols = [0.0; 12];
                    store.precompute(&mut cols, 2, &centres, &kernel, &data);
                    let (range, evaluated) = store.prepare(&mut cols, 0, &centres, &kernel, &data);
                    assert_eq!(evaluated, mode == ColumnMode::OnTheFly);
                    assert_eq!(&cols[range], &col[..]);
                    store.enter(&mut cols, 0);
                    assert_eq!(&cols[store.active(0, 0, 3)], &col[..]);
                    let (old, new) = (&mut [0.0; 2], &mut [0.0; 2]);
                    store.read_row(&cols, 0, &[0.0, 0.0], &centres, &[0], &kernel, old, new);
                    assert_eq!((old[0], new[0]), (4.0 / 3.0, 1.0 / 3.0));
                    store.write_row(&mut cols, 3, &[0.0, 0.0], &centres, &[0, NONE], &kernel, &new[..1]);
                    assert_eq!(cols[store.active(0, 0, 4)][3], 1.0 / 3.0);
                }
            }
        )*};
    }

    gen_tests! {
        columns_f32: f32,
        columns_f64: f64,
    }
}
