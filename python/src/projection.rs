//! Kernel projections for Python: [`projection_fit`] runs kestrel-stream's [`kpca::fit`]
//! (what `kestrel transform --method kpca|ksir|kfd` runs) and [`kcca_fit`] its
//! [`kpca::fit_kcca`] (`--method kcca`) on dense float64 rows, returning model files'
//! bytes; [`projection_transform`] projects rows through such bytes, as `--apply` does.
//! The kernel is the CLI's default, RBF with width `gamma` (default `1/d`), in `f64`.

use kestrel_core::Kernel;
use kestrel_core::kpca::{Criterion, DEFAULT_MU};
use kestrel_stream::batch::fit::unit_variance_width;
use kestrel_stream::batch::kpca::{self, KccaSettings, KpcaSettings, Method, Projection};
use numpy::{IntoPyArray, PyArray2, PyArrayMethods, PyReadonlyArray1, PyReadonlyArray2};
use pyo3::prelude::*;
use pyo3::types::PyBytes;

use crate::value_error;

/// The rows of `x` (C order) and their width.
pub(crate) fn points(x: &PyReadonlyArray2<'_, f64>) -> (Vec<f64>, usize) {
    let array = x.as_array();
    (array.iter().copied().collect(), array.ncols())
}

/// The RBF kernel of width `gamma`, or `1/dim`.
fn kernel(gamma: Option<f64>, dim: usize) -> PyResult<Kernel<f64>> {
    Kernel::rbf(gamma.unwrap_or(unit_variance_width(dim))).map_err(|e| value_error(format!("gamma: {e}")))
}

/// A model file's bytes.
pub(crate) fn model_bytes<'py>(py: Python<'py>, model: &Projection<f64>) -> PyResult<Bound<'py, PyBytes>> {
    let mut bytes = vec![0u8; model.encoded_len()];
    model.encode(&mut bytes).map_err(value_error)?;
    Ok(PyBytes::new(py, &bytes))
}

/// Fits `method` (`kpca`, `ksir`, `kfd`) on the rows of `x` (`y`: the labels or
/// responses of the supervised methods), `components` components through `centres` rows
/// drawn with `seed` (`None`: every row; exact for kpca). Returns the model file's bytes
/// and the eigenvalues.
#[pyfunction]
#[pyo3(signature = (x, y = None, *, method = "kpca", components = 2, centres = None, gamma = None, mu = DEFAULT_MU, slices = None, seed = 1))]
#[allow(clippy::too_many_arguments, reason = "the flags of kestrel transform")]
pub fn projection_fit<'py>(
    py: Python<'py>,
    x: PyReadonlyArray2<'py, f64>,
    y: Option<PyReadonlyArray1<'py, f64>>,
    method: &str,
    components: usize,
    centres: Option<usize>,
    gamma: Option<f64>,
    mu: f64,
    slices: Option<usize>,
    seed: u64,
) -> PyResult<(Bound<'py, PyBytes>, Vec<f64>)> {
    let (rows, dim) = points(&x);
    let discriminant = |criterion| Method::Discriminant { criterion, slices, mu };
    let method = match method {
        "kpca" => Method::Kpca,
        "ksir" => discriminant(Criterion::Sir),
        "kfd" => discriminant(Criterion::Fisher),
        other => return Err(value_error(format!("unknown method `{other}` (kpca, ksir, kfd)"))),
    };
    let labels: Vec<f64> = match (&y, method) {
        (Some(y), _) => y.as_array().iter().copied().collect(),
        (None, Method::Kpca) => Vec::new(),
        (None, _) => return Err(value_error("ksir and kfd need y, the labels or responses")),
    };
    if y.is_some() && labels.len() != rows.len() / dim.max(1) {
        return Err(value_error(format!("y has {} values for {} rows", labels.len(), rows.len() / dim.max(1))));
    }
    let kernel = kernel(gamma, dim)?;
    let settings = KpcaSettings { method, components, centres, seed };
    let model = py.detach(|| kpca::fit(&rows, &labels, dim, kernel, &settings, None)).map_err(value_error)?;
    Ok((model_bytes(py, &model)?, model.eigenvalues().to_vec()))
}

/// Fits reduced KCCA of the views `x` and `x2` (row `i` of each the same observation),
/// `components` pairs through the same `centres` rows of each (drawn with `seed`; `None`:
/// every row). Returns the two views' model files' bytes and the canonical correlations.
#[pyfunction]
#[pyo3(signature = (x, x2, *, components = 2, centres = None, gamma = None, mu = DEFAULT_MU, seed = 1))]
#[allow(clippy::too_many_arguments, reason = "the flags of kestrel transform --method kcca")]
#[allow(clippy::type_complexity, reason = "two models and their correlations")]
pub fn kcca_fit<'py>(
    py: Python<'py>,
    x: PyReadonlyArray2<'py, f64>,
    x2: PyReadonlyArray2<'py, f64>,
    components: usize,
    centres: Option<usize>,
    gamma: Option<f64>,
    mu: f64,
    seed: u64,
) -> PyResult<(Bound<'py, PyBytes>, Bound<'py, PyBytes>, Vec<f64>)> {
    let ((rows, dim), (rows2, dim2)) = (points(&x), points(&x2));
    let kernels = (kernel(gamma, dim)?, kernel(gamma, dim2)?);
    let settings = KccaSettings { components, centres, seed, mu };
    let (u, v) =
        py.detach(|| kpca::fit_kcca(&rows, &rows2, (dim, dim2), kernels, &settings, None)).map_err(value_error)?;
    Ok((model_bytes(py, &u)?, model_bytes(py, &v)?, u.eigenvalues().to_vec()))
}

/// The projections (`n × k`) of the rows of `x` through the model in `model` (a kernel
/// projection model file's bytes).
#[pyfunction]
pub fn projection_transform<'py>(
    py: Python<'py>,
    model: &[u8],
    x: PyReadonlyArray2<'py, f64>,
) -> PyResult<Bound<'py, PyArray2<f64>>> {
    let applied = kpca::from_bytes::<f64>(model).map_err(value_error)?;
    let (rows, dim) = points(&x);
    if dim != applied.model.dim() {
        return Err(value_error(format!("x has {dim} features, the projection {}", applied.model.dim())));
    }
    let projected = py.detach(|| applied.project(&rows)).map_err(value_error)?;
    let k = applied.model.components();
    projected.into_pyarray(py).reshape([rows.len() / dim.max(1), k])
}
