//! Growing an [`OnlineOneVsRest`] by classes: from the binary windowed SVM a stream learns
//! while it has met two classes ([`OnlineOneVsRest::from_binary_in`]), and by a class more
//! ([`OnlineOneVsRest::grown_in`]), each in new storage. The window and the classes it had
//! are kept as they are; class 1 of a binary SVM starts as its mirror when the labels'
//! boxes agree, and every other new class from `α = 0`, which
//! [`OnlineOneVsRest::settle`] converges on the window.
//!
//! Cost: O(N·d + k·(N + d)) to copy, no memory besides the storage handed in.

#![allow(
    clippy::indexing_slicing,
    reason = "slots < N, rows of d, each class's block of OnlineOneVsRest::head_len: the layout the constructors checked, as in the module online_ovr"
)]

use super::online::OnlineSvm;
use super::online_ovr::{Head, OnlineOneVsRest, class_value, split_mut};
use super::sweep::Sweep;
use crate::storage::Storage;
use crate::{Error, Real};

impl<T: Real, S: Storage<T>, P: Storage<Sweep<T>>> OnlineOneVsRest<T, S, P> {
    /// The learner of as many classes as `sweeps` holds (at least 3) that `svm` grows into
    /// when a third class appears — a binary windowed SVM whose `+1` is class 0 and `−1`
    /// class 1, of the same shape (`scalars` sized by [`OnlineOneVsRest::scalars_len`]):
    /// its window (each sample's class from its label, its `‖x̂ᵢ‖²` computed again from its
    /// row as an arrival computes it), and class 0 its `w`, `α`, memory and pass. When both
    /// labels have the same box and `Dᵢᵢ` (no class weights), class 1's problem is class
    /// 0's with the labels negated, and class 1 starts as its mirror: `−w`, the same `α`,
    /// `−m` and the same pass (the same projected gradients). Every other class starts
    /// from `α = 0`, `w = m = 0` and no pass ([`settle`](Self::settle)).
    ///
    /// # Errors
    /// As [`new_in`](Self::new_in), `InvalidParam { name: "classes" }` for fewer than 3.
    pub fn from_binary_in<S2: Storage<T>>(svm: &OnlineSvm<T, S2>, scalars: S, sweeps: P) -> Result<Self, Error> {
        if sweeps.as_ref().len() < 3 {
            return Err(Error::InvalidParam { name: "classes" });
        }
        let (window, dim, params) = (svm.window(), svm.weights().len(), *svm.params());
        let mut grown = Self::new_in(scalars, sweeps, window, dim, params, svm.max_steps_per_arrival, svm.decay())?;
        grown.take_window_of(svm);
        grown.take_class_of(0, svm)?;
        let block_len = grown.head_len();
        let (_, _, classes, heads) = split_mut(grown.scalars.as_mut(), window, dim);
        for (slot, (.., label)) in (0..svm.len()).filter_map(|k| Some((svm.slot(k), svm.sample(k)?))) {
            classes[slot] = class_value(usize::from(label < 0));
        }
        let [positive, negative] = [T::ONE, -T::ONE].map(|y| params.coordinate(y));
        if positive.upper == negative.upper && positive.diagonal == negative.diagonal {
            let (first, rest) = heads.split_at_mut(block_len);
            let (zero, one) = (Head::of(first, window, dim), Head::of(&mut rest[..block_len], window, dim));
            for (mirror, &value) in
                one.w.iter_mut().zip(zero.w.iter()).chain(one.memory.iter_mut().zip(zero.memory.iter()))
            {
                *mirror = -value;
            }
            one.alpha.copy_from_slice(zero.alpha);
            grown.sweeps.as_mut()[1] = svm.sweep;
        }
        grown.sweeps.as_mut()[0] = svm.sweep;
        (grown.oldest, grown.len) = (svm.state().oldest(), svm.len());
        Ok(grown)
    }

    /// The learner of as many classes as `sweeps` holds that `from`, of fewer classes and
    /// the same shape, grows into when a class appears: its window and its classes' blocks
    /// and passes as they are; each class more starts from `α = 0`, `w = m = 0` and no pass
    /// ([`settle`](Self::settle)).
    ///
    /// # Errors
    /// As [`new_in`](Self::new_in), `InvalidParam { name: "classes" }` for no more classes
    /// than `from` has.
    pub fn grown_in<S2: Storage<T>, P2: Storage<Sweep<T>>>(
        from: &OnlineOneVsRest<T, S2, P2>,
        scalars: S,
        sweeps: P,
    ) -> Result<Self, Error> {
        if sweeps.as_ref().len() <= from.classes() {
            return Err(Error::InvalidParam { name: "classes" });
        }
        let (window, dim, steps) = (from.window, from.dim, from.max_steps_per_arrival);
        let mut grown = Self::new_in(scalars, sweeps, window, dim, from.params, steps, from.decay)?;
        let kept = from.storage();
        grown.scalars.as_mut()[..kept.len()].copy_from_slice(kept);
        grown.sweeps.as_mut()[..from.classes()].copy_from_slice(from.sweeps());
        (grown.oldest, grown.len) = (from.oldest, from.len);
        Ok(grown)
    }
}

#[cfg(test)]
mod tests {
    use std::vec;

    use super::*;
    use crate::Rng;
    use crate::dcd::Row;
    use crate::dcd::test_support::blobs;
    use crate::dcd::{Loss, Params};

