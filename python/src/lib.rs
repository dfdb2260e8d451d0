//! `kestrel._kestrel`: the Rust side of the Python package — functions over
//! kestrel-stream's library, the same code the CLI runs, with no learning in Python.
//!
//! - [`fit`]: rows of a 2-D float64 array and their labels or targets into a model file's
//!   bytes, by `kestrel train`'s policy ([`kestrel_stream::batch::fit`]) and the settings
//!   of a [`FitConfig`], in `f64` or `f32`; returns the bytes and the training summary
//!   (what `auto` chose under `chosen`).
//! - [`predict`]: a model's bytes and rows into one prediction per row — what `kestrel
//!   predict` writes (class labels, or regression values); `f32` models compute in `f32`.
//! - [`describe`]: what `kestrel inspect` shows.
//! - [`npkl::npkl_fit`] and [`npkl::LearnedKernel`]: kernel learning from pairs
//!   (`kestrel npkl`) and the learned features of new points.
//! - [`mrrsvm`]: the MapReduce RSVM's split, Map and Reduce steps, for `kestrel.spark`.
//! - [`projection`]: kernel PCA, KSIR, KFD and KCCA (`kestrel transform`) into model
//!   files' bytes, and the projection of rows through them.
//! - [`spectral`]: spectral clustering (`kestrel cluster`), the Laplacian eigenmap and the
//!   locality preserving projection (`kestrel transform --method eigenmap|lpp`).
//!
//! The interpreter lock is released while fitting and predicting. Every error is a
//! `ValueError` carrying the core's or the library's message; nothing panics on input.

mod history;
mod mrrsvm;
mod npkl;
mod projection;
mod spectral;

use std::time::Instant;

use kestrel_core::Real;
use kestrel_core::dcd::Loss;
use kestrel_stream::batch::class_weights::ClassWeights;
use kestrel_stream::batch::fit::{
    self as policy, Field, FitSettings, Fitted, KernelChoice, KernelSettings, Learner, Select, Setting, Summary,
    SvmSettings,
};
use kestrel_stream::batch::krr;
use kestrel_stream::batch::relevance::{self, Relevance};
use kestrel_stream::batch::scaling::{self, Verdict};
use kestrel_stream::checkpoint::Checkpoint;
use kestrel_stream::dataset::Dataset;
use kestrel_stream::history::History;
use kestrel_stream::model;
use kestrel_stream::online::build::{DEFAULT_QUANTILE, DEFAULT_WARMUP, StreamLearner, StreamSettings, build};
use kestrel_stream::online::{ClassProbabilities, Learn, OnlineLearner};
use kestrel_stream::source::Record;
use numpy::ndarray::ArrayView2;
use numpy::{IntoPyArray, PyArray1, PyArray2, PyReadonlyArray1, PyReadonlyArray2};
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
        "mrrsvm" => Learner::Mrrsvm,
        "novelty" => Learner::Novelty,
        "ssvr" => Learner::Ssvr,
        "kpls" => Learner::Kpls,
        other => return Err(value_error(format!("unknown learner `{other}`"))),
    })
}

/// A number, or `None` for the learner's default (`auto` where it has one).
fn setting(value: Option<f64>) -> Option<Setting> {
    value.map(Setting::Value)
}

/// The kernel named `kernel` with its parameters (`None` width: the learner's default).
fn kernel_settings(kernel: &str, gamma: Option<f64>, degree: u32, coef0: f64) -> PyResult<KernelSettings> {
    let kind = match kernel {
        "rbf" => KernelChoice::Rbf,
        "poly" => KernelChoice::Poly,
        "linear" => KernelChoice::Linear,
        other => return Err(value_error(format!("unknown kernel `{other}` (rbf, poly, linear)"))),
    };
    Ok(KernelSettings { kind, gamma: setting(gamma), degree, coef0 })
}

/// The linear SVM's settings (`None` cost: the learner's default).
fn svm_settings(c: Option<f64>, loss: &str, bias: f64) -> PyResult<SvmSettings> {
    let loss = match loss {
        "hinge" => Loss::Hinge,
        "squared_hinge" => Loss::SquaredHinge,
        other => return Err(value_error(format!("unknown loss `{other}` (hinge, squared_hinge)"))),
    };
    Ok(SvmSettings { c: setting(c), loss, bias })
}

/// `true` for `"f32"`, `false` for `"f64"`.
fn is_f32(scalar: &str) -> PyResult<bool> {
    match scalar {
        "f64" => Ok(false),
        "f32" => Ok(true),
        other => Err(value_error(format!("unknown scalar `{other}` (f64, f32)"))),
    }
}

/// The rows of `x` and their labels, as many of each.
fn rows_with_labels<'a>(x: &'a RowsArg<'_>, y: &PyReadonlyArray1<'_, f64>) -> PyResult<(Rows<'a>, Vec<f64>)> {
    let (rows, labels) = (x.rows()?, y.as_array().to_vec());
    if rows.len() != labels.len() {
        return Err(value_error(format!("{} rows of x but {} labels", rows.len(), labels.len())));
    }
    Ok((rows, labels))
}

