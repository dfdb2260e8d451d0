//! The MapReduce RSVM's steps for an engine that runs them apart (`kestrel.spark`), over
//! kestrel-stream's [`mrrsvm`]: which part each row belongs to ([`mrrsvm_parts`]), the Map
//! step on one part's rows ([`mrrsvm_part`]) and the Reduce step on the parts
//! ([`mrrsvm_reduce`]). Run on the same rows with the same settings, they give the model
//! `fit` gives for learner `mrrsvm`, byte for byte.

use kestrel_core::Real;
use kestrel_stream::batch::fit::FitSettings;
use kestrel_stream::batch::mrrsvm::{self, Part};
use numpy::{IntoPyArray, PyArray1, PyReadonlyArray1};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};

use crate::{FitConfig, RowsArg, dataset, rows_with_labels, summary_dict, value_error};

/// The part of each row of `x` (with its label in `y`) among `config`'s partitions.
#[pyfunction]
pub fn mrrsvm_parts<'py>(
    py: Python<'py>,
    config: &FitConfig,
    x: RowsArg<'py>,
    y: PyReadonlyArray1<'py, f64>,
) -> PyResult<Bound<'py, PyArray1<i64>>> {
    let (rows, labels) = rows_with_labels(&x, &y)?;
    let parts = config.settings.partitions.unwrap_or(mrrsvm::DEFAULT_PARTITIONS);
    let seed = config.settings.seed;
    let ids = py.detach(|| {
        if config.f32_scalar {
            part_ids::<f32>(&rows, &labels, seed, parts)
        } else {
            part_ids::<f64>(&rows, &labels, seed, parts)
        }
    });
    Ok(ids.map_err(value_error)?.into_pyarray(py))
}

fn part_ids<T: Real>(rows: &crate::Rows<'_>, labels: &[f64], seed: u64, parts: usize) -> Result<Vec<i64>, String> {
    let data = dataset::<T>(rows, labels, None)?;
    Ok((0..data.len())
        .map(|i| {
            let (indices, values) = data.row(i).unwrap_or_default();
            let part =
                mrrsvm::part_of(mrrsvm::row_key(indices, values), labels.get(i).copied().unwrap_or(0.0), seed, parts);
            i64::try_from(part).unwrap_or(-1)
        })
        .collect())
}

/// The Map step: the part model of the rows of `x` (one part's rows, in any order), each
/// weighed by `sample_weight` when given, as bytes to send to the Reduce step.
#[pyfunction]
#[pyo3(signature = (config, x, y, sample_weight=None))]
pub fn mrrsvm_part<'py>(
    py: Python<'py>,
    config: &FitConfig,
    x: RowsArg<'py>,
    y: PyReadonlyArray1<'py, f64>,
    sample_weight: Option<PyReadonlyArray1<'py, f64>>,
) -> PyResult<Bound<'py, PyBytes>> {
    let (rows, labels) = rows_with_labels(&x, &y)?;
    let weights = sample_weight.map(|w| w.as_array().to_vec());
    let settings = &config.settings;
    let part = py.detach(|| {
        if config.f32_scalar {
            part_bytes::<f32>(settings, &rows, &labels, weights)
        } else {
            part_bytes::<f64>(settings, &rows, &labels, weights)
        }
    });
    Ok(PyBytes::new(py, &part.map_err(value_error)?))
}

/// The part model of `rows` with their `weights` (put in the part's canonical order
/// first), as bytes.
fn part_bytes<T: Real>(
    settings: &FitSettings,
    rows: &crate::Rows<'_>,
    labels: &[f64],
    weights: Option<Vec<f64>>,
) -> Result<Vec<u8>, String> {
    let data = dataset::<T>(rows, labels, weights)?;
    let ordered = mrrsvm::split(&data, settings.seed, 1);
    let part = mrrsvm::train_part(settings, ordered.first().unwrap_or(&data)).and_then(|part| part.to_bytes());
    part.map_err(|e| e.to_string())
}

/// The Reduce step: the model file of the parts' bytes (in part order) for rows of `dim`
/// features, and its summary.
#[pyfunction]
pub fn mrrsvm_reduce<'py>(
    py: Python<'py>,
    config: &FitConfig,
    parts: Vec<Vec<u8>>,
    dim: usize,
) -> PyResult<(Bound<'py, PyBytes>, Bound<'py, PyDict>)> {
    let seed = config.settings.seed;
    let fitted = py.detach(|| {
        let parts = parts.iter().map(|bytes| Part::from_bytes(bytes)).collect::<Result<Vec<_>, _>>()?;
        if config.f32_scalar {
            mrrsvm::reduce::<f32>(&parts, dim, seed)
        } else {
            mrrsvm::reduce::<f64>(&parts, dim, seed)
        }
    });
    let fitted = fitted.map_err(value_error)?;
    Ok((PyBytes::new(py, &fitted.bytes), summary_dict(py, &fitted.summary)?))
}
