//! Property tests: each Cholesky operation equals a fresh nalgebra factorization of the
//! matrix it should represent, for random sizes and matrices, in `f64` and `f32`.

use kestrel_core::cholesky::Cholesky;
use kestrel_core::{Real, Rng};
use kestrel_tests::{lower_factor, random_spd, relative_error};
use nalgebra::{DMatrix, DVector};
use proptest::prelude::*;

fn to_scalars<T: Real>(m: &DMatrix<f64>) -> Vec<T> {
    m.iter().map(|&v| T::from_f64(v)).collect()
}

fn rounded<T: Real>(m: &DMatrix<f64>) -> DMatrix<f64> {
    m.map(|v| T::from_f64(v).to_f64())
}

/// Factor of `a` (symmetric) in a factor of capacity `capacity`.
fn factor<T: Real>(a: &DMatrix<f64>, capacity: usize) -> Cholesky<T, Vec<T>> {
    let n = a.nrows();
    Cholesky::from_matrix_in(vec![T::ZERO; Cholesky::scalars_len(capacity)], capacity, &to_scalars::<T>(a), n).unwrap()
}

/// `‖L − L_ref‖/‖L_ref‖` where `L_ref` is nalgebra's factor of `a`.
fn factor_error<T: Real>(chol: &Cholesky<T, Vec<T>>, a: &DMatrix<f64>) -> f64 {
    relative_error(&lower_factor(chol), &a.clone().cholesky().unwrap().l())
}

/// Tolerance for a well-conditioned (κ ≲ 10³) factor of size ≤ 24.
fn tolerance<T: Real>() -> f64 {
    1e4 * T::EPSILON.to_f64()
}

fn check_all<T: Real>(seed: u64, n: usize) -> Result<(), TestCaseError> {
    let mut rng = Rng::seed_from_u64(seed);
    let a = rounded::<T>(&random_spd(&mut rng, n + 1, 0.5));
    let tol = tolerance::<T>();

    // Full factorization and solve.
    let mut chol = factor::<T>(&a.view((0, 0), (n, n)).into_owned(), n + 1);
    prop_assert!(factor_error(&chol, &a.view((0, 0), (n, n)).into_owned()) < tol);
    let b = DVector::from_fn(n, |_, _| T::from_f64(rng.normal()).to_f64());
    let mut x: Vec<T> = b.iter().map(|&v| T::from_f64(v)).collect();
    chol.solve_in_place(&mut x).unwrap();
    let expected = a.view((0, 0), (n, n)).into_owned().cholesky().unwrap().solve(&b);
    let x = DVector::from_iterator(n, x.iter().map(|v| v.to_f64()));
    prop_assert!((&x - &expected).norm() <= tol * expected.norm().max(1.0));

    // Append the last row and column: equals the factor of all of `a`.
    let column: Vec<T> = a.column(n).iter().map(|&v| T::from_f64(v)).collect();
    chol.append_column(&column).unwrap();
    prop_assert!(factor_error(&chol, &a) < tol);

    // Rank-1 update, then downdate by the same vector.
    let v = rounded::<T>(&DMatrix::from_fn(n + 1, 1, |_, _| rng.normal::<f64>()));
    let vt: Vec<T> = v.iter().map(|&e| T::from_f64(e)).collect();
    chol.rank_one_update(&vt, T::from_f64(0.5)).unwrap();
    prop_assert!(factor_error(&chol, &(&a + &v * v.transpose() * 0.5)) < tol);
    chol.rank_one_update(&vt, -T::from_f64(0.5)).unwrap();
    prop_assert!(factor_error(&chol, &a) < tol);

    // Remove any row and column.
    let i = rng.below(n + 1);
    chol.remove_column(i).unwrap();
    let reduced = a.clone().remove_row(i).remove_column(i);
    prop_assert!(factor_error(&chol, &reduced) < tol);
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn operations_match_fresh_factorizations_f64(seed in any::<u64>(), n in 1usize..24) {
        check_all::<f64>(seed, n)?;
    }

    #[test]
    fn operations_match_fresh_factorizations_f32(seed in any::<u64>(), n in 1usize..24) {
        check_all::<f32>(seed, n)?;
    }
}