/// What [`fit`] and the MapReduce RSVM's steps learn with: a learner's settings and the
/// scalar of its model, from keyword arguments; `None` is the learner's default, which is
/// `auto` for `gamma`, rsvm's `c` and `delta`, and the ridge `alpha` (the linear SVM's `c`
/// is 1). `class_weights` are `(label, weight)` pairs (svm, rsvm, lssvm); `partitions`
/// are mrrsvm's; `quantile` is the novelty detector's threshold; `solver` is krr's (`auto`, `exact`,
/// `cg`); `components` kpls's; `scale` standardises the features first (`True`: `kestrel
/// train --scale`; `"auto"`: when that lowers the leave-one-out error, `--scale auto`),
/// `relevance` also weighs them (`--relevance`); `probabilities` gives a classifier class
/// probabilities (`--probabilities`).
#[pyclass(module = "kestrel._kestrel", frozen)]
struct FitConfig {
    settings: FitSettings,
    f32_scalar: bool,
    /// When to standardise the features first (`kestrel train --scale`).
    scale: Scaling,
    /// Standardise and weigh the features by relevance first (`kestrel train --relevance`).
    relevance: bool,
}

#[pymethods]
impl FitConfig {
    #[new]
    #[pyo3(signature = (
        learner, *, scalar = "f64", kernel = "rbf", gamma = None, degree = 3, coef0 = 0.0,
        c = None, loss = "squared_hinge", bias = 1.0, nu = None, centers = None, tol = None,
        select = "irsvm", delta = None, alpha = None, class_weights = None, partitions = None,
        quantile = DEFAULT_QUANTILE, solver = "auto", components = None, epsilon = None, scale = ScaleArg::Flag(false),
        relevance = false, probabilities = false, seed = 1
    ))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        learner: &str,
        scalar: &str,
        kernel: &str,
        gamma: Option<f64>,
        degree: u32,
        coef0: f64,
        c: Option<f64>,
        loss: &str,
        bias: f64,
        nu: Option<NuArg>,
        centers: Option<usize>,
        tol: Option<f64>,
        select: &str,
        delta: Option<f64>,
        alpha: Option<f64>,
        class_weights: Option<Vec<(f64, f64)>>,
        partitions: Option<usize>,
        quantile: f64,
        solver: &str,
        components: Option<usize>,
        epsilon: Option<f64>,
        scale: ScaleArg,
        relevance: bool,
        probabilities: bool,
        seed: u64,
    ) -> PyResult<Self> {
        let scale = scale.scaling()?;
        let select = match select {
            "irsvm" => Select::Irsvm,
            "random" => Select::Random,
            other => return Err(value_error(format!("unknown centre selection `{other}` (irsvm, random)"))),
        };
        let krr_solver = match solver {
            "auto" => krr::Solver::Auto,
            "exact" => krr::Solver::Exact,
            "cg" => krr::Solver::Cg,
            other => return Err(value_error(format!("unknown solver `{other}` (auto, exact, cg)"))),
        };
        let settings = FitSettings {
            kernel: kernel_settings(kernel, gamma, degree, coef0)?,
            svm: svm_settings(c, loss, bias)?,
            class_weights: class_weights.map_or(ClassWeights::Unit, ClassWeights::Given),
            nu: nu.map(NuArg::setting).transpose()?,
            centers,
            eps: tol,
            select,
            delta: setting(delta),
            lambda: setting(alpha),
            partitions,
            quantile,
            krr_solver,
            components,
            epsilon,
            probabilities,
            seed,
            ..FitSettings::new(self::learner(learner)?)
        };
        policy::check_ranges(&settings).map_err(value_error)?;
        if relevance {
            relevance::check_applies(settings.learner, settings.kernel.kind).map_err(value_error)?;
        }
        Ok(FitConfig { settings, f32_scalar: is_f32(scalar)?, scale, relevance })
    }
}

/// When to standardise the features: a flag, or `"auto"`.
#[derive(FromPyObject)]
enum ScaleArg {
    Flag(bool),
    Word(String),
}

/// When [`fit`] standardises the features (`kestrel train --scale on|off|auto`).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Scaling {
    Off,
    On,
    Auto,
}

impl ScaleArg {
    fn scaling(self) -> PyResult<Scaling> {
        match self {
            ScaleArg::Flag(true) => Ok(Scaling::On),
            ScaleArg::Flag(false) => Ok(Scaling::Off),
            ScaleArg::Word(word) if word == "auto" => Ok(Scaling::Auto),
            ScaleArg::Word(word) => Err(value_error(format!("scale must be True, False or \"auto\", got {word:?}"))),
        }
    }
}

/// SLKL's `nu`: a number, or `"auto"` (cross-validation).
#[derive(FromPyObject)]
enum NuArg {
    Value(f64),
    Text(String),
}

impl NuArg {
    fn setting(self) -> PyResult<Setting> {
        match self {
            NuArg::Value(nu) => Ok(Setting::Value(nu)),
            NuArg::Text(text) if text == "auto" => Ok(Setting::Auto),
            NuArg::Text(other) => Err(value_error(format!("nu must be a number or \"auto\", got `{other}`"))),
        }
    }
}

