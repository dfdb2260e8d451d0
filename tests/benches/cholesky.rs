//! Cholesky foundations: kestrel's O(k²) updates against nalgebra's dense refactorization,
//! and the pivoted incomplete Cholesky of a large RBF kernel matrix.
//!
//! Run with `cargo bench -p kestrel-tests --bench cholesky`; results are summarised in
//! `BENCHMARKS.md`. Every input is built from a seeded [`Rng`] outside the timed closure,
//! and every timed closure returns its result so that dropping it is not timed either.

use std::hint::black_box;
use std::time::Duration;

use criterion::measurement::WallTime;
use criterion::{BatchSize, BenchmarkGroup, BenchmarkId, Criterion, SamplingMode};
use kestrel_core::cholesky::{IncompleteCholesky, StopReason};
use kestrel_core::{Cholesky, Kernel, Rng};
use kestrel_tests::{lower_factor, random_spd, relative_error, uniform_points};
use nalgebra::{DMatrix, DVector};

/// Factor sizes for the updatable Cholesky.
const SIZES: [usize; 3] = [64, 256, 1024];
/// Diagonal shift of the random SPD matrices (keeps them well conditioned).
const SHIFT: f64 = 1.0;
/// Tolerance of the once-per-size check that both libraries computed the same factor.
const AGREEMENT: f64 = 1e-10;

/// Incomplete Cholesky: points, dimension, rank budget, RBF γ.
const ICHOL_N: usize = 10_000;
const ICHOL_DIM: usize = 8;
const ICHOL_RANK: usize = 100;
const ICHOL_GAMMA: f64 = 0.5;

/// A kestrel factor of the leading `k × k` block of `a`, with room for `capacity` rows.
fn kestrel_factor(a: &DMatrix<f64>, k: usize, capacity: usize) -> Cholesky<f64, Vec<f64>> {
    Cholesky::factor_in(vec![0.0; Cholesky::scalars_len(capacity)], capacity, k, |i, j| a[(i, j)])
        .expect("random SPD matrix")
}

/// Small samples and short measurement: the whole bench must run in minutes on 2 cores.
fn configure(group: &mut BenchmarkGroup<'_, WallTime>) {
    group
        .sample_size(10)
        .sampling_mode(SamplingMode::Flat)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2));
}

/// Appending row/column `k` to a `k × k` factor vs refactoring the `(k+1) × (k+1)` matrix.
fn append(c: &mut Criterion) {
    let mut group = c.benchmark_group("cholesky_append");
    configure(&mut group);
    let mut rng = Rng::seed_from_u64(0x00C0_FFEE);
    for k in SIZES {
        let a = random_spd(&mut rng, k + 1, SHIFT);
        let column: Vec<f64> = (0..=k).map(|i| a[(i, k)]).collect();
        let leading = kestrel_factor(&a, k, k + 1);

        let mut grown = leading.clone();
        grown.append_column(&column).expect("SPD");
        let reference = nalgebra::Cholesky::new(a.clone()).expect("SPD");
        assert!(relative_error(&lower_factor(&grown), &reference.l()) < AGREEMENT);

        group.bench_with_input(BenchmarkId::new("kestrel append_column", k), &k, |b, _| {
            b.iter_batched(
                || leading.clone(),
                |mut chol| {
                    chol.append_column(black_box(&column)).expect("SPD");
                    chol
                },
                BatchSize::LargeInput,
            );
        });
        group.bench_with_input(BenchmarkId::new("nalgebra refactor k+1", k), &k, |b, _| {
            b.iter_batched(
                || a.clone(),
                |m| nalgebra::Cholesky::new(black_box(m)).expect("SPD"),
                BatchSize::LargeInput,
            );
        });
    }
    group.finish();
}

