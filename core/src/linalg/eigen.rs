//! The symmetric eigendecomposition `A = V Λ Vᵀ` of a small dense matrix, by the cyclic
//! Jacobi method.
//!
//! Each step chooses an off-diagonal pair `(p, q)` and applies the plane rotation that
//! zeroes `a_pq` (Golub & Van Loan, *Matrix Computations*, §8.5: with
//! `θ = (a_qq − a_pp)/(2a_pq)`, `t = sign(θ)/(|θ| + √(θ² + 1))`, `c = 1/√(t² + 1)`,
//! `s = t·c`); a sweep visits every pair once, and the off-diagonal mass falls
//! quadratically once it is small. A pair is skipped when
//! `|a_pq| ≤ ε·√(|a_pp|·|a_qq|)` (the entry no longer changes the diagonal at working
//! precision, the rule that gives Jacobi its relative accuracy on positive definite
//! matrices) or `|a_pq| ≤ ε²·‖A‖_F` (it is below any rounding of the largest entries); the
//! decomposition has converged when a sweep rotates nothing.
//!
//! Jacobi is chosen over tridiagonal QR for its short, obviously correct code and its
//! accuracy on the ill-conditioned Gram matrices of the reduced kernel (the kernel ridge
//! path of [`crate::krr`] divides by `λ_k + λ` with `λ_k` down to rounding level). Cost:
//! about `6m³` flops per sweep and 6 to 10 sweeps; memory: the matrix itself (overwritten)
//! and the `m × m` eigenvectors, both caller storage.

use crate::error::check_len;
use crate::real::check_finite;
use crate::{Error, Real};

/// Sweeps after which [`symmetric_eigen`] gives up with [`Error::NotConverged`]; Jacobi
/// needs about ten on any matrix, so reaching this means the input defeated the rounding
/// rules (it cannot happen with finite input).
pub const MAX_SWEEPS: usize = 64;

/// Decomposes the symmetric `m × m` matrix `a` (row-major; its lower triangle is read, the
/// upper one is taken to mirror it) into eigenvalues, written to `values` in decreasing
/// order, and orthonormal eigenvectors, written as the columns of `vectors` (row-major
/// `m × m`: eigenvector `k` is `vectors[i·m + k]`, `i = 0..m`, as in nalgebra). `a` is
/// overwritten (its diagonal ends up holding the eigenvalues in the order they were found).
/// Returns the number of sweeps.
///
/// # Errors
/// `DimensionMismatch` for slices of the wrong length; `NonFinite` when `a` holds NaN or
/// ±∞ (then nothing was written); `NotConverged` after [`MAX_SWEEPS`] sweeps.
///
/// # Examples
/// ```
/// use kestrel_core::linalg::symmetric_eigen;
/// let mut a = [2.0f64, 1.0, 1.0, 2.0];
/// let (mut values, mut vectors) = ([0.0; 2], [0.0; 4]);
/// symmetric_eigen(&mut a, 2, &mut values, &mut vectors)?;
/// assert!((values[0] - 3.0).abs() < 1e-15 && (values[1] - 1.0).abs() < 1e-15);
/// let v0 = [vectors[0], vectors[2]]; // the first column
/// assert!((v0[0].abs() - 0.5f64.sqrt()).abs() < 1e-15 && (v0[0] - v0[1]).abs() < 1e-15);
/// # Ok::<(), kestrel_core::Error>(())
/// ```
pub fn symmetric_eigen<T: Real>(a: &mut [T], m: usize, values: &mut [T], vectors: &mut [T]) -> Result<usize, Error> {
    let len = m.checked_mul(m).ok_or(Error::InvalidParam { name: "m" })?;
    check_len(len, a.len())?;
    check_len(len, vectors.len())?;
    check_len(m, values.len())?;
    check_finite(a)?;
    mirror_lower(a, m);
    for (index, v) in vectors.iter_mut().enumerate() {
        *v = if index / m == index % m { T::ONE } else { T::ZERO };
    }
    let norm = a.iter().fold(T::ZERO, |acc, &x| acc + x * x).sqrt();
    let floor = T::EPSILON * T::EPSILON * norm;
    let mut sweeps = 0;
    loop {
        if sweeps == MAX_SWEEPS {
            return Err(Error::NotConverged { iterations: sweeps });
        }
        sweeps += 1;
        let mut rotated = false;
        for p in 0..m {
            for q in p + 1..m {
                rotated |= rotate(a, vectors, m, p, q, floor);
            }
        }
        if !rotated {
            break;
        }
    }
    for (k, value) in values.iter_mut().enumerate() {
        *value = a.get(k * m + k).copied().unwrap_or(T::ZERO);
    }
    sort_decreasing(values, vectors, m);
    Ok(sweeps)
}

