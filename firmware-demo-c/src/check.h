/* The on-device tests' check: prints the failed condition and its place, and fails the
   test (returns 0 from it). */
#ifndef CHECK_H
#define CHECK_H

#include <stdio.h>

#define CHECK(cond)                                                        \
    do {                                                                   \
        if (!(cond)) {                                                     \
            printf("    %s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
            return 0;                                                      \
        }                                                                  \
    } while (0)

#endif
