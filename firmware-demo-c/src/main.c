/*
 * The C demo: the Rust demo's learning loop (firmware-demo/src/main.rs) written in C over
 * kestrel.h, on the same sensor bytes, with the same learners and settings, so it prints
 * the same lines. For each of 2048 samples read from the MPU-6050 through the I2C bus,
 *   1. predict: the die temperature from the three acceleration axes (windowed SLKL),
 *      and the tilt alarm (windowed linear SVM);
 *   2. learn: the sample enters both windows;
 *   3. flag, then learn unless flagged: the novelty detector scores the reading's
 *      vibration features (the change since the previous reading and the magnitude's
 *      excess over 1 g) and learns them as normal unless it flags them.
 * Every 256 samples it prints the block's errors beside naive baselines; it exits with
 * success when, after the first window, SLKL's RMSE is below half the window mean's and
 * the SVM's error rate below half the majority class's, and the detector flagged at least
 * 3/4 of the faulty readings with false alarms on at most 1 % of them all.
 */
#include <math.h>
#include <stdalign.h>
#include <stdio.h>

#include "kestrel.h"
#include "mpu6050.h"
#include "sensor_trace.h"
#include "stack.h"

#define SAMPLES 2048u
#define BLOCK 256u
#define WINDOW 128
#define DIM 3
#define CENTRES 32
#define SLKL_STEPS 4
#define SVM_STEPS 32
#define SVM_SEED 2025 /* the Rust demo's Rng::seed_from_u64(SCENE_SEED + 1) */
/* The novelty detector's settings: firmware-demo/src/learners.rs says why each. */
#define NOVELTY_WINDOW 256
#define NOVELTY_DIM 4
#define NOVELTY_CENTRES 32
#define NOVELTY_WARMUP 256
#define NOVELTY_GAMMA 100.0f
#define NOVELTY_DELTA 0.5f
#define NOVELTY_QUANTILE 0.99

/* Every byte the learners use, in statics the linker places and checks against RAM. */
static alignas(KESTREL_ALIGN) uint8_t slkl_work[KESTREL_SLKL_WORK_BYTES(WINDOW, DIM, CENTRES, CENTRES)];
static alignas(KESTREL_ALIGN) uint8_t svm_work[KESTREL_SVM_WORK_BYTES(WINDOW, DIM, 0)];
static alignas(KESTREL_ALIGN) uint8_t
    novelty_work[KESTREL_NOVELTY_WORK_BYTES(NOVELTY_WINDOW, NOVELTY_DIM, NOVELTY_CENTRES)];

/* SLKL's candidate centres: a Fibonacci lattice of equal-area points on the cap of unit
   vectors within 1.15 rad of vertical, computed as learners::centres() computes it. */
static void centres(float *points) {
    const float cos_cap = 0.40848744f, cos_step = -0.7373689f, sin_step = 0.6754903f;
    float c = 1.0f, s = 0.0f;
    for (int i = 0; i < CENTRES; i++) {
        float z = 1.0f - (1.0f - cos_cap) * ((float)i + 0.5f) / (float)CENTRES;
        float r = sqrtf(1.0f - z * z);
        points[3 * i] = r * c;
        points[3 * i + 1] = r * s;
        points[3 * i + 2] = z;
        float next_c = c * cos_step - s * sin_step;
        s = s * cos_step + c * sin_step;
        c = next_c;
    }
}

/* Errors over one block, or the whole run after the first window. */
typedef struct {
    uint32_t samples, wrong, alarms;
    float squared, squared_baseline;
} score;

static void add(score *s, float error, float baseline_error, int wrong, int alarm) {
    s->samples += 1;
    s->squared += error * error;
    s->squared_baseline += baseline_error * baseline_error;
    s->wrong += (uint32_t)wrong;
    s->alarms += (uint32_t)alarm;
}

static float samples_of(const score *s) { return (float)(s->samples > 1 ? s->samples : 1); }
static float rmse(const score *s) { return sqrtf(s->squared / samples_of(s)); }
static float baseline_rmse(const score *s) { return sqrtf(s->squared_baseline / samples_of(s)); }
static float error_rate(const score *s) { return 100.0f * (float)s->wrong / samples_of(s); }
static float majority_error_rate(const score *s) {
    uint32_t minority = s->alarms < s->samples - s->alarms ? s->alarms : s->samples - s->alarms;
    return 100.0f * (float)minority / samples_of(s);
}

