//! Saving and restoring an [`OnlineSvm`]: a checkpoint of a stream.
//!
//! Everything an online SVM knows is in its storage (the window's rows, `α`, `Q̄ᵢᵢ`,
//! labels, `w`, and the memory `m` when it has one) and in a few counters and the decay
//! `ρ`, gathered in [`OnlineSvmState`], a `Copy` value serde can write.
//! [`OnlineSvm::state`] and [`OnlineSvm::storage`] read both;
//! [`OnlineSvm::from_state_in`] rebuilds the learner in any storage after checking that
//! the two agree, and it then continues bit for bit as the saved one would have: the
//! same arrivals and steps, drawn from the same [`Rng`](crate::Rng) state (see
//! [`Rng::state`](crate::Rng::state)), give the same bits.
//!
//! Cost: O(N) to check a state, no memory besides the storage handed in.

use serde::{Deserialize, Serialize};

use super::online::{Field, OnlineSvm, check_decay};
use super::params::ValidParams;
use super::sweep::Sweep;
use crate::real::check_finite;
use crate::storage::{Storage, check_capacity};
use crate::{Error, Real};

/// The counters of an [`OnlineSvm`] besides its storage: window size, dimension, cap on
/// the steps per arrival, where the oldest sample is, how many the window holds, the
/// pass under way ([`Sweep`]), and the memory's decay `ρ` (`None` without memory).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct OnlineSvmState<T> {
    window: usize,
    dim: usize,
    max_steps_per_arrival: usize,
    oldest: usize,
    len: usize,
    sweep: Sweep<T>,
    decay: Option<T>,
}

impl<T> OnlineSvmState<T> {
    /// The window size `N`.
    pub fn window(&self) -> usize {
        self.window
    }

    /// Features per sample.
    pub fn dim(&self) -> usize {
        self.dim
    }

    /// The cap on the coordinate steps after each arrival.
    pub fn max_steps_per_arrival(&self) -> usize {
        self.max_steps_per_arrival
    }

    /// Samples in the window.
    pub fn samples(&self) -> usize {
        self.len
    }

    /// The slot of the oldest sample in the window.
    pub fn oldest(&self) -> usize {
        self.oldest
    }

    /// The pass under way.
    pub fn sweep(&self) -> Sweep<T>
    where
        T: Copy,
    {
        self.sweep
    }

    /// The memory's decay `ρ`, or `None` for a learner without memory.
    pub fn decay(&self) -> Option<T>
    where
        T: Copy,
    {
        self.decay
    }

    /// The counters of one class's windowed SVM in a learner of the shared window `state`
    /// describes, its pass under way `sweep` ([`super::OnlineOneVsRest::window_of_class`]).
    pub(super) fn of_class(state: super::OnlineOneVsRestState<T>, sweep: Sweep<T>) -> Self
    where
        T: Copy,
    {
        let (window, dim, max_steps_per_arrival) = (state.window(), state.dim(), state.max_steps_per_arrival());
        let (oldest, len, decay) = (state.oldest(), state.samples(), state.decay());
        OnlineSvmState { window, dim, max_steps_per_arrival, oldest, len, sweep, decay }
    }

    /// Scalars the storage of the learner holds: [`OnlineSvm::scalars_len`]`(N, d)`, or
    /// [`OnlineSvm::scalars_len_remembering`]`(N, d)` with a memory.
    pub fn scalars_len(&self) -> usize {
        OnlineSvm::scalars_len_for(self.window, self.dim, self.decay.is_some())
    }
}

impl<T: Real, S: Storage<T>> OnlineSvm<T, S> {
    /// The counters to save beside [`storage`](Self::storage).
    pub fn state(&self) -> OnlineSvmState<T> {
        let (window, dim, max_steps_per_arrival) = (self.window, self.dim, self.max_steps_per_arrival);
        let (oldest, len, sweep, decay) = (self.oldest, self.len, self.sweep, self.decay);
        OnlineSvmState { window, dim, max_steps_per_arrival, oldest, len, sweep, decay }
    }

