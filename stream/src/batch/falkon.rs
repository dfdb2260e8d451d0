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
//! the kernel rows `k_i = K(Ã, x_i)`, recomputed at each product a block of rows at a time
//! ([`super::kernel_rows`]): with `u = L⁻ᵀw`, `(Z_c w)_i = k_iᵀu − z̄ᵀw` and
//! `Z_cᵀt = L⁻¹Σ_i t_i k_i − z̄·Σ_i t_i` — one pass over the rows, `O(n·m·d)` kernel work and
//! `O(n·m)` products, split over the machine's cores.
//!
//! **Preconditioner** (Falkon's two Cholesky factors). The first, `L` of the centres'
//! kernel, is the change of variables `w = Lᵀα` already made by the whitening: CG runs on
//! the problem preconditioned by it. The second approximates what is left, the Hessian
//! `Z_cᵀZ_c + λI`, from rows `S`: `M = (n/n_s)·Z_{S,c}ᵀZ_{S,c} + λI = RRᵀ`, with
//! `Z_{S,c}ᵀZ_{S,c} = L⁻¹(Σ_{i∈S} k_ik_iᵀ − n_s·k̄_Sk̄_Sᵀ)L⁻ᵀ` accumulated by one matrix
//! product per block of rows (`n_s·m²` multiply-adds, in f64), factored once in f64 (`m³/3`)
//! and applied by two triangular solves. Where the rows come from is [`HessianRows`]:
//! - **A sample** ([`HessianRows::Sample`]). Falkon takes the `m` centres themselves (`Z` on
//!   the centres is `L`'s rows); the krr solver passes the subsample its centres and ridge
//!   were chosen on ([`super::krr::CG_SUBSAMPLE`] rows), a sharper estimate for the same
//!   `O(m²)` memory: on the benchmark of `scripts/bench_krr_cg.py` (n = 5·10⁴ and 2·10⁵,
//!   m = 256) CG needed 65 to 68 iterations with the centres as the sample, 9 with the
//!   subsample — each iteration a pass over the rows.
//! - **Every row** ([`HessianRows::All`]): `M` is then the Hessian itself, accumulated in the
//!   same pass as the right side, and CG meets its tolerance in one to three steps (what is
//!   left is rounding: `M` carries the error of forming `L⁻¹CL⁻ᵀ`, which grows with `L`'s
//!   condition — solving with `M` alone, without CG's passes, left predictions 3·10⁻⁶ from
//!   the exact path's on an ill-conditioned test where CG reaches 6·10⁻¹⁰). One pass of
//!   `n·m²` multiply-adds replaces most of the passes of `n·m·d` kernel work: cheaper while
//!   `m` is small next to the iterations saved times the kernel's cost per entry (see
//!   [`super::krr::EXACT_HESSIAN_CENTRES`] for where the krr solver switches).
//!
//! Conjugate gradients ([`preconditioned_conjugate_gradient`], seed 000 §3.3) stop at a
//! relative residual `tol` (`--eps`; default [`default_tolerance`]) or [`MAX_ITERATIONS`].
//!
//! **Memory**: `O(m²)` — `L`, `R` and the accumulated Hessian — and per thread a block of
//! kernel rows and an accumulator (`m² + 2m` while a Hessian is accumulated), whatever `n`
//! ([`working_bytes`]); the data set itself is read, not copied.

use std::ops::Range;

use kestrel_core::cholesky::Cholesky;
use kestrel_core::linalg::{
    CgOutcome, CgParams, LinearOperator, Triangle, conjugate_gradient_observed, dot, preconditioned_conjugate_gradient,
    solve_lower, solve_lower_transposed,
};
use kestrel_core::{Error, Kernel, Real};
use ndarray::linalg::general_mat_mul;
use ndarray::{ArrayView2, ArrayViewMut2, Axis, Slice};

use super::TrainError;
use super::kernel_rows::{BLOCK_ROWS, KernelRows, pass};
use crate::dataset::Dataset;
use crate::limits::zeroed;

