//! `kestrel_svm`: the windowed linear SVM learning on the device (the core's [`OnlineSvm`]:
//! dual coordinate descent over the last `window` samples, LIBLINEAR's solver), in caller
//! memory, binary with labels −1 and +1.
//!
//! Each [`kestrel_svm_learn`] puts the sample into the window and takes coordinate steps
//! until the window meets LIBLINEAR's stopping rule at the tolerance `epsilon` or
//! `steps_per_sample` steps were taken.
//! With `memory` > 0 the weights keep what samples that left the window taught, their
//! share decaying by `1 − 1/memory` per sample (`OnlineSvm::remembering_in`), as `kestrel
//! stream --memory` does. [`kestrel_svm_save`] writes a linear-SVM model file (labels −1
//! and +1) that `kestrel predict` and `kestrel_model_open` read.
//!
//! **How sure it is.** Each sample is predicted before it is learned: `kestrel_svm_learn`
//! takes the decision value the learner gave it, with its label, as a pair for Platt's
//! sigmoid, fitted online (the core's `calibration::BinaryProbability`, one Newton step a
//! sample, as `kestrel stream --probabilities` fits it), and [`kestrel_svm_probability`]
//! gives the probability of +1 for a reading — for an alarm raised only when the model is
//! sure. Saved models carry the sigmoid (once both labels were learned), so `kestrel
//! predict --probabilities` and `kestrel_model_probabilities` give the same probabilities.
//!
//! [`kestrel_svm_checkpoint`] writes the learner's whole state and [`kestrel_svm_resume`]
//! continues from it bit for bit, after a reset ([`crate::checkpoint`]).
//!
//! Memory: `KESTREL_SVM_WORK_BYTES(window, dim, memory)` — the object header (the sigmoid's
//! five floats and two counts among it), the window
//! ([`OnlineSvm::scalars_len`] floats, or [`OnlineSvm::scalars_len_remembering`] with a
//! memory) and the saved model's weights ([`LinearModel::scalars_len`]`(dim, 1)`). A saved
//! model takes at most `KESTREL_SVM_MODEL_BYTES(dim)` bytes (its class probability's
//! sigmoid included), plus the scaler's section when one is given.

use core::ffi::c_void;

use kestrel_core::calibration::BinaryProbability;
use kestrel_core::dcd::{self, LinearModel, Loss, OnlineSvm, OnlineSvmState, Row};
use kestrel_core::device_checkpoint::DeviceObject;
use kestrel_core::{Error, Rng};
use serde::{Deserialize, Serialize};

use crate::checkpoint::{self, Described, Reader};
use crate::memory::{self, Layout, Object, Sizes, Tag, Work};
use crate::status::status_of;
use crate::{LearnerState, Status, save, scaler};

/// Bytes reserved for an SVM object's header on every target.
pub const KESTREL_SVM_OBJECT_BYTES: usize = 320;

/// "KSVM".
const SVM_TAG: Tag = Tag(0x4D56_534B);

/// The losses, by the value of [`SvmConfig::loss`].
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SvmLoss {
    /// `max(0, 1 − y·f(x))`, the L1-loss SVM.
    Hinge = 1,
    /// `max(0, 1 − y·f(x))²`, the L2-loss SVM.
    SquaredHinge = 2,
}

impl SvmLoss {
    /// The loss whose value is `value`, `None` for no loss.
    pub const fn of(value: u32) -> Option<Self> {
        match value {
            1 => Some(SvmLoss::Hinge),
            2 => Some(SvmLoss::SquaredHinge),
            _ => None,
        }
    }

    /// Its constant's name in `kestrel.h`.
    pub const fn c_name(self) -> &'static str {
        match self {
            SvmLoss::Hinge => "KESTREL_SVM_LOSS_HINGE",
            SvmLoss::SquaredHinge => "KESTREL_SVM_LOSS_SQUARED_HINGE",
        }
    }
}

/// The configuration of a windowed linear SVM; start from [`kestrel_svm_default_config`]
/// and change what you need.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct SvmConfig {
    /// Samples in the window, `N ≥ 1`.
    pub window: u32,
    /// Features per sample, `d ≥ 1`.
    pub dim: u32,
    /// The cost `C > 0`.
    pub c: f32,
    /// A `kestrel_svm_loss` value.
    pub loss: u32,
    /// The bias feature `B ≥ 0` appended to every sample (0: no bias).
    pub bias: f32,
    /// How long samples that left the window are remembered, in samples (0: forgotten).
    pub memory: u32,
    /// The most coordinate steps after each sample, `≥ 1`.
    pub steps_per_sample: u32,
    /// The stopping tolerance `ε > 0`: the steps after a sample end once a pass over the
    /// window spreads its projected gradients by at most `ε` (LIBLINEAR's rule; `kestrel
    /// stream --eps`).
    pub epsilon: f32,
    /// Seed of the order of the coordinate steps.
    pub seed: u64,
}

