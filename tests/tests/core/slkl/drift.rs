//! Issue 3 item 4: in `f32`, after 10⁵ coordinate steps on the sinc task, the maintained
//! factor of `D⁻¹ + CᵀC/λ` matches a fresh dense factorization to relative error < 10⁻³,
//! and the final `F` is within 10⁻⁴ (relative) of the `f64` run with the same seed.
//!
//! The drift check is disabled (tolerance 10⁶) so that the factor is the product of 10⁵
//! Givens-rotation updates alone; no refactorization may happen. Shrinking is off so both
//! runs draw the same coordinates.

use kestrel_core::Real;
use kestrel_core::slkl::{Candidates, Dims, Params, Slkl};
use kestrel_tests::{Regression, relative_error, sinc_task};

use super::{dense_of, factor_of, learner, weights};

const STEPS: usize = 100_000;

fn long_run<T: Real>(task: &Regression<T>) -> (f64, f64, f64, usize) {
    let dims = Dims::new(1000, 2, 1000, 400).precomputed();
    let params = Params::new()
        .nu(T::from_f64(0.01))
        .shrinking(false)
        .drift_tolerance(T::from_f64(1e6))
        .seed(2011)
        .check()
        .unwrap();
    let mut slkl: Slkl<'_, T, _, _> = learner(task, dims, params, Candidates::Random);
    for _ in 0..STEPS {
        slkl.step().unwrap();
    }
    assert_eq!(slkl.stats().refactorizations, 0);
    let dense = dense_of(&slkl, task, &params);
    let mu = weights(&slkl);
    let k = slkl.active_len();
    let h = dense.h_matrix(&mu, slkl.active());
    let (llt, l) = factor_of(slkl.factor_packed(), k);
    let fresh = h.clone().cholesky().expect("H is SPD").l();
    let objective = slkl.objective().to_f64();
    let dense_objective = dense.objective(&mu);
    eprintln!(
        "{}: {STEPS} steps, m0 = {k}, ‖LLᵀ − H‖/‖H‖ = {:.2e}, ‖L − L_fresh‖/‖L_fresh‖ = {:.2e}, \
         F = {objective:.8} (dense {dense_objective:.8}), stats {:?}",
        core::any::type_name::<T>(),
        relative_error(&llt, &h),
        relative_error(&l, &fresh),
        slkl.stats()
    );
    assert!((objective - dense_objective).abs() <= 1e-4 * dense_objective);
    (relative_error(&llt, &h), relative_error(&l, &fresh), objective, k)
}

#[test]
fn f32_factor_stays_accurate_over_1e5_steps_and_matches_the_f64_run() {
    let (llt32, l32, f32_objective, _) = long_run(&sinc_task::<f32>(2011, 1000, 0));
    assert!(llt32 < 1e-3 && l32 < 1e-3, "{llt32:.2e} {l32:.2e}");
    let (llt64, l64, f64_objective, _) = long_run(&sinc_task::<f64>(2011, 1000, 0));
    assert!(llt64 < 1e-10 && l64 < 1e-10, "{llt64:.2e} {l64:.2e}");
    let gap = (f32_objective - f64_objective).abs() / f64_objective;
    eprintln!("F f32 {f32_objective:.8}, f64 {f64_objective:.8}, relative gap {gap:.2e}");
    assert!(gap < 1e-4, "{gap:.2e}");
}
