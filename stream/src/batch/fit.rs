//! Fitting a learner to a whole data set with `kestrel train`'s settings and defaults —
//! what the CLI, `kestrel tune` and the Python package all call, so a learner chooses the
//! same `auto` settings whichever way it is driven.
//!
//! `auto` (the default of the kernel learners' `gamma`, rsvm's `C` and `delta`,
//! krr/lssvm's `lambda`, ssvr's `C`, kpls's components) costs a few fits of the reduced problem: the width by
//! kernel-target alignment on a sample ([`gamma::by_alignment`]), then for rsvm, krr and
//! lssvm the best of the five octaves around it by exact leave-one-out
//! ([`widths_by_loo`], past ten thousand rows on a subsample of that many); the ridge, `C` and the reduced set by the exact leave-one-out of
//! kernel ridge regression on the features the fit computes anyway ([`super::krr`]).
//!
//! [`fit`] returns the model's bytes (without scaler or class names: the caller adds what
//! its rows had) and a [`Summary`] of what training did, `chosen` holding what `auto`
//! chose.

use std::borrow::Cow;
use std::collections::BTreeMap;

use kestrel_core::dcd::{self, Loss};
use kestrel_core::{Kernel, KernelKind, Real, slkl};
use serde::Serialize;

use super::calibration;
use super::class_weights::ClassWeights;
use super::gamma;
use super::kpls;
use super::krr::{self, KrrConfig, KrrModel, Ridge, RidgeScore, Task};
use super::linear;
use super::rsvm::{self, RsvmConfig, Selection, Solver, Tune};
use super::slkl::{self as slkl_train, SlklConfig};
use super::ssvr::{self, SsvrConfig};
use super::tune::{Folds, WidthScore, best_width, extend_past_edges, octaves, widths_by_loo};
use super::{TrainError, check_budget, classes};
use crate::dataset::Dataset;
use crate::limits::MAX_CENTERS;
use crate::model;

/// A setting given as a number, or `auto`: chosen from the data.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Setting {
    /// Chosen from the data.
    Auto,
    /// A number.
    Value(f64),
}

impl Setting {
    /// The number when one was given (`auto` and no setting are resolved by the caller).
    pub fn given(setting: Option<Setting>) -> Option<f64> {
        match setting {
            Some(Setting::Value(v)) => Some(v),
            None | Some(Setting::Auto) => None,
        }
    }

    /// The number, `default` when not given; `Err` naming `flag` for `auto`, which a
    /// caller that sees no data set before it starts cannot resolve.
    ///
    /// # Errors
    /// The message for `auto`.
    pub fn value_or(setting: Option<Setting>, default: f64, flag: &str) -> Result<f64, String> {
        match setting {
            None => Ok(default),
            Some(Setting::Value(v)) => Ok(v),
            Some(Setting::Auto) => {
                Err(format!("{flag} auto chooses from a whole data set (kestrel train); give a number here"))
            }
        }
    }
}

/// The learners fitted to a whole data set.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Learner {
    /// SLKL kernel regression.
    Slkl,
    /// The linear SVM by dual coordinate descent.
    Svm,
    /// The reduced-kernel SVM.
    Rsvm,
    /// Nyström kernel ridge regression.
    Krr,
    /// The least-squares SVM (kernel ridge on ±1 targets, one-vs-rest).
    Lssvm,
    /// The MapReduce RSVM: reduced-kernel SVMs of the data's parts, a linear SVM on their
    /// decision values.
    Mrrsvm,
    /// Kernel novelty detection: the distance to the rows' centre of mass.
    Novelty,
    /// Smooth ε-insensitive regression on the reduced kernel (ε-SSVR).
    Ssvr,
    /// Kernel partial least squares on krr's Nyström features, by conjugate gradients.
    Kpls,
}

impl Learner {
    /// What the learner predicts: a class or a real target (the novelty detector, a flag:
    /// its labels, read to score it, are a classifier's).
    pub fn task(self) -> Task {
        match self {
            Learner::Slkl | Learner::Krr | Learner::Ssvr | Learner::Kpls => Task::Regression,
            Learner::Svm | Learner::Rsvm | Learner::Lssvm | Learner::Mrrsvm | Learner::Novelty => Task::Classification,
        }
    }
}

/// The kernels of the kernel learners.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KernelChoice {
    /// `exp(−γ‖x − x'‖²)`.
    Rbf,
    /// `(γ⟨x, x'⟩ + coef0)^degree`.
    Poly,
    /// `⟨x, x'⟩`.
    Linear,
}

/// A kernel and its parameters, the width possibly `auto`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct KernelSettings {
    /// The kernel.
    pub kind: KernelChoice,
    /// The width `γ`; `None` is `auto` for `kestrel train`.
    pub gamma: Option<Setting>,
    /// The polynomial's degree.
    pub degree: u32,
    /// The polynomial's offset.
    pub coef0: f64,
}

impl Default for KernelSettings {
    fn default() -> Self {
        KernelSettings { kind: KernelChoice::Rbf, gamma: None, degree: 3, coef0: 0.0 }
    }
}

impl KernelSettings {
    /// The kernel with width `gamma` (the width setting resolved by the caller).
    ///
    /// # Errors
    /// `InvalidParam` naming the parameter out of range.
    pub fn build<T: Real>(&self, gamma: f64) -> Result<Kernel<T>, kestrel_core::Error> {
        let gamma = T::from_f64(gamma);
        match self.kind {
            KernelChoice::Rbf => Kernel::rbf(gamma),
            KernelChoice::Poly => Kernel::polynomial(self.degree, gamma, T::from_f64(self.coef0)),
            KernelChoice::Linear => Ok(Kernel::linear()),
        }
    }
}

/// The width where none is given and none is searched (`kestrel stream`, `kestrel
/// transform`, the Python projections): `1/d` for `d` features. Standardised features have a
/// typical squared distance of `2d`, so a typical pair has RBF kernel value `e⁻²`
/// (scikit-learn's `gamma="scale"`).
pub fn unit_variance_width(dim: usize) -> f64 {
    #[allow(clippy::cast_precision_loss, reason = "a count of features")]
    let d = dim.max(1) as f64;
    1.0 / d
}

/// The linear SVM's settings (svm, and rsvm on its kernel features).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SvmSettings {
    /// The cost `C`; `None` is 1 for svm and `auto` for rsvm.
    pub c: Option<Setting>,
    /// The loss.
    pub loss: Loss,
    /// The constant bias feature (LIBLINEAR's `-B`); 0 disables it.
    pub bias: f64,
}

impl Default for SvmSettings {
    fn default() -> Self {
        SvmSettings { c: None, loss: Loss::SquaredHinge, bias: 1.0 }
    }
}

impl SvmSettings {
    /// The solver's parameters with cost `c` (resolved by the caller) and the stopping
    /// tolerance `eps` when one is given (LIBLINEAR's 0.1 otherwise).
    ///
    /// # Errors
    /// `InvalidParam` naming the parameter out of range.
    pub fn params<T: Real>(&self, c: f64, eps: Option<f64>) -> Result<dcd::ValidParams<T>, kestrel_core::Error> {
        let mut params = dcd::Params::new().loss(self.loss).c(T::from_f64(c)).bias(T::from_f64(self.bias));
        if let Some(eps) = eps {
            params = params.epsilon(T::from_f64(eps));
        }
        params.check()
    }
}

/// How the reduced set is chosen (rsvm, krr, lssvm).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Select {
    /// IRSVM: a point joins when the kernel's residual at it is at least the threshold.
    #[default]
    Irsvm,
    /// A uniform random sample.
    Random,
}