impl Sizes for SvmConfig {
    fn work_bytes(&self) -> usize {
        params(self).map_or(0, |_| layout(self).bytes())
    }

    fn checkpoint_bytes(&self) -> usize {
        params(self).map_or(0, |_| checkpoint::bound(window_scalars(self), 0))
    }
}

/// A windowed linear SVM created by [`kestrel_svm_create`]. Opaque to C.
#[repr(C)]
pub struct Svm {
    tag: Tag,
    /// Coordinate steps of the last sample learned (beside the tag: in its padding).
    last_steps: u32,
    config: SvmConfig,
    samples_seen: u64,
    rng: Rng,
    svm: OnlineSvm<f32, &'static mut [f32]>,
    /// The probability of +1, fitted to the decision value each sample had before it was
    /// learned.
    probability: BinaryProbability<f32>,
    /// Storage of the saved model's weights.
    model: &'static mut [f32],
}

// SAFETY: `Svm` is `#[repr(C)]` with its tag first, and `kestrel_svm_create` writes
// `SVM_TAG`.
unsafe impl Object for Svm {
    const TAG: Tag = SVM_TAG;
    const BYTES: usize = KESTREL_SVM_OBJECT_BYTES;
}

/// The defaults of `kestrel stream --learner svm`: `C = 1`, the squared hinge, bias 1, a
/// memory of 2000 samples, at most 300 steps per sample until a pass spreads by at most
/// `ε = 1` (`kestrel_core::dcd::WINDOW_EPSILON`; LIBLINEAR's 0.1 solves a window more
/// finely than its predictions gain from), seed 0.
#[unsafe(no_mangle)]
pub extern "C" fn kestrel_svm_default_config(window: u32, dim: u32) -> SvmConfig {
    SvmConfig {
        window,
        dim,
        c: 1.0,
        loss: SvmLoss::SquaredHinge as u32,
        bias: 1.0,
        memory: 2000,
        steps_per_sample: 300,
        epsilon: dcd::WINDOW_EPSILON as f32,
        seed: 0,
    }
}

/// The checked hyper-parameters of `config`.
pub(crate) fn params(config: &SvmConfig) -> Result<dcd::ValidParams<f32>, Status> {
    if config.window == 0 || config.dim == 0 || config.steps_per_sample == 0 {
        return Err(Status::InvalidParam);
    }
    let loss = match SvmLoss::of(config.loss).ok_or(Status::InvalidParam)? {
        SvmLoss::Hinge => Loss::Hinge,
        SvmLoss::SquaredHinge => Loss::SquaredHinge,
    };
    Ok(dcd::Params::new().loss(loss).c(config.c).bias(config.bias).epsilon(config.epsilon).check()?)
}

/// Scalars of the window of `config`.
fn window_scalars(config: &SvmConfig) -> usize {
    let (window, dim) = (config.window as usize, config.dim as usize);
    if config.memory == 0 {
        OnlineSvm::scalars_len(window, dim)
    } else {
        OnlineSvm::scalars_len_remembering(window, dim)
    }
}

/// An empty window of `config` in `scalars` (with a memory when `config` has one).
fn empty_window(
    config: &SvmConfig,
    params: dcd::ValidParams<f32>,
    scalars: &'static mut [f32],
) -> Result<OnlineSvm<f32, &'static mut [f32]>, Status> {
    let (window, dim, steps) = (config.window as usize, config.dim as usize, config.steps_per_sample as usize);
    Ok(match dcd::decay_over::<f32>(config.memory as usize) {
        None => OnlineSvm::new_in(scalars, window, dim, params, steps)?,
        Some(decay) => OnlineSvm::remembering_in(scalars, window, dim, params, steps, decay)?,
    })
}

/// `MODEL_CORRUPTED` unless a saved window's `state` has `config`'s shape: its window,
/// dimension, cap on steps and memory.
pub(crate) fn check_shape(state: &OnlineSvmState<f32>, config: &SvmConfig) -> Result<(), Status> {
    let shape = (state.window(), state.dim(), state.max_steps_per_arrival(), state.decay());
    let expected = (config.window as usize, config.dim as usize, config.steps_per_sample as usize);
    if (shape.0, shape.1, shape.2) != expected || shape.3 != dcd::decay_over::<f32>(config.memory as usize) {
        return Err(Status::ModelCorrupted);
    }
    Ok(())
}

fn layout(config: &SvmConfig) -> Layout {
    Layout::of::<Svm>()
        .then::<f32>(window_scalars(config))
        .then::<f32>(LinearModel::scalars_len(config.dim as usize, 1))
}

