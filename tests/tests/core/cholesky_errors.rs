//! Every error path of the updatable Cholesky, with the factor unchanged afterwards.

use kestrel_core::cholesky::Cholesky;
use kestrel_core::{Error, Real, Rng};
use kestrel_tests::random_spd;

fn snapshot<T: Real>(chol: &Cholesky<T, Vec<T>>) -> (usize, Vec<T>) {
    (chol.dim(), chol.packed().to_vec())
}

fn error_paths<T: Real>() {
    let mut rng = Rng::seed_from_u64(11);
    let n = 6;
    let a: Vec<T> = random_spd(&mut rng, n, 1.0).iter().map(|&v| T::from_f64(v)).collect();
    let mut chol = Cholesky::from_matrix_in(vec![T::ZERO; Cholesky::scalars_len(n)], n, &a, n).unwrap();
    let before = snapshot(&chol);
    let nan = T::from_f64(f64::NAN);
    let mut x = vec![T::ONE; n];

    // NaN input.
    x[3] = nan;
    assert_eq!(chol.rank_one_update(&x, T::ONE), Err(Error::NonFinite));
    assert_eq!(chol.rank_one_update(&x, -T::ONE), Err(Error::NonFinite));
    assert_eq!(chol.rank_one_update(&[T::ONE; 6], nan), Err(Error::NonFinite));
    assert_eq!(chol.solve_in_place(&mut x), Err(Error::NonFinite));
    // Wrong dimension.
    assert_eq!(chol.rank_one_update(&x[..5], T::ONE), Err(Error::DimensionMismatch { expected: 6, got: 5 }));
    assert_eq!(chol.solve_in_place(&mut x[..2]), Err(Error::DimensionMismatch { expected: 6, got: 2 }));
    assert_eq!(chol.append_column(&x[..3]), Err(Error::DimensionMismatch { expected: 7, got: 3 }));
    assert_eq!(chol.remove_column(6), Err(Error::IndexOutOfRange { index: 6, len: 6 }));
    // Over capacity.
    let column = vec![T::ZERO; n + 1];
    assert_eq!(chol.append_column(&column), Err(Error::CapacityExceeded { needed: 7, capacity: 6 }));
    // Not positive definite: a downdate by 2·(column 0 of L) removes more than A holds.
    let l0: Vec<T> = (0..n).map(|i| chol.get(i, 0).unwrap()).collect();
    assert_eq!(chol.rank_one_update(&l0, -T::from_f64(4.0)), Err(Error::NotPositiveDefinite { pivot: 0 }));
    assert_eq!(snapshot(&chol), before);

    // Not positive definite on append: a duplicate of row 0 has Schur complement 0.
    chol.remove_column(5).unwrap();
    let after_remove = snapshot(&chol);
    let duplicate: Vec<T> = (0..5).map(|j| a[j]).chain([a[0]]).collect();
    assert_eq!(chol.append_column(&duplicate), Err(Error::NotPositiveDefinite { pivot: 5 }));
    let mut nan_column = duplicate.clone();
    nan_column[5] = nan;
    assert_eq!(chol.append_column(&nan_column), Err(Error::NonFinite));
    assert_eq!(snapshot(&chol), after_remove);

    // Construction: too small a buffer, non-PD and NaN matrices.
    let r = Cholesky::<T, _>::new_in(vec![T::ZERO; Cholesky::scalars_len(n) - 1], n);
    assert_eq!(
        r.err(),
        Some(Error::CapacityExceeded { needed: Cholesky::scalars_len(n), capacity: Cholesky::scalars_len(n) - 1 })
    );
    let mut bad = a.clone();
    bad[n + 1] = -T::ONE; // A[1][1] = −1
    let r = Cholesky::from_matrix_in(vec![T::ZERO; Cholesky::scalars_len(n)], n, &bad, n);
    assert_eq!(r.err(), Some(Error::NotPositiveDefinite { pivot: 1 }));
    bad[n + 1] = nan;
    let r = Cholesky::from_matrix_in(vec![T::ZERO; Cholesky::scalars_len(n)], n, &bad, n);
    assert_eq!(r.err(), Some(Error::NonFinite));
}

#[test]
fn error_paths_leave_the_factor_unchanged_f64() {
    error_paths::<f64>();
}

#[test]
fn error_paths_leave_the_factor_unchanged_f32() {
    error_paths::<f32>();
}
