//! One labelled sample as the readers deliver it, and the errors they report.

use kestrel_core::Real;
use thiserror::Error;

/// A labelled sample in sparse form: `values[k]` is feature `indices[k]` (0-based,
/// strictly increasing); absent features are 0. Readers reuse one `Record`, so reading
/// allocates only while a row is longer than every row before it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Record {
    /// The label (any finite value: a classifier's classes are the distinct labels) or the
    /// regression target.
    pub label: f64,
    /// Feature indices, 0-based, strictly increasing.
    pub indices: Vec<u32>,
    /// Feature values, finite.
    pub values: Vec<f64>,
    /// 1-based line of the input the record was read from.
    pub line: u64,
    /// The class as a name, when the class column holds names (empty otherwise); the
    /// label is then `NaN` until [`ClassNames::resolve`](crate::class_names::ClassNames::resolve)
    /// gives it the name's.
    pub class_name: String,
    /// The row's sequence number, when the source gives one (an MQTT JSON row's `"seq"`):
    /// `kestrel stream` does not learn a row again whose number its checkpoint covers.
    pub seq: Option<u64>,
    /// The row's weight, when a CSV column gives it (`kestrel train --weight-column`):
    /// finite and at least 0.
    pub weight: Option<f64>,
    /// The values of the CSV columns kept as text (`kestrel predict --keep-column`), each
    /// as a CSV field (quoted when it holds a comma, a quote or a line break) followed by a
    /// comma; empty when none is kept.
    pub kept: String,
}

impl Record {
    /// One past the largest feature index (0 for an empty row).
    pub fn dim(&self) -> usize {
        self.indices.last().map_or(0, |&i| i as usize + 1)
    }

    /// Writes the features, rounded to `T`, into a dense row of `dense.len()` columns; a
    /// zero past them (a LibSVM `7:0`) is the zero the dense row has there.
    ///
    /// # Errors
    /// `IndexOutOfRange` when a nonzero value's index does not fit (nothing is written).
    pub fn write_dense<T: Real>(&self, dense: &mut [T]) -> Result<(), kestrel_core::Error> {
        let within = self.within(dense.len())?;
        dense.fill(T::ZERO);
        for (&j, &v) in self.indices.iter().zip(&self.values).take(within) {
            if let Some(slot) = dense.get_mut(j as usize) {
                *slot = T::from_f64(v);
            }
        }
        Ok(())
    }

    /// How many of the entries lie within the first `dim` features (the indices increase,
    /// so they come first).
    ///
    /// # Errors
    /// `IndexOutOfRange` for a nonzero value past them ([`first_past`](Self::first_past)).
    pub fn within(&self, dim: usize) -> Result<usize, kestrel_core::Error> {
        match self.split_at(dim) {
            (_, Some(index)) => Err(kestrel_core::Error::IndexOutOfRange { index, len: dim }),
            (within, None) => Ok(within),
        }
    }

    /// The first feature past `dim` that holds a nonzero value (0-based), if any.
    pub fn first_past(&self, dim: usize) -> Option<usize> {
        self.split_at(dim).1
    }

    /// The entries within the first `dim` features, and the first nonzero one past them: a
    /// binary search, then a look at the entries past (none, in a row of the model's width).
    fn split_at(&self, dim: usize) -> (usize, Option<usize>) {
        let within = self.indices.partition_point(|&j| (j as usize) < dim);
        let past = self.indices.iter().zip(&self.values).skip(within).find(|&(_, &v)| v != 0.0);
        (within, past.map(|(&j, _)| j as usize))
    }

    pub(crate) fn clear(&mut self, line: u64) {
        self.label = 0.0;
        self.indices.clear();
        self.values.clear();
        self.class_name.clear();
        self.seq = None;
        self.weight = None;
        self.kept.clear();
        self.line = line;
    }
}

/// A row that could not be read, with where it is.
#[derive(Clone, Debug, Error, PartialEq)]
#[error("{source_name}:{line}:{column}: {kind}")]
pub struct ReadError {
    /// The file name, `<stdin>` or the serial device.
    pub source_name: String,
    /// 1-based line.
    pub line: u64,
    /// 1-based character column where the offending token starts.
    pub column: usize,
    /// What is wrong.
    pub kind: ReadErrorKind,
}

