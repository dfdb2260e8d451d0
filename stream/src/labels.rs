//! The one mapping between a classifier's labels and its classes, for batch training and
//! for streams alike.
//!
//! Classes are the distinct labels in the order they first appear (LIBLINEAR's convention),
//! whatever their values: `{−1, +1}`, `{0, 1}`, `{2, 4}` or `{0, 7, 4000000000}` all work,
//! and no buffer is ever sized by a label's value. A binary problem (two classes) is solved
//! with the first class as `+1` and the second as `−1`; `k > 2` classes are `k`
//! one-vs-rest problems, class `c` positive in problem `c`. The model stores the label of
//! each output ([`Labels::model_labels`]), so it predicts the user's labels.
//!
//! Memory: one `f64` and one hash-table entry per class, at most [`MAX_CLASSES`]
//! (or the limit given to [`Labels::new`]).

use std::collections::HashMap;

use serde::{Deserialize, Serialize};

use crate::limits::MAX_CLASSES;

/// Why a label has no class.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum LabelError {
    /// A new label when the classes are full.
    #[error("label {label} would be class {}, over the limit of {limit} classes", limit + 1)]
    TooMany {
        /// The label.
        label: f64,
        /// The most classes allowed.
        limit: usize,
    },
    /// NaN or an infinity.
    #[error("label {0} is not finite")]
    NonFinite(f64),
    /// A label the model's scalar does not hold exactly, so the model could not predict it.
    #[error("label {label} is not exact in {scalar} (use integer labels, or f64)")]
    Inexact {
        /// The label.
        label: f64,
        /// The scalar, `f32`.
        scalar: &'static str,
    },
}

/// The classes seen so far, in order of first appearance.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(into = "SavedLabels", try_from = "SavedLabels")]
pub struct Labels {
    values: Vec<f64>,
    /// `values[c]`'s bits (−0 as +0) → `c`.
    index: HashMap<u64, usize>,
    limit: usize,
}

/// What a checkpoint stores of [`Labels`]: the index is rebuilt.
#[derive(Serialize, Deserialize)]
struct SavedLabels {
    values: Vec<f64>,
    limit: usize,
}

impl From<Labels> for SavedLabels {
    fn from(labels: Labels) -> Self {
        SavedLabels { values: labels.values, limit: labels.limit }
    }
}

impl TryFrom<SavedLabels> for Labels {
    type Error = LabelError;

    fn try_from(saved: SavedLabels) -> Result<Self, LabelError> {
        let mut labels = Labels::new(saved.limit.min(MAX_CLASSES));
        for value in saved.values {
            labels.class(value)?;
        }
        Ok(labels)
    }
}

/// The bits that identify a label (`−0` and `+0` are one label): a key to count by class.
pub fn key(label: f64) -> u64 {
    (label + 0.0).to_bits()
}

impl Labels {
    /// No classes yet; at most `limit` of them (capped at [`MAX_CLASSES`]).
    pub fn new(limit: usize) -> Self {
        Labels { values: Vec::new(), index: HashMap::new(), limit: limit.min(MAX_CLASSES) }
    }

    /// The classes of a data set's labels, at most [`MAX_CLASSES`].
    ///
    /// # Errors
    /// `(row, error)` for the first label (0-based row) that has no class.
    ///
    /// # Examples
    /// ```
    /// use kestrel_stream::labels::Labels;
    /// let labels = Labels::of(&[4.0, 2.0, 2.0, 4.0])?;
    /// assert_eq!(labels.values(), &[4.0, 2.0]);
    /// assert_eq!((labels.sign(4.0), labels.sign(2.0)), (Some(1), Some(-1)));
    /// assert_eq!(labels.model_labels(), vec![2.0, 4.0]); // [negative, positive]
    /// # Ok::<(), (usize, kestrel_stream::labels::LabelError)>(())
    /// ```
    pub fn of(labels: &[f64]) -> Result<Self, (usize, LabelError)> {
        let mut classes = Labels::new(MAX_CLASSES);
        for (row, &label) in labels.iter().enumerate() {
            classes.class(label).map_err(|e| (row, e))?;
        }
        Ok(classes)
    }

    /// The class of `label`, which becomes the next class when it is new.
    ///
    /// # Errors
    /// [`LabelError`] for a non-finite label or a new one past the limit; nothing changes then.
    pub fn class(&mut self, label: f64) -> Result<usize, LabelError> {
        let class = self.next_class(label)?;
        if class == self.values.len() {
            self.index.insert(key(label), class);
            self.values.push(label);
        }
        Ok(class)
    }

    /// The class [`class`](Self::class) would give `label`, without adding it.
    ///
    /// # Errors
    /// As [`class`](Self::class).
    pub fn next_class(&self, label: f64) -> Result<usize, LabelError> {
        if !label.is_finite() {
            return Err(LabelError::NonFinite(label));
        }
        match self.index.get(&key(label)) {
            Some(&class) => Ok(class),
            None if self.values.len() >= self.limit => Err(LabelError::TooMany { label, limit: self.limit }),
            None => Ok(self.values.len()),
        }
    }

