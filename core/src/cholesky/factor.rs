//! The Cholesky factor type, its construction (full factorization), queries and solves.

#![allow(
    clippy::indexing_slicing,
    reason = "row i < k ≤ capacity lies in the packed triangle, followed by two rotation buffers of capacity: the storage new_in checked"
)]

use core::marker::PhantomData;

use crate::error::check_len;
use crate::linalg::{
    ROWS_PER_PASS, Triangle, check_triangle, dot_prefix, forward_substitution_many, leading_zeros, packed_len,
    solve_both_from, solve_lower_from,
};
use crate::real::check_finite;
use crate::storage::{Storage, check_capacity};
use crate::{Error, Real};

/// The lower-triangular Cholesky factor `L` of a `k × k` SPD matrix `A = L·Lᵀ`, `k` at
/// most the capacity fixed at construction, in storage `S` (see [`crate::storage`]).
///
/// Invariant: the diagonal of `L` is positive and finite.
///
/// # Examples
/// ```
/// use kestrel_core::Cholesky;
/// // A = [[4, 2], [2, 3]]
/// let a = [4.0f64, 2.0, 2.0, 3.0];
/// let mut chol = Cholesky::from_matrix_in([0.0; Cholesky::scalars_len(3)], 3, &a, 2)?;
/// let mut x = [6.0, 5.0];
/// chol.solve_in_place(&mut x)?; // A x = b
/// assert!((x[0] - 1.0).abs() < 1e-12 && (x[1] - 1.0).abs() < 1e-12);
/// chol.append_column(&[0.0, 1.0, 2.0])?; // A grows to 3 × 3
/// assert_eq!(chol.dim(), 3);
/// # Ok::<(), kestrel_core::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct Cholesky<T, S> {
    storage: S,
    capacity: usize,
    dim: usize,
    scalar: PhantomData<T>,
}

/// A factor in an owned array of `N` scalars; take `N` from [`Cholesky::scalars_len`].
pub type ArrayCholesky<T, const N: usize> = Cholesky<T, [T; N]>;

impl Cholesky<(), ()> {
    /// Scalars a factor of capacity `k` needs: the packed triangle `k(k+1)/2` plus two
    /// rotation buffers of `k` (saturating, so an absurd capacity fails the constructor's
    /// check instead of overflowing).
    pub const fn scalars_len(capacity: usize) -> usize {
        packed_len(capacity).saturating_add(capacity.saturating_mul(2))
    }

    /// Bytes a factor of capacity `k` with scalar `T` needs: `scalars_len(k)·size_of::<T>()`.
    ///
    /// ```
    /// use kestrel_core::Cholesky;
    /// assert_eq!(Cholesky::bytes::<f32>(64), (64 * 65 / 2 + 128) * 4);
    /// ```
    pub const fn bytes<T>(capacity: usize) -> usize {
        Self::scalars_len(capacity).saturating_mul(core::mem::size_of::<T>())
    }
}

impl<T: Real, S: Storage<T>> Cholesky<T, S> {
    /// An empty factor (`k = 0`) of the given capacity, working in `storage`.
    ///
    /// # Errors
    /// `CapacityExceeded` when `storage` holds fewer than [`Cholesky::scalars_len`]`(capacity)` scalars.
    pub fn new_in(storage: S, capacity: usize) -> Result<Self, Error> {
        check_capacity(Cholesky::scalars_len(capacity), storage.as_ref().len())?;
        Ok(Cholesky { storage, capacity, dim: 0, scalar: PhantomData })
    }

    /// A view of a factor of dimension `dim` already held in `storage` (as left there by
    /// an earlier factor of the same capacity): lets a structure keep the factor inside a
    /// larger buffer and rebuild the handle for each operation.
    ///
    /// # Errors
    /// As [`new_in`](Self::new_in); `CapacityExceeded` when `dim > capacity`.
    pub(crate) fn from_parts(storage: S, capacity: usize, dim: usize) -> Result<Self, Error> {
        check_capacity(dim, capacity)?;
        let mut chol = Self::new_in(storage, capacity)?;
        chol.dim = dim;
        Ok(chol)
    }

