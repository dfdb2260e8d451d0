//! `kestrel_model`: a model trained elsewhere — by `kestrel train`, the Python package,
//! or a learner on a device — opened from its bytes (the core's envelope) into caller
//! memory, predicting one row at a time.
//!
//! ```c
//! static const uint8_t model_bytes[] = { /* kestrel export --format c */ };
//! static uint8_t work[KESTREL_MODEL_WORK_BYTES(sizeof model_bytes, 3)] __attribute__((aligned(KESTREL_ALIGN)));
//! kestrel_model *model;
//! if (kestrel_model_open(model_bytes, sizeof model_bytes, work, sizeof work, &model) != KESTREL_STATUS_OK) { ... }
//! float x[3] = {0.1f, 0.2f, 0.9f}, label;
//! kestrel_model_predict(model, x, 3, &label);
//! ```
//!
//! **What `predict` writes** is what `kestrel predict` prints for the row: the class label
//! for a linear or reduced-kernel SVM (the label the training data used, or the class's
//! index `0, 1, …` for a model of named classes), the regression value for SLKL, the flag
//! (1 an anomaly, 0 normal) for a novelty detector, whose score `kestrel_model_score`
//! gives. A classifier's decision values — a margin to threshold an alarm on, as `kestrel
//! predict --decision` prints them — come from `kestrel_model_decision`, their classes from
//! `kestrel_model_label`; a classifier trained with class probabilities (`kestrel train
//! --probabilities`) gives them from `kestrel_model_probabilities`. A model that carries its
//! input standardisation applies it first, as `kestrel predict` does.
//!
//! **Scalars.** An `f32` model computes in `f32`, with the core's code, so its predictions
//! are the host's bit for bit. An `f64` model is refused (`KESTREL_STATUS_MODEL_UNSUPPORTED`):
//! train with `--scalar f32` for a device. So is a kind this interface does not predict
//! with (a MapReduce RSVM, a kernel projection of `kestrel transform`: the core's
//! `KernelProjection::project` is the device's way to use one).
//!
//! **Memory.** [`kestrel_model_work_bytes`] reads the bytes' header and returns the exact
//! work size: the object header, the model's scalars (`⌊payload/4⌋ + 1`: postcard writes
//! each `f32` in 4 bytes; a novelty detector's `m·d + 2m` for `m` centres; two per sigmoid of
//! its class probabilities, whose section's 16 bytes each the bytes' length counts), and for a standardising model of `d` features its scaler (`4d`)
//! and a scratch row (`d`). `KESTREL_MODEL_WORK_BYTES(len, dim)` bounds it at compile
//! time. The model's bytes are copied; they may be discarded after `kestrel_model_open`.
//!
//! **Concurrency.** `kestrel_model_predict` only reads the model, except for a
//! standardising model's scratch row, which a call takes with an atomic flag: two calls
//! that overlap on one scaled model (two threads, or an interrupt) do not race — the later
//! returns `KESTREL_STATUS_BUSY`. A core without compare-and-swap (Cortex-M0/M0+,
//! `thumbv6m`) takes the flag with its interrupts masked, which guards against an
//! interrupt on the same core only: on a dual-core part (the RP2040) a scaled model is
//! used from one core.

use core::ffi::c_void;
use core::sync::atomic::{AtomicBool, Ordering};

use kestrel_core::calibration::{self, Sigmoid};
use kestrel_core::dcd::{LinearModel, Row};
use kestrel_core::model::{Envelope, ModelKind, ScalarKind};
use kestrel_core::novelty::NoveltyModel;
use kestrel_core::reduced_set::ReducedKernelModel;
use kestrel_core::scaler::Scaler;
use kestrel_core::slkl::Predictor;
use kestrel_core::{Error, Real};

use crate::Status;
use crate::memory::{self, Layout, Object, Tag, Work};
use crate::status::status_of;

/// Bytes reserved for a model object's header, the same on every target (the C macro
/// `KESTREL_MODEL_WORK_BYTES` counts on it).
pub const KESTREL_MODEL_OBJECT_BYTES: usize = 192;

