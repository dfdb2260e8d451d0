//! Files written and read: model files and checkpoints written atomically, data outputs
//! written atomically as they come ([`OutputFile`]), files read within a size limit.
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
    OutputFile::replacing(path)?.write_whole(bytes)
}

/// Writes a data output (rows, a report) to `path`: atomically ([`write_atomic`]) when it
/// is a regular file or does not exist, in place when it is something else that takes
/// writes — a FIFO, `/dev/null`, a terminal — which an atomic write would replace.
///
/// # Errors
/// `Io` when it cannot be written.
pub fn write_output(path: &Path, bytes: &[u8]) -> Result<(), FileError> {
    OutputFile::create(path)?.write_whole(bytes)
}

/// A data output written as it comes, by [`write_output`]'s rule: a regular file (or a new
/// one) is written under a temporary name beside it, which [`finish`](Self::finish) flushes
/// to disk and renames over it — an output dropped unfinished (the input failed half-way) is
/// removed, and `path` keeps what it held; anything else that takes writes (a FIFO,
/// `/dev/null`) is written in place.
#[derive(Debug)]
pub struct OutputFile {
    file: File,
    /// The path as given, for errors.
    path: PathBuf,
    /// `(temporary, target)` until the rename; `None` for an output written in place.
    rename: Option<(PathBuf, PathBuf)>,
}

impl OutputFile {
    /// Opens the output for `path`.
    ///
    /// # Errors
    /// `Io` when the temporary file cannot be created or the path not opened for writing.
    pub fn create(path: &Path) -> Result<Self, FileError> {
        match fs::metadata(path) {
            Ok(meta) if !meta.is_file() => {
                let file = File::options().write(true).open(path).map_err(|error| io_error(path, error))?;
                Ok(OutputFile { file, path: path.to_path_buf(), rename: None })
            }
            _ => Self::replacing(path),
        }
    }

    /// Opens a temporary file that [`finish`](Self::finish) renames over `path`.
    ///
    /// # Errors
    /// `NotRegular` when `path` (or the target of the link it is) exists and is not a
    /// regular file; `Io` when the temporary file cannot be created.
    fn replacing(path: &Path) -> Result<Self, FileError> {
        let target = resolve(path).map_err(|error| io_error(path, error))?;
        match fs::metadata(&target) {
            Ok(meta) if !meta.is_file() => return Err(FileError::NotRegular { path: target }),
            _ => {}
        }
        let file_name = target.file_name().ok_or_else(|| io_error(path, io::Error::other("not a file name")))?;
        let mut temporary_name = file_name.to_os_string();
        temporary_name.push(format!(".tmp-{}", std::process::id()));
        let temporary = target.with_file_name(temporary_name);
        let file = File::create(&temporary).map_err(|error| io_error(path, error))?;
        Ok(OutputFile { file, path: path.to_path_buf(), rename: Some((temporary, target)) })
    }

    /// Writes `bytes`, then [`finish`](Self::finish)es.
    fn write_whole(mut self, bytes: &[u8]) -> Result<(), FileError> {
        self.file.write_all(bytes).map_err(|error| io_error(&self.path, error))?;
        self.finish()
    }

    /// Flushes the output to disk and renames it over the target.
    ///
    /// # Errors
    /// `Io` when the disk is full or the rename fails; the target is untouched then.
    pub fn finish(mut self) -> Result<(), FileError> {
        let Some((temporary, target)) = &self.rename else { return Ok(()) };
        let result = self.file.sync_all().and_then(|()| fs::rename(temporary, target));
        if result.is_ok() {
            self.rename = None;
        }
        result.map_err(|error| io_error(&self.path, error))
    }
}

impl Write for OutputFile {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.file.write(buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.file.flush()
    }
}

impl Drop for OutputFile {
    /// Removes an output that was not finished (best effort).
    fn drop(&mut self) {
        if let Some((temporary, _)) = self.rename.take() {
            let _ = fs::remove_file(temporary);
        }
    }
}

fn io_error(path: &Path, error: io::Error) -> FileError {
    FileError::Io { path: path.to_path_buf(), error }
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

    /// An output written as it comes replaces the file only when finished: dropped half-way
    /// it leaves the file as it was and no temporary file.
    #[test]
    fn an_unfinished_output_leaves_the_file_as_it_was() {
        let dir = scratch("unfinished");
        let path = dir.join("predictions.csv");
        fs::write(&path, b"kept\n").unwrap();
        let mut output = OutputFile::create(&path).unwrap();
        output.write_all(b"half").unwrap();
        drop(output);
        assert_eq!(fs::read(&path).unwrap(), b"kept\n");
        assert_eq!(fs::read_dir(&dir).unwrap().count(), 1, "no temporary file left");
        let mut output = OutputFile::create(&path).unwrap();
        output.write_all(b"whole\n").unwrap();
        output.finish().unwrap();
        assert_eq!(fs::read(&path).unwrap(), b"whole\n");
        assert_eq!(fs::read_dir(&dir).unwrap().count(), 1);
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
