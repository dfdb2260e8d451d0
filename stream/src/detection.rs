//! Novelty flags and scores against labels: counts, precision, recall and the area under
//! the ROC curve — what `kestrel stream --learner novelty` and `kestrel eval` of a novelty
//! model print.
//!
//! One label marks a normal row, `0` unless the user names another (`--normal-label`: `1`
//! for scikit-learn's and LIBSVM's one-class labels, where `−1` is an outlier); any other
//! label is an anomaly (a named class: the first name seen is `0`). An unlabelled row
//! (`NaN`) is counted, not scored.
//!
//! **The AUC in bounded memory.** The scores are counted in bins — the score rounded to
//! 12 significant bits (the `f32` bit pattern without its last 12 mantissa bits, so bins
//! are 2⁻¹¹ of the score wide, relative) — normal and anomalous apart. The AUC, the
//! probability that an anomaly scores above a normal row, is then exact except for the
//! pairs that share a bin, counted as ties (½). Non-negative `f32`s have at most 2¹⁹ such
//! bins, and scores spread over a few octaves fill a few thousand; a score below 0 is
//! counted as 0.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// The mantissa bits a score's bin drops.
const DROPPED_BITS: u32 = 12;
/// Bins counted in one block of [`Bins`].
const PAGE: usize = 256;
/// The bins there are: those of the non-negative `f32`s up to `+∞`.
const BINS: usize = (f32::INFINITY.to_bits() >> DROPPED_BITS) as usize + 1;

/// Flags and scores of a novelty detector against labels.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Detections {
    /// The label of a normal row (absent from a checkpoint of before it: `0`).
    #[serde(default)]
    pub normal: f64,
    /// Rows counted.
    pub n: u64,
    /// Rows flagged as anomalies.
    pub flagged: u64,
    /// Rows with a label.
    pub labelled: u64,
    /// Labelled anomalies.
    pub anomalies: u64,
    /// Labelled anomalies flagged.
    pub true_positives: u64,
    /// Labelled normal rows flagged.
    pub false_positives: u64,
    /// Scored labelled rows per bin: `[normal, anomalous]`.
    bins: Bins,
}

impl Detections {
    /// No rows yet, normal rows labelled `normal`.
    pub fn new(normal: f64) -> Self {
        Detections { normal, ..Detections::default() }
    }

    /// Counts one row: its `score` (if the detector gave one), whether it was `flagged`,
    /// and its `label` (`NaN`: none).
    pub fn add(&mut self, score: Option<f64>, flagged: bool, label: f64) {
        self.n = self.n.saturating_add(1);
        self.flagged = self.flagged.saturating_add(u64::from(flagged));
        if label.is_nan() {
            return;
        }
        let anomaly = label != self.normal;
        self.labelled = self.labelled.saturating_add(1);
        self.anomalies = self.anomalies.saturating_add(u64::from(anomaly));
        self.true_positives = self.true_positives.saturating_add(u64::from(flagged && anomaly));
        self.false_positives = self.false_positives.saturating_add(u64::from(flagged && !anomaly));
        if let Some(score) = score.filter(|s| !s.is_nan()) {
            self.bins.add(bin(score), anomaly);
        }
    }

    /// `true` when more than half the labelled rows are anomalies: anomalies are the rare
    /// rows, so the labels likely mark normal rows otherwise than [`normal`](Self::normal).
    pub fn mostly_anomalies(&self) -> bool {
        self.anomalies > self.labelled / 2
    }

    /// Flagged anomalies among the flagged labelled rows (`None` when none was flagged).
    pub fn precision(&self) -> Option<f64> {
        fraction(self.true_positives, self.true_positives.saturating_add(self.false_positives))
    }

    /// Flagged anomalies among the labelled anomalies (`None` without anomalies).
    pub fn recall(&self) -> Option<f64> {
        fraction(self.true_positives, self.anomalies)
    }

    /// The area under the ROC curve of the scores (module doc), `None` unless both normal
    /// and anomalous rows were scored.
    pub fn auc(&self) -> Option<f64> {
        let (mut normal_below, mut wins) = (0u64, 0.0f64);
        for [normal, anomalous] in self.bins.counts() {
            // Anomalies in this bin beat the normal rows of the bins below, tie with its own.
            wins += anomalous as f64 * (normal_below as f64 + 0.5 * normal as f64);
            normal_below += normal;
        }
        let anomalous: u64 = self.bins.counts().map(|b| b[1]).sum();
        let pairs = normal_below as f64 * anomalous as f64;
        (pairs > 0.0).then(|| wins / pairs)
    }
}

