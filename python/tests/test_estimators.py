"""The scikit-learn estimators: scikit-learn's own estimator checks, accuracy against
scikit-learn on real data, the model bytes shared with the CLI (f32 predictions equal bit
for bit), pickling, string classes, and errors that raise instead of crashing."""

import json
import os
import pickle
import shutil
import subprocess
import warnings
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.base import clone, is_classifier
from sklearn.calibration import CalibratedClassifierCV
from sklearn.datasets import (
    load_breast_cancer,
    load_diabetes,
    load_digits,
    load_wine,
    make_classification,
    make_friedman1,
    make_moons,
)
from sklearn.exceptions import ConvergenceWarning
from sklearn.kernel_ridge import KernelRidge
from sklearn.metrics import balanced_accuracy_score, log_loss
from sklearn.model_selection import GridSearchCV, train_test_split
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVC, SVR, LinearSVC
from sklearn.utils.class_weight import compute_sample_weight
from sklearn.utils.validation import has_fit_parameter
from sklearn.utils.estimator_checks import parametrize_with_checks

import kestrel

ROOT = Path(__file__).resolve().parents[2]


def kestrel_cli():
    """The CLI the test command built (KESTREL_CLI, or the workspace's release build)."""
    path = Path(os.environ.get("KESTREL_CLI", ROOT / "target" / "release" / "kestrel"))
    if not path.exists():
        subprocess.run(["cargo", "build", "--release", "-p", "kestrel-stream"], cwd=ROOT, check=True)
    return path


ESTIMATORS = [
    kestrel.DCDLinearSVC(),
    kestrel.ReducedKernelSVC(),
    kestrel.SLKLRegressor(),
    kestrel.KernelRidgeNystrom(),
    kestrel.SmoothSVR(),
    kestrel.KernelPLSNystrom(),
    kestrel.KernelNoveltyDetector(),
    kestrel.NPKL(),
    kestrel.SpectralClustering(),
    kestrel.LaplacianEigenmap(),
]

# NPKL is transductive and learns from pairs (seed 004): what two of scikit-learn's checks
# expect of a transformer and of a clusterer it does not do, by design.
_NPKL_TRANSDUCTIVE = (
    "fit_transform returns the learned columns of the training rows; transform places rows by the "
    "out-of-sample extension (eq. 13), which differs from the learned column of a row in a pair"
)
_NPKL_NEEDS_PAIRS = "fit(X) without labels or pairs has nothing to learn the kernel from: NPKL raises ValueError"


# scikit-learn marks its own LinearSVC and SVC alike: the weighted fit equals the fit on
# repeated rows to the solver's tolerance, not to 1e-7 (test_sample_weight_counts_as_repeated_rows).
_REPEATED_ROWS = (
    "a row of weight k solves the problem of k copies of it, but to the solver's tolerance (DCD stops at "
    "LIBLINEAR's ε), and 'auto' chooses the reduced set and the settings from the rows themselves (two "
    "copies of a row are never two centres, and a copy stays in the other's leave-one-out fit)"
)
_SAMPLE_WEIGHT_EQUIVALENCE = ("check_sample_weight_equivalence_on_dense_data", "check_sample_weight_equivalence_on_sparse_data")


def expected_failed_checks(estimator):
    if isinstance(estimator, (kestrel.DCDLinearSVC, kestrel.ReducedKernelSVC, kestrel.KernelRidgeNystrom, kestrel.SmoothSVR)):
        return dict.fromkeys(_SAMPLE_WEIGHT_EQUIVALENCE, _REPEATED_ROWS)
    if isinstance(estimator, kestrel.NPKL):
        return {
            "check_transformer_general": _NPKL_TRANSDUCTIVE,
            "check_transformer_data_not_an_array": _NPKL_TRANSDUCTIVE,
            "check_clustering": _NPKL_NEEDS_PAIRS,
        }
    return {}


@parametrize_with_checks(ESTIMATORS, expected_failed_checks=expected_failed_checks)
def test_sklearn_estimator_checks(estimator, check):
    check(estimator)


def _repeated_rows_problem(kind):
    """A problem for `kind` of the weighted fits, with integer weights 1-3."""
    rng = np.random.default_rng(1)
    if kind == "linear":
        X, y = load_breast_cancer(return_X_y=True)
        X = StandardScaler().fit_transform(X)
    else:
        X = rng.uniform(-1, 1, (40, 2))
        target = np.sin(3 * X[:, 0]) + X[:, 1] ** 2 + 0.1 * rng.normal(size=40)
        y = target if kind == "regression" else (target > np.median(target)).astype(int)
    return X, y, rng.integers(1, 4, len(y))


@pytest.mark.parametrize(
    "estimator, kind, tolerance",
    [
        # DCD stops at its tolerance, the repeated rows' problem after other steps.
        (kestrel.DCDLinearSVC(C=0.5, tol=1e-4), "linear", 1e-2),
        # Every row a centre (at most 64 of them, δ tiny): the same span with or without copies.
        (kestrel.ReducedKernelSVC(C=1.0, gamma=1.0, n_centres=64, delta=1e-9, tol=1e-8), "classification", 1e-3),
        (kestrel.KernelRidgeNystrom(alpha=0.1, gamma=1.0, n_centres=64), "regression", 1e-3),
        (kestrel.SmoothSVR(C=10.0, gamma=1.0, epsilon=0.05, n_centres=64), "regression", 1e-3),
    ],
)
def test_sample_weight_counts_as_repeated_rows(estimator, kind, tolerance):
    X, y, counts = _repeated_rows_problem(kind)
    values = "predict" if kind == "regression" else "decision_function"
    test = X
    weighted = getattr(clone(estimator).fit(X, y, sample_weight=counts.astype(float)), values)(test)
    repeated = getattr(clone(estimator).fit(np.repeat(X, counts, axis=0), np.repeat(y, counts)), values)(test)
    unweighted = getattr(clone(estimator).fit(X, y), values)(test)
    scale = np.abs(repeated).max()
    error = np.abs(weighted - repeated).max()
    assert error <= tolerance * scale, (error, scale)
    # The weights matter: the unweighted fit is far from both.
    assert np.abs(unweighted - repeated).max() > 30 * error, (np.abs(unweighted - repeated).max(), error)


