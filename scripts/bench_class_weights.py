#!/usr/bin/env python3
"""A rare class, in one run: the reduced-kernel SVM with its defaults, unweighted and with
`class_weight="balanced"`, beside scikit-learn's SVC (its defaults, C = 1 and
gamma = "scale") unweighted and balanced. Balanced accuracy (the mean of the classes'
recalls), the rare class's F1 and fit time, on held-out halves (stratified) of:

- make_classification with 10 %, 3 % and 1 % of the rows in the rare class (two clusters a
  class, 1 % of the labels flipped);
- River's bundled shuttle (49,097 rows of 9 raw features, 7 % anomalies), a third of it
  to train, standardised (SVC needs it; kestrel gets the same rows).

Every fit is single-threaded, data in memory.

Usage: python scripts/bench_class_weights.py   (in the venv python/run-tests.sh builds).
Prints Markdown for BENCHMARKS.md.
"""
import gzip
import time
from pathlib import Path

import numpy as np
import river
from sklearn.datasets import make_classification
from sklearn.metrics import balanced_accuracy_score, f1_score
from sklearn.model_selection import train_test_split
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVC

import kestrel


def synthetic(rare):
    X, y = make_classification(
        n_samples=6000, n_features=10, n_informative=5, weights=[1 - rare], flip_y=0.01, class_sep=0.8, random_state=1
    )
    return train_test_split(X, y, test_size=0.5, random_state=0, stratify=y)


def shuttle():
    path = Path(river.__file__).parent / "datasets" / "shuttle.csv.gz"
    with gzip.open(path, "rt") as f:
        data = np.loadtxt(f, delimiter=",", skiprows=1)
    X, y = data[:, :-1], data[:, -1].astype(int)
    X_train, X_test, y_train, y_test = train_test_split(X, y, train_size=1 / 3, random_state=0, stratify=y)
    scaler = StandardScaler().fit(X_train)
    return scaler.transform(X_train), scaler.transform(X_test), y_train, y_test


METHODS = [
    ("kestrel ReducedKernelSVC()", lambda: kestrel.ReducedKernelSVC()),
    ('kestrel ReducedKernelSVC(class_weight="balanced")', lambda: kestrel.ReducedKernelSVC(class_weight="balanced")),
    ("SVC()", lambda: SVC()),
    ('SVC(class_weight="balanced")', lambda: SVC(class_weight="balanced")),
]


def main():
    sets = [(f"make_classification, {r:.0%} rare", lambda r=r: synthetic(r)) for r in (0.10, 0.03, 0.01)]
    sets.append(("River shuttle, 7 % anomalies", shuttle))
    print("| set (n train, rare rows) | method | balanced accuracy | rare class F1 | fit s |")
    print("|---|---|---:|---:|---:|")
    for name, load in sets:
        X_train, X_test, y_train, y_test = load()
        label = f"{name} ({len(y_train)}, {int(y_train.sum())})"
        for method, make in METHODS:
            model = make()
            start = time.perf_counter()
            model.fit(X_train, y_train)
            seconds = time.perf_counter() - start
            predicted = model.predict(X_test)
            balanced = balanced_accuracy_score(y_test, predicted)
            f1 = f1_score(y_test, predicted)
            print(f"| {label} | {method} | {balanced:.4f} | {f1:.4f} | {seconds:.2f} |", flush=True)


if __name__ == "__main__":
    main()
