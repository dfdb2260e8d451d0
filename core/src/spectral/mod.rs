//! Laplacian eigenmap and spectral clustering on the kNN graph of [`npkl`](crate::npkl)
//! (seed 000 §5.1, §5.2), by [`lanczos`](crate::linalg::lanczos) on the sparse normalised Laplacian.
//!
//! **Math.** The graph is the one of eq. (1): weights `S_ij` on the symmetric kNN graph,
//! degrees `d_i = Σ_j S_ij`, `D = diag(d)`. The eigenmap (§5.1) minimises
//! `Σ_ij S_ij ‖y_i − y_j‖² = 2 tr(Yᵀ(D − S)Y)` subject to `YᵀDY = I`: the generalized
//! problem `(D − S) y = λ D y`. With `v = D^{1/2} y` it is the symmetric problem of the
//! normalised Laplacian `L_sym = I − N v`, `N = D^{−1/2} S D^{−1/2}`, whose smallest
//! eigenvalue is `λ₀ = 0` along `v₀ = D^{1/2}·1` (the constant `y`, dropped).
//!
//! **Convention and shift.** The graph stores `L = (1+δ)I − N`; the δ is ignored here.
//! [`lanczos`](crate::linalg::lanczos) finds the *largest* eigenvalues, so it runs on `A = I + N = 2I − L_sym`,
//! whose spectrum lies in `[0, 2]` (`N`'s lies in `[−1, 1]`): the smallest `λ` of `L_sym`
//! are the largest `θ = 2 − λ` of `A`, and no negative eigenvalue of `N` (near −1 on a
//! nearly bipartite graph) can be mistaken for a leading one. One product costs one pass
//! over the `2nk` stored entries.
//!
//! - [`eigenmap`]: the `m` smallest nontrivial `λ` (increasing) and the embedding
//!   `y_i = D^{−1/2} v_i` (Belkin–Niyogi's generalized eigenvectors, `YᵀDY = I`), row `p`
//!   the coordinates of point `p`.
//! - [`spectral_clustering`] (§5.2, Ng–Jordan–Weiss): the `c` leading eigenvectors of `N`,
//!   the trivial one included, as the columns of `V` (`n × c`); each row normalised to unit
//!   length; k-means ([`KMeans`]) on the rows.
//!
//! - [`lpp`] (module `lpp`): the locality preserving projection, the eigenmap's linear
//!   counterpart, a model that projects new rows.
//!
//! **Disconnected graphs and small gaps** (module `leading`). Each connected component is
//! an exact eigenvector of `λ = 0`, taken first; Lanczos runs on the complement of their
//! span. On `g` components the eigenmap's first `g − 1` coordinates are constant on each
//! component, and spectral clustering into `c ≤ g` clusters groups whole components. When
//! Lanczos ends capped (clusters that the graph barely connects: eigenvalues within
//! `10⁻⁴`), a Chebyshev filter that widens the gaps at the top is run, up to
//! [`FILTER_ROUNDS`] times; the outcome's steps count every product.
//!
//! **Precision.** Lanczos stops at a relative Ritz residual of `√ε` (about `3·10⁻⁴` in
//! f32), so eigenvalues closer than that (a graph of nearly disconnected clusters) are not
//! resolved in f32; use f64 for such graphs.
//!
//! **Cost and memory.** `s` Lanczos steps (at most [`eigenmap_steps`]) of
//! one sparse product each, `O(n·s²)` reorthogonalisation. Workspace
//! [`eigenmap_workspace_len`]`(n, m) = 5n + (m + 2)(n + 1) + lanczos_workspace_len(n, s)`
//! scalars (start vector, component labels and scratch, the filter's two vectors, the Ritz
//! pairs and one more, Lanczos basis); the output is `n·m` scalars, plus
//! [`KMeans::scalars_len`] and [`KMeans::indices_len`] for clustering.

mod leading;
mod lpp;

pub use leading::{FILTER_ROUNDS, MAX_FILTER_DEGREE};
pub use lpp::{lpp, lpp_work_len};

use leading::{leading, scratch_len, split};

