//! Conjugate gradients for `Ax = b` with a symmetric positive-definite operator, plain or
//! preconditioned (seed 000 §3.3).
//!
//! **Math.** CG minimises `½xᵀAx − xᵀb` (seed 000 §3.3) over the growing Krylov spaces
//! of `r₀ = b − Ax₀`. With a preconditioner `M⁻¹ ≈ A⁻¹` (symmetric positive definite) and
//! `z_s = M⁻¹r_s`, each step is
//!
//! `a_s = r_sᵀz_s/(p_sᵀAp_s)`, `x_{s+1} = x_s + a_s p_s`, `r_{s+1} = r_s − a_s Ap_s`,
//! `b_s = r_{s+1}ᵀz_{s+1}/(r_sᵀz_s)`, `p_{s+1} = z_{s+1} + b_s p_s`,
//!
//! the seed's steps 4-8 with `M = I` (the seed prints `p_{s+1} ← r_{s+1} − β_s p_s`; with its
//! `β_s = ‖r_{s+1}‖²/‖r_s‖² > 0` the sign must be `+` for the directions to be
//! `A`-conjugate, Golub & Van Loan Alg. 10.2.1). The error falls like
//! `((√κ − 1)/(√κ + 1))^s` with `κ` the condition number of `M⁻¹A`, which is what a good
//! preconditioner buys (the Falkon construction of kernel ridge regression passes the
//! Nyström approximation of its Hessian here).
//!
//! **Stopping rule**: the relative residual `‖r_s‖ ≤ tol·‖b‖` (of the recurrence's `r`), or
//! the iteration cap ([`Exit::Capped`], not an error: `x` holds the last iterate).
//! `b = 0` returns `x = 0` at once. **Breakdown** — `p_sᵀAp_s ≤ 0` (`A` not positive
//! definite) or `r_sᵀz_s ≤ 0` with `r_s ≠ 0` (`M⁻¹` not) — is [`Error::Breakdown`].
//!
//! **Cost and memory.** One product with `A` and one with `M⁻¹` per step, plus `O(n)`.
//! Workspace [`cg_workspace_len`]`(n) = 4n` scalars (`r`, `z`, `p`, `Ap`).

use crate::error::check_len;
use crate::linalg::{Exit, LinearOperator, axpy_prefix, dot_prefix};
use crate::real::check_finite;
use crate::storage::check_capacity;
use crate::{Error, Real};

/// CG's parameters, unchecked: [`CgParams::new`], the setters, then
/// [`check`](CgParams::check).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CgParams<T> {
    tolerance: T,
    max_iterations: usize,
}

impl<T: Real> CgParams<T> {
    /// Relative residual `√ε`, at most 1000 iterations.
    pub fn new() -> Self {
        CgParams { tolerance: T::EPSILON.sqrt(), max_iterations: 1000 }
    }

    /// The relative residual `‖r‖/‖b‖` at which to stop.
    pub fn tolerance(mut self, tolerance: T) -> Self {
        self.tolerance = tolerance;
        self
    }

    /// The most iterations (products with `A`).
    pub fn max_iterations(mut self, max_iterations: usize) -> Self {
        self.max_iterations = max_iterations;
        self
    }

    /// Validates the parameters.
    ///
    /// # Errors
    /// `InvalidParam` naming `tolerance` (not finite and positive) or `max_iterations` (0).
    pub fn check(self) -> Result<ValidCgParams<T>, Error> {
        if !(self.tolerance > T::ZERO && self.tolerance.is_finite()) {
            return Err(Error::InvalidParam { name: "tolerance" });
        }
        if self.max_iterations == 0 {
            return Err(Error::InvalidParam { name: "max_iterations" });
        }
        Ok(ValidCgParams(self))
    }
}

impl<T: Real> Default for CgParams<T> {
    fn default() -> Self {
        Self::new()
    }
}

/// CG parameters that passed [`CgParams::check`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ValidCgParams<T>(CgParams<T>);

/// How a CG run ended.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CgOutcome<T> {
    /// Stopping rule met, or iteration cap.
    pub exit: Exit,
    /// Iterations run (products with `A`, besides the initial residual's when `x₀ ≠ 0`).
    pub iterations: usize,
    /// The final relative residual `‖r‖/‖b‖` (0 when `b = 0`).
    pub residual: T,
}

