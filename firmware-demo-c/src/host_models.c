/*
 * On-device tests of the C ABI (QEMU mps2-an386): the host-trained models of
 * firmware-demo/models, compiled in by `kestrel export --format c`, predict bit for bit
 * what `kestrel predict` printed on the host (and what the Rust firmware's host_models test
 * checks); damaged model bytes are statuses on the device too, never a fault. Prints
 * `test NAME ... ok|FAILED` and `N passed, N failed`; exits with failure when a test failed.
 */
#include <math.h>
#include <stdalign.h>
#include <stdio.h>
#include <string.h>

#include "calibrated.h"
#include "calibrated_probabilities.h"
#include "calibrated_rows.h"
#include "check.h"
#include "kestrel.h"
#include "rsvm.h"
#include "rsvm_rows.h"
#include "slkl.h"
#include "slkl_rows.h"
#include "svm.h"
#include "svm_rows.h"

/* Work memory sized at compile time for the largest of the models. */
#define MAX(a, b) ((a) > (b) ? (a) : (b))
#define WORK_BYTES                                                                                    \
    MAX(MAX(KESTREL_MODEL_WORK_BYTES(SLKL_BYTES, SLKL_DIM), KESTREL_MODEL_WORK_BYTES(CALIBRATED_BYTES, CALIBRATED_DIM)), \
        MAX(KESTREL_MODEL_WORK_BYTES(SVM_BYTES, SVM_DIM), KESTREL_MODEL_WORK_BYTES(RSVM_BYTES, RSVM_DIM)))
static alignas(KESTREL_ALIGN) uint8_t work[WORK_BYTES];
static uint8_t copy[MAX(SLKL_BYTES, MAX(SVM_BYTES, RSVM_BYTES))];

/* Opens `bytes` and compares its predictions for `rows` (as the host's CSV reader reads
   them: double, then float) with the host's bits. */
static int predicts_host_bits(const uint8_t *bytes, size_t len, uint32_t kind, size_t dim, const double *rows,
                              const uint32_t *expected, size_t count) {
    CHECK(kestrel_model_work_bytes(bytes, len) <= sizeof work);
    kestrel_model *model;
    CHECK(kestrel_model_open(bytes, len, work, sizeof work, &model) == KESTREL_STATUS_OK);
    kestrel_model_info info;
    CHECK(kestrel_model_describe(model, &info) == KESTREL_STATUS_OK);
    CHECK(info.kind == kind && info.dim == dim);
    for (size_t i = 0; i < count; i++) {
        float x[64], y;
        for (size_t j = 0; j < dim; j++) x[j] = (float)rows[i * dim + j];
        CHECK(kestrel_model_predict(model, x, dim, &y) == KESTREL_STATUS_OK);
        uint32_t bits;
        memcpy(&bits, &y, sizeof bits);
        CHECK(bits == expected[i]);
    }
    return 1;
}

static int slkl_predictions_bit_identical_to_host(void) {
    return predicts_host_bits(slkl, SLKL_BYTES, SLKL_KIND, SLKL_DIM, slkl_rows, slkl_expected, SLKL_ROWS);
}

static int linear_svm_predictions_bit_identical_to_host(void) {
    return predicts_host_bits(svm, SVM_BYTES, SVM_KIND, SVM_DIM, svm_rows, svm_expected, SVM_ROWS);
}

static int reduced_svm_predictions_bit_identical_to_host(void) {
    return predicts_host_bits(rsvm, RSVM_BYTES, RSVM_KIND, RSVM_DIM, rsvm_rows, rsvm_expected, RSVM_ROWS);
}

/* A reduced-kernel SVM trained with class probabilities: its predictions have the host's
   bits, and kestrel_model_probabilities gives the host's probabilities (f64 sigmoids on the
   host, f32 here) to 1e-5, summing to 1. */
static int class_probabilities_match_the_host(void) {
    CHECK(predicts_host_bits(calibrated, CALIBRATED_BYTES, CALIBRATED_KIND, CALIBRATED_DIM, calibrated_rows,
                             calibrated_expected, CALIBRATED_ROWS));
    kestrel_model *model;
    CHECK(kestrel_model_open(calibrated, CALIBRATED_BYTES, work, sizeof work, &model) == KESTREL_STATUS_OK);
    kestrel_model_info info;
    CHECK(kestrel_model_describe(model, &info) == KESTREL_STATUS_OK);
    CHECK(info.probabilities && info.classes == 2);
    for (size_t i = 0; i < CALIBRATED_ROWS; i++) {
        float x[CALIBRATED_DIM], p[2];
        for (size_t j = 0; j < CALIBRATED_DIM; j++) x[j] = (float)calibrated_rows[i * CALIBRATED_DIM + j];
        CHECK(kestrel_model_probabilities(model, x, CALIBRATED_DIM, p, 2) == KESTREL_STATUS_OK);
        CHECK(fabs((double)p[0] - calibrated_probabilities[i][0]) < 1e-5 && fabs((double)p[1] - calibrated_probabilities[i][1]) < 1e-5);
        CHECK(fabsf(p[0] + p[1] - 1.0f) < 1e-6f);
    }
    return 1;
}

/* Every byte of the SLKL model flipped in turn, and every truncation: a status each time. */
static int damaged_models_are_statuses(void) {
    kestrel_model *model;
    memcpy(copy, slkl, SLKL_BYTES);
    for (size_t i = 0; i < SLKL_BYTES; i++) {
        copy[i] ^= 0xFF;
        CHECK(kestrel_model_open(copy, SLKL_BYTES, work, sizeof work, &model) != KESTREL_STATUS_OK);
        copy[i] ^= 0xFF;
        CHECK(kestrel_model_open(copy, i, work, sizeof work, &model) != KESTREL_STATUS_OK);
    }
    CHECK(kestrel_model_open(copy, SLKL_BYTES, work + 4, sizeof work - 4, &model) == KESTREL_STATUS_MISALIGNED);
    CHECK(kestrel_model_open(copy, SLKL_BYTES, work, 64, &model) == KESTREL_STATUS_BUFFER_TOO_SMALL);
    CHECK(kestrel_model_open(copy, SLKL_BYTES, work, sizeof work, &model) == KESTREL_STATUS_OK);
    const float nan_row[SLKL_DIM] = {NAN};
    float y = 1.0f;
    CHECK(kestrel_model_predict(model, nan_row, SLKL_DIM, &y) == KESTREL_STATUS_NON_FINITE && y == 1.0f);
    CHECK(kestrel_model_predict(model, nan_row, SLKL_DIM + 1, &y) == KESTREL_STATUS_DIMENSION_MISMATCH);
    return 1;
}

int main(void) {
    static const struct {
        const char *name;
        int (*run)(void);
    } tests[] = {
        {"c_slkl_predictions_bit_identical_to_host", slkl_predictions_bit_identical_to_host},
        {"c_linear_svm_predictions_bit_identical_to_host", linear_svm_predictions_bit_identical_to_host},
        {"c_reduced_svm_predictions_bit_identical_to_host", reduced_svm_predictions_bit_identical_to_host},
        {"c_class_probabilities_match_the_host", class_probabilities_match_the_host},
        {"c_damaged_models_are_statuses", damaged_models_are_statuses},
    };
    int passed = 0, failed = 0;
    for (size_t i = 0; i < sizeof tests / sizeof tests[0]; i++) {
        int ok = tests[i].run();
        printf("test %s ... %s\n", tests[i].name, ok ? "ok" : "FAILED");
        ok ? passed++ : failed++;
    }
    printf("%d passed, %d failed\n", passed, failed);
    return failed == 0 ? 0 : 1;
}
