//! Centred kernel-target alignment: how well a kernel's similarities agree with the
//! targets' (seed 002 eq. 51-52, with the feature-space centring of eq. 55), the cheap
//! criterion for a kernel's width.
//!
//! For a kernel matrix `K` and targets `T` (`n × t`: one column of `±1` for two classes,
//! one-hot columns for `t` classes, the values for regression), the ideal similarity is
//! `Y = TTᵀ` (eq. 52 for `t = 1`: `yyᵀ`). Both are centred in feature space,
//! `K_c = HKH`, `Y_c = HYH`, `H = I − 11ᵀ/n` (eq. 55), so that a constant offset in the
//! kernel or the targets does not count as agreement, and the alignment is the cosine of
//! eq. 51 between them:
//!
//! `A = ⟨K_c, Y_c⟩_F / (‖K_c‖_F·‖Y_c‖_F)`, in `[−1, 1]`.
//!
//! Since `H` is idempotent, `⟨K_c, Y_c⟩ = Σ_ij (K_c)_ij⟨t_i, t_j⟩` and
//! `‖Y_c‖_F = ‖T̃ᵀT̃‖_F` with `T̃ = HT`, so nothing `n × n` is formed: `K_c`'s entries come
//! from `K_ij` and the row sums `r` of `K`, `(K_c)_ij = K_ij − r_i/n − r_j/n + Σr/n²`.
//!
//! Cost: `n²` kernel evaluations (two passes over the `n(n+1)/2` pairs), O(n²·(d + t));
//! memory: the `n` row sums, caller storage. Run it on a sample of a large set.
//! [`centred_alignment_by`] takes the kernel's values from the caller instead: a search
//! over the width computes each pair's [`Kernel::pair_statistic`] once and the values at
//! each width from it ([`Kernel::value_of`]), the same values bit for bit.

use crate::error::check_len;
use crate::real::{check_finite, finite};
use crate::{Error, Kernel, Real};

/// The centred alignment of `kernel` on `points` (row-major `n × dim`) with `targets`
/// (row-major `n × outputs`); `row_sums` (`n` scalars) is scratch. A kernel whose centred
/// matrix is zero (every point alike to it) has alignment 0.
///
/// # Errors
/// `InvalidParam` naming `n` (fewer than 2 rows), `outputs` (0) or `targets` (constant:
/// no target similarity to align with); `DimensionMismatch` for slices of the wrong
/// length; `NonFinite` for NaN/∞ in the input or a kernel value that overflows.
///
/// # Examples
/// ```
/// use kestrel_core::{Kernel, alignment::centred_alignment};
/// // Two tight clusters with different labels: a narrow kernel sees them, a kernel far too
/// // wide for the data sees one blob.
/// let points = [0.0, 0.1, 5.0, 5.1];
/// let labels = [1.0, 1.0, -1.0, -1.0];
/// let mut sums = [0.0; 4];
/// let narrow = centred_alignment(&Kernel::rbf(1.0)?, &points, 1, &labels, 1, &mut sums)?;
/// let wide = centred_alignment(&Kernel::rbf(1e-6)?, &points, 1, &labels, 1, &mut sums)?;
/// assert!(narrow > 0.99 && narrow > wide);
/// # Ok::<(), kestrel_core::Error>(())
/// ```
pub fn centred_alignment<T: Real>(
    kernel: &Kernel<T>,
    points: &[T],
    dim: usize,
    targets: &[T],
    outputs: usize,
    row_sums: &mut [T],
) -> Result<T, Error> {
    check_len(row_sums.len().saturating_mul(dim), points.len())?;
    check_finite(points)?;
    let row = |i: usize| points.get(i * dim..(i + 1) * dim).unwrap_or_default();
    centred_alignment_by(targets, outputs, row_sums, |i, j| kernel.eval(row(i), row(j)))
}