/// The buffers of a learner of `config` carved from `work[0..work_len]`, in the order of
/// [`layout`]: the window's scalars and the saved model's room.
///
/// # Safety
/// As [`Work::new`].
unsafe fn carve(
    config: &SvmConfig,
    work: *mut c_void,
    work_len: usize,
) -> Result<(Work, &'static mut [f32], &'static mut [f32]), Status> {
    // SAFETY: as this function's contract.
    let mut work = unsafe { Work::new::<Svm>(work, work_len, layout(config))? };
    let scalars = work.take::<f32>(window_scalars(config))?;
    let model = work.take::<f32>(LinearModel::scalars_len(config.dim as usize, 1))?;
    Ok((work, scalars, model))
}

/// The work bytes of a learner of `*config`, 0 for a null or invalid configuration.
///
/// # Safety
/// `config` is null or points to a readable `kestrel_svm_config`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn kestrel_svm_work_bytes(config: *const SvmConfig) -> usize {
    // SAFETY: as this function's contract.
    unsafe { memory::read(config) }.map_or(0, |config| config.work_bytes())
}

/// Creates an empty learner of `*config` in `work[0..work_len]` (aligned to
/// `KESTREL_ALIGN`, at least [`kestrel_svm_work_bytes`] long) and writes its handle to
/// `*out` (only on success).
///
/// Errors: `NULL_POINTER`, `MISALIGNED`, `BUFFER_TOO_SMALL`, `INVALID_PARAM` (a zero size,
/// `C ≤ 0`, a negative bias, an unknown loss, `epsilon` not above 0).
///
/// # Safety
/// `config` is null or points to a readable configuration; `work` is null or points to
/// `work_len` bytes that stay valid, and are used for nothing else, while the learner is
/// used; `out` is null or points to a writable pointer.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn kestrel_svm_create(
    config: *const SvmConfig,
    work: *mut c_void,
    work_len: usize,
    out: *mut *mut Svm,
) -> Status {
    status_of((|| {
        memory::check_pointer(out)?;
        // SAFETY: as this function's contract.
        let config = unsafe { memory::read(config)? };
        let params = params(&config)?;
        // SAFETY: as this function's contract.
        let (work, scalars, model) = unsafe { carve(&config, work, work_len)? };
        let svm = empty_window(&config, params, scalars)?;
        let rng = Rng::seed_from_u64(config.seed);
        let probability = BinaryProbability::default();
        let object = Svm { tag: SVM_TAG, config, samples_seen: 0, last_steps: 0, rng, svm, probability, model };
        // SAFETY: checked non-null and aligned above; writable by the contract.
        unsafe { memory::write(out, work.finish(object)) }
    })())
}

/// Learns the sample `(x[0..dim], label)`, `label` −1 or +1: it enters the window, then
/// coordinate steps until convergence or `steps_per_sample`; the decision value the
/// learner gave it before teaches the probability's sigmoid (module doc).
///
/// Errors: `NULL_POINTER`, `MISALIGNED`, `WRONG_OBJECT`, `DIMENSION_MISMATCH`,
/// `INVALID_LABEL`, `NON_FINITE`; the learner is unchanged then.
///
/// # Safety
/// `learner` is null or a handle [`kestrel_svm_create`] returned, used by no other call
/// meanwhile; `x` is null or points to `dim` readable floats.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn kestrel_svm_learn(learner: *mut Svm, x: *const f32, dim: usize, label: i32) -> Status {
    status_of((|| {
        // SAFETY: as this function's contract.
        let (svm, x) = unsafe { (memory::object_mut(learner)?, memory::floats(x, dim)?) };
        let before = svm.svm.decision(Row::Dense(x))?;
        let steps = svm.svm.push(Row::Dense(x), label, &mut svm.rng)?;
        svm.probability.learn(before, label == 1);
        svm.samples_seen += 1;
        svm.last_steps = u32::try_from(steps).unwrap_or(u32::MAX);
        Ok(())
    })())
}

/// Predicts the label of `x[0..dim]`, +1 when the decision value is positive, else −1,
/// and writes it to `*label`.
///
/// Errors: `NULL_POINTER`, `MISALIGNED`, `WRONG_OBJECT`, `DIMENSION_MISMATCH`, `NON_FINITE`.
///
/// # Safety
/// `learner` is null or a handle [`kestrel_svm_create`] returned; `x` is null or points to
/// `dim` readable floats; `label` is null or points to a writable `int32_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn kestrel_svm_predict(
    learner: *const Svm,
    x: *const f32,
    dim: usize,
    label: *mut i32,
) -> Status {
    status_of((|| {
        memory::check_pointer(label)?;
        // SAFETY: as this function's contract.
        let (svm, x) = unsafe { (memory::object(learner)?, memory::floats(x, dim)?) };
        let value = svm.svm.predict(Row::Dense(x))?;
        // SAFETY: as this function's contract.
        unsafe { memory::write(label, value) }
    })())
}

