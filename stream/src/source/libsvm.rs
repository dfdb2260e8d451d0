//! LibSVM / SVMlight rows: `label index:value index:value ... [# comment]`.
//!
//! Indices are 1-based and strictly increasing; zeros may be omitted; the label is any
//! finite number (a class label of any value, a regression target). Blank lines and lines starting
//! with `#` are skipped. Indices past [`MAX_DIM`] and lines longer than the reader's limit
//! are bad rows.

use std::io::BufRead;

use super::lines::{self, BoundedLines};
use super::record::{ReadError, ReadErrorKind, Record};
use super::{RecordReader, parse_finite};
use crate::limits::MAX_DIM;

/// Reads LibSVM rows from a buffered input, one line at a time (constant memory: one
/// line of at most `max_line_bytes`), parsing each where it was read.
pub struct LibSvmReader<R> {
    input: BoundedLines<R>,
    name: String,
    line_number: u64,
    max_line_bytes: usize,
    /// A row was read (good or bad): the format is no longer in question.
    rows_seen: bool,
}

impl<R: BufRead> LibSvmReader<R> {
    /// A reader over `input`, named `name` in error messages, of lines up to
    /// `max_line_bytes` long.
    pub fn new(input: R, name: impl Into<String>, max_line_bytes: usize) -> Self {
        let input = BoundedLines::new(input, max_line_bytes);
        LibSvmReader { input, name: name.into(), line_number: 0, max_line_bytes, rows_seen: false }
    }

    /// The reader of a part of a file after its first (`split`): its rows follow others,
    /// so a first one without pairs is a bad LibSVM row, not a file of another format.
    #[must_use]
    pub fn continuing(mut self) -> Self {
        self.rows_seen = true;
        self
    }

    /// Lines consumed so far (blank and comment lines included); all of them once
    /// [`RecordReader::next_record`] has said there is no more.
    pub fn lines_read(&self) -> u64 {
        self.line_number
    }
}

impl<R: BufRead> RecordReader for LibSvmReader<R> {
    fn next_record(&mut self, record: &mut Record) -> Result<bool, ReadError> {
        loop {
            self.line_number += 1;
            let line = self.line_number;
            let error = |column, kind| ReadError { source_name: self.name.clone(), line, column, kind };
            // A whole line (BoundedLines hands out one at a time), parsed where it lies.
            let bytes = self.input.fill_buf().map_err(|e| error(1, ReadErrorKind::Io(e.to_string())))?;
            if bytes.is_empty() {
                self.line_number -= 1;
                return Ok(false);
            }
            let first = !self.rows_seen;
            let (len, outcome) = (bytes.len(), parse_raw(bytes, record, (line, first), self.max_line_bytes));
            self.input.consume(len);
            match outcome {
                Ok(true) => {
                    self.rows_seen = true;
                    return Ok(true);
                }
                Ok(false) => {}
                Err((column, kind)) => {
                    self.rows_seen = true;
                    return Err(error(column, kind));
                }
            }
        }
    }

    fn name(&self) -> &str {
        &self.name
    }
}

/// Parses the raw line `bytes` (line number `line`; the `first` that could hold a row)
/// into `record`: `Ok(false)` for a blank or comment line, which holds no record.
fn parse_raw(
    bytes: &[u8],
    record: &mut Record,
    (line, first): (u64, bool),
    limit: usize,
) -> Result<bool, (usize, ReadErrorKind)> {
    let text = std::str::from_utf8(bytes).map_err(|_| (1, ReadErrorKind::NotUtf8))?;
    if lines::is_too_long(text) {
        return Err((1, ReadErrorKind::LineTooLong(limit)));
    }
    let content = text.split('#').next().unwrap_or("").trim_end();
    if content.trim().is_empty() {
        return Ok(false);
    }
    record.clear(line);
    // A first row of several tokens and no pair at all is not LibSVM: values separated by
    // spaces (numpy's `savetxt`, R's `write.table`), or a header of names.
    let spaced = first && !content.contains(':') && content.split_ascii_whitespace().nth(1).is_some();
    parse_line(content, record)
        .map(|()| true)
        .map_err(|(column, kind)| (column, if spaced { ReadErrorKind::SpaceSeparated } else { kind }))
}

/// Parses one non-empty line into `record`; on error, the 1-based character column of the
/// offending token and what is wrong.
pub fn parse_line(line: &str, record: &mut Record) -> Result<(), (usize, ReadErrorKind)> {
    // Work in byte offsets; only an error pays for converting one to a character column.
    let column = |byte: usize| line[..byte].chars().count() + 1;
    let mut tokens = tokens_with_offsets(line);
    let (offset, label) = tokens.next().ok_or((1, ReadErrorKind::MissingLabel))?;
    record.label = parse_finite(label).map_err(|k| (column(offset), k))?;
    let mut previous = 0usize;
    for (offset, token) in tokens {
        let Some((index, value)) = token.split_once(':') else {
            return Err((column(offset), ReadErrorKind::NotAPair(token.to_string())));
        };
        let index_number = match index.parse::<usize>() {
            Ok(i) if i > MAX_DIM => return Err((column(offset), ReadErrorKind::IndexTooLarge(i))),
            Ok(i) if i >= 1 => i,
            _ if index == "qid" => return Err((column(offset), ReadErrorKind::QueryId)),
            _ => return Err((column(offset), ReadErrorKind::BadIndex(index.to_string()))),
        };
        if index_number <= previous {
            return Err((column(offset), ReadErrorKind::IndexOrder { previous, index: index_number }));
        }
        let value = parse_finite(value).map_err(|k| (column(offset + index.len() + 1), k))?;
        previous = index_number;
        let index = u32::try_from(index_number - 1)
            .map_err(|_| (column(offset), ReadErrorKind::IndexTooLarge(index_number)))?;
        record.indices.push(index);
        record.values.push(value);
    }
    Ok(())
}

