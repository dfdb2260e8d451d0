"""kestrel.spark.MapReduceRSVM on a real local Spark session (local[2]): the model Spark
learns is byte for byte the one-machine model of the same rows, predicts a nonlinear
problem of 10^5 rows, and impossible splits are errors, not hung jobs."""

import os
import shutil
import sys

import numpy as np
import pytest

import kestrel
from kestrel import _kestrel

pytest.importorskip("pyspark")
if shutil.which("java") is None:
    pytest.skip("no Java runtime: Spark cannot start", allow_module_level=True)

from pyspark.ml.linalg import Vectors, VectorUDT  # noqa: E402
from pyspark.sql import SparkSession  # noqa: E402
from pyspark.sql.types import DoubleType, LongType, StructField, StructType  # noqa: E402

from kestrel.spark import MapReduceRSVM  # noqa: E402


@pytest.fixture(scope="module")
def spark():
    os.environ["PYSPARK_PYTHON"] = sys.executable
    os.environ["PYSPARK_DRIVER_PYTHON"] = sys.executable
    session = (
        SparkSession.builder.master("local[2]")
        .appName("kestrel-tests")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.driver.memory", "1g")
        .getOrCreate()
    )
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()


def waves(n, seed):
    """A nonlinear problem: label 1 where sin(3x₀) + cos(3x₁) > 0, two noise features, 3 % of
    labels flipped."""
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, size=(n, 4))
    y = (np.sin(3 * X[:, 0]) + np.cos(3 * X[:, 1]) > 0).astype(np.float64)
    flip = rng.random(n) < 0.03
    y[flip] = 1 - y[flip]
    return X, y


def frame(spark, X, y):
    rows = [(i, Vectors.dense(x), float(label)) for i, (x, label) in enumerate(zip(X, y))]
    return spark.createDataFrame(rows, ["id", "features", "label"])


def test_spark_learns_the_one_machine_model_of_the_same_rows(spark):
    X, y = waves(100_000, 1)
    X_test, y_test = waves(20_000, 2)
    estimator = MapReduceRSVM(numPartitions=4, nCentres=64, seed=3)
    model = estimator.fit(frame(spark, X, y))
    config = _kestrel.FitConfig("mrrsvm", partitions=4, centers=64, seed=3)
    one_machine, _ = _kestrel.fit(config, X, y)
    assert model.modelBytes == one_machine
    assert model.summary["partitions"] == 4 and len(model.summary["part_centers"]) == 4

    predicted = model.transform(frame(spark, X_test, y_test)).select("id", "prediction").collect()
    values = np.empty(len(y_test))
    values[[row.id for row in predicted]] = [row.prediction for row in predicted]
    assert (values == y_test).mean() > 0.9, (values == y_test).mean()
    # The executors' predictions are the model file's, as kestrel.load reads it.
    assert np.array_equal(values, kestrel.load(model.modelBytes).predict(X_test))


def test_raw_predictions_are_what_spark_s_evaluators_read(spark):
    """rawPrediction holds a score per class in Spark's order (ascending labels, its class
    indices): BinaryClassificationEvaluator's ROC AUC of it is scikit-learn's of the class-1
    scores, and each row's largest score is its prediction's class, for two classes and
    for three; rawPredictionCol="" leaves the column out."""
    from pyspark.ml.evaluation import BinaryClassificationEvaluator
    from sklearn.metrics import roc_auc_score

    X, y = waves(6_000, 7)
    X_test, y_test = waves(3_000, 8)
    for classes in (2, 3):
        labels, labels_test = (y, y_test) if classes == 2 else (y + (X[:, 2] > 0.5), y_test + (X_test[:, 2] > 0.5))
        model = MapReduceRSVM(numPartitions=2, nCentres=32, seed=3).fit(frame(spark, X, labels))
        scored = model.transform(frame(spark, X_test, labels_test))
        rows = scored.select("id", "prediction", "rawPrediction").orderBy("id").collect()
        raw = np.array([row.rawPrediction.toArray() for row in rows])
        predictions = np.array([row.prediction for row in rows])
        assert raw.shape == (len(y_test), classes)
        assert np.array_equal(np.argmax(raw, axis=1).astype(np.float64), predictions)
        if classes == 2:
            # numBins=0: the exact curve, not one down-sampled to 1000 points.
            auc = BinaryClassificationEvaluator(metricName="areaUnderROC", numBins=0).evaluate(scored)
            assert abs(auc - roc_auc_score(labels_test, raw[:, 1])) < 1e-9 and auc > 0.85, auc
    plain = MapReduceRSVM(numPartitions=2, nCentres=32, seed=3, rawPredictionCol="").fit(frame(spark, X, y))
    assert "rawPrediction" not in plain.transform(frame(spark, X_test, y_test)).columns


