//! Kestrel on a Cortex-M: what the demo, the measurement binary and the on-device tests
//! share.
//!
//! - [`sensor`]: an MPU-6050-style motion-sensor driver, generic over embedded-hal 1.0's
//!   `I2c`; [`sim`]: the simulated sensor and machine that implement `I2c` under QEMU.
//! - [`learners`]: the demo's windowed SLKL regressor and DCD SVM in statics sized by
//!   kestrel-core's `const fn`s.
//! - [`icount`]: instruction counts from SysTick under QEMU `-icount`; [`stack`]: peak
//!   stack by stack painting; [`report`]: fixed-point printing.
//! - A panic handler and a HardFault handler that report over semihosting and exit with
//!   failure, a semihosting [`exit`], and [`Tests`], a tiny runner for `harness = false`
//!   test binaries.
//!
//! Without the HardFault handler, a hard-float binary booted on a CPU without an FPU would
//! fault at its first floating-point instruction and QEMU would hang. Both handlers write to
//! semihosting's stderr, so a fault inside an `hprintln!` (which holds stdout) still gets out.
//!
//! A binary links these handlers by using anything from this crate.

#![no_std]

pub mod icount;
pub mod learners;
pub mod report;
pub mod sensor;
pub mod sim;
pub mod stack;

use core::fmt;
use core::panic::PanicInfo;

use cortex_m_rt::{ExceptionFrame, exception};
use cortex_m_semihosting::{debug, heprintln, hprintln};

/// Ends the program, reporting success or failure to the host; under QEMU with
/// `-semihosting-config enable=on,target=native`, QEMU exits with status 0 or 1.
pub fn exit(success: bool) -> ! {
    debug::exit(if success { debug::EXIT_SUCCESS } else { debug::EXIT_FAILURE });
    // Reached only if a debugger resumes the program after the exit request.
    loop {
        cortex_m::asm::wfi();
    }
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
#[derive(Debug, Default)]
pub struct Tests {
    passed: u32,
    failed: u32,
}

impl Tests {
    /// Runs one check and prints its outcome (and, on failure, the reason).
    pub fn run(&mut self, name: &str, check: impl FnOnce() -> Result<(), Failure>) {
        match check() {
            Ok(()) => {
                self.passed += 1;
                hprintln!("test {name} ... ok");
            }
            Err(failure) => {
                self.failed += 1;
                hprintln!("test {name} ... FAILED");
                hprintln!("    {failure}");
            }
        }
    }

    /// Prints `N passed, N failed` and exits: with success only when nothing failed.
    pub fn finish(self) -> ! {
        hprintln!("{} passed, {} failed", self.passed, self.failed);
        exit(self.failed == 0)
    }
}

#[panic_handler]
fn panic(info: &PanicInfo) -> ! {
    heprintln!("{info}");
    exit(false)
}

/// # Safety
/// Called by the hardware (through cortex-m-rt's trampoline) on a hard fault only.
#[exception]
unsafe fn HardFault(frame: &ExceptionFrame) -> ! {
    heprintln!("HardFault: {frame:?}");
    exit(false)
}
