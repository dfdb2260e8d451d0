//! Kernel learning from pairs and clustering with the learned kernel (NPKL by block
//! coordinate descent, seed 004), on dense points held in memory.
//!
//! The steps are the core's: the kNN graph Laplacian ([`Laplacian`]), the must-link and
//! cannot-link pairs ([`Constraints`], given or drawn from classes), BCDKL ([`Npkl`]) until
//! `‖V(t) − V(t−1)‖/‖V(t)‖ < 10⁻⁵` or 1000 sweeps, then k-means with [`RESTARTS`](super::clusters::RESTARTS)
//! k-means++ restarts on the columns of `V` (kernel k-means on `K = VᵀV`). One generator,
//! seeded by [`NpklSettings::seed`], draws the pairs, the initial `V`, the visiting orders
//! and the k-means seeds, in that order.
//!
//! The result keeps what the out-of-sample extension (eq. 13, [`Extension`]) needs to place
//! new points: the training points, the graph and the learned columns ([`LearnedKernel`]).
//!
//! **Memory** (f64): the points (`n·d`), the graph ([`Laplacian::bytes`]), the pairs
//! ([`Constraints::bytes`]), the solver ([`Npkl::bytes`]) and k-means ([`KMeans::bytes`]);
//! [`NpklRun::bytes`] lists the last four. Every buffer is allocated fallibly.

use std::time::Instant;

use kestrel_core::Rng;
use kestrel_core::cluster::KMeans;
use kestrel_core::npkl::{
    Constraints, Embedding, Extension, Laplacian, Link, Loss, Npkl, NpklParams, Outcome, Pair, SweepReport,
    ValidNpklParams, rank_for_pairs,
};

use super::clusters::{Clusters, kmeans};
use super::fit::FitError;
use super::spectral::{knn_graph, rows};
use crate::limits::zeroed;

/// Nearest neighbours of the graph unless told.
pub const DEFAULT_NEIGHBORS: usize = 5;

/// What [`learn`] is asked to do.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct NpklSettings {
    /// Rank `r` of `K = VᵀV`; `None`: the largest `r` with `r(r+1)/2 ≤` number of pairs.
    pub rank: Option<usize>,
    /// Nearest neighbours `k` of the graph, `1 ≤ k < n`.
    pub neighbors: usize,
    /// The loss between the learned kernel and the pairs.
    pub loss: Loss,
    /// Clusters of k-means on the learned kernel, `1 ≤ c ≤ n`.
    pub clusters: usize,
    /// Seed of the pair draw, the initial `V`, the visiting orders and k-means.
    pub seed: u64,
}

/// Where the pairs come from.
#[derive(Clone, Copy, Debug)]
pub enum PairSource<'a> {
    /// These pairs, checked against the number of points.
    Given(&'a [Pair]),
    /// `⌊fraction·n⌋` must-link and as many cannot-link distinct pairs drawn at random from
    /// the class of each point (`classes[i]`, one per point).
    FromClasses {
        /// The class of each point.
        classes: &'a [usize],
        /// Pairs of each kind per point.
        fraction: f64,
    },
}

/// The training points with their learned columns: places new points by eq. (13).
#[derive(Debug)]
pub struct LearnedKernel {
    points: Vec<f64>,
    dim: usize,
    graph: Laplacian<f64, Vec<f64>, Vec<u32>>,
    params: ValidNpklParams<f64>,
    columns: Vec<f64>,
}

impl LearnedKernel {
    /// The learned kernel of `points` (`n` rows of `dim`) from columns learned earlier with
    /// `neighbors` and `loss` (`columns.len() = n·r`); the graph is built again, as
    /// [`learn`] built it.
    ///
    /// # Errors
    /// `FitError::Param` for a graph or columns that do not fit the points.
    pub fn new(
        points: Vec<f64>,
        dim: usize,
        neighbors: usize,
        loss: Loss,
        columns: Vec<f64>,
    ) -> Result<Self, FitError> {
        let n = points.len().checked_div(dim).unwrap_or(0);
        let rank = columns.len().checked_div(n).unwrap_or(0);
        let params = NpklParams::new(rank, loss).check().map_err(FitError::param("the learned columns"))?;
        let graph = knn_graph(&points, dim, neighbors)?;
        let embedding = Embedding::of_columns(&columns, &params).map_err(FitError::param("the learned columns"))?;
        if embedding.n() != n {
            let error = kestrel_core::Error::DimensionMismatch { expected: n, got: embedding.n() };
            return Err(FitError::Param { what: "the learned columns", error });
        }
        Ok(LearnedKernel { points, dim, graph, params, columns })
    }

