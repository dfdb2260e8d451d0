//! [`ClassProbabilities`]: class probabilities for the stream classifiers, from their
//! decision values by Platt's sigmoid fitted online.
//!
//! Platt's sigmoid `P(class | f) = σ(a·f + b)` of a decision value `f`, fitted online to
//! the values each sample had before it was learned: one Newton step a sample, the targets
//! smoothed by the classes' counts ([`kestrel_core::calibration::OnlineSigmoid`], whose
//! module doc states the steps). Two classes share one sigmoid on the classifier's one
//! decision value (its first class's side positive); beyond two, each class has its own on
//! its one-vs-rest value, and the probabilities are normalised to sum to 1, as scikit-learn's
//! calibration of one-vs-rest classifiers does. When the third class appears, the first
//! two classes' sigmoids start from the binary one (the second's mirrored, as its SVM is).
//! Before a classifier has decision values (a warm-up), the probabilities are the classes'
//! frequencies so far, each count plus one (Laplace).
//!
//! Memory: five `f64` per sigmoid and a count per class.

use kestrel_core::calibration::{self, Sigmoid};
use serde::{Deserialize, Serialize};

use super::OnlineLearner;
use crate::limits::MAX_CLASSES;

/// A class's sigmoid, fitted online.
type OnlineSigmoid = calibration::OnlineSigmoid<f64>;

/// Class probabilities of a stream classifier (module doc), learned from the decision
/// values it gave each sample before learning it.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "Parts")]
pub struct ClassProbabilities {
    /// One sigmoid for two classes, one per class beyond.
    sigmoids: Vec<OnlineSigmoid>,
    /// The samples of each class learned.
    counts: Vec<u64>,
}

/// A [`ClassProbabilities`] as decoded, checked before it becomes one.
#[derive(Deserialize)]
struct Parts {
    sigmoids: Vec<OnlineSigmoid>,
    counts: Vec<u64>,
}

impl TryFrom<Parts> for ClassProbabilities {
    type Error = String;

    /// The probabilities, when their classes are at most [`MAX_CLASSES`] and their
    /// sigmoids finite.
    fn try_from(parts: Parts) -> Result<Self, String> {
        let Parts { sigmoids, counts } = parts;
        let finite = sigmoids.iter().all(OnlineSigmoid::is_finite);
        if sigmoids.len() > MAX_CLASSES || counts.len() > MAX_CLASSES || !finite {
            return Err(format!("{} sigmoids of {} classes, or one not finite", sigmoids.len(), counts.len()));
        }
        Ok(ClassProbabilities { sigmoids, counts })
    }
}

impl ClassProbabilities {
    /// Bytes the probabilities of a classifier of up to `classes` classes hold: a sigmoid
    /// for two classes (one per class beyond) and a count per class.
    pub fn bytes(classes: usize) -> usize {
        let sigmoids = if classes > 2 { classes } else { 1 };
        sigmoids.saturating_mul(size_of::<OnlineSigmoid>()).saturating_add(classes.saturating_mul(size_of::<u64>()))
    }

    /// Learns from a sample of class `class` (its index among the classifier's classes)
    /// to which the classifier gave `decisions` before learning it
    /// ([`OnlineLearner::decisions`](super::OnlineLearner::decisions)). A class index
    /// past [`MAX_CLASSES`] is not counted.
    pub fn learn(&mut self, decisions: &[f64], class: usize) {
        if class >= MAX_CLASSES {
            return;
        }
        if self.counts.len() <= class {
            self.counts.resize(class + 1, 0);
        }
        if let Some(count) = self.counts.get_mut(class) {
            *count = count.saturating_add(1);
        }
        if decisions.is_empty() {
            return;
        }
        self.shape_for(decisions.len());
        let total: u64 = self.counts.iter().sum();
        let binary = decisions.len() == 1;
        for (j, (sigmoid, &f)) in self.sigmoids.iter_mut().zip(decisions).enumerate() {
            let positives = self.counts.get(j).copied().unwrap_or(0);
            let negatives = if binary { self.counts.get(1).copied().unwrap_or(0) } else { total - positives };
            sigmoid.learn(f, calibration::target(class == j, positives, negatives));
        }
    }

    /// What `kestrel stream` does with a sample of `label` that `learner` has just
    /// predicted and learned, when it had `classes` classes before it: writes the
    /// probabilities it gave the sample (of those classes, in its order) into `out`, learns
    /// from the sample, and returns the probability it gave the sample's own class (0 for a
    /// class new to it, which it could not have given any).
    pub fn score_and_learn(
        &mut self,
        learner: &dyn OnlineLearner,
        classes: usize,
        label: f64,
        out: &mut Vec<f64>,
    ) -> f64 {
        let (decisions, labels) = (learner.decisions(), learner.class_labels());
        self.probabilities(decisions, classes, out);
        let own = labels.iter().take(classes).position(|&l| l == label).and_then(|k| out.get(k));
        let own = own.copied().unwrap_or(0.0);
        self.learned(learner, label);
        own
    }

