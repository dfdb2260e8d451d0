//! [`WindowSlkl`]: the windowed SLKL regressor of `kestrel stream --learner slkl`.

use kestrel_core::slkl::{self, Dims, Predictor, SlklWindow, SlklWindowState};
use kestrel_core::{Error, Real};
use serde::{Deserialize, Serialize};

use super::{OnlineLearner, StateError, expect_same};
use crate::source::Record;

/// Windowed SLKL; `M` samples spread over the first window become its centres.
pub struct WindowSlkl<T> {
    dims: Dims,
    params: slkl::ValidParams<T>,
    steps: usize,
    warmup: Vec<(Vec<T>, T)>,
    learner: Option<SlklWindow<T, Vec<T>, Vec<usize>>>,
    dense: Vec<T>,
}

/// Everything [`WindowSlkl::save_state`](OnlineLearner::save_state) writes.
#[derive(Serialize, Deserialize)]
enum SlklState<T> {
    /// Collecting the centres: the samples so far.
    Warmup(Vec<(Vec<T>, T)>),
    /// Learning: the core learner's fields and buffers.
    Learning { state: Box<SlklWindowState<T>>, scalars: Vec<T>, indices: Vec<usize> },
}

impl<T: Real> WindowSlkl<T> {
    /// A window of `window` samples of `dim` features with `centres` centres, `steps`
    /// coordinate steps per arrival.
    pub fn new(window: usize, dim: usize, centres: usize, params: slkl::ValidParams<T>, steps: usize) -> Self {
        let dims = Dims::new(window, dim, centres, centres);
        WindowSlkl { dims, params, steps, warmup: Vec::new(), learner: None, dense: vec![T::ZERO; dim] }
    }

    /// Bytes of the learner's buffers ([`SlklWindow::bytes`]).
    pub fn bytes(&self) -> usize {
        SlklWindow::bytes::<T>(self.dims)
    }

    /// Samples collected before learning starts: a full window (at least `M`).
    fn warmup_len(&self) -> usize {
        self.dims.rows().max(self.dims.candidates())
    }

    /// The window learner with `M` centres spread evenly over the warm-up (every
    /// `len/M`-th sample), fed the whole warm-up.
    fn start_learning(&self) -> Result<SlklWindow<T, Vec<T>, Vec<usize>>, Error> {
        let stride = self.warmup.len() / self.dims.candidates();
        let centres: Vec<T> = self
            .warmup
            .iter()
            .step_by(stride)
            .take(self.dims.candidates())
            .flat_map(|(x, _)| x.iter().copied())
            .collect();
        let mut learner = SlklWindow::new_in(
            vec![T::ZERO; SlklWindow::scalars_len(self.dims)],
            vec![0usize; SlklWindow::indices_len(self.dims)],
            self.dims,
            self.params,
            &centres,
        )?;
        for (x, y) in &self.warmup {
            Self::push(&mut learner, x, *y, self.steps)?;
        }
        Ok(learner)
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
        record.write_dense(&mut self.dense)?;
        match &mut self.learner {
            Some(learner) => Ok(Some(learner.predict(&self.dense)?.to_f64())),
            None if self.warmup.is_empty() => Ok(None),
            // Before the centres are complete: the mean of the targets seen.
            None => Ok(Some(self.warmup.iter().map(|(_, y)| y.to_f64()).sum::<f64>() / self.warmup.len() as f64)),
        }
    }

    fn learn(&mut self, record: &Record) -> Result<(), Error> {
        record.write_dense(&mut self.dense)?;
        let y = T::from_f64(record.label);
        if let Some(learner) = &mut self.learner {
            return Self::push(learner, &self.dense, y, self.steps);
        }
        if !self.dense.iter().all(|v| v.is_finite()) || !y.is_finite() {
            return Err(Error::NonFinite);
        }
        self.warmup.push((self.dense.clone(), y));
        if self.warmup.len() == self.warmup_len() {
            match self.start_learning() {
                Ok(learner) => self.learner = Some(learner),
                Err(e) => {
                    // Rejected: the sample leaves the warm-up again, the learner is unchanged.
                    self.warmup.pop();
                    return Err(e);
                }
            }
            self.warmup.clear();
        }
        Ok(())
    }

