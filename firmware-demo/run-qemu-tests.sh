#!/usr/bin/env bash
# Runs the firmware in QEMU: the on-device tests (`cargo test --release`), then the demo
# (`cargo run --release`), then prints the demo ELF's section sizes. Exits non-zero when a
# test or the demo fails; the last line is the tests' aggregated `N passed, N failed`.
#
# Needs the thumbv7em-none-eabihf target and qemu-system-arm installed (the caller's job);
# installs rustup's llvm-tools for llvm-size when missing. Runs from any directory.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")"

log="$(mktemp)"
trap 'rm -f "$log"' EXIT

status=0
cargo test --release --no-fail-fast 2>&1 | tee "$log" || status=$?
cargo run --release || status=$?

host="$(rustc -vV | sed -n 's/^host: //p')"
llvm_size="$(rustc --print sysroot)/lib/rustlib/$host/bin/llvm-size"
if [[ ! -x "$llvm_size" ]]; then
    rustup component add llvm-tools >&2 || true
fi
elf=target/thumbv7em-none-eabihf/release/kestrel-firmware-demo
if [[ -x "$llvm_size" && -f "$elf" ]]; then
    echo "Section sizes of $elf (flash = text + data, static RAM = data + bss):"
    "$llvm_size" "$elf"
else
    echo "llvm-size or the demo ELF unavailable: section sizes skipped"
fi

# Count the `test NAME ... ok|FAILED` lines; a binary that started but printed no closing
# `N passed, N failed` (a panic, a fault, a time-out) counts as one more failure.
read -r passed failed < <(awk '
    /^ +Running /                    { started++ }
    /^test .* \.\.\. ok$/             { passed++ }
    /^test .* \.\.\. FAILED$/         { failed++ }
    /^[0-9]+ passed, [0-9]+ failed$/ { finished++ }
    END { print passed + 0, failed + started - finished }' "$log")
if (( status != 0 && failed == 0 )); then
    # Nothing ran to report the failure (e.g. the build failed): still not a pass.
    failed=1
fi
echo "$passed passed, $failed failed"
(( status == 0 && failed == 0 ))
