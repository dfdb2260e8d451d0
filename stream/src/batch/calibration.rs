//! Class probabilities for a fitted classifier (`kestrel train --probabilities`): Platt's
//! sigmoids ([`kestrel_core::calibration`]) fitted to decision values held out by k-fold
//! cross-validation, as LIBSVM's `-b 1` does.
//!
//! The rows are dealt to [`FOLDS`] folds stratified by label ([`Folds`]); the learner is
//! fitted on all folds but one and gives its decision values for the rows of that one, so
//! that every row has values from a model that did not learn it (a model's values for its
//! own rows are overconfident: an SVM pushes them past its margin). The fold models take
//! what `auto` chose on the whole set (the width, C, the ridge, the centres), not a search
//! of their own: the values then come from models of the same settings as the one the
//! probabilities are for, and the five fits cost five fits, not five searches. (mrrsvm's
//! parts choose their own settings, so its folds fit as the whole did.) A fold model that
//! lacks a class (one of a few rows, all in the held-out fold) gives no value for it: the
//! rows of that fold are left out of that class's sigmoid. A cross-validation run elsewhere
//! (the Spark estimator's, on its executors) takes the same two steps: [`held_out_values`]
//! gives a fold model's values as the whole model's outputs, [`calibrated`] fits the
//! sigmoids to them.
//!
//! Cost: [`FOLDS`] fits on 4/5 of the rows, and one decision value per row and output.
//! Memory: beside the data set, a fold's rows copied in two parts (its training rows and
//! its held-out rows: the set's bytes again, and one row offset), the decision values with
//! their classes (`n × outputs` pairs of 16 bytes, reserved at once) and one fold's fit.
//! Under a budget, the part fixed by the data's shape ([`held_bytes`]) is checked before
//! the first fit, and each fold's fit is given the budget less what the cross-validation
//! holds beside its training rows: a refusal names the bytes of the whole.

use kestrel_core::calibration::Sigmoid;
use kestrel_core::{Error, Real};

use super::fit::{self, Field, FitError, FitSettings, Fitted, Learner, Setting};
use super::tune::Folds;
use super::{TrainError, check_budget};
use crate::dataset::Dataset;
use crate::labels;
use crate::model::{self, Predictor};
use crate::source::Record;

/// Folds of the cross-validation (LIBSVM's `-b 1` takes 5).
pub const FOLDS: usize = 5;

/// Rows of one class's decision values: `(value, whether the row is of the class)`.
type Pairs = Vec<(f64, bool)>;

/// The bytes the cross-validation holds on `data` beside its folds' fits, for a classifier
/// of `outputs` decision values (module doc): the set, its copy in a fold's two parts, and
/// the decision values with their classes.
pub fn held_bytes<T: Real>(data: &Dataset<T>, outputs: usize) -> usize {
    let split = data.bytes().saturating_add(size_of::<usize>());
    data.bytes().saturating_add(split).saturating_add(pairs_bytes(data.len(), outputs))
}

/// The bytes of the decision values' pairs of `n` rows and `outputs` values a row.
fn pairs_bytes(n: usize, outputs: usize) -> usize {
    n.saturating_mul(outputs).saturating_mul(size_of::<(f64, bool)>())
}

/// The sigmoids that give `fitted`'s class probabilities (one for two classes, one per
/// class beyond, in the order of its labels), from decision values held out by
/// [`FOLDS`]-fold cross-validation of `settings`' learner on `data` (module doc).
///
/// `fitted` is a classifier of decision values (svm, rsvm, lssvm, mrrsvm: [`fit::fit`]
/// refuses the others before fitting them).
///
/// # Errors
/// `Settings` for fewer rows than folds, `InvalidParam` for a model of no decision values,
/// and a fold's fit's own.
pub fn sigmoids<T: Real>(settings: &FitSettings, data: &Dataset<T>, fitted: &Fitted) -> Result<Vec<Sigmoid>, FitError> {
    if data.len() < FOLDS {
        let n = data.len();
        return Err(FitError::Settings(format!(
            "class probabilities are fitted to {FOLDS}-fold cross-validated decision values: they need {FOLDS} rows \
             or more, the data have {n}"
        )));
    }
    let labels = model::load(&fitted.bytes).map_err(TrainError::Core)?.labels();
    let outputs = labels::outputs_of_classes(labels.len());
    check_budget(held_bytes(data, outputs), settings.budget)?;
    let folds = Folds::new(data, FOLDS, settings.seed)?;
    let mut pinned = pinned(settings, fitted);
    let mut pairs: Vec<Pairs> = vec![Vec::with_capacity(data.len()); outputs];
    let mut record = Record::default();
    for fold in 0..folds.count() {
        let (train, held_out) = folds.split(data, fold);
        // The fold's fit has what the cross-validation leaves it beside its training rows.
        let beside = data.bytes().saturating_add(held_out.bytes()).saturating_add(pairs_bytes(data.len(), outputs));
        pinned.budget = settings.budget.map(|budget| budget.saturating_sub(beside));
        let fold_fit = fit::fit(&pinned, &train).map_err(|e| as_whole(e, beside, settings.budget))?;
        let mut model = model::load(&fold_fit.bytes).map_err(TrainError::Core)?;
        for i in 0..held_out.len() {
            if !held_out.record(i, &mut record) {
                continue;
            }
            let values = held_out_values(&labels, model.as_mut(), &record).map_err(TrainError::Core)?;
            add_row(&mut pairs, &labels, &values, record.label);
        }
    }
    sigmoids_of(&pairs)
}