/// Everything [`fit`] takes: `kestrel train`'s flags about the learner.
#[derive(Clone, Debug, PartialEq)]
pub struct FitSettings {
    /// The learner.
    pub learner: Learner,
    /// The kernel (slkl, rsvm, krr, lssvm).
    pub kernel: KernelSettings,
    /// The linear SVM (svm, rsvm).
    pub svm: SvmSettings,
    /// The cost of a class's rows times its weight (svm, rsvm, lssvm; LIBLINEAR's `-wi`,
    /// [`super::class_weights`]).
    pub class_weights: ClassWeights,
    /// SLKL's ν in units of the target variance; `None` is 0.1, `auto` the best of
    /// [`NU_GRID`] by [`NU_FOLDS`]-fold cross-validation.
    pub nu: Option<Setting>,
    /// The most centres (slkl's candidates; rsvm, krr, lssvm's reduced set); `None` is 256.
    pub centers: Option<usize>,
    /// SLKL's most active centres; `None` is every candidate.
    pub max_active: Option<usize>,
    /// The solvers' stopping tolerance; `None` is each solver's default.
    pub eps: Option<f64>,
    /// The reduced set's selection.
    pub select: Select,
    /// Parts of mrrsvm; `None` is [`super::mrrsvm::DEFAULT_PARTITIONS`].
    pub partitions: Option<usize>,
    /// The novelty detector's quantile of the training rows' scores, its threshold.
    pub quantile: f64,
    /// The IRSVM threshold; `None` is a small one (rsvm: `auto`, the prefix by
    /// leave-one-out).
    pub delta: Option<Setting>,
    /// The ridge of krr and lssvm; `None` is `auto`.
    pub lambda: Option<Setting>,
    /// rsvm and ssvr on the raw kernel features `K(x, Ã)` instead of Nyström's whitened ones.
    pub raw_features: bool,
    /// rsvm's solver.
    pub solver: Solver,
    /// krr's solver: the exact path, or conjugate gradients at scale.
    pub krr_solver: krr::Solver,
    /// ssvr's tube half-width `ε` in the targets' units; `None` is [`DEFAULT_EPSILON`].
    pub epsilon: Option<f64>,
    /// kpls's components; `None` is `auto` (least held-out error, [`super::kpls`]).
    pub components: Option<usize>,
    /// Seed of every random choice.
    pub seed: u64,
    /// Memory budget in bytes for training.
    pub budget: Option<usize>,
    /// krr (exact solver): keep the posterior of the Gaussian process in the model, for a
    /// variance of each prediction ([`KrrConfig::posterior`]).
    pub posterior: bool,
    /// The classifiers (svm, rsvm, lssvm, mrrsvm): give the model class probabilities,
    /// Platt's sigmoids of decision values held out by cross-validation
    /// ([`super::calibration`]; [`super::calibration::FOLDS`] more fits).
    pub probabilities: bool,
    /// The width search `--gamma auto` already ran on the rows [`fit`] is given
    /// (`--scale auto`'s score of the copy it kept, [`auto_width_search`]): taken instead of
    /// searching again when the fit would run that very search; `None` searches.
    pub searched: Option<Searched>,
}

/// A width search of `--gamma auto` on the automatic ridge path ([`auto_width_search`]),
/// and the rows it ran on ([`Dataset::fingerprint`]).
#[derive(Clone, Debug, PartialEq)]
pub struct Searched {
    rows: u64,
    choice: gamma::GammaChoice,
    scores: Vec<WidthScore>,
}

impl FitSettings {
    /// `learner` with every other setting at its default.
    pub fn new(learner: Learner) -> Self {
        FitSettings {
            learner,
            kernel: KernelSettings::default(),
            svm: SvmSettings::default(),
            class_weights: ClassWeights::Unit,
            nu: None,
            centers: None,
            max_active: None,
            eps: None,
            select: Select::Irsvm,
            partitions: None,
            quantile: crate::online::build::DEFAULT_QUANTILE,
            delta: None,
            lambda: None,
            raw_features: false,
            solver: Solver::Auto,
            krr_solver: krr::Solver::Auto,
            epsilon: None,
            components: None,
            seed: 1,
            budget: None,
            posterior: false,
            probabilities: false,
            searched: None,
        }
    }
}

/// Why [`fit`] failed.
#[derive(Debug, thiserror::Error)]
pub enum FitError {
    /// Training failed.
    #[error(transparent)]
    Train(#[from] TrainError),
    /// A parameter is out of range; `what` names the group of settings.
    #[error("{what}: {error}")]
    Param {
        /// The settings, as the CLI names them (`kernel parameters`, `--gamma auto`, …).
        what: &'static str,
        /// The core's error.
        error: kestrel_core::Error,
    },
    /// The width by kernel-target alignment (`gamma auto`) failed.
    #[error("--gamma auto: {0}")]
    GammaAuto(TrainError),
    /// Settings the data cannot take, or a step that fails on it (too few rows for a
    /// choice, more neighbours than rows, a part that cannot be trained).
    #[error("{0}")]
    Settings(String),
    /// Flags that do not go together, whatever the data: a refused configuration (the
    /// CLI's exit status 2).
    #[error("{0}")]
    Conflict(String),
}

impl FitError {
    /// The core's errors as [`FitError::Param`] naming `what` (for `map_err`).
    pub fn param(what: &'static str) -> impl Fn(kestrel_core::Error) -> FitError {
        move |error| FitError::Param { what, error }
    }
}

impl From<crate::limits::AllocError> for FitError {
    fn from(error: crate::limits::AllocError) -> Self {
        FitError::Train(error.into())
    }
}

/// One value of a [`Summary`].
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(untagged)]
pub enum Field {
    /// A count.
    Count(usize),
    /// A large count (steps).
    Steps(u64),
    /// A real number.
    Number(f64),
    /// A yes or no.
    Flag(bool),
    /// A name.
    Text(&'static str),
    /// A list of counts (one per part of mrrsvm).
    Counts(Vec<usize>),
    /// A list of records (krr's ridge path).
    Rows(Vec<Summary>),
    /// A record (what `auto` chose).
    Fields(Summary),
}

impl From<usize> for Field {
    fn from(count: usize) -> Self {
        Field::Count(count)
    }
}

impl From<f64> for Field {
    fn from(number: f64) -> Self {
        Field::Number(number)
    }
}

impl From<bool> for Field {
    fn from(flag: bool) -> Self {
        Field::Flag(flag)
    }
}

impl From<&'static str> for Field {
    fn from(text: &'static str) -> Self {
        Field::Text(text)
    }
}

/// What training did, by name (`kestrel train --json` prints it).
pub type Summary = BTreeMap<&'static str, Field>;

/// A fitted model: its bytes and what training did.
#[derive(Clone, Debug, PartialEq)]
pub struct Fitted {
    /// The model file's bytes, without scaler or class names.
    pub bytes: Vec<u8>,
    /// What training did; `chosen` holds what `auto` chose.
    pub summary: Summary,
}

/// The most centres of rsvm, krr and lssvm, and slkl's candidates, unless the settings say.
pub const DEFAULT_CENTERS: usize = 256;

/// SLKL's ν, in units of the target variance, unless the settings say.
pub const DEFAULT_NU: f64 = 0.1;

/// The ν (in units of the target variance) `nu auto` compares, and `kestrel tune`'s default
/// grid for slkl.
pub const NU_GRID: [f64; 4] = [0.001, 0.01, 0.1, 1.0];

/// Folds of `nu auto`'s cross-validation.
pub const NU_FOLDS: usize = 3;

/// ssvr's tube half-width, in the targets' units, unless the settings say (LIBSVM's `-p`).
pub const DEFAULT_EPSILON: f64 = 0.1;

/// Where `gamma auto` looks after the alignment, for the learners with a leave-one-out
/// criterion: `γ*·2^k` for `k` in this range, `γ*` the alignment's width.
const LOO_OCTAVES: (i32, i32) = (-2, 2);

/// The IRSVM threshold (δ/√n) unless the settings give one: small, so the selection runs
/// to the `centers` cap (and, for rsvm under `delta auto`, leave-one-out chooses the
/// prefix). Classification: 5·10⁻⁴. Regression in f64: 10⁻⁷ — a fit at a small ridge
/// uses what a coarser threshold leaves out (on make_friedman1, 5·10⁻⁴ stopped at 55
/// centres and quadrupled the test error), while the same small threshold let
/// leave-one-out pick over-fitted classifiers (Phishing 91.4 → 88.5 %, moons 94.1 →
/// 92.0 %). f32 keeps 5·10⁻⁴, where the whitening `L⁻¹` stays well above its rounding.
fn small_delta<T: Real>(task: Task) -> f64 {
    if T::BYTES == 4 || task == Task::Classification { CLASSIFICATION_DELTA } else { 1e-7 }
}

