//! Reduced kernel canonical correlation analysis (KCCA, seed 003 §4.3, eq. 41-48): two
//! views of the same `n` observations, `x_i` (view `s`, `d_s` features) and `y_i` (view
//! `t`, `d_t` features), each through its own reduced set — `Ã` of `m` rows of view `s`,
//! `B̃` of `p` rows of view `t` — and its own kernel.
//!
//! Each row is represented by its reduced kernel features `z_i = K(Ã, x_i) ∈ ℝᵐ` and
//! `w_i = K(B̃, y_i) ∈ ℝᵖ`, centred by their means `k̃_s`, `k̃_t`; the covariances
//! `Σ_ss`, `Σ_tt` and the cross-covariance `Σ_st = (1/n) Σ_i (z_i − k̃_s)(w_i − k̃_t)ᵀ` are
//! eq. 44-46 with the reduced kernels (eq. 47). The text notes that `Σ_ss` and `Σ_tt` are
//! singular and calls for a regularisation term without fixing one. **Convention**: as
//! for KSIR and KFD, the kernel norm — with `u(x) = Σ_j α_j φ(ã_j)ᵀφ(x)`,
//!
//! `B_s = Σ_ss + κ_s K̃_s`,  `κ_s = μ·tr Σ_ss / tr K̃_s`,  `K̃_s = K(Ã, Ã)`
//!
//! (and `B_t` alike; `K̃_s` and `Σ_ss` also get a relative ridge `√ε·tr/m` on their
//! diagonals, which keeps `B_s` numerically definite in f32), so that `αᵀB_sα = var u +
//! κ_s‖u‖²`: the feature-space ridge `Σ + κI` of regularised KCCA. With every row as a
//! centre it is Hardoon et al. (2004)'s regularisation, the paper's reference for KCCA:
//! `B_s ∝ (1 − τ)K_c² + τK` with `τ/(1 − τ) = nκ_s`. The weight `μ` (default
//! [`DEFAULT_MU`](super::DEFAULT_MU), as for KSIR) is free of the kernel's and the data's
//! scale. Without a regulariser, a reduced set as large as the data makes every
//! canonical correlation 1 on any data (the classical KCCA degeneracy).
//!
//! Eq. 48 with the regularised matrices is the pencil of
//! [`generalized_symmetric_eigen`](crate::linalg::generalized_symmetric_eigen)
//!
//! `Σ_st B_t⁻¹ Σ_ts α = η B_s α`,  `αᵀ B_s α = 1`,
//!
//! formed as `A = HHᵀ` with `H = Σ_st L⁻ᵀ`, `B_t = LLᵀ` (Cholesky), so `A` is symmetric
//! by construction. `η_c = ρ_c²`, `ρ_c` the regularised canonical correlations, stored as
//! both models' eigenvalues. The second view's coefficients are `β = B_t⁻¹ Σ_ts α / ρ`
//! (the text after eq. 42 writes `Σ_tt⁻¹Σ_st u^s/η`: read `Σ_ts`, the only product of the
//! right shape, and divide by `ρ = √η` rather than `η`, so that `βᵀB_tβ = 1` as for `α` —
//! dividing by `η` would scale view `t`'s variates by `1/ρ`). Signs: view `s`'s component
//! gets the KPCA convention (its largest coefficient positive) and view `t`'s follows, so
//! each pair is positively correlated.
//!
//! **Models.** The fit returns two [`KernelProjection`]s — view `s` through `Ã`, view `t`
//! through `B̃` — with offsets `αᵀk̃_s`, `βᵀk̃_t`: the canonical variates of a new row of
//! either view are its [`KernelProjection::project`], on a host or a device, and each
//! model is an ordinary kernel-projection model file.
//!
//! **Cost.** `2n(m + p)` kernel evaluations (two passes), `n(m + p)²` for the moments,
//! `p³/3 + mp² + m²p` for `B_t`'s factor, `H` and `A`, `≈ 12m³` for the pencil (past 200
//! centres its `k` leading pairs by Lanczos first, `O(s·m²)`: `linalg::generalized`). Work:
//! [`KernelProjection::kcca_work_len`]`(m, p) = 3m² + 3m + p² + 2p + mp` scalars and two
//! Cholesky factors ([`Cholesky::scalars_len`] of `m` and `p`), independent of `n`.
//! Models: [`KernelProjection::scalars_len`]`(d_s, m, k)` and `(d_t, p, k)` scalars.

