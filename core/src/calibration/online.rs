//! Platt's sigmoid fitted on a stream: [`OnlineSigmoid`], one Newton step per sample, and
//! [`BinaryProbability`], a binary classifier's with its classes' counts.
//!
//! On a stream every sample is predicted before it is learned, so the decision value `f` a
//! classifier gave a sample and the sample's class are a pair the classifier had not learned
//! from — what Platt's fit asks for (module [`super`]). Instead of refitting on all pairs,
//! each pair takes one Newton step on the log loss (the online Newton step):
//!
//! ```text
//! g = (σ(a·f + b) − t)·(f, 1)
//! H ← ρ·H + σ(1 − σ)·(f, 1)(f, 1)ᵀ
//! (a, b) ← (a, b) − (H + εI)⁻¹·g
//! ```
//!
//! with `t` Platt's smoothed target for the class ([`target`]: `(N₊ + 1)/(N₊ + 2)` for a
//! sample of it, `1/(N₋ + 2)` for one of the others, the counts so far). `H` is the log
//! loss's curvature summed over the samples, a sample `k` arrivals old weighed `ρᵏ`
//! (`ρ = 1 − 1/1000`: the fit follows a stream that drifts over a thousand
//! samples or more), starting from the identity (a prior of a few samples' weight at
//! `a = 1, b = 0`, the decision value taken as the log-odds). A step whose curvature is not
//! positive definite, or whose result is not finite, is not taken.
//!
//! Memory: five scalars a sigmoid; [`BinaryProbability`] two counts more. Time: one
//! exponential and about twenty operations a sample. Nothing allocates.

use serde::{Deserialize, Serialize};

use super::{Sigmoid, logistic};
use crate::Real;

/// The weight `ρ` of the curvature of the samples before each new one.
const FORGETTING: f64 = 1.0 - 1.0 / 1000.0;
/// Added to the curvature's diagonal before it is inverted.
const RIDGE: f64 = 1e-9;

/// Platt's smoothed target of a sample for one class's sigmoid: `(N₊ + 1)/(N₊ + 2)` when the
/// sample is of the class (`own`), `1/(N₋ + 2)` when not, for `positives` samples of the
/// class and `negatives` of the others.
#[allow(clippy::cast_precision_loss, reason = "counts of samples")]
pub fn target(own: bool, positives: u64, negatives: u64) -> f64 {
    match own {
        true => (positives as f64 + 1.0) / (positives as f64 + 2.0),
        false => 1.0 / (negatives as f64 + 2.0),
    }
}

/// One class's sigmoid `σ(a·f + b)` fitted online (module doc), in `T`, and the curvature
/// `H` of its log loss (`[Hₐₐ, Hₐᵦ, Hᵦᵦ]`).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct OnlineSigmoid<T> {
    a: T,
    b: T,
    curvature: [T; 3],
}

impl<T: Real> Default for OnlineSigmoid<T> {
    /// `σ(f)` with the identity's curvature (module doc).
    fn default() -> Self {
        OnlineSigmoid { a: T::ONE, b: T::ZERO, curvature: [T::ONE, T::ZERO, T::ONE] }
    }
}

impl<T: Real> OnlineSigmoid<T> {
    /// `σ(a·f + b)`.
    pub fn probability(&self, f: T) -> T {
        logistic(self.a * f + self.b)
    }

    /// The sigmoid as a model file keeps it ([`Sigmoid`], in `f64`).
    pub fn sigmoid(&self) -> Sigmoid {
        Sigmoid { a: self.a.to_f64(), b: self.b.to_f64() }
    }

    /// The sigmoid of the decision value `−f`: the mirror of this one, for the other class
    /// of the same binary classifier.
    #[must_use]
    pub fn mirrored(self) -> Self {
        let [aa, ab, bb] = self.curvature;
        OnlineSigmoid { a: self.a, b: -self.b, curvature: [aa, -ab, bb] }
    }

    /// Whether its coefficients and curvature are all finite (a decoded one may not be).
    pub fn is_finite(&self) -> bool {
        [self.a, self.b].iter().chain(&self.curvature).all(|v| v.is_finite())
    }

    /// One Newton step towards the target `t` ([`target`]) for the decision value `f`;
    /// nothing changes for an `f` that is not finite or a step that would not be.
    pub fn learn(&mut self, f: T, t: T) {
        let (forgetting, ridge) = (T::from_f64(FORGETTING), T::from_f64(RIDGE));
        let p = self.probability(f);
        let (gradient_a, gradient_b) = ((p - t) * f, p - t);
        let weight = p * (T::ONE - p);
        let [aa, ab, bb] = self.curvature;
        let [aa, ab, bb] = [forgetting * aa + weight * f * f, forgetting * ab + weight * f, forgetting * bb + weight];
        let det = (aa + ridge) * (bb + ridge) - ab * ab;
        if !(det > T::ZERO && det.is_finite() && f.is_finite()) {
            return;
        }
        let step_a = ((bb + ridge) * gradient_a - ab * gradient_b) / det;
        let step_b = ((aa + ridge) * gradient_b - ab * gradient_a) / det;
        let next = OnlineSigmoid { a: self.a - step_a, b: self.b - step_b, curvature: [aa, ab, bb] };
        if next.a.is_finite() && next.b.is_finite() {
            *self = next;
        }
    }
}

