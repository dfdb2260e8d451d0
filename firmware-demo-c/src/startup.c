/*
 * Reset and fault handling for the C demo on a Cortex-M4F (QEMU mps2-an386) or a
 * Cortex-M0 (QEMU microbit): the vector table, a reset handler that copies .data, zeroes
 * .bss, enables the FPU where there is one (the M4F's library is built for
 * thumbv7em-none-eabihf; the M0 has none and its library, for thumbv6m-none-eabi, uses
 * none), paints the stack (stack.c) and starts newlib's semihosting I/O, and a HardFault
 * handler that reports and exits with failure instead of hanging (a panic in the library,
 * were one reachable, ends here: its handler executes `udf`).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "stack.h"

extern uint32_t _sidata, _sdata, _edata, _sbss, _ebss, _estack;
extern void initialise_monitor_handles(void);
int main(void);

void Reset_Handler(void);
void HardFault_Handler(void);
void Default_Handler(void);

void Reset_Handler(void) {
    uint32_t *from = &_sidata, *to = &_sdata;
    while (to < &_edata) *to++ = *from++;
    for (to = &_sbss; to < &_ebss; to++) *to = 0;
    stack_paint();
#if defined(__ARM_FP)
    /* CPACR: full access to CP10 and CP11, the FPU. */
    *(volatile uint32_t *)0xE000ED88 |= 0xFu << 20;
    __asm volatile("dsb\n\tisb" ::: "memory");
#endif
    initialise_monitor_handles();
    exit(main());
}

void HardFault_Handler(void) {
    fputs("HardFault\n", stderr);
    exit(1);
}

/* newlib's exit() runs the C++ destructors' hooks, which crti.o provides in a full start-up;
   this start-up has none to run. */
void _init(void);
void _fini(void);
void _init(void) {}
void _fini(void) {}

void Default_Handler(void) {
    fputs("unexpected exception\n", stderr);
    exit(1);
}

/* The initial stack pointer, then the Cortex-M exceptions (no device interrupts used). */
__attribute__((section(".isr_vector"), used)) static void (*const vectors[16])(void) = {
    (void (*)(void))&_estack, Reset_Handler,   Default_Handler, HardFault_Handler,
    Default_Handler,          Default_Handler, Default_Handler, 0,
    0,                        0,               0,               Default_Handler,
    Default_Handler,          0,               Default_Handler, Default_Handler,
};
