//! The leading eigenpairs of a large symmetric operator by the Lanczos algorithm with full
//! reorthogonalisation (seed 000 §3.3).
//!
//! **Math.** From a start vector `r₀` (`β₀ = ‖r₀‖`, `q₁ = r₀/β₀`), each step records one
//! column of `AQ = QT` (seed 000 eq. (10)): `γ_s = q_sᵀAq_s`,
//! `r_s = Aq_s − γ_s q_s − β_{s−1}q_{s−1}`, `β_s = ‖r_s‖`, `q_{s+1} = r_s/β_s` (the
//! seed's algorithm, steps 4-8). After `s` steps `Q_sᵀAQ_s = T_s`, the `s × s` tridiagonal
//! matrix of the `γ`s and `β`s, whose extreme eigenvalues approximate `A`'s long before
//! `s = n`. Its eigenpairs `T_s u_i = θ_i u_i` ([`symmetric_eigen`]) give the Ritz pairs
//! `(θ_i, y_i = Q_s u_i)`, with residual `‖Ay_i − θ_i y_i‖ = β_s·|u_{s,i}|` (the last
//! component of `u_i`; Golub & Van Loan §10.1.4) — known without touching `A`.
//!
//! **Reorthogonalisation: full.** In floating point the `q`s lose orthogonality as soon as a
//! Ritz pair converges, and copies of converged eigenvalues appear. Each new `r_s` is
//! therefore orthogonalised against every earlier `q` twice (classical Gram–Schmidt,
//! "twice is enough"), which keeps `Q_s` orthonormal to working precision at `O(n·s)` per
//! step. Selective reorthogonalisation would save that for large `s`; here `s` stays a
//! small multiple of `k`, so the simpler and more robust full form is used.
//!
//! **Stopping rule.** Once `s ≥ k`, the run stops when every one of the `k` largest Ritz
//! pairs has `β_s·|u_{s,i}| ≤ tol·‖T_s‖₂` (`‖T_s‖₂ = max|θ|`), or when `β_s` vanishes (the
//! Krylov space is invariant: the Ritz pairs are exact), or at the step cap. The rule is
//! checked at `s = k` and then after every `max(1, ⌊s/`[`CHECK_SPACING`]`⌋)` steps (and at
//! the cap), so a run of many steps does not pay an `O(s³)` check at each one: the
//! checks cost `O(s³)` in all, and a run may stop up to `s/10` steps after the rule is
//! first met.
//!
//! **Symmetry check.** For a symmetric `A`, `q_iᵀAq_s = 0` for `i < s − 1` and
//! `q_{s−1}ᵀAq_s = β_{s−1}`, so the first reorthogonalisation pass finds coefficients of
//! rounding size. One larger than `√ε·‖A‖` (estimated by the largest `‖Aq‖` seen) is
//! [`Error::NotSymmetric`]; an asymmetry below that, or outside the Krylov space, goes
//! unnoticed.
//!
//! **Cost and memory.** `s` operator products, `O(n·s²)` for the reorthogonalisation, and an
//! `O(s³)` eigendecomposition of `T` per check. Workspace
//! [`lanczos_workspace_len`]`(n, s) = n·(s + 1) + 2s² + 3s` scalars: the basis and the next
//! residual, `γ`, `β`, `T`'s copy (overwritten by the eigensolver), its eigenvalues and
//! eigenvectors. The `k` eigenvalues and `k × n` eigenvectors go to caller slices.

use crate::error::check_len;
use crate::linalg::{Exit, LinearOperator, axpy_prefix, dot_prefix, symmetric_eigen};
use crate::real::check_finite;
use crate::storage::check_capacity;
use crate::{Error, Real, Rng};

/// The stopping rule is checked every `s/CHECK_SPACING` steps at step `s` (every step
/// while `s < 20`).
pub const CHECK_SPACING: usize = 10;

/// Lanczos's parameters, unchecked: [`LanczosParams::new`], the setters, then
/// [`check`](LanczosParams::check).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LanczosParams<T> {
    k: usize,
    max_steps: usize,
    tolerance: T,
}

