//! The figures of `kestrel eval`, gathered row by row in bounded memory: a classifier's
//! confusion matrix (at most [`MAX_CLASSES_SHOWN`] classes) and, for two classes, the ROC
//! curve of its decision values; a regressor's predicted against true values and their
//! residuals (a uniform sample of [`SAMPLE`] rows, reservoir sampling with a fixed seed);
//! a detector's ROC curve; and for a binary classifier with class probabilities their
//! reliability diagram (the rows binned by the probability of the second class, in
//! [`RELIABILITY_BINS`] equal bins: each bin's mean probability against the share of its
//! rows of that class, as scikit-learn's `calibration_curve`). The ROC curves come from
//! [`Detections`]' bins: their area is the AUC the command prints.

use anyhow::Result;
use kestrel_core::Rng;
use kestrel_stream::class_names::{self, ClassNames};
use kestrel_stream::detection::{Detections, positive_score};

use super::Report;
use super::chart::{Axes, Dots, Plot, heat_map, pick};

/// The most classes a confusion matrix shows; labels past them are counted as "other".
pub const MAX_CLASSES_SHOWN: usize = 32;
/// Rows a regressor's scatter shows.
pub const SAMPLE: usize = 2000;
/// Bins of the reliability diagram.
pub const RELIABILITY_BINS: usize = 10;

/// The rows of one bin of the reliability diagram.
#[derive(Clone, Copy, Default)]
struct Bin {
    rows: u64,
    /// Their probabilities of the second class, summed.
    probability: f64,
    /// Those of them of the second class.
    positives: u64,
}

/// What an evaluation's figures need, gathered row by row.
pub struct EvalFigures {
    /// The labels in the confusion matrix, the model's first.
    labels: Vec<f64>,
    /// `labels.len() + 1` squared counts, the last row and column "other".
    confusion: Vec<u64>,
    /// A binary classifier's decision values as scores, the second class the positive.
    roc: Detections,
    positive: Option<f64>,
    /// A binary classifier's rows by the probability it gave the second class.
    reliability: [Bin; RELIABILITY_BINS],
    /// A regressor's `(true, predicted)` sample and the rows offered to it.
    sample: Vec<(f64, f64)>,
    offered: u64,
    rng: Rng,
}

impl EvalFigures {
    /// Ready for the rows of a model with `labels` (a classifier's, in output order).
    pub fn new(labels: Vec<f64>) -> Self {
        let mut labels = labels;
        labels.truncate(MAX_CLASSES_SHOWN);
        let positive = (labels.len() == 2).then(|| labels.get(1).copied()).flatten();
        let side = MAX_CLASSES_SHOWN + 1;
        EvalFigures {
            labels,
            confusion: vec![0; side * side],
            roc: Detections::default(),
            positive,
            reliability: [Bin::default(); RELIABILITY_BINS],
            sample: Vec::new(),
            offered: 0,
            rng: Rng::seed_from_u64(1),
        }
    }

    /// A classifier's row: its `label`, the `prediction` and the decision values.
    pub fn classified(&mut self, label: f64, prediction: f64, decision: Option<&[f64]>) {
        let (truth, predicted) = (self.index(label), self.index(prediction));
        if let Some(cell) = self.confusion.get_mut(truth * (MAX_CLASSES_SHOWN + 1) + predicted) {
            *cell = cell.saturating_add(1);
        }
        if let (Some(positive), Some(&[value])) = (self.positive, decision) {
            let anomaly = f64::from(u8::from(label == positive));
            self.roc.add(Some(positive_score(value)), prediction == positive, anomaly);
        }
    }

