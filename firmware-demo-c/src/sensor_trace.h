/* The register bursts (INT_STATUS .. TEMP_OUT_L) the Rust demo's simulated MPU-6050
   produced for the demo's seed, one per sample; build/sensor_trace.c is generated. */
#ifndef DEMO_SENSOR_TRACE_H
#define DEMO_SENSOR_TRACE_H

#include <stdint.h>

#define SENSOR_TRACE_SAMPLES 2048

extern const uint8_t sensor_trace[SENSOR_TRACE_SAMPLES][9];

#endif
