//! CSV with a header (`CsvReader::with_header`, label last, named `y` or none; with bit 2
//! of the mode, the first feature column one-hot encoded, `CsvReader::categorical`, its
//! categories learned, or with bit 3 given: `a`, `0`, `1`) and,
//! for serial streams, without one (`CsvReader::without_header`); with bit 6, the file as
//! a gzip stream (`gzip::text`: decoded when it starts with gzip's magic, its text capped at
//! [`GZIP_TEXT`] bytes so that a small input expanding to much text stays fast). The first
//! byte picks the mode, the rest is the file. Checks as for LibSVM: no panic, valid
//! records, 1-based positions, the reader always reaches the end (a corrupt or cut-off
//! gzip stream too); with categories, a name for every feature.

#![no_main]

use std::io::{Cursor, Read};

use kestrel_stream::source::{Categorical, CsvReader, NO_LABEL, RecordReader, csv_row_delimiter, gzip};
use libfuzzer_sys::fuzz_target;

mod common;

/// The most decoded text a gzip input gives.
const GZIP_TEXT: u64 = 1 << 16;

fuzz_target!(|data: &[u8]| {
    let Some((&mode, text)) = data.split_first() else { return };
    if mode & 0xC0 == 0x40 {
        gzip_file(mode, text);
    } else if mode & 0x80 == 0 {
        let label_column = match mode & 3 {
            1 => Some("y"),
            2 => Some(NO_LABEL),
            _ => None,
        };
        match CsvReader::with_header(text, "fuzz.csv", label_column, common::MAX_LINE_BYTES) {
            Ok(reader) if mode & 4 != 0 => {
                let first: Vec<Categorical> = reader
                    .feature_names()
                    .unwrap_or_default()
                    .into_iter()
                    .take(1)
                    .map(|column| {
                        let given = mode & 8 != 0;
                        Categorical { column, categories: given.then(|| vec!["a".into(), "0".into(), "1".into()]) }
                    })
                    .collect();
                match reader.categorical(&first) {
                    Ok(mut reader) => {
                        common::drain(&mut reader, text.len(), label_column == Some(NO_LABEL));
                        let names = reader.feature_names().expect("a header names the features");
                        assert_eq!(reader.dim_hint(), Some(names.len()), "a name for every feature");
                    }
                    Err(e) => common::check_error(&e),
                }
            }
            Ok(mut reader) => {
                let dim = reader.dim_hint().expect("a header states the dimension");
                assert!(dim >= 1, "a header has at least one feature");
                common::drain(&mut reader, text.len(), label_column == Some(NO_LABEL));
            }
            Err(e) => common::check_error(&e),
        }
    } else {
        let fields = usize::from(mode & 7) + 1;
        let delimiter = csv_row_delimiter(text);
        let mut reader = CsvReader::without_header(text, "serial", fields, delimiter, common::MAX_LINE_BYTES);
        common::drain(&mut reader, text.len(), false);
    }
});

/// The file as `kestrel train` opens a `.csv.gz`: through `gzip::text`, with a header.
fn gzip_file(mode: u8, bytes: &[u8]) {
    let label_column = if mode & 1 == 0 { None } else { Some(NO_LABEL) };
    let text = gzip::text(Cursor::new(bytes.to_vec())).expect("reading from memory").take(GZIP_TEXT);
    match CsvReader::with_header(text, "fuzz.csv.gz", label_column, common::MAX_LINE_BYTES) {
        Ok(mut reader) => common::drain(&mut reader, GZIP_TEXT as usize, label_column == Some(NO_LABEL)),
        Err(e) => common::check_error(&e),
    }
}
