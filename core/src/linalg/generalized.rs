//! The generalized symmetric-definite eigenproblem `A v = λ B v` (`A` symmetric, `B`
//! symmetric positive definite) by reduction to standard form (Golub & Van Loan,
//! *Matrix Computations*, §8.7.2; LAPACK `sygst` with `itype = 1`):
//!
//! 1. factor `B = L Lᵀ` ([`Cholesky`]);
//! 2. form `C = L⁻¹ A L⁻ᵀ` — symmetric, with the eigenvalues of the pencil `(A, B)`;
//! 3. decompose `C = W Λ Wᵀ` with the one symmetric eigensolver, [`symmetric_eigen`];
//! 4. back-transform `V = L⁻ᵀ W`.
//!
//! The eigenvectors come out **B-orthonormal**, `VᵀBV = I` — the normalisation kernel
//! methods need: with `B` a kernel matrix `K(Ã, Ã)` and `w = Σ_j v_j φ(ã_j)`,
//! `vᵀBv = ‖w‖² = 1` is a unit direction in feature space.
//!
//! All three products run in place on the row-major `a`: `L⁻¹` applied to every row (a
//! column of the symmetric `A`) gives `A L⁻ᵀ`; a square transpose and a second pass give
//! `L⁻¹ A L⁻ᵀ`. `V` is formed the same way on the transpose of `W`.
//!
//! Cost: `m³/3` for the factor, `2m³` for `C`, `≈ 9m³` for the standard problem, `m³` for
//! `V`. Accuracy: eigenvalues to a small multiple of `ε·‖A‖·‖B⁻¹‖` — well-conditioned
//! `B` matters; a kernel matrix should carry a small ridge. Memory: caller storage only,
//! the `m × m` `a` (overwritten), `m` eigenvalues, `m × m` eigenvectors and the factor's
//! [`Cholesky::scalars_len`]`(m)` scalars.

use crate::cholesky::Cholesky;
use crate::error::check_len;
use crate::linalg::{
    DENSE_UP_TO, Triangle, gemv, leading_pairs, leading_pairs_first_run_len, solve_lower, solve_lower_transposed,
    symmetric_eigen,
};
use crate::real::check_finite;
use crate::{Error, Real};

/// Solves `A v = λ B v` for the symmetric `m × m` `a` and symmetric positive-definite
/// `b` (row-major; lower triangles read). Eigenvalues go to `values` in decreasing order,
/// the B-orthonormal eigenvectors to the columns of `vectors` (vector `k` at
/// `vectors[i·m + k]`, as [`symmetric_eigen`]); `factor` (at least
/// [`Cholesky::scalars_len`]`(m)` scalars) is working storage and ends holding `B`'s
/// packed Cholesky factor. `a` is overwritten, `b` is only read. Returns the QL iterations.
///
/// # Errors
/// `DimensionMismatch` for slices of the wrong length; `CapacityExceeded` when `factor` is
/// short; `NonFinite` for NaN or ±∞ in `a` or `b`; `NotPositiveDefinite { pivot }` when
/// `b` is not (numerically) positive definite — in these cases `a`, `values` and `vectors`
/// are untouched. `NotConverged` from the standard eigensolver.
///
/// # Examples
/// ```
/// use kestrel_core::{Cholesky, linalg::generalized_symmetric_eigen};
/// // A = diag(2, 3), B = diag(1, 2): λ = 2 and 1.5.
/// let mut a = [2.0f64, 0.0, 0.0, 3.0];
/// let b = [1.0, 0.0, 0.0, 2.0];
/// let (mut values, mut vectors) = ([0.0; 2], [0.0; 4]);
/// let mut factor = [0.0; Cholesky::scalars_len(2)];
/// generalized_symmetric_eigen(&mut a, &b, 2, &mut values, &mut vectors, &mut factor)?;
/// assert!((values[0] - 2.0).abs() < 1e-15 && (values[1] - 1.5).abs() < 1e-15);
/// // B-orthonormal: the second vector is ±(0, 1/√2).
/// assert!((vectors[3].abs() - 0.5f64.sqrt()).abs() < 1e-15);
/// # Ok::<(), kestrel_core::Error>(())
/// ```
pub fn generalized_symmetric_eigen<T: Real>(
    a: &mut [T],
    b: &[T],
    m: usize,
    values: &mut [T],
    vectors: &mut [T],
    factor: &mut [T],
) -> Result<usize, Error> {
    check_len(m, values.len())?;
    let chol = checked_factor(a, b, m, vectors, factor)?;
    let l = chol.packed();
    for _ in 0..2 {
        for row in a.chunks_exact_mut(m) {
            solve_lower(l, m, Triangle::Packed, row)?;
        }
        transpose(a, m);
    }
    let iterations = symmetric_eigen(a, m, values, vectors)?;
    transpose(vectors, m);
    for row in vectors.chunks_exact_mut(m) {
        solve_lower_transposed(l, m, Triangle::Packed, row)?;
    }
    transpose(vectors, m);
    Ok(iterations)
}

