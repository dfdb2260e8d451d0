//! NPKL-BCD (seed 004) against dense nalgebra references and brute-force minimisations.

use kestrel_core::cluster::{KMeans, KMeansParams, rand_index, rand_index_table};
use kestrel_core::linalg::squared_distance;
use kestrel_core::neighbors::Search;
use kestrel_core::npkl::{Constraints, Extension, GraphParams, Laplacian, Link, Loss, Npkl, NpklParams, Pair};
use kestrel_core::{Error, Real, Rng};
use nalgebra::{DMatrix, DVector};

type Graph<T> = Laplacian<T, Vec<T>, Vec<u32>>;
type Solver<'a, T> = Npkl<'a, T, Vec<T>, Vec<u32>>;

/// `3·per` points in `dim` dimensions around three centres, with their classes.
fn blobs<T: Real>(seed: u64, per: usize, dim: usize) -> (Vec<T>, Vec<u32>) {
    let mut rng = Rng::seed_from_u64(seed);
    let mut points = Vec::new();
    let mut labels = Vec::new();
    for p in 0..3 * per {
        let c = p % 3;
        for a in 0..dim {
            let centre = if a == c % dim { 3.0 } else { 0.0 };
            points.push(T::from_f64(centre + 0.7 * rng.normal::<f64>()));
        }
        labels.push(c as u32);
    }
    (points, labels)
}

fn graph<T: Real>(points: &[T], dim: usize, k: usize, search: Search) -> Graph<T> {
    let n = points.len() / dim;
    Laplacian::build_in(
        vec![T::ZERO; Laplacian::scalars_len(n, k)],
        vec![0; Laplacian::indices_len(n, k)],
        points,
        dim,
        GraphParams::new().neighbors(k).search(search).check().unwrap(),
    )
    .unwrap()
}

fn constraints(n: usize, pairs: &[Pair]) -> Constraints<Vec<u32>> {
    Constraints::new_in(vec![0; Constraints::indices_len(n, pairs.len())], n, pairs).unwrap()
}

fn solver<'a, T: Real>(
    g: &'a Graph<T>,
    t: &'a Constraints<Vec<u32>>,
    params: NpklParams<T>,
    seed: u64,
) -> Solver<'a, T> {
    let n = g.n();
    let len = Npkl::scalars_len(n, params.rank(), t.max_degree());
    let params = params.check().unwrap();
    Npkl::new_in(vec![T::ZERO; len], vec![0; n], g.view(), t.view(), params, &mut Rng::seed_from_u64(seed)).unwrap()
}

/// Eq. (1) from scratch: kNN by sorting all distances, "or" symmetrisation, σ² the mean
/// squared kNN distance, all in f64 (distances ordered as the core computes them, in `T`).
fn dense_laplacian<T: Real>(points: &[T], dim: usize, k: usize, delta: f64) -> DMatrix<f64> {
    let n = points.len() / dim;
    let p = |i: usize| &points[i * dim..(i + 1) * dim];
    let mut knn = vec![Vec::new(); n];
    let mut sum = 0.0;
    for (i, list) in knn.iter_mut().enumerate() {
        let mut others: Vec<(T, usize)> =
            (0..n).filter(|&j| j != i).map(|j| (squared_distance(p(i), p(j)).unwrap(), j)).collect();
        others.sort_by(|a, b| a.0.partial_cmp(&b.0).unwrap().then(a.1.cmp(&b.1)));
        *list = others[..k].iter().map(|&(_, j)| j).collect();
        sum += others[..k].iter().map(|&(d, _)| d.to_f64()).sum::<f64>();
    }
    let sigma2 = sum / (n * k) as f64;
    let s = DMatrix::from_fn(n, n, |i, j| {
        if knn[i].contains(&j) || knn[j].contains(&i) {
            (-squared_distance(p(i), p(j)).unwrap().to_f64() / (2.0 * sigma2)).exp()
        } else {
            0.0
        }
    });
    let d: Vec<f64> = (0..n).map(|i| s.row(i).sum()).collect();
    DMatrix::from_fn(n, n, |i, j| if i == j { 1.0 + delta } else { -s[(i, j)] / (d[i] * d[j]).sqrt() })
}

