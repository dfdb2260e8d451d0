//! kestrel-core's three Cholesky forms on the device, in `f32`: the full factorization,
//! the updatable factor (append, remove, rank-1 update and downdate) and the pivoted
//! incomplete factor of a kernel matrix.
//!
//! Every factor is checked against the matrix it stands for, recomputed here in `f64`:
//! `L·Lᵀ ≈ A` after each operation (tolerances `c·n·ε_f32·‖A‖`), pivots and determinants
//! against the textbook factorization of `tests/common`.

#![no_std]
#![no_main]
// Index loops mirror the matrix formulas they check.
#![allow(clippy::needless_range_loop)]

mod common;

use common::{Dense, close};
use kestrel_core::cholesky::{ArrayCholesky, Cholesky, IncompleteCholesky, StopReason};
use kestrel_core::{Error, Kernel, Rng};
use kestrel_firmware_demo::{Failure, Tests, ensure, entry};

/// Order of the random test matrices.
const N: usize = 10;
/// Capacity of the factors.
const CAP: usize = 12;
const EPS: f64 = f32::EPSILON as f64;

#[entry]
fn main() -> ! {
    let mut tests = Tests::default();
    tests.run("full_factor_reproduces_a", full_factor_reproduces_a);
    tests.run("full_factor_solve_and_log_det", full_factor_solve_and_log_det);
    tests.run("indefinite_matrix_fails_at_the_reference_pivot", indefinite_matrix);
    tests.run("appending_columns_equals_the_full_factor", appending_columns);
    tests.run("remove_column_factors_the_reduced_matrix", remove_column);
    tests.run("rank_one_update_and_downdate", rank_one_update_and_downdate);
    tests.run("downdate_losing_definiteness_is_rejected", downdate_rejected);
    tests.run("append_beyond_capacity_is_rejected", append_beyond_capacity);
    tests.run("incomplete_full_rank_reproduces_the_gram_matrix", incomplete_full_rank);
    tests.run("incomplete_low_rank_is_exact_on_pivots", incomplete_low_rank);
    tests.run("incomplete_stops_at_tolerance", incomplete_tolerance);
    tests.run("incomplete_rejects_non_finite_points", incomplete_non_finite);
    tests.finish()
}

/// `A = B·Bᵀ/n + I/2` for a random `n × n` `B`, rounded to `f32` (row-major in both).
fn spd(seed: u64, n: usize) -> ([f32; N * N], Dense) {
    let mut rng = Rng::seed_from_u64(seed);
    let b: [f32; N * N] = core::array::from_fn(|_| rng.uniform_in(-1.0, 1.0));
    let mut a32 = [0.0f32; N * N];
    let mut a = Dense::zeros(n);
    for i in 0..n {
        for j in 0..n {
            let s: f32 = (0..n).map(|k| b[i * N + k] * b[j * N + k]).sum::<f32>() / n as f32;
            let v = s + if i == j { 0.5 } else { 0.0 };
            a32[i * n + j] = v;
            a.set(i, j, f64::from(v));
        }
    }
    (a32, a)
}

fn factor(a: &[f32], n: usize) -> Result<ArrayCholesky<f32, { Cholesky::scalars_len(CAP) }>, Error> {
    Cholesky::from_matrix_in([0.0; Cholesky::scalars_len(CAP)], CAP, &a[..n * n], n)
}

/// `max |L·Lᵀ − A| ≤ tol_factor·n·ε·max|A|`.
fn reproduces(
    chol: &ArrayCholesky<f32, { Cholesky::scalars_len(CAP) }>,
    a: &Dense,
    tol_factor: f64,
) -> Result<(), Failure> {
    ensure(chol.dim() == a.n, "factor has the matrix's order")?;
    let product = Dense::from_packed_product(chol.packed(), a.n);
    let tol = tol_factor * a.n as f64 * EPS * a.max_abs();
    ensure(product.max_diff(a) <= tol, "L Lt = A within tolerance")
}

