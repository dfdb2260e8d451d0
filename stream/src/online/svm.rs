//! [`WindowSvm`]: the windowed linear SVM of `kestrel stream --learner svm`.

use kestrel_core::dcd::{self, LinearModel, OnlineSvm, OnlineSvmState, Row};
use kestrel_core::{Error, Real, Rng};
use serde::{Deserialize, Serialize};

use super::input::{Input, ScalerState};
use super::{
    BuildError, Footprint, OnlineLearner, StateError, Steps, decode_state, encode_state, expect_same, sign_of,
};
use crate::labels::Labels;
use crate::limits::zeroed;
use crate::model;
use crate::source::Record;

/// The format version of [`WindowSvm`]'s saved state.
const STATE_VERSION: u16 = 3;

/// The windowed linear SVM (`kestrel_core::dcd::OnlineSvm`) for any two labels.
pub struct WindowSvm<T> {
    svm: OnlineSvm<T, Vec<T>>,
    rng: Rng,
    input: Input<T>,
    labels: Labels,
    learned: u64,
}

/// Everything [`WindowSvm::save_state`](OnlineLearner::save_state) writes.
#[derive(Serialize, Deserialize)]
struct SvmState<T> {
    svm: OnlineSvmState<T>,
    scalars: Vec<T>,
    rng: [u64; 4],
    scaler: Option<ScalerState<T>>,
    labels: Labels,
    learned: u64,
}

impl<T: Real> WindowSvm<T> {
    /// A window of `window` samples of `dim` features, at most `steps` coordinate steps per
    /// arrival (fewer once the window is converged: `OnlineSvm::push`); features
    /// standardised online when `scale` ([`crate::online`]).
    ///
    /// # Errors
    /// As `OnlineSvm::new_in`; [`BuildError::Alloc`] when the window cannot be allocated.
    pub fn new(
        window: usize,
        dim: usize,
        params: dcd::ValidParams<T>,
        steps: usize,
        seed: u64,
        scale: bool,
    ) -> Result<Self, BuildError> {
        let scalars = zeroed(OnlineSvm::scalars_len(window, dim), "the SVM's window")?;
        let svm = OnlineSvm::new_in(scalars, window, dim, params, steps)?;
        let (rng, input) = (Rng::seed_from_u64(seed), Input::new(dim, scale)?);
        Ok(WindowSvm { svm, rng, input, labels: super::binary_labels(), learned: 0 })
    }

    /// The memory of a window of `window` samples of `dim` features, standardised when
    /// `scale`.
    pub fn footprint(window: usize, dim: usize, scale: bool) -> Footprint {
        let window = Footprint { core_scalars: OnlineSvm::scalars_len(window, dim), ..Footprint::default() };
        window.plus(Input::<T>::footprint(dim, scale))
    }
}

impl<T: Real> Steps for WindowSvm<T> {
    fn load(&mut self, record: &Record) -> Result<(), Error> {
        self.input.load(record)
    }

    fn predict_loaded(&mut self) -> Result<Option<f64>, Error> {
        if self.learned == 0 {
            return Ok(None);
        }
        let sign = self.svm.predict(Row::Dense(self.input.for_prediction()?))?;
        Ok(Some(self.labels.of_sign(sign)))
    }

    fn learn_loaded(&mut self, label: f64) -> Result<(), Error> {
        let sign = super::sign_if_learned::<T>(&self.labels, label)?;
        let pushed = self.svm.push(Row::Dense(self.input.observed()?), sign, &mut self.rng);
        if let Err(e) = pushed {
            self.input.undo_observe();
            return Err(e);
        }
        sign_of(&mut self.labels, label)?;
        // Saturating: the count may come from a checkpoint (found by fuzzing).
        self.learned = self.learned.saturating_add(1);
        Ok(())
    }
}

impl<T: Real> OnlineLearner for WindowSvm<T> {
    fn is_classifier(&self) -> bool {
        true
    }

