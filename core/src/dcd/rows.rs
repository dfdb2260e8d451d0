//! How training rows reach the solvers without allocation: one [`Row`] type (a dense slice
//! or sparse `(index, value)` pairs) and the [`Rows`] trait over a whole training set.
//!
//! The core ships two borrowed views: [`DenseRows`] (a row-major `n × d` slice) and
//! [`SparseRows`] (compressed sparse rows: offsets, indices, values). Anything else — rows
//! computed on demand, a reduced kernel `K(x, Ã)` written into a buffer — implements
//! [`Rows`] and returns [`Row::Dense`] or [`Row::Sparse`] views of its own memory.
//!
//! A row never panics the solver: the solvers check every row with [`Row::check`] before
//! they change anything, and the arithmetic below skips a sparse index outside the weight
//! vector instead of indexing past it.

use crate::linalg::{axpy_prefix, dot_prefix};
use crate::{Error, Real};

/// One sample's features: `d` dense values, or sparse `(indices[k], values[k])` pairs with
/// 0-based indices in `0..d` (any order; zeros may be omitted).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Row<'a, T> {
    /// All `d` features.
    Dense(&'a [T]),
    /// The non-zero features: `values[k]` is feature `indices[k]`.
    Sparse {
        /// 0-based feature indices.
        indices: &'a [u32],
        /// The matching values.
        values: &'a [T],
    },
}

impl<T: Real> Row<'_, T> {
    /// Checks the row against the dimension `d` of a model.
    ///
    /// # Errors
    /// `DimensionMismatch` when a dense row has not `d` values or a sparse row has not as
    /// many values as indices; `IndexOutOfRange { index, len: d }` for a sparse index
    /// `≥ d`; `NonFinite` for a NaN/∞ value or when `‖x‖²` overflows.
    ///
    /// # Examples
    /// ```
    /// use kestrel_core::dcd::Row;
    /// let row = Row::Sparse { indices: &[0, 7], values: &[1.0f32, 2.0] };
    /// assert!(row.check(8).is_ok());
    /// assert!(row.check(7).is_err()); // index 7 is past a 7-feature model
    /// assert!(Row::Dense(&[f64::NAN]).check(1).is_err());
    /// ```
    pub fn check(&self, dim: usize) -> Result<(), Error> {
        match *self {
            Row::Dense(values) => crate::error::check_len(dim, values.len())?,
            Row::Sparse { indices, values } => {
                crate::error::check_len(indices.len(), values.len())?;
                if let Some(&index) = indices.iter().find(|&&j| j as usize >= dim) {
                    let index = index as usize;
                    return Err(Error::IndexOutOfRange { index, len: dim });
                }
            }
        }
        if self.squared_norm().is_finite() {
            Ok(())
        } else {
            // NaN or ∞ in a value propagates into ‖x‖², and so does overflow.
            Err(Error::NonFinite)
        }
    }

    /// `wᵀx` over the features that `w` has (a sparse index past `w` contributes 0).
    pub fn dot(&self, w: &[T]) -> T {
        match *self {
            Row::Dense(values) => dot_prefix(values, w),
            Row::Sparse { indices, values } => indices
                .iter()
                .zip(values)
                .fold(T::ZERO, |acc, (&j, &x)| acc + x * w.get(j as usize).copied().unwrap_or(T::ZERO)),
        }
    }

    /// `w ← w + a·x` over the features that `w` has.
    pub fn axpy(&self, a: T, w: &mut [T]) {
        match *self {
            Row::Dense(values) => axpy_prefix(a, values, w),
            Row::Sparse { indices, values } => {
                for (&j, &x) in indices.iter().zip(values) {
                    if let Some(wj) = w.get_mut(j as usize) {
                        *wj += a * x;
                    }
                }
            }
        }
    }

    /// `‖x‖²`.
    pub fn squared_norm(&self) -> T {
        let values = match *self {
            Row::Dense(values) | Row::Sparse { values, .. } => values,
        };
        dot_prefix(values, values)
    }

    /// Writes the row densely into `out` (zeros where a sparse row has no entry).
    pub(crate) fn write_dense(&self, out: &mut [T]) {
        match *self {
            Row::Dense(values) => {
                for (o, &x) in out.iter_mut().zip(values) {
                    *o = x;
                }
            }
            Row::Sparse { .. } => {
                out.fill(T::ZERO);
                self.axpy(T::ONE, out);
            }
        }
    }
}

