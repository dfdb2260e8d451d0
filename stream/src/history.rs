//! What a stream run learned, over its rows, in fixed memory: the series a report draws.
//!
//! A [`Series`] takes one value per row and keeps at most [`BUCKETS`] buckets, each the
//! count, minimum, maximum, sum and sum of squares of the values of `width` consecutive
//! rows. When the buckets are full, adjacent ones merge pairwise and the width doubles:
//! the statistics of a merged bucket are exactly those of its rows (counts and sums add,
//! the extremes are the extremes of the two), so a bucket's mean is the mean of its rows
//! whatever the merges. A value that is not finite (a score during a warm-up, a row
//! without a label) takes its row without being counted.
//!
//! A [`History`] is the series of a `kestrel stream` run, recorded once per sample
//! learned ([`History::record`]): the prequential loss of the learner and of the running
//! baseline (the majority label so far, or the mean target so far, as a device would
//! answer without a model), the wall-clock seconds per row, the learner's size
//! ([`LearnerSize`]), its coordinate steps per sample, and a novelty detector's score,
//! threshold and flags. It is part of
//! the checkpoint, so that a resumed run's history covers the whole stream.
//!
//! **Drift.** [`Series::jumps`] marks where a loss jumps: a bucket whose mean is at least
//! [`JUMP_RATIO`] times the mean of the [`JUMP_REFERENCE`] buckets before it and exceeds it
//! by more than [`JUMP_SIGMAS`] standard errors of the difference (the rows' variance
//! pooled over the reference and the bucket), at least [`JUMP_REFERENCE`] buckets after the
//! last mark.
//!
//! Memory: a [`Series`] holds at most `BUCKETS · 40` bytes (10 KiB), a [`History`] nine
//! of them (90 KiB) and one count per class for the majority baseline — the same for ten
//! rows as for 10⁸; time `O(1)` per row, `O(BUCKETS)` for a merge every `BUCKETS / 2 ·
//! width` rows.
//!
//! # Examples
//! ```
//! use kestrel_stream::history::{BUCKETS, Series};
//! let mut series = Series::default();
//! for row in 0..1_000_000u32 {
//!     series.push(f64::from(row % 10));
//! }
//! // Buckets of 4096 rows: 245 of them, the last holding the 576 rows left.
//! assert_eq!((series.width(), series.buckets().len()), (4096, 245));
//! assert!(series.buckets().len() <= BUCKETS);
//! let first = series.buckets()[0];
//! assert_eq!((first.count, first.min, first.max), (4096, 0.0, 9.0));
//! assert_eq!(series.mean(), Some(4.5));
//! ```

use std::ops::Range;

use serde::{Deserialize, Serialize};

use crate::online::{LearnerSize, OnlineLearner};

/// The most buckets a [`Series`] keeps (even: a merge halves them).
pub const BUCKETS: usize = 256;
/// Buckets before a bucket that [`Series::jumps`] compares it with.
pub const JUMP_REFERENCE: usize = 8;
/// Standard errors above the reference's mean that make a jump.
pub const JUMP_SIGMAS: f64 = 4.0;
/// The least ratio of a jump's mean to the reference's.
pub const JUMP_RATIO: f64 = 1.5;

/// The values of a run of consecutive rows.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Bucket {
    /// Finite values counted.
    pub count: u64,
    /// The smallest (`+∞` when none was counted).
    pub min: f64,
    /// The largest (`−∞` when none was counted).
    pub max: f64,
    /// Their sum.
    pub sum: f64,
    /// The sum of their squares.
    pub sum_squares: f64,
}

impl Bucket {
    /// No value.
    pub const EMPTY: Bucket =
        Bucket { count: 0, min: f64::INFINITY, max: f64::NEG_INFINITY, sum: 0.0, sum_squares: 0.0 };

    /// The mean of the values, `None` for none.
    pub fn mean(&self) -> Option<f64> {
        (self.count > 0).then(|| self.sum / self.count as f64)
    }

    /// Counts `value` when it is finite.
    fn add(&mut self, value: f64) {
        if value.is_finite() {
            self.count = self.count.saturating_add(1);
            self.min = self.min.min(value);
            self.max = self.max.max(value);
            self.sum += value;
            self.sum_squares += value * value;
        }
    }

    /// The values of both.
    fn merged(self, other: Bucket) -> Bucket {
        Bucket {
            count: self.count.saturating_add(other.count),
            min: self.min.min(other.min),
            max: self.max.max(other.max),
            sum: self.sum + other.sum,
            sum_squares: self.sum_squares + other.sum_squares,
        }
    }
}

/// One value per row in at most [`BUCKETS`] buckets of `width` rows (module doc).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "SeriesParts")]
pub struct Series {
    width: u64,
    rows: u64,
    buckets: Vec<Bucket>,
}

