"""Kestrel on Apache Spark: the MapReduce RSVM (seed 003 §5, Algorithms 4-5) as a
``pyspark.ml`` Estimator, for data beyond one machine.

:class:`MapReduceRSVM` splits the rows into ``numPartitions`` parts by a seeded hash of each
row (computed on the executors, so a row's part does not depend on where it is), learns a
reduced-kernel SVM on each part on the executors (the Map step: only the part model's bytes
come back to the driver), and on the driver encodes every part's centres by the decision
values of all part models and learns a linear SVM on that table (the Reduce step).
:class:`MapReduceRSVMModel` predicts on the executors with the model's bytes broadcast.

The model is a Kestrel model file: ``model.modelBytes`` is what ``kestrel predict``, the
Python package (``kestrel.load``) and a device read, and it is byte for byte the model
``kestrel train --learner mrrsvm`` learns from the same rows with the same settings.

Every executor needs the ``kestrel`` package: install its wheel on each node, or ship a
packed virtual environment with the job (``spark-submit --archives
kestrel-env.tar.gz#environment`` with ``PYSPARK_PYTHON=./environment/bin/python``; see the
README).

>>> from kestrel.spark import MapReduceRSVM                   # doctest: +SKIP
>>> model = MapReduceRSVM(numPartitions=8).fit(train_df)      # doctest: +SKIP
>>> model.transform(test_df).select("label", "prediction")    # doctest: +SKIP
"""

from __future__ import annotations

import os

import numpy as np
from pyspark import keyword_only
from pyspark.ml import Estimator, Model
from pyspark.ml.param import Param, Params, TypeConverters
from pyspark.ml.param.shared import (
    HasFeaturesCol,
    HasLabelCol,
    HasPredictionCol,
    HasProbabilityCol,
    HasRawPredictionCol,
    HasSeed,
    HasWeightCol,
)
from pyspark.ml.linalg import DenseVector, VectorUDT
from pyspark.ml.util import (
    DefaultParamsReadable,
    DefaultParamsReader,
    DefaultParamsWritable,
    DefaultParamsWriter,
    MLReadable,
    MLReader,
    MLWritable,
    MLWriter,
)
from pyspark.sql.types import ArrayType, DoubleType, NumericType, StructField, StructType

from . import _kestrel

__all__ = ["MapReduceRSVM", "MapReduceRSVMModel"]

# Rows handed to the extension at once on an executor.
_BATCH = 4096
# Folds of the cross-validation that fits class probabilities (kestrel train
# --probabilities takes 5, as LIBSVM's -b 1).
_FOLDS = 5
# Held-out rows whose decision values the driver gathers for the sigmoids, at most: beyond,
# a seeded sample of about as many.
_CALIBRATION_ROWS = 200_000


def _optional_float(value):
    """``None`` (the learner's ``auto``) or a float."""
    return None if value is None else TypeConverters.toFloat(value)


class _MapReduceRSVMParams(
    HasFeaturesCol, HasLabelCol, HasPredictionCol, HasRawPredictionCol, HasProbabilityCol, HasSeed, HasWeightCol
):
    """The parameters the Estimator and its Model share."""

    numPartitions = Param(
        Params._dummy(), "numPartitions", "parts of the data, each learning its own reduced-kernel SVM",
        typeConverter=TypeConverters.toInt,
    )
    C = Param(Params._dummy(), "C", "cost of the part SVMs; None: auto (leave-one-out)", typeConverter=_optional_float)
    gamma = Param(
        Params._dummy(), "gamma", "RBF width of the part SVMs; None: auto (kernel-target alignment)",
        typeConverter=_optional_float,
    )
    kernel = Param(Params._dummy(), "kernel", "rbf, poly or linear", typeConverter=TypeConverters.toString)
    nCentres = Param(
        Params._dummy(), "nCentres", "the most centres of each part's reduced set", typeConverter=TypeConverters.toInt
    )
    scalar = Param(Params._dummy(), "scalar", "the model's scalar: f64 or f32", typeConverter=TypeConverters.toString)
    probability = Param(
        Params._dummy(), "probability", "fit class probabilities by 5-fold cross-validation (five more fits)",
        typeConverter=TypeConverters.toBoolean,
    )

    def __init__(self):
        super().__init__()
        self._setDefault(
            numPartitions=4, C=None, gamma=None, kernel="rbf", nCentres=256, scalar="f64", seed=1, probability=False
        )

    def _settings(self):
        """The keyword arguments of the extension's ``FitConfig``: plain values, sent to the
        executors with the job."""
        seed = self.getOrDefault(self.seed)
        return {
            "learner": "mrrsvm",
            "partitions": self.getOrDefault(self.numPartitions),
            "c": self.getOrDefault(self.C),
            "gamma": self.getOrDefault(self.gamma),
            "kernel": self.getOrDefault(self.kernel),
            "centers": self.getOrDefault(self.nCentres),
            "scalar": self.getOrDefault(self.scalar),
            "seed": int(seed) % (1 << 64),
        }