/// A training set of `n` rows of dimension `d`, read row by row by the solvers.
///
/// Contract for implementors: `row(i)` for `i < len()` returns the same row every time it
/// is called during one training run. Rows are checked by the solvers ([`Row::check`]),
/// so a bad row is an `Error`, never undefined behaviour or a panic in the core.
pub trait Rows<T: Real> {
    /// Number of rows `n`.
    fn len(&self) -> usize;
    /// Features per row `d` (the bias feature not included).
    fn dim(&self) -> usize;
    /// Row `i`, for `i < len()`.
    fn row(&self, i: usize) -> Row<'_, T>;
    /// `true` when there are no rows.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// Checks every row of `rows` against dimension `dim`: O(nnz).
///
/// # Errors
/// As [`Row::check`]; `InvalidParam { name: "rows" }` when there are no rows.
pub(crate) fn check_rows<T: Real, R: Rows<T> + ?Sized>(rows: &R, dim: usize) -> Result<(), Error> {
    if rows.is_empty() {
        return Err(Error::InvalidParam { name: "rows" });
    }
    crate::error::check_len(dim, rows.dim())?;
    (0..rows.len()).try_for_each(|i| rows.row(i).check(dim))
}

/// A row-major `n × d` slice of dense rows.
///
/// # Examples
/// ```
/// use kestrel_core::dcd::{DenseRows, Row, Rows};
/// let x = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0];
/// let rows = DenseRows::new(&x, 3)?;
/// assert_eq!((rows.len(), rows.dim()), (2, 3));
/// assert_eq!(rows.row(1), Row::Dense(&[4.0, 5.0, 6.0]));
/// # Ok::<(), kestrel_core::Error>(())
/// ```
#[derive(Clone, Copy, Debug)]
pub struct DenseRows<'a, T> {
    values: &'a [T],
    dim: usize,
}

impl<'a, T: Real> DenseRows<'a, T> {
    /// A view of `values` as rows of `dim` features.
    ///
    /// # Errors
    /// `InvalidParam { name: "dim" }` for `dim = 0`; `DimensionMismatch` when
    /// `values.len()` is not a multiple of `dim`.
    pub fn new(values: &'a [T], dim: usize) -> Result<Self, Error> {
        if dim == 0 {
            return Err(Error::InvalidParam { name: "dim" });
        }
        let whole_rows = values.len() / dim;
        if whole_rows * dim != values.len() {
            return Err(Error::DimensionMismatch { expected: (whole_rows + 1) * dim, got: values.len() });
        }
        Ok(DenseRows { values, dim })
    }
}

impl<T: Real> Rows<T> for DenseRows<'_, T> {
    fn len(&self) -> usize {
        // The constructor rejected dim = 0.
        self.values.len() / self.dim
    }
    fn dim(&self) -> usize {
        self.dim
    }
    /// Row `i`; an empty row for `i ≥ len()`.
    fn row(&self, i: usize) -> Row<'_, T> {
        let start = i.saturating_mul(self.dim);
        let values = self.values.get(start..start.saturating_add(self.dim));
        Row::Dense(values.unwrap_or(&[]))
    }
}

/// Compressed sparse rows: row `i` is `indices[offsets[i]..offsets[i+1]]` with the matching
/// `values`, 0-based feature indices in `0..dim`.
///
/// # Examples
/// ```
/// use kestrel_core::dcd::{Row, Rows, SparseRows};
/// // [[0, 2, 0], [1, 0, 3]]
/// let rows = SparseRows::new(3, &[0, 1, 3], &[1, 0, 2], &[2.0, 1.0, 3.0])?;
/// assert_eq!(rows.len(), 2);
/// assert_eq!(rows.row(1), Row::Sparse { indices: &[0, 2], values: &[1.0, 3.0] });
/// assert!(SparseRows::new(2, &[0, 1], &[2], &[1.0]).is_err()); // index 2 ≥ dim 2
/// # Ok::<(), kestrel_core::Error>(())
/// ```
#[derive(Clone, Copy, Debug)]
pub struct SparseRows<'a, T> {
    dim: usize,
    offsets: &'a [usize],
    indices: &'a [u32],
    values: &'a [T],
}

