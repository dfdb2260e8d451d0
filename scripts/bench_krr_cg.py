#!/usr/bin/env python3
"""Kernel ridge regression at scale (issue 19 item 2): kestrel's Falkon solver
(`kestrel train --learner krr --solver cg`) against scikit-learn `Nystroem` + `Ridge` at the
same centres count m, width gamma and ridge lambda, and against kestrel's exact
eigendecomposition path (`--solver exact`) at the sizes where it fits.

Data: a generated regression in d = 8, x uniform in [-1, 1]^8,
y = sin(pi x0 x1) + 2 (x2 - 0.5)^2 + x3 + 0.5 x4 + 0.1 N(0, 1) (x5..x7 are noise), test set
10^5 noise-free rows. Settings are chosen once: `kestrel train --learner krr` with auto gamma
and lambda on the first 10^4 rows; its lambda is for 10^4 rows and is scaled to n rows as
lambda * n / 10^4 (the same penalty per row), as the cg solver does itself. Every method then
runs at that gamma and lambda with m random centres (kestrel --select random, scikit-learn's
Nystroem samples uniformly too): the same problem, min ||y - b - Zw||^2 + lambda ||w||^2 with
an unpenalised intercept (Nystroem's K_mm^-1/2 features and kestrel's L^-1 ones span the same
space and the penalty is rotation invariant).

Kestrel cg runs at its default tolerance (relative residual 1e-7 in f64), at 1e-4, and in f32
(default 1e-4); at m = 256 its preconditioner is the whole set's Hessian, accumulated in its
first pass (krr::EXACT_HESSIAN_CENTRES). Two times for kestrel: the `kestrel train` process's
wall time (reading the LIBSVM file included) and its fit alone (its JSON's seconds less
read_seconds), the like of scikit-learn's, which is `fit` on in-memory arrays
(Nystroem.fit_transform + Ridge.fit). The notes give the process time of the same command
with one centre and --eps 1 (the read, the subsample's fit and two cheap passes).

Usage: /work/main/target/python-venv/bin/python scripts/bench_krr_cg.py [--n 1000000]
       [--small-n 100000] [--m 256]
Needs a release build of kestrel (cargo build --release -p kestrel-stream). Prints Markdown.
"""
import argparse
import json
import os
import subprocess
import tempfile
import time

import numpy as np
from sklearn.kernel_approximation import Nystroem
from sklearn.linear_model import Ridge

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
KESTREL = os.path.join(ROOT, "target", "release", "kestrel")
TUNE_ROWS = 10_000


def run(cmd):
    return subprocess.run(cmd, check=True, capture_output=True, text=True).stdout


def timed(cmd):
    start = time.perf_counter()
    out = run(cmd)
    return out, time.perf_counter() - start


def generate(n, seed, noise=0.1):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, size=(n, 8))
    y = np.sin(np.pi * X[:, 0] * X[:, 1]) + 2 * (X[:, 2] - 0.5) ** 2 + X[:, 3] + 0.5 * X[:, 4]
    return X, y + noise * rng.standard_normal(n)


def write_libsvm(path, X, y):
    with open(path, "w") as f:
        for start in range(0, len(y), 100_000):
            rows = X[start : start + 100_000]
            labels = y[start : start + 100_000]
            f.write(
                "".join(
                    f"{label!r} " + " ".join(f"{j + 1}:{v!r}" for j, v in enumerate(row)) + "\n"
                    for row, label in zip(rows.tolist(), labels.tolist())
                )
            )


def kestrel_fit(train, test, model, m, gamma, lam, solver, *extra):
    out, seconds = timed(
        [KESTREL, "train", "--learner", "krr", "--input", train, "--out", model, "--json", "--solver", solver,
         "--select", "random", "--centers", str(m), "--gamma", repr(gamma), "--lambda", repr(lam), "--scale", "off",
         *extra]
    )
    summary = json.loads(out.strip().splitlines()[-1])
    mse = json.loads(run([KESTREL, "eval", "--model", model, "--input", test, "--json"]))["mse"]
    return mse, seconds, summary


def times(seconds, summary):
    """The process's wall time and kestrel's own fit time (its reading of the file left out, as
    scikit-learn's arrays are in memory before its clock starts)."""
    return f"{seconds:.2f} | {summary['seconds'] - summary['read_seconds']:.2f}"


