"""scikit-learn estimators over Kestrel's learners.

Each estimator validates its input with scikit-learn's helpers, then hands the rows to the
Rust extension (``kestrel._kestrel``), which fits with the same code and the same ``"auto"``
policy as ``kestrel train`` and returns the model file's bytes. Those bytes are the fitted
model: ``predict`` runs them, ``to_bytes`` returns them (``kestrel predict`` and the
firmware read them), and pickling carries them. A solver that stops at its iteration limit
before its stopping rule holds warns, as ``kestrel train`` does and as scikit-learn's
``LinearSVC`` does (``ConvergenceWarning``; ``summary_["converged"]`` is then false).
"""

from __future__ import annotations

import inspect
import os
import warnings

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, ClassifierMixin, OutlierMixin, RegressorMixin
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils._available_if import available_if
from sklearn.utils.class_weight import compute_class_weight
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import _check_sample_weight, check_is_fitted, validate_data

from . import _kestrel

__all__ = [
    "DCDLinearSVC",
    "KernelNoveltyDetector",
    "KernelRidgeNystrom",
    "ReducedKernelSVC",
    "SLKLRegressor",
]


def _auto(value, name):
    """``None`` for ``"auto"`` (the extension's spelling), the number otherwise; ``name`` is
    the parameter's, for the error."""
    if isinstance(value, str):
        if value == "scale" and name == "gamma":
            raise ValueError(
                "gamma='scale' (scikit-learn's 1 / (n_features · X.var())) is not taken: 'auto' chooses the width by "
                "kernel-target alignment and leave-one-out, or give the width as a number"
            )
        if value != "auto":
            raise ValueError(f"{name} must be a number or 'auto', got {value!r}")
        return None
    return float(value)


def _scale(scale):
    """``scale`` as the fit takes it: ``"auto"``, or a flag."""
    return scale if isinstance(scale, str) else bool(scale)


def _seed(random_state):
    """The seed of ``random_state``: an int, or 1 (the CLI's default) for ``None``."""
    if random_state is None:
        return 1
    if isinstance(random_state, (int, np.integer)) and random_state >= 0:
        return int(random_state)
    raise ValueError(f"random_state must be None or a non-negative int, got {random_state!r}")


def _rows(X):
    """``X`` as the extension takes it: a C-ordered float64 matrix, or a CSR matrix as
    ``(indptr, indices, data, n_features)`` with sorted, distinct indices (no densifying)."""
    if sp.issparse(X):
        X = sp.csr_matrix(X, dtype=np.float64, copy=True)
        X.sum_duplicates()
        X.sort_indices()
        return (X.indptr.astype(np.int64), X.indices.astype(np.int64), X.data, X.shape[1])
    return _numbers(X, lambda: np.ascontiguousarray(X, dtype=np.float64))


def _validated(estimator, X, *args, **kwargs):
    """scikit-learn's ``validate_data(estimator, X, *args, **kwargs)`` (``_numbers``)."""
    return _numbers(X, lambda: validate_data(estimator, X, *args, **kwargs))


def _numbers(X, convert):
    """``convert()``, which makes ``X`` numbers; when it fails on a DataFrame's column that
    is not numbers, that column named (``_not_numbers``), else its own error."""
    try:
        return convert()
    except (TypeError, ValueError) as error:
        why = _not_numbers(X)
        if why is None:
            raise
        raise ValueError(why) from error


def _not_numbers(X):
    """A DataFrame's first column that is not numbers, named, with what makes it numbers;
    ``None`` when there is none (or ``X`` is no DataFrame)."""
    for name in getattr(X, "columns", []):
        column = X[name]
        if getattr(column.dtype, "kind", "") in "mM":
            return (
                f"column {name!r} of X holds dates and times ({column.dtype}), not numbers: drop it, or make it numbers "
                f"(X[{name!r}].astype('int64') // 10**9 is seconds since 1970; .dt.hour the hour of the day)"
            )
        try:
            np.asarray(column, dtype=np.float64)
        except (TypeError, ValueError):
            return (
                f"column {name!r} of X is not numbers ({column.dtype}, such as {column.iloc[0]!r}): drop it, or make it "
                "numbers (scikit-learn's OneHotEncoder in a ColumnTransformer makes categories numbers)"
            )
    return None


def _by_name(X, names):
    """``X`` with a DataFrame's columns in the order ``names`` (a model's feature names)
    lists them, as ``kestrel predict`` reads a CSV's columns by name; ``X`` as it is when it
    is not a DataFrame or there are no names. A DataFrame without one of them is an error."""
    columns = getattr(X, "columns", None)
    if not names or columns is None or list(map(str, columns)) == names:
        return X
    present = set(map(str, columns))
    missing = [name for name in names if name not in present]
    if missing:
        cased = [column for column in present if column.lower() == missing[0].lower()]
        hint = f"; its column {cased[0]!r} differs from it in case alone" if cased else ""
        raise ValueError(f"X has no column {missing[0]!r}, a feature of the model ({', '.join(names)}){hint}")
    return X[names]


