"""The online learners: River's interface on River's own streams, the same state and model
as `kestrel stream` on the same rows, state saved and restored, errors."""

import itertools
import json
import pickle
import subprocess
from copy import deepcopy

import numpy as np
import pytest
from river import compose, datasets, evaluate, linear_model, metrics, neighbors, preprocessing
from sklearn.metrics import roc_auc_score
from sklearn.preprocessing import StandardScaler
from sklearn.svm import OneClassSVM

import kestrel
from kestrel.online import StreamingRSVM, WindowNovelty, WindowSLKL, WindowSVM
from test_estimators import kestrel_cli


def test_progressive_validation_on_phishing_against_river():
    ours = evaluate.progressive_val_score(datasets.Phishing(), WindowSVM(), metrics.Accuracy()).get()
    river = preprocessing.StandardScaler() | linear_model.LogisticRegression()
    theirs = evaluate.progressive_val_score(datasets.Phishing(), river, metrics.Accuracy()).get()
    assert ours >= theirs - 0.01, (ours, theirs)


def test_regression_on_trump_approval_against_river():
    # Against River's linear model and its best learner on this stream, the nearest
    # neighbours (which here average the last days' ratings).
    ours = evaluate.progressive_val_score(datasets.TrumpApproval(), WindowSLKL(), metrics.MAE()).get()
    for river in [preprocessing.StandardScaler() | linear_model.LinearRegression(), neighbors.KNNRegressor()]:
        theirs = evaluate.progressive_val_score(datasets.TrumpApproval(), river, metrics.MAE()).get()
        assert ours <= theirs, (ours, theirs, river)


def test_classification_on_bananas_against_river_nearest_neighbours():
    # River's best learner on this stream; 2 features, so the reduced-kernel SVM's warm-up
    # lasts a whole window, predicted by the classes' centres of mass.
    ours = evaluate.progressive_val_score(datasets.Bananas(), StreamingRSVM(), metrics.Accuracy()).get()
    theirs = evaluate.progressive_val_score(datasets.Bananas(), neighbors.KNNClassifier(), metrics.Accuracy()).get()
    assert ours >= theirs - 0.005, (ours, theirs)


def test_the_model_file_gives_the_learner_s_class_probabilities():
    """to_bytes() carries the sigmoids the learner learned: kestrel.Model's predict_proba
    (a column per class in the order of classes_, the classes' codes) is predict_proba_one's,
    for named classes of both online SVMs."""
    rng = np.random.default_rng(4)
    X = rng.uniform(-1, 1, (400, 2))
    names = np.where(X[:, 0] + X[:, 1] > 0, "wet", "dry")
    for learner in (kestrel.online.WindowSVM(), kestrel.online.StreamingRSVM()):
        learner.partial_fit(X, names)
        model = kestrel.Model(learner.to_bytes())
        assert model.info["probabilities"]
        from_file = model.predict_proba(X[:25])
        for row, x in zip(from_file, X[:25]):
            online = learner.predict_proba_one(dict(enumerate(x)))
            assert np.allclose(row, [online[c] for c in learner.classes_], rtol=0, atol=1e-9), (row, online)


def test_predict_proba_gives_predict_proba_one_for_the_rows_at_once():
    """predict_proba(X): a row per sample, a column per class in the order of classes_
    (named classes) or of the labels (numbers, ascending, whichever came first), each row
    predict_proba_one's, learning nothing; three classes, and before any sample an error."""
    rng = np.random.default_rng(5)
    X = rng.uniform(-1, 1, (500, 2))
    named = np.where(X[:, 0] > 0.3, "high", np.where(X[:, 1] > 0, "mid", "low"))
    numbers = np.where(X[:, 0] > 0.3, 7.0, np.where(X[:, 1] > 0, 2.0, 5.0))
    for make in (WindowSVM, StreamingRSVM):
        with pytest.raises(ValueError, match="learned nothing yet"):
            make().predict_proba(X[:2])
        for labels in (named, numbers):
            learner = make().partial_fit(X, labels)
            state = learner.save_state()
            p = learner.predict_proba(X[:30])
            columns = learner.classes_
            assert labels is named or columns == [2.0, 5.0, 7.0], columns
            assert p.shape == (30, 3) and np.allclose(p.sum(axis=1), 1.0)
            for row, x in zip(p, X[:30]):
                online = learner.predict_proba_one(dict(enumerate(x)))
                assert np.array_equal(row, [online[c] for c in columns]), (row, online)
            assert learner.save_state() == state
            assert np.array_equal(learner.predict_log_proba(X[:30]), np.log(p))
            right = np.asarray(columns)[p.argmax(axis=1)] == labels[:30]
            assert right.mean() > 0.8, right.mean()


