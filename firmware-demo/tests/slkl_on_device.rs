//! SLKL on the device, in `f32`: coordinate steps of the batch learner and window updates
//! of the sliding-window learner, against a dense reference computed here in `f64` from
//! the paper's formulas (seed 001, eq. 14-21):
//!
//! ```text
//! K_λ = λI + Σ_m μ_m c_m c_mᵀ,  c_m = k(·, s_m)          (RBF: k(s, s) = 1)
//! F(μ) = λ·y_cᵀK_λ⁻¹y_c + ν·Σ μ_m,  y_c = y − ȳ
//! ∂F/∂μ_m = ν − λa²,  a = y_cᵀK_λ⁻¹c_m
//! f(x) = ȳ + Σ_m μ_m k(x, s_m)·c_mᵀK_λ⁻¹y_c
//! H = D⁻¹ + CᵀC/λ over the active columns (the factor the learner keeps)
//! ```
//!
//! Tolerances are `c·ε_f32` relative, `c` in the hundreds: the learner works in `f32` on
//! systems with condition numbers in the tens.

#![no_std]
#![no_main]
// Index loops mirror the matrix formulas they check.
#![allow(clippy::needless_range_loop)]

mod common;

use common::{Dense, MAX, close, dot};
use kestrel_core::slkl::{Candidates, Dims, ExitReason, Params, Slkl, SlklWindow, ValidParams};
use kestrel_core::{Error, Kernel, Rng};
use kestrel_firmware_demo::{Failure, Tests, ensure, entry};

/// Samples of the batch problem; window length of the window tests.
const N: usize = 16;
const WINDOW: usize = 8;
const D: usize = 2;
/// Candidates.
const M: usize = 8;
const GAMMA: f32 = 1.0;
const NU: f32 = 0.01;
const TOL: f64 = 1000.0 * f32::EPSILON as f64;

const DIMS: Dims = Dims::new(N, D, M, M);
const WDIMS: Dims = Dims::new(WINDOW, D, M, M);

#[entry]
fn main() -> ! {
    let mut tests = Tests::default();
    tests.run("objective_derivatives_factor_prediction_match_dense", set_weights_match_dense);
    tests.run("steps_never_increase_the_objective", steps_monotone);
    tests.run("run_converges_to_a_coordinate_minimum", run_converges);
    tests.run("max_active_caps_m0", max_active_caps_m0);
    tests.run("window_updates_match_dense_on_the_last_n", window_matches_dense);
    tests.run("window_equals_batch_on_the_same_samples", window_equals_batch);
    tests.run("window_rejects_bad_samples_unchanged", window_rejects_bad_samples);
    tests.finish()
}

/// `y = sin(2x₁) + x₂² + noise` on `n` random points of `[-1.5, 1.5]²`, and `M` centres.
struct Data {
    x: [f32; 2 * N],
    y: [f32; N],
    centres: [f32; M * D],
}

fn data(seed: u64) -> Data {
    let mut rng = Rng::seed_from_u64(seed);
    let x: [f32; 2 * N] = core::array::from_fn(|_| rng.uniform_in(-1.5, 1.5));
    let y =
        core::array::from_fn(|i| libm::sinf(2.0 * x[2 * i]) + x[2 * i + 1] * x[2 * i + 1] + 0.05 * rng.normal::<f32>());
    let centres = core::array::from_fn(|_| rng.uniform_in(-1.5, 1.5));
    Data { x, y, centres }
}

fn params() -> Result<ValidParams<f32>, Error> {
    Params::new().kernel(Kernel::rbf(GAMMA)?).nu(NU).seed(3).check()
}

/// The dense reference for samples `x`, `y` (`n` of them) and the centres.
struct Reference<'a> {
    x: &'a [f32],
    y: &'a [f32],
    centres: &'a [f32],
}

