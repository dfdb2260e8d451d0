//! Training on a whole [`Dataset`](crate::dataset::Dataset): the linear SVM ([`linear`]),
//! SLKL kernel regression ([`slkl`]), the reduced-kernel SVM ([`rsvm`]), Nyström kernel
//! ridge regression ([`krr`]) and kernel partial least squares ([`kpls`]) on the same features, smooth ε-insensitive regression on the reduced kernel
//! ([`ssvr`]), kernel PCA and its supervised kin ([`kpca`]), the MapReduce RSVM
//! ([`mrrsvm`]), novelty detection
//! ([`novelty`]), kernel learning from pairs with clustering ([`npkl`]), the Laplacian eigenmap, the
//! locality preserving projection and spectral clustering ([`spectral`]) with k-means
//! ([`clusters`]); [`fit`] drives
//! them all with `kestrel train`'s settings, after [`scaling`] (standardise or not) and
//! [`relevance`] (weigh the features) have prepared the rows.
//!
//! **Memory budget.** Each trainer takes an optional budget in bytes for everything training
//! holds: the data set as read, the copies training makes of it (a dense matrix for the
//! kernel learners, features for the reduced-kernel SVM) and the solver's state. It is
//! checked from the data set's shape *before* anything is allocated, and every buffer is
//! then allocated fallibly ([`crate::limits::zeroed`]).

pub mod calibration;
pub mod centres;
pub mod class_weights;
pub mod clusters;
pub mod falkon;
pub mod fit;
pub mod gamma;
pub mod kernel_rows;
pub mod kpca;
pub mod kpls;
pub mod krr;
pub mod linear;
pub mod mrrsvm;
pub mod novelty;
pub mod npkl;
pub mod relevance;
pub mod rsvm;
pub mod scaling;
pub mod slkl;
pub mod spectral;
pub mod ssvr;
pub mod tune;

use kestrel_core::Real;

use crate::labels::{LabelError, Labels};
use crate::limits::{AllocError, MAX_CLASSES, reserve};

/// Why a data set could not be trained on.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum TrainError {
    /// The core rejected the data or parameters.
    #[error(transparent)]
    Core(#[from] kestrel_core::Error),
    /// A label has no class (too many distinct labels, or not finite).
    #[error("row {row}: {error}")]
    Label {
        /// 1-based row of the data set.
        row: usize,
        /// What is wrong with it.
        error: LabelError,
    },
    /// A setting names a label that no row has.
    #[error("no row has the label {0}")]
    UnknownClass(f64),
    /// Fewer than two distinct labels.
    #[error("the training set has a single label value ({0}): nothing to separate")]
    SingleClass(f64),
    /// No rows to train on.
    #[error("the training set has no rows")]
    Empty,
    /// Training would need more memory than the budget.
    #[error("training needs {needed} bytes, over the budget of {budget}")]
    OverBudget {
        /// Bytes the configuration needs.
        needed: usize,
        /// The budget.
        budget: usize,
    },
    /// The reduced-kernel SVM's selection kept no centre: every point's kernel column is
    /// zero (a linear or polynomial kernel on all-zero features) or overflows.
    #[error("no centre was selected: every kernel column is zero or overflows (try the RBF kernel)")]
    NoCentres,
    /// Exact kernel PCA on more rows than its `n × n` matrix allows.
    #[error("exact kernel PCA takes at most {max} rows, the data have {n}: reduce it with --centers")]
    TooManyRows {
        /// Rows of the data.
        n: usize,
        /// The most rows.
        max: usize,
    },
    /// Fewer rows than a fit needs.
    #[error("{what} needs at least {min} rows, the data have {n}")]
    TooFewRows {
        /// Rows of the data.
        n: usize,
        /// The fewest the fit takes.
        min: usize,
        /// The fit.
        what: &'static str,
    },
    /// More components than a projection can have.
    #[error("components asked for: {asked}, {limit}")]
    Components {
        /// Components asked for.
        asked: usize,
        /// The most the fit gives, and why.
        limit: String,
    },
    /// Relevance weights for more features than their search affords.
    #[error("relevance weights are searched for at most {max} features, the data have {dim}")]
    TooManyFeatures {
        /// Features of the data.
        dim: usize,
        /// The most features.
        max: usize,
    },
    /// Kernel PLS found no first component: no direction of the reduced features goes with
    /// the targets (its Krylov iteration stopped at its first step).
    #[error(
        "kernel PLS found no direction of the features that goes with the targets: the features do not vary, \
         or the targets do not vary with them"
    )]
    NoDirection,
    /// A row the normalised kernel cannot place: `k(x, x) ≤ 0`, as for a row of zeros under
    /// a linear kernel (novelty detection divides by `√k(x, x)`, seed 002 eq. 62).
    #[error(
        "row {row}: its kernel value with itself is {value}, so the normalised {kernel} kernel gives it no \
         direction (a row of zeros?): use the rbf kernel, or leave such rows out"
    )]
    Undirected {
        /// 1-based row of the data set.
        row: usize,
        /// `k(x, x)`.
        value: f64,
        /// The kernel's name.
        kernel: &'static str,
    },
    /// A buffer could not be allocated.
    #[error(transparent)]
    Alloc(#[from] AllocError),
}

/// `Err(OverBudget)` when `needed` bytes exceed the budget.
pub fn check_budget(needed: usize, budget: Option<usize>) -> Result<(), TrainError> {
    match budget {
        Some(budget) if needed > budget => Err(TrainError::OverBudget { needed, budget }),
        _ => Ok(()),
    }
}

/// The classes of a classifier's training labels (two at least), and each row's label for
/// the solver: `±1` for two classes ([`Labels::sign`]), the class index for more (the
/// one-vs-rest problems).
///
/// The model stores its labels in `T`: a label `T` does not hold exactly (0.1 in `f32`) is
/// refused, since the model could not predict it.
pub(crate) fn classes<T: Real>(labels: &[f64]) -> Result<(Labels, Vec<i32>), TrainError> {
    let mut classes = Labels::new(MAX_CLASSES);
    let mut solver = Vec::new();
    reserve(&mut solver, labels.len(), "the labels")?;
    for (row, &label) in labels.iter().enumerate() {
        let exact = Labels::exact_in::<T>(label);
        let class =
            exact.and_then(|label| classes.class(label)).map_err(|error| TrainError::Label { row: row + 1, error })?;
        // At most MAX_CLASSES = 2¹⁶ classes.
        solver.push(i32::try_from(class).unwrap_or(i32::MAX));
    }
    match classes.values() {
        [] => return Err(TrainError::Empty),
        [single] => return Err(TrainError::SingleClass(*single)),
        [_, _] => solver.iter_mut().for_each(|class| *class = Labels::sign_of_class(usize::from(*class != 0))),
        _ => {}
    }
    Ok((classes, solver))
}
