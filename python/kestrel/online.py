"""Online learners with River's interface: ``learn_one(x, y)`` and ``predict_one(x)`` on
dicts, and a numpy batch form, ``partial_fit(X, y)`` and ``predict(X)``.

They are the windowed learners of ``kestrel stream`` — the same Rust code, the same
defaults (window 256 and 32 centres, the novelty detector's 48 and 16; at most 300
coordinate steps per sample until the stopping rule holds, features standardised online,
RBF width ``1/d``, a memory of 2000 samples for the SVMs), the same state:
``save_state()`` returns the bytes a ``kestrel stream`` checkpoint holds for its learner,
``load_state()`` takes them back, ``load_checkpoint()`` continues a ``kestrel stream
--checkpoint`` run, and ``to_bytes()`` is the model file ``kestrel predict`` reads. A
learner pickles (``pickle``, ``copy.deepcopy``) with its state and history: the copy goes
on where the learner was.

A learner takes its features from the first sample — a dict's keys in their order (later
dicts may leave features out, which count as 0; a key not seen first is an error; string
keys are the model file's feature names), or a matrix's columns (a DataFrame's names, read
by name thereafter) — or from ``features``,
given: the keys of every sample to come, for a stream whose later samples bring keys the
first lacks (River's ``OneHotEncoder`` emits ``mode_idle`` only once a sample is idle). A classifier takes
numeric labels as they are and other labels (strings, booleans) as classes in order of
first appearance (one kind or the other; ``None`` is no label: a sample without one is
predicted, not learned, as ``kestrel stream`` treats a row whose label is missing). The SVMs'
class probabilities (``predict_proba_one``) are Platt's sigmoids of their
decision values, fitted online; ``load_state`` and ``load_checkpoint`` fit them again from
the samples learned after.
"""

from __future__ import annotations

import inspect
import math
import numbers

import numpy as np

try:  # River's base classes, when River is installed: its metrics and pipelines check them.
    from river.base import AnomalyDetector as _RiverAnomalyDetector
    from river.base import Classifier as _RiverClassifier
    from river.base import Regressor as _RiverRegressor
except ImportError:  # pragma: no cover - River is optional
    _RiverClassifier = _RiverRegressor = _RiverAnomalyDetector = object

from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin

from . import _kestrel
from ._estimators import _by_name, _bytes_of, _rows

__all__ = ["StreamingRSVM", "WindowNovelty", "WindowSLKL", "WindowSVM"]


def _number(name, value):
    """The value of feature ``name`` as a finite float, or a ``ValueError`` naming it."""
    try:
        number = float(value)
    except (TypeError, ValueError):
        if value is None:
            why = "a missing value: leave the key out (it counts as 0) or fill it in (River's preprocessing.StatImputer)"
        elif hasattr(value, "timestamp") or isinstance(value, np.datetime64):
            why = "a date and time: leave the key out, or give it as a number (.timestamp(), seconds since 1970, or .hour)"
        else:
            why = "not a number: River's preprocessing.OneHotEncoder makes a category numbers"
        raise ValueError(f"feature {name!r} is {value!r}, {why}") from None
    if not math.isfinite(number):
        raise ValueError(f"feature {name!r} is {value!r}, not a finite number")
    return number


def _column_names(X):
    """A DataFrame's column names when they are all strings (they name the model's
    features), else ``None``."""
    columns = getattr(X, "columns", None)
    return None if columns is None else _named(list(columns))


def _named(names):
    """``names`` when they are all strings (a DataFrame's columns are then read by them),
    else ``None``."""
    return names if names and all(isinstance(name, str) for name in names) else None