    /// Learns from a sample of `label` that `learner` has just predicted and learned (its
    /// decision values those it gave the sample; a label none of its classes is not).
    pub fn learned(&mut self, learner: &dyn OnlineLearner, label: f64) {
        if let Some(class) = learner.class_labels().iter().position(|&l| l == label) {
            self.learn(learner.decisions(), class);
        }
    }

    /// The sigmoids of a model file's class probabilities (`kestrel_core::calibration`,
    /// one per output of the model, in its order) from these, learned with a classifier of
    /// `learner_labels` whose model file has `model_labels`: the model's outputs are the
    /// learner's decision values, but for two classes the model's value is ≥ 0 for its
    /// second label where the learner's is for its first class (the same class as a rule:
    /// a model lists its two labels the other way round). `None` while there are none to
    /// give (a warm-up, a class the sigmoids have not met).
    pub fn model_sigmoids(&self, learner_labels: &[f64], model_labels: &[f64]) -> Option<Vec<Sigmoid>> {
        let at = |label: f64| learner_labels.iter().position(|&l| l == label);
        match (self.sigmoids.as_slice(), model_labels) {
            ([binary], [first, second]) if at(*second) == Some(0) && at(*first) == Some(1) => {
                Some(vec![binary.sigmoid()])
            }
            ([binary], [first, second]) if at(*first) == Some(0) && at(*second) == Some(1) => {
                Some(vec![binary.mirrored().sigmoid()])
            }
            (sigmoids, labels) if labels.len() > 2 && sigmoids.len() == labels.len() => {
                labels.iter().map(|&label| Some(sigmoids.get(at(label)?)?.sigmoid())).collect()
            }
            _ => None,
        }
    }

    /// `learner`'s model file ([`OnlineLearner::model_file`]) with the class probabilities
    /// these give it ([`model_sigmoids`](Self::model_sigmoids)), when there are any: what
    /// `kestrel stream --out` writes, so that `kestrel predict --probabilities` and a device
    /// give the probabilities the stream gave.
    ///
    /// # Errors
    /// The learner's own (no model yet), or its file's that does not load.
    pub fn model_file(&self, learner: &mut dyn OnlineLearner) -> Result<Vec<u8>, String> {
        let bytes = learner.model_file()?;
        if !learner.is_classifier() {
            return Ok(bytes);
        }
        let model_labels = crate::model::load(&bytes).map_err(|e| e.to_string())?.labels();
        match self.model_sigmoids(learner.class_labels(), &model_labels) {
            Some(sigmoids) => crate::model::with_calibration(bytes, &sigmoids).map_err(|e| e.to_string()),
            None => Ok(bytes),
        }
    }

    /// Sigmoids for `len` decision values: as they are, the binary one spread over the
    /// first two classes when the third appears, or new ones.
    fn shape_for(&mut self, len: usize) {
        if self.sigmoids.len() == len {
            return;
        }
        let binary = self.sigmoids.first().copied().filter(|_| self.sigmoids.len() == 1 && len > 2);
        self.sigmoids = vec![OnlineSigmoid::default(); len.min(MAX_CLASSES)];
        if let (Some(binary), [first, second, ..]) = (binary, self.sigmoids.as_mut_slice()) {
            (*first, *second) = (binary, binary.mirrored());
        }
    }

    /// The probabilities of a classifier's `classes` classes (in its order) for a sample
    /// given `decisions` ([`learn`](Self::learn)), into `out` (cleared): the classes'
    /// smoothed frequencies without decision values, 1 for a lone class.
    pub fn probabilities(&self, decisions: &[f64], classes: usize, out: &mut Vec<f64>) {
        out.clear();
        let sigmoid = |j: usize| match self.sigmoids.len() == decisions.len() {
            true => self.sigmoids.get(j).copied().unwrap_or_default(),
            false => OnlineSigmoid::default(),
        };
        match (classes, decisions) {
            (0, _) => {}
            (1, _) => out.push(1.0),
            (_, []) => {
                let count = |c: usize| self.counts.get(c).copied().unwrap_or(0) as f64 + 1.0;
                let total: f64 = (0..classes).map(count).sum();
                out.extend((0..classes).map(|c| count(c) / total));
            }
            (2, [f]) => {
                let p = sigmoid(0).probability(*f);
                out.extend([p, 1.0 - p]);
            }
            _ => {
                out.extend(decisions.iter().enumerate().map(|(j, &f)| sigmoid(j).probability(f)));
                out.resize(classes, 0.0);
                let sum: f64 = out.iter().sum();
                match sum > 0.0 {
                    true => out.iter_mut().for_each(|p| *p /= sum),
                    false => out.iter_mut().for_each(|p| *p = 1.0 / classes as f64),
                }
            }
        }
    }