/// `bytes`, a classifier's model file, with the class probabilities fitted to decision
/// values held out from it by a cross-validation run elsewhere (the Spark estimator's, on
/// the executors): `values` holds `outputs` values a row (one for two classes, one per
/// class beyond, in the model's order of labels; NaN where a fold model had none), row
/// after row, and `labels` each row's class.
///
/// # Errors
/// `Settings` when `values` is not one row of the model's outputs per label, or a class
/// has no held-out value; the model file's own.
pub fn calibrated(bytes: Vec<u8>, values: &[f64], labels: &[f64]) -> Result<Vec<u8>, FitError> {
    let classes = model::load(&bytes).map_err(TrainError::Core)?.labels();
    let outputs = labels::outputs_of_classes(classes.len());
    if classes.len() < 2 || values.len() != labels.len().saturating_mul(outputs) {
        return Err(FitError::Settings(format!(
            "{} held-out decision values for {} rows of a model of {} classes ({outputs} a row)",
            values.len(),
            labels.len(),
            classes.len()
        )));
    }
    let mut pairs: Vec<Pairs> = vec![Vec::with_capacity(labels.len()); outputs];
    for (row, &label) in values.chunks_exact(outputs).zip(labels) {
        add_row(&mut pairs, &classes, row, label);
    }
    if pairs.iter().any(Vec::is_empty) {
        return Err(FitError::Settings("a class's sigmoid has no held-out decision value".into()));
    }
    let sigmoids = sigmoids_of(&pairs)?;
    Ok(model::with_calibration(bytes, &sigmoids).map_err(TrainError::Core)?)
}

/// The decision values a fold's model (`fold`, fitted without `record`) gives `record`, as
/// the outputs of the classifier of `labels` the probabilities are for: one for two
/// classes (negated when the fold model lists them the other way round), one per class
/// beyond; NaN for a class the fold model lacks.
///
/// # Errors
/// The fold model's, for a record it refuses.
pub fn held_out_values(labels: &[f64], fold: &mut dyn Predictor, record: &Record) -> Result<Vec<f64>, Error> {
    let decisions = fold.decision_values(record)?.unwrap_or_default();
    let outputs = outputs_for(labels, &fold.labels());
    let value = |output: Option<(usize, f64)>| output.and_then(|(at, sign)| Some(sign * decisions.get(at)?));
    Ok(outputs.into_iter().map(|output| value(output).unwrap_or(f64::NAN)).collect())
}

/// Adds a held-out row of class `label` to each output's pairs of a classifier of
/// `labels`, its `values` one per output (NaN where a fold model had none).
fn add_row(pairs: &mut [Pairs], labels: &[f64], values: &[f64], label: f64) {
    let binary = labels.len() == 2;
    let truth = labels::key(label);
    for (j, (class_pairs, &value)) in pairs.iter_mut().zip(values).enumerate() {
        // Binary: the one value's positive side is the second label.
        let class = labels.get(if binary { 1 } else { j }).copied().unwrap_or(f64::NAN);
        if value.is_finite() {
            class_pairs.push((value, truth == labels::key(class)));
        }
    }
}

/// Each output's sigmoid fitted to its pairs.
fn sigmoids_of(pairs: &[Pairs]) -> Result<Vec<Sigmoid>, FitError> {
    pairs
        .iter()
        .map(|class_pairs| {
            let fitted = Sigmoid::fit(class_pairs.len(), |i| class_pairs.get(i).copied().unwrap_or((0.0, false)));
            fitted.map_err(|e| FitError::from(TrainError::Core(e)))
        })
        .collect()
}

