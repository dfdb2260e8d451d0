//! `kestrel train --scale auto`, the default: standardise the features or learn from them
//! as they come, whichever the leave-one-out criterion of `--gamma auto` scores better.
//!
//! Standardising maps feature `j` to `(x_j − μ_j)/σ_j` by its mean and population standard
//! deviation over the training rows ([`Dataset::standardized`]). Under a kernel of the
//! distance `‖x − x'‖²` that decides which features count: in raw units the features of
//! largest variance set every distance, standardised each counts alike. Neither is right
//! everywhere — on wine (proline's variance is 10⁵ times the others') standardising gains
//! 4 points of test accuracy, on handwritten digits (pixels of one unit, the informative
//! ones of larger variance) it loses 1.3 — so both are scored by the criterion the width
//! search ends with ([`fit::auto_width_search`]: the exact leave-one-out of the reduced
//! kernel ridge, the least-squares SVM's misclassifications for classes, at the best of
//! the five octaves around the alignment's width), and the rows are standardised only when
//! that score is strictly lower. Measured on 20 sets (BENCHMARKS.md, "Raw units").
//!
//! The linear SVM and the novelty detector have no such score (no kernel width to search;
//! no targets), and `auto` standardises their rows by rule ([`Verdict::ByRule`]), as
//! `kestrel stream` does by default: measured on thirteen classification sets in raw
//! units, it raised the linear SVM's test accuracy on six, by 1.5 to 20 points (its dual
//! coordinate descent stopped at its limit on eight of them unstandardised), and lowered it
//! on three by at most 2.6 (one test row of iris); it raised the novelty detector's mean
//! one-class AUC on nine (anes96 0.51 → 0.90, wine 0.82 → 0.99) and lowered it on four by
//! at most 0.014.
//!
//! Nothing is compared, and the rows are taken as they come, where it cannot be made or
//! cannot matter: rows already standardised
//! (every mean within [`STANDARD`] of 0 and every variance of 1 or 0:
//! [`Skipped::Standard`]); sparse rows, which centring would make dense — a standardised
//! copy over [`DENSER`] times the rows' bytes ([`Skipped::Sparse`]); a feature's variance
//! past the scalar's range ([`Skipped::Overflow`]); fewer than two rows; and a `--budget`
//! without room for the comparison ([`Skipped::Budget`]); rows without a score (one class,
//! constant targets: [`Skipped::Unscored`]), whose fit then names the cause. A standardised
//! copy that cannot be scored is not taken.
//!
//! Cost: the score twice — an alignment search on at most 300 rows and five ridge paths on
//! at most [`super::krr::CG_SUBSAMPLE`] rows each — of which the learner's own fit then
//! takes the kept copy's search instead of running it again ([`Decided::searched`]; rsvm,
//! krr and lssvm with their width, C or λ automatic). Memory: the rows, their standardised
//! copy and one score's fit at once.

use std::time::Instant;

use kestrel_core::Real;

use super::fit::{self, FitError, FitSettings, KernelChoice, Learner, Searched, Setting};
use super::krr::{RidgeScore, Task};
use super::{TrainError, check_budget};
use crate::dataset::{Dataset, HostScaler};

/// How far a mean may lie from 0, and a variance from 1, for rows already standardised.
pub const STANDARD: f64 = 1e-6;
/// The most a standardised copy may outweigh the rows as read (in bytes) for `auto` to
/// make it: rows at least about a quarter dense.
pub const DENSER: usize = 4;

/// Why `--scale auto` took the rows as they come without comparing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Skipped {
    /// The rows are standardised already.
    Standard,
    /// Centring would make sparse rows dense.
    Sparse,
    /// Fewer than two rows, nothing to leave out.
    TooFewRows,
    /// `--budget` has no room for the standardised copy beside the rows and a score's fit.
    Budget,
    /// A feature's mean or variance overflows the scalar (`f32` readings near 10¹⁹).
    Overflow,
    /// The rows as they come have no score (one class, constant targets): the fit that
    /// follows meets the same cause and names it.
    Unscored,
}

impl Skipped {
    /// Why, in words.
    pub fn reason(self) -> &'static str {
        match self {
            Skipped::Standard => "the features are standardised already",
            Skipped::Sparse => "the rows are sparse, and centring would make them dense",
            Skipped::TooFewRows => "fewer than two rows",
            Skipped::Budget => "--budget has no room for a standardised copy beside the rows",
            Skipped::Overflow => "a feature's variance overflows the scalar",
            Skipped::Unscored => "they have no leave-one-out score",
        }
    }
}

