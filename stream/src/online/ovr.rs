//! [`Ovr`]: one-vs-rest over windowed SVMs, the classifier behind the linear and the
//! reduced-kernel stream learners.
//!
//! Classes are indices `0, 1, …` in order of first appearance (the learner maps its labels
//! to them, [`crate::labels`]). While at most two classes have been seen, one windowed SVM
//! (`kestrel_core::dcd::OnlineSvm`) separates class 0 (`+1`) from class 1 (`−1`). When a
//! third class appears the learner becomes `k` one-vs-rest SVMs, SVM `c` taking class `c`
//! as `+1` and every other as `−1` (LIBLINEAR's multi-class scheme), and the prediction is
//! the class of the largest decision value. Every SVM holds the same window — each sample
//! is pushed to all — so a new class's SVM starts from the window the others hold: its
//! samples are pushed to it, all `−1` (the class had not appeared), and at the third
//! class SVM 1 is the mirror of SVM 0 (its labels negated). Those pushes take their
//! coordinate steps as arrivals do, once per class.
//!
//! Memory: one window of `N(d + 3) + d + 1` scalars (`OnlineSvm::scalars_len`; `d + 1`
//! more with a memory of the samples that left it) for two classes, `k` windows for
//! `k > 2`; each class past two is allocated, fallibly, when it
//! first appears, up to the learner's most classes ([`Ovr::scalars_len`]).

use kestrel_core::dcd::{OnlineSvm, OnlineSvmState, Row, ValidParams};
use kestrel_core::{Error, Real, Rng};
use serde::{Deserialize, Serialize};

use super::{StateError, expect_same};
use crate::limits::{reserve, zeroed};

/// A windowed SVM in host memory.
type Svm<T> = OnlineSvm<T, Vec<T>>;

/// The shape every SVM of an [`Ovr`] shares.
#[derive(Clone, Copy, Debug)]
pub(super) struct Shape<T> {
    /// The window `N`.
    pub window: usize,
    /// Features per row.
    pub dim: usize,
    /// The solver's parameters.
    pub params: ValidParams<T>,
    /// The most coordinate steps per arrival.
    pub steps: usize,
    /// The decay `ρ` of the memory of samples that left the window
    /// (`OnlineSvm::remembering_in`), `None` to forget them.
    pub decay: Option<T>,
}

/// One-vs-rest windowed SVMs; the classes seen are the learner's (its labels), handed
/// to each call.
pub(super) struct Ovr<T> {
    shape: Shape<T>,
    svms: Vec<Svm<T>>,
    /// Coordinate steps the SVMs took since this value was built or restored (not saved:
    /// a count of work, which a learner reads as a difference).
    steps: u64,
}

/// What [`Ovr`] saves: each SVM's counters and storage.
#[derive(Serialize, Deserialize)]
pub(super) struct OvrState<T> {
    svms: Vec<(OnlineSvmState<T>, Vec<T>)>,
}

impl Ovr<()> {
    /// Scalars of the SVMs for at most `classes` classes: one window for two, `classes`
    /// windows for more (saturating); each with its memory when `remembering`.
    pub(super) fn scalars_len(window: usize, dim: usize, classes: usize, remembering: bool) -> usize {
        svm_scalars(window, dim, remembering).saturating_mul(svms_for(classes).max(1))
    }
}

/// Scalars of one windowed SVM, with its memory when `remembering`.
fn svm_scalars(window: usize, dim: usize, remembering: bool) -> usize {
    match remembering {
        true => OnlineSvm::scalars_len_remembering(window, dim),
        false => OnlineSvm::scalars_len(window, dim),
    }
}

/// SVMs `classes` classes need: 0 before the first, 1 for one or two, `classes` beyond.
fn svms_for(classes: usize) -> usize {
    match classes {
        0 => 0,
        1 | 2 => 1,
        k => k,
    }
}

impl<T: Real> Ovr<T> {
    /// No class yet; the first SVM's window is allocated now.
    ///
    /// # Errors
    /// As `OnlineSvm::new_in` (`window`, `max_steps_per_arrival`); [`AllocError`] naming the
    /// window.
    pub(super) fn new(shape: Shape<T>) -> Result<Self, super::BuildError> {
        let first = Self::svm(&shape)?;
        let mut svms = Vec::new();
        reserve(&mut svms, 1, "the SVM's window")?;
        svms.push(first);
        Ok(Ovr { shape, svms, steps: 0 })
    }

    fn svm(shape: &Shape<T>) -> Result<Svm<T>, super::BuildError> {
        let (window, dim, params, steps) = (shape.window, shape.dim, shape.params, shape.steps);
        let scalars = zeroed(svm_scalars(window, dim, shape.decay.is_some()), "the SVM's window")?;
        Ok(match shape.decay {
            None => OnlineSvm::new_in(scalars, window, dim, params, steps)?,
            Some(decay) => OnlineSvm::remembering_in(scalars, window, dim, params, steps, decay)?,
        })
    }

