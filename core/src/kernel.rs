//! Positive-definite kernels `k(x, x')` and kernel columns.
//!
//! One `Copy` type, [`Kernel`], with the kernels of seed 000 Sect. 2 and LIBSVM's
//! parameter conventions:
//!
//! | kernel | `k(x, x')` | valid parameters |
//! |---|---|---|
//! | Gaussian (RBF) | `exp(−γ‖x − x'‖²)` | `γ > 0` |
//! | Laplacian | `exp(−γ‖x − x'‖₁)` | `γ > 0` |
//! | polynomial | `(γ⟨x, x'⟩ + c₀)^p` | `γ > 0`, `c₀ ≥ 0`, `p ≥ 1` |
//! | linear | `⟨x, x'⟩` | — |
//!
//! **Width conventions.** The seeds write the Gaussian with a width σ in two ways:
//! `exp(−‖x−x'‖²/(2σ²))` (the SLKL paper's experiments, seed 001) maps to `γ = 1/(2σ²)`
//! — use [`Kernel::gaussian_sigma`]; `exp(−‖x−x'‖²/σ²)` (seed 000 eq. 3) maps to
//! `γ = 1/σ²`. Kestrel always stores `γ`, as LIBSVM and scikit-learn do.
//!
//! Cost: one evaluation is O(d); a column against `n` points O(nd). No memory beyond the
//! output slice.

use serde::{Deserialize, Serialize};

use crate::error::check_len;
use crate::linalg::{dot_prefix, squared_distance_prefix};
use crate::{Error, Real};

/// The kernel function and its parameters, as stored in a model.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub enum KernelKind<T> {
    /// `exp(−γ‖x − x'‖²)`.
    Rbf {
        /// Inverse squared width γ.
        gamma: T,
    },
    /// `exp(−γ‖x − x'‖₁)`.
    Laplacian {
        /// Inverse width γ.
        gamma: T,
    },
    /// `(γ⟨x, x'⟩ + coef0)^degree`.
    Polynomial {
        /// Degree p.
        degree: u32,
        /// Scale γ of the inner product.
        gamma: T,
        /// Offset c₀.
        coef0: T,
    },
    /// `⟨x, x'⟩`.
    Linear,
}

/// A validated kernel: its parameters are finite and in range, so it is positive
/// semi-definite and never produces NaN from finite inputs.
///
/// # Examples
/// ```
/// use kestrel_core::Kernel;
/// let k = Kernel::rbf(0.5)?;
/// let v = k.eval(&[0.0, 0.0], &[1.0, 1.0])?;
/// assert!((v - (-1.0f64).exp()).abs() < 1e-15);
/// # Ok::<(), kestrel_core::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "KernelKind<T>", into = "KernelKind<T>")]
#[serde(bound = "T: Real")]
pub struct Kernel<T> {
    kind: KernelKind<T>,
}

impl<T: Real> Kernel<T> {
    /// Gaussian `exp(−γ‖x − x'‖²)`.
    ///
    /// # Errors
    /// `InvalidParam { name: "gamma" }` unless `γ` is finite and positive.
    pub fn rbf(gamma: T) -> Result<Self, Error> {
        Self::new(KernelKind::Rbf { gamma })
    }

    /// Gaussian written with a width σ as `exp(−‖x − x'‖²/(2σ²))`, i.e. `γ = 1/(2σ²)`.
    ///
    /// # Errors
    /// `InvalidParam { name: "sigma" }` unless σ is finite and positive.
    pub fn gaussian_sigma(sigma: T) -> Result<Self, Error> {
        if !(sigma > T::ZERO && sigma.is_finite()) {
            return Err(Error::InvalidParam { name: "sigma" });
        }
        let two = T::ONE + T::ONE;
        Self::rbf(T::ONE / (two * sigma * sigma)).map_err(|_| Error::InvalidParam { name: "sigma" })
    }

    /// Laplacian `exp(−γ‖x − x'‖₁)`.
    ///
    /// # Errors
    /// `InvalidParam { name: "gamma" }` unless `γ` is finite and positive.
    pub fn laplacian(gamma: T) -> Result<Self, Error> {
        Self::new(KernelKind::Laplacian { gamma })
    }