use crate::cluster::{KMeans, ValidKMeansParams};
use crate::linalg::{LanczosOutcome, lanczos_workspace_len};
use crate::npkl::LaplacianView;
use crate::storage::{Storage, check_capacity};
use crate::{Error, Real, Rng};

/// The least step cap of a run on at most [`LARGE`] points, whatever `m`.
const MIN_STEP_CAP: usize = 300;

/// Beyond this many points the least step cap is [`LARGE_STEP_CAP`].
const LARGE: usize = 20_000;

/// The least step cap of a run on more than [`LARGE`] points.
const LARGE_STEP_CAP: usize = 100;

/// Lanczos steps an eigenmap of `m` coordinates on `n` points takes at most:
/// `min(max(4(m + 1), c), n)`, `c` = 300 up to 2·10⁴ points and 100 beyond. Clusters
/// that the graph barely connects put eigenvalues close together at the top, and Lanczos
/// needs of the order of `1/√gap` steps to separate them (the noisy moons of 1,125 points
/// each take about 180); beyond the cap a Chebyshev filter takes over (module `leading`).
/// The cap is memory (`n` scalars a step) and reorthogonalisation (`O(n·s²)`), which on
/// many points costs more than the filter's products; every run stops as soon as its pairs
/// converge.
pub const fn eigenmap_steps(n: usize, m: usize) -> usize {
    let wanted = m.saturating_add(1).saturating_mul(4);
    let least = if n <= LARGE { MIN_STEP_CAP } else { LARGE_STEP_CAP };
    let steps = if wanted > least { wanted } else { least };
    if steps < n { steps } else { n }
}

/// Scalars of workspace [`eigenmap`] and [`spectral_clustering`] need for `n` points and
/// `m` coordinates (saturating): `5n + (m + 2)(n + 1) + lanczos_workspace_len(n, s)`,
/// `s = eigenmap_steps(n, m)`.
pub const fn eigenmap_workspace_len(n: usize, m: usize) -> usize {
    let pairs = m.saturating_add(2).saturating_mul(n.saturating_add(1));
    scratch_len(n).saturating_add(pairs).saturating_add(lanczos_workspace_len(n, eigenmap_steps(n, m)))
}

/// Checks `m` against `n` and the workspace; returns `n`.
fn check_sizes<T: Real>(
    graph: &LaplacianView<'_, T>,
    m: usize,
    name: &'static str,
    workspace: &[T],
) -> Result<usize, Error> {
    let n = graph.n();
    if m == 0 || m >= n {
        return Err(Error::InvalidParam { name });
    }
    check_capacity(eigenmap_workspace_len(n, m), workspace.len())?;
    Ok(n)
}

