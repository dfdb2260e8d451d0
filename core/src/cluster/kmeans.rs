//! k-means with k-means++ seeding and restarts, in caller storage.
//!
//! Kernel k-means with a learned kernel `K = VᵀV` is k-means on the columns `v_i`: the
//! feature map of point `i` is `v_i` itself, so `‖φ(x_i) − μ_c‖² = ‖v_i − μ_c‖²` with
//! `μ_c` the mean of the columns in cluster `c` (the clustering step of seed 004,
//! Sect. IV-A). The same routine clusters raw features (the plain k-means baseline).
//!
//! Each restart seeds by k-means++ (Arthur & Vassilvitskii 2007: the first centre uniform,
//! each next one drawn with probability proportional to the squared distance to the
//! nearest centre chosen), then runs Lloyd iterations — assign each point to its nearest
//! centre (ties to the lower index), move each centre to its cluster's mean — until no
//! assignment changes or the iteration cap. A cluster left empty restarts at the point
//! farthest from its centre. The restart with the least inertia `Σ_i ‖x_i − μ_{c(i)}‖²` is
//! kept.
//!
//! Cost: `O(n·c·d)` per Lloyd iteration and per seeding. **Memory**: `2cd + n` scalars
//! (best and current centres, distances; [`KMeans::scalars_len`]) and `2n + c` `u32`
//! (best and current assignments, cluster sizes; [`KMeans::indices_len`]).

#![allow(
    clippy::indexing_slicing,
    reason = "points n × d, values 2cd + n and indices 2n + c, checked in fit_in; assignments < c"
)]

use crate::linalg::squared_distance_prefix;
use crate::storage::{Storage, check_capacity};
use crate::{Error, Real, Rng};

use crate::kernel::point_count;

/// Parameters of k-means, unchecked: [`KMeansParams::new`], the setters, then
/// [`check`](KMeansParams::check).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KMeansParams {
    clusters: usize,
    restarts: usize,
    max_iterations: usize,
}

impl KMeansParams {
    /// `clusters` clusters, 20 restarts (the paper's protocol), at most 300 iterations each.
    pub fn new(clusters: usize) -> Self {
        KMeansParams { clusters, restarts: 20, max_iterations: 300 }
    }

    /// Number of k-means++ restarts (≥ 1); the best by inertia is kept.
    pub fn restarts(mut self, restarts: usize) -> Self {
        self.restarts = restarts;
        self
    }

    /// Lloyd iterations per restart (≥ 1).
    pub fn max_iterations(mut self, max_iterations: usize) -> Self {
        self.max_iterations = max_iterations;
        self
    }

    /// Validates the parameters.
    ///
    /// # Errors
    /// `InvalidParam` naming `clusters`, `restarts` or `max_iterations` when 0.
    pub fn check(self) -> Result<ValidKMeansParams, Error> {
        if self.clusters == 0 {
            return Err(Error::InvalidParam { name: "clusters" });
        }
        if self.restarts == 0 {
            return Err(Error::InvalidParam { name: "restarts" });
        }
        if self.max_iterations == 0 {
            return Err(Error::InvalidParam { name: "max_iterations" });
        }
        Ok(ValidKMeansParams(self))
    }
}

/// k-means parameters that passed [`KMeansParams::check`]; read-only.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ValidKMeansParams(KMeansParams);

impl ValidKMeansParams {
    /// Number of clusters `c ≥ 1`.
    pub fn clusters(&self) -> usize {
        self.0.clusters
    }

    /// Number of k-means++ restarts (≥ 1).
    pub fn restarts(&self) -> usize {
        self.0.restarts
    }

    /// Lloyd iterations per restart (≥ 1).
    pub fn max_iterations(&self) -> usize {
        self.0.max_iterations
    }
}

/// A clustering: the best of several k-means++ restarts.
///
/// # Examples
/// ```
/// use kestrel_core::cluster::{KMeans, KMeansParams};
/// use kestrel_core::Rng;
/// let points = [0.0f64, 0.1, 0.2, 10.0, 10.1, 10.2]; // 6 points in 1-D
/// let km = KMeans::fit_in([0.0; KMeans::scalars_len(6, 1, 2)], [0u32; KMeans::indices_len(6, 2)],
///     &points, 1, KMeansParams::new(2).check()?, &mut Rng::seed_from_u64(4))?;
/// let a = km.assignments();
/// assert!(a[0] == a[1] && a[1] == a[2] && a[3] == a[4] && a[4] == a[5] && a[0] != a[3]);
/// assert!((km.inertia() - 0.04).abs() < 1e-12);
/// # Ok::<(), kestrel_core::Error>(())
/// ```
#[derive(Debug)]
pub struct KMeans<T, S, I> {
    values: S,
    indices: I,
    n: usize,
    dim: usize,
    clusters: usize,
    inertia: T,
    iterations: usize,
    converged: bool,
}