/// The most conjugate-gradient iterations.
pub const MAX_ITERATIONS: usize = 500;

/// Columns of the panels in which a Hessian block is accumulated: the products of panels on
/// and below the diagonal are formed, those above are their transposes.
const PANEL: usize = 64;

/// The relative residual at which CG stops unless `--eps` says: `10⁻⁷` in f64, `10⁻⁴` in
/// f32 (whose products carry about `10⁻⁶` of rounding over a million rows).
pub fn default_tolerance<T: Real>() -> f64 {
    if T::BYTES == 4 { 1e-4 } else { 1e-7 }
}

/// Bytes a solve with `m` centres in `dim` features holds on `threads` threads: the
/// centres in f64, the preconditioner's factor and Hessian, the CG vectors, and each
/// thread's block of rows, kernel block and accumulator (`m² + 2m` while a Hessian is
/// accumulated).
pub fn working_bytes<T>(m: usize, dim: usize, threads: usize) -> usize {
    let square = m.saturating_mul(m);
    let per_thread =
        square.saturating_add(m.saturating_mul(2)).saturating_add(BLOCK_ROWS.saturating_mul(dim.saturating_add(m)));
    let wide = Cholesky::scalars_len(m)
        .saturating_add(square)
        .saturating_add(m.saturating_mul(dim.saturating_add(1)))
        .saturating_add(per_thread.saturating_mul(threads));
    let narrow = m.saturating_mul(10);
    wide.saturating_mul(size_of::<f64>()).saturating_add(narrow.saturating_mul(size_of::<T>()))
}

/// The rows the preconditioner's Hessian is accumulated on.
#[derive(Clone, Copy, Debug)]
pub enum HessianRows<'a, T> {
    /// A uniform sample of the data set (or the centres), scaled to the whole set.
    Sample(&'a Dataset<T>),
    /// Every row: the exact Hessian, accumulated in the pass that forms the right side.
    All,
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
    /// Rows on which the preconditioner accumulates the Hessian.
    pub hessian: HessianRows<'a, T>,
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
    /// Passes over the rows.
    pub passes: usize,
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
    /// none is used (and [`Problem::hessian`] is not read). CG stops sooner at
    /// [`default_tolerance`]: the least-squares fit is then reached to the precision the
    /// products carry.
    Components(usize),
}

/// Solves the problem regularised by `regularisation`.
///
/// # Errors
/// `InvalidParam` for a ridge or tolerance that is not finite and positive, no components,
/// an empty sample, or fewer than two rows; `DimensionMismatch` for targets that are not one
/// per row; `NonFinite` when a product overflows; [`Error::Breakdown`] should the problem not
/// be positive definite; an allocation failure.
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
    if let (Regularisation::Ridge { .. }, HessianRows::Sample(sample)) = (regularisation, problem.hessian)
        && sample.is_empty()
    {
        return Err(Error::InvalidParam { name: "sample" }.into());
    }
    let kernel_rows = KernelRows::new(problem.kernel, problem.centres, problem.dim)?;
    let l: Vec<f64> = problem.factor.packed().iter().map(|x| x.to_f64()).collect();
    let mean_target = problem.targets.iter().fold(0.0, |acc, y| acc + y.to_f64()) / n as f64;
    let whole = matches!((regularisation, problem.hessian), (Regularisation::Ridge { .. }, HessianRows::All));
    let targets = Some((problem.targets, mean_target));
    let sums = accumulate(&kernel_rows, problem.data, problem.threads, &l, targets, whole)?;
    let (mut mean_feature, mut right) = (sums.mean_kernel, sums.right);
    solve_lower(&l, m, Triangle::Packed, &mut mean_feature)?;
    solve_lower(&l, m, Triangle::Packed, &mut right)?;
    let mean_feature: Vec<T> = mean_feature.iter().map(|&z| T::from_f64(z)).collect();
    let right: Vec<T> = right.iter().map(|&r| T::from_f64(r)).collect();
    let intercept = |w: &[T]| Ok::<T, Error>(T::from_f64(mean_target) - dot(&mean_feature, w)?);
    let mut weights = zeroed(m, "the weights")?;
    let mut workspace = zeroed(kestrel_core::linalg::cg_workspace_len(m), "the CG vectors")?;
    let mut passes = 1;
    let outcome = match regularisation {
        Regularisation::Ridge { .. } => {
            let preconditioner = match problem.hessian {
                HessianRows::All => factor_hessian(&sums.hessian, m, 1.0, lambda.to_f64())?,
                HessianRows::Sample(sample) => sample_preconditioner(problem, &kernel_rows, &l, sample, lambda)?,
            };
            let mut product = streamed_product(problem, &kernel_rows, &mean_feature, lambda, &mut passes)?;
            let mut inverse = inverse(&preconditioner)?;
            preconditioned_conjugate_gradient(
                &mut product,
                &mut inverse,
                &right,
                &mut weights,
                &params,
                &mut workspace,
            )?
        }
        Regularisation::Components(_) => {
            let mut product = streamed_product(problem, &kernel_rows, &mean_feature, T::ZERO, &mut passes)?;
            let mut step = |r: usize, w: &[T]| observe(r, w, intercept(w)?);
            conjugate_gradient_observed(&mut product, &right, &mut weights, &params, &mut workspace, &mut step)?
        }
    };
    let intercept = intercept(&weights)?;
    Ok(Solution { weights, intercept, outcome, passes })
}

