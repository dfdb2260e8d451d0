//! A stream's history (`kestrel_stream::history`) as Python sees it: a dict of series,
//! each a dict of numpy arrays with one entry per bucket.

use kestrel_stream::history::{Bucket, History, Series};
use kestrel_stream::online::OnlineLearner;
use numpy::IntoPyArray;
use pyo3::prelude::*;
use pyo3::types::PyDict;

/// The task of `learner`: `"classifier"`, `"regressor"` or `"detector"`.
pub fn task_of(learner: &dyn OnlineLearner) -> &'static str {
    match (learner.is_detector(), learner.is_classifier()) {
        (true, _) => "detector",
        (false, true) => "classifier",
        (false, false) => "regressor",
    }
}

/// The task of a `kestrel stream --learner` name.
pub fn task_of_flag(learner: &str) -> &'static str {
    match learner {
        "novelty" => "detector",
        "slkl" => "regressor",
        _ => "classifier",
    }
}

/// `{"task": task, "loss": series, "baseline": …, "seconds", "window", "centres", "steps", and for
/// a detector "score", "threshold", "flagged"; "drift": the rows where the loss jumps}`,
/// each series `series_dict`'s.
pub fn history_dict<'py>(py: Python<'py>, history: &History, task: &'static str) -> PyResult<Bound<'py, PyDict>> {
    let dict = PyDict::new(py);
    dict.set_item("task", task)?;
    let mut series = vec![
        ("loss", &history.loss),
        ("baseline", &history.baseline),
        ("seconds", &history.seconds),
        ("window", &history.window),
        ("centres", &history.centres),
        ("steps", &history.steps),
    ];
    if task == "detector" {
        series.extend([("score", &history.score), ("threshold", &history.threshold), ("flagged", &history.flagged)]);
    }
    for (name, series) in series {
        dict.set_item(name, series_dict(py, series)?)?;
    }
    let jumps: Vec<f64> = history.loss.jumps().into_iter().map(|i| history.loss.span(i).start as f64).collect();
    dict.set_item("drift", jumps.into_pyarray(py))?;
    Ok(dict)
}

/// `{"rows": the last row of each bucket (counted from 1), "count", "min", "mean", "max"}`,
/// NaN where a bucket counted no value, and `"width"`, the rows a bucket.
fn series_dict<'py>(py: Python<'py>, series: &Series) -> PyResult<Bound<'py, PyDict>> {
    let dict = PyDict::new(py);
    let buckets = series.buckets();
    let rows: Vec<f64> = (0..buckets.len()).map(|i| series.span(i).end as f64).collect();
    let column = |value: fn(&Bucket) -> f64| -> Vec<f64> {
        buckets.iter().map(|b| if b.count > 0 { value(b) } else { f64::NAN }).collect()
    };
    dict.set_item("rows", rows.into_pyarray(py))?;
    dict.set_item("count", buckets.iter().map(|b| b.count as f64).collect::<Vec<_>>().into_pyarray(py))?;
    dict.set_item("min", column(|b| b.min).into_pyarray(py))?;
    dict.set_item("mean", column(|b| b.mean().unwrap_or(f64::NAN)).into_pyarray(py))?;
    dict.set_item("max", column(|b| b.max).into_pyarray(py))?;
    dict.set_item("width", series.width())?;
    Ok(dict)
}
