#!/usr/bin/env bash
# Every test of Kestrel, from a fresh machine: installs what is missing (the Cortex-M4F,
# Cortex-M3, Cortex-M0 and RISC-V RV32IMAC Rust targets, rustfmt/clippy/llvm-tools, QEMU for Arm and
# RISC-V, the Arm GNU toolchain with newlib), then runs, stopping at the first failure:
#   1. cargo fmt --check (the workspace, the firmware, the Pico example, the fuzz targets)
#   2. cargo clippy, warnings denied (host workspace, the C ABI crate for the Cortex-M and
#      RISC-V, and the firmware on all four targets)
#   3. host tests (unit, integration, doc tests; the committed C header against cbindgen)
#   4. kestrel-stream's library built without the `cli` feature (it must not need clap,
#      indicatif or signal-hook); kestrel-core built without default features and the
#      C staticlib (kestrel-ffi) built for thumbv7em-none-eabihf,
#      riscv32imac-unknown-none-elf and thumbv6m-none-eabi (any use of std breaks this
#      step); rustdoc, warnings denied
#   5. the fuzz targets (fuzz/: libFuzzer through cargo fuzz, run by scripts/fuzz.sh)
#      type-checked, so that a change of the library's API cannot leave them broken; the
#      Raspberry Pi Pico example (boards/pico: the demo's learners on a real MPU-6050
#      through rp2040-hal) built for thumbv6m-none-eabi
#   6. the firmware under QEMU on the Cortex-M4F, the Cortex-M3 (no FPU), the RISC-V
#      RV32IMAC (no FPU) and the Cortex-M0 (thumbv6m: no FPU, no hardware divide):
#      on-device tests, demo, fault handlers, instruction counts against their committed
#      table, `kestrel budget` against the ELF's statics (closing line `N passed, N
#      failed` over all four)
#   7. the C ABI from C on the host: kestrel.h with -std=c11 -Wall -Wextra -Werror, every
#      function with good and bad arguments under AddressSanitizer and UBSan, models a C
#      program learned read back by `kestrel predict` (`N passed, N failed`)
#   8. the C firmware demo under QEMU (arm-none-eabi-gcc, libkestrel_ffi.a) on the
#      Cortex-M4F and the Cortex-M0: on-device tests of the host-trained models,
#      checkpoints that are the host's bytes, the demo learning, and printing the Rust
#      demo's lines, each object's checkpoint and resume instruction counts against their
#      committed table (`N passed, N failed`)
#   9. the Python package: built by pip (maturin) into a virtual environment with numpy,
#      scipy, scikit-learn, river, pyspark, pytest, matplotlib and pandas from the package index, then its tests
#      (scikit-learn's estimator checks, models shared with the CLI, the MapReduce RSVM on
#      a local Spark session; pytest's closing line)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

TARGET=thumbv7em-none-eabihf
# The firmware's no-FPU builds: Cortex-M3 and RISC-V (the class of the ESP32-C3/C6 and
# RP2350 cores).
TARGET_NO_FPU=thumbv7m-none-eabi
TARGET_RISCV=riscv32imac-unknown-none-elf
# The smallest cores: Cortex-M0/M0+ (no FPU, no hardware divide, no compare-and-swap).
TARGET_M0=thumbv6m-none-eabi
step() { printf '\n==> %s\n' "$*"; }
die() { printf 'test-all: %s\n' "$*" >&2; exit 1; }

step "Installing what is missing"
command -v cargo >/dev/null || die "cargo not found: install Rust with rustup first"
rustup component list --installed | grep -q '^rustfmt' || rustup component add rustfmt || die "cannot add rustfmt"
rustup component list --installed | grep -q '^clippy' || rustup component add clippy || die "cannot add clippy"
rustup component list --installed | grep -q '^llvm-tools' || rustup component add llvm-tools || die "cannot add llvm-tools"
for target in "$TARGET" "$TARGET_NO_FPU" "$TARGET_RISCV" "$TARGET_M0"; do
    rustup target list --installed | grep -qx "$target" || rustup target add "$target" || die "cannot add target $target"