/// [`centred_alignment`] of the kernel whose value for rows `i` and `j ≤ i` is
/// `kernel_value(i, j)` (called twice per pair), for `n = row_sums.len()` rows with
/// `targets` (row-major `n × outputs`); `row_sums` is scratch.
///
/// # Errors
/// As [`centred_alignment`], and whatever `kernel_value` returns.
///
/// # Examples
/// ```
/// use kestrel_core::{Kernel, alignment::{centred_alignment, centred_alignment_by}};
/// let (points, labels) = ([0.0, 0.1, 5.0, 5.1], [1.0, 1.0, -1.0, -1.0]);
/// let base = Kernel::rbf(1.0)?;
/// let distance = |i: usize, j: usize| base.pair_statistic(&points[i..=i], &points[j..=j]);
/// let mut sums = [0.0; 4];
/// for gamma in [0.01, 1.0, 100.0] {
///     let k = Kernel::rbf(gamma)?;
///     let by_values = centred_alignment_by(&labels, 1, &mut sums, |i, j| Ok(k.value_of(distance(i, j)?)))?;
///     assert_eq!(by_values, centred_alignment(&k, &points, 1, &labels, 1, &mut sums)?);
/// }
/// # Ok::<(), kestrel_core::Error>(())
/// ```
pub fn centred_alignment_by<T: Real>(
    targets: &[T],
    outputs: usize,
    row_sums: &mut [T],
    mut kernel_value: impl FnMut(usize, usize) -> Result<T, Error>,
) -> Result<T, Error> {
    let n = row_sums.len();
    if n < 2 {
        return Err(Error::InvalidParam { name: "n" });
    }
    if outputs == 0 {
        return Err(Error::InvalidParam { name: "outputs" });
    }
    check_len(n.saturating_mul(outputs), targets.len())?;
    check_finite(targets)?;
    let target_norm = centred_gram_norm(targets, n, outputs);
    if target_norm <= T::ZERO {
        return Err(Error::InvalidParam { name: "targets" });
    }
    let target = |i: usize| targets.get(i * outputs..(i + 1) * outputs).unwrap_or_default();
    row_sums.fill(T::ZERO);
    for i in 0..n {
        for j in 0..=i {
            let k = kernel_value(i, j)?;
            add(row_sums, i, k);
            if j != i {
                add(row_sums, j, k);
            }
        }
    }
    check_finite(row_sums)?;
    let inverse_n = T::ONE / T::from_f64(n as f64);
    let mean = row_sums.iter().fold(T::ZERO, |acc, &r| acc + r) * inverse_n * inverse_n;
    let (mut inner, mut norm) = (T::ZERO, T::ZERO);
    for i in 0..n {
        let r_i = row_sums.get(i).copied().unwrap_or(T::ZERO);
        for j in 0..=i {
            let r_j = row_sums.get(j).copied().unwrap_or(T::ZERO);
            let centred = kernel_value(i, j)? - (r_i + r_j) * inverse_n + mean;
            let similarity = target(i).iter().zip(target(j)).fold(T::ZERO, |acc, (&a, &b)| acc + a * b);
            let weight = if i == j { T::ONE } else { T::ONE + T::ONE };
            inner += weight * centred * similarity;
            norm += weight * centred * centred;
        }
    }
    let norm = finite(norm)?.sqrt();
    if norm > T::ZERO { finite(inner / (norm * target_norm)) } else { Ok(T::ZERO) }
}

fn add<T: Real>(sums: &mut [T], i: usize, k: T) {
    if let Some(sum) = sums.get_mut(i) {
        *sum += k;
    }
}

