//! The reduced set of the kernel learners trained on a whole data set (the reduced-kernel
//! SVM, kernel ridge regression): choosing the centres `Ã` (IRSVM, seed 003 §3.1, or at
//! random), their features `K(A, Ã)` and the Nyström whitening `L⁻¹K(Ã, x)` with
//! `LLᵀ = K(Ã, Ã)` (seed 000 §3.4; seed 003 eq. 10-11).
//!
//! IRSVM keeps its centres in the order it chose them and `L` is lower triangular, so the
//! first `m'` columns of the whitened features are the whitened features of the first `m'`
//! centres alone: one selection serves every smaller reduced set.
//!
//! Memory: the selection's buffers ([`selection_bytes`]), the `n × m` features and the
//! packed factor.

use kestrel_core::cholesky::Cholesky;
use kestrel_core::reduced_set::{Irsvm, IrsvmParams, select_random};
use kestrel_core::{Kernel, Real, Rng};

use super::TrainError;
use crate::limits::{reserve, zeroed};

/// How the centres are chosen.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Selection {
    /// IRSVM with threshold `δ = rms·√n·k̄` (`rms`: the root-mean-square residual per
    /// point, relative to the kernel's mean `k̄ = Σᵢ k(xᵢ, xᵢ)/n`, [`kernel_scale`]).
    Irsvm {
        /// `δ/(√n·k̄)`.
        rms: f64,
    },
    /// A uniform random subset.
    Random,
}

/// Bytes the selection holds for `n` rows of `dim` features and `capacity` centres.
pub fn selection_bytes<T>(n: usize, dim: usize, capacity: usize, selection: Selection) -> usize {
    match selection {
        Selection::Irsvm { .. } => Irsvm::bytes::<T>(n, capacity),
        Selection::Random => capacity
            .saturating_mul(dim)
            .saturating_mul(size_of::<T>())
            .saturating_add(capacity.saturating_mul(size_of::<usize>())),
    }
}

/// Row `i` of a row-major matrix of `dim` columns.
pub fn row<T>(points: &[T], dim: usize, i: usize) -> Result<&[T], kestrel_core::Error> {
    let len = points.len() / dim.max(1);
    points.get(i * dim..(i + 1) * dim).ok_or(kestrel_core::Error::IndexOutOfRange { index: i, len })
}

/// The rows `chosen` of `points`, one after the other (`chosen.len() × dim`).
pub fn centre_rows<T: Real>(points: &[T], dim: usize, chosen: &[usize]) -> Result<Vec<T>, TrainError> {
    let mut centres = Vec::new();
    reserve(&mut centres, chosen.len().saturating_mul(dim), "the centres")?;
    for &i in chosen {
        centres.extend_from_slice(row(points, dim, i)?);
    }
    Ok(centres)
}

/// A chosen reduced set: its centres' rows (`m × d`) and every point's features
/// `K(x, Ã)` (row-major `n × m`).
pub struct ReducedSet<T> {
    /// The centres, row-major `m × d`.
    pub centres: Vec<T>,
    /// The features, row-major `n × m`.
    pub features: Vec<T>,
    /// Centres kept, at least one.
    pub m: usize,
}

/// At most `capacity` centres chosen from `points` (row-major, `dim` columns) with their
/// features.
///
/// # Errors
/// [`TrainError::NoCentres`] when the selection kept none; the core's errors.
pub fn select<T: Real>(
    points: &[T],
    dim: usize,
    capacity: usize,
    kernel: &Kernel<T>,
    selection: Selection,
    rng: &mut Rng,
) -> Result<ReducedSet<T>, TrainError> {
    let n = points.len() / dim;
    let (centres, features, m) = match selection {
        Selection::Irsvm { rms } => {
            let delta = T::from_f64(rms * (n as f64).sqrt() * kernel_scale(points, dim, kernel));
            // The paper's initial set, or as much of it as the capacity holds (one centre).
            let initial = IrsvmParams::<T>::INITIAL.min(capacity.max(1));
            let selection = Irsvm::select_in(
                zeroed(Irsvm::scalars_len(n, capacity), "the selection")?,
                Cholesky::new_in(zeroed(Cholesky::scalars_len(capacity), "the selection")?, capacity)?,
                zeroed(Irsvm::indices_len(n, capacity), "the selection")?,
                points,
                dim,
                kernel,
                IrsvmParams::new(delta).initial(initial).check()?,
                rng,
            )?;
            let m = selection.len();
            let mut features = Vec::new();
            reserve(&mut features, n * m, "the features")?;
            for i in 0..n {
                features.extend_from_slice(selection.features(i).unwrap_or(&[]));
            }
            let centres = centre_rows(points, dim, selection.indices())?;
            (centres, features, m)
        }
        Selection::Random => {
            let mut chosen = zeroed(capacity, "the selection")?;
            select_random(n, rng, &mut chosen)?;
            let mut features = zeroed(n * capacity, "the features")?;
            let centres = centre_rows(points, dim, &chosen)?;
            for (x, row) in points.chunks_exact(dim).zip(features.chunks_exact_mut(capacity)) {
                kernel.column(x, &centres, row)?;
            }
            (centres, features, capacity)
        }
    };
    if m == 0 {
        return Err(TrainError::NoCentres);
    }
    Ok(ReducedSet { centres, features, m })
}

