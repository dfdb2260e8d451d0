//! LibSVM / SVMlight: `parse_libsvm_line` on every line of the input, then
//! `LibSvmReader` over the raw bytes (invalid UTF-8, comments, blank lines, CR/LF).
//! Checks: no panic, accepted records satisfy the `Record` invariants, error positions
//! are 1-based and inside the line, the reader always reaches the end.

#![no_main]

use kestrel_stream::source::{LibSvmReader, Record, detect, parse_libsvm_line};
use libfuzzer_sys::fuzz_target;

mod common;

fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data) {
        let _ = detect(text.lines().next().unwrap_or(""));
        let mut record = Record::default();
        for line in text.lines() {
            record.indices.clear();
            record.values.clear();
            record.line = 1;
            match parse_libsvm_line(line, &mut record) {
                Ok(()) => common::check_record(&record, false),
                Err((column, kind)) => {
                    assert!(column >= 1 && column <= line.chars().count() + 1, "column {column} outside {line:?}");
                    let _ = kind.to_string();
                }
            }
        }
    }
    let mut reader = LibSvmReader::new(data, "fuzz.svm", common::MAX_LINE_BYTES);
    common::drain(&mut reader, data.len(), false);
});
