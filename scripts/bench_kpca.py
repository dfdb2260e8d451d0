#!/usr/bin/env python3
"""Reduced against exact kernel PCA (seed 003 §4.1 against seed 002 §5.1), in one run.

1. Time and peak memory (max RSS of the process, `/usr/bin/time -v`; parsing the CSV
   included for kestrel, the loaded array and the interpreter for scikit-learn) of
   `kestrel transform --method kpca` reduced through m random centres, of kestrel's exact
   KPCA, and of scikit-learn's exact `KernelPCA` (`eigen_solver="arpack"`, what its
   "auto" picks for 3 components, and `"dense"` where it fits), at n = 10⁴ … 10⁵. Exact
   KPCA holds the n × n kernel matrix: at n = 10⁵ that is 80 GB in f64 (as kestrel's
   exact work, n² scalars and Lanczos' O(n·k)), so exact runs are not attempted there.
2. Agreement at the n where scikit-learn's exact KPCA runs: the largest principal angle
   between reduced kestrel's 3 training-row components and the exact ones, and the three
   explained variances λ_c/n of each.
3. Item 4 of issue 16: kestrel's own linear SVM (`kestrel train --learner svm`, C = 1) on
   2-3 KSIR/KFD components (200 centres) of the shared multi-class sets, test accuracy.

Data for 1-2: a mixture of 5 Gaussian clusters in d = 10 (cluster centres N(0, 4I),
unit noise; seed 0), RBF kernel with gamma = 1/d (scikit-learn's default), 3 components.

Usage: <python with scikit-learn> scripts/bench_kpca.py [--quick]
Needs the release CLI (`cargo build --release -p kestrel-stream`). Prints Markdown.
"""
import os, re, subprocess, sys, tempfile, time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DATA = os.path.join(ROOT, "..", "shared", "data")
KESTREL = os.path.join(ROOT, "target", "release", "kestrel")
D, K, SEED = 10, 3, 0


def clusters(n, seed=SEED):
    rng = np.random.default_rng(seed)
    centres = rng.normal(0.0, 2.0, size=(5, D))
    return centres[rng.integers(0, 5, size=n)] + rng.normal(size=(n, D))


def write_csv(path, x):
    with open(path, "w") as f:
        f.write(",".join(f"x{j}" for j in range(D)) + ",label\n")
        for row in x:
            f.write(",".join(f"{v:.9g}" for v in row) + ",0\n")


def timed(cmd):
    """(seconds, max RSS in MB, stdout, stderr) of `cmd` under /usr/bin/time -v."""
    start = time.perf_counter()
    p = subprocess.run(["/usr/bin/time", "-v", *cmd], capture_output=True, text=True)
    seconds = time.perf_counter() - start
    if p.returncode != 0:
        raise RuntimeError(f"{cmd}: {p.stderr[-2000:]}")
    rss = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", p.stderr).group(1)) / 1024
    return seconds, rss, p.stdout, p.stderr


def kestrel_kpca(data, out, centres=None):
    """Seconds, MB, the projected rows and the variances λ_c/n kestrel prints."""
    cmd = [KESTREL, "transform", "--method", "kpca", "--components", str(K), "--gamma", repr(1.0 / D)]
    cmd += ["--input", data, "--output", out] + (["--centers", str(centres)] if centres else [])
    seconds, rss, _, err = timed(cmd)
    variances = [float(v) for v in re.search(r"eigenvalues ([^)]*)\)", err).group(1).split(",")]
    return seconds, rss, np.loadtxt(out, delimiter=",", skiprows=1)[:, :-1], variances


SKLEARN = """
import sys, numpy as np
from sklearn.decomposition import KernelPCA
x = np.load(sys.argv[1]); solver = sys.argv[2]
kpca = KernelPCA(n_components=%d, kernel="rbf", gamma=%r, eigen_solver=solver, random_state=0)
np.save(sys.argv[3], kpca.fit_transform(x)); np.save(sys.argv[4], kpca.eigenvalues_ / len(x))
""" % (K, 1.0 / D)


def sklearn_kpca(tmp, x, solver):
    """Seconds, MB, the projected rows and the variances of scikit-learn's exact KPCA."""
    paths = [os.path.join(tmp, f) for f in ("x.npy", "y.npy", "v.npy")]
    np.save(paths[0], x)
    seconds, rss, _, _ = timed([sys.executable, "-c", SKLEARN, paths[0], solver, paths[1], paths[2]])
    return seconds, rss, np.load(paths[1]), list(np.load(paths[2]))


