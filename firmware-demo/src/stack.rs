//! Peak stack use by stack painting.
//!
//! Before `main`, everything from the bottom of the stack region (the end of
//! `.bss`/`.uninit`) up to the initial stack pointer (the top of RAM, where the stack
//! begins) is filled with [`PAINT`]. The stack grows down, so the lowest word that no longer
//! holds the paint marks the deepest the stack has been: [`peak_bytes`] scans up from the
//! bottom for it. An O(stack) scan; call it at the end of a run. (A frame that happens to
//! store the paint value at its deepest word would hide that word: the figure is exact to a
//! word or two, not more.)
//!
//! - Cortex-M: cortex-m-rt's `paint-stack` feature (enabled in this crate's `Cargo.toml`)
//!   paints from `_stack_end` to `_stack_start` in its reset handler.
//! - RISC-V: riscv-rt has no such feature, but its `pre-init` feature calls `__pre_init`
//!   right after setting the stack pointer, before it initialises `.data` and `.bss`; the
//!   `__pre_init` below paints from `__estack` (riscv-rt's `link.x`: the start of the stack
//!   region, after `.bss`, `.uninit` and an empty heap) up to the stack pointer. riscv-rt
//!   requires `__pre_init` in assembly (no Rust may run before RAM is initialised); it uses
//!   only `t0` and `t1`, as riscv-rt asks, and no memory but the region it paints.

/// The word painted over the free stack (cortex-m-rt's value on both architectures).
pub const PAINT: u32 = 0xCCCC_CCCC;

#[cfg(target_arch = "arm")]
const _: () = assert!(PAINT == cortex_m_rt::STACK_PAINT_VALUE);

#[cfg(target_arch = "riscv32")]
core::arch::global_asm!(
    ".section .text.__pre_init, \"ax\"",
    ".global __pre_init",
    "__pre_init:",
    "    la t0, __estack",
    "    li t1, {paint}",
    "1:  bgeu t0, sp, 2f",
    "    sw t1, 0(t0)",
    "    addi t0, t0, 4",
    "    j 1b",
    "2:  ret",
    paint = const PAINT,
);

unsafe extern "C" {
    /// Lowest address of the stack region (from the runtime's `link.x`).
    #[cfg_attr(target_arch = "arm", link_name = "_stack_end")]
    #[cfg_attr(target_arch = "riscv32", link_name = "__estack")]
    static STACK_BOTTOM: u32;
    /// Initial stack pointer: the top of the stack region.
    static _stack_start: u32;
}

/// Bytes between the bottom of the stack region and `_stack_start`: the most the stack can
/// grow.
pub fn capacity_bytes() -> usize {
    let (end, start) = bounds();
    start - end
}

/// Deepest stack use so far, in bytes below `_stack_start`.
pub fn peak_bytes() -> usize {
    let (end, start) = bounds();
    let mut address = end;
    while address < start {
        // SAFETY: `address` is word-aligned (both bounds are, by the runtimes' linker
        // scripts) and lies in RAM between the bottom and the top of the stack region, which
        // the program owns; a volatile read of a `u32` there has no side effect.
        let word = unsafe { core::ptr::read_volatile(address as *const u32) };
        if word != PAINT {
            break;
        }
        address += 4;
    }
    start - address
}

fn bounds() -> (usize, usize) {
    (core::ptr::addr_of!(STACK_BOTTOM) as usize, core::ptr::addr_of!(_stack_start) as usize)
}
