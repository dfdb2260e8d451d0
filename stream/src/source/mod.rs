//! Sources of labelled samples: files, standard input and serial ports, in CSV or LibSVM
//! format, read one row at a time in constant memory.
//!
//! An input is named as on the command line: a path, `-` for standard input, or
//! `serial:DEVICE[@BAUD]` (default 115200 baud); with the `mqtt` feature,
//! [`crate::mqtt`] reads `mqtt://` subscriptions. The format is given or detected: by the
//! file extension (`.csv`; `.libsvm`, `.svm`, `.svmlight`; each also with `.gz`), else from
//! the first line (a token with `:` after the label means LibSVM, a comma means CSV). A
//! gzip-compressed file or standard input is read through its decoder ([`gzip`]); a file of
//! another kind (a model, an archive, a workbook, a binary array) is named ([`not_text`]).
//!
//! Memory is bounded whatever the input sends: a line is read whole only up to
//! [`Options::max_line_bytes`] (a longer one is a bad row, see [`lines`]), feature indices
//! and CSV headers are capped at [`MAX_DIM`](crate::limits::MAX_DIM).
//!
//! # Examples
//! ```
//! use kestrel_stream::source::{self, Options, Record};
//! # let dir = std::env::temp_dir().join(format!("kestrel-doc-source-{}", std::process::id()));
//! # std::fs::create_dir_all(&dir)?;
//! let path = dir.join("data.csv");
//! std::fs::write(&path, "temperature,humidity,rain\n21.5,0.40,0\n18.0,0.85,1\n")?;
//! let mut reader = source::open(path.to_str().unwrap(), &Options::default())?;
//! let mut record = Record::default();
//! let mut labels = Vec::new();
//! while reader.next_record(&mut record)? {
//!     labels.push(record.label);
//! }
//! assert_eq!((labels, reader.dim_hint()), (vec![0.0, 1.0], Some(2)));
//! # std::fs::remove_dir_all(&dir)?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod background;
mod csv;
pub mod gzip;
pub mod handoff;
mod libsvm;
pub mod lines;
pub mod not_text;
pub mod one_hot;
mod record;
pub mod split;

use std::fs::File;
use std::io::{self, BufRead, BufReader, Cursor, Read};
use std::time::Duration;

use crate::limits::DEFAULT_MAX_LINE_BYTES;

pub use self::background::{Background, Next, Records};
#[cfg(feature = "mqtt")]
pub(crate) use self::csv::in_column;
pub use self::csv::{
    CsvReader, LabelColumn, MISSING_MARKERS, NO_LABEL, csv_field, feature_value, number_formatting,
    row_delimiter as csv_row_delimiter,
};
pub use self::libsvm::{LibSvmReader, parse_line as parse_libsvm_line};
pub use self::one_hot::Categorical;
pub use self::record::{ReadError, ReadErrorKind, Record};

/// Something that yields records one at a time.
pub trait RecordReader {
    /// Reads the next record into `record`; `Ok(false)` at the end of the input.
    ///
    /// # Errors
    /// A [`ReadError`] naming the line and column of a bad row; reading may continue after
    /// it with the next row.
    fn next_record(&mut self, record: &mut Record) -> Result<bool, ReadError>;
    /// The name used in error messages.
    fn name(&self) -> &str;
    /// The number of features, when the format states it (a CSV header).
    fn dim_hint(&self) -> Option<usize> {
        None
    }
    /// The features' names in order, when the format states them (a CSV header).
    fn feature_names(&self) -> Option<Vec<String>> {
        None
    }
    /// How many of the last features are indicators of a column of categories, one-hot
    /// encoded ([`one_hot`]); none for a format without such columns.
    fn indicators(&self) -> usize {
        0
    }
    /// Gives the features in the order `names` lists them, read by their names (a
    /// model's); nothing to do for a format that does not name them.
    ///
    /// # Errors
    /// A header that lacks one of `names` or has a feature column that is not one of them.
    fn order_features_as(&mut self, _names: &[String]) -> Result<(), ReadError> {
        Ok(())
    }
    /// What the caller should tell once the rows are read, if anything: rows read for a
    /// model that held a category it did not learn ([`one_hot`]).
    fn note(&self) -> Option<String> {
        None
    }
    /// What the caller should tell about the input's header as it opens it, if anything: a
    /// first column of row names left out, or a header of numbers (a CSV without a header
    /// loses its first row to it, which nothing else shows).
    fn header_note(&self) -> Option<String> {
        None
    }
}

