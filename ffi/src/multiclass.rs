//! `kestrel_multiclass`: `k` classes learned on the device, one windowed linear SVM per
//! class against the rest (one-vs-rest: LIBLINEAR's multi-class scheme, and `kestrel stream
//! --learner svm`'s beyond two classes), each the core's [`OnlineSvm`] as `kestrel_svm`
//! runs it, in caller memory.
//!
//! Classes are numbered `0 … k−1` (`k ≥ 3`; two classes are `kestrel_svm`'s). Each
//! [`kestrel_multiclass_learn`] puts the sample into every class's window — labelled +1 in
//! its own class's, −1 in the others' — and each SVM takes coordinate steps until its
//! window meets LIBLINEAR's stopping rule at `epsilon` or `steps_per_sample` steps were
//! taken; [`kestrel_multiclass_predict`] gives the class of the largest decision value
//! (the lowest such class on a tie).
//!
//! **How sure it is.** Before a sample is learned, each class's decision value for it
//! teaches that class's Platt sigmoid (the core's `calibration::OnlineSigmoid`: one Newton
//! step a sample, the target smoothed by the class's count against the others', as
//! `kestrel stream --probabilities` fits one-vs-rest sigmoids), and
//! [`kestrel_multiclass_probabilities`] gives every class's sigmoid of its value,
//! normalised to sum to 1 (`calibration::probabilities`, as a model file's probabilities
//! are worked out). [`kestrel_multiclass_save`] writes a linear one-vs-rest model file
//! (labels `0 … k−1`) that `kestrel predict` and `kestrel_model_open` read, with the
//! sigmoids once every class was learned, so `kestrel predict --probabilities` and
//! `kestrel_model_probabilities` give the device's probabilities.
//!
//! [`kestrel_multiclass_checkpoint`] writes the whole state and
//! [`kestrel_multiclass_resume`] continues from it bit for bit, after a reset
//! ([`crate::checkpoint`]); on a host `kestrel inspect` reads it and `kestrel import` makes
//! it the model file the save would write.
//!
//! A sample is one row for all the SVMs: they differ only in its label, and the core
//! refuses a row (a wrong dimension, a value not finite, a squared norm that overflows)
//! whatever its label, so the first SVM's checks are the whole call's and a refused
//! sample changes nothing.
//!
//! Memory: `KESTREL_MULTICLASS_WORK_BYTES(window, dim, memory, classes)` — the object header,
//! a record per class (its SVM's handle, its sigmoid and its count, in
//! [`KESTREL_MULTICLASS_CLASS_BYTES`] on every target), `k` windows (each as
//! `kestrel_svm`'s: [`OnlineSvm::scalars_len`] floats, or
//! [`OnlineSvm::scalars_len_remembering`] with a memory) and the saved model's room: its
//! weights ([`LinearModel::scalars_len`]`(dim, k)` floats) and `k` sigmoids of two
//! doubles. Time: a sample costs `k` decision values and
//! `k` windowed SVMs' steps; a prediction `k` decision values. A saved model takes at most
//! `KESTREL_MULTICLASS_MODEL_BYTES(dim, classes)` bytes, plus the scaler's section when one
//! is given.

use core::ffi::c_void;

use kestrel_core::calibration::{self, OnlineSigmoid, Sigmoid};
use kestrel_core::dcd::{self, LinearModel, OnlineSvm, OnlineSvmState, Row};
use kestrel_core::device_checkpoint::DeviceObject;
use kestrel_core::{Real, Rng};
use serde::{Deserialize, Serialize};

use crate::checkpoint::{self, Described, Reader};
use crate::memory::{self, Layout, Object, Sizes, Tag, Work};
use crate::status::status_of;
use crate::svm::{self, SvmConfig};
use crate::{LearnerState, Status, save, scaler};

/// Bytes reserved for a multi-class object's header on every target.
pub const KESTREL_MULTICLASS_OBJECT_BYTES: usize = 192;

/// Bytes reserved for each class's record on every target: its SVM's handle, its sigmoid
/// and its count.
pub const KESTREL_MULTICLASS_CLASS_BYTES: usize = 192;

/// The most classes a multi-class object takes.
pub const KESTREL_MULTICLASS_MAX_CLASSES: u32 = 256;

/// Bytes each class adds to a checkpoint besides its window's floats: its SVM's state (nine
/// machine words, each at most 10 bytes as postcard writes them, and four floats), its
/// sigmoid's five floats and its count (at most 10 bytes).
pub const KESTREL_MULTICLASS_CLASS_CHECKPOINT_BYTES: usize = 160;

/// "KMCS".
const MULTICLASS_TAG: Tag = Tag(0x5343_4D4B);

/// The configuration of a multi-class learner; start from
/// [`kestrel_multiclass_default_config`] and change what you need.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct MulticlassConfig {
    /// Every class's windowed SVM, as a `kestrel_svm`'s (its `seed` orders the steps of all).
    pub svm: SvmConfig,
    /// The classes `k`, `3 ≤ k ≤ KESTREL_MULTICLASS_MAX_CLASSES`, numbered `0 … k−1`.
    pub classes: u32,
}

impl Sizes for MulticlassConfig {
    fn work_bytes(&self) -> usize {
        check(self).map_or(0, |_| layout(self).bytes())
    }