/// Scalars of workspace CG on dimension `n` needs: `4n` (saturating).
pub const fn cg_workspace_len(n: usize) -> usize {
    n.saturating_mul(4)
}

/// Solves `Ax = b` by conjugate gradients from the initial guess in `x` (zeros are a fine
/// default, and save the product of the initial residual), leaving the solution in `x`.
///
/// # Errors
/// `DimensionMismatch` when `x.len() ≠ b.len()`; `CapacityExceeded` when `workspace` is
/// shorter than [`cg_workspace_len`]; `NonFinite` for NaN/∞ in `b`, `x` or a product;
/// [`Error::Breakdown`] when `A` shows it is not positive definite; the operator's errors.
///
/// # Examples
/// ```
/// use kestrel_core::linalg::{CgParams, Exit, conjugate_gradient, cg_workspace_len};
/// // [[4, 1], [1, 3]] x = [1, 2]: x = [1/11, 7/11].
/// let mut a = |x: &[f64], y: &mut [f64]| {
///     y.copy_from_slice(&[4.0 * x[0] + x[1], x[0] + 3.0 * x[1]]);
///     Ok(())
/// };
/// let mut x = [0.0; 2];
/// let params = CgParams::new().tolerance(1e-12).check()?;
/// let outcome = conjugate_gradient(&mut a, &[1.0, 2.0], &mut x, &params, &mut [0.0; cg_workspace_len(2)])?;
/// assert_eq!((outcome.exit, outcome.iterations), (Exit::Converged, 2));
/// assert!((x[0] - 1.0 / 11.0).abs() < 1e-12 && (x[1] - 7.0 / 11.0).abs() < 1e-12);
/// # Ok::<(), kestrel_core::Error>(())
/// ```
pub fn conjugate_gradient<T: Real, A: LinearOperator<T>>(
    a: &mut A,
    b: &[T],
    x: &mut [T],
    params: &ValidCgParams<T>,
    workspace: &mut [T],
) -> Result<CgOutcome<T>, Error> {
    solve(a, None::<&mut A>, b, x, params, workspace, &mut |_, _| Ok(()))
}

/// As [`conjugate_gradient`], calling `observe(s, x_s)` with each iterate after its step
/// `s = 1, 2, …` — what early stopping needs: from `x₀ = 0`, `x_s` minimises
/// `½xᵀAx − xᵀb` over the Krylov space `span{b, Ab, …, A^{s−1}b}`, so on the normal
/// equations `A = ZᵀZ`, `b = Zᵀy` the iterates are partial least squares with `s`
/// components (seed 000 §4.1.2), and `observe` can score each on held-out rows.
///
/// # Errors
/// As [`conjugate_gradient`]; `observe`'s errors, which end the solve.
pub fn conjugate_gradient_observed<T: Real, A: LinearOperator<T>>(
    a: &mut A,
    b: &[T],
    x: &mut [T],
    params: &ValidCgParams<T>,
    workspace: &mut [T],
    observe: &mut impl FnMut(usize, &[T]) -> Result<(), Error>,
) -> Result<CgOutcome<T>, Error> {
    solve(a, None::<&mut A>, b, x, params, workspace, observe)
}

/// As [`conjugate_gradient`], with the preconditioner `m_inverse` applying `M⁻¹` (symmetric
/// positive definite, `M ≈ A`): `z = M⁻¹r`.
///
/// # Errors
/// As [`conjugate_gradient`]; [`Error::Breakdown`] also when `M⁻¹` shows it is not positive
/// definite; the preconditioner's errors.
pub fn preconditioned_conjugate_gradient<T: Real, A: LinearOperator<T>, P: LinearOperator<T>>(
    a: &mut A,
    m_inverse: &mut P,
    b: &[T],
    x: &mut [T],
    params: &ValidCgParams<T>,
    workspace: &mut [T],
) -> Result<CgOutcome<T>, Error> {
    solve(a, Some(m_inverse), b, x, params, workspace, &mut |_, _| Ok(()))
}

