#!/usr/bin/env python3
"""Reduced-kernel SVM (IRSVM or random centres + DCD) against LIBSVM (`svm-train`), in one run.

1. Accuracy on the shared sets at LIBSVM's chosen C and gamma (../shared/data/README.md),
   with at most max(64, 10 % of the training points) centres: LIBSVM's RBF SVM trained
   here, kestrel with IRSVM centres and with random centres (mean over 10 seeds each).
2. Scale: a 2-D two-moons problem of 1e5 training points (fixed seed), C = 1, gamma = 1:
   accuracy, training time (parsing included) as a ratio, model bytes vs LIBSVM's.

Usage: python3 scripts/bench_rsvm.py [--seeds 10] [--scale-n 100000]
Needs `apt-get install libsvm-tools`. Prints Markdown for BENCHMARKS.md.
"""
import argparse, json, math, os, random, re, shutil, statistics, subprocess, tempfile, time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DATA = os.path.join(ROOT, "..", "shared", "data")
KESTREL = os.path.join(ROOT, "target", "release", "kestrel")
# name: (log2 C, log2 gamma, LIBSVM test accuracy from the data README)
SETS = {
    "breast_cancer": (6, -8, 95.80),
    "digits3": (2, -6, 99.33),
    "heart_scale": (6, -8, 77.94),
    "phishing": (0, -4, 91.69),
    "moons": (6, 0, 94.13),
}


def run(cmd):
    return subprocess.run(cmd, check=True, capture_output=True, text=True).stdout


def lines(path):
    with open(path) as f:
        return sum(1 for line in f if line.strip())


def kestrel(train, test, c, gamma, centres, select, seed, model):
    start = time.perf_counter()
    summary = json.loads(run([KESTREL, "train", "--learner", "rsvm", "--input", train, "--out", model,
                              "--loss", "hinge", "--c", str(c), "--gamma", str(gamma), "--centers", str(centres),
                              "--select", select, "--delta", "0.005", "--seed", str(seed), "--scale", "off", "--json"]))
    seconds = time.perf_counter() - start
    accuracy = json.loads(run([KESTREL, "eval", "--model", model, "--input", test, "--json"]))["accuracy"]
    return 100 * accuracy, summary["centers"], seconds, os.path.getsize(model)


def libsvm(train, test, c, gamma, model, tmp):
    start = time.perf_counter()
    run(["svm-train", "-c", str(c), "-g", str(gamma), "-m", "1000", train, model])
    seconds = time.perf_counter() - start
    out = run(["svm-predict", test, model, os.path.join(tmp, "pred")])
    accuracy = float(re.search(r"Accuracy = (\S+)%", out).group(1))
    with open(model) as f:
        sv = int(re.search(r"total_sv (\d+)", f.read()).group(1))
    return accuracy, sv, seconds, os.path.getsize(model)


def moons(path, n, seed, noise=0.25):
    rng = random.Random(seed)
    with open(path, "w") as f:
        for i in range(n):
            t = math.pi * rng.random()
            if i % 2 == 0:
                x, y, label = math.cos(t), math.sin(t), "+1"
            else:
                x, y, label = 1 - math.cos(t), 0.5 - math.sin(t), "-1"
            f.write(f"{label} 1:{x + rng.gauss(0, noise):.6f} 2:{y + rng.gauss(0, noise):.6f}\n")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--scale-n", type=int, default=100_000)
    args = parser.parse_args()
    subprocess.run(["cargo", "build", "--release", "-q", "-p", "kestrel-stream"], check=True, cwd=ROOT)
    tmp = tempfile.mkdtemp(prefix="kestrel-rsvm-")
    km, lm = os.path.join(tmp, "k.model"), os.path.join(tmp, "l.model")

    print("### Accuracy at LIBSVM's C and gamma\n")
    print(f"| data set | C | gamma | centres | LIBSVM % (SVs) | IRSVM % (mean of {args.seeds}) | random % (mean of {args.seeds}) | IRSVM − LIBSVM |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for name, (log_c, log_g, _) in SETS.items():
        train = os.path.join(DATA, name, "train.libsvm")
        test = os.path.join(DATA, name, "test.libsvm")
        c, gamma = 2.0 ** log_c, 2.0 ** log_g
        centres = max(64, lines(train) // 10)
        acc_l, sv, _, _ = libsvm(train, test, c, gamma, lm, tmp)
        irsvm = [kestrel(train, test, c, gamma, centres, "irsvm", s, km) for s in range(1, args.seeds + 1)]
        rand = [kestrel(train, test, c, gamma, centres, "random", s, km) for s in range(1, args.seeds + 1)]
        mi = statistics.mean(r[0] for r in irsvm)
        mr = statistics.mean(r[0] for r in rand)
        used = statistics.mean(r[1] for r in irsvm)
        print(f"| {name} | 2^{log_c} | 2^{log_g} | ≤ {centres} (IRSVM kept {used:.0f}) | {acc_l:.2f} ({sv}) | {mi:.2f} | {mr:.2f} | {mi - acc_l:+.2f} |")

    print(f"\n### Scale: two moons, {args.scale_n} training points, C = 1, gamma = 1\n")
    train, test = os.path.join(tmp, "moons_train.libsvm"), os.path.join(tmp, "moons_test.libsvm")
    moons(train, args.scale_n, seed=11)
    moons(test, 10_000, seed=12)
    acc_k, m, t_k, bytes_k = kestrel(train, test, 1.0, 1.0, 64, "irsvm", 1, km)
    acc_l, sv, t_l, bytes_l = libsvm(train, test, 1.0, 1.0, lm, tmp)
    print("| tool | test accuracy % | training s (parsing included) | model | model bytes |")
    print("|---|---:|---:|---|---:|")
    print(f"| kestrel rsvm (IRSVM, ≤ 64 centres) | {acc_k:.2f} | {t_k:.2f} | {m} centres | {bytes_k} |")
    print(f"| LIBSVM svm-train | {acc_l:.2f} | {t_l:.2f} | {sv} support vectors | {bytes_l} |")
    print(f"\nSpeed-up: LIBSVM / kestrel = {t_l / t_k:.1f}×; model size ratio {bytes_l / bytes_k:.1f}×.")
    shutil.rmtree(tmp)


if __name__ == "__main__":
    main()
