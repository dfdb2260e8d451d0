//! `kestrel_slkl`: the windowed SLKL kernel regressor learning on the device (the core's
//! [`SlklWindow`]: sparse kernel regression over the last `window` samples, seed 001), in
//! caller memory.
//!
//! Each [`kestrel_slkl_learn`] puts the sample into the window (the oldest leaves once it
//! is full) and takes coordinate steps until SLKL's stopping rule holds on the window or
//! `steps_per_sample` steps were taken (`SlklWindow::learn`, the rule of `kestrel stream`).
//! [`kestrel_slkl_save`] writes the model of the current window in the core's envelope, so
//! `kestrel predict`, `kestrel_model_open` and the Python package read what a device
//! learned.
//!
//! [`kestrel_slkl_checkpoint`] writes the learner's whole state and
//! [`kestrel_slkl_resume`] continues from it bit for bit, after a reset
//! ([`crate::checkpoint`]).
//!
//! Memory: `KESTREL_SLKL_WORK_BYTES(window, dim, centres, max_active)` — the object header,
//! the window's scalars ([`SlklWindow::scalars_len`]; every candidate's column computed
//! once when `centres ≤ max_active + 1`, which then costs no more memory than columns on
//! the fly and spares the steps their kernel columns: `Dims::fewer_scalars`), its indices
//! ([`SlklWindow::indices_len`], `size_t`), and room for the saved model's centres and
//! weights (`max_active·(dim + 1)` floats). A saved model takes at most
//! `KESTREL_SLKL_MODEL_BYTES(dim, max_active)` bytes, plus the scaler's section when one
//! is given.

use core::ffi::c_void;

use kestrel_core::device_checkpoint::DeviceObject;
use kestrel_core::slkl::{self, Dims, Predictor, SlklWindow, SlklWindowState};
use serde::{Deserialize, Serialize};

use crate::checkpoint::{self, Described, Reader};
use crate::kernel::KernelConfig;
use crate::memory::{self, Layout, Object, Sizes, Tag, Work};
use crate::status::status_of;
use crate::{LearnerState, Status, save, scaler};

/// Bytes reserved for an SLKL object's header on every target.
pub const KESTREL_SLKL_OBJECT_BYTES: usize = 640;

/// "KSLK".
const SLKL_TAG: Tag = Tag(0x4B4C_534B);

/// The configuration of a windowed SLKL regressor; start from
/// [`kestrel_slkl_default_config`] and change what you need.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct SlklConfig {
    /// Samples in the window, `N ≥ 1`.
    pub window: u32,
    /// Features per sample, `d ≥ 1`.
    pub dim: u32,
    /// Candidate centres `M ≥ 1` (given to [`kestrel_slkl_create`]).
    pub centres: u32,
    /// The most centres the model may use at once, `1 ≤ max_active ≤ M`.
    pub max_active: u32,
    /// The kernel.
    pub kernel: KernelConfig,
    /// The sparsity weight `ν > 0` (in the target's units squared).
    pub nu: f32,
    /// The most coordinate steps after each sample, `≥ 1`.
    pub steps_per_sample: u32,
    /// Seed of the learner's random choices.
    pub seed: u64,
}

impl Sizes for SlklConfig {
    fn work_bytes(&self) -> usize {
        checked(self).map_or(0, |(dims, _)| layout::<usize>(dims).bytes())
    }

    /// Its indices are `size_t`: 4 bytes a Cortex-M's (`KESTREL_SLKL_WORK_BYTES` there).
    fn work_bytes_on_32_bit(&self) -> usize {
        checked(self).map_or(0, |(dims, _)| layout::<u32>(dims).bytes())
    }

    fn checkpoint_bytes(&self) -> usize {
        checked(self)
            .map_or(0, |(dims, _)| checkpoint::bound(SlklWindow::scalars_len(dims), SlklWindow::indices_len(dims)))
    }
}

