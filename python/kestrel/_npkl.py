"""Kernel learning from must-link and cannot-link pairs (NPKL, seed 004) as a scikit-learn
transformer and clusterer, over the code ``kestrel npkl`` runs."""

from __future__ import annotations

import numpy as np
from sklearn.base import BaseEstimator, ClassNamePrefixFeaturesOutMixin, ClusterMixin, TransformerMixin
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted

from . import _kestrel
from ._estimators import _seed, _validated

__all__ = ["NPKL"]

_LOSSES = ("hinge", "squared_hinge", "square", "linear")


def _pair_array(pairs, name, n):
    """``pairs`` as a ``(p, 2)`` array of row numbers of the ``n`` training rows."""
    array = np.asarray(pairs)
    if array.size == 0:
        return np.empty((0, 2), dtype=np.int64)
    if array.ndim != 2 or array.shape[1] != 2:
        raise ValueError(f"{name} must be an array of shape (n_pairs, 2), got shape {array.shape}")
    if not np.issubdtype(array.dtype, np.integer):
        raise TypeError(f"{name} must hold integer row numbers, got dtype {array.dtype}")
    if array.min() < 0 or array.max() >= n:
        raise ValueError(f"{name} names a row outside 0..{n - 1}")
    return array.astype(np.int64)


