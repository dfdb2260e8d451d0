/*
 * The I2C bus the sensor driver talks to: two functions a board's HAL provides (on an
 * STM32, around HAL_I2C_Master_Transmit / HAL_I2C_Mem_Read). Both return 0 on success.
 */
#ifndef DEMO_I2C_H
#define DEMO_I2C_H

#include <stddef.h>
#include <stdint.h>

/* Writes `len` bytes to the device at `address`. */
int i2c_write(uint8_t address, const uint8_t *bytes, size_t len);

/* Writes `out_len` bytes, then reads `in_len` bytes after a repeated start. */
int i2c_write_read(uint8_t address, const uint8_t *out, size_t out_len, uint8_t *in, size_t in_len);

#endif