/// A model opened by [`kestrel_model_open`], in the caller's work memory. Opaque to C.
#[repr(C)]
pub struct Model {
    tag: Tag,
    kind: Kind,
    scaler: Option<Scaler<f32, &'static mut [f32]>>,
    /// The sigmoids of its class probabilities as `(a, b)` pairs (empty without them).
    calibration: &'static mut [f32],
    /// Taken by a prediction that writes the scratch row.
    busy: AtomicBool,
    /// The scaled row (a standardising model of `d` features: `d` floats, else empty);
    /// written only while `busy` is held.
    scratch: *mut f32,
    scratch_len: usize,
}

// SAFETY: `Model` is `#[repr(C)]` with its tag first, and `kestrel_model_open` writes
// `MODEL_TAG`.
unsafe impl Object for Model {
    const TAG: Tag = MODEL_TAG;
    const BYTES: usize = KESTREL_MODEL_OBJECT_BYTES;
}

/// "KMOD".
const MODEL_TAG: Tag = Tag(0x444F_4D4B);

/// The decoded model, by kind.
enum Kind {
    Linear(LinearModel<f32, &'static mut [f32]>),
    Slkl(Predictor<f32, &'static mut [f32]>),
    Reduced(ReducedKernelModel<f32, &'static mut [f32]>),
    Novelty(NoveltyModel<f32, &'static mut [f32]>),
}

/// What a model is, as [`kestrel_model_describe`] writes it.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ModelInfo {
    /// The learner: 1 linear SVM, 2 SLKL regressor, 3 reduced-kernel SVM, 5 novelty
    /// detector (the envelope's kind byte).
    pub kind: u32,
    /// Features of an input row.
    pub dim: usize,
    /// Centres the model keeps (0 for a linear model).
    pub centres: usize,
    /// `true` for a classifier (predicts labels), `false` for a regressor or a detector.
    pub is_classifier: bool,
    /// A classifier's classes (0 for a regressor or a detector).
    pub classes: usize,
    /// A classifier's decision values a row ([`kestrel_model_decision`]): 1 for two
    /// classes, one a class beyond; 0 for a regressor or a detector.
    pub outputs: usize,
    /// `true` when the model standardises its inputs.
    pub scaled: bool,
    /// `true` when the classifier gives class probabilities
    /// ([`kestrel_model_probabilities`]).
    pub probabilities: bool,
}

/// The work bytes [`kestrel_model_open`] needs for the model in `bytes[0..len]`, or 0 when
/// the bytes are not a model this library runs (null, truncated, corrupted, foreign, `f64`).
/// Reads and checksums the bytes but decodes nothing: a payload that does not decode
/// (bytes written wrongly before their checksum) is found by `kestrel_model_open`.
///
/// # Safety
/// `bytes` is null or points to `len` readable bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn kestrel_model_work_bytes(bytes: *const u8, len: usize) -> usize {
    // SAFETY: as this function's contract.
    let layout = unsafe { memory::bytes(bytes, len) }.and_then(|bytes| layout_of(&envelope(bytes)?));
    layout.map_or(0, Layout::bytes)
}

/// Opens the model in `bytes[0..len]` into the work memory `work[0..work_len]` (aligned to
/// `KESTREL_ALIGN`, at least [`kestrel_model_work_bytes`] long) and writes its handle to
/// `*out`. The bytes are copied: they need not outlive the call.
///
/// Errors: `NULL_POINTER`, `MISALIGNED`, `BUFFER_TOO_SMALL`, and for the bytes
/// `MODEL_TRUNCATED`, `MODEL_CORRUPTED`, `MODEL_FOREIGN`, `MODEL_UNSUPPORTED` (an `f64`
/// model, another format version). `*out` is written only on success.
///
/// # Safety
/// `bytes` is null or points to `len` readable bytes; `work` is null or points to
/// `work_len` bytes that stay valid, and are used for nothing else, while the model is
/// used; `out` is null or points to a writable pointer.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn kestrel_model_open(
    bytes: *const u8,
    len: usize,
    work: *mut c_void,
    work_len: usize,
    out: *mut *mut Model,
) -> Status {
    status_of((|| {
        memory::check_pointer(out)?;
        // SAFETY: as this function's contract.
        let envelope = envelope(unsafe { memory::bytes(bytes, len)? })?;
        let layout = layout_of(&envelope)?;
        // SAFETY: as this function's contract.
        let mut work = unsafe { Work::new::<Model>(work, work_len, layout)? };
        let model = open(&envelope, &mut work)?;
        // SAFETY: checked non-null and aligned above; writable by the contract.
        unsafe { memory::write(out, work.finish(model)) }
    })())
}

/// Predicts the row `x[0..dim]` and writes to `*out` what `kestrel predict` prints for it:
/// the class label for an SVM (the training data's label, or the class index for named
/// classes), the value for a regressor; a model that carries its input standardisation
/// applies it first. Computed in `f32` by the core's code: the host's bits.
///
/// Errors: `NULL_POINTER`, `MISALIGNED`, `WRONG_OBJECT`, `DIMENSION_MISMATCH` (`dim` is not
/// the model's), `NON_FINITE` (NaN or ±∞ in `x`, or a kernel value that overflows), `BUSY`
/// (a standardising model is predicting in another thread or an interrupt right now: its
/// scratch row is taken atomically, never shared). `*out` is written only on success.
///
/// # Safety
/// `model` is null or a handle [`kestrel_model_open`] returned whose work memory is still
/// the model's; `x` is null or points to `dim` readable floats; `out` is null or points to
/// a writable float.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn kestrel_model_predict(
    model: *const Model,
    x: *const f32,
    dim: usize,
    out: *mut f32,
) -> Status {
    status_of((|| {
        memory::check_pointer(out)?;
        // SAFETY: as this function's contract.
        let (model, x) = unsafe { (memory::object(model)?, memory::floats(x, dim)?) };
        let value = model.predict(x)?;
        // SAFETY: as this function's contract.
        unsafe { memory::write(out, value) }
    })())
}

