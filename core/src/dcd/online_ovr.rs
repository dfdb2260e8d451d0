//! [`OnlineOneVsRest`]: `k` classes learned from a stream, one windowed SVM per class
//! against the rest, all over one window of samples.
//!
//! One-vs-rest (LIBLINEAR's multi-class scheme) over [`OnlineSvm`]s puts every sample into
//! `k` windows that differ only in its label, `+1` in its own class's and `−1` in the
//! others'. Here the window is held once — each sample's row, `‖x̂ᵢ‖² = ‖xᵢ‖² + B²` and
//! class — and each class keeps only what is its own: its weights `w_c` (with the bias
//! weight), the dual variables `α_c` of the window's samples, its memory `m_c` when there
//! is one, and its pass under way ([`Sweep`]). Class `c` reads sample `i`'s label as
//! `y = +1` when `classᵢ = c` and `−1` otherwise, and its `Q̄ᵢᵢ = ‖x̂ᵢ‖² + Dᵢᵢ(y)`, the sum
//! [`OnlineSvm`] stores; everything else is [`OnlineSvm`]'s arrival, step and stopping rule
//! (its module doc derives them), class after class in order.
//!
//! An arrival: when the window is full, every class lets the oldest sample go (`w_c ←
//! w_c − yαx̂`, or into its memory); the new sample takes the oldest one's slot; then
//! each class in turn decays its memory, gives the new sample `α = 0` and a coordinate
//! step, and runs its passes until its window meets the stopping rule or the cap on steps
//! is spent. So `k` [`OnlineSvm`]s pushed the same samples in class order with one
//! [`Rng`] compute the same bits as this learner (tested), in less memory.
//!
//! **Memory**, fixed at construction: [`OnlineOneVsRest::scalars_len`]`(N, d, k, memory) =
//! N·(d + 2) + k·(N + d + 1)` scalars (`k·(d + 1)` more with a memory) and `k` [`Sweep`]s,
//! against `k·(N·(d + 3) + d + 1)` scalars for `k` [`OnlineSvm`]s: the window's rows once
//! instead of `k` times. Time: as `k` [`OnlineSvm`]s, O(k·(d + N)) per arrival plus O(d)
//! per coordinate step; a prediction `k` dot products.

#![allow(
    clippy::indexing_slicing,
    reason = "slots < N, rows of d, per-sample fields of N, each class's block of OnlineOneVsRest::head_len: the layout the constructors checked (OnlineOneVsRest::scalars_len)"
)]

use serde::{Deserialize, Serialize};

use super::online::OnlineSvm;
use super::online::{check_decay, coordinate_step, forget, held, held_slots, settle, spread_bound};
use super::online_state::OnlineSvmState;
use super::params::ValidParams;
use super::rows::Row;
use super::solver::{add_scaled, margin};
use super::sweep::Sweep;
use crate::real::check_finite;
use crate::storage::{Storage, check_capacity};
use crate::{Error, Real, Rng};

/// `k ≥ 2` classes learned one-vs-rest from a stream over one window of at most `N`
/// samples (module doc).
///
/// # Examples
/// ```
/// use kestrel_core::dcd::{OnlineOneVsRest, Params, Row, Sweep};
/// use kestrel_core::Rng;
/// let params = Params::new().bias(1.0).check()?;
/// // Three classes, a window of 32 samples of 2 features, at most 8 steps per class and arrival.
/// let scalars = [0.0f32; OnlineOneVsRest::scalars_len(32, 2, 3, false)];
/// let mut learner = OnlineOneVsRest::new_in(scalars, [Sweep::new(); 3], 32, 2, params, 8, None)?;
/// let mut rng = Rng::seed_from_u64(7);
/// let centres = [[3.0, 0.0], [-3.0, 3.0], [-3.0, -3.0]];
/// for i in 0..300 {
///     let class = i % 3;
///     let x = [centres[class][0] + rng.normal::<f32>(), centres[class][1] + rng.normal::<f32>()];
///     learner.push(Row::Dense(&x), class, &mut rng)?;
/// }
/// assert_eq!(learner.predict(Row::Dense(&[-3.0, 3.0]))?, 1);
/// # Ok::<(), kestrel_core::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct OnlineOneVsRest<T, S, P> {
    scalars: S,
    sweeps: P,
    window: usize,
    dim: usize,
    params: ValidParams<T>,
    max_steps_per_arrival: usize,
    oldest: usize,
    len: usize,
    /// `ρ` when each class keeps a memory of the samples that left the window.
    decay: Option<T>,
}

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