def test_classes_of_numeric_labels_are_the_labels_ascending():
    """classes_ of a learner of numeric labels: empty before a sample, then the labels met
    ascending — predict_proba's columns — as a pickled copy and a learner resumed from
    the state have them; a label refused is not among them; a regressor has none."""
    rng = np.random.default_rng(8)
    X = rng.uniform(-1, 1, (300, 2))
    y = np.where(X[:, 0] > 0.3, 9, np.where(X[:, 1] > 0, -2, 4))
    for make in (WindowSVM, StreamingRSVM):
        learner = make(classes=3)
        assert learner.classes_ == []
        learner.partial_fit(X[:1], y[:1])
        assert learner.classes_ == [float(y[0])]
        learner.partial_fit(X[1:], y[1:])
        assert learner.classes_ == [-2.0, 4.0, 9.0]
        p = learner.predict_proba(X[:50])
        right = np.asarray(learner.classes_)[p.argmax(axis=1)] == y[:50]
        assert right.mean() > 0.8, right.mean()
        with pytest.raises(ValueError, match="cannot be learned"):
            learner.learn_one({0: 0.0, 1: 0.0}, 5)
        assert learner.classes_ == [-2.0, 4.0, 9.0]
        assert pickle.loads(pickle.dumps(learner)).classes_ == [-2.0, 4.0, 9.0]
        resumed = make(classes=3)
        resumed.load_state(learner.save_state(), 2)
        assert resumed.classes_ == [-2.0, 4.0, 9.0]
    assert not hasattr(WindowSLKL().partial_fit(X, X[:, 0]), "classes_")


def test_classes_given_to_partial_fit_as_scikit_learn_s_incremental_classifiers_take_them():
    """partial_fit(X, y, classes=...) as scikit-learn's SGDClassifier is called: classes_
    and predict_proba's columns are the given classes, ascending, from the first call (a
    class not met yet has probability 0, and every row sums to 1); a label outside them, or
    other classes on a later call, is refused and changes nothing; names too; and the
    learner holds as many classes as given, past the default 16."""
    X = np.random.default_rng(3).normal(size=(400, 2))
    y = np.where(X[:, 0] > 0, 2, 0)
    for make in (WindowSVM, StreamingRSVM):
        learner = make().partial_fit(X[:200], y[:200], classes=np.array([2, 0, 1]))
        assert learner.classes_ == [0.0, 1.0, 2.0]
        p = learner.predict_proba(X[:50])
        assert p.shape == (50, 3) and np.all(p[:, 1] == 0.0) and np.allclose(p.sum(axis=1), 1.0)
        assert np.mean(np.asarray(learner.classes_)[p.argmax(axis=1)] == y[:50]) > 0.9
        before = learner.save_state()
        with pytest.raises(ValueError, match="not one of the classes"):
            learner.partial_fit(X[200:210], np.full(10, 5))
        with pytest.raises(ValueError, match="not the same as on the first call"):
            learner.partial_fit(X[200:210], y[200:210], classes=[0, 1, 2, 3])
        assert learner.save_state() == before
        learner.partial_fit(X[200:], y[200:], classes=[0, 1, 2])
        learner.partial_fit(X[:5], np.ones(5))
        assert learner.predict_proba(X[:5]).shape == (5, 3)
        copy = pickle.loads(pickle.dumps(learner))
        assert copy.classes_ == learner.classes_ and np.array_equal(copy.predict_proba(X), learner.predict_proba(X))
    names = WindowSVM().partial_fit(X[:100], np.where(y[:100] > 0, "up", "down"), classes=["up", "flat", "down"])
    assert names.classes_ == ["down", "flat", "up"]
    assert names.predict_proba(X[:3]).shape == (3, 3) and set(names.predict(X[:20])) <= {"down", "up"}
    with pytest.raises(ValueError, match="mixes numbers and names"):
        WindowSVM().partial_fit(X[:10], y[:10], classes=[0, "up"])
    with pytest.raises(ValueError, match="leaves out classes the learner has met"):
        WindowSVM().partial_fit(X[:10], y[:10]).partial_fit(X[:10], y[:10], classes=[7, 8])
    many = np.arange(400) % 20
    wide = WindowSVM(window=64).partial_fit(X, many, classes=np.arange(20))
    assert len(wide.classes_) == 20 and wide.predict_proba(X[:2]).shape == (2, 20)


