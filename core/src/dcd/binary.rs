//! [`LinearSvm`]: a binary linear SVM trained in batch by the solver of [`super::solver`].
//!
//! **Memory**: [`LinearSvm::scalars_len`]`(n, d) = 2n + d + 1` scalars (`w` with its bias
//! weight, `α`, the cached `Q̄ᵢᵢ`) and [`LinearSvm::indices_len`]`(n) = n` indices (the
//! permutation and active set), for at most `n` training rows of `d` features; the rows
//! themselves stay in the caller's memory. See [`LinearSvm::bytes`].

#![allow(
    clippy::indexing_slicing,
    reason = "the buffers are split at the sizes new_in checked (LinearSvm::scalars_len, indices_len)"
)]

use super::params::ValidParams;
use super::rows::{Row, Rows};
use super::solver::{Outcome, Pass, Problem, Workspace, check_problem, check_row_weights, margin, solve};
use crate::storage::{Storage, check_capacity};
use crate::{Error, Real, Rng};

/// A binary linear classifier `sign(wᵀx + w_b·B)` trained by dual coordinate descent
/// (Hsieh et al. 2008, Algorithm 1 with the shrinking of Sect. 3.2; seed 000, Problem 1),
/// labels ±1, in caller-lent storage `S` (scalars) and `I` (indices).
///
/// # Examples
/// ```
/// use kestrel_core::dcd::{DenseRows, Exit, LinearSvm, Loss, Params, Row};
/// use kestrel_core::Rng;
/// // Four points in the plane, separable by x₀ + x₁ > 0.
/// let x = [1.0, 1.0, 2.0, 0.5, -1.0, -1.5, -0.5, -2.0];
/// let labels = [1, 1, -1, -1];
/// let rows = DenseRows::new(&x, 2)?;
/// let params = Params::new().loss(Loss::Hinge).bias(1.0).check()?;
/// let mut svm = LinearSvm::new_in(
///     [0.0f64; LinearSvm::scalars_len(4, 2)], [0usize; LinearSvm::indices_len(4)], 4, 2, params)?;
/// let outcome = svm.train(&rows, &labels, &mut Rng::seed_from_u64(1))?;
/// assert_eq!(outcome.exit, Exit::Converged);
/// assert!(outcome.objective < 0.0);
/// assert_eq!(svm.predict(Row::Dense(&[3.0, 1.0]))?, 1);
/// assert_eq!(svm.predict(Row::Sparse { indices: &[1], values: &[-3.0] })?, -1);
/// # Ok::<(), kestrel_core::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct LinearSvm<T, S, I> {
    scalars: S,
    indices: I,
    capacity: usize,
    dim: usize,
    params: ValidParams<T>,
    rows: usize,
}

impl LinearSvm<(), (), ()> {
    /// Scalars a [`LinearSvm`] for up to `rows` rows of `dim` features needs: `2·rows + dim + 1`
    /// (saturating, so an absurd size fails the constructor's check instead of overflowing).
    pub const fn scalars_len(rows: usize, dim: usize) -> usize {
        rows.saturating_mul(2).saturating_add(dim).saturating_add(1)
    }

    /// Indices a [`LinearSvm`] for up to `rows` rows needs: `rows`.
    pub const fn indices_len(rows: usize) -> usize {
        rows
    }

    /// Bytes of both storages of a [`LinearSvm`] with scalar `T`.
    ///
    /// ```
    /// use kestrel_core::dcd::LinearSvm;
    /// // 1000 rows of 30 features in f32 on a 32-bit device: 8124 + 4000 bytes.
    /// let usize_bytes = core::mem::size_of::<usize>();
    /// assert_eq!(LinearSvm::bytes::<f32>(1000, 30), 2031 * 4 + 1000 * usize_bytes);
    /// ```
    pub const fn bytes<T>(rows: usize, dim: usize) -> usize {
        let scalars = Self::scalars_len(rows, dim).saturating_mul(core::mem::size_of::<T>());
        let indices = Self::indices_len(rows).saturating_mul(core::mem::size_of::<usize>());
        scalars.saturating_add(indices)
    }
}

