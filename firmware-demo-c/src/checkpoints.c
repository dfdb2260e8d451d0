/*
 * Checkpoints of the C ABI's learners, the same program on the device (QEMU mps2-an386,
 * build/checkpoints.elf) and on the host (run-tests.sh compiles it against the host
 * library): an SVM with its scaler, an SLKL regressor and a multi-class learner, each beside a twin that is
 * checkpointed in mid-stream, has its memory wiped as by a reset and resumes from the
 * bytes; the twins predict the same bits all along and end with the same checkpoint. The
 * final checkpoints, the SVM's model saved with its scaler and the multi-class learner's
 * model, are printed in hex, and the
 * runner checks the device's equal the host's byte for byte: a checkpoint does not depend
 * on the pointer width, so one copied off a device resumes on a host (and back), and
 * `kestrel import` of the SVM's checkpoints gives the model printed (the CLI's test holds
 * the M0's bytes). Prints `test NAME ... ok|FAILED` and `N passed, N failed`.
 */
#include <stdalign.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "kestrel.h"

enum { CK_WINDOW = 32, CK_DIM = 3, CK_CENTRES = 8, CK_ROWS = 300, CK_CUT = 150 };
static alignas(KESTREL_ALIGN) uint8_t svm_work[2][KESTREL_SVM_WORK_BYTES(CK_WINDOW, CK_DIM, 2000)];
static alignas(KESTREL_ALIGN) uint8_t scaler_work[2][KESTREL_SCALER_WORK_BYTES(CK_DIM)];
static alignas(KESTREL_ALIGN) uint8_t slkl_work[2][KESTREL_SLKL_WORK_BYTES(CK_WINDOW, CK_DIM, CK_CENTRES, CK_CENTRES)];
static uint8_t svm_checkpoint[2][KESTREL_SVM_CHECKPOINT_BYTES(CK_WINDOW, CK_DIM, 2000)];
static uint8_t scaler_checkpoint[KESTREL_SCALER_CHECKPOINT_BYTES(CK_DIM)];
static uint8_t slkl_checkpoint[2][KESTREL_SLKL_CHECKPOINT_BYTES(CK_WINDOW, CK_DIM, CK_CENTRES, CK_CENTRES)];
static uint8_t svm_model[KESTREL_SVM_MODEL_BYTES(CK_DIM) + KESTREL_SCALER_SECTION_BYTES(CK_DIM)];
enum { CK_CLASSES = 3 };
static alignas(KESTREL_ALIGN) uint8_t multi_work[2][KESTREL_MULTICLASS_WORK_BYTES(CK_WINDOW, CK_DIM, 2000, CK_CLASSES)];
static uint8_t multi_checkpoint[2][KESTREL_MULTICLASS_CHECKPOINT_BYTES(CK_WINDOW, CK_DIM, 2000, CK_CLASSES)];
static uint8_t multi_model[KESTREL_MULTICLASS_MODEL_BYTES(CK_DIM, CK_CLASSES)];

/* Prints bytes as `WHAT NAME LEN HEX` (WHAT: `checkpoint` or `model`), for the runner to
   compare the device's with the host's. */
static void print_hex(const char *what, const char *name, const uint8_t *bytes, size_t len) {
    printf("%s %s %u ", what, name, (unsigned)len);
    for (size_t i = 0; i < len; i++) printf("%02x", bytes[i]);
    printf("\n");
}

/* A deterministic reading in raw units (xorshift32). */
static uint32_t ck_state = 2463534242u;
static float ck_uniform(void) {
    ck_state ^= ck_state << 13;
    ck_state ^= ck_state >> 17;
    ck_state ^= ck_state << 5;
    return (float)(ck_state >> 8) / 16777216.0f;
}

/* Two SVMs with their scalers and two SLKL regressors see the same rows; at CK_CUT the
   second of each pair is checkpointed, its memory wiped and resumed from the bytes. They
   predict the same bits as the first all along and end with the same checkpoint bytes. */