/// What a pass over rows accumulates ([`accumulate`]).
struct Sums {
    /// `k̄`, the mean kernel row.
    mean_kernel: Vec<f64>,
    /// `Σ_i (y_i − ȳ)k_i` (empty without targets).
    right: Vec<f64>,
    /// The centred Hessian `L⁻¹Σ_i(k_i − k̄)(k_i − k̄)ᵀL⁻ᵀ`, row-major `m × m` (empty when not
    /// asked for).
    hessian: Vec<f64>,
}

/// One pass over the rows of `data`: [`Sums`], the right side when `targets` (and their
/// mean) are given, the Hessian when `with_hessian`. The Hessian's kernel rows are offset by
/// the first block's mean `k̂` ([`KernelRows::offset_by_first_rows`]), so centring does not
/// cancel; `Σ(y − ȳ)(k − k̂)` is the right side still (`Σ(y − ȳ) = 0`), and
/// `k̄ = k̂ + Σ(k − k̂)/n`.
fn accumulate<T: Real>(
    kernel_rows: &KernelRows,
    data: &Dataset<T>,
    threads: usize,
    l: &[f64],
    targets: Option<(&[T], f64)>,
    with_hessian: bool,
) -> Result<Sums, TrainError> {
    let m = kernel_rows.len();
    let gram_len = if with_hessian { m * m } else { 0 };
    let right_len = if targets.is_some() { m } else { 0 };
    let shifted = if with_hessian { kernel_rows.offset_by_first_rows(data)? } else { kernel_rows.clone() };
    let sums = pass(&shifted, data, threads, gram_len + m + right_len, |range, block, acc| {
        let (gram, rest) = acc.split_at_mut(gram_len);
        let (sum, right) = rest.split_at_mut(m);
        for (i, k) in range.zip(block.chunks_exact(m)) {
            for (s, &k) in sum.iter_mut().zip(k) {
                *s += k;
            }
            if let Some((targets, mean)) = targets {
                let y = targets.get(i).map_or(0.0, |y| y.to_f64()) - mean;
                for (r, &k) in right.iter_mut().zip(k) {
                    *r += y * k;
                }
            }
        }
        if with_hessian { add_gram(block, m, gram) } else { Ok(()) }
    })?;
    let (gram, rest) = sums.split_at(gram_len);
    let (sum, right) = rest.split_at(m);
    let count = data.len() as f64;
    let hessian = if with_hessian { centred_hessian(gram.to_vec(), sum, count, l, m)? } else { Vec::new() };
    let mut mean_kernel: Vec<f64> = sum.iter().map(|s| s / count).collect();
    for (k, o) in mean_kernel.iter_mut().zip(shifted.offset()) {
        *k += o;
    }
    Ok(Sums { mean_kernel, right: right.to_vec(), hessian })
}