/// A fold's fit's `error`, a refusal of its share of the budget told as one of the whole
/// `budget`: its bytes with the `beside` bytes the cross-validation holds besides.
fn as_whole(error: FitError, beside: usize, budget: Option<usize>) -> FitError {
    match (error, budget) {
        (FitError::Train(TrainError::OverBudget { needed, .. }), Some(budget)) => {
            FitError::Train(TrainError::OverBudget { needed: needed.saturating_add(beside), budget })
        }
        (error, _) => error,
    }
}

/// For each output of a classifier of `labels`, where a fold model of `fold_labels` has
/// its value and the sign to give it: `None` for a class the fold model lacks.
fn outputs_for(labels: &[f64], fold_labels: &[f64]) -> Vec<Option<(usize, f64)>> {
    let key = |l: &f64| labels::key(*l);
    if labels.len() == 2 {
        // One value each: the same when the labels come in the same order, its negation
        // when in the other; none when the fold model has not both.
        let same = fold_labels.iter().map(key).eq(labels.iter().map(key));
        let swapped = fold_labels.iter().rev().map(key).eq(labels.iter().map(key));
        return vec![match (same, swapped) {
            (true, _) => Some((0, 1.0)),
            (false, true) => Some((0, -1.0)),
            _ => None,
        }];
    }
    labels
        .iter()
        .map(|label| {
            // Beyond two classes the fold model has one value per class, unless it has two.
            let at = fold_labels.iter().position(|l| key(l) == key(label));
            match fold_labels.len() {
                2 => None,
                _ => at.map(|at| (at, 1.0)),
            }
        })
        .collect()
}

/// `settings` with what `auto` chose for `fitted` given as numbers (module doc), so that
/// the fold models are fitted as it was without searching again.
fn pinned(settings: &FitSettings, fitted: &Fitted) -> FitSettings {
    let mut pinned = FitSettings { probabilities: false, ..settings.clone() };
    if settings.learner == Learner::Mrrsvm {
        return pinned;
    }
    let Some(Field::Fields(chosen)) = fitted.summary.get("chosen") else { return pinned };
    let number = |key: &str| match chosen.get(key) {
        Some(Field::Number(value)) => Some(*value),
        _ => None,
    };
    if let Some(gamma) = number("gamma") {
        pinned.kernel.gamma = Some(Setting::Value(gamma));
    }
    if let Some(c) = number("c") {
        pinned.svm.c = Some(Setting::Value(c));
    }
    if let Some(lambda) = number("lambda") {
        pinned.lambda = Some(Setting::Value(lambda));
    }
    if let Some(Field::Count(centres)) = chosen.get("centers") {
        // The prefix leave-one-out chose, selected on the fold as on the whole.
        pinned.centers = Some(*centres);
        pinned.delta = Some(Setting::Value(fit::CLASSIFICATION_DELTA));
    }
    pinned.searched = None;
    pinned
}

#[cfg(test)]
mod tests {
    use super::*;
    use kestrel_core::Rng;

    /// Two classes whose labels follow the first feature with noise: P(1 | x) rises with x.
    fn noisy(n: usize, seed: u64) -> Dataset<f64> {
        let mut data = Dataset::new();
        let mut rng = Rng::seed_from_u64(seed);
        for _ in 0..n {
            let (x, y) = (rng.uniform_in(-2.0, 2.0), rng.uniform_in(-1.0, 1.0));
            let p = 1.0 / (1.0 + (-2.0 * x).exp());
            let label = if rng.uniform::<f64>() < p { 1.0 } else { -1.0 };
            data.push(&Record { label, indices: vec![0, 1], values: vec![x, y], ..Record::default() }).unwrap();
        }
        data
    }

    #[test]
    fn outputs_follow_the_labels_of_the_fold_models() {
        assert_eq!(outputs_for(&[-1.0, 1.0], &[-1.0, 1.0]), [Some((0, 1.0))]);
        assert_eq!(outputs_for(&[-1.0, 1.0], &[1.0, -1.0]), [Some((0, -1.0))]);
        assert_eq!(outputs_for(&[-1.0, 1.0], &[1.0]), [None]);
        assert_eq!(outputs_for(&[0.0, 1.0, 2.0], &[2.0, 0.0, 1.0]), [Some((1, 1.0)), Some((2, 1.0)), Some((0, 1.0))]);
        assert_eq!(
            outputs_for(&[0.0, 1.0, 2.0, 3.0], &[0.0, 1.0, 3.0]),
            [Some((0, 1.0)), Some((1, 1.0)), None, Some((2, 1.0))]
        );
        assert_eq!(outputs_for(&[0.0, 1.0, 2.0], &[0.0, 2.0]), [None, None, None]);
    }

