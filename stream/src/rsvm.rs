//! Training the reduced-kernel SVM on a [`Dataset`]: choose the centres (IRSVM or at
//! random), compute the features `z(x) = K(x, Ã)` — whitened to Nyström features
//! `L⁻¹z(x)`, `LLᵀ = K(Ã, Ã)`, unless asked not to — train the linear SVM on them, and fold
//! everything into a [`ReducedKernelModel`] that predicts with `m` kernel evaluations.

use kestrel_core::cholesky::Cholesky;
use kestrel_core::dcd::{DenseRows, Exit, LinearSvm, OneVsRest, ValidParams};
use kestrel_core::reduced_set::{Irsvm, IrsvmParams, ReducedKernelModel, select_random};
use kestrel_core::{Kernel, Real, Rng};

use crate::dataset::Dataset;
use crate::linear::{LabelMap, TrainError};

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
    /// Bytes of the working set besides the data set: features, factor, solver state.
    pub working_bytes: usize,
}

/// Trains a reduced-kernel SVM on `data`.
///
/// # Errors
/// [`TrainError`] for bad labels or data the core rejects.
pub fn train<T: Real>(
    data: &Dataset<T>,
    config: &RsvmConfig<T>,
) -> Result<(ReducedKernelModel<T, Vec<T>>, RsvmSummary), TrainError> {
    let map = LabelMap::of(data.labels())?;
    let (n, dim) = (data.len(), data.dim().max(1));
    let points = data.dense(dim);
    let capacity = config.centres.clamp(1, n);
    let mut rng = Rng::seed_from_u64(config.seed);
    let (chosen, mut features) = choose_centres(&points, dim, capacity, config, &mut rng)?;
    let m = chosen.len();
    let mut centres = Vec::with_capacity(m * dim);
    for &i in &chosen {
        centres.extend_from_slice(&points[i * dim..(i + 1) * dim]);
    }
    let factor = if config.whiten { Some(whiten(&config.kernel, &centres, dim, &mut features, m)?) } else { None };
    let outputs = match map {
        LabelMap::Binary(_) => 1,
        LabelMap::Classes(k) => k,
    };
    let labels: Vec<i32> = data.labels().iter().map(|&l| map.solver_label(l)).collect();
    let rows = DenseRows::new(&features, m)?;
    let mut model = ReducedKernelModel::new_in(
        vec![T::ZERO; ReducedKernelModel::scalars_len(dim, m, outputs)],
        config.kernel,
        dim,
        m,
        outputs,
    )?;
    model.centres_mut().copy_from_slice(&centres);
    let bias = config.params.bias();
    let fold = |model: &mut ReducedKernelModel<T, Vec<T>>, c: usize, w: &[T], bias_weight: T| {
        let u = fold_whitening(factor.as_ref(), &w[..m])?;
        if let Some(target) = model.coefficients_mut(c) {
            target[..m].copy_from_slice(&u);
            target[m] = bias_weight * bias;
        }
        Ok::<(), kestrel_core::Error>(())
    };
    let (outcome_objective, passes, converged, solver_bytes) = match map {
        LabelMap::Binary(pair) => {
            let mut svm = LinearSvm::new_in(
                vec![T::ZERO; LinearSvm::scalars_len(n, m)],
                vec![0; LinearSvm::indices_len(n)],
                n,
                m,
                config.params,
            )?;
            let outcome = svm.train(&rows, &labels, &mut rng)?;
            fold(&mut model, 0, svm.weights(), svm.bias_weight())?;
            model.labels_mut().copy_from_slice(&pair.map(T::from_f64));
            (outcome.objective, outcome.passes, outcome.exit == Exit::Converged, LinearSvm::bytes::<T>(n, m))
        }
        LabelMap::Classes(k) => {
            let mut svm = OneVsRest::new_in(
                vec![T::ZERO; OneVsRest::scalars_len(n, m, k)],
                vec![0; OneVsRest::indices_len(n)],
                n,
                m,
                k,
                config.params,
            )?;
            let outcome = svm.train(&rows, &labels, &mut rng)?;
            for c in 0..k {
                let w = svm.weights(c).unwrap_or(&[]).to_vec();
                fold(&mut model, c, &w, svm.bias_weight(c).unwrap_or(T::ZERO))?;
            }
            (outcome.objective, outcome.passes, outcome.exit == Exit::Converged, OneVsRest::bytes::<T>(n, m, k))
        }
    };
    let working_bytes = (features.len() + Cholesky::scalars_len(m)) * size_of::<T>() + solver_bytes;
    let summary = RsvmSummary { centres: m, objective: outcome_objective.to_f64(), passes, converged, working_bytes };
    Ok((model, summary))
}

