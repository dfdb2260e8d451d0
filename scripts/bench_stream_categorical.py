#!/usr/bin/env python3
"""A stream with a column of states, in one run: `kestrel stream --categorical` against
River's learners, prequentially (each row predicted, scored, then learned from).

The stream (10,000 rows, seeded): a unit's temperature (°C) and humidity (%) in raw units
and its mode (`idle`, `heat`, `cool`, `defrost`, in shares 40/25/25/10 %); a row is a fault
(label 1) where the readings do not fit the mode — heat above 24 °C, cool below 18 °C,
defrost above 70 % humidity, idle more than 5 °C from 21 °C — with 3 % of the labels
flipped.

kestrel (its defaults otherwise): `--learner rsvm` and `--learner svm` with
`--categorical mode=idle,heat,cool,defrost`, and rsvm without the mode
(`--skip-column mode`). River: LogisticRegression and KNNClassifier after a
StandardScaler on the readings and a OneHotEncoder on the mode (the River docs'
`compose.Select` union); HoeffdingAdaptiveTreeClassifier and ARFClassifier on the raw rows,
the mode a nominal feature as they take one. Rows per second: kestrel's own
(`samples_per_sec`, parsing included); River's predict + learn over the rows in memory,
best of --runs.

Usage: python scripts/bench_stream_categorical.py [--runs 3]   (in the venv
python/run-tests.sh builds, after `cargo build --release -p kestrel-stream`). Prints
Markdown for BENCHMARKS.md.
"""
import argparse
import csv
import json
import math
import os
import random
import subprocess
import tempfile
import time

from river import compose, forest, linear_model, neighbors, preprocessing, tree

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
KESTREL = os.path.join(ROOT, "target", "release", "kestrel")
MODES = ["idle", "heat", "cool", "defrost"]


def stream(n=10_000, seed=7):
    rng = random.Random(seed)
    rows = []
    for _ in range(n):
        mode = rng.choices(MODES, weights=[40, 25, 25, 10])[0]
        temp, humidity = rng.gauss(21, 4), rng.uniform(30, 90)
        fault = {
            "idle": abs(temp - 21) > 5,
            "heat": temp > 24,
            "cool": temp < 18,
            "defrost": humidity > 70,
        }[mode]
        if rng.random() < 0.03:
            fault = not fault
        rows.append(({"temp": round(temp, 3), "humidity": round(humidity, 2), "mode": mode}, int(fault)))
    return rows


def river_learners():
    def encoded():
        readings = compose.Select("temp", "humidity") | preprocessing.StandardScaler()
        return readings + (compose.Select("mode") | preprocessing.OneHotEncoder())

    encoder = "River StandardScaler + OneHotEncoder"
    return [
        (f"{encoder} → LogisticRegression", lambda: encoded() | linear_model.LogisticRegression()),
        (f"{encoder} → KNNClassifier", lambda: encoded() | neighbors.KNNClassifier()),
        ("River HoeffdingAdaptiveTreeClassifier", lambda: tree.HoeffdingAdaptiveTreeClassifier(seed=42)),
        ("River ARFClassifier", lambda: forest.ARFClassifier(seed=42)),
    ]


def run_river(make, rows, runs):
    best, correct = math.inf, 0
    for _ in range(runs):
        model, correct = make(), 0
        start = time.perf_counter()
        for x, y in rows:
            correct += model.predict_one(x) == y
            model.learn_one(x, y)
        best = min(best, time.perf_counter() - start)
    return correct / len(rows), len(rows) / best


def run_kestrel(path, flags, runs):
    rate, summary = 0.0, None
    for _ in range(runs):
        done = subprocess.run([KESTREL, "stream", "--input", path, *flags], capture_output=True, text=True, check=True)
        summary = json.loads(done.stdout.strip().splitlines()[-1])
        rate = max(rate, summary["samples_per_sec"])
    return summary["accuracy"], rate


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=3)
    runs = parser.parse_args().runs
    rows = stream()
    given = ["--categorical", "mode=" + ",".join(MODES)]
    kestrel_runs = [
        ("rsvm", ["--learner", "rsvm", *given]),
        ("svm", ["--learner", "svm", *given]),
        ("rsvm, the mode left out", ["--learner", "rsvm", "--skip-column", "mode"]),
    ]
    print(f"{len(rows)} rows, {sum(y for _, y in rows)} faults\n")
    print("| learner | prequential accuracy | rows/s |")
    print("|---|---:|---:|")
    with tempfile.TemporaryDirectory() as workdir:
        path = os.path.join(workdir, "modes.csv")
        with open(path, "w", newline="") as f:
            writer = csv.writer(f)
            writer.writerow(["temp", "humidity", "mode", "fault"])
            writer.writerows([x["temp"], x["humidity"], x["mode"], y] for x, y in rows)
        for name, flags in kestrel_runs:
            accuracy, rate = run_kestrel(path, [*flags, "--json", "--report-every", "0"], runs)
            shown = " ".join(flag if "," not in flag else f"{flag.split('=')[0]}=…" for flag in flags)
            print(f"| `kestrel stream {shown}` ({name}) | {accuracy:.4f} | {rate:,.0f} |")
    for name, make in river_learners():
        accuracy, rate = run_river(make, rows, runs)
        print(f"| {name} | {accuracy:.4f} | {rate:,.0f} |")


if __name__ == "__main__":
    main()
