//! Reduced (Nyström) kernel ridge regression with the exact leave-one-out residuals of a
//! whole path of ridges from one eigendecomposition (seed 000 §3.4 and §4.1.1).
//!
//! **Model.** Features `z(x) ∈ ℝᵐ` — on the kernel path the Nyström features
//! `z(x) = L⁻¹K(Ã, x)`, `LLᵀ = K(Ã, Ã)` of a reduced set `Ã` (seed 000 §3.4; seed 003
//! eq. 10-11) — and, for each of `t` outputs,
//!
//! `min_{b, w} ‖y − b·1 − Zw‖² + λ‖w‖²`,
//!
//! the primal form of kernel ridge regression `(K + λI)α = y` (seed 000 §4.1.1) with the
//! low-rank `K ≈ ZZᵀ`, and an intercept `b` that is not penalised (targets in raw units
//! need no preprocessing). With centred features `Z_c = Z − 1z̄ᵀ` and targets `ỹ = y − ȳ`:
//! `w = (Z_cᵀZ_c + λI)⁻¹Z_cᵀỹ`, `b = ȳ − z̄ᵀw`.
//!
//! **The path.** One symmetric eigendecomposition `Z_cᵀZ_c = VΛVᵀ` (O(n·m²) to form,
//! O(m³) to decompose, [`symmetric_eigen`]) and the projections `P = Z_cV`, `q = Pᵀỹ` give
//! every ridge at once: `w(λ) = V(Λ + λI)⁻¹q`, the fitted values
//! `ŷ_i = ȳ + Σ_k P_ik q_k/(λ_k + λ)` and the hat matrix's diagonal
//! `H_ii = 1/n + Σ_k P_ik²/(λ_k + λ)`. The hat matrix of the problem with an unpenalised
//! intercept is `11ᵀ/n + Z_c(Z_cᵀZ_c + λI)⁻¹Z_cᵀ` (the intercept's column is orthogonal to
//! `Z_c`), so seed 000's closed form `e = H⁻¹(y − ŷ)` with `H = I − diag(hat)` holds
//! exactly: the leave-one-out residual is
//!
//! `e_i = (y_i − ŷ_i)/(1 − H_ii)`,
//!
//! the residual at `x_i` of the model refitted without row `i` (its intercept included),
//! for O(n·m·(t+1)) per `λ` — choosing `λ` costs one fit.
//!
//! **Classification** (the least-squares SVM): targets `±1` (one output) or one-vs-rest
//! `±1` columns (`t` classes); the left-out prediction is `y_i − e_i`, and [`Loo::errors`]
//! counts the rows it misclassifies (sign, or argmax over the outputs).
//!
//! **Row weights** ([`RidgePath::fit_weighted_in`]; class weights of an imbalanced set):
//! `min_{b, w} Σ_i ω_i(y_i − b − z_iᵀw)² + λ‖w‖²`, `ω_i > 0`. Scaling row `i` by `√ω_i`
//! makes it the problem above with the intercept's column `√ω` in place of `1`; centring by
//! the weighted means `z̄ = Σω_i z_i/Σω`, `ȳ = Σω_i y_i/Σω` keeps that column orthogonal to
//! `Z_c = diag(√ω)(Z − 1z̄ᵀ)`, so the same eigendecomposition gives the path, with
//! `q = Z_cᵀdiag(√ω)(y − ȳ)`. Leaving row `i` out of the scaled problem leaves it out of the
//! weighted one, and the scaled residual is `√ω_i` times the raw one, so (convention chosen
//! here, derived from the unweighted case):
//!
//! `ŷ_i = ȳ + Σ_k P_ik q_k/(λ_k + λ)/√ω_i`, `H_ii = ω_i/Σω + Σ_k P_ik²/(λ_k + λ)`,
//! `e_i = (y_i − ŷ_i)/(1 − H_ii)`,
//!
//! the raw left-out residual. [`Loo::mse`] is then `Σω_i e_i²/(t·Σω)` and
//! [`Loo::weighted_errors`] sums the weights of the misclassified rows. Unit weights give
//! the unweighted path bit for bit.
//!
//! **Memory**: [`RidgePath::scalars_len`]`(n, m, t) = n·m + n·t + 2m² + m·t + 2m + t`
//! scalars: the projections `P`, the targets, `V` and the Gram matrix's storage (reused
//! as scratch), `q`, `Λ`, `z̄` and `ȳ`; with row weights `n + 1` more, the `√ω_i` and
//! `Σω` ([`RidgePath::weighted_scalars_len`]).

use crate::error::check_len;
use crate::gp::Posterior;
use crate::linalg::{
    ROWS_PER_PASS, Triangle, axpy_into_many_prefix, axpy_many_prefix, dot_prefix, dot3_prefix, packed_len,
    solve_lower_transposed, symmetric_eigen,
};
use crate::real::{check_finite, finite};
use crate::storage::{Storage, check_capacity};
use crate::{Error, Real};

/// The leave-one-out scores of one ridge.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Loo<T> {
    /// `Σ_i Σ_c e_ic² / (n·t)`: the mean squared leave-one-out residual (with row weights
    /// `Σ_i ω_i Σ_c e_ic² / (t·Σω)`, the module doc).
    pub mse: T,
    /// Rows whose left-out prediction `y_i − e_i` has another sign (one output) or another
    /// argmax (several) than `y_i`: the LOO errors of a least-squares classifier.
    pub errors: usize,
    /// The sum of the row weights of those rows (`errors` itself without weights).
    pub weighted_errors: T,
}

