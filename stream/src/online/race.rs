//! A race of learners that differ in one setting, for a stream that cannot choose it from a
//! data set beforehand (`kestrel stream --learner rsvm` without `--gamma`: the widths
//! `1/d`, `1/(4d)` and `4/d`; `--learner svm` without `--c`: the costs 1, 0.1 and 0.01;
//! `--learner slkl` without `--nu`: ν = 0.01, 1 and 100).
//!
//! For the first `T` arrivals (the trial) every candidate predicts and learns every
//! sample, and each prediction is scored as the stream scores it (prequentially: before
//! the sample is learned). The stream's prediction is the leader's: the candidate of the
//! lowest loss so far — a classifier's wrong predictions, a regressor's summed squared
//! errors — ties going to the earlier candidate (the first is the setting the learner has
//! without a race). When the trial ends the leader stays, with
//! all it has learned, and the others are dropped: from then on the race costs nothing.
//!
//! Why a race and not a criterion on the first samples: on River's streams the width
//! that streams best is not the one a batch criterion picks on the first window (the
//! leave-one-out of `kestrel train` picks `0.003` on Phishing's first 256 rows, which
//! streams at 0.892 where `1/(4d)` streams at 0.908). The prequential score of the first
//! window picked the width that streamed best on six of eight streams, and one within 0.7
//! point of it on the other two; svm's cost that streamed best (or within 0.2 point of
//! it) on all eight (BENCHMARKS.md, issue 11).
//!
//! **Memory**: the candidates' together during the trial (three learners), the leader's
//! after; plus a counter and a prediction per candidate.

#![allow(
    clippy::indexing_slicing,
    reason = "the candidates are never empty (new refuses none, settle keeps one, a restored state names one or more), and every index is the leader or one found among them"
)]

use kestrel_core::Error;
use serde::{Deserialize, Serialize};

use super::steps::Steps;
use super::{LearnerSize, OnlineLearner, StateError, decode_state, encode_state, expect_same};
use crate::source::Record;

/// Format of [`Race::save_state`]'s bytes.
const STATE_VERSION: u16 = 2;

/// The format of states saved when races scored classifiers alone, by their correct
/// predictions: they restore with `−correct` as the loss (the same order, as every
/// candidate predicts every sample it scores).
const STATE_VERSION_OF_CORRECT: u16 = 1;

/// A learner among candidates, each with the value of the raced setting it was built with.
pub struct Race {
    /// The setting's name (`gamma`, `c`).
    setting: &'static str,
    /// The candidates still running, each with its value of the setting.
    candidates: Vec<(f64, Box<dyn OnlineLearner + Send + Sync>)>,
    /// The loss of each candidate's predictions so far (module doc).
    losses: Vec<f64>,
    /// Arrivals learned so far, and the arrivals of the trial.
    learned: u64,
    trial: u64,
    /// Each candidate's prediction of the sample loaded, when it was predicted.
    predictions: Vec<Option<f64>>,
    predicted: bool,
    /// The decision values of the candidate whose prediction was the race's for the sample
    /// last predicted: the leader may change when the sample is learned, but the stream's
    /// class probabilities are those of the prediction it gave.
    decisions: Vec<f64>,
    /// The coordinate steps of the last sample learned, over the candidates that learned it.
    last_steps: Option<u64>,
}

/// Everything [`Race::save_state`] writes.
#[derive(Serialize, Deserialize)]
struct RaceState {
    /// The values of the candidates still running, in order.
    values: Vec<f64>,
    losses: Vec<f64>,
    learned: u64,
    trial: u64,
    /// Each candidate's own state.
    states: Vec<Vec<u8>>,
}

/// A state of format [`STATE_VERSION_OF_CORRECT`].
#[derive(Deserialize)]
struct RaceStateOfCorrect {
    values: Vec<f64>,
    correct: Vec<u64>,
    learned: u64,
    trial: u64,
    states: Vec<Vec<u8>>,
}

impl From<RaceStateOfCorrect> for RaceState {
    fn from(old: RaceStateOfCorrect) -> Self {
        let RaceStateOfCorrect { values, correct, learned, trial, states } = old;
        // Exact: the counts are far below 2⁵³.
        let losses = correct.iter().map(|&c| -(c as f64)).collect();
        RaceState { values, losses, learned, trial, states }
    }
}

