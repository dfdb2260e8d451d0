//! What every function of the ABI returns: [`Status`], its text, and how the core's
//! [`Error`] maps onto it.
//!
//! The values are part of the ABI: a value once published keeps its meaning, and new
//! values are only appended. They are small on purpose (a firmware log line, a return code
//! through an RTOS queue); the detail the core's error carries (which pivot, how many
//! bytes) is dropped at the boundary, except for the bytes a too-small buffer needed,
//! which the functions that fill a buffer return through their length argument.

use core::ffi::c_char;

use kestrel_core::Error;
use kestrel_core::model::ModelError;

/// The outcome of a call. `KESTREL_STATUS_OK` is 0; every other value means the call
/// changed nothing (the object it was given is as it was, no output was written unless
/// the function says otherwise).
#[repr(i32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Status {
    /// The call succeeded.
    Ok = 0,
    /// A pointer argument was null.
    NullPointer = 1,
    /// A caller buffer (work memory, an output buffer) is smaller than the call needs.
    BufferTooSmall = 2,
    /// A pointer is not aligned as its type needs: work memory to `KESTREL_ALIGN` bytes,
    /// `float` arrays to 4.
    Misaligned = 3,
    /// An input's length is not the object's dimension.
    DimensionMismatch = 4,
    /// An input holds NaN or ±∞, or a computation on finite input overflowed.
    NonFinite = 5,
    /// A configuration value is out of range (a zero size, a negative cost, an unknown
    /// kernel or loss).
    InvalidParam = 6,
    /// A label the learner does not take (the SVM takes −1 and +1).
    InvalidLabel = 7,
    /// The model (or checkpoint) bytes end before the length their header announces.
    ModelTruncated = 8,
    /// The model (or checkpoint) bytes were altered: the checksum does not match, the
    /// payload does not decode, or a checkpoint's state fails the core's checks.
    ModelCorrupted = 9,
    /// The bytes are not a Kestrel model (wrong magic, unknown kind or scalar tag), or not
    /// a checkpoint of the kind of object being resumed.
    ModelForeign = 10,
    /// A Kestrel model (or checkpoint) this library does not run: another format version,
    /// or an `f64` model (train with `--scalar f32` for a device).
    ModelUnsupported = 11,
    /// A numerical failure the inputs caused (a matrix not positive definite, an
    /// iteration that did not converge).
    Numerical = 12,
    /// The pointer is not an object of the kind the function takes (or not one that was
    /// created).
    WrongObject = 13,
    /// Another call is using the model's scratch row right now (two threads, or an
    /// interrupt, predicting with one scaled model); give each its own model object.
    Busy = 14,
    /// The checkpoint was written by an object of another configuration than the one
    /// the resume names (e.g. a firmware update changed the window): start afresh.
    ConfigMismatch = 15,
}

impl From<Error> for Status {
    fn from(error: Error) -> Self {
        match error {
            Error::CapacityExceeded { .. } => Status::BufferTooSmall,
            Error::DimensionMismatch { .. } => Status::DimensionMismatch,
            Error::NonFinite => Status::NonFinite,
            Error::InvalidParam { .. } | Error::IndexOutOfRange { .. } => Status::InvalidParam,
            Error::InvalidLabel { .. } => Status::InvalidLabel,
            Error::Model(model) => model_status(model),
            Error::NotPositiveDefinite { .. } | Error::Singular { .. } | Error::NotConverged { .. } => {
                Status::Numerical
            }
            // The core's error is non-exhaustive: a variant added later is still a failure.
            _ => Status::Numerical,
        }
    }
}

/// The status of a model the core's decoder rejected.
fn model_status(error: ModelError) -> Status {
    match error {
        ModelError::Truncated { .. } => Status::ModelTruncated,
        ModelError::ChecksumMismatch { .. } | ModelError::TrailingBytes | ModelError::Payload => Status::ModelCorrupted,
        ModelError::BadMagic | ModelError::UnknownTag { .. } | ModelError::WrongKind => Status::ModelForeign,
        ModelError::UnsupportedVersion { .. } | ModelError::WrongScalar => Status::ModelUnsupported,
        _ => Status::ModelCorrupted,
    }
}

