//! Training the linear SVM (dual coordinate descent) on a [`Dataset`]: label handling,
//! one-vs-rest, and the [`LinearModel`] the model file stores.
//!
//! Labels: two distinct values make a binary problem (the smaller is the negative class);
//! integers `0..k` with `k > 2` make `k` one-vs-rest problems. Anything else is an error
//! naming the row.

use kestrel_core::Real;
use kestrel_core::Rng;
use kestrel_core::dcd::{Exit, LinearModel, LinearSvm, OneVsRest, Outcome, SparseRows, ValidParams};

use crate::dataset::Dataset;

/// What training did.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LinearSummary {
    /// Dual objective `f(α)` (summed over one-vs-rest problems).
    pub objective: f64,
    /// Outer passes (summed over one-vs-rest problems).
    pub passes: usize,
    /// Every problem met the stopping rule (none hit the pass cap).
    pub converged: bool,
    /// Support vectors (`α > 0`), summed over problems.
    pub support_vectors: usize,
    /// Bytes of solver state, besides the data set.
    pub solver_bytes: usize,
}

/// Why a data set could not be trained on.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum TrainError {
    /// The core rejected the data or parameters.
    #[error(transparent)]
    Core(#[from] kestrel_core::Error),
    /// The labels are neither two values nor classes `0..k`.
    #[error("row {row}: label {label} — a classifier needs two distinct labels or classes 0..k−1")]
    Labels {
        /// 1-based row of the data set.
        row: usize,
        /// The offending label.
        label: f64,
    },
    /// Fewer than two distinct labels.
    #[error("the training set has a single label value ({0}): nothing to separate")]
    SingleClass(f64),
    /// The solver's memory would exceed the budget.
    #[error("training needs {needed} bytes, over the budget of {budget}")]
    OverBudget {
        /// Bytes the configuration needs.
        needed: usize,
        /// The budget.
        budget: usize,
    },
}

/// How the labels of a data set map to classes.
#[derive(Clone, Debug, PartialEq)]
pub enum LabelMap {
    /// `[negative, positive]` labels.
    Binary([f64; 2]),
    /// Classes `0..k`.
    Classes(usize),
}

impl LabelMap {
    /// Finds the mapping of `labels`.
    ///
    /// # Errors
    /// `SingleClass` or `Labels` as described in the module docs.
    pub fn of(labels: &[f64]) -> Result<Self, TrainError> {
        let first = *labels.first().ok_or(kestrel_core::Error::InvalidParam { name: "rows" })?;
        let other = labels.iter().copied().find(|&l| l != first);
        let Some(other) = other else { return Err(TrainError::SingleClass(first)) };
        if labels.iter().all(|&l| l == first || l == other) {
            return Ok(LabelMap::Binary([first.min(other), first.max(other)]));
        }
        let mut classes = 0usize;
        for (i, &l) in labels.iter().enumerate() {
            if l < 0.0 || l.fract() != 0.0 || l > u32::MAX as f64 {
                return Err(TrainError::Labels { row: i + 1, label: l });
            }
            classes = classes.max(l as usize + 1);
        }
        Ok(LabelMap::Classes(classes))
    }

    /// The solver's label for a user label (±1, or the class index).
    pub(crate) fn solver_label(&self, label: f64) -> i32 {
        match self {
            LabelMap::Binary([negative, _]) => {
                if label == *negative {
                    -1
                } else {
                    1
                }
            }
            LabelMap::Classes(_) => label as i32,
        }
    }

    fn outputs(&self) -> usize {
        match self {
            LabelMap::Binary(_) => 1,
            LabelMap::Classes(k) => *k,
        }
    }
}

/// Bytes the solver state needs for `n` rows, `dim` features and `outputs` weight vectors.
pub fn solver_bytes<T>(n: usize, dim: usize, outputs: usize) -> usize {
    if outputs == 1 { LinearSvm::bytes::<T>(n, dim) } else { OneVsRest::bytes::<T>(n, dim, outputs) }
}

