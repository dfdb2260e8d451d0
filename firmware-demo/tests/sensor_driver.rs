//! The embedded-hal sensor driver and the simulated sensor, on the device.
//!
//! The driver is checked against two `I2c` implementations: [`FixedBus`], a register file
//! written by hand here (known bytes → known physical values), and the simulated
//! MPU-6050 of `kestrel_firmware_demo::sim` (readings within a quantisation step of the
//! scene's true values; power-on sleep; clear-on-read status; determinism; drift; the fault
//! mode).

#![no_std]
#![no_main]

use embedded_hal::i2c::{ErrorKind, ErrorType, I2c, NoAcknowledgeSource, Operation};
use kestrel_firmware_demo::sensor::{self, ADDRESS, Error, Mpu6050, Reading, reg};
use kestrel_firmware_demo::sim::{FAULT_LEN, FAULTS, Fault, Scene, SimulatedMpu6050, fault_at};
use kestrel_firmware_demo::{Failure, Tests, ensure, entry};

#[entry]
fn main() -> ! {
    let mut tests = Tests::default();
    tests.run("init_checks_identity_wakes_and_sets_range", init_wakes);
    tests.run("wrong_address_is_a_bus_error", wrong_address);
    tests.run("another_part_is_wrong_device", wrong_device);
    tests.run("known_register_bytes_convert_exactly", known_bytes);
    tests.run("extreme_register_bytes_stay_finite", extreme_bytes);
    tests.run("sleeping_sensor_reads_zeros_and_latches_nothing", sleeping);
    tests.run("readings_are_the_scene_within_one_count", readings_track_truth);
    tests.run("int_status_is_cleared_by_the_read", status_cleared);
    tests.run("scene_is_deterministic_per_seed", deterministic);
    tests.run("temperature_drifts_and_tilt_alarm_varies", drift_and_alarm);
    tests.run("register_writes_auto_increment_and_wrap", auto_increment);
    tests.run("fault_mode_changes_only_the_bursts_accelerations", fault_mode);
    tests.run("simulated_sensor_reports_its_faults", sensor_faults);
    tests.finish()
}

/// A hand-written register file on the bus: what the driver must decode.
struct FixedBus {
    registers: [u8; 128],
    pointer: usize,
}

impl FixedBus {
    fn new(who_am_i: u8, burst: [u8; sensor::BURST_LEN]) -> Self {
        let mut registers = [0u8; 128];
        registers[usize::from(reg::WHO_AM_I)] = who_am_i;
        registers[0x3A..0x43].copy_from_slice(&burst);
        FixedBus { registers, pointer: 0 }
    }
}

impl ErrorType for FixedBus {
    type Error = ErrorKind;
}

