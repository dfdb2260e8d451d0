//! O(k²) changes of a Cholesky factor: append, remove, rank-1 update and downdate.
//!
//! All three are written with Givens rotations applied row by row to the packed triangle
//! (contiguous memory), following LINPACK's `dchud`/`dchdd` transposed to a lower factor:
//!
//! - **update** `L'L'ᵀ = LLᵀ + xxᵀ`: rotate each column `q` of `L` against `x` so that
//!   `x_q` vanishes; rotation `q` is fixed by `(L_qq, x_q)` and row `r` needs rotations
//!   `q < r` only, so one pass over the rows suffices.
//! - **downdate** `L'L'ᵀ = LLᵀ − xxᵀ`: with `p = L⁻¹x` and `ρ² = 1 − ‖p‖²` (> 0 exactly
//!   when the result is positive definite), rotations chosen bottom-up to map `(p, ρ)` to
//!   `(0, 1)` turn `[Lᵀ; 0]` into `[L'ᵀ; xᵀ]`. The cosines are `ρ_{old}/ρ_{new} > 0`, so
//!   `L'` keeps a positive diagonal. Orthogonal rotations make this stable, unlike the
//!   hyperbolic form.
//! - **remove** row/column `i`: with `L = [L₁₁ 0 0; l₂₁ᵀ l₂₂ 0; L₃₁ l₃₂ L₃₃]`, the new
//!   factor is `[L₁₁ 0; L₃₁ L₃₃']` where `L₃₃'L₃₃'ᵀ = L₃₃L₃₃ᵀ + l₃₂l₃₂ᵀ`: shift the rows,
//!   then update the trailing block.
//!
//! Each call validates all of its input before writing, so an error leaves the factor as
//! it was. Memory: the two rotation buffers of the factor's storage, nothing else.

#![allow(
    clippy::indexing_slicing,
    reason = "rows < k ≤ capacity lie in the packed triangle and the rotation buffers hold capacity scalars: the storage new_in checked"
)]

use super::Cholesky;
use super::factor::rounding_floor;
use crate::error::check_len;
use crate::linalg::{Triangle, leading_zeros, packed_len, solve_lower_from};
use crate::real::check_finite;
use crate::storage::{Storage, check_capacity};
use crate::{Error, Real};

impl<T: Real, S: Storage<T>> Cholesky<T, S> {
    /// Grows `A` by a last row and column: `column[..k]` is the new off-diagonal column,
    /// `column[k]` the new diagonal entry. O(k²).
    ///
    /// # Errors
    /// `DimensionMismatch` unless `column.len() = k + 1`; `NonFinite`; `CapacityExceeded`
    /// when `k` is at capacity; `NotPositiveDefinite { pivot: k }` when the grown matrix is
    /// not positive definite. The factor is unchanged on error.
    pub fn append_column(&mut self, column: &[T]) -> Result<(), Error> {
        let k = self.dim();
        check_len(k + 1, column.len())?;
        check_finite(column)?;
        check_capacity(k + 1, self.capacity())?;
        self.next_row_mut()[..k].copy_from_slice(&column[..k]);
        self.push_row(column[k])
    }

    /// Removes row and column `index` of `A`. O(k²).
    ///
    /// # Errors
    /// `IndexOutOfRange` when `index ≥ k` (factor unchanged).
    pub fn remove_column(&mut self, index: usize) -> Result<(), Error> {
        let k = self.dim();
        if index >= k {
            return Err(Error::IndexOutOfRange { index, len: k });
        }
        let (triangle, cosines, sines) = self.parts_mut();
        // l₃₂ goes to sines[index..k-1]: the vector the trailing block is updated with.
        for r in index + 1..k {
            sines[r - 1] = triangle[packed_len(r) + index];
        }
        for r in index + 1..k {
            let (from, to) = (packed_len(r), packed_len(r - 1));
            triangle.copy_within(from..from + index, to);
            triangle.copy_within(from + index + 1..from + r + 1, to + index);
        }
        rotate_in_update(triangle, index, k - 1, cosines, sines);
        self.set_dim(k - 1);
        Ok(())
    }

