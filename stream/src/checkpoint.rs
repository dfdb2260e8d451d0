//! Checkpoints of `kestrel stream`: everything needed to continue a run exactly.
//!
//! A [`Checkpoint`] holds the run's configuration (the flags that shape the model, so a
//! resume with other flags is refused, naming the flag), how many input rows were consumed
//! (records read, bad ones included), the prequential metrics, the run's history (the
//! series its report draws, [`crate::history`]), and the learner's complete
//! state ([`OnlineLearner::save_state`](crate::online::OnlineLearner::save_state), which
//! carries the learner's own format version). On disk it is self-describing and
//! checksummed in the core's frame ([`kestrel_core::frame`]), the framing of model files
//! with a magic of its own, since it is not a model:
//!
//! ```text
//! offset  size  field
//! 0       4     magic "KSCK"
//! 4       2     format version (u16, little endian), currently 8
//! 6       2     tags, 0 0
//! 8       4     payload length P (u32, little endian)
//! 12      P     payload: the Checkpoint, postcard-encoded
//! 12+P    4     CRC-32 (ISO-HDLC) of bytes 0 .. 12+P, little endian
//! ```
//!
//! Files are written atomically ([`file::write_atomic`]): a crash, even a `SIGKILL`,
//! leaves the previous checkpoint or the new one, never half of one. A checkpoint file is
//! read whole, up to [`MAX_FILE_BYTES`].

use std::fmt::Display;
use std::path::Path;

use kestrel_core::frame::{self, Format, FrameError};
use serde::{Deserialize, Serialize};

use crate::file::{self, FileError};
use crate::history::History;
use crate::limits::{MAX_FILE_BYTES, zeroed};
use crate::online::{ClassProbabilities, Prequential};

/// The frame of a checkpoint: magic "KSCK" and the format version this build writes and
/// reads (1 had a 64-bit length and no tags; 2 had no novelty metrics and no output length;
/// 3 had no sequence number; 4 had no history; 5 had no counts by class; 6 had no steps per
/// sample in its history; 7 had no class probabilities and no log loss).
pub const FORMAT: Format = Format::new(*b"KSCK", 8);

/// The entry of a [`RunConfig`] that holds the names a CSV header gave the features, in
/// order (not a flag: a fact of the input, which a resumed run must share).
pub const COLUMNS: &str = "columns";

/// The entries a checkpoint may lack because it was written before they were recorded; a
/// resume compares them only when the checkpoint has them. `--eps`: the learner went on
/// with LIBLINEAR's 0.1 before its stopping tolerance was a flag, and a resumed one takes
/// the tolerance of today's flags.
const ADDED_LATER: [&str; 2] = [COLUMNS, "--eps"];

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

    /// The flags and their values, in the order they were added.
    pub fn flags(&self) -> impl Iterator<Item = (&str, &str)> {
        self.flags.iter().map(|(flag, value)| (flag.as_str(), value.as_str()))
    }

    /// The value recorded for `flag`, if it was.
    pub fn value(&self, flag: &str) -> Option<&str> {
        self.flags().find(|(name, _)| *name == flag).map(|(_, value)| value)
    }

    /// What differs from `now` (this configuration being the checkpoint's), or `None`.
    /// The input's [`COLUMNS`] and `--eps` are compared only when the checkpoint recorded
    /// them (those of before did not).
    pub fn difference(&self, now: &RunConfig) -> Option<String> {
        let value = |config: &RunConfig, flag: &str| {
            let found = config.flags.iter().find(|(f, _)| f == flag);
            found.map_or_else(|| "unset".to_string(), |(_, v)| format!("`{v}`"))
        };
        let recorded = |flag: &str| !ADDED_LATER.contains(&flag) || self.flags.iter().any(|(f, _)| f == flag);
        let mut flags = self.flags.iter().chain(&now.flags).map(|(f, _)| f.as_str()).filter(|&f| recorded(f));
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
    /// Bytes written to the per-row `--output` so far (a resume cuts the file back to
    /// them, so that every row's line is there once).
    pub output_bytes: u64,
    /// The largest sequence number among the rows consumed that carried one (an MQTT
    /// JSON row's `"seq"`): a row redelivered with one no larger is not learned again.
    pub last_seq: Option<u64>,
    /// The series of the run so far, for its report.
    pub history: History,
    /// A classifier's class probabilities, learned from the samples so far.
    pub probabilities: ClassProbabilities,
    /// The learner's state, as its `save_state` wrote it.
    pub learner: Vec<u8>,
}

