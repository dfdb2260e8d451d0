//! The symmetric eigendecomposition `A = V Λ Vᵀ` of a small dense matrix: Householder
//! reduction to tridiagonal form, then the implicit QL iteration with Wilkinson-type shifts
//! (the EISPACK `tred2`/`tql2` pair; Golub & Van Loan, *Matrix Computations*, §8.3).
//!
//! **Reduction.** For `i = m−1, …, 1` a reflector `H_i = I − u uᵀ/h` built from row `i`
//! left of the diagonal (scaled by its 1-norm against overflow) zeroes that row and column
//! beyond the subdiagonal: `A ← H_i A H_i` is applied as the rank-2 update
//! `A ← A − u wᵀ − w uᵀ` with `p = A u/h`, `w = p − (uᵀp/2h)·u`. The reflectors are then
//! accumulated backwards into `V`. Cost `(4/3)m³` for the reduction and `(4/3)m³` for `V`.
//!
//! **QL.** On the tridiagonal `T = (d, e)`, each iteration picks the block ending at the
//! first negligible `|e_k| ≤ ε·max_{j≤l}(|d_j| + |e_j|)`, shifts by the eigenvalue of the
//! leading 2×2 closest to `d_l`, and chases the bulge with plane rotations
//! `(c, s) = (p, e_i)/hypot(p, e_i)`, accumulated into the columns of `V` (`6m` flops each).
//! Convergence is cubic; about 1.5 iterations per eigenvalue in practice, so `≈ 6m³` in
//! all with the vectors — against `≈ 30m³` for ten Jacobi sweeps.
//!
//! Accuracy is normwise: eigenvalues to within a small multiple of `ε·‖A‖` (backward
//! stable), eigenvectors orthonormal to working precision. The kernel ridge path of
//! [`crate::krr`] divides by `λ_k + λ` with its smallest ridge `λ ≥ 10⁻⁹·λ_max` in f64
//! (`10⁻⁵` in f32), far above that error, so relative accuracy of tiny eigenvalues is not
//! needed. Memory: the matrix itself (overwritten, used as the working `V`), the `m`
//! eigenvalues, and the `m × m` eigenvectors (whose first row also holds the subdiagonal
//! while the iteration runs), all caller storage.

use crate::error::check_len;
use crate::real::check_finite;
use crate::{Error, Real};

/// QL iterations per eigenvalue after which [`symmetric_eigen`] gives up with
/// [`Error::NotConverged`] (LAPACK's limit; with finite input one or two suffice).
pub const MAX_QL_ITERATIONS: usize = 30;

/// Decomposes the symmetric `m × m` matrix `a` (row-major; its lower triangle is read, the
/// upper one is taken to mirror it) into eigenvalues, written to `values` in decreasing
/// order, and orthonormal eigenvectors, written as the columns of `vectors` (row-major
/// `m × m`: eigenvector `k` is `vectors[i·m + k]`, `i = 0..m`, as in nalgebra). `a` is
/// overwritten (it is the working storage). Returns the number of QL iterations.
///
/// # Errors
/// `DimensionMismatch` for slices of the wrong length; `NonFinite` when `a` holds NaN or
/// ±∞ (then nothing was written); `NotConverged` when an eigenvalue needs more than
/// [`MAX_QL_ITERATIONS`].
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
    if m == 0 {
        return Ok(0);
    }
    mirror_lower(a, m);
    // From here `a` is read column-major (column j = a[j·m..(j+1)·m]); it is symmetric, so
    // that is the same matrix. The subdiagonal lives in the first row of `vectors`.
    let (subdiagonal, _) = vectors.split_at_mut(m);
    tridiagonalise(a, m, values, subdiagonal);
    accumulate_reflectors(a, m, values);
    let iterations = diagonalise(a, m, values, subdiagonal)?;
    for (i, row) in vectors.chunks_exact_mut(m).enumerate() {
        for (slot, column) in row.iter_mut().zip(a.chunks_exact(m)) {
            *slot = column.get(i).copied().unwrap_or(T::ZERO);
        }
    }
    sort_decreasing(values, vectors, m);
    Ok(iterations)
}