/// The `k` leading pairs of `A v = λ B v`, in the storage of [`generalized_symmetric_eigen`]
/// and with its results for them: the `k` largest eigenvalues in `values[..k]` (the rest
/// set to 0), their B-orthonormal eigenvectors in the first `k` columns of `vectors` (the
/// other columns 0). Past [`DENSE_UP_TO`] rows, and when `vectors` holds the first run,
/// they come from [`leading_pairs`] on `C = L⁻¹AL⁻ᵀ` applied as `L⁻¹(A(L⁻ᵀx))` — two
/// triangular solves and a product, `3m²` a step, `O(s·m²)` for `s` steps against
/// `≈ 12m³` — and `V = L⁻ᵀW`; otherwise, or when Lanczos does not converge in the steps
/// `vectors` holds or its Krylov space closes early (a low-rank `A`), from the whole
/// decomposition. `a` is overwritten.
///
/// # Errors
/// As [`generalized_symmetric_eigen`]; `InvalidParam { name: "k" }` for `k = 0` or
/// `k > m`.
pub(crate) fn generalized_leading_eigen<T: Real>(
    a: &mut [T],
    b: &[T],
    m: usize,
    k: usize,
    values: &mut [T],
    vectors: &mut [T],
    factor: &mut [T],
) -> Result<(), Error> {
    if k == 0 || k > m {
        return Err(Error::InvalidParam { name: "k" });
    }
    let lanczos = m > DENSE_UP_TO && vectors.len() >= leading_pairs_first_run_len(m, k) && values.len() == m;
    if !(lanczos && leading_by_lanczos(a, b, m, k, values, vectors, factor)?) {
        generalized_symmetric_eigen(a, b, m, values, vectors, factor)?;
    }
    values.iter_mut().skip(k).for_each(|x| *x = T::ZERO);
    for row in vectors.chunks_exact_mut(m) {
        row.iter_mut().skip(k).for_each(|x| *x = T::ZERO);
    }
    Ok(())
}

/// [`generalized_leading_eigen`]'s Lanczos path; `false` (nothing written but `factor`
/// and `vectors`' scratch) when Lanczos did not converge or broke down.
fn leading_by_lanczos<T: Real>(
    a: &mut [T],
    b: &[T],
    m: usize,
    k: usize,
    values: &mut [T],
    vectors: &mut [T],
    factor: &mut [T],
) -> Result<bool, Error> {
    let chol = checked_factor(a, b, m, vectors, factor)?;
    let l = chol.packed();
    let scratch = &mut *values;
    let mut operator = |x: &[T], y: &mut [T]| {
        scratch.copy_from_slice(x);
        solve_lower_transposed(l, m, Triangle::Packed, scratch)?;
        gemv(a, m, m, scratch, y)?;
        solve_lower(l, m, Triangle::Packed, y)
    };
    match leading_pairs(&mut operator, m, k, vectors) {
        Ok(None) => {}
        Ok(Some(_)) | Err(Error::Breakdown { .. }) => return Ok(false),
        Err(e) => return Err(e),
    }
    let (ritz_values, rest) = vectors.split_at(k);
    values.get_mut(..k).unwrap_or_default().copy_from_slice(ritz_values);
    let w = a.get_mut(..k * m).unwrap_or_default();
    w.copy_from_slice(rest.get(..k * m).unwrap_or_default());
    vectors.fill(T::ZERO);
    for (c, v) in w.chunks_exact_mut(m).enumerate() {
        solve_lower_transposed(l, m, Triangle::Packed, v)?;
        for (row, &x) in vectors.chunks_exact_mut(m).zip(v.iter()) {
            if let Some(slot) = row.get_mut(c) {
                *slot = x;
            }
        }
    }
    Ok(true)
}

