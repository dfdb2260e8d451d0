//! `kestrel._kestrel`: the Rust side of the Python package — three functions over
//! kestrel-stream's library, the same code the CLI runs, with no learning in Python.
//!
//! - [`fit`]: rows of a 2-D float64 array and their labels or targets into a model file's
//!   bytes, by `kestrel train`'s policy ([`kestrel_stream::batch::fit`]), in `f64` or
//!   `f32`; returns the bytes and the training summary (what `auto` chose under `chosen`).
//! - [`predict`]: a model's bytes and rows into one prediction per row — what `kestrel
//!   predict` writes (class labels, or regression values); `f32` models compute in `f32`.
//! - [`describe`]: what `kestrel inspect` shows.
//!
//! The interpreter lock is released while fitting and predicting. Every error is a
//! `ValueError` carrying the core's or the library's message; nothing panics on input.

use kestrel_core::Real;
use kestrel_core::dcd::Loss;
use kestrel_stream::batch::fit::{
    self as policy, Field, FitSettings, Fitted, KernelChoice, KernelSettings, Learner, Select, Setting, Summary,
    SvmSettings,
};
use kestrel_stream::dataset::Dataset;
use kestrel_stream::model;
use kestrel_stream::source::Record;
use numpy::ndarray::ArrayView2;
use numpy::{IntoPyArray, PyArray1, PyReadonlyArray1, PyReadonlyArray2};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList};

/// A `ValueError` with `error`'s message.
fn value_error(error: impl std::fmt::Display) -> PyErr {
    PyValueError::new_err(error.to_string())
}

/// The learner named `name`.
fn learner(name: &str) -> PyResult<Learner> {
    Ok(match name {
        "slkl" => Learner::Slkl,
        "svm" => Learner::Svm,
        "rsvm" => Learner::Rsvm,
        "krr" => Learner::Krr,
        "lssvm" => Learner::Lssvm,
        other => return Err(value_error(format!("unknown learner `{other}`"))),
    })
}

/// A number, or `None` for the learner's default (`auto` where it has one).
fn setting(value: Option<f64>) -> Option<Setting> {
    value.map(Setting::Value)
}

/// The fit settings of the keyword arguments of [`fit`].
#[allow(clippy::too_many_arguments)]
fn settings(
    learner_name: &str,
    kernel: &str,
    gamma: Option<f64>,
    degree: u32,
    coef0: f64,
    c: Option<f64>,
    loss: &str,
    bias: f64,
    nu: Option<f64>,
    centers: Option<usize>,
    tol: Option<f64>,
    select: &str,
    delta: Option<f64>,
    alpha: Option<f64>,
    seed: u64,
) -> PyResult<FitSettings> {
    let kind = match kernel {
        "rbf" => KernelChoice::Rbf,
        "poly" => KernelChoice::Poly,
        "linear" => KernelChoice::Linear,
        other => return Err(value_error(format!("unknown kernel `{other}` (rbf, poly, linear)"))),
    };
    let loss = match loss {
        "hinge" => Loss::Hinge,
        "squared_hinge" => Loss::SquaredHinge,
        other => return Err(value_error(format!("unknown loss `{other}` (hinge, squared_hinge)"))),
    };
    let select = match select {
        "irsvm" => Select::Irsvm,
        "random" => Select::Random,
        other => return Err(value_error(format!("unknown centre selection `{other}` (irsvm, random)"))),
    };
    let learner = learner(learner_name)?;
    Ok(FitSettings {
        kernel: KernelSettings { kind, gamma: setting(gamma), degree, coef0 },
        svm: SvmSettings { c: setting(c), loss, bias },
        nu,
        centers,
        eps: tol,
        select,
        delta: setting(delta),
        lambda: setting(alpha),
        seed,
        ..FitSettings::new(learner)
    })
}

/// The rows of `x` (every entry, zeros included, so the data set has `x`'s width) with
/// `labels`.
fn dataset<T: Real>(x: ArrayView2<'_, f64>, labels: &[f64]) -> Result<Dataset<T>, String> {
    let mut data = Dataset::new();
    let mut record = Record { indices: (0..x.ncols()).map(|j| j as u32).collect(), ..Record::default() };
    for (i, (row, &label)) in x.rows().into_iter().zip(labels).enumerate() {
        record.label = label;
        record.values.clear();
        record.values.extend(row.iter().copied());
        data.push(&record).map_err(|e| format!("row {i}: {e}"))?;
    }
    Ok(data)
}

/// Fits on `x` and `labels` in scalar `T`: the model's bytes and its summary.
fn fit_in<T: Real>(settings: &FitSettings, x: ArrayView2<'_, f64>, labels: &[f64]) -> Result<Fitted, String> {
    if x.ncols() > u32::MAX as usize {
        return Err(format!("{} features: too many", x.ncols()));
    }
    let data = dataset::<T>(x, labels)?;
    policy::fit(settings, &data).map_err(|e| e.to_string())
}

/// A summary field as a Python object.
fn field_object<'py>(py: Python<'py>, field: &Field) -> PyResult<Bound<'py, PyAny>> {
    Ok(match field {
        Field::Count(n) => n.into_pyobject(py)?.into_any(),
        Field::Steps(n) => n.into_pyobject(py)?.into_any(),
        Field::Number(x) => x.into_pyobject(py)?.into_any(),
        Field::Flag(b) => b.into_pyobject(py)?.to_owned().into_any(),
        Field::Text(s) => s.into_pyobject(py)?.into_any(),
        Field::Rows(rows) => {
            let items = rows.iter().map(|row| summary_dict(py, row)).collect::<PyResult<Vec<_>>>()?;
            PyList::new(py, items)?.into_any()
        }
        Field::Fields(fields) => summary_dict(py, fields)?.into_any(),
    })
}