/// `Status::Ok` for `Ok(())`, the error's status otherwise: the last line of every
/// exported function.
pub(crate) fn status_of(result: Result<(), Status>) -> Status {
    result.err().unwrap_or(Status::Ok)
}

/// `Ok(())` for `Status::Ok`, `Err(status)` otherwise: an exported function's status taken
/// back into Rust, the inverse of [`status_of`].
pub(crate) fn result_of(status: Status) -> Result<(), Status> {
    if status == Status::Ok { Ok(()) } else { Err(status) }
}

/// A short English description of `status` (a `kestrel_status` value), as a static
/// NUL-terminated string; `"unknown status"` for a value that is not one.
#[unsafe(no_mangle)]
pub extern "C" fn kestrel_status_str(status: i32) -> *const c_char {
    let text = match status {
        0 => c"ok",
        1 => c"null pointer",
        2 => c"buffer too small",
        3 => c"misaligned pointer",
        4 => c"dimension mismatch",
        5 => c"NaN or infinity in the input, or an overflow",
        6 => c"invalid parameter",
        7 => c"invalid label",
        8 => c"model or checkpoint truncated",
        9 => c"model or checkpoint corrupted",
        10 => c"not a Kestrel model, or not a checkpoint of this kind of object",
        11 => c"unsupported model or checkpoint (format version or f64 scalar)",
        12 => c"numerical failure",
        13 => c"wrong object",
        14 => c"model busy",
        15 => c"checkpoint of another configuration",
        _ => c"unknown status",
    };
    text.as_ptr()
}

#[cfg(test)]
mod tests {
    use core::ffi::CStr;

    use super::*;

    #[test]
    fn every_status_has_its_own_text() {
        let all = [
            Status::Ok,
            Status::NullPointer,
            Status::BufferTooSmall,
            Status::Misaligned,
            Status::DimensionMismatch,
            Status::NonFinite,
            Status::InvalidParam,
            Status::InvalidLabel,
            Status::ModelTruncated,
            Status::ModelCorrupted,
            Status::ModelForeign,
            Status::ModelUnsupported,
            Status::Numerical,
            Status::WrongObject,
            Status::Busy,
            Status::ConfigMismatch,
        ];
        // SAFETY: kestrel_status_str returns static NUL-terminated strings.
        let text = |s: i32| unsafe { CStr::from_ptr(kestrel_status_str(s)) }.to_str().unwrap();
        let unknown = text(all.len() as i32);
        assert_eq!((unknown, text(-1)), ("unknown status", "unknown status"));
        for (value, status) in all.iter().enumerate() {
            assert_eq!(*status as i32, value as i32, "values are dense from 0");
            assert_ne!(text(value as i32), unknown);
            assert!(all[..value].iter().all(|other| text(*other as i32) != text(value as i32)));
        }
    }

    #[test]
    fn core_errors_map_to_statuses() {
        let cases = [
            (Error::CapacityExceeded { needed: 2, capacity: 1 }, Status::BufferTooSmall),
            (Error::DimensionMismatch { expected: 3, got: 2 }, Status::DimensionMismatch),
            (Error::NonFinite, Status::NonFinite),
            (Error::InvalidLabel { row: 0 }, Status::InvalidLabel),
            (Error::NotPositiveDefinite { pivot: 1 }, Status::Numerical),
            (Error::Model(ModelError::Truncated { needed: 9, got: 8 }), Status::ModelTruncated),
            (Error::Model(ModelError::ChecksumMismatch { stored: 1, computed: 2 }), Status::ModelCorrupted),
            (Error::Model(ModelError::BadMagic), Status::ModelForeign),
            (Error::Model(ModelError::WrongScalar), Status::ModelUnsupported),
        ];
        for (error, status) in cases {
            assert_eq!(Status::from(error), status, "{error}");
        }
    }
}