def _kernel_settings(estimator):
    """The settings the kernel estimators share: the kernel and the most centres."""
    return {
        "kernel": estimator.kernel,
        "gamma": _auto(estimator.gamma, "gamma"),
        "degree": int(estimator.degree),
        "coef0": float(estimator.coef0),
        "centers": int(estimator.n_centres),
    }


def _reduced_set_settings(estimator):
    """How the Nyström regressors choose their centres, and whether they weigh the features."""
    settings = {"select": estimator.centres, "relevance": bool(estimator.relevance)}
    if estimator.delta is not None:
        settings["delta"] = float(estimator.delta)
    return settings


def _bytes_of(source):
    """The bytes of ``source``: bytes as they are, or the contents of a path."""
    if isinstance(source, (bytes, bytearray, memoryview)):
        return bytes(source)
    with open(os.fspath(source), "rb") as f:
        return f.read()


def _weighed_rows(X, y, sample_weight):
    """``X``, ``y`` and the weights of the rows that weigh something: ``sample_weight``
    checked (one finite, non-negative weight per row, not all 0) and the rows of weight 0
    left out, as scikit-learn's estimators count them; ``None`` stays ``None``."""
    if sample_weight is None:
        return X, y, None
    weights = _check_sample_weight(sample_weight, X, dtype=np.float64, ensure_non_negative=True)
    kept = weights > 0
    if not kept.any():
        raise ValueError("sample_weight is 0 for every row: there is nothing to learn from")
    if kept.all():
        return X, y, weights
    return X[kept], np.asarray(y)[kept], weights[kept]


def _warn_unconverged(estimator, summary, X):
    """scikit-learn's ``ConvergenceWarning`` when the solver stopped at its limit before its
    stopping rule held (``summary["converged"]`` false), as ``kestrel train`` warns and as
    scikit-learn's own estimators do, with what speeds the solver up."""
    if summary.get("converged") is not False:
        return
    iterations = summary.get("iterations", summary.get("final_passes"))
    limit = "" if iterations is None else f" ({iterations} iterations)"
    hint = ""
    if summary.get("learner") in ("svm", "rsvm", "mrrsvm"):
        hint = "; a larger C converges more slowly, a larger tol stops sooner"
    if summary.get("learner") == "svm" and estimator.scale is False and _ranges_differ(X):
        hint = "; features of very different ranges slow the solver down: scale=True standardises them"
    warnings.warn(
        f"{type(estimator).__name__}: training stopped at its limit{limit} before the solver's stopping rule held: "
        f"the model may be less accurate than it could be{hint}",
        ConvergenceWarning,
        stacklevel=_caller_level(),
    )


def _ranges_differ(X):
    """Whether the dense rows ``X``'s columns spread over standard deviations more than 100
    times apart (the constant columns left out)."""
    if sp.issparse(X):
        return False
    spread = np.std(X, axis=0)
    spread = spread[spread > 0]
    return spread.size > 1 and spread.max() > 100 * spread.min()


def _caller_level():
    """The ``stacklevel`` of the first frame outside this package: a warning names the line
    that called ``fit``, whichever of the package's methods led here."""
    level, frame = 1, inspect.currentframe().f_back
    while frame is not None and frame.f_code.co_filename.startswith(_PACKAGE):
        level, frame = level + 1, frame.f_back
    return level


_PACKAGE = os.path.dirname(os.path.abspath(__file__))


# The settings whose parameter here has another name than the extension's (`kestrel
# train`'s flag), which its errors use.
_PARAMETERS = {"eps": "tol", "lambda": "alpha", "centers": "n_centres"}


def _parameter_named(message):
    """The extension's ``message`` with the setting it starts with called by its parameter's
    name here (``tol must be a positive number``, not ``eps must be …``)."""
    setting, _, rest = message.partition(" must be ")
    return f"{_PARAMETERS[setting]} must be {rest}" if rest and setting in _PARAMETERS else message


class _KestrelEstimator(BaseEstimator):
    """What every estimator shares: the fitted model's bytes and the prediction on them."""

    _learner = ""

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags

    def _fit_settings(self):
        raise NotImplementedError

    def _fit_bytes(self, X, y, sample_weight=None, **extra):
        settings = {**self._fit_settings(), **extra}
        if self.scalar not in ("f64", "f32"):
            raise ValueError(f"scalar must be 'f64' or 'f32', got {self.scalar!r}")
        seed = _seed(self.random_state)
        try:
            config = _kestrel.FitConfig(self._learner, scalar=self.scalar, scale=_scale(self.scale), seed=seed, **settings)
            model, summary = _kestrel.fit(config, _rows(X), y, sample_weight)
        except ValueError as error:
            raise ValueError(_parameter_named(str(error))) from None
        # A DataFrame's column names (scikit-learn's `feature_names_in_`) go into the model
        # file, as a CSV header's do from `kestrel train`: `kestrel predict` reads by them.
        names = getattr(self, "feature_names_in_", None)
        self.model_bytes_ = model if names is None else _kestrel.with_feature_names(model, [str(n) for n in names])
        self.summary_ = summary
        _warn_unconverged(self, summary, X)
        return self

    def _fitted_rows(self, X):
        """``X`` checked against the fitted model (which must exist), as the extension
        takes it."""
        check_is_fitted(self, "model_bytes_")
        return _rows(_validated(self, X, reset=False, accept_sparse="csr", dtype=np.float64))

    def _predict_values(self, X):
        rows = self._fitted_rows(X)  # first: raises NotFittedError before model_bytes_ is read
        return _kestrel.predict(self.model_bytes_, rows)

    def to_bytes(self):
        """The fitted model as a Kestrel model file (the core's envelope).

        Returns
        -------
        bytes
            What ``kestrel predict --model`` and ``kestrel_model_open`` read; a classifier
            of non-numeric classes carries their names, and a model fitted on a DataFrame
            its columns' names.
        """
        check_is_fitted(self, "model_bytes_")
        return bytes(self.model_bytes_)


