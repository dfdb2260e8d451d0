//! Predictions against labels: accuracy for a classifier, mean squared and absolute error
//! and the coefficient of determination R² for a regressor — what `kestrel eval` prints
//! and what `kestrel tune`'s cross-validation averages over its folds — and each class's
//! recall and their mean, the balanced accuracy, which a rare class given up lowers where
//! accuracy barely moves ([`ClassRecall`]; `kestrel stream` counts them too, prequentially),
//! and the log loss of a classifier's class probabilities ([`LogLoss`]).
//! Each row may weigh (`kestrel eval --weight-column`, scikit-learn's `sample_weight`): the
//! scores are then the rows' weights shared out — a row of weight 2 counts as two copies of
//! it — and with every weight 1 they are the unweighted scores, bit for bit.

use std::cmp::Ordering;

use kestrel_core::{Error, Real};
use serde::{Deserialize, Serialize};

use crate::dataset::Dataset;
use crate::limits::MAX_CLASSES;
use crate::model::Predictor;
use crate::source::Record;

/// The probability below which [`LogLoss`] counts a row's as this: a class given no
/// chance costs `−ln 10⁻¹⁵ ≈ 34.5`, not infinity (River's `LogLoss` clips alike).
pub const LOG_LOSS_FLOOR: f64 = 1e-15;

/// The mean log loss `−Σ wᵢ·ln pᵢ / Σ wᵢ` of the probabilities `pᵢ` a classifier gave each
/// row's own class (scikit-learn's `log_loss`, River's `LogLoss`), each clipped to
/// [`LOG_LOSS_FLOOR`]: a label among none of the classes has probability 0.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct LogLoss {
    /// `−Σ wᵢ·ln pᵢ`.
    sum: f64,
    /// `Σ wᵢ`.
    weight: f64,
}

impl LogLoss {
    /// Counts a row of `label` of weight `weight` given `probabilities` of the classifier's
    /// `labels` (in their order).
    pub fn add(&mut self, probabilities: &[f64], labels: &[f64], label: f64, weight: f64) {
        let own = labels.iter().position(|&l| l == label).and_then(|k| probabilities.get(k)).copied();
        let p = own.unwrap_or(0.0).clamp(LOG_LOSS_FLOOR, 1.0);
        self.sum -= weight * p.ln();
        self.weight += weight;
    }

    /// The mean loss, `None` before a row.
    pub fn mean(&self) -> Option<f64> {
        (self.weight > 0.0).then(|| self.sum / self.weight)
    }
}

/// Running totals of predictions against labels.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Tally {
    /// Predictions counted.
    pub n: usize,
    /// Predictions equal to their label.
    pub correct: usize,
    /// The rows' weights, summed (`n` when each weighs 1).
    pub weight: f64,
    /// The weights of the rows predicted right.
    pub correct_weight: f64,
    /// Sum of squared errors, each times its row's weight.
    pub squared: f64,
    /// Sum of absolute errors, each times its row's weight.
    pub absolute: f64,
    /// The labels' weighted running mean and sum of squared deviations (Welford's update
    /// with weights, West 1979), for R².
    label_mean: f64,
    label_deviations: f64,
}

impl Tally {
    /// Counts one prediction.
    pub fn add(&mut self, prediction: f64, label: f64) {
        self.add_weighted(prediction, label, 1.0);
    }

    /// Counts one prediction of a row of weight `weight` (finite, positive).
    pub fn add_weighted(&mut self, prediction: f64, label: f64, weight: f64) {
        let error = prediction - label;
        let right = prediction == label;
        self.n += 1;
        self.correct += usize::from(right);
        self.weight += weight;
        self.correct_weight += if right { weight } else { 0.0 };
        self.squared += weight * error * error;
        self.absolute += weight * error.abs();
        let step = label - self.label_mean;
        self.label_mean += step * weight / self.weight;
        self.label_deviations += weight * step * (label - self.label_mean);
    }

    /// The coefficient of determination `R² = 1 − Σ(y − ŷ)²/Σ(y − ȳ)²` (scikit-learn's
    /// `r2_score`, a regressor's `score`): 1 for a perfect fit, 0 for predicting the mean;
    /// `None` when the labels do not vary.
    pub fn r2(&self) -> Option<f64> {
        (self.label_deviations > 0.0).then(|| 1.0 - self.squared / self.label_deviations)
    }