impl Detections {
    /// The ROC curve of the scores: `(false positive rate, true positive rate)` from
    /// `(0, 0)` to `(1, 1)`, a point per bin from the highest scores down (empty unless
    /// both normal and anomalous rows were scored); its area is [`auc`](Self::auc).
    pub fn roc(&self) -> Vec<(f64, f64)> {
        let (normal, anomalous) = self.bins.counts().fold((0u64, 0u64), |(n, a), b| (n + b[0], a + b[1]));
        if normal == 0 || anomalous == 0 {
            return Vec::new();
        }
        let mut curve = vec![(0.0, 0.0)];
        let (mut false_positives, mut true_positives) = (0u64, 0u64);
        for [n, a] in self.bins.counts().rev() {
            (false_positives, true_positives) = (false_positives + n, true_positives + a);
            curve.push((false_positives as f64 / normal as f64, true_positives as f64 / anomalous as f64));
        }
        curve
    }
}

/// `[normal, anomalous]` counts per bin, in blocks of [`PAGE`] bins allocated as scores
/// first reach them: a count is an index away (a tree of bins cost a twentieth of a
/// detector's stream), and the memory stays within what the bins the scores fill need.
/// Saved as the map of the bins that count something.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(try_from = "BTreeMap<u32, [u64; 2]>", into = "BTreeMap<u32, [u64; 2]>")]
struct Bins {
    pages: Vec<Option<Box<[[u64; 2]; PAGE]>>>,
}

impl Bins {
    /// Counts a score in `bin` (below [`BINS`]).
    fn add(&mut self, bin: u32, anomaly: bool) {
        if let Some(count) = self.slot(bin).and_then(|c| c.get_mut(usize::from(anomaly))) {
            *count = count.saturating_add(1);
        }
    }

    /// The counts of `bin` (below [`BINS`]), its page allocated if it was not.
    fn slot(&mut self, bin: u32) -> Option<&mut [u64; 2]> {
        let (page, at) = (bin as usize / PAGE, bin as usize % PAGE);
        if self.pages.len() <= page {
            self.pages.resize(page + 1, None);
        }
        let counts = self.pages.get_mut(page)?.get_or_insert_with(|| Box::new([[0; 2]; PAGE]));
        counts.get_mut(at)
    }

    /// The counts of the bins that count something, `(bin, [normal, anomalous])` from the
    /// lowest bin up.
    fn bins(&self) -> impl DoubleEndedIterator<Item = (u32, [u64; 2])> + '_ {
        self.pages.iter().enumerate().filter_map(|(page, counts)| Some((page, counts.as_ref()?))).flat_map(
            |(page, counts)| {
                counts.iter().enumerate().filter(|(_, c)| **c != [0, 0]).map(move |(at, &c)| {
                    #[allow(clippy::cast_possible_truncation, reason = "bins are below BINS < 2³²")]
                    let bin = (page * PAGE + at) as u32;
                    (bin, c)
                })
            },
        )
    }

    /// [`bins`](Self::bins)' counts alone.
    fn counts(&self) -> impl DoubleEndedIterator<Item = [u64; 2]> + '_ {
        self.bins().map(|(_, c)| c)
    }
}

impl PartialEq for Bins {
    fn eq(&self, other: &Self) -> bool {
        self.bins().eq(other.bins())
    }
}

impl TryFrom<BTreeMap<u32, [u64; 2]>> for Bins {
    type Error = String;
    fn try_from(map: BTreeMap<u32, [u64; 2]>) -> Result<Self, String> {
        let mut bins = Bins::default();
        for (bin, [normal, anomalous]) in map {
            if bin as usize >= BINS {
                return Err(format!("score bin {bin} is beyond the last ({})", BINS - 1));
            }
            if let Some(count) = bins.slot(bin) {
                *count = [normal, anomalous];
            }
        }
        Ok(bins)
    }
}

impl From<Bins> for BTreeMap<u32, [u64; 2]> {
    fn from(bins: Bins) -> Self {
        bins.bins().collect()
    }
}

/// A signed decision value as a score the bins hold, in the same order: `1 + d` from 0 up,
/// `1/(1 − d)` below (a classifier's decision values scored as a detector's).
pub fn positive_score(decision: f64) -> f64 {
    if decision >= 0.0 { 1.0 + decision } else { 1.0 / (1.0 - decision) }
}

/// The bin of `score`: its `f32` bit pattern (order-preserving for non-negative floats)
/// without the last [`DROPPED_BITS`] mantissa bits.
fn bin(score: f64) -> u32 {
    #[allow(clippy::cast_possible_truncation, reason = "a bin, rounded on purpose")]
    let single = score.max(0.0) as f32;
    single.to_bits() >> DROPPED_BITS
}

