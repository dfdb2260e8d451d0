//! [`Detector`]: novelty detection on a stream in fixed memory — the distance to the
//! centre of mass of the last `N` normal points ([`CentreOfMass`]), and a threshold at the
//! `q`-quantile of the recent scores ([`RecentQuantile`]: of the last `span` to `2·span`),
//! each less the window's own term `‖μ‖²`, plus that term now (below).
//!
//! **Learning a point** `x` (one the caller takes as normal):
//! 1. if it is at least `δ` (in feature space) from its nearest centre, and a centre is
//!    free, it becomes a centre — so while centres last every point of the window is within
//!    `δ` of the centre that represents it, and the represented centre of mass is within
//!    `δ` of the true one (the mean of vectors each moved by at most `δ`); once every
//!    centre is taken, it replaces the first centre that represents no point of the
//!    window (one the window has moved away from), so the centres follow a stream whose
//!    normal moves;
//! 2. its score against the window *before* it joins, `d²(x)`, is observed by the quantile
//!    estimator: the scores of points that were new to the model, which is what a new
//!    point's score is compared with (a caller that does not learn a point it flagged
//!    still counts its score, [`Detector::observe`], so that flags do not lower the
//!    threshold) — less the window's own term `‖μ‖²` (below);
//! 3. it joins the window, represented by its nearest centre; when the window already
//!    holds `N` points, the oldest leaves (its centre is read from a ring of `N` indices).
//!
//! **Scoring a point**: `d²(x)` and, once `warmup` scores were observed, whether it is
//! beyond the threshold (an anomaly).
//!
//! **The threshold follows the window.** A score is `d²(x) = k̂(x, x) − 2⟨φ̂(x), μ⟩ + ‖μ‖²`
//! (eq. 61), and `‖μ‖² = A/n²` belongs to the window, not to the point: it moves as points
//! come and go, the more so the shorter the window. A point far from every centre scores
//! `k̂(x, x) + ‖μ‖²`, the most any point can score at that moment, and must be flagged; a
//! quantile of past `d²` would compare it with scores taken when `‖μ‖²` was larger. So the
//! estimator observes `d²(x) − ‖μ‖²`, the point's part, and the threshold is its
//! `q`-quantile plus the window's `‖μ‖²` now ([`Detector::threshold`]): a point is flagged
//! when its own part is beyond the quantile of the recent points' parts. A frozen
//! [`NoveltyModel`] keeps the threshold of the moment, with the `‖μ‖²` it froze.
//!
//! **Memory**: the centre of mass ([`CentreOfMass::scalars_len`]`(m, d)` scalars, `m`
//! counts) and the ring (`N` `u32`); the quantile estimator is inline.

use super::{CentreOfMass, NoveltyModel, RecentQuantile};
use crate::storage::Storage;
use crate::{Error, Real};

/// Settings of a [`Detector`], unchecked.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DetectorParams<T> {
    /// The quantile of normal scores beyond which a point is an anomaly, `0 < q < 1`.
    pub quantile: f64,
    /// The feature-space distance from its nearest centre at which a point becomes a
    /// centre, `δ ≥ 0` (`0`: every new point while centres last).
    pub delta: T,
    /// Scores observed before any point is flagged, at least 1.
    pub warmup: u64,
    /// Scores per epoch of the threshold's estimator, at least 1: the threshold is the
    /// `q`-quantile of the last `span` to `2·span` scores ([`RecentQuantile`]).
    pub span: u64,
}

impl<T: Real> DetectorParams<T> {
    /// `q = 0.99`, `δ = 0.3`, 32 scores of warm-up, epochs of 2048 scores.
    pub fn new() -> Self {
        DetectorParams { quantile: 0.99, delta: T::from_f64(0.3), warmup: 32, span: 2048 }
    }
}

impl<T: Real> Default for DetectorParams<T> {
    fn default() -> Self {
        Self::new()
    }
}

/// A score: the squared distance and, after the warm-up, the verdict.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Score<T> {
    /// `d²(x)` to the window's centre of mass.
    pub distance2: T,
    /// The threshold it was compared with, `None` during the warm-up.
    pub threshold: Option<T>,
    /// `distance2 > threshold`.
    pub anomaly: bool,
}