/// The IRSVM threshold of a classifier's selection under `auto` (in f64 and f32).
pub const CLASSIFICATION_DELTA: f64 = 5e-4;

/// `Err(Param)` naming `what` for the core's error.
fn param<V>(result: Result<V, kestrel_core::Error>, what: &'static str) -> Result<V, FitError> {
    result.map_err(FitError::param(what))
}

/// Fits the learner of `settings` on `data` (see the module doc).
///
/// # Errors
/// [`FitError`] for settings out of range or that do not go together, and when training
/// fails.
pub fn fit<T: Real>(settings: &FitSettings, data: &Dataset<T>) -> Result<Fitted, FitError> {
    let weighable = matches!(settings.learner, Learner::Svm | Learner::Rsvm | Learner::Lssvm);
    if !settings.class_weights.is_unit() && !weighable {
        return Err(FitError::Conflict(
            "class weights are for the SVMs and the least-squares SVM (svm, rsvm, lssvm)".into(),
        ));
    }
    let weighs_rows = weighable || matches!(settings.learner, Learner::Krr | Learner::Ssvr | Learner::Mrrsvm);
    if data.row_weights().is_some() && !weighs_rows {
        return Err(FitError::Conflict("row weights are for svm, rsvm, lssvm, krr, ssvr and mrrsvm".into()));
    }
    if settings.components.is_some() && settings.learner != Learner::Kpls {
        return Err(FitError::Conflict("--components is kernel PLS's (kpls)".into()));
    }
    if settings.posterior && settings.learner != Learner::Krr {
        return Err(FitError::Conflict("--posterior is kernel ridge regression's (krr)".into()));
    }
    let calibrated = matches!(settings.learner, Learner::Svm | Learner::Rsvm | Learner::Lssvm | Learner::Mrrsvm);
    if settings.probabilities && !calibrated {
        return Err(FitError::Conflict(
            "--probabilities is for the classifiers of decision values (svm, rsvm, lssvm, mrrsvm)".into(),
        ));
    }
    check_ranges(settings)?;
    if settings.learner.task() == Task::Regression {
        check_targets_vary(data)?;
    }
    if settings.budget.is_some()
        && let Some(needed) = needed_bytes(settings, data, data.bytes())?
    {
        check_budget(needed, settings.budget)?;
    }
    if settings.probabilities && settings.budget.is_some() {
        // The cross-validation's part fixed by the data's shape, before the first fit.
        let outputs = outputs_of(data, Task::Classification)?;
        check_budget(calibration::held_bytes(data, outputs), settings.budget)?;
    }
    let mut fitted = match settings.learner {
        Learner::Svm => train_svm(settings, data),
        Learner::Rsvm => train_rsvm(settings, data),
        Learner::Slkl => train_slkl(settings, data),
        Learner::Krr => train_krr(settings, data, Task::Regression),
        Learner::Lssvm => train_krr(settings, data, Task::Classification),
        Learner::Mrrsvm => super::mrrsvm::train(settings, data),
        Learner::Novelty => super::novelty::train(settings, data),
        Learner::Ssvr => train_ssvr(settings, data),
        Learner::Kpls => train_kpls(settings, data),
    }?;
    if settings.probabilities {
        let sigmoids = calibration::sigmoids(settings, data, &fitted)?;
        fitted.bytes = model::with_calibration(fitted.bytes, &sigmoids).map_err(TrainError::Core)?;
        fitted.summary.insert("probability_folds", calibration::FOLDS.into());
    }
    Ok(fitted)
}

/// The numbers of `settings` in the ranges `kestrel train`'s flags take (the Python and C
/// layers build settings without the flags' parsers): out of range is a refused
/// configuration naming the setting. (The novelty detector checks its own quantile.)
/// [`fit`] checks them first; a caller may check them before it has the data.
///
/// # Errors
/// [`FitError::Conflict`] naming the first setting out of range.
pub fn check_ranges(settings: &FitSettings) -> Result<(), FitError> {
    // (name, value, whether 0 is allowed)
    let numbers = [
        ("C", Setting::given(settings.svm.c), false),
        ("gamma", Setting::given(settings.kernel.gamma), false),
        ("lambda", Setting::given(settings.lambda), false),
        ("eps", settings.eps, false),
        ("nu", Setting::given(settings.nu), true),
        ("delta", Setting::given(settings.delta), true),
        ("epsilon", settings.epsilon, true),
        ("bias", Some(settings.svm.bias), true),
    ];
    for (name, value, zero) in numbers {
        let Some(value) = value else { continue };
        let (low_ok, range) =
            if zero { (value >= 0.0, "a number of at least 0") } else { (value > 0.0, "a positive number") };
        if !(low_ok && value.is_finite()) {
            return Err(FitError::Conflict(format!("{name} must be {range}, got {value}")));
        }
    }
    for (name, count) in [("centers", settings.centers), ("max_active", settings.max_active)] {
        if let Some(count) = count.filter(|n| !(1..=MAX_CENTERS).contains(n)) {
            return Err(FitError::Conflict(format!(
                "{name} must be a whole number from 1 to {MAX_CENTERS}, got {count}"
            )));
        }
    }
    Ok(())
}

/// A regression's targets must vary: equal targets leave nothing to learn (every model
/// predicts that value), which the solvers' checks would report only as an invalid
/// parameter.
fn check_targets_vary<T: Real>(data: &Dataset<T>) -> Result<(), FitError> {
    match data.labels() {
        [first, rest @ ..] if !rest.is_empty() && rest.iter().all(|y| y == first) => Err(FitError::Settings(format!(
            "every target is {first}: there is nothing to learn (a model would predict {first} for every row)"
        ))),
        _ => Ok(()),
    }
}

