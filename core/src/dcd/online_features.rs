//! New features for an [`OnlineSvm`]'s window: when the features are themselves learned —
//! the reduced-kernel learner's `z(x) = L⁻¹K(x, Ã)` after it renews a centre — the window's
//! rows change while its samples stay.
//!
//! [`OnlineSvm::replace_features`] takes every window sample's new row (oldest first) and,
//! for a learner with a memory, the memory re-expressed in the new features. It keeps
//! each sample's `αᵢ` and label — the dual point stays feasible, `0 ≤ αᵢ ≤ Uᵢ` does not
//! depend on the rows — and recomputes `Q̄ᵢᵢ = ‖x̂ᵢ‖² + B² + Dᵢᵢ` and
//! `w = m + Σ αᵢyᵢx̂ᵢ`, so the invariant of the module [`online`](super::online) holds for the
//! new rows, and `α` is the warm start of the problem they pose. The pass under way
//! restarts: the window is not converged until a pass over the new rows completes.
//!
//! [`OnlineOneVsRest::replace_features`] does the same for each class of a one-vs-rest
//! learner over one window: the rows once, each class's memory, `α` and labels kept.
//!
//! Cost: O(N·d) (O(k·N·d) for `k` classes), no memory.

#![allow(
    clippy::indexing_slicing,
    reason = "slots < N, rows of d and per-sample fields of N: the layout the constructors checked, as in the module online"
)]

use super::online::{Field, OnlineSvm};
use super::online_ovr::{Head, OnlineOneVsRest, OwnClass, split_mut, squared_norm_with_bias};
use super::rows::Row;
use super::solver::add_scaled;
use super::sweep::Sweep;
use crate::error::check_len;
use crate::real::check_finite;
use crate::storage::Storage;
use crate::{Error, Real};

impl<T: Real, S: Storage<T>> OnlineSvm<T, S> {
    /// Replaces the rows of the window's samples by `rows` (`len() × d`, row-major, oldest
    /// first) and the memory by `memory` (`d + 1` scalars, bias weight last; `None`
    /// exactly when the learner has none), keeping `α` and the labels (module doc).
    ///
    /// # Errors
    /// `DimensionMismatch` for `rows` of another length than `len() · d` or a memory of
    /// another length than `d + 1`; `InvalidParam { name: "memory" }` for a memory given
    /// to a learner without one or missing for one with; `NonFinite` for NaN/∞ in either
    /// or a row whose `‖x‖² + B²` overflows. The learner is unchanged on error.
    pub fn replace_features(&mut self, rows: &[T], memory: Option<&[T]>) -> Result<(), Error> {
        let (dim, len, window) = (self.dim, self.len, self.window);
        check_len(len * dim, rows.len())?;
        check_finite(rows)?;
        match (memory, self.decay) {
            (Some(m), Some(_)) => {
                check_len(dim + 1, m.len())?;
                check_finite(m)?;
            }
            (None, None) => {}
            _ => return Err(Error::InvalidParam { name: "memory" }),
        }
        let bias = self.params.bias();
        if rows.chunks_exact(dim.max(1)).any(|x| !(Row::Dense(x).squared_norm() + bias * bias).is_finite()) {
            return Err(Error::NonFinite);
        }
        for (k, x) in rows.chunks_exact(dim.max(1)).take(len).enumerate() {
            let (slot, params) = (self.slot(k), self.params);
            let (_, stored, fields) = self.parts_mut();
            stored[slot * dim..][..dim].copy_from_slice(x);
            let diagonal = params.coordinate(fields[Field::Label.at(window, slot)]).diagonal;
            fields[Field::QDiagonal.at(window, slot)] = Row::Dense(x).squared_norm() + bias * bias + diagonal;
        }
        if let (Some(m), Some(parts)) = (memory, self.remembering_parts_mut()) {
            parts.memory.copy_from_slice(m);
        }
        self.refresh_weights();
        self.sweep.restart();
        Ok(())
    }
}

