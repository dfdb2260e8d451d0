//! `kestrel_multiclass`: `k` classes learned on the device, one windowed linear SVM per
//! class against the rest (one-vs-rest: LIBLINEAR's multi-class scheme, and `kestrel stream
//! --learner svm`'s beyond two classes) over one window of samples — the core's
//! [`OnlineOneVsRest`], which computes what `k` of `kestrel_svm`'s [`dcd::OnlineSvm`]s would,
//! bit for bit, holding the window's rows once — in caller memory.
//!
//! Classes are numbered `0 … k−1` (`k ≥ 3`; two classes are `kestrel_svm`'s). Each
//! [`kestrel_multiclass_learn`] puts the sample into the window — labelled +1 for its own
//! class's SVM, −1 for the others' — and each class's SVM takes coordinate steps until its
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
//! it the model file the save would write. A checkpoint written before the classes shared
//! their window (revision 0 of its header: a window per class) resumes into the shared
//! window and goes on as the saved learner would have.
//!
//! The core checks a sample (its class, a wrong dimension, a value not finite, a squared
//! norm that overflows) before anything learns from it, so a refused sample changes
//! nothing.
//!
//! Memory: `KESTREL_MULTICLASS_WORK_BYTES(window, dim, memory, classes)` — the object header,
//! the learner's `KESTREL_MULTICLASS_FLOATS(window, dim, memory, classes)` floats
//! ([`OnlineOneVsRest::scalars_len`]: the window's rows, squared norms and classes once,
//! and each class's `α`, weights and memory), two records per class (its pass under way,
//! and its sigmoid and count, in [`KESTREL_MULTICLASS_CLASS_BYTES`] on every target) and
//! the saved model's room: its weights ([`LinearModel::scalars_len`]`(dim, k)` floats) and
//! `k` sigmoids of two doubles. Time: a sample costs `k` decision values and `k` windowed
//! SVMs' steps; a prediction `k` decision values. A saved model takes at most
//! `KESTREL_MULTICLASS_MODEL_BYTES(dim, classes)` bytes, plus the scaler's section when one
//! is given.

use core::ffi::c_void;

use kestrel_core::calibration::{self, OnlineSigmoid, Sigmoid};
use kestrel_core::dcd::{self, LinearModel, OnlineOneVsRest, OnlineOneVsRestState, OnlineSvmState, Row, Sweep};
use kestrel_core::device_checkpoint::DeviceObject;
use kestrel_core::{Real, Rng};
use serde::{Deserialize, Serialize};

use crate::checkpoint::{self, Described, Reader};
use crate::memory::{self, Layout, Object, Sizes, Tag, Work};
use crate::status::status_of;
use crate::svm::{self, SvmConfig};
use crate::{LearnerState, Status, save, scaler};

/// Bytes reserved for a multi-class object's header on every target.
pub const KESTREL_MULTICLASS_OBJECT_BYTES: usize = 320;

/// Bytes reserved for each class's records on every target: its pass under way, and its
/// sigmoid and count, in two slots of 64 bytes.
pub const KESTREL_MULTICLASS_CLASS_BYTES: usize = 128;

/// Bytes of each of a class's two record slots.
const SLOT_BYTES: usize = KESTREL_MULTICLASS_CLASS_BYTES / 2;

/// The most classes a multi-class object takes.
pub const KESTREL_MULTICLASS_MAX_CLASSES: u32 = 256;

/// Bytes each class adds to a checkpoint besides the learner's floats: its pass under way
/// (four machine words, each at most 10 bytes as postcard writes them, and three floats),
/// its sigmoid's five floats and its count (at most 10 bytes).
pub const KESTREL_MULTICLASS_CLASS_CHECKPOINT_BYTES: usize = 96;

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
            let per_class = classes.saturating_mul(KESTREL_MULTICLASS_CLASS_CHECKPOINT_BYTES);
            checkpoint::bound(learner_scalars(self), 0).saturating_add(per_class)
        })
    }

    fn records_bytes(&self) -> usize {
        check(self).map_or(0, |_| (self.classes as usize).saturating_mul(KESTREL_MULTICLASS_CLASS_BYTES))
    }
}

/// The classes' windowed SVMs over one window, in the work.
type Learner = OnlineOneVsRest<f32, &'static mut [f32], &'static mut [Sweep<f32>]>;

