//! Training the linear SVM (dual coordinate descent) on a [`Dataset`]: labels, one-vs-rest,
//! and the [`LinearModel`] the model file stores.
//!
//! Labels map to classes as [`crate::labels`] says: two distinct labels make a binary
//! problem, `k > 2` make `k` one-vs-rest problems; the model predicts the labels
//! themselves, whatever their values.

use kestrel_core::Real;
use kestrel_core::Rng;
use kestrel_core::dcd::{Exit, LinearModel, LinearSvm, OneVsRest, Outcome, SparseRows, ValidParams};

use super::class_weights::{ClassWeights, sample_weights};
use super::{TrainError, check_budget, classes};
use crate::dataset::Dataset;
use crate::limits::zeroed;

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
    /// Number of classes.
    pub classes: usize,
    /// Bytes of solver state, besides the data set.
    pub solver_bytes: usize,
}

/// Bytes the solver state needs for `n` rows, `dim` features and `outputs` weight vectors.
pub fn solver_bytes<T>(n: usize, dim: usize, outputs: usize) -> usize {
    if outputs == 1 { LinearSvm::bytes::<T>(n, dim) } else { OneVsRest::bytes::<T>(n, dim, outputs) }
}

/// Trains on `data`; `budget` (bytes) bounds the data set, the labels and the solver state,
/// checked before anything is allocated. `class_weights` as [`super::class_weights`] says
/// (LIBLINEAR's `-wi`): two classes weigh their costs `C₊`, `C₋` by their weights, more
/// classes weigh class `c` against the rest by `C₊ = w_c·C`; the rows' own weights
/// ([`Dataset::row_weights`]) weigh each row's cost on top.
///
/// # Errors
/// [`TrainError`] for bad labels, rejected data or parameters, a weight for a label no row
/// has, or a budget too small.
pub fn train<T: Real>(
    data: &Dataset<T>,
    params: ValidParams<T>,
    class_weights: &ClassWeights,
    seed: u64,
    budget: Option<usize>,
) -> Result<(LinearModel<T, Vec<T>>, LinearSummary), TrainError> {
    let (classes, labels) = classes::<T>(data.labels())?;
    let weights = class_weights.by_class::<T>(&classes, &labels)?;
    let (n, dim, outputs) = (data.len(), data.dim().max(1), classes.outputs());
    let model_len = LinearModel::scalars_len(dim, outputs);
    let row_weight_bytes = if data.row_weights().is_some() { n.saturating_mul(size_of::<T>()) } else { 0 };
    let solver_bytes = solver_bytes::<T>(n, dim, outputs)
        .saturating_add(n.saturating_mul(size_of::<i32>()))
        .saturating_add(row_weight_bytes)
        .saturating_add(model_len.saturating_mul(size_of::<T>()));
    check_budget(data.bytes().saturating_add(solver_bytes), budget)?;
    let row_weights = sample_weights::<T>(data)?;
    let (offsets, indices, values) = data.csr();
    let rows = SparseRows::new(dim, offsets, indices, values)?;
    let mut rng = Rng::seed_from_u64(seed);
    let mut model = LinearModel::new_in(zeroed(model_len, "the model")?, dim, outputs, params.bias())?;
    let outcome = if outputs == 1 {
        let scalars = zeroed(LinearSvm::scalars_len(n, dim), "the solver")?;
        let idx = zeroed(LinearSvm::indices_len(n), "the solver")?;
        // Class 0 is the solver's +1 (see `classes`).
        let weight = |class: usize| weights.get(class).copied().unwrap_or(T::ONE);
        let params = params.weighted(weight(0), weight(1))?;
        let mut svm = LinearSvm::new_in(scalars, idx, n, dim, params)?;
        let outcome = match &row_weights {
            Some(row_weights) => svm.train_weighted(&rows, &labels, row_weights, &mut rng)?,
            None => svm.train(&rows, &labels, &mut rng)?,
        };
        model.set_weights(0, svm.weights(), svm.bias_weight())?;
        outcome
    } else {
        let scalars = zeroed(OneVsRest::scalars_len(n, dim, outputs), "the solver")?;
        let indices = zeroed(OneVsRest::indices_len(n), "the solver")?;
        let mut svm = OneVsRest::new_in(scalars, indices, n, dim, outputs, params)?;
        let outcome = svm.train_each(&rows, &labels, (Some(&weights), row_weights.as_deref()), &mut rng, |_, _| {})?;
        for c in 0..outputs {
            let (w, b) = (svm.weights(c).unwrap_or(&[]), svm.bias_weight(c).unwrap_or(T::ZERO));
            model.set_weights(c, w, b)?;
        }
        outcome
    };
    for (slot, label) in model.labels_mut().iter_mut().zip(classes.model_labels()) {
        *slot = T::from_f64(label);
    }
    Ok((model, summary(&outcome, classes.len(), solver_bytes)))
}