    fn encode(&mut self) -> Result<Vec<u8>, Error> {
        let dim = self.input.dim();
        let storage = vec![T::ZERO; LinearModel::scalars_len(dim, 1)];
        let mut model = LinearModel::new_in(storage, dim, 1, self.svm.params().bias())?;
        if let Some((bias, w)) = model.weights_mut(0).and_then(<[T]>::split_last_mut) {
            w.copy_from_slice(self.svm.weights());
            *bias = self.svm.bias_weight();
        }
        for (slot, label) in model.labels_mut().iter_mut().zip(self.labels.model_labels()) {
            *slot = T::from_f64(label);
        }
        self.input.scaled_model(model::to_bytes(&model)?)
    }

    fn save_state(&self) -> Result<Vec<u8>, StateError> {
        let state = SvmState {
            svm: self.svm.state(),
            scalars: self.svm.storage().to_vec(),
            rng: self.rng.state(),
            scaler: self.input.state(),
            labels: self.labels.clone(),
            learned: self.learned,
        };
        encode_state(STATE_VERSION, &state)
    }

    fn restore_state(&mut self, bytes: &[u8]) -> Result<(), StateError> {
        let state: SvmState<T> = decode_state(STATE_VERSION, bytes)?;
        expect_same("window", state.svm.window(), self.svm.window())?;
        expect_same("dimension", state.svm.dim(), self.input.dim())?;
        expect_same(
            "steps per arrival (cap)",
            state.svm.max_steps_per_arrival(),
            self.svm.state().max_steps_per_arrival(),
        )?;
        expect_same("label classes", state.labels.limit(), self.labels.limit())?;
        let svm = OnlineSvm::from_state_in(state.scalars, *self.svm.params(), state.svm)?;
        let rng = Rng::from_state(state.rng)?;
        self.input.restore(state.scaler)?;
        (self.svm, self.rng) = (svm, rng);
        self.labels = state.labels;
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
        WindowSvm::<f64>::new(window, 2, params, 10, 1, false).unwrap()
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
        let records = stream(600);
        let metrics = prequential(&mut svm, &records, 0);
        assert!(metrics.accuracy() > 0.9, "{}", metrics.accuracy());
        let before = svm.save_state().unwrap();
        assert_eq!(svm.learn(&record(&[0.0, 0.0], 2.0)), Err(Error::InvalidLabel { row: 0 }));
        assert_eq!(svm.save_state().unwrap(), before, "a rejected sample changes nothing");
        let bytes = svm.encode().unwrap();
        let model = LinearModel::<f64, _>::decode_in(&bytes, vec![0.0; 5]).unwrap();
        // The first label of the stream is the positive class: [negative, positive].
        let first = records[0].label;
        assert_eq!(model.labels(), &[1.0 - first, first]);
    }

    #[test]
    fn an_impossible_window_is_refused_when_built() {
        let params = dcd::Params::new().check().unwrap();
        let error = WindowSvm::<f64>::new(usize::MAX / 64, 2, params, 1, 1, false).err().unwrap();
        assert!(matches!(error, BuildError::Alloc(_)), "{error:?}");
        assert_eq!(
            WindowSvm::<f64>::new(0, 2, params, 1, 1, false).err(),
            Some(BuildError::Core(Error::InvalidParam { name: "window" }))
        );
    }

    /// A count read from a checkpoint at its limit saturates (found by fuzzing: it overflowed).
    #[test]
    fn a_restored_count_at_its_limit_saturates() {
        let mut a = svm(50);
        let records = stream(11);
        prequential(&mut a, &records[..10], 0);
        let mut state: SvmState<f64> = decode_state(STATE_VERSION, &a.save_state().unwrap()).unwrap();
        state.learned = u64::MAX;
        let mut b = svm(50);
        b.restore_state(&encode_state(STATE_VERSION, &state).unwrap()).unwrap();
        assert_eq!(b.learn(&records[10]), Ok(()));
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