/// The sigmoid of a class's decision values and the samples of it learned.
#[derive(Clone, Copy, Default)]
struct Class {
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
    learner: Learner,
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

const _: () = assert!(size_of::<Class>() <= SLOT_BYTES && size_of::<Sweep<f32>>() <= SLOT_BYTES);

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

/// Floats of the learner of `config` ([`OnlineOneVsRest::scalars_len`]).
fn learner_scalars(config: &MulticlassConfig) -> usize {
    let (window, dim) = (config.svm.window as usize, config.svm.dim as usize);
    OnlineOneVsRest::scalars_len(window, dim, config.classes as usize, config.svm.memory != 0)
}

fn layout(config: &MulticlassConfig) -> Layout {
    let classes = config.classes as usize;
    Layout::of::<Multiclass>()
        .then::<f32>(learner_scalars(config))
        .then_slots(classes, SLOT_BYTES)
        .then_slots(classes, SLOT_BYTES)
        .then::<f32>(LinearModel::scalars_len(config.svm.dim as usize, classes))
        .then::<Sigmoid>(classes)
}

/// The work of a learner of `config` in `work[0..work_len]`, carved in the order of
/// [`layout`]: the work (the model's room follows) and the learner's floats, its classes'
/// sweeps and their records, fresh.
///
/// # Safety
/// As [`Work::new`].
unsafe fn carve(config: &MulticlassConfig, work: *mut c_void, work_len: usize) -> Result<Carved, Status> {
    // SAFETY: as this function's contract.
    let mut work = unsafe { Work::new::<Multiclass>(work, work_len, layout(config))? };
    let classes = config.classes as usize;
    let floats = work.take::<f32>(learner_scalars(config))?;
    let sweeps = work.take_made(classes, SLOT_BYTES, |_| Ok(Sweep::new()))?;
    let records = work.take_made(classes, SLOT_BYTES, |_| Ok(Class::default()))?;
    Ok(Carved { work, floats, sweeps, records })
}

/// What [`carve`] gives.
struct Carved {
    work: Work,
    floats: &'static mut [f32],
    sweeps: &'static mut [Sweep<f32>],
    records: &'static mut [Class],
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
        let Carved { work, floats, sweeps, records } = unsafe { carve(&config, work, work_len)? };
        let (window, dim, _, steps, decay) = expected_shape(&config);
        let learner = OnlineOneVsRest::new_in(floats, sweeps, window, dim, params, steps, decay)?;
        let object = Multiclass::finish(work, config, 0, Rng::seed_from_u64(config.svm.seed), learner, records)?;
        // SAFETY: checked non-null and aligned above; writable by the contract.
        unsafe { memory::write(out, object) }
    })())
}

/// Learns the sample `(x[0..dim], class)`, `class` in `0 … k−1`: it enters the window,
/// then each class's SVM steps until convergence or `steps_per_sample`; the decision
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
        let own = usize::try_from(class).map_err(|_| Status::InvalidLabel)?;
        learner.learn(Row::Dense(x), own)
    })())
}

impl Multiclass {
    /// The object of a created or resumed learner: the saved model's room taken from the
    /// rest of `work` (after the records, [`layout`]'s order) and the header written.
    fn finish(
        mut work: Work,
        config: MulticlassConfig,
        samples_seen: u64,
        rng: Rng,
        learner: Learner,
        classes: &'static mut [Class],
    ) -> Result<*mut Multiclass, Status> {
        let (model, sigmoids) = model_room(&mut work, &config)?;
        let (tag, last_steps) = (MULTICLASS_TAG, 0);
        let object = Multiclass { tag, last_steps, config, samples_seen, rng, learner, classes, model, sigmoids };
        Ok(work.finish(object))
    }

    /// [`kestrel_multiclass_learn`]: the sample is checked, each class's decision value
    /// for it teaches the class's sigmoid, then the learner takes it.
    fn learn(&mut self, row: Row<'_, f32>, own: usize) -> Result<(), Status> {
        self.learner.check_sample(row, own)?;
        let own_count = self.classes.get_mut(own).ok_or(Status::InvalidLabel)?;
        own_count.count = own_count.count.saturating_add(1);
        // Every sample learned counts in one class: the counts sum to the samples.
        let total = self.samples_seen.saturating_add(1);
        for (c, class) in self.classes.iter_mut().enumerate() {
            let value = self.learner.decision(row, c)?;
            let target = calibration::target(c == own, class.count, total.saturating_sub(class.count));
            class.sigmoid.learn(value, f32::from_f64(target));
        }
        let steps = self.learner.push(row, own, &mut self.rng)?;
        self.samples_seen = total;
        self.last_steps = u32::try_from(steps).unwrap_or(u32::MAX);
        Ok(())
    }