@pytest.mark.parametrize(
    "estimator", [kestrel.DCDLinearSVC(), kestrel.ReducedKernelSVC(), kestrel.KernelRidgeNystrom(), kestrel.SmoothSVR()]
)
def test_unit_and_zero_sample_weights_change_no_bit(estimator):
    X, y, _ = _repeated_rows_problem("classification" if is_classifier(estimator) else "regression")
    plain = clone(estimator).fit(X, y).model_bytes_
    assert clone(estimator).fit(X, y, sample_weight=np.ones(len(y))).model_bytes_ == plain
    # Rows of weight 0 are left out: the model of the other rows.
    extra = np.random.default_rng(3).uniform(-1, 1, (7, 2))
    X_more, y_more = np.vstack([X, extra]), np.r_[y, y[:7]]
    weights = np.r_[np.ones(len(y)), np.zeros(7)]
    assert clone(estimator).fit(X_more, y_more, sample_weight=weights).model_bytes_ == plain


@pytest.mark.parametrize("estimator", [kestrel.DCDLinearSVC(), kestrel.ReducedKernelSVC()])
def test_balanced_sample_weights_are_balanced_class_weights_for_two_classes(estimator):
    # Two classes: a row's own weight and its class's weigh the same cost (and the same
    # leave-one-out error behind "auto"), so the two fits agree to rounding, settings too.
    X, y = make_classification(n_samples=400, n_features=6, weights=[0.9], random_state=3)
    by_class = clone(estimator).set_params(class_weight="balanced").fit(X, y)
    by_row = clone(estimator).fit(X, y, sample_weight=compute_sample_weight("balanced", y))
    scale = np.abs(by_class.decision_function(X)).max()
    assert np.abs(by_class.decision_function(X) - by_row.decision_function(X)).max() <= 1e-9 * scale
    assert by_class.summary_.get("chosen") == by_row.summary_.get("chosen")


def test_bad_sample_weights_raise_and_the_cg_solver_takes_none():
    X, y, counts = _repeated_rows_problem("regression")
    for bad, message in [
        (-counts.astype(float), "Negative"),
        (np.r_[counts[:-1], np.nan].astype(float), "NaN"),
        (counts[:-1].astype(float), "shape"),
        (np.zeros(len(y)), "non-zero"),
        (np.r_[counts[:-1], np.inf].astype(float), "infinity"),
    ]:
        with pytest.raises(ValueError, match=message):
            kestrel.KernelRidgeNystrom().fit(X, y, sample_weight=bad)
    with pytest.raises(ValueError, match="exact solver"):
        kestrel.KernelRidgeNystrom(solver="cg").fit(X, y, sample_weight=counts.astype(float))
    # Only the learners that weigh rows take the argument.
    for estimator in [kestrel.SLKLRegressor(), kestrel.KernelPLSNystrom()]:
        assert not has_fit_parameter(estimator, "sample_weight")


def test_reduced_kernel_svc_matches_svc_on_breast_cancer():
    X, y = load_breast_cancer(return_X_y=True)
    X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.25, random_state=0, stratify=y)
    ours = make_pipeline(StandardScaler(), kestrel.ReducedKernelSVC()).fit(X_train, y_train).score(X_test, y_test)
    theirs = make_pipeline(StandardScaler(), SVC()).fit(X_train, y_train).score(X_test, y_test)
    assert ours >= theirs - 0.02, (ours, theirs)


def test_probabilities_are_scikit_learns_sigmoid_calibration():
    """probability=True fits what CalibratedClassifierCV(method="sigmoid", ensemble=False)
    fits around the same estimator: Platt's sigmoid of 5-fold held-out decision values
    (the folds are dealt differently, so the two agree closely, not bit for bit)."""
    X, y = load_breast_cancer(return_X_y=True)
    X = StandardScaler().fit_transform(X)
    X_train, X_test, y_train, y_test = train_test_split(X, y, random_state=0, stratify=y)
    settings = dict(C=1.0, gamma=0.02, delta=0.01)
    ours = kestrel.ReducedKernelSVC(probability=True, **settings).fit(X_train, y_train)
    reference = CalibratedClassifierCV(kestrel.ReducedKernelSVC(**settings), method="sigmoid", cv=5, ensemble=False)
    p, q = ours.predict_proba(X_test), reference.fit(X_train, y_train).predict_proba(X_test)
    assert p.shape == (len(X_test), 2) and np.allclose(p.sum(axis=1), 1.0, atol=1e-12)
    assert np.abs(p - q).mean() < 0.01 and np.abs(p - q).max() < 0.05, (np.abs(p - q).mean(), np.abs(p - q).max())
    assert abs(log_loss(y_test, p) - log_loss(y_test, q)) < 0.05 * log_loss(y_test, q)
    # The decision function is the same model's: the probability of classes_[1] rises with it.
    order = np.argsort(ours.decision_function(X_test))
    assert np.all(np.diff(p[order, 1]) >= -1e-12)
    assert np.allclose(ours.predict_log_proba(X_test), np.log(p))