/// A summary as a Python dict.
fn summary_dict<'py>(py: Python<'py>, summary: &Summary) -> PyResult<Bound<'py, PyDict>> {
    let dict = PyDict::new(py);
    for (name, field) in summary {
        dict.set_item(name, field_object(py, field)?)?;
    }
    Ok(dict)
}

/// Fits `learner` (`slkl`, `svm`, `rsvm`, `krr`, `lssvm`) on the rows of `x` with labels
/// or targets `y`, by `kestrel train`'s policy; `None` is the learner's default, which is
/// `auto` for `gamma`, rsvm's `c` and `delta`, and the ridge `alpha` (the linear SVM's `c`
/// is 1). Returns the model file's bytes and the training summary.
#[pyfunction]
#[pyo3(signature = (
    learner, x, y, *, scalar = "f64", kernel = "rbf", gamma = None, degree = 3, coef0 = 0.0,
    c = None, loss = "squared_hinge", bias = 1.0, nu = None, centers = None, tol = None,
    select = "irsvm", delta = None, alpha = None, seed = 1
))]
#[allow(clippy::too_many_arguments)]
fn fit<'py>(
    py: Python<'py>,
    learner: &str,
    x: PyReadonlyArray2<'py, f64>,
    y: PyReadonlyArray1<'py, f64>,
    scalar: &str,
    kernel: &str,
    gamma: Option<f64>,
    degree: u32,
    coef0: f64,
    c: Option<f64>,
    loss: &str,
    bias: f64,
    nu: Option<f64>,
    centers: Option<usize>,
    tol: Option<f64>,
    select: &str,
    delta: Option<f64>,
    alpha: Option<f64>,
    seed: u64,
) -> PyResult<(Bound<'py, PyBytes>, Bound<'py, PyDict>)> {
    let settings =
        settings(learner, kernel, gamma, degree, coef0, c, loss, bias, nu, centers, tol, select, delta, alpha, seed)?;
    let (x, y) = (x.as_array(), y.as_array());
    if x.nrows() != y.len() {
        return Err(value_error(format!("{} rows of x but {} labels", x.nrows(), y.len())));
    }
    let labels = y.to_vec();
    let f32_scalar = match scalar {
        "f64" => false,
        "f32" => true,
        other => return Err(value_error(format!("unknown scalar `{other}` (f64, f32)"))),
    };
    let fitted = py
        .detach(|| if f32_scalar { fit_in::<f32>(&settings, x, &labels) } else { fit_in::<f64>(&settings, x, &labels) })
        .map_err(value_error)?;
    Ok((PyBytes::new(py, &fitted.bytes), summary_dict(py, &fitted.summary)?))
}

/// One prediction per row of `x` by the model in `model` (a model file's bytes): what
/// `kestrel predict` writes — the label for a classifier (for a model of named classes, the
/// class's index), the value for a regressor.
#[pyfunction]
fn predict<'py>(py: Python<'py>, model: &[u8], x: PyReadonlyArray2<'py, f64>) -> PyResult<Bound<'py, PyArray1<f64>>> {
    let x = x.as_array();
    let predictions = py
        .detach(|| -> Result<Vec<f64>, String> {
            let mut loaded = model::load(model).map_err(|e| e.to_string())?;
            let dim = loaded.info().dim;
            if x.ncols() != dim {
                return Err(format!("x has {} features, the model {dim}", x.ncols()));
            }
            let mut record = Record { indices: (0..dim).map(|j| j as u32).collect(), ..Record::default() };
            x.rows()
                .into_iter()
                .enumerate()
                .map(|(i, row)| {
                    record.values.clear();
                    record.values.extend(row.iter().copied());
                    loaded.predict(&record).map_err(|e| format!("row {i}: {e}"))
                })
                .collect()
        })
        .map_err(value_error)?;
    Ok(predictions.into_pyarray(py))
}

/// What `kestrel inspect` shows of the model in `model`: kind, scalar, dim, centers, bytes,
/// kernel, task, scaled, class_names.
#[pyfunction]
fn describe<'py>(py: Python<'py>, model: &[u8]) -> PyResult<Bound<'py, PyDict>> {
    let info = model::load(model).map_err(value_error)?.info();
    let dict = PyDict::new(py);
    dict.set_item("kind", info.kind)?;
    dict.set_item("scalar", info.scalar)?;
    dict.set_item("dim", info.dim)?;
    dict.set_item("centers", info.centers)?;
    dict.set_item("bytes", info.bytes)?;
    dict.set_item("kernel", info.kernel)?;
    dict.set_item("task", info.task)?;
    dict.set_item("scaled", info.scaled)?;
    dict.set_item("class_names", info.class_names)?;
    Ok(dict)
}

/// The model's bytes with the class names `names` (name `k` that of label `k`).
#[pyfunction]
fn with_class_names<'py>(py: Python<'py>, model: &[u8], names: Vec<String>) -> PyResult<Bound<'py, PyBytes>> {
    let names = kestrel_stream::class_names::ClassNames::from_names(names);
    let bytes = model::with_class_names(model.to_vec(), &names).map_err(value_error)?;
    Ok(PyBytes::new(py, &bytes))
}

/// The extension module.
#[pymodule]
fn _kestrel(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(fit, m)?)?;
    m.add_function(wrap_pyfunction!(predict, m)?)?;
    m.add_function(wrap_pyfunction!(describe, m)?)?;
    m.add_function(wrap_pyfunction!(with_class_names, m)?)?;
    Ok(())
}
