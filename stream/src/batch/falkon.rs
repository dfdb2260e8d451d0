//! Kernel ridge regression at scale by the Falkon construction (Rudi, Carratino & Rosasco,
//! *FALKON: An Optimal Large Scale Kernel Method*, NeurIPS 2017): the Nyström problem of
//! [`super::krr`] solved by preconditioned conjugate gradients, streaming over the rows so
//! the `n × m` features are never stored.
//!
//! **Problem** (the one [`kestrel_core::krr`] solves exactly): with the Nyström features
//! `z(x) = L⁻¹K(Ã, x)`, `LLᵀ = K(Ã, Ã)` (seed 000 §3.4),
//! `min_{b, w} ‖y − b·1 − Zw‖² + λ‖w‖²`, i.e. (seed 000 §4.1.1 on `K ≈ ZZᵀ`)
//!
//! `(Z_cᵀZ_c + λI)w = Z_cᵀỹ`, `b = ȳ − z̄ᵀw`,
//!
//! with `Z_c = Z − 1z̄ᵀ` and `ỹ = y − ȳ`. The product with the left side is computed from
//! the kernel rows `k_i = K(Ã, x_i)`, recomputed at each product: with `u = L⁻ᵀw`,
//! `(Z_c w)_i = k_iᵀu − z̄ᵀw` and `Z_cᵀt = L⁻¹Σ_i t_i k_i − z̄·Σ_i t_i` — one pass over the
//! rows, `O(n·m·d)` kernel work and `O(n·m)` products, split over the machine's cores.
//!
//! **Preconditioner** (Falkon's two Cholesky factors). The first, `L` of the centres'
//! kernel, is the change of variables `w = Lᵀα` already made by the whitening: CG runs on
//! the problem preconditioned by it. The second approximates what is left, the Hessian
//! `Z_cᵀZ_c + λI`, from a sample of the rows: `M = (n/n_s)·Z_{s,c}ᵀZ_{s,c} + λI = RRᵀ`,
//! factored once in f64 (`O(n_s·m² + m³)`) and applied by two triangular solves. Falkon takes the
//! `m` centres themselves as the sample (`Z` on the centres is `L`'s rows); the krr solver
//! passes the subsample its centres and ridge were chosen on ([`super::krr::CG_SUBSAMPLE`]
//! rows), a sharper estimate for the same `O(m²)` memory: on the benchmark of
//! `scripts/bench_krr_cg.py` (n = 5·10⁴ and 2·10⁵, m = 256) CG needed 65 to 68 iterations
//! with the centres as the sample, 9 with the subsample. Conjugate gradients ([`preconditioned_conjugate_gradient`], seed 000 §3.3)
//! stop at a relative residual `tol` (`--eps`; default [`default_tolerance`]) or
//! [`MAX_ITERATIONS`].
//!
//! **Memory**: `O(m²)` — `L`, `R` and the sample's Hessian — and `O(m + d)` per thread
//! (`O(m²)` while the preconditioner's pass runs), whatever `n`
//! ([`working_bytes`]); the data set itself is read, not copied.

use std::ops::Range;

use kestrel_core::cholesky::Cholesky;
use kestrel_core::linalg::{
    CgOutcome, CgParams, Triangle, conjugate_gradient_observed, dot, preconditioned_conjugate_gradient, solve_lower,
    solve_lower_transposed,
};
use kestrel_core::{Error, Kernel, Real};

use super::TrainError;
use crate::dataset::Dataset;
use crate::limits::zeroed;

/// The most conjugate-gradient iterations.
pub const MAX_ITERATIONS: usize = 500;

/// The relative residual at which CG stops unless `--eps` says: `10⁻⁷` in f64, `10⁻⁴` in
/// f32 (whose products carry about `10⁻⁶` of rounding over a million rows).
pub fn default_tolerance<T: Real>() -> f64 {
    if T::BYTES == 4 { 1e-4 } else { 1e-7 }
}