class _KestrelClassifier(ClassifierMixin, _KestrelEstimator):
    """Labels in, labels out: numeric classes are learned as themselves, other classes
    (strings) as their index, with the names in the model file."""

    def fit(self, X, y):
        """Fit the model.

        Parameters
        ----------
        X : array-like or scipy.sparse matrix of shape (n_samples, n_features)
            Training rows (sparse rows are passed as CSR, never densified).
        y : array-like of shape (n_samples,)
            Class labels: numbers or strings.

        Returns
        -------
        self
        """
        return self._fit(X, y)

    def _fit(self, X, y, sample_weight=None):
        X, y = _validated(self, X, y, accept_sparse="csr", dtype=np.float64)
        X, y, sample_weight = _weighed_rows(X, y, sample_weight)
        check_classification_targets(y)
        self.classes_, encoded = np.unique(y, return_inverse=True)
        if len(self.classes_) < 2:
            raise ValueError(f"the classifier needs two classes or more; y holds one class: {self.classes_[0].item()!r}")
        numeric = np.issubdtype(self.classes_.dtype, np.number) and np.all(np.isfinite(self.classes_))
        labels = np.asarray(y, dtype=np.float64) if numeric else encoded.astype(np.float64)
        extra = {}
        if getattr(self, "class_weight", None) is not None:
            weights = compute_class_weight(self.class_weight, classes=self.classes_, y=y)
            values = self.classes_.astype(np.float64) if numeric else np.arange(len(self.classes_), dtype=np.float64)
            extra["class_weights"] = [(float(v), float(w)) for v, w in zip(values, weights)]
        self._fit_bytes(X, labels, sample_weight, **extra)
        if not numeric:
            self.model_bytes_ = _kestrel.with_class_names(self.model_bytes_, [str(c) for c in self.classes_])
        return self

    def predict(self, X):
        """Predict the class of each row.

        Parameters
        ----------
        X : array-like or scipy.sparse matrix of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples,)
            Labels from ``classes_``.
        """
        values = self._predict_values(X)  # checks the estimator is fitted first
        return self.classes_[self._class_index(values)]


    def decision_function(self, X):
        """Decision values, as scikit-learn's classifiers give them.

        Parameters
        ----------
        X : array-like or scipy.sparse matrix of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples,) for two classes (positive means ``classes_[1]``), or
        (n_samples, n_classes), one one-vs-rest column per class of ``classes_``.
        """
        rows = self._fitted_rows(X)
        values, labels = _kestrel.decision_function(self.model_bytes_, rows)
        if values.shape[1] == 1:
            # The one output's value is ≥ 0 for the model's second label.
            second = self._class_index(np.asarray(labels, dtype=np.float64))[1]
            return values[:, 0] if second == 1 else -values[:, 0]
        return self._in_class_order(values, labels)

    def _gives_probabilities(self):
        """Whether ``predict_proba`` is there: fitted with ``probability=True`` (as
        scikit-learn's ``SVC`` has it only then)."""
        if not self.probability:
            raise AttributeError("predict_proba is available when probability=True")
        return True

    @available_if(_gives_probabilities)
    def predict_proba(self, X):
        """Class probabilities: Platt's sigmoid of each decision value, fitted at ``fit``
        to values of rows held out by 5-fold cross-validation, as ``SVC(probability=True)``
        gives them (``kestrel train --probabilities``; two classes share one sigmoid, more
        are normalised one-vs-rest). Their largest may name another class than ``predict``
        for rows near the boundary, as with ``SVC``.

        Parameters
        ----------
        X : array-like or scipy.sparse matrix of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples, n_classes)
            One column per class of ``classes_``; each row sums to 1.
        """
        rows = self._fitted_rows(X)
        return self._in_class_order(*_kestrel.probabilities(self.model_bytes_, rows))

    @available_if(_gives_probabilities)
    def predict_log_proba(self, X):
        """The logarithm of :meth:`predict_proba`.

        Parameters
        ----------
        X : array-like or scipy.sparse matrix of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples, n_classes)
        """
        return np.log(self.predict_proba(X))

    def _in_class_order(self, values, labels):
        """``values`` (a column per label of ``labels``, the model's order) with their
        columns in the order of ``classes_``."""
        ordered = np.empty_like(values)
        ordered[:, self._class_index(np.asarray(labels, dtype=np.float64))] = values
        return ordered

    def _class_index(self, values):
        """The index in ``classes_`` of each label value the model predicts."""
        if np.issubdtype(self.classes_.dtype, np.number):
            index = np.searchsorted(self.classes_, values)
        else:
            index = values.astype(np.intp)
        return np.clip(index, 0, len(self.classes_) - 1)


