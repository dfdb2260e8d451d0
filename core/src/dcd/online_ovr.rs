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
//!
//! Beside this module: saving and restoring, and the layout of one window a class
//! (`online_ovr_state`); growing from a binary SVM and by classes (`online_ovr_growth`);
//! new features for the window (`online_features`).

#![allow(
    clippy::indexing_slicing,
    reason = "slots < N, rows of d, per-sample fields of N, each class's block of OnlineOneVsRest::head_len: the layout the constructors checked (OnlineOneVsRest::scalars_len)"
)]

use super::online::{OnlineSvm, check_decay, coordinate_step, forget, held, held_slots, settle, spread_bound};
use super::params::ValidParams;
use super::rows::Row;
use super::solver::{add_scaled, margin};
use super::sweep::Sweep;
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
    pub(super) scalars: S,
    pub(super) sweeps: P,
    pub(super) window: usize,
    pub(super) dim: usize,
    pub(super) params: ValidParams<T>,
    pub(super) max_steps_per_arrival: usize,
    pub(super) oldest: usize,
    pub(super) len: usize,
    /// `ρ` when each class keeps a memory of the samples that left the window.
    pub(super) decay: Option<T>,
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
    pub(super) const fn block_len(window: usize, dim: usize, remembering: bool) -> usize {
        let own = window.saturating_add(dim).saturating_add(1);
        if remembering { own.saturating_add(dim).saturating_add(1) } else { own }
    }
}

