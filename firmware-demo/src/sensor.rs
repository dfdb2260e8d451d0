//! A driver for an InvenSense MPU-6050-style motion sensor (3-axis accelerometer, die
//! temperature, motion-detect flag), generic over embedded-hal 1.0's [`I2c`] trait.
//!
//! The driver owns its bus, as embedded-hal's guide for driver authors asks; on a board it
//! takes the HAL's I²C peripheral, under QEMU the simulated device of [`crate::sim`].
//!
//! Registers used (MPU-6000/6050 register map, rev. 4.2):
//!
//! | register | address | use |
//! |---|---|---|
//! | `ACCEL_CONFIG` | `0x1C` | full scale, `0x00` = ±2 g (16,384 LSB/g) |
//! | `INT_STATUS` | `0x3A` | bit 6 `MOT_INT`: motion detected (cleared by the read) |
//! | `ACCEL_XOUT_H` … `ACCEL_ZOUT_L` | `0x3B`–`0x40` | acceleration, big-endian `i16` |
//! | `TEMP_OUT_H`, `TEMP_OUT_L` | `0x41`–`0x42` | temperature, `°C = raw/340 + 36.53` |
//! | `PWR_MGMT_1` | `0x6B` | bit 6 `SLEEP` (set at reset); `0x01` wakes with the gyro PLL clock |
//! | `WHO_AM_I` | `0x75` | `0x68` |
//!
//! One [`read`](Mpu6050::read) is a single 9-byte burst from `INT_STATUS`
//! (a register-pointer write, then a repeated-start read), so the flag, the three axes and
//! the temperature belong to the same sample. Every byte pattern converts to a finite
//! [`Reading`]: the driver cannot panic on what the bus returns.

use embedded_hal::i2c::I2c;

/// The sensor's I²C address with `AD0` low.
pub const ADDRESS: u8 = 0x68;
/// `WHO_AM_I`'s value on an MPU-6050.
pub const DEVICE_ID: u8 = 0x68;

/// Register addresses.
pub mod reg {
    /// Accelerometer full scale.
    pub const ACCEL_CONFIG: u8 = 0x1C;
    /// Interrupt status; bit 6 is the motion-detect flag.
    pub const INT_STATUS: u8 = 0x3A;
    /// First of the six acceleration bytes.
    pub const ACCEL_XOUT_H: u8 = 0x3B;
    /// High byte of the temperature.
    pub const TEMP_OUT_H: u8 = 0x41;
    /// Power management: bit 6 is `SLEEP`.
    pub const PWR_MGMT_1: u8 = 0x6B;
    /// Device identity.
    pub const WHO_AM_I: u8 = 0x75;
}

/// `INT_STATUS` bit of the motion-detect interrupt.
pub const MOT_INT: u8 = 1 << 6;
/// `PWR_MGMT_1` bit that puts the sensor to sleep (set at power-on).
pub const SLEEP: u8 = 1 << 6;
/// Acceleration counts per g at ±2 g full scale.
pub const COUNTS_PER_G: f32 = 16_384.0;
/// Temperature counts per °C.
pub const COUNTS_PER_DEGREE: f32 = 340.0;
/// Temperature at a raw reading of 0, °C.
pub const TEMPERATURE_OFFSET: f32 = 36.53;
/// Bytes of one burst: `INT_STATUS`, six acceleration bytes, two temperature bytes.
pub const BURST_LEN: usize = 9;

/// One sample, in physical units.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Reading {
    /// Acceleration along x, y, z in g.
    pub accel: [f32; 3],
    /// Die temperature in °C.
    pub temperature: f32,
    /// The sensor's motion-detect flag (`INT_STATUS.MOT_INT`).
    pub motion: bool,
}

impl Reading {
    /// Decodes a burst read from `INT_STATUS` (any bytes give a finite reading).
    pub fn from_burst(burst: &[u8; BURST_LEN]) -> Self {
        let word = |i: usize| f32::from(i16::from_be_bytes([burst[i], burst[i + 1]]));
        Reading {
            accel: [word(1) / COUNTS_PER_G, word(3) / COUNTS_PER_G, word(5) / COUNTS_PER_G],
            temperature: word(7) / COUNTS_PER_DEGREE + TEMPERATURE_OFFSET,
            motion: burst[0] & MOT_INT != 0,
        }
    }
}

/// What went wrong talking to the sensor.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Error<E> {
    /// The bus reported an error (no acknowledge, arbitration loss, …).
    Bus(E),
    /// `WHO_AM_I` did not read [`DEVICE_ID`]: another part answers at the address.
    WrongDevice {
        /// The identity read.
        found: u8,
    },
}

impl<E: core::fmt::Debug> core::fmt::Display for Error<E> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            Error::Bus(e) => write!(f, "I2C bus error: {e:?}"),
            Error::WrongDevice { found } => write!(f, "WHO_AM_I reads {found:#04x}, expected {DEVICE_ID:#04x}"),
        }
    }
}

/// The driver: owns the bus `I2C` and talks to the sensor at `address`.
#[derive(Debug)]
pub struct Mpu6050<I2C> {
    i2c: I2C,
    address: u8,
}

impl<I2C: I2c> Mpu6050<I2C> {
    /// A driver for the sensor at `address` (usually [`ADDRESS`]); nothing is sent yet.
    pub fn new(i2c: I2C, address: u8) -> Self {
        Mpu6050 { i2c, address }
    }

    /// Checks `WHO_AM_I`, wakes the sensor and selects ±2 g.
    ///
    /// # Errors
    /// [`Error::Bus`] when a transfer fails, [`Error::WrongDevice`] for another identity.
    pub fn init(&mut self) -> Result<(), Error<I2C::Error>> {
        let found = self.read_register(reg::WHO_AM_I)?;
        if found != DEVICE_ID {
            return Err(Error::WrongDevice { found });
        }
        self.write_register(reg::PWR_MGMT_1, 0x01)?;
        self.write_register(reg::ACCEL_CONFIG, 0x00)
    }

    /// Reads one sample (one burst of [`BURST_LEN`] bytes from `INT_STATUS`).
    ///
    /// # Errors
    /// [`Error::Bus`] when the transfer fails.
    pub fn read(&mut self) -> Result<Reading, Error<I2C::Error>> {
        let mut burst = [0u8; BURST_LEN];
        self.i2c.write_read(self.address, &[reg::INT_STATUS], &mut burst).map_err(Error::Bus)?;
        Ok(Reading::from_burst(&burst))
    }

    /// Reads one register.
    ///
    /// # Errors
    /// [`Error::Bus`] when the transfer fails.
    pub fn read_register(&mut self, register: u8) -> Result<u8, Error<I2C::Error>> {
        let mut value = [0u8];
        self.i2c.write_read(self.address, &[register], &mut value).map_err(Error::Bus)?;
        Ok(value[0])
    }

    /// Writes one register.
    ///
    /// # Errors
    /// [`Error::Bus`] when the transfer fails.
    pub fn write_register(&mut self, register: u8, value: u8) -> Result<(), Error<I2C::Error>> {
        self.i2c.write(self.address, &[register, value]).map_err(Error::Bus)
    }

    /// Gives the bus back.
    pub fn release(self) -> I2C {
        self.i2c
    }
}
