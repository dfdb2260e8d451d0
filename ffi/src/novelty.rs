//! `kestrel_novelty`: the kernel novelty detector learning on the device (the core's
//! [`Detector`]: the feature-space distance of a sample to the centre of mass of the last
//! `window` normal samples, seed 002 eq. 61, flagged beyond the `q`-quantile of the recent
//! scores), in caller memory.
//!
//! [`kestrel_novelty_learn`] is the call of a sensor loop: it scores the sample and then
//! learns it, unless it was flagged — then only its score counts toward the threshold, so
//! that anomalies neither take centres nor pull the centre of mass toward them (the policy
//! of `kestrel stream --learner novelty`). The first `warmup` samples are taken as normal
//! and set the threshold: nothing is flagged before sample `warmup + 1`.
//! [`kestrel_novelty_score`] scores without learning. [`kestrel_novelty_save`] freezes
//! the detector into a novelty model file (kind 5) that `kestrel_model_open` with
//! `kestrel_model_score`, `kestrel predict` and the Python package read.
//!
//! The detector takes its samples as they come: where the features' units differ, give it
//! a `kestrel_scaler`'s standardised rows (and the scaler to [`kestrel_novelty_save`], so
//! that the model standardises raw rows itself). With the default configuration, the
//! flags and the saved model are, bit for bit, those of `kestrel stream --learner novelty
//! --scalar f32 --no-scale` with the same window, centres and width on the same rows.
//!
//! [`kestrel_novelty_checkpoint`] writes the detector's whole state (centres, window,
//! threshold) and [`kestrel_novelty_resume`] continues from it bit for bit, after a reset
//! ([`crate::checkpoint`]).
//!
//! Memory: `KESTREL_NOVELTY_WORK_BYTES(window, dim, centres)` — the object header, the
//! centre of mass ([`CentreOfMass::scalars_len`]`(m, d) = m·d + m² + 2m` floats), its `m`
//! counts and the window's `N` ring entries (`uint32_t`), and room for the saved model
//! ([`NoveltyModel::scalars_len`]`(d, m) = m·d + 2m` floats). A saved model takes at most
//! `KESTREL_NOVELTY_MODEL_BYTES(dim, centres)` bytes, plus the scaler's section when one is
//! given.

use core::ffi::c_void;

use kestrel_core::device_checkpoint::DeviceObject;
use kestrel_core::kernel::KernelKind as CoreKind;
use kestrel_core::novelty::{CentreOfMass, Detector, DetectorParams, DetectorState as CoreState, NoveltyModel};
use serde::{Deserialize, Serialize};

use crate::checkpoint::{self, Described, Reader};
use crate::kernel::KernelConfig;
use crate::memory::{self, Layout, Object, Sizes, Tag, Work};
use crate::status::status_of;
use crate::{Status, save, scaler};

/// Bytes reserved for a novelty detector's header on every target.
pub const KESTREL_NOVELTY_OBJECT_BYTES: usize = 768;

/// "KSND".
const NOVELTY_TAG: Tag = Tag(0x444E_534B);

/// The configuration of a novelty detector; start from [`kestrel_novelty_default_config`]
/// and change what you need.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct NoveltyConfig {
    /// Normal samples the centre of mass is taken over, `N ≥ 1`.
    pub window: u32,
    /// Features per sample, `d ≥ 1`.
    pub dim: u32,
    /// The most centres representing the window, `m ≥ 1`.
    pub centres: u32,
    /// The kernel; scores use its normalised form (seed 002 eq. 62-63) unless it is the
    /// Gaussian or the Laplacian kernel, normalised already.
    pub kernel: KernelConfig,
    /// The quantile of the recent scores beyond which a sample is an anomaly, `0 < q < 1`
    /// (about `1 − q` of a stream is flagged).
    pub quantile: f64,
    /// The feature-space distance from every centre at which a learned sample becomes a
    /// centre, `δ ≥ 0`.
    pub delta: f32,
    /// Samples taken as normal before the first flag, `≥ 2`.
    pub warmup: u32,
    /// Scores per epoch of the threshold's estimator, `≥ 1`: the threshold is the quantile
    /// of the last `span` to `2·span` scores.
    pub span: u32,
}

impl Sizes for NoveltyConfig {
    fn work_bytes(&self) -> usize {
        checked(self).map_or(0, |(window, dim, centres, _)| layout(window, dim, centres).bytes())
    }

    fn checkpoint_bytes(&self) -> usize {
        checked(self).map_or(0, |(window, dim, centres, _)| {
            checkpoint::bound(CentreOfMass::scalars_len(centres, dim), centres.saturating_add(window))
        })
    }
}