def _config(settings):
    settings = dict(settings)
    return _kestrel.FitConfig(settings.pop("learner"), **settings)


def _features(value):
    """A row's features as float64: a ``pyspark.ml.linalg`` vector (dense or sparse), or
    an array of numbers."""
    return np.asarray(value.toArray() if hasattr(value, "toArray") else value, dtype=np.float64)


def _check_columns(dataset, features, label=None, weight=None):
    """The columns named, checked on the driver before any job: present, the features a
    vector or an array of numbers, the label and the weight numbers."""
    fields = {field.name: field.dataType for field in dataset.schema.fields}
    for name in filter(None, (features, label, weight)):
        if name not in fields:
            hint = ""
            if name == features:
                hint = " (assemble the feature columns into one: pyspark.ml.feature.VectorAssembler)"
            raise ValueError(f"no column `{name}` in the DataFrame (its columns: {', '.join(fields)}){hint}")
    kind = fields[features]
    if not (isinstance(kind, VectorUDT) or (isinstance(kind, ArrayType) and isinstance(kind.elementType, NumericType))):
        raise ValueError(f"{features}: the features are a vector or an array of numbers, not {kind.simpleString()}")
    for name, what in ((label, "class labels"), (weight, "row weights")):
        if name and not isinstance(fields[name], NumericType):
            hint = ""
            if name == label:
                hint = f": index them first (pyspark.ml.feature.StringIndexer(inputCol={name!r}, outputCol=...))"
            raise ValueError(f"{name}: the {what} are numbers, not {fields[name].simpleString()}{hint}")


def _arrays(rows):
    """Features (as a float64 matrix), labels and weights (``None`` unweighted) of
    ``(features, label, weight)`` rows."""
    X = np.vstack([_features(row[0]) for row in rows])
    y = np.asarray([float(row[1]) for row in rows], dtype=np.float64)
    w = np.asarray([float(row[2]) for row in rows], dtype=np.float64) if len(rows[0]) > 2 else None
    return X, y, w


def _batches(iterator):
    batch = []
    for item in iterator:
        batch.append(item)
        if len(batch) == _BATCH:
            yield batch
            batch = []
    if batch:
        yield batch