use super::{KernelProjection, add_kernel_norm, row_count};
use crate::cholesky::Cholesky;
use crate::error::check_len;
use crate::linalg::{Triangle, generalized_leading_eigen, solve_lower, solve_lower_transposed};
use crate::real::check_finite;
use crate::storage::{Storage, check_capacity};
use crate::{Error, Kernel, Real};

/// One view of the data for [`KernelProjection::fit_kcca_in`]: its rows, its reduced set
/// and its kernel.
#[derive(Clone, Copy, Debug)]
pub struct View<'a, T> {
    /// The `n` rows, row-major with `dim` columns.
    pub rows: &'a [T],
    /// The reduced set, row-major with `dim` columns.
    pub centres: &'a [T],
    /// Features of the view.
    pub dim: usize,
    /// The view's kernel.
    pub kernel: Kernel<T>,
}

impl KernelProjection<(), ()> {
    /// Work scalars of [`fit_kcca_in`](KernelProjection::fit_kcca_in) with `m` centres in
    /// the first view and `p` in the second: [`reduced_work_len`](Self::reduced_work_len)`(m)`
    /// for the first view and its pencil, `p² + 2p` and a Cholesky factor for the second,
    /// and the `m × p` cross-covariance.
    pub const fn kcca_work_len(m: usize, p: usize) -> usize {
        let second = p.saturating_mul(p).saturating_add(p.saturating_mul(2)).saturating_add(Cholesky::scalars_len(p));
        let cross = m.saturating_mul(p);
        KernelProjection::reduced_work_len(m).saturating_add(second).saturating_add(cross)
    }
}

