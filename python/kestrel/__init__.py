"""Kestrel: kernel learning under a fixed memory budget, from Python.

scikit-learn estimators over the Rust learners of the ``kestrel`` CLI — the same code, the
same ``"auto"`` settings, the same model files:

>>> from sklearn.datasets import make_moons
>>> from kestrel import ReducedKernelSVC
>>> X, y = make_moons(300, noise=0.2, random_state=0)
>>> clf = ReducedKernelSVC().fit(X, y)
>>> clf.score(X, y) > 0.9
True
>>> import kestrel
>>> model = kestrel.load(clf.to_bytes())
>>> bool((model.predict(X) == clf.predict(X)).all())
True

``to_bytes()`` is the model file ``kestrel predict --model`` reads (and, for ``scalar="f32"``,
what a device's ``kestrel_model_open`` or ``include_bytes!`` reads); :func:`load` reads one
back from bytes or a path.
"""

from __future__ import annotations

import json

import numpy as np

from . import _kestrel, online, plot
from ._estimators import (
    DCDLinearSVC,
    KernelNoveltyDetector,
    KernelPLSNystrom,
    KernelRidgeNystrom,
    ReducedKernelSVC,
    SLKLRegressor,
    SmoothSVR,
    _by_name,
    _bytes_of,
    _rows,
)
from ._npkl import NPKL
from ._projection import KernelProjection, ReducedKernelCCA
from ._spectral import LaplacianEigenmap, SpectralClustering

__all__ = [
    "NPKL",
    "DCDLinearSVC",
    "KernelNoveltyDetector",
    "KernelProjection",
    "KernelPLSNystrom",
    "KernelRidgeNystrom",
    "LaplacianEigenmap",
    "Model",
    "ReducedKernelCCA",
    "ReducedKernelSVC",
    "SLKLRegressor",
    "SmoothSVR",
    "SpectralClustering",
    "import_checkpoint",
    "load",
    "online",
    "plot",
    "with_feature_names",
]


def _describe(data):
    """What ``kestrel inspect`` shows of the model ``data``; a device's checkpoint is named,
    with the call that makes it a model."""
    try:
        return _kestrel.describe(data)
    except ValueError as error:
        if data[:4] == b"KSDC":
            raise ValueError(f"{error}; in Python, kestrel.import_checkpoint(FILE) makes it a Model") from None
        raise


class Model:
    """A Kestrel model file, loaded: predicts as ``kestrel predict`` does.

    Parameters
    ----------
    data : bytes
        The model file's bytes.

    Attributes
    ----------
    info : dict
        What ``kestrel inspect`` shows: kind, scalar, dim, centers, bytes, kernel, task,
        scaled, class_names, feature_names (empty unless a CSV header or
        :func:`with_feature_names` gave them), probabilities (whether
        :meth:`predict_proba` has them), and summary (its first line, which the model's
        ``repr`` shows).
    """

    def __init__(self, data):
        self._bytes = bytes(data)
        self.info = _describe(self._bytes)
        if self.info["task"] == "projection":
            raise ValueError(
                f"the bytes hold a kernel projection ({self.info['components']} components), which "
                "predicts nothing: load it with kestrel.load or KernelProjection.from_bytes"
            )

    def __repr__(self):
        return f"<kestrel.Model: {self.info['summary']}>"

    def predict(self, X):
        """One prediction per row: the class (its name for a model of named classes) or
        the value.

        Parameters
        ----------
        X : array-like or scipy.sparse matrix of shape (n_samples, n_features)
            A DataFrame's columns are taken by the model's feature names when it has them
            (in any order, as ``kestrel predict`` reads a CSV's); a DataFrame without one
            of them is an error.

        Returns
        -------
        ndarray of shape (n_samples,)
        """
        rows = _rows(_by_name(X, self.info["feature_names"]))
        if isinstance(rows, np.ndarray) and rows.ndim != 2:
            raise ValueError(f"X must be 2-D, got shape {rows.shape}")
        values = _kestrel.predict(self._bytes, rows)
        names = self.info["class_names"]
        if names:
            return np.asarray(names, dtype=object)[values.astype(np.intp)]
        return values

    def predict_proba(self, X):
        """Class probabilities of a classifier trained with them (``kestrel train
        --probabilities``, ``probability=True``), as ``kestrel predict --probabilities``
        gives them.

        Parameters
        ----------
        X : array-like or scipy.sparse matrix of shape (n_samples, n_features)
            As for :meth:`predict`.

        Returns
        -------
        ndarray of shape (n_samples, n_classes)
            One column per class in the order of its label (for named classes, of
            ``info["class_names"]``); each row sums to 1.

        Raises
        ------
        ValueError
            For a model without class probabilities (``info["probabilities"]`` False).
        """
        rows = _rows(_by_name(X, self.info["feature_names"]))
        if isinstance(rows, np.ndarray) and rows.ndim != 2:
            raise ValueError(f"X must be 2-D, got shape {rows.shape}")
        values, labels = _kestrel.probabilities(self._bytes, rows)
        return values[:, np.argsort(labels)]

    def to_bytes(self):
        """The model file's bytes."""
        return self._bytes


