//! `kestrel_scaler`: online standardisation of a device's raw sensor units (the core's
//! [`Scaler`](CoreScaler): Welford's running mean and deviation per feature, `x ↦ (x − μ)/σ`), in
//! caller memory.
//!
//! The order the stream learners use: to **predict**, transform the raw row with the
//! statistics so far; to **learn**, observe the row first, then transform it and give the
//! result to the learner. Saving a learner with its scaler
//! (`kestrel_slkl_save(learner, scaler, …)`) puts the statistics into the model file, so
//! `kestrel predict` and `kestrel_model_predict` standardise as the device did.
//!
//! [`kestrel_scaler_checkpoint`] and [`kestrel_scaler_resume`] keep the statistics across
//! a reset, beside the learner's own checkpoint ([`crate::checkpoint`]).
//!
//! Memory: `KESTREL_SCALER_WORK_BYTES(dim)` = the object header and `4·dim` floats.

use core::ffi::c_void;

use kestrel_core::device_checkpoint::DeviceObject;
use kestrel_core::scaler::Scaler as CoreScaler;

use serde::{Deserialize, Serialize};

use crate::Status;
use crate::checkpoint::{self, Described, Reader};
use crate::memory::{self, Layout, Object, Tag, Work};
use crate::status::status_of;

/// Bytes reserved for a scaler object's header on every target.
pub const KESTREL_SCALER_OBJECT_BYTES: usize = 64;

/// "KSCL".
const SCALER_TAG: Tag = Tag(0x4C43_534B);

/// An online scaler created by [`kestrel_scaler_create`]. Opaque to C.
#[repr(C)]
pub struct Scaler {
    tag: Tag,
    pub(crate) scaler: CoreScaler<f32, &'static mut [f32]>,
}

// SAFETY: `Scaler` is `#[repr(C)]` with its tag first, and `kestrel_scaler_create` writes
// `SCALER_TAG`.
unsafe impl Object for Scaler {
    const TAG: Tag = SCALER_TAG;
    const BYTES: usize = KESTREL_SCALER_OBJECT_BYTES;
}

fn layout(dim: usize) -> Layout {
    Layout::of::<Scaler>().then::<f32>(CoreScaler::scalars_len(dim))
}

/// The work bytes of a scaler of `dim` features (0 for `dim` = 0).
#[unsafe(no_mangle)]
pub extern "C" fn kestrel_scaler_work_bytes(dim: usize) -> usize {
    if dim == 0 { 0 } else { layout(dim).bytes() }
}

/// Creates a scaler of `dim` features that has observed nothing in `work[0..work_len]`
/// (aligned to `KESTREL_ALIGN`, at least [`kestrel_scaler_work_bytes`] long) and writes
/// its handle to `*out` (only on success).
///
/// # Safety
/// `work` is null or points to `work_len` bytes that stay valid, and are used for nothing
/// else, while the scaler is used; `out` is null or points to a writable pointer.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn kestrel_scaler_create(
    dim: usize,
    work: *mut c_void,
    work_len: usize,
    out: *mut *mut Scaler,
) -> Status {
    status_of((|| {
        memory::check_pointer(out)?;
        if dim == 0 {
            return Err(Status::InvalidParam);
        }
        // SAFETY: as this function's contract.
        let mut work = unsafe { Work::new::<Scaler>(work, work_len, layout(dim))? };
        let scaler = CoreScaler::new_in(work.take::<f32>(CoreScaler::scalars_len(dim))?, dim)?;
        // SAFETY: checked non-null and aligned above; writable by the contract.
        unsafe { memory::write(out, work.finish(Scaler { tag: SCALER_TAG, scaler })) }
    })())
}

/// Updates the running statistics with the raw row `x[0..dim]`.
///
/// Errors: `NULL_POINTER`, `MISALIGNED`, `WRONG_OBJECT`, `DIMENSION_MISMATCH`, `NON_FINITE`
/// (NaN or ±∞ in `x`, or a statistic that would overflow; nothing is updated).
///
/// # Safety
/// `scaler` is null or a handle [`kestrel_scaler_create`] returned, used by no other call
/// meanwhile; `x` is null or points to `dim` readable floats.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn kestrel_scaler_observe(scaler: *mut Scaler, x: *const f32, dim: usize) -> Status {
    status_of((|| {
        // SAFETY: as this function's contract.
        let (scaler, x) = unsafe { (memory::object_mut(scaler)?, memory::floats(x, dim)?) };
        Ok(scaler.scaler.observe(x)?)
    })())
}

/// Writes the standardised `x[0..dim]` to `out[0..dim]` (`out` may be `x`, for a
/// transform in place).
///
/// Errors: `NULL_POINTER`, `MISALIGNED`, `WRONG_OBJECT`, `DIMENSION_MISMATCH`, `NON_FINITE`
/// (`out` is then unspecified).
///
/// # Safety
/// `scaler` is null or a handle [`kestrel_scaler_create`] returned; `x` and `out` are null
/// or point to `dim` floats, readable and writable respectively.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn kestrel_scaler_transform(
    scaler: *const Scaler,
    x: *const f32,
    dim: usize,
    out: *mut f32,
) -> Status {
    status_of((|| {
        // SAFETY: as this function's contract.
        let scaler = unsafe { memory::object(scaler)? };
        if dim != scaler.scaler.dim() {
            return Err(Status::DimensionMismatch);
        }
        memory::check_pointer(x)?;
        memory::check_pointer(out)?;
        // SAFETY: both point to `dim` floats (the contract), checked non-null and aligned;
        // `copy` allows them to overlap, and after it only `out` is used.
        let row = unsafe {
            core::ptr::copy(x, out, dim);
            core::slice::from_raw_parts_mut(out, dim)
        };
        Ok(scaler.scaler.transform(row)?)
    })())
}

