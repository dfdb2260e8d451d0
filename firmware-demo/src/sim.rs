//! A simulated MPU-6050 on a simulated machine: the [`I2c`] device the demo and the tests
//! read under QEMU in place of a real bus.
//!
//! [`Scene`] is the physics, deterministic for a seed (noise from kestrel-core's [`Rng`],
//! transcendentals from `libm`, so the FPU and no-FPU builds see the same bits). At sample
//! `t` the sensor's tilt from vertical and its heading are
//!
//! ```text
//! θ(t) = 0.55 + 0.4·sin(2πt/173) + w(t),   w(t) = 0.95·w(t−1) + 0.01·N(0, 1)
//! φ(t) = 2πt/61 + 0.3·sin(2πt/397)
//! ```
//!
//! the acceleration is gravity in the sensor's frame, `g = (sin θ cos φ, sin θ sin φ, cos θ)`,
//! plus vibration `0.01·N(0, 1)` g per axis, and the die temperature follows the machine's
//! load, a smooth nonlinear function of the orientation, under a slow ambient drift:
//!
//! ```text
//! T(t) = 30 + 2.5·sin(3g_x)·cos(2g_y) + 1.5·g_z² + 1.5·sin(2πt/3000) + t/2000 + 0.05·N(0, 1)  °C
//! ```
//!
//! The motion-detect flag stands for a tilt alarm: it is raised while the machine leans
//! towards +x by more than 17.5° (`g_x > 0.3`), and flipped with probability 2 % (label
//! noise). Readings are quantised as the part
//! does: 16,384 counts per g, 340 per °C.
//!
//! **Fault mode** ([`Scene::with_faults`]): the accelerometer fails in the bursts of
//! [`FAULTS`], [`FAULT_LEN`] samples each at fixed sample indices (six bursts, each kind of
//! [`Fault`] twice, 24 of the demo's 2,048 samples), so that a detector's flags can be
//! counted against the truth ([`Truth::fault`], [`fault_at`]). A fault changes only the
//! acceleration read — the machine, and so the temperature and the tilt alarm, go on as
//! before — and draws no random number, so every sample outside the bursts is the healthy
//! scene's, bit for bit:
//!
//! ```text
//! Vibration:  a_i += 0.3·cos(2π f_i t),  f = (0.23, 0.31, 0.37) per sample   (a rattle)
//! DeadAxis:   a_z  = 0                                                       (a dead channel)
//! Offset:     a_z += 0.5                                                     (a bias: a loose mount)
//! ```
//!
//! [`SimulatedMpu6050`] holds the register file of [`crate::sensor`]'s table. At power-on
//! `PWR_MGMT_1` has `SLEEP` set and the data registers read 0; once awake, every read that
//! starts at `INT_STATUS` or `ACCEL_XOUT_H` latches the scene's next sample. The register
//! pointer auto-increments and wraps at `0x7F`; another address is not acknowledged.

use core::f32::consts::TAU;

use embedded_hal::i2c::{ErrorKind, ErrorType, I2c, NoAcknowledgeSource, Operation};
use kestrel_core::Rng;

use crate::sensor::{self, COUNTS_PER_DEGREE, COUNTS_PER_G, MOT_INT, SLEEP, TEMPERATURE_OFFSET, reg};

/// The seed of the demo's scene (the demo, the measurements and the C demo's sensor trace).
pub const DEMO_SEED: u64 = 2024;
/// The samples the demo reads (and the C demo's sensor trace holds).
pub const DEMO_SAMPLES: u32 = 2048;

/// Samples in each burst of [`FAULTS`].
pub const FAULT_LEN: u32 = 4;
/// The fault mode's bursts: the first sample of each and its fault. All lie after the
/// demo's first 512 samples (its detector's warm-up, and what `measure` measures).
pub const FAULTS: [(u32, Fault); 6] = [
    (600, Fault::Vibration),
    (850, Fault::DeadAxis),
    (1100, Fault::Offset),
    (1350, Fault::Vibration),
    (1600, Fault::DeadAxis),
    (1850, Fault::Offset),
];

