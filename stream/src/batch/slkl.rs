//! Training SLKL (kernel regression) on a [`Dataset`] and packing its [`Predictor`].
//!
//! The data set is copied into a dense `n × d` matrix. The columns `c_m` are precomputed
//! (`n·M` scalars) when that fits the memory budget, and computed on the fly
//! (`n·(m0_max + 1)`) otherwise.

use kestrel_core::Real;
use kestrel_core::slkl::{self, Candidates, Dims, ExitReason, Predictor, Slkl, ValidParams};

use super::{TrainError, check_budget};
use crate::dataset::Dataset;
use crate::limits::zeroed;

/// SLKL's capacities.
#[derive(Clone, Copy, Debug)]
pub struct SlklConfig<T> {
    /// Learner parameters (kernel, ν, ε, seed, ...).
    pub params: ValidParams<T>,
    /// Candidate centres `M`.
    pub candidates: usize,
    /// Most active centres `m0`.
    pub max_active: usize,
    /// Memory budget in bytes for training (see [`crate::batch`]).
    pub budget: Option<usize>,
}

/// What training did.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SlklSummary {
    /// `F(μ)` at the end.
    pub objective: f64,
    /// Coordinate steps.
    pub steps: u64,
    /// The stopping rule fired (rather than the step cap).
    pub converged: bool,
    /// Active centres `m0`.
    pub centres: usize,
    /// Bytes of the learner's buffers.
    pub working_bytes: usize,
    /// Columns were precomputed.
    pub precomputed: bool,
}

/// The capacities for `n` rows of `dim` features: precomputed columns when they fit the
/// budget (or no budget is set), else columns on the fly; `None` when neither fits.
pub fn dims_for<T>(n: usize, dim: usize, candidates: usize, max_active: usize, budget: Option<usize>) -> Option<Dims> {
    let on_the_fly = Dims::new(n, dim, candidates, max_active);
    let precomputed = on_the_fly.precomputed();
    match budget {
        None => Some(precomputed),
        Some(b) if Slkl::bytes::<T>(precomputed) <= b => Some(precomputed),
        Some(b) if Slkl::bytes::<T>(on_the_fly) <= b => Some(on_the_fly),
        Some(_) => None,
    }
}

/// Trains on `data` (targets are the labels).
///
/// # Errors
/// [`TrainError`] for data the core rejects or a budget too small.
pub fn train<T: Real>(
    data: &Dataset<T>,
    config: &SlklConfig<T>,
) -> Result<(Predictor<T, Vec<T>>, SlklSummary), TrainError> {
    let (n, dim) = (data.len(), data.dim().max(1));
    if n == 0 {
        return Err(TrainError::Empty);
    }
    let candidates = config.candidates.clamp(1, n);
    let max_active = config.max_active.clamp(1, candidates);
    // The data set, its dense copy and the targets, besides the learner and the model.
    let fixed = data
        .bytes()
        .saturating_add(data.dense_bytes(dim))
        .saturating_add(n.saturating_mul(size_of::<T>()))
        .saturating_add(Predictor::bytes::<T>(max_active, dim));
    let learner_budget = config.budget.map(|b| b.saturating_sub(fixed));
    let dims = match dims_for::<T>(n, dim, candidates, max_active, learner_budget) {
        Some(dims) => dims,
        None => {
            let needed = fixed.saturating_add(Slkl::bytes::<T>(Dims::new(n, dim, candidates, max_active)));
            return Err(TrainError::OverBudget { needed, budget: config.budget.unwrap_or(0) });
        }
    };
    check_budget(fixed.saturating_add(Slkl::bytes::<T>(dims)), config.budget)?;
    let x = data.dense(dim)?;
    let mut y = zeroed(n, "the targets")?;
    for (target, &label) in y.iter_mut().zip(data.labels()) {
        *target = T::from_f64(label);
    }
    let mut learner = Slkl::new_in(
        zeroed(Slkl::scalars_len(dims), "the learner")?,
        zeroed(Slkl::indices_len(dims), "the learner")?,
        dims,
        config.params,
        &x,
        &y,
        Candidates::Random,
    )?;
    let summary = learner.run()?;
    let m0 = learner.active_len();
    let model = learner.predictor_in(zeroed(Predictor::scalars_len(m0, dim), "the model")?)?;
    let summary = SlklSummary {
        objective: summary.objective.to_f64(),
        steps: summary.steps,
        converged: summary.reason == ExitReason::Converged,
        centres: m0,
        working_bytes: Slkl::bytes::<T>(dims),
        precomputed: dims.column_mode() == slkl::ColumnMode::Precomputed,
    };
    Ok((model, summary))
}