class _Online(BaseEstimator):
    _learner = ""
    # The extension's names of the settings whose Python names differ.
    _renamed = {"C": "c"}

    def _begin(self):
        """Empty state; the settings are the ``__init__`` arguments, kept as attributes (as
        River and scikit-learn read them)."""
        self._stream = None
        self.feature_names_ = None
        self._names = []
        self._numeric_labels = False
        self._declared = None

    def _settings(self):
        names = inspect.signature(type(self).__init__).parameters
        own = ("self", "features")
        settings = {self._renamed.get(name, name): getattr(self, name) for name in names if name not in own}
        for name in ("c", "bias", "delta", "nu", "tol"):
            if settings.get(name) is not None:
                settings[name] = float(settings[name])
        declared = self._declared
        if declared is not None and settings.get("classes") is None:
            settings["classes"] = max(2, len(declared))
        return settings

    # --- features and labels ------------------------------------------------------------
    def _start(self, dim):
        if self._stream is None:
            self._stream = _kestrel.Stream(self._learner, dim, **self._settings())
        return self._stream

    def _row(self, x):
        if self.feature_names_ is None:
            self.feature_names_ = list(x if self.features is None else self.features)
        index = {name: j for j, name in enumerate(self.feature_names_)}
        row = np.zeros((1, len(self.feature_names_)))
        for name, value in x.items():
            if name not in index:
                whence = "the first sample" if self.features is None else "features"
                raise ValueError(
                    f"feature {name!r} was not in {whence}: {self.feature_names_} (a learner's features are fixed "
                    "at its start: give every key to come, features=[...])"
                )
            row[0, index[name]] = _number(name, value)
        return row

    def _labels(self, y):
        raise NotImplementedError

    def _learn(self, rows, dim, y):
        """Learns ``rows`` (of ``dim`` features) with labels ``y``."""
        self._start(dim).learn(rows, self._labels(y))

    def _values(self, predictions):
        raise NotImplementedError

    # --- River's interface --------------------------------------------------------------
    def learn_one(self, x, y):
        """Learn one sample.

        Parameters
        ----------
        x : dict
            Feature name to value.
        y : label or float
        """
        row = self._row(x)
        self._learn(row, row.shape[1], [y])

    # What ``predict_one`` gives before the first sample was learned: as ``kestrel stream``
    # predicts then (no class for a classifier, the mean of no targets for a regressor).
    _before_learning = None

    def predict_one(self, x):
        """The prediction for one sample (before the first sample was learned: ``None`` from
        a classifier, ``0.0`` from a regressor, as ``kestrel stream`` predicts then and as
        River's learners answer).

        Parameters
        ----------
        x : dict
        """
        if self._stream is None:
            return self._before_learning
        return self._values(self._stream.predict(self._row(x)))[0]

    # --- the numpy batch form -----------------------------------------------------------
    def partial_fit(self, X, y):
        """Learn the rows of ``X`` in order.

        Parameters
        ----------
        X : array-like or scipy.sparse matrix of shape (n_samples, n_features)
            The first DataFrame's column names (strings) name the learner's features, as
            a dict's keys do; later DataFrames, here and in ``predict``, are read by them,
            in any order.
        y : array-like of shape (n_samples,)

        Returns
        -------
        self
        """
        names = self.feature_names_
        if names is None:
            names = list(self.features) if self.features is not None else _column_names(X)
        rows = _rows(_by_name(X, _named(names)))
        dim = rows[3] if isinstance(rows, tuple) else rows.shape[1]
        if self.features is not None and dim != len(self.features):
            raise ValueError(f"X has {dim} columns, features names {len(self.features)}")
        self._learn(rows, dim, y)
        self.feature_names_ = list(range(dim)) if names is None else names
        return self

    # --- scikit-learn's parameters (get_params is BaseEstimator's) -------------------------
    def set_params(self, **params):
        """Changes settings by ``__init__``'s names (scikit-learn's ``set_params``), before
        the learner has learned or to the values it has: its settings are fixed once it has
        learned, and ``fit`` starts afresh.

        Returns
        -------
        self
        """
        known = self.get_params()
        for name, value in params.items():
            if name not in known:
                raise ValueError(f"{name!r} is not a setting of {type(self).__name__}: {sorted(known)}")
            if self._stream is not None and value != known[name]:
                raise ValueError(f"{name!r}: the learner has learned, its settings are fixed (fit starts afresh)")
        return super().set_params(**params)

    def fit(self, X, y=None, **fit_params):
        """Learn the rows of ``X`` in order from a fresh start (scikit-learn's ``fit`` of an
        incremental estimator): what the learner had learned, its features and classes are
        forgotten first; ``fit_params`` are ``partial_fit``'s (a classifier's ``classes``).

        Parameters
        ----------
        X : array-like or scipy.sparse matrix of shape (n_samples, n_features)
        y : array-like of shape (n_samples,), or None for a detector

        Returns
        -------
        self
        """
        self._begin()
        return self.partial_fit(X, y, **fit_params)

    def predict(self, X):
        """One prediction per row of ``X`` (``None`` entries before a classifier has seen a
        label; NaN for a regressor's).

        Parameters
        ----------
        X : array-like or scipy.sparse matrix of shape (n_samples, n_features)
        """
        rows = self._learned_rows(X)
        return self._values(self._stream.predict(rows))

    def _learned_rows(self, X):
        """The rows of ``X``, read by the learner's features, for a learner that has learned
        (a ``ValueError`` before)."""
        if self._stream is None:
            raise ValueError("the learner has learned nothing yet")
        return _rows(_by_name(X, _named(self.feature_names_)))

    # --- history --------------------------------------------------------------------------
    @property
    def history_(self):
        """The series of the samples learned, as ``kestrel stream --report`` draws them: each
        sample predicted before it is learned, summarised in at most 256 buckets of equal
        width per series (adjacent buckets merge as the stream grows), so the history takes
        the same memory for any number of samples.

        A dict: ``"task"`` (``"classifier"``, ``"regressor"`` or ``"detector"``), ``"drift"``
        (the rows where the rolling loss jumps) and the series ``"loss"`` (0/1 for a wrong
        class, the squared error, or a detector's flag against its label), ``"baseline"``
        (the same for the majority label or the mean target so far), ``"seconds"`` (per
        sample), ``"window"`` and ``"centres"`` (the learner's size), ``"steps"`` (the
        coordinate steps each sample took; not counted for a detector) and, for a detector,
        ``"score"``, ``"threshold"`` and ``"flagged"``. Each series is a dict of numpy
        arrays with an entry per bucket: ``"rows"`` (the bucket's last sample, from 1),
        ``"count"``, ``"min"``, ``"mean"``, ``"max"`` (NaN where nothing was counted), and
        ``"width"``, the samples per bucket. :mod:`kestrel.plot` draws them.

        Examples
        --------
        >>> import numpy as np
        >>> from kestrel.online import WindowSVM
        >>> X = np.random.default_rng(0).normal(size=(1000, 2))
        >>> svm = WindowSVM().partial_fit(X, (X[:, 0] > X[:, 1]).astype(float))
        >>> loss = svm.history_["loss"]
        >>> int(loss["rows"][-1]), loss["width"], len(loss["mean"])
        (1000, 4, 250)
        """
        if self._stream is None:
            raise AttributeError("history_: the learner has learned nothing yet")
        return self._stream.history()

    @property
    def chosen_(self):
        """The settings the learner chose itself, by name: for :class:`StreamingRSVM`
        without ``gamma`` the width leading its race, for :class:`WindowSVM` without ``C``
        the cost, for :class:`WindowSLKL` without ``nu`` its ν (``kestrel stream``'s
        ``chosen``); empty for the others.

        Examples
        --------
        >>> import numpy as np
        >>> from kestrel.online import StreamingRSVM
        >>> X = np.random.default_rng(0).normal(size=(600, 2))
        >>> rsvm = StreamingRSVM().partial_fit(X, (X[:, 0] * X[:, 1] > 0).astype(float))
        >>> sorted(rsvm.chosen_)
        ['gamma']
        """
        if self._stream is None:
            raise AttributeError("chosen_: the learner has learned nothing yet")
        return self._stream.chosen()

    # --- pickling -------------------------------------------------------------------------
    def __getstate__(self):
        """The settings, features and classes with the learner's state, history and class
        probabilities, so that ``pickle`` and ``copy.deepcopy`` take a learner that goes on
        where this one is."""
        state = self.__dict__.copy()
        stream = state.pop("_stream")
        if stream is not None:
            state["_saved"] = (stream.dim, stream.save_state(), stream.save_history(), stream.save_probabilities())
        else:
            state["_saved"] = None
        return state

    def __setstate__(self, state):
        state = dict(state)
        saved = state.pop("_saved")
        # A classifier pickled before classes_ was worked out kept its class names there,
        # and one pickled before partial_fit took classes= has none declared.
        if "classes_" in state:
            state["_names"] = state.pop("classes_")
        state.setdefault("_declared", None)
        self.__dict__.update(state)
        self._stream = None
        if saved is not None:
            dim, learner, history, probabilities = saved
            self._start(dim).load_state(learner)
            self._stream.load_history(history)
            self._stream.load_probabilities(probabilities)

    # --- state and model ----------------------------------------------------------------
    def save_state(self):
        """The learner's whole state: what a ``kestrel stream`` checkpoint holds for it."""
        if self._stream is None:
            raise ValueError("the learner has learned nothing yet")
        return self._stream.save_state()

    def load_state(self, state, dim):
        """Continue from ``state`` (``save_state``'s bytes, or a checkpoint's learner of the
        same settings) for samples of ``dim`` features."""
        self._start(dim).load_state(state)
        if self.feature_names_ is None:
            self.feature_names_ = list(range(dim)) if self.features is None else list(self.features)

    def load_checkpoint(self, source):
        """Continue from a ``kestrel stream --checkpoint`` file of a run with the same
        settings: its learner's state and class probabilities, for samples of the run's
        ``--dim`` features.

        Parameters
        ----------
        source : bytes or path-like
        """
        checkpoint = _kestrel.read_checkpoint(_bytes_of(source))
        learner = checkpoint["config"].get("--learner")
        if learner != self._learner:
            raise ValueError(f"the checkpoint is of a {learner} learner, not {self._learner}")
        self.load_state(checkpoint["learner"], int(checkpoint["config"]["--dim"]))
        self._stream.load_probabilities(checkpoint["probabilities"])

    def to_bytes(self):
        """The current model as a Kestrel model file (``kestrel stream --out``), with a
        classifier's class probabilities (``kestrel.Model.predict_proba``, ``kestrel predict
        --probabilities``); learned from dicts with string keys, it carries them as its
        features' names, as a CSV header's (``kestrel predict`` reads a CSV's columns by
        them)."""
        if self._stream is None:
            raise ValueError("the learner has learned nothing yet")
        model = self._stream.model_bytes()
        names = self.feature_names_
        if names and all(isinstance(name, str) for name in names):
            model = _kestrel.with_feature_names(model, names)
        return model