/// `‖T̃ᵀT̃‖_F` with `T̃` the column-centred `targets`: `(T̃ᵀT̃)_ab = Σ_i t_ia·t_ib − n·t̄_a·t̄_b`.
fn centred_gram_norm<T: Real>(targets: &[T], n: usize, outputs: usize) -> T {
    let column = |a: usize| targets.chunks_exact(outputs).map(move |t| t.get(a).copied().unwrap_or(T::ZERO));
    let inverse_n = T::ONE / T::from_f64(n as f64);
    let mut squares = T::ZERO;
    for a in 0..outputs {
        let mean_a = column(a).fold(T::ZERO, |acc, t| acc + t) * inverse_n;
        for b in 0..outputs {
            let mean_b = column(b).fold(T::ZERO, |acc, t| acc + t) * inverse_n;
            let entry = column(a).zip(column(b)).fold(T::ZERO, |acc, (x, y)| acc + (x - mean_a) * (y - mean_b));
            squares += entry * entry;
        }
    }
    squares.sqrt()
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::*;
    use crate::Rng;
    use nalgebra::DMatrix;
    use std::vec;
    use std::vec::Vec;

    /// The alignment by the dense formula: form `K`, `Y = TTᵀ`, centre both with `H`.
    fn dense(kernel: &Kernel<f64>, points: &[f64], dim: usize, targets: &[f64], outputs: usize) -> f64 {
        let n = points.len() / dim;
        let k = DMatrix::from_fn(n, n, |i, j| {
            kernel.eval(&points[i * dim..(i + 1) * dim], &points[j * dim..(j + 1) * dim]).unwrap()
        });
        let t = DMatrix::from_row_slice(n, outputs, targets);
        let h = DMatrix::identity(n, n) - DMatrix::from_element(n, n, 1.0 / n as f64);
        let (kc, yc) = (&h * k * &h, &h * (&t * t.transpose()) * &h);
        kc.dot(&yc) / (kc.norm() * yc.norm())
    }

    #[test]
    fn matches_the_dense_computation() {
        let mut rng = Rng::seed_from_u64(8);
        let (n, dim) = (40, 3);
        let points: Vec<f64> = (0..n * dim).map(|_| rng.uniform_in(-2.0, 2.0)).collect();
        let signs: Vec<f64> = points.chunks_exact(dim).map(|x| if x[0] * x[1] > 0.0 { 1.0 } else { -1.0 }).collect();
        let class = |x: &[f64]| usize::from(x[2] > 0.0) + usize::from(x[0] > 1.0);
        let one_hot: Vec<f64> =
            points.chunks_exact(dim).flat_map(|x| [0, 1, 2].map(|c| if class(x) == c { 1.0 } else { 0.0 })).collect();
        let values: Vec<f64> = points.chunks_exact(dim).map(|x| 10.0 + x[0].sin()).collect();
        let kernels =
            [Kernel::rbf(0.3).unwrap(), Kernel::laplacian(1.0).unwrap(), Kernel::polynomial(2, 0.5, 1.0).unwrap()];
        for kernel in &kernels {
            for (targets, outputs) in [(&signs, 1), (&one_hot, 3), (&values, 1)] {
                let mut sums = vec![0.0; n];
                let a = centred_alignment(kernel, &points, dim, targets, outputs, &mut sums).unwrap();
                let reference = dense(kernel, &points, dim, targets, outputs);
                assert!((a - reference).abs() < 1e-12, "{kernel:?}, {outputs} outputs: {a} vs {reference}");
                let points32: Vec<f32> = points.iter().map(|&x| x as f32).collect();
                let targets32: Vec<f32> = targets.iter().map(|&x| x as f32).collect();
                let kernel32 = Kernel::<f32>::new(match kernel.kind() {
                    crate::KernelKind::Rbf { gamma } => crate::KernelKind::Rbf { gamma: gamma as f32 },
                    crate::KernelKind::Laplacian { gamma } => crate::KernelKind::Laplacian { gamma: gamma as f32 },
                    crate::KernelKind::Polynomial { degree, gamma, coef0 } => {
                        crate::KernelKind::Polynomial { degree, gamma: gamma as f32, coef0: coef0 as f32 }
                    }
                    crate::KernelKind::Linear => crate::KernelKind::Linear,
                })
                .unwrap();
                let mut sums = vec![0.0f32; n];
                let a32 = centred_alignment(&kernel32, &points32, dim, &targets32, outputs, &mut sums).unwrap();
                assert!((f64::from(a32) - reference).abs() < 1e-4, "f32 {kernel:?}: {a32} vs {reference}");
            }
        }
    }

    #[test]
    fn peaks_at_the_width_of_the_structure() {
        // Labels set by the sign of sin(3x): a width near the period's scale aligns better
        // than one far too narrow or far too wide.
        let mut rng = Rng::seed_from_u64(1);
        let points: Vec<f64> = (0..150).map(|_| rng.uniform_in(-3.0, 3.0)).collect();
        let labels: Vec<f64> = points.iter().map(|&x| if (3.0 * x).sin() > 0.0 { 1.0 } else { -1.0 }).collect();
        let mut sums = vec![0.0; 150];
        let mut at =
            |gamma: f64| centred_alignment(&Kernel::rbf(gamma).unwrap(), &points, 1, &labels, 1, &mut sums).unwrap();
        let (narrow, good, wide) = (at(1e4), at(3.0), at(1e-3));
        assert!(good > narrow && good > wide, "{narrow} {good} {wide}");
    }

    #[test]
    fn bad_input_is_an_error() {
        let kernel = Kernel::rbf(1.0).unwrap();
        let mut sums = [0.0; 3];
        let points = [0.0, 1.0, 2.0];
        assert_eq!(
            centred_alignment(&kernel, &points, 1, &[1.0; 3], 1, &mut sums),
            Err(Error::InvalidParam { name: "targets" })
        );
        assert_eq!(
            centred_alignment(&kernel, &[0.0], 1, &[1.0], 1, &mut [0.0]),
            Err(Error::InvalidParam { name: "n" })
        );
        assert_eq!(
            centred_alignment(&kernel, &[0.0, f64::NAN, 1.0], 1, &[1.0, -1.0, 1.0], 1, &mut sums),
            Err(Error::NonFinite)
        );
        assert_eq!(centred_alignment(&kernel, &points, 1, &[1.0, f64::NAN, 1.0], 1, &mut sums), Err(Error::NonFinite));
        assert!(centred_alignment(&kernel, &points, 1, &[1.0, -1.0], 1, &mut sums).is_err());
        assert!(centred_alignment(&kernel, &points, 1, &[1.0, -1.0, 1.0], 0, &mut sums).is_err());
        // Every point alike to the kernel: alignment 0, not NaN.
        let same = centred_alignment(&kernel, &[1.0, 1.0, 1.0], 1, &[1.0, -1.0, 1.0], 1, &mut sums);
        assert_eq!(same, Ok(0.0));
    }
}
