#!/usr/bin/env bash
# The C firmware demo under QEMU, built with arm-none-eabi-gcc against libkestrel_ffi.a,
# on a Cortex-M4F (mps2-an386, thumbv7em-none-eabihf) and then on a Cortex-M0 (microbit,
# thumbv6m-none-eabi: soft float, no hardware divide, no unaligned access):
#   1. the on-device tests (build/host_models.elf): the host-trained models predict the
#      bits kestrel predict printed, damaged model bytes are statuses; and
#      (build/checkpoints.elf) the learners resume from checkpoints bit for bit, and their
#      checkpoints, the SVM's model saved with its scaler and the multi-class learner's
#      model, are byte for byte those the same program writes on the host;
#   2. the demo learns (it exits with failure otherwise);
#   3. the demo prints the Rust demo's lines (same sensor bytes, same learners, same
#      settings: same bits), all but the first (the statics' sizes differ) and the
#      peak-stack line; and its work arrays, sized by kestrel.h's macros, are the bytes
#      `kestrel budget --target cortex-m` gives for the C library's objects;
#   4. 1-3 again on the Cortex-M0: its tests pass, its checkpoints and model are the host's bytes and
#      its demo prints the same lines;
#   5. the instructions of each learning object's checkpoint and resume on both cores
#      (`make [CORE=m0] measure-checkpoints`, QEMU -icount) grew at most 10 % over
#      icount-baseline.txt, which has them all (ICOUNT_BASELINE_UPDATE=1 rewrites it from
#      this run, for a change on purpose: add its reason to the header);
#   6. flash and static RAM of the demo, as BENCHMARKS.md reports them.
# Prints `test NAME ... ok|FAILED` and `N passed, N failed` over all of them; exits
# non-zero when anything failed. Needs arm-none-eabi-gcc with newlib, qemu-system-arm and
# the Rust thumbv7em-none-eabihf and thumbv6m-none-eabi targets (scripts/test-all.sh
# installs them).
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")"
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT

# shellcheck source=../scripts/test-tally.sh
source ../scripts/test-tally.sh
# shellcheck source=../scripts/icount-check.sh
source ../scripts/icount-check.sh

printf '==> what every core must print: the checkpoints program on the host, the Rust demo\n'
(cd .. && cargo build --quiet -p kestrel-ffi)
cc -std=c11 -Wall -Wextra -Werror -pedantic -O1 -ffp-contract=off -I ../ffi/include src/checkpoints.c \
    ../target/debug/libkestrel_ffi.a -lpthread -ldl -lm -o "$out/checkpoints-host"
host_failed=0
"$out/checkpoints-host" >"$out/host-checkpoints" || host_failed=1
(cd ../firmware-demo && cargo run --quiet --release --bin kestrel-firmware-demo) >"$out/rust-demo" || true

# Each learner's configuration in the C demo (src/main.c), as `kestrel budget` flags.
declare -A demo_configuration=(
    [slkl]="--dim 3 --window 128 --centers 32"
    [svm]="--dim 3 --window 128 --classes 2 --memory 0"
    [novelty]="--dim 4 --window 256 --centers 32"
)

# The lines of bytes the checkpoints program prints: four checkpoints and two models.
bytes_lines='^(checkpoint|model) '

# Steps 1-3 on the core CORE (make's CORE=), each test named with SUFFIX after it.
on_core() {
    local core="$1" suffix="$2" status same demo
    printf '\n==> %s: building the C demo and its tests\n' "$core"
    make --quiet CORE="$core" all

    printf '\n==> %s: on-device tests of the C ABI\n' "$core"
    status=0
    make --quiet CORE="$core" test-models | tee "$out/$core-tests" || status=$?
    tally "$out/$core-tests" "$status" "c_tests_ran_to_the_end$suffix"

    printf '\n==> %s: checkpoints on the device, and the same program on the host\n' "$core"
    status=0
    make --quiet CORE="$core" test-checkpoints | tee "$out/$core-checkpoints" | grep -Ev "$bytes_lines" || status=$?
    tally "$out/$core-checkpoints" "$status" "c_checkpoint_tests_ran_to_the_end$suffix"
    same=$host_failed
    diff <(grep -E "$bytes_lines" "$out/$core-checkpoints") <(grep -E "$bytes_lines" "$out/host-checkpoints") >/dev/null ||
        same=$?
    [[ $(grep -cE "$bytes_lines" "$out/$core-checkpoints") == 6 ]] || same=1
    report "checkpoints_on_the_device_are_the_hosts_bytes$suffix" "$same"

    printf '\n==> %s: the C demo, and the Rust demo'"'"'s lines\n' "$core"
    demo=0
    make --quiet CORE="$core" run | tee "$out/$core-demo" || demo=$?
    report "c_demo_learns$suffix" "$demo"
    same=0
    diff <(tail -n +2 "$out/$core-demo" | grep -v '^peak stack') <(tail -n +2 "$out/rust-demo" | grep -v '^peak stack') ||
        same=$?
    [[ -s "$out/$core-demo" ]] || same=1
    report "c_demo_prints_the_rust_demos_lines$suffix" "$same"

    printf '\n==> %s: kestrel budget'"'"'s C work bytes against the demo'"'"'s work arrays\n' "$core"
    local elf learner budget static sizes
    elf="build/demo.elf"
    [[ "$core" == m4f ]] || elf="build/$core/demo.elf"
    sizes="$(arm-none-eabi-nm --print-size "$elf")"
    for learner in slkl svm novelty; do
        # shellcheck disable=SC2086 # the configuration is words
        budget="$(../target/release/kestrel budget --learner "$learner" ${demo_configuration[$learner]} --scalar f32 \
            --target cortex-m --json | sed -n 's/.*"work_bytes":\([0-9]*\).*/\1/p')" || budget=""
        static="$(awk -v name="${learner}_work" '$4 == name { print $2 }' <<<"$sizes")"
        [[ -n "$static" ]] && static=$((16#$static))
        echo "$core $learner: kestrel budget ${budget:-?} B of work, ${learner}_work ${static:-?} B"
        same=1
        [[ -n "$budget" && "$budget" == "$static" ]] && same=0
        report "budget_c_work_of_${learner}_is_the_demos_array$suffix" "$same"
    done
}
on_core m4f ""
on_core m0 _on_the_m0

printf '\n==> instructions of a checkpoint and a resume against icount-baseline.txt (at most 10 %% more)\n'
for core in m4f:thumbv7em-none-eabihf m0:thumbv6m-none-eabi; do
    make --quiet CORE="${core%%:*}" measure-checkpoints >"$out/measure-${core%%:*}" || true
    sed -n "s/^measure \([a-z]*\) \([a-z]*\): \([0-9]*\) instructions.*/${core#*:} \1_\2 \3/p" "$out/measure-${core%%:*}"
done >"$out/counts"
icount_check icount-baseline.txt "$out/counts" thumbv7em-none-eabihf thumbv6m-none-eabi

printf '\n==> sizes (flash = text + data, static RAM = data + bss)\n'
arm-none-eabi-size build/demo.elf build/host_models.elf build/checkpoints.elf build/m0/demo.elf

finish