/// The ridge path of one data set: everything needed to score any `λ > 0` by
/// leave-one-out and to return its weights, in storage `S`.
///
/// # Examples
/// ```
/// use kestrel_core::krr::RidgePath;
/// // y = 2·z + 1 exactly: a small ridge fits it, a large one shrinks the slope.
/// let z = [0.0f64, 1.0, 2.0, 3.0, 4.0];
/// let y = [1.0, 3.0, 5.0, 7.0, 9.0];
/// let mut path = RidgePath::fit_in(vec![0.0; RidgePath::scalars_len(5, 1, 1)], &z, &y, 5, 1, 1)?;
/// let (small, large) = (path.loo(1e-6)?, path.loo(100.0)?);
/// assert!(small.mse < 1e-9 && large.mse > 1.0);
/// let mut w = [0.0f64];
/// let b = path.weights(1e-6, 0, &mut w)?;
/// assert!((w[0] - 2.0).abs() < 1e-6 && (b - 1.0).abs() < 1e-6);
/// # Ok::<(), kestrel_core::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct RidgePath<T, S> {
    storage: S,
    n: usize,
    m: usize,
    outputs: usize,
    /// Row weights given ([`RidgePath::fit_weighted_in`]).
    weighted: bool,
    marker: core::marker::PhantomData<T>,
}

/// The regions of a path's storage.
struct Parts<'a, T> {
    projections: &'a mut [T],
    targets: &'a mut [T],
    vectors: &'a mut [T],
    scratch: &'a mut [T],
    projected: &'a mut [T],
    values: &'a mut [T],
    feature_means: &'a mut [T],
    target_means: &'a mut [T],
    /// `√ω_i` of every row, then `Σω` (empty without weights).
    roots: &'a mut [T],
}

impl RidgePath<(), ()> {
    /// Scalars a path of `n` rows, `m` features and `outputs` outputs needs (saturating).
    pub const fn scalars_len(n: usize, m: usize, outputs: usize) -> usize {
        let rows = n.saturating_mul(m.saturating_add(outputs));
        let square = m.saturating_mul(m).saturating_mul(2);
        let small = m.saturating_mul(outputs.saturating_add(2)).saturating_add(outputs);
        rows.saturating_add(square).saturating_add(small)
    }

    /// Bytes of [`scalars_len`](Self::scalars_len) scalars of type `T`.
    pub const fn bytes<T>(n: usize, m: usize, outputs: usize) -> usize {
        Self::scalars_len(n, m, outputs).saturating_mul(core::mem::size_of::<T>())
    }

    /// Scalars a path with row weights needs: `n + 1` more (saturating).
    pub const fn weighted_scalars_len(n: usize, m: usize, outputs: usize) -> usize {
        Self::scalars_len(n, m, outputs).saturating_add(n).saturating_add(1)
    }
}

impl<T: Real, S: Storage<T>> RidgePath<T, S> {
    /// Builds the path of `features` (row-major `n × m`) and `targets` (row-major
    /// `n × outputs`): centring, the Gram matrix, its eigendecomposition and the projections.
    /// Cost O(n·m² + m³).
    ///
    /// # Errors
    /// `InvalidParam` naming `n` (below 2), `m` or `outputs` (0), or `targets` (every output
    /// constant: nothing to fit); `DimensionMismatch` for slices of the wrong length;
    /// `NonFinite` for NaN/∞ in the input; `CapacityExceeded` when `storage` is short;
    /// `NotConverged` from the eigensolver.
    pub fn fit_in(
        storage: S,
        features: &[T],
        targets: &[T],
        n: usize,
        m: usize,
        outputs: usize,
    ) -> Result<Self, Error> {
        Self::build(storage, features, targets, None, (n, m, outputs))
    }

    /// [`fit_in`](Self::fit_in) with row `i` weighted by `weights[i]` (module doc), into
    /// [`RidgePath::weighted_scalars_len`] scalars. Cost O(n·m² + m³).
    ///
    /// # Errors
    /// As [`fit_in`](Self::fit_in); `DimensionMismatch` unless there are `n` weights,
    /// `InvalidParam { name: "weights" }` unless each is finite and positive.
    pub fn fit_weighted_in(
        storage: S,
        features: &[T],
        targets: &[T],
        weights: &[T],
        n: usize,
        m: usize,
        outputs: usize,
    ) -> Result<Self, Error> {
        Self::build(storage, features, targets, Some(weights), (n, m, outputs))
    }

    /// [`fit_in`](Self::fit_in), or [`fit_weighted_in`](Self::fit_weighted_in) with
    /// `weights`: the checks, in that order, then the fit.
    fn build(
        mut storage: S,
        features: &[T],
        targets: &[T],
        weights: Option<&[T]>,
        (n, m, outputs): (usize, usize, usize),
    ) -> Result<Self, Error> {
        check_shape(n, m, outputs)?;
        check_len(n.saturating_mul(m), features.len())?;
        check_len(n.saturating_mul(outputs), targets.len())?;
        if let Some(weights) = weights {
            check_len(n, weights.len())?;
        }
        check_finite(features)?;
        check_finite(targets)?;
        if weights.is_some_and(|weights| !weights.iter().all(|&w| w.is_finite() && w > T::ZERO)) {
            return Err(Error::InvalidParam { name: "weights" });
        }
        let weighted = weights.is_some();
        let needed = match weighted {
            true => RidgePath::weighted_scalars_len(n, m, outputs),
            false => RidgePath::scalars_len(n, m, outputs),
        };
        check_capacity(needed, storage.as_ref().len())?;
        let parts = split(storage.as_mut(), (n, m, outputs), weighted).ok_or(Error::InvalidParam { name: "n" })?;
        fit(parts, features, targets, weights, m, outputs)?;
        Ok(RidgePath { storage, n, m, outputs, weighted, marker: core::marker::PhantomData })
    }

