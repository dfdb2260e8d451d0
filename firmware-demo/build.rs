//! Puts the target's memory layouts where the linker looks for `memory.x` — the product's
//! budget for the binaries (the demo, the measurements), a larger flash for the on-device
//! tests — and links every binary with the runtime's `link.x` (cortex-m-rt on Arm,
//! riscv-rt on RISC-V; both include `memory.x`).
//!
//! The layouts live in `memory/` (`cortex-m.x`, `riscv-virt.x` and their `-tests.x`), not in
//! the crate root: a `memory.x` there would shadow the copies made here. `-Tlink.x` is given here rather than in
//! rustflags: rustflags from two config files concatenate (lld then reports "region 'FLASH'
//! already defined") and a `RUSTFLAGS` environment variable replaces them.

use std::{env, fs, path::PathBuf};

fn main() {
    let out = PathBuf::from(env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    let arch = env::var("CARGO_CFG_TARGET_ARCH").expect("cargo sets CARGO_CFG_TARGET_ARCH");
    let (product, tests) = match arch.as_str() {
        "arm" => ("memory/cortex-m.x", "memory/cortex-m-tests.x"),
        "riscv32" => ("memory/riscv-virt.x", "memory/riscv-virt-tests.x"),
        other => panic!("no memory layout for target_arch {other}: build for a Cortex-M or riscv32 target"),
    };
    // The binaries (the demo, the measurements) get the product's budget, the tests theirs:
    // each kind finds its own memory.x first.
    for (kind, layout) in [("bins", product), ("tests", tests)] {
        let dir = out.join(kind);
        fs::create_dir_all(&dir).expect("create a layout directory in OUT_DIR");
        fs::copy(layout, dir.join("memory.x")).expect("copy the memory layout to OUT_DIR");
        println!("cargo:rustc-link-arg-{kind}=-L{}", dir.display());
    }
    // The instruction counter's clock (src/icount/systick.rs): SysTick runs at 16 MHz on
    // the micro:bit, QEMU's Cortex-M0 machine, at 25 MHz on the MPS2 boards.
    println!("cargo::rustc-check-cfg=cfg(systick_16mhz)");
    if env::var("TARGET").is_ok_and(|target| target.starts_with("thumbv6m")) {
        println!("cargo:rustc-cfg=systick_16mhz");
    }
    println!("cargo:rerun-if-changed=memory");
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rustc-link-arg=-Tlink.x");
}
