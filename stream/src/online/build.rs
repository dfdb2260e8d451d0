//! The online learner `kestrel stream` runs, built from plain settings with the stream's
//! defaults — shared by the CLI and the Python package, so that a learner built either way
//! has the same state (its `save_state` bytes are interchangeable).
//!
//! A stream cannot resolve `auto` (there is no data set to choose from before the first
//! row): the width defaults to `1/d` (scikit-learn's `gamma="scale"` for standardised
//! features), `C` to 1. Three settings, unless given, are raced instead ([`Raced`]):
//! rsvm's RBF width (learners of widths `1/d`, `1/(4d)` and `4/d`), svm's cost (`C` = 1,
//! 0.1 and 0.01) and slkl's ν (0.01, 1 and 100) — the candidates run side by side for the
//! first [`RACE_WINDOWS`] window, and the one that predicted best goes on alone
//! (`online/race.rs`). The learner's memory
//! ([`Footprint`]) is checked against the budget before anything is allocated.

use kestrel_core::{Error, Kernel, Real, dcd, slkl};

use super::race::Race;
use super::{
    BuildError, ClassProbabilities, Footprint, Learn, NoveltySettings, OnlineLearner, RsvmSettings, WindowNovelty,
    WindowRsvm, WindowSlkl, WindowSvm,
};
use crate::batch::fit::{KernelChoice, KernelSettings, Setting, SvmSettings, unit_variance_width};

/// `kestrel stream --memory` unless told, in arrivals.
pub const DEFAULT_MEMORY: usize = 2000;
/// The most classes a stream takes unless told (`--classes`).
pub const DEFAULT_STREAM_CLASSES: usize = 16;
/// novelty's threshold quantile unless told (`--quantile`).
pub const DEFAULT_QUANTILE: f64 = 0.99;
/// novelty's warm-up unless told (`--warmup`), in samples.
pub const DEFAULT_WARMUP: usize = 256;
/// rsvm's centre selection threshold unless told (`--delta`): the distance from the
/// centres' span, the sine of an angle for RBF. Chosen by measurement: against 0.3 it
/// scored as well or better on eight streams (Bananas and ImageSegments +0.6 point;
/// BENCHMARKS.md).
pub const DEFAULT_RSVM_DELTA: f64 = 0.1;
/// novelty's centre threshold unless told (`--delta`): the distance from every centre.
pub const DEFAULT_NOVELTY_DELTA: f64 = 0.3;
/// The window unless told (`--window`), in samples: svm, slkl and rsvm.
pub const DEFAULT_WINDOW: usize = 256;
/// The centres unless told (`--centers`): slkl and rsvm.
pub const DEFAULT_CENTERS: usize = 32;
/// novelty's window unless told (`--window`): the normal samples its centre of mass is
/// taken over, a recent normal against which faults that only break the features'
/// correlation stand out. With [`DEFAULT_NOVELTY_CENTERS`], chosen by measurement
/// (BENCHMARKS.md): against a window of 256 and 32 centres, a generated sensor stream's
/// AUC rose from 0.72 to 0.78 and its rate by a quarter, and five one-class sets scored
/// within 0.01 either way.
pub const DEFAULT_NOVELTY_WINDOW: usize = 48;
/// novelty's centres unless told (`--centers`): a third of its window.
pub const DEFAULT_NOVELTY_CENTERS: usize = 16;
/// The most coordinate steps after an arrival unless told (`--steps-per-sample`): svm and
/// rsvm. Their stopping rule needs a whole pass over the window (256 steps by default), and
/// a lower cap cost accuracy on River's streams (rsvm on Agrawal −2.5 points at 100,
/// ImageSegments svm −0.4; BENCHMARKS.md).
pub const DEFAULT_STEPS: usize = 300;
/// slkl's cap on steps after an arrival unless told. Chosen by measurement (BENCHMARKS.md,
/// issue 11): on seven regression streams the prequential RMSE at 20 was within 0.12 % of
/// that at 300 or lower (TrumpApproval and WaterFlow the same to the digit, Friedman −2 %),
/// the saved model's own RMSE within 0.5 %, at 1.5-4× the rate; 10 lost 1.2 % on
/// friedman1.
pub const DEFAULT_SLKL_STEPS: usize = 20;
/// svm's stopping tolerance unless told (`--eps`): a pass over the window whose projected
/// gradients spread by at most this, the core's [`dcd::WINDOW_EPSILON`] (chosen by
/// measurement on River's streams, its doc).
pub const DEFAULT_SVM_EPS: f64 = dcd::WINDOW_EPSILON;
/// rsvm's stopping tolerance unless told (`--eps`). Its Nyström features are less well
/// conditioned than svm's raw ones: at 0.5 and 1 the mean accuracy over five seeds fell by
/// up to 0.7 and 1.1 points (Agrawal, Hyperplane); at 0.3 the mean over ten seeds moved by
/// −0.11 to +0.17 point at 0.9-1.5× the rate (BENCHMARKS.md, issue 11).
pub const DEFAULT_RSVM_EPS: f64 = 0.3;