    fn checkpoint_bytes(&self) -> usize {
        check(self).map_or(0, |_| {
            let classes = self.classes as usize;
            let per_class =
                KESTREL_MULTICLASS_CLASS_CHECKPOINT_BYTES.saturating_add(4 * svm::window_scalars(&self.svm));
            checkpoint::bound(0, 0).saturating_add(classes.saturating_mul(per_class))
        })
    }

    fn records_bytes(&self) -> usize {
        check(self).map_or(0, |_| (self.classes as usize).saturating_mul(KESTREL_MULTICLASS_CLASS_BYTES))
    }
}

/// A class's windowed SVM, the sigmoid of its decision values and the samples of it
/// learned.
struct Class {
    svm: OnlineSvm<f32, &'static mut [f32]>,
    sigmoid: OnlineSigmoid<f32>,
    count: u64,
}

/// A multi-class learner created by [`kestrel_multiclass_create`]. Opaque to C.
#[repr(C)]
pub struct Multiclass {
    tag: Tag,
    /// Coordinate steps of the last sample learned, over the classes' SVMs.
    last_steps: u32,
    config: MulticlassConfig,
    samples_seen: u64,
    rng: Rng,
    classes: &'static mut [Class],
    /// Storage of the saved model's weights, and of its sigmoids.
    model: &'static mut [f32],
    sigmoids: &'static mut [Sigmoid],
}

// SAFETY: `Multiclass` is `#[repr(C)]` with its tag first, and its constructors write
// `MULTICLASS_TAG`.
unsafe impl Object for Multiclass {
    const TAG: Tag = MULTICLASS_TAG;
    const BYTES: usize = KESTREL_MULTICLASS_OBJECT_BYTES;
}

const _: () = assert!(size_of::<Class>() <= KESTREL_MULTICLASS_CLASS_BYTES);

/// `kestrel_svm_default_config(window, dim)` for each of `classes` classes.
#[unsafe(no_mangle)]
pub extern "C" fn kestrel_multiclass_default_config(window: u32, dim: u32, classes: u32) -> MulticlassConfig {
    MulticlassConfig { svm: svm::kestrel_svm_default_config(window, dim), classes }
}

/// The checked hyper-parameters of `config`'s SVMs, once its classes are possible.
fn check(config: &MulticlassConfig) -> Result<dcd::ValidParams<f32>, Status> {
    if !(3..=KESTREL_MULTICLASS_MAX_CLASSES).contains(&config.classes) {
        return Err(Status::InvalidParam);
    }
    svm::params(&config.svm)
}

fn layout(config: &MulticlassConfig) -> Layout {
    let classes = config.classes as usize;
    Layout::of::<Multiclass>()
        .then::<f32>(classes.saturating_mul(svm::window_scalars(&config.svm)))
        .then_slots(classes, KESTREL_MULTICLASS_CLASS_BYTES)
        .then::<f32>(LinearModel::scalars_len(config.svm.dim as usize, classes))
        .then::<Sigmoid>(classes)
}

/// The windows' storage of `config` carved from `work[0..work_len]`, one slice per class in
/// turn by [`Windows::next`], then the records and the model's room (the order of
/// [`layout`]).
struct Windows {
    rest: &'static mut [f32],
    each: usize,
}

impl Windows {
    /// The next class's window storage.
    fn next(&mut self) -> Result<&'static mut [f32], Status> {
        let rest = core::mem::take(&mut self.rest);
        let (window, rest) = rest.split_at_mut_checked(self.each).ok_or(Status::BufferTooSmall)?;
        self.rest = rest;
        Ok(window)
    }
}

/// The work of a learner of `config` in `work[0..work_len]`: the work being carved and the
/// windows' storage (the records and the model's room follow).
///
/// # Safety
/// As [`Work::new`].
unsafe fn carve(config: &MulticlassConfig, work: *mut c_void, work_len: usize) -> Result<(Work, Windows), Status> {
    // SAFETY: as this function's contract.
    let mut work = unsafe { Work::new::<Multiclass>(work, work_len, layout(config))? };
    let each = svm::window_scalars(&config.svm);
    let rest = work.take::<f32>((config.classes as usize).saturating_mul(each))?;
    Ok((work, Windows { rest, each }))
}

/// The saved model's room, after the records: its weights and its sigmoids.
fn model_room(
    work: &mut Work,
    config: &MulticlassConfig,
) -> Result<(&'static mut [f32], &'static mut [Sigmoid]), Status> {
    let classes = config.classes as usize;
    Ok((work.take::<f32>(LinearModel::scalars_len(config.svm.dim as usize, classes))?, work.take::<Sigmoid>(classes)?))
}

/// The work bytes of a learner of `*config`, 0 for a null or invalid configuration.
///
/// # Safety
/// `config` is null or points to a readable `kestrel_multiclass_config`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn kestrel_multiclass_work_bytes(config: *const MulticlassConfig) -> usize {
    // SAFETY: as this function's contract.
    unsafe { memory::read(config) }.map_or(0, |config| config.work_bytes())
}

