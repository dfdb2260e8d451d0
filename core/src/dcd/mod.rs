//! Linear SVMs by dual coordinate descent (DCD): Hsieh, Chang, Lin, Keerthi, Sundararajan,
//! *A dual coordinate descent method for large-scale linear SVM*, ICML 2008 — the
//! algorithm inside LIBLINEAR — reviewed in seed 000, Sect. 4.2.2 (Problem 1).
//!
//! # The problem
//!
//! For rows `xᵢ ∈ ℝᵈ` with labels `yᵢ = ±1`, the bias is an extra constant feature:
//! `x̂ᵢ = [xᵢ, B]`, `ŵ = [w, w_b]` (Hsieh et al. eq. (3), LIBLINEAR's `-B`; `w_b` is
//! regularised with `w`). The primal (eq. (1)–(2)) is
//!
//! ```text
//! min_w ½‖ŵ‖² + Σᵢ Cᵢ ξ(ŵ; x̂ᵢ, yᵢ),   ξ = max(0, 1 − yᵢŵᵀx̂ᵢ)  (hinge, "L1")
//!                                   or ξ = max(0, 1 − yᵢŵᵀx̂ᵢ)² (squared hinge, "L2")
//! ```
//!
//! with `Cᵢ = C₊` or `C₋` by the label, and the dual (eq. (4); seed 000 Problem 1 is the
//! hinge case with `C/ℓ`) is
//!
//! ```text
//! min_α f(α) = ½ αᵀQ̄α − eᵀα   subject to 0 ≤ αᵢ ≤ Uᵢ,   Q̄ = Q + D,  Qᵢⱼ = yᵢyⱼ x̂ᵢᵀx̂ⱼ
//! hinge: Uᵢ = Cᵢ, Dᵢᵢ = 0;    squared hinge: Uᵢ = ∞, Dᵢᵢ = 1/(2Cᵢ).
//! ```
//!
//! The solver keeps `ŵ = Σᵢ yᵢαᵢx̂ᵢ` up to date, so the partial derivative
//! `Gᵢ = ∂f/∂αᵢ = yᵢŵᵀx̂ᵢ − 1 + Dᵢᵢαᵢ` costs one sparse dot product, the closed-form
//! minimiser along `αᵢ` is `αᵢ ← min(max(αᵢ − Gᵢ/Q̄ᵢᵢ, 0), Uᵢ)`, and the update
//! `ŵ ← ŵ + Δαᵢyᵢx̂ᵢ` one sparse axpy (seed 000 Sect. 4.2.2; Hsieh et al. Algorithm 1).
//! Passes visit the coordinates in a fresh random order, shrink coordinates stuck at a
//! bound (Sect. 3.2) and stop on LIBLINEAR's projected-gradient rule; see [`solver`] for
//! the exact procedure. The dual objective reported is `f(α) = ½‖ŵ‖² + ½ΣDᵢᵢαᵢ² − Σαᵢ`,
//! the value LIBLINEAR prints as `Objective value` (negative at the optimum).
//! The decision value of a row is `ŵᵀx̂ = wᵀx + w_b·B`.
//!
//! # What is here
//!
//! - [`Params`] → [`ValidParams`]: loss, `C`, class weights, `B`, `ε`, pass cap, shrinking.
//! - [`Row`], [`Rows`], [`DenseRows`], [`SparseRows`]: how rows reach the solvers.
//! - [`LinearSvm`]: binary, labels ±1, batch training → [`Outcome`].
//! - [`OneVsRest`]: `k` classes, labels `0..k`.
//! - [`OnlineSvm`]: a window of the last `N` samples, a few coordinate steps per arrival,
//!   optionally with a decaying memory of the evicted samples
//!   ([`OnlineSvm::remembering_in`]: the window's SVM regularised toward that memory);
//!   [`OnlineSvmState`] and [`OnlineSvm::from_state_in`] save and restore it exactly.
//! - [`OnlineOneVsRest`]: `k` classes one-vs-rest over one such window, which every class
//!   shares (what `k` [`OnlineSvm`]s compute, bit for bit, holding the rows once);
//!   [`OnlineOneVsRestState`] saves and restores it.
//! - [`LinearModel`]: the trained weights alone, as stored in a model file and used to predict.
//!
//! # Cost
//!
//! One pass is O(nnz) time for the active rows (`nnz` their non-zeros; O(n·d) dense);
//! Hsieh et al. show linear convergence, `O(log(1/ε))` passes. Memory, besides the rows
//! (which stay where the caller keeps them): `2n + d + 1` scalars and `n` indices for
//! [`LinearSvm`] ([`LinearSvm::scalars_len`], [`LinearSvm::indices_len`],
//! [`LinearSvm::bytes`]); `k(d + 1) + 2n` scalars and `n` indices for [`OneVsRest`]
//! ([`OneVsRest::scalars_len`], [`OneVsRest::indices_len`], [`OneVsRest::bytes`]);
//! `N(d + 3) + d + 1` scalars for [`OnlineSvm`] ([`OnlineSvm::scalars_len`],
//! [`OnlineSvm::bytes`]), `d + 1` more with its memory
//! ([`OnlineSvm::scalars_len_remembering`], [`OnlineSvm::bytes_remembering`]);
//! `N(d + 2) + k(N + d + 1)` scalars and `k` [`Sweep`]s for [`OnlineOneVsRest`]
//! ([`OnlineOneVsRest::scalars_len`]), `k(d + 1)` more with the classes' memories.
//!
//! # Examples
//! ```
//! use kestrel_core::dcd::{LinearSvm, Loss, Params, Row, SparseRows};
//! use kestrel_core::Rng;
//! // Three sparse rows of 4 features (CSR), labels ±1.
//! let rows = SparseRows::new(4, &[0, 2, 3, 5], &[0, 3, 1, 0, 2], &[1.0, 2.0, -1.0, -2.0, 0.5])?;
//! let labels = [1, -1, -1];
//! let params = Params::new().loss(Loss::Hinge).c(1.0).bias(1.0).epsilon(1e-3).check()?;
//! let mut scalars = vec![0.0f64; LinearSvm::scalars_len(3, 4)];
//! let mut indices = vec![0usize; LinearSvm::indices_len(3)];
//! let mut svm = LinearSvm::new_in(&mut scalars[..], &mut indices[..], 3, 4, params)?;
//! let outcome = svm.train(&rows, &labels, &mut Rng::seed_from_u64(42))?;
//! println!("{:?} after {} passes, f(α) = {}", outcome.exit, outcome.passes, outcome.objective);
//! assert_eq!(svm.predict(Row::Sparse { indices: &[0], values: &[3.0] })?, 1);
//! # Ok::<(), kestrel_core::Error>(())
//! ```

mod binary;
pub(crate) mod model;
mod multiclass;
mod online;
mod online_features;
mod online_ovr;
mod online_ovr_growth;
mod online_ovr_state;
mod online_state;
mod params;
mod rows;
pub mod solver;
mod sweep;

#[cfg(test)]
mod test_support;

pub use binary::LinearSvm;
pub use model::LinearModel;
pub use multiclass::OneVsRest;
pub use online::{OnlineSvm, WINDOW_EPSILON, check_decay, decay_over};
pub use online_ovr::OnlineOneVsRest;
pub use online_ovr_state::OnlineOneVsRestState;
pub use online_state::OnlineSvmState;
pub use params::{Loss, Params, ValidParams};
pub use rows::{DenseRows, Row, Rows, SparseRows};
pub use solver::{Exit, Outcome, Pass};
pub use sweep::Sweep;