impl<T: Real> LanczosParams<T> {
    /// The `k` largest eigenpairs, at most `max(2k + 1, 20)` steps (SciPy `eigsh`'s default
    /// basis size) and a relative Ritz residual of `√ε`.
    pub fn new(k: usize) -> Self {
        LanczosParams { k, max_steps: k.saturating_mul(2).saturating_add(1).max(20), tolerance: T::EPSILON.sqrt() }
    }

    /// The most Lanczos steps, i.e. the largest basis (capped at `n` when run).
    pub fn max_steps(mut self, max_steps: usize) -> Self {
        self.max_steps = max_steps;
        self
    }

    /// The Ritz residual bound relative to `‖T‖₂`.
    pub fn tolerance(mut self, tolerance: T) -> Self {
        self.tolerance = tolerance;
        self
    }

    /// Validates the parameters.
    ///
    /// # Errors
    /// `InvalidParam` naming `k` (0), `max_steps` (below `k`) or `tolerance` (not finite
    /// and positive).
    pub fn check(self) -> Result<ValidLanczosParams<T>, Error> {
        if self.k == 0 {
            return Err(Error::InvalidParam { name: "k" });
        }
        if self.max_steps < self.k {
            return Err(Error::InvalidParam { name: "max_steps" });
        }
        if !(self.tolerance > T::ZERO && self.tolerance.is_finite()) {
            return Err(Error::InvalidParam { name: "tolerance" });
        }
        Ok(ValidLanczosParams(self))
    }
}

/// Lanczos parameters that passed [`LanczosParams::check`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ValidLanczosParams<T>(LanczosParams<T>);

impl<T: Real> ValidLanczosParams<T> {
    /// Eigenpairs wanted.
    pub fn k(&self) -> usize {
        self.0.k
    }

    /// The steps a run on an operator of dimension `n` takes at most: `min(max_steps, n)`
    /// (the `s` of [`lanczos_workspace_len`]).
    pub fn steps(&self, n: usize) -> usize {
        self.0.max_steps.min(n)
    }
}

/// How a [`lanczos`] run ended.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LanczosOutcome<T> {
    /// Stopping rule met, or step cap.
    pub exit: Exit,
    /// Lanczos steps taken (operator products).
    pub steps: usize,
    /// The largest Ritz residual of the `k` pairs returned, relative to `‖T‖₂`.
    pub residual: T,
}

/// Scalars of workspace a run of at most `steps` steps on dimension `n` needs (saturating):
/// `n·(steps + 1) + 2·steps² + 3·steps`.
pub const fn lanczos_workspace_len(n: usize, steps: usize) -> usize {
    let basis = n.saturating_mul(steps.saturating_add(1));
    let square = steps.saturating_mul(steps).saturating_mul(2);
    basis.saturating_add(square).saturating_add(steps.saturating_mul(3))
}

/// The tridiagonal matrix's regions of the workspace.
struct Work<'a, T> {
    gamma: &'a mut [T],
    beta: &'a mut [T],
    t: &'a mut [T],
    theta: &'a mut [T],
    u: &'a mut [T],
}

/// Cuts the workspace into the basis (`n·(steps + 1)`) and the tridiagonal's regions.
fn split<T>(workspace: &mut [T], n: usize, steps: usize) -> Option<(&mut [T], Work<'_, T>)> {
    let (basis, rest) = workspace.split_at_mut_checked(n.checked_mul(steps.checked_add(1)?)?)?;
    let (gamma, rest) = rest.split_at_mut_checked(steps)?;
    let (beta, rest) = rest.split_at_mut_checked(steps)?;
    let (t, rest) = rest.split_at_mut_checked(steps.checked_mul(steps)?)?;
    let (theta, rest) = rest.split_at_mut_checked(steps)?;
    let (u, _) = rest.split_at_mut_checked(steps * steps)?;
    Some((basis, Work { gamma, beta, t, theta, u }))
}

