//! [`OneVsRest`]: `k` classes by `k` binary problems, class `c` against the rest, as
//! LIBLINEAR's `-s 1`/`-s 3` do for more than two classes; the predicted class has the
//! largest decision value.
//!
//! The `k` problems are solved one after the other in the same `α`, `Q̄ᵢᵢ` and order
//! buffers; only the `k` weight vectors are kept. Time: `k` batch trainings.
//!
//! **Memory**: [`OneVsRest::scalars_len`]`(n, d, k) = k(d + 1) + 2n` scalars and
//! [`OneVsRest::indices_len`]`(n) = n` indices; see [`OneVsRest::bytes`].

#![allow(
    clippy::indexing_slicing,
    reason = "the buffers are split at the sizes new_in checked (OneVsRest::scalars_len, indices_len)"
)]

use super::params::ValidParams;
use super::rows::{Row, Rows};
use super::solver::{Exit, Outcome, Pass, Problem, Workspace, check_problem, check_row_weights, margin, solve};
use crate::storage::{Storage, check_capacity};
use crate::{Error, Real, Rng};

/// A `k`-class linear classifier, one-vs-rest, labels `0..k`.
///
/// # Examples
/// ```
/// use kestrel_core::dcd::{DenseRows, OneVsRest, Params, Row};
/// use kestrel_core::Rng;
/// // Three clusters on a line, classes 0, 1, 2.
/// let x = [-5.0, -4.0, 0.0, 0.5, 4.0, 5.0];
/// let labels = [0, 0, 1, 1, 2, 2];
/// let rows = DenseRows::new(&x, 1)?;
/// let params = Params::new().c(10.0).bias(1.0).check()?;
/// let mut scalars = vec![0.0f64; OneVsRest::scalars_len(6, 1, 3)];
/// let mut indices = vec![0usize; OneVsRest::indices_len(6)];
/// let mut ovr = OneVsRest::new_in(&mut scalars[..], &mut indices[..], 6, 1, 3, params)?;
/// ovr.train(&rows, &labels, &mut Rng::seed_from_u64(3))?;
/// assert_eq!(ovr.predict(Row::Dense(&[-6.0]))?, 0);
/// assert_eq!(ovr.predict(Row::Dense(&[6.0]))?, 2);
/// # Ok::<(), kestrel_core::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct OneVsRest<T, S, I> {
    scalars: S,
    indices: I,
    capacity: usize,
    dim: usize,
    classes: usize,
    params: ValidParams<T>,
}

impl OneVsRest<(), (), ()> {
    /// Scalars a [`OneVsRest`] for up to `rows` rows of `dim` features and `classes` classes
    /// needs: `classes·(dim + 1) + 2·rows` (saturating).
    pub const fn scalars_len(rows: usize, dim: usize, classes: usize) -> usize {
        let weights = classes.saturating_mul(dim.saturating_add(1));
        weights.saturating_add(rows.saturating_mul(2))
    }

    /// Indices a [`OneVsRest`] for up to `rows` rows needs: `rows`.
    pub const fn indices_len(rows: usize) -> usize {
        rows
    }

    /// Bytes of both storages of a [`OneVsRest`] with scalar `T`.
    pub const fn bytes<T>(rows: usize, dim: usize, classes: usize) -> usize {
        let scalars = Self::scalars_len(rows, dim, classes).saturating_mul(core::mem::size_of::<T>());
        let indices = Self::indices_len(rows).saturating_mul(core::mem::size_of::<usize>());
        scalars.saturating_add(indices)
    }
}

