//! Class probabilities from a classifier's decision values: Platt's sigmoid.
//!
//! Platt (1999, "Probabilistic outputs for support vector machines and comparisons to
//! regularized likelihood methods") maps a decision value `f` to
//!
//! ```text
//! P(class | f) = σ(a·f + b),   σ(z) = 1/(1 + e^{−z}),
//! ```
//!
//! `(a, b)` fitted by maximum likelihood to decision values the classifier did not learn
//! from (held out by cross-validation), with the targets smoothed against overconfidence:
//! `t₊ = (N₊ + 1)/(N₊ + 2)` for the `N₊` rows of the class, `t₋ = 1/(N₋ + 2)` for the
//! `N₋` others. [`Sigmoid::fit`] minimises that log loss by Newton's method with a
//! backtracking line search, as Lin, Lin & Weng (2007, "A note on Platt's probabilistic
//! outputs for support vector machines", Algorithm 1) write it and LIBSVM's `-b 1` runs
//! it: start at `a = 0, b = ln((N₊ + 1)/(N₋ + 1))`, a step accepted when it lowers the
//! loss by at least `10⁻⁴·step·(g·d)`, stopped when both gradients are below `10⁻⁵` (or
//! after 100 iterations, or a step below `10⁻¹⁰`). Their sigmoid is
//! `1/(1 + exp(A·f + B))`; here `a = −A`, `b = −B`, so that `a > 0` when larger values
//! mean the class.
//!
//! [`probabilities`] of a classifier's outputs: two classes share one sigmoid on its one
//! decision value, whose positive side is the second class (as a binary model predicts
//! it: `labels[1]` when `f ≥ 0`); beyond two, each class has its own sigmoid on its
//! one-vs-rest value and the probabilities are normalised to sum to 1 (as scikit-learn's
//! calibration of one-vs-rest classifiers does).
//!
//! A learner on a stream fits its sigmoids online instead, one Newton step a sample
//! ([`OnlineSigmoid`], [`BinaryProbability`]).
//!
//! Memory: two `f64` per sigmoid. The fit reads the `(f, is the class)` pairs through a
//! closure, twice per iteration, and stores none of them.

mod online;

pub use online::{BinaryProbability, OnlineSigmoid, target};

use serde::{Deserialize, Serialize};

use crate::{Error, Real};

/// Newton iterations of [`Sigmoid::fit`] at most.
const MAX_ITERATIONS: usize = 100;
/// The line search's smallest step.
const MIN_STEP: f64 = 1e-10;
/// Added to the Hessian's diagonal (Lin, Lin & Weng's σ).
const HESSIAN_RIDGE: f64 = 1e-12;
/// Gradients below this stop the fit.
const GRADIENT_TOLERANCE: f64 = 1e-5;

/// The sigmoid `σ(a·f + b)` of one class (module doc).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Sigmoid {
    /// The slope on the decision value.
    pub a: f64,
    /// The offset.
    pub b: f64,
}

impl Default for Sigmoid {
    /// `σ(f)`: the decision value taken as the log-odds.
    fn default() -> Self {
        Sigmoid { a: 1.0, b: 0.0 }
    }
}

/// `σ(z)`, without overflow for any `z`.
fn logistic<T: Real>(z: T) -> T {
    if z >= T::ZERO {
        T::ONE / (T::ONE + (-z).exp())
    } else {
        let e = z.exp();
        e / (T::ONE + e)
    }
}

impl Sigmoid {
    /// `σ(a·f + b)` in the scalar of `f`.
    pub fn probability<T: Real>(self, f: T) -> T {
        logistic(T::from_f64(self.a) * f + T::from_f64(self.b))
    }

    /// Whether both coefficients are finite.
    pub fn is_finite(self) -> bool {
        self.a.is_finite() && self.b.is_finite()
    }

