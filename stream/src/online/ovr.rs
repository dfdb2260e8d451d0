//! [`Ovr`]: one-vs-rest over windowed SVMs, the classifier behind the linear and the
//! reduced-kernel stream learners.
//!
//! Classes are indices `0, 1, …` in order of first appearance (the learner maps its labels
//! to them, [`crate::labels`]). While at most two classes have been seen, one windowed SVM
//! (`kestrel_core::dcd::OnlineSvm`) separates class 0 (`+1`) from class 1 (`−1`). When a
//! third class appears the learner becomes `k` one-vs-rest SVMs over one window
//! (`kestrel_core::dcd::OnlineOneVsRest`: the window's rows once, each class its own `α`,
//! weights and memory), SVM `c` taking class `c` as `+1` and every other as `−1`
//! (LIBLINEAR's multi-class scheme), and the prediction is the class of the largest
//! decision value. The binary SVM becomes class 0's, and class 1 starts as its mirror
//! (the same problem with the labels negated, when no class weights tell them apart:
//! `OnlineOneVsRest::from_binary_in`); every other class starts from `α = 0` on the window
//! it finds and takes coordinate steps until its window meets the stopping rule (at most a
//! window's arrivals' worth of steps), as a class that appears later does.
//!
//! Memory: one window of `N(d + 3) + d + 1` scalars (`OnlineSvm::scalars_len`; `d + 1`
//! more with a memory of the samples that left it) for two classes; for `k > 2` classes
//! `N(d + 2) + k(N + d + 1)` (`k(d + 1)` more with memories:
//! `OnlineOneVsRest::scalars_len`) and a pass a class, allocated again, fallibly, when a
//! class first appears, up to the learner's most classes ([`Ovr::footprint`]). A saved
//! state holds each class's window in the form of a binary SVM's
//! (`OnlineOneVsRest::window_of_class`), as a learner that kept one window a class saved
//! it, so the states of both restore alike.

use kestrel_core::dcd::{OnlineOneVsRest, OnlineSvm, OnlineSvmState, Row, Sweep, ValidParams};
use kestrel_core::{Error, Real, Rng};
use serde::{Deserialize, Serialize};

use super::{Footprint, StateError, expect_same};
use crate::limits::{reserve, zeroed};

/// A windowed SVM in host memory.
type Svm<T> = OnlineSvm<T, Vec<T>>;

/// One-vs-rest windowed SVMs over one window, in host memory.
type Shared<T> = OnlineOneVsRest<T, Vec<T>, Vec<Sweep<T>>>;

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

/// The SVMs: one for two classes, one-vs-rest over one window for more.
enum Svms<T> {
    Binary(Svm<T>),
    Classes(Shared<T>),
}

/// One-vs-rest windowed SVMs; the classes seen are the learner's (its labels), handed
/// to each call.
pub(super) struct Ovr<T> {
    shape: Shape<T>,
    svms: Svms<T>,
    /// Coordinate steps the SVMs took since this value was built or restored (not saved:
    /// a count of work, which a learner reads as a difference).
    steps: u64,
}

/// What [`Ovr`] saves: each SVM's counters and storage (one for two classes, each class's
/// window beyond).
#[derive(Serialize, Deserialize)]
pub(super) struct OvrState<T> {
    svms: Vec<(OnlineSvmState<T>, Vec<T>)>,
}