    /// The most classes these labels take.
    pub fn limit(&self) -> usize {
        self.limit
    }

    /// `label` when a model in scalar `T` stores it exactly (all labels in `f64`; integers
    /// up to 2²⁴ and other values with few significant bits in `f32`).
    ///
    /// # Errors
    /// [`LabelError::Inexact`] otherwise.
    pub fn exact_in<T: kestrel_core::Real>(label: f64) -> Result<f64, LabelError> {
        if T::from_f64(label).to_f64() == label || !label.is_finite() {
            Ok(label)
        } else {
            Err(LabelError::Inexact { label, scalar: crate::model::scalar_name::<T>() })
        }
    }

    /// The class of `label`, if it has one.
    pub fn find(&self, label: f64) -> Option<usize> {
        self.index.get(&key(label)).copied()
    }

    /// The solver's `±1` for `label` in a binary problem: `+1` for the first class.
    pub fn sign(&self, label: f64) -> Option<i32> {
        self.find(label).map(Self::sign_of_class)
    }

    /// The solver's `±1` for class `class` of a binary problem: `+1` for the first class.
    pub fn sign_of_class(class: usize) -> i32 {
        if class == 0 { 1 } else { -1 }
    }

    /// The label of the solver's `±1` in a binary problem (the first class's label while
    /// only one has been seen).
    pub fn of_sign(&self, sign: i32) -> f64 {
        let class = usize::from(sign < 0).min(self.values.len().saturating_sub(1));
        self.values.get(class).copied().unwrap_or(0.0)
    }

    /// The labels, one per class.
    pub fn values(&self) -> &[f64] {
        &self.values
    }

    /// Number of classes.
    pub fn len(&self) -> usize {
        self.values.len()
    }

    /// `true` before the first label.
    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }

    /// Weight vectors a linear classifier needs: 1 for two classes, `k` for `k > 2`.
    pub fn outputs(&self) -> usize {
        outputs_of_classes(self.values.len())
    }

    /// The labels a model reports, by output: `[negative, positive]` for one output (the
    /// core models' order), the classes' labels otherwise.
    pub fn model_labels(&self) -> Vec<f64> {
        if self.outputs() == 1 { vec![self.of_sign(-1), self.of_sign(1)] } else { self.values.clone() }
    }
}

/// Decision values (a linear classifier's weight vectors) of a classifier of `classes`
/// classes: 1 for two, one per class beyond.
pub fn outputs_of_classes(classes: usize) -> usize {
    if classes <= 2 { 1 } else { classes }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classes_by_first_appearance_whatever_the_values() {
        let labels = Labels::of(&[0.0, 4_000_000_000.0, 7.0, 0.0, -0.0]).unwrap();
        assert_eq!(labels.values(), &[0.0, 4e9, 7.0]);
        assert_eq!((labels.find(-0.0), labels.find(7.0), labels.find(1.0)), (Some(0), Some(2), None));
        assert_eq!((labels.outputs(), labels.model_labels()), (3, vec![0.0, 4e9, 7.0]));
        let binary = Labels::of(&[1.0, 0.0, 1.0]).unwrap();
        assert_eq!((binary.sign(1.0), binary.sign(0.0), binary.sign(2.0)), (Some(1), Some(-1), None));
        assert_eq!((binary.of_sign(1), binary.of_sign(-1)), (1.0, 0.0));
    }

    #[test]
    fn the_limit_and_non_finite_labels_are_errors_that_change_nothing() {
        let mut labels = Labels::new(2);
        assert_eq!(labels.of_sign(-1), 0.0);
        assert_eq!(labels.class(3.0), Ok(0));
        assert_eq!(labels.model_labels(), vec![3.0, 3.0]);
        assert_eq!(labels.class(5.0), Ok(1));
        assert_eq!(labels.class(6.0), Err(LabelError::TooMany { label: 6.0, limit: 2 }));
        assert_eq!(labels.class(f64::NAN).map_err(|e| e.to_string()), Err("label NaN is not finite".into()));
        assert_eq!(labels.values(), &[3.0, 5.0]);
        assert_eq!(Labels::exact_in::<f32>(4e9), Ok(4e9));
        let inexact = LabelError::Inexact { label: 0.1, scalar: "f32" };
        assert_eq!((Labels::exact_in::<f32>(0.1), Labels::exact_in::<f64>(0.1)), (Err(inexact), Ok(0.1)));
        let many: Vec<f64> = (0..=MAX_CLASSES).map(|i| i as f64).collect();
        let (row, error) = Labels::of(&many).unwrap_err();
        assert_eq!((row, error), (MAX_CLASSES, LabelError::TooMany { label: MAX_CLASSES as f64, limit: MAX_CLASSES }));
    }

    #[test]
    fn saved_and_restored_with_the_index() {
        let labels = Labels::of(&[2.0, 4.0]).unwrap();
        let restored: Labels = postcard::from_bytes(&postcard::to_stdvec(&labels).unwrap()).unwrap();
        assert_eq!((restored.find(4.0), restored.len()), (Some(1), 2));
    }
}
