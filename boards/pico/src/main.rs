//! Kestrel on a Raspberry Pi Pico: the firmware demo's learners (`kestrel-firmware-demo`'s
//! `learners`, in the same statics) on a real MPU-6050 read over I²C by the same
//! embedded-hal driver (`sensor::Mpu6050`), through the RP2040's HAL — a Cortex-M0+ without
//! FPU or hardware divide.
//!
//! Wiring: the MPU-6050 (a GY-521 board) on I2C0, SDA to GP4 (pin 6), SCL to GP5 (pin 7),
//! VCC to 3V3 (pin 36), GND to GND, `AD0` low (address 0x68). The sensor's motion
//! interrupt is enabled (`MOT_THR`, `MOT_DUR`, `INT_ENABLE`, below) so that `INT_STATUS`'s
//! `MOT_INT` flags motion, the tilt-alarm label the SVM learns.
//!
//! For ever, at the rate the learners allow (≈ 8 samples/s at 125 MHz: a demo iteration is
//! ≈ 15 M instructions on a Cortex-M0, measured under QEMU): read a sample; predict the die
//! temperature from the three axes (windowed SLKL) and the motion flag (windowed DCD SVM);
//! learn both; score the reading's vibration features with the novelty detector and learn
//! them unless flagged. Every `BLOCK` samples it prints over RTT the block's temperature
//! RMSE beside the window mean's, the SVM's error rate beside the majority class's, the
//! active centres and the readings flagged. A sensor error is printed and the sample
//! skipped; a learner error stops the loop with its message.

#![no_std]
#![no_main]

use kestrel_core::Rng;
use kestrel_core::dcd::Row;
use kestrel_firmware_demo::Failure;
use kestrel_firmware_demo::learners::{self, Vibration, flag_then_learn};
use kestrel_firmware_demo::report::Fixed;
use kestrel_firmware_demo::score::Score;
use kestrel_firmware_demo::sensor::{ADDRESS, Mpu6050};
use rp_pico::entry;
use rp_pico::hal::fugit::RateExtU32;
use rp_pico::hal::gpio::{FunctionI2C, Pin, PullUp};
use rp_pico::hal::{self, pac};
use rtt_target::{rprintln, rtt_init_print};

/// Samples per report line.
const BLOCK: u32 = 256;
/// The most SLKL coordinate steps after each arrival, as in the demo.
const SLKL_STEPS: usize = 4;
/// Seed of the SVM's coordinate order.
const SEED: u64 = 2026;

/// MPU-6050 motion detection (register map rev. 4.2): `MOT_THR` (0x1F) in 2 mg steps,
/// `MOT_DUR` (0x20) in ms, `INT_ENABLE` (0x38) bit 6 `MOT_EN`.
const MOTION: [(u8, u8); 3] = [(0x1F, 20), (0x20, 1), (0x38, 1 << 6)];

#[entry]
fn main() -> ! {
    rtt_init_print!();
    if let Err(e) = run() {
        rprintln!("kestrel pico: {}", e);
    }
    loop {
        cortex_m::asm::wfi();
    }
}

fn run() -> Result<(), Failure> {
    let mut pac = pac::Peripherals::take().ok_or(Failure::Check("the peripherals were taken before"))?;
    let mut watchdog = hal::Watchdog::new(pac.WATCHDOG);
    let clocks = hal::clocks::init_clocks_and_plls(
        rp_pico::XOSC_CRYSTAL_FREQ,
        pac.XOSC,
        pac.CLOCKS,
        pac.PLL_SYS,
        pac.PLL_USB,
        &mut pac.RESETS,
        &mut watchdog,
    )
    .map_err(|_| Failure::Check("the clocks did not start"))?;
    let sio = hal::Sio::new(pac.SIO);
    let pins = rp_pico::Pins::new(pac.IO_BANK0, pac.PADS_BANK0, sio.gpio_bank0, &mut pac.RESETS);
    let sda: Pin<_, FunctionI2C, PullUp> = pins.gpio4.reconfigure();
    let scl: Pin<_, FunctionI2C, PullUp> = pins.gpio5.reconfigure();
    let i2c = hal::I2C::i2c0(pac.I2C0, sda, scl, 400.kHz(), &mut pac.RESETS, &clocks.system_clock);
    let mut sensor = Mpu6050::new(i2c, ADDRESS);
    let set_up = sensor.init().and_then(|()| MOTION.iter().try_for_each(|&(r, v)| sensor.write_register(r, v)));
    if let Err(e) = set_up {
        rprintln!("kestrel pico: the MPU-6050 does not answer: {}", e);
        return Err(Failure::Check("no sensor"));
    }
    let regressor = learners::regressor()?;
    let classifier = learners::classifier()?;
    let novelty = learners::novelty()?;
    rprintln!(
        "kestrel pico: SLKL window {} x {}, {} centres; DCD SVM window {}; novelty window {}, {} centres",
        learners::WINDOW,
        learners::DIM,
        learners::CENTRES,
        learners::WINDOW,
        learners::NOVELTY_WINDOW,
        learners::NOVELTY_CENTRES
    );
    let mut rng = Rng::seed_from_u64(SEED);
    let (mut block, mut flagged, mut vibration) = (Score::default(), 0u32, Vibration::default());
    for t in 1u32.. {
        let reading = match sensor.read() {
            Ok(reading) => reading,
            Err(e) => {
                rprintln!("sample {}: {} (skipped)", t, e);
                continue;
            }
        };
        let x = &reading.accel;
        // Test...
        let (predicted, baseline) =
            if regressor.is_empty() { (0.0, 0.0) } else { (regressor.predict(x)?, regressor.mean()) };
        let motion_predicted = classifier.predict(Row::Dense(x))? == 1;
        // ...then train.
        regressor.learn(x, reading.temperature, SLKL_STEPS)?;
        classifier.push(Row::Dense(x), if reading.motion { 1 } else { -1 }, &mut rng)?;
        if let Some(features) = vibration.features(x) {
            flagged += u32::from(flag_then_learn(novelty, &features)?);
        }
        let (error, baseline_error) = (predicted - reading.temperature, baseline - reading.temperature);
        block.add(error, baseline_error, motion_predicted != reading.motion, reading.motion);
        if t % BLOCK == 0 {
            rprintln!(
                "samples {}: temperature RMSE {} C (window mean: {} C), m0 = {}; motion errors {} % (majority class: {} %); flagged {}",
                t,
                Fixed::new(block.rmse(), 3),
                Fixed::new(block.baseline_rmse(), 3),
                regressor.active_len(),
                Fixed::new(block.error_rate(), 1),
                Fixed::new(block.majority_error_rate(), 1),
                flagged
            );
            (block, flagged) = (Score::default(), 0);
        }
    }
    Ok(())
}

#[panic_handler]
fn panic(info: &core::panic::PanicInfo) -> ! {
    rprintln!("{}", info);
    loop {
        cortex_m::asm::wfi();
    }
}
