//! Saving and restoring an [`OnlineOneVsRest`]: a checkpoint of a stream, in its own layout
//! or in that of one windowed SVM a class.
//!
//! Everything the learner knows is in its storage (the window's rows, squared norms and
//! classes, each class's `w`, `α` and memory), its classes' [`Sweep`]s, and a few counters
//! gathered in [`OnlineOneVsRestState`], a `Copy` value serde can write;
//! [`OnlineOneVsRest::from_state_in`] rebuilds the learner after checking that they agree,
//! and it continues bit for bit. [`OnlineOneVsRest::window_of_class`] writes a class's
//! window as the [`OnlineSvm`] a learner of one window a class holds, and
//! [`OnlineOneVsRest::from_windows_in`] takes `k` such SVMs back, so a saved form of that
//! layout serves both.
//!
//! Cost: O(k·N + N·d) to check a state or convert it, no memory besides the storage
//! handed in.

#![allow(
    clippy::indexing_slicing,
    reason = "slots < N, rows of d, each class's block of OnlineOneVsRest::head_len: the layout the constructors checked, as in the module online_ovr"
)]

use serde::{Deserialize, Serialize};

use super::online::{OnlineSvm, check_decay, held, held_slots};
use super::online_ovr::{OnlineOneVsRest, OwnClass, class_value, split_mut};
use super::online_state::OnlineSvmState;
use super::params::ValidParams;
use super::sweep::Sweep;
use crate::real::check_finite;
use crate::storage::{Storage, check_capacity};
use crate::{Error, Real};

/// The counters of an [`OnlineOneVsRest`] besides its storage and its sweeps: window size,
/// dimension, classes, cap on the steps per arrival, where the oldest sample is, how many
/// the window holds, and the memory's decay `ρ` (`None` without memory).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct OnlineOneVsRestState<T> {
    window: usize,
    dim: usize,
    classes: usize,
    max_steps_per_arrival: usize,
    oldest: usize,
    len: usize,
    decay: Option<T>,
}

impl<T> OnlineOneVsRestState<T> {
    /// The window size `N`.
    pub fn window(&self) -> usize {
        self.window
    }

    /// Features per sample.
    pub fn dim(&self) -> usize {
        self.dim
    }

    /// The classes `k`.
    pub fn classes(&self) -> usize {
        self.classes
    }

    /// Samples in the window.
    pub fn samples(&self) -> usize {
        self.len
    }

    /// The slot of the oldest sample in the window.
    pub fn oldest(&self) -> usize {
        self.oldest
    }

    /// The cap on each class's coordinate steps after an arrival.
    pub fn max_steps_per_arrival(&self) -> usize {
        self.max_steps_per_arrival
    }

    /// The memory's decay `ρ`, or `None` without memory.
    pub fn decay(&self) -> Option<T>
    where
        T: Copy,
    {
        self.decay
    }

    /// The state of a learner of `classes` classes whose window is the one `state`
    /// describes — its size, dimension, cap on steps, decay, oldest slot and samples — as
    /// when `classes` [`OnlineSvm`]s that learned the same samples together are held as one
    /// [`OnlineOneVsRest`] (their rows once, each sample's class the one that labelled it
    /// +1, each class's `w`, `α`, memory and [`Sweep`] its SVM's).
    ///
    /// [`OnlineSvm`]: super::OnlineSvm
    pub fn of_window(state: &OnlineSvmState<T>, classes: usize) -> Self
    where
        T: Copy,
    {
        let (window, dim, max_steps_per_arrival) = (state.window(), state.dim(), state.max_steps_per_arrival());
        let (oldest, len, decay) = (state.oldest(), state.samples(), state.decay());
        OnlineOneVsRestState { window, dim, classes, max_steps_per_arrival, oldest, len, decay }
    }

    /// Scalars the storage of the learner holds ([`OnlineOneVsRest::scalars_len`]).
    pub fn scalars_len(&self) -> usize {
        OnlineOneVsRest::scalars_len(self.window, self.dim, self.classes, self.decay.is_some())
    }
}

