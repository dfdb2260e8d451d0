//! [`Input`]: a sample as an online learner reads it — the dense row in raw units, and the
//! row its model sees, standardised by the core's running
//! [`Scaler`](kestrel_core::scaler::Scaler) when the learner scales.
//!
//! A prediction standardises with the statistics of the samples before it; learning first
//! adds the sample to the statistics, then standardises it with them (as a River pipeline
//! `StandardScaler | model` does). The window keeps each sample as it was standardised
//! when it arrived. Learning a sample changes the statistics before the model's update,
//! which may still fail: [`Input::undo_observe`] puts the statistics back (from a copy
//! taken at [`Input::observed`], into buffers allocated when the learner is built).
//!
//! Memory: two dense rows; with scaling, the scaler and its undo copy,
//! `2 · Scaler::scalars_len(d) = 8d` scalars ([`Input::footprint`]; on a device only the
//! scaler's `4d` count as the learner's).

use kestrel_core::scaler::{Scaler, ScalerSection};
use kestrel_core::{Error, Real};
use serde::{Deserialize, Serialize};

use super::{BuildError, Footprint, StateError, expect_same};
use crate::dataset::HostScaler;
use crate::limits::zeroed;
use crate::source::Record;

/// The raw row, the model's row, and the scaler with its undo copy.
pub(super) struct Input<T> {
    raw: Vec<T>,
    row: Vec<T>,
    scaling: Option<(HostScaler<T>, HostScaler<T>)>,
}

/// A scaler's statistics as a learner's state saves them: `(count, μ, M₂)`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(super) struct ScalerState<T> {
    count: u64,
    mean: Vec<T>,
    m2: Vec<T>,
}

impl<T: Real> Input<T> {
    /// Rows of `dim` features; standardised when `scale`.
    pub(super) fn new(dim: usize, scale: bool) -> Result<Self, BuildError> {
        let scaling = match scale {
            true => Some((Self::scaler(dim)?, Self::scaler(dim)?)),
            false => None,
        };
        Ok(Input { raw: zeroed(dim, "a dense row")?, row: zeroed(dim, "a dense row")?, scaling })
    }

    fn scaler(dim: usize) -> Result<HostScaler<T>, BuildError> {
        Ok(Scaler::new_in(zeroed(Scaler::scalars_len(dim), "the feature scaler")?, dim)?)
    }

    /// The memory of the rows of `dim` features, and of the scaler when `scale`.
    pub(super) fn footprint(dim: usize, scale: bool) -> Footprint {
        let scaler = if scale { Scaler::scalars_len(dim) } else { 0 };
        Footprint {
            core_scalars: scaler,
            host_scalars: dim.saturating_mul(2).saturating_add(scaler),
            ..Footprint::default()
        }
    }

    /// Features per sample.
    pub(super) fn dim(&self) -> usize {
        self.raw.len()
    }

    /// Whether rows are standardised.
    pub(super) fn scales(&self) -> bool {
        self.scaling.is_some()
    }

    /// Reads `record` as the raw row.
    ///
    /// # Errors
    /// `IndexOutOfRange` for a nonzero feature past the dimension; `NonFinite` for a value that is
    /// not finite in `T` (every learner refuses it, the warm-ups before keeping it).
    pub(super) fn load(&mut self, record: &Record) -> Result<(), Error> {
        record.write_dense(&mut self.raw)?;
        if self.raw.iter().all(|v| v.is_finite()) { Ok(()) } else { Err(Error::NonFinite) }
    }

    /// The raw row loaded.
    pub(super) fn raw(&self) -> &[T] {
        &self.raw
    }

    /// The loaded row as the model sees it before learning it: standardised by the
    /// statistics so far.
    pub(super) fn for_prediction(&mut self) -> Result<&[T], Error> {
        self.row.copy_from_slice(&self.raw);
        if let Some((scaler, _)) = &self.scaling {
            scaler.transform(&mut self.row)?;
        }
        Ok(&self.row)
    }

    /// Adds the loaded row to the statistics and gives it standardised by them, the row
    /// to learn; the statistics before are kept for [`undo_observe`](Self::undo_observe).
    ///
    /// # Errors
    /// As `Scaler::observe` (the statistics are unchanged then).
    pub(super) fn observed(&mut self) -> Result<&[T], Error> {
        self.row.copy_from_slice(&self.raw);
        if let Some((scaler, undo)) = &mut self.scaling {
            undo.clone_from(scaler);
            scaler.observe(&self.raw)?;
            scaler.transform(&mut self.row)?;
        }
        Ok(&self.row)
    }

    /// Learns the loaded row as [`for_prediction`](Self::for_prediction) gave it (scaled by
    /// the statistics before it) with `learn`, then adds it to the statistics; if `learn`
    /// fails they are put back. For a learner that learns a sample as it scored it.
    ///
    /// # Errors
    /// As `Scaler::observe`, or `learn`'s.
    pub(super) fn learn_as_predicted<R>(&mut self, learn: impl FnOnce(&[T]) -> Result<R, Error>) -> Result<R, Error> {
        self.for_prediction()?;
        if let Some((scaler, undo)) = &mut self.scaling {
            undo.clone_from(scaler);
            scaler.observe(&self.raw)?;
        }
        let learned = learn(&self.row);
        if learned.is_err() {
            self.undo_observe();
        }
        learned
    }

    /// Puts back the statistics [`observed`](Self::observed) changed.
    pub(super) fn undo_observe(&mut self) {
        if let Some((scaler, undo)) = &mut self.scaling {
            core::mem::swap(scaler, undo);
        }
    }

    /// `x` standardised in place by the current statistics (warm-up rows kept raw).
    pub(super) fn transform(&self, x: &mut [T]) -> Result<(), Error> {
        match &self.scaling {
            Some((scaler, _)) => scaler.transform(x),
            None => Ok(()),
        }
    }

    /// `bytes`, a model file, with the scaler inserted when the learner scales.
    pub(super) fn scaled_model(&self, bytes: Vec<u8>) -> Result<Vec<u8>, Error> {
        match &self.scaling {
            Some((scaler, _)) => crate::model::with_scaler(bytes, scaler.section()),
            None => Ok(bytes),
        }
    }

    /// The statistics to save.
    pub(super) fn state(&self) -> Option<ScalerState<T>> {
        self.scaling.as_ref().map(|(scaler, _)| {
            let section = scaler.section();
            ScalerState { count: section.count, mean: section.mean.to_vec(), m2: section.m2.to_vec() }
        })
    }

    /// Replaces the statistics with saved ones; unchanged on error.
    ///
    /// # Errors
    /// `Mismatch` when the state scales and the learner does not, or the other way round;
    /// `Invalid` for statistics a scaler cannot have.
    pub(super) fn restore(&mut self, state: Option<ScalerState<T>>) -> Result<(), StateError> {
        expect_same("feature scaling", state.is_some(), self.scales())?;
        if let (Some((scaler, _)), Some(state)) = (&mut self.scaling, state) {
            let section = ScalerSection { count: state.count, mean: &state.mean, m2: &state.m2, weights: &[] };
            let storage = zeroed(Scaler::scalars_len(self.raw.len()), "the feature scaler")?;
            *scaler = Scaler::from_section_in(storage, self.raw.len(), section)?;
        }
        Ok(())
    }
}