    /// The scalars in use, [`OnlineSvmState::scalars_len`] of them: `w`, the window's rows,
    /// their per-sample fields and, with a memory, `m`.
    pub fn storage(&self) -> &[T] {
        let len = OnlineSvm::scalars_len_for(self.window, self.dim, self.decay.is_some());
        self.scalars.as_ref().get(..len).unwrap_or_default()
    }

    /// The learner [`state`](Self::state) and [`storage`](Self::storage) describe, working
    /// in `scalars` (which holds the saved storage), with `params` (those of the saved
    /// learner: they are configuration, not state).
    ///
    /// # Errors
    /// `InvalidParam` naming `window` or `max_steps_per_arrival` (0), `oldest` or `len`
    /// (outside the window), `sweep` (a pass over more slots than the window has),
    /// `labels` (a stored label other than ±1), `alpha` (outside its box `[0, C]` —
    /// `[0, ∞)` for the squared hinge) or `decay` (not finite or outside `[0, 1)`);
    /// `CapacityExceeded` when `scalars` is shorter than [`OnlineSvmState::scalars_len`];
    /// `NonFinite` for NaN/∞ in `w`, in the memory `m` or in a stored sample.
    ///
    /// # Examples
    /// ```
    /// use kestrel_core::dcd::{OnlineSvm, Params, Row};
    /// use kestrel_core::Rng;
    /// let params = Params::new().bias(1.0).check()?;
    /// let mut svm = OnlineSvm::new_in(vec![0.0f64; OnlineSvm::scalars_len(8, 1)], 8, 1, params, 2)?;
    /// let mut rng = Rng::seed_from_u64(1);
    /// svm.push(Row::Dense(&[1.0]), 1, &mut rng)?;
    /// // Save, then continue in a copy: both take the same steps.
    /// let (state, saved, rng_state) = (svm.state(), svm.storage().to_vec(), rng.state());
    /// let mut copy = OnlineSvm::from_state_in(saved, params, state)?;
    /// let mut copy_rng = Rng::from_state(rng_state)?;
    /// svm.push(Row::Dense(&[-1.0]), -1, &mut rng)?;
    /// copy.push(Row::Dense(&[-1.0]), -1, &mut copy_rng)?;
    /// assert_eq!(svm.storage(), copy.storage());
    /// # Ok::<(), kestrel_core::Error>(())
    /// ```
    pub fn from_state_in(scalars: S, params: ValidParams<T>, state: OnlineSvmState<T>) -> Result<Self, Error> {
        let OnlineSvmState { window, dim, max_steps_per_arrival, oldest, len, sweep, decay } = state;
        if window == 0 {
            return Err(Error::InvalidParam { name: "window" });
        }
        if max_steps_per_arrival == 0 {
            return Err(Error::InvalidParam { name: "max_steps_per_arrival" });
        }
        if !sweep.is_valid(window) {
            return Err(Error::InvalidParam { name: "sweep" });
        }
        let decay = decay.map(check_decay).transpose()?;
        check_capacity(OnlineSvm::scalars_len_for(window, dim, decay.is_some()), scalars.as_ref().len())?;
        // A window that is not full has never evicted: its oldest sample is in slot 0.
        if oldest >= window || (len < window && oldest != 0) {
            return Err(Error::InvalidParam { name: "oldest" });
        }
        if len > window {
            return Err(Error::InvalidParam { name: "len" });
        }
        let svm = OnlineSvm { scalars, window, dim, params, max_steps_per_arrival, oldest, len, sweep, decay };
        svm.check_stored()?;
        Ok(svm)
    }

