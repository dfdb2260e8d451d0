//! Nonparametric low-rank kernel learning by block coordinate descent (seed 004, Hu &
//! Kwok, "Scalable Nonparametric Low-Rank Kernel Learning Using Block Coordinate
//! Descent"), and constrained clustering with the learned kernel.
//!
//! # The problem
//!
//! Given `n` points, a kNN graph with Gaussian similarities `S` and a set `T` of `m`
//! must-link (`T_ij = +1`) and cannot-link (`T_ij = −1`) pairs (eq. 2), NPKL learns a
//! kernel matrix `K ⪰ 0` consistent with both (eq. 3):
//!
//! ```text
//! min_K  tr(LK) + γ Σ_{(i,j)∈T} ℓ(T_ij K_ij),      L = (1+δ)I − D^{−1/2} S D^{−1/2}   (1)
//! ```
//!
//! With `K = VᵀV`, `V = [v_1 … v_n] ∈ ℝ^{r×n}` (eq. 9) the constraint `K ⪰ 0` disappears
//! (eq. 10) and block coordinate descent updates one column `v_i` at a time (eq. 11). A
//! point without constraints gets the closed form (13), `v_i = −(1/L_ii) Σ_{k≠i} L_ik v_k`;
//! a constrained point solves the small problem (18) for one of four losses:
//!
//! | loss | `ℓ(z)` | column update |
//! |---|---|---|
//! | [`Loss::Hinge`] | `max(1 − z, 0)` | dual box QP (22), `0 ≤ α ≤ γ/2`, then (21) |
//! | [`Loss::SquaredHinge`] | `max(1 − z, 0)²` | dual QP (25), `α ≥ 0`, `H = P + (L_ii/γ)I`, then (21) |
//! | [`Loss::Square`] | `(1 − z)²` | linear system (28); Sherman–Morrison–Woodbury (29) when `r > |T(i)|` |
//! | [`Loss::Linear`] | `−z` | closed form (31) under `‖v_i‖ ≤ b` |
//!
//! # Pieces
//!
//! - [`Laplacian`] (`graph.rs`): the exact kNN graph (searched by
//!   [`neighbors`](crate::neighbors)) and the sparse `L` of eq. (1).
//! - [`Constraints`] (`constraints.rs`): the pairs `T`, given or drawn from labels.
//! - [`Npkl`] (`bcd.rs`, `params.rs`, `column.rs`, `qp.rs`): Algorithm 1 (BCDKL).
//! - [`Extension`] (`extension.rs`): out-of-sample columns by (13) (Sect. III-E).
//!
//! Clustering with the learned kernel (kernel k-means on `K = VᵀV`, i.e. k-means on the
//! columns of `V`) and its RAND index (Sect. IV-A) are general tools, in
//! [`cluster`](crate::cluster).
//!
//! # Conventions (where the paper leaves a choice)
//!
//! - **Objective (3)** sums each unordered pair of `T` once; then the terms of (10) that
//!   involve `v_i` are exactly twice the per-column objective (18). Self-pairs, repeated
//!   pairs and pairs both must- and cannot-link are rejected.
//! - **Graph**: `S_ij = exp(−‖x_i − x_j‖²/(2σ²))` when `j` is among the `k` nearest
//!   neighbours of `i` or `i` among those of `j` (the symmetric "or" kNN graph, no self
//!   loops), 0 otherwise; by default `σ² = ` the mean of the squared distances over the
//!   `n·k` directed kNN edges, so a typical edge weighs `e^{−1/2}`. `δ = 0.1` by default:
//!   the eigenvalues of `L` lie in `[δ, 2 + δ]`, and Proposition 1 makes the sweep over the
//!   unconstrained columns a contraction of rate at most `1/(1+δ)`.
//! - **Rank**: [`rank_for_pairs`] gives the paper's rule, the largest `r` with
//!   `r(r+1)/2 ≤ m`.
//! - **Linear loss**: the bound `‖v_i‖ ≤ b` (`b = 1` as in the paper) holds for every
//!   column, so unconstrained columns (and out-of-sample ones) are the projection of (13)
//!   on the ball — exact, because the per-column objective is isotropic.
//! - **Initial `V(0)`**: independent `N(0, 1/r)` entries, so `‖v_i‖ ≈ 1` (the paper only
//!   says "generated randomly"; `V = 0` is a stationary point of every loss but the
//!   square loss).
//!
//! # Cost
//!
//! Per sweep `O(r·(n·k + Σ_i |T(i)|) + Σ_i (|T(i)|³ + r|T(i)|²))` time (Sect. III-C, Table I:
//! `O(r·k·n)` when constraints are few); memory `O(r·n)` for `V` plus `O(n·k)` for the
//! graph and `O(n + m)` for the pairs, all in caller storage (each type has `const fn`s
//! for its scalars and bytes).
//!
//! # Examples
//!
//! Two well-separated blobs, a handful of pairs, and clustering with the learned kernel:
//!
//! ```
//! use kestrel_core::cluster::{KMeans, KMeansParams, rand_index};
//! use kestrel_core::npkl::{Constraints, GraphParams, Laplacian, Link, Loss, Npkl, NpklParams, Pair};
//! use kestrel_core::Rng;
//! let mut rng = Rng::seed_from_u64(1);
//! let (n, dim, k) = (40, 2, 5);
//! let points: Vec<f64> = (0..n * dim).map(|t| rng.normal::<f64>() * 0.3 + if t / dim < 20 { -2.0 } else { 2.0 }).collect();
//! let labels: Vec<u32> = (0..n as u32).map(|i| i / 20).collect();
//!
//! let graph = Laplacian::build_in(
//!     vec![0.0; Laplacian::scalars_len(n, k)], vec![0; Laplacian::indices_len(n, k)],
//!     &points, dim, GraphParams::new().neighbors(k).check()?)?;
//! let pairs = [Pair::new(0, 1, Link::Must), Pair::new(21, 22, Link::Must), Pair::new(0, 21, Link::Cannot)];
//! let constraints = Constraints::new_in(vec![0; Constraints::indices_len(n, pairs.len())], n, &pairs)?;
//! let (rank, t) = (2, constraints.max_degree());
//! let mut npkl = Npkl::new_in(
//!     vec![0.0; Npkl::scalars_len(n, rank, t)], vec![0; Npkl::indices_len(n)],
//!     graph.view(), constraints.view(), NpklParams::new(rank, Loss::Hinge).check()?, &mut rng)?;
//! let outcome = npkl.run(&mut rng);
//! assert!(outcome.objective <= outcome.initial_objective);
//!
//! let c = 2;
//! let km = KMeans::fit_in(
//!     vec![0.0; KMeans::scalars_len(n, rank, c)], vec![0; KMeans::indices_len(n, c)],
//!     npkl.columns(), rank, KMeansParams::new(c).check()?, &mut rng)?;
//! assert!(rand_index(&labels, km.assignments())? > 0.9);
//! # Ok::<(), kestrel_core::Error>(())
//! ```