    /// Fraction correct, of the rows' weights (0 without predictions).
    pub fn accuracy(&self) -> f64 {
        self.per_row(self.correct_weight)
    }

    /// Mean squared error (0 without predictions).
    pub fn mse(&self) -> f64 {
        self.per_row(self.squared)
    }

    /// Mean absolute error (0 without predictions).
    pub fn mae(&self) -> f64 {
        self.per_row(self.absolute)
    }

    fn per_row(&self, sum: f64) -> f64 {
        if self.n == 0 { 0.0 } else { sum / self.weight }
    }
}

/// Each of a classifier's classes: its rows and those predicted as it, counted for the
/// classes given (a model's) and the other labels met — a test file's label the model
/// lacks is a class it never predicts, of recall 0, as scikit-learn's
/// `balanced_accuracy_score` counts it — up to [`MAX_CLASSES`] in all; or, growing, for
/// the first labels met up to a cap (a stream's classes, as its learner meets them).
/// Memory: a label and two counts a class, and two weights a class once a row is counted
/// with its weight ([`ClassRecall::add_weighted`]).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ClassRecall {
    /// The classes' labels, sorted.
    classes: Vec<f64>,
    /// `[rows, correct]` of each class, in `classes`' order.
    counts: Vec<[u64; 2]>,
    /// The most classes: a label met past it is left out.
    cap: usize,
    /// `[weight of the rows, of those right]` of each class once rows are weighed, `None`
    /// before (what `kestrel eval --weight-column` counts; a stream, whose checkpoint saves
    /// the counts, weighs none).
    #[serde(skip)]
    weights: Option<Vec<[f64; 2]>>,
}

impl ClassRecall {
    /// No rows yet, for the classes labelled `classes` and the other labels to come.
    pub fn new(classes: &[f64]) -> Self {
        let mut classes = classes.to_vec();
        classes.sort_by(f64::total_cmp);
        classes.dedup();
        let counts = vec![[0; 2]; classes.len()];
        let cap = classes.len().max(MAX_CLASSES);
        ClassRecall { classes, counts, cap, weights: None }
    }

    /// No classes yet: each label met becomes one, up to `cap` of them.
    pub fn growing(cap: usize) -> Self {
        ClassRecall { cap, ..ClassRecall::default() }
    }

    /// Counts one prediction of a row labelled `label` (left out unless `label` is one of
    /// the classes, or becomes one under the cap; a NaN prediction, none, is wrong).
    pub fn add(&mut self, prediction: f64, label: f64) {
        self.count(prediction, label, None);
    }

    /// [`add`](Self::add) for a row of weight `weight` (finite, positive): from then on
    /// the recalls are shares of the rows' weights. Weigh every row, or none.
    pub fn add_weighted(&mut self, prediction: f64, label: f64, weight: f64) {
        if self.weights.is_none() {
            self.weights = Some(vec![[0.0; 2]; self.classes.len()]);
        }
        self.count(prediction, label, Some(weight));
    }

    /// Counts the row in its class, and its `weight` when it has one.
    fn count(&mut self, prediction: f64, label: f64, weight: Option<f64>) {
        let Some(at) = self.class_of(label) else { return };
        let right = prediction == label;
        if let Some([rows, correct]) = self.counts.get_mut(at) {
            *rows = rows.saturating_add(1);
            *correct = correct.saturating_add(u64::from(right));
        }
        let weights = self.weights.as_mut().and_then(|weights| weights.get_mut(at));
        if let (Some(weight), Some([rows, correct])) = (weight, weights) {
            *rows += weight;
            *correct += if right { weight } else { 0.0 };
        }
    }

    /// The place of `label` among the classes, made one while under the cap (with its
    /// counts, and its weights once rows are weighed); `None` past the cap or for NaN.
    fn class_of(&mut self, label: f64) -> Option<usize> {
        match self.classes.binary_search_by(|class| class.partial_cmp(&label).unwrap_or(Ordering::Less)) {
            Ok(at) => Some(at),
            Err(at) if self.classes.len() < self.cap && label.is_finite() => {
                self.classes.insert(at, label);
                self.counts.insert(at, [0; 2]);
                if let Some(weights) = &mut self.weights {
                    weights.insert(at, [0.0; 2]);
                }
                Some(at)
            }
            Err(_) => None,
        }
    }

