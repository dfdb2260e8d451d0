//! kestrel-core's kernels, dense linear algebra and RNG on the device, in `f32`.
//!
//! Expected values come from outside the code under test: the formulas evaluated here in
//! `f64` with `libm`, hand-computed constants, or the host's output for the same call (the
//! RNG stream). Tolerances are multiples of `f32::EPSILON`.

#![no_std]
#![no_main]
// Index loops mirror the matrix formulas they check.
#![allow(clippy::needless_range_loop)]

mod common;

use common::{Dense, close, dot};
use kestrel_core::linalg::{self, Triangle};
use kestrel_core::{Error, Kernel, KernelKind, Real, Rng};
use kestrel_firmware_demo::{Failure, Tests, ensure, entry};

const EPS: f64 = f32::EPSILON as f64;

#[entry]
fn main() -> ! {
    let mut tests = Tests::default();
    tests.run("rng_stream_matches_host", rng_stream_matches_host);
    tests.run("rng_below_and_uniform_stay_in_range", rng_ranges);
    tests.run("rbf_kernel_column", rbf_kernel_column);
    tests.run("kernels_match_their_formulas", kernels_match_their_formulas);
    tests.run("gaussian_sigma_is_rbf_with_gamma_half_over_sigma_squared", gaussian_sigma);
    tests.run("invalid_kernel_parameters_are_rejected", invalid_kernel_parameters);
    tests.run("kernel_dimension_mismatch_is_an_error", kernel_dimension_mismatch);
    tests.run("rbf_gram_matrix_is_symmetric_positive_definite", rbf_gram_is_spd);
    tests.run("dot_axpy_gemv_match_f64", dot_axpy_gemv);
    tests.run("triangular_solves_packed_and_full", triangular_solves);
    tests.run("singular_triangle_is_rejected_and_b_untouched", singular_triangle);
    tests.run("square_root_equals_libm_bit_for_bit", square_root_equals_libm);
    tests.finish()
}

/// `n` points in `[-1, 1]^d` from a seeded RNG, row-major.
fn points<const N: usize>(seed: u64) -> [f32; N] {
    let mut rng = Rng::seed_from_u64(seed);
    core::array::from_fn(|_| rng.uniform_in(-1.0, 1.0))
}

/// The first outputs of `Rng::seed_from_u64(42)` equal those the same code printed on the
/// x86-64 host (and an independent xoshiro256++ written in Python).
fn rng_stream_matches_host() -> Result<(), Failure> {
    const HOST: [u64; 3] = [0xd076_4d4f_4476_689f, 0x519e_4174_576f_3791, 0xfbe0_7cfb_0c24_ed8c];
    let mut rng = Rng::seed_from_u64(42);
    let device = [rng.next_u64(), rng.next_u64(), rng.next_u64()];
    ensure(device == HOST, "same stream as on the host")
}

