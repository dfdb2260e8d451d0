//! `kestrel demo`: what the core does today, on a deterministic data set.
//!
//! Prints the bytes each structure needs before it is built, then factors the RBF kernel
//! matrix of 2,000 points from a noisy 2-D spiral three ways: pivoted incomplete Cholesky
//! (how few columns reach a given trace residual), a full factorization of the pivots'
//! block, and a sliding window kept as an updatable factor (append the newest point,
//! remove the oldest) compared with refactorizing from scratch.

use std::time::Instant;

use anyhow::{Context, Result};
use kestrel_core::cholesky::{self, Cholesky, IncompleteCholesky, budget};
use kestrel_core::{Kernel, Rng};

const POINTS: usize = 2_000;
const DIM: usize = 2;
const GAMMA: f64 = 4.0;
const WINDOW: usize = 128;

/// Runs the demo with the data set drawn from `seed`.
pub fn run(seed: u64) -> Result<()> {
    print_budget_table();
    let points = spiral(seed);
    let kernel = Kernel::rbf(GAMMA)?;
    println!("\nData: {POINTS} points of a noisy 2-D spiral (seed {seed}), RBF kernel exp(-{GAMMA}·‖x−x'‖²).");
    incomplete(&kernel, &points)?;
    sliding_window(&kernel, &points)?;
    Ok(())
}

fn print_budget_table() {
    println!("Memory budget (bytes, computed before anything is built):");
    println!("  {:<44} {:>12} {:>12}", "structure", "f32", "f64");
    for k in [16, 64, 256, 1024] {
        let name = format!("updatable Cholesky, capacity {k}");
        println!("  {name:<44} {:>12} {:>12}", cholesky::bytes_needed::<f32>(k), cholesky::bytes_needed::<f64>(k));
    }
    for (n, r) in [(2_000, 64), (10_000, 100), (100_000, 256)] {
        let name = format!("incomplete Cholesky, n = {n}, rank ≤ {r}");
        let dense = n * n * 4;
        println!(
            "  {name:<44} {:>12} {:>12}   (dense f32 Gram matrix: {dense})",
            budget::bytes_needed::<f32>(n, r),
            budget::bytes_needed::<f64>(n, r)
        );
    }
}

/// Two interleaved spiral arms with Gaussian noise, row-major.
fn spiral(seed: u64) -> Vec<f64> {
    let mut rng = Rng::seed_from_u64(seed);
    let mut points = Vec::with_capacity(POINTS * DIM);
    for i in 0..POINTS {
        let t = 3.0 * std::f64::consts::PI * rng.next_f64();
        let arm = if i % 2 == 0 { 1.0 } else { -1.0 };
        let r = 0.15 * t;
        points.push(arm * r * t.cos() + 0.03 * rng.normal::<f64>());
        points.push(arm * r * t.sin() + 0.03 * rng.normal::<f64>());
    }
    points
}

fn incomplete(kernel: &Kernel<f64>, points: &[f64]) -> Result<()> {
    println!("\nPivoted incomplete Cholesky (columns read on demand, the Gram matrix never stored):");
    println!("  {:>10} {:>6} {:>16} {:>12} {:>10}", "tolerance", "rank", "residual/trace", "bytes", "ms");
    for tolerance in [1e-2, 1e-4, 1e-6, 1e-8] {
        let max_rank = 400;
        let mut values = vec![0.0; budget::values_len(POINTS, max_rank)];
        let mut pivots = vec![0; budget::pivots_len(max_rank)];
        let start = Instant::now();
        let ich = IncompleteCholesky::from_kernel_in(
            &mut values[..],
            &mut pivots[..],
            kernel,
            points,
            DIM,
            max_rank,
            tolerance,
        )
        .context("incomplete Cholesky")?;
        let ms = start.elapsed().as_secs_f64() * 1e3;
        let bytes = budget::bytes_needed::<f64>(POINTS, ich.rank());
        println!(
            "  {tolerance:>10.0e} {:>6} {:>16.3e} {bytes:>12} {ms:>10.1}",
            ich.rank(),
            ich.residual() / ich.trace()
        );
    }
    Ok(())
}

/// Keeps the kernel matrix of the last `WINDOW` points (plus a small ridge) factored while
/// the window slides over all points, then checks it against a fresh factorization.
fn sliding_window(kernel: &Kernel<f64>, points: &[f64]) -> Result<()> {
    let ridge = 1e-3;
    let point = |i: usize| &points[i * DIM..(i + 1) * DIM];
    let entry = |i: usize, j: usize| kernel.eval(point(i), point(j)).map(|k| k + if i == j { ridge } else { 0.0 });
    let mut chol = Cholesky::new_in(vec![0.0; cholesky::storage_len(WINDOW)], WINDOW)?;
    let mut column = Vec::with_capacity(WINDOW);
    let start = Instant::now();
    for newest in 0..POINTS {
        if chol.dim() == WINDOW {
            chol.remove_column(0)?;
        }
        let oldest = newest + 1 - (chol.dim() + 1);
        column.clear();
        for i in oldest..=newest {
            column.push(entry(newest, i)?);
        }
        chol.append_column(&column).with_context(|| format!("appending point {newest}"))?;
    }
    let update_ms = start.elapsed().as_secs_f64() * 1e3;
    let first = POINTS - WINDOW;
    let start = Instant::now();
    let mut failure = None;
    let fresh = Cholesky::factor_in(vec![0.0; cholesky::storage_len(WINDOW)], WINDOW, WINDOW, |i, j| {
        entry(first + i, first + j).unwrap_or_else(|e| {
            failure = Some(e);
            f64::NAN
        })
    });
    let fresh = fresh.map_err(|e| failure.unwrap_or(e))?;
    let refactor_ms = start.elapsed().as_secs_f64() * 1e3;
    let max_difference = chol.packed().iter().zip(fresh.packed()).map(|(a, b)| (a - b).abs()).fold(0.0, f64::max);
    println!(
        "\nSliding window of {WINDOW} points over all {POINTS}: {} appends and {} removals in {update_ms:.1} ms \
         ({:.1} µs per step; one refactorization takes {refactor_ms:.2} ms).",
        POINTS,
        POINTS - WINDOW,
        update_ms * 1e3 / (2 * POINTS - WINDOW) as f64
    );
    println!("  largest difference from a fresh factorization of the final window: {max_difference:.2e}");
    println!("  log det of the window's kernel matrix: {:.4}", chol.log_det());
    Ok(())
}
