//! Searching a learner's settings: the kernel width by exact leave-one-out, anything else
//! by k-fold cross-validation (`kestrel tune`, and the last step of `--gamma auto`).
//!
//! **Widths by leave-one-out** ([`widths_by_loo`]): at each candidate `γ`, the reduced set
//! is selected, whitened, and one ridge path built ([`krr::score`]); every ridge of the
//! path is then scored by its exact leave-one-out residuals (seed 000 §4.1.1). A width
//! costs one reduced kernel ridge fit, `O(n·m·d + n·m² + m³)`, whatever the number of
//! ridges (or SVM costs `C = 1/(2λ)`) compared. Classification is scored by the
//! least-squares SVM's LOO errors (then its LOO squared error), regression by the LOO mean
//! squared error.
//!
//! **Cross-validation** ([`Folds`]): rows are shuffled by the seed, ordered by label
//! (stably) and dealt to the `k` folds in turn, so every fold holds each class — or each
//! range of the target — in proportion. Memory: one fold assignment per row, and the
//! caller's copies of one training fold and one held-out fold at a time.

use std::time::Instant;

use kestrel_core::{Error, Real, Rng};

use super::TrainError;
use super::gamma::with_gamma;
use super::krr::{self, KrrConfig, KrrSummary, Task};
use crate::dataset::Dataset;

/// One width and what leave-one-out made of it.
#[derive(Clone, Debug, PartialEq)]
pub struct WidthScore {
    /// `γ`.
    pub gamma: f64,
    /// The path at this width: centres, the best ridge and every ridge scored.
    pub summary: KrrSummary,
    /// Seconds the width took.
    pub seconds: f64,
}

/// `gamma·2^k` for `k = low..=high`.
pub fn octaves(gamma: f64, low: i32, high: i32) -> Vec<f64> {
    (low..=high).map(|k| gamma * 2f64.powi(k)).collect()
}

/// Scores every width of `gammas` by the leave-one-out of the reduced kernel ridge
/// configured by `config` (its kernel's kind, its `γ` replaced), over `ridges` (the
/// automatic path when empty), calling `each` after every width.
///
/// # Errors
/// [`TrainError`] as [`krr::score`], for the first width that fails.
pub fn widths_by_loo<T: Real>(
    data: &Dataset<T>,
    config: &KrrConfig<T>,
    gammas: &[f64],
    ridges: &[f64],
    mut each: impl FnMut(&WidthScore),
) -> Result<Vec<WidthScore>, TrainError> {
    let mut scores = Vec::with_capacity(gammas.len());
    for &gamma in gammas {
        let start = Instant::now();
        let kernel = with_gamma(config.kernel.kind(), T::from_f64(gamma))?;
        let summary = krr::score(data, &KrrConfig { kernel, ..config.clone() }, ridges)?;
        let score = WidthScore { gamma, summary, seconds: start.elapsed().as_secs_f64() };
        each(&score);
        scores.push(score);
    }
    Ok(scores)
}

/// The most octaves [`extend_past_edges`] adds.
pub const EXTRA_OCTAVES: usize = 6;

/// While the best of `scores` (for `config`'s task) is the narrowest or the widest width
/// scored, scores the next octave past it ([`widths_by_loo`], calling `each`), at most
/// [`EXTRA_OCTAVES`] more: a grid around the alignment's width may stop short where
/// alignment favours the narrowest kernels (classes of several clusters each).
///
/// # Errors
/// As [`widths_by_loo`].
pub fn extend_past_edges<T: Real>(
    data: &Dataset<T>,
    config: &KrrConfig<T>,
    ridges: &[f64],
    scores: &mut Vec<WidthScore>,
    mut each: impl FnMut(&WidthScore),
) -> Result<(), TrainError> {
    for _ in 0..EXTRA_OCTAVES {
        let (lowest, highest) =
            scores.iter().fold((f64::INFINITY, 0.0f64), |(low, high), s| (low.min(s.gamma), high.max(s.gamma)));
        let next = match best_width(scores, config.task).map(|best| best.gamma) {
            Some(best) if best == lowest => lowest / 2.0,
            Some(best) if best == highest => highest * 2.0,
            _ => return Ok(()),
        };
        scores.extend(widths_by_loo(data, config, &[next], ridges, &mut each)?);
    }
    Ok(())
}