/// A windowed kernel novelty detector in caller storage.
///
/// # Examples
/// ```
/// use kestrel_core::{Kernel, novelty::{CentreOfMass, Detector, DetectorParams}};
/// let (m, d, window) = (16, 2, 64);
/// let mass = CentreOfMass::new_in(vec![0.0; CentreOfMass::scalars_len(m, d)], vec![0u32; m], d,
///     Kernel::rbf(1.0)?, false)?;
/// let mut detector = Detector::new_in(mass, vec![0u32; window], DetectorParams::new())?;
/// for i in 0..200 {
///     let t = f64::from(i) * 0.1;
///     detector.learn(&[t.sin() * 0.3, t.cos() * 0.3])?;   // normal: near the origin
/// }
/// assert!(detector.score(&[3.0, -3.0])?.anomaly);
/// assert!(!detector.score(&[0.1, 0.2])?.anomaly);
/// # Ok::<(), kestrel_core::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct Detector<T, S, C, R> {
    pub(super) mass: CentreOfMass<T, S, C>,
    pub(super) ring: R,
    pub(super) head: usize,
    pub(super) filled: usize,
    pub(super) threshold: RecentQuantile<T>,
    pub(super) delta2: T,
    pub(super) warmup: u64,
}

impl<T: Real, S: Storage<T>, C: AsRef<[u32]> + AsMut<[u32]>, R: AsRef<[u32]> + AsMut<[u32]>> Detector<T, S, C, R> {
    /// A detector over `mass` (empty) with a window of `ring.len()` points.
    ///
    /// # Errors
    /// `InvalidParam` naming `window` (an empty ring), `quantile`, `delta` (negative or not
    /// finite) or `warmup` (0); `InvalidParam { name: "mass" }` for a set that is not empty.
    pub fn new_in(mass: CentreOfMass<T, S, C>, ring: R, params: DetectorParams<T>) -> Result<Self, Error> {
        if ring.as_ref().is_empty() {
            return Err(Error::InvalidParam { name: "window" });
        }
        let (threshold, delta2) = checked(params)?;
        if mass.centres_len() != 0 || !mass.is_empty() {
            return Err(Error::InvalidParam { name: "mass" });
        }
        Ok(Detector { mass, ring, head: 0, filled: 0, threshold, delta2, warmup: params.warmup })
    }

    /// The centre of mass of the window.
    pub fn mass(&self) -> &CentreOfMass<T, S, C> {
        &self.mass
    }

    /// Points in the window.
    pub fn len(&self) -> usize {
        self.filled
    }

    /// `true` before the first point.
    pub fn is_empty(&self) -> bool {
        self.filled == 0
    }

    /// The threshold a score is compared with now — the quantile of the recent scores'
    /// own parts plus the window's `‖μ‖²` (module doc) — `None` during the warm-up.
    pub fn threshold(&self) -> Option<T> {
        if self.threshold.count() < self.warmup { None } else { self.threshold_now() }
    }

    /// The quantile estimate so far plus the window's `‖μ‖²`, warm-up or not.
    fn threshold_now(&self) -> Option<T> {
        self.threshold.value().map(|q| q + self.mass.centre_norm2())
    }

    /// The detector frozen into a [`NoveltyModel`] (the window's centre of mass and the
    /// threshold) in `storage` ([`NoveltyModel::scalars_len`]`(d, m)` scalars). Frozen
    /// during the warm-up, the model takes the quantile's estimate so far (none before the
    /// second point): a model is all a short stream leaves.
    ///
    /// # Errors
    /// As [`NoveltyModel::from_mass_in`]: no point yet, or `storage` too short.
    pub fn model_in<M: Storage<T>>(&self, storage: M) -> Result<NoveltyModel<T, M>, Error> {
        NoveltyModel::from_mass_in(&self.mass, self.threshold_now(), storage)
    }

    /// Scores `x` against the window.
    ///
    /// # Errors
    /// As [`CentreOfMass::score`]: `DimensionMismatch`, `NonFinite`, `InvalidParam { name:
    /// "empty" }` before the first point.
    pub fn score(&self, x: &[T]) -> Result<Score<T>, Error> {
        self.assess(x)?.score().ok_or(Error::InvalidParam { name: "empty" })
    }

    /// Scores `x` and finds its nearest centre in one pass of `m` kernel evaluations
    /// ([`CentreOfMass::assess`]): what [`learn_assessed`](Self::learn_assessed) needs to
    /// learn `x` without a second pass.
    ///
    /// # Errors
    /// As [`score`](Self::score), but none for an empty window.
    pub fn assess(&self, x: &[T]) -> Result<Assessment<T>, Error> {
        let (distance2, nearest) = self.mass.assess(x)?;
        let threshold = self.threshold();
        let score = distance2.map(|distance2| Score {
            distance2,
            threshold,
            anomaly: threshold.is_some_and(|t| distance2 > t),
        });
        Ok(Assessment { score, nearest, stamp: self.stamp() })
    }