impl<T: Real, S: Storage<T>, I: Storage<usize>> OneVsRest<T, S, I> {
    /// An untrained classifier (all weights 0) for up to `capacity` rows of `dim` features
    /// and `classes ≥ 2` classes.
    ///
    /// # Errors
    /// `InvalidParam { name: "classes" }` for fewer than 2 classes; `CapacityExceeded`
    /// when `scalars` or `indices` is shorter than [`OneVsRest::scalars_len`] / [`OneVsRest::indices_len`].
    pub fn new_in(
        mut scalars: S,
        indices: I,
        capacity: usize,
        dim: usize,
        classes: usize,
        params: ValidParams<T>,
    ) -> Result<Self, Error> {
        if classes < 2 {
            return Err(Error::InvalidParam { name: "classes" });
        }
        check_capacity(OneVsRest::scalars_len(capacity, dim, classes), scalars.as_ref().len())?;
        check_capacity(OneVsRest::indices_len(capacity), indices.as_ref().len())?;
        scalars.as_mut()[..classes * (dim + 1)].fill(T::ZERO);
        Ok(OneVsRest { scalars, indices, capacity, dim, classes, params })
    }

    /// Trains the `k` binary problems. The outcome sums passes, objectives and support
    /// vectors over the classes and is `Capped` when any class was.
    ///
    /// # Errors
    /// As [`LinearSvm::train`](super::LinearSvm::train), with `InvalidLabel { row }` for a
    /// label outside `0..k`. The classifier is untouched on error.
    pub fn train<R: Rows<T> + ?Sized>(&mut self, rows: &R, labels: &[i32], rng: &mut Rng) -> Result<Outcome<T>, Error> {
        self.train_observed(rows, labels, rng, |_, _| {})
    }