def test_a_model_with_class_probabilities_writes_spark_s_probability_column(spark):
    """A model file trained on one machine with class probabilities, given to
    MapReduceRSVMModel: the probability column is the model's own (kestrel.Model's, in
    ascending label order), MulticlassClassificationEvaluator's logLoss of it is
    scikit-learn's; the estimator's own model writes none, nor does probabilityCol=""."""
    from pyspark.ml.evaluation import MulticlassClassificationEvaluator
    from sklearn.metrics import log_loss

    from kestrel.spark import MapReduceRSVMModel

    X, y = waves(3_000, 9)
    X_test, y_test = waves(1_000, 10)
    labels, labels_test = y + (X[:, 2] > 0.5), y_test + (X_test[:, 2] > 0.5)
    config = _kestrel.FitConfig("mrrsvm", partitions=2, centers=32, seed=3, probabilities=True)
    model_bytes, _ = _kestrel.fit(config, X, labels)
    model = MapReduceRSVMModel(modelBytes=model_bytes)
    scored = model.transform(frame(spark, X_test, labels_test))
    rows = scored.select("id", "probability").orderBy("id").collect()
    probabilities = np.array([row.probability.toArray() for row in rows])
    assert np.allclose(probabilities, kestrel.load(model_bytes).predict_proba(X_test), rtol=0, atol=1e-15)
    assert np.allclose(probabilities.sum(axis=1), 1.0)
    evaluated = MulticlassClassificationEvaluator(metricName="logLoss").evaluate(scored)
    assert abs(evaluated - log_loss(labels_test, probabilities)) < 1e-9 and evaluated < 0.5, evaluated
    assert "probability" not in model.copy({model.probabilityCol: ""}).transform(frame(spark, X_test, labels_test)).columns
    fitted = MapReduceRSVM(numPartitions=2, nCentres=32, seed=3).fit(frame(spark, X, labels))
    assert "probability" not in fitted.transform(frame(spark, X_test, labels_test)).columns


def test_the_estimator_fits_class_probabilities_by_cross_validation(spark):
    """probability=True: the model is the one fitted without it, with class probabilities
    from five more MapReduce fits; they score a log loss near the one-machine model's of
    the same rows and settings (its folds differ), for three classes and for two."""
    from pyspark.ml.evaluation import MulticlassClassificationEvaluator
    from sklearn.metrics import log_loss

    X, y = waves(3_000, 9)
    X_test, y_test = waves(1_000, 10)
    for labels, labels_test in ((y + (X[:, 2] > 0.5), y_test + (X_test[:, 2] > 0.5)), (y, y_test)):
        settings = {"numPartitions": 2, "nCentres": 32, "seed": 3}
        fitted = MapReduceRSVM(probability=True, **settings).fit(frame(spark, X, labels))
        plain = MapReduceRSVM(**settings).fit(frame(spark, X, labels))
        model = kestrel.load(fitted.modelBytes)
        assert model.info["probabilities"] and not kestrel.load(plain.modelBytes).info["probabilities"]
        assert fitted.summary["probability_folds"] == 5 and "probability_folds" not in plain.summary
        assert np.array_equal(model.predict(X_test), kestrel.load(plain.modelBytes).predict(X_test))
        scored = fitted.transform(frame(spark, X_test, labels_test))
        rows = scored.select("id", "probability").orderBy("id").collect()
        probabilities = np.array([row.probability.toArray() for row in rows])
        assert np.allclose(probabilities.sum(axis=1), 1.0)
        evaluated = MulticlassClassificationEvaluator(metricName="logLoss").evaluate(scored)
        config = _kestrel.FitConfig("mrrsvm", partitions=2, centers=32, seed=3, probabilities=True)
        one_machine = kestrel.load(_kestrel.fit(config, X, labels)[0]).predict_proba(X_test)
        reference = log_loss(labels_test, one_machine)
        assert evaluated < 0.5 and abs(evaluated - reference) < 0.03, (evaluated, reference)


