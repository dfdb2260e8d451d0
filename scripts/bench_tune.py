#!/usr/bin/env python3
"""Settings without a hand-made grid: `kestrel tune` over the same grid as scikit-learn's
GridSearchCV, and `kestrel train` with no flag at all, in one run.

Classification (rsvm): GridSearchCV(SVC(kernel="rbf")), 5-fold, over the grid of the data
README (C in 2^{-2,0,...,10}, gamma in 2^{-10,-8,...,2}: 49 settings, 245 fits), against
`kestrel tune --learner rsvm --gamma-grid <same> --c-grid <same>` (exact leave-one-out of
the least-squares SVM on 256 Nystrom centres per width) and `kestrel train --learner rsvm`.
Regression (krr): GridSearchCV(KernelRidge(kernel="rbf")), 5-fold, alpha in 10^{-3..2},
the same gammas, targets centred, against `kestrel tune --learner krr` over the same grid
and `kestrel train --learner krr`. The 2*10^4-point regression (make_friedman1, 15000
train / 5000 test) is past what KernelRidge can fit 210 times here (one fit is an
n x n solve, 1.8 GB): there scikit-learn's own reduced form, Nystroem(256) + Ridge, is
searched instead.

Test score of the chosen model and wall time: for kestrel the whole process (parsing
included) plus, for tune, the model it writes; for scikit-learn GridSearchCV.fit with the
refit, data already in memory. Both single-threaded.

The polynomial kernel's defaults (`python3 scripts/bench_tune.py poly`, that table alone):
`kestrel train --learner rsvm --kernel poly --degree 2 --coef0 C0` against GridSearchCV over
SVC(kernel="poly", degree=2, coef0=C0) with the same C grid and gamma in 2^{-10,-8,-6,-4,-2}
(libsvm's SMO crawls at the two largest), C0 = 0 and 1.

Usage: python3 scripts/bench_tune.py [poly]   (needs the release binary and scikit-learn)
Prints Markdown for BENCHMARKS.md.
"""
import json, os, subprocess, sys, tempfile, time

import numpy as np
from sklearn.compose import TransformedTargetRegressor
from sklearn.datasets import make_friedman1
from sklearn.kernel_approximation import Nystroem
from sklearn.kernel_ridge import KernelRidge
from sklearn.linear_model import Ridge
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVC

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DATA = os.path.join(ROOT, "..", "shared", "data")
KESTREL = os.path.join(ROOT, "target", "release", "kestrel")
CLASSIFICATION = ["breast_cancer", "digits3", "heart_scale", "phishing", "digits", "moons"]
GAMMAS = [2.0 ** k for k in range(-10, 3, 2)]
COSTS = [2.0 ** k for k in range(-2, 11, 2)]
ALPHAS = [10.0 ** k for k in range(-3, 3)]
# The polynomial's widths: the grid's two largest left out, where libsvm's SMO crawls (SVC
# poly on phishing at gamma 1, C 256: 27 s a fit; the whole grid did not end in 90 min).
POLY_GAMMAS = GAMMAS[:-2]


def csv_list(values):
    return ",".join(f"{v:g}" for v in values)


def load(path):
    data = np.loadtxt(path, delimiter=",", skiprows=1)
    return data[:, :-1], data[:, -1]


def kestrel(args, train, test, model):
    """Runs `kestrel ARGS --input train --out model --json`, then evaluates on test."""
    start = time.perf_counter()
    out = subprocess.run([KESTREL, *args, "--input", train, "--out", model, "--json"],
                         check=True, capture_output=True, text=True).stdout
    seconds = time.perf_counter() - start
    score = json.loads(subprocess.run([KESTREL, "eval", "--model", model, "--input", test, "--json"],
                                      check=True, capture_output=True, text=True).stdout)
    return score, seconds, json.loads(out)


def grid(estimator, params, train):
    x, y = load(train)
    search = GridSearchCV(estimator, params, cv=5, n_jobs=1)
    start = time.perf_counter()
    search.fit(x, y)
    return search, time.perf_counter() - start


def row(name, reference, tuned, defaults, fmt):
    """One table row: the reference search, kestrel tune, kestrel train's defaults."""
    (ref_score, ref_params, ref_seconds) = reference
    cells = [name, f"{fmt(ref_score)} ({ref_params})", f"{ref_seconds:.2f} s"]
    for score, params, seconds in (tuned, defaults):
        cells += [f"{fmt(score)} ({params})", f"{seconds:.2f} s", f"{ref_seconds / seconds:.0f}×"]
    return "| " + " | ".join(cells) + " |"


def classification(model):
    print("| set | GridSearchCV SVC: test acc. (C, γ) | time | kestrel tune, same grid: test acc. (C, γ) | time | ratio "
          "| kestrel train defaults: test acc. (C, γ, centres) | time | ratio |")
    print("|---|---|---|---|---|---|---|---|---|")
    for name in CLASSIFICATION:
        train, test = (os.path.join(DATA, name, f"{p}.csv") for p in ("train", "test"))
        search, seconds = grid(SVC(kernel="rbf"), {"C": COSTS, "gamma": GAMMAS}, train)
        xt, yt = load(test)
        best = search.best_params_
        reference = (100 * search.score(xt, yt), f"{best['C']:g}, {best['gamma']:.4g}", seconds)
        grid_args = ["--gamma-grid", csv_list(GAMMAS), "--c-grid", csv_list(COSTS)]
        score, t_seconds, summary = kestrel(["tune", "--learner", "rsvm", *grid_args], train, test, model)
        chosen = summary["best"]
        tuned = (100 * score["accuracy"], f"{chosen['c']:g}, {chosen['gamma']:.4g}", t_seconds)
        score, d_seconds, summary = kestrel(["train", "--learner", "rsvm"], train, test, model)
        chosen = summary["chosen"]
        defaults = (100 * score["accuracy"], f"{chosen['c']:.3g}, {chosen['gamma']:.3g}, {summary['centers']}", d_seconds)
        print(row(name, reference, tuned, defaults, lambda v: f"{v:.2f}"))


