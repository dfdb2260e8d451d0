//! The demo's prequential scores: each learner's errors on samples it had not learned yet,
//! beside naive baselines — the regressor's RMSE beside the window mean's, the
//! classifier's error rate beside always answering the majority class. Shared by the demo
//! under QEMU and the board examples (`../boards`).

/// Errors over one block of samples (or a whole run).
#[derive(Clone, Copy, Debug, Default)]
pub struct Score {
    /// Samples scored.
    pub samples: u32,
    squared: f32,
    squared_baseline: f32,
    wrong: u32,
    alarms: u32,
}

impl Score {
    /// Counts one sample: the regressor's and the baseline's errors, whether the
    /// classifier was wrong, and whether the sample was of the positive class.
    pub fn add(&mut self, error: f32, baseline_error: f32, wrong: bool, alarm: bool) {
        self.samples += 1;
        self.squared += error * error;
        self.squared_baseline += baseline_error * baseline_error;
        self.wrong += u32::from(wrong);
        self.alarms += u32::from(alarm);
    }
    /// Root-mean-square error of the regressor.
    pub fn rmse(&self) -> f32 {
        libm::sqrtf(self.squared / self.samples.max(1) as f32)
    }
    /// Root-mean-square error of the baseline.
    pub fn baseline_rmse(&self) -> f32 {
        libm::sqrtf(self.squared_baseline / self.samples.max(1) as f32)
    }
    /// Error rate of the classifier, %.
    pub fn error_rate(&self) -> f32 {
        100.0 * self.wrong as f32 / self.samples.max(1) as f32
    }
    /// Error rate of always answering the block's majority class, %.
    pub fn majority_error_rate(&self) -> f32 {
        100.0 * self.alarms.min(self.samples - self.alarms) as f32 / self.samples.max(1) as f32
    }
}
