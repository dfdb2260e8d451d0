//! Saving and restoring an [`OnlineSvm`]: a checkpoint of a stream.
//!
//! Everything an online SVM knows is in its storage (the window's rows, `α`, `Q̄ᵢᵢ`,
//! labels and `w`) and in a few counters, gathered in [`OnlineSvmState`], a `Copy` value
//! serde can write. [`OnlineSvm::state`] and [`OnlineSvm::storage`] read both;
//! [`OnlineSvm::from_state_in`] rebuilds the learner in any storage after checking that
//! the two agree, and it then continues bit for bit as the saved one would have: the
//! same arrivals and steps, drawn from the same [`Rng`](crate::Rng) state (see
//! [`Rng::state`](crate::Rng::state)), give the same bits.
//!
//! Cost: O(N) to check a state, no memory besides the storage handed in.

use serde::{Deserialize, Serialize};

use super::online::{Field, OnlineSvm};
use super::params::ValidParams;
use super::sweep::Sweep;
use crate::real::check_finite;
use crate::storage::{Storage, check_capacity};
use crate::{Error, Real};

/// The counters of an [`OnlineSvm`] besides its storage: window size, dimension, cap on
/// the steps per arrival, where the oldest sample is, how many the window holds, and the
/// pass under way ([`Sweep`]).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct OnlineSvmState<T> {
    window: usize,
    dim: usize,
    max_steps_per_arrival: usize,
    oldest: usize,
    len: usize,
    sweep: Sweep<T>,
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

    /// Scalars the storage of the learner holds: [`OnlineSvm::scalars_len`]`(N, d)`.
    pub fn scalars_len(&self) -> usize {
        OnlineSvm::scalars_len(self.window, self.dim)
    }
}

impl<T: Real, S: Storage<T>> OnlineSvm<T, S> {
    /// The counters to save beside [`storage`](Self::storage).
    pub fn state(&self) -> OnlineSvmState<T> {
        let (window, dim, max_steps_per_arrival) = (self.window, self.dim, self.max_steps_per_arrival);
        OnlineSvmState { window, dim, max_steps_per_arrival, oldest: self.oldest, len: self.len, sweep: self.sweep }
    }

    /// The scalars in use, [`OnlineSvm::scalars_len`]`(N, d)` of them: `w`, the window's rows
    /// and their per-sample fields.
    pub fn storage(&self) -> &[T] {
        self.scalars.as_ref().get(..OnlineSvm::scalars_len(self.window, self.dim)).unwrap_or_default()
    }

    /// The learner [`state`](Self::state) and [`storage`](Self::storage) describe, working
    /// in `scalars` (which holds the saved storage), with `params` (those of the saved
    /// learner: they are configuration, not state).
    ///
    /// # Errors
    /// `InvalidParam` naming `window` or `max_steps_per_arrival` (0), `oldest` or `len`
    /// (outside the window), `sweep` (a pass over more slots than the window has),
    /// `labels` (a stored label other than ±1) or `alpha` (outside its box `[0, C]` —
    /// `[0, ∞)` for the squared hinge); `CapacityExceeded` when `scalars` is shorter than
    /// [`OnlineSvmState::scalars_len`]; `NonFinite` for NaN/∞ in `w` or in a stored
    /// sample.
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
        let OnlineSvmState { window, dim, max_steps_per_arrival, oldest, len, sweep } = state;
        if window == 0 {
            return Err(Error::InvalidParam { name: "window" });
        }
        if max_steps_per_arrival == 0 {
            return Err(Error::InvalidParam { name: "max_steps_per_arrival" });
        }
        if !sweep.is_valid(window) {
            return Err(Error::InvalidParam { name: "sweep" });
        }
        check_capacity(OnlineSvm::scalars_len(window, dim), scalars.as_ref().len())?;
        // A window that is not full has never evicted: its oldest sample is in slot 0.
        if oldest >= window || (len < window && oldest != 0) {
            return Err(Error::InvalidParam { name: "oldest" });
        }
        if len > window {
            return Err(Error::InvalidParam { name: "len" });
        }
        let svm = OnlineSvm { scalars, window, dim, params, max_steps_per_arrival, oldest, len, sweep };
        let (w, rows, fields) = svm.parts();
        check_finite(w)?;
        let field = |f: Field, slot| fields.get(f.at(window, slot)).copied().ok_or(Error::InvalidParam { name: "len" });
        for k in 0..len {
            let slot = svm.slot(k);
            let row = rows.get(slot * dim..).and_then(|r| r.get(..dim)).ok_or(Error::InvalidParam { name: "len" })?;
            check_finite(row)?;
            let y = field(Field::Label, slot)?;
            if y != T::ONE && y != -T::ONE {
                return Err(Error::InvalidParam { name: "labels" });
            }
            let alpha = field(Field::Alpha, slot)?;
            let q = field(Field::QDiagonal, slot)?;
            check_finite(&[alpha, q])?;
            if !(alpha >= T::ZERO && alpha <= params.coordinate(y).upper) {
                return Err(Error::InvalidParam { name: "alpha" });
            }
        }
        Ok(svm)
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
        wide_pass.sweep.next_slot(17, &mut rng); // a pass over 17 slots of a window of 16
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
            }
        )*};
    }

    gen_tests!(f32, f64);
}