/// `A + xxᵀ`: kestrel's rank-1 update vs nalgebra's refactorization and rank-1 update.
fn rank_one(c: &mut Criterion) {
    let mut group = c.benchmark_group("cholesky_rank_one_update");
    configure(&mut group);
    let mut rng = Rng::seed_from_u64(0x0BAD_5EED);
    for k in SIZES {
        let a = random_spd(&mut rng, k, SHIFT);
        let x: Vec<f64> = (0..k).map(|_| rng.normal::<f64>()).collect();
        let xv = DVector::from_column_slice(&x);
        let updated = &a + &xv * xv.transpose();
        let chol = kestrel_factor(&a, k, k);
        let na_chol = nalgebra::Cholesky::new(a.clone()).expect("SPD");

        let mut kestrel_updated = chol.clone();
        kestrel_updated.rank_one_update(&x, 1.0).expect("update");
        let mut na_updated = na_chol.clone();
        na_updated.rank_one_update(&xv, 1.0);
        let reference = nalgebra::Cholesky::new(updated.clone()).expect("SPD");
        assert!(relative_error(&lower_factor(&kestrel_updated), &reference.l()) < AGREEMENT);
        assert!(relative_error(&na_updated.l(), &reference.l()) < AGREEMENT);

        group.bench_with_input(BenchmarkId::new("kestrel rank_one_update", k), &k, |b, _| {
            b.iter_batched(
                || chol.clone(),
                |mut chol| {
                    chol.rank_one_update(black_box(&x), 1.0).expect("update");
                    chol
                },
                BatchSize::LargeInput,
            );
        });
        group.bench_with_input(BenchmarkId::new("nalgebra refactor", k), &k, |b, _| {
            b.iter_batched(
                || updated.clone(),
                |m| nalgebra::Cholesky::new(black_box(m)).expect("SPD"),
                BatchSize::LargeInput,
            );
        });
        group.bench_with_input(BenchmarkId::new("nalgebra rank_one_update", k), &k, |b, _| {
            b.iter_batched(
                || na_chol.clone(),
                |mut chol| {
                    chol.rank_one_update(black_box(&xv), 1.0);
                    chol
                },
                BatchSize::LargeInput,
            );
        });
    }
    group.finish();
}

/// Pivoted incomplete Cholesky of the RBF Gram matrix of `n` uniform points in `[0, 1)^d`.
fn incomplete(c: &mut Criterion) {
    let mut group = c.benchmark_group("incomplete_cholesky");
    configure(&mut group);
    let (n, r) = (ICHOL_N, ICHOL_RANK);
    let mut rng = Rng::seed_from_u64(0x1C40_1E5C);
    let points: Vec<f64> = uniform_points(&mut rng, n, ICHOL_DIM);
    let kernel = Kernel::rbf(ICHOL_GAMMA).expect("positive gamma");
    let values = vec![0.0f64; IncompleteCholesky::scalars_len(n, r)];
    let pivots = vec![0usize; IncompleteCholesky::indices_len(r)];

    let (mut v, mut p) = (values.clone(), pivots.clone());
    let ich = IncompleteCholesky::from_kernel_in(&mut v[..], &mut p[..], &kernel, &points, ICHOL_DIM, r, 0.0)
        .expect("kernel matrix");
    assert_eq!((ich.rank(), ich.stop_reason()), (r, StopReason::RankBudget));
    let dense_bytes = n * n * size_of::<f64>();
    eprintln!(
        "incomplete_cholesky: n = {n}, d = {ICHOL_DIM}, r = {r}, gamma = {ICHOL_GAMMA}: \
         tr(K - GG^T) / tr(K) = {:.3e}; storage {} bytes vs dense Gram {} bytes; \
         ~n r^2 = {:.2e} flops in the dot products, r n = {:.1e} kernel evaluations",
        ich.residual() / ich.trace(),
        IncompleteCholesky::bytes::<f64>(n, r),
        dense_bytes,
        (n * r * r) as f64,
        (n * r) as f64,
    );

    group.bench_with_input(BenchmarkId::new("kestrel rbf n=10000 d=8", r), &r, |b, _| {
        b.iter_batched_ref(
            || (values.clone(), pivots.clone()),
            |(v, p)| {
                let ich = IncompleteCholesky::from_kernel_in(
                    &mut v[..],
                    &mut p[..],
                    &kernel,
                    black_box(&points),
                    ICHOL_DIM,
                    r,
                    0.0,
                )
                .expect("kernel matrix");
                ich.residual()
            },
            BatchSize::LargeInput,
        );
    });
    group.finish();
}

// What `criterion_group!`/`criterion_main!` expand to, without their undocumented `pub fn`.
fn main() {
    let mut c = Criterion::default().configure_from_args();
    append(&mut c);
    rank_one(&mut c);
    incomplete(&mut c);
    c.final_summary();
}
