//! `--gamma auto`: the kernel width that maximises the centred kernel-target alignment
//! ([`kestrel_core::alignment`], seed 002 eq. 51-52 and 55) on a sample of the data.
//!
//! The polynomial kernel `(γ⟨x, x'⟩ + c₀)^p` is the exception: its alignment does not
//! choose a width. With `c₀ = 0` a width only scales the kernel, and the centred alignment
//! is the same at every `γ`; with `c₀ > 0` the kernel tends to `c₀^p + p·c₀^{p−1}γ⟨x, x'⟩`
//! as `γ → 0`, a linear kernel, whose alignment is often the higher, so the search ran to
//! its smallest width (phishing, `p = 2`, `c₀ = 1`: 87.2 % test accuracy at the width
//! chosen so, 91.7 % at the median heuristic's). It takes the median heuristic's `γ₀`
//! (comparable to scikit-learn's `gamma="scale"`), whose octaves the leave-one-out search
//! of rsvm, krr and lssvm then compares.
//!
//! The search starts from the median heuristic, `γ₀ = 1/median‖x − x'‖²` over pairs of
//! the sample (`‖·‖₁` for the Laplacian kernel), the width at which a typical pair has
//! kernel value `e⁻¹`, and scores `γ₀·2ᵏ` for `k = −6..=6`; the best of those is refined
//! once by scoring its two quarter-octave neighbours. Cost: 15 alignments of the sample,
//! `s = min(n, `[`SAMPLE`]`)` rows: each pair's distance (the kernel's
//! [`pair_statistic`](Kernel::pair_statistic), O(d)) once, then each width's `s(s+1)/2`
//! kernel values from the distances, O(1) each — the values of the kernel evaluations,
//! bit for bit; memory: the sample (`s·d`), its targets, `s` row sums, and the `s(s+1)/2`
//! distances and values (2 MB for 500 rows in `f64`). Under a budget without room for
//! those, each alignment evaluates the kernel afresh, `s²` evaluations of O(d), with the
//! same result.

use kestrel_core::alignment::{centred_alignment, centred_alignment_by};
use kestrel_core::linalg::packed_len;
use kestrel_core::reduced_set::select_random;
use kestrel_core::{Error, Kernel, KernelKind, Real, Rng};

use super::centres::row;
use super::krr::{Task, sign_targets};
use super::{TrainError, check_budget, classes};
use crate::dataset::Dataset;
use crate::labels::Labels;
use crate::limits::zeroed;

/// Rows the alignment is computed on at most.
pub const SAMPLE: usize = 500;

/// The width chosen and how it was chosen.
#[derive(Clone, Debug, PartialEq)]
pub struct GammaChoice {
    /// The chosen `γ`.
    pub gamma: f64,
    /// Its alignment.
    pub alignment: f64,
    /// The median heuristic's `γ₀`.
    pub median: f64,
    /// Every `(γ, alignment)` scored, in the order scored.
    pub scores: Vec<(f64, f64)>,
}

/// Chooses `γ` for the kernel kind of `kernel` (its own `γ` is ignored) on `data`, whose
/// labels are class labels or real targets as `task` says; within `budget` beside `data`
/// (the alignment's sample of at most [`SAMPLE`] rows). For the polynomial kernel, the
/// median heuristic's `γ₀` with its alignment (module doc).
///
/// # Errors
/// [`TrainError`] for fewer than two rows, constant targets, bad labels, a linear kernel
/// (no width to choose) or a budget too small for the sample.
pub fn by_alignment<T: Real>(
    data: &Dataset<T>,
    kernel: KernelKind<T>,
    task: Task,
    seed: u64,
    budget: Option<usize>,
) -> Result<GammaChoice, TrainError> {
    if matches!(kernel, KernelKind::Linear) {
        return Err(TrainError::Core(Error::InvalidParam { name: "gamma" }));
    }
    if data.len() < 2 {
        return Err(TrainError::TooFewRows {
            n: data.len(),
            min: 2,
            what: "the width by alignment (it compares rows)",
        });
    }
    let dim = data.dim().max(1);
    let Sample { rows: sample, targets, outputs } = Sample::draw(data, SAMPLE, task, seed, budget)?;
    let s = sample.len() / dim;
    let median = median_gamma(&sample, dim, kernel)?;
    let mut sums = zeroed(s, "the alignment")?;
    let sample_bytes = data.bytes().saturating_add(Sample::<T>::bytes(s, dim, outputs));
    // Each pair's distance, and one width's kernel values from them, when the budget has room.
    let pairs = packed_len(s);
    let mut cached = match check_budget(sample_bytes.saturating_add(pairs.saturating_mul(2 * size_of::<T>())), budget) {
        Ok(()) => Some((pair_statistics(&sample, dim, kernel)?, zeroed::<T>(pairs, "the alignment's kernel values")?)),
        Err(_) => None,
    };
    let mut scores = Vec::new();
    let mut score = |gamma: f64| -> Result<f64, TrainError> {
        let kernel = with_gamma(kernel, T::from_f64(gamma))?;
        let alignment = match &mut cached {
            Some((distances, values)) => {
                for (value, &distance) in values.iter_mut().zip(distances.iter()) {
                    *value = kernel.value_of(distance);
                }
                let value = |i: usize, j: usize| values.get(packed_len(i) + j).copied();
                centred_alignment_by(&targets, outputs, &mut sums, |i, j| {
                    value(i, j).ok_or(Error::IndexOutOfRange { index: i, len: s })
                })?
            }
            None => centred_alignment(&kernel, &sample, dim, &targets, outputs, &mut sums)?,
        }
        .to_f64();
        scores.push((gamma, alignment));
        Ok(alignment)
    };
    if matches!(kernel, KernelKind::Polynomial { .. }) {
        // No width to find by alignment here (module doc): the median heuristic's.
        let alignment = score(median)?;
        return Ok(GammaChoice { gamma: median, alignment, median, scores });
    }
    let mut best = (median, f64::NEG_INFINITY);
    for k in -6..=6 {
        let gamma = median * 2f64.powi(k);
        let alignment = score(gamma)?;
        if alignment > best.1 {
            best = (gamma, alignment);
        }
    }
    for factor in [2f64.powf(-0.25), 2f64.powf(0.25)] {
        let gamma = best.0 * factor;
        let alignment = score(gamma)?;
        if alignment > best.1 {
            best = (gamma, alignment);
        }
    }
    Ok(GammaChoice { gamma: best.0, alignment: best.1, median, scores })
}

