#!/usr/bin/env python3
"""Smooth SVM and SVR on the reduced kernel (seed 003 eq. 5-8, 21-23), in one run.

1. Regression: kestrel's ε-SSVR (`kestrel train --learner ssvr`, at most 10 % of the
   training points as centres) against LIBSVM's ε-SVR (`svm-train -s 3`) and scikit-learn's
   `SVR`, both on every training point. LIBSVM's C, gamma and epsilon are chosen by 5-fold
   `GridSearchCV` of `SVR` on the training set; LIBSVM and `SVR` are then trained at them.
   kestrel runs three times: every setting `auto` (its own choice, no grid), at LIBSVM's
   gamma and epsilon (C by kestrel's leave-one-out, since the losses differ: LIBSVM's
   ε-insensitive |r|_ε against SSVR's smooth |r|²_ε, so one C is not one problem), and
   `auto` with `--relevance` (a Gaussian width per standardised feature, by alignment). The
   grid: C = s_y·2^{-4,-2,…,6} (s_y the targets' standard deviation: the L1 loss's C has
   the targets' units), gamma = 2^{-10,-8,…,0}, epsilon ∈ {0.1, 0.1·s_y}.
   Sets: diabetes (shared data), the sinc task of seeds/INDEX.md (n = 1000, 10 dB noise,
   noise-free test), make_friedman1 (2000 train / 1000 test, noise 1).
2. Classification: `--learner rsvm --solver ssvm` against `--solver dcd` (squared hinge)
   on the same reduced set (same IRSVM selection, same seed, same features), at LIBSVM's
   C and gamma from the data README: test accuracy, objective (DCD prints its dual, SSVM
   its smoothed primal; the dual is minus the primal at the optimum), iterations, time.

Usage: <python with scikit-learn> scripts/bench_ssvm.py
Needs `svm-train`/`svm-predict` (Debian libsvm-tools). Prints Markdown for BENCHMARKS.md.
"""
import json, math, os, re, shutil, subprocess, tempfile, time

import numpy as np
from sklearn.datasets import make_friedman1
from sklearn.model_selection import GridSearchCV
from sklearn.svm import SVR

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DATA = os.path.join(ROOT, "..", "shared", "data")
KESTREL = os.path.join(ROOT, "target", "release", "kestrel")
# Classification sets: name: (log2 C, log2 gamma) from the data README.
CLASSIFICATION = {
    "breast_cancer": (6, -8),
    "digits3": (2, -6),
    "heart_scale": (6, -8),
    "phishing": (0, -4),
    "moons": (6, 0),
}


def run(cmd):
    return subprocess.run(cmd, check=True, capture_output=True, text=True).stdout


def read_csv(path):
    values = np.loadtxt(path, delimiter=",", skiprows=1)
    return values[:, :-1], values[:, -1]


def write(stem, x, y):
    """Writes `stem.csv` (header, target last) and `stem.libsvm`."""
    with open(stem + ".csv", "w") as f:
        f.write(",".join([f"x{j}" for j in range(x.shape[1])] + ["y"]) + "\n")
        for row, target in zip(x, y):
            f.write(",".join(f"{v:.10g}" for v in row) + f",{target:.10g}\n")
    with open(stem + ".libsvm", "w") as f:
        for row, target in zip(x, y):
            f.write(f"{target:.10g} " + " ".join(f"{j + 1}:{v:.10g}" for j, v in enumerate(row) if v != 0) + "\n")


def sinc(n, seed, noisy):
    rng = np.random.default_rng(seed)
    x = rng.uniform(-5, 5, size=(n, 2))
    r = np.linalg.norm(x, axis=1)
    y = np.sin(r) / r
    if noisy:  # white noise at 10 dB SNR: variance = signal power / 10
        y = y + rng.normal(0, math.sqrt(np.mean(y**2) / 10), size=n)
    return x, y


def regression_sets(tmp):
    """(name, train stem, test stem): diabetes from the shared data, sinc and friedman1 written here."""
    sets = [("diabetes", os.path.join(DATA, "diabetes", "train"), os.path.join(DATA, "diabetes", "test"))]
    x, y = make_friedman1(3000, noise=1.0, random_state=0)
    generated = {
        "sinc": (*sinc(1000, 1, True), *sinc(1000, 2, False)),
        "friedman1": (x[:2000], y[:2000], x[2000:], y[2000:]),
    }
    for name, (xtr, ytr, xte, yte) in generated.items():
        train, test = os.path.join(tmp, name + "_train"), os.path.join(tmp, name + "_test")
        write(train, xtr, ytr)
        write(test, xte, yte)
        sets.append((name, train, test))
    return sets


def kestrel_train(args, train, model):
    summary = json.loads(run([KESTREL, "train", "--input", train, "--out", model, "--json", *args]))
    return summary


def kestrel_eval(model, test):
    return json.loads(run([KESTREL, "eval", "--model", model, "--input", test, "--json"]))


def libsvm_svr(train, test, c, gamma, epsilon, tmp):
    model, out = os.path.join(tmp, "svr.model"), os.path.join(tmp, "svr.pred")
    start = time.perf_counter()
    run(["svm-train", "-s", "3", "-c", repr(c), "-g", repr(gamma), "-p", repr(epsilon), "-m", "1000", train, model])
    seconds = time.perf_counter() - start
    printed = run(["svm-predict", test, model, out])
    mse = float(re.search(r"Mean squared error = (\S+)", printed).group(1))
    with open(model) as f:
        sv = int(re.search(r"total_sv (\d+)", f.read()).group(1))
    return mse, sv, seconds


