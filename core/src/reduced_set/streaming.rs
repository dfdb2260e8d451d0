//! Reduced-set selection on a stream: keep `x` when `φ(x)` is far from the span of the
//! centres in feature space.
//!
//! With centres `Ã`, `k = K(Ã, x)` and `K(Ã, Ã) = LLᵀ` (an updatable [`Cholesky`]), the
//! squared distance of `φ(x)` to `span φ(Ã)` is the Schur complement
//!
//! ```text
//! d²(x) = k(x, x) − kᵀK(Ã, Ã)⁻¹k = k(x, x) − ‖L⁻¹k‖²
//! ```
//!
//! (the feature-space form of IRSVM's test, eq. 25-28 of seed 003 with `A` replaced by the
//! centres themselves). `x` joins when `d(x) ≥ δ`, by appending `[k; k(x,x)]` to the
//! factor. For a Gaussian kernel `d ∈ [0, 1]`: `δ` is the sine of the angle between `φ(x)`
//! and the span.
//!
//! Cost per offered point: `m` kernel evaluations (O(md)) and one O(m²) solve.
//!
//! **Memory** for capacity `c` in dimension `d`: the centres and a work column,
//! `c·d + c + 1` scalars ([`StreamingSelector::scalars_len`]), and the factor
//! ([`Cholesky::scalars_len`]`(c)`).

use crate::cholesky::Cholesky;
use crate::error::check_len;
use crate::real::check_finite;
use crate::storage::{Storage, check_capacity};
use crate::{Error, Kernel, Real};

/// What happened to an offered point.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Offer<T> {
    /// The point became centre number `index`; `distance` is `d(x)`.
    Accepted {
        /// Its index among the centres.
        index: usize,
        /// Its feature-space distance to the previous span.
        distance: T,
    },
    /// The point is within `δ` of the span (or numerically inside it).
    Rejected {
        /// Its feature-space distance to the span.
        distance: T,
    },
    /// The reduced set is full; the point was not examined.
    Full,
}

/// Streaming reduced-set selection.
///
/// # Examples
/// ```
/// use kestrel_core::cholesky::Cholesky;
/// use kestrel_core::reduced_set::{Offer, StreamingSelector};
/// use kestrel_core::Kernel;
/// let capacity = 8;
/// let mut selector = StreamingSelector::new_in(
///     [0.0; StreamingSelector::scalars_len(8, 1)],
///     Cholesky::new_in([0.0; Cholesky::scalars_len(8)], capacity)?,
///     Kernel::rbf(1.0)?, 1, 0.3)?;
/// assert!(matches!(selector.offer(&[0.0])?, Offer::Accepted { index: 0, .. }));
/// assert!(matches!(selector.offer(&[0.01])?, Offer::Rejected { .. })); // nearly the same point
/// assert!(matches!(selector.offer(&[3.0])?, Offer::Accepted { index: 1, .. }));
/// assert_eq!(selector.centre(1), Some(&[3.0][..]));
/// # Ok::<(), kestrel_core::Error>(())
/// ```
#[derive(Debug)]
pub struct StreamingSelector<T, S, C> {
    values: S,
    factor: Cholesky<T, C>,
    kernel: Kernel<T>,
    dim: usize,
    delta: T,
}

impl StreamingSelector<(), (), ()> {
    /// Scalars of the value storage for capacity `c` in dimension `d`: `c·d + c + 1`.
    pub const fn scalars_len(capacity: usize, dim: usize) -> usize {
        capacity.saturating_mul(dim).saturating_add(capacity).saturating_add(1)
    }

    /// Bytes of both storages for scalar `T`.
    pub const fn bytes<T>(capacity: usize, dim: usize) -> usize {
        let scalars = Self::scalars_len(capacity, dim).saturating_add(Cholesky::scalars_len(capacity));
        scalars.saturating_mul(core::mem::size_of::<T>())
    }
}

