//! [`WindowNovelty`]: the novelty detector of `kestrel stream --learner novelty` — the
//! core's [`Detector`] (the feature-space distance to the centre of mass of the last `N`
//! normal samples, seed 002 eq. 61, flagged beyond the `q`-quantile of normal scores).
//!
//! **Warm-up.** The first `W` samples are taken as normal: they set the threshold (a
//! sample is flagged from sample `W + 1` on). When the learner standardises its features,
//! they also start the scaling: the warm-up keeps its samples raw, and at its end they
//! are standardised by the statistics of the whole warm-up and learned (centres chosen on
//! rows scaled by a handful of samples would be anywhere). Until then a sample has no
//! score and is not flagged; a stream that ends sooner still gives a model (its rows
//! learned, standardised by their statistics, with the threshold estimated so far).
//!
//! **After the warm-up** one pass over the centres ([`Detector::assess`]) gives a sample's
//! score and its nearest centre; learning it reuses the pass
//! ([`Detector::learn_assessed`]): the sample is learned as it was scored (standardised by
//! the statistics before it), then joins the statistics. Centres the window has left
//! are replaced by new ones, so the detector follows a normal that moves.
//!
//! **What is learned.** By default ([`Learn::Unflagged`]) a sample the detector flags is
//! not learned, so anomalies neither take centres nor pull the centre of mass toward
//! them; a normal regime that moves for good is then flagged for good. [`Learn::All`]
//! learns every sample, as River's detectors do: the window follows any change, and
//! anomalies join it. Either way every sample's score counts toward the threshold, which
//! is so the `q`-quantile of the recent scores of all samples (each less the window's own
//! term `‖μ‖²`, plus that term now: a sample far from every centre is always flagged;
//! [`Detector`]'s doc): about `1 − q` of a stream is flagged (set `q` below `1 −` the share
//! of anomalies expected).
//!
//! A prediction is the flag, `1` (anomaly) or `0`; [`OnlineLearner::last_score`] gives the
//! score `d²(x)` it came from. Labels are not learned from (`kestrel stream` scores the
//! flags against them).
//!
//! Memory: the detector's `m·d + m² + 2m` scalars, `m` counts and `N` ring entries
//! (`u32`) and its threshold's two estimators — what a device holds — and on the host two
//! dense rows, the scaler with its undo copy, the warm-up's `W·d` raw samples and, at the
//! warm-up's end, a copy of the detector ([`WindowNovelty::footprint`]).

use kestrel_core::kernel::KernelKind;
use kestrel_core::novelty::{
    Assessment, CentreOfMass, Detector, DetectorParams, DetectorState, NoveltyModel, RecentQuantile,
};
use kestrel_core::{Error, Kernel, Real};
use serde::{Deserialize, Serialize};

use super::input::{Input, ScalerState};
use super::{
    BuildError, Footprint, LearnerSize, OnlineLearner, StateError, Steps, decode_state, encode_state, expect_same,
};
use crate::limits::{reserve, zeroed};
use crate::model;
use crate::source::Record;

/// The format version of [`WindowNovelty`]'s saved state: 2 since the threshold's
/// estimator observes the scores less the window's `‖μ‖²` (format 1's observed whole
/// scores, which cannot be told apart afterwards).
const STATE_VERSION: u16 = 2;

/// The detector in host memory.
type HostDetector<T> = Detector<T, Vec<T>, Vec<u32>, Vec<u32>>;

/// Which samples the detector learns as normal.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Learn {
    /// Every sample the detector does not flag (and every warm-up sample).
    Unflagged,
    /// Every sample.
    All,
}

/// The configuration of a [`WindowNovelty`].
#[derive(Clone, Copy, Debug)]
pub struct NoveltySettings<T> {
    /// The kernel; scores use its normalised form (eq. 62-63) unless it is a Gaussian or
    /// Laplacian kernel, normalised already.
    pub kernel: Kernel<T>,
    /// The most centres `m`.
    pub centres: usize,
    /// The window `N`: normal samples the centre of mass is taken over.
    pub window: usize,
    /// The threshold's quantile `q`.
    pub quantile: f64,
    /// A sample at least this far (in feature space) from every centre becomes one.
    pub delta: T,
    /// Samples taken as normal before any is flagged, `W ≥ 2`.
    pub warmup: usize,
    /// Standardise the features by the warm-up's statistics.
    pub scale: bool,
    /// Which samples are learned.
    pub learn: Learn,
}

