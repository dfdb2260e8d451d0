//! The model file format: one self-describing envelope for every learner, a
//! [`frame`] with magic "KSTL" whose two tag bytes are the model kind and
//! the scalar type.
//!
//! ```text
//! offset  size  field
//! 0       4     magic "KSTL"
//! 4       2     format version (u16, little endian): 5 with class probabilities, else 4
//! 6       1     model kind (ModelKind)
//! 7       1     scalar type (ScalarKind)
//! 8       4     payload length P (u32, little endian)
//! 12      4     scaler section length S (u32, little endian), 0 for none
//! 16      S     scaler section: the input standardisation, postcard (ScalerSection)
//! 16+S    4     class names section length N (u32, little endian), 0 for none
//! 20+S    N     class names section: postcard sequence of UTF-8 strings
//! 20+S+N  4     feature names section length F (u32, little endian), 0 for none
//! 24+S+N  F     feature names section: postcard sequence of UTF-8 strings
//! 24+S+N+F 4    calibration section length C (u32, little endian); version 5 only
//! 28+S+N+F C    calibration section: postcard sequence of (a, b) f64 pairs (Sigmoid)
//! …        …    the learner's model, postcard-encoded (serde), to byte 12+P
//! 12+P    4     CRC-32 (ISO-HDLC, as zlib/PNG) of bytes 0 .. 12+P, little endian
//! ```
//!
//! A file is written in the oldest version that holds what it carries: version 4 without
//! class probabilities (so a device built before them reads every model without them),
//! version 5 with them. Version 3 files, written before the feature names section, are
//! read as they are: the same layout without it.
//!
//! A model whose learner standardised its inputs carries the scaler's statistics
//! ([`crate::scaler`]); whoever predicts decodes it with
//! [`Scaler::from_envelope_in`](crate::scaler::Scaler::from_envelope_in) and transforms
//! each input before the model sees it. A classifier trained on named classes carries
//! their names: name `k` is that of the class whose label is `k` (the labels of such a
//! model are `0, 1, …`), read with [`Envelope::class_name`]. A classifier calibrated to
//! give class probabilities carries a sigmoid per output ([`crate::calibration`]), read
//! with [`Envelope::calibration_iter`]. A learner's encoder writes the model without any
//! section; [`add_scaler`], [`add_class_names`], [`add_feature_names`] and
//! [`add_calibration`] insert them afterwards, in the same buffer.
//!
//! The same bytes decode on a host and on a device (`include_bytes!` a model the CLI
//! trained). Decoding checks, in order: length, magic, version, checksum, kind, scalar; a
//! truncated, corrupted or foreign file is an [`Error::Model`] naming which, never a panic.
//! Payloads with variable-length sequences decode into caller storage through
//! [`SliceSeed`], so nothing allocates.
//!
//! Memory: encoding writes into a caller buffer of at least `12 + P + 4` bytes; decoding
//! borrows the input.

use core::fmt;

use serde::de::{DeserializeSeed, SeqAccess, Visitor};
use serde::{Deserialize, Deserializer, Serialize};

use crate::Error;
use crate::calibration::Sigmoid;
use crate::dcd::LinearModel;
use crate::frame::{self, Format, FrameError};
pub use crate::frame::{HEADER_LEN, TRAILER_LEN};
use crate::novelty::NoveltyModel;
use crate::reduced_set::ReducedKernelModel;
use crate::scaler::ScalerSection;
use crate::slkl::Predictor;

/// The first four bytes of every model file.
pub const MAGIC: [u8; 4] = *b"KSTL";
/// The newest envelope version this build writes and reads (the one with class
/// probabilities; a model without them is written as version 4).
pub const FORMAT_VERSION: u16 = 5;
/// The oldest envelope version this build reads (the one without feature names).
pub const OLDEST_FORMAT_VERSION: u16 = 3;
/// Bytes of a section's length.
const SECTION_LEN_BYTES: usize = 4;

/// The optional sections before the learner's model, in their order in the payload.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Section {
    Scaler = 0,
    ClassNames = 1,
    FeatureNames = 2,
    Calibration = 3,
}

impl Section {
    /// The name an error gives the section.
    fn name(self) -> &'static str {
        match self {
            Section::Scaler => "scaler",
            Section::ClassNames => "class_names",
            Section::FeatureNames => "feature_names",
            Section::Calibration => "calibration",
        }
    }
}

/// Number of [`Section`]s.
const SECTIONS: usize = 4;
/// The sections [`encode`] writes (empty): all but the calibration, which only version 5
/// has.
const ENCODED_SECTIONS: usize = SECTIONS - 1;

/// The sections a file of `version` has, in their order: version 3 the first two, each
/// version since one more.
fn sections_of(version: u16) -> usize {
    usize::from(version.saturating_sub(1)).min(SECTIONS)
}
/// The model file's frame format.
pub const FORMAT: Format = Format::new(MAGIC, FORMAT_VERSION).reading_from(OLDEST_FORMAT_VERSION);

/// Which learner a model file holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ModelKind {
    /// A linear SVM (dual coordinate descent), binary or one-vs-rest.
    LinearSvm = 1,
    /// An SLKL kernel regressor.
    Slkl = 2,
    /// A reduced-kernel SVM.
    ReducedSvm = 3,
    /// A MapReduce RSVM: reduced-kernel SVMs of the data's parts and a linear SVM on
    /// their decision values.
    MapReduceRsvm = 4,
    /// A kernel novelty detector: weighted centres and a threshold.
    Novelty = 5,
    /// A kernel principal-component projection (exact or reduced kernel PCA).
    KernelPca = 6,
}

impl ModelKind {
    fn from_byte(b: u8) -> Option<Self> {
        match b {
            1 => Some(ModelKind::LinearSvm),
            2 => Some(ModelKind::Slkl),
            3 => Some(ModelKind::ReducedSvm),
            4 => Some(ModelKind::MapReduceRsvm),
            5 => Some(ModelKind::Novelty),
            6 => Some(ModelKind::KernelPca),
            _ => None,
        }
    }
}

