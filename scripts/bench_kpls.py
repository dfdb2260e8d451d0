#!/usr/bin/env python3
"""Kernel PLS (issue 19 item 4): `kestrel train --learner kpls` (conjugate gradients on the
Nystroem features, one pass over the rows per component) against scikit-learn
`Nystroem` + `PLSRegression` at the same centres count m, width gamma and number of
components r.

Data: the generated regression of scripts/bench_krr_cg.py (d = 8, x uniform in [-1, 1]^8,
y = sin(pi x0 x1) + 2 (x2 - 0.5)^2 + x3 + 0.5 x4 + 0.1 N(0, 1)), test set 10^5 noise-free
rows, gamma = 0.11561 (krr's auto on 10^4 rows, as in that benchmark). Kestrel first runs with
its defaults for the components (auto: the least error on a held-out fifth of a 10^4-row
subsample, up to 64), then both tools run at that r with m random centres (kestrel --select
random; Nystroem samples uniformly too). The two feature maps differ by a rotation, to which
PLS is blind, so the problems are the same up to the centres drawn.

Times: kestrel's are the wall time of the `kestrel train` process, parsing the LIBSVM file
included; scikit-learn's are `fit` on in-memory arrays (Nystroem.fit_transform +
PLSRegression.fit, NumPy/BLAS on every core).

Usage: /work/main/target/python-venv/bin/python scripts/bench_kpls.py [--n 100000 1000000]
       [--m 256]
Needs a release build of kestrel (cargo build --release -p kestrel-stream). Prints Markdown.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np
from sklearn.cross_decomposition import PLSRegression
from sklearn.kernel_approximation import Nystroem

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_krr_cg import KESTREL, generate, run, timed, write_libsvm  # noqa: E402

GAMMA = 0.11561


def kestrel_fit(train, test, model, m, *extra):
    out, seconds = timed(
        [KESTREL, "train", "--learner", "kpls", "--input", train, "--out", model, "--json",
         "--select", "random", "--centers", str(m), "--gamma", repr(GAMMA), "--scale", "off", *extra]
    )
    summary = json.loads(out.strip().splitlines()[-1])
    mse = json.loads(run([KESTREL, "eval", "--model", model, "--input", test, "--json"]))["mse"]
    return mse, seconds, summary


def sklearn_fit(X, y, X_test, y_test, m, r):
    start = time.perf_counter()
    features = Nystroem(kernel="rbf", gamma=GAMMA, n_components=m, random_state=0)
    Z = features.fit_transform(X)
    pls = PLSRegression(n_components=r, scale=False).fit(Z, y)
    seconds = time.perf_counter() - start
    predictions = pls.predict(features.transform(X_test)).ravel()
    return float(np.mean((predictions - y_test) ** 2)), seconds


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--n", type=int, nargs="+", default=[100_000])
    parser.add_argument("--m", type=int, default=256)
    args = parser.parse_args()
    X_test, _ = generate(100_000, seed=2, noise=0.0)
    y_test = np.sin(np.pi * X_test[:, 0] * X_test[:, 1]) + 2 * (X_test[:, 2] - 0.5) ** 2 + X_test[:, 3] + 0.5 * X_test[:, 4]
    print("| n | method | r | train s | test MSE | notes |")
    print("|---:|---|---:|---:|---:|---|")
    with tempfile.TemporaryDirectory() as tmp:
        test = os.path.join(tmp, "test.libsvm")
        write_libsvm(test, X_test, y_test)
        for n in args.n:
            X, y = generate(n, seed=1)
            train = os.path.join(tmp, f"train{n}.libsvm")
            write_libsvm(train, X, y)
            model = os.path.join(tmp, "kpls.kestrel")
            mse, seconds, summary = kestrel_fit(train, test, model, args.m)
            r = summary["components"]
            tried = len(summary["held_out"])
            print(f"| {n} | kestrel kpls, components auto | {r} | {seconds:.2f} | {mse:.6f} | "
                  f"{tried} numbers scored on a held-out fifth of {summary['subsample']} rows |")
            mse, seconds, summary = kestrel_fit(train, test, model, args.m, "--components", str(r))
            print(f"| {n} | kestrel kpls `--components {r}` | {r} | {seconds:.2f} | {mse:.6f} | "
                  f"{summary['iterations']} CG iterations |")
            mse, seconds, _ = kestrel_fit(train, test, model, args.m, "--components", str(r), "--scalar", "f32")
            print(f"| {n} | kestrel kpls `--components {r} --scalar f32` | {r} | {seconds:.2f} | {mse:.6f} | |")
            mse, seconds = sklearn_fit(X, y, X_test, y_test, args.m, r)
            print(f"| {n} | scikit-learn Nystroem + PLSRegression | {r} | {seconds:.2f} | {mse:.6f} | |")
            sys.stdout.flush()


if __name__ == "__main__":
    main()