/// `gram += K_bᵀK_b` for a kernel block `K_b` (row-major `b × m`) into the row-major
/// `m × m` `gram`, by one matrix product per pair of [`PANEL`]-column panels on or below the
/// diagonal: the entries above the diagonal panels are left for [`centred_hessian`] to mirror.
fn add_gram(block: &[f64], m: usize, gram: &mut [f64]) -> Result<(), Error> {
    let b = block.len() / m.max(1);
    let shape = |_| Error::DimensionMismatch { expected: m * m, got: gram.len() };
    let kernel = ArrayView2::from_shape((b, m), block).map_err(shape)?;
    let shape = |_| Error::DimensionMismatch { expected: m * m, got: m * m };
    let mut gram = ArrayViewMut2::from_shape((m, m), gram).map_err(shape)?;
    for a in (0..m).step_by(PANEL) {
        let rows = a..(a + PANEL).min(m);
        for c in (0..=a).step_by(PANEL) {
            let columns = c..(c + PANEL).min(m);
            let left = kernel.slice_axis(Axis(1), Slice::from(rows.clone()));
            let right = kernel.slice_axis(Axis(1), Slice::from(columns.clone()));
            let mut panel_rows = gram.slice_axis_mut(Axis(0), Slice::from(rows.clone()));
            let mut panel = panel_rows.slice_axis_mut(Axis(1), Slice::from(columns));
            general_mat_mul(1.0, &left.t(), &right, 1.0, &mut panel);
        }
    }
    Ok(())
}

/// `Z_{S,c}ᵀZ_{S,c} = L⁻¹(C − s·sᵀ/count)L⁻ᵀ`, row-major, from the sums of a pass over
/// `count` rows: `C = Σ k_ik_iᵀ` (row-major, valid on and below the diagonal, as
/// [`add_gram`] leaves it) and `s = Σ k_i`, of kernel rows `k_i` offset by any `k̂`
/// ([`KernelRows::offset_by`]: the centred sum is the same, and with `k̂` near the mean the
/// subtraction does not cancel).
fn centred_hessian(mut gram: Vec<f64>, sum: &[f64], count: f64, l: &[f64], m: usize) -> Result<Vec<f64>, Error> {
    for a in 0..m {
        for b in 0..a {
            let lower = gram.get(a * m + b).copied().unwrap_or(0.0);
            if let Some(upper) = gram.get_mut(b * m + a) {
                *upper = lower;
            }
        }
    }
    for (row, &s_a) in gram.chunks_exact_mut(m).zip(sum) {
        for (g, &s_b) in row.iter_mut().zip(sum) {
            *g -= s_a * s_b / count;
        }
    }
    // In f64 whatever T: L⁻¹ amplifies rounding by L's condition, which in f32 made the
    // Hessian indefinite on the benchmark. C is symmetric: its rows are its columns. L⁻¹ on
    // each gives the rows of (L⁻¹C)ᵀ; transposed, L⁻¹ on each row of L⁻¹C gives the rows of
    // L⁻¹CL⁻ᵀ (symmetric too).
    for row in gram.chunks_exact_mut(m) {
        solve_lower(l, m, Triangle::Packed, row)?;
    }
    for a in 0..m {
        for b in 0..a {
            gram.swap(a * m + b, b * m + a);
        }
    }
    for row in gram.chunks_exact_mut(m) {
        solve_lower(l, m, Triangle::Packed, row)?;
    }
    Ok(gram)
}

/// Most times [`factor_hessian`] widens its shift before it gives up.
const SHIFT_TRIES: usize = 12;