def load(source):
    """Load a Kestrel model file.

    Parameters
    ----------
    source : bytes or path-like
        The model's bytes (``est.to_bytes()``), or the path of a ``.kestrel`` file.

    Returns
    -------
    Model or KernelProjection
        A ``Model`` that predicts; for a projection (``kestrel transform --model``, or
        ``KernelProjection.to_bytes()``), a fitted ``KernelProjection`` that transforms.
    """
    data = _bytes_of(source)
    if _describe(data)["task"] == "projection":
        return KernelProjection.from_bytes(data)
    return Model(data)


def import_checkpoint(checkpoint, scaler=None):
    """The model a device learned: a checkpoint its C library wrote, as a ``Model``.

    A learner of the C library (``kestrel_svm``, ``kestrel_slkl``, ``kestrel_novelty``)
    writes checkpoints to flash to survive a reset; copied off the device, one holds all
    that the learner's ``*_save`` would write. This resumes it with the library's own code
    and saves it — the bytes the device would have written, as ``kestrel import`` does:

    >>> import kestrel
    >>> model = kestrel.import_checkpoint("saved.bin", scaler="scaler.bin")  # doctest: +SKIP
    >>> model.info["kind"], model.info["dim"], model.info["scaled"]          # doctest: +SKIP
    ('linear-svm', 3, True)
    >>> kestrel.import_checkpoint(b"KSDC")
    Traceback (most recent call last):
    ...
    ValueError: checkpoint: a device checkpoint cut short: ...

    Parameters
    ----------
    checkpoint : bytes or path-like
        The learner's checkpoint (``kestrel_svm_checkpoint`` and its siblings).
    scaler : bytes or path-like, optional
        The checkpoint of the ``kestrel_scaler`` that standardised the learner's inputs: its
        statistics go into the model, which then takes raw units.

    Returns
    -------
    Model

    Raises
    ------
    ValueError
        Bytes that are no checkpoint, a torn or damaged one ("a device checkpoint cut
        short"), a scaler's checkpoint given as the learner's, or a scaler of another
        dimension; the message names the input.
    """
    scaler = None if scaler is None else _bytes_of(scaler)
    return Model(_kestrel.import_checkpoint(_bytes_of(checkpoint), scaler))


def describe_checkpoint(checkpoint):
    """What a checkpoint a device's C library wrote holds, as ``kestrel inspect --json`` says.

    >>> import kestrel
    >>> info = kestrel.describe_checkpoint("saved.bin")                  # doctest: +SKIP
    >>> info["object"], info["samples_seen"], info["resumes"], info["config"]["window"]  # doctest: +SKIP
    ('kestrel_svm', 300, True, 128)

    Parameters
    ----------
    checkpoint : bytes or path-like
        A checkpoint of ``kestrel_svm``, ``kestrel_slkl``, ``kestrel_novelty`` or
        ``kestrel_scaler`` (``kestrel_svm_checkpoint`` and its siblings).

    Returns
    -------
    dict
        ``kind`` ("device-checkpoint"), ``object`` (the C name), ``bytes``, the header's
        fields by the C struct's names (``config``, ``samples_seen``, …; a ``kestrel_svm``'s
        ``probability_samples``, the samples of -1 and of +1 its class probability learned
        from, ``None`` in a checkpoint written before it had one), and for a learner
        ``resumes``, with the summary of the ``model`` :func:`import_checkpoint` makes, or
        the ``error`` why it makes none.

    Raises
    ------
    ValueError
        Bytes that are no checkpoint, or a torn or damaged one ("a device checkpoint cut
        short").
    """
    return json.loads(_kestrel.describe_checkpoint(_bytes_of(checkpoint)))


def with_feature_names(source, names):
    """A model file's bytes with the names of its features, in its order.

    ``kestrel train`` and ``kestrel stream`` write them from a CSV header; ``kestrel predict``
    and ``kestrel eval`` then read a CSV's columns by these names (in any order, and refuse
    a CSV that lacks one). Give a model fitted on arrays the names of its columns:

    >>> import numpy as np
    >>> from kestrel import DCDLinearSVC, load, with_feature_names
    >>> X, y = np.array([[20.0, 50.0], [10.0, 40.0]]), np.array([1, -1])
    >>> named = with_feature_names(DCDLinearSVC().fit(X, y).to_bytes(), ["temp", "humidity"])
    >>> load(named).info["feature_names"]
    ['temp', 'humidity']

    Parameters
    ----------
    source : bytes or path-like
        A model without feature names.
    names : list of str
        One name per feature.
    """
    return _kestrel.with_feature_names(_bytes_of(source), [str(name) for name in names])