/// rsvm's RBF widths raced when `--gamma` is not given, as multiples of `1/d`: the first
/// is the width without a race and leads until another predicts better. Chosen by
/// measurement on River's streams (BENCHMARKS.md, issue 11).
pub const RACED_WIDTHS: [f64; 3] = [1.0, 0.25, 4.0];
/// svm's costs `C` raced when `--c` is not given: the first is the cost without a race and
/// leads until another predicts better. Chosen by measurement on River's streams
/// (BENCHMARKS.md, issue 11): a smaller `C` regularises more, which a noisy stream needs
/// (Phishing and Hyperplane stream best at 0.01), and 10 streamed best on none.
pub const RACED_COSTS: [f64; 3] = [1.0, 0.1, 0.01];
/// slkl's ν raced when `--nu` is not given: the first is the ν without a race and leads
/// until another predicts better. ν weighs the penalty on the kernel weights against the
/// window's fit `yᵀ(I + K̃/λ)⁻¹y`, which grows with the targets' scale, unknown before the
/// stream: values two orders apart. Chosen by measurement on River's regression streams
/// (BENCHMARKS.md, issue 11): a noisy stream needs a large ν (SP500Stocks 100), a smooth
/// one a small ν.
pub const RACED_NUS: [f64; 3] = [0.01, 1.0, 100.0];
/// The windows of arrivals a race lasts: one (rsvm's warm-up). On eight of River's streams
/// the leader of rsvm's widths after one window was the leader after two.
pub const RACE_WINDOWS: usize = 1;

/// A setting a stream races when it is not given (module doc).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Raced {
    /// rsvm's RBF widths, [`RACED_WIDTHS`] times `1/d`.
    Widths,
    /// svm's costs, [`RACED_COSTS`].
    Costs,
    /// slkl's ν, [`RACED_NUS`].
    Nus,
}

impl Raced {
    /// The candidates' values for `dim` features, the first the setting without a race.
    pub fn values(self, dim: usize) -> [f64; 3] {
        match self {
            Raced::Widths => RACED_WIDTHS.map(|multiple| multiple * unit_variance_width(dim)),
            Raced::Costs => RACED_COSTS,
            Raced::Nus => RACED_NUS,
        }
    }

    /// The setting's name, as the summary's `chosen` gives it.
    pub fn setting(self) -> &'static str {
        match self {
            Raced::Widths => "gamma",
            Raced::Costs => "c",
            Raced::Nus => "nu",
        }
    }

    /// What is raced, in words: `widths`, `costs`.
    pub fn noun(self) -> &'static str {
        match self {
            Raced::Widths => "widths",
            Raced::Costs => "costs",
            Raced::Nus => "values of nu",
        }
    }

    /// The flag that gives one value instead, so that the learner learns alone.
    pub fn flag(self) -> &'static str {
        match self {
            Raced::Widths => "--gamma",
            Raced::Costs => "--c",
            Raced::Nus => "--nu",
        }
    }

    /// What is raced and the flag that learns one value instead, in words.
    pub fn described(self) -> String {
        format!("its {} ({} learns one)", self.noun(), self.flag())
    }
}