/// Writes to `*out` a novelty detector's score of the row `x[0..dim]`: the squared
/// feature-space distance `d²(x)` to the centre of mass its model holds, what `kestrel
/// predict` prints before the flag (`kestrel_model_predict` writes the flag: 1 beyond the
/// model's threshold, 0 otherwise). The host's bits, as for a prediction.
///
/// Errors: as [`kestrel_model_predict`], and `INVALID_PARAM` for a model that is not a
/// novelty detector. `*out` is written only on success.
///
/// # Safety
/// As [`kestrel_model_predict`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn kestrel_model_score(model: *const Model, x: *const f32, dim: usize, out: *mut f32) -> Status {
    status_of((|| {
        memory::check_pointer(out)?;
        // SAFETY: as this function's contract.
        let (model, x) = unsafe { (memory::object(model)?, memory::floats(x, dim)?) };
        let value = model.score(x)?;
        // SAFETY: as this function's contract.
        unsafe { memory::write(out, value) }
    })())
}

/// Writes a classifier's decision values for the row `x[0..dim]` to `out[0..outputs]`
/// (`kestrel_model_info.outputs`), what `kestrel predict --decision` prints after the
/// class: for two classes one value, ≥ 0 for the class [`kestrel_model_label`] gives at
/// index 1 and < 0 for the one at index 0; for `k` classes one value each, in the order of
/// those indices, the largest the prediction. A model that carries its input
/// standardisation applies it first; the host's bits, as for a prediction.
///
/// Errors: as [`kestrel_model_predict`]; `INVALID_PARAM` for a model that is not a
/// classifier; `BUFFER_TOO_SMALL` when `out_len` is less than the outputs. `out` is
/// written only on success, but for `NON_FINITE` from a value that overflows (a finite
/// row far out), after which `out[0..outputs]` holds NaN.
///
/// # Safety
/// As [`kestrel_model_predict`]; `out` is null or points to `out_len` writable floats.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn kestrel_model_decision(
    model: *const Model,
    x: *const f32,
    dim: usize,
    out: *mut f32,
    out_len: usize,
) -> Status {
    status_of((|| {
        // SAFETY: as this function's contract.
        let (model, x, out) =
            unsafe { (memory::object(model)?, memory::floats(x, dim)?, memory::floats_mut(out, out_len)?) };
        let outputs = model.info().outputs;
        if outputs == 0 {
            return Err(Status::InvalidParam);
        }
        let out = out.get_mut(..outputs).ok_or(Status::BufferTooSmall)?;
        nan_on_overflow(model.decide(x, out), out)
    })())
}