class _KestrelRegressor(RegressorMixin, _KestrelEstimator):
    """Real targets in, real values out."""

    def fit(self, X, y):
        """Fit the model.

        Parameters
        ----------
        X : array-like or scipy.sparse matrix of shape (n_samples, n_features)
            Training rows (sparse rows are passed as CSR, never densified).
        y : array-like of shape (n_samples,)
            Targets.

        Returns
        -------
        self
        """
        return self._fit(X, y)

    def _fit(self, X, y, sample_weight=None):
        X, y = _validated(self, X, y, accept_sparse="csr", dtype=np.float64, y_numeric=True)
        X, y, sample_weight = _weighed_rows(X, y, sample_weight)
        return self._fit_bytes(X, np.asarray(y, dtype=np.float64), sample_weight)

    def predict(self, X):
        """Predict the target of each row.

        Parameters
        ----------
        X : array-like or scipy.sparse matrix of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples,)
        """
        return self._predict_values(X)


class _TakesSampleWeight:
    """The estimators whose ``fit`` takes ``sample_weight`` (the SVMs, the SVR and kernel
    ridge)."""

    def fit(self, X, y, sample_weight=None):
        """Fit the model.

        Parameters
        ----------
        X : array-like or scipy.sparse matrix of shape (n_samples, n_features)
            Training rows (sparse rows are passed as CSR, never densified).
        y : array-like of shape (n_samples,)
            Class labels (numbers or strings), or targets.
        sample_weight : array-like of shape (n_samples,), default=None
            Each row's weight: its error's cost is multiplied by it (on top of its class's
            weight), so a row of weight 2 counts as two copies of it; rows of weight 0 are
            left out. "auto" settings are chosen by the leave-one-out error weighed alike;
            what only looks at the rows — the reduced set, the kernel alignment that seeds
            ``gamma``, ``scale=True``'s statistics — counts each row once.

        Returns
        -------
        self
        """
        return self._fit(X, y, sample_weight)


class DCDLinearSVC(_TakesSampleWeight, _KestrelClassifier):
    """Linear SVM by dual coordinate descent (LIBLINEAR's solver), one-vs-rest beyond two
    classes.

    Parameters
    ----------
    C : float, default=1.0
        Cost of a margin violation.
    loss : {"squared_hinge", "hinge"}, default="squared_hinge"
        LIBLINEAR's ``-s 1`` and ``-s 3``.
    bias : float, default=1.0
        The constant bias feature (LIBLINEAR's ``-B``); 0 fits no intercept.
    class_weight : dict, "balanced" or None, default=None
        Weight of each class's cost, ``C·class_weight[c]`` (LIBLINEAR's ``-wi``);
        "balanced" is ``n_samples / (n_classes · count(c))``, None weighs every class 1.
        Beyond two classes, class ``c`` is weighed against the rest.
    tol : float or None, default=None
        Stopping tolerance; None is LIBLINEAR's 0.1.
    probability : bool, default=False
        Fit class probabilities too, for :meth:`predict_proba`: Platt's sigmoid of each
        decision value on rows held out by 5-fold cross-validation (five more fits, as
        ``SVC(probability=True)``); the model file keeps them for ``kestrel predict
        --probabilities`` and the device.
    random_state : int or None, default=None
        Seed of the coordinate order; None is 1.
    scalar : {"f64", "f32"}, default="f64"
        The model's scalar; "f32" computes as a device does.
    scale : bool or "auto", default=False
        Standardise every feature by its mean and standard deviation over the training rows
        before learning (``kestrel train --scale``): the model file carries the statistics,
        so ``predict``, ``kestrel predict`` and a device take rows in their own units.
        "auto" standardises only when that lowers the leave-one-out error of the automatic
        width search (``kestrel train``'s default; ``summary_["scaling"]`` holds both
        scores), and always for the linear SVM and the novelty detector, which have no
        such score; rows already standardised, or sparse, are taken as given.

    Attributes
    ----------
    classes_ : ndarray
        The class labels.
    n_features_in_ : int
        Features seen in ``fit``.
    model_bytes_ : bytes
        The fitted model file.
    summary_ : dict
        What training did (``kestrel train --json``).
    """

    _learner = "svm"

    def __init__(
        self, C=1.0, loss="squared_hinge", bias=1.0, class_weight=None, tol=None, probability=False,
        random_state=None, scalar="f64", scale=False,
    ):
        self.C = C
        self.loss = loss
        self.bias = bias
        self.class_weight = class_weight
        self.tol = tol
        self.probability = probability
        self.random_state = random_state
        self.scalar = scalar
        self.scale = scale

    def _fit_settings(self):
        return {
            "c": float(self.C),
            "loss": self.loss,
            "bias": float(self.bias),
            "tol": self.tol,
            "probabilities": bool(self.probability),
        }


