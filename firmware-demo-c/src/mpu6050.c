#include "mpu6050.h"

#include "i2c.h"

static int write_register(uint8_t reg, uint8_t value) {
    const uint8_t bytes[2] = {reg, value};
    return i2c_write(MPU6050_ADDRESS, bytes, 2);
}

int mpu6050_init(void) {
    const uint8_t reg = MPU6050_WHO_AM_I;
    uint8_t id;
    if (i2c_write_read(MPU6050_ADDRESS, &reg, 1, &id, 1) != 0) return -1;
    if (id != MPU6050_DEVICE_ID) return -2;
    if (write_register(MPU6050_PWR_MGMT_1, 0x01) != 0) return -1;
    return write_register(MPU6050_ACCEL_CONFIG, 0x00) != 0 ? -1 : 0;
}

/* The big-endian i16 at burst[i], as a float. */
static float word(const uint8_t *burst, int i) { return (float)(int16_t)(uint16_t)((burst[i] << 8) | burst[i + 1]); }

int mpu6050_read(mpu6050_reading *reading) {
    const uint8_t reg = MPU6050_INT_STATUS;
    uint8_t burst[MPU6050_BURST_LEN];
    if (i2c_write_read(MPU6050_ADDRESS, &reg, 1, burst, sizeof burst) != 0) return -1;
    for (int axis = 0; axis < 3; axis++) reading->accel[axis] = word(burst, 1 + 2 * axis) / 16384.0f;
    reading->temperature = word(burst, 7) / 340.0f + 36.53f;
    reading->motion = (burst[0] & MPU6050_MOT_INT) != 0;
    return 0;
}
