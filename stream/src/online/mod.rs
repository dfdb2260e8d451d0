//! Online learners for streams, and prequential (test-then-train) evaluation.
//!
//! Each sample is first predicted by the model learned from the samples before it, scored,
//! and only then learned from. The learners keep a window of the last `N` samples in
//! memory fixed at construction:
//!
//! - [`WindowSvm`]: the windowed DCD SVM (`kestrel_core::dcd::OnlineSvm`), labels ±1 or
//!   0/1, a few coordinate steps per arrival.
//! - [`WindowSlkl`]: windowed SLKL (`kestrel_core::slkl::SlklWindow`) for a regression
//!   target; its `M` centres are the first `M` samples of the stream, after which it learns
//!   from every sample (the first `M` included) with a few coordinate steps per arrival.

use kestrel_core::dcd::{self, LinearModel, OnlineSvm, Row};
use kestrel_core::slkl::{self, Dims, SlklWindow, predictor};
use kestrel_core::{Error, Real, Rng};

use crate::source::Record;

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
}

/// Writes a sparse record into a dense buffer; an index past it is an error.
pub fn densify<T: Real>(record: &Record, dense: &mut [T]) -> Result<(), Error> {
    dense.fill(T::ZERO);
    let dim = dense.len();
    for (&j, &v) in record.indices.iter().zip(&record.values) {
        *dense.get_mut(j as usize).ok_or(Error::IndexOutOfRange { index: j as usize, len: dim })? = T::from_f64(v);
    }
    Ok(())
}

/// The windowed linear SVM.
pub struct WindowSvm<T> {
    svm: OnlineSvm<T, Vec<T>>,
    rng: Rng,
    dense: Vec<T>,
    /// The labels are 0/1 rather than −1/+1.
    zero_one: bool,
    learned: usize,
}

impl<T: Real> WindowSvm<T> {
    /// A window of `window` samples of `dim` features, `steps` coordinate steps per arrival.
    ///
    /// # Errors
    /// As `OnlineSvm::new_in`.
    pub fn new(window: usize, dim: usize, params: dcd::ValidParams<T>, steps: usize, seed: u64) -> Result<Self, Error> {
        let svm = OnlineSvm::new_in(vec![T::ZERO; dcd::online_scalars_len(window, dim)], window, dim, params, steps)?;
        Ok(WindowSvm { svm, rng: Rng::seed_from_u64(seed), dense: vec![T::ZERO; dim], zero_one: false, learned: 0 })
    }

    fn label(&mut self, label: f64) -> Result<i32, Error> {
        match label {
            1.0 => Ok(1),
            -1.0 => Ok(-1),
            0.0 => {
                self.zero_one = true;
                Ok(-1)
            }
            _ => Err(Error::InvalidLabel { row: 0 }),
        }
    }
}

impl<T: Real> OnlineLearner for WindowSvm<T> {
    fn predict(&mut self, record: &Record) -> Result<Option<f64>, Error> {
        if self.learned == 0 {
            return Ok(None);
        }
        densify(record, &mut self.dense)?;
        let class = self.svm.predict(Row::Dense(&self.dense))?;
        Ok(Some(if class > 0 {
            1.0
        } else if self.zero_one {
            0.0
        } else {
            -1.0
        }))
    }

    fn learn(&mut self, record: &Record) -> Result<(), Error> {
        densify(record, &mut self.dense)?;
        let label = self.label(record.label)?;
        self.svm.push(Row::Dense(&self.dense), label, &mut self.rng)?;
        self.learned += 1;
        Ok(())
    }

    fn is_classifier(&self) -> bool {
        true
    }

    fn encode(&mut self) -> Result<Vec<u8>, Error> {
        let dim = self.dense.len();
        let mut model =
            LinearModel::new_in(vec![T::ZERO; LinearModel::storage_len(dim, 1)], dim, 1, self.svm.params().bias())?;
        if let Some(w) = model.weights_mut(0) {
            w[..dim].copy_from_slice(self.svm.weights());
            w[dim] = self.svm.bias_weight();
        }
        if self.zero_one {
            model.labels_mut().copy_from_slice(&[T::ZERO, T::ONE]);
        }
        let mut bytes = vec![0u8; 64 + 2 * T::BYTES * (dim + 3)];
        let len = model.encode(&mut bytes)?;
        bytes.truncate(len);
        Ok(bytes)
    }
}

/// Windowed SLKL; the first `M` samples become its centres.
pub struct WindowSlkl<T> {
    dims: Dims,
    params: slkl::ValidParams<T>,
    steps: usize,
    warmup: Vec<(Vec<T>, T)>,
    learner: Option<SlklWindow<T, Vec<T>, Vec<usize>>>,
    dense: Vec<T>,
}

impl<T: Real> WindowSlkl<T> {
    /// A window of `window` samples of `dim` features with `centres` centres, `steps`
    /// coordinate steps per arrival.
    pub fn new(window: usize, dim: usize, centres: usize, params: slkl::ValidParams<T>, steps: usize) -> Self {
        let dims = Dims::new(window, dim, centres, centres);
        WindowSlkl { dims, params, steps, warmup: Vec::new(), learner: None, dense: vec![T::ZERO; dim] }
    }

    /// Bytes of the learner's buffers ([`Dims::window_bytes`]).
    pub fn bytes(&self) -> usize {
        self.dims.window_bytes::<T>()
    }

