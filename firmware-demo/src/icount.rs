//! Executed-instruction counts under QEMU: [`Counter`] runs a closure and reports how many
//! instructions it executed, less the cost of the measurement itself (measured once when
//! the counter is taken).
//!
//! The counter differs by architecture, the interface does not:
//!
//! - Cortex-M: SysTick under `-icount shift=7`, which advances QEMU's
//!   virtual clock 2⁷ ns per instruction; QEMU 7.2 models no cycle counter (DWT).
//! - RISC-V: the `minstret` CSR, the architectural count of retired instructions. Under
//!   QEMU it reads the virtual clock in ns too, so `-icount shift=0` (1 ns per
//!   instruction) makes it an exact instruction count.
//!
//! Either way the count is repeatable bit for bit across runs, and it is an instruction
//! count, not cycles (QEMU models no pipeline or memory timing). Without `-icount` both
//! follow host time and the figures mean nothing. [`nop`], one instruction, calibrates.

#[cfg(target_arch = "riscv32")]
mod minstret;
#[cfg(target_arch = "arm")]
mod systick;

#[cfg(target_arch = "arm")]
pub use cortex_m::asm::nop;
#[cfg(target_arch = "riscv32")]
pub use minstret::Counter;
#[cfg(target_arch = "riscv32")]
pub use riscv::asm::nop;
#[cfg(target_arch = "arm")]
pub use systick::Counter;
