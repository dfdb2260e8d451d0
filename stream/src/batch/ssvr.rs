//! Smooth ε-insensitive support vector regression on the reduced kernel (ε-SSVR, seed 003
//! eq. 21-23 with the reduced kernel of eq. 10-13) on a [`Dataset`].
//!
//! Training: choose the centres ([`super::centres`]), whiten their features to
//! `z(x) = L⁻¹K(Ã, x)` (or keep `K(x, Ã)` as eq. 12 does, when asked), solve
//!
//! `min ½(‖w‖² + b²) + (C/2)·Σ_i p_ε²(wᵀz_i + b − (y_i − ȳ), β)`
//!
//! by Newton–Armijo ([`kestrel_core::ssvm`]), and fold `L⁻ᵀ` into the weights, so the model
//! is the kernel expansion `f(x) = ȳ + b + Σ_j u_j k(x, x̃_j)` ([`Predictor`], the form
//! kernel ridge regression's regressor has): `m` kernel evaluations per prediction.
//!
//! Row weights ([`Dataset::row_weights`]) weigh each row's loss in the sum and its target
//! in `ȳ` and `s_y` (a row of weight 2 counts as two copies of it).
//!
//! Conventions where eq. (22) leaves a choice:
//! - the targets are centred by their mean `ȳ` (added back to the intercept): the `½b²` of
//!   eq. (22) then shrinks the intercept towards the mean, not towards 0, which for
//!   targets in raw units (hundreds) would bias every prediction;
//! - `β = `[`SSVR_BETA`]`/s_y`, `s_y` the targets' standard deviation: `β` has the units of
//!   `1/residual`, and `p(x, β) − x₊ ≤ ln 2/β` is then `0.007·s_y`, far inside the tube of
//!   any `ε` worth having;
//! - `ε` is in the targets' units (LIBSVM `-p`).
//!
//! **Memory** ([`working_bytes`]): the dense copy `n·d`, the selection, the features `n·m`,
//! the factor, the targets `n`, the solver ([`SmoothSvm::scalars_len`]) and the model.

use kestrel_core::cholesky::Cholesky;
use kestrel_core::linalg::{Triangle, solve_lower_transposed};
use kestrel_core::slkl::Predictor;
use kestrel_core::ssvm::{self, SmoothSvm, Task};
use kestrel_core::{Error, Kernel, Real, Rng};

use super::centres::{ReducedSet, Selection, select, selection_bytes, whiten};
use super::class_weights::sample_weights;
use super::{TrainError, check_budget};
use crate::dataset::Dataset;
use crate::limits::zeroed;

/// `β·s_y`: the smoothing of eq. (6) in units of the targets' standard deviation.
pub const SSVR_BETA: f64 = 100.0;

/// The ε-SSVR learner's settings.
#[derive(Clone, Copy, Debug)]
pub struct SsvrConfig<T> {
    /// Base kernel.
    pub kernel: Kernel<T>,
    /// Most centres.
    pub centres: usize,
    /// Centre selection.
    pub selection: Selection,
    /// Nyström features (whitened) rather than raw `K(x, Ã)`.
    pub whiten: bool,
    /// `C` of eq. (22).
    pub c: f64,
    /// The tube's half-width `ε`, in the targets' units.
    pub epsilon: f64,
    /// Seed of the selection.
    pub seed: u64,
    /// Memory budget in bytes for training (see [`crate::batch`]).
    pub budget: Option<usize>,
}

/// What training did.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SsvrSummary {
    /// Centres kept.
    pub centres: usize,
    /// `F` at the solution.
    pub objective: f64,
    /// Newton iterations.
    pub iterations: usize,
    /// The gradient met the tolerance (or reached the precision's rounding).
    pub converged: bool,
    /// Bytes training held at most besides the data set.
    pub working_bytes: usize,
}

/// Bytes training holds at most for `n` rows of `dim` features and `capacity` centres,
/// besides the data set (see the module doc).
pub fn working_bytes<T>(n: usize, dim: usize, capacity: usize, selection: Selection) -> usize {
    let scalars = |count: usize| count.saturating_mul(size_of::<T>());
    scalars(n.saturating_mul(dim))
        .saturating_add(selection_bytes::<T>(n, dim, capacity, selection))
        .saturating_add(scalars(n.saturating_mul(capacity)))
        .saturating_add(scalars(Cholesky::scalars_len(capacity)))
        .saturating_add(scalars(n))
        .saturating_add(SmoothSvm::bytes::<T>(n, capacity))
        .saturating_add(Predictor::bytes::<T>(capacity, dim))
}