/// A windowed SLKL regressor created by [`kestrel_slkl_create`]. Opaque to C.
#[repr(C)]
pub struct Slkl {
    tag: Tag,
    config: SlklConfig,
    samples_seen: u64,
    /// Coordinate steps of the last sample learned.
    last_steps: u32,
    steps_per_sample: usize,
    learner: SlklWindow<f32, &'static mut [f32], &'static mut [usize]>,
    /// Storage of the saved model's centres and weights.
    model: &'static mut [f32],
}

// SAFETY: `Slkl` is `#[repr(C)]` with its tag first, and `kestrel_slkl_create` writes
// `SLKL_TAG`.
unsafe impl Object for Slkl {
    const TAG: Tag = SLKL_TAG;
    const BYTES: usize = KESTREL_SLKL_OBJECT_BYTES;
}

/// Every candidate may be active, the Gaussian kernel with `γ = 0.5`, `ν = 0.01`, at most 20
/// steps per sample (`kestrel stream --learner slkl`'s ν and cap; the stream standardises
/// its features and takes `γ = 1/d`, while these features come as they are), seed 0.
#[unsafe(no_mangle)]
pub extern "C" fn kestrel_slkl_default_config(window: u32, dim: u32, centres: u32) -> SlklConfig {
    SlklConfig {
        window,
        dim,
        centres,
        max_active: centres,
        kernel: KernelConfig::rbf(0.5),
        nu: 0.01,
        steps_per_sample: 20,
        seed: 0,
    }
}

/// The capacities and the checked hyper-parameters of `config`.
fn checked(config: &SlklConfig) -> Result<(Dims, slkl::ValidParams<f32>), Status> {
    let (window, dim, centres, max_active) =
        (config.window as usize, config.dim as usize, config.centres as usize, config.max_active as usize);
    if window == 0
        || dim == 0
        || centres == 0
        || max_active == 0
        || max_active > centres
        || config.steps_per_sample == 0
    {
        return Err(Status::InvalidParam);
    }
    let params = slkl::Params::new().kernel(config.kernel.build()?).nu(config.nu).seed(config.seed).check()?;
    Ok((Dims::new(window, dim, centres, max_active).fewer_scalars(), params))
}

fn layout<Index>(dims: Dims) -> Layout {
    Layout::of::<Slkl>()
        .then::<f32>(SlklWindow::scalars_len(dims))
        .then::<Index>(SlklWindow::indices_len(dims))
        .then::<f32>(Predictor::scalars_len(dims.max_active(), dims.dim()))
}

/// The work memory and the buffers [`carve`] takes from it.
type Carved = (Work, &'static mut [f32], &'static mut [usize], &'static mut [f32]);

/// The buffers of a learner of `dims` carved from `work[0..work_len]`, in the order of
/// [`layout`]: the window's scalars, its indices and the saved model's room.
///
/// # Safety
/// As [`Work::new`].
unsafe fn carve(dims: Dims, work: *mut c_void, work_len: usize) -> Result<Carved, Status> {
    // SAFETY: as this function's contract.
    let mut work = unsafe { Work::new::<Slkl>(work, work_len, layout::<usize>(dims))? };
    let scalars = work.take::<f32>(SlklWindow::scalars_len(dims))?;
    let indices = work.take::<usize>(SlklWindow::indices_len(dims))?;
    let model = work.take::<f32>(Predictor::scalars_len(dims.max_active(), dims.dim()))?;
    Ok((work, scalars, indices, model))
}

/// The work bytes of a learner of `*config`, 0 for a null or invalid configuration.
///
/// # Safety
/// `config` is null or points to a readable `kestrel_slkl_config`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn kestrel_slkl_work_bytes(config: *const SlklConfig) -> usize {
    // SAFETY: as this function's contract.
    unsafe { memory::read(config) }.map_or(0, |config| config.work_bytes())
}