def test_past_the_driver_s_share_the_held_out_rows_are_a_sample(spark, monkeypatch):
    """Beyond _CALIBRATION_ROWS held-out rows (here lowered to 600 of 3,000) the driver
    gathers a seeded sample of about as many: the sigmoids then come from fewer values, and
    score a log loss near the whole set's; the same seed gives the same model."""
    import kestrel.spark
    from sklearn.metrics import log_loss

    X, y = waves(3_000, 9)
    X_test, y_test = waves(1_000, 10)
    settings = {"numPartitions": 2, "nCentres": 32, "seed": 3, "probability": True}
    whole = MapReduceRSVM(**settings).fit(frame(spark, X, y)).modelBytes
    monkeypatch.setattr(kestrel.spark, "_CALIBRATION_ROWS", 600)
    sampled = MapReduceRSVM(**settings).fit(frame(spark, X, y)).modelBytes
    assert sampled != whole and MapReduceRSVM(**settings).fit(frame(spark, X, y)).modelBytes == sampled
    losses = [log_loss(y_test, kestrel.load(model).predict_proba(X_test)) for model in (whole, sampled)]
    assert abs(losses[0] - losses[1]) < 0.02, losses


def test_row_weights_give_the_one_machine_model_of_the_same_weighted_rows(spark):
    X, y = waves(4_000, 5)
    weights = np.random.default_rng(6).integers(0, 4, len(y)).astype(np.float64)
    rows = [(i, Vectors.dense(x), float(label), float(w)) for i, (x, label, w) in enumerate(zip(X, y, weights))]
    df = spark.createDataFrame(rows, ["id", "features", "label", "w"])
    model = MapReduceRSVM(numPartitions=2, nCentres=32, seed=4, weightCol="w").fit(df)
    kept = weights > 0
    config = _kestrel.FitConfig("mrrsvm", partitions=2, centers=32, seed=4)
    one_machine, _ = _kestrel.fit(config, X[kept], y[kept], weights[kept])
    assert model.modelBytes == one_machine
    unweighted, _ = _kestrel.fit(config, X[kept], y[kept])
    assert model.modelBytes != unweighted
    schema = StructType(
        [
            StructField("id", LongType()),
            StructField("features", VectorUDT()),
            StructField("label", DoubleType()),
            StructField("w", DoubleType(), nullable=True),
        ]
    )
    for bad in [-1.0, float("nan"), None]:
        rows[7] = (7, Vectors.dense(X[7]), float(y[7]), bad)
        frame_with_bad = spark.createDataFrame(rows, schema)
        with pytest.raises(ValueError, match="a row weight is a finite number"):
            MapReduceRSVM(numPartitions=2, nCentres=32, seed=4, weightCol="w").fit(frame_with_bad)


def test_a_pipeline_standardises_raw_units_first(spark):
    """A noise feature in units a thousand times larger swamps the kernel's distances; Spark's
    StandardScaler before the estimator, in a Pipeline, puts the features on one scale."""
    from pyspark.ml import Pipeline
    from pyspark.ml.feature import StandardScaler

    def rows(n, seed, noise_unit):
        X, y = waves(n, seed)
        X[:, 2] *= noise_unit
        return frame(spark, X, y).withColumnRenamed("features", "raw"), y

    def accuracy(model, test, y_test):
        predicted = model.transform(test).select("id", "prediction").collect()
        values = np.empty(len(y_test))
        values[[row.id for row in predicted]] = [row.prediction for row in predicted]
        return (values == y_test).mean()

    def scored(noise_unit, stages):
        (train, _), (test, y_test) = rows(4000, 5, noise_unit), rows(2000, 6, noise_unit)
        return accuracy(Pipeline(stages=stages).fit(train), test, y_test)

    def estimator(column):
        return MapReduceRSVM(featuresCol=column, numPartitions=2, nCentres=32, seed=3)

    one_scale = scored(1.0, [estimator("raw")])
    as_they_come = scored(1000.0, [estimator("raw")])
    scaler = StandardScaler(inputCol="raw", outputCol="features", withMean=True)
    standardised = scored(1000.0, [scaler, estimator("features")])
    assert as_they_come < one_scale - 0.2, (as_they_come, one_scale)
    assert standardised > one_scale - 0.02, (standardised, one_scale)