impl OnlineOneVsRest<(), (), ()> {
    /// Scalars an [`OnlineOneVsRest`] of `classes` classes and a window of `window` samples
    /// of `dim` features needs: `window·(dim + 2)` for the window and, per class,
    /// `window + dim + 1` (`dim + 1` more each with a memory, `remembering`); saturating.
    ///
    /// ```
    /// use kestrel_core::dcd::{OnlineOneVsRest, OnlineSvm};
    /// // 7 classes, a window of 256 samples of 19 features: 7,308 floats (29 KB in f32)
    /// // where 7 OnlineSvms take 39,564 (158 KB).
    /// assert_eq!(OnlineOneVsRest::scalars_len(256, 19, 7, false), 256 * 21 + 7 * (256 + 20));
    /// assert_eq!(7 * OnlineSvm::scalars_len(256, 19), 39_564);
    /// ```
    pub const fn scalars_len(window: usize, dim: usize, classes: usize, remembering: bool) -> usize {
        let samples = window.saturating_mul(dim.saturating_add(2));
        samples.saturating_add(classes.saturating_mul(Self::block_len(window, dim, remembering)))
    }

    /// Bytes of an [`OnlineOneVsRest`]'s scalars with scalar `T` (its `k` [`Sweep`]s
    /// besides).
    pub const fn bytes<T>(window: usize, dim: usize, classes: usize, remembering: bool) -> usize {
        Self::scalars_len(window, dim, classes, remembering).saturating_mul(core::mem::size_of::<T>())
    }

    /// Scalars of one class's block: `w` (`dim + 1`), `α` (`window`) and, with a memory,
    /// `m` (`dim + 1`).
    const fn block_len(window: usize, dim: usize, remembering: bool) -> usize {
        let own = window.saturating_add(dim).saturating_add(1);
        if remembering { own.saturating_add(dim).saturating_add(1) } else { own }
    }
}

/// One class's block of the storage, by what it holds.
struct Head<'a, T> {
    /// `[w₁ … w_d, w_b]`.
    w: &'a mut [T],
    /// `αᵢ` by slot.
    alpha: &'a mut [T],
    /// `m`, empty without memory.
    memory: &'a mut [T],
}

impl<T: Real, S: Storage<T>, P: Storage<Sweep<T>>> OnlineOneVsRest<T, S, P> {
    /// An empty window of `window ≥ 1` samples of `dim` features for as many classes
    /// `k ≥ 2` as `sweeps` holds, at most `max_steps_per_arrival ≥ 1` coordinate steps per
    /// class after each arrival, and with `decay = Some(ρ)`, `ρ ∈ [0, 1)`, a memory per
    /// class of the samples that left the window ([`OnlineSvm::remembering_in`]).
    ///
    /// # Errors
    /// `InvalidParam` naming `window`, `classes` (fewer than 2 sweeps),
    /// `max_steps_per_arrival` or `decay`; `CapacityExceeded` when `scalars` holds fewer
    /// than [`OnlineOneVsRest::scalars_len`] scalars.
    ///
    /// [`OnlineSvm::remembering_in`]: super::OnlineSvm::remembering_in
    pub fn new_in(
        mut scalars: S,
        mut sweeps: P,
        window: usize,
        dim: usize,
        params: ValidParams<T>,
        max_steps_per_arrival: usize,
        decay: Option<T>,
    ) -> Result<Self, Error> {
        let classes = sweeps.as_ref().len();
        Self::check_shape(window, classes, max_steps_per_arrival)?;
        let decay = decay.map(check_decay).transpose()?;
        let needed = OnlineOneVsRest::scalars_len(window, dim, classes, decay.is_some());
        check_capacity(needed, scalars.as_ref().len())?;
        scalars.as_mut()[..needed].fill(T::ZERO);
        sweeps.as_mut().fill(Sweep::new());
        Ok(OnlineOneVsRest { scalars, sweeps, window, dim, params, max_steps_per_arrival, oldest: 0, len: 0, decay })
    }

    /// The constructors' checks of the shape.
    fn check_shape(window: usize, classes: usize, max_steps_per_arrival: usize) -> Result<(), Error> {
        if window == 0 {
            return Err(Error::InvalidParam { name: "window" });
        }
        if classes < 2 {
            return Err(Error::InvalidParam { name: "classes" });
        }
        if max_steps_per_arrival == 0 {
            return Err(Error::InvalidParam { name: "max_steps_per_arrival" });
        }
        Ok(())
    }