class ReducedKernelSVC(_TakesSampleWeight, _KestrelClassifier):
    """Reduced-kernel SVM (seed 003): an SVM on the Nyström features of a reduced set chosen
    by IRSVM or at random, one-vs-rest beyond two classes.

    Parameters
    ----------
    C : float or "auto", default="auto"
        Cost; "auto" chooses it by the exact leave-one-out error of the least-squares SVM
        on the same features.
    kernel : {"rbf", "poly", "linear"}, default="rbf"
    gamma : float or "auto", default="auto"
        Width; "auto" is the width of highest kernel-target alignment (for "poly",
        whose alignment chooses none, the median heuristic's 1/median||x - x'||^2), then
        the best of five octaves around it by leave-one-out (on 10,000 of the rows where
        there are more).
    degree : int, default=3
    coef0 : float, default=0.0
    n_centres : int, default=256
        The most centres.
    centres : {"irsvm", "random"}, default="irsvm"
        How the reduced set is chosen.
    delta : float or "auto", default="auto"
        IRSVM's threshold; "auto" chooses the set's size by leave-one-out.
    loss : {"squared_hinge", "hinge"}, default="squared_hinge"
    class_weight : dict, "balanced" or None, default=None
        Weight of each class's cost, as for :class:`DCDLinearSVC` (``kestrel train
        --class-weight``); "auto" settings are then chosen by the leave-one-out error
        weighted alike, so that a rare class is not given up for the frequent ones.
    tol : float or None, default=None
    probability : bool, default=False
        Fit class probabilities too, for :meth:`predict_proba`, as for
        :class:`DCDLinearSVC`; the five held-out fits take the settings "auto" chose.
    random_state : int or None, default=None
    scalar : {"f64", "f32"}, default="f64"
    scale : bool or "auto", default=False
        Standardise every feature by its mean and standard deviation over the training rows
        before learning (``kestrel train --scale``): the model file carries the statistics,
        so ``predict``, ``kestrel predict`` and a device take rows in their own units.
        "auto" standardises only when that lowers the leave-one-out error of the automatic
        width search (``kestrel train``'s default; ``summary_["scaling"]`` holds both
        scores), and always for the linear SVM and the novelty detector, which have no
        such score; rows already standardised, or sparse, are taken as given.
    relevance : bool, default=False
        Standardise the features and weigh each by its relevance before learning: one
        Gaussian width per feature, chosen by kernel-target alignment on up to 300 rows
        (``kestrel train --relevance``; ``kernel="rbf"`` only). Features that do not bear
        on the target are then all but ignored. The weights are kept when the leave-one-out
        error at the automatic width is lower with them, else the model only standardises;
        ``summary_["relevance"]`` shows the weights, both errors and ``kept``, and the model
        file carries kept weights.

    Attributes
    ----------
    classes_, n_features_in_, model_bytes_, summary_
        As for :class:`DCDLinearSVC`; ``summary_["chosen"]`` holds what "auto" chose.

    Examples
    --------
    Class probabilities, as ``SVC(probability=True)`` gives them (Platt's sigmoid fitted
    to decision values of held-out folds):

    >>> from sklearn.datasets import make_moons
    >>> X, y = make_moons(200, noise=0.2, random_state=0)
    >>> p = ReducedKernelSVC(probability=True).fit(X, y).predict_proba(X[:3])
    >>> p.shape, bool(((p > 0) & (p < 1)).all()), bool(abs(p.sum(axis=1) - 1).max() < 1e-12)
    ((3, 2), True, True)
    """

    _learner = "rsvm"

    def __init__(
        self,
        C="auto",
        kernel="rbf",
        gamma="auto",
        degree=3,
        coef0=0.0,
        n_centres=256,
        centres="irsvm",
        delta="auto",
        loss="squared_hinge",
        class_weight=None,
        tol=None,
        probability=False,
        random_state=None,
        scalar="f64",
        scale=False,
        relevance=False,
    ):
        self.C = C
        self.kernel = kernel
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.n_centres = n_centres
        self.centres = centres
        self.delta = delta
        self.loss = loss
        self.class_weight = class_weight
        self.tol = tol
        self.probability = probability
        self.random_state = random_state
        self.scalar = scalar
        self.scale = scale
        self.relevance = relevance

    def _fit_settings(self):
        return {
            "c": _auto(self.C, "C"),
            **_kernel_settings(self),
            "select": self.centres,
            "delta": _auto(self.delta, "delta"),
            "loss": self.loss,
            "tol": self.tol,
            "relevance": bool(self.relevance),
            "probabilities": bool(self.probability),
        }