/// The scale of `kernel`'s values on `points`: the mean of `k(xᵢ, xᵢ)` (1 for the Gaussian
/// and Laplacian kernels), or 1 when that is not a positive finite number. IRSVM's
/// threshold is a distance between kernel columns, whose entries `k(xᵢ, x)` are at most
/// `√(k(xᵢ, xᵢ)k(x, x))`: measured in this unit it means the same at every width of a
/// polynomial or linear kernel — scaling `k` by `c` scales every residual and `k̄` by `c`,
/// and the same centres are chosen (without it a small width makes every residual fall
/// under an absolute `δ`, and two centres are chosen). O(n·d).
pub fn kernel_scale<T: Real>(points: &[T], dim: usize, kernel: &Kernel<T>) -> f64 {
    let n = points.len() / dim.max(1);
    let sum: f64 = points.chunks_exact(dim.max(1)).map(|x| kernel.diagonal(x).to_f64()).sum();
    let mean = sum / n.max(1) as f64;
    if mean > 0.0 && mean.is_finite() { mean } else { 1.0 }
}

/// Factors `K(Ã, Ã) = LLᵀ` (with a jitter of `m·ε` on the diagonal, relative to its
/// largest entry, so near-duplicate centres stay factorable) and replaces each feature row
/// `z` by `L⁻¹z`.
pub fn whiten<T: Real>(
    kernel: &Kernel<T>,
    centres: &[T],
    dim: usize,
    features: &mut [T],
    m: usize,
) -> Result<Cholesky<T, Vec<T>>, TrainError> {
    let centre = |i: usize| centres.get(i * dim..(i + 1) * dim).unwrap_or_default();
    let largest = (0..m).map(|i| kernel.diagonal(centre(i)).to_f64()).fold(0.0, f64::max);
    let jitter = T::from_f64(largest * m as f64 * T::EPSILON.to_f64());
    let factor = Cholesky::factor_in(zeroed(Cholesky::scalars_len(m), "the factor")?, m, m, |i, j| {
        let k = kernel.eval(centre(i), centre(j)).unwrap_or(T::ZERO);
        if i == j { k + jitter } else { k }
    })?;
    factor.solve_lower_rows_in_place(features)?;
    Ok(factor)
}

#[cfg(test)]
mod tests {
    use super::*;
    use kestrel_core::linalg::dot;

    #[test]
    fn whitened_features_are_the_nystrom_features() {
        // L⁻¹z with LLᵀ = K(Ã, Ã): their inner products reproduce the kernel on the centres.
        let kernel = Kernel::rbf(0.7).unwrap();
        let centres = [0.0, 0.0, 1.0, 0.5, -0.5, 1.0, 0.3, -0.8];
        let mut features = vec![0.0; 4 * 4];
        for (x, row) in centres.chunks_exact(2).zip(features.chunks_exact_mut(4)) {
            kernel.column(x, &centres, row).unwrap();
        }
        whiten(&kernel, &centres, 2, &mut features, 4).unwrap();
        for (i, a) in features.chunks_exact(4).enumerate() {
            for (j, b) in features.chunks_exact(4).enumerate() {
                let k = kernel.eval(&centres[2 * i..2 * i + 2], &centres[2 * j..2 * j + 2]).unwrap();
                assert!((dot(a, b).unwrap() - k).abs() < 1e-9, "({i}, {j})");
            }
        }
    }

    /// IRSVM's threshold is relative to the kernel's scale: a homogeneous polynomial kernel
    /// chooses the same centres at every width (its values scale by `γ^p`), and as many as
    /// the Gaussian kernel's unit scale asks for, not the two an absolute threshold keeps
    /// once every value is small.
    #[test]
    fn the_threshold_follows_the_kernel_scale() {
        let mut rng = Rng::seed_from_u64(3);
        let points: Vec<f64> = (0..400).map(|_| rng.uniform_in(-1.0, 1.0)).collect();
        let chosen = |gamma: f64| {
            let kernel = Kernel::polynomial(2, gamma, 0.0).unwrap();
            let set = select(&points, 4, 12, &kernel, Selection::Irsvm { rms: 1e-3 }, &mut Rng::seed_from_u64(1));
            set.unwrap().centres
        };
        let wide = chosen(1.0);
        // Every degree-2 monomial of 4 features is 10 directions: that many centres.
        assert_eq!(wide.len() / 4, 10);
        for gamma in [1e-4, 1e-2, 30.0] {
            assert_eq!(chosen(gamma), wide, "gamma {gamma}");
        }
        let (rbf, linear) = (Kernel::rbf(0.5).unwrap(), Kernel::<f64>::linear());
        assert_eq!(kernel_scale(&points, 4, &rbf), 1.0);
        let mean_square = points.iter().map(|x| x * x).sum::<f64>() / 100.0;
        assert!((kernel_scale(&points, 4, &linear) - mean_square).abs() < 1e-12);
        assert_eq!(kernel_scale(&[0.0; 8], 4, &linear), 1.0, "no scale: the absolute threshold");
    }

    /// A capacity of one centre holds one: the initial set shrinks to it.
    #[test]
    fn one_centre_is_a_reduced_set_too() {
        let points: Vec<f64> = (0..40).map(|i| f64::from(i * 7 % 11) / 5.0).collect();
        let kernel = Kernel::rbf(0.5).unwrap();
        for capacity in [1, 2, 3] {
            let set = select(&points, 2, capacity, &kernel, Selection::Irsvm { rms: 1e-3 }, &mut Rng::seed_from_u64(1));
            let set = set.unwrap();
            assert!(set.m >= 1 && set.m <= capacity, "capacity {capacity}: {}", set.m);
            assert_eq!((set.centres.len(), set.features.len()), (2 * set.m, 20 * set.m));
        }
    }
}