/// The format of an input.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Format {
    /// Detect from the extension or the first line.
    #[default]
    Auto,
    /// CSV with a header row (none on a serial port).
    Csv,
    /// LibSVM / SVMlight sparse rows.
    LibSvm,
}

/// Why an input could not be opened.
#[derive(Debug, thiserror::Error)]
pub enum OpenError {
    /// A file or standard input failed.
    #[error("{name}: {error}")]
    Io {
        /// The input's name.
        name: String,
        /// The failure.
        error: io::Error,
    },
    /// A serial port could not be opened or the spec is malformed.
    #[error("{name}: {message}")]
    Serial {
        /// The spec as given.
        name: String,
        /// What failed.
        message: String,
    },
    /// An MQTT broker refused the connection, or did not answer.
    #[error("{name}: {message}")]
    Mqtt {
        /// The broker's URL, without a password.
        name: String,
        /// What failed.
        message: String,
    },
    /// The first row could not be read (e.g. a CSV header).
    #[error(transparent)]
    Read(#[from] ReadError),
}

/// How to read an input.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Options {
    /// The format, or [`Format::Auto`] to detect it.
    pub format: Format,
    /// The CSV column holding the label (default: the last; [`NO_LABEL`]: none).
    pub label_column: Option<String>,
    /// The longest line read; a longer one is a bad row.
    pub max_line_bytes: usize,
    /// What a CSV label column holds (by default its first row tells).
    pub labels: LabelColumn,
    /// A row whose label is missing is read with the label `NaN` rather than as a bad row
    /// ([`CsvReader::with_unlabelled_rows`]): rows for `kestrel stream` to predict only.
    pub unlabelled_rows: bool,
    /// CSV columns left out, by their header names (a timestamp, an identifier).
    pub skip_columns: Vec<String>,
    /// CSV columns whose values each record keeps as text ([`Record::kept`]), by their
    /// header names; not features unless a model names them ([`CsvReader::keeping`]).
    pub keep_columns: Vec<String>,
    /// The CSV column holding each row's weight, by its header name (not a feature).
    pub weight_column: Option<String>,
    /// CSV columns of categories, one-hot encoded ([`one_hot`]).
    pub categorical: Vec<Categorical>,
    /// The features of the model the rows are for, when they need no label (`kestrel
    /// predict`): without a label column named, a last CSV column that is one of them is
    /// that feature and the rows have no label ([`CsvReader::unlabelled_if_a_feature`]).
    pub model_features: Vec<String>,
}

impl Options {
    /// What these options read by a CSV header's column names, as the message for an input
    /// without one (`--skip-column`, `--weight-column`, `--categorical`); `None` when
    /// nothing.
    pub fn header_columns(&self) -> Option<&'static str> {
        if !self.skip_columns.is_empty() {
            Some("columns are skipped by their names in a CSV header: this input has none")
        } else if self.weight_column.is_some() {
            Some("a weight column is read by its name in a CSV header: this input has none")
        } else if !self.categorical.is_empty() {
            Some("columns of categories are named in a CSV header: this input has none")
        } else if !self.keep_columns.is_empty() {
            Some("columns are kept by their names in a CSV header: this input has none")
        } else {
            None
        }
    }
}

impl Default for Options {
    fn default() -> Self {
        Options {
            format: Format::Auto,
            label_column: None,
            max_line_bytes: DEFAULT_MAX_LINE_BYTES,
            labels: LabelColumn::Detect,
            unlabelled_rows: false,
            skip_columns: Vec::new(),
            keep_columns: Vec::new(),
            weight_column: None,
            categorical: Vec::new(),
            model_features: Vec::new(),
        }
    }
}