/// The rows the Python side passes: a C-ordered float64 matrix, or a CSR matrix as
/// `(indptr, indices, data, n_features)` (int64, int64, float64; indices sorted per row).
#[derive(FromPyObject)]
enum RowsArg<'py> {
    Dense(PyReadonlyArray2<'py, f64>),
    Csr((PyReadonlyArray1<'py, i64>, PyReadonlyArray1<'py, i64>, PyReadonlyArray1<'py, f64>, usize)),
}

/// Borrowed rows, dense or CSR, read one [`Record`] at a time.
enum Rows<'a> {
    Dense(ArrayView2<'a, f64>),
    Csr { indptr: &'a [i64], indices: &'a [i64], values: &'a [f64], dim: usize },
}

impl<'py> RowsArg<'py> {
    /// The rows, checked: a CSR's arrays agree in length and its offsets never decrease.
    fn rows(&self) -> PyResult<Rows<'_>> {
        match self {
            RowsArg::Dense(x) => Ok(Rows::Dense(x.as_array())),
            RowsArg::Csr((indptr, indices, values, dim)) => {
                let contiguous = |_| value_error("CSR arrays must be contiguous");
                let (indptr, indices) =
                    (indptr.as_slice().map_err(contiguous)?, indices.as_slice().map_err(contiguous)?);
                let values = values.as_slice().map_err(contiguous)?;
                let nnz = indptr.last().copied().unwrap_or(0);
                let ordered = indptr.first() == Some(&0) && indptr.windows(2).all(|w| w[0] <= w[1]);
                if !ordered || usize::try_from(nnz).ok() != Some(indices.len()) || indices.len() != values.len() {
                    return Err(value_error("malformed CSR matrix (indptr, indices and data disagree)"));
                }
                if *dim > u32::MAX as usize {
                    return Err(value_error(format!("{dim} features: too many")));
                }
                Ok(Rows::Csr { indptr, indices, values, dim: *dim })
            }
        }
    }
}

impl Rows<'_> {
    fn len(&self) -> usize {
        match self {
            Rows::Dense(x) => x.nrows(),
            Rows::Csr { indptr, .. } => indptr.len().saturating_sub(1),
        }
    }

    fn dim(&self) -> usize {
        match self {
            Rows::Dense(x) => x.ncols(),
            Rows::Csr { dim, .. } => *dim,
        }
    }

    /// Writes row `i`'s features into `record`: every entry of a dense row, the stored
    /// entries of a CSR row (indices strictly increasing and below the width).
    fn fill(&self, i: usize, record: &mut Record) -> Result<(), String> {
        record.indices.clear();
        record.values.clear();
        match self {
            Rows::Dense(x) => {
                record.indices.extend((0..x.ncols()).map(|j| j as u32));
                record.values.extend(x.row(i).iter().copied());
            }
            Rows::Csr { indptr, indices, values, dim } => {
                let range = |k: usize| indptr.get(k).and_then(|&o| usize::try_from(o).ok()).unwrap_or(0);
                let (start, end) = (range(i), range(i + 1));
                let mut last = None;
                for (&j, &v) in
                    indices.get(start..end).unwrap_or_default().iter().zip(values.get(start..end).unwrap_or_default())
                {
                    let j = u32::try_from(j).ok().filter(|&j| (j as usize) < *dim && last.is_none_or(|l| j > l));
                    let j =
                        j.ok_or_else(|| format!("row {i}: CSR indices must be sorted, distinct and below {dim}"))?;
                    record.indices.push(j);
                    record.values.push(v);
                    last = Some(j);
                }
            }
        }
        Ok(())
    }
}

/// The data set of `rows` with `labels`, as wide as the rows, each row weighed by
/// `weights` when given (`sample_weight`).
fn dataset<T: Real>(rows: &Rows<'_>, labels: &[f64], weights: Option<Vec<f64>>) -> Result<Dataset<T>, String> {
    let mut data = Dataset::new();
    let mut record = Record::default();
    for (i, &label) in labels.iter().enumerate().take(rows.len()) {
        rows.fill(i, &mut record)?;
        record.label = label;
        data.push(&record).map_err(|e| format!("row {i}: {e}"))?;
    }
    data.widen(rows.dim());
    if let Some(weights) = weights {
        data.set_row_weights(weights).map_err(|e| format!("sample_weight: {e}"))?;
    }
    Ok(data)
}

/// How [`fit_in`] prepared the rows: the relevance weights, or `scale="auto"`'s verdict.
enum Prepared {
    AsAsked,
    Weighed(Relevance),
    Scaled(Verdict),
}

/// Fits on `rows` and `labels` in scalar `T`: the model's bytes and its summary, and how
/// the rows were prepared. A model of standardised (and weighed) rows carries the scaler,
/// as `kestrel train --scale` (`--relevance`) writes it.
fn fit_in<T: Real>(
    config: &FitConfig,
    rows: &Rows<'_>,
    labels: &[f64],
    weights: Option<Vec<f64>>,
) -> Result<(Fitted, Prepared), String> {
    let data = dataset::<T>(rows, labels, weights)?;
    let settings = &config.settings;
    let mut searched = None;
    let (data, scaler, prepared) = match (config.relevance, config.scale) {
        (true, _) => {
            let weighed = relevance::weighed_if_better(&data, settings).map_err(|e| e.to_string())?;
            searched = weighed.searched;
            (weighed.rows, Some(weighed.scaler), Prepared::Weighed(weighed.relevance))
        }
        (false, Scaling::On) => {
            let (scaled, scaler) = data.standardized().map_err(|e| format!("scale: {e}"))?;
            (scaled, Some(scaler), Prepared::AsAsked)
        }
        (false, Scaling::Auto) => {
            let decided = scaling::standardized_if_better(&data, settings).map_err(|e| format!("scale: {e}"))?;
            let verdict = Prepared::Scaled(decided.verdict);
            searched = decided.searched;
            match decided.standardised {
                Some((scaled, scaler)) => (scaled, Some(scaler), verdict),
                None => (data, None, verdict),
            }
        }
        (false, Scaling::Off) => (data, None, Prepared::AsAsked),
    };
    // The width search `scale="auto"` or `relevance` scored the kept rows with, not run
    // again.
    let settings = &FitSettings { searched, ..settings.clone() };
    let mut fitted = policy::fit(settings, &data).map_err(|e| e.to_string())?;
    if let Some(scaler) = scaler {
        fitted.bytes = model::with_scaler(fitted.bytes, scaler.section()).map_err(|e| e.to_string())?;
    }
    Ok((fitted, prepared))
}

/// A summary field as a Python object.
fn field_object<'py>(py: Python<'py>, field: &Field) -> PyResult<Bound<'py, PyAny>> {
    Ok(match field {
        Field::Count(n) => n.into_pyobject(py)?.into_any(),
        Field::Steps(n) => n.into_pyobject(py)?.into_any(),
        Field::Number(x) => x.into_pyobject(py)?.into_any(),
        Field::Flag(b) => b.into_pyobject(py)?.to_owned().into_any(),
        Field::Text(s) => s.into_pyobject(py)?.into_any(),
        Field::Counts(counts) => PyList::new(py, counts)?.into_any(),
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

/// Fits `config`'s learner on the rows of `x` with labels or targets `y`, each row weighed
/// by `sample_weight` when given (finite and positive; svm, rsvm, lssvm, krr, ssvr and mrrsvm), by
/// `kestrel train`'s policy. Returns the model file's bytes and the training summary.
#[pyfunction]
#[pyo3(signature = (config, x, y, sample_weight=None))]
fn fit<'py>(
    py: Python<'py>,
    config: &FitConfig,
    x: RowsArg<'py>,
    y: PyReadonlyArray1<'py, f64>,
    sample_weight: Option<PyReadonlyArray1<'py, f64>>,
) -> PyResult<(Bound<'py, PyBytes>, Bound<'py, PyDict>)> {
    let (rows, labels) = rows_with_labels(&x, &y)?;
    let weights = sample_weight.map(|w| w.as_array().to_vec());
    let (fitted, prepared) = py
        .detach(|| {
            if config.f32_scalar {
                fit_in::<f32>(config, &rows, &labels, weights)
            } else {
                fit_in::<f64>(config, &rows, &labels, weights)
            }
        })
        .map_err(value_error)?;
    let summary = summary_dict(py, &fitted.summary)?;
    match prepared {
        Prepared::AsAsked => {}
        Prepared::Weighed(relevance) => {
            let chosen = PyDict::new(py);
            chosen.set_item("weights", relevance.aligned.weights)?;
            chosen.set_item("alignment", relevance.aligned.alignment)?;
            chosen.set_item("isotropic_alignment", relevance.aligned.isotropic_alignment)?;
            chosen.set_item("kept", relevance.kept)?;
            chosen.set_item("seconds", relevance.seconds)?;
            chosen.set_item("loo", relevance.loo)?;
            summary.set_item("relevance", chosen)?;
        }
        Prepared::Scaled(verdict) => {
            let scaling = PyDict::new(py);
            scaling.set_item("standardised", verdict.standardised())?;
            match verdict {
                Verdict::Compared(compared) => {
                    scaling.set_item("loo", compared.loo)?;
                    scaling.set_item("seconds", compared.seconds)?;
                }
                Verdict::ByRule => scaling.set_item("by_rule", true)?,
                Verdict::Skipped(skipped) => scaling.set_item("not_compared", skipped.reason())?,
            }
            summary.set_item("scaling", scaling)?;
        }
    }
    Ok((PyBytes::new(py, &fitted.bytes), summary))
}

/// `each` of the rows of `x` with the model in `model` (a model file's bytes), after
/// checking the rows have the model's features; what it returns for every row, and the
/// model's labels (a classifier's, in the order of its outputs).
fn per_row<V>(
    model: &[u8],
    rows: &Rows,
    mut each: impl FnMut(&mut dyn model::Predictor, &Record) -> Result<V, kestrel_core::Error>,
) -> Result<(Vec<V>, Vec<f64>), String> {
    let mut loaded = model::load(model).map_err(|e| e.to_string())?;
    let dim = loaded.info().dim;
    if rows.dim() != dim {
        return Err(format!("x has {} features, the model {dim}", rows.dim()));
    }
    let mut record = Record::default();
    let values = (0..rows.len())
        .map(|i| {
            rows.fill(i, &mut record)?;
            each(loaded.as_mut(), &record).map_err(|e| format!("row {i}: {e}"))
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok((values, loaded.labels()))
}

/// One prediction per row of `x` by the model in `model` (a model file's bytes): what
/// `kestrel predict` writes — the label for a classifier (for a model of named classes, the
/// class's index), the value for a regressor, the flag (1 for an anomaly) for a detector.
#[pyfunction]
fn predict<'py>(py: Python<'py>, model: &[u8], x: RowsArg<'py>) -> PyResult<Bound<'py, PyArray1<f64>>> {
    let rows = x.rows()?;
    let (predictions, _) = py.detach(|| per_row(model, &rows, |m, r| m.predict(r))).map_err(value_error)?;
    Ok(predictions.into_pyarray(py))
}

/// A novelty detector's score `d²(x)` of each row of `x` (what `kestrel predict` writes
/// before the flag); a `ValueError` for another model.
#[pyfunction]
fn novelty_scores<'py>(py: Python<'py>, model: &[u8], x: RowsArg<'py>) -> PyResult<Bound<'py, PyArray1<f64>>> {
    let rows = x.rows()?;
    let (scores, _) = py.detach(|| per_row(model, &rows, |m, r| m.novelty_score(r))).map_err(value_error)?;
    let scores: Option<Vec<f64>> = scores.into_iter().collect();
    Ok(scores.ok_or_else(|| value_error("the model is not a novelty detector"))?.into_pyarray(py))
}

/// A classifier's decision values for the rows of `x`, one column per output in the
/// model's order, and the labels of those outputs (see
/// `kestrel_stream::model::Predictor::decision_values`); a `ValueError` for a regressor.
#[pyfunction]
fn decision_function<'py>(
    py: Python<'py>,
    model: &[u8],
    x: RowsArg<'py>,
) -> PyResult<(Bound<'py, PyArray2<f64>>, Vec<f64>)> {
    per_row_matrix(py, model, &x, |m, r| m.decision_values(r), "a regressor has no decision function")
}

/// One row per row of `x` of the class probabilities of the classifier in `model` (in the
/// model's order of labels), and those labels; a `ValueError` for a model without class
/// probabilities (`kestrel train --probabilities`, `probability=True`).
#[pyfunction]
fn probabilities<'py>(
    py: Python<'py>,
    model: &[u8],
    x: RowsArg<'py>,
) -> PyResult<(Bound<'py, PyArray2<f64>>, Vec<f64>)> {
    let missing = "the model has no class probabilities (kestrel train --probabilities)";
    per_row_matrix(py, model, &x, |m, r| m.probabilities(r), missing)
}

/// A row of values per row of `x` from `each` on the model in `model` (one row of the
/// matrix each), and the model's labels; a `ValueError` saying `missing` when the model has
/// no such values.
fn per_row_matrix<'py>(
    py: Python<'py>,
    model: &[u8],
    x: &RowsArg<'py>,
    each: impl Fn(&mut dyn model::Predictor, &Record) -> Result<Option<Vec<f64>>, kestrel_core::Error> + Send,
    missing: &str,
) -> PyResult<(Bound<'py, PyArray2<f64>>, Vec<f64>)> {
    let rows = x.rows()?;
    let (values, labels) = py
        .detach(|| -> Result<(Vec<Vec<f64>>, Vec<f64>), String> {
            let (values, labels) = per_row(model, &rows, each)?;
            let values: Option<Vec<Vec<f64>>> = values.into_iter().collect();
            Ok((values.ok_or(missing)?, labels))
        })
        .map_err(value_error)?;
    let array = PyArray2::from_vec2(py, &values).map_err(value_error)?;
    Ok((array, labels))
}