/// What `auto` chose, as `(setting, value)` pairs for a summary's `chosen` record.
type Chosen = Vec<(&'static str, Field)>;

/// The kernel of the settings: `gamma` resolved on `data` (`auto` unless a number is
/// given), and what `auto` chose. `auto` is the width of highest kernel-target alignment;
/// with `loo_ridges` (rsvm, krr, lssvm: the ridges their fit will compare, its automatic
/// path when empty) it is then the best of [`LOO_OCTAVES`] around that width by the exact
/// leave-one-out of the reduced kernel ridge ([`widths_by_loo`]): alignment finds the
/// scale, leave-one-out the octave.
fn kernel<T: Real>(
    settings: &FitSettings,
    data: &Dataset<T>,
    task: Task,
    loo_ridges: Option<&[f64]>,
) -> Result<(Kernel<T>, Chosen), FitError> {
    let spec = &settings.kernel;
    let kind = param(spec.build::<T>(1.0), "kernel parameters")?.kind();
    match (spec.gamma, spec.kind) {
        (Some(Setting::Value(gamma)), _) => Ok((param(spec.build(gamma), "kernel parameters")?, Vec::new())),
        (_, KernelChoice::Linear) => Ok((Kernel::linear(), Vec::new())),
        (None | Some(Setting::Auto), _) => {
            if data.len() < 2 {
                let message = format!("--gamma auto compares rows: it needs 2 or more, got n_samples = {}", data.len());
                return Err(FitError::Settings(message));
            }
            let Some(ridges) = loo_ridges else {
                let choice = gamma::by_alignment(data, kind, task, settings.seed, settings.budget)
                    .map_err(FitError::GammaAuto)?;
                let aligned = param(gamma::with_gamma(kind, T::from_f64(choice.gamma)), "--gamma auto")?;
                let fields =
                    vec![("alignment", Field::Number(choice.alignment)), ("gamma", Field::Number(choice.gamma))];
                return Ok((aligned, fields));
            };
            // The same search, on the same rows, that `--scale auto` ran already.
            let searched = settings.searched.as_ref().filter(|s| ridges.is_empty() && s.rows == data.fingerprint());
            let (choice, scores) = match searched {
                Some(searched) => (searched.choice.clone(), searched.scores.clone()),
                None => octaves_by_loo(settings, data, kind, task, ridges)?,
            };
            let gamma = best_width(&scores, task).map_or(choice.gamma, |best| best.gamma);
            let fields = vec![
                ("alignment", Field::Number(choice.alignment)),
                ("alignment_gamma", Field::Number(choice.gamma)),
                ("gamma", Field::Number(gamma)),
            ];
            Ok((param(gamma::with_gamma(kind, T::from_f64(gamma)), "--gamma auto")?, fields))
        }
    }
}

/// `--gamma auto`'s search on `data`: the width of highest alignment, then the reduced
/// kernel ridge's leave-one-out over `ridges` (its automatic path when empty) at each of
/// [`LOO_OCTAVES`] around it, on the rows of [`width_rows`], and past an edge while the
/// edge is the best ([`extend_past_edges`]).
fn octaves_by_loo<T: Real>(
    settings: &FitSettings,
    data: &Dataset<T>,
    kind: KernelKind<T>,
    task: Task,
    ridges: &[f64],
) -> Result<(gamma::GammaChoice, Vec<WidthScore>), FitError> {
    let choice = gamma::by_alignment(data, kind, task, settings.seed, settings.budget).map_err(FitError::GammaAuto)?;
    let aligned = param(gamma::with_gamma(kind, T::from_f64(choice.gamma)), "--gamma auto")?;
    let widths = octaves(choice.gamma, LOO_OCTAVES.0, LOO_OCTAVES.1);
    let (rows, ridges) = width_rows(data, settings.seed, ridges)?;
    let config = krr_config(settings, aligned, task);
    let mut scores = widths_by_loo(&rows, &config, &widths, &ridges, |_| {})?;
    extend_past_edges(&rows, &config, &ridges, &mut scores, |_| {})?;
    Ok((choice, scores))
}

/// The rows on which `auto` compares widths by leave-one-out: all of `data`, or past
/// [`krr::CG_SUBSAMPLE`] rows a uniform subsample of that many ([`krr::subsample`], the
/// same rows for the same seed), with `ridges` scaled to it (`λ·n_s/n`: the same `λ/n`, the
/// penalty's weight per row; with row weights, by the subsample's share of the total
/// weight). Each width costs a reduced set and a ridge path on these rows — `O(n·m²)` and
/// a few hundred candidates' `O(n·m)` on all of them — while the
/// five octaves' ranking needs no more than ten thousand rows; the model is then fitted on
/// every row. krr's cg solver, kpls and `kestrel tune`'s leave-one-out use the same rows.
///
/// # Errors
/// [`FitError`] when the subsample cannot be allocated.
pub fn width_rows<'a, T: Real>(
    data: &'a Dataset<T>,
    seed: u64,
    ridges: &[f64],
) -> Result<(Cow<'a, Dataset<T>>, Vec<f64>), FitError> {
    if data.len() <= krr::CG_SUBSAMPLE {
        return Ok((Cow::Borrowed(data), ridges.to_vec()));
    }
    let sample = krr::subsample(data, seed)?;
    let to_sample = sample.total_weight() / data.total_weight();
    Ok((Cow::Owned(sample), ridges.iter().map(|ridge| ridge * to_sample).collect()))
}

/// The leave-one-out score `--gamma auto` reaches on `data` with the kernel of `settings`:
/// the reduced kernel ridge's (the least-squares SVM's for classes) on its automatic ridge
/// path, at the best of the five octaves around the alignment's width, or at `--gamma` when
/// one is given, on at most [`krr::CG_SUBSAMPLE`] of the rows (the subsample `--gamma auto`
/// compares its octaves on) — the criterion by which `--scale auto` and `--relevance`
/// choose their rows ([`super::scaling`], [`super::relevance::weighed_if_better`]); and the
/// search itself when `--gamma auto` ran one, which a fit of the same settings on `data`
/// takes (as [`FitSettings::searched`]) instead of searching again.
///
/// # Errors
/// As `--gamma auto`, and [`FitError::Settings`] for a kernel without a width.
pub fn auto_width_search<T: Real>(
    settings: &FitSettings,
    data: &Dataset<T>,
    task: Task,
) -> Result<(RidgeScore, Option<Searched>), FitError> {
    let spec = &settings.kernel;
    let kernel = param(spec.build::<T>(1.0), "kernel parameters")?;
    let best = |scores: &[WidthScore]| {
        best_width(scores, task)
            .map(|best| best.summary.chosen)
            .ok_or_else(|| FitError::Settings("no width to score".into()))
    };
    match spec.gamma {
        Some(Setting::Value(gamma)) => {
            let (rows, _) = width_rows(data, settings.seed, &[])?;
            let scores = widths_by_loo(&rows, &krr_config(settings, kernel, task), &[gamma], &[], |_| {})?;
            Ok((best(&scores)?, None))
        }
        None | Some(Setting::Auto) => {
            let (choice, scores) = octaves_by_loo(settings, data, kernel.kind(), task, &[])?;
            Ok((best(&scores)?, Some(Searched { rows: data.fingerprint(), choice, scores })))
        }
    }
}

fn svm_params<T: Real>(settings: &FitSettings, c: f64) -> Result<dcd::ValidParams<T>, FitError> {
    param(settings.svm.params(c, settings.eps), "SVM parameters")
}

/// A summary's `chosen` record.
fn chosen_record(chosen: Chosen) -> Field {
    Field::Fields(chosen.into_iter().collect())
}

/// What rsvm's `auto` tunes by leave-one-out (`C` unless given, the reduced set unless
/// `--delta` is given or the centres are random) and its selection.
fn rsvm_plan<T: Real>(settings: &FitSettings) -> Result<(Tune, Selection), FitError> {
    let auto_c = matches!(settings.svm.c, None | Some(Setting::Auto));
    let (rms, auto_delta) = match settings.delta {
        Some(Setting::Value(rms)) => (rms, false),
        None | Some(Setting::Auto) => (small_delta::<T>(Task::Classification), settings.select == Select::Irsvm),
    };
    let tune = Tune { c: auto_c, centres: auto_delta };
    if tune != Tune::default() && settings.raw_features {
        let message = "--raw-features takes --c and --delta as numbers: auto chooses them on the Nyström features";
        return Err(FitError::Conflict(message.into()));
    }
    let selection = match settings.select {
        Select::Irsvm => Selection::Irsvm { rms },
        Select::Random => Selection::Random,
    };
    Ok((tune, selection))
}

fn train_rsvm<T: Real>(settings: &FitSettings, data: &Dataset<T>) -> Result<Fitted, FitError> {
    let (tune, selection) = rsvm_plan::<T>(settings)?;
    // The least-squares SVM's ridge behind C is λ = 1/(2C) (see rsvm::Tune).
    let ridges: Vec<f64> = Setting::given(settings.svm.c).map(|c| 1.0 / (2.0 * c)).into_iter().collect();
    let loo_ridges = if settings.raw_features { None } else { Some(&ridges[..]) };
    let (kernel, mut chosen) = kernel::<T>(settings, data, Task::Classification, loo_ridges)?;
    let config = RsvmConfig {
        kernel,
        centres: settings.centers.unwrap_or(DEFAULT_CENTERS),
        selection,
        whiten: !settings.raw_features,
        params: svm_params::<T>(settings, Setting::given(settings.svm.c).unwrap_or(1.0))?,
        seed: settings.seed,
        budget: settings.budget,
        tune,
        solver: settings.solver,
        class_weights: settings.class_weights.clone(),
    };
    let (model, summary) = rsvm::train(data, &config)?;
    let bytes = model::to_bytes(&model).map_err(TrainError::Core)?;
    if let Some(tuned) = summary.tuned {
        if tune.c {
            chosen.push(("c", Field::Number(tuned.c)));
        }
        if tune.centres {
            chosen.push(("centers", Field::Count(summary.centres)));
        }
        chosen.push(("loo_errors", Field::Count(tuned.ridge.errors)));
    }
    // The solver of every problem's model, or both when Newton solved some of them.
    let solver = match (summary.solver, summary.newton_problems) {
        (Solver::Dcd | Solver::Auto, _) => "dcd",
        (Solver::Ssvm, newton) if newton < model.outputs() => "dcd+ssvm",
        (Solver::Ssvm, _) => "ssvm",
    };
    let summary = Summary::from([
        ("learner", "rsvm".into()),
        ("solver", solver.into()),
        ("newton_problems", summary.newton_problems.into()),
        ("dcd_passes", summary.dcd_passes.into()),
        ("objective", summary.objective.into()),
        ("passes", summary.passes.into()),
        ("iterations", summary.passes.into()),
        ("converged", summary.converged.into()),
        ("centers", summary.centres.into()),
        ("working_bytes", summary.working_bytes.into()),
        ("chosen", chosen_record(chosen)),
    ]);
    Ok(Fitted { bytes, summary })
}