    /// Rows `n`.
    pub fn len(&self) -> usize {
        self.n
    }

    /// `false`: a path has two rows at least.
    pub fn is_empty(&self) -> bool {
        self.n == 0
    }

    /// The eigenvalues `λ_k` of `Z_cᵀZ_c`, largest first (rounding below zero clamped to 0):
    /// the scale against which to choose the ridges to try.
    pub fn eigenvalues(&self) -> &[T] {
        let (n, m, outputs) = (self.n, self.m, self.outputs);
        let start = n * (m + outputs) + 2 * m * m + m * outputs;
        self.storage.as_ref().get(start..start + m).unwrap_or_default()
    }

    /// The leave-one-out scores of the ridge `lambda`. O(n·m·(t + 1)).
    ///
    /// # Errors
    /// `InvalidParam { name: "lambda" }` unless `lambda` is finite and positive;
    /// `Singular { pivot: i }` when row `i` has leverage `H_ii` within rounding of 1 (a
    /// ridge too small for this precision); `NonFinite` when a score overflows.
    pub fn loo(&mut self, lambda: T) -> Result<Loo<T>, Error> {
        let (n, m, outputs) = (self.n, self.m, self.outputs);
        let parts = self.shrinkage(lambda)?;
        let (mut sum, mut errors, mut weighted_errors) = (T::ZERO, 0usize, T::ZERO);
        let rows = parts.projections.chunks_exact(m).zip(parts.targets.chunks_exact(outputs));
        for (i, (p, y)) in rows.enumerate() {
            let (denominator, root) = (left_out(p, &parts, n, i)?, root_of(parts.roots, i));
            let (mut best_left_out, mut best_true) = ((0, T::ZERO), (0, T::ZERO));
            for (c, &y_c) in y.iter().enumerate() {
                let fitted = fitted(p, &parts, c, root);
                let e = (y_c - fitted) / denominator;
                // ω_i e², ω_i = root² (exactly e² without weights).
                sum += root * root * e * e;
                let left_out_prediction = y_c - e;
                if c == 0 || left_out_prediction > best_left_out.1 {
                    best_left_out = (c, left_out_prediction);
                }
                if c == 0 || y_c > best_true.1 {
                    best_true = (c, y_c);
                }
            }
            let wrong = match outputs {
                1 => (best_left_out.1 >= T::ZERO) != (best_true.1 >= T::ZERO),
                _ => best_left_out.0 != best_true.0,
            };
            errors += usize::from(wrong);
            if wrong {
                weighted_errors += root * root;
            }
        }
        let rows = match parts.roots.last() {
            Some(&total) => total,
            None => T::from_f64(n as f64),
        };
        let mse = finite(sum / (rows * T::from_f64(outputs as f64)))?;
        Ok(Loo { mse, errors, weighted_errors })
    }

    /// Writes the leave-one-out residuals `e_i` of output `output` at ridge `lambda` into
    /// `out` (`n` values).
    ///
    /// # Errors
    /// As [`loo`](Self::loo); `IndexOutOfRange` for `output`; `DimensionMismatch` for `out`.
    pub fn residuals(&mut self, lambda: T, output: usize, out: &mut [T]) -> Result<(), Error> {
        let (n, m, outputs) = (self.n, self.m, self.outputs);
        check_output(output, outputs)?;
        check_len(n, out.len())?;
        let parts = self.shrinkage(lambda)?;
        let rows = parts.projections.chunks_exact(m).zip(parts.targets.chunks_exact(outputs));
        for (i, ((p, y), slot)) in rows.zip(out.iter_mut()).enumerate() {
            let y_c = y.get(output).copied().unwrap_or(T::ZERO);
            *slot = (y_c - fitted(p, &parts, output, root_of(parts.roots, i))) / left_out(p, &parts, n, i)?;
        }
        check_finite(out)
    }

    /// Writes the weights `w(λ) = V(Λ + λI)⁻¹q` of output `output` into `w` (`m` values) and
    /// returns its intercept `b = ȳ − z̄ᵀw`: the model `f(x) = b + wᵀz(x)`.
    ///
    /// # Errors
    /// `InvalidParam { name: "lambda" }`; `IndexOutOfRange` for `output`;
    /// `DimensionMismatch` for `w`; `NonFinite` on overflow.
    pub fn weights(&mut self, lambda: T, output: usize, w: &mut [T]) -> Result<T, Error> {
        let (m, outputs) = (self.m, self.outputs);
        check_output(output, outputs)?;
        check_len(m, w.len())?;
        let parts = self.shrinkage(lambda)?;
        for (slot, v) in w.iter_mut().zip(parts.vectors.chunks_exact(m)) {
            *slot = v
                .iter()
                .zip(&*parts.scratch)
                .zip(projected_column(&parts, output))
                .fold(T::ZERO, |acc, ((&v, &d), &q)| acc + v * d * q);
        }
        check_finite(w)?;
        let mean = parts.target_means.get(output).copied().unwrap_or(T::ZERO);
        finite(parts.feature_means.iter().zip(&*w).fold(mean, |acc, (&z, &w)| acc - z * w))
    }

