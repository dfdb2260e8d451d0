//! Executed instructions per learner operation, in the demo's configuration (SLKL and SVM:
//! window 128, 32 centres, d = 3; novelty: window 256, 32 centres, d = 4; f32), counted
//! under QEMU `-icount` by SysTick on a Cortex-M and by `minstret` on a RISC-V (see
//! `kestrel_firmware_demo::icount`). Run by `measure.sh`, which passes `-icount`; under the
//! plain runner of `.cargo/config.toml` the numbers are host time, not instructions.
//!
//! It builds the demo's learners in the same statics, warms them up on [`WARM_UP`]
//! samples of the simulated sensor (in fault mode, as the demo's; its first fault comes
//! later) exactly as the demo does (read, predict, push, steps; score, then learn unless
//! flagged), then measures [`SAMPLES`] more iterations of the demo's loop operation by
//! operation — and, before them, a rank-1 update and downdate of a 16 × 16 factor alone,
//! the scale of the demo's active set — and prints one line per operation:
//! `measure NAME: mean M, min A, max B, n N` (instructions; `mean` rounded). The novelty
//! detector's warm-up is as long as [`WARM_UP`]: every score measured is against a full
//! window and a threshold.

#![no_std]
#![no_main]

use kestrel_core::cholesky::ArrayCholesky;
use kestrel_core::dcd::Row;
use kestrel_core::slkl::Case;
use kestrel_core::{Cholesky, Rng};
use kestrel_firmware_demo::icount::{self, Counter};
use kestrel_firmware_demo::learners::Vibration;
use kestrel_firmware_demo::sensor::{ADDRESS, Mpu6050};
use kestrel_firmware_demo::sim::{DEMO_SEED, SimulatedMpu6050};
use kestrel_firmware_demo::{Failure, entry, exit, learners};
use semihosting::println;

/// Samples before measuring: two windows.
const WARM_UP: u32 = 256;
/// Samples measured.
const SAMPLES: u32 = 256;
/// The most SLKL steps per arrival, as in the demo.
const SLKL_STEPS: usize = 4;

/// Count, sum, min and max of one operation's instruction counts.
#[derive(Clone, Copy, Debug)]
struct Stat {
    name: &'static str,
    n: u64,
    sum: u64,
    min: u64,
    max: u64,
}

impl Stat {
    const fn new(name: &'static str) -> Self {
        Stat { name, n: 0, sum: 0, min: u64::MAX, max: 0 }
    }
    fn add(&mut self, instructions: Option<u64>) -> Result<(), Failure> {
        let count = instructions.ok_or(Failure::Check("an operation ran past SysTick's 2^24 ticks"))?;
        self.n += 1;
        self.sum += count;
        self.min = self.min.min(count);
        self.max = self.max.max(count);
        Ok(())
    }
    fn print(&self) {
        if let Some(mean) = (self.sum + self.n / 2).checked_div(self.n) {
            println!("measure {}: mean {}, min {}, max {}, n {}", self.name, mean, self.min, self.max, self.n);
        }
    }
}

/// Order of the factor whose rank-1 changes are measured alone: the scale of the demo's
/// active set.
const FACTOR: usize = 16;

/// A rank-1 update then the downdate of the same vector, each measured, of the factor of
/// `2I + vvᵀ` (`v` random), for [`SAMPLES`] random vectors.
fn measure_factor_changes(counter: &mut Counter) -> Result<(), Failure> {
    let mut rng = Rng::seed_from_u64(7);
    let mut a = [0.0f32; FACTOR * FACTOR];
    let v: [f32; FACTOR] = core::array::from_fn(|_| rng.normal::<f32>());
    for (i, row) in a.chunks_exact_mut(FACTOR).enumerate() {
        for (j, entry) in row.iter_mut().enumerate() {
            *entry = v[i] * v[j] + if i == j { 2.0 } else { 0.0 };
        }
    }
    let storage = [0.0f32; Cholesky::scalars_len(FACTOR)];
    let mut factor: ArrayCholesky<f32, { Cholesky::scalars_len(FACTOR) }> =
        Cholesky::from_matrix_in(storage, FACTOR, &a, FACTOR)?;
    let mut stats = [Stat::new("cholesky_update_16"), Stat::new("cholesky_downdate_16")];
    for _ in 0..SAMPLES {
        let x: [f32; FACTOR] = core::array::from_fn(|_| rng.normal::<f32>());
        let (updated, count) = counter.measure(|| factor.rank_one_update(&x, 1.0));
        updated?;
        stats[0].add(count)?;
        let (downdated, count) = counter.measure(|| factor.rank_one_update(&x, -1.0));
        downdated?;
        stats[1].add(count)?;
    }
    for stat in &stats {
        stat.print();
    }
    Ok(())
}

#[entry]
fn main() -> ! {
    match run() {
        Ok(()) => exit(true),
        Err(e) => {
            println!("measure: {e}");
            exit(false)
        }
    }
}

