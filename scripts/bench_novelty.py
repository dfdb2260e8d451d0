#!/usr/bin/env python3
"""Kernel novelty detection (kestrel --learner novelty) against River's HalfSpaceTrees and
scikit-learn's OneClassSVM and IsolationForest, in one run: ROC AUC and rows per second.

1. One class normal (the shared multi-class sets, and River's bundled ImageSegments): for
   each class in turn, the detectors learn the training split's rows of that class, then
   score the test split, where that class is normal and every other class an anomaly;
   the AUC of the scores, averaged over the classes. Every method at its defaults:
   - kestrel train:  `kestrel train --learner novelty --scale` (the batch detector);
   - kestrel stream: `kestrel stream --learner novelty` over the normal training rows (the
     online detector; its model file scores the test split through `kestrel eval`);
   - River: `preprocessing.MinMaxScaler() | anomaly.HalfSpaceTrees(seed=42)`, learn_one
     over the normal rows, score_one on the test rows — with its default window of 250
     rows, more than a class has here (its scores then stay 0), and with a window of half
     the normal rows, so that it has a reference window to score against;
   - scikit-learn `OneClassSVM()` and `IsolationForest(random_state=0)` fitted on the
     standardised normal rows (StandardScaler fitted on them): the batch references.
2. A generated sensor stream with injected faults (--n rows, default 10^5; 8 channels of
   a machine whose vibration, temperature and currents follow a slowly changing load,
   with noise; 1 % of rows faulty: a spike on one channel, a stuck channel or a
   decorrelated pair), learned prequentially — each row scored, then learned:
   `kestrel stream --learner novelty` (CLI, rows from the file, scores from --output),
   the same detector from Python in River's loop (`kestrel.online.WindowNovelty`:
   score_one then learn_one on dicts) and River's HalfSpaceTrees in the same loop; OneClassSVM (fitted on 10^4 rows
   drawn from the stream) and IsolationForest (fitted on the whole stream) as references
   that see everything first. AUC over the rows after the first 1000; rows per second
   (kestrel: the whole process, parsing included), the fastest of --runs runs for kestrel's
   and River's prequential loops (kestrel's CLI and River's alternating).

Usage: target/python-venv/bin/python scripts/bench_novelty.py [--n 100000] [--runs 3]
Needs a release build of kestrel, the Python package (python/run-tests.sh builds it), river and
scikit-learn in the environment. Prints Markdown.
"""
import argparse
import json
import os
import subprocess
import tempfile
import time

import numpy as np
from river import anomaly, datasets, preprocessing
from sklearn.ensemble import IsolationForest
from sklearn.metrics import roc_auc_score
from sklearn.model_selection import train_test_split
from sklearn.preprocessing import StandardScaler
from sklearn.svm import OneClassSVM

from kestrel.online import WindowNovelty

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DATA = os.path.join(ROOT, "..", "shared", "data")
KESTREL = os.path.join(ROOT, "target", "release", "kestrel")
SETS = ("digits", "wine", "iris", "breast_cancer")
METHODS = ("kestrel train", "kestrel stream", "River HST", "River HST, window n/2", "OneClassSVM", "IsolationForest")


def run(cmd):
    return subprocess.run(cmd, check=True, capture_output=True, text=True).stdout


def load(name, split):
    data = np.loadtxt(os.path.join(DATA, name, f"{split}.csv"), delimiter=",", skiprows=1)
    return data[:, :-1], data[:, -1]


def image_segments():
    rows = list(datasets.ImageSegments())
    names = list(rows[0][0])
    X = np.array([[x[k] for k in names] for x, _ in rows])
    classes = sorted({y for _, y in rows})
    y = np.array([classes.index(label) for _, label in rows], dtype=float)
    X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.25, random_state=0, stratify=y)
    return (X_train, y_train), (X_test, y_test)


def write_csv(path, X, labels):
    header = ",".join(f"x{j}" for j in range(X.shape[1])) + ",label"
    np.savetxt(path, np.column_stack([X, labels]), delimiter=",", header=header, comments="", fmt="%.17g")


def kestrel_scores(model, test_path):
    lines = run([KESTREL, "predict", "--model", model, "--input", test_path]).split()
    return np.array([float(line.split(",")[0]) for line in lines])


