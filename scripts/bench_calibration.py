#!/usr/bin/env python3
"""Class probabilities of the batch classifiers against LIBSVM's and LIBLINEAR's, in one
run on the shared sets: test accuracy, log loss and Brier score (both by scikit-learn's
functions on every tool's probabilities) and training time.

- kestrel `train --learner rsvm --probabilities` with its defaults (auto settings, no grid;
  the time includes that search) and at LIBSVM's settings, against LIBSVM `svm-train -b 1`
  at the C and γ the data README's grid chose (Platt's sigmoid on 5-fold cross-validated
  decision values, pairwise coupling beyond two classes; the time excludes the grid).
- kestrel `train --learner svm --probabilities` (linear SVM, C = 1) against LIBLINEAR's
  logistic regression `-s 0 -B 1` (C = 1), whose probabilities are its model's own.

Usage: python scripts/bench_calibration.py [--runs R]   (needs the release CLI and Debian's
libsvm-tools and liblinear-tools). Prints Markdown for BENCHMARKS.md; times are the median
of R runs (default 3), parsing included.
"""
import argparse
import os
import subprocess
import tempfile
import time

import numpy as np
from sklearn.metrics import brier_score_loss, log_loss

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DATA = os.path.join(ROOT, "..", "shared", "data")
KESTREL = os.path.join(ROOT, "target", "release", "kestrel")
# log2 C and log2 γ of the data README's grid (LIBSVM through scikit-learn's SVC).
LIBSVM_SETTINGS = {
    "breast_cancer": (6, -8),
    "digits3": (2, -6),
    "heart_scale": (6, -8),
    "phishing": (0, -4),
    "digits": (4, -8),
    "moons": (6, 0),
}


def path(name, part, ext):
    return os.path.join(DATA, name, f"{part}.{ext}")


def labels(name):
    return np.loadtxt(path(name, "test", "csv"), delimiter=",", skiprows=1)[:, -1]


def timed(command, runs):
    """The median seconds of `runs` runs of `command`."""
    seconds = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(command, check=True, capture_output=True)
        seconds.append(time.perf_counter() - start)
    return float(np.median(seconds))


def scores(y, classes, probabilities):
    """(accuracy %, log loss, Brier score) of `probabilities` (a column per class of
    `classes`) for labels `y`; the Brier score of two classes is of the second's."""
    predicted = np.asarray(classes)[np.argmax(probabilities, axis=1)]
    accuracy = 100 * float(np.mean(predicted == y))
    loss = log_loss(y, probabilities, labels=classes)
    if len(classes) == 2:
        brier = brier_score_loss(y == classes[1], probabilities[:, 1])
    else:
        onehot = (y[:, None] == np.asarray(classes)[None, :]).astype(float)
        brier = float(np.mean(np.sum((probabilities - onehot) ** 2, axis=1)))
    return accuracy, loss, brier


def kestrel(name, learner, workdir, runs, settings=()):
    model = os.path.join(workdir, f"{name}-{learner}.kestrel")
    train = [KESTREL, "train", "--input", path(name, "train", "csv"), "--learner", learner, "--probabilities",
             "--out", model, *settings]
    seconds = timed(train, runs)
    out = subprocess.run([KESTREL, "predict", "--model", model, "--input", path(name, "test", "csv"),
                          "--probabilities"], check=True, capture_output=True, text=True)
    classes = [float(c) for c in out.stderr.strip().split("in order: ")[1].split(", ")]
    rows = np.array([[float(v) for v in line.split(",")[1:]] for line in out.stdout.splitlines()])
    return scores(labels(name), *in_label_order(classes, rows)), seconds


def in_label_order(classes, rows):
    """The classes sorted, and the probability columns in their order (scikit-learn's
    metrics take the columns of sorted labels)."""
    order = np.argsort(classes)
    return [classes[i] for i in order], rows[:, order]


def predicted_file(lines):
    """The classes and probability rows of a `-b 1` prediction file (`labels a b …`),
    each row divided by its sum (the file rounds them to six digits)."""
    classes = [float(c) for c in lines[0].split()[1:]]
    rows = np.array([[float(v) for v in line.split()[1:]] for line in lines[1:]])
    return in_label_order(classes, rows / rows.sum(axis=1, keepdims=True))


def reference(name, tool, workdir, runs):
    model, output = os.path.join(workdir, f"{name}-{tool}.model"), os.path.join(workdir, f"{name}-{tool}.out")
    if tool == "libsvm":
        log_c, log_g = LIBSVM_SETTINGS[name]
        train = ["svm-train", "-q", "-b", "1", "-c", str(2.0**log_c), "-g", str(2.0**log_g)]
        predict = ["svm-predict", "-b", "1"]
    else:
        train = ["liblinear-train", "-q", "-s", "0", "-B", "1", "-c", "1"]
        predict = ["liblinear-predict", "-b", "1"]
    seconds = timed(train + [path(name, "train", "libsvm"), model], runs)
    subprocess.run(predict + [path(name, "test", "libsvm"), model, output], check=True, capture_output=True)
    with open(output) as f:
        classes, rows = predicted_file(f.read().splitlines())
    return scores(labels(name), classes, rows), seconds


def row(method, result):
    (accuracy, loss, brier), seconds = result
    return f"| {method} | {accuracy:.2f} | {loss:.4f} | {brier:.4f} | {seconds:.3f} |"


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=3)
    runs = parser.parse_args().runs
    with tempfile.TemporaryDirectory() as workdir:
        for name in LIBSVM_SETTINGS:
            log_c, log_g = LIBSVM_SETTINGS[name]
            print(f"\n**{name}**\n")
            print("| method | accuracy % | log loss | Brier | training s |")
            print("|---|---:|---:|---:|---:|")
            print(row("kestrel rsvm --probabilities (defaults)", kestrel(name, "rsvm", workdir, runs)))
            given = ("--c", str(2.0**log_c), "--gamma", str(2.0**log_g))
            print(row("kestrel rsvm --probabilities (LIBSVM's C, γ)", kestrel(name, "rsvm", workdir, runs, given)))
            print(row(f"LIBSVM -b 1 (C = 2^{log_c}, γ = 2^{log_g})", reference(name, "libsvm", workdir, runs)))
            print(row("kestrel svm --probabilities (linear, C = 1)", kestrel(name, "svm", workdir, runs)))
            print(row("LIBLINEAR -s 0 (logistic regression, C = 1)", reference(name, "liblinear", workdir, runs)))


if __name__ == "__main__":
    main()