/// Windowed kernel novelty detection (module doc).
pub struct WindowNovelty<T> {
    settings: NoveltySettings<T>,
    input: Input<T>,
    /// The warm-up's raw samples (row-major) while it lasts, with scaling.
    warmup: Option<Vec<T>>,
    detector: HostDetector<T>,
    /// The score and nearest centre of the sample loaded, once predicted.
    assessment: Option<Assessment<T>>,
}

/// Everything [`WindowNovelty::save_state`](OnlineLearner::save_state) writes.
#[derive(Serialize, Deserialize)]
struct NoveltyState<T> {
    scaler: Option<ScalerState<T>>,
    warmup: Option<Vec<T>>,
    learn: Learn,
    detector: DetectorState<T>,
    scalars: Vec<T>,
    counts: Vec<u32>,
    ring: Vec<u32>,
}

impl<T: Real> WindowNovelty<T> {
    /// A detector of samples of `dim` features; its memory is allocated now.
    ///
    /// # Errors
    /// `InvalidParam` naming `dim`, `window`, `centers`, `warmup` (below 2), `quantile` or
    /// `delta`; [`BuildError::Alloc`] when the memory cannot be had.
    pub fn new(settings: NoveltySettings<T>, dim: usize) -> Result<Self, BuildError> {
        for (name, value) in [("dim", dim), ("window", settings.window), ("centers", settings.centres)] {
            if value == 0 {
                return Err(Error::InvalidParam { name }.into());
            }
        }
        if settings.warmup < 2 {
            return Err(Error::InvalidParam { name: "warmup" }.into());
        }
        let detector = Self::detector(&settings, dim)?;
        let warmup = match settings.scale {
            true => {
                let mut buffer = Vec::new();
                reserve(&mut buffer, settings.warmup.saturating_mul(dim), "the warm-up")?;
                Some(buffer)
            }
            false => None,
        };
        let input = Input::new(dim, settings.scale)?;
        Ok(WindowNovelty { settings, input, warmup, detector, assessment: None })
    }

    /// An empty detector of `settings`.
    fn detector(settings: &NoveltySettings<T>, dim: usize) -> Result<HostDetector<T>, BuildError> {
        let m = settings.centres;
        let scalars = zeroed(CentreOfMass::scalars_len(m, dim), "the centre of mass")?;
        let mass = CentreOfMass::new_in(
            scalars,
            zeroed(m, "the centres' counts")?,
            dim,
            settings.kernel,
            normalised(settings),
        )?;
        Ok(Detector::new_in(mass, zeroed(settings.window, "the window")?, params(settings))?)
    }

    /// The memory of a detector of `window` samples of `dim` features, `centres` centres, a
    /// warm-up of `warmup` samples, standardised when `scale`.
    pub fn footprint(window: usize, dim: usize, centres: usize, warmup: usize, scale: bool) -> Footprint {
        let scalars = CentreOfMass::scalars_len(centres, dim);
        let words = centres.saturating_add(window);
        let warmup = if scale { warmup.saturating_mul(dim) } else { 0 };
        Footprint {
            core_scalars: scalars,
            core_words: words,
            core_bytes: size_of::<RecentQuantile<T>>(),
            // The copy the warm-up's end learns into.
            host_scalars: warmup.saturating_add(scalars),
            host_bytes: words.saturating_mul(size_of::<u32>()),
            ..Footprint::default()
        }
        .plus(Input::<T>::footprint(dim, scale))
    }

    /// `true` while the warm-up's samples wait for their scaling.
    fn warming_up(&self) -> bool {
        self.warmup.is_some()
    }

    /// Adds the loaded sample to the warm-up; at its end, standardises the warm-up by its
    /// statistics and learns it into a copy of the detector, which replaces it.
    fn warm_up(&mut self) -> Result<(), Error> {
        self.input.observed()?;
        let Some(buffer) = self.warmup.as_mut() else { return Ok(()) };
        buffer.extend_from_slice(self.input.raw());
        let dim = self.input.dim();
        if buffer.len() < self.settings.warmup.saturating_mul(dim) {
            return Ok(());
        }
        match learned_warmup(&self.detector, &self.input, buffer) {
            Ok(detector) => {
                (self.detector, self.warmup) = (detector, None);
                Ok(())
            }
            Err(error) => {
                buffer.truncate(buffer.len() - dim);
                self.input.undo_observe();
                Err(error)
            }
        }
    }
}

