#!/usr/bin/env python3
"""Settings without a grid: `kestrel train` with its defaults (auto gamma, C, centres,
lambda) against scikit-learn's GridSearchCV over SVC / KernelRidge, in one run.

Classification (rsvm and lssvm): GridSearchCV(SVC(kernel="rbf")), 5-fold, over the grid of
the data README (C in 2^{-2,0,...,10}, gamma in 2^{-10,-8,...,2}: 49 settings, 245 fits).
Regression (krr and slkl): GridSearchCV(KernelRidge(kernel="rbf")), 5-fold, alpha in
10^{-3..2}, gamma in 2^{-10,-8,...,2}, targets centred. Test score of the chosen model and wall time (for
kestrel: the whole process, parsing included; for scikit-learn: GridSearchCV.fit plus
the refit, data already in memory). Both single-threaded.

Usage: python3 scripts/bench_tune.py   (needs the release binary and scikit-learn)
Prints Markdown for BENCHMARKS.md.
"""
import json, os, subprocess, time

import numpy as np
from sklearn.kernel_ridge import KernelRidge
from sklearn.compose import TransformedTargetRegressor
from sklearn.model_selection import GridSearchCV
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVC

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DATA = os.path.join(ROOT, "..", "shared", "data")
KESTREL = os.path.join(ROOT, "target", "release", "kestrel")
CLASSIFICATION = ["breast_cancer", "digits3", "heart_scale", "phishing", "digits", "moons"]
REGRESSION = ["diabetes"]
GAMMAS = [2.0 ** k for k in range(-10, 3, 2)]


def load(name, part):
    data = np.loadtxt(os.path.join(DATA, name, f"{part}.csv"), delimiter=",", skiprows=1)
    return data[:, :-1], data[:, -1]


def kestrel(learner, name, model):
    train, test = (os.path.join(DATA, name, f"{p}.csv") for p in ("train", "test"))
    start = time.perf_counter()
    out = subprocess.run([KESTREL, "train", "--learner", learner, "--input", train, "--out", model, "--json"],
                         check=True, capture_output=True, text=True).stdout
    seconds = time.perf_counter() - start
    summary = json.loads(out)
    score = json.loads(subprocess.run([KESTREL, "eval", "--model", model, "--input", test, "--json"],
                                      check=True, capture_output=True, text=True).stdout)
    return score, seconds, summary


def grid(estimator, params, name):
    (x, y), (xt, yt) = load(name, "train"), load(name, "test")
    search = GridSearchCV(estimator, params, cv=5, n_jobs=1)
    start = time.perf_counter()
    search.fit(x, y)
    seconds = time.perf_counter() - start
    return search, seconds, xt, yt


def main():
    model = "/tmp/kestrel-bench-tune.kestrel"
    print("| set | GridSearchCV SVC: test acc. (C, γ) | time | kestrel rsvm defaults: test acc. (C, γ, centres) | time | time ratio | lssvm defaults: test acc. | time |")
    print("|---|---|---|---|---|---|---|---|")
    for name in CLASSIFICATION:
        search, grid_seconds, xt, yt = grid(SVC(kernel="rbf"), {"C": [2.0 ** k for k in range(-2, 11, 2)], "gamma": GAMMAS}, name)
        accuracy = 100 * search.score(xt, yt)
        best = search.best_params_
        score, seconds, summary = kestrel("rsvm", name, model)
        chosen = summary["chosen"]
        ls_score, ls_seconds, _ = kestrel("lssvm", name, model)
        print(f"| {name} | {accuracy:.2f} ({best['C']:g}, {best['gamma']:.4g}) | {grid_seconds:.2f} s "
              f"| {100 * score['accuracy']:.2f} ({chosen['c']:.3g}, {chosen['gamma']:.3g}, {summary['centers']}) "
              f"| {seconds:.2f} s | {grid_seconds / seconds:.0f}× | {100 * ls_score['accuracy']:.2f} | {ls_seconds:.2f} s |")
    print()
    print("| set | GridSearchCV KernelRidge: test MSE (α, γ) | time | kestrel krr defaults: test MSE (λ, γ, centres) | time | time ratio | slkl defaults: test MSE | time |")
    print("|---|---|---|---|---|---|---|---|")
    for name in REGRESSION:
        alphas = [10.0 ** k for k in range(-3, 3)]
        # KernelRidge has no intercept: the targets are centred, as in the data README.
        centred = TransformedTargetRegressor(KernelRidge(kernel="rbf"), transformer=StandardScaler(with_std=False))
        params = {"regressor__alpha": alphas, "regressor__gamma": GAMMAS}
        search, grid_seconds, xt, yt = grid(centred, params, name)
        mse = float(np.mean((search.predict(xt) - yt) ** 2))
        best = search.best_params_
        score, seconds, summary = kestrel("krr", name, model)
        chosen = summary["chosen"]
        sl_score, sl_seconds, _ = kestrel("slkl", name, model)
        print(f"| {name} | {mse:.0f} ({best['regressor__alpha']:g}, {best['regressor__gamma']:.4g}) | {grid_seconds:.2f} s "
              f"| {score['mse']:.0f} ({chosen['lambda']:.3g}, {chosen['gamma']:.3g}, {summary['centers']}) "
              f"| {seconds:.2f} s | {grid_seconds / seconds:.0f}× | {sl_score['mse']:.0f} | {sl_seconds:.2f} s |")


if __name__ == "__main__":
    main()
