#!/usr/bin/env python3
"""Prequential accuracy / RMSE and rows per second of `kestrel stream` with its defaults
against River's online learners, on River's bundled streams, in one run.

Protocol (River's): every row is predicted by the model learned from the rows before it,
scored, then learned from. Streams:
  - Phishing (1,250 rows, 9 features, binary), Bananas (5,300 rows, 2 features, binary),
    ImageSegments (2,310 rows, 18 features, 7 named classes) and the first 5,000 rows of
    River's synthetic RandomRBF (6 features, 20 centroids), Agrawal (function 2), SEA
    (variant 0) and Hyperplane (10 features) streams, binary, and of its Waveform (21
    features, 3 classes), LED (7 segments, 10 % noise, 10 classes), Sine, Mixed (two
    boolean and two real features), STAGGER and RandomTree streams, seeds fixed:
    classification, scored by accuracy;
  - TrumpApproval (1,001 rows, 6 features), ChickWeights (578 rows, 3 features), WaterFlow
    (1,268 rows, one feature: the time, in days), SP500Stocks (1,257 daily returns of ten
    stocks, a target mostly noise) and the first 5,000 rows of River's synthetic Friedman
    #1 stream (10 features, seed 42): regression, scored by RMSE;
  - drift: a synthetic stream (10,000 rows, 4 features in raw units, binary) whose label
    rule changes abruptly at row 5,000 (seeded): accuracy overall and over the 1,000 rows
    after the change.
Each stream is written to CSV under target/bench-online/ from River's own iterator, so
both tools see the same rows in the same order.

Learners:
  kestrel: `kestrel stream --learner svm|rsvm --input S.csv` (classification) and
           `--learner slkl` (regression), every other flag at its default;
  River:   preprocessing.StandardScaler() | linear_model.LogisticRegression() (the River
           docs' pipeline), neighbors.KNNClassifier(), tree.HoeffdingAdaptiveTreeClassifier(),
           forest.ARFClassifier(seed=42); and for regression StandardScaler() |
           LinearRegression(), KNNRegressor(), HoeffdingAdaptiveTreeRegressor(),
           forest.ARFRegressor(seed=42).
kestrel's score is the one its summary prints; the drift stream's score after the change
comes from two runs, on its first 5,000 and 6,000 rows. Rows per second: kestrel's own figure (`samples_per_sec`: parsing, predicting and
learning, from opening the file); River's is predict + score + learn over its iterator,
timed in-process (parsing not counted), best of --runs.

Seeds: a learner that draws random numbers (kestrel's pass order and race, River's trees
and forests) scores differently with another seed, so after the table the script scores
the issue's four streams (Phishing, Bananas, TrumpApproval, drift) again over seeds 1 to
--seeds: `kestrel stream --seed S` and River's HoeffdingAdaptiveTree and ARF with seed=S,
mean, lowest and highest score of each (River's LogisticRegression, LinearRegression and
KNN draw nothing, so their score is the table's). --seeds 0 skips it.

--streams NAME,... runs those streams alone.

--log-loss prints instead the prequential log loss of each classifier's class
probabilities on each classification stream: River's predict_proba_one, kestrel stream's
online Platt sigmoids (its summary's `log_loss`); −ln 10⁻¹⁵ for a class not yet met.

Usage:
    python3 -m venv .venv && .venv/bin/pip install river
    .venv/bin/python scripts/bench_online.py [--runs 3] [--seeds 10] [--skip-build] [--log-loss]
                                             [--streams Phishing,drift]
Prints a Markdown table for BENCHMARKS.md.
"""
import argparse
import csv
import itertools
import json
import math
import os
import random
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "target", "bench-online")
KESTREL = os.path.join(ROOT, "target", "release", "kestrel")


def write_csv(path, rows):
    keys = list(rows[0][0].keys())
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(keys + ["label"])
        for x, y in rows:
            w.writerow([x[k] for k in keys] + [int(y) if isinstance(y, bool) else y])