class MapReduceRSVM(Estimator, _MapReduceRSVMParams, DefaultParamsReadable, DefaultParamsWritable):
    """MapReduce RSVM (seed 003 §5): a reduced-kernel SVM per part of the data, learned on
    the executors, and a linear SVM on their decision values, learned on the driver.

    Parameters
    ----------
    featuresCol : str, default="features"
        A vector column (``pyspark.ml.linalg`` dense or sparse vectors, as
        ``VectorAssembler`` makes), or an array of numbers.
    labelCol : str, default="label"
        Numeric class labels; two or more classes (one-vs-rest beyond two). Names are
        indexed first (``StringIndexer``).
    predictionCol : str, default="prediction"
    rawPredictionCol : str, default="rawPrediction"
        The model's decision values as Spark's classifiers give them: a vector of one
        entry per class in ascending label order (Spark's class indices), the larger the
        more that class (two classes: ``(−f, f)``), which Spark's
        ``BinaryClassificationEvaluator`` reads; ``""`` leaves it out.
    probabilityCol : str, default="probability"
        Class probabilities, a vector in the same order, which ``MulticlassClassificationEvaluator
        (metricName="logLoss")`` reads — written by a model whose file carries them: one
        fitted with ``probability=True``, or one trained on one machine with them (``kestrel
        train --learner mrrsvm --probabilities``) and given as
        ``MapReduceRSVMModel(modelBytes=...)``; ``""`` leaves the column out.
    probability : bool, default=False
        Fit class probabilities, as ``kestrel train --probabilities`` and LIBSVM's ``-b 1``
        do: Platt's sigmoid of each decision value, fitted to values held out by 5-fold
        cross-validation — five more MapReduce fits, each on four folds (a row's fold by a
        seeded hash of it, as its part), the held-out rows' values computed on the executors
        with the fold models broadcast. The driver gathers one value per held-out row and
        class (at most about 200,000 rows: a seeded sample beyond) and fits the sigmoids.
        The folds are not ``kestrel train``'s (a shuffle of the whole set), so the sigmoids
        differ from its by what the folds do. Unset, a model carries none (as Spark's
        ``LinearSVC`` gives none).
    numPartitions : int, default=4
        Parts of the data ``P``; each must hold rows of two classes or more.
    weightCol : str, optional
        Each row's weight (finite, 0 or more): its error costs that many times as much in its
        part's SVM, as ``kestrel train --learner mrrsvm --weight-column``; rows of weight 0
        are left out. Unset: every row weighs 1.
    C, gamma : float or None, default=None
        The part SVMs' cost and RBF width; None chooses them on each part as ``kestrel
        train --learner rsvm`` does ("auto").
    kernel : {"rbf", "poly", "linear"}, default="rbf"
    nCentres : int, default=256
        The most centres of each part's reduced set.
    scalar : {"f64", "f32"}, default="f64"
        The model's scalar ("f32" for a device).
    seed : int, default=1
        Seed of the split, the reduced sets and the solvers.

    Notes
    -----
    The RBF kernel measures distances in the features' own units, and the estimator takes
    them as they come: for readings in raw units of different scales (a temperature in
    kelvin beside an acceleration in g), standardise them first with Spark's own stage,
    whose statistics Spark computes across the executors. The model file then takes
    standardised rows, outside Spark too (``kestrel train --learner mrrsvm --scale``
    instead keeps the statistics in the model file).

    >>> from pyspark.ml import Pipeline                                       # doctest: +SKIP
    >>> from pyspark.ml.feature import StandardScaler                         # doctest: +SKIP
    >>> scaler = StandardScaler(inputCol="raw", outputCol="features", withMean=True)  # doctest: +SKIP
    >>> model = Pipeline(stages=[scaler, MapReduceRSVM()]).fit(train_df)      # doctest: +SKIP
    """

    @keyword_only
    def __init__(
        self, *, featuresCol="features", labelCol="label", predictionCol="prediction", rawPredictionCol="rawPrediction",
        probabilityCol="probability", weightCol=None, numPartitions=4, C=None, gamma=None, kernel="rbf", nCentres=256,
        scalar="f64", seed=1, probability=False,
    ):
        super().__init__()
        self._set(**self._input_kwargs)

    @keyword_only
    def setParams(
        self, *, featuresCol="features", labelCol="label", predictionCol="prediction", rawPredictionCol="rawPrediction",
        probabilityCol="probability", weightCol=None, numPartitions=4, C=None, gamma=None, kernel="rbf", nCentres=256,
        scalar="f64", seed=1, probability=False,
    ):
        """Sets the parameters given by keyword."""
        return self._set(**self._input_kwargs)

    def _fit(self, dataset):
        settings = self._settings()
        parts = settings["partitions"]
        if parts < 1:
            raise ValueError(f"numPartitions must be at least 1, got {parts}")
        _config(settings)  # bad settings fail here, before any job
        columns = [self.getFeaturesCol(), self.getLabelCol()]
        weighed = self.isDefined(self.weightCol) and self.getWeightCol()
        _check_columns(dataset, *columns, self.getWeightCol() if weighed else None)
        if weighed:
            weight = self.getWeightCol()
            columns.append(weight)
            finite = f"`{weight}` >= 0 AND `{weight}` < double('inf')"
            bad = dataset.filter(f"`{weight}` IS NULL OR NOT ({finite})").limit(1).collect()
            if bad:
                raise ValueError(f"{weight}: a row weight is a finite number, 0 or more; got {bad[0][weight]}")
            # Rows of weight 0 are left out, as kestrel train --weight-column leaves them.
            dataset = dataset.filter(f"`{weight}` > 0")
        label = self.getLabelCol()
        missing = dataset.filter(f"`{label}` IS NULL OR isnan(CAST(`{label}` AS DOUBLE))").limit(1).collect()
        if missing:
            raise ValueError(
                f"{label}: a row's label is missing ({missing[0][label]}): leave such rows out "
                f"(dataset.na.drop(subset=[{label!r}])), as kestrel train leaves them out under --on-error skip"
            )
        rows = dataset.select(*columns).rdd.map(tuple)
        first = rows.take(1)
        if not first:
            raise ValueError("the training DataFrame has no rows")
        dim = len(_features(first[0][0]))
        count = rows.count()
        if parts > count:
            raise ValueError(f"{parts} partitions for {count} rows: use fewer partitions")

        model_bytes, summary = _learned(rows, settings, parts, dim)
        if self.getOrDefault(self.probability):
            model_bytes = _with_probabilities(rows, settings, dim, count, model_bytes, _arrays(first)[0])
            summary = {**summary, "probability_folds": _FOLDS}
        model = MapReduceRSVMModel(modelBytes=model_bytes, summary=summary)
        return self._copyValues(model)