/// `result` of writing `out`; on `NON_FINITE` (a value that overflowed) `out` is filled
/// with NaN, so that no half-written values are taken for results.
fn nan_on_overflow(result: Result<(), Status>, out: &mut [f32]) -> Result<(), Status> {
    if result == Err(Status::NonFinite) {
        out.fill(f32::NAN);
    }
    result
}

/// Writes a classifier's class probabilities for the row `x` to `out[0..classes]`, in the
/// order of its labels ([`kestrel_model_label`]), summing to 1: Platt's sigmoid of each
/// decision value, as `kestrel predict --probabilities` gives them (to `f32` rounding: the
/// host computes the sigmoids in `f64`). The model must carry them (`kestrel train
/// --probabilities`; [`ModelInfo::probabilities`]).
///
/// Errors: as [`kestrel_model_predict`]; `INVALID_PARAM` for a model without class
/// probabilities; `BUFFER_TOO_SMALL` when `out_len` is less than the classes. `out` is
/// written only on success, but for `NON_FINITE`, after which `out[0..classes]` holds NaN.
///
/// # Safety
/// As [`kestrel_model_decision`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn kestrel_model_probabilities(
    model: *const Model,
    x: *const f32,
    dim: usize,
    out: *mut f32,
    out_len: usize,
) -> Status {
    status_of((|| {
        // SAFETY: as this function's contract.
        let (model, x, out) =
            unsafe { (memory::object(model)?, memory::floats(x, dim)?, memory::floats_mut(out, out_len)?) };
        let info = model.info();
        if !info.probabilities {
            return Err(Status::InvalidParam);
        }
        let out = out.get_mut(..info.classes).ok_or(Status::BufferTooSmall)?;
        let computed = model.decide(x, out.get_mut(..info.outputs).ok_or(Status::BufferTooSmall)?).and_then(|()| {
            let sigmoids = model.calibration.chunks_exact(2).map(|pair| match *pair {
                [a, b] => Sigmoid { a: a.into(), b: b.into() },
                _ => Sigmoid::default(),
            });
            Ok(calibration::probabilities(sigmoids, out)?)
        });
        nan_on_overflow(computed, out)
    })())
}

/// Writes to `*out` the label of a classifier's class `index` (`0 ≤ index < classes`),
/// the order of its decision values: the training data's label, or the class's index for
/// a model of named classes, as [`kestrel_model_predict`] writes it.
///
/// Errors: `NULL_POINTER`, `MISALIGNED`, `WRONG_OBJECT`; `INVALID_PARAM` for a model that is
/// not a classifier, or an index past its classes. `*out` is written only on success.
///
/// # Safety
/// `model` as for [`kestrel_model_predict`]; `out` is null or points to a writable float.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn kestrel_model_label(model: *const Model, index: usize, out: *mut f32) -> Status {
    status_of((|| {
        memory::check_pointer(out)?;
        // SAFETY: as this function's contract.
        let model = unsafe { memory::object(model)? };
        let label = model.kind.labels().get(index).copied().ok_or(Status::InvalidParam)?;
        // SAFETY: as this function's contract.
        unsafe { memory::write(out, label) }
    })())
}

/// Describes the model: its kind, dimension, centres, task and whether it standardises.
///
/// # Safety
/// `model` as for [`kestrel_model_predict`]; `out` is null or points to a writable
/// `kestrel_model_info`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn kestrel_model_describe(model: *const Model, out: *mut ModelInfo) -> Status {
    status_of((|| {
        // SAFETY: as this function's contract.
        let model = unsafe { memory::object(model)? };
        // SAFETY: as this function's contract.
        unsafe { memory::write(out, model.info()) }
    })())
}

/// The checked envelope of `bytes`, refused unless it holds an `f32` model.
fn envelope(bytes: &[u8]) -> Result<Envelope<'_>, Status> {
    let envelope = Envelope::parse(bytes)?;
    if envelope.scalar != ScalarKind::F32 {
        return Err(Status::ModelUnsupported);
    }
    Ok(envelope)
}

/// The layout of the model in `envelope`: header, model scalars, scaler, scratch row.
fn layout_of(envelope: &Envelope<'_>) -> Result<Layout, Status> {
    let scaled = scaled_dim(envelope)?;
    Ok(Layout::of::<Model>()
        .then::<f32>(model_scalars(envelope)? + 2 * envelope.calibration_count())
        .then::<f32>(Scaler::scalars_len(scaled))
        .then::<f32>(scaled))
}

