//! Dual coordinate descent (the LIBLINEAR solver) on the device, in `f32`: batch passes
//! of the binary and one-vs-rest SVMs and the windowed online SVM.
//!
//! The invariants are recomputed here in `f64` from the dual (Hsieh et al. 2008, eq. 4):
//! `ŵ = Σ yᵢαᵢx̂ᵢ` with `x̂ = [x, B]`; `0 ≤ αᵢ ≤ C` (hinge); the dual objective
//! `f(α) = ½‖ŵ‖² + ½ΣDᵢᵢαᵢ² − Σαᵢ` never increases from pass to pass; at the end the
//! projected gradients are within the stopping tolerance and the primal–dual gap
//! `P(ŵ) + f(α)` is small (weak duality makes it ≥ 0).

#![no_std]
#![no_main]
// Index loops mirror the sums they check.
#![allow(clippy::needless_range_loop)]

mod common;

use common::close;
use kestrel_core::dcd::{DenseRows, Exit, LinearSvm, Loss, OneVsRest, OnlineSvm, Params, Row};
use kestrel_core::scaler::Scaler;
use kestrel_core::{Error, Rng};
use kestrel_firmware_demo::{Failure, Tests, ensure, entry};

/// Rows and features of the batch problems.
const N: usize = 48;
const D: usize = 3;
const BIAS: f32 = 1.0;
const EPSILON: f32 = 1e-3;

#[entry]
fn main() -> ! {
    let mut tests = Tests::default();
    tests.run("hinge_passes_monotone_box_w_kkt_and_gap", || batch(Loss::Hinge, 1.0));
    tests.run("squared_hinge_passes_monotone_w_kkt_and_gap", || batch(Loss::SquaredHinge, 0.5));
    tests.run("separable_data_is_learned_exactly", separable);
    tests.run("one_vs_rest_separates_three_clusters", one_vs_rest);
    tests.run("online_window_keeps_w_and_box_invariants", online_window);
    tests.run("online_steps_never_increase_the_dual", online_steps_monotone);
    tests.run("online_arrivals_end_converged", online_arrivals_converge);
    tests.run("online_rejects_bad_samples_unchanged", online_rejects);
    tests.run("online_scaler_matches_two_pass_f64", online_scaler);
    tests.finish()
}

/// Labels `sign(x₁ + 0.5x₂ − 0.2 + noise)` on uniform points of `[-1, 1]³`, with noise so
/// that some rows end inside the margin (`0 < α < C`) and some at the bound.
fn data(seed: u64, noise: f32) -> ([f32; N * D], [i32; N]) {
    let mut rng = Rng::seed_from_u64(seed);
    let x: [f32; N * D] = core::array::from_fn(|_| rng.uniform_in(-1.0, 1.0));
    let y = core::array::from_fn(|i| {
        let s = x[i * D] + 0.5 * x[i * D + 1] - 0.2 + noise * rng.normal::<f32>();
        if s > 0.0 { 1 } else { -1 }
    });
    (x, y)
}

/// `Σ yᵢαᵢx̂ᵢ` in `f64`.
fn weights_of(x: &[f32], y: &[i32], alpha: &[f32]) -> [f64; D + 1] {
    let mut w = [0.0; D + 1];
    for i in 0..alpha.len() {
        let a = f64::from(y[i]) * f64::from(alpha[i]);
        for j in 0..D {
            w[j] += a * f64::from(x[i * D + j]);
        }
        w[D] += a * f64::from(BIAS);
    }
    w
}

/// The solver's `[w, w_b]` equals `reference` within `tol`.
fn matches_weights(w: &[f32], bias_weight: f32, reference: &[f64; D + 1], tol: f64) -> bool {
    w.iter().chain(core::iter::once(&bias_weight)).zip(reference).all(|(s, r)| (f64::from(*s) - r).abs() <= tol)
}

fn margin(w: &[f64], x: &[f32]) -> f64 {
    (0..D).map(|j| w[j] * f64::from(x[j])).sum::<f64>() + w[D] * f64::from(BIAS)
}

