//! Online learners for streams, and prequential (test-then-train) evaluation.
//!
//! Each sample is first predicted by the model learned from the samples before it, scored,
//! and only then learned from. The learners keep a window of the last `N` samples in
//! memory fixed at construction:
//!
//! - [`WindowSvm`]: the windowed DCD SVM (`kestrel_core::dcd::OnlineSvm`), labels ±1 or
//!   0/1, a few coordinate steps per arrival.
//! - [`WindowSlkl`]: windowed SLKL (`kestrel_core::slkl::SlklWindow`) for a regression
//!   target; its `M` centres are spread evenly over the first window of the stream (every
//!   `N/M`-th sample), after which it learns from every sample (the first window included)
//!   with a few coordinate steps per arrival.
//! - [`WindowRsvm`]: a reduced-kernel SVM; `kestrel_core::reduced_set::StreamingSelector`
//!   picks its centres during a warm-up, then a windowed DCD SVM learns on the Nyström
//!   features of every sample.
//!
//! Every learner can save its complete state and restore it into a learner of the same
//! configuration ([`OnlineLearner::save_state`], [`OnlineLearner::restore_state`]): the
//! restored learner continues bit for bit, which is what `kestrel stream --checkpoint`
//! relies on.

mod rsvm;
mod slkl;
mod svm;

use kestrel_core::Error;
use serde::{Deserialize, Serialize};

use crate::source::Record;

pub use rsvm::{RsvmSettings, WindowRsvm};
pub use slkl::WindowSlkl;
pub use svm::WindowSvm;

/// A learner that predicts, then learns, one sample at a time.
pub trait OnlineLearner {
    /// The prediction for `record` (`None` before the model can predict).
    ///
    /// # Errors
    /// A record the model cannot read (dimension, NaN).
    fn predict(&mut self, record: &Record) -> Result<Option<f64>, Error>;
    /// Learns from `record`.
    ///
    /// # Errors
    /// A record the learner rejects; the learner is unchanged then.
    fn learn(&mut self, record: &Record) -> Result<(), Error>;
    /// `true` for a classifier (scored by accuracy), `false` for a regressor (MSE).
    fn is_classifier(&self) -> bool;
    /// The model file bytes of the current model.
    ///
    /// # Errors
    /// None for a valid model; `InvalidParam` before anything was learned.
    fn encode(&mut self) -> Result<Vec<u8>, Error>;
    /// The learner's complete state (buffers, counters, random generator), postcard-encoded.
    ///
    /// # Errors
    /// [`StateError::Encode`] only if serialization fails, which it does not for these types.
    fn save_state(&self) -> Result<Vec<u8>, StateError>;
    /// Replaces the state with one [`save_state`](Self::save_state) wrote for a learner of
    /// the same configuration; learning then continues exactly where that one stopped.
    ///
    /// # Errors
    /// [`StateError`] when the bytes do not decode, describe another configuration, or are
    /// inconsistent; the learner is unchanged then.
    fn restore_state(&mut self, bytes: &[u8]) -> Result<(), StateError>;
}

