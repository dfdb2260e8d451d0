# shellcheck shell=bash
# Sourced by run-qemu-tests.sh and measure.sh: the firmware's targets, the QEMU machine that
# boots each (as the runners of .cargo/config.toml do), and the `-icount` setting under which
# each target's counter counts executed instructions (src/icount.rs): SysTick counts QEMU's
# virtual clock at 40 ns per tick, 2^7 ns per instruction with shift=7; `minstret` reads the
# virtual clock in ns, 1 ns per instruction with shift=0.

targets=(thumbv7em-none-eabihf thumbv7m-none-eabi riscv32imac-unknown-none-elf)
declare -A machine=(
    [thumbv7em-none-eabihf]="qemu-system-arm -machine mps2-an386 -cpu cortex-m4"
    [thumbv7m-none-eabi]="qemu-system-arm -machine mps2-an385 -cpu cortex-m3"
    [riscv32imac-unknown-none-elf]="qemu-system-riscv32 -machine virt -bios none"
)
declare -A icount=(
    [thumbv7em-none-eabihf]="shift=7,align=off,sleep=off"
    [thumbv7m-none-eabi]="shift=7,align=off,sleep=off"
    [riscv32imac-unknown-none-elf]="shift=0,align=off,sleep=off"
)

qemu() { # target elf [qemu options...]: boots elf on target's machine with semihosting
    local target="$1" elf="$2"
    shift 2
    # shellcheck disable=SC2086 # the machine's command is words
    timeout 120 ${machine[$target]} -display none -monitor none -serial none \
        -semihosting-config enable=on,target=native "$@" -kernel "$elf"
}