mod bcd;
mod column;
mod constraints;
mod extension;
mod graph;
mod params;
mod qp;
#[cfg(test)]
pub(crate) mod testing;

pub use bcd::Npkl;
pub use constraints::{Constraints, ConstraintsView, Link, Pair};
pub use extension::Extension;
pub use graph::{GraphParams, Laplacian, LaplacianView, ValidGraphParams};
pub use params::{ColumnUpdate, Embedding, NpklParams, Outcome, StopReason, SweepReport, ValidNpklParams};

/// The loss `ℓ(T_ij K_ij)` between the learned kernel and a pair (Fig. 1 of the paper).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Loss {
    /// `ℓ(z) = max(1 − z, 0)`: dual box QP (22), closed form when `|T(i)| = 1`.
    Hinge,
    /// `ℓ(z) = max(1 − z, 0)²`: dual QP (25), closed form when `|T(i)| = 1`.
    SquaredHinge,
    /// `ℓ(z) = (1 − z)²`: linear system (28), by SMW (29) when `r > |T(i)|`.
    Square,
    /// `ℓ(z) = −z` with `‖v_i‖ ≤ b`: closed form (31).
    Linear,
}

impl Loss {
    /// `ℓ(z)`.
    pub fn value<T: crate::Real>(self, z: T) -> T {
        let hinge = (T::ONE - z).max_of(T::ZERO);
        match self {
            Loss::Hinge => hinge,
            Loss::SquaredHinge => hinge * hinge,
            Loss::Square => (T::ONE - z) * (T::ONE - z),
            Loss::Linear => -z,
        }
    }
}

/// The paper's rank rule (Sect. IV-A): the largest `r` with `r(r+1)/2 ≤ m` for `m` pairs
/// (0 when `m = 0`).
///
/// ```
/// use kestrel_core::npkl::rank_for_pairs;
/// assert_eq!(rank_for_pairs(180), 18); // iris: 0.6n + 0.6n pairs, n = 150
/// assert_eq!(rank_for_pairs(171), 18);
/// assert_eq!(rank_for_pairs(170), 17);
/// assert_eq!(rank_for_pairs(0), 0);
/// ```
pub const fn rank_for_pairs(m: usize) -> usize {
    // r ≤ √(2m) < 2^32 for any usize m, so r(r+1)/2 never overflows in u128.
    let mut lo = 0u128;
    let mut hi = 1u128 << 33;
    while lo < hi {
        let mid = (lo + hi).div_ceil(2);
        if mid * (mid + 1) / 2 <= m as u128 { lo = mid } else { hi = mid - 1 }
    }
    lo as usize
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rank_rule_is_the_largest_fitting_r() {
        for m in 0..2000usize {
            let r = rank_for_pairs(m);
            assert!(r * (r + 1) / 2 <= m && (r + 1) * (r + 2) / 2 > m, "m = {m}, r = {r}");
        }
        let r = rank_for_pairs(usize::MAX);
        assert!((r as u128) * (r as u128 + 1) / 2 <= usize::MAX as u128);
    }

    #[test]
    fn loss_values() {
        assert_eq!(Loss::Hinge.value(0.5f64), 0.5);
        assert_eq!(Loss::Hinge.value(2.0f64), 0.0);
        assert_eq!(Loss::SquaredHinge.value(-1.0f32), 4.0);
        assert_eq!(Loss::Square.value(3.0f64), 4.0);
        assert_eq!(Loss::Linear.value(3.0f64), -3.0);
    }
}
