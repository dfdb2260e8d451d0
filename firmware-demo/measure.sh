#!/usr/bin/env bash
# Measures the release demo on every target and prints Markdown tables (the text of the
# firmware tables of BENCHMARKS.md):
#   - flash (.vector_table + .text + .init.rust + .rodata + .data) and static RAM (.data +
#     .bss + .uninit) of the demo ELF, from `llvm-size -A`, checked against the loadable
#     total of `llvm-size` (a section missing from the sum fails the script);
#   - peak stack of a full demo run, by stack painting (src/stack.rs);
#   - executed instructions per operation, from the `measure` binary under QEMU `-icount`:
#     SysTick at shift=7 on the Cortex-Ms (ticks x 40 ns / 128 ns), `minstret` at shift=0
#     on the RISC-V (qemu-targets.sh).
# Cortex-M4F: thumbv7em-none-eabihf on mps2-an386; Cortex-M3 (no FPU): thumbv7m-none-eabi
# on mps2-an385; RISC-V (RV32IMAC, no FPU): riscv32imac-unknown-none-elf on virt; Cortex-M0
# (no FPU): thumbv6m-none-eabi on microbit (its RAM and flash raised, qemu-targets.sh).
# Needs the four Rust targets, qemu-system-arm, qemu-system-riscv32 and rustup's llvm-tools.
# Exits non-zero when a build or a run fails. Runs from any directory.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")"
source qemu-targets.sh

host="$(rustc -vV | sed -n 's/^host: //p')"
llvm_size="$(rustc --print sysroot)/lib/rustlib/$host/bin/llvm-size"
[[ -x "$llvm_size" ]] || rustup component add llvm-tools >&2
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT

for target in "${targets[@]}"; do
    cargo build --quiet --release --target "$target" --bins
    dir="target/$target/release"
    "$llvm_size" -A "$dir/kestrel-firmware-demo" >"$out/size-$target"
    "$llvm_size" "$dir/kestrel-firmware-demo" >"$out/berkeley-$target"
    qemu "$target" "$dir/kestrel-firmware-demo" >"$out/demo-$target"
    qemu "$target" "$dir/measure" -icount "${icount[$target]}" >"$out/measure-$target"
done

section() { # file section -> bytes (0 when absent)
    awk -v s="$2" '$1 == s { print $2; found = 1 } END { if (!found) print 0 }' "$1"
}
shown() { # file section -> "N B", or "–" when the ELF has no such section
    awk -v s="$2" '$1 == s { print $2 " B"; found = 1 } END { if (!found) print "–" }' "$1"
}
kib() { awk -v b="$1" 'BEGIN { printf "%.1f", b / 1024 }'; }
row() { # label value... -> one Markdown row
    local line="| $1 |"
    shift
    for value in "$@"; do line+=" $value |"; done
    echo "$line"
}
e="${targets[0]}" m="${targets[1]}" r="${targets[2]}" z="${targets[3]}"

echo "| demo, release | Cortex-M4F (thumbv7em-none-eabihf) | Cortex-M3, no FPU (thumbv7m-none-eabi) | RISC-V RV32IMAC, no FPU (riscv32imac-unknown-none-elf) | Cortex-M0, no FPU (thumbv6m-none-eabi) |"
echo "|---|---:|---:|---:|---:|"
flash_sections=(.vector_table .text .init.rust .rodata .data)
declare -A flash ram peak
for target in "${targets[@]}"; do
    f="$out/size-$target"
    flash[$target]=0
    for s in "${flash_sections[@]}"; do
        flash[$target]=$((flash[$target] + $(section "$f" "$s")))
    done
    # Berkeley `text` + `data`: every loadable section, whatever its name.
    loadable="$(awk 'NR == 2 { print $1 + $2 }' "$out/berkeley-$target")"
    (( loadable == flash[$target] )) ||
        { echo "$target: flash sections sum to ${flash[$target]} B, the loadable sections to $loadable B" >&2; exit 1; }
    ram[$target]=$(($(section "$f" .data) + $(section "$f" .bss) + $(section "$f" .uninit)))
    peak[$target]="$(sed -n 's/^peak stack: \([0-9]*\) B.*/\1/p' "$out/demo-$target")"
    (( ram[$target] + peak[$target] <= 65536 )) ||
        { echo "RAM budget exceeded on $target: $((ram[$target] + peak[$target])) B" >&2; exit 1; }
done
for s in .vector_table .text .init.rust .rodata .data .bss; do
    row "\`$s\`" "$(shown "$out/size-$e" $s)" "$(shown "$out/size-$m" $s)" "$(shown "$out/size-$r" $s)" "$(shown "$out/size-$z" $s)"
done
bytes() { echo "$1 B ($(kib "$1") KiB)"; }
row "**flash** (vector table + text + init.rust + rodata + data), of 128 KiB" \
    "$(bytes "${flash[$e]}")" "$(bytes "${flash[$m]}")" "$(bytes "${flash[$r]}")" "$(bytes "${flash[$z]}")"
row "**static RAM** (data + bss), of 64 KiB" "$(bytes "${ram[$e]}")" "$(bytes "${ram[$m]}")" "$(bytes "${ram[$r]}")" \
    "$(bytes "${ram[$z]}")"
