"""`kestrel transform`: `--method kpca` against scikit-learn's `KernelPCA` on the shared
data sets — the same subspace (largest principal angle) and the same components up to sign,
for the training rows and for new rows projected through the model file — reduced KPCA
converging to KPCA as the centres grow to every row; `--method ksir|kfd` components on
which a linear SVM (scikit-learn's, and kestrel's own on multi-class sets) nears the RBF
SVM's accuracy, and KSIR slicing a regression response."""

import json
import os
import subprocess
from pathlib import Path

import numpy as np
import pytest
from sklearn.decomposition import KernelPCA

ROOT = Path(__file__).resolve().parents[2]
DATA = Path(os.environ.get("KESTREL_DATA", "/work/shared/data"))


def kestrel_cli():
    """The CLI the test command built (KESTREL_CLI, or the workspace's release build)."""
    path = Path(os.environ.get("KESTREL_CLI", ROOT / "target" / "release" / "kestrel"))
    if not path.exists():
        pytest.skip(f"no kestrel CLI at {path}")
    return path


def load(name, part):
    path = DATA / name / f"{part}.csv"
    if not path.exists():
        pytest.skip(f"no data set at {path}")
    table = np.loadtxt(path, delimiter=",", skiprows=1)
    return path, table[:, :-1]


def transform(tmp_path, *flags):
    """The projected rows `kestrel transform` writes (labels dropped)."""
    out = tmp_path / "projected.csv"
    subprocess.run([kestrel_cli(), "transform", "--output", out, *flags], check=True, capture_output=True)
    return np.loadtxt(out, delimiter=",", skiprows=1)[:, :-1]


def largest_angle(a, b):
    """The largest principal angle between the column spaces of a and b, in radians."""
    qa, qb = np.linalg.qr(a)[0], np.linalg.qr(b)[0]
    return float(np.arccos(np.clip(np.linalg.svd(qa.T @ qb, compute_uv=False).min(), -1.0, 1.0)))


def sign_free_error(ours, reference):
    """The largest relative error of a component, each compared up to sign."""
    errors = [
        min(np.linalg.norm(o - r), np.linalg.norm(o + r)) / np.linalg.norm(r) for o, r in zip(ours.T, reference.T)
    ]
    return max(errors)


@pytest.mark.parametrize("name", ["iris", "wine", "breast_cancer", "heart_scale"])
@pytest.mark.parametrize("scalar, tol", [("f64", 1e-7), ("f32", 2e-3)])
def test_kpca_is_scikit_learns_on_training_and_new_rows(tmp_path, name, scalar, tol):
    (train, X), (test, X_test) = load(name, "train"), load(name, "test")
    gamma, k = 1.0 / X.shape[1], 3
    model = tmp_path / "kpca.kmodel"
    flags = ["--components", str(k), "--gamma", repr(gamma), "--scalar", scalar]
    ours = transform(tmp_path, "--input", train, "--model", model, *flags)
    new = transform(tmp_path, "--input", test, "--apply", model, "--scalar", scalar)
    reference = KernelPCA(n_components=k, kernel="rbf", gamma=gamma, eigen_solver="dense").fit(X)
    assert largest_angle(ours, reference.transform(X)) < tol
    assert sign_free_error(ours, reference.transform(X)) < tol
    assert largest_angle(new, reference.transform(X_test)) < tol
    assert sign_free_error(new, reference.transform(X_test)) < tol


def test_reduced_kpca_converges_to_kpca(tmp_path):
    train, X = load("digits", "train")
    n, gamma, k = len(X), 1.0 / X.shape[1], 3
    flags = ["--input", train, "--components", str(k), "--gamma", repr(gamma)]
    exact = KernelPCA(n_components=k, kernel="rbf", gamma=gamma, eigen_solver="dense").fit_transform(X)
    angles = [largest_angle(transform(tmp_path, *flags, "--centers", str(m)), exact) for m in (50, 200, 800, n)]
    print("largest principal angle, m = 50, 200, 800, n:", angles)
    assert angles[0] > angles[1] > angles[2] > angles[3]
    assert angles[3] < 1e-6 and angles[2] < 0.05


# The RBF SVM's test accuracy (the data README), for the sets a linear SVM on one or two
# KSIR/KFD components is held to within four points of (at the default width 1/d,
# not the SVM's cross-validated one).
SVM_ACCURACY = {"breast_cancer": 0.958, "digits3": 0.9933, "moons": 0.9413, "phishing": 0.9169, "wine": 1.0, "iris": 1.0}