impl Race {
    /// A race of `candidates` (each with its value of `setting`) over the first `trial`
    /// arrivals; the first candidate leads until another has predicted better.
    ///
    /// # Errors
    /// `InvalidParam` without candidates, or with candidates of which some classify and
    /// some do not.
    pub fn new(
        setting: &'static str,
        candidates: Vec<(f64, Box<dyn OnlineLearner + Send + Sync>)>,
        trial: u64,
    ) -> Result<Self, Error> {
        let classify = candidates.first().map(|(_, c)| c.is_classifier());
        if classify.is_none() || !candidates.iter().all(|(_, c)| Some(c.is_classifier()) == classify) {
            return Err(Error::InvalidParam { name: "candidates" });
        }
        let n = candidates.len();
        Ok(Race {
            setting,
            candidates,
            losses: vec![0.0; n],
            learned: 0,
            trial,
            predictions: vec![None; n],
            predicted: false,
            decisions: Vec::new(),
            last_steps: None,
        })
    }

    /// The candidate of the lowest loss; ties go to the earlier.
    fn leader(&self) -> usize {
        let mut best = 0;
        for (i, &loss) in self.losses.iter().enumerate() {
            if loss < self.losses[best] {
                best = i;
            }
        }
        best
    }

    fn leading(&self) -> &(dyn OnlineLearner + Send + Sync) {
        self.candidates[self.leader()].1.as_ref()
    }

    fn leading_mut(&mut self) -> &mut (dyn OnlineLearner + Send + Sync) {
        let leader = self.leader();
        self.candidates[leader].1.as_mut()
    }

    /// Candidate `at` (an index the caller found among the candidates).
    fn candidate(&mut self, at: usize) -> &mut (dyn OnlineLearner + Send + Sync) {
        self.candidates[at].1.as_mut()
    }

    /// Keeps the leader alone once the trial is over.
    fn settle(&mut self) {
        if self.candidates.len() > 1 && self.learned >= self.trial {
            let leader = self.leader();
            let kept = self.candidates.swap_remove(leader);
            let loss = self.losses[leader];
            self.candidates = vec![kept];
            (self.losses, self.predictions) = (vec![loss], vec![None]);
        }
    }
}

/// The loss of `prediction` for a sample of `label`: 1 for a classifier's wrong one, a
/// regressor's squared error (none predicted: the target's square, as the stream scores
/// it; one that is not a number: the most).
fn loss_of(classify: bool, prediction: Option<f64>, label: f64) -> f64 {
    if classify {
        return f64::from(u8::from(prediction != Some(label)));
    }
    let error = (label - prediction.unwrap_or(0.0)).powi(2);
    if error.is_nan() { f64::INFINITY } else { error }
}

impl Steps for Race {
    fn load(&mut self, record: &Record) -> Result<(), Error> {
        self.predicted = false;
        for (_, candidate) in &mut self.candidates {
            candidate.load(record)?;
        }
        Ok(())
    }

    /// Every candidate's prediction (each is scored when the sample is learned); the
    /// leader's is the race's.
    fn predict_loaded(&mut self) -> Result<Option<f64>, Error> {
        for ((_, candidate), prediction) in self.candidates.iter_mut().zip(&mut self.predictions) {
            *prediction = candidate.predict_loaded()?;
        }
        self.predicted = true;
        let leader = self.leader();
        self.decisions.clear();
        self.decisions.extend_from_slice(self.candidates[leader].1.decisions());
        Ok(self.predictions.get(self.leader()).copied().flatten())
    }

    /// Every candidate learns the sample, after its prediction was scored.
    fn learn_loaded(&mut self, label: f64) -> Result<(), Error> {
        // All or none: the candidates differ only in the raced setting, so a sample one
        // rejects (a label past the classes, a row the scaler refuses) they all reject,
        // the first before any has learned it. (Memory for a new class that one could
        // allocate and a later one not would leave them having learned different samples:
        // the race would go on, its comparison no longer like for like.)
        for (_, candidate) in &mut self.candidates {
            candidate.learn_loaded(label)?;
        }
        if self.predicted {
            let classify = self.is_classifier();
            for (loss, &prediction) in self.losses.iter_mut().zip(&self.predictions) {
                *loss += loss_of(classify, prediction, label);
            }
        }
        self.learned += 1;
        self.predicted = false;
        // The candidates are one learner with different settings: all count steps, or none.
        self.last_steps = self.candidates.iter().map(|(_, candidate)| candidate.last_steps()).sum();
        self.settle();
        Ok(())
    }
}

impl OnlineLearner for Race {
    fn is_classifier(&self) -> bool {
        self.candidates[0].1.is_classifier()
    }

