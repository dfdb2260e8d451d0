//! k-means with [`RESTARTS`] k-means++ restarts on dense rows ([`kmeans`]) and the
//! [`Clusters`] it finds: `kestrel cluster --method kmeans` on the data, spectral
//! clustering on the eigenmap's rows and NPKL on the learned columns.
//!
//! **Memory**: [`KMeans::bytes`] for `n` rows of `d` and `c` clusters, allocated fallibly.

use kestrel_core::cluster::{KMeans, KMeansParams};
use kestrel_core::{Real, Rng};

use super::fit::FitError;
use crate::limits::zeroed;

/// k-means++ restarts (NPKL's paper uses 20; scikit-learn's `SpectralClustering` 10).
pub const RESTARTS: usize = 20;

/// A clustering of `n` rows.
#[derive(Clone, Debug, PartialEq)]
pub struct Clusters {
    /// The cluster of each row.
    pub assignments: Vec<u32>,
    /// The centroids, `c` rows of the clustered features.
    pub centroids: Vec<f64>,
    /// Sum of squared distances to the centroids.
    pub inertia: f64,
}

/// k-means with [`RESTARTS`] restarts of `rows` (`n` rows of `dim`) into `clusters`
/// clusters, the best inertia kept.
///
/// # Errors
/// `FitError::Param` naming k-means for bad shapes or `clusters` out of `1..=n`;
/// `FitError::Train` when a buffer cannot be allocated.
pub fn kmeans<T: Real>(rows: &[T], dim: usize, clusters: usize, rng: &mut Rng) -> Result<Clusters, FitError> {
    let n = rows.len().checked_div(dim).unwrap_or(0);
    let what = "k-means";
    let km = KMeans::fit_in(
        zeroed(KMeans::scalars_len(n, dim, clusters), what)?,
        zeroed(KMeans::indices_len(n, clusters), what)?,
        rows,
        dim,
        KMeansParams::new(clusters).restarts(RESTARTS).check().map_err(FitError::param(what))?,
        rng,
    )
    .map_err(FitError::param(what))?;
    Ok(of(&km, clusters))
}

/// The clusters of a fitted k-means.
pub(super) fn of<T: Real, S: kestrel_core::storage::Storage<T>, I: kestrel_core::storage::Storage<u32>>(
    km: &KMeans<T, S, I>,
    clusters: usize,
) -> Clusters {
    let centroids = (0..clusters).filter_map(|c| km.centroid(c)).flatten().map(|x| x.to_f64()).collect();
    Clusters { assignments: km.assignments().to_vec(), centroids, inertia: km.inertia().to_f64() }
}
