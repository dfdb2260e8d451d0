"""The online learners' history and kestrel.plot: the series as `kestrel stream --report`
keeps them (bounded, the same rows), drawn on matplotlib Axes with labelled axes."""

import subprocess

import matplotlib
import numpy as np
import pytest

matplotlib.use("Agg")

from kestrel import _kestrel, plot  # noqa: E402
from kestrel.online import WindowNovelty, WindowSLKL, WindowSVM  # noqa: E402


def labelled(rows, seed=0):
    X = np.random.default_rng(seed).normal(size=(rows, 2))
    return X, (X[:, 0] > X[:, 1]).astype(float)


def test_the_history_is_bounded_and_counts_every_row():
    X, y = labelled(5000)
    svm = WindowSVM().partial_fit(X, y)
    history = svm.history_
    assert history["task"] == "classifier"
    loss = history["loss"]
    assert loss["width"] == 32 and len(loss["rows"]) == 157 and loss["rows"][-1] == 5000
    assert loss["count"].sum() == 5000
    assert np.all((loss["min"] >= 0) & (loss["max"] <= 1))
    assert np.nanmean(loss["mean"][-20:]) < 0.1 < np.nanmean(history["baseline"]["mean"][-20:])
    assert np.nanmax(history["window"]["mean"]) == 256
    bigger = WindowSVM().partial_fit(*labelled(40000))
    assert len(bigger.history_["loss"]["rows"]) <= 256


def test_the_history_is_the_one_kestrel_stream_keeps(tmp_path):
    from test_estimators import kestrel_cli

    X, y = labelled(700, seed=3)
    data = tmp_path / "rows.csv"
    data.write_text("a,b,y\n" + "\n".join(f"{a!r},{b!r},{int(t)}" for (a, b), t in zip(X.tolist(), y.tolist())) + "\n")
    report, checkpoint = tmp_path / "run.html", tmp_path / "run.ckpt"
    subprocess.run([kestrel_cli(), "stream", "--learner", "svm", "--input", data, "--report", report,
                    "--checkpoint", checkpoint], check=True, capture_output=True)
    ours = WindowSVM().partial_fit(X, y).history_
    theirs = _kestrel.read_checkpoint(checkpoint.read_bytes())["history"]
    assert ours["task"] == theirs["task"] == "classifier"
    for name in ["loss", "baseline", "window", "centres", "steps"]:
        for column in ["rows", "count", "min", "mean", "max"]:
            np.testing.assert_array_equal(ours[name][column], theirs[name][column], err_msg=f"{name} {column}")
    assert len(ours["loss"]["rows"]) == 175 and "<svg" in report.read_text()


@pytest.mark.parametrize("draw, ylabel", [
    (plot.error, "error rate (%)"),
    (plot.rate, "rows per second (rows/s)"),
    (plot.size, "held by the learner (samples, centres)"),
])
def test_plots_of_a_classifier(draw, ylabel):
    svm = WindowSVM().partial_fit(*labelled(3000))
    ax = draw(svm)
    assert (ax.get_xlabel(), ax.get_ylabel()) == ("row", ylabel)
    assert len(ax.get_lines()[0].get_xdata()) == len(svm.history_["loss"]["rows"])


def test_plots_of_a_regressor_and_a_detector_on_given_axes():
    import matplotlib.pyplot as plt

    fig, (top, bottom) = plt.subplots(2)
    X = np.linspace(-2, 2, 800)[:, None]
    assert plot.error(WindowSLKL().partial_fit(X, np.sin(X[:, 0])), ax=top) is top
    assert top.get_ylabel() == "squared error (target units²)"
    readings = np.random.default_rng(2).normal(size=(1000, 3))
    readings[700:] += 4.0
    detector = WindowNovelty(warmup=64).partial_fit(readings)
    plot.score(detector, ax=bottom)
    labels = [text.get_text() for text in bottom.get_legend().get_texts()]
    assert sorted(labels) == ["buckets with flagged rows", "score, mean", "score, min to max", "threshold"]
    flagged = detector.history_["flagged"]
    assert flagged["mean"][flagged["rows"] > 700][:2].min() > 0.5, "the shifted readings flagged at once"
    with pytest.raises(ValueError, match="novelty detector"):
        plot.score(WindowSVM().partial_fit(*labelled(100)))


def test_no_history_before_learning():
    with pytest.raises(AttributeError, match="learned nothing"):
        WindowSVM().history_