    /// `Ok` when [`from_state_in`](Self::from_state_in) takes this learner's own
    /// [`state`](Self::state) and [`storage`](Self::storage) back: its stored values
    /// finite and in their boxes, which a learner fed values near `T`'s range may no longer
    /// have; a caller checks before it replaces a good checkpoint with one that would not
    /// restore (the counters a learner keeps consistent by construction). O(N·d).
    ///
    /// # Errors
    /// As [`from_state_in`](Self::from_state_in) for the stored values.
    pub fn check_restorable(&self) -> Result<(), Error> {
        self.check_stored()
    }

    /// The stored values of [`from_state_in`](Self::from_state_in)'s checks: `w`, the
    /// memory and the window's samples finite, labels ±1, every `α` in its box.
    fn check_stored(&self) -> Result<(), Error> {
        let (window, dim) = (self.window, self.dim);
        let (w, rows, fields) = self.parts();
        check_finite(w)?;
        check_finite(self.memory().unwrap_or_default())?;
        let field = |f: Field, slot| fields.get(f.at(window, slot)).copied().ok_or(Error::InvalidParam { name: "len" });
        for k in 0..self.len {
            let slot = self.slot(k);
            let row = rows.get(slot * dim..).and_then(|r| r.get(..dim)).ok_or(Error::InvalidParam { name: "len" })?;
            check_finite(row)?;
            let y = field(Field::Label, slot)?;
            if y != T::ONE && y != -T::ONE {
                return Err(Error::InvalidParam { name: "labels" });
            }
            let alpha = field(Field::Alpha, slot)?;
            let q = field(Field::QDiagonal, slot)?;
            check_finite(&[alpha, q])?;
            if !(alpha >= T::ZERO && alpha <= self.params.coordinate(y).upper) {
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
    use crate::dcd::test_support::Synthetic;
    use crate::dcd::{Loss, Params, Rows};

    type VecOnline<T> = OnlineSvm<T, Vec<T>>;

    /// A window of 16 fed `n` samples of 3 features.
    fn fed<T: Real>(loss: Loss, n: usize, rng: &mut Rng) -> (VecOnline<T>, Synthetic<T>) {
        let data = Synthetic::<T>::new(41, 100, 3, 0.8);
        let params = Params::new().loss(loss).bias(T::ONE).check().unwrap();
        let mut svm = OnlineSvm::new_in(vec![T::ZERO; OnlineSvm::scalars_len(16, 3)], 16, 3, params, 4).unwrap();
        let rows = data.dense_rows();
        for i in 0..n {
            svm.push(rows.row(i), data.labels[i], rng).unwrap();
        }
        (svm, data)
    }

    /// A restored learner continues with exactly the bits of the original, before and
    /// after the window is full.
    fn restored_learner_continues_bit_for_bit<T: Real>() {
        for (loss, n) in [(Loss::Hinge, 5), (Loss::SquaredHinge, 37)] {
            let mut rng = Rng::seed_from_u64(42);
            let (mut svm, data) = fed::<T>(loss, n, &mut rng);
            let mut bytes = [0u8; 64];
            let encoded = postcard::to_slice(&svm.state(), &mut bytes).unwrap();
            let state: OnlineSvmState<T> = postcard::from_bytes(encoded).unwrap();
            assert_eq!(state, svm.state());
            assert_eq!((state.window(), state.dim(), state.samples()), (16, 3, n.min(16)));
            let mut copy = OnlineSvm::from_state_in(svm.storage().to_vec(), *svm.params(), state).unwrap();
            let mut copy_rng = Rng::from_state(rng.state()).unwrap();
            let rows = data.dense_rows();
            for i in n..100 {
                svm.push(rows.row(i), data.labels[i], &mut rng).unwrap();
                copy.push(rows.row(i), data.labels[i], &mut copy_rng).unwrap();
            }
            let bits = |s: &[T]| s.iter().map(|v| v.to_f64().to_bits()).collect::<Vec<_>>();
            assert_eq!(bits(svm.storage()), bits(copy.storage()));
            assert_eq!(svm.state(), copy.state());
        }
    }

    /// A window of 16 with a memory of decay 0.9, fed `n` samples of 3 features.
    fn fed_remembering<T: Real>(n: usize, rng: &mut Rng) -> (VecOnline<T>, Synthetic<T>) {
        let data = Synthetic::<T>::new(44, 100, 3, 0.8);
        let params = Params::new().bias(T::ONE).check().unwrap();
        let scalars = vec![T::ZERO; OnlineSvm::scalars_len_remembering(16, 3)];
        let mut svm = OnlineSvm::remembering_in(scalars, 16, 3, params, 4, T::from_f64(0.9)).unwrap();
        let rows = data.dense_rows();
        for i in 0..n {
            svm.push(rows.row(i), data.labels[i], rng).unwrap();
        }
        (svm, data)
    }

    /// A learner with a memory, restored from its state and storage (which hold `ρ` and
    /// `m`), continues with exactly the bits of the original.
    fn restored_memory_continues_bit_for_bit<T: Real>() {
        let mut rng = Rng::seed_from_u64(45);
        let (mut svm, data) = fed_remembering::<T>(40, &mut rng);
        let mut bytes = [0u8; 96];
        let encoded = postcard::to_slice(&svm.state(), &mut bytes).unwrap();
        let state: OnlineSvmState<T> = postcard::from_bytes(encoded).unwrap();
        assert_eq!((state, state.decay()), (svm.state(), Some(T::from_f64(0.9))));
        assert_eq!(state.scalars_len(), OnlineSvm::scalars_len_remembering(16, 3));
        assert_eq!(svm.storage().len(), state.scalars_len());
        assert_eq!(svm.storage().last(), svm.memory().unwrap().last());
        let mut copy = OnlineSvm::from_state_in(svm.storage().to_vec(), *svm.params(), state).unwrap();
        assert_eq!(copy.memory(), svm.memory());
        let mut copy_rng = Rng::from_state(rng.state()).unwrap();
        let rows = data.dense_rows();
        for i in 40..100 {
            svm.push(rows.row(i), data.labels[i], &mut rng).unwrap();
            copy.push(rows.row(i), data.labels[i], &mut copy_rng).unwrap();
        }
        let bits = |s: &[T]| s.iter().map(|v| v.to_f64().to_bits()).collect::<Vec<_>>();
        assert_eq!(bits(svm.storage()), bits(copy.storage()));
        assert_eq!(svm.state(), copy.state());
    }

    /// A state with a memory is refused when the storage has no room for `m`, when `m` is
    /// not finite or when the decay is not a valid `ρ`.
    fn inconsistent_memory_states_are_rejected<T: Real>() {
        let mut rng = Rng::seed_from_u64(46);
        let (svm, _) = fed_remembering::<T>(30, &mut rng);
        let (state, params, saved) = (svm.state(), *svm.params(), svm.storage().to_vec());
        let restore = |storage: Vec<T>, state| OnlineSvm::from_state_in(storage, params, state).err();
        let (plain_len, needed) = (OnlineSvm::scalars_len(16, 3), OnlineSvm::scalars_len_remembering(16, 3));
        let short = saved[..plain_len].to_vec();
        assert_eq!(restore(short.clone(), state), Some(Error::CapacityExceeded { needed, capacity: plain_len }));
        let mut without_memory = state;
        without_memory.decay = None;
        assert!(restore(short, without_memory).is_none(), "the same window, without its memory");
        for at in [plain_len, needed - 1] {
            let mut nan = saved.clone();
            nan[at] = T::from_f64(f64::NAN);
            assert_eq!(restore(nan, state), Some(Error::NonFinite), "NaN at {at}");
        }
        for decay in [1.0, -0.5, f64::NAN, f64::NEG_INFINITY] {
            let mut bad = state;
            bad.decay = Some(T::from_f64(decay));
            assert_eq!(restore(saved.clone(), bad), Some(Error::InvalidParam { name: "decay" }), "ρ = {decay}");
        }
        assert!(restore(saved, state).is_none());
    }

    /// Inconsistent states are errors, never panics.
    fn inconsistent_states_are_rejected<T: Real>() {
        let mut rng = Rng::seed_from_u64(43);
        let (svm, _) = fed::<T>(Loss::Hinge, 20, &mut rng);
        let (state, params, saved) = (svm.state(), *svm.params(), svm.storage().to_vec());
        let restore = |storage: Vec<T>, state| OnlineSvm::from_state_in(storage, params, state).err();
        let with = |f: fn(&mut OnlineSvmState<T>)| {
            let mut s = state;
            f(&mut s);
            s
        };
        assert_eq!(restore(saved.clone(), with(|s| s.window = 0)), Some(Error::InvalidParam { name: "window" }));
        let no_steps = with(|s| s.max_steps_per_arrival = 0);
        assert_eq!(restore(saved.clone(), no_steps), Some(Error::InvalidParam { name: "max_steps_per_arrival" }));
        let mut wide_pass = state;
        wide_pass.sweep = Sweep::new();
        wide_pass.sweep.run(17, 1, None, &mut rng, |_| T::ZERO); // a pass over 17 slots of a window of 16
        assert_eq!(restore(saved.clone(), wide_pass), Some(Error::InvalidParam { name: "sweep" }));
        assert_eq!(restore(saved.clone(), with(|s| s.oldest = 16)), Some(Error::InvalidParam { name: "oldest" }));
        let partial = with(|s| s.len = 3);
        assert_eq!(restore(saved.clone(), partial), Some(Error::InvalidParam { name: "oldest" }));
        assert_eq!(restore(saved.clone(), with(|s| s.len = 17)), Some(Error::InvalidParam { name: "len" }));
        let needed = OnlineSvm::scalars_len(16, 3);
        assert_eq!(restore(saved[..5].to_vec(), state), Some(Error::CapacityExceeded { needed, capacity: 5 }));
        let wide = with(|s| s.dim = 1000);
        assert!(matches!(restore(saved.clone(), wide), Some(Error::CapacityExceeded { .. })));
        let mut nan = saved.clone();
        nan[0] = T::from_f64(f64::NAN);
        assert_eq!(restore(nan, state), Some(Error::NonFinite));
        let fields = 4 + 16 * 3;
        let mut bad_label = saved.clone();
        bad_label[fields + 2 * 16] = T::from_f64(0.5);
        assert_eq!(restore(bad_label, state), Some(Error::InvalidParam { name: "labels" }));
        let mut bad_alpha = saved.clone();
        bad_alpha[fields] = T::from_f64(2.0); // above C = 1 for the hinge loss
        assert_eq!(restore(bad_alpha, state), Some(Error::InvalidParam { name: "alpha" }));
        assert!(restore(saved, state).is_none());
        assert_eq!(Rng::from_state([0; 4]), Err(Error::InvalidParam { name: "state" }));
        // The live learner answers the same checks of its stored values.
        let mut live = svm;
        assert_eq!(live.check_restorable(), Ok(()));
        live.scalars[0] = T::from_f64(f64::NAN);
        assert_eq!(live.check_restorable(), Err(Error::NonFinite));
    }

    macro_rules! gen_tests {
        ($($scalar:ident),*) => {$(
            mod $scalar {
                #[test]
                fn restored_learner_continues_bit_for_bit() {
                    super::restored_learner_continues_bit_for_bit::<$scalar>();
                }
                #[test]
                fn inconsistent_states_are_rejected() {
                    super::inconsistent_states_are_rejected::<$scalar>();
                }
                #[test]
                fn restored_memory_continues_bit_for_bit() {
                    super::restored_memory_continues_bit_for_bit::<$scalar>();
                }
                #[test]
                fn inconsistent_memory_states_are_rejected() {
                    super::inconsistent_memory_states_are_rejected::<$scalar>();
                }
            }
        )*};
    }

    gen_tests!(f32, f64);
}