impl<T: Real, S: Storage<T>, P: Storage<Sweep<T>>> OnlineOneVsRest<T, S, P> {
    /// Class `c`'s windowed SVM in the form of an [`OnlineSvm`]'s saved state, its storage
    /// written to `scalars` (the state's [`OnlineSvmState::scalars_len`] of them): the
    /// window's samples in the same slots, labelled `+1` in class `c` and `−1` otherwise,
    /// with `Q̄ᵢᵢ = ‖x̂ᵢ‖² + Dᵢᵢ`, and the class's `w`, `α`, memory and pass — what `k`
    /// [`OnlineSvm`]s pushed the same samples hold for class `c`, bit for bit;
    /// [`OnlineSvm::from_state_in`] makes it the SVM, and
    /// [`from_windows_in`](Self::from_windows_in) takes the `k` back. For a saved form in
    /// the layout of `k` windows. O(N·d).
    ///
    /// # Errors
    /// `InvalidLabel { row: 0 }` for `c ≥ k`; `CapacityExceeded` for `scalars` shorter than
    /// the state's storage.
    pub fn window_of_class(&self, c: usize, scalars: &mut [T]) -> Result<OnlineSvmState<T>, Error> {
        let start = self.head_start(c).ok_or(Error::InvalidLabel { row: 0 })?;
        let (window, dim, own) = (self.window, self.dim, OwnClass::new(c, &self.params));
        check_capacity(OnlineSvm::scalars_len_for(window, dim, self.decay.is_some()), scalars.len())?;
        let (rows, norms, classes, heads) = self.parts();
        let block = &heads[start - window * (dim + 2)..][..self.head_len()];
        let (w, rest) = block.split_at(dim + 1);
        let (alpha, memory) = rest.split_at(window);
        let (out_w, out) = scalars.split_at_mut(dim + 1);
        let (out_rows, out) = out.split_at_mut(window * dim);
        let (out_alpha, out) = out.split_at_mut(window);
        let (out_q, out) = out.split_at_mut(window);
        let (out_labels, out_memory) = out.split_at_mut(window);
        out_w.copy_from_slice(w);
        // The slots the window does not hold are zeros, as in a fresh SVM's storage: the
        // saved form depends on the samples alone.
        for out in [&mut *out_rows, &mut *out_alpha, &mut *out_q, &mut *out_labels] {
            out.fill(T::ZERO);
        }
        let (from_oldest, wrapped) = held_slots(self.oldest, self.len, window);
        for slot in from_oldest.chain(wrapped) {
            out_rows[slot * dim..][..dim].copy_from_slice(&rows[slot * dim..][..dim]);
            out_alpha[slot] = alpha[slot];
            (out_labels[slot], out_q[slot]) = own.label_and_q(classes[slot], norms[slot]);
        }
        out_memory[..memory.len()].copy_from_slice(memory);
        Ok(OnlineSvmState::of_class(self.state(), self.sweeps.as_ref()[c]))
    }

