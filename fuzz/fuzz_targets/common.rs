//! Helpers shared by the fuzz targets: what every record a reader yields must satisfy (a
//! finite label, or a class name that the names give one), a
//! bounded drain loop that also catches a reader that stops making progress, the reader
//! the CLI opens on a data file, what a trained model's predictions on that file must
//! satisfy, and the frames of a checkpoint and a model file.

#![allow(dead_code)]

use std::io::Cursor;

use kestrel_core::{Real, frame};
use kestrel_stream::checkpoint::FORMAT;
use kestrel_stream::class_names::ClassNames;
use kestrel_stream::model::Predictor;
use kestrel_stream::source::{self, Format, Options, ReadError, Record, RecordReader};

/// The longest line the readers take in the targets: short, so that the fuzzer reaches
/// the line cap.
pub const MAX_LINE_BYTES: usize = 1024;

/// Invariants of a record a reader accepted (stream/src/source/record.rs).
/// With `unlabelled`, a row may have no label (`NaN`, a CSV read with `--label-column none`).
pub fn check_record(r: &Record, unlabelled: bool) {
    if r.class_name.is_empty() {
        assert!(r.label.is_finite() || unlabelled && r.label.is_nan(), "non-finite label {}", r.label);
    } else {
        // A class name: no label until the names give it one (the first name: 0).
        assert!(r.label.is_nan(), "a named class with the label {}", r.label);
        let mut named = r.clone();
        if ClassNames::new().resolve(&mut named).is_ok() {
            assert_eq!(named.label, 0.0);
        }
    }
    assert_eq!(r.indices.len(), r.values.len(), "indices and values differ in length");
    assert!(r.indices.windows(2).all(|w| w[0] < w[1]), "indices not strictly increasing: {:?}", r.indices);
    assert!(r.values.iter().all(|v| v.is_finite()), "non-finite value in {:?}", r.values);
    assert_eq!(r.dim(), r.indices.last().map_or(0, |&i| i as usize + 1));
    assert!(r.line >= 1, "line numbers are 1-based");
    // Densifying into a small row must fail cleanly, never panic; a zero past it (a
    // LibSVM `22:0`) is the zero the row has there.
    let mut dense = [0.0f64; 16];
    let fits = r.indices.iter().zip(&r.values).all(|(&i, &v)| v == 0.0 || (i as usize) < dense.len());
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
pub fn drain(reader: &mut dyn RecordReader, len: usize, unlabelled: bool) {
    let mut record = Record::default();
    let mut last_line = 0u64;
    for _ in 0..len + 2 {
        match reader.next_record(&mut record) {
            Ok(false) => return,
            Ok(true) => {
                check_record(&record, unlabelled);
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
/// or `libsvm` (`source::from_reader`, what `source::open` does with a file). `None` where
/// the CLI fails to open the input (a bad CSV header).
pub fn open_bytes(bytes: &[u8], format: Format, label_column: Option<&str>) -> Option<Box<dyn RecordReader + Send>> {
    open_with(bytes, Options { format, label_column: label_column.map(str::to_string), ..Options::default() })
}

/// [`open_bytes`] with `options` (`--categorical`, …; the line limit is the fuzzers').
pub fn open_with(bytes: &[u8], options: Options) -> Option<Box<dyn RecordReader + Send>> {
    let name = if options.format == Format::LibSvm { "fuzz.svm" } else { "fuzz.csv" };
    let options = Options { max_line_bytes: MAX_LINE_BYTES, ..options };
    source::from_reader(Cursor::new(bytes.to_vec()), name, &options).ok()
}

/// `payload` in a well-formed checkpoint frame (the core's frame with the checkpoint's
/// magic and version, and its CRC-32), so that a fuzzed payload reaches the postcard decoder.
pub fn checkpoint_frame(payload: &[u8]) -> Vec<u8> {
    let mut bytes = vec![0u8; frame::framed_len(payload.len())];
    frame::payload_mut(&mut bytes).copy_from_slice(payload);
    FORMAT.seal([0, 0], payload.len(), &mut bytes).expect("a buffer of the frame's length");
    bytes
}

/// `payload` in a well-formed model envelope of the tags `kind` and `scalar` (the core's
/// frame with the model files' magic and version, and its CRC-32), so that a fuzzed
/// payload reaches the model decoders, which a random checksum would almost always keep
/// it from. `calibrated` picks the version: 5, whose payload has the calibration section's
/// length field, or 4 without it.
pub fn model_envelope(kind: u8, scalar: u8, calibrated: bool, payload: &[u8]) -> Vec<u8> {
    let mut bytes = vec![0u8; frame::framed_len(payload.len())];
    frame::payload_mut(&mut bytes).copy_from_slice(payload);
    let version = kestrel_core::model::FORMAT_VERSION - u16::from(!calibrated);
    frame::Format::new(kestrel_core::model::MAGIC, version)
        .seal([kind, scalar], payload.len(), &mut bytes)
        .expect("a buffer of the frame's length");
    bytes
}

/// `kestrel predict --on-error skip` of `model` (trained in scalar `T` on the rows of
/// `file`, whose labels were `seen`) on every record of `file`: each prediction is finite,
/// a classifier's a label seen in training; a refused row has features past the model's
/// dimension, values the scalar does not hold, or a kernel or decision value that
/// overflows (`NonFinite`); and the reader ends.
pub fn check_predictions<T: Real>(
    model: &mut dyn Predictor,
    file: &[u8],
    format: Format,
    label_column: Option<&str>,
    seen: &[f64],
) {
    let dim = model.info().dim;
    let mut reader = open_bytes(file, format, label_column).expect("opened once already");
    let mut record = Record::default();
    for _ in 0..file.len() + 2 {
        match reader.next_record(&mut record) {
            Ok(false) => return,
            Ok(true) => match model.predict(&record) {
                Ok(value) => {
                    assert!(value.is_finite(), "line {}: prediction {value}", record.line);
                    if model.is_classifier() {
                        assert!(seen.contains(&value), "line {}: {value} is no training label", record.line);
                    }
                }
                Err(e) => {
                    let held = record.values.iter().all(|&v| T::from_f64(v).is_finite());
                    let overflow = e == kestrel_core::Error::NonFinite;
                    assert!(
                        record.dim() > dim || !held || overflow,
                        "line {}: {e} for a row the model can read",
                        record.line
                    );
                }
            },
            Err(_) => {}
        }
    }
    panic!("the reader did not end");
}
