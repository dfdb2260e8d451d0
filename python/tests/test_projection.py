"""`kestrel.KernelProjection` and `kestrel.ReducedKernelCCA` against the CLI they wrap:
the same model file bytes as `kestrel transform --model/--model2` (which adds the names of
the features a CSV header gives), and the same projected rows, for the training rows and
for new rows (`--apply`)."""

import os
import subprocess
from pathlib import Path

import numpy as np
import pytest
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.utils.estimator_checks import parametrize_with_checks

from kestrel import KernelProjection, ReducedKernelCCA, with_feature_names

ROOT = Path(__file__).resolve().parents[2]
DATA = Path(os.environ.get("KESTREL_DATA", "/work/shared/data"))


def kestrel_cli():
    path = Path(os.environ.get("KESTREL_CLI", ROOT / "target" / "release" / "kestrel"))
    if not path.exists():
        pytest.skip(f"no kestrel CLI at {path}")
    return path


def load(name, part):
    path = DATA / name / f"{part}.csv"
    if not path.exists():
        pytest.skip(f"no data set at {path}")
    table = np.loadtxt(path, delimiter=",", skiprows=1)
    return path, table[:, :-1], table[:, -1]


def header(path):
    """The feature names of a CSV whose last column is the label."""
    return Path(path).read_text().splitlines()[0].split(",")[:-1]


def cli(tmp_path, *flags):
    """The table `kestrel transform` writes, its label column (a class's name or number) left out."""
    out = tmp_path / "out.csv"
    subprocess.run([kestrel_cli(), "transform", "--output", out, *flags], check=True, capture_output=True)
    columns = out.read_text().splitlines()[0].count(",")
    return np.loadtxt(out, delimiter=",", skiprows=1, ndmin=2, usecols=range(columns))


@pytest.mark.parametrize(
    "method, n_centres, k", [("kpca", None, 3), ("kpca", 40, 3), ("ksir", 40, 2), ("kfd", None, 2)]
)
def test_kernel_projection_is_the_clis(tmp_path, method, n_centres, k):
    (train, X, y), (test, X_test, _) = load("wine", "train"), load("wine", "test")
    model = tmp_path / "projection.kmodel"
    flags = ["--method", method, "--components", str(k), "--model", model, "--seed", "5"]
    flags += [] if n_centres is None else ["--centers", str(n_centres)]
    ours = KernelProjection(k, method=method, n_centres=n_centres, random_state=5)
    projected = ours.fit(X, None if method == "kpca" else y).transform(X)
    np.testing.assert_array_equal(projected, cli(tmp_path, "--input", train, *flags))
    assert with_feature_names(ours.to_bytes(), header(train)) == model.read_bytes()
    np.testing.assert_array_equal(ours.transform(X_test), cli(tmp_path, "--input", test, "--apply", model))
    assert ours.eigenvalues_.shape == (k,) and np.all(np.diff(ours.eigenvalues_) <= 0)


def test_a_model_fitted_under_scale_standardises_raw_rows_as_the_cli_does(tmp_path):
    (train, _, _), (test, X_test, _) = load("wine", "train_raw"), load("wine", "test_raw")
    model = tmp_path / "scaled.kmodel"
    fitted = cli(tmp_path, "--input", train, "--scale", "--centers", "40", "--model", model)
    loaded = KernelProjection.from_bytes(model.read_bytes())
    np.testing.assert_array_equal(loaded.transform(X_test), cli(tmp_path, "--input", test, "--apply", model))
    # The fit projected standardised rows, not raw wine's (where proline, variance 10^5,
    # sets every distance).
    unscaled = cli(tmp_path, "--input", train, "--centers", "40")
    assert fitted.shape == unscaled.shape == (133, 2)
    assert not np.allclose(fitted, unscaled)


@parametrize_with_checks([KernelProjection(), KernelProjection(n_centres=5)])
def test_sklearn_estimator_checks(estimator, check):
    check(estimator)


