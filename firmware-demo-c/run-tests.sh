#!/usr/bin/env bash
# The C firmware demo under QEMU, built with arm-none-eabi-gcc against libkestrel_ffi.a,
# on a Cortex-M4F (mps2-an386, thumbv7em-none-eabihf) and then on a Cortex-M0 (microbit,
# thumbv6m-none-eabi: soft float, no hardware divide, no unaligned access):
#   1. the on-device tests (build/host_models.elf): the host-trained models predict the
#      bits kestrel predict printed, damaged model bytes are statuses; and
#      (build/checkpoints.elf) the learners resume from checkpoints bit for bit, and their
#      checkpoints are, byte for byte, those the same program writes on the host;
#   2. the demo learns (it exits with failure otherwise);
#   3. the demo prints the Rust demo's lines (same sensor bytes, same learners, same
#      settings: same bits), all but the first (the statics' sizes differ) and the
#      peak-stack line;
#   4. 1-3 again on the Cortex-M0: its tests pass, its checkpoints are the host's bytes and
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

printf '==> building the C demo and its tests\n'
make --quiet all

printf '\n==> on-device tests of the C ABI\n'
status=0
make --quiet test-models | tee "$out/tests" || status=$?
tally "$out/tests" "$status" c_tests_ran_to_the_end

printf '\n==> checkpoints on the device, and the same program on the host\n'
status=0
make --quiet test-checkpoints | tee "$out/device-checkpoints" | grep -v '^checkpoint ' || status=$?
tally "$out/device-checkpoints" "$status" c_checkpoint_tests_ran_to_the_end
(cd .. && cargo build --quiet -p kestrel-ffi)
cc -std=c11 -Wall -Wextra -Werror -pedantic -O1 -ffp-contract=off -I ../ffi/include src/checkpoints.c \
    ../target/debug/libkestrel_ffi.a -lpthread -ldl -lm -o "$out/checkpoints-host"
same=0
"$out/checkpoints-host" >"$out/host-checkpoints" || same=1
diff <(grep '^checkpoint ' "$out/device-checkpoints") <(grep '^checkpoint ' "$out/host-checkpoints") >/dev/null || same=$?
[[ $(grep -c '^checkpoint ' "$out/device-checkpoints") == 3 ]] || same=1
report checkpoints_on_the_device_are_the_hosts_bytes "$same"

printf '\n==> the C demo\n'
demo=0
make --quiet run | tee "$out/c-demo" || demo=$?
report c_demo_learns "$demo"

printf '\n==> the C demo prints the Rust demo'"'"'s lines\n'
(cd ../firmware-demo && cargo run --quiet --release --bin kestrel-firmware-demo) >"$out/rust-demo" || true
same=0
diff <(tail -n +2 "$out/c-demo" | grep -v '^peak stack') <(tail -n +2 "$out/rust-demo" | grep -v '^peak stack') || same=$?
[[ -s "$out/c-demo" ]] || same=1
report c_demo_prints_the_rust_demos_lines "$same"

printf '\n==> the same on a Cortex-M0 (QEMU microbit)\n'
make --quiet CORE=m0 all
status=0
make --quiet CORE=m0 test-models | tee "$out/m0-tests" || status=$?
tally "$out/m0-tests" "$status" c_tests_ran_to_the_end_on_the_m0
status=0
make --quiet CORE=m0 test-checkpoints | tee "$out/m0-checkpoints" | grep -v '^checkpoint ' || status=$?
tally "$out/m0-checkpoints" "$status" c_checkpoint_tests_ran_to_the_end_on_the_m0
same=0
diff <(grep '^checkpoint ' "$out/m0-checkpoints") <(grep '^checkpoint ' "$out/host-checkpoints") >/dev/null || same=$?
[[ $(grep -c '^checkpoint ' "$out/m0-checkpoints") == 3 ]] || same=1
report checkpoints_on_the_m0_are_the_hosts_bytes "$same"
demo=0
make --quiet CORE=m0 run | tee "$out/m0-demo" || demo=$?
report c_demo_learns_on_the_m0 "$demo"
same=0
diff <(tail -n +2 "$out/m0-demo" | grep -v '^peak stack') <(tail -n +2 "$out/rust-demo" | grep -v '^peak stack') || same=$?
[[ -s "$out/m0-demo" ]] || same=1
report c_demo_on_the_m0_prints_the_rust_demos_lines "$same"

printf '\n==> instructions of a checkpoint and a resume against icount-baseline.txt (at most 10 %% more)\n'
for core in m4f:thumbv7em-none-eabihf m0:thumbv6m-none-eabi; do
    make --quiet CORE="${core%%:*}" measure-checkpoints >"$out/measure-${core%%:*}" || true
    sed -n "s/^measure \([a-z]*\) \([a-z]*\): \([0-9]*\) instructions.*/${core#*:} \1_\2 \3/p" "$out/measure-${core%%:*}"
done >"$out/counts"
icount_check icount-baseline.txt "$out/counts" thumbv7em-none-eabihf thumbv6m-none-eabi

printf '\n==> sizes (flash = text + data, static RAM = data + bss)\n'
arm-none-eabi-size build/demo.elf build/host_models.elf build/checkpoints.elf build/m0/demo.elf

finish
