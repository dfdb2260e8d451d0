# shellcheck shell=bash
# Sourced by run-qemu-tests.sh and measure.sh: the firmware's targets, the QEMU machine that
# boots each (as the runners of .cargo/config.toml do), and the `-icount` setting under which
# each target's counter counts executed instructions (src/icount.rs): SysTick counts QEMU's
# virtual clock at 40 ns per tick (62.5 ns on the micro:bit), 2^7 ns per instruction with
# shift=7; `minstret` reads the virtual clock in ns, 1 ns per instruction with shift=0.
#
# The Cortex-M0 (thumbv6m, the class of the M0+ parts: RP2040, STM32G0, SAMD21) runs on
# QEMU's only Cortex-M0 machine, the BBC micro:bit, whose nRF51 has 16 KiB of RAM and 256
# KiB of flash; its SoC's sram-size and flash-size are raised to the budget the other
# targets have (64 KiB of RAM; 512 KiB of flash, which only the on-device tests use).

targets=(thumbv7em-none-eabihf thumbv7m-none-eabi riscv32imac-unknown-none-elf thumbv6m-none-eabi)
declare -A machine=(
    [thumbv7em-none-eabihf]="qemu-system-arm -machine mps2-an386 -cpu cortex-m4"
    [thumbv7m-none-eabi]="qemu-system-arm -machine mps2-an385 -cpu cortex-m3"
    [riscv32imac-unknown-none-elf]="qemu-system-riscv32 -machine virt -bios none"
    [thumbv6m-none-eabi]="qemu-system-arm -machine microbit -global nrf51-soc.sram-size=65536 -global nrf51-soc.flash-size=524288"
)
declare -A icount=(
    [thumbv7em-none-eabihf]="shift=7,align=off,sleep=off"
    [thumbv7m-none-eabi]="shift=7,align=off,sleep=off"
    [riscv32imac-unknown-none-elf]="shift=0,align=off,sleep=off"
    [thumbv6m-none-eabi]="shift=7,align=off,sleep=off"
)
# How far 100 `nop`s may measure from 100: a tick is 0.3 instructions on the MPS2 boards
# (exact after rounding), 0.49 on the micro:bit, where the two readings' ticks can round a
# count to 99 or 101.
declare -A calibration_slack=(
    [thumbv7em-none-eabihf]=0
    [thumbv7m-none-eabi]=0
    [riscv32imac-unknown-none-elf]=0
    [thumbv6m-none-eabi]=1
)

qemu() { # target elf [qemu options...]: boots elf on target's machine with semihosting
    local target="$1" elf="$2"
    shift 2
    # shellcheck disable=SC2086 # the machine's command is words
    timeout 120 ${machine[$target]} -display none -monitor none -serial none \
        -semihosting-config enable=on,target=native "$@" -kernel "$elf"
}