@pytest.mark.parametrize("method", ["ksir", "kfd"])
@pytest.mark.parametrize(
    "name, k", [("breast_cancer", 1), ("digits3", 1), ("moons", 1), ("phishing", 1), ("wine", 2), ("iris", 2)]
)
def test_a_linear_svm_on_ksir_and_kfd_components_nears_the_rbf_svm(tmp_path, method, name, k):
    from sklearn.svm import LinearSVC

    (train, _), (test, _) = load(name, "train"), load(name, "test")
    model = tmp_path / "projection.kmodel"
    flags = ["--method", method, "--components", str(k), "--centers", "200", "--model", model]
    out = tmp_path / "projected.csv"
    subprocess.run([kestrel_cli(), "transform", "--input", train, "--output", out, *flags], check=True)
    table = np.loadtxt(out, delimiter=",", skiprows=1)
    subprocess.run([kestrel_cli(), "transform", "--input", test, "--output", out, "--apply", model], check=True)
    held_out = np.loadtxt(out, delimiter=",", skiprows=1)
    svm = LinearSVC(C=1.0).fit(table[:, :-1], table[:, -1])
    accuracy = svm.score(held_out[:, :-1], held_out[:, -1])
    print(f"{method} {name} k = {k}: linear SVM test accuracy {accuracy:.4f}")
    assert accuracy >= SVM_ACCURACY[name] - 0.04, accuracy


# Multi-class sets: kestrel's own DCD linear SVM (`kestrel train --learner svm`, one
# against the rest, C = 1) on KSIR/KFD components through 200 centres, scored by
# `kestrel eval` on the held-out rows. Iris and wine have J − 1 = 2 components; digits is
# held at 2-3 components to a floor far below its 9 (where it reaches the RBF SVM).
MULTICLASS_FLOOR = {("iris", 2): 0.95, ("wine", 2): 0.95, ("digits", 3): 0.65, ("digits", 9): 0.95}


@pytest.mark.parametrize("method", ["ksir", "kfd"])
@pytest.mark.parametrize("name, k", list(MULTICLASS_FLOOR))
def test_kestrels_linear_svm_on_ksir_and_kfd_components_of_multiclass_sets(tmp_path, method, name, k):
    (train, _), (test, _) = load(name, "train"), load(name, "test")
    paths = [tmp_path / f for f in ("projection.kmodel", "train.csv", "test.csv", "svm.kmodel")]
    model, projected, held_out, svm = paths
    cli = kestrel_cli()
    flags = ["--method", method, "--components", str(k), "--centers", "200", "--model", model]
    subprocess.run([cli, "transform", "--input", train, "--output", projected, *flags], check=True)
    subprocess.run([cli, "transform", "--input", test, "--output", held_out, "--apply", model], check=True)
    subprocess.run([cli, "train", "--learner", "svm", "--input", projected, "--out", svm], check=True)
    evaluate = [cli, "eval", "--model", svm, "--input", held_out, "--json"]
    scored = subprocess.run(evaluate, check=True, capture_output=True)
    accuracy = json.loads(scored.stdout)["accuracy"]
    print(f"{method} {name} k = {k}: kestrel linear SVM test accuracy {accuracy:.4f}")
    assert accuracy >= MULTICLASS_FLOOR[(name, k)], accuracy


def test_ksir_slices_a_regression_response(tmp_path):
    train, X = load("diabetes", "train")
    y = np.loadtxt(train, delimiter=",", skiprows=1)[:, -1]
    ours = transform(tmp_path, "--input", train, "--method", "ksir", "--slices", "10", "--components", "1")
    # The first KSIR component carries the response: strongly correlated with it.
    assert abs(np.corrcoef(ours[:, 0], y)[0, 1]) > 0.6


def test_a_projection_model_describes_itself_and_predicts_nothing():
    import kestrel

    X = np.random.default_rng(0).normal(size=(60, 3))
    projection = kestrel.KernelProjection(n_components=2, n_centres=20, random_state=1).fit(X)
    with pytest.raises(ValueError, match="kernel projection \\(2 components\\).*KernelProjection.from_bytes"):
        kestrel.Model(projection.to_bytes())


def test_a_projection_comes_back_from_its_bytes_and_from_a_cli_file(tmp_path):
    import kestrel

    X = np.random.default_rng(3).normal(size=(80, 4))
    fitted = kestrel.KernelProjection(n_components=3, n_centres=30, gamma=0.3, random_state=2).fit(X)
    loaded = kestrel.KernelProjection.from_bytes(fitted.to_bytes())
    assert (loaded.n_components, loaded.n_features_in_) == (3, 4)
    np.testing.assert_array_equal(loaded.transform(X), fitted.transform(X))
    path = tmp_path / "projection.kestrel"
    path.write_bytes(fitted.to_bytes())
    from_file = kestrel.load(path)
    assert isinstance(from_file, kestrel.KernelProjection)
    np.testing.assert_array_equal(from_file.transform(X[:5]), fitted.transform(X[:5]))
    with pytest.raises(ValueError, match="features"):
        loaded.transform(X[:, :3])
    model = kestrel.ReducedKernelSVC().fit(X, (X[:, 0] > 0).astype(int))
    with pytest.raises(ValueError, match="not a projection"):
        kestrel.KernelProjection.from_bytes(model.to_bytes())
    with pytest.raises(ValueError):
        kestrel.KernelProjection.from_bytes(b"not a kestrel file")