/// Trains on `data`, after checking the budget.
///
/// # Errors
/// [`TrainError`] for data the core rejects (fewer than 2 rows, constant targets,
/// parameters out of range) or a budget too small.
pub fn train<T: Real>(
    data: &Dataset<T>,
    config: &SsvrConfig<T>,
) -> Result<(Predictor<T, Vec<T>>, SsvrSummary), TrainError> {
    let (n, dim) = (data.len(), data.dim().max(1));
    let capacity = config.centres.clamp(1, n.max(1));
    let working_bytes = working_bytes::<T>(n, dim, capacity, config.selection);
    check_budget(data.bytes().saturating_add(working_bytes), config.budget)?;
    if n < 2 {
        return Err(TrainError::Core(Error::InvalidParam { name: "n" }));
    }
    let (mean, deviation) = moments(data);
    if !(deviation > 0.0 && deviation.is_finite()) {
        return Err(TrainError::Core(Error::InvalidParam { name: "targets" }));
    }
    let params = ssvm::Params::new()
        .task(Task::Regression { epsilon: T::from_f64(config.epsilon) })
        .c(T::from_f64(config.c))
        .beta(T::from_f64(SSVR_BETA / deviation))
        .check()?;
    let points = data.dense(dim)?;
    let mut rng = Rng::seed_from_u64(config.seed);
    let ReducedSet { centres, mut features, m } =
        select(&points, dim, capacity, &config.kernel, config.selection, &mut rng)?;
    let factor = if config.whiten { Some(whiten(&config.kernel, &centres, dim, &mut features, m)?) } else { None };
    let mut targets: Vec<T> = zeroed(n, "the targets")?;
    for (slot, &y) in targets.iter_mut().zip(data.labels()) {
        *slot = T::from_f64(y - mean);
    }
    let mut svm = SmoothSvm::new_in(zeroed(SmoothSvm::scalars_len(n, m), "the solver")?, n, m, params)?;
    let outcome = match sample_weights::<T>(data)? {
        Some(row_weights) => svm.train_weighted(&features, &targets, &row_weights)?,
        None => svm.train(&features, &targets)?,
    };
    let mut u = svm.weights().to_vec();
    if let Some(factor) = &factor {
        solve_lower_transposed(factor.packed(), m, Triangle::Packed, &mut u)?;
    }
    let intercept = T::from_f64(mean) + svm.bias();
    let storage = zeroed(Predictor::scalars_len(m, dim), "the model")?;
    let model = Predictor::from_parts_in(storage, config.kernel, dim, intercept, &centres, &u)?;
    let summary = SsvrSummary {
        centres: m,
        objective: outcome.objective.to_f64(),
        iterations: outcome.iterations,
        converged: outcome.exit != ssvm::Exit::Capped,
        working_bytes,
    };
    Ok((model, summary))
}

/// The mean and the standard deviation (ddof 0) of `data`'s targets, each weighing its
/// row's weight (a target of weight 2 counting as two copies of it).
fn moments<T: Real>(data: &Dataset<T>) -> (f64, f64) {
    let weight = |i: usize| data.row_weights().and_then(|w| w.get(i)).copied().unwrap_or(1.0);
    let total = data.total_weight().max(f64::MIN_POSITIVE);
    let values = data.labels();
    let mean = values.iter().enumerate().map(|(i, y)| weight(i) * y).sum::<f64>() / total;
    let variance = values.iter().enumerate().map(|(i, y)| weight(i) * (y - mean) * (y - mean)).sum::<f64>() / total;
    (mean, variance.sqrt())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::Record;

    fn data(n: usize, seed: u64, target: impl Fn(f64, f64) -> f64) -> Dataset<f64> {
        let mut data = Dataset::<f64>::new();
        let mut rng = Rng::seed_from_u64(seed);
        for _ in 0..n {
            let (a, b) = (rng.uniform_in(-2.0, 2.0), rng.uniform_in(-2.0, 2.0));
            let record = Record { label: target(a, b), indices: vec![0, 1], values: vec![a, b], ..Record::default() };
            data.push(&record).unwrap();
        }
        data
    }

    fn config(epsilon: f64) -> SsvrConfig<f64> {
        let kernel = Kernel::rbf(0.5).unwrap();
        let selection = Selection::Irsvm { rms: 1e-4 };
        SsvrConfig { kernel, centres: 40, selection, whiten: true, c: 100.0, epsilon, seed: 3, budget: None }
    }

    fn test_mse(model: &Predictor<f64, Vec<f64>>, test: &Dataset<f64>) -> f64 {
        let squares =
            (0..test.len()).map(|i| (model.predict(test.row(i).unwrap().1).unwrap() - test.labels()[i]).powi(2));
        squares.sum::<f64>() / test.len() as f64
    }

    #[test]
    fn learns_a_nonlinear_target_in_raw_units() {
        let target = |a: f64, b: f64| 200.0 + 30.0 * (a * b).sin() + 10.0 * a;
        let (train_set, test_set) = (data(300, 1, target), data(200, 2, target));
        let (model, summary) = train(&train_set, &config(0.5)).unwrap();
        assert!(summary.converged && summary.iterations < 40, "{summary:?}");
        assert!(summary.centres <= 40);
        let mse = test_mse(&model, &test_set);
        assert!(mse < 1.0, "test MSE {mse} (target variance ≈ 600)");
        // A tube wider than the targets' spread fits nothing but the mean.
        let (flat, _) = train(&train_set, &config(1e3)).unwrap();
        assert!(test_mse(&flat, &test_set) > 100.0);
    }

    #[test]
    fn bad_data_and_budgets_are_errors() {
        let constant = data(50, 1, |_, _| 2.0);
        assert_eq!(
            train(&constant, &config(0.1)).err(),
            Some(TrainError::Core(Error::InvalidParam { name: "targets" }))
        );
        let slope = data(50, 1, |a, _| a);
        assert!(train(&data(1, 1, |a, _| a), &config(0.1)).is_err());
        let negative = SsvrConfig { epsilon: -1.0, ..config(0.1) };
        assert_eq!(train(&slope, &negative).err(), Some(TrainError::Core(Error::InvalidParam { name: "epsilon" })));
        let small = SsvrConfig { budget: Some(10_000), ..config(0.1) };
        assert!(matches!(train(&slope, &small), Err(TrainError::OverBudget { .. })));
    }
}