def _learned(rows, settings, parts, dim, what=""):
    """The MapReduce RSVM of ``rows`` (``(features, label[, weight])``): each row's part by
    its hash, the part models learned on the executors, the Reduce on the driver; its model
    bytes and summary. Errors name the part (after ``what``, for a cross-validation's fold)."""

    def learn(index, iterator):
        batch = [row for _, row in iterator]
        if not batch:
            yield index, None, f"{what}part {index} of {parts} is empty: use fewer partitions"
            return
        X, y, w = _arrays(batch)
        classes = np.unique(y)
        if len(classes) < 2:
            message = (
                f"{what}part {index} of {parts} ({len(y)} rows) holds a single class ({classes[0]:g}): "
                "use fewer partitions"
            )
            yield index, None, message
            return
        try:
            yield index, _kestrel.mrrsvm_part(_config(settings), X, y, w), None
        except ValueError as error:
            yield index, None, f"{what}part {index} of {parts} ({len(y)} rows): {error}"

    keyed = rows.mapPartitions(_by_part(settings)).partitionBy(parts, lambda part: part)
    learned = sorted(keyed.mapPartitionsWithIndex(learn).collect(), key=lambda item: item[0])
    errors = [message for _, _, message in learned if message is not None]
    if errors:
        raise ValueError(errors[0])
    if len(learned) != parts:
        raise ValueError(f"{what}{parts - len(learned)} of {parts} parts were not learned")
    return _kestrel.mrrsvm_reduce(_config(settings), [part for _, part, _ in learned], dim)


def _with_probabilities(rows, settings, dim, count, model_bytes, probe):
    """``model_bytes`` with class probabilities fitted by :data:`_FOLDS`-fold
    cross-validation of the MapReduce RSVM on ``rows`` (see ``MapReduceRSVM``'s
    ``probability``); ``probe`` is a row of features, for the model's labels."""
    # The folds hash the rows as the parts do, with another seed: a fold is no part.
    folds = dict(settings, partitions=_FOLDS, seed=(settings["seed"] + 1) % (1 << 64))
    tagged = rows.mapPartitions(_by_part(folds)).cache()
    # What the cluster holds for the cross-validation, released when it is over.
    cleanup = [tagged.unpersist]
    try:
        fold_models = []
        for k in range(_FOLDS):
            train = tagged.filter(lambda item, k=k: item[0] != k).values()
            fold_bytes, _ = _learned(train, settings, settings["partitions"], dim, f"fold {k + 1} of {_FOLDS}: ")
            fold_models.append(fold_bytes)
        labels = [float(label) for label in _kestrel.decision_function(model_bytes, probe)[1]]
        broadcast = rows.context.broadcast(fold_models)
        cleanup.append(broadcast.destroy)
        fraction = _CALIBRATION_ROWS / count
        sample = tagged if fraction >= 1 else tagged.sample(False, fraction, settings["seed"])
        gathered = sample.mapPartitions(_held_out(broadcast, labels)).collect()
        values = np.vstack([values for values, _ in gathered])
        y = np.concatenate([y for _, y in gathered])
        return _kestrel.calibrated(model_bytes, values, y)
    finally:
        for release in cleanup:
            release()


def _by_part(settings):
    """The executors' step that tags each ``(features, label[, weight])`` row with its part
    under ``settings`` (its hash's; a cross-validation's fold is its part under the folds'
    settings)."""

    def tag(iterator):
        config = _config(settings)
        for batch in _batches(iterator):
            X, y, _ = _arrays(batch)
            for part, row in zip(_kestrel.mrrsvm_parts(config, X, y), batch):
                yield int(part), row

    return tag


def _held_out(broadcast, labels):
    """The executors' step that gives each batch of fold-tagged rows its decision values
    from the model of its fold (the broadcast's, which did not learn it), as the outputs of
    the classifier of ``labels``, and its labels."""

    def held_out(iterator):
        models = broadcast.value
        for batch in _batches(iterator):
            fold_of = np.asarray([fold for fold, _ in batch])
            X, y, _ = _arrays([row for _, row in batch])
            values = np.full((len(y), 1 if len(labels) == 2 else len(labels)), np.nan)
            for k, fold_model in enumerate(models):
                at = fold_of == k
                if at.any():
                    values[at] = _kestrel.held_out_values(labels, fold_model, X[at])
            yield values, y

    return held_out


