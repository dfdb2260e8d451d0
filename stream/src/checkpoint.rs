//! Checkpoints of `kestrel stream`: everything needed to continue a run exactly.
//!
//! A [`Checkpoint`] holds the run's configuration (the flags that shape the model, so a
//! resume with other flags is refused, naming the flag), how many input rows were consumed
//! (records read, bad ones included), the prequential metrics, and the learner's complete
//! state ([`OnlineLearner::save_state`](crate::online::OnlineLearner::save_state)). On
//! disk it is self-describing and checksummed, like a model file but with its own magic,
//! since it is not a model:
//!
//! ```text
//! offset  size  field
//! 0       4     magic "KSCK"
//! 4       2     format version (u16, little endian), currently 1
//! 6       8     payload length P (u64, little endian)
//! 14      P     payload: the Checkpoint, postcard-encoded
//! 14+P    4     CRC-32 (ISO-HDLC) of bytes 0 .. 14+P, little endian
//! ```
//!
//! Files are written atomically ([`model_file::write_atomic`]): a crash, even a
//! `SIGKILL`, leaves the previous checkpoint or the new one, never half of one.

use std::fmt::Display;
use std::path::{Path, PathBuf};

use crc::{CRC_32_ISO_HDLC, Crc};
use serde::{Deserialize, Serialize};

use crate::model_file::{self, ModelFileError};
use crate::online::Prequential;

/// The first four bytes of every checkpoint.
pub const MAGIC: [u8; 4] = *b"KSCK";
/// The checkpoint format version this build writes and reads.
pub const FORMAT_VERSION: u16 = 1;
const HEADER_LEN: usize = 14;
const TRAILER_LEN: usize = 4;
const CRC32: Crc<u32> = Crc::<u32>::new(&CRC_32_ISO_HDLC);

/// The flags a run was started with, as `(flag, value)` pairs in a fixed order.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunConfig {
    flags: Vec<(String, String)>,
}

impl RunConfig {
    /// Adds a flag and its value.
    pub fn push(&mut self, flag: &str, value: impl Display) {
        self.flags.push((flag.to_string(), value.to_string()));
    }

    /// What differs from `now` (this configuration being the checkpoint's), or `None`.
    pub fn difference(&self, now: &RunConfig) -> Option<String> {
        let value = |config: &RunConfig, flag: &str| {
            let found = config.flags.iter().find(|(f, _)| f == flag);
            found.map_or_else(|| "unset".to_string(), |(_, v)| format!("`{v}`"))
        };
        let mut flags = self.flags.iter().chain(&now.flags).map(|(f, _)| f.as_str());
        let differs = flags.find(|&f| value(self, f) != value(now, f))?;
        Some(format!("{differs} is {} in the checkpoint but {} now", value(self, differs), value(now, differs)))
    }
}

/// The state of a `kestrel stream` run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Checkpoint {
    /// The flags of the run.
    pub config: RunConfig,
    /// Input rows consumed: records read, skipped ones included.
    pub rows: u64,
    /// Samples learned from.
    pub seen: u64,
    /// Rows skipped as bad.
    pub skipped: u64,
    /// Prequential metrics so far.
    pub metrics: Prequential,
    /// The learner's state, as its `save_state` wrote it.
    pub learner: Vec<u8>,
}

/// Why a checkpoint could not be written or read.
#[derive(Debug, thiserror::Error)]
pub enum CheckpointError {
    /// The file could not be read or written.
    #[error("{path}: {error}")]
    Io {
        /// The checkpoint file.
        path: PathBuf,
        /// The failure.
        error: std::io::Error,
    },
    /// The bytes are not a valid checkpoint.
    #[error("{path}: {error}")]
    Invalid {
        /// The checkpoint file.
        path: PathBuf,
        /// What is wrong with them.
        error: FormatError,
    },
}

