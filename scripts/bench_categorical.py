#!/usr/bin/env python3
"""Columns of categories, in one run: `kestrel train --categorical` (its defaults, every
setting `auto`) against scikit-learn's `OneHotEncoder(handle_unknown="ignore")` in a
`ColumnTransformer` before `KernelRidge` searched by `GridSearchCV(cv=5)` (alpha 10^-3..1,
gamma 10^-4..1; targets centred) and before `SVR()` at its defaults, and against the
running mean; then classification with three columns of categories: River's synthetic
Agrawal stream (4,000 rows of functions 1, 2 and 5, seed 42; `elevel`, `car` and
`zipcode` as categories beside six numeric features in raw units), `kestrel train` with
no flag but the columns (the learner chosen from the labels: rsvm) and `--learner svm`,
against `OneHotEncoder` beside `StandardScaler` (the numeric columns) before `SVC()` and
`LinearSVC()` at their defaults.

Data: River's bundled solar-flare set (1,066 rows; three columns of categories — the
Zurich class, the largest spot's size, the spot distribution — and seven small integer
features), each of its three targets (C-, M- and X-class flares in the next 24 hours) in
turn, the other two left out; a 75 / 25 split (random_state 0). Test MSE and the whole
time of each side (kestrel's: its train process, parsing included).

Usage: python scripts/bench_categorical.py [--kestrel target/release/kestrel]
(in the venv python/run-tests.sh builds). Prints Markdown for BENCHMARKS.md.
"""
import argparse
import io
import subprocess
import tempfile
import time
import zipfile
from pathlib import Path

import numpy as np
import pandas as pd
import river
from sklearn.compose import make_column_transformer
from sklearn.kernel_ridge import KernelRidge
from sklearn.model_selection import GridSearchCV, train_test_split
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import OneHotEncoder, StandardScaler
from sklearn.svm import SVC, SVR, LinearSVC

CATEGORICAL = ["zurich-class", "largest-spot-size", "spot-distribution"]
TARGETS = ["c-class-flares", "m-class-flares", "x-class-flares"]
AGRAWAL_CATEGORICAL = ["elevel", "car", "zipcode"]


def solar_flare():
    path = Path(river.__file__).parent / "datasets" / "solar-flare.csv.zip"
    with zipfile.ZipFile(path) as archive:
        (name,) = archive.namelist()
        return pd.read_csv(io.BytesIO(archive.read(name)))


def kestrel_mse(binary, train, test, target, workdir):
    """Trains with every setting auto and scores the held-out rows: (MSE, seconds)."""
    train_csv, test_csv, model = (workdir / "train.csv", workdir / "test.csv", workdir / "model.kestrel")
    train.to_csv(train_csv, index=False)
    test.to_csv(test_csv, index=False)
    columns = ["--label-column", target] + [f for t in TARGETS if t != target for f in ("--skip-column", t)]
    categorical = [f for c in CATEGORICAL for f in ("--categorical", c)]
    start = time.perf_counter()
    subprocess.run(
        [binary, "train", "--learner", "krr", "--input", str(train_csv), "--out", str(model)] + columns + categorical,
        check=True,
        capture_output=True,
    )
    seconds = time.perf_counter() - start
    predicted = subprocess.run(
        [binary, "predict", "--model", str(model), "--input", str(test_csv)] + columns,
        check=True,
        capture_output=True,
        text=True,
    ).stdout.split()
    return float(np.mean((np.array(predicted, dtype=float) - test[target].to_numpy()) ** 2)), seconds


def sklearn_mse(make, train, test, target):
    """Fits `make()` on the one-hot encoded rows, targets centred: (MSE, seconds)."""
    features = [c for c in train.columns if c not in TARGETS]
    y = train[target].to_numpy(dtype=float)
    encoder = make_column_transformer((OneHotEncoder(handle_unknown="ignore"), CATEGORICAL), remainder="passthrough")
    start = time.perf_counter()
    model = make_pipeline(encoder, make()).fit(train[features], y - y.mean())
    seconds = time.perf_counter() - start
    predicted = model.predict(test[features]) + y.mean()
    return float(np.mean((predicted - test[target].to_numpy()) ** 2)), seconds


def agrawal(function):
    """4,000 rows of River's Agrawal stream (classification function `function`, seed 42)."""
    import itertools

    from river.datasets import synth

    rows = itertools.islice(synth.Agrawal(classification_function=function, seed=42), 4000)
    return pd.DataFrame([{**x, "y": int(y)} for x, y in rows])