fn run() -> Result<(), Failure> {
    let mut counter = Counter::take().ok_or(Failure::Check("the instruction counter was taken before"))?;
    let mut calibration = Stat::new("calibration_100_nops");
    calibration.add(
        counter
            .measure(|| {
                for _ in 0..25 {
                    icount::nop();
                    icount::nop();
                    icount::nop();
                    icount::nop();
                }
            })
            .1,
    )?;
    calibration.print();
    // The transcendentals under the learners, on inputs the optimiser cannot see.
    let x = core::hint::black_box(0.7f32);
    let mut math = [Stat::new("libm_expf"), Stat::new("libm_sqrtf"), Stat::new("f32_hypot")];
    math[0].add(counter.measure(|| libm::expf(-x)).1)?;
    math[1].add(counter.measure(|| libm::sqrtf(x)).1)?;
    math[2].add(counter.measure(|| kestrel_core::Real::hypot(x, 1.3)).1)?;
    for stat in &math {
        stat.print();
    }
    measure_factor_changes(&mut counter)?;

    let mut sensor = Mpu6050::new(SimulatedMpu6050::new(ADDRESS, DEMO_SEED).with_faults(), ADDRESS);
    sensor.init().map_err(|_| Failure::Check("sensor init"))?;
    let regressor = learners::regressor()?;
    let classifier = learners::classifier()?;
    let novelty = learners::novelty()?;
    let mut vibration = Vibration::default();
    let mut rng = Rng::seed_from_u64(2025);
    let mut stats = [
        Stat::new("sensor_read"),
        Stat::new("slkl_predict"),
        Stat::new("slkl_window_update"),
        Stat::new("slkl_step_first_after_arrival"),
        Stat::new("slkl_step_later"),
        Stat::new("slkl_step_all"),
        Stat::new("slkl_step_stay_zero"),
        Stat::new("slkl_step_change"),
        Stat::new("slkl_step_enter"),
        Stat::new("slkl_step_leave"),
        Stat::new("slkl_step_unchanged"),
        Stat::new("svm_predict"),
        Stat::new("svm_arrival_32_steps"),
        Stat::new("svm_step"),
        Stat::new("demo_iteration"),
        Stat::new("novelty_score"),
        Stat::new("novelty_learn"),
        Stat::new("novelty_observe"),
    ];
    let mut active = 0;
    for t in 0..WARM_UP + SAMPLES {
        let measuring = t >= WARM_UP;
        let mut one = Stat::new("iteration");
        let (reading, n) = counter.measure(|| sensor.read());
        let reading = reading.map_err(|_| Failure::Check("sensor read"))?;
        let x = &reading.accel;
        let mut record = |i: usize, count: Option<u64>, stats: &mut [Stat]| -> Result<(), Failure> {
            if measuring {
                stats[i].add(count)?;
                one.add(count)?;
            }
            Ok(())
        };
        record(0, n, &mut stats)?;
        let (prediction, n) = counter.measure(|| regressor.predict(x));
        prediction?;
        record(1, n, &mut stats)?;
        let (alarm, n) = counter.measure(|| classifier.predict(Row::Dense(x)));
        alarm?;
        record(11, n, &mut stats)?;
        let (pushed, n) = counter.measure(|| regressor.push(x, reading.temperature));
        pushed?;
        record(2, n, &mut stats)?;
        // As `SlklWindow::learn` in the demo: steps until converged, at most SLKL_STEPS.
        for k in 0..SLKL_STEPS {
            if regressor.converged() {
                break;
            }
            let (step, n) = counter.measure(|| regressor.step());
            let step = step?;
            record(if k == 0 { 3 } else { 4 }, n, &mut stats)?;
            record(5, n, &mut stats)?;
            let case = match step.case {
                Case::StayZero => 6,
                Case::Change => 7,
                Case::Enter => 8,
                Case::Leave => 9,
                _ => 10,
            };
            record(case, n, &mut stats)?;
        }
        let label = if reading.motion { 1 } else { -1 };
        let (pushed, n) = counter.measure(|| classifier.push(Row::Dense(x), label, &mut rng));
        pushed?;
        record(12, n, &mut stats)?;
        // As `learners::flag_then_learn`: score, then learn unless flagged.
        if let Some(features) = vibration.features(x) {
            let (assessment, n) = counter.measure(|| novelty.assess(&features));
            let assessment = assessment?;
            match assessment.score() {
                Some(score) if score.anomaly => {
                    record(15, n, &mut stats)?;
                    let (observed, n) = counter.measure(|| novelty.observe(score.distance2));
                    observed?;
                    record(17, n, &mut stats)?;
                }
                scored => {
                    if scored.is_some() {
                        record(15, n, &mut stats)?;
                    }
                    let (learned, n) = counter.measure(|| novelty.learn_assessed(&features, &assessment));
                    learned?;
                    record(16, n, &mut stats)?;
                }
            }
        }
        // One more DCD step, outside the demo's iteration.
        let ((), n) = counter.measure(|| classifier.steps(1, &mut rng));
        if measuring {
            stats[13].add(n)?;
            stats[14].add(Some(one.sum))?;
            active += regressor.active_len();
        }
    }
    println!("measure m0_mean: {}", (active + SAMPLES as usize / 2) / SAMPLES as usize);
    for stat in &stats {
        stat.print();
    }
    Ok(())
}