/// What is wrong with checkpoint bytes.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum FormatError {
    /// Fewer bytes than the header announces.
    #[error("truncated checkpoint: needs {needed} bytes, has {got}")]
    Truncated {
        /// Bytes the checkpoint needs.
        needed: u64,
        /// Bytes there are.
        got: u64,
    },
    /// Not a Kestrel checkpoint.
    #[error("not a Kestrel checkpoint (bad magic number)")]
    BadMagic,
    /// Written by an incompatible version.
    #[error("checkpoint format version {0} is not supported (this build reads {FORMAT_VERSION})")]
    UnsupportedVersion(u16),
    /// The checksum does not match.
    #[error("corrupted checkpoint: checksum {computed:#010x} does not match stored {stored:#010x}")]
    ChecksumMismatch {
        /// Stored in the file.
        stored: u32,
        /// Of the bytes read.
        computed: u32,
    },
    /// Bytes follow the checksum.
    #[error("unexpected bytes after the checkpoint's checksum")]
    TrailingBytes,
    /// The payload does not decode.
    #[error("corrupted checkpoint payload: {0}")]
    Payload(#[from] postcard::Error),
}

impl Checkpoint {
    /// The file bytes.
    ///
    /// # Errors
    /// Only if serialization fails, which it does not for these types.
    pub fn to_bytes(&self) -> Result<Vec<u8>, FormatError> {
        let payload = postcard::to_stdvec(self)?;
        let mut bytes = Vec::with_capacity(HEADER_LEN + payload.len() + TRAILER_LEN);
        bytes.extend_from_slice(&MAGIC);
        bytes.extend_from_slice(&FORMAT_VERSION.to_le_bytes());
        bytes.extend_from_slice(&(payload.len() as u64).to_le_bytes());
        bytes.extend_from_slice(&payload);
        let crc = CRC32.checksum(&bytes);
        bytes.extend_from_slice(&crc.to_le_bytes());
        Ok(bytes)
    }

    /// Decodes file bytes, checking length, magic, version and checksum first.
    ///
    /// # Errors
    /// [`FormatError`] with the first check that failed.
    pub fn from_bytes(bytes: &[u8]) -> Result<Self, FormatError> {
        let got = bytes.len() as u64;
        let truncated = |needed| FormatError::Truncated { needed, got };
        let header: &[u8; HEADER_LEN] = bytes.first_chunk().ok_or(truncated((HEADER_LEN + TRAILER_LEN) as u64))?;
        if header[..4] != MAGIC {
            return Err(FormatError::BadMagic);
        }
        let version = u16::from_le_bytes([header[4], header[5]]);
        if version != FORMAT_VERSION {
            return Err(FormatError::UnsupportedVersion(version));
        }
        let payload_len = u64::from_le_bytes(header[6..14].try_into().unwrap_or_default());
        let needed = payload_len.saturating_add((HEADER_LEN + TRAILER_LEN) as u64);
        if got < needed {
            return Err(truncated(needed));
        }
        let body_len = HEADER_LEN + payload_len as usize;
        let (body, rest) = bytes.split_at(body_len);
        let stored = u32::from_le_bytes(rest[..TRAILER_LEN].try_into().unwrap_or_default());
        let computed = CRC32.checksum(body);
        if stored != computed {
            return Err(FormatError::ChecksumMismatch { stored, computed });
        }
        if rest.len() > TRAILER_LEN {
            return Err(FormatError::TrailingBytes);
        }
        Ok(postcard::from_bytes(&body[HEADER_LEN..])?)
    }

    /// Writes the checkpoint to `path` atomically (temporary file, fsync, rename).
    ///
    /// # Errors
    /// `Io` when the directory is not writable or the disk is full; the previous file is
    /// untouched then.
    pub fn write(&self, path: &Path) -> Result<(), CheckpointError> {
        let bytes = self.to_bytes().map_err(|error| CheckpointError::Invalid { path: path.to_path_buf(), error })?;
        model_file::write_atomic(path, &bytes).map_err(|e| match e {
            ModelFileError::Io { path, error } => CheckpointError::Io { path, error },
            ModelFileError::Invalid { path, error } => {
                CheckpointError::Io { path, error: std::io::Error::other(error.to_string()) }
            }
        })
    }

