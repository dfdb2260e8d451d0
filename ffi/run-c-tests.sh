#!/usr/bin/env bash
# The C ABI tested from C on the host (issue: linkable into C firmware):
#   1. builds the host staticlib (debug: Rust's overflow checks stay on, so an arithmetic
#      defect would abort the test instead of passing silently) and the CLI;
#   2. compiles tests/c/test_kestrel.c with -std=c11 -Wall -Wextra -Werror -pedantic and
#      -fsanitize=address,undefined against include/kestrel.h and libkestrel_ffi.a, and the
#      header alone as C99 and as C++ (extern "C");
#   3. runs it on the firmware's host-trained models (firmware-demo/models) and an f64
#      model trained here, which it must refuse;
#   4. compares the models the C test learned and saved with `kestrel predict` on the same
#      rows: the CLI reads what a device wrote, and predicts the same values; and the
#      decision values the C test read from the classifiers with `kestrel predict
#      --decision`, and the class probabilities with `kestrel predict --probabilities`;
#   5. streams the rows the C test's novelty detector learned through `kestrel stream
#      --learner novelty` with the same settings: the same flags, and the same model bytes.
# Prints `test NAME ... ok|FAILED` per test and `N passed, N failed` over all of them;
# exits non-zero when anything failed. Needs cargo and a C compiler (cc) with the
# sanitizers' runtimes (gcc's libasan/libubsan). Runs from any directory.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/.." && pwd)"
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT

# shellcheck source=../scripts/test-tally.sh
source "$here/../scripts/test-tally.sh"

printf '==> building libkestrel_ffi.a (host) and the CLI\n'
(cd "$root" && cargo build --quiet -p kestrel-ffi && cargo build --quiet --release -p kestrel-stream)
lib="$root/target/debug/libkestrel_ffi.a"
kestrel="$root/target/release/kestrel"

printf '\n==> the header compiles alone as C99 and as C++\n'
header=0
printf '#include "kestrel.h"\nint main(void) { return KESTREL_STATUS_OK; }\n' >"$out/header.c"
cc -std=c99 -Wall -Wextra -Werror -pedantic -fsyntax-only -I "$here/include" "$out/header.c" || header=1
report header_compiles_as_c99 "$header"
header=0
c++ -x c++ -std=c++11 -Wall -Wextra -Werror -pedantic -fsyntax-only -I "$here/include" "$out/header.c" || header=1
report header_compiles_as_cxx "$header"

printf '\n==> the C tests under AddressSanitizer and UBSan\n'
cc -std=c11 -Wall -Wextra -Werror -pedantic -g -O1 -fsanitize=address,undefined -fno-sanitize-recover=all \
    -I "$here/include" "$here/tests/c/test_kestrel.c" "$lib" -lpthread -ldl -lm -o "$out/test_kestrel"
"$kestrel" train --learner rsvm --input "$root/firmware-demo/models/rsvm.csv" --centers 4 --scalar f64 \
    --out "$out/f64.kestrel" >/dev/null 2>&1
# A classifier of three named classes for the decision values; the C test reads its first
# 32 rows (classes3.csv).
awk 'BEGIN { print "x1,x2,label"; for (i = 0; i < 90; i++) { a = (i * 37 % 101) / 50 - 1; b = (i * 53 % 97) / 48 - 1
    print a "," b "," (a > 0.3 ? "high" : (b > 0 ? "mid" : "low")) } }' >"$out/classes3-train.csv"
head -n 33 "$out/classes3-train.csv" >"$out/classes3.csv"
"$kestrel" train --learner rsvm --input "$out/classes3-train.csv" --centers 8 --scalar f32 \
    --out "$out/classes3.kestrel" >/dev/null 2>&1
# Classifiers with class probabilities, of two classes (the firmware's rsvm rows) and of three.
"$kestrel" train --learner rsvm --input "$root/firmware-demo/models/rsvm.csv" --centers 8 --scalar f32 \
    --probabilities --out "$out/probs2.kestrel" >/dev/null 2>&1
head -n 33 "$root/firmware-demo/models/rsvm.csv" >"$out/probs2.csv"
"$kestrel" train --learner rsvm --input "$out/classes3-train.csv" --centers 8 --scalar f32 \
    --probabilities --out "$out/probs3.kestrel" >/dev/null 2>&1
cp "$out/classes3.csv" "$out/probs3.csv"
c_tests=0
"$out/test_kestrel" "$root/firmware-demo/models" "$out/f64.kestrel" "$out" | tee "$out/c.log" || c_tests=$?
tally "$out/c.log" "$c_tests" c_tests_ran_to_the_end

printf '\n==> models learned through the C ABI, read back by kestrel predict\n'
for name in slkl-device svm-device multiclass-device; do
    same=1
    if [[ -s "$out/$name.c-predictions" ]]; then
        "$kestrel" predict --model "$out/$name.kestrel" --input "$out/$name.csv" >"$out/$name.cli-predictions" &&
            paste "$out/$name.c-predictions" "$out/$name.cli-predictions" |
            awk '$1 != $2 { bad++ } END { exit (NR == 0 || bad > 0) }' && same=0
    fi
    report "${name//-/_}_model_predicts_the_same_in_kestrel_predict" "$same"
