//! The framing shared by every Kestrel file: a header naming the file, a payload, a CRC.
//!
//! ```text
//! offset  size  field
//! 0       4     magic (e.g. "KSTL" for a model)
//! 4       2     format version (u16, little endian)
//! 6       2     two tag bytes the format defines (a model's kind and scalar type)
//! 8       4     payload length P (u32, little endian)
//! 12      P     payload
//! 12+P    4     CRC-32 (ISO-HDLC, as zlib/PNG) of bytes 0 .. 12+P, little endian
//! ```
//!
//! A [`Format`] (magic and version) writes and checks frames. Writing never allocates:
//! the payload is first placed in the caller's buffer at [`payload_mut`], then
//! [`Format::seal`] writes the header and the checksum around it. [`Format::open`] checks,
//! in order, length, magic, version, checksum and trailing bytes, and lends the payload
//! back; the tags are the format's to interpret (the model file checks them after the
//! checksum, see [`model`](crate::model)).
//!
//! A rejected frame is a [`FrameError`], the frame's own small enum rather than
//! [`Error`], so that each file type can name itself in its messages ("truncated model",
//! "truncated checkpoint"); [`ModelError`](crate::model::ModelError) converts from it.
//!
//! Cost: one CRC pass over the frame, O(P); no memory beyond the caller's buffer.
//!
//! # Examples
//! ```
//! use kestrel_core::frame::{self, Format};
//! const NOTES: Format = Format::new(*b"NOTE", 3);
//! let mut buf = [0u8; 32];
//! // The payload goes in first, straight into the buffer (here postcard would write it)...
//! frame::payload_mut(&mut buf)[..5].copy_from_slice(b"hello");
//! // ...then the header and checksum around it.
//! let n = NOTES.seal([7, 0], 5, &mut buf)?;
//! assert_eq!(n, frame::framed_len(5));
//! let opened = NOTES.open(&buf[..n]).unwrap();
//! assert_eq!((opened.tags, opened.payload), ([7, 0], &b"hello"[..]));
//! assert!(Format::new(*b"KSTL", 1).open(&buf[..n]).is_err());
//! # Ok::<(), kestrel_core::Error>(())
//! ```

use core::fmt;

use crc::{CRC_32_ISO_HDLC, Crc};

use crate::Error;

/// Bytes before the payload.
pub const HEADER_LEN: usize = 12;
/// Bytes after the payload (the checksum).
pub const TRAILER_LEN: usize = 4;

const CRC32: Crc<u32> = Crc::<u32>::new(&CRC_32_ISO_HDLC);

/// Bytes of a frame around a payload of `payload_len` bytes (saturating).
pub const fn framed_len(payload_len: usize) -> usize {
    payload_len.saturating_add(HEADER_LEN + TRAILER_LEN)
}

/// Where the payload goes in a frame written into `out`: `out[HEADER_LEN .. len − TRAILER_LEN]`
/// (empty when `out` is shorter than a header and a trailer).
pub fn payload_mut(out: &mut [u8]) -> &mut [u8] {
    let end = out.len().saturating_sub(TRAILER_LEN);
    out.get_mut(HEADER_LEN..end).unwrap_or_default()
}

/// A kind of file: its magic number, the format version this build writes, and the oldest
/// it reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Format {
    /// The first four bytes of every file of this kind.
    pub magic: [u8; 4],
    /// The version written, and the newest accepted.
    pub version: u16,
    /// The oldest version accepted.
    pub oldest: u16,
}

/// A checked frame: its version, its tag bytes and its payload.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Frame<'a> {
    /// The format version it was written in (from the format's `oldest` to its `version`).
    pub version: u16,
    /// The two tag bytes (offsets 6 and 7), for the format to interpret.
    pub tags: [u8; 2],
    /// The payload bytes.
    pub payload: &'a [u8],
}

/// Why bytes are not a valid frame. Every check of a frame is here, so the enum is
/// exhaustive: a file type can map each variant to its own message.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FrameError {
    /// Fewer bytes than the header announces (or than a header and trailer).
    Truncated {
        /// Bytes the frame needs.
        needed: usize,
        /// Bytes given.
        got: usize,
    },
    /// The magic number is not the format's.
    BadMagic,
    /// Written by another format version.
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
    /// Bytes follow the checksum.
    TrailingBytes,
}