def test_score_is_scikit_learn_s_accuracy_and_r2_of_the_predictions():
    """score(X, y): a classifier's mean accuracy and a regressor's R² of their predictions,
    as scikit-learn's metrics give them, learning nothing."""
    from sklearn.metrics import accuracy_score, r2_score

    X = np.random.default_rng(4).normal(size=(300, 3))
    names = np.where(X[:, 0] + X[:, 1] > 0, "up", "down")
    svm = WindowSVM().partial_fit(X[:200], names[:200])
    before = svm.save_state()
    assert svm.score(X[200:], names[200:]) == accuracy_score(names[200:], svm.predict(X[200:])) > 0.9
    assert svm.save_state() == before
    target = X @ [1.0, -2.0, 0.5]
    slkl = WindowSLKL().partial_fit(X[:200], target[:200])
    assert slkl.score(X[200:], target[200:]) == pytest.approx(r2_score(target[200:], slkl.predict(X[200:])), abs=1e-12)
    with pytest.raises(ValueError, match="learned nothing"):
        WindowSVM().score(X, names)
    # fit starts afresh: the same state as a new learner's partial_fit, whatever came before.
    svm.partial_fit(X[200:], names[200:])
    assert svm.fit(X[:100], names[:100]).save_state() == WindowSVM().partial_fit(X[:100], names[:100]).save_state()
    assert svm.classes_ == ["down", "up"] and int(svm.history_["loss"]["rows"][-1]) == 100
    assert svm.fit(X[:100], names[:100] == "up", classes=[True, False]).classes_ == [0.0, 1.0]
    detector = WindowNovelty(warmup=50).fit(X)
    assert detector.save_state() == WindowNovelty(warmup=50).partial_fit(X).save_state()


def test_scikit_learn_clones_and_cross_validates_the_online_learners():
    """get_params / set_params as scikit-learn's: clone gives a fresh learner of the same
    settings, and cross_val_score fits and scores each fold (the folds' scores those of
    learners fitted by hand); a setting is not changed once the learner has learned."""
    from sklearn.base import clone
    from sklearn.model_selection import KFold, cross_val_score

    X = np.random.default_rng(5).normal(size=(300, 2))
    y = (X[:, 0] * X[:, 1] > 0).astype(int)
    learner = StreamingRSVM(window=64, gamma=0.5, seed=3)
    copy = clone(learner)
    assert copy is not learner and copy.get_params() == learner.get_params()
    folds = KFold(3)
    scores = cross_val_score(learner, X, y, cv=folds)
    by_hand = [StreamingRSVM(window=64, gamma=0.5, seed=3).fit(X[a], y[a]).score(X[b], y[b]) for a, b in folds.split(X)]
    assert list(scores) == by_hand and min(scores) > 0.8
    assert WindowSVM().set_params(C=0.1, window=32).get_params()["C"] == 0.1
    with pytest.raises(ValueError, match="not a setting"):
        WindowSVM().set_params(gamma=1.0)
    fitted = WindowSVM().fit(X, y)
    with pytest.raises(ValueError, match="settings are fixed"):
        fitted.set_params(window=32)
    assert fitted.set_params(window=256).get_params()["window"] == 256