/// Copies the lower triangle of the row-major `m × m` `a` onto the upper one.
pub(crate) fn mirror_lower<T: Real>(a: &mut [T], m: usize) {
    for i in 0..m {
        for j in 0..i {
            let lower = a.get(i * m + j).copied().unwrap_or(T::ZERO);
            if let Some(upper) = a.get_mut(j * m + i) {
                *upper = lower;
            }
        }
    }
}

/// Entry `(row, column)` of the column-major `m × m` matrix `v`.
fn at<T: Real>(v: &[T], m: usize, row: usize, column: usize) -> T {
    v.get(column * m + row).copied().unwrap_or(T::ZERO)
}

/// Sets entry `(row, column)` of the column-major `m × m` matrix `v`.
fn set<T: Real>(v: &mut [T], m: usize, row: usize, column: usize, value: T) {
    if let Some(slot) = v.get_mut(column * m + row) {
        *slot = value;
    }
}

/// Householder reduction of the symmetric `v` (column-major, lower triangle used) to the
/// tridiagonal `(d, e)` (`e[i]` couples `i−1` and `i`, `e[0]` unused); the reflector
/// vectors are left in the lower triangle of `v` and `d[i]` ends as `h_i` for
/// [`accumulate_reflectors`].
fn tridiagonalise<T: Real>(v: &mut [T], m: usize, d: &mut [T], e: &mut [T]) {
    for (j, slot) in d.iter_mut().enumerate() {
        *slot = at(v, m, m - 1, j);
    }
    for i in (1..m).rev() {
        let (head, tail) = (d.split_at_mut(i), e.split_at_mut(i));
        let (d_head, d_i) = (head.0, head.1.first_mut());
        let (e_head, e_i) = (tail.0, tail.1.first_mut());
        let scale = d_head.iter().fold(T::ZERO, |acc, x| acc + x.abs());
        let mut h = T::ZERO;
        if scale == T::ZERO {
            if let Some(e_i) = e_i {
                *e_i = d_head.last().copied().unwrap_or(T::ZERO);
            }
            for (j, d_j) in d_head.iter_mut().enumerate() {
                *d_j = at(v, m, i - 1, j);
                set(v, m, i, j, T::ZERO);
                set(v, m, j, i, T::ZERO);
            }
        } else {
            h = reflect(v, m, i, scale, d_head, e_head, e_i);
        }
        if let Some(d_i) = d_i {
            *d_i = h;
        }
    }
}

