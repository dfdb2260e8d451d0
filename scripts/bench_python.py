#!/usr/bin/env python3
"""The Python package against scikit-learn, in one run: fit and predict time and test
score of kestrel's estimators with their defaults (no grid) beside scikit-learn's exact
kernel machines (SVC, KernelRidge) at the settings GridSearchCV chose on the shared sets'
README grid, and beside scikit-learn's own reduced form, Nystroem(256 components) +
LinearSVC / Ridge at the same settings. Then 10^5 points (make_moons, make_friedman1),
where the exact machines are the slowest; and the cost of calling from Python against
running the CLI on the same rows.

Every fit is single-threaded, data in memory (the CLI's row parses its CSV file).

Usage: python scripts/bench_python.py   (in the venv python/run-tests.sh builds; needs the
release CLI). Prints Markdown for BENCHMARKS.md.
"""
import os
import subprocess
import tempfile
import time

import numpy as np
from sklearn.datasets import make_friedman1, make_moons
from sklearn.kernel_approximation import Nystroem
from sklearn.kernel_ridge import KernelRidge
from sklearn.linear_model import Ridge
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import make_pipeline
from sklearn.svm import SVC, LinearSVC

import kestrel

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DATA = os.path.join(ROOT, "..", "shared", "data")
KESTREL = os.path.join(ROOT, "target", "release", "kestrel")
CLASSIFICATION = ["breast_cancer", "digits3", "heart_scale", "phishing", "digits", "moons"]
GAMMAS = [2.0**k for k in range(-10, 3, 2)]
COSTS = [2.0**k for k in range(-2, 11, 2)]
ALPHAS = [10.0**k for k in range(-3, 3)]


def load(name, part):
    data = np.loadtxt(os.path.join(DATA, name, f"{part}.csv"), delimiter=",", skiprows=1)
    return data[:, :-1], data[:, -1]


def timed(estimator, X, y, Xt, yt, regression=False):
    """(test score — accuracy in %, or MSE for a regression — fit seconds, predict
    seconds) of `estimator`."""
    start = time.perf_counter()
    estimator.fit(X, y)
    fit = time.perf_counter() - start
    start = time.perf_counter()
    predictions = estimator.predict(Xt)
    predict = time.perf_counter() - start
    if regression:
        score = float(np.mean((predictions - yt) ** 2))
    else:
        score = 100 * float(np.mean(predictions == yt))
    return score, fit, predict


def cells(result, fmt):
    score, fit, predict = result
    return [fmt(score), f"{fit:.3f} s", f"{predict:.3f} s"]