/// The scalar type a model was trained in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ScalarKind {
    /// `f32`.
    F32 = 1,
    /// `f64`.
    F64 = 2,
}

impl ScalarKind {
    fn from_byte(b: u8) -> Option<Self> {
        match b {
            1 => Some(ScalarKind::F32),
            2 => Some(ScalarKind::F64),
            _ => None,
        }
    }

    /// The kind of scalar `T`.
    pub fn of<T: crate::Real>() -> Self {
        if T::BYTES == 4 { ScalarKind::F32 } else { ScalarKind::F64 }
    }
}

/// Why model bytes were rejected.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ModelError {
    /// Fewer bytes than the header announces.
    Truncated {
        /// Bytes the envelope needs.
        needed: usize,
        /// Bytes given.
        got: usize,
    },
    /// Not a Kestrel model file.
    BadMagic,
    /// Written by an incompatible format version.
    UnsupportedVersion {
        /// The version in the file.
        found: u16,
    },
    /// The checksum does not match: the bytes were altered.
    ChecksumMismatch {
        /// Checksum stored in the file.
        stored: u32,
        /// Checksum of the bytes read.
        computed: u32,
    },
    /// A model kind or scalar byte this build does not know.
    UnknownTag {
        /// The byte found.
        found: u8,
    },
    /// The file holds another kind of model than the caller asked for.
    WrongKind,
    /// The file holds another scalar type than the caller asked for.
    WrongScalar,
    /// The payload does not decode as the model it claims to be.
    Payload,
    /// Bytes follow the checksum.
    TrailingBytes,
}

impl fmt::Display for ModelError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            ModelError::Truncated { needed, got } => {
                write!(f, "truncated model: needs {needed} bytes, has {got}")
            }
            ModelError::BadMagic => f.write_str("not a Kestrel model (bad magic number)"),
            ModelError::UnsupportedVersion { found } => {
                write!(
                    f,
                    "model format version {found} is not supported (this build reads {OLDEST_FORMAT_VERSION} to \
                     {FORMAT_VERSION})"
                )
            }
            ModelError::ChecksumMismatch { stored, computed } => {
                write!(f, "corrupted model: checksum {computed:#010x} does not match stored {stored:#010x}")
            }
            ModelError::UnknownTag { found } => {
                write!(f, "unknown model kind or scalar tag {found}")
            }
            ModelError::WrongKind => f.write_str("the file holds another kind of model"),
            ModelError::WrongScalar => f.write_str("the file holds a model of another scalar type"),
            ModelError::Payload => f.write_str("corrupted model payload"),
            ModelError::TrailingBytes => f.write_str("unexpected bytes after the model's checksum"),
        }
    }
}

impl From<FrameError> for ModelError {
    fn from(e: FrameError) -> Self {
        match e {
            FrameError::Truncated { needed, got } => ModelError::Truncated { needed, got },
            FrameError::BadMagic => ModelError::BadMagic,
            FrameError::UnsupportedVersion { found } => ModelError::UnsupportedVersion { found },
            FrameError::ChecksumMismatch { stored, computed } => ModelError::ChecksumMismatch { stored, computed },
            FrameError::TrailingBytes => ModelError::TrailingBytes,
        }
    }
}

/// A checked envelope: its header fields and the payload bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Envelope<'a> {
    /// The learner.
    pub kind: ModelKind,
    /// The scalar type.
    pub scalar: ScalarKind,
    /// The scaler section (postcard), empty when the model takes its inputs as they come.
    pub scaler: &'a [u8],
    /// The class names section (postcard), empty when the classes are not named.
    pub class_names: &'a [u8],
    /// The feature names section (postcard), empty when the features are not named (rows
    /// without a header, or a version 3 file).
    pub feature_names: &'a [u8],
    /// The calibration section (postcard), empty when the model gives no class
    /// probabilities (and in files before version 5).
    pub calibration: &'a [u8],
    /// The learner's postcard-encoded model.
    pub payload: &'a [u8],
}

impl<'a> Envelope<'a> {
    /// Checks `bytes` (length, magic, version, checksum, tags) and splits off the payload.
    ///
    /// # Errors
    /// [`Error::Model`] with the first check that failed.
    pub fn parse(bytes: &'a [u8]) -> Result<Self, Error> {
        let frame = FORMAT.open(bytes).map_err(|e| Error::Model(e.into()))?;
        let [kind, scalar] = frame.tags;
        let kind = ModelKind::from_byte(kind).ok_or(Error::Model(ModelError::UnknownTag { found: kind }))?;
        let scalar = ScalarKind::from_byte(scalar).ok_or(Error::Model(ModelError::UnknownTag { found: scalar }))?;
        let mut sections = [&[][..]; SECTIONS];
        let mut rest = frame.payload;
        for section in sections.iter_mut().take(sections_of(frame.version)) {
            (*section, rest) = split_section(rest)?;
        }
        let [scaler, class_names, feature_names, calibration] = sections;
        check_names(class_names)?;
        check_names(feature_names)?;
        check_calibration(calibration)?;
        Ok(Envelope { kind, scalar, scaler, class_names, feature_names, calibration, payload: rest })
    }

    /// The number of sigmoids of the calibration section (0 for a model without class
    /// probabilities): one for a binary classifier, one per class beyond.
    pub fn calibration_count(&self) -> usize {
        postcard::take_from_bytes::<usize>(self.calibration).map_or(0, |(count, _)| count)
    }