/// Writes the probability that `x[0..dim]` is of label +1 to `*probability`: Platt's
/// sigmoid of its decision value, fitted online to the values the samples learned had
/// before they were learned (module doc); 0.5 at a decision value of 0 before any sample.
///
/// Errors: `NULL_POINTER`, `MISALIGNED`, `WRONG_OBJECT`, `DIMENSION_MISMATCH`, `NON_FINITE`.
///
/// # Safety
/// `learner` is null or a handle [`kestrel_svm_create`] returned; `x` is null or points to
/// `dim` readable floats; `probability` is null or points to a writable `float`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn kestrel_svm_probability(
    learner: *const Svm,
    x: *const f32,
    dim: usize,
    probability: *mut f32,
) -> Status {
    status_of((|| {
        memory::check_pointer(probability)?;
        // SAFETY: as this function's contract.
        let (svm, x) = unsafe { (memory::object(learner)?, memory::floats(x, dim)?) };
        let value = svm.probability.probability(svm.svm.decision(Row::Dense(x))?);
        // SAFETY: as this function's contract.
        unsafe { memory::write(probability, value) }
    })())
}

/// Writes the learner's state to `*out`: samples learned, samples in the window, 0 active
/// centres (a linear model has none), whether the window met the stopping rule, and the
/// coordinate steps the last sample took.
///
/// # Safety
/// `learner` is null or a handle [`kestrel_svm_create`] returned; `out` is null or points
/// to a writable `kestrel_learner_state`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn kestrel_svm_state(learner: *const Svm, out: *mut LearnerState) -> Status {
    status_of((|| {
        // SAFETY: as this function's contract.
        let svm = unsafe { memory::object(learner)? };
        let state = LearnerState {
            samples_seen: svm.samples_seen,
            window_len: svm.svm.len(),
            active_centres: 0,
            target_mean: 0.0,
            converged: svm.svm.converged(),
            last_steps: svm.last_steps,
        };
        // SAFETY: as this function's contract.
        unsafe { memory::write(out, state) }
    })())
}

/// Writes the learner's linear model — with its class probability's sigmoid once both
/// labels were learned, and `scaler`'s statistics when `scaler` is not null — to
/// `out[0..out_len]` and its length to `*written`; when the buffer is too small,
/// `*written` receives the length needed and the status is `BUFFER_TOO_SMALL`.
///
/// # Safety
/// `learner` as for [`kestrel_svm_learn`]; `scaler` is null or a scaler handle; `out` is
/// null or points to `out_len` writable bytes; `written` is null or points to a writable
/// `size_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn kestrel_svm_save(
    learner: *mut Svm,
    scaler: *const scaler::Scaler,
    out: *mut u8,
    out_len: usize,
    written: *mut usize,
) -> Status {
    status_of((|| {
        // SAFETY: as this function's contract.
        let svm = unsafe { memory::object_mut(learner)? };
        let model = linear_model(&svm.svm, &mut *svm.model)?;
        let sigmoid = svm.probability.sigmoid();
        let sigmoids = sigmoid.as_slice();
        // SAFETY: as this function's contract.
        unsafe { save::save(&model, svm.svm.weights().len(), sigmoids, scaler, out, out_len, written) }
    })())
}

/// What a checkpoint of a [`Svm`] holds first; the class probability's state follows it
/// (from revision 1 of the header: none in one of revision 0, which resumes with a fresh
/// one), then the window's floats.
#[derive(Serialize, Deserialize)]
pub(crate) struct SvmCheckpoint {
    pub(crate) config: SvmConfig,
    samples_seen: u64,
    rng: [u64; 4],
    state: OnlineSvmState<f32>,
}

/// The class probability's state that follows the header `reader` has read: none in a
/// checkpoint of revision 0 (written before the SVM had one).
fn saved_probability(reader: &mut Reader<'_>) -> Result<Option<BinaryProbability<f32>>, Status> {
    match reader.revision() {
        0 => Ok(None),
        _ => reader.value().map(Some),
    }
}

/// What the checkpoint `reader` opened holds, from its header.
pub(crate) fn describe(reader: &mut Reader<'_>) -> Result<Described, Status> {
    let header: SvmCheckpoint = reader.value()?;
    let probability = saved_probability(reader)?;
    let (config, samples_seen) = (header.config, header.samples_seen);
    Ok(Described::Svm { config, samples_seen, probability_samples: probability.map(|p| p.counts()) })
}