/// The two leave-one-out scores `--scale auto` compared.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Compared {
    /// The score of the rows as they come, then of the standardised rows: misclassifications
    /// (weighted by class under class weights) for classes, the mean squared residual for
    /// a regression.
    pub loo: (f64, f64),
    /// The standardised rows scored lower, and the model standardises.
    pub standardised: bool,
    /// Seconds the two scores took.
    pub seconds: f64,
}

/// What `--scale auto` decided.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Verdict {
    /// Both scored, the lower kept.
    Compared(Compared),
    /// Standardised without a score to compare (the linear SVM, the novelty detector).
    ByRule,
    /// Taken as they come without a comparison, and why.
    Skipped(Skipped),
}

impl Verdict {
    /// Whether the rows were standardised.
    pub fn standardised(&self) -> bool {
        match self {
            Verdict::Compared(compared) => compared.standardised,
            Verdict::ByRule => true,
            Verdict::Skipped(_) => false,
        }
    }
}

/// Standardised rows, and the scaler that standardised them (for the model file).
pub type Standardised<T> = (Dataset<T>, HostScaler<T>);

/// What `--scale auto` decided, and the rows it decided for.
pub struct Decided<T> {
    /// The standardised rows and their scaler when they won, else `None`: the rows as given.
    pub standardised: Option<Standardised<T>>,
    /// What was decided, and by what.
    pub verdict: Verdict,
    /// The width search that scored the rows kept, for the fit to take
    /// ([`FitSettings::searched`]) instead of running it again.
    pub searched: Option<Searched>,
}

/// Standardises `data` when that lowers the leave-one-out score of `settings`' learner at
/// its automatic width, or by rule for the linear SVM and the novelty detector (see the
/// module documentation for when it does neither).
///
/// # Errors
/// As [`Dataset::standardized`] when its copy cannot be allocated.
pub fn standardized_if_better<T: Real>(data: &Dataset<T>, settings: &FitSettings) -> Result<Decided<T>, FitError> {
    if data.len() < 2 {
        return Ok(Decided::skipped(Skipped::TooFewRows));
    }
    let copy = data.standardized_bytes();
    if copy > data.bytes().saturating_mul(DENSER) {
        return Ok(Decided::skipped(Skipped::Sparse));
    }
    if is_standard(data) {
        return Ok(Decided::skipped(Skipped::Standard));
    }
    match settings.learner {
        Learner::Svm | Learner::Novelty => by_rule(data, settings.budget),
        _ => compare(data, settings),
    }
}

impl<T> Decided<T> {
    /// The rows as they come, not compared because of `why`.
    fn skipped(why: Skipped) -> Self {
        Decided { standardised: None, verdict: Verdict::Skipped(why), searched: None }
    }
}

/// `data` standardised, or `None` when a feature's statistics overflow the scalar.
///
/// # Errors
/// When the copy cannot be allocated.
fn standardized<T: Real>(data: &Dataset<T>) -> Result<Option<Standardised<T>>, FitError> {
    match data.standardized() {
        Ok(standardised) => Ok(Some(standardised)),
        Err(kestrel_core::Error::NonFinite) => Ok(None),
        Err(error) => Err(TrainError::Core(error).into()),
    }
}

/// The linear SVM's and the novelty detector's rows, standardised by rule when `budget`
/// holds them beside their copy.
fn by_rule<T: Real>(data: &Dataset<T>, budget: Option<usize>) -> Result<Decided<T>, FitError> {
    if check_budget(data.bytes().saturating_add(data.standardized_bytes()), budget).is_err() {
        return Ok(Decided::skipped(Skipped::Budget));
    }
    Ok(match standardized(data)? {
        Some(standardised) => Decided { standardised: Some(standardised), verdict: Verdict::ByRule, searched: None },
        None => Decided::skipped(Skipped::Overflow),
    })
}