    /// Adds a sample of class `class < k` (evicting the oldest when the window is full),
    /// then each class steps until its window is converged or `max_steps_per_arrival`
    /// steps were taken (module doc); returns the steps taken over the classes.
    ///
    /// # Errors
    /// As [`Row::check`] against `d`; `InvalidLabel { row: 0 }` for a class `≥ k`;
    /// `NonFinite` when `‖x‖² + B² + Dᵢᵢ` overflows. The model is untouched on error.
    pub fn push(&mut self, row: Row<'_, T>, class: usize, rng: &mut Rng) -> Result<usize, Error> {
        let norm = self.check_sample(row, class)?;
        let leaving = (self.len == self.window).then(|| self.evict());
        let (slot, dim) = ((self.oldest + self.len) % self.window, self.dim);
        let (rows, norms, classes, _) = split_mut(self.scalars.as_mut(), self.window, dim);
        row.write_dense(&mut rows[slot * dim..][..dim]);
        norms[slot] = norm;
        classes[slot] = class_value(class);
        self.len += 1;
        let largest_norm = self.largest_norm();
        Ok((0..self.classes()).map(|c| self.arrive(c, slot, leaving, largest_norm, rng)).sum())
    }

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
        let (bias, block_len) = (params.bias(), grown.head_len());
        let (rows, norms, classes, heads) = split_mut(grown.scalars.as_mut(), window, dim);
        let Head { w, alpha, memory } = Head::of(&mut heads[..block_len], window, dim);
        for k in 0..svm.len() {
            let (slot, (x, a, label)) = (svm.slot(k), svm.sample(k).ok_or(Error::InvalidParam { name: "len" })?);
            rows[slot * dim..][..dim].copy_from_slice(x);
            norms[slot] = Row::Dense(x).squared_norm() + bias * bias;
            classes[slot] = class_value(usize::from(label < 0));
            alpha[slot] = a;
        }
        w[..dim].copy_from_slice(svm.weights());
        w[dim] = svm.bias_weight();
        memory.copy_from_slice(svm.memory().unwrap_or_default());
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
        out_rows.copy_from_slice(rows);
        out_alpha.copy_from_slice(alpha);
        for slot in 0..window {
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
        let (bias, head_len, len) = (first.params().bias(), learner.head_len(), first.len());
        let (rows, norms, classes, heads) = split_mut(learner.scalars.as_mut(), window, dim);
        classes.fill(-T::ONE);
        for k in 0..len {
            let slot = first.slot(k);
            let x = first.sample(k).map_or(&[][..], |(x, ..)| x);
            rows[slot * dim..][..dim].copy_from_slice(x);
            norms[slot] = Row::Dense(x).squared_norm() + bias * bias;
        }
        for (c, (svm, block)) in svms.iter().zip(heads.chunks_exact_mut(head_len)).enumerate() {
            let Head { w, alpha, memory } = Head::of(block, window, dim);
            w[..dim].copy_from_slice(svm.weights());
            w[dim] = svm.bias_weight();
            memory.copy_from_slice(svm.memory().unwrap_or_default());
            for k in 0..len {
                let (slot, (_, a, label)) = (first.slot(k), svm.sample(k).ok_or(Error::InvalidParam { name: "len" })?);
                alpha[slot] = a;
                if label > 0 {
                    if classes[slot] >= T::ZERO {
                        return Err(Error::InvalidParam { name: "labels" });
                    }
                    classes[slot] = class_value(c);
                }
            }
        }
        let sweeps: &mut [Sweep<T>] = learner.sweeps.as_mut();
        for (sweep, svm) in sweeps.iter_mut().zip(svms) {
            *sweep = svm.sweep;
        }
        (learner.oldest, learner.len) = (first.state().oldest(), len);
        learner.check_restorable()?;
        Ok(learner)
    }

    /// The checks of [`push`](Self::push), which change nothing: `Ok` with the sample's
    /// `‖x̂‖² = ‖x‖² + B²` when it would be taken.
    ///
    /// # Errors
    /// As [`push`](Self::push).
    pub fn check_sample(&self, row: Row<'_, T>, class: usize) -> Result<T, Error> {
        row.check(self.dim)?;
        if class >= self.classes() {
            return Err(Error::InvalidLabel { row: 0 });
        }
        let bias = self.params.bias();
        let norm = row.squared_norm() + bias * bias;
        let diagonals = [T::ONE, -T::ONE].map(|y| self.params.coordinate(y).diagonal);
        if !diagonals.iter().all(|&d| (norm + d).is_finite()) {
            return Err(Error::NonFinite);
        }
        Ok(norm)
    }