/// Batch training: per-pass monotone dual, then the invariants at the returned `α`.
fn batch(loss: Loss, c: f32) -> Result<(), Failure> {
    let (x, y) = data(1, 0.3);
    let params = Params::new().loss(loss).c(c).bias(BIAS).epsilon(EPSILON).check()?;
    let mut svm =
        LinearSvm::new_in([0.0f32; LinearSvm::scalars_len(N, D)], [0usize; LinearSvm::indices_len(N)], N, D, params)?;
    let mut previous = f32::INFINITY;
    let mut monotone = true;
    let outcome = svm.train_observed(&DenseRows::new(&x, D)?, &y, &mut Rng::seed_from_u64(2), |pass| {
        let f = pass.objective();
        monotone &= f <= previous + 8.0 * f32::EPSILON * f.abs();
        previous = f;
    })?;
    ensure(monotone, "dual objective non-increasing over passes")?;
    ensure(outcome.exit == Exit::Converged, "converged")?;
    let (hinge, alpha) = (loss == Loss::Hinge, svm.alpha());
    let upper = if hinge { f64::from(c) } else { f64::INFINITY };
    let diagonal = if hinge { 0.0 } else { 0.5 / f64::from(c) };
    ensure(alpha.iter().all(|&a| a >= 0.0 && f64::from(a) <= upper), "0 <= alpha <= U")?;
    let w = weights_of(&x, &y, alpha);
    let tol = 1e-4 * w.iter().fold(1.0, |m, v| if v.abs() > m { v.abs() } else { m });
    ensure(matches_weights(svm.weights(), svm.bias_weight(), &w, tol), "w = sum y alpha x")?;
    // Dual objective, projected gradients and the primal.
    let (mut dual, mut primal) =
        (0.5 * w.iter().map(|v| v * v).sum::<f64>(), 0.5 * w.iter().map(|v| v * v).sum::<f64>());
    let (mut pg_max, mut pg_min, mut support) = (f64::NEG_INFINITY, f64::INFINITY, 0);
    for i in 0..N {
        let a = f64::from(alpha[i]);
        let m = f64::from(y[i]) * margin(&w, &x[i * D..(i + 1) * D]);
        dual += 0.5 * diagonal * a * a - a;
        let xi = if 1.0 - m > 0.0 { 1.0 - m } else { 0.0 };
        primal += f64::from(c) * if hinge { xi } else { xi * xi };
        let g = m - 1.0 + diagonal * a;
        let pg = if a == 0.0 {
            g.min(0.0)
        } else if a >= upper {
            g.max(0.0)
        } else {
            g
        };
        (pg_max, pg_min) = (pg_max.max(pg), pg_min.min(pg));
        support += usize::from(a > 0.0);
    }
    ensure(close(f64::from(outcome.objective), dual, 1e-4), "reported objective = f(alpha)")?;
    ensure(outcome.support_vectors == support, "support vectors counted")?;
    ensure(pg_max - pg_min <= 4.0 * f64::from(EPSILON), "projected-gradient range within the stopping rule")?;
    let gap = primal + dual;
    ensure(gap >= -1e-4 * primal && gap <= 0.05 * primal, "small non-negative duality gap")?;
    ensure(!hinge || alpha.iter().any(|&a| a > 0.0 && f64::from(a) < upper), "some alpha strictly inside the box")
}

/// Noise-free labels: every training row is classified correctly.
fn separable() -> Result<(), Failure> {
    let (x, y) = data(3, 0.0);
    let params = Params::new().loss(Loss::Hinge).c(100.0).bias(BIAS).epsilon(1e-4).check()?;
    let mut svm =
        LinearSvm::new_in([0.0f32; LinearSvm::scalars_len(N, D)], [0usize; LinearSvm::indices_len(N)], N, D, params)?;
    svm.train(&DenseRows::new(&x, D)?, &y, &mut Rng::seed_from_u64(4))?;
    for i in 0..N {
        ensure(svm.predict(Row::Dense(&x[i * D..(i + 1) * D]))? == y[i], "training row classified")?;
    }
    Ok(())
}