def test_predict_proba_is_there_only_with_probability():
    X, y = make_moons(100, noise=0.2, random_state=0)
    for estimator in (kestrel.DCDLinearSVC(), kestrel.ReducedKernelSVC()):
        assert not hasattr(estimator.fit(X, y), "predict_proba")
        with pytest.raises(AttributeError, match="has no attribute 'predict_proba'") as raised:
            estimator.predict_proba(X)
        assert "probability=True" in str(raised.value.__cause__)
        assert hasattr(estimator.set_params(probability=True).fit(X, y), "predict_proba")
    with pytest.raises(ValueError, match="no class probabilities"):
        kestrel.Model(kestrel.DCDLinearSVC().fit(X, y).to_bytes()).predict_proba(X)


def test_probabilities_of_named_classes_travel_in_the_model_file():
    """Three named classes: one column per class of classes_, each row a distribution whose
    largest is mostly the prediction; the model file gives the same through kestrel.Model
    and after pickling."""
    X, y = load_wine(return_X_y=True)
    names = np.array(["barolo", "grignolino", "barbera"])[y]
    estimator = kestrel.DCDLinearSVC(probability=True, scale=True).fit(X, names)
    p = estimator.predict_proba(X)
    assert p.shape == (len(X), 3) and np.allclose(p.sum(axis=1), 1.0, atol=1e-12)
    assert np.mean(estimator.classes_[p.argmax(axis=1)] == estimator.predict(X)) > 0.97
    assert log_loss(names, p, labels=estimator.classes_) < 0.2
    model = kestrel.Model(estimator.to_bytes())
    assert model.info["probabilities"] and model.info["class_names"] == list(estimator.classes_)
    assert np.array_equal(model.predict_proba(X), p)
    assert np.array_equal(pickle.loads(pickle.dumps(estimator)).predict_proba(X), p)


@pytest.mark.parametrize("loss", ["squared_hinge", "hinge"])
@pytest.mark.parametrize(
    "loader, class_weight",
    [(load_breast_cancer, {0: 5.0, 1: 1.0}), (load_breast_cancer, "balanced"), (load_wine, {0: 0.3, 1: 4.0, 2: 1.0})],
)
def test_class_weights_solve_linear_svcs_problem(loader, class_weight, loss):
    X, y = loader(return_X_y=True)
    X = StandardScaler().fit_transform(X)
    settings = {"C": 0.5, "loss": loss, "tol": 1e-5}
    ours = kestrel.DCDLinearSVC(class_weight=class_weight, **settings).fit(X, y).decision_function(X)
    theirs = LinearSVC(class_weight=class_weight, dual=True, max_iter=100_000, **settings).fit(X, y).decision_function(X)
    unweighted = LinearSVC(dual=True, max_iter=100_000, **settings).fit(X, y).decision_function(X)
    error, scale = np.abs(ours - theirs).max(), np.abs(theirs).max()
    assert error <= 1e-2 * scale, (error, scale)
    # Far closer to the weighted problem's solution than the unweighted one is.
    assert np.abs(unweighted - theirs).max() > 10 * error, (np.abs(unweighted - theirs).max(), error)


def test_a_solver_stopped_at_its_limit_warns_as_scikit_learns_do():
    # Breast cancer's raw features span 1e-3 to 4e3: DCD reaches its 1000 iterations first,
    # as LIBLINEAR does, and says so as scikit-learn's LinearSVC does (ConvergenceWarning).
    X, y = load_breast_cancer(return_X_y=True)
    with pytest.warns(ConvergenceWarning, match=r"stopped at its limit \(1000 iterations\).*scale=True standardises"):
        model = kestrel.DCDLinearSVC().fit(X, y)
    assert model.summary_["converged"] is False
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        assert kestrel.DCDLinearSVC(scale=True).fit(X, y).summary_["converged"] is True
        assert kestrel.DCDLinearSVC().fit(StandardScaler().fit_transform(X), y).summary_["converged"] is True


def test_balanced_class_weights_find_a_rare_class_as_svc_does():
    # One row in thirty of the positive class, two clusters a class: unweighted, the
    # leave-one-out choices give the rare class up; balanced, kestrel finds it as SVC does.
    X, y = make_classification(
        n_samples=6000, n_features=10, n_informative=5, weights=[0.97], flip_y=0.01, class_sep=0.8, random_state=1
    )
    X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.5, random_state=0, stratify=y)
    ours = kestrel.ReducedKernelSVC(class_weight="balanced").fit(X_train, y_train)
    plain = kestrel.ReducedKernelSVC().fit(X_train, y_train)
    theirs = SVC(class_weight="balanced").fit(X_train, y_train)
    models = [("ours", ours), ("plain", plain), ("svc", theirs)]
    score = {name: balanced_accuracy_score(y_test, model.predict(X_test)) for name, model in models}
    assert score["ours"] >= score["svc"] - 0.02, score
    assert score["ours"] > score["plain"] + 0.2, score
    assert ours.summary_["chosen"]["c"] != plain.summary_["chosen"]["c"]