/// The windowed learners.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StreamLearner {
    /// The windowed linear SVM.
    Svm,
    /// Windowed SLKL regression.
    Slkl,
    /// The streaming reduced-kernel SVM.
    Rsvm,
    /// Kernel novelty detection.
    Novelty,
}

impl StreamLearner {
    /// The centre threshold δ unless told: novelty's, or rsvm's (which the others ignore).
    pub fn default_delta(self) -> f64 {
        if self == StreamLearner::Novelty { DEFAULT_NOVELTY_DELTA } else { DEFAULT_RSVM_DELTA }
    }

    /// The cap on steps after an arrival unless told: slkl's, or the others' (which novelty
    /// ignores).
    pub fn default_steps(self) -> usize {
        if self == StreamLearner::Slkl { DEFAULT_SLKL_STEPS } else { DEFAULT_STEPS }
    }

    /// The stopping tolerance unless told: svm's and rsvm's projected-gradient spread,
    /// slkl's relative decrease (the core's, 10⁻⁴); `None` for novelty, which does not
    /// iterate.
    pub fn default_eps(self) -> Option<f64> {
        match self {
            StreamLearner::Svm => Some(DEFAULT_SVM_EPS),
            StreamLearner::Rsvm => Some(DEFAULT_RSVM_EPS),
            StreamLearner::Slkl => Some(slkl::DEFAULT_EPSILON),
            StreamLearner::Novelty => None,
        }
    }

    /// The window unless told: novelty's, or the others'.
    pub fn default_window(self) -> usize {
        if self == StreamLearner::Novelty { DEFAULT_NOVELTY_WINDOW } else { DEFAULT_WINDOW }
    }

    /// The centres unless told: novelty's, or the others' (which svm ignores).
    pub fn default_centers(self) -> usize {
        if self == StreamLearner::Novelty { DEFAULT_NOVELTY_CENTERS } else { DEFAULT_CENTERS }
    }
}

/// What [`build`] takes: `kestrel stream`'s flags about the learner.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct StreamSettings {
    /// The learner.
    pub learner: StreamLearner,
    /// Samples the learner keeps.
    pub window: usize,
    /// Centres (slkl: candidates, the first samples; rsvm: the most the warm-up selects).
    pub centers: usize,
    /// The most coordinate steps after each arrival.
    pub steps_per_sample: usize,
    /// The stopping tolerance of the steps after each arrival (svm, rsvm: LIBLINEAR's `ε`
    /// on the window; slkl: the relative decrease); `None` for the learner's default
    /// ([`StreamLearner::default_eps`]).
    pub eps: Option<f64>,
    /// The kernel (slkl, rsvm); its width defaults to `1/d`, `auto` is refused.
    pub kernel: KernelSettings,
    /// SLKL's ν (absolute); `None` races [`RACED_NUS`].
    pub nu: Option<f64>,
    /// The SVMs' settings (svm, rsvm); `C` defaults to 1, `auto` is refused.
    pub svm: SvmSettings,
    /// The centre selection threshold δ: rsvm's distance to the centres' span, novelty's
    /// distance to the nearest centre.
    pub delta: f64,
    /// novelty: the quantile of normal scores beyond which a sample is flagged.
    pub quantile: f64,
    /// novelty: the samples taken as normal before any is flagged (and, when scaling,
    /// whose statistics scale the rest).
    pub warmup: usize,
    /// novelty: which samples are learned.
    pub learn: Learn,
    /// Standardise the features online.
    pub scale: bool,
    /// Let the centres follow a stream that moves (slkl, rsvm).
    pub renew: bool,
    /// How long the SVMs remember samples that left the window, in arrivals (0: not).
    pub memory: usize,
    /// The most classes (svm, rsvm).
    pub classes: usize,
    /// Seed of every random choice.
    pub seed: u64,
    /// The most bytes the learner may take.
    pub budget: Option<usize>,
}