    /// The learner `svms` — `k ≥ 2` windowed SVMs of one shape that learned the same
    /// samples, SVM `c` labelling class `c`'s `+1` and the others' `−1` — hold, in `scalars`
    /// and `sweeps` (`k` of them): the window's rows in the first SVM's slots, each
    /// sample's class the SVM that labelled it `+1`, and each class's `w`, memory and pass,
    /// its `α` moved to the first SVM's slot of the same sample when its own slots differ
    /// (an SVM added after the others, fed their window). What
    /// [`window_of_class`](Self::window_of_class) gives, taken back; and the saved
    /// one-vs-rest windows of a learner that held one window a class.
    ///
    /// # Errors
    /// `InvalidParam` naming `classes` (fewer than 2 SVMs, or not as many as `sweeps`),
    /// `window` or `len` (SVMs of other shapes or sample counts), `labels` (a sample no SVM
    /// or two SVMs label `+1`); as [`new_in`](Self::new_in) and
    /// [`from_state_in`](Self::from_state_in).
    pub fn from_windows_in<S2: Storage<T>>(svms: &[OnlineSvm<T, S2>], scalars: S, sweeps: P) -> Result<Self, Error> {
        let [first, ..] = svms else { return Err(Error::InvalidParam { name: "classes" }) };
        if svms.len() != sweeps.as_ref().len() {
            return Err(Error::InvalidParam { name: "classes" });
        }
        let shape = |svm: &OnlineSvm<T, S2>| (svm.window, svm.dim, svm.max_steps_per_arrival, svm.decay);
        if svms.iter().any(|svm| shape(svm) != shape(first) || svm.params() != first.params()) {
            return Err(Error::InvalidParam { name: "window" });
        }
        if svms.iter().any(|svm| svm.len() != first.len()) {
            return Err(Error::InvalidParam { name: "len" });
        }
        let (window, dim, steps, decay) = shape(first);
        let mut learner = Self::new_in(scalars, sweeps, window, dim, *first.params(), steps, decay)?;
        learner.take_window_of(first);
        for (c, svm) in svms.iter().enumerate() {
            learner.take_class_of(c, svm)?;
        }
        let (oldest, len) = (learner.oldest, learner.len);
        let (_, _, classes, _) = split_mut(learner.scalars.as_mut(), window, dim);
        // Held slots start unclaimed (−1: no class); the others stay 0, as in a fresh learner.
        let (from_oldest, wrapped) = held_slots(oldest, len, window);
        from_oldest.chain(wrapped).for_each(|slot| classes[slot] = -T::ONE);
        for (c, svm) in svms.iter().enumerate() {
            for (k, (.., label)) in (0..len).filter_map(|k| Some((k, svm.sample(k)?))) {
                let slot = (oldest + k) % window;
                if label > 0 {
                    if classes[slot] >= T::ZERO {
                        return Err(Error::InvalidParam { name: "labels" });
                    }
                    classes[slot] = class_value(c);
                }
            }
        }
        learner.check_restorable()?;
        Ok(learner)
    }

    /// The counters to save beside [`storage`](Self::storage) and [`sweeps`](Self::sweeps).
    pub fn state(&self) -> OnlineOneVsRestState<T> {
        let (window, dim, classes, max_steps_per_arrival) =
            (self.window, self.dim, self.classes(), self.max_steps_per_arrival);
        let (oldest, len, decay) = (self.oldest, self.len, self.decay);
        OnlineOneVsRestState { window, dim, classes, max_steps_per_arrival, oldest, len, decay }
    }

    /// The scalars in use, [`OnlineOneVsRestState::scalars_len`] of them.
    pub fn storage(&self) -> &[T] {
        &self.scalars.as_ref()[..self.state().scalars_len()]
    }

    /// Each class's pass under way.
    pub fn sweeps(&self) -> &[Sweep<T>] {
        self.sweeps.as_ref()
    }