    /// What changes with every learned or observed point: an assessment made before is
    /// out of date.
    fn stamp(&self) -> (u64, u64) {
        (self.mass.len(), self.threshold.count())
    }

    /// Counts the score `distance2` of a point the caller does not learn (one it flagged)
    /// toward the threshold (its part beyond the window's `‖μ‖²`, module doc), so that the
    /// threshold stays the `q`-quantile of the recent scores of every point seen — only
    /// counting the points learned, each flag would lower it.
    ///
    /// # Errors
    /// `NonFinite` for NaN or ±∞ (the detector is unchanged).
    pub fn observe(&mut self, distance2: T) -> Result<(), Error> {
        self.threshold.observe(distance2 - self.mass.centre_norm2())
    }

    /// Learns `x` as normal (see the module doc); returns its score before it joined
    /// (`None` for the first point).
    ///
    /// # Errors
    /// As [`score`](Self::score) for `x`. The detector is unchanged on error.
    pub fn learn(&mut self, x: &[T]) -> Result<Option<T>, Error> {
        let assessment = self.assess(x)?;
        self.learn_assessed(x, &assessment)
    }

    /// [`learn`](Self::learn) with `assessment`, what [`assess`](Self::assess) gave for
    /// `x` on this detector: no kernel evaluation unless `x` becomes a centre. An
    /// assessment made before the detector last changed is made again.
    ///
    /// # Errors
    /// As [`learn`](Self::learn).
    pub fn learn_assessed(&mut self, x: &[T], assessment: &Assessment<T>) -> Result<Option<T>, Error> {
        if assessment.stamp != self.stamp() {
            return self.learn(x);
        }
        let window_term = self.mass.centre_norm2();
        let far = assessment.nearest.is_none_or(|(_, distance2)| distance2 >= self.delta2);
        let free = self.mass.centres_len() < self.mass.capacity();
        let unused = if far && !free { self.mass.counts().iter().position(|&a| a == 0) } else { None };
        let centre = if far && free {
            self.mass.add_centre(x)?
        } else if let Some(j) = unused {
            self.mass.replace_centre(j, x)?;
            j
        } else {
            assessment.nearest.ok_or(Error::InvalidParam { name: "centres" })?.0
        };
        self.mass.enter_at(centre)?;
        let before = assessment.score.map(|score| score.distance2);
        if let Some(score) = before {
            // Finite: `assess` checked it. `window_term` is `‖μ‖²` as it was when `x` was
            // scored, taken before `x` joined the window.
            self.threshold.observe(score - window_term)?;
        }
        let window = self.ring.as_ref().len();
        if self.filled == window {
            let oldest = self.ring.as_ref().get(self.head).copied().unwrap_or(0) as usize;
            self.mass.leave(oldest)?;
        } else {
            self.filled += 1;
        }
        if let Some(slot) = self.ring.as_mut().get_mut(self.head) {
            *slot = u32::try_from(centre).unwrap_or(u32::MAX);
        }
        self.head = (self.head + 1) % window;
        Ok(before)
    }
}

/// What one pass over the centres tells about a point ([`Detector::assess`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Assessment<T> {
    score: Option<Score<T>>,
    nearest: Option<(usize, T)>,
    stamp: (u64, u64),
}

impl<T: Copy> Assessment<T> {
    /// The score, `None` for an empty window.
    pub fn score(&self) -> Option<Score<T>> {
        self.score
    }
}

/// The quantile estimator and `δ²` of `params`, checked.
///
/// # Errors
/// `InvalidParam` naming `quantile`, `delta`, `warmup` or `span`.
pub(super) fn checked<T: Real>(params: DetectorParams<T>) -> Result<(RecentQuantile<T>, T), Error> {
    if !(params.delta >= T::ZERO && params.delta.is_finite()) {
        return Err(Error::InvalidParam { name: "delta" });
    }
    if params.warmup == 0 {
        return Err(Error::InvalidParam { name: "warmup" });
    }
    let threshold = match RecentQuantile::new(params.quantile, params.span) {
        Err(Error::InvalidParam { name: "q" }) => return Err(Error::InvalidParam { name: "quantile" }),
        other => other?,
    };
    Ok((threshold, params.delta * params.delta))
}

#[cfg(test)]
mod tests {
    use std::vec;
    use std::vec::Vec;

    use super::*;
    use crate::{Kernel, Rng};

    type Vecs<T> = Detector<T, Vec<T>, Vec<u32>, Vec<u32>>;