/// The `k = params.k()` largest eigenvalues of the symmetric operator `a` on `ℝⁿ`
/// (`n = start.len()`), into `values` (decreasing), and their unit eigenvectors, into
/// `vectors` (row-major `k × n`: eigenvector `i` at `i·n`), from the Krylov space of `start`.
///
/// # Errors
/// `InvalidParam` naming `k` when `k > n`, or `start` when it is zero; `NonFinite` for
/// NaN/∞ in `start` or in a product; `DimensionMismatch` for `values`/`vectors`;
/// `CapacityExceeded` when `workspace` is shorter than
/// [`lanczos_workspace_len`]`(n, params.steps(n))`; [`Error::Breakdown`] when the Krylov
/// space of `start` is invariant with fewer than `k` dimensions (start elsewhere);
/// [`Error::NotSymmetric`]; the operator's and the eigensolver's errors. On error the outputs
/// hold nothing meaningful.
///
/// # Examples
/// ```
/// use kestrel_core::linalg::{Exit, LanczosParams, lanczos, lanczos_workspace_len};
/// // A = diag(1, 1/2, …, 1/50): the two largest are 1 and 1/2, along e₁ and e₂.
/// let n = 50;
/// let mut a = |x: &[f64], y: &mut [f64]| {
///     for (i, (y, x)) in y.iter_mut().zip(x).enumerate() {
///         *y = x / (i + 1) as f64;
///     }
///     Ok(())
/// };
/// let params = LanczosParams::new(2).max_steps(40).check()?;
/// let mut workspace = vec![0.0; lanczos_workspace_len(n, params.steps(n))];
/// let (mut values, mut vectors) = ([0.0; 2], vec![0.0; 2 * n]);
/// let outcome = lanczos(&mut a, &[1.0; 50], &params, &mut workspace, &mut values, &mut vectors)?;
/// assert_eq!(outcome.exit, Exit::Converged);
/// assert!((values[0] - 1.0).abs() < 1e-12 && (values[1] - 0.5).abs() < 1e-12);
/// assert!((vectors[0].abs() - 1.0).abs() < 1e-6 && (vectors[n + 1].abs() - 1.0).abs() < 1e-6);
/// # Ok::<(), kestrel_core::Error>(())
/// ```
pub fn lanczos<T: Real, A: LinearOperator<T> + ?Sized>(
    a: &mut A,
    start: &[T],
    params: &ValidLanczosParams<T>,
    workspace: &mut [T],
    values: &mut [T],
    vectors: &mut [T],
) -> Result<LanczosOutcome<T>, Error> {
    let (n, k) = (start.len(), params.k());
    if k > n {
        return Err(Error::InvalidParam { name: "k" });
    }
    check_len(k, values.len())?;
    check_len(k.saturating_mul(n), vectors.len())?;
    check_finite(start)?;
    let steps = params.steps(n);
    check_capacity(lanczos_workspace_len(n, steps), workspace.len())?;
    let (basis, mut w) = split(workspace, n, steps).ok_or(Error::InvalidParam { name: "n" })?;
    let norm = dot_prefix(start, start).sqrt();
    if norm == T::ZERO || !norm.is_finite() {
        return Err(Error::InvalidParam { name: "start" });
    }
    let first = basis.get_mut(..n).unwrap_or_default();
    for (q, &x) in first.iter_mut().zip(start) {
        *q = x / norm;
    }
    let symmetry_tolerance = T::EPSILON.sqrt();
    let invariant = T::EPSILON * T::from_f64(n as f64).sqrt();
    let mut a_norm = T::ZERO;
    let mut next_check = k;
    for j in 0..steps {
        let (done, next) = basis.split_at_mut((j + 1) * n);
        let r = next.get_mut(..n).unwrap_or_default();
        let q_j = done.get(j * n..).unwrap_or_default();
        a.apply(q_j, r)?;
        check_finite(r)?;
        a_norm = a_norm.max_of(dot_prefix(r, r).sqrt());
        let gamma = dot_prefix(q_j, r);
        axpy_prefix(-gamma, q_j, r);
        let beta_previous = if j > 0 { w.beta.get(j - 1).copied().unwrap_or(T::ZERO) } else { T::ZERO };
        if let Some(q_previous) = j.checked_sub(1).and_then(|i| done.get(i * n..(i + 1) * n)) {
            axpy_prefix(-beta_previous, q_previous, r);
        }
        for pass in 0..2 {
            for q_i in done.chunks_exact(n) {
                let c = dot_prefix(q_i, r);
                if pass == 0 && c.abs() > symmetry_tolerance * a_norm {
                    return Err(Error::NotSymmetric { step: j });
                }
                axpy_prefix(-c, q_i, r);
            }
        }
        let beta = dot_prefix(r, r).sqrt();
        if let (Some(g), Some(b)) = (w.gamma.get_mut(j), w.beta.get_mut(j)) {
            (*g, *b) = (gamma, beta);
        }
        let s = j + 1;
        let exhausted = beta <= invariant * a_norm;
        if s < k {
            if exhausted {
                return Err(Error::Breakdown { step: j });
            }
        } else if s >= next_check || s == steps || exhausted {
            let residual = ritz(&mut w, s, k, beta)?;
            let converged = exhausted || residual <= params.0.tolerance;
            if converged || s == steps {
                ritz_vectors(basis, &w, n, s, k, values, vectors);
                let exit = if converged { Exit::Converged } else { Exit::Capped };
                return Ok(LanczosOutcome { exit, steps: s, residual });
            }
            next_check = s + (s / CHECK_SPACING).max(1);
        }
        for x in r.iter_mut() {
            *x /= beta;
        }
    }
    // `steps ≥ k ≥ 1`, so the loop returned at `s = steps` at the latest.
    Err(Error::InvalidParam { name: "max_steps" })
}