/// One Householder step on row `i` (its part left of the diagonal in `d`, unscaled by
/// `scale`): builds `u` (in `d`), writes the subdiagonal `e_i`, applies the rank-2 update
/// to the leading `i × i` block, and returns `h = ‖u‖²/2`.
fn reflect<T: Real>(v: &mut [T], m: usize, i: usize, scale: T, d: &mut [T], e: &mut [T], e_i: Option<&mut T>) -> T {
    let mut h = T::ZERO;
    for d_k in d.iter_mut() {
        *d_k /= scale;
        h += *d_k * *d_k;
    }
    let f = d.last().copied().unwrap_or(T::ZERO);
    let g = if f > T::ZERO { -h.sqrt() } else { h.sqrt() };
    if let Some(e_i) = e_i {
        *e_i = scale * g;
    }
    h -= f * g;
    if let Some(last) = d.last_mut() {
        *last = f - g;
    }
    // p = A u (in e), using the lower triangle of column j; u is stored as column i.
    e.fill(T::ZERO);
    for (j, &d_j) in d.iter().enumerate() {
        set(v, m, j, i, d_j);
    }
    for j in 0..i {
        let column = v.get(j * m..j * m + i).unwrap_or_default();
        let d_j = d.get(j).copied().unwrap_or(T::ZERO);
        let mut g = e.get(j).copied().unwrap_or(T::ZERO) + column.get(j).copied().unwrap_or(T::ZERO) * d_j;
        let below = column.get(j + 1..).unwrap_or_default();
        for ((&v_kj, &d_k), e_k) in
            below.iter().zip(d.get(j + 1..).unwrap_or_default()).zip(e.get_mut(j + 1..).unwrap_or_default())
        {
            g += v_kj * d_k;
            *e_k += v_kj * d_j;
        }
        if let Some(e_j) = e.get_mut(j) {
            *e_j = g;
        }
    }
    // w = p/h − (uᵀp/2h²)·u, then A ← A − u wᵀ − w uᵀ on the lower triangle.
    let mut f = T::ZERO;
    for (e_j, &d_j) in e.iter_mut().zip(d.iter()) {
        *e_j /= h;
        f += *e_j * d_j;
    }
    let hh = f / (h + h);
    for (e_j, &d_j) in e.iter_mut().zip(d.iter()) {
        *e_j -= hh * d_j;
    }
    for j in 0..i {
        let (f, g) = (d.get(j).copied().unwrap_or(T::ZERO), e.get(j).copied().unwrap_or(T::ZERO));
        let column = v.get_mut(j * m + j..j * m + i).unwrap_or_default();
        for ((v_kj, &e_k), &d_k) in
            column.iter_mut().zip(e.get(j..).unwrap_or_default()).zip(d.get(j..).unwrap_or_default())
        {
            *v_kj -= f * e_k + g * d_k;
        }
        if let Some(d_j) = d.get_mut(j) {
            *d_j = at(v, m, i - 1, j);
        }
        set(v, m, i, j, T::ZERO);
    }
    h
}

/// Forms `V = H_{m−1}⋯H_1` in `v` from the reflectors [`tridiagonalise`] left there, and
/// moves the diagonal of the tridiagonal matrix into `d`.
fn accumulate_reflectors<T: Real>(v: &mut [T], m: usize, d: &mut [T]) {
    for i in 0..m - 1 {
        set(v, m, m - 1, i, at(v, m, i, i));
        set(v, m, i, i, T::ONE);
        let h = d.get(i + 1).copied().unwrap_or(T::ZERO);
        let (left, right) = v.split_at_mut((i + 1) * m);
        let u = right.get_mut(..=i).unwrap_or_default();
        if h != T::ZERO {
            for column in left.chunks_exact_mut(m) {
                let column = column.get_mut(..=i).unwrap_or_default();
                let g = column.iter().zip(u.iter()).fold(T::ZERO, |acc, (&x, &u)| acc + x * u) / h;
                for (x, &u) in column.iter_mut().zip(u.iter()) {
                    *x -= g * u;
                }
            }
        }
        u.fill(T::ZERO);
    }
    for (j, d_j) in d.iter_mut().enumerate() {
        *d_j = at(v, m, m - 1, j);
        set(v, m, m - 1, j, T::ZERO);
    }
    set(v, m, m - 1, m - 1, T::ONE);
}

/// The implicit QL iteration on the tridiagonal `(d, e)` (`e[i]` couples `i−1` and `i`),
/// rotating the columns of `v`; `d` ends holding the eigenvalues (unsorted).
fn diagonalise<T: Real>(v: &mut [T], m: usize, d: &mut [T], e: &mut [T]) -> Result<usize, Error> {
    e.rotate_left(1);
    if let Some(last) = e.last_mut() {
        *last = T::ZERO;
    }
    let get = |x: &[T], i: usize| x.get(i).copied().unwrap_or(T::ZERO);
    let (mut shift, mut norm, mut total) = (T::ZERO, T::ZERO, 0);
    for l in 0..m {
        norm = norm.max_of(get(d, l).abs() + get(e, l).abs());
        let mut iterations = 0;
        while get(e, l).abs() > T::EPSILON * norm {
            if iterations == MAX_QL_ITERATIONS {
                return Err(Error::NotConverged { iterations: total });
            }
            iterations += 1;
            total += 1;
            shift += shift_block(d, e, l);
            ql_sweep(v, m, d, e, l, (l..m).find(|&k| get(e, k).abs() <= T::EPSILON * norm).unwrap_or(m - 1));
        }
        if let Some(d_l) = d.get_mut(l) {
            *d_l += shift;
        }
        if let Some(e_l) = e.get_mut(l) {
            *e_l = T::ZERO;
        }
    }
    Ok(total)
}

