//! Training the reduced-kernel SVM on a [`Dataset`]: choose the centres (IRSVM or at
//! random), compute the features `z(x) = K(x, Ã)` — whitened to Nyström features
//! `L⁻¹z(x)`, `LLᵀ = K(Ã, Ã)`, unless asked not to — train the linear SVM on them, and fold
//! everything into a [`ReducedKernelModel`] that predicts with `m` kernel evaluations.
//!
//! Two solvers of the linear problem ([`Solver`]): dual coordinate descent, and the
//! paper's own RSVM solver, the smooth SVM by Newton–Armijo ([`kestrel_core::ssvm`],
//! seed 003 eq. 7 and 12) on the same features; by default the first, and the second for
//! each one-vs-rest problem on which the first is slow ([`Solver::Auto`]).

use kestrel_core::cholesky::Cholesky;
use kestrel_core::dcd::{DenseRows, Exit, LinearSvm, Loss, OneVsRest, ValidParams};
use kestrel_core::krr::RidgePath;
use kestrel_core::linalg::packed_len;
use kestrel_core::reduced_set::ReducedKernelModel;
use kestrel_core::ssvm::{self, SmoothSvm};
use kestrel_core::{Kernel, Real, Rng};

pub use super::centres::Selection;
use super::centres::{ReducedSet, select, selection_bytes, whiten};
use super::class_weights::{ClassWeights, row_weights, sample_weights};
use super::krr::{Task, best_ridge, choose_prefix, prefix_columns, sign_targets};
use super::{TrainError, check_budget, classes};
use crate::dataset::Dataset;
use crate::limits::zeroed;

/// The reduced-kernel SVM's settings.
#[derive(Clone, Debug)]
pub struct RsvmConfig<T> {
    /// Base kernel.
    pub kernel: Kernel<T>,
    /// Most centres.
    pub centres: usize,
    /// Centre selection.
    pub selection: Selection,
    /// Nyström features (whitened) rather than raw `K(x, Ã)`.
    pub whiten: bool,
    /// The linear solver's parameters.
    pub params: ValidParams<T>,
    /// Seed of the selection and the solver.
    pub seed: u64,
    /// Memory budget in bytes for training (see [`crate::batch`]).
    pub budget: Option<usize>,
    /// Which settings leave-one-out chooses (see [`Tune`]).
    pub tune: Tune,
    /// The solver of the linear problem.
    pub solver: Solver,
    /// Class weights, of the SVMs and of the least-squares SVM that tunes them
    /// ([`super::class_weights`]).
    pub class_weights: ClassWeights,
}

/// The solver of the linear SVM on the reduced-kernel features.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Solver {
    /// [`Solver::Dcd`], stopped after [`AUTO_PASSES_PER_CENTRE`]` · m` passes per problem
    /// (or its own cap, if lower); for the squared hinge, each problem that has not
    /// converged then (one per class past two classes) is solved again by [`Solver::Ssvm`],
    /// whose model it keeps; the problems DCD solved keep DCD's. A Newton iteration
    /// forms the `m × m` Hessian, `n·m²/2` multiply-adds against a pass's `2n·m`, and
    /// Newton–Armijo takes 4-30 of them: where DCD needs more passes than that costs, Newton
    /// is the faster way to a converged model (on River's shuttle at 19 centres, DCD stopped
    /// at its cap of 1000 passes in 5.6 s, Newton converged in 12 iterations; BENCHMARKS.md).
    /// Hinge loss: DCD alone, as [`Solver::Dcd`].
    #[default]
    Auto,
    /// Dual coordinate descent, hinge or squared hinge ([`kestrel_core::dcd`]).
    Dcd,
    /// The smooth SVM by Newton–Armijo ([`kestrel_core::ssvm`]): the squared-hinge problem
    /// `½(‖w‖² + w_b²) + C·Σξ²` of the DCD parameters (`C`, bias feature `B`) with the plus
    /// function smoothed by eq. (6) at `β =` [`SSVM_BETA`] — eq. (7) with its `C/2` equal to
    /// DCD's `C`, so one `C` means one problem for both solvers as `β → ∞`. It stops at the
    /// core's relative gradient tolerance (DCD's `ε` is not its rule). One-vs-rest solves
    /// one problem per class in the same workspace.
    Ssvm,
}