impl I2c for FixedBus {
    fn transaction(&mut self, address: u8, operations: &mut [Operation<'_>]) -> Result<(), ErrorKind> {
        if address != ADDRESS {
            return Err(ErrorKind::NoAcknowledge(NoAcknowledgeSource::Address));
        }
        for operation in operations {
            match operation {
                Operation::Write(bytes) => {
                    if let Some((&first, rest)) = bytes.split_first() {
                        self.pointer = usize::from(first & 0x7F);
                        for &b in rest {
                            self.registers[self.pointer] = b;
                            self.pointer = (self.pointer + 1) & 0x7F;
                        }
                    }
                }
                Operation::Read(buffer) => {
                    for b in buffer.iter_mut() {
                        *b = self.registers[self.pointer];
                        self.pointer = (self.pointer + 1) & 0x7F;
                    }
                }
            }
        }
        Ok(())
    }
}

fn sim_sensor(seed: u64) -> Mpu6050<SimulatedMpu6050> {
    Mpu6050::new(SimulatedMpu6050::new(ADDRESS, seed), ADDRESS)
}

fn bus_error<E>(_: Error<E>) -> Failure {
    Failure::Check("unexpected sensor error")
}

fn init_wakes() -> Result<(), Failure> {
    let mut driver = sim_sensor(1);
    ensure(driver.read_register(reg::PWR_MGMT_1).map_err(bus_error)? == sensor::SLEEP, "asleep at power-on")?;
    driver.init().map_err(bus_error)?;
    ensure(driver.read_register(reg::PWR_MGMT_1).map_err(bus_error)? == 0x01, "awake, PLL clock")?;
    ensure(driver.read_register(reg::ACCEL_CONFIG).map_err(bus_error)? == 0x00, "+-2 g")
}

fn wrong_address() -> Result<(), Failure> {
    let mut driver = Mpu6050::new(SimulatedMpu6050::new(ADDRESS, 1), 0x69);
    let expected = Err(Error::Bus(ErrorKind::NoAcknowledge(NoAcknowledgeSource::Address)));
    ensure(driver.init() == expected && driver.read().err() == expected.err(), "NACK on the address")
}

fn wrong_device() -> Result<(), Failure> {
    let mut driver = Mpu6050::new(FixedBus::new(0x70, [0; sensor::BURST_LEN]), ADDRESS);
    ensure(driver.init() == Err(Error::WrongDevice { found: 0x70 }), "WrongDevice { found: 0x70 }")?;
    ensure(driver.release().registers[usize::from(reg::PWR_MGMT_1)] == 0, "nothing written to another part")
}

/// x = 0x4000 (1 g), y = 0xC000 (−1 g), z = 0x2000 (0.5 g), T raw −521, MOT_INT set.
fn known_bytes() -> Result<(), Failure> {
    let burst = [sensor::MOT_INT, 0x40, 0x00, 0xC0, 0x00, 0x20, 0x00, 0xFD, 0xF7];
    let mut driver = Mpu6050::new(FixedBus::new(sensor::DEVICE_ID, burst), ADDRESS);
    driver.init().map_err(bus_error)?;
    let reading = driver.read().map_err(bus_error)?;
    let temperature = -521.0f32 / 340.0 + 36.53;
    ensure(reading.accel == [1.0, -1.0, 0.5], "accelerations in g")?;
    ensure(reading.temperature == temperature && reading.motion, "temperature and flag")?;
    let bus = driver.release();
    ensure(bus.registers[usize::from(reg::PWR_MGMT_1)] == 0x01, "init wrote PWR_MGMT_1 through the trait")
}

fn extreme_bytes() -> Result<(), Failure> {
    for burst in [[0xFF; sensor::BURST_LEN], [0x80, 0x80, 0, 0x7F, 0xFF, 0x80, 0, 0x7F, 0xFF]] {
        let r = Reading::from_burst(&burst);
        let finite = r.accel.iter().all(|a| a.is_finite() && a.abs() <= 2.0) && r.temperature.is_finite();
        ensure(finite, "any bytes give a finite reading within full scale")?;
    }
    Ok(())
}

fn sleeping() -> Result<(), Failure> {
    let mut driver = sim_sensor(2);
    let reading = driver.read().map_err(bus_error)?;
    ensure(reading == Reading::from_burst(&[0; sensor::BURST_LEN]), "all-zero registers")?;
    ensure(driver.release().last_truth().is_none(), "no sample latched while asleep")
}

/// Every reading is the scene's true sample to within half a count (plus rounding).
fn readings_track_truth() -> Result<(), Failure> {
    let mut driver = sim_sensor(3);
    driver.init().map_err(bus_error)?;
    let mut sim = driver.release();
    for _ in 0..300 {
        let mut driver = Mpu6050::new(sim, ADDRESS);
        let reading = driver.read().map_err(bus_error)?;
        sim = driver.release();
        let truth = sim.last_truth().ok_or(Failure::Check("a sample was latched"))?;
        for (a, t) in reading.accel.iter().zip(&truth.accel) {
            ensure((a - t).abs() <= 0.5 / sensor::COUNTS_PER_G + 1e-6, "acceleration within half a count")?;
        }
        let step = 0.5 / sensor::COUNTS_PER_DEGREE + 1e-4;
        ensure((reading.temperature - truth.temperature).abs() <= step, "temperature within half a count")?;
        ensure(reading.motion == truth.motion, "flag as latched")?;
    }
    Ok(())
}

/// After each burst the status register holds 0 (peeked without the bus, since a bus
/// read from `INT_STATUS` latches the next sample), though some samples raised the flag.
fn status_cleared() -> Result<(), Failure> {
    let mut driver = sim_sensor(4);
    driver.init().map_err(bus_error)?;
    let mut raised = 0;
    for _ in 0..100 {
        raised += u32::from(driver.read().map_err(bus_error)?.motion);
        let sim = driver.release();
        ensure(sim.register(reg::INT_STATUS) == 0, "INT_STATUS is 0 after a burst")?;
        driver = Mpu6050::new(sim, ADDRESS);
    }
    ensure(raised > 0, "the flag was raised in some bursts")
}

fn deterministic() -> Result<(), Failure> {
    let (mut a, mut b, mut c) = (Scene::new(9), Scene::new(9), Scene::new(10));
    let mut differs = false;
    for _ in 0..100 {
        let (x, y, z) = (a.next_sample(), b.next_sample(), c.next_sample());
        ensure(x == y, "same seed, same samples")?;
        differs |= x != z;
    }
    ensure(differs && a.time() == 100, "another seed, other noise")
}

/// The ambient drift `1.5·sin(2πt/3000) + t/2000` peaks near `t = 750` and bottoms out
/// near `t = 2250`: the mean temperatures over 200 samples around them differ by more than
/// 1 °C. The alarm is raised for 10-60 % of the samples.
fn drift_and_alarm() -> Result<(), Failure> {
    let mut scene = Scene::new(11);
    let (mut high, mut low, mut alarms) = (0.0f32, 0.0f32, 0u32);
    for t in 0..3000 {
        let s = scene.next_sample();
        high += if (650..850).contains(&t) { s.temperature } else { 0.0 };
        low += if (2150..2350).contains(&t) { s.temperature } else { 0.0 };
        alarms += u32::from(s.motion);
    }
    ensure((high - low) / 200.0 > 1.0, "drift over the run")?;
    ensure((300..1800).contains(&alarms), "alarm neither rare nor constant")
}

/// A multi-byte write fills consecutive registers; the pointer wraps from 0x7F to 0x00.
fn auto_increment() -> Result<(), Failure> {
    let mut sim = SimulatedMpu6050::new(ADDRESS, 5);
    sim.write(ADDRESS, &[0x10, 0xA1, 0xA2, 0xA3]).map_err(|_| Failure::Check("write"))?;
    ensure(sim.register(0x10) == 0xA1 && sim.register(0x12) == 0xA3, "consecutive registers")?;
    sim.write(ADDRESS, &[0x7F, 0xB1, 0xB2]).map_err(|_| Failure::Check("write"))?;
    ensure(sim.register(0x7F) == 0xB1 && sim.register(0x00) == 0xB2, "pointer wraps")?;
    sim.write(ADDRESS, &[reg::WHO_AM_I, 0x00]).map_err(|_| Failure::Check("write"))?;
    ensure(sim.register(reg::WHO_AM_I) == sensor::DEVICE_ID, "WHO_AM_I read-only")
}

/// The scene in fault mode is the healthy scene but for the accelerations of the bursts,
/// each changed as its fault says; the truth names the fault of exactly those samples.
fn fault_mode() -> Result<(), Failure> {
    let (mut healthy, mut faulty) = (Scene::new(12), Scene::new(12).with_faults());
    let end = FAULTS.iter().map(|&(start, _)| start + FAULT_LEN).max().unwrap_or(0);
    let mut faults = 0;
    for t in 0..end {
        let (h, f) = (healthy.next_sample(), faulty.next_sample());
        ensure(h.fault.is_none() && f.fault == fault_at(t), "the truth names the fault of its sample")?;
        ensure(h.temperature == f.temperature && h.motion == f.motion, "the machine is unchanged")?;
        let changed = match f.fault {
            None => h.accel == f.accel,
            Some(Fault::DeadAxis) => f.accel[2] == 0.0 && f.accel[..2] == h.accel[..2],
            Some(Fault::Offset) => f.accel[2] == h.accel[2] + 0.5 && f.accel[..2] == h.accel[..2],
            Some(Fault::Vibration) => {
                f.accel != h.accel && f.accel.iter().zip(h.accel).all(|(a, b)| (a - b).abs() <= 0.3 + 1e-6)
            }
        };
        ensure(changed, "only the faulty samples' accelerations change, as their fault says")?;
        faults += u32::from(f.fault.is_some());
    }
    ensure(faults == FAULTS.len() as u32 * FAULT_LEN, "every burst has its samples")
}

/// The simulated sensor in fault mode latches the faulty samples and reports their truth.
fn sensor_faults() -> Result<(), Failure> {
    let (start, fault) = FAULTS[0];
    let mut driver = Mpu6050::new(SimulatedMpu6050::new(ADDRESS, 13).with_faults(), ADDRESS);
    driver.init().map_err(bus_error)?;
    let mut sim = driver.release();
    let mut burst = [0u8; sensor::BURST_LEN];
    for t in 0..=start {
        sim.write_read(ADDRESS, &[reg::INT_STATUS], &mut burst).map_err(|_| Failure::Check("burst read"))?;
        let truth = sim.last_truth().ok_or(Failure::Check("a sample was latched"))?;
        ensure(truth.fault == if t == start { Some(fault) } else { None }, "the truth of the latched sample")?;
    }
    Ok(())
}