done
# Debian packages: qemu-system-arm, qemu-system-misc for qemu-system-riscv32, the Arm GNU
# toolchain and newlib for the C firmware demo, a Java runtime for Spark, Mosquitto for the
# MQTT tests, Chromium for the report tests.
# QEMU's system emulators go in apart: they must be the version of any qemu-utils the
# machine already has (this machine kind carries 10.0 from bookworm-backports, with which
# bookworm's 7.2 emulators conflict), so then they come from bookworm-backports too.
qemu_packages=()
command -v qemu-system-arm >/dev/null || qemu_packages+=(qemu-system-arm)
command -v qemu-system-riscv32 >/dev/null || qemu_packages+=(qemu-system-misc)
packages=()
command -v arm-none-eabi-gcc >/dev/null || packages+=(gcc-arm-none-eabi)
dpkg -s libnewlib-arm-none-eabi >/dev/null 2>&1 || packages+=(libnewlib-arm-none-eabi)
command -v java >/dev/null || packages+=(default-jre-headless)
# Mosquitto, the broker (and mosquitto_pub/_sub clients) the MQTT source's tests run against.
command -v mosquitto >/dev/null || [ -x /usr/sbin/mosquitto ] || packages+=(mosquitto)
command -v mosquitto_pub >/dev/null || packages+=(mosquitto-clients)
# Chromium, which renders a `--report` page headless in the report tests (never skipped here).
command -v chromium >/dev/null || packages+=(chromium)
if (( ${#packages[@]} + ${#qemu_packages[@]} > 0 )); then
    sudo=""
    [ "$(id -u)" -eq 0 ] || sudo="sudo"
    qemu_release=()
    if (( ${#qemu_packages[@]} > 0 )) && [[ "$(dpkg-query -W -f='${Version}' qemu-utils 2>/dev/null)" == *bpo12* ]]; then
        backports=/etc/apt/sources.list.d/kestrel-bookworm-backports.sources
        [ -f "$backports" ] || printf '%s\n' "Types: deb" "URIs: http://deb.debian.org/debian" \
            "Suites: bookworm-backports" "Components: main" \
            "Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg" | $sudo tee "$backports" >/dev/null ||
            die "cannot add bookworm-backports for QEMU"
        qemu_release=(-t bookworm-backports)
    fi
    $sudo apt-get update || die "apt-get update failed"
    if (( ${#qemu_packages[@]} > 0 )); then
        $sudo apt-get install -y "${qemu_release[@]}" "${qemu_packages[@]}" || die "cannot install ${qemu_packages[*]}"
    fi
    if (( ${#packages[@]} > 0 )); then
        $sudo apt-get install -y "${packages[@]}" || die "cannot install ${packages[*]}"
    fi
fi
for tool in qemu-system-arm qemu-system-riscv32 arm-none-eabi-gcc cc c++ java chromium; do
    command -v "$tool" >/dev/null || die "$tool not found after installing ${qemu_packages[*]} ${packages[*]}"
    "$tool" --version | head -n 1
done

step "Format"
cargo fmt --all -- --check
(cd firmware-demo && cargo fmt -- --check)
(cd boards/pico && cargo fmt -- --check)
(cd fuzz && cargo fmt -- --check)

step "Clippy (warnings denied)"
cargo clippy --workspace --all-targets -- -D warnings
for target in "$TARGET" "$TARGET_RISCV" "$TARGET_M0"; do
    cargo clippy -p kestrel-ffi --release --target "$target" -- -D warnings
done
(cd firmware-demo && cargo clippy --release --all-targets -- -D warnings)
(cd firmware-demo && cargo clippy --release --all-targets --target "$TARGET_NO_FPU" -- -D warnings)
(cd firmware-demo && cargo clippy --release --all-targets --target "$TARGET_RISCV" -- -D warnings)
(cd firmware-demo && cargo clippy --release --all-targets --target "$TARGET_M0" -- -D warnings)
(cd boards/pico && cargo clippy --release -- -D warnings)

step "Host tests"
KESTREL_REQUIRE_CHROMIUM=1 cargo test --workspace

step "kestrel-stream's library without the CLI's dependencies"
cargo build -p kestrel-stream --lib --no-default-features
if cargo tree -p kestrel-stream --no-default-features -e normal | grep -E '(clap|indicatif|signal-hook) v'; then
    die "the kestrel-stream library depends on a CLI crate"
fi

step "kestrel-core (no default features) and the C staticlib for $TARGET, $TARGET_RISCV and $TARGET_M0"
for target in "$TARGET" "$TARGET_RISCV" "$TARGET_M0"; do
    cargo build -p kestrel-core --no-default-features --target "$target"
    cargo build -p kestrel-ffi --release --target "$target"
done
RUSTDOCFLAGS="-D warnings" cargo doc -p kestrel-core -p kestrel-stream -p kestrel-ffi --no-deps

step "The fuzz targets (built; scripts/fuzz.sh runs them)"
(cd fuzz && cargo check --bins)

step "The Raspberry Pi Pico example (built; running it needs the board)"
(cd boards/pico && cargo build --release)

step "On-device tests under QEMU"
bash firmware-demo/run-qemu-tests.sh

step "The C ABI from C (host, AddressSanitizer and UBSan)"
bash ffi/run-c-tests.sh

step "The C firmware demo under QEMU"
bash firmware-demo-c/run-tests.sh

step "The Python package (virtual environment, pip, pytest)"
bash python/run-tests.sh
