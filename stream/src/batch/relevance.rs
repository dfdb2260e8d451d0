//! `kestrel train --relevance`: one Gaussian width per feature (automatic relevance
//! determination), chosen by the centred kernel-target alignment on a sample.
//!
//! The kernel `k(x, x') = exp(−Σⱼ γⱼ (xⱼ − x'ⱼ)²)` has a width `γⱼ = e^{θⱼ}` per feature.
//! Its centred alignment with the targets (seed 002 eq. 51-52 with the centring of eq. 55,
//! as in [`kestrel_core::alignment`]) on a sample of `s` rows is
//!
//! ```text
//! A(θ) = ⟨K, T̃T̃ᵀ⟩ / (‖K_c‖_F·‖T̃ᵀT̃‖_F),    K_c = HKH,  T̃ = HT,  H = I − 11ᵀ/s
//! ```
//!
//! (`⟨K_c, Y_c⟩ = ⟨K, T̃T̃ᵀ⟩` and `‖K_c‖² = ⟨K, K_c⟩` since `H` is idempotent). With
//! `∂K_ij/∂θⱼ = −γⱼ (x_ij − x'_ij)² K_ij`, `d‖K_c‖ = ⟨dK, K_c⟩/‖K_c‖` gives
//!
//! ```text
//! ∂A/∂θⱼ = −γⱼ Σ_il G_il K_il (x_ij − x_lj)²,   G = T̃T̃ᵀ/(‖K_c‖‖Y_c‖) − A·K_c/‖K_c‖².
//! ```
//!
//! The search starts from the median heuristic's common width (every `θⱼ = ln γ₀`, the
//! isotropic kernel of [`super::gamma`]) and takes [`STEPS`] normalised ascent steps,
//! `θ ← θ + η·∇A/max|∇A|` with `η` = [`STEP`] (the most sensitive width moves by a factor
//! `e^η`), keeping the best `θ` seen. Convention chosen here: the result is reported as
//! weights `wⱼ = √(γⱼ/mean γ)` (so `Σ wⱼ² = d`; a feature constant over the rows
//! weighs 0 and is left out of the mean) that multiply the standardised features
//! in the model's scaler ([`kestrel_core::scaler::Scaler::set_weights`]); the isotropic
//! width `γ` then chosen on the weighted features (`--gamma`, `auto` by default) gives the
//! per-feature widths `γ·wⱼ²`, so alignment finds the features' proportions and the
//! usual width search their common scale. A feature whose weight falls near 0 is ignored.
//! The weights are kept only when the leave-one-out error at the automatic width falls
//! with them ([`weighed_if_better`]).
//!
//! Cost: [`STEPS`] passes of `O(s²·d)` (the kernel matrix, then the gradient), with
//! `s = min(n, `[`SAMPLE`]`)` rows, fewer for many features so that `s²·d` stays within
//! [`WORK`] (but never under [`MIN_SAMPLE`]); at most [`MAX_FEATURES`] features. Memory:
//! the sample's `s·d` values, its targets and the `s²` kernel values (in `f64`: 0.7 MB at
//! `s` = 300).

use kestrel_core::Real;
use kestrel_core::scaler::Scaler;

use super::fit::{self, FitError, FitSettings, KernelChoice, Learner, Searched};
use super::gamma::{Sample, median_gamma};
use super::krr::{self, Task};
use super::{TrainError, check_budget};
use crate::dataset::Dataset;
use crate::limits::zeroed;

/// Rows the alignment is computed on at most.
pub const SAMPLE: usize = 300;
/// Rows the alignment is computed on at least (all of them if fewer).
pub const MIN_SAMPLE: usize = 60;
/// The most `s²·d` of one pass: 300 rows up to 300 features, 85 rows at 4096.
pub const WORK: usize = 30_000_000;
/// The most features.
pub const MAX_FEATURES: usize = 4096;
/// Ascent steps.
pub const STEPS: usize = 60;
/// Log-width change of the most sensitive feature per step.
pub const STEP: f64 = 0.3;