def test_class_probabilities_score_by_river_s_metrics_of_probabilities():
    """predict_proba_one through River's ROCAUC, LogLoss and CrossEntropy, against River's
    learners on the same streams: its logistic regression on Phishing, its nearest
    neighbours (its best by accuracy) on Bananas, its softmax regression on the seven
    classes of ImageSegments."""

    def score(dataset, model, metric):
        return evaluate.progressive_val_score(dataset(), model, metric)

    scaled = preprocessing.StandardScaler
    for dataset, river in [
        (datasets.Phishing, scaled() | linear_model.LogisticRegression()),
        (datasets.Bananas, neighbors.KNNClassifier()),
    ]:
        ours, theirs = score(dataset, StreamingRSVM(), metrics.ROCAUC() + metrics.LogLoss()), score(
            dataset, river, metrics.ROCAUC() + metrics.LogLoss()
        )
        assert ours[0].get() >= theirs[0].get() and ours[1].get() <= theirs[1].get(), (dataset, ours, theirs)
    for make in (WindowSVM, StreamingRSVM):
        ours = score(datasets.ImageSegments, make(), metrics.CrossEntropy()).get()
        theirs = score(datasets.ImageSegments, scaled() | linear_model.SoftmaxRegression(), metrics.CrossEntropy()).get()
        assert ours <= theirs, (make, ours, theirs)
    learner = StreamingRSVM()
    assert learner.predict_proba_one({"a": 1.0}) == {}
    for x, y in itertools.islice(datasets.ImageSegments(), 600):
        learner.learn_one(x, y)
    probabilities = learner.predict_proba_one(x)
    assert set(probabilities) == set(learner.classes_) and len(probabilities) == 7
    assert abs(sum(probabilities.values()) - 1) < 1e-12 and min(probabilities.values()) >= 0


def phishing(rows):
    """The first `rows` samples of River's Phishing stream as a matrix and 0/1 labels."""
    samples = list(itertools.islice(datasets.Phishing(), rows))
    names = list(samples[0][0])
    X = np.array([[x[name] for name in names] for x, _ in samples], dtype=np.float64)
    return names, X, np.array([int(y) for _, y in samples], dtype=np.float64)


def kestrel_stream(tmp_path, flag, names, X, y):
    """`kestrel stream --learner flag` with its defaults on the rows: the model file's bytes
    (which carry the names the CSV header gave the features; a model of `partial_fit`'s
    arrays has none) and the summary."""
    data = tmp_path / "stream.csv"
    data.write_text(",".join(names + ["y"]) + "\n" + "\n".join(",".join(map(repr, [*row, label])) for row, label in zip(X.tolist(), y.tolist())) + "\n")
    out = tmp_path / "stream.kestrel"
    run = subprocess.run(
        [kestrel_cli(), "stream", "--learner", flag, "--input", data, "--out", out, "--json"],
        check=True,
        capture_output=True,
        text=True,
    )
    model = out.read_bytes()
    assert kestrel.load(model).info["feature_names"] == names
    return model, json.loads(run.stdout.splitlines()[-1])


@pytest.mark.parametrize("learner, flag", [(WindowSVM, "svm"), (StreamingRSVM, "rsvm")])
def test_the_model_is_the_one_kestrel_stream_learns(tmp_path, learner, flag):
    names, X, y = phishing(600)
    model, summary = kestrel_stream(tmp_path, flag, names, X, y)
    ours = learner().partial_fit(X, y)
    assert kestrel.with_feature_names(ours.to_bytes(), names) == model
    # The stopping tolerance (svm 1, rsvm 0.3) is kestrel stream's too: LIBLINEAR's 0.1
    # learns another model.
    assert kestrel.with_feature_names(learner(tol=0.1).partial_fit(X, y).to_bytes(), names) != model
    with pytest.raises(ValueError, match="epsilon"):
        learner(tol=-1.0).partial_fit(X, y)
    # rsvm races its widths (1/d, 1/(4d), 4/d for these 9 features), svm its costs; both
    # name the one kept.
    assert ours.chosen_ == summary["chosen"]
    if flag == "rsvm":
        assert ours.chosen_["gamma"] in (1 / 9, 1 / 36, 4 / 9)
        assert learner(gamma=0.5).partial_fit(X, y).chosen_ == {}
    else:
        assert ours.chosen_["c"] in (1.0, 0.1, 0.01)
        assert learner(C=1.0).partial_fit(X, y).chosen_ == {}


def test_the_regressor_s_defaults_are_kestrel_stream_s(tmp_path):
    # Every default alike, the cap on steps after an arrival (20 for slkl) among them: the
    # same model, and not the one a cap of 300 learns.
    names, X, _ = phishing(600)
    y = X[:, 0] * X[:, 1] + np.sin(3 * X[:, 2])
    model, summary = kestrel_stream(tmp_path, "slkl", names, X, y)
    ours = WindowSLKL().partial_fit(X, y)
    assert kestrel.with_feature_names(ours.to_bytes(), names) == model
    assert kestrel.with_feature_names(WindowSLKL(steps_per_sample=300).partial_fit(X, y).to_bytes(), names) != model
    # Without nu it races 0.01, 1 and 100, as the stream does, and names the one kept.
    assert ours.chosen_ == summary["chosen"] and ours.chosen_["nu"] in (0.01, 1.0, 100.0)
    assert WindowSLKL(nu=0.01).partial_fit(X, y).chosen_ == {}