    /// The learner [`state`](Self::state), [`storage`](Self::storage) and
    /// [`sweeps`](Self::sweeps) describe, working in `scalars` and `sweeps` (which hold the
    /// saved ones), with `params` (the saved learner's: configuration, not state). It
    /// continues bit for bit as the saved one would have.
    ///
    /// # Errors
    /// `InvalidParam` naming `window`, `classes` (`sweeps` not the state's classes, or
    /// fewer than 2), `max_steps_per_arrival`, `decay`, `oldest` or `len` (outside the
    /// window), `sweep` (a pass over more slots than the window has), `labels` (a stored
    /// class that is not one of the `k`) or `alpha` (outside its box);
    /// `CapacityExceeded` when `scalars` is shorter than
    /// [`OnlineOneVsRestState::scalars_len`]; `NonFinite` for NaN/∞ in a stored value.
    pub fn from_state_in(
        scalars: S,
        sweeps: P,
        params: ValidParams<T>,
        state: OnlineOneVsRestState<T>,
    ) -> Result<Self, Error> {
        let OnlineOneVsRestState { window, dim, classes, max_steps_per_arrival, oldest, len, decay } = state;
        Self::check_shape(window, classes, max_steps_per_arrival)?;
        if sweeps.as_ref().len() != classes {
            return Err(Error::InvalidParam { name: "classes" });
        }
        if !sweeps.as_ref().iter().all(|sweep| sweep.is_valid(window)) {
            return Err(Error::InvalidParam { name: "sweep" });
        }
        let decay = decay.map(check_decay).transpose()?;
        check_capacity(state.scalars_len(), scalars.as_ref().len())?;
        // A window that is not full has never evicted: its oldest sample is in slot 0.
        if oldest >= window || (len < window && oldest != 0) {
            return Err(Error::InvalidParam { name: "oldest" });
        }
        if len > window {
            return Err(Error::InvalidParam { name: "len" });
        }
        let learner =
            OnlineOneVsRest { scalars, sweeps, window, dim, params, max_steps_per_arrival, oldest, len, decay };
        learner.check_restorable()?;
        Ok(learner)
    }

