//! kestrel-core on the device: checks of the Cholesky factor, the RNG and the kernels in
//! `f32`, run in QEMU's Cortex-M4F by `cargo test` (the runner is in `.cargo/config.toml`).
//!
//! Expected values come from outside the code under test: hand-computed constants, the
//! matrix itself (residuals), or the host's output for the same call (the RNG stream).
//! Tolerances are multiples of `f32::EPSILON`.

#![no_std]
#![no_main]

use cortex_m_rt::entry;
use kestrel_core::cholesky::{ArrayCholesky, Cholesky, storage_len};
use kestrel_core::{Error, Kernel, Rng};
use kestrel_firmware_demo::{Failure, Tests, ensure};

/// Order of the test matrix.
const N: usize = 4;

/// A symmetric, strictly diagonally dominant (hence positive-definite) matrix, row-major.
#[rustfmt::skip]
const A: [f32; N * N] = [
    4.0, 1.0, 0.5, 0.0,
    1.0, 5.0, 1.0, 0.5,
    0.5, 1.0, 6.0, 1.0,
    0.0, 0.5, 1.0, 3.0,
];

/// Relative tolerance of the factor checks.
const TOL: f32 = 64.0 * f32::EPSILON;

#[entry]
fn main() -> ! {
    let mut tests = Tests::default();
    tests.run("cholesky_solve_residual", cholesky_solve_residual);
    tests.run("rank_one_update_then_downdate_restores_factor", update_then_downdate);
    tests.run("downdate_losing_definiteness_is_rejected", downdate_rejected);
    tests.run("rng_stream_matches_host", rng_stream_matches_host);
    tests.run("rbf_kernel_column", rbf_kernel_column);
    tests.finish()
}

/// The factor of [`A`] in an owned array sized by `storage_len`.
fn factor() -> Result<ArrayCholesky<f32, { storage_len(N) }>, Error> {
    Cholesky::from_matrix_in([0.0; storage_len(N)], N, &A, N)
}

/// `‖A x − b‖∞ ≤ TOL·‖b‖∞` for `x` from the factor's solve, `A·x` recomputed here.
fn cholesky_solve_residual() -> Result<(), Failure> {
    let chol = factor()?;
    let b = [1.0f32, -2.0, 3.0, 4.0];
    let mut x = b;
    chol.solve_in_place(&mut x)?;
    for (row, &bi) in A.chunks_exact(N).zip(&b) {
        let ax: f32 = row.iter().zip(&x).map(|(a, x)| a * x).sum();
        ensure((ax - bi).abs() <= TOL * 4.0, "residual of A x = b within tolerance")?;
    }
    Ok(())
}

/// `A + vvᵀ` then `− vvᵀ` gives back the factor of `A`, entry by entry.
fn update_then_downdate() -> Result<(), Failure> {
    let mut chol = factor()?;
    let mut before = [0.0f32; N * (N + 1) / 2];
    before.copy_from_slice(chol.packed());
    let v = [0.5f32, -1.0, 0.25, 1.0];
    chol.rank_one_update(&v, 1.0)?;
    ensure(chol.packed() != before, "the update changes the factor")?;
    chol.rank_one_update(&v, -1.0)?;
    let restored = chol.packed().iter().zip(&before).all(|(l, l0)| (l - l0).abs() <= TOL * l0.abs().max(1.0));
    ensure(restored, "update then downdate restores the factor within tolerance")
}

/// `A − vvᵀ` with `v = 2e₄` is not positive definite (`A₄₄ = 3 < 4`, leading 3×3 block
/// untouched): the downdate fails at pivot 3 and leaves the factor bit for bit as it was.
fn downdate_rejected() -> Result<(), Failure> {
    let mut chol = factor()?;
    let mut before = [0.0f32; N * (N + 1) / 2];
    before.copy_from_slice(chol.packed());
    let result = chol.rank_one_update(&[0.0, 0.0, 0.0, 2.0], -1.0);
    ensure(result == Err(Error::NotPositiveDefinite { pivot: 3 }), "NotPositiveDefinite at pivot 3")?;
    ensure(chol.dim() == N && chol.packed() == before, "the rejected downdate leaves the factor unchanged")
}

/// The first outputs of `Rng::seed_from_u64(42)` equal those the same code printed on the
/// x86-64 host (and an independent xoshiro256++ written in Python).
fn rng_stream_matches_host() -> Result<(), Failure> {
    const HOST: [u64; 3] = [0xd076_4d4f_4476_689f, 0x519e_4174_576f_3791, 0xfbe0_7cfb_0c24_ed8c];
    let mut rng = Rng::seed_from_u64(42);
    let device = [rng.next_u64(), rng.next_u64(), rng.next_u64()];
    ensure(device == HOST, "same stream as on the host")
}

/// `k(0, pᵢ) = exp(−γ‖pᵢ‖²)` with `γ = 1/2` for points at squared distance 0, 2, 4 and 5.
fn rbf_kernel_column() -> Result<(), Failure> {
    let kernel = Kernel::rbf(0.5f32)?;
    let points = [0.0f32, 0.0, 1.0, 1.0, 2.0, 0.0, -1.0, 2.0];
    let mut column = [0.0f32; 4];
    kernel.column(&[0.0, 0.0], &points, &mut column)?;
    // exp(0), exp(−1), exp(−2), exp(−2.5)
    let expected = [1.0f32, 0.367_879_44, 0.135_335_28, 0.082_085];
    let close = column.iter().zip(&expected).all(|(k, e)| (k - e).abs() <= 4.0 * f32::EPSILON * e);
    ensure(close, "RBF column equals exp(-gamma * d^2)")
}