    /// The sigmoids of the calibration section in the order of the model's outputs (none
    /// without class probabilities), for [`crate::calibration::probabilities`].
    ///
    /// ```
    /// use kestrel_core::calibration::Sigmoid;
    /// use kestrel_core::model::{add_calibration, encode, Envelope, ModelKind, ScalarKind};
    /// let mut buf = [0u8; 64];
    /// let n = encode(ModelKind::LinearSvm, ScalarKind::F32, &1u8, &mut buf)?;
    /// let n = add_calibration(&mut buf, n, &[Sigmoid { a: 1.5, b: -0.25 }])?;
    /// let env = Envelope::parse(&buf[..n])?;
    /// assert_eq!(env.calibration_iter().collect::<Vec<_>>(), [Sigmoid { a: 1.5, b: -0.25 }]);
    /// assert_eq!(&buf[4..6], &[5, 0], "a file with class probabilities is version 5");
    /// # Ok::<(), kestrel_core::Error>(())
    /// ```
    pub fn calibration_iter(&self) -> impl Iterator<Item = Sigmoid> + Clone + 'a {
        let (count, mut rest) = postcard::take_from_bytes::<usize>(self.calibration).unwrap_or((0, &[]));
        (0..count).map_while(move |_| {
            let (sigmoid, after) = postcard::take_from_bytes::<Sigmoid>(rest).ok()?;
            rest = after;
            Some(sigmoid)
        })
    }

    /// The number of class names (0 without names).
    pub fn class_count(&self) -> usize {
        names_of(self.class_names).map_or(0, |(count, _)| count)
    }

    /// The name of class `k` (the class whose label is `k`), `None` past the names or
    /// without names.
    ///
    /// ```
    /// use kestrel_core::model::{add_class_names, encode, Envelope, ModelKind, ScalarKind};
    /// let mut buf = [0u8; 64];
    /// let n = encode(ModelKind::LinearSvm, ScalarKind::F32, &1u8, &mut buf)?;
    /// let n = add_class_names(&mut buf, n, &["grass", "sky"])?;
    /// let env = Envelope::parse(&buf[..n])?;
    /// assert_eq!((env.class_count(), env.class_name(1), env.class_name(2)), (2, Some("sky"), None));
    /// # Ok::<(), kestrel_core::Error>(())
    /// ```
    pub fn class_name(&self, k: usize) -> Option<&'a str> {
        name_at(self.class_names, k)
    }

    /// The number of feature names (0 without names).
    pub fn feature_count(&self) -> usize {
        names_of(self.feature_names).map_or(0, |(count, _)| count)
    }

    /// The name of feature `j` (the model's `j`-th input, as the header of the rows it was
    /// trained on named it), `None` past the names or without names.
    ///
    /// ```
    /// use kestrel_core::model::{add_feature_names, encode, Envelope, ModelKind, ScalarKind};
    /// let mut buf = [0u8; 64];
    /// let n = encode(ModelKind::LinearSvm, ScalarKind::F32, &1u8, &mut buf)?;
    /// let n = add_feature_names(&mut buf, n, &["temp", "humidity"])?;
    /// let env = Envelope::parse(&buf[..n])?;
    /// assert_eq!((env.feature_count(), env.feature_name(0), env.class_count()), (2, Some("temp"), 0));
    /// # Ok::<(), kestrel_core::Error>(())
    /// ```
    pub fn feature_name(&self, j: usize) -> Option<&'a str> {
        name_at(self.feature_names, j)
    }

    /// The class names in label order, in one pass over the section (none without names).
    pub fn class_name_iter(&self) -> impl Iterator<Item = &'a str> + 'a {
        names_in(self.class_names)
    }

    /// The feature names in the model's order, in one pass over the section (none without
    /// names): [`feature_name`](Self::feature_name) for every `j` would read the section
    /// `d` times.
    pub fn feature_name_iter(&self) -> impl Iterator<Item = &'a str> + 'a {
        names_in(self.feature_names)
    }

    /// `Ok` when the envelope holds `kind` in scalar `scalar`.
    ///
    /// # Errors
    /// `Error::Model(WrongKind | WrongScalar)`.
    pub fn expect(&self, kind: ModelKind, scalar: ScalarKind) -> Result<(), Error> {
        if self.kind != kind {
            return Err(Error::Model(ModelError::WrongKind));
        }
        if self.scalar != scalar {
            return Err(Error::Model(ModelError::WrongScalar));
        }
        Ok(())
    }
}

/// A model that writes its model file bytes: every learner's model ([`LinearModel`],
/// [`Predictor`], [`ReducedKernelModel`], [`NoveltyModel`]), for code that saves
/// whichever it holds.
///
/// [`LinearModel`]: crate::dcd::LinearModel
/// [`Predictor`]: crate::slkl::Predictor
/// [`ReducedKernelModel`]: crate::reduced_set::ReducedKernelModel
pub trait Encode {
    /// The exact length of the model file bytes.
    fn encoded_len(&self) -> usize;
    /// Writes the model file bytes into `out`; returns their length.
    ///
    /// # Errors
    /// `CapacityExceeded` when `out` is too small.
    fn encode(&self, out: &mut [u8]) -> Result<usize, Error>;
}

macro_rules! encode_for {
    ($($model:ident),*) => {$(
        impl<T: crate::Real, S: crate::storage::Storage<T>> Encode for $model<T, S> {
            fn encoded_len(&self) -> usize {
                $model::encoded_len(self)
            }

            fn encode(&self, out: &mut [u8]) -> Result<usize, Error> {
                $model::encode(self, out)
            }
        }
    )*};
}

encode_for!(LinearModel, Predictor, ReducedKernelModel, NoveltyModel);

/// Writes the envelope of `payload` into `out` and returns the bytes used.
///
/// # Errors
/// `CapacityExceeded` when `out` is too small (`needed` is a lower bound then: the header,
/// the trailer and the bytes the payload had used when it ran out of room).
///
/// # Examples
/// ```
/// use kestrel_core::model::{encode, Envelope, ModelKind, ScalarKind};
/// let mut buf = [0u8; 64];
/// let n = encode(ModelKind::Slkl, ScalarKind::F32, &(3u32, [1.5f32, -2.0]), &mut buf)?;
/// let env = Envelope::parse(&buf[..n])?;
/// assert_eq!((env.kind, env.scalar, env.scaler), (ModelKind::Slkl, ScalarKind::F32, &[][..]));
/// let (dim, w): (u32, [f32; 2]) = postcard::from_bytes(env.payload).unwrap();
/// assert_eq!((dim, w), (3, [1.5, -2.0]));
/// # Ok::<(), kestrel_core::Error>(())
/// ```
pub fn encode<P: Serialize>(kind: ModelKind, scalar: ScalarKind, payload: &P, out: &mut [u8]) -> Result<usize, Error> {
    const EMPTY: usize = ENCODED_SECTIONS * SECTION_LEN_BYTES;
    let too_small = Error::CapacityExceeded { needed: frame::framed_len(EMPTY + 1), capacity: out.len() };
    let (lengths, model) = frame::payload_mut(out).split_first_chunk_mut::<EMPTY>().ok_or(too_small)?;
    *lengths = [0; EMPTY];
    let model_len = postcard::to_slice(payload, model).map_err(|_| too_small)?.len();
    format_of(ENCODED_SECTIONS).seal([kind as u8, scalar as u8], EMPTY + model_len, out)
}