def test_pandas_output_names_the_components():
    """`set_output(transform="pandas")` in a pipeline gives a DataFrame whose columns
    `get_feature_names_out` names, as scikit-learn's KernelPCA does (`kernelpca0`, …)."""
    pd = pytest.importorskip("pandas")
    (_, X, _), (_, X_test, _) = load("wine", "train"), load("wine", "test")
    columns = [f"x{j}" for j in range(X.shape[1])]
    pipeline = make_pipeline(StandardScaler(), KernelProjection(n_components=3)).set_output(transform="pandas")
    test = pd.DataFrame(X_test, columns=columns)
    projected = pipeline.fit(pd.DataFrame(X, columns=columns)).transform(test)
    assert list(projected.columns) == ["kernelprojection0", "kernelprojection1", "kernelprojection2"]
    by_steps = pipeline[-1].transform(pipeline[0].transform(test))
    np.testing.assert_array_equal(projected.to_numpy(), np.asarray(by_steps))


def write_view(path, X, y):
    with open(path, "w") as f:
        f.write(",".join(f"x{j}" for j in range(X.shape[1])) + ",label\n")
        for row, label in zip(X, y):
            f.write(",".join(repr(float(v)) for v in row) + f",{float(label)!r}\n")


def test_reduced_kernel_cca_is_the_clis(tmp_path):
    (_, X, y), (_, X_test, y_test) = load("wine", "train"), load("wine", "test")
    views = [tmp_path / f for f in ("x.csv", "y.csv", "x_test.csv", "y_test.csv")]
    for path, rows, labels in zip(views, (X[:, :6], X[:, 6:], X_test[:, :6], X_test[:, 6:]), (y, y, y_test, y_test)):
        write_view(path, rows, labels)
    models = [tmp_path / "u.kmodel", tmp_path / "v.kmodel"]
    table = cli(tmp_path, "--method", "kcca", "--input", views[0], "--input2", views[1], "--components", "2",
                "--centers", "60", "--model", models[0], "--model2", models[1])
    cca = ReducedKernelCCA(2, n_centres=60)
    u, v = cca.fit_transform(X[:, :6], X[:, 6:])
    np.testing.assert_array_equal(np.hstack([u, v]), table)
    named = (with_feature_names(cca.x_model_bytes_, header(views[0])), with_feature_names(cca.y_model_bytes_, header(views[1])))
    assert named == (models[0].read_bytes(), models[1].read_bytes())
    np.testing.assert_array_equal(cca.transform(X_test[:, :6]), cli(tmp_path, "--input", views[2], "--apply", models[0]))
    _, v_test = cca.transform(X_test[:, :6], X_test[:, 6:])
    np.testing.assert_array_equal(v_test, cli(tmp_path, "--input", views[3], "--apply", models[1]))
    # The two halves of wine's chemistry share their class structure: the first pair is
    # strongly correlated on the held-out rows too.
    assert cca.correlations_[0] > 0.8
    assert np.corrcoef(cca.transform(X_test[:, :6])[:, 0], v_test[:, 0])[0, 1] > 0.7


def test_bad_input_is_a_value_error():
    _, X, y = load("iris", "train")
    with pytest.raises(ValueError, match="need y"):
        KernelProjection(1, method="ksir").fit(X)
    with pytest.raises(ValueError, match="unknown method"):
        KernelProjection(1, method="pca").fit(X)
    with pytest.raises(ValueError, match="components asked for: 5, at most 2 for 3 slices"):
        KernelProjection(5, method="kfd").fit(X, y)
    with pytest.raises(ValueError, match="components asked for: 30, at most 20, the centres"):
        KernelProjection(30, n_centres=20).fit(X)
    with pytest.raises(ValueError, match="same rows"):
        ReducedKernelCCA(1).fit(X[:, :2], X[:-1, 2:])
    with pytest.raises(ValueError, match="features"):
        KernelProjection(1).fit(X).transform(X[:, :3])