    /// Full factorization of the `n × n` matrix whose lower-triangle entries `entry(i, j)`
    /// (`j ≤ i`) are read once each, in row order. O(n³/3).
    ///
    /// # Errors
    /// As [`new_in`](Self::new_in); `CapacityExceeded` when `n > capacity`; `NonFinite`
    /// when an entry is NaN or infinite; `NotPositiveDefinite { pivot }` at the first
    /// leading block that is not (numerically) positive definite.
    pub fn factor_in(
        storage: S,
        capacity: usize,
        n: usize,
        mut entry: impl FnMut(usize, usize) -> T,
    ) -> Result<Self, Error> {
        let mut chol = Self::new_in(storage, capacity)?;
        check_capacity(n, capacity)?;
        for i in 0..n {
            let row = chol.next_row_mut();
            for (j, r) in row.iter_mut().enumerate().take(i) {
                *r = entry(i, j);
            }
            check_finite(&row[..i])?;
            let diagonal = entry(i, i);
            check_finite(&[diagonal])?;
            chol.push_row(diagonal)?;
        }
        Ok(chol)
    }

    /// Full factorization of a row-major `n × n` matrix `a` (only its lower triangle is read).
    ///
    /// # Errors
    /// As [`factor_in`](Self::factor_in); `DimensionMismatch` when `a.len() ≠ n²`.
    pub fn from_matrix_in(storage: S, capacity: usize, a: &[T], n: usize) -> Result<Self, Error> {
        check_len(n.saturating_mul(n), a.len())?;
        Self::factor_in(storage, capacity, n, |i, j| a[i * n + j])
    }

    /// Current dimension `k` of the factored matrix.
    pub fn dim(&self) -> usize {
        self.dim
    }

    /// Largest dimension the storage allows.
    pub fn capacity(&self) -> usize {
        self.capacity
    }

    /// `true` when `k = 0`.
    pub fn is_empty(&self) -> bool {
        self.dim == 0
    }

    /// Drops every row and column (`k = 0`); the storage is kept.
    pub fn clear(&mut self) {
        self.dim = 0;
    }

    /// Entry `L[i][j]` (0 above the diagonal), or `None` outside `k × k`.
    pub fn get(&self, i: usize, j: usize) -> Option<T> {
        if i >= self.dim || j >= self.dim {
            None
        } else if j > i {
            Some(T::ZERO)
        } else {
            self.triangle().get(packed_len(i) + j).copied()
        }
    }

    /// Row `i` of `L` up to the diagonal (`i + 1` entries), or `None` when `i ≥ k`.
    pub fn row(&self, i: usize) -> Option<&[T]> {
        if i >= self.dim {
            return None;
        }
        self.triangle().get(packed_len(i)..packed_len(i + 1))
    }

    /// The packed lower triangle, `k(k+1)/2` scalars (layout [`Triangle::Packed`]).
    pub fn packed(&self) -> &[T] {
        self.triangle()
    }

    /// `log det A = 2 Σ log Lᵢᵢ`.
    pub fn log_det(&self) -> T {
        let two = T::ONE + T::ONE;
        (0..self.dim).fold(T::ZERO, |acc, i| acc + two * self.diagonal(i).ln())
    }

    /// Solves `A x = b` in place (`L y = b`, then `Lᵀ x = y`). O(k²).
    ///
    /// # Errors
    /// `DimensionMismatch` when `b.len() ≠ k`; `NonFinite` when `b` has NaN/∞ (`b` untouched).
    pub fn solve_in_place(&self, b: &mut [T]) -> Result<(), Error> {
        check_len(self.dim, b.len())?;
        check_finite(b)?;
        let first = leading_zeros(b);
        solve_both_from(self.triangle(), self.dim, Triangle::Packed, b, first)
    }

    /// Solves `L y = b` in place: `‖y‖² = bᵀA⁻¹b`. O(k²).
    ///
    /// # Errors
    /// As [`solve_in_place`](Self::solve_in_place).
    pub fn solve_lower_in_place(&self, b: &mut [T]) -> Result<(), Error> {
        check_len(self.dim, b.len())?;
        check_finite(b)?;
        let first = leading_zeros(b);
        solve_lower_from(self.triangle(), self.dim, Triangle::Packed, b, first)
    }

    /// Solves `L y = b` in place for each row `b` of the row-major `rows` (`k` entries a
    /// row): the rows of `L⁻¹Bᵀ` transposed, as whitening a block of kernel features
    /// needs. Bit for bit [`solve_lower_in_place`](Self::solve_lower_in_place) on each
    /// row; four rows share each load of `L`'s rows. O(k²) a row.
    ///
    /// # Errors
    /// `DimensionMismatch` when `rows.len()` is not a multiple of `k` (or not 0 when
    /// `k = 0`); `NonFinite` when `rows` has NaN/∞ (`rows` untouched).
    pub fn solve_lower_rows_in_place(&self, rows: &mut [T]) -> Result<(), Error> {
        let k = self.dim;
        let whole = if k == 0 { 0 } else { rows.len() - rows.len() % k };
        check_len(whole, rows.len())?;
        check_finite(rows)?;
        let Some(row) = rows.get(..k).filter(|_| k > 0) else {
            return Ok(());
        };
        check_triangle(self.triangle(), k, Triangle::Packed, row)?;
        let mut blocks = rows.chunks_exact_mut(ROWS_PER_PASS * k);
        for block in &mut blocks {
            let mut split = block.chunks_exact_mut(k);
            let mut bs: [&mut [T]; ROWS_PER_PASS] = core::array::from_fn(|_| split.next().unwrap_or_default());
            let first = bs.iter().map(|b| leading_zeros(b)).min().unwrap_or(0);
            forward_substitution_many(self.triangle(), k, Triangle::Packed, &mut bs, first);
        }
        for b in blocks.into_remainder().chunks_exact_mut(k) {
            let first = leading_zeros(b);
            forward_substitution_many(self.triangle(), k, Triangle::Packed, &mut [b], first);
        }
        Ok(())
    }

