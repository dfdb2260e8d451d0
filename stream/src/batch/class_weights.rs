//! Class weights for the classifiers that take them (svm, rsvm, lssvm): a class's weight
//! `ω_c` multiplies the cost of its rows' errors — LIBLINEAR's `-wi`, scikit-learn's
//! `class_weight` — so that a rare class is not sacrificed to the frequent ones.
//!
//! Where each weight goes:
//! - the SVMs (DCD and Newton): two classes weigh their costs `C₊ = ω₊C`, `C₋ = ω₋C`;
//!   past two, the one-vs-rest problem of class `c` weighs its rows `C₊ = ω_cC` against
//!   the rest's `C` (LIBLINEAR's convention for `-wi` with one-vs-rest);
//! - the least-squares SVM and its leave-one-out choices (`C`, the reduced set, the width)
//!   weigh row `i` by its class's `ω` in the ridge problem and in the error count
//!   ([`kestrel_core::krr::RidgePath::fit_weighted_in`]): the error chosen against is the
//!   weighted one.
//!
//! `balanced` is scikit-learn's `n/(k·n_c)` for `k` classes of `n_c` rows each: every class
//! then weighs as much in all, `n/k`.
//!
//! Rows may also weigh each on their own ([`Dataset::row_weights`], scikit-learn's
//! `sample_weight`): the SVMs weigh row `i`'s cost by it on top of its class's
//! ([`sample_weights`]), the least-squares problems its row by the product of both
//! ([`row_weights`]).

use kestrel_core::Real;

use super::TrainError;
use crate::dataset::Dataset;
use crate::labels::Labels;
use crate::limits::zeroed;

/// The weights of the classes.
#[derive(Clone, Debug, Default, PartialEq)]
pub enum ClassWeights {
    /// Every class weighs 1.
    #[default]
    Unit,
    /// `(label, weight)` pairs; a class not named weighs 1.
    Given(Vec<(f64, f64)>),
    /// `n/(k·n_c)` (module doc).
    Balanced,
}

impl ClassWeights {
    /// `true` when every class weighs 1 by definition (no weight given).
    pub fn is_unit(&self) -> bool {
        matches!(self, ClassWeights::Unit) || matches!(self, ClassWeights::Given(pairs) if pairs.is_empty())
    }

    /// The weight of each class of `classes`, in class order, for rows whose classes are
    /// `solver` (the solver's labels: `±1` for two classes, the class index for more).
    ///
    /// # Errors
    /// [`TrainError::UnknownClass`] for a weight given to a label no row has;
    /// `InvalidParam { name: "class_weights" }` for a weight that is not finite and
    /// positive.
    pub fn by_class<T: Real>(&self, classes: &Labels, solver: &[i32]) -> Result<Vec<T>, TrainError> {
        let mut weights = zeroed(classes.len(), "the class weights")?;
        weights.fill(T::ONE);
        match self {
            ClassWeights::Unit => {}
            ClassWeights::Given(pairs) => {
                for &(label, weight) in pairs {
                    let slot = classes.find(label).and_then(|class| weights.get_mut(class));
                    *slot.ok_or(TrainError::UnknownClass(label))? = T::from_f64(weight);
                }
            }
            ClassWeights::Balanced => {
                let mut counts = zeroed::<usize>(classes.len(), "the class counts")?;
                for &label in solver {
                    if let Some(count) = counts.get_mut(class_of(label, classes.len())) {
                        *count += 1;
                    }
                }
                #[allow(clippy::cast_precision_loss, reason = "counts of rows")]
                let share = solver.len() as f64 / classes.len() as f64;
                for (weight, &count) in weights.iter_mut().zip(&counts) {
                    #[allow(clippy::cast_precision_loss, reason = "counts of rows")]
                    let balanced = share / count.max(1) as f64;
                    *weight = T::from_f64(balanced);
                }
            }
        }
        if weights.iter().all(|&w| w.is_finite() && w > T::ZERO) {
            Ok(weights)
        } else {
            Err(TrainError::Core(kestrel_core::Error::InvalidParam { name: "class_weights" }))
        }
    }

    /// Each class's weight by its label, for rows labelled `labels` (the training rows,
    /// which `balanced` counts): `(label, weight)` pairs; `None` when every class weighs 1
    /// by definition.
    ///
    /// # Errors
    /// As [`by_class`](Self::by_class), and for labels that do not make classes.
    pub fn by_label(&self, labels: &[f64]) -> Result<Option<Vec<(f64, f64)>>, TrainError> {
        if self.is_unit() {
            return Ok(None);
        }
        let (classes, solver) = super::classes::<f64>(labels)?;
        let weights = self.by_class::<f64>(&classes, &solver)?;
        Ok(Some(classes.values().iter().copied().zip(weights).collect()))
    }

    /// Each row's weight, its class's ([`by_class`](Self::by_class)); `None` when every
    /// class weighs 1 by definition.
    ///
    /// # Errors
    /// As [`by_class`](Self::by_class).
    pub fn by_row<T: Real>(&self, classes: &Labels, solver: &[i32]) -> Result<Option<Vec<T>>, TrainError> {
        if self.is_unit() {
            return Ok(None);
        }
        let weights = self.by_class::<T>(classes, solver)?;
        let mut rows = zeroed(solver.len(), "the row weights")?;
        for (row, &label) in rows.iter_mut().zip(solver) {
            *row = weights.get(class_of(label, classes.len())).copied().unwrap_or(T::ONE);
        }
        Ok(Some(rows))
    }
}