/// Bytes a solve with `m` centres in `dim` features holds on `threads` threads: the
/// preconditioner's factor and Hessian, the CG vectors, and each thread's row, kernel row
/// and accumulator (`m² + m` while the preconditioner's pass runs).
pub fn working_bytes<T>(m: usize, dim: usize, threads: usize) -> usize {
    let scalars = Cholesky::scalars_len(m).saturating_add(m.saturating_mul(m)).saturating_add(m.saturating_mul(10));
    let accumulator = m.saturating_mul(m.saturating_add(1)).saturating_mul(size_of::<f64>());
    let per_thread = dim.saturating_add(m).saturating_mul(size_of::<T>()).saturating_add(accumulator);
    scalars.saturating_mul(size_of::<T>()).saturating_add(per_thread.saturating_mul(threads))
}

/// What the solve is given: the rows and targets, the kernel, the centres (row-major
/// `m × dim`) and the factor `L` of their kernel matrix (as [`super::centres::whiten`]
/// returns it).
pub struct Problem<'a, T> {
    /// The rows.
    pub data: &'a Dataset<T>,
    /// One target per row.
    pub targets: &'a [T],
    /// The kernel.
    pub kernel: &'a Kernel<T>,
    /// The centres, row-major `m × dim`.
    pub centres: &'a [T],
    /// `LLᵀ = K(Ã, Ã)`.
    pub factor: &'a Cholesky<T, Vec<T>>,
    /// Rows on which the preconditioner estimates the Hessian (a uniform sample of `data`,
    /// or `data` itself).
    pub sample: &'a Dataset<T>,
    /// Features per row.
    pub dim: usize,
    /// Threads the passes over the rows use.
    pub threads: usize,
}

/// The weights `w` (whitened features) and intercept `b` of `f(x) = b + wᵀz(x)`, and how
/// CG ended.
#[derive(Clone, Debug)]
pub struct Solution<T> {
    /// `w`, `m` values.
    pub weights: Vec<T>,
    /// `b`.
    pub intercept: T,
    /// CG's exit, iterations and relative residual.
    pub outcome: CgOutcome<T>,
}

/// How [`solve`] regularises `min ‖y − b·1 − Zw‖²`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Regularisation<T> {
    /// `+ λ‖w‖²` (`λ > 0`), solved to CG's relative residual `tolerance` with Falkon's
    /// preconditioner.
    Ridge {
        /// `λ`.
        lambda: T,
        /// CG's relative residual.
        tolerance: f64,
    },
    /// No penalty: plain CG from `w = 0` stopped after this many steps, kernel partial least
    /// squares with that many components (seed 000 §4.1.2: the least-squares fit restricted
    /// to the Krylov space `span{Z_cᵀỹ, …, (Z_cᵀZ_c)^{r−1}Z_cᵀỹ}`, which is what CG's
    /// `r`-th iterate is in exact arithmetic). A preconditioner would change that space, so
    /// none is used. CG stops sooner at [`default_tolerance`]: the least-squares fit is then
    /// reached to the precision the products carry.
    Components(usize),
}

/// Solves the problem regularised by `regularisation`.
///
/// # Errors
/// `InvalidParam` for a ridge or tolerance that is not finite and positive, no components,
/// or fewer than two rows; `DimensionMismatch` for targets that are not one per row;
/// `NonFinite` when a product overflows; [`Error::Breakdown`] should the problem not be
/// positive definite; an allocation failure.
pub fn solve<T: Real>(problem: &Problem<'_, T>, regularisation: Regularisation<T>) -> Result<Solution<T>, TrainError> {
    solve_observed(problem, regularisation, &mut |_, _, _| Ok(()))
}