    /// Every class lets the oldest sample go — `w_c ← w_c − yαx̂` without memory, `m_c ←
    /// m_c + yαx̂` with one — and the window forgets it; returns its `‖x̂‖²` and class, which
    /// the classes' bounds on the arrival's change need ([`arrive`](Self::arrive)).
    fn evict(&mut self) -> (T, T) {
        let (slot, dim, bias, remembering) = (self.oldest, self.dim, self.params.bias(), self.decay.is_some());
        let head_len = self.head_len();
        let (rows, norms, classes, heads) = split_mut(self.scalars.as_mut(), self.window, dim);
        let (x, leaving) = (Row::Dense(&rows[slot * dim..][..dim]), (norms[slot], classes[slot]));
        for (c, block) in heads.chunks_exact_mut(head_len).enumerate() {
            let head = Head::of(block, self.window, dim);
            let a = head.alpha[slot] * OwnClass::new(c, &self.params).label(leaving.1);
            match remembering {
                false => add_scaled(&x, -a, head.w, bias),
                true => add_scaled(&x, a, head.memory, bias),
            }
        }
        self.oldest = (slot + 1) % self.window;
        self.len -= 1;
        leaving
    }

    /// Class `c`'s part of an arrival whose new sample is in `slot` (its `α_c` there still
    /// the evicted sample's, whose `‖x̂‖²` and class `leaving` gives): the memory's decay,
    /// the new sample's step, the sweep's update and the passes; returns the steps taken.
    fn arrive(
        &mut self,
        c: usize,
        slot: usize,
        leaving: Option<(T, T)>,
        largest_norm: Option<T>,
        rng: &mut Rng,
    ) -> usize {
        let (params, epsilon, dim) = (self.params, self.params.epsilon(), self.dim);
        let own = OwnClass::new(c, &params);
        let was_converged = self.sweeps.as_ref()[c].converged(epsilon);
        let (window, oldest, len, decay, head_len) = (self.window, self.oldest, self.len, self.decay, self.head_len());
        let (rows, norms, classes, heads) = split_mut(self.scalars.as_mut(), window, dim);
        let Head { w, alpha, memory } = Head::of(&mut heads[c * head_len..][..head_len], window, dim);
        let mut moves = [T::ZERO; 2];
        moves[0] = match (decay, leaving) {
            (Some(decay), _) => forget(w, memory, decay),
            (None, Some((norm, class))) => alpha[slot] * alpha[slot] * own.label_and_q(class, norm).1,
            (None, None) => T::ZERO,
        };
        alpha[slot] = T::ZERO;
        let (y, q_new) = own.label_and_q(classes[slot], norms[slot]);
        coordinate_step(&rows[slot * dim..][..dim], y, &mut alpha[slot], q_new, &params, w);
        moves[1] = alpha[slot] * alpha[slot] * q_new;
        let largest = || match largest_norm {
            Some(norm) => norm + own.diagonals[0],
            None => {
                let (from_oldest, wrapped) = held_slots(oldest, len, window);
                let q = |slot: usize| own.label_and_q(classes[slot], norms[slot]).1;
                from_oldest.chain(wrapped).fold(T::ZERO, |largest, slot| largest.max_of(q(slot)))
            }
        };
        let bound = was_converged.then(|| spread_bound(largest(), moves));
        settle(&mut self.sweeps.as_mut()[c], bound);
        1 + self.passes(c, own, self.max_steps_per_arrival - 1, rng)
    }

    /// Steps of class `c`'s passes over the window ([`Sweep::run`]), its view `own`: at
    /// most `budget`, fewer when its window meets the stopping rule first; returns the
    /// steps taken.
    fn passes(&mut self, c: usize, own: OwnClass<T>, budget: usize, rng: &mut Rng) -> usize {
        let (params, dim, window, len, head_len) = (self.params, self.dim, self.window, self.len, self.head_len());
        let (rows, norms, classes, heads) = split_mut(self.scalars.as_mut(), window, dim);
        let Head { w, alpha, .. } = Head::of(&mut heads[c * head_len..][..head_len], window, dim);
        self.sweeps.as_mut()[c].run(len, budget, Some(params.epsilon()), rng, |slot| {
            let (y, q) = own.label_and_q(classes[slot], norms[slot]);
            coordinate_step(&rows[slot * dim..][..dim], y, &mut alpha[slot], q, &params, w)
        })
    }

    /// Steps of class `c`'s passes until its window meets the stopping rule or `budget`
    /// steps were taken (none on an empty window or for `c ≥ k`) — a class that
    /// [`grown_in`](Self::grown_in) or [`from_binary_in`](Self::from_binary_in) added
    /// starts unconverged; returns the steps taken. O(budget·d).
    pub fn settle(&mut self, c: usize, budget: usize, rng: &mut Rng) -> usize {
        if self.len == 0 || c >= self.classes() {
            return 0;
        }
        self.passes(c, OwnClass::new(c, &self.params), budget, rng)
    }