/// What `kestrel inspect` shows of the model in `model`: kind, scalar, dim, centers, bytes,
/// kernel, task, scaled, class_names, feature_names, probabilities, and a projection's components and a scaler's
/// relevance weights when the model has them. A checkpoint (of `kestrel stream`, or copied
/// off a device) is named as one, as the CLI names it.
#[pyfunction]
fn describe<'py>(py: Python<'py>, model: &[u8]) -> PyResult<Bound<'py, PyDict>> {
    if let Some(what) = model::other_kestrel_file(model) {
        return Err(value_error(what));
    }
    let info = model::describe(model).map_err(value_error)?;
    let dict = PyDict::new(py);
    dict.set_item("summary", info.summary())?;
    dict.set_item("kind", info.kind)?;
    dict.set_item("scalar", info.scalar)?;
    dict.set_item("dim", info.dim)?;
    dict.set_item("centers", info.centers)?;
    dict.set_item("bytes", info.bytes)?;
    dict.set_item("kernel", info.kernel)?;
    dict.set_item("task", info.task)?;
    dict.set_item("scaled", info.scaled)?;
    dict.set_item("class_names", info.class_names)?;
    dict.set_item("feature_names", info.feature_names)?;
    dict.set_item("probabilities", info.probabilities)?;
    if let Some(components) = info.components {
        dict.set_item("components", components)?;
    }
    if !info.relevance.is_empty() {
        dict.set_item("relevance", info.relevance)?;
    }
    Ok(dict)
}