    /// Polynomial `(γ⟨x, x'⟩ + c₀)^p`.
    ///
    /// # Errors
    /// `InvalidParam` naming `degree` (must be ≥ 1), `gamma` (finite, > 0) or `coef0`
    /// (finite, ≥ 0).
    pub fn polynomial(degree: u32, gamma: T, coef0: T) -> Result<Self, Error> {
        Self::new(KernelKind::Polynomial { degree, gamma, coef0 })
    }

    /// Linear `⟨x, x'⟩`.
    pub fn linear() -> Self {
        Kernel { kind: KernelKind::Linear }
    }

    /// Validates `kind`.
    ///
    /// # Errors
    /// `InvalidParam` naming the first parameter out of range.
    pub fn new(kind: KernelKind<T>) -> Result<Self, Error> {
        let positive = |x: T| x > T::ZERO && x.is_finite();
        match kind {
            KernelKind::Rbf { gamma } | KernelKind::Laplacian { gamma } if !positive(gamma) => {
                Err(Error::InvalidParam { name: "gamma" })
            }
            KernelKind::Polynomial { degree: 0, .. } => Err(Error::InvalidParam { name: "degree" }),
            KernelKind::Polynomial { gamma, .. } if !positive(gamma) => Err(Error::InvalidParam { name: "gamma" }),
            KernelKind::Polynomial { coef0, .. } if !(coef0 >= T::ZERO && coef0.is_finite()) => {
                Err(Error::InvalidParam { name: "coef0" })
            }
            _ => Ok(Kernel { kind }),
        }
    }

    /// The kernel's function and parameters.
    pub fn kind(&self) -> KernelKind<T> {
        self.kind
    }

    /// `k(a, b)`. Finite inputs give a finite result (barring overflow of a polynomial).
    ///
    /// # Errors
    /// `DimensionMismatch` when the lengths differ.
    pub fn eval(&self, a: &[T], b: &[T]) -> Result<T, Error> {
        check_len(a.len(), b.len())?;
        Ok(self.eval_prefix(a, b))
    }

    /// `k(a, b)` over the common prefix; callers have checked the lengths.
    pub(crate) fn eval_prefix(&self, a: &[T], b: &[T]) -> T {
        self.value_of(self.statistic_prefix(a, b))
    }

    /// What `k(a, b)` depends on besides the kernel's parameters: `‖a − b‖²` (Gaussian),
    /// `‖a − b‖₁` (Laplacian), `⟨a, b⟩` (polynomial, linear). A search over the width
    /// computes it once per pair; [`value_of`](Self::value_of) then gives
    /// [`eval`](Self::eval)'s value, bit for bit, at any width.
    ///
    /// # Errors
    /// `DimensionMismatch` when the lengths differ.
    ///
    /// # Examples
    /// ```
    /// # use kestrel_core::Kernel;
    /// let (a, b) = ([0.5, 1.0], [2.0, -1.0]);
    /// let distance = Kernel::rbf(1.0)?.pair_statistic(&a, &b)?;
    /// for gamma in [0.1, 1.0, 10.0] {
    ///     let k = Kernel::rbf(gamma)?;
    ///     assert_eq!(k.value_of(distance), k.eval(&a, &b)?);
    /// }
    /// # Ok::<(), kestrel_core::Error>(())
    /// ```
    pub fn pair_statistic(&self, a: &[T], b: &[T]) -> Result<T, Error> {
        check_len(a.len(), b.len())?;
        Ok(self.statistic_prefix(a, b))
    }

    /// [`pair_statistic`](Self::pair_statistic) over the common prefix.
    #[inline]
    fn statistic_prefix(&self, a: &[T], b: &[T]) -> T {
        match self.kind {
            KernelKind::Rbf { .. } => squared_distance_prefix(a, b),
            KernelKind::Laplacian { .. } => a.iter().zip(b).fold(T::ZERO, |acc, (&x, &y)| acc + (x - y).abs()),
            KernelKind::Polynomial { .. } | KernelKind::Linear => dot_prefix(a, b),
        }
    }

    /// `k` of a pair whose [`pair_statistic`](Self::pair_statistic) is `statistic`.
    #[inline]
    pub fn value_of(&self, statistic: T) -> T {
        match self.kind {
            KernelKind::Rbf { gamma } | KernelKind::Laplacian { gamma } => (-gamma * statistic).exp(),
            KernelKind::Polynomial { degree, gamma, coef0 } => (gamma * statistic + coef0).powi(degree),
            KernelKind::Linear => statistic,
        }
    }