    /// The probabilities' state, postcard-encoded.
    ///
    /// # Errors
    /// Only if serialization fails, which it does not for these types.
    pub fn to_bytes(&self) -> Result<Vec<u8>, postcard::Error> {
        postcard::to_stdvec(self)
    }

    /// The state [`to_bytes`](Self::to_bytes) encoded.
    ///
    /// # Errors
    /// Bytes that do not decode, or state past the limits.
    pub fn from_bytes(bytes: &[u8]) -> Result<Self, postcard::Error> {
        postcard::from_bytes(bytes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A Newton fit of `σ(a·f + b)` to every pair at once (the batch maximum likelihood,
    /// no forgetting, no prior): the reference the online steps approach.
    fn batch_fit(pairs: &[(f64, f64)]) -> (f64, f64) {
        let (mut a, mut b) = (1.0, 0.0);
        for _ in 0..100 {
            let (mut g, mut h) = ([0.0; 2], [0.0; 3]);
            for &(f, t) in pairs {
                let p = Sigmoid { a, b }.probability(f);
                let w = p * (1.0 - p);
                g = [g[0] + (p - t) * f, g[1] + (p - t)];
                h = [h[0] + w * f * f, h[1] + w * f, h[2] + w];
            }
            let det = h[0] * h[2] - h[1] * h[1];
            a -= (h[2] * g[0] - h[1] * g[1]) / det;
            b -= (h[0] * g[1] - h[1] * g[0]) / det;
        }
        (a, b)
    }

    /// Decision values whose classes follow `P(class 0 | f) = σ(2f − 0.5)`.
    fn stream(n: usize) -> Vec<(f64, usize)> {
        let mut rng = kestrel_core::Rng::seed_from_u64(7);
        let truth = Sigmoid { a: 2.0, b: -0.5 };
        (0..n)
            .map(|_| {
                let f = 3.0 * rng.uniform::<f64>() - 1.5;
                (f, usize::from(rng.uniform::<f64>() >= truth.probability(f)))
            })
            .collect()
    }

    #[test]
    fn the_online_fit_comes_near_the_batch_one() {
        let samples = stream(3000);
        let mut probabilities = ClassProbabilities::default();
        for &(f, class) in &samples {
            probabilities.learn(&[f], class);
        }
        let pairs: Vec<(f64, f64)> = samples.iter().map(|&(f, class)| (f, f64::from(u8::from(class == 0)))).collect();
        let (a, b) = batch_fit(&pairs);
        let online = probabilities.sigmoids[0].sigmoid();
        assert!((online.a - a).abs() < 0.1 && (online.b - b).abs() < 0.1, "{online:?} against {a}, {b}");
        assert!((a - 2.0).abs() < 0.3 && (b + 0.5).abs() < 0.2, "the batch fit {a}, {b}");
        let mut out = Vec::new();
        probabilities.probabilities(&[0.25], 2, &mut out);
        let truth = Sigmoid { a: 2.0, b: -0.5 }.probability(0.25);
        assert!((out[0] - truth).abs() < 0.05 && (out[0] + out[1] - 1.0).abs() < 1e-12, "{out:?}");
    }

    #[test]
    fn frequencies_before_decision_values_and_normalised_one_vs_rest() {
        let mut probabilities = ClassProbabilities::default();
        let mut out = Vec::new();
        probabilities.probabilities(&[], 0, &mut out);
        assert!(out.is_empty());
        for class in [0, 0, 1] {
            probabilities.learn(&[], class);
        }
        probabilities.probabilities(&[], 2, &mut out);
        assert_eq!(out, [3.0 / 5.0, 2.0 / 5.0]);
        probabilities.probabilities(&[0.3], 1, &mut out);
        assert_eq!(out, [1.0]);
        // The binary sigmoid, then a third class: the first two start from it.
        probabilities.learn(&[1.0], 0);
        let binary = probabilities.sigmoids[0];
        probabilities.learn(&[0.5, -0.5, -1.0], 2);
        assert_eq!(probabilities.sigmoids.len(), 3);
        probabilities.probabilities(&[2.0, -1.0, -3.0], 3, &mut out);
        assert!((out.iter().sum::<f64>() - 1.0).abs() < 1e-12 && out[0] > out[1] && out[1] > out[2], "{out:?}");
        assert_ne!(probabilities.sigmoids[0], binary, "learned on");
        // Values far out stay finite.
        probabilities.learn(&[1e300, -1e300, f64::MAX], 1);
        probabilities.probabilities(&[1e300, -1e300, 0.0], 3, &mut out);
        assert!(out.iter().all(|p| p.is_finite() && (0.0..=1.0).contains(p)), "{out:?}");
    }

    #[test]
    fn model_sigmoids_follow_the_model_s_labels() {
        let mut probabilities = ClassProbabilities::default();
        assert_eq!(probabilities.model_sigmoids(&[], &[]), None, "no sigmoid yet");
        probabilities.learn(&[0.5], 0);
        probabilities.learn(&[-0.5], 1);
        let binary = probabilities.sigmoids[0];
        // A model lists a binary learner's labels the other way round: the same sigmoid.
        assert_eq!(probabilities.model_sigmoids(&[-2.0, 5.0], &[5.0, -2.0]), Some(vec![binary.sigmoid()]));
        assert_eq!(probabilities.model_sigmoids(&[-2.0, 5.0], &[-2.0, 5.0]), Some(vec![binary.mirrored().sigmoid()]));
        assert_eq!(probabilities.model_sigmoids(&[-2.0, 5.0], &[5.0, 7.0]), None);
        probabilities.learn(&[0.1, 0.2, -0.3], 2);
        let three: Vec<Sigmoid> = probabilities.sigmoids.iter().map(OnlineSigmoid::sigmoid).collect();
        let permuted = probabilities.model_sigmoids(&[2.0, 0.0, 1.0], &[0.0, 1.0, 2.0]).unwrap();
        assert_eq!(permuted, [three[1], three[2], three[0]]);
        assert_eq!(probabilities.model_sigmoids(&[2.0, 0.0, 1.0], &[0.0, 1.0, 3.0]), None);
        assert_eq!(probabilities.model_sigmoids(&[2.0, 0.0, 1.0], &[0.0, 1.0]), None);
    }

    /// The model file `kestrel stream --out` writes gives the probabilities the stream's
    /// learner and sigmoids give, for two classes and three, svm and rsvm.
    #[test]
    fn the_model_file_gives_the_stream_s_probabilities() {
        use crate::online::build::{StreamLearner, StreamSettings, build};
        use crate::source::Record;
        for (kind, classes) in [(StreamLearner::Svm, 2), (StreamLearner::Rsvm, 2), (StreamLearner::Rsvm, 3)] {
            let mut learner = build::<f64>(&StreamSettings::new(kind), 2).unwrap();
            let (mut probabilities, mut out) = (ClassProbabilities::default(), Vec::new());
            let mut rows = Vec::new();
            for i in 0..400usize {
                let (a, b) = ((i * 37 % 101) as f64 / 50.0 - 1.0, (i * 53 % 97) as f64 / 48.0 - 1.0);
                let label = match classes {
                    2 => [-2.0, 5.0][usize::from(a + b > 0.0)],
                    _ => [2.0, 0.0, 1.0][usize::from(a > 0.0) + usize::from(b > 0.3)],
                };
                let record = Record { label, indices: vec![0, 1], values: vec![a, b], ..Record::default() };
                let known = learner.class_labels().len();
                learner.test_then_train(&record).unwrap();
                probabilities.score_and_learn(learner.as_ref(), known, label, &mut out);
                rows.push(record);
            }
            let bytes = probabilities.model_file(learner.as_mut()).unwrap();
            let mut model = crate::model::load(&bytes).unwrap();
            assert!(model.info().probabilities, "{kind:?}");
            let model_labels = model.labels();
            for record in rows.iter().step_by(37) {
                learner.predict(record).unwrap();
                probabilities.probabilities(learner.decisions(), classes, &mut out);
                let from_file = model.probabilities(record).unwrap().unwrap();
                for (k, label) in model_labels.iter().enumerate() {
                    let j = learner.class_labels().iter().position(|l| l == label).unwrap();
                    assert!((from_file[k] - out[j]).abs() < 1e-9, "{kind:?}: {from_file:?} against {out:?}");
                }
            }
        }
    }

    #[test]
    fn the_state_round_trips_and_bad_state_is_refused() {
        let mut probabilities = ClassProbabilities::default();
        for (f, class) in stream(50) {
            probabilities.learn(&[f], class);
        }
        let bytes = probabilities.to_bytes().unwrap();
        assert_eq!(ClassProbabilities::from_bytes(&bytes).unwrap(), probabilities);
        // A sigmoid is its a, b and curvature in turn.
        let nan = (f64::NAN, 0.0, [1.0, 0.0, 1.0]);
        let bad = postcard::to_stdvec(&(vec![nan], vec![1u64, 2])).unwrap();
        assert!(ClassProbabilities::from_bytes(&bad).is_err());
        let many = postcard::to_stdvec(&(Vec::<OnlineSigmoid>::new(), vec![0u64; MAX_CLASSES + 1])).unwrap();
        assert!(ClassProbabilities::from_bytes(&many).is_err());
        assert!(ClassProbabilities::from_bytes(&[0xff; 3]).is_err());
    }
}