def drift_stream(n=10_000, change=5_000, seed=7):
    """4 features in raw units (different scales); the label is which side of a plane a
    row lies on, and the plane changes at row `change`."""
    rng = random.Random(seed)
    scales = [1.0, 50.0, 0.01, 1000.0]
    before, after = [1.0, -1.0, 1.0, 0.0], [-1.0, 0.0, 1.0, 1.0]
    rows = []
    for i in range(n):
        z = [rng.gauss(0, 1) for _ in scales]
        plane = before if i < change else after
        y = sum(p * v for p, v in zip(plane, z)) + 0.1 * rng.gauss(0, 1) > 0
        rows.append(({f"x{j}": v * s for j, (v, s) in enumerate(zip(z, scales))}, y))
    return rows


def numeric(rows):
    """The rows with every feature a number (a date or time becomes days since 1970)."""

    def number(v):
        return v.timestamp() / 86_400 if hasattr(v, "timestamp") else float(v)

    return [({str(k): number(v) for k, v in x.items()}, y) for x, y in rows]


def first(stream, n=5_000):
    """The first `n` rows of a synthetic stream, with numeric feature names as strings."""
    return [({str(k): v for k, v in x.items()}, y) for x, y in itertools.islice(stream, n)]


def streams():
    from river import datasets
    from river.datasets import synth

    return [
        ("Phishing", "class", list(datasets.Phishing())),
        ("Bananas", "class", list(datasets.Bananas())),
        ("ImageSegments", "class", list(datasets.ImageSegments())),
        ("RandomRBF", "class", first(synth.RandomRBF(seed_model=7, seed_sample=7, n_classes=2, n_features=6, n_centroids=20))),
        ("Agrawal", "class", first(synth.Agrawal(classification_function=2, seed=42))),
        ("SEA", "class", first(synth.SEA(variant=0, seed=42))),
        ("Hyperplane", "class", first(synth.Hyperplane(seed=42, n_features=10))),
        ("Waveform", "class", first(synth.Waveform(seed=1))),
        ("LED", "class", first(synth.LED(seed=1, noise_percentage=0.1))),
        ("Sine", "class", first(synth.Sine(seed=1))),
        ("Mixed", "class", first(synth.Mixed(seed=1))),
        ("STAGGER", "class", first(synth.STAGGER(seed=1))),
        ("RandomTree", "class", first(synth.RandomTree(seed_tree=1, seed_sample=1))),
        ("TrumpApproval", "reg", list(datasets.TrumpApproval())),
        ("ChickWeights", "reg", numeric(datasets.ChickWeights())),
        ("WaterFlow", "reg", numeric(datasets.WaterFlow())),
        ("SP500Stocks", "reg", list(datasets.SP500Stocks())),
        ("Friedman", "reg", first(synth.Friedman(seed=42))),
        ("drift", "class", drift_stream()),
    ]


def river_learners(task, classes, seed=42):
    from river import forest, linear_model, multiclass, neighbors, preprocessing, tree

    def logistic(n):
        return linear_model.LogisticRegression() if n <= 2 else multiclass.OneVsRestClassifier(
            linear_model.LogisticRegression())

    if task == "class":
        return [
            # One-vs-rest for more than two classes (River's LogisticRegression is binary).
            ("LogisticRegression", lambda: preprocessing.StandardScaler() | logistic(classes)),
            ("KNNClassifier", lambda: neighbors.KNNClassifier()),
            ("HoeffdingAdaptiveTree", lambda: tree.HoeffdingAdaptiveTreeClassifier(seed=seed)),
            ("ARFClassifier", lambda: forest.ARFClassifier(seed=seed)),
        ]
    return [
        ("LinearRegression", lambda: preprocessing.StandardScaler() | linear_model.LinearRegression()),
        ("KNNRegressor", lambda: neighbors.KNNRegressor()),
        ("HoeffdingAdaptiveTree", lambda: tree.HoeffdingAdaptiveTreeRegressor(seed=seed)),
        ("ARFRegressor", lambda: forest.ARFRegressor(seed=seed)),
    ]