impl StreamSettings {
    /// `learner` with `kestrel stream`'s defaults: window 256 and 32 centres (novelty: 48 and
    /// 16), at most 300 steps per sample (slkl: 20) until a pass spreads by at most 1 (svm)
    /// or 0.3 (rsvm) (slkl: its relative decrease of 10⁻⁴), the RBF kernel of width `1/d` (rsvm:
    /// the widths [`RACED_WIDTHS`] raced), ν = 0.01 (slkl races [`RACED_NUS`]), C = 1 (svm: the costs [`RACED_COSTS`]
    /// raced) with the squared hinge and bias 1, δ = 0.1 (rsvm) or 0.3 (novelty), standardised
    /// features, renewal on, a memory of 2000 arrivals, up to 16 classes, seed 1; novelty:
    /// the 0.99 quantile after a warm-up of 256 samples, learning the samples it does not
    /// flag.
    pub fn new(learner: StreamLearner) -> Self {
        StreamSettings {
            learner,
            window: learner.default_window(),
            centers: learner.default_centers(),
            steps_per_sample: learner.default_steps(),
            eps: None,
            kernel: KernelSettings::default(),
            nu: None,
            svm: SvmSettings::default(),
            delta: learner.default_delta(),
            quantile: DEFAULT_QUANTILE,
            warmup: DEFAULT_WARMUP,
            learn: Learn::Unflagged,
            scale: true,
            renew: true,
            memory: DEFAULT_MEMORY,
            classes: DEFAULT_STREAM_CLASSES,
            seed: 1,
            budget: None,
        }
    }

    /// The stopping tolerance: the setting, or the learner's default (`None` for novelty).
    pub fn eps(&self) -> Option<f64> {
        self.eps.or(self.learner.default_eps())
    }

    /// The kernel width for `dim` features: the setting, or `1/d`.
    ///
    /// # Errors
    /// [`BuildFailure::Auto`] for `auto`.
    pub fn gamma(&self, dim: usize) -> Result<f64, BuildFailure> {
        Setting::value_or(self.kernel.gamma, unit_variance_width(dim), "--gamma").map_err(BuildFailure::Auto)
    }

    /// What the learner races: rsvm with the RBF kernel and no `--gamma` its widths, svm
    /// without `--c` its costs, slkl without `--nu` its ν; `None` for a learner that
    /// learns alone.
    pub fn raced(&self) -> Option<Raced> {
        match self.learner {
            StreamLearner::Rsvm if self.kernel.kind == KernelChoice::Rbf && self.kernel.gamma.is_none() => {
                Some(Raced::Widths)
            }
            StreamLearner::Svm if self.svm.c.is_none() => Some(Raced::Costs),
            StreamLearner::Slkl if self.nu.is_none() => Some(Raced::Nus),
            _ => None,
        }
    }

    /// The cost: the setting, or 1.
    ///
    /// # Errors
    /// [`BuildFailure::Auto`] for `auto`.
    pub fn cost(&self) -> Result<f64, BuildFailure> {
        Setting::value_or(self.svm.c, 1.0, "--c").map_err(BuildFailure::Auto)
    }

    /// The stream's memory for `dim` features, racing what [`raced`](Self::raced) says.
    pub fn footprint<T: Real>(&self, dim: usize) -> Footprint {
        self.footprint_racing::<T>(dim, self.raced())
    }

