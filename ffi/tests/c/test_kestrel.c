/*
 * The C ABI from C: every function of kestrel.h with good and bad arguments, against the
 * host build of libkestrel_ffi.a, compiled with -std=c11 -Wall -Wextra -Werror -pedantic
 * and run under AddressSanitizer and UBSan by ffi/run-c-tests.sh.
 *
 * Usage: test_kestrel MODELS_DIR F64_MODEL OUT_DIR
 *   MODELS_DIR  firmware-demo/models: NAME.kestrel, NAME.csv (header, rows, label last) and
 *               NAME.expected (the f32 bits `kestrel predict` printed), for slkl, svm, rsvm,
 *               weighed (an rsvm whose scaler carries relevance weights)
 *   F64_MODEL   a model file trained with --scalar f64 (refused by kestrel_model_open)
 *   OUT_DIR     where the models learned here are written, each with its inputs (CSV) and
 *               the predictions kestrel_model_predict made (NAME.c-predictions), for the
 *               runner to compare with `kestrel predict`
 *
 * Prints `test NAME ... ok|FAILED` per test and `N passed, N failed`; exits non-zero when
 * a test failed.
 */
#include <math.h>
#include <pthread.h>
#include <stdalign.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kestrel.h"

static const char *models_dir, *f64_model, *out_dir;