/// The amplitude of [`Fault::Vibration`], g.
const VIBRATION: f32 = 0.3;
/// The bias of [`Fault::Offset`], g.
const OFFSET: f32 = 0.5;

/// How the accelerometer fails in fault mode (module docs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fault {
    /// A rattle of 0.3 g on every axis.
    Vibration,
    /// The z axis reads 0.
    DeadAxis,
    /// The z axis reads 0.5 g too much.
    Offset,
}

impl Fault {
    /// The reading `accel` of sample `t` under this fault.
    fn apply(self, accel: &mut [f32; 3], t: u32) {
        match self {
            Fault::Vibration => {
                // Frequencies in turns per 100 samples; the phase is reduced to one turn in
                // integers, so it is exact for any t.
                for (a, f) in accel.iter_mut().zip([23, 31, 37]) {
                    *a += VIBRATION * libm::cosf(TAU * (f * (t % 100) % 100) as f32 / 100.0);
                }
            }
            Fault::DeadAxis => accel[2] = 0.0,
            Fault::Offset => accel[2] += OFFSET,
        }
    }
}

/// The fault of sample `t` in fault mode, `None` outside the bursts of [`FAULTS`].
pub fn fault_at(t: u32) -> Option<Fault> {
    FAULTS.iter().find(|&&(start, _)| (start..start + FAULT_LEN).contains(&t)).map(|&(_, fault)| fault)
}

/// One true (unquantised) sample of the scene.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Truth {
    /// Acceleration, g, vibration (and the fault, if any) included.
    pub accel: [f32; 3],
    /// Die temperature, °C, noise included.
    pub temperature: f32,
    /// The tilt alarm, label noise included.
    pub motion: bool,
    /// The accelerometer's fault, in fault mode.
    pub fault: Option<Fault>,
}

/// The machine the sensor is mounted on; see the module docs for the equations.
#[derive(Clone, Debug)]
pub struct Scene {
    t: u32,
    wander: f32,
    rng: Rng,
    faults: bool,
}

impl Scene {
    /// `g_x` beyond which the tilt alarm is raised.
    pub const ALARM_GX: f32 = 0.3;

    /// The scene at `t = 0` with noise seeded by `seed`.
    pub fn new(seed: u64) -> Self {
        Scene { t: 0, wander: 0.0, rng: Rng::seed_from_u64(seed), faults: false }
    }

    /// The scene in fault mode: the accelerometer fails in the bursts of [`FAULTS`].
    pub fn with_faults(self) -> Self {
        Scene { faults: true, ..self }
    }

    /// Samples produced so far.
    pub fn time(&self) -> u32 {
        self.t
    }

    /// The next sample.
    pub fn next_sample(&mut self) -> Truth {
        let now = self.t;
        let t = now as f32;
        self.t = self.t.wrapping_add(1);
        self.wander = 0.95 * self.wander + 0.01 * self.rng.normal::<f32>();
        let theta = 0.55 + 0.4 * libm::sinf(TAU * t / 173.0) + self.wander;
        let phi = TAU * t / 61.0 + 0.3 * libm::sinf(TAU * t / 397.0);
        let g = [libm::sinf(theta) * libm::cosf(phi), libm::sinf(theta) * libm::sinf(phi), libm::cosf(theta)];
        let load = 2.5 * libm::sinf(3.0 * g[0]) * libm::cosf(2.0 * g[1]) + 1.5 * g[2] * g[2];
        let drift = 1.5 * libm::sinf(TAU * t / 3000.0) + t / 2000.0;
        let temperature = 30.0 + load + drift + 0.05 * self.rng.normal::<f32>();
        let mut accel = g;
        for a in &mut accel {
            *a += 0.01 * self.rng.normal::<f32>();
        }
        let flip = self.rng.uniform::<f32>() < 0.02;
        let fault = if self.faults { fault_at(now) } else { None };
        if let Some(fault) = fault {
            fault.apply(&mut accel, now);
        }
        Truth { accel, temperature, motion: (g[0] > Self::ALARM_GX) != flip, fault }
    }
}