/// Eigendecomposes `T_s` (from `γ`, `β`) into `θ` and `u` and returns the largest relative
/// Ritz residual `β_s·|u_{s,i}|/‖T_s‖₂` of the `k` leading pairs.
fn ritz<T: Real>(w: &mut Work<'_, T>, s: usize, k: usize, beta: T) -> Result<T, Error> {
    let square = s * s;
    let (t, theta, u) = (
        w.t.get_mut(..square).unwrap_or_default(),
        w.theta.get_mut(..s).unwrap_or_default(),
        w.u.get_mut(..square).unwrap_or_default(),
    );
    t.fill(T::ZERO);
    for (i, row) in t.chunks_exact_mut(s).enumerate() {
        if let Some(d) = row.get_mut(i) {
            *d = w.gamma.get(i).copied().unwrap_or(T::ZERO);
        }
        if let (Some(sub), Some(&b)) =
            (i.checked_sub(1).and_then(|j| row.get_mut(j)), i.checked_sub(1).and_then(|j| w.beta.get(j)))
        {
            *sub = b;
        }
    }
    symmetric_eigen(t, s, theta, u)?;
    let t_norm = theta.first().map_or(T::ZERO, |x| x.abs()).max_of(theta.last().map_or(T::ZERO, |x| x.abs()));
    let last = u.get((s - 1) * s..).unwrap_or_default();
    let largest = last.iter().take(k).fold(T::ZERO, |acc, &x| acc.max_of(beta * x.abs()));
    Ok(if t_norm > T::ZERO { largest / t_norm } else { largest })
}

/// `y_i = Q_s u_i` for the `k` leading pairs, with their eigenvalues.
fn ritz_vectors<T: Real>(
    basis: &[T],
    w: &Work<'_, T>,
    n: usize,
    s: usize,
    k: usize,
    values: &mut [T],
    vectors: &mut [T],
) {
    for (value, &theta) in values.iter_mut().zip(w.theta.iter()) {
        *value = theta;
    }
    for (i, y) in vectors.chunks_exact_mut(n).enumerate().take(k) {
        y.fill(T::ZERO);
        for (l, q_l) in basis.chunks_exact(n).take(s).enumerate() {
            axpy_prefix(w.u.get(l * s + i).copied().unwrap_or(T::ZERO), q_l, y);
        }
    }
}