impl<T: Real, S: Storage<T>> KernelProjection<T, S> {
    /// Fits reduced KCCA on the two views `first` and `second` (the same number of rows,
    /// row `i` of each the same observation), keeping `components` canonical pairs, with
    /// the regulariser's weight `mu`; `work` holds
    /// [`KernelProjection::kcca_work_len`]`(m, p)` scalars. Returns the projections of the
    /// first view (in `storage`) and the second (in `storage2`).
    ///
    /// # Examples
    /// ```
    /// use kestrel_core::{Kernel, kpca::{KernelProjection, View}};
    /// // One latent s seen through two nonlinear views.
    /// let s: Vec<f64> = (0..40).map(|i| i as f64 / 20.0 - 1.0).collect();
    /// let x: Vec<f64> = s.iter().flat_map(|&s| [s.cos(), s.sin()]).collect();
    /// let y: Vec<f64> = s.iter().map(|&s| s * s * s).collect();
    /// let first = View { rows: &x, centres: &x[..20], dim: 2, kernel: Kernel::rbf(1.0)? };
    /// let second = View { rows: &y, centres: &y[..10], dim: 1, kernel: Kernel::rbf(1.0)? };
    /// let mut work = vec![0.0; KernelProjection::kcca_work_len(10, 10)];
    /// let (storage, storage2) = (vec![0.0; 64], vec![0.0; 64]);
    /// let (u, v) = KernelProjection::fit_kcca_in(storage, storage2, &mut work, &first, &second, 1, 1e-3)?;
    /// assert!(u.eigenvalues()[0] > 0.9 && u.eigenvalues() == v.eigenvalues());
    /// # Ok::<(), kestrel_core::Error>(())
    /// ```
    ///
    /// # Errors
    /// As [`fit_reduced_in`](Self::fit_reduced_in) for either view; `DimensionMismatch`
    /// when the views have different numbers of rows; `InvalidParam` naming `components`
    /// (more than either reduced set, or a canonical correlation numerically 0) or `mu`
    /// (not finite and positive); `NotPositiveDefinite` when a regularised covariance is
    /// singular.
    pub fn fit_kcca_in(
        storage: S,
        storage2: S,
        work: &mut [T],
        first: &View<'_, T>,
        second: &View<'_, T>,
        components: usize,
        mu: T,
    ) -> Result<(Self, Self), Error> {
        let n = row_count(first.rows, first.dim)?;
        check_len(n, row_count(second.rows, second.dim)?)?;
        let centres =
            |view: &View<'_, T>| row_count(view.centres, view.dim).map_err(|_| Error::InvalidParam { name: "centres" });
        let (m, p) = (centres(first)?, centres(second)?);
        if components > m.min(p) {
            return Err(Error::InvalidParam { name: "components" });
        }
        if !(mu.is_finite() && mu > T::ZERO) {
            return Err(Error::InvalidParam { name: "mu" });
        }
        check_capacity(KernelProjection::kcca_work_len(m, p), work.len())?;
        let mut model = Self::new_in(storage, first.kernel, first.dim, m, components)?;
        let mut model2 = Self::new_in(storage2, second.kernel, second.dim, p, components)?;
        let (b_s, rest) = work.split_at_mut(m * m);
        let (a, rest) = rest.split_at_mut(m * m);
        let (vectors, rest) = rest.split_at_mut(m * m);
        let (values, rest) = rest.split_at_mut(m);
        let (z_s, rest) = rest.split_at_mut(m);
        let (mean_s, rest) = rest.split_at_mut(m);
        let (factor_s, rest) = rest.split_at_mut(Cholesky::scalars_len(m));
        let (b_t, rest) = rest.split_at_mut(p * p);
        let (z_t, rest) = rest.split_at_mut(p);
        let (mean_t, rest) = rest.split_at_mut(p);
        let (factor_t, rest) = rest.split_at_mut(Cholesky::scalars_len(p));
        let h = rest.get_mut(..m * p).unwrap_or_default();
        let mut side_s = Side { z: z_s, mean: mean_s, covariance: b_s };
        let mut side_t = Side { z: z_t, mean: mean_t, covariance: b_t };
        moments(first, second, &mut side_s, &mut side_t, h)?;
        add_kernel_norm(&first.kernel, first.centres, mu, side_s.covariance, side_s.z)?;
        add_kernel_norm(&second.kernel, second.centres, mu, side_t.covariance, side_t.z)?;
        let chol = Cholesky::from_matrix_in(&mut *factor_t, p, side_t.covariance, p)?;
        let l = chol.packed();
        for row in h.chunks_exact_mut(p) {
            solve_lower(l, p, Triangle::Packed, row)?;
        }
        for (a_row, h_i) in a.chunks_exact_mut(m).zip(h.chunks_exact(p)) {
            for (a_ij, h_j) in a_row.iter_mut().zip(h.chunks_exact(p)) {
                *a_ij = h_i.iter().zip(h_j).fold(T::ZERO, |acc, (&x, &y)| acc + x * y);
            }
        }
        generalized_leading_eigen(a, side_s.covariance, m, components, values, vectors, factor_s)?;
        let floor = T::EPSILON * T::from_f64((m + p) as f64);
        let parts = model.parts_mut();
        parts.centres.copy_from_slice(first.centres);
        for (c, (alpha, rho)) in parts.coefficients.chunks_exact_mut(m).zip(parts.eigenvalues.iter_mut()).enumerate() {
            let eta = values.get(c).copied().unwrap_or(T::ZERO);
            if eta <= floor || !eta.is_finite() {
                return Err(Error::InvalidParam { name: "components" });
            }
            for (a, row) in alpha.iter_mut().zip(vectors.chunks_exact(m)) {
                *a = row.get(c).copied().unwrap_or(T::ZERO);
            }
            *rho = eta.sqrt();
        }
        model.finish(side_s.mean)?;
        let (_, coefficients, _, rhos) = model.parts();
        let parts2 = model2.parts_mut();
        parts2.centres.copy_from_slice(second.centres);
        let pairs = parts2.coefficients.chunks_exact_mut(p).zip(parts2.eigenvalues.iter_mut());
        for ((beta, rho2), (alpha, &rho)) in pairs.zip(coefficients.chunks_exact(m).zip(rhos)) {
            // β = L⁻ᵀ Hᵀ α / ρ = B_t⁻¹ Σ_ts α / ρ.
            beta.fill(T::ZERO);
            for (h_i, &a) in h.chunks_exact(p).zip(alpha) {
                beta.iter_mut().zip(h_i).for_each(|(b, &x)| *b += a * x);
            }
            solve_lower_transposed(l, p, Triangle::Packed, beta)?;
            beta.iter_mut().for_each(|b| *b /= rho);
            *rho2 = rho;
        }
        check_finite(model2.parts().1)?;
        model2.set_offsets(side_t.mean)?;
        Ok((model, model2))
    }
}