    /// The held-out values' sigmoid gives probabilities near the truth's, where the
    /// training values' would be overconfident: the sigmoid of a linear SVM, whose value is
    /// about a scaled x, has a slope well under what the model's own margins suggest.
    #[test]
    fn held_out_sigmoids_are_calibrated() {
        let data = noisy(600, 1);
        let settings = FitSettings::new(Learner::Svm);
        let fitted = fit::fit(&settings, &data).unwrap();
        let sigmoids = sigmoids(&settings, &data, &fitted).unwrap();
        assert_eq!(sigmoids.len(), 1);
        let mut model = model::load(&model::with_calibration(fitted.bytes.clone(), &sigmoids).unwrap()).unwrap();
        // P(1 | x) on fresh rows against the truth σ(2x): the mean absolute gap is small.
        let (mut gap, test) = (0.0, noisy(400, 2));
        let mut record = Record::default();
        for i in 0..test.len() {
            test.record(i, &mut record);
            let p = model.probabilities(&record).unwrap().unwrap();
            let truth = 1.0 / (1.0 + (-2.0 * record.values[0]).exp());
            assert!((p[0] + p[1] - 1.0).abs() < 1e-12);
            gap += (p[1] - truth).abs() / test.len() as f64;
        }
        assert!(gap < 0.06, "mean |p − truth| = {gap}");
    }

    /// Values held out elsewhere give the model the sigmoid fitted to them (the rows of
    /// NaN left out, the positive side the second label); values that are not a row per
    /// label, or a class without one, are refused.
    #[test]
    fn values_held_out_elsewhere_calibrate_a_model() {
        let data = noisy(200, 6);
        let bytes = fit::fit(&FitSettings::new(Learner::Svm), &data).unwrap().bytes;
        let (values, labels): (Vec<f64>, Vec<f64>) = (0..200)
            .map(|i| (if i % 50 == 7 { f64::NAN } else { (i as f64 - 100.0) / 40.0 }, data.labels()[i]))
            .unzip();
        let model_labels = model::load(&bytes).unwrap().labels();
        let pairs: Vec<(f64, bool)> = values
            .iter()
            .zip(&labels)
            .filter(|(v, _)| v.is_finite())
            .map(|(&v, &label)| (v, label == model_labels[1]))
            .collect();
        let expected = Sigmoid::fit(pairs.len(), |i| pairs[i]).unwrap();
        let calibrated = calibrated(bytes.clone(), &values, &labels).unwrap();
        let envelope = kestrel_core::model::Envelope::parse(&calibrated).unwrap();
        assert_eq!(envelope.calibration_iter().collect::<Vec<_>>(), [expected]);
        let e = calibrated_error(bytes.clone(), &values[..199], &labels);
        assert!(e.contains("199 held-out decision values for 200 rows of a model of 2 classes"), "{e}");
        let e = calibrated_error(bytes, &[f64::NAN; 200], &labels);
        assert!(e.contains("no held-out decision value"), "{e}");
    }

    fn calibrated_error(bytes: Vec<u8>, values: &[f64], labels: &[f64]) -> String {
        calibrated(bytes, values, labels).unwrap_err().to_string()
    }

    #[test]
    fn fewer_rows_than_folds_are_told() {
        let settings = FitSettings { probabilities: true, ..FitSettings::new(Learner::Svm) };
        let e = fit::fit(&settings, &noisy(4, 5)).unwrap_err().to_string();
        assert!(e.contains("class probabilities are fitted to 5-fold cross-validated decision values"), "{e}");
        assert!(e.contains("the data have 4"), "{e}");
    }