/// The weights [`by_alignment`] chose and the alignments it chose them by.
#[derive(Clone, Debug, PartialEq)]
pub struct Aligned {
    /// One weight per feature, `Σ wⱼ²` = the number of features not constant (a constant
    /// feature's is 0).
    pub weights: Vec<f64>,
    /// Alignment of the isotropic kernel the search started from.
    pub isotropic_alignment: f64,
    /// Alignment of the chosen widths.
    pub alignment: f64,
}

/// The weights chosen, and whether the model keeps them ([`weighed_if_better`]).
#[derive(Clone, Debug, PartialEq)]
pub struct Relevance {
    /// The weights and their alignments.
    pub aligned: Aligned,
    /// The leave-one-out scores of the standardised rows and of the weighed ones
    /// ([`fit::auto_width_search`]: misclassifications, or the mean squared error).
    pub loo: (f64, f64),
    /// The model keeps the weights (else it only standardises).
    pub kept: bool,
    /// Seconds the choice took: the weights and both scores.
    pub seconds: f64,
}

/// `Ok` when relevance weights apply to `learner` with `kernel`: a Gaussian kernel (one
/// width per feature) and a learner with a kernel (not the linear SVM, not the novelty
/// detector, which learns without targets to align with); else what to change.
///
/// # Errors
/// The reason, naming the setting.
pub fn check_applies(learner: Learner, kernel: KernelChoice) -> Result<(), String> {
    if matches!(learner, Learner::Svm | Learner::Novelty) || kernel != KernelChoice::Rbf {
        return Err("relevance weighs the features of a Gaussian kernel (kernel rbf, a kernel learner)".into());
    }
    Ok(())
}

/// Rows standardised and weighed by relevance ([`weighed_if_better`]).
pub struct Weighed<T> {
    /// The rows to learn from.
    pub rows: Dataset<T>,
    /// The scaler a model file carries, its weights set: the model standardises and
    /// weighs its inputs as the rows were.
    pub scaler: Scaler<T, Vec<T>>,
    /// The weights chosen.
    pub relevance: Relevance,
    /// The width search that scored the rows kept, for their fit to take
    /// ([`FitSettings::searched`]) instead of running it again.
    pub searched: Option<Searched>,
}

/// The weights of [`by_alignment`] on standardised `rows`, applied to them and set in
/// `scaler` (the one that standardised them).
fn weigh<T: Real>(
    rows: &mut Dataset<T>,
    scaler: &mut Scaler<T, Vec<T>>,
    task: Task,
    seed: u64,
) -> Result<Aligned, TrainError> {
    let aligned = by_alignment(rows, task, seed)?;
    let weights: Vec<T> = aligned.weights.iter().map(|&w| T::from_f64(w)).collect();
    scaler.set_weights(&weights)?;
    rows.weigh_features(&weights);
    Ok(aligned)
}