/* The detector's features of a reading after the previous one (g): the change of each
   axis and the magnitude's excess over 1 g, as the Rust demo's Vibration computes them. */
static void vibration(const float *accel, const float *previous, float *features) {
    for (int j = 0; j < DIM; j++) features[j] = accel[j] - previous[j];
    features[DIM] = sqrtf(accel[0] * accel[0] + accel[1] * accel[1] + accel[2] * accel[2]) - 1.0f;
}

/* The detector's flags against the faults. */
typedef struct {
    uint32_t scored, flagged, faulty, detected;
} detections;

static void detected(detections *d, int flagged, int faulty) {
    d->scored += 1;
    d->flagged += (uint32_t)flagged;
    d->faulty += (uint32_t)faulty;
    d->detected += (uint32_t)(flagged && faulty);
}

static int detects(const detections *d) {
    return 4 * d->detected >= 3 * d->faulty && 100 * (d->flagged - d->detected) <= d->scored;
}

/* `value` with `decimals` digits after the point, rounded half away from zero, by integer
   arithmetic as the Rust demo's Fixed prints it. */
static const char *fixed(char *buf, float value, unsigned decimals) {
    uint32_t scale = 1;
    for (unsigned i = 0; i < decimals; i++) scale *= 10;
    float scaled = roundf(fabsf(value) * (float)scale);
    if (isnan(value) || isinf(value) || scaled >= 2147483648.0f) {
        snprintf(buf, 24, "%s", isnan(value) ? "nan" : isinf(value) ? (value > 0 ? "inf" : "-inf") : "big");
        return buf;
    }
    uint32_t n = (uint32_t)scaled;
    snprintf(buf, 24, "%s%lu.%0*lu", value < 0.0f && n != 0 ? "-" : "", (unsigned long)(n / scale), (int)decimals,
             (unsigned long)(n % scale));
    return buf;
}

static int check(kestrel_status status, const char *what) {
    if (status != KESTREL_STATUS_OK) printf("kestrel demo: %s: %s\n", what, kestrel_status_str(status));
    return status == KESTREL_STATUS_OK;
}