/// The kernel's [`pair_statistic`](Kernel::pair_statistic) (a distance, or an inner
/// product) of every pair `j ≤ i` of the `sample`'s rows, packed row after row
/// (`s(s+1)/2` scalars): what each width's kernel values are computed from.
fn pair_statistics<T: Real>(sample: &[T], dim: usize, kernel: KernelKind<T>) -> Result<Vec<T>, TrainError> {
    let s = sample.len() / dim;
    let kernel = with_gamma(kernel, T::ONE)?;
    let mut statistics = Vec::new();
    crate::limits::reserve(&mut statistics, packed_len(s), "the alignment's distances")?;
    for i in 0..s {
        let a = row(sample, dim, i)?;
        for j in 0..=i {
            statistics.push(kernel.pair_statistic(a, row(sample, dim, j)?)?);
        }
    }
    Ok(statistics)
}

/// Rows drawn at random for an alignment, with their targets.
pub(super) struct Sample<T> {
    /// The rows, dense and one after the other (`s × d`).
    pub rows: Vec<T>,
    /// Their targets, row-major `s × outputs` ([`sample_targets`]).
    pub targets: Vec<T>,
    /// Targets per row.
    pub outputs: usize,
}

impl<T: Real> Sample<T> {
    /// `min(n, size)` rows of `data` drawn uniformly without replacement (seeded), with
    /// their targets for `task`. With a `budget`, `data` and the sample with a scalar of
    /// scratch per row ([`Sample::bytes`]) must fit it, checked once the sample's labels
    /// tell its number of targets and before its rows and targets are allocated.
    ///
    /// # Errors
    /// [`TrainError`] for fewer than two rows, bad labels, a budget too small or an
    /// allocation failure.
    pub fn draw(
        data: &Dataset<T>,
        size: usize,
        task: Task,
        seed: u64,
        budget: Option<usize>,
    ) -> Result<Self, TrainError> {
        let dim = data.dim().max(1);
        let s = data.len().min(size);
        if s < 2 {
            return Err(TrainError::Core(Error::InvalidParam { name: "n" }));
        }
        let mut chosen = zeroed(s, "the sample")?;
        select_random(data.len(), &mut Rng::seed_from_u64(seed), &mut chosen)?;
        let labels: Vec<f64> = chosen.iter().map(|&i| data.labels().get(i).copied().unwrap_or(0.0)).collect();
        let outputs = match task {
            Task::Regression => 1,
            Task::Classification => Labels::of(&labels).map_or(1, |classes| classes.outputs()),
        };
        check_budget(data.bytes().saturating_add(Self::bytes(s, dim, outputs)), budget)?;
        let (targets, outputs) = sample_targets::<T>(&labels, task)?;
        // Only the chosen rows are made dense: O(s·d) memory, whatever n.
        let mut rows = zeroed(s.saturating_mul(dim), "the sample")?;
        for (row, &i) in rows.chunks_exact_mut(dim).zip(&chosen) {
            data.dense_row(i, row);
        }
        Ok(Sample { rows, targets, outputs })
    }

    /// Bytes of a sample of `s` rows of `dim` features and `outputs` targets: per row its
    /// index, label, features, targets and one scalar of the caller's scratch.
    pub fn bytes(s: usize, dim: usize, outputs: usize) -> usize {
        let scalars = dim.saturating_add(outputs).saturating_add(1).saturating_mul(size_of::<T>());
        s.saturating_mul(scalars.saturating_add(size_of::<usize>() + size_of::<f64>()))
    }
}