    /// The stream's memory for `dim` features when it races `raced` (`None`: one learner):
    /// [`learner_footprint`](Self::learner_footprint) once per candidate, and a
    /// classifier's class probabilities once.
    pub fn footprint_racing<T: Real>(&self, dim: usize, raced: Option<Raced>) -> Footprint {
        let one = self.learner_footprint::<T>(dim);
        let candidates = raced.map_or(1, |raced| raced.values(dim).len());
        (1..candidates).fold(one, |sum, _| sum.plus(one)).plus(self.probabilities_footprint())
    }

    /// The host's bytes of a classifier's class probabilities (`ClassProbabilities`, one
    /// for the stream whatever it races); nothing for the other learners.
    fn probabilities_footprint(&self) -> Footprint {
        let classifier = matches!(self.learner, StreamLearner::Svm | StreamLearner::Rsvm);
        let host_bytes = if classifier { ClassProbabilities::bytes(self.classes) } else { 0 };
        Footprint { host_bytes, ..Footprint::default() }
    }

    /// The memory of one learner of these settings for `dim` features (what a device,
    /// which runs one learner, holds).
    pub fn learner_footprint<T: Real>(&self, dim: usize) -> Footprint {
        let (remembering, scale) = (self.memory > 0, self.scale);
        match self.learner {
            StreamLearner::Svm => WindowSvm::<T>::footprint(self.window, dim, scale, self.classes, remembering),
            StreamLearner::Slkl => WindowSlkl::<T>::footprint(self.window, dim, self.centers, scale),
            StreamLearner::Rsvm => {
                let (window, centers, classes) = (self.window, self.centers, self.classes);
                WindowRsvm::<T>::footprint(window, dim, centers, scale, classes, remembering, self.renew)
            }
            StreamLearner::Novelty => WindowNovelty::<T>::footprint(self.window, dim, self.centers, self.warmup, scale),
        }
    }
}

/// Why [`build`] refused the settings.
#[derive(Debug, thiserror::Error)]
pub enum BuildFailure {
    /// `auto` for a setting a stream cannot resolve; the message names it.
    #[error("{0}")]
    Auto(String),
    /// The learner would take more than the budget.
    #[error(
        "the learner needs {bytes} bytes{}{}, over --budget {budget}",
        classes_note(*.classes),
        .raced.map_or(String::new(), |raced| format!(", racing {}", raced.described()))
    )]
    OverBudget {
        /// Bytes the learner needs.
        bytes: usize,
        /// The budget.
        budget: usize,
        /// The most classes, for the classifiers.
        classes: Option<usize>,
        /// What the learner races, if anything.
        raced: Option<Raced>,
    },
    /// The learner refused its configuration.
    #[error(transparent)]
    Refused(#[from] BuildError),
}

fn classes_note(classes: Option<usize>) -> String {
    classes.map_or_else(String::new, |classes| format!(" for up to {classes} classes (--classes)"))
}

impl From<Error> for BuildFailure {
    fn from(error: Error) -> Self {
        BuildFailure::Refused(BuildError::Core(error))
    }
}

/// The learner of `settings` for samples of `dim` features, checked against the budget
/// before it is allocated.
///
/// # Errors
/// [`BuildFailure`].
pub fn build<T: Real>(
    settings: &StreamSettings,
    dim: usize,
) -> Result<Box<dyn OnlineLearner + Send + Sync>, BuildFailure> {
    let bytes = settings.footprint::<T>(dim).bytes::<T>(size_of::<usize>(), true);
    if let Some(budget) = settings.budget.filter(|&budget| bytes > budget) {
        let classes = matches!(settings.learner, StreamLearner::Svm | StreamLearner::Rsvm).then_some(settings.classes);
        return Err(BuildFailure::OverBudget { bytes, budget, classes, raced: settings.raced() });
    }
    match settings.raced() {
        Some(raced) => race::<T>(settings, raced, dim),
        None => alone::<T>(settings, dim),
    }
}