def river_hst(window=250):
    return preprocessing.MinMaxScaler() | anomaly.HalfSpaceTrees(window_size=window, seed=42)


def river_scores(model, X_learn, X_score):
    names = [f"x{j}" for j in range(X_learn.shape[1])]
    for row in X_learn:
        model.learn_one(dict(zip(names, row)))
    return np.array([model.score_one(dict(zip(names, row))) for row in X_score])


def one_class(X_train, y_train, X_test, y_test, normal, tmp):
    """AUC of every method with class `normal` as normal (anomaly = positive)."""
    X_normal = X_train[y_train == normal]
    truth = (y_test != normal).astype(int)
    train_path, test_path = os.path.join(tmp, "normal.csv"), os.path.join(tmp, "test.csv")
    write_csv(train_path, X_normal, np.zeros(len(X_normal)))
    write_csv(test_path, X_test, truth)
    trained, streamed = os.path.join(tmp, "trained.kestrel"), os.path.join(tmp, "streamed.kestrel")
    run([KESTREL, "train", "--learner", "novelty", "--scale", "--input", train_path, "--out", trained])
    run([KESTREL, "stream", "--learner", "novelty", "--input", train_path, "--out", streamed, "--report-every", "0"])
    scaler = StandardScaler().fit(X_normal)
    S_normal, S_test = scaler.transform(X_normal), scaler.transform(X_test)
    scores = {
        "kestrel train": kestrel_scores(trained, test_path),
        "kestrel stream": kestrel_scores(streamed, test_path),
        "River HST": river_scores(river_hst(), X_normal, X_test),
        "River HST, window n/2": river_scores(river_hst(max(1, len(X_normal) // 2)), X_normal, X_test),
        "OneClassSVM": -OneClassSVM().fit(S_normal).decision_function(S_test),
        "IsolationForest": -IsolationForest(random_state=0).fit(S_normal).decision_function(S_test),
    }
    return {method: roc_auc_score(truth, s) for method, s in scores.items()}


def part_one(tmp):
    print("## One class normal: mean test AUC over the classes\n")
    print("| data set | classes | " + " | ".join(METHODS) + " |")
    print("|---|---|" + "---|" * len(METHODS))
    sets = [(name, load(name, "train"), load(name, "test")) for name in SETS]
    sets.append(("ImageSegments (River)", *image_segments()))
    for name, (X_train, y_train), (X_test, y_test) in sets:
        classes = np.unique(y_train)
        aucs = [one_class(X_train, y_train, X_test, y_test, c, tmp) for c in classes]
        means = [np.mean([a[m] for a in aucs]) for m in METHODS]
        print(f"| {name} | {len(classes)} | " + " | ".join(f"{v:.3f}" for v in means) + " |")
    print()


def sensor_stream(n, seed=1):
    """n rows of 8 channels, 1 % faulty; returns (X, is_fault)."""
    rng = np.random.default_rng(seed)
    t = np.arange(n)
    load = 0.5 + 0.3 * np.sin(2 * np.pi * t / 5000) + 0.1 * np.sin(2 * np.pi * t / 377)
    X = np.column_stack([
        2.0 * load + 0.1 * rng.normal(size=n),                 # vibration rms, g
        40 + 25 * load + 0.5 * rng.normal(size=n),             # temperature, °C
        10 * load + 0.2 * rng.normal(size=n),                  # phase currents, A
        10 * load + 0.2 * rng.normal(size=n),
        10 * load + 0.2 * rng.normal(size=n),
        1450 - 30 * load + 2 * rng.normal(size=n),             # speed, rpm
        1e5 + 500 * load + 50 * rng.normal(size=n),            # pressure, Pa
        0.02 * rng.normal(size=n),                             # offset, V
    ])
    fault = np.zeros(n, dtype=bool)
    rows = rng.choice(np.arange(1000, n), size=n // 100, replace=False)
    scale = X[:1000].std(axis=0)
    for i in rows:
        kind, j = rng.integers(3), rng.integers(8)
        if kind == 0:
            X[i, j] += rng.choice([-1, 1]) * 5 * scale[j]            # spike
        elif kind == 1:
            X[i, j] = X[i - 500, j]                                # stuck at an old value
        else:
            X[i, 2:5] = X[i, 2:5][[1, 2, 0]] * np.array([1.3, 0.7, 1.0])   # phases out of balance
        fault[i] = True
    return X, fault


def river_loop(detector, X):
    """River's prequential loop over the rows of X as dicts: score_one, then learn_one;
    the scores and the seconds it took."""
    names, scores = [f"x{j}" for j in range(X.shape[1])], np.empty(len(X))
    start = time.perf_counter()
    for i, row in enumerate(X):
        x = dict(zip(names, row))
        scores[i] = detector.score_one(x)
        detector.learn_one(x)
    return scores, time.perf_counter() - start


def fastest(outcomes):
    """The `(result, seconds)` of `outcomes` that took the fewest seconds (the results are
    the same each time)."""
    return min(outcomes, key=lambda outcome: outcome[1])


def kestrel_stream(path, out):
    """The summary of `kestrel stream --learner novelty` over `path` (scores to `out`) and
    the seconds its whole process took."""
    start = time.perf_counter()
    summary = json.loads(run([KESTREL, "stream", "--learner", "novelty", "--input", path, "--output", out,
                              "--report-every", "0", "--json"]).splitlines()[-1])
    return summary, time.perf_counter() - start


def part_two(n, runs, tmp):
    X, fault = sensor_stream(n)
    path, out = os.path.join(tmp, "sensor.csv"), os.path.join(tmp, "rows.txt")
    write_csv(path, X, fault.astype(int))
    # Alternating, so that a busy moment of the machine falls on either side.
    timings = [(kestrel_stream(path, out), river_loop(river_hst(), X)) for _ in range(runs)]
    summary, kestrel_seconds = fastest(k for k, _ in timings)
    river, river_seconds = fastest(r for _, r in timings)
    kestrel = np.array([float(line.split(",")[0]) for line in open(out)])
    python, python_seconds = fastest(river_loop(WindowNovelty(), X) for _ in range(runs))
    S = StandardScaler().fit_transform(X)
    sample = np.random.default_rng(0).choice(n, size=min(n, 10_000), replace=False)
    start = time.perf_counter()
    ocsvm = -OneClassSVM().fit(S[sample]).decision_function(S)
    ocsvm_seconds = time.perf_counter() - start
    start = time.perf_counter()
    forest = -IsolationForest(random_state=0).fit(S).decision_function(S)
    forest_seconds = time.perf_counter() - start
    late = slice(1000, n)
    auc = lambda s: roc_auc_score(fault[late], s[late])
    print(f"## Generated sensor stream: {n} rows, 8 channels, {fault.sum()} faults (1 %)\n")
    print("| method | protocol | AUC (rows after 1000) | rows/s | seconds |")
    print("|---|---|---|---|---|")
    print(f"| kestrel stream --learner novelty | prequential, CLI | {auc(kestrel):.3f} | {n / kestrel_seconds:,.0f} | {kestrel_seconds:.2f} |")
    print(f"| kestrel.online.WindowNovelty in River's loop | prequential, Python | {auc(python):.3f} | {n / python_seconds:,.0f} | {python_seconds:.2f} |")
    print(f"| River MinMaxScaler → HalfSpaceTrees | prequential | {auc(river):.3f} | {n / river_seconds:,.0f} | {river_seconds:.2f} |")
    print(f"| OneClassSVM (fit on 10^4 rows) | batch, sees all | {auc(ocsvm):.3f} | {n / ocsvm_seconds:,.0f} | {ocsvm_seconds:.2f} |")
    print(f"| IsolationForest | batch, sees all | {auc(forest):.3f} | {n / forest_seconds:,.0f} | {forest_seconds:.2f} |")
    print(f"\nkestrel: flagged {summary['flagged']} rows, precision {summary['precision']:.3f}, "
          f"recall {summary['recall']:.3f} at the default quantile 0.99; {summary['samples_per_sec']:,.0f} rows/s "
          f"in its loop (reading included, start-up not); throughput ratio (whole process) "
          f"{(n / kestrel_seconds) / (n / river_seconds):.1f}× River's.\n")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=3, help="rates: the fastest of this many runs (scores: the same)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        part_one(tmp)
        part_two(args.n, args.runs, tmp)


if __name__ == "__main__":
    main()