    /// `Ok` when [`from_state_in`](Self::from_state_in) takes this learner's own state back:
    /// its stored values finite and in their boxes, which a learner fed values near `T`'s
    /// range may no longer have. O(k·N + N·d).
    ///
    /// # Errors
    /// As [`from_state_in`](Self::from_state_in) for the stored values.
    pub fn check_restorable(&self) -> Result<(), Error> {
        let (window, dim, oldest, len) = (self.window, self.dim, self.oldest, self.len);
        let (rows, norms, classes, heads) = self.parts();
        check_finite(heads)?;
        let known = |&class: &T| (0..self.classes()).any(|c| class == class_value(c));
        if !held(classes, oldest, len).all(known) {
            return Err(Error::InvalidParam { name: "labels" });
        }
        for k in 0..len {
            let slot = (oldest + k) % window;
            check_finite(&rows[slot * dim..][..dim])?;
            check_finite(&norms[slot..=slot])?;
        }
        for (c, head) in heads.chunks_exact(self.head_len()).enumerate() {
            let alpha = &head[dim + 1..][..window];
            let own = OwnClass::new(c, &self.params);
            let in_box = |(&a, &class): (&T, &T)| a >= T::ZERO && a <= self.params.coordinate(own.label(class)).upper;
            if !held(alpha, oldest, len).zip(held(classes, oldest, len)).all(in_box) {
                return Err(Error::InvalidParam { name: "alpha" });
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use std::vec;
    use std::vec::Vec;

    use super::*;
    use crate::Rng;
    use crate::dcd::Row;
    use crate::dcd::test_support::{blobs, ovr_learner as learner, ovr_params as params};
    use crate::dcd::{Loss, OnlineSvm};

    /// SVMs whose slots differ — one built after the others and fed their window, oldest
    /// first — are one learner whose classes see each sample as their SVMs do; a sample two
    /// SVMs claim, or none, is refused.
    fn windows_in_other_slots_are_one_learner<T: Real>() {
        let (window, dim) = (8, 2);
        let (rows, labels) = blobs::<T>(21, dim, 3, 23, 1.5);
        let new = || {
            OnlineSvm::new_in(vec![T::ZERO; OnlineSvm::scalars_len(window, dim)], window, dim, params(Loss::Hinge), 4)
                .unwrap()
        };
        let mut svms = vec![new(), new()];
        let mut rng = Rng::seed_from_u64(8);
        for (x, &class) in rows.iter().zip(&labels) {
            for (c, svm) in svms.iter_mut().enumerate() {
                svm.push(Row::Dense(x), if c == class { 1 } else { -1 }, &mut rng).unwrap();
            }
        }
        let mut late = new();
        for k in 0..window {
            let (x, ..) = svms[0].sample(k).unwrap();
            let class = labels[rows.len() - window + k];
            late.push(Row::Dense(x), if class == 2 { 1 } else { -1 }, &mut rng).unwrap();
        }
        assert_ne!(late.state().oldest(), svms[0].state().oldest(), "the slots differ");
        svms.push(late);
        let (scalars, sweeps) =
            (vec![T::ZERO; OnlineOneVsRest::scalars_len(window, dim, 3, false)], vec![Sweep::new(); 3]);
        let learner = OnlineOneVsRest::from_windows_in(&svms, scalars, sweeps).unwrap();
        for (c, svm) in svms.iter().enumerate() {
            assert_eq!(learner.weights(c).unwrap().0, svm.weights());
            for k in 0..window {
                assert_eq!(learner.sample(c, k), svm.sample(k), "class {c}, sample {k}");
            }
        }
        let claimed = |svms: &[OnlineSvm<T, Vec<T>>]| {
            let (scalars, sweeps) =
                (vec![T::ZERO; OnlineOneVsRest::scalars_len(window, dim, 3, false)], vec![Sweep::new(); 3]);
            OnlineOneVsRest::from_windows_in(svms, scalars, sweeps).map(|_| ())
        };
        assert_eq!(
            claimed(&[svms[0].clone(), svms[0].clone(), svms[2].clone()]),
            Err(Error::InvalidParam { name: "labels" })
        );
        assert_eq!(claimed(&svms[..2]), Err(Error::InvalidParam { name: "classes" }));
    }

    /// A saved state resumes bit for bit; damaged ones are refused.
    fn resumes_and_refuses_damage<T: Real>() {
        let (rows, labels) = blobs::<T>(90, 3, 3, 8, 1.5);
        let mut ovr = learner::<T>(10, 3, 3, Loss::SquaredHinge, Some(0.9));
        let mut rng = Rng::seed_from_u64(4);
        for (x, &class) in rows.iter().zip(&labels).take(45) {
            ovr.push(Row::Dense(x), class, &mut rng).unwrap();
        }
        let (state, storage, sweeps) = (ovr.state(), ovr.storage().to_vec(), ovr.sweeps().to_vec());
        let mut copy = OnlineOneVsRest::from_state_in(storage.clone(), sweeps.clone(), *ovr.params(), state).unwrap();
        let mut copy_rng = Rng::from_state(rng.state()).unwrap();
        for (x, &class) in rows.iter().zip(&labels).skip(45) {
            ovr.push(Row::Dense(x), class, &mut rng).unwrap();
            copy.push(Row::Dense(x), class, &mut copy_rng).unwrap();
            assert_eq!(ovr.storage(), copy.storage());
        }
        let restore = |storage: Vec<T>, sweeps: Vec<Sweep<T>>| {
            OnlineOneVsRest::from_state_in(storage, sweeps, *ovr.params(), state).map(|_| ())
        };
        assert_eq!(restore(storage.clone(), sweeps[..2].to_vec()), Err(Error::InvalidParam { name: "classes" }));
        assert!(matches!(
            restore(storage[..storage.len() - 1].to_vec(), sweeps.clone()),
            Err(Error::CapacityExceeded { .. })
        ));
        let (window, dim) = (10, 3);
        let mut bad = storage.clone();
        bad[window * dim + window] = T::from_f64(3.0); // the first slot's class: not one of the 3
        assert_eq!(restore(bad, sweeps.clone()), Err(Error::InvalidParam { name: "labels" }));
        let mut bad = storage.clone();
        bad[window * (dim + 2) + dim + 1] = -T::ONE; // class 0's first α
        assert_eq!(restore(bad, sweeps.clone()), Err(Error::InvalidParam { name: "alpha" }));
        let mut bad = storage.clone();
        bad[0] = T::from_f64(f64::INFINITY);
        assert_eq!(restore(bad, sweeps), Err(Error::NonFinite));
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

    gen_tests!(resumes_and_refuses_damage, windows_in_other_slots_are_one_learner,);
}
