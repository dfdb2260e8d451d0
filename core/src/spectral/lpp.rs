//! Locality preserving projection (seed 000 §5.1; He & Niyogi 2004): the linear map that
//! keeps neighbours of the kNN graph close, fitted on the graph the eigenmap uses.
//!
//! **Math.** With the graph's weights `S`, degrees `D` and Laplacian `𝓛 = D − S`, the
//! directions `φ` solve the generalized problem of seed 000 §5.1
//!
//! `A φ = μ B φ`,  `A = X_cᵀ 𝓛 X_c = ½ Σ_ij S_ij (x_i − x_j)(x_i − x_j)ᵀ`,
//! `B = X_cᵀ D X_c = Σ_i d_i (x_i − x̄)(x_i − x̄)ᵀ`,
//!
//! for the `r` smallest `μ` (the seed's `μ₁ ≤ … ≤ μ_r`), normalised `φᵀBφ = 1`; a row
//! projects to `y_c(x) = φ_cᵀ(x − x̄)`.
//!
//! **Convention: the centre.** The seed writes `X D Xᵀ` for uncentred rows. We centre at
//! the degree-weighted mean `x̄ = Σ d_i x_i / Σ d_i`: `A` does not change (`𝓛1 = 0`), and
//! `B` becomes the weighted covariance, so no direction can score a small `μ` by the
//! rows' offset from the origin alone — the linear counterpart of the eigenmap dropping
//! the constant vector. The projected training rows have weighted mean 0.
//!
//! **Convention: a singular `B`.** A feature that is constant (or a combination of
//! features that is) makes `B` singular, and such a direction is `0/0` in `μ`. As He and
//! Niyogi do with a PCA step, the problem is solved in the span of `B`'s eigenvectors
//! whose eigenvalues exceed `√ε` times the largest: with `B = UΛUᵀ` and `W = U_s Λ_s^{−1/2}`
//! (the `s` kept), the standard problem `WᵀAW w = μ w` gives `φ = W w`, `B`-orthonormal.
//! Features whose scales differ by more than `ε^{−1/4}` (about 60 in f32) should be
//! standardised first, or the small ones count as constant.
//!
//! **Cost and memory.** One pass over the `2nk` stored edges for `A` (`O(nkd²)`), one over
//! the rows for `x̄` and `B` (`O(nd²)`), two `d × d` eigendecompositions (`≈ 18d³`). Work
//! [`lpp_work_len`]`(d) = 3d² + 3d` scalars; the model ([`KernelProjection`], linear
//! kernel) `d² + r(d + 2)` — both independent of `n`.

use crate::error::check_len;
use crate::kpca::KernelProjection;
use crate::linalg::symmetric_eigen;
use crate::npkl::LaplacianView;
use crate::real::check_finite;
use crate::storage::{Storage, check_capacity};
use crate::{Error, Real};

/// Scalars of work [`lpp`] needs for `d` features: `3d² + 3d` (saturating).
pub const fn lpp_work_len(d: usize) -> usize {
    d.saturating_mul(d).saturating_add(d).saturating_mul(3)
}

/// The work's regions: the mean, a difference of rows, the eigenvalues, and three `d × d`
/// matrices.
struct Work<'a, T> {
    mean: &'a mut [T],
    diff: &'a mut [T],
    values: &'a mut [T],
    a: &'a mut [T],
    b: &'a mut [T],
    u: &'a mut [T],
}

fn split<T>(work: &mut [T], d: usize) -> Work<'_, T> {
    let (mean, rest) = work.split_at_mut(d);
    let (diff, rest) = rest.split_at_mut(d);
    let (values, rest) = rest.split_at_mut(d);
    let (a, rest) = rest.split_at_mut(d * d);
    let (b, u) = rest.split_at_mut(d * d);
    Work { mean, diff, values, a, b, u: u.get_mut(..d * d).unwrap_or_default() }
}