class SLKLRegressor(_KestrelRegressor):
    """Sparse kernel regression by SLKL (seed 001): a few active centres among candidates,
    chosen by coordinate descent on a sparsity-weighted objective.

    Parameters
    ----------
    kernel : {"rbf", "poly", "linear"}, default="rbf"
    gamma : float or "auto", default="auto"
        Width; "auto" is the width of highest kernel-target alignment (for "poly", the
        median heuristic's 1/median||x - x'||^2).
    degree : int, default=3
    coef0 : float, default=0.0
    nu : float or "auto", default=0.1
        Sparsity weight, in units of the target variance; "auto" is the best of 0.001,
        0.01, 0.1 and 1 by 3-fold cross-validation (about eight fits' work).
    n_centres : int, default=256
        Candidate centres.
    tol : float or None, default=None
    random_state : int or None, default=None
    scalar : {"f64", "f32"}, default="f64"
    scale : bool or "auto", default=False
        Standardise every feature by its mean and standard deviation over the training rows
        before learning (``kestrel train --scale``): the model file carries the statistics,
        so ``predict``, ``kestrel predict`` and a device take rows in their own units.
        "auto" standardises only when that lowers the leave-one-out error of the automatic
        width search (``kestrel train``'s default; ``summary_["scaling"]`` holds both
        scores), and always for the linear SVM and the novelty detector, which have no
        such score; rows already standardised, or sparse, are taken as given.
    relevance : bool, default=False
        Standardise the features and weigh each by its relevance before learning: one
        Gaussian width per feature, chosen by kernel-target alignment on up to 300 rows
        (``kestrel train --relevance``; ``kernel="rbf"`` only). Features that do not bear
        on the target are then all but ignored. The weights are kept when the leave-one-out
        error at the automatic width is lower with them, else the model only standardises;
        ``summary_["relevance"]`` shows the weights, both errors and ``kept``, and the model
        file carries kept weights.

    Attributes
    ----------
    n_features_in_, model_bytes_, summary_
        As for :class:`DCDLinearSVC`.
    """

    _learner = "slkl"

    def __init__(
        self, kernel="rbf", gamma="auto", degree=3, coef0=0.0, nu=0.1, n_centres=256, tol=None, random_state=None,
        scalar="f64", scale=False, relevance=False,
    ):
        self.kernel = kernel
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.nu = nu
        self.n_centres = n_centres
        self.tol = tol
        self.random_state = random_state
        self.scalar = scalar
        self.scale = scale
        self.relevance = relevance

    def _fit_settings(self):
        nu = self.nu if isinstance(self.nu, str) else float(self.nu)
        return {**_kernel_settings(self), "nu": nu, "tol": self.tol, "relevance": bool(self.relevance)}


class KernelRidgeNystrom(_TakesSampleWeight, _KestrelRegressor):
    """Nyström kernel ridge regression: a reduced set of centres, the ridge chosen by exact
    leave-one-out over a whole path from one eigendecomposition (seed 000 §4.1.1).

    Parameters
    ----------
    alpha : float or "auto", default="auto"
        The ridge (scikit-learn's ``KernelRidge(alpha=...)``); "auto" is the path's
        leave-one-out best.
    kernel : {"rbf", "poly", "linear"}, default="rbf"
    gamma : float or "auto", default="auto"
    degree : int, default=3
    coef0 : float, default=0.0
    n_centres : int, default=256
    centres : {"irsvm", "random"}, default="irsvm"
    delta : float or None, default=None
        IRSVM's threshold; None is a small one (the centres run to ``n_centres``).
    solver : {"auto", "exact", "cg"}, default="auto"
        "exact" is the leave-one-out path on every row (``n·m`` memory, and a predictive
        variance); "cg" is Falkon's conjugate gradients streaming over the rows in ``O(m²)``
        memory, with the centres, ``gamma`` and ``alpha`` chosen on a 10 000-row subsample;
        "auto" takes "cg" when ``n·m > 2**25``.
    random_state : int or None, default=None
    scalar : {"f64", "f32"}, default="f64"
    scale : bool or "auto", default=False
        Standardise every feature by its mean and standard deviation over the training rows
        before learning (``kestrel train --scale``): the model file carries the statistics,
        so ``predict``, ``kestrel predict`` and a device take rows in their own units.
        "auto" standardises only when that lowers the leave-one-out error of the automatic
        width search (``kestrel train``'s default; ``summary_["scaling"]`` holds both
        scores), and always for the linear SVM and the novelty detector, which have no
        such score; rows already standardised, or sparse, are taken as given.
    relevance : bool, default=False
        Standardise the features and weigh each by its relevance before learning: one
        Gaussian width per feature, chosen by kernel-target alignment on up to 300 rows
        (``kestrel train --relevance``; ``kernel="rbf"`` only). Features that do not bear
        on the target are then all but ignored. The weights are kept when the leave-one-out
        error at the automatic width is lower with them, else the model only standardises;
        ``summary_["relevance"]`` shows the weights, both errors and ``kept``, and the model
        file carries kept weights.

    Attributes
    ----------
    n_features_in_, model_bytes_, summary_
        As for :class:`DCDLinearSVC`.
    """

    _learner = "krr"

    def __init__(
        self, alpha="auto", kernel="rbf", gamma="auto", degree=3, coef0=0.0, n_centres=256, centres="irsvm",
        delta=None, solver="auto", random_state=None, scalar="f64", scale=False, relevance=False,
    ):
        self.alpha = alpha
        self.kernel = kernel
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.n_centres = n_centres
        self.centres = centres
        self.delta = delta
        self.solver = solver
        self.random_state = random_state
        self.scalar = scalar
        self.scale = scale
        self.relevance = relevance

    def _fit_settings(self):
        settings = {**_kernel_settings(self), **_reduced_set_settings(self)}
        return {"alpha": _auto(self.alpha, "alpha"), **settings, "solver": self.solver}