    /// The shape of the SVMs.
    pub(super) fn shape(&self) -> &Shape<T> {
        &self.shape
    }

    /// Coordinate steps the SVMs took since this value was built or restored, over every
    /// SVM (one-vs-rest: each class's).
    pub(super) fn steps_taken(&self) -> u64 {
        self.steps
    }

    /// The predicted class of `row` when `classes` classes have been learned, `None`
    /// before the first; with `decisions`, the SVMs' decision values into it (cleared:
    /// none before two classes, one for two — class 0's side positive — and one per class
    /// beyond).
    ///
    /// # Errors
    /// As `OnlineSvm::decision` (the row's length, NaN).
    pub(super) fn predict(
        &self,
        row: &[T],
        classes: usize,
        mut decisions: Option<&mut Vec<f64>>,
    ) -> Result<Option<usize>, Error> {
        if let Some(out) = decisions.as_deref_mut() {
            out.clear();
        }
        if classes < 2 {
            return Ok((classes == 1).then_some(0));
        }
        let mut best = (0, T::ZERO);
        for c in 0..self.svms.len() {
            let value = self.decision(c, row)?;
            if let Some(out) = decisions.as_deref_mut() {
                out.push(value.to_f64());
            }
            if c == 0 || value > best.1 {
                best = (c, value);
            }
        }
        Ok(Some(if classes == 2 { usize::from(best.1 <= T::ZERO) } else { best.0 }))
    }

    /// The decision value of SVM `c` for `row`.
    ///
    /// # Errors
    /// `InvalidParam { name: "class" }` for `c` past the SVMs; as `OnlineSvm::decision`.
    pub(super) fn decision(&self, c: usize, row: &[T]) -> Result<T, Error> {
        let svm = self.svms.get(c).ok_or(Error::InvalidParam { name: "class" })?;
        svm.decision(Row::Dense(row))
    }

    /// Learns `row` of class `class` — one of the classes learned, or the next (the
    /// learner's labels say which) — drawing the coordinate order from `rng`.
    ///
    /// # Errors
    /// As `OnlineSvm::push` for the row; `CapacityExceeded` when a new class's window
    /// cannot be allocated. Nothing changes on error: the first SVM checks the row before
    /// any other takes it, and the others then accept it too (the same row, the same
    /// parameters).
    pub(super) fn push(&mut self, row: &[T], class: usize, rng: &mut Rng) -> Result<(), Error> {
        if svms_for(class + 1) > self.svms.len() {
            return self.push_growing(row, class, rng);
        }
        let binary = self.svms.len() == 1;
        for (c, svm) in self.svms.iter_mut().enumerate() {
            let positive = if binary { class == 0 } else { class == c };
            let taken = svm.push(Row::Dense(row), if positive { 1 } else { -1 }, rng)?;
            self.steps = self.steps.saturating_add(taken as u64);
        }
        Ok(())
    }

    /// [`push`](Self::push) of a first sample of a class that needs more SVMs: they are
    /// built (drawing from a copy of `rng`, kept only on success), then all take the row.
    fn push_growing(&mut self, row: &[T], class: usize, rng: &mut Rng) -> Result<(), Error> {
        let mut draws = rng.clone();
        let (mut added, mut steps) = self.new_svms(class, &mut draws)?;
        for (c, svm) in self.svms.iter_mut().chain(&mut added).enumerate() {
            steps += svm.push(Row::Dense(row), if class == c { 1 } else { -1 }, &mut draws)?;
        }
        self.svms.append(&mut added);
        self.steps = self.steps.saturating_add(steps as u64);
        *rng = draws;
        Ok(())
    }

    /// Adds the SVMs `classes` classes take that none of their samples has added yet —
    /// those of classes whose samples have all left the window (the warm-up's, which only
    /// its last samples hand over) — each fed the window the others hold, as a class's
    /// first sample adds its SVM.
    ///
    /// # Errors
    /// As [`push`](Self::push) for a new class (the window's rows were pushed before);
    /// nothing changes then.
    pub(super) fn add_classes(&mut self, classes: usize, rng: &mut Rng) -> Result<(), Error> {
        if svms_for(classes) <= self.svms.len() {
            return Ok(());
        }
        let mut draws = rng.clone();
        let (mut added, steps) = self.new_svms(classes - 1, &mut draws)?;
        self.svms.append(&mut added);
        self.steps = self.steps.saturating_add(steps as u64);
        *rng = draws;
        Ok(())
    }

