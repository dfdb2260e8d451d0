//! Training SLKL (kernel regression) on a [`Dataset`] and packing its [`Predictor`].
//!
//! The columns `c_m` are precomputed (`n·M` scalars) when that fits the memory budget,
//! and computed on the fly (`n·(m0_max + 1)`) otherwise.

use kestrel_core::slkl::{self, Candidates, Dims, ExitReason, Predictor, Slkl, ValidParams};
use kestrel_core::{Error, Real};

use crate::dataset::Dataset;
use crate::linear::TrainError;

/// SLKL's capacities.
#[derive(Clone, Copy, Debug)]
pub struct SlklConfig<T> {
    /// Learner parameters (kernel, ν, ε, seed, ...).
    pub params: ValidParams<T>,
    /// Candidate centres `M`.
    pub candidates: usize,
    /// Most active centres `m0`.
    pub max_active: usize,
    /// Memory budget in bytes for the learner (the data set not included).
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
    let candidates = config.candidates.clamp(1, n.max(1));
    let max_active = config.max_active.clamp(1, candidates);
    let dims = dims_for::<T>(n, dim, candidates, max_active, config.budget).ok_or(TrainError::OverBudget {
        needed: Slkl::bytes::<T>(Dims::new(n, dim, candidates, max_active)),
        budget: config.budget.unwrap_or(0),
    })?;
    let x = data.dense(dim);
    let y: Vec<T> = data.labels().iter().map(|&v| T::from_f64(v)).collect();
    let mut learner = Slkl::new_in(
        vec![T::ZERO; Slkl::scalars_len(dims)],
        vec![0usize; Slkl::indices_len(dims)],
        dims,
        config.params,
        &x,
        &y,
        Candidates::Random,
    )?;
    let summary = learner.run()?;
    let m0 = learner.active_len();
    let model = learner.predictor_in(vec![T::ZERO; Predictor::scalars_len(m0, dim)])?;
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

/// The model file bytes of a predictor.
///
/// # Errors
/// Only if the encoder rejects the model (it does not for a valid one).
pub fn encode<T: Real>(model: &Predictor<T, Vec<T>>) -> Result<Vec<u8>, Error> {
    let mut bytes = vec![0u8; 64 + 2 * Predictor::bytes::<T>(model.len(), model.dim())];
    let len = model.encode(&mut bytes)?;
    bytes.truncate(len);
    Ok(bytes)
}