fn full_factor_reproduces_a() -> Result<(), Failure> {
    let (a32, a) = spd(1, N);
    reproduces(&factor(&a32, N)?, &a, 4.0)
}

/// `A x = b` residual, and `log det A` against the reference factor's diagonal.
fn full_factor_solve_and_log_det() -> Result<(), Failure> {
    let (a32, a) = spd(2, N);
    let chol = factor(&a32, N)?;
    let mut rng = Rng::seed_from_u64(3);
    let b: [f32; N] = core::array::from_fn(|_| rng.uniform_in(-1.0, 1.0));
    let mut x = b;
    chol.solve_in_place(&mut x)?;
    let reference = a.solve(&b.map(f64::from)).ok_or(Failure::Check("reference solve"))?;
    for i in 0..N {
        ensure(close(f64::from(x[i]), reference[i], 256.0 * EPS), "solution matches the f64 solve")?;
    }
    let l = a.cholesky().ok_or(Failure::Check("reference factor"))?;
    let log_det: f64 = (0..N).map(|i| 2.0 * libm::log(l.get(i, i))).sum();
    ensure(close(f64::from(chol.log_det()), log_det, 64.0 * EPS), "log det matches")
}

/// A symmetric matrix whose third leading minor is negative: the core fails at pivot 2,
/// where the reference factorization fails too.
fn indefinite_matrix() -> Result<(), Failure> {
    let a = [4.0f32, 2.0, 2.0, 2.0, 5.0, 3.0, 2.0, 3.0, 1.0];
    let mut reference = Dense::zeros(3);
    for (k, &v) in a.iter().enumerate() {
        reference.set(k / 3, k % 3, f64::from(v));
    }
    ensure(reference.cholesky().is_none(), "reference rejects it")?;
    let mut leading = Dense::zeros(2);
    leading.a[..4].copy_from_slice(&[4.0, 2.0, 2.0, 5.0]);
    ensure(leading.cholesky().is_some(), "reference accepts the 2x2 block")?;
    ensure(factor(&a, 3).err() == Some(Error::NotPositiveDefinite { pivot: 2 }), "NotPositiveDefinite at 2")
}

/// Growing the factor column by column from empty gives the factor of the whole matrix.
fn appending_columns() -> Result<(), Failure> {
    let (a32, a) = spd(4, N);
    let mut chol = Cholesky::new_in([0.0f32; Cholesky::scalars_len(CAP)], CAP)?;
    for k in 0..N {
        let column: [f32; N] = core::array::from_fn(|i| a32[k * N + i]);
        chol.append_column(&column[..=k])?;
    }
    reproduces(&chol, &a, 8.0)?;
    let full = factor(&a32, N)?;
    let same = chol.packed().iter().zip(full.packed()).all(|(x, y)| close(f64::from(*x), f64::from(*y), 64.0 * EPS));
    ensure(same, "appended factor equals the full factor entry by entry")
}

/// Removing row/column 3, then 0, then the last: each time `L·Lᵀ` is `A` without them.
fn remove_column() -> Result<(), Failure> {
    let (a32, a) = spd(5, N);
    let mut chol = factor(&a32, N)?;
    let mut kept: [usize; N] = core::array::from_fn(|i| i);
    let mut len = N;
    for index in [3, 0, N - 3] {
        chol.remove_column(index)?;
        kept.copy_within(index + 1..len, index);
        len -= 1;
        let mut reduced = Dense::zeros(len);
        for i in 0..len {
            for j in 0..len {
                reduced.set(i, j, a.get(kept[i], kept[j]));
            }
        }
        reproduces(&chol, &reduced, 16.0)?;
    }
    ensure(chol.remove_column(len) == Err(Error::IndexOutOfRange { index: len, len }), "index past the end")
}

