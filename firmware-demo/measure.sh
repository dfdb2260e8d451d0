#!/usr/bin/env bash
# Measures the release demo on both targets and prints Markdown tables (the text of
# the firmware tables of BENCHMARKS.md):
#   - flash (.vector_table + .text + .rodata + .data) and static RAM (.data + .bss + .uninit)
#     of the demo ELF, from `llvm-size -A`;
#   - peak stack of a full demo run, by stack painting (cortex-m-rt `paint-stack`);
#   - executed instructions per operation, from the `measure` binary under QEMU
#     `-icount shift=7,align=off,sleep=off` (SysTick ticks x 40 ns / 128 ns).
# Cortex-M4F: thumbv7em-none-eabihf on mps2-an386; Cortex-M3 (no FPU): thumbv7m-none-eabi
# on mps2-an385. Needs both Rust targets, qemu-system-arm and rustup's llvm-tools.
# Exits non-zero when a build or a run fails. Runs from any directory.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")"

targets=(thumbv7em-none-eabihf thumbv7m-none-eabi)
declare -A machine=(
    [thumbv7em-none-eabihf]="-machine mps2-an386 -cpu cortex-m4"
    [thumbv7m-none-eabi]="-machine mps2-an385 -cpu cortex-m3"
)
host="$(rustc -vV | sed -n 's/^host: //p')"
llvm_size="$(rustc --print sysroot)/lib/rustlib/$host/bin/llvm-size"
[[ -x "$llvm_size" ]] || rustup component add llvm-tools >&2
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT

qemu() { # target elf [qemu options...]
    local target="$1" elf="$2"
    shift 2
    # shellcheck disable=SC2086 # the machine options are words
    timeout 120 qemu-system-arm ${machine[$target]} -display none -monitor none -serial none \
        -semihosting-config enable=on,target=native "$@" -kernel "$elf"
}

for target in "${targets[@]}"; do
    cargo build --quiet --release --target "$target" --bins
    dir="target/$target/release"
    "$llvm_size" -A "$dir/kestrel-firmware-demo" >"$out/size-$target"
    qemu "$target" "$dir/kestrel-firmware-demo" >"$out/demo-$target"
    qemu "$target" "$dir/measure" -icount shift=7,align=off,sleep=off >"$out/measure-$target"
done

section() { # file section -> bytes (0 when absent)
    awk -v s="$2" '$1 == s { print $2; found = 1 } END { if (!found) print 0 }' "$1"
}
kib() { awk -v b="$1" 'BEGIN { printf "%.1f", b / 1024 }'; }

echo "| demo, release | Cortex-M4F (thumbv7em-none-eabihf) | Cortex-M3, no FPU (thumbv7m-none-eabi) |"
echo "|---|---:|---:|"
declare -A flash ram
for target in "${targets[@]}"; do
    f="$out/size-$target"
    flash[$target]=$(($(section "$f" .vector_table) + $(section "$f" .text) + $(section "$f" .rodata) + $(section "$f" .data)))
    ram[$target]=$(($(section "$f" .data) + $(section "$f" .bss) + $(section "$f" .uninit)))
done
row() { # label value-for-target-1 value-for-target-2
    echo "| $1 | $2 | $3 |"
}
e="${targets[0]}" m="${targets[1]}"
for s in .vector_table .text .rodata .data .bss; do
    row "\`$s\`" "$(section "$out/size-$e" $s) B" "$(section "$out/size-$m" $s) B"
done
row "**flash** (vector table + text + rodata + data), of 128 KiB" \
    "${flash[$e]} B ($(kib "${flash[$e]}") KiB)" "${flash[$m]} B ($(kib "${flash[$m]}") KiB)"
row "**static RAM** (data + bss), of 64 KiB" \
    "${ram[$e]} B ($(kib "${ram[$e]}") KiB)" "${ram[$m]} B ($(kib "${ram[$m]}") KiB)"
peak() { sed -n 's/^peak stack: \([0-9]*\) B.*/\1/p' "$out/demo-$1"; }
row "**peak stack** (painting, full demo run)" "$(peak "$e") B" "$(peak "$m") B"
for target in "${targets[@]}"; do
    total=$((ram[$target] + $(peak "$target")))
    (( total <= 65536 )) || { echo "RAM budget exceeded on $target: $total B" >&2; exit 1; }
done
row "**RAM in use** (static + peak stack)" "$((ram[$e] + $(peak "$e"))) B" "$((ram[$m] + $(peak "$m"))) B"

echo
echo "Executed instructions (QEMU \`-icount shift=7\`, SysTick), window 128, 32 centres, d = 3, f32;"
echo "mean (min-max) over $(sed -n 's/^measure slkl_predict: .* n \([0-9]*\)$/\1/p' "$out/measure-$e") samples after a 256-sample warm-up, m0 ≈ $(sed -n 's/^measure m0_mean: //p' "$out/measure-$e"):"
echo
echo "| operation | Cortex-M4F | Cortex-M3, no FPU | ratio |"
echo "|---|---:|---:|---:|"
declare -A label=(
    [slkl_step_all]="SLKL coordinate step (demo regime: 4 per arrival)"
    [slkl_step_first_after_arrival]="SLKL step, first after an arrival (incl. the lazy O(N·m0) refresh)"
    [slkl_step_later]="SLKL step, 2nd-4th after an arrival"
    [slkl_step_stay_zero]="SLKL step where μ stays 0 (column on the fly)"
    [slkl_step_change]="SLKL step changing an active μ"
    [slkl_step_enter]="SLKL step where a column enters"
    [slkl_step_leave]="SLKL step where a column leaves"
    [slkl_window_update]="SLKL window update (one sample in, one out)"
    [slkl_predict]="SLKL prediction"
    [svm_step]="DCD coordinate step"
    [svm_arrival_32_steps]="DCD arrival (one in, one out, 32 steps)"
    [svm_predict]="DCD prediction"
    [sensor_read]="sensor read (driver + simulated device)"
    [demo_iteration]="one demo iteration (read, 2 predictions, 2 updates, 4 + 32 steps)"
    [libm_expf]="\`libm::expf\` (kernel values)"
    [libm_sqrtf]="\`libm::sqrtf\`"
    [f32_hypot]="\`f32::hypot\` via \`libm::hypotf\` (one per Givens rotation)"
)
stat() { # file name -> "mean (min-max)" mean
    sed -n "s/^measure $2: mean \([0-9]*\), min \([0-9]*\), max \([0-9]*\), n [0-9]*$/\1 \2 \3/p" "$1"
}
for name in slkl_step_all slkl_step_first_after_arrival slkl_step_later slkl_step_stay_zero slkl_step_change \
    slkl_step_enter slkl_step_leave slkl_window_update slkl_predict svm_step svm_arrival_32_steps svm_predict \
    sensor_read demo_iteration libm_expf libm_sqrtf f32_hypot; do
    read -r em emin emax < <(stat "$out/measure-$e" "$name")
    read -r mm mmin mmax < <(stat "$out/measure-$m" "$name")
    ratio="$(awk -v a="$mm" -v b="$em" 'BEGIN { printf "%.1f×", a / b }')"
    row "${label[$name]}" "$em ($emin-$emax)" "$mm ($mmin-$mmax) | $ratio"
done
calibration() { sed -n 's/^measure calibration_100_nops: mean \([0-9]*\),.*/\1/p' "$out/measure-$1"; }
echo
echo "Calibration: 100 \`nop\`s measure $(calibration "$e") (M4F) and $(calibration "$m") (M3) instructions."