class MapReduceRSVMModel(Model, _MapReduceRSVMParams, MLReadable, MLWritable):
    """A MapReduce RSVM model: predicts on the executors (Algorithm 5) with its bytes
    broadcast. It is saved and loaded as Spark's models are (``model.write().save(path)``,
    ``MapReduceRSVMModel.load(path)``, and inside a saved ``PipelineModel``): its parameters
    and summary in ``path/metadata``, its model file in ``path/data`` (Parquet).

    Attributes
    ----------
    modelBytes : bytes
        The Kestrel model file (``kestrel.load``, ``kestrel predict``, a device).
    summary : dict
        What training did: parts, centres, the final linear SVM.
    """

    def __init__(self, modelBytes=b"", summary=None):
        super().__init__()
        self.modelBytes = bytes(modelBytes)
        self.summary = dict(summary or {})

    def write(self):
        """A writer of the model (``.save(path)``, ``.overwrite()``)."""
        return _ModelWriter(self)

    @classmethod
    def read(cls):
        """A reader of a saved model (``.load(path)``)."""
        return _ModelReader(cls)

    def _transform(self, dataset):
        session = dataset.sparkSession
        _check_columns(dataset, self.getFeaturesCol())
        broadcast = session.sparkContext.broadcast(self.modelBytes)
        column = dataset.columns.index(self.getFeaturesCol())
        raw = self.getOrDefault(self.rawPredictionCol)
        # Class probabilities only from a model file that carries them (`kestrel train
        # --learner mrrsvm --probabilities`), as Spark's LinearSVC writes none.
        calibrated = _kestrel.describe(self.modelBytes)["probabilities"]
        probability = self.getOrDefault(self.probabilityCol) if calibrated else ""
        vectors = [(name, scores) for name, scores in ((raw, _raw_predictions), (probability, _probabilities)) if name]
        fields = [StructField(self.getPredictionCol(), DoubleType(), False)]
        fields += [StructField(name, VectorUDT(), False) for name, _ in vectors]
        schema = StructType(dataset.schema.fields + fields)

        def predict(iterator):
            model = broadcast.value
            for batch in _batches(iterator):
                X = np.vstack([_features(row[column]) for row in batch])
                values = _kestrel.predict(model, X)
                columns = [scores(model, X) for _, scores in vectors]
                for i, (row, value) in enumerate(zip(batch, values)):
                    yield (*row, float(value), *(DenseVector(c[i]) for c in columns))

        return session.createDataFrame(dataset.rdd.mapPartitions(predict), schema)


def _raw_predictions(model, X):
    """The model's decision values of the rows `X` as Spark's rawPrediction: a column per
    class in ascending label order (the model's one value of two classes, ≥ 0 for its
    second label, as its negation and itself)."""
    values, labels = _kestrel.decision_function(model, X)
    if values.shape[1] == 1:
        values = np.hstack([-values, values])
    return _in_label_order(values, labels)


def _probabilities(model, X):
    """The model's class probabilities of the rows `X` as Spark's probability: a column
    per class in ascending label order."""
    return _in_label_order(*_kestrel.probabilities(model, X))


def _in_label_order(values, labels):
    """``values`` (a column per label of ``labels``) with their columns in ascending label
    order, Spark's class indices."""
    return values[:, np.argsort(labels, kind="stable")]


class _ModelWriter(MLWriter):
    """Writes a :class:`MapReduceRSVMModel` as Spark writes its own models: the parameters
    and the summary as metadata, the model file as one row of Parquet."""

    def __init__(self, instance):
        super().__init__()
        self.instance = instance

    def saveImpl(self, path):
        summary = {"summary": self.instance.summary}
        DefaultParamsWriter.saveMetadata(self.instance, path, self.sparkSession, extraMetadata=summary)
        data = self.sparkSession.createDataFrame([(bytearray(self.instance.modelBytes),)], ["modelBytes"])
        data.coalesce(1).write.parquet(os.path.join(path, "data"))


class _ModelReader(MLReader):
    """Reads what :class:`_ModelWriter` wrote; a model file that is not one is an error."""

    def __init__(self, cls):
        super().__init__()
        self.cls = cls

    def load(self, path):
        metadata = DefaultParamsReader.loadMetadata(path, self.sparkSession)
        row = self.sparkSession.read.parquet(os.path.join(path, "data")).first()
        if row is None:
            raise ValueError(f"{path}: no model file in data/")
        model_bytes = bytes(row.modelBytes)
        _kestrel.describe(model_bytes)  # raises for bytes that are no model
        model = self.cls(modelBytes=model_bytes, summary=metadata.get("summary"))
        model._resetUid(metadata["uid"])
        DefaultParamsReader.getAndSetParams(model, metadata)
        return model