    /// A binary classifier's row of `label` given its class `probabilities` (the model's
    /// order: the second class's second), for the reliability diagram.
    pub fn calibrated(&mut self, label: f64, probabilities: &[f64]) {
        let (Some(positive), [_, p]) = (self.positive, probabilities) else { return };
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss, reason = "0 ≤ p·bins < bins")]
        let at = ((p.clamp(0.0, 1.0) * RELIABILITY_BINS as f64) as usize).min(RELIABILITY_BINS - 1);
        if let Some(bin) = self.reliability.get_mut(at) {
            bin.rows = bin.rows.saturating_add(1);
            bin.probability += p;
            bin.positives = bin.positives.saturating_add(u64::from(label == positive));
        }
    }

    /// A regressor's row: its `target` and the `prediction`.
    pub fn regressed(&mut self, target: f64, prediction: f64) {
        self.offered = self.offered.saturating_add(1);
        if self.sample.len() < SAMPLE {
            self.sample.push((target, prediction));
            return;
        }
        // Row t replaces a kept one with probability SAMPLE/t.
        let slot = self.rng.uniform_in(0.0, self.offered as f64).floor();
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss, reason = "0 ≤ slot < offered")]
        if let Some(kept) = self.sample.get_mut(slot as usize) {
            *kept = (target, prediction);
        }
    }

    /// The confusion matrix's index of `label`: its place, a new one while there is room,
    /// else "other".
    fn index(&mut self, label: f64) -> usize {
        if let Some(i) = self.labels.iter().position(|&l| l == label) {
            return i;
        }
        if self.labels.len() < MAX_CLASSES_SHOWN && !label.is_nan() {
            self.labels.push(label);
            return self.labels.len() - 1;
        }
        MAX_CLASSES_SHOWN
    }

    /// Adds the figures of what was gathered; `detections` are a detector's (empty for the
    /// other models), `names` the classes' names (the model's, and the rows' other labels').
    ///
    /// # Errors
    /// Only if a chart fails to draw.
    pub fn add_to(&self, report: &mut Report, detections: &Detections, names: Option<&ClassNames>) -> Result<()> {
        if detections.n > 0 {
            return roc_figure(report, detections, "the novelty score");
        }
        if !self.sample.is_empty() {
            return self.regression_figures(report);
        }
        self.confusion_figure(report, names)?;
        if self.positive.is_some() {
            roc_figure(report, &self.roc, "the decision value")?;
        }
        self.reliability_figure(report, names)
    }

    /// The reliability diagram, when rows were given probabilities.
    fn reliability_figure(&self, report: &mut Report, names: Option<&ClassNames>) -> Result<()> {
        #[allow(clippy::cast_precision_loss, reason = "counts of rows")]
        let points: Vec<(f64, f64)> = self
            .reliability
            .iter()
            .filter(|bin| bin.rows > 0)
            .map(|bin| (bin.probability / bin.rows as f64, bin.positives as f64 / bin.rows as f64))
            .collect();
        if points.is_empty() {
            return Ok(());
        }
        let class = self.name(1, names);
        let mut plot = Plot::new(&format!("mean probability of class {class}"), &format!("share of class {class}"))
            .line("the model", points.clone(), 0, false)
            .line("calibrated", vec![(0.0, 0.0), (1.0, 1.0)], 5, true);
        plot.dots.push(Dots { name: "bins".into(), points, colour: pick(0) });
        plot.y_range = Some(0.0..1.0);
        let caption = format!(
            "Rows binned by the probability the model gave class {class} (tenths): each point is a bin's mean \
             probability against the share of its rows of that class. On the diagonal the probabilities mean what \
             they say."
        );
        report.figure("Reliability diagram", &caption, plot.svg()?);
        Ok(())
    }

    fn confusion_figure(&self, report: &mut Report, names: Option<&ClassNames>) -> Result<()> {
        let side = MAX_CLASSES_SHOWN + 1;
        let other_used = (0..side).any(|i| {
            let row = self.confusion.get(MAX_CLASSES_SHOWN * side + i).copied().unwrap_or(0);
            let column = self.confusion.get(i * side + MAX_CLASSES_SHOWN).copied().unwrap_or(0);
            row + column > 0
        });
        let mut shown: Vec<usize> = (0..self.labels.len()).collect();
        if other_used {
            shown.push(MAX_CLASSES_SHOWN);
        }
        let names: Vec<String> = shown.iter().map(|&i| self.name(i, names)).collect();
        let counts: Vec<u64> = shown
            .iter()
            .flat_map(|&r| shown.iter().map(move |&c| (r, c)))
            .map(|(r, c)| self.confusion.get(r * side + c).copied().unwrap_or(0))
            .collect();
        let axes = Axes { x: "predicted class".into(), y: "true class".into() };
        let caption = "Rows counted by their true class (down) and the class predicted (across); the shade is the \
                       share of the true class's rows.";
        report.figure("Confusion matrix", caption, heat_map(&axes, &names, &names, &counts)?);
        Ok(())
    }

    /// The name of class index `i`: its class name, its label, or "other".
    fn name(&self, i: usize, names: Option<&ClassNames>) -> String {
        let Some(&label) = self.labels.get(i) else { return "other".into() };
        class_names::shown(names, label)
    }

    fn regression_figures(&self, report: &mut Report) -> Result<()> {
        let (lo, hi) = self
            .sample
            .iter()
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), &(t, p)| (lo.min(t).min(p), hi.max(t).max(p)));
        let mut scatter = Plot::new("true value (target units)", "predicted value (target units)").line(
            "predicted = true",
            vec![(lo, lo), (hi, hi)],
            5,
            true,
        );
        scatter.dots.push(Dots { name: "rows".into(), points: self.sample.clone(), colour: pick(0) });
        let shown = self.sample.len();
        let caption =
            format!("{shown} of {} rows (a uniform sample), each at its true and predicted value.", self.offered);
        report.figure("Predicted against true", &caption, scatter.svg()?);
        let residuals: Vec<(f64, f64)> = self.sample.iter().map(|&(t, p)| (t, p - t)).collect();
        let mut plot = Plot::new("true value (target units)", "residual: predicted − true (target units)").line(
            "0",
            vec![(lo, 0.0), (hi, 0.0)],
            5,
            true,
        );
        plot.dots.push(Dots { name: "rows".into(), points: residuals, colour: pick(1) });
        report.figure("Residuals", "The error of each row of the sample against its true value.", plot.svg()?);
        Ok(())
    }
}