def classification():
    print("| set (n train) | kestrel ReducedKernelSVC() | fit | predict | SVC(best C, γ) | fit | predict "
          "| Nystroem(256)+LinearSVC(best C, γ) | fit | predict | fit ratio SVC / kestrel |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for name in CLASSIFICATION:
        X, y = load(name, "train")
        Xt, yt = load(name, "test")
        best = GridSearchCV(SVC(), {"C": COSTS, "gamma": GAMMAS}, cv=5).fit(X, y).best_params_
        ours = timed(kestrel.ReducedKernelSVC(), X, y, Xt, yt)
        exact = timed(SVC(**best), X, y, Xt, yt)
        nystroem = make_pipeline(Nystroem(gamma=best["gamma"], n_components=256, random_state=0), LinearSVC(C=best["C"]))
        reduced = timed(nystroem, X, y, Xt, yt)
        fmt = lambda v: f"{v:.2f} %"
        print("| " + " | ".join([f"{name} ({len(X)})", *cells(ours, fmt), *cells(exact, fmt), *cells(reduced, fmt),
                                 f"{exact[1] / ours[1]:.2f}×"]) + " |")


def regression():
    print("| set (n train) | kestrel KernelRidgeNystrom(): MSE | fit | predict | KernelRidge(best α, γ) | fit | predict "
          "| Nystroem(256)+Ridge(best α, γ) | fit | predict | fit ratio KernelRidge / kestrel |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    X, y = load("diabetes", "train")
    Xt, yt = load("diabetes", "test")
    mean = y.mean()
    best = GridSearchCV(KernelRidge(kernel="rbf"), {"alpha": ALPHAS, "gamma": GAMMAS}, cv=5).fit(X, y - mean).best_params_
    ours = timed(kestrel.KernelRidgeNystrom(), X, y, Xt, yt, regression=True)
    exact = timed(KernelRidge(kernel="rbf", **best), X, y - mean, Xt, yt - mean, regression=True)
    nystroem = make_pipeline(Nystroem(gamma=best["gamma"], n_components=256, random_state=0), Ridge(alpha=best["alpha"]))
    reduced = timed(nystroem, X, y, Xt, yt, regression=True)
    fmt = lambda v: f"{v:.0f}"
    print("| " + " | ".join([f"diabetes ({len(X)})", *cells(ours, fmt), *cells(exact, fmt), *cells(reduced, fmt),
                             f"{exact[1] / ours[1]:.2f}×"]) + " |")


def large():
    print("| 10⁵ points (8·10⁴ train) | kestrel | fit | predict | scikit-learn exact | fit | predict "
          "| Nystroem(256) + linear | fit | predict |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    X, y = make_moons(100_000, noise=0.25, random_state=11)
    split = 80_000
    args = (X[:split], y[:split], X[split:], y[split:])
    ours = timed(kestrel.ReducedKernelSVC(), *args)
    exact = timed(SVC(C=1.0, gamma=1.0), *args)
    reduced = timed(make_pipeline(Nystroem(gamma=1.0, n_components=256, random_state=0), LinearSVC(C=1.0)), *args)
    fmt = lambda v: f"{v:.2f} %"
    print("| " + " | ".join(["make_moons, accuracy: ReducedKernelSVC() / SVC(C=1, γ=1)", *cells(ours, fmt),
                             *cells(exact, fmt), *cells(reduced, fmt)]) + " |")
    X, y = make_friedman1(100_000, noise=1.0, random_state=0)
    args = (X[:split], y[:split], X[split:], y[split:])
    ours = timed(kestrel.KernelRidgeNystrom(), *args, regression=True)
    nystroem = make_pipeline(Nystroem(gamma=1 / 16, n_components=256, random_state=0), Ridge(alpha=1e-3))
    reduced = timed(nystroem, *args, regression=True)
    fmt = lambda v: f"{v:.3f}"
    print("| " + " | ".join(["make_friedman1, MSE: KernelRidgeNystrom() / KernelRidge (n² memory: 51 GB, not run)",
                             *cells(ours, fmt), "–", "–", "–", *cells(reduced, fmt)]) + " |")


def overhead():
    """The same fit from Python (arrays in memory) and from the CLI (CSV parsed)."""
    X, y = make_moons(20_000, noise=0.25, random_state=11)
    with tempfile.TemporaryDirectory() as directory:
        path = os.path.join(directory, "moons.csv")
        np.savetxt(path, np.column_stack([X, y]), delimiter=",", header="x0,x1,y", comments="", fmt="%.17g")
        model = os.path.join(directory, "m.kestrel")
        settings = ["--gamma", "1", "--c", "1", "--delta", "0.0005", "--centers", "256"]
        start = time.perf_counter()
        subprocess.run([KESTREL, "train", "--learner", "rsvm", "--input", path, "--out", model, *settings],
                       check=True, capture_output=True)
        cli = time.perf_counter() - start
        start = time.perf_counter()
        fitted = kestrel.ReducedKernelSVC(C=1.0, gamma=1.0, delta=0.0005, n_centres=256).fit(X, y)
        python = time.perf_counter() - start
        same = fitted.to_bytes() == open(model, "rb").read()
    print(f"| rsvm, C = 1, γ = 1, 256 centres, make_moons 2·10⁴ | CLI (parsing a CSV) {cli:.3f} s "
          f"| Python (arrays) {python:.3f} s | Python / CLI {python / cli:.2f} | same model bytes: {same} |")


if __name__ == "__main__":
    classification()
    print()
    regression()
    print()
    large()
    print()
    overhead()