/// The reduced kernel ridge of the settings with `kernel`: `centers`, the selection (IRSVM
/// at `delta`, or at a small threshold under `auto`), `lambda` (auto unless a number).
pub fn krr_config<T: Real>(settings: &FitSettings, kernel: Kernel<T>, task: Task) -> KrrConfig<T> {
    let ridge = match settings.lambda {
        Some(Setting::Value(lambda)) => Ridge::Fixed(lambda),
        None | Some(Setting::Auto) => Ridge::Auto,
    };
    KrrConfig {
        kernel,
        centres: settings.centers.unwrap_or(DEFAULT_CENTERS),
        selection: krr_selection::<T>(settings, task),
        ridge,
        task,
        seed: settings.seed,
        budget: settings.budget,
        class_weights: match task {
            Task::Classification => settings.class_weights.clone(),
            Task::Regression => ClassWeights::Unit,
        },
        posterior: settings.posterior,
    }
}

/// The selection of [`krr_config`]: IRSVM at `delta`, or at a small threshold under `auto`.
fn krr_selection<T: Real>(settings: &FitSettings, task: Task) -> Selection {
    match settings.select {
        Select::Irsvm => Selection::Irsvm { rms: Setting::given(settings.delta).unwrap_or(small_delta::<T>(task)) },
        Select::Random => Selection::Random,
    }
}

/// The most any stage of the fit of `settings` holds on `data`, the data set included
/// (as `held` bytes: `data.bytes()`, or a copy's in another layout that the fit will learn
/// from, such as `--scale`'s dense standardised rows),
/// known from the settings and the data's shape before any stage runs — for the learners
/// whose `--gamma auto` compares widths by leave-one-out before their trainer runs (rsvm,
/// krr, lssvm, ssvr, kpls; `None` for the others, which check their budget as they go):
/// the trainer's own bytes, the alignment's sample, and the search's reduced kernel ridge
/// on [`width_rows`] beside the data set and its subsample (counted as the whole set's
/// bytes). [`fit`] checks a budget against it first, so that one error names the bytes the
/// whole fit needs before the earlier stages have spent their time; each stage then checks
/// its own share, within this bound.
///
/// # Errors
/// [`FitError`] for labels that are not classes (classifiers) and settings that do not go
/// together.
pub fn needed_bytes<T: Real>(
    settings: &FitSettings,
    data: &Dataset<T>,
    held: usize,
) -> Result<Option<usize>, FitError> {
    if matches!(settings.learner, Learner::Svm | Learner::Slkl | Learner::Mrrsvm | Learner::Novelty) {
        return Ok(None);
    }
    let (n, dim) = (data.len(), data.dim().max(1));
    let task = settings.learner.task();
    let outputs = outputs_of(data, task)?;
    let centres = settings.centers.unwrap_or(DEFAULT_CENTERS);
    let capacity = centres.clamp(1, n.max(1));
    let selection = krr_selection::<T>(settings, task);
    let (trainer, loo) = match settings.learner {
        Learner::Rsvm => {
            let (tune, selection) = rsvm_plan::<T>(settings)?;
            let rsvm = rsvm::sized_bytes::<T>((n, dim, capacity, outputs), selection, tune, settings.solver);
            (rsvm, !settings.raw_features)
        }
        Learner::Krr | Learner::Lssvm if settings.krr_solver.resolve(n, centres, task) == krr::Solver::Exact => {
            (krr::working_bytes::<T>(n, dim, capacity, outputs, selection), true)
        }
        Learner::Krr | Learner::Kpls => {
            let rows = n.min(krr::CG_SUBSAMPLE);
            (krr::cg_sized_bytes::<T>(data, rows, held, centres, selection), true)
        }
        Learner::Ssvr => {
            // Under `--c auto` the ridge path on every row comes first.
            let ridge = match Setting::given(settings.svm.c) {
                None => krr::working_bytes::<T>(n, dim, capacity, 1, selection),
                Some(_) => 0,
            };
            (ssvr::working_bytes::<T>(n, dim, capacity, selection).max(ridge), true)
        }
        // lssvm has no cg solver (train_krr refuses it); the others returned above.
        _ => return Ok(None),
    };
    let auto = auto_width(settings, n);
    let search = search_bytes(settings, data, held, (task, outputs), (auto, auto && loo));
    Ok(Some(held.saturating_add(trainer).max(search)))
}

/// The most [`auto_width_search`] holds on `data` (as `held` bytes), the rows included:
/// the reduced kernel ridge's leave-one-out at the given width or, under `auto`, the
/// alignment's sample and the octaves' (see [`needed_bytes`]).
///
/// # Errors
/// [`FitError`] for labels that are not classes (classifiers).
pub fn auto_width_score_bytes<T: Real>(
    settings: &FitSettings,
    data: &Dataset<T>,
    held: usize,
    task: Task,
) -> Result<usize, FitError> {
    let outputs = outputs_of(data, task)?;
    Ok(search_bytes(settings, data, held, (task, outputs), (auto_width(settings, data.len()), true)))
}

/// The targets per row a fit of `task` solves for: one for a regression, the classes'
/// one-vs-rest outputs for a classifier.
fn outputs_of<T: Real>(data: &Dataset<T>, task: Task) -> Result<usize, FitError> {
    Ok(match task {
        Task::Classification => classes::<T>(data.labels())?.0.outputs(),
        Task::Regression => 1,
    })
}

/// Whether `--gamma auto` searches a width: not given, a kernel that has one, rows to compare.
fn auto_width(settings: &FitSettings, n: usize) -> bool {
    matches!(settings.kernel.gamma, None | Some(Setting::Auto))
        && settings.kernel.kind != KernelChoice::Linear
        && n >= 2
}

/// The most a width search holds on `data` (as `held` bytes), the rows included: with
/// `align` the alignment's sample, with `loo` the reduced kernel ridge on [`width_rows`]
/// beside the rows and their subsample (counted as the rows' bytes).
fn search_bytes<T: Real>(
    settings: &FitSettings,
    data: &Dataset<T>,
    held: usize,
    (task, outputs): (Task, usize),
    (align, loo): (bool, bool),
) -> usize {
    let (n, dim) = (data.len(), data.dim().max(1));
    let mut needed = 0;
    if align {
        needed = held.saturating_add(gamma::Sample::<T>::bytes(n.min(gamma::SAMPLE), dim, outputs));
    }
    if loo {
        let rows = n.min(krr::CG_SUBSAMPLE);
        let subsample = if rows < n { held } else { 0 };
        let capacity = settings.centers.unwrap_or(DEFAULT_CENTERS).clamp(1, rows.max(1));
        let ridge = krr::working_bytes::<T>(rows, dim, capacity, outputs, krr_selection::<T>(settings, task));
        needed = needed.max(held.saturating_add(subsample).saturating_add(ridge));
    }
    needed
}