    /// Gives the storage back.
    pub fn into_storage(self) -> S {
        self.storage
    }

    /// `L[i][i]` for `i < k`.
    pub(super) fn diagonal(&self, i: usize) -> T {
        self.triangle()[packed_len(i) + i]
    }

    /// The packed triangle of the current `k × k` factor.
    fn triangle(&self) -> &[T] {
        &self.storage.as_ref()[..packed_len(self.dim)]
    }

    /// `(triangle of the full capacity, rotation cosines, rotation sines)`.
    pub(super) fn parts_mut(&mut self) -> (&mut [T], &mut [T], &mut [T]) {
        let capacity = self.capacity;
        let (triangle, work) = self.storage.as_mut().split_at_mut(packed_len(capacity));
        let (cosines, rest) = work.split_at_mut(capacity);
        (triangle, cosines, &mut rest[..capacity])
    }

    /// Storage of row `k` (its `k + 1` entries); callers have checked `k < capacity`.
    pub(super) fn next_row_mut(&mut self) -> &mut [T] {
        let k = self.dim;
        &mut self.storage.as_mut()[packed_len(k)..packed_len(k + 1)]
    }

    /// Completes row `k`, whose first `k` entries hold the new column `a[..k]` of `A`,
    /// with `A[k][k] = diagonal`: `l = L⁻¹a`, `L[k][k] = √(diagonal − ‖l‖²)`, `k ← k + 1`.
    ///
    /// # Errors
    /// `NotPositiveDefinite { pivot: k }` when the Schur complement is not above the
    /// rounding error of its computation, `(k+1)·ε·|diagonal|`; `k` is then unchanged
    /// (row `k` is scratch).
    pub(super) fn push_row(&mut self, diagonal: T) -> Result<(), Error> {
        let k = self.dim;
        let (done, rest) = self.storage.as_mut().split_at_mut(packed_len(k));
        let row = &mut rest[..=k];
        for j in 0..k {
            let lj = &done[packed_len(j)..packed_len(j + 1)];
            row[j] = (row[j] - dot_prefix(&lj[..j], &row[..j])) / lj[j];
        }
        let schur = diagonal - dot_prefix(&row[..k], &row[..k]);
        if !(schur > rounding_floor::<T>(k + 1) * diagonal.abs() && schur.is_finite()) {
            return Err(Error::NotPositiveDefinite { pivot: k });
        }
        row[k] = schur.sqrt();
        self.dim = k + 1;
        Ok(())
    }

    pub(super) fn set_dim(&mut self, dim: usize) {
        self.dim = dim;
    }
}