    /// Every class's decision value for `row`, written to `values[0..k]`.
    fn decisions(&self, row: Row<'_, f32>, values: &mut [f32]) -> Result<(), Status> {
        for (c, value) in values.iter_mut().enumerate() {
            *value = self.learner.decision(row, c)?;
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
        let best = learner.learner.predict(Row::Dense(x))?;
        // SAFETY: as this function's contract.
        unsafe { memory::write(class, i32::try_from(best).unwrap_or(i32::MAX)) }
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
            window_len: learner.learner.len(),
            active_centres: 0,
            target_mean: 0.0,
            converged: learner.learner.converged(),
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
        let Multiclass { config, learner, classes, model, sigmoids, .. } = learner;
        let dim = config.svm.dim as usize;
        let mut linear = LinearModel::new_in(&mut **model, dim, classes.len(), config.svm.bias)?;
        for c in 0..classes.len() {
            let (w, bias_weight) = learner.weights(c).ok_or(Status::InvalidParam)?;
            linear.set_weights(c, w, bias_weight)?;
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

/// What a checkpoint of a [`Multiclass`] holds first. From revision 1 of the header the
/// learner's counters ([`OnlineOneVsRestState`]) follow, then each class's
/// [`ClassCheckpoint`], then the learner's floats; in revision 0 each class's
/// [`WindowCheckpoint`] and its window's floats, in turn.
#[derive(Serialize, Deserialize)]
pub(crate) struct MulticlassCheckpoint {
    pub(crate) config: MulticlassConfig,
    samples_seen: u64,
    rng: [u64; 4],
}

/// A class's part of a checkpoint: its pass under way, its sigmoid and its count.
#[derive(Serialize, Deserialize)]
struct ClassCheckpoint {
    sweep: Sweep<f32>,
    sigmoid: OnlineSigmoid<f32>,
    count: u64,
}

/// A class's part of a checkpoint of revision 0, before its window's floats: its windowed
/// SVM's counters, its sigmoid and its count.
#[derive(Serialize, Deserialize)]
struct WindowCheckpoint {
    state: OnlineSvmState<f32>,
    sigmoid: OnlineSigmoid<f32>,
    count: u64,
}

/// What the checkpoint `reader` opened holds, from its header.
pub(crate) fn describe(reader: &mut Reader<'_>) -> Result<Described, Status> {
    let header: MulticlassCheckpoint = reader.value()?;
    Ok(Described::Multiclass { config: header.config, samples_seen: header.samples_seen })
}

/// The most bytes a checkpoint of a learner of `*config` takes (the learner's floats,
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

/// Writes the learner's whole state — its configuration, the window, every class's `α`,
/// `w`, memory, pass under way, sigmoid and count, and the random generator — to
/// `out[0..out_len]` and its length to `*written`, for [`kestrel_multiclass_resume`] after a
/// reset; when the buffer is too small, `*written` receives the length needed and the
/// status is `BUFFER_TOO_SMALL`. Copied off the device, `kestrel inspect` reads it and
/// `kestrel import` makes it the model file [`kestrel_multiclass_save`] would write.
///
/// Errors: `NULL_POINTER`, `MISALIGNED`, `WRONG_OBJECT`, `BUFFER_TOO_SMALL`, `NUMERICAL` (the
/// learner's numerics broke down on values near the range of `float` and the state would not
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
        learner.learner.check_restorable().map_err(|_| Status::Numerical)?;
        let header = MulticlassCheckpoint {
            config: learner.config,
            samples_seen: learner.samples_seen,
            rng: learner.rng.state(),
        };
        // SAFETY: as this function's contract.
        unsafe {
            checkpoint::write(DeviceObject::Multiclass, out, out_len, written, |writer| {
                writer.value(&header)?;
                writer.value(&learner.learner.state())?;
                for (&sweep, class) in learner.learner.sweeps().iter().zip(learner.classes.iter()) {
                    writer.value(&ClassCheckpoint { sweep, sigmoid: class.sigmoid, count: class.count })?;
                }
                writer.floats(learner.learner.storage());
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
        let carved = unsafe { carve(&config, work, work_len)? };
        let (work, classes, learner) = match reader.revision() {
            0 => window_per_class(&mut reader, &config, params, carved)?,
            _ => shared_window(&mut reader, &config, params, carved)?,
        };
        reader.finish()?;
        let object = Multiclass::finish(work, config, header.samples_seen, rng, learner, classes)?;
        // SAFETY: checked non-null and aligned above; writable by the contract.
        unsafe { memory::write(out, object) }
    })())
}

/// The learner a checkpoint of revision 1 holds after its header, read into the `carved`
/// work once its shape is `config`'s and it checks.
fn shared_window(
    reader: &mut Reader<'_>,
    config: &MulticlassConfig,
    params: dcd::ValidParams<f32>,
    carved: Carved,
) -> Result<(Work, &'static mut [Class], Learner), Status> {
    let Carved { work, floats, sweeps, records } = carved;
    let state: OnlineOneVsRestState<f32> = reader.value()?;
    let shape = (state.window(), state.dim(), state.classes(), state.max_steps_per_arrival(), state.decay());
    if shape != expected_shape(config) {
        return Err(Status::ModelCorrupted);
    }
    for (sweep, record) in sweeps.iter_mut().zip(records.iter_mut()) {
        let part: ClassCheckpoint = reader.value()?;
        *sweep = part.sweep;
        *record = class_record(part.sigmoid, part.count)?;
    }
    reader.floats(floats)?;
    let learner = OnlineOneVsRest::from_state_in(floats, sweeps, params, state).map_err(|_| Status::ModelCorrupted)?;
    Ok((work, records, learner))
}

/// `(window, dim, classes, steps per sample, decay)` of `config`'s learner.
fn expected_shape(config: &MulticlassConfig) -> (usize, usize, usize, usize, Option<f32>) {
    let svm = &config.svm;
    let decay = dcd::decay_over::<f32>(svm.memory as usize);
    (svm.window as usize, svm.dim as usize, config.classes as usize, svm.steps_per_sample as usize, decay)
}

/// A class's record of a checkpoint, once its sigmoid is finite.
fn class_record(sigmoid: OnlineSigmoid<f32>, count: u64) -> Result<Class, Status> {
    if !sigmoid.is_finite() {
        return Err(Status::ModelCorrupted);
    }
    Ok(Class { sigmoid, count })
}

/// The learner a checkpoint of revision 0 holds after its header — a window per class, each
/// `kestrel_svm`'s storage (`w`, the rows, `α`, `Q̄ᵢᵢ`, the labels ±1, the memory) — read
/// into the shared window: the rows of the first class's window (every class's held the
/// same samples in the same slots), each sample's class the one whose label is +1, its
/// `‖x̂‖²` computed again from its row as the learner computes it, and each class's `w`,
/// `α`, memory and pass as they were. It then goes on as the saved learner would have.
fn window_per_class(
    reader: &mut Reader<'_>,
    config: &MulticlassConfig,
    params: dcd::ValidParams<f32>,
    carved: Carved,
) -> Result<(Work, &'static mut [Class], Learner), Status> {
    let Carved { work, floats, sweeps, records } = carved;
    let (window, dim, classes, ..) = expected_shape(config);
    let block = (floats.len() - window * (dim + 2)) / classes;
    let (rows, rest) = floats.split_at_mut(window * dim);
    let (norms, rest) = rest.split_at_mut(window);
    let (stored_classes, blocks) = rest.split_at_mut(window);
    stored_classes.fill(-1.0);
    let mut first: Option<OnlineSvmState<f32>> = None;
    let parts = sweeps.iter_mut().zip(records.iter_mut()).zip(blocks.chunks_exact_mut(block));
    for (c, ((sweep, record), block)) in parts.enumerate() {
        let WindowCheckpoint { state, sigmoid, count } = reader.value()?;
        svm::check_shape(&state, &config.svm)?;
        if first.is_some_and(|first| (first.oldest(), first.samples()) != (state.oldest(), state.samples())) {
            return Err(Status::ModelCorrupted);
        }
        (*sweep, *record) = (state.sweep(), class_record(sigmoid, count)?);
        let (w, rest) = block.split_at_mut(dim + 1);
        let (alpha, memory) = rest.split_at_mut(window);
        reader.floats(w)?;
        match c {
            0 => reader.floats(rows)?,
            _ => reader.skip(window * dim)?,
        }
        reader.floats(alpha)?;
        reader.skip(window)?;
        for stored in stored_classes.iter_mut() {
            let mut label = 0.0;
            reader.floats(core::slice::from_mut(&mut label))?;
            if label > 0.0 {
                if *stored >= 0.0 {
                    return Err(Status::ModelCorrupted);
                }
                *stored = c as f32;
            }
        }
        reader.floats(memory)?;
        first.get_or_insert(state);
    }
    let state = first.ok_or(Status::ModelCorrupted)?;
    // Slots a window that is not full does not hold stay 0, as in a fresh learner (such a
    // window's oldest sample is in slot 0: the state's check).
    if state.oldest() == 0 {
        stored_classes.get_mut(state.samples()..).unwrap_or_default().fill(0.0);
    }
    let bias = config.svm.bias;
    for (norm, row) in norms.iter_mut().zip(rows.chunks_exact(dim)).take(state.samples()) {
        *norm = Row::Dense(row).squared_norm() + bias * bias;
    }
    let state = OnlineOneVsRestState::of_window(&state, classes);
    let learner = OnlineOneVsRest::from_state_in(floats, sweeps, params, state).map_err(|_| Status::ModelCorrupted)?;
    Ok((work, records, learner))
}

#[cfg(test)]
mod tests {
    use std::vec;
    use std::vec::Vec;

    use kestrel_core::dcd::OnlineSvm;

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

    /// A checkpoint of revision 0 — a window per class, as the learner wrote them before
    /// its classes shared one — resumes into the shared window and goes on as the learner
    /// that learned the same samples: its checkpoints are that learner's, byte for byte.
    #[test]
    fn a_checkpoint_of_a_window_per_class_resumes() {
        use kestrel_core::device_checkpoint::FORMAT;
        // A window that turned over, and one not yet full (its other slots as a fresh one's).
        for (memory, learned) in [(0, 70u16), (2000, 70), (2000, 10)] {
            let mut config = kestrel_multiclass_default_config(16, 2, CLASSES as u32);
            (config.svm.seed, config.svm.memory) = (5, memory);
            let params = svm::params(&config.svm).unwrap();
            let mut windows: Vec<_> = (0..CLASSES)
                .map(|_| {
                    let scalars = vec![0.0f32; OnlineSvm::scalars_len_remembering(16, 2)];
                    match dcd::decay_over::<f32>(memory as usize) {
                        None => OnlineSvm::new_in(scalars, 16, 2, params, 300).unwrap(),
                        Some(decay) => OnlineSvm::remembering_in(scalars, 16, 2, params, 300, decay).unwrap(),
                    }
                })
                .collect();
            let (mut sigmoids, mut counts) = ([OnlineSigmoid::<f32>::default(); CLASSES], [0u64; CLASSES]);
            let mut rng = Rng::seed_from_u64(config.svm.seed);
            let mut shared = Vec::new();
            let multi = learner(&config, &mut shared);
            for t in 0..learned {
                let (x, class) = sample(t);
                let own = class as usize;
                counts[own] += 1;
                for (c, svm) in windows.iter_mut().enumerate() {
                    let target = calibration::target(c == own, counts[c], counts.iter().sum::<u64>() - counts[c]);
                    sigmoids[c].learn(svm.decision(Row::Dense(&x)).unwrap(), target as f32);
                    svm.push(Row::Dense(&x), if c == own { 1 } else { -1 }, &mut rng).unwrap();
                }
                assert_eq!(learn(multi, t), Status::Ok);
            }
            // Revision 0's bytes; with `claimed`, slot 0's sample labelled +1 by one class more.
            let revision_0 = |claimed: bool| {
                let mut old = vec![0u8; 1 << 14];
                let mut writer = crate::checkpoint::Writer::new(&mut old);
                writer
                    .value(&MulticlassCheckpoint { config, samples_seen: u64::from(learned), rng: rng.state() })
                    .unwrap();
                // The label of slot 0 in a window's storage: after w, the rows, α and Q̄.
                let (label_0, own_0) = (3 + 16 * 2 + 16 + 16, sample((learned - 1) / 16 * 16).1 as usize);
                for (c, svm) in windows.iter().enumerate() {
                    let part = WindowCheckpoint { state: svm.state(), sigmoid: sigmoids[c], count: counts[c] };
                    writer.value(&part).unwrap();
                    let mut storage = svm.storage().to_vec();
                    assert_eq!(storage[label_0] == 1.0, c == own_0, "slot 0 holds the last sample it took");
                    if claimed && c == (own_0 + 1) % CLASSES {
                        storage[label_0] = 1.0;
                    }
                    writer.floats(&storage);
                }
                let len = writer.finish(DeviceObject::Multiclass).unwrap();
                let payload = len - kestrel_core::frame::HEADER_LEN - kestrel_core::frame::TRAILER_LEN;
                FORMAT.seal([DeviceObject::Multiclass as u8, 0], payload, &mut old).unwrap();
                old.truncate(len);
                old
            };
            let mut resumed_memory = Vec::new();
            let again = resumed(&config, &revision_0(false), &mut resumed_memory).unwrap();
            assert_eq!(checkpoint(again), checkpoint(multi), "memory {memory}, {learned} samples");
            for t in learned..learned + 60 {
                assert_eq!((learn(multi, t), learn(again, t)), (Status::Ok, Status::Ok));
            }
            assert_eq!(checkpoint(again), checkpoint(multi));
            let mut refused_memory = Vec::new();
            assert_eq!(resumed(&config, &revision_0(true), &mut refused_memory).unwrap_err(), Status::ModelCorrupted);
        }
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