def kestrel_accuracy(binary, train, test, flags, workdir):
    """Trains with `flags` and the columns of categories: (test accuracy %, seconds)."""
    train_csv, test_csv, model = (workdir / "train.csv", workdir / "test.csv", workdir / "model.kestrel")
    train.to_csv(train_csv, index=False)
    test.to_csv(test_csv, index=False)
    categorical = [f for c in AGRAWAL_CATEGORICAL for f in ("--categorical", c)]
    start = time.perf_counter()
    subprocess.run(
        [binary, "train", "--input", str(train_csv), "--out", str(model)] + flags + categorical,
        check=True,
        capture_output=True,
    )
    seconds = time.perf_counter() - start
    predicted = subprocess.run(
        [binary, "predict", "--model", str(model), "--input", str(test_csv)], check=True, capture_output=True, text=True
    ).stdout.split()
    return 100 * float(np.mean(np.array(predicted, dtype=float) == test["y"].to_numpy())), seconds


def sklearn_accuracy(make, train, test):
    """Fits `make()` on the one-hot encoded categories beside the standardised numeric
    columns: (test accuracy %, seconds)."""
    features = [c for c in train.columns if c != "y"]
    numeric = [c for c in features if c not in AGRAWAL_CATEGORICAL]
    encoder = make_column_transformer(
        (OneHotEncoder(handle_unknown="ignore"), AGRAWAL_CATEGORICAL), (StandardScaler(), numeric)
    )
    start = time.perf_counter()
    model = make_pipeline(encoder, make()).fit(train[features], train["y"])
    seconds = time.perf_counter() - start
    return 100 * float(np.mean(model.predict(test[features]) == test["y"].to_numpy())), seconds


def classification(binary):
    methods = [("OneHotEncoder + StandardScaler + SVC()", SVC), ("OneHotEncoder + StandardScaler + LinearSVC()", LinearSVC)]
    print("\nRiver Agrawal, 4,000 rows (3,000 training, 1,000 test), three columns of categories\n")
    print("| function | method | test accuracy % | seconds |")
    print("|---|---|---:|---:|")
    with tempfile.TemporaryDirectory() as workdir:
        for function in (1, 2, 5):
            train, test = train_test_split(agrawal(function), test_size=0.25, random_state=0)
            for flags, name in (([], "kestrel train --categorical …"), (["--learner", "svm"], "kestrel train --learner svm --categorical …")):
                accuracy, seconds = kestrel_accuracy(binary, train, test, flags, Path(workdir))
                print(f"| {function} | {name} | {accuracy:.2f} | {seconds:.2f} |")
            for name, make in methods:
                accuracy, seconds = sklearn_accuracy(make, train, test)
                print(f"| {function} | {name} | {accuracy:.2f} | {seconds:.2f} |")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--kestrel", default="target/release/kestrel")
    binary = parser.parse_args().kestrel
    data = solar_flare()
    train, test = train_test_split(data, test_size=0.25, random_state=0)
    grid = {"alpha": [1e-3, 1e-2, 1e-1, 1.0], "gamma": [1e-4, 1e-3, 1e-2, 1e-1, 1.0]}
    methods = [
        ("OneHotEncoder + GridSearchCV(KernelRidge)", lambda: GridSearchCV(KernelRidge(kernel="rbf"), grid, cv=5)),
        ("OneHotEncoder + SVR()", SVR),
    ]
    print(f"River solar-flare: {len(train)} training rows, {len(test)} test rows\n")
    print("| target | method | test MSE | seconds |")
    print("|---|---|---:|---:|")
    with tempfile.TemporaryDirectory() as workdir:
        for target in TARGETS:
            mse, seconds = kestrel_mse(binary, train, test, target, Path(workdir))
            print(f"| {target} | kestrel train --learner krr --categorical … | {mse:.4f} | {seconds:.2f} |")
            for name, make in methods:
                mse, seconds = sklearn_mse(make, train, test, target)
                print(f"| {target} | {name} | {mse:.4f} | {seconds:.2f} |")
            mean = float(np.mean((train[target].mean() - test[target]) ** 2))
            print(f"| {target} | the training rows' mean | {mean:.4f} | — |")
    classification(binary)


if __name__ == "__main__":
    main()
