//! Files written and read whole — model files and checkpoints: written atomically, read
//! within a size limit.
//!
//! A file is written to a temporary name in the target's directory, flushed to disk and
//! renamed over the target, so a crash never leaves a half-written file under the real
//! name. Only a regular file is ever replaced: a path that exists and is something else (a
//! FIFO, a device such as `/dev/full`, a directory) is refused, and a symbolic link is
//! followed to its target, which is written, so the link stays a link.

use std::fs::{self, File};
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};

/// Why a file could not be written or read.
#[derive(Debug, thiserror::Error)]
pub enum FileError {
    /// The file could not be read or written.
    #[error("{path}: {error}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The failure.
        error: io::Error,
    },
    /// The path exists and is not a regular file: it is never replaced.
    #[error("{path}: exists and is not a regular file; refusing to replace it")]
    NotRegular {
        /// The path (after following symbolic links).
        path: PathBuf,
    },
    /// The file is larger than the reader accepts.
    #[error("{path}: larger than the limit of {limit} bytes")]
    TooLarge {
        /// The file.
        path: PathBuf,
        /// The limit.
        limit: u64,
    },
}

/// Symbolic links followed before giving up (as Linux's `MAXSYMLINKS`).
const MAX_LINKS: usize = 40;

/// `path` with symbolic links followed, also to a target that does not exist yet.
fn resolve(path: &Path) -> io::Result<PathBuf> {
    let mut path = path.to_path_buf();
    for _ in 0..MAX_LINKS {
        match fs::symlink_metadata(&path) {
            Ok(meta) if meta.file_type().is_symlink() => {
                let target = fs::read_link(&path)?;
                path = match path.parent() {
                    Some(dir) if target.is_relative() => dir.join(target),
                    _ => target,
                };
            }
            _ => return Ok(path),
        }
    }
    Err(io::Error::other("too many levels of symbolic links"))
}

/// Writes `bytes` to `path` atomically (temporary file, fsync, rename).
///
/// # Errors
/// `NotRegular` when `path` (or the target of the link it is) exists and is not a regular
/// file; `Io` when the directory is not writable or the disk is full. The target is
/// untouched on error.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), FileError> {
    let io_error = |error| FileError::Io { path: path.to_path_buf(), error };
    let target = resolve(path).map_err(io_error)?;
    match fs::metadata(&target) {
        Ok(meta) if !meta.is_file() => return Err(FileError::NotRegular { path: target }),
        _ => {}
    }
    let file_name = target.file_name().ok_or_else(|| io_error(io::Error::other("not a file name")))?;
    let mut temporary_name = file_name.to_os_string();
    temporary_name.push(format!(".tmp-{}", std::process::id()));
    let temporary = target.with_file_name(temporary_name);
    let result = (|| {
        let mut file = File::create(&temporary)?;
        file.write_all(bytes)?;
        file.sync_all()?;
        fs::rename(&temporary, &target)
    })();
    if result.is_err() {
        // Best effort: the temporary file may not exist if creating it failed.
        let _ = fs::remove_file(&temporary);
    }
    result.map_err(io_error)
}

/// Writes a data output (rows, a report) to `path`: atomically ([`write_atomic`]) when it
/// is a regular file or does not exist, in place when it is something else that takes
/// writes — a FIFO, `/dev/null`, a terminal — which an atomic write would replace.
///
/// # Errors
/// `Io` when it cannot be written.
pub fn write_output(path: &Path, bytes: &[u8]) -> Result<(), FileError> {
    let io_error = |error| FileError::Io { path: path.to_path_buf(), error };
    match fs::metadata(path) {
        Ok(meta) if !meta.is_file() => {
            File::options().write(true).open(path).and_then(|mut file| file.write_all(bytes)).map_err(io_error)
        }
        _ => write_atomic(path, bytes),
    }
}