    /// `A ← A + σxxᵀ`: an update when `σ > 0`, a downdate when `σ < 0`. O(k²).
    ///
    /// # Errors
    /// `DimensionMismatch` unless `x.len() = k`; `NonFinite` for NaN/∞ in `x` or `σ` (or a
    /// product `√|σ|·x` that overflows); `NotPositiveDefinite { pivot }` when a downdate would
    /// leave `A` not positive definite, `pivot` being the first leading block that fails.
    /// The factor is unchanged on error.
    pub fn rank_one_update(&mut self, x: &[T], sigma: T) -> Result<(), Error> {
        let k = self.dim();
        check_len(k, x.len())?;
        check_finite(&[sigma])?;
        if sigma == T::ZERO {
            return check_finite(x);
        }
        let scale = sigma.abs().sqrt();
        let (triangle, cosines, sines) = self.parts_mut();
        let scaled = &mut sines[..k];
        for (s, &xi) in scaled.iter_mut().zip(x) {
            *s = scale * xi;
        }
        // One check for both `x` and the products: `scale` is positive and finite, so
        // `scale·xᵢ` is NaN or ∞ exactly when `xᵢ` is, or when the product overflows.
        check_finite(scaled)?;
        // With `x = [0; x₂]` only the trailing block changes (`L₂₂'L₂₂'ᵀ = L₂₂L₂₂ᵀ ± x₂x₂ᵀ`):
        // the rotations of the leading zeros are exactly the identity (`hypot(d, 0) = d`).
        let first = leading_zeros(scaled);
        if sigma > T::ZERO {
            rotate_in_update(triangle, first, k, cosines, sines);
            return Ok(());
        }
        let triangle = &mut triangle[..packed_len(k)];
        solve_lower_from(triangle, k, Triangle::Packed, scaled, first)?;
        let rho2 = downdate_margin(scaled)?;
        rotate_in_downdate(triangle, first, k, rho2.sqrt(), cosines, sines);
        Ok(())
    }
}

/// `ρ² = 1 − ‖p‖²` for `p = L⁻¹x`, or the first `i` whose leading `‖p[..=i]‖²` reaches 1
/// within rounding, `(i+1)·ε` (`A − xxᵀ`'s leading `(i+1) × (i+1)` block is then not
/// numerically positive definite).
fn downdate_margin<T: Real>(p: &[T]) -> Result<T, Error> {
    let mut rho2 = T::ONE;
    for (i, &pi) in p.iter().enumerate() {
        rho2 -= pi * pi;
        let positive = rho2 > rounding_floor(i + 1); // false for NaN too
        if !positive {
            return Err(Error::NotPositiveDefinite { pivot: i });
        }
    }
    Ok(rho2)
}

/// Rows rotated together: each carries its own `x` through the same rotations, so their
/// dependent chains interleave (instruction-level parallelism on a host; on a device, one
/// load of each rotation serves all of them, and the per-row set-up is shared).
const BLOCK: usize = 4;

/// The `B` consecutive rows of the packed triangle that start at row `r`, each from column
/// `from` on (row `r + b` then holds `r + b + 1 − from` entries).
fn rows_from<T, const B: usize>(triangle: &mut [T], r: usize, from: usize) -> [&mut [T]; B] {
    let mut rest = &mut triangle[packed_len(r)..];
    core::array::from_fn(|b| {
        let (row, tail) = core::mem::take(&mut rest).split_at_mut(r + b + 1);
        rest = tail;
        &mut row[from..]
    })
}

/// Rank-1 update of the trailing block (rows and columns `start..end`) of the packed
/// triangle by the vector held in `sines[start..end]`; `cosines` is scratch. Rows go
/// [`BLOCK`] at a time, the last few one by one.
fn rotate_in_update<T: Real>(triangle: &mut [T], start: usize, end: usize, cosines: &mut [T], sines: &mut [T]) {
    let mut r = start;
    while end - r >= BLOCK {
        update_rows::<T, BLOCK>(triangle, start, r, cosines, sines);
        r += BLOCK;
    }
    while r < end {
        update_rows::<T, 1>(triangle, start, r, cosines, sines);
        r += 1;
    }
}