/// Locality preserving projection of the `n` rows `rows` (row-major `n × dim`, the points
/// `graph` was built on) onto `components` directions, into `storage` (at least
/// [`KernelProjection::scalars_len`]`(dim, dim, components)` scalars). The model's
/// eigenvalues are the `μ_c`, increasing.
///
/// # Errors
/// `InvalidParam` naming `dim` (0), `degree` (a point of degree 0 or not finite, as
/// [`eigenmap`](super::eigenmap)) or `components` (0, or more than the directions of
/// nonzero weighted variance); `DimensionMismatch` when `rows` is not `n·dim` long;
/// `NonFinite` for NaN/∞ in `rows` or sums that overflow; `CapacityExceeded` for a short
/// `work` ([`lpp_work_len`]) or `storage`; `NotConverged` from the eigensolver.
///
/// # Examples
/// ```
/// use kestrel_core::kpca::KernelProjection;
/// use kestrel_core::npkl::{GraphParams, Laplacian};
/// use kestrel_core::spectral::{lpp, lpp_work_len};
/// // A line along (1, 1) with a little noise across it: the most local direction is along it.
/// let rows: Vec<f64> = (0..40).flat_map(|i| {
///     let t = i as f64 * 0.1;
///     let noise = if i % 2 == 0 { 0.01 } else { -0.01 };
///     [t + noise, t - noise]
/// }).collect();
/// let graph = Laplacian::build_in(vec![0.0; Laplacian::scalars_len(40, 3)],
///     vec![0u32; Laplacian::indices_len(40, 3)], &rows, 2, GraphParams::new().neighbors(3).check()?)?;
/// let mut work = vec![0.0; lpp_work_len(2)];
/// let storage = vec![0.0; KernelProjection::scalars_len(2, 2, 1)];
/// let model = lpp(&graph.view(), &rows, 2, 1, &mut work, storage)?;
/// // One coordinate that orders the points along the line, whatever the noise across it.
/// let mut y = Vec::new();
/// for row in rows.chunks_exact(2) {
///     let mut out = [0.0];
///     model.project(row, &mut out)?;
///     y.push(out[0]);
/// }
/// assert!(y.windows(2).all(|w| w[0] < w[1]) || y.windows(2).all(|w| w[0] > w[1]));
/// # Ok::<(), kestrel_core::Error>(())
/// ```
pub fn lpp<T: Real, S: Storage<T>>(
    graph: &LaplacianView<'_, T>,
    rows: &[T],
    dim: usize,
    components: usize,
    work: &mut [T],
    storage: S,
) -> Result<KernelProjection<T, S>, Error> {
    if dim == 0 {
        return Err(Error::InvalidParam { name: "dim" });
    }
    let n = graph.n();
    check_len(n.saturating_mul(dim), rows.len())?;
    check_finite(rows)?;
    check_capacity(lpp_work_len(dim), work.len())?;
    if components == 0 || components > dim {
        return Err(Error::InvalidParam { name: "components" });
    }
    check_capacity(KernelProjection::scalars_len(dim, dim, components), storage.as_ref().len())?;
    let w = split(work, dim);
    weighted_mean(graph, rows, dim, w.mean)?;
    weighted_covariance(graph, rows, w.mean, w.diff, w.b);
    laplacian_form(graph, rows, w.diff, w.a);
    check_finite(w.a)?;
    check_finite(w.b)?;
    // B = UΛUᵀ; keep the s directions of eigenvalue above √ε of the largest, W = U_s Λ_s^{−1/2}.
    symmetric_eigen(w.b, dim, w.values, w.u)?;
    let largest = w.values.first().copied().unwrap_or(T::ZERO);
    let kept = w.values.iter().take_while(|&&v| v > T::EPSILON.sqrt() * largest && v > T::ZERO).count();
    if components > kept {
        return Err(Error::InvalidParam { name: "components" });
    }
    whiten(w.u, w.values, dim, kept);
    // C = Wᵀ A W (s × s) in `b`, then its eigenvectors in `a`.
    project_form(w.a, w.u, dim, kept, w.diff, w.b);
    let (c, vectors) = (w.b.get_mut(..kept * kept).unwrap_or_default(), w.a.get_mut(..kept * kept).unwrap_or_default());
    symmetric_eigen(c, kept, w.values.get_mut(..kept).unwrap_or_default(), vectors)?;
    // φ_c = W w_c for the smallest μ (the last eigenvalues), into `b`; the μ into `diff`.
    let directions = w.b.get_mut(..components * dim).unwrap_or_default();
    for (c, phi) in directions.chunks_exact_mut(dim).enumerate() {
        let column = kept - 1 - c;
        for (p, w_row) in phi.iter_mut().zip(w.u.chunks_exact(dim)) {
            *p = (0..kept).fold(T::ZERO, |acc, k| {
                acc + w_row.get(k).copied().unwrap_or(T::ZERO)
                    * vectors.get(k * kept + column).copied().unwrap_or(T::ZERO)
            });
        }
        if let Some(mu) = w.diff.get_mut(c) {
            *mu = w.values.get(column).copied().unwrap_or(T::ZERO).max_of(T::ZERO);
        }
    }
    KernelProjection::linear_in(storage, directions, w.mean, w.diff.get(..components).unwrap_or_default())
}