/// The core's `L` as a dense matrix.
fn to_dense<T: Real>(g: &Graph<T>) -> DMatrix<f64> {
    let n = g.n();
    let mut l = DMatrix::identity(n, n) * g.diagonal().to_f64();
    for i in 0..n {
        let (cols, vals) = g.row(i).unwrap();
        for (&j, &v) in cols.iter().zip(vals) {
            l[(i, j as usize)] = v.to_f64();
        }
    }
    l
}

/// `V` (`r × n`) of a solver, in f64.
fn v_matrix<T: Real>(npkl: &Solver<'_, T>) -> DMatrix<f64> {
    let r = npkl.rank();
    DMatrix::from_fn(r, npkl.n(), |a, i| npkl.column(i).unwrap()[a].to_f64())
}

fn tolerance<T: Real>() -> f64 {
    1e3 * T::EPSILON.to_f64()
}

fn assert_close(a: &DVector<f64>, b: &DVector<f64>, tol: f64, what: &str) {
    let err = (a - b).norm() / b.norm().max(1.0);
    assert!(err <= tol, "{what}: relative error {err:e} > {tol:e}\n{a}\n{b}");
}

fn laplacian_matches_dense<T: Real>() {
    for (dim, k, search) in [(3, 4, Search::SortedProjection), (5, 6, Search::BruteForce)] {
        let mut rng = Rng::seed_from_u64(dim as u64);
        let points: Vec<T> = (0..60 * dim).map(|_| rng.uniform()).collect();
        let g = graph(&points, dim, k, search);
        let reference = dense_laplacian(&points, dim, k, 0.1);
        let l = to_dense(&g);
        assert!((&l - &reference).norm() / reference.norm() < tolerance::<T>(), "L of eq. (1)");
        assert_eq!(g.nnz(), reference.iter().filter(|&&x| x != 0.0).count() - 60);
        // Symmetric, eigenvalues in [δ, 2 + δ].
        assert_eq!(l, l.transpose());
        let eigen = l.symmetric_eigenvalues();
        assert!(eigen.min() > 0.1 - 1e-4 && eigen.max() < 2.1 + 1e-4, "{eigen}");
    }
}

/// `g = Σ_{k≠i} L_ik v_k` and `(v_j, T_ij)` of the partners, from the dense matrices.
fn pieces(l: &DMatrix<f64>, v: &DMatrix<f64>, i: usize, pairs: &[Pair]) -> (DVector<f64>, Vec<(DVector<f64>, f64)>) {
    let mut g = DVector::zeros(v.nrows());
    for k in (0..l.ncols()).filter(|&k| k != i) {
        g += v.column(k) * l[(i, k)];
    }
    let partners = pairs
        .iter()
        .filter_map(|p| {
            match (p.i == i, p.j == i) {
                (true, _) => Some(p.j),
                (_, true) => Some(p.i),
                _ => None,
            }
            .map(|j| (v.column(j).into_owned(), if p.link == Link::Must { 1.0 } else { -1.0 }))
        })
        .collect();
    (g, partners)
}

/// `φ_i(v)` of eq. (18) in f64.
fn phi(loss: Loss, gamma: f64, lii: f64, g: &DVector<f64>, partners: &[(DVector<f64>, f64)], v: &DVector<f64>) -> f64 {
    let losses: f64 = partners.iter().map(|(vj, t)| loss.value(t * v.dot(vj))).sum();
    0.5 * lii * v.norm_squared() + v.dot(g) + 0.5 * gamma * losses
}