    /// The window's largest `‖x̂ᵢ‖²` when both labels have the same `Dᵢᵢ` (one cost for
    /// both, as the C ABI's) and some class's window was converged before the arrival, so
    /// needs the bound of [`arrive`](Self::arrive): then each class's largest `Q̄ᵢᵢ` is it
    /// plus `Dᵢᵢ`, the same bits as the largest of the sums (rounding is monotone), found
    /// once for all the classes instead of once a class. `None` otherwise. O(N).
    fn largest_norm(&self) -> Option<T> {
        let [positive, negative] = OwnClass::new(0, &self.params).diagonals;
        let epsilon = self.params.epsilon();
        if positive != negative || !self.sweeps.as_ref().iter().any(|sweep| sweep.converged(epsilon)) {
            return None;
        }
        let norms = &self.scalars.as_ref()[self.window * self.dim..][..self.window];
        Some(held(norms, self.oldest, self.len).fold(T::ZERO, |largest, &norm| largest.max_of(norm)))
    }

    /// Class `c`'s decision value `w_cᵀx + w_{c,b}·B` for a row.
    ///
    /// # Errors
    /// As [`Row::check`] against `d`; `InvalidLabel { row: 0 }` for `c ≥ k`.
    pub fn decision(&self, row: Row<'_, T>, c: usize) -> Result<T, Error> {
        row.check(self.dim)?;
        let w = self.weights_with_bias(c).ok_or(Error::InvalidLabel { row: 0 })?;
        Ok(margin(&row, w, self.params.bias()))
    }

    /// The class of the largest decision value (the lowest such class on a tie).
    ///
    /// # Errors
    /// As [`Row::check`] against `d`.
    pub fn predict(&self, row: Row<'_, T>) -> Result<usize, Error> {
        row.check(self.dim)?;
        let mut best = (0, T::ZERO);
        for c in 0..self.classes() {
            let value = self.decision(row, c)?;
            if c == 0 || value > best.1 {
                best = (c, value);
            }
        }
        Ok(best.0)
    }

    /// Class `c`'s `w` over the `d` features and its bias weight `w_b`, or `None` for
    /// `c ≥ k`.
    pub fn weights(&self, c: usize) -> Option<(&[T], T)> {
        self.weights_with_bias(c).map(|w| (&w[..self.dim], w[self.dim]))
    }