/// `x̄ = Σ d_i x_i / Σ d_i` into `mean`.
fn weighted_mean<T: Real>(graph: &LaplacianView<'_, T>, rows: &[T], dim: usize, mean: &mut [T]) -> Result<(), Error> {
    mean.fill(T::ZERO);
    let mut total = T::ZERO;
    for (i, x) in rows.chunks_exact(dim).enumerate() {
        let d = graph.degree(i).unwrap_or(T::ZERO);
        if !(d > T::ZERO && d.is_finite()) {
            return Err(Error::InvalidParam { name: "degree" });
        }
        total += d;
        mean.iter_mut().zip(x).for_each(|(m, &v)| *m += d * v);
    }
    mean.iter_mut().for_each(|m| *m /= total);
    check_finite(mean)
}

/// `B = Σ_i d_i (x_i − x̄)(x_i − x̄)ᵀ` (lower triangle) into `b`; `diff` is scratch.
fn weighted_covariance<T: Real>(graph: &LaplacianView<'_, T>, rows: &[T], mean: &[T], diff: &mut [T], b: &mut [T]) {
    let dim = mean.len();
    b.fill(T::ZERO);
    for (i, x) in rows.chunks_exact(dim).enumerate() {
        diff.iter_mut().zip(x.iter().zip(mean)).for_each(|(e, (&v, &m))| *e = v - m);
        add_outer_lower(b, diff, graph.degree(i).unwrap_or(T::ZERO));
    }
}

/// `A = Σ_{i<j} S_ij (x_i − x_j)(x_i − x_j)ᵀ` (lower triangle; each edge once, from the
/// row of its lower end) into `a`, with `S_ij = −L_ij √(d_i d_j)`.
fn laplacian_form<T: Real>(graph: &LaplacianView<'_, T>, rows: &[T], diff: &mut [T], a: &mut [T]) {
    let dim = diff.len();
    a.fill(T::ZERO);
    for (i, x_i) in rows.chunks_exact(dim).enumerate() {
        let (cols, vals) = graph.row(i).unwrap_or((&[], &[]));
        let d_i = graph.degree(i).unwrap_or(T::ZERO);
        for (&j, &l) in cols.iter().zip(vals) {
            let j = j as usize;
            let Some(x_j) = rows.get(j * dim..(j + 1) * dim).filter(|_| j > i) else { continue };
            let weight = -l * (d_i * graph.degree(j).unwrap_or(T::ZERO)).sqrt();
            diff.iter_mut().zip(x_i.iter().zip(x_j)).for_each(|(e, (&p, &q))| *e = p - q);
            add_outer_lower(a, diff, weight);
        }
    }
}

/// `m += w·v vᵀ` on the lower triangle of the row-major `m`.
fn add_outer_lower<T: Real>(m: &mut [T], v: &[T], w: T) {
    for (r, (row, &v_r)) in m.chunks_exact_mut(v.len()).zip(v).enumerate() {
        let scaled = w * v_r;
        row.iter_mut().zip(v).take(r + 1).for_each(|(e, &v_c)| *e += scaled * v_c);
    }
}

/// Scales the first `kept` columns of `u` (`d × d`, column `k` at `u[i·d + k]`) by
/// `1/√λ_k`: `W = U_s Λ_s^{−1/2}`.
fn whiten<T: Real>(u: &mut [T], values: &[T], d: usize, kept: usize) {
    for row in u.chunks_exact_mut(d) {
        row.iter_mut().zip(values).take(kept).for_each(|(e, &v)| *e /= v.sqrt());
    }
}