/// Minimiser of `½αᵀHα − qᵀα` on `0 ≤ α ≤ u` by trying every active set (3^t of them).
fn box_qp_by_enumeration(h: &DMatrix<f64>, q: &DVector<f64>, upper: Option<f64>) -> DVector<f64> {
    let t = q.len();
    let states = if upper.is_some() { 3 } else { 2 };
    let value = |a: &DVector<f64>| 0.5 * a.dot(&(h * a)) - q.dot(a);
    let mut best: Option<DVector<f64>> = None;
    for code in 0..states_pow(states, t) {
        // state 0: α = 0, 1: free, 2: α = u.
        let state: Vec<usize> = (0..t).map(|s| code / states_pow(states, s) % states).collect();
        let free: Vec<usize> = (0..t).filter(|&s| state[s] == 1).collect();
        let mut alpha = DVector::from_fn(t, |s, _| if state[s] == 2 { upper.unwrap() } else { 0.0 });
        if !free.is_empty() {
            let hff = DMatrix::from_fn(free.len(), free.len(), |a, b| h[(free[a], free[b])]);
            let rhs = DVector::from_fn(free.len(), |a, _| {
                q[free[a]] - (0..t).map(|c| h[(free[a], c)] * alpha[c]).sum::<f64>()
            });
            let Ok(x) = hff.svd(true, true).solve(&rhs, 1e-12) else { continue };
            for (a, &s) in free.iter().enumerate() {
                alpha[s] = x[a];
            }
        }
        let feasible = alpha.iter().all(|&a| a >= -1e-12 && upper.is_none_or(|u| a <= u + 1e-12));
        if feasible && best.as_ref().is_none_or(|b| value(&alpha) < value(b)) {
            best = Some(alpha);
        }
    }
    best.unwrap()
}

fn states_pow(base: usize, e: usize) -> usize {
    base.pow(e as u32)
}

/// Reference minimiser of (18) for one column, independent of the core's solvers.
fn reference_column(
    loss: Loss,
    gamma: f64,
    lii: f64,
    g: &DVector<f64>,
    partners: &[(DVector<f64>, f64)],
) -> DVector<f64> {
    let r = g.len();
    let t = partners.len();
    let a = DMatrix::from_fn(r, t, |row, s| partners[s].0[row]);
    let signs = DVector::from_fn(t, |s, _| partners[s].1);
    let signed_sum = |c: &DVector<f64>| &a * c.component_mul(&signs);
    match loss {
        _ if t == 0 => -g / lii,
        Loss::Square => {
            // Dense (27)-(28): M = L_ii I + γ AAᵀ, v = M⁻¹(γ Σ T_ij v_j − g).
            let m = DMatrix::identity(r, r) * lii + &a * a.transpose() * gamma;
            m.lu().solve(&(signed_sum(&DVector::from_element(t, gamma)) - g)).unwrap()
        }
        Loss::Linear => {
            let v = (signed_sum(&DVector::from_element(t, gamma / 2.0)) - g) / lii;
            if v.norm() > 1.0 { &v / v.norm() } else { v }
        }
        Loss::Hinge | Loss::SquaredHinge => {
            let b = DMatrix::from_fn(r, t, |row, s| a[(row, s)] * signs[s]);
            let mut h = b.transpose() * &b;
            let q = b.transpose() * g + DVector::from_element(t, lii);
            let upper = if loss == Loss::Hinge { Some(gamma / 2.0) } else { None };
            if loss == Loss::SquaredHinge {
                h += DMatrix::identity(t, t) * (lii / gamma);
            }
            let alpha = if t == 1 && loss == Loss::Hinge {
                // A fine 1-D search of the concave dual on [0, γ/2], refined by ternary search.
                let f = |x: f64| 0.5 * h[(0, 0)] * x * x - q[0] * x;
                let grid = (0..=10_000).map(|s| s as f64 * upper.unwrap() / 10_000.0);
                let x0 = grid.min_by(|x, y| f(*x).partial_cmp(&f(*y)).unwrap()).unwrap();
                let (mut lo, mut hi) = ((x0 - 1e-4).max(0.0), (x0 + 1e-4).min(upper.unwrap()));
                for _ in 0..200 {
                    let (m1, m2) = (lo + (hi - lo) / 3.0, hi - (hi - lo) / 3.0);
                    if f(m1) <= f(m2) { hi = m2 } else { lo = m1 }
                }
                DVector::from_element(1, 0.5 * (lo + hi))
            } else {
                box_qp_by_enumeration(&h, &q, upper)
            };
            (&b * alpha - g) / lii
        }
    }
}