/// The Laplacian eigenmap (seed 000 §5.1) of `graph` in `m = values.len()` coordinates:
/// the `m` smallest nontrivial eigenvalues `λ` of `L_sym` into `values` (increasing) and
/// the embedding `y = D^{−1/2} v` into `embedding` (row-major `n × m`, row `p` for point
/// `p`). Each coordinate's sign is fixed so that its largest-magnitude entry is positive.
///
/// # Errors
/// `InvalidParam` naming `components` when `m = 0` or `m ≥ n`, or `degree` when a point's
/// degree is 0 or not finite (all its weights underflowed: a larger `σ`); `DimensionMismatch`
/// when `embedding` is not `n·m` long; `CapacityExceeded` when `workspace` is shorter than
/// [`eigenmap_workspace_len`]; [`lanczos`](crate::linalg::lanczos)'s errors ([`Error::Breakdown`] on some
/// disconnected graphs).
///
/// # Examples
/// ```
/// use kestrel_core::npkl::{GraphParams, Laplacian};
/// use kestrel_core::spectral::{eigenmap, eigenmap_workspace_len};
/// let points: Vec<f64> = (0..30).map(|i| i as f64).collect(); // a path
/// let graph = Laplacian::build_in(vec![0.0; Laplacian::scalars_len(30, 2)],
///     vec![0u32; Laplacian::indices_len(30, 2)], &points, 1, GraphParams::new().neighbors(2).check()?)?;
/// let mut workspace = vec![0.0; eigenmap_workspace_len(30, 1)];
/// let (mut values, mut y) = ([0.0], vec![0.0; 30]);
/// eigenmap(&graph.view(), &mut workspace, &mut values, &mut y)?;
/// assert!(y.windows(2).all(|w| w[0] <= w[1]) || y.windows(2).all(|w| w[0] >= w[1])); // monotone
/// # Ok::<(), kestrel_core::Error>(())
/// ```
pub fn eigenmap<T: Real>(
    graph: &LaplacianView<'_, T>,
    workspace: &mut [T],
    values: &mut [T],
    embedding: &mut [T],
) -> Result<LanczosOutcome<T>, Error> {
    let m = values.len();
    let n = check_sizes(graph, m, "components", workspace)?;
    crate::error::check_len(n.saturating_mul(m), embedding.len())?;
    let mut w = split(workspace, n, m + 1)?;
    let outcome = leading(graph, m + 1, eigenmap_steps(n, m), &mut w)?;
    let (ritz, vectors) = (&*w.values, &*w.vectors);
    for (c, (value, v)) in values.iter_mut().zip(ritz.iter().skip(1)).enumerate() {
        *value = T::from_f64(2.0) - *v;
        let v_c = vectors.get((c + 1) * n..(c + 2) * n).unwrap_or_default();
        let peak = v_c.iter().fold(T::ZERO, |acc, &x| if x.abs() > acc.abs() { x } else { acc });
        let sign = if peak < T::ZERO { -T::ONE } else { T::ONE };
        for (p, &x) in v_c.iter().enumerate() {
            let d = graph.degree(p).unwrap_or(T::ONE);
            if let Some(y) = embedding.get_mut(p * m + c) {
                *y = sign * x / d.sqrt();
            }
        }
    }
    Ok(outcome)
}

/// What [`spectral_clustering`] returns: the k-means fit on the embedding and how Lanczos ended.
pub type Clustered<T, S, I> = (KMeans<T, S, I>, LanczosOutcome<T>);