/// Rows `r..r + B` of the update: the rotations `start..r`, fixed by the rows above,
/// applied to all `B` rows at once; then row by row the rotations fixed within the block,
/// and the row's own, `(L_qq, x_q) → (h, 0)` with `c = L_qq/h`, `s = x_q/h`.
fn update_rows<T: Real, const B: usize>(
    triangle: &mut [T],
    start: usize,
    r: usize,
    cosines: &mut [T],
    sines: &mut [T],
) {
    let shared = r - start;
    let mut x: [T; B] = core::array::from_fn(|b| sines[r + b]);
    // Each row split into its columns `start..r` (all of length `shared`) and the rest.
    let mut rows = rows_from::<T, B>(triangle, r, start).map(|row| row.split_at_mut(shared));
    let (cos, sin) = (&cosines[start..r], &sines[start..r]);
    for q in 0..shared {
        let (c, s) = (cos[q], sin[q]);
        for ((row, _), x) in rows.iter_mut().zip(x.iter_mut()) {
            let l = row[q];
            row[q] = c * l + s * *x;
            *x = c * *x - s * l;
        }
    }
    for (b, ((_, rest), mut x)) in rows.into_iter().zip(x).enumerate() {
        let (within, diagonal) = rest.split_at_mut(b);
        for ((l, &c), &s) in within.iter_mut().zip(&cosines[r..r + b]).zip(&sines[r..r + b]) {
            let rotated = c * *l + s * x;
            x = c * x - s * *l;
            *l = rotated;
        }
        let d = diagonal[0];
        let h = d.hypot(x);
        cosines[r + b] = d / h;
        sines[r + b] = x / h;
        diagonal[0] = h;
    }
}

/// Downdate of the `k × k` packed triangle by `x = L·p`, `p` held in `sines[..k]` and zero
/// before `first`, with `rho = √(1 − ‖p‖²) > 0`; `cosines` is scratch. The rotations are
/// fixed bottom-up, then applied to the rows [`BLOCK`] at a time; those of `p`'s leading
/// zeros are the identity, so only the trailing block from `first` is rotated.
fn rotate_in_downdate<T: Real>(
    triangle: &mut [T],
    first: usize,
    k: usize,
    mut rho: T,
    cosines: &mut [T],
    sines: &mut [T],
) {
    for (c, s) in cosines[first..k].iter_mut().zip(&mut sines[first..k]).rev() {
        let h = rho.hypot(*s);
        *c = rho / h;
        *s /= h;
        rho = h;
    }
    let mut j = first;
    while k - j >= BLOCK {
        downdate_rows::<T, BLOCK>(triangle, first, j, cosines, sines);
        j += BLOCK;
    }
    while j < k {
        downdate_rows::<T, 1>(triangle, first, j, cosines, sines);
        j += 1;
    }
}