/// Creates an empty learner of `*config` in `work[0..work_len]` (aligned to
/// `KESTREL_ALIGN`, at least [`kestrel_multiclass_work_bytes`] long) and writes its handle
/// to `*out` (only on success).
///
/// Errors: `NULL_POINTER`, `MISALIGNED`, `BUFFER_TOO_SMALL`, `INVALID_PARAM` (fewer than 3
/// or more than `KESTREL_MULTICLASS_MAX_CLASSES` classes, or what `kestrel_svm_create`
/// refuses of the SVMs' configuration).
///
/// # Safety
/// `config` is null or points to a readable configuration; `work` is null or points to
/// `work_len` bytes that stay valid, and are used for nothing else, while the learner is
/// used; `out` is null or points to a writable pointer.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn kestrel_multiclass_create(
    config: *const MulticlassConfig,
    work: *mut c_void,
    work_len: usize,
    out: *mut *mut Multiclass,
) -> Status {
    status_of((|| {
        memory::check_pointer(out)?;
        // SAFETY: as this function's contract.
        let config = unsafe { memory::read(config)? };
        let params = check(&config)?;
        // SAFETY: as this function's contract.
        let (mut work, mut windows) = unsafe { carve(&config, work, work_len)? };
        let classes = work.take_made(config.classes as usize, KESTREL_MULTICLASS_CLASS_BYTES, |_| {
            let svm = svm::empty_window(&config.svm, params, windows.next()?)?;
            Ok(Class { svm, sigmoid: OnlineSigmoid::default(), count: 0 })
        })?;
        let (model, sigmoids) = model_room(&mut work, &config)?;
        let rng = Rng::seed_from_u64(config.svm.seed);
        let object =
            Multiclass { tag: MULTICLASS_TAG, last_steps: 0, config, samples_seen: 0, rng, classes, model, sigmoids };
        // SAFETY: checked non-null and aligned above; writable by the contract.
        unsafe { memory::write(out, work.finish(object)) }
    })())
}

/// Learns the sample `(x[0..dim], class)`, `class` in `0 … k−1`: it enters every class's
/// window, then each SVM steps until convergence or `steps_per_sample`; the decision
/// values the SVMs gave it before teach their sigmoids (module doc).
///
/// Errors: `NULL_POINTER`, `MISALIGNED`, `WRONG_OBJECT`, `DIMENSION_MISMATCH`,
/// `INVALID_LABEL` (a class outside `0 … k−1`), `NON_FINITE`; the learner is unchanged
/// then.
///
/// # Safety
/// `learner` is null or a handle [`kestrel_multiclass_create`] or
/// [`kestrel_multiclass_resume`] returned, used by no other call meanwhile; `x` is null or
/// points to `dim` readable floats.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn kestrel_multiclass_learn(
    learner: *mut Multiclass,
    x: *const f32,
    dim: usize,
    class: i32,
) -> Status {
    status_of((|| {
        // SAFETY: as this function's contract.
        let (learner, x) = unsafe { (memory::object_mut(learner)?, memory::floats(x, dim)?) };
        let own = usize::try_from(class).ok().filter(|&c| c < learner.classes.len()).ok_or(Status::InvalidLabel)?;
        learner.learn(Row::Dense(x), own)
    })())
}

impl Multiclass {
    /// [`kestrel_multiclass_learn`] of a checked class.
    fn learn(&mut self, row: Row<'_, f32>, own: usize) -> Result<(), Status> {
        let label = |c: usize| if c == own { 1 } else { -1 };
        let first = self.classes.first_mut().ok_or(Status::InvalidParam)?;
        // The first SVM's checks are the sample's (module doc): nothing changes before them.
        let first_value = first.svm.decision(row)?;
        let mut steps = first.svm.push(row, label(0), &mut self.rng)?;
        if let Some(class) = self.classes.get_mut(own) {
            class.count = class.count.saturating_add(1);
        }
        // Every sample learned counts in one class: the counts sum to the samples.
        let total = self.samples_seen.saturating_add(1);
        for (c, class) in self.classes.iter_mut().enumerate() {
            let value = if c == 0 {
                first_value
            } else {
                let value = class.svm.decision(row)?;
                steps += class.svm.push(row, label(c), &mut self.rng)?;
                value
            };
            let target = calibration::target(c == own, class.count, total.saturating_sub(class.count));
            class.sigmoid.learn(value, f32::from_f64(target));
        }
        self.samples_seen = self.samples_seen.saturating_add(1);
        self.last_steps = u32::try_from(steps).unwrap_or(u32::MAX);
        Ok(())
    }

    /// Every class's decision value for `row`, written to `values[0..k]`.
    fn decisions(&self, row: Row<'_, f32>, values: &mut [f32]) -> Result<(), Status> {
        for (value, class) in values.iter_mut().zip(self.classes.iter()) {
            *value = class.svm.decision(row)?;
        }
        Ok(())
    }
}