/// `z = M⁻¹r`, or `z = r` without a preconditioner; returns `rᵀz`.
fn precondition<T: Real, P: LinearOperator<T>>(
    m_inverse: &mut Option<&mut P>,
    r: &[T],
    z: &mut [T],
) -> Result<T, Error> {
    match m_inverse {
        Some(m) => m.apply(r, z)?,
        None => z.copy_from_slice(r),
    }
    check_finite(z)?;
    Ok(dot_prefix(r, z))
}

fn solve<T: Real, A: LinearOperator<T>, P: LinearOperator<T>>(
    a: &mut A,
    mut m_inverse: Option<&mut P>,
    b: &[T],
    x: &mut [T],
    params: &ValidCgParams<T>,
    workspace: &mut [T],
    observe: &mut impl FnMut(usize, &[T]) -> Result<(), Error>,
) -> Result<CgOutcome<T>, Error> {
    let n = b.len();
    check_len(n, x.len())?;
    check_capacity(cg_workspace_len(n), workspace.len())?;
    check_finite(b)?;
    check_finite(x)?;
    let (r, rest) = workspace.split_at_mut(n);
    let (z, rest) = rest.split_at_mut(n);
    let (p, rest) = rest.split_at_mut(n);
    let q = rest.get_mut(..n).unwrap_or_default();
    let b_norm = dot_prefix(b, b).sqrt();
    if b_norm == T::ZERO {
        x.fill(T::ZERO);
        return Ok(CgOutcome { exit: Exit::Converged, iterations: 0, residual: T::ZERO });
    }
    // From x₀ = 0, r₀ = b without a product (an operator pass can cost a pass over data).
    if x.iter().all(|&v| v == T::ZERO) {
        r.copy_from_slice(b);
    } else {
        a.apply(x, q)?;
        check_finite(q)?;
        for ((r, &b), &q) in r.iter_mut().zip(b).zip(q.iter()) {
            *r = b - q;
        }
    }
    let mut rz = precondition(&mut m_inverse, r, z)?;
    p.copy_from_slice(z);
    let (tolerance, cap) = (params.0.tolerance, params.0.max_iterations);
    let mut residual = dot_prefix(r, r).sqrt() / b_norm;
    for iteration in 0..cap {
        if residual <= tolerance {
            return Ok(CgOutcome { exit: Exit::Converged, iterations: iteration, residual });
        }
        if rz <= T::ZERO {
            return Err(Error::Breakdown { step: iteration });
        }
        a.apply(p, q)?;
        check_finite(q)?;
        let curvature = dot_prefix(p, q);
        if curvature <= T::ZERO {
            return Err(Error::Breakdown { step: iteration });
        }
        let step = rz / curvature;
        axpy_prefix(step, p, x);
        observe(iteration + 1, x)?;
        axpy_prefix(-step, q, r);
        residual = dot_prefix(r, r).sqrt() / b_norm;
        let rz_next = precondition(&mut m_inverse, r, z)?;
        let ratio = rz_next / rz;
        rz = rz_next;
        for (p, &z) in p.iter_mut().zip(z.iter()) {
            *p = z + ratio * *p;
        }
    }
    let exit = if residual <= tolerance { Exit::Converged } else { Exit::Capped };
    Ok(CgOutcome { exit, iterations: cap, residual })
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::*;
    use crate::Rng;
    use nalgebra::{DMatrix, DVector};
    use proptest::prelude::*;
    use std::vec;
    use std::vec::Vec;

    /// `BᵀB/n + shift·I`, symmetric positive definite with condition about `(4 + shift)/shift`.
    fn spd(n: usize, shift: f64, rng: &mut Rng) -> DMatrix<f64> {
        let b = DMatrix::from_fn(n, n, |_, _| rng.uniform_in(-1.0, 1.0));
        b.transpose() * &b / n as f64 + DMatrix::identity(n, n) * shift
    }

    fn cast<T: Real>(v: &[f64]) -> Vec<T> {
        v.iter().map(|&x| T::from_f64(x)).collect()
    }

    fn operator<T: Real>(a: &DMatrix<f64>) -> impl FnMut(&[T], &mut [T]) -> Result<(), Error> + use<T> {
        let n = a.nrows();
        let flat: Vec<T> = (0..n * n).map(|k| T::from_f64(a[(k / n, k % n)])).collect();
        move |x: &[T], y: &mut [T]| crate::linalg::gemv(&flat, n, n, x, y)
    }

    /// Plain and Jacobi-preconditioned CG against nalgebra's Cholesky solve, to `tol`
    /// relative; the preconditioned run needs fewer iterations on a badly scaled matrix.
    fn solutions_match_cholesky<T: Real>(tol: f64) {
        let mut rng = Rng::seed_from_u64(21);
        let n = 80;
        let base = spd(n, 0.05, &mut rng);
        // Rows and columns scaled over three decades: what a diagonal preconditioner undoes.
        let d = DVector::from_fn(n, |i, _| 10f64.powf(3.0 * i as f64 / n as f64));
        let a = DMatrix::from_fn(n, n, |i, j| base[(i, j)] * d[i] * d[j]);
        let b: Vec<f64> = (0..n).map(|_| rng.uniform_in(-1.0, 1.0)).collect();
        let exact = a.clone().cholesky().unwrap().solve(&DVector::from_column_slice(&b));
        let params = CgParams::<T>::new().tolerance(T::from_f64(tol)).check().unwrap();
        let mut workspace = vec![T::ZERO; cg_workspace_len(n)];
        let check = |x: &[T]| {
            let x = DVector::from_iterator(n, x.iter().map(|v| v.to_f64()));
            let error = (&x - &exact).norm() / exact.norm();
            // ‖x − x*‖/‖x*‖ ≤ κ·‖r‖/‖b‖; κ here is about 10⁸, so check the residual, and the
            // error to the precision the scalar carries.
            let residual = (&a * &x - DVector::from_column_slice(&b)).norm() / DVector::from_column_slice(&b).norm();
            assert!(residual <= 10.0 * tol, "residual {residual}");
            error
        };
        let mut plain = vec![T::ZERO; n];
        let outcome = conjugate_gradient(&mut operator::<T>(&a), &cast::<T>(&b), &mut plain, &params, &mut workspace);
        let plain_outcome = outcome.unwrap();
        let diagonal: Vec<T> = (0..n).map(|i| T::from_f64(1.0 / a[(i, i)])).collect();
        let mut jacobi = |r: &[T], z: &mut [T]| {
            for ((z, &r), &d) in z.iter_mut().zip(r).zip(&diagonal) {
                *z = r * d;
            }
            Ok(())
        };
        let mut preconditioned = vec![T::ZERO; n];
        let b_t = cast::<T>(&b);
        let outcome = preconditioned_conjugate_gradient(
            &mut operator::<T>(&a),
            &mut jacobi,
            &b_t,
            &mut preconditioned,
            &params,
            &mut workspace,
        )
        .unwrap();
        assert_eq!(outcome.exit, Exit::Converged);
        assert!(outcome.residual.to_f64() <= tol);
        assert!(outcome.iterations < plain_outcome.iterations, "{outcome:?} vs {plain_outcome:?}");
        let error = check(&preconditioned);
        if plain_outcome.exit == Exit::Converged {
            check(&plain);
        }
        if T::BYTES == 8 {
            assert!(error <= 1e-3, "error {error}");
        }
        // A well-conditioned system: the error itself is tight.
        let a = spd(n, 1.0, &mut rng);
        let exact = a.clone().cholesky().unwrap().solve(&DVector::from_column_slice(&b));
        let mut x = vec![T::ZERO; n];
        let outcome = conjugate_gradient(&mut operator::<T>(&a), &b_t, &mut x, &params, &mut workspace).unwrap();
        assert_eq!(outcome.exit, Exit::Converged);
        let x = DVector::from_iterator(n, x.iter().map(|v| v.to_f64()));
        assert!((&x - &exact).norm() <= 10.0 * tol * exact.norm(), "{}", (&x - &exact).norm());
    }

    /// The exact inverse as preconditioner converges in one iteration, one product with `A`
    /// from `x₀ = 0`; a warm start at the solution in none, after the residual's product.
    fn exact_preconditioner_takes_one_step<T: Real>() {
        let mut rng = Rng::seed_from_u64(22);
        let n = 12;
        let a = spd(n, 0.5, &mut rng);
        let inverse = a.clone().try_inverse().unwrap();
        let b: Vec<f64> = (0..n).map(|_| rng.uniform_in(-1.0, 1.0)).collect();
        let params = CgParams::<T>::new().check().unwrap();
        let mut workspace = vec![T::ZERO; cg_workspace_len(n)];
        let mut x = vec![T::ZERO; n];
        let b_t = cast::<T>(&b);
        let mut products = 0;
        let mut dense = operator::<T>(&a);
        let mut counted = |x: &[T], y: &mut [T]| {
            products += 1;
            dense(x, y)
        };
        let mut inverse = operator::<T>(&inverse);
        let outcome =
            preconditioned_conjugate_gradient(&mut counted, &mut inverse, &b_t, &mut x, &params, &mut workspace)
                .unwrap();
        assert_eq!((outcome.exit, outcome.iterations), (Exit::Converged, 1));
        let outcome = conjugate_gradient(&mut counted, &b_t, &mut x, &params, &mut workspace).unwrap();
        assert_eq!((outcome.exit, outcome.iterations), (Exit::Converged, 0));
        assert_eq!(products, 2);
    }

    fn bad_input_is_an_error<T: Real>() {
        let mut rng = Rng::seed_from_u64(23);
        let n = 10;
        let a = spd(n, 0.01, &mut rng);
        let b = cast::<T>(&[1.0; 10]);
        let mut workspace = vec![T::ZERO; cg_workspace_len(n)];
        let params = CgParams::<T>::new().check().unwrap();
        let mut x = vec![T::ZERO; n];
        // Indefinite: −I.
        let mut negative = |x: &[T], y: &mut [T]| {
            for (y, &x) in y.iter_mut().zip(x) {
                *y = -x;
            }
            Ok(())
        };
        assert_eq!(
            conjugate_gradient(&mut negative, &b, &mut x, &params, &mut workspace),
            Err(Error::Breakdown { step: 0 })
        );
        let result = preconditioned_conjugate_gradient(
            &mut operator::<T>(&a),
            &mut negative,
            &b,
            &mut x,
            &params,
            &mut workspace,
        );
        assert_eq!(result, Err(Error::Breakdown { step: 0 }));
        let mut nan_b = b.clone();
        nan_b[3] = T::from_f64(f64::NAN);
        assert_eq!(
            conjugate_gradient(&mut operator::<T>(&a), &nan_b, &mut x, &params, &mut workspace),
            Err(Error::NonFinite)
        );
        let mut short = vec![T::ZERO; n - 1];
        let mismatch = conjugate_gradient(&mut operator::<T>(&a), &b, &mut short, &params, &mut workspace);
        assert!(matches!(mismatch, Err(Error::DimensionMismatch { .. })));
        let capacity = conjugate_gradient(&mut operator::<T>(&a), &b, &mut x, &params, &mut workspace[1..]);
        assert!(matches!(capacity, Err(Error::CapacityExceeded { .. })));
        // The cap: an outcome holding the last iterate, not an error.
        let capped = CgParams::<T>::new().max_iterations(2).tolerance(T::from_f64(1e-30)).check().unwrap();
        x.fill(T::ZERO);
        let outcome = conjugate_gradient(&mut operator::<T>(&a), &b, &mut x, &capped, &mut workspace).unwrap();
        assert_eq!((outcome.exit, outcome.iterations), (Exit::Capped, 2));
        assert!(outcome.residual > T::ZERO && outcome.residual < T::ONE && x.iter().any(|&v| v != T::ZERO));
        // b = 0: x = 0 without a product.
        let mut never = |_: &[T], _: &mut [T]| Err(Error::Singular { pivot: 0 });
        let outcome = conjugate_gradient(&mut never, &vec![T::ZERO; n], &mut x, &params, &mut workspace).unwrap();
        assert_eq!((outcome.iterations, x.iter().all(|&v| v == T::ZERO)), (0, true));
        assert_eq!(
            conjugate_gradient(&mut never, &b, &mut x, &params, &mut workspace),
            Err(Error::Singular { pivot: 0 })
        );
        assert_eq!(CgParams::<T>::new().max_iterations(0).check(), Err(Error::InvalidParam { name: "max_iterations" }));
        assert_eq!(CgParams::<T>::new().tolerance(T::ZERO).check(), Err(Error::InvalidParam { name: "tolerance" }));
    }

    /// Each observed iterate `x_s` of CG on `ZᵀZx = Zᵀy` from 0 is the least-squares fit
    /// restricted to the Krylov space `span{b, Ab, …, A^{s−1}b}` (partial least squares with
    /// `s` components): against nalgebra's SVD least squares on that basis (measured: 5e-10
    /// in f64, the monomial basis's own conditioning at `s = 5`; 1e-7 in f32). An observer's
    /// error ends the solve with that error.
    fn observed_iterates_are_krylov_least_squares<T: Real>() {
        let tol = if T::BYTES == 4 { 1e-6 } else { 1e-8 };
        let mut rng = Rng::seed_from_u64(5);
        let (n, m) = (60, 12);
        let z = DMatrix::from_fn(n, m, |_, _| rng.uniform_in(-1.0, 1.0));
        let y = DVector::from_fn(n, |_, _| rng.uniform_in(-1.0, 1.0));
        let (a, b) = (z.transpose() * &z, z.transpose() * &y);
        let mut seen: Vec<(usize, Vec<f64>)> = Vec::new();
        let params = CgParams::<T>::new().tolerance(T::from_f64(1e-30)).max_iterations(5).check().unwrap();
        let mut x = vec![T::ZERO; m];
        let mut workspace = vec![T::ZERO; cg_workspace_len(m)];
        let mut record = |s: usize, x: &[T]| {
            seen.push((s, x.iter().map(|v| v.to_f64()).collect()));
            Ok(())
        };
        let b_t = cast::<T>(b.as_slice());
        conjugate_gradient_observed(&mut operator::<T>(&a), &b_t, &mut x, &params, &mut workspace, &mut record)
            .unwrap();
        assert_eq!(seen.iter().map(|(s, _)| *s).collect::<Vec<_>>(), vec![1, 2, 3, 4, 5]);
        for (s, iterate) in &seen {
            let mut basis = DMatrix::zeros(m, *s);
            let mut power = b.clone();
            for j in 0..*s {
                basis.set_column(j, &power);
                power = &a * &power;
            }
            let coefficients = (&z * &basis).svd(true, true).solve(&y, 1e-14).unwrap();
            let expected = &basis * coefficients;
            let error = (DVector::from_column_slice(iterate) - &expected).norm() / expected.norm();
            assert!(error <= tol, "{s} components: relative error {error}");
        }
        let mut refuse = |s: usize, _: &[T]| if s == 2 { Err(Error::NonFinite) } else { Ok(()) };
        x.fill(T::ZERO);
        let ended =
            conjugate_gradient_observed(&mut operator::<T>(&a), &b_t, &mut x, &params, &mut workspace, &mut refuse);
        assert_eq!(ended, Err(Error::NonFinite));
    }

    macro_rules! gen_tests {
        ($($scalar:ident: $tol:expr),*) => {$(
            mod $scalar {
                #[test]
                fn observed_iterates_are_krylov_least_squares() {
                    super::observed_iterates_are_krylov_least_squares::<$scalar>();
                }
                #[test]
                fn solutions_match_cholesky() {
                    super::solutions_match_cholesky::<$scalar>($tol);
                }
                #[test]
                fn exact_preconditioner_takes_one_step() {
                    super::exact_preconditioner_takes_one_step::<$scalar>();
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
        /// Any symmetric positive-definite system: CG's solution is the Cholesky solution.
        #[test]
        fn solution_equals_cholesky(n in 1usize..20, shift in 0.05f64..2.0, seed in 0u64..1000) {
            let mut rng = Rng::seed_from_u64(seed);
            let a = spd(n, shift, &mut rng);
            let b: Vec<f64> = (0..n).map(|_| rng.uniform_in(-1.0, 1.0)).collect();
            let exact = a.clone().cholesky().unwrap().solve(&DVector::from_column_slice(&b));
            let params = CgParams::<f64>::new().tolerance(1e-13).check().unwrap();
            let mut x = vec![0.0; n];
            let outcome = conjugate_gradient(&mut operator::<f64>(&a), &b, &mut x, &params, &mut vec![0.0; cg_workspace_len(n)]).unwrap();
            prop_assert_eq!(outcome.exit, Exit::Converged);
            let x = DVector::from_column_slice(&x);
            prop_assert!((&x - &exact).norm() <= 1e-10 * exact.norm().max(1e-300));
        }
    }
}