    /// The SVMs a first sample of class `class` adds (at least a third class): one per
    /// class without one, each fed the window the others hold; and the coordinate steps
    /// that took.
    fn new_svms(&self, class: usize, rng: &mut Rng) -> Result<(Vec<Svm<T>>, usize), Error> {
        let have = self.svms.len();
        let needed = svms_for(class + 1).saturating_sub(have);
        let (mut added, mut steps) = (Vec::new(), 0);
        reserve(&mut added, needed, "the SVMs of the classes")?;
        let Some(template) = self.svms.first() else { return Ok((added, steps)) };
        for c in have..have + needed {
            let mut svm = Self::svm(&self.shape)?;
            for (x, _, sign) in (0..template.len()).filter_map(|k| template.sample(k)) {
                // Class 1 is added with the third class: the mirror of the binary SVM.
                let label = if c == 1 { -sign } else { -1 };
                steps += svm.push(Row::Dense(x), label, rng)?;
            }
            added.push(svm);
        }
        Ok((added, steps))
    }

    /// SVM `c`'s weights over the features and its bias weight.
    pub(super) fn weights(&self, c: usize) -> Option<(&[T], T)> {
        self.svms.get(c).map(|svm| (svm.weights(), svm.bias_weight()))
    }

    /// SVM `c`'s memory of the samples that left the window (`d + 1` scalars, the bias
    /// weight last), `None` without memory.
    pub(super) fn memory(&self, c: usize) -> Option<&[T]> {
        self.svms.get(c).and_then(|svm| svm.memory())
    }

    /// Samples in the window (every SVM holds the same).
    pub(super) fn len(&self) -> usize {
        self.svms.first().map_or(0, |svm| svm.len())
    }

    /// Samples of non-zero weight, summed over the SVMs: `O(N)` per SVM.
    pub(super) fn support_vectors(&self) -> usize {
        self.svms.iter().map(Svm::support_vectors).sum()
    }

    /// New features for the window: `rows` (`len() × d`, oldest first) for every SVM, and
    /// SVM `c`'s memory `memories[c(d + 1)..][..d + 1]` (empty without memory), as
    /// `OnlineSvm::replace_features`.
    ///
    /// # Errors
    /// As `OnlineSvm::replace_features`, `DimensionMismatch` for memories of another length
    /// than the SVMs' (`outputs() · (d + 1)`, or 0 without memory). Each SVM checks the
    /// rows and its memory before it changes; a caller that has checked them all finite
    /// changes all SVMs or none.
    pub(super) fn replace_features(&mut self, rows: &[T], memories: &[T]) -> Result<(), Error> {
        let per_svm = if self.shape.decay.is_some() { self.shape.dim + 1 } else { 0 };
        let expected = per_svm * self.svms.len();
        if memories.len() != expected {
            return Err(Error::DimensionMismatch { expected, got: memories.len() });
        }
        for (c, svm) in self.svms.iter_mut().enumerate() {
            let memory = memories.get(c * per_svm..(c + 1) * per_svm).filter(|_| per_svm > 0);
            svm.replace_features(rows, memory)?;
        }
        Ok(())
    }

    /// Sample `k` of SVM `c`'s window, oldest first (`OnlineSvm::sample`).
    #[cfg(test)]
    pub(super) fn sample(&self, c: usize, k: usize) -> Option<(&[T], T, i32)> {
        self.svms.get(c).and_then(|svm| svm.sample(k))
    }

    /// The SVMs: one for two classes, `k` for `k > 2`.
    pub(super) fn outputs(&self) -> usize {
        self.svms.len()
    }

    /// The state to save.
    pub(super) fn state(&self) -> OvrState<T> {
        OvrState { svms: self.svms.iter().map(|svm| (svm.state(), svm.storage().to_vec())).collect() }
    }

    /// The SVMs `state` describes, which must have `shape`, for a learner of `classes`
    /// classes.
    ///
    /// # Errors
    /// [`StateError::Mismatch`] for another shape or a number of SVMs the classes do not
    /// take; [`StateError::Invalid`] for an SVM the core rejects.
    pub(super) fn from_state(shape: Shape<T>, state: OvrState<T>, classes: usize) -> Result<Self, StateError> {
        expect_same("SVMs for the classes", state.svms.len(), svms_for(classes).max(1))?;
        let mut svms = Vec::new();
        reserve(&mut svms, state.svms.len(), "the SVMs of the classes")?;
        for (svm, scalars) in state.svms {
            expect_same("window", svm.window(), shape.window)?;
            expect_same("features", svm.dim(), shape.dim)?;
            expect_same("steps per arrival (cap)", svm.max_steps_per_arrival(), shape.steps)?;
            expect_same("memory decay", svm.decay().map(Real::to_f64), shape.decay.map(Real::to_f64))?;
            svms.push(OnlineSvm::from_state_in(scalars, shape.params, svm)?);
        }
        Ok(Ovr { shape, svms, steps: 0 })
    }
}