    /// [`train`](Self::train), calling `observer(class, pass)` after every outer pass.
    ///
    /// # Errors
    /// As [`train`](Self::train).
    pub fn train_observed<R: Rows<T> + ?Sized>(
        &mut self,
        rows: &R,
        labels: &[i32],
        rng: &mut Rng,
        observer: impl FnMut(usize, &Pass<'_, T>),
    ) -> Result<Outcome<T>, Error> {
        self.train_classes(rows, labels, (None, None), rng, observer, |_, _| {})
    }

    /// [`train`](Self::train), calling `on_class(class, outcome)` with each class's own
    /// outcome once its problem is solved: which classes stopped at the pass cap, for a
    /// caller that solves those again another way. With `weights`, class `c`'s rows
    /// weigh `weights[c]` in problem `c`, as in [`train_weighted`](Self::train_weighted);
    /// with `row_weights`, row `i`'s cost is further weighed by `row_weights[i]` in every
    /// problem, as in [`LinearSvm::train_weighted`](super::LinearSvm::train_weighted).
    ///
    /// # Errors
    /// As [`train`](Self::train), and with `weights` as
    /// [`train_weighted`](Self::train_weighted); `DimensionMismatch` unless there is one
    /// row weight per row, `InvalidParam { name: "row_weights" }` unless each is finite
    /// and positive (and so its products with every problem's costs). The classifier is
    /// untouched on error.
    pub fn train_each<R: Rows<T> + ?Sized>(
        &mut self,
        rows: &R,
        labels: &[i32],
        (weights, row_weights): (Option<&[T]>, Option<&[T]>),
        rng: &mut Rng,
        on_class: impl FnMut(usize, &Outcome<T>),
    ) -> Result<Outcome<T>, Error> {
        if let Some(weights) = weights {
            self.check_weights(weights)?;
        }
        if let Some(row_weights) = row_weights {
            for class in 0..self.classes {
                let weight = weights.and_then(|w| w.get(class).copied()).unwrap_or(T::ONE);
                check_row_weights(row_weights, rows.len(), &self.params.weighted(weight, T::ONE)?)?;
            }
        }
        self.train_classes(rows, labels, (weights, row_weights), rng, |_, _| {}, on_class)
    }

    /// [`train`](Self::train) with class `c`'s rows weighted by `weights[c]` in problem `c`
    /// (`C₊ = w_c·C₊`, the rest's `C₋` unchanged: LIBLINEAR's `-wi` for one-vs-rest).
    ///
    /// # Errors
    /// As [`train`](Self::train); `DimensionMismatch` unless there are `k` weights,
    /// `InvalidParam { name: "class_weights" }` unless each is finite and positive (and so
    /// its product with `C₊`). The classifier is untouched on error.
    pub fn train_weighted<R: Rows<T> + ?Sized>(
        &mut self,
        rows: &R,
        labels: &[i32],
        weights: &[T],
        rng: &mut Rng,
    ) -> Result<Outcome<T>, Error> {
        self.check_weights(weights)?;
        self.train_classes(rows, labels, (Some(weights), None), rng, |_, _| {}, |_, _| {})
    }

    /// `k` weights, each finite and positive and so its product with `C₊`.
    fn check_weights(&self, weights: &[T]) -> Result<(), Error> {
        crate::error::check_len(self.classes, weights.len())?;
        for &w in weights {
            self.params.weighted(w, T::ONE)?;
        }
        Ok(())
    }

    fn train_classes<R: Rows<T> + ?Sized>(
        &mut self,
        rows: &R,
        labels: &[i32],
        (weights, row_weights): (Option<&[T]>, Option<&[T]>),
        rng: &mut Rng,
        mut observer: impl FnMut(usize, &Pass<'_, T>),
        mut on_class: impl FnMut(usize, &Outcome<T>),
    ) -> Result<Outcome<T>, Error> {
        let classes = self.classes;
        let in_range = |label: i32| usize::try_from(label).is_ok_and(|c| c < classes);
        let bias = self.params.bias();
        check_problem(rows, labels, self.dim, self.capacity, bias, in_range)?;
        let mut total = Outcome { exit: Exit::Converged, passes: 0, objective: T::ZERO, support_vectors: 0 };
        for class in 0..classes {
            // Labels are i32: a class beyond i32::MAX cannot be named, nor trained.
            let label = i32::try_from(class).map_err(|_| Error::InvalidParam { name: "classes" })?;
            let weight = weights.and_then(|w| w.get(class).copied()).unwrap_or(T::ONE);
            let params = self.params.weighted(weight, T::ONE)?;
            let problem = Problem::new(labels, label, params).with_row_weights(row_weights);
            let ws = self.workspace(class, rows.len());
            let outcome = solve(rows, &problem, ws, rng, &mut |pass| observer(class, pass));
            on_class(class, &outcome);
            if outcome.exit == Exit::Capped {
                total.exit = Exit::Capped;
            }
            total.passes += outcome.passes;
            total.objective += outcome.objective;
            total.support_vectors += outcome.support_vectors;
        }
        Ok(total)
    }

    /// Writes the `k` decision values `w_cᵀx + w_{c,b}·B` into `out`.
    ///
    /// # Errors
    /// As [`Row::check`]; `DimensionMismatch` unless `out.len() = k` (`out` untouched).
    pub fn decision_values(&self, row: Row<'_, T>, out: &mut [T]) -> Result<(), Error> {
        row.check(self.dim)?;
        crate::error::check_len(self.classes, out.len())?;
        for (class, value) in out.iter_mut().enumerate() {
            *value = margin(&row, self.weights_with_bias(class), self.params.bias());
        }
        Ok(())
    }

    /// The class with the largest decision value (the lowest such class on ties).
    ///
    /// # Errors
    /// As [`Row::check`].
    pub fn predict(&self, row: Row<'_, T>) -> Result<usize, Error> {
        row.check(self.dim)?;
        let mut best = (0, margin(&row, self.weights_with_bias(0), self.params.bias()));
        for class in 1..self.classes {
            let value = margin(&row, self.weights_with_bias(class), self.params.bias());
            if value > best.1 {
                best = (class, value);
            }
        }
        Ok(best.0)
    }

    /// `w_c` over the `d` features, or `None` when `class ≥ k`.
    pub fn weights(&self, class: usize) -> Option<&[T]> {
        (class < self.classes).then(|| &self.weights_with_bias(class)[..self.dim])
    }

    /// `w_{c,b}`, the bias weight of `class`, or `None` when `class ≥ k`.
    pub fn bias_weight(&self, class: usize) -> Option<T> {
        (class < self.classes).then(|| self.weights_with_bias(class)[self.dim])
    }

    /// Number of classes `k`.
    pub fn classes(&self) -> usize {
        self.classes
    }

    /// Features per row `d`.
    pub fn dim(&self) -> usize {
        self.dim
    }

    /// The validated hyper-parameters.
    pub fn params(&self) -> &ValidParams<T> {
        &self.params
    }

    /// Gives both storages back.
    pub fn into_storage(self) -> (S, I) {
        (self.scalars, self.indices)
    }

    /// `[w_{c,1} … w_{c,d}, w_{c,b}]` for `class < k` (storage length checked at construction).
    fn weights_with_bias(&self, class: usize) -> &[T] {
        let stride = self.dim + 1;
        &self.scalars.as_ref()[class * stride..][..stride]
    }

    /// Solver slices for `class < k` and `n ≤ capacity`: layout `[W (k × (d+1)) | α | Q̄ᵢᵢ]`.
    fn workspace(&mut self, class: usize, n: usize) -> Workspace<'_, T> {
        let stride = self.dim + 1;
        let (weights, rest) = self.scalars.as_mut().split_at_mut(self.classes * stride);
        let (alpha, rest) = rest.split_at_mut(self.capacity);
        Workspace {
            w: &mut weights[class * stride..][..stride],
            alpha: &mut alpha[..n],
            q_diagonal: &mut rest[..n],
            order: &mut self.indices.as_mut()[..n],
        }
    }
}

#[cfg(test)]
mod tests {
    use std::vec;
    use std::vec::Vec;