    fn model_mse(&self) -> Option<f64> {
        self.leading().model_mse()
    }

    fn size(&self) -> LearnerSize {
        self.leading().size()
    }

    fn last_steps(&self) -> Option<u64> {
        self.last_steps
    }

    fn decisions(&self) -> &[f64] {
        &self.decisions
    }

    fn class_labels(&self) -> &[f64] {
        self.leading().class_labels()
    }

    fn encode(&mut self) -> Result<Vec<u8>, Error> {
        self.leading_mut().encode()
    }

    fn no_model_yet(&self) -> String {
        self.leading().no_model_yet()
    }

    fn chosen(&self) -> Vec<(&'static str, f64)> {
        vec![(self.setting, self.candidates[self.leader()].0)]
    }

    fn save_state(&self) -> Result<Vec<u8>, StateError> {
        let states = self.candidates.iter().map(|(_, c)| c.save_state()).collect::<Result<_, _>>()?;
        let values = self.candidates.iter().map(|(value, _)| *value).collect();
        let (losses, learned, trial) = (self.losses.clone(), self.learned, self.trial);
        encode_state(STATE_VERSION, &RaceState { values, losses, learned, trial, states })
    }

    /// Restores a race saved during its trial into one built alike, or a settled race
    /// (which keeps the candidate it names).
    fn restore_state(&mut self, bytes: &[u8]) -> Result<(), StateError> {
        let state = match decode_state::<RaceState>(STATE_VERSION, bytes) {
            Err(StateError::Version { found: STATE_VERSION_OF_CORRECT, .. }) => {
                RaceState::from(decode_state::<RaceStateOfCorrect>(STATE_VERSION_OF_CORRECT, bytes)?)
            }
            decoded => decoded?,
        };
        expect_same("trial", state.trial, self.trial)?;
        if state.losses.iter().any(|loss| loss.is_nan()) {
            return Err(StateError::Invalid(Error::NonFinite));
        }
        let lengths = [state.values.len(), state.losses.len(), state.states.len()];
        if lengths.iter().any(|&n| n != lengths[0] || n == 0 || n > self.candidates.len()) {
            return Err(StateError::Mismatch(format!(
                "{} candidates saved, {} configured",
                lengths[0],
                self.candidates.len()
            )));
        }
        // The candidates the state holds, by their values, in its order.
        let mut kept = Vec::with_capacity(state.values.len());
        for &value in &state.values {
            let at = self.candidates.iter().position(|(v, _)| v.to_bits() == value.to_bits());
            kept.push(at.ok_or_else(|| StateError::Mismatch(format!("no candidate of {} {value}", self.setting)))?);
        }
        if kept.iter().enumerate().any(|(i, a)| kept.iter().skip(i + 1).any(|b| a == b)) {
            return Err(StateError::Mismatch("a candidate saved twice".into()));
        }
        // Each kept candidate restored in turn; on an error those restored before it are put
        // back as they were, so a rejected state leaves the race unchanged.
        let backups = kept.iter().map(|&at| self.candidate(at).save_state()).collect::<Result<Vec<_>, _>>()?;
        for (i, (&at, saved)) in kept.iter().zip(&state.states).enumerate() {
            if let Err(e) = self.candidate(at).restore_state(saved) {
                for (&back, backup) in kept.iter().zip(&backups).take(i) {
                    self.candidate(back).restore_state(backup)?;
                }
                return Err(e);
            }
        }
        let mut candidates: Vec<Option<(f64, Box<dyn OnlineLearner + Send + Sync>)>> =
            std::mem::take(&mut self.candidates).into_iter().map(Some).collect();
        self.candidates = kept.iter().filter_map(|&at| candidates.get_mut(at).and_then(Option::take)).collect();
        self.predictions = vec![None; self.candidates.len()];
        (self.losses, self.learned, self.predicted) = (state.losses, state.learned, false);
        self.decisions.clear();
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use kestrel_core::{Kernel, Rng, dcd, slkl};

    use super::*;
    use crate::online::rsvm::tests::xor;
    use crate::online::tests::{prequential, record, restored_learner_continues};
    use crate::online::{RsvmSettings, WindowRsvm, WindowSlkl};

    /// The XOR stream's rsvm at width `gamma`.
    fn rsvm(gamma: f64) -> Box<dyn OnlineLearner + Send + Sync> {
        let settings = RsvmSettings {
            kernel: Kernel::rbf(gamma).unwrap(),
            centres: 30,
            delta: 0.3,
            window: 100,
            params: dcd::Params::new().c(10.0).bias(1.0).check().unwrap(),
            steps: 20,
            seed: 3,
            scale: false,
            memory: None,
            renew: true,
        };
        Box::new(WindowRsvm::new(settings, 2).unwrap())
    }

    /// A race of a width too wide for XOR (about linear: chance) and a fitting one, over
    /// the first `trial` arrivals.
    fn race(trial: u64) -> Race {
        Race::new("gamma", vec![(1e-4, rsvm(1e-4)), (2.0, rsvm(2.0))], trial).unwrap()
    }

    /// The fitting width takes the lead; once the trial is over the race is that learner
    /// alone, prediction for prediction and byte for byte.
    #[test]
    fn the_width_that_predicts_best_goes_on_alone() {
        let records = xor(1200, 1);
        let (mut raced, mut alone, mut wide) = (race(300), rsvm(2.0), rsvm(1e-4));
        for (t, r) in records.iter().enumerate() {
            let (ours, its) = (raced.test_then_train(r).unwrap(), alone.test_then_train(r).unwrap());
            // The work of a sample is every running candidate's.
            let steps = alone.last_steps().unwrap();
            if t < 300 {
                wide.learn(r).unwrap();
                assert_eq!(raced.last_steps(), Some(steps + wide.last_steps().unwrap()), "row {t}");
            } else {
                assert_eq!(ours, its, "row {t}");
                assert_eq!(raced.last_steps(), Some(steps), "row {t}");
            }
        }
        assert_eq!((raced.chosen(), raced.candidates.len()), (vec![("gamma", 2.0)], 1));
        assert_eq!(raced.encode().unwrap(), alone.encode().unwrap());
        assert_eq!(raced.size(), alone.size());
        let late = prequential(&mut race(300), &records, 600).accuracy();
        assert!(late > 0.85, "{late}");
        // Until a candidate predicts better, the first leads.
        assert_eq!(race(300).chosen(), vec![("gamma", 1e-4)]);
        assert!(Race::new("gamma", Vec::new(), 10).is_err());
    }

    /// The decision values the race gives for a sample are those of the candidate whose
    /// prediction it gave, also when learning the sample hands the lead to another.
    #[test]
    fn the_decisions_are_the_predicting_candidate_s() {
        // Two widths close enough on XOR that the lead changes hands after both have
        // models (four times in this stream).
        let records = xor(400, 2);
        let mut raced = Race::new("gamma", vec![(1.5, rsvm(1.5)), (2.0, rsvm(2.0))], 300).unwrap();
        let mut alone = [rsvm(1.5), rsvm(2.0)];
        let mut handovers = 0;
        for (t, r) in records.iter().enumerate() {
            let predicting = usize::from(raced.chosen()[0].1 == 2.0);
            let prediction = raced.test_then_train(r).unwrap();
            let predictions = alone.each_mut().map(|learner| learner.test_then_train(r).unwrap());
            let own = (alone[predicting].decisions(), predictions[predicting]);
            assert_eq!((raced.decisions(), prediction), own, "row {t}");
            let now = usize::from(raced.chosen()[0].1 == 2.0);
            handovers += usize::from(now != predicting && alone[now].decisions() != own.0);
        }
        assert!(handovers > 0, "the lead never changed hands with models: the test would not tell");
    }

    /// The slkl learner of sparsity weight `nu` on one feature.
    fn slkl(nu: f64) -> Box<dyn OnlineLearner + Send + Sync> {
        let params = slkl::Params::new().kernel(Kernel::rbf(2.0).unwrap()).nu(nu).seed(1).check().unwrap();
        Box::new(WindowSlkl::<f64>::new(100, 1, 20, params, 5, false).unwrap())
    }

    /// `n` targets of pure noise beside a feature they do not depend on.
    fn noise(n: usize) -> Vec<Record> {
        let mut rng = Rng::seed_from_u64(5);
        (0..n).map(|_| record(&[rng.uniform_in(-2.0, 2.0)], rng.normal())).collect()
    }

    /// Regressors race by their squared errors: the leader after the trial is the
    /// candidate whose predictions, learning alone, erred least over it — on noise the
    /// largest ν, which fits the noise least — and the race then is that learner, prediction
    /// for prediction and byte for byte. Candidates of which some classify and some do not
    /// are refused.
    #[test]
    fn the_nu_of_the_least_squared_error_goes_on_alone() {
        let (records, nus, trial) = (noise(600), [1e-3, 100.0], 300);
        let mut errors = [0.0; 2];
        for (error, nu) in errors.iter_mut().zip(nus) {
            let mut alone = slkl(nu);
            for r in &records[..trial] {
                *error += (r.label - alone.test_then_train(r).unwrap().unwrap_or(0.0)).powi(2);
            }
        }
        let won = usize::from(errors[1] < errors[0]);
        assert_eq!(won, 1, "on noise the largest ν predicts best: {errors:?}");
        let mut raced = Race::new("nu", nus.iter().map(|&nu| (nu, slkl(nu))).collect(), trial as u64).unwrap();
        assert!(!raced.is_classifier());
        let mut alone = slkl(nus[won]);
        for (t, r) in records.iter().enumerate() {
            let (ours, its) = (raced.test_then_train(r).unwrap(), alone.test_then_train(r).unwrap());
            if t >= trial {
                assert_eq!(ours, its, "row {t}");
            }
        }
        assert_eq!((raced.chosen(), raced.candidates.len()), (vec![("nu", nus[won])], 1));
        assert_eq!((raced.model_mse(), raced.encode().unwrap()), (alone.model_mse(), alone.encode().unwrap()));
        assert!(Race::new("nu", vec![(1e-3, slkl(1e-3)), (2.0, rsvm(2.0))], 10).is_err());
        let race = || Race::new("nu", nus.iter().map(|&nu| (nu, slkl(nu))).collect(), trial as u64).unwrap();
        for split in [50, 299, 301] {
            restored_learner_continues(&mut race(), &mut race(), &records, split);
        }
    }

    /// A state saved when races counted correct predictions (format 1) restores with the
    /// same leader and goes on as the race that saved it; a loss that is not a number is
    /// refused, the race unchanged.
    #[test]
    fn a_state_of_correct_counts_restores() {
        let (records, split) = (xor(500, 2), 120);
        let mut saved = race(300);
        prequential(&mut saved, &records[..split], 0);
        let state: RaceState = decode_state(STATE_VERSION, &saved.save_state().unwrap()).unwrap();
        // Every sample was predicted: a candidate's correct predictions are the samples
        // less its wrong ones.
        let correct: Vec<u64> = state.losses.iter().map(|&wrong| split as u64 - wrong as u64).collect();
        assert_ne!(correct[0], correct[1], "the candidates are tied: the test would not tell");
        let old = (&state.values, correct, state.learned, state.trial, &state.states);
        let mut restored = race(300);
        restored.restore_state(&encode_state(STATE_VERSION_OF_CORRECT, &old).unwrap()).unwrap();
        assert_eq!(restored.chosen(), saved.chosen());
        let rest = &records[split..];
        assert_eq!(prequential(&mut restored, rest, 0), prequential(&mut saved, rest, 0));
        assert_eq!(restored.encode().unwrap(), saved.encode().unwrap());
        let mut fresh = race(300);
        let before = fresh.save_state().unwrap();
        let not_a_number = RaceState { losses: vec![f64::NAN, 0.0], ..state };
        let e = fresh.restore_state(&encode_state(STATE_VERSION, &not_a_number).unwrap()).unwrap_err();
        assert!(matches!(e, StateError::Invalid(Error::NonFinite)), "{e}");
        assert_eq!(fresh.save_state().unwrap(), before);
    }

    /// A race resumes bit for bit during its trial and after it (a settled state restores
    /// into a race built anew); a state of other candidates is refused, the race unchanged.
    #[test]
    fn a_race_resumes_exactly_and_refuses_other_candidates() {
        let records = xor(800, 2);
        for split in [50, 299, 301, 600] {
            restored_learner_continues(&mut race(300), &mut race(300), &records, split);
        }
        let mut other = Race::new("gamma", vec![(1e-4, rsvm(1e-4)), (3.0, rsvm(3.0))], 300).unwrap();
        prequential(&mut other, &records[..100], 0);
        let mut fresh = race(300);
        prequential(&mut fresh, &records[..20], 0);
        let before = fresh.save_state().unwrap();
        let e = fresh.restore_state(&other.save_state().unwrap()).unwrap_err();
        assert_eq!(e.to_string(), "learner state is for another configuration: no candidate of gamma 3");
        assert_eq!(fresh.save_state().unwrap(), before);
        let e = race(200).restore_state(&before).unwrap_err();
        assert_eq!(e.to_string(), "learner state is for another configuration: trial 300 saved, 200 configured");
    }
}
