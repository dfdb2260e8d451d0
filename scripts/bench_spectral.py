#!/usr/bin/env python3
"""Spectral clustering (issue 19 item 5): `kestrel cluster --method spectral` (the 10-NN
graph with Gaussian weights, connected components as exact leading eigenvectors, Lanczos on
the rest, k-means with 20 restarts) against scikit-learn `SpectralClustering` with the
nearest-neighbours affinity (n_neighbors = 10, ARPACK in shift-invert mode around the
smallest eigenvalues of the normalised Laplacian, k-means with 10 restarts), and k-means on
the rows as the baseline both should beat.

Data: the shared sets (../shared/data/NAME/train.csv, as committed: standardised except
moons) with as many clusters as classes, and two generated sets of 10^5 points in 2-D,
make_moons(noise=0.05) and make_circles(noise=0.05, factor=0.5) (random_state 0) — sets
where scikit-learn's default dense RBF affinity cannot run (an n x n matrix of 80 GB).

Times: wall time of the `kestrel cluster` process (reading the CSV included) and of
scikit-learn's `fit_predict` on arrays in memory (single process; its kNN search and
sparse LU on every core they use). Scores: the RAND index against the labels.

Usage: /work/main/target/python-venv/bin/python scripts/bench_spectral.py [--large 100000]
Needs a release build of kestrel (cargo build --release -p kestrel-stream). Prints Markdown.
"""
import argparse
import json
import os
import subprocess
import tempfile
import time
import warnings

import numpy as np
from sklearn.cluster import KMeans, SpectralClustering
from sklearn.datasets import make_circles, make_moons
from sklearn.metrics import rand_score

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
KESTREL = os.path.join(ROOT, "target", "release", "kestrel")
DATA = os.path.join(os.path.dirname(ROOT), "shared", "data")
SHARED = [("iris", 3), ("wine", 3), ("breast_cancer", 2), ("heart_scale", 2), ("digits", 10), ("moons", 2)]


def kestrel(path, clusters, out, method="spectral"):
    start = time.perf_counter()
    done = subprocess.run(
        [KESTREL, "cluster", "--input", path, "--clusters", str(clusters), "--method", method, "--json",
         "--output", out],
        check=True, capture_output=True, text=True,
    )
    seconds = time.perf_counter() - start
    summary = json.loads(done.stdout.strip().splitlines()[-1])
    return np.loadtxt(out, delimiter=",", skiprows=1)[:, 1], seconds, summary


def scikit_learn(X, clusters):
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "Graph is not fully connected" on separated sets
        labels = SpectralClustering(clusters, affinity="nearest_neighbors", n_neighbors=10,
                                    random_state=0).fit_predict(X)
    return labels, time.perf_counter() - start


def row(name, path, X, y, clusters, out):
    ours, ours_seconds, summary = kestrel(path, clusters, out)
    theirs, theirs_seconds = scikit_learn(X, clusters)
    rows_kmeans = KMeans(clusters, n_init=10, random_state=0).fit_predict(X)
    steps = summary.get("lanczos_steps", 0)
    residual = summary.get("lanczos_residual", 0.0)
    print(f"| {name} | {len(X):,} | {clusters} | {rand_score(y, ours):.4f} | {ours_seconds:.2f} | {steps} "
          f"({residual:.0e}) | {rand_score(y, theirs):.4f} | {theirs_seconds:.2f} | "
          f"{ours_seconds / theirs_seconds:.2f} | {rand_score(y, rows_kmeans):.4f} |", flush=True)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--large", type=int, default=100_000, help="points of the generated sets")
    args = parser.parse_args()
    print("| set | n | clusters | kestrel RAND | kestrel s | Lanczos steps (residual) | scikit-learn RAND "
          "| scikit-learn s | time ratio | k-means RAND |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    with tempfile.TemporaryDirectory() as scratch:
        out = os.path.join(scratch, "clusters.csv")
        for name, clusters in SHARED:
            path = os.path.join(DATA, name, "train.csv")
            table = np.loadtxt(path, delimiter=",", skiprows=1)
            row(name, path, table[:, :-1], table[:, -1], clusters, out)
        for name, (X, y) in [
            ("moons (noise 0.05)", make_moons(n_samples=args.large, noise=0.05, random_state=0)),
            ("circles (noise 0.05)", make_circles(n_samples=args.large, noise=0.05, factor=0.5, random_state=0)),
        ]:
            path = os.path.join(scratch, "generated.csv")
            np.savetxt(path, np.c_[X, y], delimiter=",", header="x1,x2,label", comments="", fmt="%.6f")
            row(name, path, X, y, 2, out)


if __name__ == "__main__":
    main()