def regression(tmp):
    print("### ε-SSVR against LIBSVM ε-SVR and scikit-learn `SVR` (test MSE)\n")
    print("| data set | n train | LIBSVM C, γ, ε (5-fold CV) | LIBSVM `-s 3` MSE (SVs, s) | sklearn `SVR` MSE (s) "
          "| kestrel ssvr auto MSE (centres, s) | kestrel ssvr at LIBSVM's γ, ε MSE (centres, s) | kestrel auto / LIBSVM "
          "| kestrel ssvr auto `--relevance` MSE (centres, s) | `--relevance` / LIBSVM |")
    print("|---|---:|---|---:|---:|---:|---:|---:|---:|---:|")
    model = os.path.join(tmp, "k.model")
    for name, train, test in regression_sets(tmp):
        xtr, ytr = read_csv(train + ".csv")
        xte, yte = read_csv(test + ".csv")
        n = len(ytr)
        centres = max(1, n // 10)
        sd = float(np.std(ytr))
        grid = {
            "C": [sd * 2.0**k for k in range(-4, 7, 2)],
            "gamma": [2.0**k for k in range(-10, 1, 2)],
            "epsilon": [0.1, 0.1 * sd],
        }
        search = GridSearchCV(SVR(kernel="rbf"), grid, cv=5, scoring="neg_mean_squared_error", n_jobs=1)
        search.fit(xtr, ytr)
        c, gamma, epsilon = (search.best_params_[k] for k in ("C", "gamma", "epsilon"))
        c = float(f"{c:.6g}")
        mse_l, sv, t_l = libsvm_svr(train + ".libsvm", test + ".libsvm", c, gamma, epsilon, tmp)
        start = time.perf_counter()
        svr = SVR(kernel="rbf", C=c, gamma=gamma, epsilon=epsilon).fit(xtr, ytr)
        t_s = time.perf_counter() - start
        mse_s = float(np.mean((svr.predict(xte) - yte) ** 2))
        results = []
        for extra in ([], ["--gamma", repr(gamma), "--epsilon", repr(epsilon)], ["--relevance"]):
            start = time.perf_counter()
            summary = kestrel_train(["--learner", "ssvr", "--centers", str(centres), *extra], train + ".csv", model)
            seconds = time.perf_counter() - start
            results.append((kestrel_eval(model, test + ".csv")["mse"], summary["centers"], seconds))
        (mse_a, m_a, t_a), (mse_g, m_g, t_g), (mse_r, m_r, t_r) = results
        print(f"| {name} | {n} | {c:.4g}, 2^{math.log2(gamma):.0f}, {epsilon:.3g} | {mse_l:.4g} ({sv}, {t_l:.2f}) "
              f"| {mse_s:.4g} ({t_s:.2f}) | {mse_a:.4g} ({m_a}, {t_a:.2f}) | {mse_g:.4g} ({m_g}, {t_g:.2f}) "
              f"| {mse_a / mse_l:.3f} | {mse_r:.4g} ({m_r}, {t_r:.2f}) | {mse_r / mse_l:.3f} |")


def classification():
    print("\n### SSVM against DCD on the same reduced set (squared hinge, LIBSVM's C and γ)\n")
    print("| data set | C | γ | centres | DCD accuracy % | SSVM accuracy % | DCD −dual | SSVM primal F "
          "| DCD passes | SSVM Newton iterations | DCD s | SSVM s |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    tmp = tempfile.mkdtemp(prefix="kestrel-ssvm-")
    model = os.path.join(tmp, "k.model")
    for name, (log_c, log_g) in CLASSIFICATION.items():
        train = os.path.join(DATA, name, "train.libsvm")
        test = os.path.join(DATA, name, "test.libsvm")
        with open(train) as f:
            centres = max(64, sum(1 for line in f if line.strip()) // 10)
        row = {}
        for solver in ("dcd", "ssvm"):
            args = ["--learner", "rsvm", "--solver", solver, "--c", str(2.0**log_c), "--gamma", str(2.0**log_g),
                    "--centers", str(centres), "--delta", "0.0005", "--seed", "1"]
            summary = kestrel_train(args, train, model)
            accuracy = 100 * kestrel_eval(model, test)["accuracy"]
            row[solver] = (accuracy, summary["objective"], summary["passes"], summary["seconds"], summary["centers"])
        d, s = row["dcd"], row["ssvm"]
        print(f"| {name} | 2^{log_c} | 2^{log_g} | {d[4]} | {d[0]:.2f} | {s[0]:.2f} | {-d[1]:.6g} | {s[1]:.6g} "
              f"| {d[2]} | {s[2]} | {d[3]:.3f} | {s[3]:.3f} |")
    shutil.rmtree(tmp)


def main():
    subprocess.run(["cargo", "build", "--release", "-q", "-p", "kestrel-stream"], check=True, cwd=ROOT)
    tmp = tempfile.mkdtemp(prefix="kestrel-ssvr-")
    regression(tmp)
    shutil.rmtree(tmp)
    classification()


if __name__ == "__main__":
    main()