/// Writes the number of rows the scaler has observed to `*count`.
///
/// # Safety
/// `scaler` is null or a handle [`kestrel_scaler_create`] returned; `count` is null or
/// points to a writable `uint64_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn kestrel_scaler_count(scaler: *const Scaler, count: *mut u64) -> Status {
    status_of((|| {
        // SAFETY: as this function's contract.
        let scaler = unsafe { memory::object(scaler)? };
        // SAFETY: as this function's contract.
        unsafe { memory::write(count, scaler.scaler.count()) }
    })())
}

/// What a checkpoint of a [`Scaler`] holds before its statistics (`μ`, `M₂` and the
/// weights, `d` floats each).
#[derive(Serialize, Deserialize)]
struct ScalerCheckpoint {
    dim: u64,
    count: u64,
}

/// What the checkpoint `reader` opened holds, from its header.
pub(crate) fn describe(reader: &mut Reader<'_>) -> Result<Described, Status> {
    let header: ScalerCheckpoint = reader.value()?;
    Ok(Described::Scaler { dim: header.dim, count: header.count })
}

/// The most bytes a checkpoint of a scaler of `dim` features takes (`3·dim` floats and
/// `KESTREL_CHECKPOINT_HEADER_BYTES`; `KESTREL_SCALER_CHECKPOINT_BYTES(dim)` at compile
/// time), 0 for `dim` = 0.
#[unsafe(no_mangle)]
pub extern "C" fn kestrel_scaler_checkpoint_bytes(dim: usize) -> usize {
    if dim == 0 { 0 } else { checkpoint::bound(dim.saturating_mul(3), 0) }
}

/// Writes the scaler's statistics to `out[0..out_len]` and the length to `*written`, for
/// [`kestrel_scaler_resume`] after a reset (the length protocol of
/// [`kestrel_scaler_checkpoint_bytes`]'s siblings: a buffer too small gets the length
/// needed and `BUFFER_TOO_SMALL`).
///
/// # Safety
/// `scaler` is null or a scaler handle; `out` is null or points to `out_len` writable
/// bytes (null with `out_len` = 0 asks for the length); `written` is null or points to a
/// writable `size_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn kestrel_scaler_checkpoint(
    scaler: *const Scaler,
    out: *mut u8,
    out_len: usize,
    written: *mut usize,
) -> Status {
    status_of((|| {
        // SAFETY: as this function's contract.
        let scaler = &unsafe { memory::object(scaler)? }.scaler;
        let header = ScalerCheckpoint { dim: scaler.dim() as u64, count: scaler.count() };
        let section = scaler.section();
        // SAFETY: as this function's contract.
        unsafe {
            checkpoint::write(DeviceObject::Scaler, out, out_len, written, |writer| {
                writer.value(&header)?;
                writer.floats(section.mean);
                writer.floats(section.m2);
                writer.floats(scaler.weights());
                Ok(())
            })
        }
    })())
}

/// Rebuilds in `work[0..work_len]` the scaler of `dim` features a checkpoint of
/// [`kestrel_scaler_checkpoint`] holds, and writes its handle to `*out` (only on success).
///
/// Errors: `NULL_POINTER`, `MISALIGNED`, `BUFFER_TOO_SMALL`, `INVALID_PARAM` (`dim` = 0),
/// `CONFIG_MISMATCH` (a scaler of another dimension), `MODEL_TRUNCATED`,
/// `MODEL_CORRUPTED`, `MODEL_FOREIGN`, `MODEL_UNSUPPORTED`.
///
/// # Safety
/// `bytes` is null or points to `len` readable bytes outside `work` (read while `work` is
/// written); `work` and `out` as for [`kestrel_scaler_create`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn kestrel_scaler_resume(
    dim: usize,
    bytes: *const u8,
    len: usize,
    work: *mut c_void,
    work_len: usize,
    out: *mut *mut Scaler,
) -> Status {
    status_of((|| {
        memory::check_pointer(out)?;
        if dim == 0 {
            return Err(Status::InvalidParam);
        }
        // SAFETY: as this function's contract.
        let (mut reader, header) =
            unsafe { checkpoint::open(bytes, len, DeviceObject::Scaler, |h: &ScalerCheckpoint| h.dim == dim as u64)? };
        // SAFETY: as this function's contract.
        let mut work = unsafe { Work::new::<Scaler>(work, work_len, layout(dim))? };
        let storage = work.take::<f32>(CoreScaler::scalars_len(dim))?;
        reader.floats(storage.get_mut(..3 * dim).ok_or(Status::BufferTooSmall)?)?;
        reader.finish()?;
        let scaler = CoreScaler::from_statistics_in(storage, dim, header.count).map_err(|_| Status::ModelCorrupted)?;
        // SAFETY: checked non-null and aligned above; writable by the contract.
        unsafe { memory::write(out, work.finish(Scaler { tag: SCALER_TAG, scaler })) }
    })())
}

/// The scaler behind an optional handle: `None` for null.
///
/// # Safety
/// As [`memory::object`].
pub(crate) unsafe fn optional<'a>(
    scaler: *const Scaler,
) -> Result<Option<&'a CoreScaler<f32, &'static mut [f32]>>, Status> {
    if scaler.is_null() {
        return Ok(None);
    }
    // SAFETY: as this function's contract.
    Ok(Some(&unsafe { memory::object(scaler)? }.scaler))
}
