//! Gzip-compressed input (RFC 1952): a file or standard input whose first two bytes are
//! gzip's magic `1f 8b` is read through its decoder, whatever its name, so that a rotated
//! sensor log `log.csv.gz` or River's `phishing.csv.gz` is read as the text it holds. Members
//! written one after another (`cat a.gz b.gz`, as `gzip` appends) are one stream, as `zcat`
//! reads them. A name ending in `.gz` is looked at without it for the format
//! (`data.libsvm.gz` is LibSVM).
//!
//! Memory: the decoder's state (its 32 KiB window and tables, about 45 KiB) and one
//! buffer of the text it gives, fixed whatever the input; the limits on a line hold for
//! the text as for a plain file, so a small file that expands to much text costs time, not
//! memory. A corrupt or cut-off stream is a read error naming the line it stopped in.

use std::fs::File;
use std::io::{self, BufRead, BufReader, Cursor, Read};
use std::path::Path;

use flate2::bufread::MultiGzDecoder;

/// The first two bytes of every gzip member (RFC 1952 §2.3.1: ID1, ID2).
const MAGIC: [u8; 2] = [0x1f, 0x8b];

/// `input`'s text: decompressed when it starts with gzip's magic, else its own bytes.
/// Reads at most two bytes to look, and gives them back either way.
///
/// # Errors
/// The first two bytes cannot be read.
pub fn text<R: BufRead + Send + 'static>(mut input: R) -> io::Result<Box<dyn BufRead + Send>> {
    let mut head = Vec::with_capacity(MAGIC.len());
    (&mut input).take(MAGIC.len() as u64).read_to_end(&mut head)?;
    let is_gzip = head == MAGIC;
    let replay = Cursor::new(head).chain(input);
    Ok(match is_gzip {
        true => Box::new(BufReader::new(MultiGzDecoder::new(replay))),
        false => Box::new(replay),
    })
}

/// Whether the file at `path` starts with gzip's magic.
///
/// # Errors
/// The file cannot be opened or read.
pub fn is_gzip_file(path: &Path) -> io::Result<bool> {
    let mut head = Vec::with_capacity(MAGIC.len());
    File::open(path)?.take(MAGIC.len() as u64).read_to_end(&mut head)?;
    Ok(head == MAGIC)
}

/// `path` without a final `.gz` (any case), for the format its extension names.
pub fn without_gz_suffix(path: &str) -> &str {
    match path.len().checked_sub(3).and_then(|cut| path.get(cut..).map(|tail| (cut, tail))) {
        Some((cut, tail)) if tail.eq_ignore_ascii_case(".gz") => path.get(..cut).unwrap_or(path),
        _ => path,
    }
}

#[cfg(test)]
mod tests {
    use std::io::Write;

    use flate2::Compression;
    use flate2::write::GzEncoder;

    use super::*;

    fn gzip(text: &[u8]) -> Vec<u8> {
        let mut encoder = GzEncoder::new(Vec::new(), Compression::default());
        encoder.write_all(text).unwrap();
        encoder.finish().unwrap()
    }

    fn read_all(bytes: Vec<u8>) -> io::Result<Vec<u8>> {
        let mut out = Vec::new();
        text(Cursor::new(bytes))?.read_to_end(&mut out)?;
        Ok(out)
    }

    #[test]
    fn plain_text_and_short_inputs_come_back_unchanged() {
        for plain in [&b""[..], b"x", b"\x1f", b"a,b\n1,2\n"] {
            assert_eq!(read_all(plain.to_vec()).unwrap(), plain);
        }
    }

    #[test]
    fn members_one_after_another_are_one_text() {
        let mut bytes = gzip(b"a,b\n1,2\n");
        bytes.extend(gzip(b"3,4\n"));
        assert_eq!(read_all(bytes).unwrap(), b"a,b\n1,2\n3,4\n");
    }

    #[test]
    fn a_cut_off_or_corrupt_stream_is_an_error() {
        let whole = gzip(&b"1,2\n".repeat(1000));
        let cut = whole.get(..whole.len() / 2).unwrap().to_vec();
        assert!(read_all(cut).is_err());
        let mut corrupt = whole;
        for byte in corrupt.iter_mut().skip(12).take(8) {
            *byte ^= 0x5a;
        }
        assert!(read_all(corrupt).is_err());
    }

    #[test]
    fn the_suffix_is_dropped_in_any_case() {
        assert_eq!(without_gz_suffix("data.libsvm.gz"), "data.libsvm");
        assert_eq!(without_gz_suffix("DATA.CSV.GZ"), "DATA.CSV");
        assert_eq!(without_gz_suffix("data.csv"), "data.csv");
        assert_eq!(without_gz_suffix("gz"), "gz");
        assert_eq!(without_gz_suffix("é.gz"), "é");
    }
}