/// `data` standardised ([`Dataset::standardized`]) and its features weighed by
/// [`by_alignment`] — what `kestrel train --relevance` and the Python estimators'
/// `relevance=True` learn from. The weights are kept when they score better than
/// standardising alone by the leave-one-out of the reduced kernel ridge at the automatic
/// width ([`fit::auto_width_search`]; the least-squares SVM's errors for classes), on at
/// most [`krr::CG_SUBSAMPLE`] rows. Weights
/// can cost more than they save — on features that all bear on the target, or with too
/// few centres to cover the weighed features — and then the rows are only standardised
/// (`kept` is false, every weight 1). Costs that criterion twice besides the weights: two
/// alignment searches and ten ridge paths.
///
/// Memory, within `settings.budget` when one is given: `data`, its standardised and its
/// weighed copy, the alignment's sample ([`held_bytes`]); each leave-one-out fit then gets
/// what is left of the budget beside the copies it does not learn from
/// ([`fit::auto_width_score_bytes`]); and the learner's fit on the chosen copy alone, which
/// follows ([`fit::needed_bytes`]). The most of these is checked first.
///
/// # Errors
/// As [`Dataset::standardized`], [`by_alignment`] and [`fit::auto_width_search`];
/// `TrainError::OverBudget`, naming the most of those stages, before anything is copied.
pub fn weighed_if_better<T: Real>(data: &Dataset<T>, settings: &FitSettings) -> Result<Weighed<T>, FitError> {
    let start = std::time::Instant::now();
    let task = settings.learner.task();
    check_features(data.dim())?;
    if data.len() < 2 {
        let message = format!("the relevance weights compare rows: 2 or more are needed, got {}", data.len());
        return Err(FitError::Settings(message));
    }
    // While a fit learns from one copy, `data` and the other copy are held beside it; the
    // learner's own fit then learns from the chosen copy alone. The most of these stages
    // is checked first, so that one error names it.
    let beside = data.bytes().saturating_add(data.standardized_bytes());
    if settings.budget.is_some() {
        let copy = data.standardized_bytes();
        let scoring = beside.saturating_add(fit::auto_width_score_bytes(settings, data, copy, task)?);
        let fitting = fit::needed_bytes(settings, data, copy)?.unwrap_or(0);
        check_budget(held_bytes(data).max(scoring).max(fitting), settings.budget)?;
    }
    let settings = &FitSettings { budget: settings.budget.map(|b| b.saturating_sub(beside)), ..settings.clone() };
    let (standardised, scaler) = data.standardized().map_err(TrainError::Core)?;
    let (mut weighed, mut weighed_scaler) = (standardised.clone(), scaler.clone());
    let aligned = weigh(&mut weighed, &mut weighed_scaler, task, settings.seed)?;
    let loss = |score: krr::RidgeScore| match task {
        Task::Classification => {
            #[allow(clippy::cast_precision_loss, reason = "a count of rows")]
            let errors = score.errors as f64;
            errors
        }
        Task::Regression => score.mse,
    };
    // On a large set both are scored on the same subsample of rows (`fit::width_rows`).
    let score = |rows: &Dataset<T>| fit::auto_width_search(settings, rows, task);
    let ((before, before_search), (after, after_search)) = (score(&standardised)?, score(&weighed)?);
    let kept = after.key(task) < before.key(task);
    let loo = (loss(before), loss(after));
    let relevance = Relevance { aligned, loo, kept, seconds: start.elapsed().as_secs_f64() };
    Ok(match kept {
        true => Weighed { rows: weighed, scaler: weighed_scaler, relevance, searched: after_search },
        false => Weighed { rows: standardised, scaler, relevance, searched: before_search },
    })
}

/// Bytes [`weighed_if_better`] holds at once besides its fits: `data`, its standardised and
/// weighed copies ([`Dataset::standardized_bytes`] each), and the alignment's sample: as
/// drawn (per row its index, label, features, targets — at most `s` columns, one per class
/// in the sample — and a scratch scalar), then its rows and targets again in `f64`, and
/// its `s²` kernel values.
pub fn held_bytes<T: Real>(data: &Dataset<T>) -> usize {
    let dim = data.dim().max(1);
    let s = data.len().min(sample_size(dim));
    let in_f64 = s.saturating_mul(dim.saturating_add(s).saturating_add(s)).saturating_mul(size_of::<f64>());
    let sample = Sample::<T>::bytes(s, dim, s).saturating_add(in_f64);
    let copies = data.standardized_bytes().saturating_mul(2);
    data.bytes().saturating_add(copies).saturating_add(sample)
}

/// Rows of the alignment's sample for `dim` features: [`SAMPLE`], fewer for many features
/// so that `s²·d` stays within [`WORK`], never under [`MIN_SAMPLE`].
fn sample_size(dim: usize) -> usize {
    SAMPLE.min((WORK / dim.max(1)).isqrt().max(MIN_SAMPLE))
}