fn fraction(part: u64, whole: u64) -> Option<f64> {
    (whole > 0).then(|| part as f64 / whole as f64)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The exact AUC of `(score, anomaly)` pairs, ties counted ½.
    fn exact_auc(rows: &[(f64, bool)]) -> f64 {
        let (mut wins, mut pairs) = (0.0, 0.0);
        for &(a, _) in rows.iter().filter(|r| r.1) {
            for &(n, _) in rows.iter().filter(|r| !r.1) {
                wins += if a > n {
                    1.0
                } else if a == n {
                    0.5
                } else {
                    0.0
                };
                pairs += 1.0;
            }
        }
        wins / pairs
    }

    #[test]
    fn counts_and_rates() {
        let mut d = Detections::default();
        assert_eq!((d.precision(), d.recall(), d.auc()), (None, None, None));
        for (score, flagged, label) in [
            (Some(0.9), true, 1.0),
            (Some(0.8), true, 0.0),
            (Some(0.2), false, 2.0),
            (None, false, 0.0),
            (Some(0.1), false, f64::NAN),
        ] {
            d.add(score, flagged, label);
        }
        assert_eq!((d.n, d.flagged, d.labelled, d.anomalies, d.true_positives, d.false_positives), (5, 2, 4, 2, 1, 1));
        assert_eq!((d.precision(), d.recall()), (Some(0.5), Some(0.5)));
        // Scored labelled rows: anomalies 0.9 and 0.2 against the normal 0.8.
        assert_eq!(d.auc(), Some(0.5));
    }

    #[test]
    fn another_normal_label_counts_the_others_as_anomalies() {
        // scikit-learn's convention: 1 an inlier, −1 an outlier.
        let rows = [(0.1, false, 1.0), (0.2, false, 1.0), (0.3, true, 1.0), (0.9, true, -1.0)];
        let (mut plus_one, mut zero) = (Detections::new(1.0), Detections::default());
        for (score, flagged, label) in rows {
            plus_one.add(Some(score), flagged, label);
            zero.add(Some(score), flagged, label);
        }
        assert_eq!((plus_one.anomalies, plus_one.true_positives, plus_one.false_positives), (1, 1, 1));
        assert_eq!((plus_one.recall(), plus_one.auc()), (Some(1.0), Some(1.0)));
        assert!(!plus_one.mostly_anomalies());
        // Read with the default normal label 0, every row is an anomaly.
        assert_eq!((zero.anomalies, zero.auc()), (4, None));
        assert!(zero.mostly_anomalies());
    }

    #[test]
    fn the_binned_auc_is_the_exact_one_up_to_shared_bins() {
        let mut rng = kestrel_core::Rng::seed_from_u64(9);
        let rows: Vec<(f64, bool)> = (0..3000)
            .map(|i| {
                let anomaly = i % 10 == 0;
                let score = 0.8 + 0.05 * rng.normal::<f64>() + if anomaly { 0.06 } else { 0.0 };
                (score, anomaly)
            })
            .collect();
        let mut d = Detections::default();
        for &(score, anomaly) in &rows {
            d.add(Some(score), false, f64::from(u8::from(anomaly)));
        }
        let (binned, exact) = (d.auc().unwrap(), exact_auc(&rows));
        assert!((binned - exact).abs() < 2e-3, "{binned} vs {exact}");
        assert!(exact > 0.75, "{exact}");
        // Scores below 0 count as 0; a perfect ranking is 1.
        let mut perfect = Detections::default();
        for (score, label) in [(-1.0, 0.0), (0.5, 0.0), (2.0, 1.0), (3.0, 1.0)] {
            perfect.add(Some(score), false, label);
        }
        assert_eq!(perfect.auc(), Some(1.0));
        assert_eq!(perfect.roc(), [(0.0, 0.0), (0.0, 0.5), (0.0, 1.0), (0.5, 1.0), (1.0, 1.0)]);
        assert!(Detections::default().roc().is_empty());
    }

    #[test]
    fn bins_are_saved_as_the_map_of_those_that_count() {
        let mut d = Detections::default();
        for (score, label) in [(0.5, 0.0), (0.5, 1.0), (1e30, 1.0), (f64::INFINITY, 0.0), (-2.0, 0.0)] {
            d.add(Some(score), false, label);
        }
        let saved = serde_json::to_value(&d).unwrap();
        let map = saved["bins"].as_object().unwrap();
        assert_eq!(map.len(), 4, "{map:?}");
        assert_eq!(map[&bin(0.5).to_string()], serde_json::json!([1, 1]));
        let restored: Detections = serde_json::from_value(saved.clone()).unwrap();
        assert_eq!((&restored, restored.auc(), restored.roc()), (&d, d.auc(), d.roc()));
        // A checkpoint of before the normal label reads as normal rows labelled 0.
        let mut older = saved.clone();
        older.as_object_mut().unwrap().remove("normal");
        assert_eq!(serde_json::from_value::<Detections>(older).unwrap(), d);
        // A bin no score can have (beyond +∞'s) is refused, not allocated for.
        let mut hostile = saved;
        hostile["bins"] = serde_json::json!({ "4294967295": [1, 0] });
        let e = serde_json::from_value::<Detections>(hostile).unwrap_err();
        assert!(e.to_string().contains("beyond the last"), "{e}");
    }

    #[test]
    fn decision_values_keep_their_order_as_scores() {
        let decisions = [-1e6, -3.0, -0.5, 0.0, 0.25, 4.0, 1e6];
        let scores: Vec<f64> = decisions.iter().map(|&d| positive_score(d)).collect();
        assert!(scores.windows(2).all(|w| 0.0 < w[0] && w[0] < w[1]), "{scores:?}");
    }
}
