//! Saving and restoring a [`WindowRsvm`]: the random generator, the labels, and the
//! phase — during the warm-up the centres, samples and their classes; while learning the
//! centres, the factor `L`, the one-vs-rest SVMs' states and storage, and when the
//! centres are renewed the window's samples and the count of renewals (the spare
//! buffers hold nothing between arrivals).

use kestrel_core::linalg::packed_len;
use kestrel_core::reduced_set::Offer;
use kestrel_core::{Error, Real, Rng};
use serde::{Deserialize, Serialize};

use super::{Frozen, Phase, Renewal, Warmup, WindowRsvm, factor_dim};
use crate::labels::Labels;
use crate::online::input::ScalerState;
use crate::online::ovr::{Ovr, OvrState};
use crate::online::{StateError, expect_same};

/// Everything [`WindowRsvm::save_state`](crate::online::OnlineLearner::save_state) writes.
#[derive(Serialize, Deserialize)]
pub(super) struct RsvmState<T> {
    rng: [u64; 4],
    scaler: Option<ScalerState<T>>,
    labels: Labels,
    phase: PhaseState<T>,
}

#[derive(Serialize, Deserialize)]
enum PhaseState<T> {
    /// The selector is restored by offering it its centres again, in order: its factor
    /// depends on them alone (a rejected offer leaves no trace), so this is exact.
    Warmup { centres: Vec<T>, samples: Vec<T>, classes: Vec<usize> },
    Learning {
        centres: Vec<T>,
        factor: Vec<T>,
        ovr: OvrState<T>,
        /// The window's samples (row-major, as learned) and the renewals so far, when the
        /// centres are renewed.
        renewal: Option<(Vec<T>, u64)>,
    },
}

fn invalid(error: Error) -> StateError {
    StateError::Invalid(error)
}

impl<T: Real> WindowRsvm<T> {
    pub(super) fn state(&self) -> RsvmState<T> {
        let phase = match &self.phase {
            Phase::Warmup(w) => {
                PhaseState::Warmup { centres: w.centres(), samples: w.samples.clone(), classes: w.classes.clone() }
            }
            Phase::Learning(f) => PhaseState::Learning {
                centres: f.centres.clone(),
                factor: f.factor.clone(),
                ovr: f.ovr.state(),
                renewal: f.renewal.as_ref().map(|r| (r.inputs.iter().copied().collect(), r.count)),
            },
        };
        RsvmState { rng: self.rng.state(), scaler: self.input.state(), labels: self.labels.clone(), phase }
    }

    /// Replaces the state with `state` after checking it; unchanged on error.
    pub(super) fn restore(&mut self, state: RsvmState<T>) -> Result<(), StateError> {
        let rng = Rng::from_state(state.rng)?;
        expect_same("label classes", state.labels.limit(), self.labels.limit())?;
        expect_same("feature scaling", state.scaler.is_some(), self.input.scales())?;
        let phase = self.restore_phase(state.phase, state.labels.len())?;
        self.input.restore(state.scaler)?;
        self.phase = phase;
        self.predicted_features = false;
        self.rng = rng;
        self.labels = state.labels;
        Ok(())
    }

