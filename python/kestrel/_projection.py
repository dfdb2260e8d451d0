"""scikit-learn transformers over Kestrel's kernel projections (``kestrel transform``).

The rows go to the Rust extension, which fits with the same code as the CLI and returns
the model files' bytes; ``transform`` projects through those bytes (as ``kestrel transform
--apply`` does), so the fitted projection is the file a device reads.
"""

from __future__ import annotations

import numpy as np
from sklearn.base import BaseEstimator, ClassNamePrefixFeaturesOutMixin, TransformerMixin
from sklearn.utils.validation import check_array, check_is_fitted

from . import _kestrel
from ._estimators import _seed, _validated

__all__ = ["KernelProjection", "ReducedKernelCCA"]


def _centres(n_centres):
    if n_centres is None:
        return None
    if isinstance(n_centres, (int, np.integer)) and n_centres >= 1:
        return int(n_centres)
    raise ValueError(f"n_centres must be None or a positive int, got {n_centres!r}")


def _gamma(gamma):
    return None if gamma is None else float(gamma)


class KernelProjection(ClassNamePrefixFeaturesOutMixin, TransformerMixin, BaseEstimator):
    """Kernel PCA (exact, or reduced through ``n_centres`` rows: seed 002 §5.1, seed 003
    §4.1), KSIR (seed 003 §4.2) or the kernel Fisher discriminant (seed 002 §5.2), RBF
    kernel, or the locality preserving projection (seed 000 §5.1, a linear map that keeps
    neighbours close) — ``kestrel transform --method kpca|ksir|kfd|lpp``.

    Parameters
    ----------
    n_components : int, default=2
        Components to keep (KSIR and KFD: fewer than the slices).
    method : {"kpca", "ksir", "kfd", "lpp"}, default="kpca"
        The projection; "ksir" and "kfd" need ``y`` in ``fit``; "lpp" keeps at most
        n_features components and takes no kernel settings.
    n_centres : int or None, default=None
        Rows drawn at random as the reduced set; None is every row (exact for "kpca").
    gamma : float or None, default=None
        Width of the kernel exp(−gamma‖x−x'‖²); None is 1/n_features (as ``KernelPCA``).
    mu : float, default=1e-3
        Weight of the kernel-norm regulariser (ksir, kfd).
    n_slices : int or None, default=None
        KSIR: slices of the sorted response; None is one per distinct label.
    random_state : int or None, default=None
        Seed of the centres' draw; None is 1 (the CLI's default).
    n_neighbors : int, default=10
        LPP: nearest neighbours of each row in the graph.

    Attributes
    ----------
    eigenvalues_ : ndarray of shape (n_components,)
        KPCA: the variance of each component on the training rows; KSIR, KFD: the
        between-slice variance; LPP: the locality μ of each direction (increasing).
    model_bytes_ : bytes
        The fitted projection as a model file.
    n_features_in_ : int
        Features seen in ``fit``.

    Examples
    --------
    >>> import numpy as np
    >>> from kestrel import KernelProjection
    >>> rng = np.random.default_rng(0)
    >>> x = rng.normal(size=(100, 5))
    >>> projection = KernelProjection(n_components=2, n_centres=50, gamma=0.2).fit(x)
    >>> projection.transform(x[:3]).shape, bool(projection.eigenvalues_[0] >= projection.eigenvalues_[1])
    ((3, 2), True)
    """

    def __init__(
        self,
        n_components=2,
        *,
        method="kpca",
        n_centres=None,
        gamma=None,
        mu=1e-3,
        n_slices=None,
        random_state=None,
        n_neighbors=10,
    ):
        self.n_components = n_components
        self.method = method
        self.n_centres = n_centres
        self.gamma = gamma
        self.mu = mu
        self.n_slices = n_slices
        self.random_state = random_state
        self.n_neighbors = n_neighbors

    def fit(self, X, y=None):
        """Fits the projection on the rows of ``X`` (``y``: labels or responses for
        "ksir" and "kfd"; ignored by "kpca" and "lpp")."""
        if y is None or self.method == "lpp":
            X = _validated(self, X, dtype=np.float64, ensure_min_samples=2)
        else:
            X, y = _validated(self, X, y, dtype=np.float64, y_numeric=True, ensure_min_samples=2)
            y = np.ascontiguousarray(y, dtype=np.float64)
        if self.method == "lpp":
            model, eigenvalues = _kestrel.lpp_fit(
                np.ascontiguousarray(X), components=int(self.n_components), neighbors=int(self.n_neighbors)
            )
        else:
            model, eigenvalues = _kestrel.projection_fit(
                np.ascontiguousarray(X),
                y,
                method=self.method,
                components=int(self.n_components),
                centres=_centres(self.n_centres),
                gamma=_gamma(self.gamma),
                mu=float(self.mu),
                slices=None if self.n_slices is None else int(self.n_slices),
                seed=_seed(self.random_state),
            )
        self.model_bytes_ = model
        self.eigenvalues_ = np.asarray(eigenvalues)
        return self

    @property
    def _n_features_out(self):
        """The components a row is projected on: ``get_feature_names_out`` names them
        ``kernelprojection0``, … (and ``set_output(transform="pandas")`` so)."""
        return self.eigenvalues_.shape[0]

    def transform(self, X):
        """The components of the rows of ``X``, shape (n_samples, n_components)."""
        check_is_fitted(self, "model_bytes_")
        X = _validated(self, X, reset=False, dtype=np.float64)
        return _kestrel.projection_transform(self.model_bytes_, np.ascontiguousarray(X))

    def to_bytes(self):
        """The fitted projection as a Kestrel model file (what ``kestrel transform
        --apply`` and the core's ``KernelProjection::from_envelope_in`` read)."""
        check_is_fitted(self, "model_bytes_")
        return bytes(self.model_bytes_)

    @classmethod
    def from_bytes(cls, data):
        """A fitted projection from a model file's bytes (``to_bytes()``, or a file written
        by ``kestrel transform --model``), ready to ``transform``.

        The file keeps the projection, not how it was found: ``eigenvalues_`` and the
        fitting parameters (but ``n_components``) are not restored. A file written by
        ``kestrel transform --scale`` keeps its standardisation too: ``transform`` then
        takes rows in their own units, as ``--apply`` does.

        Raises
        ------
        ValueError
            When the bytes are not a Kestrel file, or hold a model that predicts rather
            than a projection.

        Examples
        --------
        >>> import numpy as np
        >>> from kestrel import KernelProjection
        >>> x = np.random.default_rng(0).normal(size=(50, 4))
        >>> fitted = KernelProjection(n_centres=20, gamma=0.2).fit(x)
        >>> loaded = KernelProjection.from_bytes(fitted.to_bytes())
        >>> bool(np.array_equal(loaded.transform(x), fitted.transform(x)))
        True
        """
        data = bytes(data)
        info = _kestrel.describe(data)
        if info["task"] != "projection":
            raise ValueError(f"the bytes hold a {info['kind']} model, not a projection: load it with kestrel.load")
        projection = cls(n_components=info["components"])
        projection.model_bytes_ = data
        projection.n_features_in_ = info["dim"]
        return projection