/// A [`Series`] as decoded, checked before it becomes one.
#[derive(Deserialize)]
struct SeriesParts {
    width: u64,
    rows: u64,
    buckets: Vec<Bucket>,
}

impl TryFrom<SeriesParts> for Series {
    type Error = String;

    /// The series, when its buckets are as many as its rows need at its width.
    fn try_from(parts: SeriesParts) -> Result<Self, String> {
        let SeriesParts { width, rows, buckets } = parts;
        let needed = rows.div_ceil(width.max(1));
        let full = buckets.iter().all(|bucket| bucket.count <= width);
        if !width.is_power_of_two() || buckets.len() > BUCKETS || needed != buckets.len() as u64 || !full {
            return Err(format!("a series of {} buckets of {width} rows cannot hold {rows} rows", buckets.len()));
        }
        Ok(Series { width, rows, buckets })
    }
}

impl Default for Series {
    fn default() -> Self {
        Series { width: 1, rows: 0, buckets: Vec::new() }
    }
}

impl Series {
    /// Adds the value of the next row (counted when finite).
    pub fn push(&mut self, value: f64) {
        if self.rows >= self.width.saturating_mul(self.buckets.len() as u64) {
            if self.buckets.len() == BUCKETS {
                self.merge();
            }
            self.buckets.push(Bucket::EMPTY);
        }
        if let Some(last) = self.buckets.last_mut() {
            last.add(value);
        }
        self.rows = self.rows.saturating_add(1);
    }

    /// Adjacent buckets merged pairwise, the width doubled.
    fn merge(&mut self) {
        let merged: Vec<Bucket> =
            self.buckets.chunks(2).map(|pair| pair.iter().fold(Bucket::EMPTY, |a, &b| a.merged(b))).collect();
        self.buckets = merged;
        self.width = self.width.saturating_mul(2);
    }

    /// The buckets, oldest first.
    pub fn buckets(&self) -> &[Bucket] {
        &self.buckets
    }

    /// Rows per bucket (the last may hold fewer).
    pub fn width(&self) -> u64 {
        self.width
    }

    /// Rows pushed.
    pub fn rows(&self) -> u64 {
        self.rows
    }

    /// The rows of bucket `i`, counted from 0.
    pub fn span(&self, i: usize) -> Range<u64> {
        let start = self.width.saturating_mul(i as u64);
        start..start.saturating_add(self.width).min(self.rows)
    }

    /// The mean of every value counted, `None` for none.
    pub fn mean(&self) -> Option<f64> {
        self.buckets.iter().fold(Bucket::EMPTY, |a, &b| a.merged(b)).mean()
    }

    /// The mean of the values from the first row to the end of each bucket (`None` until
    /// one was counted).
    pub fn cumulative(&self) -> Vec<Option<f64>> {
        let mut total = Bucket::EMPTY;
        self.buckets
            .iter()
            .map(|&bucket| {
                total = total.merged(bucket);
                total.mean()
            })
            .collect()
    }

    /// The buckets where the mean jumps (module doc), in order.
    pub fn jumps(&self) -> Vec<usize> {
        let mut marks: Vec<usize> = Vec::new();
        for (i, window) in self.buckets.windows(JUMP_REFERENCE + 1).enumerate() {
            let (reference, bucket) = window.split_at(JUMP_REFERENCE);
            let (Some(&bucket), at) = (bucket.first(), i + JUMP_REFERENCE) else { continue };
            let reference = reference.iter().fold(Bucket::EMPTY, |a, &b| a.merged(b));
            let recent = marks.last().is_some_and(|&last| at < last + JUMP_REFERENCE);
            if !recent && jumps_above(reference, bucket) {
                marks.push(at);
            }
        }
        marks
    }
}

/// Whether `bucket`'s mean exceeds `reference`'s by more than [`JUMP_SIGMAS`] standard
/// errors, the variance pooled over both.
fn jumps_above(reference: Bucket, bucket: Bucket) -> bool {
    let (Some(before), Some(now)) = (reference.mean(), bucket.mean()) else { return false };
    let pooled = reference.merged(bucket);
    let (n, a, b) = (pooled.count as f64, reference.count as f64, bucket.count as f64);
    if n < 2.0 {
        return false;
    }
    let variance = ((pooled.sum_squares - pooled.sum * pooled.sum / n) / (n - 1.0)).max(0.0);
    now - before > JUMP_SIGMAS * (variance / a + variance / b).sqrt() && now >= JUMP_RATIO * before
}

