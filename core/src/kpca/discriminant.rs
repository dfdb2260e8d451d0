//! Supervised kernel projections on the reduced kernel: kernel sliced inverse regression
//! (KSIR, seed 003 §4.2, eq. 38-40) and the kernel Fisher discriminant (KFD, seed 002
//! §5.2, eq. 76-78), one generalized eigenproblem
//!
//! `Σ_B α = λ (D + μ·(tr D / tr K̃)·K̃) α`,  `K̃ = K(Ã, Ã)`,
//!
//! on the reduced features `z_i = K(Ã, x_i)` grouped into `J` slices (classes, or ranges
//! of a sorted response). `Σ_B = (1/n) Σ_j n_j (k̄_j − k̃)(k̄_j − k̃)ᵀ` is the between-slice
//! covariance of eq. 40 (`k̄_j` the slice means, `k̃` the mean). The denominator `D`:
//!
//! - [`Criterion::Sir`]: the covariance `Σ` of eq. 37 (eq. 40: between-slice variance
//!   relative to the total);
//! - [`Criterion::Fisher`]: the within-slice covariance `Σ_j (1/n_j) Σ_{i∈j}
//!   (z_i − k̄_j)(z_i − k̄_j)ᵀ` — the sum of the class variances of eq. 76-77, whose
//!   numerator `(μ₊ − μ₋)²` is, for two classes, `Σ_B` up to the factor `n₊n₋/n²`.
//!
//! **Regularisation.** `D` is singular (rank below `n`, and near-duplicate centres) —
//! seed 002 eq. 78 adds the kernel matrix, the feature-space norm `‖w‖² = αᵀK̃α`; we weight
//! it `μ·tr D/tr K̃` so that `μ` (default [`DEFAULT_MU`]) does not depend on the kernel's
//! or the data's scale (`K̃` and `D` also get a relative ridge `√ε·tr/m` on their
//! diagonals, which keeps the sum numerically definite in f32; KCCA shares the whole
//! regulariser). The eigenvectors are normalised by the denominator, `αᵀ B α = 1`
//! (seed 003: `β_kᵀΣβ_l = δ_kl`), and stored with the offsets `αᵀk̃`, so the projection is
//! the one of [`KernelProjection`]; its eigenvalues are `λ = αᵀΣ_Bα`, the
//! between-slice variance of each unit component. At most `J − 1` are positive (the rank
//! of `Σ_B`), so `components < J`.
//!
//! Cost: `2nm` kernel evaluations, `n·m²` for the covariances, `≈ 12m³` for the pencil
//! (past 200 centres its leading pairs by Lanczos first, `O(s·m²)`: `linalg::generalized`).
//! Work: [`KernelProjection::discriminant_work_len`]`(m, J)` scalars, independent of `n`.

use super::{KernelProjection, add_kernel_norm, row_count};
use crate::linalg::generalized_leading_eigen;
use crate::storage::{Storage, check_capacity};
use crate::{Error, Kernel, Real};

/// The default weight `μ` of the kernel-norm regulariser.
pub const DEFAULT_MU: f64 = 1e-3;

/// Which covariance the between-slice covariance is measured against.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Criterion {
    /// KSIR: the total covariance (seed 003 eq. 40).
    Sir,
    /// KFD: the within-slice covariance (seed 002 eq. 77-78).
    Fisher,
}

impl KernelProjection<(), ()> {
    /// Work scalars of [`fit_discriminant_in`](KernelProjection::fit_discriminant_in) with
    /// `m` centres and `slices` slices: [`reduced_work_len`](Self::reduced_work_len)`(m)`,
    /// the `J·m` slice means and the `J` slice sizes.
    pub const fn discriminant_work_len(m: usize, slices: usize) -> usize {
        let per_slice = slices.saturating_mul(m.saturating_add(1));
        KernelProjection::reduced_work_len(m).saturating_add(per_slice)
    }
}

