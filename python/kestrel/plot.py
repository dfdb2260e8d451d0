"""Plots of an online learner's history (``history_``) on a matplotlib ``Axes``: what
``kestrel stream --report`` draws, for a notebook.

matplotlib is optional: it is imported when a function draws (``pip install matplotlib``).
Each function takes a learner of :mod:`kestrel.online` (or its ``history_`` dict) and an
``Axes`` (a new figure's when omitted), draws one chart with labelled axes and a legend,
and returns the ``Axes``.

>>> import numpy as np
>>> import matplotlib
>>> matplotlib.use("Agg")
>>> from kestrel import plot
>>> from kestrel.online import WindowSVM
>>> X = np.random.default_rng(0).normal(size=(2000, 2))
>>> svm = WindowSVM().partial_fit(X, (X[:, 0] > X[:, 1]).astype(float))
>>> ax = plot.error(svm)
>>> ax.get_ylabel()
'error rate (%)'
"""

from __future__ import annotations

import numpy as np

__all__ = ["error", "rate", "score", "size"]


def _history(source):
    return source if isinstance(source, dict) else source.history_


def _axes(ax):
    if ax is not None:
        return ax
    try:
        import matplotlib.pyplot as plt
    except ImportError as e:  # pragma: no cover - depends on the environment
        raise ImportError("kestrel.plot draws with matplotlib: pip install matplotlib") from e
    return plt.figure(figsize=(8, 3)).add_subplot()


def _cumulative(series):
    count = series["count"]
    totals = np.cumsum(np.where(count > 0, series["mean"] * count, 0.0))
    counts = np.cumsum(count)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(counts > 0, totals / counts, np.nan)


def error(source, ax=None):
    """The prequential error per bucket (rolling) and since the first sample (cumulative),
    against the baseline (the majority label or the mean target so far; a detector that
    never flags), with the drift marks of ``history_["drift"]``.

    >>> import matplotlib; matplotlib.use("Agg")
    >>> import numpy as np
    >>> from kestrel import plot
    >>> from kestrel.online import WindowSLKL
    >>> X = np.linspace(-2, 2, 500)[:, None]
    >>> ax = plot.error(WindowSLKL().partial_fit(X, np.sin(X[:, 0])))
    >>> ax.get_ylabel()
    'squared error (target units²)'
    """
    history, ax = _history(source), _axes(ax)
    regressor = history["task"] == "regressor"
    scale = 1.0 if regressor else 100.0
    loss, baseline = history["loss"], history["baseline"]
    ax.plot(loss["rows"], scale * loss["mean"], label="rolling (each bucket)", color="C0", lw=2)
    ax.plot(loss["rows"], scale * _cumulative(loss), label="cumulative", color="C2", lw=2)
    name = {"classifier": "majority label so far", "regressor": "mean target so far", "detector": "never flagging"}
    ax.plot(baseline["rows"], scale * baseline["mean"], label=f"baseline: {name[history['task']]}", color="C1", lw=1)
    ax.plot(baseline["rows"], scale * _cumulative(baseline), label="baseline, cumulative", color="C7", lw=1)
    for i, row in enumerate(history["drift"]):
        ax.axvline(row, color="C3", lw=1, label="drift: the error jumps" if i == 0 else None)
    ax.set_xlabel("row")
    ax.set_ylabel("squared error (target units²)" if regressor else "error rate (%)")
    ax.legend(loc="upper right", fontsize="small")
    return ax


def rate(source, ax=None):
    """Samples learned per second of wall-clock time, per bucket.

    >>> import matplotlib; matplotlib.use("Agg")
    >>> import numpy as np
    >>> from kestrel import plot
    >>> from kestrel.online import StreamingRSVM
    >>> X = np.random.default_rng(0).normal(size=(800, 2))
    >>> ax = plot.rate(StreamingRSVM().partial_fit(X, (X[:, 0] * X[:, 1] > 0).astype(float)))
    >>> ax.get_ylabel()
    'rows per second (rows/s)'
    """
    history, ax = _history(source), _axes(ax)
    seconds = history["seconds"]
    with np.errstate(invalid="ignore", divide="ignore"):
        ax.plot(seconds["rows"], 1.0 / seconds["mean"], label="rows/s", color="C0")
    ax.set_xlabel("row")
    ax.set_ylabel("rows per second (rows/s)")
    ax.legend(loc="upper right", fontsize="small")
    return ax


def size(source, ax=None):
    """The samples in the learner's window and the centres or support vectors of its
    model, measured once per bucket.

    >>> import matplotlib; matplotlib.use("Agg")
    >>> import numpy as np
    >>> from kestrel import plot
    >>> from kestrel.online import WindowSVM
    >>> X = np.random.default_rng(0).normal(size=(800, 2))
    >>> ax = plot.size(WindowSVM(window=128).partial_fit(X, (X[:, 0] > 0).astype(float)))
    >>> float(max(ax.get_lines()[0].get_ydata()))
    128.0
    """
    history, ax = _history(source), _axes(ax)
    ax.plot(history["window"]["rows"], history["window"]["mean"], label="samples in the window", color="C0")
    ax.plot(history["centres"]["rows"], history["centres"]["mean"], label="centres or support vectors", color="C1")
    ax.set_xlabel("row")
    ax.set_ylabel("held by the learner (samples, centres)")
    ax.legend(loc="upper right", fontsize="small")
    return ax


def score(source, ax=None):
    """A novelty detector's score (min to max band, mean), its threshold, and the buckets
    holding flagged samples.

    >>> import matplotlib; matplotlib.use("Agg")
    >>> import numpy as np
    >>> from kestrel import plot
    >>> from kestrel.online import WindowNovelty
    >>> X = np.random.default_rng(1).normal(size=(600, 3))
    >>> ax = plot.score(WindowNovelty(warmup=64).partial_fit(X))
    >>> ax.get_ylabel()
    'score d² (squared feature-space distance)'
    """
    history, ax = _history(source), _axes(ax)
    if history["task"] != "detector":
        raise ValueError("plot.score draws a novelty detector's history")
    s, flagged = history["score"], history["flagged"]
    ax.fill_between(s["rows"], s["min"], s["max"], color="C0", alpha=0.2, label="score, min to max")
    ax.plot(s["rows"], s["mean"], color="C0", lw=2, label="score, mean")
    ax.plot(history["threshold"]["rows"], history["threshold"]["mean"], color="C3", lw=1, label="threshold")
    hit = flagged["mean"] > 0
    ax.scatter(flagged["rows"][hit], s["max"][hit], color="C1", s=12, label="buckets with flagged rows", zorder=3)
    ax.set_xlabel("row")
    ax.set_ylabel("score d² (squared feature-space distance)")
    ax.legend(loc="upper right", fontsize="small")
    return ax
