//! [`WindowSvm`]: the windowed linear SVM of `kestrel stream --learner svm`.

use kestrel_core::dcd::{self, LinearModel};
use kestrel_core::{Error, Real, Rng};
use serde::{Deserialize, Serialize};

use super::input::{Input, ScalerState};
use super::ovr::{Ovr, OvrState, Shape};
use super::{
    BuildError, Footprint, LearnerSize, OnlineLearner, StateError, Steps, decode_state, encode_state, expect_same,
};
use crate::labels::Labels;
use crate::model;
use crate::source::Record;

/// The format version of [`WindowSvm`]'s saved state.
const STATE_VERSION: u16 = 4;

/// The windowed linear SVM (`kestrel_core::dcd::OnlineSvm`): one for two labels,
/// one-vs-rest for more (`online/ovr.rs`).
pub struct WindowSvm<T> {
    ovr: Ovr<T>,
    rng: Rng,
    input: Input<T>,
    labels: Labels,
    /// Coordinate steps of the last sample learned.
    last_steps: u64,
    /// The decision values of the sample last predicted ([`OnlineLearner::decisions`]).
    decisions: Vec<f64>,
}

/// Everything [`WindowSvm::save_state`](OnlineLearner::save_state) writes.
#[derive(Serialize, Deserialize)]
struct SvmState<T> {
    ovr: OvrState<T>,
    rng: [u64; 4],
    scaler: Option<ScalerState<T>>,
    labels: Labels,
}

impl<T: Real> WindowSvm<T> {
    /// A window of `window` samples of `dim` features, at most `steps` coordinate steps per
    /// arrival (fewer once the window is converged: `OnlineSvm::push`); features
    /// standardised online when `scale` ([`crate::online`]); with `memory`, the weights
    /// keep what samples that left the window taught, their share decaying by `memory` per
    /// arrival (`OnlineSvm::remembering_in`), without it they are forgotten; two classes at
    /// most until [`with_classes`](Self::with_classes) allows more.
    ///
    /// # Errors
    /// As `OnlineSvm::new_in` and `remembering_in` (`decay` outside `[0, 1)`);
    /// [`BuildError::Alloc`] when the window cannot be allocated.
    pub fn new(
        window: usize,
        dim: usize,
        params: dcd::ValidParams<T>,
        steps: usize,
        seed: u64,
        scale: bool,
        memory: Option<T>,
    ) -> Result<Self, BuildError> {
        let ovr = Ovr::new(Shape { window, dim, params, steps, decay: memory })?;
        let (rng, input) = (Rng::seed_from_u64(seed), Input::new(dim, scale)?);
        Ok(WindowSvm { ovr, rng, input, labels: Labels::new(2), last_steps: 0, decisions: Vec::new() })
    }

    /// The learner taking at most `classes` classes (one-vs-rest beyond two, over one
    /// window whose room grows with each class when it first appears:
    /// [`footprint`](Self::footprint)).
    #[must_use]
    pub fn with_classes(mut self, classes: usize) -> Self {
        self.labels = Labels::new(classes);
        self
    }

    /// The memory of a window of `window` samples of `dim` features, standardised when
    /// `scale`, for at most `classes` classes, `remembering` samples that left it or not.
    pub fn footprint(window: usize, dim: usize, scale: bool, classes: usize, remembering: bool) -> Footprint {
        Ovr::footprint(window, dim, classes, remembering).plus(Input::<T>::footprint(dim, scale))
    }
}

impl<T: Real> Steps for WindowSvm<T> {
    fn load(&mut self, record: &Record) -> Result<(), Error> {
        self.input.load(record)
    }

    fn predict_loaded(&mut self) -> Result<Option<f64>, Error> {
        let row = self.input.for_prediction()?;
        let class = self.ovr.predict(row, self.labels.len(), Some(&mut self.decisions))?;
        Ok(class.and_then(|c| self.labels.values().get(c).copied()))
    }

    fn learn_loaded(&mut self, label: f64) -> Result<(), Error> {
        let class = super::class_if_learned::<T>(&self.labels, label)?;
        let before = self.ovr.steps_taken();
        let pushed = self.input.observed().and_then(|row| self.ovr.push(row, class, &mut self.rng));
        if let Err(e) = pushed {
            self.input.undo_observe();
            return Err(e);
        }
        self.last_steps = self.ovr.steps_taken() - before;
        super::learned_class(&mut self.labels, label)
    }
}