/// Creates an empty learner of `*config` with the candidate centres
/// `centres[0..centres_len]` (row-major, `config->centres` rows of `config->dim` floats)
/// in `work[0..work_len]` (aligned to `KESTREL_ALIGN`, at least
/// [`kestrel_slkl_work_bytes`] long), and writes its handle to `*out` (only on success).
///
/// Errors: `NULL_POINTER`, `MISALIGNED`, `BUFFER_TOO_SMALL`, `INVALID_PARAM` (a zero size,
/// `max_active` > `centres`, `ν ≤ 0`, a bad kernel), `DIMENSION_MISMATCH` (`centres_len`
/// ≠ `centres·dim`), `NON_FINITE`.
///
/// # Safety
/// `config` is null or points to a readable configuration; `centres` is null or points to
/// `centres_len` readable floats; `work` is null or points to `work_len` bytes that stay
/// valid, and are used for nothing else, while the learner is used; `out` is null or
/// points to a writable pointer.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn kestrel_slkl_create(
    config: *const SlklConfig,
    centres: *const f32,
    centres_len: usize,
    work: *mut c_void,
    work_len: usize,
    out: *mut *mut Slkl,
) -> Status {
    status_of((|| {
        memory::check_pointer(out)?;
        // SAFETY: as this function's contract.
        let config = unsafe { memory::read(config)? };
        let (dims, params) = checked(&config)?;
        // SAFETY: as this function's contract.
        let centres = unsafe { memory::floats(centres, centres_len)? };
        if Some(centres_len) != dims.candidates().checked_mul(dims.dim()) {
            return Err(Status::DimensionMismatch);
        }
        // SAFETY: as this function's contract.
        let (work, scalars, indices, model) = unsafe { carve(dims, work, work_len)? };
        let learner = SlklWindow::new_in(scalars, indices, dims, params, centres)?;
        let steps_per_sample = config.steps_per_sample as usize;
        let slkl = Slkl { tag: SLKL_TAG, config, samples_seen: 0, last_steps: 0, steps_per_sample, learner, model };
        // SAFETY: checked non-null and aligned above; writable by the contract.
        unsafe { memory::write(out, work.finish(slkl)) }
    })())
}

/// Learns the sample `(x[0..dim], y)`: it enters the window, then coordinate steps until
/// convergence or `steps_per_sample`.
///
/// Errors: `NULL_POINTER`, `MISALIGNED`, `WRONG_OBJECT`, `DIMENSION_MISMATCH`, `NON_FINITE`
/// (NaN or ±∞ in `x` or `y`, a target too large for the window, a kernel value that
/// overflows). A refused sample leaves the learner unchanged; the one exception is the
/// core's: a refactorization after the sample entered can still overflow at extreme
/// scales (`NON_FINITE`), and then the sample stays in the window.
///
/// # Safety
/// `learner` is null or a handle [`kestrel_slkl_create`] returned, used by no other call
/// meanwhile; `x` is null or points to `dim` readable floats.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn kestrel_slkl_learn(learner: *mut Slkl, x: *const f32, dim: usize, y: f32) -> Status {
    status_of((|| {
        // SAFETY: as this function's contract.
        let (slkl, x) = unsafe { (memory::object_mut(learner)?, memory::floats(x, dim)?) };
        let steps = slkl.learner.learn(x, y, slkl.steps_per_sample)?;
        slkl.samples_seen += 1;
        slkl.last_steps = u32::try_from(steps).unwrap_or(u32::MAX);
        Ok(())
    })())
}

/// Predicts `x[0..dim]` with the model of the current window and writes it to `*out`
/// (the window's mean target plus the kernel part; 0 before the first sample).
///
/// Errors: `NULL_POINTER`, `MISALIGNED`, `WRONG_OBJECT`, `DIMENSION_MISMATCH`, `NON_FINITE`.
///
/// # Safety
/// As [`kestrel_slkl_learn`]; `out` is null or points to a writable float.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn kestrel_slkl_predict(learner: *mut Slkl, x: *const f32, dim: usize, out: *mut f32) -> Status {
    status_of((|| {
        memory::check_pointer(out)?;
        // SAFETY: as this function's contract.
        let (slkl, x) = unsafe { (memory::object_mut(learner)?, memory::floats(x, dim)?) };
        let value = slkl.learner.predict(x)?;
        // SAFETY: as this function's contract.
        unsafe { memory::write(out, value) }
    })())
}