/// Predicts the class of `x[0..dim]`, the one of the largest decision value (the lowest
/// such class on a tie), and writes it to `*class`.
///
/// Errors: `NULL_POINTER`, `MISALIGNED`, `WRONG_OBJECT`, `DIMENSION_MISMATCH`, `NON_FINITE`.
///
/// # Safety
/// `learner` is null or a learner's handle; `x` is null or points to `dim` readable
/// floats; `class` is null or points to a writable `int32_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn kestrel_multiclass_predict(
    learner: *const Multiclass,
    x: *const f32,
    dim: usize,
    class: *mut i32,
) -> Status {
    status_of((|| {
        memory::check_pointer(class)?;
        // SAFETY: as this function's contract.
        let (learner, x) = unsafe { (memory::object(learner)?, memory::floats(x, dim)?) };
        let mut best = (0usize, f32::NEG_INFINITY);
        for (c, candidate) in learner.classes.iter().enumerate() {
            let value = candidate.svm.decision(Row::Dense(x))?;
            if value > best.1 {
                best = (c, value);
            }
        }
        // SAFETY: as this function's contract.
        unsafe { memory::write(class, i32::try_from(best.0).unwrap_or(i32::MAX)) }
    })())
}

/// Writes each class's probability for `x[0..dim]` to `out[0..k]` (`k` the classes, in
/// their order): every class's sigmoid of its decision value, normalised to sum to 1
/// (module doc); uniform before any sample.
///
/// Errors: `NULL_POINTER`, `MISALIGNED`, `WRONG_OBJECT`, `DIMENSION_MISMATCH`,
/// `NON_FINITE`, `BUFFER_TOO_SMALL` (`out_len` below the classes); `out` is written only
/// on success.
///
/// # Safety
/// `learner` is null or a learner's handle; `x` is null or points to `dim` readable
/// floats; `out` is null or points to `out_len` writable floats.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn kestrel_multiclass_probabilities(
    learner: *const Multiclass,
    x: *const f32,
    dim: usize,
    out: *mut f32,
    out_len: usize,
) -> Status {
    status_of((|| {
        // SAFETY: as this function's contract.
        let (learner, x) = unsafe { (memory::object(learner)?, memory::floats(x, dim)?) };
        // SAFETY: as this function's contract.
        let out = unsafe { memory::floats_mut(out, out_len)? };
        let values = out.get_mut(..learner.classes.len()).ok_or(Status::BufferTooSmall)?;
        // The first class's decision checks the row before any value is written.
        learner.decisions(Row::Dense(x), values)?;
        calibration::probabilities(learner.classes.iter().map(|c| c.sigmoid.sigmoid()), values)?;
        Ok(())
    })())
}

/// Writes the learner's state to `*out`: samples learned, samples in the windows, 0 active
/// centres, whether every class's window met the stopping rule, and the coordinate steps
/// the last sample took over all the classes' SVMs.
///
/// # Safety
/// `learner` is null or a learner's handle; `out` is null or points to a writable
/// `kestrel_learner_state`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn kestrel_multiclass_state(learner: *const Multiclass, out: *mut LearnerState) -> Status {
    status_of((|| {
        // SAFETY: as this function's contract.
        let learner = unsafe { memory::object(learner)? };
        let state = LearnerState {
            samples_seen: learner.samples_seen,
            window_len: learner.classes.first().map_or(0, |class| class.svm.len()),
            active_centres: 0,
            target_mean: 0.0,
            converged: learner.classes.iter().all(|class| class.svm.converged()),
            last_steps: learner.last_steps,
        };
        // SAFETY: as this function's contract.
        unsafe { memory::write(out, state) }
    })())
}

/// Writes the learner's one-vs-rest linear model (labels `0 … k−1`) — with its classes'
/// sigmoids once every class was learned, and `scaler`'s statistics when `scaler` is not
/// null — to `out[0..out_len]` and its length to `*written`; when the buffer is too small,
/// `*written` receives the length needed and the status is `BUFFER_TOO_SMALL`.
///
/// # Safety
/// `learner` as for [`kestrel_multiclass_learn`]; `scaler` is null or a scaler handle;
/// `out` is null or points to `out_len` writable bytes; `written` is null or points to a
/// writable `size_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn kestrel_multiclass_save(
    learner: *mut Multiclass,
    scaler: *const scaler::Scaler,
    out: *mut u8,
    out_len: usize,
    written: *mut usize,
) -> Status {
    status_of((|| {
        // SAFETY: as this function's contract.
        let learner = unsafe { memory::object_mut(learner)? };
        let Multiclass { config, classes, model, sigmoids, .. } = learner;
        let dim = config.svm.dim as usize;
        let mut linear = LinearModel::new_in(&mut **model, dim, classes.len(), config.svm.bias)?;
        for (c, class) in classes.iter().enumerate() {
            linear.set_weights(c, class.svm.weights(), class.svm.bias_weight())?;
        }
        let calibrated = classes.iter().all(|class| class.count > 0);
        for (sigmoid, class) in sigmoids.iter_mut().zip(classes.iter()) {
            *sigmoid = class.sigmoid.sigmoid();
        }
        let sigmoids = if calibrated { &sigmoids[..] } else { &[] };
        // SAFETY: as this function's contract.
        unsafe { save::save(&linear, dim, sigmoids, scaler, out, out_len, written) }
    })())
}

/// What a checkpoint of a [`Multiclass`] holds first; each class's [`ClassCheckpoint`]
/// and window floats follow, in order.
#[derive(Serialize, Deserialize)]
pub(crate) struct MulticlassCheckpoint {
    pub(crate) config: MulticlassConfig,
    samples_seen: u64,
    rng: [u64; 4],
}

