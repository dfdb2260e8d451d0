//! Writing a learner's model into a caller's buffer: the core's envelope, with a
//! classifier's class probabilities when it has them and the scaler's statistics when the
//! learner's inputs were standardised, under the length protocol every `*_save` function
//! follows.
//!
//! `*written` receives the model's length on success, and the length needed when the
//! buffer is too small (`KESTREL_STATUS_BUFFER_TOO_SMALL`): call once with a null buffer of
//! length 0 to learn the size, or size a static buffer by the bound each learner's docs
//! give.

use kestrel_core::calibration::Sigmoid;
use kestrel_core::model::Encode;
use kestrel_core::scaler::Scaler;

use crate::memory;
use crate::{Status, scaler};

/// Writes `model` of `dim` features, with the calibration section of `sigmoids` when there
/// are any and `scaler`'s section when it is not null, to `out[0..out_len]`, and its length
/// (or the length needed) to `*written`.
///
/// # Errors
/// `DIMENSION_MISMATCH` for a scaler of another dimension, `BUFFER_TOO_SMALL`, and the
/// pointers' statuses.
///
/// # Safety
/// `scaler` is null or a scaler handle; `out` is null or points to `out_len` writable
/// bytes (null is allowed with `out_len` = 0, to ask for the length); `written` is null or
/// points to a writable `size_t`.
pub(crate) unsafe fn save(
    model: &impl Encode,
    dim: usize,
    sigmoids: &[Sigmoid],
    scaler: *const scaler::Scaler,
    out: *mut u8,
    out_len: usize,
    written: *mut usize,
) -> Result<(), Status> {
    memory::check_pointer(written)?;
    // SAFETY: as this function's contract.
    let scaler = unsafe { scaler::optional(scaler)? };
    if scaler.is_some_and(|s| s.dim() != dim) {
        return Err(Status::DimensionMismatch);
    }
    let calibration = if sigmoids.is_empty() { 0 } else { kestrel_core::model::calibration_len(sigmoids) };
    let needed = model.encoded_len().saturating_add(calibration).saturating_add(scaler.map_or(0, section_len));
    if out_len < needed {
        // SAFETY: checked non-null and aligned; writable by the contract.
        unsafe { memory::write(written, needed)? };
        return Err(Status::BufferTooSmall);
    }
    // SAFETY: as this function's contract.
    let out = unsafe { memory::bytes_mut(out, out_len)? };
    let mut len = model.encode(out)?;
    if !sigmoids.is_empty() {
        len = kestrel_core::model::add_calibration(out, len, sigmoids)?;
    }
    if let Some(scaler) = scaler {
        len = kestrel_core::model::add_scaler(out, len, scaler.section())?;
    }
    // SAFETY: as above.
    unsafe { memory::write(written, len) }
}

/// Bytes the scaler's section adds to a model file.
fn section_len(scaler: &Scaler<f32, &'static mut [f32]>) -> usize {
    kestrel_core::model::scaler_len(&scaler.section())
}