fn train_krr<T: Real>(settings: &FitSettings, data: &Dataset<T>, task: Task) -> Result<Fitted, FitError> {
    if matches!(settings.delta, Some(Setting::Auto)) {
        return Err(FitError::Conflict(format!(
            "--delta auto is rsvm's; krr and lssvm take a threshold (default {}) and --centers",
            small_delta::<T>(task)
        )));
    }
    let centers = settings.centers.unwrap_or(DEFAULT_CENTERS);
    let solver = settings.krr_solver.resolve(data.len(), centers, task);
    if solver == krr::Solver::Cg {
        if task == Task::Classification {
            return Err(FitError::Conflict("--solver cg is krr's (regression); lssvm takes the exact path".into()));
        }
        if data.row_weights().is_some() {
            return Err(FitError::Conflict(
                "row weights need krr's exact solver (the cg solver, chosen past 2^25 rows × centres, takes none)"
                    .into(),
            ));
        }
        if settings.posterior {
            return Err(FitError::Conflict(
                "--posterior needs krr's exact solver (the cg solver, chosen past 2^25 rows × centres, keeps none)"
                    .into(),
            ));
        }
        return train_krr_cg(settings, data);
    }
    let ridges: Vec<f64> = Setting::given(settings.lambda).into_iter().collect();
    let (kernel, mut chosen) = kernel::<T>(settings, data, task, Some(&ridges))?;
    let config = krr_config(settings, kernel, task);
    let ridge = config.ridge;
    let (model, summary) = krr::train(data, &config)?;
    let bytes = match &model {
        KrrModel::Regressor(model, Some(posterior)) => model::with_posterior(model, posterior),
        KrrModel::Regressor(model, None) => model::to_bytes(model),
        KrrModel::Classifier(model) => model::to_bytes(model),
    }
    .map_err(TrainError::Core)?;
    if ridge == Ridge::Auto {
        chosen.push(("lambda", Field::Number(summary.chosen.lambda)));
    }
    let path = summary
        .path
        .iter()
        .map(|s| {
            Summary::from([("lambda", s.lambda.into()), ("loo_mse", s.mse.into()), ("loo_errors", s.errors.into())])
        })
        .collect();
    let learner = if task == Task::Regression { "krr" } else { "lssvm" };
    let summary = Summary::from([
        ("learner", learner.into()),
        ("solver", "exact".into()),
        ("centers", summary.centres.into()),
        ("lambda", summary.chosen.lambda.into()),
        ("loo_mse", summary.chosen.mse.into()),
        ("loo_errors", summary.chosen.errors.into()),
        ("path", Field::Rows(path)),
        ("working_bytes", summary.working_bytes.into()),
        ("chosen", chosen_record(chosen)),
    ]);
    Ok(Fitted { bytes, summary })
}

/// krr by the Falkon construction ([`krr::train_cg`]): `gamma auto`, the centres and
/// `lambda auto` chosen on a subsample of [`krr::CG_SUBSAMPLE`] rows, CG to `--eps`
/// (default [`super::falkon::default_tolerance`]) on every row.
fn train_krr_cg<T: Real>(settings: &FitSettings, data: &Dataset<T>) -> Result<Fitted, FitError> {
    let given: Vec<f64> = Setting::given(settings.lambda).into_iter().collect();
    let (sample, ridges) = width_rows(data, settings.seed, &given)?;
    let (kernel, mut chosen) = kernel::<T>(settings, &sample, Task::Regression, Some(&ridges))?;
    let config = krr_config(settings, kernel, Task::Regression);
    let tolerance = settings.eps.unwrap_or(super::falkon::default_tolerance::<T>());
    let (model, summary, cg) = krr::train_cg(data, &sample, &config, tolerance)?;
    let KrrModel::Regressor(model, _) = model else {
        return Err(FitError::Settings("--solver cg trains a regressor".into()));
    };
    let bytes = model::to_bytes(&model).map_err(TrainError::Core)?;
    if config.ridge == Ridge::Auto {
        chosen.push(("lambda", Field::Number(summary.chosen.lambda)));
    }
    let loo_mse = summary.chosen.mse;
    let mut summary = Summary::from([
        ("learner", "krr".into()),
        ("solver", "cg".into()),
        ("centers", summary.centres.into()),
        ("lambda", summary.chosen.lambda.into()),
        ("subsample", cg.subsample.into()),
        ("iterations", cg.iterations.into()),
        ("residual", cg.residual.into()),
        ("converged", cg.converged.into()),
        ("passes", cg.passes.into()),
        ("preconditioner", if cg.exact_hessian { "whole-set hessian" } else { "subsample hessian" }.into()),
        ("working_bytes", summary.working_bytes.into()),
        ("chosen", chosen_record(chosen)),
    ]);
    // Scored only when λ was chosen.
    if loo_mse.is_finite() {
        summary.insert("subsample_loo_mse", loo_mse.into());
    }
    Ok(Fitted { bytes, summary })
}

/// Kernel PLS ([`kpls::train`]): `gamma auto` and the centres chosen on a subsample of
/// [`krr::CG_SUBSAMPLE`] rows as krr's cg solver chooses them, the components given or
/// chosen by held-out error, then one CG solve on every row.
fn train_kpls<T: Real>(settings: &FitSettings, data: &Dataset<T>) -> Result<Fitted, FitError> {
    if settings.lambda.is_some() || matches!(settings.delta, Some(Setting::Auto)) {
        return Err(FitError::Conflict(
            "kpls is regularised by --components, not --lambda; --delta takes a threshold".into(),
        ));
    }
    let (sample, _) = width_rows(data, settings.seed, &[])?;
    let (kernel, mut chosen) = kernel::<T>(settings, &sample, Task::Regression, Some(&[]))?;
    let config = krr_config(settings, kernel, Task::Regression);
    let (model, summary) = kpls::train(data, &sample, &config, settings.components)?;
    let KrrModel::Regressor(model, _) = model else {
        return Err(FitError::Settings("kpls trains a regressor".into()));
    };
    let bytes = model::to_bytes(&model).map_err(TrainError::Core)?;
    if settings.components.is_none() {
        chosen.push(("components", Field::Count(summary.components)));
    }
    let held_out = summary
        .held_out_mse
        .iter()
        .enumerate()
        .map(|(r, &mse)| Summary::from([("components", (r + 1).into()), ("held_out_mse", mse.into())]))
        .collect();
    let summary = Summary::from([
        ("learner", "kpls".into()),
        ("centers", summary.centres.into()),
        ("components", summary.components.into()),
        ("subsample", summary.cg.subsample.into()),
        ("held_out", Field::Rows(held_out)),
        ("iterations", summary.cg.iterations.into()),
        ("residual", summary.cg.residual.into()),
        ("working_bytes", summary.working_bytes.into()),
        ("chosen", chosen_record(chosen)),
    ]);
    Ok(Fitted { bytes, summary })
}

/// ε-SSVR: the kernel width as krr's (`auto`: alignment, then leave-one-out of the
/// reduced kernel ridge), `C = 1/λ*` under `auto` (the default) with `λ*` the ridge
/// leave-one-out prefers on the same reduced set — as `β → ∞` and `ε → 0`, eq. (22) times
/// `2/C` is the ridge problem `Σr² + λ(‖w‖² + b²)` with `λ = 1/C`.
fn train_ssvr<T: Real>(settings: &FitSettings, data: &Dataset<T>) -> Result<Fitted, FitError> {
    if matches!(settings.delta, Some(Setting::Auto)) {
        return Err(FitError::Conflict("--delta auto is rsvm's; ssvr takes a threshold and --centers".into()));
    }
    let ridges: Vec<f64> = Setting::given(settings.svm.c).map(|c| 1.0 / c).into_iter().collect();
    let (kernel, mut chosen) = kernel::<T>(settings, data, Task::Regression, Some(&ridges))?;
    let ridge_config = krr_config(settings, kernel, Task::Regression);
    let c = match Setting::given(settings.svm.c) {
        Some(c) => c,
        None => {
            let c = 1.0 / krr::score(data, &ridge_config, &[])?.chosen.lambda;
            chosen.push(("c", Field::Number(c)));
            c
        }
    };
    let config = SsvrConfig {
        kernel,
        centres: ridge_config.centres,
        selection: ridge_config.selection,
        whiten: !settings.raw_features,
        c,
        epsilon: settings.epsilon.unwrap_or(DEFAULT_EPSILON),
        seed: settings.seed,
        budget: settings.budget,
    };
    let (model, summary) = ssvr::train(data, &config)?;
    let bytes = model::to_bytes(&model).map_err(TrainError::Core)?;
    let summary = Summary::from([
        ("learner", "ssvr".into()),
        ("c", c.into()),
        ("epsilon", config.epsilon.into()),
        ("objective", summary.objective.into()),
        ("iterations", summary.iterations.into()),
        ("converged", summary.converged.into()),
        ("centers", summary.centres.into()),
        ("working_bytes", summary.working_bytes.into()),
        ("chosen", chosen_record(chosen)),
    ]);
    Ok(Fitted { bytes, summary })
}