def friedman(directory):
    """make_friedman1, 2*10^4 points, written as train/test CSV files."""
    x, y = make_friedman1(n_samples=20000, noise=1.0, random_state=0)
    paths = []
    for part, rows in (("train", slice(0, 15000)), ("test", slice(15000, 20000))):
        path = os.path.join(directory, f"friedman_{part}.csv")
        header = ",".join([f"x{j}" for j in range(x.shape[1])] + ["y"])
        np.savetxt(path, np.column_stack([x[rows], y[rows]]), delimiter=",", header=header, comments="")
        paths.append(path)
    return paths


def regression(model, directory):
    print("| set | scikit-learn search: test MSE (α, γ) | time | kestrel tune, same grid: test MSE (λ, γ) | time | ratio "
          "| kestrel train defaults: test MSE (λ, γ, centres) | time | ratio |")
    print("|---|---|---|---|---|---|---|---|---|")
    sets = [("diabetes", *(os.path.join(DATA, "diabetes", f"{p}.csv") for p in ("train", "test")))]
    sets.append(("friedman1 (2·10⁴)", *friedman(directory)))
    for name, train, test in sets:
        if name == "diabetes":
            # KernelRidge has no intercept: the targets are centred, as in the data README.
            estimator = TransformedTargetRegressor(KernelRidge(kernel="rbf"), transformer=StandardScaler(with_std=False))
            params = {"regressor__alpha": ALPHAS, "regressor__gamma": GAMMAS}
            label = "KernelRidge"
        else:
            estimator = make_pipeline(Nystroem(n_components=256, random_state=0), Ridge())
            params = {"ridge__alpha": ALPHAS, "nystroem__gamma": GAMMAS}
            label = "Nystroem(256)+Ridge"
        search, seconds = grid(estimator, params, train)
        xt, yt = load(test)
        mse = float(np.mean((search.predict(xt) - yt) ** 2))
        best = search.best_params_
        alpha, gamma = (next(v for k, v in best.items() if k.endswith(end)) for end in ("alpha", "gamma"))
        reference = (mse, f"{label}: {alpha:g}, {gamma:.4g}", seconds)
        grid_args = ["--gamma-grid", csv_list(GAMMAS), "--lambda-grid", csv_list(ALPHAS)]
        score, t_seconds, summary = kestrel(["tune", "--learner", "krr", *grid_args], train, test, model)
        chosen = summary["best"]
        tuned = (score["mse"], f"{chosen['lambda']:g}, {chosen['gamma']:.4g}", t_seconds)
        score, d_seconds, summary = kestrel(["train", "--learner", "krr"], train, test, model)
        chosen = summary["chosen"]
        defaults = (score["mse"], f"{chosen['lambda']:.3g}, {chosen['gamma']:.3g}, {summary['centers']}", d_seconds)
        print(row(name, reference, tuned, defaults, lambda v: f"{v:.4g}"))


def polynomial(model):
    """The polynomial kernel's defaults: `kestrel train --learner rsvm --kernel poly
    --degree 2 --coef0 C0` (gamma auto: the median heuristic's octaves by leave-one-out)
    against GridSearchCV over SVC(kernel="poly", degree=2, coef0=C0), C and POLY_GAMMAS."""
    print("| set | coef0 | GridSearchCV SVC poly: test acc. (C, γ) | time | kestrel train defaults: test acc. "
          "(C, γ, centres) | time | ratio |")
    print("|---|---:|---|---|---|---|---|")
    for name in CLASSIFICATION:
        train, test = (os.path.join(DATA, name, f"{p}.csv") for p in ("train", "test"))
        xt, yt = load(test)
        for coef0 in (0, 1):
            svc = SVC(kernel="poly", degree=2, coef0=coef0)
            search, seconds = grid(svc, {"C": COSTS, "gamma": POLY_GAMMAS}, train)
            best = search.best_params_
            args = ["train", "--learner", "rsvm", "--kernel", "poly", "--degree", "2", "--coef0", str(coef0)]
            score, d_seconds, summary = kestrel(args, train, test, model)
            chosen = summary["chosen"]
            print(f"| {name} | {coef0} | {100 * search.score(xt, yt):.2f} ({best['C']:g}, {best['gamma']:.4g}) "
                  f"| {seconds:.2f} s | {100 * score['accuracy']:.2f} ({chosen['c']:.3g}, {chosen['gamma']:.3g}, "
                  f"{summary['centers']}) | {d_seconds:.2f} s | {seconds / d_seconds:.0f}× |")


def main():
    with tempfile.TemporaryDirectory() as directory:
        model = os.path.join(directory, "model.kestrel")
        if sys.argv[1:] == ["poly"]:
            polynomial(model)
            return
        classification(model)
        print()
        regression(model, directory)


if __name__ == "__main__":
    main()