/// The answer a device gives without a model: the majority label so far (a classifier)
/// or the mean target so far (a regressor).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
struct Baseline {
    /// Each label seen with its count, in order of first appearance.
    labels: Vec<(f64, u64)>,
    sum: f64,
    n: u64,
}

impl Baseline {
    /// The majority label so far (on a tie, the label seen first).
    fn majority(&self) -> Option<f64> {
        let best = self.labels.iter().fold(None, |best: Option<(f64, u64)>, &(label, count)| match best {
            Some((_, top)) if top >= count => best,
            _ => Some((label, count)),
        });
        best.map(|(label, _)| label)
    }

    /// The mean target so far, 0 before the first.
    fn mean(&self) -> f64 {
        if self.n == 0 { 0.0 } else { self.sum / self.n as f64 }
    }

    /// Counts `label`.
    fn add(&mut self, label: f64, classes: bool) {
        self.sum += label;
        self.n = self.n.saturating_add(1);
        if !classes {
            return;
        }
        match self.labels.iter_mut().find(|(seen, _)| *seen == label) {
            Some((_, count)) => *count = count.saturating_add(1),
            None => self.labels.push((label, 1)),
        }
    }
}

/// The series of a stream run (module doc), one row per sample learned.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct History {
    /// The learner's loss on each sample before learning it: 1 for a wrong class and 0
    /// for a right one (a classifier; a detector's flag against a label, not counted
    /// without one), the squared error (a regressor).
    pub loss: Series,
    /// The baseline's loss on the same rows: the majority label so far, the mean target
    /// so far, a detector that never flags.
    pub baseline: Series,
    /// Wall-clock seconds from the row before to this one's prediction and learning.
    pub seconds: Series,
    /// Samples the learner holds ([`LearnerSize::window`]).
    pub window: Series,
    /// Centres or support vectors of its model ([`LearnerSize::centres`]).
    pub centres: Series,
    /// The coordinate steps the learner took for the sample ([`OnlineLearner::last_steps`];
    /// not counted for a learner that takes none).
    pub steps: Series,
    /// A detector's score (not counted during its warm-up).
    pub score: Series,
    /// A detector's threshold (not counted before it has one).
    pub threshold: Series,
    /// A detector's flag: 1 flagged, 0 not.
    pub flagged: Series,
    baseline_state: Baseline,
}

impl History {
    /// The history, postcard-encoded, as a checkpoint holds it.
    ///
    /// # Errors
    /// Only if serialization fails, which it does not for these types.
    pub fn to_bytes(&self) -> Result<Vec<u8>, postcard::Error> {
        postcard::to_stdvec(self)
    }

    /// The history [`to_bytes`](Self::to_bytes) encoded.
    ///
    /// # Errors
    /// Bytes that do not decode, or a series whose buckets cannot hold its rows.
    pub fn from_bytes(bytes: &[u8]) -> Result<Self, postcard::Error> {
        postcard::from_bytes(bytes)
    }