def test_state_saved_and_restored_continues_exactly():
    _, X, y = phishing(500)
    whole = WindowSVM().partial_fit(X, y)
    first = WindowSVM().partial_fit(X[:300], y[:300])
    resumed = WindowSVM()
    resumed.load_state(first.save_state(), X.shape[1])
    resumed.partial_fit(X[300:], y[300:])
    assert resumed.save_state() == whole.save_state()
    assert resumed.predict(X) == whole.predict(X)


@pytest.mark.parametrize("make", [WindowSVM, StreamingRSVM, WindowSLKL, WindowNovelty])
def test_a_pickled_learner_goes_on_where_it_was(make):
    """pickle and copy.deepcopy take the learner's state, history, features and classes: the
    copy learns the rest of the stream as the learner it was taken from does."""
    _, X, y = phishing(500)
    labels = np.where(y > 0, "phishing", "legitimate")
    target = y if make is WindowSLKL else (y == 0).astype(float) if make is WindowNovelty else labels
    names = [f"f{j}" for j in range(X.shape[1])]
    rows = [dict(zip(names, row)) for row in X]
    whole, first = make(), make()
    for row, label in zip(rows, target):
        whole.learn_one(row, label)
    for row, label in zip(rows[:300], target[:300]):
        first.learn_one(row, label)
    for copy in (pickle.loads(pickle.dumps(first)), deepcopy(first)):
        assert copy.save_state() == first.save_state() and copy.feature_names_ == names
        for row, label in zip(rows[300:], target[300:]):
            copy.learn_one(row, label)
        assert copy.save_state() == whole.save_state() and copy.to_bytes() == whole.to_bytes()
        assert [copy.predict_one(row) for row in rows[:20]] == [whole.predict_one(row) for row in rows[:20]]
        assert copy.history_["loss"]["rows"][-1] == 500
        if make in (WindowSVM, StreamingRSVM):
            assert [copy.predict_proba_one(row) for row in rows[:20]] == [whole.predict_proba_one(row) for row in rows[:20]]
        np.testing.assert_array_equal(copy.history_["loss"]["mean"], whole.history_["loss"]["mean"])
    fresh = pickle.loads(pickle.dumps(make()))
    assert fresh.predict_one(rows[0]) == make().predict_one(rows[0])


