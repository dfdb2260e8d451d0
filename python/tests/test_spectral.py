"""`kestrel transform --method eigenmap` and `kestrel cluster` against scikit-learn:
the eigenmap is SpectralEmbedding's on the same graph, and spectral clustering scores as
SpectralClustering (nearest-neighbours affinity) does on the shared data sets; the Python
estimators (kestrel.SpectralClustering, LaplacianEigenmap, KernelProjection(method="lpp"))
give the CLI's results bit for bit."""

import subprocess
from pathlib import Path

import numpy as np
import pytest
from sklearn.cluster import SpectralClustering
from sklearn.datasets import make_moons
from sklearn.manifold import SpectralEmbedding
from sklearn.metrics import rand_score
from sklearn.neighbors import NearestNeighbors
from scipy.sparse import csr_matrix

import kestrel
from test_estimators import kestrel_cli

DATA = Path(__file__).resolve().parents[2].parent / "shared" / "data"


def shared(name):
    table = np.loadtxt(DATA / name / "train.csv", delimiter=",", skiprows=1)
    return DATA / name / "train.csv", table[:, :-1], table[:, -1]


def write_csv(path, X, y):
    header = ",".join(f"x{j}" for j in range(X.shape[1])) + ",y"
    lines = [",".join(repr(float(v)) for v in row) + f",{label}" for row, label in zip(X, y)]
    path.write_text(header + "\n" + "\n".join(lines) + "\n")


def kestrel_graph(X, k):
    """The graph `kestrel` builds (core npkl::graph): the symmetric "or" kNN graph, weights
    exp(-d²/2σ²), σ² the mean squared distance over the n·k directed kNN edges."""
    distances, neighbours = NearestNeighbors(n_neighbors=k + 1).fit(X).kneighbors(X)
    distances, neighbours = distances[:, 1:], neighbours[:, 1:]
    sigma2 = np.mean(distances**2)
    n = len(X)
    rows = np.repeat(np.arange(n), k)
    directed = csr_matrix((np.exp(-distances.ravel() ** 2 / (2 * sigma2)), (rows, neighbours.ravel())), shape=(n, n))
    return directed.maximum(directed.T)


def eigenmap(path, components, k, scalar="f64"):
    command = [kestrel_cli(), "transform", "--method", "eigenmap", "--input", path, "--components", str(components),
               "--neighbors", str(k), "--scalar", scalar]
    out = subprocess.run(command, check=True, capture_output=True, text=True).stdout
    return np.loadtxt(out.splitlines()[1:], delimiter=",")[:, :components]


@pytest.mark.parametrize("name", ["iris", "wine", "breast_cancer"])
# Measured largest errors relative to each coordinate's largest entry: f64 1.1e-8, f32
# 1.9e-3 (wine); both solvers stop at a residual, ARPACK at machine precision, Lanczos at √ε.
@pytest.mark.parametrize("scalar, tolerance", [("f64", 1e-7), ("f32", 5e-3)])
def test_the_eigenmap_is_spectral_embeddings_on_the_same_graph(name, scalar, tolerance):
    path, X, _ = shared(name)
    k, m = 10, 2
    ours = eigenmap(path, m, k, scalar)
    theirs = SpectralEmbedding(n_components=m, affinity="precomputed", eigen_solver="arpack", random_state=0)
    reference = theirs.fit_transform(kestrel_graph(X, k))
    for c in range(m):
        sign = np.sign(ours[:, c] @ reference[:, c])
        error = np.max(np.abs(sign * ours[:, c] - reference[:, c])) / np.max(np.abs(reference[:, c]))
        assert error < tolerance, (name, scalar, c, error)


def cluster(path, clusters, *flags):
    command = [kestrel_cli(), "cluster", "--input", path, "--clusters", str(clusters), *flags]
    subprocess.run(command, check=True, capture_output=True)


@pytest.mark.parametrize("name, clusters", [("iris", 3), ("wine", 3), ("breast_cancer", 2), ("digits", 10),
                                            ("moons", 2), ("heart_scale", 2)])
def test_spectral_clustering_scores_as_scikit_learns(tmp_path, name, clusters):
    path, X, y = shared(name)
    out = tmp_path / "clusters.csv"
    cluster(path, clusters, "--output", out)
    ours = rand_score(y, np.loadtxt(out, delimiter=",", skiprows=1)[:, 1])
    theirs = SpectralClustering(clusters, affinity="nearest_neighbors", n_neighbors=10, random_state=0)
    reference = rand_score(y, theirs.fit_predict(X))
    # Measured: kestrel − scikit-learn from −0.0085 (wine) to +0.039 (moons).
    assert ours >= reference - 0.01, (name, ours, reference)


def test_separate_moons_are_found_whole(tmp_path):
    X, y = make_moons(n_samples=3000, noise=0.05, random_state=0)
    path, out = tmp_path / "moons.csv", tmp_path / "clusters.csv"
    write_csv(path, X, y)
    for scalar in ["f64", "f32"]:
        cluster(path, 2, "--scalar", scalar, "--output", out)
        assert rand_score(y, np.loadtxt(out, delimiter=",", skiprows=1)[:, 1]) == 1.0, scalar
    cluster(path, 2, "--method", "kmeans", "--output", out)
    assert rand_score(y, np.loadtxt(out, delimiter=",", skiprows=1)[:, 1]) < 0.9


def test_the_python_estimators_are_the_clis(tmp_path):
    path, X, y = shared("wine")
    out, model = tmp_path / "clusters.csv", tmp_path / "lpp.kestrel"
    cluster(path, 3, "--output", out, "--seed", "5")
    cli_clusters = np.loadtxt(out, delimiter=",", skiprows=1)[:, 1]
    labels = kestrel.SpectralClustering(3, random_state=5).fit_predict(X)
    assert np.array_equal(labels, cli_clusters)
    # The CLI writes the shortest decimal that reads back to each f64: the same bits.
    assert np.array_equal(kestrel.LaplacianEigenmap(3).fit_transform(X), eigenmap(path, 3, 10))
    command = [kestrel_cli(), "transform", "--method", "lpp", "--input", path, "--components", "2", "--model", model]
    out = subprocess.run(command, check=True, capture_output=True, text=True).stdout
    lpp = kestrel.KernelProjection(2, method="lpp").fit(X)
    names = Path(path).read_text().splitlines()[0].split(",")[:-1]
    assert kestrel.with_feature_names(lpp.to_bytes(), names) == model.read_bytes()
    assert np.array_equal(lpp.transform(X), np.loadtxt(out.splitlines()[1:], delimiter=",")[:, :2])
    assert np.all(np.diff(lpp.eigenvalues_) >= 0), lpp.eigenvalues_


def test_bad_settings_raise():
    X = np.random.default_rng(0).normal(size=(20, 3))
    with pytest.raises(ValueError, match="clusters must be between 2 and 19"):
        kestrel.SpectralClustering(20).fit(X)
    with pytest.raises(ValueError, match="n_neighbors must be a positive int"):
        kestrel.LaplacianEigenmap(n_neighbors=0).fit(X)
    with pytest.raises(ValueError, match="components must be between 1 and 19"):
        kestrel.LaplacianEigenmap(20).fit(X)
    # More neighbours than other rows: every other row.
    assert kestrel.LaplacianEigenmap(n_neighbors=50).fit(X).embedding_.shape == (20, 2)
    with pytest.raises(ValueError, match="between 1 and the number of features"):
        kestrel.KernelProjection(4, method="lpp").fit(X)
    with pytest.raises(ValueError):
        kestrel.SpectralClustering(2).fit(np.full((20, 3), np.nan))