/// The passes per centre after which [`Solver::Auto`] turns from DCD to Newton: about the
/// cost of a Newton solve (see there).
pub const AUTO_PASSES_PER_CENTRE: usize = 8;

/// The smoothing `β` of [`Solver::Ssvm`], in margin units: `p(x, β) − x₊ ≤ ln 2/β ≈ 0.007`
/// — close to the squared hinge, and still smooth enough that Newton–Armijo needs a few
/// tens of iterations at most.
pub const SSVM_BETA: f64 = 100.0;

/// Settings chosen by the leave-one-out error of the least-squares SVM on the same
/// Nyström features ([`super::krr::choose_prefix`]) instead of taken from the
/// configuration: one ridge path per reduced-set size, no SVM trained twice.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Tune {
    /// `C = 1/(2λ*)`: the L2-loss SVM `½‖w‖² + CΣξ²` is the ridge problem
    /// `Σξ² + λ‖w‖²` with `λ = 1/(2C)`, the squared hinge in place of the squared error.
    pub c: bool,
    /// The reduced set: IRSVM's centres, in their order, cut to the smallest prefix whose
    /// LOO error has stopped improving (the configured threshold then only bounds the
    /// selection; give a small one).
    pub centres: bool,
}

/// What the tuning chose.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Tuned {
    /// `C` of the SVM.
    pub c: f64,
    /// The ridge behind it and its LOO scores.
    pub ridge: super::krr::RidgeScore,
}

/// What training did.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RsvmSummary {
    /// Centres kept.
    pub centres: usize,
    /// Summed over one-vs-rest problems, each by the solver whose model it kept: the dual
    /// objective of the linear problem (DCD), or the smooth primal objective `F` (SSVM).
    pub objective: f64,
    /// DCD's passes when it solved every problem, else Newton's iterations, summed.
    pub passes: usize,
    /// [`Solver::Dcd`] when DCD solved every problem, else [`Solver::Ssvm`] (Newton solved
    /// [`newton_problems`](Self::newton_problems) of them).
    pub solver: Solver,
    /// The problems Newton solved: 0 by DCD alone, all of them by [`Solver::Ssvm`], and by
    /// [`Solver::Auto`] those DCD left unconverged.
    pub newton_problems: usize,
    /// The DCD passes [`Solver::Auto`] took before it turned to Newton (0 otherwise).
    pub dcd_passes: usize,
    /// The solver met its stopping rule.
    pub converged: bool,
    /// Bytes training held at most besides the data set: dense copy, selection, features,
    /// factor, solver state, model.
    pub working_bytes: usize,
    /// What leave-one-out chose, when asked to.
    pub tuned: Option<Tuned>,
}

/// Bytes training holds at most for `n` rows of `dim` features, `capacity` centres and
/// `outputs` weight vectors with `config`'s selection, tuning and solver (its kernel and
/// parameters do not count), besides the data set: the dense copy, the selection's
/// buffers, the features, the factor, the labels, the solver's state and the model; when
/// tuning, also the `±1` targets, a prefix of the features and its ridge path.
pub fn working_bytes<T>(n: usize, dim: usize, capacity: usize, outputs: usize, config: &RsvmConfig<T>) -> usize {
    sized_bytes::<T>((n, dim, capacity, outputs), config.selection, config.tune, config.solver)
}