impl fmt::Display for FrameError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            FrameError::Truncated { needed, got } => write!(f, "truncated: needs {needed} bytes, has {got}"),
            FrameError::BadMagic => f.write_str("bad magic number"),
            FrameError::UnsupportedVersion { found } => write!(f, "format version {found} is not supported"),
            FrameError::ChecksumMismatch { stored, computed } => {
                write!(f, "checksum {computed:#010x} does not match stored {stored:#010x}")
            }
            FrameError::TrailingBytes => f.write_str("unexpected bytes after the checksum"),
        }
    }
}

impl core::error::Error for FrameError {}

impl Format {
    /// The format of files starting with `magic`, at `version` (the only one read).
    pub const fn new(magic: [u8; 4], version: u16) -> Self {
        Format { magic, version, oldest: version }
    }

    /// The same format, reading also the versions from `oldest` on (files written before
    /// the current version, whose layout the caller still knows).
    #[must_use]
    pub const fn reading_from(self, oldest: u16) -> Self {
        Format { oldest, ..self }
    }

    /// Writes the header (with `tags`) and the checksum around the `payload_len` bytes
    /// already in [`payload_mut`]`(out)`; returns the frame's length,
    /// [`framed_len`]`(payload_len)`. Bytes of `out` beyond it are not touched.
    ///
    /// # Errors
    /// `CapacityExceeded` (in bytes) when `out` is shorter than the frame;
    /// `InvalidParam { name: "payload" }` when `payload_len` does not fit the header's `u32`.
    pub fn seal(&self, tags: [u8; 2], payload_len: usize, out: &mut [u8]) -> Result<usize, Error> {
        let total = framed_len(payload_len);
        let capacity = out.len();
        let frame = out.get_mut(..total).ok_or(Error::CapacityExceeded { needed: total, capacity })?;
        let payload_len_u32 = u32::try_from(payload_len).map_err(|_| Error::InvalidParam { name: "payload" })?;
        let (body, trailer) = frame.split_at_mut(total - TRAILER_LEN);
        let (header, _) =
            body.split_first_chunk_mut::<HEADER_LEN>().ok_or(Error::CapacityExceeded { needed: total, capacity })?;
        let [magic @ .., v0, v1, t0, t1, l0, l1, l2, l3] = header;
        magic.copy_from_slice(&self.magic);
        [*v0, *v1] = self.version.to_le_bytes();
        [*t0, *t1] = tags;
        [*l0, *l1, *l2, *l3] = payload_len_u32.to_le_bytes();
        trailer.copy_from_slice(&CRC32.checksum(body).to_le_bytes());
        Ok(total)
    }

