#!/usr/bin/env python3
"""MapReduce RSVM (seed 003 §5) against one-machine rsvm, LIBSVM and the linear SVM, in one
run, laid out as the seed's Table 1 (method, training time, accuracy).

1. A generated nonlinear problem of --n training rows (default 10^6) and 10^5 test rows:
   label 1 where sin(3x0) + cos(3x1) > 0, x uniform in [-1, 1]^4 (two noise features), 3 %
   of labels flipped. The settings are chosen once, by `kestrel train --learner rsvm`'s
   auto on the first 2·10^4 rows (gamma, C; the IRSVM threshold is the fixed small one),
   and used by every kernel method below, as the seed's Table 1 compares at fixed
   settings. Methods: `kestrel train --learner svm` and `liblinear-train -s 1` (linear);
   `kestrel train --learner rsvm` (one machine); LIBSVM `svm-train` on the first
   --libsvm-n rows (its time grows with n^2 and more: the full set is out of reach here);
   `kestrel train --learner mrrsvm` with P = 1, 2, 4, 8 (wall time on this machine's
   cores).
2. Per-part costs: each part's Map step and the Reduce step timed alone through the
   Python extension (kestrel._kestrel.mrrsvm_part / mrrsvm_reduce): the time P machines
   would take is the split, the slowest part and the reduce.
3. The largest shared sets (moons, digits, phishing): the same methods, LIBSVM at the data
   README's C and gamma, P = 1, 2, 4, 8.

Usage: target/python-venv/bin/python scripts/bench_mrrsvm.py [--n 1000000] [--libsvm-n 100000]
Needs the Python package installed (python/run-tests.sh builds it), `apt-get install
libsvm-tools liblinear-tools`, and a release build of kestrel. Prints Markdown.
"""
import argparse
import json
import os
import re
import subprocess
import tempfile
import time

import numpy as np

from kestrel import _kestrel

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DATA = os.path.join(ROOT, "..", "shared", "data")
KESTREL = os.path.join(ROOT, "target", "release", "kestrel")
PARTS = (1, 2, 4, 8)
# The IRSVM threshold of the large problem (kestrel train's small default for classification).
DELTA = 5e-4
# name: (log2 C, log2 gamma) from the data README (LIBSVM's grid search)
SHARED = {"moons": (6, 0), "digits": (None, None), "phishing": (0, -4)}


def run(cmd):
    return subprocess.run(cmd, check=True, capture_output=True, text=True).stdout


def timed(cmd):
    start = time.perf_counter()
    out = run(cmd)
    return out, time.perf_counter() - start


def waves(n, seed):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, size=(n, 4))
    y = (np.sin(3 * X[:, 0]) + np.cos(3 * X[:, 1]) > 0).astype(np.float64)
    flip = rng.random(n) < 0.03
    y[flip] = 1 - y[flip]
    return X, 2 * y - 1


def write_libsvm(path, X, y):
    with open(path, "w") as f:
        for row, label in zip(X, y):
            f.write(f"{label:+.0f} " + " ".join(f"{j + 1}:{float(v)!r}" for j, v in enumerate(row)) + "\n")


def read_libsvm(path):
    rows, labels = [], []
    with open(path) as f:
        for line in f:
            fields = line.split()
            if not fields:
                continue
            labels.append(float(fields[0]))
            rows.append({int(k) - 1: float(v) for k, v in (p.split(":") for p in fields[1:])})
    dim = max((max(r) for r in rows if r), default=-1) + 1
    X = np.zeros((len(rows), dim))
    for i, r in enumerate(rows):
        for j, v in r.items():
            X[i, j] = v
    return X, np.asarray(labels)


def kestrel_train(learner, train, test, model, *extra):
    out, seconds = timed(
        [KESTREL, "train", "--learner", learner, "--input", train, "--out", model, "--scale", "off", "--json", *extra]
    )
    summary = json.loads(out)
    accuracy = json.loads(run([KESTREL, "eval", "--model", model, "--input", test, "--json"]))["accuracy"]
    return 100 * accuracy, seconds, summary


def liblinear(train, test, tmp):
    model = os.path.join(tmp, "liblinear.model")
    _, seconds = timed(["liblinear-train", "-s", "1", "-c", "1", "-B", "1", train, model])
    out = run(["liblinear-predict", test, model, os.path.join(tmp, "pred")])
    return float(re.search(r"Accuracy = (\S+)%", out).group(1)), seconds


def libsvm(train, test, c, gamma, tmp):
    model = os.path.join(tmp, "libsvm.model")
    _, seconds = timed(["svm-train", "-c", repr(c), "-g", repr(gamma), "-m", "2000", train, model])
    out = run(["svm-predict", test, model, os.path.join(tmp, "pred")])
    with open(model) as f:
        sv = int(re.search(r"total_sv (\d+)", f.read()).group(1))
    return float(re.search(r"Accuracy = (\S+)%", out).group(1)), seconds, sv