/// Opens `input` (a path, `-`, or `serial:DEVICE[@BAUD]`).
///
/// # Errors
/// [`OpenError`] when the input cannot be opened or its header read.
pub fn open(input: &str, options: &Options) -> Result<Box<dyn RecordReader + Send>, OpenError> {
    if input == "-" {
        let stdin = gzip::text(BufReader::new(io::stdin()))
            .map_err(|error| OpenError::Io { name: "<stdin>".to_string(), error })?;
        return from_buffered(stdin, "<stdin>", options, true);
    }
    if let Some(spec) = input.strip_prefix("serial:") {
        return open_serial(input, spec, options);
    }
    let io_error = |error| OpenError::Io { name: input.to_string(), error };
    let file = gzip::text(BufReader::new(File::open(input).map_err(io_error)?)).map_err(io_error)?;
    let format = match options.format {
        Format::Auto => format_from_extension(input),
        given => given,
    };
    from_buffered(file, input, &Options { format, ..options.clone() }, true)
}

fn format_from_extension(path: &str) -> Format {
    let extension = gzip::without_gz_suffix(path).rsplit_once('.').map(|(_, e)| e.to_ascii_lowercase());
    match extension.as_deref() {
        Some("csv" | "tsv") => Format::Csv,
        Some("libsvm" | "svm" | "svmlight") => Format::LibSvm,
        _ => Format::Auto,
    }
}

/// Reads records from `input` (bytes in memory, a socket, …), named `name` in messages, as
/// [`open`] reads a file: in the format given, or detected from the first line; CSV with a
/// header.
///
/// # Errors
/// [`OpenError`] when the first line cannot be read or is not a valid CSV header.
pub fn from_reader<R: BufRead + Send + 'static>(
    input: R,
    name: &str,
    options: &Options,
) -> Result<Box<dyn RecordReader + Send>, OpenError> {
    from_buffered(input, name, options, true)
}

/// Builds the reader for a buffered input; detection reads the first line (bounded, as
/// every line) and replays it.
fn from_buffered<R: BufRead + Send + 'static>(
    input: R,
    name: &str,
    options: &Options,
    has_header: bool,
) -> Result<Box<dyn RecordReader + Send>, OpenError> {
    let limit = options.max_line_bytes;
    let mut input = input;
    let mut first = Vec::new();
    lines::read_line(&mut input, limit, &mut first).map_err(|error| OpenError::Io { name: name.to_string(), error })?;
    if let Some(what) = not_text::what(&first) {
        let kind = ReadErrorKind::Header(what.into());
        return Err(ReadError { source_name: name.to_string(), line: 1, column: 1, kind }.into());
    }
    let format = match options.format {
        Format::Auto => detect(&String::from_utf8_lossy(&first)),
        given => given,
    };
    let delimiter = csv_row_delimiter(&first);
    let fields = first.split(|&b| b == delimiter).count();
    let replay = Cursor::new(first).chain(input);
    let label_column = options.label_column.as_deref();
    if let Some(message) = options.header_columns().filter(|_| !(has_header && format == Format::Csv)) {
        let kind = ReadErrorKind::Header(message.into());
        return Err(ReadError { source_name: name.to_string(), line: 1, column: 1, kind }.into());
    }
    Ok(match format {
        Format::LibSvm | Format::Auto => Box::new(LibSvmReader::new(replay, name, limit)),
        Format::Csv => {
            let reader = match has_header {
                true => CsvReader::with_header(replay, name, label_column, limit)?
                    .unlabelled_if_a_feature(if label_column.is_none() { &options.model_features } else { &[] })
                    .skipping(&options.skip_columns)?
                    .keeping(&options.keep_columns)?
                    .weighing(options.weight_column.as_deref())?
                    .categorical(&options.categorical)?,
                false => CsvReader::without_header(replay, name, fields, delimiter, limit),
            };
            Box::new(reader.with_labels(options.labels).with_unlabelled_rows(options.unlabelled_rows))
        }
    })
}