impl<T: Real, S: Storage<T>> KernelProjection<T, S> {
    /// Fits KSIR or KFD (by `criterion`) on `rows` through `centres` (row-major, `dim`
    /// columns), row `i` in slice `slices[i] < J`, keeping `components < J` components;
    /// `work` holds [`KernelProjection::discriminant_work_len`]`(m, J)` scalars.
    ///
    /// # Errors
    /// As [`fit_reduced_in`](Self::fit_reduced_in); `DimensionMismatch` when `slices` does
    /// not give one slice per row; `InvalidParam` naming `slices` (an empty slice below the
    /// largest, or fewer than 2), `components` (`J` or more) or `mu` (not finite and
    /// positive).
    #[allow(clippy::too_many_arguments, reason = "the data, the reduced set and the criterion")]
    pub fn fit_discriminant_in(
        storage: S,
        work: &mut [T],
        kernel: Kernel<T>,
        rows: &[T],
        slices: &[usize],
        centres: &[T],
        dim: usize,
        components: usize,
        criterion: Criterion,
        mu: T,
    ) -> Result<Self, Error> {
        let n = row_count(rows, dim)?;
        let m = row_count(centres, dim).map_err(|_| Error::InvalidParam { name: "centres" })?;
        crate::error::check_len(n, slices.len())?;
        let j = slices.iter().max().map_or(0, |&s| s + 1);
        if j < 2 {
            return Err(Error::InvalidParam { name: "slices" });
        }
        if components >= j {
            return Err(Error::InvalidParam { name: "components" });
        }
        if !(mu.is_finite() && mu > T::ZERO) {
            return Err(Error::InvalidParam { name: "mu" });
        }
        check_capacity(KernelProjection::discriminant_work_len(m, j), work.len())?;
        let mut model = Self::new_in(storage, kernel, dim, m, components)?;
        let (between, rest) = work.split_at_mut(m * m);
        let (denominator, rest) = rest.split_at_mut(m * m);
        let (vectors, rest) = rest.split_at_mut(m * m);
        let (values, rest) = rest.split_at_mut(m);
        let (z, rest) = rest.split_at_mut(m);
        let (mean, rest) = rest.split_at_mut(m);
        let (factor, rest) = rest.split_at_mut(crate::Cholesky::scalars_len(m));
        let (slice_means, rest) = rest.split_at_mut(j * m);
        let sizes = rest.get_mut(..j).unwrap_or_default();
        let data = Slices { kernel: &kernel, rows, slices, centres, dim };
        data.means(z, mean, slice_means, sizes)?;
        data.between(mean, slice_means, sizes, between);
        data.denominator(criterion, mean, slice_means, sizes, z, denominator)?;
        add_kernel_norm(&kernel, centres, mu, denominator, z)?;
        generalized_leading_eigen(between, denominator, m, components, values, vectors, factor)?;
        let parts = model.parts_mut();
        parts.centres.copy_from_slice(centres);
        for (c, (alpha, value)) in parts.coefficients.chunks_exact_mut(m).zip(parts.eigenvalues.iter_mut()).enumerate()
        {
            for (a, row) in alpha.iter_mut().zip(vectors.chunks_exact(m)) {
                *a = row.get(c).copied().unwrap_or(T::ZERO);
            }
            *value = values.get(c).copied().unwrap_or(T::ZERO).max_of(T::ZERO);
        }
        model.finish(mean)?;
        Ok(model)
    }
}

/// The rows, their slices and the reduced set.
struct Slices<'a, T> {
    kernel: &'a Kernel<T>,
    rows: &'a [T],
    slices: &'a [usize],
    centres: &'a [T],
    dim: usize,
}