/// The most bytes a checkpoint of a learner of `*config` takes (the window's floats and
/// `KESTREL_CHECKPOINT_HEADER_BYTES`; `KESTREL_SVM_CHECKPOINT_BYTES(window, dim, memory)`
/// at compile time), 0 for a null or invalid configuration.
///
/// # Safety
/// `config` is null or points to a readable `kestrel_svm_config`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn kestrel_svm_checkpoint_bytes(config: *const SvmConfig) -> usize {
    // SAFETY: as this function's contract.
    unsafe { memory::read(config) }.map_or(0, |config| config.checkpoint_bytes())
}

/// Writes the learner's whole state — its configuration, the window, `w`, the memory, the
/// pass under way and the random generator — to `out[0..out_len]` and its length to
/// `*written`, for [`kestrel_svm_resume`] after a reset; when the buffer is too small,
/// `*written` receives the length needed and the status is `BUFFER_TOO_SMALL`.
///
/// Copied off the device, the bytes are read on a host by `kestrel inspect`, and `kestrel
/// import` makes them the model file [`kestrel_svm_save`] would write.
///
/// Errors: `NULL_POINTER`, `MISALIGNED`, `WRONG_OBJECT`, `BUFFER_TOO_SMALL`, `NUMERICAL`
/// (the learner's numerics broke down on values near the range of `float` and its state
/// would not resume: keep the checkpoint you have; nothing is written).
///
/// # Safety
/// `learner` is null or a handle [`kestrel_svm_create`] or [`kestrel_svm_resume`]
/// returned; `out` is null or points to `out_len` writable bytes (null with `out_len` = 0
/// asks for the length); `written` is null or points to a writable `size_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn kestrel_svm_checkpoint(
    learner: *const Svm,
    out: *mut u8,
    out_len: usize,
    written: *mut usize,
) -> Status {
    status_of((|| {
        // SAFETY: as this function's contract.
        let svm = unsafe { memory::object(learner)? };
        svm.svm.check_restorable().map_err(|_| Status::Numerical)?;
        let header = SvmCheckpoint {
            config: svm.config,
            samples_seen: svm.samples_seen,
            rng: svm.rng.state(),
            state: svm.svm.state(),
        };
        // SAFETY: as this function's contract.
        unsafe {
            checkpoint::write(DeviceObject::Svm, out, out_len, written, |writer| {
                writer.value(&header)?;
                writer.value(&svm.probability)?;
                writer.floats(svm.svm.storage());
                Ok(())
            })
        }
    })())
}

/// Rebuilds in `work[0..work_len]` the learner a checkpoint of [`kestrel_svm_checkpoint`]
/// holds, and writes its handle to `*out` (only on success): it continues exactly as the
/// saved learner would have. `config` must be the configuration the learner was created
/// with.
///
/// Errors: `NULL_POINTER`, `MISALIGNED`, `BUFFER_TOO_SMALL` (work shorter than
/// [`kestrel_svm_work_bytes`]), `INVALID_PARAM` (`config`), `CONFIG_MISMATCH` (a
/// checkpoint of another configuration), `MODEL_TRUNCATED`, `MODEL_CORRUPTED`,
/// `MODEL_FOREIGN` (not a checkpoint of a `kestrel_svm`), `MODEL_UNSUPPORTED`. Whatever
/// the work buffer held is gone after a failure past the configuration's checks.
///
/// # Safety
/// `config` is null or points to a readable configuration; `bytes` is null or points to
/// `len` readable bytes outside `work` (read while `work` is written); `work` and `out`
/// as for [`kestrel_svm_create`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn kestrel_svm_resume(
    config: *const SvmConfig,
    bytes: *const u8,
    len: usize,
    work: *mut c_void,
    work_len: usize,
    out: *mut *mut Svm,
) -> Status {
    status_of((|| {
        memory::check_pointer(out)?;
        // SAFETY: as this function's contract.
        let config = unsafe { memory::read(config)? };
        let params = params(&config)?;
        // SAFETY: as this function's contract.
        let (mut reader, header) =
            unsafe { checkpoint::open(bytes, len, DeviceObject::Svm, |h: &SvmCheckpoint| h.config == config)? };
        let state = header.state;
        check_shape(&state, &config)?;
        let rng = Rng::from_state(header.rng).map_err(|_| Status::ModelCorrupted)?;
        let probability = saved_probability(&mut reader)?.unwrap_or_default();
        if !probability.is_finite() {
            return Err(Status::ModelCorrupted);
        }
        // SAFETY: as this function's contract.
        let (work, scalars, model) = unsafe { carve(&config, work, work_len)? };
        reader.floats(scalars)?;
        reader.finish()?;
        let svm = OnlineSvm::from_state_in(scalars, params, state).map_err(|_| Status::ModelCorrupted)?;
        let samples_seen = header.samples_seen;
        let object = Svm { tag: SVM_TAG, config, samples_seen, last_steps: 0, rng, svm, probability, model };
        // SAFETY: checked non-null and aligned above; writable by the contract.
        unsafe { memory::write(out, work.finish(object)) }
    })())
}

