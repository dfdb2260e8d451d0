//! Puts the target's memory layout where the linker looks for `memory.x` and links every
//! binary with the runtime's `link.x` (cortex-m-rt on Arm, riscv-rt on RISC-V; both include
//! `memory.x`).
//!
//! The layouts live in `memory/` (`cortex-m.x`, `riscv-virt.x`), not in the crate root: a
//! `memory.x` there would shadow the copy made here. `-Tlink.x` is given here rather than in
//! rustflags: rustflags from two config files concatenate (lld then reports "region 'FLASH'
//! already defined") and a `RUSTFLAGS` environment variable replaces them.

use std::{env, fs, path::PathBuf};

fn main() {
    let out = PathBuf::from(env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    let arch = env::var("CARGO_CFG_TARGET_ARCH").expect("cargo sets CARGO_CFG_TARGET_ARCH");
    let layout = match arch.as_str() {
        "arm" => "memory/cortex-m.x",
        "riscv32" => "memory/riscv-virt.x",
        other => panic!("no memory layout for target_arch {other}: build for a Cortex-M or riscv32 target"),
    };
    fs::copy(layout, out.join("memory.x")).expect("copy the memory layout to OUT_DIR");
    println!("cargo:rustc-link-search={}", out.display());
    println!("cargo:rerun-if-changed=memory");
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rustc-link-arg=-Tlink.x");
}