/// `value` rounded to the nearest count, saturated to `i16`.
fn counts(value: f32) -> i16 {
    let rounded = libm::roundf(value);
    // `as` saturates (and maps NaN to 0).
    rounded as i16
}

/// The simulated sensor: a register file fed by a [`Scene`].
#[derive(Clone, Debug)]
pub struct SimulatedMpu6050 {
    scene: Scene,
    address: u8,
    registers: [u8; 128],
    pointer: u8,
    last: Option<Truth>,
}

impl SimulatedMpu6050 {
    /// A powered-on (sleeping) sensor at `address` on the scene of `seed`.
    pub fn new(address: u8, seed: u64) -> Self {
        let mut registers = [0u8; 128];
        registers[usize::from(reg::WHO_AM_I)] = sensor::DEVICE_ID;
        registers[usize::from(reg::PWR_MGMT_1)] = SLEEP;
        SimulatedMpu6050 { scene: Scene::new(seed), address, registers, pointer: 0, last: None }
    }

    /// The sensor in fault mode ([`Scene::with_faults`]).
    pub fn with_faults(self) -> Self {
        SimulatedMpu6050 { scene: self.scene.with_faults(), ..self }
    }

    /// The true sample behind the data registers, `None` before the first one.
    pub fn last_truth(&self) -> Option<Truth> {
        self.last
    }

    /// Register `register` as the bus would read it (without side effects).
    pub fn register(&self, register: u8) -> u8 {
        self.registers[usize::from(register & 0x7F)]
    }

    fn awake(&self) -> bool {
        self.register(reg::PWR_MGMT_1) & SLEEP == 0
    }

    /// Latches the scene's next sample into `INT_STATUS` … `TEMP_OUT_L`.
    fn latch(&mut self) {
        let truth = self.scene.next_sample();
        let mut data = [0u8; sensor::BURST_LEN];
        data[0] = if truth.motion { MOT_INT } else { 0 };
        for (axis, value) in truth.accel.iter().enumerate() {
            data[1 + 2 * axis..3 + 2 * axis].copy_from_slice(&counts(value * COUNTS_PER_G).to_be_bytes());
        }
        let temperature = counts((truth.temperature - TEMPERATURE_OFFSET) * COUNTS_PER_DEGREE);
        data[7..9].copy_from_slice(&temperature.to_be_bytes());
        let start = usize::from(reg::INT_STATUS);
        self.registers[start..start + sensor::BURST_LEN].copy_from_slice(&data);
        self.last = Some(truth);
    }

    fn next_pointer(&mut self) -> usize {
        let at = usize::from(self.pointer);
        self.pointer = (self.pointer + 1) & 0x7F;
        at
    }
}

impl ErrorType for SimulatedMpu6050 {
    type Error = ErrorKind;
}

impl I2c for SimulatedMpu6050 {
    fn transaction(&mut self, address: u8, operations: &mut [Operation<'_>]) -> Result<(), ErrorKind> {
        if address != self.address {
            return Err(ErrorKind::NoAcknowledge(NoAcknowledgeSource::Address));
        }
        let mut pointer_set = false;
        for operation in operations {
            match operation {
                Operation::Write(bytes) => {
                    for &byte in bytes.iter() {
                        if pointer_set {
                            let at = self.next_pointer();
                            // Identity and data registers are read-only.
                            if at != usize::from(reg::WHO_AM_I) && !(0x3A..=0x42).contains(&at) {
                                self.registers[at] = byte;
                            }
                        } else {
                            self.pointer = byte & 0x7F;
                            pointer_set = true;
                        }
                    }
                }
                Operation::Read(buffer) => {
                    if self.awake() && (self.pointer == reg::INT_STATUS || self.pointer == reg::ACCEL_XOUT_H) {
                        self.latch();
                    }
                    for byte in buffer.iter_mut() {
                        let at = self.next_pointer();
                        *byte = self.registers[at];
                        if at == usize::from(reg::INT_STATUS) {
                            self.registers[at] = 0; // cleared by the read
                        }
                    }
                }
            }
        }
        Ok(())
    }
}