/// As [`solve`], calling `observe(r, w_r, b_r)` with the weights and intercept after each
/// step `r` under [`Regularisation::Components`] (kernel PLS with `r` components: scoring
/// them on held-out rows chooses `r` in one solve); never under a ridge.
///
/// # Errors
/// As [`solve`]; `observe`'s errors, which end the solve.
pub fn solve_observed<T: Real>(
    problem: &Problem<'_, T>,
    regularisation: Regularisation<T>,
    observe: &mut impl FnMut(usize, &[T], T) -> Result<(), Error>,
) -> Result<Solution<T>, TrainError> {
    let (n, m) = (problem.data.len(), problem.factor.dim());
    if n < 2 || m == 0 {
        return Err(Error::InvalidParam { name: "n" }.into());
    }
    if problem.targets.len() != n {
        return Err(Error::DimensionMismatch { expected: n, got: problem.targets.len() }.into());
    }
    let (lambda, params) = match regularisation {
        Regularisation::Ridge { lambda, tolerance } if lambda.is_finite() && lambda > T::ZERO => {
            (lambda, CgParams::new().tolerance(T::from_f64(tolerance)).max_iterations(MAX_ITERATIONS))
        }
        Regularisation::Ridge { .. } => return Err(Error::InvalidParam { name: "lambda" }.into()),
        Regularisation::Components(components) => {
            (T::ZERO, CgParams::new().tolerance(T::from_f64(default_tolerance::<T>())).max_iterations(components))
        }
    };
    let params = params.check().map_err(|error| match (error, regularisation) {
        (Error::InvalidParam { .. }, Regularisation::Components(_)) => Error::InvalidParam { name: "components" },
        (error, _) => error,
    })?;
    let mean_target = problem.targets.iter().fold(0.0, |acc, y| acc + y.to_f64()) / n as f64;
    let (mean_feature, right) = centred_right_side(problem, mean_target)?;
    let l = problem.factor.packed();
    let mut u = zeroed(m, "the CG vectors")?;
    let mut hessian = |w: &[T], out: &mut [T]| -> Result<(), Error> {
        u.copy_from_slice(w);
        solve_lower_transposed(l, m, Triangle::Packed, &mut u)?;
        let shift = dot(&mean_feature, w)?;
        let u = &u;
        let products = pass(problem, problem.data, m + 1, |_, k, acc| {
            let t = dot(k, u).unwrap_or(T::ZERO) - shift;
            let (g, sum) = acc.split_at_mut(m);
            let t64 = t.to_f64();
            for (g, &k) in g.iter_mut().zip(k) {
                *g += t64 * k.to_f64();
            }
            if let Some(sum) = sum.first_mut() {
                *sum += t64;
            }
        })?;
        for (o, &g) in out.iter_mut().zip(&products) {
            *o = T::from_f64(g);
        }
        problem.factor.solve_lower_in_place(out)?;
        let sum = T::from_f64(products.get(m).copied().unwrap_or(0.0));
        for ((o, &z), &w) in out.iter_mut().zip(&mean_feature).zip(w) {
            *o += lambda * w - z * sum;
        }
        Ok(())
    };
    let intercept = |w: &[T]| Ok::<T, Error>(T::from_f64(mean_target) - dot(&mean_feature, w)?);
    let mut weights = zeroed(m, "the weights")?;
    let mut workspace = zeroed(kestrel_core::linalg::cg_workspace_len(m), "the CG vectors")?;
    let outcome = match regularisation {
        Regularisation::Ridge { .. } => {
            let preconditioner = preconditioner(problem, lambda)?;
            let mut scratch = zeroed(m, "the CG vectors")?;
            let mut inverse = |r: &[T], z: &mut [T]| {
                for (s, &r) in scratch.iter_mut().zip(r) {
                    *s = r.to_f64();
                }
                preconditioner.solve_in_place(&mut scratch)?;
                for (z, &s) in z.iter_mut().zip(&scratch) {
                    *z = T::from_f64(s);
                }
                Ok(())
            };
            preconditioned_conjugate_gradient(
                &mut hessian,
                &mut inverse,
                &right,
                &mut weights,
                &params,
                &mut workspace,
            )?
        }
        Regularisation::Components(_) => {
            let mut step = |r: usize, w: &[T]| observe(r, w, intercept(w)?);
            conjugate_gradient_observed(&mut hessian, &right, &mut weights, &params, &mut workspace, &mut step)?
        }
    };
    let intercept = intercept(&weights)?;
    Ok(Solution { weights, intercept, outcome })
}

