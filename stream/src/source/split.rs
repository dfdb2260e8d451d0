//! A LibSVM file read in contiguous parts, one reader each, so that the parts can be parsed
//! on threads of their own ([`crate::dataset::Dataset::read_parts`]).
//!
//! The file is cut near `len·t/parts` at the start of the next line: every line lies in one
//! part whole, and the parts in order are the file. LibSVM lines stand alone (no header, no
//! quoting), which is what makes this cut sound; CSV files, whose quoted fields may hold line
//! breaks, are read in one piece. Each part's reader numbers its lines from 1; the caller
//! adds the lines of the parts before ([`LibSvmReader::lines_read`]).
//!
//! Memory: one buffered reader per part (the buffer of [`BufReader`]).

use std::fs::File;
use std::io::{self, BufRead, BufReader, Read, Seek, SeekFrom, Take};
use std::path::Path;

use super::{Format, LibSvmReader, Options, format_from_extension};

/// Files from this size up are read in parts (below it, starting threads costs more than
/// they save).
pub const PARALLEL_READ_BYTES: u64 = 8 << 20;

/// A part's reader: the bytes of its lines only.
pub type PartReader = LibSvmReader<BufReader<Take<File>>>;

/// The parts of `input` for `threads` threads when it is worth reading so: a regular file
/// of at least [`PARALLEL_READ_BYTES`] in LibSVM (given by `options`, or by its extension),
/// not compressed, and more than one thread. `None` otherwise: read it whole
/// ([`super::open`]; a compressed file's cuts could only be found by decompressing it).
///
/// # Errors
/// The file cannot be opened, measured or read.
pub fn libsvm_file_parts(input: &str, options: &Options, threads: usize) -> io::Result<Option<Vec<PartReader>>> {
    let libsvm = match options.format {
        Format::LibSvm => true,
        Format::Auto => format_from_extension(input) == Format::LibSvm,
        Format::Csv => false,
    };
    // Columns named by a CSV header's names: the single reader refuses them for LibSVM.
    let header_columns = options.header_columns().is_some();
    if !libsvm || threads < 2 || input == "-" || input.starts_with("serial:") || header_columns {
        return Ok(None);
    }
    let path = Path::new(input);
    match std::fs::metadata(path) {
        Ok(meta) if meta.is_file() && meta.len() >= PARALLEL_READ_BYTES && !super::gzip::is_gzip_file(path)? => {
            libsvm_parts(path, input, options.max_line_bytes, threads).map(Some)
        }
        _ => Ok(None),
    }
}

/// The file at `path` (named `name` in messages) as at most `parts` readers of consecutive
/// lines, lines of at most `max_line_bytes` (fewer parts when the file has fewer lines'
/// worth of cuts).
///
/// # Errors
/// The file cannot be opened, measured or read.
pub fn libsvm_parts(path: &Path, name: &str, max_line_bytes: usize, parts: usize) -> io::Result<Vec<PartReader>> {
    let len = File::open(path)?.metadata()?.len();
    let parts = u64::try_from(parts.max(1)).unwrap_or(1);
    let mut cuts = vec![0];
    for t in 1..parts {
        let cut = line_start_after(path, len * t / parts)?;
        if cut > *cuts.last().unwrap_or(&0) && cut < len {
            cuts.push(cut);
        }
    }
    cuts.push(len);
    let ranges = cuts.windows(2).filter_map(|pair| match *pair {
        [start, end] => Some((start, end)),
        _ => None,
    });
    ranges
        .map(|(start, end)| {
            let mut file = File::open(path)?;
            file.seek(SeekFrom::Start(start))?;
            let reader = LibSvmReader::new(BufReader::new(file.take(end - start)), name, max_line_bytes);
            Ok(if start > 0 { reader.continuing() } else { reader })
        })
        .collect()
}