class ReducedKernelCCA(BaseEstimator):
    """Reduced kernel canonical correlation analysis of two views (seed 003 §4.3, eq.
    44-48) with the kernel-norm regulariser, RBF kernels — ``kestrel transform --method
    kcca``. Like scikit-learn's ``CCA``: ``fit(X, Y)``, ``transform(X, Y)``.

    Parameters
    ----------
    n_components : int, default=2
        Canonical pairs to keep.
    n_centres : int or None, default=None
        Rows drawn at random as the reduced set of both views; None is every row.
    gamma : float or None, default=None
        Width of both kernels; None is 1/n_features of each view.
    mu : float, default=1e-3
        Weight of the kernel-norm regulariser added to each view's covariance.
    random_state : int or None, default=None
        Seed of the centres' draw; None is 1.

    Attributes
    ----------
    correlations_ : ndarray of shape (n_components,)
        The regularised canonical correlations.
    x_model_bytes_, y_model_bytes_ : bytes
        Each view's projection as a model file.
    n_features_in_ : int
        Features of the first view.
    """

    def __init__(self, n_components=2, *, n_centres=None, gamma=None, mu=1e-3, random_state=None):
        self.n_components = n_components
        self.n_centres = n_centres
        self.gamma = gamma
        self.mu = mu
        self.random_state = random_state

    def fit(self, X, Y):
        """Fits the canonical pairs of the views ``X`` and ``Y`` (row ``i`` of each the
        same observation)."""
        X = _validated(self, X, dtype=np.float64, ensure_min_samples=2)
        Y = check_array(Y, dtype=np.float64, ensure_min_samples=2)
        if len(Y) != len(X):
            raise ValueError(f"Y has {len(Y)} rows, X has {len(X)}: the views must be the same rows")
        x_model, y_model, correlations = _kestrel.kcca_fit(
            np.ascontiguousarray(X),
            np.ascontiguousarray(Y),
            components=int(self.n_components),
            centres=_centres(self.n_centres),
            gamma=_gamma(self.gamma),
            mu=float(self.mu),
            seed=_seed(self.random_state),
        )
        self.x_model_bytes_, self.y_model_bytes_ = x_model, y_model
        self.correlations_ = np.asarray(correlations)
        return self

    def transform(self, X, Y=None):
        """The canonical variates of the rows of ``X``, and of ``Y`` when given (then a
        pair of arrays)."""
        check_is_fitted(self, "x_model_bytes_")
        X = _validated(self, X, reset=False, dtype=np.float64)
        x_scores = _kestrel.projection_transform(self.x_model_bytes_, np.ascontiguousarray(X))
        if Y is None:
            return x_scores
        Y = np.ascontiguousarray(check_array(Y, dtype=np.float64))
        return x_scores, _kestrel.projection_transform(self.y_model_bytes_, Y)

    def fit_transform(self, X, Y):
        """``fit(X, Y).transform(X, Y)``."""
        return self.fit(X, Y).transform(X, Y)