/// The frame format of a file with `sections` sections (the oldest version that has them,
/// version 4 at least: version 3 is only read).
fn format_of(sections: usize) -> Format {
    let version = u16::try_from(sections + 1).unwrap_or(FORMAT_VERSION).clamp(FORMAT_VERSION - 1, FORMAT_VERSION);
    Format::new(MAGIC, version)
}

/// `(count, the names' bytes)` of a names section, `None` for an empty one.
fn names_of(section: &[u8]) -> Option<(usize, &[u8])> {
    if section.is_empty() {
        return None;
    }
    postcard::take_from_bytes::<usize>(section).ok()
}

/// The names of a names section in order (none for an empty one; the envelope checked a
/// section is exactly a sequence of strings when it parsed it).
fn names_in(section: &[u8]) -> impl Iterator<Item = &str> {
    let (count, mut rest) = names_of(section).unwrap_or((0, &[]));
    (0..count).map_while(move |_| {
        let (name, after) = postcard::take_from_bytes::<&str>(rest).ok()?;
        rest = after;
        Some(name)
    })
}

/// Name `k` of a names section, `None` past its names or for an empty one.
fn name_at(section: &[u8], k: usize) -> Option<&str> {
    let (count, mut rest) = names_of(section)?;
    if k >= count {
        return None;
    }
    for _ in 0..k {
        rest = postcard::take_from_bytes::<&str>(rest).ok()?.1;
    }
    postcard::take_from_bytes::<&str>(rest).ok().map(|(name, _)| name)
}

/// `Ok` when a names section is empty or exactly a sequence of strings.
fn check_names(section: &[u8]) -> Result<(), Error> {
    let corrupt = Error::Model(ModelError::Payload);
    if section.is_empty() {
        return Ok(());
    }
    let (count, mut rest) = names_of(section).ok_or(corrupt)?;
    for _ in 0..count {
        rest = postcard::take_from_bytes::<&str>(rest).map_err(|_| corrupt)?.1;
    }
    if rest.is_empty() { Ok(()) } else { Err(corrupt) }
}

/// `Ok` when a calibration section is empty or exactly a sequence of finite sigmoids.
fn check_calibration(section: &[u8]) -> Result<(), Error> {
    let corrupt = Error::Model(ModelError::Payload);
    if section.is_empty() {
        return Ok(());
    }
    let (count, mut rest) = postcard::take_from_bytes::<usize>(section).map_err(|_| corrupt)?;
    for _ in 0..count {
        let (sigmoid, after) = postcard::take_from_bytes::<Sigmoid>(rest).map_err(|_| corrupt)?;
        if !sigmoid.is_finite() {
            return Err(corrupt);
        }
        rest = after;
    }
    if rest.is_empty() && count > 0 { Ok(()) } else { Err(corrupt) }
}

/// `(section, rest)` of bytes that start with a section's length.
fn split_section(bytes: &[u8]) -> Result<(&[u8], &[u8]), Error> {
    let corrupt = Error::Model(ModelError::Payload);
    let (len, rest) = bytes.split_first_chunk::<SECTION_LEN_BYTES>().ok_or(corrupt)?;
    let len = usize::try_from(u32::from_le_bytes(*len)).unwrap_or(usize::MAX);
    rest.split_at_checked(len).ok_or(corrupt)
}

/// Inserts `scaler` into the model of `len` bytes at the start of `out` (written without
/// one, by its learner's encoder); returns the new length,
/// `len + `[`scaler_len`]`(scaler)`. The model's bytes move within `out`; nothing
/// allocates.
///
/// # Errors
/// `Error::Model` when `out[..len]` is not a model of scalar `T`; `InvalidParam { name:
/// "scaler" }` when it has a scaler already; `CapacityExceeded` when `out` is too short
/// (then `out` is unchanged).
pub fn add_scaler<T: crate::Real>(out: &mut [u8], len: usize, scaler: ScalerSection<'_, T>) -> Result<usize, Error> {
    let envelope = parse_prefix(out, len)?;
    if envelope.scalar != ScalarKind::of::<T>() {
        return Err(Error::Model(ModelError::WrongScalar));
    }
    insert_section(out, len, Section::Scaler, &scaler)
}

/// Inserts the names of the classes, `names[k]` that of label `k`, into the model of `len`
/// bytes at the start of `out`; returns the new length, `len + `[`names_len`]`(names)`.
///
/// # Errors
/// `Error::Model` when `out[..len]` is not a model; `InvalidParam { name: "class_names" }`
/// when it has names already; `CapacityExceeded` when `out` is too short (then `out` is
/// unchanged).
pub fn add_class_names(out: &mut [u8], len: usize, names: &[&str]) -> Result<usize, Error> {
    insert_section(out, len, Section::ClassNames, &names)
}

/// Bytes [`add_class_names`] or [`add_feature_names`] adds to a model for `names`: a
/// names section is the same sequence of strings whichever names it holds.
pub fn names_len(names: &[&str]) -> usize {
    serialized_len(&names)
}