impl<T: Real, S: Storage<T>, P: Storage<Sweep<T>>> OnlineOneVsRest<T, S, P> {
    /// Replaces the rows of the window's samples by `rows` (`len() × d`, row-major, oldest
    /// first) and each class's memory by `memories[c(d + 1)..][..d + 1]` (empty without
    /// memory), keeping the samples' classes and every `α` — what
    /// [`OnlineSvm::replace_features`] does to each class's window (its module doc), for
    /// the reduced-kernel learner's renewed features: `‖x̂ᵢ‖²` and each `w_c = m_c + Σ
    /// αᵢyᵢx̂ᵢ` recomputed (as `k` SVMs recompute theirs, bit for bit), every pass
    /// restarted. O(k·N·d).
    ///
    /// # Errors
    /// `DimensionMismatch` for `rows` of another length than `len() · d` or memories of
    /// another length than `k(d + 1)` (0 without memory); `NonFinite` for NaN/∞ in either or
    /// a row whose `‖x‖² + B² + Dᵢᵢ` overflows. The learner is unchanged on error.
    pub fn replace_features(&mut self, rows: &[T], memories: &[T]) -> Result<(), Error> {
        let (dim, len, window, oldest, bias) = (self.dim, self.len, self.window, self.oldest, self.params.bias());
        let per_class = if self.decay.is_some() { dim + 1 } else { 0 };
        crate::error::check_len(len * dim, rows.len())?;
        crate::error::check_len(self.classes() * per_class, memories.len())?;
        check_finite(rows)?;
        check_finite(memories)?;
        let diagonals = OwnClass::new(0, &self.params).diagonals;
        let overflows =
            |x: &[T]| diagonals.iter().any(|&d| !(squared_norm_with_bias(Row::Dense(x), bias) + d).is_finite());
        if rows.chunks_exact(dim.max(1)).take(len).any(overflows) {
            return Err(Error::NonFinite);
        }
        let head_len = self.head_len();
        let (stored, norms, classes, heads) = split_mut(self.scalars.as_mut(), window, dim);
        for (k, x) in rows.chunks_exact(dim.max(1)).take(len).enumerate() {
            let slot = (oldest + k) % window;
            stored[slot * dim..][..dim].copy_from_slice(x);
            norms[slot] = squared_norm_with_bias(Row::Dense(x), bias);
        }
        for (c, block) in heads.chunks_exact_mut(head_len).enumerate() {
            let Head { w, alpha, memory } = Head::of(block, window, dim);
            memory.copy_from_slice(&memories[c * per_class..][..per_class]);
            match per_class {
                0 => w.fill(T::ZERO),
                _ => w.copy_from_slice(memory),
            }
            let own = OwnClass::new(c, &self.params);
            for k in 0..len {
                let slot = (oldest + k) % window;
                let a = alpha[slot] * own.label(classes[slot]);
                add_scaled(&Row::Dense(&stored[slot * dim..][..dim]), a, w, bias);
            }
        }
        self.sweeps.as_mut().iter_mut().for_each(Sweep::restart);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use std::vec;
    use std::vec::Vec;

    use super::*;
    use crate::Rng;
    use crate::dcd::Loss;
    use crate::dcd::test_support::{Synthetic, blobs, ovr_learner as learner, ovr_params as params};
    use crate::dcd::{Params, Rows};

    type VecOnline<T> = OnlineSvm<T, Vec<T>>;

    fn remembering<T: Real>(window: usize, dim: usize) -> VecOnline<T> {
        let params = Params::new().bias(T::ONE).check().unwrap();
        let scalars = vec![T::ZERO; OnlineSvm::scalars_len_remembering(window, dim)];
        OnlineSvm::remembering_in(scalars, window, dim, params, 20, T::from_f64(0.99)).unwrap()
    }

    /// `Qx` for the rotation `Q` by `angle` in the plane of features 0 and 1.
    fn rotate<T: Real>(x: &[T], angle: f64) -> Vec<T> {
        let (s, c) = (T::from_f64(angle.sin()), T::from_f64(angle.cos()));
        let mut out = x.to_vec();
        out[0] = c * x[0] - s * x[1];
        out[1] = s * x[0] + c * x[1];
        out
    }

    /// A learner whose window and memory are rotated midway continues as one that saw the
    /// rotated stream from the start: a rotation changes no margin and no `‖x‖²`, so both
    /// solve the same problems from the same `α`.
    fn rotated_features_continue_as_a_rotated_stream<T: Real>() {
        let (n, window, dim, angle) = (300, 40, 5, 0.7);
        let data = Synthetic::<T>::new(41, n, dim, 1.0);
        let rows = data.dense_rows();
        let (mut plain, mut rotated) = (remembering::<T>(window, dim), remembering::<T>(window, dim));
        let (mut rng_plain, mut rng_rotated) = (Rng::seed_from_u64(3), Rng::seed_from_u64(3));
        let dense = |i: usize| data.dense[i * dim..][..dim].to_vec();
        for i in 0..n / 2 {
            plain.push(rows.row(i), data.labels[i], &mut rng_plain).unwrap();
            rotated.push(Row::Dense(&rotate(&dense(i), angle)), data.labels[i], &mut rng_rotated).unwrap();
        }
        let new_rows: Vec<T> = (0..plain.len()).flat_map(|k| rotate(plain.sample(k).unwrap().0, angle)).collect();
        let memory = plain.memory().unwrap();
        let mut new_memory = rotate(&memory[..dim], angle);
        new_memory.push(memory[dim]);
        plain.replace_features(&new_rows, Some(&new_memory)).unwrap();
        for i in n / 2..n {
            let x = rotate(&dense(i), angle);
            plain.push(Row::Dense(&x), data.labels[i], &mut rng_plain).unwrap();
            rotated.push(Row::Dense(&x), data.labels[i], &mut rng_rotated).unwrap();
        }
        let tolerance = 1e4 * T::EPSILON.to_f64();
        for i in 0..n {
            let x = rotate(&dense(i), angle);
            let (a, b) = (plain.decision(Row::Dense(&x)).unwrap(), rotated.decision(Row::Dense(&x)).unwrap());
            assert!((a - b).abs().to_f64() <= tolerance * (1.0 + b.abs().to_f64()), "{a} vs {b}");
        }
    }

    #[test]
    fn rotated_features_continue_as_a_rotated_stream_f64() {
        rotated_features_continue_as_a_rotated_stream::<f64>();
    }

    #[test]
    fn rotated_features_continue_as_a_rotated_stream_f32() {
        rotated_features_continue_as_a_rotated_stream::<f32>();
    }

    #[test]
    fn rejected_features_change_nothing() {
        let (window, dim) = (8, 3);
        let data = Synthetic::<f64>::new(7, 20, dim, 1.0);
        let mut svm = remembering::<f64>(window, dim);
        let mut rng = Rng::seed_from_u64(1);
        for i in 0..20 {
            svm.push(data.dense_rows().row(i), data.labels[i], &mut rng).unwrap();
        }
        let (before, state) = (svm.storage().to_vec(), svm.state());
        let rows = vec![0.5; window * dim];
        let memory = vec![0.1; dim + 1];
        let mut nan = rows.clone();
        nan[5] = f64::NAN;
        let mut huge = rows.clone();
        huge[0] = 1e200;
        for (rows, memory, error) in [
            (&rows[1..], Some(&memory[..]), Error::DimensionMismatch { expected: window * dim, got: window * dim - 1 }),
            (&rows[..], Some(&memory[1..]), Error::DimensionMismatch { expected: dim + 1, got: dim }),
            (&rows[..], None, Error::InvalidParam { name: "memory" }),
            (&nan[..], Some(&memory[..]), Error::NonFinite),
            (&huge[..], Some(&memory[..]), Error::NonFinite),
        ] {
            assert_eq!(svm.replace_features(rows, memory), Err(error));
            assert_eq!((svm.storage(), svm.state()), (&before[..], state));
        }
        // Accepted: the rows and Q̄ are the new ones, w = m + Σ αyx̂.
        svm.replace_features(&rows, Some(&memory)).unwrap();
        assert!((0..window).all(|k| svm.sample(k).unwrap().0 == &rows[..dim]));
        let share: f64 = (0..window).map(|k| svm.sample(k).map(|(_, a, y)| a * f64::from(y)).unwrap()).sum();
        for (j, &wj) in svm.weights().iter().enumerate() {
            assert!((wj - (0.1 + 0.5 * share)).abs() < 1e-12, "{j}: {wj}");
        }
        assert!(!svm.converged());
        let mut forgetful = OnlineSvm::new_in(vec![0.0; OnlineSvm::scalars_len(4, 1)], 4, 1, *svm.params(), 3).unwrap();
        assert_eq!(forgetful.replace_features(&[], Some(&[0.0, 0.0])), Err(Error::InvalidParam { name: "memory" }));
        assert_eq!(forgetful.replace_features(&[], None), Ok(()));
    }

    /// New features for the window: the classes' weights are those `k` SVMs given the same
    /// rows and memories recompute, bit for bit, and every α and class is kept.
    fn replaced_features_are_those_of_one_svm_per_class<T: Real>() {
        let (window, dim, classes) = (12, 3, 3);
        let (rows, labels) = blobs::<T>(40, dim, classes, 13, 1.5);
        let mut ovr = learner::<T>(window, dim, classes, Loss::SquaredHinge, Some(0.9));
        let mut svms: Vec<OnlineSvm<T, Vec<T>>> = (0..classes)
            .map(|_| {
                let scalars = vec![T::ZERO; OnlineSvm::scalars_len_remembering(window, dim)];
                OnlineSvm::remembering_in(scalars, window, dim, params(Loss::SquaredHinge), 6, T::from_f64(0.9))
                    .unwrap()
            })
            .collect();
        let (mut rng, mut rng_svms) = (Rng::seed_from_u64(1), Rng::seed_from_u64(1));
        for (x, &class) in rows.iter().zip(&labels) {
            ovr.push(Row::Dense(x), class, &mut rng).unwrap();
            for (c, svm) in svms.iter_mut().enumerate() {
                svm.push(Row::Dense(x), if c == class { 1 } else { -1 }, &mut rng_svms).unwrap();
            }
        }
        let new_rows: Vec<T> =
            (0..ovr.len()).flat_map(|k| ovr.sample(0, k).unwrap().0.iter().map(|&v| v * T::from_f64(1.5))).collect();
        let memories: Vec<T> = (0..classes * (dim + 1)).map(|j| T::from_f64(0.01 * j as f64)).collect();
        ovr.replace_features(&new_rows, &memories).unwrap();
        for (c, svm) in svms.iter_mut().enumerate() {
            svm.replace_features(&new_rows, Some(&memories[c * (dim + 1)..][..dim + 1])).unwrap();
            let (w, b) = ovr.weights(c).unwrap();
            assert!(w == svm.weights() && b.to_f64().to_bits() == svm.bias_weight().to_f64().to_bits(), "class {c}");
            assert_eq!(ovr.memory(c), svm.memory());
            for k in 0..svm.len() {
                assert_eq!(ovr.sample(c, k), svm.sample(k), "class {c}, sample {k}");
            }
        }
        assert!(!ovr.converged());
        let before = ovr.storage().to_vec();
        assert_eq!(
            ovr.replace_features(&new_rows[1..], &memories),
            Err(Error::DimensionMismatch { expected: new_rows.len(), got: new_rows.len() - 1 })
        );
        assert!(ovr.replace_features(&new_rows, &memories[1..]).is_err());
        let mut bad = new_rows.clone();
        bad[4] = T::from_f64(f64::NAN);
        assert_eq!(ovr.replace_features(&bad, &memories), Err(Error::NonFinite));
        assert_eq!(ovr.storage(), &before[..]);
    }

    #[test]
    fn replaced_features_are_those_of_one_svm_per_class_f64() {
        replaced_features_are_those_of_one_svm_per_class::<f64>();
    }

    #[test]
    fn replaced_features_are_those_of_one_svm_per_class_f32() {
        replaced_features_are_those_of_one_svm_per_class::<f32>();
    }
}
