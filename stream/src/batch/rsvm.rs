//! Training the reduced-kernel SVM on a [`Dataset`]: choose the centres (IRSVM or at
//! random), compute the features `z(x) = K(x, Ã)` — whitened to Nyström features
//! `L⁻¹z(x)`, `LLᵀ = K(Ã, Ã)`, unless asked not to — train the linear SVM on them, and fold
//! everything into a [`ReducedKernelModel`] that predicts with `m` kernel evaluations.

use kestrel_core::cholesky::Cholesky;
use kestrel_core::dcd::{DenseRows, Exit, LinearSvm, OneVsRest, ValidParams};
use kestrel_core::reduced_set::{Irsvm, IrsvmParams, ReducedKernelModel, select_random};
use kestrel_core::{Kernel, Real, Rng};

use super::{TrainError, check_budget, classes};
use crate::dataset::Dataset;
use crate::limits::{reserve, zeroed};

/// How the centres are chosen.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Selection {
    /// IRSVM with threshold `δ = rms·√n` (`rms`: the root-mean-square residual per point).
    Irsvm {
        /// `δ/√n`.
        rms: f64,
    },
    /// A uniform random subset.
    Random,
}

/// The reduced-kernel SVM's settings.
#[derive(Clone, Copy, Debug)]
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
}

/// What training did.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RsvmSummary {
    /// Centres kept.
    pub centres: usize,
    /// Dual objective of the linear problem (summed over one-vs-rest problems).
    pub objective: f64,
    /// Solver passes (summed).
    pub passes: usize,
    /// The solver met its stopping rule.
    pub converged: bool,
    /// Bytes training held at most besides the data set: dense copy, selection, features,
    /// factor, solver state, model.
    pub working_bytes: usize,
}

/// Bytes training holds at most for `n` rows of `dim` features, `capacity` centres and
/// `outputs` weight vectors, besides the data set: the dense copy, the selection's buffers,
/// the features, the factor, the labels, the solver's state and the model.
pub fn working_bytes<T>(n: usize, dim: usize, capacity: usize, outputs: usize, selection: Selection) -> usize {
    let scalars = |count: usize| count.saturating_mul(size_of::<T>());
    let selection = match selection {
        Selection::Irsvm { .. } => Irsvm::bytes::<T>(n, capacity),
        Selection::Random => scalars(capacity.saturating_mul(dim)).saturating_add(capacity * size_of::<usize>()),
    };
    let solver =
        if outputs == 1 { LinearSvm::bytes::<T>(n, capacity) } else { OneVsRest::bytes::<T>(n, capacity, outputs) };
    scalars(n.saturating_mul(dim))
        .saturating_add(selection)
        .saturating_add(scalars(n.saturating_mul(capacity)))
        .saturating_add(scalars(Cholesky::scalars_len(capacity)))
        .saturating_add(n.saturating_mul(size_of::<i32>()))
        .saturating_add(solver)
        .saturating_add(scalars(ReducedKernelModel::scalars_len(dim, capacity, outputs)))
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
    let capacity = config.centres.clamp(1, n);
    let working_bytes = working_bytes::<T>(n, dim, capacity, outputs, config.selection);
    check_budget(data.bytes().saturating_add(working_bytes), config.budget)?;
    let points = data.dense(dim)?;
    let mut rng = Rng::seed_from_u64(config.seed);
    let (chosen, mut features) = choose_centres(&points, dim, capacity, config, &mut rng)?;
    let m = chosen.len();
    if m == 0 {
        return Err(TrainError::NoCentres);
    }
    let mut centres = Vec::new();
    reserve(&mut centres, m * dim, "the centres")?;
    for &i in &chosen {
        centres.extend_from_slice(row(&points, dim, i)?);
    }
    let factor = if config.whiten { Some(whiten(&config.kernel, &centres, dim, &mut features, m)?) } else { None };
    let rows = DenseRows::new(&features, m)?;
    let storage = zeroed(ReducedKernelModel::scalars_len(dim, m, outputs), "the model")?;
    let mut model = ReducedKernelModel::new_in(storage, config.kernel, dim, m, outputs)?;
    model.centres_mut().copy_from_slice(&centres);
    let (bias, whitening) = (config.params.bias(), factor.as_ref().map(Cholesky::packed));
    let (objective, passes, converged) = if outputs == 1 {
        let scalars = zeroed(LinearSvm::scalars_len(n, m), "the solver")?;
        let mut svm =
            LinearSvm::new_in(scalars, zeroed(LinearSvm::indices_len(n), "the solver")?, n, m, config.params)?;
        let outcome = svm.train(&rows, &labels, &mut rng)?;
        model.set_coefficients(0, svm.weights(), svm.bias_weight(), bias, whitening)?;
        (outcome.objective, outcome.passes, outcome.exit == Exit::Converged)
    } else {
        let scalars = zeroed(OneVsRest::scalars_len(n, m, outputs), "the solver")?;
        let indices = zeroed(OneVsRest::indices_len(n), "the solver")?;
        let mut svm = OneVsRest::new_in(scalars, indices, n, m, outputs, config.params)?;
        let outcome = svm.train(&rows, &labels, &mut rng)?;
        for c in 0..outputs {
            let (w, bias_weight) = (svm.weights(c).unwrap_or(&[]), svm.bias_weight(c).unwrap_or(T::ZERO));
            model.set_coefficients(c, w, bias_weight, bias, whitening)?;
        }
        (outcome.objective, outcome.passes, outcome.exit == Exit::Converged)
    };
    for (slot, label) in model.labels_mut().iter_mut().zip(classes.model_labels()) {
        *slot = T::from_f64(label);
    }
    let summary = RsvmSummary { centres: m, objective: objective.to_f64(), passes, converged, working_bytes };
    Ok((model, summary))
}