/// Scalars of the model's storage: postcard writes each `f32` in 4 bytes, so the payload
/// bounds the scalars the model holds — except a novelty detector's, which adds a norm per
/// centre to its payload's (`NoveltyModel::scalars_in`, at most `len/(dim + 1)` bytes more).
fn model_scalars(envelope: &Envelope<'_>) -> Result<usize, Status> {
    match envelope.kind {
        ModelKind::Novelty => Ok(NoveltyModel::scalars_in::<f32>(envelope)?),
        _ => Ok(envelope.payload.len() / f32::BYTES + 1),
    }
}

/// Features of the model's scaler, 0 without one; a dimension the section's bytes cannot
/// hold is a corrupted model.
fn scaled_dim(envelope: &Envelope<'_>) -> Result<usize, Status> {
    let dim = Scaler::envelope_dim(envelope)?.unwrap_or(0);
    if dim > envelope.scaler.len() / f32::BYTES {
        return Err(Status::ModelCorrupted);
    }
    Ok(dim)
}

/// Decodes the model of `envelope` into `work`.
fn open(envelope: &Envelope<'_>, work: &mut Work) -> Result<Model, Status> {
    let scalars = model_scalars(envelope)?;
    let (storage, calibration) = work.take::<f32>(scalars + 2 * envelope.calibration_count())?.split_at_mut(scalars);
    for (pair, sigmoid) in calibration.chunks_exact_mut(2).zip(envelope.calibration_iter()) {
        pair.copy_from_slice(&[f32::from_f64(sigmoid.a), f32::from_f64(sigmoid.b)]);
    }
    let kind = match envelope.kind {
        ModelKind::LinearSvm => Kind::Linear(LinearModel::from_envelope_in(envelope, storage).map_err(decoding)?),
        ModelKind::Slkl => Kind::Slkl(Predictor::from_envelope_in(envelope, storage).map_err(decoding)?),
        ModelKind::ReducedSvm => {
            Kind::Reduced(ReducedKernelModel::from_envelope_in(envelope, storage).map_err(decoding)?)
        }
        ModelKind::Novelty => Kind::Novelty(NoveltyModel::from_envelope_in(envelope, storage).map_err(decoding)?),
        _ => return Err(Status::ModelUnsupported),
    };
    let scaled = scaled_dim(envelope)?;
    let storage = work.take::<f32>(Scaler::scalars_len(scaled))?;
    let scaler = Scaler::from_envelope_in(envelope, storage).map_err(decoding)?;
    if scaler.as_ref().is_some_and(|s| s.dim() != kind.dim()) {
        return Err(Status::ModelCorrupted);
    }
    // One sigmoid per decision value, or none.
    let outputs = kind.labels().len();
    let outputs = if outputs == 2 { 1 } else { outputs };
    if !calibration.is_empty() && calibration.len() != 2 * outputs {
        return Err(Status::ModelCorrupted);
    }
    let scratch = work.take::<f32>(scaled)?;
    Ok(Model {
        tag: MODEL_TAG,
        kind,
        scaler,
        calibration,
        busy: AtomicBool::new(false),
        scratch_len: scratch.len(),
        scratch: scratch.as_mut_ptr(),
    })
}

/// The status of a payload the core refused. Storage is sized from the payload (or the
/// scaler section's header) so that every valid one fits: a payload that needs more claims
/// sizes its bytes do not hold, and is corrupted.
fn decoding(error: Error) -> Status {
    match error {
        Error::CapacityExceeded { .. } => Status::ModelCorrupted,
        other => other.into(),
    }
}

impl Kind {
    fn dim(&self) -> usize {
        match self {
            Kind::Linear(m) => m.dim(),
            Kind::Slkl(m) => m.dim(),
            Kind::Reduced(m) => m.dim(),
            Kind::Novelty(m) => m.dim(),
        }
    }

    fn predict(&self, x: &[f32]) -> Result<f32, Error> {
        match self {
            Kind::Linear(m) => m.predict(Row::Dense(x)),
            Kind::Slkl(m) => m.predict(x),
            Kind::Reduced(m) => m.predict(x),
            Kind::Novelty(m) => m.predict(x),
        }
    }