def per_part_costs(X, y, parts, c, gamma, delta):
    """(split s, each part's Map s, Reduce s) through the extension, one step at a time."""
    config = _kestrel.FitConfig("mrrsvm", partitions=parts, c=c, gamma=gamma, delta=delta)
    start = time.perf_counter()
    ids = _kestrel.mrrsvm_parts(config, X, y)
    split = time.perf_counter() - start
    blobs, seconds = [], []
    for p in range(parts):
        rows = ids == p
        start = time.perf_counter()
        blobs.append(_kestrel.mrrsvm_part(config, np.ascontiguousarray(X[rows]), y[rows]))
        seconds.append(time.perf_counter() - start)
    start = time.perf_counter()
    _kestrel.mrrsvm_reduce(config, blobs, X.shape[1])
    return split, seconds, time.perf_counter() - start


def table(name, rows):
    print(f"\n**{name}**\n")
    print("| method | training s | accuracy % | model |")
    print("|---|---:|---:|---|")
    for method, seconds, accuracy, model in rows:
        print(f"| {method} | {seconds:.2f} | {accuracy:.2f} | {model} |")


def compare(name, train, test, tmp, c=None, gamma=None, libsvm_train=None, libsvm_note="", fixed=()):
    """The table of `name`; `fixed`: flags every kestrel kernel method takes (else auto)."""
    rows = []
    accuracy, seconds, summary = kestrel_train("svm", train, test, os.path.join(tmp, "svm.kestrel"))
    rows.append(("kestrel svm (linear, DCD)", seconds, accuracy, "linear"))
    accuracy, seconds = liblinear(train, test, tmp)
    rows.append(("LIBLINEAR -s 1 (linear)", seconds, accuracy, "linear"))
    accuracy, seconds, summary = kestrel_train("rsvm", train, test, os.path.join(tmp, "rsvm.kestrel"), *fixed)
    chosen = summary.get("chosen", {})
    how = "given settings" if fixed else "auto"
    rows.append((f"kestrel rsvm (one machine, {how})", seconds, accuracy, f"{summary['centers']} centres"))
    rsvm_accuracy = accuracy
    c = c if c is not None else chosen.get("c", 1.0)
    gamma = gamma if gamma is not None else chosen.get("gamma", 1.0)
    accuracy, seconds, sv = libsvm(libsvm_train or train, test, c, gamma, tmp)
    rows.append((f"LIBSVM (C = {c:.3g}, γ = {gamma:.3g}){libsvm_note}", seconds, accuracy, f"{sv} SVs"))
    for parts in PARTS:
        accuracy, seconds, summary = kestrel_train(
            "mrrsvm", train, test, os.path.join(tmp, "mr.kestrel"), "--partitions", str(parts), *fixed
        )
        gap = accuracy - rsvm_accuracy
        rows.append((f"kestrel mrrsvm P = {parts} ({gap:+.2f} vs rsvm)", seconds, accuracy, f"{summary['centers']} centres"))
    table(name, rows)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--n", type=int, default=1_000_000)
    parser.add_argument("--libsvm-n", type=int, default=100_000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        X, y = waves(args.n, 1)
        X_test, y_test = waves(100_000, 2)
        train, test, sub = (os.path.join(tmp, f) for f in ("train.libsvm", "test.libsvm", "sub.libsvm"))
        write_libsvm(train, X, y)
        write_libsvm(test, X_test, y_test)
        write_libsvm(sub, X[: args.libsvm_n], y[: args.libsvm_n])
        pick = os.path.join(tmp, "pick.libsvm")
        write_libsvm(pick, X[:20_000], y[:20_000])
        _, _, summary = kestrel_train("rsvm", pick, test, os.path.join(tmp, "pick.kestrel"))
        c, gamma = summary["chosen"]["c"], summary["chosen"]["gamma"]
        print(f"Settings chosen by `kestrel train --learner rsvm` (auto) on the first 20,000 rows: "
              f"C = {c:.4g}, gamma = {gamma:.4g}; IRSVM threshold {DELTA}.")
        fixed = ("--c", repr(c), "--gamma", repr(gamma), "--delta", repr(DELTA))
        compare(f"waves, {args.n:,} training rows, 10^5 test rows", train, test, tmp, c, gamma, libsvm_train=sub,
                libsvm_note=f", first {args.libsvm_n:,} rows", fixed=fixed)
        print("\n**Per-part costs (seconds, one at a time) and the time P machines would take**\n")
        print("| P | split | Map per part (min–max) | Reduce | P machines: split + slowest part + reduce | this machine, measured |")
        print("|---:|---:|---|---:|---:|---:|")
        for parts in PARTS:
            split, seconds, reduce = per_part_costs(X, y, parts, c, gamma, DELTA)
            mr = os.path.join(tmp, "mr.kestrel")
            _, wall, _ = kestrel_train("mrrsvm", train, test, mr, "--partitions", str(parts), *fixed)
            print(f"| {parts} | {split:.2f} | {min(seconds):.2f}–{max(seconds):.2f} | {reduce:.3f} | "
                  f"{split + max(seconds) + reduce:.2f} | {wall:.2f} |")
        for name, (log_c, log_gamma) in SHARED.items():
            c = None if log_c is None else 2.0**log_c
            gamma = None if log_gamma is None else 2.0**log_gamma
            train, test = (os.path.join(DATA, name, f) for f in ("train.libsvm", "test.libsvm"))
            compare(name, train, test, tmp, c, gamma)


if __name__ == "__main__":
    main()