/// The ROC curve of `detections` with its AUC; `score` names what ranks the rows.
fn roc_figure(report: &mut Report, detections: &Detections, score: &str) -> Result<()> {
    let curve = detections.roc();
    if curve.is_empty() {
        return Ok(());
    }
    let auc = detections.auc().map_or_else(|| "-".to_string(), |auc| format!("{auc:.4}"));
    let mut plot =
        Plot::new("false positive rate (fraction of negatives)", "true positive rate (fraction of positives)")
            .line(&format!("ROC, AUC {auc}"), curve, 0, false)
            .line("chance", vec![(0.0, 0.0), (1.0, 1.0)], 5, true);
    plot.y_range = Some(0.0..1.0);
    let caption = format!(
        "Rows ranked by {score}: each point is a threshold, the positives (anomalies; the second class) above it \
         against the negatives above it. AUC {auc}."
    );
    report.figure("ROC curve", &caption, plot.svg()?);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn confusion_counts_and_other() {
        let mut figures = EvalFigures::new(vec![1.0, 2.0]);
        figures.classified(1.0, 1.0, Some(&[-1.0]));
        figures.classified(2.0, 1.0, Some(&[-0.5]));
        figures.classified(2.0, 2.0, Some(&[2.0]));
        assert_eq!(figures.index(7.0), 2);
        let name = |i| figures.name(i, None);
        assert_eq!((name(0), name(2), name(40)), ("1".into(), "7".into(), "other".into()));
        let names = ClassNames::from_names(["fog".to_string(), "rain".to_string(), "sun".to_string()]);
        assert_eq!(figures.name(1, Some(&names)), "sun");
        let side = MAX_CLASSES_SHOWN + 1;
        assert_eq!((figures.confusion[0], figures.confusion[side], figures.confusion[side + 1]), (1, 1, 1));
        assert_eq!(figures.roc.auc(), Some(1.0));
    }

    #[test]
    fn reliability_bins_count_the_second_class() {
        let mut figures = EvalFigures::new(vec![-1.0, 1.0]);
        figures.calibrated(1.0, &[0.05, 0.95]);
        figures.calibrated(-1.0, &[0.08, 0.92]);
        figures.calibrated(-1.0, &[1.0, 0.0]);
        figures.calibrated(1.0, &[0.0, 1.0]);
        let last = figures.reliability[RELIABILITY_BINS - 1];
        assert_eq!((last.rows, last.positives), (3, 2));
        assert!((last.probability - 2.87).abs() < 1e-12);
        assert_eq!((figures.reliability[0].rows, figures.reliability[0].positives), (1, 0));
        // Beyond two classes: no diagram.
        let mut three = EvalFigures::new(vec![0.0, 1.0, 2.0]);
        three.calibrated(1.0, &[0.2, 0.5, 0.3]);
        assert!(three.reliability.iter().all(|bin| bin.rows == 0));
    }

    #[test]
    fn the_regression_sample_is_bounded() {
        let mut figures = EvalFigures::new(Vec::new());
        for i in 0..10 * SAMPLE {
            figures.regressed(i as f64, 0.0);
        }
        assert_eq!((figures.sample.len(), figures.offered), (SAMPLE, 10 * SAMPLE as u64));
        let late = figures.sample.iter().filter(|(t, _)| *t >= (5 * SAMPLE) as f64).count();
        assert!(late > SAMPLE / 3, "{late}");
    }
}