def test_named_labels_dicts_and_errors():
    model = WindowSVM(window=32)
    for t in range(100):
        x = {"a": np.sin(t), "b": np.cos(t)}
        model.learn_one(x, "up" if x["a"] > 0 else "down")
    assert model.predict_one({"a": 0.9, "b": 0.1}) == "up"
    assert model.predict_one({"a": -0.9}) == "down"  # a feature left out counts as 0
    with pytest.raises(ValueError, match="was not in the first sample"):
        model.predict_one({"c": 1.0})
    with pytest.raises(ValueError, match="features"):
        model.predict(np.ones((2, 3)))
    for value, said in [
        (float("nan"), "feature 'a' is nan, not a finite number"),
        (None, r"feature 'a' is None, a missing value: leave the key out \(it counts as 0\)"),
        ("red", "feature 'a' is 'red', not a number: River's preprocessing.OneHotEncoder"),
    ]:
        with pytest.raises(ValueError, match=said):
            model.learn_one({"a": value, "b": 0.0}, "up")
        with pytest.raises(ValueError, match=said):
            model.predict_one({"a": value})
        with pytest.raises(ValueError, match=said):
            model.predict_proba_one({"a": value})
    # Dates and times, and a DataFrame's column of words, are named.
    pd = pytest.importorskip("pandas")
    with pytest.raises(ValueError, match=r"feature 'a' is Timestamp\(.*\), a date and time: leave the key out"):
        model.learn_one({"a": pd.Timestamp("2026-01-01"), "b": 0.0}, "up")
    frame = pd.DataFrame({"a": [1.0, 2.0], "b": ["idle", "heating"]})
    with pytest.raises(ValueError, match=r"^column 'b' of X is not numbers \(object, such as 'idle'\)"):
        WindowSVM().partial_fit(frame, ["up", "down"])
    with pytest.raises(ValueError):
        WindowSVM(loss="logistic").learn_one({"a": 1.0}, 1)
    # A label it cannot learn is named, with why: a 17th class, a missing one.
    numbers = WindowSVM()
    numbers.partial_fit(np.arange(16.0).reshape(-1, 1), np.arange(16.0))
    with pytest.raises(ValueError, match=r"row 0: label 16 cannot be learned: it would be a class past .*classes="):
        numbers.partial_fit(np.ones((1, 1)), [16.0])
    with pytest.raises(ValueError, match=r"row 0: the label is missing \(NaN\)"):
        numbers.partial_fit(np.ones((1, 1)), [float("nan")])
    # A label is a number or a name for all of a learner's samples, and None is none: each
    # refused, the learner as it was (a name once took a number's code, and predict_one
    # then failed to name it).
    before = model.predict(np.array([[0.9, 0.1], [-0.9, 0.0]]))
    for label, said in [(None, "a label is None"), (1, "label 1: the labels so far are class names")]:
        with pytest.raises(ValueError, match=said):
            model.learn_one({"a": 0.5, "b": 0.5}, label)
    assert model.classes_ == ["down", "up"] and model.predict(np.array([[0.9, 0.1], [-0.9, 0.0]])) == before
    with pytest.raises(ValueError, match="label 'up': the labels so far are numbers"):
        numbers.learn_one({0: 1.0}, "up")
    assert numbers.classes_ == [float(c) for c in range(16)] and numbers.predict_one({0: 3.0}) in range(16)
    few = WindowSVM(classes=2)
    few.partial_fit(np.array([[0.0], [1.0]]), ["a", "b"])
    with pytest.raises(ValueError, match="cannot be learned"):
        few.learn_one({0: 2.0}, "c")
    assert few.classes_ == ["a", "b"], "a class the learner refused is not kept"
    with pytest.raises(ValueError, match=r"the label is missing \(NaN\)"):
        WindowSLKL().learn_one({"a": 1.0}, None)
    # Before the first sample, what `kestrel stream` predicts at its first row: no class
    # (None; the CLI writes NaN) and the mean of no targets (0.0), River's answers too.
    assert WindowSVM().predict_one({"a": 1.0}) is None
    assert WindowSLKL().predict_one({"a": 1.0}) == 0.0
    info = kestrel.load(model.to_bytes()).info
    assert (info["kind"], info["feature_names"]) == ("linear-svm", ["a", "b"]), "the dicts' keys name the features"


def test_a_dataframe_s_columns_name_the_features_and_are_read_by_name():
    pd = pytest.importorskip("pandas")
    rng = np.random.default_rng(0)
    X = pd.DataFrame(rng.normal(size=(300, 3)), columns=["temperature", "humidity", "pressure"])
    y = (X["temperature"] > X["pressure"]).astype(int)
    svm = WindowSVM().partial_fit(X, y)
    assert svm.feature_names_ == ["temperature", "humidity", "pressure"]
    assert kestrel.load(svm.to_bytes()).info["feature_names"] == svm.feature_names_
    test = X.head(20)
    expected = svm.predict(test.to_numpy())
    assert svm.predict(test[["pressure", "temperature", "humidity"]]) == expected
    with pytest.raises(ValueError, match="X has no column 'pressure', a feature of the model"):
        svm.predict(test[["temperature", "humidity"]])
    with pytest.raises(ValueError, match="its column 'Pressure' differs from it in case alone"):
        svm.predict(test.rename(columns={"pressure": "Pressure"}))
    # A later batch in another column order is learned by name: the same model as in order.
    twin = WindowSVM().partial_fit(X.head(150), y.head(150))
    twin.partial_fit(X.tail(150)[["humidity", "pressure", "temperature"]], y.tail(150))
    assert twin.to_bytes() == svm.to_bytes()
    detector = WindowNovelty(warmup=64).partial_fit(X)
    np.testing.assert_array_equal(detector.score_samples(test[::-1].iloc[:, ::-1]), detector.score_samples(test[::-1]))


