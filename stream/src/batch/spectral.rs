//! Spectral methods on the kNN graph of dense rows in memory (seed 000 §5): the Laplacian
//! eigenmap ([`eigenmap`]), its linear counterpart the locality preserving projection
//! ([`lpp`]) and spectral clustering ([`spectral_clusters`]), by the core's
//! [`kestrel_core::spectral`] (Lanczos on the sparse normalised Laplacian).
//!
//! **One graph.** [`knn_graph`] builds the graph of eq. (1) of seed 004 — the symmetric
//! kNN graph with Gaussian weights, `σ²` the mean squared kNN distance — that NPKL
//! ([`super::npkl`]) learns on too: exact neighbours, `O(n log n + n·w·d)` by the
//! sorted-projection search.
//!
//! **Which rows.** The eigenmap and spectral clustering place the training rows only (the
//! eigenvectors of their graph); the LPP is a linear map, saved as a projection model that
//! places new rows too.
//!
//! **Memory**: the graph [`Laplacian::bytes`]`(n, k)` (`2nk + n` scalars, `2nk + 2n + 1`
//! `u32`), the Lanczos workspace [`eigenmap_workspace_len`]`(n, m)` (about `n·s` scalars
//! for `s ≤ max(4(m + 1), 40)` steps), the `n·m` embedding and, for clustering,
//! [`KMeans::bytes`](kestrel_core::cluster::KMeans::bytes); LPP needs `3d² + 3d` scalars
//! beside the graph; [`eigenmap_bytes`], [`lpp_bytes`] and [`clustering_bytes`] add
//! them up with the `n·d` dense rows, and each method checks its budget against that sum
//! before it allocates anything. All allocated fallibly.

use std::time::Instant;

use kestrel_core::cluster::{KMeans, KMeansParams};
use kestrel_core::kpca::KernelProjection;
use kestrel_core::linalg::LanczosOutcome;
use kestrel_core::npkl::{GraphParams, Laplacian};
use kestrel_core::spectral::{self, eigenmap_workspace_len, lpp_work_len};
use kestrel_core::{Real, Rng};

use super::check_budget;
use super::clusters::{self, Clusters, RESTARTS};
use super::fit::FitError;
use crate::limits::zeroed;

/// Nearest neighbours of the graph unless told (scikit-learn's `SpectralClustering`
/// default).
pub const DEFAULT_NEIGHBORS: usize = 10;

/// The neighbours of a kNN graph of `n` rows: those `given`, else `default` or, on fewer
/// rows, every other row (`n − 1`, at least 1). A number given is kept as it is: too large
/// for the rows, the graph refuses it by name.
pub fn neighbors_for(given: Option<usize>, default: usize, n: usize) -> usize {
    given.unwrap_or_else(|| default.min(n.saturating_sub(1)).max(1))
}

/// The kNN graph Laplacian in heap storage.
pub type Graph<T> = Laplacian<T, Vec<T>, Vec<u32>>;

/// The exact kNN graph of `points` (`n` rows of `dim`) with `k` neighbours, `σ` and `δ` by
/// default (see [`Laplacian`]).
///
/// # Errors
/// `FitError::Settings` for fewer than two rows, no features, or `k` out of `1..n`;
/// `FitError::Param` naming the graph for NaN/∞ in the points; `FitError::Train` when a
/// buffer cannot be allocated.
pub fn knn_graph<T: Real>(points: &[T], dim: usize, k: usize) -> Result<Graph<T>, FitError> {
    let n = rows(points, dim)?;
    if k == 0 || k >= n {
        return Err(FitError::Settings(format!(
            "neighbors must be between 1 and {} (one less than the number of rows)",
            n - 1
        )));
    }
    let what = "the kNN graph";
    Laplacian::build_in(
        zeroed(Laplacian::scalars_len(n, k), what)?,
        zeroed(Laplacian::indices_len(n, k), what)?,
        points,
        dim,
        GraphParams::new().neighbors(k).check().map_err(FitError::param(what))?,
    )
    .map_err(FitError::param(what))
}

/// The number of rows of `points`, at least two, with `dim ≥ 1` features.
pub(super) fn rows<T>(points: &[T], dim: usize) -> Result<usize, FitError> {
    let n = points.len().checked_div(dim).unwrap_or(0);
    if n < 2 || n * dim != points.len() {
        return Err(FitError::Settings(format!(
            "needs at least two rows with features (found {n} rows, {dim} features)"
        )));
    }
    Ok(n)
}