def test_kernel_ridge_without_a_grid_matches_grid_searched_kernel_ridge_on_diabetes():
    X, y = load_diabetes(return_X_y=True)
    X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.25, random_state=0)
    model = make_pipeline(StandardScaler(), kestrel.KernelRidgeNystrom()).fit(X_train, y_train)
    grid = {"alpha": np.logspace(-3, 2, 6), "gamma": np.logspace(-4, 0, 5)}
    searched = make_pipeline(StandardScaler(), GridSearchCV(KernelRidge(kernel="rbf"), grid, cv=5))
    theirs = searched.fit(X_train, y_train).score(X_test, y_test)
    ours = model.score(X_test, y_test)
    assert ours >= theirs - 0.03, (ours, theirs)
    assert model[-1].summary_["chosen"]["lambda"] > 0


def cli_predictions(tmp_path, model_bytes, X, *flags):
    """What `kestrel predict` prints for the rows of X with the model `model_bytes`."""
    return cli_predict(tmp_path, model_bytes, X, *flags).stdout.split()


def cli_predict(tmp_path, model_bytes, X, *flags):
    """`kestrel predict` run on the rows of X with the model `model_bytes` and `flags`."""
    model_file, rows = tmp_path / "model.kestrel", tmp_path / "rows.csv"
    model_file.write_bytes(model_bytes)
    header = ",".join(f"x{j}" for j in range(X.shape[1])) + ",y"
    # repr of a float64 reads back to the same float64: the CLI sees the bits Python has.
    rows.write_text(header + "\n" + "\n".join(",".join(repr(float(v)) for v in row) + ",0" for row in X) + "\n")
    command = [kestrel_cli(), "predict", "--model", model_file, "--input", rows, *flags]
    return subprocess.run(command, capture_output=True, text=True, check=True)


@pytest.mark.parametrize("scalar", ["f32", "f64"])
def test_cli_predicts_what_python_predicts(tmp_path, scalar):
    X, y = make_moons(200, noise=0.25, random_state=1)
    regressor = kestrel.SLKLRegressor(scalar=scalar, n_centres=32).fit(X, np.sin(3 * X[:, 0]) + X[:, 1])
    printed = cli_predictions(tmp_path, regressor.to_bytes(), X)
    ours = regressor.predict(X)
    # The CLI prints the shortest decimal that reads back to its f64 value: the same bits.
    assert np.array_equal(np.array(printed, dtype=np.float64), ours)
    if scalar == "f32":
        assert np.array_equal(ours.astype(np.float32).astype(np.float64), ours), "an f32 model computes in f32"
    classifier = kestrel.ReducedKernelSVC(scalar=scalar).fit(X, np.where(y == 1, "up", "down"))
    assert cli_predictions(tmp_path, classifier.to_bytes(), X) == list(classifier.predict(X))
    assert kestrel.load(classifier.to_bytes()).info["class_names"] == ["down", "up"]


@pytest.mark.parametrize("estimator", [kestrel.DCDLinearSVC(), kestrel.ReducedKernelSVC(), kestrel.SLKLRegressor()])
def test_sparse_rows_fit_and_predict_as_the_dense_ones(estimator):
    X, y = make_moons(120, noise=0.2, random_state=4)
    X = np.hstack([X, np.zeros((len(X), 3))])  # trailing all-zero columns keep the width
    X[::3, 0] = 0.0
    target = y if hasattr(estimator, "predict_proba") or "SVC" in type(estimator).__name__ else X[:, 1] ** 2
    dense = clone(estimator).fit(X, target)
    sparse = clone(estimator).fit(sp.csr_matrix(X), target)
    assert sparse.to_bytes() == dense.to_bytes()
    assert sparse.n_features_in_ == X.shape[1]
    assert np.array_equal(dense.predict(sp.csc_matrix(X)), dense.predict(X))
    assert np.array_equal(kestrel.load(dense.to_bytes()).predict(sp.csr_matrix(X)), kestrel.load(dense.to_bytes()).predict(X))


@pytest.mark.parametrize("estimator", [kestrel.DCDLinearSVC(), kestrel.ReducedKernelSVC()])
@pytest.mark.parametrize("labels", [[-1, 1], [3, 1], ["b", "a"], [2, 0, 1], ["x", "z", "y", "w"]])
def test_decision_function_agrees_with_predict(estimator, labels):
    X, y = make_moons(150, noise=0.3, random_state=5)
    X = np.hstack([X, np.random.default_rng(0).normal(size=(150, 1))])
    classes = np.asarray(labels)
    y = classes[(y + 2 * (X[:, 2] > 0.8)) % len(classes)]
    clf = clone(estimator).fit(X, y)
    decision = clf.decision_function(X)
    if len(clf.classes_) == 2:
        assert decision.shape == (len(X),)
        assert np.array_equal(clf.classes_[(decision >= 0).astype(int)], clf.predict(X))
    else:
        assert decision.shape == (len(X), len(clf.classes_))
        assert np.array_equal(clf.classes_[np.argmax(decision, axis=1)], clf.predict(X))


@pytest.mark.parametrize("estimator", [kestrel.DCDLinearSVC(), kestrel.ReducedKernelSVC()])
@pytest.mark.parametrize("labels", [["wet", "dry"], ["low", "mid", "high"]])
def test_cli_decision_values_are_pythons(tmp_path, estimator, labels):
    """`kestrel predict --decision` prints, after each class, the values decision_function
    gives: the same bits, in the class order its standard error names."""
    X, y = make_moons(150, noise=0.3, random_state=5)
    X = np.hstack([X, np.random.default_rng(0).normal(size=(150, 1))])
    y = np.asarray(labels)[(y + 2 * (X[:, 2] > 0.8)) % len(labels)]
    clf = clone(estimator).fit(X, y)
    out = cli_predict(tmp_path, clf.to_bytes(), X, "--decision")
    lines = [line.split(",") for line in out.stdout.split()]
    assert [line[0] for line in lines] == list(clf.predict(X))
    printed = np.array([[float(v) for v in line[1:]] for line in lines])
    decision = clf.decision_function(X)
    if len(labels) == 2:
        positive = out.stderr.split("≥ 0 for class ")[1].split(",")[0]
        sign = 1.0 if positive == clf.classes_[1] else -1.0
        assert np.array_equal(sign * printed[:, 0], decision)
    else:
        order = out.stderr.split("in order: ")[1].split("\n")[0].split(", ")
        assert np.array_equal(printed[:, [order.index(c) for c in clf.classes_]], decision)


