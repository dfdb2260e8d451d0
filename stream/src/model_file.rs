//! Model files on disk: written atomically, read and checked whole.
//!
//! The bytes are the core's envelope ([`kestrel_core::model`]): magic, format version,
//! kind, scalar, postcard payload, CRC-32. A file is written to a temporary name in the
//! same directory, flushed to disk and renamed over the target, so a crash never leaves a
//! half-written model under the real name.

use std::fs::{self, File};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use kestrel_core::model::Envelope;

/// Why a model file could not be used.
#[derive(Debug, thiserror::Error)]
pub enum ModelFileError {
    /// The file could not be read or written.
    #[error("{path}: {error}")]
    Io {
        /// The model file.
        path: PathBuf,
        /// The failure.
        error: io::Error,
    },
    /// The bytes are not a valid model (truncated, corrupted, foreign, wrong kind).
    #[error("{path}: {error}")]
    Invalid {
        /// The model file.
        path: PathBuf,
        /// What the core's decoder found.
        error: kestrel_core::Error,
    },
}

/// Writes `bytes` to `path` atomically (temporary file, fsync, rename).
///
/// # Errors
/// `Io` when the directory is not writable or the disk is full; the target is untouched.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), ModelFileError> {
    let io_error = |error| ModelFileError::Io { path: path.to_path_buf(), error };
    let file_name = path.file_name().ok_or_else(|| io_error(io::Error::other("not a file name")))?;
    let mut temporary_name = file_name.to_os_string();
    temporary_name.push(format!(".tmp-{}", std::process::id()));
    let temporary = path.with_file_name(temporary_name);
    let result = (|| {
        let mut file = File::create(&temporary)?;
        file.write_all(bytes)?;
        file.sync_all()?;
        fs::rename(&temporary, path)
    })();
    if result.is_err() {
        // Best effort: the temporary file may not exist if creating it failed.
        let _ = fs::remove_file(&temporary);
    }
    result.map_err(io_error)
}

/// Reads a model file and checks its envelope.
///
/// # Errors
/// `Io` when it cannot be read, `Invalid` naming what is wrong with the bytes.
pub fn read(path: &Path) -> Result<Vec<u8>, ModelFileError> {
    let bytes = fs::read(path).map_err(|error| ModelFileError::Io { path: path.to_path_buf(), error })?;
    Envelope::parse(&bytes).map_err(|error| ModelFileError::Invalid { path: path.to_path_buf(), error })?;
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;
    use kestrel_core::model::{ModelKind, ScalarKind, encode};

    #[test]
    fn round_trip_and_corruption() {
        let dir = std::env::temp_dir().join(format!("kestrel-model-file-{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        let path = dir.join("m.kestrel");
        let mut buf = [0u8; 64];
        let n = encode(ModelKind::LinearSvm, ScalarKind::F64, &[1.0f64, 2.0], &mut buf).unwrap();
        write_atomic(&path, &buf[..n]).unwrap();
        assert_eq!(read(&path).unwrap(), &buf[..n]);
        assert_eq!(fs::read_dir(&dir).unwrap().count(), 1, "no temporary file left");

        fs::write(&path, &buf[..n - 2]).unwrap();
        let e = read(&path).unwrap_err().to_string();
        assert!(e.ends_with("truncated model: needs 32 bytes, has 30"), "{e}");
        let mut corrupt = buf;
        corrupt[14] ^= 1;
        fs::write(&path, &corrupt[..n]).unwrap();
        assert!(read(&path).unwrap_err().to_string().contains("corrupted model: checksum"));
        fs::write(&path, b"hello, world, this is not a model").unwrap();
        assert!(read(&path).unwrap_err().to_string().contains("not a Kestrel model"));
        assert!(write_atomic(&dir.join("missing-dir/m"), b"x").is_err());
        fs::remove_dir_all(&dir).unwrap();
    }
}
