"""scikit-learn estimators over Kestrel's spectral methods on the kNN graph (``kestrel
cluster`` and ``kestrel transform --method eigenmap``): the same Rust code as the CLI, on
float64 rows. The locality preserving projection, which places new rows, is
``KernelProjection(method="lpp")``.
"""

from __future__ import annotations

import numpy as np
from sklearn.base import BaseEstimator, ClusterMixin

from . import _kestrel
from ._estimators import _seed, _validated

__all__ = ["LaplacianEigenmap", "SpectralClustering"]


def _neighbors(n_neighbors, n_samples):
    """The graph's neighbours: ``n_neighbors``, at most every other row."""
    if isinstance(n_neighbors, (int, np.integer)) and n_neighbors >= 1:
        return int(min(n_neighbors, n_samples - 1))
    raise ValueError(f"n_neighbors must be a positive int, got {n_neighbors!r}")


class SpectralClustering(ClusterMixin, BaseEstimator):
    """Spectral clustering (seed 000 §5.2, Ng–Jordan–Weiss) on the graph of each row's
    ``n_neighbors`` nearest neighbours with Gaussian weights — ``kestrel cluster``.

    The graph's connected components are exact leading eigenvectors; Lanczos (with a
    Chebyshev filter when the wanted eigenvalues are close) finds the rest; k-means with 20
    restarts clusters the normalised eigenvector rows.

    Parameters
    ----------
    n_clusters : int, default=8
        Clusters, fewer than the rows; 1 puts every row in cluster 0.
    n_neighbors : int, default=10
        Nearest neighbours of each row in the graph; at most n_samples − 1 are taken.
    random_state : int or None, default=None
        Seed of k-means; None is 1.

    Attributes
    ----------
    labels_ : ndarray of shape (n_samples,)
        The cluster of each row.
    inertia_ : float
        k-means' sum of squared distances in the eigenvector rows.
    n_iter_ : int
        Products of the graph's operator the eigensolver took.

    Examples
    --------
    >>> from sklearn.datasets import make_circles
    >>> from sklearn.metrics import rand_score
    >>> from kestrel import SpectralClustering
    >>> X, y = make_circles(400, factor=0.4, noise=0.03, random_state=0)
    >>> float(rand_score(y, SpectralClustering(2).fit_predict(X)))
    1.0
    """

    def __init__(self, n_clusters=8, *, n_neighbors=10, random_state=None):
        self.n_clusters = n_clusters
        self.n_neighbors = n_neighbors
        self.random_state = random_state

    def fit(self, X, y=None):
        """Clusters the rows of ``X`` (``y`` is ignored)."""
        X = _validated(self, X, dtype=np.float64, ensure_min_samples=2)
        if self.n_clusters == 1:
            self.labels_, self.inertia_, self.n_iter_ = np.zeros(len(X), dtype=np.int64), 0.0, 0
            return self
        labels, inertia, steps, _ = _kestrel.spectral_cluster(
            np.ascontiguousarray(X),
            clusters=int(self.n_clusters),
            neighbors=_neighbors(self.n_neighbors, len(X)),
            seed=_seed(self.random_state),
        )
        self.labels_ = np.asarray(labels, dtype=np.int64)
        self.inertia_ = float(inertia)
        self.n_iter_ = int(steps)
        return self


class LaplacianEigenmap(BaseEstimator):
    """The Laplacian eigenmap (seed 000 §5.1, Belkin–Niyogi) of the rows on the graph of
    each row's ``n_neighbors`` nearest neighbours — ``kestrel transform --method eigenmap``;
    on the same graph it is scikit-learn's ``SpectralEmbedding``. It places the training
    rows only: ``KernelProjection(method="lpp")`` is the projection of new rows.

    Parameters
    ----------
    n_components : int, default=2
        Coordinates, fewer than the rows.
    n_neighbors : int, default=10
        Nearest neighbours of each row in the graph; at most n_samples − 1 are taken.

    Attributes
    ----------
    embedding_ : ndarray of shape (n_samples, n_components)
        The coordinates of the training rows (``YᵀDY = I``).
    eigenvalues_ : ndarray of shape (n_components,)
        The smallest nontrivial eigenvalues of the normalised Laplacian, increasing.

    Examples
    --------
    >>> import numpy as np
    >>> from kestrel import LaplacianEigenmap
    >>> t = np.linspace(0, 3, 60)
    >>> y = LaplacianEigenmap(n_components=1, n_neighbors=4).fit_transform(np.c_[np.cos(t), np.sin(t)])[:, 0]
    >>> bool(np.all(np.diff(y) > 0) or np.all(np.diff(y) < 0))   # an arc unrolled
    True
    """

    def __init__(self, n_components=2, *, n_neighbors=10):
        self.n_components = n_components
        self.n_neighbors = n_neighbors

    def fit(self, X, y=None):
        """Embeds the rows of ``X`` (``y`` is ignored)."""
        X = _validated(self, X, dtype=np.float64, ensure_min_samples=2)
        embedding, eigenvalues = _kestrel.eigenmap(
            np.ascontiguousarray(X), components=int(self.n_components), neighbors=_neighbors(self.n_neighbors, len(X))
        )
        self.embedding_ = np.asarray(embedding)
        self.eigenvalues_ = np.asarray(eigenvalues)
        return self

    def fit_transform(self, X, y=None):
        """The coordinates of the rows of ``X``, shape (n_samples, n_components)."""
        return self.fit(X).embedding_