    /// A novelty detector's score; `InvalidParam` for another model.
    fn score(&self, x: &[f32]) -> Result<f32, Error> {
        match self {
            Kind::Novelty(m) => m.score(x),
            _ => Err(Error::InvalidParam { name: "model" }),
        }
    }

    /// A classifier's labels in the order of its decision values (empty for the others).
    fn labels(&self) -> &[f32] {
        match self {
            Kind::Linear(m) => m.labels(),
            Kind::Reduced(m) => m.labels(),
            Kind::Slkl(_) | Kind::Novelty(_) => &[],
        }
    }

    /// A classifier's decision values into `out` (its outputs' number of values);
    /// `InvalidParam` for another model.
    fn decide(&self, x: &[f32], out: &mut [f32]) -> Result<(), Error> {
        match self {
            Kind::Linear(m) => {
                let row = Row::Dense(x);
                for (c, value) in out.iter_mut().enumerate() {
                    *value = m.decision(c, row)?;
                }
                Ok(())
            }
            Kind::Reduced(m) => m.decision_values(x, out),
            Kind::Slkl(_) | Kind::Novelty(_) => Err(Error::InvalidParam { name: "model" }),
        }
    }
}

impl Model {
    /// The prediction for `x`, standardised first when the model carries a scaler.
    fn predict(&self, x: &[f32]) -> Result<f32, Status> {
        self.on_row(x, Kind::predict)
    }

    /// A novelty detector's score of `x`, standardised first as for a prediction.
    fn score(&self, x: &[f32]) -> Result<f32, Status> {
        self.on_row(x, Kind::score)
    }

    /// A classifier's decision values for `x` into `out`, standardised first as for a
    /// prediction.
    fn decide(&self, x: &[f32], out: &mut [f32]) -> Result<(), Status> {
        self.on_row(x, |kind, row| kind.decide(row, out))
    }

    /// `compute` on `x`, standardised first when the model carries a scaler.
    fn on_row<R>(&self, x: &[f32], compute: impl FnOnce(&Kind, &[f32]) -> Result<R, Error>) -> Result<R, Status> {
        let Some(scaler) = &self.scaler else {
            return Ok(compute(&self.kind, x)?);
        };
        if x.len() != self.scratch_len {
            return Err(Status::DimensionMismatch);
        }
        if !take(&self.busy) {
            return Err(Status::Busy);
        }
        // SAFETY: the scratch row is `scratch_len` floats of the work memory that only a
        // holder of `busy` touches, and this call holds it until the end of the block.
        let row = unsafe { core::slice::from_raw_parts_mut(self.scratch, self.scratch_len) };
        row.copy_from_slice(x);
        let value = scaler.transform(row).and_then(|()| compute(&self.kind, row));
        self.busy.store(false, Ordering::Release);
        Ok(value?)
    }

    fn info(&self) -> ModelInfo {
        let (kind, centres, outputs) = match &self.kind {
            Kind::Linear(m) => (ModelKind::LinearSvm, 0, m.outputs()),
            Kind::Slkl(m) => (ModelKind::Slkl, m.len(), 0),
            Kind::Reduced(m) => (ModelKind::ReducedSvm, m.centres_len(), m.outputs()),
            Kind::Novelty(m) => (ModelKind::Novelty, m.centres_len(), 0),
        };
        let (dim, classes, scaled) = (self.kind.dim(), self.kind.labels().len(), self.scaler.is_some());
        let probabilities = !self.calibration.is_empty();
        ModelInfo {
            kind: kind as u32,
            dim,
            centres,
            is_classifier: outputs > 0,
            classes,
            outputs,
            scaled,
            probabilities,
        }
    }
}

/// Takes the flag `busy` when it is free: `true` then, `false` when another call holds it.
#[cfg(target_has_atomic = "8")]
fn take(busy: &AtomicBool) -> bool {
    !busy.swap(true, Ordering::Acquire)
}

/// Takes the flag `busy` when it is free (module doc): the core has no compare-and-swap, so
/// the load and the store run with interrupts masked, which nothing on this core can come
/// between.
#[cfg(all(target_arch = "arm", not(target_has_atomic = "8")))]
fn take(busy: &AtomicBool) -> bool {
    cortex_m::interrupt::free(|_| {
        let free = !busy.load(Ordering::Acquire);
        if free {
            busy.store(true, Ordering::Relaxed);
        }
        free
    })
}