/// Copies the lower triangle onto the upper one.
fn mirror_lower<T: Real>(a: &mut [T], m: usize) {
    for i in 0..m {
        for j in 0..i {
            let lower = a.get(i * m + j).copied().unwrap_or(T::ZERO);
            if let Some(upper) = a.get_mut(j * m + i) {
                *upper = lower;
            }
        }
    }
}

/// Zeroes `a_pq` (and `a_qp`) by a rotation of rows and columns `p`, `q`, accumulated into
/// `vectors`; `false` when the entry is already negligible (see the module docs).
fn rotate<T: Real>(a: &mut [T], vectors: &mut [T], m: usize, p: usize, q: usize, floor: T) -> bool {
    let at = |a: &[T], i: usize, j: usize| a.get(i * m + j).copied().unwrap_or(T::ZERO);
    let (app, aqq, apq) = (at(a, p, p), at(a, q, q), at(a, p, q));
    if apq.abs() <= floor || apq.abs() <= T::EPSILON * (app.abs() * aqq.abs()).sqrt() {
        return false;
    }
    let theta = (aqq - app) / (apq + apq);
    let t = theta.abs().hypot(T::ONE) + theta.abs();
    let t = if theta < T::ZERO { -T::ONE / t } else { T::ONE / t };
    let c = T::ONE / t.hypot(T::ONE);
    let s = t * c;
    // Columns p and q of A, then rows p and q (A ← JᵀAJ), then the eigenvectors (V ← VJ).
    rotate_columns(a, m, p, q, c, s);
    for j in 0..m {
        let (x, y) = (at(a, p, j), at(a, q, j));
        if let Some(slot) = a.get_mut(p * m + j) {
            *slot = c * x - s * y;
        }
        if let Some(slot) = a.get_mut(q * m + j) {
            *slot = s * x + c * y;
        }
    }
    rotate_columns(vectors, m, p, q, c, s);
    // The exact values of the rotated pair, free of the rounding of the updates above.
    for (i, j, value) in [(p, p, app - t * apq), (q, q, aqq + t * apq), (p, q, T::ZERO), (q, p, T::ZERO)] {
        if let Some(slot) = a.get_mut(i * m + j) {
            *slot = value;
        }
    }
    true
}

/// Columns `p` and `q` of the row-major `m × m` matrix `x` ← `(c·x_p − s·x_q, s·x_p + c·x_q)`.
fn rotate_columns<T: Real>(x: &mut [T], m: usize, p: usize, q: usize, c: T, s: T) {
    for row in x.chunks_exact_mut(m) {
        let (xp, xq) = (row.get(p).copied().unwrap_or(T::ZERO), row.get(q).copied().unwrap_or(T::ZERO));
        if let Some(slot) = row.get_mut(p) {
            *slot = c * xp - s * xq;
        }
        if let Some(slot) = row.get_mut(q) {
            *slot = s * xp + c * xq;
        }
    }
}