/// One view's reduced features `z` (scratch), their mean and covariance.
struct Side<'a, T> {
    z: &'a mut [T],
    mean: &'a mut [T],
    covariance: &'a mut [T],
}

impl<T: Real> Side<'_, T> {
    /// `z = K(centres, x)`, less the mean when `centred`.
    fn features(&mut self, view: &View<'_, T>, x: &[T], centred: bool) -> Result<(), Error> {
        view.kernel.column(x, view.centres, self.z)?;
        if centred {
            self.z.iter_mut().zip(self.mean.iter()).for_each(|(z, &k)| *z -= k);
        }
        Ok(())
    }
}

/// The means, covariances (eq. 45-46) and the cross-covariance `Σ_st` (eq. 44, `m × p`
/// into `cross`) of the two views' reduced features, in two passes (means, then centred
/// products, for accuracy in f32).
fn moments<T: Real>(
    first: &View<'_, T>,
    second: &View<'_, T>,
    s: &mut Side<'_, T>,
    t: &mut Side<'_, T>,
    cross: &mut [T],
) -> Result<(), Error> {
    let rows = || first.rows.chunks_exact(first.dim).zip(second.rows.chunks_exact(second.dim));
    let scale = T::ONE / T::from_f64((first.rows.len() / first.dim.max(1)) as f64);
    s.mean.fill(T::ZERO);
    t.mean.fill(T::ZERO);
    for (x, y) in rows() {
        s.features(first, x, false)?;
        t.features(second, y, false)?;
        s.mean.iter_mut().zip(s.z.iter()).for_each(|(a, &k)| *a += k * scale);
        t.mean.iter_mut().zip(t.z.iter()).for_each(|(a, &k)| *a += k * scale);
    }
    s.covariance.fill(T::ZERO);
    t.covariance.fill(T::ZERO);
    cross.fill(T::ZERO);
    let p = t.z.len();
    for (x, y) in rows() {
        s.features(first, x, true)?;
        t.features(second, y, true)?;
        add_product(s.covariance, s.z, s.z, scale);
        add_product(t.covariance, t.z, t.z, scale);
        add_product(cross, s.z, t.z, scale);
    }
    check_finite(s.covariance)?;
    check_finite(t.covariance)?;
    check_finite(cross.get(..s.z.len() * p).unwrap_or_default())
}

