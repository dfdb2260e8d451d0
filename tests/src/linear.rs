//! Training and scoring the core's DCD linear SVMs on a [`LibSvm`] file, the way
//! `liblinear-train` and `liblinear-predict` do: binary when the labels are ±1,
//! one-vs-rest over `0..k` otherwise.

use kestrel_core::dcd::{LinearSvm, OneVsRest, Outcome, ValidParams};
use kestrel_core::{Error, Real, Rng};

use crate::libsvm::LibSvm;

/// A trained classifier in `Vec` storage.
pub enum Classifier<T> {
    /// Labels ±1.
    Binary(LinearSvm<T, Vec<T>, Vec<usize>>),
    /// Labels `0..k`.
    OneVsRest(OneVsRest<T, Vec<T>, Vec<usize>>),
}

/// Trains on the sparse rows of `train` with `dim` features (at least `train.dim`).
pub fn fit<T: Real>(
    train: &LibSvm,
    dim: usize,
    params: ValidParams<T>,
    seed: u64,
) -> Result<(Classifier<T>, Outcome<T>), Error> {
    let values = train.values_as::<T>();
    let rows = train.sparse_rows(&values, dim);
    let n = train.len();
    let mut rng = Rng::seed_from_u64(seed);
    if train.labels.iter().all(|&y| y == 1 || y == -1) {
        let scalars = vec![T::ZERO; LinearSvm::scalars_len(n, dim)];
        let indices = vec![0; LinearSvm::indices_len(n)];
        let mut svm = LinearSvm::new_in(scalars, indices, n, dim, params)?;
        let outcome = svm.train(&rows, &train.labels, &mut rng)?;
        Ok((Classifier::Binary(svm), outcome))
    } else {
        let classes = train.labels.iter().copied().max().unwrap_or(0).max(1) as usize + 1;
        let scalars = vec![T::ZERO; OneVsRest::scalars_len(n, dim, classes)];
        let indices = vec![0; OneVsRest::indices_len(n)];
        let mut ovr = OneVsRest::new_in(scalars, indices, n, dim, classes, params)?;
        let outcome = ovr.train(&rows, &train.labels, &mut rng)?;
        Ok((Classifier::OneVsRest(ovr), outcome))
    }
}

/// Percentage of the rows of `test` whose label the classifier predicts; features past
/// the classifier's dimension are dropped, as `liblinear-predict` does.
pub fn accuracy<T: Real>(classifier: &Classifier<T>, test: &LibSvm) -> Result<f64, Error> {
    let dim = match classifier {
        Classifier::Binary(svm) => svm.dim(),
        Classifier::OneVsRest(ovr) => ovr.dim(),
    };
    let test_known = test.truncated(dim);
    let values = test_known.values_as::<T>();
    let rows = test_known.sparse_rows(&values, dim);
    let mut right = 0;
    for (i, &label) in test.labels.iter().enumerate() {
        let row = kestrel_core::dcd::Rows::row(&rows, i);
        let predicted = match classifier {
            Classifier::Binary(svm) => svm.predict(row)?,
            Classifier::OneVsRest(ovr) => ovr.predict(row)? as i32,
        };
        right += usize::from(predicted == label);
    }
    Ok(100.0 * right as f64 / test.len() as f64)
}
