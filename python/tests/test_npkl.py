"""kestrel.NPKL: constrained clustering on real data against scikit-learn's clusterers,
the same learned kernel as ``kestrel npkl`` bit for bit, new rows placed, pickling, and
errors that raise."""

import pickle
import subprocess

import numpy as np
import pytest
from sklearn.cluster import KMeans, SpectralClustering
from sklearn.datasets import load_digits, load_wine
from sklearn.metrics import adjusted_rand_score
from sklearn.model_selection import train_test_split
from sklearn.preprocessing import StandardScaler

import kestrel
from test_estimators import kestrel_cli


def standardized(loader):
    X, y = loader(return_X_y=True)
    return StandardScaler().fit_transform(X), y


def test_pairs_from_a_tenth_of_the_labels_cluster_digits_better_than_unsupervised_clusterers():
    X, y = standardized(load_digits)
    npkl = kestrel.NPKL(n_clusters=10, pair_fraction=0.1, random_state=0).fit(X, y)
    ours = adjusted_rand_score(y, npkl.labels_)
    kmeans = adjusted_rand_score(y, KMeans(10, n_init=10, random_state=0).fit_predict(X))
    spectral = adjusted_rand_score(
        y, SpectralClustering(10, affinity="nearest_neighbors", random_state=0).fit_predict(X)
    )
    assert ours > max(kmeans, spectral) + 0.1, (ours, kmeans, spectral)
    assert npkl.embedding_.shape == (len(X), npkl.summary_["rank"])
    assert npkl.summary_["pairs"] == 2 * int(0.1 * len(X))


def test_new_rows_are_placed_in_their_class_cluster():
    X, y = standardized(load_wine)
    X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.3, random_state=0, stratify=y)
    npkl = kestrel.NPKL(n_clusters=3, random_state=0).fit(X_train, y_train)
    held_out = adjusted_rand_score(y_test, npkl.predict(X_test))
    kmeans = adjusted_rand_score(y_test, KMeans(3, n_init=10, random_state=0).fit(X_train).predict(X_test))
    assert held_out >= kmeans, (held_out, kmeans)
    assert npkl.transform(X_test).shape == (len(X_test), npkl.embedding_.shape[1])
    names = npkl.get_feature_names_out()
    assert list(names) == [f"npkl{j}" for j in range(npkl.embedding_.shape[1])]


def write_csv(path, X, y):
    header = ",".join(f"x{j}" for j in range(X.shape[1])) + ",y"
    lines = [",".join(repr(float(v)) for v in row) + f",{label}" for row, label in zip(X, y)]
    path.write_text(header + "\n" + "\n".join(lines) + "\n")


def cli_npkl(tmp_path, X, y, *flags):
    """`kestrel npkl`'s learned columns and clusters for rows X with labels y."""
    rows, out = tmp_path / "rows.csv", tmp_path / "out.csv"
    write_csv(rows, X, y)
    command = [kestrel_cli(), "npkl", "--input", rows, "--output", out, *flags]
    subprocess.run(command, check=True, capture_output=True)
    table = np.loadtxt(out, delimiter=",", skiprows=1)
    return table[:, 2:], table[:, 1].astype(int)


@pytest.mark.parametrize("loss", ["hinge", "square"])
def test_the_learned_kernel_is_the_clis_bit_for_bit(tmp_path, loss):
    X, y = standardized(load_wine)
    flags = ["--loss", loss, "--clusters", "3", "--seed", "7"]
    columns, clusters = cli_npkl(tmp_path, X, y, "--constraints-from-labels", "0.3", *flags)
    npkl = kestrel.NPKL(n_clusters=3, loss=loss, pair_fraction=0.3, random_state=7).fit(X, y)
    # The CLI writes the shortest decimal that reads back to each f64: the same bits.
    assert np.array_equal(columns, npkl.embedding_)
    assert np.array_equal(clusters, npkl.labels_)

    must, cannot = np.array([[0, 1], [60, 61], [130, 131]]), np.array([[0, 60], [1, 130]])
    pairs = tmp_path / "pairs.txt"
    pairs.write_text("".join(f"{i} {j} must\n" for i, j in must) + "".join(f"{i} {j} cannot\n" for i, j in cannot))
    columns, clusters = cli_npkl(tmp_path, X, y, "--constraints", pairs, "--rank", "3", *flags)
    npkl = kestrel.NPKL(n_clusters=3, rank=3, loss=loss, random_state=7).fit(X, must_link=must, cannot_link=cannot)
    assert np.array_equal(columns, npkl.embedding_)
    assert np.array_equal(clusters, npkl.labels_)


def test_pickle_keeps_the_learned_kernel():
    X, y = standardized(load_wine)
    npkl = kestrel.NPKL(n_clusters=3, random_state=1).fit(X[:120], y[:120])
    again = pickle.loads(pickle.dumps(npkl))
    assert np.array_equal(again.transform(X[120:]), npkl.transform(X[120:]))
    assert np.array_equal(again.predict(X[120:]), npkl.predict(X[120:]))
    assert np.array_equal(again.embedding_, npkl.embedding_)


def test_bad_pairs_and_settings_raise():
    X, y = standardized(load_wine)
    with pytest.raises(ValueError, match="learns from pairs"):
        kestrel.NPKL().fit(X)
    with pytest.raises(ValueError, match="outside"):
        kestrel.NPKL(rank=2).fit(X, must_link=[[0, 178]])
    with pytest.raises(ValueError, match="shape"):
        kestrel.NPKL(rank=2).fit(X, must_link=[0, 1])
    with pytest.raises(TypeError, match="integer"):
        kestrel.NPKL(rank=2).fit(X, must_link=[[0.0, 1.0]])
    with pytest.raises(ValueError, match="invalid pairs"):
        kestrel.NPKL(rank=2).fit(X, must_link=[[3, 3]])
    with pytest.raises(ValueError, match="both must-link and cannot-link|invalid pairs"):
        kestrel.NPKL(rank=2).fit(X, must_link=[[0, 1]], cannot_link=[[1, 0]])
    with pytest.raises(ValueError, match="no pairs: give the rank"):
        kestrel.NPKL().fit(X, must_link=np.empty((0, 2), dtype=int))
    with pytest.raises(ValueError, match="clusters must be between 1 and the number of rows"):
        kestrel.NPKL(n_clusters=500).fit(X, y)
    with pytest.raises(ValueError, match="neighbors must be between"):
        kestrel.NPKL(n_neighbors=178).fit(X, y)
    with pytest.raises(ValueError, match="asks for"):
        kestrel.NPKL(pair_fraction=1e6).fit(X, y)
    with pytest.raises(ValueError, match="loss"):
        kestrel.NPKL(loss="cosine").fit(X, y)
    with pytest.raises(ValueError, match="NaN"):
        kestrel.NPKL().fit(np.where(np.eye(len(X), X.shape[1]) > 0, np.nan, X), y)
    npkl = kestrel.NPKL(n_clusters=3).fit(X, y)
    with pytest.raises(ValueError, match="features"):
        npkl.transform(X[:, :5])