static int learners_resume_from_a_checkpoint_bit_for_bit(void) {
    kestrel_svm_config svm_config = kestrel_svm_default_config(CK_WINDOW, CK_DIM);
    svm_config.steps_per_sample = 20;
    kestrel_slkl_config slkl_config = kestrel_slkl_default_config(CK_WINDOW, CK_DIM, CK_CENTRES);
    float centres[CK_CENTRES * CK_DIM];
    for (size_t i = 0; i < CK_CENTRES * CK_DIM; i++) centres[i] = 4.0f * ck_uniform() - 2.0f;
    kestrel_svm *svm[2];
    kestrel_scaler *scaler[2];
    kestrel_slkl *slkl[2];
    for (int k = 0; k < 2; k++) {
        CHECK(kestrel_svm_create(&svm_config, svm_work[k], sizeof svm_work[k], &svm[k]) == KESTREL_STATUS_OK);
        CHECK(kestrel_scaler_create(CK_DIM, scaler_work[k], sizeof scaler_work[k], &scaler[k]) == KESTREL_STATUS_OK);
        CHECK(kestrel_slkl_create(&slkl_config, centres, CK_CENTRES * CK_DIM, slkl_work[k], sizeof slkl_work[k],
                                  &slkl[k]) == KESTREL_STATUS_OK);
    }
    for (int t = 0; t < CK_ROWS; t++) {
        if (t == CK_CUT) {
            size_t svm_len, scaler_len, slkl_len;
            CHECK(kestrel_svm_checkpoint(svm[1], svm_checkpoint[0], sizeof svm_checkpoint[0], &svm_len) ==
                  KESTREL_STATUS_OK);
            CHECK(kestrel_scaler_checkpoint(scaler[1], scaler_checkpoint, sizeof scaler_checkpoint, &scaler_len) ==
                  KESTREL_STATUS_OK);
            CHECK(kestrel_slkl_checkpoint(slkl[1], slkl_checkpoint[0], sizeof slkl_checkpoint[0], &slkl_len) ==
                  KESTREL_STATUS_OK);
            memset(svm_work[1], 0xA5, sizeof svm_work[1]);
            memset(scaler_work[1], 0xA5, sizeof scaler_work[1]);
            memset(slkl_work[1], 0xA5, sizeof slkl_work[1]);
            /* A torn write is refused, never resumed. */
            CHECK(kestrel_svm_resume(&svm_config, svm_checkpoint[0], svm_len - 1, svm_work[1], sizeof svm_work[1],
                                     &svm[1]) == KESTREL_STATUS_MODEL_TRUNCATED);
            CHECK(kestrel_svm_resume(&svm_config, svm_checkpoint[0], svm_len, svm_work[1], sizeof svm_work[1],
                                     &svm[1]) == KESTREL_STATUS_OK);
            CHECK(kestrel_scaler_resume(CK_DIM, scaler_checkpoint, scaler_len, scaler_work[1], sizeof scaler_work[1],
                                        &scaler[1]) == KESTREL_STATUS_OK);
            CHECK(kestrel_slkl_resume(&slkl_config, slkl_checkpoint[0], slkl_len, slkl_work[1], sizeof slkl_work[1],
                                      &slkl[1]) == KESTREL_STATUS_OK);
        }
        float raw[CK_DIM] = {1000.0f + 40.0f * ck_uniform(), 0.05f * ck_uniform(), 3.0f * ck_uniform() - 1.5f};
        int label = (raw[0] - 1020.0f) / 40.0f + raw[2] > 0.0f ? 1 : -1;
        float target = raw[2] * raw[2] - (raw[1] - 0.025f) * 20.0f;
        for (int k = 0; k < 2; k++) {
            float scaled[CK_DIM];
            CHECK(kestrel_scaler_observe(scaler[k], raw, CK_DIM) == KESTREL_STATUS_OK);
            CHECK(kestrel_scaler_transform(scaler[k], raw, CK_DIM, scaled) == KESTREL_STATUS_OK);
            CHECK(kestrel_svm_learn(svm[k], scaled, CK_DIM, label) == KESTREL_STATUS_OK);
            CHECK(kestrel_slkl_learn(slkl[k], scaled, CK_DIM, target) == KESTREL_STATUS_OK);
        }
        float probe[CK_DIM] = {0.5f, -0.25f, 1.0f}, y[2];
        int32_t class[2];
        for (int k = 0; k < 2; k++) {
            CHECK(kestrel_svm_predict(svm[k], probe, CK_DIM, &class[k]) == KESTREL_STATUS_OK);
            CHECK(kestrel_slkl_predict(slkl[k], probe, CK_DIM, &y[k]) == KESTREL_STATUS_OK);
        }
        CHECK(class[0] == class[1] && memcmp(&y[0], &y[1], sizeof y[0]) == 0);
    }
    size_t a, b;
    CHECK(kestrel_svm_checkpoint(svm[0], svm_checkpoint[0], sizeof svm_checkpoint[0], &a) == KESTREL_STATUS_OK);
    CHECK(kestrel_svm_checkpoint(svm[1], svm_checkpoint[1], sizeof svm_checkpoint[1], &b) == KESTREL_STATUS_OK);
    CHECK(a == b && memcmp(svm_checkpoint[0], svm_checkpoint[1], a) == 0);
    print_hex("checkpoint", "svm", svm_checkpoint[0], a);
    CHECK(kestrel_scaler_checkpoint(scaler[0], scaler_checkpoint, sizeof scaler_checkpoint, &a) == KESTREL_STATUS_OK);
    print_hex("checkpoint", "scaler", scaler_checkpoint, a);
    CHECK(kestrel_svm_save(svm[0], scaler[0], svm_model, sizeof svm_model, &a) == KESTREL_STATUS_OK);
    print_hex("model", "svm", svm_model, a);
    CHECK(kestrel_slkl_checkpoint(slkl[0], slkl_checkpoint[0], sizeof slkl_checkpoint[0], &a) == KESTREL_STATUS_OK);
    CHECK(kestrel_slkl_checkpoint(slkl[1], slkl_checkpoint[1], sizeof slkl_checkpoint[1], &b) == KESTREL_STATUS_OK);
    CHECK(a == b && memcmp(slkl_checkpoint[0], slkl_checkpoint[1], a) == 0);
    print_hex("checkpoint", "slkl", slkl_checkpoint[0], a);
    return 1;
}