/// The model's bytes with the class names `names` (name `k` that of label `k`).
#[pyfunction]
fn with_class_names<'py>(py: Python<'py>, model: &[u8], names: Vec<String>) -> PyResult<Bound<'py, PyBytes>> {
    let names = kestrel_stream::class_names::ClassNames::from_names(names);
    let bytes = model::with_class_names(model.to_vec(), &names).map_err(value_error)?;
    Ok(PyBytes::new(py, &bytes))
}

/// The model's bytes with the names of its features, in its order, as `kestrel train`
/// writes them from a CSV header (`kestrel predict` then reads a CSV's columns by them).
#[pyfunction]
fn with_feature_names<'py>(py: Python<'py>, model: &[u8], names: Vec<String>) -> PyResult<Bound<'py, PyBytes>> {
    let bytes = model::with_feature_names(model.to_vec(), &names).map_err(value_error)?;
    Ok(PyBytes::new(py, &bytes))
}

/// The decision values the fold model `fold_model` gives the rows of `x`, as the outputs of
/// the classifier of `labels` whose probabilities the fold helps fit: a column per output
/// (one for two classes), NaN for a class the fold model lacks
/// (`kestrel_stream::batch::calibration::held_out_values`).
#[pyfunction]
fn held_out_values<'py>(
    py: Python<'py>,
    labels: Vec<f64>,
    fold_model: &[u8],
    x: RowsArg<'py>,
) -> PyResult<Bound<'py, PyArray2<f64>>> {
    let each = |m: &mut dyn model::Predictor, r: &Record| {
        kestrel_stream::batch::calibration::held_out_values(&labels, m, r).map(Some)
    };
    Ok(per_row_matrix(py, fold_model, &x, each, "")?.0)
}

/// The classifier's model bytes with class probabilities fitted to decision values held
/// out from it elsewhere (the Spark estimator's cross-validation): a row of `values` per
/// label in `y`, one value per output of the model (NaN where a fold model had none).
#[pyfunction]
fn calibrated<'py>(
    py: Python<'py>,
    model: &[u8],
    values: PyReadonlyArray2<'py, f64>,
    y: PyReadonlyArray1<'py, f64>,
) -> PyResult<Bound<'py, PyBytes>> {
    let values = values.as_array();
    let flat: Vec<f64> = values.iter().copied().collect();
    let labels = y.as_slice().map_err(|_| value_error("y must be contiguous"))?;
    let bytes = py
        .detach(|| kestrel_stream::batch::calibration::calibrated(model.to_vec(), &flat, labels))
        .map_err(value_error)?;
    Ok(PyBytes::new(py, &bytes))
}