/// The race of `raced`'s candidates, each the learner of `settings` with that value given.
fn race<T: Real>(
    settings: &StreamSettings,
    raced: Raced,
    dim: usize,
) -> Result<Box<dyn OnlineLearner + Send + Sync>, BuildFailure> {
    let mut candidates: Vec<(f64, Box<dyn OnlineLearner + Send + Sync>)> = Vec::new();
    for value in raced.values(dim) {
        let given = Some(Setting::Value(value));
        let candidate = match raced {
            Raced::Widths => StreamSettings { kernel: KernelSettings { gamma: given, ..settings.kernel }, ..*settings },
            Raced::Costs => StreamSettings { svm: SvmSettings { c: given, ..settings.svm }, ..*settings },
            Raced::Nus => StreamSettings { nu: Some(value), ..*settings },
        };
        candidates.push((value, alone::<T>(&candidate, dim)?));
    }
    let trial = u64::try_from(settings.window.saturating_mul(RACE_WINDOWS)).unwrap_or(u64::MAX);
    Ok(Box::new(Race::new(raced.setting(), candidates, trial)?))
}

/// The one learner of `settings` (a raced setting is taken at its first value).
fn alone<T: Real>(settings: &StreamSettings, dim: usize) -> Result<Box<dyn OnlineLearner + Send + Sync>, BuildFailure> {
    let decay = dcd::decay_over::<T>(settings.memory);
    let steps = settings.steps_per_sample;
    let learner: Box<dyn OnlineLearner + Send + Sync> = match settings.learner {
        StreamLearner::Svm => {
            let svm = WindowSvm::<T>::new(
                settings.window,
                dim,
                svm_params(settings)?,
                steps,
                settings.seed,
                settings.scale,
                decay,
            )?;
            Box::new(svm.with_classes(settings.classes))
        }
        StreamLearner::Slkl => {
            let mut params = slkl::Params::new()
                .kernel(kernel(settings, dim)?)
                .nu(T::from_f64(settings.nu.unwrap_or(RACED_NUS[0])))
                .seed(settings.seed);
            if let Some(eps) = settings.eps() {
                params = params.epsilon(T::from_f64(eps));
            }
            let slkl =
                WindowSlkl::<T>::new(settings.window, dim, settings.centers, params.check()?, steps, settings.scale)?;
            Box::new(if settings.renew { slkl } else { slkl.without_renewal() })
        }
        StreamLearner::Rsvm => rsvm::<T>(settings, dim, decay)?,
        StreamLearner::Novelty => {
            let novelty = NoveltySettings {
                kernel: kernel(settings, dim)?,
                centres: settings.centers,
                window: settings.window,
                quantile: settings.quantile,
                delta: T::from_f64(settings.delta),
                warmup: settings.warmup,
                scale: settings.scale,
                learn: settings.learn,
            };
            Box::new(WindowNovelty::new(novelty, dim)?)
        }
    };
    Ok(learner)
}

/// rsvm of `settings` (its width given or `1/d`), with the SVMs' memory `decay`.
fn rsvm<T: Real>(
    settings: &StreamSettings,
    dim: usize,
    decay: Option<T>,
) -> Result<Box<dyn OnlineLearner + Send + Sync>, BuildFailure> {
    let rsvm = RsvmSettings {
        kernel: kernel(settings, dim)?,
        centres: settings.centers,
        delta: T::from_f64(settings.delta),
        window: settings.window,
        params: svm_params(settings)?,
        steps: settings.steps_per_sample,
        seed: settings.seed,
        scale: settings.scale,
        memory: decay,
        renew: settings.renew,
    };
    Ok(Box::new(WindowRsvm::new(rsvm, dim)?.with_classes(settings.classes)))
}

fn svm_params<T: Real>(settings: &StreamSettings) -> Result<dcd::ValidParams<T>, BuildFailure> {
    Ok(settings.svm.params(settings.cost()?, settings.eps())?)
}

fn kernel<T: Real>(settings: &StreamSettings, dim: usize) -> Result<Kernel<T>, BuildFailure> {
    Ok(settings.kernel.build(settings.gamma(dim)?)?)
}