def cg_notes(summary):
    return (f"{summary['iterations']} CG iterations, {summary['passes']} passes, {summary['preconditioner']}, "
            f"residual {summary['residual']:.1e}")


def sklearn_fit(X, y, Xt, yt, m, gamma, lam):
    start = time.perf_counter()
    features = Nystroem(gamma=gamma, n_components=m, random_state=0)
    Z = features.fit_transform(X)
    ridge = Ridge(alpha=lam).fit(Z, y)
    seconds = time.perf_counter() - start
    mse = float(np.mean((ridge.predict(features.transform(Xt)) - yt) ** 2))
    return mse, seconds


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--n", type=int, default=1_000_000)
    parser.add_argument("--small-n", type=int, default=100_000)
    parser.add_argument("--m", type=int, default=256)
    args = parser.parse_args()
    X, y = generate(args.n, 1)
    Xt, yt = generate(100_000, 2, noise=0.0)
    print(f"kestrel: {KESTREL}; threads: {os.cpu_count()}\n")
    with tempfile.TemporaryDirectory() as tmp:
        test = os.path.join(tmp, "test.libsvm")
        write_libsvm(test, Xt, yt)
        tune = os.path.join(tmp, "tune.libsvm")
        write_libsvm(tune, X[:TUNE_ROWS], y[:TUNE_ROWS])
        out = run([KESTREL, "train", "--learner", "krr", "--input", tune, "--out", os.path.join(tmp, "t.kestrel"),
                   "--json", "--solver", "exact", "--select", "random", "--centers", str(args.m), "--scale", "off"])
        chosen = json.loads(out.strip().splitlines()[-1])
        gamma, lam_tune = chosen["chosen"]["gamma"], chosen["lambda"]
        print(f"Settings from `kestrel train --learner krr` (auto) on the first {TUNE_ROWS} rows: "
              f"gamma = {gamma:.6g}, lambda = {lam_tune:.6g} for {TUNE_ROWS} rows; m = {args.m}.\n")
        print("| n | method | lambda | process s | fit s | test MSE | notes |")
        print("|---:|---|---:|---:|---:|---:|---|")
        for n in sorted({args.small_n, args.n}):
            lam = lam_tune * n / TUNE_ROWS
            train = os.path.join(tmp, f"train{n}.libsvm")
            write_libsvm(train, X[:n], y[:n])
            model = os.path.join(tmp, "m.kestrel")
            _, read = timed([KESTREL, "train", "--learner", "krr", "--input", train, "--out", model, "--solver", "cg",
                             "--select", "random", "--centers", "1", "--gamma", repr(gamma), "--lambda", repr(lam),
                             "--eps", "1", "--scale", "off"])
            mse, seconds, summary = kestrel_fit(train, test, model, args.m, gamma, lam, "cg")
            print(f"| {n} | kestrel cg | {lam:.4g} | {times(seconds, summary)} | {mse:.6f} | {cg_notes(summary)}; "
                  f"the same run at m = 1, --eps 1: {read:.2f} s |")
            for label, extra in (("kestrel cg --eps 1e-4", ["--eps", "1e-4"]),
                                 ("kestrel cg --scalar f32", ["--scalar", "f32"])):
                mse, seconds, summary = kestrel_fit(train, test, model, args.m, gamma, lam, "cg", *extra)
                print(f"| {n} | {label} | {lam:.4g} | {times(seconds, summary)} | {mse:.6f} | {cg_notes(summary)} |")
            if n * args.m <= 1 << 25:
                mse, seconds, summary = kestrel_fit(train, test, model, args.m, gamma, lam, "exact")
                print(f"| {n} | kestrel exact | {lam:.4g} | {times(seconds, summary)} | {mse:.6f} | "
                      "eigendecomposition path |")
            else:
                print(f"| {n} | kestrel exact | | | | | n·m = {n * args.m} > 2^25: the O(n·m) path is not run |")
            mse, seconds = sklearn_fit(X[:n], y[:n], Xt, yt, args.m, gamma, lam)
            print(f"| {n} | scikit-learn Nystroem + Ridge | {lam:.4g} | | {seconds:.2f} | {mse:.6f} | "
                  "in-memory arrays |")


if __name__ == "__main__":
    main()