    fn detector<T: Real>(m: usize, window: usize, params: DetectorParams<T>) -> Vecs<T> {
        let kernel = Kernel::rbf(T::from_f64(0.5)).unwrap();
        let mass = CentreOfMass::new_in(vec![T::ZERO; CentreOfMass::scalars_len(m, 3)], vec![0; m], 3, kernel, false);
        Detector::new_in(mass.unwrap(), vec![0; window], params).unwrap()
    }

    /// Area under the ROC curve of `scores` for positives `anomalous`.
    fn auc(scores: &[(f64, bool)]) -> f64 {
        let positives: Vec<f64> = scores.iter().filter(|s| s.1).map(|s| s.0).collect();
        let negatives: Vec<f64> = scores.iter().filter(|s| !s.1).map(|s| s.0).collect();
        let wins: f64 = positives
            .iter()
            .flat_map(|p| {
                negatives.iter().map(move |n| {
                    if p > n {
                        1.0
                    } else if p == n {
                        0.5
                    } else {
                        0.0
                    }
                })
            })
            .sum();
        wins / (positives.len() * negatives.len()) as f64
    }

    /// Normal points from one Gaussian, anomalies shifted by 2.5 standard deviations in a
    /// random direction: AUC above 0.95, flags near the quantile's rate on normal points.
    fn separates_shifted_points<T: Real>() {
        let mut rng = Rng::seed_from_u64(8);
        let mut detector = detector::<T>(48, 300, DetectorParams { quantile: 0.95, ..DetectorParams::new() });
        let point = |shift: f64, rng: &mut Rng| -> Vec<T> {
            let direction: Vec<f64> = (0..3).map(|_| rng.normal::<f64>()).collect();
            let norm = direction.iter().map(|v| v * v).sum::<f64>().sqrt();
            direction.iter().map(|&v| T::from_f64(rng.normal::<f64>() * 0.5 + shift * v / norm)).collect()
        };
        for _ in 0..600 {
            detector.learn(&point(0.0, &mut rng)).unwrap();
        }
        let mut scores = Vec::new();
        let mut flagged_normal = 0;
        for i in 0..400 {
            let anomalous = i % 4 == 0;
            let x = point(if anomalous { 2.5 } else { 0.0 }, &mut rng);
            let score = detector.score(&x).unwrap();
            if !anomalous && score.anomaly {
                flagged_normal += 1;
            }
            scores.push((score.distance2.to_f64(), anomalous));
        }
        assert!(auc(&scores) > 0.95, "AUC {}", auc(&scores));
        assert!(flagged_normal <= 300 / 10, "{flagged_normal} of 300 normal points flagged at q = 0.95");
        assert_eq!(detector.len(), 300);
        assert!(detector.mass().centres_len() <= 48);
        // Frozen, it scores and flags exactly as the detector does.
        let m = detector.mass().centres_len();
        let model = detector.model_in(vec![T::ZERO; NoveltyModel::scalars_len(3, m)]).unwrap();
        let x = point(2.5, &mut rng);
        let (live, frozen) = (detector.score(&x).unwrap(), model.score(&x).unwrap());
        assert_eq!(live.distance2.to_f64().to_bits(), frozen.to_f64().to_bits(), "{live:?} vs {frozen:?}");
        assert_eq!(model.threshold(), detector.threshold());
    }

    /// The window forgets: after the normal regime moves, the old one becomes novel.
    fn the_window_follows_a_moving_normal<T: Real>() {
        let mut detector = detector::<T>(32, 100, DetectorParams::new());
        let at = |c: f64, i: u32| [T::from_f64(c + 0.05 * f64::from(i % 7)), T::from_f64(c), T::from_f64(-c)];
        for i in 0..200 {
            detector.learn(&at(0.0, i)).unwrap();
        }
        let old = at(0.0, 3);
        assert!(!detector.score(&old).unwrap().anomaly);
        for i in 0..200 {
            detector.learn(&at(2.0, i)).unwrap();
        }
        assert!(detector.score(&old).unwrap().distance2 > detector.score(&at(2.0, 3)).unwrap().distance2);
        assert_eq!(detector.mass().len(), 100);
    }