row "**peak stack** (painting, full demo run)" "${peak[$e]} B" "${peak[$m]} B" "${peak[$r]} B" "${peak[$z]} B"
row "**RAM in use** (static + peak stack)" \
    "$((ram[$e] + peak[$e])) B" "$((ram[$m] + peak[$m])) B" "$((ram[$r] + peak[$r])) B" "$((ram[$z] + peak[$z])) B"

echo
echo "Executed instructions (QEMU \`-icount\`: SysTick at shift=7 on the Cortex-Ms, \`minstret\` at shift=0 on the RISC-V),"
echo "SLKL and SVM: window 128, 32 centres, d = 3; novelty detector: window 256, 32 centres, d = 4; f32; mean (min-max) over $(sed -n 's/^measure slkl_predict: .* n \([0-9]*\)$/\1/p' "$out/measure-$e") samples after a 256-sample warm-up, m0 ≈ $(sed -n 's/^measure m0_mean: //p' "$out/measure-$e"):"
echo
echo "| operation | Cortex-M4F | Cortex-M3, no FPU | RV32IMAC, no FPU | Cortex-M0, no FPU | M3 ÷ M4F | RV32IMAC ÷ M3 | M0 ÷ M3 |"
echo "|---|---:|---:|---:|---:|---:|---:|---:|"
declare -A label=(
    [slkl_step_all]="SLKL coordinate step (demo regime: 4 per arrival)"
    [slkl_step_first_after_arrival]="SLKL step, first after an arrival (incl. the lazy refresh: the mean, z and F; every N arrivals the O(N·m0) resummation)"
    [slkl_step_later]="SLKL step, 2nd-4th after an arrival"
    [slkl_step_stay_zero]="SLKL step where μ stays 0"
    [slkl_step_change]="SLKL step changing an active μ"
    [slkl_step_enter]="SLKL step where a column enters"
    [slkl_step_leave]="SLKL step where a column leaves"
    [slkl_window_update]="SLKL window update (one sample in, one out)"
    [slkl_predict]="SLKL prediction"
    [svm_step]="DCD coordinate step"
    [svm_arrival_32_steps]="DCD arrival (one in, one out, 32 steps)"
    [svm_predict]="DCD prediction"
    [sensor_read]="sensor read (driver + simulated device)"
    [novelty_score]="novelty score (one pass over the centres: d² to the window's centre of mass, the verdict, the nearest centre)"
    [novelty_learn]="novelty update after the score (a reading learned: into its centre, or a new one; one in, one out)"
    [demo_iteration]="one demo iteration (read, 2 predictions, 2 updates, 4 + 32 steps, a novelty score and update)"
    [libm_expf]="\`libm::expf\` (kernel values)"
    [libm_sqrtf]="\`libm::sqrtf\`"
    [f32_hypot]="\`Real::hypot\` for \`f32\` (one per Givens rotation; \`x² + y²\` as it stands within 2^±118; the FPU's \`vsqrt.f32\` on the M4F, \`libm::sqrtf\` on the others)"
    [cholesky_update_16]="Cholesky rank-1 update, 16 × 16 factor"
    [cholesky_downdate_16]="Cholesky rank-1 downdate, 16 × 16 factor"
)
stat() { # file name -> mean min max
    sed -n "s/^measure $2: mean \([0-9]*\), min \([0-9]*\), max \([0-9]*\), n [0-9]*$/\1 \2 \3/p" "$1"
}
ratio() { # a b decimals -> a ÷ b
    awk -v a="$1" -v b="$2" -v d="$3" 'BEGIN { printf "%.*f×", d, a / b }'
}
for name in slkl_step_all slkl_step_first_after_arrival slkl_step_later slkl_step_stay_zero slkl_step_change \
    slkl_step_enter slkl_step_leave slkl_window_update cholesky_update_16 cholesky_downdate_16 slkl_predict svm_step svm_arrival_32_steps svm_predict \
    novelty_score novelty_learn sensor_read demo_iteration libm_expf libm_sqrtf f32_hypot; do
    read -r em emin emax < <(stat "$out/measure-$e" "$name")
    read -r mm mmin mmax < <(stat "$out/measure-$m" "$name")
    read -r rm rmin rmax < <(stat "$out/measure-$r" "$name")
    read -r zm zmin zmax < <(stat "$out/measure-$z" "$name")
    row "${label[$name]}" "$em ($emin-$emax)" "$mm ($mmin-$mmax)" "$rm ($rmin-$rmax)" "$zm ($zmin-$zmax)" \
        "$(ratio "$mm" "$em" 1)" "$(ratio "$rm" "$mm" 2)" "$(ratio "$zm" "$mm" 2)"
done
calibration() { sed -n 's/^measure calibration_100_nops: mean \([0-9]*\),.*/\1/p' "$out/measure-$1"; }
echo
echo "Calibration: 100 \`nop\`s measure $(calibration "$e") (M4F), $(calibration "$m") (M3), $(calibration "$r") (RV32IMAC) and $(calibration "$z") (M0) instructions."