/// Inserts the names of the features, `names[j]` that of the model's `j`-th input (the
/// header of the rows it was trained on), into the model of `len` bytes at the start of
/// `out`; returns the new length, `len + `[`names_len`]`(names)`. Whoever predicts
/// can then check that rows come with the same columns in the same order.
///
/// # Errors
/// As [`add_class_names`]; `InvalidParam { name: "feature_names" }` when it has feature
/// names already.
pub fn add_feature_names(out: &mut [u8], len: usize, names: &[&str]) -> Result<usize, Error> {
    insert_section(out, len, Section::FeatureNames, &names)
}

/// Inserts the sigmoids that turn a classifier's decision values into class probabilities
/// ([`crate::calibration`]; one for a binary classifier, one per output beyond) into the
/// model of `len` bytes at the start of `out`; returns the new length, `len +
/// `[`calibration_len`]`(sigmoids)`. The file becomes version 5.
///
/// # Errors
/// As [`add_class_names`]; `InvalidParam { name: "calibration" }` when it has a calibration
/// already, or `sigmoids` is empty or holds a coefficient that is not finite.
pub fn add_calibration(out: &mut [u8], len: usize, sigmoids: &[Sigmoid]) -> Result<usize, Error> {
    if sigmoids.is_empty() || !sigmoids.iter().all(|s| s.is_finite()) {
        return Err(Error::InvalidParam { name: "calibration" });
    }
    insert_section(out, len, Section::Calibration, &sigmoids)
}

/// Bytes [`add_calibration`] adds to a model for `sigmoids`: the section and, in a
/// version 4 file, its length field.
pub fn calibration_len(sigmoids: &[Sigmoid]) -> usize {
    serialized_len(&sigmoids).saturating_add(SECTION_LEN_BYTES)
}

/// The envelope of the model of `len` bytes at the start of `out`.
fn parse_prefix(out: &[u8], len: usize) -> Result<Envelope<'_>, Error> {
    Envelope::parse(out.get(..len).ok_or(Error::CapacityExceeded { needed: len, capacity: out.len() })?)
}

/// Writes `value` as `section` (empty until now) of the model of `len` bytes in `out`,
/// moving the bytes after it; returns the new length. A file whose version has no length
/// field for the section (a version 4 file given a calibration) gains the fields up to
/// it, and the version that has them.
fn insert_section<V: Serialize>(out: &mut [u8], len: usize, section: Section, value: &V) -> Result<usize, Error> {
    let envelope = parse_prefix(out, len)?;
    let name = section.name();
    let sections = [envelope.scaler, envelope.class_names, envelope.feature_names, envelope.calibration];
    let index = section as usize;
    if sections.get(index).is_none_or(|present| !present.is_empty()) {
        return Err(Error::InvalidParam { name });
    }
    let tags = [envelope.kind as u8, envelope.scalar as u8];
    let version = out.get(4..6).and_then(|v| <[u8; 2]>::try_from(v).ok()).map_or(FORMAT_VERSION, u16::from_le_bytes);
    let present = sections_of(version);
    // Length fields the file lacks up to this section's own, all written 0 but its own.
    let missing = (index + 1).saturating_sub(present);
    // The sections before this one, each with its length (those the file lacks, 0).
    let before: usize = sections.iter().take(index).map(|s| SECTION_LEN_BYTES + s.len()).sum();
    // Where the new bytes go within the payload: after the section's length field when the
    // file has it, else after the last section it has.
    let insert_at = (before + SECTION_LEN_BYTES).saturating_sub(missing * SECTION_LEN_BYTES);
    let old_payload = len.saturating_sub(HEADER_LEN + TRAILER_LEN);
    let moved = old_payload.saturating_sub(insert_at);
    let section_len = serialized_len(value);
    let shift = section_len.saturating_add(missing * SECTION_LEN_BYTES);
    let payload_len = old_payload.saturating_add(shift);
    let needed = frame::framed_len(payload_len);
    if needed > out.len() {
        return Err(Error::CapacityExceeded { needed, capacity: out.len() });
    }
    let field = u32_field(section_len, name)?;
    let (insert_at, length_at) = (HEADER_LEN + insert_at, HEADER_LEN + before);
    let section_start = length_at + SECTION_LEN_BYTES;
    out.copy_within(insert_at..insert_at + moved, insert_at + shift);
    let too_small = Error::CapacityExceeded { needed, capacity: out.len() };
    // The length fields the file lacked before this section's: empty sections.
    out.get_mut(insert_at..length_at.max(insert_at)).ok_or(too_small)?.fill(0);
    let bytes = out.get_mut(section_start..section_start + section_len).ok_or(too_small)?;
    postcard::to_slice(value, bytes).map_err(|_| too_small)?;
    let length = out.get_mut(length_at..section_start).ok_or(too_small)?;
    length.copy_from_slice(&field.to_le_bytes());
    format_of(present.max(index + 1)).seal(tags, payload_len, out)
}

/// Bytes postcard writes for `value` (`usize::MAX` if it cannot).
fn serialized_len<V: Serialize>(value: &V) -> usize {
    postcard::serialize_with_flavor(value, postcard::ser_flavors::Size::default()).unwrap_or(usize::MAX)
}

/// Bytes [`add_scaler`] adds to a model for `scaler`.
pub fn scaler_len<T: crate::Real>(scaler: &ScalerSection<'_, T>) -> usize {
    serialized_len(scaler)
}

/// Bytes [`encode`] writes for `payload`: header, payload and trailer, the payload's size
/// counted by postcard without writing it.
///
/// # Errors
/// As postcard's serializer (never, for the models of this crate).
pub fn encoded_len<P: Serialize>(payload: &P) -> Result<usize, Error> {
    let size = postcard::serialize_with_flavor(payload, postcard::ser_flavors::Size::default());
    size.map(|len| frame::framed_len(len.saturating_add(ENCODED_SECTIONS * SECTION_LEN_BYTES)))
        .map_err(|_| Error::InvalidParam { name: "payload" })
}

/// A size as the `u32` a payload stores it in.
///
/// # Errors
/// `InvalidParam { name }` when `value` does not fit.
pub(crate) fn u32_field(value: usize, name: &'static str) -> Result<u32, Error> {
    u32::try_from(value).map_err(|_| Error::InvalidParam { name })
}