/// Spectral clustering (seed 000 §5.2, Ng–Jordan–Weiss) of the points of `graph` into
/// `c = params.clusters()` clusters: the `c` leading eigenvectors of `D^{−1/2} S D^{−1/2}`
/// as columns, rows normalised to unit length into `embedding` (`n × c`), then k-means on
/// those rows into `values` / `indices` (see [`KMeans::fit_in`]).
///
/// # Errors
/// `InvalidParam` naming `clusters` when `c = 0` or `c ≥ n`, or `degree` (see
/// [`eigenmap`]); `DimensionMismatch` when `embedding` is not `n·c` long;
/// `CapacityExceeded` for a short workspace or k-means storage; [`lanczos`](crate::linalg::lanczos)'s and
/// [`KMeans::fit_in`]'s errors.
pub fn spectral_clustering<T: Real, S: Storage<T>, I: Storage<u32>>(
    graph: &LaplacianView<'_, T>,
    params: ValidKMeansParams,
    rng: &mut Rng,
    workspace: &mut [T],
    embedding: &mut [T],
    values: S,
    indices: I,
) -> Result<Clustered<T, S, I>, Error> {
    let c = params.clusters();
    let n = check_sizes(graph, c, "clusters", workspace)?;
    crate::error::check_len(n.saturating_mul(c), embedding.len())?;
    let mut w = split(workspace, n, c)?;
    let outcome = leading(graph, c, eigenmap_steps(n, c), &mut w)?;
    let vectors = &*w.vectors;
    for (p, row) in embedding.chunks_exact_mut(c).enumerate() {
        for (j, e) in row.iter_mut().enumerate() {
            *e = vectors.get(j * n + p).copied().unwrap_or(T::ZERO);
        }
        let norm = row.iter().fold(T::ZERO, |acc, &x| acc + x * x).sqrt();
        if norm > T::ZERO {
            for e in row.iter_mut() {
                *e /= norm;
            }
        }
    }
    let kmeans = KMeans::fit_in(values, indices, embedding, c, params, rng)?;
    Ok((kmeans, outcome))
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::*;
    use crate::cluster::KMeansParams;
    use crate::npkl::{GraphParams, Laplacian};
    use nalgebra::{DMatrix, SymmetricEigen};
    use std::vec;
    use std::vec::Vec;

    type Graph<T> = Laplacian<T, Vec<T>, Vec<u32>>;

    fn graph<T: Real>(points: &[T], dim: usize, k: usize, params: GraphParams<T>) -> Result<Graph<T>, Error> {
        let n = points.len() / dim;
        let params = params.neighbors(k).check()?;
        Laplacian::build_in(
            vec![T::ZERO; Laplacian::scalars_len(n, k)],
            vec![0; Laplacian::indices_len(n, k)],
            points,
            dim,
            params,
        )
    }

    /// Seeded 2-D points, uniform in the unit square.
    fn square<T: Real>(n: usize, seed: u64) -> Vec<T> {
        let mut rng = Rng::seed_from_u64(seed);
        (0..2 * n).map(|_| rng.uniform_in(T::ZERO, T::ONE)).collect()
    }

    /// The dense `L_sym = I − D^{−1/2} S D^{−1/2}` from the stored entries, in f64.
    fn dense<T: Real>(g: &Graph<T>) -> DMatrix<f64> {
        let n = g.n();
        let mut l = DMatrix::identity(n, n);
        for i in 0..n {
            let (cols, vals) = g.row(i).unwrap();
            for (&j, &v) in cols.iter().zip(vals) {
                l[(i, j as usize)] = v.to_f64();
            }
        }
        l
    }

    /// Eigenvalues against nalgebra's dense `L_sym`, and the sine of the largest principal
    /// angle between `D^{1/2} Y` and the span of its eigenvectors `1..=m`.
    fn check_against_dense<T: Real>(n: usize, m: usize, k: usize, value_tol: f64, angle_tol: f64) {
        let points = square::<T>(n, 7);
        let g = graph(&points, 2, k, GraphParams::new()).unwrap();
        let mut workspace = vec![T::ZERO; eigenmap_workspace_len(n, m)];
        let (mut values, mut y) = (vec![T::ZERO; m], vec![T::ZERO; n * m]);
        eigenmap(&g.view(), &mut workspace, &mut values, &mut y).unwrap();
        let eig = SymmetricEigen::new(dense(&g));
        let mut order: Vec<usize> = (0..n).collect();
        order.sort_by(|&a, &b| eig.eigenvalues[a].total_cmp(&eig.eigenvalues[b]));
        assert!(eig.eigenvalues[order[0]].abs() < value_tol, "connected: λ₀ = 0");
        assert!(eig.eigenvalues[order[m + 1]] - eig.eigenvalues[order[m]] > 1e-3, "a gap after λ_m");
        for c in 0..m {
            let want = eig.eigenvalues[order[c + 1]];
            assert!((values[c].to_f64() - want).abs() < value_tol, "λ{c}: {} vs {want}", values[c].to_f64());
        }
        let reference = DMatrix::from_fn(n, m, |p, c| eig.eigenvectors[(p, order[c + 1])]);
        let mut v = DMatrix::from_fn(n, m, |p, c| y[p * m + c].to_f64() * g.degree(p).unwrap().to_f64().sqrt());
        // `YᵀDY = I`: the columns of `D^{1/2} Y` are orthonormal.
        assert!((v.transpose() * &v - DMatrix::identity(m, m)).norm() < angle_tol);
        v = v.qr().q();
        let residual = &v - &reference * (reference.transpose() * &v);
        let sine = residual.svd(false, false).singular_values.max();
        assert!(sine < angle_tol, "subspace angle sine {sine}");
    }

    #[test]
    fn eigenmap_matches_dense_f64() {
        check_against_dense::<f64>(120, 3, 8, 1e-9, 1e-4);
    }

    #[test]
    fn eigenmap_matches_dense_f32() {
        check_against_dense::<f32>(120, 3, 8, 1e-4, 1e-2);
    }

    /// Two chains of 20 points joined through one far point (weights about `e^{−10}`).
    fn bridged<T: Real>() -> Vec<T> {
        let a = (0..20).map(|i| f64::from(i) * 0.1);
        let b = (0..20).map(|i| 3.0 + f64::from(i) * 0.1);
        a.chain([2.5]).chain(b).map(T::from_f64).collect()
    }

    fn clusters_bridged_chains<T: Real>() {
        let points = bridged::<T>();
        let n = points.len();
        let g = graph(&points, 1, 2, GraphParams::new()).unwrap();
        let mut workspace = vec![T::ZERO; eigenmap_workspace_len(n, 2)];
        let mut embedding = vec![T::ZERO; n * 2];
        let (km, _) = spectral_clustering(
            &g.view(),
            KMeansParams::new(2).check().unwrap(),
            &mut Rng::seed_from_u64(1),
            &mut workspace,
            &mut embedding,
            vec![T::ZERO; KMeans::scalars_len(n, 2, 2)],
            vec![0u32; KMeans::indices_len(n, 2)],
        )
        .unwrap();
        let labels = km.assignments();
        assert!(labels[..20].iter().all(|&l| l == labels[0]));
        assert!(labels[21..].iter().all(|&l| l == labels[21]));
        assert_ne!(labels[0], labels[21]);
        for row in embedding.chunks_exact(2) {
            assert!((row[0] * row[0] + row[1] * row[1] - T::ONE).abs() < T::from_f64(1e-4));
        }
    }

    #[test]
    fn spectral_clustering_cuts_the_bridge() {
        // f64 only: the two leading eigenvalues differ by about 1e-5, below f32's Lanczos
        // tolerance √ε ≈ 3e-4, so f32 cannot separate them (see the module docs).
        clusters_bridged_chains::<f64>();
    }

    #[test]
    fn bad_input_is_an_error() {
        let points = square::<f64>(30, 3);
        let g = graph(&points, 2, 4, GraphParams::new()).unwrap();
        let view = g.view();
        let mut big = vec![0.0; eigenmap_workspace_len(30, 40)];
        let mut y = vec![0.0; 30 * 30];
        assert_eq!(eigenmap(&view, &mut big, &mut [0.0; 30], &mut y), Err(Error::InvalidParam { name: "components" }));
        assert_eq!(eigenmap(&view, &mut big, &mut [], &mut []), Err(Error::InvalidParam { name: "components" }));
        let mut short = vec![0.0; eigenmap_workspace_len(30, 2) - 1];
        assert!(matches!(
            eigenmap(&view, &mut short, &mut [0.0; 2], &mut y[..60]),
            Err(Error::CapacityExceeded { .. })
        ));
        assert!(matches!(eigenmap(&view, &mut big, &mut [0.0; 2], &mut y[..59]), Err(Error::DimensionMismatch { .. })));
        let c30 = KMeansParams::new(30).check().unwrap();
        let r =
            spectral_clustering(&view, c30, &mut Rng::seed_from_u64(1), &mut big, &mut y, vec![0.0; 0], vec![0u32; 0]);
        assert!(matches!(r, Err(Error::InvalidParam { name: "clusters" })));
    }

    #[test]
    fn zero_degree_is_an_error() {
        // σ so small that every weight underflows to 0.
        let points = square::<f64>(20, 5);
        let g = graph(&points, 2, 3, GraphParams::new().sigma(1e-20)).unwrap();
        let mut workspace = vec![0.0; eigenmap_workspace_len(20, 2)];
        let r = eigenmap(&g.view(), &mut workspace, &mut [0.0; 2], &mut [0.0; 40]);
        assert_eq!(r, Err(Error::InvalidParam { name: "degree" }));
    }

    /// A path of 500 points (1-D, 2 neighbours): eigenvalues about `(πj/500)²`, gaps too
    /// small for 300 Lanczos steps, so the Chebyshev filter finishes the run.
    fn path_needs_the_filter<T: Real>(value_tol: f64, angle_tol: f64) {
        let n = 500;
        let points: Vec<T> = (0..n).map(|i| T::from_f64(i as f64 * 0.01)).collect();
        let g = graph(&points, 1, 2, GraphParams::new()).unwrap();
        let m = 2;
        let mut workspace = vec![T::ZERO; eigenmap_workspace_len(n, m)];
        let (mut values, mut y) = (vec![T::ZERO; m], vec![T::ZERO; n * m]);
        let outcome = eigenmap(&g.view(), &mut workspace, &mut values, &mut y).unwrap();
        assert!(outcome.steps > eigenmap_steps(n, m), "the filter ran: {outcome:?}");
        assert_eq!(outcome.exit, crate::linalg::Exit::Converged, "{outcome:?}");
        let eig = SymmetricEigen::new(dense(&g));
        let mut order: Vec<usize> = (0..n).collect();
        order.sort_by(|&a, &b| eig.eigenvalues[a].total_cmp(&eig.eigenvalues[b]));
        for c in 0..m {
            let want = eig.eigenvalues[order[c + 1]];
            assert!((values[c].to_f64() - want).abs() < value_tol, "λ{c}: {} vs {want}", values[c].to_f64());
            let v = DMatrix::from_fn(n, 1, |p, _| y[p * m + c].to_f64() * g.degree(p).unwrap().to_f64().sqrt());
            let reference = eig.eigenvectors.column(order[c + 1]);
            let cosine = (v.column(0).dot(&reference) / v.norm()).abs();
            assert!(1.0 - cosine < angle_tol, "coordinate {c}: cos {cosine}");
        }
    }

    #[test]
    fn the_chebyshev_filter_converges_where_lanczos_alone_is_capped_f64() {
        path_needs_the_filter::<f64>(1e-10, 1e-8);
    }

    /// Two far squares of 20 points: their 3-NN graph has two components (λ = 0 twice).
    fn two_squares<T: Real>() -> (Vec<T>, Graph<T>) {
        let mut points = square::<T>(20, 9);
        points.extend(square::<T>(20, 10).iter().map(|&x| x + T::from_f64(100.0)));
        let g = graph(&points, 2, 3, GraphParams::new()).unwrap();
        (points, g)
    }

    fn disconnected<T: Real>(tolerance: f64) {
        let (_, g) = two_squares::<T>();
        let mut workspace = vec![T::ZERO; eigenmap_workspace_len(40, 2)];
        let (mut values, mut y) = ([T::ZERO; 2], [T::ZERO; 80]);
        eigenmap(&g.view(), &mut workspace, &mut values, &mut y).unwrap();
        // λ: 0 (the second component), then the smallest nonzero of the dense L_sym.
        let mut dense_values: Vec<f64> = SymmetricEigen::new(dense(&g)).eigenvalues.iter().copied().collect();
        dense_values.sort_by(f64::total_cmp);
        assert!(dense_values[1].abs() < 1e-6 && dense_values[2] > 1e-3, "{dense_values:?}");
        assert!(values[0].to_f64().abs() < tolerance, "{values:?}");
        assert!((values[1].to_f64() - dense_values[2]).abs() < tolerance, "{values:?} vs {dense_values:?}");
        // The first coordinate is constant on each square, and differs between them.
        let first = |p: usize| y[2 * p].to_f64();
        assert!((0..20).all(|p| (first(p) - first(0)).abs() < tolerance));
        assert!((20..40).all(|p| (first(p) - first(20)).abs() < tolerance));
        assert!((first(0) - first(20)).abs() > 0.1);
        // Clustering into 2 groups the squares; into 3 splits one of them.
        for c in [2, 3] {
            let mut workspace = vec![T::ZERO; eigenmap_workspace_len(40, c)];
            let mut embedding = vec![T::ZERO; 40 * c];
            let (km, _) = spectral_clustering(
                &g.view(),
                KMeansParams::new(c).check().unwrap(),
                &mut Rng::seed_from_u64(1),
                &mut workspace,
                &mut embedding,
                vec![T::ZERO; KMeans::scalars_len(40, c, c)],
                vec![0u32; KMeans::indices_len(40, c)],
            )
            .unwrap();
            let labels = km.assignments();
            assert!(labels[..20].iter().all(|l| labels[20..].iter().all(|m| m != l)), "{c}: {labels:?}");
            let distinct = (0..c as u32).filter(|l| labels.contains(l)).count();
            assert_eq!(distinct, c, "{labels:?}");
        }
    }

    #[test]
    fn disconnected_graphs_have_their_components_as_leading_pairs_f64() {
        disconnected::<f64>(1e-9);
    }

    #[test]
    fn disconnected_graphs_have_their_components_as_leading_pairs_f32() {
        disconnected::<f32>(1e-4);
    }
}
