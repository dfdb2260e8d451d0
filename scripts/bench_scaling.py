"""`kestrel train --scale off|on|auto` on data sets in raw units: which choice `auto` makes,
by the leave-one-out scores it compares, against the test scores of both.

Sets: the shared data's `*_raw.csv` files; River's bundled ImageSegments, Shuttle (first
10,000 rows), Yeast (label Class1), Bananas, ChickWeights and TrumpApproval; statsmodels'
bundled anes96 (vote), fair (any affair), randhie (mdvis), star98 (NABOVE), ccard (AVGEXP)
and engel (foodexp). Each set that is not split already is shuffled and cut 75/25 with
seed 1 (stratified for classes). Classes: `--learner rsvm`, test accuracy; targets:
`--learner krr`, test MSE. Seconds are the whole `train` process. Then the two learners
`auto` standardises by rule, on the classification sets: the linear SVM (`--learner svm
--scale off|on`, test accuracy, and whether its solver converged), and the novelty
detector (`KernelNoveltyDetector(scale=False|True)` trained on one class's training rows,
the test rows' AUC of the other classes against it, the mean over the classes of 10 rows
or more).

    pip install statsmodels          # besides python/run-tests.sh's venv
    target/python-venv/bin/python scripts/bench_scaling.py [path/to/kestrel]
"""

import itertools
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import kestrel
import numpy as np
import pandas as pd
import statsmodels.datasets as sm
from river import datasets
from sklearn.metrics import roc_auc_score
from sklearn.model_selection import train_test_split

ROOT = Path(__file__).resolve().parent.parent
SHARED = ROOT.parent / "shared" / "data"
KESTREL = sys.argv[1] if len(sys.argv) > 1 else str(ROOT / "target" / "release" / "kestrel")


def split(out, name, frame, task):
    """Writes `name`'s train and test CSV files (label `y`, last) into `out`."""
    stratify = frame["y"] if task == "class" else None
    train, test = train_test_split(frame, test_size=0.25, random_state=1, stratify=stratify)
    train.to_csv(out / f"{name}.train.csv", index=False)
    test.to_csv(out / f"{name}.test.csv", index=False)
    return name, task


def river(stream, rows=None, target=None):
    """A River stream's first `rows` as a frame with the label `y` last, shuffled."""
    records = []
    for x, y in itertools.islice(stream, rows):
        y = y[target] if target is not None else y
        records.append({**{k: float(v) for k, v in x.items()}, "y": int(y) if isinstance(y, bool) else y})
    return pd.DataFrame(records).sample(frac=1, random_state=1)


def statsmodels(name, target, drop=()):
    """A statsmodels set with `target` as `y`, last."""
    frame = getattr(sm, name).load_pandas().data.drop(columns=list(drop))
    frame["y"] = frame.pop(target)
    return frame


def sets(out):
    """Every set's (name, task), its files written into `out`."""
    made = []
    for name in ["wine", "breast_cancer", "phishing", "digits", "digits3", "heart_scale", "iris", "diabetes"]:
        for part in ["train", "test"]:
            shutil.copy(SHARED / name / f"{part}_raw.csv", out / f"{name} raw.{part}.csv")
        made.append((f"{name} raw", "target" if name == "diabetes" else "class"))
    fair = statsmodels("fair", "affairs")
    fair["y"] = (fair["y"] > 0).astype(int)
    made += [
        split(out, "anes96", statsmodels("anes96", "vote"), "class"),
        split(out, "fair", fair, "class"),
        split(out, "ImageSegments", river(datasets.ImageSegments()), "class"),
        split(out, "Shuttle (10⁴ rows)", river(datasets.Shuttle(), rows=10_000), "class"),
        split(out, "Yeast, Class1", river(datasets.Yeast(), target="Class1"), "class"),
        split(out, "Bananas", river(datasets.Bananas()), "class"),
        split(out, "randhie", statsmodels("randhie", "mdvis"), "target"),
        split(out, "star98", statsmodels("star98", "NABOVE", drop=["NBELOW"]), "target"),
        split(out, "ccard", statsmodels("ccard", "AVGEXP"), "target"),
        split(out, "engel", statsmodels("engel", "foodexp"), "target"),
        split(out, "ChickWeights", river(datasets.ChickWeights()), "target"),
        split(out, "TrumpApproval", river(datasets.TrumpApproval()), "target"),
    ]
    return made