/// Rows `j..j + B` of the downdate of the trailing block from `first`: each row's
/// rotations run from its diagonal down to column `first` — first those within the block,
/// row by row, then the columns `first..j`, shared by all `B` rows at once.
fn downdate_rows<T: Real, const B: usize>(triangle: &mut [T], first: usize, j: usize, cosines: &[T], sines: &[T]) {
    // Each row split into its columns `first..j` (all of length `j − first`) and the rest.
    let shared = j - first;
    let mut rows = rows_from::<T, B>(triangle, j, first).map(|row| row.split_at_mut(shared));
    let mut x = [T::ZERO; B];
    for (b, ((_, within), x)) in rows.iter_mut().zip(x.iter_mut()).enumerate() {
        for ((l, &c), &s) in within.iter_mut().zip(&cosines[j..=j + b]).zip(&sines[j..=j + b]).rev() {
            let rotated = c * *l - s * *x;
            *x = s * *l + c * *x;
            *l = rotated;
        }
    }
    let (cos, sin) = (&cosines[first..j], &sines[first..j]);
    for i in (0..shared).rev() {
        let (c, s) = (cos[i], sin[i]);
        for ((row, _), x) in rows.iter_mut().zip(x.iter_mut()) {
            let l = row[i];
            row[i] = c * l - s * *x;
            *x = s * l + c * *x;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::linalg::dot_prefix;

    /// `(L·Lᵀ)[i][j]`.
    fn reconstruct(triangle: &[f64], i: usize, j: usize) -> f64 {
        let (ri, rj) = (&triangle[packed_len(i)..], &triangle[packed_len(j)..]);
        dot_prefix(&ri[..=i.min(j)], &rj[..=i.min(j)])
    }

    fn assert_factor_of<S: Storage<f64>>(chol: &Cholesky<f64, S>, a: &[f64], n: usize) {
        assert_eq!(chol.dim(), n);
        for i in 0..n {
            for j in 0..n {
                let got = reconstruct(chol.packed(), i, j);
                assert!((got - a[i * n + j]).abs() < 1e-12, "({i},{j}) {got} vs {}", a[i * n + j]);
            }
        }
    }

    #[test]
    fn update_downdate_append_remove_by_hand() {
        let a = [4.0, 2.0, -2.0, 2.0, 10.0, 2.0, -2.0, 2.0, 6.0];
        let mut chol = Cholesky::from_matrix_in([0.0; Cholesky::scalars_len(5)], 5, &a, 3).unwrap();
        let x = [1.0, -1.0, 2.0];
        chol.rank_one_update(&x, 2.0).unwrap();
        let mut b = a;
        for i in 0..3 {
            for j in 0..3 {
                b[i * 3 + j] += 2.0 * x[i] * x[j];
            }
        }
        assert_factor_of(&chol, &b, 3);
        chol.rank_one_update(&x, -2.0).unwrap();
        assert_factor_of(&chol, &a, 3);
        chol.append_column(&[1.0, 0.0, 1.0, 5.0]).unwrap();
        chol.remove_column(1).unwrap();
        let expected = [4.0, -2.0, 1.0, -2.0, 6.0, 1.0, 1.0, 1.0, 5.0];
        assert_factor_of(&chol, &expected, 3);
    }

    #[test]
    fn a_vector_with_leading_zeros_changes_only_the_trailing_block() {
        const N: usize = 9;
        // A = BBᵀ + I for a fixed B with entries in [−1, 1].
        let b: [f64; N * N] = core::array::from_fn(|k| ((k * 37 % 17) as f64 - 8.0) / 8.0);
        let a: [f64; N * N] = core::array::from_fn(|k| {
            let (i, j) = (k / N, k % N);
            (0..N).map(|t| b[i * N + t] * b[j * N + t]).sum::<f64>() + if i == j { 1.0 } else { 0.0 }
        });
        for first in [1, 3, 5, 8] {
            let mut chol = Cholesky::from_matrix_in([0.0; Cholesky::scalars_len(N)], N, &a, N).unwrap();
            let leading = chol.packed()[..packed_len(first)].to_vec();
            let x: [f64; N] = core::array::from_fn(|i| if i < first { 0.0 } else { 0.5 + 0.25 * i as f64 });
            chol.rank_one_update(&x, 1.5).unwrap();
            let updated: [f64; N * N] = core::array::from_fn(|k| a[k] + 1.5 * x[k / N] * x[k % N]);
            assert_factor_of(&chol, &updated, N);
            assert_eq!(&chol.packed()[..packed_len(first)], &leading[..], "rows before {first} moved");
            chol.rank_one_update(&x, -1.5).unwrap();
            assert_factor_of(&chol, &a, N);
            assert_eq!(&chol.packed()[..packed_len(first)], &leading[..], "rows before {first} moved");
        }
    }

    #[test]
    fn rejected_calls_leave_the_factor_unchanged() {
        let a = [4.0, 2.0, 2.0, 3.0];
        let mut chol = Cholesky::from_matrix_in([0.0; Cholesky::scalars_len(2)], 2, &a, 2).unwrap();
        let before: [f64; 3] = chol.packed().try_into().unwrap();
        let e = chol.rank_one_update(&[3.0, 0.0], -1.0);
        assert_eq!(e, Err(Error::NotPositiveDefinite { pivot: 0 }));
        assert_eq!(chol.rank_one_update(&[1.0, f64::NAN], 1.0), Err(Error::NonFinite));
        assert_eq!(chol.rank_one_update(&[1.0], 1.0), Err(Error::DimensionMismatch { expected: 2, got: 1 }));
        assert_eq!(chol.rank_one_update(&[1.0, 1.0], f64::INFINITY), Err(Error::NonFinite));
        assert_eq!(chol.rank_one_update(&[1e300, 1.0], 1e300), Err(Error::NonFinite));
        assert_eq!(chol.append_column(&[0.0, 0.0, 1.0]), Err(Error::CapacityExceeded { needed: 3, capacity: 2 }));
        assert_eq!(chol.remove_column(2), Err(Error::IndexOutOfRange { index: 2, len: 2 }));
        assert_eq!(chol.packed(), &before);
        chol.remove_column(1).unwrap();
        assert_eq!(chol.append_column(&[2.0, 1.0]), Err(Error::NotPositiveDefinite { pivot: 1 }));
        assert_eq!(chol.packed(), &before[..1]);
    }
}