/// Decodes a whole payload into `P` (a type with no borrowed or variable-length storage).
///
/// # Errors
/// `Error::Model(ModelError::Payload)` when the bytes do not decode as `P`.
pub fn decode_payload<'de, P: Deserialize<'de>>(payload: &'de [u8]) -> Result<P, Error> {
    postcard::from_bytes(payload).map_err(|_| Error::Model(ModelError::Payload))
}

/// Deserializes a sequence of `T` into a caller slice; the value is the count written.
/// Fails (never panics) when the sequence is longer than the slice.
pub struct SliceSeed<'a, T>(pub &'a mut [T]);

impl<'de, T: Deserialize<'de>> DeserializeSeed<'de> for SliceSeed<'_, T> {
    type Value = usize;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<usize, D::Error> {
        deserializer.deserialize_seq(self)
    }
}

impl<'de, T: Deserialize<'de>> Visitor<'de> for SliceSeed<'_, T> {
    type Value = usize;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "a sequence of at most {} values", self.0.len())
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<usize, A::Error> {
        let capacity = self.0.len();
        let mut count = 0;
        while let Some(value) = seq.next_element::<T>()? {
            let Some(slot) = self.0.get_mut(count) else {
                return Err(serde::de::Error::invalid_length(count + 1, &TooLong(capacity)));
            };
            *slot = value;
            count += 1;
        }
        Ok(count)
    }
}

/// Counts the values of a sequence of `T`, checking each decodes, without storing them:
/// how a decoder steps over a section it does not keep.
pub struct SkipSeed<T>(pub core::marker::PhantomData<T>);

impl<'de, T: Deserialize<'de>> DeserializeSeed<'de> for SkipSeed<T> {
    type Value = usize;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<usize, D::Error> {
        deserializer.deserialize_seq(self)
    }
}

impl<'de, T: Deserialize<'de>> Visitor<'de> for SkipSeed<T> {
    type Value = usize;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "a sequence of values")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<usize, A::Error> {
        let mut count = 0usize;
        while seq.next_element::<T>()?.is_some() {
            count = count.saturating_add(1);
        }
        Ok(count)
    }
}

/// What a too-long sequence was expected to be, for serde's error message.
struct TooLong(usize);

impl serde::de::Expected for TooLong {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "a sequence of at most {} values", self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> ([u8; 64], usize) {
        let mut buf = [0u8; 64];
        let n = encode(ModelKind::LinearSvm, ScalarKind::F64, &(7u32, [0.25f64, -1.0]), &mut buf).unwrap();
        (buf, n)
    }

    #[test]
    fn round_trip_and_checksum_of_known_bytes() {
        let (buf, n) = sample();
        assert_eq!(&buf[..8], b"KSTL\x04\x00\x01\x02");
        let env = Envelope::parse(&buf[..n]).unwrap();
        assert_eq!(env.expect(ModelKind::LinearSvm, ScalarKind::F64), Ok(()));
        assert_eq!(decode_payload::<(u32, [f64; 2])>(env.payload), Ok((7, [0.25, -1.0])));
        assert_eq!(encoded_len(&(7u32, [0.25f64, -1.0])), Ok(n));
    }

    #[test]
    fn every_corruption_is_named() {
        let (buf, n) = sample();
        let model = |e| Err(Error::Model(e));
        assert_eq!(Envelope::parse(&buf[..5]), model(ModelError::Truncated { needed: 16, got: 5 }));
        assert_eq!(Envelope::parse(&buf[..n - 1]), model(ModelError::Truncated { needed: n, got: n - 1 }));
        let mut bad = buf;
        bad[0] = b'X';
        assert_eq!(Envelope::parse(&bad[..n]), model(ModelError::BadMagic));
        let mut bad = buf;
        bad[4] = 9;
        assert_eq!(Envelope::parse(&bad[..n]), model(ModelError::UnsupportedVersion { found: 9 }));
        for i in 6..n {
            let mut bad = buf;
            bad[i] ^= 0x10;
            assert!(matches!(Envelope::parse(&bad[..n]), Err(Error::Model(_))), "byte {i}");
        }
        assert_eq!(Envelope::parse(&buf[..n + 1]), model(ModelError::TrailingBytes));
        let env = Envelope::parse(&buf[..n]).unwrap();
        assert_eq!(env.expect(ModelKind::Slkl, ScalarKind::F64), Err(Error::Model(ModelError::WrongKind)));
        assert_eq!(env.expect(ModelKind::LinearSvm, ScalarKind::F32), Err(Error::Model(ModelError::WrongScalar)));
        assert_eq!(decode_payload::<(u32, [f64; 3])>(env.payload), Err(Error::Model(ModelError::Payload)));
        let mut small = [0u8; 20];
        assert!(matches!(
            encode(ModelKind::Slkl, ScalarKind::F32, &[1.0f64; 4], &mut small),
            Err(Error::CapacityExceeded { .. })
        ));
    }

    #[test]
    fn a_scaler_is_inserted_before_the_model() {
        let (mut buf, n) = sample();
        let scaler = ScalerSection { count: 3, mean: &[1.0f64], m2: &[2.0], weights: &[] };
        let added = scaler_len(&scaler);
        assert_eq!(added, 1 + 1 + 8 + 1 + 8, "varint count, then two sequences of one f64");
        // Too short: refused, and the buffer is as it was.
        let before = buf;
        let e = add_scaler(&mut buf[..n + added - 1], n, scaler);
        assert_eq!(e, Err(Error::CapacityExceeded { needed: n + added, capacity: n + added - 1 }));
        assert_eq!(buf, before);
        assert_eq!(
            add_scaler::<f32>(&mut buf, n, ScalerSection { count: 0, mean: &[], m2: &[], weights: &[] }),
            Err(Error::Model(ModelError::WrongScalar))
        );
        assert_eq!(add_scaler(&mut buf, n, scaler), Ok(n + added));
        let env = Envelope::parse(&buf[..n + added]).unwrap();
        assert_eq!(decode_payload::<(u32, [f64; 2])>(env.payload), Ok((7, [0.25, -1.0])), "the model is intact");
        // The count, then each sequence as its length (one byte) and its values.
        assert_eq!(decode_payload::<(u64, u8, f64, u8, f64)>(env.scaler), Ok((3, 1, 1.0, 1, 2.0)));
        assert_eq!(add_scaler(&mut buf, n + added, scaler), Err(Error::InvalidParam { name: "scaler" }));
        // A section length past the payload is a corrupt payload, not a panic.
        let (mut bad, n) = sample();
        bad[HEADER_LEN] = 200;
        let crc = crc::Crc::<u32>::new(&crc::CRC_32_ISO_HDLC).checksum(&bad[..n - TRAILER_LEN]);
        bad[n - TRAILER_LEN..n].copy_from_slice(&crc.to_le_bytes());
        assert_eq!(Envelope::parse(&bad[..n]), Err(Error::Model(ModelError::Payload)));
    }