def test_pickle_and_load_use_the_model_bytes(tmp_path):
    X, y = make_moons(150, noise=0.2, random_state=2)
    clf = kestrel.DCDLinearSVC(C=0.5).fit(X, y * 2 - 1)
    again = pickle.loads(pickle.dumps(clf))
    assert again.to_bytes() == clf.to_bytes()
    assert np.array_equal(again.predict(X), clf.predict(X))
    path = tmp_path / "m.kestrel"
    path.write_bytes(clf.to_bytes())
    assert np.array_equal(kestrel.load(path).predict(X), clf.predict(X).astype(np.float64))
    assert kestrel.load(path).info["kind"] == "linear-svm"
    # Shown as `kestrel inspect` describes the file, a kernel model's centres and kernel too.
    kernel = kestrel.ReducedKernelSVC(scale=True).fit(X, y)
    for model in (clf, kernel):
        path.write_bytes(model.to_bytes())
        described = subprocess.run([kestrel_cli(), "inspect", path], capture_output=True, text=True, check=True)
        first = described.stdout.splitlines()[0].removeprefix(f"{path}: ").removesuffix(", checksum ok")
        assert repr(kestrel.load(path)) == f"<kestrel.Model: {first}>"


def test_a_checkpoint_given_for_a_model_is_named():
    # The Cortex-M0's own checkpoint of a windowed SVM (stream/tests/data), and the bytes
    # of a `kestrel stream` checkpoint's frame: each named as the CLI names it.
    device = ROOT / "stream" / "tests" / "data" / "device-checkpoint-svm.bin"
    with pytest.raises(ValueError, match="device's kestrel_svm, not a model: `kestrel import FILE --out MODEL`"):
        kestrel.load(device)
    with pytest.raises(ValueError, match=r"in Python, kestrel.import_checkpoint\(FILE\) makes it a Model"):
        kestrel.Model(device.read_bytes())
    with pytest.raises(ValueError, match="a `kestrel stream` checkpoint, not a model"):
        kestrel.Model(b"KSCK" + bytes(40))
    with pytest.raises(ValueError, match="bad magic"):
        kestrel.load(b"NOPE" + bytes(40))