/// What a detector said of a sample.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct NoveltyVerdict {
    /// Whether the sample was scored: not the first one, met by an empty window.
    pub scored: bool,
    /// Its squared feature-space distance `d²(x)` to the window's centre of mass (0 when
    /// not scored).
    pub distance2: f32,
    /// Whether a threshold exists: not during the warm-up.
    pub has_threshold: bool,
    /// The threshold `d²(x)` was compared with (0 without one).
    pub threshold: f32,
    /// `distance2 > threshold`: an anomaly. Never during the warm-up.
    pub anomaly: bool,
}

/// What a detector has done so far.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct DetectorState {
    /// Samples given to [`kestrel_novelty_learn`].
    pub samples_seen: u64,
    /// Of those, the samples flagged (and so not learned).
    pub flagged: u64,
    /// Normal samples in the window now.
    pub window_len: usize,
    /// Centres in use now.
    pub centres: usize,
    /// Whether a threshold exists (the warm-up is over).
    pub has_threshold: bool,
    /// The threshold a score is compared with now (0 without one).
    pub threshold: f32,
}

/// The core's detector in the caller's buffers: centre of mass, counts, window ring.
type DeviceDetector = Detector<f32, &'static mut [f32], &'static mut [u32], &'static mut [u32]>;

/// A novelty detector created by [`kestrel_novelty_create`]. Opaque to C.
#[repr(C)]
pub struct Novelty {
    tag: Tag,
    config: NoveltyConfig,
    samples_seen: u64,
    flagged: u64,
    detector: DeviceDetector,
    /// Storage of the saved model's centres, weights and norms.
    model: &'static mut [f32],
}

// SAFETY: `Novelty` is `#[repr(C)]` with its tag first, and `kestrel_novelty_create`
// writes `NOVELTY_TAG`.
unsafe impl Object for Novelty {
    const TAG: Tag = NOVELTY_TAG;
    const BYTES: usize = KESTREL_NOVELTY_OBJECT_BYTES;
}

/// `kestrel stream --learner novelty`'s settings for standardised features: the Gaussian
/// kernel with `γ = 1/d`, `q = 0.99`, `δ = 0.3`, a warm-up of 256 samples, epochs of 2048
/// scores (the stream's own window and centres are 48 and 16).
#[unsafe(no_mangle)]
pub extern "C" fn kestrel_novelty_default_config(window: u32, dim: u32, centres: u32) -> NoveltyConfig {
    let gamma = if dim == 0 { 1.0 } else { 1.0 / dim as f32 };
    NoveltyConfig {
        window,
        dim,
        centres,
        kernel: KernelConfig::rbf(gamma),
        quantile: 0.99,
        delta: 0.3,
        warmup: 256,
        span: 2048,
    }
}

/// The checked sizes `(N, d, m)`, kernel and parameters of `config`. The core counts the
/// scores before the first flag; the first sample has none, so it takes `warmup − 1`.
fn checked(config: &NoveltyConfig) -> Result<(usize, usize, usize, kestrel_core::Kernel<f32>), Status> {
    let (window, dim, centres) = (config.window as usize, config.dim as usize, config.centres as usize);
    if window == 0 || dim == 0 || centres == 0 || config.warmup < 2 || config.span == 0 {
        return Err(Status::InvalidParam);
    }
    Ok((window, dim, centres, config.kernel.build()?))
}

fn params(config: &NoveltyConfig) -> DetectorParams<f32> {
    DetectorParams {
        quantile: config.quantile,
        delta: config.delta,
        warmup: u64::from(config.warmup) - 1,
        span: u64::from(config.span),
    }
}

/// Whether the centre of mass normalises the kernel (all but the RBF and Laplacian, whose
/// `k(x, x)` is 1 already).
fn normalised(kernel: &kestrel_core::Kernel<f32>) -> bool {
    !matches!(kernel.kind(), CoreKind::Rbf { .. } | CoreKind::Laplacian { .. })
}

/// The work memory and the buffers [`carve`] takes from it.
type Carved = (Work, &'static mut [f32], &'static mut [u32], &'static mut [u32], &'static mut [f32]);

/// The buffers of a detector of `(window, dim, centres)` carved from `work[0..work_len]`,
/// in the order of [`layout`]: the centre of mass's scalars, its counts, the window's
/// ring and the saved model's room.
///
/// # Safety
/// As [`Work::new`].
unsafe fn carve(
    (window, dim, centres): (usize, usize, usize),
    work: *mut c_void,
    len: usize,
) -> Result<Carved, Status> {
    // SAFETY: as this function's contract.
    let mut work = unsafe { Work::new::<Novelty>(work, len, layout(window, dim, centres))? };
    let scalars = work.take::<f32>(CentreOfMass::scalars_len(centres, dim))?;
    let counts = work.take::<u32>(centres)?;
    let ring = work.take::<u32>(window)?;
    let model = work.take::<f32>(NoveltyModel::scalars_len(dim, centres))?;
    Ok((work, scalars, counts, ring, model))
}

