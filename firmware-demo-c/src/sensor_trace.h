/* The register bursts (INT_STATUS .. TEMP_OUT_L) the Rust demo's simulated MPU-6050
   produced for the demo's seed, one per sample, and whether its accelerometer was faulty
   in that sample (1) or not (0); build/sensor_trace.c is generated. */
#ifndef DEMO_SENSOR_TRACE_H
#define DEMO_SENSOR_TRACE_H

#include <stdint.h>

#define SENSOR_TRACE_SAMPLES 2048

extern const uint8_t sensor_trace[SENSOR_TRACE_SAMPLES][9];
extern const uint8_t sensor_fault[SENSOR_TRACE_SAMPLES];

#endif
