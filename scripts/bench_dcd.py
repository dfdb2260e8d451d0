#!/usr/bin/env python3
"""DCD linear SVM against LIBLINEAR (`liblinear-train`), measured in one run.

1. Parity on the shared data sets (C = 1, -B 1, both losses): the dual objective at
   eps = 0.001 (summed over classes for one-vs-rest) and the test accuracy at eps = 0.1.
2. Training time of `kestrel train` vs `liblinear-train` on the same file, both including
   parsing, median of several runs, on the shared sets and two synthetic problems:
   sparse 1e5 x 1e4 at 0.1 % density and dense 5e4 x 50 (fixed seed).

Usage: python3 scripts/bench_dcd.py [--runs 5]   (builds kestrel in release first)
Prints Markdown tables for BENCHMARKS.md. Needs `apt-get install liblinear-tools`.
"""
import argparse, json, os, random, re, shutil, statistics, subprocess, sys, tempfile, time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DATA = os.path.join(ROOT, "..", "shared", "data")
KESTREL = os.path.join(ROOT, "target", "release", "kestrel")
SETS = ["breast_cancer", "digits3", "heart_scale", "phishing", "digits"]
LOSSES = [("hinge", "3"), ("squared-hinge", "1")]


def run(cmd):
    out = subprocess.run(cmd, check=True, capture_output=True, text=True)
    return out.stdout + out.stderr


def kestrel_train(train, model, loss, eps):
    cmd = [KESTREL, "train", "--learner", "svm", "--input", train, "--out", model,
           "--loss", loss, "--c", "1", "--bias", "1", "--scale", "off", "--json"]
    if eps is not None:
        cmd += ["--eps", str(eps)]
    return json.loads(run(cmd).strip().splitlines()[-1])


def kestrel_accuracy(model, test):
    return json.loads(run([KESTREL, "eval", "--model", model, "--input", test, "--json"]))["accuracy"]


def liblinear_train(train, model, solver, eps):
    cmd = ["liblinear-train", "-s", solver, "-c", "1", "-B", "1"]
    if eps is not None:
        cmd += ["-e", str(eps)]
    out = run(cmd + [train, model])
    return sum(float(v) for v in re.findall(r"Objective value = (\S+)", out))


def liblinear_accuracy(model, test, tmp):
    out = run(["liblinear-predict", test, model, os.path.join(tmp, "pred")])
    return float(re.search(r"Accuracy = (\S+)%", out).group(1)) / 100


def median_seconds(cmd, runs):
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(cmd, check=True, capture_output=True)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def synthetic(path, rows, features, nnz_per_row, seed):
    rng = random.Random(seed)
    w = [rng.gauss(0, 1) for _ in range(features)]
    with open(path, "w") as f:
        for _ in range(rows):
            idx = sorted(rng.sample(range(features), nnz_per_row))
            vals = [rng.gauss(0, 1) for _ in idx]
            margin = sum(w[i] * v for i, v in zip(idx, vals)) + rng.gauss(0, 0.5)
            label = "+1" if margin > 0 else "-1"
            f.write(label + " " + " ".join(f"{i + 1}:{v:.6g}" for i, v in zip(idx, vals)) + "\n")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    if not shutil.which("liblinear-train"):
        sys.exit("liblinear-train not found: apt-get install -y liblinear-tools")
    subprocess.run(["cargo", "build", "--release", "-q", "-p", "kestrel-stream"], check=True, cwd=ROOT)
    tmp = tempfile.mkdtemp(prefix="kestrel-bench-")
    km, lm = os.path.join(tmp, "k.model"), os.path.join(tmp, "l.model")

    print("### Parity (C = 1, -B 1)\n")
    print("| data set | loss | f(α) kestrel, ε=0.001 | f(α) LIBLINEAR, ε=0.001 | relative gap | accuracy kestrel, ε=0.1 | accuracy LIBLINEAR, ε=0.1 |")
    print("|---|---|---:|---:|---:|---:|---:|")
    for name in SETS:
        train = os.path.join(DATA, name, "train.libsvm")
        test = os.path.join(DATA, name, "test.libsvm")
        for loss, solver in LOSSES:
            fk = kestrel_train(train, km, loss, 0.001)["objective"]
            fl = liblinear_train(train, lm, solver, 0.001)
            kestrel_train(train, km, loss, None)
            liblinear_train(train, lm, solver, None)
            ak, al = kestrel_accuracy(km, test), liblinear_accuracy(lm, test, tmp)
            gap = abs(fk - fl) / abs(fl)
            print(f"| {name} | {loss} | {fk:.6f} | {fl:.6f} | {gap:.1e} | {100 * ak:.2f} | {100 * al:.2f} |")

    print("\n### Training time, parsing included (median of %d runs)\n" % args.runs)
    sparse = os.path.join(tmp, "sparse.libsvm")
    dense = os.path.join(tmp, "dense.libsvm")
    synthetic(sparse, 100_000, 10_000, 10, seed=1)
    synthetic(dense, 50_000, 50, 50, seed=2)
    files = [(name, os.path.join(DATA, name, "train.libsvm")) for name in SETS]
    files += [("sparse 1e5 x 1e4, 0.1 %", sparse), ("dense 5e4 x 50", dense)]
    print("| data set | loss | kestrel s | LIBLINEAR s | ratio kestrel / LIBLINEAR |")
    print("|---|---|---:|---:|---:|")
    for name, path in files:
        for loss, solver in LOSSES:
            tk = median_seconds([KESTREL, "train", "--learner", "svm", "--input", path, "--out", km,
                                 "--loss", loss, "--c", "1", "--bias", "1", "--scale", "off"], args.runs)
            tl = median_seconds(["liblinear-train", "-s", solver, "-c", "1", "-B", "1", path, lm], args.runs)
            print(f"| {name} | {loss} | {tk:.3f} | {tl:.3f} | {tk / tl:.2f} |")
    shutil.rmtree(tmp)


if __name__ == "__main__":
    main()