impl KMeans<(), (), ()> {
    /// Scalars of the value storage for `n` points of `dim` coordinates and `c`
    /// clusters: `2cd + n`.
    pub const fn scalars_len(n: usize, dim: usize, clusters: usize) -> usize {
        clusters.saturating_mul(dim).saturating_mul(2).saturating_add(n)
    }

    /// `u32` entries of the index storage: `2n + c`.
    pub const fn indices_len(n: usize, clusters: usize) -> usize {
        n.saturating_mul(2).saturating_add(clusters)
    }

    /// Bytes of both storages for scalar `T`.
    pub const fn bytes<T>(n: usize, dim: usize, clusters: usize) -> usize {
        let values = Self::scalars_len(n, dim, clusters).saturating_mul(core::mem::size_of::<T>());
        values.saturating_add(Self::indices_len(n, clusters).saturating_mul(4))
    }
}

impl<T: Real, S: Storage<T>, I: Storage<u32>> KMeans<T, S, I> {
    /// Clusters the rows of `points` (row-major, `dim` columns).
    ///
    /// # Errors
    /// `InvalidParam` for `dim = 0`, more clusters than points
    /// (`clusters`) or `n ≥ 2³²` (`n`); `DimensionMismatch` when `points.len()` is not a multiple of `dim`;
    /// `NonFinite` for NaN/∞; `CapacityExceeded` when a storage is too short.
    pub fn fit_in(
        values: S,
        indices: I,
        points: &[T],
        dim: usize,
        params: ValidKMeansParams,
        rng: &mut Rng,
    ) -> Result<Self, Error> {
        let n = point_count(points, dim)?;
        let c = params.clusters();
        if c > n {
            return Err(Error::InvalidParam { name: "clusters" });
        }
        if n >= u32::MAX as usize {
            return Err(Error::InvalidParam { name: "n" });
        }
        check_capacity(KMeans::scalars_len(n, dim, c), values.as_ref().len())?;
        check_capacity(KMeans::indices_len(n, c), indices.as_ref().len())?;
        let mut km = KMeans { values, indices, n, dim, clusters: c, inertia: T::ZERO, iterations: 0, converged: false };
        for restart in 0..params.restarts() {
            let (inertia, iterations, converged) = km.restart(points, params.max_iterations(), rng);
            if restart == 0 || inertia < km.inertia {
                km.inertia = inertia;
                km.iterations = iterations;
                km.converged = converged;
                let (cd, n) = (c * dim, n);
                let values = km.values.as_mut();
                values.copy_within(cd..2 * cd, 0);
                km.indices.as_mut().copy_within(n..2 * n, 0);
            }
        }
        Ok(km)
    }

    /// Cluster of each point, `0..c`.
    pub fn assignments(&self) -> &[u32] {
        &self.indices.as_ref()[..self.n]
    }

    /// Centre of cluster `c` (`dim` scalars), or `None` for `c ≥ clusters`.
    pub fn centroid(&self, c: usize) -> Option<&[T]> {
        if c >= self.clusters {
            return None;
        }
        self.values.as_ref().get(c * self.dim..(c + 1) * self.dim)
    }

    /// Inertia `Σ_i ‖x_i − μ_{c(i)}‖²` of the kept restart.
    pub fn inertia(&self) -> T {
        self.inertia
    }

    /// Lloyd iterations of the kept restart.
    pub fn iterations(&self) -> usize {
        self.iterations
    }

    /// Whether the kept restart stopped because no assignment changed (rather than at
    /// the iteration cap).
    pub fn converged(&self) -> bool {
        self.converged
    }