/// [`working_bytes`] from what it depends on: `(n, dim, capacity, outputs)` and the
/// selection, tuning and solver — known before the kernel is chosen.
pub fn sized_bytes<T>(
    (n, dim, capacity, outputs): (usize, usize, usize, usize),
    selection: Selection,
    tune: Tune,
    solver: Solver,
) -> usize {
    let scalars = |count: usize| count.saturating_mul(size_of::<T>());
    let selection = selection_bytes::<T>(n, dim, capacity, selection);
    let tuning = tune != Tune::default();
    let dcd = match outputs {
        1 => LinearSvm::bytes::<T>(n, capacity),
        _ => OneVsRest::bytes::<T>(n, capacity, outputs),
    };
    let ssvm = SmoothSvm::bytes::<T>(n, capacity).saturating_add(scalars(n.saturating_mul(outputs.saturating_add(1))));
    // Auto holds one solver at a time: DCD's state is dropped before Newton's is allocated.
    let solver = match solver {
        Solver::Dcd => dcd,
        Solver::Ssvm => ssvm,
        Solver::Auto => dcd.max(ssvm),
    };
    scalars(n.saturating_mul(dim))
        .saturating_add(selection)
        .saturating_add(scalars(n.saturating_mul(capacity)))
        .saturating_add(scalars(Cholesky::scalars_len(capacity)))
        .saturating_add(n.saturating_mul(size_of::<i32>()))
        .saturating_add(solver)
        .saturating_add(scalars(ReducedKernelModel::scalars_len(dim, capacity, outputs)))
        .saturating_add(if tuning { tuning_bytes::<T>(n, capacity, outputs) } else { 0 })
}

/// The tuning's buffers: targets, a prefix copy of the features and its ridge path.
fn tuning_bytes<T>(n: usize, capacity: usize, outputs: usize) -> usize {
    let copies = n.saturating_mul(outputs.saturating_add(capacity)).saturating_mul(size_of::<T>());
    copies.saturating_add(RidgePath::bytes::<T>(n, capacity, outputs))
}

/// Trains a reduced-kernel SVM on `data`, after checking the budget.
///
/// # Errors
/// [`TrainError`] for bad labels, data the core rejects or a budget too small.
pub fn train<T: Real>(
    data: &Dataset<T>,
    config: &RsvmConfig<T>,
) -> Result<(ReducedKernelModel<T, Vec<T>>, RsvmSummary), TrainError> {
    let (classes, labels) = classes::<T>(data.labels())?;
    let (n, dim, outputs) = (data.len(), data.dim().max(1), classes.outputs());
    let own = sample_weights::<T>(data)?;
    let weights = Weights {
        classes: config.class_weights.by_class::<T>(&classes, &labels)?,
        rows: row_weights(config.class_weights.by_row::<T>(&classes, &labels)?, own.as_deref()),
        own,
    };
    let capacity = config.centres.clamp(1, n);
    let working_bytes = working_bytes::<T>(n, dim, capacity, outputs, config);
    check_budget(data.bytes().saturating_add(working_bytes), config.budget)?;
    let points = data.dense(dim)?;
    let mut rng = Rng::seed_from_u64(config.seed);
    let ReducedSet { mut centres, mut features, m } =
        select(&points, dim, capacity, &config.kernel, config.selection, &mut rng)?;
    let factor = if config.whiten { Some(whiten(&config.kernel, &centres, dim, &mut features, m)?) } else { None };
    let (m, params, tuned) = if config.tune == Tune::default() {
        (m, config.params, None)
    } else {
        tune(config, (&mut features, &mut centres), m, (&labels, weights.rows.as_deref()), outputs)?
    };
    let rows = DenseRows::new(&features, m)?;
    let storage = zeroed(ReducedKernelModel::scalars_len(dim, m, outputs), "the model")?;
    let mut model = ReducedKernelModel::new_in(storage, config.kernel, dim, m, outputs)?;
    model.centres_mut().copy_from_slice(&centres);
    let whitening = factor.as_ref().and_then(|f| f.packed().get(..packed_len(m)));
    let row_weights = weights.own.as_deref();
    let problem = Problem { labels: &labels, class_weights: &weights.classes, row_weights, params, whitening };
    let solved = match config.solver {
        Solver::Ssvm => {
            let every: Vec<usize> = (0..outputs).collect();
            solve_ssvm(&mut model, &features, &problem, &every)?
        }
        Solver::Auto if params.loss() == Loss::SquaredHinge => {
            solve_auto(&mut model, (&rows, &features), &problem, &mut rng)?
        }
        Solver::Dcd | Solver::Auto => solve_dcd(&mut model, &rows, &problem, &mut rng)?.0,
    };
    let Solved { objective, passes, converged, newton_problems, dcd_passes } = solved;
    for (slot, label) in model.labels_mut().iter_mut().zip(classes.model_labels()) {
        *slot = T::from_f64(label);
    }
    let solver = if newton_problems == 0 { Solver::Dcd } else { Solver::Ssvm };
    let summary = RsvmSummary {
        centres: m,
        objective,
        passes,
        converged,
        solver,
        newton_problems,
        dcd_passes,
        working_bytes,
        tuned,
    };
    Ok((model, summary))
}