/// `data` and its standardised copy scored by [`fit::auto_width_search`], the lower kept.
fn compare<T: Real>(data: &Dataset<T>, settings: &FitSettings) -> Result<Decided<T>, FitError> {
    let (task, copy) = (settings.learner.task(), data.standardized_bytes());
    let beside = data.bytes().saturating_add(copy);
    if settings.budget.is_some() {
        let Ok(score_bytes) = fit::auto_width_score_bytes(settings, data, copy, task) else {
            return Ok(Decided::skipped(Skipped::Unscored));
        };
        if check_budget(beside.saturating_add(score_bytes), settings.budget).is_err() {
            return Ok(Decided::skipped(Skipped::Budget));
        }
    }
    let start = Instant::now();
    let settings = &FitSettings { budget: settings.budget.map(|b| b.saturating_sub(beside)), ..scored(settings) };
    let Some((standardised, scaler)) = standardized(data)? else { return Ok(Decided::skipped(Skipped::Overflow)) };
    let score = |rows: &Dataset<T>| fit::auto_width_search(settings, rows, task);
    // Rows that cannot be scored go on to the fit as they come, whose own check names the
    // cause; a standardised copy that cannot be scored is not taken (its score is infinite).
    let Ok((raw, raw_search)) = score(data) else { return Ok(Decided::skipped(Skipped::Unscored)) };
    let scaled = score(&standardised).ok();
    let won = scaled.as_ref().is_some_and(|(scaled, _)| scaled.key(task) < raw.key(task));
    let loo = (loss(raw, task), scaled.as_ref().map_or(f64::INFINITY, |(scaled, _)| loss(*scaled, task)));
    let verdict = Verdict::Compared(Compared { loo, standardised: won, seconds: start.elapsed().as_secs_f64() });
    Ok(match (won, scaled) {
        (true, Some((_, searched))) => Decided { standardised: Some((standardised, scaler)), verdict, searched },
        _ => Decided { standardised: None, verdict, searched: raw_search },
    })
}

/// `settings` as scored: under the linear kernel, which has no width to search, a width of
/// 1 that it ignores.
fn scored(settings: &FitSettings) -> FitSettings {
    let mut scored = settings.clone();
    if scored.kernel.kind == KernelChoice::Linear {
        scored.kernel.gamma = Some(Setting::Value(1.0));
    }
    scored
}

/// A score as the verdict reports it: misclassifications for classes, else the mean
/// squared residual.
fn loss(score: RidgeScore, task: Task) -> f64 {
    match task {
        Task::Classification => score.weighted_errors,
        Task::Regression => score.mse,
    }
}

