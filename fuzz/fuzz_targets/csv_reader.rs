//! CSV with a header (`CsvReader::with_header`, label last, named `y` or none; with bit 2
//! of the mode, the first feature column one-hot encoded, `CsvReader::categorical`, its
//! categories learned, or with bit 3 given: `a`, `0`, `1`) and,
//! for serial streams, without one (`CsvReader::without_header`). The first byte picks the
//! mode, the rest is the file. Checks as for LibSVM: no panic, valid records, 1-based
//! positions, the reader always reaches the end; with categories, a name for every feature.

#![no_main]

use kestrel_stream::source::{Categorical, CsvReader, NO_LABEL, RecordReader, csv_row_delimiter};
use libfuzzer_sys::fuzz_target;

mod common;

fuzz_target!(|data: &[u8]| {
    let Some((&mode, text)) = data.split_first() else { return };
    if mode & 0x80 == 0 {
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
