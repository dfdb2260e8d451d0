/*
 * An MPU-6050-style motion sensor over I2C: the C twin of firmware-demo/src/sensor.rs,
 * reading the same registers and converting counts to units with the same float
 * operations, so the C and Rust demos see the same bits.
 */
#ifndef DEMO_MPU6050_H
#define DEMO_MPU6050_H

#include <stdbool.h>
#include <stdint.h>

#define MPU6050_ADDRESS 0x68
#define MPU6050_DEVICE_ID 0x68
#define MPU6050_ACCEL_CONFIG 0x1C
#define MPU6050_INT_STATUS 0x3A
#define MPU6050_PWR_MGMT_1 0x6B
#define MPU6050_WHO_AM_I 0x75
#define MPU6050_MOT_INT (1u << 6)
#define MPU6050_SLEEP (1u << 6)
#define MPU6050_BURST_LEN 9

/* One sample: acceleration in g, die temperature in degrees C, the motion flag. */
typedef struct {
    float accel[3];
    float temperature;
    bool motion;
} mpu6050_reading;

/* Checks WHO_AM_I, wakes the part, selects +-2 g. 0 on success, -1 on a bus error, -2 on
   another device. */
int mpu6050_init(void);

/* One 9-byte burst from INT_STATUS: flag, three axes and temperature of one sample. */
int mpu6050_read(mpu6050_reading *reading);

#endif