    /// The columns `v_i` of the training points, `v_i` at `i·r` (`K_ij = v_i·v_j`).
    pub fn columns(&self) -> &[f64] {
        &self.columns
    }

    /// The rank `r`.
    pub fn rank(&self) -> usize {
        self.params.rank()
    }

    /// Features of a point.
    pub fn dim(&self) -> usize {
        self.dim
    }

    /// The training points, `n` rows of [`dim`](Self::dim).
    pub fn points(&self) -> &[f64] {
        &self.points
    }

    /// The kNN graph of the training points.
    pub fn graph(&self) -> &Laplacian<f64, Vec<f64>, Vec<u32>> {
        &self.graph
    }

    /// The columns of new points (`rows`, each [`dim`](Self::dim) long) by eq. (13):
    /// `r` values per row.
    ///
    /// # Errors
    /// `FitError::Param` for a row of the wrong length or with NaN/∞; `FitError::Train`
    /// when the result cannot be allocated.
    pub fn extend(&self, rows: &[f64]) -> Result<Vec<f64>, FitError> {
        let what = "the points to place";
        if !rows.len().is_multiple_of(self.dim) {
            return Err(FitError::Param {
                what,
                error: kestrel_core::Error::DimensionMismatch { expected: self.dim, got: rows.len() % self.dim },
            });
        }
        let (k, rank) = (self.graph.k(), self.rank());
        let embedding = Embedding::of_columns(&self.columns, &self.params).map_err(FitError::param(what))?;
        let mut extension =
            Extension::new_in(vec![0.0; k], vec![0u32; k], self.graph.view(), &self.points, self.dim, embedding)
                .map_err(FitError::param(what))?;
        let mut out = zeroed(rows.len() / self.dim * rank, "the placed points")?;
        for (x, v) in rows.chunks_exact(self.dim).zip(out.chunks_exact_mut(rank)) {
            extension.column(x, v).map_err(FitError::param(what))?;
        }
        Ok(out)
    }
}

/// The pairs the kernel was learned from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PairCounts {
    /// All pairs.
    pub total: usize,
    /// Must-link pairs.
    pub must: usize,
    /// Points in at least one pair.
    pub constrained_points: usize,
}

/// Wall-clock seconds of each step.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Seconds {
    /// The kNN graph.
    pub graph: f64,
    /// BCDKL.
    pub learn: f64,
    /// k-means.
    pub cluster: f64,
}