/// Every column update of (18) equals the reference minimiser, for t = 0, 1 and 3
/// partners, with r > t (SMW for the square loss) and r ≤ t (direct solve).
fn column_updates_match_references<T: Real>() {
    let (points, _) = blobs::<T>(3, 10, 2);
    let n = 30;
    let g = graph(&points, 2, 4, Search::SortedProjection);
    let pairs = [
        Pair::new(0, 1, Link::Must),
        Pair::new(2, 3, Link::Must),
        Pair::new(2, 4, Link::Cannot),
        Pair::new(5, 2, Link::Cannot),
        Pair::new(6, 7, Link::Cannot),
    ];
    let t = constraints(n, &pairs);
    let l = to_dense(&g);
    for (rank, loss, gamma) in [
        (4, Loss::Hinge, 1.0),
        (2, Loss::Hinge, 5.0),
        (4, Loss::SquaredHinge, 2.0),
        (2, Loss::SquaredHinge, 1.0),
        (4, Loss::Square, 1.0),
        (2, Loss::Square, 3.0),
        (4, Loss::Linear, 1.0),
        (2, Loss::Linear, 8.0),
    ] {
        let params = NpklParams::new(rank, loss).gamma(T::from_f64(gamma));
        let mut npkl = solver(&g, &t, params, rank as u64);
        for i in [0, 2, 6, 10] {
            let v = v_matrix(&npkl);
            let (gi, partners) = pieces(&l, &v, i, &pairs);
            let expected = reference_column(loss, gamma, 1.1, &gi, &partners);
            let update = npkl.update_column(i).unwrap();
            let got = DVector::from_iterator(rank, npkl.column(i).unwrap().iter().map(|x| x.to_f64()));
            let what = format!("{loss:?}, r = {rank}, column {i} with {} partners", partners.len());
            assert!(update.accepted, "{what}");
            let tol = if T::EPSILON.to_f64() > 1e-10 { 1e-3 } else { 1e-7 };
            assert_close(&got, &expected, tol, &what);
            let scale = 1.0 + update.before.to_f64().abs();
            assert!(
                (update.after.to_f64() - phi(loss, gamma, 1.1, &gi, &partners, &got)).abs() < 1e2 * tol * scale,
                "{what}"
            );
            assert!(
                phi(loss, gamma, 1.1, &gi, &partners, &got)
                    <= phi(loss, gamma, 1.1, &gi, &partners, &expected) + tol * scale
            );
        }
    }
}

/// The objective (3) never increases over sweeps, for every loss, and equals its dense
/// evaluation `tr(VLVᵀ) + γ Σ ℓ`.
fn objective_is_monotone_and_dense<T: Real>() {
    let (points, labels) = blobs::<T>(5, 20, 3);
    let n = 60;
    let g = graph(&points, 3, 5, Search::SortedProjection);
    let mut rng = Rng::seed_from_u64(1);
    let t = Constraints::from_labels_in(vec![0; Constraints::indices_len(n, 72)], &labels, 36, 36, &mut rng).unwrap();
    let pairs: Vec<Pair> = t.pairs().collect();
    let l = to_dense(&g);
    for loss in [Loss::Hinge, Loss::SquaredHinge, Loss::Square, Loss::Linear] {
        let mut npkl = solver(&g, &t, NpklParams::new(11, loss), 7);
        let mut previous = f64::INFINITY;
        for sweep in 0..12 {
            let v = v_matrix(&npkl);
            let losses: f64 = pairs
                .iter()
                .map(|p| loss.value(if p.link == Link::Must { 1.0 } else { -1.0 } * v.column(p.i).dot(&v.column(p.j))))
                .sum();
            let dense = (&v * &l * v.transpose()).trace() + losses;
            let objective = npkl.objective().to_f64();
            assert!(
                (objective - dense).abs() <= tolerance::<T>() * dense.abs().max(1.0),
                "{loss:?}: {objective} vs {dense}"
            );
            assert!(
                objective <= previous + tolerance::<T>() * previous.abs().max(1.0),
                "{loss:?}, sweep {sweep}: increased"
            );
            let tracked = npkl.tracked_objective().to_f64();
            assert!((tracked - objective).abs() <= tolerance::<T>() * objective.abs().max(1.0), "{loss:?}: tracked");
            previous = objective;
            npkl.sweep(&mut rng);
        }
    }
}