fn train_slkl<T: Real>(settings: &FitSettings, data: &Dataset<T>) -> Result<Fitted, FitError> {
    let (kernel, mut chosen) = kernel::<T>(settings, data, Task::Regression, None)?;
    let (relative_nu, cv_mse) = match settings.nu {
        Some(Setting::Value(nu)) => (nu, Vec::new()),
        None => (DEFAULT_NU, Vec::new()),
        Some(Setting::Auto) => {
            let scores = slkl_nu_by_cv(settings, data, kernel)?;
            let best = scores.iter().copied().reduce(|best, s| if s.1 < best.1 { s } else { best });
            let nu = best.map_or(DEFAULT_NU, |(nu, _)| nu);
            chosen.push(("nu", Field::Number(nu)));
            (nu, scores)
        }
    };
    let SlklFit { model, summary, nu } = fit_slkl(settings, data, kernel, relative_nu)?;
    let bytes = model::to_bytes(&model).map_err(TrainError::Core)?;
    let cv = cv_mse.iter().map(|&(nu, mse)| Summary::from([("nu", nu.into()), ("cv_mse", mse.into())])).collect();
    let summary = Summary::from([
        ("learner", "slkl".into()),
        ("nu_effective", nu.into()),
        ("objective", summary.objective.into()),
        ("steps", Field::Steps(summary.steps)),
        ("iterations", Field::Steps(summary.steps)),
        ("converged", summary.converged.into()),
        ("centers", summary.centres.into()),
        ("working_bytes", summary.working_bytes.into()),
        ("precomputed_columns", summary.precomputed.into()),
        ("nu_cv", Field::Rows(cv)),
        ("chosen", chosen_record(chosen)),
    ]);
    Ok(Fitted { bytes, summary })
}

/// SLKL on `data` at `relative_nu` (in units of the target variance: `F(μ)` scales with
/// `y²`, so this keeps `nu` meaningful whatever the units of the target; Prop. 3: only `λν`
/// matters, `λ = 1`), and the absolute `ν` it used.
fn fit_slkl<T: Real>(
    settings: &FitSettings,
    data: &Dataset<T>,
    kernel: Kernel<T>,
    relative_nu: f64,
) -> Result<SlklFit<T>, FitError> {
    let nu = relative_nu * data.label_variance().max(f64::MIN_POSITIVE);
    let mut params = slkl::Params::new().kernel(kernel).nu(T::from_f64(nu)).seed(settings.seed);
    if let Some(eps) = settings.eps {
        params = params.epsilon(T::from_f64(eps));
    }
    let candidates = settings.centers.unwrap_or(DEFAULT_CENTERS);
    let config = SlklConfig {
        params: param(params.check(), "SLKL parameters")?,
        candidates,
        max_active: settings.max_active.unwrap_or(candidates),
        budget: settings.budget,
    };
    let (model, summary) = slkl_train::train(data, &config)?;
    Ok(SlklFit { model, summary, nu })
}

/// What [`fit_slkl`] trained, and the absolute `ν` it used.
struct SlklFit<T> {
    model: slkl::Predictor<T, Vec<T>>,
    summary: slkl_train::SlklSummary,
    nu: f64,
}

/// `(ν, mean squared error)` for each ν of [`NU_GRID`] (relative, as `--nu`), by
/// [`NU_FOLDS`]-fold cross-validation of [`fit_slkl`]: `--nu auto`, about
/// `|NU_GRID|·(NU_FOLDS − 1)` fits' work.
fn slkl_nu_by_cv<T: Real>(
    settings: &FitSettings,
    data: &Dataset<T>,
    kernel: Kernel<T>,
) -> Result<Vec<(f64, f64)>, FitError> {
    let folds = Folds::new(data, NU_FOLDS.min(data.len()), settings.seed)?;
    let parts: Vec<_> = (0..folds.count()).map(|fold| folds.split(data, fold)).collect();
    NU_GRID
        .iter()
        .map(|&nu| {
            let mut squared = 0.0;
            for (train, held_out) in &parts {
                let model = fit_slkl(settings, train, kernel, nu)?.model;
                let mut predictor =
                    model::load(&model::to_bytes(&model).map_err(TrainError::Core)?).map_err(TrainError::Core)?;
                let tally = crate::score::on_dataset(predictor.as_mut(), held_out).map_err(TrainError::Core)?;
                squared += tally.mse() * held_out.len() as f64;
            }
            Ok((nu, squared / data.len().max(1) as f64))
        })
        .collect()
}