fn layout(window: usize, dim: usize, centres: usize) -> Layout {
    Layout::of::<Novelty>()
        .then::<f32>(CentreOfMass::scalars_len(centres, dim))
        .then::<u32>(centres)
        .then::<u32>(window)
        .then::<f32>(NoveltyModel::scalars_len(dim, centres))
}

/// The work bytes of a detector of `*config`, 0 for a null or invalid configuration.
///
/// # Safety
/// `config` is null or points to a readable `kestrel_novelty_config`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn kestrel_novelty_work_bytes(config: *const NoveltyConfig) -> usize {
    // SAFETY: as this function's contract.
    unsafe { memory::read(config) }.map_or(0, |config| config.work_bytes())
}

/// Creates an empty detector of `*config` in `work[0..work_len]` (aligned to
/// `KESTREL_ALIGN`, at least [`kestrel_novelty_work_bytes`] long) and writes its handle to
/// `*out` (only on success).
///
/// Errors: `NULL_POINTER`, `MISALIGNED`, `BUFFER_TOO_SMALL`, `INVALID_PARAM` (a zero size,
/// a warm-up below 2, a span of 0, `q` outside `(0, 1)`, `δ` negative or not finite, a bad
/// kernel).
///
/// # Safety
/// `config` is null or points to a readable configuration; `work` is null or points to
/// `work_len` bytes that stay valid, and are used for nothing else, while the detector is
/// used; `out` is null or points to a writable pointer.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn kestrel_novelty_create(
    config: *const NoveltyConfig,
    work: *mut c_void,
    work_len: usize,
    out: *mut *mut Novelty,
) -> Status {
    status_of((|| {
        memory::check_pointer(out)?;
        // SAFETY: as this function's contract.
        let config = unsafe { memory::read(config)? };
        let (window, dim, centres, kernel) = checked(&config)?;
        // SAFETY: as this function's contract.
        let (work, scalars, counts, ring, model) = unsafe { carve((window, dim, centres), work, work_len)? };
        let mass = CentreOfMass::new_in(scalars, counts, dim, kernel, normalised(&kernel))?;
        let detector = Detector::new_in(mass, ring, params(&config))?;
        let object = Novelty { tag: NOVELTY_TAG, config, samples_seen: 0, flagged: 0, detector, model };
        // SAFETY: checked non-null and aligned above; writable by the contract.
        unsafe { memory::write(out, work.finish(object)) }
    })())
}

/// The verdict of a core score (`None`: not scored).
fn verdict(score: Option<kestrel_core::novelty::Score<f32>>) -> NoveltyVerdict {
    score.map_or_else(NoveltyVerdict::default, |score| NoveltyVerdict {
        scored: true,
        distance2: score.distance2,
        has_threshold: score.threshold.is_some(),
        threshold: score.threshold.unwrap_or(0.0),
        anomaly: score.anomaly,
    })
}

/// Scores the sample `x[0..dim]` and writes the verdict to `*out`, then learns the sample
/// unless it was flagged (an anomaly's score counts toward the threshold instead).
///
/// Errors: `NULL_POINTER`, `MISALIGNED`, `WRONG_OBJECT`, `DIMENSION_MISMATCH`, `NON_FINITE`
/// (NaN or ±∞ in `x`, a kernel value that overflows), `INVALID_PARAM` for a sample the
/// normalised kernel cannot place (`k(x, x) ≤ 0`: all zeros under the linear kernel); the
/// detector is unchanged and `*out` not written then.
///
/// # Safety
/// `detector` is null or a handle [`kestrel_novelty_create`] returned, used by no other
/// call meanwhile; `x` is null or points to `dim` readable floats; `out` is null or points
/// to a writable `kestrel_novelty_verdict`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn kestrel_novelty_learn(
    detector: *mut Novelty,
    x: *const f32,
    dim: usize,
    out: *mut NoveltyVerdict,
) -> Status {
    status_of((|| {
        memory::check_pointer(out)?;
        // SAFETY: as this function's contract.
        let (novelty, x) = unsafe { (memory::object_mut(detector)?, memory::floats(x, dim)?) };
        let assessment = novelty.detector.assess(x)?;
        let score = assessment.score();
        match score {
            Some(score) if score.anomaly => {
                novelty.detector.observe(score.distance2)?;
                novelty.flagged += 1;
            }
            _ => {
                novelty.detector.learn_assessed(x, &assessment)?;
            }
        }
        novelty.samples_seen += 1;
        // SAFETY: as this function's contract.
        unsafe { memory::write(out, verdict(score)) }
    })())
}

