//! The model file format: one self-describing envelope for every learner, a
//! [`frame`] with magic "KSTL" whose two tag bytes are the model kind and
//! the scalar type.
//!
//! ```text
//! offset  size  field
//! 0       4     magic "KSTL"
//! 4       2     format version (u16, little endian), currently 2
//! 6       1     model kind (ModelKind)
//! 7       1     scalar type (ScalarKind)
//! 8       4     payload length P (u32, little endian)
//! 12      4     scaler section length S (u32, little endian), 0 for none
//! 16      S     scaler section: the input standardisation, postcard (ScalerSection)
//! 16+S    P−4−S the learner's model, postcard-encoded (serde)
//! 12+P    4     CRC-32 (ISO-HDLC, as zlib/PNG) of bytes 0 .. 12+P, little endian
//! ```
//!
//! A model whose learner standardised its inputs carries the scaler's statistics
//! ([`crate::scaler`]); whoever predicts decodes it with
//! [`Scaler::from_envelope_in`](crate::scaler::Scaler::from_envelope_in) and transforms
//! each input before the model sees it. A learner's encoder writes the model without one
//! (`S = 0`); [`add_scaler`] inserts it afterwards, in the same buffer.
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
use crate::frame::{self, Format, FrameError};
pub use crate::frame::{HEADER_LEN, TRAILER_LEN};
use crate::scaler::ScalerSection;

/// The first four bytes of every model file.
pub const MAGIC: [u8; 4] = *b"KSTL";
/// The envelope version this build writes and reads.
pub const FORMAT_VERSION: u16 = 2;
/// Bytes of the scaler section's length, at the start of the payload.
const SCALER_LEN_BYTES: usize = 4;
/// The model file's frame format.
pub const FORMAT: Format = Format::new(MAGIC, FORMAT_VERSION);

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
}

impl ModelKind {
    fn from_byte(b: u8) -> Option<Self> {
        match b {
            1 => Some(ModelKind::LinearSvm),
            2 => Some(ModelKind::Slkl),
            3 => Some(ModelKind::ReducedSvm),
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
                write!(f, "model format version {found} is not supported (this build reads {FORMAT_VERSION})")
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
        let corrupt = Error::Model(ModelError::Payload);
        let (scaler_len, rest) = frame.payload.split_first_chunk::<SCALER_LEN_BYTES>().ok_or(corrupt)?;
        let scaler_len = usize::try_from(u32::from_le_bytes(*scaler_len)).unwrap_or(usize::MAX);
        let (scaler, payload) = rest.split_at_checked(scaler_len).ok_or(corrupt)?;
        Ok(Envelope { kind, scalar, scaler, payload })
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
    let too_small = Error::CapacityExceeded { needed: frame::framed_len(SCALER_LEN_BYTES + 1), capacity: out.len() };
    let (scaler_len, model) = frame::payload_mut(out).split_first_chunk_mut::<SCALER_LEN_BYTES>().ok_or(too_small)?;
    *scaler_len = [0; SCALER_LEN_BYTES];
    let model_len = postcard::to_slice(payload, model).map_err(|_| too_small)?.len();
    FORMAT.seal([kind as u8, scalar as u8], SCALER_LEN_BYTES + model_len, out)
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
    let envelope =
        Envelope::parse(out.get(..len).ok_or(Error::CapacityExceeded { needed: len, capacity: out.len() })?)?;
    if envelope.scalar != ScalarKind::of::<T>() {
        return Err(Error::Model(ModelError::WrongScalar));
    }
    if !envelope.scaler.is_empty() {
        return Err(Error::InvalidParam { name: "scaler" });
    }
    let (tags, model_len) = ([envelope.kind as u8, envelope.scalar as u8], envelope.payload.len());
    let section_len = scaler_len(&scaler);
    let payload_len = SCALER_LEN_BYTES.saturating_add(section_len).saturating_add(model_len);
    let needed = frame::framed_len(payload_len);
    if needed > out.len() {
        return Err(Error::CapacityExceeded { needed, capacity: out.len() });
    }
    let section_start = HEADER_LEN + SCALER_LEN_BYTES;
    out.copy_within(section_start..section_start + model_len, section_start + section_len);
    let too_small = Error::CapacityExceeded { needed, capacity: out.len() };
    let section = out.get_mut(section_start..section_start + section_len).ok_or(too_small)?;
    postcard::to_slice(&scaler, section).map_err(|_| too_small)?;
    let length = out.get_mut(HEADER_LEN..section_start).ok_or(too_small)?;
    length.copy_from_slice(&u32_field(section_len, "scaler")?.to_le_bytes());
    FORMAT.seal(tags, payload_len, out)
}

/// Bytes [`add_scaler`] adds to a model for `scaler`.
pub fn scaler_len<T: crate::Real>(scaler: &ScalerSection<'_, T>) -> usize {
    postcard::serialize_with_flavor(scaler, postcard::ser_flavors::Size::default()).unwrap_or(usize::MAX)
}

/// Bytes [`encode`] writes for `payload`: header, payload and trailer, the payload's size
/// counted by postcard without writing it.
///
/// # Errors
/// As postcard's serializer (never, for the models of this crate).
pub fn encoded_len<P: Serialize>(payload: &P) -> Result<usize, Error> {
    let size = postcard::serialize_with_flavor(payload, postcard::ser_flavors::Size::default());
    size.map(|len| frame::framed_len(len.saturating_add(SCALER_LEN_BYTES)))
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
        assert_eq!(&buf[..8], b"KSTL\x02\x00\x01\x02");
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
        let scaler = ScalerSection { count: 3, mean: &[1.0f64], m2: &[2.0] };
        let added = scaler_len(&scaler);
        assert_eq!(added, 1 + 1 + 8 + 1 + 8, "varint count, then two sequences of one f64");
        // Too short: refused, and the buffer is as it was.
        let before = buf;
        let e = add_scaler(&mut buf[..n + added - 1], n, scaler);
        assert_eq!(e, Err(Error::CapacityExceeded { needed: n + added, capacity: n + added - 1 }));
        assert_eq!(buf, before);
        assert_eq!(
            add_scaler::<f32>(&mut buf, n, ScalerSection { count: 0, mean: &[], m2: &[] }),
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