impl Ovr<()> {
    /// The memory of the SVMs for at most `classes` classes: one window for two; for more,
    /// one window shared by the classes and a pass each (`Sweep`'s scalars and indices),
    /// saturating; the memories of the samples that left the window when `remembering`.
    pub(super) fn footprint(window: usize, dim: usize, classes: usize, remembering: bool) -> Footprint {
        let (core_scalars, passes) = match classes {
            0..=2 => (svm_scalars(window, dim, remembering), 0),
            k => (OnlineOneVsRest::scalars_len(window, dim, k, remembering), k),
        };
        Footprint {
            core_scalars: core_scalars.saturating_add(passes.saturating_mul(Sweep::SCALARS)),
            core_indices: passes.saturating_mul(Sweep::INDICES),
            ..Footprint::default()
        }
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
        let (window, dim, params, steps) = (shape.window, shape.dim, shape.params, shape.steps);
        let scalars = zeroed(svm_scalars(window, dim, shape.decay.is_some()), "the SVM's window")?;
        let svm = match shape.decay {
            None => OnlineSvm::new_in(scalars, window, dim, params, steps)?,
            Some(decay) => OnlineSvm::remembering_in(scalars, window, dim, params, steps, decay)?,
        };
        Ok(Ovr { shape, svms: Svms::Binary(svm), steps: 0 })
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
        for c in 0..self.outputs() {
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
        match &self.svms {
            Svms::Binary(svm) if c == 0 => svm.decision(Row::Dense(row)),
            Svms::Classes(shared) if c < shared.classes() => shared.decision(Row::Dense(row), c),
            _ => Err(Error::InvalidParam { name: "class" }),
        }
    }

    /// Learns `row` of class `class` — one of the classes learned, or the next (the
    /// learner's labels say which) — drawing the coordinate order from `rng`.
    ///
    /// # Errors
    /// As `OnlineSvm::push` for the row; `CapacityExceeded` when a new class's SVM
    /// cannot be allocated. Nothing changes on error: the SVMs a new class needs are built
    /// aside, drawing from a copy of `rng`, and kept only once they took the row.
    pub(super) fn push(&mut self, row: &[T], class: usize, rng: &mut Rng) -> Result<(), Error> {
        if svms_for(class + 1) > self.outputs() {
            let mut draws = rng.clone();
            let (mut grown, steps) = self.grown(class + 1, &mut draws)?;
            let taken = grown.push(Row::Dense(row), class, &mut draws)?;
            self.svms = Svms::Classes(grown);
            self.steps = self.steps.saturating_add((steps + taken) as u64);
            *rng = draws;
            return Ok(());
        }
        let taken = match &mut self.svms {
            Svms::Binary(svm) => svm.push(Row::Dense(row), if class == 0 { 1 } else { -1 }, rng)?,
            Svms::Classes(shared) => shared.push(Row::Dense(row), class, rng)?,
        };
        self.steps = self.steps.saturating_add(taken as u64);
        Ok(())
    }

    /// Adds the SVMs `classes` classes take that none of their samples has added yet —
    /// those of classes whose samples have all left the window (the warm-up's, which only
    /// its last samples hand over) — each settled on the window it finds, as a class's
    /// first sample adds its SVM.
    ///
    /// # Errors
    /// `CapacityExceeded` when the SVMs cannot be allocated; nothing changes then.
    pub(super) fn add_classes(&mut self, classes: usize, rng: &mut Rng) -> Result<(), Error> {
        if svms_for(classes) <= self.outputs() {
            return Ok(());
        }
        let mut draws = rng.clone();
        let (grown, steps) = self.grown(classes, &mut draws)?;
        self.svms = Svms::Classes(grown);
        self.steps = self.steps.saturating_add(steps as u64);
        *rng = draws;
        Ok(())
    }

    /// The one-vs-rest SVMs of `classes` (at least 3, more than the SVMs have) that the SVMs
    /// grow into, each class added settled on the window — at most a window's arrivals'
    /// worth of steps, `N` times the cap on an arrival's (none for a mirror already
    /// converged) — and the steps that took.
    fn grown(&self, classes: usize, rng: &mut Rng) -> Result<(Shared<T>, usize), Error> {
        let Shape { window, dim, steps, decay, .. } = self.shape;
        let scalars = zeroed(OnlineOneVsRest::scalars_len(window, dim, classes, decay.is_some()), "the classes' SVMs")?;
        let sweeps = zeroed(classes, "the classes' passes")?;
        let (mut grown, kept) = match &self.svms {
            Svms::Binary(svm) => (OnlineOneVsRest::from_binary_in(svm, scalars, sweeps)?, 1),
            Svms::Classes(shared) => (OnlineOneVsRest::grown_in(shared, scalars, sweeps)?, shared.classes()),
        };
        let budget = window.saturating_mul(steps);
        let settled = (kept..classes).map(|c| grown.settle(c, budget, rng)).sum();
        Ok((grown, settled))
    }

    /// SVM `c`'s weights over the features and its bias weight.
    pub(super) fn weights(&self, c: usize) -> Option<(&[T], T)> {
        match &self.svms {
            Svms::Binary(svm) => (c == 0).then(|| (svm.weights(), svm.bias_weight())),
            Svms::Classes(shared) => shared.weights(c),
        }
    }

    /// SVM `c`'s memory of the samples that left the window (`d + 1` scalars, the bias
    /// weight last), `None` without memory.
    pub(super) fn memory(&self, c: usize) -> Option<&[T]> {
        match &self.svms {
            Svms::Binary(svm) => svm.memory().filter(|_| c == 0),
            Svms::Classes(shared) => shared.memory(c),
        }
    }

    /// Samples in the window (every SVM holds the same).
    pub(super) fn len(&self) -> usize {
        match &self.svms {
            Svms::Binary(svm) => svm.len(),
            Svms::Classes(shared) => shared.len(),
        }
    }

    /// Samples of non-zero weight, summed over the SVMs: `O(N)` per SVM.
    pub(super) fn support_vectors(&self) -> usize {
        match &self.svms {
            Svms::Binary(svm) => svm.support_vectors(),
            Svms::Classes(shared) => shared.support_vectors(),
        }
    }

    /// New features for the window: `rows` (`len() × d`, oldest first) for every SVM, and
    /// SVM `c`'s memory `memories[c(d + 1)..][..d + 1]` (empty without memory), as
    /// `OnlineSvm::replace_features`.
    ///
    /// # Errors
    /// As `OnlineSvm::replace_features` and `OnlineOneVsRest::replace_features`,
    /// `DimensionMismatch` for memories of another length than the SVMs' (`outputs() · (d +
    /// 1)`, or 0 without memory). The SVMs are unchanged on error.
    pub(super) fn replace_features(&mut self, rows: &[T], memories: &[T]) -> Result<(), Error> {
        let per_svm = if self.shape.decay.is_some() { self.shape.dim + 1 } else { 0 };
        let expected = per_svm * self.outputs();
        if memories.len() != expected {
            return Err(Error::DimensionMismatch { expected, got: memories.len() });
        }
        match &mut self.svms {
            Svms::Binary(svm) => svm.replace_features(rows, Some(memories).filter(|_| per_svm > 0)),
            Svms::Classes(shared) => shared.replace_features(rows, memories),
        }
    }

    /// Sample `k` of SVM `c`'s window, oldest first (`OnlineSvm::sample`).
    #[cfg(test)]
    pub(super) fn sample(&self, c: usize, k: usize) -> Option<(&[T], T, i32)> {
        match &self.svms {
            Svms::Binary(svm) => svm.sample(k).filter(|_| c == 0),
            Svms::Classes(shared) => shared.sample(c, k),
        }
    }

    /// The SVMs: one for two classes, `k` for `k > 2`.
    pub(super) fn outputs(&self) -> usize {
        match &self.svms {
            Svms::Binary(_) => 1,
            Svms::Classes(shared) => shared.classes(),
        }
    }

    /// The state to save: the binary SVM's, or each class's window as a binary SVM's (a
    /// window of the learner's shape each, for as long as the state is kept).
    pub(super) fn state(&self) -> OvrState<T> {
        let svms = match &self.svms {
            Svms::Binary(svm) => vec![(svm.state(), svm.storage().to_vec())],
            Svms::Classes(shared) => (0..shared.classes())
                .filter_map(|c| {
                    let mut scalars =
                        vec![T::ZERO; svm_scalars(self.shape.window, self.shape.dim, self.shape.decay.is_some())];
                    shared.window_of_class(c, &mut scalars).ok().map(|state| (state, scalars))
                })
                .collect(),
        };
        OvrState { svms }
    }

    /// The SVMs `state` describes, which must have `shape`, for a learner of `classes`
    /// classes.
    ///
    /// # Errors
    /// [`StateError::Mismatch`] for another shape or a number of SVMs the classes do not
    /// take; [`StateError::Invalid`] for an SVM the core rejects, or windows that are not
    /// one window's classes.
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
        let svms = match svms.len() {
            1 => Svms::Binary(svms.remove(0)),
            k => {
                let scalars = zeroed(
                    OnlineOneVsRest::scalars_len(shape.window, shape.dim, k, shape.decay.is_some()),
                    "the classes' SVMs",
                )?;
                Svms::Classes(OnlineOneVsRest::from_windows_in(&svms, scalars, zeroed(k, "the classes' passes")?)?)
            }
        };
        Ok(Ovr { shape, svms, steps: 0 })
    }
}