/// The offset of the first line that starts at or after `offset` (`offset` itself when the
/// byte before it ends a line; the file's length when no line starts there).
fn line_start_after(path: &Path, offset: u64) -> io::Result<u64> {
    if offset == 0 {
        return Ok(0);
    }
    let mut file = File::open(path)?;
    file.seek(SeekFrom::Start(offset - 1))?;
    let mut reader = BufReader::new(file);
    let mut skipped = Vec::new();
    let read = reader.read_until(b'\n', &mut skipped)?;
    Ok(offset - 1 + read as u64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::{Record, RecordReader};

    /// A compressed file is read whole, however large: its bytes are not its lines.
    #[test]
    fn a_gzip_file_is_not_cut() {
        let path = std::env::temp_dir().join(format!("kestrel-split-gzip-{}.libsvm", std::process::id()));
        let mut bytes = vec![0x1f, 0x8b];
        bytes.resize(usize::try_from(PARALLEL_READ_BYTES).unwrap(), b'\n');
        std::fs::write(&path, bytes).unwrap();
        let parts = libsvm_file_parts(path.to_str().unwrap(), &Options::default(), 2).unwrap();
        std::fs::remove_file(&path).unwrap();
        assert!(parts.is_none());
        let plain = std::env::temp_dir().join(format!("kestrel-split-plain-{}.libsvm", std::process::id()));
        std::fs::write(&plain, vec![b'\n'; usize::try_from(PARALLEL_READ_BYTES).unwrap()]).unwrap();
        let parts = libsvm_file_parts(plain.to_str().unwrap(), &Options::default(), 2).unwrap();
        assert!(parts.is_some(), "the same size in plain text is cut");
        // Flags that name a CSV header's columns: the single reader refuses them for LibSVM.
        let skipping = Options { skip_columns: vec!["x".into()], ..Options::default() };
        let parts = libsvm_file_parts(plain.to_str().unwrap(), &skipping, 2).unwrap();
        std::fs::remove_file(&plain).unwrap();
        assert!(parts.is_none(), "a file read with --skip-column is not cut");
    }

    /// A part after the first that starts at a row without pairs reads it as a bad LibSVM
    /// row, as the whole file would, not as a file of values separated by spaces.
    #[test]
    fn a_later_part_is_read_as_libsvm() {
        let path = std::env::temp_dir().join(format!("kestrel-split-later-{}.svm", std::process::id()));
        std::fs::write(&path, "1 1:2\n-1 x\n").unwrap();
        let parts = libsvm_parts(&path, "t.svm", 1024, 2).unwrap();
        std::fs::remove_file(&path).unwrap();
        assert_eq!(parts.len(), 2);
        let mut later = parts.into_iter().nth(1).unwrap();
        let kind = later.next_record(&mut Record::default()).unwrap_err().kind;
        assert_eq!(kind, crate::source::ReadErrorKind::NotAPair("x".into()));
    }

    /// Every line lands in exactly one part, in order, whatever the number of parts and
    /// wherever the cuts fall (short files, a last line without its line break, long lines).
    #[test]
    fn the_parts_are_the_file() {
        let dir = std::env::temp_dir().join(format!("kestrel-split-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let long = format!("9 {}", (1..200).map(|j| format!("{j}:1")).collect::<Vec<_>>().join(" "));
        let texts = [
            String::new(),
            "1 1:1".to_string(),
            "1 1:1\n2 2:2\n".to_string(),
            (0..50).map(|i| format!("{i} 1:{i}\n")).collect::<String>() + &long + "\n# a comment\n\n3 3:3",
        ];
        for (k, text) in texts.iter().enumerate() {
            let path = dir.join(format!("{k}.svm"));
            std::fs::write(&path, text).unwrap();
            let expected: Vec<f64> = text
                .lines()
                .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
                .map(|l| l.split(' ').next().unwrap().parse().unwrap())
                .collect();
            for parts in [1, 2, 3, 7, 64] {
                let readers = libsvm_parts(&path, "t.svm", 4096, parts).unwrap();
                assert!(!readers.is_empty() && readers.len() <= parts);
                let (mut labels, mut lines) = (Vec::new(), 0);
                for mut reader in readers {
                    let mut record = Record::default();
                    while reader.next_record(&mut record).unwrap() {
                        labels.push(record.label);
                    }
                    lines += reader.lines_read();
                }
                assert_eq!(labels, expected, "file {k}, {parts} parts");
                assert_eq!(lines, text.lines().count() as u64, "file {k}, {parts} parts");
            }
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// Only a LibSVM file (by `--format` or its extension) of `PARALLEL_READ_BYTES` or more,
    /// with threads to spare, is read in parts.
    #[test]
    fn large_libsvm_files_only() {
        let dir = std::env::temp_dir().join(format!("kestrel-split-rule-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let line = "1 1:0.25 2:0.5 3:0.75\n";
        let big = line.repeat(usize::try_from(PARALLEL_READ_BYTES).unwrap() / line.len() + 1);
        let (small, large, large_txt) = (dir.join("small.svm"), dir.join("large.svm"), dir.join("large.txt"));
        std::fs::write(&small, line).unwrap();
        std::fs::write(&large, &big).unwrap();
        std::fs::write(&large_txt, &big).unwrap();
        let name = |p: &std::path::Path| p.to_str().unwrap().to_string();
        let auto = Options::default();
        let libsvm = Options { format: Format::LibSvm, ..Options::default() };
        let csv = Options { format: Format::Csv, ..Options::default() };
        let count = |input: &str, options: &Options, threads| {
            libsvm_file_parts(input, options, threads).unwrap().map(|parts| parts.len())
        };
        assert_eq!(count(&name(&large), &auto, 2), Some(2));
        assert_eq!(count(&name(&large_txt), &libsvm, 3), Some(3));
        assert_eq!(count(&name(&large_txt), &auto, 2), None);
        assert_eq!(count(&name(&large), &csv, 2), None);
        assert_eq!(count(&name(&large), &auto, 1), None);
        assert_eq!(count(&name(&small), &auto, 2), None);
        assert_eq!(count("-", &libsvm, 2), None);
        assert_eq!(count(&name(&dir.join("missing.svm")), &auto, 2), None);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
