//! Executed-instruction counts on a RISC-V: the `minstret` CSR.
//!
//! `minstret` (with `minstreth`, 64 bits on RV32) counts the instructions the hart has
//! retired; on silicon that is the count itself. QEMU 7.2 reads it from the virtual clock:
//! under `-icount shift=0,align=off,sleep=off` that clock advances exactly 1 ns per executed
//! instruction, so `minstret` is the instruction count; without `-icount` it is host time
//! and the figures mean nothing.
//!
//! [`Counter::measure`] reads the counter before and after the closure. At 64 bits it does
//! not wrap within any run, so every count is reported. [`Counter::take`] measures the cost
//! of the measurement itself (the two reads and the code between them) once, and every
//! count has it subtracted.

use riscv::register::minstret;

/// `minstret` as an instruction counter.
#[derive(Debug)]
pub struct Counter {
    overhead: u64,
}

impl Counter {
    /// A counter with its overhead calibrated. `minstret` is read-only and not owned like
    /// SysTick, so this never returns `None`; the `Option` keeps the Cortex-M signature.
    pub fn take() -> Option<Self> {
        let mut counter = Counter { overhead: 0 };
        counter.overhead = counter.measure(|| ()).1.unwrap_or(0);
        Some(counter)
    }

    /// Runs `f` and returns its result with the instructions it executed (always `Some`).
    pub fn measure<R>(&mut self, f: impl FnOnce() -> R) -> (R, Option<u64>) {
        let start = minstret::read64();
        let result = core::hint::black_box(f());
        let end = minstret::read64();
        (result, Some(end.wrapping_sub(start).saturating_sub(self.overhead)))
    }
}