impl Reference<'_> {
    fn n(&self) -> usize {
        self.y.len()
    }
    fn kernel(a: &[f32], b: &[f32]) -> f64 {
        let d2: f64 =
            a.iter().zip(b).map(|(p, q)| (f64::from(*p) - f64::from(*q)) * (f64::from(*p) - f64::from(*q))).sum();
        libm::exp(-f64::from(GAMMA) * d2)
    }
    fn column(&self, m: usize) -> [f64; MAX] {
        let s = &self.centres[m * D..(m + 1) * D];
        core::array::from_fn(|i| if i < self.n() { Self::kernel(&self.x[i * D..(i + 1) * D], s) } else { 0.0 })
    }
    fn centred_y(&self) -> ([f64; MAX], f64) {
        let mean = self.y.iter().map(|v| f64::from(*v)).sum::<f64>() / self.n() as f64;
        (core::array::from_fn(|i| if i < self.n() { f64::from(self.y[i]) - mean } else { 0.0 }), mean)
    }
    fn k_lambda(&self, mu: &[f64; M]) -> Dense {
        let mut k = Dense::identity(self.n());
        for (m, &w) in mu.iter().enumerate().filter(|(_, w)| **w > 0.0) {
            let c = self.column(m);
            for i in 0..self.n() {
                for j in 0..self.n() {
                    k.add(i, j, w * c[i] * c[j]);
                }
            }
        }
        k
    }
    /// `K_λ⁻¹y_c` (λ = 1).
    fn residual(&self, mu: &[f64; M]) -> Result<[f64; MAX], Failure> {
        self.k_lambda(mu).solve(&self.centred_y().0).ok_or(Failure::Check("reference K_lambda not SPD"))
    }
    fn objective(&self, mu: &[f64; M]) -> Result<f64, Failure> {
        let r = self.residual(mu)?;
        Ok(dot(&self.centred_y().0[..self.n()], &r[..self.n()]) + f64::from(NU) * mu.iter().sum::<f64>())
    }
    fn gradient(&self, mu: &[f64; M], m: usize) -> Result<f64, Failure> {
        let a = dot(&self.residual(mu)?[..self.n()], &self.column(m)[..self.n()]);
        Ok(f64::from(NU) - a * a)
    }
    fn predict(&self, mu: &[f64; M], x: &[f32]) -> Result<f64, Failure> {
        let r = self.residual(mu)?;
        let mut f = self.centred_y().1;
        for m in 0..M {
            let s = &self.centres[m * D..(m + 1) * D];
            f += mu[m] * Self::kernel(x, s) * dot(&self.column(m)[..self.n()], &r[..self.n()]);
        }
        Ok(f)
    }
    /// `D⁻¹ + CᵀC` over the active candidates in factor order.
    fn h(&self, mu: &[f64; M], active: &[usize]) -> Dense {
        let mut h = Dense::zeros(active.len());
        for (p, &a) in active.iter().enumerate() {
            for (q, &b) in active.iter().enumerate() {
                let cc = dot(&self.column(a)[..self.n()], &self.column(b)[..self.n()]);
                h.set(p, q, cc + if p == q { 1.0 / mu[a] } else { 0.0 });
            }
        }
        h
    }
}

fn weights(get: impl Fn(usize) -> Option<f32>) -> [f64; M] {
    core::array::from_fn(|m| f64::from(get(m).unwrap_or(f32::NAN)))
}

/// Objective, every derivative, the factor and predictions at 3 points against the dense
/// reference, for weights set by hand.
fn compare(
    reference: &Reference<'_>,
    mu: &[f64; M],
    objective: f32,
    gradient: &[f32; M],
    active: &[usize],
    factor: &[f32],
    predictions: &[(&[f32], f32)],
) -> Result<(), Failure> {
    ensure(close(f64::from(objective), reference.objective(mu)?, TOL), "F matches the dense reference")?;
    for m in 0..M {
        ensure(close(f64::from(gradient[m]), reference.gradient(mu, m)?, TOL), "dF/dmu_m matches")?;
    }
    let h = reference.h(mu, active);
    let product = Dense::from_packed_product(factor, active.len());
    ensure(product.max_diff(&h) <= TOL * h.max_abs(), "L Lt = D^-1 + Ct C")?;
    for &(x, f) in predictions {
        ensure(close(f64::from(f), reference.predict(mu, x)?, TOL), "prediction matches")?;
    }
    Ok(())
}

fn set_weights_match_dense() -> Result<(), Failure> {
    let data = data(1);
    let reference = Reference { x: &data.x, y: &data.y, centres: &data.centres };
    let mut slkl = Slkl::new_in(
        [0.0f32; Slkl::scalars_len(DIMS)],
        [0usize; Slkl::indices_len(DIMS)],
        DIMS,
        params()?,
        &data.x,
        &data.y,
        Candidates::Points(&data.centres),
    )?;
    for (m, mu) in [(2, 0.8f32), (5, 1.5), (0, 0.3), (7, 2.0)] {
        slkl.set_weight(m, mu)?;
    }
    slkl.set_weight(5, 0.0)?; // leaves the active set
    slkl.set_weight(0, 0.6)?; // changes
    let mu = weights(|m| slkl.weight(m));
    let mut gradient = [0.0f32; M];
    for m in 0..M {
        gradient[m] = slkl.derivatives(m)?.0;
    }
    let p = [[0.2f32, -0.4], [1.0, 1.0], [-1.3, 0.1]];
    let predictions =
        [(&p[0][..], slkl.predict(&p[0])?), (&p[1][..], slkl.predict(&p[1])?), (&p[2][..], slkl.predict(&p[2])?)];
    ensure(slkl.active_len() == 3, "three active weights")?;
    compare(&reference, &mu, slkl.objective(), &gradient, slkl.active(), slkl.factor_packed(), &predictions)
}