    /// The posterior of the Gaussian process whose mean is the model at ridge `lambda`
    /// ([`crate::gp`], seed 000 §4.1.4): `M = (Λ + λI)^(−1/2)VᵀL⁻¹` and `k̄ = Lz̄` for the
    /// whitening factor `factor` (`L` of the centres' kernel, packed lower, `m(m+1)/2`
    /// values; the identity when the features are used as they are). O(m³), into `storage`
    /// ([`Posterior::scalars_len`]`(m)` scalars).
    ///
    /// # Errors
    /// `InvalidParam { name: "lambda" }`; `DimensionMismatch` for `factor`;
    /// `CapacityExceeded` when `storage` is short; `Singular` for a zero on `L`'s diagonal;
    /// `NonFinite` on overflow.
    pub fn posterior_in<P: Storage<T>>(
        &mut self,
        lambda: T,
        factor: &[T],
        storage: P,
    ) -> Result<Posterior<T, P>, Error> {
        let (n, m) = (self.n, self.m);
        check_len(packed_len(m), factor.len())?;
        let parts = self.shrinkage(lambda)?;
        Posterior::build_in(storage, m, n, lambda, |rows, means| {
            for (k, row) in rows.chunks_exact_mut(m).enumerate() {
                for (slot, v) in row.iter_mut().zip(parts.vectors.chunks_exact(m)) {
                    *slot = v.get(k).copied().unwrap_or(T::ZERO);
                }
                solve_lower_transposed(factor, m, Triangle::Packed, row)?;
                let scale = parts.scratch.get(k).copied().unwrap_or(T::ZERO).sqrt();
                row.iter_mut().for_each(|x| *x *= scale);
            }
            for (i, mean) in means.iter_mut().enumerate() {
                let l = factor.get(packed_len(i)..packed_len(i + 1)).unwrap_or_default();
                *mean = dot_prefix(l, &*parts.feature_means);
            }
            Ok(())
        })
    }

    /// The storage's regions with `1/(λ_k + λ)` in the scratch.
    fn shrinkage(&mut self, lambda: T) -> Result<Parts<'_, T>, Error> {
        if !(lambda.is_finite() && lambda > T::ZERO) {
            return Err(Error::InvalidParam { name: "lambda" });
        }
        let parts = self.parts().ok_or(Error::InvalidParam { name: "n" })?;
        for (d, &value) in parts.scratch.iter_mut().zip(&*parts.values) {
            *d = T::ONE / (value + lambda);
        }
        Ok(parts)
    }

    fn parts(&mut self) -> Option<Parts<'_, T>> {
        split(self.storage.as_mut(), (self.n, self.m, self.outputs), self.weighted)
    }
}

/// `ŷ_ic = ȳ_c + Σ_k P_ik d_k q_kc / √ω_i` with `d` in the scratch (`root` the `√ω_i`
/// that scaled the row; 1 without weights).
fn fitted<T: Real>(p: &[T], parts: &Parts<'_, T>, c: usize, root: T) -> T {
    let mean = parts.target_means.get(c).copied().unwrap_or(T::ZERO);
    mean + dot3_prefix(p, &*parts.scratch, projected_column(parts, c)) / root
}

/// Column `c` of `q = Pᵀỹ` (stored output by output, `m` values each).
fn projected_column<'p, T>(parts: &'p Parts<'_, T>, c: usize) -> &'p [T] {
    let m = parts.values.len();
    parts.projected.get(c * m..(c + 1) * m).unwrap_or_default()
}

/// `1 − H_ii` of row `row` (projections `p`, `d` in the scratch) with
/// `H_ii = 1/n + Σ_k P_ik² d_k` (`ω_i/Σω` in place of `1/n` with weights), or `Singular`
/// when it is within rounding of 0.
fn left_out<T: Real>(p: &[T], parts: &Parts<'_, T>, n: usize, row: usize) -> Result<T, Error> {
    let share = match parts.roots.last() {
        Some(&total) => {
            let root = root_of(parts.roots, row);
            root * root / total
        }
        None => T::ONE / T::from_f64(n as f64),
    };
    let leverage = share + dot3_prefix(p, p, &*parts.scratch);
    let denominator = T::ONE - leverage;
    if denominator > T::EPSILON * T::from_f64(16.0) { Ok(denominator) } else { Err(Error::Singular { pivot: row }) }
}

fn check_shape(n: usize, m: usize, outputs: usize) -> Result<(), Error> {
    match (n, m, outputs) {
        (0 | 1, _, _) => Err(Error::InvalidParam { name: "n" }),
        (_, 0, _) => Err(Error::InvalidParam { name: "m" }),
        (_, _, 0) => Err(Error::InvalidParam { name: "outputs" }),
        _ => Ok(()),
    }
}

fn check_output(output: usize, outputs: usize) -> Result<(), Error> {
    if output < outputs { Ok(()) } else { Err(Error::IndexOutOfRange { index: output, len: outputs }) }
}

/// Cuts `storage` into the path's regions, with the weights' when `weighted` (`None` when
/// it is too short).
fn split<T>(storage: &mut [T], (n, m, outputs): (usize, usize, usize), weighted: bool) -> Option<Parts<'_, T>> {
    let (projections, rest) = storage.split_at_mut_checked(n.checked_mul(m)?)?;
    let (targets, rest) = rest.split_at_mut_checked(n.checked_mul(outputs)?)?;
    let (vectors, rest) = rest.split_at_mut_checked(m.checked_mul(m)?)?;
    let (scratch, rest) = rest.split_at_mut_checked(m * m)?;
    let (projected, rest) = rest.split_at_mut_checked(m.checked_mul(outputs)?)?;
    let (values, rest) = rest.split_at_mut_checked(m)?;
    let (feature_means, rest) = rest.split_at_mut_checked(m)?;
    let (target_means, rest) = rest.split_at_mut_checked(outputs)?;
    let (roots, _) = rest.split_at_mut_checked(if weighted { n.checked_add(1)? } else { 0 })?;
    Some(Parts { projections, targets, vectors, scratch, projected, values, feature_means, target_means, roots })
}