/// `below(7)` covers `0..7` only and `uniform` stays in `[0, 1)`.
fn rng_ranges() -> Result<(), Failure> {
    let mut rng = Rng::seed_from_u64(3);
    let mut seen = [0u32; 7];
    for _ in 0..700 {
        let k = rng.below(7);
        ensure(k < 7, "below(7) < 7")?;
        seen[k] += 1;
        let u: f32 = rng.uniform();
        ensure((0.0..1.0).contains(&u), "uniform in [0, 1)")?;
    }
    ensure(seen.iter().all(|&c| c > 60), "every value of below(7) drawn often")
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

/// Each kernel against its formula in `f64` on 6 pairs of random 3-D points.
fn kernels_match_their_formulas() -> Result<(), Failure> {
    let p: [f32; 36] = points(11);
    let rbf = Kernel::rbf(0.7f32)?;
    let laplacian = Kernel::laplacian(0.7f32)?;
    let poly = Kernel::polynomial(3, 0.5f32, 1.0)?;
    let linear = Kernel::<f32>::linear();
    for pair in p.chunks_exact(6) {
        let (a, b) = pair.split_at(3);
        let (a64, b64) = ([a[0], a[1], a[2]].map(f64::from), [b[0], b[1], b[2]].map(f64::from));
        let d2: f64 = a64.iter().zip(&b64).map(|(x, y)| (x - y) * (x - y)).sum();
        let d1: f64 = a64.iter().zip(&b64).map(|(x, y)| (x - y).abs()).sum();
        let ip = dot(&a64, &b64);
        let cases = [
            (rbf.eval(a, b)?, libm::exp(-0.7 * d2)),
            (laplacian.eval(a, b)?, libm::exp(-0.7 * d1)),
            (poly.eval(a, b)?, libm::pow(0.5 * ip + 1.0, 3.0)),
            (linear.eval(a, b)?, ip),
        ];
        for (got, want) in cases {
            ensure(close(f64::from(got), want, 16.0 * EPS), "kernel value within 16 ulp of its formula")?;
        }
        ensure(rbf.eval(a, b)? == rbf.eval(b, a)?, "k(a, b) = k(b, a)")?;
    }
    ensure(rbf.diagonal(&p[..3]) == 1.0 && linear.diagonal(&[3.0, 4.0]) == 25.0, "diagonals")
}

/// `gaussian_sigma(σ)` is `rbf(1/(2σ²))`.
fn gaussian_sigma() -> Result<(), Failure> {
    let k = Kernel::gaussian_sigma(2.0f32)?;
    ensure(k.kind() == KernelKind::Rbf { gamma: 0.125 }, "sigma 2 gives gamma 1/8")
}

/// Out-of-range parameters give `InvalidParam` naming the parameter.
fn invalid_kernel_parameters() -> Result<(), Failure> {
    let gamma = Err(Error::InvalidParam { name: "gamma" });
    ensure(Kernel::rbf(0.0f32) == gamma, "rbf(0)")?;
    ensure(Kernel::rbf(f32::NAN) == gamma, "rbf(NaN)")?;
    ensure(Kernel::laplacian(-1.0f32) == gamma, "laplacian(-1)")?;
    ensure(Kernel::polynomial(0, 1.0f32, 0.0) == Err(Error::InvalidParam { name: "degree" }), "degree 0")?;
    ensure(Kernel::polynomial(2, 1.0f32, -1.0) == Err(Error::InvalidParam { name: "coef0" }), "coef0 < 0")?;
    ensure(Kernel::gaussian_sigma(f32::INFINITY) == Err(Error::InvalidParam { name: "sigma" }), "sigma inf")
}

/// Mismatched lengths are an error, and the output column is untouched.
fn kernel_dimension_mismatch() -> Result<(), Failure> {
    let k = Kernel::rbf(1.0f32)?;
    ensure(matches!(k.eval(&[1.0, 2.0], &[1.0]), Err(Error::DimensionMismatch { .. })), "eval lengths")?;
    let mut out = [7.0f32; 2];
    let result = k.column(&[0.0, 0.0], &[1.0, 2.0, 3.0], &mut out);
    ensure(matches!(result, Err(Error::DimensionMismatch { .. })) && out == [7.0; 2], "column untouched")
}

/// The Gram matrix of 12 distinct points is symmetric with unit diagonal, and the reference
/// Cholesky (this file's `f64` code) factors it.
fn rbf_gram_is_spd() -> Result<(), Failure> {
    const N: usize = 12;
    let p: [f32; N * 3] = points(5);
    let k = Kernel::rbf(1.5f32)?;
    let mut gram = Dense::zeros(N);
    for i in 0..N {
        let mut column = [0.0f32; N];
        k.column(&p[i * 3..i * 3 + 3], &p, &mut column)?;
        for j in 0..N {
            gram.set(i, j, f64::from(column[j]));
        }
    }
    for i in 0..N {
        ensure(gram.get(i, i) == 1.0, "unit diagonal")?;
        for j in 0..i {
            ensure(gram.get(i, j) == gram.get(j, i), "symmetric bit for bit")?;
        }
    }
    ensure(gram.cholesky().is_some(), "positive definite")
}

/// `dot`, `axpy` and `gemv` against `f64` sums over the same `f32` inputs.
fn dot_axpy_gemv() -> Result<(), Failure> {
    let a: [f32; 20] = points(7);
    let x: [f32; 5] = points(8);
    let a64 = a.map(f64::from);
    let x64 = x.map(f64::from);
    let d = linalg::dot(&a[..5], &x)?;
    ensure(close(f64::from(d), dot(&a64[..5], &x64), 8.0 * EPS), "dot")?;
    let mut y = [1.0f32; 5];
    linalg::axpy(-2.0, &x, &mut y)?;
    ensure(y.iter().zip(&x64).all(|(&yi, &xi)| close(f64::from(yi), 1.0 - 2.0 * xi, EPS)), "axpy, one rounding")?;
    let mut out = [0.0f32; 4];
    linalg::gemv(&a, 4, 5, &x, &mut out)?;
    for (r, &o) in out.iter().enumerate() {
        ensure(close(f64::from(o), dot(&a64[r * 5..r * 5 + 5], &x64), 8.0 * EPS), "gemv row")?;
    }
    ensure(linalg::gemv(&a, 4, 4, &x, &mut out).is_err(), "gemv shape mismatch")
}

/// `L x = b` and `Lᵀ x = b` for a 4×4 triangle in both layouts: residuals in `f64`.
fn triangular_solves() -> Result<(), Failure> {
    #[rustfmt::skip]
    let full: [f32; 16] = [
        2.0, 9.0, 9.0, 9.0, // entries above the diagonal are ignored
        0.5, 1.5, 9.0, 9.0,
        -1.0, 0.25, 3.0, 9.0,
        0.75, -0.5, 1.0, 1.25,
    ];
    let packed = [2.0f32, 0.5, 1.5, -1.0, 0.25, 3.0, 0.75, -0.5, 1.0, 1.25];
    let l = |i: usize, j: usize| if j <= i { f64::from(full[i * 4 + j]) } else { 0.0 };
    let b = [1.0f32, -2.0, 0.5, 3.0];
    for (layout, storage) in [(Triangle::Full, &full[..]), (Triangle::Packed, &packed[..])] {
        let mut x = b;
        linalg::solve_lower(storage, 4, layout, &mut x)?;
        for i in 0..4 {
            let lx: f64 = (0..4).map(|j| l(i, j) * f64::from(x[j])).sum();
            ensure(close(lx, f64::from(b[i]), 16.0 * EPS), "L x = b")?;
        }
        let mut x = b;
        linalg::solve_lower_transposed(storage, 4, layout, &mut x)?;
        for i in 0..4 {
            let ltx: f64 = (0..4).map(|j| l(j, i) * f64::from(x[j])).sum();
            ensure(close(ltx, f64::from(b[i]), 16.0 * EPS), "Lt x = b")?;
        }
    }
    Ok(())
}

/// A zero on the diagonal is `Singular { pivot }` and leaves `b` as it was.
fn singular_triangle() -> Result<(), Failure> {
    let packed = [2.0f32, 0.5, 0.0];
    let mut b = [1.0f32, 2.0];
    let result = linalg::solve_lower(&packed, 2, Triangle::Packed, &mut b);
    ensure(result == Err(Error::Singular { pivot: 1 }) && b == [1.0, 2.0], "Singular at pivot 1, b untouched")?;
    ensure(Dense::identity(3).cholesky().is_some(), "reference factors the identity")
}

/// `f32`'s square root (the FPU's instruction on the M4F, `libm::sqrtf` on the soft-float
/// cores) gives `libm::sqrtf`'s bits: for every 65,537th bit pattern (both signs,
/// subnormals, ∞ and NaN among them), the special values, and the squares of random
/// values with their neighbours one unit in the last place away (results at or next to
/// an exact root).
fn square_root_equals_libm() -> Result<(), Failure> {
    let same = |x: f32| {
        let (ours, libm) = (Real::sqrt(x), libm::sqrtf(x));
        ours.to_bits() == libm.to_bits() || (ours.is_nan() && libm.is_nan())
    };
    let specials =
        [0.0f32, -0.0, 1.0, -1.0, f32::MIN_POSITIVE, 1e-45, f32::MAX, f32::INFINITY, f32::NEG_INFINITY, f32::NAN];
    ensure(specials.into_iter().all(same), "special values")?;
    ensure((0..=u32::MAX).step_by(65_537).map(f32::from_bits).all(same), "a sweep of bit patterns")?;
    let mut rng = Rng::seed_from_u64(11);
    let near_roots = (0..2_000).all(|_| {
        let r: f32 = rng.uniform_in(0.0, 1.0e3);
        let square = (r * r).to_bits();
        [square - 1, square, square + 1].into_iter().map(f32::from_bits).all(same)
    });
    ensure(near_roots, "squares and their neighbours")
}