/// A copy of `detector` that learned the raw rows `warmup`, standardised by `input`'s
/// statistics.
fn learned_warmup<T: Real>(
    detector: &HostDetector<T>,
    input: &Input<T>,
    warmup: &[T],
) -> Result<HostDetector<T>, Error> {
    let mut detector = detector.clone();
    let mut row = vec![T::ZERO; input.dim()];
    for x in warmup.chunks_exact(input.dim()) {
        row.copy_from_slice(x);
        input.transform(&mut row)?;
        detector.learn(&row)?;
    }
    Ok(detector)
}

/// Scores use the normalised kernel unless it is normalised already.
fn normalised<T: Real>(settings: &NoveltySettings<T>) -> bool {
    !matches!(settings.kernel.kind(), KernelKind::Rbf { .. } | KernelKind::Laplacian { .. })
}

/// The core detector's parameters: the first of the warm-up's samples has no score, so
/// `W − 1` scores are observed before the first flag.
fn params<T: Real>(settings: &NoveltySettings<T>) -> DetectorParams<T> {
    let warmup = u64::try_from(settings.warmup.saturating_sub(1)).unwrap_or(u64::MAX).max(1);
    DetectorParams { quantile: settings.quantile, delta: settings.delta, warmup, ..DetectorParams::new() }
}

impl<T: Real> Steps for WindowNovelty<T> {
    fn load(&mut self, record: &Record) -> Result<(), Error> {
        self.assessment = None;
        self.input.load(record)
    }

    fn predict_loaded(&mut self) -> Result<Option<f64>, Error> {
        if self.warming_up() {
            return Ok(Some(0.0));
        }
        let assessment = self.detector.assess(self.input.for_prediction()?)?;
        self.assessment = Some(assessment);
        Ok(Some(if assessment.score().is_some_and(|score| score.anomaly) { 1.0 } else { 0.0 }))
    }

    /// Learns the sample as it was scored (standardised by the statistics before it),
    /// then adds it to the statistics: one pass over the centres serves the prediction and
    /// the update.
    fn learn_loaded(&mut self, _label: f64) -> Result<(), Error> {
        if self.warming_up() {
            return self.warm_up();
        }
        let assessment = match self.assessment {
            Some(assessment) => assessment,
            None => self.detector.assess(self.input.for_prediction()?)?,
        };
        match assessment.score() {
            // Not learned, but its score still counts toward the threshold.
            Some(score) if score.anomaly && self.settings.learn == Learn::Unflagged => {
                self.detector.observe(score.distance2)
            }
            _ => {
                let detector = &mut self.detector;
                self.input.learn_as_predicted(|row| detector.learn_assessed(row, &assessment).map(drop))
            }
        }
    }
}

impl<T: Real> OnlineLearner for WindowNovelty<T> {
    fn is_classifier(&self) -> bool {
        false
    }

    fn is_detector(&self) -> bool {
        true
    }

    fn last_score(&self) -> Option<f64> {
        self.assessment.and_then(|a| a.score()).map(|score| score.distance2.to_f64())
    }

    fn threshold(&self) -> Option<f64> {
        self.detector.threshold().map(T::to_f64)
    }

    fn size(&self) -> LearnerSize {
        let window = self.warmup.as_ref().map_or(self.detector.len(), |raw| raw.len() / self.input.dim().max(1));
        LearnerSize { window, centres: self.detector.mass().centres_len() }
    }

    /// The model of the detector; a stream that ended in its warm-up gives the model of
    /// its rows, standardised by their statistics (the detector itself unchanged).
    fn encode(&mut self) -> Result<Vec<u8>, Error> {
        let warmed;
        let detector = match &self.warmup {
            Some(buffer) => {
                warmed = learned_warmup(&self.detector, &self.input, buffer)?;
                &warmed
            }
            None => &self.detector,
        };
        let (dim, m) = (self.input.dim(), detector.mass().centres_len());
        let model = detector.model_in(vec![T::ZERO; NoveltyModel::scalars_len(dim, m)])?;
        // A model without a threshold scores but cannot flag: `predict` could not use it.
        if model.threshold().is_none() {
            return Err(Error::InvalidParam { name: "threshold" });
        }
        self.input.scaled_model(model::to_bytes(&model)?)
    }