impl<T: Real> Slices<'_, T> {
    /// Each row's slice and reduced features `z_i` (written to `z`), in turn.
    fn for_each(&self, z: &mut [T], mut f: impl FnMut(usize, &[T])) -> Result<(), Error> {
        for (x, &s) in self.rows.chunks_exact(self.dim).zip(self.slices) {
            self.kernel.column(x, self.centres, z)?;
            f(s, z);
        }
        Ok(())
    }

    /// The mean `k̃`, the slice means `k̄_j` and the slice sizes `n_j`.
    fn means(&self, z: &mut [T], mean: &mut [T], slice_means: &mut [T], sizes: &mut [T]) -> Result<(), Error> {
        let m = mean.len();
        mean.fill(T::ZERO);
        slice_means.fill(T::ZERO);
        sizes.fill(T::ZERO);
        self.for_each(z, |s, z| {
            mean.iter_mut().zip(z).for_each(|(a, &k)| *a += k);
            let slice = slice_means.get_mut(s * m..(s + 1) * m).unwrap_or_default();
            slice.iter_mut().zip(z).for_each(|(a, &k)| *a += k);
            if let Some(size) = sizes.get_mut(s) {
                *size += T::ONE;
            }
        })?;
        if sizes.contains(&T::ZERO) {
            return Err(Error::InvalidParam { name: "slices" });
        }
        let n = T::from_f64(self.slices.len() as f64);
        mean.iter_mut().for_each(|a| *a /= n);
        for (slice, &size) in slice_means.chunks_exact_mut(m).zip(sizes.iter()) {
            slice.iter_mut().for_each(|a| *a /= size);
        }
        Ok(())
    }

    /// `Σ_B = (1/n) Σ_j n_j (k̄_j − k̃)(k̄_j − k̃)ᵀ` (eq. 40).
    fn between(&self, mean: &[T], slice_means: &[T], sizes: &[T], between: &mut [T]) {
        let m = mean.len();
        let n = T::from_f64(self.slices.len() as f64);
        between.fill(T::ZERO);
        for (slice, &size) in slice_means.chunks_exact(m).zip(sizes) {
            let weight = size / n;
            add_outer(between, slice, mean, weight);
        }
    }

    /// The denominator's covariance: total (`Sir`) or within-slice (`Fisher`).
    fn denominator(
        &self,
        criterion: Criterion,
        mean: &[T],
        slice_means: &[T],
        sizes: &[T],
        z: &mut [T],
        out: &mut [T],
    ) -> Result<(), Error> {
        let m = mean.len();
        let n = T::from_f64(self.slices.len() as f64);
        out.fill(T::ZERO);
        self.for_each(z, |s, z| match criterion {
            Criterion::Sir => add_outer(out, z, mean, T::ONE / n),
            Criterion::Fisher => {
                let slice = slice_means.get(s * m..(s + 1) * m).unwrap_or_default();
                let size = sizes.get(s).copied().unwrap_or(T::ONE);
                add_outer(out, z, slice, T::ONE / size);
            }
        })
    }
}

