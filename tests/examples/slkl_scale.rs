//! SLKL at scale (issue 3 item 6): the working set of `n = 20,000`, `d = 8`, `M = 2,000`;
//! time to convergence against dense kernel ridge regression at `n = 4,000` in the same run;
//! the cost per step as `m0` grows.
//!
//! ```text
//! cargo run --release -p kestrel-tests --example slkl_scale
//! ```
//!
//! Task: Friedman #1 in 8 features (5 informative, 3 noise), `x` uniform in `[0, 1]⁸`,
//! `y = 10 sin(πx₁x₂) + 20(x₃ − ½)² + 10x₄ + 5x₅ + N(0, 1)`; Gaussian kernel γ = 0.5,
//! `λ = 1`, columns on the fly, shrinking on, `f64`.

use std::time::Instant;

use kestrel_core::slkl::{Candidates, Dims, Params, Slkl};
use kestrel_core::{Kernel, Rng};
use kestrel_tests::{Regression, krr_predictions, mse};

const D: usize = 8;

fn friedman(seed: u64, n: usize, n_test: usize) -> Regression<f64> {
    let mut rng = Rng::seed_from_u64(seed);
    let f = |x: &[f64]| {
        10.0 * (std::f64::consts::PI * x[0] * x[1]).sin() + 20.0 * (x[2] - 0.5).powi(2) + 10.0 * x[3] + 5.0 * x[4]
    };
    let x: Vec<f64> = (0..n * D).map(|_| rng.uniform()).collect();
    let y: Vec<f64> = x.chunks(D).map(|p| f(p) + rng.normal::<f64>()).collect();
    let x_test: Vec<f64> = (0..n_test * D).map(|_| rng.uniform()).collect();
    let y_test: Vec<f64> = x_test.chunks(D).map(f).collect();
    Regression { x, y, x_test, y_test, dim: D }
}

struct Outcome {
    seconds: f64,
    mse: f64,
    m0: usize,
    steps: u64,
}

fn slkl(task: &Regression<f64>, m: usize, max_active: usize, nu: f64) -> Outcome {
    let n = task.y.len();
    let dims = Dims::new(n, D, m, max_active);
    let params = Params::new().nu(nu).seed(1).check().expect("valid parameters");
    let start = Instant::now();
    let mut scalars = vec![0.0; Slkl::scalars_len(dims)];
    let mut indices = vec![0; Slkl::indices_len(dims)];
    let mut learner =
        Slkl::new_in(&mut scalars[..], &mut indices[..], dims, params, &task.x, &task.y, Candidates::Random)
            .expect("valid configuration");
    learner.run().expect("run");
    let seconds = start.elapsed().as_secs_f64();
    let predictions: Vec<f64> = task.x_test.chunks(D).map(|p| learner.predict(p).expect("8-D point")).collect();
    Outcome { seconds, mse: mse(&predictions, &task.y_test), m0: learner.active_len(), steps: learner.stats().steps }
}

fn mib(bytes: usize) -> f64 {
    bytes as f64 / (1024.0 * 1024.0)
}

fn main() {
    let nu = 1.0;
    println!("Friedman #1, d = 8, γ = 0.5, λ = 1, ν = {nu}");
    println!();
    println!("Working set (buffers of the learner; the samples are borrowed):");
    println!("| n | M | m0 max | f64 | f32 | dense K, f64 |");
    println!("|---|---|---|---|---|---|");
    for (n, m, a) in [(20_000, 2_000, 200), (20_000, 2_000, 400), (4_000, 1_000, 200)] {
        let dims = Dims::new(n, D, m, a);
        println!(
            "| {n} | {m} | {a} | {:.1} MiB | {:.1} MiB | {:.0} MiB |",
            mib(Slkl::bytes::<f64>(dims)),
            mib(Slkl::bytes::<f32>(dims)),
            mib(n * n * 8)
        );
    }

    println!();
    let small = friedman(7, 4_000, 1_000);
    let kernel = Kernel::rbf(0.5).expect("valid kernel");
    let start = Instant::now();
    let krr = krr_predictions(&kernel, &small.x, &small.y, D, 1.0, &small.x_test);
    let krr_seconds = start.elapsed().as_secs_f64();
    let fit = slkl(&small, 1_000, 400, nu);
    println!(
        "n = 4000, M = 1000: SLKL {:.2} s (m0 {}, {} steps, test MSE {:.3}); dense KRR {:.2} s (test MSE {:.3}); time ratio SLKL/KRR {:.3}",
        fit.seconds,
        fit.m0,
        fit.steps,
        fit.mse,
        krr_seconds,
        mse(&krr, &small.y_test),
        fit.seconds / krr_seconds
    );

    println!();
    let large = friedman(8, 20_000, 1_000);
    println!("n = 20000, M = 2000: time per step against m0 (ν sets m0)");
    println!("| ν | m0 | steps | seconds | µs per step | ns per step / (n·m0) | test MSE |");
    println!("|---|---|---|---|---|---|---|");
    for nu in [300.0, 100.0, 30.0, 10.0, 3.0, 1.0] {
        let fit = slkl(&large, 2_000, 400, nu);
        let per_step = fit.seconds / fit.steps as f64;
        println!(
            "| {nu} | {} | {} | {:.1} | {:.0} | {:.3} | {:.3} |",
            fit.m0,
            fit.steps,
            fit.seconds,
            per_step * 1e6,
            per_step * 1e9 / (20_000.0 * fit.m0.max(1) as f64),
            fit.mse
        );
    }
}