impl<T: Real> OnlineLearner for WindowSvm<T> {
    fn is_classifier(&self) -> bool {
        true
    }

    fn size(&self) -> LearnerSize {
        LearnerSize { window: self.ovr.len(), centres: self.ovr.support_vectors() }
    }

    fn last_steps(&self) -> Option<u64> {
        Some(self.last_steps)
    }

    fn decisions(&self) -> &[f64] {
        &self.decisions
    }

    fn class_labels(&self) -> &[f64] {
        self.labels.values()
    }

    fn encode(&mut self) -> Result<Vec<u8>, Error> {
        let (dim, outputs) = (self.input.dim(), self.ovr.outputs());
        let storage = vec![T::ZERO; LinearModel::scalars_len(dim, outputs)];
        let bias = self.ovr.shape().params.bias();
        let mut model = LinearModel::new_in(storage, dim, outputs, bias)?;
        for c in 0..outputs {
            let (w, bias_weight) = self.ovr.weights(c).ok_or(Error::InvalidParam { name: "class" })?;
            model.set_weights(c, w, bias_weight)?;
        }
        for (slot, label) in model.labels_mut().iter_mut().zip(self.labels.model_labels()) {
            *slot = T::from_f64(label);
        }
        self.input.scaled_model(model::to_bytes(&model)?)
    }

    fn save_state(&self) -> Result<Vec<u8>, StateError> {
        let state = SvmState {
            ovr: self.ovr.state(),
            rng: self.rng.state(),
            scaler: self.input.state(),
            labels: self.labels.clone(),
        };
        encode_state(STATE_VERSION, &state)
    }

    fn restore_state(&mut self, bytes: &[u8]) -> Result<(), StateError> {
        let state: SvmState<T> = decode_state(STATE_VERSION, bytes)?;
        expect_same("label classes", state.labels.limit(), self.labels.limit())?;
        let ovr = Ovr::from_state(*self.ovr.shape(), state.ovr, state.labels.len())?;
        let rng = Rng::from_state(state.rng)?;
        self.input.restore(state.scaler)?;
        (self.ovr, self.rng, self.labels) = (ovr, rng, state.labels);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::online::tests::{prequential, record, restored_learner_continues};

    fn svm(window: usize) -> WindowSvm<f64> {
        let params = dcd::Params::new().bias(1.0).check().unwrap();
        WindowSvm::<f64>::new(window, 2, params, 10, 1, false, None).unwrap()
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

    /// The steps the learner reports for each sample are those the core's windowed SVM
    /// takes for it, driven alike (unscaled rows, the first label as `+1`, the same seed).
    #[test]
    fn last_steps_are_the_core_svms_steps() {
        let params = dcd::Params::new().bias(1.0).epsilon(0.5).check().unwrap();
        let mut ours = WindowSvm::<f64>::new(30, 2, params, 40, 1, false, None).unwrap();
        let mut core =
            dcd::OnlineSvm::new_in(vec![0.0; dcd::OnlineSvm::scalars_len(30, 2)], 30, 2, params, 40).unwrap();
        let mut rng = Rng::seed_from_u64(1);
        let records = stream(200);
        let first = records[0].label;
        let (mut capped, mut fewer) = (0, 0);
        for r in &records {
            ours.learn(r).unwrap();
            let label = if r.label == first { 1 } else { -1 };
            let steps = core.push(dcd::Row::Dense(&r.values), label, &mut rng).unwrap();
            assert_eq!(ours.last_steps(), Some(steps as u64));
            (capped, fewer) = if steps == 40 { (capped + 1, fewer) } else { (capped, fewer + 1) };
        }
        assert!(capped > 0 && fewer > 0, "both the cap and the rule end arrivals: {capped} {fewer}");
    }

    #[test]
    fn an_impossible_window_is_refused_when_built() {
        let params = dcd::Params::new().check().unwrap();
        let error = WindowSvm::<f64>::new(usize::MAX / 64, 2, params, 1, 1, false, None).err().unwrap();
        assert!(matches!(error, BuildError::Alloc(_)), "{error:?}");
        assert_eq!(
            WindowSvm::<f64>::new(0, 2, params, 1, 1, false, None).err(),
            Some(BuildError::Core(Error::InvalidParam { name: "window" }))
        );
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