/// Trains on `data`; `budget` (bytes) bounds the data set plus the solver state.
///
/// # Errors
/// [`TrainError`] for bad labels, rejected data or parameters, or a budget too small.
pub fn train<T: Real>(
    data: &Dataset<T>,
    params: ValidParams<T>,
    seed: u64,
    budget: Option<usize>,
) -> Result<(LinearModel<T, Vec<T>>, LinearSummary), TrainError> {
    let map = LabelMap::of(data.labels())?;
    let (n, dim, outputs) = (data.len(), data.dim().max(1), map.outputs());
    let solver_bytes = solver_bytes::<T>(n, dim, outputs);
    if let Some(budget) = budget {
        let needed = solver_bytes + data.bytes();
        if needed > budget {
            return Err(TrainError::OverBudget { needed, budget });
        }
    }
    let labels: Vec<i32> = data.labels().iter().map(|&l| map.solver_label(l)).collect();
    let (offsets, indices, values) = data.csr();
    let rows = SparseRows::new(dim, offsets, indices, values)?;
    let mut rng = Rng::seed_from_u64(seed);
    let mut model =
        LinearModel::new_in(vec![T::ZERO; LinearModel::scalars_len(dim, outputs)], dim, outputs, params.bias())?;
    let outcome = match map {
        LabelMap::Binary(pair) => {
            let (scalars, idx) = (vec![T::ZERO; LinearSvm::scalars_len(n, dim)], vec![0; LinearSvm::indices_len(n)]);
            let mut svm = LinearSvm::new_in(scalars, idx, n, dim, params)?;
            let outcome = svm.train(&rows, &labels, &mut rng)?;
            copy_weights(&mut model, 0, svm.weights(), svm.bias_weight());
            model.labels_mut().copy_from_slice(&pair.map(T::from_f64));
            outcome
        }
        LabelMap::Classes(k) => {
            let scalars = vec![T::ZERO; OneVsRest::scalars_len(n, dim, k)];
            let mut svm = OneVsRest::new_in(scalars, vec![0; OneVsRest::indices_len(n)], n, dim, k, params)?;
            let outcome = svm.train(&rows, &labels, &mut rng)?;
            for c in 0..k {
                let (w, b) = (svm.weights(c).unwrap_or(&[]), svm.bias_weight(c).unwrap_or(T::ZERO));
                copy_weights(&mut model, c, w, b);
            }
            outcome
        }
    };
    Ok((model, summary(&outcome, solver_bytes)))
}

fn copy_weights<T: Real>(model: &mut LinearModel<T, Vec<T>>, c: usize, w: &[T], bias_weight: T) {
    if let Some(target) = model.weights_mut(c) {
        let dim = target.len() - 1;
        target[..dim].copy_from_slice(&w[..dim]);
        target[dim] = bias_weight;
    }
}

fn summary<T: Real>(outcome: &Outcome<T>, solver_bytes: usize) -> LinearSummary {
    LinearSummary {
        objective: outcome.objective.to_f64(),
        passes: outcome.passes,
        converged: outcome.exit == Exit::Converged,
        support_vectors: outcome.support_vectors,
        solver_bytes,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn label_maps() {
        assert_eq!(LabelMap::of(&[0.0, 1.0, 1.0]), Ok(LabelMap::Binary([0.0, 1.0])));
        assert_eq!(LabelMap::of(&[1.0, -1.0]), Ok(LabelMap::Binary([-1.0, 1.0])));
        assert_eq!(LabelMap::of(&[0.0, 2.0, 1.0, 2.0]), Ok(LabelMap::Classes(3)));
        assert_eq!(LabelMap::of(&[0.0, 2.0, 1.5]), Err(TrainError::Labels { row: 3, label: 1.5 }));
        assert_eq!(LabelMap::of(&[3.0, 3.0]), Err(TrainError::SingleClass(3.0)));
    }
}
