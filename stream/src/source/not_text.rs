//! Files that are not the text kestrel reads, named by their first bytes: an input that is
//! a Kestrel model or checkpoint (given for the data by mistake), an archive, a workbook, a
//! binary array format or a compression other than gzip is told as what it is and how to
//! make a CSV of it, instead of as a first line that is not UTF-8.
//!
//! The signatures are the formats' own magic numbers (the first bytes of every file of the
//! format); none of them starts a line of UTF-8 text, so a CSV or LibSVM file is never taken
//! for one. Gzip is not among them: [`super::gzip`] decompresses it.
//!
//! Memory: none; the first line, which the reader holds already, is looked at.

/// UTF-16 text, by its byte-order mark (little- or big-endian).
const UTF16: &str = "the input is UTF-16 text (Excel's \"Unicode Text\"), and kestrel reads UTF-8: save it as \
                     \"CSV UTF-8\", or convert it (iconv -f UTF-16 -t UTF-8)";

/// The signature of each format, and what to tell of a file that starts with it.
const SIGNATURES: &[(&[u8], &str)] = &[
    (b"KSTL", "a Kestrel model file, not data: a model is given with --model, and the data with --input"),
    (b"KSCK", "a `kestrel stream` checkpoint, not data: `kestrel stream --checkpoint FILE --resume` continues its run"),
    (b"KSDC", "a device's checkpoint, not data: `kestrel import FILE --out MODEL` makes it a model file"),
    (b"\xFF\xFE", UTF16),
    (b"\xFE\xFF", UTF16),
    (
        b"PK\x03\x04",
        "a zip archive (an Excel .xlsx or OpenDocument .ods workbook is one too): unzip it, or save the sheet as \
         \"CSV UTF-8\"; kestrel reads CSV and LibSVM text, gzip-compressed or not",
    ),
    (b"\xD0\xCF\x11\xE0\xA1\xB1\x1A\xE1", "an Excel 97-2003 workbook (.xls): save the sheet as \"CSV UTF-8\""),
    (b"PAR1", "a Parquet file: write it as CSV (pandas: pd.read_parquet(FILE).to_csv(OUT, index=False))"),
    (b"ARROW1", "an Arrow or Feather file: write it as CSV (pandas: pd.read_feather(FILE).to_csv(OUT, index=False))"),
    (b"\x93NUMPY", "a NumPy .npy array: write it as CSV (numpy.savetxt(OUT, numpy.load(FILE), delimiter=\",\"))"),
    (b"\x89HDF\r\n", "an HDF5 file (pandas' to_hdf, a MATLAB v7.3 .mat): write the table as CSV"),
    (
        b"\xFD7zXZ\x00",
        "xz-compressed: decompress it (xz -dk FILE), or read it through a pipe (xzcat FILE | kestrel … --input -)",
    ),
    (
        b"\x28\xB5\x2F\xFD",
        "zstd-compressed: decompress it (zstd -d FILE), or read it through a pipe (zstdcat FILE | kestrel … --input -)",
    ),
    (b"7z\xBC\xAF\x27\x1C", "a 7-Zip archive: extract it (7z x FILE)"),
    (
        b"\x00\x05\x16\x07",
        "a macOS resource fork (the `._` file beside each file of a zip made on a Mac), not data: the data is the \
         file of the same name without `._`",
    ),
];

/// bzip2's magic: `BZh`, the block size digit, then the first block's `1AY&SY`.
const BZIP2: (&[u8], &[u8]) = (b"BZh", b"1AY&SY");

/// Where a tar archive's header holds `ustar` (POSIX.1-1988).
const TAR_MAGIC_AT: usize = 257;

/// What the file whose first line is `first` is, when it is one of the formats above and not
/// text; `None` for anything else (text, or bytes of no known format).
pub fn what(first: &[u8]) -> Option<&'static str> {
    if let Some(&(_, told)) = SIGNATURES.iter().find(|(magic, _)| first.starts_with(magic)) {
        return Some(told);
    }
    if first.starts_with(BZIP2.0) && first.get(4..10) == Some(BZIP2.1) {
        return Some(
            "bzip2-compressed: decompress it (bunzip2 -k FILE), or read it through a pipe (bzcat FILE | kestrel … \
             --input -)",
        );
    }
    if first.get(TAR_MAGIC_AT..TAR_MAGIC_AT + 5) == Some(b"ustar") {
        return Some("a tar archive: extract it (tar -xf FILE)");
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_is_not_named() {
        for text in [&b"a,b,y"[..], b"1 1:0.5 2:3", b"PK,x,y", b"BZh,x", b"KST,L", b"", b"\xEF\xBB\xBFa,y"] {
            assert_eq!(what(text), None, "{text:?}");
        }
    }

    #[test]
    fn formats_are_named_by_their_first_bytes() {
        let cases: [(&[u8], &str); 7] = [
            (b"KSTL\x04\x00\x03\x02", "a Kestrel model file"),
            (b"PK\x03\x04\x14\x00", "a zip archive"),
            (b"\x93NUMPY\x01\x00v\x00{'descr'", "a NumPy .npy array"),
            (b"BZh91AY&SY\x00", "bzip2-compressed"),
            (b"\xFF\xFEa\x00", "the input is UTF-16 text"),
            (b"PAR1\x15\x04", "a Parquet file"),
            (b"\x00\x05\x16\x07\x00\x02\x00\x00Mac OS X", "a macOS resource fork"),
        ];
        for (first, told) in cases {
            assert!(what(first).is_some_and(|what| what.starts_with(told)), "{first:?}: {:?}", what(first));
        }
        let mut tar = b"data.csv".to_vec();
        tar.resize(TAR_MAGIC_AT, 0);
        tar.extend(b"ustar\x0000");
        assert_eq!(what(&tar), Some("a tar archive: extract it (tar -xf FILE)"));
    }
}