/// LibSVM when a token after the first has the form `index:value`, CSV when the line has
/// a comma, a tab or a semicolon (the delimiters a CSV header may be written with), LibSVM
/// otherwise (a line holding only a label is valid LibSVM).
pub fn detect(first_line: &str) -> Format {
    if first_line.split_ascii_whitespace().skip(1).any(|t| t.contains(':')) {
        Format::LibSvm
    } else if first_line.bytes().any(|b| self::csv::DELIMITERS.contains(&b)) {
        Format::Csv
    } else {
        Format::LibSvm
    }
}

fn open_serial(name: &str, spec: &str, options: &Options) -> Result<Box<dyn RecordReader + Send>, OpenError> {
    let serial_error = |message: String| OpenError::Serial { name: name.to_string(), message };
    let (device, baud) = match spec.split_once('@') {
        Some((d, b)) => (d, b.parse::<u32>().map_err(|_| serial_error(format!("`{b}` is not a baud rate")))?),
        None => (spec, 115_200),
    };
    if device.is_empty() {
        return Err(serial_error("no device named (serial:DEVICE[@BAUD])".into()));
    }
    let port = serialport::new(device, baud)
        .timeout(Duration::from_secs(3600))
        .open()
        .map_err(|e| serial_error(e.to_string()))?;
    from_buffered(BufReader::new(port), device, &Options { label_column: None, ..options.clone() }, false)
}