/// The best of `scores` for `task` (fewest LOO errors, then the lowest LOO squared error;
/// the first of equals).
pub fn best_width(scores: &[WidthScore], task: Task) -> Option<&WidthScore> {
    let key = |s: &WidthScore| s.summary.chosen.key(task);
    scores.iter().reduce(|best, s| if key(s) < key(best) { s } else { best })
}

/// The rows' assignment to `k` cross-validation folds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Folds {
    fold_of: Vec<usize>,
    k: usize,
}

impl Folds {
    /// Deals the rows of `data` to `k` folds, stratified by label (see the module docs).
    ///
    /// # Errors
    /// `InvalidParam { name: "folds" }` for `k < 2`; `TooFewRows` for fewer rows than
    /// folds.
    pub fn new<T: Real>(data: &Dataset<T>, k: usize, seed: u64) -> Result<Self, TrainError> {
        let n = data.len();
        if k > n {
            return Err(TrainError::TooFewRows { n, min: k, what: "cross-validation with a row in each fold" });
        }
        if k < 2 {
            return Err(TrainError::Core(Error::InvalidParam { name: "folds" }));
        }
        let mut order: Vec<usize> = (0..n).collect();
        Rng::seed_from_u64(seed).shuffle(&mut order);
        let labels = data.labels();
        order.sort_by(|&a, &b| labels.get(a).unwrap_or(&0.0).total_cmp(labels.get(b).unwrap_or(&0.0)));
        let mut fold_of = vec![0; n];
        for (position, &row) in order.iter().enumerate() {
            if let Some(slot) = fold_of.get_mut(row) {
                *slot = position % k;
            }
        }
        Ok(Folds { fold_of, k })
    }

    /// Number of folds.
    pub fn count(&self) -> usize {
        self.k
    }

