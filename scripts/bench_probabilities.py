#!/usr/bin/env python3
"""Class probabilities of the online SVMs (`predict_proba_one`) against River's learners,
by River's own metrics of probabilities, in one run.

Protocol (River's progressive validation, `evaluate.progressive_val_score`): every sample
is predicted by the model learned from the samples before it, scored, then learned from.
Streams bundled with River: Phishing (1,250 rows, 9 features, binary), Bananas (5,300
rows, 2 features, binary), scored by ROCAUC and LogLoss; ImageSegments (2,310 rows, 18
features, 7 classes), scored by CrossEntropy. Accuracy beside them.

Learners, every setting at its default:
  kestrel: kestrel.online.WindowSVM() and StreamingRSVM();
  River:   preprocessing.StandardScaler() | linear_model.LogisticRegression() (binary) or
           | linear_model.SoftmaxRegression() (multi-class), neighbors.KNNClassifier(),
           tree.HoeffdingAdaptiveTreeClassifier(seed=42), forest.ARFClassifier(seed=42).
Time: seconds of the whole progressive validation in this process, best of --runs.

Usage (the venv of python/run-tests.sh has kestrel and River installed):
    target/python-venv/bin/python scripts/bench_probabilities.py [--runs 3]
Prints a Markdown table for BENCHMARKS.md.
"""
import argparse
import time

from river import datasets, evaluate, forest, linear_model, metrics, neighbors, preprocessing, tree

from kestrel.online import StreamingRSVM, WindowSVM

BINARY = [datasets.Phishing, datasets.Bananas]
MULTICLASS = [datasets.ImageSegments]


def learners(multiclass):
    """Each learner's name and a function making it afresh."""
    linear = linear_model.SoftmaxRegression if multiclass else linear_model.LogisticRegression
    return [
        ("kestrel WindowSVM()", WindowSVM),
        ("kestrel StreamingRSVM()", StreamingRSVM),
        (f"River {linear.__name__} (StandardScaler first)", lambda: preprocessing.StandardScaler() | linear()),
        ("River KNNClassifier", neighbors.KNNClassifier),
        ("River HoeffdingAdaptiveTree", lambda: tree.HoeffdingAdaptiveTreeClassifier(seed=42)),
        ("River ARFClassifier", lambda: forest.ARFClassifier(seed=42)),
    ]


def metric(multiclass):
    """River's metrics of probabilities for the stream, then its accuracy."""
    if multiclass:
        return metrics.CrossEntropy() + metrics.Accuracy()
    return metrics.ROCAUC() + metrics.LogLoss() + metrics.Accuracy()


def run(dataset, make, multiclass, runs):
    """The metrics' values and the best time of `runs` progressive validations."""
    best, values = float("inf"), None
    for _ in range(runs):
        scores = metric(multiclass)
        start = time.perf_counter()
        evaluate.progressive_val_score(dataset(), make(), scores)
        best = min(best, time.perf_counter() - start)
        values = [m.get() for m in scores]
    return values, best


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    print("| stream | learner | ROCAUC | LogLoss / CrossEntropy | accuracy | seconds |")
    print("|---|---|---:|---:|---:|---:|")
    for multiclass, streams in [(False, BINARY), (True, MULTICLASS)]:
        for dataset in streams:
            for name, make in learners(multiclass):
                values, seconds = run(dataset, make, multiclass, args.runs)
                auc = "—" if multiclass else f"{100 * values[0]:.2f} %"
                loss, accuracy = values[-2], values[-1]
                print(f"| {dataset.__name__} | {name} | {auc} | {loss:.4f} | {100 * accuracy:.2f} % | {seconds:.2f} |")


if __name__ == "__main__":
    main()