/// Scores `x[0..dim]` against the window without learning it and writes the verdict to
/// `*out` (not scored before the first sample).
///
/// Errors: as [`kestrel_novelty_learn`].
///
/// # Safety
/// `detector` is null or a handle [`kestrel_novelty_create`] returned; `x` is null or
/// points to `dim` readable floats; `out` is null or points to a writable
/// `kestrel_novelty_verdict`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn kestrel_novelty_score(
    detector: *const Novelty,
    x: *const f32,
    dim: usize,
    out: *mut NoveltyVerdict,
) -> Status {
    status_of((|| {
        memory::check_pointer(out)?;
        // SAFETY: as this function's contract.
        let (novelty, x) = unsafe { (memory::object(detector)?, memory::floats(x, dim)?) };
        let score = novelty.detector.assess(x)?.score();
        // SAFETY: as this function's contract.
        unsafe { memory::write(out, verdict(score)) }
    })())
}

/// Writes the detector's state to `*out`.
///
/// # Safety
/// `detector` is null or a handle [`kestrel_novelty_create`] returned; `out` is null or
/// points to a writable `kestrel_detector_state`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn kestrel_novelty_state(detector: *const Novelty, out: *mut DetectorState) -> Status {
    status_of((|| {
        // SAFETY: as this function's contract.
        let novelty = unsafe { memory::object(detector)? };
        let threshold = novelty.detector.threshold();
        let state = DetectorState {
            samples_seen: novelty.samples_seen,
            flagged: novelty.flagged,
            window_len: novelty.detector.len(),
            centres: novelty.detector.mass().centres_len(),
            has_threshold: threshold.is_some(),
            threshold: threshold.unwrap_or(0.0),
        };
        // SAFETY: as this function's contract.
        unsafe { memory::write(out, state) }
    })())
}

/// Writes the detector frozen into a novelty model — the window's centre of mass and the
/// threshold of the moment (during the warm-up, the estimate so far), with `scaler`'s
/// statistics when `scaler` is not null — to `out[0..out_len]`, and its length to
/// `*written`; when the buffer is too small, `*written` receives the length needed and the
/// status is `BUFFER_TOO_SMALL` (`out` may be null with `out_len` 0 to ask).
///
/// Errors: as the other `*_save` functions, and `INVALID_PARAM` before the first sample
/// (there is no model yet).
///
/// # Safety
/// `detector` as for [`kestrel_novelty_learn`]; `scaler` is null or a scaler handle; `out`
/// is null or points to `out_len` writable bytes; `written` is null or points to a writable
/// `size_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn kestrel_novelty_save(
    detector: *mut Novelty,
    scaler: *const scaler::Scaler,
    out: *mut u8,
    out_len: usize,
    written: *mut usize,
) -> Status {
    status_of((|| {
        // SAFETY: as this function's contract.
        let novelty = unsafe { memory::object_mut(detector)? };
        let dim = novelty.detector.mass().dim();
        let model = novelty.detector.model_in(&mut *novelty.model)?;
        // SAFETY: as this function's contract.
        unsafe { save::save(&model, dim, &[], scaler, out, out_len, written) }
    })())
}

/// What a checkpoint of a [`Novelty`] holds before its buffers.
#[derive(Serialize, Deserialize)]
struct NoveltyCheckpoint {
    config: NoveltyConfig,
    samples_seen: u64,
    flagged: u64,
    state: CoreState<f32>,
}

/// What the checkpoint `reader` opened holds, from its header.
pub(crate) fn describe(reader: &mut Reader<'_>) -> Result<Described, Status> {
    let header: NoveltyCheckpoint = reader.value()?;
    Ok(Described::Novelty { config: header.config, samples_seen: header.samples_seen, flagged: header.flagged })
}

/// The most bytes a checkpoint of a detector of `*config` takes (its buffers and
/// `KESTREL_CHECKPOINT_HEADER_BYTES`; `KESTREL_NOVELTY_CHECKPOINT_BYTES(window, dim,
/// centres)` at compile time), 0 for a null or invalid configuration.
///
/// # Safety
/// `config` is null or points to a readable `kestrel_novelty_config`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn kestrel_novelty_checkpoint_bytes(config: *const NoveltyConfig) -> usize {
    // SAFETY: as this function's contract.
    unsafe { memory::read(config) }.map_or(0, |config| config.checkpoint_bytes())
}