    /// `(training rows, held-out rows)` of fold `fold`.
    pub fn split<T: Real>(&self, data: &Dataset<T>, fold: usize) -> (Dataset<T>, Dataset<T>) {
        let in_fold = |i: usize| self.fold_of.get(i) == Some(&fold);
        (data.subset(|i| !in_fold(i)), data.subset(in_fold))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::batch::centres::Selection;
    use crate::batch::class_weights::ClassWeights;
    use crate::source::Record;
    use kestrel_core::Kernel;

    /// A 3×3 checkerboard on [−2, 2]²: no wide kernel (nearly quadratic) resolves it.
    fn checkerboard(n: usize, seed: u64) -> Dataset<f64> {
        let mut data = Dataset::<f64>::new();
        let mut rng = Rng::seed_from_u64(seed);
        for _ in 0..n {
            let (a, b) = (rng.uniform_in(-2.0, 2.0), rng.uniform_in(-2.0, 2.0));
            let label = if (2.0f64 * a).sin() * (2.0f64 * b).sin() > 0.0 { 1.0 } else { -1.0 };
            data.push(&Record { label, indices: vec![0, 1], values: vec![a, b], ..Record::default() }).unwrap();
        }
        data
    }

    /// The least-squares SVM of up to 60 IRSVM centres, its ridge by leave-one-out.
    fn config() -> KrrConfig<f64> {
        KrrConfig {
            kernel: Kernel::rbf(1.0).unwrap(),
            centres: 60,
            selection: Selection::Irsvm { rms: 0.001 },
            ridge: krr::Ridge::Auto,
            task: Task::Classification,
            seed: 1,
            budget: None,
            class_weights: ClassWeights::Unit,
            posterior: false,
        }
    }

    #[test]
    fn leave_one_out_prefers_a_width_that_resolves_the_checkerboard() {
        let data = checkerboard(300, 1);
        let config = config();
        let mut seen = 0;
        let gammas = octaves(1.0, -8, 2);
        let scores = widths_by_loo(&data, &config, &gammas, &[], |_| seen += 1).unwrap();
        assert_eq!((scores.len(), seen), (11, 11));
        let best = best_width(&scores, Task::Classification).unwrap();
        let widest = &scores[0];
        assert!(best.summary.chosen.errors * 3 < widest.summary.chosen.errors, "{best:?} vs {widest:?}");
        assert!(best.gamma >= 0.25, "γ = {}", best.gamma);
        // The same width scored alone gives the same path.
        let alone =
            krr::score(&data, &KrrConfig { kernel: Kernel::rbf(best.gamma).unwrap(), ..config.clone() }, &[]).unwrap();
        assert_eq!(alone, best.summary);
        // Fixed ridges: only those are scored.
        let fixed = widths_by_loo(&data, &config, &[1.0], &[0.1, 1.0], |_| {}).unwrap();
        let lambdas: Vec<f64> = fixed[0].summary.path.iter().map(|s| s.lambda).collect();
        assert_eq!(lambdas, [0.1, 1.0]);
    }

    /// Widths far too narrow for the checkerboard: the widest wins, so the octaves past it
    /// are scored until one no longer improves — the best then lies inside the widths
    /// scored — or six were added; started inside, nothing is added.
    #[test]
    fn the_widths_go_on_past_an_edge_that_wins() {
        let data = checkerboard(300, 1);
        let config = config();
        let mut scores = widths_by_loo(&data, &config, &octaves(256.0, -1, 1), &[], |_| {}).unwrap();
        let first = best_width(&scores, Task::Classification).unwrap().clone();
        assert_eq!(first.gamma, 128.0, "the widest of 128, 256, 512");
        let mut added = 0;
        extend_past_edges(&data, &config, &[], &mut scores, |_| added += 1).unwrap();
        assert_eq!(scores.len(), 3 + added);
        assert!((1..=EXTRA_OCTAVES).contains(&added), "{added}");
        let best = best_width(&scores, Task::Classification).unwrap();
        assert!(best.summary.chosen.errors < first.summary.chosen.errors, "{best:?} vs {first:?}");
        let lowest = scores.iter().map(|s| s.gamma).fold(f64::INFINITY, f64::min);
        assert!(best.gamma > lowest || added == EXTRA_OCTAVES, "γ = {} of {lowest}", best.gamma);
        // Each added width is half the one before.
        assert_eq!(scores.last().unwrap().gamma, 128.0 / 2f64.powi(added as i32));
        let mut inside = widths_by_loo(&data, &config, &octaves(1.0, -2, 2), &[], |_| {}).unwrap();
        let best_inside = best_width(&inside, Task::Classification).unwrap().gamma;
        if best_inside != 0.25 && best_inside != 4.0 {
            extend_past_edges(&data, &config, &[], &mut inside, |_| panic!("nothing to add")).unwrap();
        }
    }

    #[test]
    fn folds_partition_the_rows_and_keep_the_classes() {
        let data = checkerboard(103, 2);
        let folds = Folds::new(&data, 5, 7).unwrap();
        let positives = data.labels().iter().filter(|&&y| y > 0.0).count();
        let mut held = 0;
        for fold in 0..folds.count() {
            let (train, test) = folds.split(&data, fold);
            assert_eq!(train.len() + test.len(), 103);
            assert!(test.len() == 20 || test.len() == 21, "{}", test.len());
            let share = test.labels().iter().filter(|&&y| y > 0.0).count();
            assert!(share.abs_diff(positives / 5) <= 1, "{share} of {positives}");
            held += test.len();
        }
        assert_eq!(held, 103);
        assert!(Folds::new(&data, 1, 7).is_err());
        let n = data.len();
        let short = Folds::new(&data, n + 1, 7).err().map(|e| e.to_string());
        let message =
            format!("cross-validation with a row in each fold needs at least {} rows, the data have {n}", n + 1);
        assert_eq!(short, Some(message));
    }
}