/// The window's linear model in `storage`: output 0 is `[w, w_b]`, labels −1 and +1.
fn linear_model<'a>(
    svm: &OnlineSvm<f32, &'static mut [f32]>,
    storage: &'a mut [f32],
) -> Result<LinearModel<f32, &'a mut [f32]>, Error> {
    let mut model = LinearModel::new_in(storage, svm.weights().len(), 1, svm.params().bias())?;
    model.set_weights(0, svm.weights(), svm.bias_weight())?;
    Ok(model)
}

#[cfg(test)]
mod tests {
    use std::vec;

    use kestrel_core::device_checkpoint::FORMAT as FORMAT_OF_DEVICE;

    use super::*;

    /// The state's `last_steps` is what the core's windowed SVM took for the sample,
    /// driven alike (the same configuration and seed).
    #[test]
    fn last_steps_are_the_core_svms() {
        let mut config = kestrel_svm_default_config(16, 2);
        config.steps_per_sample = 24;
        // SAFETY: `config` is a valid configuration on the stack.
        let needed = unsafe { kestrel_svm_work_bytes(&config) };
        let mut work = vec![0u64; needed.div_ceil(8)];
        let mut svm: *mut Svm = core::ptr::null_mut();
        // SAFETY: `work` holds `needed` aligned bytes and outlives the learner.
        assert_eq!(unsafe { kestrel_svm_create(&config, work.as_mut_ptr().cast(), needed, &mut svm) }, Status::Ok);
        let params = params(&config).unwrap();
        let scalars = vec![0.0f32; OnlineSvm::scalars_len_remembering(16, 2)];
        let decay = dcd::decay_over::<f32>(2000).unwrap();
        let mut reference = OnlineSvm::remembering_in(scalars, 16, 2, params, 24, decay).unwrap();
        let mut rng = Rng::seed_from_u64(config.seed);
        let mut state = LearnerState {
            samples_seen: 0,
            window_len: 0,
            active_centres: 0,
            target_mean: 0.0,
            converged: false,
            last_steps: 7,
        };
        // SAFETY: a live handle and a writable state.
        assert_eq!(unsafe { kestrel_svm_state(svm, &mut state) }, Status::Ok);
        assert_eq!(state.last_steps, 0, "before the first sample");
        let mut counts = vec![];
        for t in 0..200u16 {
            let x = [f32::from(t % 17) / 8.0 - 1.0, f32::from(t % 11) / 5.0 - 1.0];
            let label = if x[0] - 0.5 * x[1] + if t % 7 == 0 { 0.8 } else { 0.0 } > 0.0 { 1 } else { -1 };
            // SAFETY: a live handle and a row of 2 floats.
            assert_eq!(unsafe { kestrel_svm_learn(svm, x.as_ptr(), 2, label) }, Status::Ok);
            // SAFETY: as above.
            assert_eq!(unsafe { kestrel_svm_state(svm, &mut state) }, Status::Ok);
            let steps = reference.push(Row::Dense(&x), label, &mut rng).unwrap();
            assert_eq!(state.last_steps as usize, steps, "sample {t}");
            counts.push(steps);
        }
        assert!(counts.contains(&24) && counts.iter().any(|&s| s < 24), "the cap and the rule: {counts:?}");
    }

    /// A learner of `window` samples of 2 features, in `work`.
    fn learner(window: u32, work: &mut vec::Vec<u64>) -> *mut Svm {
        let config = kestrel_svm_default_config(window, 2);
        // SAFETY: `config` is a valid configuration on the stack.
        let needed = unsafe { kestrel_svm_work_bytes(&config) };
        *work = vec![0u64; needed.div_ceil(8)];
        let mut svm: *mut Svm = core::ptr::null_mut();
        // SAFETY: `work` holds `needed` aligned bytes and outlives the learner.
        assert_eq!(unsafe { kestrel_svm_create(&config, work.as_mut_ptr().cast(), needed, &mut svm) }, Status::Ok);
        svm
    }

    /// Sample `t` of a noisy stream: +1 mostly where `x₀ > x₁`.
    fn sample(t: u16) -> ([f32; 2], i32) {
        let x = [f32::from(t % 17) / 8.0 - 1.0, f32::from(t % 13) / 6.0 - 1.0];
        let label = if x[0] - x[1] + if t.is_multiple_of(5) { 0.9 } else { 0.0 } > 0.0 { 1 } else { -1 };
        (x, label)
    }