/// New points get eq. (13) against the training columns; a training point left out of its
/// own search gets its in-sample column at convergence.
fn extension_matches_dense<T: Real>() {
    let (points, labels) = blobs::<T>(9, 20, 2);
    let (n, k, r) = (60, 4, 3);
    let g = graph(&points, 2, k, Search::SortedProjection);
    let mut rng = Rng::seed_from_u64(2);
    let t = Constraints::from_labels_in(vec![0; Constraints::indices_len(n, 12)], &labels, 6, 6, &mut rng).unwrap();
    let params = NpklParams::new(r, Loss::Square).tolerance(T::from_f64(1e-3 * T::EPSILON.to_f64().sqrt()));
    let mut npkl = solver(&g, &t, params, 3);
    npkl.run(&mut rng);
    let v = v_matrix(&npkl);
    let mut ext = Extension::new_in(vec![T::ZERO; k], vec![0; k], g.view(), &points, 2, npkl.embedding()).unwrap();
    let sigma2 = g.sigma().to_f64().powi(2);
    let degree = |j: usize| g.degree(j).unwrap().to_f64();
    for x in [[0.5, 0.2], [3.1, -0.4], [10.0, 10.0]] {
        let x: Vec<T> = x.iter().map(|&c| T::from_f64(c)).collect();
        let mut out = vec![T::ZERO; r];
        ext.column(&x, &mut out).unwrap();
        // Dense: the k nearest training points, their weights and eq. (13).
        let mut near: Vec<(T, usize)> =
            (0..n).map(|j| (squared_distance(&x, &points[2 * j..2 * j + 2]).unwrap(), j)).collect();
        near.sort_by(|a, b| a.0.partial_cmp(&b.0).unwrap().then(a.1.cmp(&b.1)));
        let w: Vec<(f64, usize)> = near[..k].iter().map(|&(d, j)| ((-d.to_f64() / (2.0 * sigma2)).exp(), j)).collect();
        let dx: f64 = w.iter().map(|p| p.0).sum();
        let mut expected = DVector::zeros(r);
        for &(wj, j) in &w {
            expected += v.column(j) * (wj / (dx * degree(j)).sqrt() / 1.1);
        }
        let got = DVector::from_iterator(r, out.iter().map(|x| x.to_f64()));
        assert_close(&got, &expected, tolerance::<T>(), "out-of-sample column");
        assert_eq!(ext.neighbours(), &near[..k].iter().map(|p| p.1 as u32).collect::<Vec<_>>()[..]);
    }
    let mut checked = 0;
    for i in (0..n).filter(|&i| t.partners(i).unwrap().count() == 0 && g.row(i).unwrap().0.len() == k) {
        let mut out = vec![T::ZERO; r];
        ext.column_excluding(&points[2 * i..2 * i + 2], i, &mut out).unwrap();
        let got = DVector::from_iterator(r, out.iter().map(|x| x.to_f64()));
        assert_close(&got, &v.column(i).into_owned(), 1e2 * T::EPSILON.to_f64().sqrt(), "leave-one-out column");
        checked += 1;
    }
    assert!(checked >= 4, "{checked}");
    // A rejected call writes nothing and keeps the last neighbours.
    let before = ext.neighbours().to_vec();
    let mut out = vec![T::from_f64(7.0); r];
    assert_eq!(ext.column(&[T::ZERO], &mut out), Err(Error::DimensionMismatch { expected: 2, got: 1 }));
    assert_eq!(ext.column(&[T::from_f64(f64::NAN), T::ZERO], &mut out), Err(Error::NonFinite));
    assert!(out.iter().all(|&x| x == T::from_f64(7.0)) && ext.neighbours() == &before[..]);
}