/// Coefficients on the raw features `z = K(x, Ã)` of a linear model `w` trained on the
/// whitened ones `L⁻¹z`: `wᵀL⁻¹z = (L⁻ᵀw)ᵀz`, so `u = L⁻ᵀw` (`w` itself without whitening).
fn fold_whitening<T: Real>(factor: Option<&Cholesky<T, Vec<T>>>, w: &[T]) -> Result<Vec<T>, kestrel_core::Error> {
    let mut u = w.to_vec();
    if let Some(factor) = factor {
        let m = factor.dim();
        kestrel_core::linalg::solve_lower_transposed(
            factor.packed(),
            m,
            kestrel_core::linalg::Triangle::Packed,
            &mut u,
        )?;
    }
    Ok(u)
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
                vec![T::ZERO; Irsvm::scalars_len(n, capacity)],
                Cholesky::new_in(vec![T::ZERO; Cholesky::scalars_len(capacity)], capacity)?,
                vec![0; Irsvm::indices_len(n, capacity)],
                points,
                dim,
                &config.kernel,
                IrsvmParams::new(delta).check()?,
                rng,
            )?;
            let m = selection.len();
            let mut features = Vec::with_capacity(n * m);
            for i in 0..n {
                features.extend_from_slice(selection.features(i).unwrap_or(&[]));
            }
            Ok((selection.indices().to_vec(), features))
        }
        Selection::Random => {
            let mut chosen = vec![0; capacity];
            select_random(n, rng, &mut chosen)?;
            let mut features = vec![T::ZERO; n * capacity];
            let centres: Vec<T> = chosen.iter().flat_map(|&i| points[i * dim..(i + 1) * dim].iter().copied()).collect();
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
    let centre = |i: usize| &centres[i * dim..(i + 1) * dim];
    let largest = (0..m).map(|i| kernel.diagonal(centre(i)).to_f64()).fold(0.0, f64::max);
    let jitter = T::from_f64(largest * m as f64 * T::EPSILON.to_f64());
    let factor = Cholesky::factor_in(vec![T::ZERO; Cholesky::scalars_len(m)], m, m, |i, j| {
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
    fn folded_coefficients_on_raw_features_equal_the_whitened_model() {
        let kernel = Kernel::rbf(0.7).unwrap();
        let centres = [0.0, 0.0, 1.0, 0.5, -0.5, 1.0, 0.3, -0.8];
        let mut rng = Rng::seed_from_u64(5);
        let points: Vec<f64> = (0..20).map(|_| rng.uniform_in(-1.0, 1.0)).collect();
        let mut features = vec![0.0; 10 * 4];
        for (x, row) in points.chunks_exact(2).zip(features.chunks_exact_mut(4)) {
            kernel.column(x, &centres, row).unwrap();
        }
        let raw = features.clone();
        let factor = whiten(&kernel, &centres, 2, &mut features, 4).unwrap();
        let w = [0.5, -1.0, 2.0, 0.25];
        let u = fold_whitening(Some(&factor), &w).unwrap();
        for (z, whitened) in raw.chunks_exact(4).zip(features.chunks_exact(4)) {
            let (on_raw, on_whitened) = (dot(&u, z).unwrap(), dot(&w, whitened).unwrap());
            assert!((on_raw - on_whitened).abs() < 1e-9 * (1.0 + on_whitened.abs()), "{on_raw} vs {on_whitened}");
        }
        assert_eq!(fold_whitening::<f64>(None, &w).unwrap(), w);
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
            data.push(&Record { label, indices: vec![0, 1], values: vec![a, b], line: 0 });
        }
        let params = kestrel_core::dcd::Params::new().c(10.0).bias(1.0).check().unwrap();
        for selection in [Selection::Irsvm { rms: 0.005 }, Selection::Random] {
            let config =
                RsvmConfig { kernel: Kernel::rbf(2.0).unwrap(), centres: 30, selection, whiten: true, params, seed: 1 };
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
        }
    }
}