def run(out, name, task, scale):
    """Trains with `--scale scale`: (test score, seconds, the summary's `scaling`)."""
    learner = "rsvm" if task == "class" else "krr"
    model = out / f"{name}.{scale}.kestrel"
    train = [KESTREL, "train", "--learner", learner, "--input", out / f"{name}.train.csv", "--out", model]
    start = time.perf_counter()
    fitted = subprocess.run(train + ["--scale", scale, "--json"], check=True, capture_output=True, text=True)
    seconds = time.perf_counter() - start
    scored = subprocess.run(
        [KESTREL, "eval", "--model", model, "--input", out / f"{name}.test.csv", "--json"],
        check=True,
        capture_output=True,
        text=True,
    )
    score = json.loads(scored.stdout)
    return score.get("accuracy", score.get("mse")), seconds, json.loads(fitted.stdout).get("scaling")


def linear(out, name, scale):
    """The linear SVM with `--scale scale`: (test accuracy, whether its solver converged)."""
    model = out / f"{name}.svm.kestrel"
    train = [KESTREL, "train", "--learner", "svm", "--input", out / f"{name}.train.csv", "--out", model]
    fitted = subprocess.run(train + ["--scale", scale, "--json"], check=True, capture_output=True, text=True)
    scored = subprocess.run(
        [KESTREL, "eval", "--model", model, "--input", out / f"{name}.test.csv", "--json"],
        check=True,
        capture_output=True,
        text=True,
    )
    return json.loads(scored.stdout)["accuracy"], json.loads(fitted.stdout)["converged"]


def novelty(out, name, scale):
    """The novelty detector's mean one-class test AUC, standardised or not."""
    train, test = (pd.read_csv(out / f"{name}.{part}.csv") for part in ["train", "test"])
    X, y = train.iloc[:, :-1].to_numpy(), train.iloc[:, -1].to_numpy()
    X_test, y_test = test.iloc[:, :-1].to_numpy(), test.iloc[:, -1].to_numpy()
    aucs = []
    for c in np.unique(y):
        if (y == c).sum() < 10 or len(np.unique(y_test == c)) < 2:
            continue
        detector = kestrel.KernelNoveltyDetector(scale=scale).fit(X[y == c])
        aucs.append(roc_auc_score(y_test != c, -detector.decision_function(X_test)))
    return float(np.mean(aucs))


def main():
    print("| set | task | leave-one-out as given / standardised | test as given / standardised "
          "| `auto` chose | seconds off / on / auto |")
    print("|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp)
        made = sets(out)
        for name, task in made:
            (off, t_off, _), (on, t_on, _), (auto, t_auto, scaling) = (run(out, name, task, s) for s in ["off", "on", "auto"])
            fmt = (lambda v: f"{100 * v:.2f} %") if task == "class" else (lambda v: f"{v:.4g}")
            if "loo" in scaling:
                loo = f"{scaling['loo']['as_given']:.4g} / {scaling['loo']['standardised']:.4g}"
            else:
                loo = f"not compared: {scaling['not_compared']}"
            better = (max if task == "class" else min)(off, on)
            chose = "standardised" if scaling["standardised"] else "as given"
            verdict = "equal" if off == on else ("the better" if auto == better else "the worse")
            print(f"| {name} | {task} | {loo} | {fmt(off)} / {fmt(on)} | {chose}, {verdict} "
                  f"| {t_off:.2f} / {t_on:.2f} / {t_auto:.2f} |", flush=True)
        print("\n| set | linear SVM: test accuracy as given / standardised (converged) "
              "| novelty detector: mean AUC as given / standardised |")
        print("|---|---|---|")
        for name, task in made:
            if task != "class":
                continue
            (off, off_converged), (on, on_converged) = (linear(out, name, s) for s in ["off", "on"])
            aucs = f"{novelty(out, name, False):.4f} / {novelty(out, name, True):.4f}"
            print(f"| {name} | {100 * off:.2f} % ({'yes' if off_converged else 'no'}) / "
                  f"{100 * on:.2f} % ({'yes' if on_converged else 'no'}) | {aucs} |", flush=True)


if __name__ == "__main__":
    main()