/// `R` with `RRᵀ = ratio·hessian + (λ + δ)I`, in f64: `δ = 0`, or, when rounding has left
/// the formed Hessian indefinite at that shift (a tiny `λ` on an ill-conditioned `L`: the
/// formed `L⁻¹CL⁻ᵀ` carries errors of `ε` times `L`'s condition squared), the least of
/// `10⁻¹², 10⁻¹¹, …` times the largest diagonal entry that makes it positive definite. A
/// preconditioner only has to be close: CG on the true operator corrects the rest, in more
/// steps.
///
/// # Errors
/// `NotPositiveDefinite` when [`SHIFT_TRIES`] shifts up to `10⁻¹` of the diagonal fail;
/// an allocation failure.
fn factor_hessian(hessian: &[f64], m: usize, ratio: f64, lambda: f64) -> Result<Cholesky<f64, Vec<f64>>, TrainError> {
    let largest = (0..m).map(|i| hessian.get(i * m + i).copied().unwrap_or(0.0) * ratio).fold(0.0, f64::max);
    let mut shift = 0.0;
    let mut scale = 1e-12;
    for _ in 0..SHIFT_TRIES {
        let storage = zeroed(Cholesky::scalars_len(m), "the preconditioner")?;
        let factor = Cholesky::factor_in(storage, m, m, |i, j| {
            let g = hessian.get(i * m + j).copied().unwrap_or(0.0) * ratio;
            if i == j { g + lambda + shift } else { g }
        });
        match factor {
            Err(Error::NotPositiveDefinite { .. }) => {
                shift = scale * largest;
                scale *= 10.0;
            }
            factor => return Ok(factor?),
        }
    }
    Err(Error::NotPositiveDefinite { pivot: 0 }.into())
}

/// Falkon's `R`, the Hessian estimated on the `n_s` rows of `sample` and scaled by `n/n_s`.
fn sample_preconditioner<T: Real>(
    problem: &Problem<'_, T>,
    kernel_rows: &KernelRows,
    l: &[f64],
    sample: &Dataset<T>,
    lambda: T,
) -> Result<Cholesky<f64, Vec<f64>>, TrainError> {
    let sums = accumulate(kernel_rows, sample, problem.threads, l, None, true)?;
    let ratio = problem.data.len() as f64 / sample.len() as f64;
    factor_hessian(&sums.hessian, kernel_rows.len(), ratio, lambda.to_f64())
}

/// `z = M⁻¹r` by the factor of `M`, in f64.
fn inverse<T: Real>(factor: &Cholesky<f64, Vec<f64>>) -> Result<impl LinearOperator<T>, TrainError> {
    let mut scratch = zeroed(factor.dim(), "the CG vectors")?;
    Ok(move |r: &[T], z: &mut [T]| {
        for (s, &r) in scratch.iter_mut().zip(r) {
            *s = r.to_f64();
        }
        factor.solve_in_place(&mut scratch)?;
        for (z, &s) in z.iter_mut().zip(&scratch) {
            *z = T::from_f64(s);
        }
        Ok(())
    })
}

