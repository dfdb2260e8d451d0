//! [`WindowSvm`]: the windowed linear SVM of `kestrel stream --learner svm`.

use kestrel_core::dcd::{self, LinearModel, OnlineSvm, OnlineSvmState, Row};
use kestrel_core::{Error, Real, Rng};
use serde::{Deserialize, Serialize};

use super::{OnlineLearner, StateError, binary_label, expect_same, user_label};
use crate::source::Record;

/// The windowed linear SVM (`kestrel_core::dcd::OnlineSvm`), labels ±1 or 0/1.
pub struct WindowSvm<T> {
    svm: OnlineSvm<T, Vec<T>>,
    rng: Rng,
    dense: Vec<T>,
    /// The labels are 0/1 rather than −1/+1.
    zero_one: bool,
    learned: u64,
}

/// Everything [`WindowSvm::save_state`](OnlineLearner::save_state) writes.
#[derive(Serialize, Deserialize)]
struct SvmState<T> {
    svm: OnlineSvmState,
    scalars: Vec<T>,
    rng: [u64; 4],
    zero_one: bool,
    learned: u64,
}

impl<T: Real> WindowSvm<T> {
    /// A window of `window` samples of `dim` features, `steps` coordinate steps per arrival.
    ///
    /// # Errors
    /// As `OnlineSvm::new_in`.
    pub fn new(window: usize, dim: usize, params: dcd::ValidParams<T>, steps: usize, seed: u64) -> Result<Self, Error> {
        let svm = OnlineSvm::new_in(vec![T::ZERO; OnlineSvm::scalars_len(window, dim)], window, dim, params, steps)?;
        Ok(WindowSvm { svm, rng: Rng::seed_from_u64(seed), dense: vec![T::ZERO; dim], zero_one: false, learned: 0 })
    }
}

impl<T: Real> OnlineLearner for WindowSvm<T> {
    fn predict(&mut self, record: &Record) -> Result<Option<f64>, Error> {
        if self.learned == 0 {
            return Ok(None);
        }
        record.write_dense(&mut self.dense)?;
        let class = self.svm.predict(Row::Dense(&self.dense))?;
        Ok(Some(user_label(class, self.zero_one)))
    }

    fn learn(&mut self, record: &Record) -> Result<(), Error> {
        record.write_dense(&mut self.dense)?;
        let (label, zero) = binary_label(record.label)?;
        self.svm.push(Row::Dense(&self.dense), label, &mut self.rng)?;
        self.zero_one |= zero;
        self.learned += 1;
        Ok(())
    }

    fn is_classifier(&self) -> bool {
        true
    }

    fn encode(&mut self) -> Result<Vec<u8>, Error> {
        let dim = self.dense.len();
        let mut model =
            LinearModel::new_in(vec![T::ZERO; LinearModel::scalars_len(dim, 1)], dim, 1, self.svm.params().bias())?;
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

    fn save_state(&self) -> Result<Vec<u8>, StateError> {
        let state = SvmState {
            svm: self.svm.state(),
            scalars: self.svm.storage().to_vec(),
            rng: self.rng.state(),
            zero_one: self.zero_one,
            learned: self.learned,
        };
        Ok(postcard::to_stdvec(&state)?)
    }

    fn restore_state(&mut self, bytes: &[u8]) -> Result<(), StateError> {
        let state: SvmState<T> = postcard::from_bytes(bytes)?;
        expect_same("window", state.svm.window(), self.svm.window())?;
        expect_same("dimension", state.svm.dim(), self.dense.len())?;
        let svm = OnlineSvm::from_state_in(state.scalars, *self.svm.params(), state.svm)?;
        self.rng = Rng::from_state(state.rng)?;
        self.svm = svm;
        self.zero_one = state.zero_one;
        self.learned = state.learned;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::online::tests::{prequential, record, restored_learner_continues};

    fn svm(window: usize) -> WindowSvm<f64> {
        let params = dcd::Params::new().bias(1.0).check().unwrap();
        WindowSvm::<f64>::new(window, 2, params, 10, 1).unwrap()
    }

    fn stream(n: usize) -> Vec<Record> {
        let mut rng = Rng::seed_from_u64(2);
        (0..n)
            .map(|_| {
                let x = [rng.uniform_in(-1.0, 1.0), rng.uniform_in(-1.0, 1.0)];
                record(&x, if x[0] + x[1] > 0.0 { 1.0 } else { 0.0 })
            })
            .collect()
    }

    #[test]
    fn learns_a_separable_stream() {
        let mut svm = svm(50);
        let metrics = prequential(&mut svm, &stream(600), 0);
        assert!(metrics.accuracy() > 0.9, "{}", metrics.accuracy());
        assert_eq!(svm.learn(&record(&[0.0, 0.0], 2.0)), Err(Error::InvalidLabel { row: 0 }));
        let bytes = svm.encode().unwrap();
        let model = LinearModel::<f64, _>::decode_in(&bytes, vec![0.0; 5]).unwrap();
        assert_eq!(model.labels(), &[0.0, 1.0]);
    }

    #[test]
    fn restored_state_continues_exactly() {
        let records = stream(300);
        restored_learner_continues(&mut svm(50), &mut svm(50), &records, 120);
        let saved = svm(50).save_state().unwrap();
        let e = svm(40).restore_state(&saved).unwrap_err();
        assert_eq!(e.to_string(), "learner state is for another configuration: window 50 saved, 40 configured");
        assert!(matches!(svm(50).restore_state(&saved[..5]), Err(StateError::Encode(_))));
    }
}