/// Bad input is an `Error`, and a rejected call leaves the solver as it was.
fn bad_input_is_rejected<T: Real>() {
    let (points, _) = blobs::<T>(1, 5, 2);
    let n = 15;
    let mut nan = points.clone();
    nan[5] = T::from_f64(f64::NAN);
    let build = |p: &[T], dim: usize, k: usize| {
        let params = GraphParams::new().neighbors(k).check().ok()?;
        Laplacian::build_in(
            vec![T::ZERO; Laplacian::scalars_len(n, 3)],
            vec![0; Laplacian::indices_len(n, 3)],
            p,
            dim,
            params,
        )
        .err()
    };
    assert_eq!(build(&nan, 2, 3), Some(Error::NonFinite));
    assert_eq!(build(&points[..29], 2, 3), Some(Error::DimensionMismatch { expected: 30, got: 29 }));
    assert_eq!(build(&points, 2, 15), Some(Error::InvalidParam { name: "neighbors" }));
    let pairs = |p: &[Pair]| Constraints::new_in(vec![0; Constraints::indices_len(n, p.len())], n, p).err();
    assert_eq!(pairs(&[Pair::new(3, 15, Link::Must)]), Some(Error::IndexOutOfRange { index: 15, len: 15 }));
    assert_eq!(
        pairs(&[Pair::new(3, 4, Link::Must), Pair::new(4, 3, Link::Cannot)]),
        Some(Error::InvalidParam { name: "pairs" })
    );
    let too_small = Constraints::new_in(vec![0; 5], n, &[Pair::new(1, 2, Link::Must)]);
    assert_eq!(too_small.err(), Some(Error::CapacityExceeded { needed: Constraints::indices_len(n, 1), capacity: 5 }));

    let g = graph(&points, 2, 3, Search::BruteForce);
    let t = constraints(n, &[Pair::new(0, 1, Link::Must), Pair::new(0, 2, Link::Cannot)]);
    let mut rng = Rng::seed_from_u64(1);
    let new = |params: NpklParams<T>, len: usize, rng: &mut Rng| {
        params
            .check()
            .and_then(|params| Npkl::new_in(vec![T::ZERO; len], vec![0; n], g.view(), t.view(), params, rng))
            .err()
    };
    let len = Npkl::scalars_len(n, 2, t.max_degree());
    assert_eq!(new(NpklParams::new(0, Loss::Hinge), len, &mut rng), Some(Error::InvalidParam { name: "rank" }));
    assert_eq!(
        new(NpklParams::new(2, Loss::Square), len - 1, &mut rng),
        Some(Error::CapacityExceeded { needed: len, capacity: len - 1 })
    );
    assert_eq!(
        new(NpklParams::new(2, Loss::Square).tolerance(T::from_f64(-1.0)), len, &mut rng),
        Some(Error::InvalidParam { name: "tolerance" })
    );
    let mut npkl = solver(&g, &t, NpklParams::new(2, Loss::Hinge), 4);
    let (columns, objective) = (npkl.columns().to_vec(), npkl.tracked_objective());
    assert_eq!(npkl.update_column(n), Err(Error::IndexOutOfRange { index: n, len: n }));
    assert_eq!(npkl.set_column(1, &[T::ONE, T::from_f64(f64::INFINITY)]), Err(Error::NonFinite));
    assert_eq!(npkl.set_column(1, &[T::ONE; 3]), Err(Error::DimensionMismatch { expected: 2, got: 3 }));
    assert_eq!((npkl.columns(), npkl.tracked_objective()), (&columns[..], objective));
    // A valid set_column keeps the tracked objective exact.
    npkl.set_column(1, &[T::from_f64(0.3), T::from_f64(-0.2)]).unwrap();
    let (tracked, fresh) = (npkl.tracked_objective().to_f64(), npkl.objective().to_f64());
    assert!((tracked - fresh).abs() <= tolerance::<T>() * fresh.abs().max(1.0));
}