fn train_svm<T: Real>(settings: &FitSettings, data: &Dataset<T>) -> Result<Fitted, FitError> {
    if matches!(settings.svm.c, Some(Setting::Auto)) {
        let message = "--c auto is for the kernel learners (rsvm); the linear SVM takes a number (default 1)";
        return Err(FitError::Conflict(message.into()));
    }
    let c = Setting::given(settings.svm.c).unwrap_or(1.0);
    let (model, summary) =
        linear::train(data, svm_params::<T>(settings, c)?, &settings.class_weights, settings.seed, settings.budget)?;
    let bytes = model::to_bytes(&model).map_err(TrainError::Core)?;
    let summary = Summary::from([
        ("learner", "svm".into()),
        ("objective", summary.objective.into()),
        ("passes", summary.passes.into()),
        ("iterations", summary.passes.into()),
        ("converged", summary.converged.into()),
        ("support_vectors", summary.support_vectors.into()),
        ("centers", 0usize.into()),
        ("classes", summary.classes.into()),
        ("solver_bytes", summary.solver_bytes.into()),
    ]);
    Ok(Fitted { bytes, summary })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::Record;

    fn rows(targets: &[f64]) -> Dataset<f64> {
        let mut data = Dataset::new();
        for (i, &label) in targets.iter().enumerate() {
            let record = Record { label, indices: vec![0], values: vec![1.0 + i as f64], ..Record::default() };
            data.push(&record).unwrap();
        }
        data
    }

    /// Past `CG_SUBSAMPLE` rows, widths are compared on the subsample the cg solver draws,
    /// a given ridge scaled to its rows; up to it, on the rows themselves.
    #[test]
    fn widths_are_compared_on_a_subsample_of_a_large_set() {
        let n = krr::CG_SUBSAMPLE + 500;
        let targets: Vec<f64> = (0..n).map(|i| ((i * 37) % 101) as f64 / 10.0).collect();
        let data = rows(&targets);
        let (sample, ridges) = width_rows(&data, 3, &[2.0]).unwrap();
        assert_eq!(sample.as_ref(), &krr::subsample(&data, 3).unwrap());
        assert_eq!(sample.len(), krr::CG_SUBSAMPLE);
        assert!((ridges[0] - 2.0 * krr::CG_SUBSAMPLE as f64 / n as f64).abs() < 1e-15, "{ridges:?}");
        let small = rows(&targets[..krr::CG_SUBSAMPLE]);
        let (rows, ridges) = width_rows(&small, 3, &[2.0]).unwrap();
        assert!(matches!(rows, Cow::Borrowed(_)));
        assert_eq!(ridges, [2.0]);
        let mut settings = FitSettings::new(Learner::Krr);
        settings.kernel.gamma = Some(Setting::Value(0.5));
        settings.centers = Some(8);
        settings.seed = 3;
        let on_all = auto_width_search(&settings, &data, Task::Regression).unwrap().0;
        let on_sample = auto_width_search(&settings, &krr::subsample(&data, 3).unwrap(), Task::Regression).unwrap().0;
        assert_eq!(on_all, on_sample);
    }

    /// A search `auto_width_search` ran is what a fit of the same rows would run: given
    /// to rsvm, krr and lssvm it writes the same model; the fit takes it (a search whose
    /// scores were altered sets the width), but only on the rows it ran on.
    #[test]
    fn a_fit_takes_the_search_of_its_own_rows() {
        let targets: Vec<f64> = (0..80).map(|i| ((i * 37) % 11) as f64 - 5.0).collect();
        let classes: Vec<f64> = targets.iter().map(|&t| if t > 0.0 { 1.0 } else { -1.0 }).collect();
        for (learner, labels) in [(Learner::Rsvm, &classes), (Learner::Krr, &targets), (Learner::Lssvm, &classes)] {
            let data = rows(labels);
            let settings = FitSettings { centers: Some(12), ..FitSettings::new(learner) };
            let task = learner.task();
            let (_, searched) = auto_width_search(&settings, &data, task).unwrap();
            let searched = searched.unwrap();
            let fresh = fit(&settings, &data).unwrap();
            let given = fit(&FitSettings { searched: Some(searched.clone()), ..settings.clone() }, &data).unwrap();
            assert_eq!(given.bytes, fresh.bytes, "{learner:?}");
            assert_eq!(given.summary, fresh.summary, "{learner:?}");
            // Every width but one the fresh fit did not choose scored worst: the fit takes it.
            let gamma = |fitted: &Fitted| match fitted.summary.get("chosen") {
                Some(Field::Fields(chosen)) => chosen.get("gamma").cloned(),
                _ => None,
            };
            let mut altered = searched.clone();
            let other = altered.scores.iter().map(|s| s.gamma).find(|&g| gamma(&fresh) != Some(Field::Number(g)));
            let other = other.unwrap();
            for score in &mut altered.scores {
                score.summary.chosen.mse = if score.gamma == other { 0.0 } else { f64::MAX };
                score.summary.chosen.errors = if score.gamma == other { 0 } else { usize::MAX };
                score.summary.chosen.weighted_errors = score.summary.chosen.errors as f64;
            }
            let taken = fit(&FitSettings { searched: Some(altered.clone()), ..settings.clone() }, &data).unwrap();
            assert_eq!(gamma(&taken), Some(Field::Number(other)), "{learner:?}");
            let other = rows(&labels[..70]);
            let elsewhere = fit(&FitSettings { searched: Some(altered), ..settings.clone() }, &other).unwrap();
            assert_eq!(elsewhere.bytes, fit(&settings, &other).unwrap().bytes, "{learner:?}");
        }
    }

    /// Row weights go to the learners that weigh rows and are refused by the others; a
    /// subsample's ridges scale by its share of the weight.
    #[test]
    fn row_weights_are_for_the_learners_that_take_them() {
        let targets: Vec<f64> = (0..60).map(|i| ((i * 37) % 11) as f64 - 5.0).collect();
        let classes: Vec<f64> = targets.iter().map(|&t| if t > 0.0 { 1.0 } else { -1.0 }).collect();
        let weights: Vec<f64> = (0..60).map(|i| 1.0 + (i % 3) as f64).collect();
        let (mut regression, mut classification) = (rows(&targets), rows(&classes));
        regression.set_row_weights(weights.clone()).unwrap();
        classification.set_row_weights(weights).unwrap();
        for learner in [Learner::Svm, Learner::Rsvm, Learner::Lssvm, Learner::Krr, Learner::Ssvr, Learner::Mrrsvm] {
            let data = if learner.task() == Task::Regression { &regression } else { &classification };
            let mut settings = FitSettings::new(learner);
            settings.centers = Some(8);
            assert!(fit(&settings, data).is_ok(), "{learner:?}");
        }
        for learner in [Learner::Slkl, Learner::Kpls] {
            let refused = fit(&FitSettings::new(learner), &regression).err();
            assert!(
                matches!(&refused, Some(FitError::Conflict(m)) if m.contains("row weights")),
                "{learner:?}: {refused:?}"
            );
        }
        let mut cg = FitSettings::new(Learner::Krr);
        cg.krr_solver = krr::Solver::Cg;
        let refused = fit(&cg, &regression).err();
        assert!(matches!(&refused, Some(FitError::Conflict(m)) if m.contains("exact solver")), "{refused:?}");

        let n = krr::CG_SUBSAMPLE + 500;
        let mut large = rows(&(0..n).map(|i| (i % 7) as f64).collect::<Vec<_>>());
        large.set_row_weights((0..n).map(|i| 1.0 + (i % 5) as f64).collect()).unwrap();
        let (sample, ridges) = width_rows(&large, 3, &[2.0]).unwrap();
        let share = sample.row_weights().unwrap().iter().sum::<f64>() / large.total_weight();
        assert!((ridges[0] - 2.0 * share).abs() < 1e-15, "{ridges:?} {share}");
    }

    /// Under a budget, a fit whose `auto` searches widths before its trainer runs is
    /// refused up front with one figure, the most any stage holds: every budget short of
    /// it names it, and it is enough for every stage.
    #[test]
    fn a_budget_is_checked_against_the_whole_fit_first() {
        let (mut data, mut regression) = (Dataset::<f64>::new(), Dataset::<f64>::new());
        for i in 0..300 {
            let (a, b) = (((i * 37) % 101) as f64 / 50.0 - 1.0, ((i * 53) % 89) as f64 / 44.0 - 1.0);
            let row = Record { indices: vec![0, 1], values: vec![a, b], ..Record::default() };
            data.push(&Record { label: if a * b > 0.0 { 1.0 } else { -1.0 }, ..row.clone() }).unwrap();
            regression.push(&Record { label: a * b + (i % 7) as f64 / 70.0, ..row }).unwrap();
        }
        let cases = [
            (Learner::Rsvm, &data),
            (Learner::Lssvm, &data),
            (Learner::Krr, &regression),
            (Learner::Ssvr, &regression),
            (Learner::Kpls, &regression),
            (Learner::Ssvr, &regression),
        ];
        for (i, (learner, data)) in cases.into_iter().enumerate() {
            let mut settings = FitSettings::new(learner);
            settings.centers = Some(32);
            if i == cases.len() - 1 {
                // ε-SSVR with its C given holds less than the width search before it.
                settings.svm.c = Some(Setting::Value(1.0));
            }
            let needed = needed_bytes(&settings, data, data.bytes()).unwrap().unwrap();
            for budget in [1000, needed / 2, needed - 1] {
                settings.budget = Some(budget);
                let error = fit(&settings, data).err();
                let refused = matches!(error, Some(FitError::Train(TrainError::OverBudget { needed: n, budget: b })) if n == needed && b == budget);
                assert!(refused, "{learner:?} at {budget}: {error:?}");
            }
            settings.budget = Some(needed);
            assert!(fit(&settings, data).is_ok(), "{learner:?} at {needed}");
        }
        let svm = FitSettings::new(Learner::Svm);
        assert_eq!(needed_bytes(&svm, &data, data.bytes()).unwrap(), None);
    }

    /// Settings built without the CLI's parsers (Python, C) are refused as the flags
    /// refuse them, naming the setting.
    #[test]
    fn numbers_out_of_range_are_refused_by_name() {
        let data = rows(&[1.0, -1.0, 1.0, -1.0]);
        let mut c = FitSettings::new(Learner::Rsvm);
        c.svm.c = Some(Setting::Value(-1.0));
        let mut gamma = FitSettings::new(Learner::Krr);
        gamma.kernel.gamma = Some(Setting::Value(f64::NAN));
        let mut nu = FitSettings::new(Learner::Slkl);
        nu.nu = Some(Setting::Value(-0.5));
        for (settings, message) in [
            (c, "C must be a positive number, got -1"),
            (gamma, "gamma must be a positive number, got NaN"),
            (nu, "nu must be a number of at least 0, got -0.5"),
            (
                FitSettings { centers: Some(0), ..FitSettings::new(Learner::Rsvm) },
                "centers must be a whole number from 1 to 16384, got 0",
            ),
        ] {
            let error = fit(&settings, &data).err().map(|e| e.to_string());
            assert_eq!(error.as_deref(), Some(message));
        }
    }

    /// Equal targets leave a regression nothing to learn: an error saying so; a classifier's
    /// labels are checked by its own rules.
    #[test]
    fn equal_targets_are_refused_by_the_regressors() {
        let equal = rows(&[3.0, 3.0, 3.0, 3.0]);
        for learner in [Learner::Krr, Learner::Slkl, Learner::Ssvr, Learner::Kpls] {
            let error = fit(&FitSettings::new(learner), &equal).err().map(|e| e.to_string());
            let message = "every target is 3: there is nothing to learn (a model would predict 3 for every row)";
            assert_eq!(error.as_deref(), Some(message), "{learner:?}");
        }
        let mut varied = FitSettings::new(Learner::Krr);
        varied.kernel.gamma = Some(Setting::Value(1.0));
        assert!(fit(&varied, &rows(&[3.0, 1.0, 2.0, 5.0])).is_ok());
    }
}
