"""`kestrel train --learner kpls`: kernel partial least squares by conjugate gradients
against scikit-learn's `PLSRegression` on `Nystroem` features of the same centres (every
training row, so both feature maps span the same space: they differ by a rotation, to
which PLS is blind) — the same predictions on new rows for each number of components —
and the default (components chosen on held-out rows) against scikit-learn's best number
chosen on the test rows themselves."""

import os
import subprocess
from pathlib import Path

import kestrel
import numpy as np
import pytest
from sklearn.cross_decomposition import PLSRegression
from sklearn.kernel_approximation import Nystroem

ROOT = Path(__file__).resolve().parents[2]
DATA = Path(os.environ.get("KESTREL_DATA", "/work/shared/data"))
GAMMA = 0.05


def kestrel_cli():
    """The CLI the test command built (KESTREL_CLI, or the workspace's release build)."""
    path = Path(os.environ.get("KESTREL_CLI", ROOT / "target" / "release" / "kestrel"))
    if not path.exists():
        pytest.skip(f"no kestrel CLI at {path}")
    return path


def diabetes():
    """Paths and arrays of the shared diabetes regression set's two parts."""
    paths = [DATA / "diabetes" / f"{part}.csv" for part in ("train", "test")]
    if not all(path.exists() for path in paths):
        pytest.skip("no diabetes data set")
    tables = [np.loadtxt(path, delimiter=",", skiprows=1) for path in paths]
    return paths, [(t[:, :-1], t[:, -1]) for t in tables]


def kestrel_predictions(tmp_path, train, test, *flags):
    """Train kpls with `flags`, then predict the test rows through the model file."""
    model, out = tmp_path / "kpls.kestrel", tmp_path / "predictions.txt"
    cli = kestrel_cli()
    subprocess.run(
        [cli, "train", "--learner", "kpls", "--input", train, "--out", model, *flags], check=True, capture_output=True
    )
    subprocess.run([cli, "predict", "--model", model, "--input", test, "--output", out], check=True, capture_output=True)
    return np.loadtxt(out)


def scikit_learn_pls(x_train, y_train, x_test, components):
    """PLSRegression (unscaled, as kestrel's) on Nystroem features of every training row."""
    features = Nystroem(kernel="rbf", gamma=GAMMA, n_components=len(y_train), random_state=0).fit(x_train)
    pls = PLSRegression(n_components=components, scale=False).fit(features.transform(x_train), y_train)
    return pls.predict(features.transform(x_test)).ravel()


# Measured (relative error of the test predictions): f64 5e-15 to 2.7e-12 for 1 to 8
# components; f32 1e-6 to 5.8e-5 for 1 to 5 (conjugate gradients lose orthogonality in f32
# as components grow: 3.9e-3 at 8, not tested).
@pytest.mark.parametrize(
    "scalar, components, tol",
    [("f64", r, 1e-10) for r in (1, 2, 3, 5, 8)] + [("f32", r, 3e-4) for r in (1, 2, 3, 5)],
)
def test_kpls_is_scikit_learns_pls_on_nystroem_features(tmp_path, scalar, components, tol):
    (train, test), ((x_train, y_train), (x_test, _)) = diabetes()
    ours = kestrel_predictions(
        tmp_path,
        train,
        test,
        "--gamma",
        str(GAMMA),
        "--select",
        "random",
        "--centers",
        str(len(y_train)),
        "--components",
        str(components),
        "--scalar",
        scalar,
    )
    reference = scikit_learn_pls(x_train, y_train, x_test, components)
    error = np.linalg.norm(ours - reference) / np.linalg.norm(reference)
    assert error <= tol, f"{components} components: predictions off by {error:.2e}"


def test_default_components_near_the_best_on_test_rows(tmp_path):
    """No flags but the learner: the test MSE within 5 % of scikit-learn's PLS at the number
    of components best on the test rows (an oracle no real choice has)."""
    (train, test), ((x_train, y_train), (x_test, y_test)) = diabetes()
    ours = kestrel_predictions(tmp_path, train, test)
    ours_mse = float(np.mean((ours - y_test) ** 2))
    oracle = min(
        float(np.mean((scikit_learn_pls(x_train, y_train, x_test, r) - y_test) ** 2)) for r in range(1, 21)
    )
    assert ours_mse <= 1.05 * oracle, f"kpls defaults: test MSE {ours_mse:.1f}, best scikit-learn PLS {oracle:.1f}"


def test_the_estimator_is_the_cli(tmp_path):
    """`KernelPLSNystrom` fits what `kestrel train --learner kpls` fits: the same
    predictions, at given and at chosen components."""
    (train, test), ((x_train, y_train), (x_test, _)) = diabetes()
    for components, flags in [(3, ["--components", "3"]), ("auto", [])]:
        cli = kestrel_predictions(tmp_path, train, test, "--gamma", str(GAMMA), *flags)
        model = kestrel.KernelPLSNystrom(n_components=components, gamma=GAMMA, random_state=1).fit(x_train, y_train)
        np.testing.assert_allclose(model.predict(x_test), cli, rtol=1e-12, atol=1e-9)
    assert model.summary_["components"] == model.summary_["chosen"]["components"]


def test_krr_solver_cg_is_the_exact_solution():
    """`KernelRidgeNystrom(solver="cg")` solves the problem the exact path solves."""
    _, ((x_train, y_train), (x_test, _)) = diabetes()
    settings = dict(alpha=1.0, gamma=GAMMA, random_state=1)
    exact = kestrel.KernelRidgeNystrom(solver="exact", **settings).fit(x_train, y_train)
    cg = kestrel.KernelRidgeNystrom(solver="cg", **settings).fit(x_train, y_train)
    assert (exact.summary_["solver"], cg.summary_["solver"]) == ("exact", "cg")
    np.testing.assert_allclose(cg.predict(x_test), exact.predict(x_test), rtol=1e-6)
    with pytest.raises(ValueError, match="unknown solver"):
        kestrel.KernelRidgeNystrom(solver="qr").fit(x_train, y_train)