impl<T: Real, S: Storage<T>, I: Storage<usize>> LinearSvm<T, S, I> {
    /// An untrained classifier (`w = 0`) for up to `capacity` rows of `dim` features.
    ///
    /// # Errors
    /// `CapacityExceeded` when `scalars` holds fewer than [`LinearSvm::scalars_len`] scalars or
    /// `indices` fewer than [`LinearSvm::indices_len`].
    pub fn new_in(
        mut scalars: S,
        indices: I,
        capacity: usize,
        dim: usize,
        params: ValidParams<T>,
    ) -> Result<Self, Error> {
        check_capacity(LinearSvm::scalars_len(capacity, dim), scalars.as_ref().len())?;
        check_capacity(LinearSvm::indices_len(capacity), indices.as_ref().len())?;
        scalars.as_mut()[..=dim].fill(T::ZERO);
        Ok(LinearSvm { scalars, indices, capacity, dim, params, rows: 0 })
    }

    /// Trains from `α = 0` on `rows` with labels ±1, drawing each pass's permutation
    /// from `rng`. O(passes · nnz) time.
    ///
    /// # Errors
    /// Checked before anything changes (the classifier is untouched on error):
    /// `InvalidParam { name: "rows" }` for an empty set; `DimensionMismatch` when
    /// `rows.dim()`, a dense row's length or `labels.len()` is wrong;
    /// `CapacityExceeded` for more rows than the capacity; `IndexOutOfRange` for a
    /// sparse index `≥ d`; `NonFinite` for NaN/∞ features; `InvalidLabel { row }` for a
    /// label other than ±1.
    pub fn train<R: Rows<T> + ?Sized>(&mut self, rows: &R, labels: &[i32], rng: &mut Rng) -> Result<Outcome<T>, Error> {
        self.train_observed(rows, labels, rng, |_| {})
    }

    /// [`train`](Self::train), calling `observer` after every outer pass (to watch the
    /// dual objective fall, log progress, or check invariants).
    ///
    /// # Errors
    /// As [`train`](Self::train).
    pub fn train_observed<R: Rows<T> + ?Sized>(
        &mut self,
        rows: &R,
        labels: &[i32],
        rng: &mut Rng,
        mut observer: impl FnMut(&Pass<'_, T>),
    ) -> Result<Outcome<T>, Error> {
        self.train_rows(rows, labels, None, rng, &mut observer)
    }

    /// [`train`](Self::train) with row `i`'s cost weighed by `row_weights[i]`: `Cᵢ =
    /// sᵢC₊` or `sᵢC₋` (scikit-learn's `sample_weight`; a row of weight 2 counts as two
    /// copies of it).
    ///
    /// # Errors
    /// As [`train`](Self::train); `DimensionMismatch` unless there is one weight per row,
    /// `InvalidParam { name: "row_weights" }` unless each is finite and positive (and so
    /// its products with the costs). The classifier is untouched on error.
    pub fn train_weighted<R: Rows<T> + ?Sized>(
        &mut self,
        rows: &R,
        labels: &[i32],
        row_weights: &[T],
        rng: &mut Rng,
    ) -> Result<Outcome<T>, Error> {
        self.train_rows(rows, labels, Some(row_weights), rng, &mut |_| {})
    }

    fn train_rows<R: Rows<T> + ?Sized>(
        &mut self,
        rows: &R,
        labels: &[i32],
        row_weights: Option<&[T]>,
        rng: &mut Rng,
        observer: &mut impl FnMut(&Pass<'_, T>),
    ) -> Result<Outcome<T>, Error> {
        let bias = self.params.bias();
        let binary = |label| label == 1 || label == -1;
        check_problem(rows, labels, self.dim, self.capacity, bias, binary)?;
        if let Some(weights) = row_weights {
            check_row_weights(weights, rows.len(), &self.params)?;
        }
        let n = rows.len();
        let problem = Problem::new(labels, 1, self.params).with_row_weights(row_weights);
        let outcome = solve(rows, &problem, self.workspace(n), rng, observer);
        self.rows = n;
        Ok(outcome)
    }

    /// The decision value `wᵀx + w_b·B` of a row.
    ///
    /// # Errors
    /// As [`Row::check`] against the classifier's dimension.
    pub fn decision(&self, row: Row<'_, T>) -> Result<T, Error> {
        row.check(self.dim)?;
        Ok(margin(&row, self.weights_with_bias(), self.params.bias()))
    }

    /// The predicted label: +1 when the decision value is positive, else −1.
    ///
    /// # Errors
    /// As [`decision`](Self::decision).
    pub fn predict(&self, row: Row<'_, T>) -> Result<i32, Error> {
        Ok(if self.decision(row)? > T::ZERO { 1 } else { -1 })
    }

    /// `w` over the `d` features.
    pub fn weights(&self) -> &[T] {
        &self.weights_with_bias()[..self.dim]
    }

    /// `w_b`, the weight of the bias feature (the intercept is `w_b·B`).
    pub fn bias_weight(&self) -> T {
        self.weights_with_bias()[self.dim]
    }

    /// The dual variables of the last training run, one per row (empty before).
    pub fn alpha(&self) -> &[T] {
        let alpha = &self.scalars.as_ref()[self.dim + 1..];
        &alpha[..self.rows]
    }

    /// The validated hyper-parameters.
    pub fn params(&self) -> &ValidParams<T> {
        &self.params
    }

    /// Features per row `d`.
    pub fn dim(&self) -> usize {
        self.dim
    }

    /// Most rows one training run can take.
    pub fn capacity(&self) -> usize {
        self.capacity
    }

    /// Gives both storages back.
    pub fn into_storage(self) -> (S, I) {
        (self.scalars, self.indices)
    }

    /// `[w₁ … w_d, w_b]`: the first `d + 1` scalars (the constructor checked the length).
    fn weights_with_bias(&self) -> &[T] {
        &self.scalars.as_ref()[..=self.dim]
    }

    /// The solver's slices for `n ≤ capacity` rows, laid out `[w | α | Q̄ᵢᵢ]` in the
    /// scalars (whose length the constructor checked) and the order in the indices.
    fn workspace(&mut self, n: usize) -> Workspace<'_, T> {
        let (w, rest) = self.scalars.as_mut().split_at_mut(self.dim + 1);
        let (alpha, rest) = rest.split_at_mut(self.capacity);
        Workspace { w, alpha: &mut alpha[..n], q_diagonal: &mut rest[..n], order: &mut self.indices.as_mut()[..n] }
    }
}

#[cfg(test)]
mod tests {
    use std::vec;
    use std::vec::Vec;