    /// Reads and checks the checkpoint at `path`.
    ///
    /// # Errors
    /// `Io` when it cannot be read, `Invalid` naming what is wrong with the bytes.
    pub fn read(path: &Path) -> Result<Self, CheckpointError> {
        let bytes = std::fs::read(path).map_err(|error| CheckpointError::Io { path: path.to_path_buf(), error })?;
        Self::from_bytes(&bytes).map_err(|error| CheckpointError::Invalid { path: path.to_path_buf(), error })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Checkpoint {
        let mut config = RunConfig::default();
        config.push("--learner", "svm");
        config.push("--c", 1.5);
        let mut metrics = Prequential::default();
        metrics.record(1.0, 1.0);
        Checkpoint { config, rows: 12, seen: 11, skipped: 1, metrics, learner: vec![1, 2, 3] }
    }

    #[test]
    fn round_trip_and_every_corruption_named() {
        let checkpoint = sample();
        let bytes = checkpoint.to_bytes().unwrap();
        assert_eq!(&bytes[..6], b"KSCK\x01\x00");
        assert_eq!(Checkpoint::from_bytes(&bytes).unwrap(), checkpoint);
        let n = bytes.len() as u64;
        assert_eq!(Checkpoint::from_bytes(&bytes[..5]), Err(FormatError::Truncated { needed: 18, got: 5 }));
        assert_eq!(
            Checkpoint::from_bytes(&bytes[..bytes.len() - 1]),
            Err(FormatError::Truncated { needed: n, got: n - 1 })
        );
        let mut bad = bytes.clone();
        bad[0] = b'X';
        assert_eq!(Checkpoint::from_bytes(&bad), Err(FormatError::BadMagic));
        let mut bad = bytes.clone();
        bad[4] = 7;
        assert_eq!(Checkpoint::from_bytes(&bad), Err(FormatError::UnsupportedVersion(7)));
        for i in 14..bytes.len() {
            let mut bad = bytes.clone();
            bad[i] ^= 0x20;
            assert!(matches!(Checkpoint::from_bytes(&bad), Err(FormatError::ChecksumMismatch { .. })), "byte {i}");
        }
        let mut long = bytes.clone();
        long.push(0);
        assert_eq!(Checkpoint::from_bytes(&long), Err(FormatError::TrailingBytes));
        let mut huge = bytes;
        huge[6..14].copy_from_slice(&u64::MAX.to_le_bytes());
        assert_eq!(Checkpoint::from_bytes(&huge), Err(FormatError::Truncated { needed: u64::MAX, got: n }));
    }

    #[test]
    fn difference_names_the_flag() {
        let ours = sample().config;
        assert_eq!(ours.difference(&ours), None);
        let mut other = RunConfig::default();
        other.push("--learner", "svm");
        other.push("--c", 2);
        assert_eq!(ours.difference(&other).unwrap(), "--c is `1.5` in the checkpoint but `2` now");
        other.push("--seed", 3);
        let mut same_c = ours.clone();
        same_c.flags[1].1 = "2".into();
        assert_eq!(same_c.difference(&other).unwrap(), "--seed is unset in the checkpoint but `3` now");
    }

    #[test]
    fn written_atomically_and_read_back() {
        let dir = std::env::temp_dir().join(format!("kestrel-checkpoint-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("run.ckpt");
        sample().write(&path).unwrap();
        assert_eq!(Checkpoint::read(&path).unwrap(), sample());
        std::fs::write(&path, b"KSTL not a checkpoint").unwrap();
        let e = Checkpoint::read(&path).unwrap_err().to_string();
        assert!(e.ends_with("run.ckpt: not a Kestrel checkpoint (bad magic number)"), "{e}");
        assert!(Checkpoint::read(&dir.join("missing")).is_err());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
