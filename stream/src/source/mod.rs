//! Sources of labelled samples: files, standard input and serial ports, in CSV or LibSVM
//! format, read one row at a time in constant memory.
//!
//! An input is named as on the command line: a path, `-` for standard input, or
//! `serial:DEVICE[@BAUD]` (default 115200 baud). The format is given or detected: by the
//! file extension (`.csv`; `.libsvm`, `.svm`, `.svmlight`), else from the first line (a
//! token with `:` after the label means LibSVM, a comma means CSV).

mod background;
mod csv;
mod libsvm;
mod record;

use std::fs::File;
use std::io::{self, BufRead, BufReader, Cursor, Read};
use std::time::Duration;

pub use self::background::{Background, Next, Records};
pub use self::csv::CsvReader;
pub use self::libsvm::{LibSvmReader, parse_line as parse_libsvm_line};
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
    /// The first row could not be read (e.g. a CSV header).
    #[error(transparent)]
    Read(#[from] ReadError),
}

/// Opens `input` (a path, `-`, or `serial:DEVICE[@BAUD]`) in `format`.
///
/// # Errors
/// [`OpenError`] when the input cannot be opened or its header read.
pub fn open(
    input: &str,
    format: Format,
    label_column: Option<&str>,
) -> Result<Box<dyn RecordReader + Send>, OpenError> {
    if input == "-" {
        let stdin = BufReader::new(io::stdin());
        return from_buffered(stdin, "<stdin>", format, label_column, true);
    }
    if let Some(spec) = input.strip_prefix("serial:") {
        return open_serial(input, spec, format);
    }
    let io_error = |error| OpenError::Io { name: input.to_string(), error };
    let file = BufReader::new(File::open(input).map_err(io_error)?);
    let format = match format {
        Format::Auto => format_from_extension(input),
        given => given,
    };
    from_buffered(file, input, format, label_column, true)
}

fn format_from_extension(path: &str) -> Format {
    let extension = path.rsplit_once('.').map(|(_, e)| e.to_ascii_lowercase());
    match extension.as_deref() {
        Some("csv") => Format::Csv,
        Some("libsvm" | "svm" | "svmlight") => Format::LibSvm,
        _ => Format::Auto,
    }
}

/// Builds the reader for a buffered input; detection reads the first line and replays it.
fn from_buffered<R: BufRead + Send + 'static>(
    mut input: R,
    name: &str,
    format: Format,
    label_column: Option<&str>,
    has_header: bool,
) -> Result<Box<dyn RecordReader + Send>, OpenError> {
    let mut first = String::new();
    input.read_line(&mut first).map_err(|error| OpenError::Io { name: name.to_string(), error })?;
    let format = match format {
        Format::Auto => detect(&first),
        given => given,
    };
    let fields = first.split(',').count();
    let replay = Cursor::new(first.into_bytes()).chain(input);
    Ok(match format {
        Format::LibSvm | Format::Auto => Box::new(LibSvmReader::new(replay, name, 1)),
        Format::Csv if has_header => Box::new(CsvReader::with_header(replay, name, label_column)?),
        Format::Csv => Box::new(CsvReader::without_header(replay, name, fields.max(2))),
    })
}

/// LibSVM when a token after the first has the form `index:value`, CSV when the line has
/// a comma, LibSVM otherwise (a line holding only a label is valid LibSVM).
pub fn detect(first_line: &str) -> Format {
    if first_line.split_ascii_whitespace().skip(1).any(|t| t.contains(':')) {
        Format::LibSvm
    } else if first_line.contains(',') {
        Format::Csv
    } else {
        Format::LibSvm
    }
}

fn open_serial(name: &str, spec: &str, format: Format) -> Result<Box<dyn RecordReader + Send>, OpenError> {
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
    from_buffered(BufReader::new(port), device, format, None, false)
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
        assert_eq!(format_from_extension("a/b.CSV"), Format::Csv);
        assert_eq!(format_from_extension("train.libsvm"), Format::LibSvm);
        assert_eq!(format_from_extension("data"), Format::Auto);
    }

    #[test]
    fn detection_replays_the_first_line() {
        let csv = "a,y\n1,2\n";
        let mut reader = from_buffered(csv.as_bytes(), "t", Format::Auto, None, true).unwrap();
        let mut r = Record::default();
        assert!(reader.next_record(&mut r).unwrap());
        assert_eq!((r.label, r.values.clone(), r.line), (2.0, vec![1.0], 2));
        let svm = "1 2:3\n-1 1:1\n";
        let mut reader = from_buffered(svm.as_bytes(), "t", Format::Auto, None, true).unwrap();
        assert!(reader.next_record(&mut r).unwrap());
        assert_eq!((r.label, r.indices.clone(), r.line), (1.0, vec![1], 1));
        assert!(reader.next_record(&mut r).unwrap());
        assert_eq!(r.line, 2);
    }

    #[test]
    fn serial_spec_errors_are_clear() {
        let e = open("serial:/dev/nonexistent-kestrel@9600", Format::LibSvm, None).err().unwrap();
        assert!(e.to_string().starts_with("serial:/dev/nonexistent-kestrel@9600: "), "{e}");
        let e = open("serial:/dev/x@fast", Format::LibSvm, None).err().unwrap();
        assert_eq!(e.to_string(), "serial:/dev/x@fast: `fast` is not a baud rate");
        let e = open("/nonexistent/file.csv", Format::Auto, None).err().unwrap();
        assert!(e.to_string().starts_with("/nonexistent/file.csv: "));
    }

    #[test]
    fn serial_port_pair_delivers_rows() {
        use serialport::SerialPort;
        use std::io::Write;
        let (mut master, slave) = serialport::TTYPort::pair().expect("pseudo-terminal pair");
        let device = slave.name().expect("pty name");
        master.write_all(b"1 1:0.5 2:1\n-1 2:2\n").unwrap();
        let mut reader = open(&format!("serial:{device}@9600"), Format::Auto, None).unwrap();
        let mut r = Record::default();
        assert!(reader.next_record(&mut r).unwrap());
        assert_eq!((r.label, r.values.clone()), (1.0, vec![0.5, 1.0]));
        assert!(reader.next_record(&mut r).unwrap());
        assert_eq!((r.label, r.indices.clone()), (-1.0, vec![1]));
    }
}