class _OnlineClassifier(ClassifierMixin, _Online, _RiverClassifier):
    @property
    def classes_(self):
        """The classes met so far, in the order of ``predict_proba``'s columns: class names
        in the order they first came, numeric labels ascending (as scikit-learn orders
        them); empty before the first sample.

        Examples
        --------
        >>> import numpy as np
        >>> from kestrel.online import WindowSVM
        >>> X = np.random.default_rng(0).normal(size=(300, 2))
        >>> WindowSVM().partial_fit(X, np.where(X[:, 0] > 0, 7, 3)).classes_
        [3.0, 7.0]
        """
        if self._names or self._declared is not None or self._stream is None:
            return list(self._names) or list(self._declared or [])
        return sorted(self._stream.class_labels())

    def partial_fit(self, X, y, classes=None):
        """Learn the rows of ``X`` in order.

        Parameters
        ----------
        X : array-like or scipy.sparse matrix of shape (n_samples, n_features)
            The first DataFrame's column names (strings) name the learner's features, as
            a dict's keys do; later DataFrames, here and in ``predict``, are read by them,
            in any order.
        y : array-like of shape (n_samples,)
        classes : array-like of shape (n_classes,), default=None
            Every class the calls will bring, as scikit-learn's incremental classifiers take
            them (required there on the first call, optional here): from then on
            ``classes_`` and ``predict_proba``'s columns are these, ascending (names met
            before them first, in the order they came), a class not met yet with
            probability 0; a label outside them is refused; and
            the learner holds as many classes as they are unless ``classes=`` at
            construction says otherwise. A later call may give them again, the same.

        Returns
        -------
        self

        Examples
        --------
        >>> import numpy as np
        >>> from kestrel.online import WindowSVM
        >>> X = np.random.default_rng(0).normal(size=(200, 2))
        >>> svm = WindowSVM().partial_fit(X, (X[:, 0] > 0).astype(int), classes=[0, 1, 2])
        >>> svm.classes_, svm.predict_proba(X[:1]).shape
        ([0.0, 1.0, 2.0], (1, 3))
        """
        if classes is not None:
            self._declare(classes)
        return _Online.partial_fit(self, X, y)

    def _declare(self, classes):
        """Takes ``partial_fit``'s ``classes``: the first call's, checked; a later call's must
        be the same."""
        values = list(np.asarray(classes, dtype=object).ravel())
        if not values:
            raise ValueError("classes is empty: give every class the calls will bring")
        kinds = {isinstance(c, numbers.Real) and not isinstance(c, (bool, np.bool_)) for c in values}
        if len(kinds) > 1:
            raise ValueError(f"classes mixes numbers and names: {values}")
        numeric = kinds == {True}
        declared = sorted({float(c) for c in values} if numeric else set(values))
        if self._declared is not None:
            if declared != self._declared:
                raise ValueError(f"classes={declared} is not the same as on the first call to partial_fit: {self._declared}")
            return
        met = self.classes_
        if (met and numeric != self._numeric_labels) or any(c not in declared for c in met):
            raise ValueError(f"classes={declared} leaves out classes the learner has met: {met}")
        self._declared = declared
        if numeric:
            self._numeric_labels = True
        else:
            self._names = self._names + [c for c in declared if c not in self._names]

    def predict_proba_one(self, x):
        """The probability of each class for one sample, a dict by class (empty before the
        first sample was learned), as River's classifiers give them: Platt's sigmoid of the
        SVM's decision value, fitted online to the decision values each sample had before
        it was learned (one-vs-rest beyond two classes, normalised; the classes' frequencies
        while the learner has no model yet). River's ``ROCAUC`` and ``LogLoss`` take them.
        The class of highest probability is ``predict_one``'s but where the sigmoids
        disagree with the decision values' order.

        Parameters
        ----------
        x : dict

        Examples
        --------
        >>> from river import datasets, evaluate, metrics
        >>> evaluate.progressive_val_score(datasets.Phishing(), StreamingRSVM(), metrics.ROCAUC() + metrics.LogLoss())
        ROCAUC: 95.26%
        LogLoss: 0.284...
        """
        if self._stream is None:
            return {}
        classes, probabilities = self._stream.probabilities(self._row(x))
        return dict(zip(self._values(np.asarray(classes)), probabilities[0].tolist()))

    def predict_proba(self, X):
        """The probability of each class for each row of ``X`` (``predict_proba_one``'s, for
        the rows at once), without learning them: an array of a row per sample and a column
        per class met so far, in the order of ``classes_``.

        Parameters
        ----------
        X : array-like or scipy.sparse matrix of shape (n_samples, n_features)

        Examples
        --------
        >>> import numpy as np
        >>> from kestrel.online import WindowSVM
        >>> X = np.random.default_rng(0).normal(size=(500, 2))
        >>> svm = WindowSVM().partial_fit(X, np.where(X[:, 0] > 0, "up", "down"))
        >>> p = svm.predict_proba(np.array([[2.0, 0.0], [-2.0, 0.0]]))
        >>> svm.classes_, p.shape, bool(p[0, 0] > 0.9 and p[1, 1] > 0.9)
        (['up', 'down'], (2, 2), True)
        """
        rows = self._learned_rows(X)
        classes, probabilities = self._stream.probabilities(rows)
        if self._declared is None:
            # A named class's code is its index in _names; a numeric label is its own code.
            return probabilities[:, np.argsort(classes, kind="stable")]
        every = self.classes_
        full = np.zeros((probabilities.shape[0], len(every)))
        full[:, [every.index(c) for c in self._values(np.asarray(classes))]] = probabilities
        return full

    def predict_log_proba(self, X):
        """The logarithm of :meth:`predict_proba`.

        Parameters
        ----------
        X : array-like or scipy.sparse matrix of shape (n_samples, n_features)
        """
        return np.log(self.predict_proba(X))

    def _learn(self, rows, dim, y):
        # The classes the labels bring are kept once the learner took them: a refused call
        # leaves the learner as it was.
        codes, taught = self._codes(y)
        self._start(dim).learn(rows, codes)
        self._names, self._numeric_labels = taught

    def _codes(self, y):
        """The labels' codes — numbers as they are, other labels their classes' numbers in
        order of first appearance — and the classes and kind of labels with them: a
        learner's labels are numbers or names, or a name would take a number's code."""
        classes, numeric = list(self._names), self._numeric_labels
        codes = []
        declared = self._declared
        for label in np.asarray(y, dtype=object).ravel():
            if label is None:
                raise ValueError("a label is None: a sample without a label is predicted (predict_one), not learned")
            number = isinstance(label, numbers.Real) and not isinstance(label, (bool, np.bool_))
            if (number and classes) or (not number and numeric):
                so_far = "class names" if classes else "numbers"
                raise ValueError(f"label {label!r}: the labels so far are {so_far}, and a learner's are one or the other")
            if declared is not None and (float(label) if number else label) not in declared:
                raise ValueError(f"label {label!r} is not one of the classes partial_fit was given: {declared}")
            if number:
                numeric = True
                codes.append(float(label))
                continue
            if label not in classes:
                classes.append(label)
            codes.append(float(classes.index(label)))
        return np.asarray(codes, dtype=np.float64), (classes, numeric)

    def _values(self, predictions):
        out = []
        for value in predictions:
            if np.isnan(value):
                out.append(None)
            elif self._names:
                out.append(self._names[int(value)])
            else:
                out.append(value.item())
        return out