    /// The probability is the core's sigmoid taught by the decision value each sample had
    /// before it was learned (the core's windowed SVM driven alike), and it rises with the
    /// decision value.
    #[test]
    fn the_probability_learns_from_the_values_before_learning() {
        let mut work = vec::Vec::new();
        let svm = learner(16, &mut work);
        let config = kestrel_svm_default_config(16, 2);
        let scalars = vec![0.0f32; OnlineSvm::scalars_len_remembering(16, 2)];
        let decay = dcd::decay_over::<f32>(2000).unwrap();
        let mut reference = OnlineSvm::remembering_in(scalars, 16, 2, params(&config).unwrap(), 300, decay).unwrap();
        let (mut rng, mut probability) = (Rng::seed_from_u64(config.seed), BinaryProbability::<f32>::default());
        let mut p = f32::NAN;
        for t in 0..400u16 {
            let (x, label) = sample(t);
            probability.learn(reference.decision(Row::Dense(&x)).unwrap(), label == 1);
            reference.push(Row::Dense(&x), label, &mut rng).unwrap();
            // SAFETY: a live handle and a row of 2 floats.
            assert_eq!(unsafe { kestrel_svm_learn(svm, x.as_ptr(), 2, label) }, Status::Ok);
            // SAFETY: as above, and a writable float.
            assert_eq!(unsafe { kestrel_svm_probability(svm, x.as_ptr(), 2, &mut p) }, Status::Ok);
            let expected = probability.probability(reference.decision(Row::Dense(&x)).unwrap());
            assert_eq!(p.to_bits(), expected.to_bits(), "sample {t}");
        }
        let (mut high, mut low) = (0.0f32, 0.0f32);
        // SAFETY: as above.
        unsafe {
            assert_eq!(kestrel_svm_probability(svm, [1.0f32, -1.0].as_ptr(), 2, &mut high), Status::Ok);
            assert_eq!(kestrel_svm_probability(svm, [-1.0f32, 1.0].as_ptr(), 2, &mut low), Status::Ok);
        }
        assert!(high > 0.8 && low < 0.2, "{high} {low}");
        // Refusals leave the output.
        let mut out = 7.0f32;
        // SAFETY: as above; the row has 2 floats, fewer than claimed is refused.
        unsafe {
            assert_eq!(kestrel_svm_probability(svm, [1.0f32, 2.0].as_ptr(), 1, &mut out), Status::DimensionMismatch);
            assert_eq!(kestrel_svm_probability(svm, [f32::NAN, 2.0].as_ptr(), 2, &mut out), Status::NonFinite);
            assert_eq!(
                kestrel_svm_probability(svm, [1.0f32, 2.0].as_ptr(), 2, core::ptr::null_mut()),
                Status::NullPointer
            );
        }
        assert_eq!(out, 7.0);
    }

