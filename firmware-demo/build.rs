//! Puts `memory.x` where the linker looks and links every binary with cortex-m-rt's `link.x`.
//!
//! `-Tlink.x` is given here rather than in rustflags: rustflags from two config files
//! concatenate (lld then reports "region 'FLASH' already defined") and a `RUSTFLAGS`
//! environment variable replaces them.

use std::{env, fs, path::PathBuf};

fn main() {
    let out = PathBuf::from(env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    fs::copy("memory.x", out.join("memory.x")).expect("copy memory.x to OUT_DIR");
    println!("cargo:rustc-link-search={}", out.display());
    println!("cargo:rerun-if-changed=memory.x");
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rustc-link-arg=-Tlink.x");
}