class _OnlineRegressor(RegressorMixin, _Online, _RiverRegressor):
    _before_learning = 0.0


    def _labels(self, y):
        return np.asarray(y, dtype=np.float64).ravel()

    def _values(self, predictions):
        return predictions


class WindowSVM(_OnlineClassifier):
    """The windowed linear SVM (``kestrel stream --learner svm``): dual coordinate descent
    over the last ``window`` samples, one-vs-rest beyond two classes.

    Parameters
    ----------
    window : int, default=256
    steps_per_sample : int, default=300
        The most coordinate steps after each sample.
    tol : float or None, default=None
        The steps after a sample stop once a pass over the window spreads its projected
        gradients by at most ``tol`` (LIBLINEAR's rule; ``kestrel stream --eps``). None: 1.
    C : float or None, default=None
        The cost. None races 1, 0.1 and 0.01 through the first window and goes on with the
        one that predicted best (``chosen_`` names it), as ``kestrel stream`` does.
    loss : {"squared_hinge", "hinge"}, default="squared_hinge"
    bias : float, default=1.0
    memory : int or None, default=None
        Samples the weights remember past the window (None: 2000; 0: none).
    classes : int or None, default=None
        The most classes (None: 16).
    scale : bool, default=True
        Standardise the features online.
    seed : int, default=1
    scalar : {"f64", "f32"}, default="f64"
    features : list or None, default=None
        The keys of the samples, in order, when the first sample does not have them all
        (None: the first sample's); a key a sample leaves out is 0.
    """

    _learner = "svm"

    def __init__(self, window=256, steps_per_sample=300, tol=None, C=None, loss="squared_hinge", bias=1.0,
                 memory=None, classes=None, scale=True, seed=1, scalar="f64", features=None):
        self.window, self.steps_per_sample, self.C, self.loss, self.bias = window, steps_per_sample, C, loss, bias
        self.tol = tol
        self.memory, self.classes, self.scale, self.seed, self.scalar = memory, classes, scale, seed, scalar
        self.features = features
        self._begin()