/// Writes the detector's whole state — its configuration, centres, counts, window and
/// threshold — to `out[0..out_len]` and its length to `*written`, for
/// [`kestrel_novelty_resume`] after a reset; when the buffer is too small, `*written`
/// receives the length needed and the status is `BUFFER_TOO_SMALL`.
///
/// Copied off the device, the bytes are read on a host by `kestrel inspect`, and `kestrel
/// import` makes them the model file [`kestrel_novelty_save`] would write.
///
/// Errors: `NULL_POINTER`, `MISALIGNED`, `WRONG_OBJECT`, `BUFFER_TOO_SMALL`, `NUMERICAL`
/// (the detector's numerics broke down on values near the range of `float` and its state
/// would not resume: keep the checkpoint you have; nothing is written).
///
/// # Safety
/// `detector` is null or a handle [`kestrel_novelty_create`] or [`kestrel_novelty_resume`]
/// returned; `out` is null or points to `out_len` writable bytes (null with `out_len` = 0
/// asks for the length); `written` is null or points to a writable `size_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn kestrel_novelty_checkpoint(
    detector: *const Novelty,
    out: *mut u8,
    out_len: usize,
    written: *mut usize,
) -> Status {
    status_of((|| {
        // SAFETY: as this function's contract.
        let novelty = unsafe { memory::object(detector)? };
        novelty.detector.check_restorable().map_err(|_| Status::Numerical)?;
        let header = NoveltyCheckpoint {
            config: novelty.config,
            samples_seen: novelty.samples_seen,
            flagged: novelty.flagged,
            state: novelty.detector.state(),
        };
        let (scalars, counts, ring) = novelty.detector.storage();
        // SAFETY: as this function's contract.
        unsafe {
            checkpoint::write(DeviceObject::Novelty, out, out_len, written, |writer| {
                writer.value(&header)?;
                writer.floats(scalars);
                writer.words(counts);
                writer.words(ring);
                Ok(())
            })
        }
    })())
}

/// Rebuilds in `work[0..work_len]` the detector a checkpoint of
/// [`kestrel_novelty_checkpoint`] holds, and writes its handle to `*out` (only on
/// success): it continues exactly as the saved detector would have. `config` must be the
/// configuration the detector was created with.
///
/// Errors: `NULL_POINTER`, `MISALIGNED`, `BUFFER_TOO_SMALL` (work shorter than
/// [`kestrel_novelty_work_bytes`]), `INVALID_PARAM` (`config`), `CONFIG_MISMATCH`,
/// `MODEL_TRUNCATED`, `MODEL_CORRUPTED`, `MODEL_FOREIGN` (not a checkpoint of a
/// `kestrel_novelty`), `MODEL_UNSUPPORTED`. Whatever the work buffer held is gone after a
/// failure past the configuration's checks.
///
/// # Safety
/// `config` is null or points to a readable configuration; `bytes` is null or points to
/// `len` readable bytes outside `work` (read while `work` is written); `work` and `out`
/// as for [`kestrel_novelty_create`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn kestrel_novelty_resume(
    config: *const NoveltyConfig,
    bytes: *const u8,
    len: usize,
    work: *mut c_void,
    work_len: usize,
    out: *mut *mut Novelty,
) -> Status {
    status_of((|| {
        memory::check_pointer(out)?;
        // SAFETY: as this function's contract.
        let config = unsafe { memory::read(config)? };
        let (window, dim, centres, kernel) = checked(&config)?;
        // SAFETY: as this function's contract.
        let (mut reader, header) =
            unsafe { checkpoint::open(bytes, len, DeviceObject::Novelty, |h: &NoveltyCheckpoint| h.config == config)? };
        // SAFETY: as this function's contract.
        let (work, scalars, counts, ring, model) = unsafe { carve((window, dim, centres), work, work_len)? };
        reader.floats(scalars)?;
        reader.words(counts)?;
        reader.words(ring)?;
        reader.finish()?;
        let (params, normalised) = (params(&config), normalised(&kernel));
        let detector = Detector::from_state_in(scalars, counts, ring, dim, kernel, normalised, params, header.state)
            .map_err(|_| Status::ModelCorrupted)?;
        let (samples_seen, flagged) = (header.samples_seen, header.flagged);
        let object = Novelty { tag: NOVELTY_TAG, config, samples_seen, flagged, detector, model };
        // SAFETY: checked non-null and aligned above; writable by the contract.
        unsafe { memory::write(out, work.finish(object)) }
    })())
}