def test_river_s_one_hot_encoder_behind_given_features_learns_as_kestrel_stream_categorical(tmp_path):
    """River's OneHotEncoder emits a key per category only once a sample has it: without
    ``features`` a learner behind it stops at the first new key; with them it learns, from
    the same rows, the model ``kestrel stream --categorical`` learns."""
    rng = np.random.default_rng(3)
    modes = ["idle", "heat", "cool"]
    rows = []
    for _ in range(600):
        mode, t = modes[rng.integers(3)], float(rng.normal(21, 4))
        rows.append(({"t": t, "mode": mode}, int((t > 22) != (mode == "cool"))))
    data, out = tmp_path / "modes.csv", tmp_path / "modes.kestrel"
    data.write_text("t,mode,y\n" + "".join(f"{x['t']!r},{x['mode']},{y}\n" for x, y in rows))
    stream = [kestrel_cli(), "stream", "--learner", "rsvm", "--input", data, "--out", out, "--json"]
    run = subprocess.run([*stream, "--categorical", "mode=idle,heat,cool"], check=True, capture_output=True, text=True)
    summary = json.loads(run.stdout.splitlines()[-1])
    names = ["t", "mode=idle", "mode=heat", "mode=cool"]
    renamed = compose.Renamer({f"mode_{m}": f"mode={m}" for m in modes})
    encoded = lambda: compose.Select("t") + (  # noqa: E731
        compose.Select("mode") | preprocessing.OneHotEncoder() | renamed.clone()
    )
    with pytest.raises(ValueError, match="give every key to come, features"):
        pipeline = encoded() | StreamingRSVM()
        for x, y in rows:
            pipeline.learn_one(x, y)
    learner = StreamingRSVM(features=names)
    pipeline = encoded() | learner
    correct = 0
    for x, y in rows:
        correct += pipeline.predict_one(x) == y
        pipeline.learn_one(x, y)
    assert learner.to_bytes() == out.read_bytes()
    # The first row has no prediction in Python (None), the majority-so-far guess in the CLI.
    assert abs(correct - summary["accuracy"] * len(rows)) <= 1


def test_a_kestrel_stream_checkpoint_continues_in_python(tmp_path):
    names, X, y = phishing(600)
    rows = lambda X, y: "\n".join(",".join(map(repr, [*r, label])) for r, label in zip(X.tolist(), y.tolist()))
    header = ",".join(names + ["y"]) + "\n"
    (tmp_path / "first.csv").write_text(header + rows(X[:350], y[:350]) + "\n")
    (tmp_path / "all.csv").write_text(header + rows(X, y) + "\n")
    checkpoint, whole = tmp_path / "run.ckpt", tmp_path / "whole.kestrel"
    cli = kestrel_cli()
    first = ["stream", "--learner", "svm", "--input", tmp_path / "first.csv", "--checkpoint", checkpoint]
    subprocess.run([cli, *first, "--checkpoint-every", "0"], check=True, capture_output=True)
    subprocess.run([cli, "stream", "--learner", "svm", "--input", tmp_path / "all.csv", "--out", whole], check=True,
                   capture_output=True)
    model = WindowSVM()
    model.load_checkpoint(checkpoint)
    model.partial_fit(X[350:], y[350:])
    assert kestrel.with_feature_names(model.to_bytes(), names) == whole.read_bytes()
    with pytest.raises(ValueError, match="rsvm"):
        StreamingRSVM().load_checkpoint(checkpoint)


def sensor_stream(n, seed):
    """Readings in raw units, one in twenty after the first 300 with one channel off."""
    rng = np.random.default_rng(seed)
    X = np.column_stack([1e5 + 300 * rng.normal(size=n), 0.01 * rng.normal(size=n), 20 + rng.normal(size=n)])
    fault = np.zeros(n, dtype=bool)
    fault[300::20] = True
    X[fault, 2] += 6.0
    return X, fault