/// Dimensions up to which the callers of [`leading_pairs`] decompose a dense matrix whole
/// (`≈ 9n³`) rather than run Lanczos for a few of its eigenpairs.
pub(crate) const DENSE_UP_TO: usize = 200;

/// The steps of [`leading_pairs`]' first run for `k` pairs: `max(4k, 40)`.
const fn first_run_steps(k: usize) -> usize {
    if k.saturating_mul(4) > 40 { k.saturating_mul(4) } else { 40 }
}

/// The most steps [`leading_pairs`] takes for `k` pairs of an operator of dimension `n`
/// when its work holds them ([`leading_pairs_work_len`]): the first run's
/// [`first_run_steps`] and two retries, each doubling it, at most `n`.
const fn leading_steps(n: usize, k: usize) -> usize {
    let most = first_run_steps(k).saturating_mul(4);
    if most < n { most } else { n }
}

/// `k` eigenvalues, `k` eigenvectors and a start vector of dimension `n`: what
/// [`leading_pairs`]' work holds before the Lanczos workspace.
const fn pairs_len(n: usize, k: usize) -> usize {
    k.saturating_add(k.saturating_add(1).saturating_mul(n))
}

/// Work scalars of [`leading_pairs`] for `k` pairs of dimension `n` with room for its two
/// retries (saturating): `k + (k + 1)·n` and [`lanczos_workspace_len`]`(n, s)` for the
/// most steps `s = min(n, 4·max(4k, 40))`.
pub(crate) const fn leading_pairs_work_len(n: usize, k: usize) -> usize {
    pairs_len(n, k).saturating_add(lanczos_workspace_len(n, leading_steps(n, k)))
}

/// Work scalars of [`leading_pairs`]' first run alone, without room for a retry
/// (saturating): `k + (k + 1)·n` and [`lanczos_workspace_len`]`(n, min(n, max(4k, 40)))`.
pub(crate) const fn leading_pairs_first_run_len(n: usize, k: usize) -> usize {
    let first = first_run_steps(k);
    pairs_len(n, k).saturating_add(lanczos_workspace_len(n, if first < n { first } else { n }))
}