class StreamingRSVM(_OnlineClassifier):
    """The streaming reduced-kernel SVM (``kestrel stream --learner rsvm``): centres chosen
    during the first window (until they are, a sample is predicted the class whose samples'
    centre of mass in feature space is nearest), renewed as the stream moves, a windowed SVM
    on their Nyström features.

    Parameters
    ----------
    window : int, default=256
    centers : int, default=32
    delta : float, default=0.1
        Selection threshold: the sine of the angle to the centres' span (RBF).
    gamma : float or None, default=None
        RBF width; None races ``1/d``, ``1/(4d)`` and ``4/d``: three learners take the
        first window side by side and the one that predicted best goes on alone
        (``chosen_`` names it), as ``kestrel stream`` does.
    tol : float or None, default=None
        As for :class:`WindowSVM`; None: 0.3.
    C, loss, bias, memory, classes, scale, seed, scalar, steps_per_sample, features
        As for :class:`WindowSVM`.
    renew : bool, default=True
    """

    _learner = "rsvm"

    def __init__(self, window=256, centers=32, delta=0.1, gamma=None, steps_per_sample=300, tol=None, C=1.0,
                 loss="squared_hinge", bias=1.0, memory=None, classes=None, scale=True, renew=True, seed=1,
                 scalar="f64", features=None):
        self.window, self.centers, self.delta, self.gamma, self.tol = window, centers, delta, gamma, tol
        self.steps_per_sample, self.C, self.loss, self.bias, self.memory = steps_per_sample, C, loss, bias, memory
        self.classes, self.scale, self.renew, self.seed, self.scalar = classes, scale, renew, seed, scalar
        self.features = features
        self._begin()