def loaded_machine(n, seed):
    """A machine under a slowly changing load: vibration, temperature, three phase currents
    and speed follow it; in 1 % of the rows after the first 1000 the phases are out of
    balance — each channel within its normal range, only their correlation broken."""
    rng = np.random.default_rng(seed)
    t = np.arange(n)
    load = 0.5 + 0.3 * np.sin(2 * np.pi * t / 5000) + 0.1 * np.sin(2 * np.pi * t / 377)
    X = np.column_stack([2.0 * load + 0.1 * rng.normal(size=n), 40 + 25 * load + 0.5 * rng.normal(size=n),
                         *(10 * load + 0.2 * rng.normal(size=(3, n))), 1450 - 30 * load + 2 * rng.normal(size=n)])
    fault = np.zeros(n, dtype=bool)
    fault[rng.choice(np.arange(1000, n), size=n // 100, replace=False)] = True
    X[fault, 2:5] = X[fault, 2:5][:, [1, 2, 0]] * np.array([1.3, 0.7, 1.0])
    return X, fault


def test_the_default_detector_finds_broken_correlations_under_a_changing_load():
    X, fault = loaded_machine(20_000, 1)

    def auc(detector):
        scores = []
        for row in X:  # River's loop: score, then learn
            x = dict(zip("abcdef", row))
            scores.append(detector.score_one(x))
            detector.learn_one(x)
        return roc_auc_score(fault[1000:], np.array(scores)[1000:])

    # The reference sees the whole stream first: standardised by all of it, fitted on a
    # quarter of its rows.
    S = StandardScaler().fit_transform(X)
    sample = np.random.default_rng(0).choice(len(X), size=5000, replace=False)
    reference = roc_auc_score(fault[1000:], -OneClassSVM().fit(S[sample]).decision_function(S)[1000:])
    ours, long_window = auc(WindowNovelty()), auc(WindowNovelty(window=256, centers=32))
    assert ours > reference - 0.02, (ours, reference)
    # Against the load's whole cycle the broken balance hides: what the default window is for.
    assert ours > long_window + 0.05, (ours, long_window)


def test_novelty_through_river_s_interface_scores_as_kestrel_stream(tmp_path):
    X, fault = sensor_stream(1500, 5)
    data, rows = tmp_path / "sensor.csv", tmp_path / "rows.txt"
    lines = ["a,b,c,fault"] + [",".join(map(repr, [*r, int(f)])) for r, f in zip(X.tolist(), fault.tolist())]
    data.write_text("\n".join(lines) + "\n")
    out = tmp_path / "stream.kestrel"
    subprocess.run([kestrel_cli(), "stream", "--learner", "novelty", "--input", data, "--output", rows, "--out", out],
                   check=True, capture_output=True)
    cli = np.array([float(line.split(",")[0]) for line in rows.read_text().split()])
    detector = WindowNovelty()
    scores = []
    for row in X:  # River's loop: score, then learn
        x = dict(zip("abc", row))
        scores.append(detector.score_one(x))
        detector.learn_one(x)
    scored = ~np.isnan(cli)
    np.testing.assert_array_equal(np.array(scores)[scored], cli[scored])
    assert (np.array(scores)[~scored] == 0.0).all() and scored.sum() == 1500 - 256
    # Learned from dicts, the model carries their keys as the CSV header's names.
    assert detector.to_bytes() == out.read_bytes()
    auc = roc_auc_score(fault[300:], np.array(scores)[300:])
    assert auc > 0.95, auc
    batch = WindowNovelty().partial_fit(X)
    assert kestrel.with_feature_names(batch.to_bytes(), ["a", "b", "c"]) == out.read_bytes()
    assert np.isnan(WindowNovelty().partial_fit(X[:10]).score_samples(X[:2])).all()
    # One row in twenty is a fault here, so the flags need a quantile below 0.95 (the class
    # doc): at the default 0.99 the threshold lies among the faults' scores, which a far
    # reading's score equals to within rounding (the kernel values vanish for both).
    flagging = WindowNovelty(quantile=0.9)
    for row in X:
        flagging.learn_one(dict(zip("abc", row)))
    assert flagging.predict_one(dict(zip("abc", [1e5, 0.0, 30.0])))
    assert not flagging.predict_one(dict(zip("abc", [1e5, 0.0, 20.0])))
    with pytest.raises(ValueError, match="learned nothing"):
        WindowNovelty().score_samples(X)
    # Too little learned for a model: the error says what it takes.
    short = WindowSLKL()
    short.learn_one({"a": 1.0}, 2.0)
    with pytest.raises(ValueError, match=r"no model yet: slkl learns its model once it has as many samples as candidates \(32"):
        short.to_bytes()