/// A class's part of a checkpoint, before its window's floats.
#[derive(Serialize, Deserialize)]
struct ClassCheckpoint {
    state: OnlineSvmState<f32>,
    sigmoid: OnlineSigmoid<f32>,
    count: u64,
}

/// What the checkpoint `reader` opened holds, from its header.
pub(crate) fn describe(reader: &mut Reader<'_>) -> Result<Described, Status> {
    let header: MulticlassCheckpoint = reader.value()?;
    Ok(Described::Multiclass { config: header.config, samples_seen: header.samples_seen })
}

/// The most bytes a checkpoint of a learner of `*config` takes (the windows' floats,
/// `KESTREL_MULTICLASS_CLASS_CHECKPOINT_BYTES` a class and
/// `KESTREL_CHECKPOINT_HEADER_BYTES`; `KESTREL_MULTICLASS_CHECKPOINT_BYTES(window, dim,
/// memory, classes)` at compile time), 0 for a null or invalid configuration.
///
/// # Safety
/// `config` is null or points to a readable `kestrel_multiclass_config`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn kestrel_multiclass_checkpoint_bytes(config: *const MulticlassConfig) -> usize {
    // SAFETY: as this function's contract.
    unsafe { memory::read(config) }.map_or(0, |config| config.checkpoint_bytes())
}

/// Writes the learner's whole state — its configuration, every class's window, `w`,
/// memory, pass under way, sigmoid and count, and the random generator — to
/// `out[0..out_len]` and its length to `*written`, for [`kestrel_multiclass_resume`] after a
/// reset; when the buffer is too small, `*written` receives the length needed and the
/// status is `BUFFER_TOO_SMALL`. Copied off the device, `kestrel inspect` reads it and
/// `kestrel import` makes it the model file [`kestrel_multiclass_save`] would write.
///
/// Errors: `NULL_POINTER`, `MISALIGNED`, `WRONG_OBJECT`, `BUFFER_TOO_SMALL`, `NUMERICAL` (a
/// class's numerics broke down on values near the range of `float` and the state would not
/// resume: keep the checkpoint you have; nothing is written).
///
/// # Safety
/// `learner` is null or a learner's handle; `out` is null or points to `out_len` writable
/// bytes (null with `out_len` = 0 asks for the length); `written` is null or points to a
/// writable `size_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn kestrel_multiclass_checkpoint(
    learner: *const Multiclass,
    out: *mut u8,
    out_len: usize,
    written: *mut usize,
) -> Status {
    status_of((|| {
        // SAFETY: as this function's contract.
        let learner = unsafe { memory::object(learner)? };
        for class in learner.classes.iter() {
            class.svm.check_restorable().map_err(|_| Status::Numerical)?;
        }
        let header = MulticlassCheckpoint {
            config: learner.config,
            samples_seen: learner.samples_seen,
            rng: learner.rng.state(),
        };
        // SAFETY: as this function's contract.
        unsafe {
            checkpoint::write(DeviceObject::Multiclass, out, out_len, written, |writer| {
                writer.value(&header)?;
                for class in learner.classes.iter() {
                    let part = ClassCheckpoint { state: class.svm.state(), sigmoid: class.sigmoid, count: class.count };
                    writer.value(&part)?;
                    writer.floats(class.svm.storage());
                }
                Ok(())
            })
        }
    })())
}

/// Rebuilds in `work[0..work_len]` the learner a checkpoint of
/// [`kestrel_multiclass_checkpoint`] holds, and writes its handle to `*out` (only on
/// success): it continues exactly as the saved learner would have. `config` must be the
/// configuration the learner was created with.
///
/// Errors: `NULL_POINTER`, `MISALIGNED`, `BUFFER_TOO_SMALL` (work shorter than
/// [`kestrel_multiclass_work_bytes`]), `INVALID_PARAM` (`config`), `CONFIG_MISMATCH` (a
/// checkpoint of another configuration), `MODEL_TRUNCATED`, `MODEL_CORRUPTED`,
/// `MODEL_FOREIGN` (not a checkpoint of a `kestrel_multiclass`), `MODEL_UNSUPPORTED`.
/// Whatever the work buffer held is gone after a failure past the configuration's checks.
///
/// # Safety
/// `config` is null or points to a readable configuration; `bytes` is null or points to
/// `len` readable bytes outside `work` (read while `work` is written); `work` and `out` as
/// for [`kestrel_multiclass_create`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn kestrel_multiclass_resume(
    config: *const MulticlassConfig,
    bytes: *const u8,
    len: usize,
    work: *mut c_void,
    work_len: usize,
    out: *mut *mut Multiclass,
) -> Status {
    status_of((|| {
        memory::check_pointer(out)?;
        // SAFETY: as this function's contract.
        let config = unsafe { memory::read(config)? };
        let params = check(&config)?;
        // SAFETY: as this function's contract.
        let (mut reader, header) = unsafe {
            checkpoint::open(bytes, len, DeviceObject::Multiclass, |h: &MulticlassCheckpoint| h.config == config)?
        };
        let rng = Rng::from_state(header.rng).map_err(|_| Status::ModelCorrupted)?;
        // SAFETY: as this function's contract.
        let (mut work, mut windows) = unsafe { carve(&config, work, work_len)? };
        let classes = work.take_made(config.classes as usize, KESTREL_MULTICLASS_CLASS_BYTES, |_| {
            resumed_class(&mut reader, &config.svm, params, windows.next()?)
        })?;
        reader.finish()?;
        let (model, sigmoids) = model_room(&mut work, &config)?;
        let samples_seen = header.samples_seen;
        let object =
            Multiclass { tag: MULTICLASS_TAG, last_steps: 0, config, samples_seen, rng, classes, model, sigmoids };
        // SAFETY: checked non-null and aligned above; writable by the contract.
        unsafe { memory::write(out, work.finish(object)) }
    })())
}