/// Why a learner's state could not be saved or restored.
#[derive(Debug, thiserror::Error)]
pub enum StateError {
    /// The bytes are not a state of this learner (or serialization failed).
    #[error("learner state does not decode: {0}")]
    Encode(#[from] postcard::Error),
    /// The state is for another configuration (window, dimension, centres...).
    #[error("learner state is for another configuration: {0}")]
    Mismatch(String),
    /// The core rejected the state as inconsistent.
    #[error("learner state is inconsistent: {0}")]
    Invalid(#[from] Error),
}

/// `Err(Mismatch)` naming `what` unless the saved and configured values agree.
fn expect_same<V: PartialEq + std::fmt::Debug>(what: &str, saved: V, configured: V) -> Result<(), StateError> {
    if saved == configured {
        Ok(())
    } else {
        Err(StateError::Mismatch(format!("{what} {saved:?} saved, {configured:?} configured")))
    }
}

/// A label ±1 or 0/1 as the SVMs' ±1, and whether it was written 0.
fn binary_label(label: f64) -> Result<(i32, bool), Error> {
    match label {
        1.0 => Ok((1, false)),
        -1.0 => Ok((-1, false)),
        0.0 => Ok((-1, true)),
        _ => Err(Error::InvalidLabel { row: 0 }),
    }
}

/// The user's label of class `class` (±1): −1 or 0 for the negative class.
fn user_label(class: i32, zero_one: bool) -> f64 {
    match (class > 0, zero_one) {
        (true, _) => 1.0,
        (false, true) => 0.0,
        (false, false) => -1.0,
    }
}

/// Prequential metrics: cumulative and over the last report period.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Prequential {
    /// Samples scored.
    pub n: usize,
    /// Correct predictions (classifier).
    pub correct: usize,
    /// Sum of squared errors (regressor).
    pub squared: f64,
    /// Samples scored in the current period.
    pub period_n: usize,
    /// Correct in the current period.
    pub period_correct: usize,
    /// Squared error in the current period.
    pub period_squared: f64,
}

impl Prequential {
    /// Scores one prediction.
    pub fn record(&mut self, prediction: f64, truth: f64) {
        let error = prediction - truth;
        let correct = usize::from(prediction == truth);
        self.n += 1;
        self.correct += correct;
        self.squared += error * error;
        self.period_n += 1;
        self.period_correct += correct;
        self.period_squared += error * error;
    }

    /// Cumulative accuracy.
    pub fn accuracy(&self) -> f64 {
        ratio(self.correct as f64, self.n)
    }

    /// Cumulative mean squared error.
    pub fn mse(&self) -> f64 {
        ratio(self.squared, self.n)
    }

    /// `(accuracy, mse)` of the current period, which then starts anew.
    pub fn take_period(&mut self) -> (f64, f64) {
        let out = (ratio(self.period_correct as f64, self.period_n), ratio(self.period_squared, self.period_n));
        self.period_n = 0;
        self.period_correct = 0;
        self.period_squared = 0.0;
        out
    }
}

fn ratio(sum: f64, n: usize) -> f64 {
    if n == 0 { 0.0 } else { sum / n as f64 }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A dense record.
    pub(crate) fn record(x: &[f64], label: f64) -> Record {
        Record { label, indices: (0..x.len() as u32).collect(), values: x.to_vec(), line: 0 }
    }

    /// Feeds `records` prequentially; returns the metrics over the records from `late` on.
    pub(crate) fn prequential(learner: &mut dyn OnlineLearner, records: &[Record], late: usize) -> Prequential {
        let mut metrics = Prequential::default();
        for (t, r) in records.iter().enumerate() {
            if let Some(p) = learner.predict(r).unwrap()
                && t >= late
            {
                metrics.record(p, r.label);
            }
            learner.learn(r).unwrap();
        }
        metrics
    }

    /// Saves `a`'s state after `split` records into `b` (built alike), feeds both the
    /// rest, and checks they end with the same state and the same model bytes.
    pub(crate) fn restored_learner_continues(
        a: &mut dyn OnlineLearner,
        b: &mut dyn OnlineLearner,
        records: &[Record],
        split: usize,
    ) {
        prequential(a, &records[..split], 0);
        b.restore_state(&a.save_state().unwrap()).unwrap();
        assert_eq!(a.save_state().unwrap(), b.save_state().unwrap());
        let rest = &records[split..];
        assert_eq!(prequential(a, rest, 0), prequential(b, rest, 0));
        assert_eq!(a.save_state().unwrap(), b.save_state().unwrap());
        assert_eq!(a.encode().unwrap(), b.encode().unwrap());
    }

    #[test]
    fn prequential_periods_restart() {
        let mut m = Prequential::default();
        m.record(1.0, 1.0);
        m.record(1.0, -1.0);
        assert_eq!(m.take_period(), (0.5, 2.0));
        m.record(0.5, 1.0);
        assert_eq!((m.n, m.accuracy(), m.take_period()), (3, 1.0 / 3.0, (0.0, 0.25)));
        assert_eq!(binary_label(2.0), Err(Error::InvalidLabel { row: 0 }));
        assert_eq!(user_label(-1, true), 0.0);
    }
}