/// Everything [`learn`] found.
#[derive(Debug)]
pub struct NpklRun {
    /// The learned kernel, ready to place new points.
    pub kernel: LearnedKernel,
    /// k-means on it.
    pub clusters: Clusters,
    /// The pairs.
    pub pairs: PairCounts,
    /// How BCDKL ended.
    pub outcome: Outcome<f64>,
    /// The objective after each sweep.
    pub objectives: Vec<f64>,
    /// Time of each step.
    pub seconds: Seconds,
    /// Bytes of the graph, the pairs, the solver and k-means, by name.
    pub bytes: [(&'static str, usize); 4],
}

/// Learns a kernel on `points` (`n` rows of `dim`) from `pairs` and clusters with it;
/// `on_sweep` sees each sweep of BCDKL.
///
/// # Errors
/// `FitError::Settings` for fewer than two points, no features, settings out of range or
/// more pairs asked than exist; `FitError::Param` for invalid pairs or a core error of a
/// step (named); `FitError::Train` when a buffer cannot be allocated.
pub fn learn(
    points: Vec<f64>,
    dim: usize,
    pairs: PairSource<'_>,
    settings: &NpklSettings,
    on_sweep: impl FnMut(&SweepReport<f64>),
) -> Result<NpklRun, FitError> {
    let n = rows(&points, dim)?;
    if settings.clusters == 0 || settings.clusters > n {
        return Err(FitError::Settings(format!("clusters must be between 1 and the number of rows ({n})")));
    }
    let k = settings.neighbors;
    let mut rng = Rng::seed_from_u64(settings.seed);
    let constraints = constraints(n, pairs, &mut rng)?;
    let rank = match settings.rank {
        Some(0) => return Err(FitError::Settings("rank must be at least 1".into())),
        Some(r) => r,
        None if constraints.is_empty() => return Err(FitError::Settings("no pairs: give the rank".into())),
        None => rank_for_pairs(constraints.len()),
    };
    let params = NpklParams::new(rank, settings.loss).check().map_err(FitError::param("the learner's parameters"))?;

    let t0 = Instant::now();
    let graph = knn_graph(&points, dim, k)?;
    let graph_seconds = t0.elapsed().as_secs_f64();

    let t0 = Instant::now();
    let (m, t_max) = (constraints.len(), constraints.max_degree());
    let mut npkl = Npkl::new_in(
        zeroed(Npkl::scalars_len(n, rank, t_max), "the solver")?,
        zeroed(Npkl::indices_len(n), "the solver")?,
        graph.view(),
        constraints.view(),
        params,
        &mut rng,
    )
    .map_err(FitError::param("the learner's parameters"))?;
    let mut objectives = Vec::new();
    let mut on_sweep = on_sweep;
    let outcome = npkl.run_with(&mut rng, |report| {
        objectives.push(report.objective);
        on_sweep(report);
    });
    let columns = npkl.columns().to_vec();
    drop(npkl);
    let learn_seconds = t0.elapsed().as_secs_f64();

    let t0 = Instant::now();
    let clusters = kmeans(&columns, rank, settings.clusters, &mut rng)?;
    let seconds = Seconds { graph: graph_seconds, learn: learn_seconds, cluster: t0.elapsed().as_secs_f64() };
    let must = constraints.pairs().filter(|p| p.link == Link::Must).count();
    let pairs = PairCounts { total: m, must, constrained_points: constraints.constrained_points() };
    let bytes = [
        ("graph", Laplacian::bytes::<f64>(n, k)),
        ("pairs", Constraints::bytes(n, m)),
        ("solver", Npkl::bytes::<f64>(n, rank, t_max)),
        ("kmeans", KMeans::bytes::<f64>(n, rank, settings.clusters)),
    ];
    let kernel = LearnedKernel { points, dim, graph, params, columns };
    Ok(NpklRun { kernel, clusters, pairs, outcome, objectives, seconds, bytes })
}

/// The pairs of `source` over `n` points.
fn constraints(n: usize, source: PairSource<'_>, rng: &mut Rng) -> Result<Constraints<Vec<u32>>, FitError> {
    match source {
        PairSource::Given(pairs) => {
            Constraints::new_in(zeroed(Constraints::indices_len(n, pairs.len()), "the pairs")?, n, pairs)
                .map_err(FitError::param("invalid pairs"))
        }
        PairSource::FromClasses { classes, fraction } => {
            if classes.len() != n {
                return Err(FitError::Settings(format!("{} classes for {n} rows", classes.len())));
            }
            let (per_kind, pairs) = (fraction * n as f64, n as f64 * (n as f64 - 1.0) / 2.0);
            if per_kind.is_nan() || per_kind < 0.0 || 2.0 * per_kind.floor() > pairs {
                return Err(FitError::Settings(format!(
                    "a pair fraction of {fraction} asks for 2 × {per_kind:.0} pairs; {n} rows have {pairs:.0}"
                )));
            }
            #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss, reason = "0 ≤ per_kind ≤ n(n−1)/4")]
            let per_kind = per_kind as usize;
            let indices = zeroed(Constraints::indices_len(n, 2 * per_kind), "the pairs")?;
            Constraints::from_labels_in(indices, classes, per_kind, per_kind, rng).map_err(|_| {
                FitError::Settings(format!(
                    "cannot draw {per_kind} must-link and {per_kind} cannot-link distinct pairs"
                ))
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two noisy rings of 30 points each, and the ring of each point.
    fn rings() -> (Vec<f64>, Vec<usize>) {
        let mut rng = Rng::seed_from_u64(3);
        let mut points = Vec::new();
        let mut classes = Vec::new();
        for i in 0..60 {
            let (radius, angle) = (if i % 2 == 0 { 1.0 } else { 3.0 }, i as f64 * 0.41);
            points.extend([
                radius * angle.cos() + 0.05 * rng.normal::<f64>(),
                radius * angle.sin() + 0.05 * rng.normal::<f64>(),
            ]);
            classes.push(i % 2);
        }
        (points, classes)
    }

    fn settings() -> NpklSettings {
        NpklSettings { rank: None, neighbors: 5, loss: Loss::Hinge, clusters: 2, seed: 1 }
    }

    #[test]
    fn learned_kernel_separates_the_rings_and_a_rebuilt_one_places_points_alike() {
        let (points, classes) = rings();
        let source = PairSource::FromClasses { classes: &classes, fraction: 0.5 };
        let mut sweeps = 0;
        let run = learn(points.clone(), 2, source, &settings(), |_| sweeps += 1).unwrap();
        assert_eq!((run.pairs.total, sweeps, run.objectives.len()), (60, run.outcome.sweeps, sweeps));
        let a = &run.clusters.assignments;
        let agree = (0..60).filter(|&i| (a[i] == a[0]) == (classes[i] == classes[0])).count();
        assert_eq!(agree, 60);
        // A learned kernel rebuilt from its columns places points as the original does.
        let rebuilt = LearnedKernel::new(points.clone(), 2, 5, Loss::Hinge, run.kernel.columns().to_vec()).unwrap();
        let queries = [0.9, 0.1, -2.9, 0.3];
        assert_eq!(rebuilt.extend(&queries).unwrap(), run.kernel.extend(&queries).unwrap());
        assert_eq!(run.kernel.extend(&queries).unwrap().len(), 2 * run.kernel.rank());
    }

    #[test]
    fn bad_settings_and_points_are_errors_naming_them() {
        let (points, classes) = rings();
        let message = |run: Result<NpklRun, FitError>| run.unwrap_err().to_string();
        let from_classes = PairSource::FromClasses { classes: &classes, fraction: 0.5 };
        let with = |change: fn(&mut NpklSettings)| {
            let mut s = settings();
            change(&mut s);
            s
        };
        assert_eq!(
            message(learn(points.clone(), 2, from_classes, &with(|s| s.clusters = 61), |_| ())),
            "clusters must be between 1 and the number of rows (60)"
        );
        assert_eq!(
            message(learn(points.clone(), 2, from_classes, &with(|s| s.neighbors = 60), |_| ())),
            "neighbors must be between 1 and 59 (one less than the number of rows)"
        );
        let too_many = PairSource::FromClasses { classes: &classes, fraction: 1e6 };
        assert!(message(learn(points.clone(), 2, too_many, &settings(), |_| ())).contains("asks for"));
        assert_eq!(
            message(learn(points.clone(), 2, PairSource::Given(&[]), &settings(), |_| ())),
            "no pairs: give the rank"
        );
        let self_pair = [Pair::new(3, 3, Link::Must)];
        assert!(
            message(learn(points.clone(), 2, PairSource::Given(&self_pair), &settings(), |_| ()))
                .starts_with("invalid pairs")
        );
        let mut nan = points.clone();
        nan[7] = f64::NAN;
        assert!(message(learn(nan, 2, from_classes, &settings(), |_| ())).starts_with("the kNN graph"));
        let run = learn(points.clone(), 2, from_classes, &settings(), |_| ()).unwrap();
        assert!(run.kernel.extend(&[1.0, 2.0, 3.0]).is_err());
        assert!(run.kernel.extend(&[1.0, f64::INFINITY]).is_err());
        assert!(LearnedKernel::new(points, 2, 5, Loss::Hinge, vec![0.5; 7]).is_err());
    }
}