/// Chooses the relevance weights of the features of `data` (standardised, as
/// [`weighed_if_better`] runs it), whose labels are class labels or real targets as `task`
/// says.
///
/// # Errors
/// [`TrainError`] for fewer than two rows, constant targets or bad labels.
pub fn by_alignment<T: Real>(data: &Dataset<T>, task: Task, seed: u64) -> Result<Aligned, TrainError> {
    let dim = data.dim().max(1);
    check_features(dim)?;
    let size = sample_size(dim);
    // Counted against a budget by `held_bytes`, before `weighed_if_better` copies the rows.
    let Sample { rows, targets, outputs } = Sample::draw(data, size, task, seed, None)?;
    let s = rows.len() / dim;
    let median = median_gamma(&rows, dim, kestrel_core::KernelKind::Rbf { gamma: T::ONE })?;
    let sample = CentredSample::new(&rows, dim, &targets, outputs)?;
    let mut log_widths = vec![median.ln(); dim];
    let mut kernel = zeroed(s * s, "the sample's kernel matrix")?;
    let mut gradient = vec![0.0; dim];
    let isotropic_alignment = sample.alignment(&log_widths, &mut kernel, Some(&mut gradient));
    let mut best = (isotropic_alignment, log_widths.clone());
    for _ in 0..STEPS {
        let largest = gradient.iter().fold(0.0f64, |m, g| m.max(g.abs()));
        if largest <= 0.0 || !largest.is_finite() {
            break;
        }
        for (theta, g) in log_widths.iter_mut().zip(&gradient) {
            *theta += STEP * g / largest;
        }
        let alignment = sample.alignment(&log_widths, &mut kernel, Some(&mut gradient));
        if alignment > best.0 {
            best = (alignment, log_widths.clone());
        }
    }
    // A feature that is 0 in every row (constant before standardising) has no gradient and
    // nothing to weigh: its weight is 0, and the others share `Σ wⱼ²` = their number.
    let varies = varying_features(data, dim);
    let widths: Vec<f64> = best.1.iter().zip(&varies).map(|(t, &v)| if v { t.exp() } else { 0.0 }).collect();
    let varying = varies.iter().filter(|&&v| v).count().max(1);
    #[allow(clippy::cast_precision_loss, reason = "a feature count")]
    let mean = widths.iter().sum::<f64>() / varying as f64;
    let weights = widths.iter().map(|w| if mean > 0.0 { (w / mean).sqrt() } else { 1.0 }).collect();
    Ok(Aligned { weights, isotropic_alignment, alignment: best.0 })
}

/// For each of the `dim` features of `data`, whether any row holds a value other than 0.
fn varying_features<T: Real>(data: &Dataset<T>, dim: usize) -> Vec<bool> {
    let mut varies = vec![false; dim];
    for i in 0..data.len() {
        let (indices, values) = data.row(i).unwrap_or_default();
        for (&j, &v) in indices.iter().zip(values) {
            if let (Some(slot), true) = (varies.get_mut(j as usize), v != T::ZERO) {
                *slot = true;
            }
        }
    }
    varies
}

/// `Err(TooManyFeatures)` beyond [`MAX_FEATURES`].
fn check_features(dim: usize) -> Result<(), TrainError> {
    if dim > MAX_FEATURES {
        return Err(TrainError::TooManyFeatures { dim, max: MAX_FEATURES });
    }
    Ok(())
}

/// The sample in `f64`: rows, centred targets and `‖T̃ᵀT̃‖_F`.
struct CentredSample {
    rows: Vec<f64>,
    dim: usize,
    targets: Vec<f64>,
    outputs: usize,
    target_norm: f64,
}

impl CentredSample {
    fn new<T: Real>(rows: &[T], dim: usize, targets: &[T], outputs: usize) -> Result<Self, TrainError> {
        let rows: Vec<f64> = rows.iter().map(|v| v.to_f64()).collect();
        let mut targets: Vec<f64> = targets.iter().map(|v| v.to_f64()).collect();
        let s = rows.len() / dim;
        for o in 0..outputs {
            #[allow(clippy::cast_precision_loss, reason = "a sample size")]
            let mean = targets.iter().skip(o).step_by(outputs).sum::<f64>() / s as f64;
            targets.iter_mut().skip(o).step_by(outputs).for_each(|t| *t -= mean);
        }
        let mut gram = vec![0.0; outputs * outputs];
        for t in targets.chunks_exact(outputs) {
            for (row, &ta) in gram.chunks_exact_mut(outputs).zip(t) {
                for (g, &tb) in row.iter_mut().zip(t) {
                    *g += ta * tb;
                }
            }
        }
        let target_norm = gram.iter().map(|g| g * g).sum::<f64>().sqrt();
        if !(target_norm > 0.0 && target_norm.is_finite()) {
            return Err(TrainError::Core(kestrel_core::Error::InvalidParam { name: "targets" }));
        }
        Ok(CentredSample { rows, dim, targets, outputs, target_norm })
    }