    use super::*;
    use crate::dcd::test_support::{Synthetic, kkt_violation, weights_from_alpha};
    use crate::dcd::{DenseRows, Exit, Loss, Params, SparseRows};

    type VecSvm<T> = LinearSvm<T, Vec<T>, Vec<usize>>;

    fn svm<T: Real>(n: usize, dim: usize, params: ValidParams<T>) -> VecSvm<T> {
        let scalars = vec![T::ZERO; LinearSvm::scalars_len(n, dim)];
        LinearSvm::new_in(scalars, vec![0; LinearSvm::indices_len(n)], n, dim, params).unwrap()
    }

    fn params<T: Real>(loss: Loss, epsilon: f64) -> ValidParams<T> {
        let p = Params::new().loss(loss).c(T::ONE).bias(T::ONE);
        p.epsilon(T::from_f64(epsilon)).check().unwrap()
    }

    fn sign(labels: &[i32]) -> impl Fn(usize) -> f64 + '_ {
        |i| f64::from(labels[i])
    }

    /// At the returned α: KKT within ε, α in its box, w = Σ yᵢαᵢx̂ᵢ; dense and sparse
    /// rows reach the same α up to rounding (dense dot products sum in eight lanes).
    fn kkt_box_and_weights<T: Real>() {
        let data = Synthetic::<T>::new(1, 300, 12, 0.6);
        let epsilon = 1e-3;
        for loss in [Loss::Hinge, Loss::SquaredHinge] {
            let params = params::<T>(loss, epsilon);
            let mut svm = svm(300, 12, params);
            let mut alphas = Vec::new();
            for sparse in [false, true] {
                let mut rng = Rng::seed_from_u64(2);
                let outcome = if sparse {
                    svm.train(&data.sparse_rows(), &data.labels, &mut rng)
                } else {
                    svm.train(&data.dense_rows(), &data.labels, &mut rng)
                };
                assert_eq!(outcome.unwrap().exit, Exit::Converged);
                let rows = data.dense_rows();
                let violation = kkt_violation(&rows, sign(&data.labels), svm.alpha(), &params);
                assert!(violation <= epsilon, "{loss:?}: KKT violated by {violation}");
                let w = weights_from_alpha(&rows, sign(&data.labels), svm.alpha(), T::ONE);
                let mut ours = svm.weights().to_vec();
                ours.push(svm.bias_weight());
                let tolerance = 1e3 * T::EPSILON.to_f64();
                for (a, b) in ours.iter().zip(&w) {
                    assert!((a.to_f64() - b).abs() <= tolerance * (1.0 + b.abs()), "{a} {b}");
                }
                alphas.push(svm.alpha().to_vec());
            }
            // Dense dot products sum in eight lanes, sparse ones in order: equal up to rounding.
            let tolerance = 1e4 * T::EPSILON.to_f64();
            for (dense, sparse) in alphas[0].iter().zip(&alphas[1]) {
                assert!((dense.to_f64() - sparse.to_f64()).abs() <= tolerance, "{dense} vs {sparse}");
            }
        }
    }

