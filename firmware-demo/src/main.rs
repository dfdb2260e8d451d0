//! The demo: a microcontroller learns on the device from a motion sensor read through
//! embedded-hal, test-then-train, in a RAM budget fixed at link time.
//!
//! Each of [`DEMO_SAMPLES`] iterations reads one sample from the MPU-6050-style sensor (under
//! QEMU the simulated part of `kestrel_firmware_demo::sim`, a machine whose temperature
//! follows its orientation under a slow drift, in fault mode: the accelerometer fails in a
//! few short bursts), then
//!
//! 1. **predicts**: the die temperature from the three acceleration axes with windowed
//!    SLKL, and the tilt alarm with the windowed DCD linear SVM;
//! 2. **learns**: the sample enters both windows (the oldest leaves), then each learner
//!    steps until its stopping rule holds on the window or it has taken its most steps
//!    ([`SLKL_STEPS`] coordinate steps for SLKL, the SVM its configured DCD steps);
//! 3. **flags, then learns unless flagged**: the novelty detector scores the reading's
//!    vibration features (`learners::Vibration`); a flagged reading is not learned (its
//!    score still counts toward the threshold), any other enters the detector's window —
//!    the policy of `kestrel stream --learner novelty`. Flags are counted against the
//!    simulator's fault schedule (`sim::fault_at`).
//!
//! Every [`BLOCK`] samples it prints the block's rolling errors over semihosting beside
//! naive baselines (the window's mean temperature; the block's majority class), and at the
//! end the detector's counts and the peak stack. It exits with success when, after the
//! first window, SLKL's RMSE is below half the baseline's and the SVM's error rate below
//! half the majority class's, and the detector flagged at least 3/4 of the faulty readings
//! with false alarms on at most 1 % of the readings (the share `q = 0.99` allows).
//!
//! `cargo run --release` (from this crate's directory) boots it in QEMU on the Cortex-M4F;
//! add `--target thumbv7m-none-eabi` for the Cortex-M3 build without FPU,
//! `--target riscv32imac-unknown-none-elf` for the RISC-V build.

#![no_std]
#![no_main]

use core::fmt;

use embedded_hal::i2c::ErrorKind;
use kestrel_core::Rng;
use kestrel_core::dcd::Row;
use kestrel_firmware_demo::learners::{Vibration, flag_then_learn};
use kestrel_firmware_demo::report::Fixed;
use kestrel_firmware_demo::score::Score;
use kestrel_firmware_demo::sensor::{self, ADDRESS, Mpu6050};
use kestrel_firmware_demo::sim::{self, DEMO_SAMPLES, DEMO_SEED, SimulatedMpu6050};
use kestrel_firmware_demo::{Failure, entry, exit, learners, stack};
use semihosting::println;

/// Samples per report line.
const BLOCK: u32 = 256;
/// The most SLKL coordinate steps after each arrival.
const SLKL_STEPS: usize = 4;

/// Why the demo stopped.
#[derive(Debug)]
enum DemoError {
    Sensor(sensor::Error<ErrorKind>),
    Learner(Failure),
}

impl From<sensor::Error<ErrorKind>> for DemoError {
    fn from(e: sensor::Error<ErrorKind>) -> Self {
        DemoError::Sensor(e)
    }
}

impl From<Failure> for DemoError {
    fn from(e: Failure) -> Self {
        DemoError::Learner(e)
    }
}

impl From<kestrel_core::Error> for DemoError {
    fn from(e: kestrel_core::Error) -> Self {
        DemoError::Learner(Failure::Core(e))
    }
}

impl fmt::Display for DemoError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DemoError::Sensor(e) => write!(f, "sensor: {e}"),
            DemoError::Learner(e) => write!(f, "learner: {e}"),
        }
    }
}

/// The novelty detector's flags against the truth.
#[derive(Clone, Copy, Debug, Default)]
struct Detections {
    scored: u32,
    flagged: u32,
    faulty: u32,
    detected: u32,
}

impl Detections {
    fn add(&mut self, flagged: bool, faulty: bool) {
        self.scored += 1;
        self.flagged += u32::from(flagged);
        self.faulty += u32::from(faulty);
        self.detected += u32::from(flagged && faulty);
    }
    fn false_alarms(&self) -> u32 {
        self.flagged - self.detected
    }
    /// At least 3/4 of the faulty readings flagged, false alarms on at most 1 % of the
    /// readings.
    fn detects(&self) -> bool {
        4 * self.detected >= 3 * self.faulty && 100 * self.false_alarms() <= self.scored
    }
}

