/*
 * The I2C bus under QEMU: a simulated MPU-6050 that replays the register bursts the Rust
 * demo's simulated part (firmware-demo/src/sim.rs) produced for the same seed, recorded
 * by firmware-demo's `sensor_trace` binary into sensor_trace.c. So the C demo reads the
 * bytes the Rust demo reads. Like the part: WHO_AM_I answers 0x68, the part sleeps until
 * PWR_MGMT_1 clears SLEEP, and each burst read from INT_STATUS latches the next sample.
 */
#include <string.h>

#include "i2c.h"
#include "mpu6050.h"
#include "sensor_trace.h"

static uint8_t pwr_mgmt_1 = MPU6050_SLEEP;
static size_t next_sample;

int i2c_write(uint8_t address, const uint8_t *bytes, size_t len) {
    if (address != MPU6050_ADDRESS || len != 2) return -1;
    if (bytes[0] == MPU6050_PWR_MGMT_1) pwr_mgmt_1 = bytes[1];
    return 0;
}

int i2c_write_read(uint8_t address, const uint8_t *out, size_t out_len, uint8_t *in, size_t in_len) {
    if (address != MPU6050_ADDRESS || out_len != 1) return -1;
    if (out[0] == MPU6050_WHO_AM_I && in_len == 1) {
        in[0] = MPU6050_DEVICE_ID;
        return 0;
    }
    if (out[0] != MPU6050_INT_STATUS || in_len != MPU6050_BURST_LEN) return -1;
    if (pwr_mgmt_1 & MPU6050_SLEEP || next_sample == SENSOR_TRACE_SAMPLES) {
        memset(in, 0, in_len);
        return 0;
    }
    memcpy(in, sensor_trace[next_sample++], in_len);
    return 0;
}