/// Writes the learner's state to `*out`: samples learned, samples in the window, active
/// centres, the window's mean target, whether the stopping rule held after the last
/// sample, and the coordinate steps it took.
///
/// # Safety
/// `learner` is null or a handle [`kestrel_slkl_create`] returned; `out` is null or points
/// to a writable `kestrel_learner_state`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn kestrel_slkl_state(learner: *const Slkl, out: *mut LearnerState) -> Status {
    status_of((|| {
        // SAFETY: as this function's contract.
        let slkl = unsafe { memory::object(learner)? };
        let state = LearnerState {
            samples_seen: slkl.samples_seen,
            window_len: slkl.learner.len(),
            active_centres: slkl.learner.active_len(),
            target_mean: slkl.learner.mean(),
            converged: slkl.learner.converged(),
            last_steps: slkl.last_steps,
        };
        // SAFETY: as this function's contract.
        unsafe { memory::write(out, state) }
    })())
}

/// Writes the model of the current window — with `scaler`'s statistics when `scaler` is
/// not null (the scaler the inputs were standardised by) — to `out[0..out_len]`, and its
/// length to `*written`; when the buffer is too small, `*written` receives the length
/// needed and the status is `BUFFER_TOO_SMALL` (`out` may be null with `out_len` 0 to ask).
///
/// # Safety
/// `learner` as for [`kestrel_slkl_learn`]; `scaler` is null or a scaler handle; `out` is
/// null or points to `out_len` writable bytes; `written` is null or points to a writable
/// `size_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn kestrel_slkl_save(
    learner: *mut Slkl,
    scaler: *const scaler::Scaler,
    out: *mut u8,
    out_len: usize,
    written: *mut usize,
) -> Status {
    status_of((|| {
        // SAFETY: as this function's contract.
        let slkl = unsafe { memory::object_mut(learner)? };
        let dim = slkl.learner.dims().dim();
        let model = slkl.learner.predictor_in(&mut *slkl.model)?;
        // SAFETY: as this function's contract.
        unsafe { save::save(&model, dim, &[], scaler, out, out_len, written) }
    })())
}

/// What a checkpoint of a [`Slkl`] holds before its buffers.
#[derive(Serialize, Deserialize)]
struct SlklCheckpoint {
    config: SlklConfig,
    samples_seen: u64,
    state: SlklWindowState<f32>,
}

/// What the checkpoint `reader` opened holds, from its header.
pub(crate) fn describe(reader: &mut Reader<'_>) -> Result<Described, Status> {
    let header: SlklCheckpoint = reader.value()?;
    Ok(Described::Slkl { config: header.config, samples_seen: header.samples_seen })
}

/// The most bytes a checkpoint of a learner of `*config` takes (its buffers and
/// `KESTREL_CHECKPOINT_HEADER_BYTES`; `KESTREL_SLKL_CHECKPOINT_BYTES(window, dim, centres,
/// max_active)` at compile time), 0 for a null or invalid configuration.
///
/// # Safety
/// `config` is null or points to a readable `kestrel_slkl_config`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn kestrel_slkl_checkpoint_bytes(config: *const SlklConfig) -> usize {
    // SAFETY: as this function's contract.
    unsafe { memory::read(config) }.map_or(0, |config| config.checkpoint_bytes())
}