/// One pass: `z̄ = L⁻¹k̄` and the right side `Z_cᵀỹ = L⁻¹Σ_i (y_i − ȳ)k_i`.
fn centred_right_side<T: Real>(problem: &Problem<'_, T>, mean_target: f64) -> Result<(Vec<T>, Vec<T>), TrainError> {
    let m = problem.factor.dim();
    let sums = pass(problem, problem.data, 2 * m, |i, k, acc| {
        let y = problem.targets.get(i).map_or(0.0, |y| y.to_f64()) - mean_target;
        let (mean, right) = acc.split_at_mut(m);
        for ((s, r), &k) in mean.iter_mut().zip(right.iter_mut()).zip(k) {
            let k = k.to_f64();
            *s += k;
            *r += y * k;
        }
    })?;
    let scale = 1.0 / problem.data.len().max(1) as f64;
    let mut mean_feature: Vec<T> = sums.iter().take(m).map(|&s| T::from_f64(s * scale)).collect();
    problem.factor.solve_lower_in_place(&mut mean_feature)?;
    let mut right: Vec<T> = sums.iter().skip(m).map(|&s| T::from_f64(s)).collect();
    problem.factor.solve_lower_in_place(&mut right)?;
    Ok((mean_feature, right))
}

/// `R` with `RRᵀ = (n/n_s)·Z_{s,c}ᵀZ_{s,c} + λI`, the Hessian estimated on the `n_s` rows
/// of `problem.sample`: one pass for `C = Σ_i (k_i − k̄)(k_i − k̄)ᵀ`, then
/// `Z_{s,c}ᵀZ_{s,c} = L⁻¹CL⁻ᵀ` by `2m` triangular solves.
fn preconditioner<T: Real>(problem: &Problem<'_, T>, lambda: T) -> Result<Cholesky<f64, Vec<f64>>, TrainError> {
    let (m, n_sample) = (problem.factor.dim(), problem.sample.len());
    if n_sample == 0 {
        return Err(Error::InvalidParam { name: "sample" }.into());
    }
    let sums = pass(problem, problem.sample, m * m + m, |_, k, acc| {
        let (outer, sum) = acc.split_at_mut(m * m);
        for ((row, &k_a), s) in outer.chunks_exact_mut(m).zip(k).zip(sum.iter_mut()) {
            let k_a = k_a.to_f64();
            *s += k_a;
            for (c, &k_b) in row.iter_mut().zip(k) {
                *c += k_a * k_b.to_f64();
            }
        }
    })?;
    let (outer, sum) = sums.split_at(m * m);
    let count = n_sample as f64;
    let mut gram = zeroed(m * m, "the preconditioner")?;
    for (a, (row, &s_a)) in gram.chunks_exact_mut(m).zip(sum).enumerate() {
        let outer_row = outer.get(a * m..(a + 1) * m).unwrap_or_default();
        for ((g, &c), &s_b) in row.iter_mut().zip(outer_row).zip(sum) {
            *g = c - s_a * s_b / count;
        }
    }
    // In f64 whatever T: L⁻¹ amplifies rounding by L's condition, which in f32 made M
    // indefinite on the benchmark. C is symmetric: its rows are its columns. L⁻¹ on each
    // gives the rows of (L⁻¹C)ᵀ; transposed, L⁻¹ on each row of L⁻¹C gives the rows of
    // L⁻¹CL⁻ᵀ (symmetric too).
    let l: Vec<f64> = problem.factor.packed().iter().map(|x| x.to_f64()).collect();
    for row in gram.chunks_exact_mut(m) {
        solve_lower(&l, m, Triangle::Packed, row)?;
    }
    for a in 0..m {
        for b in 0..a {
            gram.swap(a * m + b, b * m + a);
        }
    }
    for row in gram.chunks_exact_mut(m) {
        solve_lower(&l, m, Triangle::Packed, row)?;
    }
    let (ratio, lambda) = (problem.data.len() as f64 / count, lambda.to_f64());
    let factor = Cholesky::factor_in(zeroed(Cholesky::scalars_len(m), "the preconditioner")?, m, m, |i, j| {
        let g = gram.get(i * m + j).copied().unwrap_or(0.0) * ratio;
        if i == j { g + lambda } else { g }
    })?;
    Ok(factor)
}