/// Bytes of `n` dense rows of `dim` and their graph of `k` neighbours.
fn graph_bytes<T>(n: usize, dim: usize, k: usize) -> usize {
    let points = n.saturating_mul(dim).saturating_mul(size_of::<T>());
    points.saturating_add(Laplacian::bytes::<T>(n, k))
}

/// Bytes [`eigenmap`] holds for `n` rows of `dim`, `k` neighbours and `m` coordinates:
/// the rows, the graph, Lanczos's workspace, the eigenvalues and the embedding.
pub fn eigenmap_bytes<T>(n: usize, dim: usize, k: usize, m: usize) -> usize {
    let scalars = eigenmap_workspace_len(n, m).saturating_add(m).saturating_add(n.saturating_mul(m));
    graph_bytes::<T>(n, dim, k).saturating_add(scalars.saturating_mul(size_of::<T>()))
}

/// Bytes [`lpp`] holds for `n` rows of `dim`, `k` neighbours and `r` directions: the
/// rows, the graph, the `3d² + 3d` work and the model.
pub fn lpp_bytes<T>(n: usize, dim: usize, k: usize, r: usize) -> usize {
    let scalars = lpp_work_len(dim).saturating_add(KernelProjection::scalars_len(dim, dim, r));
    graph_bytes::<T>(n, dim, k).saturating_add(scalars.saturating_mul(size_of::<T>()))
}

/// Bytes [`spectral_clusters`] holds for `n` rows of `dim`, `k` neighbours and `c`
/// clusters: the rows, the graph, Lanczos's workspace, the `n × c` embedding and k-means.
pub fn clustering_bytes<T>(n: usize, dim: usize, k: usize, c: usize) -> usize {
    let scalars = eigenmap_workspace_len(n, c).saturating_add(n.saturating_mul(c));
    let kmeans = KMeans::bytes::<T>(n, c, c);
    graph_bytes::<T>(n, dim, k).saturating_add(scalars.saturating_mul(size_of::<T>())).saturating_add(kmeans)
}

/// Wall-clock seconds of a spectral method's two steps.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Seconds {
    /// The kNN graph.
    pub graph: f64,
    /// The eigenproblem (and k-means, for clustering).
    pub solve: f64,
}

/// A Laplacian eigenmap of the training rows.
#[derive(Debug)]
pub struct Embedding<T> {
    /// The coordinates, row-major `n × m` (row `p` for point `p`), `YᵀDY = I`.
    pub coordinates: Vec<T>,
    /// The `m` smallest nontrivial eigenvalues `λ` of the normalised Laplacian, increasing.
    pub eigenvalues: Vec<T>,
    /// The graph's width `σ`.
    pub sigma: T,
    /// How Lanczos ended.
    pub lanczos: LanczosOutcome<T>,
    /// Time of each step.
    pub seconds: Seconds,
}

/// The Laplacian eigenmap (seed 000 §5.1) of `points` (`n` rows of `dim`) in `components`
/// coordinates, on the graph of `neighbors` nearest neighbours, within `budget` bytes
/// ([`eigenmap_bytes`]).
///
/// # Errors
/// As [`knn_graph`]; `OverBudget` beyond `budget`; `FitError::Settings` for `components` out of `1..n`; `FitError::Param`
/// naming the eigenmap for the core's errors (a point of degree 0, a Lanczos breakdown on a
/// disconnected graph).
pub fn eigenmap<T: Real>(
    points: &[T],
    dim: usize,
    neighbors: usize,
    components: usize,
    budget: Option<usize>,
) -> Result<Embedding<T>, FitError> {
    let n = rows(points, dim)?;
    if components == 0 || components >= n {
        return Err(FitError::Settings(format!("components must be between 1 and {} for {n} rows", n - 1)));
    }
    check_budget(eigenmap_bytes::<T>(n, dim, neighbors, components), budget).map_err(FitError::Train)?;
    let t0 = Instant::now();
    let graph = knn_graph(points, dim, neighbors)?;
    let graph_seconds = t0.elapsed().as_secs_f64();
    let t0 = Instant::now();
    let what = "the eigenmap";
    let mut workspace = zeroed(eigenmap_workspace_len(n, components), what)?;
    let mut eigenvalues = zeroed(components, what)?;
    let mut coordinates = zeroed(n * components, what)?;
    let lanczos = spectral::eigenmap(&graph.view(), &mut workspace, &mut eigenvalues, &mut coordinates)
        .map_err(FitError::param(what))?;
    let seconds = Seconds { graph: graph_seconds, solve: t0.elapsed().as_secs_f64() };
    Ok(Embedding { coordinates, eigenvalues, sigma: graph.sigma(), lanczos, seconds })
}