macro_rules! gen_tests {
    ($($name:ident => $f:ident),* $(,)?) => {$(
        mod $name {
            #[test]
            fn f32() {
                super::$f::<f32>();
            }
            #[test]
            fn f64() {
                super::$f::<f64>();
            }
        }
    )*};
}

gen_tests!(
    laplacian => laplacian_matches_dense,
    column_updates => column_updates_match_references,
    objective => objective_is_monotone_and_dense,
    extension => extension_matches_dense,
    bad_input => bad_input_is_rejected,
);

/// k-means++ with restarts finds the optimal partition of small hand-made sets (checked by
/// enumerating every 2-partition), and the RAND index counts pairs as the paper defines.
#[test]
fn kmeans_and_rand_index_on_hand_made_cases() {
    let sets: [&[f64]; 3] = [
        &[0.0, 0.3, 1.0, 1.1, 5.0, 5.5, 6.0, 9.0],
        &[-3.0, -2.9, -2.7, 0.0, 0.1, 4.0, 4.2, 4.3],
        &[1.0, 2.0, 3.0, 4.0, 10.0, 11.0, 12.0, 13.0],
    ];
    for points in sets {
        let n = points.len();
        let mut best = f64::INFINITY;
        for mask in 1..(1u32 << n) - 1 {
            let inertia: f64 = [true, false]
                .iter()
                .map(|&side| {
                    let members: Vec<f64> =
                        (0..n).filter(|&i| (mask >> i & 1 == 1) == side).map(|i| points[i]).collect();
                    let mean = members.iter().sum::<f64>() / members.len() as f64;
                    members.iter().map(|x| (x - mean).powi(2)).sum::<f64>()
                })
                .sum();
            best = best.min(inertia);
        }
        let km = KMeans::fit_in(
            vec![0.0; KMeans::scalars_len(n, 1, 2)],
            vec![0; KMeans::indices_len(n, 2)],
            points,
            1,
            KMeansParams::new(2).restarts(20).check().unwrap(),
            &mut Rng::seed_from_u64(6),
        )
        .unwrap();
        assert!((km.inertia() - best).abs() < 1e-12, "{} vs {best}", km.inertia());
        let a = km.assignments();
        let recomputed: f64 = (0..n).map(|i| (points[i] - km.centroid(a[i] as usize).unwrap()[0]).powi(2)).sum();
        assert!((recomputed - km.inertia()).abs() < 1e-12);
    }
    // RAND: 4 points, classes {0,1}{2,3}, clusters {0}{1,2,3}: pairs (0,1) sd ✗, (0,2) dd ✓,
    // (0,3) dd ✓, (1,2) ds ✗, (1,3) ds ✗, (2,3) ss ✓ → 3/6.
    assert_eq!(rand_index(&[0, 0, 1, 1], &['a', 'b', 'b', 'b']), Ok(0.5));
    let mut rng = Rng::seed_from_u64(3);
    for _ in 0..20 {
        let truth: Vec<u32> = (0..40).map(|_| rng.below(4) as u32).collect();
        let predicted: Vec<u32> = (0..40).map(|_| rng.below(3) as u32).collect();
        let mut table = vec![0u64; 12];
        assert_eq!(rand_index_table(&truth, &predicted, &mut table), rand_index(&truth, &predicted));
    }
}