/// The next class `reader` holds, its window read into `scalars`, once its shape is
/// `config`'s and its state and sigmoid check.
fn resumed_class(
    reader: &mut Reader<'_>,
    config: &SvmConfig,
    params: dcd::ValidParams<f32>,
    scalars: &'static mut [f32],
) -> Result<Class, Status> {
    let ClassCheckpoint { state, sigmoid, count } = reader.value()?;
    svm::check_shape(&state, config)?;
    if !sigmoid.is_finite() {
        return Err(Status::ModelCorrupted);
    }
    reader.floats(scalars)?;
    let svm = OnlineSvm::from_state_in(scalars, params, state).map_err(|_| Status::ModelCorrupted)?;
    Ok(Class { svm, sigmoid, count })
}

#[cfg(test)]
mod tests {
    use std::vec;
    use std::vec::Vec;

    use super::*;
    use crate::model::{Model, kestrel_model_open, kestrel_model_predict, kestrel_model_probabilities};
    use crate::test_support::{work, written_by};

    const CLASSES: usize = 4;

    /// Sample `t` of four classes in the plane: a blob around each corner of a square,
    /// overlapping a little.
    fn sample(t: u16) -> ([f32; 2], i32) {
        let class = i32::from(t % 4);
        let corner = [[1.0f32, 1.0], [-1.0, 1.0], [-1.0, -1.0], [1.0, -1.0]][usize::from(t % 4)];
        let jitter = |k: u16| f32::from((t / 4 * k) % 13) / 9.0 - 0.66;
        ([corner[0] + jitter(7), corner[1] + jitter(11)], class)
    }

    fn work_bytes(config: &MulticlassConfig) -> usize {
        // SAFETY: a configuration on the caller's stack.
        unsafe { kestrel_multiclass_work_bytes(config) }
    }

    fn saved(learner: *mut Multiclass) -> Vec<u8> {
        // SAFETY: a live handle; `written_by` gives a writable buffer and length.
        written_by(|out, len, n| unsafe { kestrel_multiclass_save(learner, core::ptr::null(), out, len, n) })
    }

    /// The learner `bytes` resume into `memory` under `config`, or the status refusing it.
    fn resumed(config: &MulticlassConfig, bytes: &[u8], memory: &mut Vec<u64>) -> Result<*mut Multiclass, Status> {
        let needed = work_bytes(config);
        *memory = work(needed);
        let mut out = core::ptr::null_mut();
        // SAFETY: live buffers of the lengths given, `bytes` outside the work.
        let status = unsafe {
            kestrel_multiclass_resume(config, bytes.as_ptr(), bytes.len(), memory.as_mut_ptr().cast(), needed, &mut out)
        };
        if status == Status::Ok { Ok(out) } else { Err(status) }
    }

    /// A learner of `config` in `memory`.
    fn learner(config: &MulticlassConfig, memory: &mut Vec<u64>) -> *mut Multiclass {
        let needed = work_bytes(config);
        *memory = work(needed);
        let mut out = core::ptr::null_mut();
        // SAFETY: `memory` holds `needed` aligned bytes and outlives the learner.
        let status = unsafe { kestrel_multiclass_create(config, memory.as_mut_ptr().cast(), needed, &mut out) };
        assert_eq!(status, Status::Ok);
        out
    }

    /// Learns sample `t`; its status.
    fn learn(learner: *mut Multiclass, t: u16) -> Status {
        let (x, class) = sample(t);
        // SAFETY: a live handle and a row of 2 floats.
        unsafe { kestrel_multiclass_learn(learner, x.as_ptr(), 2, class) }
    }

    fn probabilities(learner: *const Multiclass, x: &[f32; 2]) -> [f32; CLASSES] {
        let mut p = [0.0f32; CLASSES];
        // SAFETY: a live handle, a row of 2 floats and room for every class.
        let status = unsafe { kestrel_multiclass_probabilities(learner, x.as_ptr(), 2, p.as_mut_ptr(), CLASSES) };
        assert_eq!(status, Status::Ok);
        p
    }

    fn checkpoint(learner: *const Multiclass) -> Vec<u8> {
        // SAFETY: a live handle; `written_by` gives a writable buffer and length.
        written_by(|out, len, n| unsafe { kestrel_multiclass_checkpoint(learner, out, len, n) })
    }

