#!/usr/bin/env python3
"""The C library's multi-class learner (`kestrel_multiclass`, one windowed SVM per class, in
caller memory, f32) on River's multi-class streams, against River's learners and `kestrel
stream --learner svm` in the same run: prequential accuracy and log loss (every row
predicted, scored, then learned), the device's work bytes and rows per second.

Streams: River's ImageSegments (2,310 rows, 18 features, 7 classes) and the first 5,000 rows
of its synthetic Waveform (21 features, 3 classes) and LED (7 segments, 10 % noise, 10
classes), seeds fixed (as scripts/bench_online.py writes them), the classes numbered in
order of first appearance. The C harness (scripts/device/multiclass_stream.c) is compiled
with gcc -O2 against the host build of libkestrel_ffi.a and run at windows 64 and 256 (the
stream's default), its features standardised online by a kestrel_scaler. River: its
LogisticRegression one-vs-rest behind a StandardScaler, KNNClassifier, ARFClassifier
(seed 42), predict_proba_one scored as kestrel's (10⁻¹⁵ at least).

Usage:
    python3 -m venv .venv && .venv/bin/pip install river
    .venv/bin/python scripts/bench_device_multiclass.py [--skip-build]
Prints a Markdown table for BENCHMARKS.md.
"""
import argparse
import json
import math
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_online import KESTREL, OUT, ROOT, first, write_csv  # noqa: E402

HARNESS = os.path.join(ROOT, "target", "bench-device", "multiclass_stream")
WINDOWS = (64, 256)


def streams():
    from river import datasets
    from river.datasets import synth

    return [
        ("ImageSegments", list(datasets.ImageSegments())),
        ("Waveform", first(synth.Waveform(seed=1))),
        ("LED", first(synth.LED(seed=1, noise_percentage=0.1))),
    ]


def build():
    subprocess.run(["cargo", "build", "--release", "-p", "kestrel-ffi", "-p", "kestrel-stream"], cwd=ROOT, check=True)
    os.makedirs(os.path.dirname(HARNESS), exist_ok=True)
    subprocess.run(
        ["gcc", "-O2", "-std=c11", "-I", os.path.join(ROOT, "ffi", "include"),
         os.path.join(ROOT, "scripts", "device", "multiclass_stream.c"),
         os.path.join(ROOT, "target", "release", "libkestrel_ffi.a"), "-lm", "-lpthread", "-ldl", "-o", HARNESS],
        check=True,
    )


def indexed_csv(name, rows):
    """The rows with their classes numbered 0, 1, … in order of first appearance (the C
    learner's labels), written beside the named stream's CSV; the path and the classes."""
    classes = []
    for _, y in rows:
        if y not in classes:
            classes.append(y)
    path = os.path.join(OUT, f"{name}-indexed.csv")
    write_csv(path, [(x, classes.index(y)) for x, y in rows])
    return path, len(classes)


def river(make, rows):
    """Accuracy, log loss and rows per second of a River learner, prequentially."""
    model, right, loss = make(), 0, 0.0
    start = time.perf_counter()
    for x, y in rows:
        p = model.predict_proba_one(x)
        right += model.predict_one(x) == y
        loss -= math.log(max(p.get(y, 0.0), 1e-15))
        model.learn_one(x, y)
    return right / len(rows), loss / len(rows), len(rows) / (time.perf_counter() - start)


def main():
    from river import forest, linear_model, multiclass, neighbors, preprocessing

    parser = argparse.ArgumentParser()
    parser.add_argument("--skip-build", action="store_true")
    args = parser.parse_args()
    if not args.skip_build:
        build()
    os.makedirs(OUT, exist_ok=True)
    learners = [
        ("River LogisticRegression (one-vs-rest)",
         lambda: preprocessing.StandardScaler() | multiclass.OneVsRestClassifier(linear_model.LogisticRegression())),
        ("River KNNClassifier", neighbors.KNNClassifier),
        ("River ARFClassifier", lambda: forest.ARFClassifier(seed=42)),
    ]
    print("| stream | learner | accuracy | log loss | memory | rows/s |")
    print("| --- | --- | ---: | ---: | --- | ---: |")
    for name, rows in streams():
        for label, make in learners:
            accuracy, loss, rate = river(make, rows)
            print(f"| {name} | {label} | {accuracy:.4f} | {loss:.4f} | | {rate:,.0f} |")
        named = os.path.join(OUT, f"{name}.csv")
        write_csv(named, rows)
        run = subprocess.run([KESTREL, "stream", "--learner", "svm", "--input", named], capture_output=True, text=True)
        summary = json.loads(run.stdout.strip().splitlines()[-1])
        print(f"| {name} | `kestrel stream --learner svm` (host, f64) | {summary['accuracy']:.4f} | "
              f"{summary['log_loss']:.4f} | | {summary['samples_per_sec']:,.0f} |")
        path, classes = indexed_csv(name, rows)
        for window in WINDOWS:
            out = subprocess.run([HARNESS, path, str(classes), str(window)], capture_output=True, text=True, check=True)
            r = json.loads(out.stdout)
            memory = f"{r['work_bytes']:,} + {r['scaler_work_bytes']:,} B"
            print(f"| {name} | `kestrel_multiclass`, window {window} (f32) | {r['accuracy']:.4f} | "
                  f"{r['log_loss']:.4f} | {memory} | {r['rows_per_sec']:,.0f} |")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
