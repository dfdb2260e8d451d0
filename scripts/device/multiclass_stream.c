/*
 * The C library's multi-class learner (kestrel_multiclass) on a stream, as a device runs it:
 * every row predicted, scored, then learned, its features standardised online by a
 * kestrel_scaler (observed before it standardises the row to learn, as kestrel stream does).
 *
 * Usage: multiclass_stream CSV CLASSES WINDOW
 *   CSV      a header, then rows of numbers, the last a class index 0 … CLASSES−1
 * Prints one JSON line: rows, accuracy, log loss (the mean −ln p of each row's own class,
 * 10⁻¹⁵ at least; a row predicted before the first sample scores 10⁻¹⁵), work bytes of the
 * learner and the scaler, and rows per second.
 *
 * Built by scripts/bench_device_multiclass.py against the host's libkestrel_ffi.a.
 */
#define _POSIX_C_SOURCE 199309L /* clock_gettime */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kestrel.h"

#define MAX_DIM 256

/* The next row's features and class; 0 at the end of the file. */
static int next_row(FILE *f, float *x, size_t dim, int *class) {
    for (size_t j = 0; j < dim; j++)
        if (fscanf(f, "%f,", &x[j]) != 1) return 0;
    return fscanf(f, "%d\n", class) == 1;
}

/* Work memory of `bytes`, aligned as the library requires. */
static void *work(size_t bytes) {
    return aligned_alloc(KESTREL_ALIGN, (bytes + KESTREL_ALIGN - 1) / KESTREL_ALIGN * KESTREL_ALIGN);
}

int main(int argc, char **argv) {
    if (argc != 4) {
        fprintf(stderr, "usage: %s CSV CLASSES WINDOW\n", argv[0]);
        return 2;
    }
    FILE *f = fopen(argv[1], "r");
    char header[8192];
    if (!f || !fgets(header, sizeof header, f)) return 2;
    size_t dim = 0;
    for (char *c = header; *c; c++) dim += *c == ',';
    uint32_t classes = (uint32_t)atoi(argv[2]), window = (uint32_t)atoi(argv[3]);
    if (dim == 0 || dim > MAX_DIM || classes > KESTREL_MULTICLASS_MAX_CLASSES) return 2;
    kestrel_multiclass_config config = kestrel_multiclass_default_config(window, (uint32_t)dim, classes);
    size_t learner_bytes = kestrel_multiclass_work_bytes(&config), scaler_bytes = kestrel_scaler_work_bytes(dim);
    kestrel_multiclass *learner;
    kestrel_scaler *scaler;
    if (kestrel_multiclass_create(&config, work(learner_bytes), learner_bytes, &learner) != KESTREL_STATUS_OK ||
        kestrel_scaler_create(dim, work(scaler_bytes), scaler_bytes, &scaler) != KESTREL_STATUS_OK)
        return 1;
    float x[MAX_DIM], z[MAX_DIM], p[KESTREL_MULTICLASS_MAX_CLASSES];
    int class;
    long rows = 0, right = 0;
    double loss = 0.0;
    struct timespec start, end;
    clock_gettime(CLOCK_MONOTONIC, &start);
    while (next_row(f, x, dim, &class)) {
        uint64_t seen = 0;
        int32_t predicted = -1;
        double own = 0.0;
        kestrel_scaler_count(scaler, &seen);
        if (seen > 0 && kestrel_scaler_transform(scaler, x, dim, z) == KESTREL_STATUS_OK &&
            kestrel_multiclass_predict(learner, z, dim, &predicted) == KESTREL_STATUS_OK &&
            kestrel_multiclass_probabilities(learner, z, dim, p, classes) == KESTREL_STATUS_OK)
            own = p[class];
        loss -= log(fmax(own, 1e-15));
        right += predicted == class;
        rows++;
        if (kestrel_scaler_observe(scaler, x, dim) != KESTREL_STATUS_OK ||
            kestrel_scaler_transform(scaler, x, dim, z) != KESTREL_STATUS_OK ||
            kestrel_multiclass_learn(learner, z, dim, class) != KESTREL_STATUS_OK)
            return 1;
    }
    clock_gettime(CLOCK_MONOTONIC, &end);
    double seconds = (double)(end.tv_sec - start.tv_sec) + 1e-9 * (double)(end.tv_nsec - start.tv_nsec);
    printf("{\"rows\": %ld, \"accuracy\": %.6f, \"log_loss\": %.6f, \"work_bytes\": %zu, \"scaler_work_bytes\": %zu, "
           "\"rows_per_sec\": %.0f}\n",
           rows, (double)right / (double)rows, loss / (double)rows, learner_bytes, scaler_bytes, (double)rows / seconds);
    return 0;
}
