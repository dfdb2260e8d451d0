//! The register bursts the demo reads, for the C demo (`firmware-demo-c`): the simulated
//! MPU-6050 of the demo's seed in fault mode, initialised by the driver as the demo
//! initialises it, then read [`DEMO_SAMPLES`] times with the driver's burst (`INT_STATUS` …
//! `TEMP_OUT_L`); each burst is printed as `trace B0 B1 … B8 F` (the bytes in hex, then 1
//! when the accelerometer was faulty in that sample, [`sim::fault_at`], else 0). The C demo
//! replays these bytes through its own driver, so both demos learn from the same readings,
//! and scores its novelty detector against the same faults.

#![no_std]
#![no_main]

use embedded_hal::i2c::I2c;
use kestrel_firmware_demo::sensor::{ADDRESS, BURST_LEN, Mpu6050, reg};
use kestrel_firmware_demo::sim::{self, DEMO_SAMPLES, DEMO_SEED, SimulatedMpu6050};
use kestrel_firmware_demo::{entry, exit};
use semihosting::{print, println};

#[entry]
fn main() -> ! {
    let mut sensor = Mpu6050::new(SimulatedMpu6050::new(ADDRESS, DEMO_SEED).with_faults(), ADDRESS);
    if sensor.init().is_err() {
        println!("sensor_trace: the simulated sensor does not answer");
        exit(false);
    }
    let mut bus = sensor.release();
    let mut burst = [0u8; BURST_LEN];
    for t in 0..DEMO_SAMPLES {
        if bus.write_read(ADDRESS, &[reg::INT_STATUS], &mut burst).is_err() {
            exit(false);
        }
        print!("trace");
        for byte in burst {
            print!(" {byte:02x}");
        }
        println!(" {}", u8::from(sim::fault_at(t).is_some()));
    }
    exit(true)
}