#[entry]
fn main() -> ! {
    match run() {
        Ok(passed) => exit(passed),
        Err(e) => {
            println!("kestrel demo: {e}");
            exit(false)
        }
    }
}

fn run() -> Result<bool, DemoError> {
    let mut sensor = Mpu6050::new(SimulatedMpu6050::new(ADDRESS, DEMO_SEED).with_faults(), ADDRESS);
    sensor.init()?;
    let regressor = learners::regressor()?;
    let classifier = learners::classifier()?;
    let novelty = learners::novelty()?;
    println!(
        "kestrel demo: SLKL window {} x {} features, {} centres ({} B of statics); DCD SVM window {} ({} B); novelty window {} x {} features, {} centres ({} B)",
        learners::WINDOW,
        learners::DIM,
        learners::CENTRES,
        core::mem::size_of_val(&*regressor) + (learners::SLKL_SCALARS_LEN + learners::SLKL_INDICES_LEN) * 4,
        learners::WINDOW,
        core::mem::size_of_val(&*classifier) + learners::SVM_SCALARS_LEN * 4,
        learners::NOVELTY_WINDOW,
        learners::NOVELTY_DIM,
        learners::NOVELTY_CENTRES,
        core::mem::size_of_val(&*novelty)
            + (learners::NOVELTY_SCALARS_LEN + learners::NOVELTY_CENTRES + learners::NOVELTY_WINDOW) * 4,
    );
    let mut rng = Rng::seed_from_u64(DEMO_SEED + 1);
    let (mut block, mut total) = (Score::default(), Score::default());
    let (mut vibration, mut detections) = (Vibration::default(), Detections::default());
    for t in 0..DEMO_SAMPLES {
        let reading = sensor.read()?;
        let x = &reading.accel;
        // Test...
        let (predicted, baseline) =
            if regressor.is_empty() { (0.0, 0.0) } else { (regressor.predict(x)?, regressor.mean()) };
        let alarm_predicted = classifier.predict(Row::Dense(x))? == 1;
        // ...then train.
        regressor.learn(x, reading.temperature, SLKL_STEPS)?;
        classifier.push(Row::Dense(x), if reading.motion { 1 } else { -1 }, &mut rng)?;
        if let Some(features) = vibration.features(x) {
            let flagged = flag_then_learn(novelty, &features)?;
            // The change since the previous reading carries that reading's fault too.
            let faulty = sim::fault_at(t).is_some() || t.checked_sub(1).and_then(sim::fault_at).is_some();
            detections.add(flagged, faulty);
        }
        if t >= learners::WINDOW as u32 {
            let wrong = alarm_predicted != reading.motion;
            let errors = (predicted - reading.temperature, baseline - reading.temperature);
            block.add(errors.0, errors.1, wrong, reading.motion);
            total.add(errors.0, errors.1, wrong, reading.motion);
        }
        if (t + 1) % BLOCK == 0 && block.samples > 0 {
            println!(
                "samples {:>4}: temperature RMSE {} C (window mean: {} C), m0 = {:>2}; tilt alarm errors {} % (majority class: {} %)",
                t + 1,
                Fixed::new(block.rmse(), 3),
                Fixed::new(block.baseline_rmse(), 3),
                regressor.active_len(),
                Fixed::new(block.error_rate(), 1),
                Fixed::new(block.majority_error_rate(), 1),
            );
            block = Score::default();
        }
    }
    let learned = total.rmse() < 0.5 * total.baseline_rmse() && total.error_rate() < 0.5 * total.majority_error_rate();
    println!(
        "after the first window: temperature RMSE {} C vs {} C, alarm errors {} % vs {} %: {}",
        Fixed::new(total.rmse(), 3),
        Fixed::new(total.baseline_rmse(), 3),
        Fixed::new(total.error_rate(), 1),
        Fixed::new(total.majority_error_rate(), 1),
        if learned { "learning works" } else { "NOT LEARNING" }
    );
    println!(
        "novelty: flagged {} of {} readings; faulty {}, detected {}, false alarms {}, centres {}: {}",
        detections.flagged,
        detections.scored,
        detections.faulty,
        detections.detected,
        detections.false_alarms(),
        novelty.mass().centres_len(),
        if detections.detects() { "faults detected" } else { "FAULTS MISSED" }
    );
    println!("peak stack: {} B of {} B", stack::peak_bytes(), stack::capacity_bytes());
    Ok(learned && detections.detects())
}