/// Whitespace-separated tokens with their byte offsets in `line`.
fn tokens_with_offsets(line: &str) -> impl Iterator<Item = (usize, &str)> {
    line.split_ascii_whitespace().map(move |token| (token.as_ptr() as usize - line.as_ptr() as usize, token))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(line: &str) -> Result<Record, (usize, ReadErrorKind)> {
        let mut r = Record::default();
        parse_line(line, &mut r).map(|()| r)
    }

    #[test]
    fn reads_labels_and_sparse_features() {
        let r = parse("+1 1:0.5 3:-2 10:1e-3").unwrap();
        assert_eq!(r.label, 1.0);
        assert_eq!(r.indices, [0, 2, 9]);
        assert_eq!(r.values, [0.5, -2.0, 1e-3]);
        assert_eq!(r.dim(), 10);
        assert_eq!(parse("2.5").unwrap().indices, Vec::<u32>::new());
    }

    #[test]
    fn names_the_column_of_each_fault() {
        assert_eq!(parse("1 1:0.5 1:2"), Err((9, ReadErrorKind::IndexOrder { previous: 1, index: 1 })));
        assert_eq!(parse("1 0:1"), Err((3, ReadErrorKind::BadIndex("0".into()))));
        assert_eq!(parse("1 x:1"), Err((3, ReadErrorKind::BadIndex("x".into()))));
        assert_eq!(parse("3 qid:7 1:0.5"), Err((3, ReadErrorKind::QueryId)));
        assert_eq!(parse("1  2:nan"), Err((6, ReadErrorKind::NonFinite("nan".into()))));
        assert_eq!(parse("1 2:abc"), Err((5, ReadErrorKind::NotANumber("abc".into()))));
        assert_eq!(parse("1 2"), Err((3, ReadErrorKind::NotAPair("2".into()))));
        assert_eq!(parse("inf 1:2"), Err((1, ReadErrorKind::NonFinite("inf".into()))));
        assert_eq!(parse("é 1:2"), Err((1, ReadErrorKind::NotANumber("é".into()))));
        assert_eq!(parse("1 é:2 x"), Err((3, ReadErrorKind::BadIndex("é".into()))));
        assert_eq!(parse("1 4000000000:1"), Err((3, ReadErrorKind::IndexTooLarge(4_000_000_000))));
        assert_eq!(parse("1 16777216:1").unwrap().dim(), MAX_DIM);
    }

    /// A first row of several tokens and no pair at all is values (or a header) separated
    /// by spaces, and said so; such a row after the first is a bad LibSVM row.
    #[test]
    fn a_first_row_of_values_separated_by_spaces_is_told() {
        for text in ["1 2\n", "# numpy\n\n1.5e+00 2.0e+00 0.0e+00\n", "a b y\n1 2 0\n"] {
            let mut reader = LibSvmReader::new(text.as_bytes(), "d.txt", 1024);
            let e = reader.next_record(&mut Record::default()).unwrap_err();
            assert_eq!(e.kind, ReadErrorKind::SpaceSeparated, "{text:?}");
            assert!(e.to_string().contains("values separated by spaces"), "{e}");
        }
        let mut reader = LibSvmReader::new("1 1:2\n-1 x\n".as_bytes(), "d.txt", 1024);
        assert!(reader.next_record(&mut Record::default()).unwrap());
        assert_eq!(reader.next_record(&mut Record::default()).unwrap_err().kind, ReadErrorKind::NotAPair("x".into()));
    }

    #[test]
    fn reader_skips_comments_and_counts_lines() {
        let text = "# header comment\n1 1:1\n\n-1 2:3 # trailing\n1 1:x\n";
        let mut reader = LibSvmReader::new(text.as_bytes(), "data.svm", 1024);
        let mut r = Record::default();
        assert!(reader.next_record(&mut r).unwrap());
        assert_eq!((r.line, r.label), (2, 1.0));
        assert!(reader.next_record(&mut r).unwrap());
        assert_eq!((r.line, r.label, r.indices.clone()), (4, -1.0, vec![1]));
        let e = reader.next_record(&mut r).unwrap_err();
        assert_eq!(e.to_string(), "data.svm:5:5: `x` is not a number");
        assert!(!reader.next_record(&mut r).unwrap());
    }

    #[test]
    fn a_long_line_is_a_bad_row_and_reading_goes_on() {
        let text = format!("1 1:1\n-1 {}\n-1 2:3\n", "1:0 ".repeat(100));
        let mut reader = LibSvmReader::new(text.as_bytes(), "d.svm", 64);
        let mut r = Record::default();
        assert!(reader.next_record(&mut r).unwrap());
        let e = reader.next_record(&mut r).unwrap_err();
        assert_eq!(e.to_string(), "d.svm:2:1: the line is longer than the limit of 64 bytes");
        assert!(reader.next_record(&mut r).unwrap());
        assert_eq!((r.line, r.indices.clone()), (3, vec![1]));
    }
}