    use super::*;
    use crate::dcd::test_support::{kkt_violation, weights_from_alpha};
    use crate::dcd::{DenseRows, LinearSvm, Loss, Params};

    /// Three Gaussian clusters in the plane, 60 points each, labels 0, 1, 2.
    fn clusters<T: Real>() -> (Vec<T>, Vec<i32>) {
        let mut rng = Rng::seed_from_u64(21);
        let centres = [(-2.0, 0.0), (2.0, 0.0), (0.0, 2.5)];
        let (mut x, mut labels) = (Vec::new(), Vec::new());
        for k in 0..180 {
            let (cx, cy) = centres[k % 3];
            x.push(T::from_f64(cx + rng.normal::<f64>()));
            x.push(T::from_f64(cy + rng.normal::<f64>()));
            labels.push((k % 3) as i32);
        }
        (x, labels)
    }

    /// Each class's problem ends within ε of its KKT conditions with `w_c = Σ yᵢαᵢx̂ᵢ`,
    /// and most training points are classified right.
    fn every_class_is_solved<T: Real>() {
        let (x, labels) = clusters::<T>();
        let rows = DenseRows::new(&x, 2).unwrap();
        let epsilon = 1e-3;
        let p = Params::new().loss(Loss::Hinge).bias(T::ONE);
        let params = p.epsilon(T::from_f64(epsilon)).check().unwrap();
        let scalars = vec![T::ZERO; OneVsRest::scalars_len(180, 2, 3)];
        let mut ovr = OneVsRest::new_in(scalars, vec![0; 180], 180, 2, 3, params).unwrap();
        let mut last_alpha = vec![Vec::new(); 3];
        let mut rng = Rng::seed_from_u64(22);
        let outcome = ovr
            .train_observed(&rows, &labels, &mut rng, |class, pass| {
                last_alpha[class] = pass.alpha().to_vec();
            })
            .unwrap();
        assert_eq!(outcome.exit, Exit::Converged);
        for (class, alpha) in last_alpha.iter().enumerate() {
            let sign = |i: usize| if labels[i] == class as i32 { 1.0 } else { -1.0 };
            assert!(kkt_violation(&rows, sign, alpha, &params) <= epsilon);
            let w = weights_from_alpha(&rows, sign, alpha, T::ONE);
            let ours = ovr.weights(class).unwrap();
            let bias_weight = ovr.bias_weight(class).unwrap().to_f64();
            let tolerance = 1e3 * T::EPSILON.to_f64();
            assert!((bias_weight - w[2]).abs() <= tolerance * (1.0 + w[2].abs()));
            for (a, b) in ours.iter().zip(&w) {
                assert!((a.to_f64() - b).abs() <= tolerance * (1.0 + b.abs()));
            }
        }
        let right = (0..180).filter(|&i| ovr.predict(rows.row(i)).unwrap() == labels[i] as usize).count();
        assert!(right > 160, "{right} of 180");
        let mut values = [T::ZERO; 3];
        ovr.decision_values(Row::Dense(&[T::from_f64(-4.0), T::ZERO]), &mut values).unwrap();
        assert!(values[0] > values[1] && values[0] > values[2]);
    }

