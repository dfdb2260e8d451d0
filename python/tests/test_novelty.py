"""kestrel.KernelNoveltyDetector: the model of ``kestrel train --learner novelty`` byte for
byte, scored against scikit-learn's OneClassSVM on real data, scikit-learn's outlier
conventions, and errors that raise."""

import subprocess

import numpy as np
import pytest
from sklearn.datasets import load_digits
from sklearn.exceptions import NotFittedError
from sklearn.metrics import roc_auc_score
from sklearn.model_selection import train_test_split
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.svm import OneClassSVM

import kestrel
from test_estimators import kestrel_cli


def sensor_rows(n, seed):
    rng = np.random.default_rng(seed)
    return np.column_stack([1e5 + 300 * rng.normal(size=n), 0.01 * rng.normal(size=n), 20 + rng.normal(size=n)])


def test_the_model_is_the_cli_s(tmp_path):
    """`kestrel train --learner novelty` standardises by default (`--scale auto`'s rule for
    the detector), as `scale="auto"` does; `scale=False` is `--scale off`. Either way the
    pressure faults, ten standard deviations out, are flagged."""
    X = sensor_rows(400, 1)
    path, out = tmp_path / "normal.csv", tmp_path / "novelty.kestrel"
    np.savetxt(path, np.column_stack([X, np.zeros(len(X))]), delimiter=",", header="a,b,c,label", comments="",
               fmt="%.17g")
    test = sensor_rows(100, 2)
    test[::10, 0] += 3000.0  # the pressure
    test_path = tmp_path / "test.csv"
    np.savetxt(test_path, np.column_stack([test, np.zeros(len(test))]), delimiter=",", header="a,b,c,label",
               comments="", fmt="%.17g")
    for scale, flags in (("auto", []), (False, ["--scale", "off"])):
        subprocess.run([kestrel_cli(), "train", "--learner", "novelty", "--input", path, "--quantile", "0.95",
                        "--centers", "64", "--out", out, *flags], check=True, capture_output=True)
        detector = kestrel.KernelNoveltyDetector(contamination=0.05, n_centres=64, scale=scale).fit(X)
        assert kestrel.with_feature_names(detector.to_bytes(), ["a", "b", "c"]) == out.read_bytes()
        assert kestrel.load(out.read_bytes()).info["scaled"] == (scale == "auto")
        lines = subprocess.run([kestrel_cli(), "predict", "--model", out, "--input", test_path], check=True,
                               capture_output=True, text=True).stdout.split()
        cli_scores = np.array([float(line.split(",")[0]) for line in lines])
        cli_flags = np.array([float(line.split(",")[1]) for line in lines])
        np.testing.assert_array_equal(-detector.score_samples(test), cli_scores)
        np.testing.assert_array_equal(detector.predict(test), np.where(cli_flags == 1.0, -1, 1))
        assert (detector.predict(test)[::10] == -1).all(), scale


def test_one_digit_normal_scores_as_one_class_svm():
    X, y = load_digits(return_X_y=True)
    X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.25, random_state=0, stratify=y)
    ours, theirs = [], []
    for digit in range(10):
        normal = X_train[y_train == digit]
        truth = (y_test != digit).astype(int)
        detector = make_pipeline(StandardScaler(), kestrel.KernelNoveltyDetector()).fit(normal)
        reference = make_pipeline(StandardScaler(), OneClassSVM()).fit(normal)
        ours.append(roc_auc_score(truth, -detector.score_samples(X_test)))
        theirs.append(roc_auc_score(truth, -reference.score_samples(X_test)))
    assert np.mean(ours) > 0.95 and np.mean(ours) > np.mean(theirs) - 0.02, (np.mean(ours), np.mean(theirs))


def test_outlier_conventions():
    X = sensor_rows(1000, 3)
    detector = kestrel.KernelNoveltyDetector(contamination=0.1).fit(X)
    flagged = detector.predict(X) == -1
    assert flagged.mean() == pytest.approx(0.1, abs=0.002)
    decision = detector.decision_function(X)
    np.testing.assert_array_equal(decision < 0, flagged)
    np.testing.assert_allclose(decision, detector.score_samples(X) - detector.offset_)
    assert detector.offset_ == -detector.summary_["threshold"]
    assert kestrel.load(detector.to_bytes()).info["task"] == "detector"


def test_errors_raise():
    X = sensor_rows(50, 4)
    with pytest.raises(NotFittedError):
        kestrel.KernelNoveltyDetector().predict(X)
    with pytest.raises(ValueError, match="contamination"):
        kestrel.KernelNoveltyDetector(contamination=0.0).fit(X)
    with pytest.raises(ValueError, match="features"):
        kestrel.KernelNoveltyDetector().fit(X).score_samples(X[:, :2])
    svm = kestrel.DCDLinearSVC().fit(X, (X[:, 2] > 20).astype(int))
    with pytest.raises(ValueError, match="not a novelty detector"):
        kestrel._kestrel.novelty_scores(svm.to_bytes(), np.ascontiguousarray(X))
