#!/usr/bin/env python3
"""Regenerates the model_decode and checkpoint_decode seeds with the current
target/release/kestrel (the formats they hold change with it), and the online_learners and
fit_policy seeds (flags and rows, no CLI). See fuzz/README.md.

Usage: python3 fuzz/seeds/regenerate.py   (after `cargo build --release -p kestrel-stream`)
"""
import math
import os
import random
import struct
import subprocess
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
KESTREL = os.path.join(ROOT, "target", "release", "kestrel")
DATA = os.path.join(os.path.dirname(ROOT), "shared", "data")
SEEDS = os.path.join(ROOT, "fuzz", "seeds")
HEADER, TRAILER = 12, 4


def kestrel(*args, cwd=None):
    subprocess.run([KESTREL, *args], check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=cwd)


def rows_of(path, count):
    """The header and `count` rows spread over the file."""
    with open(path) as f:
        lines = f.read().splitlines()
    body = lines[1:]
    step = max(1, len(body) // count)
    return "\n".join([lines[0]] + body[::step][:count]) + "\n"


def named(text):
    """`text`, CSV rows whose last column is a class 0, 1, 2, with the classes named."""
    lines = text.splitlines()
    names = ["setosa", "versicolor", "virginica"]
    rows = [",".join(line.split(",")[:-1] + [names[int(float(line.split(",")[-1]))]]) for line in lines[1:]]
    return "\n".join([lines[0]] + rows) + "\n"


def write(path, data):
    with open(path, "wb") as f:
        f.write(data)


def model_seeds(tmp):
    out = os.path.join(SEEDS, "model_decode")
    specs = [
        ("svm_bin", "svm", "moons", []),
        ("svm_multi", "svm", "iris", []),
        ("rsvm_bin", "rsvm", "moons", ["--centers", "8"]),
        ("rsvm_multi", "rsvm", "iris", ["--centers", "8"]),
        ("slkl", "slkl", "diabetes", ["--centers", "8"]),
        ("svm_named", "svm", "iris_named", []),
        ("rsvm_named", "rsvm", "iris_named", ["--centers", "8"]),
        ("mrrsvm_bin", "mrrsvm", "moons", ["--centers", "8", "--partitions", "2"]),
        ("mrrsvm_multi", "mrrsvm", "iris", ["--centers", "8", "--partitions", "2"]),
        ("novelty", "novelty", "iris", ["--centers", "8"]),
        ("rsvm_calibrated", "rsvm", "moons", ["--centers", "8", "--probabilities"]),
        ("svm_calibrated_multi", "svm", "iris", ["--probabilities"]),
    ]
    for name, learner, dataset, options in specs:
        csv = os.path.join(tmp, f"{dataset}.csv")
        with open(csv, "w") as f:
            f.write(named(rows_of(os.path.join(DATA, "iris", "train.csv"), 40)) if dataset == "iris_named"
                    else rows_of(os.path.join(DATA, dataset, "train.csv"), 40))
        for scalar in ["f32", "f64"]:
            for scaled in [False, True]:
                model = os.path.join(tmp, "model.kestrel")
                kestrel("train", "--learner", learner, "--input", csv, "--out", model, "--scalar", scalar,
                        *options, *(["--scale"] if scaled else []))
                data = open(model, "rb").read()
                stem = f"{name}_{scalar}" + ("_scaled" if scaled else "")
                write(os.path.join(out, f"raw_{stem}.kestrel"), data)
                # kind and scalar tags (the kind's high bit for a version 5 file, with a
                # calibration section), then the payload: what the target wraps in an envelope.
                tags = bytes([data[6] | (0x80 if data[4] == 5 else 0), data[7]])
                write(os.path.join(out, f"wrapped_{stem}.bin"), tags + data[HEADER:-TRAILER])


def checkpoint_seeds(tmp):
    out = os.path.join(SEEDS, "checkpoint_decode")
    for name in os.listdir(out):
        os.remove(os.path.join(out, name))
    for learner in ["svm", "slkl", "rsvm", "novelty"]:
        for scalar in ["f32", "f64"]:
            for count in [0, 2, 5, 30] if learner in ("rsvm", "novelty") else [0, 5, 30]:
                csv = os.path.join(tmp, "stream.csv")
                with open(csv, "w") as f:
                    f.write("a,b,y\n")
                    for t in range(count):
                        a, b = math.sin(1.3 * t), math.cos(0.7 * t + 0.4)
                        # Classifiers: three classes, the third from the sixth row on.
                        label = a * b if learner == "slkl" else (1 if a * b > 0 else (-1 if a > 0 or t < 6 else 2))
                        f.write(f"{a:.6f},{b:.6f},{label:.6f}\n" if learner == "slkl" else f"{a:.6f},{b:.6f},{label}\n")
                ckpt = os.path.join(tmp, "run.ckpt")
                if os.path.exists(ckpt):
                    os.remove(ckpt)
                # Paths relative to `tmp`: the checkpoint records the flags, and a temporary
                # directory's name would change the seeds at every run (the seconds of its
                # history still do).
                kestrel("stream", "--learner", learner, "--input", "stream.csv", "--window", "8", "--centers", "4",
                        "--steps-per-sample", "2", "--scalar", scalar, "--checkpoint", "run.ckpt",
                        *([] if learner == "slkl" else ["--classes", "3"]),
                        *(["--warmup", "4"] if learner == "novelty" else []),
                        "--checkpoint-every", "0", cwd=tmp)
                data = open(ckpt, "rb").read()
                stem = f"{learner}_{scalar}_{count}rows"
                write(os.path.join(out, f"raw_{stem}.ckpt"), data)
                if count >= 5:
                    # mode: bit 6 = the learners standardise (as `kestrel stream` did), fed 0.
                    write(os.path.join(out, f"framed_{stem}.bin"), bytes([0x40]) + data[HEADER:-TRAILER])


def online_seeds():
    """One input per learner of online_learners: flags (window 16, 8 centres, 32 steps,
    RBF with γ and C unset, so raced; scaling, renewal, 2 features, the state saved at row
    120), then 300 rows of a noisy plane — a class byte, or for slkl a target byte."""
    out = os.path.join(SEEDS, "online_learners")
    rng = random.Random(1)
    for index, learner in enumerate(["svm", "slkl", "rsvm", "novelty"]):
        flags = bytes([index, 15, 7, 31, 0, 0x80, 0x80, 0x13, 0, 31, 2, 1 + 4 * 30])
        rows = b""
        for _ in range(300):
            x = [rng.gauss(0, 1) * 10, rng.gauss(0, 1)]
            side = x[0] / 10 + x[1]
            # The target byte 8k + 7 is the target k − 10 + 7/8 (fuzz_targets/online_learners.rs).
            label = 8 * max(0, min(31, int(side * 4 + 16))) + 7 if learner == "slkl" else int(side > 0)
            rows += bytes([label]) + struct.pack("<2d", *x)
        write(os.path.join(out, learner), flags + rows)


def fit_policy_seeds():
    """fit_policy: each of the nine learners under each preparation (--scale auto, on, off,
    --relevance), every setting auto, 8 centres, seed 1, a budget of 4 MiB, on 30 CSV rows
    of two features in different units — a regression target for slkl, krr, ssvr and kpls,
    ±1 for the others — and four more: three named classes, LibSVM rows for the linear SVM,
    a cubic kernel with γ and C given, krr in f32; and rows whose first column is a mode,
    one-hot encoded, for rsvm, krr, svm and the novelty detector."""
    out = os.path.join(SEEDS, "fit_policy")
    classes = "a,b,y\n" + "".join(
        f"{math.sin(i) * 100:.3f},{math.cos(1.7 * i):.4f},{1 if math.sin(i) > 0 else -1}\n" for i in range(30))
    targets = "a,b,y\n" + "".join(f"{i * 10:.1f},{math.cos(1.7 * i):.4f},{math.sin(i / 3):.4f}\n" for i in range(30))
    named_rows = "a,b,y\n" + "".join(
        f"{i % 7:.1f},{math.cos(1.7 * i) * 1e3:.4f},{'xyz'[i % 3]}\n" for i in range(30))
    libsvm = "".join(f"{1 if i % 2 else -1} 1:{i / 10:.2f} 3:{math.sin(i):.3f}\n" for i in range(24))

    def flags(learner, mode=0, gamma=0, c=0, degree=0, categorical=False):
        return bytes([learner, mode, gamma, c, 7, 0, 0x81 if categorical else 1, 10, degree, 0])

    for learner in range(9):
        for preparation in range(4):
            rows = targets if learner in (0, 3, 7, 8) else classes
            write(os.path.join(out, f"l{learner}_p{preparation}.csv.bin"), flags(learner, preparation << 3) + rows.encode())
    write(os.path.join(out, "multi_names.bin"), flags(2) + named_rows.encode())
    write(os.path.join(out, "libsvm_svm.bin"), flags(1, mode=2) + libsvm.encode())
    write(os.path.join(out, "poly_given.bin"), flags(2, mode=1 << 5, gamma=9, c=9, degree=1) + classes.encode())
    write(os.path.join(out, "f32_krr.bin"), flags(3, mode=1) + targets.encode())
    # The first column one-hot encoded (--categorical): a mode of four states, one rare.
    def modes(target):
        return "mode,a,y\n" + "".join(
            f"{'idle' if i % 5 else 'heat' if i % 2 else 'cool'},{i * 10:.1f},{target(i)}\n" for i in range(30))

    for learner, preparation in ((2, 0), (3, 1), (1, 0), (6, 1)):
        rows = modes(lambda i: f"{math.sin(i / 3):.4f}") if learner == 3 else modes(lambda i: 1 if math.sin(i / 3) > 0 else -1)
        write(os.path.join(out, f"categorical_l{learner}_p{preparation}.bin"),
              flags(learner, preparation << 3, categorical=True) + rows.encode())


def main():
    with tempfile.TemporaryDirectory() as tmp:
        model_seeds(tmp)
        checkpoint_seeds(tmp)
    online_seeds()
    fit_policy_seeds()


if __name__ == "__main__":
    main()
