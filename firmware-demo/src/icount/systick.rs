//! Executed-instruction counts on a Cortex-M: SysTick under QEMU's `-icount`.
//!
//! With `-icount shift=7,align=off,sleep=off` QEMU advances its virtual clock by exactly
//! 2⁷ ns per executed instruction, and SysTick clocked from the core (25 MHz on the MPS2
//! boards, 40 ns per tick; 16 MHz on the micro:bit, the Cortex-M0's machine, 62.5 ns)
//! counts that clock: instructions = ticks · 40 / 128 (ticks · 62.5 / 128). The count
//! is repeatable bit for bit across runs; it is an instruction count, not Cortex-M cycles
//! (QEMU models no pipeline or memory timing). Without `-icount`, SysTick follows host time
//! and the figures mean nothing. (QEMU 7.2 does not model the DWT cycle counter.)
//!
//! [`Counter::measure`] restarts the 24-bit down-counter, runs the closure, and reports
//! the ticks elapsed; `COUNTFLAG` tells when 2²⁴ ticks (≈ 5.2 million instructions at
//! 25 MHz, 8.2 million at 16 MHz) were exceeded, and the count is then refused.
//! [`Counter::take`] measures the cost of the measurement itself once, and every count has
//! it subtracted.

use cortex_m::Peripherals;
use cortex_m::peripheral::SYST;
use cortex_m::peripheral::syst::SystClkSource;

/// SysTick's period: 2²⁴ ticks.
const RELOAD: u32 = 0x00FF_FFFF;
/// Nanoseconds per SysTick tick, as numerator and denominator: 40 at the MPS2 boards'
/// 25 MHz; 62.5 at the micro:bit's 16 MHz (build.rs sets `systick_16mhz` for the
/// Cortex-M0's target).
#[cfg(not(systick_16mhz))]
const NS_PER_TICK: (u64, u64) = (40, 1);
#[cfg(systick_16mhz)]
const NS_PER_TICK: (u64, u64) = (125, 2);
/// Nanoseconds per instruction with `-icount shift=7`.
const NS_PER_INSTRUCTION: u64 = 1 << 7;

/// SysTick set up as a free-running instruction counter.
#[allow(missing_debug_implementations)] // `SYST` has no `Debug`
pub struct Counter {
    syst: SYST,
    /// Instructions of a measurement of nothing, taken off every count.
    overhead: u64,
}

impl Counter {
    /// Takes SysTick (`None` when the core peripherals were taken before) and sets it up:
    /// core clock, largest reload, no interrupt; calibrates the overhead.
    pub fn take() -> Option<Self> {
        let mut syst = Peripherals::take()?.SYST;
        syst.disable_interrupt();
        syst.set_clock_source(SystClkSource::Core);
        syst.set_reload(RELOAD);
        syst.clear_current();
        syst.enable_counter();
        let mut counter = Counter { syst, overhead: 0 };
        counter.overhead = counter.measure(|| ()).1.unwrap_or(0);
        Some(counter)
    }

    /// Runs `f` and returns its result with the instructions it executed, or `None` when
    /// it ran for more than 2²⁴ ticks.
    pub fn measure<R>(&mut self, f: impl FnOnce() -> R) -> (R, Option<u64>) {
        self.syst.clear_current();
        let _ = self.syst.has_wrapped(); // reading the flag clears it
        let start = SYST::get_current();
        let result = core::hint::black_box(f());
        let end = SYST::get_current();
        let wrapped = self.syst.has_wrapped();
        let ticks = u64::from(start.wrapping_sub(end) & RELOAD);
        let (ns, per) = NS_PER_TICK;
        let instructions = (ticks * ns + per * NS_PER_INSTRUCTION / 2) / (per * NS_PER_INSTRUCTION);
        (result, (!wrapped).then(|| instructions.saturating_sub(self.overhead)))
    }
}