/// Subtracts from `d[l..]` the eigenvalue of the 2×2 block at `l` nearest `d[l]` (setting
/// `d[l]`, `d[l+1]` to the deflated values) and returns it.
fn shift_block<T: Real>(d: &mut [T], e: &[T], l: usize) -> T {
    let (g, e_l) = (d.get(l).copied().unwrap_or(T::ZERO), e.get(l).copied().unwrap_or(T::ZERO));
    let p = (d.get(l + 1).copied().unwrap_or(T::ZERO) - g) / (e_l + e_l);
    let r = if p < T::ZERO { -p.hypot(T::ONE) } else { p.hypot(T::ONE) };
    if let Some(d_l) = d.get_mut(l) {
        *d_l = e_l / (p + r);
    }
    if let Some(d_l1) = d.get_mut(l + 1) {
        *d_l1 = e_l * (p + r);
    }
    let h = g - d.get(l).copied().unwrap_or(T::ZERO);
    for d_i in d.get_mut(l + 2..).unwrap_or_default() {
        *d_i -= h;
    }
    h
}

/// One shifted QL sweep over the unreduced block `l..=end`, chasing the bulge from the
/// bottom with plane rotations applied to columns `i`, `i+1` of `v`.
fn ql_sweep<T: Real>(v: &mut [T], m: usize, d: &mut [T], e: &mut [T], l: usize, end: usize) {
    let get = |x: &[T], i: usize| x.get(i).copied().unwrap_or(T::ZERO);
    let (dl1, el1, e_l) = (get(d, l + 1), get(e, l + 1), get(e, l));
    let mut p = get(d, end);
    let (mut c, mut c2, mut c3, mut s, mut s2) = (T::ONE, T::ONE, T::ONE, T::ZERO, T::ZERO);
    for i in (l..end).rev() {
        c3 = c2;
        c2 = c;
        s2 = s;
        let (e_i, d_i) = (get(e, i), get(d, i));
        let g = c * e_i;
        let h = c * p;
        let r = p.hypot(e_i);
        if let Some(slot) = e.get_mut(i + 1) {
            *slot = s * r;
        }
        s = e_i / r;
        c = p / r;
        p = c * d_i - s * g;
        if let Some(slot) = d.get_mut(i + 1) {
            *slot = h + s * (c * g + s * d_i);
        }
        let (left, right) = v.split_at_mut((i + 1) * m);
        let column_i = left.get_mut(i * m..).unwrap_or_default();
        for (x, y) in column_i.iter_mut().zip(right.iter_mut().take(m)) {
            let (x0, y0) = (*x, *y);
            *y = s * x0 + c * y0;
            *x = c * x0 - s * y0;
        }
    }
    let p = -s * s2 * c3 * el1 * e_l / dl1;
    if let Some(slot) = e.get_mut(l) {
        *slot = s * p;
    }
    if let Some(slot) = d.get_mut(l) {
        *slot = c * p;
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
        for m in [1, 2, 3, 7, 20, 41, 150] {
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
    fn diagonal_and_empty_matrices_need_no_iteration() {
        let mut a = [3.0, 0.0, 0.0, 0.0, -1.0, 0.0, 0.0, 0.0, 5.0];
        let (mut values, mut vectors) = ([0.0; 3], [0.0; 9]);
        assert_eq!(symmetric_eigen(&mut a, 3, &mut values, &mut vectors), Ok(0));
        assert_eq!(values, [5.0, 3.0, -1.0]);
        assert_eq!(vectors, [0.0, 1.0, 0.0, 0.0, 0.0, 1.0, 1.0, 0.0, 0.0]);
        assert_eq!(symmetric_eigen::<f64>(&mut [], 0, &mut [], &mut []), Ok(0));
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