class WindowSLKL(_OnlineRegressor):
    """Windowed SLKL regression (``kestrel stream --learner slkl``). A prediction is the
    model's or, when one has predicted better lately, the model's plus the recent level of
    its residuals, or the last target (a drifting or slowly varying target); the saved
    model predicts without them.

    Parameters
    ----------
    window : int, default=256
    centers : int, default=32
        Candidate centres: the first ``centers`` samples (renewed as the stream moves); a
        model predicts from the last of them on.
    nu : float or None, default=None
        Sparsity weight (absolute). None races 0.01, 1 and 100 through the first window and
        goes on with the one whose predictions had the lowest squared error (``chosen_``
        names it), as ``kestrel stream`` does.
    gamma : float or None, default=None
        RBF width; None is ``1/d``.
    steps_per_sample : int, default=20
        The most coordinate steps after each sample (``kestrel stream``'s cap for slkl).
    tol : float or None, default=None
        The relative decrease of the objective at which the steps after a sample stop
        (``kestrel stream --eps``). None: 10⁻⁴.
    scale : bool, default=True
    renew : bool, default=True
    seed : int, default=1
    scalar : {"f64", "f32"}, default="f64"
    features : list or None, default=None
        As for :class:`WindowSVM`.
    """

    _learner = "slkl"

    def __init__(self, window=256, centers=32, nu=None, gamma=None, steps_per_sample=20, tol=None, scale=True,
                 renew=True, seed=1, scalar="f64", features=None):
        self.window, self.centers, self.nu, self.gamma, self.tol = window, centers, nu, gamma, tol
        self.steps_per_sample, self.scale, self.renew, self.seed, self.scalar = steps_per_sample, scale, renew, seed, scalar
        self.features = features
        self._begin()