/// `A + vvᵀ`, then `A + vvᵀ − 2·wwᵀ`... each checked against the matrix it stands for.
fn rank_one_update_and_downdate() -> Result<(), Failure> {
    let (a32, mut a) = spd(6, N);
    let mut chol = factor(&a32, N)?;
    let mut rng = Rng::seed_from_u64(7);
    for (round, sigma) in [1.0f32, -0.5, 2.0, -1.0].into_iter().enumerate() {
        let v: [f32; N] = core::array::from_fn(|_| rng.uniform_in(-0.4, 0.4));
        chol.rank_one_update(&v, sigma)?;
        for i in 0..N {
            for j in 0..N {
                a.add(i, j, f64::from(sigma) * f64::from(v[i]) * f64::from(v[j]));
            }
        }
        ensure(a.cholesky().is_some(), "the test keeps A positive definite")?;
        reproduces(&chol, &a, 16.0 * (round + 1) as f64)?;
    }
    Ok(())
}

/// `A − vvᵀ` with `v = 2e₄` for `A₄₄ = 3 < 4`: the downdate fails at pivot 3 and leaves the
/// factor bit for bit as it was.
fn downdate_rejected() -> Result<(), Failure> {
    #[rustfmt::skip]
    let a = [
        4.0f32, 1.0, 0.5, 0.0,
        1.0, 5.0, 1.0, 0.5,
        0.5, 1.0, 6.0, 1.0,
        0.0, 0.5, 1.0, 3.0,
    ];
    let mut chol = factor(&a, 4)?;
    let mut before = [0.0f32; 10];
    before.copy_from_slice(chol.packed());
    let result = chol.rank_one_update(&[0.0, 0.0, 0.0, 2.0], -1.0);
    ensure(result == Err(Error::NotPositiveDefinite { pivot: 3 }), "NotPositiveDefinite at pivot 3")?;
    ensure(chol.dim() == 4 && chol.packed() == before, "the rejected downdate leaves the factor unchanged")
}

/// Capacity 2: a third column is `CapacityExceeded`, the factor unchanged.
fn append_beyond_capacity() -> Result<(), Failure> {
    let mut chol = Cholesky::new_in([0.0f32; Cholesky::scalars_len(2)], 2)?;
    chol.append_column(&[2.0])?;
    chol.append_column(&[1.0, 3.0])?;
    let mut before = [0.0f32; 3];
    before.copy_from_slice(chol.packed());
    let result = chol.append_column(&[0.0, 0.0, 1.0]);
    ensure(result == Err(Error::CapacityExceeded { needed: 3, capacity: 2 }), "CapacityExceeded")?;
    ensure(chol.dim() == 2 && chol.packed() == before, "the factor is unchanged")?;
    ensure(close(f64::from(before[2]), libm::sqrt(2.5), 2.0 * EPS), "L22 = sqrt(3 - 1/2)")
}

/// 16 random 2-D points and their RBF Gram matrix in `f64`.
fn gram(seed: u64) -> ([f32; 32], Dense, Kernel<f32>) {
    let mut rng = Rng::seed_from_u64(seed);
    let points: [f32; 32] = core::array::from_fn(|_| rng.uniform_in(-1.0, 1.0));
    let kernel = Kernel::rbf(2.0f32).unwrap_or(Kernel::linear());
    let mut k = Dense::zeros(16);
    for i in 0..16 {
        for j in 0..16 {
            let (a, b) = (&points[2 * i..2 * i + 2], &points[2 * j..2 * j + 2]);
            k.set(i, j, f64::from(kernel.eval(a, b).unwrap_or(f32::NAN)));
        }
    }
    (points, k, kernel)
}

/// `G·Gᵀ` of an incomplete factor of rank `r` (rows of `G` are `r` long).
fn product<S: AsRef<[f32]> + AsMut<[f32]>, P: AsRef<[usize]> + AsMut<[usize]>>(
    ich: &IncompleteCholesky<f32, S, P>,
) -> Dense {
    let mut m = Dense::zeros(ich.n());
    for i in 0..ich.n() {
        for j in 0..ich.n() {
            let (gi, gj) = (ich.row(i).unwrap_or(&[]), ich.row(j).unwrap_or(&[]));
            m.set(i, j, gi.iter().zip(gj).map(|(a, b)| f64::from(*a) * f64::from(*b)).sum());
        }
    }
    m
}