class NPKL(ClassNamePrefixFeaturesOutMixin, TransformerMixin, ClusterMixin, BaseEstimator):
    """Nonparametric low-rank kernel learning from pairs by block coordinate descent
    (seed 004), then k-means on the learned kernel.

    NPKL learns a kernel matrix ``K = VᵀV`` of the training rows that is smooth on their
    k-nearest-neighbour graph and agrees with must-link pairs (large ``K_ij``) and
    cannot-link pairs (small ``K_ij``). The columns ``v_i`` are the learned features;
    k-means on them clusters the rows (constrained clustering). New rows are placed by the
    out-of-sample extension (eq. 13): a weighted mean of their training neighbours'
    columns.

    Parameters
    ----------
    n_clusters : int, default=2
        Clusters of k-means on the learned features.
    rank : int or None, default=None
        Rank ``r`` of the learned kernel (features per row); None is the paper's rule, the
        largest ``r`` with ``r(r+1)/2`` ≤ the number of pairs.
    n_neighbors : int, default=5
        Neighbours of each row in the graph.
    loss : {"hinge", "squared_hinge", "square", "linear"}, default="hinge"
        Loss between the learned kernel and the pairs.
    pair_fraction : float, default=0.5
        When ``fit`` gets labels ``y`` and no pairs: ``pair_fraction·n`` must-link and as
        many cannot-link pairs are drawn at random from the labels.
    random_state : int or None, default=None
        Seed of the pair draw, the initial ``V``, the visiting orders and k-means; None is 1.

    Attributes
    ----------
    embedding_ : ndarray of shape (n_samples, rank)
        The learned features of the training rows (``K_ij = embedding_[i] @ embedding_[j]``).
    labels_ : ndarray of shape (n_samples,)
        The cluster of each training row.
    cluster_centers_ : ndarray of shape (n_clusters, rank)
        The k-means centroids in the learned features.
    n_features_in_ : int
        Features seen in ``fit``.
    n_iter_ : int
        Sweeps of block coordinate descent.
    summary_ : dict
        What the run did: pairs, rank, the graph's width ``sigma``, sweeps, objective,
        whether it converged, the k-means inertia.

    Notes
    -----
    The method is transductive: ``fit_transform`` returns the learned columns of the
    training rows, while ``transform`` places any rows by the extension, so ``transform``
    of a training row in a pair generally differs from its learned column. Memory is that
    of ``kestrel npkl``: the graph (``O(n·k)``), the pairs and ``V`` (``O(n·r)``).

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.datasets import make_circles
    >>> from kestrel import NPKL
    >>> X, y = make_circles(200, factor=0.4, noise=0.05, random_state=0)
    >>> npkl = NPKL(n_clusters=2).fit(X, y)
    >>> npkl.embedding_.shape[0], sorted(np.unique(npkl.labels_).tolist())
    (200, [0, 1])
    """

    def __init__(self, n_clusters=2, rank=None, n_neighbors=5, loss="hinge", pair_fraction=0.5, random_state=None):
        self.n_clusters = n_clusters
        self.rank = rank
        self.n_neighbors = n_neighbors
        self.loss = loss
        self.pair_fraction = pair_fraction
        self.random_state = random_state

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.transformer_tags.preserves_dtype = ["float64"]
        return tags

    def _pairs(self, n, y, must_link, cannot_link):
        """The pairs as ``(i, j, must)`` triples, or the classes to draw them from."""
        if must_link is None and cannot_link is None:
            if y is None:
                raise ValueError(
                    "NPKL learns from pairs: pass must_link and/or cannot_link, or labels y to draw them from"
                )
            check_classification_targets(y)
            _, classes = np.unique(y, return_inverse=True)
            return None, [int(c) for c in classes]
        triples = [(int(i), int(j), True) for i, j in _pair_array([] if must_link is None else must_link, "must_link", n)]
        triples += [(int(i), int(j), False) for i, j in _pair_array([] if cannot_link is None else cannot_link, "cannot_link", n)]
        return triples, None

    def fit(self, X, y=None, must_link=None, cannot_link=None):
        """Learn the kernel and cluster with it.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training rows (dense).
        y : array-like of shape (n_samples,), optional
            Labels of every row, to draw pairs from when no pairs are given.
        must_link, cannot_link : array-like of shape (n_pairs, 2), optional
            Row numbers of rows known to be in the same cluster, or in different ones.

        Returns
        -------
        self
        """
        if y is None:
            X = _validated(self, X, dtype=np.float64, ensure_min_samples=2)
        else:
            X, y = _validated(self, X, y, dtype=np.float64, ensure_min_samples=2)
        if self.loss not in _LOSSES:
            raise ValueError(f"loss must be one of {_LOSSES}, got {self.loss!r}")
        pairs, classes = self._pairs(X.shape[0], y, must_link, cannot_link)
        X = np.ascontiguousarray(X)
        kernel, features, labels, centroids, summary = _kestrel.npkl_fit(
            X, pairs=pairs, classes=classes, fraction=float(self.pair_fraction),
            rank=None if self.rank is None else int(self.rank), neighbors=int(self.n_neighbors), loss=self.loss,
            clusters=int(self.n_clusters), seed=_seed(self.random_state),
        )
        self._kernel, self._fit_X, self._graph = kernel, X, (int(self.n_neighbors), self.loss)
        self.embedding_, self.cluster_centers_ = features, centroids
        self.labels_ = labels.astype(np.intp)
        self.n_iter_, self.summary_ = summary["sweeps"], summary
        return self

    def fit_transform(self, X, y=None, must_link=None, cannot_link=None):
        """Fit, and return the learned features of the training rows (``embedding_``)."""
        return self.fit(X, y, must_link=must_link, cannot_link=cannot_link).embedding_.copy()

    def fit_predict(self, X, y=None, must_link=None, cannot_link=None):
        """Fit, and return the cluster of each training row (``labels_``)."""
        return self.fit(X, y, must_link=must_link, cannot_link=cannot_link).labels_.copy()

    @property
    def _n_features_out(self):
        """The learned features of a row: ``get_feature_names_out`` names them ``npkl0``, …"""
        return self.embedding_.shape[1]

    def transform(self, X):
        """The learned features of rows, by the out-of-sample extension (eq. 13).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples, rank)
        """
        check_is_fitted(self, "embedding_")
        X = _validated(self, X, reset=False, dtype=np.float64)
        return self._kernel.transform(np.ascontiguousarray(X))

    def predict(self, X):
        """The cluster of each row: the nearest centroid to its learned features.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples,)
        """
        features = self.transform(X)
        distances = ((features[:, None, :] - self.cluster_centers_[None, :, :]) ** 2).sum(axis=2)
        return distances.argmin(axis=1).astype(np.intp)

    def __getstate__(self):
        # The learned kernel is rebuilt from the training rows and their columns.
        state = dict(super().__getstate__())  # a copy: the estimator keeps its kernel
        state.pop("_kernel", None)
        return state

    def __setstate__(self, state):
        super().__setstate__(state)
        if "_fit_X" in state:
            neighbors, loss = state["_graph"]
            self._kernel = _kestrel.LearnedKernel(state["_fit_X"], neighbors, loss, state["embedding_"])