class SmoothSVR(_TakesSampleWeight, _KestrelRegressor):
    """ε-insensitive smooth support vector regression on the reduced kernel (ε-SSVR, seed 003
    eq. 21-23): the squared ε-insensitive loss, smoothed, on the Nyström features of a
    reduced set, solved by Newton–Armijo — scikit-learn's ``SVR`` with a fraction of the
    points as centres (``kestrel train --learner ssvr``).

    Parameters
    ----------
    C : float or "auto", default="auto"
        Cost; "auto" is ``1/λ`` of the leave-one-out best ridge of kernel ridge regression
        on the same features (SSVR's squared loss is not SVR's, so one ``C`` is not one
        problem: a number from an ``SVR`` search does not carry over).
    epsilon : float, default=0.1
        Half-width of the ε-insensitive tube, in the targets' units (LIBSVM's ``-p``).
    kernel, gamma, degree, coef0, n_centres, centres, delta, random_state, scalar, scale, relevance
        As for :class:`KernelRidgeNystrom`.

    Attributes
    ----------
    n_features_in_, model_bytes_, summary_
        As for :class:`DCDLinearSVC`; ``summary_["chosen"]`` holds what "auto" chose.

    Examples
    --------
    >>> import numpy as np
    >>> from kestrel import SmoothSVR
    >>> x = np.linspace(-2, 2, 200).reshape(-1, 1)
    >>> model = SmoothSVR(epsilon=0.01, n_centres=20).fit(x, np.sin(2 * x[:, 0]))
    >>> float(np.abs(model.predict(x) - np.sin(2 * x[:, 0])).max()) < 0.05
    True
    """

    _learner = "ssvr"

    def __init__(
        self, C="auto", epsilon=0.1, kernel="rbf", gamma="auto", degree=3, coef0=0.0, n_centres=256,
        centres="irsvm", delta=None, random_state=None, scalar="f64", scale=False, relevance=False,
    ):
        self.C = C
        self.epsilon = epsilon
        self.kernel = kernel
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.n_centres = n_centres
        self.centres = centres
        self.delta = delta
        self.random_state = random_state
        self.scalar = scalar
        self.scale = scale
        self.relevance = relevance

    def _fit_settings(self):
        return {
            "c": _auto(self.C, "C"),
            "epsilon": float(self.epsilon),
            **_kernel_settings(self),
            **_reduced_set_settings(self),
        }


class KernelPLSNystrom(_KestrelRegressor):
    """Kernel partial least squares (seed 000 §4.1.2) on the Nyström features of
    :class:`KernelRidgeNystrom`: conjugate gradients on the normal equations stopped after
    ``n_components`` steps, one pass over the rows per component, ``O(m²)`` memory. The
    predictions are scikit-learn's ``PLSRegression(scale=False)`` on ``Nystroem`` features of
    the same centres.

    Parameters
    ----------
    n_components : int or "auto", default="auto"
        The number of components; "auto" is the number, up to 64, of least squared error on
        a held-out fifth of (a subsample of at most 10 000) rows, scored in one solve.
    kernel, gamma, degree, coef0, n_centres, centres, delta, random_state, scalar, scale, relevance
        As for :class:`KernelRidgeNystrom` (the centres and ``gamma`` are chosen on the same
        subsample).

    Attributes
    ----------
    n_features_in_, model_bytes_, summary_
        As for :class:`DCDLinearSVC`; ``summary_["components"]`` is the number used and
        ``summary_["held_out"]`` the error of each number tried.

    Examples
    --------
    >>> import numpy as np
    >>> from kestrel import KernelPLSNystrom
    >>> x = np.linspace(-2, 2, 200).reshape(-1, 1)
    >>> model = KernelPLSNystrom(n_components=4, gamma=1.0).fit(x, np.sin(2 * x[:, 0]))
    >>> float(np.abs(model.predict(x) - np.sin(2 * x[:, 0])).max()) < 0.05
    True
    """

    _learner = "kpls"

    def __init__(
        self, n_components="auto", kernel="rbf", gamma="auto", degree=3, coef0=0.0, n_centres=256,
        centres="irsvm", delta=None, random_state=None, scalar="f64", scale=False, relevance=False,
    ):
        self.n_components = n_components
        self.kernel = kernel
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.n_centres = n_centres
        self.centres = centres
        self.delta = delta
        self.random_state = random_state
        self.scalar = scalar
        self.scale = scale
        self.relevance = relevance

    def _fit_settings(self):
        components = None if self.n_components == "auto" else int(self.n_components)
        return {**_kernel_settings(self), **_reduced_set_settings(self), "components": components}