    /// Names go after the scaler, whichever is inserted first; each section once.
    #[test]
    fn class_names_are_inserted_after_the_scaler() {
        let names = ["grass", "sky", "path"];
        let scaler = ScalerSection { count: 3, mean: &[1.0f64], m2: &[2.0], weights: &[] };
        let (with_names, scaled) = (names_len(&names), scaler_len(&scaler));
        assert_eq!(with_names, 1 + (1 + 5) + (1 + 3) + (1 + 4), "varint count, then each length and its bytes");
        for names_first in [true, false] {
            let (small, n) = sample();
            let mut buf = [0u8; 128];
            buf[..64].copy_from_slice(&small);
            let before = buf;
            let e = add_class_names(&mut buf[..n + with_names - 1], n, &names);
            assert_eq!(e, Err(Error::CapacityExceeded { needed: n + with_names, capacity: n + with_names - 1 }));
            assert_eq!(buf, before);
            let len = if names_first {
                let len = add_class_names(&mut buf, n, &names).unwrap();
                add_scaler(&mut buf, len, scaler).unwrap()
            } else {
                let len = add_scaler(&mut buf, n, scaler).unwrap();
                add_class_names(&mut buf, len, &names).unwrap()
            };
            assert_eq!(len, n + with_names + scaled);
            let env = Envelope::parse(&buf[..len]).unwrap();
            assert_eq!(decode_payload::<(u32, [f64; 2])>(env.payload), Ok((7, [0.25, -1.0])), "the model is intact");
            assert_eq!(decode_payload::<(u64, u8, f64, u8, f64)>(env.scaler), Ok((3, 1, 1.0, 1, 2.0)));
            let read: std::vec::Vec<_> = (0..4).map(|k| env.class_name(k)).collect();
            assert_eq!((env.class_count(), read), (3, std::vec![Some("grass"), Some("sky"), Some("path"), None]));
            assert_eq!(add_class_names(&mut buf, len, &names), Err(Error::InvalidParam { name: "class_names" }));
        }
        let (buf, n) = sample();
        assert_eq!(
            (Envelope::parse(&buf[..n]).unwrap().class_count(), Envelope::parse(&buf[..n]).unwrap().class_name(0)),
            (0, None)
        );
    }

    /// The four sections land in their order (scaler, class names, feature names,
    /// calibration) whichever is inserted first, and the model after them is intact; the
    /// file is version 5 once it has a calibration, and 4 until then.
    #[test]
    fn sections_are_inserted_in_their_order_in_any_order() {
        let classes = ["grass", "sky"];
        let features = ["temp", "humidity", "wind"];
        let sigmoids = [Sigmoid { a: 1.5, b: -0.25 }];
        let scaler = ScalerSection { count: 3, mean: &[1.0f64], m2: &[2.0], weights: &[] };
        let added = scaler_len(&scaler) + names_len(&classes) + names_len(&features) + calibration_len(&sigmoids);
        let mut orders = std::vec::Vec::new();
        for (a, b, c, d) in
            (0..4).flat_map(|a| (0..4).flat_map(move |b| (0..4).flat_map(move |c| (0..4).map(move |d| (a, b, c, d)))))
        {
            if [a, b, c, d].iter().enumerate().all(|(i, x)| ![a, b, c, d][..i].contains(x)) {
                orders.push([a, b, c, d]);
            }
        }
        assert_eq!(orders.len(), 24);
        for order in orders {
            let (small, n) = sample();
            let mut buf = [0u8; 160];
            buf[..64].copy_from_slice(&small);
            let mut len = n;
            for section in order {
                len = match section {
                    0 => add_scaler(&mut buf, len, scaler),
                    1 => add_class_names(&mut buf, len, &classes),
                    2 => add_feature_names(&mut buf, len, &features),
                    _ => add_calibration(&mut buf, len, &sigmoids),
                }
                .unwrap();
                let calibrated = Envelope::parse(&buf[..len]).unwrap().calibration_count() == 1;
                assert_eq!(buf[4], if calibrated { 5 } else { 4 }, "{order:?}");
            }
            assert_eq!(len, n + added, "{order:?}");
            let env = Envelope::parse(&buf[..len]).unwrap();
            assert!(env.calibration_iter().eq(sigmoids), "{order:?}");
            assert_eq!(decode_payload::<(u32, [f64; 2])>(env.payload), Ok((7, [0.25, -1.0])), "{order:?}");
            assert_eq!(decode_payload::<(u64, u8, f64, u8, f64)>(env.scaler), Ok((3, 1, 1.0, 1, 2.0)));
            let read: std::vec::Vec<_> = (0..4).map(|j| env.feature_name(j)).collect();
            assert_eq!(read, std::vec![Some("temp"), Some("humidity"), Some("wind"), None], "{order:?}");
            assert!(env.feature_name_iter().eq(features), "{order:?}");
            assert!(env.class_name_iter().eq(classes), "{order:?}");
            assert_eq!((env.class_count(), env.class_name(1)), (2, Some("sky")), "{order:?}");
            let again = add_feature_names(&mut buf, len, &features);
            assert_eq!(again, Err(Error::InvalidParam { name: "feature_names" }));
        }
    }