int main(void) {
    if (mpu6050_init() != 0) {
        puts("kestrel demo: the sensor does not answer");
        return 1;
    }
    kestrel_slkl_config slkl_config = kestrel_slkl_default_config(WINDOW, DIM, CENTRES);
    slkl_config.kernel.gamma = 4.0f;
    slkl_config.nu = 0.01f;
    slkl_config.steps_per_sample = SLKL_STEPS;
    slkl_config.seed = 1;
    kestrel_svm_config svm_config = kestrel_svm_default_config(WINDOW, DIM);
    svm_config.loss = KESTREL_SVM_LOSS_HINGE;
    svm_config.memory = 0;
    svm_config.steps_per_sample = SVM_STEPS;
    svm_config.epsilon = 0.1f; /* the Rust demo's: dcd::Params' default, LIBLINEAR's */
    svm_config.seed = SVM_SEED;
    kestrel_novelty_config novelty_config = kestrel_novelty_default_config(NOVELTY_WINDOW, NOVELTY_DIM, NOVELTY_CENTRES);
    novelty_config.kernel.gamma = NOVELTY_GAMMA;
    novelty_config.delta = NOVELTY_DELTA;
    novelty_config.quantile = NOVELTY_QUANTILE;
    novelty_config.warmup = NOVELTY_WARMUP;
    float points[CENTRES * DIM];
    centres(points);
    kestrel_slkl *regressor;
    kestrel_svm *classifier;
    kestrel_novelty *detector;
    if (!check(kestrel_slkl_create(&slkl_config, points, CENTRES * DIM, slkl_work, sizeof slkl_work, &regressor),
               "SLKL") ||
        !check(kestrel_svm_create(&svm_config, svm_work, sizeof svm_work, &classifier), "SVM") ||
        !check(kestrel_novelty_create(&novelty_config, novelty_work, sizeof novelty_work, &detector), "novelty"))
        return 1;
    printf("kestrel demo (C): SLKL window %d x %d features, %d centres (%u B of statics); DCD SVM window %d (%u B); "
           "novelty window %d x %d features, %d centres (%u B)\n",
           WINDOW, DIM, CENTRES, (unsigned)sizeof slkl_work, WINDOW, (unsigned)sizeof svm_work, NOVELTY_WINDOW,
           NOVELTY_DIM, NOVELTY_CENTRES, (unsigned)sizeof novelty_work);

    score block = {0}, total = {0};
    detections found = {0};
    float previous[DIM];
    char a[24], b[24], c[24], d[24];
    for (uint32_t t = 0; t < SAMPLES; t++) {
        mpu6050_reading reading;
        kestrel_learner_state state;
        if (mpu6050_read(&reading) != 0) {
            puts("kestrel demo: sensor read failed");
            return 1;
        }
        /* Test... */
        float predicted = 0.0f, baseline = 0.0f;
        int32_t alarm;
        if (!check(kestrel_slkl_state(regressor, &state), "SLKL state")) return 1;
        if (state.window_len > 0) {
            if (!check(kestrel_slkl_predict(regressor, reading.accel, DIM, &predicted), "SLKL predict")) return 1;
            baseline = state.target_mean;
        }
        if (!check(kestrel_svm_predict(classifier, reading.accel, DIM, &alarm), "SVM predict")) return 1;
        /* ...then train. */
        if (!check(kestrel_slkl_learn(regressor, reading.accel, DIM, reading.temperature), "SLKL learn") ||
            !check(kestrel_svm_learn(classifier, reading.accel, DIM, reading.motion ? 1 : -1), "SVM learn"))
            return 1;
        if (t > 0) {
            float features[NOVELTY_DIM];
            kestrel_novelty_verdict verdict;
            vibration(reading.accel, previous, features);
            if (!check(kestrel_novelty_learn(detector, features, NOVELTY_DIM, &verdict), "novelty learn")) return 1;
            /* The change since the previous reading carries that reading's fault too. */
            detected(&found, verdict.anomaly, sensor_fault[t] || sensor_fault[t - 1]);
        }
        for (int j = 0; j < DIM; j++) previous[j] = reading.accel[j];
        if (t >= WINDOW) {
            int wrong = (alarm == 1) != reading.motion;
            float error = predicted - reading.temperature, baseline_error = baseline - reading.temperature;
            add(&block, error, baseline_error, wrong, reading.motion);
            add(&total, error, baseline_error, wrong, reading.motion);
        }
        if ((t + 1) % BLOCK == 0 && block.samples > 0) {
            if (!check(kestrel_slkl_state(regressor, &state), "SLKL state")) return 1;
            printf("samples %4lu: temperature RMSE %s C (window mean: %s C), m0 = %2u; tilt alarm errors %s %% "
                   "(majority class: %s %%)\n",
                   (unsigned long)(t + 1), fixed(a, rmse(&block), 3), fixed(b, baseline_rmse(&block), 3),
                   (unsigned)state.active_centres, fixed(c, error_rate(&block), 1),
                   fixed(d, majority_error_rate(&block), 1));
            block = (score){0};
        }
    }
    int passed = rmse(&total) < 0.5f * baseline_rmse(&total) && error_rate(&total) < 0.5f * majority_error_rate(&total);
    printf("after the first window: temperature RMSE %s C vs %s C, alarm errors %s %% vs %s %%: %s\n",
           fixed(a, rmse(&total), 3), fixed(b, baseline_rmse(&total), 3), fixed(c, error_rate(&total), 1),
           fixed(d, majority_error_rate(&total), 1), passed ? "learning works" : "NOT LEARNING");
    kestrel_detector_state novelty;
    if (!check(kestrel_novelty_state(detector, &novelty), "novelty state")) return 1;
    printf("novelty: flagged %lu of %lu readings; faulty %lu, detected %lu, false alarms %lu, centres %u: %s\n",
           (unsigned long)found.flagged, (unsigned long)found.scored, (unsigned long)found.faulty,
           (unsigned long)found.detected, (unsigned long)(found.flagged - found.detected), (unsigned)novelty.centres,
           detects(&found) ? "faults detected" : "FAULTS MISSED");
    printf("peak stack: %u B of %u B\n", (unsigned)stack_peak_bytes(), (unsigned)stack_capacity_bytes());
    return passed && detects(&found) ? 0 : 1;
}
