//! Helpers shared by the fuzz targets: what every record a reader yields must satisfy, a
//! bounded drain loop that also catches a reader that stops making progress, the reader
//! the CLI opens on a data file, and the frame of a checkpoint file.

#![allow(dead_code)]

use std::io::{BufRead, Cursor, Read};

use crc::{CRC_32_ISO_HDLC, Crc};
use kestrel_stream::checkpoint::{FORMAT_VERSION, MAGIC};
use kestrel_stream::source::{CsvReader, Format, LibSvmReader, ReadError, Record, RecordReader};

/// Invariants of a record a reader accepted (stream/src/source/record.rs).
pub fn check_record(r: &Record) {
    assert!(r.label.is_finite(), "non-finite label {}", r.label);
    assert_eq!(r.indices.len(), r.values.len(), "indices and values differ in length");
    assert!(r.indices.windows(2).all(|w| w[0] < w[1]), "indices not strictly increasing: {:?}", r.indices);
    assert!(r.values.iter().all(|v| v.is_finite()), "non-finite value in {:?}", r.values);
    assert_eq!(r.dim(), r.indices.last().map_or(0, |&i| i as usize + 1));
    assert!(r.line >= 1, "line numbers are 1-based");
    // Densifying into a small row must fail cleanly, never panic.
    let mut dense = [0.0f64; 16];
    let fits = r.indices.iter().all(|&i| (i as usize) < dense.len());
    assert_eq!(r.write_dense(&mut dense).is_ok(), fits);
}

/// Invariants of a reported bad row.
pub fn check_error(e: &ReadError) {
    assert!(e.line >= 1 && e.column >= 1, "position {}:{} is not 1-based", e.line, e.column);
    let _ = e.to_string();
}

/// Reads until the end; every call must consume input, so `len` bytes give at most
/// `len + 1` records and errors before the end (the CLI's `--on-error skip` would spin
/// forever otherwise). Line numbers never go backwards.
pub fn drain(reader: &mut dyn RecordReader, len: usize) {
    let mut record = Record::default();
    let mut last_line = 0u64;
    for _ in 0..len + 2 {
        match reader.next_record(&mut record) {
            Ok(false) => return,
            Ok(true) => {
                check_record(&record);
                assert!(record.line >= last_line, "line {} after line {last_line}", record.line);
                last_line = record.line;
            }
            Err(e) => {
                check_error(&e);
                assert!(e.line >= last_line, "error on line {} after line {last_line}", e.line);
                last_line = e.line;
            }
        }
    }
    panic!("{}: no end after {} calls on {len} bytes: the reader makes no progress", reader.name(), len + 2);
}

/// The reader `kestrel train`/`predict` build for a file of these bytes with `--format csv`
/// or `libsvm` (`source::open` → `from_buffered`, which is private): the first line is read
/// as UTF-8 and replayed in front of the rest. `None` where the CLI fails to open the input
/// (the first line is not UTF-8, a bad CSV header).
pub fn open_bytes<'a>(
    bytes: &'a [u8],
    format: Format,
    label_column: Option<&str>,
) -> Option<Box<dyn RecordReader + 'a>> {
    let mut input = bytes;
    let mut first = String::new();
    input.read_line(&mut first).ok()?;
    let replay = Cursor::new(first.into_bytes()).chain(input);
    Some(match format {
        Format::Csv => Box::new(CsvReader::with_header(replay, "fuzz.csv", label_column).ok()?),
        Format::LibSvm | Format::Auto => Box::new(LibSvmReader::new(replay, "fuzz.svm", 1)),
    })
}

/// `payload` in a well-formed checkpoint frame: magic, version, length, CRC-32
/// (stream/src/checkpoint.rs), so that a fuzzed payload reaches the postcard decoder.
pub fn checkpoint_frame(payload: &[u8]) -> Vec<u8> {
    let mut bytes = Vec::with_capacity(payload.len() + 18);
    bytes.extend_from_slice(&MAGIC);
    bytes.extend_from_slice(&FORMAT_VERSION.to_le_bytes());
    bytes.extend_from_slice(&(payload.len() as u64).to_le_bytes());
    bytes.extend_from_slice(payload);
    let crc = Crc::<u32>::new(&CRC_32_ISO_HDLC).checksum(&bytes);
    bytes.extend_from_slice(&crc.to_le_bytes());
    bytes
}

/// `true` when `KESTREL_FUZZ_UNBOUNDED` is set: the targets then drop the bounds they put on
/// their inputs to step around bugs already recorded in fuzz/README.md (to check the fixes).
pub fn unbounded() -> bool {
    static UNBOUNDED: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *UNBOUNDED.get_or_init(|| std::env::var_os("KESTREL_FUZZ_UNBOUNDED").is_some())
}