    /// A version 3 file (before the feature names section) reads as it was written, its
    /// sections and model where they were, without feature names.
    #[test]
    fn a_version_3_file_reads_without_feature_names() {
        let mut buf = [0u8; 64];
        let lengths = [0u8; 2 * SECTION_LEN_BYTES];
        let model = postcard::to_slice(&(7u32, [0.25f64, -1.0]), &mut buf[HEADER_LEN + lengths.len()..]).unwrap().len();
        let version_3 = Format::new(MAGIC, OLDEST_FORMAT_VERSION);
        let n = version_3.seal([1, 2], lengths.len() + model, &mut buf).unwrap();
        let env = Envelope::parse(&buf[..n]).unwrap();
        assert_eq!(decode_payload::<(u32, [f64; 2])>(env.payload), Ok((7, [0.25, -1.0])));
        assert_eq!((env.feature_count(), env.feature_name(0), env.class_count()), (0, None, 0));
        let older = Format::new(MAGIC, OLDEST_FORMAT_VERSION - 1);
        let n = older.seal([1, 2], lengths.len() + model, &mut buf).unwrap();
        let found = OLDEST_FORMAT_VERSION - 1;
        assert_eq!(Envelope::parse(&buf[..n]), Err(Error::Model(ModelError::UnsupportedVersion { found })));
    }

    /// A version 3 file given a calibration gains an empty feature names section with it,
    /// and reads as version 5.
    #[test]
    fn a_version_3_file_takes_a_calibration() {
        let mut buf = [0u8; 128];
        let lengths = [0u8; 2 * SECTION_LEN_BYTES];
        let model = postcard::to_slice(&(7u32, [0.25f64, -1.0]), &mut buf[HEADER_LEN + lengths.len()..]).unwrap().len();
        let n = Format::new(MAGIC, OLDEST_FORMAT_VERSION).seal([1, 2], lengths.len() + model, &mut buf).unwrap();
        let sigmoids = [Sigmoid { a: 0.5, b: 2.0 }, Sigmoid::default(), Sigmoid { a: -1.0, b: 0.0 }];
        let len = add_calibration(&mut buf, n, &sigmoids).unwrap();
        assert_eq!(len, n + calibration_len(&sigmoids) + SECTION_LEN_BYTES, "and the feature names' length");
        let env = Envelope::parse(&buf[..len]).unwrap();
        assert_eq!((buf[4], env.feature_count(), env.calibration_count()), (5, 0, 3));
        assert!(env.calibration_iter().eq(sigmoids));
        assert_eq!(decode_payload::<(u32, [f64; 2])>(env.payload), Ok((7, [0.25, -1.0])));
    }

    /// A calibration of no sigmoid, or of one not finite, is refused when added and when
    /// parsed; so is a second one.
    #[test]
    fn bad_calibrations_are_refused() {
        let (mut buf, n) = sample();
        let refused = Err(Error::InvalidParam { name: "calibration" });
        assert_eq!(add_calibration(&mut buf, n, &[]), refused);
        assert_eq!(add_calibration(&mut buf, n, &[Sigmoid { a: f64::NAN, b: 0.0 }]), refused);
        let mut big = [0u8; 96];
        big[..64].copy_from_slice(&buf);
        let len = add_calibration(&mut big, n, &[Sigmoid::default()]).unwrap();
        assert_eq!(add_calibration(&mut big, len, &[Sigmoid::default()]), refused);
        // The section's first sigmoid's slope (after the length field and the count) made
        // infinite, the checksum sealed again: a corrupt payload.
        let at = HEADER_LEN + 3 * SECTION_LEN_BYTES + SECTION_LEN_BYTES + 1;
        big[at..at + 8].copy_from_slice(&f64::INFINITY.to_le_bytes());
        let n = format_of(SECTIONS).seal([1, 2], len - HEADER_LEN - TRAILER_LEN, &mut big).unwrap();
        assert_eq!(Envelope::parse(&big[..n]), Err(Error::Model(ModelError::Payload)));
    }

    /// A names section that is not exactly a sequence of strings is a corrupt payload.
    #[test]
    fn corrupt_names_are_refused_when_parsed() {
        let sections = [&[2u8, 1, b'a'][..], &[1, 2, 0xff, 0xfe], &[1, 1, b'a', 0]];
        // The class names' length, then the feature names' (each after empty sections).
        for (section, at) in sections.into_iter().flat_map(|s| [(s, 1), (s, 2)]) {
            let (mut buf, n) = sample();
            let at = HEADER_LEN + at * SECTION_LEN_BYTES;
            let len = u32::try_from(section.len()).unwrap().to_le_bytes();
            buf.copy_within(at + SECTION_LEN_BYTES..n - TRAILER_LEN, at + SECTION_LEN_BYTES + section.len());
            buf[at..at + SECTION_LEN_BYTES].copy_from_slice(&len);
            buf[at + SECTION_LEN_BYTES..][..section.len()].copy_from_slice(section);
            let payload = n - HEADER_LEN - TRAILER_LEN + section.len();
            let n = format_of(ENCODED_SECTIONS).seal([1, 2], payload, &mut buf).unwrap();
            assert_eq!(Envelope::parse(&buf[..n]), Err(Error::Model(ModelError::Payload)), "{section:?}");
        }
    }

    #[test]
    fn slice_seed_fills_and_refuses_overflow() {
        let mut buf = [0u8; 64];
        let bytes = postcard::to_slice(&[1.0f32, 2.0, 3.0][..], &mut buf).unwrap();
        let mut out = [0.0f32; 4];
        let mut de = postcard::Deserializer::from_bytes(bytes);
        assert_eq!(SliceSeed(&mut out[..]).deserialize(&mut de), Ok(3));
        assert_eq!(out, [1.0, 2.0, 3.0, 0.0]);
        let mut short = [0.0f32; 2];
        let mut de = postcard::Deserializer::from_bytes(bytes);
        assert!(SliceSeed(&mut short[..]).deserialize(&mut de).is_err());
    }
}