    /// A checkpoint of revision 0 (written before the class probability) resumes: the
    /// window as it was, a fresh probability; a revision past the object's own is refused.
    #[test]
    fn a_checkpoint_of_the_earlier_revision_resumes() {
        let mut work = vec::Vec::new();
        let svm = learner(8, &mut work);
        for t in 0..50u16 {
            let (x, label) = sample(t);
            // SAFETY: a live handle and a row of 2 floats.
            assert_eq!(unsafe { kestrel_svm_learn(svm, x.as_ptr(), 2, label) }, Status::Ok);
        }
        let (mut bytes, mut written) = (vec![0u8; 1024], 0usize);
        // SAFETY: a live handle; `bytes` holds 1024 writable bytes.
        assert_eq!(unsafe { kestrel_svm_checkpoint(svm, bytes.as_mut_ptr(), 1024, &mut written) }, Status::Ok);
        assert_eq!(&bytes[6..8], [1, 1], "svm, revision 1");
        // The same state as revision 0 wrote it: the header, then the floats, no probability.
        let payload = &bytes[kestrel_core::frame::HEADER_LEN..written - kestrel_core::frame::TRAILER_LEN];
        let (_, after_header) = postcard::take_from_bytes::<SvmCheckpoint>(payload).unwrap();
        let (_, floats) = postcard::take_from_bytes::<BinaryProbability<f32>>(after_header).unwrap();
        let header_len = payload.len() - after_header.len();
        let old_len = header_len + floats.len();
        let mut old = vec![0u8; kestrel_core::frame::framed_len(old_len)];
        let start = kestrel_core::frame::HEADER_LEN;
        old[start..start + header_len].copy_from_slice(&payload[..header_len]);
        old[start + header_len..start + old_len].copy_from_slice(floats);
        let resealed = |tags, old: &mut vec::Vec<u8>| FORMAT_OF_DEVICE.seal(tags, old_len, old).unwrap();
        resealed([1, 0], &mut old);
        let config = kestrel_svm_default_config(8, 2);
        // SAFETY: `config` is a valid configuration on the stack.
        let needed = unsafe { kestrel_svm_work_bytes(&config) };
        let mut again = vec![0u64; needed.div_ceil(8)];
        let mut resumed: *mut Svm = core::ptr::null_mut();
        let resume = |bytes: &[u8], work: &mut vec::Vec<u64>, out: &mut *mut Svm| {
            // SAFETY: `bytes` and `work` are live buffers of the lengths given.
            unsafe { kestrel_svm_resume(&config, bytes.as_ptr(), bytes.len(), work.as_mut_ptr().cast(), needed, out) }
        };
        assert_eq!(resume(&old, &mut again, &mut resumed), Status::Ok);
        let probability_samples = |bytes: &[u8]| match crate::checkpoint::describe(bytes) {
            Ok(Described::Svm { probability_samples, .. }) => probability_samples,
            other => panic!("{other:?}"),
        };
        assert_eq!(probability_samples(&old), None);
        assert!(probability_samples(&bytes[..written]).is_some_and(|[n, p]| n + p == 50));
        let probe = [0.5f32, -0.25];
        let (mut label, mut resumed_label, mut p) = (0, 0, 0.0f32);
        // SAFETY: live handles, a row of 2 floats and writable outputs.
        unsafe {
            assert_eq!(kestrel_svm_predict(svm, probe.as_ptr(), 2, &mut label), Status::Ok);
            assert_eq!(kestrel_svm_predict(resumed, probe.as_ptr(), 2, &mut resumed_label), Status::Ok);
            assert_eq!(kestrel_svm_probability(resumed, probe.as_ptr(), 2, &mut p), Status::Ok);
            let value = (*resumed).svm.decision(Row::Dense(&probe)).unwrap();
            assert_eq!(p, BinaryProbability::<f32>::default().probability(value));
        }
        assert_eq!(label, resumed_label);
        // A later library's revision, and a revision on an object that has none, are refused.
        resealed([1, 2], &mut old);
        assert_eq!(resume(&old, &mut again, &mut resumed), Status::ModelUnsupported);
        resealed([2, 1], &mut old);
        assert_eq!(crate::checkpoint::describe(&old).unwrap_err(), Status::ModelUnsupported);
    }

    /// A learner whose stored values broke (here `w`'s first weight made NaN in its work
    /// memory, as numerics that broke down at extreme scales would leave it) refuses to
    /// checkpoint: `NUMERICAL`, the output untouched, no length written.
    #[test]
    fn a_state_that_would_not_resume_is_not_written() {
        let config = kestrel_svm_default_config(8, 2);
        // SAFETY: `config` is a valid configuration on the stack.
        let needed = unsafe { kestrel_svm_work_bytes(&config) };
        let mut work = vec![0u64; needed.div_ceil(8)];
        let mut svm: *mut Svm = core::ptr::null_mut();
        // SAFETY: `work` holds `needed` aligned bytes and outlives the learner.
        let created = unsafe { kestrel_svm_create(&config, work.as_mut_ptr().cast(), needed, &mut svm) };
        assert_eq!(created, Status::Ok);
        for (x, label) in [([1.0f32, 2.0], 1), ([-1.0, -2.0], -1), ([0.5, -1.0], 1)] {
            // SAFETY: a live handle and a row of 2 floats.
            assert_eq!(unsafe { kestrel_svm_learn(svm, x.as_ptr(), 2, label) }, Status::Ok);
        }
        let mut out = [0x5Au8; 512];
        let mut written = 7usize;
        // SAFETY: a live handle; `out` holds 512 writable bytes.
        let healthy = unsafe { kestrel_svm_checkpoint(svm, out.as_mut_ptr(), out.len(), &mut written) };
        assert_eq!(healthy, Status::Ok);
        // The window's scalars follow the object's reserved header, `w` first. The write
        // goes through the work memory's own pointer, as a C caller's would: numerics
        // broken in place, which the learner's own steps leave only at extreme scales.
        let first_weight = Layout::of::<Svm>().bytes();
        // SAFETY: `first_weight + 4 ≤ needed` bytes of `work`, aligned for f32.
        unsafe { work.as_mut_ptr().cast::<u8>().add(first_weight).cast::<f32>().write(f32::NAN) };
        let (mut out, mut written) = ([0x5Au8; 512], 7usize);
        // SAFETY: as above.
        let broken = unsafe { kestrel_svm_checkpoint(svm, out.as_mut_ptr(), out.len(), &mut written) };
        assert_eq!(broken, Status::Numerical);
        assert!(out.iter().all(|&b| b == 0x5A) && written == 7);
    }
}