/// The sample's targets: the least-squares SVM's `±1` columns for classes (one for two
/// classes, one-vs-rest for more: `2·one-hot − 1`, which the centring and the cosine make
/// exactly as aligned as the one-hot columns), the values for regression.
fn sample_targets<T: Real>(labels: &[f64], task: Task) -> Result<(Vec<T>, usize), TrainError> {
    match task {
        Task::Regression => Ok((labels.iter().map(|&y| T::from_f64(y)).collect(), 1)),
        Task::Classification => {
            let (classes, solver) = classes::<T>(labels)?;
            Ok((sign_targets(&solver, classes.outputs())?, classes.outputs()))
        }
    }
}

/// `1/median` of the kernel's distance (squared Euclidean, or `‖·‖₁` for the Laplacian)
/// over the sample's pairs (the first 200 rows' pairs at most); 1 when every pair is at
/// distance 0.
pub(super) fn median_gamma<T: Real>(sample: &[T], dim: usize, kernel: KernelKind<T>) -> Result<f64, TrainError> {
    let rows = (sample.len() / dim).min(200);
    let mut distances = Vec::with_capacity(rows * rows.saturating_sub(1) / 2);
    for i in 0..rows {
        for j in 0..i {
            let (a, b) = (row(sample, dim, i)?, row(sample, dim, j)?);
            let distance = match kernel {
                KernelKind::Laplacian { .. } => a.iter().zip(b).map(|(&x, &y)| (x - y).abs().to_f64()).sum::<f64>(),
                _ => a.iter().zip(b).map(|(&x, &y)| (x - y).to_f64().powi(2)).sum::<f64>(),
            };
            distances.push(distance);
        }
    }
    distances.sort_by(f64::total_cmp);
    let median = distances.get(distances.len() / 2).copied().unwrap_or(0.0);
    Ok(if median > 0.0 && median.is_finite() { 1.0 / median } else { 1.0 })
}

/// `kernel` with width `gamma`.
pub fn with_gamma<T: Real>(kernel: KernelKind<T>, gamma: T) -> Result<Kernel<T>, Error> {
    Kernel::new(match kernel {
        KernelKind::Rbf { .. } => KernelKind::Rbf { gamma },
        KernelKind::Laplacian { .. } => KernelKind::Laplacian { gamma },
        KernelKind::Polynomial { degree, coef0, .. } => KernelKind::Polynomial { degree, gamma, coef0 },
        KernelKind::Linear => KernelKind::Linear,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::Record;

    #[test]
    fn finds_the_width_of_a_ring() {
        // Class by radius in 2-D, the coordinates in units of 100: the median heuristic
        // scales to the units, and the chosen width separates the ring.
        let mut data = Dataset::<f64>::new();
        let mut rng = Rng::seed_from_u64(6);
        for _ in 0..300 {
            let (a, b) = (rng.uniform_in(-100.0, 100.0), rng.uniform_in(-100.0, 100.0));
            let label = if a * a + b * b < 3600.0 { 1.0 } else { -1.0 };
            data.push(&Record { label, indices: vec![0, 1], values: vec![a, b], ..Record::default() }).unwrap();
        }
        let rbf = KernelKind::Rbf { gamma: 1.0 };
        let choice = by_alignment(&data, rbf, Task::Classification, 1, None).unwrap();
        assert_eq!(choice.scores.len(), 15);
        assert!(choice.scores.iter().all(|&(_, a)| a <= choice.alignment));
        assert!(choice.gamma > 1e-5 && choice.gamma < 1e-2, "γ = {}", choice.gamma);
        // A linear kernel sees no ring at all (alignment near 0); measured 0.23 here.
        assert!(choice.alignment > 0.15, "alignment {}", choice.alignment);
        assert!(by_alignment(&data, KernelKind::Linear, Task::Classification, 1, None).is_err());
        // The sample (300 rows: index, label, two features, one target, one scratch scalar)
        // counts beside the rows against a budget; one byte short is refused.
        let needed = data.bytes() + 300 * (8 + 8 + 4 * 8);
        assert_eq!(Sample::<f64>::bytes(300, 2, 1), needed - data.bytes());
        let refused = by_alignment(&data, rbf, Task::Classification, 1, Some(needed - 1)).unwrap_err();
        assert_eq!(refused, TrainError::OverBudget { needed, budget: needed - 1 });
        // At that budget there is no room for the pairs' distances and kernel values: each
        // alignment evaluates the kernel afresh, and every score is the same to the bit.
        assert_eq!(by_alignment(&data, rbf, Task::Classification, 1, Some(needed)).unwrap(), choice);
        for kind in [KernelKind::Laplacian { gamma: 1.0 }, KernelKind::Polynomial { degree: 2, gamma: 1.0, coef0: 1.0 }]
        {
            let cached = by_alignment(&data, kind, Task::Classification, 1, None).unwrap();
            assert_eq!(by_alignment(&data, kind, Task::Classification, 1, Some(needed)).unwrap(), cached, "{kind:?}");
        }
        // One row has no distance to compare.
        let one = data.rows_in(&[0]);
        let refused = by_alignment(&one, rbf, Task::Classification, 1, None).unwrap_err();
        assert_eq!(
            refused.to_string(),
            "the width by alignment (it compares rows) needs at least 2 rows, the data have 1"
        );
    }
}
