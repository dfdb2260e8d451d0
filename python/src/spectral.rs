//! Spectral methods for Python over kestrel-stream's [`spectral`] (what `kestrel cluster`
//! and `kestrel transform --method eigenmap|lpp` run), on dense float64 rows:
//! [`spectral_cluster`] the clusters, [`eigenmap`] the training rows' coordinates, and
//! [`lpp_fit`] the locality preserving projection as a model file's bytes (projected by
//! [`crate::projection::projection_transform`]).

use kestrel_stream::batch::spectral;
use numpy::{IntoPyArray, PyArray1, PyArray2, PyArrayMethods, PyReadonlyArray2};
use pyo3::prelude::*;
use pyo3::types::PyBytes;

use crate::projection::{model_bytes, points};
use crate::value_error;

/// Spectral clustering of the rows of `x` into `clusters` clusters on the graph of
/// `neighbors` nearest neighbours, k-means seeded by `seed`. Returns the cluster of each
/// row, the k-means inertia, and Lanczos's products and final residual.
#[pyfunction]
#[pyo3(signature = (x, *, clusters, neighbors = spectral::DEFAULT_NEIGHBORS, seed = 0))]
#[allow(clippy::type_complexity, reason = "the clusters and three figures of the run")]
pub fn spectral_cluster<'py>(
    py: Python<'py>,
    x: PyReadonlyArray2<'py, f64>,
    clusters: usize,
    neighbors: usize,
    seed: u64,
) -> PyResult<(Bound<'py, PyArray1<u32>>, f64, usize, f64)> {
    let (rows, dim) = points(&x);
    let run =
        py.detach(|| spectral::spectral_clusters(&rows, dim, neighbors, clusters, seed, None)).map_err(value_error)?;
    let (steps, residual) = (run.lanczos.steps, run.lanczos.residual);
    Ok((run.clusters.assignments.into_pyarray(py), run.clusters.inertia, steps, residual))
}

/// The Laplacian eigenmap of the rows of `x` in `components` coordinates on the graph of
/// `neighbors` nearest neighbours: the coordinates (`n × components`) and the eigenvalues.
#[pyfunction]
#[pyo3(signature = (x, *, components = 2, neighbors = spectral::DEFAULT_NEIGHBORS))]
pub fn eigenmap<'py>(
    py: Python<'py>,
    x: PyReadonlyArray2<'py, f64>,
    components: usize,
    neighbors: usize,
) -> PyResult<(Bound<'py, PyArray2<f64>>, Vec<f64>)> {
    let (rows, dim) = points(&x);
    let n = rows.len() / dim.max(1);
    let embedding = py.detach(|| spectral::eigenmap(&rows, dim, neighbors, components, None)).map_err(value_error)?;
    let coordinates = embedding.coordinates.into_pyarray(py).reshape([n, components])?;
    Ok((coordinates, embedding.eigenvalues))
}

/// The locality preserving projection of the rows of `x` onto `components` directions on
/// the graph of `neighbors` nearest neighbours: the model file's bytes and the `μ`
/// (increasing).
#[pyfunction]
#[pyo3(signature = (x, *, components = 2, neighbors = spectral::DEFAULT_NEIGHBORS))]
pub fn lpp_fit<'py>(
    py: Python<'py>,
    x: PyReadonlyArray2<'py, f64>,
    components: usize,
    neighbors: usize,
) -> PyResult<(Bound<'py, PyBytes>, Vec<f64>)> {
    let (rows, dim) = points(&x);
    let model = py.detach(|| spectral::lpp(&rows, dim, neighbors, components, None)).map_err(value_error)?;
    Ok((model_bytes(py, &model)?, model.eigenvalues().to_vec()))
}
