//! SLKL — Stochastic Low-Rank Kernel Learning for regression (seed 001: Machart, Peel,
//! Ralaivola, Anthoine, Glotin, ICML 2011), with the paper's errors corrected, a factor that
//! stays accurate in `f32`, shrinking and a sliding-window mode.
//!
//! # The model
//!
//! For a base kernel `k` and candidate centres `s_1 … s_M` (the set `S` of eq. 3), the
//! rank-1 Nyström columns are `c_m = K(·, s_m)/√k(s_m, s_m)` (eq. 1-2) and the learned
//! Gram matrix is the conic combination `K~(μ) = Σ_m μ_m c_m c_mᵀ`, `μ ≥ 0` (eq. 3).
//! SLKL minimises (eq. 14)
//!
//! ```text
//! F(μ) = yᵀ(I + K~(μ)/λ)⁻¹y + ν·Σ_m μ_m
//! ```
//!
//! and predicts with `f(x) = ȳ + Σ_{μ_m>0} β_m k(x, s_m)` (eq. 15-17, see [`Predictor`]).
//! Only `λν` matters (Prop. 3): `λ = 1` by default, `ν` is the one hyper-parameter.
//!
//! With `C` the active columns and `D = diag(μ)` over them, Woodbury gives (eq. 22-23)
//! `K_λ⁻¹ = (λI + CDCᵀ)⁻¹ = I/λ − C H⁻¹Cᵀ/λ²` with `H = D⁻¹ + CᵀC/λ`, and the coordinate
//! derivatives (eq. 20-21) are `∂F/∂μ_m = ν − λa²`, `∂²F/∂μ_m² = 2λa²b` with
//! `a = yᵀK_λ⁻¹c_m`, `b = c_mᵀK_λ⁻¹c_m`.
//!
//! # Corrections to the paper (verified; see issue 3)
//!
//! - **Step.** Algorithm 2 prints `h = λa²b`; eq. (21) with `p = 2` gives `2λa²b`, so the
//!   printed step is twice the Newton step. And Theorem 1(a) (monotone `F`) fails for the
//!   projected Newton step when a weight decreases. Kestrel's default step is the exact
//!   coordinate minimiser: by Sherman–Morrison `F(μ + t e_m) − F(μ) = −λa²t/(1 + tb) + νt`,
//!   minimised at `μ_new = max(0, μ + (√(λa²/ν) − 1)/b)`. It is monotone by construction
//!   and costs O(1) given `a` and `b`. Both Newton variants remain as [`StepRule`]s.
//! - **Stopping rule.** Algorithm 1 prints `F(μ^k) − F(μ^{k−M}) < ε F(μ^{k−M})`, which
//!   holds at once for a decreasing `F`; Kestrel stops when
//!   `F(μ^{k−M}) − F(μ^k) ≤ ε·F(μ^{k−M})` (`≤` so that `F ≡ 0` stops too), or at a step cap.
//! - **The inverse.** Eq. (24)-(27) update `G = H⁻¹` directly, which drifts in `f32`
//!   (gradient errors of 10-100 % after 10⁴-10⁵ updates at small ν). Kestrel keeps the
//!   Cholesky factor of `H` and updates it with Givens rotations in the same four cases
//!   (see `active_set.rs`), checking it against a fresh column now and then.
//!
//! # Conventions
//!
//! - The default kernel is the paper's Gaussian `exp(−‖x − x'‖²/(2σ²))` with `σ² = 1`,
//!   i.e. [`Kernel::rbf`](crate::Kernel::rbf)`(0.5)`: it reproduces the `m0` of Table 2
//!   better than `exp(−‖x − x'‖²/σ²)`.
//! - The paper's model has no intercept. Kestrel centres `y` by its training (or window)
//!   mean and stores the mean in the model.
//! - Coordinates are drawn uniformly with replacement (Algorithm 1) from the pool; with
//!   shrinking, a confirming sweep visits each candidate once in index order.
//!
//! # Cost
//!
//! | operation | time | note |
//! |---|---|---|
//! | step, coordinate stays at 0 | O(n) (+ O(n·d) kernel work on the fly) | + O(n·m0) once after a change, to refresh `K_λ⁻¹y` |
//! | step, active weight changes or leaves | O(m0²) | one factor update, `z` and `F` refreshed |
//! | step, a column enters | O(n·m0 + m0²) | `Cᵀc_m`, one append |
//! | drift check (every 64 changes by default) | O(n·m0 + m0²) | one column of `H` |
//! | refactorization (on drift only) | O(n·m0² + m0³) | |
//! | window arrival | O(m0² + m0·d) | `Cᵀy`, `Cᵀ1`, `‖y − y₀‖²` as running sums, O(m0); the mean, O(N), and `z`, `F`, O(m0²), lazily; summed afresh, O(N·m0), every `N` arrivals |
//! | prediction | O(m0·d) | |
//!
//! Memory ([`Dims`]): `n·(m0_max + 1)` column scalars on the fly (`n·M` precomputed), the
//! factor `m0_max²/2`, and O(n + M·d) more — the paper's O(n·m0 + m0²). Nothing is
//! allocated; the caller lends or owns the buffers.
//!
//! # Example
//!
//! ```
//! use kestrel_core::slkl::{Candidates, Dims, Params, Slkl};
//! use kestrel_core::Rng;
//! // The sinc task of the paper, small: x uniform in [-5, 5]², y = sin‖x‖/‖x‖ + noise.
//! let mut rng = Rng::seed_from_u64(1);
//! let n = 200;
//! let x: Vec<f32> = (0..2 * n).map(|_| rng.uniform_in(-5.0, 5.0)).collect();
//! let sinc = |p: &[f32]| { let r = (p[0] * p[0] + p[1] * p[1]).sqrt(); r.sin() / r };
//! let y: Vec<f32> = x.chunks(2).map(|p| sinc(p) + 0.05 * rng.normal::<f32>()).collect();
//! // Capacities fixed up front; the bytes are known before anything is built.
//! let dims = Dims::new(n, 2, 100, 60);
//! assert_eq!(Slkl::bytes::<f32>(dims), Slkl::scalars_len(dims) * 4 + Slkl::indices_len(dims) * core::mem::size_of::<usize>());
//! let mut scalars = vec![0.0f32; Slkl::scalars_len(dims)];
//! let mut indices = vec![0usize; Slkl::indices_len(dims)];
//! let params = Params::new().nu(0.01).seed(7).check()?;
//! let mut slkl = Slkl::new_in(&mut scalars[..], &mut indices[..], dims, params, &x, &y, Candidates::Random)?;
//! let f0 = slkl.objective();
//! slkl.run()?;
//! assert!(slkl.objective() < f0);
//! let test = [1.0f32, -2.0];
//! assert!((slkl.predict(&test)? - sinc(&test)).abs() < 0.1);
//! # Ok::<(), kestrel_core::Error>(())
//! ```

mod active_set;
mod columns;
mod layout;
mod learner;
mod outcome;
mod params;
mod predictor;
mod renewal;
mod schedule;
mod solver;
mod state;
mod window;

pub use columns::ColumnMode;
pub use layout::Dims;
pub use learner::{Candidates, Slkl};
pub use outcome::{Case, ExitReason, Stats, Step, Summary};
pub use params::{DEFAULT_EPSILON, Params, StepRule, ValidParams};
pub use predictor::Predictor;
pub use state::SlklWindowState;
pub use window::SlklWindow;