/// Fills the regions: means (weighted by `weights`, if given, whose roots and sum it
/// keeps), the Gram matrix of the centred (and scaled) features in the scratch, its
/// eigendecomposition, `P = Z_cV` and `q = Pᵀỹ`.
fn fit<T: Real>(
    parts: Parts<'_, T>,
    features: &[T],
    targets: &[T],
    weights: Option<&[T]>,
    m: usize,
    outputs: usize,
) -> Result<(), Error> {
    if let Some(weights) = weights {
        let total = weights.iter().fold(T::ZERO, |sum, &w| sum + w);
        for (root, &w) in parts.roots.iter_mut().zip(weights) {
            *root = w.sqrt();
        }
        if let Some(last) = parts.roots.last_mut() {
            *last = finite(total)?;
        }
    }
    column_means(features, m, weights, parts.feature_means);
    column_means(targets, outputs, weights, parts.target_means);
    parts.targets.copy_from_slice(targets);
    let varies = (0..outputs).any(|c| {
        let mean = parts.target_means.get(c).copied().unwrap_or(T::ZERO);
        targets.chunks_exact(outputs).any(|y| y.get(c).is_some_and(|&y| y != mean))
    });
    if !varies {
        return Err(Error::InvalidParam { name: "targets" });
    }
    // P ← Z_c (rows scaled by √ω_i), then G = Z_cᵀZ_c (lower triangle) in the scratch.
    for (i, (p, z)) in parts.projections.chunks_exact_mut(m).zip(features.chunks_exact(m)).enumerate() {
        for ((p, &z), &mean) in p.iter_mut().zip(z).zip(&*parts.feature_means) {
            *p = z - mean;
        }
        if weights.is_some() {
            let root = root_of(parts.roots, i);
            p.iter_mut().for_each(|p| *p *= root);
        }
    }
    gram_lower(parts.projections, m, parts.scratch);
    symmetric_eigen(parts.scratch, m, parts.values, parts.vectors)?;
    for value in parts.values.iter_mut() {
        *value = value.max_of(T::ZERO);
    }
    rotate_rows(parts.projections, parts.vectors, m, parts.scratch);
    parts.projected.fill(T::ZERO);
    for (i, (p, y)) in parts.projections.chunks_exact(m).zip(targets.chunks_exact(outputs)).enumerate() {
        let root = root_of(parts.roots, i);
        for ((q, &y), &mean) in parts.projected.chunks_exact_mut(m).zip(y).zip(&*parts.target_means) {
            // √ω_i(y − ȳ): the scaled target (the target itself without weights).
            let target = if weights.is_some() { root * (y - mean) } else { y - mean };
            for (q, &p_k) in q.iter_mut().zip(p) {
                *q += p_k * target;
            }
        }
    }
    check_finite(parts.projected)
}

/// `√ω_i` from the roots region (1 where there is none).
fn root_of<T: Real>(roots: &[T], i: usize) -> T {
    roots.get(i).copied().unwrap_or(T::ONE)
}

/// `G = Z_cᵀZ_c`, the lower triangle, into the `m × m` `gram` (row-major; the entries
/// above the diagonal are left at 0), from the centred rows `z` (`n × m`). Each entry sums
/// its rows' products in row order; the rows are taken [`ROWS_PER_PASS`] at a time, one
/// load and one store of the entry for all of them. O(n·m²/2).
fn gram_lower<T: Real>(z: &[T], m: usize, gram: &mut [T]) {
    gram.fill(T::ZERO);
    let mut blocks = z.chunks_exact(m * ROWS_PER_PASS);
    for block in &mut blocks {
        let mut rows = block.chunks_exact(m);
        add_to_gram(core::array::from_fn::<_, ROWS_PER_PASS, _>(|_| rows.next().unwrap_or_default()), m, gram);
    }
    blocks.remainder().chunks_exact(m).for_each(|p| add_to_gram([p], m, gram));
}

/// Adds `Σ_r p_r p_rᵀ` (lower triangle) to `gram`, each entry's terms in the rows' order.
fn add_to_gram<T: Real, const R: usize>(rows: [&[T]; R], m: usize, gram: &mut [T]) {
    for (a, g) in gram.chunks_exact_mut(m).enumerate() {
        let scales = rows.map(|p| p.get(a).copied().unwrap_or(T::ZERO));
        axpy_many_prefix(scales, rows.map(|p| p.get(..=a).unwrap_or_default()), g);
    }
}

/// `P ← Z_cV` in place: each row `p` of `rows` (`n × m`) becomes `Σ_j p_j·V_j` over the
/// rows `V_j` of `vectors` (`m × m`), summed in `j` order. [`ROWS_PER_PASS`] rows at a time
/// when the `scratch` (which holds their copies) has room, so that each `V_j` is loaded
/// once for them. O(n·m²).
fn rotate_rows<T: Real>(rows: &mut [T], vectors: &[T], m: usize, scratch: &mut [T]) {
    let block_len = m * ROWS_PER_PASS;
    let whole = if scratch.len() >= block_len { rows.len() / block_len * block_len } else { 0 };
    let (blocked, rest) = rows.split_at_mut(whole);
    for block in blocked.chunks_exact_mut(block_len) {
        rotate_block::<T, ROWS_PER_PASS>(block, vectors, m, scratch);
    }
    for p in rest.chunks_exact_mut(m) {
        rotate_block::<T, 1>(p, vectors, m, scratch);
    }
}