    /// Records a sample `learner` has just predicted (`prediction`, before learning it)
    /// and learned, with its `label` and the `seconds` it took since the row before.
    pub fn record(&mut self, learner: &dyn OnlineLearner, prediction: Option<f64>, label: f64, seconds: f64) {
        let (loss, baseline) = if learner.is_detector() {
            let anomaly = label != 0.0;
            let miss = |flagged: bool| if label.is_nan() { f64::NAN } else { f64::from(u8::from(flagged != anomaly)) };
            (miss(prediction == Some(1.0)), miss(false))
        } else if learner.is_classifier() {
            let wrong = |answer: Option<f64>| f64::from(u8::from(answer != Some(label)));
            (wrong(prediction), wrong(self.baseline_state.majority()))
        } else {
            let squared = |answer: f64| (answer - label) * (answer - label);
            (squared(prediction.unwrap_or(0.0)), squared(self.baseline_state.mean()))
        };
        self.baseline_state.add(label, learner.is_classifier());
        self.loss.push(loss);
        self.baseline.push(baseline);
        self.seconds.push(seconds);
        // Measured once per bucket (counting support vectors reads the window).
        let (window, centres) = match self.window.rows().is_multiple_of(self.window.width()) {
            true => {
                let LearnerSize { window, centres } = learner.size();
                (window as f64, centres as f64)
            }
            false => (f64::NAN, f64::NAN),
        };
        self.window.push(window);
        self.centres.push(centres);
        self.steps.push(learner.last_steps().map_or(f64::NAN, |steps| steps as f64));
        if learner.is_detector() {
            self.score.push(learner.last_score().unwrap_or(f64::NAN));
            self.threshold.push(learner.threshold().unwrap_or(f64::NAN));
            self.flagged.push(f64::from(u8::from(prediction == Some(1.0))));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The statistics of `values` computed directly.
    fn brute(values: &[f64]) -> Bucket {
        let mut bucket = Bucket::EMPTY;
        for &v in values {
            bucket.add(v);
        }
        bucket
    }

    #[test]
    fn merged_buckets_hold_their_rows_statistics() {
        let mut rng = kestrel_core::Rng::seed_from_u64(3);
        let values: Vec<f64> =
            (0..5000).map(|i| if i % 97 == 0 { f64::NAN } else { rng.normal::<f64>() * 10.0 + 1.0 }).collect();
        let mut series = Series::default();
        for &v in &values {
            series.push(v);
        }
        assert_eq!((series.rows(), series.width()), (5000, 32));
        assert!(series.buckets().len() <= BUCKETS);
        let mut cumulative = Bucket::EMPTY;
        for (i, bucket) in series.buckets().iter().enumerate() {
            let span = series.span(i);
            let rows = &values[span.start as usize..span.end as usize];
            let direct = brute(rows);
            cumulative = cumulative.merged(direct);
            assert_eq!((bucket.count, bucket.min, bucket.max), (direct.count, direct.min, direct.max), "bucket {i}");
            let (mean, expected) = (bucket.mean().unwrap(), direct.mean().unwrap());
            assert!((mean - expected).abs() <= 1e-12 * expected.abs().max(1.0), "bucket {i}: {mean} vs {expected}");
            let running = series.cumulative()[i].unwrap();
            assert!((running - cumulative.mean().unwrap()).abs() < 1e-12);
        }
        assert_eq!(series.span(series.buckets().len() - 1).end, 5000);
    }

    #[test]
    fn a_million_rows_cost_what_ten_thousand_do() {
        let fill = |rows: u32| {
            let mut series = Series::default();
            (0..rows).for_each(|row| series.push(f64::from(row)));
            series
        };
        let (small, large) = (fill(10_000), fill(1_000_000));
        assert!(small.buckets().len() <= BUCKETS && large.buckets().len() <= BUCKETS);
        // Encoded: a count (varint, at most 10 bytes) and four f64 per bucket.
        let bound = BUCKETS * (10 + 4 * 8) + 32;
        let bytes = |s: &Series| postcard::to_stdvec(s).unwrap().len();
        assert!(bytes(&small) <= bound && bytes(&large) <= bound, "{} and {}", bytes(&small), bytes(&large));
        assert!(bytes(&large) <= bytes(&small) * 2, "{} vs {}", bytes(&large), bytes(&small));
        let last = large.buckets().last().unwrap();
        assert_eq!(last.max, 999_999.0);
        assert_eq!(large.mean(), Some(999_999.0 / 2.0));
    }

    #[test]
    fn decoding_refuses_an_impossible_series() {
        let mut series = Series::default();
        (0..300).for_each(|row| series.push(f64::from(row)));
        let bytes = postcard::to_stdvec(&series).unwrap();
        assert_eq!(postcard::from_bytes::<Series>(&bytes).unwrap(), series);
        let parts =
            |width, rows, buckets: usize| postcard::to_stdvec(&(width, rows, vec![Bucket::EMPTY; buckets])).unwrap();
        assert!(postcard::from_bytes::<Series>(&parts(2u64, 300u64, 150)).is_ok());
        for (width, rows, buckets) in [(3u64, 3u64, 1), (1, 300, 300), (2, 300, 149), (0, 0, 0)] {
            assert!(postcard::from_bytes::<Series>(&parts(width, rows, buckets)).is_err(), "{width} {rows} {buckets}");
        }
    }

    #[test]
    fn a_jump_in_the_loss_is_marked_once() {
        let mut rng = kestrel_core::Rng::seed_from_u64(5);
        let mut series = Series::default();
        for row in 0..4000 {
            let error_rate = if row < 3000 { 0.05 } else { 0.4 };
            series.push(f64::from(u8::from(rng.uniform_in(0.0, 1.0) < error_rate)));
        }
        let marks = series.jumps();
        assert_eq!(marks.len(), 1, "{marks:?}");
        let (at, width) = (series.span(marks[0]), series.width());
        assert!(at.start + width >= 3000 && at.start <= 3000 + 4 * width, "within a few buckets: {at:?}");
    }

    #[test]
    fn majority_and_mean_baselines() {
        let mut baseline = Baseline::default();
        assert_eq!((baseline.majority(), baseline.mean()), (None, 0.0));
        for label in [2.0, 5.0, 5.0] {
            baseline.add(label, true);
        }
        assert_eq!((baseline.majority(), baseline.mean()), (Some(5.0), 4.0));
        baseline.add(2.0, true);
        assert_eq!(baseline.majority(), Some(2.0), "a tie goes to the label seen first");
    }
}