/// The pencil's checks — `a` and `vectors` of `m × m`, `a` finite — and `B = LLᵀ` in
/// `factor`.
fn checked_factor<'f, T: Real>(
    a: &[T],
    b: &[T],
    m: usize,
    vectors: &[T],
    factor: &'f mut [T],
) -> Result<Cholesky<T, &'f mut [T]>, Error> {
    let len = m.checked_mul(m).ok_or(Error::InvalidParam { name: "m" })?;
    check_len(len, a.len())?;
    check_len(len, vectors.len())?;
    check_finite(a)?;
    Cholesky::from_matrix_in(factor, m, b, m)
}

/// Transposes the square row-major `m × m` matrix `x` in place.
pub(crate) fn transpose<T: Real>(x: &mut [T], m: usize) {
    for i in 0..m {
        for j in 0..i {
            x.swap(i * m + j, j * m + i);
        }
    }
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::*;
    use crate::Rng;
    use nalgebra::{DMatrix, SymmetricEigen};
    use std::vec;
    use std::vec::Vec;

    /// A random symmetric `A` and an SPD `B = GGᵀ + I/10`.
    fn pencil(m: usize, rng: &mut Rng) -> (DMatrix<f64>, DMatrix<f64>) {
        let x = DMatrix::from_fn(m, m, |_, _| rng.uniform_in(-1.0, 1.0));
        let g = DMatrix::from_fn(m, m, |_, _| rng.uniform_in(-1.0, 1.0));
        (&x + x.transpose(), &g * g.transpose() + DMatrix::identity(m, m) * 0.1)
    }

    fn flat<T: Real>(x: &DMatrix<f64>) -> Vec<T> {
        let m = x.nrows();
        (0..m * m).map(|k| T::from_f64(x[(k / m, k % m)])).collect()
    }

    /// Eigenvalues against nalgebra's on `L⁻¹AL⁻ᵀ` (its own Cholesky), `AV = BVΛ` and
    /// `VᵀBV = I`, to `tol` relative to the pencil's scale.
    fn check<T: Real>(a: &DMatrix<f64>, b: &DMatrix<f64>, tol: f64) {
        let m = a.nrows();
        let (mut values, mut vectors) = (vec![T::ZERO; m], vec![T::ZERO; m * m]);
        let mut factor = vec![T::ZERO; Cholesky::scalars_len(m)];
        generalized_symmetric_eigen(&mut flat::<T>(a), &flat::<T>(b), m, &mut values, &mut vectors, &mut factor)
            .unwrap();
        let l = b.clone().cholesky().unwrap().l();
        let l_inv = l.clone().try_inverse().unwrap();
        let c = &l_inv * a * l_inv.transpose();
        let mut reference: Vec<f64> = SymmetricEigen::new(c.clone()).eigenvalues.iter().copied().collect();
        reference.sort_by(|x, y| y.total_cmp(x));
        let scale = c.norm();
        let values: Vec<f64> = values.iter().map(|x| x.to_f64()).collect();
        for (k, (x, r)) in values.iter().zip(&reference).enumerate() {
            assert!((x - r).abs() <= tol * scale, "λ_{k}: {x} vs {r}");
        }
        let v = DMatrix::from_fn(m, m, |i, k| vectors[i * m + k].to_f64());
        let lambda = DMatrix::from_diagonal(&nalgebra::DVector::from_vec(values));
        let residual = (a * &v - b * &v * lambda).norm();
        assert!(residual <= tol * scale * b.norm() * v.norm() * m as f64, "AV ≠ BVΛ: {residual}");
        let gram = v.transpose() * b * &v - DMatrix::identity(m, m);
        assert!(gram.norm() <= tol * m as f64 * b.norm() * l_inv.norm(), "VᵀBV ≠ I: {}", gram.norm());
    }

    #[test]
    fn random_pencils_match_nalgebra() {
        let mut rng = Rng::seed_from_u64(11);
        for m in [1, 2, 3, 8, 25, 60] {
            let (a, b) = pencil(m, &mut rng);
            check::<f64>(&a, &b, 1e-12);
            check::<f32>(&a, &b, 5e-5);
        }
    }

    /// A pencil like reduced KPCA's past [`DENSE_UP_TO`]: `A = QDQᵀ` with eigenvalues
    /// `10·0.8^i` and random eigenvectors, `B = GGᵀ/m + I`.
    fn decaying_pencil(m: usize, rng: &mut Rng) -> (DMatrix<f64>, DMatrix<f64>) {
        let x = DMatrix::from_fn(m, m, |_, _| rng.uniform_in(-1.0, 1.0));
        let q = x.qr().q();
        let d = DMatrix::from_diagonal(&nalgebra::DVector::from_fn(m, |i, _| 10.0 * 0.8f64.powi(i as i32)));
        let g = DMatrix::from_fn(m, m, |_, _| rng.uniform_in(-1.0, 1.0));
        (&q * d * q.transpose(), &g * g.transpose() / m as f64 + DMatrix::identity(m, m))
    }

    /// Past [`DENSE_UP_TO`] rows the `k` leading pairs come from Lanczos on `L⁻¹AL⁻ᵀ`, and
    /// they are the whole decomposition's: eigenvalues to `tol·λ₁`, B-orthonormal
    /// eigenvectors to `tol·√m` up to sign; the other entries are 0. A rank-one `A`, whose
    /// Krylov space closes after one step, gives the whole decomposition's two leading
    /// eigenvalues too (`λ₁` and 0).
    fn leading_pairs_match_the_whole_decomposition<T: Real>(tol: f64) {
        let (m, k) = (240, 3);
        let (a, b) = decaying_pencil(m, &mut Rng::seed_from_u64(13));
        let (mut whole, mut whole_vectors) = (vec![T::ZERO; m], vec![T::ZERO; m * m]);
        let mut factor = vec![T::ZERO; Cholesky::scalars_len(m)];
        generalized_symmetric_eigen(&mut flat::<T>(&a), &flat(&b), m, &mut whole, &mut whole_vectors, &mut factor)
            .unwrap();
        let (mut values, mut vectors) = (vec![T::ZERO; m], vec![T::ZERO; m * m]);
        let by_lanczos = leading_by_lanczos(&mut flat(&a), &flat(&b), m, k, &mut values, &mut vectors, &mut factor);
        assert_eq!(by_lanczos, Ok(true), "Lanczos converges here");
        generalized_leading_eigen(&mut flat(&a), &flat(&b), m, k, &mut values, &mut vectors, &mut factor).unwrap();
        for c in 0..k {
            let (x, r) = (values[c].to_f64(), whole[c].to_f64());
            assert!((x - r).abs() <= tol * whole[0].to_f64(), "λ_{c}: {x} vs {r}");
            let column = |v: &[T]| (0..m).map(|i| v[i * m + c].to_f64()).collect::<Vec<_>>();
            let (ours, theirs) = (column(&vectors), column(&whole_vectors));
            let gap = |sign: f64| ours.iter().zip(&theirs).map(|(x, y)| (x - sign * y).powi(2)).sum::<f64>().sqrt();
            assert!(gap(1.0).min(gap(-1.0)) <= tol * (m as f64).sqrt(), "vector {c}");
        }
        assert!(values[k..].iter().all(|&x| x == T::ZERO));
        assert!(vectors.chunks_exact(m).all(|row| row[k..].iter().all(|&x| x == T::ZERO)));
        let u = DMatrix::from_fn(m, 1, |i, _| 1.0 + (i % 7) as f64);
        let rank_one = &u * u.transpose();
        let mut rank_one_whole = vec![T::ZERO; m];
        generalized_symmetric_eigen(
            &mut flat::<T>(&rank_one),
            &flat(&b),
            m,
            &mut rank_one_whole,
            &mut vectors,
            &mut factor,
        )
        .unwrap();
        generalized_leading_eigen(&mut flat(&rank_one), &flat(&b), m, 2, &mut values, &mut vectors, &mut factor)
            .unwrap();
        let scale = rank_one_whole[0].to_f64();
        for (x, r) in values[..2].iter().zip(&rank_one_whole[..2]) {
            assert!((x.to_f64() - r.to_f64()).abs() <= tol * scale, "rank one: {x} vs {r}");
        }
    }

    #[test]
    fn leading_pairs_match_the_whole_decomposition_f64() {
        leading_pairs_match_the_whole_decomposition::<f64>(1e-9);
    }

    #[test]
    fn leading_pairs_match_the_whole_decomposition_f32() {
        leading_pairs_match_the_whole_decomposition::<f32>(2e-3);
    }

    #[test]
    fn identity_b_gives_the_standard_problem() {
        let mut rng = Rng::seed_from_u64(12);
        let (a, _) = pencil(9, &mut rng);
        let mut values = [0.0; 9];
        let mut vectors = [0.0; 81];
        let mut factor = [0.0; Cholesky::scalars_len(9)];
        let identity = flat::<f64>(&DMatrix::identity(9, 9));
        generalized_symmetric_eigen(&mut flat(&a), &identity, 9, &mut values, &mut vectors, &mut factor).unwrap();
        let (mut standard, mut standard_vectors) = ([0.0; 9], [0.0; 81]);
        symmetric_eigen(&mut flat(&a), 9, &mut standard, &mut standard_vectors).unwrap();
        assert_eq!(values, standard);
        assert_eq!(vectors, standard_vectors);
    }

    #[test]
    fn rejected_calls_write_nothing() {
        let mut a = [1.0, 0.5, 0.5, 1.0];
        let (mut values, mut vectors, mut factor) = ([7.0; 2], [7.0; 4], [0.0; Cholesky::scalars_len(2)]);
        let indefinite = [1.0, 2.0, 2.0, 1.0];
        let result = generalized_symmetric_eigen(&mut a, &indefinite, 2, &mut values, &mut vectors, &mut factor);
        assert_eq!(result, Err(Error::NotPositiveDefinite { pivot: 1 }));
        assert_eq!((a, values, vectors), ([1.0, 0.5, 0.5, 1.0], [7.0; 2], [7.0; 4]));
        let nan = [1.0, f64::NAN, f64::NAN, 1.0];
        assert_eq!(
            generalized_symmetric_eigen(&mut a, &nan, 2, &mut values, &mut vectors, &mut factor),
            Err(Error::NonFinite)
        );
        let b = [1.0, 0.0, 0.0, 1.0];
        let short = &mut [0.0; 3];
        assert!(matches!(
            generalized_symmetric_eigen(&mut a, &b, 2, &mut values, &mut vectors, short),
            Err(Error::CapacityExceeded { .. })
        ));
        assert!(generalized_symmetric_eigen(&mut a, &b, 2, &mut values, &mut [0.0; 3], &mut factor).is_err());
        assert_eq!((a, values), ([1.0, 0.5, 0.5, 1.0], [7.0; 2]));
    }
}