done

printf '\n==> decision values through the C ABI against kestrel predict --decision\n'
# The same doubles: C prints each float's value with 17 digits, the CLI the shortest
# decimal that reads back to it; awk reads both back.
for name in svm rsvm weighed classes3; do
    same=1
    dir="$root/firmware-demo/models"
    [[ $name == classes3 ]] && dir="$out"
    if [[ -s "$out/$name.c-decisions" ]]; then
        "$kestrel" predict --model "$dir/$name.kestrel" --input "$dir/$name.csv" --decision 2>/dev/null |
            cut -d, -f2- >"$out/$name.cli-decisions" &&
            awk -F, 'NR == FNR { cli[FNR] = $0; next }
                { n = split(cli[FNR], v, ","); if (n != NF) bad++; for (i = 1; i <= NF; i++) if (v[i] + 0 != $i + 0) bad++ }
                END { exit (FNR != 32 || bad > 0) }' "$out/$name.cli-decisions" "$out/$name.c-decisions" && same=0
    fi
    report "${name}_decision_values_are_kestrel_predicts" "$same"
done

printf '\n==> class probabilities through the C ABI against kestrel predict --probabilities\n'
# The device computes the sigmoids in f32, the host in f64: equal to 1e-5. svm-device is the
# model the C test's kestrel_svm learned and saved with its online sigmoid, multiclass-device
# its kestrel_multiclass's, with one sigmoid a class.
for name in probs2 probs3 svm-device multiclass-device; do
    same=1
    if [[ -s "$out/$name.c-probabilities" ]]; then
        "$kestrel" predict --model "$out/$name.kestrel" --input "$out/$name.csv" --probabilities 2>/dev/null |
            cut -d, -f2- >"$out/$name.cli-probabilities" &&
            awk -F, 'NR == FNR { cli[FNR] = $0; next }
                { n = split(cli[FNR], v, ","); if (n != NF) bad++
                  for (i = 1; i <= NF; i++) { d = v[i] - $i; if (d < -1e-5 || d > 1e-5) bad++ } }
                END { exit (FNR == 0 || FNR != length(cli) || bad > 0) }' \
                "$out/$name.cli-probabilities" "$out/$name.c-probabilities" && same=0
    fi
    report "${name//-/_}_probabilities_are_kestrel_predicts" "$same"
done

printf '\n==> the multi-class learner checkpoint through kestrel inspect and kestrel import\n'
# The C test checkpoints its kestrel_multiclass right after saving it: the model kestrel
# import makes of the checkpoint is the saved one, byte for byte.
same=1
checkpoint="$out/multiclass-device-checkpoint.kestrel"
if [[ -s $checkpoint ]] &&
    "$kestrel" inspect "$checkpoint" >"$out/multiclass-inspect.txt" 2>&1 &&
    grep -q "checkpoint of a device's kestrel_multiclass" "$out/multiclass-inspect.txt" &&
    grep -q "learned: 2000 samples of 4 classes" "$out/multiclass-inspect.txt" &&
    grep -q "resumes: yes" "$out/multiclass-inspect.txt" &&
    "$kestrel" import "$checkpoint" --out "$out/multiclass-imported.kestrel" >/dev/null 2>&1; then
    cmp -s "$out/multiclass-imported.kestrel" "$out/multiclass-device.kestrel" && same=0
fi
report multiclass_device_checkpoint_imports_the_model_it_saved "$same"

printf '\n==> the detector learned through the C ABI against kestrel stream on the same rows\n'
# The C test's detector: window 64, 16 centres, γ = 0.5, a warm-up of 100, the rest default.
# Its rows go in as LibSVM, which names no feature: a CSV header's names would be written
# into the stream's model, and the device's has none.
same_flags=1
same_model=1
if [[ -s "$out/novelty-device.csv" ]] &&
    awk -F, 'NR > 1 { print $4 " 1:" $1 " 2:" $2 " 3:" $3 }' "$out/novelty-device.csv" >"$out/novelty-device.libsvm" &&
    "$kestrel" stream --learner novelty --scalar f32 --no-scale --window 64 --centers 16 --gamma 0.5 \
        --warmup 100 --dim 3 --input "$out/novelty-device.libsvm" --output "$out/novelty-host.flags" \
        --out "$out/novelty-host.kestrel" >/dev/null 2>&1; then
    cut -d, -f2 "$out/novelty-host.flags" | paste - "$out/novelty-device.c-flags" |
        awk '$1 != $2 { bad++ } END { exit (NR == 0 || bad > 0) }' && same_flags=0
    cmp -s "$out/novelty-host.kestrel" "$out/novelty-device.kestrel" && same_model=0
fi
report novelty_device_flags_equal_the_streams "$same_flags"
report novelty_device_model_equals_the_streams "$same_model"

finish