    /// `k(x, x)`: 1 for the Gaussian and Laplacian kernels without touching `x`.
    pub fn diagonal(&self, x: &[T]) -> T {
        if self.unit_diagonal() { T::ONE } else { self.eval_prefix(x, x) }
    }

    /// Whether `k(x, x) = 1` for every `x` (the Gaussian and Laplacian kernels).
    pub(crate) fn unit_diagonal(&self) -> bool {
        matches!(self.kind, KernelKind::Rbf { .. } | KernelKind::Laplacian { .. })
    }

    /// A kernel column: `out[i] = k(x, pᵢ)` for the rows `pᵢ` of the row-major matrix
    /// `points` (`out.len()` rows of `x.len()` columns).
    ///
    /// # Errors
    /// `InvalidParam { name: "dim" }` when `x` is empty; `DimensionMismatch` when
    /// `points.len() ≠ out.len()·x.len()`. `out` is untouched on error.
    ///
    /// # Examples
    /// ```
    /// # use kestrel_core::Kernel;
    /// let k = Kernel::linear();
    /// let points = [1.0, 0.0, 0.0, 2.0, 1.0, 1.0]; // three points in 2-D
    /// let mut col = [0.0; 3];
    /// k.column(&[3.0, 1.0], &points, &mut col)?;
    /// assert_eq!(col, [3.0, 2.0, 4.0]);
    /// # Ok::<(), kestrel_core::Error>(())
    /// ```
    pub fn column(&self, x: &[T], points: &[T], out: &mut [T]) -> Result<(), Error> {
        let dim = x.len();
        if dim == 0 {
            return Err(Error::InvalidParam { name: "dim" });
        }
        check_len(out.len().saturating_mul(dim), points.len())?;
        self.column_of_rows(x, points, out);
        Ok(())
    }

    /// [`column`](Self::column) without its checks, for callers whose shapes hold by
    /// construction (`x` not empty): `out[i] = k(x, pᵢ)` for the first `min(out.len(),
    /// points.len()/x.len())` rows. The values are [`eval_prefix`](Self::eval_prefix)'s,
    /// bit for bit.
    // Inlined on the microcontrollers, where callers take one row at a time (a call per
    // centre cost a Cortex-M4F 75 % more instructions per novelty score); called on the
    // hosts, whose blocks of eight it runs faster out of line.
    #[cfg_attr(not(any(target_arch = "x86_64", target_arch = "aarch64")), inline(always))]
    pub(crate) fn column_of_rows(&self, x: &[T], points: &[T], out: &mut [T]) {
        let dim = x.len();
        if let KernelKind::Rbf { gamma } = self.kind {
            // Distances first, then one loop of `exp` alone, which the compiler vectorises.
            let rows = out.len().min(points.len() / dim.max(1));
            for (o, p) in out.iter_mut().zip(points.chunks_exact(dim)) {
                *o = -gamma * squared_distance_prefix(x, p);
            }
            for o in out.iter_mut().take(rows) {
                *o = o.exp();
            }
            return;
        }
        for (o, p) in out.iter_mut().zip(points.chunks_exact(dim)) {
            *o = self.eval_prefix(x, p);
        }
    }

    /// `out[o] = k(x, pⱼ)` for each pair `(j, o)` of `pairs`, `pⱼ` row `j` of the
    /// row-major `points` (`x.len()` columns, `x` not empty): scattered kernel values, as
    /// one sample's entries of chosen columns. The Gaussian's distances come first, then
    /// its `exp`s in one loop, as in [`column_of_rows`](Self::column_of_rows); the values
    /// are [`eval_prefix`](Self::eval_prefix)'s, bit for bit.
    ///
    /// # Panics
    /// When a row `j` lies beyond `points` or an index `o` beyond `out`.
    #[allow(
        clippy::indexing_slicing,
        reason = "the callers' candidates and slots index their regions; out of range is a bug"
    )]
    pub(crate) fn values_at(
        &self,
        x: &[T],
        points: &[T],
        pairs: impl Iterator<Item = (usize, usize)> + Clone,
        out: &mut [T],
    ) {
        let dim = x.len();
        let point = |j: usize| &points[j * dim..(j + 1) * dim];
        if let KernelKind::Rbf { gamma } = self.kind {
            for (j, o) in pairs.clone() {
                out[o] = -gamma * squared_distance_prefix(x, point(j));
            }
            for (_, o) in pairs {
                out[o] = out[o].exp();
            }
            return;
        }
        for (j, o) in pairs {
            out[o] = self.eval_prefix(x, point(j));
        }
    }
}