    /// Under a budget the cross-validation counts what it holds: a budget the fit alone
    /// takes but not the folds' copies beside the set is refused before fitting, naming
    /// their bytes; one that holds those but not a fold's fit beside them is refused with
    /// the bytes of the whole; an ample one gives the sigmoids found without a budget.
    #[test]
    fn the_cross_validation_is_within_the_budget() {
        // Wide rows (38 features of noise beside the two), so that the set outweighs the
        // solvers' working memory: a budget can then hold a fit but not the folds' copies.
        let narrow = noisy(400, 4);
        let mut data = Dataset::<f64>::new();
        let mut record = Record::default();
        for i in 0..narrow.len() {
            narrow.record(i, &mut record);
            record.indices = (0..40).collect();
            record.values.extend((2..40).map(|j| ((i * j) % 17) as f64 / 17.0));
            data.push(&record).unwrap();
        }
        let held = held_bytes(&data, 1);
        assert_eq!(held, 2 * data.bytes() + 8 + 400 * 16);
        let settings = |learner| {
            let mut settings = FitSettings { probabilities: true, ..FitSettings::new(learner) };
            (settings.centers, settings.kernel.gamma) = (Some(16), Some(Setting::Value(0.05)));
            settings
        };
        // The linear SVM alone fits in less than the folds' copies take beside the set.
        let svm = FitSettings { budget: Some(held - 1), ..settings(Learner::Svm) };
        assert!(fit::fit(&FitSettings { probabilities: false, ..svm.clone() }, &data).is_ok());
        let refused = fit::fit(&svm, &data).err();
        let told = matches!(refused, Some(FitError::Train(TrainError::OverBudget { needed, budget }))
            if needed == held && budget == held - 1);
        assert!(told, "{refused:?}");
        for learner in [Learner::Svm, Learner::Rsvm] {
            let mut settings = settings(learner);
            // Room for the fit alone (rsvm's own figure; svm checks as it goes) and for the
            // folds' copies, but not for a fold's fit beside them.
            let alone = fit::needed_bytes(&settings, &data, data.bytes()).unwrap().unwrap_or(0);
            let budget = alone.max(held) + 64;
            settings.budget = Some(budget);
            let refused = fit::fit(&settings, &data).err();
            let told = matches!(refused, Some(FitError::Train(TrainError::OverBudget { needed, budget: b }))
                if needed > budget && b == budget);
            assert!(told, "{learner:?}: {refused:?}");
            let free = fit::fit(&FitSettings { budget: None, ..settings.clone() }, &data).unwrap();
            settings.budget = Some(budget + (1 << 20));
            assert_eq!(fit::fit(&settings, &data).unwrap().bytes, free.bytes, "{learner:?}");
        }
    }

    #[test]
    fn regressors_and_detectors_are_refused_before_fitting() {
        let data = noisy(50, 3);
        for learner in [Learner::Krr, Learner::Novelty, Learner::Slkl] {
            let settings = FitSettings { probabilities: true, ..FitSettings::new(learner) };
            let e = fit::fit(&settings, &data).unwrap_err().to_string();
            assert!(e.contains("--probabilities is for the classifiers"), "{e}");
        }
    }

    /// Three classes, by fit: one sigmoid per class in the model, its probabilities a
    /// distribution whose largest is mostly the prediction, and each class's rows given
    /// on average about the probability of their class that the classes' overlap leaves
    /// (x uniform over a class's 1.6 wide interval, 0.6 of it shared with a neighbour
    /// where each class has half the chance: 0.8125 for the outer classes, 0.625 for the
    /// middle one, which shares both sides).
    #[test]
    fn three_classes_of_rsvm_through_fit() {
        let mut data = Dataset::<f64>::new();
        let mut rng = Rng::seed_from_u64(5);
        for i in 0..300 {
            let class = (i % 3) as f64;
            let (x, y) = (class + rng.uniform_in(-0.8, 0.8), rng.uniform_in(-1.0, 1.0));
            data.push(&Record { label: class, indices: vec![0, 1], values: vec![x, y], ..Record::default() }).unwrap();
        }
        let settings = FitSettings { probabilities: true, ..FitSettings::new(Learner::Rsvm) };
        let fitted = fit::fit(&settings, &data).unwrap();
        assert_eq!(fitted.summary.get("probability_folds"), Some(&Field::Count(FOLDS)));
        let mut model = model::load(&fitted.bytes).unwrap();
        assert!(model.info().probabilities);
        let (mut own, mut agree) = ([0.0; 3], 0);
        let mut record = Record::default();
        for i in 0..data.len() {
            data.record(i, &mut record);
            let p = model.probabilities(&record).unwrap().unwrap();
            assert!(p.len() == 3 && (p.iter().sum::<f64>() - 1.0).abs() < 1e-12, "{p:?}");
            let argmax = (0..3).max_by(|&a, &b| p[a].total_cmp(&p[b])).unwrap() as f64;
            agree += usize::from(argmax == model.predict(&record).unwrap());
            for k in 0..3 {
                if record.label == k as f64 {
                    own[k] += p[k] / 100.0;
                }
            }
        }
        assert!(agree >= 290, "{agree} of 300 argmax = prediction");
        let bayes = [0.8125, 0.625, 0.8125];
        for k in 0..3 {
            assert!((own[k] - bayes[k]).abs() < 0.06, "class {k}: {} against {}", own[k], bayes[k]);
        }
    }
}