fn summary<T: Real>(outcome: &Outcome<T>, classes: usize, solver_bytes: usize) -> LinearSummary {
    LinearSummary {
        objective: outcome.objective.to_f64(),
        passes: outcome.passes,
        converged: outcome.exit == Exit::Converged,
        support_vectors: outcome.support_vectors,
        classes,
        solver_bytes,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::labels::LabelError;
    use crate::source::Record;
    use kestrel_core::dcd;

    fn data(rows: &[(f64, f64)]) -> Dataset<f64> {
        let mut data = Dataset::new();
        for &(label, x) in rows {
            data.push(&Record { label, indices: vec![0], values: vec![x], line: 0, ..Record::default() }).unwrap();
        }
        data
    }

    #[test]
    fn any_label_values_make_classes_and_the_model_predicts_them() {
        let params = dcd::Params::new().c(10.0).check().unwrap();
        let rows = [(0.0, -3.0), (4e9, 0.0), (7.0, 3.0), (0.0, -2.5), (4e9, 0.2), (7.0, 2.8)];
        let (model, summary) = train(&data(&rows), params, &ClassWeights::Unit, 1, None).unwrap();
        assert_eq!((summary.classes, model.labels()), (3, &[0.0, 4e9, 7.0][..]));
        let (binary, _) = train(&data(&[(4.0, 1.0), (2.0, -1.0)]), params, &ClassWeights::Unit, 1, None).unwrap();
        assert_eq!(binary.labels(), &[2.0, 4.0]);
        assert_eq!(binary.predict(dcd::Row::Dense(&[3.0])), Ok(4.0));
    }

    /// Overlapping classes on a line: the heavier class takes more of the overlap.
    #[test]
    fn class_weights_move_the_boundary_toward_the_lighter_class() {
        let params = dcd::Params::new().c(1.0).bias(1.0).check().unwrap();
        let rows: Vec<(f64, f64)> = (0..40)
            .map(|i| if i % 2 == 0 { (5.0, f64::from(i) / 40.0) } else { (9.0, f64::from(i) / 40.0 + 0.3) })
            .collect();
        let boundary = |weights: &[(f64, f64)]| {
            let (model, _) = train(&data(&rows), params, &ClassWeights::Given(weights.to_vec()), 1, None).unwrap();
            (0..=800)
                .map(|i| f64::from(i) / 100.0 - 3.0)
                .find(|&x| model.predict(dcd::Row::Dense(&[x])) == Ok(9.0))
                .unwrap()
        };
        let (plain, heavy_five, heavy_nine) = (boundary(&[]), boundary(&[(5.0, 3.0)]), boundary(&[(9.0, 3.0)]));
        assert!(heavy_nine < plain && plain < heavy_five, "{heavy_nine} < {plain} < {heavy_five}");
        assert_eq!(boundary(&[(5.0, 1.0), (9.0, 1.0)]), plain);
        let three: Vec<(f64, f64)> = rows.iter().map(|&(l, x)| (if x > 0.9 { 7.0 } else { l }, x)).collect();
        let (model, _) = train(&data(&three), params, &ClassWeights::Given(vec![(7.0, 3.0)]), 1, None).unwrap();
        assert_eq!(model.labels(), &[5.0, 9.0, 7.0]);
        assert_eq!(
            train(&data(&rows), params, &ClassWeights::Given(vec![(6.0, 2.0)]), 1, None).err(),
            Some(TrainError::UnknownClass(6.0))
        );
        let bad = Some(TrainError::Core(kestrel_core::Error::InvalidParam { name: "class_weights" }));
        assert_eq!(train(&data(&rows), params, &ClassWeights::Given(vec![(5.0, 0.0)]), 1, None).err(), bad);
        assert_eq!(train(&data(&three), params, &ClassWeights::Given(vec![(7.0, f64::NAN)]), 1, None).err(), bad);
    }

    #[test]
    fn labels_without_two_classes_and_budgets_are_errors() {
        let params = dcd::Params::new().check().unwrap();
        assert_eq!(
            train(&data(&[(3.0, 1.0), (3.0, 2.0)]), params, &ClassWeights::Unit, 1, None).err(),
            Some(TrainError::SingleClass(3.0))
        );
        assert_eq!(train(&Dataset::<f64>::new(), params, &ClassWeights::Unit, 1, None).err(), Some(TrainError::Empty));
        let many: Vec<(f64, f64)> = (0..=crate::limits::MAX_CLASSES).map(|i| (i as f64, 1.0)).collect();
        let error = train(&data(&many), params, &ClassWeights::Unit, 1, None).err();
        let limit = crate::limits::MAX_CLASSES;
        assert_eq!(
            error,
            Some(TrainError::Label { row: limit + 1, error: LabelError::TooMany { label: limit as f64, limit } })
        );
        let error = train(&data(&[(1.0, 1.0), (-1.0, 2.0)]), params, &ClassWeights::Unit, 1, Some(10)).err();
        assert!(matches!(error, Some(TrainError::OverBudget { budget: 10, .. })), "{error:?}");
    }
}
