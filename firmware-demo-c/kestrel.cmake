# Kestrel in a CMake firmware build (STM32CubeMX's CMake projects, Zephyr applications):
# copy this file next to your CMakeLists.txt, set KESTREL_DIR to the Kestrel checkout, and
#
#     include(kestrel.cmake)
#     target_link_libraries(${CMAKE_PROJECT_NAME} kestrel)
#
# It imports libkestrel_ffi.a, built beforehand for your core by
#     cargo build -p kestrel-ffi --release --target thumbv7em-none-eabihf
# (Cortex-M4F/M7 with hard float; thumbv7m-none-eabi for a Cortex-M3, thumbv6m-none-eabi
# for an M0/M0+, riscv32imac-unknown-none-elf for an ESP32-C3/C6 or RP2350's RISC-V cores),
# with its header directory. The library is C-callable, needs no allocator, no RTOS and no
# libc beyond memcpy/memset, and brings its own panic handler (see kestrel.h).
set(KESTREL_DIR "${CMAKE_CURRENT_LIST_DIR}/.." CACHE PATH "The Kestrel checkout")
set(KESTREL_TARGET "thumbv7em-none-eabihf" CACHE STRING "The Rust target libkestrel_ffi.a was built for")

add_library(kestrel STATIC IMPORTED)
set_target_properties(kestrel PROPERTIES
    IMPORTED_LOCATION "${KESTREL_DIR}/target/${KESTREL_TARGET}/release/libkestrel_ffi.a"
    INTERFACE_INCLUDE_DIRECTORIES "${KESTREL_DIR}/ffi/include")