def largest_angle(a, b):
    qa, qb = np.linalg.qr(a)[0], np.linalg.qr(b)[0]
    return float(np.arccos(np.clip(np.linalg.svd(qa.T @ qb, compute_uv=False).min(), -1.0, 1.0)))


def fmt(values):
    return ", ".join(f"{v:.4f}" for v in values)


def scale(tmp, quick):
    print("### Time and peak memory (max RSS), 3 components, d = 10\n")
    print("| n | method | time (s) | max RSS (MB) | angle to exact | variances λ_c/n |")
    print("|---|---|---|---|---|---|")
    sizes = [10_000] if quick else [10_000, 30_000, 100_000]
    for n in sizes:
        x = clusters(n)
        data, out = os.path.join(tmp, f"data{n}.csv"), os.path.join(tmp, "out.csv")
        write_csv(data, x)
        exact = None
        if n <= 10_000:
            for solver in ("arpack", "dense"):
                seconds, rss, y, variances = sklearn_kpca(tmp, x, solver)
                exact = exact if exact is not None else y
                print(f"| {n} | scikit-learn `KernelPCA` exact ({solver}) | {seconds:.1f} | {rss:.0f} | "
                      f"{largest_angle(y, exact):.1e} | {fmt(variances)} |")
        else:
            print(f"| {n} | exact (scikit-learn, kestrel) | not run | K alone {n * n * 8 / 1e9:.1f} GB | | |")
        for m in (200, 1000, 2000):
            seconds, rss, y, variances = kestrel_kpca(data, out, m)
            angle = f"{largest_angle(y, exact):.1e}" if exact is not None else ""
            print(f"| {n} | kestrel reduced, m = {m} | {seconds:.1f} | {rss:.0f} | {angle} | {fmt(variances)} |")
        sys.stdout.flush()
    print("\n### kestrel's exact KPCA (dense eigensolver) at small n\n")
    print("| n | time (s) | max RSS (MB) | angle to scikit-learn dense | scikit-learn dense time (s) |")
    print("|---|---|---|---|---|")
    for n in (1000, 2000) if quick else (1000, 2000, 4000):
        x = clusters(n)
        data, out = os.path.join(tmp, f"small{n}.csv"), os.path.join(tmp, "out.csv")
        write_csv(data, x)
        seconds, rss, y, _ = kestrel_kpca(data, out)
        ref_seconds, _, reference, _ = sklearn_kpca(tmp, x, "dense")
        print(f"| {n} | {seconds:.1f} | {rss:.0f} | {largest_angle(y, reference):.1e} | {ref_seconds:.1f} |")
        sys.stdout.flush()


def multiclass(tmp):
    print("\n### Linear SVM on KSIR/KFD components (kestrel train --learner svm, C = 1; 200 centres)\n")
    print("| set | classes | components | KSIR test accuracy | KFD test accuracy |")
    print("|---|---|---|---|---|")
    for name, classes, k in (("iris", 3, 2), ("wine", 3, 2), ("digits", 10, 2), ("digits", 10, 3), ("digits", 10, 9)):
        row = []
        for method in ("ksir", "kfd"):
            model, train, test, svm = (os.path.join(tmp, f) for f in ("p.k", "tr.csv", "te.csv", "s.k"))
            flags = ["--method", method, "--components", str(k), "--centers", "200", "--model", model]
            subprocess.run([KESTREL, "transform", "--input", os.path.join(DATA, name, "train.csv"), "--output",
                            train, *flags], check=True, capture_output=True)
            subprocess.run([KESTREL, "transform", "--input", os.path.join(DATA, name, "test.csv"), "--output",
                            test, "--apply", model], check=True, capture_output=True)
            subprocess.run([KESTREL, "train", "--learner", "svm", "--input", train, "--out", svm, "--scale", "off"], check=True,
                           capture_output=True)
            out = subprocess.run([KESTREL, "eval", "--model", svm, "--input", test, "--json"], check=True,
                                 capture_output=True, text=True).stdout
            row.append(float(re.search(r'"accuracy":([0-9.]+)', out).group(1)))
        print(f"| {name} | {classes} | {k} | {100 * row[0]:.2f} | {100 * row[1]:.2f} |")


def main():
    quick = "--quick" in sys.argv
    with tempfile.TemporaryDirectory() as tmp:
        multiclass(tmp)
        print()
        scale(tmp, quick)


if __name__ == "__main__":
    main()
