//! Pivoted incomplete Cholesky of an RBF Gram matrix of 2,000 points against a dense
//! reference factorization.
//!
//! Reference: with the pivots `p` the core chose, the dense pivoted Cholesky of `PKPᵀ`
//! has leading columns `[L₁₁; L₂₁]` with `L₁₁ = chol(K[p, p])` (nalgebra) and
//! `L₂₁ = K[rest, p]·L₁₁⁻ᵀ`. The core's `G` must equal it row for row, and its greedy
//! choice must be the largest residual diagonal of the reference at every step.

use kestrel_core::cholesky::{IncompleteCholesky, StopReason};
use kestrel_core::{Kernel, Real, Rng};
use kestrel_tests::{gram_matrix, uniform_points};
use nalgebra::DMatrix;

const N: usize = 2_000;
const DIM: usize = 3;
const MAX_RANK: usize = 400;

struct Outcome {
    rank: usize,
    residual_ratio: f64,
    factor_error: f64,
    greedy_violations: usize,
}

fn run<T: Real>(tolerance: f64) -> Outcome {
    let mut rng = Rng::seed_from_u64(2024);
    let points = uniform_points::<T>(&mut rng, N, DIM);
    let kernel = Kernel::rbf(T::from_f64(2.0)).unwrap();
    let mut values = vec![T::ZERO; IncompleteCholesky::scalars_len(N, MAX_RANK)];
    let mut pivots = vec![0usize; IncompleteCholesky::indices_len(MAX_RANK)];
    let tolerance = T::from_f64(tolerance);
    let ich = IncompleteCholesky::from_kernel_in(
        &mut values[..],
        &mut pivots[..],
        &kernel,
        &points,
        DIM,
        MAX_RANK,
        tolerance,
    )
    .unwrap();
    assert_eq!(ich.stop_reason(), StopReason::Tolerance, "rank budget {MAX_RANK} too small");
    let r = ich.rank();
    let g = DMatrix::from_fn(N, r, |i, t| ich.row(i).unwrap()[t].to_f64());

    let k = gram_matrix(&kernel, &points, DIM);
    let p = ich.pivots();
    let k11 = DMatrix::from_fn(r, r, |s, t| k[(p[s], p[t])]);
    let l11 = k11.cholesky().expect("pivot block is SPD").l();
    // Rows of the reference factor in the original order: L₂₁ = K[:, p] L₁₁⁻ᵀ for every row
    // (at the pivots this gives L₁₁ itself).
    let k_cols = DMatrix::from_fn(N, r, |i, t| k[(i, p[t])]);
    let reference = l11.solve_lower_triangular(&k_cols.transpose()).unwrap().transpose();
    let factor_error = (&g - &reference).norm() / reference.norm();

    // Greedy rule: pivot t has the largest residual diagonal after t columns, up to the
    // rounding the core's scalar makes in `t` subtractions from K_ii = 1.
    let mut residual: Vec<f64> = (0..N).map(|i| k[(i, i)]).collect();
    let mut greedy_violations = 0;
    for t in 0..r {
        let max = residual.iter().cloned().fold(f64::MIN, f64::max);
        let rounding = 4.0 * (t + 1) as f64 * T::EPSILON.to_f64();
        if residual[p[t]] < max * (1.0 - 1e-9) - rounding {
            greedy_violations += 1;
        }
        for (i, d) in residual.iter_mut().enumerate() {
            *d -= reference[(i, t)] * reference[(i, t)];
        }
    }
    Outcome { rank: r, residual_ratio: ich.residual().to_f64() / ich.trace().to_f64(), factor_error, greedy_violations }
}

#[test]
fn rbf_gram_2000_points_f64() {
    let o = run::<f64>(1e-6);
    println!("f64: rank {}, residual/trace {:.2e}, factor error {:.2e}", o.rank, o.residual_ratio, o.factor_error);
    assert!(o.residual_ratio < 1e-6);
    assert!(o.factor_error < 1e-9, "factor error {:e}", o.factor_error);
    assert_eq!(o.greedy_violations, 0);
}

#[test]
fn rbf_gram_2000_points_f32() {
    let o = run::<f32>(1e-6);
    println!("f32: rank {}, residual/trace {:.2e}, factor error {:.2e}", o.rank, o.residual_ratio, o.factor_error);
    assert!(o.residual_ratio < 1e-6);
    assert!(o.factor_error < 5e-3, "factor error {:e}", o.factor_error);
    assert_eq!(o.greedy_violations, 0);
}