/// Reads the whole file at `path`, at most `limit` bytes.
///
/// # Errors
/// `Io` when it cannot be read, `TooLarge` past `limit` (checked before reading a regular
/// file, while reading anything else).
pub fn read_bounded(path: &Path, limit: u64) -> Result<Vec<u8>, FileError> {
    let io_error = |error| FileError::Io { path: path.to_path_buf(), error };
    let too_large = || FileError::TooLarge { path: path.to_path_buf(), limit };
    let file = File::open(path).map_err(io_error)?;
    let meta = file.metadata().map_err(io_error)?;
    if meta.is_file() && meta.len() > limit {
        return Err(too_large());
    }
    let mut bytes = Vec::new();
    file.take(limit.saturating_add(1)).read_to_end(&mut bytes).map_err(io_error)?;
    if bytes.len() as u64 > limit {
        return Err(too_large());
    }
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("kestrel-file-{name}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[test]
    fn writes_atomically_and_reads_within_the_limit() {
        let dir = scratch("round-trip");
        let path = dir.join("m.kestrel");
        write_atomic(&path, b"first").unwrap();
        write_atomic(&path, b"second").unwrap();
        assert_eq!(read_bounded(&path, 6).unwrap(), b"second");
        assert_eq!(fs::read_dir(&dir).unwrap().count(), 1, "no temporary file left");
        let e = read_bounded(&path, 5).unwrap_err().to_string();
        assert!(e.ends_with("m.kestrel: larger than the limit of 5 bytes"), "{e}");
        assert!(matches!(write_atomic(&dir.join("missing-dir/m"), b"x"), Err(FileError::Io { .. })));
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn fifos_and_directories_are_never_replaced() {
        use std::os::unix::fs::FileTypeExt;
        let dir = scratch("special");
        let fifo = dir.join("fifo");
        assert!(std::process::Command::new("mkfifo").arg(&fifo).status().unwrap().success());
        let e = write_atomic(&fifo, b"x").unwrap_err();
        assert_eq!(
            e.to_string(),
            format!("{}: exists and is not a regular file; refusing to replace it", fifo.display())
        );
        assert!(fs::metadata(&fifo).unwrap().file_type().is_fifo());
        assert!(matches!(write_atomic(&dir, b"x"), Err(FileError::NotRegular { .. })));
        // A device read with no end stops at the limit.
        assert!(matches!(read_bounded(Path::new("/dev/zero"), 1000), Err(FileError::TooLarge { .. })));
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_data_output_is_written_into_a_fifo_or_device_in_place() {
        use std::os::unix::fs::FileTypeExt;
        let dir = scratch("output");
        let fifo = dir.join("fifo");
        assert!(std::process::Command::new("mkfifo").arg(&fifo).status().unwrap().success());
        let reader = std::thread::spawn({
            let fifo = fifo.clone();
            move || fs::read(fifo).unwrap()
        });
        write_output(&fifo, b"pc0,label\n").unwrap();
        assert_eq!(reader.join().unwrap(), b"pc0,label\n");
        assert!(fs::metadata(&fifo).unwrap().file_type().is_fifo());
        write_output(Path::new("/dev/null"), b"rows").unwrap();
        assert!(fs::metadata("/dev/null").unwrap().file_type().is_char_device());
        let file = dir.join("rows.csv");
        write_output(&file, b"first").unwrap();
        write_output(&file, b"2nd").unwrap();
        assert_eq!(fs::read(&file).unwrap(), b"2nd");
        assert!(matches!(write_output(&dir, b"x"), Err(FileError::Io { .. })));
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_symbolic_link_is_followed_not_replaced() {
        let dir = scratch("link");
        let (target, link) = (dir.join("target.kestrel"), dir.join("link.kestrel"));
        std::os::unix::fs::symlink("target.kestrel", &link).unwrap();
        write_atomic(&link, b"through the link").unwrap();
        assert!(fs::symlink_metadata(&link).unwrap().file_type().is_symlink());
        assert_eq!(fs::read(&target).unwrap(), b"through the link");
        fs::remove_dir_all(&dir).unwrap();
    }
}