impl<'a, T: Real> SparseRows<'a, T> {
    /// A view of `n = offsets.len() − 1` sparse rows of dimension `dim`.
    ///
    /// # Errors
    /// `DimensionMismatch` when `offsets` is empty or `indices` and `values` differ in
    /// length; `InvalidParam { name: "offsets" }` unless the offsets are non-decreasing and
    /// end at `indices.len()`; `IndexOutOfRange { index, len: dim }` for an index `≥ dim`.
    pub fn new(dim: usize, offsets: &'a [usize], indices: &'a [u32], values: &'a [T]) -> Result<Self, Error> {
        if offsets.is_empty() {
            return Err(Error::DimensionMismatch { expected: 1, got: 0 });
        }
        crate::error::check_len(indices.len(), values.len())?;
        let ordered = offsets.iter().zip(offsets.iter().skip(1)).all(|(a, b)| a <= b);
        if !(ordered && offsets.last() == Some(&indices.len())) {
            return Err(Error::InvalidParam { name: "offsets" });
        }
        if let Some(&index) = indices.iter().find(|&&j| j as usize >= dim) {
            let index = index as usize;
            return Err(Error::IndexOutOfRange { index, len: dim });
        }
        Ok(SparseRows { dim, offsets, indices, values })
    }
}

impl<T: Real> Rows<T> for SparseRows<'_, T> {
    fn len(&self) -> usize {
        // The constructor rejected empty offsets.
        self.offsets.len() - 1
    }
    fn dim(&self) -> usize {
        self.dim
    }
    /// Row `i`; an empty row for `i ≥ len()`.
    fn row(&self, i: usize) -> Row<'_, T> {
        let range = match (self.offsets.get(i), self.offsets.get(i.saturating_add(1))) {
            (Some(&start), Some(&end)) => start..end,
            _ => 0..0,
        };
        Row::Sparse {
            indices: self.indices.get(range.clone()).unwrap_or(&[]),
            values: self.values.get(range).unwrap_or(&[]),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dense_and_sparse_rows_agree() {
        let dense = [0.0, 2.0, 0.0, 1.0, 0.0, -3.0];
        let d = DenseRows::new(&dense, 3).unwrap();
        let s = SparseRows::new(3, &[0, 1, 3], &[1, 2, 0], &[2.0, -3.0, 1.0]).unwrap();
        let w = [0.5, -1.0, 2.0];
        for i in 0..2 {
            assert_eq!(d.row(i).dot(&w), s.row(i).dot(&w));
            assert_eq!(d.row(i).squared_norm(), s.row(i).squared_norm());
            let (mut a, mut b) = (w, w);
            d.row(i).axpy(2.0, &mut a);
            s.row(i).axpy(2.0, &mut b);
            assert_eq!(a, b);
            let mut out = [9.0; 3];
            s.row(i).write_dense(&mut out);
            assert_eq!(Row::Dense(&out[..]), d.row(i));
        }
        assert_eq!(d.row(2), Row::Dense(&[]));
        assert_eq!(s.row(5).squared_norm(), 0.0);
    }

    #[test]
    fn views_reject_malformed_input() {
        assert_eq!(DenseRows::new(&[1.0f32; 5], 2).err(), Some(Error::DimensionMismatch { expected: 6, got: 5 }));
        assert!(DenseRows::new(&[1.0f32; 4], 0).is_err());
        let v = [1.0f64, 2.0];
        assert!(SparseRows::new(3, &[], &[0, 1], &v).is_err());
        assert!(SparseRows::new(3, &[0, 2], &[0], &v).is_err());
        assert!(SparseRows::new(3, &[0, 2, 1], &[0, 1], &v).is_err());
        assert!(SparseRows::new(3, &[0, 1], &[0, 1], &v).is_err());
        assert_eq!(SparseRows::new(3, &[0, 2], &[0, 3], &v).err(), Some(Error::IndexOutOfRange { index: 3, len: 3 }));
    }

    #[test]
    fn check_catches_bad_rows() {
        assert!(Row::Dense(&[1.0f32, 2.0]).check(2).is_ok());
        assert!(Row::Dense(&[1.0f32]).check(2).is_err());
        assert_eq!(Row::Dense(&[1.0f32, f32::INFINITY]).check(2), Err(Error::NonFinite));
        assert_eq!(Row::Dense(&[1e30f32, 1e30]).check(2), Err(Error::NonFinite));
        let bad = Row::Sparse { indices: &[0, 1], values: &[1.0f64] };
        assert!(bad.check(4).is_err());
        let empty = DenseRows::new(&[0.0f64; 0], 1).unwrap();
        assert_eq!(check_rows(&empty, 1), Err(Error::InvalidParam { name: "rows" }));
    }
}
