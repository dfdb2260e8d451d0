//! A race of learners that differ in one setting, for a stream that cannot choose it from a
//! data set beforehand (`kestrel stream --learner rsvm` without `--gamma`: the widths
//! `1/d`, `1/(4d)` and `4/d`; `--learner svm` without `--c`: the costs 1, 0.1 and 0.01).
//!
//! For the first `T` arrivals (the trial) every candidate predicts and learns every
//! sample, and each prediction is scored as the stream scores it (prequentially: before
//! the sample is learned). The stream's prediction is the leader's: the candidate with
//! the most correct predictions so far, ties going to the earlier candidate (the first is
//! the setting the learner has without a race). When the trial ends the leader stays, with
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
const STATE_VERSION: u16 = 1;

/// A learner among candidates, each with the value of the raced setting it was built with.
pub struct Race {
    /// The setting's name (`gamma`, `c`).
    setting: &'static str,
    /// The candidates still running, each with its value of the setting.
    candidates: Vec<(f64, Box<dyn OnlineLearner + Send + Sync>)>,
    /// Correct predictions of each candidate so far.
    correct: Vec<u64>,
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
    correct: Vec<u64>,
    learned: u64,
    trial: u64,
    /// Each candidate's own state.
    states: Vec<Vec<u8>>,
}

impl Race {
    /// A race of `candidates` (each with its value of `setting`) over the first `trial`
    /// arrivals; the first candidate leads until another has predicted better.
    ///
    /// # Errors
    /// `InvalidParam` without candidates, or with candidates that do not all classify.
    pub fn new(
        setting: &'static str,
        candidates: Vec<(f64, Box<dyn OnlineLearner + Send + Sync>)>,
        trial: u64,
    ) -> Result<Self, Error> {
        if candidates.is_empty() || !candidates.iter().all(|(_, c)| c.is_classifier()) {
            return Err(Error::InvalidParam { name: "candidates" });
        }
        let n = candidates.len();
        Ok(Race {
            setting,
            candidates,
            correct: vec![0; n],
            learned: 0,
            trial,
            predictions: vec![None; n],
            predicted: false,
            decisions: Vec::new(),
            last_steps: None,
        })
    }

    /// The candidate with the most correct predictions; ties go to the earlier.
    fn leader(&self) -> usize {
        let mut best = 0;
        for (i, &correct) in self.correct.iter().enumerate() {
            if correct > self.correct[best] {
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
            let correct = self.correct[leader];
            self.candidates = vec![kept];
            (self.correct, self.predictions) = (vec![correct], vec![None]);
        }
    }
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
            for (correct, prediction) in self.correct.iter_mut().zip(&self.predictions) {
                *correct += u64::from(*prediction == Some(label));
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
        true
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
        let (correct, learned, trial) = (self.correct.clone(), self.learned, self.trial);
        encode_state(STATE_VERSION, &RaceState { values, correct, learned, trial, states })
    }

    /// Restores a race saved during its trial into one built alike, or a settled race
    /// (which keeps the candidate it names).
    fn restore_state(&mut self, bytes: &[u8]) -> Result<(), StateError> {
        let state: RaceState = decode_state(STATE_VERSION, bytes)?;
        expect_same("trial", state.trial, self.trial)?;
        let lengths = [state.values.len(), state.correct.len(), state.states.len()];
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
        (self.correct, self.learned, self.predicted) = (state.correct, state.learned, false);
        self.decisions.clear();
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use kestrel_core::{Kernel, dcd};

    use super::*;
    use crate::online::rsvm::tests::xor;
    use crate::online::tests::{prequential, restored_learner_continues};
    use crate::online::{RsvmSettings, WindowRsvm};

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