/// The locality preserving projection (seed 000 §5.1) of `points` (`n` rows of `dim`) onto
/// `components` directions, on the graph of `neighbors` nearest neighbours: a model that
/// projects any row (`y = φᵀ(x − x̄)`; its eigenvalues the `μ`, increasing), within
/// `budget` bytes ([`lpp_bytes`]).
///
/// # Errors
/// As [`knn_graph`]; `OverBudget` beyond `budget`; `FitError::Settings` for `components` out of `1..=dim`;
/// `FitError::Param` naming the projection for the core's errors (fewer directions of
/// nonzero variance than `components`, a point of degree 0).
pub fn lpp<T: Real>(
    points: &[T],
    dim: usize,
    neighbors: usize,
    components: usize,
    budget: Option<usize>,
) -> Result<KernelProjection<T, Vec<T>>, FitError> {
    let n = rows(points, dim)?;
    if components == 0 || components > dim {
        return Err(FitError::Settings(format!(
            "components must be between 1 and the number of features ({dim}) for lpp"
        )));
    }
    check_budget(lpp_bytes::<T>(n, dim, neighbors, components), budget).map_err(FitError::Train)?;
    let graph = knn_graph(points, dim, neighbors)?;
    let what = "the locality preserving projection";
    let mut work = zeroed(lpp_work_len(dim), what)?;
    let storage = zeroed(KernelProjection::scalars_len(dim, dim, components), what)?;
    spectral::lpp(&graph.view(), points, dim, components, &mut work, storage).map_err(FitError::param(what))
}

/// A spectral clustering and what it took.
#[derive(Debug)]
pub struct SpectralClusters {
    /// The clusters (centroids in the normalised eigenvector rows).
    pub clusters: Clusters,
    /// The graph's width `σ`.
    pub sigma: f64,
    /// How Lanczos ended: its steps and relative Ritz residual.
    pub lanczos: LanczosOutcome<f64>,
    /// Time of each step.
    pub seconds: Seconds,
}

/// Spectral clustering (seed 000 §5.2, Ng–Jordan–Weiss) of `points` (`n` rows of `dim`)
/// into `clusters` clusters on the graph of `neighbors` nearest neighbours: the `c` leading
/// eigenvectors of `D^{−1/2} S D^{−1/2}`, rows normalised, k-means with [`RESTARTS`]
/// restarts seeded by `seed`, within `budget` bytes ([`clustering_bytes`]).
///
/// # Errors
/// As [`knn_graph`]; `OverBudget` beyond `budget`; `FitError::Settings` for `clusters` out of `2..n`; `FitError::Param`
/// naming spectral clustering for the core's errors.
pub fn spectral_clusters<T: Real>(
    points: &[T],
    dim: usize,
    neighbors: usize,
    clusters: usize,
    seed: u64,
    budget: Option<usize>,
) -> Result<SpectralClusters, FitError> {
    let n = rows(points, dim)?;
    if clusters < 2 || clusters >= n {
        return Err(FitError::Settings(format!("clusters must be between 2 and {} for {n} rows", n - 1)));
    }
    check_budget(clustering_bytes::<T>(n, dim, neighbors, clusters), budget).map_err(FitError::Train)?;
    let t0 = Instant::now();
    let graph = knn_graph(points, dim, neighbors)?;
    let graph_seconds = t0.elapsed().as_secs_f64();
    let t0 = Instant::now();
    let what = "spectral clustering";
    let params = KMeansParams::new(clusters).restarts(RESTARTS).check().map_err(FitError::param(what))?;
    let mut workspace = zeroed(eigenmap_workspace_len(n, clusters), what)?;
    let mut embedding = zeroed(n * clusters, what)?;
    let (km, lanczos) = spectral::spectral_clustering(
        &graph.view(),
        params,
        &mut Rng::seed_from_u64(seed),
        &mut workspace,
        &mut embedding,
        zeroed::<T>(KMeans::scalars_len(n, clusters, clusters), what)?,
        zeroed::<u32>(KMeans::indices_len(n, clusters), what)?,
    )
    .map_err(FitError::param(what))?;
    let lanczos = LanczosOutcome { exit: lanczos.exit, steps: lanczos.steps, residual: lanczos.residual.to_f64() };
    let seconds = Seconds { graph: graph_seconds, solve: t0.elapsed().as_secs_f64() };
    Ok(SpectralClusters { clusters: clusters::of(&km, clusters), sigma: graph.sigma().to_f64(), lanczos, seconds })
}