/// The weights of a training: by class (the SVMs' costs), by row (the least-squares SVM's:
/// class times own; `None` without weights) and the rows' own (the SVMs', on top of their
/// class's; `None` when every row weighs 1).
struct Weights<T> {
    classes: Vec<T>,
    rows: Option<Vec<T>>,
    own: Option<Vec<T>>,
}

/// The linear problem on the features: each row's solver label, the class weights, the
/// rows' own weights, the DCD parameters and the whitening factor the model folds in.
struct Problem<'a, T: Real> {
    labels: &'a [i32],
    class_weights: &'a [T],
    row_weights: Option<&'a [T]>,
    params: ValidParams<T>,
    whitening: Option<&'a [T]>,
}

impl<T: Real> Problem<'_, T> {
    /// `(ω₊, ω₋)` of problem `output`: the two classes' weights for one output (class 0 is
    /// the solver's `+1`), else class `output`'s against the rest's 1.
    fn weights_of(&self, output: usize, outputs: usize) -> (T, T) {
        let weight = |class: usize| self.class_weights.get(class).copied().unwrap_or(T::ONE);
        if outputs == 1 { (weight(0), weight(1)) } else { (weight(output), T::ONE) }
    }
}

/// What the solvers did, summed over the one-vs-rest problems (see [`RsvmSummary`]).
#[derive(Clone, Copy, Debug, Default)]
struct Solved {
    objective: f64,
    passes: usize,
    converged: bool,
    newton_problems: usize,
    dcd_passes: usize,
}

/// Dual coordinate descent on `rows`, its weights folded into `model`; the outputs whose
/// problem stopped at the pass cap, and the objectives of the others summed.
fn solve_dcd<T: Real>(
    model: &mut ReducedKernelModel<T, Vec<T>>,
    rows: &DenseRows<'_, T>,
    problem: &Problem<'_, T>,
    rng: &mut Rng,
) -> Result<(Solved, Vec<usize>, f64), TrainError> {
    let Problem { labels, params, whitening, .. } = *problem;
    let (n, m, outputs, bias) = (labels.len(), model.centres_len(), model.outputs(), params.bias());
    let (mut capped, mut converged_objective) = (Vec::new(), 0.0);
    let mut on_class = |class: usize, outcome: &kestrel_core::dcd::Outcome<T>| match outcome.exit {
        Exit::Capped => capped.push(class),
        Exit::Converged => converged_objective += outcome.objective.to_f64(),
    };
    let outcome = if outputs == 1 {
        let scalars = zeroed(LinearSvm::scalars_len(n, m), "the solver")?;
        let (positive, negative) = problem.weights_of(0, 1);
        let params = params.weighted(positive, negative)?;
        let mut svm = LinearSvm::new_in(scalars, zeroed(LinearSvm::indices_len(n), "the solver")?, n, m, params)?;
        let outcome = match problem.row_weights {
            Some(row_weights) => svm.train_weighted(rows, labels, row_weights, rng)?,
            None => svm.train(rows, labels, rng)?,
        };
        on_class(0, &outcome);
        model.set_coefficients(0, svm.weights(), svm.bias_weight(), bias, whitening)?;
        outcome
    } else {
        let scalars = zeroed(OneVsRest::scalars_len(n, m, outputs), "the solver")?;
        let indices = zeroed(OneVsRest::indices_len(n), "the solver")?;
        let mut svm = OneVsRest::new_in(scalars, indices, n, m, outputs, params)?;
        let weights = (Some(problem.class_weights), problem.row_weights);
        let outcome = svm.train_each(rows, labels, weights, rng, &mut on_class)?;
        for c in 0..outputs {
            let (w, bias_weight) = (svm.weights(c).unwrap_or(&[]), svm.bias_weight(c).unwrap_or(T::ZERO));
            model.set_coefficients(c, w, bias_weight, bias, whitening)?;
        }
        outcome
    };
    let (objective, converged) = (outcome.objective.to_f64(), outcome.exit == Exit::Converged);
    let solved = Solved { objective, passes: outcome.passes, converged, newton_problems: 0, dcd_passes: 0 };
    Ok((solved, capped, converged_objective))
}