/// Whether every feature of `data` has a mean within [`STANDARD`] of 0 and a variance
/// within it of 1, or 0 (a constant 0, which standardising leaves 0).
fn is_standard<T: Real>(data: &Dataset<T>) -> bool {
    let Some((means, variances)) = data.feature_moments() else { return false };
    means.iter().zip(&variances).all(|(m, &v)| m.abs() <= STANDARD && ((v - 1.0).abs() <= STANDARD || v == 0.0))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::Record;
    use kestrel_core::Rng;

    /// `n` rows of `d` standard normal features times `scales`, the class `label(x)`.
    fn rows(n: usize, seed: u64, scales: &[f64], label: impl Fn(&[f64]) -> f64) -> Dataset<f64> {
        let mut rng = Rng::seed_from_u64(seed);
        let mut data = Dataset::<f64>::new();
        for _ in 0..n {
            let unit: Vec<f64> = scales.iter().map(|_| rng.normal::<f64>()).collect();
            let values: Vec<f64> = unit.iter().zip(scales).map(|(x, s)| x * s).collect();
            let indices = (0..u32::try_from(scales.len()).unwrap()).collect();
            data.push(&Record { label: label(&unit), indices, values, ..Record::default() }).unwrap();
        }
        data
    }

    /// The comparison of `verdict`, which must be one.
    fn compared(verdict: Verdict) -> Compared {
        match verdict {
            Verdict::Compared(compared) => compared,
            other => panic!("not compared: {other:?}"),
        }
    }

    fn settings(learner: Learner) -> FitSettings {
        FitSettings { centers: Some(40), ..FitSettings::new(learner) }
    }

    /// The class depends on the small feature alone, and a large one of noise sets the raw
    /// distances: standardising wins, and the rows are those of `standardized`.
    #[test]
    fn a_loud_irrelevant_feature_is_standardised_away() {
        let data = rows(300, 1, &[1.0, 1000.0], |x| if (2.0 * x[0]).sin() > 0.0 { 1.0 } else { -1.0 });
        let decided = standardized_if_better(&data, &settings(Learner::Rsvm)).unwrap();
        let compared = compared(decided.verdict);
        assert!(compared.standardised && compared.loo.1 < compared.loo.0, "{compared:?}");
        let (rows, _) = decided.standardised.unwrap();
        let (expected, _) = data.standardized().unwrap();
        assert!((0..data.len()).all(|i| rows.row(i) == expected.row(i)));
    }

    /// The target depends on the large feature, and the small ones are noise: in raw units
    /// the kernel already looks at the right one, and standardising would let the noise in.
    #[test]
    fn raw_units_that_already_weigh_right_are_kept() {
        let data = rows(300, 2, &[100.0, 1.0, 1.0, 1.0, 1.0], |x| (2.0 * x[0]).sin());
        let decided = standardized_if_better(&data, &settings(Learner::Krr)).unwrap();
        let compared = compared(decided.verdict);
        assert!(!compared.standardised && compared.loo.0 <= compared.loo.1, "{compared:?}");
        assert!(decided.standardised.is_none());
    }

    /// The decision is the comparison's, for every kernel.
    #[test]
    fn every_kernel_is_compared() {
        let data = rows(200, 3, &[1.0, 1000.0], |x| x[0] * x[0]);
        for kind in [KernelChoice::Rbf, KernelChoice::Poly, KernelChoice::Linear] {
            let mut settings = settings(Learner::Krr);
            settings.kernel.kind = kind;
            let decided = standardized_if_better(&data, &settings).unwrap();
            let compared = compared(decided.verdict);
            assert_eq!(compared.standardised, compared.loo.1 < compared.loo.0, "{kind:?}: {compared:?}");
            assert_eq!(decided.standardised.is_some(), compared.standardised);
        }
    }

    /// No comparison where it cannot be made or cannot matter; none needed by rule.
    #[test]
    fn what_is_not_compared() {
        let data = rows(100, 4, &[1.0, 50.0], |x| x[0]);
        // The linear SVM and the novelty detector: standardised by rule, the rows those of
        // `standardized`.
        for learner in [Learner::Svm, Learner::Novelty] {
            let decided = standardized_if_better(&data, &settings(learner)).unwrap();
            assert_eq!(decided.verdict, Verdict::ByRule);
            let (rows, _) = decided.standardised.unwrap();
            let (expected, _) = data.standardized().unwrap();
            assert!((0..data.len()).all(|i| rows.row(i) == expected.row(i)));
        }
        let (standard, _) = data.standardized().unwrap();
        let verdict = standardized_if_better(&standard, &settings(Learner::Krr)).unwrap().verdict;
        assert_eq!(verdict, Verdict::Skipped(Skipped::Standard));
        let mut sparse = Dataset::<f64>::new();
        for i in 0..50u32 {
            let record = Record { label: f64::from(i), indices: vec![i], values: vec![1.0], ..Record::default() };
            sparse.push(&record).unwrap();
        }
        let verdict = standardized_if_better(&sparse, &settings(Learner::Krr)).unwrap().verdict;
        assert_eq!(verdict, Verdict::Skipped(Skipped::Sparse));
        let one = rows(1, 5, &[1.0, 50.0], |x| x[0]);
        let verdict = standardized_if_better(&one, &settings(Learner::Krr)).unwrap().verdict;
        assert_eq!(verdict, Verdict::Skipped(Skipped::TooFewRows));
        let tight = FitSettings { budget: Some(data.bytes() + data.standardized_bytes()), ..settings(Learner::Krr) };
        assert_eq!(standardized_if_better(&data, &tight).unwrap().verdict, Verdict::Skipped(Skipped::Budget));
    }

    /// In `f32`, readings near 10²⁰ have a variance past the scalar's range: `auto` takes them
    /// as they come, as the default did before it, instead of failing the fit.
    #[test]
    fn statistics_that_overflow_are_not_compared() {
        let mut data = Dataset::<f32>::new();
        for i in 0..20u32 {
            let values = vec![f64::from(i) * 1e19, f64::from(i % 3)];
            let record = Record { label: f64::from(i % 2), indices: vec![0, 1], values, ..Record::default() };
            data.push(&record).unwrap();
        }
        let decided = standardized_if_better(&data, &settings(Learner::Rsvm)).unwrap();
        assert_eq!(decided.verdict, Verdict::Skipped(Skipped::Overflow));
    }

    /// Constant targets have no score: the rows go on as they come, for the fit to refuse.
    #[test]
    fn constant_targets_are_left_to_the_fit() {
        let data = rows(50, 6, &[1.0, 50.0], |_| 3.0);
        let decided = standardized_if_better(&data, &settings(Learner::Krr)).unwrap();
        assert_eq!(decided.verdict, Verdict::Skipped(Skipped::Unscored));
        assert!(fit::fit(&settings(Learner::Krr), &data).is_err());
    }
}