def test_models_and_pipelines_are_saved_and_loaded_as_spark_s_are(spark, tmp_path):
    """A fitted PipelineModel holding the model saves and loads with Spark's own persistence:
    the loaded pipeline's model file, predictions and raw predictions are the saved one's;
    the estimator keeps its parameters; a model file that is not one is refused at load."""
    from pyspark.ml import Pipeline, PipelineModel
    from pyspark.ml.feature import StandardScaler

    from kestrel.spark import MapReduceRSVMModel

    X, y = waves(3_000, 9)
    data = frame(spark, X, y).withColumnRenamed("features", "raw")
    estimator = MapReduceRSVM(numPartitions=2, nCentres=32, seed=5, C=2.0)
    fitted = Pipeline(stages=[StandardScaler(inputCol="raw", outputCol="features"), estimator]).fit(data)
    fitted.write().overwrite().save(str(tmp_path / "pipeline"))
    loaded = PipelineModel.load(str(tmp_path / "pipeline"))
    assert loaded.stages[-1].modelBytes == fitted.stages[-1].modelBytes
    assert loaded.stages[-1].summary == fitted.stages[-1].summary and loaded.stages[-1].getOrDefault("C") == 2.0

    def scored(model):
        rows = model.transform(data).select("id", "prediction", "rawPrediction").orderBy("id").collect()
        return [(row.prediction, tuple(row.rawPrediction)) for row in rows]

    assert scored(loaded) == scored(fitted)
    estimator.write().overwrite().save(str(tmp_path / "estimator"))
    back = MapReduceRSVM.load(str(tmp_path / "estimator"))
    assert {p.name: v for p, v in back.extractParamMap().items()} == {
        p.name: v for p, v in estimator.extractParamMap().items()
    }
    model_path = tmp_path / "pipeline" / "stages"
    saved = next(path for path in model_path.iterdir() if "MapReduceRSVMModel" in path.name)
    spark.createDataFrame([(bytearray(b"not a model"),)], ["modelBytes"]).write.mode("overwrite").parquet(
        str(saved / "data")
    )
    with pytest.raises(ValueError):
        MapReduceRSVMModel.load(str(saved))


def test_impossible_splits_are_errors(spark):
    X, y = waves(400, 4)
    with pytest.raises(ValueError, match="401 partitions for 400 rows"):
        MapReduceRSVM(numPartitions=401).fit(frame(spark, X, y))
    # A class of 3 rows cannot reach 8 parts.
    rare = np.where(np.arange(400) < 3, 1.0, 0.0)
    with pytest.raises(ValueError, match="single class|is empty"):
        MapReduceRSVM(numPartitions=8, nCentres=16).fit(frame(spark, X, rare))
    with pytest.raises(ValueError, match="kernel"):
        MapReduceRSVM(kernel="sigmoid").fit(frame(spark, X, y))


def test_missing_labels_and_values_are_named(spark):
    # A null or NaN label is refused on the driver, before any part is learned (a null
    # one failed in float() on an executor); a NaN feature is named as one, not as a
    # value too large for f64.
    X, y = waves(200, 5)
    for missing in (None, float("nan")):
        rows = [(i, Vectors.dense(x), missing if i == 7 else float(label)) for i, (x, label) in enumerate(zip(X, y))]
        df = spark.createDataFrame(rows, ["id", "features", "label"])
        with pytest.raises(ValueError, match=r"label: a row's label is missing \((None|nan)\): leave such rows out"):
            MapReduceRSVM(numPartitions=2).fit(df)
    X[3, 0] = np.nan
    with pytest.raises(Exception, match="row 3: `NaN` is not finite"):
        MapReduceRSVM(numPartitions=2).fit(frame(spark, X, y))


def test_columns_of_the_wrong_kind_are_named_on_the_driver(spark):
    # Class names, a missing features column: told with the stage that makes them right (a
    # string label failed in a SQL cast of Spark's own message). Features as an array of
    # numbers, as a DataFrame from pandas holds them, learn the model of the same vectors.
    X, y = waves(300, 6)
    named = [(i, Vectors.dense(x), "wet" if label else "dry") for i, (x, label) in enumerate(zip(X, y))]
    df = spark.createDataFrame(named, ["id", "features", "label"])
    with pytest.raises(ValueError, match=r"label: the class labels are numbers, not string: index them first \(.*StringIndexer"):
        MapReduceRSVM(numPartitions=2).fit(df)
    with pytest.raises(ValueError, match=r"no column `x` in the DataFrame \(its columns: id, features, label\) \(assemble"):
        MapReduceRSVM(numPartitions=2, featuresCol="x").fit(df)
    arrays = spark.createDataFrame([(i, [float(v) for v in x], float(label)) for i, (x, label) in enumerate(zip(X, y))],
                                   ["id", "features", "label"])
    from_arrays = MapReduceRSVM(numPartitions=2, seed=3).fit(arrays)
    assert from_arrays.modelBytes == MapReduceRSVM(numPartitions=2, seed=3).fit(frame(spark, X, y)).modelBytes
    predicted = from_arrays.transform(arrays).select("prediction").collect()
    assert [row.prediction for row in predicted] == list(kestrel.load(from_arrays.modelBytes).predict(X))
    with pytest.raises(ValueError, match="no column `features` in the DataFrame"):
        from_arrays.transform(arrays.withColumnRenamed("features", "f"))