    /// One k-means++ seeding and Lloyd run in the "current" halves of the storage;
    /// returns `(inertia, iterations, converged)`.
    fn restart(&mut self, points: &[T], max_iterations: usize, rng: &mut Rng) -> (T, usize, bool) {
        let (n, d, c) = (self.n, self.dim, self.clusters);
        let values = self.values.as_mut();
        let (centres, dist) = values[c * d..].split_at_mut(c * d);
        let dist = &mut dist[..n];
        let indices = self.indices.as_mut();
        let (assign, counts) = indices[n..].split_at_mut(n);
        let counts = &mut counts[..c];
        let point = |p: usize| &points[p * d..(p + 1) * d];

        // k-means++ seeding.
        let first = rng.below(n);
        centres[..d].copy_from_slice(point(first));
        for (p, dp) in dist.iter_mut().enumerate() {
            *dp = squared_distance_prefix(point(p), &centres[..d]);
        }
        for k in 1..c {
            let total = dist.iter().fold(T::ZERO, |acc, &x| acc + x);
            let chosen = if total > T::ZERO && total.is_finite() {
                // The first point whose running sum passes the target (the last point
                // with positive weight if rounding keeps the sum below it).
                let target = rng.uniform::<T>() * total;
                let (mut chosen, mut cumulative) = (0, T::ZERO);
                for (p, &dp) in dist.iter().enumerate() {
                    if dp > T::ZERO {
                        chosen = p;
                        cumulative += dp;
                        if cumulative > target {
                            break;
                        }
                    }
                }
                chosen
            } else {
                rng.below(n)
            };
            let centre = &mut centres[k * d..(k + 1) * d];
            centre.copy_from_slice(point(chosen));
            for (p, dp) in dist.iter_mut().enumerate() {
                let e = squared_distance_prefix(point(p), centre);
                if e < *dp {
                    *dp = e;
                }
            }
        }

        // Lloyd iterations.
        let mut iterations = 0;
        loop {
            let mut changed = false;
            let mut inertia = T::ZERO;
            for p in 0..n {
                let (mut best, mut best_d) = (0u32, T::ZERO);
                for (k, centre) in (0u32..).zip(centres.chunks_exact(d)) {
                    let dk = squared_distance_prefix(point(p), centre);
                    if k == 0 || dk < best_d {
                        best = k;
                        best_d = dk;
                    }
                }
                changed |= iterations == 0 || assign[p] != best;
                assign[p] = best;
                dist[p] = best_d;
                inertia += best_d;
            }
            if !changed {
                return (inertia, iterations, true);
            }
            if iterations == max_iterations {
                return (inertia, iterations, false);
            }
            iterations += 1;
            centres.fill(T::ZERO);
            counts.fill(0);
            for (p, &k) in assign.iter().enumerate() {
                let k = k as usize;
                counts[k] += 1;
                for (m, &x) in centres[k * d..(k + 1) * d].iter_mut().zip(point(p)) {
                    *m += x;
                }
            }
            for (k, centre) in centres.chunks_exact_mut(d).enumerate() {
                if counts[k] > 0 {
                    let inv = T::ONE / T::from_f64(f64::from(counts[k]));
                    centre.iter_mut().for_each(|m| *m *= inv);
                } else {
                    // Empty: restart at the point farthest from its centre.
                    let far = (0..n).fold(0, |best, p| if dist[p] > dist[best] { p } else { best });
                    centre.copy_from_slice(point(far));
                    dist[far] = T::ZERO;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::*;
    use std::vec;

    #[test]
    fn separated_blobs_and_bad_input() {
        let mut rng = Rng::seed_from_u64(3);
        let centres = [[0.0, 0.0], [5.0, 5.0], [0.0, 8.0]];
        let mut points = vec![];
        for p in 0..60 {
            let c = centres[p % 3];
            points.push(c[0] + 0.3 * rng.normal::<f64>());
            points.push(c[1] + 0.3 * rng.normal::<f64>());
        }
        let fit = |points: &[f64], params: KMeansParams, rng: &mut Rng| {
            KMeans::fit_in(
                vec![0.0; KMeans::scalars_len(60, 2, 3)],
                vec![0; KMeans::indices_len(60, 3)],
                points,
                2,
                params.check()?,
                rng,
            )
        };
        let km = fit(&points, KMeansParams::new(3).restarts(3), &mut rng).unwrap();
        let a = km.assignments();
        for p in 0..60 {
            assert_eq!(a[p], a[p % 3], "point {p}");
        }
        assert!(km.converged() && a[0] != a[1] && a[1] != a[2] && a[0] != a[2]);
        assert!(km.centroid(3).is_none());
        assert_eq!(fit(&points, KMeansParams::new(0), &mut rng).err(), Some(Error::InvalidParam { name: "clusters" }));
        assert_eq!(
            fit(&points[..4], KMeansParams::new(3), &mut rng).err(),
            Some(Error::InvalidParam { name: "clusters" })
        );
        let mut nan = points.clone();
        nan[7] = f64::NAN;
        assert_eq!(fit(&nan, KMeansParams::new(3), &mut rng).err(), Some(Error::NonFinite));
        let r = KMeans::fit_in([0.0; 3], [0u32; 200], &points, 2, KMeansParams::new(3).check().unwrap(), &mut rng);
        assert_eq!(r.err(), Some(Error::CapacityExceeded { needed: 72, capacity: 3 }));
    }

    #[test]
    fn identical_points_fill_every_cluster() {
        let points = [1.0f32; 10];
        let km = KMeans::fit_in(
            [0.0; KMeans::scalars_len(5, 2, 3)],
            [0u32; KMeans::indices_len(5, 3)],
            &points,
            2,
            KMeansParams::new(3).check().unwrap(),
            &mut Rng::seed_from_u64(1),
        )
        .unwrap();
        assert_eq!(km.inertia(), 0.0);
        assert!(km.assignments().iter().all(|&a| a < 3));
    }
}