/// 300 exact coordinate steps: `F` never increases (up to rounding), and it ends equal to
/// the dense `F` of the weights reached.
fn steps_monotone() -> Result<(), Failure> {
    let data = data(2);
    let reference = Reference { x: &data.x, y: &data.y, centres: &data.centres };
    let (mut scalars, mut indices) = ([0.0f32; Slkl::scalars_len(DIMS)], [0usize; Slkl::indices_len(DIMS)]);
    let mut slkl = Slkl::new_in(
        &mut scalars[..],
        &mut indices[..],
        DIMS,
        params()?,
        &data.x,
        &data.y,
        Candidates::Points(&data.centres),
    )?;
    let mut previous = slkl.objective();
    for _ in 0..300 {
        let step = slkl.step()?;
        let slack = 8.0 * f32::EPSILON * previous.abs();
        ensure(step.objective <= previous + slack, "F non-increasing")?;
        ensure(step.objective == slkl.objective() && step.active == slkl.active_len(), "step report")?;
        previous = step.objective;
    }
    ensure(slkl.stats().steps == 300 && slkl.active_len() > 0, "steps counted, some weight active")?;
    ensure(close(f64::from(previous), reference.objective(&weights(|m| slkl.weight(m)))?, TOL), "F matches dense")
}

/// `run()` converges; at the end no coordinate can lower the dense `F` much: active
/// weights have `|∂F/∂μ| ≈ 0`, zero weights `∂F/∂μ ≥ −tol` (within the stopping ε).
fn run_converges() -> Result<(), Failure> {
    let data = data(3);
    let reference = Reference { x: &data.x, y: &data.y, centres: &data.centres };
    let params = Params::new().kernel(Kernel::rbf(GAMMA)?).nu(NU).epsilon(1e-6).seed(4).check()?;
    let (mut scalars, mut indices) = ([0.0f32; Slkl::scalars_len(DIMS)], [0usize; Slkl::indices_len(DIMS)]);
    let mut slkl = Slkl::new_in(
        &mut scalars[..],
        &mut indices[..],
        DIMS,
        params,
        &data.x,
        &data.y,
        Candidates::Points(&data.centres),
    )?;
    let summary = slkl.run()?;
    ensure(summary.reason == ExitReason::Converged, "converged")?;
    let mu = weights(|m| slkl.weight(m));
    let f0 = reference.objective(&[0.0; M])?;
    ensure(reference.objective(&mu)? < 0.5 * f0, "F at least halved from mu = 0")?;
    for m in 0..M {
        let g = reference.gradient(&mu, m)?;
        let ok = if mu[m] > 0.0 { g.abs() <= 1e-2 * f64::from(NU) } else { g >= -1e-2 * f64::from(NU) };
        ensure(ok, "coordinate-wise optimality in the dense reference")?;
    }
    Ok(())
}

/// With `max_active = 2`, `m0` never exceeds 2.
fn max_active_caps_m0() -> Result<(), Failure> {
    let data = data(4);
    let dims = Dims::new(N, D, M, 2);
    let (mut scalars, mut indices) = ([0.0f32; Slkl::scalars_len(DIMS)], [0usize; Slkl::indices_len(DIMS)]);
    let params = Params::new().kernel(Kernel::rbf(GAMMA)?).nu(1e-4).seed(5).check()?;
    let mut slkl = Slkl::new_in(
        &mut scalars[..],
        &mut indices[..],
        dims,
        params,
        &data.x,
        &data.y,
        Candidates::Points(&data.centres),
    )?;
    for _ in 0..100 {
        ensure(slkl.step()?.active <= 2, "m0 <= max_active")?;
    }
    ensure(slkl.active_len() == 2 && slkl.stats().at_capacity > 0, "capacity reached and entries refused")
}

type Window<'b> = SlklWindow<f32, &'b mut [f32], &'b mut [usize]>;

/// Pushes samples `from..to` of `data` into `window`, with two steps after each.
fn feed(window: &mut Window<'_>, data: &Data, from: usize, to: usize) -> Result<(), Failure> {
    for i in from..to {
        window.push(&data.x[i * D..(i + 1) * D], data.y[i])?;
        window.step()?;
        window.step()?;
    }
    Ok(())
}

/// The last `WINDOW` samples pushed, oldest first, as the window reports them.
fn window_samples(window: &Window<'_>) -> Result<([f32; WINDOW * D], [f32; WINDOW]), Failure> {
    let (mut x, mut y) = ([0.0; WINDOW * D], [0.0; WINDOW]);
    for age in 0..window.len() {
        let (xi, yi) = window.sample(age).ok_or(Failure::Check("sample in the window"))?;
        x[age * D..(age + 1) * D].copy_from_slice(xi);
        y[age] = yi;
    }
    Ok((x, y))
}

