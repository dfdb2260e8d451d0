//! Kernel learning from pairs for Python: [`npkl_fit`] runs kestrel-stream's
//! [`npkl::learn`] (what `kestrel npkl` runs) on a dense float64 matrix, and
//! [`LearnedKernel`] places new points by the out-of-sample extension (seed 004 eq. 13).

use kestrel_core::npkl::{Link, Loss, Pair};
use kestrel_stream::batch::npkl::{self, NpklSettings, PairSource};
use numpy::{IntoPyArray, PyArray1, PyArray2, PyArrayMethods, PyReadonlyArray2};
use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::value_error;

/// The loss named `name`.
fn loss(name: &str) -> PyResult<Loss> {
    Ok(match name {
        "hinge" => Loss::Hinge,
        "squared_hinge" => Loss::SquaredHinge,
        "square" => Loss::Square,
        "linear" => Loss::Linear,
        other => return Err(value_error(format!("unknown loss `{other}` (hinge, squared_hinge, square, linear)"))),
    })
}

/// The rows of `x` (C order) and their width.
fn points(x: &PyReadonlyArray2<'_, f64>) -> (Vec<f64>, usize) {
    let array = x.as_array();
    (array.iter().copied().collect(), array.ncols())
}

/// A `rows × width` array of `values`.
fn matrix<'py>(py: Python<'py>, values: Vec<f64>, width: usize) -> PyResult<Bound<'py, PyArray2<f64>>> {
    let rows = values.len().checked_div(width).unwrap_or(0);
    values.into_pyarray(py).reshape([rows, width])
}

/// The learned kernel of the training points: places new points.
#[pyclass(module = "kestrel._kestrel")]
pub struct LearnedKernel(npkl::LearnedKernel);

#[pymethods]
impl LearnedKernel {
    /// The learned kernel of the rows of `x` from columns learned earlier with `neighbors`
    /// and `loss` (one row of `columns` per row of `x`): the graph is built again.
    #[new]
    fn new(
        py: Python<'_>,
        x: PyReadonlyArray2<'_, f64>,
        neighbors: usize,
        loss_name: &str,
        columns: PyReadonlyArray2<'_, f64>,
    ) -> PyResult<Self> {
        let ((points, dim), loss) = (points(&x), loss(loss_name)?);
        let (columns, _) = self::points(&columns);
        let kernel =
            py.detach(|| npkl::LearnedKernel::new(points, dim, neighbors, loss, columns)).map_err(value_error)?;
        Ok(LearnedKernel(kernel))
    }

    /// The learned features of the rows of `x` (`n × rank`).
    fn transform<'py>(&self, py: Python<'py>, x: PyReadonlyArray2<'py, f64>) -> PyResult<Bound<'py, PyArray2<f64>>> {
        let (rows, dim) = points(&x);
        if dim != self.0.dim() {
            return Err(value_error(format!("x has {dim} features, the learned kernel {}", self.0.dim())));
        }
        let features = py.detach(|| self.0.extend(&rows)).map_err(value_error)?;
        matrix(py, features, self.0.rank())
    }
}

/// Learns a kernel on the rows of `x` from `pairs` (`(i, j, must)` triples) or, without
/// them, from pairs drawn from `classes` (`fraction·n` of each kind), and clusters with it.
/// Returns the learned kernel, the training points' features (`n × rank`), their clusters,
/// the centroids (`clusters × rank`) and a summary.
#[pyfunction]
#[pyo3(signature = (x, *, pairs = None, classes = None, fraction = 0.5, rank = None, neighbors = npkl::DEFAULT_NEIGHBORS, loss = "hinge", clusters = 2, seed = 1))]
#[allow(clippy::too_many_arguments, clippy::type_complexity)]
pub fn npkl_fit<'py>(
    py: Python<'py>,
    x: PyReadonlyArray2<'py, f64>,
    pairs: Option<Vec<(usize, usize, bool)>>,
    classes: Option<Vec<usize>>,
    fraction: f64,
    rank: Option<usize>,
    neighbors: usize,
    loss: &str,
    clusters: usize,
    seed: u64,
) -> PyResult<(
    LearnedKernel,
    Bound<'py, PyArray2<f64>>,
    Bound<'py, PyArray1<u32>>,
    Bound<'py, PyArray2<f64>>,
    Bound<'py, PyDict>,
)> {
    let (points, dim) = points(&x);
    let settings = NpklSettings { rank, neighbors, loss: self::loss(loss)?, clusters, seed };
    let pairs: Option<Vec<Pair>> = pairs.map(|pairs| {
        pairs.into_iter().map(|(i, j, must)| Pair::new(i, j, if must { Link::Must } else { Link::Cannot })).collect()
    });
    let source = match (&pairs, &classes) {
        (Some(pairs), _) => PairSource::Given(pairs),
        (None, Some(classes)) => PairSource::FromClasses { classes, fraction },
        (None, None) => {
            return Err(value_error("no pairs: give must-link/cannot-link pairs or classes to draw them from"));
        }
    };
    let run = py.detach(|| npkl::learn(points, dim, source, &settings, |_| ())).map_err(value_error)?;
    let summary = PyDict::new(py);
    summary.set_item("pairs", run.pairs.total)?;
    summary.set_item("must_link", run.pairs.must)?;
    summary.set_item("rank", run.kernel.rank())?;
    summary.set_item("sigma", run.kernel.graph().sigma())?;
    summary.set_item("sweeps", run.outcome.sweeps)?;
    summary.set_item("objective", run.outcome.objective)?;
    summary.set_item("converged", run.outcome.reason == kestrel_core::npkl::StopReason::Converged)?;
    summary.set_item("inertia", run.clusters.inertia)?;
    let rank = run.kernel.rank();
    let features = matrix(py, run.kernel.columns().to_vec(), rank)?;
    let centroids = matrix(py, run.clusters.centroids, rank)?;
    let assignments = run.clusters.assignments.into_pyarray(py);
    Ok((LearnedKernel(run.kernel), features, assignments, centroids, summary))
}
