/*
 * Peak stack by stack painting, as the Rust demo measures it: at reset the free RAM
 * between the heap's reserve and the stack pointer is filled with a pattern; the lowest
 * word no longer holding it is the deepest the stack has reached.
 */
#ifndef DEMO_STACK_H
#define DEMO_STACK_H

#include <stddef.h>

/* Fills the unused stack with the pattern; called once by the reset handler. */
void stack_paint(void);

/* The deepest the stack has reached since the painting, in bytes below its top. */
size_t stack_peak_bytes(void);

/* The bytes the stack may take: from the top of RAM down to the heap's reserve. */
size_t stack_capacity_bytes(void);

#endif