    /// A binary SVM grown into three classes keeps its window and becomes class 0; without
    /// class weights class 1 starts as its mirror (the same problem with the labels
    /// negated), with them from nothing, and settled it is the mirror of the window's
    /// optimum; a fourth class grown in keeps the three as they were.
    fn grows_from_a_binary_svm_and_by_a_class<T: Real>() {
        let (window, dim) = (20, 2);
        let params = Params::new().loss(Loss::Hinge).bias(T::ONE).epsilon(T::from_f64(1e-4)).check().unwrap();
        let mut svm =
            OnlineSvm::new_in(vec![T::ZERO; OnlineSvm::scalars_len(window, dim)], window, dim, params, 50).unwrap();
        let (rows, labels) = blobs::<T>(50, dim, 2, 17, 1.5);
        let mut rng = Rng::seed_from_u64(6);
        for (x, &class) in rows.iter().zip(&labels) {
            svm.push(Row::Dense(x), if class == 0 { 1 } else { -1 }, &mut rng).unwrap();
        }
        let scalars = vec![T::ZERO; OnlineOneVsRest::scalars_len(window, dim, 3, false)];
        let mut three = OnlineOneVsRest::from_binary_in(&svm, scalars, vec![Sweep::new(); 3]).unwrap();
        assert_eq!((three.len(), three.weights(0).unwrap().0), (svm.len(), svm.weights()));
        assert_eq!(three.sweeps()[0], svm.sweep);
        let (w0, b0) = three.weights(0).unwrap();
        let (w1, b1) = three.weights(1).unwrap();
        assert!(w0.iter().zip(w1).all(|(a, b)| *a == -*b) && b0 == -b1, "the mirror");
        assert_eq!(three.sweeps()[1], svm.sweep);
        for k in 0..svm.len() {
            assert_eq!(three.sample(0, k), svm.sample(k));
            let (x, a, label) = svm.sample(k).unwrap();
            assert_eq!(three.sample(1, k), Some((x, a, -label)));
            assert_eq!(three.sample(2, k), Some((x, T::ZERO, -1)));
        }
        // With class weights class 1 starts from nothing; settled to ε = 10⁻⁴ with class 0,
        // each is the window's optimum, whose w is unique: the mirror again.
        let weighted = Params::new().loss(Loss::Hinge).bias(T::ONE).epsilon(T::from_f64(1e-4));
        let weighted = weighted.class_weights(T::ONE, T::from_f64(0.999_999)).check().unwrap();
        let mut other =
            OnlineSvm::new_in(vec![T::ZERO; OnlineSvm::scalars_len(window, dim)], window, dim, weighted, 50).unwrap();
        for (x, &class) in rows.iter().zip(&labels) {
            other.push(Row::Dense(x), if class == 0 { 1 } else { -1 }, &mut rng).unwrap();
        }
        let scalars = vec![T::ZERO; OnlineOneVsRest::scalars_len(window, dim, 3, false)];
        let mut from_nothing = OnlineOneVsRest::from_binary_in(&other, scalars, vec![Sweep::new(); 3]).unwrap();
        assert_eq!(from_nothing.weights(1).unwrap().0, &[T::ZERO; 2][..]);
        from_nothing.settle(0, 100_000, &mut rng);
        assert!(from_nothing.settle(1, 100_000, &mut rng) > 0);
        assert!(from_nothing.sweeps()[..2].iter().all(|sweep| sweep.converged(weighted.epsilon())));
        let (w0, b0) = from_nothing.weights(0).unwrap();
        let (w1, b1) = from_nothing.weights(1).unwrap();
        let gap = w0.iter().zip(w1).map(|(a, b)| (*a + *b).abs().to_f64()).fold((b0 + b1).abs().to_f64(), f64::max);
        assert!(gap < 1e-2 * (1.0 + norm(w0)), "class 1 settles to class 0's mirror: {gap}");
        let taken = three.settle(2, 1000, &mut rng);
        assert!(taken > 0 && taken <= 1000, "{taken}");
        assert_eq!(three.settle(3, 1000, &mut rng), 0, "no class 3");
        let scalars = vec![T::ZERO; OnlineOneVsRest::scalars_len(window, dim, 4, false)];
        let four = OnlineOneVsRest::grown_in(&three, scalars, vec![Sweep::new(); 4]).unwrap();
        assert_eq!((four.check_restorable(), &four.sweeps()[..3]), (Ok(()), three.sweeps()));
        assert_eq!(&four.storage()[..three.storage().len()], three.storage());
        assert_eq!(four.weights(3).unwrap().0, &[T::ZERO; 2][..]);
        assert_eq!(four.support_vectors(), three.support_vectors());
        let shrunk = vec![T::ZERO; OnlineOneVsRest::scalars_len(window, dim, 3, false)];
        assert!(OnlineOneVsRest::grown_in(&three, shrunk, vec![Sweep::new(); 3]).is_err());
        let too_few = vec![T::ZERO; OnlineOneVsRest::scalars_len(window, dim, 2, false)];
        assert!(OnlineOneVsRest::from_binary_in(&svm, too_few, vec![Sweep::new(); 2]).is_err());
    }

    fn norm<T: Real>(v: &[T]) -> f64 {
        v.iter().map(|x| x.to_f64() * x.to_f64()).sum::<f64>().sqrt()
    }

    macro_rules! gen_tests {
        ($($name:ident),* $(,)?) => {
            $(
                mod $name {
                    #[test]
                    fn f64() {
                        super::$name::<f64>();
                    }
                    #[test]
                    fn f32() {
                        super::$name::<f32>();
                    }
                }
            )*
        };
    }

    gen_tests!(grows_from_a_binary_svm_and_by_a_class,);
}