/// One pass over the rows, split into contiguous ranges over the problem's threads: each
/// row's kernel row `k_i` (`m` values) is handed to `row` with an `f64` accumulator of
/// `width`, and the threads' accumulators are added.
fn pass<T: Real>(
    problem: &Problem<'_, T>,
    data: &Dataset<T>,
    width: usize,
    row: impl Fn(usize, &[T], &mut [f64]) + Sync,
) -> Result<Vec<f64>, Error> {
    let n = data.len();
    let threads = problem.threads.clamp(1, n.max(1));
    let chunk = n.div_ceil(threads);
    let ranges: Vec<Range<usize>> = (0..threads).map(|t| t * chunk..((t + 1) * chunk).min(n)).collect();
    let results: Vec<Result<Vec<f64>, Error>> = std::thread::scope(|scope| {
        let handles: Vec<_> =
            ranges.iter().map(|range| scope.spawn(|| rows(problem, data, range.clone(), width, &row))).collect();
        handles.into_iter().map(|h| h.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic))).collect()
    });
    let mut total = vec![0.0; width];
    for result in results {
        for (t, x) in total.iter_mut().zip(result?) {
            *t += x;
        }
    }
    Ok(total)
}

/// [`pass`] over the rows `range` on this thread.
fn rows<T: Real>(
    problem: &Problem<'_, T>,
    data: &Dataset<T>,
    range: Range<usize>,
    width: usize,
    row: &impl Fn(usize, &[T], &mut [f64]),
) -> Result<Vec<f64>, Error> {
    let m = problem.factor.dim();
    let (mut x, mut k, mut acc) = (vec![T::ZERO; problem.dim], vec![T::ZERO; m], vec![0.0; width]);
    for i in range {
        data.dense_row(i, &mut x);
        problem.kernel.column(&x, problem.centres, &mut k)?;
        row(i, &k, &mut acc);
    }
    if acc.iter().all(|a| a.is_finite()) { Ok(acc) } else { Err(Error::NonFinite) }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::batch::centres::{Selection, select, whiten};
    use crate::source::Record;
    use kestrel_core::Rng;
    use nalgebra::{DMatrix, DVector};

    /// `n` rows of 3 features and a noisy smooth target.
    fn data<T: Real>(n: usize, seed: u64) -> Dataset<T> {
        let mut data = Dataset::<T>::new();
        let mut rng = Rng::seed_from_u64(seed);
        for _ in 0..n {
            let x: Vec<f64> = (0..3).map(|_| rng.uniform_in(-2.0, 2.0)).collect();
            let label = 3.0 + (x[0] * x[1]).sin() + 0.5 * x[2] + 0.1 * rng.normal::<f64>();
            data.push(&Record { label, indices: vec![0, 1, 2], values: x, ..Record::default() }).unwrap();
        }
        data
    }

    /// The fitted values `b + Zw` of CG against nalgebra's solve of the normal equations
    /// of `min ‖y − b − Zw‖² + λ‖w‖²` (intercept unpenalised) on the same whitened
    /// features, to `tol` relative to `‖y‖`, at ridges from interpolation to heavy
    /// shrinkage; one thread and three agree.
    fn cg_equals_the_exact_solution<T: Real>(tol: f64, cg_tol: f64) {
        let (n, m, dim) = (500, 40, 3);
        let data = data::<T>(n, 1);
        let kernel = Kernel::rbf(T::from_f64(0.5)).unwrap();
        let points = data.dense(dim).unwrap();
        let mut rng = Rng::seed_from_u64(2);
        let set = select(&points, dim, m, &kernel, Selection::Random, &mut rng).unwrap();
        let mut features = set.features.clone();
        let factor = whiten(&kernel, &set.centres, dim, &mut features, m).unwrap();
        let targets: Vec<T> = data.labels().iter().map(|&y| T::from_f64(y)).collect();
        let x = DMatrix::from_fn(n, m + 1, |i, j| if j == m { 1.0 } else { features[i * m + j].to_f64() });
        let y = DVector::from_iterator(n, targets.iter().map(|y| y.to_f64()));
        // The preconditioner's sample: every fifth row (a whole-set sample would make it
        // the exact Hessian and CG a single step).
        let sample = data.rows_in(&(0..n).step_by(5).collect::<Vec<_>>());
        for lambda in [1e-3, 1.0, 30.0] {
            let mut normal = x.transpose() * &x;
            for k in 0..m {
                normal[(k, k)] += lambda;
            }
            let exact = normal.lu().solve(&(x.transpose() * &y)).unwrap();
            let exact_fit = &x * &exact;
            for threads in [1, 3] {
                let problem = Problem {
                    data: &data,
                    targets: &targets,
                    kernel: &kernel,
                    centres: &set.centres,
                    factor: &factor,
                    sample: &sample,
                    dim,
                    threads,
                };
                let solution =
                    solve(&problem, Regularisation::Ridge { lambda: T::from_f64(lambda), tolerance: cg_tol }).unwrap();
                assert_eq!(solution.outcome.exit, kestrel_core::linalg::Exit::Converged);
                let beta = DVector::from_iterator(
                    m + 1,
                    solution.weights.iter().map(|w| w.to_f64()).chain([solution.intercept.to_f64()]),
                );
                let error = (&x * &beta - &exact_fit).norm() / y.norm();
                assert!(error <= tol, "λ = {lambda}, {threads} threads: fitted values off by {error:e}");
                if T::BYTES == 8 {
                    let relative = (&beta - &exact).norm() / exact.norm();
                    assert!(relative <= 1e3 * tol, "λ = {lambda}: weights off by {relative:e}");
                }
                // The preconditioner keeps the iterations few.
                assert!(solution.outcome.iterations < 40, "λ = {lambda}: {:?}", solution.outcome);
            }
        }
    }

    #[test]
    fn cg_equals_the_exact_solution_f64() {
        cg_equals_the_exact_solution::<f64>(1e-9, 1e-12);
    }

    #[test]
    fn cg_equals_the_exact_solution_f32() {
        cg_equals_the_exact_solution::<f32>(1e-3, 1e-4);
    }

    /// A wide RBF over many centres in 8 dimensions, where `K(Ã, Ã)` is near singular: in
    /// f32 the preconditioner stays positive definite and CG reaches the f64 solution of
    /// the same (f32-whitened) problem to f32 accuracy (with the Hessian formed in f32 this
    /// case failed: `NotPositiveDefinite { pivot: 218 }`).
    #[test]
    fn ill_conditioned_centres_in_f32() {
        let (n, m, dim) = (6000, 256, 8);
        let mut data = Dataset::<f32>::new();
        let mut rng = Rng::seed_from_u64(5);
        for _ in 0..n {
            let x: Vec<f64> = (0..dim).map(|_| rng.uniform_in(-1.0, 1.0)).collect();
            let label = (std::f64::consts::PI * x[0] * x[1]).sin() + x[3] + 0.1 * rng.normal::<f64>();
            data.push(&Record { label, indices: (0..8).collect(), values: x, ..Record::default() }).unwrap();
        }
        let kernel = Kernel::rbf(0.1156f32).unwrap();
        let points = data.dense(dim).unwrap();
        let set = select(&points, dim, m, &kernel, Selection::Random, &mut Rng::seed_from_u64(6)).unwrap();
        let mut features = set.features.clone();
        let factor = whiten(&kernel, &set.centres, dim, &mut features, m).unwrap();
        let targets: Vec<f32> = data.labels().iter().map(|&y| y as f32).collect();
        let sample = data.rows_in(&(0..n).step_by(2).collect::<Vec<_>>());
        let problem = Problem {
            data: &data,
            targets: &targets,
            kernel: &kernel,
            centres: &set.centres,
            factor: &factor,
            sample: &sample,
            dim,
            threads: 2,
        };
        let lambda = 0.0268;
        let solution = solve(&problem, Regularisation::Ridge { lambda: lambda as f32, tolerance: 1e-4 }).unwrap();
        assert_eq!(solution.outcome.exit, kestrel_core::linalg::Exit::Converged);
        let x = DMatrix::from_fn(n, m + 1, |i, j| if j == m { 1.0 } else { f64::from(features[i * m + j]) });
        let y = DVector::from_iterator(n, targets.iter().map(|&y| f64::from(y)));
        let mut normal = x.transpose() * &x;
        for k in 0..m {
            normal[(k, k)] += lambda;
        }
        let exact = &x * normal.lu().solve(&(x.transpose() * &y)).unwrap();
        let beta = DVector::from_iterator(
            m + 1,
            solution.weights.iter().map(|&w| f64::from(w)).chain([f64::from(solution.intercept)]),
        );
        let error = (&x * &beta - &exact).norm() / y.norm();
        assert!(error <= 1e-2, "fitted values off by {error:e}");
    }

    /// Kernel PLS with `r` components (`Regularisation::Components(r)`): the fitted values
    /// equal the least-squares fit of the centred targets on the centred whitened features
    /// restricted to the Krylov space of `Z_cᵀZ_c` and `Z_cᵀỹ`, by nalgebra's SVD on an
    /// explicitly orthonormalised basis, to `tol` relative to `‖y‖` (measured at 6
    /// components: 2.2e-15 in f64, 1.7e-7 in f32); a solve of `r` components equals the
    /// `r`-th iterate one longer solve observed.
    fn components_are_krylov_least_squares<T: Real>(tol: f64) {
        let (n, m, dim) = (300, 30, 3);
        let data = data::<T>(n, 7);
        let kernel = Kernel::rbf(T::from_f64(0.5)).unwrap();
        let points = data.dense(dim).unwrap();
        let set = select(&points, dim, m, &kernel, Selection::Random, &mut Rng::seed_from_u64(8)).unwrap();
        let mut features = set.features.clone();
        let factor = whiten(&kernel, &set.centres, dim, &mut features, m).unwrap();
        let targets: Vec<T> = data.labels().iter().map(|&y| T::from_f64(y)).collect();
        let z = DMatrix::from_fn(n, m, |i, j| features[i * m + j].to_f64());
        let y = DVector::from_iterator(n, targets.iter().map(|y| y.to_f64()));
        let mean_z = z.row_mean();
        let z_c = DMatrix::from_fn(n, m, |i, j| z[(i, j)] - mean_z[j]);
        let y_c = y.add_scalar(-y.mean());
        let (a, b) = (z_c.transpose() * &z_c, z_c.transpose() * &y_c);
        let problem = Problem {
            data: &data,
            targets: &targets,
            kernel: &kernel,
            centres: &set.centres,
            factor: &factor,
            sample: &data,
            dim,
            threads: 2,
        };
        let fitted = |w: &[T], intercept: T| {
            let w = DVector::from_iterator(m, w.iter().map(|v| v.to_f64()));
            (&z * w).add_scalar(intercept.to_f64())
        };
        let mut observed = Vec::new();
        let longest = 6;
        let mut record = |r: usize, w: &[T], b: T| {
            observed.push((r, fitted(w, b)));
            Ok(())
        };
        solve_observed(&problem, Regularisation::Components(longest), &mut record).unwrap();
        assert_eq!(observed.iter().map(|(r, _)| *r).collect::<Vec<_>>(), (1..=longest).collect::<Vec<_>>());
        let mut basis = DMatrix::<f64>::zeros(m, 0);
        let mut power = b.clone();
        for (r, seen) in &observed {
            basis = basis.insert_column(r - 1, 0.0);
            basis.set_column(r - 1, &power);
            basis = basis.qr().q();
            power = &a * basis.column(r - 1);
            let coefficients = (&z_c * &basis).svd(true, true).solve(&y_c, 1e-14).unwrap();
            let expected = (&z_c * (&basis * coefficients)).add_scalar(y.mean());
            let solution = solve(&problem, Regularisation::Components(*r)).unwrap();
            let alone = fitted(&solution.weights, solution.intercept);
            for (what, values) in [("observed", seen), ("solved", &alone)] {
                let error = (values - &expected).norm() / y.norm();
                assert!(error <= tol, "{r} components, {what}: fitted values off by {error:e}");
            }
        }
    }

    #[test]
    fn components_are_krylov_least_squares_f64() {
        components_are_krylov_least_squares::<f64>(1e-12);
    }

    #[test]
    fn components_are_krylov_least_squares_f32() {
        components_are_krylov_least_squares::<f32>(1e-5);
    }

    #[test]
    fn bad_input_is_an_error() {
        let data = data::<f64>(50, 3);
        let kernel = Kernel::rbf(1.0).unwrap();
        let points = data.dense(3).unwrap();
        let set = select(&points, 3, 5, &kernel, Selection::Random, &mut Rng::seed_from_u64(4)).unwrap();
        let mut features = set.features.clone();
        let factor = whiten(&kernel, &set.centres, 3, &mut features, 5).unwrap();
        let targets = data.labels().to_vec();
        let problem = Problem {
            data: &data,
            targets: &targets,
            kernel: &kernel,
            centres: &set.centres,
            factor: &factor,
            sample: &data,
            dim: 3,
            threads: 2,
        };
        let ridge = |lambda, tolerance| Regularisation::Ridge { lambda, tolerance };
        for lambda in [0.0, -1.0, f64::NAN] {
            assert!(matches!(
                solve(&problem, ridge(lambda, 1e-6)),
                Err(TrainError::Core(Error::InvalidParam { name: "lambda" }))
            ));
        }
        let no_tolerance = solve(&problem, ridge(1.0, 0.0));
        assert!(matches!(no_tolerance, Err(TrainError::Core(Error::InvalidParam { name: "tolerance" }))));
        let no_components = solve(&problem, Regularisation::Components(0));
        assert!(matches!(no_components, Err(TrainError::Core(Error::InvalidParam { name: "components" }))));
        let short = Problem { targets: &targets[1..], ..problem };
        assert!(matches!(solve(&short, ridge(1.0, 1e-6)), Err(TrainError::Core(Error::DimensionMismatch { .. }))));
        let mut nan = targets.clone();
        nan[7] = f64::NAN;
        let bad = Problem { targets: &nan, ..short };
        assert!(matches!(solve(&bad, ridge(1.0, 1e-6)), Err(TrainError::Core(Error::NonFinite))));
        assert!(matches!(solve(&bad, Regularisation::Components(3)), Err(TrainError::Core(Error::NonFinite))));
        let empty = Dataset::new();
        let no_sample = Problem { sample: &empty, targets: &targets, ..bad };
        let refused = solve(&no_sample, ridge(1.0, 1e-6));
        assert!(matches!(refused, Err(TrainError::Core(Error::InvalidParam { name: "sample" }))));
    }
}
