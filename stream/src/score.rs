//! Predictions against labels: accuracy for a classifier, mean squared and absolute error
//! for a regressor — what `kestrel eval` prints and what `kestrel tune`'s cross-validation
//! averages over its folds.

use kestrel_core::{Error, Real};

use crate::dataset::Dataset;
use crate::model::Predictor;
use crate::source::Record;

/// Running totals of predictions against labels.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Tally {
    /// Predictions counted.
    pub n: usize,
    /// Predictions equal to their label.
    pub correct: usize,
    /// Sum of squared errors.
    pub squared: f64,
    /// Sum of absolute errors.
    pub absolute: f64,
}

impl Tally {
    /// Counts one prediction.
    pub fn add(&mut self, prediction: f64, label: f64) {
        let error = prediction - label;
        self.n += 1;
        self.correct += usize::from(prediction == label);
        self.squared += error * error;
        self.absolute += error.abs();
    }

    /// Fraction correct (0 without predictions).
    pub fn accuracy(&self) -> f64 {
        self.per_row(self.correct as f64)
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
        if self.n == 0 { 0.0 } else { sum / self.n as f64 }
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
    }
}