/// The probability of a binary classifier's positive class, learned on a stream from the
/// decision value it gave each sample before learning it: an [`OnlineSigmoid`] on the
/// value (positive side: the positive class) and the classes' counts for its targets.
///
/// # Examples
/// ```
/// use kestrel_core::calibration::BinaryProbability;
/// let mut probability = BinaryProbability::<f32>::default();
/// // A classifier whose values are about twice the log-odds of its classes.
/// for k in 0..2000 {
///     let f = (k % 41) as f32 / 10.0 - 2.0;
///     let positive = (k * 7919 % 1000) as f32 / 1000.0 < 1.0 / (1.0 + (-f / 2.0).exp());
///     probability.learn(f, positive);
/// }
/// let p = probability.probability(2.0);
/// assert!((p - 0.73).abs() < 0.1, "{p}");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct BinaryProbability<T> {
    sigmoid: OnlineSigmoid<T>,
    /// Samples learned of the negative and of the positive class.
    counts: [u64; 2],
}

impl<T: Real> Default for BinaryProbability<T> {
    fn default() -> Self {
        BinaryProbability { sigmoid: OnlineSigmoid::default(), counts: [0, 0] }
    }
}

impl<T: Real> BinaryProbability<T> {
    /// Learns from a sample of the positive class or not to which the classifier gave the
    /// decision value `f` before learning it.
    pub fn learn(&mut self, f: T, positive: bool) {
        let [negatives, positives] = &mut self.counts;
        let own = if positive { &mut *positives } else { &mut *negatives };
        *own = own.saturating_add(1);
        let t = target(positive, *positives, *negatives);
        self.sigmoid.learn(f, T::from_f64(t));
    }

    /// The probability of the positive class for the decision value `f`.
    pub fn probability(&self, f: T) -> T {
        self.sigmoid.probability(f)
    }

    /// The sigmoid a model file keeps (its positive side the positive class), once both
    /// classes were learned: `None` before.
    pub fn sigmoid(&self) -> Option<Sigmoid> {
        (self.counts[0] > 0 && self.counts[1] > 0).then(|| self.sigmoid.sigmoid())
    }

    /// Whether it is finite throughout (a decoded one may not be).
    pub fn is_finite(&self) -> bool {
        self.sigmoid.is_finite()
    }

    /// The samples it learned of the negative and of the positive class.
    pub fn counts(&self) -> [u64; 2] {
        self.counts
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Rng;

    /// A stream of decision values uniform in [−3, 3] whose class follows `σ(2f − 0.5)`.
    fn stream(n: usize, seed: u64) -> impl Iterator<Item = (f64, bool)> {
        let mut rng = Rng::seed_from_u64(seed);
        let truth = Sigmoid { a: 2.0, b: -0.5 };
        (0..n).map(move |_| {
            let f = rng.uniform_in(-3.0, 3.0);
            (f, rng.uniform::<f64>() < truth.probability(f))
        })
    }

    /// On a stationary stream the online steps come near the batch fit of the same pairs
    /// (Lin, Lin & Weng's Newton method to convergence), in `f64` and `f32`.
    #[test]
    fn the_online_fit_comes_near_the_batch_one() {
        let pairs: [(f64, bool); 3000] = {
            let mut pairs = [(0.0, false); 3000];
            stream(3000, 1).zip(&mut pairs).for_each(|(pair, slot)| *slot = pair);
            pairs
        };
        let batch = Sigmoid::fit(pairs.len(), |i| pairs[i]).unwrap();
        let (mut wide, mut narrow) = (BinaryProbability::<f64>::default(), BinaryProbability::<f32>::default());
        for &(f, class) in &pairs {
            wide.learn(f, class);
            narrow.learn(f as f32, class);
        }
        for online in [wide.sigmoid().unwrap(), narrow.sigmoid().unwrap()] {
            assert!((online.a - batch.a).abs() < 0.15 && (online.b - batch.b).abs() < 0.15, "{online:?} vs {batch:?}");
        }
        assert!((wide.probability(1.0) - f64::from(narrow.probability(1.0))).abs() < 1e-3);
    }

    /// The targets smooth the classes' counts; a sigmoid is given once both were learned.
    #[test]
    fn targets_and_the_sigmoid_once_both_classes_were_seen() {
        assert_eq!((target(true, 0, 5), target(false, 5, 0), target(true, 8, 2)), (0.5, 0.5, 0.9));
        let mut probability = BinaryProbability::<f64>::default();
        assert_eq!(probability.probability(0.0), 0.5);
        probability.learn(1.0, true);
        assert_eq!((probability.sigmoid(), probability.counts()), (None, [0, 1]));
        probability.learn(-1.0, false);
        assert!(probability.sigmoid().is_some() && probability.counts() == [1, 1]);
    }

    /// A value that is not finite teaches nothing, and the mirror gives the other class's
    /// probability.
    #[test]
    fn non_finite_values_change_nothing_and_the_mirror_is_the_complement() {
        let mut sigmoid = OnlineSigmoid::<f64>::default();
        stream(200, 2).for_each(|(f, class)| sigmoid.learn(f, if class { 0.9 } else { 0.1 }));
        let before = sigmoid;
        for f in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
            sigmoid.learn(f, 0.9);
        }
        assert_eq!(sigmoid, before);
        assert!(sigmoid.is_finite());
        let mirrored = sigmoid.mirrored();
        for f in [-2.0, 0.0, 1.5] {
            assert!((mirrored.probability(-f) - (1.0 - sigmoid.probability(f))).abs() < 1e-12);
        }
    }
}