/// Number of rows of a row-major `points` slice with `dim` columns, all finite.
///
/// # Errors
/// `InvalidParam { name: "dim" }` for `dim = 0`; `DimensionMismatch` when `points.len()`
/// is not a multiple of `dim`; `NonFinite` for NaN/∞.
pub(crate) fn point_count<T: Real>(points: &[T], dim: usize) -> Result<usize, Error> {
    if dim == 0 {
        return Err(Error::InvalidParam { name: "dim" });
    }
    if !points.len().is_multiple_of(dim) {
        return Err(Error::DimensionMismatch { expected: (points.len() / dim + 1) * dim, got: points.len() });
    }
    crate::real::check_finite(points)?;
    Ok(points.len() / dim)
}

impl<T: Real> TryFrom<KernelKind<T>> for Kernel<T> {
    type Error = Error;
    fn try_from(kind: KernelKind<T>) -> Result<Self, Error> {
        Kernel::new(kind)
    }
}

impl<T> From<Kernel<T>> for KernelKind<T> {
    fn from(k: Kernel<T>) -> Self {
        k.kind
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sigma_maps_to_gamma() {
        let k = Kernel::<f64>::gaussian_sigma(2.0).unwrap();
        assert_eq!(k.kind(), KernelKind::Rbf { gamma: 0.125 });
        let a = [0.3, -1.0];
        let b = [1.0, 0.5];
        let d2 = 0.7f64 * 0.7 + 1.5 * 1.5;
        let v = k.eval(&a, &b).unwrap();
        assert!((v - (-d2 / 8.0).exp()).abs() < 1e-15);
    }

    #[test]
    fn values_by_hand() {
        let a = [1.0f64, 2.0];
        let b = [3.0, -1.0];
        let poly = Kernel::polynomial(3, 0.5, 1.0).unwrap();
        assert_eq!(poly.eval(&a, &b).unwrap(), (0.5f64 * 1.0 + 1.0).powi(3));
        let lap = Kernel::laplacian(0.1).unwrap();
        assert!((lap.eval(&a, &b).unwrap() - (-0.5f64).exp()).abs() < 1e-15);
        assert_eq!(Kernel::linear().eval(&a, &b).unwrap(), 1.0);
        assert_eq!(lap.diagonal(&a), 1.0);
        assert_eq!(poly.diagonal(&a), (0.5f64 * 5.0 + 1.0).powi(3));
    }

    #[test]
    fn pair_statistics_by_hand() {
        let (a, b) = ([1.0f64, 2.0], [3.0, -1.0]);
        assert_eq!(Kernel::rbf(0.5).unwrap().pair_statistic(&a, &b), Ok(13.0));
        assert_eq!(Kernel::laplacian(0.5).unwrap().pair_statistic(&a, &b), Ok(5.0));
        assert_eq!(Kernel::polynomial(2, 0.5, 1.0).unwrap().pair_statistic(&a, &b), Ok(1.0));
        assert_eq!(Kernel::linear().pair_statistic(&a, &b), Ok(1.0));
        assert_eq!(Kernel::laplacian(0.5).unwrap().value_of(5.0), (-2.5f64).exp());
        assert!(Kernel::linear().pair_statistic(&a, &[1.0]).is_err());
    }

    #[test]
    fn invalid_parameters_are_named() {
        assert_eq!(Kernel::rbf(0.0f32), Err(Error::InvalidParam { name: "gamma" }));
        assert_eq!(Kernel::rbf(f64::NAN), Err(Error::InvalidParam { name: "gamma" }));
        assert_eq!(Kernel::polynomial(0, 1.0f64, 0.0), Err(Error::InvalidParam { name: "degree" }));
        assert_eq!(Kernel::polynomial(2, 1.0f64, -1.0), Err(Error::InvalidParam { name: "coef0" }));
        assert_eq!(Kernel::gaussian_sigma(0.0f64), Err(Error::InvalidParam { name: "sigma" }));
        let k = Kernel::rbf(1.0f64).unwrap();
        assert!(k.eval(&[1.0], &[1.0, 2.0]).is_err());
        let mut out = [7.0; 2];
        assert!(k.column(&[1.0], &[1.0, 2.0, 3.0], &mut out).is_err());
        assert!(k.column(&[], &[], &mut out).is_err());
        assert_eq!(out, [7.0, 7.0]);
    }
}