/// Rank 16 of 16 points: `G·Gᵀ = K`.
fn incomplete_full_rank() -> Result<(), Failure> {
    let (points, k, kernel) = gram(8);
    let mut values = [0.0f32; IncompleteCholesky::scalars_len(16, 16)];
    let mut pivots = [0usize; IncompleteCholesky::indices_len(16)];
    let ich = IncompleteCholesky::from_kernel_in(&mut values[..], &mut pivots[..], &kernel, &points, 2, 16, 0.0)?;
    ensure(ich.rank() == 16, "full rank")?;
    ensure(product(&ich).max_diff(&k) <= 64.0 * EPS, "G Gt = K")
}

/// Rank 6: the residual diagonal is `diag(K − GGᵀ)`, its sum the reported residual, the
/// pivots distinct, the first the largest diagonal (all are 1: index 0), and `GGᵀ` agrees
/// with `K` on the pivots' rows and columns.
fn incomplete_low_rank() -> Result<(), Failure> {
    let (points, k, kernel) = gram(9);
    let mut values = [0.0f32; IncompleteCholesky::scalars_len(16, 6)];
    let mut pivots = [0usize; IncompleteCholesky::indices_len(6)];
    let ich = IncompleteCholesky::from_kernel_in(&mut values[..], &mut pivots[..], &kernel, &points, 2, 6, 0.0)?;
    ensure(ich.rank() == 6 && ich.stop_reason() == StopReason::RankBudget, "stopped at the rank budget")?;
    let g = product(&ich);
    let mut residual = 0.0;
    for (i, &d) in ich.residual_diagonal().iter().enumerate() {
        ensure(close(f64::from(d), k.get(i, i) - g.get(i, i), 16.0 * EPS), "residual diagonal")?;
        residual += f64::from(d);
    }
    ensure(close(f64::from(ich.residual()), residual, 64.0 * EPS), "trace residual = sum of the diagonal")?;
    let p = ich.pivots();
    ensure(p[0] == 0 && (1..p.len()).all(|i| !p[..i].contains(&p[i])), "distinct pivots, first is 0")?;
    for &pi in p {
        for j in 0..16 {
            ensure(close(g.get(pi, j), k.get(pi, j), 64.0 * EPS), "exact on pivot rows")?;
        }
    }
    Ok(())
}

/// With tolerance 10⁻², it stops as soon as `tr(K − GGᵀ) ≤ 10⁻²·tr(K)`, below rank 16.
fn incomplete_tolerance() -> Result<(), Failure> {
    let (points, _, kernel) = gram(10);
    let mut values = [0.0f32; IncompleteCholesky::scalars_len(16, 16)];
    let mut pivots = [0usize; IncompleteCholesky::indices_len(16)];
    let ich = IncompleteCholesky::from_kernel_in(&mut values[..], &mut pivots[..], &kernel, &points, 2, 16, 1e-2)?;
    ensure(ich.stop_reason() == StopReason::Tolerance && ich.rank() < 16, "stopped on the tolerance")?;
    ensure(ich.residual() <= 1e-2 * ich.trace() && ich.trace() == 16.0, "residual within tolerance")
}

fn incomplete_non_finite() -> Result<(), Failure> {
    let points = [0.0f32, 1.0, f32::NAN, 0.5];
    let mut values = [0.0f32; IncompleteCholesky::scalars_len(2, 2)];
    let mut pivots = [0usize; 2];
    let kernel = Kernel::rbf(1.0f32)?;
    let result = IncompleteCholesky::from_kernel_in(&mut values[..], &mut pivots[..], &kernel, &points, 2, 2, 0.0);
    ensure(result.err() == Some(Error::NonFinite), "NonFinite")
}