    /// The maximum-likelihood sigmoid (module doc) of `n` rows, `pair(i)` giving row `i`'s
    /// decision value and whether the row is of the class.
    ///
    /// # Errors
    /// `InvalidParam { name: "decisions" }` for no rows; `NonFinite` for a decision value
    /// that is not finite.
    ///
    /// # Examples
    /// ```
    /// use kestrel_core::calibration::Sigmoid;
    /// // Larger values are the class more often: the slope comes out positive.
    /// let rows = [(-2.0, false), (-1.0, false), (-0.5, true), (0.5, false), (1.0, true), (2.0, true)];
    /// let sigmoid = Sigmoid::fit(rows.len(), |i| rows[i])?;
    /// assert!(sigmoid.a > 0.0 && sigmoid.probability(2.0) > 0.5 && sigmoid.probability(-2.0) < 0.5);
    /// # Ok::<(), kestrel_core::Error>(())
    /// ```
    pub fn fit(n: usize, pair: impl Fn(usize) -> (f64, bool)) -> Result<Sigmoid, Error> {
        if n == 0 {
            return Err(Error::InvalidParam { name: "decisions" });
        }
        let mut positives = 0usize;
        for i in 0..n {
            let (f, class) = pair(i);
            if !f.is_finite() {
                return Err(Error::NonFinite);
            }
            positives += usize::from(class);
        }
        #[allow(clippy::cast_precision_loss, reason = "counts of rows")]
        let (n_pos, n_neg) = (positives as f64, (n - positives) as f64);
        let targets = ((n_pos + 1.0) / (n_pos + 2.0), 1.0 / (n_neg + 2.0));
        let target = |class: bool| if class { targets.0 } else { targets.1 };
        let loss = |a: f64, b: f64| -> f64 {
            (0..n)
                .map(|i| {
                    let (f, class) = pair(i);
                    let (z, t) = (a * f + b, target(class));
                    // ln(1 + e^{−z}) + (1 − t)·z, written so that no exponential overflows.
                    if z >= 0.0 { (1.0 + (-z).exp()).ln() + (1.0 - t) * z } else { (1.0 + z.exp()).ln() - t * z }
                })
                .sum()
        };
        let (mut a, mut b) = (0.0, ((n_pos + 1.0) / (n_neg + 1.0)).ln());
        let mut value = loss(a, b);
        for _ in 0..MAX_ITERATIONS {
            let (mut g, mut h) = ([0.0f64; 2], [HESSIAN_RIDGE, 0.0, HESSIAN_RIDGE]);
            for i in 0..n {
                let (f, class) = pair(i);
                let p = logistic(a * f + b);
                let (residual, weight) = (p - target(class), p * (1.0 - p));
                g = [g[0] + residual * f, g[1] + residual];
                h = [h[0] + weight * f * f, h[1] + weight * f, h[2] + weight];
            }
            if g[0].abs() < GRADIENT_TOLERANCE && g[1].abs() < GRADIENT_TOLERANCE {
                break;
            }
            let det = h[0] * h[2] - h[1] * h[1];
            let direction = [-(h[2] * g[0] - h[1] * g[1]) / det, -(h[0] * g[1] - h[1] * g[0]) / det];
            let descent = g[0] * direction[0] + g[1] * direction[1];
            let mut step = 1.0;
            while step >= MIN_STEP {
                let (next_a, next_b) = (a + step * direction[0], b + step * direction[1]);
                let next = loss(next_a, next_b);
                if next < value + 1e-4 * step * descent {
                    (a, b, value) = (next_a, next_b, next);
                    break;
                }
                step /= 2.0;
            }
            if step < MIN_STEP {
                break;
            }
        }
        Ok(Sigmoid { a, b })
    }
}