def score(task, truth, predictions):
    """Accuracy (a missing prediction counts as wrong; two classes compared as booleans,
    which binary River learners predict for 0/1 labels) or RMSE (as the mean's error)."""
    if task == "class":
        same = (lambda p, t: bool(p) == bool(t)) if len(set(truth)) <= 2 else (lambda p, t: p == t)
        return sum(p is not None and same(p, t) for t, p in zip(truth, predictions)) / len(truth)
    return math.sqrt(sum((t - (p if p is not None else 0.0)) ** 2 for t, p in zip(truth, predictions)) / len(truth))


def run_river(make, rows, task, runs):
    best, predictions = math.inf, None
    for _ in range(runs):
        model, out = make(), []
        start = time.perf_counter()
        for x, y in rows:
            out.append(model.predict_one(x))
            model.learn_one(x, y)
        best = min(best, time.perf_counter() - start)
        predictions = out
    return predictions, len(rows) / best


def kestrel_summary(path, learner, seed=None):
    cmd = [KESTREL, "stream", "--learner", learner, "--input", path]
    if seed is not None:
        cmd += ["--seed", str(seed)]
    done = subprocess.run(cmd, capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed: {done.stderr}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def summary_score(summary, task):
    """The accuracy or RMSE of a `kestrel stream` summary."""
    return summary["accuracy"] if task == "class" else math.sqrt(summary["mse"])


def run_kestrel(path, learner, task, runs):
    """Score, best rate over `runs` runs of `kestrel stream` (its summary line), the
    command, and for a regressor whose predictions were not always its model's, the
    model's own RMSE (`model_mse`: what a saved model would have scored)."""
    rate, summary = 0.0, None
    for _ in range(runs):
        summary = kestrel_summary(path, learner)
        rate = max(rate, summary["samples_per_sec"])
    value = summary_score(summary, task)
    model = f" (the model alone {math.sqrt(summary['model_mse']):.4f})" if "model_mse" in summary else ""
    return value, rate, f"kestrel stream --learner {learner} --input {os.path.relpath(path, ROOT)}", model


def kestrel_accuracy_between(rows, learner, start, end):
    """Accuracy over rows start..end, from runs on the prefixes of `end` and `start` rows
    (the learner is deterministic, so the two runs agree on the first `start` rows)."""
    counts = []
    for n in (start, end):
        prefix = os.path.join(OUT, f"drift-{n}.csv")
        write_csv(prefix, rows[:n])
        summary = kestrel_summary(prefix, learner)
        counts.append(summary["accuracy"] * summary["n"])
    return (counts[1] - counts[0]) / (end - start)


def river_log_loss(make, rows):
    """A River learner's prequential log loss: the mean of −ln p over the rows, p the
    probability its predict_proba_one gave the row's own class before learning it (10⁻¹⁵ at
    least, and for a class it had not met: the convention of `kestrel stream`'s summary)."""
    model, total = make(), 0.0
    for x, y in rows:
        total -= math.log(max(model.predict_proba_one(x).get(y, 0.0), 1e-15))
        model.learn_one(x, y)
    return total / len(rows)


def log_loss_table(all_streams):
    """The prequential log loss of every classifier's class probabilities on every
    classification stream (kestrel's from its summary, `log_loss`)."""
    river = [label for label, _ in river_learners("class", 2)]
    print()
    print("| stream | " + " | ".join(f"River {label}" for label in river) + " | kestrel svm | kestrel rsvm |")
    print("| --- |" + " ---: |" * (len(river) + 2))
    for name, task, rows in all_streams:
        if task != "class":
            continue
        path = os.path.join(OUT, f"{name}.csv")
        classes = len({y for _, y in rows})
        losses = [river_log_loss(make, rows) for _, make in river_learners(task, classes)]
        losses += [kestrel_summary(path, learner)["log_loss"] for learner in ("svm", "rsvm")]
        best = min(losses)
        cells = [f"**{loss:.4f}**" if loss == best else f"{loss:.4f}" for loss in losses]
        print(f"| {name} | " + " | ".join(cells) + " |")
        sys.stdout.flush()


# The streams, scored again over seeds.
SEEDED_STREAMS = ("Phishing", "Bananas", "TrumpApproval", "drift")
# River's learners that take a seed.
SEEDED_RIVER = ("HoeffdingAdaptiveTree", "ARFClassifier", "ARFRegressor")


def seed_table(all_streams, seeds):
    """Mean, lowest and highest score over seeds 1..`seeds` of every seeded learner on the
    issue's streams (the CSV files the table wrote)."""
    print()
    print(f"| stream | learner | mean score over seeds 1-{seeds} | lowest | highest |")
    print("| --- | --- | --- | --- | --- |")
    for name, task, rows in all_streams:
        if name not in SEEDED_STREAMS:
            continue
        path = os.path.join(OUT, f"{name}.csv")
        truth = [y for _, y in rows]
        classes = len(set(truth))
        runs = []
        for label, _ in river_learners(task, classes):
            if label in SEEDED_RIVER:
                makes = [dict(river_learners(task, classes, seed))[label] for seed in range(1, seeds + 1)]
                runs.append((f"River {label}", [score(task, truth, run_river(make, rows, task, 1)[0]) for make in makes]))
        for learner in ["svm", "rsvm"] if task == "class" else ["slkl"]:
            summaries = [kestrel_summary(path, learner, seed) for seed in range(1, seeds + 1)]
            runs.append((f"`kestrel stream --learner {learner} --seed S`", [summary_score(s, task) for s in summaries]))
        metric = "accuracy" if task == "class" else "RMSE"
        for label, scores in runs:
            mean = sum(scores) / len(scores)
            print(f"| {name} | {label} | {metric} {mean:.4f} | {min(scores):.4f} | {max(scores):.4f} |")
        sys.stdout.flush()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--skip-build", action="store_true")
    parser.add_argument("--log-loss", action="store_true", help="only the table of prequential log losses")
    parser.add_argument("--streams", help="comma-separated names of the streams to run (default: all)")
    args = parser.parse_args()
    chosen = set(args.streams.split(",")) if args.streams else None
    if not args.skip_build:
        subprocess.run(["cargo", "build", "--release", "-p", "kestrel-stream"], cwd=ROOT, check=True)
    os.makedirs(OUT, exist_ok=True)
    all_streams = [s for s in streams() if chosen is None or s[0] in chosen]
    if args.log_loss:
        for name, _, rows in all_streams:
            write_csv(os.path.join(OUT, f"{name}.csv"), rows)
        log_loss_table(all_streams)
        return
    print("| stream | learner | score | rows/s | ratio of rates to River's best-scoring |")
    print("| --- | --- | --- | --- | --- |")
    for name, task, rows in all_streams:
        path = os.path.join(OUT, f"{name}.csv")
        write_csv(path, rows)
        truth = [y for _, y in rows]
        results = []
        for label, make in river_learners(task, len(set(truth))):
            predictions, rate = run_river(make, rows, task, args.runs)
            after = score(task, truth[5000:6000], predictions[5000:6000]) if name == "drift" else None
            results.append((f"River {label}", score(task, truth, predictions), rate, after, ""))
        better = max if task == "class" else min
        best = better(results, key=lambda r: r[1])
        for learner in ["svm", "rsvm"] if task == "class" else ["slkl"]:
            value, rate, command, model = run_kestrel(path, learner, task, args.runs)
            after = kestrel_accuracy_between(rows, learner, 5000, 6000) if name == "drift" else None
            results.append((f"`{command}`", value, rate, after, model))
        metric = "accuracy" if task == "class" else "RMSE"
        for label, value, rate, after, model in results:
            extra = (f" (rows 5,000-5,999: {after:.3f})" if after is not None else "") + model
            print(f"| {name} | {label} | {metric} {value:.4f}{extra} | {rate:,.0f} | {rate / best[2]:.1f}× |")
        sys.stdout.flush()
    if args.seeds > 0:
        seed_table(all_streams, args.seeds)


if __name__ == "__main__":
    main()
