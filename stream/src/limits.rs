//! The limits on sizes taken from input, and fallible allocation of the buffers they size.
//!
//! Every size that comes from outside — a label, a feature index, a CSV header, a flag, a
//! model or checkpoint file — is checked against one of the limits below before anything
//! is allocated from it, and the buffers it sizes are allocated with
//! [`Vec::try_reserve_exact`] through [`zeroed`], so an impossible size is an error that
//! names what asked for it, never an abort.
//!
//! | limit | value | why |
//! |---|---|---|
//! | [`MAX_DIM`] | 2²⁴ features | a dense row of every kernel learner; as the model loader allows |
//! | [`MAX_CLASSES`] | 2¹⁶ distinct labels | one weight vector per class |
//! | [`MAX_CLASS_NAME_BYTES`] | 1 KiB per class name | every distinct name is kept |
//! | [`DEFAULT_MAX_LINE_BYTES`] | 1 MiB per input line | a line is held whole while it is parsed |
//! | [`MAX_FILE_BYTES`] | 1 GiB per model or checkpoint file | they are read whole |
//! | [`MAX_CENTERS`] | 2¹⁴ centres of a kernel learner | an m × m factor: 2 GiB in f64 at the limit |

/// The most features a data set, a stream or a model may have.
pub const MAX_DIM: usize = 1 << 24;
/// The most distinct labels a classifier may be trained on.
pub const MAX_CLASSES: usize = 1 << 16;
/// The longest class name, in bytes (names are kept: at most 64 MiB of them).
pub const MAX_CLASS_NAME_BYTES: usize = 1 << 10;
/// The longest input line, in bytes, unless the caller sets another limit.
pub const DEFAULT_MAX_LINE_BYTES: usize = 1 << 20;
/// The largest model or checkpoint file read.
pub const MAX_FILE_BYTES: u64 = 1 << 30;
/// The most centres of a kernel learner.
pub const MAX_CENTERS: usize = 1 << 14;

/// A buffer that could not be allocated.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("cannot allocate {bytes} bytes for {what}")]
pub struct AllocError {
    /// What the buffer was for.
    pub what: &'static str,
    /// The bytes asked for (saturated at `usize::MAX`).
    pub bytes: usize,
}

impl From<AllocError> for kestrel_core::Error {
    /// A buffer that could not be had, as the core's error: capacity 0 of the bytes asked.
    fn from(error: AllocError) -> Self {
        kestrel_core::Error::CapacityExceeded { needed: error.bytes, capacity: 0 }
    }
}

/// `len` zeros, allocated fallibly.
///
/// # Errors
/// [`AllocError`] naming `what` when the memory cannot be had.
///
/// # Examples
/// ```
/// let row: Vec<f64> = kestrel_stream::limits::zeroed(3, "a row")?;
/// assert_eq!(row, [0.0; 3]);
/// let huge = kestrel_stream::limits::zeroed::<f64>(usize::MAX / 2, "a window");
/// assert_eq!(huge.unwrap_err().to_string(), format!("cannot allocate {} bytes for a window", usize::MAX));
/// # Ok::<(), kestrel_stream::limits::AllocError>(())
/// ```
pub fn zeroed<T: Copy + Default>(len: usize, what: &'static str) -> Result<Vec<T>, AllocError> {
    let mut buffer = Vec::new();
    reserve(&mut buffer, len, what)?;
    buffer.resize(len, T::default());
    Ok(buffer)
}

/// Reserves room for `additional` more elements in `buffer`, fallibly.
///
/// # Errors
/// [`AllocError`] naming `what` when the memory cannot be had.
pub fn reserve<T>(buffer: &mut Vec<T>, additional: usize, what: &'static str) -> Result<(), AllocError> {
    buffer
        .try_reserve_exact(additional)
        .map_err(|_| AllocError { what, bytes: additional.saturating_mul(size_of::<T>()) })
}