/* Two multi-class learners of three classes (regions of the plane of the first two
   features) see the same rows; at CK_CUT the second is checkpointed, its memory
   wiped and resumed from the bytes. They give the same classes and probability bits all
   along and end with the same checkpoint. */
static int multiclass_resumes_from_a_checkpoint_bit_for_bit(void) {
    kestrel_multiclass_config config = kestrel_multiclass_default_config(CK_WINDOW, CK_DIM, CK_CLASSES);
    config.svm.steps_per_sample = 20;
    kestrel_multiclass *multi[2];
    for (int k = 0; k < 2; k++)
        CHECK(kestrel_multiclass_create(&config, multi_work[k], sizeof multi_work[k], &multi[k]) == KESTREL_STATUS_OK);
    for (int t = 0; t < CK_ROWS; t++) {
        if (t == CK_CUT) {
            size_t len;
            CHECK(kestrel_multiclass_checkpoint(multi[1], multi_checkpoint[0], sizeof multi_checkpoint[0], &len) ==
                  KESTREL_STATUS_OK);
            memset(multi_work[1], 0xA5, sizeof multi_work[1]);
            CHECK(kestrel_multiclass_resume(&config, multi_checkpoint[0], len, multi_work[1], sizeof multi_work[1],
                                            &multi[1]) == KESTREL_STATUS_OK);
        }
        float x[CK_DIM] = {2.0f * ck_uniform() - 1.0f, 2.0f * ck_uniform() - 1.0f, ck_uniform()};
        /* Class 2 below the line x1 = 0.5·x0; above it, class 0 left of x0 = 0.2, else 1. */
        int32_t class = x[1] > 0.5f * x[0] ? (x[0] < 0.2f ? 0 : 1) : 2;
        float p[2][CK_CLASSES];
        int32_t predicted[2];
        for (int k = 0; k < 2; k++) {
            CHECK(kestrel_multiclass_learn(multi[k], x, CK_DIM, class) == KESTREL_STATUS_OK);
            CHECK(kestrel_multiclass_predict(multi[k], x, CK_DIM, &predicted[k]) == KESTREL_STATUS_OK);
            CHECK(kestrel_multiclass_probabilities(multi[k], x, CK_DIM, p[k], CK_CLASSES) == KESTREL_STATUS_OK);
        }
        CHECK(predicted[0] == predicted[1] && memcmp(p[0], p[1], sizeof p[0]) == 0);
    }
    size_t a, b;
    CHECK(kestrel_multiclass_checkpoint(multi[0], multi_checkpoint[0], sizeof multi_checkpoint[0], &a) ==
          KESTREL_STATUS_OK);
    CHECK(kestrel_multiclass_checkpoint(multi[1], multi_checkpoint[1], sizeof multi_checkpoint[1], &b) ==
          KESTREL_STATUS_OK);
    CHECK(a == b && memcmp(multi_checkpoint[0], multi_checkpoint[1], a) == 0);
    print_hex("checkpoint", "multiclass", multi_checkpoint[0], a);
    CHECK(kestrel_multiclass_save(multi[0], NULL, multi_model, sizeof multi_model, &a) == KESTREL_STATUS_OK);
    print_hex("model", "multiclass", multi_model, a);
    return 1;
}

int main(void) {
    static const struct {
        const char *name;
        int (*run)(void);
    } tests[] = {
        {"c_learners_resume_from_a_checkpoint_bit_for_bit", learners_resume_from_a_checkpoint_bit_for_bit},
        {"c_multiclass_resumes_from_a_checkpoint_bit_for_bit", multiclass_resumes_from_a_checkpoint_bit_for_bit},
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