/// The class probabilities of a classifier from its decision values, in place: on entry
/// `values` holds the decision values of its outputs — for two classes one, in
/// `values[0]` of a `values` of length 2 — and on return one probability per class in the
/// order of its labels, from one sigmoid per output (module doc): two classes from the one
/// value, `K > 2` from `K`, normalised. Nothing allocates: a device passes the buffer its
/// decision values went into.
///
/// # Errors
/// `DimensionMismatch` for fewer than two values, or when there is not one sigmoid per
/// output (1 for two values, else one per value); `values` is unchanged then.
///
/// # Examples
/// ```
/// use kestrel_core::calibration::{probabilities, Sigmoid};
/// let mut values = [0.0f32, 0.0]; // one decision value, 0: even odds
/// probabilities([Sigmoid { a: 2.0, b: 0.0 }], &mut values)?;
/// assert_eq!(values, [0.5, 0.5]);
/// # Ok::<(), kestrel_core::Error>(())
/// ```
pub fn probabilities<T: Real>(
    sigmoids: impl IntoIterator<Item = Sigmoid> + Clone,
    values: &mut [T],
) -> Result<(), Error> {
    let outputs = match values.len() {
        0 | 1 => return Err(Error::DimensionMismatch { expected: 2, got: values.len() }),
        2 => 1,
        classes => classes,
    };
    let count = sigmoids.clone().into_iter().count();
    if count != outputs {
        return Err(Error::DimensionMismatch { expected: outputs, got: count });
    }
    for (sigmoid, value) in sigmoids.into_iter().zip(values.iter_mut()) {
        *value = sigmoid.probability(*value);
    }
    if let [p0, p1] = values {
        // The one sigmoid is the second class's.
        (*p0, *p1) = (T::ONE - *p0, *p0);
        return Ok(());
    }
    let sum = values.iter().fold(T::ZERO, |sum, &p| sum + p);
    #[allow(clippy::cast_precision_loss, reason = "a count of classes")]
    let uniform = T::ONE / T::from_f64(outputs as f64);
    for p in values.iter_mut() {
        *p = if sum > T::ZERO { *p / sum } else { uniform };
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Decision values uniform in [−3, 3] whose class follows `σ(2f − 0.5)`.
    fn sample(n: usize) -> ([f64; 2000], [bool; 2000]) {
        let (mut f, mut class) = ([0.0; 2000], [false; 2000]);
        let mut rng = crate::Rng::seed_from_u64(3);
        let truth = Sigmoid { a: 2.0, b: -0.5 };
        for i in 0..n {
            f[i] = 6.0 * rng.uniform::<f64>() - 3.0;
            class[i] = rng.uniform::<f64>() < truth.probability(f[i]);
        }
        (f, class)
    }

    /// The log loss of Platt's smoothed targets at `(a, b)`, summed directly.
    fn loss(f: &[f64], class: &[bool], a: f64, b: f64) -> f64 {
        let positives = class.iter().filter(|&&c| c).count() as f64;
        let negatives = class.len() as f64 - positives;
        f.iter()
            .zip(class)
            .map(|(&f, &c)| {
                let t = if c { (positives + 1.0) / (positives + 2.0) } else { 1.0 / (negatives + 2.0) };
                let p = 1.0 / (1.0 + (-(a * f + b)).exp());
                -(t * p.ln() + (1.0 - t) * (1.0 - p).ln())
            })
            .sum()
    }

    #[test]
    fn the_fit_finds_the_sigmoid_that_made_the_classes_and_minimises_the_loss() {
        let (f, class) = sample(2000);
        let sigmoid = Sigmoid::fit(2000, |i| (f[i], class[i])).unwrap();
        assert!((sigmoid.a - 2.0).abs() < 0.25 && (sigmoid.b + 0.5).abs() < 0.2, "{sigmoid:?}");
        // A minimum: every step away from it raises the loss.
        let at = loss(&f, &class, sigmoid.a, sigmoid.b);
        for (da, db) in [(1e-3, 0.0), (-1e-3, 0.0), (0.0, 1e-3), (0.0, -1e-3)] {
            assert!(loss(&f, &class, sigmoid.a + da, sigmoid.b + db) > at, "({da}, {db})");
        }
    }

    #[test]
    fn one_class_alone_and_separable_classes_stay_finite() {
        let alone = Sigmoid::fit(5, |i| (i as f64, true)).unwrap();
        assert!(alone.is_finite() && alone.probability(0.0) > 0.5, "{alone:?}");
        // Perfectly separated: the smoothed targets keep the slope finite.
        let separated = Sigmoid::fit(10, |i| (i as f64 - 4.5, i >= 5)).unwrap();
        assert!(separated.is_finite() && separated.a > 0.0, "{separated:?}");
        let p = separated.probability(4.5f64);
        assert!(p < 1.0 && p > 0.8, "{p}");
    }

    #[test]
    fn bad_input_is_an_error() {
        assert_eq!(Sigmoid::fit(0, |_| (0.0, true)), Err(Error::InvalidParam { name: "decisions" }));
        assert_eq!(Sigmoid::fit(2, |i| (if i == 1 { f64::NAN } else { 0.0 }, true)), Err(Error::NonFinite));
    }

    #[test]
    fn probabilities_of_two_and_of_more_classes() {
        let sigmoid = Sigmoid { a: 1.5, b: 0.25 };
        let mut two = [0.8f64, 0.0];
        probabilities([sigmoid], &mut two).unwrap();
        assert_eq!(two[1], sigmoid.probability(0.8));
        assert!((two[0] + two[1] - 1.0).abs() < 1e-15);
        let sigmoids = [sigmoid, Sigmoid::default(), Sigmoid { a: 0.5, b: -1.0 }];
        let mut three = [1.0f32, -1.0, 0.0];
        probabilities(sigmoids, &mut three).unwrap();
        let raw: [f32; 3] =
            [sigmoids[0].probability(1.0f32), sigmoids[1].probability(-1.0), sigmoids[2].probability(0.0)];
        let sum: f32 = raw.iter().sum();
        for (p, r) in three.iter().zip(raw) {
            assert!((p - r / sum).abs() < 1e-6, "{three:?} against {raw:?}");
        }
        // Far values: no overflow, and the probabilities stay a distribution.
        let mut far = [f32::MAX, -f32::MAX, 0.0];
        probabilities(sigmoids, &mut far).unwrap();
        assert!(far.iter().all(|p| p.is_finite()) && (far.iter().sum::<f32>() - 1.0).abs() < 1e-6, "{far:?}");
    }

    #[test]
    fn mismatched_lengths_are_refused_and_leave_the_values() {
        let mut one = [0.5f64];
        assert_eq!(
            probabilities([Sigmoid::default()], &mut one),
            Err(Error::DimensionMismatch { expected: 2, got: 1 })
        );
        let mut three = [0.5f64, 0.1, 0.2];
        let e = probabilities([Sigmoid::default(); 2], &mut three);
        assert_eq!(e, Err(Error::DimensionMismatch { expected: 3, got: 2 }));
        let mut two = [0.5f64, 0.0];
        let e = probabilities([Sigmoid::default(); 2], &mut two);
        assert_eq!(e, Err(Error::DimensionMismatch { expected: 1, got: 2 }));
        assert_eq!((three, two), ([0.5, 0.1, 0.2], [0.5, 0.0]));
    }
}