/// `n·ε`: the relative size below which a pivot computed from `n` products is rounding
/// noise and the matrix is treated as singular.
pub(super) fn rounding_floor<T: Real>(n: usize) -> T {
    T::from_f64(n as f64) * T::EPSILON
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn factor_by_hand() {
        // A = [[4, 2, -2], [2, 10, 2], [-2, 2, 6]] = L Lᵀ with L = [[2,0,0],[1,3,0],[-1,1,2]]
        let a = [4.0, 2.0, -2.0, 2.0, 10.0, 2.0, -2.0, 2.0, 6.0];
        let chol = Cholesky::from_matrix_in([0.0; Cholesky::scalars_len(3)], 3, &a, 3).unwrap();
        assert_eq!(chol.packed(), &[2.0, 1.0, 3.0, -1.0, 1.0, 2.0]);
        assert_eq!(chol.get(0, 2), Some(0.0));
        assert_eq!(chol.get(3, 0), None);
        assert_eq!(chol.row(2), Some(&[-1.0, 1.0, 2.0][..]));
        assert!((chol.log_det() - (144.0f64).ln()).abs() < 1e-12);
    }

    #[test]
    fn factor_rejects_bad_matrices() {
        let indefinite = [1.0, 2.0, 2.0, 1.0];
        let r = Cholesky::from_matrix_in([0.0; Cholesky::scalars_len(2)], 2, &indefinite, 2);
        assert_eq!(r.err(), Some(Error::NotPositiveDefinite { pivot: 1 }));
        let nan = [1.0, f64::NAN, f64::NAN, 1.0];
        let r = Cholesky::from_matrix_in([0.0; Cholesky::scalars_len(2)], 2, &nan, 2);
        assert_eq!(r.err(), Some(Error::NonFinite));
        let r = Cholesky::from_matrix_in([0.0; Cholesky::scalars_len(1)], 1, &indefinite, 2);
        assert_eq!(r.err(), Some(Error::CapacityExceeded { needed: 2, capacity: 1 }));
        let r = Cholesky::from_matrix_in([0.0; Cholesky::scalars_len(2)], 2, &indefinite, 3);
        assert_eq!(r.err(), Some(Error::DimensionMismatch { expected: 9, got: 4 }));
        let r = Cholesky::<f32, _>::new_in([0.0; 4], 2);
        assert_eq!(r.err(), Some(Error::CapacityExceeded { needed: 7, capacity: 4 }));
        assert!(Cholesky::<f32, _>::new_in([0.0; 4], usize::MAX).is_err());
    }

    /// A block of rows solved together has the bits of each row's own solve, for every
    /// remainder of the blocks and rows with different numbers of leading zeros (the
    /// block starts at the fewest; the others' zeros stay exact).
    fn rows_solve_matches_each_rows_own<T: Real>() {
        const K: usize = 19;
        let mut rng = crate::Rng::seed_from_u64(5);
        let b: [T; K * K] = core::array::from_fn(|_| T::from_f64(rng.normal::<f64>()));
        let a: [T; K * K] = core::array::from_fn(|e| {
            let (i, j) = (e / K, e % K);
            let bbt = (0..K).fold(T::ZERO, |acc, t| acc + b[i * K + t] * b[j * K + t]);
            if i == j { bbt + T::ONE } else { bbt }
        });
        let chol = Cholesky::from_matrix_in([T::ZERO; Cholesky::scalars_len(K)], K, &a, K).unwrap();
        let mut rows = [T::ZERO; 11 * K];
        for (r, row) in rows.chunks_exact_mut(K).enumerate() {
            let zeros = [0, 3, 9, 17, 8, 0, 1, 16, 19, 2, 0][r];
            for (j, x) in row.iter_mut().enumerate().skip(zeros) {
                *x = T::from_f64(rng.normal::<f64>() + 0.1 * j as f64);
            }
        }
        for n in 0..=11 {
            let mut together = rows;
            chol.solve_lower_rows_in_place(&mut together[..n * K]).unwrap();
            let mut alone = rows;
            for row in alone[..n * K].chunks_exact_mut(K) {
                chol.solve_lower_in_place(row).unwrap();
            }
            assert_eq!(together.map(|x| x.to_f64().to_bits()), alone.map(|x| x.to_f64().to_bits()), "{n} rows");
            assert_eq!(&together[n * K..], &rows[n * K..], "{n} rows: the rest moved");
        }
    }

    #[test]
    fn rows_solve_matches_each_rows_own_f64() {
        rows_solve_matches_each_rows_own::<f64>();
    }

    #[test]
    fn rows_solve_matches_each_rows_own_f32() {
        rows_solve_matches_each_rows_own::<f32>();
    }

    #[test]
    fn rows_solve_rejects_bad_rows_and_writes_nothing() {
        let a = [4.0, 2.0, 2.0, 10.0];
        let chol = Cholesky::from_matrix_in([0.0; Cholesky::scalars_len(2)], 2, &a, 2).unwrap();
        let mut odd = [1.0, 2.0, 3.0];
        assert_eq!(chol.solve_lower_rows_in_place(&mut odd), Err(Error::DimensionMismatch { expected: 2, got: 3 }));
        let mut bad = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, f64::INFINITY];
        let before = bad;
        assert_eq!(chol.solve_lower_rows_in_place(&mut bad), Err(Error::NonFinite));
        assert_eq!(bad, before);
        assert_eq!(chol.solve_lower_rows_in_place(&mut []), Ok(()));
        let empty = Cholesky::<f64, _>::new_in([0.0; Cholesky::scalars_len(1)], 1).unwrap();
        assert_eq!(empty.solve_lower_rows_in_place(&mut []), Ok(()));
        assert_eq!(empty.solve_lower_rows_in_place(&mut [1.0]), Err(Error::DimensionMismatch { expected: 0, got: 1 }));
    }
}
