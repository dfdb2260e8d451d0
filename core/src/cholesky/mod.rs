//! Cholesky factorizations `A = L·Lᵀ`, in the three forms the learners need.
//!
//! - **Full**: [`Cholesky::factor_in`] / [`Cholesky::from_matrix_in`] factor a `k × k`
//!   symmetric positive-definite matrix row by row (Cholesky–Banachiewicz), O(k³/3).
//! - **Updatable**: the same [`Cholesky`] changes in O(k²) per operation —
//!   [`append_column`](Cholesky::append_column) (a new last row and column),
//!   [`remove_column`](Cholesky::remove_column) (any row and column),
//!   [`rank_one_update`](Cholesky::rank_one_update) (`A ± σxxᵀ`, update or downdate) —
//!   with Givens rotations, so the factor stays accurate over long sequences.
//! - **Pivoted incomplete**: [`IncompleteCholesky`] approximates an `n × n` kernel matrix
//!   by `G·Gᵀ` with `G` of rank `r`, reading `r` columns of it on demand (seed 000 Sect. 3.2),
//!   O(r²n) time, O(rn) memory.
//!
//! `L` is kept as a packed row-major lower triangle (see [`linalg::Triangle`]), half the
//! memory of a square array; row `i` starts at `i(i+1)/2` whatever the capacity, so
//! appending a row writes past the current end and nothing moves.
//!
//! **Memory**: a factor of capacity `k` needs [`Cholesky::scalars_len`]`(k) = k(k+1)/2 + 2k`
//! scalars (the triangle and two rotation buffers); see [`Cholesky::bytes`]. An incomplete
//! factor needs [`IncompleteCholesky::scalars_len`] scalars and
//! [`IncompleteCholesky::indices_len`] pivots.
//!
//! [`linalg::Triangle`]: crate::linalg::Triangle

mod factor;
mod incomplete;
mod update;

pub use factor::{ArrayCholesky, Cholesky};
pub use incomplete::{IncompleteCholesky, StopReason};