/// The model file of the learner whose device checkpoint is `checkpoint`, with the
/// statistics of the scaler whose checkpoint is `scaler`: what `kestrel import` writes.
#[pyfunction]
#[pyo3(signature = (checkpoint, scaler=None))]
fn import_checkpoint<'py>(py: Python<'py>, checkpoint: &[u8], scaler: Option<&[u8]>) -> PyResult<Bound<'py, PyBytes>> {
    let (model, _) = kestrel_stream::device::import_model(checkpoint, scaler).map_err(|error| {
        let input = match error.input() {
            kestrel_stream::device::Input::Learner => "checkpoint",
            kestrel_stream::device::Input::Scaler => "scaler",
        };
        value_error(format!("{input}: {error}"))
    })?;
    Ok(PyBytes::new(py, &model))
}

/// What the device checkpoint `checkpoint` holds, as JSON text: what `kestrel inspect
/// --json` prints ([`kestrel_stream::device::describe`]).
#[pyfunction]
fn describe_checkpoint(checkpoint: &[u8]) -> PyResult<String> {
    let (_, info) = kestrel_stream::device::describe(checkpoint)
        .map_err(|status| value_error(kestrel_stream::device::refused(status)))?;
    Ok(serde_json::Value::Object(info).to_string())
}

/// A `kestrel stream` checkpoint file's contents: `learner` (the learner's state, for
/// `Stream.load_state`), `probabilities` (a classifier's class probabilities, for
/// `Stream.load_probabilities`), `rows`, `seen`, `skipped`, `history` (as
/// `Stream.history`) and `config` (flag to value).
#[pyfunction]
fn read_checkpoint<'py>(py: Python<'py>, data: &[u8]) -> PyResult<Bound<'py, PyDict>> {
    let checkpoint = Checkpoint::from_bytes(data).map_err(value_error)?;
    let dict = PyDict::new(py);
    dict.set_item("learner", PyBytes::new(py, &checkpoint.learner))?;
    let probabilities = checkpoint.probabilities.to_bytes().map_err(value_error)?;
    dict.set_item("probabilities", PyBytes::new(py, &probabilities))?;
    dict.set_item("rows", checkpoint.rows)?;
    dict.set_item("seen", checkpoint.seen)?;
    dict.set_item("skipped", checkpoint.skipped)?;
    let config = PyDict::new(py);
    for (flag, value) in checkpoint.config.flags() {
        config.set_item(flag, value)?;
    }
    let learner = checkpoint.config.value("--learner").unwrap_or("");
    dict.set_item("history", history::history_dict(py, &checkpoint.history, history::task_of_flag(learner))?)?;
    dict.set_item("config", config)?;
    Ok(dict)
}

/// A windowed learner of `kestrel stream` (`kestrel_stream::online::build`), fed one
/// row or many at a time; its state is the CLI's (`save_state` bytes interchangeable).
/// Each row is learned as `kestrel stream` learns it, predicted first, and its history
/// (`kestrel_stream::history`) kept as the CLI keeps it for `--report`.
#[pyclass(module = "kestrel._kestrel")]
struct Stream {
    learner: Box<dyn OnlineLearner + Send + Sync>,
    dim: usize,
    record: Record,
    history: History,
    /// A classifier's class probabilities, learned from the rows learned.
    probabilities: ClassProbabilities,
    /// When the last row was learned.
    clock: Instant,
}

impl Stream {
    /// Runs `step` on each row of `x` with its label, collecting the results.
    fn each<V>(
        &mut self,
        rows: &Rows<'_>,
        labels: Option<&[f64]>,
        mut step: impl FnMut(&mut dyn OnlineLearner, &Record, &mut History, &mut ClassProbabilities) -> Result<V, String>,
    ) -> Result<Vec<V>, String> {
        if rows.dim() != self.dim {
            return Err(format!("x has {} features, the learner {}", rows.dim(), self.dim));
        }
        (0..rows.len())
            .map(|i| {
                rows.fill(i, &mut self.record)?;
                self.record.label = labels.and_then(|l| l.get(i).copied()).unwrap_or(0.0);
                step(self.learner.as_mut(), &self.record, &mut self.history, &mut self.probabilities)
                    .map_err(|e| format!("row {i}: {e}"))
            })
            .collect()
    }
}

/// Why a learner refused a row labelled `label`: for a label it cannot learn, which and
/// why, in the Python API's words; otherwise the error as it stands.
fn rejected(error: kestrel_core::Error, label: f64) -> String {
    match error {
        // A classifier's refusal of a NaN label, or a regressor's of a NaN target: the label
        // is missing, whatever else the row holds.
        kestrel_core::Error::InvalidLabel { .. } | kestrel_core::Error::NonFinite if label.is_nan() => {
            "the label is missing (NaN)".into()
        }
        kestrel_core::Error::InvalidLabel { .. } => format!(
            "label {label} cannot be learned: it would be a class past the most the learner holds (classes=, 16 \
             unless given; a numeric target is a regressor's: WindowSLKL), or the scalar does not hold it exactly"
        ),
        other => other.to_string(),
    }
}

