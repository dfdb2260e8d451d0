//! Kestrel on a microcontroller: what the demo, the measurement binary and the on-device
//! tests share, on a Cortex-M (cortex-m-rt) and on a RISC-V (riscv-rt) alike.
//!
//! - [`sensor`]: an MPU-6050-style motion-sensor driver, generic over embedded-hal 1.0's
//!   `I2c`; [`sim`]: the simulated sensor and machine that implement `I2c` under QEMU,
//!   with a fault mode.
//! - [`learners`]: the demo's windowed SLKL regressor, DCD SVM and novelty detector in
//!   statics sized by kestrel-core's `const fn`s.
//! - [`score`]: the learners' prequential errors beside naive baselines.
//! - [`icount`]: instruction counts under QEMU (SysTick under `-icount` on a Cortex-M,
//!   `minstret` on a RISC-V); [`stack`]: peak stack by stack painting; [`report`]:
//!   fixed-point printing.
//! - [`entry`], the target's runtime's attribute for `main`, so that one source of each
//!   binary and test builds for every target; a semihosting [`exit`]; a panic handler and a
//!   fault handler (HardFault on a Cortex-M, riscv-rt's `ExceptionHandler` on a RISC-V)
//!   that report over semihosting and exit with failure; and [`Tests`], a tiny runner for
//!   `harness = false` test binaries.
//!
//! Output and the exit status go through the `semihosting` crate, which speaks the same
//! protocol on Arm (`bkpt 0xAB`) and RISC-V (`ebreak` between two marker instructions);
//! under QEMU, `-semihosting-config enable=on,target=native` turns it on.
//!
//! Without the fault handler, a fault would end in the runtime's default handler, a busy
//! loop, and QEMU would hang: a hard-float binary booted on a Cortex-M without an FPU faults
//! at its first floating-point instruction, a RISC-V binary on a hart that lacks one of its
//! extensions at the first such instruction. Both handlers write to semihosting's stderr.
//!
//! A binary links these handlers by using anything from this crate. They, [`exit`] and
//! [`Tests`] are the `qemu` feature (on by default); without it the library is the sensor
//! driver, the learners, the simulated sensor and the measuring tools alone, for a board
//! that brings its own output and handlers (`../boards/pico`).

#![no_std]

pub mod icount;
pub mod learners;
pub mod report;
pub mod score;
pub mod sensor;
pub mod sim;
pub mod stack;

use core::fmt;

#[cfg(target_arch = "arm")]
pub use cortex_m_rt::entry;
#[cfg(target_arch = "riscv32")]
pub use riscv_rt::entry;
#[cfg(feature = "qemu")]
use semihosting::{eprintln, println};

/// Ends the program, reporting success or failure to the host; under QEMU with
/// `-semihosting-config enable=on,target=native`, QEMU exits with status 0 or 1.
#[cfg(feature = "qemu")]
pub fn exit(success: bool) -> ! {
    semihosting::process::exit(if success { 0 } else { 1 })
}

/// Why a check (or the set-up of a learner) failed.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Failure {
    /// A call into kestrel-core returned an error the check did not expect.
    Core(kestrel_core::Error),
    /// A condition of the check did not hold; the text says which.
    Check(&'static str),
}

impl From<kestrel_core::Error> for Failure {
    fn from(e: kestrel_core::Error) -> Self {
        Failure::Core(e)
    }
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Failure::Core(e) => write!(f, "kestrel-core error: {e}"),
            Failure::Check(what) => write!(f, "check failed: {what}"),
        }
    }
}

/// `Ok` when `condition` holds, otherwise [`Failure::Check`]`(what)`.
pub fn ensure(condition: bool, what: &'static str) -> Result<(), Failure> {
    if condition { Ok(()) } else { Err(Failure::Check(what)) }
}

/// Counts checks, printing `test NAME ... ok|FAILED` for each and `N passed, N failed` at
/// the end, as libtest does. `tests/kernels_linalg.rs` shows the use: `Tests::default()`,
/// one [`run`](Self::run) per check, then [`finish`](Self::finish).
#[cfg(feature = "qemu")]
#[derive(Debug, Default)]
pub struct Tests {
    passed: u32,
    failed: u32,
}

#[cfg(feature = "qemu")]
impl Tests {
    /// Runs one check and prints its outcome (and, on failure, the reason).
    pub fn run(&mut self, name: &str, check: impl FnOnce() -> Result<(), Failure>) {
        self.record(name, check());
    }

    /// Counts and prints one outcome. Kept out of line: `run` is instantiated once per
    /// check, and each inlined copy of the printing would cost flash (a test binary of
    /// the M4F build overflowed its 128 KiB by 92 bytes with it inlined).
    #[inline(never)]
    fn record(&mut self, name: &str, outcome: Result<(), Failure>) {
        match outcome {
            Ok(()) => {
                self.passed += 1;
                println!("test {name} ... ok");
            }
            Err(failure) => {
                self.failed += 1;
                println!("test {name} ... FAILED");
                println!("    {failure}");
            }
        }
    }

    /// Prints `N passed, N failed` and exits: with success only when nothing failed.
    pub fn finish(self) -> ! {
        println!("{} passed, {} failed", self.passed, self.failed);
        exit(self.failed == 0)
    }
}

#[cfg(feature = "qemu")]
#[panic_handler]
fn panic(info: &core::panic::PanicInfo) -> ! {
    eprintln!("{info}");
    exit(false)
}

/// # Safety
/// Called by the hardware (through cortex-m-rt's trampoline) on a hard fault only.
#[cfg(all(feature = "qemu", target_arch = "arm"))]
#[cortex_m_rt::exception]
unsafe fn HardFault(frame: &cortex_m_rt::ExceptionFrame) -> ! {
    eprintln!("HardFault: {frame:?}");
    exit(false)
}

/// Every exception that has no handler of its own (all of them here): riscv-rt's trap entry
/// saves the caller-saved registers into `frame` and calls this.
#[cfg(all(feature = "qemu", target_arch = "riscv32"))]
#[unsafe(export_name = "ExceptionHandler")]
extern "C" fn exception(frame: &riscv_rt::TrapFrame) -> ! {
    use riscv::register::{mcause, mepc, mtval};
    eprintln!(
        "Exception: mcause {}, mepc {:#010x}, mtval {:#010x}: {frame:x?}",
        mcause::read().code(),
        mepc::read(),
        mtval::read()
    );
    exit(false)
}
