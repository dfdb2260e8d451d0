//! Peak stack use by stack painting.
//!
//! With cortex-m-rt's `paint-stack` feature (enabled in this crate's `Cargo.toml`), the
//! reset handler fills everything from `_stack_end` (the end of `.bss`/`.uninit`) up to
//! `_stack_start` (the top of RAM, where the stack begins) with `0xCCCC_CCCC` before
//! `main`. The stack grows down, so the lowest word that no longer holds the paint marks
//! the deepest the stack has been: [`peak_bytes`] scans up from `_stack_end` for it.
//! An O(stack) scan; call it at the end of a run. (A frame that happens to store
//! `0xCCCC_CCCC` at its deepest word would hide that word: the figure is exact to a word or
//! two, not more.)

use cortex_m_rt::STACK_PAINT_VALUE;

unsafe extern "C" {
    /// Lowest address of the stack region (from cortex-m-rt's `link.x`).
    static _stack_end: u32;
    /// Initial stack pointer: the top of the stack region.
    static _stack_start: u32;
}

/// Bytes between `_stack_end` and `_stack_start`: the most the stack can grow.
pub fn capacity_bytes() -> usize {
    let (end, start) = bounds();
    start - end
}

/// Deepest stack use so far, in bytes below `_stack_start`.
pub fn peak_bytes() -> usize {
    let (end, start) = bounds();
    let mut address = end;
    while address < start {
        // SAFETY: `address` is word-aligned (both bounds are, by cortex-m-rt's linker
        // script asserts) and lies in RAM between `_stack_end` and `_stack_start`, which the
        // program owns; a volatile read of a `u32` there has no side effect.
        let word = unsafe { core::ptr::read_volatile(address as *const u32) };
        if word != STACK_PAINT_VALUE {
            break;
        }
        address += 4;
    }
    start - address
}

fn bounds() -> (usize, usize) {
    (core::ptr::addr_of!(_stack_end) as usize, core::ptr::addr_of!(_stack_start) as usize)
}
