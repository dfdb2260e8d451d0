//! The committed seeds of the decoding fuzz targets are files of today's formats.
//!
//! `fuzz/seeds/model_decode/raw_*.kestrel` and `fuzz/seeds/checkpoint_decode/raw_*.ckpt`
//! are what `kestrel train` and `kestrel stream --checkpoint` wrote when
//! `fuzz/seeds/regenerate.py` last ran. A seed of an older format version stops at the
//! version check, so the fuzzer starting from it never reaches the decoder behind it
//! (checkpoint_decode on format-5 seeds read against format 6: 177 edges covered, against
//! 4,223 from seeds of format 6). These tests fail when a format changes and the seeds
//! were not regenerated with it.

use std::fs;
use std::path::PathBuf;

use kestrel_stream::checkpoint::Checkpoint;
use kestrel_stream::model;

/// The seeds of `target` whose names start with `raw_`, with their bytes (at least one).
fn raw_seeds(target: &str) -> Vec<(String, Vec<u8>)> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../fuzz/seeds").join(target);
    let mut seeds: Vec<(String, Vec<u8>)> = fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.file_name().unwrap().to_string_lossy().starts_with("raw_"))
        .map(|path| (path.file_name().unwrap().to_string_lossy().into_owned(), fs::read(&path).unwrap()))
        .collect();
    seeds.sort();
    assert!(!seeds.is_empty(), "no raw_ seeds in {}", dir.display());
    seeds
}

#[test]
fn model_seeds_load() {
    for (name, bytes) in raw_seeds("model_decode") {
        if let Err(e) = model::load(&bytes) {
            panic!("fuzz/seeds/model_decode/{name} does not load ({e}): run fuzz/seeds/regenerate.py");
        }
    }
}

#[test]
fn checkpoint_seeds_decode_and_reencode() {
    for (name, bytes) in raw_seeds("checkpoint_decode") {
        let checkpoint = Checkpoint::from_bytes(&bytes).unwrap_or_else(|e| {
            panic!("fuzz/seeds/checkpoint_decode/{name} does not decode ({e}): run fuzz/seeds/regenerate.py")
        });
        assert_eq!(checkpoint.to_bytes().unwrap(), bytes, "{name} re-encodes to other bytes");
    }
}