/// Three well-separated clusters in 3-D, labels 0, 1, 2: one-vs-rest gets them all right.
fn one_vs_rest() -> Result<(), Failure> {
    const CENTRES: [[f32; D]; 3] = [[2.0, 0.0, 0.0], [-1.0, 2.0, 0.0], [-1.0, -2.0, 1.0]];
    let mut rng = Rng::seed_from_u64(5);
    let labels: [i32; N] = core::array::from_fn(|i| (i % 3) as i32);
    let x: [f32; N * D] = core::array::from_fn(|k| CENTRES[(k / D) % 3][k % D] + 0.3 * rng.normal::<f32>());
    let params = Params::new().c(1.0).bias(BIAS).epsilon(1e-3).check()?;
    let mut ovr = OneVsRest::new_in(
        [0.0f32; OneVsRest::scalars_len(N, D, 3)],
        [0usize; OneVsRest::indices_len(N)],
        N,
        D,
        3,
        params,
    )?;
    ovr.train(&DenseRows::new(&x, D)?, &labels, &mut Rng::seed_from_u64(6))?;
    for i in 0..N {
        ensure(ovr.predict(Row::Dense(&x[i * D..(i + 1) * D]))? == labels[i] as usize, "cluster classified")?;
    }
    ensure(ovr.train(&DenseRows::new(&x, D)?, &[3; N], &mut rng) == Err(Error::InvalidLabel { row: 0 }), "label 3")
}

const WINDOW: usize = 16;
type Online = OnlineSvm<f32, [f32; OnlineSvm::scalars_len(WINDOW, D)]>;

fn online(steps: usize) -> Result<Online, Failure> {
    let params = Params::new().loss(Loss::Hinge).c(1.0).bias(BIAS).check()?;
    Ok(OnlineSvm::new_in([0.0f32; OnlineSvm::scalars_len(WINDOW, D)], WINDOW, D, params, steps)?)
}

/// 40 arrivals into a window of 16: after each, the window holds the last samples in
/// order, `0 ≤ α ≤ C`, and `ŵ = Σ yαx̂` over the window (recomputed in `f64`).
fn online_window() -> Result<(), Failure> {
    let (x, y) = data(7, 0.2);
    let mut svm = online(4)?;
    let mut rng = Rng::seed_from_u64(8);
    for t in 0..40 {
        svm.push(Row::Dense(&x[t * D..(t + 1) * D]), y[t], &mut rng)?;
        let first = (t + 1).saturating_sub(WINDOW);
        ensure(svm.len() == t + 1 - first, "window length")?;
        let mut alpha = [0.0f32; WINDOW];
        for k in 0..svm.len() {
            let (xk, a, label) = svm.sample(k).ok_or(Failure::Check("sample"))?;
            ensure(xk == &x[(first + k) * D..(first + k + 1) * D] && label == y[first + k], "oldest first")?;
            ensure((0.0..=1.0).contains(&a), "0 <= alpha <= C")?;
            alpha[k] = a;
        }
        let w = weights_of(&x[first * D..], &y[first..], &alpha[..svm.len()]);
        ensure(matches_weights(svm.weights(), svm.bias_weight(), &w, 1e-5), "w = sum over the window")?;
    }
    let mut correct = 0;
    for i in 0..N {
        correct += usize::from(svm.predict(Row::Dense(&x[i * D..(i + 1) * D]))? == y[i]);
    }
    ensure(correct >= N * 3 / 4, "the window's model classifies most rows")
}

/// Extra coordinate steps on a fixed window never increase `f(α)`.
fn online_steps_monotone() -> Result<(), Failure> {
    let (x, y) = data(9, 0.2);
    // A cap of 1: each arrival takes only its own sample's step.
    let mut svm = online(1)?;
    let mut rng = Rng::seed_from_u64(10);
    for t in 0..WINDOW {
        ensure(svm.push(Row::Dense(&x[t * D..(t + 1) * D]), y[t], &mut rng)? == 1, "one step per arrival")?;
    }
    let start = svm.objective();
    let mut previous = start;
    for _ in 0..64 {
        svm.steps(4, &mut rng);
        let f = svm.objective();
        ensure(f <= previous + 8.0 * f32::EPSILON * f.abs(), "f(alpha) non-increasing")?;
        previous = f;
    }
    ensure(previous < start, "the steps lowered the dual")
}

