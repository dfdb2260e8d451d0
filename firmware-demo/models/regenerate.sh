#!/usr/bin/env bash
# Regenerates the host-trained models the firmware embeds (tests/host_models.rs), their
# fixed inputs and the host's predictions on them:
#
#   slkl.kestrel  SLKL regressor, diabetes (10 features), 32 candidate centres
#   svm.kestrel   linear SVM (DCD), breast_cancer in raw units (30 features), standardised
#                 by the scaler the model file carries (`train --scale`)
#   rsvm.kestrel  reduced-kernel SVM, moons (2 features), at most 16 centres
#   calibrated.kestrel  the same with class probabilities (`train --probabilities`);
#                 calibrated.probabilities holds, per row, the host's two probabilities
#                 (`kestrel predict --probabilities`, computed in f64 from the f32 model's
#                 decision value), which the device's f32 sigmoids match to 1e-5
#   mrrsvm.kestrel  MapReduce RSVM, moons, 4 parts of at most 16 centres each
#   weighed.kestrel  reduced-kernel SVM, breast_cancer in raw units (30 features), at most
#                 16 centres, standardised and weighed by the relevance weights the scaler
#                 carries (`train --relevance`: a Gaussian width per feature; kept, as the
#                 leave-one-out favoured them)
#   novelty.kestrel  novelty detector learned by `kestrel stream --learner novelty` on
#                 breast_cancer in raw units (30 features), 32 centres, standardised by
#                 its warm-up's statistics (carried by the file)
#   kpca.kestrel  reduced kernel PCA fitted by `kestrel transform` on diabetes (10
#                 features), 16 centres, 3 components; kpca.expected holds each row's 3
#                 projections' bit patterns, then the line `kestrel transform --apply` printed
#   kcca_u.kestrel, kcca_v.kestrel  reduced KCCA (`kestrel transform --method kcca`) of
#                 wine split into two views (features 1-6 and 7-13), 16 centres, 2
#                 canonical pairs: each view's projection; kcca_u.csv / kcca_v.csv the
#                 first 32 test rows of each view, NAME.expected per row the f32 bits of
#                 both variates (`transform --apply`), then the printed row
#
# each trained by `kestrel train --scalar f32` on ../shared/data/DATASET/train.csv (or
# train_raw.csv); NAME.csv is the header and first 32 rows of the matching test file;
# NAME.expected holds, per row, the f32
# bit pattern of `kestrel predict`'s output (a detector's: its score, then `SCORE,FLAG`) (the CLI prints the f64 of an f32 prediction
# with `{}`, the shortest decimal that reads back to the same f64, so the bits are exact),
# then the decimal as printed. The device test compares bits.
#
# Usage: bash firmware-demo/models/regenerate.sh [DATA_DIR]   (needs cargo and python3)
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
data="$(cd "${1:-$root/../shared/data}" && pwd)"

# From the workspace root: inside firmware-demo/, cargo would build for the Cortex-M.
(cd "$root" && cargo build --quiet --release -p kestrel-stream)
kestrel="$root/target/release/kestrel"

# name dataset files learner options... (files: the data set's "train"/"test" or "train_raw"/"test_raw")
models=(
    "slkl diabetes plain slkl --centers 32"
    "svm breast_cancer raw svm --scale"
    "rsvm moons plain rsvm --centers 16"
    "calibrated moons plain rsvm --centers 16 --probabilities"
    "mrrsvm moons plain mrrsvm --partitions 4 --centers 16"
    "weighed breast_cancer raw rsvm --centers 16 --relevance"
)
# The host's predictions on NAME.csv as f32 bit patterns (NAME.expected).
expect() {
    local name="$1"
    "$kestrel" predict --model "$here/$name.kestrel" --input "$here/$name.csv" | python3 -c '
import struct, sys
for line in sys.stdin:
    text = line.strip()
    value = float(text.split(",")[0])
    bits = struct.unpack("<I", struct.pack("<f", value))[0]
    # The printed value is an f32 widened to f64: packing it to f32 must be exact.
    assert struct.unpack("<f", struct.pack("<I", bits))[0] == value, text
    print(f"{bits:#010x} {text}")
' >"$here/$name.expected"
    echo "$name: $(wc -c <"$here/$name.kestrel") bytes, $(wc -l <"$here/$name.expected") predictions"
}