#[pymethods]
impl Stream {
    /// A learner (`svm`, `slkl`, `rsvm`, `novelty`) for rows of `dim` features with
    /// `kestrel stream`'s defaults for every setting left `None`.
    #[new]
    #[pyo3(signature = (
        learner, dim, *, scalar = "f64", window = None, centers = None, steps_per_sample = None, tol = None,
        kernel = "rbf",
        gamma = None, degree = 3, coef0 = 0.0, nu = None, c = None, loss = "squared_hinge", bias = 1.0,
        delta = None, scale = true, renew = true, memory = None, classes = None, quantile = DEFAULT_QUANTILE,
        warmup = DEFAULT_WARMUP, learn = "unflagged", seed = 1
    ))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        learner: &str,
        dim: usize,
        scalar: &str,
        window: Option<usize>,
        centers: Option<usize>,
        steps_per_sample: Option<usize>,
        tol: Option<f64>,
        kernel: &str,
        gamma: Option<f64>,
        degree: u32,
        coef0: f64,
        nu: Option<f64>,
        c: Option<f64>,
        loss: &str,
        bias: f64,
        delta: Option<f64>,
        scale: bool,
        renew: bool,
        memory: Option<usize>,
        classes: Option<usize>,
        quantile: f64,
        warmup: usize,
        learn: &str,
        seed: u64,
    ) -> PyResult<Self> {
        let kind = match learner {
            "svm" => StreamLearner::Svm,
            "slkl" => StreamLearner::Slkl,
            "rsvm" => StreamLearner::Rsvm,
            "novelty" => StreamLearner::Novelty,
            other => return Err(value_error(format!("unknown online learner `{other}` (svm, slkl, rsvm, novelty)"))),
        };
        let learn = match learn {
            "unflagged" => Learn::Unflagged,
            "all" => Learn::All,
            other => return Err(value_error(format!("unknown learn `{other}` (unflagged, all)"))),
        };
        let mut settings = StreamSettings::new(kind);
        settings.window = window.unwrap_or(settings.window);
        settings.centers = centers.unwrap_or(settings.centers);
        settings.steps_per_sample = steps_per_sample.unwrap_or(settings.steps_per_sample);
        settings.eps = tol;
        settings.kernel = kernel_settings(kernel, gamma, degree, coef0)?;
        settings.nu = nu;
        settings.svm = svm_settings(c, loss, bias)?;
        settings.delta = delta.unwrap_or(settings.delta);
        settings.scale = scale;
        settings.renew = renew;
        settings.memory = memory.unwrap_or(settings.memory);
        settings.classes = classes.unwrap_or(settings.classes);
        (settings.quantile, settings.warmup, settings.learn) = (quantile, warmup, learn);
        settings.seed = seed;
        let built = if is_f32(scalar)? { build::<f32>(&settings, dim) } else { build::<f64>(&settings, dim) };
        let learner = built.map_err(value_error)?;
        Ok(Stream {
            learner,
            dim,
            record: Record::default(),
            history: History::default(),
            probabilities: ClassProbabilities::default(),
            clock: Instant::now(),
        })
    }

    /// Learns each row of `x` with its label or target, in order: predicted first, then
    /// learned, and recorded in the history.
    fn learn(&mut self, py: Python<'_>, x: RowsArg<'_>, y: PyReadonlyArray1<'_, f64>) -> PyResult<()> {
        let (rows, labels) = rows_with_labels(&x, &y)?;
        let mut clock = self.clock;
        let learned = py.detach(|| {
            self.each(&rows, Some(&labels), |learner, record, history, probabilities| {
                let prediction = learner.test_then_train(record).map_err(|e| rejected(e, record.label))?;
                history.record(learner, prediction, record.label, clock.elapsed().as_secs_f64());
                probabilities.learned(learner, record.label);
                clock = Instant::now();
                Ok(())
            })
        });
        self.clock = clock;
        learned.map_err(value_error).map(drop)
    }

    /// The series of the rows learned so far (`history::history_dict`).
    fn history<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        history::history_dict(py, &self.history, history::task_of(self.learner.as_ref()))
    }

    /// One prediction per row of `x` (NaN while a classifier has seen no label).
    fn predict<'py>(&mut self, py: Python<'py>, x: RowsArg<'py>) -> PyResult<Bound<'py, PyArray1<f64>>> {
        let rows = x.rows()?;
        let values = py.detach(|| {
            self.each(&rows, None, |l, r, _, _| Ok(l.predict(r).map_err(|e| e.to_string())?.unwrap_or(f64::NAN)))
        });
        Ok(values.map_err(value_error)?.into_pyarray(py))
    }

    /// A classifier's labels in the order of its classes, and each row's probability of
    /// each (`ClassProbabilities`): one row of `x` a row of the matrix.
    fn probabilities<'py>(
        &mut self,
        py: Python<'py>,
        x: RowsArg<'py>,
    ) -> PyResult<(Vec<f64>, Bound<'py, PyArray2<f64>>)> {
        if !self.learner.is_classifier() {
            return Err(value_error("the learner is not a classifier"));
        }
        let rows = x.rows()?;
        let classes = self.learner.class_labels().to_vec();
        let (mut row, mut matrix) = (Vec::new(), Vec::with_capacity(rows.len() * classes.len()));
        let read = py.detach(|| {
            self.each(&rows, None, |l, r, _, probabilities| {
                l.predict(r).map_err(|e| e.to_string())?;
                probabilities.probabilities(l.decisions(), classes.len(), &mut row);
                matrix.extend_from_slice(&row);
                Ok(())
            })
        });
        read.map_err(value_error)?;
        let matrix = numpy::ndarray::Array2::from_shape_vec((rows.len(), classes.len()), matrix)
            .map_err(|e| value_error(e.to_string()))?;
        Ok((classes, matrix.into_pyarray(py)))
    }

    /// A novelty detector's score `d²(x)` of each row of `x` by the model before it (NaN
    /// during the warm-up), without learning it.
    fn scores<'py>(&mut self, py: Python<'py>, x: RowsArg<'py>) -> PyResult<Bound<'py, PyArray1<f64>>> {
        if !self.learner.is_detector() {
            return Err(value_error("the learner is not a novelty detector"));
        }
        let rows = x.rows()?;
        let values = py.detach(|| {
            self.each(&rows, None, |l, r, _, _| {
                Ok(l.predict(r).map(|_| l.last_score()).map_err(|e| e.to_string())?.unwrap_or(f64::NAN))
            })
        });
        Ok(values.map_err(value_error)?.into_pyarray(py))
    }

    /// A classifier's labels, in the order of its classes (of first appearance; a named
    /// class's label is its code); empty for the other learners.
    fn class_labels(&self) -> Vec<f64> {
        self.learner.class_labels().to_vec()
    }

    /// `True` for a classifier.
    fn is_classifier(&self) -> bool {
        self.learner.is_classifier()
    }

    /// The settings the learner chose itself, by name (rsvm's raced width, svm's raced
    /// cost; the summary's `chosen` in `kestrel stream`).
    fn chosen<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let dict = PyDict::new(py);
        for (name, value) in self.learner.chosen() {
            dict.set_item(name, value)?;
        }
        Ok(dict)
    }

    /// The model file of the current model, with a classifier's class probabilities (what
    /// `kestrel stream --out` writes).
    fn model_bytes<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        let bytes = self.probabilities.model_file(self.learner.as_mut()).map_err(value_error)?;
        Ok(PyBytes::new(py, &bytes))
    }

    /// The learner's whole state (what a `kestrel stream` checkpoint holds as `learner`).
    fn save_state<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        let bytes = self.learner.save_state().map_err(value_error)?;
        Ok(PyBytes::new(py, &bytes))
    }

    /// Replaces the state with one `save_state` wrote for a learner of the same settings;
    /// the class probabilities learn again from the rows learned after it.
    fn load_state(&mut self, state: &[u8]) -> PyResult<()> {
        self.learner.restore_state(state).map_err(value_error)?;
        self.probabilities = ClassProbabilities::default();
        Ok(())
    }

    /// The features of a row.
    #[getter]
    fn dim(&self) -> usize {
        self.dim
    }

    /// The history's bytes (`History::to_bytes`), which `load_history` takes back.
    fn save_history<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        let bytes = self.history.to_bytes().map_err(value_error)?;
        Ok(PyBytes::new(py, &bytes))
    }

    /// Replaces the history with the one `save_history` gave.
    fn load_history(&mut self, history: &[u8]) -> PyResult<()> {
        self.history = History::from_bytes(history).map_err(|e| value_error(format!("not a history: {e}")))?;
        Ok(())
    }

    /// The class probabilities' state (`ClassProbabilities::to_bytes`), which
    /// `load_probabilities` takes back.
    fn save_probabilities<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        let bytes = self.probabilities.to_bytes().map_err(value_error)?;
        Ok(PyBytes::new(py, &bytes))
    }

    /// Replaces the class probabilities' state with the one `save_probabilities` gave.
    fn load_probabilities(&mut self, state: &[u8]) -> PyResult<()> {
        self.probabilities = ClassProbabilities::from_bytes(state)
            .map_err(|e| value_error(format!("not a state of class probabilities: {e}")))?;
        Ok(())
    }
}