#define CHECK(cond)                                                             \
    do {                                                                        \
        if (!(cond)) {                                                          \
            fprintf(stderr, "    %s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
            return 0;                                                           \
        }                                                                       \
    } while (0)

#define CHECK_STATUS(call, expected)                                            \
    do {                                                                        \
        kestrel_status got_ = (call);                                           \
        if (got_ != (expected)) {                                               \
            fprintf(stderr, "    %s:%d: %s returned %d (%s), expected %s\n", __FILE__, __LINE__, #call, \
                    (int)got_, kestrel_status_str(got_), #expected);             \
            return 0;                                                           \
        }                                                                       \
    } while (0)

/* Work memory for every test: large enough for each object here, aligned as the ABI
   requires. */
#define WORK_BYTES (1u << 20)
static alignas(KESTREL_ALIGN) unsigned char work_a[WORK_BYTES];
static alignas(KESTREL_ALIGN) unsigned char work_b[WORK_BYTES];

/* ---- small helpers ------------------------------------------------------------------- */

/* The file's bytes, with a NUL after them (not counted in *len), or NULL. */
static unsigned char *read_file(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    unsigned char *data = NULL;
    size_t cap = 0, n = 0, got;
    do {
        if (n + 1 >= cap) {
            cap = cap ? 2 * cap : 4096;
            unsigned char *grown = realloc(data, cap);
            if (!grown) { free(data); fclose(f); return NULL; }
            data = grown;
        }
        got = fread(data + n, 1, cap - n - 1, f);
        n += got;
    } while (got > 0);
    fclose(f);
    data[n] = '\0';
    *len = n;
    return data;
}

static char *path_of(const char *dir, const char *name, const char *ext) {
    static char path[4096];
    snprintf(path, sizeof path, "%s/%s%s", dir, name, ext);
    return path;
}

/* The rows a scaler has observed (UINT64_MAX when the call fails). */
static uint64_t observed(const kestrel_scaler *scaler) {
    uint64_t count;
    return kestrel_scaler_count(scaler, &count) == KESTREL_STATUS_OK ? count : UINT64_MAX;
}

static uint32_t bits(float x) {
    uint32_t b;
    memcpy(&b, &x, sizeof b);
    return b;
}

/* A deterministic stream of uniform numbers in [0, 1) (xorshift64*). */
static uint64_t rng_state = 88172645463325252ull;
static float uniform(void) {
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return (float)((rng_state * 2685821657736338717ull) >> 40) / (float)(1u << 24);
}

/* Parses the CSV rows of `text` (header skipped, label last) as the host does: each field
   as a double (strtod), then converted to float. Returns the rows read. */
static size_t parse_rows(const char *text, float *x, size_t max_rows, size_t *dim) {
    const char *line = strchr(text, '\n');
    size_t rows = 0;
    *dim = 0;
    while (line && rows < max_rows) {
        line++;
        if (*line == '\0' || *line == '\n') break;
        size_t fields = 0;
        const char *p = line;
        float row[64];
        while (fields < 64) {
            char *end;
            row[fields++] = (float)strtod(p, &end);
            if (*end != ',') break;
            p = end + 1;
        }
        *dim = fields - 1;
        memcpy(x + rows * *dim, row, *dim * sizeof(float));
        rows++;
        line = strchr(line, '\n');
    }
    return rows;
}

/* ---- tests ----------------------------------------------------------------------------- */

static int status_texts_are_distinct(void) {
    CHECK(strcmp(kestrel_status_str(KESTREL_STATUS_OK), "ok") == 0);
    CHECK(strcmp(kestrel_status_str(-1), "unknown status") == 0);
    CHECK(strcmp(kestrel_status_str(KESTREL_STATUS_CONFIG_MISMATCH + 1), "unknown status") == 0);
    for (int a = KESTREL_STATUS_OK; a <= KESTREL_STATUS_CONFIG_MISMATCH; a++)
        for (int b = a + 1; b <= KESTREL_STATUS_CONFIG_MISMATCH; b++)
            CHECK(strcmp(kestrel_status_str(a), kestrel_status_str(b)) != 0);
    return 1;
}

static int size_macros_equal_the_functions(void) {
    static const uint32_t windows[] = {1, 16, 128, 1000}, dims[] = {1, 3, 10, 64}, centres[] = {1, 8, 32};
    for (size_t w = 0; w < 4; w++)
        for (size_t d = 0; d < 4; d++) {
            for (size_t c = 0; c < 3; c++) {
                kestrel_slkl_config config = kestrel_slkl_default_config(windows[w], dims[d], centres[c]);
                CHECK(kestrel_slkl_work_bytes(&config) ==
                      KESTREL_SLKL_WORK_BYTES(windows[w], dims[d], centres[c], centres[c]));
                config.max_active = 1;
                CHECK(kestrel_slkl_work_bytes(&config) == KESTREL_SLKL_WORK_BYTES(windows[w], dims[d], centres[c], 1));
            }
            kestrel_svm_config svm = kestrel_svm_default_config(windows[w], dims[d]);
            CHECK(kestrel_svm_work_bytes(&svm) == KESTREL_SVM_WORK_BYTES(windows[w], dims[d], 2000));
            svm.memory = 0;
            CHECK(kestrel_svm_work_bytes(&svm) == KESTREL_SVM_WORK_BYTES(windows[w], dims[d], 0));
            CHECK(kestrel_scaler_work_bytes(dims[d]) == KESTREL_SCALER_WORK_BYTES(dims[d]));
            for (uint32_t k = 3; k <= 256; k *= 4) {
                kestrel_multiclass_config multi = kestrel_multiclass_default_config(windows[w], dims[d], k);
                CHECK(kestrel_multiclass_work_bytes(&multi) == KESTREL_MULTICLASS_WORK_BYTES(windows[w], dims[d], 2000, k));
                multi.svm.memory = 0;
                CHECK(kestrel_multiclass_work_bytes(&multi) == KESTREL_MULTICLASS_WORK_BYTES(windows[w], dims[d], 0, k));
            }
            for (size_t c = 0; c < 3; c++) {
                kestrel_novelty_config novelty = kestrel_novelty_default_config(windows[w], dims[d], centres[c]);
                CHECK(kestrel_novelty_work_bytes(&novelty) ==
                      KESTREL_NOVELTY_WORK_BYTES(windows[w], dims[d], centres[c]));
            }
        }
    /* Impossible configurations size to 0. */
    kestrel_slkl_config bad = kestrel_slkl_default_config(0, 3, 8);
    CHECK(kestrel_slkl_work_bytes(&bad) == 0 && kestrel_slkl_work_bytes(NULL) == 0);
    bad = kestrel_slkl_default_config(16, 3, 8);
    bad.max_active = 9;
    CHECK(kestrel_slkl_work_bytes(&bad) == 0);
    kestrel_svm_config bad_svm = kestrel_svm_default_config(16, 3);
    bad_svm.c = -1.0f;
    CHECK(kestrel_svm_work_bytes(&bad_svm) == 0 && kestrel_svm_work_bytes(NULL) == 0);
    CHECK(kestrel_scaler_work_bytes(0) == 0);
    kestrel_novelty_config bad_novelty = kestrel_novelty_default_config(16, 3, 0);
    CHECK(kestrel_novelty_work_bytes(&bad_novelty) == 0 && kestrel_novelty_work_bytes(NULL) == 0);
    return 1;
}

/* One of the host-trained models: its bytes, inputs and the CLI's predictions. */
typedef struct {
    unsigned char *bytes;
    size_t len, rows, dim;
    float x[32 * 64];
    uint32_t expected[32];
} host_model;

/* A model's bytes and its first 32 rows, NAME.kestrel and NAME.csv in `dir`. */
static int load_model_rows(const char *dir, const char *name, host_model *m) {
    size_t text_len;
    m->bytes = read_file(path_of(dir, name, ".kestrel"), &m->len);
    char *text = (char *)read_file(path_of(dir, name, ".csv"), &text_len);
    CHECK(m->bytes && text);
    m->rows = parse_rows(text, m->x, 32, &m->dim);
    free(text);
    return 1;
}

static int load_host_model(const char *name, host_model *m) {
    size_t text_len;
    CHECK(load_model_rows(models_dir, name, m));
    char *expected = (char *)read_file(path_of(models_dir, name, ".expected"), &text_len);
    CHECK(expected);
    const char *p = expected;
    for (size_t i = 0; i < m->rows; i++) {
        m->expected[i] = (uint32_t)strtoul(p, NULL, 16);
        p = strchr(p, '\n');
        CHECK(p);
        p++;
    }
    free(expected);
    CHECK(m->rows == 32);
    return 1;
}

/* The SVM's and the weighed rsvm's files carry a scaler (the latter with relevance
   weights, `kestrel train --relevance`), which kestrel_model_predict applies. */
static int host_models_predict_the_clis_bits(void) {
    static const char *names[] = {"slkl", "svm", "rsvm", "weighed"};
    static const uint32_t kinds[] = {2, 1, 3, 3};
    for (size_t k = 0; k < 4; k++) {
        static host_model m;
        CHECK(load_host_model(names[k], &m));
        size_t needed = kestrel_model_work_bytes(m.bytes, m.len);
        CHECK(needed > 0 && needed <= KESTREL_MODEL_WORK_BYTES(m.len, m.dim));
        kestrel_model *model = NULL;
        CHECK_STATUS(kestrel_model_open(m.bytes, m.len, work_a, needed, &model), KESTREL_STATUS_OK);
        /* The bytes are copied: the model no longer needs them. */
        memset(m.bytes, 0, m.len);
        free(m.bytes);
        kestrel_model_info info;
        CHECK_STATUS(kestrel_model_describe(model, &info), KESTREL_STATUS_OK);
        CHECK(info.kind == kinds[k] && info.dim == m.dim && info.is_classifier == (k != 0));
        CHECK(info.scaled == (k == 1 || k == 3));
        for (size_t i = 0; i < m.rows; i++) {
            float y = NAN;
            CHECK_STATUS(kestrel_model_predict(model, m.x + i * m.dim, m.dim, &y), KESTREL_STATUS_OK);
            CHECK(bits(y) == m.expected[i]);
        }
    }
    return 1;
}

/* Class probabilities of the two classifiers the runner trained with them into OUT_DIR
   (probs2: two classes, probs3: three named ones): one per class, each in (0, 1), summing
   to 1, written to OUT_DIR/NAME.c-probabilities for the runner to compare with `kestrel
   predict --probabilities`. A model without them (classes3) and a short buffer are
   refused, the outputs left as they were. */
static int class_probabilities_sum_to_one(void) {
    static const char *names[] = {"probs2", "probs3"};
    for (size_t k = 0; k < 2; k++) {
        static host_model m;
        CHECK(load_model_rows(out_dir, names[k], &m));
        kestrel_model *model = NULL;
        CHECK_STATUS(kestrel_model_open(m.bytes, m.len, work_a, WORK_BYTES, &model), KESTREL_STATUS_OK);
        CHECK(kestrel_model_work_bytes(m.bytes, m.len) <= KESTREL_MODEL_WORK_BYTES(m.len, m.dim));
        free(m.bytes);
        kestrel_model_info info;
        CHECK_STATUS(kestrel_model_describe(model, &info), KESTREL_STATUS_OK);
        CHECK(info.probabilities && info.classes == k + 2);
        FILE *out = fopen(path_of(out_dir, names[k], ".c-probabilities"), "w");
        CHECK(out);
        for (size_t i = 0; i < m.rows; i++) {
            float p[3] = {NAN, NAN, NAN};
            CHECK_STATUS(kestrel_model_probabilities(model, m.x + i * m.dim, m.dim, p, 3), KESTREL_STATUS_OK);
            float sum = 0.0f;
            for (size_t c = 0; c < info.classes; c++) {
                CHECK(p[c] > 0.0f && p[c] < 1.0f);
                sum += p[c];
                fprintf(out, c ? ",%.9g" : "%.9g", (double)p[c]);
            }
            fprintf(out, "\n");
            CHECK(fabsf(sum - 1.0f) < 1e-5f);
        }
        fclose(out);
        float short_out[3] = {7.0f, 7.0f, 7.0f};
        CHECK_STATUS(kestrel_model_probabilities(model, m.x, m.dim, short_out, info.classes - 1),
                     KESTREL_STATUS_BUFFER_TOO_SMALL);
        CHECK_STATUS(kestrel_model_probabilities(model, m.x, m.dim - 1, short_out, 3), KESTREL_STATUS_DIMENSION_MISMATCH);
        CHECK(short_out[0] == 7.0f && short_out[1] == 7.0f && short_out[2] == 7.0f);
    }
    static host_model plain;
    CHECK(load_model_rows(out_dir, "classes3", &plain));
    kestrel_model *model = NULL;
    CHECK_STATUS(kestrel_model_open(plain.bytes, plain.len, work_b, WORK_BYTES, &model), KESTREL_STATUS_OK);
    free(plain.bytes);
    kestrel_model_info info;
    CHECK_STATUS(kestrel_model_describe(model, &info), KESTREL_STATUS_OK);
    CHECK(!info.probabilities);
    float p[3] = {7.0f, 7.0f, 7.0f};
    CHECK_STATUS(kestrel_model_probabilities(model, plain.x, plain.dim, p, 3), KESTREL_STATUS_INVALID_PARAM);
    CHECK(p[0] == 7.0f && p[1] == 7.0f && p[2] == 7.0f);
    return 1;
}

/* A classifier's decision values: as many as info.outputs says, the class they make (the
   sign's for two classes, the largest's beyond) the one kestrel_model_predict writes,
   written to OUT_DIR/NAME.c-decisions for the runner to compare with `kestrel predict
   --decision`. The models: the host's svm, rsvm and weighed, and a three-class rsvm the
   runner trained into OUT_DIR (classes3). Refusals leave the outputs as they were. */
static int decision_values_make_the_prediction(void) {
    static const char *names[] = {"svm", "rsvm", "weighed", "classes3"};
    for (size_t k = 0; k < 4; k++) {
        static host_model m;
        CHECK(load_model_rows(k < 3 ? models_dir : out_dir, names[k], &m));
        kestrel_model *model = NULL;
        CHECK_STATUS(kestrel_model_open(m.bytes, m.len, work_a, WORK_BYTES, &model), KESTREL_STATUS_OK);
        free(m.bytes);
        kestrel_model_info info;
        CHECK_STATUS(kestrel_model_describe(model, &info), KESTREL_STATUS_OK);
        CHECK(info.classes == (k < 3 ? 2u : 3u) && info.outputs == (k < 3 ? 1u : 3u) && info.is_classifier);
        float labels[3];
        for (size_t c = 0; c < info.classes; c++) CHECK_STATUS(kestrel_model_label(model, c, &labels[c]), KESTREL_STATUS_OK);
        float label = 42.0f;
        CHECK_STATUS(kestrel_model_label(model, info.classes, &label), KESTREL_STATUS_INVALID_PARAM);
        CHECK(label == 42.0f);
        FILE *out = fopen(path_of(out_dir, names[k], ".c-decisions"), "w");
        CHECK(out);
        for (size_t i = 0; i < m.rows; i++) {
            float values[3] = {NAN, NAN, NAN}, y = NAN;
            CHECK_STATUS(kestrel_model_decision(model, m.x + i * m.dim, m.dim, values, 3), KESTREL_STATUS_OK);
            CHECK_STATUS(kestrel_model_predict(model, m.x + i * m.dim, m.dim, &y), KESTREL_STATUS_OK);
            size_t best = info.outputs == 1 ? (values[0] >= 0.0f) : 0;
            for (size_t c = 1; c < info.outputs; c++) best = values[c] > values[best] ? c : best;
            CHECK(bits(labels[best]) == bits(y));
            for (size_t c = 0; c < info.outputs; c++) fprintf(out, c ? ",%.17g" : "%.17g", (double)values[c]);
            fprintf(out, "\n");
        }
        fclose(out);
        float short_out[3] = {7.0f, 7.0f, 7.0f};
        CHECK_STATUS(kestrel_model_decision(model, m.x, m.dim, short_out, info.outputs - 1),
                     KESTREL_STATUS_BUFFER_TOO_SMALL);
        CHECK_STATUS(kestrel_model_decision(model, m.x, m.dim - 1, short_out, 3), KESTREL_STATUS_DIMENSION_MISMATCH);
        CHECK_STATUS(kestrel_model_decision(model, NULL, m.dim, short_out, 3), KESTREL_STATUS_NULL_POINTER);
        CHECK_STATUS(kestrel_model_decision(model, m.x, m.dim, NULL, 3), KESTREL_STATUS_NULL_POINTER);
        CHECK(short_out[0] == 7.0f && short_out[1] == 7.0f && short_out[2] == 7.0f);
    }
    /* A regressor has no decision values and no classes. */
    static host_model slkl;
    CHECK(load_host_model("slkl", &slkl));
    kestrel_model *regressor = NULL;
    CHECK_STATUS(kestrel_model_open(slkl.bytes, slkl.len, work_b, WORK_BYTES, &regressor), KESTREL_STATUS_OK);
    free(slkl.bytes);
    kestrel_model_info info;
    CHECK_STATUS(kestrel_model_describe(regressor, &info), KESTREL_STATUS_OK);
    CHECK(info.classes == 0 && info.outputs == 0 && !info.is_classifier);
    float value = 7.0f;
    CHECK_STATUS(kestrel_model_decision(regressor, slkl.x, slkl.dim, &value, 1), KESTREL_STATUS_INVALID_PARAM);
    CHECK_STATUS(kestrel_model_label(regressor, 0, &value), KESTREL_STATUS_INVALID_PARAM);
    CHECK(value == 7.0f);
    return 1;
}

/* A novelty detector learned by `kestrel stream` (the firmware's models/novelty.*): its
   score has the CLI's bits and its flag, the last field of each expected line, the CLI's
   verdict; a model that is not a detector has no score. */
static int novelty_model_scores_the_clis_bits(void) {
    static host_model m;
    CHECK(load_host_model("novelty", &m));
    size_t needed = kestrel_model_work_bytes(m.bytes, m.len);
    CHECK(needed > 0 && needed <= KESTREL_MODEL_WORK_BYTES(m.len, m.dim));
    kestrel_model *model = NULL;
    CHECK_STATUS(kestrel_model_open(m.bytes, m.len, work_a, needed, &model), KESTREL_STATUS_OK);
    kestrel_model_info info;
    CHECK_STATUS(kestrel_model_describe(model, &info), KESTREL_STATUS_OK);
    CHECK(info.kind == 5 && info.dim == 30 && !info.is_classifier && info.scaled);
    size_t text_len;
    char *expected = (char *)read_file(path_of(models_dir, "novelty", ".expected"), &text_len);
    CHECK(expected);
    const char *line = expected;
    size_t flagged = 0;
    for (size_t i = 0; i < m.rows; i++) {
        float score = NAN, flag = NAN;
        CHECK_STATUS(kestrel_model_score(model, m.x + i * m.dim, m.dim, &score), KESTREL_STATUS_OK);
        CHECK(bits(score) == m.expected[i]);
        CHECK_STATUS(kestrel_model_predict(model, m.x + i * m.dim, m.dim, &flag), KESTREL_STATUS_OK);
        const char *end = strchr(line, '\n');
        CHECK(end && end > line);
        CHECK(flag == (end[-1] == '1' ? 1.0f : 0.0f));
        flagged += flag == 1.0f;
        line = end + 1;
    }
    free(expected);
    CHECK(flagged > 0 && flagged < m.rows);
    float score = NAN;
    CHECK_STATUS(kestrel_model_score(model, m.x, 29, &score), KESTREL_STATUS_DIMENSION_MISMATCH);
    free(m.bytes);
    static host_model svm;
    CHECK(load_host_model("rsvm", &svm));
    kestrel_model *classifier = NULL;
    size_t svm_needed = kestrel_model_work_bytes(svm.bytes, svm.len);
    CHECK_STATUS(kestrel_model_open(svm.bytes, svm.len, work_b, svm_needed, &classifier), KESTREL_STATUS_OK);
    CHECK_STATUS(kestrel_model_score(classifier, svm.x, svm.dim, &score), KESTREL_STATUS_INVALID_PARAM);
    CHECK(isnan(score));
    free(svm.bytes);
    return 1;
}

static int bad_model_bytes_are_statuses(void) {
    static host_model m;
    CHECK(load_host_model("slkl", &m));
    kestrel_model *model = (kestrel_model *)work_b, *untouched = model;
    size_t needed = kestrel_model_work_bytes(m.bytes, m.len);
    /* Null pointers. */
    CHECK(kestrel_model_work_bytes(NULL, 10) == 0);
    CHECK_STATUS(kestrel_model_open(NULL, m.len, work_a, needed, &model), KESTREL_STATUS_NULL_POINTER);
    CHECK_STATUS(kestrel_model_open(m.bytes, m.len, NULL, needed, &model), KESTREL_STATUS_NULL_POINTER);
    CHECK_STATUS(kestrel_model_open(m.bytes, m.len, work_a, needed, NULL), KESTREL_STATUS_NULL_POINTER);
    /* Work memory misaligned or one byte short: refused, and the short buffer untouched. */
    CHECK_STATUS(kestrel_model_open(m.bytes, m.len, work_a + 4, needed, &model), KESTREL_STATUS_MISALIGNED);
    memset(work_a, 0x5A, needed);
    CHECK_STATUS(kestrel_model_open(m.bytes, m.len, work_a, needed - 1, &model), KESTREL_STATUS_BUFFER_TOO_SMALL);
    for (size_t i = 0; i < needed; i++) CHECK(work_a[i] == 0x5A);
    /* Truncated, corrupted, foreign bytes. */
    CHECK(kestrel_model_work_bytes(m.bytes, m.len - 1) == 0);
    CHECK_STATUS(kestrel_model_open(m.bytes, m.len - 1, work_a, needed, &model), KESTREL_STATUS_MODEL_TRUNCATED);
    CHECK_STATUS(kestrel_model_open(m.bytes, 3, work_a, needed, &model), KESTREL_STATUS_MODEL_TRUNCATED);
    m.bytes[m.len / 2] ^= 0x10;
    CHECK(kestrel_model_work_bytes(m.bytes, m.len) == 0);
    CHECK_STATUS(kestrel_model_open(m.bytes, m.len, work_a, needed, &model), KESTREL_STATUS_MODEL_CORRUPTED);
    m.bytes[m.len / 2] ^= 0x10;
    static const uint8_t foreign[] = "GIF89a: a picture, not a model";
    CHECK_STATUS(kestrel_model_open(foreign, sizeof foreign, work_a, needed, &model), KESTREL_STATUS_MODEL_FOREIGN);
    /* An f64 model is refused. */
    size_t f64_len;
    unsigned char *f64 = read_file(f64_model, &f64_len);
    CHECK(f64);
    CHECK(kestrel_model_work_bytes(f64, f64_len) == 0);
    CHECK_STATUS(kestrel_model_open(f64, f64_len, work_a, WORK_BYTES, &model), KESTREL_STATUS_MODEL_UNSUPPORTED);
    free(f64);
    /* Every byte flipped in turn, and every truncation: a status each time, never a crash. */
    for (size_t i = 0; i < m.len; i++) {
        m.bytes[i] ^= 0xFF;
        CHECK(kestrel_model_open(m.bytes, m.len, work_a, WORK_BYTES, &model) != KESTREL_STATUS_OK);
        m.bytes[i] ^= 0xFF;
        CHECK(kestrel_model_open(m.bytes, i, work_a, WORK_BYTES, &model) != KESTREL_STATUS_OK);
    }
    CHECK(model == untouched);
    free(m.bytes);
    return 1;
}

static int bad_prediction_arguments_are_statuses(void) {
    static host_model m;
    CHECK(load_host_model("svm", &m));
    kestrel_model *model;
    CHECK_STATUS(kestrel_model_open(m.bytes, m.len, work_a, WORK_BYTES, &model), KESTREL_STATUS_OK);
    free(m.bytes);
    float y = 42.0f, row[64];
    memcpy(row, m.x, m.dim * sizeof(float));
    CHECK_STATUS(kestrel_model_predict(NULL, row, m.dim, &y), KESTREL_STATUS_NULL_POINTER);
    CHECK_STATUS(kestrel_model_predict(model, NULL, m.dim, &y), KESTREL_STATUS_NULL_POINTER);
    CHECK_STATUS(kestrel_model_predict(model, row, m.dim, NULL), KESTREL_STATUS_NULL_POINTER);
    CHECK_STATUS(kestrel_model_predict(model, row, m.dim - 1, &y), KESTREL_STATUS_DIMENSION_MISMATCH);
    CHECK_STATUS(kestrel_model_predict(model, (const float *)((const char *)row + 1), m.dim, &y),
                 KESTREL_STATUS_MISALIGNED);
    row[3] = NAN;
    CHECK_STATUS(kestrel_model_predict(model, row, m.dim, &y), KESTREL_STATUS_NON_FINITE);
    row[3] = INFINITY;
    CHECK_STATUS(kestrel_model_predict(model, row, m.dim, &y), KESTREL_STATUS_NON_FINITE);
    CHECK(y == 42.0f);
    /* A handle of another kind, and memory no constructor wrote. */
    kestrel_scaler *scaler;
    CHECK_STATUS(kestrel_scaler_create(3, work_b, WORK_BYTES, &scaler), KESTREL_STATUS_OK);
    CHECK_STATUS(kestrel_model_predict((const kestrel_model *)scaler, m.x, m.dim, &y), KESTREL_STATUS_WRONG_OBJECT);
    static alignas(KESTREL_ALIGN) unsigned char zeros[256];
    CHECK_STATUS(kestrel_model_predict((const kestrel_model *)zeros, m.x, m.dim, &y), KESTREL_STATUS_WRONG_OBJECT);
    kestrel_model_info info;
    CHECK_STATUS(kestrel_model_describe(NULL, &info), KESTREL_STATUS_NULL_POINTER);
    CHECK_STATUS(kestrel_model_describe(model, NULL), KESTREL_STATUS_NULL_POINTER);
    CHECK(y == 42.0f);
    /* The model still predicts as before. */
    CHECK_STATUS(kestrel_model_predict(model, m.x, m.dim, &y), KESTREL_STATUS_OK);
    CHECK(bits(y) == m.expected[0]);
    return 1;
}

/* Threads predicting with one scaled model: each call gets the right bits or BUSY. */
typedef struct {
    const kestrel_model *model;
    const host_model *m;
    long ok, busy, wrong;
} predictor_thread;

static void *predict_many(void *arg) {
    predictor_thread *t = arg;
    for (int i = 0; i < 20000; i++) {
        size_t row = (size_t)i % t->m->rows;
        float y;
        kestrel_status s = kestrel_model_predict(t->model, t->m->x + row * t->m->dim, t->m->dim, &y);
        if (s == KESTREL_STATUS_OK && bits(y) == t->m->expected[row]) t->ok++;
        else if (s == KESTREL_STATUS_BUSY) t->busy++;
        else t->wrong++;
    }
    return NULL;
}

static int concurrent_predictions_are_right_or_busy(void) {
    static host_model m;
    CHECK(load_host_model("svm", &m));
    kestrel_model *model;
    CHECK_STATUS(kestrel_model_open(m.bytes, m.len, work_a, WORK_BYTES, &model), KESTREL_STATUS_OK);
    free(m.bytes);
    predictor_thread threads[4];
    pthread_t ids[4];
    for (int i = 0; i < 4; i++) {
        threads[i] = (predictor_thread){model, &m, 0, 0, 0};
        CHECK(pthread_create(&ids[i], NULL, predict_many, &threads[i]) == 0);
    }
    long ok = 0;
    for (int i = 0; i < 4; i++) {
        CHECK(pthread_join(ids[i], NULL) == 0);
        CHECK(threads[i].wrong == 0 && threads[i].ok + threads[i].busy == 20000);
        ok += threads[i].ok;
    }
    CHECK(ok > 0);
    return 1;
}

/* The SLKL learner's target: a smooth function of two features. */
static float target(const float *x) { return sinf(3.0f * x[0]) + x[1] * x[1]; }

/* Writes the rows as a CSV the CLI reads (label last) and the model's predictions. */
static int write_comparison(const char *name, const kestrel_model *model, const float *x, size_t rows, size_t dim) {
    FILE *csv = fopen(path_of(out_dir, name, ".csv"), "w");
    FILE *pred = fopen(path_of(out_dir, name, ".c-predictions"), "w");
    CHECK(csv && pred);
    for (size_t j = 0; j < dim; j++) fprintf(csv, "x%zu,", j);
    fprintf(csv, "y\n");
    for (size_t i = 0; i < rows; i++) {
        float y;
        CHECK_STATUS(kestrel_model_predict(model, x + i * dim, dim, &y), KESTREL_STATUS_OK);
        /* %.9g reads back to the same float: the CLI's reader gives the model the same bits. */
        for (size_t j = 0; j < dim; j++) fprintf(csv, "%.9g,", (double)x[i * dim + j]);
        fprintf(csv, "0\n");
        fprintf(pred, "%.17g\n", (double)y);
    }
    fclose(csv);
    fclose(pred);
    return 1;
}

static int saved_file(const char *name, const unsigned char *bytes, size_t len) {
    FILE *f = fopen(path_of(out_dir, name, ".kestrel"), "wb");
    CHECK(f && fwrite(bytes, 1, len, f) == len);
    fclose(f);
    return 1;
}

static int slkl_learns_saves_and_reopens(void) {
    enum { WINDOW = 64, DIM = 2, CENTRES = 16 };
    kestrel_slkl_config config = kestrel_slkl_default_config(WINDOW, DIM, CENTRES);
    config.kernel.gamma = 2.0f;
    config.nu = 1e-3f;
    static alignas(KESTREL_ALIGN) unsigned char work[KESTREL_SLKL_WORK_BYTES(WINDOW, DIM, CENTRES, CENTRES)];
    CHECK(kestrel_slkl_work_bytes(&config) == sizeof work);
    float centres[CENTRES * DIM];
    for (size_t i = 0; i < CENTRES * DIM; i++) centres[i] = 2.0f * uniform() - 1.0f;
    kestrel_slkl *learner;
    CHECK_STATUS(kestrel_slkl_create(&config, centres, CENTRES * DIM, work, sizeof work, &learner), KESTREL_STATUS_OK);
    kestrel_learner_state state;
    float y;
    const float origin[DIM] = {0.0f, 0.0f};
    CHECK_STATUS(kestrel_slkl_predict(learner, origin, DIM, &y), KESTREL_STATUS_OK);
    CHECK(y == 0.0f);
    double squared = 0.0, squared_mean = 0.0;
    for (int t = 0; t < 600; t++) {
        float x[DIM] = {2.0f * uniform() - 1.0f, 2.0f * uniform() - 1.0f};
        CHECK_STATUS(kestrel_slkl_predict(learner, x, DIM, &y), KESTREL_STATUS_OK);
        if (t >= 300) {
            squared += (y - target(x)) * (y - target(x));
            squared_mean += (0.33f - target(x)) * (0.33f - target(x));
        }
        CHECK_STATUS(kestrel_slkl_learn(learner, x, DIM, target(x)), KESTREL_STATUS_OK);
    }
    /* Test-then-train error well below that of a constant near the target's mean. */
    CHECK(squared < 0.1 * squared_mean);
    CHECK_STATUS(kestrel_slkl_state(learner, &state), KESTREL_STATUS_OK);
    CHECK(state.samples_seen == 600 && state.window_len == WINDOW);
    CHECK(state.active_centres > 0 && state.active_centres <= CENTRES);
    CHECK(state.last_steps <= config.steps_per_sample);

    /* Save: ask for the length, then write; the bound of the header holds. */
    size_t len = 0;
    CHECK_STATUS(kestrel_slkl_save(learner, NULL, NULL, 0, &len), KESTREL_STATUS_BUFFER_TOO_SMALL);
    CHECK(len > 0 && len <= KESTREL_SLKL_MODEL_BYTES(DIM, CENTRES));
    unsigned char saved[KESTREL_SLKL_MODEL_BYTES(DIM, CENTRES)];
    size_t written = 0;
    CHECK_STATUS(kestrel_slkl_save(learner, NULL, saved, len - 1, &written), KESTREL_STATUS_BUFFER_TOO_SMALL);
    CHECK(written == len);
    CHECK_STATUS(kestrel_slkl_save(learner, NULL, saved, sizeof saved, &written), KESTREL_STATUS_OK);
    CHECK(written == len);

    /* The saved model predicts what the learner predicts. */
    kestrel_model *model;
    CHECK_STATUS(kestrel_model_open(saved, written, work_b, WORK_BYTES, &model), KESTREL_STATUS_OK);
    kestrel_model_info info;
    CHECK_STATUS(kestrel_model_describe(model, &info), KESTREL_STATUS_OK);
    CHECK(info.kind == 2 && info.dim == DIM && info.centres == state.active_centres && !info.scaled);
    float rows[64 * DIM];
    for (size_t i = 0; i < 64 * DIM; i++) rows[i] = 2.0f * uniform() - 1.0f;
    for (size_t i = 0; i < 64; i++) {
        float from_learner, from_model;
        CHECK_STATUS(kestrel_slkl_predict(learner, rows + i * DIM, DIM, &from_learner), KESTREL_STATUS_OK);
        CHECK_STATUS(kestrel_model_predict(model, rows + i * DIM, DIM, &from_model), KESTREL_STATUS_OK);
        CHECK(fabsf(from_learner - from_model) <= 1e-4f * (1.0f + fabsf(from_learner)));
    }
    CHECK(saved_file("slkl-device", saved, written));
    return write_comparison("slkl-device", model, rows, 64, DIM);
}

static int slkl_refuses_bad_arguments_unchanged(void) {
    enum { WINDOW = 16, DIM = 3, CENTRES = 4 };
    kestrel_slkl_config config = kestrel_slkl_default_config(WINDOW, DIM, CENTRES);
    const float centres[CENTRES * DIM] = {0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1};
    kestrel_slkl *learner = NULL;
    size_t bytes = kestrel_slkl_work_bytes(&config);
    /* Creation. */
    CHECK_STATUS(kestrel_slkl_create(NULL, centres, 12, work_a, bytes, &learner), KESTREL_STATUS_NULL_POINTER);
    CHECK_STATUS(kestrel_slkl_create(&config, NULL, 12, work_a, bytes, &learner), KESTREL_STATUS_NULL_POINTER);
    CHECK_STATUS(kestrel_slkl_create(&config, centres, 12, NULL, bytes, &learner), KESTREL_STATUS_NULL_POINTER);
    CHECK_STATUS(kestrel_slkl_create(&config, centres, 12, work_a, bytes, NULL), KESTREL_STATUS_NULL_POINTER);
    CHECK_STATUS(kestrel_slkl_create(&config, centres, 11, work_a, bytes, &learner), KESTREL_STATUS_DIMENSION_MISMATCH);
    CHECK_STATUS(kestrel_slkl_create(&config, centres, 12, work_a, bytes - 1, &learner), KESTREL_STATUS_BUFFER_TOO_SMALL);
    CHECK_STATUS(kestrel_slkl_create(&config, centres, 12, work_a + 1, bytes, &learner), KESTREL_STATUS_MISALIGNED);
    kestrel_slkl_config bad = config;
    bad.window = 0;
    CHECK_STATUS(kestrel_slkl_create(&bad, centres, 12, work_a, WORK_BYTES, &learner), KESTREL_STATUS_INVALID_PARAM);
    bad = config;
    bad.nu = -1.0f;
    CHECK_STATUS(kestrel_slkl_create(&bad, centres, 12, work_a, WORK_BYTES, &learner), KESTREL_STATUS_INVALID_PARAM);
    bad = config;
    bad.kernel.kind = 99;
    CHECK_STATUS(kestrel_slkl_create(&bad, centres, 12, work_a, WORK_BYTES, &learner), KESTREL_STATUS_INVALID_PARAM);
    bad = config;
    bad.steps_per_sample = 0;
    CHECK_STATUS(kestrel_slkl_create(&bad, centres, 12, work_a, WORK_BYTES, &learner), KESTREL_STATUS_INVALID_PARAM);
    float nan_centres[CENTRES * DIM];
    memcpy(nan_centres, centres, sizeof centres);
    nan_centres[5] = NAN;
    CHECK_STATUS(kestrel_slkl_create(&config, nan_centres, 12, work_a, bytes, &learner), KESTREL_STATUS_NON_FINITE);
    CHECK(learner == NULL);
    CHECK_STATUS(kestrel_slkl_create(&config, centres, 12, work_a, bytes, &learner), KESTREL_STATUS_OK);
    for (int t = 0; t < 40; t++) {
        float x[DIM] = {uniform(), uniform(), uniform()};
        CHECK_STATUS(kestrel_slkl_learn(learner, x, DIM, x[0] - x[2]), KESTREL_STATUS_OK);
    }
    /* Bad samples: refused, and the learner predicts the same bits after. */
    const float probe[DIM] = {0.25f, 0.5f, 0.75f};
    float before, after;
    kestrel_learner_state state;
    CHECK_STATUS(kestrel_slkl_predict(learner, probe, DIM, &before), KESTREL_STATUS_OK);
    float x[DIM] = {0.1f, NAN, 0.3f};
    CHECK_STATUS(kestrel_slkl_learn(learner, x, DIM, 1.0f), KESTREL_STATUS_NON_FINITE);
    x[1] = 0.2f;
    CHECK_STATUS(kestrel_slkl_learn(learner, x, DIM, INFINITY), KESTREL_STATUS_NON_FINITE);
    CHECK_STATUS(kestrel_slkl_learn(learner, x, DIM, 1e30f), KESTREL_STATUS_NON_FINITE);
    CHECK_STATUS(kestrel_slkl_learn(learner, x, DIM - 1, 1.0f), KESTREL_STATUS_DIMENSION_MISMATCH);
    CHECK_STATUS(kestrel_slkl_learn(learner, NULL, DIM, 1.0f), KESTREL_STATUS_NULL_POINTER);
    CHECK_STATUS(kestrel_slkl_learn(NULL, x, DIM, 1.0f), KESTREL_STATUS_NULL_POINTER);
    CHECK_STATUS(kestrel_slkl_predict(learner, x, DIM + 1, &after), KESTREL_STATUS_DIMENSION_MISMATCH);
    CHECK_STATUS(kestrel_slkl_state(learner, NULL), KESTREL_STATUS_NULL_POINTER);
    CHECK_STATUS(kestrel_slkl_save(learner, NULL, NULL, 0, NULL), KESTREL_STATUS_NULL_POINTER);
    CHECK_STATUS(kestrel_slkl_predict(learner, probe, DIM, &after), KESTREL_STATUS_OK);
    CHECK(bits(before) == bits(after));
    CHECK_STATUS(kestrel_slkl_state(learner, &state), KESTREL_STATUS_OK);
    CHECK(state.samples_seen == 40);
    /* A scaler of another dimension cannot be saved with the model. */
    kestrel_scaler *scaler;
    CHECK_STATUS(kestrel_scaler_create(DIM + 1, work_b, WORK_BYTES, &scaler), KESTREL_STATUS_OK);
    size_t len;
    unsigned char out[1024];
    CHECK_STATUS(kestrel_slkl_save(learner, scaler, out, sizeof out, &len), KESTREL_STATUS_DIMENSION_MISMATCH);
    /* Handles of the wrong kind. */
    CHECK_STATUS(kestrel_slkl_learn((kestrel_slkl *)scaler, x, DIM, 1.0f), KESTREL_STATUS_WRONG_OBJECT);
    CHECK_STATUS(kestrel_svm_state((const kestrel_svm *)learner, &state), KESTREL_STATUS_WRONG_OBJECT);
    /* A failed constructor in the learner's memory ends the learner's handle. */
    CHECK_STATUS(kestrel_slkl_create(&config, nan_centres, 12, work_a, bytes, &learner), KESTREL_STATUS_NON_FINITE);
    CHECK_STATUS(kestrel_slkl_predict(learner, probe, DIM, &after), KESTREL_STATUS_WRONG_OBJECT);
    return 1;
}

static int svm_with_scaler_learns_saves_and_reopens(void) {
    enum { WINDOW = 128, DIM = 4 };
    kestrel_svm_config config = kestrel_svm_default_config(WINDOW, DIM);
    CHECK(kestrel_svm_work_bytes(&config) == KESTREL_SVM_WORK_BYTES(WINDOW, DIM, 2000));
    kestrel_svm *svm;
    kestrel_scaler *scaler;
    CHECK_STATUS(kestrel_svm_create(&config, work_a, WORK_BYTES, &svm), KESTREL_STATUS_OK);
    CHECK_STATUS(kestrel_scaler_create(DIM, work_b, KESTREL_SCALER_WORK_BYTES(DIM), &scaler), KESTREL_STATUS_OK);
    /* Raw units far apart (a pressure in pascals beside a temperature): the class is the
       sign of a combination of the standardised features. */
    static const float mean[DIM] = {101325.0f, 20.0f, 0.0f, 5.0f}, scale[DIM] = {500.0f, 3.0f, 1.0f, 0.01f};
    int right = 0, counted = 0;
    for (int t = 0; t < 2000; t++) {
        float z[DIM], x[DIM], scaled[DIM];
        for (int j = 0; j < DIM; j++) {
            z[j] = 2.0f * uniform() - 1.0f;
            x[j] = mean[j] + scale[j] * z[j];
        }
        int label = z[0] - z[1] + 0.5f * z[3] > 0.0f ? 1 : -1;
        int32_t predicted = 0;
        if (observed(scaler) > 0) {
            CHECK_STATUS(kestrel_scaler_transform(scaler, x, DIM, scaled), KESTREL_STATUS_OK);
            CHECK_STATUS(kestrel_svm_predict(svm, scaled, DIM, &predicted), KESTREL_STATUS_OK);
        }
        if (t >= 1000) {
            right += predicted == label;
            counted++;
        }
        CHECK_STATUS(kestrel_scaler_observe(scaler, x, DIM), KESTREL_STATUS_OK);
        CHECK_STATUS(kestrel_scaler_transform(scaler, x, DIM, scaled), KESTREL_STATUS_OK);
        CHECK_STATUS(kestrel_svm_learn(svm, scaled, DIM, label), KESTREL_STATUS_OK);
    }
    CHECK(right >= 0.95 * counted);
    kestrel_learner_state state;
    CHECK_STATUS(kestrel_svm_state(svm, &state), KESTREL_STATUS_OK);
    CHECK(state.samples_seen == 2000 && state.window_len == WINDOW && state.active_centres == 0);
    /* The new sample's own step, then those the stopping rule left, up to the cap. */
    CHECK(state.last_steps >= 1 && state.last_steps <= config.steps_per_sample);
    CHECK(observed(scaler) == 2000);

    /* Saved with the scaler: the model standardises raw rows itself. */
    unsigned char saved[KESTREL_SVM_MODEL_BYTES(DIM) + KESTREL_SCALER_SECTION_BYTES(DIM)];
    size_t len;
    CHECK_STATUS(kestrel_svm_save(svm, scaler, saved, sizeof saved, &len), KESTREL_STATUS_OK);
    kestrel_model *model;
    CHECK_STATUS(kestrel_model_open(saved, len, work_a + KESTREL_SVM_WORK_BYTES(WINDOW, DIM, 2000), 4096, &model),
                 KESTREL_STATUS_OK);
    kestrel_model_info info;
    CHECK_STATUS(kestrel_model_describe(model, &info), KESTREL_STATUS_OK);
    /* The learner's class probability, fitted online, travels in the file. */
    CHECK(info.kind == 1 && info.scaled && info.is_classifier && info.dim == DIM && info.probabilities);
    float rows[200 * DIM];
    int agree = 0, sure = 0, sure_and_right = 0;
    FILE *probabilities = fopen(path_of(out_dir, "svm-device", ".c-probabilities"), "w");
    CHECK(probabilities);
    for (int i = 0; i < 200; i++) {
        float scaled[DIM], label, z[DIM];
        for (int j = 0; j < DIM; j++) {
            z[j] = 2.0f * uniform() - 1.0f;
            rows[i * DIM + j] = mean[j] + scale[j] * z[j];
        }
        int32_t from_learner;
        CHECK_STATUS(kestrel_scaler_transform(scaler, rows + i * DIM, DIM, scaled), KESTREL_STATUS_OK);
        CHECK_STATUS(kestrel_svm_predict(svm, scaled, DIM, &from_learner), KESTREL_STATUS_OK);
        CHECK_STATUS(kestrel_model_predict(model, rows + i * DIM, DIM, &label), KESTREL_STATUS_OK);
        CHECK(label == 1.0f || label == -1.0f);
        agree += (float)from_learner == label;
        /* The learner's probability of +1 is the model's second class's (labels −1, +1). */
        float q = NAN, p[2] = {NAN, NAN};
        CHECK_STATUS(kestrel_svm_probability(svm, scaled, DIM, &q), KESTREL_STATUS_OK);
        CHECK_STATUS(kestrel_model_probabilities(model, rows + i * DIM, DIM, p, 2), KESTREL_STATUS_OK);
        CHECK(q >= 0.0f && q <= 1.0f && fabsf(p[1] - q) < 1e-5f && fabsf(p[0] + p[1] - 1.0f) < 1e-6f);
        fprintf(probabilities, "%.9g,%.9g\n", (double)p[0], (double)p[1]);
        if (q > 0.9f || q < 0.1f) {
            sure++;
            sure_and_right += (q > 0.5f) == (z[0] - z[1] + 0.5f * z[3] > 0.0f);
        }
    }
    fclose(probabilities);
    /* The two differ only for a decision value of exactly 0 (the learner says −1, the
       model file, as LIBLINEAR, +1). */
    CHECK(agree >= 199);
    /* Where it is sure, it is right. */
    CHECK(sure >= 100 && sure_and_right >= 0.98 * sure);
    CHECK(saved_file("svm-device", saved, len));
    return write_comparison("svm-device", model, rows, 200, DIM);
}

/* Class of the multi-class stream: which of four blobs, around the corners of a square in
   the first two features (the third is noise), the sample came from. */
static int32_t blob_sample(float *x) {
    int32_t class = (int32_t)(uniform() * 4.0f) % 4;
    static const float corner[4][2] = {{1.0f, 1.0f}, {-1.0f, 1.0f}, {-1.0f, -1.0f}, {1.0f, -1.0f}};
    x[0] = corner[class][0] + 1.2f * (uniform() - 0.5f);
    x[1] = corner[class][1] + 1.2f * (uniform() - 0.5f);
    x[2] = 2.0f * uniform() - 1.0f;
    return class;
}

static int multiclass_learns_saves_and_resumes(void) {
    enum { WINDOW = 64, DIM = 3, CLASSES = 4 };
    kestrel_multiclass_config config = kestrel_multiclass_default_config(WINDOW, DIM, CLASSES);
    static alignas(KESTREL_ALIGN) unsigned char work[KESTREL_MULTICLASS_WORK_BYTES(WINDOW, DIM, 2000, CLASSES)];
    CHECK(kestrel_multiclass_work_bytes(&config) == sizeof work);
    kestrel_multiclass *learner;
    CHECK_STATUS(kestrel_multiclass_create(&config, work, sizeof work, &learner), KESTREL_STATUS_OK);
    int right = 0, sure = 0, sure_and_right = 0;
    for (int t = 0; t < 2000; t++) {
        float x[DIM], p[CLASSES];
        int32_t class = blob_sample(x), predicted = -1;
        CHECK_STATUS(kestrel_multiclass_predict(learner, x, DIM, &predicted), KESTREL_STATUS_OK);
        CHECK_STATUS(kestrel_multiclass_probabilities(learner, x, DIM, p, CLASSES), KESTREL_STATUS_OK);
        float sum = 0.0f, best = 0.0f;
        for (int c = 0; c < CLASSES; c++) {
            CHECK(p[c] >= 0.0f && p[c] <= 1.0f);
            sum += p[c];
            best = p[c] > best ? p[c] : best;
        }
        CHECK(fabsf(sum - 1.0f) < 1e-5f);
        if (t >= 1000) {
            right += predicted == class;
            if (best > 0.9f) {
                sure++;
                sure_and_right += p[class] == best;
            }
        }
        CHECK_STATUS(kestrel_multiclass_learn(learner, x, DIM, class), KESTREL_STATUS_OK);
    }
    /* Every class learns its blob, and where the learner is sure it is right. */
    CHECK(right >= 960);
    CHECK(sure >= 500 && sure_and_right >= 0.99 * sure);
    kestrel_learner_state state;
    CHECK_STATUS(kestrel_multiclass_state(learner, &state), KESTREL_STATUS_OK);
    CHECK(state.samples_seen == 2000 && state.window_len == WINDOW && state.last_steps >= CLASSES);

    /* The saved model: a one-vs-rest linear model of four classes with the learner's
       probabilities, predicting as the learner. */
    unsigned char saved[KESTREL_MULTICLASS_MODEL_BYTES(DIM, CLASSES)];
    size_t len;
    CHECK_STATUS(kestrel_multiclass_save(learner, NULL, saved, sizeof saved, &len), KESTREL_STATUS_OK);
    kestrel_model *model;
    CHECK_STATUS(kestrel_model_open(saved, len, work_a, WORK_BYTES, &model), KESTREL_STATUS_OK);
    kestrel_model_info info;
    CHECK_STATUS(kestrel_model_describe(model, &info), KESTREL_STATUS_OK);
    CHECK(info.kind == 1 && info.is_classifier && info.classes == CLASSES && info.outputs == CLASSES);
    CHECK(info.probabilities && info.dim == DIM);
    float rows[200 * DIM];
    FILE *probabilities = fopen(path_of(out_dir, "multiclass-device", ".c-probabilities"), "w");
    CHECK(probabilities);
    for (int i = 0; i < 200; i++) {
        float *x = rows + i * DIM, label, p[CLASSES], q[CLASSES];
        int32_t from_learner;
        (void)blob_sample(x);
        CHECK_STATUS(kestrel_multiclass_predict(learner, x, DIM, &from_learner), KESTREL_STATUS_OK);
        CHECK_STATUS(kestrel_model_predict(model, x, DIM, &label), KESTREL_STATUS_OK);
        CHECK(label == (float)from_learner);
        CHECK_STATUS(kestrel_multiclass_probabilities(learner, x, DIM, q, CLASSES), KESTREL_STATUS_OK);
        CHECK_STATUS(kestrel_model_probabilities(model, x, DIM, p, CLASSES), KESTREL_STATUS_OK);
        for (int c = 0; c < CLASSES; c++) {
            CHECK(fabsf(p[c] - q[c]) < 1e-6f);
            fprintf(probabilities, c + 1 < CLASSES ? "%.9g," : "%.9g\n", (double)p[c]);
        }
    }
    fclose(probabilities);
    CHECK(saved_file("multiclass-device", saved, len));
    CHECK(write_comparison("multiclass-device", model, rows, 200, DIM));

    /* A checkpoint resumes bit for bit: both learners go on alike. */
    static unsigned char first[KESTREL_MULTICLASS_CHECKPOINT_BYTES(WINDOW, DIM, 2000, CLASSES)];
    static unsigned char second[KESTREL_MULTICLASS_CHECKPOINT_BYTES(WINDOW, DIM, 2000, CLASSES)];
    CHECK(kestrel_multiclass_checkpoint_bytes(&config) == sizeof first);
    size_t first_len, second_len;
    CHECK_STATUS(kestrel_multiclass_checkpoint(learner, first, sizeof first, &first_len), KESTREL_STATUS_OK);
    /* For the runner: kestrel import makes this checkpoint the model saved above. */
    CHECK(saved_file("multiclass-device-checkpoint", first, first_len));
    kestrel_multiclass *resumed;
    CHECK_STATUS(kestrel_multiclass_resume(&config, first, first_len, work_b, WORK_BYTES, &resumed), KESTREL_STATUS_OK);
    for (int t = 0; t < 300; t++) {
        float x[DIM];
        int32_t class = blob_sample(x);
        CHECK_STATUS(kestrel_multiclass_learn(learner, x, DIM, class), KESTREL_STATUS_OK);
        CHECK_STATUS(kestrel_multiclass_learn(resumed, x, DIM, class), KESTREL_STATUS_OK);
    }
    CHECK_STATUS(kestrel_multiclass_checkpoint(learner, first, sizeof first, &first_len), KESTREL_STATUS_OK);
    CHECK_STATUS(kestrel_multiclass_checkpoint(resumed, second, sizeof second, &second_len), KESTREL_STATUS_OK);
    CHECK(first_len == second_len && memcmp(first, second, first_len) == 0);
    /* Another learner's checkpoint, or this one under another configuration, is refused. */
    kestrel_multiclass_config other = config;
    other.classes = 5;
    CHECK_STATUS(kestrel_multiclass_resume(&other, first, first_len, work_b, WORK_BYTES, &resumed),
                 KESTREL_STATUS_CONFIG_MISMATCH);
    return 1;
}

static int multiclass_refuses_bad_arguments_unchanged(void) {
    kestrel_multiclass_config config = kestrel_multiclass_default_config(8, 2, 3);
    kestrel_multiclass *learner = NULL;
    kestrel_multiclass_config bad = config;
    bad.classes = 2; /* two classes are kestrel_svm's */
    CHECK_STATUS(kestrel_multiclass_create(&bad, work_a, WORK_BYTES, &learner), KESTREL_STATUS_INVALID_PARAM);
    CHECK(kestrel_multiclass_work_bytes(&bad) == 0);
    bad.classes = KESTREL_MULTICLASS_MAX_CLASSES + 1;
    CHECK_STATUS(kestrel_multiclass_create(&bad, work_a, WORK_BYTES, &learner), KESTREL_STATUS_INVALID_PARAM);
    bad = config;
    bad.svm.c = -1.0f;
    CHECK_STATUS(kestrel_multiclass_create(&bad, work_a, WORK_BYTES, &learner), KESTREL_STATUS_INVALID_PARAM);
    CHECK_STATUS(kestrel_multiclass_create(&config, work_a, 64, &learner), KESTREL_STATUS_BUFFER_TOO_SMALL);
    CHECK_STATUS(kestrel_multiclass_create(NULL, work_a, WORK_BYTES, &learner), KESTREL_STATUS_NULL_POINTER);
    CHECK_STATUS(kestrel_multiclass_create(&config, work_a + 4, WORK_BYTES - 4, &learner), KESTREL_STATUS_MISALIGNED);
    CHECK(learner == NULL);
    CHECK_STATUS(kestrel_multiclass_create(&config, work_a, WORK_BYTES, &learner), KESTREL_STATUS_OK);
    const float a[2] = {1.0f, 2.0f}, b[2] = {-1.0f, -2.0f}, nan_row[2] = {NAN, 0.0f}, huge[2] = {3e38f, 3e38f};
    CHECK_STATUS(kestrel_multiclass_learn(learner, a, 2, 0), KESTREL_STATUS_OK);
    CHECK_STATUS(kestrel_multiclass_learn(learner, b, 2, 2), KESTREL_STATUS_OK);
    static unsigned char before[KESTREL_MULTICLASS_CHECKPOINT_BYTES(8, 2, 2000, 3)];
    static unsigned char after[KESTREL_MULTICLASS_CHECKPOINT_BYTES(8, 2, 2000, 3)];
    size_t before_len, after_len;
    CHECK_STATUS(kestrel_multiclass_checkpoint(learner, before, sizeof before, &before_len), KESTREL_STATUS_OK);
    CHECK_STATUS(kestrel_multiclass_learn(learner, a, 2, 3), KESTREL_STATUS_INVALID_LABEL);
    CHECK_STATUS(kestrel_multiclass_learn(learner, a, 2, -1), KESTREL_STATUS_INVALID_LABEL);
    CHECK_STATUS(kestrel_multiclass_learn(learner, nan_row, 2, 1), KESTREL_STATUS_NON_FINITE);
    CHECK_STATUS(kestrel_multiclass_learn(learner, huge, 2, 1), KESTREL_STATUS_NON_FINITE);
    CHECK_STATUS(kestrel_multiclass_learn(learner, a, 3, 1), KESTREL_STATUS_DIMENSION_MISMATCH);
    CHECK_STATUS(kestrel_multiclass_learn(learner, NULL, 2, 1), KESTREL_STATUS_NULL_POINTER);
    CHECK_STATUS(kestrel_multiclass_checkpoint(learner, after, sizeof after, &after_len), KESTREL_STATUS_OK);
    CHECK(before_len == after_len && memcmp(before, after, before_len) == 0);
    int32_t class = 7;
    float p[3] = {7.0f, 7.0f, 7.0f};
    CHECK_STATUS(kestrel_multiclass_predict(learner, nan_row, 2, &class), KESTREL_STATUS_NON_FINITE);
    CHECK_STATUS(kestrel_multiclass_predict(learner, a, 2, NULL), KESTREL_STATUS_NULL_POINTER);
    CHECK_STATUS(kestrel_multiclass_probabilities(learner, a, 2, p, 2), KESTREL_STATUS_BUFFER_TOO_SMALL);
    CHECK_STATUS(kestrel_multiclass_probabilities(learner, nan_row, 2, p, 3), KESTREL_STATUS_NON_FINITE);
    CHECK(class == 7 && p[0] == 7.0f && p[1] == 7.0f && p[2] == 7.0f);
    /* A handle of another kind. */
    kestrel_svm *svm;
    kestrel_svm_config svm_config = kestrel_svm_default_config(8, 2);
    CHECK_STATUS(kestrel_svm_create(&svm_config, work_b, WORK_BYTES, &svm), KESTREL_STATUS_OK);
    CHECK_STATUS(kestrel_multiclass_learn((kestrel_multiclass *)(void *)svm, a, 2, 0), KESTREL_STATUS_WRONG_OBJECT);
    return 1;
}

static int svm_and_scaler_refuse_bad_arguments_unchanged(void) {
    kestrel_svm_config config = kestrel_svm_default_config(8, 2);
    kestrel_svm *svm = NULL;
    kestrel_svm_config bad = config;
    bad.loss = 7;
    CHECK_STATUS(kestrel_svm_create(&bad, work_a, WORK_BYTES, &svm), KESTREL_STATUS_INVALID_PARAM);
    bad = config;
    bad.c = 0.0f;
    CHECK_STATUS(kestrel_svm_create(&bad, work_a, WORK_BYTES, &svm), KESTREL_STATUS_INVALID_PARAM);
    bad = config;
    bad.bias = NAN;
    CHECK_STATUS(kestrel_svm_create(&bad, work_a, WORK_BYTES, &svm), KESTREL_STATUS_INVALID_PARAM);
    bad = config;
    bad.epsilon = 0.0f;
    CHECK_STATUS(kestrel_svm_create(&bad, work_a, WORK_BYTES, &svm), KESTREL_STATUS_INVALID_PARAM);
    CHECK(kestrel_svm_work_bytes(&bad) == 0);
    bad.epsilon = NAN;
    CHECK_STATUS(kestrel_svm_create(&bad, work_a, WORK_BYTES, &svm), KESTREL_STATUS_INVALID_PARAM);
    CHECK_STATUS(kestrel_svm_create(NULL, work_a, WORK_BYTES, &svm), KESTREL_STATUS_NULL_POINTER);
    CHECK_STATUS(kestrel_svm_create(&config, work_a, 16, &svm), KESTREL_STATUS_BUFFER_TOO_SMALL);
    CHECK(svm == NULL);
    CHECK_STATUS(kestrel_svm_create(&config, work_a, WORK_BYTES, &svm), KESTREL_STATUS_OK);
    const float a[2] = {1.0f, 2.0f}, b[2] = {-1.0f, -2.0f}, nan_row[2] = {NAN, 0.0f};
    CHECK_STATUS(kestrel_svm_learn(svm, a, 2, 1), KESTREL_STATUS_OK);
    CHECK_STATUS(kestrel_svm_learn(svm, b, 2, -1), KESTREL_STATUS_OK);
    CHECK_STATUS(kestrel_svm_learn(svm, a, 2, 0), KESTREL_STATUS_INVALID_LABEL);
    CHECK_STATUS(kestrel_svm_learn(svm, a, 2, 2), KESTREL_STATUS_INVALID_LABEL);
    CHECK_STATUS(kestrel_svm_learn(svm, nan_row, 2, 1), KESTREL_STATUS_NON_FINITE);
    CHECK_STATUS(kestrel_svm_learn(svm, a, 3, 1), KESTREL_STATUS_DIMENSION_MISMATCH);
    int32_t label = 7;
    CHECK_STATUS(kestrel_svm_predict(svm, nan_row, 2, &label), KESTREL_STATUS_NON_FINITE);
    CHECK_STATUS(kestrel_svm_predict(svm, a, 2, NULL), KESTREL_STATUS_NULL_POINTER);
    CHECK(label == 7);
    float probability = 7.0f;
    CHECK_STATUS(kestrel_svm_probability(svm, nan_row, 2, &probability), KESTREL_STATUS_NON_FINITE);
    CHECK_STATUS(kestrel_svm_probability(svm, a, 3, &probability), KESTREL_STATUS_DIMENSION_MISMATCH);
    CHECK_STATUS(kestrel_svm_probability(svm, a, 2, NULL), KESTREL_STATUS_NULL_POINTER);
    static alignas(KESTREL_ALIGN) unsigned char not_a_learner[KESTREL_SVM_OBJECT_BYTES];
    CHECK_STATUS(kestrel_svm_probability((const kestrel_svm *)not_a_learner, a, 2, &probability),
                 KESTREL_STATUS_WRONG_OBJECT);
    CHECK(probability == 7.0f);
    kestrel_learner_state state;
    CHECK_STATUS(kestrel_svm_state(svm, &state), KESTREL_STATUS_OK);
    CHECK(state.samples_seen == 2 && state.window_len == 2);
    size_t len = 0;
    unsigned char out[8];
    CHECK_STATUS(kestrel_svm_save(svm, NULL, out, sizeof out, &len), KESTREL_STATUS_BUFFER_TOO_SMALL);
    CHECK(len > sizeof out && len <= KESTREL_SVM_MODEL_BYTES(2));

    kestrel_scaler *scaler = NULL;
    CHECK_STATUS(kestrel_scaler_create(0, work_b, WORK_BYTES, &scaler), KESTREL_STATUS_INVALID_PARAM);
    CHECK_STATUS(kestrel_scaler_create(2, work_b, KESTREL_SCALER_WORK_BYTES(2) - 1, &scaler),
                 KESTREL_STATUS_BUFFER_TOO_SMALL);
    CHECK(scaler == NULL);
    CHECK_STATUS(kestrel_scaler_create(2, work_b, KESTREL_SCALER_WORK_BYTES(2), &scaler), KESTREL_STATUS_OK);
    const float rows[4][2] = {{1000.0f, 0.0f}, {1002.0f, 1.0f}, {998.0f, 0.0f}, {1000.0f, 1.0f}};
    for (int i = 0; i < 4; i++) CHECK_STATUS(kestrel_scaler_observe(scaler, rows[i], 2), KESTREL_STATUS_OK);
    CHECK_STATUS(kestrel_scaler_observe(scaler, nan_row, 2), KESTREL_STATUS_NON_FINITE);
    CHECK_STATUS(kestrel_scaler_observe(scaler, rows[0], 3), KESTREL_STATUS_DIMENSION_MISMATCH);
    CHECK(observed(scaler) == 4 && observed(NULL) == UINT64_MAX);
    CHECK_STATUS(kestrel_scaler_count(scaler, NULL), KESTREL_STATUS_NULL_POINTER);
    /* μ = (1000, 0.5), σ = (√2, 0.5); in place. */
    float x[2] = {1001.0f, 1.0f};
    CHECK_STATUS(kestrel_scaler_transform(scaler, x, 2, x), KESTREL_STATUS_OK);
    CHECK(fabsf(x[0] - 0.70710677f) < 1e-6f && fabsf(x[1] - 1.0f) < 1e-6f);
    CHECK_STATUS(kestrel_scaler_transform(scaler, x, 1, x), KESTREL_STATUS_DIMENSION_MISMATCH);
    CHECK_STATUS(kestrel_scaler_transform(scaler, NULL, 2, x), KESTREL_STATUS_NULL_POINTER);
    CHECK_STATUS(kestrel_scaler_transform((const kestrel_scaler *)svm, x, 2, x), KESTREL_STATUS_WRONG_OBJECT);
    return 1;
}

/* A standard normal number, near enough: the sum of four uniforms, centred and scaled. */
static float normal(void) {
    return (uniform() + uniform() + uniform() + uniform() - 2.0f) * 1.7320508f;
}

static int novelty_learns_flags_saves_and_reopens(void) {
    enum { WINDOW = 64, DIM = 3, CENTRES = 16, WARMUP = 100, ROWS = 1500, EVERY = 50 };
    kestrel_novelty_config config = kestrel_novelty_default_config(WINDOW, DIM, CENTRES);
    config.kernel.gamma = 0.5f;
    config.warmup = WARMUP;
    static alignas(KESTREL_ALIGN) unsigned char work[KESTREL_NOVELTY_WORK_BYTES(WINDOW, DIM, CENTRES)];
    CHECK(kestrel_novelty_work_bytes(&config) == sizeof work);
    kestrel_novelty *detector;
    CHECK_STATUS(kestrel_novelty_create(&config, work, sizeof work, &detector), KESTREL_STATUS_OK);
    /* Normal readings around the origin; from the warm-up's end, every EVERY-th is a fault
       far from them. The rows and the flags go to files, for the runner to stream the same
       rows through `kestrel stream --learner novelty`. */
    FILE *csv = fopen(path_of(out_dir, "novelty-device", ".csv"), "w");
    FILE *flags = fopen(path_of(out_dir, "novelty-device", ".c-flags"), "w");
    CHECK(csv && flags);
    fprintf(csv, "x0,x1,x2,fault\n");
    int faults = 0, caught = 0, false_alarms = 0, normals = 0;
    for (int t = 0; t < ROWS; t++) {
        int fault = t >= WARMUP && t % EVERY == 0;
        float x[DIM];
        for (int j = 0; j < DIM; j++) x[j] = normal() + (fault ? 6.0f : 0.0f);
        kestrel_novelty_verdict verdict;
        CHECK_STATUS(kestrel_novelty_learn(detector, x, DIM, &verdict), KESTREL_STATUS_OK);
        CHECK(verdict.scored == (t > 0) && verdict.has_threshold == (t >= WARMUP));
        CHECK(!verdict.anomaly || verdict.distance2 > verdict.threshold);
        fprintf(csv, "%.9g,%.9g,%.9g,%d\n", (double)x[0], (double)x[1], (double)x[2], fault);
        fprintf(flags, "%d\n", verdict.anomaly);
        if (fault) {
            faults++;
            caught += verdict.anomaly;
        } else if (t >= WARMUP) {
            normals++;
            false_alarms += verdict.anomaly;
        }
    }
    fclose(csv);
    fclose(flags);
    /* Every fault flagged; about 1 % of the normal readings (q = 0.99). */
    CHECK(caught == faults && faults == (ROWS - WARMUP) / EVERY);
    CHECK(false_alarms <= 0.05 * normals);
    kestrel_detector_state state;
    CHECK_STATUS(kestrel_novelty_state(detector, &state), KESTREL_STATUS_OK);
    CHECK(state.samples_seen == ROWS && state.flagged == (uint64_t)(caught + false_alarms));
    CHECK(state.window_len == WINDOW && state.centres > 0 && state.centres <= CENTRES && state.has_threshold);

    /* Saved and reopened, the model scores as the detector does and flags by its threshold. */
    size_t len = 0;
    CHECK_STATUS(kestrel_novelty_save(detector, NULL, NULL, 0, &len), KESTREL_STATUS_BUFFER_TOO_SMALL);
    CHECK(len > 0 && len <= KESTREL_NOVELTY_MODEL_BYTES(DIM, CENTRES));
    unsigned char saved[KESTREL_NOVELTY_MODEL_BYTES(DIM, CENTRES)];
    CHECK_STATUS(kestrel_novelty_save(detector, NULL, saved, sizeof saved, &len), KESTREL_STATUS_OK);
    kestrel_model *model;
    CHECK_STATUS(kestrel_model_open(saved, len, work_b, WORK_BYTES, &model), KESTREL_STATUS_OK);
    kestrel_model_info info;
    CHECK_STATUS(kestrel_model_describe(model, &info), KESTREL_STATUS_OK);
    CHECK(info.kind == 5 && info.dim == DIM && info.centres == state.centres && !info.scaled);
    for (int i = 0; i < 100; i++) {
        float x[DIM];
        for (int j = 0; j < DIM; j++) x[j] = normal() + (i % 10 == 0 ? 6.0f : 0.0f);
        kestrel_novelty_verdict verdict;
        float score, flag;
        CHECK_STATUS(kestrel_novelty_score(detector, x, DIM, &verdict), KESTREL_STATUS_OK);
        CHECK_STATUS(kestrel_model_score(model, x, DIM, &score), KESTREL_STATUS_OK);
        CHECK_STATUS(kestrel_model_predict(model, x, DIM, &flag), KESTREL_STATUS_OK);
        CHECK(fabsf(score - verdict.distance2) <= 1e-5f * (1.0f + verdict.distance2));
        CHECK(flag == (score > state.threshold ? 1.0f : 0.0f));
        CHECK(i % 10 != 0 || flag == 1.0f);
    }
    /* Scoring learned nothing. */
    kestrel_detector_state after;
    CHECK_STATUS(kestrel_novelty_state(detector, &after), KESTREL_STATUS_OK);
    CHECK(after.samples_seen == state.samples_seen && after.flagged == state.flagged);
    CHECK(after.window_len == state.window_len && after.centres == state.centres);
    CHECK(bits(after.threshold) == bits(state.threshold));
    return saved_file("novelty-device", saved, len);
}

static int novelty_refuses_bad_arguments_unchanged(void) {
    kestrel_novelty_config config = kestrel_novelty_default_config(8, 2, 4);
    kestrel_novelty *detector = NULL;
    kestrel_novelty_config bad = config;
    bad.quantile = 1.0;
    CHECK_STATUS(kestrel_novelty_create(&bad, work_a, WORK_BYTES, &detector), KESTREL_STATUS_INVALID_PARAM);
    bad = config;
    bad.warmup = 1;
    CHECK_STATUS(kestrel_novelty_create(&bad, work_a, WORK_BYTES, &detector), KESTREL_STATUS_INVALID_PARAM);
    bad = config;
    bad.delta = NAN;
    CHECK_STATUS(kestrel_novelty_create(&bad, work_a, WORK_BYTES, &detector), KESTREL_STATUS_INVALID_PARAM);
    bad = config;
    bad.kernel.kind = 99;
    CHECK_STATUS(kestrel_novelty_create(&bad, work_a, WORK_BYTES, &detector), KESTREL_STATUS_INVALID_PARAM);
    CHECK_STATUS(kestrel_novelty_create(NULL, work_a, WORK_BYTES, &detector), KESTREL_STATUS_NULL_POINTER);
    CHECK_STATUS(kestrel_novelty_create(&config, work_a + 1, WORK_BYTES - 8, &detector), KESTREL_STATUS_MISALIGNED);
    CHECK_STATUS(kestrel_novelty_create(&config, work_a, KESTREL_NOVELTY_WORK_BYTES(8, 2, 4) - 1, &detector),
                 KESTREL_STATUS_BUFFER_TOO_SMALL);
    CHECK(detector == NULL);
    CHECK_STATUS(kestrel_novelty_create(&config, work_a, KESTREL_NOVELTY_WORK_BYTES(8, 2, 4), &detector),
                 KESTREL_STATUS_OK);

    /* Nothing to score or save before the first reading. */
    const float a[2] = {0.5f, -0.5f}, nan_row[2] = {0.0f, NAN}, inf_row[2] = {INFINITY, 0.0f};
    kestrel_novelty_verdict verdict = {.scored = true, .distance2 = 7.0f};
    CHECK_STATUS(kestrel_novelty_score(detector, a, 2, &verdict), KESTREL_STATUS_OK);
    CHECK(!verdict.scored && verdict.distance2 == 0.0f && !verdict.anomaly);
    size_t len = 0;
    CHECK_STATUS(kestrel_novelty_save(detector, NULL, NULL, 0, &len), KESTREL_STATUS_INVALID_PARAM);

    CHECK_STATUS(kestrel_novelty_learn(detector, a, 2, &verdict), KESTREL_STATUS_OK);
    verdict.distance2 = 7.0f;
    CHECK_STATUS(kestrel_novelty_learn(detector, nan_row, 2, &verdict), KESTREL_STATUS_NON_FINITE);
    CHECK_STATUS(kestrel_novelty_learn(detector, inf_row, 2, &verdict), KESTREL_STATUS_NON_FINITE);
    CHECK_STATUS(kestrel_novelty_learn(detector, a, 3, &verdict), KESTREL_STATUS_DIMENSION_MISMATCH);
    CHECK_STATUS(kestrel_novelty_learn(detector, NULL, 2, &verdict), KESTREL_STATUS_NULL_POINTER);
    CHECK_STATUS(kestrel_novelty_learn(detector, a, 2, NULL), KESTREL_STATUS_NULL_POINTER);
    CHECK_STATUS(kestrel_novelty_learn(NULL, a, 2, &verdict), KESTREL_STATUS_NULL_POINTER);
    CHECK(verdict.distance2 == 7.0f);
    kestrel_detector_state state;
    CHECK_STATUS(kestrel_novelty_state(detector, &state), KESTREL_STATUS_OK);
    CHECK(state.samples_seen == 1 && state.window_len == 1 && state.centres == 1 && !state.has_threshold);
    CHECK_STATUS(kestrel_novelty_state(detector, NULL), KESTREL_STATUS_NULL_POINTER);

    /* A handle of another kind is refused, and a novelty handle by the other objects. */
    kestrel_scaler *scaler;
    CHECK_STATUS(kestrel_scaler_create(2, work_b, KESTREL_SCALER_WORK_BYTES(2), &scaler), KESTREL_STATUS_OK);
    CHECK_STATUS(kestrel_novelty_learn((kestrel_novelty *)scaler, a, 2, &verdict), KESTREL_STATUS_WRONG_OBJECT);
    CHECK_STATUS(kestrel_scaler_observe((kestrel_scaler *)detector, a, 2), KESTREL_STATUS_WRONG_OBJECT);
    /* A scaler of another width does not go with the model. */
    kestrel_scaler *wide;
    CHECK_STATUS(kestrel_scaler_create(3, work_b + 4096, KESTREL_SCALER_WORK_BYTES(3), &wide), KESTREL_STATUS_OK);
    unsigned char out[256];
    CHECK_STATUS(kestrel_novelty_save(detector, wide, out, sizeof out, &len), KESTREL_STATUS_DIMENSION_MISMATCH);
    CHECK_STATUS(kestrel_novelty_save(detector, NULL, out, sizeof out, &len), KESTREL_STATUS_OK);
    CHECK(len <= KESTREL_NOVELTY_MODEL_BYTES(2, 4));

    /* Under the normalised linear kernel a row of zeros has no direction, and one whose
       k(x, x) = |x|^2 overflows a float has none either: refused, the detector unchanged. */
    kestrel_novelty_config linear = config;
    linear.kernel.kind = KESTREL_KERNEL_KIND_LINEAR;
    kestrel_novelty *cosine;
    CHECK_STATUS(kestrel_novelty_create(&linear, work_b + 8192, KESTREL_NOVELTY_WORK_BYTES(8, 2, 4), &cosine),
                 KESTREL_STATUS_OK);
    const float zeros[2] = {0.0f, 0.0f}, huge[2] = {3e19f, 0.0f};
    CHECK_STATUS(kestrel_novelty_learn(cosine, a, 2, &verdict), KESTREL_STATUS_OK);
    verdict.distance2 = 7.0f;
    CHECK_STATUS(kestrel_novelty_learn(cosine, zeros, 2, &verdict), KESTREL_STATUS_INVALID_PARAM);
    CHECK_STATUS(kestrel_novelty_learn(cosine, huge, 2, &verdict), KESTREL_STATUS_NON_FINITE);
    CHECK(verdict.distance2 == 7.0f);
    CHECK_STATUS(kestrel_novelty_state(cosine, &state), KESTREL_STATUS_OK);
    CHECK(state.samples_seen == 1 && state.window_len == 1);
    return 1;
}

/* ---- checkpoints: learning that survives a reset ------------------------------------ */

static int checkpoint_macros_equal_the_functions(void) {
    static const uint32_t windows[] = {1, 16, 128, 1000}, dims[] = {1, 3, 10, 64}, centres[] = {1, 8, 32};
    for (size_t w = 0; w < 4; w++)
        for (size_t d = 0; d < 4; d++) {
            kestrel_svm_config svm = kestrel_svm_default_config(windows[w], dims[d]);
            CHECK(kestrel_svm_checkpoint_bytes(&svm) == KESTREL_SVM_CHECKPOINT_BYTES(windows[w], dims[d], 2000));
            svm.memory = 0;
            CHECK(kestrel_svm_checkpoint_bytes(&svm) == KESTREL_SVM_CHECKPOINT_BYTES(windows[w], dims[d], 0));
            for (uint32_t k = 3; k <= 256; k *= 4) {
                kestrel_multiclass_config multi = kestrel_multiclass_default_config(windows[w], dims[d], k);
                CHECK(kestrel_multiclass_checkpoint_bytes(&multi) ==
                      KESTREL_MULTICLASS_CHECKPOINT_BYTES(windows[w], dims[d], 2000, k));
            }
            CHECK(kestrel_scaler_checkpoint_bytes(dims[d]) == KESTREL_SCALER_CHECKPOINT_BYTES(dims[d]));
            for (size_t c = 0; c < 3; c++) {
                kestrel_slkl_config slkl = kestrel_slkl_default_config(windows[w], dims[d], centres[c]);
                CHECK(kestrel_slkl_checkpoint_bytes(&slkl) ==
                      KESTREL_SLKL_CHECKPOINT_BYTES(windows[w], dims[d], centres[c], centres[c]));
                kestrel_novelty_config novelty = kestrel_novelty_default_config(windows[w], dims[d], centres[c]);
                CHECK(kestrel_novelty_checkpoint_bytes(&novelty) ==
                      KESTREL_NOVELTY_CHECKPOINT_BYTES(windows[w], dims[d], centres[c]));
            }
        }
    kestrel_svm_config bad = kestrel_svm_default_config(0, 3);
    CHECK(kestrel_svm_checkpoint_bytes(&bad) == 0 && kestrel_svm_checkpoint_bytes(NULL) == 0);
    CHECK(kestrel_slkl_checkpoint_bytes(NULL) == 0 && kestrel_novelty_checkpoint_bytes(NULL) == 0);
    CHECK(kestrel_multiclass_checkpoint_bytes(NULL) == 0 && kestrel_multiclass_work_bytes(NULL) == 0);
    CHECK(kestrel_scaler_checkpoint_bytes(0) == 0);
    return 1;
}

/* Buffers of the checkpoints below: the largest object here takes well under this. */
#define CHECKPOINT_BYTES (1u << 17)
static unsigned char checkpoint_a[CHECKPOINT_BYTES], checkpoint_b[CHECKPOINT_BYTES];

/* A reset in the middle of a stream: `reference` learns every sample; the other learner,
   built in `work_b`, learns the first `cut`, is checkpointed (its length asked first,
   within the compile-time bound), its work memory is overwritten as a reset would leave
   it, and it is resumed there to learn the rest. Both then write the same checkpoint,
   byte for byte, and predicted the same bits all along (checked by the callers' steps). */
#define RESUME_TEST(NAME, KIND, CONFIG, BOUND, CREATE, STEP)                                        \
    static int NAME(void) {                                                                         \
        CONFIG;                                                                                     \
        kestrel_##KIND *reference, *learner;                                                        \
        size_t work_len = kestrel_##KIND##_work_bytes(&config);                                     \
        CHECK(work_len > 0 && work_len <= WORK_BYTES);                                              \
        CHECK_STATUS(CREATE(work_a, reference), KESTREL_STATUS_OK);                                 \
        CHECK_STATUS(CREATE(work_b, learner), KESTREL_STATUS_OK);                                   \
        rng_state = 7;                                                                              \
        for (int t = 0; t < 700; t++) {                                                             \
            if (t == 400) {                                                                         \
                size_t needed = 0, len = 0;                                                         \
                CHECK_STATUS(kestrel_##KIND##_checkpoint(learner, NULL, 0, &needed),                \
                             KESTREL_STATUS_BUFFER_TOO_SMALL);                                      \
                CHECK(needed > 0 && needed <= (BOUND) && needed <= CHECKPOINT_BYTES);               \
                CHECK(kestrel_##KIND##_checkpoint_bytes(&config) == (BOUND));                       \
                CHECK_STATUS(kestrel_##KIND##_checkpoint(learner, checkpoint_a, needed, &len),      \
                             KESTREL_STATUS_OK);                                                    \
                CHECK(len == needed);                                                               \
                memset(work_b, 0xA5, work_len);                                                     \
                learner = NULL;                                                                     \
                CHECK_STATUS(kestrel_##KIND##_resume(&config, checkpoint_a, len, work_b, work_len, &learner), \
                             KESTREL_STATUS_OK);                                                    \
            }                                                                                       \
            STEP;                                                                                   \
        }                                                                                           \
        size_t len_a = 0, len_b = 0;                                                                \
        CHECK_STATUS(kestrel_##KIND##_checkpoint(reference, checkpoint_a, CHECKPOINT_BYTES, &len_a),\
                     KESTREL_STATUS_OK);                                                            \
        CHECK_STATUS(kestrel_##KIND##_checkpoint(learner, checkpoint_b, CHECKPOINT_BYTES, &len_b),  \
                     KESTREL_STATUS_OK);                                                            \
        CHECK(len_a == len_b && memcmp(checkpoint_a, checkpoint_b, len_a) == 0);                   \
        return 1;                                                                                   \
    }

#define SVM_CREATE(work, out) kestrel_svm_create(&config, work, WORK_BYTES, &out)
#define SVM_STEP                                                                                    \
    do {                                                                                            \
        float x[3] = {2.0f * uniform() - 1.0f, 2.0f * uniform() - 1.0f, 2.0f * uniform() - 1.0f};  \
        int label = x[0] + 0.5f * x[1] * x[1] - x[2] > 0.1f ? 1 : -1;                               \
        int32_t a = 0, b = 0;                                                                       \
        CHECK_STATUS(kestrel_svm_predict(reference, x, 3, &a), KESTREL_STATUS_OK);                  \
        CHECK_STATUS(kestrel_svm_predict(learner, x, 3, &b), KESTREL_STATUS_OK);                    \
        CHECK(a == b);                                                                              \
        CHECK_STATUS(kestrel_svm_learn(reference, x, 3, label), KESTREL_STATUS_OK);                 \
        CHECK_STATUS(kestrel_svm_learn(learner, x, 3, label), KESTREL_STATUS_OK);                   \
    } while (0)
RESUME_TEST(svm_resumes_bit_for_bit_after_a_reset, svm,
            kestrel_svm_config config = kestrel_svm_default_config(64, 3); config.memory = 500; config.seed = 3,
            KESTREL_SVM_CHECKPOINT_BYTES(64, 3, 500), SVM_CREATE, SVM_STEP)

static float slkl_centres[16 * 2];
#define SLKL_CREATE(work, out) kestrel_slkl_create(&config, slkl_centres, 16 * 2, work, WORK_BYTES, &out)
#define SLKL_STEP                                                                                   \
    do {                                                                                            \
        float x[2] = {2.0f * uniform() - 1.0f, 2.0f * uniform() - 1.0f}, a = 0.0f, b = 0.0f;       \
        CHECK_STATUS(kestrel_slkl_predict(reference, x, 2, &a), KESTREL_STATUS_OK);                 \
        CHECK_STATUS(kestrel_slkl_predict(learner, x, 2, &b), KESTREL_STATUS_OK);                   \
        CHECK(bits(a) == bits(b));                                                                  \
        CHECK_STATUS(kestrel_slkl_learn(reference, x, 2, target(x)), KESTREL_STATUS_OK);            \
        CHECK_STATUS(kestrel_slkl_learn(learner, x, 2, target(x)), KESTREL_STATUS_OK);              \
    } while (0)
RESUME_TEST(slkl_resumes_bit_for_bit_after_a_reset, slkl,
            kestrel_slkl_config config = kestrel_slkl_default_config(48, 2, 16); config.max_active = 12;
            config.kernel.gamma = 2.0f; config.seed = 5;
            for (size_t i = 0; i < 32; i++) slkl_centres[i] = 2.0f * uniform() - 1.0f,
            KESTREL_SLKL_CHECKPOINT_BYTES(48, 2, 16, 12), SLKL_CREATE, SLKL_STEP)

#define NOVELTY_CREATE(work, out) kestrel_novelty_create(&config, work, WORK_BYTES, &out)
#define NOVELTY_STEP                                                                                \
    do {                                                                                            \
        float x[3];                                                                                 \
        for (int j = 0; j < 3; j++) x[j] = normal() + (t % 37 == 36 ? 5.0f : 0.0f);                  \
        kestrel_novelty_verdict a, b;                                                               \
        CHECK_STATUS(kestrel_novelty_learn(reference, x, 3, &a), KESTREL_STATUS_OK);                \
        CHECK_STATUS(kestrel_novelty_learn(learner, x, 3, &b), KESTREL_STATUS_OK);                  \
        CHECK(a.anomaly == b.anomaly && bits(a.distance2) == bits(b.distance2));                    \
        CHECK(a.has_threshold == b.has_threshold && bits(a.threshold) == bits(b.threshold));        \
    } while (0)
RESUME_TEST(novelty_resumes_bit_for_bit_after_a_reset, novelty,
            kestrel_novelty_config config = kestrel_novelty_default_config(32, 3, 12); config.warmup = 100;
            config.span = 200,
            KESTREL_NOVELTY_CHECKPOINT_BYTES(32, 3, 12), NOVELTY_CREATE, NOVELTY_STEP)

static int scaler_resumes_bit_for_bit_after_a_reset(void) {
    enum { DIM = 3 };
    static alignas(KESTREL_ALIGN) unsigned char a_work[KESTREL_SCALER_WORK_BYTES(DIM)],
        b_work[KESTREL_SCALER_WORK_BYTES(DIM)];
    kestrel_scaler *reference, *scaler;
    CHECK_STATUS(kestrel_scaler_create(DIM, a_work, sizeof a_work, &reference), KESTREL_STATUS_OK);
    CHECK_STATUS(kestrel_scaler_create(DIM, b_work, sizeof b_work, &scaler), KESTREL_STATUS_OK);
    /* A fresh scaler resumes too (no sample yet). */
    unsigned char bytes[KESTREL_SCALER_CHECKPOINT_BYTES(DIM)];
    size_t len = 0;
    CHECK_STATUS(kestrel_scaler_checkpoint(scaler, bytes, sizeof bytes, &len), KESTREL_STATUS_OK);
    CHECK_STATUS(kestrel_scaler_resume(DIM, bytes, len, b_work, sizeof b_work, &scaler), KESTREL_STATUS_OK);
    CHECK(observed(scaler) == 0);
    for (int t = 0; t < 300; t++) {
        float x[DIM] = {1000.0f + 50.0f * normal(), 0.01f * uniform(), -3.0f + normal()}, ya[DIM], yb[DIM];
        if (t == 150) {
            CHECK_STATUS(kestrel_scaler_checkpoint(scaler, bytes, sizeof bytes, &len), KESTREL_STATUS_OK);
            memset(b_work, 0xA5, sizeof b_work);
            CHECK_STATUS(kestrel_scaler_resume(DIM, bytes, len, b_work, sizeof b_work, &scaler), KESTREL_STATUS_OK);
            CHECK(observed(scaler) == 150);
        }
        CHECK_STATUS(kestrel_scaler_observe(reference, x, DIM), KESTREL_STATUS_OK);
        CHECK_STATUS(kestrel_scaler_observe(scaler, x, DIM), KESTREL_STATUS_OK);
        CHECK_STATUS(kestrel_scaler_transform(reference, x, DIM, ya), KESTREL_STATUS_OK);
        CHECK_STATUS(kestrel_scaler_transform(scaler, x, DIM, yb), KESTREL_STATUS_OK);
        for (int j = 0; j < DIM; j++) CHECK(bits(ya[j]) == bits(yb[j]));
    }
    /* Another dimension is another configuration. */
    kestrel_scaler *other = NULL;
    CHECK_STATUS(kestrel_scaler_resume(2, bytes, len, a_work, sizeof a_work, &other), KESTREL_STATUS_CONFIG_MISMATCH);
    CHECK(other == NULL);
    return 1;
}

/* CRC-32 (ISO-HDLC, as zlib) of `len` bytes: to forge a checkpoint whose frame is intact
   but whose state is not, which the core's checks must refuse. */
static uint32_t crc32(const unsigned char *bytes, size_t len) {
    uint32_t crc = 0xFFFFFFFFu;
    for (size_t i = 0; i < len; i++) {
        crc ^= bytes[i];
        for (int k = 0; k < 8; k++) crc = (crc >> 1) ^ (0xEDB88320u & (0u - (crc & 1u)));
    }
    return ~crc;
}

static void reseal(unsigned char *bytes, size_t len) {
    uint32_t crc = crc32(bytes, len - 4);
    for (int k = 0; k < 4; k++) bytes[len - 4 + k] = (unsigned char)(crc >> (8 * k));
}

static int bad_checkpoints_are_statuses(void) {
    enum { WINDOW = 16, DIM = 2 };
    kestrel_svm_config config = kestrel_svm_default_config(WINDOW, DIM);
    kestrel_svm *svm, *resumed = NULL;
    CHECK_STATUS(kestrel_svm_create(&config, work_a, WORK_BYTES, &svm), KESTREL_STATUS_OK);
    for (int t = 0; t < 40; t++) {
        float x[DIM] = {2.0f * uniform() - 1.0f, 2.0f * uniform() - 1.0f};
        CHECK_STATUS(kestrel_svm_learn(svm, x, DIM, x[0] > x[1] ? 1 : -1), KESTREL_STATUS_OK);
    }
    /* A buffer one byte short: the length needed, and not a byte written. */
    size_t len = 0, needed = 0;
    CHECK_STATUS(kestrel_svm_checkpoint(svm, NULL, 0, &needed), KESTREL_STATUS_BUFFER_TOO_SMALL);
    memset(checkpoint_a, 0x5A, needed);
    CHECK_STATUS(kestrel_svm_checkpoint(svm, checkpoint_a, needed - 1, &len), KESTREL_STATUS_BUFFER_TOO_SMALL);
    CHECK(len == needed);
    for (size_t i = 0; i < needed; i++) CHECK(checkpoint_a[i] == 0x5A);
    CHECK_STATUS(kestrel_svm_checkpoint(svm, checkpoint_a, needed, NULL), KESTREL_STATUS_NULL_POINTER);
    CHECK_STATUS(kestrel_svm_checkpoint(NULL, checkpoint_a, needed, &len), KESTREL_STATUS_NULL_POINTER);
    CHECK_STATUS(kestrel_svm_checkpoint((const kestrel_svm *)work_b, checkpoint_a, needed, &len),
                 KESTREL_STATUS_WRONG_OBJECT);
    CHECK_STATUS(kestrel_svm_checkpoint(svm, checkpoint_a, needed, &len), KESTREL_STATUS_OK);
    CHECK(len == needed);

    /* Every cut is truncated, every flipped byte refused (mostly by the checksum). */
    for (size_t cut = 0; cut < len; cut++)
        CHECK_STATUS(kestrel_svm_resume(&config, checkpoint_a, cut, work_b, WORK_BYTES, &resumed),
                     KESTREL_STATUS_MODEL_TRUNCATED);
    memcpy(checkpoint_b, checkpoint_a, len);
    for (size_t i = 0; i < len; i++) {
        checkpoint_b[i] ^= 0x10;
        CHECK(kestrel_svm_resume(&config, checkpoint_b, len, work_b, WORK_BYTES, &resumed) != KESTREL_STATUS_OK);
        checkpoint_b[i] ^= 0x10;
    }
    CHECK(resumed == NULL);
    /* Another configuration; another kind of object; a model file; bad pointers; short work. */
    kestrel_svm_config other = config;
    other.c = 0.5f;
    CHECK_STATUS(kestrel_svm_resume(&other, checkpoint_a, len, work_b, WORK_BYTES, &resumed),
                 KESTREL_STATUS_CONFIG_MISMATCH);
    kestrel_slkl_config slkl = kestrel_slkl_default_config(WINDOW, DIM, 4);
    kestrel_slkl *slkl_resumed = NULL;
    CHECK_STATUS(kestrel_slkl_resume(&slkl, checkpoint_a, len, work_b, WORK_BYTES, &slkl_resumed),
                 KESTREL_STATUS_MODEL_FOREIGN);
    kestrel_novelty_config novelty = kestrel_novelty_default_config(WINDOW, DIM, 4);
    kestrel_novelty *novelty_resumed = NULL;
    CHECK_STATUS(kestrel_novelty_resume(&novelty, checkpoint_a, len, work_b, WORK_BYTES, &novelty_resumed),
                 KESTREL_STATUS_MODEL_FOREIGN);
    kestrel_scaler *scaler_resumed = NULL;
    CHECK_STATUS(kestrel_scaler_resume(DIM, checkpoint_a, len, work_b, WORK_BYTES, &scaler_resumed),
                 KESTREL_STATUS_MODEL_FOREIGN);
    unsigned char model[KESTREL_SVM_MODEL_BYTES(DIM)];
    size_t model_len = 0;
    CHECK_STATUS(kestrel_svm_save(svm, NULL, model, sizeof model, &model_len), KESTREL_STATUS_OK);
    CHECK_STATUS(kestrel_svm_resume(&config, model, model_len, work_b, WORK_BYTES, &resumed),
                 KESTREL_STATUS_MODEL_FOREIGN);
    CHECK_STATUS(kestrel_svm_resume(NULL, checkpoint_a, len, work_b, WORK_BYTES, &resumed), KESTREL_STATUS_NULL_POINTER);
    CHECK_STATUS(kestrel_svm_resume(&config, NULL, len, work_b, WORK_BYTES, &resumed), KESTREL_STATUS_NULL_POINTER);
    CHECK_STATUS(kestrel_svm_resume(&config, checkpoint_a, len, work_b, WORK_BYTES, NULL), KESTREL_STATUS_NULL_POINTER);
    CHECK_STATUS(kestrel_svm_resume(&config, checkpoint_a, len, work_b + 4, WORK_BYTES - 8, &resumed),
                 KESTREL_STATUS_MISALIGNED);
    CHECK_STATUS(kestrel_svm_resume(&config, checkpoint_a, len, work_b, KESTREL_SVM_WORK_BYTES(WINDOW, DIM, 2000) - 1,
                                    &resumed),
                 KESTREL_STATUS_BUFFER_TOO_SMALL);
    other = config;
    other.window = 0;
    CHECK_STATUS(kestrel_svm_resume(&other, checkpoint_a, len, work_b, WORK_BYTES, &resumed), KESTREL_STATUS_INVALID_PARAM);
    CHECK(slkl_resumed == NULL && novelty_resumed == NULL && scaler_resumed == NULL && resumed == NULL);

    /* An intact frame around a state the core refuses: w's first weight NaN, the checksum
       recomputed. The floats end the payload: w (dim + 1), the rows (window·dim), α, Q̄ᵢᵢ
       and the labels (window each), the memory (dim + 1). */
    memcpy(checkpoint_b, checkpoint_a, len);
    size_t floats = (size_t)WINDOW * (DIM + 3) + DIM + 1 + DIM + 1;
    size_t at = len - 4 - 4 * floats; /* the first float: w[0] */
    const float nan = NAN;
    memcpy(checkpoint_b + at, &nan, 4);
    reseal(checkpoint_b, len);
    CHECK_STATUS(kestrel_svm_resume(&config, checkpoint_b, len, work_b, WORK_BYTES, &resumed),
                 KESTREL_STATUS_MODEL_CORRUPTED);
    /* A label other than ±1 in the window (the label field of the first slot). */
    memcpy(checkpoint_b, checkpoint_a, len);
    const float three = 3.0f;
    size_t labels = at + 4 * ((DIM + 1) + (size_t)WINDOW * DIM + 2 * (size_t)WINDOW);
    memcpy(checkpoint_b + labels, &three, 4);
    reseal(checkpoint_b, len);
    CHECK_STATUS(kestrel_svm_resume(&config, checkpoint_b, len, work_b, WORK_BYTES, &resumed),
                 KESTREL_STATUS_MODEL_CORRUPTED);
    /* The untouched checkpoint still resumes. */
    CHECK_STATUS(kestrel_svm_resume(&config, checkpoint_a, len, work_b, WORK_BYTES, &resumed), KESTREL_STATUS_OK);
    kestrel_learner_state state;
    CHECK_STATUS(kestrel_svm_state(resumed, &state), KESTREL_STATUS_OK);
    CHECK(state.samples_seen == 40 && state.window_len == WINDOW);
    return 1;
}

typedef struct {
    const char *name;
    int (*run)(void);
} test;

int main(int argc, char **argv) {
    if (argc != 4) {
        fprintf(stderr, "usage: %s MODELS_DIR F64_MODEL OUT_DIR\n", argv[0]);
        return 2;
    }
    models_dir = argv[1];
    f64_model = argv[2];
    out_dir = argv[3];
    static const test tests[] = {
        {"status_texts_are_distinct", status_texts_are_distinct},
        {"size_macros_equal_the_functions", size_macros_equal_the_functions},
        {"host_models_predict_the_clis_bits", host_models_predict_the_clis_bits},
        {"novelty_model_scores_the_clis_bits", novelty_model_scores_the_clis_bits},
        {"decision_values_make_the_prediction", decision_values_make_the_prediction},
        {"class_probabilities_sum_to_one", class_probabilities_sum_to_one},
        {"bad_model_bytes_are_statuses", bad_model_bytes_are_statuses},
        {"bad_prediction_arguments_are_statuses", bad_prediction_arguments_are_statuses},
        {"concurrent_predictions_are_right_or_busy", concurrent_predictions_are_right_or_busy},
        {"slkl_learns_saves_and_reopens", slkl_learns_saves_and_reopens},
        {"slkl_refuses_bad_arguments_unchanged", slkl_refuses_bad_arguments_unchanged},
        {"svm_with_scaler_learns_saves_and_reopens", svm_with_scaler_learns_saves_and_reopens},
        {"svm_and_scaler_refuse_bad_arguments_unchanged", svm_and_scaler_refuse_bad_arguments_unchanged},
        {"multiclass_learns_saves_and_resumes", multiclass_learns_saves_and_resumes},
        {"multiclass_refuses_bad_arguments_unchanged", multiclass_refuses_bad_arguments_unchanged},
        {"novelty_learns_flags_saves_and_reopens", novelty_learns_flags_saves_and_reopens},
        {"novelty_refuses_bad_arguments_unchanged", novelty_refuses_bad_arguments_unchanged},
        {"checkpoint_macros_equal_the_functions", checkpoint_macros_equal_the_functions},
        {"svm_resumes_bit_for_bit_after_a_reset", svm_resumes_bit_for_bit_after_a_reset},
        {"slkl_resumes_bit_for_bit_after_a_reset", slkl_resumes_bit_for_bit_after_a_reset},
        {"novelty_resumes_bit_for_bit_after_a_reset", novelty_resumes_bit_for_bit_after_a_reset},
        {"scaler_resumes_bit_for_bit_after_a_reset", scaler_resumes_bit_for_bit_after_a_reset},
        {"bad_checkpoints_are_statuses", bad_checkpoints_are_statuses},
    };
    int passed = 0, failed = 0;
    for (size_t i = 0; i < sizeof tests / sizeof tests[0]; i++) {
        int ok = tests[i].run();
        printf("test %s ... %s\n", tests[i].name, ok ? "ok" : "FAILED");
        fflush(stdout);
        ok ? passed++ : failed++;
    }
    printf("%d passed, %d failed\n", passed, failed);
    return failed == 0 ? 0 : 1;
}