impl<T: Real, S: Storage<T>, C: Storage<T>> StreamingSelector<T, S, C> {
    /// An empty selector for points of dimension `dim`; the capacity is the factor's.
    ///
    /// # Errors
    /// `InvalidParam` naming `dim` (0) or `delta` (finite, > 0); `CapacityExceeded` when
    /// `values` is shorter than [`StreamingSelector::scalars_len`].
    pub fn new_in(
        values: S,
        mut factor: Cholesky<T, C>,
        kernel: Kernel<T>,
        dim: usize,
        delta: T,
    ) -> Result<Self, Error> {
        if dim == 0 {
            return Err(Error::InvalidParam { name: "dim" });
        }
        if !(delta > T::ZERO && delta.is_finite()) {
            return Err(Error::InvalidParam { name: "delta" });
        }
        check_capacity(StreamingSelector::scalars_len(factor.capacity(), dim), values.as_ref().len())?;
        factor.clear();
        Ok(StreamingSelector { values, factor, kernel, dim, delta })
    }

    /// Examines `x` and keeps it as a centre when `d(x) ≥ δ` (a full selector checks only
    /// `x` and `k(x, x)`: [`Offer::Full`]).
    ///
    /// # Errors
    /// `DimensionMismatch` for a point of another dimension, `NonFinite` for NaN/∞ in `x`
    /// or a kernel value of `x` that overflows (`k(x, x)` under a linear kernel at 10²⁰ in
    /// `f32`), full or not; the selector is unchanged.
    pub fn offer(&mut self, x: &[T]) -> Result<Offer<T>, Error> {
        check_len(self.dim, x.len())?;
        check_finite(x)?;
        let diagonal_value = self.kernel.diagonal(x);
        if !diagonal_value.is_finite() {
            return Err(Error::NonFinite);
        }
        let (m, capacity, dim) = (self.len(), self.factor.capacity(), self.dim);
        if m == capacity {
            return Ok(Offer::Full);
        }
        // The constructor checked `values` for `c·d` centres and a column of `c + 1`.
        let short = Error::CapacityExceeded { needed: StreamingSelector::scalars_len(capacity, dim), capacity: 0 };
        let (centres, column) = self.values.as_mut().split_at_mut_checked(capacity * dim).ok_or(short)?;
        let column = column.get_mut(..=m).ok_or(short)?;
        let (diagonal, off_diagonal) = column.split_last_mut().ok_or(short)?;
        for (c, centre) in off_diagonal.iter_mut().zip(centres.chunks_exact(dim)) {
            *c = self.kernel.eval_prefix(x, centre);
        }
        *diagonal = diagonal_value;
        if !column.iter().all(|v| v.is_finite()) {
            return Err(Error::NonFinite);
        }
        if self.factor.append_column(column).is_err() {
            return Ok(Offer::Rejected { distance: T::ZERO });
        }
        let distance = self.factor.row(m).and_then(|row| row.last().copied()).unwrap_or(T::ZERO);
        if distance < self.delta {
            // The appended row is the last one: removing it restores the factor exactly.
            self.factor.remove_column(m)?;
            return Ok(Offer::Rejected { distance });
        }
        if let Some(centre) = centres.chunks_exact_mut(dim).nth(m) {
            centre.copy_from_slice(x);
        }
        Ok(Offer::Accepted { index: m, distance })
    }

    /// Number of centres.
    pub fn len(&self) -> usize {
        self.factor.dim()
    }

    /// `true` before the first centre.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Centre `j` (`dim` values), or `None` for `j ≥ len()`.
    pub fn centre(&self, j: usize) -> Option<&[T]> {
        if j >= self.len() {
            return None;
        }
        self.values.as_ref().get(j * self.dim..(j + 1) * self.dim)
    }

    /// The factor `L` of `K(Ã, Ã) = LLᵀ`.
    pub fn factor(&self) -> &Cholesky<T, C> {
        &self.factor
    }

    /// The kernel.
    pub fn kernel(&self) -> &Kernel<T> {
        &self.kernel
    }
}