    fn no_model_yet(&self) -> String {
        "the detector has no threshold yet: it sets one from the scores of the samples it has seen, and one is too few"
            .into()
    }

    fn save_state(&self) -> Result<Vec<u8>, StateError> {
        let (scalars, counts, ring) = self.detector.storage();
        let state = NoveltyState {
            scaler: self.input.state(),
            warmup: self.warmup.clone(),
            learn: self.settings.learn,
            detector: self.detector.state(),
            scalars: scalars.to_vec(),
            counts: counts.to_vec(),
            ring: ring.to_vec(),
        };
        encode_state(STATE_VERSION, &state)
    }

    fn restore_state(&mut self, bytes: &[u8]) -> Result<(), StateError> {
        let state: NoveltyState<T> = decode_state(STATE_VERSION, bytes)?;
        let (settings, dim) = (&self.settings, self.input.dim());
        expect_same("samples learned", state.learn, settings.learn)?;
        expect_same("window", state.ring.len(), settings.window)?;
        expect_same("centres", state.counts.len(), settings.centres)?;
        expect_same("centre of mass scalars", state.scalars.len(), CentreOfMass::scalars_len(settings.centres, dim))?;
        if let Some(warmup) = &state.warmup
            && (!settings.scale || warmup.len() % dim != 0 || warmup.len() >= settings.warmup.saturating_mul(dim))
        {
            return Err(StateError::Mismatch(format!("a warm-up of {} values for {dim} features", warmup.len())));
        }
        let (kernel, normalised, params) = (settings.kernel, normalised(settings), params(settings));
        let (scalars, counts, ring) = (state.scalars, state.counts, state.ring);
        let detector = Detector::from_state_in(scalars, counts, ring, dim, kernel, normalised, params, state.detector)?;
        let warmup = match state.warmup {
            Some(mut buffer) => {
                let room = self.settings.warmup.saturating_mul(dim) - buffer.len();
                reserve(&mut buffer, room, "the warm-up")?;
                Some(buffer)
            }
            None => None,
        };
        self.input.restore(state.scaler)?;
        (self.detector, self.warmup, self.assessment) = (detector, warmup, None);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use kestrel_core::Rng;

    use super::*;
    use crate::detection::Detections;
    use crate::online::tests::{record, restored_learner_continues};

    fn settings(scale: bool, learn: Learn) -> NoveltySettings<f64> {
        NoveltySettings {
            kernel: Kernel::rbf(0.3).unwrap(),
            centres: 24,
            window: 200,
            quantile: 0.95,
            delta: 0.3,
            warmup: 50,
            scale,
            learn,
        }
    }

    /// A sensor in raw units (a pressure near 10⁵ Pa, a small offset, a temperature):
    /// normal readings from one regime, one in ten (label 1) shifted by four deviations
    /// of one channel.
    fn readings(n: usize, seed: u64) -> Vec<Record> {
        let mut rng = Rng::seed_from_u64(seed);
        (0..n)
            .map(|i| {
                let mut x = [1e5 + 300.0 * rng.normal::<f64>(), 0.01 * rng.normal::<f64>(), 20.0 + rng.normal::<f64>()];
                let anomaly = i >= 100 && i % 10 == 0;
                if anomaly {
                    let j = i / 10 % 3;
                    x[j] += [1200.0, 0.04, 4.0][j];
                }
                record(&x, f64::from(u8::from(anomaly)))
            })
            .collect()
    }

    fn detections(learner: &mut WindowNovelty<f64>, records: &[Record]) -> Detections {
        let mut detections = Detections::default();
        for r in records {
            let flag = learner.test_then_train(r).unwrap();
            detections.add(learner.last_score(), flag == Some(1.0), r.label);
        }
        detections
    }

    /// Standardised by its warm-up, the detector ranks the shifted readings above the
    /// normal ones and flags near `1 − q` of the stream, nearly all of them shifted ones;
    /// unscaled, the pressure swamps the other channels. (One reading in ten is shifted and
    /// `q = 0.95`: flagging a share `r` of the stream finds at most `r/0.1` of them.)
    #[test]
    fn detects_shifted_readings_in_raw_units() {
        let records = readings(3000, 1);
        for learn in [Learn::Unflagged, Learn::All] {
            let scaled = detections(&mut WindowNovelty::new(settings(true, learn), 3).unwrap(), &records);
            let raw = detections(&mut WindowNovelty::new(settings(false, learn), 3).unwrap(), &records);
            let (auc, raw_auc) = (scaled.auc().unwrap(), raw.auc().unwrap());
            assert!(auc > 0.95 && auc > raw_auc + 0.1, "{learn:?}: AUC {auc}, unscaled {raw_auc}");
            let rate = scaled.flagged as f64 / scaled.n as f64;
            assert!((0.03..0.09).contains(&rate), "{learn:?}: {rate} flagged at q = 0.95");
            let (precision, recall) = (scaled.precision().unwrap(), scaled.recall().unwrap());
            assert!(precision > 0.9 && recall > 0.9 * rate / 0.1, "{learn:?}: precision {precision}, recall {recall}");
        }
    }

    /// A stream that ends in its warm-up still gives a model: its rows standardised and
    /// learned, with the threshold estimated so far; the learner itself is unchanged.
    #[test]
    fn a_short_stream_gives_a_model() {
        let records = readings(30, 7);
        let mut learner = WindowNovelty::new(settings(true, Learn::Unflagged), 3).unwrap();
        for r in &records {
            learner.test_then_train(r).unwrap();
        }
        let before = learner.save_state().unwrap();
        let mut model = model::load(&learner.encode().unwrap()).unwrap();
        assert_eq!(learner.save_state().unwrap(), before);
        let far = record(&[1e5 + 3000.0, 0.1, 30.0], 1.0);
        let (near, far) =
            (model.novelty_score(&records[5]).unwrap().unwrap(), model.novelty_score(&far).unwrap().unwrap());
        assert!(far > near, "{far} vs {near}");
        assert_eq!(model.predict(&record(&[1e5 + 3000.0, 0.1, 30.0], 1.0)).unwrap(), 1.0);
    }

    /// No flag and no score during the warm-up; with scaling, none until it ends.
    #[test]
    fn the_warm_up_is_taken_as_normal() {
        let records = readings(120, 2);
        for scale in [true, false] {
            let mut learner = WindowNovelty::new(settings(scale, Learn::Unflagged), 3).unwrap();
            for (i, r) in records.iter().enumerate() {
                let flag = learner.test_then_train(r).unwrap();
                let scored = learner.last_score().is_some();
                if i < 50 {
                    assert_eq!(flag, Some(0.0), "row {i}");
                    assert_eq!(scored, !scale && i > 0, "row {i}");
                } else {
                    assert!(scored, "row {i}");
                }
            }
        }
    }

    /// Resumed at any stage (in the warm-up, at its end, later), the detector continues bit
    /// for bit; a state of another configuration is refused.
    #[test]
    fn restored_detectors_continue_exactly() {
        let records = readings(900, 3);
        for scale in [true, false] {
            for learn in [Learn::Unflagged, Learn::All] {
                for split in [10, 50, 51, 400] {
                    let mut a = WindowNovelty::new(settings(scale, learn), 3).unwrap();
                    let mut b = WindowNovelty::new(settings(scale, learn), 3).unwrap();
                    restored_learner_continues(&mut a, &mut b, &records, split);
                }
            }
        }
        let mut learner = WindowNovelty::new(settings(true, Learn::Unflagged), 3).unwrap();
        detections(&mut learner, &records[..300]);
        let state = learner.save_state().unwrap();
        let other = |settings| WindowNovelty::new(settings, 3).unwrap().restore_state(&state).unwrap_err().to_string();
        let e = other(NoveltySettings { window: 100, ..settings(true, Learn::Unflagged) });
        assert_eq!(e, "learner state is for another configuration: window 200 saved, 100 configured");
        let e = other(settings(true, Learn::All));
        assert_eq!(e, "learner state is for another configuration: samples learned Unflagged saved, All configured");
        let e = other(settings(false, Learn::Unflagged));
        assert!(e.contains("feature scaling true saved, false configured"), "{e}");
    }

    /// The model file scores and flags as the learner does, bit for bit, in f64 and f32.
    #[test]
    fn the_model_file_predicts_as_the_learner() {
        fn check<T: Real>() {
            let records = readings(600, 4);
            let s = settings(true, Learn::Unflagged);
            let settings = NoveltySettings {
                kernel: Kernel::rbf(T::from_f64(0.3)).unwrap(),
                centres: s.centres,
                window: s.window,
                quantile: s.quantile,
                delta: T::from_f64(0.3),
                warmup: s.warmup,
                scale: s.scale,
                learn: s.learn,
            };
            let mut learner = WindowNovelty::<T>::new(settings, 3).unwrap();
            for r in &records {
                learner.test_then_train(r).unwrap();
            }
            let mut model = model::load(&learner.encode().unwrap()).unwrap();
            assert_eq!((model.info().kind, model.info().scaled), ("novelty", true));
            let mut flagged = 0;
            for r in &readings(300, 5) {
                let flag = learner.predict(r).unwrap().unwrap();
                assert_eq!(model.predict(r).unwrap(), flag);
                let score = model.novelty_score(r).unwrap().unwrap();
                assert_eq!(score.to_bits(), learner.last_score().unwrap().to_bits());
                flagged += usize::from(flag == 1.0);
            }
            assert!(flagged > 0 && flagged < 300, "{flagged} flagged: both verdicts compared");
        }
        check::<f64>();
        check::<f32>();
    }

    /// A rejected sample changes nothing, in the warm-up and after; settings out of range
    /// are refused when the learner is built.
    #[test]
    fn bad_samples_and_settings_are_refused() {
        let records = readings(200, 6);
        for at in [20, 150] {
            let mut learner = WindowNovelty::new(settings(true, Learn::Unflagged), 3).unwrap();
            detections(&mut learner, &records[..at]);
            let before = learner.save_state().unwrap();
            let nan = record(&[1.0, f64::NAN, 2.0], 0.0);
            assert_eq!(learner.test_then_train(&nan), Err(Error::NonFinite));
            let wide = Record { indices: vec![7], values: vec![1.0], ..Record::default() };
            assert!(learner.test_then_train(&wide).is_err());
            assert_eq!(learner.save_state().unwrap(), before, "at {at}");
        }
        let refused = |settings| WindowNovelty::new(settings, 3).err();
        let name = |name| Some(BuildError::Core(Error::InvalidParam { name }));
        let s = settings(true, Learn::All);
        assert_eq!(refused(NoveltySettings { warmup: 1, ..s }), name("warmup"));
        assert_eq!(refused(NoveltySettings { window: 0, ..s }), name("window"));
        assert_eq!(refused(NoveltySettings { centres: 0, ..s }), name("centers"));
        assert_eq!(refused(NoveltySettings { quantile: 1.0, ..s }), name("quantile"));
        assert_eq!(refused(NoveltySettings { delta: f64::NAN, ..s }), name("delta"));
        assert_eq!(WindowNovelty::new(s, 0).err(), name("dim"));
    }

    /// The footprint is the detector's buffers as allocated (and, on a device, those
    /// alone: what `kestrel budget --target cortex-m` prints).
    #[test]
    fn the_footprint_counts_the_buffers() {
        let learner = WindowNovelty::new(settings(true, Learn::All), 3).unwrap();
        let (scalars, counts, ring) = learner.detector.storage();
        let footprint = WindowNovelty::<f64>::footprint(200, 3, 24, 50, true);
        assert_eq!(footprint.core_scalars, scalars.len() + kestrel_core::scaler::Scaler::scalars_len(3));
        assert_eq!(footprint.core_words, counts.len() + ring.len());
        let on_device = WindowNovelty::<f32>::footprint(200, 3, 24, 50, true).bytes::<f32>(4, false);
        let estimators = size_of::<RecentQuantile<f32>>();
        assert_eq!(on_device, (24 * 3 + 24 * 24 + 48 + 4 * 3) * 4 + (24 + 200) * 4 + estimators);
    }
}