/// A finite `f64`, or what is wrong with the token.
pub(crate) fn parse_finite(token: &str) -> Result<f64, ReadErrorKind> {
    match token.parse::<f64>() {
        Ok(v) if v.is_finite() => Ok(v),
        Ok(_) => Err(ReadErrorKind::NonFinite(token.to_string())),
        Err(_) => Err(ReadErrorKind::NotANumber(token.to_string())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn detects_formats() {
        assert_eq!(detect("+1 3:0.5 7:1\n"), Format::LibSvm);
        assert_eq!(detect("x1,x2,label\n"), Format::Csv);
        assert_eq!(detect("-1\n"), Format::LibSvm);
        assert_eq!(detect("x1\tx2\tlabel\n"), Format::Csv);
        assert_eq!(detect("x1;label\n"), Format::Csv);
        assert_eq!(detect("1\t3:0.5\n"), Format::LibSvm);
        assert_eq!(format_from_extension("a/b.CSV"), Format::Csv);
        assert_eq!(format_from_extension("a/b.tsv"), Format::Csv);
        assert_eq!(format_from_extension("train.libsvm"), Format::LibSvm);
        assert_eq!(format_from_extension("data"), Format::Auto);
    }

    /// UTF-16 text (its byte-order mark first) is named as such, not as bytes that are no
    /// UTF-8.
    #[test]
    fn utf16_text_is_named() {
        for bom in [[0xFF, 0xFE], [0xFE, 0xFF]] {
            let mut bytes = bom.to_vec();
            bytes.extend("a,y\n1,2\n".encode_utf16().flat_map(|unit| unit.to_le_bytes()));
            let Err(OpenError::Read(e)) = from_buffered(Cursor::new(bytes), "t", &Options::default(), true) else {
                panic!("UTF-16 read");
            };
            assert!(e.to_string().starts_with("t:1:1: the input is UTF-16 text"), "{e}");
        }
    }

    #[test]
    fn detection_replays_the_first_line() {
        let csv = "a,y\n1,2\n";
        let mut reader = from_buffered(csv.as_bytes(), "t", &Options::default(), true).unwrap();
        let mut r = Record::default();
        assert!(reader.next_record(&mut r).unwrap());
        assert_eq!((r.label, r.values.clone(), r.line), (2.0, vec![1.0], 2));
        let svm = "1 2:3\n-1 1:1\n";
        let mut reader = from_buffered(svm.as_bytes(), "t", &Options::default(), true).unwrap();
        assert!(reader.next_record(&mut r).unwrap());
        assert_eq!((r.label, r.indices.clone(), r.line), (1.0, vec![1], 1));
        assert!(reader.next_record(&mut r).unwrap());
        assert_eq!(r.line, 2);
    }

    fn libsvm() -> Options {
        Options { format: Format::LibSvm, ..Options::default() }
    }

    #[test]
    fn a_first_line_over_the_limit_is_a_bad_row() {
        let text = format!("{}\n1 1:2\n", "1 1:1".repeat(50));
        let options = Options { max_line_bytes: 32, ..Options::default() };
        let mut reader = from_buffered(std::io::Cursor::new(text.into_bytes()), "t", &options, true).unwrap();
        let mut r = Record::default();
        let e = reader.next_record(&mut r).unwrap_err();
        assert_eq!((e.line, e.kind), (1, ReadErrorKind::LineTooLong(32)));
        assert!(reader.next_record(&mut r).unwrap());
        assert_eq!((r.line, r.values.clone()), (2, vec![2.0]));
    }

    #[test]
    fn serial_spec_errors_are_clear() {
        let e = open("serial:/dev/nonexistent-kestrel@9600", &libsvm()).err().unwrap();
        assert!(e.to_string().starts_with("serial:/dev/nonexistent-kestrel@9600: "), "{e}");
        let e = open("serial:/dev/x@fast", &libsvm()).err().unwrap();
        assert_eq!(e.to_string(), "serial:/dev/x@fast: `fast` is not a baud rate");
        let e = open("/nonexistent/file.csv", &Options::default()).err().unwrap();
        assert!(e.to_string().starts_with("/nonexistent/file.csv: "));
    }

    #[test]
    fn serial_port_pair_delivers_rows() {
        use serialport::SerialPort;
        use std::io::Write;
        let (mut master, slave) = serialport::TTYPort::pair().expect("pseudo-terminal pair");
        let device = slave.name().expect("pty name");
        master.write_all(b"1 1:0.5 2:1\n-1 2:2\n").unwrap();
        let mut reader = open(&format!("serial:{device}@9600"), &Options::default()).unwrap();
        let mut r = Record::default();
        assert!(reader.next_record(&mut r).unwrap());
        assert_eq!((r.label, r.values.clone()), (1.0, vec![0.5, 1.0]));
        assert!(reader.next_record(&mut r).unwrap());
        assert_eq!((r.label, r.indices.clone()), (-1.0, vec![1]));
    }

    /// A board printing its readings with tabs (or semicolons, and then maybe decimal
    /// commas) between them, no header: the first row sets the delimiter and the number of
    /// fields, the label last.
    #[test]
    fn serial_rows_separated_by_tabs_or_semicolons() {
        use std::io::Write;
        let rows = [&b"0.5\t1\t1\n-2\t3.5\t0\n"[..], b"0.5;1;1\n-2;3.5;0\n", b"0,5;1;1\n-2;3,5;0\n"];
        for (rows, delimiter) in rows.into_iter().zip(['\t', ';', ';']) {
            let (mut master, slave) = serialport::TTYPort::pair().expect("pseudo-terminal pair");
            let device = serialport::SerialPort::name(&slave).expect("pty name");
            master.write_all(rows).unwrap();
            let mut reader = open(&format!("serial:{device}@9600"), &Options::default()).unwrap();
            let mut r = Record::default();
            assert!(reader.next_record(&mut r).unwrap(), "{delimiter:?}");
            assert_eq!((r.label, r.values.clone()), (1.0, vec![0.5, 1.0]), "{delimiter:?}");
            assert!(reader.next_record(&mut r).unwrap(), "{delimiter:?}");
            assert_eq!((r.label, r.values.clone()), (0.0, vec![-2.0, 3.5]), "{delimiter:?}");
        }
    }
}