    /// `train_each` reports each class's own outcome, in class order, and they add up to
    /// the total; a cap of passes that one class's problem outlasts names that class only.
    #[test]
    fn each_class_reports_its_own_outcome() {
        let (x, labels) = clusters::<f64>();
        let rows = DenseRows::new(&x, 2).unwrap();
        let train = |max_passes: usize| {
            let params = Params::new().c(1.0).bias(1.0).max_passes(max_passes).check().unwrap();
            let mut ovr =
                OneVsRest::new_in(vec![0.0; OneVsRest::scalars_len(180, 2, 3)], vec![0; 180], 180, 2, 3, params)
                    .unwrap();
            let mut each = Vec::new();
            let total = ovr
                .train_each(&rows, &labels, (None, None), &mut Rng::seed_from_u64(5), |c, o| each.push((c, *o)))
                .unwrap();
            (total, each)
        };
        let (total, each) = train(1000);
        assert_eq!(each.iter().map(|e| e.0).collect::<Vec<_>>(), [0, 1, 2]);
        assert_eq!(each.iter().map(|e| e.1.passes).sum::<usize>(), total.passes);
        assert_eq!(each.iter().map(|e| e.1.objective).sum::<f64>(), total.objective);
        assert!(each.iter().all(|e| e.1.exit == Exit::Converged) && total.exit == Exit::Converged);
        // Capped one pass short of the class that took the most.
        let most = each.iter().map(|e| e.1.passes).max().unwrap();
        let (total, each) = train(most - 1);
        let capped: Vec<usize> = each.iter().filter(|e| e.1.exit == Exit::Capped).map(|e| e.0).collect();
        let slowest: Vec<usize> = train(1000).1.iter().filter(|e| e.1.passes == most).map(|e| e.0).collect();
        assert_eq!((capped, total.exit), (slowest, Exit::Capped));
    }

    /// Bad labels, rows or sizes are errors that leave the weights as they were.
    fn bad_input_leaves_model_unchanged<T: Real>() {
        let (x, labels) = clusters::<T>();
        let rows = DenseRows::new(&x, 2).unwrap();
        let params = Params::new().check().unwrap();
        let scalars = vec![T::ZERO; OneVsRest::scalars_len(180, 2, 3)];
        let mut ovr = OneVsRest::new_in(scalars, vec![0; 180], 180, 2, 3, params).unwrap();
        let mut rng = Rng::seed_from_u64(23);
        ovr.train(&rows, &labels, &mut rng).unwrap();
        let before: Vec<T> = (0..3).flat_map(|c| ovr.weights(c).unwrap().to_vec()).collect();
        let mut bad = labels.clone();
        bad[7] = 3;
        let error = Some(Error::InvalidLabel { row: 7 });
        assert_eq!(ovr.train(&rows, &bad, &mut rng).err(), error);
        bad[7] = -1;
        assert_eq!(ovr.train(&rows, &bad, &mut rng).err(), error);
        let mut nan = x.clone();
        nan[5] = T::from_f64(f64::NAN);
        let nan_rows = DenseRows::new(&nan, 2).unwrap();
        let error = Some(Error::NonFinite);
        assert_eq!(ovr.train(&nan_rows, &labels, &mut rng).err(), error);
        let after: Vec<T> = (0..3).flat_map(|c| ovr.weights(c).unwrap().to_vec()).collect();
        assert_eq!(before, after);
        let mut out = [T::ZERO; 2];
        assert!(ovr.decision_values(rows.row(0), &mut out).is_err());
        assert_eq!((ovr.weights(3), ovr.bias_weight(3)), (None, None));
        let one_class = OneVsRest::new_in(vec![T::ZERO; 100], vec![0; 10], 10, 2, 1, params);
        let error = Some(Error::InvalidParam { name: "classes" });
        assert_eq!(one_class.err(), error);
        assert!(OneVsRest::new_in(vec![T::ZERO; 10], vec![0; 10], 10, 2, 3, params).is_err());
    }