    /// Class `c`'s memory `m = [m₁ … m_d, m_b]`, or `None` without memory or for `c ≥ k`.
    pub fn memory(&self, c: usize) -> Option<&[T]> {
        self.decay?;
        let start = self.head_start(c)? + self.window + self.dim + 1;
        Some(&self.scalars.as_ref()[start..][..=self.dim])
    }

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
            |x: &[T]| diagonals.iter().any(|&d| !(Row::Dense(x).squared_norm() + bias * bias + d).is_finite());
        if rows.chunks_exact(dim.max(1)).take(len).any(overflows) {
            return Err(Error::NonFinite);
        }
        let head_len = self.head_len();
        let (stored, norms, classes, heads) = split_mut(self.scalars.as_mut(), window, dim);
        for (k, x) in rows.chunks_exact(dim.max(1)).take(len).enumerate() {
            let slot = (oldest + k) % window;
            stored[slot * dim..][..dim].copy_from_slice(x);
            norms[slot] = Row::Dense(x).squared_norm() + bias * bias;
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

    /// Sample `k` of the window, oldest first, as class `c` sees it: `(x, α, label ±1)`, or
    /// `None` when `k ≥ len` or `c ≥ k`.
    pub fn sample(&self, c: usize, k: usize) -> Option<(&[T], T, i32)> {
        let start = self.head_start(c)?;
        if k >= self.len {
            return None;
        }
        let (slot, dim) = ((self.oldest + k) % self.window, self.dim);
        let (rows, _, classes, _) = self.parts();
        let alpha = self.scalars.as_ref()[start + dim + 1 + slot];
        let label = if classes[slot] == class_value(c) { 1 } else { -1 };
        Some((&rows[slot * dim..][..dim], alpha, label))
    }

    /// Samples of non-zero weight, summed over the classes (each class's support vectors).
    /// O(k·N).
    pub fn support_vectors(&self) -> usize {
        let (window, dim, oldest, len) = (self.window, self.dim, self.oldest, self.len);
        let (_, _, _, heads) = self.parts();
        let alphas = heads.chunks_exact(self.head_len()).map(|head| &head[dim + 1..][..window]);
        alphas.map(|alpha| held(alpha, oldest, len).filter(|&&a| a > T::ZERO).count()).sum()
    }

    /// `true` when every class's window meets the stopping rule ([`Sweep`]).
    pub fn converged(&self) -> bool {
        self.sweeps.as_ref().iter().all(|sweep| sweep.converged(self.params.epsilon()))
    }

    /// The classes `k`.
    pub fn classes(&self) -> usize {
        self.sweeps.as_ref().len()
    }

    /// Samples in the window now.
    pub fn len(&self) -> usize {
        self.len
    }

    /// `true` before the first arrival.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The window size `N`.
    pub fn window(&self) -> usize {
        self.window
    }

    /// The memory's decay `ρ`, or `None` without memory.
    pub fn decay(&self) -> Option<T> {
        self.decay
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

    /// Class `c`'s `[w₁ … w_d, w_b]`, `None` for `c ≥ k`.
    fn weights_with_bias(&self, c: usize) -> Option<&[T]> {
        Some(&self.scalars.as_ref()[self.head_start(c)?..][..=self.dim])
    }

    /// Where class `c`'s block starts in the storage, `None` for `c ≥ k`.
    fn head_start(&self, c: usize) -> Option<usize> {
        (c < self.classes()).then(|| self.window * (self.dim + 2) + c * self.head_len())
    }

    /// Scalars of each class's block.
    fn head_len(&self) -> usize {
        OnlineOneVsRest::block_len(self.window, self.dim, self.decay.is_some())
    }

    /// The solver's parameters (loss, C, bias B, ...).
    pub fn params(&self) -> &ValidParams<T> {
        &self.params
    }

    /// `(rows N × d, ‖x̂ᵢ‖² by slot, classes by slot, the classes' blocks)`; the
    /// constructors checked the storage holds them all.
    fn parts(&self) -> (&[T], &[T], &[T], &[T]) {
        let (window, dim) = (self.window, self.dim);
        let (rows, rest) = self.scalars.as_ref().split_at(window * dim);
        let (norms, rest) = rest.split_at(window);
        let (classes, heads) = rest.split_at(window);
        (rows, norms, classes, &heads[..self.classes() * self.head_len()])
    }
}

/// `(rows N × d, ‖x̂ᵢ‖² by slot, classes by slot, the classes' blocks)` of a learner's
/// storage (long enough: the constructors checked it).
fn split_mut<T>(scalars: &mut [T], window: usize, dim: usize) -> (&mut [T], &mut [T], &mut [T], &mut [T]) {
    let (rows, rest) = scalars.split_at_mut(window * dim);
    let (norms, rest) = rest.split_at_mut(window);
    let (classes, heads) = rest.split_at_mut(window);
    (rows, norms, classes, heads)
}

impl<'a, T> Head<'a, T> {
    /// A class's block of the storage split by what it holds.
    fn of(block: &'a mut [T], window: usize, dim: usize) -> Self {
        let (w, rest) = block.split_at_mut(dim + 1);
        let (alpha, memory) = rest.split_at_mut(window);
        Head { w, alpha, memory }
    }
}

/// Class `c` as the window stores it (exact in `f32` up to 2²⁴).
fn class_value<T: Real>(c: usize) -> T {
    T::from_f64(c as f64)
}

/// Class `c`'s view of the window's samples, taken once per arrival so that a step
/// compares and adds: a sample's label and `Q̄ᵢᵢ` from its stored class and `‖x̂ᵢ‖²`.
#[derive(Clone, Copy)]
struct OwnClass<T> {
    /// `c` as the window stores it.
    own: T,
    /// `Dᵢᵢ` of a sample labelled `+1` and of one labelled `−1`.
    diagonals: [T; 2],
}

impl<T: Real> OwnClass<T> {
    fn new(c: usize, params: &ValidParams<T>) -> Self {
        OwnClass { own: class_value(c), diagonals: [T::ONE, -T::ONE].map(|y| params.coordinate(y).diagonal) }
    }

    /// `+1` for a sample of this class, else `−1`.
    fn label(self, class: T) -> T {
        if class == self.own { T::ONE } else { -T::ONE }
    }

    /// The label of a sample of the stored class `class`, and its `Q̄ᵢᵢ = ‖x̂ᵢ‖² + Dᵢᵢ`.
    fn label_and_q(self, class: T, norm: T) -> (T, T) {
        if class == self.own { (T::ONE, norm + self.diagonals[0]) } else { (-T::ONE, norm + self.diagonals[1]) }
    }
}

#[cfg(test)]
mod tests {
    use std::vec;
    use std::vec::Vec;

    use super::*;
    use crate::dcd::{Loss, OnlineSvm, Params};

    type VecOvr<T> = OnlineOneVsRest<T, Vec<T>, Vec<Sweep<T>>>;

    fn params<T: Real>(loss: Loss) -> ValidParams<T> {
        Params::new()
            .loss(loss)
            .c(T::from_f64(0.5))
            .class_weights(T::ONE, T::from_f64(0.7))
            .bias(T::ONE)
            .check()
            .unwrap()
    }

    /// `classes` Gaussian blobs of unit spread in `dim` features, their centres drawn with
    /// spread `apart` (1.5: close enough that one-vs-rest keeps stepping).
    fn blobs<T: Real>(n: usize, dim: usize, classes: usize, seed: u64, apart: f64) -> (Vec<Vec<T>>, Vec<usize>) {
        let mut rng = Rng::seed_from_u64(seed);
        let centres: Vec<Vec<f64>> =
            (0..classes).map(|_| (0..dim).map(|_| apart * rng.normal::<f64>()).collect()).collect();
        let classes_of: Vec<usize> = (0..n).map(|i| (i * 7 + i / 3) % classes).collect();
        let rows = classes_of
            .iter()
            .map(|&c| centres[c].iter().map(|&m| T::from_f64(m + rng.normal::<f64>())).collect())
            .collect();
        (rows, classes_of)
    }

    fn learner<T: Real>(window: usize, dim: usize, classes: usize, loss: Loss, decay: Option<f64>) -> VecOvr<T> {
        let scalars = vec![T::ZERO; OnlineOneVsRest::scalars_len(window, dim, classes, decay.is_some())];
        let decay = decay.map(T::from_f64);
        OnlineOneVsRest::new_in(scalars, vec![Sweep::new(); classes], window, dim, params(loss), 6, decay).unwrap()
    }

    /// `k` [`OnlineSvm`]s pushed the same samples, in class order with one generator: the
    /// learner's weights, memories, sweeps, steps and α equal theirs bit for bit at every
    /// sample, through several turns of the window, for both losses, with and without a
    /// memory.
    fn equals_one_svm_per_class<T: Real>() {
        let (n, window, dim, classes) = (150, 16, 3, 4);
        let (rows, labels) = blobs::<T>(n, dim, classes, 3, 1.5);
        for loss in [Loss::Hinge, Loss::SquaredHinge] {
            for decay in [None, Some(0.95)] {
                let mut ovr = learner::<T>(window, dim, classes, loss, decay);
                let mut svms: Vec<OnlineSvm<T, Vec<T>>> = (0..classes)
                    .map(|_| {
                        let scalars = vec![T::ZERO; OnlineSvm::scalars_len_remembering(window, dim)];
                        match decay {
                            None => OnlineSvm::new_in(scalars, window, dim, params(loss), 6),
                            Some(rho) => {
                                OnlineSvm::remembering_in(scalars, window, dim, params(loss), 6, T::from_f64(rho))
                            }
                        }
                        .unwrap()
                    })
                    .collect();
                let (mut rng, mut rng_svms) = (Rng::seed_from_u64(9), Rng::seed_from_u64(9));
                for (x, &class) in rows.iter().zip(&labels) {
                    let steps = ovr.push(Row::Dense(x), class, &mut rng).unwrap();
                    let mut svm_steps = 0;
                    for (c, svm) in svms.iter_mut().enumerate() {
                        svm_steps += svm.push(Row::Dense(x), if c == class { 1 } else { -1 }, &mut rng_svms).unwrap();
                    }
                    assert_eq!(steps, svm_steps);
                    for (c, svm) in svms.iter().enumerate() {
                        let (w, b) = ovr.weights(c).unwrap();
                        assert!(
                            w == svm.weights() && b.to_f64().to_bits() == svm.bias_weight().to_f64().to_bits(),
                            "class {c}"
                        );
                        assert_eq!(ovr.memory(c), svm.memory());
                        assert_eq!(ovr.sweeps()[c], svm.sweep);
                        let alphas: Vec<T> = (0..svm.len()).map(|k| svm.sample(k).unwrap().1).collect();
                        let head = ovr.head_start(c).unwrap() + dim + 1;
                        let held: Vec<T> = held(&ovr.scalars[head..][..window], ovr.oldest, ovr.len).copied().collect();
                        assert_eq!(held, alphas);
                    }
                }
                assert_eq!(rng.state(), rng_svms.state());
                // Each class's window is its SVM, and the SVMs are the learner.
                for (c, svm) in svms.iter().enumerate() {
                    let mut scalars = vec![T::ZERO; OnlineSvm::scalars_len_remembering(window, dim)];
                    let state = ovr.window_of_class(c, &mut scalars).unwrap();
                    assert_eq!((state, &scalars[..state.scalars_len()]), (svm.state(), svm.storage()), "class {c}");
                }
                let (scalars, sweeps) = (vec![T::ZERO; ovr.storage().len()], vec![Sweep::new(); classes]);
                let back = OnlineOneVsRest::from_windows_in(&svms, scalars, sweeps).unwrap();
                assert_eq!((back.storage(), back.sweeps(), back.state()), (ovr.storage(), ovr.sweeps(), ovr.state()));
            }
        }
    }

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

    /// It learns: on four blobs apart the last hundred predictions are nearly all right.
    fn learns_blobs<T: Real>() {
        let (rows, labels) = blobs::<T>(600, 4, 4, 21, 5.0);
        let mut ovr = learner::<T>(32, 4, 4, Loss::SquaredHinge, Some(0.99));
        let mut rng = Rng::seed_from_u64(1);
        let mut right = 0;
        for (i, (x, &class)) in rows.iter().zip(&labels).enumerate() {
            if i >= 500 && ovr.predict(Row::Dense(x)).unwrap() == class {
                right += 1;
            }
            ovr.push(Row::Dense(x), class, &mut rng).unwrap();
        }
        assert!(right >= 90, "{right} of 100");
    }

    /// A refused sample (a wrong dimension, a class outside `0 … k−1`, a value not finite,
    /// a norm that overflows) changes nothing.
    fn refusals_leave_it_unchanged<T: Real>() {
        let (rows, labels) = blobs::<T>(40, 2, 3, 5, 1.5);
        let mut ovr = learner::<T>(8, 2, 3, Loss::Hinge, None);
        let mut rng = Rng::seed_from_u64(2);
        for (x, &class) in rows.iter().zip(&labels) {
            ovr.push(Row::Dense(x), class, &mut rng).unwrap();
        }
        let (before, sweeps, state, rng_state) =
            (ovr.storage().to_vec(), ovr.sweeps().to_vec(), ovr.state(), rng.state());
        let huge = T::from_f64(if T::from_f64(1e200).is_finite() { 1e200 } else { 1e30 });
        assert!(ovr.push(Row::Dense(&[T::ONE]), 0, &mut rng).is_err());
        assert_eq!(ovr.push(Row::Dense(&[T::ONE, T::ONE]), 3, &mut rng), Err(Error::InvalidLabel { row: 0 }));
        assert_eq!(ovr.push(Row::Dense(&[T::from_f64(f64::NAN), T::ONE]), 0, &mut rng), Err(Error::NonFinite));
        assert_eq!(ovr.push(Row::Dense(&[huge, huge]), 0, &mut rng), Err(Error::NonFinite));
        assert_eq!(
            (ovr.storage(), ovr.sweeps(), ovr.state(), rng.state()),
            (&before[..], &sweeps[..], state, rng_state)
        );
        assert_eq!(ovr.decision(Row::Dense(&[T::ONE, T::ONE]), 3), Err(Error::InvalidLabel { row: 0 }));
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
        let four = OnlineOneVsRest::from_state_in(
            OnlineOneVsRest::grown_in(&three, scalars, vec![Sweep::new(); 4]).unwrap().storage().to_vec(),
            [three.sweeps(), &[Sweep::new()]].concat(),
            params,
            OnlineOneVsRestState { classes: 4, ..three.state() },
        )
        .unwrap();
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

    fn refuses_bad_shapes<T: Real>() {
        let scalars = || vec![T::ZERO; OnlineOneVsRest::scalars_len(4, 2, 3, true)];
        let new = |window, sweeps: usize, steps, decay: Option<f64>| {
            let decay = decay.map(T::from_f64);
            OnlineOneVsRest::new_in(scalars(), vec![Sweep::new(); sweeps], window, 2, params(Loss::Hinge), steps, decay)
                .map(|_| ())
        };
        assert_eq!(new(0, 3, 1, None), Err(Error::InvalidParam { name: "window" }));
        assert_eq!(new(4, 1, 1, None), Err(Error::InvalidParam { name: "classes" }));
        assert_eq!(new(4, 3, 0, None), Err(Error::InvalidParam { name: "max_steps_per_arrival" }));
        assert_eq!(new(4, 3, 1, Some(1.0)), Err(Error::InvalidParam { name: "decay" }));
        assert!(matches!(new(4, 4, 1, Some(0.5)), Err(Error::CapacityExceeded { .. })));
        assert_eq!(new(4, 3, 1, Some(0.5)), Ok(()));
    }

    macro_rules! both_scalars {
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

    both_scalars!(
        equals_one_svm_per_class,
        learns_blobs,
        refusals_leave_it_unchanged,
        resumes_and_refuses_damage,
        refuses_bad_shapes,
        replaced_features_are_those_of_one_svm_per_class,
        windows_in_other_slots_are_one_learner,
        grows_from_a_binary_svm_and_by_a_class,
    );
}