/// [`rotate_rows`] of the `R` rows of `block` (`R × m`), copied into `scratch` first.
fn rotate_block<T: Real, const R: usize>(block: &mut [T], vectors: &[T], m: usize, scratch: &mut [T]) {
    let copies = scratch.get_mut(..block.len()).unwrap_or_default();
    copies.copy_from_slice(block);
    block.fill(T::ZERO);
    let mut outputs = block.chunks_exact_mut(m);
    let mut outputs: [&mut [T]; R] = core::array::from_fn(|_| outputs.next().unwrap_or_default());
    for (j, v) in vectors.chunks_exact(m).enumerate() {
        let scales: [T; R] = core::array::from_fn(|r| copies.get(r * m + j).copied().unwrap_or(T::ZERO));
        axpy_into_many_prefix(scales, v, &mut outputs);
    }
}

/// The mean of each of the `columns` columns of row-major `values`, weighted by `weights`
/// (one a row) when given, into `means`.
fn column_means<T: Real>(values: &[T], columns: usize, weights: Option<&[T]>, means: &mut [T]) {
    means.fill(T::ZERO);
    let rows = values.len() / columns.max(1);
    for (i, row) in values.chunks_exact(columns).enumerate() {
        let weight = weights.and_then(|w| w.get(i)).copied();
        for (mean, &x) in means.iter_mut().zip(row) {
            *mean += weight.map_or(x, |w| w * x);
        }
    }
    let total = weights.map_or(T::from_f64(rows.max(1) as f64), |w| w.iter().fold(T::ZERO, |sum, &w| sum + w));
    let scale = T::ONE / total;
    for mean in means.iter_mut() {
        *mean *= scale;
    }
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::*;
    use crate::Rng;
    use nalgebra::{DMatrix, DVector};
    use std::vec;
    use std::vec::Vec;

    /// The Gram matrix and the rotation by `V`, four rows at a time, give the bits of the
    /// row-by-row sums for every remainder of rows (and a scratch too small to block).
    #[test]
    fn blocked_gram_and_rotation_match_row_by_row() {
        let m = 5;
        for n in 1..=10 {
            let (z, _) = problem(n, m, 40 + n as u64);
            let (v, _) = problem(m, m, 90 + n as u64);
            let mut gram = vec![0.0; m * m];
            gram_lower(&z, m, &mut gram);
            let mut expected = vec![0.0; m * m];
            for p in z.chunks_exact(m) {
                for a in 0..m {
                    for b in 0..=a {
                        expected[a * m + b] += p[a] * p[b];
                    }
                }
            }
            assert_eq!(
                gram.iter().map(|g| g.to_bits()).collect::<Vec<_>>(),
                expected.iter().map(|g| g.to_bits()).collect::<Vec<_>>(),
                "n = {n}"
            );
            let mut expected = vec![0.0; n * m];
            for (out, p) in expected.chunks_exact_mut(m).zip(z.chunks_exact(m)) {
                for (&p_j, v_j) in p.iter().zip(v.chunks_exact(m)) {
                    for (o, &v) in out.iter_mut().zip(v_j) {
                        *o += p_j * v;
                    }
                }
            }
            for scratch in [m * m, m] {
                let mut rotated = z.clone();
                rotate_rows(&mut rotated, &v, m, &mut vec![0.0; scratch]);
                assert_eq!(
                    rotated.iter().map(|r| r.to_bits()).collect::<Vec<_>>(),
                    expected.iter().map(|r| r.to_bits()).collect::<Vec<_>>(),
                    "n = {n}, scratch {scratch}"
                );
            }
        }
    }

    /// A regression problem: `n × m` features with a decaying spectrum, and a noisy
    /// nonlinear target.
    fn problem(n: usize, m: usize, seed: u64) -> (Vec<f64>, Vec<f64>) {
        let mut rng = Rng::seed_from_u64(seed);
        let z: Vec<f64> = (0..n * m).map(|k| rng.uniform_in(-1.0, 1.0) / (1.0 + (k % m) as f64)).collect();
        let y = z.chunks_exact(m).map(|z| 3.0 + (2.0 * z[0]).sin() + z[1] * z[1] + 0.1 * rng.normal::<f64>()).collect();
        (z, y)
    }

    /// The left-out residual of row `i`: refit `min Σ ω_r(y_r − b − z_rᵀw)² + λ‖w‖²`
    /// without row `i` by the dense normal equations (intercept unpenalised) in f64.
    fn brute_force(z: &[f64], y: &[f64], omega: &[f64], m: usize, lambda: f64, i: usize) -> f64 {
        let keep: Vec<usize> = (0..y.len()).filter(|&r| r != i).collect();
        let x = DMatrix::from_fn(keep.len(), m + 1, |r, c| if c == m { 1.0 } else { z[keep[r] * m + c] });
        let w = DMatrix::from_diagonal(&DVector::from_fn(keep.len(), |r, _| omega[keep[r]]));
        let target = DVector::from_fn(keep.len(), |r, _| y[keep[r]]);
        let mut normal = x.transpose() * &w * &x;
        for k in 0..m {
            normal[(k, k)] += lambda;
        }
        let beta = normal.lu().solve(&(x.transpose() * &w * target)).unwrap();
        let prediction = (0..m).map(|c| z[i * m + c] * beta[c]).sum::<f64>() + beta[m];
        y[i] - prediction
    }

    fn cast<T: Real>(v: &[f64]) -> Vec<T> {
        v.iter().map(|&x| T::from_f64(x)).collect()
    }

    fn path<T: Real>(z: &[f64], y: &[f64], m: usize, outputs: usize) -> RidgePath<T, Vec<T>> {
        let n = y.len() / outputs;
        let storage = vec![T::ZERO; RidgePath::scalars_len(n, m, outputs)];
        RidgePath::fit_in(storage, &cast(z), &cast(y), n, m, outputs).unwrap()
    }

    fn weighted_path<T: Real>(z: &[f64], y: &[f64], omega: &[f64], m: usize) -> RidgePath<T, Vec<T>> {
        let n = y.len();
        let storage = vec![T::ZERO; RidgePath::weighted_scalars_len(n, m, 1)];
        RidgePath::fit_weighted_in(storage, &cast(z), &cast(y), &cast(omega), n, m, 1).unwrap()
    }

    /// LOO residuals and MSE against brute-force refits at every ridge of a path from
    /// 10·λ_max down to `smallest`·λ_max, to `tol` relative to the residuals' scale: without
    /// weights, and with weights spread over two decades.
    fn loo_equals_refits<T: Real>(weighted: bool, smallest: f64, tol: f64) {
        let (n, m) = (120, 12);
        let (z, y) = problem(n, m, 11);
        let mut rng = Rng::seed_from_u64(13);
        let omega: Vec<f64> =
            (0..n).map(|_| if weighted { 10f64.powf(rng.uniform_in(-1.0, 1.0)) } else { 1.0 }).collect();
        let mut path = if weighted { weighted_path::<T>(&z, &y, &omega, m) } else { path::<T>(&z, &y, m, 1) };
        let largest = path.eigenvalues()[0].to_f64();
        let mut lambda = 10.0 * largest;
        let mut residuals = vec![T::ZERO; n];
        while lambda >= smallest * largest {
            path.residuals(T::from_f64(lambda), 0, &mut residuals).unwrap();
            let exact: Vec<f64> = (0..n).map(|i| brute_force(&z, &y, &omega, m, lambda, i)).collect();
            let scale = exact.iter().map(|e| e.abs()).fold(0.0, f64::max);
            for (i, (e, x)) in residuals.iter().zip(&exact).enumerate() {
                assert!((e.to_f64() - x).abs() <= tol * scale, "λ = {lambda:e}, row {i}: {} vs {x}", e.to_f64());
            }
            let total: f64 = omega.iter().sum();
            let mse = exact.iter().zip(&omega).map(|(e, w)| w * e * e).sum::<f64>() / total;
            let loo = path.loo(T::from_f64(lambda)).unwrap();
            assert!((loo.mse.to_f64() - mse).abs() <= 2.0 * tol * mse.max(scale * scale), "λ = {lambda:e}");
            lambda /= 10.0;
        }
    }

    #[test]
    fn loo_residuals_equal_brute_force_refits_f64() {
        for weighted in [false, true] {
            loo_equals_refits::<f64>(weighted, 1e-8, 1e-9);
        }
    }

    #[test]
    fn loo_residuals_equal_brute_force_refits_f32() {
        for weighted in [false, true] {
            loo_equals_refits::<f32>(weighted, 1e-4, 1e-3);
        }
    }

    /// Unit weights give the unweighted path's scores bit for bit; the weighted errors of a
    /// classifier sum the weights of the rows brute-force refits misclassify.
    #[test]
    fn unit_weights_are_no_weights_and_errors_are_weighed() {
        let (n, m) = (90, 4);
        let mut rng = Rng::seed_from_u64(21);
        let z: Vec<f64> = (0..n * m).map(|_| rng.uniform_in(-1.0, 1.0)).collect();
        // An imbalanced noisy sign: about a fifth of the rows positive.
        let sign: Vec<f64> =
            z.chunks_exact(m).map(|z| if z[0] + 0.4 * rng.normal::<f64>() > 0.6 { 1.0 } else { -1.0 }).collect();
        let (mut plain, mut unit) = (path::<f64>(&z, &sign, m, 1), weighted_path::<f64>(&z, &sign, &vec![1.0; n], m));
        for lambda in [1e-3, 0.1, 10.0] {
            let (a, b) = (plain.loo(lambda).unwrap(), unit.loo(lambda).unwrap());
            assert_eq!((a.mse.to_bits(), a.errors), (b.mse.to_bits(), b.errors));
            assert_eq!(b.weighted_errors, b.errors as f64);
        }
        let positives = sign.iter().filter(|&&s| s > 0.0).count() as f64;
        let omega: Vec<f64> = sign.iter().map(|&s| if s > 0.0 { n as f64 / positives } else { 1.0 }).collect();
        let mut weighted = weighted_path::<f64>(&z, &sign, &omega, m);
        let loo = weighted.loo(1.0).unwrap();
        let wrong: Vec<usize> = (0..n)
            .filter(|&i| (sign[i] - brute_force(&z, &sign, &omega, m, 1.0, i) >= 0.0) != (sign[i] >= 0.0))
            .collect();
        assert_eq!(loo.errors, wrong.len());
        let weight: f64 = wrong.iter().map(|&i| omega[i]).sum();
        assert!((loo.weighted_errors - weight).abs() < 1e-9, "{} vs {weight}", loo.weighted_errors);
        // The weights moved the boundary: the positives are left out less often.
        let missed = |path: &mut RidgePath<f64, Vec<f64>>| {
            let mut e = vec![0.0; n];
            path.residuals(1.0, 0, &mut e).unwrap();
            (0..n).filter(|&i| sign[i] > 0.0 && sign[i] - e[i] < 0.0).count()
        };
        assert!(missed(&mut weighted) < missed(&mut plain), "{} vs {}", missed(&mut weighted), missed(&mut plain));
        let storage = || vec![0.0; RidgePath::weighted_scalars_len(n, m, 1)];
        for bad in [0.0, -1.0, f64::NAN, f64::INFINITY] {
            let mut omega = vec![1.0; n];
            omega[7] = bad;
            let e = RidgePath::fit_weighted_in(storage(), &z, &sign, &omega, n, m, 1).err();
            assert_eq!(e, Some(Error::InvalidParam { name: "weights" }));
        }
        let short = RidgePath::fit_weighted_in(vec![0.0; RidgePath::scalars_len(n, m, 1)], &z, &sign, &omega, n, m, 1);
        assert!(matches!(short.err(), Some(Error::CapacityExceeded { .. })));
        let few = RidgePath::fit_weighted_in(storage(), &z, &sign, &omega[1..], n, m, 1).err();
        assert!(matches!(few, Some(Error::DimensionMismatch { .. })));
    }

    #[test]
    fn weights_solve_the_ridge_problem() {
        let (n, m, lambda) = (60, 5, 0.3);
        let (z, y) = problem(n, m, 2);
        let mut path = path::<f64>(&z, &y, m, 1);
        let mut w = vec![0.0; m];
        let b = path.weights(lambda, 0, &mut w).unwrap();
        // The gradient of ‖y − b − Zw‖² + λ‖w‖² vanishes.
        let r: Vec<f64> = (0..n).map(|i| y[i] - b - (0..m).map(|k| z[i * m + k] * w[k]).sum::<f64>()).collect();
        assert!(r.iter().sum::<f64>().abs() < 1e-9);
        for k in 0..m {
            let g = lambda * w[k] - (0..n).map(|i| z[i * m + k] * r[i]).sum::<f64>();
            assert!(g.abs() < 1e-9, "∂w_{k} = {g}");
        }
    }

    #[test]
    fn classification_counts_left_out_errors() {
        // Two outputs (one-vs-rest ±1) separable by the first feature's sign, one output
        // the same as ±1; a large ridge flattens every prediction onto the mean.
        let (n, m) = (80, 3);
        let mut rng = Rng::seed_from_u64(4);
        let z: Vec<f64> = (0..n * m).map(|_| rng.uniform_in(-1.0, 1.0)).collect();
        let sign: Vec<f64> = z.chunks_exact(m).map(|z| if z[0] > 0.0 { 1.0 } else { -1.0 }).collect();
        let two: Vec<f64> = sign.iter().flat_map(|&s| [s, -s]).collect();
        let mut one = path::<f64>(&z, &sign, m, 1);
        let mut both = path::<f64>(&z, &two, m, 2);
        let brute = (0..n)
            .filter(|&i| (sign[i] - brute_force(&z, &sign, &[1.0; 80], m, 1.0, i) >= 0.0) != (sign[i] >= 0.0))
            .count();
        assert_eq!(one.loo(1.0).unwrap().errors, brute);
        assert!(brute < 8, "{brute} errors on a separable problem");
        assert_eq!(both.loo(1.0).unwrap().errors, brute);
    }

    #[test]
    fn bad_input_is_an_error() {
        let storage = || vec![0.0; RidgePath::scalars_len(4, 1, 1)];
        let z = [0.0, 1.0, 2.0, 3.0];
        let fit = |z: &[f64], y: &[f64], n| RidgePath::fit_in(storage(), z, y, n, 1, 1).err();
        assert_eq!(fit(&z[..1], &[1.0], 1), Some(Error::InvalidParam { name: "n" }));
        assert_eq!(fit(&z, &[2.0; 4], 4), Some(Error::InvalidParam { name: "targets" }));
        assert_eq!(fit(&[0.0, f64::NAN, 2.0, 3.0], &[1.0, 2.0, 3.0, 4.0], 4), Some(Error::NonFinite));
        assert_eq!(fit(&z, &[1.0, 2.0, f64::INFINITY, 4.0], 4), Some(Error::NonFinite));
        assert!(matches!(fit(&z, &[1.0, 2.0], 4), Some(Error::DimensionMismatch { .. })));
        let short = RidgePath::fit_in(vec![0.0; 3], &z, &[1.0, 2.0, 3.0, 4.0], 4, 1, 1).err();
        assert!(matches!(short, Some(Error::CapacityExceeded { .. })));
        let mut path = RidgePath::fit_in(storage(), &z, &[1.0, 2.0, 3.0, 5.0], 4, 1, 1).unwrap();
        for lambda in [0.0, -1.0, f64::NAN, f64::INFINITY] {
            assert_eq!(path.loo(lambda), Err(Error::InvalidParam { name: "lambda" }));
        }
        assert!(matches!(path.weights(1.0, 1, &mut [0.0]), Err(Error::IndexOutOfRange { .. })));
        // Two rows and one feature: the fit interpolates, every leverage is 1 as λ → 0.
        let mut tiny = RidgePath::fit_in(storage(), &z[..2], &[1.0, 2.0], 2, 1, 1).unwrap();
        assert!(matches!(tiny.loo(1e-300), Err(Error::Singular { .. })));
    }
}
