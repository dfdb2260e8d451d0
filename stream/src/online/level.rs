//! [`RecentLevel`]: a regressor's prediction made with the stream's recent level when that
//! has predicted better lately — the recent level of its residuals, or the last target.
//!
//! A windowed kernel regressor predicts a drifting target late: its window mean and its
//! weights follow a moving level only as the window turns over, and an input that grows
//! with time (a date, a counter) is standardised to about the same value at every arrival,
//! so the kernel cannot tell recent samples from old ones. Its residuals `rₜ = yₜ − pₜ`
//! then keep one sign for a while, and on a slowly varying series the last target alone
//! (the naive forecast) may predict better than the model. Four candidates predict each
//! sample:
//!
//! ```text
//! pₜ                       the model
//! pₜ + r̄ₜ₋₁(β), β = 0.5, 0.9   the model and its residuals' exponential smoothing,
//!                          r̄ₜ(β) = β·r̄ₜ₋₁(β) + (1 − β)·rₜ
//! yₜ₋₁                     the last target (the model's pₜ before any)
//! ```
//!
//! Which one a prediction uses is chosen online by the same prequential errors as the
//! metrics: each candidate's squared error is tracked with the exponential weight
//! [`CHOICE_DECAY`] (`eₜ = d·eₜ₋₁ + (1 − d)·(yₜ − ŷₜ)²`) and the candidate of least `e`
//! predicts (the model on a tie, so a stream is predicted by the model until another
//! candidate has done better). The convention is ours; the measurements that chose the
//! candidates and the decay are in BENCHMARKS.md (River's TrumpApproval, ChickWeights,
//! WaterFlow and Friedman streams): where the model beats them it predicts alone, as on
//! the stationary Friedman streams on 96 % of the rows.
//!
//! The candidates belong to the stream, not to the model: a saved model predicts without
//! them, so the model's own error is kept too ([`RecentLevel::model_mse`]) and
//! `kestrel stream` reports it beside the predictions' (`model_mse`).
//!
//! Cost: O(1) per arrival; memory: ten numbers.

use serde::{Deserialize, Serialize};

/// The smoothing constants `β` of the residual levels added to the model's prediction.
pub(super) const SMOOTHINGS: [f64; 2] = [0.5, 0.9];

/// The weight `d` of the past in each candidate's tracked squared error (about the last
/// 100 arrivals count).
pub(super) const CHOICE_DECAY: f64 = 0.99;

/// The candidates: the model, the model with each residual level, the last target.
const CANDIDATES: usize = 2 + SMOOTHINGS.len();

/// The residual levels, the last target and the candidates' tracked errors (module doc),
/// and the model's own squared error so far.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub(super) struct RecentLevel {
    /// `r̄(β)` for each of [`SMOOTHINGS`].
    residual_levels: [f64; SMOOTHINGS.len()],
    last_target: Option<f64>,
    /// `e` of each candidate, in the module doc's order.
    errors: [f64; CANDIDATES],
    /// The model's squared errors summed, and their number.
    model_squared: f64,
    model_n: u64,
}

impl RecentLevel {
    /// Each candidate's prediction for a sample the model predicts `model`.
    fn candidates(&self, model: f64) -> [f64; CANDIDATES] {
        let [fast, slow] = self.residual_levels;
        [model, model + fast, model + slow, self.last_target.unwrap_or(model)]
    }

    /// The prediction for a sample the model predicts `model`: the candidate of least
    /// tracked error (the first of those that tie).
    pub(super) fn predict(&self, model: f64) -> f64 {
        let mut best = (model, f64::INFINITY);
        for (candidate, &error) in self.candidates(model).into_iter().zip(&self.errors) {
            if error < best.1 {
                best = (candidate, error);
            }
        }
        best.0
    }

    /// Notes the target `y` of a sample the model predicted `model`. A sample whose
    /// numbers would not stay finite (a non-finite value, or squares past `f64::MAX`)
    /// changes nothing, so that the state always restores.
    pub(super) fn observe(&mut self, model: f64, y: f64) {
        let residual = y - model;
        let mut next = self.clone();
        for (error, candidate) in next.errors.iter_mut().zip(self.candidates(model)) {
            let miss = y - candidate;
            *error = CHOICE_DECAY * *error + (1.0 - CHOICE_DECAY) * miss * miss;
        }
        for (level, beta) in next.residual_levels.iter_mut().zip(SMOOTHINGS) {
            *level = beta * *level + (1.0 - beta) * residual;
        }
        next.last_target = Some(y);
        next.model_squared += residual * residual;
        next.model_n = next.model_n.saturating_add(1);
        if next.is_finite() {
            *self = next;
        }
    }

    /// The model's own mean squared error over the samples observed (`None` before any).
    pub(super) fn model_mse(&self) -> Option<f64> {
        (self.model_n > 0).then(|| self.model_squared / self.model_n as f64)
    }

    /// Whether every number is finite (a state to restore).
    pub(super) fn is_finite(&self) -> bool {
        let last = self.last_target.unwrap_or(0.0);
        self.residual_levels.iter().chain(&self.errors).chain([&self.model_squared, &last]).all(|v| v.is_finite())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn noise_about_a_model_that_is_right_keeps_the_model() {
        let mut level = RecentLevel::default();
        // The model predicts 0, the target is 0 ± 1 alternately: every other candidate
        // (a level of recent residuals, the last target) misses by more.
        for t in 0..500 {
            level.observe(0.0, if t % 2 == 0 { 1.0 } else { -1.0 });
        }
        assert_eq!(level.predict(0.0), 0.0);
        assert_eq!(level.model_mse(), Some(1.0));
    }

    #[test]
    fn a_lagging_model_is_corrected_by_its_recent_residuals() {
        let mut level = RecentLevel::default();
        // The model predicts x while the target is x + 5 for a varying x: the residual
        // level predicts it exactly, the last target does not.
        for t in 0..300 {
            let x = f64::from(t % 7);
            level.observe(x, x + 5.0);
        }
        assert!((level.predict(2.0) - 7.0).abs() < 1e-9, "{}", level.predict(2.0));
        // Each candidate's error, by hand for the first arrival: all predicted the model's
        // 1 (no residual, no target yet) and missed by 5.
        let mut first = RecentLevel::default();
        first.observe(1.0, 6.0);
        assert!(first.errors.iter().all(|e| (e - 0.01 * 25.0).abs() < 1e-15), "{:?}", first.errors);
        assert!((first.residual_levels[0] - 2.5).abs() < 1e-15 && (first.residual_levels[1] - 0.5).abs() < 1e-15);
        assert_eq!((first.last_target, first.model_mse()), (Some(6.0), Some(25.0)));
    }

    #[test]
    fn a_slow_series_the_model_misses_is_predicted_by_its_last_value() {
        let mut level = RecentLevel::default();
        // A target climbing by 0.01 a sample, a model that scatters ±1 about it.
        for t in 0..300 {
            let y = 0.01 * f64::from(t);
            level.observe(y + if t % 2 == 0 { 1.0 } else { -1.0 }, y);
        }
        assert_eq!(level.predict(100.0), 0.01 * 299.0);
    }

    #[test]
    fn non_finite_values_change_nothing() {
        let mut level = RecentLevel::default();
        level.observe(0.0, 2.0);
        let before = level.clone();
        level.observe(f64::NAN, 1.0);
        level.observe(0.0, f64::INFINITY);
        // Finite, but its square is not.
        level.observe(0.0, 1e200);
        assert_eq!(level, before);
        assert!(level.is_finite());
    }
}