class WindowNovelty(_Online, _RiverAnomalyDetector):
    """Kernel novelty detection on a stream (``kestrel stream --learner novelty``), with
    River's anomaly-detector interface: ``learn_one(x)`` and ``score_one(x)``.

    The score is the squared distance of the sample's image in feature space to the centre
    of mass of the last ``window`` normal samples (seed 002 eq. 61), each represented by the
    nearest of at most ``centers`` centres; higher is more anomalous. The first ``warmup``
    samples are taken as normal (and, with ``scale``, set the standardisation); until they
    are in, a sample has no score (``score_one`` gives 0, as River's detectors do before
    their first window; ``score_samples`` NaN). A sample is flagged beyond the ``quantile``
    of recent scores; by default a flagged sample is not learned (``learn="all"`` learns
    every one).

    Parameters
    ----------
    window : int, default=48
        The normal samples the centre of mass is taken over: a recent normal, so that
        faults that break the features' correlation stand out against it.
    centers : int, default=16
    delta : float, default=0.3
        A sample learned this far (in feature space) from every centre becomes one.
    gamma : float or None, default=None
        RBF width; None is ``1/d``.
    quantile : float, default=0.99
    warmup : int, default=256
    learn : {"unflagged", "all"}, default="unflagged"
    scale : bool, default=True
        Standardise the features, by the warm-up's statistics and then every sample learned.
    scalar : {"f64", "f32"}, default="f64"
    features : list or None, default=None
        As for :class:`WindowSVM`.
    """

    _learner = "novelty"

    def __init__(self, window=48, centers=16, delta=0.3, gamma=None, quantile=0.99, warmup=256, learn="unflagged",
                 scale=True, scalar="f64", features=None):
        self.window = window
        self.centers = centers
        self.delta = delta
        self.gamma = gamma
        self.quantile = quantile
        self.warmup = warmup
        self.learn = learn
        self.scale = scale
        self.scalar = scalar
        self.features = features
        self._begin()

    def _labels(self, y):
        return np.zeros(len(y))

    def _values(self, predictions):
        return predictions == 1.0

    def learn_one(self, x, y=None):
        """Learn one sample (normal unless the detector flags it, by default).

        Parameters
        ----------
        x : dict
        y : ignored
        """
        row = self._row(x)
        self._start(row.shape[1]).learn(row, np.zeros(1))

    def score_one(self, x):
        """The score of one sample by the model before it (0 during the warm-up).

        Parameters
        ----------
        x : dict
        """
        if self._stream is None:
            return 0.0
        score = self._stream.scores(self._row(x))[0]
        return 0.0 if np.isnan(score) else float(score)

    def predict_one(self, x):
        """``True`` when the detector flags the sample."""
        if self._stream is None:
            return False
        return bool(self._values(self._stream.predict(self._row(x)))[0])

    def partial_fit(self, X, y=None):
        """Learn the rows of ``X`` in order.

        Parameters
        ----------
        X : array-like or scipy.sparse matrix of shape (n_samples, n_features)
        y : ignored

        Returns
        -------
        self
        """
        rows = _rows(X)
        n = len(rows[0]) - 1 if isinstance(rows, tuple) else len(rows)
        return super().partial_fit(X, np.zeros(n))

    def score_samples(self, X):
        """The score of each row of ``X`` by the model as it is (NaN during the warm-up),
        none of them learned.

        Parameters
        ----------
        X : array-like or scipy.sparse matrix of shape (n_samples, n_features)
        """
        rows = self._learned_rows(X)
        return self._stream.scores(rows)