    /// Weighted one-vs-rest solves each class's problem with `C₊ = w_c·C` (its own KKT
    /// conditions within ε); unit weights give `train`'s weights exactly; bad weights are
    /// errors that leave the weights as they were.
    fn class_weights_weigh_each_class_against_the_rest<T: Real>() {
        let (x, labels) = clusters::<T>();
        let rows = DenseRows::new(&x, 2).unwrap();
        let epsilon = 1e-3;
        // A small C puts many α at their bound, where the weights act.
        let params = Params::new()
            .loss(Loss::Hinge)
            .c(T::from_f64(0.05))
            .bias(T::ONE)
            .epsilon(T::from_f64(epsilon))
            .check()
            .unwrap();
        let new = || {
            OneVsRest::new_in(vec![T::ZERO; OneVsRest::scalars_len(180, 2, 3)], vec![0; 180], 180, 2, 3, params)
                .unwrap()
        };
        let weights = [T::ONE, T::from_f64(5.0), T::from_f64(0.2)];
        let mut ovr = new();
        ovr.train_weighted(&rows, &labels, &weights, &mut Rng::seed_from_u64(22)).unwrap();
        // train_each with the weights solves the same problems, class by class.
        let mut each = new();
        each.train_each(&rows, &labels, (Some(&weights), None), &mut Rng::seed_from_u64(22), |_, _| {}).unwrap();
        for class in 0..3 {
            assert_eq!(each.weights(class), ovr.weights(class));
        }
        for (class, &w) in weights.iter().enumerate() {
            let sign = |i: usize| if labels[i] == class as i32 { 1.0 } else { -1.0 };
            let mut single = LinearSvm::new_in(
                vec![T::ZERO; LinearSvm::scalars_len(180, 2)],
                vec![0; 180],
                180,
                2,
                params.weighted(w, T::ONE).unwrap(),
            )
            .unwrap();
            let signs: Vec<i32> = (0..180).map(|i| sign(i) as i32).collect();
            single.train(&rows, &signs, &mut Rng::seed_from_u64(5)).unwrap();
            // Both solve the same problem to ε: their weights agree to the problem's accuracy.
            let ours = ovr.weights(class).unwrap();
            for (a, b) in ours.iter().zip(single.weights()) {
                assert!(
                    (a.to_f64() - b.to_f64()).abs() <= 0.05 * (1.0 + b.to_f64().abs()),
                    "class {class}: {a:?} vs {b:?}"
                );
            }
        }
        let (mut plain, mut unit) = (new(), new());
        plain.train(&rows, &labels, &mut Rng::seed_from_u64(3)).unwrap();
        unit.train_weighted(&rows, &labels, &[T::ONE; 3], &mut Rng::seed_from_u64(3)).unwrap();
        assert!((0..3).all(|c| plain.weights(c) == unit.weights(c) && plain.bias_weight(c) == unit.bias_weight(c)));
        // The weights matter: class 1's problem at w = 5 is not the unweighted one.
        let moved = ovr.weights(1).unwrap().iter().zip(plain.weights(1).unwrap());
        assert!(
            moved.map(|(a, b)| (a.to_f64() - b.to_f64()).abs() / (1.0 + b.to_f64().abs())).fold(0.0, f64::max) > 0.1
        );
        let before: Vec<T> = (0..3).flat_map(|c| unit.weights(c).unwrap().to_vec()).collect();
        let mut rng = Rng::seed_from_u64(4);
        assert_eq!(
            unit.train_weighted(&rows, &labels, &[T::ONE; 2], &mut rng).err(),
            Some(Error::DimensionMismatch { expected: 3, got: 2 })
        );
        let bad = Some(Error::InvalidParam { name: "class_weights" });
        for w in [T::ZERO, -T::ONE, T::from_f64(f64::NAN), T::from_f64(f64::INFINITY)] {
            assert_eq!(unit.train_weighted(&rows, &labels, &[T::ONE, w, T::ONE], &mut rng).err(), bad);
        }
        let after: Vec<T> = (0..3).flat_map(|c| unit.weights(c).unwrap().to_vec()).collect();
        assert_eq!(before, after);
    }