    /// The learner is `k` of the core's windowed SVMs driven alike — each sample pushed to
    /// every class's, +1 in its own, the steps drawn from one generator in the classes'
    /// order — with one online sigmoid a class taught the value before the sample; its
    /// prediction is the class of the largest value, its probabilities the sigmoids'
    /// normalised, and it learns the four blobs.
    #[test]
    fn it_is_one_windowed_svm_per_class_driven_alike() {
        let config = kestrel_multiclass_default_config(24, 2, CLASSES as u32);
        let mut memory = Vec::new();
        let multi = learner(&config, &mut memory);
        let params = svm::params(&config.svm).unwrap();
        let decay = dcd::decay_over::<f32>(2000).unwrap();
        let mut reference: Vec<_> = (0..CLASSES)
            .map(|_| {
                let scalars = vec![0.0f32; OnlineSvm::scalars_len_remembering(24, 2)];
                OnlineSvm::remembering_in(scalars, 24, 2, params, 300, decay).unwrap()
            })
            .collect();
        let (mut sigmoids, mut counts) = ([OnlineSigmoid::<f32>::default(); CLASSES], [0u64; CLASSES]);
        let mut rng = Rng::seed_from_u64(config.svm.seed);
        let mut right = 0;
        for t in 0..400u16 {
            let (x, class) = sample(t);
            let own = class as usize;
            let values: Vec<f32> = reference.iter().map(|svm| svm.decision(Row::Dense(&x)).unwrap()).collect();
            let predicted = (0..CLASSES).fold(0, |best, c| if values[c] > values[best] { c } else { best });
            let mut p = values.clone();
            calibration::probabilities(sigmoids.iter().map(|s| s.sigmoid()), &mut p).unwrap();
            let mut ours = -1;
            // SAFETY: a live handle, a row of 2 floats and a writable class.
            assert_eq!(unsafe { kestrel_multiclass_predict(multi, x.as_ptr(), 2, &mut ours) }, Status::Ok);
            assert_eq!((ours as usize, probabilities(multi, &x).to_vec()), (predicted, p), "sample {t}");
            right += usize::from(t >= 200 && predicted == own);
            assert_eq!(learn(multi, t), Status::Ok);
            counts[own] += 1;
            let mut steps = 0;
            for (c, svm) in reference.iter_mut().enumerate() {
                steps += svm.push(Row::Dense(&x), if c == own { 1 } else { -1 }, &mut rng).unwrap();
                let target = calibration::target(c == own, counts[c], counts.iter().sum::<u64>() - counts[c]);
                sigmoids[c].learn(values[c], target as f32);
            }
            let mut state = LearnerState {
                samples_seen: 0,
                window_len: 0,
                active_centres: 7,
                target_mean: 1.0,
                converged: false,
                last_steps: 0,
            };
            // SAFETY: a live handle and a writable state.
            assert_eq!(unsafe { kestrel_multiclass_state(multi, &mut state) }, Status::Ok);
            let converged = reference.iter().all(|svm| svm.converged());
            let expected = (u64::from(t) + 1, reference[0].len(), 0, converged, steps as u32);
            let got = (state.samples_seen, state.window_len, state.active_centres, state.converged, state.last_steps);
            assert_eq!(got, expected, "sample {t}");
        }
        assert!(right >= 190, "{right} of the last 200 right");
    }

    /// The saved model predicts the learner's classes with the learner's probabilities
    /// (`kestrel_model_*`); it carries no probabilities before every class was learned.
    #[test]
    fn the_saved_model_predicts_as_the_learner() {
        let config = kestrel_multiclass_default_config(24, 2, CLASSES as u32);
        let mut memory = Vec::new();
        let multi = learner(&config, &mut memory);
        for t in 0..3 {
            assert_eq!(learn(multi, t), Status::Ok);
        }
        let before = saved(multi);
        for t in 3..300 {
            assert_eq!(learn(multi, t), Status::Ok);
        }
        let saved = saved(multi);
        assert!(saved.len() > before.len(), "the sigmoids once every class was learned");
        assert!(saved.len() <= 4 * CLASSES * (2 + 6) + 64, "KESTREL_MULTICLASS_MODEL_BYTES: {}", saved.len());
        let mut model_memory = work(1 << 14);
        let mut model: *mut Model = core::ptr::null_mut();
        // SAFETY: live buffers of the lengths given.
        let opened = unsafe {
            kestrel_model_open(saved.as_ptr(), saved.len(), model_memory.as_mut_ptr().cast(), 1 << 14, &mut model)
        };
        assert_eq!(opened, Status::Ok);
        for t in 300..340 {
            let (x, _) = sample(t);
            let (mut ours, mut label, mut p) = (-1, -1.0f32, [0.0f32; CLASSES]);
            // SAFETY: live handles, a row of 2 floats and writable outputs.
            unsafe {
                assert_eq!(kestrel_multiclass_predict(multi, x.as_ptr(), 2, &mut ours), Status::Ok);
                assert_eq!(kestrel_model_predict(model, x.as_ptr(), 2, &mut label), Status::Ok);
                assert_eq!(kestrel_model_probabilities(model, x.as_ptr(), 2, p.as_mut_ptr(), CLASSES), Status::Ok);
            }
            assert_eq!(label, ours as f32, "sample {t}");
            let learned = probabilities(multi, &x);
            assert!(learned.iter().zip(p).all(|(a, b)| (a - b).abs() < 1e-6), "{learned:?} {p:?}");
        }
    }