/// With a cap that allows it, every arrival ends with the window converged (one pass
/// whose projected gradients spread by at most ε), in fewer steps than the cap.
fn online_arrivals_converge() -> Result<(), Failure> {
    let (x, y) = data(13, 0.2);
    let mut svm = online(100_000)?;
    let mut rng = Rng::seed_from_u64(14);
    for t in 0..N {
        let steps = svm.push(Row::Dense(&x[t * D..(t + 1) * D]), y[t], &mut rng)?;
        ensure(svm.converged() && steps < 100_000, "converged within the cap")?;
    }
    Ok(())
}

/// A label other than ±1, a NaN feature and a short row are errors; nothing changes.
fn online_rejects() -> Result<(), Failure> {
    let (x, y) = data(11, 0.2);
    let mut svm = online(4)?;
    let mut rng = Rng::seed_from_u64(12);
    for t in 0..20 {
        svm.push(Row::Dense(&x[t * D..(t + 1) * D]), y[t], &mut rng)?;
    }
    let before = (svm.len(), svm.objective(), svm.bias_weight());
    ensure(svm.push(Row::Dense(&[0.0; D]), 0, &mut rng) == Err(Error::InvalidLabel { row: 0 }), "label 0")?;
    ensure(svm.push(Row::Dense(&[f32::NAN, 0.0, 0.0]), 1, &mut rng) == Err(Error::NonFinite), "NaN")?;
    ensure(matches!(svm.push(Row::Dense(&[0.0; 2]), 1, &mut rng), Err(Error::DimensionMismatch { .. })), "short")?;
    ensure((svm.len(), svm.objective(), svm.bias_weight()) == before, "unchanged")
}

/// The online scaler in `f32` on raw units (a mean of 10⁴ with a spread of 1, where a sum
/// of squares loses every digit) against the two-pass mean and deviation in `f64`; a
/// transformed row against the same reference; a bad row changes nothing.
fn online_scaler() -> Result<(), Failure> {
    const ROWS: usize = 400;
    let mut rng = Rng::seed_from_u64(9);
    let rows: [[f32; 2]; ROWS] = core::array::from_fn(|_| [1e4 + rng.normal::<f32>(), 0.01 * rng.normal::<f32>()]);
    let mut scaler = Scaler::new_in([0.0f32; Scaler::scalars_len(2)], 2)?;
    for row in &rows {
        scaler.observe(row)?;
    }
    let n = ROWS as f64;
    for j in 0..2 {
        let mean = rows.iter().map(|r| f64::from(r[j])).sum::<f64>() / n;
        let sd = libm::sqrt(rows.iter().map(|r| (f64::from(r[j]) - mean) * (f64::from(r[j]) - mean)).sum::<f64>() / n);
        ensure(close(f64::from(scaler.mean()[j]), mean, 1e-6 * mean.abs().max(1e-3)), "mean within f32 rounding")?;
        ensure(close(f64::from(scaler.scales()[j]) * sd, 1.0, 1e-3), "1/σ within 0.1 %")?;
        let mut x = rows[0];
        scaler.transform(&mut x)?;
        ensure(close(f64::from(x[j]), (f64::from(rows[0][j]) - mean) / sd, 1e-2), "standardised row")?;
    }
    let before = (scaler.count(), scaler.mean()[0], scaler.scales()[1]);
    ensure(scaler.observe(&[f32::NAN, 0.0]) == Err(Error::NonFinite), "NaN refused")?;
    ensure(scaler.observe(&[0.0, f32::MAX]) == Err(Error::NonFinite), "overflow refused")?;
    ensure((scaler.count(), scaler.mean()[0], scaler.scales()[1]) == before, "unchanged")
}
