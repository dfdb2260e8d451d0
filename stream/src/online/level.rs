//! [`ResidualLevel`]: the recent level of a regressor's residuals, added to its predictions
//! when that has predicted better lately.
//!
//! A windowed kernel regressor predicts a drifting target late: its window mean and its
//! weights follow a moving level only as the window turns over, and an input that grows
//! with time (a date, a counter) is standardised to about the same value at every arrival,
//! so the kernel cannot tell recent samples from old ones. Its residuals `rₜ = yₜ − pₜ`
//! then keep one sign for a while. The correction is simple exponential smoothing of the
//! residual series:
//!
//! ```text
//! r̄ₜ(β) = β·r̄ₜ₋₁(β) + (1 − β)·rₜ,    ŷₜ₊₁ = pₜ₊₁ + r̄ₜ(β),
//! ```
//!
//! for `β` in [`SMOOTHINGS`], beside the plain prediction (`r̄ = 0`). Which one a
//! prediction uses is chosen online by the same prequential errors as the metrics: each
//! candidate's squared error is tracked with the exponential weight [`CHOICE_DECAY`]
//! (`eₜ = d·eₜ₋₁ + (1 − d)·(yₜ − ŷₜ)²`) and the candidate of least `e` predicts (the plain
//! one on a tie, so a stationary stream is predicted as before until a correction has done
//! better). The convention is ours; the measurements that chose the smoothings and the
//! decay are in BENCHMARKS.md (River's TrumpApproval, ChickWeights, WaterFlow, Friedman
//! streams). The correction belongs to the stream, not to the model: a saved model
//! predicts without it.
//!
//! Cost: O(1) per arrival; memory: five numbers.

use serde::{Deserialize, Serialize};

/// The smoothing constants `β` of the corrections tried beside the plain prediction.
pub(super) const SMOOTHINGS: [f64; 2] = [0.5, 0.9];

/// The weight `d` of the past in each candidate's tracked squared error (about the last
/// 100 arrivals count).
pub(super) const CHOICE_DECAY: f64 = 0.99;

/// The smoothed residuals and the candidates' tracked errors (module doc).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub(super) struct ResidualLevel {
    /// `r̄(β)` for each of [`SMOOTHINGS`].
    levels: [f64; 2],
    /// `e` of the plain prediction, then of each correction.
    errors: [f64; 3],
}

impl ResidualLevel {
    /// What to add to the model's prediction now: the level of the candidate of least
    /// tracked error (0 for the plain prediction).
    pub(super) fn correction(&self) -> f64 {
        let mut best = (0.0, self.errors[0]);
        for (&level, &error) in self.levels.iter().zip(&self.errors[1..]) {
            if error < best.1 {
                best = (level, error);
            }
        }
        best.0
    }

    /// Notes the target `y` of a sample the model predicted `predicted` (before the
    /// correction). Non-finite values change nothing.
    pub(super) fn observe(&mut self, predicted: f64, y: f64) {
        let residual = y - predicted;
        if !residual.is_finite() {
            return;
        }
        let track = |error: &mut f64, miss: f64| *error = CHOICE_DECAY * *error + (1.0 - CHOICE_DECAY) * miss * miss;
        track(&mut self.errors[0], residual);
        for ((level, error), beta) in self.levels.iter_mut().zip(&mut self.errors[1..]).zip(SMOOTHINGS) {
            track(error, residual - *level);
            *level = beta * *level + (1.0 - beta) * residual;
        }
    }

    /// Whether every number is finite (a state to restore).
    pub(super) fn is_finite(&self) -> bool {
        self.levels.iter().chain(&self.errors).all(|v| v.is_finite())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_steady_stream_keeps_the_plain_prediction() {
        let mut level = ResidualLevel::default();
        // Residuals of alternating sign: no correction predicts better.
        for t in 0..500 {
            level.observe(0.0, if t % 2 == 0 { 1.0 } else { -1.0 });
        }
        assert_eq!(level.correction(), 0.0);
    }

    #[test]
    fn a_lagging_model_is_corrected_by_its_recent_residuals() {
        let mut level = ResidualLevel::default();
        // The model predicts 0 while the target has moved to 5: the residual is 5.
        for _ in 0..200 {
            level.observe(0.0, 5.0);
        }
        assert!((level.correction() - 5.0).abs() < 1e-9, "{}", level.correction());
        // Each candidate's error, by hand for the first arrival: the plain prediction
        // missed by 5, and so did the corrections (their levels were 0).
        let mut first = ResidualLevel::default();
        first.observe(1.0, 6.0);
        assert!(first.errors.iter().all(|e| (e - 0.01 * 25.0).abs() < 1e-15), "{:?}", first.errors);
        assert!((first.levels[0] - 2.5).abs() < 1e-15 && (first.levels[1] - 0.5).abs() < 1e-15, "{:?}", first.levels);
    }

    #[test]
    fn non_finite_values_change_nothing() {
        let mut level = ResidualLevel::default();
        level.observe(0.0, 2.0);
        let before = level.clone();
        level.observe(f64::NAN, 1.0);
        level.observe(0.0, f64::INFINITY);
        assert_eq!(level, before);
        assert!(level.is_finite());
    }
}