    /// Every pass leaves f(α) no higher than the one before and α in its box.
    fn objective_never_increases<T: Real>() {
        let data = Synthetic::<T>::new(3, 200, 8, 1.0);
        for loss in [Loss::Hinge, Loss::SquaredHinge] {
            let params = params::<T>(loss, 1e-4);
            let mut svm = svm(200, 8, params);
            let (mut previous, mut passes) = (0.0f64, 0);
            let mut rng = Rng::seed_from_u64(4);
            svm.train_observed(&data.dense_rows(), &data.labels, &mut rng, |pass| {
                let f = pass.objective().to_f64();
                let slack = 1e2 * T::EPSILON.to_f64() * f.abs().max(1.0);
                assert!(f <= previous + slack, "pass {}: {f} > {previous}", pass.number());
                for (&a, &label) in pass.alpha().iter().zip(&data.labels) {
                    let upper = params.coordinate(T::from_f64(f64::from(label))).upper;
                    assert!(a >= T::ZERO && a <= upper);
                }
                previous = f;
                passes = pass.number();
            })
            .unwrap();
            assert!(passes > 3, "{passes}");
        }
    }

    /// Shrinking changes the path, not the optimum.
    fn shrinking_on_and_off_agree<T: Real>() {
        let data = Synthetic::<T>::new(5, 400, 10, 0.5);
        for loss in [Loss::Hinge, Loss::SquaredHinge] {
            let objective = |shrinking| {
                let p = Params::new().loss(loss).bias(T::ONE).epsilon(T::from_f64(1e-4));
                let params = p.shrinking(shrinking).max_passes(100_000).check().unwrap();
                let mut svm = svm(400, 10, params);
                let rows = data.sparse_rows();
                let outcome = svm.train(&rows, &data.labels, &mut Rng::seed_from_u64(6));
                outcome.unwrap().objective.to_f64()
            };
            let (on, off) = (objective(true), objective(false));
            let tolerance = if T::BYTES == 4 { 1e-4 } else { 1e-6 };
            assert!((on - off).abs() <= tolerance * off.abs(), "{loss:?}: {on} vs {off}");
        }
    }

    /// The pass cap ends training with `Exit::Capped`, not an error.
    fn capped_is_an_outcome<T: Real>() {
        let data = Synthetic::<T>::new(7, 100, 5, 1.0);
        let p = Params::new().epsilon(T::from_f64(1e-12)).max_passes(2);
        let mut svm = svm(100, 5, p.check().unwrap());
        let rows = data.dense_rows();
        let outcome = svm.train(&rows, &data.labels, &mut Rng::seed_from_u64(8)).unwrap();
        assert_eq!((outcome.exit, outcome.passes), (Exit::Capped, 2));
        assert!(outcome.objective < T::ZERO && outcome.support_vectors > 0);
    }