/// [`Solver::Auto`] for the squared hinge on the features (as `rows` and as the `n × m`
/// slice): DCD within its budget of passes, then Newton on each problem DCD left
/// unconverged, its model replacing DCD's for that output.
fn solve_auto<T: Real>(
    model: &mut ReducedKernelModel<T, Vec<T>>,
    (rows, features): (&DenseRows<'_, T>, &[T]),
    problem: &Problem<'_, T>,
    rng: &mut Rng,
) -> Result<Solved, TrainError> {
    let params = problem.params;
    let budget = model.centres_len().saturating_mul(AUTO_PASSES_PER_CENTRE).clamp(1, params.max_passes());
    let capped_problem = Problem { params: params.with_max_passes(budget)?, ..*problem };
    let (dcd, capped, kept) = solve_dcd(model, rows, &capped_problem, rng)?;
    if capped.is_empty() {
        return Ok(dcd);
    }
    let newton = solve_ssvm(model, features, problem, &capped)?;
    Ok(Solved { objective: kept + newton.objective, newton_problems: capped.len(), dcd_passes: dcd.passes, ..newton })
}

/// The smooth SVM ([`Solver::Ssvm`]) on `features` (`n × m`) for the problems of
/// `outputs` (`±1` targets; one-vs-rest, one per class, past two classes; each with its
/// class weights), folded into `model`. Each starts from zero, so a problem's model does
/// not depend on the others.
fn solve_ssvm<T: Real>(
    model: &mut ReducedKernelModel<T, Vec<T>>,
    features: &[T],
    problem: &Problem<'_, T>,
    outputs: &[usize],
) -> Result<Solved, TrainError> {
    let Problem { labels, params, whitening, .. } = *problem;
    if params.loss() != Loss::SquaredHinge {
        return Err(TrainError::Core(kestrel_core::Error::InvalidParam { name: "loss" }));
    }
    let (n, m, bias) = (labels.len(), model.centres_len(), params.bias());
    let smooth = ssvm::Params::new().c(params.c_pos() + params.c_pos()).bias(bias).beta(T::from_f64(SSVM_BETA));
    let mut svm = SmoothSvm::new_in(zeroed(SmoothSvm::scalars_len(n, m), "the solver")?, n, m, smooth.check()?)?;
    let all = model.outputs();
    let signs = sign_targets::<T>(labels, all)?;
    let mut targets: Vec<T> = zeroed(n, "the targets")?;
    let mut solved = Solved { converged: true, newton_problems: outputs.len(), ..Solved::default() };
    for &c in outputs {
        for (y, row) in targets.iter_mut().zip(signs.chunks_exact(all)) {
            *y = row.get(c).copied().unwrap_or(T::ZERO);
        }
        let (positive, negative) = problem.weights_of(c, all);
        svm.set_params(smooth.class_weights(positive, negative).check()?);
        let outcome = match problem.row_weights {
            Some(row_weights) => svm.train_weighted(features, &targets, row_weights)?,
            None => svm.train(features, &targets)?,
        };
        model.set_coefficients(c, svm.weights(), svm.bias_weight(), bias, whitening)?;
        solved.objective += outcome.objective.to_f64();
        solved.passes += outcome.iterations;
        solved.converged &= outcome.exit != ssvm::Exit::Capped;
    }
    Ok(solved)
}

/// Applies [`Tune`]: the prefix of the centres and the `C` leave-one-out prefers. Cuts
/// `features` and `centres` to the chosen prefix; returns its size, the solver's
/// parameters and the choice.
fn tune<T: Real>(
    config: &RsvmConfig<T>,
    (features, centres): (&mut Vec<T>, &mut Vec<T>),
    m: usize,
    (labels, weights): (&[i32], Option<&[T]>),
    outputs: usize,
) -> Result<(usize, ValidParams<T>, Option<Tuned>), TrainError> {
    if !config.whiten {
        return Err(TrainError::Core(kestrel_core::Error::InvalidParam { name: "whiten" }));
    }
    let targets = sign_targets::<T>(labels, outputs)?;
    let (keep, ridge) = if config.tune.centres {
        let choice = choose_prefix(features, &targets, weights, m, outputs, Task::Classification)?;
        (choice.centres, choice.chosen)
    } else {
        (m, best_ridge(features, &targets, weights, m, outputs, Task::Classification)?)
    };
    if keep < m {
        *features = prefix_columns(features, m, keep)?;
        centres.truncate(keep * (centres.len() / m));
    }
    let (c, params) = if config.tune.c {
        let c = 1.0 / (2.0 * ridge.lambda);
        (c, config.params.with_c(T::from_f64(c))?)
    } else {
        (config.params.c_pos().to_f64(), config.params)
    };
    Ok((keep, params, Some(Tuned { c, ridge })))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::Record;

    /// XOR-like quadrants: not linearly separable.
    fn quadrants(n: usize) -> Dataset<f64> {
        let mut data = Dataset::<f64>::new();
        let mut rng = Rng::seed_from_u64(9);
        for _ in 0..n {
            let (a, b) = (rng.uniform_in(-1.0, 1.0), rng.uniform_in(-1.0, 1.0));
            let label = if a * b > 0.0 { 1.0 } else { -1.0 };
            data.push(&Record { label, indices: vec![0, 1], values: vec![a, b], line: 0, ..Record::default() })
                .unwrap();
        }
        data
    }

    /// rsvm on `data` by `solver` at (up to) 12 IRSVM centres of an RBF kernel of `γ = 2`.
    fn twelve_centres(
        data: &Dataset<f64>,
        params: ValidParams<f64>,
        solver: Solver,
    ) -> (ReducedKernelModel<f64, Vec<f64>>, RsvmSummary) {
        let config = RsvmConfig {
            kernel: Kernel::rbf(2.0).unwrap(),
            centres: 12,
            selection: Selection::Irsvm { rms: 0.005 },
            whiten: true,
            params,
            seed: 1,
            budget: None,
            tune: Tune::default(),
            solver,
            class_weights: ClassWeights::Unit,
        };
        train(data, &config).unwrap()
    }

    /// Auto is DCD where DCD converges within its budget of passes — the same model — and
    /// Newton's model where it does not; the hinge loss stays with DCD.
    #[test]
    fn auto_turns_to_newton_only_when_dcd_is_slow() {
        let data = quadrants(400);
        let model_of = |c: f64, loss: Loss, solver: Solver| {
            let params = kestrel_core::dcd::Params::new().c(c).bias(1.0).loss(loss).check().unwrap();
            twelve_centres(&data, params, solver)
        };
        let (easy, hard) = (1.0, 1e6);
        let (auto, summary) = model_of(easy, Loss::SquaredHinge, Solver::Auto);
        let (dcd, dcd_summary) = model_of(easy, Loss::SquaredHinge, Solver::Dcd);
        assert!(dcd_summary.converged && dcd_summary.passes <= 12 * AUTO_PASSES_PER_CENTRE, "{dcd_summary:?}");
        assert_eq!((summary.solver, summary.dcd_passes, auto), (Solver::Dcd, 0, dcd));
        let (auto, summary) = model_of(hard, Loss::SquaredHinge, Solver::Auto);
        let (newton, _) = model_of(hard, Loss::SquaredHinge, Solver::Ssvm);
        let (_, dcd_summary) = model_of(hard, Loss::SquaredHinge, Solver::Dcd);
        assert!(dcd_summary.passes > 12 * AUTO_PASSES_PER_CENTRE, "{dcd_summary:?}");
        assert_eq!((summary.solver, summary.dcd_passes, auto), (Solver::Ssvm, 12 * AUTO_PASSES_PER_CENTRE, newton));
        assert!(summary.converged);
        let (auto, summary) = model_of(hard, Loss::Hinge, Solver::Auto);
        assert_eq!((summary.solver, auto), (Solver::Dcd, model_of(hard, Loss::Hinge, Solver::Dcd).0));
    }

    /// Past two classes, Auto turns to Newton only for the one-vs-rest problems DCD left
    /// unconverged: each of those outputs is Newton's model, each other DCD's, bit for bit.
    #[test]
    fn auto_solves_again_only_the_problems_dcd_left() {
        // Class 2 a cluster far from the quadrants of classes 0 and 1: its problem is easy.
        let mut data = Dataset::<f64>::new();
        let mut rng = Rng::seed_from_u64(4);
        for i in 0..360 {
            let (a, b) = (rng.uniform_in(-1.0, 1.0), rng.uniform_in(-1.0, 1.0));
            let (label, values) = match i % 6 {
                5 => (2.0, vec![4.0 + a / 5.0, 4.0 + b / 5.0]),
                _ => (if a * b > 0.0 { 0.0 } else { 1.0 }, vec![a, b]),
            };
            data.push(&Record { label, indices: vec![0, 1], values, ..Record::default() }).unwrap();
        }
        let budget = 12 * AUTO_PASSES_PER_CENTRE;
        let model_of = |solver: Solver, max_passes: usize| {
            let params = kestrel_core::dcd::Params::new().c(1e5).bias(1.0).max_passes(max_passes).check().unwrap();
            twelve_centres(&data, params, solver)
        };
        let (auto, summary) = model_of(Solver::Auto, 1000);
        let (dcd, dcd_summary) = model_of(Solver::Dcd, budget);
        let (newton, _) = model_of(Solver::Ssvm, 1000);
        assert!(summary.newton_problems > 0 && summary.newton_problems < 3, "{summary:?}");
        assert_eq!((summary.solver, summary.dcd_passes), (Solver::Ssvm, dcd_summary.passes));
        let mut from_newton = 0;
        for c in 0..3 {
            // Output c's decision values at a few points: its coefficients, as the model uses them.
            let output = |model: &ReducedKernelModel<f64, Vec<f64>>| -> Vec<u64> {
                let points = [[0.5, 0.5], [-0.3, 0.8], [4.0, 4.1], [2.0, -1.0]];
                points
                    .iter()
                    .map(|x| {
                        let mut values = [0.0; 3];
                        model.decision_values(x, &mut values).unwrap();
                        values[c].to_bits()
                    })
                    .collect()
            };
            if output(&auto) == output(&newton) {
                from_newton += 1;
            } else {
                assert_eq!(output(&auto), output(&dcd), "output {c}");
            }
        }
        assert_eq!(from_newton, summary.newton_problems);
    }

    #[test]
    fn learns_a_nonlinear_problem_with_few_centres() {
        let data = quadrants(400);
        let params = kestrel_core::dcd::Params::new().c(10.0).bias(1.0).check().unwrap();
        let cases = [
            (Selection::Irsvm { rms: 0.005 }, Solver::Dcd),
            (Selection::Random, Solver::Dcd),
            (Selection::Irsvm { rms: 0.005 }, Solver::Ssvm),
        ];
        for (selection, solver) in cases {
            let kernel = Kernel::rbf(2.0).unwrap();
            let tune = Tune::default();
            let config = RsvmConfig {
                kernel,
                centres: 30,
                selection,
                whiten: true,
                params,
                seed: 1,
                budget: None,
                tune,
                solver,
                class_weights: ClassWeights::Unit,
            };
            let (model, summary) = train(&data, &config).unwrap();
            assert!(summary.centres <= 30 && summary.centres == model.centres_len());
            let correct = (0..data.len())
                .filter(|&i| {
                    let (idx, values) = data.row(i).unwrap();
                    let mut x = [0.0; 2];
                    for (&j, &v) in idx.iter().zip(values) {
                        x[j as usize] = v;
                    }
                    model.predict(&x).unwrap() == data.labels()[i]
                })
                .count();
            assert!(correct > 360, "{selection:?}: {correct} of 400");
            let small = RsvmConfig { budget: Some(100_000), ..config.clone() };
            let error = train(&data, &small).err();
            assert!(matches!(error, Some(TrainError::OverBudget { budget: 100_000, .. })), "{error:?}");
        }
    }
}