    /// A learner resumed from a checkpoint goes on bit for bit (the same later checkpoint);
    /// a host reads what the checkpoint holds and makes it the model the save writes.
    #[test]
    fn a_checkpoint_resumes_exactly_and_imports() {
        let mut config = kestrel_multiclass_default_config(16, 2, CLASSES as u32);
        config.svm.seed = 9;
        let mut first = Vec::new();
        let multi = learner(&config, &mut first);
        for t in 0..150 {
            assert_eq!(learn(multi, t), Status::Ok);
        }
        let written = checkpoint(multi);
        // SAFETY: `config` is on the stack.
        assert!(written.len() <= unsafe { kestrel_multiclass_checkpoint_bytes(&config) });
        let mut second = Vec::new();
        let again = resumed(&config, &written, &mut second).unwrap();
        assert_eq!(checkpoint(again), written);
        for t in 150..260 {
            assert_eq!((learn(multi, t), learn(again, t)), (Status::Ok, Status::Ok));
        }
        assert_eq!(checkpoint(again), checkpoint(multi));
        let described = crate::checkpoint::describe(&checkpoint(multi)).unwrap();
        assert_eq!(described, Described::Multiclass { config, samples_seen: 260 });
        let bytes = checkpoint(multi);
        let words = crate::import::work_words(&bytes, None).unwrap();
        let mut scratch = vec![0u64; words];
        let mut model = vec![0u8; 4096];
        let len = crate::import::model_of(&bytes, None, &mut scratch, Some(&mut model)).unwrap();
        assert_eq!(model[..len], saved(multi)[..]);
        // Another configuration is refused.
        let mut third = Vec::new();
        let other = MulticlassConfig { classes: 5, ..config };
        assert_eq!(resumed(&other, &bytes, &mut third).unwrap_err(), Status::ConfigMismatch);
    }

    /// Refused calls change nothing and write no output: a class outside `0 … k−1`, a row of
    /// another dimension or not finite, a probability buffer short of the classes; fewer than
    /// three classes or more than the most is no configuration.
    #[test]
    fn refusals_leave_the_learner_as_it_was() {
        let config = kestrel_multiclass_default_config(8, 2, 3);
        let mut memory = Vec::new();
        let multi = learner(&config, &mut memory);
        for t in 0..30 {
            let (x, class) = sample(t);
            // SAFETY: a live handle and a row of 2 floats.
            assert_eq!(unsafe { kestrel_multiclass_learn(multi, x.as_ptr(), 2, class % 3) }, Status::Ok);
        }
        let before = checkpoint(multi);
        let x = [0.5f32, 0.25];
        // SAFETY: a live handle and rows of 2 floats.
        unsafe {
            assert_eq!(kestrel_multiclass_learn(multi, x.as_ptr(), 2, 3), Status::InvalidLabel);
            assert_eq!(kestrel_multiclass_learn(multi, x.as_ptr(), 2, -1), Status::InvalidLabel);
            assert_eq!(kestrel_multiclass_learn(multi, x.as_ptr(), 1, 0), Status::DimensionMismatch);
            assert_eq!(kestrel_multiclass_learn(multi, [f32::NAN, 0.0].as_ptr(), 2, 0), Status::NonFinite);
            assert_eq!(kestrel_multiclass_learn(multi, [3e38f32, 3e38].as_ptr(), 2, 0), Status::NonFinite);
        }
        assert_eq!(checkpoint(multi), before);
        let mut p = [7.0f32; 3];
        // SAFETY: as above; `p` holds 3 floats.
        unsafe {
            assert_eq!(
                kestrel_multiclass_probabilities(multi, x.as_ptr(), 2, p.as_mut_ptr(), 2),
                Status::BufferTooSmall
            );
            assert_eq!(
                kestrel_multiclass_probabilities(multi, [f32::NAN, 0.0].as_ptr(), 2, p.as_mut_ptr(), 3),
                Status::NonFinite
            );
        }
        assert_eq!(p, [7.0; 3]);
        for classes in [0, 1, 2, KESTREL_MULTICLASS_MAX_CLASSES + 1] {
            let config = kestrel_multiclass_default_config(8, 2, classes);
            // SAFETY: `config` is on the stack.
            assert_eq!(unsafe { kestrel_multiclass_work_bytes(&config) }, 0, "{classes}");
            let mut memory = work(1 << 16);
            let mut out = core::ptr::null_mut();
            // SAFETY: `memory` holds 64 KiB of aligned bytes.
            let status = unsafe { kestrel_multiclass_create(&config, memory.as_mut_ptr().cast(), 1 << 16, &mut out) };
            assert_eq!(status, Status::InvalidParam, "{classes}");
        }
    }

    /// The most classes of the smallest windows import: a checkpoint's records are
    /// allowed for beside its bytes.
    #[test]
    fn the_most_classes_import() {
        for memory in [0, 2000] {
            let mut config = kestrel_multiclass_default_config(1, 1, KESTREL_MULTICLASS_MAX_CLASSES);
            config.svm.memory = memory;
            let mut work_memory = Vec::new();
            let multi = learner(&config, &mut work_memory);
            // SAFETY: a live handle and a row of 1 float.
            assert_eq!(unsafe { kestrel_multiclass_learn(multi, [1.0f32].as_ptr(), 1, 7) }, Status::Ok);
            let bytes = checkpoint(multi);
            let words = crate::import::work_words(&bytes, None).unwrap();
            assert!(words * 8 >= work_bytes(&config));
        }
    }
}