/// Why a checkpoint could not be written or read.
#[derive(Debug, thiserror::Error)]
pub enum CheckpointError {
    /// The file could not be read or written.
    #[error(transparent)]
    File(#[from] FileError),
    /// The bytes are not a valid checkpoint.
    #[error("{path}: {error}")]
    Invalid {
        /// The checkpoint file.
        path: std::path::PathBuf,
        /// What is wrong with them.
        error: FormatError,
    },
}

/// What is wrong with checkpoint bytes.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum FormatError {
    /// The frame is truncated, foreign, of another version, corrupted or followed by bytes.
    #[error("{}", frame_message(.0))]
    Frame(FrameError),
    /// The payload does not decode.
    #[error("corrupted checkpoint payload: {0}")]
    Payload(#[from] postcard::Error),
    /// The payload is larger than a frame can hold.
    #[error("a checkpoint of {0} bytes is larger than a frame can hold")]
    TooLarge(usize),
}

/// What a frame error means for a checkpoint.
fn frame_message(error: &FrameError) -> String {
    match *error {
        FrameError::Truncated { needed, got } => format!("truncated checkpoint: needs {needed} bytes, has {got}"),
        FrameError::BadMagic => "not a Kestrel checkpoint (bad magic number)".into(),
        FrameError::UnsupportedVersion { found } => {
            format!("checkpoint format version {found} is not supported (this build reads {})", FORMAT.version)
        }
        FrameError::ChecksumMismatch { stored, computed } => {
            format!("corrupted checkpoint: checksum {computed:#010x} does not match stored {stored:#010x}")
        }
        FrameError::TrailingBytes => "unexpected bytes after the checkpoint's checksum".into(),
    }
}

impl Checkpoint {
    /// The file bytes.
    ///
    /// # Errors
    /// `TooLarge` for a payload a frame cannot hold (4 GiB), or if serialization fails,
    /// which it does not for these types.
    pub fn to_bytes(&self) -> Result<Vec<u8>, FormatError> {
        let payload_len = postcard::experimental::serialized_size(self)?;
        let too_large = || FormatError::TooLarge(payload_len);
        let mut bytes = zeroed(frame::framed_len(payload_len), "a checkpoint").map_err(|_| too_large())?;
        postcard::to_slice(self, frame::payload_mut(&mut bytes))?;
        FORMAT.seal([0, 0], payload_len, &mut bytes).map_err(|_| too_large())?;
        Ok(bytes)
    }

    /// Decodes file bytes, checking length, magic, version and checksum first.
    ///
    /// # Errors
    /// [`FormatError`] with the first check that failed.
    pub fn from_bytes(bytes: &[u8]) -> Result<Self, FormatError> {
        let frame = FORMAT.open(bytes).map_err(FormatError::Frame)?;
        Ok(postcard::from_bytes(frame.payload)?)
    }

    /// Writes the checkpoint to `path` atomically (temporary file, fsync, rename).
    ///
    /// # Errors
    /// `File` when `path` is not a regular file, the directory is not writable or the disk
    /// is full; the previous file is untouched then.
    pub fn write(&self, path: &Path) -> Result<(), CheckpointError> {
        let bytes = self.to_bytes().map_err(|error| CheckpointError::Invalid { path: path.to_path_buf(), error })?;
        Ok(file::write_atomic(path, &bytes)?)
    }