/// `w ↦ (Z_cᵀZ_c + λI)w` by a pass over the rows, counting the passes in `passes`.
fn streamed_product<'p, T: Real>(
    problem: &'p Problem<'_, T>,
    kernel_rows: &'p KernelRows,
    mean_feature: &'p [T],
    lambda: T,
    passes: &'p mut usize,
) -> Result<impl LinearOperator<T> + 'p, TrainError> {
    let m = kernel_rows.len();
    let mut u = zeroed(m, "the CG vectors")?;
    let mut wide = zeroed(m, "the CG vectors")?;
    Ok(move |w: &[T], out: &mut [T]| -> Result<(), Error> {
        u.copy_from_slice(w);
        solve_lower_transposed(problem.factor.packed(), m, Triangle::Packed, &mut u)?;
        for (v, u) in wide.iter_mut().zip(&u) {
            *v = u.to_f64();
        }
        let shift = dot(mean_feature, w)?.to_f64();
        let u = &wide;
        let products = pass(kernel_rows, problem.data, problem.threads, m + 1, |_: Range<usize>, block, acc| {
            let (g, sum) = acc.split_at_mut(m);
            for k in block.chunks_exact(m) {
                let t = k.iter().zip(u).map(|(k, u)| k * u).sum::<f64>() - shift;
                for (g, &k) in g.iter_mut().zip(k) {
                    *g += t * k;
                }
                if let Some(sum) = sum.first_mut() {
                    *sum += t;
                }
            }
            Ok(())
        })?;
        *passes += 1;
        for (o, &g) in out.iter_mut().zip(&products) {
            *o = T::from_f64(g);
        }
        problem.factor.solve_lower_in_place(out)?;
        let sum = T::from_f64(products.get(m).copied().unwrap_or(0.0));
        for ((o, &z), &w) in out.iter_mut().zip(mean_feature).zip(w) {
            *o += lambda * w - z * sum;
        }
        Ok(())
    })
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
    /// shrinkage; one thread and three agree. With the Hessian of every row CG needs at most
    /// three steps; each step is a pass.
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
            for (threads, hessian) in [
                (1, HessianRows::Sample(&sample)),
                (3, HessianRows::Sample(&sample)),
                (1, HessianRows::All),
                (3, HessianRows::All),
            ] {
                let problem = Problem {
                    data: &data,
                    targets: &targets,
                    kernel: &kernel,
                    centres: &set.centres,
                    factor: &factor,
                    hessian,
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
                assert!(error <= tol, "λ = {lambda}, {threads} threads, {hessian:?}: fitted values off by {error:e}");
                if T::BYTES == 8 {
                    let relative = (&beta - &exact).norm() / exact.norm();
                    assert!(relative <= 1e3 * tol, "λ = {lambda}: weights off by {relative:e}");
                }
                // The preconditioner keeps the iterations few.
                let (iterations, passes) = (solution.outcome.iterations, solution.passes);
                let most = if let HessianRows::All = hessian { 3 } else { 39 };
                assert!(iterations <= most, "λ = {lambda}, {hessian:?}: {:?}", solution.outcome);
                assert_eq!(passes, iterations + 1);
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
            hessian: HessianRows::Sample(&sample),
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
            hessian: HessianRows::Sample(&data),
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

    /// A Hessian that rounding left singular or barely indefinite is factored with the least
    /// shift that makes it positive definite; one far from it is refused.
    #[test]
    fn an_indefinite_hessian_is_factored_with_a_small_shift() {
        let (m, lambda) = (2, 0.0);
        let product = |factor: &Cholesky<f64, Vec<f64>>| {
            let l = factor.packed();
            [l[0] * l[0], l[0] * l[1], l[1] * l[1] + l[2] * l[2]]
        };
        for (off, most) in [(1.0, 1e-11), (1.0 + 1e-10, 1e-8)] {
            let hessian = [1.0, off, off, 1.0];
            let factor = factor_hessian(&hessian, m, 1.0, lambda).unwrap();
            let [a, b, c] = product(&factor);
            let shift = a - 1.0;
            assert!(shift > 0.0 && shift <= most, "off-diagonal {off}: shift {shift:e}");
            assert!((b - off).abs() <= 1e-15 && (c - 1.0 - shift).abs() <= 1e-12, "{a} {b} {c}");
        }
        let refused = factor_hessian(&[1.0, 0.0, 0.0, -1.0], m, 1.0, lambda);
        assert!(matches!(refused, Err(TrainError::Core(Error::NotPositiveDefinite { .. }))));
        // A positive definite one takes no shift.
        let factor = factor_hessian(&[4.0, 1.0, 1.0, 3.0], m, 1.0, 0.5).unwrap();
        assert!((product(&factor)[0] - 4.5).abs() <= 1e-15, "{:?}", product(&factor));
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
            hessian: HessianRows::Sample(&data),
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
        let no_sample = Problem { hessian: HessianRows::Sample(&empty), targets: &targets, ..bad };
        let refused = solve(&no_sample, ridge(1.0, 1e-6));
        assert!(matches!(refused, Err(TrainError::Core(Error::InvalidParam { name: "sample" }))));
    }
}