/// `out += w·a bᵀ` (`a.len() × b.len()`, row-major).
fn add_product<T: Real>(out: &mut [T], a: &[T], b: &[T], w: T) {
    for (row, &a_i) in out.chunks_exact_mut(b.len().max(1)).zip(a) {
        let wa = w * a_i;
        row.iter_mut().zip(b).for_each(|(o, &b_j)| *o += wa * b_j);
    }
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::*;
    use crate::Rng;
    use crate::kpca::DEFAULT_MU;
    use nalgebra::{DMatrix, DVector, SymmetricEigen};
    use std::vec;
    use std::vec::Vec;

    /// Two views of one latent `s` uniform in `[-1, 1]`: `x = (cos 2s, sin 2s, ε)` and
    /// `y = (s³ + ε, eˢ + ε)`, noise of deviation `noise`; returns `(s, x, y)`.
    fn two_views(n: usize, noise: f64, rng: &mut Rng) -> (Vec<f64>, Vec<f64>, Vec<f64>) {
        let s: Vec<f64> = (0..n).map(|_| rng.uniform_in(-1.0, 1.0)).collect();
        let mut e = || noise * rng.normal::<f64>();
        let x = s.iter().flat_map(|&s| [(2.0 * s).cos() + e(), (2.0 * s).sin() + e(), e()]).collect();
        let y = s.iter().flat_map(|&s| [s * s * s + e(), s.exp() + e()]).collect();
        (s, x, y)
    }

    fn convert<T: Real>(x: &[f64]) -> Vec<T> {
        x.iter().map(|&v| T::from_f64(v)).collect()
    }

    fn fit<T: Real>(
        x: &[T],
        y: &[T],
        m: usize,
        k: usize,
        mu: f64,
    ) -> (KernelProjection<T, Vec<T>>, KernelProjection<T, Vec<T>>) {
        let first = View { rows: x, centres: &x[..3 * m], dim: 3, kernel: Kernel::rbf(T::ONE).unwrap() };
        let second = View { rows: y, centres: &y[..2 * m], dim: 2, kernel: Kernel::rbf(T::ONE).unwrap() };
        let mut work = vec![T::ZERO; KernelProjection::kcca_work_len(m, m)];
        let storage = vec![T::ZERO; KernelProjection::scalars_len(3, m, k)];
        let storage2 = vec![T::ZERO; KernelProjection::scalars_len(2, m, k)];
        KernelProjection::fit_kcca_in(storage, storage2, &mut work, &first, &second, k, T::from_f64(mu)).unwrap()
    }

    /// Component `c` of every row of `rows`, in f64.
    fn variate<T: Real>(model: &KernelProjection<T, Vec<T>>, rows: &[T], c: usize) -> Vec<f64> {
        let mut y = vec![T::ZERO; model.components()];
        rows.chunks_exact(model.dim())
            .map(|x| {
                model.project(x, &mut y).unwrap();
                y[c].to_f64()
            })
            .collect()
    }

    fn correlation(a: &[f64], b: &[f64]) -> f64 {
        let n = a.len() as f64;
        let (ma, mb) = (a.iter().sum::<f64>() / n, b.iter().sum::<f64>() / n);
        let cov: f64 = a.iter().zip(b).map(|(x, y)| (x - ma) * (y - mb)).sum();
        let va: f64 = a.iter().map(|x| (x - ma).powi(2)).sum();
        let vb: f64 = b.iter().map(|y| (y - mb).powi(2)).sum();
        cov / (va * vb).sqrt()
    }

    /// The ranks of `a` (for Spearman's correlation).
    fn ranks(a: &[f64]) -> Vec<f64> {
        let mut order: Vec<usize> = (0..a.len()).collect();
        order.sort_by(|&i, &j| a[i].total_cmp(&a[j]));
        let mut out = vec![0.0; a.len()];
        for (rank, &i) in order.iter().enumerate() {
            out[i] = rank as f64;
        }
        out
    }

    /// On fresh rows of both views, the first canonical pair is strongly correlated and
    /// recovers the shared signal (Pearson, and Spearman: monotone in `s`); with the second
    /// view's rows shuffled (no shared signal) the canonical correlation collapses.
    fn check_recovers_the_latent<T: Real>() -> [f64; 5] {
        let mut rng = Rng::seed_from_u64(41);
        let (_, x, y) = two_views(400, 0.05, &mut rng);
        let (x, y): (Vec<T>, Vec<T>) = (convert(&x), convert(&y));
        let (u, v) = fit(&x, &y, 40, 2, DEFAULT_MU);
        let (s_new, x_new, y_new) = two_views(200, 0.05, &mut rng);
        let (x_new, y_new): (Vec<T>, Vec<T>) = (convert(&x_new), convert(&y_new));
        let (u0, v0) = (variate(&u, &x_new, 0), variate(&v, &y_new, 0));
        let pair = correlation(&u0, &v0);
        assert!(pair > 0.95 && u.eigenvalues()[0].to_f64() > 0.95, "ρ = {pair}, {:?}", u.eigenvalues());
        let latent = correlation(&u0, &s_new).abs().min(correlation(&v0, &s_new).abs());
        let ranked = ranks(&s_new);
        let monotone = correlation(&ranks(&u0), &ranked).abs().min(correlation(&ranks(&v0), &ranked).abs());
        assert!(latent > 0.9 && monotone > 0.93, "|corr(·, s)| ≥ {latent}, Spearman ≥ {monotone}");
        let mut shuffled: Vec<[T; 2]> = y.chunks_exact(2).map(|r| [r[0], r[1]]).collect();
        rng.shuffle(&mut shuffled);
        let (unrelated, _) = fit(&x, &shuffled.concat(), 40, 1, DEFAULT_MU);
        let unrelated = unrelated.eigenvalues()[0].to_f64();
        assert!(unrelated < 0.5, "shuffled views: ρ = {unrelated}");
        [u.eigenvalues()[0].to_f64(), pair, latent, monotone, unrelated]
    }

    #[test]
    fn the_first_canonical_pair_recovers_the_shared_signal() {
        std::eprintln!("ρ₁, corr(u, v) on new rows, min |corr(·, s)|, min Spearman, ρ₁ of shuffled views:");
        std::eprintln!("f64 {:?}", check_recovers_the_latent::<f64>());
        std::eprintln!("f32 {:?}", check_recovers_the_latent::<f32>());
    }

    /// The regularised covariance `Σ + μ(tr Σ/tr G)G + √ε(tr Σ/m)I` of one view (`G` the
    /// ridged Gram matrix) and its centred reduced features `n × m`, computed densely.
    fn dense_view(rows: &[f64], centres: &[f64], dim: usize, mu: f64, eps: f64) -> (DMatrix<f64>, DMatrix<f64>) {
        let (n, m) = (rows.len() / dim, centres.len() / dim);
        let k = |a: &[f64], b: &[f64]| (-a.iter().zip(b).map(|(x, y)| (x - y).powi(2)).sum::<f64>()).exp();
        let z = DMatrix::from_fn(n, m, |i, j| k(&rows[i * dim..][..dim], &centres[j * dim..][..dim]));
        let mean = z.row_mean();
        let zc = DMatrix::from_fn(n, m, |i, j| z[(i, j)] - mean[j]);
        let sigma = zc.transpose() * &zc / n as f64;
        let gram = DMatrix::from_fn(m, m, |i, j| k(&centres[i * dim..][..dim], &centres[j * dim..][..dim]));
        let gram = &gram + DMatrix::identity(m, m) * (eps.sqrt() * gram.trace() / m as f64);
        let ridge = DMatrix::identity(m, m) * (eps.sqrt() * sigma.trace() / m as f64);
        let b = &sigma + &gram * (mu * sigma.trace() / gram.trace()) + ridge;
        (b, zc)
    }

    /// Eq. 48 regularised, solved densely by nalgebra: `ρ` and the training variates of
    /// both views match the fit's.
    fn check_against_nalgebra<T: Real>(tol: f64) {
        let mut rng = Rng::seed_from_u64(42);
        let (_, x, y) = two_views(50, 0.1, &mut rng);
        let (m, k, mu, eps) = (12, 3, 1e-2, T::EPSILON.to_f64());
        let (b_s, zs) = dense_view(&x, &x[..3 * m], 3, mu, eps);
        let (b_t, zt) = dense_view(&y, &y[..2 * m], 2, mu, eps);
        let n = 50.0;
        let cross = zs.transpose() * &zt / n;
        let b_t_inv = b_t.clone().try_inverse().unwrap();
        let a = &cross * &b_t_inv * cross.transpose();
        let l_inv = b_s.clone().cholesky().unwrap().l().try_inverse().unwrap();
        let eigen = SymmetricEigen::new(&l_inv * a * l_inv.transpose());
        let mut order: Vec<usize> = (0..m).collect();
        order.sort_by(|&i, &j| eigen.eigenvalues[j].total_cmp(&eigen.eigenvalues[i]));
        let (u, v) = fit::<T>(&convert(&x), &convert(&y), m, k, mu);
        for (c, &index) in order.iter().take(k).enumerate() {
            let rho = eigen.eigenvalues[index].sqrt();
            assert!((u.eigenvalues()[c].to_f64() - rho).abs() <= tol, "ρ_{c}: {:?} vs {rho}", u.eigenvalues());
            assert_eq!(u.eigenvalues()[c], v.eigenvalues()[c]);
            let alpha: DVector<f64> = l_inv.transpose() * eigen.eigenvectors.column(index);
            let beta = &b_t_inv * cross.transpose() * &alpha / rho;
            let (ref_u, ref_v) = (&zs * alpha, &zt * beta);
            let (ours_u, ours_v) =
                (DVector::from_vec(variate(&u, &convert(&x), c)), DVector::from_vec(variate(&v, &convert(&y), c)));
            let sign = if (&ours_u - &ref_u).norm() < (&ours_u + &ref_u).norm() { 1.0 } else { -1.0 };
            let (error_u, error_v) = ((&ours_u - &ref_u * sign).norm(), (&ours_v - &ref_v * sign).norm());
            assert!(error_u <= tol * ref_u.norm(), "view s, component {c}: {error_u} of {}", ref_u.norm());
            assert!(error_v <= tol * ref_v.norm(), "view t, component {c}: {error_v} of {}", ref_v.norm());
        }
    }

    #[test]
    fn kcca_matches_a_dense_nalgebra_solve() {
        check_against_nalgebra::<f64>(1e-7);
        check_against_nalgebra::<f32>(2e-3);
    }

    #[test]
    fn bad_views_and_parameters_are_errors() {
        let x = [0.0, 0.0, 1.0, 0.0, 0.0, 1.0, 1.0, 1.0];
        let y = [0.0, 1.0, 2.0, 3.0];
        let kernel = Kernel::rbf(1.0).unwrap();
        let mut work = vec![0.0; KernelProjection::kcca_work_len(4, 4)];
        let first = View { rows: &x, centres: &x, dim: 2, kernel };
        let second = View { rows: &y, centres: &y, dim: 1, kernel };
        let fit = |first: &View<'_, f64>, second: &View<'_, f64>, k, mu, work: &mut [f64]| {
            KernelProjection::fit_kcca_in(vec![0.0; 64], vec![0.0; 64], work, first, second, k, mu).err()
        };
        assert_eq!(fit(&first, &second, 1, 1e-3, &mut work), None);
        assert_eq!(fit(&first, &second, 5, 1e-3, &mut work), Some(Error::InvalidParam { name: "components" }));
        assert_eq!(fit(&first, &second, 1, f64::NAN, &mut work), Some(Error::InvalidParam { name: "mu" }));
        let short = View { rows: &y[..3], ..second };
        assert_eq!(fit(&first, &short, 1, 1e-3, &mut work), Some(Error::DimensionMismatch { expected: 4, got: 3 }));
        let misshapen = View { centres: &x[..3], ..first };
        assert_eq!(fit(&misshapen, &second, 1, 1e-3, &mut work), Some(Error::InvalidParam { name: "centres" }));
        let nan = [0.0, f64::NAN, 2.0, 3.0];
        assert_eq!(fit(&first, &View { rows: &nan, ..second }, 1, 1e-3, &mut work), Some(Error::NonFinite));
        assert!(matches!(fit(&first, &second, 1, 1e-3, &mut work[..20]), Some(Error::CapacityExceeded { .. })));
        let model = KernelProjection::fit_kcca_in(vec![0.0; 3], vec![0.0; 64], &mut work, &first, &second, 1, 1e-3);
        assert!(matches!(model, Err(Error::CapacityExceeded { .. })));
    }
}