/// The `k` leading eigenpairs of the symmetric operator `a` of dimension `n` by
/// [`lanczos`], into the start of `work`: `k` eigenvalues, largest first, then `k`
/// eigenvectors of `n` each. The Ritz residuals are brought to `ε^{3/4}·‖A‖₂` (f64:
/// `1.8·10⁻¹²`; f32: `6.4·10⁻⁶`) in `max(4k, 40)` steps, or twice as many at each retry
/// as far as `work` holds ([`leading_pairs_work_len`] holds two retries). The start vector
/// is a fixed pseudo-random one (not `1`, which a centred kernel matrix maps to 0).
/// `None` when they converged; the steps of the longest run when `work` cannot hold
/// enough (the callers then decompose their matrix whole, if their storage holds that).
///
/// # Errors
/// As [`lanczos`] (`Breakdown` when the Krylov space closes before `k` pairs).
pub(crate) fn leading_pairs<T: Real, A: LinearOperator<T> + ?Sized>(
    a: &mut A,
    n: usize,
    k: usize,
    work: &mut [T],
) -> Result<Option<usize>, Error> {
    let (values, rest) = work.split_at_mut(k.min(work.len()));
    let (vectors, rest) = rest.split_at_mut(k.saturating_mul(n).min(rest.len()));
    let (start, workspace) = rest.split_at_mut(n.min(rest.len()));
    let mut rng = Rng::seed_from_u64(0x4b50_4341);
    start.iter_mut().for_each(|x| *x = T::from_f64(rng.uniform_in(-1.0, 1.0)));
    let most = (1..=n).rev().find(|&s| lanczos_workspace_len(n, s) <= workspace.len()).unwrap_or(0);
    let tolerance = T::EPSILON.sqrt() * T::EPSILON.sqrt().sqrt();
    let mut steps = first_run_steps(k).min(most);
    while steps >= k && steps > 0 {
        let params = LanczosParams::new(k).max_steps(steps).tolerance(tolerance).check()?;
        if lanczos(a, start, &params, workspace, values, vectors)?.exit == Exit::Converged {
            return Ok(None);
        }
        if steps == most {
            break;
        }
        steps = steps.saturating_mul(2).min(most);
    }
    Ok(Some(steps.min(most)))
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::*;
    use crate::Rng;
    use nalgebra::{DMatrix, DVector, SymmetricEigen};
    use proptest::prelude::*;
    use std::vec;
    use std::vec::Vec;

    /// `Q diag(spectrum) Qᵀ` with a random orthogonal `Q`.
    fn with_spectrum(spectrum: &[f64], rng: &mut Rng) -> DMatrix<f64> {
        let n = spectrum.len();
        let q = DMatrix::from_fn(n, n, |_, _| rng.uniform_in(-1.0, 1.0)).qr().q();
        &q * DMatrix::from_diagonal(&DVector::from_column_slice(spectrum)) * q.transpose()
    }

    /// The dense matrix as an operator in `T`.
    fn operator<T: Real>(a: &DMatrix<f64>) -> impl FnMut(&[T], &mut [T]) -> Result<(), Error> + use<T> {
        let n = a.nrows();
        let flat: Vec<T> = (0..n * n).map(|k| T::from_f64(a[(k / n, k % n)])).collect();
        move |x: &[T], y: &mut [T]| crate::linalg::gemv(&flat, n, n, x, y)
    }

    /// The eigenvalues, the Ritz vectors as columns, and the outcome.
    type Run<T> = (Vec<f64>, DMatrix<f64>, LanczosOutcome<T>);

    fn run<T: Real>(a: &DMatrix<f64>, start: &[f64], params: &ValidLanczosParams<T>) -> Result<Run<T>, Error> {
        let (n, k) = (a.nrows(), params.k());
        let start: Vec<T> = start.iter().map(|&x| T::from_f64(x)).collect();
        let mut workspace = vec![T::ZERO; lanczos_workspace_len(n, params.steps(n))];
        let (mut values, mut vectors) = (vec![T::ZERO; k], vec![T::ZERO; k * n]);
        let outcome = lanczos(&mut operator::<T>(a), &start, params, &mut workspace, &mut values, &mut vectors)?;
        let y = DMatrix::from_fn(n, k, |i, j| vectors[j * n + i].to_f64());
        Ok((values.iter().map(|v| v.to_f64()).collect(), y, outcome))
    }

    /// The `k` leading pairs against nalgebra's dense eigendecomposition: eigenvalues to
    /// `tol·‖A‖`, each Ritz vector parallel to the eigenvector, and `‖Ay − θy‖ ≤ tol·‖A‖`.
    fn leading_pairs_match_nalgebra<T: Real>(tol: f64) {
        let mut rng = Rng::seed_from_u64(7);
        let n = 120;
        // A kernel-like decaying spectrum, with negative tail to keep "leading" algebraic.
        let spectrum: Vec<f64> = (0..n).map(|i| 10.0 * 0.8f64.powi(i as i32) - 0.05 * (i % 3) as f64).collect();
        let a = with_spectrum(&spectrum, &mut rng);
        let start: Vec<f64> = (0..n).map(|_| rng.uniform_in(-1.0, 1.0)).collect();
        let k = 4;
        let params = LanczosParams::<T>::new(k).max_steps(60).tolerance(T::from_f64(tol)).check().unwrap();
        let (values, y, outcome) = run(&a, &start, &params).unwrap();
        assert_eq!(outcome.exit, Exit::Converged);
        assert!(outcome.steps < 60 && outcome.residual.to_f64() <= tol, "{outcome:?}");
        let eigen = SymmetricEigen::new(a.clone());
        let mut order: Vec<usize> = (0..n).collect();
        order.sort_by(|&i, &j| eigen.eigenvalues[j].total_cmp(&eigen.eigenvalues[i]));
        let scale = eigen.eigenvalues.amax();
        for (i, &value) in values.iter().enumerate() {
            let reference = eigen.eigenvalues[order[i]];
            assert!((value - reference).abs() <= 10.0 * tol * scale, "θ_{i} = {value}, λ = {reference}");
            let (yi, vi) = (y.column(i), eigen.eigenvectors.column(order[i]));
            assert!((yi.dot(&vi).abs() - 1.0).abs() <= 100.0 * tol, "y_{i}·v = {}", yi.dot(&vi));
            assert!((&a * yi - yi * value).norm() <= 10.0 * tol * scale, "residual of pair {i}");
        }
    }

    /// With `k = n` the whole spectrum comes out, and the Ritz vectors are orthonormal.
    fn whole_spectrum_matches_nalgebra<T: Real>(tol: f64) {
        let mut rng = Rng::seed_from_u64(8);
        let n = 30;
        let b = DMatrix::from_fn(n, n, |_, _| rng.uniform_in(-1.0, 1.0));
        let a = &b + b.transpose();
        let params = LanczosParams::<T>::new(n).check().unwrap();
        let (values, y, outcome) = run(&a, &vec![1.0; n], &params).unwrap();
        assert_eq!((outcome.exit, outcome.steps), (Exit::Converged, n));
        let mut reference: Vec<f64> = SymmetricEigen::new(a.clone()).eigenvalues.iter().copied().collect();
        reference.sort_by(|x, y| y.total_cmp(x));
        let scale = a.norm();
        for (x, r) in values.iter().zip(&reference) {
            assert!((x - r).abs() <= tol * scale, "{x} vs {r}");
        }
        assert!((y.transpose() * &y - DMatrix::identity(n, n)).norm() <= tol * n as f64);
    }

    /// A cap too small for the tolerance is an outcome, not an error, with the pairs of the
    /// last step.
    fn cap_reached_is_capped<T: Real>() {
        let mut rng = Rng::seed_from_u64(9);
        let spectrum: Vec<f64> = (0..80).map(|i| 1.0 - 0.001 * i as f64).collect();
        let a = with_spectrum(&spectrum, &mut rng);
        let params = LanczosParams::<T>::new(2).max_steps(5).check().unwrap();
        let (values, _, outcome) = run(&a, &vec![1.0; 80], &params).unwrap();
        assert_eq!((outcome.exit, outcome.steps), (Exit::Capped, 5));
        assert!(outcome.residual > T::EPSILON.sqrt());
        assert!(values[0] <= 1.0 + 1e-4 && values[0] >= values[1]);
    }

    fn bad_input_is_an_error<T: Real>() {
        let mut rng = Rng::seed_from_u64(10);
        let a = with_spectrum(&[3.0, 2.0, 1.0, 0.5], &mut rng);
        let ones = [1.0; 4];
        let k = |k| LanczosParams::<T>::new(k).check().unwrap();
        assert_eq!(run(&a, &ones, &k(5)).err(), Some(Error::InvalidParam { name: "k" }));
        assert_eq!(run(&a, &[0.0; 4], &k(1)).err(), Some(Error::InvalidParam { name: "start" }));
        assert_eq!(run(&a, &[1.0, f64::NAN, 0.0, 0.0], &k(1)).err(), Some(Error::NonFinite));
        // A non-symmetric matrix: its product leaves the Krylov recurrence.
        let mut skewed = a.clone();
        skewed[(0, 3)] += 1.0;
        assert!(matches!(run(&skewed, &ones, &k(2)).err(), Some(Error::NotSymmetric { .. })));
        // diag(3, 2, 1, 0.5) from e₁: the Krylov space is span(e₁), one dimension.
        let diagonal = DMatrix::from_diagonal(&DVector::from_column_slice(&[3.0, 2.0, 1.0, 0.5]));
        assert_eq!(run(&diagonal, &[1.0, 0.0, 0.0, 0.0], &k(2)).err(), Some(Error::Breakdown { step: 0 }));
        // …which holds one exact eigenpair.
        let (values, _, outcome) = run(&diagonal, &[1.0, 0.0, 0.0, 0.0], &k(1)).unwrap();
        assert_eq!((values[0], outcome.exit, outcome.steps), (3.0, Exit::Converged, 1));
        // An operator producing NaN, and one failing, pass their failure on.
        let params = k(1);
        let mut workspace = vec![T::ZERO; lanczos_workspace_len(4, params.steps(4))];
        let (mut values, mut vectors) = ([T::ZERO], [T::ZERO; 4]);
        let start = [T::ONE; 4];
        let mut nan = |_: &[T], y: &mut [T]| {
            y.fill(T::from_f64(f64::NAN));
            Ok(())
        };
        let err = lanczos(&mut nan, &start, &params, &mut workspace, &mut values, &mut vectors);
        assert_eq!(err, Err(Error::NonFinite));
        let mut failing = |_: &[T], _: &mut [T]| Err(Error::Singular { pivot: 2 });
        let err = lanczos(&mut failing, &start, &params, &mut workspace, &mut values, &mut vectors);
        assert_eq!(err, Err(Error::Singular { pivot: 2 }));
        let short = lanczos(&mut failing, &start, &params, &mut workspace[1..], &mut values, &mut vectors);
        assert!(matches!(short, Err(Error::CapacityExceeded { .. })));
        let wrong = lanczos(&mut failing, &start, &params, &mut workspace, &mut values, &mut vectors[1..]);
        assert!(matches!(wrong, Err(Error::DimensionMismatch { .. })));
        assert_eq!(LanczosParams::<T>::new(0).check(), Err(Error::InvalidParam { name: "k" }));
        assert_eq!(LanczosParams::<T>::new(3).max_steps(2).check(), Err(Error::InvalidParam { name: "max_steps" }));
        let nan_tolerance = LanczosParams::<T>::new(1).tolerance(T::from_f64(f64::NAN)).check();
        assert_eq!(nan_tolerance, Err(Error::InvalidParam { name: "tolerance" }));
    }

    macro_rules! gen_tests {
        ($($scalar:ident: $tol:expr),*) => {$(
            mod $scalar {
                #[test]
                fn leading_pairs_match_nalgebra() {
                    super::leading_pairs_match_nalgebra::<$scalar>($tol);
                }
                #[test]
                fn whole_spectrum_matches_nalgebra() {
                    super::whole_spectrum_matches_nalgebra::<$scalar>(10.0 * $tol);
                }
                #[test]
                fn cap_reached_is_capped() {
                    super::cap_reached_is_capped::<$scalar>();
                }
                #[test]
                fn bad_input_is_an_error() {
                    super::bad_input_is_an_error::<$scalar>();
                }
            }
        )*};
    }

    gen_tests!(f64: 1e-10, f32: 1e-4);

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]
        /// Any symmetric matrix, any start with a component along every eigenvector: the
        /// `k` largest eigenvalues of a full run equal nalgebra's.
        #[test]
        fn leading_eigenvalues_equal_dense(n in 2usize..12, k in 1usize..4, seed in 0u64..1000) {
            let k = k.min(n);
            let mut rng = Rng::seed_from_u64(seed);
            let b = DMatrix::from_fn(n, n, |_, _| rng.uniform_in(-1.0, 1.0));
            let a = &b + b.transpose();
            let start: Vec<f64> = (0..n).map(|_| rng.uniform_in(0.5, 1.5)).collect();
            let params = LanczosParams::<f64>::new(k).max_steps(n).tolerance(1e-12).check().unwrap();
            match run(&a, &start, &params) {
                Ok((values, _, _)) => {
                    let mut reference: Vec<f64> = SymmetricEigen::new(a.clone()).eigenvalues.iter().copied().collect();
                    reference.sort_by(|x, y| y.total_cmp(x));
                    for (x, r) in values.iter().zip(&reference) {
                        prop_assert!((x - r).abs() <= 1e-9 * a.norm(), "{} vs {}", x, r);
                    }
                }
                // A random start can only miss eigenvectors by a measure-zero accident.
                Err(error) => prop_assert!(false, "{:?}", error),
            }
        }
    }
}