    /// Three regimes of three spots each, one after the other, for six centres: the
    /// centres of the first, which the window has left, are replaced by the third's, so
    /// every spot of the regime now normal is within `δ` of a centre and scores low.
    fn centres_follow_a_normal_that_moves<T: Real>() {
        let mut detector = detector::<T>(6, 60, DetectorParams::new());
        let spot = |c: f64, i: usize| [T::from_f64(c + i as f64), T::from_f64(c), T::from_f64(-c)];
        for c in [0.0, 10.0, -10.0] {
            for i in 0..200 {
                detector.learn(&spot(c, i % 3)).unwrap();
            }
        }
        assert_eq!(detector.mass().centres_len(), 6);
        let delta2 = 0.3 * 0.3;
        for i in 0..3 {
            let (_, distance2) = detector.mass().nearest_with_distance(&spot(-10.0, i)).unwrap();
            assert!(distance2.to_f64() < delta2, "spot {i}: {distance2:?}");
            assert!(!detector.score(&spot(-10.0, i)).unwrap().anomaly);
            assert!(detector.score(&spot(0.0, i)).unwrap().anomaly, "the first regime is novel again");
        }
    }

    /// Standard normal points in 3-D, then every point shifted by 4 in each coordinate: far
    /// from every centre, each scores the most any point can score now, and is flagged —
    /// with a short window or a long one, whatever the window's `‖μ‖²` did meanwhile, and
    /// the threshold reported is the one the score was compared with.
    fn far_points_are_flagged_whatever_the_window_did<T: Real>() {
        for window in [48, 256] {
            for seed in 0..12 {
                let mut rng = Rng::seed_from_u64(seed);
                let mut detector = detector::<T>(16, window, DetectorParams::new());
                let mut point =
                    |shift: f64| -> [T; 3] { core::array::from_fn(|_| T::from_f64(rng.normal::<f64>() + shift)) };
                for _ in 0..700 {
                    let x = point(0.0);
                    if !detector.score(&x).is_ok_and(|s| s.anomaly) {
                        detector.learn(&x).unwrap();
                    }
                }
                for i in 0..10 {
                    let score = detector.score(&point(4.0)).unwrap();
                    let threshold = detector.threshold().unwrap();
                    assert_eq!(score.threshold, Some(threshold));
                    assert!(score.anomaly, "window {window}, seed {seed}: shifted point {i} {score:?}");
                }
            }
        }
    }

    fn bad_input_and_settings<T: Real>() {
        let mut detector = detector::<T>(4, 8, DetectorParams::new());
        assert_eq!(detector.score(&[T::ZERO; 3]).err(), Some(Error::InvalidParam { name: "empty" }));
        assert_eq!(detector.learn(&[T::ZERO; 3]), Ok(None));
        assert_eq!(detector.threshold(), None);
        let before = (detector.len(), detector.mass().counts().to_vec());
        assert_eq!(detector.learn(&[T::ZERO; 2]), Err(Error::DimensionMismatch { expected: 3, got: 2 }));
        assert_eq!(detector.learn(&[T::from_f64(f64::NAN), T::ZERO, T::ZERO]), Err(Error::NonFinite));
        assert_eq!((detector.len(), detector.mass().counts().to_vec()), before);
        let kernel = Kernel::rbf(T::ONE).unwrap();
        let mass = || {
            CentreOfMass::new_in(vec![T::ZERO; CentreOfMass::scalars_len(4, 3)], vec![0u32; 4], 3, kernel, false)
                .unwrap()
        };
        for (params, name) in [
            (DetectorParams { quantile: 1.0, ..DetectorParams::new() }, "quantile"),
            (DetectorParams { delta: T::from_f64(-1.0), ..DetectorParams::new() }, "delta"),
            (DetectorParams { warmup: 0, ..DetectorParams::new() }, "warmup"),
            (DetectorParams { span: 0, ..DetectorParams::new() }, "span"),
        ] {
            assert_eq!(Detector::new_in(mass(), vec![0u32; 8], params).err(), Some(Error::InvalidParam { name }));
        }
        assert_eq!(
            Detector::new_in(mass(), Vec::<u32>::new(), DetectorParams::new()).err(),
            Some(Error::InvalidParam { name: "window" })
        );
    }

    macro_rules! gen_tests {
        ($($scalar:ident),*) => {$(
            mod $scalar {
                #[test]
                fn separates_shifted_points() {
                    super::separates_shifted_points::<$scalar>();
                }
                #[test]
                fn the_window_follows_a_moving_normal() {
                    super::the_window_follows_a_moving_normal::<$scalar>();
                }
                #[test]
                fn bad_input_and_settings() {
                    super::bad_input_and_settings::<$scalar>();
                }
                #[test]
                fn far_points_are_flagged_whatever_the_window_did() {
                    super::far_points_are_flagged_whatever_the_window_did::<$scalar>();
                }
                #[test]
                fn centres_follow_a_normal_that_moves() {
                    super::centres_follow_a_normal_that_moves::<$scalar>();
                }
            }
        )*};
    }

    gen_tests!(f32, f64);
}