    /// `(label, recall)` of each class with rows: the share of its rows predicted as it
    /// (of their weights, once rows are weighed).
    pub fn recalls(&self) -> impl Iterator<Item = (f64, f64)> + '_ {
        self.classes.iter().zip(&self.counts).enumerate().filter(|(_, (_, [rows, _]))| *rows > 0).map(
            move |(k, (&label, &[rows, correct]))| {
                let weighted = self.weights.as_ref().and_then(|weights| weights.get(k));
                #[allow(clippy::cast_precision_loss, reason = "counts of rows")]
                let recall = weighted.map_or(correct as f64 / rows as f64, |&[rows, correct]| correct / rows);
                (label, recall)
            },
        )
    }

    /// The mean recall of the classes with rows (scikit-learn's `balanced_accuracy_score`
    /// over them); `None` without rows.
    pub fn balanced_accuracy(&self) -> Option<f64> {
        let (sum, classes) = self.recalls().fold((0.0, 0u32), |(sum, k), (_, recall)| (sum + recall, k + 1));
        (classes > 0).then(|| sum / f64::from(classes))
    }
}

/// `model`'s predictions on every row of `data`.
///
/// # Errors
/// The model's, for a row it cannot take (a feature past its dimension, a non-finite value).
pub fn on_dataset<T: Real>(model: &mut dyn Predictor, data: &Dataset<T>) -> Result<Tally, Error> {
    let (mut tally, mut record) = (Tally::default(), Record::default());
    for i in 0..data.len() {
        if data.record(i, &mut record) {
            tally.add(model.predict(&record)?, record.label);
        }
    }
    Ok(tally)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// scikit-learn's `log_loss([1, 0, 2], [[.2, .7, .1], [.6, .3, .1], [.1, .1, .8]])`
    /// is −(ln .7 + ln .6 + ln .8)/3; a weight of 2 counts a row twice, and a label of no
    /// class costs −ln 10⁻¹⁵.
    #[test]
    fn log_loss_of_the_own_class() {
        let labels = [0.0, 1.0, 2.0];
        let mut loss = LogLoss::default();
        assert_eq!(loss.mean(), None);
        loss.add(&[0.2, 0.7, 0.1], &labels, 1.0, 1.0);
        loss.add(&[0.6, 0.3, 0.1], &labels, 0.0, 1.0);
        loss.add(&[0.1, 0.1, 0.8], &labels, 2.0, 1.0);
        let expected = -(0.7f64.ln() + 0.6f64.ln() + 0.8f64.ln()) / 3.0;
        assert!((loss.mean().unwrap() - expected).abs() < 1e-15);
        let mut weighed = LogLoss::default();
        weighed.add(&[0.2, 0.7, 0.1], &labels, 1.0, 2.0);
        weighed.add(&[0.6, 0.3, 0.1], &labels, 0.0, 1.0);
        assert!((weighed.mean().unwrap() + (2.0 * 0.7f64.ln() + 0.6f64.ln()) / 3.0).abs() < 1e-15);
        let mut foreign = LogLoss::default();
        foreign.add(&[0.5, 0.5, 0.0], &labels, 7.0, 1.0);
        foreign.add(&[0.5, 0.5, 0.0], &labels, 2.0, 1.0);
        assert_eq!(foreign.mean(), Some(-LOG_LOSS_FLOOR.ln()));
    }

    #[test]
    fn accuracy_and_errors() {
        let mut tally = Tally::default();
        assert_eq!((tally.accuracy(), tally.mse(), tally.mae()), (0.0, 0.0, 0.0));
        for (prediction, label) in [(1.0, 1.0), (2.0, 0.0), (-1.0, -1.0), (0.5, 1.0)] {
            tally.add(prediction, label);
        }
        assert_eq!((tally.n, tally.correct), (4, 2));
        assert_eq!(tally.accuracy(), 0.5);
        assert_eq!(tally.mse(), (4.0 + 0.25) / 4.0);
        assert_eq!(tally.mae(), 2.5 / 4.0);
        // Labels 1, 0, −1, 1: mean 0.25, Σ(y − ȳ)² = 2.75.
        assert!((tally.r2().unwrap() - (1.0 - 4.25 / 2.75)).abs() < 1e-15);
        let mut flat = Tally::default();
        flat.add(1.0, 2.0);
        flat.add(3.0, 2.0);
        assert_eq!(flat.r2(), None);
    }

    /// Balanced accuracy as scikit-learn's `balanced_accuracy_score` computes it, over the
    /// labels of the rows: a class given without rows is left out, and a label of none of
    /// the classes given (which the model never predicts) is a class of recall 0.
    #[test]
    fn recall_per_class_and_balanced_accuracy() {
        let mut recall = ClassRecall::new(&[3.0, -1.0, 3.0, 7.0]);
        assert_eq!(recall.balanced_accuracy(), None);
        // Class −1: 3 of 4 right; class 3: 1 of 2; class 7: no rows; label 9: not a class.
        for (prediction, label) in [(-1.0, -1.0), (-1.0, -1.0), (-1.0, -1.0), (3.0, -1.0), (3.0, 3.0), (-1.0, 3.0)] {
            recall.add(prediction, label);
        }
        assert_eq!(recall.balanced_accuracy(), Some((0.75 + 0.5) / 2.0));
        recall.add(-1.0, 9.0);
        recall.add(3.0, 9.0);
        assert_eq!(recall.recalls().collect::<Vec<_>>(), [(-1.0, 0.75), (3.0, 0.5), (9.0, 0.0)]);
        // scikit-learn: balanced_accuracy_score([-1]*4 + [3]*2 + [9]*2, [-1,-1,-1,3,3,-1,-1,3])
        // = (0.75 + 0.5 + 0) / 3.
        assert_eq!(recall.balanced_accuracy(), Some((0.75 + 0.5 + 0.0) / 3.0));
    }

    /// Weighted, a row of weight 2 counts as two copies of it in every score.
    #[test]
    fn weights_count_a_row_as_copies_of_it() {
        let rows = [(1.0, 1.0, 2.0), (2.0, 0.0, 1.0), (-1.0, -1.0, 3.0), (0.5, 1.0, 1.0), (-1.0, 1.0, 0.5)];
        let (mut weighted, mut copies) = (Tally::default(), Tally::default());
        let (mut recall, mut copied) = (ClassRecall::growing(4), ClassRecall::growing(4));
        for (prediction, label, weight) in rows {
            weighted.add_weighted(prediction, label, weight);
            recall.add_weighted(prediction, label, weight);
            // Weights 2, 1, 3, 1 are whole copies; 0.5 is half of a copy of the last row,
            // as two copies of it at weight 0.25 each would be.
            for _ in 0..(weight as usize).max(1) {
                let share = if weight < 1.0 { weight } else { 1.0 };
                copies.add_weighted(prediction, label, share);
                copied.add_weighted(prediction, label, share);
            }
        }
        for (a, b) in [
            (weighted.accuracy(), copies.accuracy()),
            (weighted.mse(), copies.mse()),
            (weighted.mae(), copies.mae()),
            (weighted.r2().unwrap(), copies.r2().unwrap()),
        ] {
            assert!((a - b).abs() < 1e-12, "{a} against {b}");
        }
        assert_eq!(weighted.accuracy(), 5.0 / 7.5);
        assert_eq!(recall.recalls().collect::<Vec<_>>(), copied.recalls().collect::<Vec<_>>());
        assert_eq!(recall.recalls().collect::<Vec<_>>(), [(-1.0, 1.0), (0.0, 0.0), (1.0, 2.0 / 3.5)]);
    }

    /// Growing, the first labels met become classes, in sorted order, up to the cap; a
    /// prediction of none (NaN) is wrong.
    #[test]
    fn growing_recall_takes_the_labels_met_up_to_its_cap() {
        let mut recall = ClassRecall::growing(2);
        for (prediction, label) in [(f64::NAN, 5.0), (5.0, 5.0), (1.0, 2.0), (5.0, 2.0), (9.0, 9.0), (2.0, 2.0)] {
            recall.add(prediction, label);
        }
        assert_eq!(recall.recalls().collect::<Vec<_>>(), [(2.0, 1.0 / 3.0), (5.0, 0.5)]);
        assert_eq!(ClassRecall::growing(MAX_CLASSES), ClassRecall::new(&[]));
    }
}