/// The rows' own weights ([`Dataset::row_weights`]) in `T`, for the SVMs' solvers (which
/// take the class weights in their costs); `None` when every row weighs 1.
///
/// # Errors
/// `InvalidParam { name: "sample_weight" }` for a weight `T` rounds to 0 or to infinity
/// (past `f32`'s range); an allocation failure.
pub fn sample_weights<T: Real>(data: &Dataset<T>) -> Result<Option<Vec<T>>, TrainError> {
    let Some(given) = data.row_weights() else { return Ok(None) };
    let mut weights = zeroed(given.len(), "the row weights")?;
    for (weight, &w) in weights.iter_mut().zip(given) {
        *weight = T::from_f64(w);
        if !(*weight > T::ZERO && weight.is_finite()) {
            return Err(TrainError::Core(kestrel_core::Error::InvalidParam { name: "sample_weight" }));
        }
    }
    Ok(Some(weights))
}

/// Each row's weight in the least-squares problems: its class's (`by_class_of_row`,
/// [`ClassWeights::by_row`]) times its own (`own`, [`sample_weights`]); `None` when both
/// are 1.
pub fn row_weights<T: Real>(by_class_of_row: Option<Vec<T>>, own: Option<&[T]>) -> Option<Vec<T>> {
    match (by_class_of_row, own) {
        (Some(mut rows), Some(own)) => {
            rows.iter_mut().zip(own).for_each(|(row, &own)| *row *= own);
            Some(rows)
        }
        (rows, own) => rows.or_else(|| own.map(<[T]>::to_vec)),
    }
}

/// The class of a solver label: two classes are `+1` (class 0) and `−1` (class 1), more
/// are their index.
fn class_of(label: i32, classes: usize) -> usize {
    match classes {
        2 => usize::from(label < 0),
        _ => usize::try_from(label).unwrap_or(usize::MAX),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::batch::classes as classes_of;

    #[test]
    fn weights_by_class_and_by_row() {
        // Labels 7 (6 rows) and 3 (2 rows): 7 is the first class, the solver's +1.
        let labels = [7.0, 7.0, 3.0, 7.0, 7.0, 3.0, 7.0, 7.0];
        let (classes, solver) = classes_of::<f64>(&labels).unwrap();
        assert_eq!(ClassWeights::Unit.by_row::<f64>(&classes, &solver).unwrap(), None);
        let given = ClassWeights::Given(vec![(3.0, 4.0)]);
        assert_eq!(given.by_class::<f64>(&classes, &solver).unwrap(), [1.0, 4.0]);
        let rows = given.by_row::<f64>(&classes, &solver).unwrap().unwrap();
        assert_eq!(rows, [1.0, 1.0, 4.0, 1.0, 1.0, 4.0, 1.0, 1.0]);
        // Balanced: 8/(2·6) and 8/(2·2), each class weighing 4 in all.
        let balanced = ClassWeights::Balanced.by_class::<f64>(&classes, &solver).unwrap();
        assert_eq!(balanced, [8.0 / 12.0, 2.0]);
        // Three classes: the solver's labels are the class indices.
        let (classes, solver) = classes_of::<f64>(&[1.0, 2.0, 2.0, 3.0, 3.0, 3.0]).unwrap();
        let balanced = ClassWeights::Balanced.by_class::<f64>(&classes, &solver).unwrap();
        assert_eq!(balanced, [2.0, 1.0, 2.0 / 3.0]);
        let by_label = ClassWeights::Balanced.by_label(&[1.0, 2.0, 2.0, 3.0, 3.0, 3.0]).unwrap();
        assert_eq!(by_label, Some(vec![(1.0, 2.0), (2.0, 1.0), (3.0, 2.0 / 3.0)]));
        assert_eq!(ClassWeights::Unit.by_label(&[1.0, 2.0]).unwrap(), None);
        let unknown = ClassWeights::Given(vec![(9.0, 2.0)]).by_class::<f64>(&classes, &solver);
        assert!(matches!(unknown, Err(TrainError::UnknownClass(label)) if label == 9.0));
        for bad in [0.0, -1.0, f64::NAN, f64::INFINITY] {
            let e = ClassWeights::Given(vec![(1.0, bad)]).by_class::<f64>(&classes, &solver).err();
            assert!(matches!(e, Some(TrainError::Core(kestrel_core::Error::InvalidParam { .. }))), "{bad}: {e:?}");
        }
    }

    /// A row weight `f32` cannot hold — past its range, or below its smallest number — is
    /// refused by name rather than becoming infinite or 0 in the solver.
    #[test]
    fn row_weights_out_of_the_scalars_range_are_refused() {
        for weight in [1e39, 1e-50] {
            let mut data = crate::dataset::Dataset::<f32>::new();
            for i in 0..3 {
                let record = crate::source::Record {
                    label: f64::from(i),
                    indices: vec![0],
                    values: vec![1.0],
                    ..Default::default()
                };
                data.push(&record).unwrap();
            }
            data.set_row_weights(vec![1.0, weight, 1.0]).unwrap();
            let refused = sample_weights(&data);
            assert_eq!(refused, Err(TrainError::Core(kestrel_core::Error::InvalidParam { name: "sample_weight" })));
        }
    }
}