/// Orders the eigenvalues from largest to smallest, moving the eigenvector columns with
/// them (selection sort: `m` swaps of O(m) each).
fn sort_decreasing<T: Real>(values: &mut [T], vectors: &mut [T], m: usize) {
    for k in 0..m {
        let mut best = k;
        for j in k + 1..m {
            if values.get(j) > values.get(best) {
                best = j;
            }
        }
        if best != k {
            values.swap(k, best);
            for row in vectors.chunks_exact_mut(m) {
                row.swap(k, best);
            }
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

    /// A random symmetric matrix with eigenvalues `spectrum` (Q diag Qᵀ, Q from the QR of a
    /// random matrix).
    fn with_spectrum(spectrum: &[f64], rng: &mut Rng) -> DMatrix<f64> {
        let m = spectrum.len();
        let q = DMatrix::from_fn(m, m, |_, _| rng.uniform_in(-1.0, 1.0)).qr().q();
        &q * DMatrix::from_diagonal(&nalgebra::DVector::from_column_slice(spectrum)) * q.transpose()
    }

    fn decompose<T: Real>(a: &DMatrix<f64>) -> (Vec<f64>, DMatrix<f64>) {
        let m = a.nrows();
        let mut flat: Vec<T> = (0..m * m).map(|k| T::from_f64(a[(k / m, k % m)])).collect();
        let (mut values, mut vectors) = (vec![T::ZERO; m], vec![T::ZERO; m * m]);
        symmetric_eigen(&mut flat, m, &mut values, &mut vectors).unwrap();
        let v = DMatrix::from_fn(m, m, |i, k| vectors[i * m + k].to_f64());
        (values.iter().map(|x| x.to_f64()).collect(), v)
    }

    /// Eigenvalues against nalgebra's, and `AV = VΛ` with `VᵀV = I`, to `tol·‖A‖`.
    fn check<T: Real>(a: &DMatrix<f64>, tol: f64) {
        let m = a.nrows();
        let (values, v) = decompose::<T>(a);
        let mut reference: Vec<f64> = SymmetricEigen::new(a.clone()).eigenvalues.iter().copied().collect();
        reference.sort_by(|x, y| y.total_cmp(x));
        let scale = a.norm().max(1e-300);
        for (k, (x, r)) in values.iter().zip(&reference).enumerate() {
            assert!((x - r).abs() <= tol * scale, "λ_{k}: {x} vs {r}");
        }
        assert!(values.windows(2).all(|w| w[0] >= w[1]), "not decreasing: {values:?}");
        let lambda = DMatrix::from_diagonal(&nalgebra::DVector::from_vec(values));
        assert!((a * &v - &v * lambda).norm() <= tol * scale * m as f64, "AV ≠ VΛ");
        assert!((v.transpose() * &v - DMatrix::identity(m, m)).norm() <= tol * m as f64, "VᵀV ≠ I");
    }

    #[test]
    fn random_matrices_match_nalgebra() {
        let mut rng = Rng::seed_from_u64(3);
        for m in [1, 2, 3, 7, 20, 41] {
            let b = DMatrix::from_fn(m, m, |_, _| rng.uniform_in(-1.0, 1.0));
            let a = &b + b.transpose();
            check::<f64>(&a, 1e-13);
            check::<f32>(&a, 2e-5);
        }
    }

    #[test]
    fn ill_conditioned_and_rank_deficient_matrices_match_nalgebra() {
        let mut rng = Rng::seed_from_u64(5);
        // Condition 10¹², a Gram matrix of rank 3 in 12 dimensions, and repeated eigenvalues.
        let graded: Vec<f64> = (0..13).map(|k| 10f64.powi(-k)).collect();
        let rank3: Vec<f64> = (0..12).map(|k| if k < 3 { 1.0 + k as f64 } else { 0.0 }).collect();
        let repeated = [2.0, 2.0, 2.0, -1.0, -1.0, 0.5];
        for spectrum in [&graded[..], &rank3[..], &repeated[..]] {
            let a = with_spectrum(spectrum, &mut rng);
            check::<f64>(&a, 1e-13);
            check::<f32>(&a, 2e-5);
        }
        // A graded positive definite matrix keeps its small eigenvalues to relative accuracy.
        let (values, _) = decompose::<f64>(&with_spectrum(&graded, &mut rng));
        for (x, r) in values.iter().zip(&graded) {
            assert!((x - r).abs() <= 1e-3 * r.max(1e-9), "{x} vs {r}");
        }
    }

    #[test]
    fn diagonal_and_empty_matrices_need_no_rotation() {
        let mut a = [3.0, 0.0, 0.0, 0.0, -1.0, 0.0, 0.0, 0.0, 5.0];
        let (mut values, mut vectors) = ([0.0; 3], [0.0; 9]);
        assert_eq!(symmetric_eigen(&mut a, 3, &mut values, &mut vectors), Ok(1));
        assert_eq!(values, [5.0, 3.0, -1.0]);
        assert_eq!(vectors, [0.0, 1.0, 0.0, 0.0, 0.0, 1.0, 1.0, 0.0, 0.0]);
        assert_eq!(symmetric_eigen::<f64>(&mut [], 0, &mut [], &mut []), Ok(1));
    }

    #[test]
    fn bad_input_is_an_error_and_writes_nothing() {
        let (mut values, mut vectors) = ([7.0; 2], [7.0; 4]);
        let mut a = [1.0, f64::NAN, f64::NAN, 1.0];
        assert_eq!(symmetric_eigen(&mut a, 2, &mut values, &mut vectors), Err(Error::NonFinite));
        assert_eq!((values, vectors), ([7.0; 2], [7.0; 4]));
        let mut a = [1.0; 3];
        assert!(matches!(symmetric_eigen(&mut a, 2, &mut values, &mut vectors), Err(Error::DimensionMismatch { .. })));
        assert!(symmetric_eigen(&mut [1.0; 4], 2, &mut values, &mut [0.0; 3]).is_err());
        assert!(symmetric_eigen(&mut [1.0; 4], 2, &mut [0.0; 3], &mut vectors).is_err());
    }
}