/// What is wrong with a row.
#[derive(Debug, Error, Clone, PartialEq)]
pub enum ReadErrorKind {
    /// A token that is not a number.
    #[error("`{0}` is not a number")]
    NotANumber(String),
    /// A feature's value that is not a number, in the CSV column named `column`.
    #[error(
        "`{text}` is not a number (column `{column}`; a column that is not a feature can be left out: --skip-column {}; --categorical {} reads it as a column of categories: train, tune, stream, cluster, npkl, transform)",
        crate::shell::word(.column), crate::shell::word(.column)
    )]
    FeatureNotANumber {
        /// The value.
        text: String,
        /// The column's name.
        column: String,
    },
    /// A feature's value that is a number written with `what` (a thousands separator, a
    /// currency or percent sign), as a spreadsheet's formatted cells are exported.
    #[error(
        "`{text}` is a number written with {what} (column `{column}`): write numbers as digits alone, as a \
         spreadsheet's cells of the General format are exported"
    )]
    FormattedNumber {
        /// The value.
        text: String,
        /// The column's name.
        column: String,
        /// What is written with the digits: `a thousands separator`, `a currency sign`, `a percent sign`.
        what: &'static str,
    },
    /// A feature's value that is a date or a time of day (a log's timestamp), in the CSV
    /// column named `column`.
    #[error(
        "`{text}` is a date or a time, not a number (column `{column}`): --skip-column {} leaves it out (a \
         timestamp is seldom a feature), or write it as a number first (pandas: \
         pd.to_datetime(df[{:?}]).astype(\"int64\") // 10**9 is seconds since 1970; .dt.hour the hour of the day)",
        crate::shell::word(.column), .column
    )]
    DateOrTime {
        /// The value.
        text: String,
        /// The column's name.
        column: String,
    },
    /// A feature's value with a decimal comma (`21,5`) in a file whose fields are not
    /// separated by semicolons, in the CSV column named `column`.
    #[error(
        "`{text}` is not a number here (column `{column}`): a decimal comma is read where fields are separated by semicolons"
    )]
    DecimalComma {
        /// The value.
        text: String,
        /// The column's name.
        column: String,
    },
    /// An empty field where a feature's value belongs, in the CSV column named `column`.
    #[error("no value in column `{column}` (an empty field; --on-error skip leaves such rows out)")]
    MissingValue {
        /// The column's name.
        column: String,
    },
    /// A word that marks a missing value where a feature's value belongs (`NA`, `NULL`,
    /// `nan`, `?`: [`MISSING_MARKERS`](super::MISSING_MARKERS)), in the CSV column
    /// named `column`.
    #[error("`{text}` marks a missing value in column `{column}` (--on-error skip leaves such rows out)")]
    MissingMarker {
        /// The word.
        text: String,
        /// The column's name.
        column: String,
    },
    /// A label that is not a number where the learner needs one, in the column `column`.
    #[error(
        "`{text}` is not a number (column `{column}`, the label: a number here, the target of a regression or a class of a model whose classes are numbers)"
    )]
    LabelNotANumber {
        /// The value.
        text: String,
        /// The column's name.
        column: String,
    },
    /// NaN or an infinity.
    #[error("`{0}` is not finite")]
    NonFinite(String),
    /// A row weight that is not a finite number of at least 0, in the column `column`.
    #[error("`{text}` is not a row weight (column `{column}`, the weights: a finite number, 0 or more)")]
    Weight {
        /// The value.
        text: String,
        /// The column's name.
        column: String,
    },
    /// A LibSVM feature without `index:value` form.
    #[error("`{0}` is not an index:value pair")]
    NotAPair(String),
    /// A line of values (or names) separated by spaces, read as LibSVM for want of a comma,
    /// tab or semicolon, which has no `index:value` pair.
    #[error(
        "values separated by spaces, which are read as neither format: a LibSVM row is `label index:value …`, and a \
         CSV's fields are separated by commas, tabs or semicolons under a header of column names (numpy: \
         savetxt(path, rows, delimiter=\",\", header=\"a,b,y\", comments=\"\"))"
    )]
    SpaceSeparated,
    /// A CSV row that is the header again, as files joined one after another bring it.
    #[error(
        "the header again ({0}): files joined one after another each bring theirs (cat a.csv b.csv); --on-error \
         skip leaves it out, or join them without it (tail -n +2 b.csv >> a.csv)"
    )]
    RepeatedHeader(String),
    /// A CSV row that is a header of the same names in another order: a file of another
    /// column order joined after the first. The rows after it are read by its names.
    #[error(
        "a header again, its columns in another order ({0}), as files joined one after another bring theirs: \
         --on-error skip leaves it out and reads the rows after it by its names"
    )]
    ReorderedHeader(String),
    /// A LibSVM row's `qid:` token: SVMlight's ranking format, its query id.
    #[error(
        "`qid:` is a query id (SVMlight's ranking format): kestrel learns classes and values, not rankings; strip \
         the ids to learn the labels as they are (sed -E 's/ qid:[^ ]+//' FILE)"
    )]
    QueryId,
    /// A feature index that is not a positive integer.
    #[error("feature index `{0}` is not a positive integer (indices are 1-based)")]
    BadIndex(String),
    /// Indices must increase strictly along a row.
    #[error("feature index {index} follows {previous}: indices must increase")]
    IndexOrder {
        /// The previous index on the row (1-based).
        previous: usize,
        /// This index (1-based).
        index: usize,
    },
    /// A CSV row with another number of fields than the header.
    #[error("{got} fields where the header has {expected}")]
    FieldCount {
        /// Fields in the header.
        expected: usize,
        /// Fields in the row.
        got: usize,
    },
    /// A row without a label.
    #[error("the row has no label")]
    MissingLabel,
    /// A word that marks a missing value (`NA`, `?`: [`MISSING_MARKERS`](super::MISSING_MARKERS))
    /// where a label of numbers belongs: a missing label, not a class name.
    #[error("`{0}` marks a missing label (--on-error skip leaves such rows out)")]
    MissingLabelMarker(String),
    /// The CSV header is missing or lacks the label column.
    #[error("{0}")]
    Header(String),
    /// The input could not be read.
    #[error("read failed: {0}")]
    Io(String),
    /// A line that is not UTF-8 text.
    #[error(
        "the line is not UTF-8 text (a file in another encoding, such as Windows-1252 or Latin-1: convert it, e.g. \
         iconv -f WINDOWS-1252 -t UTF-8)"
    )]
    NotUtf8,
    /// A line longer than the reader's limit (it is skipped whole).
    #[error("the line is longer than the limit of {0} bytes")]
    LineTooLong(usize),
    /// A finite value too large for the scalar the learner runs in.
    #[error("`{value:e}` is too large for {scalar}")]
    Overflow {
        /// The value.
        value: f64,
        /// `f32` (or `f64`).
        scalar: &'static str,
    },
    /// A class name longer than the limit.
    #[error("the class name is longer than the limit of {0} bytes")]
    ClassNameTooLong(usize),
    /// A new class name when the names are full.
    #[error("a new class name past the limit of {0} classes")]
    TooManyClassNames(usize),
    /// A category longer than the limit, in the CSV column named `column`.
    #[error("the category is longer than the limit of {limit} bytes (column `{column}`)")]
    CategoryTooLong {
        /// The column's name.
        column: String,
        /// The limit, in bytes.
        limit: usize,
    },
    /// A category its column was not given (`--categorical NAME=A,B,…`).
    #[error("`{category}` is not one of the categories given for column `{column}` (--categorical)")]
    UnknownCategory {
        /// The column's name.
        column: String,
        /// The category (its first 40 characters).
        category: String,
    },
    /// A new category when its column's categories, or the features, are at their limit.
    #[error("a new category in column `{column}` past the limit of {limit}")]
    TooManyCategories {
        /// The column's name.
        column: String,
        /// The limit reached, with its unit.
        limit: String,
    },
    /// A name where the class column held numbers.
    #[error(
        "`{0}` is not a number (the class column's first value was a number: a column holds numbers or names throughout)"
    )]
    NameAmongNumbers(String),
    /// A message larger than the limit (`kestrel stream --max-message-bytes`).
    #[error("the message is larger than the limit of {0} bytes")]
    MessageTooLarge(usize),
    /// A payload that is not valid (not UTF-8, not the JSON expected).
    #[error("{0}")]
    Malformed(String),
    /// A feature index past [`MAX_DIM`](crate::limits::MAX_DIM).
    #[error("feature index {0} is past the limit of {max} features", max = crate::limits::MAX_DIM)]
    IndexTooLarge(usize),
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_zero_past_the_dense_row_is_read_and_a_nonzero_one_is_named() {
        let record = |values: Vec<f64>| Record { indices: vec![0, 2, 6], values, ..Record::default() };
        let mut dense = [9.0f32; 3];
        let zero_past = record(vec![1.5, -2.0, 0.0]);
        assert_eq!(zero_past.write_dense(&mut dense), Ok(()));
        assert_eq!(dense, [1.5, 0.0, -2.0]);
        assert_eq!(zero_past.first_past(3), None);
        let nonzero_past = record(vec![1.5, -2.0, 0.25]);
        assert_eq!(
            nonzero_past.write_dense(&mut dense),
            Err(kestrel_core::Error::IndexOutOfRange { index: 6, len: 3 })
        );
        assert_eq!(nonzero_past.first_past(3), Some(6));
        assert_eq!(nonzero_past.first_past(2), Some(2));
        assert_eq!(nonzero_past.first_past(7), None);
    }
}