/// Writes the learner's whole state — its configuration, the window, the centres, the
/// factor, the active set and the random generator — to `out[0..out_len]` and its length
/// to `*written`, for [`kestrel_slkl_resume`] after a reset; when the buffer is too small,
/// `*written` receives the length needed and the status is `BUFFER_TOO_SMALL`. The
/// learner is not changed.
///
/// Copied off the device, the bytes are read on a host by `kestrel inspect`, and `kestrel
/// import` makes them the model file [`kestrel_slkl_save`] would write.
///
/// Errors: `NULL_POINTER`, `MISALIGNED`, `WRONG_OBJECT`, `BUFFER_TOO_SMALL`, `NUMERICAL`
/// (the learner's numerics broke down on values near the range of `float` — a factor no
/// longer positive definite, a sum that overflowed — and its state would not resume: keep
/// the checkpoint you have; nothing is written).
///
/// # Safety
/// `learner` is null or a handle [`kestrel_slkl_create`] or [`kestrel_slkl_resume`]
/// returned, used by no other call meanwhile; `out` is null or points to `out_len` writable bytes (null with `out_len` = 0
/// asks for the length); `written` is null or points to a writable `size_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn kestrel_slkl_checkpoint(
    learner: *mut Slkl,
    out: *mut u8,
    out_len: usize,
    written: *mut usize,
) -> Status {
    status_of((|| {
        // SAFETY: as this function's contract.
        let slkl = unsafe { memory::object_mut(learner)? };
        slkl.learner.check_restorable().map_err(|_| Status::Numerical)?;
        let header =
            SlklCheckpoint { config: slkl.config, samples_seen: slkl.samples_seen, state: slkl.learner.state() };
        let (scalars, indices) = slkl.learner.storage();
        // SAFETY: as this function's contract.
        unsafe {
            checkpoint::write(DeviceObject::Slkl, out, out_len, written, |writer| {
                writer.value(&header)?;
                writer.floats(scalars);
                writer.indices(indices)
            })
        }
    })())
}

/// Rebuilds in `work[0..work_len]` the learner a checkpoint of [`kestrel_slkl_checkpoint`]
/// holds (its centres included), and writes its handle to `*out` (only on success): it
/// continues exactly as the saved learner would have. `config` must be the configuration
/// the learner was created with.
///
/// Errors: `NULL_POINTER`, `MISALIGNED`, `BUFFER_TOO_SMALL` (work shorter than
/// [`kestrel_slkl_work_bytes`]), `INVALID_PARAM` (`config`), `CONFIG_MISMATCH`,
/// `MODEL_TRUNCATED`, `MODEL_CORRUPTED`, `MODEL_FOREIGN` (not a checkpoint of a
/// `kestrel_slkl`), `MODEL_UNSUPPORTED`. Whatever the work buffer held is gone after a
/// failure past the configuration's checks.
///
/// # Safety
/// `config` is null or points to a readable configuration; `bytes` is null or points to
/// `len` readable bytes outside `work` (read while `work` is written); `work` and `out`
/// as for [`kestrel_slkl_create`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn kestrel_slkl_resume(
    config: *const SlklConfig,
    bytes: *const u8,
    len: usize,
    work: *mut c_void,
    work_len: usize,
    out: *mut *mut Slkl,
) -> Status {
    status_of((|| {
        memory::check_pointer(out)?;
        // SAFETY: as this function's contract.
        let config = unsafe { memory::read(config)? };
        let (dims, params) = checked(&config)?;
        // SAFETY: as this function's contract.
        let (mut reader, header) =
            unsafe { checkpoint::open(bytes, len, DeviceObject::Slkl, |h: &SlklCheckpoint| h.config == config)? };
        if header.state.dims() != dims {
            return Err(Status::ModelCorrupted);
        }
        // SAFETY: as this function's contract.
        let (work, scalars, indices, model) = unsafe { carve(dims, work, work_len)? };
        reader.floats(scalars)?;
        reader.indices(indices)?;
        reader.finish()?;
        let learner =
            SlklWindow::from_state_in(scalars, indices, params, header.state).map_err(|_| Status::ModelCorrupted)?;
        let steps_per_sample = config.steps_per_sample as usize;
        let samples_seen = header.samples_seen;
        let slkl = Slkl { tag: SLKL_TAG, config, samples_seen, last_steps: 0, steps_per_sample, learner, model };
        // SAFETY: checked non-null and aligned above; writable by the contract.
        unsafe { memory::write(out, work.finish(slkl)) }
    })())
}