/// Row `i` of a row-major matrix of `dim` columns.
fn row<T>(points: &[T], dim: usize, i: usize) -> Result<&[T], kestrel_core::Error> {
    let len = points.len() / dim.max(1);
    points.get(i * dim..(i + 1) * dim).ok_or(kestrel_core::Error::IndexOutOfRange { index: i, len })
}

/// The chosen rows and their features `K(A, Ã)` (row-major `n × m`).
fn choose_centres<T: Real>(
    points: &[T],
    dim: usize,
    capacity: usize,
    config: &RsvmConfig<T>,
    rng: &mut Rng,
) -> Result<(Vec<usize>, Vec<T>), TrainError> {
    let n = points.len() / dim;
    match config.selection {
        Selection::Irsvm { rms } => {
            let delta = T::from_f64(rms * (n as f64).sqrt());
            let selection = Irsvm::select_in(
                zeroed(Irsvm::scalars_len(n, capacity), "the selection")?,
                Cholesky::new_in(zeroed(Cholesky::scalars_len(capacity), "the selection")?, capacity)?,
                zeroed(Irsvm::indices_len(n, capacity), "the selection")?,
                points,
                dim,
                &config.kernel,
                IrsvmParams::new(delta).check()?,
                rng,
            )?;
            let m = selection.len();
            let mut features = Vec::new();
            reserve(&mut features, n * m, "the features")?;
            for i in 0..n {
                features.extend_from_slice(selection.features(i).unwrap_or(&[]));
            }
            Ok((selection.indices().to_vec(), features))
        }
        Selection::Random => {
            let mut chosen = zeroed(capacity, "the selection")?;
            select_random(n, rng, &mut chosen)?;
            let mut features = zeroed(n * capacity, "the features")?;
            let mut centres = Vec::new();
            reserve(&mut centres, capacity * dim, "the centres")?;
            for &i in &chosen {
                centres.extend_from_slice(row(points, dim, i)?);
            }
            for (x, row) in points.chunks_exact(dim).zip(features.chunks_exact_mut(capacity)) {
                config.kernel.column(x, &centres, row)?;
            }
            Ok((chosen, features))
        }
    }
}

/// Factors `K(Ã, Ã) = LLᵀ` (with a jitter of `m·ε` on the diagonal, relative to its
/// largest entry, so near-duplicate centres stay factorable) and replaces each feature row
/// `z` by `L⁻¹z`.
fn whiten<T: Real>(
    kernel: &Kernel<T>,
    centres: &[T],
    dim: usize,
    features: &mut [T],
    m: usize,
) -> Result<Cholesky<T, Vec<T>>, TrainError> {
    let centre = |i: usize| centres.get(i * dim..(i + 1) * dim).unwrap_or_default();
    let largest = (0..m).map(|i| kernel.diagonal(centre(i)).to_f64()).fold(0.0, f64::max);
    let jitter = T::from_f64(largest * m as f64 * T::EPSILON.to_f64());
    let factor = Cholesky::factor_in(zeroed(Cholesky::scalars_len(m), "the factor")?, m, m, |i, j| {
        let k = kernel.eval(centre(i), centre(j)).unwrap_or(T::ZERO);
        if i == j { k + jitter } else { k }
    })?;
    for row in features.chunks_exact_mut(m) {
        factor.solve_lower_in_place(row)?;
    }
    Ok(factor)
}

#[cfg(test)]
mod tests {
    use super::*;
    use kestrel_core::linalg::dot;

    #[test]
    fn whitened_features_are_the_nystrom_features() {
        // L⁻¹z with LLᵀ = K(Ã, Ã): their inner products reproduce the kernel on the centres.
        let kernel = Kernel::rbf(0.7).unwrap();
        let centres = [0.0, 0.0, 1.0, 0.5, -0.5, 1.0, 0.3, -0.8];
        let mut features = vec![0.0; 4 * 4];
        for (x, row) in centres.chunks_exact(2).zip(features.chunks_exact_mut(4)) {
            kernel.column(x, &centres, row).unwrap();
        }
        whiten(&kernel, &centres, 2, &mut features, 4).unwrap();
        for (i, a) in features.chunks_exact(4).enumerate() {
            for (j, b) in features.chunks_exact(4).enumerate() {
                let k = kernel.eval(&centres[2 * i..2 * i + 2], &centres[2 * j..2 * j + 2]).unwrap();
                assert!((dot(a, b).unwrap() - k).abs() < 1e-9, "({i}, {j})");
            }
        }
    }

    #[test]
    fn learns_a_nonlinear_problem_with_few_centres() {
        use crate::source::Record;
        // XOR-like quadrants: not linearly separable.
        let mut data = Dataset::<f64>::new();
        let mut rng = Rng::seed_from_u64(9);
        for _ in 0..400 {
            let (a, b) = (rng.uniform_in(-1.0, 1.0), rng.uniform_in(-1.0, 1.0));
            let label = if a * b > 0.0 { 1.0 } else { -1.0 };
            data.push(&Record { label, indices: vec![0, 1], values: vec![a, b], line: 0, ..Record::default() })
                .unwrap();
        }
        let params = kestrel_core::dcd::Params::new().c(10.0).bias(1.0).check().unwrap();
        for selection in [Selection::Irsvm { rms: 0.005 }, Selection::Random] {
            let kernel = Kernel::rbf(2.0).unwrap();
            let config = RsvmConfig { kernel, centres: 30, selection, whiten: true, params, seed: 1, budget: None };
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
            let small = RsvmConfig { budget: Some(100_000), ..config };
            let error = train(&data, &small).err();
            assert!(matches!(error, Some(TrainError::OverBudget { budget: 100_000, .. })), "{error:?}");
        }
    }
}
