/*
 * Executed instructions of a checkpoint and a resume of each learning object of the C ABI
 * at the demo's sizes (SLKL: window 128 × 3, 32 centres; SVM: window 128 × 3, memory 2000;
 * the multi-class learner: four classes of the SVM's; novelty: window 256 × 4, 32 centres;
 * scaler: 3 features), and of one sample learned by each SVM, on the Cortex-M4F of QEMU
 * mps2-an386 or the Cortex-M0 of its microbit, counted by SysTick under `-icount shift=7`
 * (`make [CORE=m0] measure-checkpoints`; 2⁷ ns of virtual time per instruction, and a
 * SysTick tick of SYSTICK_PS picoseconds: 40 ns at the MPS2 board's 25 MHz, 62.5 ns at
 * the micro:bit's 16 MHz; QEMU models no cycle counter). Without -icount the figures
 * follow host time and mean nothing. Each object
 * first learns 500 rows (3,000 for the detector) of a generated stream, then its
 * checkpoint is written and it is resumed into its own work memory, as after a reset.
 * Prints `measure OBJECT checkpoint: N instructions, B bytes (bound C, work W)` (the
 * compile-time bound and the object's work memory, both on this 32-bit target),
 * `measure OBJECT resume: N instructions` and, for the SVMs, `measure OBJECT learn: N
 * instructions` (the mean of the 100 samples after the resume, each timed alone: its
 * decision values, its steps and the sigmoids').
 */
#include <stdalign.h>
#include <stdint.h>
#include <stdio.h>

#include "kestrel.h"

#define SYST_CSR (*(volatile uint32_t *)0xE000E010u)
#define SYST_RVR (*(volatile uint32_t *)0xE000E014u)
#define SYST_CVR (*(volatile uint32_t *)0xE000E018u)
#define RELOAD 0x00FFFFFFu
#ifndef SYSTICK_PS
#define SYSTICK_PS 40000u
#endif

/* The largest object (SLKL) and its checkpoint; the others reuse them in turn. */
static alignas(KESTREL_ALIGN) uint8_t work[KESTREL_SLKL_WORK_BYTES(128, 3, 32, 32)];
static uint8_t saved[KESTREL_SLKL_CHECKPOINT_BYTES(128, 3, 32, 32)];
_Static_assert(sizeof work >= KESTREL_MULTICLASS_WORK_BYTES(128, 3, 2000, 4), "the multi-class learner's work fits");
_Static_assert(sizeof saved >= KESTREL_MULTICLASS_CHECKPOINT_BYTES(128, 3, 2000, 4), "and its checkpoint");

static uint32_t state = 2463534242u;
static float uniform(void) {
    state ^= state << 13;
    state ^= state >> 17;
    state ^= state << 5;
    return (float)(state >> 8) / 16777216.0f * 2.0f - 1.0f;
}

static uint32_t overhead;

/* SysTick from its reload value down, the core's clock, no interrupt. */
static void start(void) {
    SYST_RVR = RELOAD;
    SYST_CVR = 0;
    SYST_CSR = 5; /* enable, core clock */
}

/* Instructions since `from` (a SysTick value), less the measurement's own. */
static uint32_t since(uint32_t from) {
    uint32_t ticks = (from - SYST_CVR) & RELOAD;
    uint32_t instructions = (uint32_t)(((uint64_t)ticks * SYSTICK_PS + 64000u) / 128000u);
    return instructions > overhead ? instructions - overhead : 0;
}

/* The counts of OBJECT's checkpoint of `len` bytes (at most `bound`, in work memory of
   `work_bytes`) and of its resume, or the statuses that stopped them. */
static void report(const char *object, size_t work_bytes, size_t bound, size_t len, uint32_t checkpoint,
                   uint32_t resume, kestrel_status a, kestrel_status b) {
    if (a != KESTREL_STATUS_OK || b != KESTREL_STATUS_OK) {
        printf("measure %s: failed (%s, %s)\n", object, kestrel_status_str(a), kestrel_status_str(b));
        return;
    }
    printf("measure %s checkpoint: %lu instructions, %u bytes (bound %u, work %u)\n", object,
           (unsigned long)checkpoint, (unsigned)len, (unsigned)bound, (unsigned)work_bytes);
    printf("measure %s resume: %lu instructions\n", object, (unsigned long)resume);
}

/* Runs CALL between two SysTick readings, the count left in VAR (SysTick reset first, so
   no wrap below 2^24 ticks). */
#define TIMED(VAR, CALL)             \
    do {                             \
        SYST_CVR = 0;                \
        uint32_t from_ = SYST_CVR;   \
        CALL;                        \
        VAR = since(from_);          \
    } while (0)

