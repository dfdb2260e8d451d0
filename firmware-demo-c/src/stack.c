#include "stack.h"

#include <stdint.h>

#define PAINT 0x5EED5EEDu
/* Kept for newlib's heap above `end` (stdio's buffers): not painted, not stack. */
#define HEAP_RESERVE 4096u

extern uint32_t end, _estack;

static uint32_t *floor_of_stack(void) { return (uint32_t *)((uintptr_t)&end + HEAP_RESERVE); }

void stack_paint(void) {
    uint32_t *sp;
    __asm volatile("mov %0, sp" : "=r"(sp));
    /* Leave the caller's frame (the reset handler's) and this one alone. */
    for (uint32_t *p = floor_of_stack(); p < sp - 64; p++) *p = PAINT;
}

size_t stack_peak_bytes(void) {
    uint32_t *p = floor_of_stack();
    while (p < &_estack && *p == PAINT) p++;
    return (size_t)((uintptr_t)&_estack - (uintptr_t)p);
}

size_t stack_capacity_bytes(void) { return (size_t)((uintptr_t)&_estack - (uintptr_t)floor_of_stack()); }