class KernelNoveltyDetector(OutlierMixin, _KestrelEstimator):
    """Kernel novelty detection (seed 002 eq. 55-63): how far a row's image lies from the
    centre of mass of the training rows in feature space, through a reduced set of centres
    (IRSVM's or random), flagged beyond a quantile of the training rows' own scores.

    The model is ``kestrel train --learner novelty``'s: the same bytes, which ``kestrel
    predict``, ``kestrel eval`` and a device read. Its score is the squared distance
    ``d²(x) = k(x, x) − 2 Σ_j w_j k(x, x̃_j) + c`` (eq. 61 over the centres ``x̃_j`` with
    weights ``w_j``, the share of the training rows each represents).

    Parameters
    ----------
    contamination : float, default=0.01
        The share of the training rows to flag: the threshold is their
        ``(1 − contamination)``-quantile of ``d²`` (``kestrel train --quantile``).
    kernel : {"rbf", "poly", "linear"}, default="rbf"
        Scores use the kernel normalised, ``k(x, y)/√(k(x, x) k(y, y))`` (eq. 62-63), unless
        it is the RBF kernel, normalised already.
    gamma : float or "auto", default="auto"
        Width; "auto" is ``1/(n_features · X.var())``, scikit-learn's ``gamma="scale"``.
    degree : int, default=3
    coef0 : float, default=0.0
    n_centres : int, default=256
        The most centres.
    centres : {"irsvm", "random"}, default="irsvm"
        How the reduced set is chosen.
    random_state : int or None, default=None
    scalar : {"f64", "f32"}, default="f64"
    scale : bool or "auto", default=False
        Standardise every feature by its mean and standard deviation over the training rows
        before learning (``kestrel train --scale``): the model file carries the statistics,
        so ``predict``, ``kestrel predict`` and a device take rows in their own units.
        "auto" standardises only when that lowers the leave-one-out error of the automatic
        width search (``kestrel train``'s default; ``summary_["scaling"]`` holds both
        scores), and always for the linear SVM and the novelty detector, which have no
        such score; rows already standardised, or sparse, are taken as given.

    Attributes
    ----------
    offset_ : float
        ``−threshold``: ``decision_function = score_samples − offset_`` is negative for a
        flagged row, as scikit-learn's outlier detectors have it.
    n_features_in_, model_bytes_, summary_
        As for :class:`DCDLinearSVC`.
    """

    _learner = "novelty"

    def __init__(
        self, contamination=0.01, kernel="rbf", gamma="auto", degree=3, coef0=0.0, n_centres=256, centres="irsvm",
        random_state=None, scalar="f64", scale=False,
    ):
        self.contamination = contamination
        self.kernel = kernel
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.n_centres = n_centres
        self.centres = centres
        self.random_state = random_state
        self.scalar = scalar
        self.scale = scale

    def _fit_settings(self):
        if not 0.0 < float(self.contamination) < 1.0:
            raise ValueError(f"contamination must be in (0, 1), got {self.contamination!r}")
        return {**_kernel_settings(self), "select": self.centres, "quantile": 1.0 - float(self.contamination)}

    def fit(self, X, y=None):
        """Fit the detector to rows taken as normal.

        Parameters
        ----------
        X : array-like or scipy.sparse matrix of shape (n_samples, n_features)
        y : ignored

        Returns
        -------
        self
        """
        X = _validated(self, X, accept_sparse="csr", dtype=np.float64)
        self._fit_bytes(X, np.zeros(X.shape[0]))
        self.offset_ = -float(self.summary_["threshold"])
        return self

    def score_samples(self, X):
        """``−d²(x)`` of each row: higher is more normal, as scikit-learn's detectors score.

        Parameters
        ----------
        X : array-like or scipy.sparse matrix of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples,)
        """
        rows = self._fitted_rows(X)
        return -_kestrel.novelty_scores(self.model_bytes_, rows)

    def decision_function(self, X):
        """``score_samples − offset_``: negative for the rows the model flags.

        Parameters
        ----------
        X : array-like or scipy.sparse matrix of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples,)
        """
        return self.score_samples(X) - self.offset_

    def predict(self, X):
        """``−1`` for a row the model flags (``d²(x)`` above the threshold), ``1`` otherwise.

        Parameters
        ----------
        X : array-like or scipy.sparse matrix of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples,)
        """
        return np.where(self._predict_values(X) == 1.0, -1, 1)
