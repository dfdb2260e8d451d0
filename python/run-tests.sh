#!/usr/bin/env bash
# The Python package, from a fresh machine: a virtual environment (target/python-venv) with
# maturin, numpy, scipy, scikit-learn, river, pyspark, pytest, matplotlib and pandas from the package index, the package
# built and installed from python/ by pip (maturin, an abi3 wheel), then its tests with the
# CLI the workspace builds (for the model-bytes comparisons). Fails loudly when anything
# cannot be installed. pytest prints the closing line. Runs from any directory.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/.." && pwd)"
venv="$root/target/python-venv"
die() { printf 'python/run-tests.sh: %s\n' "$*" >&2; exit 1; }

command -v python3 >/dev/null || die "python3 not found"
[[ -x "$venv/bin/python" ]] || python3 -m venv "$venv" || die "cannot create a virtual environment in $venv"
"$venv/bin/pip" install --quiet --upgrade pip || die "cannot upgrade pip"
"$venv/bin/pip" install --quiet maturin numpy scipy scikit-learn river pyspark pytest matplotlib "pandas<3" ||
    die "cannot install maturin, numpy, scipy, scikit-learn, river, pyspark, pytest, matplotlib, pandas"
(cd "$root" && cargo build --quiet --release -p kestrel-stream)
"$venv/bin/pip" install --quiet --force-reinstall --no-deps "$here" || die "cannot build and install python/"
# From outside python/, so that `import kestrel` finds the installed package.
cd "$root/target"
KESTREL_CLI="$root/target/release/kestrel" "$venv/bin/python" -m pytest -q -p no:cacheprovider "$here/tests"