/// One class's block of the storage, by what it holds.
pub(super) struct Head<'a, T> {
    /// `[w₁ … w_d, w_b]`.
    pub(super) w: &'a mut [T],
    /// `αᵢ` by slot.
    pub(super) alpha: &'a mut [T],
    /// `m`, empty without memory.
    pub(super) memory: &'a mut [T],
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
    pub(super) fn check_shape(window: usize, classes: usize, max_steps_per_arrival: usize) -> Result<(), Error> {
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

    /// Takes `svm`'s window, a windowed SVM of this learner's shape: its samples' rows and
    /// `‖x̂ᵢ‖²` in its slots (computed again from the rows as an arrival computes them), its
    /// oldest slot and its count; the samples' classes are the caller's to set. O(N·d).
    pub(super) fn take_window_of<S2: Storage<T>>(&mut self, svm: &OnlineSvm<T, S2>) {
        let (window, dim, bias) = (self.window, self.dim, self.params.bias());
        let (rows, norms, _, _) = split_mut(self.scalars.as_mut(), window, dim);
        for (slot, (x, ..)) in (0..svm.len()).filter_map(|k| Some((svm.slot(k), svm.sample(k)?))) {
            rows[slot * dim..][..dim].copy_from_slice(x);
            norms[slot] = squared_norm_with_bias(Row::Dense(x), bias);
        }
        (self.oldest, self.len) = (svm.state().oldest(), svm.len());
    }

    /// Takes class `c`'s `w`, memory and pass from `svm`, a windowed SVM of the window's
    /// samples in the same order, and its `α`, each moved to this window's slot of the same
    /// sample. O(N + d).
    ///
    /// # Errors
    /// `InvalidParam { name: "len" }` for an SVM of fewer samples than the window.
    pub(super) fn take_class_of<S2: Storage<T>>(&mut self, c: usize, svm: &OnlineSvm<T, S2>) -> Result<(), Error> {
        let (window, dim, oldest, len, head_len) = (self.window, self.dim, self.oldest, self.len, self.head_len());
        let (_, _, _, heads) = split_mut(self.scalars.as_mut(), window, dim);
        let Head { w, alpha, memory } = Head::of(&mut heads[c * head_len..][..head_len], window, dim);
        w[..dim].copy_from_slice(svm.weights());
        w[dim] = svm.bias_weight();
        memory.copy_from_slice(svm.memory().unwrap_or_default());
        for k in 0..len {
            alpha[(oldest + k) % window] = svm.sample(k).ok_or(Error::InvalidParam { name: "len" })?.1;
        }
        self.sweeps.as_mut()[c] = svm.sweep;
        Ok(())
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
        let norm = squared_norm_with_bias(row, bias);
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
    pub(super) fn passes(&mut self, c: usize, own: OwnClass<T>, budget: usize, rng: &mut Rng) -> usize {
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

    /// Class `c`'s `[w₁ … w_d, w_b]`, `None` for `c ≥ k`.
    fn weights_with_bias(&self, c: usize) -> Option<&[T]> {
        Some(&self.scalars.as_ref()[self.head_start(c)?..][..=self.dim])
    }

    /// Where class `c`'s block starts in the storage, `None` for `c ≥ k`.
    pub(super) fn head_start(&self, c: usize) -> Option<usize> {
        (c < self.classes()).then(|| self.window * (self.dim + 2) + c * self.head_len())
    }

    /// Scalars of each class's block.
    pub(super) fn head_len(&self) -> usize {
        OnlineOneVsRest::block_len(self.window, self.dim, self.decay.is_some())
    }

    /// The solver's parameters (loss, C, bias B, ...).
    pub fn params(&self) -> &ValidParams<T> {
        &self.params
    }

    /// `(rows N × d, ‖x̂ᵢ‖² by slot, classes by slot, the classes' blocks)`; the
    /// constructors checked the storage holds them all.
    pub(super) fn parts(&self) -> (&[T], &[T], &[T], &[T]) {
        let (window, dim) = (self.window, self.dim);
        let (rows, rest) = self.scalars.as_ref().split_at(window * dim);
        let (norms, rest) = rest.split_at(window);
        let (classes, heads) = rest.split_at(window);
        (rows, norms, classes, &heads[..self.classes() * self.head_len()])
    }
}

/// `(rows N × d, ‖x̂ᵢ‖² by slot, classes by slot, the classes' blocks)` of a learner's
/// storage (long enough: the constructors checked it).
pub(super) fn split_mut<T>(scalars: &mut [T], window: usize, dim: usize) -> (&mut [T], &mut [T], &mut [T], &mut [T]) {
    let (rows, rest) = scalars.split_at_mut(window * dim);
    let (norms, rest) = rest.split_at_mut(window);
    let (classes, heads) = rest.split_at_mut(window);
    (rows, norms, classes, heads)
}

impl<'a, T> Head<'a, T> {
    /// A class's block of the storage split by what it holds.
    pub(super) fn of(block: &'a mut [T], window: usize, dim: usize) -> Self {
        let (w, rest) = block.split_at_mut(dim + 1);
        let (alpha, memory) = rest.split_at_mut(window);
        Head { w, alpha, memory }
    }
}

/// `‖x̂‖² = ‖x‖² + B²` of a sample, as the window stores it: each class's `Q̄ᵢᵢ` adds its
/// `Dᵢᵢ` to it, the sum an [`OnlineSvm`] stores (the same bits).
pub(super) fn squared_norm_with_bias<T: Real>(x: Row<'_, T>, bias: T) -> T {
    x.squared_norm() + bias * bias
}

/// Class `c` as the window stores it (exact in `f32` up to 2²⁴).
pub(super) fn class_value<T: Real>(c: usize) -> T {
    T::from_f64(c as f64)
}

/// Class `c`'s view of the window's samples, taken once per arrival so that a step
/// compares and adds: a sample's label and `Q̄ᵢᵢ` from its stored class and `‖x̂ᵢ‖²`.
#[derive(Clone, Copy)]
pub(super) struct OwnClass<T> {
    /// `c` as the window stores it.
    own: T,
    /// `Dᵢᵢ` of a sample labelled `+1` and of one labelled `−1`.
    pub(super) diagonals: [T; 2],
}

impl<T: Real> OwnClass<T> {
    pub(super) fn new(c: usize, params: &ValidParams<T>) -> Self {
        OwnClass { own: class_value(c), diagonals: [T::ONE, -T::ONE].map(|y| params.coordinate(y).diagonal) }
    }

    /// `+1` for a sample of this class, else `−1`.
    pub(super) fn label(self, class: T) -> T {
        if class == self.own { T::ONE } else { -T::ONE }
    }

    /// The label of a sample of the stored class `class`, and its `Q̄ᵢᵢ = ‖x̂ᵢ‖² + Dᵢᵢ`.
    pub(super) fn label_and_q(self, class: T, norm: T) -> (T, T) {
        if class == self.own { (T::ONE, norm + self.diagonals[0]) } else { (-T::ONE, norm + self.diagonals[1]) }
    }
}

#[cfg(test)]
mod tests {
    use std::vec;
    use std::vec::Vec;

    use super::*;
    use crate::dcd::test_support::{blobs, ovr_learner as learner, ovr_params as params};
    use crate::dcd::{Loss, OnlineSvm};

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
                    // Each class's window is its SVM, and the SVMs are the learner, from the
                    // first sample on (a window not yet full included).
                    for (c, svm) in svms.iter().enumerate() {
                        let mut scalars = vec![T::ZERO; OnlineSvm::scalars_len_remembering(window, dim)];
                        let state = ovr.window_of_class(c, &mut scalars).unwrap();
                        assert_eq!((state, &scalars[..state.scalars_len()]), (svm.state(), svm.storage()), "class {c}");
                    }
                    let (scalars, sweeps) = (vec![T::ZERO; ovr.storage().len()], vec![Sweep::new(); classes]);
                    let back = OnlineOneVsRest::from_windows_in(&svms, scalars, sweeps).unwrap();
                    assert_eq!(
                        (back.storage(), back.sweeps(), back.state()),
                        (ovr.storage(), ovr.sweeps(), ovr.state())
                    );
                }
                assert_eq!(rng.state(), rng_svms.state());
            }
        }
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

    both_scalars!(equals_one_svm_per_class, learns_blobs, refusals_leave_it_unchanged, refuses_bad_shapes,);
}