    fn push(learner: &mut SlklWindow<T, Vec<T>, Vec<usize>>, x: &[T], y: T, steps: usize) -> Result<(), Error> {
        learner.push(x, y)?;
        for _ in 0..steps {
            learner.step()?;
        }
        Ok(())
    }
}

impl<T: Real> OnlineLearner for WindowSlkl<T> {
    fn predict(&mut self, record: &Record) -> Result<Option<f64>, Error> {
        densify(record, &mut self.dense)?;
        match &mut self.learner {
            Some(learner) => Ok(Some(learner.predict(&self.dense)?.to_f64())),
            None if self.warmup.is_empty() => Ok(None),
            // Before the centres are complete: the mean of the targets seen.
            None => Ok(Some(self.warmup.iter().map(|(_, y)| y.to_f64()).sum::<f64>() / self.warmup.len() as f64)),
        }
    }

    fn learn(&mut self, record: &Record) -> Result<(), Error> {
        densify(record, &mut self.dense)?;
        let y = T::from_f64(record.label);
        if let Some(learner) = &mut self.learner {
            return Self::push(learner, &self.dense, y, self.steps);
        }
        kestrel_core::linalg::dot(&self.dense, &self.dense)?; // same checks as the learner: finite
        if !self.dense.iter().all(|v| v.is_finite()) || !y.is_finite() {
            return Err(Error::NonFinite);
        }
        self.warmup.push((self.dense.clone(), y));
        if self.warmup.len() == self.dims.candidates() {
            let centres: Vec<T> = self.warmup.iter().flat_map(|(x, _)| x.iter().copied()).collect();
            let mut learner = SlklWindow::new_in(
                vec![T::ZERO; self.dims.window_scalars_len()],
                vec![0usize; self.dims.indices_len()],
                self.dims,
                self.params,
                &centres,
            )?;
            for (x, y) in std::mem::take(&mut self.warmup) {
                Self::push(&mut learner, &x, y, self.steps)?;
            }
            self.learner = Some(learner);
        }
        Ok(())
    }

    fn is_classifier(&self) -> bool {
        false
    }

    fn encode(&mut self) -> Result<Vec<u8>, Error> {
        let learner = self.learner.as_mut().ok_or(Error::InvalidParam { name: "centers" })?;
        let m0 = learner.active_len();
        let model = learner.predictor_in(vec![T::ZERO; predictor::scalars_len(m0, self.dims.dim())])?;
        let mut bytes = vec![0u8; 64 + 2 * predictor::bytes::<T>(m0, self.dims.dim())];
        let len = model.encode(&mut bytes)?;
        bytes.truncate(len);
        Ok(bytes)
    }
}

/// Prequential metrics: cumulative and over the last report period.
#[derive(Clone, Debug, Default, PartialEq)]
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
mod tests {
    use super::*;

    fn record(x: &[f64], label: f64) -> Record {
        Record { label, indices: (0..x.len() as u32).collect(), values: x.to_vec(), line: 0 }
    }

    #[test]
    fn window_svm_learns_a_separable_stream() {
        let params = dcd::Params::new().bias(1.0).check().unwrap();
        let mut svm = WindowSvm::<f64>::new(50, 2, params, 10, 1).unwrap();
        let mut rng = Rng::seed_from_u64(2);
        let mut metrics = Prequential::default();
        for _ in 0..600 {
            let x = [rng.uniform_in(-1.0, 1.0), rng.uniform_in(-1.0, 1.0)];
            let r = record(&x, if x[0] + x[1] > 0.0 { 1.0 } else { 0.0 });
            if let Some(p) = svm.predict(&r).unwrap() {
                metrics.record(p, r.label);
            }
            svm.learn(&r).unwrap();
        }
        assert!(metrics.accuracy() > 0.9, "{}", metrics.accuracy());
        assert_eq!(svm.learn(&record(&[0.0, 0.0], 2.0)), Err(Error::InvalidLabel { row: 0 }));
        let bytes = svm.encode().unwrap();
        let model = LinearModel::<f64, _>::decode_in(&bytes, vec![0.0; 5]).unwrap();
        assert_eq!(model.labels(), &[0.0, 1.0]);
    }

    #[test]
    fn window_slkl_tracks_a_smooth_target() {
        let params = slkl::Params::new().kernel(kestrel_core::Kernel::rbf(2.0).unwrap()).nu(1e-3).check().unwrap();
        let mut slkl = WindowSlkl::<f64>::new(100, 1, 20, params, 5);
        let mut rng = Rng::seed_from_u64(3);
        let mut metrics = Prequential::default();
        let mut late = Prequential::default();
        for t in 0..600 {
            let x = rng.uniform_in(-2.0, 2.0);
            let r = record(&[x], (2.0 * x).sin());
            if let Some(p) = slkl.predict(&r).unwrap() {
                metrics.record(p, r.label);
                if t >= 300 {
                    late.record(p, r.label);
                }
            }
            slkl.learn(&r).unwrap();
        }
        // sin(2x) on [−2, 2] has variance ≈ 0.5: once learned, the error is a small fraction.
        assert!(late.mse() < 0.02 && late.mse() < metrics.mse(), "late {} all {}", late.mse(), metrics.mse());
        assert!(slkl.encode().is_ok());
    }
}