    /// The phase `phase` describes, for a learner that has seen `classes` classes.
    fn restore_phase(&self, phase: PhaseState<T>, classes: usize) -> Result<Phase<T>, StateError> {
        let (dim, settings) = (self.dim, &self.settings);
        let centres = match &phase {
            PhaseState::Warmup { centres, .. } | PhaseState::Learning { centres, .. } => centres,
        };
        expect_same("centre values a multiple of the dimension", centres.len() % dim, 0)?;
        expect_same("centres within the capacity", centres.len() / dim <= settings.centres, true)?;
        match phase {
            PhaseState::Warmup { centres, samples, classes: sample_classes } => {
                expect_same("samples", samples.len(), sample_classes.len() * dim)?;
                expect_same("warm-up within the window", sample_classes.len() <= settings.window, true)?;
                if sample_classes.iter().any(|&class| class >= classes) {
                    return Err(invalid(Error::InvalidParam { name: "labels" }));
                }
                if !samples.iter().all(|v| v.is_finite()) {
                    return Err(invalid(Error::NonFinite));
                }
                let mut warmup = Warmup::new(settings, dim).map_err(|e| match e {
                    crate::online::BuildError::Core(e) => StateError::Invalid(e),
                    crate::online::BuildError::Alloc(e) => StateError::Alloc(e),
                })?;
                for (j, centre) in centres.chunks_exact(dim).enumerate() {
                    if !matches!(warmup.selector.offer(centre)?, Offer::Accepted { index, .. } if index == j) {
                        return Err(invalid(Error::InvalidParam { name: "centers" }));
                    }
                }
                warmup.counts = vec![0; classes];
                for (x, &class) in samples.chunks_exact(dim).zip(&sample_classes) {
                    warmup.keep(x, class, settings.window);
                }
                Ok(Phase::Warmup(warmup))
            }
            PhaseState::Learning { centres, factor, ovr, renewal } => {
                let m = factor_dim(&factor);
                if m == 0 || factor.len() != packed_len(m) || centres.len() != m * dim {
                    return Err(invalid(Error::InvalidParam { name: "factor" }));
                }
                if !centres.iter().chain(&factor).all(|v| v.is_finite()) {
                    return Err(invalid(Error::NonFinite));
                }
                if let Some(pivot) = (0..m).find(|&i| factor.get(packed_len(i) + i).is_none_or(|&d| d <= T::ZERO)) {
                    return Err(invalid(Error::NotPositiveDefinite { pivot }));
                }
                let ovr = Ovr::from_state(Frozen::shape(settings, m), ovr, classes)?;
                let mut frozen = Frozen { centres, factor, ovr, features: vec![T::ZERO; m], renewal: None };
                expect_same("centre renewal", renewal.is_some(), settings.renew)?;
                if let Some((inputs, count)) = renewal {
                    expect_same("the window's samples", inputs.len(), frozen.ovr.len() * dim)?;
                    if !inputs.iter().all(|v| v.is_finite()) {
                        return Err(invalid(Error::NonFinite));
                    }
                    let mut kept = Renewal::new(settings.window, dim, m)?;
                    kept.inputs.extend(inputs);
                    kept.count = count;
                    frozen.renewal = Some(kept);
                }
                Ok(Phase::Learning(frozen))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::{rsvm, xor};
    use super::*;
    use crate::online::OnlineLearner;
    use crate::online::tests::prequential;

    #[test]
    fn inconsistent_states_are_rejected() {
        let mut learner = rsvm::<f64>();
        prequential(&mut learner, &xor(30, 4), 0);
        let PhaseState::Warmup { centres, samples, classes } =
            crate::online::decode_state::<RsvmState<f64>>(super::super::STATE_VERSION, &learner.save_state().unwrap())
                .unwrap()
                .phase
        else {
            panic!("still warming up")
        };
        let restore = |phase| rsvm::<f64>().restore_phase(phase, 2).err().map(|e| e.to_string());
        let mut twice = centres.clone();
        twice.extend_from_slice(&centres[..2]);
        let e = restore(PhaseState::Warmup { centres: twice, samples: samples.clone(), classes: classes.clone() });
        assert_eq!(e.as_deref(), Some("learner state is inconsistent: invalid parameter `centers`"));
        let e = restore(PhaseState::Warmup {
            centres: centres.clone(),
            samples: samples[2..].to_vec(),
            classes: classes.clone(),
        });
        assert!(e.unwrap().starts_with("learner state is for another configuration: samples"));
        let mut third = classes.clone();
        third[0] = 2;
        let e = restore(PhaseState::Warmup { centres: centres.clone(), samples: samples.clone(), classes: third });
        assert_eq!(e.as_deref(), Some("learner state is inconsistent: invalid parameter `labels`"));
        let factor = vec![1.0, 0.5, -1.0];
        let ovr = Ovr::new(Frozen::shape(&rsvm::<f64>().settings, 2)).unwrap().state();
        let e = restore(PhaseState::Learning { centres: centres[..4].to_vec(), factor, ovr, renewal: None });
        assert_eq!(e.as_deref(), Some("learner state is inconsistent: matrix is not positive definite (pivot 1)"));
    }
}