/// After 13 and after 16 arrivals (the ring wrapped), the window holds the last 8 samples
/// in order and its `F`, derivatives, factor and predictions match the dense reference on
/// them.
fn window_matches_dense() -> Result<(), Failure> {
    let data = data(5);
    let (mut scalars, mut indices) =
        ([0.0f32; SlklWindow::scalars_len(WDIMS)], [0usize; SlklWindow::indices_len(WDIMS)]);
    let mut window = SlklWindow::new_in(&mut scalars[..], &mut indices[..], WDIMS, params()?, &data.centres)?;
    for end in [13, N] {
        feed(&mut window, &data, if end == 13 { 0 } else { 13 }, end)?;
        let (x, y) = window_samples(&window)?;
        let first = end - WINDOW;
        ensure(x[..] == data.x[first * D..end * D] && y[..] == data.y[first..end], "last N samples, in order")?;
        window.set_weight(1, 0.7)?;
        let reference = Reference { x: &x, y: &y, centres: &data.centres };
        let mu = weights(|m| window.weight(m));
        let mut gradient = [0.0f32; M];
        for m in 0..M {
            gradient[m] = window.derivatives(m)?.0;
        }
        let p = [0.3f32, -0.9];
        let predictions = [(&p[..], window.predict(&p)?)];
        let objective = window.objective()?;
        ensure(close(f64::from(window.mean()), reference.centred_y().1, TOL), "window mean")?;
        compare(&reference, &mu, objective, &gradient, window.active(), window.factor_packed(), &predictions)?;
    }
    Ok(())
}

/// A window after 16 arrivals and a batch learner on the same 8 samples, both given the
/// window's weights: same `F` and predictions.
fn window_equals_batch() -> Result<(), Failure> {
    let data = data(6);
    let (mut scalars, mut indices) =
        ([0.0f32; SlklWindow::scalars_len(WDIMS)], [0usize; SlklWindow::indices_len(WDIMS)]);
    let mut window = SlklWindow::new_in(&mut scalars[..], &mut indices[..], WDIMS, params()?, &data.centres)?;
    feed(&mut window, &data, 0, N)?;
    let (x, y) = window_samples(&window)?;
    let bdims = Dims::new(WINDOW, D, M, M);
    let (mut bs, mut bi) = ([0.0f32; Slkl::scalars_len(WDIMS)], [0usize; Slkl::indices_len(WDIMS)]);
    let mut batch =
        Slkl::new_in(&mut bs[..], &mut bi[..], bdims, params()?, &x, &y, Candidates::Points(&data.centres))?;
    for m in 0..M {
        let mu = window.weight(m).unwrap_or(0.0);
        if mu > 0.0 {
            batch.set_weight(m, mu)?;
        }
    }
    ensure(window.active_len() > 0 && batch.active_len() == window.active_len(), "same active set")?;
    ensure(close(f64::from(window.objective()?), f64::from(batch.objective()), TOL), "same F")?;
    let p = [-0.5f32, 0.5];
    ensure(close(f64::from(window.predict(&p)?), f64::from(batch.predict(&p)?), TOL), "same prediction")
}

/// NaN, ∞ and wrong lengths are errors; the window keeps its samples, `F` and model.
fn window_rejects_bad_samples() -> Result<(), Failure> {
    let data = data(7);
    let (mut scalars, mut indices) =
        ([0.0f32; SlklWindow::scalars_len(WDIMS)], [0usize; SlklWindow::indices_len(WDIMS)]);
    let mut window = SlklWindow::new_in(&mut scalars[..], &mut indices[..], WDIMS, params()?, &data.centres)?;
    feed(&mut window, &data, 0, 10)?;
    let (before, f_before) = (window_samples(&window)?, window.objective()?);
    let p_before = window.predict(&[0.1, 0.2])?;
    ensure(window.push(&[f32::NAN, 0.0], 1.0) == Err(Error::NonFinite), "NaN feature")?;
    ensure(window.push(&[0.0, 0.0], f32::INFINITY) == Err(Error::NonFinite), "infinite target")?;
    ensure(matches!(window.push(&[0.0], 1.0), Err(Error::DimensionMismatch { .. })), "short feature vector")?;
    ensure(matches!(window.predict(&[f32::NAN, 0.0]), Err(Error::NonFinite)), "NaN query")?;
    ensure(window_samples(&window)? == before && window.objective()? == f_before, "samples and F unchanged")?;
    ensure(window.predict(&[0.1, 0.2])? == p_before, "model unchanged")
}