    /// Checks `bytes` (length, magic, version, checksum, nothing after it) and lends back
    /// the tags and the payload.
    ///
    /// # Errors
    /// The first check that failed.
    pub fn open<'a>(&self, bytes: &'a [u8]) -> Result<Frame<'a>, FrameError> {
        let got = bytes.len();
        let truncated = |needed| FrameError::Truncated { needed, got };
        let (header, _) = bytes.split_first_chunk::<HEADER_LEN>().ok_or(truncated(framed_len(0)))?;
        let &[m0, m1, m2, m3, v0, v1, t0, t1, l0, l1, l2, l3] = header;
        if [m0, m1, m2, m3] != self.magic {
            return Err(FrameError::BadMagic);
        }
        let version = u16::from_le_bytes([v0, v1]);
        if version < self.oldest || version > self.version {
            return Err(FrameError::UnsupportedVersion { found: version });
        }
        // A payload length beyond usize is beyond any slice: it saturates and is truncated.
        let payload_len = usize::try_from(u32::from_le_bytes([l0, l1, l2, l3])).unwrap_or(usize::MAX);
        let total = framed_len(payload_len);
        let (body, rest) = bytes.split_at_checked(total - TRAILER_LEN).ok_or(truncated(total))?;
        let (stored, rest) = rest.split_first_chunk::<TRAILER_LEN>().ok_or(truncated(total))?;
        let stored = u32::from_le_bytes(*stored);
        let computed = CRC32.checksum(body);
        if stored != computed {
            return Err(FrameError::ChecksumMismatch { stored, computed });
        }
        if !rest.is_empty() {
            return Err(FrameError::TrailingBytes);
        }
        let payload = body.get(HEADER_LEN..).unwrap_or_default();
        Ok(Frame { version, tags: [t0, t1], payload })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TEST: Format = Format::new(*b"TEST", 2);

    fn sample() -> ([u8; 32], usize) {
        let mut buf = [0xAAu8; 32];
        payload_mut(&mut buf)[..3].copy_from_slice(&[1, 2, 3]);
        let n = TEST.seal([4, 5], 3, &mut buf).unwrap();
        (buf, n)
    }

    #[test]
    fn layout_round_trip_and_known_checksum() {
        let (buf, n) = sample();
        assert_eq!(n, 19);
        assert_eq!(&buf[..15], b"TEST\x02\x00\x04\x05\x03\x00\x00\x00\x01\x02\x03");
        assert_eq!(&buf[15..19], &CRC32.checksum(&buf[..15]).to_le_bytes());
        assert!(buf[19..].iter().all(|&b| b == 0xAA));
        assert_eq!(TEST.open(&buf[..n]), Ok(Frame { version: 2, tags: [4, 5], payload: &[1, 2, 3] }));
        // CRC-32/ISO-HDLC check value of "123456789" (the catalogue's reference).
        assert_eq!(CRC32.checksum(b"123456789"), 0xCBF4_3926);
        let mut empty = [0u8; 16];
        assert_eq!(TEST.seal([0, 0], 0, &mut empty), Ok(16));
        assert_eq!(TEST.open(&empty), Ok(Frame { version: 2, tags: [0, 0], payload: &[] }));
    }

    #[test]
    fn every_failure_is_named() {
        let (buf, n) = sample();
        assert_eq!(TEST.open(&buf[..5]), Err(FrameError::Truncated { needed: 16, got: 5 }));
        assert_eq!(TEST.open(&buf[..n - 1]), Err(FrameError::Truncated { needed: n, got: n - 1 }));
        assert_eq!(TEST.open(&buf[..13]), Err(FrameError::Truncated { needed: n, got: 13 }));
        assert_eq!(Format::new(*b"TESU", 2).open(&buf[..n]), Err(FrameError::BadMagic));
        assert_eq!(Format::new(*b"TEST", 1).open(&buf[..n]), Err(FrameError::UnsupportedVersion { found: 2 }));
        // A newer format that reads back to version 2 opens it, and tells its version.
        let newer = Format::new(*b"TEST", 3);
        assert_eq!(newer.open(&buf[..n]), Err(FrameError::UnsupportedVersion { found: 2 }));
        assert_eq!(newer.reading_from(2).open(&buf[..n]).map(|f| f.version), Ok(2));
        assert_eq!(newer.reading_from(3).open(&buf[..n]), Err(FrameError::UnsupportedVersion { found: 2 }));
        for i in 6..n {
            let mut bad = buf;
            bad[i] ^= 0x10;
            assert!(
                matches!(TEST.open(&bad[..n]), Err(FrameError::ChecksumMismatch { .. } | FrameError::Truncated { .. })),
                "byte {i}"
            );
        }
        assert_eq!(TEST.open(&buf[..n + 1]), Err(FrameError::TrailingBytes));
        let mut huge = buf;
        huge[8..12].copy_from_slice(&u32::MAX.to_le_bytes());
        let needed = framed_len(u32::MAX as usize);
        assert_eq!(TEST.open(&huge), Err(FrameError::Truncated { needed, got: 32 }));
        let mut small = [0u8; 18];
        assert_eq!(TEST.seal([0, 0], 3, &mut small), Err(Error::CapacityExceeded { needed: 19, capacity: 18 }));
        assert!(payload_mut(&mut small[..15]).is_empty());
        assert_eq!(payload_mut(&mut small).len(), 2);
    }
}