    fn is_classifier(&self) -> bool {
        false
    }

    fn encode(&mut self) -> Result<Vec<u8>, Error> {
        let learner = self.learner.as_mut().ok_or(Error::InvalidParam { name: "centers" })?;
        let m0 = learner.active_len();
        let model = learner.predictor_in(vec![T::ZERO; Predictor::scalars_len(m0, self.dims.dim())])?;
        let mut bytes = vec![0u8; 64 + 2 * Predictor::bytes::<T>(m0, self.dims.dim())];
        let len = model.encode(&mut bytes)?;
        bytes.truncate(len);
        Ok(bytes)
    }

    fn save_state(&self) -> Result<Vec<u8>, StateError> {
        let state = match &self.learner {
            None => SlklState::Warmup(self.warmup.clone()),
            Some(learner) => {
                let (scalars, indices) = learner.storage();
                let state = Box::new(learner.state());
                SlklState::Learning { state, scalars: scalars.to_vec(), indices: indices.to_vec() }
            }
        };
        Ok(postcard::to_stdvec(&state)?)
    }

    fn restore_state(&mut self, bytes: &[u8]) -> Result<(), StateError> {
        match postcard::from_bytes::<SlklState<T>>(bytes)? {
            SlklState::Warmup(warmup) => {
                expect_same("warm-up samples below a window", warmup.len() < self.warmup_len(), true)?;
                for (x, y) in &warmup {
                    expect_same("dimension", x.len(), self.dims.dim())?;
                    if !x.iter().chain([y]).all(|v| v.is_finite()) {
                        return Err(StateError::Invalid(Error::NonFinite));
                    }
                }
                self.warmup = warmup;
                self.learner = None;
            }
            SlklState::Learning { state, scalars, indices } => {
                expect_same("capacities", state.dims(), self.dims)?;
                self.learner = Some(SlklWindow::from_state_in(scalars, indices, self.params, *state)?);
                self.warmup.clear();
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::online::tests::{prequential, record, restored_learner_continues};
    use kestrel_core::Rng;

    fn params() -> slkl::ValidParams<f64> {
        slkl::Params::new().kernel(kestrel_core::Kernel::rbf(2.0).unwrap()).nu(1e-3).check().unwrap()
    }

    fn slkl() -> WindowSlkl<f64> {
        WindowSlkl::<f64>::new(100, 1, 20, params(), 5)
    }

    fn stream(n: usize) -> Vec<Record> {
        let mut rng = Rng::seed_from_u64(3);
        (0..n)
            .map(|_| {
                let x = rng.uniform_in(-2.0, 2.0);
                record(&[x], (2.0 * x).sin())
            })
            .collect()
    }

    #[test]
    fn tracks_a_smooth_target() {
        let records = stream(600);
        let all = prequential(&mut slkl(), &records, 0);
        let mut learner = slkl();
        let late = prequential(&mut learner, &records, 300);
        // sin(2x) on [−2, 2] has variance ≈ 0.5: once learned, the error is a small fraction.
        assert!(late.mse() < 0.02 && late.mse() < all.mse(), "late {} all {}", late.mse(), all.mse());
        assert!(learner.encode().is_ok());
    }

    #[test]
    fn restored_state_continues_exactly() {
        let records = stream(400);
        // Saved during the warm-up (the first window) and while learning.
        for split in [10, 250] {
            restored_learner_continues(&mut slkl(), &mut slkl(), &records, split);
        }
        let mut other = WindowSlkl::<f64>::new(50, 1, 20, params(), 5);
        let mut learner = slkl();
        prequential(&mut learner, &records[..150], 0); // past the warm-up (one window)
        let e = other.restore_state(&learner.save_state().unwrap()).unwrap_err();
        assert!(e.to_string().starts_with("learner state is for another configuration: capacities"), "{e}");
    }
}