# The host's projections of NAME.csv through the projection NAME.kestrel (every column of
# `kestrel transform --apply` but the label), as f32 bit patterns, then the row printed
# (NAME.expected).
projections() {
    local name="$1"
    "$kestrel" transform --apply "$here/$name.kestrel" --input "$here/$name.csv" 2>/dev/null | tail -n +2 | python3 -c '
import struct, sys
for line in sys.stdin:
    text = line.strip()
    fields = []
    for value in map(float, text.split(",")[:-1]):
        bits = struct.unpack("<I", struct.pack("<f", value))[0]
        assert struct.unpack("<f", struct.pack("<I", bits))[0] == value, text
        fields.append(f"{bits:#010x}")
    print(" ".join(fields), text)
' >"$here/$name.expected"
    echo "$name: $(wc -c <"$here/$name.kestrel") bytes, $(wc -l <"$here/$name.expected") projected rows"
}

for spec in "${models[@]}"; do
    read -r name dataset files learner options <<<"$spec"
    suffix=""
    if [ "$files" = raw ]; then suffix="_raw"; fi
    # shellcheck disable=SC2086 # options are words
    "$kestrel" train --learner "$learner" --input "$data/$dataset/train$suffix.csv" --out "$here/$name.kestrel" \
        --scalar f32 --seed 1 $options
    head -n 33 "$data/$dataset/test$suffix.csv" >"$here/$name.csv"
    expect "$name"
done

# The host's class probabilities of calibrated.csv's rows, one row of them per line.
"$kestrel" predict --model "$here/calibrated.kestrel" --input "$here/calibrated.csv" --probabilities 2>/dev/null |
    cut -d, -f2- >"$here/calibrated.probabilities"

"$kestrel" stream --learner novelty --input "$data/breast_cancer/train_raw.csv" --out "$here/novelty.kestrel" \
    --scalar f32 --centers 32 --warmup 100 --quantile 0.9 --report-every 0 >/dev/null
head -n 33 "$data/breast_cancer/test_raw.csv" >"$here/novelty.csv"
expect novelty

"$kestrel" transform --method kpca --input "$data/diabetes/train.csv" --model "$here/kpca.kestrel" \
    --output /dev/null --scalar f32 --seed 1 --centers 16 --components 3
head -n 33 "$data/diabetes/test.csv" >"$here/kpca.csv"
projections kpca
# Reduced KCCA: the two views of wine's train and test files, field by field (the device
# parses the same decimals), the models, and each view's variates on its 32 test rows.
views="$(mktemp -d)"
trap 'rm -rf "$views"' EXIT
python3 - "$data/wine" "$views" "$here" <<'PY'
import sys
src, views, here = sys.argv[1:]
for part, limit, into in (("train", None, views + "/{}_train.csv"), ("test", 33, here + "/kcca_{}.csv")):
    lines = open(f"{src}/{part}.csv").read().splitlines()[:limit]
    for name, pick in (("u", slice(0, 6)), ("v", slice(6, -1))):
        with open(into.format(name), "w") as f:
            for line in lines:
                fields = line.split(",")
                f.write(",".join(fields[pick] + fields[-1:]) + "\n")
PY
"$kestrel" transform --method kcca --input "$views/u_train.csv" --input2 "$views/v_train.csv" --components 2 \
    --centers 16 --scalar f32 --seed 1 --model "$here/kcca_u.kestrel" --model2 "$here/kcca_v.kestrel" \
    --output "$views/pairs.csv" 2>/dev/null
for view in u v; do
    projections "kcca_$view"
done