int main(void) {
    start();
    TIMED(overhead, (void)0);
    size_t len;
    uint32_t written, resumed;
    kestrel_status a, b;

    kestrel_slkl_config slkl_config = kestrel_slkl_default_config(128, 3, 32);
    float centres[32 * 3];
    for (int i = 0; i < 32 * 3; i++) centres[i] = uniform();
    kestrel_slkl *slkl;
    kestrel_slkl_create(&slkl_config, centres, 32 * 3, work, sizeof work, &slkl);
    for (int t = 0; t < 500; t++) {
        float x[3] = {uniform(), uniform(), uniform()};
        kestrel_slkl_learn(slkl, x, 3, x[0] * x[1] - x[2]);
    }
    TIMED(written, a = kestrel_slkl_checkpoint(slkl, saved, sizeof saved, &len));
    TIMED(resumed, b = kestrel_slkl_resume(&slkl_config, saved, len, work, sizeof work, &slkl));
    report("slkl", kestrel_slkl_work_bytes(&slkl_config), kestrel_slkl_checkpoint_bytes(&slkl_config), len, written,
           resumed, a, b);

    kestrel_svm_config svm_config = kestrel_svm_default_config(128, 3);
    kestrel_svm *svm;
    kestrel_svm_create(&svm_config, work, sizeof work, &svm);
    for (int t = 0; t < 500; t++) {
        float x[3] = {uniform(), uniform(), uniform()};
        kestrel_svm_learn(svm, x, 3, x[0] + 0.5f * x[1] > x[2] ? 1 : -1);
    }
    TIMED(written, a = kestrel_svm_checkpoint(svm, saved, sizeof saved, &len));
    TIMED(resumed, b = kestrel_svm_resume(&svm_config, saved, len, work, sizeof work, &svm));
    report("svm", kestrel_svm_work_bytes(&svm_config), kestrel_svm_checkpoint_bytes(&svm_config), len, written,
           resumed, a, b);
    uint32_t one;
    uint64_t learned = 0;
    for (int t = 0; t < 100; t++) {
        float x[3] = {uniform(), uniform(), uniform()};
        TIMED(one, kestrel_svm_learn(svm, x, 3, x[0] + 0.5f * x[1] > x[2] ? 1 : -1));
        learned += one;
    }
    printf("measure svm learn: %lu instructions\n", (unsigned long)(learned / 100));

    kestrel_multiclass_config multi_config = kestrel_multiclass_default_config(128, 3, 4);
    kestrel_multiclass *multi;
    kestrel_multiclass_create(&multi_config, work, sizeof work, &multi);
    for (int t = 0; t < 500; t++) {
        float x[3] = {uniform(), uniform(), uniform()};
        kestrel_multiclass_learn(multi, x, 3, (x[0] > x[1]) + 2 * (x[2] > 0.0f));
    }
    TIMED(written, a = kestrel_multiclass_checkpoint(multi, saved, sizeof saved, &len));
    TIMED(resumed, b = kestrel_multiclass_resume(&multi_config, saved, len, work, sizeof work, &multi));
    report("multiclass", kestrel_multiclass_work_bytes(&multi_config), kestrel_multiclass_checkpoint_bytes(&multi_config),
           len, written, resumed, a, b);
    learned = 0;
    for (int t = 0; t < 100; t++) {
        float x[3] = {uniform(), uniform(), uniform()};
        TIMED(one, kestrel_multiclass_learn(multi, x, 3, (x[0] > x[1]) + 2 * (x[2] > 0.0f)));
        learned += one;
    }
    printf("measure multiclass learn: %lu instructions\n", (unsigned long)(learned / 100));

    kestrel_novelty_config novelty_config = kestrel_novelty_default_config(256, 4, 32);
    kestrel_novelty *novelty;
    kestrel_novelty_create(&novelty_config, work, sizeof work, &novelty);
    for (int t = 0; t < 3000; t++) {
        float x[4] = {uniform(), uniform(), uniform(), uniform()};
        kestrel_novelty_verdict verdict;
        kestrel_novelty_learn(novelty, x, 4, &verdict);
    }
    TIMED(written, a = kestrel_novelty_checkpoint(novelty, saved, sizeof saved, &len));
    TIMED(resumed, b = kestrel_novelty_resume(&novelty_config, saved, len, work, sizeof work, &novelty));
    report("novelty", kestrel_novelty_work_bytes(&novelty_config), kestrel_novelty_checkpoint_bytes(&novelty_config),
           len, written, resumed, a, b);

    kestrel_scaler *scaler;
    kestrel_scaler_create(3, work, sizeof work, &scaler);
    for (int t = 0; t < 500; t++) {
        float x[3] = {uniform(), uniform(), uniform()};
        kestrel_scaler_observe(scaler, x, 3);
    }
    TIMED(written, a = kestrel_scaler_checkpoint(scaler, saved, sizeof saved, &len));
    TIMED(resumed, b = kestrel_scaler_resume(3, saved, len, work, sizeof work, &scaler));
    report("scaler", kestrel_scaler_work_bytes(3), kestrel_scaler_checkpoint_bytes(3), len, written, resumed, a, b);
    return 0;
}