    macro_rules! gen_tests {
        ($($scalar:ident),*) => {$(
            mod $scalar {
                #[test]
                fn every_class_is_solved() {
                    super::every_class_is_solved::<$scalar>();
                }
                #[test]
                fn bad_input_leaves_model_unchanged() {
                    super::bad_input_leaves_model_unchanged::<$scalar>();
                }
                #[test]
                fn class_weights_weigh_each_class_against_the_rest() {
                    super::class_weights_weigh_each_class_against_the_rest::<$scalar>();
                }
            }
        )*};
    }

    gen_tests!(f32, f64);

    /// Row weights on top of class weights: integer weights solve the problems in which
    /// the rows appear that many times; a bad row weight is refused with the weights
    /// untouched.
    #[test]
    fn row_weights_count_as_copies_in_every_problem() {
        let (x, labels) = clusters::<f64>();
        let (n, weights) = (labels.len(), [1.0, 3.0, 0.5]);
        let counts: Vec<usize> = (0..n).map(|i| 1 + i % 2).collect();
        let (mut copies, mut repeated_labels) = (Vec::new(), Vec::new());
        for (i, &k) in counts.iter().enumerate() {
            for _ in 0..k {
                copies.extend_from_slice(&x[2 * i..2 * i + 2]);
                repeated_labels.push(labels[i]);
            }
        }
        let row_weights: Vec<f64> = counts.iter().map(|&k| k as f64).collect();
        let params = Params::new().loss(Loss::Hinge).c(0.05).bias(1.0).epsilon(1e-10).check().unwrap();
        let new = |rows: usize| {
            OneVsRest::new_in(vec![0.0; OneVsRest::scalars_len(rows, 2, 3)], vec![0; rows], rows, 2, 3, params).unwrap()
        };
        let mut weighted = new(n);
        let rows = DenseRows::new(&x, 2).unwrap();
        let mut rng = Rng::seed_from_u64(8);
        weighted.train_each(&rows, &labels, (Some(&weights), Some(&row_weights)), &mut rng, |_, _| {}).unwrap();
        let mut repeated = new(repeated_labels.len());
        let copied = DenseRows::new(&copies, 2).unwrap();
        repeated.train_weighted(&copied, &repeated_labels, &weights, &mut Rng::seed_from_u64(8)).unwrap();
        for class in 0..3 {
            let (a, b) = (weighted.weights(class).unwrap(), repeated.weights(class).unwrap());
            for (p, q) in
                a.iter().zip(b).chain([(&weighted.bias_weight(class).unwrap(), &repeated.bias_weight(class).unwrap())])
            {
                assert!((p - q).abs() <= 1e-6 * (1.0 + q.abs()), "class {class}: {p} vs {q}");
            }
        }
        let before: Vec<f64> = (0..3).flat_map(|c| weighted.weights(c).unwrap().to_vec()).collect();
        let mut bad = row_weights.clone();
        bad[3] = -1.0;
        let refused = weighted.train_each(&rows, &labels, (Some(&weights), Some(&bad)), &mut rng, |_, _| {});
        assert_eq!(refused.err(), Some(Error::InvalidParam { name: "row_weights" }));
        let after: Vec<f64> = (0..3).flat_map(|c| weighted.weights(c).unwrap().to_vec()).collect();
        assert_eq!(before, after);
    }
}