    /// Reads and checks the checkpoint at `path`.
    ///
    /// # Errors
    /// `File` when it cannot be read or is larger than [`MAX_FILE_BYTES`], `Invalid`
    /// naming what is wrong with the bytes.
    pub fn read(path: &Path) -> Result<Self, CheckpointError> {
        let bytes = file::read_bounded(path, MAX_FILE_BYTES)?;
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
        metrics.record(Some(1.0), 1.0);
        Checkpoint {
            config,
            rows: 12,
            seen: 11,
            skipped: 1,
            metrics,
            output_bytes: 40,
            last_seq: Some(9),
            history: History::default(),
            probabilities: ClassProbabilities::default(),
            learner: vec![1, 2, 3],
        }
    }

    #[test]
    fn round_trip_and_every_corruption_named() {
        let checkpoint = sample();
        let bytes = checkpoint.to_bytes().unwrap();
        assert_eq!(&bytes[..8], b"KSCK\x08\x00\x00\x00");
        assert_eq!(Checkpoint::from_bytes(&bytes).unwrap(), checkpoint);
        let n = bytes.len();
        let frame = |e| Err(FormatError::Frame(e));
        assert_eq!(Checkpoint::from_bytes(&bytes[..5]), frame(FrameError::Truncated { needed: 16, got: 5 }));
        assert_eq!(Checkpoint::from_bytes(&bytes[..n - 1]), frame(FrameError::Truncated { needed: n, got: n - 1 }));
        let mut bad = bytes.clone();
        bad[0] = b'X';
        let e = Checkpoint::from_bytes(&bad).unwrap_err();
        assert_eq!(e.to_string(), "not a Kestrel checkpoint (bad magic number)");
        let mut bad = bytes.clone();
        bad[4] = 1;
        let e = Checkpoint::from_bytes(&bad).unwrap_err();
        assert_eq!(e.to_string(), "checkpoint format version 1 is not supported (this build reads 8)");
        for i in 12..bytes.len() {
            let mut bad = bytes.clone();
            bad[i] ^= 0x20;
            let error = Checkpoint::from_bytes(&bad);
            assert!(matches!(error, Err(FormatError::Frame(FrameError::ChecksumMismatch { .. }))), "byte {i}");
        }
        let mut long = bytes.clone();
        long.push(0);
        assert_eq!(Checkpoint::from_bytes(&long), frame(FrameError::TrailingBytes));
        let mut huge = bytes;
        huge[8..12].copy_from_slice(&u32::MAX.to_le_bytes());
        let needed = frame::framed_len(u32::MAX as usize);
        assert_eq!(Checkpoint::from_bytes(&huge), frame(FrameError::Truncated { needed, got: n }));
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

    /// The header's names are compared when the checkpoint has them; one from before them
    /// resumes on any header.
    #[test]
    fn columns_differ_only_when_the_checkpoint_recorded_them() {
        let before = sample().config;
        let mut now = before.clone();
        now.push(COLUMNS, "a, b");
        assert_eq!(before.difference(&now), None);
        let mut swapped = before.clone();
        swapped.push(COLUMNS, "b, a");
        assert_eq!(now.difference(&swapped).unwrap(), "columns is `a, b` in the checkpoint but `b, a` now");
        assert_eq!(now.difference(&before).unwrap(), "columns is `a, b` in the checkpoint but unset now");
    }

    /// A checkpoint from before `--eps` was recorded resumes with any tolerance; one that
    /// recorded it resumes only with the same.
    #[test]
    fn eps_differs_only_when_the_checkpoint_recorded_it() {
        let before = sample().config;
        let mut now = before.clone();
        now.push("--eps", 1);
        assert_eq!(before.difference(&now), None);
        let mut other = before.clone();
        other.push("--eps", 0.3);
        assert_eq!(now.difference(&other).unwrap(), "--eps is `1` in the checkpoint but `0.3` now");
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