/// The extension module.
#[pymodule]
fn _kestrel(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<FitConfig>()?;
    m.add_function(wrap_pyfunction!(fit, m)?)?;
    m.add_function(wrap_pyfunction!(predict, m)?)?;
    m.add_function(wrap_pyfunction!(decision_function, m)?)?;
    m.add_function(wrap_pyfunction!(probabilities, m)?)?;
    m.add_function(wrap_pyfunction!(novelty_scores, m)?)?;
    m.add_function(wrap_pyfunction!(describe, m)?)?;
    m.add_function(wrap_pyfunction!(with_class_names, m)?)?;
    m.add_function(wrap_pyfunction!(with_feature_names, m)?)?;
    m.add_function(wrap_pyfunction!(calibrated, m)?)?;
    m.add_function(wrap_pyfunction!(held_out_values, m)?)?;
    m.add_function(wrap_pyfunction!(read_checkpoint, m)?)?;
    m.add_function(wrap_pyfunction!(import_checkpoint, m)?)?;
    m.add_function(wrap_pyfunction!(describe_checkpoint, m)?)?;
    m.add_class::<Stream>()?;
    m.add_function(wrap_pyfunction!(npkl::npkl_fit, m)?)?;
    m.add_function(wrap_pyfunction!(mrrsvm::mrrsvm_parts, m)?)?;
    m.add_function(wrap_pyfunction!(mrrsvm::mrrsvm_part, m)?)?;
    m.add_function(wrap_pyfunction!(mrrsvm::mrrsvm_reduce, m)?)?;
    m.add_class::<npkl::LearnedKernel>()?;
    m.add_function(wrap_pyfunction!(projection::projection_fit, m)?)?;
    m.add_function(wrap_pyfunction!(projection::kcca_fit, m)?)?;
    m.add_function(wrap_pyfunction!(projection::projection_transform, m)?)?;
    m.add_function(wrap_pyfunction!(spectral::spectral_cluster, m)?)?;
    m.add_function(wrap_pyfunction!(spectral::eigenmap, m)?)?;
    m.add_function(wrap_pyfunction!(spectral::lpp_fit, m)?)?;
    Ok(())
}