/// `C = Wᵀ A W` (`s × s`, row-major) into `c`, from the lower triangle of `a` (`d × d`)
/// and the first `s` columns of `u`; `column` is scratch of `d`.
fn project_form<T: Real>(a: &[T], u: &[T], d: usize, s: usize, column: &mut [T], c: &mut [T]) {
    let entry = |i: usize, j: usize| a.get(i.max(j) * d + i.min(j)).copied().unwrap_or(T::ZERO);
    let w = |i: usize, k: usize| u.get(i * d + k).copied().unwrap_or(T::ZERO);
    for k in 0..s {
        // (A w_k)_i
        for (i, slot) in column.iter_mut().enumerate() {
            *slot = (0..d).fold(T::ZERO, |acc, l| acc + entry(i, l) * w(l, k));
        }
        for m in 0..=k {
            let value = column.iter().enumerate().fold(T::ZERO, |acc, (i, &aw)| acc + w(i, m) * aw);
            if let Some(e) = c.get_mut(k * s + m) {
                *e = value;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::*;
    use crate::Rng;
    use crate::npkl::testing::{Graph, graph};
    use crate::npkl::{GraphParams, Laplacian};
    use nalgebra::{DMatrix, DVector, SymmetricEigen};
    use std::vec;
    use std::vec::Vec;

    type Model<T> = KernelProjection<T, Vec<T>>;

    fn fit<T: Real>(g: &Graph<T>, rows: &[T], dim: usize, r: usize) -> Result<Model<T>, Error> {
        let mut work = vec![T::ZERO; lpp_work_len(dim)];
        lpp(&g.view(), rows, dim, r, &mut work, vec![T::ZERO; KernelProjection::scalars_len(dim, dim, r)])
    }

    /// A noisy helix in 3-D with axes of different scales.
    fn helix<T: Real>(n: usize) -> Vec<T> {
        let mut rng = Rng::seed_from_u64(11);
        (0..n)
            .flat_map(|i| {
                let t = i as f64 * 0.07;
                let noise = 0.05 * rng.normal::<f64>();
                [3.0 * t.cos() + noise, t.sin(), 0.4 * t + 0.1 * rng.normal::<f64>()]
            })
            .map(T::from_f64)
            .collect()
    }

    /// The dense problem in f64: `μ` increasing and the `B`-orthonormal `φ` (columns), by
    /// nalgebra's Cholesky of `B` and symmetric eigendecomposition.
    fn dense<T: Real>(g: &Graph<T>, rows: &[T], dim: usize) -> (Vec<f64>, DMatrix<f64>, DVector<f64>) {
        let n = g.n();
        let degree = |i: usize| g.degree(i).unwrap().to_f64();
        let x = DMatrix::from_fn(n, dim, |i, j| rows[i * dim + j].to_f64());
        let mut s = DMatrix::zeros(n, n);
        for i in 0..n {
            let (cols, vals) = g.row(i).unwrap();
            for (&j, &l) in cols.iter().zip(vals) {
                s[(i, j as usize)] = -l.to_f64() * (degree(i) * degree(j as usize)).sqrt();
            }
        }
        let d = DMatrix::from_fn(n, n, |i, j| if i == j { degree(i) } else { 0.0 });
        let total: f64 = (0..n).map(degree).sum();
        let mean = x.transpose() * DVector::from_fn(n, |i, _| degree(i) / total);
        let xc = DMatrix::from_fn(n, dim, |i, j| x[(i, j)] - mean[j]);
        let a = xc.transpose() * (&d - &s) * &xc;
        let b = xc.transpose() * &d * &xc;
        let l = b.cholesky().unwrap().l();
        let l_inv = l.clone().try_inverse().unwrap();
        let c = &l_inv * a * l_inv.transpose();
        let eig = SymmetricEigen::new(c);
        let mut order: Vec<usize> = (0..dim).collect();
        order.sort_by(|&p, &q| eig.eigenvalues[p].total_cmp(&eig.eigenvalues[q]));
        let mu = order.iter().map(|&k| eig.eigenvalues[k]).collect();
        let phi = l_inv.transpose() * DMatrix::from_fn(dim, dim, |i, k| eig.eigenvectors[(i, order[k])]);
        (mu, phi, mean)
    }

    fn matches_dense<T: Real>(tolerance: f64) {
        let (n, dim, r) = (200, 3, 2);
        let rows = helix::<T>(n);
        let g = graph(&rows, dim, 6);
        let model = fit(&g, &rows, dim, r).unwrap();
        let (mu, phi, mean) = dense(&g, &rows, dim);
        for c in 0..r {
            let got = model.eigenvalues()[c].to_f64();
            assert!((got - mu[c]).abs() <= tolerance * mu[dim - 1], "μ{c}: {got} vs {}", mu[c]);
        }
        // Each training row's projection against φ_cᵀ(x − x̄), up to the direction's sign.
        let mut y = vec![T::ZERO; r];
        let scale = (0..n).map(|i| (rows[i * dim].to_f64() - mean[0]).abs()).fold(0.0, f64::max);
        for c in 0..r {
            let reference =
                |i: usize| (0..dim).map(|j| phi[(j, c)] * (rows[i * dim + j].to_f64() - mean[j])).sum::<f64>();
            model.project(&rows[..dim], &mut y).unwrap();
            let sign = if (y[c].to_f64() * reference(0)) < 0.0 { -1.0 } else { 1.0 };
            for i in 0..n {
                model.project(&rows[i * dim..(i + 1) * dim], &mut y).unwrap();
                let (got, want) = (sign * y[c].to_f64(), reference(i));
                assert!((got - want).abs() <= tolerance * scale.max(1.0), "row {i}, component {c}: {got} vs {want}");
            }
        }
    }

    #[test]
    fn matches_the_dense_generalized_problem_f64() {
        matches_dense::<f64>(1e-12);
    }

    #[test]
    fn matches_the_dense_generalized_problem_f32() {
        matches_dense::<f32>(1e-5);
    }

    #[test]
    fn constant_and_repeated_features_are_left_out() {
        let (n, r) = (120, 2);
        let plain = helix::<f64>(n);
        // [x, y, z] → [x, 5, y, z, x]: a constant column and a copy of the first, on the
        // same graph (built on [x, y, z]): the same projections.
        let padded: Vec<f64> = plain.chunks_exact(3).flat_map(|p| [p[0], 5.0, p[1], p[2], p[0]]).collect();
        let g = graph(&plain, 3, 6);
        let (model, wide) = (fit(&g, &plain, 3, r).unwrap(), fit(&g, &padded, 5, r).unwrap());
        let (mut y, mut y_wide) = ([0.0; 2], [0.0; 2]);
        for (p, q) in plain.chunks_exact(3).zip(padded.chunks_exact(5)) {
            model.project(p, &mut y).unwrap();
            wide.project(q, &mut y_wide).unwrap();
            for c in 0..r {
                assert!((y[c].abs() - y_wide[c].abs()).abs() < 1e-9, "{y:?} vs {y_wide:?}");
            }
        }
        // Three directions of nonzero variance: a fourth component does not exist.
        assert_eq!(fit(&g, &padded, 5, 4).unwrap_err(), Error::InvalidParam { name: "components" });
    }

    #[test]
    fn bad_input_is_an_error() {
        let rows = helix::<f64>(30);
        let g = graph(&rows, 3, 4);
        let view = g.view();
        let storage = || vec![0.0; KernelProjection::scalars_len(3, 3, 3)];
        let mut work = vec![0.0; lpp_work_len(3)];
        assert_eq!(lpp(&view, &rows, 0, 1, &mut work, storage()).unwrap_err(), Error::InvalidParam { name: "dim" });
        assert!(matches!(lpp(&view, &rows[..89], 3, 1, &mut work, storage()), Err(Error::DimensionMismatch { .. })));
        for r in [0, 4] {
            assert_eq!(
                lpp(&view, &rows, 3, r, &mut work, storage()).unwrap_err(),
                Error::InvalidParam { name: "components" }
            );
        }
        let mut nan = rows.clone();
        nan[4] = f64::NAN;
        assert_eq!(lpp(&view, &nan, 3, 1, &mut work, storage()).unwrap_err(), Error::NonFinite);
        let mut short = vec![0.0; lpp_work_len(3) - 1];
        assert!(matches!(lpp(&view, &rows, 3, 1, &mut short, storage()), Err(Error::CapacityExceeded { .. })));
        let small = vec![0.0; KernelProjection::scalars_len(3, 3, 2) - 1];
        assert!(matches!(lpp(&view, &rows, 3, 2, &mut work, small), Err(Error::CapacityExceeded { .. })));
        // Every weight underflowed: degree 0.
        let params = GraphParams::new().neighbors(3).sigma(1e-20).check().unwrap();
        let cold = Laplacian::build_in(
            vec![0.0; Laplacian::scalars_len(30, 3)],
            vec![0; Laplacian::indices_len(30, 3)],
            &rows,
            3,
            params,
        )
        .unwrap();
        assert_eq!(
            lpp(&cold.view(), &rows, 3, 1, &mut work, storage()).unwrap_err(),
            Error::InvalidParam { name: "degree" }
        );
    }
}