    fn len(&self) -> usize {
        self.rows.len() / self.dim
    }

    fn row(&self, i: usize) -> &[f64] {
        self.rows.get(i * self.dim..(i + 1) * self.dim).unwrap_or_default()
    }

    /// `⟨t̃_i, t̃_l⟩`.
    fn target_product(&self, i: usize, l: usize) -> f64 {
        let o = self.outputs;
        let (a, b) = (self.targets.get(i * o..(i + 1) * o), self.targets.get(l * o..(l + 1) * o));
        a.unwrap_or_default().iter().zip(b.unwrap_or_default()).map(|(x, y)| x * y).sum()
    }

    /// The alignment `A(θ)` of the widths `e^θ`, the kernel matrix left in `kernel`
    /// (`s²`, row-major), and `∂A/∂θ` into `gradient` when asked.
    fn alignment(&self, log_widths: &[f64], kernel: &mut [f64], gradient: Option<&mut [f64]>) -> f64 {
        let s = self.len();
        let widths: Vec<f64> = log_widths.iter().map(|t| t.exp()).collect();
        for i in 0..s {
            for l in 0..=i {
                let d2: f64 =
                    self.row(i).iter().zip(self.row(l)).zip(&widths).map(|((a, b), g)| g * (a - b) * (a - b)).sum();
                for index in [i * s + l, l * s + i] {
                    if let Some(k) = kernel.get_mut(index) {
                        *k = (-d2).exp();
                    }
                }
            }
        }
        let sums: Vec<f64> = kernel.chunks_exact(s).map(|row| row.iter().sum()).collect();
        let total: f64 = sums.iter().sum();
        #[allow(clippy::cast_precision_loss, reason = "a sample size")]
        let n = s as f64;
        let centred = |i: usize, l: usize, k: f64| {
            k - sums.get(i).copied().unwrap_or(0.0) / n - sums.get(l).copied().unwrap_or(0.0) / n + total / (n * n)
        };
        let (mut agreement, mut norm2) = (0.0, 0.0);
        for (index, &k) in kernel.iter().enumerate() {
            let (i, l) = (index / s, index % s);
            agreement += k * self.target_product(i, l);
            norm2 += k * centred(i, l, k);
        }
        let norm = norm2.max(0.0).sqrt();
        if norm <= 0.0 {
            if let Some(gradient) = gradient {
                gradient.fill(0.0);
            }
            return 0.0;
        }
        let alignment = agreement / (norm * self.target_norm);
        if let Some(gradient) = gradient {
            // The pairs (i, l) and (l, i) alike, the diagonal (no difference) not at all.
            gradient.fill(0.0);
            for (index, &k) in kernel.iter().enumerate() {
                let (i, l) = (index / s, index % s);
                if l >= i {
                    continue;
                }
                let g = self.target_product(i, l) / (norm * self.target_norm) - alignment * centred(i, l, k) / norm2;
                for ((grad, a), b) in gradient.iter_mut().zip(self.row(i)).zip(self.row(l)) {
                    *grad -= g * k * (a - b) * (a - b);
                }
            }
            for (grad, w) in gradient.iter_mut().zip(&widths) {
                *grad *= 2.0 * w;
            }
        }
        alignment
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::Record;
    use kestrel_core::Rng;

    /// `n` rows of `d` standard normal features (seeded), the target `target(x, rng)`.
    fn normal_rows(n: usize, d: u32, seed: u64, target: impl Fn(&[f64], &mut Rng) -> f64) -> Dataset<f64> {
        let mut rng = Rng::seed_from_u64(seed);
        let mut data = Dataset::<f64>::new();
        for _ in 0..n {
            let values: Vec<f64> = (0..d).map(|_| rng.normal::<f64>()).collect();
            let label = target(&values, &mut rng);
            data.push(&Record { label, indices: (0..d).collect(), values, ..Record::default() }).unwrap();
        }
        data
    }

    /// A regression target of the first two of six features: the other four get weights
    /// well below theirs (measured: 3.4× below the weaker one, whose width is then 11×).
    #[test]
    fn irrelevant_features_get_small_weights() {
        let data = normal_rows(400, 6, 5, |x, _| (2.0 * x[0]).sin() + x[1] * x[1]);
        let relevance = by_alignment(&data, Task::Regression, 1).unwrap();
        let w = &relevance.weights;
        assert!(relevance.alignment > relevance.isotropic_alignment + 0.05, "{relevance:?}");
        let noise = w[2..].iter().fold(0.0f64, |m, &v| m.max(v));
        assert!(w[0] > 3.0 * noise && w[1] > 3.0 * noise, "{w:?}");
        assert!((w.iter().map(|v| v * v).sum::<f64>() - 6.0).abs() < 1e-9);
    }

    /// The weights are kept exactly when they lower the leave-one-out score; otherwise the
    /// rows are the standardised ones and the scaler weighs nothing.
    #[test]
    fn weights_are_kept_only_when_they_score_better() {
        let mut rng = Rng::seed_from_u64(5);
        let (mut signal, mut even) = (Dataset::<f64>::new(), Dataset::<f64>::new());
        for _ in 0..300 {
            let values: Vec<f64> = (0..4).map(|_| rng.normal::<f64>()).collect();
            let indices: Vec<u32> = (0..4).collect();
            let label = (2.0 * values[0]).sin() + 0.1 * rng.normal::<f64>();
            signal
                .push(&Record { label, indices: indices.clone(), values: values.clone(), ..Record::default() })
                .unwrap();
            let label = values.iter().sum::<f64>() + 0.1 * rng.normal::<f64>();
            even.push(&Record { label, indices, values, ..Record::default() }).unwrap();
        }
        let settings = FitSettings { centers: Some(40), ..FitSettings::new(Learner::Krr) };
        let chosen = weighed_if_better(&signal, &settings).unwrap();
        let (before, after) = chosen.relevance.loo;
        assert!(chosen.relevance.kept && after < before, "{:?}", chosen.relevance);
        assert!(chosen.scaler.weights().iter().any(|&w| w != 1.0));
        for data in [&signal, &even] {
            let chosen = weighed_if_better(data, &settings).unwrap();
            let (before, after) = chosen.relevance.loo;
            assert_eq!(chosen.relevance.kept, after < before);
            if !chosen.relevance.kept {
                let (standardised, _) = data.standardized().unwrap();
                assert!((0..data.len()).all(|i| chosen.rows.row(i) == standardised.row(i)));
                assert!(chosen.scaler.weights().iter().all(|&w| w == 1.0));
            }
        }
    }

    /// The copies count against `--budget` before any is made: one byte short of them is
    /// refused with what they need; a budget with room for them and the fits gives the
    /// weights and scores of no budget at all.
    #[test]
    fn the_copies_count_against_the_budget() {
        let data = normal_rows(200, 4, 6, |x, rng| (2.0 * x[0]).sin() + 0.1 * rng.normal::<f64>());
        let held = held_bytes(&data);
        assert!(held > data.bytes() + 2 * data.standardized_bytes(), "{held}");
        let settings = |budget| FitSettings { centers: Some(30), budget, ..FitSettings::new(Learner::Krr) };
        match weighed_if_better(&data, &settings(Some(held - 1))) {
            Err(FitError::Train(TrainError::OverBudget { needed, budget })) => {
                assert_eq!((needed, budget), (held, held - 1))
            }
            Err(other) => panic!("{other}"),
            Ok(_) => panic!("a budget one byte short of the copies was accepted"),
        }
        let free = weighed_if_better(&data, &settings(None)).unwrap();
        let roomy = weighed_if_better(&data, &settings(Some(held + (64 << 20)))).unwrap();
        assert_eq!((roomy.relevance.aligned, roomy.relevance.loo), (free.relevance.aligned, free.relevance.loo));
    }

    /// Past the copies, the leave-one-out fits and the learner's own fit on the chosen copy
    /// count too: every budget short of the whole names one figure, before any work, and
    /// that figure is enough for the weights and then the fit.
    #[test]
    fn one_figure_bounds_the_weights_and_the_fit() {
        let wave = |x: &[f64], rng: &mut Rng| (2.0 * x[0]).sin() + 0.1 * rng.normal::<f64>();
        // krr's fit holds less than its leave-one-out fits beside the copies; rsvm's more.
        let cases = [
            (Learner::Krr, normal_rows(1500, 3, 8, wave)),
            (Learner::Rsvm, normal_rows(1500, 3, 8, |x, rng| wave(x, rng).signum())),
        ];
        for (learner, data) in cases {
            let settings = |budget| FitSettings { centers: Some(128), budget, ..FitSettings::new(learner) };
            let needs = |budget: usize| match weighed_if_better(&data, &settings(Some(budget))) {
                Err(FitError::Train(TrainError::OverBudget { needed, budget: b })) if b == budget => needed,
                Err(other) => panic!("{learner:?}: {other}"),
                Ok(_) => panic!("{learner:?}: {budget} B was accepted"),
            };
            let whole = needs(1000);
            assert!(whole > held_bytes(&data), "{learner:?}: {whole} within the copies' {}", held_bytes(&data));
            assert_eq!(needs(whole - 1), whole, "{learner:?}");
            let weighed = weighed_if_better(&data, &settings(Some(whole))).unwrap();
            assert!(fit::fit(&settings(Some(whole)), &weighed.rows).is_ok(), "{learner:?}");
        }
    }

    /// The gradient against central differences of the alignment itself.
    #[test]
    fn the_gradient_matches_finite_differences() {
        let mut rng = Rng::seed_from_u64(9);
        let rows: Vec<f64> = (0..40 * 3).map(|_| rng.normal::<f64>()).collect();
        let targets: Vec<f64> = rows.chunks_exact(3).map(|r| if r[0] * r[1] > 0.0 { 1.0 } else { -1.0 }).collect();
        let sample = CentredSample::new(&rows, 3, &targets, 1).unwrap();
        let theta = [-0.7, 0.2, -1.5];
        let mut kernel = vec![0.0; 40 * 40];
        let mut gradient = [0.0; 3];
        sample.alignment(&theta, &mut kernel, Some(&mut gradient));
        for j in 0..3 {
            let h = 1e-5;
            let (mut up, mut down) = (theta, theta);
            up[j] += h;
            down[j] -= h;
            let numeric =
                (sample.alignment(&up, &mut kernel, None) - sample.alignment(&down, &mut kernel, None)) / (2.0 * h);
            assert!((gradient[j] - numeric).abs() < 1e-7 * numeric.abs().max(1.0), "{j}: {} vs {numeric}", gradient[j]);
        }
    }

    #[test]
    fn too_many_features_are_an_error_before_any_work() {
        let mut data = Dataset::<f64>::new();
        let record = Record { label: 1.0, indices: vec![0, 5000], values: vec![1.0, 2.0], ..Record::default() };
        data.push(&record).unwrap();
        data.push(&Record { label: 2.0, ..record }).unwrap();
        let e = by_alignment(&data, Task::Regression, 1).unwrap_err();
        assert_eq!(e, TrainError::TooManyFeatures { dim: 5001, max: MAX_FEATURES });
        assert!(e.to_string().contains("at most 4096 features"), "{e}");
    }

    /// A constant feature weighs 0; the others share `Σ wⱼ²`.
    #[test]
    fn a_constant_feature_weighs_nothing() {
        let mut rng = Rng::seed_from_u64(2);
        let mut raw = Dataset::<f64>::new();
        for _ in 0..100 {
            let values = vec![rng.normal::<f64>(), 5.0, rng.normal::<f64>()];
            let label = values[0] + 0.1 * values[2];
            raw.push(&Record { label, indices: vec![0, 1, 2], values, ..Record::default() }).unwrap();
        }
        let (data, _) = raw.standardized().unwrap();
        let w = by_alignment(&data, Task::Regression, 1).unwrap().weights;
        assert_eq!(w[1], 0.0);
        assert!((w[0] * w[0] + w[2] * w[2] - 2.0).abs() < 1e-9 && w[0] > w[2], "{w:?}");
    }

    #[test]
    fn constant_targets_are_an_error() {
        let mut data = Dataset::<f64>::new();
        for i in 0..10 {
            data.push(&Record {
                label: 1.0,
                indices: vec![0, 1],
                values: vec![f64::from(i), 0.5],
                ..Record::default()
            })
            .unwrap();
        }
        assert!(by_alignment(&data, Task::Regression, 1).is_err());
    }
}