def test_bad_input_raises_value_error():
    X, y = make_moons(60, noise=0.2, random_state=3)
    clf = kestrel.ReducedKernelSVC().fit(X, y)
    with pytest.raises(ValueError, match="features"):
        clf.predict(np.ones((2, 3)))
    with pytest.raises(ValueError, match="NaN"):
        clf.predict(np.array([[np.nan, 1.0]]))
    with pytest.raises(ValueError, match="kernel"):
        kestrel.ReducedKernelSVC(kernel="sigmoid").fit(X, y)
    with pytest.raises(ValueError, match="y holds one class: 0.0$"):
        kestrel.DCDLinearSVC().fit(X, np.zeros(len(y)))
    with pytest.raises(ValueError, match="y holds one class: 'dry'$"):
        kestrel.ReducedKernelSVC().fit(X, ["dry"] * len(y))
    with pytest.raises(ValueError, match="gamma"):
        kestrel.SLKLRegressor(gamma=-1.0).fit(X, y.astype(float))
    # Settings out of range are named by the parameters here, not by the CLI's flags.
    for estimator, said in [
        (kestrel.ReducedKernelSVC(tol=-1), r"^tol must be a positive number, got -1$"),
        (kestrel.KernelRidgeNystrom(alpha=0), r"^alpha must be a positive number, got 0$"),
        (kestrel.ReducedKernelSVC(n_centres=0), r"^n_centres must be a whole number from 1 to 16384, got 0$"),
        (kestrel.SmoothSVR(n_centres=10**9), r"^n_centres must be a whole number from 1 to 16384"),
        (kestrel.ReducedKernelSVC(gamma="scale"), r"^gamma='scale' \(scikit-learn's .*\) is not taken: 'auto' chooses"),
        (kestrel.ReducedKernelSVC(C="big"), r"^C must be a number or 'auto', got 'big'$"),
    ]:
        with pytest.raises(ValueError, match=said):
            estimator.fit(X, y)
    with pytest.raises(ValueError):
        kestrel.load(b"not a model")
    # A DataFrame's column that is not numbers is named, with what makes it numbers.
    pd = pytest.importorskip("pandas")
    frame = pd.DataFrame({"x": X[:, 0], "when": pd.date_range("2026-01-01", periods=len(y), freq="h")})
    with pytest.raises(ValueError, match=r"^column 'when' of X holds dates and times \(datetime64\[ns\]\), not numbers"):
        kestrel.ReducedKernelSVC().fit(frame, y)
    frame["when"] = ["idle", "heating"] * (len(y) // 2)
    with pytest.raises(ValueError, match=r"^column 'when' of X is not numbers \(object, such as 'idle'\): drop it"):
        kestrel.DCDLinearSVC().fit(frame, y)
    corrupted = bytearray(clf.to_bytes())
    corrupted[len(corrupted) // 2] ^= 1
    with pytest.raises(ValueError, match="checksum"):
        kestrel.load(bytes(corrupted))


def test_the_stubs_name_every_function_and_class_of_the_extension():
    import ast

    stub = Path(kestrel.__file__).with_name("_kestrel.pyi")
    kinds = (ast.FunctionDef, ast.ClassDef)
    declared = {node.name for node in ast.parse(stub.read_text()).body if isinstance(node, kinds)}
    exported = {name for name in dir(kestrel._kestrel) if not name.startswith("_")}
    assert declared == exported


def test_smooth_svr_with_a_tenth_of_the_points_matches_grid_searched_svr(tmp_path):
    """SmoothSVR with every setting "auto" and a tenth of the training rows as centres
    against scikit-learn's SVR on every row at the C, gamma, epsilon of a 5-fold search (the
    comparison of BENCHMARKS' ε-SSVR table); and the model is the CLI's, byte for byte."""
    X, y = load_diabetes(return_X_y=True)
    X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.25, random_state=0)
    scaler = StandardScaler().fit(X_train)
    X_train, X_test = scaler.transform(X_train), scaler.transform(X_test)
    ours = kestrel.SmoothSVR(n_centres=len(y_train) // 10).fit(X_train, y_train)
    sd = float(np.std(y_train))
    grid = {"C": [sd * 2.0**k for k in range(-4, 7, 2)], "gamma": [2.0**k for k in range(-10, 1, 2)],
            "epsilon": [0.1, 0.1 * sd]}
    searched = GridSearchCV(SVR(), grid, cv=5, scoring="neg_mean_squared_error").fit(X_train, y_train)
    errors = [np.mean((model.predict(X_test) - y_test) ** 2) for model in (ours, searched)]
    assert errors[0] <= 1.05 * errors[1], errors
    assert ours.summary_["centers"] <= len(y_train) // 10
    data = tmp_path / "train.csv"
    # repr of a float64 reads back to the same float64: the CLI sees the bits Python has.
    rows = "\n".join(",".join(repr(float(v)) for v in row) for row in np.column_stack([X_train, y_train]))
    data.write_text(",".join(f"x{j}" for j in range(X.shape[1])) + ",y\n" + rows + "\n")
    out = tmp_path / "ssvr.kestrel"
    subprocess.run(
        [kestrel_cli(), "train", "--learner", "ssvr", "--centers", str(len(y_train) // 10), "--input", data, "--out",
         out],
        check=True,
        capture_output=True,
    )
    # The CLI's model is Python's with the names the CSV header gave its features.
    header = [f"x{j}" for j in range(X.shape[1])]
    assert out.read_bytes() == kestrel.with_feature_names(ours.to_bytes(), header)
    assert kestrel.load(out.read_bytes()).info["feature_names"] == header


def test_scale_auto_is_the_cli_default(tmp_path):
    """`scale="auto"` standardises when the leave-one-out error of the width search is lower
    so, and gives the model `kestrel train` writes with no `--scale` flag: standardised on
    raw wine (proline's variance is 10⁵ times the others'), as given on handwritten digits
    (pixels of one unit). `summary_["scaling"]` holds both scores; the linear SVM, which has
    none, standardises by rule; any other word raises."""
    for loader, standardised in ((load_wine, True), (load_digits, False)):
        X, y = loader(return_X_y=True)
        X_train, _, y_train, _ = train_test_split(X, y, random_state=0, stratify=y)
        fitted = kestrel.ReducedKernelSVC(scale="auto").fit(X_train, y_train)
        scaling = fitted.summary_["scaling"]
        assert scaling["standardised"] == standardised, (loader.__name__, scaling)
        raw, scaled = scaling["loo"]
        assert (scaled < raw) == standardised, (loader.__name__, scaling)
        assert kestrel.load(fitted.to_bytes()).info["scaled"] == standardised
        given = kestrel.ReducedKernelSVC(scale=standardised).fit(X_train, y_train)
        assert fitted.to_bytes() == given.to_bytes(), loader.__name__
        data = tmp_path / "train.csv"
        rows = "\n".join(",".join(repr(float(v)) for v in row) for row in np.column_stack([X_train, y_train]))
        data.write_text(",".join(f"x{j}" for j in range(X.shape[1])) + ",y\n" + rows + "\n")
        out = tmp_path / "rsvm.kestrel"
        subprocess.run(
            [kestrel_cli(), "train", "--learner", "rsvm", "--input", data, "--out", out], check=True, capture_output=True
        )
        names = [f"x{j}" for j in range(X.shape[1])]
        assert out.read_bytes() == kestrel.with_feature_names(fitted.to_bytes(), names), loader.__name__
    linear = kestrel.DCDLinearSVC(scale="auto").fit(X_train, y_train)
    assert linear.summary_["scaling"] == {"standardised": True, "by_rule": True}
    assert kestrel.load(linear.to_bytes()).info["scaled"]
    with pytest.raises(ValueError, match="scale must be True, False or"):
        kestrel.ReducedKernelSVC(scale="yes").fit(X_train, y_train)


def test_scale_standardises_inside_the_model_as_the_cli_does(tmp_path):
    """`scale=True` standardises the features by the training rows' statistics, as `kestrel
    train --scale` does (the same model bytes), and the model file carries them: the model
    takes rows in their own units, in Python, in the CLI and on a device. On raw wine, whose
    features' variances span 0.01 to 10⁵, it scores what a StandardScaler pipeline scores,
    above the unscaled model."""
    X, y = load_wine(return_X_y=True)
    X_train, X_test, y_train, y_test = train_test_split(X, y, random_state=0, stratify=y)
    for estimator in (kestrel.ReducedKernelSVC, kestrel.DCDLinearSVC):
        scaled = estimator(scale=True).fit(X_train, y_train)
        assert kestrel.load(scaled.to_bytes()).info["scaled"]
        piped = make_pipeline(StandardScaler(), estimator()).fit(X_train, y_train)
        raw = estimator().fit(X_train, y_train)
        assert not kestrel.load(raw.to_bytes()).info["scaled"]
        agree = np.mean(scaled.predict(X_test) == piped.predict(X_test))
        assert agree >= 0.97, (estimator.__name__, agree)
        assert scaled.score(X_test, y_test) > raw.score(X_test, y_test) + 0.02, estimator.__name__
    data = tmp_path / "train.csv"
    # repr of a float64 reads back to the same float64: the CLI sees the bits Python has.
    rows = "\n".join(",".join(repr(float(v)) for v in row) for row in np.column_stack([X_train, y_train]))
    data.write_text(",".join(f"x{j}" for j in range(X.shape[1])) + ",y\n" + rows + "\n")
    out = tmp_path / "rsvm.kestrel"
    subprocess.run(
        [kestrel_cli(), "train", "--learner", "rsvm", "--scale", "--input", data, "--out", out],
        check=True,
        capture_output=True,
    )
    python = kestrel.ReducedKernelSVC(scale=True).fit(X_train, y_train).to_bytes()
    assert out.read_bytes() == kestrel.with_feature_names(python, [f"x{j}" for j in range(X.shape[1])])
    test = tmp_path / "test.csv"
    test.write_text("\n".join(",".join(repr(float(v)) for v in row) for row in X_test) + "\n")
    test.write_text(",".join(f"x{j}" for j in range(X.shape[1])) + "\n" + test.read_text())
    cli = subprocess.run(
        [kestrel_cli(), "predict", "--model", out, "--input", test, "--label-column", "none"],
        check=True,
        capture_output=True,
        text=True,
    )
    assert [float(v) for v in cli.stdout.split()] == list(kestrel.load(out.read_bytes()).predict(X_test))


def test_a_dataframe_s_column_names_go_into_the_model_file(tmp_path):
    """Fitted on a DataFrame, a model file carries its columns' names (scikit-learn's
    `feature_names_in_`), as `kestrel train` writes a CSV header's: the CLI reads a CSV whose
    columns come in another order by those names, and predicts what Python predicts. A model
    of arrays names nothing."""
    X, y = load_wine(return_X_y=True, as_frame=True)
    clf = kestrel.ReducedKernelSVC(scale=True).fit(X, y)
    assert kestrel.load(clf.to_bytes()).info["feature_names"] == list(X.columns)
    model, rows = tmp_path / "wine.kestrel", tmp_path / "reversed.csv"
    model.write_bytes(clf.to_bytes())
    X[X.columns[::-1]].to_csv(rows, index=False)
    cli = subprocess.run(
        [kestrel_cli(), "predict", "--model", model, "--input", rows, "--label-column", "none"],
        check=True,
        capture_output=True,
        text=True,
    )
    assert "read by their names" in cli.stderr
    assert [float(v) for v in cli.stdout.split()] == [float(v) for v in clf.predict(X)]
    # kestrel.load's model takes a DataFrame's columns by name too.
    loaded = kestrel.load(clf.to_bytes())
    assert list(loaded.predict(X[X.columns[::-1]])) == list(clf.predict(X))
    with pytest.raises(ValueError, match="no column 'alcohol'"):
        loaded.predict(X.drop(columns="alcohol"))
    unnamed = kestrel.ReducedKernelSVC().fit(X.to_numpy(), y).to_bytes()
    assert kestrel.load(unnamed).info["feature_names"] == []
    with pytest.raises(ValueError, match="expected 13, got 2"):
        kestrel.with_feature_names(unnamed, ["a", "b"])


def test_relevance_weighs_the_features_as_the_cli_does(tmp_path):
    """`relevance=True` standardises the features and weighs each by alignment, as `kestrel
    train --relevance` does (the same model bytes); on make_friedman1, five of whose ten
    features are noise, the test error falls. With too few centres for the weighed features
    (60 for these 600 rows) the weights would raise it (3.24 against 2.94): their
    leave-one-out says so, and the model only standardises, as `kestrel train --scale`."""
    X, y = make_friedman1(900, noise=1.0, random_state=0)
    X_train, y_train, X_test, y_test = X[:600], y[:600], X[600:], y[600:]
    plain = kestrel.KernelRidgeNystrom(n_centres=120).fit(X_train, y_train)
    weighed = kestrel.KernelRidgeNystrom(n_centres=120, relevance=True).fit(X_train, y_train)
    errors = [np.mean((model.predict(X_test) - y_test) ** 2) for model in (weighed, plain)]
    assert errors[0] < 0.8 * errors[1], errors
    weights = weighed.summary_["relevance"]["weights"]
    assert weighed.summary_["relevance"]["kept"]
    assert max(weights[5:]) < min(weights[0], weights[1], weights[3]), weights
    data = tmp_path / "train.csv"
    # repr of a float64 reads back to the same float64: the CLI sees the bits Python has.
    rows = "\n".join(",".join(repr(float(v)) for v in row) for row in np.column_stack([X_train, y_train]))
    data.write_text(",".join(f"x{j}" for j in range(10)) + ",y\n" + rows + "\n")
    out = tmp_path / "krr.kestrel"
    subprocess.run(
        [kestrel_cli(), "train", "--learner", "krr", "--centers", "120", "--relevance", "--input", data, "--out", out],
        check=True,
        capture_output=True,
    )
    header = [f"x{j}" for j in range(10)]
    assert out.read_bytes() == kestrel.with_feature_names(weighed.to_bytes(), header)
    assert kestrel.load(weighed.to_bytes()).info["relevance"] == weights
    few = kestrel.KernelRidgeNystrom(n_centres=60, relevance=True).fit(X_train, y_train)
    unweighed, weighed_loo = few.summary_["relevance"]["loo"]
    assert not few.summary_["relevance"]["kept"] and weighed_loo >= unweighed
    subprocess.run(
        [kestrel_cli(), "train", "--learner", "krr", "--centers", "60", "--scale", "--input", data, "--out", out],
        check=True,
        capture_output=True,
    )
    assert out.read_bytes() == kestrel.with_feature_names(few.to_bytes(), header)
    assert "relevance" not in kestrel.load(few.to_bytes()).info
    with pytest.raises(ValueError, match="relevance"):
        kestrel.KernelRidgeNystrom(kernel="poly", relevance=True).fit(X_train, y_train)


def test_slkl_nu_auto_chooses_what_the_cli_chooses(tmp_path):
    """`SLKLRegressor(nu="auto")` scores the same grid by the same cross-validation as
    `kestrel train --learner slkl --nu auto`: the same choice, the same model bytes."""
    X, _ = make_moons(120, noise=0.1, random_state=3)
    y = np.sin(3 * X[:, 0]) + X[:, 1]
    model = kestrel.SLKLRegressor(nu="auto", gamma=1.0, n_centres=32).fit(X, y)
    scores = {row["nu"]: row["cv_mse"] for row in model.summary_["nu_cv"]}
    assert sorted(scores) == [0.001, 0.01, 0.1, 1.0]
    assert model.summary_["chosen"]["nu"] == min(scores, key=scores.get)
    data = tmp_path / "train.csv"
    # repr of a float64 reads back to the same float64: the CLI sees the bits Python has.
    rows = "\n".join(",".join(repr(float(v)) for v in row) for row in np.column_stack([X, y]))
    data.write_text("x0,x1,y\n" + rows + "\n")
    out = tmp_path / "slkl.kestrel"
    subprocess.run(
        [kestrel_cli(), "train", "--learner", "slkl", "--input", data, "--out", out, "--nu", "auto", "--gamma", "1",
         "--centers", "32"],
        check=True,
        capture_output=True,
    )
    assert out.read_bytes() == kestrel.with_feature_names(model.to_bytes(), ["x0", "x1"])
    with pytest.raises(ValueError, match="auto"):
        kestrel.SLKLRegressor(nu="often").fit(X, y)


def test_a_devices_checkpoint_is_imported_as_the_model_it_would_save():
    # The Cortex-M0's checkpoints of a windowed SVM and its scaler, and the model the M0's
    # own kestrel_svm_save wrote with them (stream/tests/data): the same bytes, which
    # predict the rule the device learned in raw units.
    data = ROOT / "stream" / "tests" / "data"
    model = kestrel.import_checkpoint(data / "device-checkpoint-svm.bin", scaler=data / "device-checkpoint-scaler.bin")
    assert model.to_bytes() == (data / "device-model-svm.kestrel").read_bytes()
    assert (model.info["kind"], model.info["dim"], model.info["scaled"]) == ("linear-svm", 3, True)
    assert model.predict(np.array([[1030.0, 0.01, 1.2], [1005.0, 0.04, -1.4]])).tolist() == [1.0, -1.0]
    assert not kestrel.import_checkpoint((data / "device-checkpoint-svm.bin").read_bytes()).info["scaled"]
    with pytest.raises(ValueError, match="checkpoint: a kestrel_scaler's checkpoint has no model of its own"):
        kestrel.import_checkpoint(data / "device-checkpoint-scaler.bin")
    svm = data / "device-checkpoint-svm.bin"
    with pytest.raises(ValueError, match="scaler: a checkpoint of a device's kestrel_svm, not of a kestrel_scaler"):
        kestrel.import_checkpoint(svm, scaler=svm)
    with pytest.raises(ValueError, match="checkpoint: a device checkpoint cut short"):
        kestrel.import_checkpoint(svm.read_bytes()[:500])


def test_a_devices_checkpoint_is_described_as_kestrel_inspect_describes_it():
    # The Cortex-M0's checkpoints: what `kestrel inspect --json` prints, as a dict.
    data = ROOT / "stream" / "tests" / "data"
    for name in ("device-checkpoint-svm.bin", "device-checkpoint-scaler.bin"):
        cli = subprocess.run([kestrel_cli(), "inspect", data / name, "--json"], capture_output=True, text=True, check=True)
        assert kestrel.describe_checkpoint(data / name) == json.loads(cli.stdout)
    svm = kestrel.describe_checkpoint((data / "device-checkpoint-svm.bin").read_bytes())
    assert (svm["object"], svm["resumes"], svm["config"]["dim"]) == ("kestrel_svm", True, 3)
    assert repr(kestrel.import_checkpoint(data / "device-checkpoint-svm.bin")) == f"<kestrel.Model: {svm['model']}>"
    with pytest.raises(ValueError, match="a device checkpoint cut short"):
        kestrel.describe_checkpoint((data / "device-checkpoint-svm.bin").read_bytes()[:500])