    /// A bad row set that only a custom `Rows` can express: a sparse index past `d`.
    struct IndexPastDim<T>([T; 1]);
    impl<T: Real> Rows<T> for IndexPastDim<T> {
        fn len(&self) -> usize {
            1
        }
        fn dim(&self) -> usize {
            2
        }
        fn row(&self, _: usize) -> Row<'_, T> {
            Row::Sparse { indices: &[2], values: &self.0 }
        }
    }

    /// Training on `rows` fails with `error` and leaves `svm` as it was.
    fn rejects<T: Real, R: Rows<T> + ?Sized>(svm: &mut VecSvm<T>, rows: &R, labels: &[i32], error: Error) {
        let before = (svm.weights().to_vec(), svm.alpha().to_vec());
        let result = svm.train(rows, labels, &mut Rng::seed_from_u64(0));
        assert_eq!(result.err(), Some(error));
        assert_eq!((svm.weights().to_vec(), svm.alpha().to_vec()), before);
    }

    /// Every rejected call returns the right error and leaves the model as it was.
    fn bad_input_leaves_model_unchanged<T: Real>() {
        let data = Synthetic::<T>::new(9, 20, 2, 1.0);
        let mut svm = svm(20, 2, params::<T>(Loss::Hinge, 0.1));
        let mut rng = Rng::seed_from_u64(10);
        svm.train(&data.dense_rows(), &data.labels, &mut rng).unwrap();
        let one = [T::ONE, T::ONE];
        let nan = [T::ONE, T::from_f64(f64::NAN)];
        let inf = [T::from_f64(f64::INFINITY), T::ONE];
        let dense = |x| DenseRows::new(x, 2).unwrap();
        rejects(&mut svm, &dense(&nan), &[1], Error::NonFinite);
        rejects(&mut svm, &dense(&inf), &[1], Error::NonFinite);
        rejects(&mut svm, &dense(&one), &[0], Error::InvalidLabel { row: 0 });
        let two = [one, one].concat();
        rejects(&mut svm, &dense(&two), &[-1, 2], Error::InvalidLabel { row: 1 });
        let past = Error::IndexOutOfRange { index: 2, len: 2 };
        rejects(&mut svm, &IndexPastDim([T::ONE]), &[1], past);
        let empty = Error::InvalidParam { name: "rows" };
        rejects(&mut svm, &dense(&[]), &[], empty);
        let labels = Error::DimensionMismatch { expected: 1, got: 2 };
        rejects(&mut svm, &dense(&one), &[1, 1], labels);
        let dim = Error::DimensionMismatch { expected: 2, got: 1 };
        rejects(&mut svm, &DenseRows::new(&one, 1).unwrap(), &[1, 1], dim);
        let full = Error::CapacityExceeded { needed: 21, capacity: 20 };
        rejects(&mut svm, &dense(&[T::ONE; 42]), &[1; 21], full);
        assert_eq!(svm.decision(Row::Dense(&nan)), Err(Error::NonFinite));
        let past_dim = Row::Sparse { indices: &[5], values: &[T::ONE] };
        let past = Error::IndexOutOfRange { index: 5, len: 2 };
        assert_eq!(svm.predict(past_dim), Err(past));
        assert!(SparseRows::new(2, &[0, 1], &[2], &[T::ONE]).is_err());
        assert!(Params::new().c(T::ZERO).check().is_err());
        assert!(Params::new().c(-T::ONE).check().is_err());
    }

    macro_rules! gen_tests {
        ($($scalar:ident),*) => {$(
            mod $scalar {
                #[test]
                fn kkt_box_and_weights() {
                    super::kkt_box_and_weights::<$scalar>();
                }
                #[test]
                fn objective_never_increases() {
                    super::objective_never_increases::<$scalar>();
                }
                #[test]
                fn shrinking_on_and_off_agree() {
                    super::shrinking_on_and_off_agree::<$scalar>();
                }
                #[test]
                fn capped_is_an_outcome() {
                    super::capped_is_an_outcome::<$scalar>();
                }
                #[test]
                fn bad_input_leaves_model_unchanged() {
                    super::bad_input_leaves_model_unchanged::<$scalar>();
                }
            }
        )*};
    }

    gen_tests!(f32, f64);

    /// Row weights: an integer weight `k` solves the problem in which the row appears `k`
    /// times (the same primal optimum, to the solver's tolerance), unit weights change no
    /// bit, and bad weights are refused with the classifier untouched.
    #[test]
    fn row_weights_count_as_copies_of_the_rows() {
        let data = Synthetic::<f64>::new(4, 120, 6, 1.0);
        let counts: Vec<usize> = (0..120).map(|i| 1 + i % 3).collect();
        let (mut copies, mut labels) = (Vec::new(), Vec::new());
        for (i, &k) in counts.iter().enumerate() {
            for _ in 0..k {
                copies.extend_from_slice(&data.dense[i * 6..(i + 1) * 6]);
                labels.push(data.labels[i]);
            }
        }
        let weights: Vec<f64> = counts.iter().map(|&k| k as f64).collect();
        for loss in [Loss::Hinge, Loss::SquaredHinge] {
            let tight = Params::new().loss(loss).c(1.0).bias(1.0).epsilon(1e-8).max_passes(1_000_000);
            let params = tight.check().unwrap();
            let mut weighted = svm(120, 6, params);
            let rng = &mut Rng::seed_from_u64(3);
            assert_eq!(
                weighted.train_weighted(&data.dense_rows(), &data.labels, &weights, rng).unwrap().exit,
                Exit::Converged
            );
            let mut repeated = svm(labels.len(), 6, params);
            let rows = DenseRows::new(&copies, 6).unwrap();
            assert_eq!(repeated.train(&rows, &labels, &mut Rng::seed_from_u64(3)).unwrap().exit, Exit::Converged);
            let (a, b) = (weighted.weights_with_bias(), repeated.weights_with_bias());
            for (x, y) in a.iter().zip(b) {
                assert!((x - y).abs() <= 1e-6 * (1.0 + y.abs()), "{loss:?}: {x} vs {y}");
            }

            let ones = vec![1.0; 120];
            let mut unit = svm(120, 6, params);
            unit.train_weighted(&data.dense_rows(), &data.labels, &ones, &mut Rng::seed_from_u64(5)).unwrap();
            let mut plain = svm(120, 6, params);
            plain.train(&data.dense_rows(), &data.labels, &mut Rng::seed_from_u64(5)).unwrap();
            assert_eq!(unit.weights_with_bias(), plain.weights_with_bias());
            assert_eq!(unit.alpha(), plain.alpha());

            let before = plain.weights_with_bias().to_vec();
            let rng = &mut Rng::seed_from_u64(6);
            let mut bad = weights.clone();
            bad[7] = 0.0;
            assert_eq!(
                plain.train_weighted(&data.dense_rows(), &data.labels, &bad, rng).err(),
                Some(Error::InvalidParam { name: "row_weights" })
            );
            bad[7] = f64::NAN;
            assert_eq!(
                plain.train_weighted(&data.dense_rows(), &data.labels, &bad, rng).err(),
                Some(Error::InvalidParam { name: "row_weights" })
            );
            bad[7] = -1.0;
            assert_eq!(
                plain.train_weighted(&data.dense_rows(), &data.labels, &bad, rng).err(),
                Some(Error::InvalidParam { name: "row_weights" })
            );
            let short = plain.train_weighted(&data.dense_rows(), &data.labels, &weights[1..], rng);
            assert!(matches!(short, Err(Error::DimensionMismatch { .. })));
            assert_eq!(plain.weights_with_bias(), &before[..]);
        }
    }

    #[test]
    fn storage_is_checked() {
        let params = Params::<f32>::new().check().unwrap();
        let small = LinearSvm::new_in([0.0f32; 10], [0usize; 4], 4, 3, params);
        let needed = LinearSvm::scalars_len(4, 3);
        assert_eq!(small.err(), Some(Error::CapacityExceeded { needed, capacity: 10 }));
        let few = LinearSvm::new_in([0.0f32; 12], [0usize; 3], 4, 3, params);
        assert!(few.is_err());
        assert!(LinearSvm::new_in([0.0f32; 1], [0usize; 1], usize::MAX, 3, params).is_err());
        assert_eq!(LinearSvm::bytes::<f64>(4, 3), 12 * 8 + 4 * core::mem::size_of::<usize>());
    }
}