/// `out += w·(a − b)(a − b)ᵀ` (`m × m`, `m = a.len()`).
fn add_outer<T: Real>(out: &mut [T], a: &[T], b: &[T], w: T) {
    let m = a.len();
    for (row, (&a_i, &b_i)) in out.chunks_exact_mut(m).zip(a.iter().zip(b)) {
        let d_i = w * (a_i - b_i);
        for (o, (&a_j, &b_j)) in row.iter_mut().zip(a.iter().zip(b)) {
            *o += d_i * (a_j - b_j);
        }
    }
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::*;
    use crate::Rng;
    use std::vec;
    use std::vec::Vec;

    /// Three classes on concentric rings in 2-D (not linearly separable), `n` rows.
    fn rings(n: usize, rng: &mut Rng) -> (Vec<f64>, Vec<usize>) {
        let mut rows = Vec::new();
        let slices: Vec<usize> = (0..n).map(|i| i % 3).collect();
        for &s in &slices {
            let t: f64 = rng.uniform_in(0.0, core::f64::consts::TAU);
            let r = 1.0 + s as f64 + rng.uniform_in(-0.2, 0.2);
            rows.extend([r * t.cos(), r * t.sin()]);
        }
        (rows, slices)
    }

    /// The fraction of rows whose first component puts them nearest their own class's mean.
    fn nearest_mean_accuracy<T: Real>(criterion: Criterion) -> f64 {
        let mut rng = Rng::seed_from_u64(31);
        let (rows, slices) = rings(300, &mut rng);
        let rows: Vec<T> = rows.iter().map(|&x| T::from_f64(x)).collect();
        let centres = rows[..60].to_vec();
        let mut work = vec![T::ZERO; KernelProjection::discriminant_work_len(30, 3)];
        let storage = vec![T::ZERO; KernelProjection::scalars_len(2, 30, 2)];
        let kernel = Kernel::rbf(T::from_f64(0.5)).unwrap();
        let mu = T::from_f64(DEFAULT_MU);
        let model = KernelProjection::fit_discriminant_in(
            storage, &mut work, kernel, &rows, &slices, &centres, 2, 2, criterion, mu,
        )
        .unwrap();
        let y: Vec<f64> = rows
            .chunks_exact(2)
            .map(|x| {
                let mut out = [T::ZERO; 2];
                model.project(x, &mut out).unwrap();
                out[0].to_f64()
            })
            .collect();
        let means: Vec<f64> = (0..3)
            .map(|c| {
                let v: Vec<f64> = y.iter().zip(&slices).filter(|(_, s)| **s == c).map(|(y, _)| *y).collect();
                v.iter().sum::<f64>() / v.len() as f64
            })
            .collect();
        let nearest = |v: f64| (0..3).min_by(|&a, &b| (v - means[a]).abs().total_cmp(&(v - means[b]).abs())).unwrap();
        y.iter().zip(&slices).filter(|(v, s)| nearest(**v) == **s).count() as f64 / y.len() as f64
    }

    #[test]
    fn one_component_separates_three_concentric_rings() {
        for criterion in [Criterion::Sir, Criterion::Fisher] {
            assert!(nearest_mean_accuracy::<f64>(criterion) > 0.97, "{criterion:?}");
            assert!(nearest_mean_accuracy::<f32>(criterion) > 0.97, "{criterion:?}");
        }
    }

    #[test]
    fn bad_slices_and_parameters_are_errors() {
        let rows = [0.0, 0.0, 1.0, 0.0, 0.0, 1.0, 1.0, 1.0];
        let mut work = vec![0.0; KernelProjection::discriminant_work_len(4, 3)];
        let kernel = Kernel::rbf(1.0).unwrap();
        let fit = |slices: &[usize], k, mu, work: &mut [f64]| {
            KernelProjection::fit_discriminant_in(
                vec![0.0; 64],
                work,
                kernel,
                &rows,
                slices,
                &rows,
                2,
                k,
                Criterion::Sir,
                mu,
            )
            .err()
        };
        assert_eq!(fit(&[0, 0, 0, 0], 1, 1e-3, &mut work), Some(Error::InvalidParam { name: "slices" }));
        assert_eq!(fit(&[0, 2, 0, 2], 1, 1e-3, &mut work), Some(Error::InvalidParam { name: "slices" }));
        assert_eq!(fit(&[0, 1, 0, 1], 1, 1e-3, &mut work), None);
        assert_eq!(fit(&[0, 1, 0, 1], 2, 1e-3, &mut work), Some(Error::InvalidParam { name: "components" }));
        assert_eq!(fit(&[0, 1, 0, 1], 1, 0.0, &mut work), Some(Error::InvalidParam { name: "mu" }));
        assert!(matches!(fit(&[0, 1, 0], 1, 1e-3, &mut work), Some(Error::DimensionMismatch { .. })));
        assert!(matches!(fit(&[0, 1, 0, 1], 1, 1e-3, &mut work[..10]), Some(Error::CapacityExceeded { .. })));
    }
}
